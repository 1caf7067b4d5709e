/* One node of a model with what the model declares about its inputs and outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/model-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/inspect.h"
#include "status/args-impl.h"

/* Allocation failures set `oom` and are reported once at the end. */
typedef struct finder {
    const Onnx__GraphProto *g;
    int oom;
} finder;

/* A copy of `s`, or NULL with oom noted. */
static char *copy(finder *f, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) f->oom = 1;
    return d;
}

static char *number(finder *f, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    return copy(f, buf);
}

static char **dims_new(finder *f, size_t n)
{
    char **d = calloc(n ? n : 1, sizeof *d);
    if (!d) f->oom = 1;
    return d;
}

/* The declaration of `value`: a graph input or output, or value_info. */
static const Onnx__ValueInfoProto *declared(const Onnx__GraphProto *g, const char *value)
{
    const struct {
        Onnx__ValueInfoProto **v;
        size_t n;
    } lists[] = {{g->input, g->n_input}, {g->output, g->n_output}, {g->value_info, g->n_value_info}};
    for (size_t l = 0; l < sizeof lists / sizeof *lists; l++)
        for (size_t i = 0; i < lists[l].n; i++)
            if (lists[l].v[i]->name && !strcmp(lists[l].v[i]->name, value)) return lists[l].v[i];
    return NULL;
}

static const Onnx__TensorProto *initializer(const Onnx__GraphProto *g, const char *value)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, value)) return g->initializer[i];
    return NULL;
}

static void from_value_info(finder *f, const Onnx__ValueInfoProto *vi, oq_io_info *io)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) return;
    io->elem_type = tp->tensor_type->elem_type;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    if (!sh || !(io->dims = dims_new(f, sh->n_dim))) return;
    io->rank = (int32_t)sh->n_dim;
    for (size_t i = 0; i < sh->n_dim; i++) {
        int64_t size = oq_dim_size(sh->dim[i]);
        io->dims[i] = size >= 0 ? number(f, (long long)size) : copy(f, oq_dim_label(sh->dim[i]));
    }
}

static void from_initializer(finder *f, const Onnx__TensorProto *t, oq_io_info *io)
{
    io->elem_type = t->data_type;
    if (!(io->dims = dims_new(f, t->n_dims))) return;
    io->rank = (int32_t)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) io->dims[i] = number(f, (long long)t->dims[i]);
}

static void value_io(finder *f, const char *value, oq_io_info *io)
{
    io->name = copy(f, value);
    io->rank = -1;
    if (!value || !*value) return;
    const Onnx__ValueInfoProto *vi = declared(f->g, value);
    const Onnx__TensorProto *t = vi ? NULL : initializer(f->g, value);
    if (vi) from_value_info(f, vi, io);
    else if (t) from_initializer(f, t, io);
}

static oq_io_info *values_io(finder *f, char **values, size_t n)
{
    oq_io_info *io = calloc(n ? n : 1, sizeof *io);
    if (!io) f->oom = 1;
    for (size_t i = 0; io && i < n; i++) value_io(f, values[i], &io[i]);
    return io;
}

static void fill_node(finder *f, const Onnx__NodeProto *n, size_t index, oq_node_info *out)
{
    out->index = index;
    out->name = copy(f, n->name);
    out->op_type = copy(f, n->op_type);
    out->domain = copy(f, n->domain);
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        const char *name = a->name ? a->name : "";
        if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT &&
            oq_strv_pushf(&out->attrs, &out->n_attrs, "%s=%lld", name, (long long)a->i))
            f->oom = 1;
        if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT &&
            oq_strv_pushf(&out->attrs, &out->n_attrs, "%s=%.9g", name, (double)a->f))
            f->oom = 1;
    }
    out->inputs = values_io(f, n->input, n->n_input);
    if (out->inputs) out->n_inputs = n->n_input;
    out->outputs = values_io(f, n->output, n->n_output);
    if (out->outputs) out->n_outputs = n->n_output;
}

static int wanted(const Onnx__NodeProto *n, const char *name, const char *op_type)
{
    return (!name || !strcmp(n->name ? n->name : "", name)) && (!op_type || (n->op_type && !strcmp(n->op_type, op_type)));
}

/* The nodes of `g` that `name` and `op_type` select, into *nodes (n entries); 0, or 1 when out
 * of memory (the list then freed and empty). */
static int collect(const Onnx__GraphProto *g, const char *name, const char *op_type, oq_node_info **nodes, size_t *n)
{
    finder f = {g, 0};
    for (size_t i = 0; !f.oom && i < g->n_node; i++) {
        if (!wanted(g->node[i], name, op_type)) continue;
        oq_node_info *slot = OQ_PUSH(*nodes, *n);
        if (!slot) f.oom = 1;
        else fill_node(&f, g->node[i], i, slot);
    }
    if (!f.oom) return 0;
    oq_node_infos_free(*nodes, *n);
    *nodes = NULL;
    *n = 0;
    return 1;
}

static oq_status nodes_oom(const char *path, oq_err *err)
{
    return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory while reading its nodes", path);
}

/* The nodes that `name` and `op_type` select of the unpacked model m (freed here), `what`
 * naming it. */
static oq_status find_in(Onnx__ModelProto *m, const char *what, const char *name, const char *op_type,
                         oq_node_info **nodes, size_t *n, oq_err *err)
{
    oq_status st = OQ_OK;
    if (!m->graph) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ONNX model (no graph)", what);
    if (!st && collect(m->graph, name, op_type, nodes, n)) st = nodes_oom(what, err);
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

oq_status oq_model_find_nodes(const char *path, const char *name, const char *op_type, oq_node_info **nodes,
                              size_t *n, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, nodes);
    OQ_NEED(err, n);
    *nodes = NULL;
    *n = 0;
    Onnx__ModelProto *m;
    oq_status st = oq_model_proto_read(path, &m, err);
    return st ? st : find_in(m, path, name, op_type, nodes, n, err);
}

oq_status oq_model_find_nodes_bytes(const void *buf, size_t len, const char *what, const char *name,
                                    const char *op_type, oq_node_info **nodes, size_t *n, oq_err *err)
{
    *nodes = NULL;
    *n = 0;
    Onnx__ModelProto *m;
    oq_status st = oq_model_unpack_checked(buf, len, what, OQ_UNPACK_LEAN, &m, err);
    return st ? st : find_in(m, what, name, op_type, nodes, n, err);
}

/* Both views of the unpacked model m (freed here). */
static oq_status inspect_nodes(Onnx__ModelProto *m, const char *name, const char *op_type, oq_model_info **mi,
                               oq_node_info **nodes, size_t *n, oq_err *err)
{
    oq_status st = oq_model_inspect_proto(m, name, mi, err);
    if (!st && collect(m->graph, NULL, op_type, nodes, n)) st = nodes_oom(name, err);
    onnx__model_proto__free_unpacked(m, NULL);
    if (st) {
        oq_model_info_free(*mi);
        *mi = NULL;
    }
    return st;
}

oq_status oq_model_inspect_nodes(const char *path, const char *op_type, oq_model_info **mi, oq_node_info **nodes,
                                 size_t *n, oq_err *err)
{
    *nodes = NULL;
    *n = 0;
    Onnx__ModelProto *m;
    *mi = NULL;
    oq_status st = oq_model_proto_read(path, &m, err);
    return st ? st : inspect_nodes(m, path, op_type, mi, nodes, n, err);
}

oq_status oq_model_inspect_nodes_bytes(const void *buf, size_t len, const char *name, const char *op_type,
                                       oq_model_info **mi, oq_node_info **nodes, size_t *n, oq_err *err)
{
    *nodes = NULL;
    *n = 0;
    *mi = NULL;
    Onnx__ModelProto *m;
    oq_status st = oq_model_unpack_checked(buf, len, name, OQ_UNPACK_LEAN, &m, err);
    return st ? st : inspect_nodes(m, name, op_type, mi, nodes, n, err);
}

static void io_clear(oq_io_info *io, size_t n)
{
    for (size_t i = 0; io && i < n; i++) {
        free(io[i].name);
        for (int32_t d = 0; io[i].dims && d < io[i].rank; d++) free(io[i].dims[d]);
        free(io[i].dims);
    }
    free(io);
}

void oq_node_infos_free(oq_node_info *nodes, size_t n)
{
    for (size_t i = 0; nodes && i < n; i++) {
        free(nodes[i].name);
        free(nodes[i].op_type);
        free(nodes[i].domain);
        for (size_t k = 0; k < nodes[i].n_attrs; k++) free(nodes[i].attrs[k]);
        free(nodes[i].attrs);
        io_clear(nodes[i].inputs, nodes[i].n_inputs);
        io_clear(nodes[i].outputs, nodes[i].n_outputs);
    }
    free(nodes);
}

int64_t oq_node_info_attr_int(const oq_node_info *node, const char *name, int64_t def)
{
    if (!node || !name) return def;
    size_t len = strlen(name);
    for (size_t i = 0; i < node->n_attrs; i++)
        if (!strncmp(node->attrs[i], name, len) && node->attrs[i][len] == '=')
            return strtoll(node->attrs[i] + len + 1, NULL, 10);
    return def;
}
