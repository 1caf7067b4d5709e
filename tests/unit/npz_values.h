/* Test helper shared by test_npz.c and test_npz_numpy.c: tensors filled with a
 * formula that tests/fixtures/numpy/check_ours.py repeats on the numpy side. */
#ifndef OQ_TEST_NPZ_VALUES_H
#define OQ_TEST_NPZ_VALUES_H

#include <math.h>
#include <string.h>

#include "ortqual/tensor.h"

/* Keep in step with expected() in check_ours.py. */
static inline double npz_value(oq_dtype dt, int64_t i)
{
    switch (dt) {
    case OQ_DTYPE_INT64: return (double)((i % 13 - 6) * ((int64_t)1 << 40) + i);
    case OQ_DTYPE_INT32: return (double)((i % 13 - 6) * 100000 + i);
    case OQ_DTYPE_BOOL: return i % 3 == 1;
    case OQ_DTYPE_UINT8: return (double)(i * 7 % 256);
    case OQ_DTYPE_INT8: return (double)(i * 7 % 256 - 128);
    case OQ_DTYPE_UINT16: return (double)(i * 4099 % 65536);
    case OQ_DTYPE_INT16: return (double)(i * 4099 % 65536 - 32768);
    case OQ_DTYPE_UINT32: return (double)(i * 1000003 % 4294967296LL);
    case OQ_DTYPE_UINT64: return (double)((uint64_t)i << 40);
    default:
        if (i % 11 == 5) return -INFINITY;
        if (i % 11 == 7) return NAN;
        return (double)(i % 13) * 0.25 - 1.5;
    }
}

/* A tensor of `dt` and shape filled by npz_value; NULL on failure. */
static inline oq_tensor *npz_make(oq_dtype dt, int32_t ndim, const int64_t *shape, const char *name)
{
    oq_tensor *t = NULL;
    if (oq_tensor_create(&t, dt, ndim, shape, name, NULL) != OQ_OK) return NULL;
    for (int64_t i = 0; i < oq_tensor_numel(t); i++) oq_tensor_set_f64(t, i, npz_value(dt, i));
    return t;
}

/* Same dtype/shape/bytes; a bfloat16 `want` matches a float32 `got` holding the same values. */
static inline int npz_same(const oq_tensor *want, const oq_tensor *got)
{
    if (want->ndim != got->ndim) return 0;
    for (int32_t i = 0; i < want->ndim; i++)
        if (want->shape[i] != got->shape[i]) return 0;
    if (want->dtype == OQ_DTYPE_BFLOAT16) {
        if (got->dtype != OQ_DTYPE_FLOAT32) return 0;
        const uint16_t *w = want->data;
        const float *g = got->data;
        for (int64_t i = 0; i < oq_tensor_numel(want); i++) {
            float f = oq_bf16_bits_to_f32(w[i]);
            if (memcmp(&f, &g[i], sizeof f) != 0) return 0;
        }
        return 1;
    }
    return want->dtype == got->dtype &&
           memcmp(want->data, got->data, oq_tensor_nbytes(want)) == 0;
}

#endif
