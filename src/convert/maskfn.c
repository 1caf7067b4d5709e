/* What an attention mask computes, found by abstract interpretation.
 *
 * Each tensor of the mask's computation is described by
 *   - a truth table: its value for each combination of two atoms, P ("key k is
 *     a valid position of the [B, L] mask input") and C ("k <= q", from Trilu or
 *     a constant [L, L] lower triangle, sliced from position 0 or not);
 *     the input itself is 1 where P holds and 0 elsewhere (read with 1 = padding,
 *     PyTorch's key_padding_mask: 0 where P holds and 1 elsewhere), which is
 *     exactly what the valid-prefix contract lets it hold;
 *   - its layout: per axis, the factors that index it, with symbolic sizes and
 *     their roles: the batch of P, the key of P, the query and the key of C, or
 *     none (copies of one value). Reshape regroups the factors (so [B,H,1,L] ->
 *     [H*B,1,L] -> [B,H,1,L] keeps track), Expand adds copies, Unsqueeze/Squeeze
 *     add or drop unit axes.
 * Elementwise ops combine truth tables. That is sound only while each atom is
 * tied to one axis: combining operands whose P (or C) lies on different axes
 * (a query mask with a key mask) ends the analysis, and a role whose atom the
 * table no longer depends on is dropped. Anything outside the handful of ops
 * exporters use for masks ends the analysis with the op named.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "convert/convert-impl.h"
#include "status/terms-impl.h"

/* Roles of a factor, as bits; 0 is a copy. */
enum { F_B = 1, F_K = 2, F_Q = 4, F_CK = 8 };
#define MAX_F 4

typedef struct factor {
    int kind;
    oq_symdim size;
} factor;

typedef struct axis {
    int n; /* 0: a unit axis */
    factor f[MAX_F];
} axis;

typedef struct mval {
    int rank;
    axis ax[OQ_SYM_MAX_RANK];
    double t[4]; /* value at (P, C): index = P | C << 1 */
    int32_t elem;
    const char *input;
} mval;

typedef struct ev {
    cv_model *m;
    const oq_gview *v;
    oq_symctx *sc;
    const char *restrict_input;
    int pad; /* the input reads 1 = padding (OQ_MASK_POLARITY_PAD) */
    char *why;
    size_t why_n;
    int budget; /* nodes left to evaluate: a graph that shares values could make it exponential */
    cv_maskfn *fn;
} ev;

static int fail(ev *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ev *e, const char *fmt, ...)
{
    if (*e->why) return 1; /* the innermost reason is the useful one */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, e->why_n, fmt, ap);
    va_end(ap);
    return 1;
}

static void const_val(mval *x, double c, int32_t elem)
{
    memset(x, 0, sizeof *x);
    for (int i = 0; i < 4; i++) x->t[i] = c;
    x->elem = elem;
}

static int sizes_eq(const axis *a, const axis *b)
{
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (!oq_symdim_eq(a->f[i].size, b->f[i].size)) return 0;
    return 1;
}

static int roles(const axis *a)
{
    int r = 0;
    for (int i = 0; i < a->n; i++) r |= a->f[i].kind;
    return r;
}

static oq_symdim axis_size(const axis *a)
{
    oq_symdim s = oq_symdim_const(1);
    for (int i = 0; i < a->n; i++) s = oq_symdim_mul(s, a->f[i].size);
    return s;
}

static int is_copy(const axis *a)
{
    return a->n > 0 && !roles(a);
}

/* A role must sit on the same axes in both operands (or in one only). */
static int roles_agree(const mval *a, const mval *b, int r)
{
    for (int bit = 1; bit <= F_CK; bit <<= 1) {
        int in_a = 0, in_b = 0, differ = 0;
        for (int j = 0; j < r; j++) {
            int ja = j - (r - a->rank), jb = j - (r - b->rank);
            int x = ja >= 0 && (roles(&a->ax[ja]) & bit), y = jb >= 0 && (roles(&b->ax[jb]) & bit);
            in_a |= x, in_b |= y, differ |= x != y;
        }
        if (in_a && in_b && differ) return 0;
    }
    return 1;
}

/* Operands of node p whose axis j differ in size (a constant causal triangle of one length
 * against a key padding of another): named with both sizes. */
static int misaligned(ev *e, const Onnx__NodeProto *p, const axis *a, const axis *b, int j)
{
    char x[64], y[64];
    return fail(e, "%s '%s' combines mask operands whose axes do not line up: axis %d is %s in one and %s in the "
                "other", p->op_type, p->name, j, oq_symdim_str(e->sc, axis_size(a), x, sizeof x),
                oq_symdim_str(e->sc, axis_size(b), y, sizeof y));
}

/* Broadcast the layouts of a and b, operands of node p, into out (truth table untouched). */
static int broadcast(ev *e, const Onnx__NodeProto *p, const mval *a, const mval *b, mval *out)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    if (!roles_agree(a, b, r)) return fail(e, "the mask combines a padding or causal pattern along two different axes");
    for (int j = 0; j < r; j++) {
        int ja = j - (r - a->rank), jb = j - (r - b->rank);
        const axis *xa = ja >= 0 ? &a->ax[ja] : NULL, *xb = jb >= 0 ? &b->ax[jb] : NULL;
        if (xa && xa->n && xb && xb->n) {
            if (sizes_eq(xa, xb)) { /* the same factors: their roles combine */
                axis both = *xa;
                for (int i = 0; i < both.n; i++) both.f[i].kind |= xb->f[i].kind;
                out->ax[j] = both;
                continue;
            }
            /* copies of one value line up with any axis of the same size */
            if (is_copy(xa) && oq_symdim_eq(axis_size(xa), axis_size(xb))) xa = NULL;
            else if (is_copy(xb) && oq_symdim_eq(axis_size(xa), axis_size(xb))) xb = NULL;
            else return misaligned(e, p, xa, xb, j);
        }
        out->ax[j] = xa && xa->n ? *xa : xb ? *xb : (axis){0};
    }
    if (a->input && b->input && strcmp(a->input, b->input))
        return fail(e, "the mask combines two inputs, '%s' and '%s'", a->input, b->input);
    out->input = a->input ? a->input : b->input;
    return 0;
}

static int eval(ev *e, const char *name, mval *x, int depth);

/* The graph input called `name` (its own, stable copy of the name), or NULL. */
static const char *graph_input(ev *e, const char *name)
{
    const Onnx__GraphProto *g = oq_gview_graph(e->v);
    if (oq_gview_initializer(e->v, name)) return NULL;
    for (size_t i = 0; i < g->n_input; i++)
        if (!strcmp(g->input[i]->name, name)) return g->input[i]->name;
    return NULL;
}

static int eval_input(ev *e, const char *name, mval *x)
{
    oq_symdim d[OQ_SYM_MAX_RANK];
    if (e->restrict_input && strcmp(e->restrict_input, name))
        return fail(e, "the mask depends on input '%s', not on the mask input '%s'", name, e->restrict_input);
    if (oq_sym_shape(e->sc, name, d, OQ_SYM_MAX_RANK) != 2)
        return fail(e, "the mask comes from input '%s', which is not [B, L]", name);
    memset(x, 0, sizeof *x);
    if (e->pad) x->t[0] = x->t[2] = 1; /* set where the key is padding */
    else x->t[1] = x->t[3] = 1;        /* set where the key is valid */
    x->rank = 2;
    x->ax[0] = (axis){1, {{F_B, d[0]}}};
    x->ax[1] = (axis){1, {{F_K, d[1]}}};
    x->elem = oq_gview_elem_type(e->v, name);
    x->input = name;
    return 0;
}

/* Axes of a constant or an Expand target: unit where the size is 1, copies elsewhere. */
static int copies(ev *e, const oq_symdim *d, int n, mval *x)
{
    if (n < 0 || n > OQ_SYM_MAX_RANK) return fail(e, "a mask constant of unknown shape");
    x->rank = n;
    for (int i = 0; i < n; i++) {
        if (oq_symdim_eq(d[i], oq_symdim_const(1))) x->ax[i] = (axis){0};
        else x->ax[i] = (axis){1, {{0, d[i]}}};
    }
    return 0;
}

static double cast_to(double v, int64_t to)
{
    if (to == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) return v != 0;
    if (to == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || to == ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
        return isfinite(v) ? trunc(v) : v;
    if (to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 && fabs(v) > 65504) return v > 0 ? INFINITY : -INFINITY;
    return v;
}

static double arith(const char *op, double a, double b)
{
    switch (op[0]) {
    case 'A': return op[1] == 'd' ? a + b : (a != 0 && b != 0); /* Add, And */
    case 'S': return a - b;
    case 'M': return a * b;
    case 'D': return a / b;
    case 'O': return a != 0 || b != 0;
    default: return NAN;
    }
}

static int binary(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    mval a, b;
    if (eval(e, p->input[0], &a, depth + 1) || eval(e, p->input[1], &b, depth + 1) || broadcast(e, p, &a, &b, x))
        return 1;
    for (int i = 0; i < 4; i++) x->t[i] = arith(p->op_type, a.t[i], b.t[i]);
    x->elem = oq_node_is(p, "And") || oq_node_is(p, "Or") ? ONNX__TENSOR_PROTO__DATA_TYPE__BOOL : a.elem;
    return 0;
}

static int where(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    mval c, a, b, ab;
    if (eval(e, p->input[0], &c, depth + 1) || eval(e, p->input[1], &a, depth + 1) ||
        eval(e, p->input[2], &b, depth + 1) || broadcast(e, p, &a, &b, &ab) || broadcast(e, p, &c, &ab, x))
        return 1;
    for (int i = 0; i < 4; i++) x->t[i] = c.t[i] != 0 ? a.t[i] : b.t[i];
    x->elem = a.elem ? a.elem : b.elem;
    return 0;
}

static int unsqueeze(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    int64_t ax[OQ_SYM_MAX_RANK];
    size_t k;
    mval a;
    if (eval(e, p->input[0], &a, depth + 1)) return 1;
    if (p->n_input != 2 || !oq_gview_const_ints(e->v, p->input[1], ax, OQ_SYM_MAX_RANK, &k))
        return fail(e, "Unsqueeze '%s' with axes that are not constant", p->name);
    int r = a.rank + (int)k;
    if (r > OQ_SYM_MAX_RANK) return fail(e, "a mask of rank above %d", OQ_SYM_MAX_RANK);
    int unit[OQ_SYM_MAX_RANK] = {0};
    for (size_t i = 0; i < k; i++) {
        int64_t j = ax[i] < 0 ? ax[i] + r : ax[i];
        if (j < 0 || j >= r || unit[j])
            return fail(e, "Unsqueeze '%s': axis %lld out of range or repeated", p->name, (long long)ax[i]);
        unit[j] = 1;
    }
    *x = a;
    for (int j = 0, s = 0; j < r; j++) x->ax[j] = unit[j] ? (axis){0} : a.ax[s++];
    x->rank = r;
    return 0;
}

static int squeeze(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    int64_t ax[OQ_SYM_MAX_RANK];
    size_t k = 0;
    mval a;
    if (eval(e, p->input[0], &a, depth + 1)) return 1;
    if (p->n_input == 2 && *p->input[1] && !oq_gview_const_ints(e->v, p->input[1], ax, OQ_SYM_MAX_RANK, &k))
        return fail(e, "Squeeze '%s' with axes that are not constant", p->name);
    int drop[OQ_SYM_MAX_RANK] = {0};
    for (size_t i = 0; i < k; i++) {
        int64_t j = ax[i] < 0 ? ax[i] + a.rank : ax[i];
        if (j < 0 || j >= a.rank || a.ax[j].n) return fail(e, "Squeeze '%s' of an axis that is not 1", p->name);
        drop[j] = 1;
    }
    *x = a;
    x->rank = 0;
    for (int j = 0; j < a.rank; j++)
        if (!(k ? drop[j] : !a.ax[j].n)) x->ax[x->rank++] = a.ax[j];
    return 0;
}

/* Regroup the factors of `a` into the target dims, outermost first. */
static int reshape(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    mval a;
    oq_symdim in[OQ_SYM_MAX_RANK], tgt[OQ_SYM_MAX_RANK], out[OQ_SYM_MAX_RANK];
    if (eval(e, p->input[0], &a, depth + 1)) return 1;
    int n = p->n_input == 2 ? oq_sym_vec(e->sc, p->input[1], tgt, OQ_SYM_MAX_RANK) : -1;
    for (int j = 0; j < a.rank; j++) in[j] = axis_size(&a.ax[j]);
    if (n < 0 || oq_sym_reshape(in, a.rank, tgt, n, (int)oq_node_attr_int(p, "allowzero", 0), out) != n)
        return fail(e, "Reshape '%s' to a shape that cannot be worked out", p->name);
    factor fl[OQ_SYM_MAX_RANK * MAX_F];
    int nf = 0, used = 0;
    for (int j = 0; j < a.rank; j++)
        for (int i = 0; i < a.ax[j].n; i++) fl[nf++] = a.ax[j].f[i];
    *x = a;
    x->rank = n;
    for (int j = 0; j < n; j++) {
        axis ax = {0};
        oq_symdim prod = oq_symdim_const(1);
        while (!oq_symdim_eq(prod, out[j])) {
            if (used == nf || ax.n == MAX_F || !oq_symdim_known(oq_symdim_div(out[j], prod)))
                return fail(e, "Reshape '%s' splits a mask axis", p->name);
            ax.f[ax.n++] = fl[used];
            prod = oq_symdim_mul(prod, fl[used++].size);
        }
        x->ax[j] = ax;
    }
    return used == nf ? 0 : fail(e, "Reshape '%s' drops a mask axis", p->name);
}

static int expand(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    oq_symdim tgt[OQ_SYM_MAX_RANK];
    mval a, b;
    int n = p->n_input == 2 ? oq_sym_vec(e->sc, p->input[1], tgt, OQ_SYM_MAX_RANK) : -1;
    if (eval(e, p->input[0], &a, depth + 1)) return 1;
    if (n < 0) return fail(e, "Expand '%s' to a shape that cannot be worked out", p->name);
    memset(&b, 0, sizeof b);
    if (copies(e, tgt, n, &b)) return 1;
    /* Expand's target may repeat an axis a already has: keep a's factors there */
    for (int j = 0; j < n; j++) {
        int ja = j - (n - a.rank);
        if (ja >= 0 && a.ax[ja].n && b.ax[j].n) {
            if (!oq_symdim_eq(axis_size(&a.ax[ja]), b.ax[j].f[0].size))
                return fail(e, "Expand '%s' to a size the mask does not have", p->name);
            b.ax[j] = a.ax[ja];
        }
    }
    if (broadcast(e, p, &a, &b, x)) return 1;
    memcpy(x->t, a.t, sizeof x->t);
    x->elem = a.elem;
    return 0;
}

static int trilu(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    mval a;
    double k = 0;
    if (eval(e, p->input[0], &a, depth + 1)) return 1;
    if (p->n_input > 1 && *p->input[1] && !oq_gview_const_scalar(e->v, p->input[1], &k))
        return fail(e, "Trilu '%s' with a diagonal offset that is not constant", p->name);
    int square = a.rank >= 2 && a.ax[a.rank - 1].n == 1 && a.ax[a.rank - 2].n == 1 &&
                 oq_symdim_eq(a.ax[a.rank - 1].f[0].size, a.ax[a.rank - 2].f[0].size);
    if (oq_node_attr_int(p, "upper", 1) != 0 || k != 0 || a.input || a.t[0] != a.t[3] || !square)
        return fail(e, "Trilu '%s' is not the lower triangle of a constant square", p->name);
    *x = a;
    x->ax[a.rank - 2].f[0].kind = F_Q;
    x->ax[a.rank - 1].f[0].kind = F_CK;
    x->t[0] = x->t[1] = 0; /* above the diagonal (C false): zero */
    return 0;
}

/* The value most elements of one side of the diagonal hold (the lower side, k <= q, or the upper):
 * the majority by Boyer-Moore's vote, which a triangle one element off still has. */
static int side_value(const Onnx__TensorProto *t, int64_t l, int lower, double *out)
{
    int64_t votes = 0;
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = lower ? 0 : i + 1; j < (lower ? i + 1 : l); j++) {
            double x;
            if (!oq_gview_proto_elem(t, (size_t)(i * l + j), &x)) return 0;
            if (!votes) *out = x;
            votes += x == *out ? 1 : -1;
        }
    return 1;
}

/* The first element of the [.., l, l] constant t off its triangle (not `lo` on and below the
 * diagonal, or not `up` above it): 1 with its row, column and value, else 0. */
static int off_triangle(const Onnx__TensorProto *t, int64_t l, double lo, double up, int64_t *row, int64_t *col,
                        double *x)
{
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < l; j++) {
            *x = NAN;
            oq_gview_proto_elem(t, (size_t)(i * l + j), x); /* side_value has read every one */
            if (*x != (j <= i ? lo : up)) {
                *row = i, *col = j;
                return 1;
            }
        }
    return 0;
}

/* A constant [.., L, L] (leading axes 1) of one value on and below the diagonal (k <= q) and another
 * above it: the causal pattern over C, as Trilu's lower triangle (a bool keep-mask, a 0/-inf
 * additive one, or masked_fill's condition, its negation). An element off the triangle is named. */
static int triangle(ev *e, const char *name, mval *x)
{
    const Onnx__TensorProto *t = oq_gview_const_proto(e->v, name);
    int r = t ? (int)t->n_dims : 0, lead = 1;
    int64_t l = r >= 2 ? t->dims[r - 1] : 0, row, col;
    for (int i = 0; i + 2 < r; i++) lead &= t->dims[i] == 1;
    if (r < 2 || r > OQ_SYM_MAX_RANK || !lead || l < 2 || t->dims[r - 2] != l || l > 8192 ||
        oq_gview_proto_numel(t) != (size_t)(l * l))
        return fail(e, "'%s' is a constant with different values", name);
    if ((e->fn->default_input = oq_gview_default_input(e->v, name))) /* keep_initializers_as_inputs */
        return fail(e, "'%s' is a graph input with a default (the initializer of its name): is_causal would fix that "
                    "value and ignore a mask fed for it", name);
    double lo = 0, up = 0, off = 0; /* set by side_value (-O3 cannot tell) */
    if (!side_value(t, l, 1, &lo) || !side_value(t, l, 0, &up))
        return fail(e, "'%s' is a constant whose values are not read here (its element type or external data)", name);
    if (off_triangle(t, l, lo, up, &row, &col, &off)) {
        char ones[32] = "", zeros[32] = ""; /* the leading axes of shape and position */
        for (int i = 0; i + 2 < r; i++) strcat(ones, "1, "), strcat(zeros, "0, ");
        return fail(e, "'%s' is a constant [%s%lld, %lld] that is not a causal triangle (one value on and below the "
                    "diagonal, another above): element [%s%lld, %lld] is %g where the others %s the diagonal are %g",
                    name, ones, (long long)l, (long long)l, zeros, (long long)row, (long long)col, off,
                    col <= row ? "on and below" : "above", col <= row ? lo : up);
    }
    const_val(x, up, oq_gview_elem_type(e->v, name));
    x->t[2] = x->t[3] = lo;
    x->rank = r;
    x->ax[r - 2] = (axis){1, {{lo != up ? F_Q : 0, oq_symdim_const(l)}}};
    x->ax[r - 1] = (axis){1, {{lo != up ? F_CK : 0, oq_symdim_const(l)}}};
    return 0;
}

/* The upper-left block of a causal pattern, cut by Slice from position 0 along its query or key
 * axis (PyTorch's bias[:, :, :L, :L] of a triangle made for a longer maximum), is one too. An
 * end beyond the constant's size is the original model's own failure (its mask would not
 * broadcast to the scores), so a symbolic end is taken as the size. Anything else is refused. */
static int slice(ev *e, const Onnx__NodeProto *p, mval *x, int depth)
{
    oq_symdim st[OQ_SYM_MAX_RANK], en[OQ_SYM_MAX_RANK];
    int64_t axes[OQ_SYM_MAX_RANK], steps[OQ_SYM_MAX_RANK];
    size_t na = 0, ns = 0;
    if (eval(e, p->input[0], x, depth + 1)) return 1;
    int n = p->n_input >= 3 ? oq_sym_vec(e->sc, p->input[1], st, OQ_SYM_MAX_RANK) : -1;
    if (n < 0 || oq_sym_vec(e->sc, p->input[2], en, OQ_SYM_MAX_RANK) != n ||
        (p->n_input > 3 && *p->input[3] && (!oq_gview_const_ints(e->v, p->input[3], axes, OQ_SYM_MAX_RANK, &na) ||
                                            na != (size_t)n)) ||
        (p->n_input > 4 && *p->input[4] && (!oq_gview_const_ints(e->v, p->input[4], steps, OQ_SYM_MAX_RANK, &ns) ||
                                            ns != (size_t)n)))
        return fail(e, "Slice '%s' with starts, ends, axes or steps that cannot be worked out", p->name);
    for (int i = 0; i < n; i++) {
        int64_t given = na ? axes[i] : i, a = given < 0 ? given + x->rank : given;
        if (a < 0 || a >= x->rank) return fail(e, "Slice '%s': axis %lld out of range", p->name, (long long)given);
        axis *ax = &x->ax[a];
        if ((ns && steps[i] != 1) || !oq_symdim_eq(st[i], oq_symdim_const(0)))
            return fail(e, "Slice '%s' cuts mask axis %lld at an offset or a step (only a block from position 0, "
                        "the upper-left one of a causal triangle, is read)", p->name, (long long)a);
        if (!ax->n) continue; /* a unit axis from 0 keeps its element */
        if (ax->n != 1 || !(ax->f[0].kind & (F_Q | F_CK)) || (ax->f[0].kind & (F_B | F_K)))
            return fail(e, "Slice '%s' cuts mask axis %lld, which is not the causal triangle's query or key axis",
                        p->name, (long long)a);
        if (en[i].n) { /* a symbolic end: the sequence length */
            ax->f[0].size = en[i];
            continue;
        }
        int64_t s = ax->f[0].size.n == 0 ? ax->f[0].size.coef : -1;
        int64_t c = en[i].coef < 0 && s > 0 ? en[i].coef + s : en[i].coef; /* counted from the back */
        if (!oq_symdim_known(en[i]) || s < 0 || c <= 0)
            return fail(e, "Slice '%s' cuts mask axis %lld to an end that cannot be worked out", p->name, (long long)a);
        if (c < s) ax->f[0].size = oq_symdim_const(c);
    }
    return 0;
}

/* A role whose atom the table does not depend on is a copy: forget it. */
static void normalize(mval *x)
{
    int p = x->t[0] != x->t[1] || x->t[2] != x->t[3], c = x->t[0] != x->t[2] || x->t[1] != x->t[3];
    int drop = (p ? 0 : F_B | F_K) | (c ? 0 : F_Q | F_CK);
    for (int j = 0; j < x->rank; j++)
        for (int i = 0; i < x->ax[j].n; i++) x->ax[j].f[i].kind &= ~drop;
    if (!p) x->input = NULL;
}

static int eval_op(ev *e, const char *name, mval *x, int depth);

static int eval(ev *e, const char *name, mval *x, int depth)
{
    if (eval_op(e, name, x, depth)) return 1;
    normalize(x);
    return 0;
}

static int eval_op(ev *e, const char *name, mval *x, int depth)
{
    double c;
    oq_symdim d[OQ_SYM_MAX_RANK];
    if (depth > 32 || --e->budget < 0) return fail(e, "the mask computation is too deep");
    const char *in = graph_input(e, name);
    if (in) return eval_input(e, in, x);
    const Onnx__NodeProto *p = oq_gview_producer(e->v, name, NULL);
    int32_t elem = oq_gview_elem_type(e->v, name);
    if (!p || oq_node_is(p, "Constant")) {
        if (!oq_gview_const_scalar(e->v, name, &c)) return triangle(e, name, x);
        const_val(x, c, elem);
        return copies(e, d, oq_sym_shape(e->sc, name, d, OQ_SYM_MAX_RANK), x);
    }
    if (!p->n_input) return fail(e, "%s '%s' in the mask computation", p->op_type, p->name);
    if (oq_node_is(p, "Identity")) return eval(e, p->input[0], x, depth + 1);
    if (oq_node_is(p, "Cast")) {
        if (eval(e, p->input[0], x, depth + 1)) return 1;
        x->elem = (int32_t)oq_node_attr_int(p, "to", 0);
        for (int i = 0; i < 4; i++) x->t[i] = cast_to(x->t[i], x->elem);
        return 0;
    }
    if (oq_node_is(p, "Not")) {
        if (eval(e, p->input[0], x, depth + 1)) return 1;
        for (int i = 0; i < 4; i++) x->t[i] = x->t[i] == 0;
        return 0;
    }
    if (p->n_input == 2 && (oq_node_is(p, "Add") || oq_node_is(p, "Sub") || oq_node_is(p, "Mul") ||
                            oq_node_is(p, "Div") || oq_node_is(p, "And") || oq_node_is(p, "Or")))
        return binary(e, p, x, depth);
    if (oq_node_is(p, "Where") && p->n_input == 3) return where(e, p, x, depth);
    if (oq_node_is(p, "Unsqueeze")) return unsqueeze(e, p, x, depth);
    if (oq_node_is(p, "Squeeze")) return squeeze(e, p, x, depth);
    if (oq_node_is(p, "Reshape")) return reshape(e, p, x, depth);
    if (oq_node_is(p, "Expand")) return expand(e, p, x, depth);
    if (oq_node_is(p, "Trilu")) return trilu(e, p, x, depth);
    if (oq_node_is(p, "Slice")) return slice(e, p, x, depth);
    if (oq_node_is(p, "ConstantOfShape") && oq_gview_const_scalar(e->v, name, &c)) {
        const_val(x, c, elem);
        return copies(e, d, oq_sym_vec(e->sc, p->input[0], d, OQ_SYM_MAX_RANK), x);
    }
    return fail(e, "%s '%s' in the mask computation", p->op_type, p->name);
}

/* `role` sits on axis `at` of the four alone, as that axis's only factor (its size in *size). */
static int only(const axis *a4, int at, int role, oq_symdim *size)
{
    for (int j = 0; j < 4; j++)
        if ((roles(&a4[j]) & role) && j != at) return 0;
    if (a4[at].n != 1 || !(a4[at].f[0].kind & role)) return 0;
    *size = a4[at].f[0].size;
    return 1;
}

/* `x` is the float mask input's own values (1/0 as the contract reads it) with no arithmetic
 * over them: the model adds the input to its scores, so the input is an additive mask itself. */
static int raw_input(const ev *e, const mval *x)
{
    if (!x->input || x->elem == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL || !oq_dtype_is_float((oq_dtype)x->elem)) return 0;
    for (int i = 0; i < 4; i++)
        if (x->t[i] != (double)((i & 1) != e->pad)) return 0;
    return 1;
}

int cv_maskfn_eval(cv_model *m, const char *mask, int is_causal, const char *mask_input, oq_mask_polarity polarity,
                   cv_maskfn *fn, char *why, size_t why_n)
{
    ev e = {m, cv_view(m), cv_sym(m), mask_input, polarity == OQ_MASK_POLARITY_PAD, why, why_n, 4096, fn};
    mval x;
    char said[32];
    *why = 0;
    memset(fn, 0, sizeof *fn);
    fn->batch = fn->keys = fn->causal = oq_symdim_const(INT64_MIN);
    if (!e.v) return fail(&e, "out of memory");
    if (mask && *mask) {
        if (eval(&e, mask, &x, 0)) return 1;
    } else {
        const_val(&x, 1, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL);
    }
    if (x.rank > 4) return fail(&e, "a mask of rank %d", x.rank);
    int keep[4];
    for (int i = 0; i < 4; i++) {
        if (x.elem == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) keep[i] = x.t[i] != 0;
        else if (x.t[i] == 0) keep[i] = 1;
        else if (x.t[i] <= OQ_SDPA_FILL_MAX) keep[i] = 0;
        else if (raw_input(&e, &x))
            return fail(&e, "the float input '%s' is added to the scores as it is: it is itself an additive mask "
                        "(0 = keep, large negative = pad), not a 1/0 mask a rewrite can read; validate a model that "
                        "takes one without a mask %s", x.input, oq_terms("(no_mask)", said, sizeof said));
        else return fail(&e, "the additive mask adds %g, neither 0 nor a large negative number", x.t[i]);
        if (is_causal && !(i & 2)) keep[i] = 0;
    }
    /* right-aligned to [B, H, Lq, Lk] */
    axis a4[4] = {{0}};
    for (int j = 0; j < x.rank; j++) a4[j + 4 - x.rank] = x.ax[j];
    int p_dep = keep[0] != keep[1] || keep[2] != keep[3];
    int c_dep = keep[0] != keep[2] || keep[1] != keep[3];
    if (!p_dep && !c_dep) {
        if (!keep[0]) return fail(&e, "the mask excludes every key");
        fn->kind = CV_MASK_ALL;
        return 0;
    }
    fn->inverted = p_dep && !keep[1] && keep[0];
    if (fn->inverted)
        return fail(&e, "the mask keeps only the keys where '%s' is %d (read with 1 = %s)", x.input, e.pad,
                    e.pad ? "padding" : "valid");
    if (p_dep && (!only(a4, 3, F_K, &fn->keys) || !only(a4, 0, F_B, &fn->batch)))
        return fail(&e, "the key-padding mask is not laid out as [B, *, *, L]");
    oq_symdim ck;
    if (c_dep && !is_causal && !(only(a4, 2, F_Q, &fn->causal) && only(a4, 3, F_CK, &ck)))
        return fail(&e, "the causal mask is not laid out as [*, *, Lq, Lk]");
    if (c_dep && !is_causal && !oq_symdim_eq(ck, fn->causal)) return fail(&e, "the causal mask is not square");
    if (c_dep && !is_causal && !p_dep) fn->keys = ck;
    fn->input = x.input;
    if (keep[0] == 0 && keep[1] == 1 && keep[2] == 0 && keep[3] == 1) fn->kind = CV_MASK_KEY_PADDING;
    else if (keep[0] == 0 && keep[1] == 0 && keep[2] == 1 && keep[3] == 1) fn->kind = CV_MASK_CAUSAL;
    else if (keep[0] == 0 && keep[1] == 0 && keep[2] == 0 && keep[3] == 1) fn->kind = CV_MASK_CAUSAL_PADDING;
    else return fail(&e, "the mask is neither key padding nor causal");
    return 0;
}
