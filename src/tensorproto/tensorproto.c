/* onnx.TensorProto <-> oq_tensor, through the protobuf-c code generated from onnx.proto. */
#include "ortqual/tensorproto.h"
#include "tensorproto/tensorproto-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "ortqual/fileio.h"
#include "tensor/tensor-impl.h"
#include "status/args-impl.h"

/* "tensor 'name'" for messages. */
static const char *label(const Onnx__TensorProto *p, char *buf, size_t cap)
{
    if (p->name && p->name[0]) snprintf(buf, cap, "tensor '%s'", p->name);
    else snprintf(buf, cap, "tensor (unnamed)");
    return buf;
}

static oq_status check_dtype(const Onnx__TensorProto *p, const char *who, oq_dtype *out,
                             oq_err *err)
{
    switch (p->data_type) {
    case OQ_DTYPE_FLOAT32: case OQ_DTYPE_INT32: case OQ_DTYPE_INT64: case OQ_DTYPE_BOOL:
    case OQ_DTYPE_FLOAT16: case OQ_DTYPE_FLOAT64: case OQ_DTYPE_BFLOAT16:
        *out = (oq_dtype)p->data_type;
        return OQ_OK;
    default: break;
    }
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&onnx__tensor_proto__data_type__descriptor,
                                             p->data_type);
    return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: unsupported data type %s (%d)", who,
                      v ? v->name : "unknown", (int)p->data_type);
}

/* External data and segments are valid ONNX that this reader does not do. */
static oq_status check_layout(const Onnx__TensorProto *p, const char *who, oq_err *err)
{
    if ((p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
        p->n_external_data) {
        const char *where = "?";
        for (size_t i = 0; i < p->n_external_data; i++)
            if (p->external_data[i]->key && strcmp(p->external_data[i]->key, "location") == 0)
                where = p->external_data[i]->value ? p->external_data[i]->value : "?";
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: unsupported: external data (location '%s')",
                          who, where);
    }
    if (p->segment)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: unsupported: segmented tensor", who);
    if (p->n_dims > OQ_MAX_DIMS)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: rank %zu above %d is not supported", who,
                          p->n_dims, OQ_MAX_DIMS);
    for (size_t i = 0; i < p->n_dims; i++)
        if (p->dims[i] < 0)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: negative dimension %lld at axis %zu", who,
                              (long long)p->dims[i], i);
    return OQ_OK;
}

/* The typed field ONNX assigns to a dtype, and its value count. */
static const char *typed_field(const Onnx__TensorProto *p, oq_dtype dt, size_t *count)
{
    switch (dt) {
    case OQ_DTYPE_FLOAT32: *count = p->n_float_data; return "float_data";
    case OQ_DTYPE_FLOAT64: *count = p->n_double_data; return "double_data";
    case OQ_DTYPE_INT64: *count = p->n_int64_data; return "int64_data";
    default: *count = p->n_int32_data; return "int32_data";
    }
}

/* Give a data-less tensor its buffer: done only once the proto is known to hold
 * that much data, so a corrupt shape cannot ask for terabytes. */
static oq_status alloc_data(oq_tensor *t, const char *who, oq_err *err)
{
    size_t bytes = oq_tensor_nbytes(t);
    if (!(t->data = malloc(bytes ? bytes : 1)))
        return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory (%zu bytes)", who, bytes);
    t->owns_data = 1;
    return OQ_OK;
}

static oq_status copy_raw(const Onnx__TensorProto *p, oq_tensor *t, const char *who, oq_err *err)
{
    size_t need = oq_tensor_nbytes(t);
    if (p->raw_data.len != need) {
        char shape[128];
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: raw_data holds %zu bytes, %s %s needs %zu",
                          who, p->raw_data.len, oq_dtype_name(t->dtype),
                          oq_shape_str(t, shape, sizeof shape), need);
    }
    oq_status st = alloc_data(t, who, err);
    if (st) return st;
    if (need) memcpy(t->data, p->raw_data.data, need);
    oq_tensor_normalize_bools(t); /* one byte per element; any non-zero byte is true */
    return OQ_OK;
}

/* int32_data carries int32 values, 16-bit float patterns, or bools. */
static oq_status copy_int32_data(const Onnx__TensorProto *p, oq_tensor *t, const char *who,
                                 oq_err *err)
{
    for (size_t i = 0; i < p->n_int32_data; i++) {
        int32_t v = p->int32_data[i];
        switch (t->dtype) {
        case OQ_DTYPE_INT32: ((int32_t *)t->data)[i] = v; break;
        case OQ_DTYPE_BOOL: ((unsigned char *)t->data)[i] = v != 0; break;
        default: /* FLOAT16, BFLOAT16 */
            if (v < 0 || v > 0xFFFF)
                return oq_err_set(err, OQ_ERR_FORMAT,
                                  "%s: int32_data[%zu] = %d is not a 16-bit %s pattern", who, i,
                                  (int)v, oq_dtype_name(t->dtype));
            ((uint16_t *)t->data)[i] = (uint16_t)v;
        }
    }
    return OQ_OK;
}

static oq_status copy_typed(const Onnx__TensorProto *p, oq_tensor *t, const char *who, oq_err *err)
{
    size_t count;
    const char *field = typed_field(p, t->dtype, &count);
    if (count != (size_t)oq_tensor_numel(t)) {
        char shape[128];
        if (count == 0)
            return oq_err_set(err, OQ_ERR_FORMAT,
                              "%s: no data (neither raw_data nor %s) for %s %s", who, field,
                              oq_dtype_name(t->dtype), oq_shape_str(t, shape, sizeof shape));
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s holds %zu values, %s needs %lld", who,
                          field, count, oq_shape_str(t, shape, sizeof shape),
                          (long long)oq_tensor_numel(t));
    }
    oq_status st = alloc_data(t, who, err);
    if (st || !count) return st; /* an empty field is a NULL array */
    switch (t->dtype) {
    case OQ_DTYPE_FLOAT32: memcpy(t->data, p->float_data, count * sizeof(float)); break;
    case OQ_DTYPE_FLOAT64: memcpy(t->data, p->double_data, count * sizeof(double)); break;
    case OQ_DTYPE_INT64: memcpy(t->data, p->int64_data, count * sizeof(int64_t)); break;
    default: return copy_int32_data(p, t, who, err);
    }
    return OQ_OK;
}

/* Name a typed field that holds values, or NULL. */
static const char *any_typed_field(const Onnx__TensorProto *p)
{
    if (p->n_float_data) return "float_data";
    if (p->n_double_data) return "double_data";
    if (p->n_int32_data) return "int32_data";
    if (p->n_int64_data) return "int64_data";
    if (p->n_uint64_data) return "uint64_data";
    if (p->n_string_data) return "string_data";
    return NULL;
}

oq_status oq_tensorproto_from_proto(const Onnx__TensorProto *p, oq_tensor **out, oq_err *err)
{
    char who[300];
    label(p, who, sizeof who);
    oq_dtype dt = OQ_DTYPE_UNDEFINED;
    oq_status st = check_dtype(p, who, &dt, err);
    if (!st) st = check_layout(p, who, err);
    if (st) return st;
    const char *typed = any_typed_field(p);
    if (p->has_raw_data && typed)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: both raw_data and %s are set", who, typed);
    int64_t shape[OQ_MAX_DIMS];
    for (size_t i = 0; i < p->n_dims; i++) shape[i] = p->dims[i];
    oq_tensor *t; /* shape checked (overflow included) before any data is allocated */
    if ((st = oq_tensor_header(&t, dt, (int32_t)p->n_dims, shape, p->name && p->name[0] ? p->name : NULL,
                               err)))
        return oq_err_prefix(err, "%s: ", who);
    st = p->has_raw_data ? copy_raw(p, t, who, err) : copy_typed(p, t, who, err);
    if (st) {
        oq_tensor_free(t);
        return st;
    }
    *out = t;
    return OQ_OK;
}

oq_status oq_tensorproto_parse(const void *buf, size_t n, const char *name_for_errors,
                               oq_tensor **out, oq_err *err)
{
    OQ_NEED_N(err, n, buf);
    OQ_NEED(err, out);
    const char *who = name_for_errors ? name_for_errors : "<memory>";
    Onnx__TensorProto *p = onnx__tensor_proto__unpack(NULL, n, buf);
    if (!p)
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: not a valid onnx.TensorProto (protobuf decoding failed)", who);
    oq_status st = oq_tensorproto_from_proto(p, out, err);
    onnx__tensor_proto__free_unpacked(p, NULL);
    return st ? oq_err_prefix(err, "%s: ", who) : OQ_OK;
}

oq_status oq_tensorproto_read(const char *path, oq_tensor **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    unsigned char *buf;
    size_t n;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st) return st;
    st = oq_tensorproto_parse(buf, n, path, out, err);
    free(buf);
    return st;
}

oq_status oq_tensorproto_view(const oq_tensor *t, Onnx__TensorProto *p, void **owned, oq_err *err)
{
    *owned = NULL;
    if (!oq_dtype_size(t->dtype) || t->ndim < 0 || t->ndim > OQ_MAX_DIMS)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "tensor '%s': dtype %d / rank %d cannot be written",
                          t->name ? t->name : "", (int)t->dtype, t->ndim);
    onnx__tensor_proto__init(p);
    p->n_dims = (size_t)t->ndim;
    p->dims = (int64_t *)t->shape;
    p->has_data_type = 1;
    p->data_type = t->dtype;
    p->name = t->name;
    p->has_raw_data = 1;
    p->raw_data.len = oq_tensor_nbytes(t);
    const void *bytes;
    oq_status st = oq_tensor_canonical_bytes(t, &bytes, owned, err);
    p->raw_data.data = (uint8_t *)bytes;
    return st;
}

oq_status oq_tensorproto_to_proto(const oq_tensor *t, Onnx__TensorProto **out, oq_err *err)
{
    Onnx__TensorProto view;
    void *owned;
    oq_status st = oq_tensorproto_view(t, &view, &owned, err);
    if (st) return st;
    /* Everything malloc'ed, so protobuf-c's free_unpacked releases it. */
    Onnx__TensorProto *p = malloc(sizeof *p);
    int64_t *dims = malloc(sizeof(int64_t) * (view.n_dims ? view.n_dims : 1));
    uint8_t *data = malloc(view.raw_data.len ? view.raw_data.len : 1);
    char *name = t->name ? strdup(t->name) : NULL;
    if (!p || !dims || !data || (t->name && !name)) {
        free(p);
        free(dims);
        free(data);
        free(name);
        free(owned);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *p = view;
    memcpy(dims, t->shape, sizeof(int64_t) * view.n_dims);
    if (view.raw_data.len) memcpy(data, view.raw_data.data, view.raw_data.len);
    free(owned);
    p->dims = dims;
    p->raw_data.data = data;
    p->name = name;
    *out = p;
    return OQ_OK;
}

void oq_tensorproto_proto_free(Onnx__TensorProto *p)
{
    if (p) onnx__tensor_proto__free_unpacked(p, NULL);
}

oq_status oq_tensorproto_serialize(const oq_tensor *t, unsigned char **buf, size_t *n,
                                   oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, buf);
    OQ_NEED(err, n);
    Onnx__TensorProto view;
    void *owned;
    oq_status st = oq_tensorproto_view(t, &view, &owned, err);
    if (st) return st;
    size_t len = onnx__tensor_proto__get_packed_size(&view);
    unsigned char *b = malloc(len ? len : 1);
    if (!b) {
        free(owned);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    size_t packed = onnx__tensor_proto__pack(&view, b);
    OQ_ASSERT(packed == len);
    free(owned);
    *buf = b;
    *n = len;
    return OQ_OK;
}

oq_status oq_tensorproto_write(const char *path, const oq_tensor *t, int overwrite, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, t);
    unsigned char *buf;
    size_t n;
    oq_status st = oq_tensorproto_serialize(t, &buf, &n, err);
    if (st) return oq_err_prefix(err, "%s: ", path);
    st = oq_write_file_atomic(path, buf, n, overwrite, err);
    free(buf);
    return st;
}
