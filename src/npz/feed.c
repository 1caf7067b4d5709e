/* What a model's input takes from an .npz beside its own dtype: numpy has no bfloat16
 * (docs/files.md, "bfloat16 policy"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npz/npy-impl.h"
#include "npz/npz-impl.h"
#include "status/args-impl.h"

/* The first float32 that bfloat16 (its upper 16 bits) does not hold exactly, or -1. */
static int64_t first_inexact_bf16(const unsigned char *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, p + 4 * i, sizeof b);
        if (b & 0xffffu) return i;
    }
    return -1;
}

static oq_status refuse_inexact(const oq_tensor *t, int64_t i, const char *what, oq_err *err)
{
    int64_t at[OQ_MAX_DIMS];
    char where[256];
    float v;
    memcpy(&v, (const unsigned char *)t->data + 4 * i, sizeof v);
    for (int32_t d = t->ndim - 1; d >= 0; d--) { /* a value was found: no dimension is 0 */
        at[d] = i % t->shape[d];
        i /= t->shape[d];
    }
    oq_dims_str(at, t->ndim, where, sizeof where);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "%s is float32 for a bfloat16 input, but its value %.9g at %s is no bfloat16 (give float32 "
                      "values bfloat16 holds exactly, or ml_dtypes.bfloat16 '<V2')",
                      what, (double)v, where);
}

oq_status oq_npz_feed_as(oq_tensor *t, oq_dtype want, const char *what, oq_err *err)
{
    OQ_NEED(err, t && what);
    if (want != OQ_DTYPE_BFLOAT16 || t->dtype != OQ_DTYPE_FLOAT32) return OQ_OK;
    int64_t n = oq_tensor_numel(t);
    int64_t bad = first_inexact_bf16(t->data, n);
    if (bad >= 0) return refuse_inexact(t, bad, what, err);
    uint16_t *bits = malloc(n ? (size_t)n * sizeof *bits : 1);
    if (!bits) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", what);
    for (int64_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, (const unsigned char *)t->data + 4 * i, sizeof b);
        bits[i] = (uint16_t)(b >> 16);
    }
    if (t->owns_data) free(t->data);
    t->data = bits;
    t->owns_data = 1;
    t->dtype = OQ_DTYPE_BFLOAT16;
    return OQ_OK;
}

char *oq_npz_accepted(oq_dtype want, char *buf, size_t n)
{
    const char *descr = oq_npy_descr(want);
    if (want == OQ_DTYPE_BFLOAT16)
        snprintf(buf, n, "accepted: ml_dtypes.bfloat16 ('<V2'), or float32 ('<f4') whose values bfloat16 holds exactly");
    else if (descr)
        snprintf(buf, n, "accepted: %s ('%s')", oq_dtype_name(want), descr);
    else
        snprintf(buf, n, "no .npy dtype feeds %s", oq_dtype_name(want));
    return buf;
}
