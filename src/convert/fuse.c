/* --fuse: decomposed attention chains -> one ONNX Attention node each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"

/* What a match needs after the graph changed: names and node pointers only. */
typedef struct fusion {
    oq_sdpa_match m;
    const Onnx__NodeProto *softmax, *out_mm, *score_mm;
} fusion;

/* [B, L, H, D] -> [B, H, L, D] for the key of a Transpose[0,2,3,1] chain. */
static const char *heads_first(cv_model *m, const char *x)
{
    const char *y = cv_fresh(m, "k_heads");
    Onnx__NodeProto *t = cv_node_add(m, "Transpose", "k_heads_transpose", 1, &x, 1, &y);
    static const int64_t perm[] = {0, 2, 1, 3};
    cv_attr_ints(m, t, "perm", 4, perm);
    cv_dim d[OQ_SYM_MAX_RANK];
    int r;
    int32_t et = cv_type_of(m, x, &r, d);
    if (r == 4) {
        cv_dim p[4] = {d[0], d[2], d[1], d[3]};
        cv_set_type(m, y, et, 4, p);
    } else {
        cv_set_type(m, y, et, 4, (cv_dim[]){{-1, NULL}, {-1, NULL}, {-1, NULL}, {-1, NULL}});
    }
    return y;
}

/* One node of one input and output, with the output's type declared (rank < 0: none). */
static const char *emit1(cv_model *m, const char *op, const char *x, const char *extra, const char *hint,
                         const char *out, int32_t et, int r, const cv_dim *d, Onnx__NodeProto **node)
{
    const char *y = out ? out : cv_fresh(m, hint);
    const char *in[2] = {x, extra};
    *node = cv_node_add(m, op, hint, extra ? 2 : 1, in, 1, &y);
    if (et && r >= 0) cv_set_type(m, y, et, r, d);
    return y;
}

/* nn.MultiheadAttention's [L, B, E] -> [B, L, E]: the 3-D form Attention splits into
 * q_num_heads heads of E / H columns each, as the fold's Reshape split them. */
static const char *batch_first(cv_model *m, const char *x)
{
    static const int64_t perm[] = {1, 0, 2};
    cv_dim d[OQ_SYM_MAX_RANK] = {{0, NULL}};
    int r;
    int32_t et = cv_type_of(m, x, &r, d);
    Onnx__NodeProto *t;
    const char *y = emit1(m, "Transpose", x, NULL, "mha_batch_first", NULL, et, r == 3 ? 3 : -1,
                          (cv_dim[]){d[1], d[0], d[2]}, &t);
    cv_attr_ints(m, t, "perm", 3, perm);
    return y;
}

/* A folded mask [B*H, Lq, Lk] as [B, H, Lq, Lk] (through [B*H, 1, Lq, Lk]); one that broadcasts over B*H (axis 0 of 1, or
 * rank 2 and below) as it is. */
static const char *unfold_mask(cv_model *m, const oq_sdpa_match *f, const char *mask)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    if (!*mask || oq_sym_shape(cv_sym(m), mask, d, OQ_SYM_MAX_RANK) != 3 || oq_symdim_eq(d[0], oq_symdim_const(1)))
        return mask;
    static const int64_t axis1[] = {1};
    const int64_t split[] = {-1, f->fold_heads, 0, 0}; /* of [B*H, 1, Lq, Lk]: the 0s copy Lq and Lk */
    Onnx__NodeProto *n;
    cv_dim t[OQ_SYM_MAX_RANK] = {{0, NULL}};
    int r;
    int32_t et = cv_type_of(m, mask, &r, t);
    if (r != 3) t[1] = t[2] = (cv_dim){-1, NULL};
    const char *u = emit1(m, "Unsqueeze", mask, cv_const_i64(m, "mask_axis", 1, axis1, 0), "attn_mask_unsqueeze",
                          NULL, et, 4, (cv_dim[]){t[0], {1, NULL}, t[1], t[2]}, &n);
    return emit1(m, "Reshape", u, cv_const_i64(m, "mask_heads", 4, split, 0), "attn_mask_heads", NULL, et, 4,
                 (cv_dim[]){{-1, NULL}, {f->fold_heads, NULL}, t[1], t[2]}, &n);
}

/* Attention's [B, L, H*D] back into the fold's [B*H, L, D] under the value product's name `y`,
 * as the fold made it: [L, B, H*D] -> [L, B*H, D] -> Transpose(1,0,2). */
static void refold(cv_model *m, const oq_sdpa_match *f, const char *o, const char *y, int32_t et)
{
    static const int64_t swap[] = {1, 0, 2};
    const int64_t fold[] = {0, -1, f->fold_dim};
    const cv_dim u = {-1, NULL}, e = {f->fold_heads * f->fold_dim, NULL}, d = {f->fold_dim, NULL};
    Onnx__NodeProto *n;
    const char *a = emit1(m, "Transpose", o, NULL, "attn_seq_first", NULL, et, 3, (cv_dim[]){u, u, e}, &n);
    cv_attr_ints(m, n, "perm", 3, swap);
    const char *b = emit1(m, "Reshape", a, cv_const_i64(m, "attn_fold", 3, fold, 0), "attn_fold", NULL, et, 3,
                          (cv_dim[]){u, u, d}, &n);
    emit1(m, "Transpose", b, NULL, "attn_folded", y, 0, -1, NULL, &n);
    cv_attr_ints(m, n, "perm", 3, swap);
}

/* Declare `y` of type et with the shape ONNX broadcasting gives inputs in[0..n-1] (a dim
 * neither 1 nor the others' left unknown); their ranks unknown: the type alone. */
static void declare_broadcast(cv_model *m, const char *y, int32_t et, size_t n, const char *const *in)
{
    cv_dim out[OQ_SYM_MAX_RANK] = {{0, NULL}}, d[OQ_SYM_MAX_RANK];
    int rank = 0;
    for (size_t k = 0; k < n; k++) {
        int r;
        cv_type_of(m, in[k], &r, d);
        if (r < 0 || r > OQ_SYM_MAX_RANK) {
            cv_set_type(m, y, et, -1, NULL);
            return;
        }
        for (int i = 0; i < r; i++) { /* right-aligned */
            cv_dim *o = &out[OQ_SYM_MAX_RANK - 1 - i], x = d[r - 1 - i];
            int one = x.value == 1 && !x.param, same = x.value == o->value && (!x.param) == (!o->param) &&
                                                       (!x.param || !strcmp(x.param, o->param));
            if (i >= rank || (o->value == 1 && !o->param)) *o = x;
            else if (!one && !same) *o = (cv_dim){-1, NULL};
        }
        if (r > rank) rank = r;
    }
    cv_set_type(m, y, et, rank, out + OQ_SYM_MAX_RANK - rank);
}

static const char *emit_broadcast(cv_model *m, const char *op, size_t n, const char *const *in, const char *hint,
                                  int32_t et)
{
    const char *y = cv_fresh(m, hint);
    cv_node_add(m, op, hint, n, in, 1, &y);
    declare_broadcast(m, y, et, n, in);
    return y;
}

/* Several terms: their sum (innermost first, as the chain added them), under the chain's Wheres
 * (innermost first) with their own fills: s + Where(c, a, fill) is Where(c, s + a, s + fill),
 * and s + fill excludes the key as fill does. A float mask, whatever the Wheres' conditions. */
static const char *combined_mask(cv_model *m, const fusion *fu)
{
    const oq_sdpa_match *f = &fu->m;
    int r;
    cv_dim d[OQ_SYM_MAX_RANK];
    int32_t et = cv_type_of(m, fu->score_mm->output[0], &r, d);
    if (!et) et = cv_type_of(m, f->terms[0], &r, d);
    const char *sum = f->terms[f->n_terms - 1];
    for (int i = f->n_terms - 2; i >= 0; i--)
        sum = emit_broadcast(m, "Add", 2, (const char *[]){sum, f->terms[i]}, "attn_bias_sum", et);
    for (int i = f->n_wheres - 1; i >= 0; i--) {
        const oq_sdpa_where *w = &f->wheres[i];
        int keep = w->kind == OQ_SDPA_MASK_KEEP;
        sum = emit_broadcast(m, "Where", 3, (const char *[]){w->cond, keep ? sum : w->fill_value,
                                                             keep ? w->fill_value : sum}, "attn_bias_masked", et);
    }
    return sum;
}

/* A float mask in Q's type, which Attention wants (a Cast when it is another). */
static const char *in_q_type(cv_model *m, const char *mask, const char *q)
{
    cv_dim d[OQ_SYM_MAX_RANK];
    int r;
    int32_t qt = cv_type_of(m, q, &r, d), mt = cv_type_of(m, mask, &r, d);
    if (!qt || !mt || qt == mt) return mask;
    const char *cast = cv_fresh(m, "attn_bias");
    Onnx__NodeProto *n = cv_node_add(m, "Cast", "attn_bias_cast", 1, &mask, 1, &cast);
    cv_attr_int(m, n, "to", qt);
    cv_set_type(m, cast, qt, r, d);
    return cast;
}

/* Where w's keep-mask: its condition (KEEP), else its negation (masked_fill's: a Not's input). */
static const char *keep_mask(cv_model *m, const oq_sdpa_where *w)
{
    if (w->kind == OQ_SDPA_MASK_KEEP) return w->cond;
    const Onnx__NodeProto *p = oq_gview_producer(cv_view(m), w->cond, NULL);
    if (oq_node_is(p, "Not") && p->n_input == 1) return p->input[0];
    cv_dim d[OQ_SYM_MAX_RANK];
    int r;
    const char *keep = cv_fresh(m, "attn_keep");
    cv_node_add(m, "Not", "attn_keep_not", 1, &w->cond, 1, &keep);
    cv_type_of(m, w->cond, &r, d);
    cv_set_type(m, keep, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, r, d);
    return keep;
}

/* The attn_mask operand: true keeps a key (bool; the Wheres' keep-masks ANDed), or added to the
 * scores (float). */
static const char *attn_mask(cv_model *m, const fusion *fu, const char *q)
{
    const oq_sdpa_match *f = &fu->m;
    if (oq_sdpa_mask_combined(f)) return in_q_type(m, combined_mask(m, fu), q);
    if (f->mask == OQ_SDPA_MASK_NONE) return "";
    if (f->mask == OQ_SDPA_MASK_ADD) return in_q_type(m, f->mask_value, q);
    const char *keep = keep_mask(m, &f->wheres[0]);
    for (int i = 1; i < f->n_wheres; i++)
        keep = emit_broadcast(m, "And", 2, (const char *[]){keep, keep_mask(m, &f->wheres[i])}, "attn_keep_both",
                              ONNX__TENSOR_PROTO__DATA_TYPE__BOOL);
    return keep;
}

/* A mask with a bias in it is a float mask whatever its Where: ORT's CUDA flash kernel takes
 * no attn_mask, and nonpad_kv_seqlen cannot carry a bias. */
static void float_mask_note(cv_ctx *c, const fusion *fu, const char *mask)
{
    char text[96];
    if (!oq_sdpa_mask_combined(&fu->m)) return;
    cv_step(c->r, "fuse", fu->softmax->name, "note", "attn_mask '%s' sums the chain's %s into one float mask: ORT's "
            "CUDA flash attention takes no attn_mask and nonpad_kv_seqlen (OQ_CONVERT_MASK_TO_SEQLEN) cannot carry a "
            "bias, so this Attention is not flash-eligible (memory-efficient attention or MATH on CUDA)", mask,
            oq_sdpa_mask_text(&fu->m, text, sizeof text));
}

/* ORT 1.29-1.31 require attn_mask's query axis to be Q's length: say so when the fused
 * node keeps a mask that broadcasts over the queries and no mask pass follows. */
static void broadcast_note(cv_ctx *c, cv_model *m, const Onnx__NodeProto *a, const char *mask)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    if (!a || !*mask || (c->o->passes & (OQ_CONVERT_MASK_TO_SEQLEN | OQ_CONVERT_EXPAND_MASK))) return;
    int r = oq_sym_shape(cv_sym(m), mask, d, OQ_SYM_MAX_RANK);
    if (r >= 2 && oq_symdim_eq(d[r - 2], oq_symdim_const(1)))
        cv_step(c->r, "fuse", a->name, "note", "attn_mask '%s' broadcasts over the queries: valid ONNX, refused by "
                "ONNX Runtime 1.29-1.31 (inconsistent q_sequence_length); add OQ_CONVERT_EXPAND_MASK or "
                "OQ_CONVERT_MASK_TO_SEQLEN", mask);
}

static void fuse_one(cv_ctx *c, cv_model *m, const fusion *fu)
{
    const oq_sdpa_match *f = &fu->m;
    const char *y = fu->out_mm->output[0];
    int fold = f->kform == OQ_SDPA_KT_FOLD;
    const char *q = fold ? batch_first(m, f->q) : f->q, *v = fold ? batch_first(m, f->v) : f->v;
    const char *k = f->kform == OQ_SDPA_KT_HEADS ? heads_first(m, f->k) : fold ? batch_first(m, f->k) : f->k;
    const char *mask = attn_mask(m, fu, q);
    if (fold) mask = unfold_mask(m, f, mask);
    const char *in[4] = {q, k, v, mask};
    int r;
    cv_dim dq[OQ_SYM_MAX_RANK], dv[OQ_SYM_MAX_RANK];
    int32_t et = cv_type_of(m, y, &r, dq);
    /* the value product's output keeps its name, so its readers and value_info stay (a fold's
     * through the Reshapes that fold Attention's [B, L, H*D] again) */
    const char *o = fold ? cv_fresh(m, "attn_out") : y;
    cv_node_remove(m, cv_node_index(m, fu->out_mm));
    Onnx__NodeProto *a = cv_node_add(m, "Attention", "attention", *mask ? 4 : 3, in, 1, &o);
    cv_attr_float(m, a, "scale", (float)f->scale);
    if (fold) {
        cv_attr_int(m, a, "q_num_heads", f->fold_heads);
        cv_attr_int(m, a, "kv_num_heads", f->fold_heads);
        refold(m, f, o, y, et ? et : cv_type_of(m, f->q, &r, dv));
    } else if (r != 4 && cv_type_of(m, f->q, &r, dq) && r == 4 && cv_type_of(m, f->v, &r, dv) && r == 4) {
        dq[3] = dv[3];
        cv_set_type(m, y, et ? et : cv_type_of(m, f->q, &r, dv), 4, dq);
    }
    c->r->fused++;
    char text[96];
    broadcast_note(c, m, a, mask);
    float_mask_note(c, fu, mask);
    cv_step(c->r, "fuse", fu->softmax->name, "fused", "Attention '%s': scale %.6g, %s%s%s%s%s; %s",
            a ? a->name : "?", f->scale, oq_sdpa_mask_text(f, text, sizeof text), *mask ? " '" : "", mask, *mask ? "'" : "",
            f->guard ? ", IsNaN guard dropped (Attention gives fully masked rows zeros)" : "", f->chain);
}

/* Why live node `x` stays: from its output forward through the score-side ops it feeds, the
 * graph output or the other node that reads it. */
static void kept_by(cv_model *m, const unsigned char *live, const Onnx__NodeProto *x, char *buf, size_t cap)
{
    static const char *const along[] = {"Mul", "Div", "Add", "Sub", "Where", "Cast", NULL};
    const oq_gview *v = cv_view(m);
    const char *o = x->n_output ? x->output[0] : "";
    snprintf(buf, cap, "'%s' is read elsewhere", o);
    for (int depth = 0; v && depth < 8; depth++) {
        if (oq_gview_is_output(v, o)) {
            snprintf(buf, cap, "'%s' is also a graph output", o);
            return;
        }
        const Onnx__NodeProto *r = NULL;
        for (size_t i = 0, nc = oq_gview_consumer_count(v, o); !r && i < nc; i++) {
            size_t ci = oq_gview_consumer(v, o, i);
            if (live[ci]) r = m->nodes.v[ci];
        }
        if (!r) return;
        int on = 0;
        for (size_t k = 0; along[k]; k++) on |= oq_node_is(r, along[k]);
        if (!on || !r->n_output) {
            snprintf(buf, cap, "'%s' is also read by %s '%s'", o, r->op_type ? r->op_type : "",
                     r->name ? r->name : "");
            return;
        }
        o = r->output[0];
    }
}

/* A fused chain whose softmax or score product something else still reads stays beside the
 * Attention node (the result is the same, computed twice): say so, and why, rather than
 * leave "fused" to suggest the chain went. */
static void kept_notes(cv_ctx *c, cv_model *m, const fusion *fs, size_t n)
{
    unsigned char *live = n ? cv_live_nodes(m) : NULL;
    for (size_t i = 0; live && i < n; i++) {
        size_t si = cv_node_index(m, fs[i].softmax), mi = cv_node_index(m, fs[i].score_mm);
        const Onnx__NodeProto *x = si != (size_t)-1 && live[si]   ? fs[i].softmax
                                   : mi != (size_t)-1 && live[mi] ? fs[i].score_mm
                                                                  : NULL;
        if (!x) continue;
        char why[640];
        kept_by(m, live, x, why, sizeof why);
        int sm = x == fs[i].softmax;
        cv_step(c->r, "fuse", fs[i].softmax->name, "note", "the chain is kept beside the Attention node: %s, so "
                "%s '%s' stays and %s computed twice (the outputs are the same; only the time is lost)", why,
                sm ? "the Softmax" : "the score MatMul", x->name ? x->name : "",
                sm ? "the scores and their softmax are" : "the scores are");
    }
    free(live);
}

oq_status cv_pass_fuse(cv_ctx *c, cv_model *m, oq_err *err)
{
    const oq_gview *v = cv_view(m);
    if (!v) return cv_oom(m, err);
    fusion *fs = calloc(m->nodes.n ? m->nodes.n : 1, sizeof *fs);
    if (!fs) return cv_oom(m, err);
    size_t n = 0, seen = 0;
    for (size_t i = 0; i < m->nodes.n; i++) {
        fusion *fu = &fs[n];
        if (!oq_sdpa_match_softmax(v, cv_sym(m), i, &fu->m)) continue;
        const Onnx__NodeProto *s = m->nodes.v[i];
        seen++;
        if (fu->m.verdict == OQ_SDPA_NOT_ATTENTION) {
            cv_step(c->r, "fuse", s->name, "skipped", "not attention: %s; %s", fu->m.why, fu->m.chain);
        } else if (fu->m.verdict == OQ_SDPA_UNSUPPORTED) {
            c->r->refused++;
            if (fu->m.default_input) /* a weight declared an input: the caller can say so */
                cv_step(c->r, "fuse", s->name, "refused", "%s; if it is a weight, not a value to feed, "
                        "freeze '%s' (or freeze_defaults: every input with a default) makes it a constant; %s",
                        fu->m.why, fu->m.default_input, fu->m.chain);
            else
                cv_step(c->r, "fuse", s->name, "refused", "%s; %s", fu->m.why, fu->m.chain);
        } else {
            fu->softmax = s;
            fu->out_mm = m->nodes.v[fu->m.out_mm];
            fu->score_mm = m->nodes.v[fu->m.score_mm];
            n++;
        }
    }
    for (size_t i = 0; i < n; i++) fuse_one(c, m, &fs[i]);
    kept_notes(c, m, fs, n);
    free(fs);
    if (!seen) cv_step(c->r, "fuse", "", "note", "no decomposed attention chain found");
    return m->oom ? cv_oom(m, err) : OQ_OK;
}
