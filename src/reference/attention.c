/* ONNX Attention (opsets 23 and 24) in float64: see include/ortqual/reference.h.
 *
 * Layout of the work: the inputs are converted once to float64 in layouts that
 * the kernels read in order (K and V per kv head packed as reference-impl.h
 * describes); then each block of OQ_REF_ROWS query rows of one (batch, head),
 * converted and scaled, goes through oq_ref_attend: scores, softcap and
 * masks one key chunk at a time, online softmax, weighted sum of V. When
 * qk_matmul_output is wanted, it is computed from whole rows on the side. The
 * blocks are the tasks that threads share; a block's result does not depend
 * on which thread runs it. */
#include "ortqual/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference-impl.h"
#include "status/args-impl.h"

void oq_ref_attention_attrs_default(oq_ref_attention_attrs *attrs)
{
    if (!attrs) return;
    memset(attrs, 0, sizeof *attrs);
    attrs->scale = NAN;
    attrs->opset = 24;
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
    double softcap, scale;
    const oq_ref_attention_inputs *in;
    int64_t kp_size, vp_size; /* doubles per kv head of kp and vp */
    double *kp;  /* [B,Hkv] packed keys (oq_ref_pack_keys) */
    double *kmax; /* [B,Hkv,D] their oq_ref_keys_bound */
    double *vp;  /* [B,Hkv] packed values (oq_ref_pack_values) */
    double *scratch;     /* per thread: 16 kv rows while loading; then scores, outputs, qk rows */
    int64_t per_thread;  /* doubles of scratch per thread */
    int64_t ld, lda;     /* row strides of qk rows (0 when not wanted) and of outputs */
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
    int64_t dk = 0, dv_ = 0; /* split_hidden sets both on success; -O3 cannot see that */
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
    if (a->opset < 23)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "invalid model: ai.onnx opset %lld has no Attention operator (Attention "
                          "exists from opset 23 on)",
                          (long long)a->opset);
    if (a->opset > 24)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "Attention-%lld: the reference implements Attention-23 and -24 only",
                          (long long)a->opset);
    return OQ_OK;
}

/* What Attention-24 added, given to an Attention-23 node: the model is invalid (ONNX Runtime
 * refuses it too), and computing it as 24 would pass a model no runtime runs. */
static oq_status check_opset23(const attn_ctx *c, const oq_ref_attention_inputs *in, oq_err *err)
{
    if (in->nonpad_kv_seqlen)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "invalid model: Attention-23 has no input nonpad_kv_seqlen (input 6 is "
                          "Attention-24's; the model imports opset 23)");
    const oq_tensor *m = in->attn_mask;
    const int64_t len = m && m->ndim >= 1 ? m->shape[m->ndim - 1] : c->T;
    if (len == 1 && c->T > 1)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "Attention-23 attn_mask last axis is 1, total kv length %lld: a mask "
                          "broadcast over the keys is not judged: opset 23 does not say whether it "
                          "broadcasts or pads (Attention-24 pads it)",
                          (long long)c->T);
    if (len < c->T)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "invalid model: Attention-23 attn_mask last axis is %lld, shorter than "
                          "the total kv length %lld (a shorter mask is Attention-24's)",
                          (long long)len, (long long)c->T);
    return OQ_OK;
}

/* Element offset of (b, h, l, 0) in a 3-D [B,L,H*D] or 4-D [B,H,L,D] tensor. */
static int64_t row_offset(int three_d, int64_t b, int64_t h, int64_t l, int64_t H, int64_t L,
                          int64_t D)
{
    return three_d ? ((b * L + l) * H + h) * D : ((b * H + h) * L + l) * D;
}

/* Row t of the kv head (b, h) of K (or V) as float64: from the past, else the new input. */
static void load_kv_row(const attn_ctx *c, const oq_tensor *past, const oq_tensor *cur, int64_t hs,
                        int64_t b, int64_t h, int64_t t, double *dst)
{
    if (t < c->P)
        oq_ref_load_row(past, ((b * c->Hkv + h) * c->P + t) * hs, hs, dst);
    else
        oq_ref_load_row(cur, row_offset(c->three_d, b, h, t - c->P, c->Hkv, c->Lkv, hs), hs, dst);
}

/* Query rows i0 .. i0+rows-1 of (b, h) as float64, multiplied by `scale`, into q. */
static void load_q(const attn_ctx *c, int64_t b, int64_t h, int64_t i0, int rows, double scale,
                   double *q)
{
    for (int r = 0; r < rows; r++) {
        double *dst = q + r * c->D;
        oq_ref_load_row(c->in->q, row_offset(c->three_d, b, h, i0 + r, c->Hq, c->Lq, c->D), c->D, dst);
        for (int64_t d = 0; d < c->D; d++) dst[d] *= scale;
    }
}

/* Task (b, kv head): K and V, past first, packed 16 rows at a time (converted
 * into the thread's scratch first). */
static void load_kv(void *ctx, int64_t bh, int thread)
{
    const attn_ctx *c = ctx;
    const int64_t b = bh / c->Hkv, h = bh % c->Hkv;
    double *r = c->scratch + thread * c->per_thread;
    double *kp = c->kp + bh * c->kp_size, *vp = c->vp + bh * c->vp_size;
    for (int64_t t0 = 0; t0 < c->T; t0 += OQ_REF_KEYS) {
        const int64_t n = c->T - t0 < OQ_REF_KEYS ? c->T - t0 : OQ_REF_KEYS;
        for (int64_t t = 0; t < n; t++)
            load_kv_row(c, c->in->past_key, c->in->k, c->D, b, h, t0 + t, r + t * c->D);
        oq_ref_pack_keys(r, c->D, n, c->D, kp + t0 * c->D);
        for (int64_t t = 0; t < n; t++)
            load_kv_row(c, c->in->past_value, c->in->v, c->Dv, b, h, t0 + t, r + t * c->Dv);
        oq_ref_pack_values(r, c->Dv, n, c->Dv, c->T, vp + t0 * OQ_REF_COLS);
    }
    oq_ref_keys_bound(kp, c->T, c->D, c->kmax + bh * c->D);
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

#define ROWS OQ_REF_ROWS

/* Keys at or after the returned index are masked for query row i by padding
 * or causality whatever the mask says. */
static int64_t key_end(const attn_ctx *c, int64_t b, int64_t i)
{
    int64_t end = c->key_end[b];
    if (c->causal && i + c->causal_off[b] + 1 < end) end = i + c->causal_off[b] + 1;
    return end < 0 ? 0 : end;
}

/* A block of query rows of one (batch, head), as the bias callback sees it. */
typedef struct block_ctx {
    const attn_ctx *c;
    int64_t b, h, i0;
} block_ctx;

static int has_bias(const attn_ctx *c)
{
    return c->softcap > 0 || c->mask.t;
}

/* Softcap, then the attention mask, on the scores of keys j0 .. j1-1 of row
 * i0 + r; then in base 2, as the kernel takes its logits. */
static void bias_chunk(const void *ctx, int r, int64_t j0, int64_t j1, double *s)
{
    const block_ctx *x = ctx;
    const attn_ctx *c = x->c;
    if (c->softcap > 0)
        for (int64_t j = 0; j < j1 - j0; j++) s[j] = c->softcap * tanh(s[j] / c->softcap);
    if (c->mask.t) oq_ref_mask_add(&c->mask, x->b, x->h, x->i0 + r, j0, j1, s);
    for (int64_t j = 0; j < j1 - j0; j++) s[j] *= OQ_REF_LOG2E;
}

/* Y of query rows i0 .. i0+rows-1 of (b, h) (q: those rows, scaled as
 * oq_ref_block says); scratch:
 * OQ_REF_ATTEND_SCRATCH doubles, out: rows * round_up(Dv, 16). */
static void attend_rows(const attn_ctx *c, int64_t b, int64_t h, int64_t i0, int rows,
                        const double *q, double *scratch, double *out)
{
    const int64_t kvh = h / c->group, lda = oq_ref_round_up(c->Dv, OQ_REF_COLS);
    const block_ctx x = {c, b, h, i0};
    oq_ref_block blk = {
        .q = q, .ldq = c->D, .rows = rows,
        .kp = c->kp + (b * c->Hkv + kvh) * c->kp_size, .kmax = c->kmax + (b * c->Hkv + kvh) * c->D,
        .vp = c->vp + (b * c->Hkv + kvh) * c->vp_size,
        .D = c->D, .T = c->T, .Dv = c->Dv,
        .bias = has_bias(c) ? bias_chunk : NULL, .ctx = &x};
    for (int r = 0; r < rows; r++) blk.end[r] = key_end(c, b, i0 + r);
    oq_ref_attend(&blk, scratch, out);
    for (int r = 0; r < rows; r++) {
        const int64_t i = i0 + r;
        const int64_t yoff = c->three_d ? ((b * c->Lq + i) * c->Hq + h) * c->Dv
                                        : ((b * c->Hq + h) * c->Lq + i) * c->Dv;
        oq_ref_store_row(c->y, yoff, c->Dv, out + r * lda);
    }
}

/* qk_matmul_output rows i0 .. i0+rows-1 of (b, h), from whole rows of scores
 * (s: rows of stride ld >= round_up(T, 16)): the scaled scores (mode 0), after
 * softcap (1), after every mask, masked = -inf (2), the softmax (3). */
static void qk_rows(const attn_ctx *c, int64_t b, int64_t h, int64_t i0, int rows, const double *q,
                    double *s, int64_t ld)
{
    const int64_t T = c->T, kvh = h / c->group;
    oq_ref_scores(q, c->D, rows, c->kp + (b * c->Hkv + kvh) * c->kp_size, c->D, T, s, ld);
    for (int r = 0; r < rows; r++) {
        double *sr = s + r * ld;
        const int64_t i = i0 + r, end = key_end(c, b, i);
        if (c->mode == 0) store_qk(c, b, h, i, sr);
        if (c->softcap > 0)
            for (int64_t j = 0; j < T; j++) sr[j] = c->softcap * tanh(sr[j] / c->softcap);
        if (c->mode == 1) store_qk(c, b, h, i, sr);
        if (c->mask.t) oq_ref_mask_add(&c->mask, b, h, i, 0, end, sr);
        for (int64_t j = end; j < T; j++) sr[j] = -INFINITY;
        if (c->mode == 2) store_qk(c, b, h, i, sr);
        if (c->mode == 3) {
            const double sum = oq_ref_softmax_exp(sr, end);
            const double inv = isnan(sum) ? NAN : sum > 0 ? 1.0 / sum : 0.0;
            for (int64_t j = 0; j < end; j++) sr[j] *= inv;
            for (int64_t j = end; j < T; j++) sr[j] = 0.0;
            store_qk(c, b, h, i, sr);
        }
    }
}

/* Task: one block of ROWS query rows of one (batch, head). */
static void row_block(void *ctx, int64_t blk, int thread)
{
    const attn_ctx *c = ctx;
    const int64_t per_head = (c->Lq + ROWS - 1) / ROWS, bh = blk / per_head;
    const int64_t b = bh / c->Hq, h = bh % c->Hq, i = blk % per_head * ROWS;
    const int rows = (int)(c->Lq - i < ROWS ? c->Lq - i : ROWS);
    double *s = c->scratch + thread * c->per_thread, *out = s + OQ_REF_ATTEND_SCRATCH;
    double *q = out + ROWS * c->lda, *qk = q + ROWS * c->D;
    load_q(c, b, h, i, rows, has_bias(c) ? c->scale : c->scale * OQ_REF_LOG2E, q);
    attend_rows(c, b, h, i, rows, q, s, out);
    if (!c->want_qk) return;
    load_q(c, b, h, i, rows, c->scale, q);
    qk_rows(c, b, h, i, rows, q, qk, c->ld);
}

/* Convert and pack the inputs, then every block of query rows, on the team. */
static oq_status compute(attn_ctx *c, oq_ref_team *team, oq_err *err)
{
    const int n = oq_ref_team_size(team);
    /* The 8 spare doubles keep the rows of a block off the same cache sets. */
    c->ld = c->want_qk ? oq_ref_round_up(c->T, OQ_REF_KEYS) + 8 : 0;
    c->lda = oq_ref_round_up(c->Dv, OQ_REF_COLS);
    const int64_t kv_rows = OQ_REF_KEYS * (c->D > c->Dv ? c->D : c->Dv);
    const int64_t rows = OQ_REF_ATTEND_SCRATCH + ROWS * (c->lda + c->D + c->ld);
    c->per_thread = kv_rows > rows ? kv_rows : rows;
    c->kp_size = oq_ref_round_up(c->T, OQ_REF_KEYS) * c->D;
    c->vp_size = c->T * oq_ref_round_up(c->Dv, OQ_REF_COLS);
    c->kp = oq_ref_alloc(c->B * c->Hkv * c->kp_size);
    c->vp = oq_ref_alloc(c->B * c->Hkv * c->vp_size);
    c->scratch = oq_ref_alloc(n * c->per_thread);
    c->kmax = oq_ref_alloc(c->B * c->Hkv * c->D);
    if (!c->kp || !c->vp || !c->scratch || !c->kmax)
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory converting Attention inputs to float64");
    oq_ref_team_run(team, c->B * c->Hkv, load_kv, c);
    oq_ref_team_run(team, c->B * c->Hq * ((c->Lq + ROWS - 1) / ROWS), row_block, c);
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
    free(c->kp);
    free(c->vp);
    free(c->scratch);
    free(c->kmax);
    free(c->key_end);
    free(c->causal_off);
}

oq_status oq_ref_attention(const oq_ref_attention_attrs *attrs, const oq_ref_attention_inputs *in,
                           int threads, oq_ref_attention_outputs *out, oq_err *err)
{
    OQ_NEED(err, attrs);
    OQ_NEED(err, in);
    OQ_NEED(err, out);
    OQ_NEED(err, in->q);
    OQ_NEED(err, in->k);
    OQ_NEED(err, in->v);
    out->y = out->present_key = out->present_value = out->qk_matmul_output = NULL;
    attn_ctx c = {.in = in};
    oq_status st;
    if ((st = oq_ref_threads_check(threads, "Attention reference", err)) ||
        (st = check_attrs(attrs, err)) || (st = resolve_qkv(&c, attrs, in, err)) ||
        (st = resolve_past(&c, in, err)))
        return st;
    c.T = c.P + c.Lkv;
    const int64_t target[4] = {c.B, c.Hq, c.Lq, c.T};
    if ((attrs->opset == 23 && (st = check_opset23(&c, in, err))) ||
        (st = resolve_lengths(&c, attrs, in, err)) ||
        (st = oq_ref_mask_init(&c.mask, in->attn_mask, target, err)))
        goto done;
    c.mode = attrs->qk_matmul_output_mode;
    c.want_qk = out->want_qk_matmul_output;
    c.softcap = attrs->softcap;
    c.scale = isnan(attrs->scale) ? 1.0 / sqrt((double)c.D) : attrs->scale;
    if ((st = make_outputs(&c, in, out, err))) goto done;
    oq_ref_team *team;
    const int64_t blocks = c.B * c.Hq * ((c.Lq + ROWS - 1) / ROWS);
    if ((st = oq_ref_team_create(oq_ref_threads(threads, blocks), &team, err))) goto done;
    st = compute(&c, team, err);
    oq_ref_team_free(team);
done:
    ctx_clear(&c);
    if (st) oq_ref_attention_outputs_clear(out);
    return st;
}
