/* Statistics of per-iteration timing samples. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/stats.h"
#include "status/args-impl.h"

double oq_percentile_sorted(const double *sorted, size_t n, double p)
{
    if (!sorted) return NAN;
    OQ_ASSERT(n >= 1);
    if (p <= 0) return sorted[0];
    if (p >= 100) return sorted[n - 1];
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

oq_status oq_stats_compute(const double *samples, size_t n, oq_stats *out,
                                 oq_err *err)
{
    OQ_NEED_N(err, n, samples);
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    if (n == 0) return oq_err_set(err, OQ_ERR_INVALID_ARG, "statistics of zero samples");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(samples[i]))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "sample %zu is not finite", i);
    double *s = malloc(n * sizeof *s);
    if (!s) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += s[i];
    double mean = sum / (double)n, ss = 0;
    /* Two passes: the sum of squared deviations stays accurate when the
     * spread is tiny compared with the mean (typical of timings). */
    for (size_t i = 0; i < n; i++) ss += (s[i] - mean) * (s[i] - mean);
    out->n = n;
    out->mean = mean;
    out->std = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN; /* one sample has no spread to estimate */
    out->min = s[0];
    out->max = s[n - 1];
    out->p50 = oq_percentile_sorted(s, n, 50);
    out->p90 = oq_percentile_sorted(s, n, 90);
    out->p95 = oq_percentile_sorted(s, n, 95);
    out->p99 = oq_percentile_sorted(s, n, 99);
    out->p999 = oq_percentile_sorted(s, n, 99.9);
    free(s);
    return OQ_OK;
}
