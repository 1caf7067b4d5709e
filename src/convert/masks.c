/* --mask-to-seqlen and --expand-mask: the attn_mask of Attention nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"

enum { IN_Q, IN_K, IN_V, IN_MASK, IN_PAST_K, IN_PAST_V, IN_SEQLEN };

static const char *input_at(const Onnx__NodeProto *n, size_t k)
{
    return k < n->n_input ? n->input[k] : "";
}

/* Drop trailing omitted inputs ("" at the end means absent anyway). */
static void trim_inputs(Onnx__NodeProto *n)
{
    while (n->n_input && !*n->input[n->n_input - 1]) free(n->input[--n->n_input]);
}

/* The sequence axis of Q or K: 2 in [B, H, L, D], 1 in [B, L, H*D]. */
static int seq_dims(cv_model *m, const char *x, oq_symdim *batch, oq_symdim *len)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    int r = oq_sym_shape(cv_sym(m), x, d, OQ_SYM_MAX_RANK);
    if (r != 4 && r != 3) return 0;
    *batch = d[0];
    *len = d[r == 4 ? 2 : 1];
    return 1;
}

static char *dim_str(cv_model *m, oq_symdim d, char *buf)
{
    return oq_symdim_str(cv_sym(m), d, buf, 64);
}

/* x cast to `to`, typed [r] d. */
static const char *cast(cv_model *m, const char *x, const char *name, int32_t to, int r, const cv_dim *d)
{
    char hint[64];
    snprintf(hint, sizeof hint, "%s_cast", name);
    const char *y = cv_fresh(m, name);
    Onnx__NodeProto *n = cv_node_add(m, "Cast", hint, 1, &x, 1, &y);
    cv_attr_int(m, n, "to", to);
    cv_set_type(m, y, to, r, d);
    return y;
}

/* A mask read with 1 = padding made one that reads 1 = valid: Not(bool(mask)), so its sum
 * counts the valid keys too. */
static const char *valid_of(cv_model *m, const char *mask, int32_t et, int r, const cv_dim *d)
{
    const char *b = et == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL
                        ? mask : cast(m, mask, "mask_bool", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, r, d);
    const char *valid = cv_fresh(m, "mask_valid");
    cv_node_add(m, "Not", "mask_valid_not", 1, &b, 1, &valid);
    cv_set_type(m, valid, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, r, d);
    return valid;
}

/* nonpad_kv_seqlen = int64(ReduceSum(float(mask), axis 1)): exact for L < 2^24; the same
 * float reduction ortqual's own exports use, which ran on the CUDA EP. `pad`: the mask reads
 * 1 = padding, and its valid keys are counted (valid_of). */
static const char *seqlen_of(cv_model *m, const char *mask, int pad)
{
    cv_dim d[OQ_SYM_MAX_RANK];
    int r;
    int32_t et = cv_type_of(m, mask, &r, d);
    const char *x = pad ? valid_of(m, mask, et, r, d) : mask;
    if (pad) et = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    if (et != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) x = cast(m, x, "mask_f32", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, r, d);
    static const int64_t axis1[] = {1};
    const char *in[2] = {x, cv_const_i64(m, "seqlen_axes", 1, axis1, 0)};
    const char *sum = cv_fresh(m, "mask_valid_count");
    Onnx__NodeProto *n = cv_node_add(m, "ReduceSum", "mask_valid_count", 2, in, 1, &sum);
    cv_attr_int(m, n, "keepdims", 0);
    cv_set_type(m, sum, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, r == 2 ? 1 : -1, d);
    const char *len = cv_fresh(m, "nonpad_kv_seqlen");
    n = cv_node_add(m, "Cast", "nonpad_kv_seqlen_cast", 1, &sum, 1, &len);
    cv_attr_int(m, n, "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
    cv_set_type(m, len, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, r == 2 ? 1 : -1, d);
    return len;
}

/* Why a rewrite would not be exact, or NULL when the dims line up. */
static const char *dims_mismatch(cv_model *m, const cv_maskfn *fn, const char *q, const char *k, char *why, size_t n)
{
    oq_symdim qb, ql, kb, kl;
    char a[64], b[64];
    if (!seq_dims(m, q, &qb, &ql) || !seq_dims(m, k, &kb, &kl)) return "the shapes of Q and K are unknown";
    if ((fn->kind == CV_MASK_KEY_PADDING || fn->kind == CV_MASK_CAUSAL_PADDING) && !oq_symdim_eq(fn->keys, kl)) {
        snprintf(why, n, "cannot show that the mask's length %s is K's sequence length %s (declare the shape of "
                 "K '%s' with the mask's dim names: value_info)", dim_str(m, fn->keys, a), dim_str(m, kl, b), k);
        return why;
    }
    if (fn->kind == CV_MASK_KEY_PADDING && !oq_symdim_eq(fn->batch, qb)) {
        snprintf(why, n, "cannot show that the mask's batch %s is Q's batch %s", dim_str(m, fn->batch, a),
                 dim_str(m, qb, b));
        return why;
    }
    int causal = fn->kind == CV_MASK_CAUSAL || fn->kind == CV_MASK_CAUSAL_PADDING;
    if (causal && !oq_symdim_eq(ql, kl)) {
        snprintf(why, n, "the causal mask is not square over Q's %s and K's %s positions", dim_str(m, ql, a),
                 dim_str(m, kl, b));
        return why;
    }
    /* is_causal's triangle is upper-left over the sequence: one of another size is not it */
    if (causal && oq_symdim_known(fn->causal) && !oq_symdim_eq(fn->causal, kl)) {
        snprintf(why, n, "the causal mask is %s positions square, cannot show that it is the sequence length %s of Q "
                 "and K (a constant triangle made for one length is sliced to the sequence, as PyTorch's "
                 "bias[:, :, :L, :L])", dim_str(m, fn->causal, a), dim_str(m, kl, b));
        return why;
    }
    return NULL;
}

typedef struct seqlens {
    const char *input[8], *value[8];
    size_t n;
} seqlens;

static const char *seqlen_cached(cv_model *m, seqlens *s, const char *input, int pad)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->input[i], input)) return s->value[i];
    const char *v = seqlen_of(m, input, pad);
    if (s->n < 8) {
        s->input[s->n] = input;
        s->value[s->n++] = v;
    }
    return v;
}

static void to_seqlen(cv_ctx *c, cv_model *m, size_t i, seqlens *cache)
{
    const Onnx__NodeProto *n = m->nodes.v[i];
    char mask[512], why[256];
    snprintf(mask, sizeof mask, "%s", input_at(n, IN_MASK)); /* the edit below frees the node's copy */
    int causal = (int)oq_node_attr_int(n, "is_causal", 0);
    if (*input_at(n, IN_SEQLEN)) { /* already in the fast form: said, as the other passes say it */
        cv_step(c->r, "mask-to-seqlen", n->name, "skipped", "already done: nonpad_kv_seqlen '%s'", input_at(n, IN_SEQLEN));
        return;
    }
    if (!*mask) {
        cv_step(c->r, "mask-to-seqlen", n->name, "skipped", causal ? "already done: is_causal = 1, no attn_mask"
                                                                   : "no attn_mask: every key attended");
        return;
    }
    if (*input_at(n, IN_PAST_K) || *input_at(n, IN_PAST_V) || n->n_output > 1) {
        c->r->refused++;
        cv_step(c->r, "mask-to-seqlen", n->name, "refused", "a KV cache (past_key/value or present outputs): "
                "nonpad_kv_seqlen cannot be combined with it");
        return;
    }
    cv_maskfn fn;
    const char *bad = NULL;
    if (cv_maskfn_eval(m, mask, causal, c->o->mask_input, c->polarity, &fn, why, sizeof why)) bad = why;
    else bad = dims_mismatch(m, &fn, input_at(n, IN_Q), input_at(n, IN_K), why, sizeof why);
    if (bad) {
        c->r->refused++;
        if (fn.default_input) /* a weight declared an input: the caller can say so, as for the fuse */
            cv_step(c->r, "mask-to-seqlen", n->name, "refused", "attn_mask '%s': %s; if it is a constant, not a "
                    "value to feed, freeze '%s' makes it one", mask, bad, fn.default_input);
        else if (!fn.inverted) cv_step(c->r, "mask-to-seqlen", n->name, "refused", "attn_mask '%s': %s", mask, bad);
        else if (c->polarity == OQ_MASK_POLARITY_PAD)
            cv_step(c->r, "mask-to-seqlen", n->name, "refused", "attn_mask '%s': %s; a mask whose 1 marks a valid "
                    "key is read with mask_polarity keep", mask, bad);
        else
            cv_step(c->r, "mask-to-seqlen", n->name, "refused", "attn_mask '%s': %s; a mask whose 1 marks padding "
                    "(PyTorch's key_padding_mask) is read with mask_polarity pad", mask, bad);
        return;
    }
    int padding = fn.kind == CV_MASK_KEY_PADDING || fn.kind == CV_MASK_CAUSAL_PADDING;
    if (padding && cv_contract(c, "mask-to-seqlen", n->name, fn.input)) return;
    Onnx__NodeProto *own = cv_node_own(m, i);
    if (!own) return;
    int pad = c->polarity == OQ_MASK_POLARITY_PAD;
    const char *len = fn.kind == CV_MASK_KEY_PADDING ? seqlen_cached(m, cache, fn.input, pad) : NULL;
    cv_node_set_input(m, own, IN_MASK, "");
    if (len) cv_node_set_input(m, own, IN_SEQLEN, len);
    cv_attr_set_int(m, own, "is_causal", fn.kind == CV_MASK_CAUSAL || fn.kind == CV_MASK_CAUSAL_PADDING);
    trim_inputs(own);
    switch (fn.kind) {
    case CV_MASK_ALL:
        cv_step(c->r, "mask-to-seqlen", own->name, "rewritten", "attn_mask '%s' attends every key: dropped", mask);
        break;
    case CV_MASK_KEY_PADDING:
        cv_step(c->r, "mask-to-seqlen", own->name, "rewritten",
                "attn_mask '%s' is the key padding of input '%s': nonpad_kv_seqlen = ReduceSum(%s'%s'%s, axis 1) "
                "(exact for valid-prefix masks%s)", mask, fn.input, pad ? "Not(" : "", fn.input, pad ? ")" : "",
                pad ? "; 1 = padding" : "");
        break;
    case CV_MASK_CAUSAL:
        cv_step(c->r, "mask-to-seqlen", own->name, "rewritten", "attn_mask '%s' is causal: is_causal = 1", mask);
        break;
    case CV_MASK_CAUSAL_PADDING:
        cv_step(c->r, "mask-to-seqlen", own->name, "rewritten",
                "attn_mask '%s' is causal and the key padding of input '%s': is_causal = 1 alone (valid "
                "query rows attend only valid keys when masks are valid prefixes; padded rows change; "
                "nonpad_kv_seqlen with is_causal would align the diagonal bottom-right)", mask, fn.input);
        break;
    }
}

oq_status cv_pass_mask_to_seqlen(cv_ctx *c, cv_model *m, oq_err *err)
{
    seqlens cache = {{0}, {0}, 0};
    size_t count = m->nodes.n, seen = 0;
    for (size_t i = 0; i < count; i++) {
        if (!oq_node_is(m->nodes.v[i], "Attention")) continue;
        seen++;
        to_seqlen(c, m, i, &cache);
    }
    if (!seen) cv_step(c->r, "mask-to-seqlen", "", "note", "no Attention node");
    return m->oom ? cv_oom(m, err) : OQ_OK;
}

/* ---- --expand-mask --------------------------------------------------------------------- */

static void expand_one(cv_ctx *c, cv_model *m, size_t i)
{
    const Onnx__NodeProto *n = m->nodes.v[i];
    char mask[512];
    snprintf(mask, sizeof mask, "%s", input_at(n, IN_MASK)); /* the edit below frees the node's copy */
    const char *q = input_at(n, IN_Q);
    if (!*mask) return;
    oq_symdim md[OQ_SYM_MAX_RANK], qb, ql;
    int mr = oq_sym_shape(cv_sym(m), mask, md, OQ_SYM_MAX_RANK);
    if (mr >= 2 && seq_dims(m, q, &qb, &ql) && oq_symdim_eq(md[mr - 2], ql)) {
        cv_step(c->r, "expand-mask", n->name, "skipped", "attn_mask '%s' already spans the queries", mask);
        return;
    }
    int qr;
    cv_dim qd[OQ_SYM_MAX_RANK], mdims[OQ_SYM_MAX_RANK];
    cv_type_of(m, q, &qr, qd);
    if (qr != 3 && qr != 4) {
        c->r->refused++;
        cv_step(c->r, "expand-mask", n->name, "refused", "the rank of Q '%s' is unknown", q);
        return;
    }
    /* target [1, ..., Lq, 1]: Expand broadcasts the mask's query axis to Q's length */
    int tr = mr > 2 ? mr : 2;
    const char *lq = cv_fresh(m, "q_len");
    Onnx__NodeProto *s = cv_node_add(m, "Shape", "q_len_shape", 1, &q, 1, &lq);
    cv_attr_int(m, s, "start", qr - 2);
    cv_attr_int(m, s, "end", qr - 1);
    cv_set_type(m, lq, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (cv_dim[]){{1, NULL}});
    static const int64_t ones[OQ_SYM_MAX_RANK] = {1, 1, 1, 1, 1, 1, 1, 1};
    const char *parts[3] = {tr > 2 ? cv_const_i64(m, "mask_lead", (size_t)tr - 2, ones, 0) : NULL, lq,
                            cv_const_i64(m, "mask_one", 1, ones, 0)};
    const char *shape = cv_fresh(m, "mask_expand_shape");
    Onnx__NodeProto *cat = cv_node_add(m, "Concat", "mask_expand_shape", tr > 2 ? 3 : 2, tr > 2 ? parts : parts + 1, 1, &shape);
    cv_attr_int(m, cat, "axis", 0);
    cv_set_type(m, shape, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (cv_dim[]){{tr, NULL}});
    const char *in[2] = {input_at(n, IN_MASK), shape};
    const char *full = cv_fresh(m, "attn_mask_full");
    cv_node_add(m, "Expand", "attn_mask_expand", 2, in, 1, &full);
    int r;
    int32_t et = cv_type_of(m, mask, &r, mdims);
    if (r < 0) {
        r = tr;
        for (int k = 0; k < r; k++) mdims[k] = (cv_dim){-1, NULL};
    }
    cv_dim out[OQ_SYM_MAX_RANK];
    for (int k = 0; k < tr; k++) out[k] = k < tr - r ? (cv_dim){1, NULL} : mdims[k - (tr - r)];
    out[tr - 2] = qd[qr - 2];
    if (et) cv_set_type(m, full, et, tr, out); /* an unknown type is left to ORT: Expand keeps its input's */
    Onnx__NodeProto *own = cv_node_own(m, i);
    if (!own) return;
    cv_node_set_input(m, own, IN_MASK, full);
    cv_step(c->r, "expand-mask", own->name, "rewritten", "attn_mask '%s' expanded over the query axis to '%s'",
            mask, full);
}

oq_status cv_pass_expand_mask(cv_ctx *c, cv_model *m, oq_err *err)
{
    size_t count = m->nodes.n, seen = 0, masked = 0;
    for (size_t i = 0; i < count; i++) {
        if (!oq_node_is(m->nodes.v[i], "Attention")) continue;
        seen++;
        masked += *input_at(m->nodes.v[i], IN_MASK) != '\0';
        expand_one(c, m, i);
    }
    /* as the other passes: nothing rewritten is said, not left to the reader to infer */
    if (!seen) cv_step(c->r, "expand-mask", "", "note", "no Attention node");
    else if (!masked) cv_step(c->r, "expand-mask", "", "note", "no Attention node has an attn_mask");
    return m->oom ? cv_oom(m, err) : OQ_OK;
}
