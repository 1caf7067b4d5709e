/* Statistics of samples (timings): mean, standard deviation, extremes and
 * percentiles computed the way numpy does, so results can be checked with it.
 *
 *     oq_stats s;
 *     if (oq_stats_compute(samples_ms, n, &s, &err) == OQ_OK)
 *         printf("median %.3f ms, p99 %.3f ms\n", s.p50, s.p99);
 */
#ifndef ORTQUAL_STATS_H
#define ORTQUAL_STATS_H

#include <stddef.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oq_stats {
    size_t n;
    double mean, std; /* std: sample standard deviation (n - 1); NaN when n == 1 (undefined) */
    double min, max;
    double p50, p90, p95, p99, p999; /* p999: the 99.9th percentile */
} oq_stats;

/* Percentile p (0..100) of `sorted` (ascending, n >= 1) by linear
 * interpolation between closest ranks: rank h = (n - 1) * p / 100, value
 * x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]) -- numpy's
 * default ("linear"), so results can be checked against numpy.percentile. NaN for a NULL
 * `sorted`. */
OQ_API double oq_percentile_sorted(const double *sorted, size_t n, double p);

/* Statistics of n >= 1 samples (any order; the array is not modified).
 * Errors: OQ_ERR_INVALID_ARG (n == 0, a non-finite sample), OQ_ERR_NOMEM. */
OQ_API oq_status oq_stats_compute(const double *samples, size_t n, oq_stats *out, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
