/* An index through the Casts on its way to a Gather (idcast-impl.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inspect/idcast-impl.h"

typedef struct kind {
    int32_t type;
    int is_float;
    int bits;       /* an integer's width */
    int is_signed;
    const char *outside; /* why a float beyond its range has no value as it */
    double end;          /* an integer's: 2^(bits - signed), past its largest value */
} kind;

/* by type (oq_dtype), for a lookup per element; type 0: none */
static const kind KINDS[OQ_DTYPE_BFLOAT16 + 1] = {
    [OQ_DTYPE_FLOAT32] = {OQ_DTYPE_FLOAT32, 1, 0, 1, NULL},
    [OQ_DTYPE_FLOAT64] = {OQ_DTYPE_FLOAT64, 1, 0, 1, NULL},
    [OQ_DTYPE_FLOAT16] = {OQ_DTYPE_FLOAT16, 1, 0, 1, NULL},
    [OQ_DTYPE_BFLOAT16] = {OQ_DTYPE_BFLOAT16, 1, 0, 1, NULL},
    [OQ_DTYPE_INT8] = {OQ_DTYPE_INT8, 0, 8, 1, "outside int8's range", 0x1p7},
    [OQ_DTYPE_UINT8] = {OQ_DTYPE_UINT8, 0, 8, 0, "outside uint8's range", 0x1p8},
    [OQ_DTYPE_INT16] = {OQ_DTYPE_INT16, 0, 16, 1, "outside int16's range", 0x1p15},
    [OQ_DTYPE_UINT16] = {OQ_DTYPE_UINT16, 0, 16, 0, "outside uint16's range", 0x1p16},
    [OQ_DTYPE_INT32] = {OQ_DTYPE_INT32, 0, 32, 1, "outside int32's range", 0x1p31},
    [OQ_DTYPE_UINT32] = {OQ_DTYPE_UINT32, 0, 32, 0, "outside uint32's range", 0x1p32},
    [OQ_DTYPE_INT64] = {OQ_DTYPE_INT64, 0, 64, 1, "outside int64's range", 0x1p63},
    [OQ_DTYPE_UINT64] = {OQ_DTYPE_UINT64, 0, 64, 0, "outside uint64's range", 0x1p64},
    [OQ_DTYPE_BOOL] = {OQ_DTYPE_BOOL, 0, 1, 0, NULL},
};

static const kind *kind_of(int32_t type)
{
    return type > 0 && type < (int32_t)(sizeof KINDS / sizeof *KINDS) && KINDS[type].type ? &KINDS[type] : NULL;
}

int oq_idcast_modelled(int32_t dtype)
{
    return kind_of(dtype) != NULL;
}

/* `bits` kept to k's width, sign-extended where k is signed (what a C cast between the
 * integer types ORT's Cast uses does on two's complement). */
static uint64_t wrap(uint64_t bits, const kind *k)
{
    if (k->bits == 64) return bits;
    if (k->bits == 1) return bits != 0;
    uint64_t mask = (UINT64_C(1) << k->bits) - 1, sign = UINT64_C(1) << (k->bits - 1);
    bits &= mask;
    return k->is_signed && (bits & sign) ? bits | ~mask : bits;
}

/* f rounded to float type `to` (overflow: infinity, as IEEE rounds it). */
static double round_to(double f, int32_t to)
{
    if (to == OQ_DTYPE_FLOAT64 || !isfinite(f)) return f;
    if (fabs(f) >= 0x1.ffffffp127) return copysign(INFINITY, f); /* past FLT_MAX's rounding edge */
    if (to == OQ_DTYPE_FLOAT16) return oq_f16_bits_to_f32(oq_f32_to_f16_bits((float)f));
    if (to == OQ_DTYPE_BFLOAT16) return oq_bf16_bits_to_f32(oq_f32_to_bf16_bits((float)f));
    return (float)f;
}

/* An integer's value as float type `to`: rounded once, from the integer (as ORT converts). */
static double int_to_float(uint64_t bits, const kind *from, int32_t to)
{
    if (to == OQ_DTYPE_FLOAT64) return from->is_signed ? (double)(int64_t)bits : (double)bits;
    return round_to(from->is_signed ? (float)(int64_t)bits : (float)bits, to);
}

/* A float truncated toward zero into integer kind k, or why ONNX leaves it undefined. */
static const char *float_to_int(double f, const kind *k, uint64_t *bits)
{
    if (k->bits == 1) {
        *bits = f != 0; /* NaN too: a Cast to bool is "not zero" */
        return NULL;
    }
    if (isnan(f)) return "NaN";
    if (isinf(f)) return "infinity";
    double t = trunc(f);
    if (t < (k->is_signed ? -k->end : 0) || t >= k->end) return k->outside;
    *bits = k->is_signed ? (uint64_t)(int64_t)t : (uint64_t)t;
    return NULL;
}

oq_idval oq_idval_of(const oq_tensor *t, int64_t e)
{
    oq_idval v = {t->dtype, 0, 0};
    const kind *k = kind_of(t->dtype);
    if (!k) return v;
    const unsigned char *p = (const unsigned char *)t->data + (size_t)e * oq_dtype_size(t->dtype);
    if (t->dtype == OQ_DTYPE_FLOAT32 || t->dtype == OQ_DTYPE_FLOAT64) {
        float f32;
        if (t->dtype == OQ_DTYPE_FLOAT64) memcpy(&v.f, p, sizeof v.f);
        else memcpy(&f32, p, sizeof f32), v.f = f32;
    } else if (k->is_float) {
        uint16_t h;
        memcpy(&h, p, sizeof h);
        v.f = t->dtype == OQ_DTYPE_FLOAT16 ? oq_f16_bits_to_f32(h) : oq_bf16_bits_to_f32(h);
    } else {
        uint64_t raw = 0; /* little-endian, as the tensor's bytes are */
        memcpy(&raw, p, k->bits == 1 ? 1 : (size_t)k->bits / 8);
        v.bits = wrap(raw, k);
    }
    return v;
}

const char *oq_idval_cast(oq_idval *v, int32_t to)
{
    const kind *from = kind_of(v->type), *k = kind_of(to);
    const char *why = NULL;
    if (!from || !k) return "a type without a value rule";
    if (k->is_float) v->f = from->is_float ? round_to(v->f, to) : int_to_float(v->bits, from, to);
    else if (from->is_float) why = float_to_int(v->f, k, &v->bits);
    else v->bits = wrap(v->bits, k);
    if (!why) v->type = to;
    return why;
}

int oq_idval_index(oq_idval v, int64_t *index)
{
    if (v.type != OQ_DTYPE_INT64 && v.type != OQ_DTYPE_INT32) return 0;
    *index = (int64_t)v.bits;
    return 1;
}

char *oq_idval_str(oq_idval v, char *buf, size_t n)
{
    const kind *k = kind_of(v.type);
    if (k && k->is_float) snprintf(buf, n, "%.*g", v.type == OQ_DTYPE_FLOAT64 ? 17 : 9, v.f);
    else if (k && !k->is_signed) snprintf(buf, n, "%llu", (unsigned long long)v.bits);
    else snprintf(buf, n, "%lld", (long long)(int64_t)v.bits);
    return buf;
}
