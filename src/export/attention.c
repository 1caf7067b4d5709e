/* One masked attention in decomposed, Attention-23 or Attention-24 form. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export/attention-impl.h"


static const char *cast(oq_graph *g, const char *x, oq_dtype to)
{
    oq_attr a[] = {OQ_ATTR_I("to", to)};
    return OPA(g, "Cast", a, x);
}

static const char *unsqueeze(oq_graph *g, const char *x, size_t n, const int64_t *axes)
{
    return OP(g, "Unsqueeze", x, oq_graph_const_i64(g, "axes", n, axes));
}

double oq_attn_mask_bias(oq_dtype dtype)
{
    /* Finite in the attention dtype so no inf arithmetic is needed; exp() of it
     * (minus the row maximum) underflows to exactly 0 in float16 and float32. */
    return dtype == OQ_DTYPE_FLOAT16 ? -3.0e4 : -1.0e9;
}

static const char *valid_bool(oq_attn_builder *b)
{
    if (!b->valid_bool) b->valid_bool = cast(b->g, b->mask_in, OQ_DTYPE_BOOL);
    return b->valid_bool;
}

/* (m - 1) * big in the attention dtype: exactly 0 on valid keys, big negative on padded ones. */
static const char *additive_bias(oq_attn_builder *b, const char *m)
{
    oq_graph *g = b->g;
    const char *one = oq_graph_const_f32(g, "one", 1.0f);
    const char *big = oq_graph_const_f32(g, "mask_big", (float)-oq_attn_mask_bias(b->dtype));
    const char *bias = OP(g, "Mul", OP(g, "Sub", m, one), big);
    return b->dtype == OQ_DTYPE_FLOAT32 ? bias : cast(g, bias, b->dtype);
}

/* Key mask for the decomposed scores [B, H, Lq, Lk] (rank 4) or the grouped
 * [B, Hkv, G, Lq, Lk] (rank 5): the mask's keys on the last axis. */
static const char *key_mask_decomposed(oq_attn_builder *b, int rank5)
{
    oq_graph *g = b->g;
    int bool_form = b->mask == OQ_MASK_BOOL;
    const char **slot = bool_form ? (rank5 ? &b->key_bool5 : &b->key_bool)
                                  : (rank5 ? &b->key_bias5 : &b->key_bias);
    if (*slot) return *slot;
    static const int64_t ax4[] = {1, 2}, ax5[] = {1, 2, 3};
    if (bool_form) {
        *slot = unsqueeze(g, valid_bool(b), rank5 ? 3 : 2, rank5 ? ax5 : ax4);
        return *slot;
    }
    *slot = additive_bias(b, unsqueeze(g, b->mask_in, rank5 ? 3 : 2, rank5 ? ax5 : ax4));
    return *slot;
}

/* attn_mask [B, 1, L, L] for the Attention op: the key mask repeated over the
 * query axis. ORT 1.29 requires the query dimension to be present, and this
 * broadcast (0 * query mask + key mask) needs no Shape ops, which would run
 * on CPU in a CUDA session. */
static const char *attn_mask_full(oq_attn_builder *b)
{
    if (b->attn_mask) return b->attn_mask;
    oq_graph *g = b->g;
    static const int64_t axq[] = {1, 3}, axk[] = {1, 2};
    const char *mq = unsqueeze(g, b->mask_in, 2, axq);
    const char *mk = unsqueeze(g, b->mask_in, 2, axk);
    const char *zero = oq_graph_const_f32(g, "zero", 0.0f);
    const char *full = OP(g, "Add", OP(g, "Mul", mq, zero), mk);
    b->attn_mask = b->mask == OQ_MASK_BOOL ? cast(g, full, OQ_DTYPE_BOOL) : additive_bias(b, full);
    return b->attn_mask;
}

/* nonpad_kv_seqlen = int64(ReduceSum(mask, axis 1)): exact for L < 2^24. */
static const char *seqlen(oq_attn_builder *b)
{
    if (b->seqlen) return b->seqlen;
    oq_graph *g = b->g;
    static const int64_t ax[] = {1};
    oq_attr keep[] = {OQ_ATTR_I("keepdims", 0)};
    const char *sum = OPA(g, "ReduceSum", keep, b->mask_in, oq_graph_const_i64(g, "axes", 1, ax));
    b->seqlen = cast(g, sum, OQ_DTYPE_INT64);
    return b->seqlen;
}

/* [B, L, H*D] -> [B, H, L, D] */
static const char *split_heads(oq_graph *g, const char *x, int32_t h, int32_t d)
{
    const int64_t shape[] = {0, 0, h, d}, perm[] = {0, 2, 1, 3};
    oq_attr a[] = {OQ_ATTR_IS("perm", 4, perm)};
    return OPA(g, "Transpose", a, OP(g, "Reshape", x, oq_graph_const_i64(g, "shape", 4, shape)));
}

/* [B, H, L, D] -> [B, L, H*D] */
static const char *merge_heads(oq_graph *g, const char *x, int32_t h, int32_t d)
{
    const int64_t shape[] = {0, 0, (int64_t)h * d}, perm[] = {0, 2, 1, 3};
    oq_attr a[] = {OQ_ATTR_IS("perm", 4, perm)};
    return OP(g, "Reshape", OPA(g, "Transpose", a, x), oq_graph_const_i64(g, "shape", 3, shape));
}

/* Split 1/sqrt(D) into p * r with p a power of two and r in [1, 2). */
static void pow2_split(double scale, double *p, double *r)
{
    int e;
    double m = frexp(scale, &e); /* scale = m * 2^e, m in [0.5, 1) */
    *p = ldexp(1.0, e - 1);
    *r = 2.0 * m;
}

/* The dtype of q, k, v and the result. */
static oq_dtype io_dtype(const oq_attn_builder *b) { return b->io_dtype ? b->io_dtype : OQ_DTYPE_FLOAT32; }

static const char *decomposed(oq_attn_builder *b, const char *q, const char *k, const char *v)
{
    oq_graph *g = b->g;
    int32_t h = b->heads, hkv = b->kv_heads, d = b->head_dim, grp = h / hkv;
    if (b->layout == 3) {
        q = split_heads(g, q, h, d);
        k = split_heads(g, k, hkv, d);
        v = split_heads(g, v, hkv, d);
    }
    if (b->dtype != io_dtype(b)) {
        q = cast(g, q, b->dtype);
        k = cast(g, k, b->dtype);
        v = cast(g, v, b->dtype);
    }
    int rank5 = grp > 1;
    if (rank5) {
        /* GQA: query head i uses kv head i / grp, so group the query heads as
         * [B, Hkv, G, L, D] and let MatMul broadcast k, v over G. */
        const int64_t shape[] = {0, hkv, grp, -1, d}, ax[] = {2};
        q = OP(g, "Reshape", q, oq_graph_const_i64(g, "shape", 5, shape));
        k = unsqueeze(g, k, 1, ax);
        v = unsqueeze(g, v, 1, ax);
    }
    const int64_t perm4[] = {0, 1, 3, 2}, perm5[] = {0, 1, 2, 4, 3};
    oq_attr tp[] = {OQ_ATTR_IS("perm", rank5 ? 5 : 4, rank5 ? perm5 : perm4)};
    const char *kt = OPA(g, "Transpose", tp, k);
    double scale = 1.0 / sqrt((double)d), p = scale, r = 1.0;
    if (b->dtype == OQ_DTYPE_FLOAT16) pow2_split(scale, &p, &r);
    q = OP(g, "Mul", q, oq_graph_const_scalar(g, "q_scale", b->dtype, p));
    const char *s = OP(g, "MatMul", q, kt);
    if (r != 1.0) s = OP(g, "Mul", s, oq_graph_const_scalar(g, "score_scale", b->dtype, r));
    if (b->mask == OQ_MASK_ADDITIVE) {
        s = OP(g, "Add", s, key_mask_decomposed(b, rank5));
    } else if (b->mask == OQ_MASK_BOOL) {
        const char *neg = oq_graph_const_scalar(g, "mask_neg", b->dtype, oq_attn_mask_bias(b->dtype));
        s = OP(g, "Where", key_mask_decomposed(b, rank5), s, neg);
    }
    oq_attr ax[] = {OQ_ATTR_I("axis", -1)};
    const char *y = OP(g, "MatMul", OPA(g, "Softmax", ax, s), v);
    if (rank5) {
        const int64_t shape[] = {0, h, -1, d};
        y = OP(g, "Reshape", y, oq_graph_const_i64(g, "shape", 4, shape));
    }
    if (b->dtype != io_dtype(b)) y = cast(g, y, io_dtype(b));
    return b->layout == 3 ? merge_heads(g, y, h, d) : y;
}

static const char *attention_op(oq_attn_builder *b, const char *q, const char *k, const char *v)
{
    oq_graph *g = b->g;
    if (b->dtype != io_dtype(b)) {
        q = cast(g, q, b->dtype);
        k = cast(g, k, b->dtype);
        v = cast(g, v, b->dtype);
    }
    const char *in[7] = {q, k, v, "", "", "", ""};
    size_t n_in = 3;
    if (b->mask == OQ_MASK_ADDITIVE || b->mask == OQ_MASK_BOOL) {
        in[3] = attn_mask_full(b);
        n_in = 4;
    } else if (b->mask == OQ_MASK_SEQLEN) {
        in[6] = seqlen(b); /* after the omitted attn_mask, past_key, past_value */
        n_in = 7;
    }
    if (!in[3] || !in[6]) return NULL;
    oq_attr a[] = {OQ_ATTR_I("q_num_heads", b->heads), OQ_ATTR_I("kv_num_heads", b->kv_heads)};
    const char *y = oq_graph_fresh_name(g, "attn_out");
    const char *name = oq_graph_fresh_name(g, b->node_name ? b->node_name : "attn");
    if (!y || !name) return NULL;
    if (oq_graph_add_node(g, "Attention", NULL, name, n_in, in, 1, &y, 2, a)) return NULL;
    return b->dtype != io_dtype(b) ? cast(g, y, io_dtype(b)) : y;
}

const char *oq_attn_build(oq_attn_builder *b, const char *q, const char *k, const char *v)
{
    if (!q || !k || !v) return NULL;
    return b->format == OQ_ATTN_DECOMPOSED ? decomposed(b, q, k, v) : attention_op(b, q, k, v);
}

const char *oq_attn_zero_padding(oq_attn_builder *b, const char *x, int rank3)
{
    oq_graph *g = b->g;
    static const int64_t ax3[] = {2}, ax4[] = {1, 3};
    const char *valid = unsqueeze(g, valid_bool(b), rank3 ? 1 : 2, rank3 ? ax3 : ax4);
    return OP(g, "Where", valid, x, oq_graph_const_f32(g, "zero", 0.0f));
}

void oq_attn_describe(const oq_attn_builder *b, char *buf, size_t n)
{
    const char *mask = "no mask";
    switch (b->mask) {
    case OQ_MASK_ADDITIVE:
        mask = b->format == OQ_ATTN_DECOMPOSED
                   ? "padded keys excluded by an additive bias on the scores"
                   : "padded keys excluded by an additive attn_mask [B,1,L,L]";
        break;
    case OQ_MASK_BOOL:
        mask = b->format == OQ_ATTN_DECOMPOSED
                   ? "padded keys excluded by Where on a boolean key mask"
                   : "padded keys excluded by a boolean attn_mask [B,1,L,L]";
        break;
    case OQ_MASK_SEQLEN:
        mask = "valid key lengths passed as nonpad_kv_seqlen = int64(ReduceSum(mask))";
        break;
    default:
        break;
    }
    int w = snprintf(buf, n, "attention: %s, %s, heads %d, kv heads %d, head dim %d, %s.",
                     oq_attn_format_name(b->format), oq_dtype_name(b->dtype), (int)b->heads,
                     (int)b->kv_heads, (int)b->head_dim, mask);
    if (w < 0 || (size_t)w >= n) return;
    if (b->dtype == OQ_DTYPE_FLOAT16) {
        if (b->format == OQ_ATTN_DECOMPOSED) {
            double p, r;
            pow2_split(1.0 / sqrt((double)b->head_dim), &p, &r);
            snprintf(buf + w, n - (size_t)w,
                     " Float16 attention: the query is scaled by the power of two %g before the "
                     "dot product to reduce float16 overflow risk, the scores by the remaining "
                     "%.9g; inputs and outputs stay float32. Validate numerically.",
                     p, r);
        } else {
            snprintf(buf + w, n - (size_t)w,
                     " Float16 attention: Q, K, V are cast to float16 around the Attention node; "
                     "inputs and outputs stay float32. Validate numerically.");
        }
    }
}

const char *oq_attn_format_name(oq_attn_format f)
{
    switch (f) {
    case OQ_ATTN_DECOMPOSED: return "decomposed";
    case OQ_ATTN_ATTENTION23: return "attention23";
    case OQ_ATTN_ATTENTION24: return "attention24";
    }
    return "unknown";
}

int oq_attn_format_parse(const char *s)
{
    for (int f = OQ_ATTN_DECOMPOSED; f <= OQ_ATTN_ATTENTION24; f++)
        if (s && !strcmp(s, oq_attn_format_name((oq_attn_format)f))) return f;
    return -1;
}

const char *oq_mask_form_name(oq_mask_form m)
{
    switch (m) {
    case OQ_MASK_AUTO: return "auto";
    case OQ_MASK_NONE: return "none";
    case OQ_MASK_ADDITIVE: return "additive";
    case OQ_MASK_BOOL: return "bool";
    case OQ_MASK_SEQLEN: return "seqlen";
    }
    return "unknown";
}

int oq_mask_form_parse(const char *s)
{
    for (int m = OQ_MASK_AUTO; m <= OQ_MASK_SEQLEN; m++)
        if (s && !strcmp(s, oq_mask_form_name((oq_mask_form)m))) return m;
    return -1;
}

int64_t oq_attn_format_opset(oq_attn_format f)
{
    return f == OQ_ATTN_ATTENTION24 ? 24 : f == OQ_ATTN_ATTENTION23 ? 23 : 20;
}

oq_mask_form oq_mask_form_resolve(oq_attn_format f, oq_mask_form m)
{
    if (m != OQ_MASK_AUTO) return m;
    return f == OQ_ATTN_ATTENTION24 ? OQ_MASK_SEQLEN : OQ_MASK_ADDITIVE;
}
