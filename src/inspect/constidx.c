/* Constant indices folded and held to their data's bounds (constidx-impl.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/constidx-impl.h"
#include "inspect/inputuse-impl.h"
#include "ortqual/tensor.h"

/* The ops folded, at most this many of them on the way, and this many elements: a larger
 * constant is not read (a lean read keeps no bytes of one above 64 KiB anyway). */
static const char *const FOLDED[] = {"Reshape", "Transpose", "Unsqueeze", "Squeeze", "Cast", "Identity", NULL};
#define FOLD_MAX_STEPS 16
#define FOLD_MAX_ELEMS 65536

typedef struct folded {
    char via[160]; /* "the constant 'c' through Transpose, Reshape"; "" for the constant itself */
    int rank;
    int64_t shape[OQ_MAX_DIMS];
    int64_t *v; /* row-major, numel elements */
} folded;

enum { FOLD_NONE, FOLD_DONE, FOLD_CANNOT };

static int is_folded_op(const Onnx__NodeProto *p)
{
    for (const char *const *op = FOLDED; p && *op; op++)
        if (oq_node_is(p, *op)) return 1;
    return 0;
}

static const char *name_of(const Onnx__NodeProto *p)
{
    return p->name ? p->name : "";
}

static int64_t numel(const folded *f)
{
    int64_t n = 1;
    for (int i = 0; i < f->rank; i++) n *= f->shape[i];
    return n;
}

/* An int attribute list or a constant second input (opset 13 on): 1 with the values, 0 when
 * neither is given, -1 when the input is not a constant. */
static int axes_of(const oq_gview *v, const Onnx__NodeProto *p, int64_t *ax, size_t *n)
{
    size_t k;
    const int64_t *a = oq_node_attr_ints(p, "axes", &k);
    if (a && k <= OQ_MAX_DIMS) {
        memcpy(ax, a, k * sizeof *ax);
        *n = k;
        return 1;
    }
    if (p->n_input < 2 || !*p->input[1]) return 0;
    return oq_gview_const_ints(v, p->input[1], ax, OQ_MAX_DIMS, n) ? 1 : -1;
}

static int transpose(const Onnx__NodeProto *p, folded *f, char *why, size_t cap)
{
    size_t k = 0;
    const int64_t *perm = oq_node_attr_ints(p, "perm", &k);
    int64_t pm[OQ_MAX_DIMS], shape[OQ_MAX_DIMS], in_stride[OQ_MAX_DIMS], idx[OQ_MAX_DIMS] = {0};
    int seen = 0;
    for (int i = 0; i < f->rank; i++) {
        pm[i] = perm && (int)k == f->rank ? perm[i] : perm ? -1 : f->rank - 1 - i;
        if (pm[i] < 0 || pm[i] >= f->rank || (seen >> pm[i] & 1)) {
            snprintf(why, cap, "Transpose '%s' has a perm other than one of its %d axes", name_of(p), f->rank);
            return FOLD_CANNOT;
        }
        seen |= 1 << pm[i];
    }
    int64_t s = 1;
    for (int i = f->rank - 1; i >= 0; s *= f->shape[i], i--) in_stride[i] = s;
    int64_t n = numel(f), *out = malloc((size_t)(n ? n : 1) * sizeof *out);
    if (!out) return snprintf(why, cap, "out of memory"), FOLD_CANNOT;
    for (int i = 0; i < f->rank; i++) shape[i] = f->shape[pm[i]];
    for (int64_t e = 0; e < n; e++) { /* idx: output e's position, counted in row-major order */
        int64_t from = 0;
        for (int i = 0; i < f->rank; i++) from += idx[i] * in_stride[pm[i]];
        out[e] = f->v[from];
        for (int i = f->rank - 1; i >= 0 && ++idx[i] == shape[i]; i--) idx[i] = 0;
    }
    free(f->v);
    f->v = out;
    memcpy(f->shape, shape, sizeof shape);
    return FOLD_DONE;
}

/* ONNX's Reshape: 0 copies the input's size (unless allowzero), one -1 takes what is left. */
static int reshape(const oq_gview *v, const Onnx__NodeProto *p, folded *f, char *why, size_t cap)
{
    int64_t t[OQ_MAX_DIMS], known = 1, n = numel(f);
    size_t k;
    int infer = -1, allowzero = (int)oq_node_attr_int(p, "allowzero", 0);
    if (p->n_input < 2 || !oq_gview_const_ints(v, p->input[1], t, OQ_MAX_DIMS, &k)) {
        snprintf(why, cap, "Reshape '%s' takes its shape from a value that is not a constant", name_of(p));
        return FOLD_CANNOT;
    }
    for (size_t i = 0; i < k; i++) {
        if (t[i] == 0 && !allowzero) t[i] = (int)i < f->rank ? f->shape[i] : -2;
        if (t[i] == -1 && infer < 0) infer = (int)i;
        else if (t[i] < 0 || (t[i] && known > INT64_MAX / t[i])) infer = -2;
        else known *= t[i];
        if (infer == -2) break;
    }
    if (infer >= 0 && known > 0 && n % known == 0) t[infer] = n / known;
    else if (infer >= 0) infer = -2; /* a -1 beside a 0 (allowzero) is no size */
    if (infer == -2 || (infer < 0 && known != n)) {
        snprintf(why, cap, "Reshape '%s' has a shape its %lld elements cannot take", name_of(p), (long long)n);
        return FOLD_CANNOT;
    }
    f->rank = (int)k;
    memcpy(f->shape, t, k * sizeof *t);
    return FOLD_DONE;
}

/* Unsqueeze inserts size-1 axes at `axes` of the output; Squeeze drops them (all of them when
 * no axes are given). */
static int squeeze(const oq_gview *v, const Onnx__NodeProto *p, folded *f, int un, char *why, size_t cap)
{
    int64_t ax[OQ_MAX_DIMS], shape[OQ_MAX_DIMS];
    size_t k = 0;
    int got = axes_of(v, p, ax, &k), out_rank = un ? f->rank + (int)k : f->rank;
    unsigned mark = 0;
    for (size_t i = 0; got > 0 && i < k; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + out_rank : ax[i];
        if (a < 0 || a >= (un ? out_rank : f->rank) || (mark >> a & 1) || (!un && f->shape[a] != 1)) got = -2;
        else mark |= 1u << a;
    }
    if (got < 0 || (un && !got) || out_rank > OQ_MAX_DIMS) {
        snprintf(why, cap, "%s '%s' has axes %s", p->op_type, name_of(p),
                 got == -1 ? "from a value that is not a constant" : "this constant does not have");
        return FOLD_CANNOT;
    }
    int r = 0;
    for (int i = 0, from = 0; un && i < out_rank; i++) shape[r++] = mark >> i & 1 ? 1 : f->shape[from++];
    for (int i = 0; !un && i < f->rank; i++)
        if (got ? !(mark >> i & 1) : f->shape[i] != 1) shape[r++] = f->shape[i];
    f->rank = r;
    memcpy(f->shape, shape, (size_t)r * sizeof *shape);
    return FOLD_DONE;
}

static int cast(const Onnx__NodeProto *p, folded *f, char *why, size_t cap)
{
    int64_t to = oq_node_attr_int(p, "to", 0);
    if (to != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 && to != ONNX__TENSOR_PROTO__DATA_TYPE__INT32) {
        snprintf(why, cap, "Cast '%s' makes them other than int32 or int64", name_of(p));
        return FOLD_CANNOT;
    }
    for (int64_t e = 0, n = numel(f); to == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 && e < n; e++)
        f->v[e] = (int32_t)(uint32_t)f->v[e]; /* ONNX's int64 -> int32 keeps the low 32 bits */
    return FOLD_DONE;
}

static int apply(const oq_gview *v, const Onnx__NodeProto *p, folded *f, char *why, size_t cap)
{
    if (oq_node_is(p, "Transpose")) return transpose(p, f, why, cap);
    if (oq_node_is(p, "Reshape")) return reshape(v, p, f, why, cap);
    if (oq_node_is(p, "Unsqueeze") || oq_node_is(p, "Squeeze"))
        return squeeze(v, p, f, oq_node_is(p, "Unsqueeze"), why, cap);
    if (oq_node_is(p, "Cast")) return cast(p, f, why, cap);
    return FOLD_DONE; /* Identity */
}

/* The constant at the root of the chain into `f` (FOLD_DONE), or why it cannot be read. */
static int read_root(const oq_gview *v, const char *root, folded *f, char *why, size_t cap)
{
    const Onnx__TensorProto *t = oq_gview_const_proto(v, root);
    size_t n = 1;
    for (size_t i = 0; i < t->n_dims && n <= FOLD_MAX_ELEMS; i++)
        if (t->dims[i] < 0 || __builtin_mul_overflow(n, (size_t)t->dims[i], &n)) n = SIZE_MAX;
    if (t->n_dims > OQ_MAX_DIMS || n > FOLD_MAX_ELEMS) {
        snprintf(why, cap, "the constant '%s' is larger than %d elements", root, FOLD_MAX_ELEMS);
        return FOLD_CANNOT;
    }
    if (!(f->v = malloc((n ? n : 1) * sizeof *f->v))) return snprintf(why, cap, "out of memory"), FOLD_CANNOT;
    size_t got;
    if (!oq_gview_const_ints(v, root, f->v, n, &got) || got != n) {
        snprintf(why, cap, "the constant '%s' holds no int32 or int64 values read here", root);
        return FOLD_CANNOT;
    }
    f->rank = (int)t->n_dims;
    for (int i = 0; i < f->rank; i++) f->shape[i] = t->dims[i];
    return FOLD_DONE;
}

/* `value` folded into `f`: FOLD_DONE, FOLD_CANNOT with why, or FOLD_NONE where it is no
 * constant through the folded ops (an input's default included: a caller may feed it). */
static int fold(const oq_gview *v, const char *value, folded *f, char *why, size_t cap)
{
    const Onnx__NodeProto *chain[FOLD_MAX_STEPS];
    int n = 0;
    const Onnx__NodeProto *p;
    while (n < FOLD_MAX_STEPS && is_folded_op(p = oq_gview_producer(v, value, NULL)) && p->n_input) {
        chain[n++] = p;
        value = p->input[0];
    }
    const char *root = value; /* past the steps folded: a constant or not, told as such */
    for (int more = 0; more < 4 * FOLD_MAX_STEPS && is_folded_op(p = oq_gview_producer(v, root, NULL)) && p->n_input;
         more++)
        root = p->input[0];
    if (oq_gview_default_input(v, root) || !oq_gview_const_proto(v, root)) return FOLD_NONE;
    if (root != value) {
        snprintf(why, cap, "more than %d steps lead to them", FOLD_MAX_STEPS);
        return FOLD_CANNOT;
    }
    size_t k = n ? (size_t)snprintf(f->via, sizeof f->via, " (the constant '%s' through", value) : 0;
    for (int i = n - 1; i >= 0 && k < sizeof f->via; i--)
        k += (size_t)snprintf(f->via + k, sizeof f->via - k, "%s %s%s", i == n - 1 ? "" : ",", chain[i]->op_type,
                              i ? "" : ")");
    int st = read_root(v, value, f, why, cap);
    while (st == FOLD_DONE && n > 0) st = apply(v, chain[--n], f, why, cap);
    return st;
}

enum { IDX_FINE, IDX_OUTSIDE, IDX_UNCHECKED };

/* Node n's constant indices against its data's bounds: IDX_FINE (in range, or nothing to
 * check), IDX_OUTSIDE or IDX_UNCHECKED with what to say in msg. */
static int node_check(const oq_gview *v, const Onnx__NodeProto *n, char *msg, size_t cap)
{
    oq_index_table tb = {0};
    if (!(oq_node_is(n, "Gather") || oq_node_is(n, "GatherElements") || oq_node_is(n, "GatherND"))) return IDX_FINE;
    oq_gather_bounds(v, n, 1, &tb); /* folded, they are what the node reads: their last axis its tuples' */
    int bounded = tb.all.size != 0;
    for (size_t j = 0; j < OQ_INDEX_TUPLE_MAX; j++) bounded |= tb.tuple[j].size != 0;
    if (!bounded) return IDX_FINE;
    folded f = {0};
    char why[256];
    int st = fold(v, n->input[1], &f, why, sizeof why), r = IDX_FINE;
    oq_tensor *t = NULL;
    const oq_index_bound *b = NULL;
    int64_t e = -1;
    const char *name = name_of(n);
    if (st == FOLD_CANNOT) {
        snprintf(msg, cap, "%s '%s': its indices '%s' are a constant, not checked against its data's sizes: %s",
                 n->op_type, name, n->input[1], why);
        r = IDX_UNCHECKED;
    } else if (st == FOLD_DONE && !oq_tensor_create(&t, OQ_DTYPE_INT64, f.rank, f.shape, n->input[1], NULL)) {
        memcpy(t->data, f.v, (size_t)numel(&f) * sizeof *f.v);
        e = oq_index_outside(&tb, t, &b);
    }
    if (e >= 0) {
        char where[160];
        snprintf(msg, cap, "%s '%s': its constant indices '%s'%s hold %lld at element %s; it indexes axis %lld of "
                 "its data, of size %lld (indices %lld..%lld): ONNX Runtime fails every run", n->op_type, name,
                 n->input[1], f.via, (long long)f.v[e], oq_coord_str(f.shape, f.rank, e, where, sizeof where), (long long)b->axis,
                 (long long)b->size, (long long)-b->size, (long long)b->size - 1);
        r = IDX_OUTSIDE;
    }
    oq_tensor_free(t);
    free(f.v);
    return r;
}

oq_status oq_const_indices_check(const oq_gview *v, const char *label, oq_err *err)
{
    const Onnx__GraphProto *g = oq_gview_graph(v);
    char msg[1024];
    for (size_t i = 0; i < g->n_node; i++)
        if (node_check(v, g->node[i], msg, sizeof msg) == IDX_OUTSIDE)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s", label, msg);
    return OQ_OK;
}

char *oq_const_indices_note(const oq_gview *v, const Onnx__NodeProto *n)
{
    char msg[1024];
    return node_check(v, n, msg, sizeof msg) == IDX_FINE ? NULL : strdup(msg);
}
