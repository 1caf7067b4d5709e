/* A baseline: this run's timings against an earlier run's summary.json, row by row, under
 * limits on the ratio new/old of chosen statistics. The verdict reads the comparison
 * (verdict.c); the summary writes it (json.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench-impl.h"
#include "core/core-impl.h"
#include "csv/csv-impl.h"
#include "fileio/fileio-impl.h"
#include "inspect/modelfile-impl.h"
#include "ortqual/bench.h"
#include "ortqual/evidence.h"
#include "ortqual/fileio.h"
#include "runtime/sessioncfg-impl.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

static const char *const stat_names[OQ_BENCH_MAX_LIMITS] = {"p50", "p90", "p95", "p99", "p99.9", "max", "mean"};

/* One row of the baseline: its identity and, per statistic of stat_names, its value (NAN:
 * not timed there). */
typedef struct base_row {
    char *key; /* owned: identity() */
    int ort; /* an ONNX Runtime row (not the reference) */
    double stat[OQ_BENCH_MAX_LIMITS];
} base_row;

struct oq_bench_baseline {
    char file[4096], sha256[65], schema[32];
    char verdict[16];          /* its run's verdict ("" when it records none: schema /1) */
    char ort_library[4096];    /* the ONNX Runtime library it ran ("" unrecorded) */
    char ort_diff[4200];       /* oq_bench_baseline_ort_differs's last answer */
    int model;                     /* a --model sweep's (not the attention sweep's) */
    char model_path[4096], model_sha256[65]; /* its config.model and config.model_sha256 */
    oq_bench_machine machine;
    json_t *config; /* the baseline run's options; NULL when it has none */
    size_t n;
    base_row *rows;
};

static double stat_value(const oq_stats *s, const char *name)
{
    const double v[OQ_BENCH_MAX_LIMITS] = {s->p50, s->p90, s->p95, s->p99, s->p999, s->max, s->mean};
    for (int i = 0; i < OQ_BENCH_MAX_LIMITS; i++)
        if (!strcmp(name, stat_names[i])) return v[i];
    return NAN;
}

static int stat_index(const char *name)
{
    for (int i = 0; i < OQ_BENCH_MAX_LIMITS; i++)
        if (!strcmp(name, stat_names[i])) return i;
    return -1;
}

/* ---- limits ---------------------------------------------------------------------------- */

static oq_status limit_parse(const char *item, oq_bench_limits *out, oq_err *err)
{
    const char *eq = strchr(item, '=');
    char name[16];
    if (!eq || (size_t)(eq - item) >= sizeof name)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "slowdown limit '%s': want STAT=PCT (p50=10%%)", item);
    snprintf(name, sizeof name, "%.*s", (int)(eq - item), item);
    int k = stat_index(name);
    if (k < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "slowdown limit '%s': unknown statistic '%s' (want p50, p90, p95, p99, p99.9, max or mean)",
                          item, name);
    double pct = 0;
    const char *end = oq_text_real(eq + 1, &pct);
    if (!end || (*end == '%' && end[1]) || (*end && *end != '%') || !(pct >= 0) || !isfinite(pct))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "slowdown limit '%s': want a percentage >= 0 (10%%)", item);
    for (size_t i = 0; i < out->n; i++)
        if (!strcmp(out->limit[i].stat, stat_names[k]))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "slowdown limit '%s': %s is limited twice", item, name);
    out->limit[out->n++] = (oq_bench_limit){stat_names[k], pct};
    return OQ_OK;
}

oq_status oq_bench_limits_parse(const char *text, oq_bench_limits *out, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    char item[128];
    for (const char *s = text;; s++) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (len >= sizeof item)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "slowdown limit '%.40s...': too long", s);
        snprintf(item, sizeof item, "%.*s", (int)len, s);
        oq_status st = limit_parse(item, out, err);
        if (st) return st;
        if (!comma) return OQ_OK;
        s = comma;
    }
}

/* ---- a row's identity -------------------------------------------------------------------- */

/* The identity rows are matched by, whole (malloc'ed; NULL: out of memory): the row's, every
 * dimension in full (a fixed buffer cut long names' later dimensions off, and rows of two
 * shapes matched), and a model's SHA-256 (model_sha256, "" for the attention sweep, whose
 * generated model the row's own fields define), so that rows of two models never match. */
static char *identity(const oq_bench_row *r, const char *model_sha256)
{
    oq_dynbuf b = {0};
    oq_status st = oq_dynbuf_addf(&b, "%s batch=%lld seq_len=%lld %s %s io=%s h=%d/%d d=%d threads=%d inter_op=%d",
                                  r->variant.name, (long long)r->batch, (long long)r->seq_len,
                                  r->masked ? "masked" : "unmasked",
                                  r->static_shapes < 0 ? "-" : r->static_shapes ? "static" : "dynamic",
                                  oq_io_binding_name(r->io), r->heads, r->kv_heads, r->head_dim, r->threads,
                                  r->inter_op_threads);
    for (size_t i = 0; !st && i < r->n_dims; i++) /* escaped: "s 1=8" is one dimension, not two */
        st = oq_csv_dims_add(&b, " ", r->dims[i].name, (long long)r->dims[i].value);
    if (!st && *model_sha256) st = oq_dynbuf_addf(&b, " model=%.16s", model_sha256);
    if (st) {
        oq_dynbuf_clear(&b);
        return NULL;
    }
    return oq_dynbuf_take(&b, NULL);
}

int oq_bench_row_key(const oq_bench_row *r, char *buf, size_t n)
{
    char *key = r ? identity(r, "") : NULL;
    int len = key ? snprintf(buf, n, "%s", key) : r ? -1 : 0;
    if (!key && buf && n) *buf = '\0';
    free(key);
    return len;
}

/* ---- reading a baseline ---------------------------------------------------------------------- */

static int64_t int_of(json_t *o, const char *k, int64_t none)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : none;
}

static const char *str_of(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* The session config entries of a baseline's config, KEY: VALUE (an empty object for one
 * without them). */
static json_t *entries_of(const json_t *config)
{
    json_t *entries = json_object(), *pair;
    size_t i;
    json_array_foreach(json_object_get(config, "session_configs"), i, pair) {
        const char *key = json_string_value(json_array_get(pair, 0));
        if (key) json_object_set(entries, key, json_array_get(pair, 1));
    }
    return entries;
}

/* A baseline row's threads as ORT ran them: an older summary recorded the options even where a
 * session config entry set the count (the entries over them, as oq_session_threads_ran takes
 * them; a row recorded as run is the same again). The reference's are its own. */
static void threads_as_run(const oq_bench_baseline *b, json_t *j, oq_bench_row *r)
{
    r->threads = (int)int_of(j, "threads", 0);
    r->inter_op_threads = (int)int_of(j, "inter_op_threads", 0);
    if (!oq_config_uses_ort(&r->variant)) return;
    json_t *entries = entries_of(b->config);
    oq_session_threads t;
    oq_session_threads_as_run(r->threads, r->inter_op_threads, entries, &t);
    r->threads = t.intra;
    r->inter_op_threads = t.inter;
    json_decref(entries);
}

/* The fields of a summary row that make its identity, into a row oq_bench_row_key reads. */
static oq_status row_from_json(const oq_bench_baseline *b, size_t i, json_t *j, base_row *out, oq_err *err)
{
    oq_bench_row r;
    memset(&r, 0, sizeof r);
    const char *variant = str_of(j, "variant");
    if (!json_is_object(j) || !*variant || !json_is_integer(json_object_get(j, "batch")) ||
        !json_is_integer(json_object_get(j, "seq_len")) || !json_is_object(json_object_get(j, "stats_ms")))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: results[%zu]: not a bench row (variant, batch, seq_len, stats_ms)",
                          b->file, i);
    oq_err ignored = {0};
    if (oq_config_parse(variant, &r.variant, &ignored)) { /* a name of another version: as written */
        snprintf(r.variant.name, sizeof r.variant.name, "%s", variant);
        snprintf(r.variant.runtime, sizeof r.variant.runtime, "%.*s", (int)strcspn(variant, ":"), variant);
    }
    r.batch = int_of(j, "batch", 0);
    r.seq_len = int_of(j, "seq_len", 0);
    r.masked = json_is_true(json_object_get(j, "masked"));
    const char *shapes = str_of(j, "shapes");
    r.static_shapes = !*shapes ? -1 : !strcmp(shapes, "static");
    int io = oq_io_binding_parse(str_of(j, "io_binding"));
    r.io = io < 0 ? OQ_IO_AUTO : (oq_io_binding)io;
    r.heads = (int32_t)int_of(j, "heads", -1);
    r.kv_heads = (int32_t)int_of(j, "kv_heads", -1);
    r.head_dim = (int32_t)int_of(j, "head_dim", -1);
    threads_as_run(b, j, &r);
    json_t *dims = json_object_get(j, "dims");
    oq_bench_dimval dv[OQ_BENCH_MAX_DIMS];
    const char *name;
    json_t *val;
    r.dims = dv;
    json_object_foreach(dims, name, val) { /* cut, two points could read as one */
        if (r.n_dims == OQ_BENCH_MAX_DIMS || strlen(name) >= sizeof dv->name)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: results[%zu]: %s", b->file, i,
                              r.n_dims == OQ_BENCH_MAX_DIMS ? "more dimensions than a sweep has"
                                                            : "a dimension's name longer than a sweep takes");
        snprintf(dv[r.n_dims].name, sizeof dv[r.n_dims].name, "%s", name);
        dv[r.n_dims++].value = json_is_integer(val) ? (int64_t)json_integer_value(val) : -1;
    }
    if (!(out->key = identity(&r, b->model_sha256)))
        return oq_err_set(err, OQ_ERR_NOMEM, "%s: results[%zu]: out of memory", b->file, i);
    out->ort = oq_config_uses_ort(&r.variant);
    json_t *stats = json_object_get(j, "stats_ms");
    int timed = !strcmp(str_of(j, "status"), "ok") || json_array_size(json_object_get(j, "samples_ms")) > 0;
    for (int k = 0; k < OQ_BENCH_MAX_LIMITS; k++) {
        json_t *v = json_object_get(stats, stat_names[k]);
        out->stat[k] = timed && json_is_number(v) ? json_number_value(v) : NAN;
    }
    return OQ_OK;
}

/* The machine as the summary recorded it (system_json, oq_evidence's host and gpu). */
static void machine_from_json(json_t *system, oq_bench_machine *m)
{
    memset(m, 0, sizeof *m);
    json_t *ev = json_object_get(system, "evidence"), *host = json_object_get(ev, "host");
    snprintf(m->ort_version, sizeof m->ort_version, "%s", str_of(system, "ort_version"));
    snprintf(m->cpu_model, sizeof m->cpu_model, "%s", str_of(host, "cpu_model"));
    m->cpus = int_of(host, "cpus", 0);
    json_t *gpus = json_object_get(json_object_get(ev, "gpu"), "gpus"), *g;
    size_t i, used = 0;
    json_array_foreach(gpus, i, g) {
        if (used >= sizeof m->gpus) break;
        used += (size_t)snprintf(m->gpus + used, sizeof m->gpus - used, "%s%s", i ? ", " : "", str_of(g, "name"));
    }
}

/* Two ONNX Runtime rows of one identity make an ambiguous baseline: which one a row of this
 * run is compared with would be chance. */
static oq_status check_unique(const oq_bench_baseline *b, oq_err *err)
{
    for (size_t i = 0; i < b->n; i++)
        for (size_t j = i + 1; b->rows[i].ort && j < b->n; j++)
            if (b->rows[j].ort && !strcmp(b->rows[i].key, b->rows[j].key))
                return oq_err_set(err, OQ_ERR_FORMAT, "%s: results[%zu] and results[%zu] are one row (%s): an "
                                  "ambiguous baseline", b->file, i, j, b->rows[i].key);
    return OQ_OK;
}

static oq_status read_doc(oq_bench_baseline *b, json_t *doc, oq_err *err)
{
    const char *schema = str_of(doc, "schema");
    if (!json_is_object(doc) || (strcmp(schema, "ortqual.bench/1") && strcmp(schema, "ortqual.bench/2")))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: not a bench summary (schema '%.60s', want ortqual.bench/1 or /2)",
                          b->file, schema);
    snprintf(b->schema, sizeof b->schema, "%s", schema);
    json_t *results = json_object_get(doc, "results");
    if (!json_is_array(results)) return oq_err_set(err, OQ_ERR_FORMAT, "%s: no results array", b->file);
    machine_from_json(json_object_get(doc, "system"), &b->machine);
    snprintf(b->verdict, sizeof b->verdict, "%s", str_of(doc, "verdict"));
    snprintf(b->ort_library, sizeof b->ort_library, "%s", str_of(json_object_get(doc, "system"), "ort_library"));
    json_t *config = json_object_get(doc, "config");
    b->model = !strcmp(str_of(doc, "mode"), "model") || json_is_string(json_object_get(config, "model"));
    snprintf(b->model_path, sizeof b->model_path, "%s", str_of(config, "model"));
    snprintf(b->model_sha256, sizeof b->model_sha256, "%s", str_of(config, "model_sha256"));
    b->config = json_is_object(config) ? json_incref(config) : NULL; /* the rows' threads read its entries */
    b->rows = calloc(json_array_size(results) + 1, sizeof *b->rows);
    if (!b->rows) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", b->file);
    for (size_t i = 0; i < json_array_size(results); i++, b->n++) {
        oq_status st = row_from_json(b, i, json_array_get(results, i), &b->rows[i], err);
        if (st) return st;
    }
    return check_unique(b, err);
}

oq_status oq_bench_baseline_read(const char *path, oq_bench_baseline **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    *out = NULL;
    oq_bench_baseline *b = calloc(1, sizeof *b);
    if (!b) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    snprintf(b->file, sizeof b->file, "%s", path);
    unsigned char *text = NULL;
    size_t n = 0;
    oq_status st = oq_read_file(path, &text, &n, err);
    json_t *doc = st ? NULL : oq_json_parse((const char *)text, n, path, err);
    if (!st && !doc) st = OQ_ERR_FORMAT;
    if (!st) {
        oq_sha256_buf(text, n, b->sha256);
        st = read_doc(b, doc, err);
    }
    json_decref(doc);
    free(text);
    if (st) {
        oq_bench_baseline_free(b);
        return st;
    }
    *out = b;
    return OQ_OK;
}

void oq_bench_baseline_free(oq_bench_baseline *b)
{
    if (!b) return;
    json_decref(b->config);
    for (size_t i = 0; b->rows && i < b->n; i++) free(b->rows[i].key);
    free(b->rows);
    free(b);
}

/* ---- the model ----------------------------------------------------------------------------- */

/* The model's identity as the sweep takes it (oq_model_file_read: external data included). */
static oq_status model_sha256_of(const char *path, char sha[65], oq_err *err)
{
    oq_model_file m;
    oq_status st = oq_model_file_read(path, &m, err);
    if (st) return st;
    if (!m.sha256[0]) st = oq_err_set(err, OQ_ERR_IO, "%s: its identity is not known: %s", path, m.unhashed.msg);
    snprintf(sha, 65, "%s", m.sha256);
    oq_model_file_clear(&m);
    return st;
}

oq_status oq_bench_baseline_check_model(const oq_bench_baseline *b, const oq_bench_opts *o, oq_err *err)
{
    OQ_NEED(err, b);
    OQ_NEED(err, o);
    if (!o->model_path != !b->model)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s, and this run is %s", b->file,
                          b->model ? "a model's timings" : "the attention sweep's timings",
                          o->model_path ? "a model's" : "the attention sweep");
    if (!o->model_path) return OQ_OK; /* the generated model: each row's identity holds what makes it */
    if (!b->model_sha256[0])
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: records no model_sha256 for its model '%s', so it cannot be "
                          "told to be this one", b->file, b->model_path);
    char here[65];
    oq_status st = model_sha256_of(o->model_path, here, err);
    if (st) return st;
    if (strcmp(here, b->model_sha256))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: another model: sha256 %.12s (%s) in the baseline, %.12s (%s) here",
                          b->file, b->model_sha256, b->model_path, here, o->model_path);
    return OQ_OK;
}

/* ---- the machine --------------------------------------------------------------------------- */

oq_status oq_bench_machine_probe(oq_runtime *rt, oq_bench_machine *out, oq_err *err)
{
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    if (rt) snprintf(out->ort_version, sizeof out->ort_version, "%s", oq_runtime_version(rt));
    oq_host h = {0};
    oq_status st = oq_host_probe(&h, err);
    if (st) return st;
    snprintf(out->cpu_model, sizeof out->cpu_model, "%s", h.cpu_model ? h.cpu_model : "");
    out->cpus = h.n_cpus;
    oq_host_clear(&h);
    oq_gpu_facts *g = NULL;
    oq_err ignored = {0};
    size_t used = 0;
    if (oq_gpu_facts_probe(&g, &ignored) == OQ_OK) /* no GPU stack: no GPU, as the summary says */
        for (size_t i = 0; i < g->n_gpus && used < sizeof out->gpus; i++)
            used += (size_t)snprintf(out->gpus + used, sizeof out->gpus - used, "%s%s", i ? ", " : "",
                                     g->gpus[i].name ? g->gpus[i].name : "");
    oq_gpu_facts_free(g);
    return OQ_OK;
}

void oq_bench_baseline_machine(const oq_bench_baseline *b, oq_bench_machine *out)
{
    if (!out) return;
    if (b) *out = b->machine;
    else memset(out, 0, sizeof *out);
}

int oq_bench_machine_differs(const oq_bench_machine *a, const oq_bench_machine *b, char *diff, size_t n)
{
    if (!a || !b) return 0; /* nothing to compare: nothing said */
    const char *what = NULL, *x = NULL, *y = NULL;
    char ca[32], cb[32];
    snprintf(ca, sizeof ca, "%lld", (long long)a->cpus);
    snprintf(cb, sizeof cb, "%lld", (long long)b->cpus);
    if (strcmp(a->ort_version, b->ort_version)) what = "ONNX Runtime version", x = a->ort_version, y = b->ort_version;
    else if (strcmp(a->cpu_model, b->cpu_model)) what = "CPU model", x = a->cpu_model, y = b->cpu_model;
    else if (a->cpus != b->cpus) what = "CPU count", x = ca, y = cb;
    else if (strcmp(a->gpus, b->gpus)) what = "GPUs", x = a->gpus, y = b->gpus;
    if (!what) {
        if (diff && n) *diff = '\0';
        return 0;
    }
    if (diff && n && !strcmp(what, "GPUs") && (!*x || !*y)) /* evidence's gpus [] is none, not unknown */
        snprintf(diff, n, *x ? "GPUs '%.150s' here, no GPU in the baseline" : "no GPU here, GPUs '%.150s' in the baseline",
                 *x ? x : y);
    else if (diff && n)
        snprintf(diff, n, "%s '%.150s' here, '%.150s' in the baseline", what, *x ? x : "unknown",
                 *y ? y : "unknown");
    return 1;
}

const char *oq_bench_baseline_ort_differs(oq_bench_baseline *b, oq_runtime *rt)
{
    if (!b) return "";
    const char *lib = rt ? oq_runtime_lib_path(rt) : "";
    b->ort_diff[0] = '\0';
    if (rt && *b->ort_library && !strcmp(b->machine.ort_version, oq_runtime_version(rt)) && strcmp(lib, b->ort_library))
        snprintf(b->ort_diff, sizeof b->ort_diff, "another ONNX Runtime library of version %.32s: %.2000s here, "
                 "%.2000s in the baseline", b->machine.ort_version, lib, b->ort_library);
    return b->ort_diff;
}

/* ---- the options that change the measurement ------------------------------------------------ */

/* The `config` keys whose value changes what a sample times or the work it does (the option
 * that sets each, as messages name it): two runs that differ in one measure different things.
 * The rest is in each row's identity (variant and so the EP, shapes and every dimension the
 * model names, --shape's sizes included, threads, io binding, heads; model_sha256 is checked
 * apart) or does not change a sample: iters, the
 * outdir, expected and tolerances (the first run's outputs, untimed), profile_runs (a session
 * of its own after the timed runs), the reference's options (its rows are never compared),
 * how the mask was found (mask_source, mask_why, mask_note). */
static const char *const measured[][2] = {
    {"include_session", "opts.include_session"}, {"warmup", "opts.warmup"},
    {"length_policy", "opts.length_policy"},     {"mask_fraction", "opts.mask_fraction"},
    {"seed", "opts.seed"},                       {"int_range", "opts.int_lo,int_hi"},
    {"graph_opt_level", "opts.graph_opt"},       {"session_configs", "opts.session_configs"},
    {"ep_options", "opts.ep_options"},           {"mem_sample_us", "opts.mem_sample_us"},
    {"inputs_sha256", "opts.inputs_path"},       {"mask_input", "opts.mask_input"},
    {"mask_polarity", "opts.mask_polarity"},     {"execution_mode", ""},
};

/* The mask a model's rows will be generated with, where the options alone tell it (the sweep
 * finds the rest in the model: oq_bench_compare checks the mask it took): an input named, and a
 * polarity given, unless the baseline's came from the model's contract, which the same model
 * keeps (a polarity given against it is refused by the sweep). */
static void mask_of_options(const oq_bench_baseline *b, const oq_bench_opts *o, json_t *here)
{
    if (!o->model_path) return;
    if (o->mask_input) json_object_set_new(here, "mask_input", json_string(o->mask_input));
    int given = (o->given & OQ_BENCH_GIVEN_MASK_POLARITY) || o->mask_polarity != OQ_MASK_POLARITY_KEEP;
    if (given && strcmp(str_of(b->config, "mask_polarity_source"), "contract"))
        json_object_set_new(here, "mask_polarity", json_string(oq_mask_polarity_name(o->mask_polarity)));
}

/* The mask the sweep took (rows->mask_input, "" none, and its polarity) against the baseline's
 * config: another input or polarity is another measurement, as another mask fraction is. A
 * baseline that records none (the attention sweep's, or older) is not compared. */
static oq_status mask_differs(const oq_bench_baseline *b, const oq_bench_rows *rows, oq_err *err)
{
    json_t *in = json_object_get(b->config, "mask_input"), *pol = json_object_get(b->config, "mask_polarity");
    if (!b->model || !in || !pol) return OQ_OK;
    const char *there = json_is_string(in) ? json_string_value(in) : "";
    const char *there_pol = json_is_string(pol) ? json_string_value(pol) : "";
    const char *here_pol = *rows->mask_input ? oq_mask_polarity_name(rows->mask_polarity) : "";
    if (strcmp(rows->mask_input, there))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: another measurement: the mask input %s%s%s here, %s%s%s in the "
                          "baseline", b->file, *rows->mask_input ? "'" : "", *rows->mask_input ? rows->mask_input : "none",
                          *rows->mask_input ? "'" : "", *there ? "'" : "", *there ? there : "none", *there ? "'" : "");
    if (strcmp(here_pol, there_pol))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: another measurement: the mask polarity %s here, %s in the "
                          "baseline", b->file, here_pol, there_pol);
    return OQ_OK;
}

/* What set the graph optimization level of `config` (its graph_opt_level_from), in the caller's
 * terms: an entry over the option's level, or the option; "" where it does not say (ORT's
 * default, an older summary). */
static void level_source(json_t *config, char *buf, size_t n)
{
    const char *from = str_of(config, "graph_opt_level_from");
    json_t *option = json_object_get(config, "graph_opt_option");
    char words[64], over[64];
    *buf = '\0';
    if (!strcmp(from, "session_config") && json_is_integer(option) && json_integer_value(option) >= 0)
        snprintf(buf, n, "%s%s, %s %lld)", oq_terms("(from session config ", words, sizeof words),
                 OQ_SESSION_CONFIG_LEVEL_KEY, oq_terms("over opts.graph_opt", over, sizeof over),
                 (long long)json_integer_value(option));
    else if (!strcmp(from, "session_config"))
        snprintf(buf, n, "%s%s)", oq_terms("(from session config ", words, sizeof words), OQ_SESSION_CONFIG_LEVEL_KEY);
    else if (!strcmp(from, "option"))
        snprintf(buf, n, "%s)", oq_terms("(from opts.graph_opt", words, sizeof words));
}

/* A measured value as a message shows it: the inputs file by its path and its hash's start, the
 * graph level with what set it. */
static void value_text(json_t *config, const char *key, char *buf, size_t n)
{
    json_t *v = json_object_get(config, key);
    if (!strcmp(key, "inputs_sha256") && json_is_string(v)) {
        snprintf(buf, n, "%.80s (sha256 %.12s)", str_of(config, "inputs"), json_string_value(v));
        return;
    }
    char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(9)) : NULL, source[160] = "";
    if (!strcmp(key, "graph_opt_level")) level_source(config, source, sizeof source);
    if (!strcmp(key, "execution_mode") && !strcmp(str_of(config, "execution_mode_from"), "session_config"))
        snprintf(source, sizeof source, "(from session config session.execution_mode)");
    snprintf(buf, n, "%s%s%s", t ? t : "none", *source ? " " : "", source);
    free(t);
}

/* A copy of `config` with its session as ORT runs it, for a timing (oq_session_as_run, as a replay
 * compares sessions for outputs): graph_opt_level the level ORT runs (its default as 99, a
 * session.graph_optimization_level entry in place of the option) and session_configs an object
 * without that entry and without the entries that cannot change a timing (the log id; spinning,
 * profiling and logging can). A config lacking either key (an older one) is copied as it is. */
static json_t *timed_session(const json_t *config)
{
    json_t *c = json_deep_copy(config), *entries = entries_of(config);
    const json_t *g = json_object_get(c, "graph_opt_level"), *sc = json_object_get(c, "session_configs");
    if (!c || !entries || !json_is_integer(g) || !json_is_array(sc)) {
        json_decref(entries);
        return c;
    }
    int level = oq_session_as_run((int)json_integer_value(g), entries, OQ_SESSION_SAME_TIMING);
    json_object_set_new(c, "graph_opt_level", json_integer(level));
    /* the threads and mode as ORT runs them, their entries in the options' place (the counts are
     * in each row's identity; an older config lacks execution_mode) */
    oq_session_threads t;
    oq_session_threads_as_run((int)int_of(c, "threads", 0), (int)int_of(c, "inter_op_threads", 0), entries, &t);
    json_object_set_new(c, "execution_mode", json_string(t.parallel ? "parallel" : "sequential"));
    json_object_set_new(c, "session_configs", entries);
    return c;
}

oq_status oq_bench_config_differs(const oq_bench_baseline *b, const oq_bench_opts *o, char *diff, size_t n,
                                  oq_err *err)
{
    OQ_NEED(err, b);
    OQ_NEED(err, o);
    OQ_NEED(err, diff);
    if (!n) return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_bench_config_differs: no room for the difference");
    *diff = '\0';
    json_t *given = NULL;
    oq_status st = b->config ? oq_bench_config_json(o, &given, err) : OQ_OK; /* none: nothing to compare */
    if (given) mask_of_options(b, o, given);
    json_t *here = given ? timed_session(given) : NULL, *there = here ? timed_session(b->config) : NULL;
    if (given && (!here || !there)) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && here && i < sizeof measured / sizeof *measured; i++) {
        json_t *x = json_object_get(here, measured[i][0]), *y = json_object_get(there, measured[i][0]);
        if (!x || !y || json_equal(x, y)) continue; /* a key one side lacks (a model run, an older one) */
        char vx[256], vy[256], opt[64];
        value_text(here, measured[i][0], vx, sizeof vx);
        value_text(there, measured[i][0], vy, sizeof vy);
        /* the level and the mode, not the option: an entry may have set them */
        const char *what = !strcmp(measured[i][0], "graph_opt_level") ? "the graph optimization level"
                           : !strcmp(measured[i][0], "execution_mode") ? "ORT's execution mode"
                                                                        : oq_terms(measured[i][1], opt, sizeof opt);
        snprintf(diff, n, "%s %s here, %s in the baseline", what, vx, vy);
        break;
    }
    json_decref(given);
    json_decref(here);
    json_decref(there);
    return st;
}

/* ---- the comparison ------------------------------------------------------------------------ */

const char *oq_bench_match_name(oq_bench_match m)
{
    static const char *const names[] = {"ok", "regressed", "untimed", "new", "missing"};
    return (unsigned)m < sizeof names / sizeof *names ? names[m] : "unknown";
}

/* The first baseline row of that identity not matched yet (used[i]), or -1. */
static long find(const oq_bench_baseline *b, const unsigned char *used, const char *key)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->rows[i].ort && !used[i] && !strcmp(b->rows[i].key, key)) return (long)i;
    return -1;
}

const char *oq_bench_ratio_why(const oq_bench_row_ratio *e, size_t k)
{
    if (!e || k >= OQ_BENCH_MAX_LIMITS || e->match == OQ_BENCH_MATCH_NEW || e->match == OQ_BENCH_MATCH_MISSING ||
        !isnan(e->ratio[k]))
        return NULL;
    if (isnan(e->old_ms[k])) return "absent in the baseline";
    if (!(e->old_ms[k] > 0) || !isfinite(e->old_ms[k])) return "not a positive time in the baseline";
    return "not timed here";
}

/* A matched row: per limit old, new and their ratio, where both are times (a statistic 0 or
 * absent on one side is not compared: oq_bench_ratio_why). Any ratio above 1 + pct/100
 * regresses the row, whatever the other statistics; a row with no limited statistic compared
 * is untimed, never ok. */
static void judge(oq_bench_row_ratio *e, const oq_bench_row *r, const base_row *old, const oq_bench_limits *lim)
{
    size_t compared = 0, over = 0;
    for (size_t k = 0; k < lim->n; k++) {
        e->old_ms[k] = old->stat[stat_index(lim->limit[k].stat)];
        e->new_ms[k] = r->n_samples ? stat_value(&r->stats, lim->limit[k].stat) : NAN;
        if (!(e->old_ms[k] > 0) || !isfinite(e->old_ms[k]) || !isfinite(e->new_ms[k])) continue;
        e->ratio[k] = e->new_ms[k] / e->old_ms[k];
        compared++;
        over += e->ratio[k] > 1 + lim->limit[k].pct / 100;
    }
    e->match = over ? OQ_BENCH_MATCH_REGRESSED : compared ? OQ_BENCH_MATCH_OK : OQ_BENCH_MATCH_UNTIMED;
}

static void count(oq_bench_comparison *c, oq_bench_match m)
{
    size_t *n[] = {&c->compared, &c->regressed, &c->untimed, &c->added, &c->missing};
    (*n[m])++;
    c->compared += m == OQ_BENCH_MATCH_REGRESSED;
}

/* The next entry, `key` its own copy (NULL: out of memory). */
static oq_bench_row_ratio *entry(oq_bench_comparison *c, const char *key, size_t row)
{
    char *whole = strdup(key);
    if (!whole) return NULL;
    c->keys[c->n] = whole;
    oq_bench_row_ratio *e = &c->entries[c->n++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->row = row;
    for (int k = 0; k < OQ_BENCH_MAX_LIMITS; k++) e->old_ms[k] = e->new_ms[k] = e->ratio[k] = NAN;
    return e;
}

static oq_status compare_rows(oq_bench_comparison *c, const oq_bench_rows *rows, const oq_bench_baseline *b,
                              unsigned char *used, oq_err *err)
{
    for (size_t i = 0; i < rows->n; i++) {
        const oq_bench_row *r = &rows->rows[i];
        if (!oq_config_uses_ort(&r->variant)) continue;
        char *key = identity(r, rows->model_sha256);
        oq_bench_row_ratio *e = key ? entry(c, key, i) : NULL;
        long old = e ? find(b, used, key) : -1;
        free(key);
        if (!e) return oq_err_set(err, OQ_ERR_NOMEM, "comparison with %s: out of memory", b->file);
        if (old >= 0) {
            used[old] = 1;
            judge(e, r, &b->rows[old], &c->limits);
        } else {
            e->match = OQ_BENCH_MATCH_NEW;
        }
        count(c, e->match);
    }
    for (size_t i = 0; i < b->n; i++)
        if (b->rows[i].ort && !used[i]) {
            oq_bench_row_ratio *e = entry(c, b->rows[i].key, (size_t)-1);
            if (!e) return oq_err_set(err, OQ_ERR_NOMEM, "comparison with %s: out of memory", b->file);
            e->match = OQ_BENCH_MATCH_MISSING;
            count(c, OQ_BENCH_MATCH_MISSING);
        }
    return OQ_OK;
}

oq_status oq_bench_compare(oq_bench_rows *rows, const oq_bench_baseline *b, const oq_bench_limits *limits,
                           const char *host_diff, oq_err *err)
{
    OQ_NEED(err, rows);
    OQ_NEED(err, b);
    OQ_NEED(err, limits);
    if (!limits->n || limits->n > OQ_BENCH_MAX_LIMITS)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_bench_compare: %zu limits (want 1 to %d)", limits->n,
                          OQ_BENCH_MAX_LIMITS);
    for (size_t k = 0; k < limits->n; k++)
        if (!limits->limit[k].stat || stat_index(limits->limit[k].stat) < 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_bench_compare: limit %zu: unknown statistic", k);
    oq_status st = mask_differs(b, rows, err);
    if (st) return st;
    oq_bench_comparison *c = calloc(1, sizeof *c);
    unsigned char *used = calloc(b->n + 1, 1);
    if (c) c->entries = calloc(rows->n + b->n + 1, sizeof *c->entries);
    if (c) c->keys = calloc(rows->n + b->n + 1, sizeof *c->keys);
    if (!c || !c->entries || !c->keys || !used) {
        oq_bench_comparison_free(c);
        free(used);
        return oq_err_set(err, OQ_ERR_NOMEM, "comparison with %s: out of memory", b->file);
    }
    snprintf(c->file, sizeof c->file, "%s", b->file);
    memcpy(c->sha256, b->sha256, sizeof c->sha256);
    snprintf(c->schema, sizeof c->schema, "%s", b->schema);
    snprintf(c->verdict, sizeof c->verdict, "%s", b->verdict);
    snprintf(c->ort_diff, sizeof c->ort_diff, "%s", b->ort_diff);
    c->limits = *limits;
    c->any_host = host_diff && *host_diff;
    snprintf(c->host_diff, sizeof c->host_diff, "%s", host_diff ? host_diff : "");
    st = compare_rows(c, rows, b, used, err);
    free(used);
    if (st) {
        oq_bench_comparison_free(c);
        return st;
    }
    oq_bench_comparison_free(rows->baseline);
    rows->baseline = c;
    return OQ_OK;
}

void oq_bench_comparison_free(oq_bench_comparison *c)
{
    if (!c) return;
    for (size_t i = 0; c->keys && i < c->n; i++) free(c->keys[i]);
    free(c->keys);
    free(c->entries);
    free(c);
}
