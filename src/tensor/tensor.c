#include "ortqual/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "tensor/half-impl.h"
#include "tensor/tensor-impl.h"
#include "status/args-impl.h"

const char *oq_dtype_name(oq_dtype t)
{
    switch (t) {
    case OQ_DTYPE_FLOAT32: return "float32";
    case OQ_DTYPE_INT32: return "int32";
    case OQ_DTYPE_INT64: return "int64";
    case OQ_DTYPE_BOOL: return "bool";
    case OQ_DTYPE_FLOAT16: return "float16";
    case OQ_DTYPE_FLOAT64: return "float64";
    case OQ_DTYPE_BFLOAT16: return "bfloat16";
    case OQ_DTYPE_UINT8: return "uint8";
    case OQ_DTYPE_INT8: return "int8";
    case OQ_DTYPE_UINT16: return "uint16";
    case OQ_DTYPE_INT16: return "int16";
    case OQ_DTYPE_UINT32: return "uint32";
    case OQ_DTYPE_UINT64: return "uint64";
    case OQ_DTYPE_UNDEFINED: return "undefined";
    }
    return "unknown";
}

int oq_dtype_is_float(oq_dtype t)
{
    return t == OQ_DTYPE_FLOAT32 || t == OQ_DTYPE_FLOAT64 || t == OQ_DTYPE_FLOAT16 || t == OQ_DTYPE_BFLOAT16;
}

size_t oq_dtype_size(oq_dtype t)
{
    switch (t) {
    case OQ_DTYPE_FLOAT32: case OQ_DTYPE_INT32: case OQ_DTYPE_UINT32: return 4;
    case OQ_DTYPE_INT64: case OQ_DTYPE_FLOAT64: case OQ_DTYPE_UINT64: return 8;
    case OQ_DTYPE_BOOL: case OQ_DTYPE_UINT8: case OQ_DTYPE_INT8: return 1;
    case OQ_DTYPE_FLOAT16: case OQ_DTYPE_BFLOAT16: case OQ_DTYPE_UINT16: case OQ_DTYPE_INT16: return 2;
    case OQ_DTYPE_UNDEFINED: break;
    }
    return 0;
}

oq_dtype oq_dtype_parse(const char *s)
{
    static const struct { const char *name; oq_dtype t; } names[] = {
        {"float32", OQ_DTYPE_FLOAT32}, {"fp32", OQ_DTYPE_FLOAT32}, {"float", OQ_DTYPE_FLOAT32},
        {"float16", OQ_DTYPE_FLOAT16}, {"fp16", OQ_DTYPE_FLOAT16}, {"half", OQ_DTYPE_FLOAT16},
        {"bfloat16", OQ_DTYPE_BFLOAT16}, {"bf16", OQ_DTYPE_BFLOAT16},
        {"float64", OQ_DTYPE_FLOAT64}, {"fp64", OQ_DTYPE_FLOAT64}, {"double", OQ_DTYPE_FLOAT64},
        {"int64", OQ_DTYPE_INT64}, {"int32", OQ_DTYPE_INT32}, {"bool", OQ_DTYPE_BOOL},
        {"uint8", OQ_DTYPE_UINT8}, {"int8", OQ_DTYPE_INT8}, {"uint16", OQ_DTYPE_UINT16},
        {"int16", OQ_DTYPE_INT16}, {"uint32", OQ_DTYPE_UINT32}, {"uint64", OQ_DTYPE_UINT64},
    };
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return names[i].t;
    return OQ_DTYPE_UNDEFINED;
}

/* Checks the shape and returns the byte size, refusing overflow. */
static oq_status shape_bytes(oq_dtype dtype, int32_t ndim, const int64_t *shape, size_t *bytes,
                             oq_err *err)
{
    size_t es = oq_dtype_size(dtype);
    if (!es) return oq_err_set(err, OQ_ERR_UNSUPPORTED, "unsupported dtype %d", (int)dtype);
    if (ndim < 0 || ndim > OQ_MAX_DIMS)
        return oq_err_set(err, OQ_ERR_SHAPE, "rank %d outside 0..%d", ndim, OQ_MAX_DIMS);
    if (ndim && !shape) return oq_err_set(err, OQ_ERR_INVALID_ARG, "rank %d: shape is NULL", ndim);
    /* Like numpy, the non-zero dimensions must multiply to a representable size
     * even when another dimension is 0, so element counts always fit int64_t. */
    uint64_t n = es;
    int empty = 0;
    for (int32_t i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return oq_err_set(err, OQ_ERR_SHAPE, "negative dimension %lld at axis %d",
                              (long long)shape[i], i);
        if (!shape[i]) {
            empty = 1;
            continue;
        }
        if (n > (uint64_t)INT64_MAX / (uint64_t)shape[i])
            return oq_err_set(err, OQ_ERR_SHAPE, "tensor size overflows");
        n *= (uint64_t)shape[i];
    }
    *bytes = empty ? 0 : (size_t)n;
    return OQ_OK;
}

static oq_status tensor_alloc(oq_tensor **out, oq_dtype dtype, int32_t ndim, const int64_t *shape,
                              const char *name, oq_err *err)
{
    size_t bytes;
    oq_status st = shape_bytes(dtype, ndim, shape, &bytes, err);
    if (st) return st;
    oq_tensor *t = calloc(1, sizeof *t);
    if (!t) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim) memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    if (name && !(t->name = strdup(name))) {
        free(t);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *out = t;
    return OQ_OK;
}

oq_status oq_tensor_create(oq_tensor **out, oq_dtype dtype, int32_t ndim, const int64_t *shape,
                           const char *name, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED_N(err, ndim > 0, shape);
    oq_status st = tensor_alloc(out, dtype, ndim, shape, name, err);
    if (st) return st;
    size_t bytes = oq_tensor_nbytes(*out);
    (*out)->data = oq_calloc_huge(bytes); /* never NULL, even for empty tensors */
    (*out)->owns_data = 1;
    if (!(*out)->data) {
        oq_tensor_free(*out);
        *out = NULL;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory allocating %zu bytes", bytes);
    }
    return OQ_OK;
}

oq_status oq_tensor_header(oq_tensor **out, oq_dtype dtype, int32_t ndim, const int64_t *shape,
                           const char *name, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED_N(err, ndim > 0, shape);
    return tensor_alloc(out, dtype, ndim, shape, name, err);
}

oq_status oq_tensor_wrap(oq_tensor **out, oq_dtype dtype, int32_t ndim, const int64_t *shape,
                         void *data, const char *name, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED_N(err, ndim > 0, shape);
    oq_status st = tensor_alloc(out, dtype, ndim, shape, name, err);
    if (st) return st;
    /* a borrowed NULL would be read by the first use of the tensor, far from here */
    if (!data && oq_tensor_nbytes(*out)) {
        size_t bytes = oq_tensor_nbytes(*out);
        oq_tensor_free(*out);
        *out = NULL;
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_tensor_wrap: data is NULL for %zu bytes", bytes);
    }
    (*out)->data = data;
    (*out)->owns_data = 0;
    return OQ_OK;
}

void oq_tensor_free(oq_tensor *t)
{
    if (!t) return;
    if (t->owns_data) free(t->data);
    free(t->name);
    free(t);
}

oq_status oq_tensor_clone(const oq_tensor *t, oq_tensor **out, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, out);
    oq_status st = oq_tensor_create(out, t->dtype, t->ndim, t->shape, t->name, err);
    if (st) return st;
    memcpy((*out)->data, t->data, oq_tensor_nbytes(t));
    return OQ_OK;
}

oq_status oq_tensor_set_name(oq_tensor *t, const char *name, oq_err *err)
{
    OQ_NEED(err, t);
    char *copy = name ? strdup(name) : NULL;
    if (name && !copy) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    free(t->name);
    t->name = copy;
    return OQ_OK;
}

void oq_tensors_free(oq_tensor **t, size_t n)
{
    if (!t) return;
    for (size_t i = 0; i < n; i++) oq_tensor_free(t[i]);
    free(t);
}

const oq_tensor *oq_tensors_find(const oq_tensor *const *t, size_t n, const char *name)
{
    for (size_t i = 0; t && i < n; i++)
        if (t[i] && t[i]->name && name && !strcmp(t[i]->name, name)) return t[i];
    return NULL;
}

int64_t oq_tensor_numel(const oq_tensor *t)
{
    /* shapes are checked when tensors are made; a 0 ends the product before any
     * other dimension can overflow it */
    if (!t) return 0;
    uint64_t n = 1;
    for (int32_t i = 0; i < t->ndim; i++) {
        if (!t->shape[i]) return 0;
        n *= (uint64_t)t->shape[i];
    }
    return (int64_t)n;
}

size_t oq_tensor_nbytes(const oq_tensor *t)
{
    return t ? (size_t)oq_tensor_numel(t) * oq_dtype_size(t->dtype) : 0;
}

void oq_tensor_normalize_bools(oq_tensor *t)
{
    if (!t) return;
    if (t->dtype != OQ_DTYPE_BOOL) return;
    unsigned char *v = t->data;
    size_t n = oq_tensor_nbytes(t);
    for (size_t i = 0; i < n; i++) v[i] = v[i] != 0;
}

oq_status oq_tensor_canonical_bytes(const oq_tensor *t, const void **bytes, void **owned, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, bytes);
    OQ_NEED(err, owned);
    *bytes = t->data;
    *owned = NULL;
    if (t->dtype != OQ_DTYPE_BOOL) return OQ_OK;
    const unsigned char *v = t->data;
    size_t n = oq_tensor_nbytes(t), i = 0;
    while (i < n && v[i] <= 1) i++;
    if (i == n) return OQ_OK;
    unsigned char *b = malloc(n);
    if (!b) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++) b[i] = v[i] != 0;
    *bytes = *owned = b;
    return OQ_OK;
}

char *oq_dims_str(const int64_t *dims, int32_t ndim, char *buf, size_t n)
{
    if (!buf || !n) return buf;
    if (!dims) ndim = 0; /* "[]": no dims to print */
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int32_t i = 0; i < ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (used < n) snprintf(buf + used, n - used, "]");
    return buf;
}

char *oq_shape_str(const oq_tensor *t, char *buf, size_t n)
{
    if (!t || !buf) {
        if (buf && n) buf[0] = '\0';
        return buf;
    }
    return oq_dims_str(t->shape, t->ndim, buf, n);
}

uint16_t oq_f32_to_f16_bits(float f)
{
    oq_half h = (oq_half)f;
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}

float oq_f16_bits_to_f32(uint16_t b)
{
    oq_half h;
    memcpy(&h, &b, 2);
    return (float)h;
}

uint16_t oq_f32_to_bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f)) return (uint16_t)((u >> 16) | 0x40); /* keep it a quiet NaN */
    u += 0x7FFFu + ((u >> 16) & 1u);                   /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

float oq_bf16_bits_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int oq_tensor_int_at(const oq_tensor *t, int64_t i, int64_t *s, uint64_t *u)
{
    switch (t->dtype) {
    case OQ_DTYPE_INT8: *s = ((const int8_t *)t->data)[i]; return 1;
    case OQ_DTYPE_INT16: *s = ((const int16_t *)t->data)[i]; return 1;
    case OQ_DTYPE_INT32: *s = ((const int32_t *)t->data)[i]; return 1;
    case OQ_DTYPE_INT64: *s = ((const int64_t *)t->data)[i]; return 1;
    case OQ_DTYPE_UINT8: *u = ((const uint8_t *)t->data)[i]; return 2;
    case OQ_DTYPE_UINT16: *u = ((const uint16_t *)t->data)[i]; return 2;
    case OQ_DTYPE_UINT32: *u = ((const uint32_t *)t->data)[i]; return 2;
    case OQ_DTYPE_UINT64: *u = ((const uint64_t *)t->data)[i]; return 2;
    default: return 0;
    }
}

double oq_tensor_get_f64(const oq_tensor *t, int64_t i)
{
    if (!t) return NAN;
    const void *p = t->data;
    switch (t->dtype) {
    case OQ_DTYPE_FLOAT32: return ((const float *)p)[i];
    case OQ_DTYPE_FLOAT64: return ((const double *)p)[i];
    case OQ_DTYPE_FLOAT16: return oq_f16_bits_to_f32(((const uint16_t *)p)[i]);
    case OQ_DTYPE_BFLOAT16: return oq_bf16_bits_to_f32(((const uint16_t *)p)[i]);
    case OQ_DTYPE_INT32: return ((const int32_t *)p)[i];
    case OQ_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case OQ_DTYPE_BOOL: return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    case OQ_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case OQ_DTYPE_INT8: return ((const int8_t *)p)[i];
    case OQ_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case OQ_DTYPE_INT16: return ((const int16_t *)p)[i];
    case OQ_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case OQ_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
    case OQ_DTYPE_UNDEFINED: break;
    }
    OQ_ASSERT(!"unknown dtype");
}

void oq_tensor_set_f64(oq_tensor *t, int64_t i, double v)
{
    if (!t) return;
    void *p = t->data;
    switch (t->dtype) {
    case OQ_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; return;
    case OQ_DTYPE_FLOAT64: ((double *)p)[i] = v; return;
    case OQ_DTYPE_FLOAT16: ((uint16_t *)p)[i] = oq_f32_to_f16_bits((float)v); return;
    case OQ_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = oq_f32_to_bf16_bits((float)v); return;
    case OQ_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; return;
    case OQ_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; return;
    case OQ_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0.0; return;
    case OQ_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; return;
    case OQ_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; return;
    case OQ_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; return;
    case OQ_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; return;
    case OQ_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; return;
    case OQ_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; return;
    case OQ_DTYPE_UNDEFINED: break;
    }
    OQ_ASSERT(!"unknown dtype");
}

oq_status oq_tensor_convert(const oq_tensor *t, oq_dtype to, oq_tensor **out, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, out);
    oq_status st = oq_tensor_create(out, to, t->ndim, t->shape, t->name, err);
    if (st) return st;
    int64_t n = oq_tensor_numel(t);
    if (to == t->dtype) {
        memcpy((*out)->data, t->data, oq_tensor_nbytes(t));
        return OQ_OK;
    }
    for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(*out, i, oq_tensor_get_f64(t, i));
    return OQ_OK;
}
