/* Statistics of samples (timings): mean, standard deviation, extremes and
 * percentiles computed the way numpy does, so results can be checked with it; and sums kept
 * exactly, whose value does not depend on the order the terms were added in.
 *
 *     oq_stats s;
 *     if (oq_stats_compute(samples_ms, n, &s, &err) == OQ_OK)
 *         printf("median %.3f ms, p99 %.3f ms\n", s.p50, s.p99);
 *
 *     oq_fsum sq = {0};                      a zeroed oq_fsum is 0
 *     for (...) oq_fsum_add(&sq, d * d);
 *     double total = oq_fsum_value(&sq);     the true sum, rounded once
 */
#ifndef ORTQUAL_STATS_H
#define ORTQUAL_STATS_H

#include <stddef.h>
#include <stdint.h>

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

/* An exact sum of doubles: the true sum of every term added, held as non-overlapping parts of
 * increasing magnitude (Shewchuk's expansion, as Python's math.fsum keeps it). Its value is that
 * sum rounded once, so the same terms added in any order or grouping give the same double: the
 * batches of one run, or the shards of a split one merged (a double sum's last bits followed the
 * order, and summary.json writes every bit). A NaN or infinite term, or a sum past the largest
 * double, makes the value that non-finite value. Plain data: copied by assignment. */
#define OQ_FSUM_PARTS 64
typedef struct oq_fsum {
    int32_t n;                   /* parts in use */
    double part[OQ_FSUM_PARTS];  /* smallest magnitude first */
    double special;              /* the non-finite terms' sum (0: none) */
} oq_fsum;

/* Add x to s (NULL: nothing). Sums of real data keep 2 or 3 parts; past OQ_FSUM_PARTS the two
 * smallest are added in double, an error below 2^-100 of the largest part. */
OQ_API void oq_fsum_add(oq_fsum *s, double x);
/* Add every term of `from` to `into` (either NULL: nothing). */
OQ_API void oq_fsum_merge(oq_fsum *into, const oq_fsum *from);
/* The sum, correctly rounded to a double; NaN for a NULL s. */
OQ_API double oq_fsum_value(const oq_fsum *s);

#ifdef __cplusplus
}
#endif
#endif
