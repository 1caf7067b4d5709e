/* A one-node ONNX model, built with the protobuf-c code generated from onnx.proto.
 * Every message lives on the stack; only the packed bytes are allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "runtime/tinymodel-impl.h"

#define TM_MAX_IN 2

typedef struct value_info {
    Onnx__ValueInfoProto vi;
    Onnx__TypeProto type;
    Onnx__TypeProto__Tensor tensor;
    Onnx__TensorShapeProto shape;
    Onnx__TensorShapeProto__Dimension dim[OQ_MAX_DIMS];
    Onnx__TensorShapeProto__Dimension *dimp[OQ_MAX_DIMS];
} value_info;

static char sym_n[] = "N";

/* rank < 0: no shape at all (left to inference). */
static void value_info_init(value_info *v, char *name, oq_dtype dtype, int rank, const int64_t *dims)
{
    onnx__value_info_proto__init(&v->vi);
    onnx__type_proto__init(&v->type);
    onnx__type_proto__tensor__init(&v->tensor);
    onnx__tensor_shape_proto__init(&v->shape);
    v->vi.name = name;
    v->vi.type = &v->type;
    v->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    v->type.tensor_type = &v->tensor;
    v->tensor.has_elem_type = 1;
    v->tensor.elem_type = (int32_t)dtype;
    if (rank < 0) return;
    for (int d = 0; d < rank; d++) {
        onnx__tensor_shape_proto__dimension__init(&v->dim[d]);
        if (dims[d] < 0) {
            v->dim[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            v->dim[d].dim_param = sym_n;
        } else {
            v->dim[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            v->dim[d].dim_value = dims[d];
        }
        v->dimp[d] = &v->dim[d];
    }
    v->shape.n_dim = (size_t)rank;
    v->shape.dim = v->dimp;
    v->tensor.shape = &v->shape;
}

static oq_status pack(const Onnx__ModelProto *m, void **bytes, size_t *len, oq_err *err)
{
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    *len = onnx__model_proto__pack(m, buf);
    *bytes = buf;
    return OQ_OK;
}

oq_status oq_tinymodel_build(const char *op, oq_dtype dtype, oq_dtype out_dtype, int n_inputs,
                             const int *ndims, const int64_t *const *shapes, void **bytes,
                             size_t *len, oq_err *err)
{
    *bytes = NULL;
    *len = 0;
    if (!op || !*op || n_inputs < 1 || n_inputs > TM_MAX_IN)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tiny model: need an op and 1 or 2 inputs");
    for (int i = 0; i < n_inputs; i++)
        if (ndims[i] < 0 || ndims[i] > OQ_MAX_DIMS)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "tiny model: input %d rank %d outside 0..%d",
                              i, ndims[i], OQ_MAX_DIMS);
    static char name_a[] = "a", name_b[] = "b", name_y[] = "y", graph_name[] = "tiny",
                producer[] = "ortqual", domain[] = "";
    char *in_names[TM_MAX_IN] = {name_a, name_b};
    char *out_names[1] = {name_y};
    char op_type[64];
    snprintf(op_type, sizeof op_type, "%s", op);

    value_info in[TM_MAX_IN], out;
    Onnx__ValueInfoProto *in_p[TM_MAX_IN], *out_p[1] = {&out.vi};
    for (int i = 0; i < n_inputs; i++) {
        value_info_init(&in[i], in_names[i], dtype, ndims[i], shapes[i]);
        in_p[i] = &in[i].vi;
    }
    value_info_init(&out, name_y, out_dtype, -1, NULL);

    Onnx__NodeProto node;
    onnx__node_proto__init(&node);
    node.op_type = op_type;
    node.n_input = (size_t)n_inputs;
    node.input = in_names;
    node.n_output = 1;
    node.output = out_names;
    Onnx__NodeProto *node_p[1] = {&node};

    Onnx__GraphProto graph;
    onnx__graph_proto__init(&graph);
    graph.name = graph_name;
    graph.n_node = 1;
    graph.node = node_p;
    graph.n_input = (size_t)n_inputs;
    graph.input = in_p;
    graph.n_output = 1;
    graph.output = out_p;

    Onnx__OperatorSetIdProto opset;
    onnx__operator_set_id_proto__init(&opset);
    opset.domain = domain;
    opset.has_version = 1;
    opset.version = 17;
    Onnx__OperatorSetIdProto *opset_p[1] = {&opset};

    Onnx__ModelProto model;
    onnx__model_proto__init(&model);
    model.has_ir_version = 1;
    model.ir_version = 8;
    model.producer_name = producer;
    model.n_opset_import = 1;
    model.opset_import = opset_p;
    model.graph = &graph;
    return pack(&model, bytes, len, err);
}

oq_status oq_tinymodel_add_f32(void **bytes, size_t *len, oq_err *err)
{
    static const int64_t shape[2] = {2, 3};
    const int64_t *shapes[2] = {shape, shape};
    const int ndims[2] = {2, 2};
    return oq_tinymodel_build("Add", OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT32, 2, ndims, shapes, bytes,
                              len, err);
}
