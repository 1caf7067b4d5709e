/* The ONNX model builder: protobuf-c structs allocated from one arena. */
#include "ortqual/graph.h"
#include "tensorproto/tensorproto-impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

#ifndef ORTQUAL_VERSION
#define ORTQUAL_VERSION "0"
#endif

/* Open-addressing set of the names in use (values and nodes share one namespace
 * here, which is stricter than ONNX requires and keeps the models readable). */
typedef struct name_set {
    const char **slots;
    size_t cap, n;
} name_set;

/* A growable array of pointers into the arena. */
typedef struct ptr_vec {
    void **v;
    size_t n;
} ptr_vec;

struct oq_graph {
    oq_arena mem; /* every allocation of the builder, freed together */
    name_set names;    /* every name handed out or used: values and nodes */
    name_set produced; /* values that have a producer: input, initializer or node output */
    name_set nodes_named; /* names given to nodes */
    ptr_vec nodes, inits, inputs, outputs, opsets;
    char *graph_name;
    char *doc;
    int64_t ir_version;
    oq_err err; /* sticky: status != OQ_OK after the first failure */
};

static oq_status fail(oq_graph *g, oq_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static oq_status fail(oq_graph *g, oq_status s, const char *fmt, ...)
{
    if (g->err.status) return g->err.status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err.msg, sizeof g->err.msg, fmt, ap);
    va_end(ap);
    g->err.status = s;
    return s;
}

/* Tracks the failure of an arena allocation in the sticky status. */
static void *tracked(oq_graph *g, void *p)
{
    if (!p) fail(g, OQ_ERR_NOMEM, "out of memory building the ONNX graph");
    return p;
}

static void *galloc(oq_graph *g, size_t n) { return tracked(g, oq_arena_alloc(&g->mem, n)); }

static char *gstrdup(oq_graph *g, const char *s) { return tracked(g, oq_arena_strdup(&g->mem, s ? s : "")); }

/* A copy of `n` bytes in the arena (at least one byte allocated: n may be 0). */
static void *gdup(oq_graph *g, const void *src, size_t n)
{
    void *p = galloc(g, n ? n : 1);
    if (p && n) memcpy(p, src, n);
    return p;
}

static int vec_push(oq_graph *g, ptr_vec *v, void *p)
{
    if (!p) return -1;
    void **slot = tracked(g, OQ_PUSH(v->v, v->n));
    if (!slot) return -1;
    *slot = p;
    return 0;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int names_has(const name_set *ns, const char *s)
{
    if (!ns->cap) return 0;
    for (size_t i = hash_str(s) & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1)) {
        if (!ns->slots[i]) return 0;
        if (!strcmp(ns->slots[i], s)) return 1;
    }
}

static int names_put_raw(name_set *ns, const char *s)
{
    size_t i = hash_str(s) & (ns->cap - 1);
    while (ns->slots[i]) i = (i + 1) & (ns->cap - 1);
    ns->slots[i] = s;
    ns->n++;
    return 0;
}

/* `s` must be builder-owned (it is stored, not copied). */
static int names_add(oq_graph *g, name_set *ns, const char *s)
{
    if ((ns->n + 1) * 2 > ns->cap) {
        name_set bigger = {calloc(ns->cap ? ns->cap * 2 : 512, sizeof(char *)),
                           ns->cap ? ns->cap * 2 : 512, 0};
        if (!bigger.slots) {
            fail(g, OQ_ERR_NOMEM, "out of memory building the ONNX graph");
            return -1;
        }
        for (size_t i = 0; i < ns->cap; i++)
            if (ns->slots[i]) names_put_raw(&bigger, ns->slots[i]);
        free(ns->slots);
        *ns = bigger;
    }
    return names_put_raw(ns, s);
}

/* A node name: unique among nodes; a name reserved by oq_graph_fresh_name is fine. */
static const char *claim_node_name(oq_graph *g, const char *name)
{
    if (g->err.status) return NULL;
    if (!name || !*name) {
        fail(g, OQ_ERR_INVALID_ARG, "empty node name");
        return NULL;
    }
    if (names_has(&g->nodes_named, name)) {
        fail(g, OQ_ERR_INVALID_ARG, "node name '%s' is already used in the graph", name);
        return NULL;
    }
    char *s = gstrdup(g, name);
    if (!s) return NULL;
    if (!names_has(&g->names, name) && names_add(g, &g->names, s)) return NULL;
    return names_add(g, &g->nodes_named, s) ? NULL : s;
}

/* A value gets its producer: a duplicate producer is an error; a name reserved
 * by oq_graph_fresh_name (or unused so far) is fine. Returns a builder-owned copy. */
static const char *define_value(oq_graph *g, const char *name, const char *what)
{
    if (g->err.status) return NULL;
    if (!name || !*name) {
        fail(g, OQ_ERR_INVALID_ARG, "%s without a name", what);
        return NULL;
    }
    if (names_has(&g->produced, name)) {
        fail(g, OQ_ERR_INVALID_ARG, "%s '%s': a value of that name already exists", what, name);
        return NULL;
    }
    char *s = gstrdup(g, name);
    if (!s) return NULL;
    if (!names_has(&g->names, name) && names_add(g, &g->names, s)) return NULL;
    if (names_add(g, &g->produced, s)) return NULL;
    return s;
}

const char *oq_graph_fresh_name(oq_graph *g, const char *prefix)
{
    if (!g) return NULL;
    if (g->err.status) return NULL;
    if (!prefix || !*prefix) prefix = "v";
    size_t n = strlen(prefix) + 24;
    char *buf = galloc(g, n);
    if (!buf) return NULL;
    snprintf(buf, n, "%s", prefix);
    for (unsigned long k = 1; names_has(&g->names, buf); k++) snprintf(buf, n, "%s_%lu", prefix, k);
    return names_add(g, &g->names, buf) ? NULL : buf;
}

int64_t oq_graph_ir_version_for_opset(int64_t opset)
{
    if (opset <= 20) return 9;
    if (opset <= 22) return 10;
    if (opset == 23) return 11;
    return 12;
}

oq_status oq_graph_create(const oq_opset *opsets, size_t n_opsets, const char *graph_name,
                          oq_graph **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = NULL;
    OQ_NEED_N(err, n_opsets, opsets);
    int64_t def = -1;
    for (size_t i = 0; i < n_opsets; i++) {
        if (opsets[i].version <= 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opset import %zu: version %lld is not positive",
                              i, (long long)opsets[i].version);
        if (!opsets[i].domain || !*opsets[i].domain || !strcmp(opsets[i].domain, "ai.onnx")) {
            if (def >= 0)
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "the default opset is imported twice");
            def = opsets[i].version;
        }
    }
    if (def < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "no opset import for the default (ai.onnx) domain");
    oq_graph *g = calloc(1, sizeof *g);
    if (!g) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    g->ir_version = oq_graph_ir_version_for_opset(def);
    g->graph_name = gstrdup(g, graph_name ? graph_name : "ortqual");
    for (size_t i = 0; i < n_opsets && !g->err.status; i++) {
        Onnx__OperatorSetIdProto *op = galloc(g, sizeof *op);
        if (!op) break;
        onnx__operator_set_id_proto__init(op);
        op->domain = gstrdup(g, opsets[i].domain);
        op->has_version = 1;
        op->version = opsets[i].version;
        vec_push(g, &g->opsets, op);
    }
    if (g->err.status) {
        oq_status s = oq_err_set(err, g->err.status, "%s", g->err.msg);
        oq_graph_free(g);
        return s;
    }
    *out = g;
    return OQ_OK;
}

void oq_graph_free(oq_graph *g)
{
    if (!g) return;
    oq_arena_clear(&g->mem);
    free(g->names.slots);
    free(g->produced.slots);
    free(g->nodes_named.slots);
    free(g->nodes.v);
    free(g->inits.v);
    free(g->inputs.v);
    free(g->outputs.v);
    free(g->opsets.v);
    free(g);
}

oq_status oq_graph_status(const oq_graph *g, oq_err *err)
{
    OQ_NEED(err, g);
    if (g->err.status) return oq_err_set(err, g->err.status, "%s", g->err.msg);
    return OQ_OK;
}

oq_status oq_graph_set_doc(oq_graph *g, const char *doc)
{
    if (!g) return OQ_ERR_INVALID_ARG;
    if (g->err.status) return g->err.status;
    g->doc = gstrdup(g, doc);
    return g->err.status;
}

static Onnx__ValueInfoProto *value_info(oq_graph *g, const char *name, oq_dtype dtype,
                                        int32_t ndim, const oq_dim *dims)
{
    if (ndim < -1 || ndim > OQ_MAX_DIMS || (ndim > 0 && !dims)) {
        fail(g, OQ_ERR_INVALID_ARG, "value '%s': rank %d is not supported", name, (int)ndim);
        return NULL;
    }
    if (!oq_dtype_size(dtype)) {
        fail(g, OQ_ERR_INVALID_ARG, "value '%s': unsupported dtype %d", name, (int)dtype);
        return NULL;
    }
    Onnx__ValueInfoProto *vi = galloc(g, sizeof *vi);
    Onnx__TypeProto *tp = galloc(g, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = galloc(g, sizeof *tt);
    Onnx__TensorShapeProto *sh = galloc(g, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dv = galloc(g, sizeof *dv * (size_t)(ndim > 0 ? ndim : 1));
    if (!vi || !tp || !tt || !sh || !dv) return NULL;
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    for (int32_t i = 0; i < ndim; i++) {
        Onnx__TensorShapeProto__Dimension *d = galloc(g, sizeof *d);
        if (!d) return NULL;
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i].param) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = gstrdup(g, dims[i].param);
        } else {
            if (dims[i].value < 0) {
                fail(g, OQ_ERR_INVALID_ARG, "value '%s': dimension %d is negative", name, (int)i);
                return NULL;
            }
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i].value;
        }
        if (dims[i].denotation && !(d->denotation = gstrdup(g, dims[i].denotation))) return NULL;
        dv[i] = d;
    }
    sh->n_dim = ndim > 0 ? (size_t)ndim : 0;
    sh->dim = dv;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)dtype;
    tt->shape = ndim < 0 ? NULL : sh; /* no shape: any rank, as older exporters declare */
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    vi->name = (char *)name;
    return vi;
}

oq_status oq_graph_add_input(oq_graph *g, const char *name, oq_dtype dtype, int32_t ndim,
                             const oq_dim *dims)
{
    if (!g) return OQ_ERR_INVALID_ARG;
    const char *n = define_value(g, name, "input");
    if (!n) return g->err.status;
    vec_push(g, &g->inputs, value_info(g, n, dtype, ndim, dims));
    return g->err.status;
}

oq_status oq_graph_add_output(oq_graph *g, const char *value, const char *name, oq_dtype dtype,
                              int32_t ndim, const oq_dim *dims)
{
    if (!g) return OQ_ERR_INVALID_ARG;
    if (g->err.status) return g->err.status;
    if (!value || !name) return fail(g, OQ_ERR_INVALID_ARG, "graph output without a name");
    const char *n = name;
    if (strcmp(value, name)) {
        if (oq_graph_add_node(g, "Identity", NULL, NULL, 1, &value, 1, &name, 0, NULL))
            return g->err.status;
        n = gstrdup(g, name);
    } else if (!names_has(&g->produced, name)) {
        return fail(g, OQ_ERR_INVALID_ARG, "graph output '%s' is not produced by any node", name);
    }
    if (!n) return g->err.status;
    vec_push(g, &g->outputs, value_info(g, n, dtype, ndim, dims));
    return g->err.status;
}

/* The proto of an initializer, all of it in the builder's arena: tensorproto.h's
 * view (raw_data, bools normalized), copied. */
static Onnx__TensorProto *tensor_proto(oq_graph *g, const oq_tensor *t, const char *name)
{
    Onnx__TensorProto *tp = galloc(g, sizeof *tp);
    int64_t *dims = galloc(g, sizeof *dims * (size_t)(t->ndim > 0 ? t->ndim : 1));
    if (!tp || !dims) return NULL;
    void *owned = NULL;
    oq_err e = {0};
    if (oq_tensorproto_view(t, tp, &owned, &e)) {
        fail(g, e.status, "initializer '%s': %s", name, e.msg);
        return NULL;
    }
    unsigned char *raw = gdup(g, tp->raw_data.data, tp->raw_data.len);
    free(owned);
    if (!raw) return NULL;
    memcpy(dims, t->shape, sizeof *dims * (size_t)t->ndim);
    tp->dims = dims;
    tp->raw_data.data = raw;
    tp->name = (char *)name;
    return tp;
}

const char *oq_graph_add_initializer(oq_graph *g, const oq_tensor *t, const char *name)
{
    if (!g) return NULL;
    if (g->err.status) return NULL;
    if (!t) {
        fail(g, OQ_ERR_INVALID_ARG, "initializer '%s' has no tensor", name ? name : "");
        return NULL;
    }
    const char *n = define_value(g, name ? name : t->name, "initializer");
    if (!n) return NULL;
    Onnx__TensorProto *tp = tensor_proto(g, t, n);
    if (vec_push(g, &g->inits, tp)) return NULL;
    return n;
}

static const char *add_const(oq_graph *g, const char *hint, oq_dtype dtype, int32_t ndim,
                             const int64_t *shape, const void *data)
{
    if (g->err.status) return NULL;
    oq_tensor *t = NULL;
    if (oq_tensor_wrap(&t, dtype, ndim, shape, (void *)data, NULL, NULL)) {
        fail(g, OQ_ERR_NOMEM, "out of memory building the ONNX graph");
        return NULL;
    }
    const char *name = oq_graph_fresh_name(g, hint);
    const char *r = name ? oq_graph_add_initializer(g, t, name) : NULL;
    oq_tensor_free(t);
    return r;
}

const char *oq_graph_const_i64(oq_graph *g, const char *hint, size_t n, const int64_t *v)
{
    if (!g) return NULL;
    int64_t shape[1] = {(int64_t)n};
    if (g->err.status) return NULL;
    return add_const(g, hint, OQ_DTYPE_INT64, 1, shape, v);
}

const char *oq_graph_const_scalar(oq_graph *g, const char *hint, oq_dtype dtype, double v)
{
    if (!g) return NULL;
    if (g->err.status) return NULL;
    unsigned char buf[8];
    switch (dtype) {
    case OQ_DTYPE_FLOAT32: {
        float f = (float)v;
        memcpy(buf, &f, 4);
        break;
    }
    case OQ_DTYPE_FLOAT64:
        memcpy(buf, &v, 8);
        break;
    case OQ_DTYPE_FLOAT16: {
        uint16_t h = oq_f32_to_f16_bits((float)v);
        memcpy(buf, &h, 2);
        break;
    }
    case OQ_DTYPE_BFLOAT16: {
        uint16_t h = oq_f32_to_bf16_bits((float)v);
        memcpy(buf, &h, 2);
        break;
    }
    default:
        fail(g, OQ_ERR_INVALID_ARG, "constant '%s': dtype %s is not a float type", hint,
             oq_dtype_name(dtype));
        return NULL;
    }
    return add_const(g, hint, dtype, 0, NULL, buf);
}

const char *oq_graph_const_f32(oq_graph *g, const char *hint, float v)
{
    return oq_graph_const_scalar(g, hint, OQ_DTYPE_FLOAT32, v);
}

static Onnx__AttributeProto *attribute(oq_graph *g, const oq_attr *a)
{
    Onnx__AttributeProto *ap = galloc(g, sizeof *ap);
    if (!ap) return NULL;
    onnx__attribute_proto__init(ap);
    ap->name = gstrdup(g, a->name);
    ap->has_type = 1;
    switch (a->type) {
    case OQ_ATTR_INT:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        ap->has_i = 1;
        ap->i = a->i;
        break;
    case OQ_ATTR_FLOAT:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        ap->has_f = 1;
        ap->f = a->f;
        break;
    case OQ_ATTR_INTS:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        if (!(ap->ints = gdup(g, a->ints, sizeof(int64_t) * a->n))) return NULL;
        ap->n_ints = a->n;
        break;
    case OQ_ATTR_FLOATS:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
        if (!(ap->floats = gdup(g, a->floats, sizeof(float) * a->n))) return NULL;
        ap->n_floats = a->n;
        break;
    case OQ_ATTR_STRING:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        ap->has_s = 1;
        ap->s.data = (uint8_t *)gstrdup(g, a->s);
        ap->s.len = a->s ? strlen(a->s) : 0;
        break;
    case OQ_ATTR_TENSOR:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
        if (!a->t) {
            fail(g, OQ_ERR_INVALID_ARG, "attribute '%s' has no tensor", a->name);
            return NULL;
        }
        ap->t = tensor_proto(g, a->t, gstrdup(g, a->name));
        break;
    default:
        fail(g, OQ_ERR_INVALID_ARG, "attribute '%s': unknown type %d", a->name, (int)a->type);
        return NULL;
    }
    return g->err.status ? NULL : ap;
}

oq_status oq_graph_add_node(oq_graph *g, const char *op_type, const char *domain,
                            const char *name, size_t n_in, const char *const *inputs,
                            size_t n_out, const char *const *outputs, size_t n_attr,
                            const oq_attr *attrs)
{
    if (!g) return OQ_ERR_INVALID_ARG;
    if (g->err.status) return g->err.status;
    if (!op_type || !*op_type) return fail(g, OQ_ERR_INVALID_ARG, "node without an op_type");
    if ((n_in && !inputs) || (n_out && !outputs) || (n_attr && !attrs))
        return fail(g, OQ_ERR_INVALID_ARG, "%s node: %s is NULL", op_type,
                    n_in && !inputs ? "inputs" : n_out && !outputs ? "outputs" : "attrs");
    Onnx__NodeProto *np = galloc(g, sizeof *np);
    char **in = galloc(g, sizeof *in * (n_in ? n_in : 1));
    char **out = galloc(g, sizeof *out * (n_out ? n_out : 1));
    Onnx__AttributeProto **at = galloc(g, sizeof *at * (n_attr ? n_attr : 1));
    if (!np || !in || !out || !at) return g->err.status;
    onnx__node_proto__init(np);
    np->op_type = gstrdup(g, op_type);
    np->domain = gstrdup(g, domain);
    np->name = (char *)claim_node_name(g, name ? name : oq_graph_fresh_name(g, op_type));
    for (size_t i = 0; i < n_in; i++) {
        if (!inputs[i]) return fail(g, OQ_ERR_INVALID_ARG, "%s node '%s': input %zu is NULL",
                                    op_type, np->name ? np->name : "", i);
        in[i] = gstrdup(g, inputs[i]);
    }
    for (size_t i = 0; i < n_out; i++) {
        out[i] = (char *)define_value(g, outputs[i], "node output");
    }
    for (size_t i = 0; i < n_attr; i++) at[i] = attribute(g, &attrs[i]);
    if (g->err.status) return g->err.status;
    np->n_input = n_in;
    np->input = in;
    np->n_output = n_out;
    np->output = out;
    np->n_attribute = n_attr;
    np->attribute = at;
    vec_push(g, &g->nodes, np);
    return g->err.status;
}

const char *oq_graph_op(oq_graph *g, const char *op_type, size_t n_in, const char *const *inputs,
                        size_t n_attr, const oq_attr *attrs)
{
    if (!g) return NULL;
    if (g->err.status) return NULL;
    char hint[64];
    snprintf(hint, sizeof hint, "%s_out", op_type);
    const char *out = oq_graph_fresh_name(g, hint);
    if (!out) return NULL;
    if (oq_graph_add_node(g, op_type, NULL, NULL, n_in, inputs, 1, &out, n_attr, attrs))
        return NULL;
    return out;
}

static void assemble(const oq_graph *g, Onnx__ModelProto *m, Onnx__GraphProto *gp)
{
    onnx__model_proto__init(m);
    onnx__graph_proto__init(gp);
    gp->name = g->graph_name;
    gp->n_node = g->nodes.n;
    gp->node = (Onnx__NodeProto **)g->nodes.v;
    gp->n_initializer = g->inits.n;
    gp->initializer = (Onnx__TensorProto **)g->inits.v;
    gp->n_input = g->inputs.n;
    gp->input = (Onnx__ValueInfoProto **)g->inputs.v;
    gp->n_output = g->outputs.n;
    gp->output = (Onnx__ValueInfoProto **)g->outputs.v;
    m->has_ir_version = 1;
    m->ir_version = g->ir_version;
    m->producer_name = "ortqual";
    m->producer_version = ORTQUAL_VERSION;
    m->doc_string = g->doc;
    m->n_opset_import = g->opsets.n;
    m->opset_import = (Onnx__OperatorSetIdProto **)g->opsets.v;
    m->graph = gp;
}

oq_status oq_graph_serialize(const oq_graph *g, uint8_t **buf, size_t *len, oq_err *err)
{
    OQ_NEED(err, g);
    OQ_NEED(err, buf);
    OQ_NEED(err, len);
    *buf = NULL;
    *len = 0;
    if (oq_graph_status(g, err)) return g->err.status;
    if (!g->outputs.n) return oq_err_set(err, OQ_ERR_INVALID_ARG, "the graph has no outputs");
    Onnx__ModelProto m;
    Onnx__GraphProto gp;
    assemble(g, &m, &gp);
    size_t n = onnx__model_proto__get_packed_size(&m);
    uint8_t *b = malloc(n ? n : 1);
    if (!b) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory serializing %zu bytes", n);
    size_t w = onnx__model_proto__pack(&m, b);
    OQ_ASSERT(w == n);
    *buf = b;
    *len = n;
    return OQ_OK;
}

oq_status oq_graph_write(const oq_graph *g, const char *path, int overwrite, oq_err *err)
{
    OQ_NEED(err, g); /* here, not as serialize's message behind the path */
    OQ_NEED(err, path);
    uint8_t *buf;
    size_t len;
    oq_status s = oq_graph_serialize(g, &buf, &len, err);
    if (s) return oq_err_prefix(err, "%s: ", path);
    s = oq_write_file_atomic(path, buf, len, overwrite, err);
    free(buf);
    return s;
}

size_t oq_graph_node_count(const oq_graph *g)
{
    return g ? g->nodes.n : 0;
}

size_t oq_graph_initializer_count(const oq_graph *g)
{
    return g ? g->inits.n : 0;
}
