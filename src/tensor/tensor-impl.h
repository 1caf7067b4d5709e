/* Tensors inside the library: a header whose data the caller fills itself. */
#ifndef ORTQUAL_TENSOR_IMPL_H
#define ORTQUAL_TENSOR_IMPL_H

#include "ortqual/tensor.h"

/* A tensor of `dtype` and `shape` (checked, overflow included, as by oq_tensor_create) with no
 * data yet: data NULL and owns_data 0, for a reader to allocate and fill once the shape is known
 * good (oq_tensor_wrap refuses a NULL buffer of N > 0 bytes). */
oq_status oq_tensor_header(oq_tensor **out, oq_dtype dtype, int32_t ndim, const int64_t *shape,
                           const char *name, oq_err *err);

/* Element i of an integer tensor, exactly (a double holds integers up to 2^53 only): 1 with *s
 * (a signed dtype), 2 with *u (an unsigned one), 0 for any other dtype (neither is written). */
int oq_tensor_int_at(const oq_tensor *t, int64_t i, int64_t *s, uint64_t *u);

#endif
