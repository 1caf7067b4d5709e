/* Tensors to and from the protobuf-c structs generated from onnx.proto (never
 * installed: the generated code is internal to the library). */
#ifndef ORTQUAL_TENSORPROTO_IMPL_H
#define ORTQUAL_TENSORPROTO_IMPL_H

#include "onnx.pb-c.h"
#include "ortqual/tensorproto.h"

/* Convert a decoded proto into a new tensor (data copied; `p` is not kept).
 * Errors name the tensor ("tensor 'q': ..."). */
oq_status oq_tensorproto_from_proto(const Onnx__TensorProto *p, oq_tensor **out, oq_err *err);

/* A proto in `p` that borrows t's shape, name and data (raw_data, little-endian
 * as in memory), so packing copies the data once. ONNX bools are bytes 0 and 1:
 * other non-zero bytes go through a normalized copy in *owned (NULL otherwise),
 * which the caller frees after using `p`. */
oq_status oq_tensorproto_view(const oq_tensor *t, Onnx__TensorProto *p, void **owned, oq_err *err);

/* A new proto holding `t` in raw_data (data copied). Free it with
 * oq_tensorproto_proto_free. */
oq_status oq_tensorproto_to_proto(const oq_tensor *t, Onnx__TensorProto **out, oq_err *err);

/* Free a proto made by oq_tensorproto_to_proto, or one unpacked by protobuf-c
 * with the default allocator (onnx__tensor_proto__unpack(NULL, ...)). NULL is fine. */
void oq_tensorproto_proto_free(Onnx__TensorProto *p);

#endif
