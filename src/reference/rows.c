/* Row conversion between tensors and float64, and the broadcast attention mask. */
#include <math.h>
#include <string.h>

#include "reference/reference-impl.h"
#include "tensor/half-impl.h"

void oq_ref_load_row(const oq_tensor *t, int64_t off, int64_t n, double *dst)
{
    switch (t->dtype) {
    case OQ_DTYPE_FLOAT32: {
        const float *p = (const float *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = p[i];
        break;
    }
    case OQ_DTYPE_FLOAT64:
        memcpy(dst, (const double *)t->data + off, (size_t)n * sizeof *dst);
        break;
    case OQ_DTYPE_FLOAT16: {
        const oq_half *p = (const oq_half *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = (double)p[i];
        break;
    }
    case OQ_DTYPE_BFLOAT16: {
        const uint16_t *p = (const uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = oq_bf16_bits_to_f32(p[i]);
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) dst[i] = oq_tensor_get_f64(t, off + i);
        break;
    }
}

/* float64 -> bfloat16 rounded once: truncate to float with a sticky bit
 * (round to odd), which makes the second rounding to 8 bits exact-correct. */
static uint16_t f64_to_bf16_bits(double x)
{
    if (isnan(x) || isinf(x)) return oq_f32_to_bf16_bits((float)x);
    float f = (float)x;
    if (fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);
    if ((double)f != x) {
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        u |= 1u;
        memcpy(&f, &u, sizeof f);
    }
    return oq_f32_to_bf16_bits(f);
}

void oq_ref_store_row(oq_tensor *t, int64_t off, int64_t n, const double *src)
{
    switch (t->dtype) {
    case OQ_DTYPE_FLOAT32: {
        float *p = (float *)t->data + off;
        for (int64_t i = 0; i < n; i++) p[i] = (float)src[i];
        break;
    }
    case OQ_DTYPE_FLOAT64:
        memcpy((double *)t->data + off, src, (size_t)n * sizeof *src);
        break;
    case OQ_DTYPE_FLOAT16: {
        oq_half *p = (oq_half *)t->data + off;
        for (int64_t i = 0; i < n; i++) p[i] = (oq_half)src[i];
        break;
    }
    case OQ_DTYPE_BFLOAT16: {
        uint16_t *p = (uint16_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) p[i] = f64_to_bf16_bits(src[i]);
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(t, off + i, src[i]);
        break;
    }
}

oq_status oq_ref_mask_init(oq_ref_mask *m, const oq_tensor *mask, const int64_t target[4],
                           oq_err *err)
{
    static const char *axis_name[3] = {"batch", "q heads", "q sequence"};
    memset(m, 0, sizeof *m);
    if (!mask) return OQ_OK;
    if (mask->dtype != OQ_DTYPE_BOOL && mask->dtype != OQ_DTYPE_FLOAT32 &&
        mask->dtype != OQ_DTYPE_FLOAT16 && mask->dtype != OQ_DTYPE_BFLOAT16 &&
        mask->dtype != OQ_DTYPE_FLOAT64)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "Attention attn_mask has dtype %s (bool or float expected)",
                          oq_dtype_name(mask->dtype));
    if (mask->ndim < 1 || mask->ndim > 4)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention attn_mask has rank %d (1..4, broadcast to [B, q_heads, "
                          "q_len, total_len])",
                          mask->ndim);
    const int r = mask->ndim;
    int64_t stride = 1;
    m->len = mask->shape[r - 1];
    if (m->len > target[3])
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "Attention attn_mask last axis is %lld, longer than the total kv "
                          "length %lld",
                          (long long)m->len, (long long)target[3]);
    stride = m->len;
    for (int ax = 2; ax >= 0; ax--) {
        int mx = ax - (4 - r);
        if (mx < 0) continue;
        int64_t dim = mask->shape[mx];
        if (dim == target[ax])
            m->stride[ax] = target[ax] == 1 ? 0 : stride;
        else if (dim == 1)
            m->stride[ax] = 0;
        else
            return oq_err_set(err, OQ_ERR_SHAPE,
                              "Attention attn_mask axis %d is %lld: it must be 1 or %lld (%s) to "
                              "broadcast",
                              mx, (long long)dim, (long long)target[ax], axis_name[ax]);
        stride *= dim;
    }
    m->t = mask;
    return OQ_OK;
}

void oq_ref_mask_add(const oq_ref_mask *m, int64_t b, int64_t h, int64_t i, int64_t j0,
                     int64_t j1, double *s)
{
    const int64_t off = b * m->stride[0] + h * m->stride[1] + i * m->stride[2] + j0;
    const int64_t n = (m->len < j1 ? m->len : j1) - j0;
    switch (m->t->dtype) {
    case OQ_DTYPE_BOOL: {
        const uint8_t *p = (const uint8_t *)m->t->data + off;
        for (int64_t j = 0; j < n; j++)
            if (!p[j]) s[j] = -INFINITY;
        break;
    }
    case OQ_DTYPE_FLOAT32: {
        const float *p = (const float *)m->t->data + off;
        for (int64_t j = 0; j < n; j++) s[j] += p[j];
        break;
    }
    case OQ_DTYPE_FLOAT64: {
        const double *p = (const double *)m->t->data + off;
        for (int64_t j = 0; j < n; j++) s[j] += p[j];
        break;
    }
    default:
        for (int64_t j = 0; j < n; j++) s[j] += oq_tensor_get_f64(m->t, off + j);
        break;
    }
    for (int64_t j = n > 0 ? n : 0; j < j1 - j0; j++) s[j] = -INFINITY;
}
