/* The shards of one plan merged into one summary (ortqual/shard.h). The shards' summaries are
 * read back into typed summaries and merged field by field: per-batch records are moved over
 * as the shards measured them, one at a time through files (never all in memory), verdicts combine as one unsharded run would have set them, and
 * the result is written by the same writer as any summary.json, so a merged summary cannot
 * drift from an unsharded one. A shard that did not report makes the verdict fail. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "compare/compare-impl.h"
#include "validate/validate-impl.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

typedef struct merge_ctx {
    const char *outdir;
    oq_shard_plan plan;          /* shards/plan.json */
    oq_validate_summary **shard; /* N summaries; NULL for a shard that did not report */
    char ***records;             /* per shard, per configuration of its summary: its batch
                                    records spilled to a file (NULL: none) */
    size_t *n_records;
    char **merged;               /* per configuration of the merge: its records' file */
    oq_batch_brief *brief;       /* every batch's index, valid size and source (validate.csv's
                                    rows; a batch record's counts judged) ... */
    int64_t *positions;          /* ... and its events x padded length */
    size_t n_brief;              /* (as they are read) */
    char work[4096];             /* where those files are (removed after) */
    oq_slurm_ids jobs;           /* what `ortqual slurm` submitted (array "" when nothing) */
    oq_validate_summary *s;      /* the merged summary */
    oq_tolerances **tols;        /* per configuration of the plan: what its worker judged its outputs
                                    by (NULL: the reference, which judges none) ... */
    oq_tolerance *preset;        /* ... and the preset under them (oq_config_tolerances) */
    int *padding;                /* per configuration: its padding rule (OQ_PADDING_*) */
    oq_compare_result *scratch;  /* an output that said it passed, judged again */
    oq_run_notes notes;          /* the shards' notes, each once */
    json_t *outputs;             /* plan.json's: per configuration, its model's outputs (null:
                                    none); NULL: a plan prepared before they were recorded */
    const char *verb, *what;     /* "merge" a "shard"; a merged summary held to its plan: "draw"
                                    a "summary" (oq_validate_merged_check) */
} merge_ctx;

/* One shard's result for a configuration. */
typedef struct entry {
    int32_t shard;
    oq_config_result *r;
    const char *records; /* its batch records (NULL: none) */
    oq_verdict status;   /* r's status as the merge counts it (dispatch_cleared) */
} entry;

static oq_shard_part part_of(const merge_ctx *m, int32_t i)
{
    return oq_shard_part_of(m->plan.count, m->plan.by, m->plan.n_batches, m->plan.n_configs, i);
}

static oq_status nomem(oq_err *err) { return oq_err_set(err, OQ_ERR_NOMEM, "out of memory merging shards"); }

/* Ran with nothing failed: a configuration under test that passed, or the reference that ran. */
static int ran_clean(oq_verdict v) { return v == OQ_VERDICT_PASSED || v == OQ_VERDICT_REFERENCE; }

/* ---- the shards that reported, and why the others did not ------------------------------ */

/* " (SLURM task 12_3, log D/slurm/shard-12_3.out)" when `ortqual slurm` submitted the shards. */
static void slurm_hint(const merge_ctx *m, int32_t i, char *buf, size_t n)
{
    char log[4200];
    buf[0] = 0;
    if (!*m->jobs.array) return;
    oq_slurm_shard_log(m->outdir, m->jobs.array, i, log, sizeof log);
    snprintf(buf, n, " (SLURM task %s_%d, log %s)", m->jobs.array, (int)i, log);
}

static oq_status add_problem(merge_ctx *m, int32_t i, oq_shard_state state, oq_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static oq_status add_problem(merge_ctx *m, int32_t i, oq_shard_state state, oq_err *err, const char *fmt, ...)
{
    oq_shard_problem *p = OQ_PUSH(m->s->merged.problems, m->s->merged.n_problems);
    if (!p) return nomem(err); /* a problem never goes unreported */
    p->index = i;
    p->state = state;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    return OQ_OK;
}

oq_status oq_shard_dir_problem(const char *dir, oq_shard_problem *p, int32_t *count, oq_err *err)
{
    OQ_NEED(err, dir);
    OQ_NEED(err, p);
    *p = (oq_shard_problem){.index = -1, .state = OQ_SHARD_FAILED};
    if (count) *count = 0;
    char path[4200], msg[OQ_ERR_MSG_MAX];
    snprintf(path, sizeof path, "%s/error.json", dir);
    if (access(path, F_OK) == 0 && oq_error_record_read(path, msg, sizeof msg, NULL) == OQ_OK) {
        snprintf(p->detail, sizeof p->detail, "stopped before running: %.480s", msg);
        return OQ_OK;
    }
    snprintf(path, sizeof path, "%s/started.json", dir);
    oq_shard_info started;
    if (access(path, F_OK) != 0 || oq_shard_info_read(path, &started, NULL) != OQ_OK)
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s holds neither error.json nor started.json", dir);
    p->index = started.index;
    p->state = OQ_SHARD_UNFINISHED;
    if (count) *count = started.count;
    snprintf(p->detail, sizeof p->detail, "started on %.200s at %s (pid %lld) and wrote no summary: killed, timed "
             "out or crashed", started.host, started.start, (long long)started.pid);
    oq_shard_info_clear(&started);
    return OQ_OK;
}

/* Why shard i has no summary: never started, stopped with an error record, or started and
 * ended without a word (killed, timed out, crashed): its folder's record as `report` reads it
 * (oq_shard_dir_problem), with where SLURM logged it. */
static oq_status diagnose(merge_ctx *m, int32_t i, const char *dir, oq_err *err)
{
    char hint[4400];
    slurm_hint(m, i, hint, sizeof hint);
    oq_shard_problem p;
    if (oq_shard_dir_problem(dir, &p, NULL, NULL) == OQ_OK)
        return add_problem(m, i, p.state, err, "%s%s", p.detail, hint);
    if (access(dir, F_OK) == 0)
        return add_problem(m, i, OQ_SHARD_UNFINISHED, err, "%s exists but holds no record: it stopped while starting%s",
                           dir, hint);
    return add_problem(m, i, OQ_SHARD_MISSING, err, "never started: no %s%s", dir, hint);
}

static const char *padding_rule_name(int rule)
{
    return rule == OQ_PADDING_REPORT ? "report" : rule == OQ_PADDING_AS_REFERENCE ? "as-reference" : "zero";
}

/* Was r's padding judged as the plan's rule judges it? A batch's is checked under `zero`, under
 * `as-reference` where the reference's padding is zero, never under `report`; an output over
 * every batch (`whole`) is checked where any batch was: under `zero` always, under `report`
 * never. A record whose padding went unjudged passes non-zero padding unseen. */
static int padding_holds(int rule, const oq_compare_result *r, int whole, char *why, size_t n)
{
    int want = rule == OQ_PADDING_ZERO || (rule == OQ_PADDING_AS_REFERENCE && r->ref_pad_nonzero == 0);
    if (r->padding_rule != rule)
        snprintf(why, n, "was compared under padding rule '%s', not the plan's '%s'", padding_rule_name(r->padding_rule),
                 padding_rule_name(rule));
    else if (r->padding_checked != want && (!whole || rule != OQ_PADDING_AS_REFERENCE))
        snprintf(why, n, "has padding.checked %s, where the plan's padding rule '%s' gives %s",
                 r->padding_checked ? "true" : "false", padding_rule_name(rule), want ? "true" : "false");
    else
        return 1;
    return 0;
}

/* An output that said it passed (in m->scratch), judged again as its worker judged it: at the
 * plan's tolerance and padding rule, by its numbers (oq_compare_judge_numbers) and, over all of
 * the shard's batches (`whole`), as a tolerance that cannot fail. 1 when it passes; else 0 and
 * why not. */
static int judged_again(const merge_ctx *m, size_t k, int whole, char *why, size_t n)
{
    oq_compare_result *r = m->scratch;
    /* exact by its dtypes, at tolerance 0: a float output flagged exact skipped its tolerance */
    int exact = oq_compare_is_exact(r->out_dtype, r->ref_dtype);
    oq_tolerance want = exact ? (oq_tolerance){0, 0} : oq_tolerances_get(m->tols[k], r->name);
    char a[32], b[32], c[32], d[32], numbers[160], vacuous[300];
    if (!oq_compare_record_holds(r, why, n)) return 0;
    else if (r->tol.rtol != want.rtol || r->tol.atol != want.atol)
        snprintf(why, n, "was judged at rtol=%s,atol=%s, not at the plan's rtol=%s,atol=%s",
                 oq_real_str(r->tol.rtol, 6, a, sizeof a), oq_real_str(r->tol.atol, 6, b, sizeof b),
                 oq_real_str(want.rtol, 6, c, sizeof c), oq_real_str(want.atol, 6, d, sizeof d));
    else if (!padding_holds(m->padding[k], r, whole, why, n)) return 0;
    else if (!oq_compare_judge_numbers(r, numbers, sizeof numbers)) snprintf(why, n, "has %s", numbers);
    else if (whole && oq_compare_judge_vacuous(r, m->preset[k]))
        snprintf(why, n, "passed where %s", oq_compare_vacuous_str(r, vacuous, sizeof vacuous));
    else
        return 1;
    return 0;
}

/* A configuration under test that passed on a shard compared outputs there, and each passed,
 * by its numbers too: one with no outputs would leave its part out of the merged counts unseen,
 * and one with a failed output (or a count, a maximum or a tolerance that fails it under a
 * `passed` flag: a hand-edited summary) would pass the merged run with that failure in it. */
static oq_status check_passed_outputs(const merge_ctx *m, size_t k, const oq_config_result *r, const char *path,
                                      oq_err *err)
{
    if (r->is_reference || r->status != OQ_VERDICT_PASSED) return OQ_OK;
    if (!r->n_outputs) return oq_compare_contradiction(err, path, r->config.name, NULL, NULL, m->verb);
    for (size_t j = 0; j < r->n_outputs; j++) {
        char why[600] = "failed";
        *m->scratch = r->outputs[j].all;
        if (!m->scratch->passed || !judged_again(m, k, 1, why, sizeof why))
            return oq_compare_contradiction(err, path, r->config.name, r->outputs[j].all.name, why, m->verb);
    }
    return OQ_OK;
}

/* Does r stand on its outputs: passed, or every output it lists passed (a failure the others'
 * routing lines clear, dispatch_cleared)? */
static int claims_outputs(const oq_config_result *r)
{
    if (r->is_reference || (r->status != OQ_VERDICT_PASSED && !r->n_outputs)) return 0;
    for (size_t j = 0; r->status != OQ_VERDICT_PASSED && j < r->n_outputs; j++)
        if (!r->outputs[j].all.passed) return 0;
    return 1;
}

static int lists_output(const oq_config_result *r, const char *name)
{
    for (size_t j = 0; j < r->n_outputs; j++)
        if (!strcmp(r->outputs[j].all.name, name)) return 1;
    return 0;
}

/* Is `name` among plan.json's names of a configuration's outputs? */
static int named_in(const json_t *names, const char *name)
{
    for (size_t i = 0; i < json_array_size(names); i++)
        if (!strcmp(json_string_value(json_array_get(names, i)), name)) return 1;
    return 0;
}

/* A configuration that stands on its outputs compared each output of the plan's model, and no
 * other: the set is the plan's (plan.json), never the shards' (an output every shard's summary
 * left out was no output of the merge, and its failures passed unseen). A plan that records
 * none (an older ortqual) is taken for the built-in models only: a user model's outputs are
 * known from nowhere else. */
static oq_status check_plan_outputs(const merge_ctx *m, size_t k, const oq_config_result *r, const char *path,
                                    oq_err *err)
{
    const json_t *want = json_array_get(m->outputs, k);
    if (!claims_outputs(r)) return OQ_OK;
    if (!m->outputs && r->config.repr == OQ_REPR_MODEL)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s runs a user model, but %s/shards/plan.json records no list of "
                          "its outputs (prepared by an ortqual before 2026-12-07): the merge cannot tell an output "
                          "every shard left out; prepare the shards again (--prepare-shards N --force)", path,
                          r->config.name, m->outdir);
    for (size_t i = 0; i < json_array_size(want); i++) {
        const char *name = json_string_value(json_array_get(want, i));
        if (!lists_output(r, name))
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s lists no output '%s', an output of the plan's model "
                              "(plan.json): refusing to %s a %s that left an output out", path, r->config.name,
                              name, m->verb, m->what);
    }
    for (size_t j = 0; json_is_array(want) && j < r->n_outputs; j++)
        if (!named_in(want, r->outputs[j].all.name))
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s lists output '%s', which the plan's model has not "
                              "(plan.json): refusing to %s a summary of another model", path, r->config.name,
                              r->outputs[j].all.name, m->verb);
    return OQ_OK;
}

/* A summary whose fields say two things (a hand, a broken writer) is refused: an `interrupted`
 * record beside another verdict (was the run whole?). */
static oq_status check_interruption(const oq_validate_summary *s, const char *path, oq_err *err)
{
    if (!s->interrupted.signal || s->verdict == OQ_RUN_INTERRUPTED) return OQ_OK;
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: field 'interrupted' records signal %d, but its verdict is '%s': "
                      "refusing to merge a summary that contradicts itself", path, s->interrupted.signal,
                      oq_run_verdict_name(s->verdict));
}

/* Every output carries its exact sums: a summary written before they included sums.ref_sq
 * (2026-12-05) cannot give the run's rel_l2 over all batches (its rel_l2 was its largest
 * batch's), and mixed with newer shards its numbers would mean another thing. */
static oq_status check_sums(const oq_validate_summary *s, const char *path, oq_err *err)
{
    for (size_t k = 0; k < s->n_configs; k++)
        for (size_t j = 0; j < s->configs[k].n_outputs; j++)
            if (!s->configs[k].outputs[j].sums_known)
                return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s, output '%s': no exact sums (sums.abs, sq, ref_sq): "
                                  "written by an ortqual before 2026-12-05, whose rel_l2 was the largest batch's; "
                                  "run the shard again with this one", path, s->configs[k].config.name,
                                  s->configs[k].outputs[j].all.name);
    return OQ_OK;
}

/* r, at position pos of a summary, as configuration k of the plan: its name the plan's there
 * (results are merged by position: one in another place, configurations reordered, went into
 * another configuration's verdict, and the merge passed), and where it passed, its outputs the
 * plan's, each judged again by the plan's rules (check_passed_outputs, check_plan_outputs). */
static oq_status config_holds(const merge_ctx *m, size_t k, const oq_config_result *r, long pos, const char *path,
                              oq_err *err)
{
    oq_config c;
    const char *want_name = oq_config_parse(m->plan.configs[k], &c, NULL) ? m->plan.configs[k] : c.name;
    if (strcmp(r->config.name, want_name) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: configuration %ld is %s, but the plan's is %s there", path, pos + 1,
                          r->config.name, want_name);
    oq_status st = check_passed_outputs(m, k, r, path, err);
    return !st && k ? check_plan_outputs(m, k, r, path, err) : st;
}

/* A summary from another plan or another split is refused: merging it would mix results. */
static oq_status check_shard(const merge_ctx *m, int32_t i, const oq_validate_summary *s, const char *path,
                             oq_err *err)
{
    if (strcmp(m->plan.hash, s->plan_hash) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "shard %d (%s) ran plan %.16s, not the prepared plan %.16s: refusing "
                                              "to merge shards of different plans", (int)i, path, s->plan_hash,
                          m->plan.hash);
    if (s->shard.index != i || s->shard.count != m->plan.count || s->shard.by != m->plan.by)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: shard %d of %d by %s, expected shard %d of %d by %s", path,
                          (int)s->shard.index, (int)s->shard.count, oq_shard_by_name(s->shard.by), (int)i,
                          (int)m->plan.count, oq_shard_by_name(m->plan.by));
    oq_shard_part part = part_of(m, i);
    size_t want = 1 + part.config_hi - part.config_lo;
    if (s->n_configs != want)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %zu configurations, but shard %d of the plan runs %zu", path,
                          s->n_configs, (int)i, want);
    /* results are merged by position: one in another place (configurations reordered) went into
     * another configuration's verdict, and the merge passed */
    for (size_t k = 0; k < m->plan.n_configs; k++) {
        long pos = oq_shard_part_config(&part, k);
        oq_status st = pos < 0 ? OQ_OK : config_holds(m, k, &s->configs[pos], pos, path, err);
        if (st) return st;
    }
    oq_status st = check_interruption(s, path, err);
    return st ? st : check_sums(s, path, err);
}

/* A shard stopped by a signal wrote a summary that says where; its results are not merged
 * (the configuration it was running has none). */
static oq_status interrupted_shard(merge_ctx *m, int32_t i, oq_err *err)
{
    char hint[4400];
    oq_validate_summary *s = m->shard[i];
    slurm_hint(m, i, hint, sizeof hint);
    oq_status st = add_problem(m, i, OQ_SHARD_INTERRUPTED, err, "started on %s at %s (pid %lld) and was %s; its summary was written at %s%s",
                               s->shard.host, s->shard.start, (long long)s->shard.pid,
                               s->verdict_reason ? s->verdict_reason : "interrupted", s->end, hint);
    oq_validate_summary_free(s);
    m->shard[i] = NULL;
    return st;
}

/* shard i's result for configuration k of the plan (NULL: it did not run or report it). */
static const oq_config_result *shard_config(const merge_ctx *m, int32_t i, size_t k)
{
    oq_shard_part part = part_of(m, i);
    long pos = oq_shard_part_config(&part, k);
    return m->shard[i] && pos >= 0 && (size_t)pos < m->shard[i]->n_configs ? &m->shard[i]->configs[pos] : NULL;
}

/* A shard that recorded no hash of its ONNX Runtime beside one that did: the two cannot be held
 * to one build (every shard of this ortqual records it: a hand, or a library gone before it
 * was read). */
static oq_status hash_missing(const merge_ctx *m, int32_t i, size_t k, oq_err *err)
{
    return oq_err_set(err, OQ_ERR_FORMAT, "%s/shards/%d/summary.json: %s, field onnxruntime.library_sha256 is empty "
                      "where another shard recorded it: refusing to merge shards not known to run one ONNX Runtime; "
                      "run shard %d again", m->outdir, (int)i, shard_config(m, i, k)->config.name, (int)i);
}

/* A configuration runs on one ONNX Runtime in every shard, as in one run: a shard whose node
 * loaded another build (a module, $ORTQUAL_ORT_LIB, a link switched between tasks) would be
 * merged into a summary that names the first shard's only. */
static oq_status check_runtime(const merge_ctx *m, int32_t i, oq_err *err)
{
    for (size_t k = 0; k < m->plan.n_configs; k++) {
        const oq_config_result *r = shard_config(m, i, k), *e = NULL;
        if (!r || !r->ort_version) continue;
        /* the first shard that loaded one: every later one was held to it */
        int32_t j = 0;
        for (; j < i && !((e = shard_config(m, j, k)) && e->ort_version); j++) {}
        if (j == i) continue;
        if (!*r->ort_library_sha256 != !*e->ort_library_sha256)
            return hash_missing(m, *r->ort_library_sha256 ? j : i, k, err);
        if (oq_config_same_runtime(e, r)) continue;
        return oq_err_set(err, OQ_ERR_FORMAT, "shard %d ran %s on ONNX Runtime %s (%s, SHA-256 %.12s), shard %d on %s "
                          "(%s, SHA-256 %.12s): refusing to merge shards of different runtimes; run shard %d again "
                          "where shard %d ran", (int)i, r->config.name, r->ort_version, r->ort_library,
                          *r->ort_library_sha256 ? r->ort_library_sha256 : "?", (int)j, e->ort_version,
                          e->ort_library, *e->ort_library_sha256 ? e->ort_library_sha256 : "?", (int)i, (int)j);
    }
    return OQ_OK;
}

/* A shard's folder holds one outcome: a summary, or the error that stopped it. Both (an
 * ortqual before 2026-12-05 recorded a refused rerun beside the finished result, or a hand)
 * cannot say which is the shard's latest. */
static oq_status one_outcome(const char *dir, oq_err *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/error.json", dir);
    if (access(path, F_OK) != 0) return OQ_OK;
    return oq_err_set(err, OQ_ERR_FORMAT, "%s holds both summary.json and error.json: two outcomes of the shard, "
                      "and no telling which is its latest; run the shard again (overwrite), or remove the one that is "
                      "not its latest", dir);
}

static oq_status read_shards(merge_ctx *m, oq_err *err)
{
    for (int32_t i = 0; i < m->plan.count; i++) {
        char dir[4096], path[4200];
        snprintf(dir, sizeof dir, "%s/shards/%d", m->outdir, (int)i);
        snprintf(path, sizeof path, "%s/summary.json", dir);
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "%s/shard%d_", m->work, (int)i);
        int reported = access(path, F_OK) == 0;
        oq_status st = reported ? one_outcome(dir, err) : diagnose(m, i, dir, err);
        if (!st && reported)
            st = oq_validate_summary_read_spilled(path, prefix, &m->shard[i], &m->records[i], &m->n_records[i], &m->notes,
                                                  err);
        if (!st && m->shard[i]) st = check_shard(m, i, m->shard[i], path, err);
        if (!st && m->shard[i] && m->shard[i]->verdict == OQ_RUN_INTERRUPTED) st = interrupted_shard(m, i, err);
        if (!st && m->shard[i]) st = check_runtime(m, i, err);
        if (st) return st;
    }
    return OQ_OK;
}

static int saved_name(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return !strncmp(e->d_name, "outputs_", 8) && n > 12 && !strcmp(e->d_name + n - 4, ".npz");
}

/* The outputs each shard that reported saved (save_outputs), left where it wrote them: the
 * merged summary names them relative to the merged folder, so that one list finds them all. */
static oq_status saved_outputs(merge_ctx *m, oq_err *err)
{
    oq_merge_info *mi = &m->s->merged;
    for (int32_t i = 0; i < m->plan.count; i++) {
        if (!m->shard[i]) continue;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/shards/%d", m->outdir, (int)i);
        struct dirent **names;
        int n = scandir(dir, &names, saved_name, alphasort);
        if (n < 0) return oq_err_set(err, OQ_ERR_IO, "%s: %s", dir, strerror(errno));
        int oom = 0;
        for (int k = 0; k < n; k++) {
            char rel[600];
            snprintf(rel, sizeof rel, "shards/%d/%s", (int)i, names[k]->d_name);
            oom = oom || oq_strv_push(&mi->saved_outputs, &mi->n_saved_outputs, rel);
            free(names[k]);
        }
        free(names);
        if (oom) return nomem(err);
    }
    return OQ_OK;
}

/* ---- one configuration from its shards ---------------------------------------------- */

/* The results of configuration k from the shards that ran it and reported; *incomplete when
 * a shard that ran part of it did not report. */
static size_t entries_of(const merge_ctx *m, size_t k, entry *out, int *incomplete)
{
    size_t n = 0;
    *incomplete = 0;
    for (int32_t i = 0; i < m->plan.count; i++) {
        oq_shard_part part = part_of(m, i);
        long pos = oq_shard_part_config(&part, k);
        if (pos < 0) continue;
        if (m->shard[i])
            out[n++] = (entry){i, &m->shard[i]->configs[pos], (size_t)pos < m->n_records[i] ? m->records[i][pos] : NULL,
                               m->shard[i]->configs[pos].status};
        /* by configuration every shard ran the reference on every batch: one report is whole */
        else *incomplete |= k > 0 || m->plan.by == OQ_SHARD_BY_BATCH;
    }
    *incomplete |= !n; /* ... and none is nothing */
    return n;
}

/* src's strings not already in dst appended to it. */
static int copy_strv(char ***dst, size_t *n, char *const *src, size_t n_src)
{
    for (size_t i = 0; i < n_src; i++) {
        int seen = 0;
        for (size_t j = 0; j < *n; j++) seen |= !strcmp((*dst)[j], src[i]);
        if (!seen && oq_strv_push(dst, n, src[i])) return 0;
    }
    return 1;
}

/* Every shard's bad reference cache entries, one list; 0 out of memory. */
static int merge_cache_ignored(oq_config_result *out, oq_config_result *f)
{
    if (!f->n_cache_ignored) return 1;
    oq_cache_ignored *v = realloc(out->cache_ignored, (out->n_cache_ignored + f->n_cache_ignored) * sizeof *v);
    if (!v) return 0;
    memcpy(v + out->n_cache_ignored, f->cache_ignored, f->n_cache_ignored * sizeof *v);
    out->cache_ignored = v;
    out->n_cache_ignored += f->n_cache_ignored;
    free(f->cache_ignored);
    f->cache_ignored = NULL;
    f->n_cache_ignored = 0;
    return 1;
}

/* Every shard's cache warning (each read its own host's cache), each text once with the shards
 * that gave it: "shard 0: ...; shards 1, 3: ..."; *out NULL when none warned. 0 out of memory. */
static int merge_cache_warnings(const entry *e, size_t n, char **out)
{
    size_t len = 0;
    FILE *f = open_memstream(out, &len);
    if (!f) return 0;
    for (size_t i = 0, said = 0; i < n; i++) {
        const char *w = e[i].r->cache_warning;
        int seen = 0, more = 0;
        for (size_t j = 0; w && j < n; j++) {
            int same = j != i && e[j].r->cache_warning && !strcmp(e[j].r->cache_warning, w);
            seen |= same && j < i;
            more |= same;
        }
        if (!w || seen) continue;
        fprintf(f, "%sshard%s %d", said++ ? "; " : "", more ? "s" : "", (int)e[i].shard);
        for (size_t j = i + 1; more && j < n; j++)
            if (e[j].r->cache_warning && !strcmp(e[j].r->cache_warning, w)) fprintf(f, ", %d", (int)e[j].shard);
        fprintf(f, ": %s", w);
    }
    if (fclose(f)) {
        free(*out);
        *out = NULL;
        return 0;
    }
    if (!len) {
        free(*out);
        *out = NULL;
    }
    return 1;
}

/* Each output over the batches of both (a batch is compared in one shard only: the
 * reference, which every shard may run, compares nothing). */
static int merge_outputs(oq_config_result *into, const oq_config_result *from)
{
    for (size_t i = 0; i < from->n_outputs; i++)
        if (oq_output_results_add(&into->outputs, &into->n_outputs, &from->outputs[i], NULL)) return 0;
    return 1;
}

typedef struct concat {
    FILE *out;
    int64_t last;        /* the index last written (-1: none) */
    int64_t next;        /* the shard's next batch due; -1 once one was not */
    int64_t failed;      /* the shard's first batch that failed its comparison (-1: none) */
    oq_totals_acc totals;
    const merge_ctx *m;
    size_t k;                      /* the configuration of the plan */
    const oq_config_result *whole; /* its outputs over every batch */
    int64_t contradicted;          /* the shard's first passed batch whose outputs say otherwise (-1: none) */
    char why[800];                 /* which output, and why */
    int64_t *matched;              /* per output of `whole`: the shard's records' inf_matched summed
                                      (-1: a record lacks it, written before it was kept) */
} concat;

/* The plan's batch of that index (-1: none such; the batch check refuses the record). */
static int64_t plan_batch(const merge_ctx *m, int64_t index)
{
    return index >= 0 && (size_t)index < m->plan.n_batches && m->brief[index].index == index ? index : -1;
}

/* Does a batch's output r count its elements as the plan's batch i lays them out? A masked
 * output's valid elements are its lengths' share of the batch's positions (its mask axes have
 * the batch's sizes: each position holds num_elements / positions elements), an unmasked
 * one's are all of them, and the rest are padding: a record that compared none, or counted
 * padding as valid, judged what was not compared. */
static int counts_hold(const merge_ctx *m, int64_t i, const oq_compare_result *r, char *why, size_t n)
{
    int64_t valid = r->num_elements, positions = m->positions[i];
    if (r->masked && (positions <= 0 || r->num_elements % positions)) {
        snprintf(why, n, "has num_elements %" PRId64 ", not a multiple of the plan's batch's %" PRId64
                 " positions (events x padded length)", r->num_elements, positions);
        return 0;
    }
    if (r->masked) valid = r->num_elements / positions * m->brief[i].valid_size;
    if (r->num_valid != valid && r->masked)
        snprintf(why, n, "has num_valid %" PRId64 ", but the plan's lengths make %" PRId64 " of its %" PRId64
                 " elements valid", r->num_valid, valid, r->num_elements);
    else if (r->num_valid != valid)
        snprintf(why, n, "has num_valid %" PRId64 ", but it is not masked: all %" PRId64 " of its elements are valid",
                 r->num_valid, r->num_elements);
    else if (r->num_padded != r->num_elements - valid)
        snprintf(why, n, "has padding.padded %" PRId64 ", but %" PRId64 " of its %" PRId64 " elements are padding",
                 r->num_padded, r->num_elements - valid, r->num_elements);
    else
        return 1;
    return 0;
}

static double as_recorded(const oq_batch_output *o, double v)
{
    return o->exact ? v : oq_batch_real_kept(v); /* an exact output's |d| is written in every digit */
}

/* A batch's max_abs (o's, to 10 digits) within the bound its output is judged by over every
 * batch (the bound at the largest |ref|) and within that output's max_abs (the largest of
 * its batches), each as a record would hold it: a record over either says an element failed,
 * or that the output's maximum left its batch out. */
static int max_abs_holds(const oq_batch_output *o, const oq_compare_result *all, char *why, size_t n)
{
    double bound = o->tol.atol + o->tol.rtol * all->max_abs_ref;
    char a[32], b[32];
    if (!(o->max_abs <= as_recorded(o, bound)))
        snprintf(why, n, "has max_abs %s above atol + rtol * max_abs_ref = %.6g",
                 oq_real_over_str(o->max_abs, bound, 3, a, sizeof a), bound);
    /* (a shard's NaN or Inf there failed that shard, and is judged with it) */
    else if (isfinite(all->max_abs) && o->max_abs > as_recorded(o, all->max_abs))
        snprintf(why, n, "has max_abs %s above its output's max_abs %s over every batch",
                 oq_real_over_str(o->max_abs, all->max_abs, 3, a, sizeof a), oq_real_str(all->max_abs, 6, b, sizeof b));
    else
        return 1;
    return 0;
}

/* A passed batch's outputs judged again (judged_again) at their largest |ref| over every batch,
 * their counts against the plan's batch and their max_abs against their output's; a record's
 * max_abs is written to 10 digits, which is held to the bound as written (max_abs_holds), the
 * output's over every batch, in full, to the bound itself (check_passed_outputs). */
static void judge_batch(concat *c, const oq_batch_result *b)
{
    int64_t pb = plan_batch(c->m, b->index);
    /* every batch compares every output of the model (each expected file holds them all): a
     * record that leaves one out hides its failure there, and the merged output covers fewer
     * batches than it says; one no other shard compared is no output of the plan's model */
    for (size_t i = 0; c->contradicted < 0 && i < c->whole->n_outputs; i++) {
        const char *name = c->whole->outputs[i].all.name;
        size_t seen = 0;
        for (size_t j = 0; j < b->n_outputs; j++) seen += !strcmp(b->outputs[j].name, name);
        if (seen != 1) {
            c->contradicted = b->index;
            snprintf(c->why, sizeof c->why, "lists output '%s' %zu times, where every batch compares each output "
                     "of the configuration once", name, seen);
        }
    }
    for (size_t j = 0; c->contradicted < 0 && j < b->n_outputs; j++) {
        const oq_batch_output *o = &b->outputs[j];
        const oq_compare_result *all = NULL;
        for (size_t i = 0; !all && i < c->whole->n_outputs; i++)
            if (!strcmp(c->whole->outputs[i].all.name, o->name)) all = &c->whole->outputs[i].all;
        oq_compare_result *r = c->m->scratch;
        oq_batch_output_counts(o, r);
        r->max_abs_ref = all ? all->max_abs_ref : 0;
        char why[600] = "failed";
        if (o->passed && !all) snprintf(why, sizeof why, "is not among the configuration's outputs");
        if (!o->passed || !all || !judged_again(c->m, c->k, 0, why, sizeof why) ||
            (pb >= 0 && !counts_hold(c->m, pb, r, why, sizeof why)) || !max_abs_holds(o, all, why, sizeof why)) {
            c->contradicted = b->index;
            snprintf(c->why, sizeof c->why, "output '%s' %s", o->name, why);
        }
    }
}

/* What the record's outputs hold beside oq_batch_output, one per output as read (malloc'ed, its
 * strings rec's); a key an output lacks (a record written before it was kept) stays unknown
 * there. NULL: out of memory, or the outputs are not the record's: the merged record leaves
 * them out. */
static oq_output_beside *beside_of(json_t *rec, size_t n)
{
    json_t *outs = json_object_get(rec, "outputs");
    oq_output_beside *v = n && json_array_size(outs) == n ? malloc(n * sizeof *v) : NULL;
    for (size_t i = 0; v && i < n; i++) {
        json_t *o = json_array_get(outs, i), *m = json_object_get(o, "inf_matched");
        json_t *pad = json_object_get(o, "padding");
        v[i] = (oq_output_beside){json_is_integer(m) ? json_integer_value(m) : -1,
                                  (int32_t)json_integer_value(json_object_get(pad, "batch_axis")),
                                  (int32_t)json_integer_value(json_object_get(pad, "seq_axis")),
                                  json_string_value(json_object_get(pad, "masked_by"))};
    }
    return v;
}

/* The record's inf_matched of each output added into c->matched. */
static void count_matched(concat *c, const json_t *rec)
{
    size_t j;
    json_t *o;
    json_array_foreach(json_object_get(rec, "outputs"), j, o) {
        const json_t *m = json_object_get(o, "inf_matched");
        const char *name = json_string_value(json_object_get(o, "output"));
        for (size_t i = 0; name && i < c->whole->n_outputs; i++)
            if (!strcmp(c->whole->outputs[i].all.name, name) && c->matched[i] >= 0)
                c->matched[i] = json_is_integer(m) ? c->matched[i] + json_integer_value(m) : -1;
    }
}

/* A record judged: the first failed batch, and the first passed one whose outputs do not hold
 * (judge_batch). */
static oq_status judge_record(void *ctx, const oq_batch_result *b, json_t *rec, oq_err *err)
{
    concat *c = ctx;
    (void)rec;
    (void)err;
    if (b->compared && !b->passed && c->failed < 0) c->failed = b->index;
    if (b->compared && b->passed && c->contradicted < 0) judge_batch(c, b);
    return OQ_OK;
}

/* Batches by index, the first seen kept: each shard's records are in index order and the
 * shards' batch ranges follow each other, so a record not past the last one written was
 * already given by an earlier shard (by configuration every shard ran the reference on
 * every batch). */
static oq_status concat_record(void *ctx, const oq_batch_result *b, json_t *rec, oq_err *err)
{
    concat *c = ctx;
    c->next = b->index == c->next ? c->next + 1 : -1;
    judge_record(c, b, rec, err);
    count_matched(c, rec);
    if (b->index <= c->last) return OQ_OK;
    c->last = b->index;
    oq_output_beside *beside = beside_of(rec, b->n_outputs);
    int ok = oq_batch_record_put_beside(c->out, b, beside);
    free(beside);
    if (!ok) return oq_err_set(err, OQ_ERR_IO, "a merged batch record cannot be written");
    return oq_totals_add(&c->totals, b) ? OQ_OK : nomem(err);
}

/* r's inf_matched of output `name` (0: r lists no such output). */
static int64_t matched_of(const oq_config_result *r, const char *name)
{
    for (size_t j = 0; j < r->n_outputs; j++)
        if (!strcmp(r->outputs[j].all.name, name)) return r->outputs[j].all.inf_matched;
    return 0;
}

/* Does shard e[i]'s configuration count each output's inf_matched as its records do (c->matched)?
 * The verdict reads the configuration's (a count that covers every valid element compared
 * nothing: NOT TESTED), so a summary whose records say otherwise would judge what they do not
 * hold. e[0]'s result was moved into out: out's count less the other shards'. Records written
 * before the count was kept (-1) are not checked. */
static int matched_holds(const concat *c, const entry *e, size_t n, size_t i, const oq_config_result *out, char *why,
                         size_t len)
{
    for (size_t j = 0; !out->is_reference && j < out->n_outputs; j++) {
        const char *name = out->outputs[j].all.name;
        int64_t said = i ? matched_of(e[i].r, name) : out->outputs[j].all.inf_matched;
        for (size_t k = 1; !i && k < n; k++) said -= matched_of(e[k].r, name);
        if (c->matched[j] < 0 || said == c->matched[j]) continue;
        snprintf(why, len, "output '%s' has inf_matched %lld, but its batch records count %lld", name, (long long)said,
                 (long long)c->matched[j]);
        return 0;
    }
    return 1;
}

/* The records c judged (judge_record) of configuration `config`, of shard i's summary (-1: the
 * merged summary, m->outdir/summary.json): a failed batch or a passed one that does not hold
 * under a pass is OQ_ERR_FORMAT. */
static oq_status records_contradict(const concat *c, int32_t i, const char *config, oq_err *err)
{
    char path[4200];
    if (i < 0) snprintf(path, sizeof path, "%s/summary.json", c->m->outdir);
    else snprintf(path, sizeof path, "%s/shards/%d/summary.json", c->m->outdir, (int)i);
    if (c->failed >= 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s passed, but its batch %lld failed its comparison: refusing to %s "
                          "a summary that contradicts itself", path, config, (long long)c->failed, c->m->verb);
    if (c->contradicted >= 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s passed, but its batch %lld, %s: refusing to %s a summary that "
                          "contradicts itself", path, config, (long long)c->contradicted, c->why, c->m->verb);
    return OQ_OK;
}

/* The n entries' records into one file `path`, counted into out->totals. A configuration
 * that passed on a shard ran every batch of that shard, in order, and each passed: a summary
 * with batches missing, repeated, from elsewhere or failed is not what a shard writes, and
 * would pass what it lacks unchecked. */
static oq_status merge_records(const merge_ctx *m, size_t k, const entry *e, size_t n, const char *path,
                               oq_config_result *out, oq_err *err)
{
    concat c = {.last = -1, .m = m, .k = k, .whole = out};
    c.matched = calloc(out->n_outputs ? out->n_outputs : 1, sizeof *c.matched);
    if (!c.matched) return nomem(err);
    oq_status opened = oq_fopen_scratch(path, &c.out, err);
    if (opened) {
        free(c.matched);
        return opened;
    }
    oq_totals_begin(&c.totals);
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < n; i++) {
        oq_shard_part part = part_of(m, e[i].shard);
        c.next = (int64_t)part.batch_lo;
        c.failed = -1;
        c.contradicted = -1;
        memset(c.matched, 0, (out->n_outputs ? out->n_outputs : 1) * sizeof *c.matched);
        char why[600];
        if (e[i].records) st = oq_batch_records_each(e[i].records, concat_record, &c, err);
        /* (e[0]'s result was moved to out: its status is in out->shards); a merged pass stands
         * on every shard's records */
        if (st || (!ran_clean(out->shards[i].status) && !ran_clean(out->status))) continue;
        if (c.next != (int64_t)part.batch_hi)
            st = oq_err_set(err, OQ_ERR_FORMAT, "%s/shards/%d/summary.json: %s passed, but its batch records are not "
                            "the shard's batches %zu..%zu, each once in order: refusing to merge an incomplete shard",
                            m->outdir, (int)e[i].shard, out->config.name, part.batch_lo, part.batch_hi - 1);
        if (!st) st = records_contradict(&c, e[i].shard, out->config.name, err);
        if (!st && !matched_holds(&c, e, n, i, out, why, sizeof why))
            st = oq_err_set(err, OQ_ERR_FORMAT, "%s/shards/%d/summary.json: %s, %s: refusing to merge a summary that "
                            "contradicts itself", m->outdir, (int)e[i].shard, out->config.name, why);
    }
    free(c.matched);
    if (fclose(c.out) && !st) st = oq_err_write(err, path, errno);
    oq_totals_end(&c.totals, &out->totals);
    return st;
}

/* Every routing line and every failure, as one run would list them (shard order is batch
 * order), and so the count of failures on MATH adds up; advice is per node: once. */
/* Is f's failure i one d lists already? By its fields (a route failing in several shards is one
 * failure, as in one run; its line is each shard's own), never by its wording; a failure known
 * only by its text (an older summary, a wording not recognised) by the whole text. */
static int failure_listed(const oq_dispatch_result *d, const oq_dispatch_result *f, size_t i)
{
    for (size_t j = 0; j < d->n_failures; j++) {
        const oq_dispatch_failure *a = &d->failed[j], *b = &f->failed[i];
        if (a->kind == OQ_DISPATCH_FAILURE_TEXT && b->kind == OQ_DISPATCH_FAILURE_TEXT
                ? !strcmp(d->failures[j], f->failures[i])
                : oq_dispatch_failure_same(a, b))
            return 1;
    }
    return 0;
}

/* f's failures not already in d, with the MATH ones among them counted (the first shard's
 * text and line kept: the first line of the route in batch order). */
static int merge_failures(oq_dispatch_result *d, const oq_dispatch_result *f)
{
    for (size_t i = 0; i < f->n_failures; i++) {
        if (failure_listed(d, f, i)) continue;
        if (oq_dispatch_failure_add(d, f->failures[i], &f->failed[i])) return 0;
        const oq_dispatch_failure *a = &f->failed[i];
        d->n_math_failures += a->kind == OQ_DISPATCH_FAILURE_KERNEL && oq_sdpa_kernel_from_name(a->kernel) == OQ_SDPA_MATH;
    }
    return 1;
}

/* Does `log` (every shard's routing lines) answer failure f? A node one shard never saw is
 * observed when another shard saw it: its kernel there was checked, in that shard (a wrong one
 * is that shard's KERNEL failure, kept). A shard with no routing line at all proved nothing
 * about any batch of its own: that failure stays. */
static int observed_elsewhere(const oq_dispatch_failure *f, const oq_dispatch_log *log)
{
    if (f->kind != OQ_DISPATCH_FAILURE_UNOBSERVED) return 0;
    for (size_t i = 0; i < log->n_records; i++)
        if (!strcmp(log->records[i].node, f->node)) return 1;
    return 0;
}

/* The merged check judged on every shard's lines, as one run judges its whole log: "not
 * observed" failures of nodes another shard observed are dropped. */
static void observed_across(oq_dispatch_result *d)
{
    if (!d->checked || !d->failed) return;
    size_t kept = 0;
    for (size_t i = 0; i < d->n_failures; i++) {
        if (observed_elsewhere(&d->failed[i], &d->log)) {
            free(d->failures[i]);
            oq_dispatch_failure_clear(&d->failed[i]);
            continue;
        }
        d->failures[kept] = d->failures[i];
        d->failed[kept++] = d->failed[i];
    }
    for (size_t i = kept; i < d->n_failures; i++) memset(&d->failed[i], 0, sizeof d->failed[i]);
    d->n_failures = kept;
    d->passed = !kept && d->log.n_records > 0; /* oq_dispatch_check's rule */
}

static int merge_dispatch(oq_dispatch_result *d, oq_dispatch_result *f)
{
    if (!f->recorded) return 1;
    if (!d->recorded) {
        oq_dispatch_result t = *d;
        *d = *f;
        *f = t;
        return 1;
    }
    /* Shards' lines of one route add up: the merged log stays the size of the model. */
    if (oq_dispatch_log_merge(&d->log, &f->log, NULL)) return 0;
    if (f->checked) {
        d->passed = d->checked ? d->passed && f->passed : f->passed;
        d->checked = 1;
    }
    return merge_failures(d, f) && copy_strv(&d->advice, &d->n_advice, f->advice, f->n_advice);
}

/* The profile is the first batch's (a profiled session of its own over it, checks.c): the
 * first shard's, as an unsharded run has it (summed over shards it was k batches' calls). */
static int merge_placement(oq_placement_result *p, oq_placement_result *f)
{
    if (!f->recorded) return 1;
    if (!p->recorded) {
        oq_placement_result t = *p;
        *p = *f;
        *f = t;
        return 1;
    }
    if (f->error && !p->error) {
        p->error = f->error;
        f->error = NULL;
    }
    p->report.passed = p->report.passed && f->report.passed;
    return copy_strv(&p->report.failures, &p->report.n_failures, f->report.failures, f->report.n_failures) &&
           copy_strv(&p->report.notes, &p->report.n_notes, f->report.notes, f->report.n_notes) &&
           copy_strv(&p->witness_errors, &p->n_witness_errors, f->witness_errors, f->n_witness_errors);
}

static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Times add up; memory is the largest any shard saw. A worker that did not exit cleanly is
 * the one named. */
static void merge_costs(oq_config_result *into, oq_config_result *from)
{
    oq_worker_cost *c = &into->cost;
    const oq_worker_cost *f = &from->cost;
    if (f->recorded && !c->recorded) *c = *f;
    else if (f->recorded) {
        c->session_s += f->session_s;
        c->run_s += f->run_s;
        c->compare_s += f->compare_s;
        c->io_s += f->io_s;
        c->rss_after_session_bytes = max_i64(c->rss_after_session_bytes, f->rss_after_session_bytes);
        c->rss_after_first_run_bytes = max_i64(c->rss_after_first_run_bytes, f->rss_after_first_run_bytes);
        c->rss_start_bytes = max_i64(c->rss_start_bytes, f->rss_start_bytes);
        c->vmhwm_bytes = max_i64(c->vmhwm_bytes, f->vmhwm_bytes);
        c->max_batch_bytes = max_i64(c->max_batch_bytes, f->max_batch_bytes);
    }
    oq_worker_run *w = &into->worker, *fw = &from->worker;
    if (!fw->ran) return;
    double seconds = w->ran ? w->seconds + fw->seconds : fw->seconds;
    if (!w->ran || (!strcmp(w->ended, "exit 0") && strcmp(fw->ended, "exit 0") != 0)) {
        oq_worker_run t = *w;
        *w = *fw;
        *fw = t;
    }
    w->seconds = seconds;
}

/* Did shard result r fail (or skip, the check not required) only because its dispatch check
 * missed nodes that `seen` (every shard's routing lines) holds? Its comparisons passed, its
 * placement did, and each of its dispatch failures is a node observed in another shard: one
 * unsharded run over the same batches would have passed it. */
static int dispatch_cleared(const oq_config_result *r, const oq_dispatch_log *seen)
{
    const oq_dispatch_result *d = &r->dispatch;
    if ((r->status != OQ_VERDICT_FAILED && r->status != OQ_VERDICT_SKIPPED) || !r->reported || !d->checked ||
        d->passed || !d->n_failures || !d->failed || !r->n_outputs)
        return 0;
    if (r->placement.recorded && r->placement.required && !r->placement.report.passed) return 0;
    for (size_t j = 0; j < r->n_outputs; j++)
        if (!r->outputs[j].all.passed) return 0;
    for (size_t j = 0; j < d->n_failures; j++)
        if (!observed_elsewhere(&d->failed[j], seen)) return 0;
    return 1;
}

/* Each entry's status as the merge counts it: passed where dispatch_cleared says so. `seen`
 * is built from copies: the shards' logs move into the merged result later. */
static int clear_dispatch_only(entry *e, size_t n)
{
    oq_dispatch_log seen = {0};
    int ok = 1;
    for (size_t i = 0; ok && i < n; i++) {
        oq_dispatch_log copy = {0};
        ok = oq_dispatch_log_copy(&copy, &e[i].r->dispatch.log, NULL) == OQ_OK &&
             oq_dispatch_log_merge(&seen, &copy, NULL) == OQ_OK;
        oq_dispatch_log_clear(&copy);
    }
    for (size_t i = 0; ok && i < n; i++)
        if (dispatch_cleared(e[i].r, &seen)) e[i].status = OQ_VERDICT_PASSED;
    oq_dispatch_log_clear(&seen);
    return ok;
}

/* As one run would have ended: a failure fails, then not-run, then all skipped or all
 * passed; passed on some shards and skipped on others is an incomplete matrix: failed. Of a
 * merge missing shards (`incomplete`), a failure's reason names its shard: it is one problem of
 * several, each shard's (mark_incomplete adds the others'). */
static int merged_status(const entry *e, size_t n, int incomplete, oq_verdict *v, char **reason)
{
    static const oq_verdict order[] = {OQ_VERDICT_FAILED, OQ_VERDICT_NOT_RUN};
    const entry *why = &e[0];
    int found = 0;
    *reason = NULL;
    *v = e[0].status;
    for (size_t o = 0; o < 2 && !found; o++)
        for (size_t i = 0; i < n && !found; i++)
            if ((found = e[i].status == order[o])) {
                *v = order[o];
                why = &e[i];
            }
    for (size_t i = 1; !found && i < n; i++)
        if (e[i].status != e[0].status) {
            *v = OQ_VERDICT_FAILED;
            if (asprintf(reason, "%s on shard %d (%s) but %s on shard %d: the matrix is incomplete",
                         oq_verdict_name(e[i].status), (int)e[i].shard, e[i].r->reason ? e[i].r->reason : "",
                         oq_verdict_name(e[0].status), (int)e[0].shard) < 0)
                *reason = NULL;
            return *reason != NULL;
        }
    /* passed: no reason (a shard cleared by the others' lines keeps its own in its summary) */
    if (ran_clean(*v) || !why->r->reason) return 1;
    if (!incomplete || *v == OQ_VERDICT_SKIPPED) return (*reason = strdup(why->r->reason)) != NULL;
    if (asprintf(reason, "shard %d: %s", (int)why->shard, why->r->reason) < 0) *reason = NULL;
    return *reason != NULL;
}

/* Every shard's cache writers, one after another (each shard drew and checked its own). */
static int merge_cache_writers(oq_config_result *out, const oq_config_result *f)
{
    if (!f->cache_writers) return 1;
    json_t *a = out->cache_writers ? json_loads(out->cache_writers, 0, NULL) : json_array();
    json_t *b = json_loads(f->cache_writers, 0, NULL);
    char *text = a && b && !json_array_extend(a, b) ? json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(a);
    json_decref(b);
    if (!text) return 0;
    free(out->cache_writers);
    out->cache_writers = text;
    return 1;
}

/* Configuration k from the n shards that reported it, into `out` (moved from the shards). */
static oq_status merge_config(const merge_ctx *m, size_t k, entry *e, size_t n, int incomplete, const char *records,
                              oq_config_result *out, oq_err *err)
{
    oq_verdict v;
    char *reason = NULL, *warning = NULL;
    oq_config_shard *per = calloc(n, sizeof *per);
    if (!per || !clear_dispatch_only(e, n) || !merged_status(e, n, incomplete, &v, &reason) ||
        !merge_cache_warnings(e, n, &warning)) {
        free(per);
        free(reason);
        return nomem(err);
    }
    for (size_t i = 0; i < n; i++)
        per[i] = (oq_config_shard){e[i].shard, e[i].r->status, e[i].r->worker.ran, e[i].r->worker.seconds,
                                   e[i].r->session_tried, e[i].r->session_create_s};
    *out = *e[0].r;
    free(out->cache_warning);
    out->cache_warning = warning;
    out->required &= e[0].status != OQ_VERDICT_PASSED; /* a skip made a failure, cleared */
    /* ort_library_sha256 kept: check_runtime held every shard's to the first's, as one run records it */
    memset(e[0].r, 0, sizeof *e[0].r);
    int ok = 1;
    for (size_t i = 1; ok && i < n; i++) {
        oq_config_result *f = e[i].r;
        ok = merge_outputs(out, f) && merge_dispatch(&out->dispatch, &f->dispatch) &&
             merge_placement(&out->placement, &f->placement) && merge_cache_ignored(out, f) &&
             merge_cache_writers(out, f);
        merge_costs(out, f);
        /* a shard whose check failed never reran with MATH forced: another's rerun stands */
        if (f->teeth.ran && (!out->teeth.ran || (!f->teeth.proved && out->teeth.proved))) {
            oq_teeth_result t = out->teeth;
            out->teeth = f->teeth;
            f->teeth = t;
        }
        out->required |= f->required && e[i].status != OQ_VERDICT_PASSED;
    }
    observed_across(&out->dispatch);
    /* shards whose own check failed (cleared by the others' lines) never reran with MATH forced:
     * when none did, prove_teeth has no proof, as an unsharded run would have one */
    if (m->plan.prove_teeth && v == OQ_VERDICT_PASSED && !out->is_reference && out->dispatch.checked &&
        !out->teeth.ran) {
        v = OQ_VERDICT_FAILED;
        free(reason);
        char said[320];
        reason = strdup(oq_terms("prove_teeth: no shard reran with MATH forced (each shard's own dispatch "
                                  "check failed on a node only another shard observed), so the check was never seen "
                                  "to fail; validate unsharded for the proof", said, sizeof said));
        ok = ok && reason;
    }
    out->status = v;
    free(out->reason);
    out->reason = reason;
    out->shards = per;
    out->n_shards = n;
    if (!ok) return nomem(err);
    return out->reported || ran_clean(v) ? merge_records(m, k, e, n, records, out, err) : OQ_OK;
}

/* Did shard problem p hold configuration k? */
static int held(const merge_ctx *m, const oq_shard_problem *p, size_t k)
{
    oq_shard_part part = part_of(m, p->index);
    return oq_shard_part_config(&part, k) >= 0;
}

/* "incomplete: shard 2 (missing) did not report"; of several, "shards 0, 1, 2 (missing)" where
 * they share their state, else "shards 1 (failed), 3 (unfinished)": every one, however many
 * (a fixed buffer of 256 bytes cut the list short); after the failure of a shard that reported
 * ("shard 0: worker timed out ...; incomplete: ..."). */
static void mark_incomplete(const merge_ctx *m, oq_config_result *r, size_t k)
{
    const oq_merge_info *mi = &m->s->merged;
    const oq_shard_problem *first = NULL;
    size_t n = 0, len = 0;
    int same = 1;
    for (size_t p = 0; p < mi->n_problems; p++) {
        if (!held(m, &mi->problems[p], k)) continue;
        same &= !first || mi->problems[p].state == first->state;
        first = first ? first : &mi->problems[p];
        n++;
    }
    char *who = NULL;
    FILE *f = open_memstream(&who, &len);
    for (size_t p = 0, i = 0; f && p < mi->n_problems; p++) {
        if (!held(m, &mi->problems[p], k)) continue;
        fprintf(f, "%s%d", i++ ? ", " : "", (int)mi->problems[p].index);
        if (!same) fprintf(f, " (%s)", oq_shard_state_name(mi->problems[p].state));
    }
    if (f && same && first) fprintf(f, " (%s)", oq_shard_state_name(first->state));
    if (f && fclose(f)) {
        free(who);
        who = NULL;
    }
    /* a shard's own failure stays beside the missing ones: a rerun of those alone fails again */
    int own = r->reason && (r->status == OQ_VERDICT_FAILED || r->status == OQ_VERDICT_ERROR ||
                            r->status == OQ_VERDICT_NOT_RUN);
    /* the reference is never failed: missing batches of it are a reference that did not run */
    r->status = r->is_reference ? OQ_VERDICT_ERROR : OQ_VERDICT_FAILED;
    oq_result_reason(r, "%s%sincomplete: shard%s %s did not report", own ? r->reason : "", own ? "; " : "",
                     n > 1 ? "s" : "", who ? who : "");
    free(who);
}

/* What an unsharded run records for a configuration it never started. */
static void not_run(oq_config_result *r)
{
    oq_config c = r->config;
    int is_reference = r->is_reference;
    oq_config_result_clear(r);
    r->config = c;
    r->is_reference = is_reference;
    r->status = OQ_VERDICT_NOT_RUN;
    oq_result_reason(r, "the reference did not run");
}

static oq_status merge_configs(merge_ctx *m, oq_err *err)
{
    oq_validate_summary *s = m->s;
    entry *e = calloc((size_t)m->plan.count, sizeof *e);
    s->configs = calloc(m->plan.n_configs, sizeof *s->configs);
    if (!e || !s->configs) {
        free(e);
        return nomem(err);
    }
    int ref_ok = 1, ref_reported = 1;
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < m->plan.n_configs; k++) {
        int incomplete;
        size_t n = entries_of(m, k, e, &incomplete);
        oq_config_result *r = &s->configs[s->n_configs++];
        char records[4200];
        snprintf(records, sizeof records, "%s/merged_%zu.jsonl", m->work, k);
        if (n) {
            st = merge_config(m, k, e, n, incomplete, records, r, err);
            if (!st && r->reported && !(m->merged[k] = strdup(records))) st = nomem(err);
        } else {
            if (oq_config_parse(m->plan.configs[k], &r->config, NULL))
                snprintf(r->config.name, sizeof r->config.name, "%s", m->plan.configs[k]);
            r->is_reference = k == 0;
            r->status = k == 0 ? OQ_VERDICT_ERROR : OQ_VERDICT_FAILED;
        }
        /* judged on what the shards reported: a missing shard is reported as such, not as a
         * reference that did not pass */
        if (k == 0) {
            ref_ok = n && r->status == OQ_VERDICT_REFERENCE;
            ref_reported = n > 0;
        }
        /* a reference no shard reported did not fail to run: its shards did not report, and the
         * configurations under test are incomplete as with one shard missing, not `not-run` */
        if (k > 0 && !ref_ok && ref_reported) not_run(r);
        else if (incomplete) mark_incomplete(m, r, k);
    }
    free(e);
    return st;
}

/* ---- the merged summary -------------------------------------------------------------- */

static oq_status merge_block(merge_ctx *m, oq_err *err)
{
    oq_merge_info *mi = &m->s->merged;
    mi->count = m->plan.count;
    mi->by = m->plan.by;
    for (int32_t i = 0; i < m->plan.count; i++) {
        const oq_validate_summary *sh = m->shard[i];
        if (!sh) continue;
        oq_shard_report *r = OQ_PUSH(mi->reported, mi->n_reported);
        if (!r) return nomem(err);
        r->index = i;
        snprintf(r->host, sizeof r->host, "%s", sh->shard.host);
        snprintf(r->start, sizeof r->start, "%s", sh->start);
        snprintf(r->end, sizeof r->end, "%s", sh->end);
        r->verdict = sh->verdict;
        r->slurm = sh->shard.slurm;
    }
    oq_iso_time(mi->time, sizeof mi->time);
    gethostname(mi->host, sizeof mi->host - 1);
    return OQ_OK;
}

/* A shard's reference cache (each shard's is its own host's: the first one's is kept, as its
 * evidence is); 0: out of memory. */
static int take_cache(oq_validate_summary *s, const oq_validate_summary *sh)
{
    s->cache_dir = sh->cache_dir ? strdup(sh->cache_dir) : NULL;
    s->cache_off = sh->cache_off ? strdup(sh->cache_off) : NULL;
    s->cache_shared = sh->cache_shared;
    s->cache_group = sh->cache_group ? strdup(sh->cache_group) : NULL;
    return (!sh->cache_dir || s->cache_dir) && (!sh->cache_off || s->cache_off) && (!sh->cache_group || s->cache_group);
}

/* Shard i's reference cache folder where it kept one; NULL: none (no C reference, no cache). */
static const char *cache_of(const merge_ctx *m, int32_t i)
{
    return m->shard[i] ? m->shard[i]->cache_dir : NULL;
}

/* The shards' reference cache folders, each with the shards that used it: "shards 0, 2: A;
 * shard 1: B". */
static void cache_groups(const merge_ctx *m, FILE *f)
{
    for (int32_t i = 0, said = 0; i < m->plan.count; i++) {
        const char *d = cache_of(m, i);
        int seen = 0, n = 0;
        for (int32_t j = 0; d && j < m->plan.count; j++)
            if (cache_of(m, j) && !strcmp(cache_of(m, j), d)) seen |= j < i, n++;
        if (!d || seen) continue;
        fprintf(f, "%sshard%s %d", said++ ? "; " : "", n > 1 ? "s" : "", (int)i);
        for (int32_t j = i + 1; n > 1 && j < m->plan.count; j++)
            if (cache_of(m, j) && !strcmp(cache_of(m, j), d)) fprintf(f, ", %d", (int)j);
        fprintf(f, ": %s", d);
    }
}

/* A group's shared cache is one folder: a shard pointed at another reused none of the group's
 * entries and stored its own elsewhere. Said in the reference's cache warning (the results are
 * still compared, so not a failure); 0: out of memory. */
static int cache_dirs_warning(const merge_ctx *m)
{
    const char *first = NULL;
    int shared = 0, differ = 0;
    for (int32_t i = 0; i < m->plan.count; i++) {
        const char *d = cache_of(m, i);
        shared |= d && m->shard[i]->cache_shared;
        if (d && first && strcmp(d, first)) differ = 1;
        if (d && !first) first = d;
    }
    oq_config_result *ref = m->s->n_configs ? &m->s->configs[0] : NULL;
    if (!shared || !differ || !ref) return 1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return 0;
    if (ref->cache_warning) fprintf(f, "%s; ", ref->cache_warning);
    fprintf(f, "the shards' reference caches are not one folder (");
    cache_groups(m, f);
    fprintf(f, "): a group's shared cache is one folder, and a shard pointed at another reused none of the "
            "group's entries and stored its own there");
    if (fclose(f)) {
        free(text);
        return 0;
    }
    free(ref->cache_warning);
    ref->cache_warning = text;
    return 1;
}

/* The span of the shards that reported (ISO-8601 sorts as text), their first evidence, reference
 * cache and model inputs, the plan's identity and batches. */
static oq_status frame(merge_ctx *m, oq_err *err)
{
    oq_validate_summary *s = m->s;
    for (int32_t i = 0; i < m->plan.count; i++) {
        const oq_validate_summary *sh = m->shard[i];
        if (!sh) continue;
        if (!*s->start || strcmp(sh->start, s->start) < 0) snprintf(s->start, sizeof s->start, "%s", sh->start);
        if (strcmp(sh->end, s->end) > 0) snprintf(s->end, sizeof s->end, "%s", sh->end);
        if (!s->evidence_json && sh->evidence_json && !(s->evidence_json = strdup(sh->evidence_json)))
            return nomem(err);
        if (!s->cache_dir && !s->cache_off && !take_cache(s, sh)) return nomem(err);
        for (size_t k = 0, had = s->n_requirements; !had && k < sh->n_requirements; k++) /* the plan's: each shard's */
            if (oq_strv_push(&s->requirements, &s->n_requirements, sh->requirements[k])) return nomem(err);
        if (s->n_input_names || !sh->n_input_names) continue;
        for (size_t k = 0; k < sh->n_input_names; k++)
            if (oq_strv_push(&s->input_names, &s->n_input_names, sh->input_names[k])) return nomem(err);
        if (sh->mask_input && !(s->mask_input = strdup(sh->mask_input))) return nomem(err);
    }
    memcpy(s->plan_hash, m->plan.hash, sizeof s->plan_hash);
    return cache_dirs_warning(m) ? OQ_OK : nomem(err);
}

static oq_status brief_batch(void *ctx, const oq_batch_info *b, oq_err *err)
{
    (void)err;
    merge_ctx *m = ctx;
    m->brief[m->n_brief] = oq_batch_brief_of(b);
    m->positions[m->n_brief++] = b->batch_size * b->padded_length;
    return OQ_OK;
}

/* Each batch's index, valid size and source (24 bytes) and positions (8), by which the records
 * are judged and validate.csv's rows written. */
static oq_status plan_batches(merge_ctx *m, oq_err *err)
{
    m->brief = calloc(m->plan.n_batches + 1, sizeof *m->brief);
    m->positions = calloc(m->plan.n_batches + 1, sizeof *m->positions);
    if (!m->brief || !m->positions) return nomem(err);
    return oq_shard_plan_batches_each(&m->plan, 0, m->plan.n_batches, brief_batch, m, err);
}

/* The verdict one unsharded run would give; a shard that did not report fails it. Its reason
 * names every such shard, then what the shards that reported said (a reference that timed out on
 * one of them): a rerun of the missing ones alone would fail again. */
static void judge(oq_validate_summary *s, int allow_skip)
{
    oq_validate_judge(s, allow_skip);
    const oq_merge_info *mi = &s->merged;
    if (!mi->n_problems || s->verdict == OQ_RUN_FAILED) return;
    s->verdict = OQ_RUN_FAILED;
    s->exit_status = 1;
    char *said = s->verdict_reason, *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    for (size_t i = 0; f && i < mi->n_problems; i++)
        fprintf(f, "%sshard %d of %d %s: %s", i ? "; " : "", (int)mi->problems[i].index, (int)mi->count,
                oq_shard_state_name(mi->problems[i].state), mi->problems[i].detail);
    if (f && said) fprintf(f, "; %s", said);
    if (f && fclose(f)) {
        free(text);
        text = NULL; /* out of memory: the verdict stays, without its line */
    }
    free(said);
    s->verdict_reason = text;
}

/* The batch list and the description are the plan's files, copied into the summary as they
 * are. */
static oq_status write_merged(merge_ctx *m, int plots, oq_err *err)
{
    char path[4096];
    oq_spilled sp = {.batch_list = m->plan.batches_path, .brief = m->brief, .n_brief = m->plan.n_batches,
                     .description = m->plan.description_path, .records = m->merged, .notes = &m->notes};
    oq_status st = oq_validate_write_tables(m->outdir, m->s, &sp, plots ? OQ_PLOTS_ISOLATED : OQ_PLOTS_NONE, 0, NULL, err);
    snprintf(path, sizeof path, "%s/summary.json", m->outdir);
    return st ? st : oq_summary_write(m->s, &sp, path, err);
}

/* The description's "configs" array alone: the file is the canonical text its SHA-256 (the plan's
 * hash, checked by oq_shard_plan_read) names, compact with its keys sorted, so the array follows
 * the batches' as `,"configs":[`, which no batch entry holds (a quote inside a string is
 * escaped); parsing the batches too cost jansson ~7 s at 10^5 batches on the dev VM. */
static json_t *description_configs(const char *path)
{
    unsigned char *text = NULL;
    size_t n = 0;
    static const char key[] = ",\"configs\":";
    if (oq_read_file(path, &text, &n, NULL)) return NULL;
    const char *at = memmem(text, n, key, sizeof key - 1);
    json_t *configs = at ? json_loadb(at + sizeof key - 1, n - (size_t)(at - (const char *)text) - (sizeof key - 1),
                                      JSON_DISABLE_EOF_CHECK, NULL)
                         : NULL;
    free(text);
    return configs;
}

/* What each configuration's worker judged its outputs by: its precision and the plan's
 * tolerances and padding rule, as the description says (its SHA-256 is the plan's identity),
 * never a shard's summary, which is what is judged. */
static oq_status plan_tolerances(merge_ctx *m, oq_err *err)
{
    const char *path = m->plan.description_path;
    json_t *configs = description_configs(path);
    size_t n = m->plan.n_configs;
    m->tols = calloc(n + 1, sizeof *m->tols);
    m->preset = calloc(n + 1, sizeof *m->preset);
    m->padding = calloc(n + 1, sizeof *m->padding);
    m->scratch = malloc(sizeof *m->scratch);
    oq_status st = !m->tols || !m->preset || !m->padding || !m->scratch ? nomem(err) : OQ_OK;
    if (!st && json_array_size(configs) != n)
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: not a description of the plan's %zu configurations", path, n);
    for (size_t k = 1; !st && k < n; k++) {
        oq_config c;
        const json_t *d = json_array_get(configs, k), *padding = json_object_get(d, "padding");
        st = oq_config_parse(m->plan.configs[k], &c, err);
        if (!st)
            st = oq_config_tolerances(c.precision, json_string_value(json_object_get(d, "tolerances")), &m->preset[k],
                                      &m->tols[k], err);
        m->padding[k] = (int)json_integer_value(padding);
        if (!st && (!json_is_integer(padding) || m->padding[k] < OQ_PADDING_REPORT ||
                    m->padding[k] > OQ_PADDING_AS_REFERENCE))
            st = oq_err_set(err, OQ_ERR_FORMAT, "no padding rule (0, 1 or 2)");
        if (st) oq_err_prefix(err, "%s: configuration %s: ", path, m->plan.configs[k]);
    }
    json_decref(configs);
    return st;
}

/* What the plan's files gave m (plan_tolerances, oq_shard_plan_outputs, plan_batches) released. */
static void plan_clear(merge_ctx *m)
{
    for (size_t k = 0; m->tols && k < m->plan.n_configs; k++) oq_tolerances_free(m->tols[k]);
    free(m->tols);
    free(m->preset);
    free(m->padding);
    free(m->scratch);
    json_decref(m->outputs);
    free(m->brief);
    free(m->positions);
    oq_run_notes_clear(&m->notes);
    oq_shard_plan_clear(&m->plan);
}

static oq_status merge(const char *outdir, int plots, int allow_skip, oq_validate_summary **summary, oq_err *err)
{
    merge_ctx m = {.outdir = outdir, .verb = "merge", .what = "shard"};
    oq_status st = oq_shard_plan_read(outdir, &m.plan, err);
    if (st) return st;
    oq_slurm_jobs_read(outdir, &m.jobs, NULL); /* absent when the shards ran without `ortqual slurm` */
    size_t count = (size_t)m.plan.count;
    m.shard = calloc(count, sizeof *m.shard);
    m.records = calloc(count, sizeof *m.records);
    m.n_records = calloc(count, sizeof *m.n_records);
    m.merged = calloc(m.plan.n_configs + 1, sizeof *m.merged);
    m.s = calloc(1, sizeof *m.s);
    char shards[4000];
    snprintf(shards, sizeof shards, "%s/shards", outdir);
    snprintf(m.work, sizeof m.work, "%s/.merge", shards);
    oq_remove_tree(m.work); /* an earlier merge's, stopped */
    /* held before it is made: a signal removes it (its files are flat), as the end below does;
     * held after, a signal between the two left it behind */
    oq_scratch_hold(m.work);
    st = m.shard && m.records && m.n_records && m.merged && m.s ? oq_mkdir_in(shards, ".merge", err) : nomem(err);
    if (!st) st = plan_tolerances(&m, err);
    if (!st) st = oq_shard_plan_outputs(outdir, m.plan.n_configs, &m.outputs, err);
    if (!st) st = read_shards(&m, err);
    if (!st) st = merge_block(&m, err);
    if (!st) st = plan_batches(&m, err);
    if (!st) st = merge_configs(&m, err);
    if (!st) st = frame(&m, err);
    if (!st) st = saved_outputs(&m, err);
    if (!st) {
        judge(m.s, allow_skip);
        /* the earlier merge's files go before the first of this one's is put in place: a signal
         * between two of them left this merge's validate.csv beside that one's summary.json */
        oq_validate_merge_drop(outdir, NULL);
        st = write_merged(&m, plots, err);
    }
    for (int32_t i = 0; m.shard && i < m.plan.count; i++) oq_validate_summary_free(m.shard[i]);
    for (size_t i = 0; m.records && i < count; i++) {
        for (size_t k = 0; k < m.n_records[i]; k++) free(m.records[i][k]);
        free(m.records[i]);
    }
    for (size_t k = 0; m.merged && k < m.plan.n_configs; k++) free(m.merged[k]);
    oq_remove_tree(m.work);
    oq_output_release(m.work);
    free(m.shard);
    free(m.records);
    free(m.n_records);
    free(m.merged);
    plan_clear(&m);
    if (st) oq_validate_summary_free(m.s);
    else *summary = m.s;
    return st;
}

oq_status oq_validate_merge(const char *outdir, int plots, int allow_skip,
                            oq_validate_summary **summary, oq_err *err)
{
    OQ_NEED(err, outdir);
    OQ_NEED(err, summary);
    *summary = NULL;
    oq_status st = merge(outdir, plots, allow_skip, summary, err);
    /* tables and figures without the summary they belong to, or an earlier merge's summary beside
     * shards this one refused, would read as a merged run (CI reads DIR/summary.json) */
    if (st) oq_validate_merge_drop(outdir, err);
    return st;
}

/* ---- a merged summary held to its plan (plot, report) ---------------------------------- */

/* The merged summary s of m's plan, its records spilled (records[k]: configuration k's), held to
 * the plan as the merge held its shards: the split, and each configuration in the plan's place,
 * its outputs and batch records where it passed (config_holds, judge_record). */
static oq_status held_to_plan(const merge_ctx *m, const oq_validate_summary *s, char **records, size_t n_records,
                              const char *path, oq_err *err)
{
    const oq_merge_info *mi = &s->merged;
    if (mi->count != m->plan.count || mi->by != m->plan.by || s->n_configs != m->plan.n_configs)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %d shards by %s of %zu configurations, but its plan "
                          "%s/shards/plan.json has %d by %s of %zu: refusing to draw a summary that contradicts its plan",
                          path, (int)mi->count, oq_shard_by_name(mi->by), s->n_configs, m->outdir, (int)m->plan.count,
                          oq_shard_by_name(m->plan.by), m->plan.n_configs);
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < s->n_configs; k++) {
        const oq_config_result *r = &s->configs[k];
        concat c = {.m = m, .k = k, .whole = r, .failed = -1, .contradicted = -1};
        st = config_holds(m, k, r, (long)k, path, err);
        if (st || r->is_reference || r->status != OQ_VERDICT_PASSED || k >= n_records || !records[k]) continue;
        st = oq_batch_records_each(records[k], judge_record, &c, err);
        if (!st) st = records_contradict(&c, -1, r->config.name, err);
    }
    return st;
}

/* The plan of the merged summary at `path`: dir/shards/plan.json, whose hash the summary names,
 * with what the merge judged by (plan_tolerances, its outputs and batches). Not there, not
 * readable or another plan: OQ_OK with why (n bytes) saying so and *found 0. */
static oq_status plan_of(merge_ctx *m, const oq_validate_summary *s, int *found, char *why, size_t n, oq_err *err)
{
    oq_err e = {0};
    *found = 0;
    if (oq_shard_plan_read(m->outdir, &m->plan, &e)) {
        if (e.status == OQ_ERR_NOT_FOUND) snprintf(why, n, "is not there (the summary moved or copied without shards/?)");
        else snprintf(why, n, "cannot be read (%.500s)", e.msg);
        return OQ_OK;
    }
    if (strcmp(m->plan.hash, s->plan_hash)) {
        snprintf(why, n, "is plan %.16s, not this summary's %.16s (prepared again since?)", m->plan.hash, s->plan_hash);
        return OQ_OK;
    }
    *found = 1;
    oq_status st = plan_tolerances(m, err);
    if (!st) st = oq_shard_plan_outputs(m->outdir, m->plan.n_configs, &m->outputs, err);
    return st ? st : plan_batches(m, err);
}

static oq_status no_record(void *ctx, long which, json_t *record, oq_err *err)
{
    (void)ctx, (void)which, (void)record, (void)err;
    return OQ_OK;
}

/* Is the document at `path` a merged validate summary ("shards")? Read once without its records
 * (a bench or gate document, or one that is not JSON: no; its reader says what it is). */
static int is_merged(const char *path)
{
    oq_err e = {0};
    json_t *j = oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES | OQ_JSON_SCAN_SHARD_BATCHES, no_record, NULL, &e);
    const char *schema = json_string_value(json_object_get(j, "schema"));
    int merged = schema && !strcmp(schema, OQ_VALIDATE_SCHEMA) && json_is_object(json_object_get(j, "shards"));
    json_decref(j);
    return merged;
}

/* The merged summary read with its records spilled into a private scratch folder (tmp), then
 * held to its plan (plan_of, held_to_plan). */
static oq_status check_merged(merge_ctx *m, const char *path, char *tmp, char *unchecked, size_t n, oq_err *err)
{
    char prefix[4200];
    char **records = NULL;
    size_t n_records = 0;
    oq_validate_summary *s = NULL;
    oq_status st = mkdtemp(tmp) ? OQ_OK : oq_err_write(err, tmp, errno);
    if (st) return st;
    oq_scratch_hold(tmp);
    snprintf(prefix, sizeof prefix, "%s/r", tmp);
    st = oq_validate_summary_read_spilled(path, prefix, &s, &records, &n_records, &m->notes, err);
    int found = 0;
    char why[600] = "";
    if (!st) st = plan_of(m, s, &found, why, sizeof why, err);
    if (!st && found) st = held_to_plan(m, s, records, n_records, path, err);
    if (!st && !found)
        snprintf(unchecked, n, "%s is a merged summary, but its plan %s/shards/plan.json %s: the plan's tolerances, "
                 "padding rule and outputs were not checked against it", path, m->outdir, why);
    for (size_t k = 0; k < n_records; k++) free(records[k]);
    free(records);
    oq_validate_summary_free(s);
    oq_remove_tree(tmp);
    oq_output_release(tmp);
    return st;
}

oq_status oq_validate_merged_check(const char *path, char *unchecked, size_t n, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, unchecked);
    if (n) *unchecked = 0;
    if (!is_merged(path)) return OQ_OK;
    char dir[4096], tmp[] = P_tmpdir "/ortqual-check.XXXXXX";
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1, slash ? path : ".");
    merge_ctx m = {.outdir = dir, .verb = "draw", .what = "summary"};
    oq_status st = check_merged(&m, path, tmp, unchecked, n, err);
    plan_clear(&m);
    return st;
}
