/* One read and parse of an ONNX file, for callers that want more than one view of it
 * (validate's dispatch check wants the attention nodes and their facts for the advice:
 * parsing a large model twice per configuration costs a second pass over its weights).
 */
#ifndef ORTQUAL_INSPECT_MODEL_IMPL_H
#define ORTQUAL_INSPECT_MODEL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "ortqual/inspect.h"

/* How much of a model an unpack keeps: everything (a model to convert or run), or its graph
 * with the raw_data of initializers above 64 KiB left out (raw_data.len kept, raw_data.data
 * NULL: inspection, placement, metadata), so that a large model costs its graph, not its weights. */
typedef enum oq_unpack_kind {
    OQ_UNPACK_WHOLE = 0,
    OQ_UNPACK_LEAN
} oq_unpack_kind;

/* The one unpack of a model from outside: buf .. buf+n checked for nesting
 * (oq_model_nesting_check) once, on the bytes unpacked, and unpacked as `kind` says. *out is set
 * on OQ_OK only; OQ_ERR_FORMAT naming `name` when it nests too deep or protobuf-c cannot parse
 * it (oq_model_parse_failed's message). Free with onnx__model_proto__free_unpacked. */
oq_status oq_model_unpack_checked(const uint8_t *buf, size_t n, const char *name, oq_unpack_kind kind,
                                  Onnx__ModelProto **out, oq_err *err);
/* The file `path` read and unpacked lean, as oq_model_unpack_checked unpacks bytes, without
 * reading the left-out bytes. Errors: those of oq_read_file, and oq_model_unpack_checked's. */
oq_status oq_model_proto_read(const char *path, Onnx__ModelProto **out, oq_err *err);
/* OQ_ERR_FORMAT "NAME: not an ONNX model (protobuf parse failed: truncated, corrupt or another
 * format)": the one message for bytes protobuf-c cannot parse, whichever command read them. */
oq_status oq_model_parse_failed(const char *name, oq_err *err);

/* buf .. buf+n unpacked with the raw_data of graph initializers above `keep` bytes left out
 * (raw_data.len kept, raw_data.data NULL): 1 with *out set (NULL when protobuf-c cannot parse
 * it), 0 when the wire format is beyond this copy (a group, a truncated field: unpack it whole
 * to report that). The fuzz harness's view of the copy itself. */
int oq_model_unpack_lean(const uint8_t *buf, size_t n, size_t keep, Onnx__ModelProto **out);

/* protobuf's default recursion limit, which ONNX Runtime parses models with: messages nested
 * deeper are refused before protobuf-c, which recurses without a limit, unpacks them. */
#define OQ_ONNX_NESTING_MAX 100
/* buf .. buf+n, a ModelProto on the wire, nests its messages at most OQ_ONNX_NESTING_MAX deep
 * (nesting.c); OQ_ERR_FORMAT "NAME: messages nested deeper than 100 levels ..." otherwise.
 * Bytes malformed otherwise pass: the unpack says what is wrong with them. */
oq_status oq_model_nesting_check(const uint8_t *buf, size_t n, const char *name, oq_err *err);

/* oq_model_inspect_bytes of a parsed model (`m` NULL: a parse failure, reported as such). */
oq_status oq_model_inspect_proto(const Onnx__ModelProto *m, const char *name, oq_model_info **out, oq_err *err);

/* What oq_model_inspect_file(path) and oq_model_find_nodes(path, NULL, op_type) give, from one
 * read and one parse. On error all three outputs are empty. Errors as oq_model_inspect_file. */
oq_status oq_model_inspect_nodes(const char *path, const char *op_type, oq_model_info **mi, oq_node_info **nodes,
                                 size_t *n, oq_err *err);
/* The same of a model in memory (`name` in messages): the bytes a session was made from. */
oq_status oq_model_inspect_nodes_bytes(const void *buf, size_t len, const char *name, const char *op_type,
                                       oq_model_info **mi, oq_node_info **nodes, size_t *n, oq_err *err);

/* oq_model_find_nodes of a model in memory (`what` names it in messages). */
oq_status oq_model_find_nodes_bytes(const void *buf, size_t len, const char *what, const char *name,
                                    const char *op_type, oq_node_info **nodes, size_t *n, oq_err *err);

/* Bits of one element of an ONNX data type (TensorProto.DataType); 0 where it has no fixed
 * size (string, undefined, a type this build does not know). */
int oq_onnx_elem_bits(int32_t type);

/* A declared dimension as a number: its dim_value, or -1 where it has none (`d` NULL, a
 * dim_param, neither set) or a negative one (ONNX allows none; old exporters wrote -1 for a
 * dynamic dimension, which read as text named it "-1", the same name at every axis). */
int64_t oq_dim_size(const Onnx__TensorShapeProto__Dimension *d);
/* Its dim_param ("" included), or NULL where it has none: dim_param shares a union with
 * dim_value (a fixed 4 read as a name is the pointer 4), so it is read under its value_case. */
const char *oq_dim_param(const Onnx__TensorShapeProto__Dimension *d);
/* The name a dimension without a size goes by in oq_io_info.dims: its dim_param, or "?" where it
 * has none or an empty one (both read "?" in every listing and message). */
const char *oq_dim_label(const Onnx__TensorShapeProto__Dimension *d);

#endif
