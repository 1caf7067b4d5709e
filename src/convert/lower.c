/* --lower: each Attention node -> the standard ops of its function body
 * (ONNX Attention-23/24 for rank-4 Q, K, V without a KV cache):
 *   S = (Q @ K^T) * scale  [softcap]  [+ mask | Where(mask, S, -inf)]
 *       [Where(tril, S, -inf) when is_causal]  [Where(key < nonpad_kv_seqlen, S, -inf)]
 *   Y = Where(IsNaN(P), 0, P) @ V,  P = Softmax(S, axis -1)
 * The IsNaN guard gives fully masked rows zeros, as Attention-24 specifies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"

typedef struct body {
    cv_model *m;
    const char *hint;
    int32_t t;                   /* Q's element type */
    cv_dim s[4];                 /* the scores' dims [B, H, Lq, Lk] */
} body;

/* One node with a fresh output (or `out` when given) of element type et and dims d. */
static const char *emit(body *b, const char *op, size_t n_in, const char *const *in, int32_t et, int r,
                        const cv_dim *d, const char *out, Onnx__NodeProto **node)
{
    char hint[160];
    snprintf(hint, sizeof hint, "%.120s_%s", b->hint, op);
    const char *y = out ? out : cv_fresh(b->m, hint);
    Onnx__NodeProto *n = cv_node_add(b->m, op, hint, n_in, in, 1, &y);
    if (node) *node = n;
    cv_set_type(b->m, y, et, r, d);
    return y;
}

static const char *masked(body *b, const char *keep, const char *s)
{
    const char *in[3] = {keep, s, cv_const_scalar(b->m, "neg_inf", b->t, -INFINITY)};
    return emit(b, "Where", 3, in, b->t, 4, b->s, NULL, NULL);
}

static const char *shape_dim(body *b, const char *x, int axis)
{
    Onnx__NodeProto *n;
    const char *y = emit(b, "Shape", 1, &x, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (cv_dim[]){{1, NULL}}, NULL, &n);
    cv_attr_int(b->m, n, "start", axis);
    cv_attr_int(b->m, n, "end", axis + 1);
    return y;
}

/* 1/sqrt(D) when D is known, else computed from Q's shape. */
static const char *default_scale(body *b, const char *q, const cv_dim *qd)
{
    if (qd[3].value > 0 && !qd[3].param) return cv_const_scalar(b->m, "attn_scale", b->t, 1.0 / sqrt((double)qd[3].value));
    Onnx__NodeProto *n;
    const char *d = shape_dim(b, q, 3);
    const char *df = emit(b, "Cast", 1, &d, b->t, 1, (cv_dim[]){{1, NULL}}, NULL, &n);
    cv_attr_int(b->m, n, "to", b->t);
    const char *sq = emit(b, "Sqrt", 1, &df, b->t, 1, (cv_dim[]){{1, NULL}}, NULL, NULL);
    return emit(b, "Reciprocal", 1, &sq, b->t, 1, (cv_dim[]){{1, NULL}}, NULL, NULL);
}

static const char *causal(body *b, const char *q, const char *k, const char *s)
{
    Onnx__NodeProto *n;
    const char *dims[2] = {shape_dim(b, q, 2), shape_dim(b, k, 2)};
    const char *shp = emit(b, "Concat", 2, dims, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (cv_dim[]){{2, NULL}}, NULL, &n);
    cv_attr_int(b->m, n, "axis", 0);
    const char *in[2] = {cv_const_scalar(b->m, "true", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 1), shp};
    const char *ones = emit(b, "Expand", 2, in, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 2, b->s + 2, NULL, NULL);
    const char *tril = emit(b, "Trilu", 1, &ones, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 2, b->s + 2, NULL, &n);
    cv_attr_int(b->m, n, "upper", 0);
    return masked(b, tril, s);
}

static const char *padding(body *b, const char *k, const char *seqlen, const char *s)
{
    static const int64_t ax0[] = {0}, ax1[] = {1}, ax12[] = {1, 2};
    const int64_t i64 = ONNX__TENSOR_PROTO__DATA_TYPE__INT64, bl = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    const char *lk1 = shape_dim(b, k, 2);
    const char *sq_in[2] = {lk1, cv_const_i64(b->m, "axes", 1, ax0, 0)};
    const char *lk = emit(b, "Squeeze", 2, sq_in, (int32_t)i64, 0, NULL, NULL, NULL);
    const char *rg_in[3] = {cv_const_i64(b->m, "zero", 1, ax0, 1), lk, cv_const_i64(b->m, "one", 1, ax1, 1)};
    const char *pos = emit(b, "Range", 3, rg_in, (int32_t)i64, 1, b->s + 3, NULL, NULL);
    const char *un_in[2] = {seqlen, cv_const_i64(b->m, "axes", 1, ax1, 0)};
    const char *len = emit(b, "Unsqueeze", 2, un_in, (int32_t)i64, 2, (cv_dim[]){b->s[0], {1, NULL}}, NULL, NULL);
    const char *lt_in[2] = {pos, len};
    const char *valid = emit(b, "Less", 2, lt_in, (int32_t)bl, 2, (cv_dim[]){b->s[0], b->s[3]}, NULL, NULL);
    const char *u4_in[2] = {valid, cv_const_i64(b->m, "axes", 2, ax12, 0)};
    const char *v4 = emit(b, "Unsqueeze", 2, u4_in, (int32_t)bl, 4,
                          (cv_dim[]){b->s[0], {1, NULL}, {1, NULL}, b->s[3]}, NULL, NULL);
    return masked(b, v4, s);
}

/* Why node `n` cannot be lowered here, or NULL. */
static const char *unsupported(cv_model *m, const Onnx__NodeProto *n, char *why, size_t wn)
{
    int r[3];
    cv_dim d[3][OQ_SYM_MAX_RANK];
    for (int k = 0; k < 3; k++) {
        if (k >= (int)n->n_input || !*n->input[k]) return "Q, K or V missing";
        cv_type_of(m, n->input[k], &r[k], d[k]);
        if (r[k] != 4) {
            snprintf(why, wn, "'%s' is not known to be rank 4 (rank-3 inputs are not lowered)", n->input[k]);
            return why;
        }
    }
    if ((n->n_input > 4 && *n->input[4]) || (n->n_input > 5 && *n->input[5]) || n->n_output > 1)
        return "a KV cache (past_key/value or present outputs)";
    if (!n->n_output || !*n->output[0]) return "no output";
    int32_t t = cv_type_of(m, n->input[0], &r[0], d[0]);
    if (t != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 &&
        t != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 && t != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
        snprintf(why, wn, "Q '%.120s' is of type %s, not a floating-point type", n->input[0], oq_dtype_name((oq_dtype)t));
        return why;
    }
    if (d[0][1].value > 0 && d[1][1].value > 0 && d[0][1].value != d[1][1].value)
        return "grouped-query heads (Q and K have different head counts)";
    if (oq_node_attr_int(n, "is_causal", 0) && n->n_input > 6 && *n->input[6])
        return "is_causal with nonpad_kv_seqlen (a bottom-right causal diagonal)";
    /* a bool mask selects (Where), any other is added: an unknown type is neither */
    if (n->n_input > 3 && *n->input[3] && !cv_type_of(m, n->input[3], &r[0], d[0])) {
        snprintf(why, wn, "attn_mask '%.120s' has no known type (neither declared nor inferred): bool or additive "
                 "is unknown", n->input[3]);
        return why;
    }
    return NULL;
}

static void lower_one(cv_ctx *c, cv_model *m, const Onnx__NodeProto *n)
{
    char why[256];
    const char *bad = unsupported(m, n, why, sizeof why);
    if (bad) {
        c->r->refused++;
        cv_step(c->r, "lower", n->name, "refused", "%s", bad);
        return;
    }
    body b = {m, n->name, 0, {{0}}};
    int r;
    cv_dim qd[OQ_SYM_MAX_RANK], kd[OQ_SYM_MAX_RANK], yd[OQ_SYM_MAX_RANK];
    const char *q = n->input[0], *k = n->input[1], *v = n->input[2];
    const char *mask = n->n_input > 3 ? n->input[3] : "", *seqlen = n->n_input > 6 ? n->input[6] : "";
    b.t = cv_type_of(m, q, &r, qd);
    cv_type_of(m, k, &r, kd);
    cv_dim s[4] = {qd[0], qd[1], qd[2], kd[2]};
    memcpy(b.s, s, sizeof s);
    Onnx__NodeProto *t;
    static const int64_t perm[] = {0, 1, 3, 2};
    const char *kt = emit(&b, "Transpose", 1, &k, b.t, 4, (cv_dim[]){kd[0], kd[1], kd[3], kd[2]}, NULL, &t);
    cv_attr_ints(m, t, "perm", 4, perm);
    const char *mm[2] = {q, kt};
    const char *sc = emit(&b, "MatMul", 2, mm, b.t, 4, b.s, NULL, NULL);
    const Onnx__AttributeProto *sa = oq_node_attr(n, "scale");
    const char *mul[2] = {sc, sa ? cv_const_scalar(m, "attn_scale", b.t, sa->f) : default_scale(&b, q, qd)};
    sc = emit(&b, "Mul", 2, mul, b.t, 4, b.s, NULL, NULL);
    double cap = oq_node_attr_float(n, "softcap", 0);
    if (cap != 0) {
        const char *cc = cv_const_scalar(m, "softcap", b.t, cap);
        const char *dv[2] = {sc, cc};
        const char *th = emit(&b, "Tanh", 1, (const char *[]){emit(&b, "Div", 2, dv, b.t, 4, b.s, NULL, NULL)}, b.t, 4, b.s, NULL, NULL);
        sc = emit(&b, "Mul", 2, (const char *[]){th, cc}, b.t, 4, b.s, NULL, NULL);
    }
    if (*mask) {
        cv_dim md[OQ_SYM_MAX_RANK];
        int32_t mt = cv_type_of(m, mask, &r, md);
        if (mt == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) sc = masked(&b, mask, sc);
        else sc = emit(&b, "Add", 2, (const char *[]){sc, mask}, b.t, 4, b.s, NULL, NULL);
    }
    if (oq_node_attr_int(n, "is_causal", 0)) sc = causal(&b, q, k, sc);
    if (*seqlen) sc = padding(&b, k, seqlen, sc);
    Onnx__NodeProto *sm;
    const char *p = emit(&b, "Softmax", 1, &sc, b.t, 4, b.s, NULL, &sm);
    cv_attr_int(m, sm, "axis", -1);
    const char *isn = emit(&b, "IsNaN", 1, &p, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 4, b.s, NULL, NULL);
    const char *wh[3] = {isn, cv_const_scalar(m, "zero", b.t, 0), p};
    p = emit(&b, "Where", 3, wh, b.t, 4, b.s, NULL, NULL);
    char y[512], name[512];
    snprintf(y, sizeof y, "%s", n->output[0]);
    snprintf(name, sizeof name, "%s", n->name ? n->name : "");
    int32_t yt = cv_type_of(m, y, &r, yd);
    cv_node_remove(m, cv_node_index(m, n));
    emit(&b, "MatMul", 2, (const char *[]){p, v}, yt ? yt : b.t, r, yd, y, NULL);
    cv_step(c->r, "lower", name, "rewritten", "Attention -> MatMul, Mul%s%s%s%s, Softmax, IsNaN guard, MatMul",
            cap != 0 ? ", softcap" : "", *mask ? ", mask" : "", oq_node_attr_int(n, "is_causal", 0) ? ", causal" : "",
            *seqlen ? ", key padding from nonpad_kv_seqlen" : "");
}

oq_status cv_pass_lower(cv_ctx *c, cv_model *m, oq_err *err)
{
    size_t count = m->nodes.n, seen = 0;
    const Onnx__NodeProto **todo = calloc(count ? count : 1, sizeof *todo);
    if (!todo) return cv_oom(m, err);
    for (size_t i = 0; i < count; i++)
        if (oq_node_is(m->nodes.v[i], "Attention")) todo[seen++] = m->nodes.v[i];
    for (size_t i = 0; i < seen; i++) lower_one(c, m, todo[i]);
    free(todo);
    if (!seen) cv_step(c->r, "lower", "", "note", "no Attention node");
    return m->oom ? cv_oom(m, err) : OQ_OK;
}
