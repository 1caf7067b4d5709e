/* The integer constant folder (constfold-impl.h). */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/constfold-impl.h"

#define T_INT32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define T_INT64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define T_BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL
#define R OQ_FOLD_MAX_RANK

static int eval(oq_fold *fo, const char *value, oq_folded *f);

static const char *name_of(const Onnx__NodeProto *p)
{
    return p->name ? p->name : "";
}

static int cannot(oq_fold *fo, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fo->why, sizeof fo->why, fmt, ap);
    va_end(ap);
    return OQ_FOLD_CANNOT;
}

/* item added to a list once ("Add, Reshape"); one that does not fit ends it with "...", not a
 * word cut short. */
static void append(char *list, size_t cap, const char *quote, const char *item)
{
    char entry[160];
    size_t k = strlen(list), q = strlen(quote), n = strlen(item) + 2 * q;
    if (n >= sizeof entry || (k >= 3 && !strcmp(list + k - 3, "..."))) return;
    snprintf(entry, sizeof entry, "%s%s%s", quote, item, quote);
    for (const char *at = list; (at = strstr(at, entry)); at += n)
        if ((at == list || at[-1] == ' ') && (!at[n] || at[n] == ',')) return;
    if (k + n + 2 + 5 < cap) snprintf(list + k, cap - k, "%s%s", k ? ", " : "", entry);
    else if (k + 5 < cap) snprintf(list + k, cap - k, "%s...", k ? ", " : "");
}

static int64_t numel(const oq_folded *f)
{
    int64_t n = 1;
    for (int i = 0; i < f->rank; i++) n *= f->shape[i];
    return n;
}

/* f given its shape and room for its elements; too many of them is left to ORT. */
static int alloc(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f, int rank, const int64_t *shape, int32_t type)
{
    int64_t n = 1;
    if (rank > R) return cannot(fo, "%s '%s' makes rank %d, above the folder's limit of %d", p->op_type, name_of(p), rank, R);
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0 || (shape[i] && n > OQ_FOLD_MAX_ELEMS / shape[i])) n = (int64_t)OQ_FOLD_MAX_ELEMS + 1;
        else n *= shape[i];
    if (n > OQ_FOLD_MAX_ELEMS)
        return cannot(fo, "%s '%s' makes more than %d elements, too large to fold", p->op_type, name_of(p),
                      OQ_FOLD_MAX_ELEMS);
    free(f->v);
    if (!(f->v = malloc((size_t)(n ? n : 1) * sizeof *f->v))) return cannot(fo, "out of memory");
    if (rank) memmove(f->shape, shape, (size_t)rank * sizeof *shape); /* a scalar has no shape to copy */
    f->rank = rank;
    f->type = type;
    return OQ_FOLD_DONE;
}

/* The n int32, int64 or bool (a byte each when raw) values of t, 0 where it holds fewer (data
 * not read). */
static int proto_ints(const Onnx__TensorProto *t, int64_t *out, size_t n)
{
    size_t w = t->data_type == T_INT64 ? 8 : t->data_type == T_BOOL ? 1 : 4;
    if (t->has_raw_data && t->raw_data.len != n * w) return 0;
    if (!t->has_raw_data && (w == 8 ? t->n_int64_data : t->n_int32_data) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x64 = 0;
        int32_t x32 = 0;
        if (t->has_raw_data && w == 8) memcpy(&x64, t->raw_data.data + i * w, w);
        else if (t->has_raw_data && w == 4) memcpy(&x32, t->raw_data.data + i * w, w), x64 = x32;
        else if (t->has_raw_data) x64 = t->raw_data.data[i];
        else x64 = w == 8 ? t->int64_data[i] : t->int32_data[i];
        out[i] = w == 1 ? x64 != 0 : x64;
    }
    return 1;
}

static int read_tensor(oq_fold *fo, const char *value, const Onnx__TensorProto *t, oq_folded *f)
{
    int64_t shape[R];
    if (t->data_type != T_INT32 && t->data_type != T_INT64 && t->data_type != T_BOOL)
        return cannot(fo, "the constant '%s' holds no int32, int64 or bool values read here", value);
    if (t->n_dims > R) return cannot(fo, "the constant '%s' has rank %zu, above the folder's limit of %d", value, t->n_dims, R);
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && n > OQ_FOLD_MAX_ELEMS / t->dims[i]))
            return cannot(fo, "the constant '%s' is larger than %d elements", value, OQ_FOLD_MAX_ELEMS);
        n *= shape[i] = t->dims[i];
    }
    if (n > OQ_FOLD_MAX_ELEMS) return cannot(fo, "the constant '%s' is larger than %d elements", value, OQ_FOLD_MAX_ELEMS);
    if (!(f->v = malloc((size_t)(n ? n : 1) * sizeof *f->v))) return cannot(fo, "out of memory");
    if (!proto_ints(t, f->v, (size_t)n))
        return cannot(fo, "the constant '%s' holds no int32, int64 or bool values read here", value);
    f->rank = (int)t->n_dims;
    memcpy(f->shape, shape, (size_t)f->rank * sizeof *shape);
    f->type = t->data_type;
    return OQ_FOLD_DONE;
}

/* A Constant node: its `value` tensor, `value_int` (a scalar) or `value_ints` (a list). */
static int constant(oq_fold *fo, const Onnx__NodeProto *p, const char *value, oq_folded *f)
{
    const Onnx__AttributeProto *a = oq_node_attr(p, "value");
    if (a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t) return read_tensor(fo, value, a->t, f);
    if ((a = oq_node_attr(p, "value_int")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
        int st = alloc(fo, p, f, 0, NULL, T_INT64);
        if (st == OQ_FOLD_DONE) f->v[0] = a->i;
        return st;
    }
    if ((a = oq_node_attr(p, "value_ints")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) {
        int64_t n = (int64_t)a->n_ints;
        int st = alloc(fo, p, f, 1, &n, T_INT64);
        if (st == OQ_FOLD_DONE && n) memcpy(f->v, a->ints, a->n_ints * sizeof *a->ints);
        return st;
    }
    return cannot(fo, "the constant '%s' holds no int32, int64 or bool values read here", value);
}

static int input(oq_fold *fo, const Onnx__NodeProto *p, size_t i, oq_folded *f)
{
    if (i >= p->n_input || !*p->input[i]) return cannot(fo, "%s '%s' lacks its input %zu", p->op_type, name_of(p), i);
    return eval(fo, p->input[i], f);
}

/* Input `slot` of p, a parameter (a shape, axes, starts...): its values into out (at most cap). */
static int param(oq_fold *fo, const Onnx__NodeProto *p, size_t slot, const char *what, int64_t *out, size_t cap,
                 size_t *n)
{
    oq_folded f = {0};
    fo->in_param++;
    int st = input(fo, p, slot, &f);
    fo->in_param--;
    if (st == OQ_FOLD_NONE)
        st = cannot(fo, "%s '%s' takes its %s from a value that is not a constant", p->op_type, name_of(p), what);
    else if (st == OQ_FOLD_DONE && numel(&f) > (int64_t)cap)
        st = cannot(fo, "%s '%s' has a %s of %lld elements, above the folder's limit of %zu", p->op_type, name_of(p),
                    what, (long long)numel(&f), cap);
    if (st == OQ_FOLD_DONE) {
        *n = (size_t)numel(&f);
        memcpy(out, f.v, *n * sizeof *out);
    }
    free(f.v);
    return st;
}

/* An ints attribute (opsets before axes became inputs) or else a parameter input: 0 when
 * neither is given. */
static int attr_or_param(oq_fold *fo, const Onnx__NodeProto *p, const char *attr, size_t slot, int64_t *out, size_t *n)
{
    size_t k;
    const int64_t *a = oq_node_attr_ints(p, attr, &k);
    *n = 0;
    if (a && k > R) return cannot(fo, "%s '%s' has %zu %s, above the folder's limit of %d", p->op_type, name_of(p), k, attr, R);
    if (a) {
        memcpy(out, a, k * sizeof *a);
        *n = k;
        return OQ_FOLD_DONE;
    }
    if (slot >= p->n_input || !*p->input[slot]) return OQ_FOLD_DONE;
    return param(fo, p, slot, attr, out, R, n);
}

/* Row-major strides of f's shape. */
static void strides(const oq_folded *f, int64_t *st)
{
    int64_t s = 1;
    for (int i = f->rank - 1; i >= 0; s *= f->shape[i], i--) st[i] = s;
}

/* Counts idx up by one element of `shape` in row-major order. */
static void step(int64_t *idx, const int64_t *shape, int rank)
{
    for (int i = rank - 1; i >= 0 && ++idx[i] == shape[i]; i--) idx[i] = 0;
}

static int identity(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return input(fo, p, 0, f);
}

static int cast(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    int64_t to = oq_node_attr_int(p, "to", 0);
    int st = input(fo, p, 0, f);
    if (st != OQ_FOLD_DONE) return st;
    if (to != T_INT64 && to != T_INT32) return cannot(fo, "Cast '%s' makes them other than int32 or int64", name_of(p));
    for (int64_t e = 0, n = numel(f); to == T_INT32 && e < n; e++)
        f->v[e] = (int32_t)(uint32_t)f->v[e]; /* ONNX's int64 -> int32 keeps the low 32 bits */
    f->type = (int32_t)to;
    return OQ_FOLD_DONE;
}

/* ONNX's Reshape: 0 copies the input's size (unless allowzero), one -1 takes what is left. */
static int reshape(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    int64_t t[R], known = 1;
    size_t k;
    int infer = -1, allowzero = (int)oq_node_attr_int(p, "allowzero", 0), st = input(fo, p, 0, f);
    if (st == OQ_FOLD_DONE) st = param(fo, p, 1, "shape", t, R, &k);
    if (st != OQ_FOLD_DONE) return st;
    int64_t n = numel(f);
    for (size_t i = 0; i < k; i++) {
        if (t[i] == 0 && !allowzero) t[i] = (int)i < f->rank ? f->shape[i] : -2;
        if (t[i] == -1 && infer < 0) infer = (int)i;
        else if (t[i] < 0 || (t[i] && known > INT64_MAX / t[i])) infer = -2;
        else known *= t[i];
        if (infer == -2) break;
    }
    if (infer >= 0 && known > 0 && n % known == 0) t[infer] = n / known;
    else if (infer >= 0) infer = -2; /* a -1 beside a 0 (allowzero) is no size */
    if (infer == -2 || (infer < 0 && known != n))
        return cannot(fo, "Reshape '%s' has a shape its %lld elements cannot take", name_of(p), (long long)n);
    f->rank = (int)k;
    memcpy(f->shape, t, k * sizeof *t);
    return OQ_FOLD_DONE;
}

static int transpose(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    size_t k = 0;
    const int64_t *perm = oq_node_attr_ints(p, "perm", &k);
    int64_t pm[R], shape[R], in_stride[R], idx[R] = {0};
    uint64_t seen = 0;
    int st = input(fo, p, 0, f);
    if (st != OQ_FOLD_DONE) return st;
    for (int i = 0; i < f->rank; i++) {
        pm[i] = perm && (int)k == f->rank ? perm[i] : perm ? -1 : f->rank - 1 - i;
        if (pm[i] < 0 || pm[i] >= f->rank || (seen >> pm[i] & 1))
            return cannot(fo, "Transpose '%s' has a perm other than one of its %d axes", name_of(p), f->rank);
        seen |= (uint64_t)1 << pm[i];
    }
    strides(f, in_stride);
    for (int i = 0; i < f->rank; i++) shape[i] = f->shape[pm[i]];
    oq_folded out = {0};
    if ((st = alloc(fo, p, &out, f->rank, shape, f->type)) != OQ_FOLD_DONE) return st;
    for (int64_t e = 0, n = numel(f); e < n; e++, step(idx, shape, f->rank)) {
        int64_t from = 0;
        for (int i = 0; i < f->rank; i++) from += idx[i] * in_stride[pm[i]];
        out.v[e] = f->v[from];
    }
    free(f->v);
    *f = out;
    return OQ_FOLD_DONE;
}

/* Unsqueeze inserts size-1 axes at `axes` of the output; Squeeze drops them (all of them when
 * no axes are given). */
static int squeeze_un(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f, int un)
{
    int64_t ax[R], shape[R];
    size_t k = 0;
    uint64_t mark = 0;
    int st = input(fo, p, 0, f);
    if (st == OQ_FOLD_DONE) st = attr_or_param(fo, p, "axes", 1, ax, &k);
    if (st != OQ_FOLD_DONE) return st;
    int out_rank = un ? f->rank + (int)k : f->rank, bad = (un && !k) || out_rank > R;
    for (size_t i = 0; !bad && i < k; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + out_rank : ax[i];
        bad = a < 0 || a >= (un ? out_rank : f->rank) || (mark >> a & 1) || (!un && f->shape[a] != 1);
        if (!bad) mark |= (uint64_t)1 << a;
    }
    if (bad) return cannot(fo, "%s '%s' has axes this constant does not have", p->op_type, name_of(p));
    int r = 0;
    for (int i = 0, from = 0; un && i < out_rank; i++) shape[r++] = mark >> i & 1 ? 1 : f->shape[from++];
    for (int i = 0; !un && i < f->rank; i++)
        if (k ? !(mark >> i & 1) : f->shape[i] != 1) shape[r++] = f->shape[i];
    f->rank = r;
    memcpy(f->shape, shape, (size_t)r * sizeof *shape);
    return OQ_FOLD_DONE;
}

static int unsqueeze(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return squeeze_un(fo, p, f, 1);
}

static int squeeze(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return squeeze_un(fo, p, f, 0);
}

static int fits(int64_t x, int32_t type)
{
    return type == T_INT64 || (x >= INT32_MIN && x <= INT32_MAX);
}

/* What an element's operator gives: its result, or why none. */
enum { EL_OK, EL_OVER, EL_ZERO };
/* One element of an elementwise operator from its operands x (of `type`), into *z. */
typedef int (*elem_fn)(const int64_t *x, int32_t type, int64_t *z);

static int64_t type_min(int32_t type)
{
    return type == T_INT64 ? INT64_MIN : INT32_MIN;
}

static int add_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    return __builtin_add_overflow(x[0], x[1], z) ? EL_OVER : EL_OK;
}

static int sub_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    return __builtin_sub_overflow(x[0], x[1], z) ? EL_OVER : EL_OK;
}

static int mul_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    return __builtin_mul_overflow(x[0], x[1], z) ? EL_OVER : EL_OK;
}

/* ORT's integer Div: C's, truncated toward zero; MIN / -1 traps there (SIGFPE), as does / 0. */
static int div_el(const int64_t *x, int32_t type, int64_t *z)
{
    if (!x[1]) return EL_ZERO;
    if (x[0] == type_min(type) && x[1] == -1) return EL_OVER;
    *z = x[0] / x[1];
    return EL_OK;
}

/* ONNX's Mod with fmod 0 (ORT's Modulus): the remainder takes the divisor's sign. */
static int mod_el(const int64_t *x, int32_t type, int64_t *z)
{
    if (!x[1]) return EL_ZERO;
    if (x[0] == type_min(type) && x[1] == -1) return EL_OVER; /* C's % traps there, in ORT too */
    int64_t r = x[0] % x[1];
    *z = (r < 0 && x[1] > 0) || (r > 0 && x[1] < 0) ? r + x[1] : r;
    return EL_OK;
}

/* fmod 1: ORT's std::fmod of the integers as doubles, the dividend's sign (an int64 beyond 2^53
 * rounded as ORT rounds it); |result| < |divisor| <= 2^63, so it converts back exactly. */
static int fmod_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    if (!x[1]) return EL_ZERO;
    *z = (int64_t)fmod((double)x[0], (double)x[1]);
    return EL_OK;
}

static int min_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    *z = x[0] < x[1] ? x[0] : x[1];
    return EL_OK;
}

static int max_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    *z = x[0] > x[1] ? x[0] : x[1];
    return EL_OK;
}

static int neg_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    if (x[0] == INT64_MIN) return EL_OVER;
    *z = -x[0];
    return EL_OK;
}

static int where_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    *z = x[0] ? x[1] : x[2];
    return EL_OK;
}

/* Expand: the data's element where it repeats over the shape's */
static int first_el(const int64_t *x, int32_t type, int64_t *z)
{
    (void)type;
    *z = x[0];
    return EL_OK;
}

/* The shape the n operands broadcast to, numpy's way, and each one's strides over it (0 along
 * an axis it repeats). */
static int broadcast_shape(oq_fold *fo, const Onnx__NodeProto *p, const oq_folded *const *in, int n, int *rank,
                           int64_t *shape, int64_t (*st)[R])
{
    int r = 0;
    for (int j = 0; j < n; j++) r = in[j]->rank > r ? in[j]->rank : r;
    for (int i = 0; i < r; i++) shape[i] = 1;
    for (int j = 0; j < n; j++)
        for (int i = r - in[j]->rank; i < r; i++) {
            int64_t d = in[j]->shape[i - (r - in[j]->rank)];
            if (d != 1 && shape[i] != 1 && shape[i] != d)
                return cannot(fo, "%s '%s' has inputs whose shapes do not broadcast", p->op_type, name_of(p));
            if (d != 1) shape[i] = d;
        }
    for (int j = 0; j < n; j++) {
        int64_t t[R];
        strides(in[j], t);
        for (int i = 0; i < r; i++) {
            int ia = i - (r - in[j]->rank);
            st[j][i] = ia < 0 || in[j]->shape[ia] == 1 ? 0 : t[ia];
        }
    }
    *rank = r;
    return OQ_FOLD_DONE;
}

/* Why element e of p has no value (its operands x), said. */
static int element_fails(oq_fold *fo, const Onnx__NodeProto *p, int why, int64_t e, const int64_t *x, int n,
                         int32_t type)
{
    if (why == EL_ZERO)
        return cannot(fo, "%s '%s' divides by zero at element %lld (%lld by 0): ONNX Runtime's integer division is "
                      "undefined there", p->op_type, name_of(p), (long long)e, (long long)x[0]);
    char ops[64] = "";
    for (int j = 0; j < n; j++) {
        size_t k = strlen(ops);
        snprintf(ops + k, sizeof ops - k, "%s%lld", j ? " and " : "", (long long)x[j]);
    }
    return cannot(fo, "%s '%s' overflows int%d at element %lld (%s): left to ONNX Runtime", p->op_type, name_of(p),
                  type == T_INT64 ? 64 : 32, (long long)e, ops);
}

/* fn over the n (at most 3) operands as numpy broadcasts them, into out of `type`; an operand
 * without values (Expand's shape) reads 0. A result outside int32 or int64 is not folded. */
static int elementwise(oq_fold *fo, const Onnx__NodeProto *p, const oq_folded *const *in, int n, elem_fn fn,
                       int32_t type, oq_folded *out)
{
    int64_t shape[R], st[3][R], idx[R] = {0}, x[3], z = 0;
    int r = 0, s = broadcast_shape(fo, p, in, n, &r, shape, st);
    if (s == OQ_FOLD_DONE) s = alloc(fo, p, out, r, shape, type);
    for (int64_t e = 0, ne = s == OQ_FOLD_DONE ? numel(out) : 0; e < ne; e++, step(idx, shape, r)) {
        for (int j = 0; j < n; j++) {
            int64_t o = 0;
            for (int i = 0; i < r; i++) o += idx[i] * st[j][i];
            x[j] = in[j]->v ? in[j]->v[o] : 0;
        }
        int why = fn(x, type, &z);
        if (why == EL_OK && !fits(z, type)) why = EL_OVER;
        if (why != EL_OK) return element_fails(fo, p, why, e, x, n, type);
        out->v[e] = z;
    }
    return s;
}

/* Integer operands of one type: arithmetic on a bool, or on two types, is not ONNX's. */
static int same_ints(oq_fold *fo, const Onnx__NodeProto *p, const oq_folded *a, const oq_folded *b)
{
    if (a->type != b->type) return cannot(fo, "%s '%s' has inputs of two types", p->op_type, name_of(p));
    if (a->type == T_BOOL) return cannot(fo, "%s '%s' computes on bool values", p->op_type, name_of(p));
    return OQ_FOLD_DONE;
}

/* fn over the inputs, left to right (Min and Max take any number; the rest two), each pair
 * broadcast. */
static int fold_left(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f, elem_fn fn, size_t at_least)
{
    int st = input(fo, p, 0, f);
    if (st == OQ_FOLD_DONE) st = same_ints(fo, p, f, f);
    for (size_t i = 1; st == OQ_FOLD_DONE && i < (p->n_input > at_least ? p->n_input : at_least); i++) {
        oq_folded b = {0}, out = {0};
        st = input(fo, p, i, &b);
        if (st == OQ_FOLD_DONE) st = same_ints(fo, p, f, &b);
        if (st == OQ_FOLD_DONE) st = elementwise(fo, p, (const oq_folded *[]){f, &b}, 2, fn, f->type, &out);
        free(b.v);
        free(f->v);
        *f = out;
    }
    return st;
}

static int add(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return fold_left(fo, p, f, add_el, 2);
}

static int sub(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return fold_left(fo, p, f, sub_el, 2);
}

static int mul(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return fold_left(fo, p, f, mul_el, 2);
}

static int divide(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return fold_left(fo, p, f, div_el, 2);
}

static int mod(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return fold_left(fo, p, f, oq_node_attr_int(p, "fmod", 0) ? fmod_el : mod_el, 2);
}

static int min(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return fold_left(fo, p, f, min_el, 1);
}

static int max(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    return fold_left(fo, p, f, max_el, 1);
}

static int neg(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    oq_folded a = {0};
    int st = input(fo, p, 0, &a);
    if (st == OQ_FOLD_DONE) st = same_ints(fo, p, &a, &a);
    if (st == OQ_FOLD_DONE) st = elementwise(fo, p, (const oq_folded *[]){&a}, 1, neg_el, a.type, f);
    free(a.v);
    return st;
}

/* Where(condition, X, Y): the condition a bool constant, X and Y of one type. */
static int where(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    oq_folded in[3] = {{0}};
    int st = OQ_FOLD_DONE;
    for (size_t i = 0; st == OQ_FOLD_DONE && i < 3; i++) st = input(fo, p, i, &in[i]);
    if (st == OQ_FOLD_DONE && in[0].type != T_BOOL)
        st = cannot(fo, "Where '%s' has a condition that is not bool", name_of(p));
    if (st == OQ_FOLD_DONE && in[1].type != in[2].type)
        st = cannot(fo, "Where '%s' has inputs of two types", name_of(p));
    if (st == OQ_FOLD_DONE)
        st = elementwise(fo, p, (const oq_folded *[]){&in[0], &in[1], &in[2]}, 3, where_el, in[1].type, f);
    for (int i = 0; i < 3; i++) free(in[i].v);
    return st;
}

/* Expand(input, shape): the input broadcast with a shape of that many ones and sizes. */
static int expand(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    oq_folded a = {0}, shape = {0};
    size_t k = 0;
    int st = input(fo, p, 0, &a);
    if (st == OQ_FOLD_DONE) st = param(fo, p, 1, "shape", shape.shape, R, &k);
    shape.rank = (int)k;
    for (size_t i = 0; st == OQ_FOLD_DONE && i < k; i++)
        if (shape.shape[i] < 0) st = cannot(fo, "Expand '%s' has a negative size in its shape", name_of(p));
    if (st == OQ_FOLD_DONE) st = elementwise(fo, p, (const oq_folded *[]){&a, &shape}, 2, first_el, a.type, f);
    free(a.v);
    return st;
}

/* Tile: each axis repeated; a size past int64 is left, as one past the element limit is. */
static int tile(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    int64_t rep[R], shape[R], in_stride[R], idx[R] = {0};
    size_t k = 0;
    oq_folded out = {0};
    int st = input(fo, p, 0, f);
    if (st == OQ_FOLD_DONE) st = param(fo, p, 1, "repeats", rep, R, &k);
    if (st == OQ_FOLD_DONE && (int)k != f->rank)
        st = cannot(fo, "Tile '%s' has %zu repeats for %d axes", name_of(p), k, f->rank);
    for (int i = 0; st == OQ_FOLD_DONE && i < f->rank; i++) {
        if (rep[i] < 0) st = cannot(fo, "Tile '%s' has a negative repeat", name_of(p));
        else if (__builtin_mul_overflow(f->shape[i], rep[i], &shape[i])) shape[i] = -1; /* alloc: too large */
    }
    if (st == OQ_FOLD_DONE) st = alloc(fo, p, &out, f->rank, shape, f->type);
    if (st != OQ_FOLD_DONE) return free(out.v), st;
    strides(f, in_stride);
    for (int64_t e = 0, n = numel(&out); e < n; e++, step(idx, shape, f->rank)) {
        int64_t from = 0;
        for (int i = 0; i < f->rank; i++) from += idx[i] % f->shape[i] * in_stride[i];
        out.v[e] = f->v[from];
    }
    free(f->v);
    *f = out;
    return OQ_FOLD_DONE;
}

/* Gather of folded data d by folded indices ix along `axis`: an index outside the axis is not
 * folded (ORT fails the run there). */
static int gather_of(oq_fold *fo, const Onnx__NodeProto *p, const oq_folded *d, const oq_folded *ix, int axis,
                     oq_folded *out)
{
    int64_t shape[2 * R], outer = 1, inner = 1, dim = d->shape[axis], n = numel(ix), at = 0;
    int rank = 0;
    for (int i = 0; i < axis; i++) outer *= shape[rank++] = d->shape[i];
    for (int i = 0; i < ix->rank; i++) shape[rank++] = ix->shape[i];
    for (int i = axis + 1; i < d->rank; i++) inner *= shape[rank++] = d->shape[i];
    for (int64_t j = 0; j < n; j++)
        if (ix->v[j] < -dim || ix->v[j] >= dim)
            return cannot(fo, "Gather '%s' has index %lld at element %lld, outside its data's axis %d of size %lld",
                          name_of(p), (long long)ix->v[j], (long long)j, axis, (long long)dim);
    int st = alloc(fo, p, out, rank, shape, d->type);
    for (int64_t o = 0; st == OQ_FOLD_DONE && o < outer; o++)
        for (int64_t j = 0; j < n; j++, at += inner) {
            int64_t x = ix->v[j] < 0 ? ix->v[j] + dim : ix->v[j];
            memcpy(out->v + at, d->v + (o * dim + x) * inner, (size_t)inner * sizeof *out->v);
        }
    return st;
}

static int gather(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    oq_folded d = {0}, ix = {0};
    int st = input(fo, p, 0, &d);
    if (st == OQ_FOLD_DONE) st = input(fo, p, 1, &ix);
    int64_t axis = oq_node_attr_int(p, "axis", 0);
    axis = axis < 0 ? axis + d.rank : axis;
    if (st == OQ_FOLD_DONE && (axis < 0 || axis >= d.rank))
        st = cannot(fo, "Gather '%s' has an axis its data does not have", name_of(p));
    if (st == OQ_FOLD_DONE) st = gather_of(fo, p, &d, &ix, (int)axis, f);
    free(d.v);
    free(ix.v);
    return st;
}

/* Parts of one rank and type laid end to end along `axis`, the other sizes alike. */
static int join(oq_fold *fo, const Onnx__NodeProto *p, const oq_folded *parts, size_t n, oq_folded *f)
{
    int r = parts[0].rank;
    int64_t axis = oq_node_attr_int(p, "axis", INT64_MIN), shape[R], outer = 1, at = 0;
    axis = axis < 0 && axis >= -r ? axis + r : axis;
    if (axis < 0 || axis >= r) return cannot(fo, "Concat '%s' has an axis its inputs do not have", name_of(p));
    memcpy(shape, parts[0].shape, (size_t)r * sizeof *shape);
    shape[axis] = 0;
    for (size_t i = 0; i < n; i++) {
        int alike = parts[i].rank == r && parts[i].type == parts[0].type;
        for (int d = 0; alike && d < r; d++) alike = d == axis || parts[i].shape[d] == shape[d];
        if (!alike) return cannot(fo, "Concat '%s' has inputs of shapes or types that do not join", name_of(p));
        shape[axis] += parts[i].shape[axis];
    }
    int st = alloc(fo, p, f, r, shape, parts[0].type);
    for (int d = 0; d < axis; d++) outer *= shape[d];
    for (int64_t o = 0; st == OQ_FOLD_DONE && o < outer; o++)
        for (size_t i = 0; i < n; i++) {
            int64_t chunk = numel(&parts[i]) / (outer ? outer : 1);
            memcpy(f->v + at, parts[i].v + o * chunk, (size_t)chunk * sizeof *f->v);
            at += chunk;
        }
    return st;
}

static int concat(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    oq_folded *parts = calloc(p->n_input ? p->n_input : 1, sizeof *parts);
    int st = parts ? OQ_FOLD_DONE : cannot(fo, "out of memory");
    if (st == OQ_FOLD_DONE && !p->n_input) st = cannot(fo, "Concat '%s' has no inputs", name_of(p));
    for (size_t i = 0; st == OQ_FOLD_DONE && i < p->n_input; i++) st = input(fo, p, i, &parts[i]);
    if (st == OQ_FOLD_DONE && parts[0].rank == 0) st = cannot(fo, "Concat '%s' has scalar inputs", name_of(p));
    if (st == OQ_FOLD_DONE) st = join(fo, p, parts, p->n_input, f);
    for (size_t i = 0; parts && i < p->n_input; i++) free(parts[i].v);
    free(parts);
    return st;
}

/* start, start + delta, ... short of limit: ceil((limit - start) / delta) of them, or none. */
static int range(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    oq_folded s[3] = {{0}};
    int64_t x[3] = {0}, d, count = 0;
    int st = OQ_FOLD_DONE;
    for (size_t i = 0; st == OQ_FOLD_DONE && i < 3; i++) {
        st = input(fo, p, i, &s[i]);
        if (st == OQ_FOLD_DONE && numel(&s[i]) != 1) st = cannot(fo, "Range '%s' has an input %zu not of one element", name_of(p), i);
        if (st == OQ_FOLD_DONE) x[i] = s[i].v[0];
    }
    if (st == OQ_FOLD_DONE && x[2] == 0) st = cannot(fo, "Range '%s' has a delta of 0", name_of(p));
    if (st == OQ_FOLD_DONE && __builtin_sub_overflow(x[1], x[0], &d))
        st = cannot(fo, "Range '%s' overflows int64 (%lld to %lld): left to ONNX Runtime", name_of(p), (long long)x[0],
                    (long long)x[1]);
    if (st == OQ_FOLD_DONE && d && (d > 0) == (x[2] > 0)) /* d / -1 overflows only at INT64_MIN: too many anyway */
        count = d == INT64_MIN && x[2] == -1 ? INT64_MAX : d / x[2] + (d % x[2] != 0);
    if (st == OQ_FOLD_DONE) st = alloc(fo, p, f, 1, &count, s[0].type);
    for (int64_t e = 0; st == OQ_FOLD_DONE && e < count; e++) f->v[e] = x[0] + e * x[2];
    for (int i = 0; i < 3; i++) free(s[i].v);
    return st;
}

/* The starts, ends, axes and steps of a Slice: attributes before opset 10, inputs from it. */
typedef struct slice_args {
    int64_t starts[R], ends[R], axes[R], steps[R];
    size_t n, n_axes, n_steps;
} slice_args;

static int slice_args_of(oq_fold *fo, const Onnx__NodeProto *p, slice_args *s)
{
    size_t ne = 0;
    int st = OQ_FOLD_DONE;
    if (oq_gview_opset(fo->v) && oq_gview_opset(fo->v) < 10) {
        st = attr_or_param(fo, p, "starts", SIZE_MAX, s->starts, &s->n);
        if (st == OQ_FOLD_DONE) st = attr_or_param(fo, p, "ends", SIZE_MAX, s->ends, &ne);
        if (st == OQ_FOLD_DONE) st = attr_or_param(fo, p, "axes", SIZE_MAX, s->axes, &s->n_axes);
    } else {
        st = param(fo, p, 1, "starts", s->starts, R, &s->n);
        if (st == OQ_FOLD_DONE) st = param(fo, p, 2, "ends", s->ends, R, &ne);
        if (st == OQ_FOLD_DONE && p->n_input > 3 && *p->input[3]) st = param(fo, p, 3, "axes", s->axes, R, &s->n_axes);
        if (st == OQ_FOLD_DONE && p->n_input > 4 && *p->input[4]) st = param(fo, p, 4, "steps", s->steps, R, &s->n_steps);
    }
    if (st == OQ_FOLD_DONE && (ne != s->n || (s->n_axes && s->n_axes != s->n) || (s->n_steps && s->n_steps != s->n)))
        st = cannot(fo, "Slice '%s' has starts, ends, axes or steps of different lengths", name_of(p));
    return st;
}

/* Per axis of data `d`, the first element taken, the step and how many, as ONNX clamps them. */
static int slice_plan(oq_fold *fo, const Onnx__NodeProto *p, const oq_folded *d, const slice_args *s, int64_t *first,
                      int64_t *stp, int64_t *count)
{
    for (int i = 0; i < d->rank; i++) first[i] = 0, stp[i] = 1, count[i] = d->shape[i];
    uint64_t seen = 0;
    for (size_t j = 0; j < s->n; j++) {
        int64_t a = s->n_axes ? s->axes[j] : (int64_t)j, dim, b, e, k = s->n_steps ? s->steps[j] : 1;
        a = a < 0 ? a + d->rank : a;
        if (a < 0 || a >= d->rank || (seen >> a & 1) || k == 0 || k == INT64_MIN)
            return cannot(fo, "Slice '%s' has axes or steps this constant does not have", name_of(p));
        seen |= (uint64_t)1 << a;
        dim = d->shape[a];
        b = s->starts[j] < 0 ? s->starts[j] + dim : s->starts[j];
        e = s->ends[j] < 0 ? s->ends[j] + dim : s->ends[j];
        int64_t lo = k > 0 ? 0 : -1, hi = k > 0 ? dim : dim - 1;
        b = b < 0 ? 0 : b > hi ? hi : b;
        e = e < lo ? lo : e > hi ? hi : e;
        first[a] = b;
        stp[a] = k;
        count[a] = dim == 0 ? 0 /* backwards, start clamps to 0 past end's -1: still nothing */
                   : k > 0 ? (e > b ? (e - b - 1) / k + 1 : 0) : (b > e ? (b - e - 1) / -k + 1 : 0);
    }
    return OQ_FOLD_DONE;
}

static int slice(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    slice_args s = {.n = 0};
    int64_t first[R], stp[R], count[R], in_stride[R], idx[R] = {0};
    oq_folded out = {0};
    int st = input(fo, p, 0, f);
    if (st == OQ_FOLD_DONE) st = slice_args_of(fo, p, &s);
    if (st == OQ_FOLD_DONE) st = slice_plan(fo, p, f, &s, first, stp, count);
    if (st == OQ_FOLD_DONE) st = alloc(fo, p, &out, f->rank, count, f->type);
    if (st != OQ_FOLD_DONE) return free(out.v), st;
    strides(f, in_stride);
    for (int64_t e = 0, n = numel(&out); e < n; e++, step(idx, count, f->rank)) {
        int64_t from = 0;
        for (int i = 0; i < f->rank; i++) from += (first[i] + idx[i] * stp[i]) * in_stride[i];
        out.v[e] = f->v[from];
    }
    free(f->v);
    *f = out;
    return OQ_FOLD_DONE;
}

static int constant_of_shape(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f)
{
    int64_t shape[R], x;
    size_t k = 0;
    const Onnx__AttributeProto *a = oq_node_attr(p, "value");
    int st = param(fo, p, 0, "shape", shape, R, &k);
    if (st != OQ_FOLD_DONE) return st;
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t ||
        (a->t->data_type != T_INT32 && a->t->data_type != T_INT64) || !proto_ints(a->t, &x, 1))
        return cannot(fo, "ConstantOfShape '%s' makes values other than int32 or int64", name_of(p));
    st = alloc(fo, p, f, (int)k, shape, a->t->data_type);
    for (int64_t e = 0, n = numel(f); st == OQ_FOLD_DONE && e < n; e++) f->v[e] = x;
    return st;
}

typedef int (*fold_fn)(oq_fold *fo, const Onnx__NodeProto *p, oq_folded *f);
#define ALL SIZE_MAX
/* Each operator's fold, and how many of its first inputs are data (the rest are parameters read
 * with param(): a shape, axes, repeats, a slice's bounds). */
static const struct {
    const char *op;
    fold_fn fn;
    size_t data;
} OPS[] = {
    {"Identity", identity, ALL}, {"Cast", cast, ALL},     {"Reshape", reshape, 1}, {"Transpose", transpose, ALL},
    {"Unsqueeze", unsqueeze, 1}, {"Squeeze", squeeze, 1}, {"Add", add, ALL},       {"Sub", sub, ALL},
    {"Mul", mul, ALL},           {"Div", divide, ALL},    {"Mod", mod, ALL},       {"Min", min, ALL},
    {"Max", max, ALL},           {"Neg", neg, ALL},       {"Where", where, ALL},   {"Expand", expand, 1},
    {"Tile", tile, 1},           {"Gather", gather, ALL}, {"Concat", concat, ALL}, {"Range", range, ALL},
    {"Slice", slice, 1},         {"ConstantOfShape", constant_of_shape, 0},
};

#define N_OPS (sizeof OPS / sizeof *OPS)

/* The entry of OPS that folds p, or N_OPS where none does. */
static size_t op_index(const Onnx__NodeProto *p)
{
    size_t i = 0;
    while (i < N_OPS && !oq_node_is(p, OPS[i].op)) i++;
    return i;
}

/* Whether the folder folds what p makes (one of OPS, or a Constant). */
static int folded(const Onnx__NodeProto *p) { return op_index(p) < N_OPS || oq_node_is(p, "Constant"); }

/* A node of the walk below and its next input to visit. */
typedef struct walk_frame {
    size_t node, next;
} walk_frame;

/* The first value whose values `value`'s are made of that is known only at run time (a graph
 * input without a default, the output of an operator the folder does not fold), depth first in
 * input order through the operators' data (not their parameters: values whose shape is computed
 * are still constants, as param() says), or NULL where none is (or out of memory). Each node is
 * entered once and the stack is explicit: linear in the graph and without a limit, so a
 * 100,000-node chain from an input is found as one of 3 is (the folder itself stops at
 * OQ_FOLD_MAX_OPS operators). */
static const char *runtime_source(const oq_gview *v, const char *value)
{
    const Onnx__GraphProto *g = oq_gview_graph(v);
    size_t top = 0, idx = 0;
    unsigned char *seen = calloc(g->n_node ? g->n_node : 1, 1);
    walk_frame *stack = malloc((g->n_node ? g->n_node : 1) * sizeof *stack); /* each node pushed once at most */
    const char *found = NULL, *next = seen && stack ? value : NULL;
    while (!found && (next || top)) {
        const Onnx__NodeProto *p = next && *next ? oq_gview_producer(v, next, &idx) : NULL;
        int fresh = p && !seen[idx];
        if (next && *next && (p ? fresh && !folded(p) : !oq_gview_initializer(v, next)))
            found = next;
        else if (fresh) {
            seen[idx] = 1;
            stack[top++] = (walk_frame){idx, 0};
        }
        next = NULL;
        walk_frame *f = top ? &stack[top - 1] : NULL;
        const Onnx__NodeProto *at = f ? g->node[f->node] : NULL;
        size_t i = at ? op_index(at) : N_OPS, data = i < N_OPS ? OPS[i].data : 0; /* a Constant: none */
        if (f && f->next < at->n_input && f->next < data) next = at->input[f->next++];
        else if (f) top--;
    }
    free(seen);
    free(stack);
    return found;
}

/* p counted against the budget, once however often and however it is read (a parameter, data),
 * and put on the path of those being folded; one already there is a cycle. */
static int enter(oq_fold *fo, const Onnx__NodeProto *p, const char *value)
{
    int seen = 0;
    for (int d = 0; d < fo->depth; d++)
        if (fo->path[d] == p)
            return cannot(fo, "a cycle through %s '%s': its output '%s' is computed from itself", p->op_type,
                          name_of(p), value);
    for (int i = 0; i < fo->ops && !seen; i++) seen = fo->counted[i] == p;
    if (!seen && fo->ops == OQ_FOLD_MAX_OPS && fo->depth == fo->ops) /* every one counted is on this path */
        return cannot(fo, "a chain of more than %d operators leads to them (%s '%s' the next), longer than the "
                      "folder's limit", OQ_FOLD_MAX_OPS, p->op_type, name_of(p));
    if (!seen && fo->ops == OQ_FOLD_MAX_OPS)
        return cannot(fo, "more than %d operators lead to them (%s '%s' the next), more than the folder's limit",
                      OQ_FOLD_MAX_OPS, p->op_type, name_of(p));
    if (!seen) fo->counted[fo->ops++] = p;
    fo->path[fo->depth++] = p;
    return OQ_FOLD_DONE;
}

/* A folded operator p: its inputs first, then its result, its name noted on the values' way. */
static int apply(oq_fold *fo, const char *value, const Onnx__NodeProto *p, oq_folded *f)
{
    size_t i = op_index(p);
    if (i == N_OPS) {
        fo->runtime = value;
        return OQ_FOLD_NONE;
    }
    int st = enter(fo, p, value);
    if (st != OQ_FOLD_DONE) return st;
    st = OPS[i].fn(fo, p, f);
    fo->depth--;
    char item[160];
    if (oq_node_is(p, "ConstantOfShape")) /* its values come from no constant: the origin names it */
        snprintf(item, sizeof item, "%s '%s'", p->op_type, name_of(p));
    else
        snprintf(item, sizeof item, "%s", p->op_type);
    if (st == OQ_FOLD_DONE && !fo->in_param) append(fo->opnames, sizeof fo->opnames, "", item);
    return st;
}

static oq_fold_memo *memo_find(const oq_fold *fo, const char *value)
{
    for (size_t i = 0; i < fo->n_memo; i++)
        if (fo->memo[i].in_param == (fo->in_param > 0) && !strcmp(fo->memo[i].value, value)) return &fo->memo[i];
    return NULL;
}

/* A copy of folded `from` into *to. */
static int copy(oq_fold *fo, const oq_folded *from, oq_folded *to)
{
    int64_t n = numel(from);
    free(to->v);
    *to = *from;
    if (!(to->v = malloc((size_t)(n ? n : 1) * sizeof *to->v))) return cannot(fo, "out of memory");
    if (n) memcpy(to->v, from->v, (size_t)n * sizeof *to->v);
    return OQ_FOLD_DONE;
}

/* f kept for value's other readers: without it, each would fold it again, a chain of
 * Add(x, x) twice as often per link. */
static int memo_add(oq_fold *fo, const char *value, const oq_folded *f)
{
    if (fo->memo_elems + numel(f) > OQ_FOLD_MAX_ELEMS)
        return cannot(fo, "the values read more than once on the way make more than %d elements, too large to fold",
                      OQ_FOLD_MAX_ELEMS);
    oq_fold_memo *m = realloc(fo->memo, (fo->n_memo + 1) * sizeof *m);
    if (!m) return cannot(fo, "out of memory");
    fo->memo = m;
    m += fo->n_memo;
    *m = (oq_fold_memo){.value = value, .in_param = fo->in_param > 0};
    int st = copy(fo, f, &m->f);
    if (st == OQ_FOLD_DONE) fo->n_memo++, fo->memo_elems += numel(f);
    return st;
}

/* value folded afresh: the operator or constant that makes it */
static int eval_once(oq_fold *fo, const char *value, oq_folded *f)
{
    const Onnx__NodeProto *p = oq_gview_producer(fo->v, value, NULL);
    const Onnx__TensorProto *t = p ? NULL : oq_gview_initializer(fo->v, value);
    if (!p && !t) {
        fo->runtime = value; /* a graph input without a default */
        return OQ_FOLD_NONE;
    }
    if (p && !oq_node_is(p, "Constant")) return apply(fo, value, p, f);
    int st = t ? read_tensor(fo, value, t, f) : constant(fo, p, value, f);
    if (st == OQ_FOLD_DONE && !fo->in_param) {
        int dflt = t && oq_gview_default_input(fo->v, value);
        append(dflt ? fo->defaults : fo->consts, sizeof fo->consts, "'", value);
    }
    return st;
}

static int eval(oq_fold *fo, const char *value, oq_folded *f)
{
    const oq_fold_memo *m = memo_find(fo, value);
    if (m) return copy(fo, &m->f, f);
    int st = eval_once(fo, value, f);
    if (st == OQ_FOLD_DONE && oq_gview_consumer_count(fo->v, value) > 1) st = memo_add(fo, value, f);
    return st;
}

int oq_fold_value(oq_fold *fo, const char *value, oq_folded *out)
{
    memset(out, 0, sizeof *out);
    int st = eval(fo, value, out);
    /* given up (a limit met, an overflow on the way): a value known only at run time behind it
     * makes it no constant, whichever the folder met first */
    if (st == OQ_FOLD_CANNOT && (fo->runtime = runtime_source(fo->v, value))) st = OQ_FOLD_NONE;
    return st;
}

void oq_fold_free(oq_fold *fo)
{
    for (size_t i = 0; i < fo->n_memo; i++) free(fo->memo[i].f.v);
    free(fo->memo);
    fo->memo = NULL;
    fo->n_memo = 0;
    fo->memo_elems = 0;
}

const char *oq_fold_origin(const oq_fold *fo, char *buf, size_t cap)
{
    int many = strchr(fo->consts, ',') != NULL, many_defaults = strchr(fo->defaults, ',') != NULL;
    if (!*fo->opnames && !*fo->defaults) return snprintf(buf, cap, "%s", ""), buf;
    if (!*fo->consts && !*fo->defaults) return snprintf(buf, cap, " (made by %s)", fo->opnames), buf;
    size_t k = (size_t)snprintf(buf, cap, " (");
    if (*fo->consts && k < cap) k += (size_t)snprintf(buf + k, cap - k, "the constant%s %s", many ? "s" : "", fo->consts);
    if (*fo->defaults && k < cap)
        k += (size_t)snprintf(buf + k, cap - k, "%sthe default%s of input%s %s", *fo->consts ? " and " : "",
                              many_defaults ? "s" : "", many_defaults ? "s" : "", fo->defaults);
    if (*fo->opnames && k < cap) k += (size_t)snprintf(buf + k, cap - k, " through %s", fo->opnames);
    if (k < cap) snprintf(buf + k, cap - k, ")");
    return buf;
}
