/* A read-only index over one ONNX graph, for the pattern matchers of inspect
 * and convert: who produces a value, who consumes it, its declared type and
 * shape, and the constants behind it.
 *
 * The view borrows the GraphProto (which may be a transient one whose node
 * array a caller assembled); it must not change while the view lives.
 * Lookups are hash-based, so a matcher may call them freely.
 */
#ifndef ORTQUAL_INSPECT_GVIEW_IMPL_H
#define ORTQUAL_INSPECT_GVIEW_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "ortqual/status.h"

typedef struct oq_gview oq_gview;

/* Index `g`. `opset` is the model's default-domain opset (Softmax's default axis
 * and a few other defaults depend on it). Errors: OQ_ERR_NOMEM. */
oq_status oq_gview_create(const Onnx__GraphProto *g, int64_t opset, oq_gview **out, oq_err *err);
void oq_gview_free(oq_gview *v);

const Onnx__GraphProto *oq_gview_graph(const oq_gview *v);
int64_t oq_gview_opset(const oq_gview *v);

/* The node producing `value` (its index in *idx when idx is non-NULL), or NULL
 * for a graph input, an initializer, an omitted optional ("") or an unknown name. */
const Onnx__NodeProto *oq_gview_producer(const oq_gview *v, const char *value, size_t *idx);
/* How many node inputs read `value`; the node index of the i-th one. */
size_t oq_gview_consumer_count(const oq_gview *v, const char *value);
size_t oq_gview_consumer(const oq_gview *v, const char *value, size_t i);
/* 1 when `value` is a graph output. */
int oq_gview_is_output(const oq_gview *v, const char *value);
/* The initializer called `value`, or NULL. */
const Onnx__TensorProto *oq_gview_initializer(const oq_gview *v, const char *value);
/* The declared type of `value`: graph input/output or value_info, else NULL. */
const Onnx__ValueInfoProto *oq_gview_value_info(const oq_gview *v, const char *value);

/* Element type of `value` (onnx data type) from its declaration, an
 * initializer or a Constant node; 0 when unknown. */
int32_t oq_gview_elem_type(const oq_gview *v, const char *value);
/* Element type of `value` as computed: declared, else derived through its producers (a Cast's
 * `to`; the input an op keeps the type of: MatMul's, Softmax's, elementwise arithmetic's,
 * Where's values, Transpose's...); 0 when unknown. */
int32_t oq_gview_elem_type_derived(const oq_gview *v, const char *value);
/* Rank of `value`: declared, or derived from its producer (Transpose perm,
 * Reshape to a constant-length shape, Unsqueeze, elementwise ops); -1 when unknown. */
int oq_gview_rank(const oq_gview *v, const char *value);

/* A constant whose elements are all equal (a scalar initializer or Constant,
 * Expand or ConstantOfShape of one, a Cast of one): 1 and its value, else 0. */
int oq_gview_const_scalar(const oq_gview *v, const char *value, double *out);
/* The graph input with a default (an initializer of its name: keep_initializers_as_inputs)
 * that `value` is read from as oq_gview_const_scalar reads it (itself, or through Expand,
 * Identity, Cast), else NULL. Such a "constant" is only the default of an input a caller may
 * feed: a rewrite that folds its value would ignore the one fed. */
const char *oq_gview_default_input(const oq_gview *v, const char *value);
/* The tensor behind a constant `value`: its initializer or its Constant node's `value`, else
 * NULL (its bytes may be absent: a large initializer of a lean read, external data). */
const Onnx__TensorProto *oq_gview_const_proto(const oq_gview *v, const char *value);
/* A TensorProto's element count ((size_t)-1 for a negative or overflowing dim), and its element i
 * as a double: 1, or 0 when its type or layout is not one read here (external data, bfloat16...). */
size_t oq_gview_proto_numel(const Onnx__TensorProto *t);
int oq_gview_proto_elem(const Onnx__TensorProto *t, size_t i, double *out);
/* A constant int64/int32 tensor of at most `cap` elements (initializer or
 * Constant node): 1 with the values and count, else 0. */
int oq_gview_const_ints(const oq_gview *v, const char *value, int64_t *out, size_t cap, size_t *n);

/* Attributes of a node: the attribute called `name` or NULL; an int attribute
 * or `def`; a float attribute or `def`; an ints attribute (count in *n, NULL if absent). */
const Onnx__AttributeProto *oq_node_attr(const Onnx__NodeProto *n, const char *name);
int64_t oq_node_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def);
double oq_node_attr_float(const Onnx__NodeProto *n, const char *name, double def);
const int64_t *oq_node_attr_ints(const Onnx__NodeProto *n, const char *name, size_t *n_out);
/* 1 when `n` is the ai.onnx operator `op`. */
int oq_node_is(const Onnx__NodeProto *n, const char *op);

#endif
