/* A one-node ONNX model built in memory, for self-tests (doctor, unit tests).
 * Not installed: a convenience of this project, not part of the public API. */
#ifndef ORTQUAL_TINYMODEL_IMPL_H
#define ORTQUAL_TINYMODEL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* Serialized ModelProto (IR 8, default-domain opset 17) holding one node
 * `op` with `n_inputs` (1 or 2) inputs "a", "b" of `dtype` and shapes
 * `shapes[i]` (rank `ndims[i]`; a negative dimension becomes the symbolic "N"),
 * and one output "y" of `out_dtype` whose shape is left to inference.
 * *bytes is malloc'ed. Errors: OQ_ERR_INVALID_ARG, OQ_ERR_NOMEM. */
oq_status oq_tinymodel_build(const char *op, oq_dtype dtype, oq_dtype out_dtype, int n_inputs,
                             const int *ndims, const int64_t *const *shapes, void **bytes,
                             size_t *len, oq_err *err);

/* Shorthand: y = a + b, float32, a and b of shape [2,3]. */
oq_status oq_tinymodel_add_f32(void **bytes, size_t *len, oq_err *err);

#endif
