/* Before any model runs: the batches (generated or loaded, every one checked
 * against the mask contract) and the ONNX files of every configuration. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/inspect.h"
#include "ortqual/mask.h"
#include "ortqual/npz.h"
#include "ortqual/events.h"
#include "fileio/fileio-impl.h"
#include "inspect/inspect-impl.h"
#include "npz/npz-impl.h"
#include "reference/reference-impl.h"
#include "validate/validate-impl.h"

/* 1 when a model input is called `name` (the bookkeeping members then stay out of the file). */
static int is_input(const oq_batch_inputs *in, const char *name)
{
    return oq_tensors_find((const oq_tensor *const *)in->t, in->n, name) != NULL;
}

/* The file and its SHA-256, hashed from the bytes written (not read back). Members stored:
 * random floats barely deflate, and every worker would inflate them again. Per batch: renamed,
 * not synced, an earlier run's file removed first. */
static oq_status write_inputs(const char *path, size_t n, const oq_tensor **t, char sha[65], oq_err *err)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    oq_status st = oq_npz_bytes(n, t, 0, path, &buf, &len, err);
    if (!st) st = oq_replace_file_nosync(path, buf, len, err);
    if (!st) oq_sha256_buf(buf, len, sha);
    free(buf);
    return st;
}

/* Where batch `index` of `n_batches` goes: outdir/inputs_NNN.npz, numbered with the run's digits. */
static void inputs_path(const char *outdir, size_t index, size_t n_batches, char *path, size_t n)
{
    snprintf(path, n, "%s/inputs_%0*zu.npz", outdir, oq_batch_digits(n_batches), index);
}

/* Writes inputs_NNN.npz (every model input by its name, then event_indices and lengths); its
 * SHA-256 into sha. Nothing allocated here outlives the call. */
static oq_status write_batch_file(const char *outdir, size_t index, size_t n_batches, const oq_batch_inputs *in,
                                  const int64_t *event_idx, char sha[65], oq_err *err)
{
    int64_t b = in->batch;
    oq_tensor *lens = NULL, *idx = NULL;
    const oq_tensor **t = calloc(in->n + 2, sizeof *t);
    oq_status st = t ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = oq_tensor_create(&lens, OQ_DTYPE_INT64, 1, &b, "lengths", err);
    if (!st) st = oq_tensor_create(&idx, OQ_DTYPE_INT64, 1, &b, "event_indices", err);
    if (!st) {
        size_t n = 0;
        for (size_t i = 0; i < in->n; i++) t[n++] = in->t[i];
        memcpy(idx->data, event_idx, (size_t)b * sizeof *event_idx);
        for (int64_t i = 0; i < b; i++) ((int64_t *)lens->data)[i] = in->lengths ? in->lengths[i] : in->seq;
        if (!is_input(in, "event_indices")) t[n++] = idx;
        if (!is_input(in, "lengths") && (in->lengths || in->seq)) t[n++] = lens; /* none where L is not known */
        char path[4096];
        inputs_path(outdir, index, n_batches, path, sizeof path);
        st = write_inputs(path, n, t, sha, err);
    }
    free(t);
    oq_tensor_free(lens);
    oq_tensor_free(idx);
    return st;
}

/* The batch's file written and the batch described in `bi`, which borrows `path` (of 4096),
 * the batch's lengths (`lengths`, batch entries) and event_idx. */
static oq_status write_batch(const char *outdir, size_t index, size_t n_batches, const oq_batch_inputs *in,
                             int64_t *event_idx, int64_t *lengths, char *path, oq_batch_info *bi, oq_err *err)
{
    inputs_path(outdir, index, n_batches, path, 4096);
    *bi = (oq_batch_info){.index = (int64_t)index, .inputs = path, .batch_size = in->batch,
                          .padded_length = in->seq, .lengths = lengths, .event_indices = event_idx};
    for (int64_t i = 0; i < in->batch; i++) bi->valid_size += lengths[i] = in->lengths ? in->lengths[i] : in->seq;
    return write_batch_file(outdir, index, n_batches, in, event_idx, bi->sha256, err);
}

/* ---- generated events --------------------------------------------------------------- */

/* The size a declared dimension takes in a generated batch: the mask's names are B and L. */
static int64_t generated_size(const oq_io_info *mask, const char *dim, int64_t b, int64_t l)
{
    char *end;
    long long v = strtoll(dim, &end, 10);
    if (end != dim && !*end) return v;
    if (mask && mask->rank == 2 && !strcmp(dim, mask->dims[0])) return b;
    if (mask && mask->rank == 2 && !strcmp(dim, mask->dims[1])) return l;
    return -1;
}

/* A float input other than the features, filled with seeded standard normal values (the
 * query, key and value of the sdpa model). */
static oq_status normal_input(const oq_signature *sig, size_t i, int64_t batch, int64_t b, int64_t l, uint64_t seed,
                              oq_tensor **out, oq_err *err)
{
    const oq_io_info *io = &sig->mi->inputs[i];
    const oq_io_info *mask = sig->mask >= 0 ? &sig->mi->inputs[sig->mask] : NULL;
    int64_t shape[OQ_MAX_DIMS];
    int ok = oq_dtype_is_float((oq_dtype)io->elem_type) && io->rank >= 0 && io->rank <= OQ_MAX_DIMS;
    for (int32_t d = 0; ok && d < io->rank; d++) ok = (shape[d] = generated_size(mask, io->dims[d], b, l)) >= 0;
    if (!ok)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "generated events cannot make the model's input '%s' (they make features [B,L,F], a mask "
                          "[B,L] and float inputs whose axes are B, L or fixed): give input_files",
                          io->name);
    oq_status st = oq_tensor_create(out, (oq_dtype)io->elem_type, io->rank, shape, io->name, err);
    oq_rng r;
    oq_rng_seed(&r, seed, (uint64_t)batch * 64 + i);
    for (int64_t k = 0, n = st ? 0 : oq_tensor_numel(*out); k < n; k++) oq_tensor_set_f64(*out, k, oq_rng_normal(&r));
    return st;
}

/* Events make a 1 = valid mask; a model that reads 1 = padding is fed it so. */
static void invert_mask(oq_tensor *m)
{
    for (int64_t k = 0, n = oq_tensor_numel(m); k < n; k++) oq_tensor_set_f64(m, k, 1.0 - oq_tensor_get_f64(m, k));
}

/* One generated batch as the model's inputs: the events' features and mask, in the model's
 * dtypes, and seeded values for any other float input. */
static oq_status generated_inputs(const oq_signature *sig, const oq_events *ev, int64_t k, uint64_t seed,
                                  int64_t *idx, oq_batch_inputs *in, oq_err *err)
{
    memset(in, 0, sizeof *in);
    const oq_model_info *mi = sig->mi;
    oq_tensor *x = NULL, *m = NULL;
    oq_status st = sig->mask < 0 ? oq_err_set(err, OQ_ERR_INVALID_ARG,
                                              "generated events need a mask input [B,L]: give input_files (or mask_name)")
                                 : oq_events_make_batch(ev, k, &x, &m, idx, err);
    if (!st && !(in->t = calloc(mi->n_inputs, sizeof *in->t))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) {
        in->batch = m->shape[0];
        in->seq = m->shape[1];
        in->lengths = calloc(in->batch ? (size_t)in->batch : 1, sizeof *in->lengths);
        st = in->lengths ? oq_mask_check(m, x, in->lengths, err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; !st && i < mi->n_inputs; i++, in->n++) {
        oq_dtype want = (oq_dtype)mi->inputs[i].elem_type;
        const oq_tensor *src = (int)i == sig->mask ? m : (int)i == sig->features ? x : NULL;
        st = src ? oq_tensor_convert(src, want ? want : src->dtype, &in->t[i], err)
                 : normal_input(sig, i, k, in->batch, in->seq, seed, &in->t[i], err);
        if (!st) st = oq_tensor_set_name(in->t[i], mi->inputs[i].name, err);
        if (st) break;
        if ((int)i == sig->mask && sig->polarity == OQ_MASK_POLARITY_PAD) invert_mask(in->t[i]);
    }
    oq_tensor_free(x);
    oq_tensor_free(m);
    if (!st) st = oq_signature_check(sig, in, "generated events", err);
    if (!st) st = oq_signature_mask_axes(sig, in, NULL, err);
    if (st) oq_batch_inputs_clear(in);
    return st;
}

/* The features' width where nothing fixes it and none was asked: the demo encoder's (the tool's
 * --num-features default). */
#define OPEN_WIDTH 8

/* The width a [B, L, F] input fixes; 0 when F is symbolic. */
static int64_t fixed_width(const oq_io_info *io)
{
    char *end;
    long long f = io->rank == 3 ? strtoll(io->dims[2], &end, 10) : 0;
    return f > 0 && end != io->dims[2] && !*end ? f : 0;
}

/* The events' features take the width the model fixes, when it fixes one. A width asked for a
 * model of yours (events.num_features, not 0) counts only where its features input leaves F open:
 * where it fixes another, or there is no such input, the events could not have it. */
static oq_status events_for(const oq_validate_opts *o, const oq_signature *sig, oq_events_opts *e, oq_err *err)
{
    *e = o->events;
    const oq_io_info *f = sig->features >= 0 ? &sig->mi->inputs[sig->features] : NULL;
    int64_t width = f ? fixed_width(f) : 0, asked = o->events.num_features;
    int user_asked = o->kind == OQ_MODEL_USER && asked;
    if (user_asked && !f) /* a --features that names no input was refused with the signature */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "events.num_features sizes generated events' features, and %s has no "
                          "input they feed (a rank-3 float one, or features_name)", o->model_path);
    if (user_asked && width && width != asked)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "events.num_features %lld: %s's input '%s' fixes %lld features, and "
                          "generated events take that width", (long long)asked, o->model_path, f->name,
                          (long long)width);
    e->num_features = width ? width : asked ? asked : OPEN_WIDTH;
    return OQ_OK;
}

/* The generated batches, made by threads a window at a time: each batch is seeded by its own
 * index, so which thread makes it changes none of its bytes. A thread writes the batch's file
 * and its fixed-size facts (its window slot: the SHA-256, sizes, lengths and event indices);
 * this thread then puts the window's batches into the sink in order, so that what the run keeps
 * does not grow with the batches. The first failure (by batch) is the one reported; the
 * threads are joined before any worker is forked. */
typedef struct generation {
    const oq_validate_opts *o;
    const oq_signature *sig;
    const oq_events *ev;
    uint64_t seed;
    int64_t stride; /* the events one slot holds: --batch-size, at most --num-events */
    int64_t base;                 /* the window's first batch */
    oq_batch_info *slots;         /* GENERATION_WINDOW */
    int64_t *lengths, *event_idx; /* stride per slot */
    pthread_mutex_t lock;
    int64_t failed; /* the lowest batch that failed; the batch count while none did */
    oq_err err;     /* its error */
    int64_t n;      /* the batches */
} generation;

/* At most this many threads make batches: the files' directory serialises their creation
 * anyway, and each thread keeps a malloc arena. */
#define GENERATION_THREADS 4
/* Batches made between two hand-overs to the sink: enough to keep the threads busy. */
#define GENERATION_WINDOW 256

static void generate_one(void *ctx, int64_t j, int thread)
{
    (void)thread;
    generation *g = ctx;
    int64_t k = g->base + j;
    if (k > __atomic_load_n(&g->failed, __ATOMIC_RELAXED)) return;
    oq_err e = {0};
    oq_batch_inputs in = {0};
    oq_batch_info *bi = &g->slots[j];
    int64_t *idx = g->event_idx + j * g->stride, *lengths = g->lengths + j * g->stride;
    oq_status st = generated_inputs(g->sig, g->ev, k, g->seed, idx, &in, &e);
    if (st) oq_err_prefix(&e, "batch %lld: ", (long long)k);
    else st = write_batch_file(g->o->outdir, (size_t)k, (size_t)g->n, &in, idx, bi->sha256, &e);
    if (!st) {
        bi->batch_size = in.batch;
        bi->padded_length = in.seq;
        for (int64_t i = 0; i < in.batch; i++) lengths[i] = in.lengths ? in.lengths[i] : in.seq;
    }
    oq_batch_inputs_clear(&in);
    if (!st) return;
    pthread_mutex_lock(&g->lock);
    if (k < g->failed) {
        __atomic_store_n(&g->failed, k, __ATOMIC_RELAXED);
        g->err = e;
    }
    pthread_mutex_unlock(&g->lock);
}

/* The window's batches into the sink, in order; after a failure, its files removed instead
 * (a slot whose file was not made has no SHA-256: nothing to remove). */
static oq_status window_done(generation *g, int64_t m, oq_batch_sink *k, oq_err *err)
{
    oq_status st = g->failed < g->n ? g->err.status : OQ_OK;
    if (st) *err = g->err;
    for (int64_t j = 0; j < m; j++) {
        oq_batch_info *bi = &g->slots[j];
        char path[4096];
        inputs_path(g->o->outdir, (size_t)(g->base + j), (size_t)g->n, path, sizeof path);
        if (!st) {
            bi->index = g->base + j;
            bi->inputs = path;
            bi->lengths = g->lengths + j * g->stride;
            bi->event_indices = g->event_idx + j * g->stride;
            for (int64_t i = 0; i < bi->batch_size; i++) bi->valid_size += bi->lengths[i];
            if (!(st = oq_batch_sink_put(k, bi, err))) continue;
        }
        if (*bi->sha256) unlink(path); /* not put: the caller removes only those put */
    }
    return st;
}

static oq_status generated_batches(const oq_validate_opts *o, const oq_signature *sig, oq_batch_sink *k,
                                   oq_err *err)
{
    oq_events *ev;
    oq_events_opts eo;
    oq_status st = events_for(o, sig, &eo, err);
    if (!st) st = oq_events_create(&eo, &ev, err);
    if (st) return st;
    int64_t nb = oq_events_batch_count(ev);
    k->planned = (size_t)nb;
    /* a slot holds one batch's events: no more than the run has (--batch-size 2^31 with
     * --num-events 4 asked for 2^39 slots' worth of lengths: "out of memory", exit 3) */
    int64_t stride = eo.batch_size < eo.num_events ? eo.batch_size : eo.num_events;
    size_t per = (size_t)GENERATION_WINDOW * (size_t)stride;
    generation g = {o, sig, ev, eo.seed, stride, 0, calloc(GENERATION_WINDOW, sizeof *g.slots),
                    calloc(per, sizeof *g.lengths), calloc(per, sizeof *g.event_idx), PTHREAD_MUTEX_INITIALIZER,
                    nb, {0}, nb};
    oq_ref_team *team = NULL;
    int threads = oq_ref_threads(o->threads, nb);
    if (threads > GENERATION_THREADS) threads = GENERATION_THREADS;
    if (!g.slots || !g.lengths || !g.event_idx || oq_ref_team_create(threads, &team, err))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (; !st && g.base < nb; g.base += GENERATION_WINDOW) {
        int64_t m = nb - g.base < GENERATION_WINDOW ? nb - g.base : GENERATION_WINDOW;
        memset(g.slots, 0, (size_t)m * sizeof *g.slots);
        oq_ref_team_run(team, m, generate_one, &g);
        st = window_done(&g, m, k, err);
    }
    oq_ref_team_free(team); /* joined: one thread again */
    free(g.slots);
    free(g.lengths);
    free(g.event_idx);
    oq_events_free(ev);
    return st;
}

/* ---- saved batches ------------------------------------------------------------------ */

/* "inputs_007.npz" -> 7; -1 when the name does not end in _NNN.npz. */
static long batch_number(const char *path)
{
    const char *u = strrchr(path, '_'), *dot = strrchr(path, '.');
    if (!u || !dot || dot < u || strcmp(dot, ".npz")) return -1;
    char *end;
    long v = strtol(u + 1, &end, 10);
    return end == dot && end != u + 1 ? v : -1;
}

/* The expected outputs of batch k: the --expected file paired with its inputs, or the inputs
 * file itself; written to outdir/expected_NNN.npz. */
void oq_validate_expected_path(const oq_validate_opts *o, size_t k, char *path, size_t n)
{
    snprintf(path, n, "%s/expected_%0*zu.npz", o->outdir, oq_batch_digits(o->n_input_files), k);
}

/* The comment of the source read (saved outputs' provenance, validate --save-outputs) set on its
 * run-folder copy `copy`: the folder keeps who saved what it was judged against. */
static oq_status keep_comment(const char *comment, const char *copy, oq_err *err)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    if (!comment) return OQ_OK;
    oq_status st = oq_read_file(copy, &buf, &n, err);
    if (!st) st = oq_npz_set_comment(&buf, &n, comment, err);
    if (!st) st = oq_replace_file_nosync(copy, buf, n, err);
    free(buf);
    return st;
}

/* 1 when the model has an input or an output called `name`: then a member of that name is its own. */
static int model_io(const oq_model_info *mi, const char *name)
{
    return oq_find_io(mi->inputs, mi->n_inputs, name) || oq_find_io(mi->outputs, mi->n_outputs, name);
}

/* An expected_files entry (`e`, read from `src`) beside the batch's inputs file: its bookkeeping
 * members say what the batch says, as the inputs file's own must (`event_indices` the run's ids,
 * `lengths` the mask's), and outputs the inputs file holds too must be the same values. */
static oq_status saved_fits(const oq_validate_opts *o, const oq_signature *sig, size_t k, const oq_batch_inputs *in,
                            const oq_event_ids *ids, const oq_npz *held, const oq_npz *e, const char *src, oq_err *err)
{
    oq_status st = OQ_OK;
    if (!model_io(sig->mi, "event_indices"))
        st = oq_event_ids_match(e, src, ids, o->input_files[k], in->batch, err);
    if (!st && !model_io(sig->mi, "lengths")) st = oq_event_lengths_fit(e, ids, src, in, err);
    return st ? st : oq_signature_same_saved(sig, held, o->input_files[k], e, src, err);
}

/* The batch's saved outputs, checked and written to outdir: from the one read `f` of its own file
 * (an io.npz), else from its expected_files entry, read once too (its SHA-256 recorded). */
static oq_status expected_batch(const oq_validate_opts *o, const oq_signature *sig, size_t k, oq_batch_inputs *in,
                                oq_user_file *f, const oq_event_ids *ids, oq_batch_info *bi, char *path, oq_err *err)
{
    const char *src = o->n_expected_files ? o->expected_files[k] : o->input_files[k];
    long a = batch_number(o->input_files[k]), b = batch_number(src);
    if (o->n_expected_files && a >= 0 && b >= 0 && a != b)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "expected_files: %s is paired with %s (files are matched in order; their numbers differ)",
                          src, o->input_files[k]);
    oq_validate_expected_path(o, k, path, 4096);
    bi->expected = path;
    oq_user_file e = {0};
    oq_status st = o->n_expected_files ? oq_user_file_read(src, &e, err) : OQ_OK;
    if (!st && o->n_expected_files) st = saved_fits(o, sig, k, in, ids, f->z, e.z, src, err);
    if (!st) st = oq_signature_expected(sig, in, o->n_expected_files ? e.z : f->z, src, path, err);
    if (!st && o->n_expected_files) {
        bi->expected_source = (char *)src;
        memcpy(bi->expected_source_sha256, e.sha256, sizeof bi->expected_source_sha256);
    }
    if (!st) st = keep_comment(o->n_expected_files ? e.comment : f->comment, path, err);
    oq_user_file_clear(&e);
    return st ? st : oq_sha256_file(path, bi->expected_sha256, err);
}

/* The run's ids of the batch's events: its `event_indices` member, checked against the batch
 * and every id before (an id twice would count one event twice), else numbered on from the
 * batches before. A `lengths` member must say what the mask says: nothing is rewritten. */
static oq_status batch_events(const oq_validate_opts *o, const oq_npz *z, const oq_event_ids *ids,
                              const oq_batch_inputs *in, size_t k, oq_event_seen *seen, int64_t *idx, oq_err *err)
{
    const char *path = o->input_files[k];
    oq_status st = oq_event_ids_fit(ids, path, in->batch, err);
    if (!st && !is_input(in, "lengths")) st = oq_event_lengths_fit(z, ids, path, in, err);
    for (int64_t i = 0; !st && i < in->batch; i++) idx[i] = oq_event_id(ids, i);
    return st ? st : oq_event_seen_add(seen, idx, in->batch, !ids->v, o->input_files, k, err);
}

/* static_shapes exports one [B, L] (batch 0's): a batch of another shape could run on no exported
 * model, so it is refused before any work, not found out by every configuration. */
static oq_status static_fits(const oq_validate_opts *o, size_t k, const oq_batch_inputs *in, const oq_batch_sink *sink,
                             oq_err *err)
{
    if (!o->static_shapes || !sink->n || (in->batch == sink->first_bl[0] && in->seq == sink->first_bl[1])) return OQ_OK;
    return oq_err_set(err, OQ_ERR_SHAPE,
                      "static_shapes fixes B,L to batch 0's [%lld,%lld] (%s); batch %zu (%s) is [%lld,%lld]: give batches of "
                      "one shape, or leave static_shapes off",
                      (long long)sink->first_bl[0], (long long)sink->first_bl[1], o->input_files[0], k, o->input_files[k],
                      (long long)in->batch, (long long)in->seq);
}

/* The batch's own file, named with the SHA-256 of the bytes read in the record: `inputs` is a
 * rewrite of it. Borrowed (the sink writes the record and keeps no pointer). */
static void batch_source(oq_batch_info *bi, const char *path, const char sha[65])
{
    bi->source = (char *)path;
    memcpy(bi->source_sha256, sha, sizeof bi->source_sha256);
}

/* The batch's events and inputs, from its file read once (`f`; its `event_indices` member, unless
 * the model takes one, and its `lengths` member checked). */
static oq_status batch_of(const oq_validate_opts *o, const oq_signature *sig, size_t k, oq_user_file *f,
                          int64_t *next_event, oq_event_seen *seen, const oq_batch_sink *sink, oq_event_ids *ids,
                          oq_batch_inputs *in, int64_t **idx, oq_err *err)
{
    const char *path = o->input_files[k];
    int own = !oq_find_io(sig->mi->inputs, sig->mi->n_inputs, "event_indices"); /* else the model's input */
    oq_status st = own ? oq_event_ids_read(f->z, path, *next_event, ids, err) : OQ_OK;
    if (!own) ids->first = *next_event;
    if (!st) st = oq_signature_take_batch(sig, f->z, path, ids, in, err);
    if (!st) st = static_fits(o, k, in, sink, err);
    int64_t b = in->batch;
    if (!st && !(*idx = calloc(b ? (size_t)b : 1, sizeof **idx))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = batch_events(o, f->z, ids, in, k, seen, *idx, err);
    *next_event += b;
    return st;
}

/* The batch is put into the sink, or its files are removed. Its file is read once: the SHA-256
 * recorded as its source is of the bytes judged. */
static oq_status loaded_batch(const oq_validate_opts *o, const oq_signature *sig, int expected, size_t k,
                              int64_t *next_event, oq_event_seen *seen, oq_batch_sink *sink, oq_err *err)
{
    oq_user_file f;
    oq_event_ids ids = {0};
    oq_batch_inputs in = {0};
    int64_t *idx = NULL;
    oq_status st = oq_user_file_read(o->input_files[k], &f, err);
    if (!st) st = oq_event_seen_file(seen, f.z, o->input_files, err);
    if (!st) st = batch_of(o, sig, k, &f, next_event, seen, sink, &ids, &in, &idx, err);
    int64_t *lengths = st ? NULL : calloc(in.batch ? (size_t)in.batch : 1, sizeof *lengths);
    if (!st && !lengths) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    char inputs[4096] = "", exp[4096] = "";
    oq_batch_info bi = {0};
    if (!st) st = write_batch(o->outdir, k, o->n_input_files, &in, idx, lengths, inputs, &bi, err);
    if (!st) batch_source(&bi, o->input_files[k], f.sha256);
    if (!st && expected) st = expected_batch(o, sig, k, &in, &f, &ids, &bi, exp, err);
    oq_user_file_clear(&f);
    if (!st) st = oq_signature_mask_axes(sig, &in, *exp ? exp : NULL, err);
    if (!st) st = oq_batch_sink_put(sink, &bi, err);
    if (st && *inputs) unlink(inputs);
    if (st && *exp) unlink(exp);
    free(idx);
    free(lengths);
    oq_event_ids_clear(&ids);
    oq_batch_inputs_clear(&in);
    return st;
}

oq_status oq_validate_prepare_batches(const oq_validate_opts *o, const oq_signature *sig, int expected,
                                      oq_batch_sink *k, oq_err *err)
{
    if (!o->n_input_files) return generated_batches(o, sig, k, err);
    if (o->n_expected_files && o->n_expected_files != o->n_input_files)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "expected_files: %zu files for %zu input_files (they are matched batch by batch, in order)",
                          o->n_expected_files, o->n_input_files);
    int64_t next = 0;
    oq_event_seen *seen = NULL;
    oq_status st = oq_event_seen_create(&seen, err);
    k->planned = o->n_input_files;
    for (size_t i = 0; !st && i < o->n_input_files; i++) st = loaded_batch(o, sig, expected, i, &next, seen, k, err);
    oq_event_seen_free(seen);
    return st;
}

void oq_validate_unprepare(const oq_validate_opts *o, int expected, const oq_batch_sink *k)
{
    char path[4096];
    for (size_t i = 0; i < k->n; i++) {
        inputs_path(o->outdir, i, k->planned, path, sizeof path);
        unlink(path);
        if (!expected) continue;
        oq_validate_expected_path(o, i, path, sizeof path);
        unlink(path);
    }
}

/* ---- models ------------------------------------------------------------------------ */

oq_attn_format oq_repr_attn_format(oq_repr r)
{
    return r == OQ_REPR_ATTENTION23 ? OQ_ATTN_ATTENTION23
           : r == OQ_REPR_ATTENTION24 ? OQ_ATTN_ATTENTION24 : OQ_ATTN_DECOMPOSED;
}

/* The model's bytes written, hashed as written: the plans name the exports by them, and the
 * file is never read back for it. */
static oq_status write_model(const oq_graph *g, const char *path, char sha[65], oq_err *err)
{
    uint8_t *buf;
    size_t len;
    oq_status st = oq_graph_serialize(g, &buf, &len, err);
    if (st) return oq_err_prefix(err, "%s: ", path);
    oq_sha256_buf(buf, len, sha);
    st = oq_write_file_atomic(path, buf, len, 1, err);
    free(buf);
    return st;
}

/* Exports the ONNX file of one configuration; it depends only on the representation and
 * precision, so run_config calls this once for each pair. */
oq_status oq_validate_model_file(const oq_validate_opts *o, const oq_encoder_weights *w,
                                 const oq_config *c, const int64_t *static_bl, char *path,
                                 size_t n, char sha[65], oq_err *err)
{
    *sha = 0;
    if (o->kind == OQ_MODEL_USER) {
        snprintf(path, n, "%s", o->model_path);
        return OQ_OK;
    }
    const char *kind = o->kind == OQ_MODEL_ENCODER ? "encoder" : "sdpa";
    snprintf(path, n, "%s/%s_%s_%s%s%s%s%s.onnx", o->outdir, kind, oq_repr_name(c->repr),
             oq_precision_name(c->precision), o->mask_form ? "_" : "",
             o->mask_form ? oq_mask_form_name(o->mask_form) : "", o->elu_op ? "_eluop" : "",
             o->static_shapes ? "_static" : "");
    oq_graph *g = NULL;
    oq_dtype adt = c->precision == OQ_PREC_FP16 ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32;
    oq_status st;
    if (o->kind == OQ_MODEL_ENCODER) {
        oq_encoder_export x = {.format = oq_repr_attn_format(c->repr), .mask = o->mask_form, .attention_dtype = adt,
                               .static_batch = static_bl[0], .static_seq = static_bl[1],
                               .elu_op = o->elu_op};
        st = oq_export_encoder(w, &x, &g, err);
    } else {
        oq_sdpa_config s = o->sdpa;
        s.format = oq_repr_attn_format(c->repr);
        s.attention_dtype = adt;
        s.mask = o->mask_form;
        s.static_batch = static_bl[0];
        s.static_seq = static_bl[1];
        st = oq_export_sdpa(&s, &g, err);
    }
    if (!st) st = write_model(g, path, sha, err);
    oq_graph_free(g);
    return st;
}
