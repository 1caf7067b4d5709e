/* Validation: run a model over events and configurations and judge each one
 * against the first (the reference), batch by batch.
 *
 * The orchestrator (oq_validate_run) generates or loads the events, checks
 * every batch against the mask contract BEFORE any model runs, writes
 * inputs_NNN.npz and the ONNX files into the output directory, then runs each
 * configuration through a worker: a child process (the ortqual tool
 * re-executed with `validate --worker PLAN`) with a time limit, or in-process
 * when isolation is off. A worker writes a result JSON; the orchestrator
 * gathers everything into summary.json (schema "ortqual.validate/1", see
 * docs/summary-schema.md).
 */
#ifndef ORTQUAL_VALIDATE_H
#define ORTQUAL_VALIDATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ortqual/config.h"
#include "ortqual/events.h"
#include "ortqual/export.h"
#include "ortqual/shard.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OQ_VALIDATE_SCHEMA "ortqual.validate/1"

typedef enum oq_model_kind {
    OQ_MODEL_ENCODER = 0, /* ortqual's particle-flow encoder, exported per configuration */
    OQ_MODEL_SDPA,        /* one attention layer, exported per configuration */
    OQ_MODEL_USER         /* the user's --model file */
} oq_model_kind;

typedef struct oq_validate_opts {
    oq_model_kind kind;
    /* OQ_MODEL_USER */
    const char *model_path;
    const char *features_name, *mask_name; /* NULL: detected (rank-3 float, rank-2) */
    /* OQ_MODEL_ENCODER */
    oq_encoder_config encoder;
    const char *weights_path; /* NULL: random weights from weights_seed */
    uint64_t weights_seed;
    /* OQ_MODEL_SDPA: heads, kv_heads, head_dim (layout 3); format and dtype come per config */
    oq_sdpa_config sdpa;
    int static_shapes;        /* export with the batches' fixed B, L (one shape for all) */
    oq_mask_form mask_form;   /* how exported attention excludes padded keys (AUTO by default) */
    int elu_op;               /* encoder: the ONNX Elu operator instead of standard ops */

    /* events: saved batches, or generated with `events` */
    size_t n_input_files;
    const char *const *input_files;
    oq_events_opts events;

    /* configurations; configs[0] is the reference */
    size_t n_configs;
    const oq_config *configs;
    size_t n_required;        /* configs whose skip counts as a failure */
    const char *const *required;
    int repeat, warmup;
    const char *tolerances;   /* "out:rtol=..,atol=..;..." overrides */

    /* dispatch and placement (CUDA) */
    size_t n_expect_kernel;   /* NODE=KERNEL rules */
    const char *const *expect_kernel;
    int require_dispatch;     /* unverified kernel expectation is a failure */
    int prove_teeth;          /* rerun a passing dispatch check with MATH forced */
    int require_full_gpu, strict_placement;
    int profile;              /* record the provider profile (nodes and time per EP) */

    /* output */
    const char *outdir;
    int save_outputs, overwrite, plots;

    /* sharding (ortqual/shard.h): prepare the shards, or run one of them */
    oq_shard_spec shard;

    /* isolation */
    int isolate;
    double timeout_s;
    const char *self_exe;     /* the ortqual binary to re-execute as worker */

    /* runtime */
    const char *ort_lib;
    const char *reference_ort_lib; /* ORT library of configs[0], for cross-version replay:
                                      NULL: as ort_lib; "": the default search */
    size_t n_ep_libs;
    const char *const *ep_lib_names, *const *ep_lib_paths;
    size_t n_ep_options;
    const char *const *ep_option_keys, *const *ep_option_values;

    /* progress lines for people (may be NULL) */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
    /* the command line, recorded as evidence */
    int argc;
    char **argv;
} oq_validate_opts;

void oq_validate_opts_default(oq_validate_opts *o);

/* Runs everything. On OQ_OK, *summary is the summary JSON (also written to
 * outdir/summary.json) and *exit_status is 0 (all passed) or 1 (a
 * configuration failed qualification). Usage or input errors (bad mask,
 * unreadable inputs, impossible configurations) return a status before any
 * model runs, with an error record written to outdir/error.json.
 * With o->shard.prepare, *summary is the shard plan (outdir/shards/plan.json) and nothing
 * runs; with o->shard.count alone, the run is shard o->shard.index and writes into
 * outdir/shards/<index>/ (see ortqual/shard.h). */
oq_status oq_validate_run(const oq_validate_opts *o, json_t **summary, int *exit_status,
                          oq_err *err);

/* The worker side: run the plan file written by oq_validate_run and write its
 * result file. Returns OQ_OK when the result was written (whatever it says). */
oq_status oq_validate_worker(const char *plan_path, oq_err *err);

/* ---- sharded runs (ortqual/shard.h) ---- */

/* Why a shard is not in a merge. */
typedef enum oq_shard_state {
    OQ_SHARD_MISSING = 0,  /* outdir/shards/I does not exist: it never started */
    OQ_SHARD_UNFINISHED,   /* started, no summary: killed, timed out or crashed */
    OQ_SHARD_FAILED        /* stopped before running with an error record (error.json) */
} oq_shard_state;

typedef struct oq_shard_problem {
    int32_t index;
    oq_shard_state state;
    char detail[512];      /* one line: where and when it started, its error, its log */
} oq_shard_problem;

typedef struct oq_merge_result {
    int exit_status;             /* 0: every configuration passed; 1: failed or incomplete */
    int32_t shards;              /* N */
    size_t n_problems;           /* shards that did not report */
    oq_shard_problem *problems;  /* owned; oq_merge_result_clear frees */
    char plan_hash[65];
} oq_merge_result;

const char *oq_shard_state_name(oq_shard_state s);

/* Merges outdir/shards/I/summary.json (I = 0..N-1) into outdir/summary.json, validate.csv
 * and, with `plots`, plots/. Shards that did not report are listed in `res` (and in the
 * summary) and make the verdict "failed": a missing shard is never a pass. Returns
 * OQ_ERR_NOT_FOUND when outdir/shards/plan.json does not exist and OQ_ERR_FORMAT when a
 * shard's summary belongs to another plan (nothing is written then); OQ_OK whenever
 * outdir/summary.json was written. */
oq_status oq_validate_merge(const char *outdir, int plots, oq_merge_result *res, oq_err *err);
void oq_merge_result_clear(oq_merge_result *res);

/* ---- estimates for larger plans (docs/scale-out.md) ---- */

typedef struct oq_estimate_opts {
    int64_t events;        /* E, events of the larger plan */
    int32_t configs;       /* K, configurations with the reference (0: as measured) */
    int32_t workers;       /* G, tasks running at once (nodes x GPUs per node) */
    int32_t shards;        /* N (0: G, one wave) */
    int repeat, warmup;    /* timed and warm-up calls per batch (-1: as measured) */
    const char *only;      /* model the others on measured configurations whose name starts
                              with this (e.g. "cuda:"); NULL: all measured */
} oq_estimate_opts;

typedef struct oq_estimate_config {
    char name[OQ_CONFIG_NAME_MAX];
    double fixed_s;        /* once per task: process, runtime, session, first-call warm-up */
    double per_event_s;    /* every further event: its batch's calls, comparison and I/O */
} oq_estimate_config;

typedef struct oq_estimate {
    size_t n_configs;             /* measured configurations used, the reference first */
    oq_estimate_config *configs;  /* owned */
    int64_t measured_events;
    int32_t n_total_configs;      /* K */
    int32_t shards, waves;        /* N, ceil(N / G) */
    int64_t events_per_shard;     /* ceil(E / N) */
    double shard_fixed_s, shard_events_s, shard_s; /* one task: fixed + per-event parts */
    double wall_s;                /* waves x shard_s (queue waits, prepare and merge apart) */
    double worker_hours;          /* N x shard_s, in hours */
} oq_estimate;

/* Models E events x K configurations split by batch into N shards on G workers from the
 * per-batch costs of a measured summary.json (a probe run with the larger plan's batch size
 * and lengths): each shard runs every configuration on its E/N events; the reference costs as
 * measured, the other K-1 configurations like the mean of those measured. */
oq_status oq_validate_estimate(const char *summary_path, const oq_estimate_opts *o, oq_estimate *out,
                               oq_err *err);
void oq_estimate_clear(oq_estimate *e);

/* Default demo configurations that can run with what `has_cuda` says. */
size_t oq_validate_demo_configs(int has_cuda, oq_config *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
