/* float64 inner kernels of the Attention reference.
 *
 * Written with GCC/Clang vector extensions (8 doubles per vector) so that the
 * hot loops keep their accumulators in registers; target_clones compiles an
 * AVX-512 and an AVX2 variant beside the baseline, picked at load time. The
 * exponential is a vectorized one accurate to about 1 ulp (see vexp), since a
 * libm call per score would dominate the run time. */
#include <math.h>
#include <string.h>

#include "reference/attention-impl.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define OQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OQ_CLONES
#endif

/* The vector helpers are always inlined into the cloned kernels, so no vector
 * ever crosses a call boundary and the psabi note does not apply. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define OQ_INLINE static inline __attribute__((always_inline))

typedef double v8d __attribute__((vector_size(64), aligned(8)));
typedef int64_t v8i __attribute__((vector_size(64), aligned(8)));

OQ_INLINE v8d load8(const double *p)
{
    v8d x;
    memcpy(&x, p, sizeof x);
    return x;
}

OQ_INLINE void store8(double *p, v8d x)
{
    memcpy(p, &x, sizeof x);
}

/* A shuffle of lane 0 compiles to one broadcast; GCC 12 expands a vector
 * literal {x, x, ...} inside a target_clones function into eight masked ones. */
OQ_INLINE v8d splat8(double x)
{
#if defined(__clang__)
    const v8d v = {x};
    return __builtin_shufflevector(v, v, 0, 0, 0, 0, 0, 0, 0, 0);
#else
    return __builtin_shuffle((v8d){x}, (v8i){0});
#endif
}

/* Lane-wise choice: mask lanes (all ones) from a, the others from b. */
OQ_INLINE v8d select8(v8i mask, v8d a, v8d b)
{
    return (v8d)(((v8i)a & mask) | ((v8i)b & ~mask));
}

OQ_INLINE double hsum8(v8d x)
{
    return ((x[0] + x[4]) + (x[1] + x[5])) + ((x[2] + x[6]) + (x[3] + x[7]));
}

/* exp(x) for x <= 0 (scores minus their maximum), -inf and NaN included.
 * x = k ln2 + r with |r| <= ln2/2 (Cody-Waite, two-part ln2), exp(r) by its
 * Taylor series to degree 13 (truncation error < 1e-17 relative), times 2^k
 * built in the exponent bits. Below -708 the result would be subnormal: it is
 * returned as 0, which is below any weight that can change a float64 sum. */
OQ_INLINE v8d vexp(v8d x)
{
    const double shifter = 0x1.8p52;
    const v8i live = x >= splat8(-708.0); /* false for -inf and NaN */
    const v8i nan = x != x;
    const v8d xc = select8(live, x, splat8(-708.0));
    const v8d t = xc * splat8(0x1.71547652b82fep0) + splat8(shifter);
    const v8d k = t - splat8(shifter);
    const v8d r = (xc - k * splat8(0x1.62e42fefa3800p-1)) - k * splat8(0x1.ef35793c7673p-45);
    v8d p = splat8(1.0 / 6227020800.0);
    p = p * r + splat8(1.0 / 479001600.0);
    p = p * r + splat8(1.0 / 39916800.0);
    p = p * r + splat8(1.0 / 3628800.0);
    p = p * r + splat8(1.0 / 362880.0);
    p = p * r + splat8(1.0 / 40320.0);
    p = p * r + splat8(1.0 / 5040.0);
    p = p * r + splat8(1.0 / 720.0);
    p = p * r + splat8(1.0 / 120.0);
    p = p * r + splat8(1.0 / 24.0);
    p = p * r + splat8(1.0 / 6.0);
    p = p * r + splat8(0.5);
    p = p * r + splat8(1.0);
    p = p * r + splat8(1.0);
    const v8i ki = (v8i)t - (v8i)splat8(shifter);
    const v8d two_k = (v8d)((ki + 1023) << 52);
    const v8d e = p * two_k;
    return select8(nan, x, select8(live, e, splat8(0.0)));
}

/* Four query rows at once, accumulators named (not an array) so that they stay
 * in registers: each K load feeds four FMAs. */
OQ_INLINE void scores4(const double *q, const double *kt, int64_t T, int64_t D, int64_t j,
                       double *s, int64_t ld)
{
    v8d a00 = splat8(0.0), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00,
        a31 = a00;
    for (int64_t d = 0; d < D; d++) {
        const v8d k0 = load8(kt + d * T + j), k1 = load8(kt + d * T + j + 8);
        const v8d q0 = splat8(q[d]), q1 = splat8(q[D + d]), q2 = splat8(q[2 * D + d]),
                  q3 = splat8(q[3 * D + d]);
        a00 += q0 * k0;
        a01 += q0 * k1;
        a10 += q1 * k0;
        a11 += q1 * k1;
        a20 += q2 * k0;
        a21 += q2 * k1;
        a30 += q3 * k0;
        a31 += q3 * k1;
    }
    store8(s + j, a00);
    store8(s + j + 8, a01);
    store8(s + ld + j, a10);
    store8(s + ld + j + 8, a11);
    store8(s + 2 * ld + j, a20);
    store8(s + 2 * ld + j + 8, a21);
    store8(s + 3 * ld + j, a30);
    store8(s + 3 * ld + j + 8, a31);
}

OQ_CLONES
void oq_ref_scores(const double *q, int rows, const double *kt, int64_t T, int64_t D, int64_t ns,
                   double *s, int64_t ld)
{
    int64_t j = 0;
    if (rows == 4) {
        for (; j + 16 <= ns; j += 16) scores4(q, kt, T, D, j, s, ld);
    } else {
        for (int r = 0; r < rows; r++) {
            j = 0;
            const double *qr = q + r * D;
            double *sr = s + r * ld;
            for (; j + 16 <= ns; j += 16) {
                v8d a0 = splat8(0.0), a1 = splat8(0.0);
                for (int64_t d = 0; d < D; d++) {
                    const v8d qd = splat8(qr[d]);
                    a0 += qd * load8(kt + d * T + j);
                    a1 += qd * load8(kt + d * T + j + 8);
                }
                store8(sr + j, a0);
                store8(sr + j + 8, a1);
            }
        }
    }
    const int64_t tail = j;
    for (int r = 0; r < rows; r++)
        for (j = tail; j < ns; j++) {
            double a = 0.0;
            for (int64_t d = 0; d < D; d++) a += q[r * D + d] * kt[d * T + j];
            s[r * ld + j] = a;
        }
}

OQ_INLINE double row_max(const double *s, int64_t end)
{
    v8d m8 = splat8(-INFINITY);
    int64_t j = 0;
    for (; j + 8 <= end; j += 8) {
        v8d x = load8(s + j);
        m8 = select8(x > m8, x, m8);
    }
    double mx = -INFINITY;
    for (int k = 0; k < 8; k++) mx = m8[k] > mx ? m8[k] : mx;
    for (; j < end; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

OQ_CLONES
double oq_ref_softmax_exp(double *s, int64_t end)
{
    const double mx = row_max(s, end);
    if (mx == -INFINITY) {
        int has_nan = 0;
        for (int64_t j = 0; j < end; j++) has_nan |= isnan(s[j]);
        for (int64_t j = 0; j < end; j++) s[j] = has_nan ? NAN : 0.0;
        return has_nan ? NAN : 0.0;
    }
    v8d sum8 = splat8(0.0);
    const v8d m8 = splat8(mx);
    int64_t j = 0;
    for (; j + 8 <= end; j += 8) {
        v8d e = vexp(load8(s + j) - m8);
        store8(s + j, e);
        sum8 += e;
    }
    double sum = hsum8(sum8);
    for (; j < end; j++) {
        s[j] = exp(s[j] - mx);
        sum += s[j];
    }
    return sum;
}

/* acc[r][d0 .. d0+16) = sum_j s[r][j] * v[j][d0 ..] for four rows: each V load feeds four FMAs. */
OQ_INLINE void weighted4(const double *s, int64_t ld, int64_t end, const double *v, int64_t Dv,
                         int64_t d0, double *acc)
{
    v8d a00 = splat8(0.0), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00,
        a31 = a00;
    for (int64_t j = 0; j < end; j++) {
        const v8d v0 = load8(v + j * Dv + d0), v1 = load8(v + j * Dv + d0 + 8);
        const v8d p0 = splat8(s[j]), p1 = splat8(s[ld + j]), p2 = splat8(s[2 * ld + j]),
                  p3 = splat8(s[3 * ld + j]);
        a00 += p0 * v0;
        a01 += p0 * v1;
        a10 += p1 * v0;
        a11 += p1 * v1;
        a20 += p2 * v0;
        a21 += p2 * v1;
        a30 += p3 * v0;
        a31 += p3 * v1;
    }
    store8(acc + d0, a00);
    store8(acc + d0 + 8, a01);
    store8(acc + Dv + d0, a10);
    store8(acc + Dv + d0 + 8, a11);
    store8(acc + 2 * Dv + d0, a20);
    store8(acc + 2 * Dv + d0 + 8, a21);
    store8(acc + 3 * Dv + d0, a30);
    store8(acc + 3 * Dv + d0 + 8, a31);
}

OQ_CLONES
void oq_ref_weighted(const double *s, int64_t ld, int rows, int64_t end, const double *v,
                     int64_t Dv, double *acc)
{
    int64_t d0 = 0;
    if (rows == 4) {
        for (; d0 + 16 <= Dv; d0 += 16) weighted4(s, ld, end, v, Dv, d0, acc);
    } else {
        for (int r = 0; r < rows; r++) {
            d0 = 0;
            const double *sr = s + r * ld;
            double *ar = acc + r * Dv;
            for (; d0 + 16 <= Dv; d0 += 16) {
                v8d a0 = splat8(0.0), a1 = splat8(0.0);
                for (int64_t j = 0; j < end; j++) {
                    const v8d p = splat8(sr[j]);
                    a0 += p * load8(v + j * Dv + d0);
                    a1 += p * load8(v + j * Dv + d0 + 8);
                }
                store8(ar + d0, a0);
                store8(ar + d0 + 8, a1);
            }
        }
    }
    const int64_t tail = d0;
    for (int r = 0; r < rows; r++)
        for (d0 = tail; d0 < Dv; d0++) {
            double a = 0.0;
            for (int64_t j = 0; j < end; j++) a += s[r * ld + j] * v[j * Dv + d0];
            acc[r * Dv + d0] = a;
        }
}
