/* Symbolic evaluation of a graph's shape computations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/model-impl.h"
#include "inspect/symdim-impl.h"

struct oq_symctx {
    const oq_gview *v;
    int budget; /* evaluation steps left for one oq_sym_vec: shared subgraphs could be exponential */
    char **names; /* symbol id -> name */
    size_t n;
    oq_sym_typed *typed; /* oq_sym_infer's */
    size_t n_typed;
    size_t *slot; /* per node: 1 + the index of its output in typed, 0: none */
};

oq_status oq_symctx_create(const oq_gview *v, oq_symctx **out, oq_err *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    (*out)->v = v;
    return OQ_OK;
}

void oq_symctx_free(oq_symctx *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) free(c->names[i]);
    free(c->names);
    free(c->typed);
    free(c->slot);
    free(c);
}

const oq_gview *oq_sym_view(const oq_symctx *c)
{
    return c->v;
}

void oq_sym_adopt(oq_symctx *c, oq_sym_typed *typed, size_t n, size_t *slot)
{
    free(c->typed);
    free(c->slot);
    c->typed = typed;
    c->n_typed = n;
    c->slot = slot;
}

const oq_sym_typed *oq_sym_inferred(const oq_symctx *c, size_t *n)
{
    *n = c->n_typed;
    return c->typed;
}

/* What oq_sym_infer typed `value` as, or NULL. */
static const oq_sym_typed *typed_as(const oq_symctx *c, const char *value)
{
    size_t p;
    if (!c->slot || !oq_gview_producer(c->v, value, &p) || !c->slot[p]) return NULL;
    const oq_sym_typed *t = &c->typed[c->slot[p] - 1];
    return strcmp(t->name, value) ? NULL : t;
}

int oq_sym_rank(oq_symctx *c, const char *value)
{
    const oq_sym_typed *t = typed_as(c, value);
    return t ? t->rank : oq_gview_rank(c->v, value);
}

/* The id of symbol `name`, interned; UINT32_MAX when out of memory. */
static uint32_t intern(oq_symctx *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name)) return (uint32_t)i;
    if (oq_strv_push(&c->names, &c->n, name)) return UINT32_MAX;
    return (uint32_t)(c->n - 1);
}

oq_symdim oq_symdim_const(int64_t k)
{
    oq_symdim d = {k, 0, {0}};
    return d;
}

static oq_symdim unknown(void) { return oq_symdim_const(INT64_MIN); }

static oq_symdim symbol(oq_symctx *c, const char *name)
{
    uint32_t id = intern(c, name);
    if (id == UINT32_MAX) return unknown();
    oq_symdim d = {1, 1, {id}};
    return d;
}

int oq_symdim_known(oq_symdim d) { return d.coef != INT64_MIN; }

int oq_symdim_eq(oq_symdim a, oq_symdim b)
{
    if (!oq_symdim_known(a) || !oq_symdim_known(b) || a.coef != b.coef || a.n != b.n) return 0;
    for (int i = 0; i < a.n; i++)
        if (a.sym[i] != b.sym[i]) return 0;
    return 1;
}

oq_symdim oq_symdim_mul(oq_symdim a, oq_symdim b)
{
    if (!oq_symdim_known(a) || !oq_symdim_known(b) || a.n + b.n > OQ_SYM_MAX_FACTORS) return unknown();
    if (a.coef < 0 || b.coef < 0) return unknown(); /* -1 is a marker, not a size */
    oq_symdim r = {0, 0, {0}};
    if (__builtin_mul_overflow(a.coef, b.coef, &r.coef)) return unknown();
    int i = 0, j = 0; /* merge the sorted factor lists */
    while (i < a.n || j < b.n)
        r.sym[r.n++] = (j >= b.n || (i < a.n && a.sym[i] <= b.sym[j])) ? a.sym[i++] : b.sym[j++];
    return r;
}

oq_symdim oq_symdim_div(oq_symdim a, oq_symdim b)
{
    if (!oq_symdim_known(a) || !oq_symdim_known(b) || b.coef <= 0 || a.coef < 0 || a.coef % b.coef)
        return unknown();
    oq_symdim r = {a.coef / b.coef, 0, {0}};
    int j = 0;
    for (int i = 0; i < a.n; i++) {
        if (j < b.n && a.sym[i] == b.sym[j]) j++;
        else r.sym[r.n++] = a.sym[i];
    }
    return j == b.n ? r : unknown();
}

const char *oq_symdim_name(const oq_symctx *c, oq_symdim d)
{
    if (d.coef != 1 || d.n != 1) return NULL;
    const char *s = c->names[d.sym[0]];
    return strchr(s, '#') ? NULL : s;
}

char *oq_symdim_str(const oq_symctx *c, oq_symdim d, char *buf, size_t n)
{
    if (!oq_symdim_known(d)) {
        snprintf(buf, n, "?");
        return buf;
    }
    size_t w = 0;
    if (d.coef != 1 || !d.n) w += (size_t)snprintf(buf, n, "%lld", (long long)d.coef);
    for (int i = 0; i < d.n && w < n; i++) {
        const char *s = c->names[d.sym[i]], *hash = strrchr(s, '#');
        /* an opaque "value#axis" is said as the reader would write it: value.shape[axis] */
        if (hash) w += (size_t)snprintf(buf + w, n - w, "%s%.*s.shape[%s]", w ? "*" : "", (int)(hash - s), s, hash + 1);
        else w += (size_t)snprintf(buf + w, n - w, "%s%s", w ? "*" : "", s);
    }
    return buf;
}

/* ---- tensor shapes --------------------------------------------------------------------- */

int oq_sym_shape(oq_symctx *c, const char *value, oq_symdim *dims, int cap)
{
    const Onnx__ValueInfoProto *vi = oq_gview_value_info(c->v, value);
    const Onnx__TypeProto__Tensor *tt =
        vi && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? vi->type->tensor_type : NULL;
    const Onnx__TensorProto *init = oq_gview_initializer(c->v, value);
    const oq_sym_typed *inf = init || (tt && tt->shape) ? NULL : typed_as(c, value);
    /* an initializer's own dims win over a declaration that may disagree */
    int rank = init ? (int)init->n_dims : tt && tt->shape ? (int)tt->shape->n_dim : oq_sym_rank(c, value);
    if (rank < 0 || rank > cap) return -1;
    for (int i = 0; i < rank; i++) {
        char opaque[512];
        if (init) {
            dims[i] = init->dims[i] >= 0 ? oq_symdim_const(init->dims[i]) : oq_symdim_const(INT64_MIN);
            continue;
        }
        if (inf && oq_symdim_known(inf->d[i])) {
            dims[i] = inf->d[i];
            continue;
        }
        const Onnx__TensorShapeProto__Dimension *d = tt && tt->shape ? tt->shape->dim[i] : NULL;
        int64_t size = oq_dim_size(d);
        const char *param = oq_dim_param(d);
        if (size >= 0)
            dims[i] = oq_symdim_const(size);
        else if (param && *param && !strchr(param, '*'))
            dims[i] = symbol(c, param);
        else {
            /* an expression ("4*batch") or nothing: a dimension of its own */
            snprintf(opaque, sizeof opaque, "%s#%d", value, i);
            dims[i] = symbol(c, opaque);
        }
    }
    return rank;
}

/* ---- shape vectors ----------------------------------------------------------------------- */

static int sym_vec_depth(oq_symctx *c, const char *value, oq_symdim *out, int cap, int depth);

/* Python-style slice bounds clamped to [0, n]. */
static int64_t clamp_index(int64_t i, int64_t n)
{
    if (i < 0) i += n;
    return i < 0 ? 0 : i > n ? n : i;
}

static int shape_op(oq_symctx *c, const Onnx__NodeProto *p, oq_symdim *out, int cap)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    int r = oq_sym_shape(c, p->input[0], d, OQ_SYM_MAX_RANK);
    if (r < 0) return -1;
    int64_t s = clamp_index(oq_node_attr_int(p, "start", 0), r);
    int64_t e = clamp_index(oq_node_attr_int(p, "end", r), r);
    int n = 0;
    for (int64_t i = s; i < e && n < cap; i++) out[n++] = d[i];
    return e - s <= cap ? n : -1;
}

static int slice_op(oq_symctx *c, const Onnx__NodeProto *p, oq_symdim *out, int cap, int depth)
{
    oq_symdim in[OQ_SYM_MAX_RANK * 2];
    int64_t st[1], en[1], ax[1] = {0}, sp[1] = {1};
    size_t k;
    int n = sym_vec_depth(c, p->input[0], in, OQ_SYM_MAX_RANK * 2, depth + 1);
    if (n < 0 || p->n_input < 3 || !oq_gview_const_ints(c->v, p->input[1], st, 1, &k) || k != 1 ||
        !oq_gview_const_ints(c->v, p->input[2], en, 1, &k) || k != 1)
        return -1;
    if (p->n_input > 3 && *p->input[3] && (!oq_gview_const_ints(c->v, p->input[3], ax, 1, &k) || k != 1 || (ax[0] != 0 && ax[0] != -1)))
        return -1;
    if (p->n_input > 4 && *p->input[4] && (!oq_gview_const_ints(c->v, p->input[4], sp, 1, &k) || k != 1 || sp[0] != 1))
        return -1;
    int64_t s = clamp_index(st[0], n), e = clamp_index(en[0], n);
    int m = 0;
    for (int64_t i = s; i < e; i++) {
        if (m == cap) return -1;
        out[m++] = in[i];
    }
    return m;
}

static int concat_op(oq_symctx *c, const Onnx__NodeProto *p, oq_symdim *out, int cap, int depth)
{
    int m = 0;
    for (size_t i = 0; i < p->n_input; i++) {
        int k = sym_vec_depth(c, p->input[i], out + m, cap - m, depth + 1);
        if (k < 0) return -1;
        m += k;
    }
    return m;
}

static int gather_op(oq_symctx *c, const Onnx__NodeProto *p, oq_symdim *out, int cap, int depth)
{
    oq_symdim in[OQ_SYM_MAX_RANK * 2];
    int64_t idx[OQ_SYM_MAX_RANK];
    size_t k;
    int n = sym_vec_depth(c, p->input[0], in, OQ_SYM_MAX_RANK * 2, depth + 1);
    if (n < 0 || oq_node_attr_int(p, "axis", 0) != 0 || p->n_input != 2 ||
        !oq_gview_const_ints(c->v, p->input[1], idx, OQ_SYM_MAX_RANK, &k) || (int)k > cap)
        return -1;
    for (size_t i = 0; i < k; i++) {
        int64_t j = idx[i] < 0 ? idx[i] + n : idx[i];
        if (j < 0 || j >= n) return -1;
        out[i] = in[j];
    }
    return (int)k;
}

/* Elementwise Mul of two vectors (one may have a single element). */
static int mul_op(oq_symctx *c, const Onnx__NodeProto *p, oq_symdim *out, int cap, int depth)
{
    oq_symdim a[OQ_SYM_MAX_RANK], b[OQ_SYM_MAX_RANK];
    int na = sym_vec_depth(c, p->input[0], a, OQ_SYM_MAX_RANK, depth + 1);
    int nb = sym_vec_depth(c, p->input[1], b, OQ_SYM_MAX_RANK, depth + 1);
    if (na < 1 || nb < 1 || (na != nb && na != 1 && nb != 1)) return -1;
    int n = na > nb ? na : nb;
    if (n > cap) return -1;
    for (int i = 0; i < n; i++) {
        out[i] = oq_symdim_mul(a[na == 1 ? 0 : i], b[nb == 1 ? 0 : i]);
        if (!oq_symdim_known(out[i])) return -1;
    }
    return n;
}

static int sym_vec_depth(oq_symctx *c, const char *value, oq_symdim *out, int cap, int depth)
{
    int64_t k[OQ_SYM_MAX_RANK * 2];
    size_t n;
    if (depth > 24 || --c->budget < 0) return -1;
    if (oq_gview_const_ints(c->v, value, k, OQ_SYM_MAX_RANK * 2, &n)) {
        if ((int)n > cap) return -1;
        for (size_t i = 0; i < n; i++) out[i] = oq_symdim_const(k[i]);
        return (int)n;
    }
    const Onnx__NodeProto *p = oq_gview_producer(c->v, value, NULL);
    if (!p || !p->n_input) return -1;
    if (oq_node_is(p, "Shape")) return shape_op(c, p, out, cap);
    if (oq_node_is(p, "Slice")) return slice_op(c, p, out, cap, depth);
    if (oq_node_is(p, "Concat")) return concat_op(c, p, out, cap, depth);
    if (oq_node_is(p, "Gather")) return gather_op(c, p, out, cap, depth);
    if (oq_node_is(p, "Mul") && p->n_input == 2) return mul_op(c, p, out, cap, depth);
    /* element order is kept: only the vector's rank changes (0-D <-> 1-D) */
    if (oq_node_is(p, "Squeeze") || oq_node_is(p, "Unsqueeze") || oq_node_is(p, "Reshape") ||
        oq_node_is(p, "Identity") ||
        (oq_node_is(p, "Cast") && oq_node_attr_int(p, "to", 0) == ONNX__TENSOR_PROTO__DATA_TYPE__INT64))
        return sym_vec_depth(c, p->input[0], out, cap, depth + 1);
    return -1;
}

int oq_sym_vec(oq_symctx *c, const char *value, oq_symdim *out, int cap)
{
    c->budget = 1024;
    return sym_vec_depth(c, value, out, cap, 0);
}

int oq_sym_reshape(const oq_symdim *in, int in_rank, const oq_symdim *target, int n, int allowzero,
                   oq_symdim *out)
{
    oq_symdim total = oq_symdim_const(1), rest = oq_symdim_const(1);
    int infer = -1;
    for (int i = 0; i < in_rank; i++) total = oq_symdim_mul(total, in[i]);
    for (int i = 0; i < n; i++) {
        out[i] = target[i];
        if (!oq_symdim_known(target[i])) return -1;
        if (target[i].n == 0 && target[i].coef == 0 && !allowzero) {
            if (i >= in_rank) return -1;
            out[i] = in[i]; /* 0: copy the input dimension */
        } else if (target[i].n == 0 && target[i].coef == -1) {
            if (infer >= 0) return -1;
            infer = i;
            continue;
        }
        rest = oq_symdim_mul(rest, out[i]);
    }
    if (infer >= 0) {
        out[infer] = oq_symdim_div(total, rest);
        if (!oq_symdim_known(out[infer])) return -1;
    } else if (!oq_symdim_eq(total, rest)) {
        return -1;
    }
    return n;
}
