/* --pad-head-size: Attention nodes whose head size is not a multiple of 8 get Q, K and V
 * zero-padded on the head axis and the output cut back with a Split (every Slice of the last axis
 * crashed ORT 1.29's CUDA EP on the H200).
 *
 * Why: ORT's CUDA EP (onnxruntime/core/providers/cuda/llm/attention.cc, the kernel
 * selection in Attention<T>::ComputeInternal) runs flash attention only when
 * onnxruntime::flash::is_supported() holds, which in
 * contrib_ops/cuda/bert/flash_attention/flash_api.cc is `head_size % 8 == 0 &&
 * head_size <= 256` (and sm80+), with `head_size == v_head_size`; its fallback,
 * memory-efficient attention, needs `(qk_head_size & 7) == 0 && (v_head_size & 7) == 0`
 * (has_memory_efficient_attention, contrib_ops/cuda/bert/cutlass_fmha/
 * memory_efficient_attention.h). Anything else runs the unfused MATH path: a
 * model with 4 heads of 12 never reaches flash.
 *
 * Exact: zero columns add nothing to Q K^T, so the scores are unchanged as long as
 * the scale stays 1/sqrt(original head size) (set explicitly: Attention's default
 * would use the padded size); the zero columns of V give zero output columns, which
 * the Slice drops. Q, K and V are padded to the same size, roundup8(max(qk, v)), since
 * flash also wants the two head sizes equal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"
#include "status/terms-impl.h"

#define PAD_ALIGN 8
#define FLASH_MAX_HEAD 256

static const char *const PASS = "pad-head-size";
enum { MAX_HEAD = 1 << 20 };

/* One Attention node's layout and head sizes, as far as they are known. */
typedef struct heads {
    int rank;           /* 4: [B, H, L, D]; 3: [B, L, H*D] */
    int64_t qh, kvh;    /* head counts (rank 3: the attributes) */
    int64_t qk, v;      /* head sizes; -1 unknown */
    const char *qk_from, *v_from; /* where qk came from (oq_attention_head_size); v_from NULL: V's own shape */
    int unknown;        /* qk unknown: nothing states it */
} heads;

/* A scale is no head size: 1/sqrt(D) is only Attention's default, and T5 scales by 1 for any D. */
static const char HEAD_UNKNOWN[] = "head size unknown: Q's and K's head axis is dynamic and no projection or "
                                   "Reshape of the graph fixes it (the scale is not read as one: it need not be "
                                   "1/sqrt(D)); declare Q's head axis as a fixed size";

/* The rank of `x`: declared, else what the view infers; -1 unknown. */
static int rank_of(cv_model *m, const char *x, cv_dim *d)
{
    int r;
    cv_type_of(m, x, &r, d);
    if (r < 0) {
        r = oq_gview_rank(cv_view(m), x);
        for (int i = 0; i < r && i < OQ_SYM_MAX_RANK; i++) d[i] = (cv_dim){-1, NULL};
    }
    return r;
}

/* The layout and head sizes of node `n`, or the reason it cannot be padded. */
static const char *read_heads(cv_model *m, const Onnx__NodeProto *n, heads *h, char *why, size_t wn)
{
    cv_dim d[OQ_SYM_MAX_RANK];
    memset(h, 0, sizeof *h);
    if (n->n_input < 3 || !*n->input[0] || !*n->input[1] || !*n->input[2]) return "Q, K or V missing";
    if (!n->n_output || !*n->output[0]) return "no output";
    if ((n->n_input > 4 && *n->input[4]) || (n->n_input > 5 && *n->input[5]) ||
        (n->n_output > 1 && *n->output[1]) || (n->n_output > 2 && *n->output[2]))
        return "a KV cache (past_key/value or present outputs would carry the padded head axis)";
    h->rank = rank_of(m, n->input[0], d);
    h->qh = oq_node_attr_int(n, "q_num_heads", 0);
    h->kvh = oq_node_attr_int(n, "kv_num_heads", 0);
    int r;
    if (!cv_type_of(m, n->input[0], &r, d)) {
        snprintf(why, wn, "Q '%s' is of unknown element type", n->input[0]);
        return why;
    }
    if (h->rank != 3 && h->rank != 4) {
        snprintf(why, wn, "Q '%s' is of %s rank (3 or 4 wanted)", n->input[0], h->rank < 0 ? "unknown" : "another");
        return why;
    }
    if (h->rank == 3 && (h->qh <= 0 || h->kvh <= 0)) return "3-D Q/K/V without q_num_heads and kv_num_heads";
    if (h->qh > MAX_HEAD || h->kvh > MAX_HEAD) return "q_num_heads or kv_num_heads over 2^20";
    int64_t q_heads;
    oq_symctx *sc = cv_sym(m); /* NULL: out of memory, noted in m */
    h->qk = sc ? oq_attention_head_size(sc, n, &q_heads, &h->qk_from) : -1;
    if (h->qk < 0) {
        h->unknown = 1;
        return HEAD_UNKNOWN;
    }
    int computed;
    h->v = oq_input_head_size(sc, n->input[2], h->rank, h->kvh, &computed);
    h->v_from = NULL;
    if (h->v < 0) {
        h->v = h->qk;
        h->v_from = "; V's is not declared: taken as Q's";
    }
    /* no kernel takes more than 1024; a larger one is a hostile or broken model (and rounding
     * it up could overflow) */
    if (h->qk > MAX_HEAD || h->v > MAX_HEAD) {
        snprintf(why, wn, "head size %lld is over %d, more than any attention kernel takes",
                 (long long)(h->qk > h->v ? h->qk : h->v), MAX_HEAD);
        return why;
    }
    return NULL;
}

static int64_t round_up(int64_t x)
{
    return (x + PAD_ALIGN - 1) / PAD_ALIGN * PAD_ALIGN;
}

/* x's declared dims as rank `rank` (unknown where not declared), the last grown by
 * `delta`; returns x's element type, or `et` when it is not known. */
static int32_t dims_of(cv_model *m, const char *x, int rank, int64_t delta, int32_t et, cv_dim *d)
{
    int r;
    cv_dim all[OQ_SYM_MAX_RANK]; /* x may be declared with more axes than `rank` (d's size) */
    int32_t t = cv_type_of(m, x, &r, all);
    for (int i = 0; i < rank; i++) d[i] = r == rank ? all[i] : (cv_dim){-1, NULL};
    cv_dim *last = &d[rank - 1];
    if (last->value > 0 && !last->param) last->value += delta;
    else *last = (cv_dim){-1, NULL};
    return t ? t : et;
}

/* One node `op`(in) -> a fresh value (or `out`), declared et with dims d. */
static const char *emit(cv_model *m, const char *op, size_t n_in, const char *const *in, const char *hint,
                        const char *out, int32_t et, int r, const cv_dim *d)
{
    const char *y = out ? out : cv_fresh(m, hint);
    cv_node_add(m, op, hint, n_in, in, 1, &y);
    cv_set_type(m, y, et, r, d);
    return y;
}

/* Zero-pad the last axis of rank-4 `x`, of head size dh, by p (Pad with the pads as an
 * initializer works with dynamic shapes); declared dh + p, as known even where x's is not. */
static const char *pad4(cv_model *m, const char *x, int64_t dh, int64_t p, int32_t et, const char *hint)
{
    const int64_t pads[8] = {0, 0, 0, 0, 0, 0, 0, p};
    const char *in[2] = {x, cv_const_i64(m, "head_pads", 8, pads, 0)};
    cv_dim d[4];
    et = dims_of(m, x, 4, p, et, d);
    d[3] = (cv_dim){dh + p, NULL};
    return emit(m, "Pad", 2, in, hint, NULL, et, 4, d);
}

static const char *reshape(cv_model *m, const char *x, size_t k, const int64_t *shape, const char *hint,
                           const char *out, int32_t et, int r, const cv_dim *d)
{
    const char *in[2] = {x, cv_const_i64(m, "head_shape", k, shape, 0)};
    return emit(m, "Reshape", 2, in, hint, out, et, r, d);
}

/* [B, L, h*D] -> [B, L, h*(D+p)]: each of the h heads padded on its own. */
static const char *pad3(cv_model *m, const char *x, int64_t h, int64_t dh, int64_t p, int32_t et, const char *hint)
{
    static const int64_t merge[3] = {0, 0, -1};
    const int64_t split[4] = {0, 0, h, -1};
    cv_dim d[3];
    et = dims_of(m, x, 3, 0, et, d);
    const char *x4 = reshape(m, x, 4, split, hint, NULL, et, 4, (cv_dim[]){d[0], d[1], {h, NULL}, {dh, NULL}});
    const char *p4 = pad4(m, x4, dh, p, et, hint);
    return reshape(m, p4, 3, merge, hint, NULL, et, 3, (cv_dim[]){d[0], d[1], {h * (dh + p), NULL}});
}

/* Keep the first `keep` columns of the last axis of rank-4 `x` (of `keep + p`), into `out`: a
 * Split into [keep, p] whose second part nothing reads. Not a Slice: ORT 1.29's CUDA EP (npm
 * packaging) killed the process on every Slice of the last axis tried on the H200 (axes or none,
 * negative or positive ends, steps), where Split and Gather ran (docs/convert.md). */
static void slice_into(cv_model *m, const char *x, int64_t keep, int64_t p, const char *out, int32_t et,
                       const cv_dim *d)
{
    const int64_t sizes[2] = {keep, p};
    const char *in[2] = {x, cv_const_i64(m, "head_split", 2, sizes, 0)};
    const char *outs[2] = {out, cv_fresh(m, "attn_out_head_padding")};
    Onnx__NodeProto *n = cv_node_add(m, "Split", "attn_out_head_split", 2, in, 2, outs);
    cv_attr_int(m, n, "axis", 3);
    cv_set_type(m, outs[0], et, 4, d);
    cv_dim dp[4] = {d[0], d[1], d[2], {p, NULL}};
    cv_set_type(m, outs[1], et, 4, dp);
}

/* A padded value for the node's output, sliced back (per head, for rank 3) into `y`,
 * the name its readers use. */
static const char *unpad_output(cv_model *m, const heads *h, int64_t pv, const char *y, int32_t et)
{
    static const int64_t merge[3] = {0, 0, -1};
    cv_dim d[4], dp[4];
    et = dims_of(m, y, h->rank, 0, et, d);
    dims_of(m, y, h->rank, h->rank == 4 ? pv : h->qh * pv, et, dp);
    const char *yp = cv_fresh(m, "attn_out_padded");
    cv_set_type(m, yp, et, h->rank, dp);
    if (h->rank == 4) {
        slice_into(m, yp, h->v, pv, y, et, d);
        return yp;
    }
    const int64_t split[4] = {0, 0, h->qh, -1};
    cv_dim d4[4] = {dp[0], dp[1], {h->qh, NULL}, {h->v + pv, NULL}};
    const char *y4 = reshape(m, yp, 4, split, "attn_out_heads", NULL, et, 4, d4);
    const char *s4 = cv_fresh(m, "attn_out_head_sliced");
    d4[3].value = h->v;
    slice_into(m, y4, h->v, pv, s4, et, d4);
    reshape(m, s4, 3, merge, "attn_out_merge", y, et, 3, d);
    return yp;
}

static const char *pad_input(cv_model *m, const heads *h, const char *x, int64_t heads_n, int64_t dh, int64_t p,
                             int32_t et, const char *hint)
{
    if (!p) return x;
    return h->rank == 4 ? pad4(m, x, dh, p, et, hint) : pad3(m, x, heads_n, dh, p, et, hint);
}

static void pad_one(cv_ctx *c, cv_model *m, size_t i, int asked)
{
    const Onnx__NodeProto *n = m->nodes.v[i];
    char why[256];
    heads h;
    const char *bad = read_heads(m, n, &h, why, sizeof why);
    if (!bad && h.qk % PAD_ALIGN == 0 && h.v == h.qk) return; /* flash's head sizes already */
    if (bad) { /* a head size nothing states is refused on by default too: flash-ready is never a guess */
        int refuse = asked || h.unknown;
        char said[160];
        c->r->refused += refuse ? 1 : 0;
        cv_step(c->r, PASS, n->name, refuse ? "refused" : "skipped", "not padded: %s; ORT's CUDA flash attention "
                "needs a head size that is a multiple of 8%s", bad, h.unknown && !asked ? oq_terms(" (this pass is on "
                "by default with a float16/bfloat16 attention dtype; keep_head_size turns it off)", said, sizeof said)
                : "");
        return;
    }
    int64_t target = round_up(h.qk > h.v ? h.qk : h.v), pq = target - h.qk, pv = target - h.v;
    int had_scale = oq_node_attr(n, "scale") != NULL;
    double scale = had_scale ? oq_node_attr_float(n, "scale", 0) : 1.0 / sqrt((double)h.qk);
    int r;
    cv_dim d[OQ_SYM_MAX_RANK];
    int32_t et = cv_type_of(m, n->input[0], &r, d);
    char *y = strdup(n->output[0]); /* the node's output is renamed below: its readers keep this */
    if (!y) {
        m->oom = 1;
        return;
    }
    const char *q = pad_input(m, &h, n->input[0], h.qh, h.qk, pq, et, "q_head_padded");
    const char *k = pad_input(m, &h, n->input[1], h.kvh, h.qk, pq, et, "k_head_padded");
    const char *v = pad_input(m, &h, n->input[2], h.kvh, h.v, pv, et, "v_head_padded");
    const char *yp = pv ? unpad_output(m, &h, pv, y, et) : NULL;
    Onnx__NodeProto *own = cv_node_own(m, i);
    char *name = yp ? strdup(yp) : NULL;
    free(y);
    if (!own || (yp && !name)) {
        free(name);
        m->oom = 1;
        return;
    }
    cv_node_set_input(m, own, 0, q);
    cv_node_set_input(m, own, 1, k);
    cv_node_set_input(m, own, 2, v);
    if (name) {
        free(own->output[0]);
        own->output[0] = name;
    }
    if (!had_scale) cv_attr_float(m, own, "scale", (float)scale);
    cv_touch(m);
    char vs[96] = "";
    if (h.v_from) snprintf(vs, sizeof vs, "%s", h.v_from);
    else if (h.v != h.qk) snprintf(vs, sizeof vs, ", V's %lld -> %lld", (long long)h.v, (long long)target);
    char said[160]; /* our words, passed as a value: in the caller's words here (oq_set_terms) */
    const char *off = asked ? "" : oq_terms(" (on by default with a float16/bfloat16 attention dtype; "
                                            "keep_head_size turns it off)", said, sizeof said);
    cv_step(c->r, PASS, own->name, "rewritten", "head size %lld -> %lld (from %s%s): Q, K%s zero-padded on "
            "the head axis, the output cut back (Split), scale %.6g %s. ORT's CUDA flash and memory-efficient attention "
            "need a multiple of 8%s%s", (long long)h.qk, (long long)target, h.qk_from, vs,
            pv ? ", V" : "", scale, had_scale ? "kept" : "set (the default would use the padded size)",
            target > FLASH_MAX_HEAD ? "; flash also needs at most 256: memory-efficient attention at best" : "",
            off);
}

oq_status cv_pass_pad_head(cv_ctx *c, cv_model *m, int asked, oq_err *err)
{
    size_t count = m->nodes.n, seen = 0;
    for (size_t i = 0; i < count; i++)
        if (oq_node_is(m->nodes.v[i], "Attention")) {
            seen++;
            pad_one(c, m, i, asked);
        }
    if (!seen && asked) cv_step(c->r, PASS, "", "note", "no Attention node");
    return m->oom ? cv_oom(m, err) : OQ_OK;
}
