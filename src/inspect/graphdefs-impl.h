/* A graph's values as ONNX defines them: each one once, computed before it is read. A value
 * with two definitions (an initializer and a Constant node of one name, two nodes) runs as
 * whichever ORT keeps, while a reader of the file sees the other; a cycle has no order to run
 * in. One check for every command that reads a model (inspect, convert, validate).
 */
#ifndef ORTQUAL_INSPECT_GRAPHDEFS_IMPL_H
#define ORTQUAL_INSPECT_GRAPHDEFS_IMPL_H

#include "onnx.pb-c.h"
#include "ortqual/status.h"

/* OQ_OK, or OQ_ERR_FORMAT in one line naming the model `name`: a value a node computes that is
 * also an initializer, a graph input or another node's output ("m.onnx: value 'c' is defined
 * twice: initializer 'c' and node 'c0' (Constant) ..."), or a cycle, named by its nodes
 * ("m.onnx: the graph has a cycle: node 'add_a' (Add) reads 'b' of node 'relu_b' (Relu), which
 * reads 'a' of node 'add_a' ..."). Two initializers of one name, or an input with an initializer
 * of its name (its default), are ONNX's own and pass. The top-level graph only. */
oq_status oq_graph_defs_check(const Onnx__GraphProto *g, const char *name, oq_err *err);

#endif
