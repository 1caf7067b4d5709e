/* The shards of one plan merged into one summary (ortqual/shard.h): per-batch figures are
 * copied as the shards measured them, statuses are combined the way one unsharded run would
 * have set them, and a shard that did not report makes the verdict fail. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "validate/validate-impl.h"

typedef struct merge_ctx {
    const char *outdir;
    json_t *plan;    /* shards/plan.json */
    json_t **shard;  /* N summaries; NULL for a shard that did not report */
    json_t *jobs;    /* slurm/jobs.json written by `ortqual slurm`, or NULL */
    oq_merge_result *res;
} merge_ctx;

static int32_t shard_count(const merge_ctx *m) { return (int32_t)json_integer_value(json_object_get(m->plan, "shards")); }

static const json_t *assigned(const merge_ctx *m, int32_t i, const char *what)
{
    return json_object_get(json_array_get(json_object_get(m->plan, "assignment"), (size_t)i), what);
}

static json_t *load(const char *path)
{
    json_error_t je;
    return access(path, F_OK) == 0 ? json_load_file(path, 0, &je) : NULL;
}

/* " (SLURM task 12_3, log D/slurm/shard-12_3.out)" when `ortqual slurm` submitted the shards. */
static void slurm_hint(const merge_ctx *m, int32_t i, char *buf, size_t n)
{
    const char *job = oq_json_str(m->jobs, "array_job_id", NULL);
    const char *log = json_string_value(json_array_get(json_object_get(m->jobs, "shard_logs"), (size_t)i));
    buf[0] = 0;
    if (job) snprintf(buf, n, " (SLURM task %s_%d%s%s)", job, (int)i, log ? ", log " : "", log ? log : "");
}

static void add_problem(merge_ctx *m, int32_t i, oq_shard_state state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_problem(merge_ctx *m, int32_t i, oq_shard_state state, const char *fmt, ...)
{
    oq_merge_result *r = m->res;
    oq_shard_problem *p = realloc(r->problems, (r->n_problems + 1) * sizeof *p);
    if (!p) return;
    r->problems = p;
    p += r->n_problems++;
    p->index = i;
    p->state = state;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
}

/* Why shard i has no summary: never started, stopped with an error record, or started and
 * ended without a word (killed, timed out, crashed). */
static void diagnose(merge_ctx *m, int32_t i, const char *dir)
{
    char path[4200], hint[1024];
    slurm_hint(m, i, hint, sizeof hint);
    snprintf(path, sizeof path, "%s/error.json", dir);
    json_t *e = load(path);
    snprintf(path, sizeof path, "%s/started.json", dir);
    json_t *s = e ? NULL : load(path);
    if (e) add_problem(m, i, OQ_SHARD_FAILED, "stopped before running: %s%s", oq_json_str(e, "error", "?"), hint);
    else if (s)
        add_problem(m, i, OQ_SHARD_UNFINISHED, "started on %s at %s (pid %lld) and wrote no summary: killed, timed "
                                               "out or crashed%s", oq_json_str(s, "host", "?"), oq_json_str(s, "start", "?"),
                    (long long)json_integer_value(json_object_get(s, "pid")), hint);
    else if (access(dir, F_OK) == 0)
        add_problem(m, i, OQ_SHARD_UNFINISHED, "%s exists but holds no record: it stopped while starting%s", dir, hint);
    else add_problem(m, i, OQ_SHARD_MISSING, "never started: no %s%s", dir, hint);
    json_decref(e);
    json_decref(s);
}

/* A summary from another plan or another split is refused: merging it would mix results. */
static oq_status check_shard(const merge_ctx *m, int32_t i, const json_t *s, const char *path, oq_err *err)
{
    const char *want = oq_json_str(json_object_get(m->plan, "plan"), "hash", "");
    const char *got = oq_json_str(json_object_get(s, "plan"), "hash", "");
    const json_t *blk = json_object_get(s, "shard");
    if (strcmp(oq_json_str(s, "schema", ""), OQ_VALIDATE_SCHEMA) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: not a validation summary (schema %s)", path, OQ_VALIDATE_SCHEMA);
    if (strcmp(want, got) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "shard %d (%s) ran plan %.16s, not the prepared plan %.16s: refusing "
                                              "to merge shards of different plans", (int)i, path, got, want);
    if (json_integer_value(json_object_get(blk, "index")) != i ||
        json_integer_value(json_object_get(blk, "count")) != shard_count(m))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: shard %lld of %lld, expected shard %d of %d", path,
                          (long long)json_integer_value(json_object_get(blk, "index")),
                          (long long)json_integer_value(json_object_get(blk, "count")), (int)i, (int)shard_count(m));
    return OQ_OK;
}

static oq_status read_shards(merge_ctx *m, oq_err *err)
{
    for (int32_t i = 0; i < shard_count(m); i++) {
        char dir[4096], path[4200];
        snprintf(dir, sizeof dir, "%s/shards/%d", m->outdir, (int)i);
        snprintf(path, sizeof path, "%s/summary.json", dir);
        json_error_t je;
        json_t *s = access(path, F_OK) == 0 ? json_load_file(path, 0, &je) : NULL;
        if (access(path, F_OK) == 0 && !s)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: line %d: %s", path, je.line, je.text);
        if (!s) {
            diagnose(m, i, dir);
            continue;
        }
        m->shard[i] = s;
        oq_status st = check_shard(m, i, s, path, err);
        if (st) return st;
    }
    return OQ_OK;
}

/* ---- one configuration from its shards ---------------------------------------------- */

/* The entries of configuration k, from the shards that ran it and reported; *incomplete when
 * a shard that ran part of it did not report. */
static size_t entries_of(const merge_ctx *m, size_t k, const json_t **out, int32_t *idx, int *incomplete)
{
    size_t n = 0;
    *incomplete = 0;
    for (int32_t i = 0; i < shard_count(m); i++) {
        size_t pos, has = 0;
        const json_t *c;
        json_array_foreach(assigned(m, i, "configs"), pos, c) if ((size_t)json_integer_value(c) == k) {
            has = 1;
            break;
        }
        if (!has) continue;
        if (!m->shard[i]) {
            /* by configuration every shard ran the reference on every batch: one report is whole */
            *incomplete |= k > 0 || !strcmp(oq_json_str(m->plan, "shard_by", ""), "batch");
            continue;
        }
        idx[n] = i;
        out[n++] = json_array_get(json_object_get(m->shard[i], "configs"), pos);
    }
    return n;
}

static void append_unique(json_t *into, const json_t *from)
{
    size_t i, j;
    const json_t *v, *w;
    json_array_foreach(from, i, v) {
        int seen = 0;
        json_array_foreach(into, j, w) seen |= json_equal(v, w);
        if (!seen) json_array_append(into, (json_t *)v);
    }
}

static void add_number(json_t *obj, const char *key, const json_t *from)
{
    double v = json_number_value(json_object_get(obj, key)) + json_number_value(json_object_get(from, key));
    json_object_set_new(obj, key, json_is_integer(json_object_get(obj, key)) ? json_integer((json_int_t)v) : json_real(v));
}

/* Sums "runs" and "us" of the items of `into` and `from` matched by `key` (per EP, per node). */
static void add_runs(json_t *into, const json_t *from, const char *key)
{
    size_t i, j;
    json_t *a;
    const json_t *b;
    json_array_foreach(into, i, a) json_array_foreach(from, j, b) {
        if (!json_equal(json_object_get(a, key), json_object_get(b, key))) continue;
        add_number(a, "runs", b);
        add_number(a, "us", b);
        break;
    }
}

/* Batches by index, first seen first kept (by configuration every shard ran the reference
 * on every batch; by batch the ranges do not overlap). */
static void merge_batches(json_t *into, const json_t *from)
{
    size_t i, j;
    const json_t *b, *have;
    json_array_foreach(from, i, b) {
        size_t at = json_array_size(into);
        json_int_t index = json_integer_value(json_object_get(b, "index"));
        int seen = 0;
        json_array_foreach(into, j, have) {
            json_int_t h = json_integer_value(json_object_get(have, "index"));
            seen |= h == index;
            if (h > index && at == json_array_size(into)) at = j;
        }
        if (!seen) json_array_insert(into, at, (json_t *)b);
    }
}

static void merge_checks(json_t *into, const json_t *from)
{
    json_t *d = json_object_get(into, "dispatch"), *p = json_object_get(into, "placement");
    const json_t *fd = json_object_get(from, "dispatch"), *fp = json_object_get(from, "placement");
    if (d && fd) {
        if (json_is_false(json_object_get(fd, "passed"))) json_object_set_new(d, "passed", json_false());
        /* every routing line, as one run would list them (shard order is batch order) */
        json_array_extend(json_object_get(d, "records"), json_object_get(fd, "records"));
        append_unique(json_object_get(d, "failures"), json_object_get(fd, "failures"));
        append_unique(json_object_get(d, "advice"), json_object_get(fd, "advice"));
    }
    if (p && fp) {
        if (json_is_false(json_object_get(fp, "passed"))) json_object_set_new(p, "passed", json_false());
        append_unique(json_object_get(p, "failures"), json_object_get(fp, "failures"));
        append_unique(json_object_get(p, "notes"), json_object_get(fp, "notes"));
        append_unique(json_object_get(p, "witness_errors"), json_object_get(fp, "witness_errors"));
        add_runs(json_object_get(p, "eps"), json_object_get(fp, "eps"), "ep");
        add_runs(json_object_get(p, "nodes"), json_object_get(fp, "nodes"), "name");
    }
    const json_t *teeth = json_object_get(from, "teeth");
    if (teeth && !json_is_true(json_object_get(teeth, "proved"))) json_object_set(into, "teeth", (json_t *)teeth);
}

/* Costs add up; memory is the largest any shard saw. */
static void merge_costs(json_t *into, const json_t *from)
{
    json_t *c = json_object_get(into, "cost"), *w = json_object_get(into, "worker");
    const char *key;
    json_t *v;
    json_object_foreach(c, key, v) {
        const json_t *f = json_object_get(json_object_get(from, "cost"), key);
        if (strstr(key, "_bytes")) {
            if (json_integer_value(f) > json_integer_value(v)) json_object_set(c, key, (json_t *)f);
        } else {
            add_number(c, key, json_object_get(from, "cost"));
        }
    }
    const json_t *fw = json_object_get(from, "worker");
    if (w && fw) {
        add_number(w, "seconds", fw);
        if (!strcmp(oq_json_str(w, "ended", ""), "exit 0") && strcmp(oq_json_str(fw, "ended", "exit 0"), "exit 0")) {
            json_object_set(w, "ended", json_object_get(fw, "ended"));
            json_object_set(w, "stderr_tail", json_object_get(fw, "stderr_tail"));
        }
    }
}

/* As one run would have ended: any failure fails, then not-run, then all skipped or all
 * passed; passed on some shards and skipped on others is an incomplete matrix: failed. */
static void merge_status(json_t *into, const json_t *const *e, const int32_t *idx, size_t n)
{
    static const char *const order[] = {"failed", "not-run"};
    for (size_t o = 0; o < 2; o++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(oq_json_str(e[i], "status", "failed"), order[o])) {
                json_object_set_new(into, "status", json_string(order[o]));
                json_object_set(into, "reason", json_object_get(e[i], "reason"));
                return;
            }
    for (size_t i = 1; i < n; i++)
        if (strcmp(oq_json_str(e[i], "status", ""), oq_json_str(e[0], "status", ""))) {
            char why[512];
            snprintf(why, sizeof why, "%s on shard %d (%s) but %s on shard %d: the matrix is incomplete",
                     oq_json_str(e[i], "status", ""), (int)idx[i], oq_json_str(e[i], "reason", ""),
                     oq_json_str(e[0], "status", ""), (int)idx[0]);
            json_object_set_new(into, "status", json_string("failed"));
            json_object_set_new(into, "reason", json_string(why));
            return;
        }
}

static json_t *merge_config(const json_t *const *e, const int32_t *idx, size_t n)
{
    json_t *c = json_deep_copy(e[0]), *per = json_array();
    for (size_t i = 0; i < n; i++) {
        if (i) {
            merge_batches(json_object_get(c, "batches"), json_object_get(e[i], "batches"));
            merge_checks(c, e[i]);
            merge_costs(c, e[i]);
        }
        json_array_append_new(per, json_pack("{s:i, s:s, s:O?, s:O?}", "index", idx[i], "status",
                                             oq_json_str(e[i], "status", "?"), "worker_seconds",
                                             json_object_get(json_object_get(e[i], "worker"), "seconds"),
                                             "session_create_s", json_object_get(e[i], "session_create_s")));
    }
    merge_status(c, e, idx, n);
    json_object_set_new(c, "shards", per);
    return c;
}

/* What an unsharded run writes for a configuration it never started. */
static json_t *not_run(const json_t *c, const char *reason)
{
    return json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:s, s:s}", "name", json_object_get(c, "name"), "runtime",
                     json_object_get(c, "runtime"), "representation", json_object_get(c, "representation"),
                     "precision", json_object_get(c, "precision"), "kernel", json_object_get(c, "kernel"),
                     "reference", json_object_get(c, "reference"), "status", "not-run", "reason", reason);
}

static void mark_incomplete(const merge_ctx *m, json_t *c, size_t k)
{
    char who[256] = "";
    for (size_t p = 0; p < m->res->n_problems; p++) {
        const json_t *v;
        size_t j;
        json_array_foreach(assigned(m, m->res->problems[p].index, "configs"), j, v) {
            if ((size_t)json_integer_value(v) != k) continue;
            size_t used = strlen(who);
            snprintf(who + used, sizeof who - used, "%s%d (%s)", used ? ", " : "", (int)m->res->problems[p].index,
                     oq_shard_state_name(m->res->problems[p].state));
        }
    }
    char why[512];
    snprintf(why, sizeof why, "incomplete: shard %s did not report", who);
    json_object_set_new(c, "status", json_string("failed"));
    json_object_set_new(c, "reason", json_string(why));
}

static json_t *merge_configs(const merge_ctx *m)
{
    const json_t *names = json_object_get(m->plan, "configs");
    size_t nc = json_array_size(names);
    const json_t **e = calloc((size_t)shard_count(m) + 1, sizeof *e);
    int32_t *idx = calloc((size_t)shard_count(m) + 1, sizeof *idx);
    json_t *out = json_array();
    int ref_ok = 1;
    for (size_t k = 0; k < nc; k++) {
        int incomplete;
        size_t n = entries_of(m, k, e, idx, &incomplete);
        json_t *c = n ? merge_config(e, idx, n)
                      : json_pack("{s:O, s:b, s:s}", "name", json_array_get(names, k), "reference", k == 0, "status", "failed");
        /* judged on what the shards reported: a missing shard is reported as such, not as a
         * reference that did not pass */
        if (k == 0) ref_ok = n && !strcmp(oq_json_str(c, "status", ""), "passed");
        if (k > 0 && !ref_ok) {
            json_t *nr = not_run(c, "the reference configuration did not pass");
            json_decref(c);
            c = nr;
        } else if (incomplete) {
            mark_incomplete(m, c, k);
        }
        json_array_append_new(out, c);
    }
    free(e);
    free(idx);
    return out;
}

/* ---- the merged summary -------------------------------------------------------------- */

static json_t *shards_block(const merge_ctx *m)
{
    json_t *reported = json_array(), *problems = json_array();
    for (int32_t i = 0; i < shard_count(m); i++) {
        const json_t *s = m->shard[i], *blk = json_object_get(s, "shard");
        if (s)
            json_array_append_new(reported, json_pack("{s:i, s:O?, s:O?, s:O?, s:O?, s:O?}", "index", i, "host",
                                                      json_object_get(blk, "host"), "start", json_object_get(s, "start"),
                                                      "end", json_object_get(s, "end"), "verdict",
                                                      json_object_get(s, "verdict"), "slurm", json_object_get(blk, "slurm")));
    }
    for (size_t p = 0; p < m->res->n_problems; p++)
        json_array_append_new(problems, json_pack("{s:i, s:s, s:s}", "index", m->res->problems[p].index, "state",
                                                  oq_shard_state_name(m->res->problems[p].state), "detail",
                                                  m->res->problems[p].detail));
    char t[32], host[256] = "";
    oq_iso_time(t, sizeof t);
    gethostname(host, sizeof host - 1);
    return json_pack("{s:i, s:O, s:o, s:o, s:{s:s, s:s}}", "count", shard_count(m), "by",
                     json_object_get(m->plan, "shard_by"), "reported", reported, "problems", problems, "merged",
                     "time", t, "host", host);
}

/* Earliest start and latest end of the shards that reported (ISO-8601 sorts as text). */
static void span(const merge_ctx *m, const char **start, const char **end)
{
    *start = *end = NULL;
    for (int32_t i = 0; i < shard_count(m); i++) {
        const char *s = oq_json_str(m->shard[i], "start", NULL), *e = oq_json_str(m->shard[i], "end", NULL);
        if (s && (!*start || strcmp(s, *start) < 0)) *start = s;
        if (e && (!*end || strcmp(e, *end) > 0)) *end = e;
    }
}

static json_t *first_evidence(const merge_ctx *m)
{
    for (int32_t i = 0; i < shard_count(m); i++)
        if (m->shard[i]) return json_object_get(m->shard[i], "evidence");
    return NULL;
}

static json_t *build(merge_ctx *m)
{
    const char *start, *end;
    span(m, &start, &end);
    json_t *configs = merge_configs(m);
    int failed = m->res->n_problems > 0;
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        const char *s = oq_json_str(c, "status", "failed");
        failed |= strcmp(s, "passed") && strcmp(s, "skipped");
    }
    m->res->exit_status = failed;
    return json_pack("{s:s, s:s?, s:s?, s:O?, s:O, s:o, s:O, s:o, s:s, s:i}", "schema", OQ_VALIDATE_SCHEMA, "start",
                     start, "end", end, "evidence", first_evidence(m), "plan", json_object_get(m->plan, "plan"),
                     "shards", shards_block(m), "batches", json_object_get(m->plan, "batches"), "configs", configs,
                     "verdict", failed ? "failed" : "passed", "exit_status", failed);
}

oq_status oq_validate_merge(const char *outdir, int plots, oq_merge_result *res, oq_err *err)
{
    memset(res, 0, sizeof *res);
    merge_ctx m = {.outdir = outdir, .res = res};
    oq_status st = oq_shard_plan_load(outdir, &m.plan, err);
    if (st) return st;
    res->shards = shard_count(&m);
    size_t assigned_n = json_array_size(json_object_get(m.plan, "assignment"));
    if (res->shards < 1 || assigned_n != (size_t)res->shards) {
        json_decref(m.plan);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s/shards/plan.json: %d shards but %zu assignments", outdir,
                          (int)res->shards, assigned_n);
    }
    snprintf(res->plan_hash, sizeof res->plan_hash, "%s", oq_json_str(json_object_get(m.plan, "plan"), "hash", ""));
    char path[4096];
    snprintf(path, sizeof path, "%s/slurm/jobs.json", outdir);
    m.jobs = load(path);
    m.shard = calloc((size_t)res->shards, sizeof *m.shard);
    st = read_shards(&m, err);
    json_t *summary = st ? NULL : build(&m);
    if (!st) {
        snprintf(path, sizeof path, "%s/validate.csv", outdir);
        st = oq_validate_write_csv(path, summary, err);
        if (!st && plots) oq_validate_plots(outdir, path, summary);
        snprintf(path, sizeof path, "%s/summary.json", outdir);
        if (!st) st = oq_json_write(path, summary, err);
    }
    json_decref(summary);
    for (int32_t i = 0; i < res->shards; i++) json_decref(m.shard[i]);
    free(m.shard);
    json_decref(m.jobs);
    json_decref(m.plan);
    return st;
}

void oq_merge_result_clear(oq_merge_result *res)
{
    free(res->problems);
    memset(res, 0, sizeof *res);
}
