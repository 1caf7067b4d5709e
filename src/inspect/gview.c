/* The graph index behind the attention matchers. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/gview-impl.h"
#include "inspect/model-impl.h"
#include "ortqual/tensor.h"

/* Everything known about one value name. */
typedef struct value {
    const char *name;
    long producer;                    /* node index, -1 when none */
    size_t n_cons;
    size_t *cons;                     /* consuming node indices (one per input slot) */
    const Onnx__TensorProto *init;
    const Onnx__ValueInfoProto *vi;
    int is_output, is_input;
} value;

struct oq_gview {
    const Onnx__GraphProto *g;
    int64_t opset;
    value *vals;
    size_t n_vals, cap_vals;
    long *slots;                      /* open addressing: index into vals, -1 empty */
    size_t n_slots;
    int oom;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const value *find(const oq_gview *v, const char *name)
{
    if (!name || !*name) return NULL;
    for (size_t i = hash_str(name) & (v->n_slots - 1);; i = (i + 1) & (v->n_slots - 1)) {
        if (v->slots[i] < 0) return NULL;
        if (!strcmp(v->vals[v->slots[i]].name, name)) return &v->vals[v->slots[i]];
    }
}

/* The entry for `name`, created when absent; NULL for "" and on allocation failure. */
static value *get(oq_gview *v, const char *name)
{
    if (!name || !*name || v->oom) return NULL;
    size_t i = hash_str(name) & (v->n_slots - 1);
    for (; v->slots[i] >= 0; i = (i + 1) & (v->n_slots - 1))
        if (!strcmp(v->vals[v->slots[i]].name, name)) return &v->vals[v->slots[i]];
    /* the table was sized for every name of the graph, so it never fills up */
    v->slots[i] = (long)v->n_vals;
    value *x = &v->vals[v->n_vals++];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->producer = -1;
    return x;
}

static void add_consumer(oq_gview *v, value *x, size_t node)
{
    size_t *slot = OQ_PUSH(x->cons, x->n_cons);
    if (slot) *slot = node;
    else v->oom = 1;
}

oq_status oq_gview_create(const Onnx__GraphProto *g, int64_t opset, oq_gview **out, oq_err *err)
{
    *out = NULL;
    size_t names = g->n_input + g->n_output + g->n_initializer + g->n_value_info;
    for (size_t i = 0; i < g->n_node; i++) names += g->node[i]->n_input + g->node[i]->n_output;
    oq_gview *v = calloc(1, sizeof *v);
    size_t slots = 16;
    while (slots < names * 2 + 2) slots *= 2;
    if (v) {
        v->g = g;
        v->opset = opset;
        v->vals = calloc(names + 1, sizeof *v->vals);
        v->slots = malloc(slots * sizeof *v->slots);
        v->n_slots = slots;
    }
    if (!v || !v->vals || !v->slots) {
        oq_gview_free(v);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory indexing the graph");
    }
    for (size_t i = 0; i < slots; i++) v->slots[i] = -1;
    for (size_t i = 0; i < g->n_initializer; i++) {
        value *x = get(v, g->initializer[i]->name);
        if (x) x->init = g->initializer[i];
    }
    for (size_t i = 0; i < g->n_value_info; i++) {
        value *x = get(v, g->value_info[i]->name);
        if (x) x->vi = g->value_info[i];
    }
    for (size_t i = 0; i < g->n_input; i++) { /* inputs win over value_info */
        value *x = get(v, g->input[i]->name);
        if (x) x->vi = g->input[i], x->is_input = 1;
    }
    for (size_t i = 0; i < g->n_output; i++) {
        value *x = get(v, g->output[i]->name);
        if (x) {
            x->vi = g->output[i];
            x->is_output = 1;
        }
    }
    for (size_t n = 0; n < g->n_node; n++) {
        const Onnx__NodeProto *nd = g->node[n];
        for (size_t k = 0; k < nd->n_output; k++) {
            value *x = get(v, nd->output[k]);
            if (x) x->producer = (long)n;
        }
        for (size_t k = 0; k < nd->n_input; k++) {
            value *x = get(v, nd->input[k]);
            if (x) add_consumer(v, x, n);
        }
    }
    if (v->oom) {
        oq_gview_free(v);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory indexing the graph");
    }
    *out = v;
    return OQ_OK;
}

void oq_gview_free(oq_gview *v)
{
    if (!v) return;
    for (size_t i = 0; v->vals && i < v->n_vals; i++) free(v->vals[i].cons);
    free(v->vals);
    free(v->slots);
    free(v);
}

const Onnx__GraphProto *oq_gview_graph(const oq_gview *v) { return v->g; }
int64_t oq_gview_opset(const oq_gview *v) { return v->opset; }

const Onnx__NodeProto *oq_gview_producer(const oq_gview *v, const char *value_name, size_t *idx)
{
    const value *x = find(v, value_name);
    if (!x || x->producer < 0) return NULL;
    if (idx) *idx = (size_t)x->producer;
    return v->g->node[x->producer];
}

size_t oq_gview_consumer_count(const oq_gview *v, const char *value_name)
{
    const value *x = find(v, value_name);
    return x ? x->n_cons : 0;
}

size_t oq_gview_consumer(const oq_gview *v, const char *value_name, size_t i)
{
    return find(v, value_name)->cons[i];
}

int oq_gview_is_output(const oq_gview *v, const char *value_name)
{
    const value *x = find(v, value_name);
    return x && x->is_output;
}

const Onnx__TensorProto *oq_gview_initializer(const oq_gview *v, const char *value_name)
{
    const value *x = find(v, value_name);
    return x ? x->init : NULL;
}

const Onnx__ValueInfoProto *oq_gview_value_info(const oq_gview *v, const char *value_name)
{
    const value *x = find(v, value_name);
    return x ? x->vi : NULL;
}

/* ---- attributes ------------------------------------------------------------------- */

int oq_node_is(const Onnx__NodeProto *n, const char *op)
{
    return n && (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx")) && n->op_type &&
           !strcmp(n->op_type, op);
}

const Onnx__AttributeProto *oq_node_attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name)) return n->attribute[i];
    return NULL;
}

int64_t oq_node_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = oq_node_attr(n, name);
    return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? a->i : def;
}

double oq_node_attr_float(const Onnx__NodeProto *n, const char *name, double def)
{
    const Onnx__AttributeProto *a = oq_node_attr(n, name);
    return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ? a->f : def;
}

const int64_t *oq_node_attr_ints(const Onnx__NodeProto *n, const char *name, size_t *n_out)
{
    const Onnx__AttributeProto *a = oq_node_attr(n, name);
    *n_out = 0;
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) return NULL;
    *n_out = a->n_ints;
    return a->ints;
}

/* ---- constants ---------------------------------------------------------------------- */

static size_t proto_numel(const Onnx__TensorProto *t)
{
    size_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || __builtin_mul_overflow(n, (size_t)t->dims[i], &n)) return (size_t)-1;
    }
    return n;
}

/* A float16 or bfloat16 element's bits as a number. */
static double half_to_double(int32_t type, uint16_t h)
{
    if (type == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16) return oq_bf16_bits_to_f32(h);
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Element i of a TensorProto as double; 0 when the type or layout is not one read here. */
static int proto_elem(const Onnx__TensorProto *t, size_t i, double *out)
{
    const uint8_t *raw = t->has_raw_data ? t->raw_data.data : NULL;
    size_t rl = t->has_raw_data ? t->raw_data.len : 0;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) return 0;
    switch (t->data_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: {
        float f;
        if (raw && rl >= (i + 1) * 4) memcpy(&f, raw + i * 4, 4);
        else if (!raw && i < t->n_float_data) f = t->float_data[i];
        else return 0;
        *out = f;
        return 1;
    }
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: {
        double d;
        if (raw && rl >= (i + 1) * 8) memcpy(&d, raw + i * 8, 8);
        else if (!raw && i < t->n_double_data) d = t->double_data[i];
        else return 0;
        *out = d;
        return 1;
    }
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: {
        int64_t x;
        if (raw && rl >= (i + 1) * 8) memcpy(&x, raw + i * 8, 8);
        else if (!raw && i < t->n_int64_data) x = t->int64_data[i];
        else return 0;
        *out = (double)x;
        return 1;
    }
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: {
        int32_t x;
        if (raw && rl >= (i + 1) * 4) memcpy(&x, raw + i * 4, 4);
        else if (!raw && i < t->n_int32_data) x = t->int32_data[i];
        else return 0;
        *out = x;
        return 1;
    }
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
        if (raw && rl >= i + 1) *out = raw[i] != 0;
        else if (!raw && i < t->n_int32_data) *out = t->int32_data[i] != 0;
        else return 0;
        return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: { /* both 16 bits, in raw_data or one per int32_data */
        uint16_t h;
        if (raw && rl >= (i + 1) * 2) memcpy(&h, raw + i * 2, 2);
        else if (!raw && i < t->n_int32_data) h = (uint16_t)t->int32_data[i];
        else return 0;
        *out = half_to_double(t->data_type, h);
        return 1;
    }
    default:
        return 0;
    }
}

/* The TensorProto of an initializer or of a Constant node's `value`. */
static const Onnx__TensorProto *const_proto(const oq_gview *v, const char *name)
{
    const Onnx__TensorProto *t = oq_gview_initializer(v, name);
    if (t) return t;
    const Onnx__NodeProto *p = oq_gview_producer(v, name, NULL);
    if (!oq_node_is(p, "Constant")) return NULL;
    const Onnx__AttributeProto *a = oq_node_attr(p, "value");
    return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR ? a->t : NULL;
}

static int const_scalar_depth(const oq_gview *v, const char *name, double *out, int depth)
{
    if (depth > 8) return 0;
    const Onnx__TensorProto *t = const_proto(v, name);
    if (t) {
        size_t n = proto_numel(t);
        if (n == 0 || n > 4096 || !proto_elem(t, 0, out)) return 0;
        for (size_t i = 1; i < n; i++) {
            double x;
            if (!proto_elem(t, i, &x) || !(x == *out || (isnan(x) && isnan(*out)))) return 0;
        }
        return 1;
    }
    const Onnx__NodeProto *p = oq_gview_producer(v, name, NULL);
    if (oq_node_is(p, "ConstantOfShape")) {
        const Onnx__AttributeProto *a = oq_node_attr(p, "value");
        if (!a) {
            *out = 0; /* the default: float 0 */
            return 1;
        }
        return a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && proto_numel(a->t) == 1 &&
               proto_elem(a->t, 0, out);
    }
    if ((oq_node_is(p, "Expand") || oq_node_is(p, "Identity")) && p->n_input >= 1)
        return const_scalar_depth(v, p->input[0], out, depth + 1);
    if (oq_node_is(p, "Cast") && p->n_input == 1 && const_scalar_depth(v, p->input[0], out, depth + 1)) {
        int64_t to = oq_node_attr_int(p, "to", 0);
        if (to == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) *out = *out != 0;
        else if (to == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || to == ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
            *out = trunc(*out);
        else if (to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && to != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE &&
                 to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 && to != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
            return 0;
        return 1;
    }
    return 0;
}

int oq_gview_const_scalar(const oq_gview *v, const char *value_name, double *out)
{
    return const_scalar_depth(v, value_name, out, 0);
}

const char *oq_gview_default_input(const oq_gview *v, const char *value_name)
{
    for (int depth = 0; depth <= 8; depth++) {
        const value *x = find(v, value_name);
        if (x && x->init && x->is_input) return x->name;
        const Onnx__NodeProto *p = oq_gview_producer(v, value_name, NULL);
        if (!(oq_node_is(p, "Expand") || oq_node_is(p, "Identity") || oq_node_is(p, "Cast")) || p->n_input < 1) return NULL;
        value_name = p->input[0];
    }
    return NULL;
}

const Onnx__TensorProto *oq_gview_const_proto(const oq_gview *v, const char *value_name)
{
    return const_proto(v, value_name);
}

size_t oq_gview_proto_numel(const Onnx__TensorProto *t)
{
    return proto_numel(t);
}

int oq_gview_proto_elem(const Onnx__TensorProto *t, size_t i, double *out)
{
    return proto_elem(t, i, out);
}

int oq_gview_const_ints(const oq_gview *v, const char *value_name, int64_t *out, size_t cap, size_t *n)
{
    const Onnx__TensorProto *t = const_proto(v, value_name);
    if (!t || (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 &&
               t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32))
        return 0;
    size_t k = proto_numel(t);
    if (k > cap) return 0;
    for (size_t i = 0; i < k; i++) {
        double x;
        if (!proto_elem(t, i, &x)) return 0;
        /* int64 values beyond 2^53 (INT64_MAX as "to the end" in Slice) lose nothing that
         * matters here: they are clamped by the ops that read them */
        out[i] = x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
    }
    *n = k;
    return 1;
}

/* ---- types --------------------------------------------------------------------------- */

static const Onnx__TypeProto__Tensor *tensor_type(const Onnx__ValueInfoProto *vi)
{
    if (!vi || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return NULL;
    return vi->type->tensor_type;
}

int32_t oq_gview_elem_type(const oq_gview *v, const char *value_name)
{
    const Onnx__TypeProto__Tensor *tt = tensor_type(oq_gview_value_info(v, value_name));
    if (tt && tt->has_elem_type && tt->elem_type) return tt->elem_type;
    const Onnx__TensorProto *t = const_proto(v, value_name);
    return t ? t->data_type : 0;
}

/* The input whose element type a node's first output has, or NULL: a Cast's is its `to`. */
static const char *type_source(const Onnx__NodeProto *p)
{
    static const char *const keep[] = {"MatMul", "Softmax", "LogSoftmax", "Mul", "Div", "Add", "Sub", "Pow", "Neg",
                                       "Abs", "Exp", "Sqrt", "Reciprocal", "Relu", "Elu", "Gelu", "Erf", "Tanh",
                                       "Sigmoid", "Min", "Max", "Identity", "Transpose", "Reshape", "Squeeze",
                                       "Unsqueeze", "Expand", "Flatten", "Slice", "Concat", "Split", "Gather",
                                       "LayerNormalization", "Dropout", "Attention", NULL};
    if (oq_node_is(p, "Where")) return p->n_input == 3 ? p->input[1] : NULL;
    for (const char *const *op = keep; *op; op++)
        if (oq_node_is(p, *op)) return p->n_input ? p->input[0] : NULL;
    return NULL;
}

int32_t oq_gview_elem_type_derived(const oq_gview *v, const char *value_name)
{
    /* exporters (ortqual's own among them) declare few intermediates: walk back to a declared
     * value, a constant or a Cast, a bounded number of steps */
    for (int depth = 0; value_name && depth < 64; depth++) {
        int32_t t = oq_gview_elem_type(v, value_name);
        if (t) return t;
        const Onnx__NodeProto *p = oq_gview_producer(v, value_name, NULL);
        if (!p) return 0;
        if (oq_node_is(p, "Cast")) return (int32_t)oq_node_attr_int(p, "to", 0);
        value_name = type_source(p);
    }
    return 0;
}

/* `budget` bounds the walk: a graph that shares values can make it exponential. */
static int rank_depth(const oq_gview *v, const char *name, int depth, int *budget)
{
    const Onnx__TypeProto__Tensor *tt = tensor_type(oq_gview_value_info(v, name));
    if (tt && tt->shape) return (int)tt->shape->n_dim;
    const Onnx__TensorProto *t = const_proto(v, name);
    if (t) return (int)t->n_dims;
    const Onnx__NodeProto *p = oq_gview_producer(v, name, NULL);
    if (!p || depth > 16 || --*budget < 0) return -1;
    size_t n;
    if (oq_node_is(p, "Transpose") && oq_node_attr_ints(p, "perm", &n)) return (int)n;
    if (oq_node_is(p, "Reshape") && p->n_input == 2) {
        const Onnx__TypeProto__Tensor *st = tensor_type(oq_gview_value_info(v, p->input[1]));
        int64_t len = st && st->shape && st->shape->n_dim == 1 ? oq_dim_size(st->shape->dim[0]) : -1;
        if (len >= 0 && len <= INT_MAX) return (int)len; /* a larger one is no rank: it read as one cut to int */
        int64_t s[16];
        return oq_gview_const_ints(v, p->input[1], s, 16, &n) ? (int)n : -1;
    }
    if (oq_node_is(p, "Unsqueeze") && p->n_input == 2) {
        int64_t ax[16];
        int r = rank_depth(v, p->input[0], depth + 1, budget);
        return r >= 0 && oq_gview_const_ints(v, p->input[1], ax, 16, &n) ? r + (int)n : -1;
    }
    static const char *const same[] = {"Cast", "Mul", "Div", "Add", "Sub", "Where", "Softmax", "Not",
                                       "IsNaN", "Identity", "Elu", "Relu", "Exp", "Neg", NULL};
    for (const char *const *op = same; *op; op++)
        if (oq_node_is(p, *op)) { /* broadcasting: the largest input rank */
            int r = -1;
            for (size_t i = 0; i < p->n_input; i++) {
                int ri = rank_depth(v, p->input[i], depth + 1, budget);
                if (ri < 0) return -1;
                if (ri > r) r = ri;
            }
            return r;
        }
    if (oq_node_is(p, "MatMul") && p->n_input == 2) {
        int a = rank_depth(v, p->input[0], depth + 1, budget), b = rank_depth(v, p->input[1], depth + 1, budget);
        return a >= 2 && b >= 2 ? (a > b ? a : b) : -1;
    }
    return -1;
}

int oq_gview_rank(const oq_gview *v, const char *value_name)
{
    int budget = 256;
    return rank_depth(v, value_name, 0, &budget);
}
