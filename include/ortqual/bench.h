/* Benchmarking attention on ONNX Runtime: timed loops, memory, scaling sweeps.
 *
 * Two layers, each usable alone, on top of the statistics of stats.h and the
 * process memory readings of proc.h:
 *
 *   runner       oq_bench_runner: one session with its inputs prepared once
 *                (host OrtValues, or device tensors bound through IoBinding),
 *                and oq_bench_runner_time, THE timed loop: every iteration is
 *                one Run between two CLOCK_MONOTONIC readings, nothing else.
 *                bench/overhead.c checks it against a bare OrtApi Run loop.
 *   sweep        oq_bench_sweep: variants x batch sizes x sequence lengths x
 *                masked/unmasked x dynamic/static export, each exported in
 *                memory, run, timed, measured and compared with the float64
 *                reference; one oq_bench_row per combination.
 *
 *     oq_bench_opts o;
 *     oq_bench_opts_default(&o);
 *     o.n_seq_lens = 2; o.seq_lens = (int64_t[]){128, 512};
 *     oq_bench_variant_parse("cpu:attention24:fp32", &o.variants[o.n_variants++], &err);
 *     oq_bench_rows *rows;
 *     oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err);
 *     oq_bench_write_summary(rt, &o, rows, 0, NULL, "summary.json", &err);
 *     oq_bench_rows_free(rows);
 *
 * What is timed: only the Run calls of the timed loop. Session creation is
 * timed apart (session_ms), and so is the first Run (first_run_ms), whose
 * outputs feed the accuracy check and during which ORT's routing lines are
 * captured on CUDA. Warm-up runs are not timed.
 */
#ifndef ORTQUAL_BENCH_H
#define ORTQUAL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/config.h"
#include "ortqual/proc.h"
#include "ortqual/runtime.h"
#include "ortqual/stats.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- runner: one session, inputs prepared once -------------------------------- */

typedef enum oq_io_binding {
    OQ_IO_AUTO = 0, /* device for a GPU EP (CUDA...), host for CPU */
    OQ_IO_HOST,     /* inputs are host tensors, outputs come back to host: copies are timed */
    OQ_IO_DEVICE    /* inputs copied once to the EP's memory with CopyTensors, outputs bound to
                       it with IoBinding (RunWithBinding): no host-device copy is timed */
} oq_io_binding;

OQ_API const char *oq_io_binding_name(oq_io_binding io); /* "auto", "host", "device" */
OQ_API int oq_io_binding_parse(const char *s);           /* -1 when unknown */

typedef struct oq_bench_runner oq_bench_runner;

/* Prepare `s` for timing with `inputs` (matched to model inputs by name, like
 * oq_session_run; the data is copied, so the tensors may be freed after).
 * OQ_IO_AUTO resolves to device when the session's inputs live outside CPU
 * memory, else host. Device binding needs ORT API >= 23 (CopyTensors,
 * SessionGetMemoryInfoForInputs): OQ_ERR_UNSUPPORTED otherwise. On a CPU
 * session "device" binds CPU memory (same figures as host, the IoBinding path
 * is exercised). Errors: OQ_ERR_SHAPE (inputs do not fit), OQ_ERR_RUNTIME. */
OQ_API oq_status oq_bench_runner_create(oq_session *s, size_t n_inputs, oq_tensor *const *inputs,
                                        oq_io_binding io, oq_bench_runner **out, oq_err *err);
OQ_API void oq_bench_runner_free(oq_bench_runner *r);

/* The binding in use (never OQ_IO_AUTO). */
OQ_API oq_io_binding oq_bench_runner_io(const oq_bench_runner *r);

/* One untimed Run (outputs released). */
OQ_API oq_status oq_bench_runner_run(oq_bench_runner *r, oq_err *err);

/* One Run whose outputs are copied to host as new tensors (free with
 * oq_tensors_free); *n gets the output count. */
OQ_API oq_status oq_bench_runner_run_outputs(oq_bench_runner *r, size_t *n, oq_tensor ***outputs,
                                             oq_err *err);

/* The timed loop: `iters` Runs, samples_ms[i] the wall time of Run i in
 * milliseconds (CLOCK_MONOTONIC around the Run call only; releasing the
 * outputs happens after the second reading). Stops at the first failing Run. */
OQ_API oq_status oq_bench_runner_time(oq_bench_runner *r, size_t iters, double *samples_ms,
                                      oq_err *err);

/* ORT's statistics of the session allocator for the outputs' memory
 * (AllocatorGetStats, ORT API >= 23): key/value pairs such as "InUse",
 * "MaxInUse", "TotalAllocated", "NumAllocs" (bytes and counts as decimal
 * strings). *n == 0 when the allocator keeps none. Free with oq_kvs_free. */
OQ_API oq_status oq_bench_runner_alloc_stats(oq_bench_runner *r, oq_kv **kvs, size_t *n, oq_err *err);

/* ---- sweep ----------------------------------------------------------------- */

/* One variant: a configuration (config.h) for sdpa models: runtime ref with
 * representation sdpa (precision fp64), or an ORT runtime with decomposed,
 * attention23 or attention24. "ref" alone means "ref:sdpa:fp64". */
typedef oq_config oq_bench_variant;
/* Parse with oq_config_parse and check that bench can run it. OQ_ERR_INVALID_ARG
 * names the text (e.g. encoder or model representations). */
OQ_API oq_status oq_bench_variant_parse(const char *text, oq_bench_variant *out, oq_err *err);

#define OQ_BENCH_MAX_VARIANTS 32

enum oq_bench_mode_bits { OQ_BENCH_MASKED = 1, OQ_BENCH_UNMASKED = 2 };
enum oq_bench_shape_bits { OQ_BENCH_DYNAMIC = 1, OQ_BENCH_STATIC = 2 };

typedef struct oq_bench_opts {
    size_t n_batch_sizes;
    const int64_t *batch_sizes;  /* each >= 1 */
    size_t n_seq_lens;
    const int64_t *seq_lens;     /* each >= 1: the padded length L */
    int length_policy;           /* oq_length_policy (events.h) of masked batches */
    double mask_fraction;        /* mean share of padding in masked batches, [0, 1) */
    unsigned modes;              /* OQ_BENCH_MASKED | OQ_BENCH_UNMASKED */
    unsigned shapes;             /* OQ_BENCH_DYNAMIC | OQ_BENCH_STATIC */
    int32_t heads, kv_heads, head_dim;
    int threads;                 /* ORT intra-op threads; 0 = ORT default */
    oq_graph_opt graph_opt;      /* as oq_session_opts */
    size_t warmup;               /* untimed runs after the first run */
    size_t iters;                /* timed runs, >= 1 */
    size_t ref_iters;            /* timed runs of a `ref` variant (0: iters). The reference
                                    is plain C: its first run (the accuracy baseline) is
                                    its only warm-up */
    uint64_t seed;
    oq_io_binding io_binding;
    int include_session;         /* 1: each timed sample is create session + first Run */
    int reference;               /* 1: compare every variant with the float64 reference */
    unsigned mem_sample_us;      /* RSS sampling period during the timed runs */
    size_t n_variants;
    oq_bench_variant variants[OQ_BENCH_MAX_VARIANTS];
    /* Applied to every ORT variant whose runtime is not "cpu" (EP library and
     * provider options); a variant's kernel adds sdpa_kernel unless given here. */
    const char *ep_lib;
    size_t n_ep_options;
    const char *const *ep_option_keys, *const *ep_option_values;
} oq_bench_opts;

/* Defaults: batch 1, lengths 128,512,2048, policy fraction with 0.25, both
 * modes, dynamic shapes, 8 heads, 8 kv heads, head_dim 64, ORT default
 * threads and optimisation, warm-up 3, iters 20, seed 12345, io auto,
 * reference on, RSS sampled every 2 ms, no variants. */
OQ_API void oq_bench_opts_default(oq_bench_opts *o);

/* Why a row has no timings. Expected outcomes of a scaling sweep (the sweep
 * goes on and they do not make it fail): skipped (the variant does not apply:
 * a kernel choice on a CPU runtime, an EP that is not present), unsupported
 * (ORT has no implementation for the model on that EP), oom (out of memory).
 * failed: anything else (export, ORT errors): a real problem. */
typedef enum oq_bench_status {
    OQ_BENCH_OK = 0,
    OQ_BENCH_SKIPPED,
    OQ_BENCH_UNSUPPORTED,
    OQ_BENCH_OOM,
    OQ_BENCH_FAILED
} oq_bench_status;
OQ_API const char *oq_bench_status_name(oq_bench_status s); /* "ok", "skipped", ... */

/* One variant x shape. Numbers that were not measured are NAN (doubles) or -1
 * (counts, byte sizes). */
typedef struct oq_bench_row {
    oq_bench_variant variant;
    oq_bench_status status;
    char error[OQ_ERR_MSG_MAX];   /* "" when ok */
    char device[32];              /* "cpu", "cuda", the EP short name; "cpu" for ref */
    char kernel_observed[64];     /* SdpaKernel names seen in the first Run, '+'-joined; "" none */
    int masked;
    int static_shapes;
    oq_io_binding io;             /* host or device (ref: host) */
    int64_t batch, seq_len;
    int64_t valid_tokens;         /* sum of the event lengths */
    int64_t valid_pairs;          /* attended (query, key) pairs: sum of squared lengths */
    int32_t heads, kv_heads, head_dim;
    int threads;
    size_t warmup, iters;
    double session_ms, first_run_ms;
    size_t n_samples;
    double *samples_ms;           /* owned; n_samples entries */
    oq_stats stats;
    int64_t rss_before, peak_rss, vmhwm; /* bytes: before session creation, peak sampled
                                            during the timed runs, VmHWM after them */
    int64_t gpu_mem;              /* bytes (NVML), -1 when not available */
    char gpu_mem_note[160];       /* why gpu_mem is absent */
    size_t n_alloc_stats;
    oq_kv *alloc_stats;           /* owned (AllocatorGetStats) */
    double max_abs_err;           /* valid elements vs the reference; NAN when not compared */
    double max_rel_err;
    int64_t nan_count, inf_count, pad_nonzero; /* -1 when not compared */
} oq_bench_row;

typedef struct oq_bench_rows {
    size_t n;
    oq_bench_row *rows;
} oq_bench_rows;

/* Total number of rows a sweep will produce (for progress: "[k/total]"). */
OQ_API size_t oq_bench_row_count(const oq_bench_opts *o);

/* Called before each row starts (row->status not yet set, `index` 0-based)
 * and after it ends (`done` 1). */
typedef void (*oq_bench_progress_fn)(void *user, size_t index, size_t total,
                                     const oq_bench_row *row, int done);

/* Run the sweep. Rows come in this order: batch size, sequence length, mode
 * (masked first), export shapes (dynamic first), variant. A variant that
 * fails becomes a row with its status and message and the sweep goes on.
 * Errors (the sweep itself could not run): OQ_ERR_INVALID_ARG (options),
 * OQ_ERR_NOMEM. Free *out with oq_bench_rows_free. */
OQ_API oq_status oq_bench_sweep(oq_runtime *rt, const oq_bench_opts *o, oq_bench_progress_fn progress,
                                void *user, oq_bench_rows **out, oq_err *err);
OQ_API void oq_bench_rows_free(oq_bench_rows *rows);

/* Write summary.csv (atomically, replacing `path`) with the columns of
 * oq_bench_csv_columns (csv.h), one line per row: valid_elements is the
 * number of valid tokens; kernel the kernels observed on CUDA (flash,
 * efficient, cudnn_flash, math...; '+'-joined when nodes differ; empty when
 * none was seen), "cpu" for ORT's CPU EP, "ref" for the reference; memory in
 * MiB; empty fields for what was not measured or does not apply. */
OQ_API oq_status oq_bench_rows_write_csv(const oq_bench_rows *rows, const char *path, oq_err *err);

/* Write summary.json (atomically, replacing `path`): the tool and runtime versions, the
 * evidence (evidence.h) gathered now, after the sweep, so that every library its sessions
 * loaded is listed, the command line ("ortqual" then the `argc` entries of `argv`), the
 * options, and every row with its raw samples (docs/bench.md). */
OQ_API oq_status oq_bench_write_summary(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_rows *rows,
                                        int argc, char *const *argv, const char *path, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
