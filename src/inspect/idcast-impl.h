/* An index as the Casts between a model input and a Gather make it, as ONNX defines a Cast and
 * ONNX Runtime computes it: an integer to a narrower one keeps its low bits (int64 4294967297
 * to int32 is 1), a float to an integer truncates toward zero, an integer or float to a float
 * rounds to it. NaN, infinity and a float outside the integer type's range have no value in
 * ONNX: the per-batch check refuses them rather than guess what ORT indexes with.
 */
#ifndef ORTQUAL_INSPECT_IDCAST_IMPL_H
#define ORTQUAL_INSPECT_IDCAST_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/tensor.h"

/* One element on its way through Casts. */
typedef struct oq_idval {
    int32_t type;  /* its type (oq_dtype) */
    double f;      /* a float type's value */
    uint64_t bits; /* an integer's (or bool's) value, modulo 2^64 (a signed one sign-extended) */
} oq_idval;

/* 1 when the value rule above covers type `dtype` (the numeric types and bool; not string). */
int oq_idcast_modelled(int32_t dtype);
/* Element e of t (a modelled type). */
oq_idval oq_idval_of(const oq_tensor *t, int64_t e);
/* *v cast to `to` (modelled): NULL, or why ONNX defines no value for it ("NaN", ...). */
const char *oq_idval_cast(oq_idval *v, int32_t to);
/* Whether v is an index a Gather reads (int32 or int64), its value in *index. */
int oq_idval_index(oq_idval v, int64_t *index);
/* v as text ("4294967297", "3.5"), into buf; returns buf. */
char *oq_idval_str(oq_idval v, char *buf, size_t n);

#endif
