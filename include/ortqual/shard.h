/* Sharded validation: one plan split over N runs (the tasks of a SLURM job array, or any
 * machines sharing a file system), merged into one verdict.
 *
 * The split has three steps, all on one output directory D:
 *
 *   1. prepare, once (oq_validate_opts.shard = {.count = N, .prepare = 1}): the batches are
 *      generated or loaded, checked against the mask contract and written to D/inputs_NNN.npz
 *      exactly as an unsharded run writes them, the ONNX files are exported, and
 *      D/shards/plan.json records the plan (its identity: every configuration's worker plan
 *      with its files named by SHA-256, every batch with the SHA-256 of its file) and which
 *      batches and configurations each shard runs. No model runs; a bad mask stops everything
 *      before any node is used.
 *   2. shard I (shard = {.count = N, .index = I}), anywhere: reads D/shards/plan.json, checks
 *      that its own options make the same plan (same identity) and that its batch files have
 *      the recorded SHA-256, writes D/shards/I/started.json, runs its part, and writes a
 *      complete summary (schema ortqual.validate/1 with a "shard" block) into D/shards/I/.
 *   3. merge, once all have ended (oq_validate_merge in validate.h): one D/summary.json (and
 *      validate.csv, plots) whose verdict and per-batch figures equal those of an unsharded
 *      run of the plan.
 *
 * By batch (the default), shard I runs every configuration on a contiguous range of batches,
 * so each batch's reference is computed once. By configuration, shard I runs the reference
 * and a contiguous range of the other configurations on every batch (for matrices whose
 * configurations need different nodes); each shard then computes the reference itself.
 */
#ifndef ORTQUAL_SHARD_H
#define ORTQUAL_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OQ_SHARD_PLAN_SCHEMA "ortqual.shards/2"
/* A shard's started.json: the shard block of its summary, written when it starts. */
#define OQ_SHARD_STARTED_SCHEMA "ortqual.shard/1"

typedef enum oq_shard_by { OQ_SHARD_BY_BATCH = 0, OQ_SHARD_BY_CONFIG } oq_shard_by;

typedef struct oq_shard_spec {
    int32_t count;  /* N; 0: not sharded */
    int32_t index;  /* this shard, 0..N-1 (ignored with prepare) */
    oq_shard_by by;
    int prepare;    /* step 1: prepare D/shards/plan.json and run nothing */
} oq_shard_spec;

/* "batch" | "config"; parse returns -1 for anything else (NULL too). */
OQ_API const char *oq_shard_by_name(oq_shard_by by);
OQ_API int oq_shard_by_parse(const char *s);
/* "I/N" into index and count (0 <= I < N); OQ_ERR_INVALID_ARG naming the text otherwise. */
OQ_API oq_status oq_shard_parse(const char *text, oq_shard_spec *spec, oq_err *err);

/* The items shard `index` of `count` runs out of `items` (batches, or the configurations
 * besides the reference): [*lo, *hi), contiguous, so shard order is item order, and the
 * shards' sizes differ by one at most. count 0 (not sharded, as in oq_shard_spec): every
 * item, [0, items). */
OQ_API void oq_shard_range(int32_t count, int32_t index, size_t items, size_t *lo, size_t *hi);

/* The file shard `index` locks in its output folder besides the folder's own lock, which the
 * shards of a split hold shared (oq_outdir_lock_create's name, fileio.h): ".ortqual.shard-I.lock"
 * into buf (n bytes; 32 hold any index). buf NULL or n 0: nothing is written. */
OQ_API void oq_shard_lock_name(int32_t index, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
