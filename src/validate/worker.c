/* The worker: one configuration over every batch of a plan, reported as an oq_config_result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "evidence/evidence-impl.h"
#include "ortqual/mask.h"
#include "ortqual/npz.h"
#include "ortqual/proc.h"
#include "ortqual/runtime.h"
#include "ortqual/stats.h"
#include "validate/validate-impl.h"

typedef struct worker {
    const oq_validate_plan *plan;
    oq_config_result *r; /* what we report */
    oq_runtime *rt;
    oq_session *sess;
    oq_ref_model *ref; /* instead of a session for ref:* configs */
    oq_wcheck chk;     /* dispatch and placement proofs */
    oq_tolerances *tols;
    char workdir[2048];
    int all_passed;
    /* where the worker's time went, for bench/validate_cost */
    double t_session, t_run, t_compare, t_io;
    uint64_t rss_after_session; /* bytes: the session as created */
    uint64_t rss_after_first;   /* bytes: the session and its arena after its first Run */
    uint64_t rss_start;         /* bytes: the process before any work (code, libraries) */
    int64_t max_batch_bytes;    /* largest batch's inputs + outputs */
} worker;

/* The plan's member for input `name`, or NULL. */
static const char *member_of(const oq_validate_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_inputs; i++)
        if (!strcmp(p->input_names[i], name)) return p->input_members[i];
    return NULL;
}

/* Inputs of one batch, named as the model expects, and each event's length. */
static oq_status load_inputs(worker *w, const char *path, oq_tensor ***inputs, size_t *n,
                             int64_t **lengths, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    oq_npz *z;
    oq_status st = oq_npz_read(path, &z, err);
    if (st) return st;
    *n = 0;
    *inputs = calloc(p->n_inputs ? p->n_inputs : 1, sizeof **inputs);
    if (!*inputs) st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    for (size_t i = 0; !st && i < p->n_inputs; i++) {
        if ((st = oq_npz_take(z, p->input_members[i], &(*inputs)[i], err))) break;
        (*n)++;
        st = oq_tensor_set_name((*inputs)[i], p->input_names[i], err);
    }
    const oq_tensor *mask = NULL;
    for (size_t k = 0; !st && k < *n; k++)
        if (!strcmp(member_of(p, (*inputs)[k]->name), p->mask_member)) mask = (*inputs)[k];
    if (!st && !mask) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: no mask member '%s'", path, p->mask_member);
    if (!st) {
        *lengths = calloc(mask->shape[0] ? (size_t)mask->shape[0] : 1, sizeof **lengths);
        st = *lengths ? oq_mask_check(mask, NULL, *lengths, err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        if (st) oq_err_prefix(err, "%s: ", path);
    }
    oq_npz_free(z);
    if (st) {
        oq_tensors_free(*inputs, *n);
        *inputs = NULL;
        *n = 0;
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
                            size_t *n_out, oq_batch_result *b, oq_err *err)
{
    double first, t, t0 = oq_now_s();
    oq_status st = run_once(w, in, n_in, out, n_out, &first, err);
    if (st) return st;
    int reps = w->plan->repeat > 0 ? w->plan->repeat : 0, warmup = w->plan->warmup;
    double *samples = calloc((size_t)reps + 1, sizeof *samples);
    if (!samples) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < warmup + reps; i++) {
        oq_tensor **o2 = NULL;
        size_t n2 = 0;
        st = run_once(w, in, n_in, &o2, &n2, &t, err);
        oq_tensors_free(o2, n2);
        if (i >= warmup) samples[i - warmup] = t;
    }
    w->t_run += oq_now_s() - t0;
    if (!w->rss_after_first) {
        uint64_t hwm;
        oq_proc_memory(&w->rss_after_first, &hwm, NULL);
    }
    oq_stats stats;
    b->timed = 1;
    b->first_call_s = first;
    b->repeat = reps;
    b->warmup = warmup;
    b->median_s = reps && oq_stats_compute(samples, (size_t)reps, &stats, NULL) == OQ_OK ? stats.p50 : NAN;
    free(samples);
    return st;
}

/* Compares every reference output with ours; the first failure gives the reason. */
static oq_status compare_outputs(worker *w, const char *ref_path, oq_tensor **outs, size_t n_out,
                                 const int64_t *lengths, oq_batch_result *b, oq_err *err)
{
    oq_npz *ref;
    oq_status st = oq_npz_read(ref_path, &ref, err);
    if (st) return st;
    b->compared = 1;
    b->passed = 1;
    for (size_t i = 0; !st && i < ref->count; i++) {
        const oq_tensor *r = ref->tensors[i];
        const oq_tensor *o = oq_tensors_find((const oq_tensor *const *)outs, n_out, r->name);
        if (!o) {
            st = oq_err_set(err, OQ_ERR_SHAPE, "config %s has no output '%s' (the reference has)",
                            w->plan->config.name, r->name);
            break;
        }
        oq_compare_opts co = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
        co.tol = oq_tolerances_get(w->tols, r->name);
        co.lengths = lengths;
        oq_compare_result *res = OQ_PUSH(b->outputs, b->n_outputs);
        if (!res) {
            st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
            break;
        }
        if ((st = oq_compare_tensors(o, r, &co, res, err))) {
            b->n_outputs--;
            break;
        }
        if (!res->passed && !w->r->reason) {
            char line[512];
            oq_result_reason(w->r, "batch %lld, output %s", (long long)b->index,
                             oq_compare_result_str(res, line, sizeof line));
        }
        b->passed &= res->passed;
    }
    oq_npz_free(ref);
    w->all_passed &= b->passed;
    return st;
}

static oq_status save_outputs(const char *path, oq_tensor **outs, size_t n, oq_err *err)
{
    return oq_npz_write(path, n, (const oq_tensor *const *)outs, 1, 1, err);
}

static oq_status run_batch(worker *w, const oq_plan_batch *pb, oq_err *err)
{
    oq_tensor **in = NULL, **out = NULL;
    size_t n_in = 0, n_out = 0;
    int64_t *lengths = NULL;
    oq_batch_result *b = OQ_PUSH(w->r->batches, w->r->n_batches);
    if (!b) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    b->index = pb->index;
    double t0 = oq_now_s();
    oq_status st = load_inputs(w, pb->inputs, &in, &n_in, &lengths, err);
    w->t_io += oq_now_s() - t0;
    if (!st) st = time_batch(w, in, n_in, &out, &n_out, b, err);
    t0 = oq_now_s();
    if (!st && w->plan->is_reference) st = save_outputs(pb->ref, out, n_out, err);
    if (!st && pb->save) st = save_outputs(pb->save, out, n_out, err);
    w->t_io += oq_now_s() - t0;
    t0 = oq_now_s();
    if (!st && !w->plan->is_reference) st = compare_outputs(w, pb->ref, out, n_out, lengths, b, err);
    w->t_compare += oq_now_s() - t0; /* includes reading the reference outputs */
    int64_t bytes = 0;
    for (size_t i = 0; i < n_in; i++) bytes += (int64_t)oq_tensor_nbytes(in[i]);
    for (size_t i = 0; i < n_out; i++) bytes += (int64_t)oq_tensor_nbytes(out[i]);
    if (bytes > w->max_batch_bytes) w->max_batch_bytes = bytes;
    oq_tensors_free(in, n_in);
    oq_tensors_free(out, n_out);
    free(lengths);
    return st;
}

static oq_status open_runtime(worker *w, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    oq_status st = oq_runtime_load(p->ort_lib, &w->rt, err);
    for (size_t i = 0; !st && i < p->n_ep_libs; i++) {
        /* only our own execution provider's library: another one may not even load here */
        if (strcmp(p->ep_lib_names[i], p->config.runtime)) continue;
        st = oq_runtime_register_ep(w->rt, p->ep_lib_names[i], p->ep_lib_paths[i], err);
    }
    if (st) return st;
    w->r->ort_version = strdup(oq_runtime_version(w->rt));
    w->r->ort_library = strdup(oq_runtime_lib_path(w->rt));
    w->r->ort_api_version = oq_runtime_api_version(w->rt);
    if (!w->r->ort_version || !w->r->ort_library) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return OQ_OK;
}

static oq_status open_session(worker *w, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    oq_status st = open_runtime(w, err);
    if (st) return st;
    /* the user's options are the provider's, not CPU's; room for 2 the configuration adds */
    size_t n = oq_config_on_ep(&p->config) ? p->n_ep_options : 0;
    const char **keys = calloc(n + 3, sizeof *keys), **vals = calloc(n + 3, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        keys[i] = p->ep_option_keys[i];
        vals[i] = p->ep_option_values[i];
    }
    char kernel[16];
    n = oq_config_ep_options(&p->config, p->dispatch.force_sdpa_kernel, keys, vals, n, kernel, sizeof kernel);
    oq_session_opts so = {.ep = p->config.runtime, .n_ep_options = n, .ep_option_keys = keys, .ep_option_values = vals};
    st = oq_wcheck_begin(&w->chk, p, w->workdir, err); /* a failed capture stops here */
    if (!st) {
        oq_wcheck_session_opts(&w->chk, &so);
        double t0 = oq_now_s();
        st = oq_session_create(w->rt, p->model, NULL, 0, &so, &w->sess, err);
        w->t_session = oq_now_s() - t0;
        w->r->session_tried = 1;
        w->r->session_create_s = w->t_session;
        uint64_t hwm_now;
        oq_proc_memory(&w->rss_after_session, &hwm_now, NULL);
        if (oq_runtime_ep_devices(w->rt, &w->r->ep_devices, &w->r->n_ep_devices, NULL) != OQ_OK) {
            w->r->ep_devices = NULL;
            w->r->n_ep_devices = 0;
        }
    }
    free(keys);
    free(vals);
    return st;
}

/* A configuration that cannot run here (no provider library, or ORT's
 * NOT_IMPLEMENTED for it) is a skip, not a failure. */
static oq_verdict error_verdict(oq_status st)
{
    return st == OQ_ERR_NOT_FOUND || st == OQ_ERR_UNSUPPORTED ? OQ_VERDICT_SKIPPED : OQ_VERDICT_FAILED;
}

static void worker_finish(worker *w, oq_status st, const oq_err *e)
{
    oq_config_result *r = w->r;
    int verdict = 1;
    char reason[1100] = "";
    /* after the runs, so the libraries an execution provider loaded lazily are listed too */
    if (w->rt) {
        json_t *ev = oq_evidence_collect_json(w->rt);
        r->evidence_json = ev ? json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(ev);
    }
    if (w->sess && !st) oq_wcheck_finish(&w->chk, w->plan, w->sess, r, &verdict, reason, sizeof reason);
    else oq_wcheck_abort(&w->chk);
    r->status = st ? error_verdict(st) : w->all_passed ? OQ_VERDICT_PASSED : OQ_VERDICT_FAILED;
    if (!st && verdict != 1 && r->status == OQ_VERDICT_PASSED)
        r->status = verdict == 0 ? OQ_VERDICT_FAILED : OQ_VERDICT_SKIPPED;
    if (!st && verdict != 1 && !r->reason) oq_result_reason(r, "%s", reason);
    if (st) oq_result_reason(r, "%s", e->msg);
}

static void record_cost(worker *w)
{
    uint64_t rss = 0, hwm = 0;
    oq_proc_memory(&rss, &hwm, NULL);
    w->r->cost = (oq_worker_cost){1, w->t_session, w->t_run, w->t_compare, w->t_io, (int64_t)w->rss_after_session,
                                  (int64_t)w->rss_after_first, (int64_t)w->rss_start, (int64_t)hwm,
                                  w->max_batch_bytes};
}

static oq_status worker_init(worker *w, const oq_validate_plan *plan, oq_config_result *r, oq_err *err)
{
    memset(w, 0, sizeof *w);
    w->plan = plan;
    w->r = r;
    w->all_passed = 1;
    r->config = plan->config;
    r->is_reference = plan->is_reference;
    r->reported = 1;
    const char *slash = strrchr(plan->result, '/');
    snprintf(w->workdir, sizeof w->workdir, "%.*s", slash ? (int)(slash - plan->result) : 1,
             slash ? plan->result : ".");
    oq_dtype prec = oq_precision_is_reduced(plan->config.precision) ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32;
    oq_tolerance base = oq_tolerance_for_dtype(prec);
    oq_status st = OQ_OK;
    if (plan->config.precision == OQ_PREC_TF32) st = oq_tolerance_preset("tf32", &base, err);
    if (!st) st = oq_tolerances_create(base, &w->tols, err);
    if (!st && plan->tolerances && *plan->tolerances) st = oq_tolerances_add(w->tols, plan->tolerances, err);
    return st;
}

static void worker_clear(worker *w)
{
    oq_session_free(w->sess);
    oq_ref_model_free(w->ref);
    oq_runtime_free(w->rt);
    oq_tolerances_free(w->tols);
    memset(w, 0, sizeof *w);
}

oq_status oq_validate_worker(const char *plan_path, oq_err *err)
{
    oq_validate_plan plan;
    oq_status st = oq_plan_read(plan_path, &plan, err);
    if (st) return st;
    oq_config_result r = {0};
    worker w;
    oq_err e = {0};
    uint64_t rss_start, hwm;
    oq_proc_memory(&rss_start, &hwm, NULL);
    st = worker_init(&w, &plan, &r, &e);
    w.rss_start = rss_start;
    if (!st) st = oq_config_uses_ort(&plan.config) ? open_session(&w, &e) : oq_ref_model_open(&plan, &w.ref, &e);
    for (size_t i = 0; !st && i < plan.n_batches; i++) st = run_batch(&w, &plan.batches[i], &e);
    record_cost(&w); /* before the evidence scan, whose memory is not the validation's */
    worker_finish(&w, st, &e);
    st = oq_config_result_write(&r, plan.result, err);
    worker_clear(&w);
    oq_config_result_clear(&r);
    oq_validate_plan_clear(&plan);
    return st;
}
