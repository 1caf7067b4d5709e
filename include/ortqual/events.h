/* Synthetic events for tests and benchmarks: reproducible lengths, features and masks.
 *
 * A run is `num_events` distinct events split, in order, into batches of
 * `batch_size` (the last batch may be smaller). Each event has a length set by
 * the length policy; a batch is padded to a common length (see below) and
 * comes as features `[B, L, num_features]` (random normal on valid positions,
 * exactly zero on padding) plus a mask `[B, L]` that satisfies the mask contract.
 *
 *     oq_events_opts o = oq_events_opts_default();
 *     o.num_events = 10; o.batch_size = 4; o.num_features = 16;
 *     oq_length_policy_parse("uniform 8 64", &o, &err);
 *     oq_events *ev;
 *     oq_events_create(&o, &ev, &err);
 *     for (int64_t k = 0; k < oq_events_batch_count(ev); k++) {
 *         oq_tensor *x, *mask;
 *         int64_t idx[4];
 *         oq_events_make_batch(ev, k, &x, &mask, idx, &err);   // batches of 4, 4, 2
 *         ...
 *         oq_tensor_free(x); oq_tensor_free(mask);
 *     }
 *     oq_events_free(ev);
 *
 * Length policies (max_len is also the tensor length of fixed and fraction):
 *   fixed        every event is max_len long
 *   balanced     within every batch the lengths are spread evenly from min_len
 *                to max_len (event j of n: min + round(j*(max-min)/(n-1))), so
 *                each batch carries the same mix of work; with batch_size 1 the
 *                spread runs over the run's events instead (event e of
 *                num_events); a batch or run of one event: round((min+max)/2)
 *   uniform      each length uniform on the integers min_len..max_len
 *   fraction F   each length round((1-F) * max_len), F = share of padding in [0, 1);
 *                the batch is padded to max_len so the share is really padding
 * Padded length of a batch: max_len when the policy is fixed or fraction or
 * opts.pad_to_max_len is set (static shapes), else the batch's longest event;
 * then rounded up to a multiple of pad_bin_size when that is > 1.
 *
 * Random numbers (reproducible across platforms and compilers): xoshiro256**
 * (Blackman & Vigna 2018) whose 256-bit state is filled by four splitmix64
 * steps from a per-stream start value mix(seed + mix(stream + 1)), where mix is
 * splitmix64's output function. Stream 0 draws lengths (uniform policy: one
 * draw per event, in order, unbiased by rejection); stream e+1 draws event e's
 * features, so an event's values do not depend on batch size or padding.
 * Normals come from Box-Muller pairs, u1 = (k+1)/2^53 in (0, 1],
 * u2 = k/2^53 in [0, 1) from the top 53 bits of consecutive draws:
 * z = sqrt(-2 ln u1) * cos(2 pi u2), then sin(...) for the next value. The
 * integer streams are bit-identical everywhere; normals are as exact as the
 * platform's log/sqrt/cos/sin (glibc's are correctly rounded in practice).
 * The same options give the same events; a different seed gives different ones.
 */
#ifndef ORTQUAL_EVENTS_H
#define ORTQUAL_EVENTS_H

#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The generator described above, public so other synthetic inputs (attention
 * q/k/v, weights) can use the same reproducible streams. Plain value type. */
typedef struct oq_rng {
    uint64_t s[4];
    double spare; /* second value of the last Box-Muller pair */
    int has_spare;
} oq_rng;

/* Start stream `stream` of `seed`. */
OQ_API void oq_rng_seed(oq_rng *r, uint64_t seed, uint64_t stream);
/* The next 64 random bits; 0 for a NULL generator. */
OQ_API uint64_t oq_rng_next(oq_rng *r);
/* Uniform on the integers lo..hi (lo <= hi), without modulo bias; lo for a NULL generator. */
OQ_API int64_t oq_rng_uniform_int(oq_rng *r, int64_t lo, int64_t hi);
/* Standard normal (Box-Muller); 0 for a NULL generator. */
OQ_API double oq_rng_normal(oq_rng *r);

typedef enum oq_length_policy {
    OQ_LENGTH_FIXED = 0,
    OQ_LENGTH_BALANCED,
    OQ_LENGTH_UNIFORM,
    OQ_LENGTH_FRACTION
} oq_length_policy;

typedef struct oq_events_opts {
    uint64_t seed;
    int64_t num_events;     /* >= 1 */
    int64_t batch_size;     /* >= 1 */
    int64_t num_features;   /* >= 1: features are [B, L, num_features] */
    oq_length_policy policy;
    int64_t min_len;        /* balanced, uniform: 1..max_len */
    int64_t max_len;        /* >= 1 */
    double fraction;        /* fraction: share of padding in [0, 1) */
    int64_t pad_bin_size;   /* >= 0; 0 and 1 mean no rounding */
    int pad_to_max_len;     /* 1: every batch is padded to max_len (before bin rounding) */
    oq_dtype mask_dtype;    /* any dtype the mask contract accepts (bool, float, int) */
    oq_dtype feature_dtype; /* float32, float16, bfloat16 or float64 */
} oq_events_opts;

/* seed 12345, 8 events, batches of 4, 16 features, fixed length 64, no bins,
 * float32 mask and features. */
OQ_API oq_events_opts oq_events_opts_default(void);

/* "fixed", "fixed 128", "balanced", "balanced 8 64", "uniform 8 64", "fraction 0.25";
 * ':' works as a separator too ("uniform:8:64"). Sets policy and the lengths
 * or fraction it names in *opts (nothing on error). OQ_ERR_INVALID_ARG quotes
 * the text and says what was expected. */
OQ_API oq_status oq_length_policy_parse(const char *text, oq_events_opts *opts, oq_err *err);
/* "fixed", "balanced", "uniform", "fraction". */
OQ_API const char *oq_length_policy_name(oq_length_policy p);

typedef struct oq_events oq_events;

/* Validate the options (OQ_ERR_INVALID_ARG naming the field) and draw every
 * event's length. Free with oq_events_free. */
OQ_API oq_status oq_events_create(const oq_events_opts *opts, oq_events **out, oq_err *err);
OQ_API void oq_events_free(oq_events *ev);

/* For a NULL ev the counts are 0 and the lengths NULL. */
OQ_API int64_t oq_events_count(const oq_events *ev);
/* Length of every event, num_events entries, owned by ev. */
OQ_API const int64_t *oq_events_lengths(const oq_events *ev);
OQ_API int64_t oq_events_batch_count(const oq_events *ev);

/* Size and padded length of batch k without building it (either pointer may be NULL). */
OQ_API oq_status oq_events_batch_shape(const oq_events *ev, int64_t batch, int64_t *batch_size,
                                       int64_t *padded_len, oq_err *err);

/* Build batch k: *features [B, L, F] (feature_dtype, named "features") and
 * *mask [B, L] (mask_dtype, named "mask"), both new and owned by the caller.
 * event_indices_out (NULL or B entries) receives the events' global indices.
 * Either tensor pointer may be NULL when that tensor is not wanted. */
OQ_API oq_status oq_events_make_batch(const oq_events *ev, int64_t batch, oq_tensor **features,
                                      oq_tensor **mask, int64_t *event_indices_out, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
