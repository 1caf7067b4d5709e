/* Tensors: a dtype, a shape and a contiguous row-major (C order) buffer.
 *
 * Ownership: a tensor made by oq_tensor_create owns its data and
 * oq_tensor_free releases it. oq_tensor_wrap makes a tensor that borrows a
 * caller's buffer (`owns_data == 0`); freeing it releases only the struct.
 * Element counts and byte sizes are checked for overflow on creation.
 *
 * float16 uses the compiler's _Float16; bfloat16 is stored as its 16 bits
 * and converted with round-to-nearest-even (NaN stays NaN).
 */
#ifndef ORTQUAL_TENSOR_H
#define ORTQUAL_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OQ_MAX_DIMS 8

/* Values equal to onnx.TensorProto.DataType, so conversions are identity. */
typedef enum oq_dtype {
    OQ_DTYPE_UNDEFINED = 0,
    OQ_DTYPE_FLOAT32 = 1,
    OQ_DTYPE_UINT8 = 2,
    OQ_DTYPE_INT8 = 3,
    OQ_DTYPE_UINT16 = 4,
    OQ_DTYPE_INT16 = 5,
    OQ_DTYPE_INT32 = 6,
    OQ_DTYPE_INT64 = 7,
    OQ_DTYPE_BOOL = 9,
    OQ_DTYPE_FLOAT16 = 10,
    OQ_DTYPE_FLOAT64 = 11,
    OQ_DTYPE_UINT32 = 12,
    OQ_DTYPE_UINT64 = 13,
    OQ_DTYPE_BFLOAT16 = 16
} oq_dtype;

typedef struct oq_tensor {
    oq_dtype dtype;
    int32_t ndim;
    int64_t shape[OQ_MAX_DIMS];
    void *data;      /* row-major, oq_tensor_nbytes() bytes */
    int owns_data;   /* 1: freed with the tensor; 0: borrowed */
    char *name;      /* optional, owned; NULL when unnamed */
} oq_tensor;

/* Name ("float32", "float16", ...) and size in bytes of one element (0 if unknown). */
OQ_API const char *oq_dtype_name(oq_dtype t);
OQ_API size_t oq_dtype_size(oq_dtype t);
/* Non-zero for the floating-point dtypes: float32, float64, float16, bfloat16. */
OQ_API int oq_dtype_is_float(oq_dtype t);
/* A dtype from its name, exactly one of these (lower case): "float32" "fp32" "float",
 * "float16" "fp16" "half", "bfloat16" "bf16", "float64" "fp64" "double", "int64",
 * "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool".
 * OQ_DTYPE_UNDEFINED for anything else (NULL too), numpy's codes included (f4, <f4, i8):
 * i8 is int64 to numpy and int8 to most readers, a guess no tolerance should rest on. */
OQ_API oq_dtype oq_dtype_parse(const char *s);

/* Zero-filled tensor. `name` may be NULL. */
OQ_API oq_status oq_tensor_create(oq_tensor **out, oq_dtype dtype, int32_t ndim, const int64_t *shape,
                                  const char *name, oq_err *err);
/* Borrow `data` (not copied, not freed). */
OQ_API oq_status oq_tensor_wrap(oq_tensor **out, oq_dtype dtype, int32_t ndim, const int64_t *shape,
                                void *data, const char *name, oq_err *err);
OQ_API void oq_tensor_free(oq_tensor *t);
/* Deep copy (always owns its data). */
OQ_API oq_status oq_tensor_clone(const oq_tensor *t, oq_tensor **out, oq_err *err);
/* Replace the name (copied). */
OQ_API oq_status oq_tensor_set_name(oq_tensor *t, const char *name, oq_err *err);

/* Free each of `n` tensors and the malloc'ed array holding them. NULL is fine. */
OQ_API void oq_tensors_free(oq_tensor **t, size_t n);
/* The first of `n` tensors named `name`, or NULL. */
OQ_API const oq_tensor *oq_tensors_find(const oq_tensor *const *t, size_t n, const char *name);

/* Elements and bytes of `t`; 0 for a NULL tensor. */
OQ_API int64_t oq_tensor_numel(const oq_tensor *t);
OQ_API size_t oq_tensor_nbytes(const oq_tensor *t);
/* ONNX and numpy bools are the bytes 0 and 1. A bool tensor just read gets any
 * other non-zero byte turned into 1 (other dtypes are left alone). */
OQ_API void oq_tensor_normalize_bools(oq_tensor *t);
/* The bytes to write for `t`: its data, or for a bool tensor holding other
 * non-zero bytes a normalized copy, returned in *owned too (NULL otherwise) for
 * the caller to free. */
OQ_API oq_status oq_tensor_canonical_bytes(const oq_tensor *t, const void **bytes, void **owned, oq_err *err);
/* "[2,3,4]" into buf; returns buf ("" in it for a NULL tensor). */
OQ_API char *oq_shape_str(const oq_tensor *t, char *buf, size_t n);
/* The same for any dims (a shape or an element's coordinates); NULL dims print as "[]", a NULL
 * buffer is returned untouched. */
OQ_API char *oq_dims_str(const int64_t *dims, int32_t ndim, char *buf, size_t n);

/* Element access as double, any numeric or bool dtype (get: NaN for a NULL tensor). */
OQ_API double oq_tensor_get_f64(const oq_tensor *t, int64_t i);
OQ_API void oq_tensor_set_f64(oq_tensor *t, int64_t i, double v);
/* New tensor of dtype `to` with every element converted (float->int truncates). */
OQ_API oq_status oq_tensor_convert(const oq_tensor *t, oq_dtype to, oq_tensor **out, oq_err *err);

/* Scalar conversions. */
OQ_API uint16_t oq_f32_to_f16_bits(float f);
OQ_API float oq_f16_bits_to_f32(uint16_t h);
OQ_API uint16_t oq_f32_to_bf16_bits(float f); /* round to nearest even */
OQ_API float oq_bf16_bits_to_f32(uint16_t b);

#ifdef __cplusplus
}
#endif
#endif
