/* Internal pieces of the Attention reference (not installed): row conversion
 * between tensors and float64, the broadcast attention mask, and the float64
 * inner kernels. */
#ifndef ORTQUAL_REFERENCE_ATTENTION_IMPL_H
#define ORTQUAL_REFERENCE_ATTENTION_IMPL_H

#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* n elements of a float tensor from element offset `off`, as float64. */
void oq_ref_load_row(const oq_tensor *t, int64_t off, int64_t n, double *dst);
/* n float64 values rounded once (to nearest even) into t's dtype at element offset `off`. */
void oq_ref_store_row(oq_tensor *t, int64_t off, int64_t n, const double *src);

/* attn_mask broadcast to [B, Hq, Lq, T]; t == NULL when there is none. */
typedef struct oq_ref_mask {
    const oq_tensor *t;
    int64_t stride[3]; /* element strides for b, h, i (0 where broadcast) */
    int64_t len;       /* mask length along the key axis (<= T; keys past it are -inf) */
} oq_ref_mask;

/* Check `mask` (may be NULL) against target [B, Hq, Lq, T] and fill m. */
oq_status oq_ref_mask_init(oq_ref_mask *m, const oq_tensor *mask, const int64_t target[4],
                           oq_err *err);
/* Add the mask row (b, h, i) to s[0..end): float values added, bool false and
 * keys beyond the mask's length set to -inf. */
void oq_ref_mask_add(const oq_ref_mask *m, int64_t b, int64_t h, int64_t i, int64_t end,
                     double *s);

/* Scores of `rows` (1..4) consecutive query rows q[r*D ..] against one kv head:
 * s[r*ld + j] = sum_d q[r*D + d] * kt[d*T + j] for j < ns (kt is [D, T]). */
__attribute__((visibility("hidden"))) void oq_ref_scores(const double *q, int rows, const double *kt, int64_t T, int64_t D, int64_t ns,
                   double *s, int64_t ld);
/* Softmax numerator over s[0..end) in place: s[j] = exp(s[j] - max). Returns
 * the sum of the weights: 0 when every key is masked (s zeroed), NaN when a
 * score is NaN. */
__attribute__((visibility("hidden"))) double oq_ref_softmax_exp(double *s, int64_t end);
/* acc[r*Dv + d] = sum_{j < end} s[r*ld + j] * v[j*Dv + d] for `rows` (1..4) rows. */
__attribute__((visibility("hidden"))) void oq_ref_weighted(const double *s, int64_t ld, int rows, int64_t end, const double *v,
                     int64_t Dv, double *acc);

#endif
