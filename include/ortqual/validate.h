/* Validation: run a model over events and configurations and judge each one
 * against the first (the reference), batch by batch.
 *
 * The orchestrator (oq_validate_run) generates or loads the events, checks
 * every batch against the mask contract BEFORE any model runs, writes
 * inputs_NNN.npz and the ONNX files into the output directory, then runs each
 * configuration through a worker: a child process (the ortqual tool
 * re-executed with `validate --worker PLAN`) with a time limit, or in-process
 * when isolation is off. The worker reports in the same types the caller gets
 * back: an oq_config_result per configuration, with verdicts as enums and
 * flags. The orchestrator gathers them into an oq_validate_summary and writes
 * summary.json from it (schema "ortqual.validate/1", docs/summary-schema.md).
 *
 * The reference is configs[0]: the C reference (ref:*), ORT on some provider, or `expected`,
 * the outputs the user saved beside the inputs (from PyTorch, say). The run's verdict is
 * PASSED only when at least one configuration under test ran and compared valid elements
 * (docs/verdicts.md); requirements (placement, dispatch, teeth) judge configurations on
 * execution providers other than CPU, never the reference.
 * The same plan can run in shards (ortqual/shard.h): prepared once, each shard run anywhere
 * by oq_validate_run with o.shard set, and merged by oq_validate_merge into the summary one
 * unsharded run would have written.
 *
 *     oq_err err = OQ_ERR_INIT;
 *     oq_config cfg[2];   // the reference first; without one, the verdict is "untested"
 *     if (oq_config_parse("ref:encoder:fp64", &cfg[0], &err) ||
 *         oq_config_parse("cpu:attention24:fp32", &cfg[1], &err)) ...
 *     oq_validate_opts o;
 *     oq_validate_opts_default(&o);
 *     o.configs = cfg; o.n_configs = 2;
 *     o.outdir = "out";
 *     // o.self_exe NULL: this process, of one thread, forks the workers; where it
 *     // cannot (other threads) the tool installed with the library runs them
 *     // (oq_validate_find_tool), or set o.isolate = 0
 *     oq_validate_summary *s;
 *     if (oq_validate_run(&o, &s, &err) == OQ_OK) {
 *         for (size_t i = 0; i < s->n_configs; i++)
 *             printf("%s %s\n", s->configs[i].config.name, oq_verdict_name(s->configs[i].status));
 *         oq_validate_summary_free(s);
 *     }
 */
#ifndef ORTQUAL_VALIDATE_H
#define ORTQUAL_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/compare.h"
#include "ortqual/config.h"
#include "ortqual/dispatch.h"
#include "ortqual/events.h"
#include "ortqual/export.h"
#include "ortqual/mask.h"
#include "ortqual/placement.h"
#include "ortqual/refusal.h"
#include "ortqual/runtime.h"
#include "ortqual/shard.h"
#include "ortqual/slurm.h"
#include "ortqual/stats.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OQ_VALIDATE_SCHEMA "ortqual.validate/1"

typedef enum oq_model_kind {
    OQ_MODEL_ENCODER = 0, /* ortqual's particle-flow encoder, exported per configuration */
    OQ_MODEL_SDPA,        /* one attention layer, exported per configuration */
    OQ_MODEL_USER         /* the user's --model file */
} oq_model_kind;

/* Progress of a run as each batch of each configuration is done (oq_validate_opts.on_batch). */
typedef struct oq_validate_progress {
    size_t config, n_configs;       /* the configuration running (0-based) and how many there are */
    const char *config_name;
    size_t batches_done, n_batches; /* of this configuration */
} oq_validate_progress;

/* Whose entries of a group's shared cache are used (oq_validate_opts.cache_shared). */
typedef enum oq_cache_trust {
    OQ_CACHE_TRUST_GROUP = 1, /* every member's, each writer's spot-checked */
    OQ_CACHE_TRUST_SELF = 2   /* this user's alone; the others' are recomputed */
} oq_cache_trust;

typedef struct oq_validate_opts {
    oq_model_kind kind;
    /* OQ_MODEL_USER: any named inputs, read by name from each .npz. The mask contract applies
     * to the input named mask_name, or detected (the one rank-2 input named like a mask or
     * read as a key-padding mask, never an Attention's attn_mask as it is nor a Gather's
     * indices; a lone rank-2 input of no telling use is refused, docs/real-models.md); no_mask:
     * none, every element valid. features_name is the input
     * that generated events (and a member "features") feed. */
    const char *model_path;
    const char *features_name, *mask_name;
    int no_mask;
    /* which value of the mask marks a valid element (ortqual/mask.h): KEEP (the default) reads
     * 1 as valid; PAD reads PyTorch's key_padding_mask, 1 = padding. The model is fed the mask
     * as it is; only the contract's check and the lengths read it so. PAD needs OQ_MODEL_USER
     * and a mask (not no_mask); generated events feed such a model their mask inverted. */
    oq_mask_polarity mask_polarity;
    /* 1: the caller chose mask_polarity, KEEP included: a chosen KEEP needs what PAD needs (it
     * would be ignored all the same), as bench's OQ_BENCH_GIVEN_MASK_POLARITY; 0: KEEP is the
     * default, needing nothing. */
    int mask_polarity_given;
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
    /* the `expected` configuration's outputs: one file per input file, matched in order;
     * none: the input files' own members named like the model's outputs */
    size_t n_expected_files;
    const char *const *expected_files;
    /* events.num_features: 0 (the default) takes the width the model's features input fixes,
     * 8 where it leaves F open; a width asked counts only there: with OQ_MODEL_USER, a model
     * whose features input fixes another width, or that has none, is refused
     * (OQ_ERR_INVALID_ARG) */
    oq_events_opts events;

    /* configurations; configs[0] is the reference. Each must be what oq_config_parse gives
     * for its name (oq_config_check: a field changed after parsing is refused, not run under
     * the other's name), and no two configurations under test (configs[1..]) have the same
     * name (the reference's name again is a replay's on reference_ort_lib, or a comparison with
     * itself, refused as that: oq_validate_self_comparison) */
    size_t n_configs;
    const oq_config *configs;
    size_t n_required;        /* configs whose skip counts as a failure */
    const char *const *required;
    int repeat, warmup;       /* per batch: the first call, `warmup` untimed, `repeat` timed
                                 (repeat >= 1, warmup >= 0) */
    int repeat_reference;     /* configs[0] too; else it runs once per batch (its outputs are
                                 what the others need; that one call is its time) */
    int threads;              /* the C reference's threads and ORT's intra-op threads of every
                                 configuration; 0: the reference on every core, ORT's default;
                                 below 0 is refused (ORT takes a session.intra_op_num_threads
                                 entry over it: the result records the count ORT ran) */
    oq_graph_opt graph_opt;   /* ORT's graph optimization level of every ORT configuration
                                 (OQ_GRAPH_OPT_DEFAULT: ORT's own, every optimization) */
    const char *tolerances;   /* "out:rtol=..,atol=..;..." overrides */
    size_t n_seq_axes;        /* outputs whose sequence axis the caller says; one that is not
                                 an output of the model, a repeated output, an axis beyond the
                                 declared rank or the batch axis is refused before anything runs */
    const oq_seq_axis *seq_axes;
    int padding;              /* OQ_PADDING_* (compare.h) for masked outputs; -1 (default): ZERO
                                 for ortqual's exports, AS_REFERENCE for the user's model */
    int allow_skip;           /* a run in which nothing under test was compared exits 0 */
    int no_overlap;           /* the reference runs before the first configuration under test,
                                 never beside it. Without it, the reference's worker runs beside
                                 that one when cache_dir has an entry for every batch (it reads
                                 and verifies them, and recomputes one found bad) and that
                                 configuration leaves a core free (an EP other than CPU, or
                                 threads below this process's cores); never in a shard or with
                                 isolate 0 */
    const char *cache_dir;    /* the C reference's outputs per batch, stored and reused by
                                 content there (made 0700; another user's is refused, unless
                                 cache_shared); NULL: no cache. The tool's default is $XDG_CACHE_HOME/ortqual/
                                 reference (~/.cache/...); the library reads no environment */
    const char *cache_off;    /* with cache_dir NULL, why there is none ("--no-cache"; NULL:
                                 none given): a progress line and summary.json say it */
    int cache_shared;         /* cache_dir is a group's folder: taken when its group is one of
                                 this user's, it is group-writable and not world-writable
                                 (else OQ_ERR_INVALID_ARG naming the rule), left as it is
                                 (never made private), its entries stored group-readable and
                                 those of every member verified by content; without setgid
                                 a progress warning says new entries may get another group.
                                 OQ_CACHE_TRUST_GROUP (1): another member's entries are used,
                                 counted by writer, and one batch of each writer is recomputed
                                 and compared bit for bit (a writer whose batch differs: none of
                                 its entries used); OQ_CACHE_TRUST_SELF (2): only this user's */

    /* dispatch and placement (CUDA) */
    size_t n_expect_kernel;   /* NODE=KERNEL rules */
    const char *const *expect_kernel;
    int require_dispatch;     /* unverified kernel expectation is a failure (the tool also sets
                                 it from ORTQUAL_REQUIRE_DISPATCH=1; the library reads no
                                 environment variable for it) */
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
    double timeout_s;         /* each isolated worker's wall-time limit, in seconds (default
                                 300; fractions allowed): one that runs longer is killed and its
                                 configuration fails "timed out after S s". Not above 0 (0, a
                                 negative value, NaN) or above 2^40 is refused (OQ_ERR_INVALID_ARG),
                                 as the tool's --timeout refuses it: there is no "no limit" */
    const char *self_exe;     /* the ortqual binary to re-execute as worker: one that cannot run
                                 is refused first (OQ_ERR_INVALID_ARG). NULL: the tool installed
                                 with this library (oq_validate_find_tool), where there is one;
                                 else only where every worker can be forked (see below): a caller
                                 with other threads (any service), or one whose workers cannot be
                                 forked for another reason (ORT started threads as it loaded, an
                                 EP library loaded, reference_ort_lib another library), is refused
                                 up front (OQ_ERR_INVALID_ARG, naming why and where the tool was
                                 looked for), and a worker that cannot be forked later (a thread
                                 started meanwhile) stops the run at that worker's start with the
                                 same advice (OQ_ERR_INVALID_ARG; error.json alone is left): set it
                                 to the installed tool, or isolate = 0 */
    /* Isolated workers are forked from this process without exec where that is safe (one
     * thread, no execution-provider library loaded here, the same ORT library): this is called
     * first in such a child (may be NULL): the tool installs the crash handler there that its
     * re-executed worker installs itself. */
    void (*on_worker_fork)(void);

    /* runtime */
    const char *ort_lib;
    const char *reference_ort_lib; /* ORT library of configs[0], for cross-version replay:
                                      NULL: as ort_lib; "": the default search */
    size_t n_ep_libs;
    const char *const *ep_lib_names, *const *ep_lib_paths;
    size_t n_ep_options;           /* each pair list below: both lists, every key (not empty) and
                                      value given for its count, else refused up front */
    const char *const *ep_option_keys, *const *ep_option_values;
    size_t n_session_configs;      /* ORT session config entries (AddSessionConfigEntry) of every
                                      ORT configuration, e.g. optimization.disable_specified_optimizers;
                                      each key once (ORT keeps a repeated key's last value silently) */
    const char *const *session_config_keys, *const *session_config_values;

    /* progress lines for people (may be NULL) */
    void (*progress)(void *ctx, const char *line);
    void *progress_ctx;
    /* per-batch progress (may be NULL; gets progress_ctx): isolated workers report each batch
     * on a side channel of their stderr, in-process ones directly */
    void (*on_batch)(void *ctx, const oq_validate_progress *p);
    /* progress of the inputs' preparation before any model runs (may be NULL; gets
     * progress_ctx): after each batch is checked and written, how many are of how many */
    void (*on_prepare)(void *ctx, size_t batches_done, size_t n_batches);
    /* interruption (may be NULL): the caller's SIGINT/SIGTERM handler sets *interrupt to the
     * signal's number (a sig_atomic_t: an int on Linux) and passes the signal on to the process
     * group on_worker last named (0: none runs; gets progress_ctx). The run then stops: the configuration running is recorded
     * as interrupted, those after it as not run, and the summary's verdict is "interrupted". An
     * in-process worker (isolate 0) sees the flag after each batch and stops there; a
     * configuration whose worker had done every batch keeps its result. */
    const volatile int *interrupt;
    void (*on_worker)(void *ctx, int pgid);
    /* the command line, recorded as evidence: argc entries of argv, none NULL (argc 0: none) */
    int argc;
    char **argv;
} oq_validate_opts;

OQ_API void oq_validate_opts_default(oq_validate_opts *o);

/* ---- results ---------------------------------------------------------------------
 * Everything below is owned by the summary that holds it and freed with it. */

/* What became of a configuration. */
typedef enum oq_verdict {
    OQ_VERDICT_PASSED = 0,
    OQ_VERDICT_FAILED,
    OQ_VERDICT_SKIPPED, /* it cannot run here (no provider library, no device) */
    OQ_VERDICT_NOT_RUN, /* the reference did not run, so nothing was compared */
    OQ_VERDICT_ERROR,   /* a runtime error: ONNX Runtime refused the model (refusal says why),
                           or the reference could not run */
    OQ_VERDICT_REFERENCE /* the reference ran (or, `expected`, was read): it judged nothing, so it
                            is neither passed nor failed, and a count of passes never counts it */
} oq_verdict;
/* "passed", "failed", "skipped", "not-run", "error", "reference" (the words of summary.json). */
OQ_API const char *oq_verdict_name(oq_verdict v);

/* One batch as the orchestrator wrote it (inputs_NNN.npz). */
typedef struct oq_batch_info {
    int64_t index;
    char *inputs;                 /* the .npz path */
    char sha256[65];              /* of that file: the plan names its batches by content */
    int64_t batch_size, padded_length;
    int64_t *lengths;             /* batch_size entries: each event's valid length */
    int64_t *event_indices;       /* batch_size entries */
    int64_t valid_size;           /* the sum of the lengths */
    char *expected;               /* expected_NNN.npz: the `expected` reference's outputs, or NULL */
    char expected_sha256[65];     /* of that file ("" without one): the verdict rests on it as on
                                     the inputs, so the plan names it by content too */
    char *source;                 /* the user's file the batch was read from (input_files), or NULL
                                     for generated events: `inputs` is rewritten, with its ids */
    char source_sha256[65];       /* of that file as read ("" without one) */
    char *expected_source;        /* the user's expected_files entry of the batch, or NULL */
    char expected_source_sha256[65];
} oq_batch_info;

/* One output of one batch as compared: the numbers of its oq_compare_result, without the
 * worst elements and the histograms (~10 KB each), which are aggregated per output over the
 * batches (oq_output_result): a run's memory and summary stay small per batch. */
typedef struct oq_batch_output {
    char name[128];
    oq_tolerance tol;
    int passed, exact, masked, padding_rule, padding_checked;
    int64_t num_valid, num_padded, over_tol, nan_count, inf_count, ref_nan_count, ref_inf_count;
    int64_t pad_nonzero, ref_pad_nonzero;
    double max_abs, max_rel, mean_abs, rms, rel_l2;
    int has_worst;                /* a failed output keeps its largest error, for the report */
    int32_t ndim;                 /* of the output: worst.coord holds ndim entries */
    oq_compare_elem worst;
    oq_dtype dtype, ref_dtype;    /* the output's element type and the reference's */
    int64_t num_elements;         /* all, padding included */
    int worst_event_known;        /* worst_event is the id of the event worst lies in (the batch's
                                     event id at worst's batch coordinate; 0: the output has no
                                     batch axis the mask tells) */
    int64_t worst_event;
} oq_batch_output;

/* One output over every batch a configuration compared: in `all`, counts and histograms
 * summed, maxima (max_abs, max_rel, max_abs_ref) the largest, mean_abs, rms and rel_l2
 * (||d||_2 / ||ref||_2) over every finite valid element of every batch, the worst elements the
 * largest of all batches (worst_batch: the batch of each), first_pad_nonzero the first batch's,
 * shape the first batch's; passed when every batch passed. */
typedef struct oq_output_result {
    oq_compare_result all;        /* all.sum_*: the exact sums' values */
    int64_t worst_batch[OQ_COMPARE_MAX_WORST];
    int64_t first_pad_nonzero_batch;
    int64_t n_batches;            /* batches that compared it */
    oq_fsum sum_abs, sum_sq, sum_ref_sq; /* |d|, d^2 and ref^2 over the finite valid elements,
                                     exact: mean_abs, rms and rel_l2 come from these, so a merge
                                     of shards gives the unsharded run's numbers to the bit */
    int sums_known;               /* 0: read from a summary.json without sums.ref_sq (written
                                     before 2026-12-05, when rel_l2 was the largest batch's):
                                     `all` holds what it said, and it cannot be merged */
    /* the event each worst element lies in: bit i of worst_event_known says worst_event[i] is
     * the id at all.worst[i]'s batch coordinate (none where the mask tells no batch axis) */
    unsigned worst_event_known;
    int64_t worst_event[OQ_COMPARE_MAX_WORST];
    int64_t worst_failing_batch;  /* all.worst_failing's batch (when all.over_tol > 0) ... */
    int worst_failing_event_known;
    int64_t worst_failing_event;  /* ... and its event, as worst_event */
} oq_output_result;

/* One batch as one configuration ran it. */
typedef struct oq_batch_result {
    int64_t index;
    int timed;                    /* the first call ran: the timings below are set */
    double first_call_s;          /* the first call, apart from the repeated ones */
    int repeat, warmup;           /* as planned (0 and 0: the reference's one call) */
    int calls;                    /* calls of the model that ran for this batch, all counted */
    double median_s;              /* of the `repeat` timed calls; NAN when there were none */
    int compared;                 /* 0 for the reference: it has no outputs and no verdict */
    size_t n_outputs;
    oq_batch_output *outputs;     /* each output against the reference's (name: the output) */
    int passed;                   /* every output passed */
    int reference_cached;         /* the reference: its outputs came from the reference cache
                                     (nothing ran, timed is 0) */
} oq_batch_result;

/* What a configuration's batch records hold, counted one record at a time: a run keeps no
 * batch record in memory (they go from the worker's file to summary.json), so its summary
 * says what they held here; a summary read back fills it from its records. */
typedef struct oq_batch_totals {
    size_t n;                     /* batch records */
    size_t timed;                 /* of those, the model ran and was timed */
    size_t cached;                /* the reference's outputs came from the reference cache */
    size_t compared, failed;      /* compared with the reference; of those, did not pass */
    double first_call_s;          /* the first record's first call; NAN: not timed */
    double median_p50_s, median_p90_s; /* over the timed records' median calls; NAN: none */
} oq_batch_totals;

/* ORT's routing lines and the kernel check (configurations on a GPU execution provider). */
typedef struct oq_dispatch_result {
    int recorded;                 /* lines were captured: the rest is set */
    oq_dispatch_log log;          /* every routing line and kernel-options line (owned here) */
    int checked;                  /* an expectation was judged: passed and failures say how */
    int passed;
    size_t n_failures;
    char **failures;              /* one line each, naming the node (for readers) */
    oq_dispatch_failure *failed;  /* failed[i] is failures[i] as fields (for programs: the shard
                                     merge counts a route's failure once by them) */
    size_t n_math_failures;       /* of those, nodes that ran MATH: what --prove-teeth must see */
    size_t n_advice;
    char **advice;                /* why a node missed the expected kernel (advice.h) */
} oq_dispatch_result;

/* Which execution provider ran each node (--require-full-gpu, --profile, replay). */
typedef struct oq_placement_result {
    int recorded;                 /* placement was recorded: the rest is set */
    char *error;                  /* it could not be (out of memory); nothing else is set */
    oq_placement *placement;      /* nodes and per-EP totals */
    oq_placement_report report;   /* the verdict and the counts */
    size_t n_witness_errors;
    char **witness_errors;        /* a source (assignment, profile) that could not be read */
    int required;                 /* the check judged the configuration (--require-full-gpu); else
                                     the placement is evidence only (replay, --profile) */
} oq_placement_result;

/* The child process that ran a configuration (isolation on). */
typedef struct oq_worker_run {
    int ran;                      /* a child was started and waited for */
    char ended[256];              /* "exit 0", "killed by signal 6 (Aborted)", "timed out ..." */
    int signal;                   /* the signal that killed it, 0 when none did */
    double seconds;
    char *stderr_tail;            /* the last bytes it wrote to stderr */
    int forked;                   /* forked from the orchestrator without exec (else re-executed) */
    char beside[OQ_CONFIG_NAME_MAX]; /* the configuration whose worker ran at the same time ("": none) */
} oq_worker_run;

/* Where a worker's time and memory went (bench/validate_cost). */
typedef struct oq_worker_cost {
    int recorded;
    double session_s, run_s, compare_s, io_s; /* io_s: the batches' time beyond their calls and
                                                  comparisons (reading, writing, their records) */
    int64_t rss_after_session_bytes, rss_after_first_run_bytes, rss_start_bytes;
    int64_t vmhwm_bytes, max_batch_bytes;
} oq_worker_cost;

/* --prove-teeth: the configuration rerun with MATH forced, whose dispatch check must fail. */
typedef struct oq_teeth_result {
    int ran;
    char *error;                  /* the rerun's plan could not be written */
    oq_worker_run worker;
    oq_verdict rerun_status;
    oq_dispatch_result rerun_dispatch;
    int proved;                   /* the check failed on a node that ran MATH */
} oq_teeth_result;

/* How one shard ran a configuration (a merged summary lists each shard that ran it). */
typedef struct oq_config_shard {
    int32_t index;
    oq_verdict status;
    int worker_ran;               /* worker_seconds is set */
    double worker_seconds;
    int session_tried;            /* session_create_s is set */
    double session_create_s;
} oq_config_shard;

/* A reference cache entry found bad, ignored and recomputed: its KEY (the files KEY.json and
 * KEY.npz of the cache directory) and why. */
typedef struct oq_cache_ignored {
    char *entry;
    char *reason;
} oq_cache_ignored;

typedef struct oq_config_result {
    oq_config config;             /* name, runtime, representation, precision, kernel */
    int is_reference;             /* configs[0] */
    oq_verdict status;
    char *reason;                 /* one line: why it did not pass (NULL when it did) */
    char *cache_warning;          /* the reference: the first cache entry found bad and
                                     recomputed, and why (NULL: none) */
    int required;                 /* --require turned its skip into a failure */
    char *model_file;             /* the ONNX file it ran; NULL for the C reference */
    int threads;                  /* the C reference: the most threads a call used; ORT: its
                                     intra-op threads as ORT ran them (0: ORT's default; a
                                     session.intra_op_num_threads entry's over opts.threads) */
    oq_graph_opt graph_opt;       /* ORT: the graph optimization level its session was made
                                     with (OQ_GRAPH_OPT_DEFAULT: ORT's own) */
    oq_worker_run worker;
    int reported;                 /* the worker wrote a result: what follows is set */
    oq_batch_totals totals;       /* over its batch records */
    size_t n_batches;             /* a summary read back (oq_validate_summary_read): the batch */
    oq_batch_result *batches;     /* records; a run's summary holds none (summary.json does) */
    size_t n_outputs;
    oq_output_result *outputs;    /* each output over all batches (worst elements, histograms) */
    char *ort_version, *ort_library; /* the ONNX Runtime the worker loaded (NULL: none) */
    char ort_library_sha256[65];  /* that file's content ("" unhashed or unreadable); the merge
                                     refuses shards that ran different builds */
    int ort_api_version;
    int session_tried;            /* a session was created (or refused): the next two are set */
    double session_create_s;
    size_t n_ep_devices;
    oq_ep_device *ep_devices;     /* what the worker's runtime offered */
    oq_worker_cost cost;
    char *evidence_json;          /* the worker's evidence (evidence.h) as JSON text, NULL: none */
    oq_dispatch_result dispatch;
    oq_placement_result placement;
    oq_teeth_result teeth;
    oq_refusal refusal;           /* a runtime error explained (refusal.id NULL: no pattern
                                     matched); refusal.raw is ORT's message as it came */
    size_t n_shards;              /* a merged summary: the shards that ran it (worker and cost */
    oq_config_shard *shards;      /* then hold sums over them, memory the largest) */
    size_t n_cache_ignored;       /* the reference: every cache entry found bad and recomputed */
    oq_cache_ignored *cache_ignored; /* (cache_warning names the first and counts the others) */
    char *saved_by;               /* the `expected` reference: who saved its outputs, as JSON text
                                     (summary.json's configs[0].saved_by: the first file's config,
                                     provider, ort_version, ort_library, ort_library_sha256 and
                                     path, "same_ort": the ORT under test is that build); NULL:
                                     its files record none */
    char *cache_writers;          /* the reference, from a group's shared cache: the other
                                     members whose entries it would use, as JSON text (summary.json's
                                     configs[0].cache_writers: each one's user, uid, entries used,
                                     spot_check: the batch recomputed, result "identical" or why
                                     none of its entries was used, seed of the draw); NULL: none */
} oq_config_result;

/* What the run as a whole says (docs/verdicts.md). */
typedef enum oq_run_verdict {
    OQ_RUN_PASSED = 0, /* every configuration under test that ran passed, and one at least compared */
    OQ_RUN_FAILED,     /* a configuration failed (or a required one was skipped) */
    OQ_RUN_ERROR,      /* a runtime error and no failure: the reference or a configuration could not run */
    OQ_RUN_UNTESTED,   /* nothing under test ran and compared a valid element */
    OQ_RUN_INTERRUPTED /* stopped by a signal (oq_validate_summary.interrupted says where) */
} oq_run_verdict;
/* "passed", "failed", "error", "untested", "interrupted". */
OQ_API const char *oq_run_verdict_name(oq_run_verdict v);

/* A shard's summary: which part of the plan it ran, and where and when. */
typedef struct oq_shard_info {
    int32_t index, count;         /* count 0: not a shard */
    oq_shard_by by;
    size_t n_batches;
    int64_t *batches;             /* the indices of its batches */
    size_t n_configs;
    char **configs;               /* its configurations, the reference first */
    char host[256], start[32];
    int64_t pid;
    oq_slurm_task slurm;          /* the SLURM task it ran in ("" outside SLURM) */
} oq_shard_info;

/* Why a shard is not in a merge. */
typedef enum oq_shard_state {
    OQ_SHARD_MISSING = 0,  /* outdir/shards/I does not exist: it never started */
    OQ_SHARD_UNFINISHED,   /* started, no summary: killed, timed out or crashed */
    OQ_SHARD_FAILED,       /* stopped before running with an error record (error.json) */
    OQ_SHARD_INTERRUPTED   /* stopped by a signal (SIGTERM at a time limit): its summary says where */
} oq_shard_state;
/* "missing", "unfinished", "failed", "interrupted" */
OQ_API const char *oq_shard_state_name(oq_shard_state s);

typedef struct oq_shard_problem {
    int32_t index;
    oq_shard_state state;
    char detail[512];             /* one line: where and when it started, its error, its log */
} oq_shard_problem;

typedef struct oq_shard_report {  /* a shard that reported */
    int32_t index;
    char host[256], start[32], end[32];
    oq_run_verdict verdict;       /* its own verdict */
    oq_slurm_task slurm;
} oq_shard_report;

/* A merged summary: the shards it was made of. */
typedef struct oq_merge_info {
    int32_t count;                /* N; 0: not a merged summary */
    oq_shard_by by;
    size_t n_reported;
    oq_shard_report *reported;
    size_t n_problems;
    oq_shard_problem *problems;   /* shards that did not report: any fails the verdict */
    char time[32], host[256];     /* when and where the merge ran */
    size_t n_saved_outputs;       /* the outputs the shards saved (save_outputs), each where its
                                     shard wrote it, relative to the merged folder: */
    char **saved_outputs;         /* "shards/I/outputs_CC_NNN.npz", shard by shard, by name */
} oq_merge_info;

/* Where a run was stopped by a signal. */
typedef struct oq_interruption {
    int signal;                       /* 0: not interrupted */
    char config[OQ_CONFIG_NAME_MAX];  /* the configuration running ("": none was) */
    size_t batches_done, n_batches;   /* its batches done before it was stopped, of how many */
} oq_interruption;

typedef struct oq_validate_summary {
    char start[32], end[32];      /* ISO-8601 UTC */
    char *evidence_json;          /* versions, host, environment, command line: JSON text */
    char plan_hash[65];           /* the plan's identity: SHA-256 of plan_description, the same
                                     for an unsharded run and every shard of the plan */
    char *plan_description;       /* JSON text: every configuration's worker plan with its files
                                     by SHA-256, the batches by SHA-256, --require, --prove-teeth */
    size_t n_batches;
    oq_batch_info *batches;
    size_t n_configs;
    oq_config_result *configs;    /* configs[0] is the reference */
    char **input_names;           /* the model's inputs, as read from each batch's .npz */
    size_t n_input_names;
    char *mask_input;             /* the input the mask contract applied to, NULL: none */
    char *cache_dir;              /* the reference cache the reference read and stored, NULL:
                                     none, and then cache_off says why (cache_dir NULL, the
                                     reference not a C reference, --repeat-reference) */
    char *cache_off;
    int cache_shared;             /* cache_dir was a group's shared cache (opts.cache_shared) ... */
    char *cache_group;            /* ... of this group (its name, else its number) */
    char **requirements;          /* the requirements asked (require_full_gpu, strict_placement,
                                     expect_kernel, prove_teeth, require_dispatch, in the run's
                                     oq_set_terms words: the tool says --require-full-gpu): they judge
                                     configurations under test on a GPU provider, and where such a
                                     configuration is listed and none ran, the run is untested */
    size_t n_requirements;
    oq_run_verdict verdict;
    char *verdict_reason;         /* one line when the verdict is not PASSED */
    size_t n_tested;              /* configurations under test that passed and compared */
    int exit_status;              /* 0 passed (or untested with allow_skip), 1 failed or untested,
                                     3 runtime error, 128 + N interrupted by signal N */
    oq_interruption interrupted;
    int plotted;                  /* plots were drawn (or tried): plots and plot_error are set */
    size_t n_plots;
    char **plots;                 /* the files written */
    unsigned plot_kinds;          /* what they show: bit 1u << k for each oq_figure_kind k among
                                     them (plot.h; 0 in a summary read back: summary.json lists
                                     the files only) */
    char *plot_error;             /* why drawing stopped, NULL when it did not */
    int report_written;           /* report.html is beside summary.json (else the caller may
                                     write it from summary.json: `ortqual report`) */
    oq_shard_info shard;          /* a shard's summary (shard.count > 0) */
    oq_merge_info merged;         /* a merged summary (merged.count > 0) */
} oq_validate_summary;

/* Runs everything. On OQ_OK, *summary holds every result (also written to
 * outdir/summary.json) with the run's verdict and exit status (0, 1 or 3, as above); what
 * grows with the batches is in summary.json only, so a run's memory does not: the per-batch
 * records (counted in each configuration's totals), the batch list (n_batches 0) and the
 * plan's description (plan_hash stays). Usage or input errors (bad mask, missing or mismatched members,
 * unreadable inputs, impossible configurations) return a status before any
 * model runs, with an error record written to outdir/error.json. Before that, and writing
 * nothing: a field outside its range (kind, graph_opt, threads, padding, repeat, warmup, each
 * configuration's repr, precision and kernel, mask_polarity, mask_form; without input_files the
 * events' counts, lengths, policy, fraction and dtypes as oq_events_create takes them, num_features
 * 0 included; each seq_axes entry's output, axis and said batch axis), or a list NULL with a count
 * (configs, seq_axes, required, expect_kernel) or a NULL or empty name in required or
 * expect_kernel, is OQ_ERR_INVALID_ARG naming the field ("oq_validate_run: graph_opt 9 out of
 * range 0..4", "oq_validate_run: events.num_events 0 out of range (at least 1)").
 * One run at a time in an output folder: the call takes outdir's lock itself (OQ_OUTDIR_LOCK,
 * fileio.h: an flock, so a second thread of this process is excluded as a second process is;
 * a shard run takes it shared, with its own shard lock) and releases it when it returns. A
 * second call while one runs gets OQ_ERR_IO "OUTDIR: in use by another ortqual run (...)"
 * before it writes anything. A caller that took the lock with oq_outdir_lock_create from the
 * same thread (as the tool does) runs in that folder: the call does not take it again.
 * With o->shard.prepare nothing runs: the batches are written and checked, the ONNX files
 * exported, outdir/shards/plan.json written, and *summary holds the plan's identity (no
 * configurations; the batches are in the plan's files, never held). With o->shard.count alone the run is shard o->shard.index of
 * the prepared plan: it checks that o makes the same plan (OQ_ERR_INVALID_ARG naming what
 * differs) and that its batch files are the prepared ones (OQ_ERR_FORMAT), and writes into
 * outdir/shards/<index>/ (*summary: its part, with summary->shard set). */
OQ_API oq_status oq_validate_run(const oq_validate_opts *o, oq_validate_summary **summary, oq_err *err);
/* The same, with the notes the caller said before the run (what the run will not judge, or judges
 * otherwise than the model computes: the tool's fp16 tolerances on a float32 model, an inputs
 * file's saved outputs that are not the reference), note_kinds[i] (a word, "tolerance_looser")
 * with note_texts[i] for i < n_notes: kept in summary.json's "notes" with the run's own (the
 * model's indices nothing checks before it runs, "indices_unchecked"), each once, and shown by
 * report.html; a merge keeps its shards'. The summary struct has no member for them (the ABI):
 * read them from summary.json. A NULL list with n_notes > 0, a NULL or empty kind or a NULL text
 * is OQ_ERR_INVALID_ARG naming it. oq_validate_run is this with no notes. */
OQ_API oq_status oq_validate_run_noted(const oq_validate_opts *o, const char *const *note_kinds,
                                       const char *const *note_texts, size_t n_notes,
                                       oq_validate_summary **summary, oq_err *err);
OQ_API void oq_validate_summary_free(oq_validate_summary *s);
/* --tolerance text (NULL or "": nothing to check) as validate reads it, and (mi not NULL) against
 * the model's outputs: a malformed override, or one for an output the model does not have, is
 * OQ_ERR_INVALID_ARG ("--tolerance: ..."), as validate and replay refuse it. */
struct oq_model_info;
OQ_API oq_status oq_validate_check_tolerances(const char *tolerances, const struct oq_model_info *mi, oq_err *err);
/* The check every --inputs batch of validate and replay passes before any model runs, for
 * other commands (convert): each of paths[0..n) read, a member per input of the model at
 * `model_path` (by the input's name; also "features"/"mask" for those inputs) of its dtype,
 * rank and fixed sizes, the model's named sizes the same across members, at least one event,
 * finite values on the valid positions, and the mask's rows valid prefixes. The mask: the input
 * the model's OQ_CONVERT_CONTRACT_KEY names, else `mask` (which must be a [B, L] input of a
 * mask type), else the one rank-2 input named like a mask (not an Attention's attn_mask as it
 * is nor a Gather's indices), else none. `expected` (NULL, or n
 * paths paired with `paths`) are checked as validate checks its --expected files: a member per
 * model output, float for a float output and integer or bool for the others, of the declared
 * rank, fixed sizes and the batch's named sizes. n = 0 checks the model
 * and `mask` alone; `tolerances` (may be NULL) as oq_validate_check_tolerances checks them
 * against the model's outputs. Errors name the file and member (OQ_ERR_SHAPE, OQ_ERR_MASK, OQ_ERR_FORMAT,
 * OQ_ERR_NOT_FOUND, ...) or the model (OQ_ERR_IO, OQ_ERR_FORMAT, OQ_ERR_INVALID_ARG). */
OQ_API oq_status oq_validate_check_inputs(const char *model_path, const char *mask, const char *const *paths,
                                          const char *const *expected, size_t n, const char *tolerances,
                                          oq_err *err);
/* The same, the mask read in `polarity` (ortqual/mask.h; oq_validate_check_inputs reads KEEP):
 * PAD with no mask is refused (OQ_ERR_INVALID_ARG). Both read a model whose contract records
 * a polarity ("polarity":"pad", convert.h) in that one, as validate and replay do; a PAD given
 * to a contract that records KEEP is refused (OQ_ERR_INVALID_ARG). */
OQ_API oq_status oq_validate_check_inputs_polarity(const char *model_path, const char *mask, oq_mask_polarity polarity,
                                                   const char *const *paths, const char *const *expected, size_t n,
                                                   const char *tolerances, oq_err *err);
/* The same for the batches oq_convert_file would check with the options `o`: its mask_input,
 * tolerances, and its mask_polarity where mask_polarity_given, else the contract's; a given one
 * that contradicts the contract is refused as oq_convert_file refuses it (OQ_ERR_INVALID_ARG). */
struct oq_convert_opts;
OQ_API oq_status oq_validate_check_convert_inputs(const char *model_path, const struct oq_convert_opts *o,
                                                  const char *const *paths, const char *const *expected, size_t n,
                                                  oq_err *err);
/* What makes the reference's ORT the others' (oq_self_comparison.same). */
typedef enum oq_same_ort {
    OQ_SAME_ORT_NONE = 0, /* another build, or a library that does not load (the run says why) */
    OQ_SAME_ORT_ONE_LIB,  /* no reference_ort_lib: one library on both sides */
    OQ_SAME_ORT_FILE,     /* reference_ort_lib loads the file ort_lib loads (another path, a link) */
    OQ_SAME_ORT_COPY,     /* reference_ort_lib is a copy of that file */
    OQ_SAME_ORT_BUILD_ID, /* another file with that file's ELF build-id (the linker's, which strip
                             keeps): that build, stripped or patched */
    OQ_SAME_ORT_BUILD_INFO /* another file, not its bytes, one of the two without a build-id, whose ORT
                              reports that file's version and build info (GetBuildInfoString: its
                              commit, its build type): a patched copy or another build of that commit,
                              which nothing tells apart; not refused (the identity is not established) */
} oq_same_ort;

typedef struct oq_self_comparison {
    size_t config;        /* the configuration under test (an index of o->configs, 1 or more) */
    oq_same_ort same;
    char lib[4096];       /* the real file ort_lib loads (OQ_SAME_ORT_FILE, _COPY, _BUILD_ID, _BUILD_INFO), else "" */
} oq_self_comparison;

/* A configuration under test that runs what the reference (configs[0]) runs: both the --model
 * file as it is on one runtime with one kernel (fp32 and fp16 change only the tolerance; tf32 is
 * another run), on the same ORT (no reference_ort_lib, or one that loads ort_lib's real file, a
 * copy of it (the same bytes), or another file with its ELF build-id: OQ_SAME_ORT_BUILD_ID;
 * learned by loading each in a child). Compared with itself it passes and proves nothing:
 * OQ_ERR_INVALID_ARG naming both, as oq_validate_run refuses it before anything is made; *found
 * (may be NULL) says which and why, for a caller that words it in its own options (zeroed when
 * there is none). OQ_OK when there is none; also OQ_OK, with *found's same
 * OQ_SAME_ORT_BUILD_INFO, where a file without a build-id and not the same bytes reports the
 * other's version and build info: whether it is the same build cannot be established (two
 * builds of one commit report the same), so it runs, and the caller may say so. */
OQ_API oq_status oq_validate_self_comparison(const oq_validate_opts *o, oq_self_comparison *found, oq_err *err);
/* summary.json read back (any of them: a run's, a shard's, a merged one). OQ_ERR_FORMAT
 * naming the file when it is not a validation summary. */
OQ_API oq_status oq_validate_summary_read(const char *path, oq_validate_summary **summary, oq_err *err);
/* Which ONNX Runtime build configuration i of s ran on, told by the first configuration of s that
 * ran on the same one (the same library content; the same path where a summary predates the
 * hash): configuration i itself when it is the first. A campaign split by configuration may
 * run its configurations on several builds; summary.json lists each (evidence.onnxruntime_builds).
 * NULL when configuration i loaded none (a C reference, one not run), i is out of range or s
 * is NULL. */
OQ_API const oq_config_result *oq_validate_ort_build_of(const oq_validate_summary *s, size_t i);

/* The ortqual tool installed with this library, into path[0..n): <bindir>/ortqual found from
 * where libortqual.so lies (an install, moved or not: <libdir>/../bin/ortqual for lib/; the build
 * tree: beside it, where an install's <libdir>/ortqual is ONNX Runtime's folder, not looked at),
 * or for the static library the configured prefix's bindir. Taken only when it
 * is an executable file whose `--version` says this library's version. oq_validate_run uses it
 * when self_exe is NULL. OQ_ERR_NOT_FOUND naming each place looked at and why it was not taken;
 * OQ_ERR_INVALID_ARG when n cannot hold it. */
OQ_API oq_status oq_validate_find_tool(char *path, size_t n, oq_err *err);

/* The worker side: run the plan file written by oq_validate_run and write its
 * result file. Returns OQ_OK when the result was written (whatever it says). Its texts (a
 * failure's reason, placement notes, dispatch advice) are worded as it makes them: with this
 * process's oq_set_terms where the run's caller had set any (the plan says so: a worker forked
 * from the caller has the caller's function, the ortqual tool re-executed its own), else in the
 * library's words (it sets oq_set_terms back to NULL). */
OQ_API oq_status oq_validate_worker(const char *plan_path, oq_err *err);

/* ---- sharded runs (ortqual/shard.h) ---- */

/* A prepared split: outdir/shards/plan.json (schema "ortqual.shards/2") and the two files it
 * names beside it, which hold everything that grows with the batches and are read a line or a
 * block at a time: reading a plan costs no memory per batch. */
typedef struct oq_shard_plan {
    char hash[65];                /* the plan's identity (oq_validate_summary.plan_hash) */
    char *description_path;       /* what it names: canonical JSON text whose SHA-256 is hash
                                     (shards/plan_description.json) */
    int32_t count;                /* N */
    oq_shard_by by;
    size_t n_configs;
    char **configs;               /* their names, the reference first */
    size_t n_batches;
    char *batches_path;           /* every batch, a JSON line each, with the SHA-256 of its file
                                     (shards/plan_batches.jsonl) */
    char batches_sha256[65];      /* of that file */
    int64_t padded_length;        /* the longest batch's */
    int64_t first_batch_size, first_padded_length; /* batch 0's (--static exports its shape) */
    char prepared[32], host[256]; /* when and where */
    int prove_teeth;              /* --prove-teeth: a merged dispatch pass needs a shard's proof */
} oq_shard_plan;
/* OQ_ERR_NOT_FOUND when outdir/shards/plan.json does not exist (nothing was prepared there),
 * OQ_ERR_FORMAT when it is not a plan, its parts disagree, a file it names is not the one
 * prepared, or it was prepared by an older ortqual (schema ortqual.shards/1: prepare again). */
OQ_API oq_status oq_shard_plan_read(const char *outdir, oq_shard_plan *plan, oq_err *err);
OQ_API void oq_shard_plan_clear(oq_shard_plan *plan);

/* Merges outdir/shards/I/summary.json (I = 0..N-1) into outdir/summary.json, validate.csv
 * and, with `plots`, plots/, and returns that summary (summary->merged says which shards
 * it holds). Per-batch figures are the shards' own; verdicts combine as one run would have
 * set them. A shard that did not report is listed in summary->merged.problems and fails
 * the verdict: a missing shard is never a pass. OQ_ERR_NOT_FOUND when outdir/shards/plan.json
 * does not exist; OQ_ERR_FORMAT when a shard's summary belongs to another plan or another
 * split (nothing is written then). On any error the outputs of an earlier merge are removed
 * (oq_validate_merge_drop). The merge's own reasons are in the API's words, or the caller's
 * through oq_set_terms (status.h). */
OQ_API oq_status oq_validate_merge(const char *outdir, int plots, int allow_skip,
                                   oq_validate_summary **summary, oq_err *err);
/* For a merge that stops without writing: the files a merge writes into outdir (summary.json,
 * report.html, validate.csv, the figures in plots/ and the folder when left empty) removed, so
 * that an earlier merge's verdict does not stand for shards that were just refused; only where
 * outdir/shards/plan.json exists (elsewhere they are not a merge's). "; the earlier merge's
 * summary.json, ... removed" is appended to err->msg when anything went. */
OQ_API void oq_validate_merge_drop(const char *outdir, oq_err *err);
/* Why the shard folder `dir` (outdir/shards/I) holds no summary.json, from the record a shard
 * leaves before its summary, in the merge's words (summary->merged.problems, without its SLURM
 * hint): error.json, OQ_SHARD_FAILED "stopped before running: MSG" (problem->index -1: the
 * record does not say); else started.json, OQ_SHARD_UNFINISHED "started on HOST at TIME (pid N)
 * and wrote no summary: killed, timed out or crashed", problem->index its I and *count its N
 * (count may be NULL). OQ_ERR_NOT_FOUND when dir holds neither. `ortqual report` of a killed
 * shard's folder says this, as the merge does. */
OQ_API oq_status oq_shard_dir_problem(const char *dir, oq_shard_problem *problem, int32_t *count, oq_err *err);
/* The summary at `path`, where it is a merge's (its "shards"), held to its plan as the merge held
 * the shards: DIR/shards/plan.json beside it (DIR: path's folder), the plan whose hash it names.
 * The split and the configurations must be the plan's, and each configuration under test that
 * passed must list the plan's outputs, each judged again from its numbers at the plan's
 * tolerance and padding rule (plan_description.json), not passing where zeros would, and so must
 * its batch records: else OQ_ERR_FORMAT "PATH: ...: refusing to draw a summary that contradicts
 * ...". Where the plan is not there (the summary moved or copied alone), cannot be read, or is
 * another plan, OQ_OK with `unchecked` (n bytes) saying so, for the caller to say: the summary was
 * not held to it. Any other document (an unsharded run's, a shard's, bench's, not JSON): OQ_OK,
 * `unchecked` "". Its records are read into a private folder under P_tmpdir, removed after.
 * `ortqual plot` and `ortqual report` call it before they draw. */
OQ_API oq_status oq_validate_merged_check(const char *path, char *unchecked, size_t n, oq_err *err);

/* ---- estimates for larger plans (docs/scale-out.md) ---- */

typedef struct oq_estimate_opts {
    int64_t events;        /* E, events of the larger plan */
    int32_t configs;       /* K, configurations with the reference (0: as measured) */
    int32_t workers;       /* G, tasks running at once (nodes x GPUs per node) */
    int32_t shards;        /* N (0: G, one wave, but at most one shard per batch) */
    int repeat, warmup;    /* timed and warm-up calls per batch (-1: as measured; else
                              repeat >= 1, warmup >= 0, as validate's) */
    const char *only;      /* model the others on measured configurations whose name starts
                              with this (e.g. "cuda:"); NULL: all measured */
} oq_estimate_opts;

typedef struct oq_estimate_config {
    char name[OQ_CONFIG_NAME_MAX];
    double fixed_s;        /* once per task: process, runtime, session, first-call warm-up */
    double per_event_s;    /* every further event: its batch's calls, comparison and I/O */
    int read_only;         /* the reference `expected`: saved outputs, read, not run (0 s) */
} oq_estimate_config;

/* A measured configuration the model could not use: it timed no batch (skipped, not run, an
 * error), so it is in no mean; the larger plan's K counts it only through opts.configs. */
typedef struct oq_estimate_left_out {
    char name[OQ_CONFIG_NAME_MAX];
    oq_verdict status;
} oq_estimate_left_out;

typedef struct oq_estimate {
    size_t n_configs;             /* measured configurations used, the reference first */
    oq_estimate_config *configs;  /* owned */
    size_t n_left_out;            /* those under test that timed no batch, in the summary's order */
    oq_estimate_left_out *left_out; /* owned */
    int64_t measured_events;
    int32_t n_total_configs;      /* K */
    int64_t batches;              /* ceil(E / b), b the measured batch size */
    int32_t shards, waves;        /* N, ceil(N / G) */
    int64_t events_per_shard;     /* those of the largest shard: whole batches */
    double shard_fixed_s, shard_events_s, shard_s; /* one task: fixed + per-event parts */
    double wall_s;                /* waves x shard_s (queue waits, prepare and merge apart) */
    double worker_hours;          /* N x shard_s, in hours */
    /* No task of the measured summary timed a second batch (a merged probe of one batch per
     * shard): each batch's first call, with its process's one-time warm-up, could not be told
     * from a typical one and counts as per-event cost: the estimate is high (probe with at least
     * two batches per shard). */
    int cold_unseparated;
} oq_estimate;

/* Models E events x K configurations split by batch into N shards on G workers from the
 * per-batch costs of a measured summary (a probe run with the larger plan's batch size and
 * lengths): each shard runs every configuration on its E/N events; the reference costs as
 * measured, the other K-1 configurations like the mean of those measured. A batch's calls cost
 * their medians times how much longer the probe's calls took as measured (cost.run_s over
 * first call + calls x median): that time is paid per batch, not once per task. */
OQ_API oq_status oq_validate_estimate(const oq_validate_summary *measured, const oq_estimate_opts *o,
                                      oq_estimate *out, oq_err *err);
/* The same model with the larger plan's calls at their batches' medians: what a machine without
 * jitter or load would take. oq_validate_estimate scales them by how much longer the probe's calls
 * took as measured (its worker's cost.run_s); the two bracket the estimate (docs/scale-out.md).
 * The fixed parts are the same in both. */
OQ_API oq_status oq_validate_estimate_at_medians(const oq_validate_summary *measured, const oq_estimate_opts *o,
                                                 oq_estimate *out, oq_err *err);
OQ_API void oq_estimate_clear(oq_estimate *e);

/* Default demo configurations that can run with what `has_cuda` says, at most `cap` into out;
 * returns how many (0 for a NULL out). */
OQ_API size_t oq_validate_demo_configs(int has_cuda, oq_config *out, size_t cap);

/* Whether `rt` reads the ONNX files configuration `c` exports (their IR version and opset),
 * asked of the runtime with a one-node model stamped as they are. OQ_OK: it does, or `c` exports
 * nothing (ref, model, expected); OQ_ERR_UNSUPPORTED: it refuses them, the message naming the
 * runtime's limit as a run's refusal explanation would ("ONNX Runtime 1.16.3 refuses attention24
 * models (ONNX IR 12, opset 24): ... reads IR versions up to 9"); other errors as
 * oq_session_create's. Says nothing of the EP, the kernels or the numbers. */
OQ_API oq_status oq_validate_config_fits(oq_runtime *rt, const oq_config *c, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
