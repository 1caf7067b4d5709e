/* Types and shapes for the tensors a model leaves undeclared, one inference for inspect and
 * convert (symdim-impl.h, oq_sym_infer).
 *
 * Not every exporter writes value_info (ortqual's own exports do not; the
 * dynamo exporter does for most tensors). The passes need element types (to
 * cast attention to float16) and symbolic shapes (to prove that a mask's length
 * is K's sequence length, or that a term widens the scores), and ORT's CUDA EP was
 * seen to crash on Attention inputs without shapes. So types are propagated forward
 * through the ops exporters use around attention; a tensor is typed when its element
 * type and rank are known. convert declares them (value_info) before any pass; inspect
 * reads them as declared, so that both judge a chain on the same shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/symdim-impl.h"

#define R OQ_SYM_MAX_RANK

typedef struct tinfo {
    int32_t elem;
    int rank; /* -1: unknown */
    oq_symdim d[R];
} tinfo;

typedef struct inferer {
    const oq_gview *v;
    oq_symctx *sc;
    oq_sym_typed *known; /* grown with OQ_PUSH */
    size_t n;
    size_t *slot; /* per node: 1 + its output's index in known, 0: none */
    int oom;
} inferer;

static oq_symdim unknown(void) { return oq_symdim_const(INT64_MIN); }

static const oq_sym_typed *local(const inferer *f, const char *name)
{
    size_t p;
    if (!oq_gview_producer(f->v, name, &p) || !f->slot[p]) return NULL;
    const oq_sym_typed *k = &f->known[f->slot[p] - 1];
    return strcmp(k->name, name) ? NULL : k; /* (a node's first output only) */
}

/* The type of a value: inferred here, else declared; rank -1 when unknown. */
static tinfo type_of(inferer *f, const char *name)
{
    tinfo t = {0, -1, {{0}}};
    const oq_sym_typed *l = local(f, name);
    if (l) {
        t.elem = l->elem;
        t.rank = l->rank;
        memcpy(t.d, l->d, sizeof t.d);
        return t;
    }
    t.elem = oq_gview_elem_type(f->v, name);
    const Onnx__ValueInfoProto *vi = oq_gview_value_info(f->v, name);
    int declared = vi && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                   vi->type->tensor_type->shape;
    if (declared || oq_gview_initializer(f->v, name) || oq_node_is(oq_gview_producer(f->v, name, NULL), "Constant"))
        t.rank = oq_sym_shape(f->sc, name, t.d, R);
    return t;
}

static int broadcast(const tinfo *a, const tinfo *b, tinfo *out)
{
    if (a->rank < 0 || b->rank < 0) return 0;
    int r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    for (int j = 0; j < r; j++) {
        int ja = j - (r - a->rank), jb = j - (r - b->rank);
        oq_symdim x = ja >= 0 ? a->d[ja] : oq_symdim_const(1), y = jb >= 0 ? b->d[jb] : oq_symdim_const(1);
        out->d[j] = oq_symdim_eq(x, oq_symdim_const(1)) ? y : oq_symdim_eq(y, oq_symdim_const(1)) ? x
                    : oq_symdim_eq(x, y) ? x : unknown();
    }
    return 1;
}

static int is_any(const Onnx__NodeProto *n, const char *const *ops)
{
    for (; *ops; ops++)
        if (oq_node_is(n, *ops)) return 1;
    return 0;
}

static int elementwise(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    static const char *const cmp[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
                                      "Xor", "Not", "IsNaN", "IsInf", NULL};
    tinfo acc = type_of(f, n->input[0]);
    for (size_t i = 1; i < n->n_input; i++) {
        if (!*n->input[i]) continue;
        tinfo x = type_of(f, n->input[i]), b;
        if (!broadcast(&acc, &x, &b)) return 0;
        b.elem = acc.elem;
        acc = b;
    }
    *t = acc;
    if (is_any(n, cmp)) t->elem = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    if (oq_node_is(n, "Where")) t->elem = n->n_input == 3 ? type_of(f, n->input[1]).elem : 0;
    return t->rank >= 0;
}

static int matmul(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo a = type_of(f, n->input[0]), b = type_of(f, n->input[1]);
    if (a.rank < 2 || b.rank < 2) return 0;
    tinfo ab = a, bb = b, out;
    ab.rank = a.rank - 2;
    bb.rank = b.rank - 2;
    if (!broadcast(&ab, &bb, &out)) return 0;
    out.d[out.rank++] = a.d[a.rank - 2];
    out.d[out.rank++] = b.d[b.rank - 1];
    out.elem = a.elem;
    *t = out;
    return 1;
}

static int transpose(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo a = type_of(f, n->input[0]);
    size_t k;
    const int64_t *perm = oq_node_attr_ints(n, "perm", &k);
    if (a.rank < 0 || (perm && (int)k != a.rank)) return 0;
    *t = a;
    for (int j = 0; j < a.rank; j++) {
        int64_t p = perm ? perm[j] : a.rank - 1 - j;
        if (p < 0 || p >= a.rank) return 0;
        t->d[j] = a.d[p];
    }
    return 1;
}

static int reshape(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo a = type_of(f, n->input[0]);
    oq_symdim tgt[R];
    int k = n->n_input == 2 ? oq_sym_vec(f->sc, n->input[1], tgt, R) : -1;
    if (k < 0) return 0;
    t->elem = a.elem;
    t->rank = a.rank >= 0 ? oq_sym_reshape(a.d, a.rank, tgt, k, (int)oq_node_attr_int(n, "allowzero", 0), t->d) : -1;
    if (t->rank < 0) { /* the rank is still known: sizes that are plain numbers stay */
        t->rank = k;
        for (int j = 0; j < k; j++) t->d[j] = tgt[j].n == 0 && tgt[j].coef > 0 ? tgt[j] : unknown();
    }
    return 1;
}

static int unsqueeze(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo a = type_of(f, n->input[0]);
    int64_t ax[R];
    size_t k;
    if (a.rank < 0 || n->n_input != 2 || !oq_gview_const_ints(f->v, n->input[1], ax, R, &k) || a.rank + (int)k > R)
        return 0;
    int r = a.rank + (int)k, unit[R] = {0};
    for (size_t i = 0; i < k; i++) {
        int64_t j = ax[i] < 0 ? ax[i] + r : ax[i];
        if (j < 0 || j >= r || unit[j]) return 0;
        unit[j] = 1;
    }
    *t = a;
    t->rank = r;
    for (int j = 0, s = 0; j < r; j++) t->d[j] = unit[j] ? oq_symdim_const(1) : a.d[s++];
    return 1;
}

static int squeeze(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo a = type_of(f, n->input[0]);
    int64_t ax[R];
    size_t k = 0;
    if (a.rank < 0 || (n->n_input == 2 && !oq_gview_const_ints(f->v, n->input[1], ax, R, &k)) || (n->n_input < 2 && a.rank))
        return 0;
    int drop[R] = {0};
    for (size_t i = 0; i < k; i++) {
        int64_t j = ax[i] < 0 ? ax[i] + a.rank : ax[i];
        if (j < 0 || j >= a.rank) return 0;
        drop[j] = 1;
    }
    *t = a;
    t->rank = 0;
    for (int j = 0; j < a.rank; j++)
        if (!drop[j]) t->d[t->rank++] = a.d[j];
    return 1;
}

/* Constant integers from input i, or (before opset 10's Slice) from attribute `attr`. */
static int ints_of(inferer *f, const Onnx__NodeProto *n, size_t i, const char *attr, int64_t *out, size_t *k)
{
    if (n->n_input > i && *n->input[i]) return oq_gview_const_ints(f->v, n->input[i], out, R, k);
    const int64_t *a = attr && n->n_input == 1 ? oq_node_attr_ints(n, attr, k) : NULL;
    if (!a || *k > R) return 0;
    memcpy(out, a, *k * sizeof *a);
    return 1;
}

/* The size of axis `d` sliced [s, e) by step; unknown unless d is a number or the slice is whole. */
static oq_symdim slice_dim(oq_symdim d, int64_t s, int64_t e, int64_t step)
{
    if (s == 0 && e == INT64_MAX && step == 1) return d;
    if (!oq_symdim_known(d) || d.n || d.coef < 0 || !step) return unknown();
    int64_t n = d.coef, lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
    s = s < 0 ? s + n : s;
    e = e < 0 && e != INT64_MIN ? e + n : e;
    s = s < lo ? lo : s > hi ? hi : s;
    e = e < lo ? lo : e > hi ? hi : e;
    int64_t span = step > 0 ? e - s : s - e, by = step > 0 ? step : -step;
    return oq_symdim_const(span > 0 ? 1 + (span - 1) / by : 0);
}

/* Slice (rotary's halves): the rank stays; a sliced axis keeps a size where its bounds and
 * size are numbers. */
static int slice(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    *t = type_of(f, n->input[0]);
    if (t->rank < 0) return 0;
    int64_t st[R], en[R], ax[R], sp[R];
    size_t k, ke, ka, ks;
    int has_axes = (n->n_input > 3 && *n->input[3]) || (n->n_input == 1 && oq_node_attr(n, "axes"));
    int has_steps = n->n_input > 4 && *n->input[4];
    if (!ints_of(f, n, 1, "starts", st, &k) || !ints_of(f, n, 2, "ends", en, &ke) || ke != k ||
        (has_axes && (!ints_of(f, n, 3, "axes", ax, &ka) || ka != k)) ||
        (has_steps && (!ints_of(f, n, 4, NULL, sp, &ks) || ks != k))) {
        for (int j = 0; j < t->rank; j++) t->d[j] = unknown();
        return 1;
    }
    for (size_t i = 0; i < k; i++) {
        int64_t j = !has_axes ? (int64_t)i : ax[i] < 0 ? ax[i] + t->rank : ax[i];
        if (j < 0 || j >= t->rank) return 0;
        t->d[j] = slice_dim(t->d[j], st[i], en[i], has_steps ? sp[i] : 1);
    }
    return 1;
}

/* Concat: the inputs agree off the axis; the axis adds up where its sizes are numbers. */
static int concat(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    *t = type_of(f, n->input[0]);
    int64_t axis = oq_node_attr_int(n, "axis", 0);
    if (t->rank < 0 || (axis < 0 && (axis += t->rank) < 0) || axis >= t->rank) return 0;
    for (size_t i = 1; i < n->n_input; i++) {
        tinfo x = type_of(f, n->input[i]);
        if (x.rank != t->rank) return 0;
        for (int j = 0; j < t->rank; j++) {
            oq_symdim a = t->d[j], b = x.d[j];
            if (j == axis)
                t->d[j] = oq_symdim_known(a) && oq_symdim_known(b) && !a.n && !b.n && a.coef >= 0 && b.coef >= 0
                              ? oq_symdim_const(a.coef + b.coef) : unknown();
            else if (!oq_symdim_known(a))
                t->d[j] = b;
        }
    }
    return 1;
}

/* Tile (repeat_kv): each axis times its repeat, computed or constant; the rank where not. */
static int tile(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    *t = type_of(f, n->input[0]);
    oq_symdim rep[R];
    if (t->rank < 0 || n->n_input != 2) return 0;
    int k = oq_sym_vec(f->sc, n->input[1], rep, R);
    for (int j = 0; j < t->rank; j++) t->d[j] = k == t->rank ? oq_symdim_mul(t->d[j], rep[j]) : unknown();
    return 1;
}

/* Expand (repeat_kv): the input broadcast with the shape, computed (Shape -> Slice -> Concat) or
 * constant. */
static int expand(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo a = type_of(f, n->input[0]), s = {a.elem, -1, {{0}}};
    if (n->n_input != 2) return 0;
    s.rank = oq_sym_vec(f->sc, n->input[1], s.d, R);
    if (s.rank < 0) { /* sizes unknown: the rank is the longer of the input's and the shape's */
        tinfo len = type_of(f, n->input[1]);
        if (a.rank < 0 || len.rank != 1 || len.d[0].n || len.d[0].coef < 0 || len.d[0].coef > R) return 0;
        s.rank = (int)len.d[0].coef;
        for (int j = 0; j < s.rank; j++) s.d[j] = unknown();
    }
    if (!broadcast(&a, &s, t)) return 0;
    t->elem = a.elem;
    return 1;
}

/* Shape: a vector of the input's rank (or of its start..end). */
static int shape(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo a = type_of(f, n->input[0]);
    if (a.rank < 0) return 0;
    t->elem = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    t->rank = 1;
    t->d[0] = slice_dim(oq_symdim_const(a.rank), oq_node_attr_int(n, "start", 0),
                        oq_node_attr_int(n, "end", INT64_MAX), 1);
    return 1;
}

static int attention(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    tinfo q = type_of(f, n->input[0]), v = type_of(f, n->input[2]);
    if (q.rank != 4 || v.rank != 4) return 0;
    *t = q;
    t->d[3] = v.d[3];
    return 1;
}

/* The output type of node n's first output, 1 when known. */
static int infer_node(inferer *f, const Onnx__NodeProto *n, tinfo *t)
{
    static const char *const same[] = {"Add", "Sub", "Mul", "Div", "Pow", "Where", "And", "Or", "Xor", "Not", "Equal",
                                       "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Min", "Max", "Relu", "Exp",
                                       "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Tanh", "Sigmoid", "Erf", "Elu", "Gelu",
                                       "IsNaN", "IsInf", "Identity", "Softmax", "LogSoftmax", "LayerNormalization",
                                       "Dropout", "Trilu", NULL};
    memset(t, 0, sizeof *t);
    t->rank = -1;
    if (!n->n_input || !*n->input[0]) return 0;
    if (oq_node_is(n, "LayerNormalization") || oq_node_is(n, "Softmax") || oq_node_is(n, "Trilu") ||
        oq_node_is(n, "Dropout")) {
        *t = type_of(f, n->input[0]);
        return t->rank >= 0;
    }
    if (is_any(n, same)) return elementwise(f, n, t);
    if (oq_node_is(n, "Cast")) {
        *t = type_of(f, n->input[0]);
        t->elem = (int32_t)oq_node_attr_int(n, "to", 0);
        return t->rank >= 0;
    }
    if (oq_node_is(n, "MatMul") && n->n_input == 2) return matmul(f, n, t);
    if (oq_node_is(n, "Transpose")) return transpose(f, n, t);
    if (oq_node_is(n, "Reshape")) return reshape(f, n, t);
    if (oq_node_is(n, "Unsqueeze")) return unsqueeze(f, n, t);
    if (oq_node_is(n, "Squeeze")) return squeeze(f, n, t);
    if (oq_node_is(n, "Slice")) return slice(f, n, t);
    if (oq_node_is(n, "Concat")) return concat(f, n, t);
    if (oq_node_is(n, "Tile")) return tile(f, n, t);
    if (oq_node_is(n, "Expand")) return expand(f, n, t);
    if (oq_node_is(n, "Shape")) return shape(f, n, t);
    if (oq_node_is(n, "Attention") && n->n_input >= 3) return attention(f, n, t);
    return 0;
}

static void remember(inferer *f, size_t node, const char *name, const tinfo *t)
{
    oq_sym_typed *k = OQ_PUSH(f->known, f->n);
    if (!k) {
        f->oom = 1;
        return;
    }
    *k = (oq_sym_typed){name, t->elem, t->rank, {{0}}};
    memcpy(k->d, t->d, sizeof k->d);
    f->slot[node] = f->n;
}

/* A dim as a declaration can state it: a size or one named dim; else unknown (a dim of its own
 * when read, as an undeclared dim of a value_info is), so that inspect, which reads the table, and
 * convert, which declares it, see the same shapes. */
static void as_declared(inferer *f, oq_sym_typed *k)
{
    for (int j = 0; j < k->rank; j++)
        if (!oq_symdim_name(f->sc, k->d[j]) && !(k->d[j].n == 0 && k->d[j].coef >= 0)) k->d[j] = unknown();
}

oq_status oq_sym_infer(oq_symctx *sc, oq_err *err)
{
    const oq_gview *v = oq_sym_view(sc);
    const Onnx__GraphProto *g = oq_gview_graph(v);
    inferer f = {v, sc, NULL, 0, calloc(g->n_node ? g->n_node : 1, sizeof *f.slot), 0};
    f.oom = !f.slot;
    for (size_t i = 0; !f.oom && i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        tinfo t;
        if (!n->n_output || !*n->output[0] || oq_gview_value_info(v, n->output[0])) continue;
        if (infer_node(&f, n, &t) && t.elem && t.rank >= 0 && t.rank <= R) remember(&f, i, n->output[0], &t);
    }
    for (size_t i = 0; i < f.n; i++) as_declared(&f, &f.known[i]);
    if (f.oom) {
        free(f.known);
        free(f.slot);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    oq_sym_adopt(sc, f.known, f.n, f.slot);
    return OQ_OK;
}

int64_t oq_sym_computed_last(oq_symctx *sc, const char *value)
{
    const oq_gview *v = oq_sym_view(sc);
    const Onnx__GraphProto *g = oq_gview_graph(v);
    inferer f = {v, sc, NULL, 0, calloc(g->n_node ? g->n_node : 1, sizeof *f.slot), 0};
    f.oom = !f.slot;
    for (size_t i = 0; !f.oom && i < g->n_node; i++) { /* every node: a declared dynamic size is no answer */
        const Onnx__NodeProto *n = g->node[i];
        tinfo t;
        if (n->n_output && *n->output[0] && infer_node(&f, n, &t) && t.rank > 0 && t.rank <= R)
            remember(&f, i, n->output[0], &t);
    }
    tinfo t = f.oom ? (tinfo){0, -1, {{0}}} : type_of(&f, value);
    free(f.known);
    free(f.slot);
    oq_symdim last = t.rank > 0 ? t.d[t.rank - 1] : unknown();
    return last.n == 0 && last.coef > 0 ? last.coef : -1;
}

const char *oq_sym_unknown_from(oq_symctx *sc, const char *value, const Onnx__NodeProto **at)
{
    const oq_gview *v = oq_sym_view(sc);
    *at = NULL;
    if (oq_sym_rank(sc, value) >= 0) return NULL;
    for (int depth = 0; depth < 64; depth++) { /* back through the first input of unknown rank */
        const Onnx__NodeProto *p = oq_gview_producer(v, value, NULL);
        const char *next = NULL;
        for (size_t i = 0; p && !next && i < p->n_input; i++)
            if (*p->input[i] && oq_sym_rank(sc, p->input[i]) < 0) next = p->input[i];
        if (!next) {
            *at = p;
            break;
        }
        value = next;
    }
    return value;
}
