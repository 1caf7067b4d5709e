/* A tensor's external-data reference as ORT reads it, and whether its file holds the bytes
 * (extref-impl.h). Moved from convert, which reads the data itself, so that validate, bench and
 * inspect refuse or say the same for the same file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio/fileio-impl.h"
#include "inspect/extref-impl.h"
#include "inspect/model-impl.h"
#include "ortqual/inspect.h"

/* The bytes a tensor's type and shape need (4-bit types packed two to a byte, as ONNX stores
 * them); an oq_status with the message where no count exists: a type without a fixed size (a
 * string tensor has no raw bytes to put outside), a negative or overflowing shape. */
static oq_status tensor_bytes(const char *model, const Onnx__TensorProto *t, int64_t *bytes, oq_err *err)
{
    const char *who = t->name ? t->name : "";
    int bits = oq_onnx_elem_bits(t->data_type);
    if (!bits)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': data type %d has no fixed element size, so it "
                          "cannot be stored in external data", model, who, (int)t->data_type);
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': dimension %zu is %lld", model, who, i,
                              (long long)t->dims[i]);
        if (t->dims[i] && n > INT64_MAX / 16 / t->dims[i]) /* 16: complex128's bytes, the largest */
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': its shape holds more than 2^59 elements",
                              model, who);
        n *= t->dims[i];
    }
    *bytes = bits == 4 ? (n + 1) / 2 : n * (bits / 8);
    return OQ_OK;
}

/* A byte count as ORT reads one: decimal digits alone (ORT refuses "+0" and " 0"). */
static int parse_i64(const char *s, int64_t *v)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s)) return 0;
    errno = 0;
    long long x = strtoll(s, NULL, 10);
    if (errno) return 0;
    *v = x;
    return 1;
}

/* The keys of an external_data entry ORT reads; any other key ORT refuses ("model format
 * error!"), after the work here, so it is refused before it. */
static int key_known(const char *k)
{
    return !strcmp(k, "location") || !strcmp(k, "offset") || !strcmp(k, "length") || !strcmp(k, "checksum") ||
           !strncmp(k, "prepacked", 9);
}

oq_status oq_ext_ref_of(const char *model, const Onnx__TensorProto *t, oq_ext_ref *r, oq_err *err)
{
    const char *off = NULL, *len = NULL, *who = t->name ? t->name : "";
    *r = (oq_ext_ref){NULL, 0, 0};
    oq_status st = tensor_bytes(model, t, &r->length, err);
    if (st) return st;
    for (size_t i = 0; i < t->n_external_data; i++) { /* a key given twice: the last, as ORT reads it */
        const char *k = t->external_data[i]->key, *v = t->external_data[i]->value;
        if (!k || !key_known(k))
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': external data key '%s' is none of "
                              "location, offset, length, checksum", model, who, k ? k : "");
        if (!strcmp(k, "location")) r->location = v;
        else if (!strcmp(k, "offset")) off = v;
        else if (!strcmp(k, "length")) len = v;
    }
    st = oq_ext_location_check(NULL, r->location, err); /* before any work */
    if (st) return oq_err_prefix(err, "%s: initializer '%s': ", model, who), st;
    if (off && !parse_i64(off, &r->offset))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': external data offset '%s' is not a "
                          "byte count", model, who, off);
    int64_t want = r->length;
    if (len && !parse_i64(len, &r->length))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': external data length '%s' is not a "
                          "byte count", model, who, len);
    if (r->length == 0) /* ORT takes 0 as not given and reads the bytes the type and shape need */
        r->length = want;
    if (r->length != want)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': external data length %lld, its type "
                          "and shape need %lld", model, who, (long long)r->length, (long long)want);
    return OQ_OK;
}


oq_status oq_ext_ref_fits(const char *model, const Onnx__TensorProto *t, const oq_ext_ref *r, const char *path,
                          int64_t size, oq_err *err)
{
    if (r->offset <= size && r->length <= size - r->offset) return OQ_OK;
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': external data %s holds %lld bytes, the tensor needs "
                      "bytes %lld..%llu", model, t->name ? t->name : "", path, (long long)size, (long long)r->offset,
                      /* both at most INT64_MAX: their sum fits unsigned */
                      (unsigned long long)r->offset + (unsigned long long)r->length);
}
