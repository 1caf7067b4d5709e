/* float64 inner kernels of the Attention reference. Written as plain loops
 * with unit stride so that the compiler vectorizes them; target_clones builds
 * an AVX-512 and an AVX2 variant beside the baseline, picked at load time. */
#include <math.h>
#include <string.h>

#include "reference/attention-impl.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define OQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OQ_CLONES
#endif

OQ_CLONES
void oq_ref_scores(const double *q, const double *kt, int64_t T, int64_t D, int64_t ns, double *s)
{
    for (int64_t j = 0; j < ns; j++) s[j] = 0.0;
    for (int64_t d = 0; d < D; d++) {
        const double qd = q[d];
        const double *restrict k = kt + d * T;
        double *restrict out = s;
        for (int64_t j = 0; j < ns; j++) out[j] += qd * k[j];
    }
}

OQ_CLONES
double oq_ref_softmax_weighted(double *s, int64_t end, const double *v, int64_t Dv, double *acc)
{
    double mx = -INFINITY;
    for (int64_t j = 0; j < end; j++) mx = s[j] > mx ? s[j] : mx;
    for (int64_t d = 0; d < Dv; d++) acc[d] = 0.0;
    if (mx == -INFINITY) {
        for (int64_t j = 0; j < end; j++)
            if (isnan(s[j])) {
                for (int64_t d = 0; d < Dv; d++) acc[d] = NAN;
                return NAN;
            }
        for (int64_t j = 0; j < end; j++) s[j] = 0.0;
        return 0.0;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < end; j++) {
        s[j] = exp(s[j] - mx);
        sum += s[j];
    }
    for (int64_t j = 0; j < end; j++) {
        const double p = s[j];
        const double *restrict vr = v + j * Dv;
        double *restrict a = acc;
        for (int64_t d = 0; d < Dv; d++) a[d] += p * vr[d];
    }
    return sum;
}
