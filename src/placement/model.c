/* Placement: tensor types from the model file, for nodes the profile never saw. */
#include "placement/placement-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/model-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

/* The names ORT's profile uses, so both sources read alike. */
static const char *elem_name(int32_t t)
{
    switch (t) {
    case 1: return "float";
    case 2: return "uint8";
    case 3: return "int8";
    case 6: return "int32";
    case 7: return "int64";
    case 9: return "bool";
    case 10: return "MLFloat16";
    case 11: return "double";
    case 16: return "BFloat16";
    default: return "unknown";
    }
}

/* Declared type of value `name`: graph input/output, value_info or initializer.
 * Symbolic dims become -1; unknown values get dtype "unknown" and ndim -1. */
static bool lookup(const Onnx__GraphProto *g, const char *name, oq_placed_tensor *t)
{
    const Onnx__ValueInfoProto *vi = NULL;
    for (size_t i = 0; !vi && i < g->n_input; i++)
        if (g->input[i]->name && !strcmp(g->input[i]->name, name)) vi = g->input[i];
    for (size_t i = 0; !vi && i < g->n_output; i++)
        if (g->output[i]->name && !strcmp(g->output[i]->name, name)) vi = g->output[i];
    for (size_t i = 0; !vi && i < g->n_value_info; i++)
        if (g->value_info[i]->name && !strcmp(g->value_info[i]->name, name)) vi = g->value_info[i];
    const char *dtype = "unknown";
    int32_t ndim = -1;
    const int64_t *dims = NULL;
    const Onnx__TensorShapeProto *shape = NULL;
    if (vi && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type) {
        dtype = elem_name(vi->type->tensor_type->elem_type);
        shape = vi->type->tensor_type->shape;
        if (shape) ndim = (int32_t)shape->n_dim;
    } else {
        for (size_t i = 0; i < g->n_initializer; i++) {
            const Onnx__TensorProto *init = g->initializer[i];
            if (init->name && !strcmp(init->name, name)) {
                dtype = elem_name(init->data_type);
                ndim = (int32_t)init->n_dims;
                dims = init->dims;
                break;
            }
        }
    }
    if (!(t->dtype = strdup(dtype))) return false;
    t->ndim = ndim;
    if (ndim <= 0) return true;
    if (!(t->dims = malloc((size_t)ndim * sizeof *t->dims))) return false;
    for (int32_t d = 0; d < ndim; d++) t->dims[d] = dims ? dims[d] : oq_dim_size(shape->dim[d]);
    return true;
}

static bool fill(const Onnx__GraphProto *g, char **names, size_t n, oq_placed_tensor **out, size_t *count)
{
    size_t used = 0;
    for (size_t i = 0; i < n; i++) used += names[i] && *names[i];
    *count = 0;
    if (!used) return true;
    if (!(*out = calloc(used, sizeof **out))) return false;
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !*names[i]) continue; /* an omitted optional input */
        (*count)++;
        if (!lookup(g, names[i], &(*out)[*count - 1])) return false;
    }
    return true;
}

oq_status oq_placement_add_model_bytes(oq_placement *p, const void *buf, size_t len,
                                      const char *what, oq_err *err)
{
    OQ_NEED(err, p);
    OQ_NEED_N(err, len, buf);
    if (!what) what = "model";
    Onnx__ModelProto *m;
    oq_status bad = oq_model_unpack_checked(buf, len, what, OQ_UNPACK_LEAN, &m, err);
    if (bad) return bad;
    if (!m->graph) {
        onnx__model_proto__free_unpacked(m, NULL);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ONNX model (no graph)", what);
    }
    const Onnx__GraphProto *g = m->graph;
    oq_status st = OQ_OK;
    for (size_t i = 0; st == OQ_OK && i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[i];
        if (!node->name || !*node->name) continue;
        oq_placed_node *n = NULL;
        for (size_t k = 0; k < p->n_nodes && !n; k++)
            if (!strcmp(p->nodes[k].name, node->name)) n = &p->nodes[k];
        if (!n || n->n_inputs || n->n_outputs) continue; /* unknown node, or the profile's types */
        if (!fill(g, node->input, node->n_input, &n->inputs, &n->n_inputs) ||
            !fill(g, node->output, node->n_output, &n->outputs, &n->n_outputs))
            st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", what);
        n->types_from_model = true;
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

oq_status oq_placement_add_model(oq_placement *p, const char *model_path, oq_err *err)
{
    OQ_NEED(err, p);
    OQ_NEED(err, model_path);
    unsigned char *buf;
    size_t len;
    oq_status st = oq_read_file(model_path, &buf, &len, err);
    if (st != OQ_OK) return st;
    st = oq_placement_add_model_bytes(p, buf, len, model_path, err);
    free(buf);
    return st;
}
