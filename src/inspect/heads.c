/* The query heads of an attention node and their size, read off the graph (heads-impl.h). */
#include <stdint.h>
#include <string.h>

#include "inspect/heads-impl.h"

/* One walk back from a value to where its size is fixed (exporters declare few intermediates).
 * `budget` bounds the steps: a graph that reads one value twice (Add(x, x), again and again)
 * would make the walk exponential. */
typedef struct walk {
    const oq_gview *v;
    oq_symctx *sc;
    int budget;
} walk;

#define HEADS_MAX_DEPTH 32
#define HEADS_MAX_STEPS 256

static int64_t axis_size(walk *w, const char *value, int axis, int depth);

/* A Transpose's input axis that becomes output axis `axis` (no perm: the axes reversed). */
static int64_t through_transpose(walk *w, const Onnx__NodeProto *p, const char *value, int axis, int depth)
{
    size_t n;
    const int64_t *perm = oq_node_attr_ints(p, "perm", &n);
    int rank = perm ? (int)n : oq_sym_rank(w->sc, value);
    if (axis >= rank) return 0;
    int64_t from = perm ? perm[axis] : rank - 1 - axis;
    return from >= 0 && from < rank ? axis_size(w, p->input[0], (int)from, depth + 1) : 0;
}

/* The sizes of `value`'s axes where the graph fixes them, else its symbolic ones; its rank or -1. */
static int sizes_of(walk *w, const char *value, oq_symdim *d, int depth)
{
    int r = oq_sym_shape(w->sc, value, d, OQ_SYM_MAX_RANK);
    for (int i = 0; i < r; i++) {
        int64_t s = d[i].n || d[i].coef <= 0 ? axis_size(w, value, i, depth + 1) : 0;
        if (s > 0) d[i] = oq_symdim_const(s);
    }
    return r;
}

/* A Reshape's target at `axis`: a size, 0 (without allowzero) copying the input's, or the -1
 * that ONNX's Reshape works out from the input's sizes ([0, 0, -1, 8] of [B, L, 32]: 4 heads,
 * an export's split of a [B, L, H*D] projection). */
static int64_t through_reshape(walk *w, const Onnx__NodeProto *p, int axis, int depth)
{
    oq_symdim t[OQ_SYM_MAX_RANK], in[OQ_SYM_MAX_RANK], out[OQ_SYM_MAX_RANK];
    int n = p->n_input == 2 ? oq_sym_vec(w->sc, p->input[1], t, OQ_SYM_MAX_RANK) : -1;
    if (n <= axis || t[axis].n) return 0;
    if (t[axis].coef > 0) return t[axis].coef;
    int allowzero = (int)oq_node_attr_int(p, "allowzero", 0);
    if (t[axis].coef == 0) return allowzero ? 0 : axis_size(w, p->input[0], axis, depth + 1);
    if (t[axis].coef != -1) return 0;
    int r = sizes_of(w, p->input[0], in, depth);
    if (r < 0 || oq_sym_reshape(in, r, t, n, allowzero, out) <= axis || out[axis].n) return 0;
    return out[axis].coef > 0 ? out[axis].coef : 0;
}

/* Elementwise: the largest size among the inputs of the value's rank (a broadcast one has 1). */
static int64_t through_elementwise(walk *w, const Onnx__NodeProto *p, const char *value, int axis, int depth)
{
    int rank = oq_sym_rank(w->sc, value);
    int64_t best = 0;
    for (size_t i = 0; rank > axis && i < p->n_input; i++) {
        if (oq_sym_rank(w->sc, p->input[i]) != rank) continue;
        int64_t s = axis_size(w, p->input[i], axis, depth + 1);
        if (s > best) best = s;
    }
    return best;
}

/* MatMul: its last axis is its second operand's (a projection's width: the weight's). */
static int64_t through_matmul(walk *w, const Onnx__NodeProto *p, const char *value, int axis, int depth)
{
    int rank = oq_sym_rank(w->sc, value), r1 = p->n_input == 2 ? oq_sym_rank(w->sc, p->input[1]) : -1;
    return rank >= 2 && axis == rank - 1 && r1 >= 2 ? axis_size(w, p->input[1], r1 - 1, depth + 1) : 0;
}

/* The size of `value`'s axis `axis` where the graph fixes it, else 0. */
static int64_t axis_size(walk *w, const char *value, int axis, int depth)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    if (depth > HEADS_MAX_DEPTH || --w->budget < 0 || axis < 0 || !value || !*value) return 0;
    if (oq_gview_value_info(w->v, value) || oq_gview_initializer(w->v, value)) {
        int r = oq_sym_shape(w->sc, value, d, OQ_SYM_MAX_RANK);
        if (r > axis && !d[axis].n && d[axis].coef > 0) return d[axis].coef;
    }
    const Onnx__NodeProto *p = oq_gview_producer(w->v, value, NULL);
    if (!p || !p->n_input) return 0; /* a node without inputs (a malformed file) fixes nothing */
    if (oq_node_is(p, "Transpose")) return through_transpose(w, p, value, axis, depth);
    if (oq_node_is(p, "Reshape")) return through_reshape(w, p, axis, depth);
    if (oq_node_is(p, "MatMul")) return through_matmul(w, p, value, axis, depth);
    static const char *const same[] = {"Cast", "Identity", "Mul", "Div", "Add", "Sub", NULL};
    for (const char *const *op = same; *op; op++)
        if (oq_node_is(p, *op)) return through_elementwise(w, p, value, axis, depth);
    return 0;
}

/* The size of `value`'s axis `axis`, a walk of its own. */
static int64_t size_of(const oq_gview *v, oq_symctx *sc, const char *value, int axis)
{
    walk w = {v, sc, HEADS_MAX_STEPS};
    return axis_size(&w, value, axis, 0);
}

/* A com.microsoft node; of op `op` unless NULL. */
static int ms_op(const Onnx__NodeProto *n, const char *op)
{
    return n->domain && !strcmp(n->domain, "com.microsoft") && (!op || (n->op_type && !strcmp(n->op_type, op)));
}

int64_t oq_attention_query_heads(const oq_gview *v, oq_symctx *sc, const Onnx__NodeProto *n)
{
    int ms = ms_op(n, NULL);
    const char *q = n->n_input ? n->input[0] : NULL;
    if (!ms && q && oq_sym_rank(sc, q) == 4) return size_of(v, sc, q, 1);
    int64_t a = oq_node_attr_int(n, ms ? "num_heads" : "q_num_heads", 0);
    return a > 0 ? a : 0;
}

int64_t oq_attention_kv_heads_op(const oq_gview *v, oq_symctx *sc, const Onnx__NodeProto *n)
{
    const char *k = n->n_input > 1 && *n->input[1] ? n->input[1] : NULL;
    if (!ms_op(n, NULL) && k && oq_sym_rank(sc, k) == 4) return size_of(v, sc, k, 1);
    int64_t kv = oq_node_attr_int(n, "kv_num_heads", 0);
    return kv > 0 ? kv : 0;
}

/* A declared (or inferred) size, else 0. */
static int64_t plain_size(oq_symdim d) { return d.n == 0 && d.coef > 0 ? d.coef : 0; }

int64_t oq_input_head_size(oq_symctx *sc, const char *x, int rank, int64_t heads, int *computed)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    if ((rank != 3 && rank != 4) || !x || !*x || oq_sym_shape(sc, x, d, OQ_SYM_MAX_RANK) != rank) return -1;
    int64_t last = plain_size(d[rank - 1]);
    *computed = last <= 0;
    if (last <= 0) last = oq_sym_computed_last(sc, x);
    if (last <= 0) return -1;
    if (rank == 4) return last;
    return heads > 0 && last % heads == 0 ? last / heads : -1;
}

int64_t oq_attention_head_size(oq_symctx *sc, const Onnx__NodeProto *n, int64_t *q_heads, const char **from)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    int mha = ms_op(n, "MultiHeadAttention"), gqa = ms_op(n, "GroupQueryAttention"), computed = 0;
    const char *q = n->n_input > 0 ? n->input[0] : NULL, *k = n->n_input > 1 ? n->input[1] : NULL;
    *q_heads = 0;
    *from = "Q's shape";
    /* com.microsoft's Attention reads the hidden input before its projection, and a packed QKV
     * (no key input) holds more than the query heads: neither is H * D */
    if (ms_op(n, NULL) && (!(mha || gqa) || !k || !*k)) return -1;
    int rank = q && *q ? oq_sym_shape(sc, q, d, OQ_SYM_MAX_RANK) : -1;
    int64_t qh = oq_node_attr_int(n, mha || gqa ? "num_heads" : "q_num_heads", 0);
    int64_t h = oq_input_head_size(sc, q, rank, qh, &computed);
    if (computed) *from = "Q's shape as the graph computes it";
    if (h > 0) {
        *q_heads = rank == 3 ? qh : plain_size(d[1]);
        return h;
    }
    h = oq_input_head_size(sc, k, rank, oq_node_attr_int(n, mha ? "num_heads" : "kv_num_heads", 0), &computed);
    *from = computed ? "K's shape as the graph computes it" : "K's shape";
    return h > 0 ? h : -1;
}

int oq_mha_fold_of(const oq_gview *v, oq_symctx *sc, const char *value, const int64_t perm[3], oq_mha_fold *out)
{
    size_t np;
    const Onnx__NodeProto *t = oq_gview_producer(v, value, NULL);
    const int64_t *p = oq_node_is(t, "Transpose") && t->n_input == 1 ? oq_node_attr_ints(t, "perm", &np) : NULL;
    if (!p || np != 3 || p[0] != perm[0] || p[1] != perm[1] || p[2] != perm[2]) return 0;
    const Onnx__NodeProto *r = oq_gview_producer(v, t->input[0], NULL);
    if (!oq_node_is(r, "Reshape") || r->n_input != 2) return 0;
    walk w = {v, sc, HEADS_MAX_STEPS};
    oq_symdim in[OQ_SYM_MAX_RANK], tg[OQ_SYM_MAX_RANK], o[OQ_SYM_MAX_RANK];
    if (sizes_of(&w, r->input[0], in, 0) != 3 || oq_sym_vec(sc, r->input[1], tg, OQ_SYM_MAX_RANK) != 3 ||
        oq_sym_reshape(in, 3, tg, 3, (int)oq_node_attr_int(r, "allowzero", 0), o) != 3)
        return 0;
    int64_t e = in[2].n ? 0 : in[2].coef, d = o[2].n ? 0 : o[2].coef;
    if (e <= 0 || d <= 0 || e % d || !oq_symdim_known(in[0]) || !oq_symdim_eq(o[0], in[0])) return 0;
    /* the batch axis grows by exactly E / D: the heads, not some other split */
    oq_symdim bh = oq_symdim_mul(in[1], oq_symdim_const(e / d));
    if (!oq_symdim_known(bh) || !oq_symdim_eq(o[1], bh)) return 0;
    *out = (oq_mha_fold){r->input[0], r, e / d, d};
    return 1;
}

/* Heads folded into the batch axis ([B*H, L, D] scores): H is axis 1 of the 4-D value Q was
 * reshaped from ([B, H, L, D], as a Transpose made it), else axis 1 of the 4-D Reshape that
 * unfolds the output product ([B*H, L, D] -> [B, H, L, D]); 0 when neither target fixes it. */
static int64_t folded_heads(const oq_gview *v, oq_symctx *sc, const char *q, const Onnx__NodeProto *out)
{
    const Onnx__NodeProto *p = oq_gview_producer(v, q, NULL);
    int64_t h = 0;
    if (oq_node_is(p, "Reshape") && p->n_input && oq_sym_rank(sc, p->input[0]) == 4) h = size_of(v, sc, p->input[0], 1);
    const char *o = out->n_output ? out->output[0] : NULL;
    for (size_t i = 0; !h && o && i < oq_gview_consumer_count(v, o); i++) {
        const Onnx__NodeProto *r = oq_gview_graph(v)->node[oq_gview_consumer(v, o, i)];
        if (oq_node_is(r, "Reshape") && r->n_output && oq_sym_rank(sc, r->output[0]) == 4)
            h = size_of(v, sc, r->output[0], 1);
    }
    return h;
}

/* The value under constant scalar Mul/Div nodes (the query's scale). */
static const char *unscaled(const oq_gview *v, const char *value)
{
    double c;
    for (int depth = 0; depth < 8; depth++) {
        const Onnx__NodeProto *p = oq_gview_producer(v, value, NULL);
        if ((!oq_node_is(p, "Mul") && !oq_node_is(p, "Div")) || p->n_input != 2) break;
        if (oq_gview_const_scalar(v, p->input[1], &c)) value = p->input[0];
        else if (oq_node_is(p, "Mul") && oq_gview_const_scalar(v, p->input[0], &c)) value = p->input[1];
        else break;
    }
    return value;
}

static oq_heads folded_chain(const oq_gview *v, oq_symctx *sc, const oq_sdpa_match *m, const char *q)
{
    static const int64_t p102[] = {1, 0, 2};
    oq_heads h = {0, 0, 1};
    oq_mha_fold f;
    if (m->fold_heads < 0) return h; /* Q, K and V fold different heads: none is the chain's */
    if (oq_mha_fold_of(v, sc, unscaled(v, q), p102, &f)) return (oq_heads){f.heads, f.head_dim, 1};
    h.heads = folded_heads(v, sc, q, oq_gview_graph(v)->node[m->out_mm]);
    h.head_dim = size_of(v, sc, q, 2);
    return h;
}

oq_heads oq_attention_heads_chain(const oq_gview *v, oq_symctx *sc, const oq_sdpa_match *m)
{
    const Onnx__GraphProto *g = oq_gview_graph(v);
    const Onnx__NodeProto *mm = g->node[m->score_mm];
    const char *q = mm->n_input ? mm->input[0] : NULL;
    int rank = q ? oq_sym_rank(sc, q) : -1;
    if (rank == 3) return folded_chain(v, sc, m, q);
    if (rank == 4) return (oq_heads){size_of(v, sc, q, 1), size_of(v, sc, q, 3), 0};
    if (rank != 5) return (oq_heads){0, 0, 0};
    int64_t kv = size_of(v, sc, q, 1), group = size_of(v, sc, q, 2);
    return (oq_heads){kv > 0 && group > 0 && kv <= INT64_MAX / group ? kv * group : 0, size_of(v, sc, q, 4), 0};
}
