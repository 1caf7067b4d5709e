/* The worker: one configuration over every batch of a plan, reported as an oq_config_result. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compare/compare-impl.h"
#include "evidence/evidence-impl.h"
#include "inspect/inspect-impl.h"
#include "inspect/modelfile-impl.h"
#include "npz/npz-impl.h"
#include "reference/reference-impl.h"
#include "runtime/runtime-impl.h"
#include "runtime/sessioncfg-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/mask.h"
#include "ortqual/npz.h"
#include "ortqual/proc.h"
#include "ortqual/refusal.h"
#include "ortqual/runtime.h"
#include "ortqual/stats.h"
#include "validate/validate-impl.h"
#include "status/args-impl.h"

/* Another member who wrote entries of a group's shared cache this run would use: its content
 * agrees with its record, whose SHA-256 is the writer's own, so only recomputing proves it. */
typedef struct cache_writer {
    unsigned uid;
    char user[64];
    size_t seen, used;  /* its entries among the plan's batches; those used */
    oq_plan_batch pick; /* the one spot-checked, drawn uniformly among them */
    int trusted;        /* that batch recomputed here is its entry, bit for bit */
    char check[400];    /* "identical", else why none of its entries is used */
} cache_writer;

typedef struct worker {
    const oq_validate_plan *plan;
    oq_config_result *r; /* what we report */
    oq_runtime *rt;
    oq_session *sess;
    oq_ref_model *ref; /* instead of a session for ref:* configs */
    oq_wcheck chk;     /* dispatch and placement proofs */
    oq_refcache cache; /* the reference's outputs by content (a C reference only) */
    size_t cache_ignored; /* its entries found bad and recomputed (the first one's warning kept) */
    oq_refstream refs; /* the reference's outputs: written by its worker, read by the others */
    oq_tolerances *tols;
    oq_tolerance base_tol; /* the configuration's preset, before the user's --tolerance */
    oq_model_file model; /* the ONNX file, read once: every session is made from these bytes; its
                            inspection (model.mi) gives the outputs' mask axes */
    oq_compare_result *cmp; /* the comparison of one output of one batch (~10 KB) */
    FILE *records;          /* each batch's record, appended as it finishes (not kept) */
    oq_output_beside *beside; /* per record output of the batch: what only its record holds */
    size_t n_beside;
    char workdir[PATH_MAX];
    int all_passed;
    int64_t calls; /* of the model or the reference, all counted */
    /* where the worker's time went, for bench/validate_cost and estimate: t_io is the rest of
     * the batches' time (reading and writing inputs, outputs, the cache, the plan's lines and
     * the records, each batch's progress report), so that no per-batch moment is left to what
     * estimate takes as paid once; t_once the one-time steps among them (run_batches) */
    double t_session, t_run, t_compare, t_io, t_once;
    uint64_t rss_after_session; /* bytes: the session as created */
    uint64_t rss_after_first;   /* bytes: the session and its arena after its first Run */
    uint64_t rss_start;         /* bytes: the process before any work (code, libraries) */
    int64_t max_batch_bytes;    /* largest batch's inputs + outputs */
    oq_tensor **probe;          /* the first batch's inputs, for the profiled session */
    size_t n_probe;
    cache_writer *writers;      /* a shared cache trusted by group: the other members who wrote */
    size_t n_writers;
    uint64_t seed, rng;         /* the spot checks' draw: seeded per run (pid, time), recorded */
} worker;

/* The batch's mask: its lengths (malloc'ed) and shape; no mask member, no lengths. */
typedef struct batch_mask {
    int64_t *lengths;
    int64_t batch, seq;
    const char *input; /* the model's name for it */
    char inputs_sha[65]; /* the inputs file's SHA-256 (the cache's key, the stream's check) */
    int64_t *events;   /* each event's id (the file's event_indices), NULL: not known */
} batch_mask;

/* An .npz file read whole, then parsed (libzip's reads from a file seek and read again); its
 * bytes hashed into `sha` unless NULL (once: the file is read once). */
static oq_status read_npz(const char *path, oq_npz **z, char *sha, oq_err *err)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (!st && sha) oq_sha256_buf(buf, n, sha);
    if (!st) st = oq_npz_parse(buf, n, path, z, err);
    free(buf);
    return st;
}

/* The batch's inputs; their SHA-256 for the cache's key and the reference stream's check. */
static oq_status read_inputs(const worker *w, const char *path, oq_npz **z, char sha[65], oq_err *err)
{
    return read_npz(path, z, w->cache.enabled || w->refs.path ? sha : NULL, err);
}

/* Input i as the model's type wants it (oq_signature_read_inputs checked the batch already):
 * a bfloat16 input read from float32. The reference configurations have no such input. */
static oq_status feed_as(const worker *w, const char *path, size_t i, oq_tensor *t, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    const oq_io_info *io = w->model.mi ? oq_find_io(w->model.mi->inputs, w->model.mi->n_inputs, p->input_names[i]) : NULL;
    char what[4200];
    snprintf(what, sizeof what, "%s: member '%s'", path, p->input_members[i]);
    return io ? oq_npz_feed_as(t, (oq_dtype)io->elem_type, what, err) : OQ_OK;
}

/* The batch's event ids, to name the event a failing element lies in: the member the
 * orchestrator wrote beside the inputs (none where the model takes one of that name: that one
 * is the model's input, not the run's ids). */
static oq_status event_ids(const oq_validate_plan *p, const oq_npz *z, batch_mask *bm, oq_err *err)
{
    for (size_t i = 0; i < p->n_inputs; i++)
        if (!strcmp(p->input_members[i], "event_indices")) return OQ_OK;
    const oq_tensor *t = oq_npz_get(z, "event_indices");
    if (!t || t->dtype != OQ_DTYPE_INT64 || t->ndim != 1 || t->shape[0] != bm->batch) return OQ_OK;
    size_t bytes = (size_t)bm->batch * sizeof *bm->events;
    if (!(bm->events = malloc(bytes ? bytes : 1))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    memcpy(bm->events, t->data, bytes);
    return OQ_OK;
}

/* Inputs of one batch, named as the model expects, and each event's length. */
static oq_status load_inputs(worker *w, const char *path, oq_tensor ***inputs, size_t *n, batch_mask *bm,
                             oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    oq_npz *z;
    oq_status st = read_inputs(w, path, &z, bm->inputs_sha, err);
    if (st) return st;
    *n = 0;
    *inputs = calloc(p->n_inputs ? p->n_inputs : 1, sizeof **inputs);
    if (!*inputs) st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    const oq_tensor *mask = NULL;
    for (size_t i = 0; !st && i < p->n_inputs; i++) {
        if ((st = oq_npz_take(z, p->input_members[i], &(*inputs)[i], err))) break;
        (*n)++;
        st = feed_as(w, path, i, (*inputs)[i], err);
        if (!st) st = oq_tensor_set_name((*inputs)[i], p->input_names[i], err);
        if (p->mask_member && !strcmp(p->input_members[i], p->mask_member)) {
            mask = (*inputs)[i];
            bm->input = p->input_names[i];
        }
    }
    if (!st && p->mask_member && !mask) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: no mask member '%s'", path, p->mask_member);
    if (!st && mask) {
        bm->batch = mask->shape[0];
        bm->seq = mask->ndim > 1 ? mask->shape[1] : 0;
        bm->lengths = calloc(bm->batch ? (size_t)bm->batch : 1, sizeof *bm->lengths);
        st = bm->lengths ? oq_mask_check_polarity(mask, NULL, p->mask_polarity, bm->lengths, err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        if (st) oq_err_prefix(err, "%s: ", path);
    }
    if (!st && mask) st = event_ids(p, z, bm, err);
    oq_npz_free(z);
    if (st) {
        oq_tensors_free(*inputs, *n);
        *inputs = NULL;
        *n = 0;
    }
    return st;
}

/* A configuration that cannot run here (no provider library, no device) is a skip; ORT
 * refusing the model (its NOT_IMPLEMENTED included: no kernel for an operator) is a runtime
 * error, explained (explain_run, else the orchestrator). */
static oq_verdict error_verdict(oq_status st)
{
    return st == OQ_ERR_NOT_FOUND ? OQ_VERDICT_SKIPPED : OQ_VERDICT_ERROR;
}

/* ORT's refusal of a batch explained here, by the sizes the batch fed it: whether a mask is
 * too short or of the wrong query size may rest on a symbolic dimension. The orchestrator
 * explains the rest (a refused session, a crash) from the model alone. */
static void explain_run(worker *w, oq_tensor *const *in, size_t n_in, oq_status st, const oq_err *err)
{
    if (!w->sess || error_verdict(st) != OQ_VERDICT_ERROR || w->r->refusal.raw) return;
    oq_refusal_facts f = {.message = err->msg, .model = w->plan->model, .ep = oq_ep_full_name(w->plan->config.runtime),
                          .inputs = (const oq_tensor *const *)in, .n_inputs = n_in,
                          /* the model the session ran, read once: no second read from disk */
                          .model_bytes = w->model.bytes, .model_n = w->model.n, .model_info = w->model.mi};
    oq_refusal_explain(&f, &w->r->refusal, NULL); /* out of memory: no explanation, as before */
}

static oq_status run_once(worker *w, oq_tensor *const *in, size_t n_in, oq_tensor ***out,
                          size_t *n_out, double *secs, oq_err *err)
{
    double t0 = oq_now_s();
    oq_status st = w->ref ? oq_ref_model_run(w->ref, in, n_in, out, n_out, err)
                       : oq_session_run(w->sess, n_in, in, n_out, out, err);
    *secs = oq_now_s() - t0;
    w->calls++;
    if (st) explain_run(w, in, n_in, st, err);
    return st;
}

/* First call, warm-up, then `repeat` timed calls; keeps the first call's outputs. The
 * reference's plan has neither: its one call is what it costs. */
static oq_status time_batch(worker *w, oq_tensor *const *in, size_t n_in, oq_tensor ***out,
                            size_t *n_out, oq_batch_result *b, oq_err *err)
{
    const int64_t calls0 = w->calls;
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
    b->calls = (int)(w->calls - calls0);
    b->median_s = reps && oq_stats_compute(samples, (size_t)reps, &stats, NULL) == OQ_OK ? stats.p50 : NAN;
    free(samples);
    return st;
}

/* A failed comparison that has no metrics (an output missing, or of another shape). */
static void comparison_failed(worker *w, oq_batch_result *b, const char *name, const char *why)
{
    b->passed = 0;
    if (!w->r->reason) oq_result_reason(w->r, "batch %lld, output %s: %s", (long long)b->index, name, why);
}

/* The reference's outputs of the batch: the next in the reference's stream, or the batch's
 * `expected` file. */
static oq_status reference_outputs(worker *w, const oq_plan_batch *pb, const batch_mask *bm, oq_npz **ref,
                                   oq_err *err)
{
    if (w->refs.path) return oq_refstream_next(&w->refs, pb->index, bm->inputs_sha, ref, err);
    if (!pb->ref) return oq_err_set(err, OQ_ERR_FORMAT, "batch %lld: no reference outputs named", (long long)pb->index);
    return read_npz(pb->ref, ref, NULL, err);
}

/* The mask's lengths on output `o` where it has the mask's axes. An output whose axes were
 * not known before the run (a size declared "?") and cannot be told is an error, as it would
 * have been before the run: never compared on the wrong elements. */
static oq_status mask_axes(const worker *w, const batch_mask *bm, const oq_tensor *o, oq_compare_opts *co,
                           oq_mask_axes *a, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    oq_axes_rule r = {p->model ? p->model : p->config.name, w->model.mi, bm->input, p->n_seq_axes, p->seq_axes,
                      bm->batch, bm->seq};
    oq_seq_axis own = {o->name, oq_ref_model_seq_axis(o->ndim)};
    if (w->ref) { /* a C reference under test has no model file: it lays out its outputs as the exports */
        r.n_seq_axes = 1;
        r.seq_axes = &own;
    }
    oq_status st = oq_output_mask_axes(&r, o->name, o->ndim, o->shape, a, err);
    if (st || !a->masked) return st;
    co->batch_axis = a->batch;
    co->seq_axis = a->seq;
    co->lengths = bm->lengths;
    return OQ_OK;
}

/* The events of res's worst elements, where the output has the mask's batch axis. */
static void worst_events(const oq_compare_result *res, const oq_compare_opts *co, const batch_mask *bm,
                         oq_worst_events *ev)
{
    memset(ev, 0, sizeof *ev);
    if (!bm->events || !co->lengths || co->batch_axis < 0 || co->batch_axis >= res->ndim) return;
    for (int32_t i = 0; i < res->worst_count; i++) {
        int64_t row = res->worst[i].coord[co->batch_axis];
        if (row < 0 || row >= bm->batch) continue;
        ev->worst[i] = bm->events[row];
        ev->known |= 1u << i;
    }
    int64_t row = res->worst_failing.coord[co->batch_axis];
    ev->failing_known = res->over_tol > 0 && row >= 0 && row < bm->batch;
    if (ev->failing_known) ev->failing = bm->events[row];
}

/* " (event ID of SOURCE)" for the element a failure's line names (worst_failing, else worst[0]),
 * or "" where its event is not known. A batch from SOURCE is the whole file: the element's row
 * is its index there, named as the input checks name it where the run's id differs. */
static const char *event_where(const oq_compare_result *res, const oq_compare_opts *co, const oq_worst_events *ev,
                               const char *source, char *buf, size_t n)
{
    int failing = res->over_tol > 0;
    int known = failing ? ev->failing_known : (int)(ev->known & 1u);
    long long id = failing ? ev->failing : ev->worst[0];
    long long row = known ? (failing ? &res->worst_failing : &res->worst[0])->coord[co->batch_axis] : -1;
    *buf = 0;
    if (known && source && id != row) snprintf(buf, n, " (event %lld, index %lld in %s)", id, row, source);
    else if (known) snprintf(buf, n, " (event %lld%s%s)", id, source ? " of " : "", source ? source : "");
    return buf;
}

/* Compares every reference output with ours; the first failure gives the reason. An output
 * is compared on its valid elements when it has the mask's batch and sequence axes. */
static oq_status compare_outputs(worker *w, const oq_plan_batch *pb, oq_tensor **outs, size_t n_out,
                                 const batch_mask *bm, oq_batch_result *b, oq_err *err)
{
    oq_npz *ref;
    oq_status st = reference_outputs(w, pb, bm, &ref, err);
    if (st) return st;
    b->compared = 1;
    b->passed = 1;
    for (size_t i = 0; !st && i < ref->count; i++) {
        const oq_tensor *r = ref->tensors[i];
        const oq_tensor *o = oq_tensors_find((const oq_tensor *const *)outs, n_out, r->name);
        if (!o) {
            comparison_failed(w, b, r->name, "this configuration has no such output (the reference has)");
            continue;
        }
        oq_compare_opts co = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
        co.tol = oq_tolerances_get(w->tols, r->name);
        co.check_padding = w->plan->padding;
        oq_mask_axes axes = {0};
        if (bm->lengths && (st = mask_axes(w, bm, o, &co, &axes, err))) break;
        oq_compare_result *res = w->cmp; /* one batch's: kept as a few numbers and aggregated */
        oq_err ce = {0};
        if (oq_compare_tensors(o, r, &co, res, &ce)) {
            if (ce.status != OQ_ERR_SHAPE) st = oq_err_set(err, ce.status, "%s", ce.msg);
            else comparison_failed(w, b, r->name, ce.msg);
            continue;
        }
        int vacuous = oq_compare_judge_vacuous(res, w->base_tol);
        oq_worst_events ev;
        worst_events(res, &co, bm, &ev);
        oq_batch_output *bo = OQ_PUSH(b->outputs, b->n_outputs);
        oq_output_beside *beside = bo ? OQ_PUSH(w->beside, w->n_beside) : NULL;
        if (!beside || oq_output_results_add_batch(&w->r->outputs, &w->r->n_outputs, res, b->index, &ev, err)) {
            st = beside ? err->status : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
            break;
        }
        oq_batch_output_of(res, &ev, bo);
        *beside = (oq_output_beside){res->inf_matched, axes.batch, axes.seq, axes.masked ? axes.by : NULL};
        if (!res->passed && !w->r->reason) {
            char line[OQ_PATH_BUF + 512], where[OQ_PATH_BUF + 64];
            if (vacuous)
                oq_result_reason(w->r, "batch %lld, output %s: %s", (long long)b->index, r->name,
                                 oq_compare_vacuous_str(res, line, sizeof line));
            else
                oq_result_reason(w->r, "batch %lld, output %s", (long long)b->index,
                                 oq_compare_result_str_at(res, NULL, event_where(res, &co, &ev, pb->source, where, sizeof where),
                                                          line, sizeof line));
        }
        b->passed &= res->passed;
    }
    oq_npz_free(ref);
    w->all_passed &= b->passed;
    return st;
}

static void cache_warning(worker *w, const char *what)
{
    if (*what && !w->r->cache_warning) w->r->cache_warning = strdup(what);
}

/* A bad entry kept for summary.json (every one: the warning names the first only); out of
 * memory, the count still says how many there were. */
static void cache_ignored(worker *w, const oq_refcache_hit *e)
{
    oq_config_result *r = w->r;
    oq_cache_ignored *v = realloc(r->cache_ignored, (r->n_cache_ignored + 1) * sizeof *v);
    if (!v) return;
    r->cache_ignored = v;
    v[r->n_cache_ignored] = (oq_cache_ignored){strdup(e->key), strdup(e->why)};
    if (v[r->n_cache_ignored].entry && v[r->n_cache_ignored].reason) r->n_cache_ignored++;
    else free(v[r->n_cache_ignored].entry), free(v[r->n_cache_ignored].reason);
}

/* The first bad entry's warning says how many more there were (one warning stood for all). */
static void cache_ignored_count(worker *w)
{
    char *said = w->r->cache_warning, *all = NULL;
    if (w->cache_ignored < 2 || !said) return;
    size_t more = w->cache_ignored - 1;
    if (asprintf(&all, "%s; and %zu more %s ignored and recomputed", said, more, more == 1 ? "entry" : "entries") < 0)
        return; /* out of memory: the first alone */
    free(said);
    w->r->cache_warning = all;
}

/* The reference's outputs of a batch, their .npz bytes: to the other workers (by the name of
 * the cache's file they came from, `named`, else as bytes), and saved with --save-outputs. */
static oq_status pass_on(worker *w, const oq_plan_batch *pb, const batch_mask *bm, const unsigned char *npz, size_t n,
                         const oq_refcache_hit *named, oq_err *err)
{
    oq_status st = OQ_OK;
    if (w->refs.path && named)
        st = oq_refstream_put_file(&w->refs, pb->index, bm->inputs_sha, named->path, &named->id, err);
    else if (w->refs.path) st = oq_refstream_put(&w->refs, pb->index, bm->inputs_sha, npz, n, err);
    if (!st && pb->save) st = oq_replace_file_nosync(pb->save, npz, n, err);
    return st;
}

/* A batch's entry in the cache, read and verified (oq_refcache_get, which touches nothing of the
 * worker's: several run at once, read_ahead): its .npz bytes and file (e.npz NULL: a miss or a
 * bad entry, which `warning` names). */
typedef struct cache_hit {
    oq_refcache_hit e;
    char warning[1400];
} cache_hit;

static cache_writer *writer_find(worker *w, unsigned uid)
{
    for (size_t i = 0; i < w->n_writers; i++)
        if (w->writers[i].uid == uid) return &w->writers[i];
    return NULL;
}

/* Another member's entry of a group's cache is used only when its writer's spot check found
 * its batch identical; else it is a bad entry, recomputed. */
static void trust_filter(worker *w, cache_hit *h)
{
    oq_refcache_hit *e = &h->e;
    if (!e->npz || !w->cache.shared || w->cache.own_only || e->writer == (unsigned)geteuid()) return;
    cache_writer *v = writer_find(w, e->writer);
    if (v && v->trusted) {
        v->used++;
        return;
    }
    char said[300];
    oq_refcache_writer_said(e, "written", said, sizeof said);
    if (v) snprintf(e->why, sizeof e->why, "%s, whose spot-checked %s", said, v->check);
    else snprintf(e->why, sizeof e->why, "%s after this run's spot checks: not checked", said);
    snprintf(h->warning, sizeof h->warning, "reference cache entry %s ignored and recomputed: %s", e->key, e->why);
    free(e->npz);
    e->npz = NULL;
}

/* The entry's outputs passed on as computed ones, by the name of the file verified (the others
 * read it themselves); h emptied. */
static oq_status cache_use(worker *w, const oq_plan_batch *pb, const batch_mask *bm, cache_hit *h,
                           oq_batch_result *b, oq_err *err)
{
    trust_filter(w, h);
    const oq_refcache_hit *e = &h->e;
    oq_status st = e->npz ? pass_on(w, pb, bm, e->npz, e->n, e, err) : OQ_OK;
    b->reference_cached = e->npz && !st;
    if (!e->npz && *e->why) cache_ignored(w, e);
    w->cache_ignored += !e->npz && *h->warning;
    free(h->e.npz);
    h->e.npz = NULL;
    cache_warning(w, h->warning);
    return st;
}

/* The reference's outputs of the batch from the cache (verified), passed on as computed ones. */
static oq_status from_cache(worker *w, const oq_plan_batch *pb, const batch_mask *bm, oq_batch_result *b,
                            oq_err *err)
{
    cache_hit h;
    oq_refcache_get(&w->cache, bm->inputs_sha, bm->batch, &h.e, h.warning, sizeof h.warning);
    return cache_use(w, pb, bm, &h, b, err);
}

/* The reference's outputs stored; a cache that cannot take them costs the next run time, not
 * this run its verdict. */
static void to_cache(worker *w, const batch_mask *bm, const unsigned char *npz, size_t n)
{
    oq_err e = {0};
    char warning[OQ_ERR_MSG_MAX + 64];
    if (oq_refcache_put(&w->cache, bm->inputs_sha, npz, n, &e) == OQ_OK) return;
    snprintf(warning, sizeof warning, "reference cache: not stored: %s", e.msg);
    cache_warning(w, warning);
}

/* Saved outputs of ORT say which session made them (oq_outputs_provenance): judged against that
 * very session later, they would compare ORT with itself. The library is the one mapped, named by
 * its bytes (the runtime's record, hashed once per process or inherited from the parent) and its
 * ELF build-id: a copy of it elsewhere is the same build; one replaced since it was loaded has
 * no digest, and its build-id still names it. */
static oq_status sign_outputs(worker *w, unsigned char **npz, size_t *n, oq_err *err)
{
    char sha[65], id[129];
    oq_runtime_lib_sha256(w->rt, sha, NULL, 0);
    oq_runtime_build_id(w->rt, id, sizeof id);
    char *prov =
        oq_outputs_provenance(w->plan, w->r->ort_version, w->r->ort_library, *sha ? sha : NULL, *id ? id : NULL);
    oq_status st = prov ? oq_npz_set_comment(npz, n, prov, err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    free(prov);
    return st;
}

/* What the batch's outputs are kept as: the reference's for the others (and its cache), the
 * saved ones; one .npz built once for all of them (members stored: a batch's floats barely
 * deflate, and inflating them cost every reader). Per batch: renamed, not synced. */
static oq_status keep_outputs(worker *w, const oq_plan_batch *pb, const batch_mask *bm, oq_tensor **out,
                              size_t n_out, oq_err *err)
{
    int ref = w->plan->is_reference;
    if (!ref && !pb->save) return OQ_OK;
    unsigned char *npz = NULL;
    size_t n = 0;
    oq_status st = oq_npz_bytes(n_out, (const oq_tensor *const *)out, 0, "outputs", &npz, &n, err);
    if (!st && pb->save && w->r->ort_version) st = sign_outputs(w, &npz, &n, err);
    if (!st && ref) st = pass_on(w, pb, bm, npz, n, NULL, err);
    else if (!st) st = oq_replace_file_nosync(pb->save, npz, n, err);
    if (!st && ref && w->cache.enabled) to_cache(w, bm, npz, n);
    free(npz);
    return st;
}

static oq_status open_reference(worker *w, oq_err *err);
static void plan_batch_clear(oq_plan_batch *pb);
static oq_status keep_probe(worker *w, oq_tensor *const *in, size_t n_in, oq_err *err);

/* Runs the batch (the C reference opened on its first miss) and saves what the run keeps. */
static oq_status compute_batch(worker *w, const oq_plan_batch *pb, const batch_mask *bm, oq_tensor **in, size_t n_in,
                               oq_tensor ***out, size_t *n_out, oq_batch_result *b, oq_err *err)
{
    double t0 = oq_now_s(); /* the reference's opening and the probe's copy: once, not per batch */
    oq_status st = !w->sess && !w->ref ? open_reference(w, err) : OQ_OK;
    w->t_once += oq_now_s() - t0;
    if (!st) st = time_batch(w, in, n_in, out, n_out, b, err);
    t0 = oq_now_s();
    if (!st) st = keep_probe(w, in, n_in, err);
    w->t_once += oq_now_s() - t0;
    if (!st) st = keep_outputs(w, pb, bm, *out, *n_out, err);
    return st;
}

/* The batch's record appended to the records file, also when the batch stopped the run. */
static oq_status put_record(worker *w, oq_batch_result *b, oq_status st, oq_err *err)
{
    int ok = oq_batch_record_put_beside(w->records, b, w->n_beside == b->n_outputs ? w->beside : NULL) &&
             fflush(w->records) == 0;
    const int e = errno, wrote = ferror(w->records);
    free(b->outputs);
    free(w->beside);
    w->beside = NULL;
    w->n_beside = 0;
    if (st || ok) return st;
    if (!wrote) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory writing a batch record"); /* the JSON's */
    char path[OQ_PATH_BUF];
    oq_batch_records_path(w->plan->result, path, sizeof path);
    return oq_err_write(err, path, e);
}

/* A cached reference's batch whose inputs the orchestrator hashed as it wrote them: its entry
 * found by that hash and passed on without reading the inputs (every reader checks the hash
 * against its own read of the file). 1: done, *st its status; 0: a miss. */
static int cached_by_plan(worker *w, const oq_plan_batch *pb, oq_batch_result *b, oq_status *st, oq_err *err)
{
    batch_mask bm = {.batch = pb->batch_size};
    memcpy(bm.inputs_sha, pb->sha256, sizeof bm.inputs_sha - 1);
    *st = from_cache(w, pb, &bm, b, err);
    return *st || b->reference_cached;
}

/* The batch from its inputs file: its reference outputs from the cache by the file's hash
 * (when the plan's was not looked up: !by_plan), else run. */
static oq_status run_from_inputs(worker *w, const oq_plan_batch *pb, int by_plan, oq_err *err)
{
    oq_tensor **in = NULL, **out = NULL;
    size_t n_in = 0, n_out = 0;
    batch_mask bm = {0};
    oq_batch_result rec = {.index = pb->index}, *b = &rec;
    oq_status st = load_inputs(w, pb->inputs, &in, &n_in, &bm, err);
    if (!st && w->cache.enabled && !by_plan) st = from_cache(w, pb, &bm, b, err);
    if (!st && !b->reference_cached) st = compute_batch(w, pb, &bm, in, n_in, &out, &n_out, b, err);
    double t0 = oq_now_s();
    if (!st && !w->plan->is_reference) st = compare_outputs(w, pb, out, n_out, &bm, b, err);
    w->t_compare += oq_now_s() - t0; /* includes reading the reference outputs */
    int64_t bytes = 0;
    for (size_t i = 0; i < n_in; i++) bytes += (int64_t)oq_tensor_nbytes(in[i]);
    for (size_t i = 0; i < n_out; i++) bytes += (int64_t)oq_tensor_nbytes(out[i]);
    if (bytes > w->max_batch_bytes) w->max_batch_bytes = bytes;
    oq_tensors_free(in, n_in);
    oq_tensors_free(out, n_out);
    free(bm.lengths);
    free(bm.events);
    return put_record(w, b, st, err);
}

static oq_status run_batch(worker *w, const oq_plan_batch *pb, oq_err *err)
{
    oq_batch_result rec = {.index = pb->index};
    oq_status st = OQ_OK;
    int by_plan = w->cache.enabled && pb->sha256 && pb->batch_size > 0; /* else by the hash of the file read */
    if (by_plan && cached_by_plan(w, pb, &rec, &st, err)) return put_record(w, &rec, st, err);
    return run_from_inputs(w, pb, by_plan, err);
}

static oq_status open_runtime(worker *w, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    oq_status st = oq_runtime_load(p->ort_lib, &w->rt, err);
    /* no ONNX Runtime at all is a runtime error, not a configuration this host cannot run */
    if (st == OQ_ERR_NOT_FOUND) {
        st = OQ_ERR_RUNTIME;
        if (err) err->status = st;
    }
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

/* A session of the configuration: its provider and options, its threads; `profiled`: ORT's
 * profiler and EP assignment record on, for the placement record. */
static oq_status create_session(worker *w, int profiled, oq_session **s, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    /* the user's options are the provider's, not CPU's; room for 2 the configuration adds */
    size_t n = oq_config_on_ep(&p->config) ? p->n_ep_options : 0, nc = p->n_session_configs;
    const char **keys = calloc(n + 3, sizeof *keys), **vals = calloc(n + 3, sizeof *vals);
    /* the user's session config entries, and room for the placement check's one */
    const char **ckeys = calloc(nc + 1, sizeof *ckeys), **cvals = calloc(nc + 1, sizeof *cvals);
    if (!keys || !vals || !ckeys || !cvals) {
        free(keys);
        free(vals);
        free(ckeys);
        free(cvals);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < nc; i++) {
        ckeys[i] = p->session_config_keys[i];
        cvals[i] = p->session_config_values[i];
    }
    for (size_t i = 0; i < n; i++) {
        keys[i] = p->ep_option_keys[i];
        vals[i] = p->ep_option_values[i];
    }
    char kernel[16];
    n = oq_config_ep_options(&p->config, p->dispatch.force_sdpa_kernel, keys, vals, n, kernel, sizeof kernel);
    oq_session_opts so = {.ep = p->config.runtime, .n_ep_options = n, .ep_option_keys = keys, .ep_option_values = vals,
                          .intra_op_threads = p->threads, .graph_opt = p->graph_opt, .n_session_configs = nc,
                          .session_config_keys = ckeys, .session_config_values = cvals};
    oq_wcheck_session_opts(&w->chk, &so);
    if (profiled) oq_wcheck_placement_opts(&w->chk, &so, ckeys, cvals);
    oq_status st = oq_session_create(w->rt, p->model, w->model.bytes, w->model.n, &so, s, err);
    /* ORT read the external-data files while it made the session: they must be the hashed ones */
    if (!st && (st = oq_model_file_unchanged(&w->model, p->model_sha256, err))) {
        oq_session_free(*s);
        *s = NULL;
    }
    free(keys);
    free(vals);
    free(ckeys);
    free(cvals);
    return st;
}

/* The threads and execution mode ORT runs the configuration's session with. */
static void session_threads(const oq_validate_plan *p, oq_session_threads *t)
{
    oq_session_threads_ran(p->threads, 0, p->n_session_configs, (const char *const *)p->session_config_keys,
                           (const char *const *)p->session_config_values, t);
}

static oq_status open_session(worker *w, oq_err *err)
{
    const oq_validate_plan *p = w->plan;
    oq_status st = open_runtime(w, err);
    if (st) return st;
    oq_session_threads t;
    session_threads(p, &t);
    w->r->threads = t.intra; /* as ORT runs them: an entry's count over --threads */
    w->r->graph_opt = p->graph_opt;
    st = oq_wcheck_begin(&w->chk, p, w->workdir, err); /* a failed capture stops here */
    w->chk.model = w->model.bytes;
    w->chk.model_n = w->model.n;
    if (!st) {
        double t0 = oq_now_s();
        st = create_session(w, 0, &w->sess, err);
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
    return st;
}

/* The placement's session (oq_wcheck_profiled): the configuration's, profiled, over the first
 * batch's inputs as a batch runs them (first call, warm-up, repeats), after the timed run and
 * its session are gone (a GPU holds one at a time). Profiling the timed session instead cost
 * every call (0.63 ms became 1.44 ms on the demo's batches) and held ORT's events of every call
 * in memory, ~1 MB per batch, then parsed whole. */
static oq_session *profiled_session(void *ctx, char *why, size_t n)
{
    worker *w = ctx;
    oq_session *s = NULL;
    oq_err e = {0};
    oq_session_free(w->sess);
    w->sess = NULL;
    if (!w->probe) {
        snprintf(why, n, "no batch ran on the session: nothing to profile");
        return NULL;
    }
    int calls = 1 + w->plan->warmup + (w->plan->repeat > 0 ? w->plan->repeat : 0);
    oq_status st = create_session(w, 1, &s, &e);
    for (int i = 0; !st && i < calls; i++) {
        oq_tensor **out = NULL;
        size_t n_out = 0;
        st = oq_session_run(s, w->n_probe, w->probe, &n_out, &out, &e);
        oq_tensors_free(out, n_out);
    }
    if (!st) return s;
    snprintf(why, n, "the profiled session: %s", e.msg);
    oq_session_free(s);
    return NULL;
}

/* The first batch's inputs, kept for the profiled session. */
static oq_status keep_probe(worker *w, oq_tensor *const *in, size_t n_in, oq_err *err)
{
    if (!w->chk.placement_on || w->probe || !w->sess) return OQ_OK;
    oq_tensor **t = calloc(n_in ? n_in : 1, sizeof *t);
    oq_status st = t ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < n_in; i++) st = oq_tensor_clone(in[i], &t[i], err);
    if (st) {
        oq_tensors_free(t, n_in);
        return st;
    }
    w->probe = t;
    w->n_probe = n_in;
    return OQ_OK;
}

static oq_status open_reference(worker *w, oq_err *err)
{
    oq_status st = oq_ref_model_open(w->plan, &w->ref, err);
    if (!st) w->r->threads = oq_ref_model_threads(w->ref);
    return st;
}

/* The runtime's evidence. The libraries a CPU configuration loads are the parent's and ORT's:
 * the scan for copies of the CUDA libraries (thousands of stat calls) is the parent's, done once;
 * a configuration on another execution provider scans after its libraries loaded. */
static void worker_finish(worker *w, oq_status st, const oq_err *e)
{
    oq_config_result *r = w->r;
    int verdict = 1;
    char reason[1100] = "";
    /* after the runs, so the libraries an execution provider loaded lazily are listed too */
    if (w->rt) {
        oq_evidence_opts opts = {.skip_shadowing = !oq_config_on_ep(&w->plan->config)};
        const oq_validate_plan *p = w->plan;
        json_t *ev = oq_evidence_collect_json(w->rt, &opts);
        char id[129]; /* the build's own identity beside the file's SHA-256, for summary.json's ORT builds */
        if (oq_runtime_build_id(w->rt, id, sizeof id))
            json_object_set_new(json_object_get(ev, "ort"), "build_id", json_string(id));
        json_t *ran = oq_session_graph_opt_ran(p->graph_opt, p->n_session_configs, (const char *const *)p->session_config_keys,
                                               (const char *const *)p->session_config_values);
        if (ev && ran) json_object_set_new(ev, "graph_opt", ran);
        else json_decref(ran);
        oq_session_threads t;
        session_threads(p, &t);
        if (ev) json_object_set_new(ev, "session_threads", oq_session_threads_json(&t, 0));
        r->evidence_json = ev ? json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(ev);
    }
    if (w->sess && !st) oq_wcheck_finish(&w->chk, w->plan, profiled_session, w, r, &verdict, reason, sizeof reason);
    else oq_wcheck_abort(&w->chk);
    r->status = st ? error_verdict(st) : w->all_passed ? OQ_VERDICT_PASSED : OQ_VERDICT_FAILED;
    if (!st && verdict != 1 && r->status == OQ_VERDICT_PASSED)
        r->status = verdict == 0 ? OQ_VERDICT_FAILED : OQ_VERDICT_SKIPPED;
    if (!st && verdict != 1 && !r->reason) oq_result_reason(r, "%s", reason);
    /* the reference compared nothing: it ran, which is no pass (docs/verdicts.md) */
    if (r->status == OQ_VERDICT_PASSED && w->plan->is_reference) r->status = OQ_VERDICT_REFERENCE;
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

oq_status oq_config_tolerances(oq_precision cp, const char *spec, oq_tolerance *preset, oq_tolerances **tols,
                               oq_err *err)
{
    oq_dtype prec = cp == OQ_PREC_BF16 ? OQ_DTYPE_BFLOAT16 : oq_precision_is_reduced(cp) ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32;
    oq_tolerance base = oq_tolerance_for_dtype(prec);
    oq_status st = cp == OQ_PREC_TF32 ? oq_tolerance_preset("tf32", &base, err) : OQ_OK;
    *preset = base;
    *tols = NULL;
    if (!st) st = oq_tolerances_create(base, tols, err);
    if (!st && spec && *spec) st = oq_tolerances_add(*tols, spec, err);
    return st;
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
    oq_status st = (w->cmp = malloc(sizeof *w->cmp)) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    char path[OQ_PATH_BUF];
    oq_batch_records_path(plan->result, path, sizeof path);
    if (!st) st = oq_fopen_scratch(path, &w->records, err);
    if (!st) st = oq_config_tolerances(plan->config.precision, plan->tolerances, &w->base_tol, &w->tols, err);
    return st;
}

static void worker_clear(worker *w)
{
    oq_session_free(w->sess);
    oq_tensors_free(w->probe, w->n_probe);
    oq_ref_model_free(w->ref);
    oq_runtime_free(w->rt);
    oq_tolerances_free(w->tols);
    oq_model_file_clear(&w->model);
    oq_refcache_close(&w->cache);
    for (size_t i = 0; i < w->n_writers; i++) plan_batch_clear(&w->writers[i].pick);
    free(w->writers);
    oq_refstream_close(&w->refs, NULL);
    if (w->records) fclose(w->records);
    free(w->cmp);
    free(w->beside);
    memset(w, 0, sizeof *w);
}

/* An isolated worker's progress line: each wakes the parent, which at small batches cost it
 * more CPU than anything else while a worker ran; so one every PROGRESS_EVERY_S seconds and the
 * last batch's (an interruption counts the batches done from the records file, not these). */
#define PROGRESS_EVERY_S 0.1

static int progress_line(void *ctx, size_t done, size_t total)
{
    double *last = ctx, now = oq_now_s();
    if (done < total && now - *last < PROGRESS_EVERY_S) return 0;
    *last = now;
    fprintf(stderr, OQ_PROGRESS_PREFIX "%zu %zu\n", done, total);
    fflush(stderr);
    return 0;
}

/* ---- a cached reference reads ahead ------------------------------------------------------ */

/* A cached reference's entries are read and verified READ_AHEAD batches at a time on
 * READ_THREADS threads, then passed on in order: read one after another they waited on the
 * disk (100,000 events on the dev VM: 35 s, of which 10 s on a CPU, once the entries had left
 * the page cache). Their time is the reading's, not the CPUs': more threads than cores. */
#define READ_AHEAD 64
#define READ_THREADS 8

typedef struct read_ahead {
    oq_plan_batch pb[READ_AHEAD]; /* copies of the plan's */
    size_t pos[READ_AHEAD];       /* their places in the plan */
    cache_hit hit[READ_AHEAD];
    size_t n;
    oq_ref_team *team; /* made on the first batch */
    const oq_refcache *cache;
} read_ahead;

static void ahead_read(void *ctx, int64_t task, int thread)
{
    (void)thread;
    read_ahead *a = ctx;
    cache_hit *h = &a->hit[task];
    oq_refcache_get(a->cache, a->pb[task].sha256, a->pb[task].batch_size, &h->e, h->warning, sizeof h->warning);
}

static void plan_batch_clear(oq_plan_batch *pb)
{
    free(pb->inputs);
    free(pb->ref);
    free(pb->save);
    free(pb->source);
    free(pb->sha256);
    memset(pb, 0, sizeof *pb);
}

static int plan_batch_copy(oq_plan_batch *to, const oq_plan_batch *from)
{
    *to = (oq_plan_batch){.index = from->index, .batch_size = from->batch_size};
    to->inputs = from->inputs ? strdup(from->inputs) : NULL;
    to->ref = from->ref ? strdup(from->ref) : NULL;
    to->save = from->save ? strdup(from->save) : NULL;
    to->source = from->source ? strdup(from->source) : NULL;
    to->sha256 = strdup(from->sha256);
    int ok = to->sha256 && (to->inputs || !from->inputs) && (to->ref || !from->ref) && (to->save || !from->save) &&
             (to->source || !from->source);
    if (!ok) plan_batch_clear(to);
    return ok;
}

/* ---- a group's cache: other members' entries spot-checked ------------------------------ */

static uint64_t next_draw(worker *w) /* splitmix64 */
{
    uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static cache_writer *writer_add(worker *w, unsigned uid)
{
    cache_writer *v = realloc(w->writers, (w->n_writers + 1) * sizeof *v);
    if (!v) return NULL;
    w->writers = v;
    v += w->n_writers++;
    *v = (cache_writer){.uid = uid};
    oq_user_name(uid, v->user, sizeof v->user);
    return v;
}

/* A batch whose entry another member wrote: its writer's count, and the pick drawn uniformly
 * among them as they come (reservoir sampling: the k-th replaces it with chance 1/k). */
static oq_status writer_seen(void *ctx, const oq_plan_batch *pb, size_t i, oq_err *err)
{
    worker *w = ctx;
    char sha[65], key[65];
    unsigned uid;
    (void)i;
    if (pb->sha256) snprintf(sha, sizeof sha, "%s", pb->sha256);
    else if (oq_sha256_file(pb->inputs, sha, err)) return err->status;
    oq_refcache_key(&w->cache, sha, key);
    if (!oq_refcache_entry_writer(&w->cache, key, &uid) || uid == (unsigned)geteuid()) return OQ_OK;
    cache_writer *v = writer_find(w, uid);
    if (!v && !(v = writer_add(w, uid))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (next_draw(w) % ++v->seen) return OQ_OK;
    /* drawn: an entry that does not verify is ignored anyway, so it is not among those drawn
     * from (a writer with a corrupt one would lose the rest) */
    oq_refcache_hit hit = {0};
    char warning[1400];
    oq_refcache_get(&w->cache, sha, pb->batch_size, &hit, warning, sizeof warning);
    int verified = hit.npz != NULL;
    free(hit.npz);
    if (!verified) return v->seen--, OQ_OK;
    oq_plan_batch with_sha = *pb;
    with_sha.sha256 = sha;
    plan_batch_clear(&v->pick);
    return plan_batch_copy(&v->pick, &with_sha) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

/* The recomputed outputs against the entry's: the same tensors, bit for bit (the reference is
 * bit-identical on one build, whatever its threads). NULL: identical; else the first that is not. */
static const char *outputs_differ(const oq_npz *z, oq_tensor *const *out, size_t n_out)
{
    if (z->count != n_out) return "its outputs";
    for (size_t i = 0; i < n_out; i++) {
        const oq_tensor *t = oq_npz_get(z, out[i]->name);
        if (!t || t->dtype != out[i]->dtype || t->ndim != out[i]->ndim ||
            memcmp(t->shape, out[i]->shape, (size_t)t->ndim * sizeof *t->shape) ||
            memcmp(t->data, out[i]->data, oq_tensor_nbytes(t)))
            return out[i]->name;
    }
    return NULL;
}

/* The writer's picked entry against its batch recomputed here: trusted when identical. */
static void writer_judge(cache_writer *v, const oq_refcache_hit *e, oq_tensor *const *out, size_t n_out)
{
    oq_npz *z = NULL;
    const char *differs = NULL;
    int64_t k = v->pick.index;
    if (!e->npz) snprintf(v->check, sizeof v->check, "batch %lld could not be checked: %.300s", (long long)k, e->why);
    else if (e->writer != v->uid) snprintf(v->check, sizeof v->check, "batch %lld was rewritten since", (long long)k);
    else if (oq_npz_parse(e->npz, e->n, e->path, &z, NULL))
        snprintf(v->check, sizeof v->check, "batch %lld could not be read back", (long long)k);
    else if ((differs = outputs_differ(z, out, n_out)))
        snprintf(v->check, sizeof v->check, "batch %lld, recomputed here, differs from its entry (output %s)",
                 (long long)k, differs);
    else v->trusted = snprintf(v->check, sizeof v->check, "identical") > 0;
    oq_npz_free(z);
}

/* One writer's picked batch recomputed and compared with its entry. */
static oq_status spot_check(worker *w, cache_writer *v, oq_err *err)
{
    if (!v->pick.inputs) /* none of its entries verifies: none is used */
        return snprintf(v->check, sizeof v->check, "entries: none could be read"), OQ_OK;
    oq_tensor **in = NULL, **out = NULL;
    size_t n_in = 0, n_out = 0;
    batch_mask bm = {0};
    oq_refcache_hit hit = {0};
    char warning[1400];
    double secs;
    oq_status st = load_inputs(w, v->pick.inputs, &in, &n_in, &bm, err);
    if (!st) oq_refcache_get(&w->cache, bm.inputs_sha, bm.batch, &hit, warning, sizeof warning);
    if (!st && !w->ref) st = open_reference(w, err);
    if (!st) st = run_once(w, in, n_in, &out, &n_out, &secs, err);
    if (!st) writer_judge(v, &hit, out, n_out);
    if (!st && !v->trusted) {
        char said[700];
        snprintf(said, sizeof said, "reference cache: every entry written by uid %u (%s) ignored and recomputed: its "
                 "spot-checked %s", v->uid, v->user, v->check);
        cache_warning(w, said);
    }
    free(hit.npz);
    oq_tensors_free(in, n_in);
    oq_tensors_free(out, n_out);
    free(bm.lengths);
    free(bm.events);
    return st;
}

/* Before any batch: who else wrote the entries this run would use, and one batch of each
 * recomputed. The draw is seeded by the run (process and time), so no writer can tell which of
 * its entries will be checked; the seed is recorded. */
static oq_status trust_writers(worker *w, oq_err *err)
{
    if (!w->cache.enabled || !w->cache.shared || w->cache.own_only) return OQ_OK;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    w->seed = w->rng = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec * 1000000000ULL ^ (uint64_t)ts.tv_nsec;
    oq_status st = oq_plan_batches_each(w->plan, writer_seen, w, err);
    for (size_t i = 0; !st && i < w->n_writers; i++) st = spot_check(w, &w->writers[i], err);
    return st;
}

/* The writers for summary.json (JSON text): who, how many of their entries were used, the batch
 * checked, what it showed and the draw's seed. */
static void writers_result(worker *w)
{
    json_t *a = w->n_writers ? json_array() : NULL;
    char seed[17];
    snprintf(seed, sizeof seed, "%016llx", (unsigned long long)w->seed);
    for (size_t i = 0; a && i < w->n_writers; i++) {
        const cache_writer *v = &w->writers[i];
        json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:{s:I, s:s, s:s}}", "user", v->user, "uid",
                                           (json_int_t)v->uid, "entries", (json_int_t)v->used, "spot_check", "batch",
                                           (json_int_t)(v->pick.inputs ? v->pick.index : -1), "result", v->check, "seed", seed));
    }
    w->r->cache_writers = a ? json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(a);
}

typedef struct batch_hook {
    worker *w;
    oq_batch_hook_fn on_batch;
    void *ctx;
    read_ahead *ahead; /* NULL: a batch at a time */
} batch_hook;

/* Batch i done: the hook may stop the worker here (an in-process run interrupted), its
 * records so far kept. */
static oq_status batch_done(const batch_hook *h, size_t i, oq_err *err)
{
    size_t total = h->w->plan->n_batches;
    if (!h->on_batch || !h->on_batch(h->ctx, i + 1, total)) return OQ_OK;
    return oq_err_set(err, OQ_ERR_RUNTIME, "stopped after %zu of %zu batches", i + 1, total);
}

/* A batch read ahead, as run_batch's cached path goes on: passed on and recorded, or (a miss,
 * a bad entry) run from its inputs, not looked up again. */
static oq_status ahead_batch(worker *w, const oq_plan_batch *pb, cache_hit *hit, oq_err *err)
{
    oq_batch_result rec = {.index = pb->index};
    batch_mask bm = {.batch = pb->batch_size};
    memcpy(bm.inputs_sha, pb->sha256, sizeof bm.inputs_sha - 1);
    oq_status st = cache_use(w, pb, &bm, hit, &rec, err);
    return st || rec.reference_cached ? put_record(w, &rec, st, err) : run_from_inputs(w, pb, 1, err);
}

/* The batches read ahead, in order. */
static oq_status ahead_flush(const batch_hook *h, oq_err *err)
{
    read_ahead *a = h->ahead;
    oq_ref_team_run(a->team, (int64_t)a->n, ahead_read, a);
    oq_status st = OQ_OK;
    for (size_t i = 0; i < a->n; i++) {
        if (!st && !(st = ahead_batch(h->w, &a->pb[i], &a->hit[i], err))) st = batch_done(h, a->pos[i], err);
        free(a->hit[i].e.npz);
        plan_batch_clear(&a->pb[i]);
    }
    a->n = 0;
    return st;
}

/* A batch the cache may hold by the plan's hash joins the window (run when it is full); any
 * other runs after the window's. */
static oq_status ahead_add(const batch_hook *h, const oq_plan_batch *pb, size_t i, oq_err *err)
{
    read_ahead *a = h->ahead;
    if (!pb->sha256 || pb->batch_size <= 0) {
        oq_status st = a->n ? ahead_flush(h, err) : OQ_OK;
        if (!st) st = run_batch(h->w, pb, err);
        if (!st) st = batch_done(h, i, err);
        return st;
    }
    double t0 = oq_now_s(); /* the readers' team: made once */
    int made = a->team || !oq_ref_team_create(READ_THREADS, &a->team, err);
    h->w->t_once += oq_now_s() - t0;
    if (!made) return err->status;
    if (!plan_batch_copy(&a->pb[a->n], pb)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    a->pos[a->n++] = i;
    return a->n == READ_AHEAD ? ahead_flush(h, err) : OQ_OK;
}

/* The plan's batches are read one at a time: the worker never holds them all. */
static oq_status next_batch(void *ctx, const oq_plan_batch *pb, size_t i, oq_err *err)
{
    const batch_hook *h = ctx;
    if (h->ahead) return ahead_add(h, pb, i, err);
    oq_status st = run_batch(h->w, pb, err);
    if (!st) st = batch_done(h, i, err);
    return st;
}

/* The plan's batches, a cached reference's read ahead; their time beyond their calls, the
 * comparisons and the one-time steps is their I/O (t_io). */
static oq_status run_batches(worker *w, batch_hook *h, oq_err *err)
{
    double t0 = oq_now_s(), booked = w->t_run + w->t_compare + w->t_once;
    read_ahead *a = w->plan->is_reference && w->cache.enabled ? calloc(1, sizeof *a) : NULL;
    if (a) a->cache = &w->cache;
    h->ahead = a;
    oq_status st = oq_plan_batches_each(w->plan, next_batch, h, err);
    if (a && !st && a->n) st = ahead_flush(h, err);
    for (size_t i = 0; a && i < a->n; i++) plan_batch_clear(&a->pb[i]); /* left by an error */
    if (a) oq_ref_team_free(a->team);
    free(a);
    h->ahead = NULL;
    w->t_io += oq_now_s() - t0 - (w->t_run + w->t_compare + w->t_once - booked);
    return st;
}

/* The plan's model read once and checked against the plan's SHA-256: the file may have been
 * replaced since the plan was made (a run of the bytes at the path then ran another model
 * under the plan's name). Its inspection gives the outputs' mask axes (without it, sizes). */
static oq_status open_model(worker *w, oq_err *err)
{
    oq_status st = oq_model_file_read(w->plan->model, &w->model, err);
    if (!st) st = oq_model_file_unchanged(&w->model, w->plan->model_sha256, err);
    return st;
}

/* One configuration's worker; `isolated`: in a process of its own, whose words (oq_set_terms)
 * are the caller's where the plan says the caller has any (forked: its own function; the tool
 * re-executed: the tool's), else the library's. */
static oq_status worker_run(const char *plan_path, oq_batch_hook_fn on_batch, void *ctx,
                            int isolated, oq_err *err)
{
    oq_validate_plan plan;
    oq_status st = oq_plan_read(plan_path, &plan, err);
    if (st) return st;
    if (isolated && !plan.words) oq_set_terms(NULL);
    double last_line = 0;
    if (!on_batch && plan.progress) {
        on_batch = progress_line;
        ctx = &last_line;
    }
    oq_config_result r = {0};
    worker w;
    oq_err e = {0};
    uint64_t rss_start, hwm;
    oq_proc_memory(&rss_start, &hwm, NULL);
    st = worker_init(&w, &plan, &r, &e);
    w.rss_start = rss_start;
    if (!st && plan.model) st = open_model(&w, &e);
    if (!st) st = oq_refcache_open(&plan, &w.cache, &e);
    if (!st && plan.ref_stream) st = oq_refstream_open(&w.refs, plan.ref_stream, plan.is_reference, plan.ref_stream_fd, &e);
    if (!st && w.cache.enabled) r.threads = oq_ref_model_threads_of(&plan); /* also when every batch is cached */
    /* a cached reference opens on its first miss: its weights need not be read at all */
    if (!st) st = oq_config_uses_ort(&plan.config) ? open_session(&w, &e) : w.cache.enabled ? OQ_OK : open_reference(&w, &e);
    if (!st) st = trust_writers(&w, &e);
    batch_hook hook = {&w, on_batch, ctx, NULL};
    if (!st) st = run_batches(&w, &hook, &e);
    writers_result(&w);
    if (!st && plan.model) st = oq_model_file_unchanged(&w.model, plan.model_sha256, &e); /* ORT may map them */
    oq_status closed = oq_refstream_close(&w.refs, st ? NULL : &e); /* the reference's last writes */
    if (!st) st = closed;
    cache_ignored_count(&w);
    record_cost(&w); /* before the evidence scan, whose memory is not the validation's */
    worker_finish(&w, st, &e);
    st = oq_config_result_write(&r, plan.result, err);
    worker_clear(&w);
    oq_config_result_clear(&r);
    oq_validate_plan_clear(&plan);
    return st;
}

oq_status oq_validate_worker_hooked(const char *plan_path, oq_batch_hook_fn on_batch, void *ctx, oq_err *err)
{
    return worker_run(plan_path, on_batch, ctx, 0, err);
}

oq_status oq_validate_worker(const char *plan_path, oq_err *err)
{
    OQ_NEED(err, plan_path);
    /* A failure's reason is made in the worker, a path or a name inside it: worded as it is made
     * (a reader rewording it whole would reword the path too) */
    return worker_run(plan_path, NULL, NULL, 1, err);
}
