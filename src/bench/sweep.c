/* The scaling sweep: variants x batch sizes x lengths x modes x export shapes. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench/bench-impl.h"
#include "core/core-impl.h"
#include "ortqual/compare.h"
#include "ortqual/events.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"
#include "ortqual/mask.h"
#include "runtime/runtime-impl.h"
#include "runtime/sessioncfg-impl.h"
#include "status/args-impl.h"

void oq_bench_opts_default(oq_bench_opts *o)
{
    if (!o) return;
    static const int64_t batch_sizes[] = {1};
    static const int64_t seq_lens[] = {128, 512, 2048};
    *o = (oq_bench_opts){.n_batch_sizes = 1, .batch_sizes = batch_sizes, .n_seq_lens = 3, .seq_lens = seq_lens,
                         .length_policy = OQ_LENGTH_FRACTION, .mask_fraction = 0.25,
                         .modes = OQ_BENCH_MASKED | OQ_BENCH_UNMASKED, .shapes = OQ_BENCH_DYNAMIC,
                         .heads = 8, .kv_heads = 8, .head_dim = 64, .warmup = 3, .iters = 20, .seed = 12345,
                         .io_binding = OQ_IO_AUTO, .reference = 1, .mem_sample_us = 2000, .int_hi = 1, .padding = -1};
}

const char *oq_bench_status_name(oq_bench_status s)
{
    static const char *const names[] = {"ok", "skipped", "unsupported", "oom", "failed", "error"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

oq_status oq_bench_variant_parse(const char *text, oq_bench_variant *out, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, out);
    oq_status st = oq_config_parse(text && !strcmp(text, "ref") ? "ref:sdpa:fp64" : text, out, err);
    if (st) return st;
    if (out->repr == OQ_REPR_ENCODER || out->repr == OQ_REPR_MODEL || out->repr == OQ_REPR_EXPECTED)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "variant '%s': bench times attention only (sdpa models): use ref, or "
                          "decomposed, attention23 or attention24 on an ORT runtime",
                          text);
    return OQ_OK;
}

static int is_ref(const oq_bench_variant *v) { return !oq_config_uses_ort(v); }

static size_t count_bits(unsigned x) { return (size_t)__builtin_popcount(x); }

size_t oq_bench_row_count(const oq_bench_opts *o)
{
    if (!o) return 0;
    if (o->model_path) return oq_bench_point_count(o);
    size_t n_ref = 0;
    for (size_t i = 0; i < o->n_variants; i++) n_ref += is_ref(&o->variants[i]);
    size_t per_shape = count_bits(o->shapes & 3u) * (o->n_variants - n_ref) + n_ref;
    return o->n_batch_sizes * o->n_seq_lens * count_bits(o->modes & 3u) * per_shape;
}

/* The query [B,H,L,D] float32 is the largest tensor a group makes (key and value have G <= H
 * heads, the mask is [B,L]): one whose size overflows is refused, naming the option, the value
 * and the tensor, before anything runs (a size that only cannot be allocated is an oom row). */
static oq_status check_sizes(const oq_bench_opts *o, oq_err *err)
{
    for (size_t i = 0; i < o->n_batch_sizes; i++)
        for (size_t k = 0; k < o->n_seq_lens; k++) {
            int64_t b = o->batch_sizes[i], l = o->seq_lens[k], bytes;
            if (!__builtin_mul_overflow(b, (int64_t)o->heads, &bytes) && !__builtin_mul_overflow(bytes, l, &bytes) &&
                !__builtin_mul_overflow(bytes, (int64_t)o->head_dim * 4, &bytes))
                continue;
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "opts.seq_lens %lld (opts.batch_sizes %lld): the query [%lld,%d,%lld,%d] float32: its size "
                              "overflows 2^63 bytes",
                              (long long)l, (long long)b, (long long)b, o->heads, (long long)l, o->head_dim);
        }
    return OQ_OK;
}

static oq_status check_opts(const oq_bench_opts *o, oq_err *err)
{
    /* the sweep's exported models read 1 = valid; a given keep would be ignored all the same */
    if (o->mask_polarity != OQ_MASK_POLARITY_KEEP || (o->given & OQ_BENCH_GIVEN_MASK_POLARITY))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask_polarity reads the mask of a model_path file; ortqual's attention "
                          "models read 1 = valid");
    if (!o->n_batch_sizes || !o->n_seq_lens || !o->n_variants)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "need at least one batch size, length and variant");
    for (size_t i = 0; i < o->n_batch_sizes; i++)
        if (o->batch_sizes[i] < 1)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "batch size %lld: must be >= 1",
                              (long long)o->batch_sizes[i]);
    for (size_t i = 0; i < o->n_seq_lens; i++)
        if (o->seq_lens[i] < 1)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "sequence length %lld: must be >= 1",
                              (long long)o->seq_lens[i]);
    if (!(o->modes & 3u)) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no mode (masked/unmasked)");
    if (!(o->shapes & 3u)) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no export shapes");
    /* Lengths are those of masked batches only: asked for with none, they would be ignored. */
    unsigned lengths = o->given & (OQ_BENCH_GIVEN_LENGTH_POLICY | OQ_BENCH_GIVEN_MASK_FRACTION);
    if (lengths && !(o->modes & OQ_BENCH_MASKED))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          lengths & OQ_BENCH_GIVEN_LENGTH_POLICY
                              ? "opts.length_policy shapes the padding of masked batches; opts.modes without "
                                "OQ_BENCH_MASKED makes none, so it would be ignored"
                              : "opts.mask_fraction shapes the padding of masked batches; opts.modes without "
                                "OQ_BENCH_MASKED makes none, so it would be ignored");
    if (!(o->mask_fraction >= 0 && o->mask_fraction < 1))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask fraction %g: must be in [0, 1)",
                          o->mask_fraction);
    for (size_t i = 0; (o->modes & OQ_BENCH_MASKED) && i < o->n_seq_lens; i++) {
        oq_status st = oq_bench_check_fraction(o, o->seq_lens[i], err); /* every length, not the first row's */
        if (st) return st;
    }
    if (o->heads < 1 || o->kv_heads < 1 || o->head_dim < 1 || o->heads % o->kv_heads)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "heads %d, kv heads %d, head dim %d: all >= 1 and kv heads dividing heads",
                          o->heads, o->kv_heads, o->head_dim);
    if (o->iters < 1) return oq_err_set(err, OQ_ERR_INVALID_ARG, "iters must be >= 1");
    if (o->threads < 0) return oq_err_set(err, OQ_ERR_INVALID_ARG, "threads must be >= 0");
    if (o->n_variants > OQ_BENCH_MAX_VARIANTS)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "more than %d variants", OQ_BENCH_MAX_VARIANTS);
    return check_sizes(o, err);
}

/* ---- inputs of one (batch, length, mode) group --------------------------------- */

/* A standard normal float32 tensor from stream `stream` of the seed. */
static oq_status normal_tensor(const char *name, int64_t b, int64_t h, int64_t l, int64_t d,
                               uint64_t seed, uint64_t stream, oq_tensor **out, oq_err *err)
{
    int64_t shape[4] = {b, h, l, d};
    oq_status st = oq_tensor_create(out, OQ_DTYPE_FLOAT32, 4, shape, name, err);
    if (st) return st;
    oq_rng r;
    oq_rng_seed(&r, seed, stream);
    float *x = (*out)->data;
    for (int64_t i = 0, n = oq_tensor_numel(*out); i < n; i++) x[i] = (float)oq_rng_normal(&r);
    return OQ_OK;
}

/* Streams far above the events' (0 and 1 + event index). */
#define QKV_STREAM (UINT64_C(1) << 40)

/* Frees what the group holds; its shape and counts stay (the rows of a group whose inputs could
 * not be made still name them). */
static void group_free_data(oq_bench_group *g)
{
    for (int i = 0; i < 4; i++) oq_tensor_free(g->in[i]);
    oq_tensor_free(g->ref_out);
    oq_bench_reference_clear(g);
    free(g->lengths);
    memset(g->in, 0, sizeof g->in);
    g->ref_out = NULL;
    g->lengths = NULL;
}

static void group_clear(oq_bench_group *g)
{
    group_free_data(g);
    memset(g, 0, sizeof *g);
}

/* On failure the group keeps its shape, holding no data. */
static oq_status group_make(const oq_bench_opts *o, int64_t B, int64_t L, int masked,
                            oq_bench_group *g, oq_err *err)
{
    memset(g, 0, sizeof *g);
    g->batch = B;
    g->seq_len = L;
    g->masked = masked;
    g->n_in = masked ? 4 : 3;
    g->lengths = calloc((size_t)B, sizeof *g->lengths); /* calloc checks B * size for a wrap */
    if (!g->lengths) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = masked ? oq_bench_event_lengths(o, B, L, g->lengths, err) : OQ_OK;
    for (int64_t b = 0; !masked && b < B; b++) g->lengths[b] = L;
    for (int64_t b = 0; !st && b < B; b++) {
        int64_t pairs;
        g->valid_tokens += g->lengths[b];
        /* saturated: a length whose square overflows is an oom row, not undefined behaviour */
        if (__builtin_mul_overflow(g->lengths[b], g->lengths[b], &pairs) ||
            __builtin_add_overflow(g->valid, pairs, &g->valid))
            g->valid = INT64_MAX;
    }
    /* q, k, v first: the largest, so an impossible length fails before the mask is filled */
    if (!st) st = normal_tensor("query", B, o->heads, L, o->head_dim, o->seed, QKV_STREAM, &g->in[0], err);
    if (!st) st = normal_tensor("key", B, o->kv_heads, L, o->head_dim, o->seed, QKV_STREAM + 1, &g->in[1], err);
    if (!st) st = normal_tensor("value", B, o->kv_heads, L, o->head_dim, o->seed, QKV_STREAM + 2, &g->in[2], err);
    if (!st && masked) st = oq_mask_make(g->lengths, B, L, OQ_DTYPE_FLOAT32, &g->in[3], err);
    if (st) group_free_data(g);
    return st;
}

/* ---- rows ------------------------------------------------------------------------- */

static void row_init(oq_bench_row *row, const oq_bench_opts *o, const oq_bench_variant *v,
                     const oq_bench_group *g, int static_shapes)
{
    oq_bench_row_init(row, o, v);
    row->masked = g->masked;
    row->static_shapes = is_ref(v) ? -1 : static_shapes;
    row->batch = g->batch;
    row->seq_len = g->seq_len;
    row->valid_pairs = g->valid;
    row->valid_tokens = g->valid_tokens;
    row->heads = o->heads;
    row->kv_heads = o->kv_heads;
    row->head_dim = o->head_dim;
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return 1;
    return 0;
}

/* Sort an error into the statuses of oq_bench_status (see bench.h). */
oq_bench_status oq_bench_classify(oq_status st, const char *msg)
{
    if (st == OQ_ERR_NOMEM || contains_ci(msg, "out of memory") ||
        contains_ci(msg, "failed to allocate") || contains_ci(msg, "bad_alloc") ||
        contains_ci(msg, "cudaErrorMemoryAllocation"))
        return OQ_BENCH_OOM;
    if (st == OQ_ERR_NOT_FOUND) return OQ_BENCH_SKIPPED;
    if (st == OQ_ERR_UNSUPPORTED) return OQ_BENCH_UNSUPPORTED; /* ORT's NOT_IMPLEMENTED too */
    if (st == OQ_ERR_RUNTIME) return OQ_BENCH_ERROR; /* as validate's refused configuration */
    return OQ_BENCH_FAILED;
}

/* ---- the sweep's state -------------------------------------------------------------- */

typedef struct sweep_ctx {
    oq_runtime *rt;
    const oq_bench_opts *o;
    oq_bench_progress_fn progress;
    void *user;
    oq_bench_rows *rows;
    size_t total;
    oq_status group_st; /* the group's inputs could not be made (out of memory): every row of it */
    oq_err group_err;   /* says so, and the sweep goes on */
} sweep_ctx;

/* Compute the group's reference output once (the accuracy baseline), counted in the rows. */
static oq_status group_reference(sweep_ctx *c, oq_bench_group *g, oq_err *err)
{
    if (g->ref_out) return OQ_OK;
    g->ref_tried = 1;
    double t0 = oq_now_s();
    oq_status st = oq_bench_reference(g, c->o->threads, &g->ref_out, err);
    g->ref_ms = 1e3 * (oq_now_s() - t0);
    c->rows->reference_shapes += !st;
    c->rows->reference_ms += g->ref_ms;
    return st;
}

/* The group's reference when the first variant that ran needs it: a shape whose variants were
 * all skipped (no CUDA here) computes none, which at L=16384 is most of such a sweep's time. Its
 * computation is not the row's: taken out of the row's peak (noted before it, reset after), and
 * the output it keeps for the rows after is in this row's baseline as in theirs. Returns whether
 * there is a reference to compare with (one that failed leaves the rows without accuracy). */
static int lazy_reference(sweep_ctx *c, oq_bench_group *g, oq_bench_row *row)
{
    if (g->ref_out || g->ref_tried || !c->o->reference) return g->ref_out != NULL;
    uint64_t before = 0, after = 0, hwm = 0;
    oq_bench_row_peak_note(row);
    oq_proc_memory(&before, &hwm, NULL);
    oq_err e = {0};
    group_reference(c, g, &e);
    oq_proc_memory(&after, &hwm, NULL);
    if (row->vmhwm_row) oq_proc_peak_reset(NULL);
    if (row->rss_before >= 0) row->rss_before += (int64_t)after - (int64_t)before;
    return g->ref_out != NULL;
}

typedef struct accuracy_ctx {
    sweep_ctx *c;
    oq_bench_group *g;
} accuracy_ctx;

/* Compare a variant's first output with the reference on valid elements (m->check). */
static oq_status row_accuracy(void *ctx, size_t n_out, oq_tensor **outs, oq_bench_row *row, oq_err *err)
{
    (void)err;
    const accuracy_ctx *a = ctx;
    const oq_bench_group *g = a->g;
    if (!n_out || !lazy_reference(a->c, a->g, row)) return OQ_OK;
    oq_compare_opts co = oq_compare_opts_default(oq_precision_is_reduced(row->variant.precision)
                                                     ? OQ_DTYPE_FLOAT16
                                                     : OQ_DTYPE_FLOAT32);
    co.lengths = g->lengths;
    co.seq_axis = 2; /* [B, H, L, D] */
    co.check_padding = g->masked;
    oq_compare_result res;
    oq_err e = {0};
    if (oq_compare_tensors(outs[0], g->ref_out, &co, &res, &e) != OQ_OK) {
        snprintf(row->error, sizeof row->error, "accuracy: %.1000s", e.msg);
        return OQ_OK;
    }
    row->max_abs_err = res.max_abs;
    row->max_rel_err = res.max_rel;
    row->nan_count = res.nan_count;
    row->inf_count = res.inf_count;
    row->pad_nonzero = res.padding_checked ? res.pad_nonzero : 0;
    row->rtol = co.tol.rtol;
    row->atol = co.tol.atol;
    row->over_tol = res.over_tol;
    return OQ_OK;
}


static oq_status finish_stats(oq_bench_row *row, oq_err *err)
{
    return oq_stats_compute(row->samples_ms, row->n_samples, &row->stats, err);
}

/* ---- the reference as a variant -------------------------------------------------- */

static size_t ref_iters(const oq_bench_opts *o) { return o->ref_iters ? o->ref_iters : o->iters; }

static void run_ref_row(sweep_ctx *c, oq_bench_group *g, oq_bench_row *row)
{
    const oq_bench_opts *o = c->o;
    oq_err e = {0};
    oq_bench_row_peak_begin(row); /* the reference's first run counts when this row computes it */
    oq_status st = group_reference(c, g, &e);
    if (st) {
        oq_bench_row_fail(row, st, &e);
        return;
    }
    row->first_run_ms = g->ref_ms;
    row->warmup = 0;
    row->iters = ref_iters(o);
    oq_mem_sampler *ms = NULL;
    oq_mem_sampler_start(o->mem_sample_us, &ms, NULL);
    for (size_t i = 0; i < row->iters; i++) {
        oq_tensor *y = NULL;
        double a = oq_now_s();
        st = oq_bench_reference(g, o->threads, &y, &e);
        double b = oq_now_s();
        oq_tensor_free(y);
        if (st) break;
        row->samples_ms[row->n_samples++] = 1e3 * (b - a);
    }
    if (ms) row->peak_rss = (int64_t)oq_mem_sampler_stop(ms);
    oq_bench_row_peak_note(row);
    if (st) {
        oq_bench_row_fail(row, st, &e);
        return;
    }
    if ((st = finish_stats(row, &e))) oq_bench_row_fail(row, st, &e);
}

/* ---- an ORT variant ----------------------------------------------------------------- */

static oq_status export_model(const oq_bench_opts *o, const oq_bench_variant *v,
                              const oq_bench_group *g, int static_shapes, uint8_t **buf,
                              size_t *len, oq_err *err)
{
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.heads = o->heads;
    c.kv_heads = o->kv_heads;
    c.head_dim = o->head_dim;
    c.layout = 4;
    c.static_batch = static_shapes ? g->batch : 0;
    c.static_seq = static_shapes ? g->seq_len : 0;
    c.format = v->repr == OQ_REPR_DECOMPOSED    ? OQ_ATTN_DECOMPOSED
               : v->repr == OQ_REPR_ATTENTION23 ? OQ_ATTN_ATTENTION23
                                                : OQ_ATTN_ATTENTION24;
    c.mask = g->masked ? OQ_MASK_AUTO : OQ_MASK_NONE;
    c.attention_dtype = v->precision == OQ_PREC_FP16 ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32;
    oq_graph *gr = NULL;
    oq_status st = oq_export_sdpa(&c, &gr, err);
    if (!st) st = oq_graph_serialize(gr, buf, len, err);
    oq_graph_free(gr);
    if (st) oq_err_prefix(err, "export: ");
    return st;
}

static void run_ort_row(sweep_ctx *c, oq_bench_group *g, int static_shapes, size_t index, oq_bench_row *row)
{
    const oq_bench_opts *o = c->o;
    oq_err e = {0};
    uint8_t *model = NULL;
    size_t len = 0;
    oq_status st = export_model(o, &row->variant, g, static_shapes, &model, &len, &e);
    if (st) {
        oq_bench_row_fail(row, st == OQ_ERR_INVALID_ARG ? OQ_ERR_UNSUPPORTED : st, &e); /* no such model */
        return;
    }
    accuracy_ctx a = {c, g};
    oq_bench_model m = {.bytes = model, .len = len, .n_in = g->n_in, .in = g->in, .check = row_accuracy,
                        .check_ctx = &a};
    oq_bench_run_ort_row(c->rt, o, &m, index, row);
    oq_bench_row_judge_accuracy(row);
    free(model);
}

/* ---- the sweep ------------------------------------------------------------------- */

static oq_status do_row(sweep_ctx *c, oq_bench_group *g, const oq_bench_variant *v,
                        int static_shapes, oq_err *err)
{
    oq_bench_row *row = &c->rows->rows[c->rows->n];
    row_init(row, c->o, v, g, static_shapes);
    size_t n = is_ref(v) ? ref_iters(c->o) : c->o->iters;
    row->samples_ms = calloc(n, sizeof *row->samples_ms);
    if (!row->samples_ms) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory for %zu timing samples (opts.iters)", n);
    c->rows->n++;
    if (c->progress) c->progress(c->user, c->rows->n - 1, c->total, row, 0);
    if (c->group_st)
        oq_bench_row_fail(row, c->group_st, &c->group_err);
    else if (is_ref(v))
        run_ref_row(c, g, row);
    else
        run_ort_row(c, g, static_shapes, c->rows->n - 1, row);
    if (c->progress) c->progress(c->user, c->rows->n - 1, c->total, row, 1);
    return OQ_OK;
}

static oq_status do_group(sweep_ctx *c, oq_bench_group *g, oq_err *err)
{
    const oq_bench_opts *o = c->o;
    int first_pass = 1;
    for (int shp = 0; shp < 2; shp++) {
        if (!(o->shapes & (1u << shp))) continue;
        for (size_t i = 0; i < o->n_variants; i++) {
            const oq_bench_variant *v = &o->variants[i];
            if (is_ref(v) && !first_pass) continue;
            oq_status st = do_row(c, g, v, shp == 1, err);
            if (st) return st;
        }
        first_pass = 0;
    }
    return OQ_OK;
}

static oq_status attention_sweep(oq_runtime *rt, const oq_bench_opts *o, oq_bench_progress_fn progress, void *user,
                                 oq_bench_rows **out, oq_err *err)
{
    oq_status st = check_opts(o, err);
    if (!st && o->ready) st = o->ready(o->ready_ctx, err);
    if (st) return st;
    sweep_ctx c = {rt, o, progress, user, NULL, oq_bench_row_count(o)};
    c.rows = calloc(1, sizeof *c.rows);
    if (c.rows) c.rows->rows = calloc(c.total ? c.total : 1, sizeof *c.rows->rows);
    if (!c.rows || !c.rows->rows) {
        oq_bench_rows_free(c.rows);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    for (size_t bi = 0; !st && bi < o->n_batch_sizes; bi++)
        for (size_t li = 0; !st && li < o->n_seq_lens; li++)
            for (int mode = 0; !st && mode < 2; mode++) {
                if (!(o->modes & (mode ? OQ_BENCH_UNMASKED : OQ_BENCH_MASKED))) continue;
                oq_bench_group g;
                c.group_st = group_make(o, o->batch_sizes[bi], o->seq_lens[li], mode == 0, &g, &c.group_err);
                if (c.group_st && c.group_st != OQ_ERR_NOMEM) {
                    st = c.group_st;
                    *err = c.group_err;
                }
                if (!st) st = do_group(&c, &g, err);
                group_clear(&g);
            }
    if (st) {
        oq_bench_rows_free(c.rows);
        return st;
    }
    *out = c.rows;
    return OQ_OK;
}

/* The session config entries every row's session gets, checked before the first row as each
 * session would check them (oq_session_create): a key given twice, or one this ORT (`rt`) is not
 * known to read, would fail every row. */
static oq_status session_configs(oq_runtime *rt, const oq_bench_opts *o, oq_err *err)
{
    OQ_NEED_N(err, o->n_session_configs, o->session_config_keys);
    OQ_NEED_N(err, o->n_session_configs, o->session_config_values);
    for (size_t i = 0; i < o->n_session_configs; i++)
        if (!o->session_config_keys[i] || !o->session_config_values[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_bench_sweep: opts->session_config_%s[%zu] is NULL",
                              o->session_config_keys[i] ? "values" : "keys", i);
    oq_status st = oq_session_config_repeated("oq_bench_sweep", "opts->session_config_keys", o->n_session_configs,
                                              o->session_config_keys, o->session_config_values, err);
    for (size_t i = 0; !st && i < o->n_session_configs; i++)
        st = oq_session_config_check_for(oq_runtime_version(rt), o->session_config_keys[i],
                                         o->session_config_values[i], NULL, 0, err);
    return st;
}

oq_status oq_bench_sweep(oq_runtime *rt, const oq_bench_opts *o, oq_bench_progress_fn progress,
                         void *user, oq_bench_rows **out, oq_err *err)
{
    OQ_NEED(err, rt);
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    *out = NULL;
    char start[32], sha[65];
    oq_bench_utc_now(start);
    /* the library named by its bytes before the sweep: one replaced during it is still named by
     * what ran (the evidence, after the sweep, takes this digest) */
    (void)oq_runtime_lib_sha256(rt, sha, NULL, 0);
    oq_status st = session_configs(rt, o, err);
    if (!st)
        st = o->model_path ? oq_bench_model_sweep(rt, o, progress, user, out, err)
                           : attention_sweep(rt, o, progress, user, out, err);
    if (!st) memcpy((*out)->start, start, sizeof start);
    return st;
}

void oq_bench_rows_free(oq_bench_rows *rows)
{
    if (!rows) return;
    for (size_t i = 0; i < rows->n; i++) {
        oq_bench_row *r = &rows->rows[i];
        free(r->samples_ms);
        oq_kvs_free(r->alloc_stats, r->n_alloc_stats);
        free(r->dims);
        free(r->inputs);
        free(r->outputs);
    }
    oq_bench_comparison_free(rows->baseline);
    oq_bench_rows_drop_notes(rows);
    free(rows->rows);
    free(rows);
}
