/* A comparison record that says it passed, judged again from its own fields: the copy in a
 * summary is what merge merges and what plot and report draw, and a hand-edited or copied-back
 * one said passed next to numbers that fail it (or a tolerance that is no number, read as 0). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "core/core-impl.h"
#include "ortqual/shard.h"

double oq_compare_tolerance_back(const json_t *tol, const char *key)
{
    const json_t *v = json_object_get(tol, key);
    return !tol ? 0.0 : json_is_number(v) ? json_number_value(v) : NAN;
}

int oq_compare_record_holds(const oq_compare_result *r, char *why, size_t n)
{
    int exact = oq_compare_is_exact(r->out_dtype, r->ref_dtype);
    char a[32], b[32];
    if (r->exact != exact)
        snprintf(why, n, "says it was compared %s, but its dtypes %s and %s are compared %s",
                 r->exact ? "exactly" : "by tolerance", oq_dtype_name(r->out_dtype), oq_dtype_name(r->ref_dtype),
                 exact ? "exactly" : "by tolerance");
    else if (!(r->tol.rtol >= 0) || !(r->tol.atol >= 0))
        snprintf(why, n, "has tolerance.rtol %s, tolerance.atol %s, where each is a number >= 0 (nan: not a "
                 "number in the file)",
                 oq_real_str(r->tol.rtol, 6, a, sizeof a), oq_real_str(r->tol.atol, 6, b, sizeof b));
    else
        return 1;
    return 0;
}

oq_status oq_compare_contradiction(oq_err *err, const char *path, const char *config, const char *output,
                                   const char *why, const char *verb)
{
    if (!output)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s passed, but lists no compared output: refusing to %s a "
                          "summary that contradicts itself", path, config, verb);
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s passed, but its output '%s' %s: refusing to %s a summary that "
                      "contradicts itself", path, config, output, why, verb);
}

/* The outputs of configuration `config`, which passed: each a record that passed, holds
 * (oq_compare_record_holds) and passes by its numbers (oq_compare_judge_numbers). `where`
 * ("" or "in batch 3") says which record of the configuration they are. */
static oq_status outputs_hold(const json_t *outs, const char *path, const char *config, const char *where,
                              oq_compare_result *r, oq_err *err)
{
    if (!json_array_size(outs)) return oq_compare_contradiction(err, path, config, NULL, NULL, "draw");
    for (size_t j = 0; j < json_array_size(outs); j++) {
        if (oq_compare_result_from_json(json_array_get(outs, j), r, err))
            return oq_err_prefix(err, "%s: %s, outputs[%zu]%s%s: ", path, config, j, *where ? " " : "", where);
        char why[600] = "failed", numbers[160], said[700];
        if (!r->passed || !oq_compare_record_holds(r, why, sizeof why)) {
            /* why says it */
        } else if (!oq_compare_judge_numbers(r, numbers, sizeof numbers)) {
            snprintf(why, sizeof why, "has %s", numbers);
        } else {
            continue;
        }
        snprintf(said, sizeof said, "%s%s%s", where, *where ? " " : "", why);
        return oq_compare_contradiction(err, path, config, r->name, said, "draw");
    }
    return OQ_OK;
}

oq_status oq_compare_batch_holds(const json_t *record, const char *path, const char *config, oq_err *err)
{
    const json_t *outs = json_object_get(record, "outputs");
    if (!json_array_size(outs)) return OQ_OK; /* nothing compared in it (the config may have failed) */
    oq_compare_result *r = malloc(sizeof *r);
    if (!r) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    char where[64];
    snprintf(where, sizeof where, "in batch %lld", (long long)json_integer_value(json_object_get(record, "index")));
    oq_status st = outputs_hold(outs, path, config, where, r, err);
    free(r);
    return st;
}

/* A configuration under test that says it passed, from a summary written before outputs were
 * aggregated per configuration: its batch records, where the document holds them whole (plot
 * and JUnit read the whole file; report's digest judges the records it streams, oq_vd). */
static oq_status records_hold(const json_t *c, const char *path, const char *config, oq_err *err)
{
    size_t i;
    json_t *b;
    oq_status st = OQ_OK;
    json_array_foreach(json_object_get(c, "batches"), i, b) if (!st) st = oq_compare_batch_holds(b, path, config, err);
    return st;
}

/* OQ_ERR_FORMAT "PATH: WHAT: refusing to draw a summary that contradicts itself". */
__attribute__((format(printf, 3, 4))) static oq_status refused(oq_err *err, const char *path, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s: refusing to draw a summary that contradicts itself", path, what);
}

/* Each entry of shards.reported and shards.problems names one of shards 0..count-1, none twice;
 * how many they name into *named. */
static oq_status shards_named(const json_t *sh, json_int_t count, const char *path, size_t *named, oq_err *err)
{
    const char *lists[] = {"reported", "problems"};
    unsigned char *seen = calloc((size_t)count, 1);
    if (!seen) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    size_t i;
    json_t *e;
    oq_status st = OQ_OK;
    *named = 0;
    for (int l = 0; l < 2; l++) json_array_foreach(json_object_get(sh, lists[l]), i, e) {
            const json_t *ix = json_object_get(e, "index");
            json_int_t k = json_integer_value(ix);
            if (!st && (!json_is_integer(ix) || k < 0 || k >= count || seen[k]))
                st = refused(err, path, "shards.%s[%zu] names shard %s%lld, where each of shards 0..%lld is named once",
                             lists[l], i, json_is_integer(ix) ? "" : "(no index) ", (long long)k, (long long)count - 1);
            else if (!st) seen[k] = 1, ++*named;
        }
    free(seen);
    return st;
}

/* Does shard i run configuration k (of n) of a plan split into `count` shards `by`? By batch
 * every shard runs every configuration; by configuration every shard runs the reference (0) and
 * its range of the others (oq_shard_range, as the plan splits them). */
static int shard_runs(const char *by, json_int_t count, json_int_t i, size_t k, size_t n)
{
    size_t lo, hi;
    if (k == 0 || strcmp(by, "config")) return 1;
    oq_shard_range((int32_t)count, (int32_t)i, n - 1, &lo, &hi);
    return k - 1 >= lo && k - 1 < hi;
}

/* The index of shard entry e when it is one of 0..count-1 (else -1). */
static json_int_t shard_index(const json_t *e, json_int_t count)
{
    const json_t *ix = json_object_get(e, "index");
    json_int_t i = json_integer_value(ix);
    return json_is_integer(ix) && i >= 0 && i < count ? i : -1;
}

/* What `reported` (count bytes, 1: in shards.reported) says of configuration k's "shards": one
 * entry for each shard that runs k and reported, none of another; and a configuration that says
 * it passed (or ran, the reference) with a shard that runs it unreported is a pass the merge
 * never gives (it fails the configuration as incomplete). A hand-edited summary with a shard's
 * entries taken out read as whole. */
static oq_status config_shards_hold(const json_t *c, size_t k, size_t n, const char *by, json_int_t count,
                                    const unsigned char *reported, unsigned char *seen, const char *path, oq_err *err)
{
    const char *name = json_string_value(json_object_get(c, "name")), *status = json_string_value(json_object_get(c, "status"));
    int ran = status && (!strcmp(status, "passed") || !strcmp(status, "reference"));
    size_t j;
    json_t *e;
    name = name ? name : "a configuration";
    memset(seen, 0, (size_t)count);
    json_array_foreach(json_object_get(c, "shards"), j, e) {
        json_int_t i = shard_index(e, count);
        if (i < 0 || seen[i] || !reported[i] || !shard_runs(by, count, i, k, n))
            return refused(err, path, "%s, shards[%zu] names shard %lld, which %s", name, j,
                           (long long)json_integer_value(json_object_get(e, "index")),
                           i < 0 ? "is not one of the merge's (shards.count)" : seen[i] ? "it names twice"
                           : !reported[i] ? "did not report (shards.problems)" : "does not run it");
        seen[i] = 1;
    }
    /* a configuration the merge did not run (its reference did not) keeps no shard's result; by
     * configuration one shard's reference is whole (each ran every batch) */
    if (status && !strcmp(status, "not-run") && !json_array_size(json_object_get(c, "shards"))) return OQ_OK;
    ran &= k > 0 || strcmp(by, "config");
    for (json_int_t i = 0; i < count; i++) {
        if (seen[i] || !shard_runs(by, count, i, k, n)) continue;
        if (reported[i])
            return refused(err, path, "%s lists no result of shard %lld (shards[]), which ran it and reported", name,
                           (long long)i);
        if (ran)
            return refused(err, path, "%s is '%s', but shard %lld, which runs it, did not report (shards.problems)",
                           name, status, (long long)i);
    }
    return OQ_OK;
}

/* Each configuration's "shards" of a merged summary against the merge's shards (config_shards_hold). */
static oq_status configs_shards_hold(const json_t *summary, const json_t *sh, json_int_t count, const char *path,
                                     oq_err *err)
{
    const json_t *configs = json_object_get(summary, "configs");
    const char *by = json_string_value(json_object_get(sh, "by"));
    unsigned char *reported = calloc((size_t)count, 2);
    if (!reported) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(sh, "reported"), i, e) if (shard_index(e, count) >= 0) reported[shard_index(e, count)] = 1;
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < json_array_size(configs); k++)
        st = config_shards_hold(json_array_get(configs, k), k, json_array_size(configs), by ? by : "batch", count,
                                reported, reported + count, path, err);
    free(reported);
    return st;
}

/* A merged summary's shards (`ortqual merge`'s "shards": count, reported, problems) as the
 * merge records them: each shard 0..count-1 reported or a problem, once; a pass only when every
 * shard reported (a shard that did not fails the merge); each configuration's "shards" the
 * shards that run it and reported (configs_shards_hold). A shard's own summary ("shard"): its
 * index below its count. */
static oq_status shards_hold(const json_t *summary, const char *path, oq_err *err)
{
    const json_t *one = json_object_get(summary, "shard"), *sh = json_object_get(summary, "shards");
    json_int_t i1 = json_integer_value(json_object_get(one, "index")), n1 = json_integer_value(json_object_get(one, "count"));
    if (one && !(n1 >= 1 && i1 >= 0 && i1 < n1))
        return refused(err, path, "shard.index %lld of shard.count %lld, where 0 <= index < count", (long long)i1,
                       (long long)n1);
    if (!sh) return OQ_OK;
    json_int_t count = json_integer_value(json_object_get(sh, "count"));
    if (count < 1 || count > 1000000)
        return refused(err, path, "shards.count %lld, where a merge has 1 to 1000000 shards", (long long)count);
    size_t n = 0, problems = json_array_size(json_object_get(sh, "problems"));
    const char *verdict = json_string_value(json_object_get(summary, "verdict"));
    oq_status st = shards_named(sh, count, path, &n, err);
    if (!st && n != (size_t)count)
        st = refused(err, path, "shards.count %lld, but %zu shard%s recorded (reported or problems)", (long long)count, n,
                     n == 1 ? " is" : "s are");
    if (!st && problems && verdict && !strcmp(verdict, "passed"))
        st = refused(err, path, "verdict 'passed', but %zu of %lld shards did not report (shards.problems)", problems,
                     (long long)count);
    return st ? st : configs_shards_hold(summary, sh, count, path, err);
}

oq_status oq_compare_summary_holds(const json_t *summary, const char *path, oq_err *err)
{
    const json_t *configs = json_object_get(summary, "configs");
    oq_compare_result *r = malloc(sizeof *r);
    if (!r) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    oq_status st = shards_hold(summary, path, err);
    for (size_t k = 0; !st && k < json_array_size(configs); k++) {
        const json_t *c = json_array_get(configs, k), *outs = json_object_get(c, "outputs");
        const char *status = json_string_value(json_object_get(c, "status"));
        const char *config = json_string_value(json_object_get(c, "config"));
        if (json_is_true(json_object_get(c, "reference")) || !status || strcmp(status, "passed")) continue;
        /* a summary written before outputs were aggregated has them in its batch records only */
        st = outs ? outputs_hold(outs, path, config ? config : "a configuration", "", r, err)
                  : records_hold(c, path, config ? config : "a configuration", err);
    }
    free(r);
    return st;
}
