/* The worker: one configuration over every batch of a plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/bench.h"
#include "ortqual/compare.h"
#include "ortqual/mask.h"
#include "ortqual/npz.h"
#include "ortqual/runtime.h"
#include "evidence/evidence-impl.h"
#include "validate/validate-impl.h"

typedef struct worker {
    const json_t *plan;
    oq_config cfg;
    oq_runtime *rt;
    oq_session *sess;
    oq_ref_model *ref; /* instead of a session for ref:* configs */
    oq_wcheck chk;     /* dispatch and placement proofs */
    oq_tolerances *tols;
    int repeat, warmup, is_ref;
    char workdir[2048];
    json_t *result;  /* what we write */
    json_t *batches; /* result.batches */
    int all_passed;
    /* where the worker's time went, for bench/validate_cost */
    double t_session, t_run, t_compare, t_io;
    uint64_t rss_after_session; /* bytes: the session as created */
    uint64_t rss_after_first;   /* bytes: the session and its arena after its first Run */
    uint64_t rss_start;         /* bytes: the process before any work (code, libraries) */
    int64_t max_batch_bytes;    /* largest batch's inputs + outputs */
} worker;

/* Inputs of one batch, named as the model expects. */
static oq_status load_inputs(worker *w, const char *path, oq_tensor ***inputs, size_t *n,
                             int64_t **lengths, int64_t *batch, oq_err *err)
{
    oq_npz *z;
    oq_status st = oq_npz_read(path, &z, err);
    if (st) return st;
    const json_t *map = json_object_get(w->plan, "inputs");
    *n = json_object_size(map);
    *inputs = calloc(*n ? *n : 1, sizeof **inputs);
    const char *name;
    const json_t *member;
    size_t i = 0;
    json_object_foreach((json_t *)map, name, member) {
        if ((st = oq_npz_take(z, json_string_value(member), &(*inputs)[i], err))) break;
        if ((st = oq_tensor_set_name((*inputs)[i++], name, err))) break;
    }
    const oq_tensor *mask = NULL;
    const char *mask_member = oq_json_str(w->plan, "mask_member", "mask");
    for (size_t k = 0; !st && k < i; k++)
        if (!strcmp(json_string_value(json_object_get(map, (*inputs)[k]->name)), mask_member))
            mask = (*inputs)[k];
    if (!st && !mask) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: no mask member '%s'", path, mask_member);
    if (!st) {
        *batch = mask->shape[0];
        *lengths = calloc((size_t)*batch, sizeof **lengths);
        st = oq_mask_check(mask, NULL, *lengths, err);
        if (st) oq_err_prefix(err, "%s: ", path);
    }
    oq_npz_free(z);
    if (st) {
        oq_tensors_free(*inputs, i);
        *inputs = NULL;
    }
    return st;
}

static oq_status run_once(worker *w, oq_tensor *const *in, size_t n_in, oq_tensor ***out,
                          size_t *n_out, double *secs, oq_err *err)
{
    double t0 = oq_now_s();
    oq_status st = w->ref ? oq_ref_model_run(w->ref, in, n_in, out, n_out, err)
                       : oq_session_run(w->sess, n_in, in, n_out, out, err);
    *secs = oq_now_s() - t0;
    return st;
}

/* First call, warm-up, then `repeat` timed calls; keeps the first call's outputs. */
static oq_status time_batch(worker *w, oq_tensor *const *in, size_t n_in, oq_tensor ***out,
                            size_t *n_out, json_t *jb, oq_err *err)
{
    double first, t, t0 = oq_now_s();
    oq_status st = run_once(w, in, n_in, out, n_out, &first, err);
    if (st) return st;
    int reps = w->repeat > 0 ? w->repeat : 0;
    double *samples = calloc((size_t)reps + 1, sizeof *samples);
    for (int i = 0; !st && i < w->warmup + reps; i++) {
        oq_tensor **o2 = NULL;
        size_t n2 = 0;
        st = run_once(w, in, n_in, &o2, &n2, &t, err);
        oq_tensors_free(o2, n2);
        if (i >= w->warmup) samples[i - w->warmup] = t;
    }
    w->t_run += oq_now_s() - t0;
    if (!w->rss_after_first) {
        uint64_t hwm;
        oq_proc_memory(&w->rss_after_first, &hwm, NULL);
    }
    json_object_set_new(jb, "first_call_s", json_real(first));
    json_object_set_new(jb, "repeat", json_integer(reps));
    json_object_set_new(jb, "warmup", json_integer(w->warmup));
    oq_bench_stats stats;
    int have = reps && oq_bench_stats_compute(samples, (size_t)reps, &stats, NULL) == OQ_OK;
    json_object_set_new(jb, "median_s", have ? json_real(stats.p50) : json_null());
    free(samples);
    return st;
}

/* Compares every reference output with ours; appends per-output records. */
static oq_status compare_outputs(worker *w, const char *ref_path, oq_tensor **outs, size_t n_out,
                                 const int64_t *lengths, json_t *jb, oq_err *err)
{
    oq_npz *ref;
    oq_status st = oq_npz_read(ref_path, &ref, err);
    if (st) return st;
    json_t *jouts = json_array();
    int batch_ok = 1;
    for (size_t i = 0; !st && i < ref->count; i++) {
        const oq_tensor *r = ref->tensors[i];
        const oq_tensor *o = oq_tensors_find((const oq_tensor *const *)outs, n_out, r->name);
        if (!o) {
            st = oq_err_set(err, OQ_ERR_SHAPE, "config %s has no output '%s' (the reference has)",
                            w->cfg.name, r->name);
            break;
        }
        oq_compare_opts co = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
        co.tol = oq_tolerances_get(w->tols, r->name);
        co.lengths = lengths;
        oq_compare_result res;
        json_t *jr = NULL;
        if ((st = oq_compare_tensors(o, r, &co, &res, err))) break;
        if ((st = oq_compare_result_to_json(&res, &jr, err))) break;
        json_object_set_new(jr, "output", json_string(r->name));
        json_array_append_new(jouts, jr);
        if (!res.passed && !json_object_get(w->result, "reason")) {
            char line[512];
            json_object_set_new(w->result, "reason",
                                json_sprintf("batch %lld, output %s",
                                             (long long)json_integer_value(json_object_get(jb, "index")),
                                             oq_compare_result_str(&res, line, sizeof line)));
        }
        batch_ok &= res.passed;
    }
    oq_npz_free(ref);
    json_object_set_new(jb, "outputs", jouts);
    json_object_set_new(jb, "passed", json_boolean(batch_ok));
    w->all_passed &= batch_ok;
    return st;
}

static oq_status save_outputs(const char *path, oq_tensor **outs, size_t n, oq_err *err)
{
    return oq_npz_write(path, n, (const oq_tensor *const *)outs, 1, 1, err);
}

static oq_status run_batch(worker *w, const json_t *jplan_batch, oq_err *err)
{
    oq_tensor **in = NULL, **out = NULL;
    size_t n_in = 0, n_out = 0;
    int64_t *lengths = NULL, bsz = 0;
    const char *in_path = oq_json_str(jplan_batch, "inputs", "");
    double t0 = oq_now_s();
    oq_status st = load_inputs(w, in_path, &in, &n_in, &lengths, &bsz, err);
    w->t_io += oq_now_s() - t0;
    json_t *jb = json_object();
    json_object_set(jb, "index", json_object_get(jplan_batch, "index"));
    if (!st) st = time_batch(w, in, n_in, &out, &n_out, jb, err);
    const char *ref = oq_json_str(jplan_batch, "ref", NULL);
    const char *save = oq_json_str(jplan_batch, "save", NULL);
    t0 = oq_now_s();
    if (!st && w->is_ref) st = save_outputs(ref, out, n_out, err);
    if (!st && save) st = save_outputs(save, out, n_out, err);
    w->t_io += oq_now_s() - t0;
    t0 = oq_now_s();
    if (!st && !w->is_ref) st = compare_outputs(w, ref, out, n_out, lengths, jb, err);
    w->t_compare += oq_now_s() - t0; /* includes reading the reference outputs */
    int64_t bytes = 0;
    for (size_t i = 0; i < n_in; i++) bytes += (int64_t)oq_tensor_nbytes(in[i]);
    for (size_t i = 0; i < n_out; i++) bytes += (int64_t)oq_tensor_nbytes(out[i]);
    if (bytes > w->max_batch_bytes) w->max_batch_bytes = bytes;
    json_array_append_new(w->batches, jb);
    oq_tensors_free(in, n_in);
    oq_tensors_free(out, n_out);
    free(lengths);
    return st;
}

static json_t *ep_devices_json(oq_runtime *rt)
{
    oq_ep_device *devs = NULL;
    size_t n = 0;
    json_t *jd = json_array();
    if (oq_runtime_ep_devices(rt, &devs, &n, NULL) != OQ_OK) return jd;
    for (size_t i = 0; i < n; i++)
        json_array_append_new(jd, json_pack("{s:s, s:s, s:s, s:I}", "ep", devs[i].ep_name, "vendor",
                                            devs[i].ep_vendor, "hardware", oq_hw_type_name(devs[i].hw_type),
                                            "device_id", (json_int_t)devs[i].device_id));
    oq_ep_devices_free(devs, n);
    return jd;
}

/* -1, or the sdpa_kernel a --prove-teeth rerun forces. */
static int forced_sdpa_kernel(const worker *w)
{
    const json_t *force = json_object_get(json_object_get(w->plan, "dispatch"), "force_sdpa_kernel");
    return force ? (int)json_integer_value(force) : -1;
}

static oq_status open_session(worker *w, oq_err *err)
{
    const json_t *rt = json_object_get(w->plan, "runtime");
    oq_status st = oq_runtime_load(oq_json_str(rt, "ort_lib", NULL), &w->rt, err);
    size_t i;
    const json_t *pair;
    json_array_foreach(json_object_get(rt, "ep_libs"), i, pair) {
        /* only our own execution provider's library: another one may not even load here */
        if (st || strcmp(json_string_value(json_array_get(pair, 0)), w->cfg.runtime)) continue;
        st = oq_runtime_register_ep(w->rt, json_string_value(json_array_get(pair, 0)),
                                    json_string_value(json_array_get(pair, 1)), err);
    }
    if (st) return st;
    json_object_set_new(w->result, "onnxruntime", json_pack("{s:s, s:s, s:i}", "version", oq_runtime_version(w->rt),
                                                           "library", oq_runtime_lib_path(w->rt), "api_version",
                                                           oq_runtime_api_version(w->rt)));
    const json_t *opts = json_object_get(rt, "ep_options");
    size_t n = json_array_size(opts);
    const char **keys = calloc(n + 3, sizeof *keys), **vals = calloc(n + 3, sizeof *vals);
    if (!oq_config_on_ep(&w->cfg)) n = 0; /* the user's options are the provider's, not CPU's */
    for (i = 0; i < n; i++) {
        keys[i] = json_string_value(json_array_get(json_array_get(opts, i), 0));
        vals[i] = json_string_value(json_array_get(json_array_get(opts, i), 1));
    }
    char kernel[16];
    n = oq_config_ep_options(&w->cfg, forced_sdpa_kernel(w), keys, vals, n, kernel, sizeof kernel);
    oq_session_opts so = {.graph_opt_level = -1, .ep = w->cfg.runtime, .n_ep_options = n,
                          .ep_option_keys = keys, .ep_option_values = vals};
    st = oq_wcheck_begin(&w->chk, w->plan, w->workdir, err); /* a failed capture stops here */
    if (!st) {
        oq_wcheck_session_opts(&w->chk, &so);
        double t0 = oq_now_s();
        st = oq_session_create(w->rt, oq_json_str(w->plan, "model", NULL), NULL, 0, &so, &w->sess, err);
        w->t_session = oq_now_s() - t0;
        json_object_set_new(w->result, "session_create_s", json_real(w->t_session));
        uint64_t hwm_now;
        oq_proc_memory(&w->rss_after_session, &hwm_now, NULL);
        json_object_set_new(w->result, "ep_devices", ep_devices_json(w->rt));
    }
    free(keys);
    free(vals);
    return st;
}

/* A configuration that cannot run here (no provider library, or ORT's
 * NOT_IMPLEMENTED for it) is a skip, not a failure. */
static const char *classify_error(oq_status st)
{
    return st == OQ_ERR_NOT_FOUND || st == OQ_ERR_UNSUPPORTED ? "skipped" : "error";
}

static void worker_finish(worker *w, oq_status st, const oq_err *e)
{
    const char *status = st ? classify_error(st) : (w->all_passed ? "passed" : "failed");
    int verdict = 1;
    char reason[1100] = "";
    /* after the runs, so the libraries an execution provider loaded lazily are listed too */
    if (w->rt) json_object_set_new(w->result, "evidence", oq_evidence_collect_json(w->rt));
    if (w->sess && !st) oq_wcheck_finish(&w->chk, w->plan, &w->cfg, w->sess, w->result, &verdict, reason, sizeof reason);
    else oq_wcheck_abort(&w->chk);
    if (!st && verdict != 1 && !strcmp(status, "passed")) status = verdict == 0 ? "failed" : "skipped";
    if (!st && verdict != 1 && !json_object_get(w->result, "reason"))
        json_object_set_new(w->result, "reason", json_string(reason));
    json_object_set_new(w->result, "status", json_string(status));
    if (st) json_object_set_new(w->result, "reason", json_string(e->msg));
}

static void record_cost(worker *w)
{
    uint64_t rss = 0, hwm = 0;
    oq_proc_memory(&rss, &hwm, NULL);
    json_object_set_new(w->result, "cost",
                        json_pack("{s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I}", "session_s", w->t_session, "run_s",
                                  w->t_run, "compare_s", w->t_compare, "io_s", w->t_io,
                                  "rss_after_session_bytes", (json_int_t)w->rss_after_session,
                                  "rss_after_first_run_bytes", (json_int_t)w->rss_after_first,
                                  "rss_start_bytes", (json_int_t)w->rss_start,
                                  "vmhwm_bytes", (json_int_t)hwm, "max_batch_bytes", (json_int_t)w->max_batch_bytes));
}

static oq_status worker_init(worker *w, const json_t *plan, oq_err *err)
{
    memset(w, 0, sizeof *w);
    w->plan = plan;
    w->all_passed = 1;
    w->result = json_object();
    w->batches = json_array();
    json_object_set_new(w->result, "config", json_string(oq_json_str(plan, "config", "")));
    json_object_set(w->result, "batches", w->batches);
    const char *res = oq_json_str(plan, "result", "./result.json");
    const char *slash = strrchr(res, '/');
    snprintf(w->workdir, sizeof w->workdir, "%.*s", slash ? (int)(slash - res) : 1, slash ? res : ".");
    w->is_ref = json_is_true(json_object_get(plan, "is_reference"));
    w->repeat = (int)json_integer_value(json_object_get(plan, "repeat"));
    w->warmup = (int)json_integer_value(json_object_get(plan, "warmup"));
    oq_status st = oq_config_parse(oq_json_str(plan, "config", ""), &w->cfg, err);
    oq_dtype prec = oq_precision_is_reduced(w->cfg.precision) ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32;
    oq_tolerance base = oq_tolerance_for_dtype(prec);
    if (!st && w->cfg.precision == OQ_PREC_TF32) st = oq_tolerance_preset("tf32", &base, err);
    if (!st) st = oq_tolerances_create(base, &w->tols, err);
    const char *specs = oq_json_str(plan, "tolerances", NULL);
    if (!st && specs && *specs) st = oq_tolerances_add(w->tols, specs, err);
    return st;
}

static void worker_free(worker *w)
{
    oq_session_free(w->sess);
    oq_ref_model_free(w->ref);
    oq_runtime_free(w->rt);
    oq_tolerances_free(w->tols);
    json_decref(w->batches);
    json_decref(w->result);
}

static void progress_line(void *ctx, size_t done, size_t total)
{
    (void)ctx;
    fprintf(stderr, OQ_PROGRESS_PREFIX "%zu %zu\n", done, total);
    fflush(stderr);
}

oq_status oq_validate_worker_hooked(const char *plan_path, void (*on_batch)(void *ctx, size_t done, size_t total),
                                    void *ctx, oq_err *err)
{
    json_error_t jerr;
    json_t *plan = json_load_file(plan_path, 0, &jerr);
    if (!plan) return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s (line %d)", plan_path, jerr.text, jerr.line);
    if (!on_batch && json_is_true(json_object_get(plan, "progress"))) on_batch = progress_line;
    worker w;
    oq_err e = {0};
    uint64_t rss_start, hwm;
    oq_proc_memory(&rss_start, &hwm, NULL);
    oq_status st = worker_init(&w, plan, &e);
    w.rss_start = rss_start;
    if (!st) st = oq_config_uses_ort(&w.cfg) ? open_session(&w, &e) : oq_ref_model_open(plan, &w.ref, &e);
    size_t i;
    const json_t *b, *batches = json_object_get(plan, "batches");
    json_array_foreach(batches, i, b) {
        if (st) break;
        st = run_batch(&w, b, &e);
        if (!st && on_batch) on_batch(ctx, i + 1, json_array_size(batches));
    }
    record_cost(&w); /* before the evidence scan, whose memory is not the validation's */
    worker_finish(&w, st, &e);
    st = oq_json_write(oq_json_str(plan, "result", "result.json"), w.result, err);
    worker_free(&w);
    json_decref(plan);
    return st;
}

oq_status oq_validate_worker(const char *plan_path, oq_err *err)
{
    return oq_validate_worker_hooked(plan_path, NULL, NULL, err);
}
