/* ONNX Attention (opsets 23 and 24) in float64: see include/ortqual/reference.h.
 *
 * Layout of the work: the inputs are converted once to float64 in a layout that
 * the inner loops read with unit stride (Q pre-scaled [B,Hq,Lq,D], K transposed
 * per kv head [B,Hkv,D,T], V [B,Hkv,T,Dv]); then every query row is computed
 * on its own with an O(T) scores buffer: scores, softcap, masks, softmax and
 * the weighted sum of V. Rows are spread over OpenMP threads in blocks. */
#include "ortqual/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "reference/attention-impl.h"

/* Query rows per scheduling unit: large enough to amortize scheduling,
 * small enough to balance causal rows (whose cost grows with i). */
#define ROW_BLOCK 16

void oq_ref_attention_attrs_default(oq_ref_attention_attrs *attrs)
{
    memset(attrs, 0, sizeof *attrs);
    attrs->scale = NAN;
}

void oq_ref_attention_outputs_clear(oq_ref_attention_outputs *out)
{
    if (!out) return;
    oq_tensor_free(out->y);
    oq_tensor_free(out->present_key);
    oq_tensor_free(out->present_value);
    oq_tensor_free(out->qk_matmul_output);
    out->y = out->present_key = out->present_value = out->qk_matmul_output = NULL;
}

/* Everything the row kernel needs, resolved from the inputs once. */
typedef struct attn_ctx {
    int64_t B, Hq, Hkv, Lq, Lkv, P, T, D, Dv, group;
    int three_d, mode, want_qk;
    double softcap;
    double *q;   /* [B,Hq,Lq,D], already multiplied by scale */
    double *kt;  /* [B,Hkv,D,T] */
    double *v;   /* [B,Hkv,T,Dv] */
    int64_t *key_end;  /* [B] keys at or past key_end[b] are padding (nonpad_kv_seqlen or T) */
    int64_t *causal_off; /* [B] query i sees keys j <= i + causal_off[b] (when causal) */
    int causal;
    oq_ref_mask mask;
    oq_tensor *y, *qk;
} attn_ctx;

static oq_status check_float(const oq_tensor *t, const char *name, oq_err *err)
{
    if (!oq_dtype_is_float(t->dtype))
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "Attention input %s has dtype %s (float32, float16, bfloat16 or "
                          "float64 expected)",
                          name, oq_dtype_name(t->dtype));
    return OQ_OK;
}

static oq_status dim_mismatch(oq_err *err, const char *what, const char *a, int ax_a,
                              int64_t va, const char *b, int ax_b, int64_t vb)
{
    return oq_err_set(err, OQ_ERR_SHAPE, "Attention %s: %s axis %d is %lld but %s axis %d is %lld",
                      what, a, ax_a, (long long)va, b, ax_b, (long long)vb);
}

/* Head count and head size of a 3-D [B, L, H*D] tensor. */
static oq_status split_hidden(const oq_tensor *t, const char *name, int64_t heads,
                              const char *attr, int64_t *head_size, oq_err *err)
{
    if (heads <= 0)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention with 3-D inputs needs attribute %s > 0 (got %lld)", attr,
                          (long long)heads);
    if (t->shape[2] % heads)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention input %s: hidden size %lld (axis 2) is not a multiple of "
                          "%s=%lld",
                          name, (long long)t->shape[2], attr, (long long)heads);
    *head_size = t->shape[2] / heads;
    return OQ_OK;
}

static oq_status resolve_qkv(attn_ctx *c, const oq_ref_attention_attrs *a,
                             const oq_ref_attention_inputs *in, oq_err *err)
{
    const oq_tensor *q = in->q, *k = in->k, *v = in->v;
    oq_status st;
    if ((st = check_float(q, "Q", err)) || (st = check_float(k, "K", err)) ||
        (st = check_float(v, "V", err)))
        return st;
    if (q->ndim != k->ndim || q->ndim != v->ndim || (q->ndim != 3 && q->ndim != 4))
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention Q, K, V must all be 3-D or all 4-D (ranks %d, %d, %d)",
                          q->ndim, k->ndim, v->ndim);
    c->three_d = q->ndim == 3;
    c->B = q->shape[0];
    if (k->shape[0] != c->B) return dim_mismatch(err, "batch", "K", 0, k->shape[0], "Q", 0, c->B);
    if (v->shape[0] != c->B) return dim_mismatch(err, "batch", "V", 0, v->shape[0], "Q", 0, c->B);
    int seq_ax = c->three_d ? 1 : 2;
    c->Lq = q->shape[seq_ax];
    c->Lkv = k->shape[seq_ax];
    if (v->shape[seq_ax] != c->Lkv)
        return dim_mismatch(err, "kv sequence length", "V", seq_ax, v->shape[seq_ax], "K",
                            seq_ax, c->Lkv);
    int64_t dk, dv_;
    if (c->three_d) {
        c->Hq = a->q_num_heads;
        c->Hkv = a->kv_num_heads;
        if ((st = split_hidden(q, "Q", c->Hq, "q_num_heads", &c->D, err)) ||
            (st = split_hidden(k, "K", c->Hkv, "kv_num_heads", &dk, err)) ||
            (st = split_hidden(v, "V", c->Hkv, "kv_num_heads", &dv_, err)))
            return st;
    } else {
        c->Hq = q->shape[1];
        c->Hkv = k->shape[1];
        c->D = q->shape[3];
        dk = k->shape[3];
        dv_ = v->shape[3];
        if (v->shape[1] != c->Hkv)
            return dim_mismatch(err, "kv heads", "V", 1, v->shape[1], "K", 1, c->Hkv);
        if (a->q_num_heads && a->q_num_heads != c->Hq)
            return oq_err_set(err, OQ_ERR_SHAPE, "Attention q_num_heads=%lld but Q axis 1 is %lld",
                              (long long)a->q_num_heads, (long long)c->Hq);
        if (a->kv_num_heads && a->kv_num_heads != c->Hkv)
            return oq_err_set(err, OQ_ERR_SHAPE,
                              "Attention kv_num_heads=%lld but K axis 1 is %lld",
                              (long long)a->kv_num_heads, (long long)c->Hkv);
    }
    if (dk != c->D)
        return oq_err_set(err, OQ_ERR_SHAPE, "Attention head size: Q has %lld, K has %lld",
                          (long long)c->D, (long long)dk);
    c->Dv = dv_;
    if (c->Hkv <= 0 || c->Hq % c->Hkv)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention heads: %lld query heads is not a multiple of %lld kv heads",
                          (long long)c->Hq, (long long)c->Hkv);
    c->group = c->Hq / c->Hkv;
    return OQ_OK;
}

static oq_status resolve_past(attn_ctx *c, const oq_ref_attention_inputs *in, oq_err *err)
{
    const oq_tensor *pk = in->past_key, *pv = in->past_value;
    c->P = 0;
    if (!pk && !pv) return OQ_OK;
    if (!pk || !pv)
        return oq_err_set(err, OQ_ERR_SHAPE, "Attention %s given without %s",
                          pk ? "past_key" : "past_value", pk ? "past_value" : "past_key");
    oq_status st;
    if ((st = check_float(pk, "past_key", err)) || (st = check_float(pv, "past_value", err)))
        return st;
    if (pk->dtype != in->k->dtype || pv->dtype != in->v->dtype)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention past_key/past_value dtypes (%s, %s) differ from K/V (%s, %s)",
                          oq_dtype_name(pk->dtype), oq_dtype_name(pv->dtype),
                          oq_dtype_name(in->k->dtype), oq_dtype_name(in->v->dtype));
    if (pk->ndim != 4 || pv->ndim != 4)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention past_key/past_value must be 4-D [B, kv_heads, P, head] "
                          "(ranks %d, %d)",
                          pk->ndim, pv->ndim);
    const int64_t want_k[4] = {c->B, c->Hkv, pk->shape[2], c->D};
    const int64_t want_v[4] = {c->B, c->Hkv, pk->shape[2], c->Dv};
    static const char *axis_name[4] = {"batch", "kv heads", "past length", "head size"};
    for (int ax = 0; ax < 4; ax++) {
        if (pk->shape[ax] != want_k[ax])
            return oq_err_set(err, OQ_ERR_SHAPE, "Attention past_key axis %d (%s) is %lld, expected %lld",
                              ax, axis_name[ax], (long long)pk->shape[ax], (long long)want_k[ax]);
        if (pv->shape[ax] != want_v[ax])
            return oq_err_set(err, OQ_ERR_SHAPE, "Attention past_value axis %d (%s) is %lld, expected %lld",
                              ax, axis_name[ax], (long long)pv->shape[ax], (long long)want_v[ax]);
    }
    c->P = pk->shape[2];
    return OQ_OK;
}

static oq_status resolve_lengths(attn_ctx *c, const oq_ref_attention_attrs *a,
                                 const oq_ref_attention_inputs *in, oq_err *err)
{
    const oq_tensor *n = in->nonpad_kv_seqlen;
    c->key_end = malloc((size_t)(c->B ? c->B : 1) * sizeof *c->key_end);
    c->causal_off = malloc((size_t)(c->B ? c->B : 1) * sizeof *c->causal_off);
    if (!c->key_end || !c->causal_off) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (n) {
        if (n->dtype != OQ_DTYPE_INT64 && n->dtype != OQ_DTYPE_INT32)
            return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                              "Attention nonpad_kv_seqlen has dtype %s (int64 expected)",
                              oq_dtype_name(n->dtype));
        if (n->ndim != 1 || n->shape[0] != c->B)
            return oq_err_set(err, OQ_ERR_SHAPE,
                              "Attention nonpad_kv_seqlen must be 1-D of length batch=%lld",
                              (long long)c->B);
    }
    for (int64_t b = 0; b < c->B; b++) {
        int64_t len = c->T;
        if (n) {
            len = (int64_t)oq_tensor_get_f64(n, b);
            if (len < 0 || len > c->T)
                return oq_err_set(err, OQ_ERR_SHAPE,
                                  "Attention nonpad_kv_seqlen[%lld] = %lld outside 0..%lld "
                                  "(total kv length)",
                                  (long long)b, (long long)len, (long long)c->T);
        }
        c->key_end[b] = len;
        /* The causal diagonal is offset by the keys that precede this query block:
         * the past (internal cache), else the valid keys of an external cache. */
        c->causal_off[b] = in->past_key ? c->P : n ? len - c->Lq : 0;
    }
    c->causal = a->is_causal != 0;
    return OQ_OK;
}

static oq_status check_attrs(const oq_ref_attention_attrs *a, oq_err *err)
{
    if (a->is_causal != 0 && a->is_causal != 1)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "Attention is_causal must be 0 or 1 (got %d)",
                          a->is_causal);
    if (a->qk_matmul_output_mode < 0 || a->qk_matmul_output_mode > 3)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "Attention qk_matmul_output_mode must be 0..3 (got %d)",
                          a->qk_matmul_output_mode);
    if (!isnan(a->scale) && !(a->scale > 0 && isfinite(a->scale)))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "Attention scale must be > 0 (got %g)", a->scale);
    if (isnan(a->softcap) || isinf(a->softcap))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "Attention softcap must be finite (got %g)",
                          a->softcap);
    return OQ_OK;
}

/* Element offset of (b, h, l, 0) in a 3-D [B,L,H*D] or 4-D [B,H,L,D] tensor. */
static int64_t row_offset(int three_d, int64_t b, int64_t h, int64_t l, int64_t H, int64_t L,
                          int64_t D)
{
    return three_d ? ((b * L + l) * H + h) * D : ((b * H + h) * L + l) * D;
}

static oq_status load_inputs(attn_ctx *c, const oq_ref_attention_inputs *in, double scale)
{
    size_t nq = (size_t)(c->B * c->Hq * c->Lq * c->D);
    size_t nk = (size_t)(c->B * c->Hkv * c->T * c->D);
    size_t nv = (size_t)(c->B * c->Hkv * c->T * c->Dv);
    c->q = malloc((nq ? nq : 1) * sizeof(double));
    c->kt = malloc((nk ? nk : 1) * sizeof(double));
    c->v = malloc((nv ? nv : 1) * sizeof(double));
    if (!c->q || !c->kt || !c->v) return OQ_ERR_NOMEM;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t h = 0; h < c->Hq; h++)
            for (int64_t i = 0; i < c->Lq; i++) {
                double *dst = c->q + ((b * c->Hq + h) * c->Lq + i) * c->D;
                oq_ref_load_row(in->q, row_offset(c->three_d, b, h, i, c->Hq, c->Lq, c->D), c->D,
                                dst);
                for (int64_t d = 0; d < c->D; d++) dst[d] *= scale;
            }
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t h = 0; h < c->Hkv; h++) {
            double row[c->D > 0 ? c->D : 1];
            double *kt = c->kt + (b * c->Hkv + h) * c->D * c->T;
            double *v = c->v + (b * c->Hkv + h) * c->T * c->Dv;
            for (int64_t t = 0; t < c->T; t++) {
                if (t < c->P) {
                    oq_ref_load_row(in->past_key, ((b * c->Hkv + h) * c->P + t) * c->D, c->D, row);
                    oq_ref_load_row(in->past_value, ((b * c->Hkv + h) * c->P + t) * c->Dv, c->Dv,
                                    v + t * c->Dv);
                } else {
                    int64_t l = t - c->P;
                    oq_ref_load_row(in->k, row_offset(c->three_d, b, h, l, c->Hkv, c->Lkv, c->D),
                                    c->D, row);
                    oq_ref_load_row(in->v, row_offset(c->three_d, b, h, l, c->Hkv, c->Lkv, c->Dv),
                                    c->Dv, v + t * c->Dv);
                }
                for (int64_t d = 0; d < c->D; d++) kt[d * c->T + t] = row[d];
            }
        }
    return OQ_OK;
}

/* present = concat(past, new) along the sequence axis, bytes copied as they are. */
static oq_status make_present(const attn_ctx *c, const oq_tensor *past, const oq_tensor *cur,
                              int64_t hs, const char *name, oq_tensor **out, oq_err *err)
{
    const int64_t shape[4] = {c->B, c->Hkv, c->T, hs};
    oq_status st = oq_tensor_create(out, cur->dtype, 4, shape, name, err);
    if (st) return st;
    size_t es = oq_dtype_size(cur->dtype), row = (size_t)hs * es;
    char *dst = (*out)->data;
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t h = 0; h < c->Hkv; h++)
            for (int64_t t = 0; t < c->T; t++, dst += row) {
                const char *src =
                    t < c->P
                        ? (const char *)past->data + (size_t)(((b * c->Hkv + h) * c->P + t) * hs) * es
                        : (const char *)cur->data +
                              (size_t)row_offset(c->three_d, b, h, t - c->P, c->Hkv, c->Lkv, hs) * es;
                memcpy(dst, src, row);
            }
    return OQ_OK;
}

static void store_qk(const attn_ctx *c, int64_t b, int64_t h, int64_t i, const double *row)
{
    oq_ref_store_row(c->qk, ((b * c->Hq + h) * c->Lq + i) * c->T, c->T, row);
}

/* Rows computed together by the kernels (each K and V load feeds this many rows). */
#define ROWS 4

/* Keys at or after the returned index are masked for query row i by padding
 * or causality whatever the mask says. */
static int64_t key_end(const attn_ctx *c, int64_t b, int64_t i)
{
    int64_t end = c->key_end[b];
    if (c->causal && i + c->causal_off[b] + 1 < end) end = i + c->causal_off[b] + 1;
    return end < 0 ? 0 : end;
}

/* Softcap, masks and the optional qk output of one row of scores s[0..ns). */
static void bias_row(const attn_ctx *c, int64_t b, int64_t h, int64_t i, int64_t ns, int64_t end,
                     double *s)
{
    if (c->want_qk && c->mode == 0) store_qk(c, b, h, i, s);
    if (c->softcap > 0)
        for (int64_t j = 0; j < ns; j++) s[j] = c->softcap * tanh(s[j] / c->softcap);
    if (c->want_qk && c->mode == 1) store_qk(c, b, h, i, s);
    if (c->mask.t) oq_ref_mask_add(&c->mask, b, h, i, end, s);
    if (c->want_qk && c->mode == 2) {
        for (int64_t j = end; j < c->T; j++) s[j] = -INFINITY;
        store_qk(c, b, h, i, s);
    }
}

/* Query rows i0 .. i0+rows-1 of (b, h): y (and qk_matmul_output rows when asked).
 * s holds `rows` score rows of stride ld >= T; acc holds rows * Dv values. */
static void attend_rows(const attn_ctx *c, int64_t b, int64_t h, int64_t i0, int rows, double *s,
                        int64_t ld, double *acc)
{
    const int64_t T = c->T, D = c->D, Dv = c->Dv, kvh = h / c->group;
    const double *q = c->q + ((b * c->Hq + h) * c->Lq + i0) * D;
    const double *kt = c->kt + (b * c->Hkv + kvh) * D * T;
    const double *v = c->v + (b * c->Hkv + kvh) * T * Dv;
    int64_t end[ROWS], max_end = 0;
    for (int r = 0; r < rows; r++) {
        end[r] = key_end(c, b, i0 + r);
        if (end[r] > max_end) max_end = end[r];
    }
    /* Scores past a row's end are only needed when they are output. */
    const int64_t ns = c->want_qk ? T : max_end;
    oq_ref_scores(q, rows, kt, T, D, ns, s, ld);
    double inv[ROWS];
    for (int r = 0; r < rows; r++) {
        double *sr = s + r * ld;
        bias_row(c, b, h, i0 + r, ns, end[r], sr);
        const double sum = oq_ref_softmax_exp(sr, end[r]);
        /* A row with every key masked has no distribution: it is defined as zeros. */
        inv[r] = isnan(sum) ? NAN : sum > 0 ? 1.0 / sum : 0.0;
        for (int64_t j = end[r]; j < max_end; j++) sr[j] = 0.0;
    }
    oq_ref_weighted(s, ld, rows, max_end, v, Dv, acc);
    for (int r = 0; r < rows; r++) {
        const int64_t i = i0 + r;
        double *yr = acc + r * Dv;
        for (int64_t d = 0; d < Dv; d++) yr[d] *= inv[r];
        int64_t yoff = c->three_d ? ((b * c->Lq + i) * c->Hq + h) * Dv
                                  : ((b * c->Hq + h) * c->Lq + i) * Dv;
        oq_ref_store_row(c->y, yoff, Dv, yr);
        if (c->want_qk && c->mode == 3) {
            double *sr = s + r * ld;
            for (int64_t j = 0; j < end[r]; j++) sr[j] *= inv[r];
            for (int64_t j = end[r]; j < T; j++) sr[j] = 0.0;
            store_qk(c, b, h, i, sr);
        }
    }
}

static oq_status run_rows(attn_ctx *c, oq_err *err)
{
    const int64_t blocks_per_head = (c->Lq + ROW_BLOCK - 1) / ROW_BLOCK;
    const int64_t blocks = c->B * c->Hq * blocks_per_head;
    int nthreads = omp_get_max_threads();
    if (nthreads < 1) nthreads = 1;
    const int64_t ld = c->T + 8;
    const size_t per_thread = (size_t)(ROWS * ld + ROWS * c->Dv + 8);
    double *scratch = malloc((size_t)nthreads * per_thread * sizeof(double));
    if (!scratch) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory for Attention scratch");
#pragma omp parallel num_threads(nthreads)
    {
        double *s = scratch + (size_t)omp_get_thread_num() * per_thread;
        double *acc = s + ROWS * ld;
#pragma omp for schedule(dynamic, 1)
        for (int64_t blk = 0; blk < blocks; blk++) {
            const int64_t bh = blk / blocks_per_head;
            const int64_t i0 = (blk % blocks_per_head) * ROW_BLOCK;
            const int64_t i1 = i0 + ROW_BLOCK < c->Lq ? i0 + ROW_BLOCK : c->Lq;
            for (int64_t i = i0; i < i1; i += ROWS) {
                const int rows = (int)(i1 - i < ROWS ? i1 - i : ROWS);
                attend_rows(c, bh / c->Hq, bh % c->Hq, i, rows, s, ld, acc);
            }
        }
    }
    free(scratch);
    return OQ_OK;
}

static oq_status make_outputs(attn_ctx *c, const oq_ref_attention_inputs *in,
                              oq_ref_attention_outputs *out, oq_err *err)
{
    oq_status st;
    if (c->three_d) {
        const int64_t shape[3] = {c->B, c->Lq, c->Hq * c->Dv};
        st = oq_tensor_create(&out->y, in->q->dtype, 3, shape, "Y", err);
    } else {
        const int64_t shape[4] = {c->B, c->Hq, c->Lq, c->Dv};
        st = oq_tensor_create(&out->y, in->q->dtype, 4, shape, "Y", err);
    }
    if (st) return st;
    if (out->want_present &&
        ((st = make_present(c, in->past_key, in->k, c->D, "present_key", &out->present_key, err)) ||
         (st = make_present(c, in->past_value, in->v, c->Dv, "present_value", &out->present_value,
                            err))))
        return st;
    if (out->want_qk_matmul_output) {
        const int64_t shape[4] = {c->B, c->Hq, c->Lq, c->T};
        st = oq_tensor_create(&out->qk_matmul_output, in->q->dtype, 4, shape, "qk_matmul_output",
                              err);
        if (st) return st;
    }
    c->y = out->y;
    c->qk = out->qk_matmul_output;
    return OQ_OK;
}

static void ctx_clear(attn_ctx *c)
{
    free(c->q);
    free(c->kt);
    free(c->v);
    free(c->key_end);
    free(c->causal_off);
}

oq_status oq_ref_attention(const oq_ref_attention_attrs *attrs, const oq_ref_attention_inputs *in,
                           oq_ref_attention_outputs *out, oq_err *err)
{
    if (!attrs || !in || !out || !in->q || !in->k || !in->v)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "Attention needs attrs, outputs and Q, K, V");
    out->y = out->present_key = out->present_value = out->qk_matmul_output = NULL;
    attn_ctx c = {0};
    oq_status st;
    if ((st = check_attrs(attrs, err)) || (st = resolve_qkv(&c, attrs, in, err)) ||
        (st = resolve_past(&c, in, err)))
        return st;
    c.T = c.P + c.Lkv;
    const int64_t target[4] = {c.B, c.Hq, c.Lq, c.T};
    if ((st = resolve_lengths(&c, attrs, in, err)) ||
        (st = oq_ref_mask_init(&c.mask, in->attn_mask, target, err)))
        goto done;
    c.mode = attrs->qk_matmul_output_mode;
    c.want_qk = out->want_qk_matmul_output;
    c.softcap = attrs->softcap;
    double scale = isnan(attrs->scale) ? 1.0 / sqrt((double)c.D) : attrs->scale;
    if ((st = make_outputs(&c, in, out, err))) goto done;
    if (load_inputs(&c, in, scale)) {
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory converting Attention inputs to float64");
        goto done;
    }
    st = run_rows(&c, err);
done:
    ctx_clear(&c);
    if (st) oq_ref_attention_outputs_clear(out);
    return st;
}
