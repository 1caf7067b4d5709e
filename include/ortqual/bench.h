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

#include "ortqual/compare.h"
#include "ortqual/config.h"
#include "ortqual/mask.h"
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

/* The binding in use (never OQ_IO_AUTO; OQ_IO_AUTO for a NULL runner). */
OQ_API oq_io_binding oq_bench_runner_io(const oq_bench_runner *r);

/* One untimed Run (outputs released). */
OQ_API oq_status oq_bench_runner_run(oq_bench_runner *r, oq_err *err);

/* One Run whose outputs are copied to host as new tensors (free with
 * oq_tensors_free); *n gets the output count. */
OQ_API oq_status oq_bench_runner_run_outputs(oq_bench_runner *r, size_t *n, oq_tensor ***outputs,
                                             oq_err *err);

/* The timed loop: `iters` Runs, samples_ms[i] the wall time of Run i in
 * milliseconds (CLOCK_MONOTONIC around the Run call only -- with device binding
 * RunWithBinding then SynchronizeBoundOutputs, so a sample is one synchronized
 * call; releasing the outputs happens after the second reading). Stops at the
 * first failing Run. */
OQ_API oq_status oq_bench_runner_time(oq_bench_runner *r, size_t iters, double *samples_ms,
                                      oq_err *err);

/* ORT's statistics of the session allocator for the outputs' memory
 * (AllocatorGetStats, ORT API >= 23): key/value pairs such as "InUse",
 * "MaxInUse", "TotalAllocated", "NumAllocs" (bytes and counts as decimal
 * strings). *n == 0 when the allocator keeps none. Free with oq_kvs_free. */
OQ_API oq_status oq_bench_runner_alloc_stats(oq_bench_runner *r, oq_kv **kvs, size_t *n, oq_err *err);

/* The timed loop as `ortqual bench` runs it: oq_bench_runner_time and the
 * process's peak resident set over it (bytes, *peak_rss): VmHWM reset just
 * before the loop and read after it (oq_proc_peak_reset: exact, nothing runs
 * beside the loop; *peak_exact 1), else, where the kernel cannot reset it, the
 * largest reading of a thread sampling every `mem_sample_us` microseconds
 * (*peak_exact 0; with 0 no sampling and *peak_rss -1).
 * bench/model_overhead.c times this function against a bare Run loop. */
OQ_API oq_status oq_bench_runner_measure(oq_bench_runner *r, size_t iters, unsigned mem_sample_us,
                                         double *samples_ms, int64_t *peak_rss, int *peak_exact, oq_err *err);

/* ---- a model of the user's: named dimensions, input shapes ------------------------ */

#define OQ_BENCH_NAME_MAX 128
#define OQ_BENCH_MAX_VALUES 64
#define OQ_BENCH_MAX_DIMS 32

/* A named dimension with one value (--dim NAME=V) or the values a sweep takes
 * (--sweep NAME=V1,V2,...), each >= 0. */
typedef struct oq_bench_dim {
    char name[OQ_BENCH_NAME_MAX];
    size_t n_values;
    int64_t values[OQ_BENCH_MAX_VALUES];
} oq_bench_dim;

/* Parse "NAME=V1,V2,..." (--sweep). OQ_ERR_INVALID_ARG quotes the text. */
OQ_API oq_status oq_bench_dim_parse(const char *text, oq_bench_dim *out, oq_err *err);
/* Parse "NAME=V", one value (--dim): oq_bench_dim_parse's errors, "want NAME=V", and a list
 * refused ("one value (a sweep is opts.sweeps)"). */
OQ_API oq_status oq_bench_dim_parse_one(const char *text, oq_bench_dim *out, oq_err *err);

/* One input's shape (--shape INPUT=d0,d1,...): each entry a size >= 0, or the
 * name of a dimension given with --dim or --sweep (then dims[i] is -1). */
typedef struct oq_bench_shape {
    char input[OQ_BENCH_NAME_MAX];
    int32_t ndim;
    int64_t dims[OQ_MAX_DIMS];
    char dim_names[OQ_MAX_DIMS][OQ_BENCH_NAME_MAX]; /* "" where dims[i] is a size */
} oq_bench_shape;

/* Parse "INPUT=d0,d1,..." ("INPUT=" alone is a scalar). OQ_ERR_INVALID_ARG quotes the text. */
OQ_API oq_status oq_bench_shape_parse(const char *text, oq_bench_shape *out, oq_err *err);

/* A dimension's value at one point of a model sweep. */
typedef struct oq_bench_dimval {
    char name[OQ_BENCH_NAME_MAX];
    int64_t value;
} oq_bench_dimval;

/* What one model input was at a point: where its shape and data came from. */
typedef struct oq_bench_input_info {
    char name[OQ_BENCH_NAME_MAX];
    oq_dtype dtype;
    int32_t ndim;
    int64_t shape[OQ_MAX_DIMS];
    const char *source; /* "npz" (the tensor as given), "shape" (generated, the shape from
                           --shape) or "generated" (shape from the model and the dims) */
    const char *fill;   /* "npz", "uniform" (floats in [-1, 1)), "integers" (--int-range),
                           "mask" (a valid prefix per row, then zeros), "ones" (true/1) */
} oq_bench_input_info;

/* One output compared with --expected (the first run's output). */
typedef struct oq_bench_output_check {
    char name[OQ_BENCH_NAME_MAX];
    double max_abs_err, max_rel_err;
    double rtol, atol;
    int64_t over_tol, nan_count, inf_count;       /* nan_count, inf_count: in the output */
    int64_t expected_nan_count, expected_inf_count; /* in the expected values */
    int64_t inf_matched; /* elements where the output is the expected infinity: equal, not counted above */
    int passed;
    char vacuous[200]; /* not "": failed as a tolerance that cannot fail here (oq_compare_judge_vacuous), why */
    /* Padding (the mask's padded positions in an output that has the mask's axes): never in the
     * errors above; judged by oq_bench_opts.padding as validate judges it (compare.h) */
    int masked;             /* the mask's lengths applied: padded elements set apart */
    int64_t padded;         /* padded elements */
    int64_t pad_nonzero;    /* of them, not exactly 0 in the output */
    int padding_checked;    /* they had to be 0 (the rule, and for AS_REFERENCE the expected values) */
    int padding_rule;       /* OQ_PADDING_* applied */
} oq_bench_output_check;

/* Whether check c compared no value: every valid element of the output an infinity the expected
 * outputs hold too, or none valid (oq_compare_judged_nothing of its comparison: its inf_matched
 * then counts its valid elements, 0 for an output with a 0-sized axis). Its errors are then NaN, not
 * measured: the row's max_abs_err leaves it out, and the row is not counted as compared, as
 * validate's configuration is not (docs/verdicts.md). 0 for a NULL c. */
OQ_API int oq_bench_output_judged_nothing(const oq_bench_output_check *c);

/* ORT's own profile of more runs of a row, in a session of its own (the
 * profiler must not perturb the timed loop): per run, the median over the
 * profiled runs. NAN where the profile had no such events. */
typedef struct oq_bench_profile {
    size_t runs;         /* profiled runs read (0: not profiled) */
    double run_ms;       /* ORT's model_run events: its own wall time of a Run */
    double node_ms;      /* the nodes' "<node>_kernel_time" events summed over a run: on
                            CPU the compute; on a GPU EP the host side of each node
                            (launches), not GPU time */
    double kernel_ms;    /* GPU kernel time summed over a run: from kernel_source */
    size_t kernel_events; /* GPU kernels per run (median) */
    const char *kernel_source; /* "ort-profile": ORT's GPU kernel events (category "Kernel",
                            written by ORT builds with CUDA profiling); "cupti": CUPTI's
                            kernel records (oq_bench_opts.cupti); NULL: none seen */
    size_t n_kernel_names; /* "cupti": the distinct kernels of the profiled runs, */
    char kernel_names[OQ_CUPTI_MAX_NAMES][OQ_CUPTI_NAME_MAX]; /* in the order first seen */
    char path[1024];     /* the profile file, kept */
} oq_bench_profile;

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
/* Options of generated inputs, and the mask's polarity, a caller set (oq_bench_opts.given). */
enum oq_bench_given_bits {
    OQ_BENCH_GIVEN_SEED = 1, OQ_BENCH_GIVEN_INT_RANGE = 2, OQ_BENCH_GIVEN_LENGTH_POLICY = 4,
    OQ_BENCH_GIVEN_MASK_FRACTION = 8, OQ_BENCH_GIVEN_MASK_POLARITY = 16
};
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
    int threads;                 /* ORT intra-op threads and the reference's threads; 0 = ORT
                                    default, the reference on every core (ORT takes a
                                    session.intra_op_num_threads entry over it) */
    oq_graph_opt graph_opt;      /* as oq_session_opts */
    size_t n_session_configs;    /* ORT session config entries of every ORT session */
    const char *const *session_config_keys, *const *session_config_values;
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
    int inter_op_threads;        /* ORT inter-op threads (0: ORT's default, sequential; ORT
                                    takes session.inter_op_num_threads and
                                    session.execution_mode entries over it) */
    size_t profile_runs;         /* > 0: after the timed loop, that many runs of each ORT row
                                    in a profiled session of its own (oq_bench_profile) */
    const char *profile_dir;     /* where the profiles are written (made when needed) */
    oq_cupti *cupti;             /* non-NULL: the profiled runs' GPU kernel time comes from
                                    this CUPTI collector (proc.h), enabled around them only,
                                    not from ORT's profile */

    /* A model of the user's (bench --model): when model_path is set the sweep runs that
     * file as it is, once per point of `sweeps` (every combination, the first sweep
     * slowest), instead of exported attention models; variants, batch sizes, lengths,
     * modes, export shapes and heads are then not used. Each model input is, in this
     * order: the tensor of that name in `inputs_path` (as it is), generated with the
     * shape of `input_shapes`, or generated with the model's shape, its named dimensions
     * taken from `dims`, the sweep's point, or another input's shape (a named
     * dimension has one value across inputs). Generated (seeded): floats uniform in
     * [-1, 1), integers uniform in [int_lo, int_hi], booleans true, except the
     * key-padding mask (rank 2 [batch, length]: the input the model's mask contract
     * names, else mask_input, else the one the graph uses as a mask, whatever its
     * name: see mask_input): a valid prefix per row (lengths from length_policy and
     * mask_fraction, as the attention sweep's masks) then padding. Any other input the
     * graph uses as a mask, and without a contract one named like a mask that the graph
     * does not tell, is all ones. oq_bench_rows says which input was the mask and why. */
    const char *model_path;
    const char *model_ep;        /* the EP the model runs on: NULL or "cpu", "cuda", a plugin */
    const char *inputs_path;     /* .npz, or NULL */
    const char *expected_path;   /* .npz of outputs the first run must match, or NULL */
    const char *tolerances;      /* oq_tolerances_add specs for `expected` (NULL: the preset
                                    of the model's precision, oq_model_precision_of, else of
                                    each output's dtype) */
    /* With `expected`, an output that has the mask's axes (the mask-like input's, as the
     * rows' valid_tokens; the axes by validate's rule, compare.h's oq_seq_axis) is compared on
     * its valid elements only, as validate compares it: padding never enters the errors.
     * `padding` is what its padded elements must be: OQ_PADDING_* (compare.h), -1 (the
     * default): AS_REFERENCE. `seq_axes`: outputs whose axes the caller says, checked against
     * the model before any session. */
    int padding;
    size_t n_seq_axes;
    const oq_seq_axis *seq_axes;
    size_t n_input_shapes;
    const oq_bench_shape *input_shapes;
    size_t n_dims;
    const oq_bench_dim *dims;    /* one value each */
    size_t n_sweeps;
    const oq_bench_dim *sweeps;
    int64_t int_lo, int_hi;
    /* Which value of the mask-like input marks a valid element (ortqual/mask.h): KEEP (the
     * default) or PAD (PyTorch's key_padding_mask, 1 = padding): a generated mask is then
     * zeros (valid) then ones, and a row's valid_tokens count the mask's zeros. PAD needs
     * model_path and a mask-like input (generated or from inputs_path); so is KEEP when given
     * (OQ_BENCH_GIVEN_MASK_POLARITY). Neither given nor in the model's contract: the graph's
     * reading where its uses of the mask agree (a Not or Sub(1, x) before a Where or Mul with
     * a large negative constant: KEEP; none: PAD), else KEEP. */
    oq_mask_polarity mask_polarity;
    /* OQ_BENCH_GIVEN_* bits: which of seed, int_lo/int_hi, length_policy and mask_fraction the
     * caller set (a value equal to the default counts). With model_path, one that no generated
     * input of the model uses (all come from inputs_path, none is an integer or a mask input...)
     * is an error: it would be ignored while the caller believes it applied. Without it, so
     * is length_policy or mask_fraction when modes has no OQ_BENCH_MASKED (no mask is made). */
    unsigned given;
    /* Called once by oq_bench_sweep when the options, and for model_path the model, the npz
     * files and every point's inputs, are checked, before the first row (NULL: none): where a
     * caller checks its own outputs after the inputs and before hours of work. Its error
     * stops the sweep. */
    oq_status (*ready)(void *ctx, oq_err *err);
    void *ready_ctx;
    /* model_path: the dimension that is the rows' sequence length (seq_dim, seq_len); NULL: the
     * last sweep other than the batch, else the model's mask input's length axis, the axis
     * denoted DATA_TIME, a dimension named like seq (none of them: 0 and ""). The
     * batch is the dimension named batch or batch_size, else denoted DATA_BATCH, else the first
     * input's axis 0. */
    const char *seq_dim;
    int allow_skip;              /* 1: a sweep in which nothing under test ran is not a failure
                                    (oq_bench_verdict_of: untested with exit status 0) */
    /* model_path: the name of the mask input [batch, length] (NULL: the one the model's mask
     * contract names, else the one rank-2 input the graph uses as a padding mask or bias: an
     * attention operator's key-padding mask, or an input that flows into the attention scores
     * through casts, comparisons, arithmetic and reshapes, whatever its name; two such are
     * OQ_ERR_INVALID_ARG, none: no mask). Refused beside a contract that names another.
     * Appended last (2026-12-06). */
    const char *mask_input;
} oq_bench_opts;

/* Defaults: batch 1, lengths 128,512,2048, policy fraction with 0.25, both
 * modes, dynamic shapes, 8 heads, 8 kv heads, head_dim 64, ORT default
 * threads and optimisation, warm-up 3, iters 20, seed 12345, io auto,
 * reference on, RSS sampled every 2 ms, no variants, no profile, no model,
 * integers in [0, 1], padding -1 (AS_REFERENCE). */
OQ_API void oq_bench_opts_default(oq_bench_opts *o);

/* The inputs bench --model runs at `point` of the sweep that o->model_path and the
 * model fields of `o` describe (the points in the order of oq_bench_sweep), in model
 * input order and named after the inputs; free with oq_tensors_free. Every check of
 * the sweep applies (OQ_ERR_INVALID_ARG names the field, input or axis; files:
 * OQ_ERR_IO, OQ_ERR_FORMAT). For C callers that time the same inputs themselves
 * (bench/model_overhead.c). */
OQ_API oq_status oq_bench_model_inputs(const oq_bench_opts *o, size_t point, size_t *n, oq_tensor ***inputs,
                                       oq_err *err);
/* The notes a run of o->model_path says once before it, as validate says them: each Gather
 * whose indices nothing checks before the run (computed at run time, or a constant the folder
 * does not fold; an input's are checked per batch), one line each ("Gather 'g': its indices 'ind'
 * are computed at run time (...): not checked against its data's sizes, left to ONNX Runtime\n"),
 * into *notes (malloc'ed, "" for none; free it). The model is read as the sweep reads it; a
 * constant index outside its table is OQ_ERR_FORMAT, as the sweep refuses it. Called from o->ready
 * while oq_bench_sweep(o) runs, they are that sweep's (its one fold of the model), not read again.
 * oq_bench_write_summary records them among the evidence's warnings (rows from oq_bench_sweep:
 * that sweep's). Added in the thirty-second session. */
OQ_API oq_status oq_bench_model_notes(const oq_bench_opts *o, char **notes, oq_err *err);

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
    OQ_BENCH_FAILED,
    OQ_BENCH_ERROR /* a runtime error: ONNX Runtime refused the model or could not run it */
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
    int threads;                  /* an ORT row's intra-op threads as ORT ran them (a
                                     session.intra_op_num_threads entry's over opts.threads);
                                     the reference's row: opts.threads */
    size_t warmup, iters;
    double session_ms, first_run_ms;
    size_t n_samples;
    double *samples_ms;           /* owned; n_samples entries */
    oq_stats stats;
    int64_t rss_before, peak_rss, vmhwm; /* bytes: before session creation, peak during
                                            the timed runs, peak of the whole row (VmHWM) */
    int peak_rss_exact;           /* peak_rss from VmHWM reset before the timed runs (1), or
                                     sampled every mem_sample_us (0) */
    int vmhwm_row;                /* vmhwm from VmHWM reset at the row's start (1), or the
                                     process's peak so far where the kernel refuses the reset (0) */
    int64_t gpu_mem;              /* bytes (NVML), -1 when not available */
    char gpu_mem_note[160];       /* why gpu_mem is absent */
    size_t n_alloc_stats;
    oq_kv *alloc_stats;           /* owned (AllocatorGetStats) */
    double max_abs_err;           /* valid elements vs the reference; NAN when not compared, and
                                     (--model) NaN or +Inf when such values were compared */
    double max_rel_err;
    int64_t nan_count, inf_count, pad_nonzero; /* -1 when not compared; --model: both sides */
    double rtol, atol;            /* the attention sweep's tolerance (its dtype's preset) */
    int64_t over_tol;             /* valid elements over it; -1 when not compared */
    int inter_op_threads;         /* as ORT ran them, as threads: 0 in ORT's sequential mode (a
                                     session.execution_mode entry may set it over opts') */
    oq_bench_profile profile;     /* profile.runs 0: not profiled */
    /* bench --model (0 and NULL otherwise), all owned: */
    char seq_dim[OQ_BENCH_NAME_MAX]; /* the dimension seq_len is the value of ("" none) */
    size_t n_dims;
    oq_bench_dimval *dims;        /* every named dimension at this point */
    size_t n_inputs;
    oq_bench_input_info *inputs;
    size_t n_outputs;
    oq_bench_output_check *outputs; /* with expected outputs */
} oq_bench_row;

typedef struct oq_bench_rows {
    size_t n;
    oq_bench_row *rows;
    /* The float64 reference, computed per shape only where a row needed it (a variant that ran,
     * for its accuracy; a `ref` row): the shapes it was computed for and the time it took, all
     * attempts (0, 0: none needed, e.g. every variant skipped or --no-reference). */
    size_t reference_shapes;
    double reference_ms;
    char model_sha256[65];  /* model_path's identity: the SHA-256 of the file every row ran (read
                               once), or with external-data files that of it and of each file;
                               "" for the attention sweep, or when an external file was unreadable */
    char precision_why[512]; /* model_path's rows are <ep>:model:fp16 (:bf16), judged at float16's
                                (bfloat16's) tolerances, because of this (oq_model_precision_of's
                                reason: "Attention 'a' computes in float16"); "" for fp32 and the
                                attention sweep */
    char start[32];          /* when oq_bench_sweep started, ISO 8601 UTC (summary.json's "start",
                                beside "end", as every ortqual document has both); "" unknown */
    struct oq_bench_comparison *baseline; /* owned: the rows against an earlier run's
                               (oq_bench_compare); NULL: none. Appended last (2026-12-06) */
    /* model_path: the mask input and how it was found ("" and "none": no mask), why, the
     * polarity its rows were generated and counted with, and an input named like a mask that
     * was not taken, with the reason ("" none). Appended last (2026-12-06) */
    char mask_input[OQ_BENCH_NAME_MAX];
    char mask_source[16];    /* "contract", "option" (opts.mask_input), "graph", "none" */
    char mask_why[256];
    oq_mask_polarity mask_polarity;
    char mask_polarity_source[16]; /* "contract", "option" (opts.mask_polarity given), "graph" (the
                               graph's uses of the mask tell it), "default" (keep) */
    char mask_note[512];
} oq_bench_rows;

/* Total number of rows a sweep will produce (for progress: "[k/total]"); 0 for NULL options. */
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

/* A sweep's verdict (docs/verdicts.md), in validate's words, in this order: "failed" (a row
 * failed, or regressed against rows->baseline; exit status 1), "error" (a row could not run,
 * OQ_BENCH_ERROR, and none failed; 3), "untested" (no ONNX Runtime row ran and, where there is
 * something to compare with, was compared; 1, or 0 with opts.allow_skip; and with
 * rows->baseline, no row compared with it: 1 whatever allow_skip, which accepts rows that did
 * not run, not a limit that was never applied), else "passed" (0). Both summary.json and the
 * tool's exit status come from it. NULL o or rows: "error" with the reason; NULL out: nothing. */
typedef struct oq_bench_verdict {
    const char *verdict;  /* "passed", "failed", "error" or "untested" */
    int exit_status;      /* 0, 1 or 3 */
    size_t tested;        /* ONNX Runtime rows that ran (and were compared where they could be) */
    int compared;         /* 1: the rows under test are compared (a reference, expected outputs) */
    char reason[512];     /* one line: why this verdict */
} oq_bench_verdict;
OQ_API void oq_bench_verdict_of(const oq_bench_opts *o, const oq_bench_rows *rows, oq_bench_verdict *out);

/* ---- a baseline: this run's timings against an earlier run's ------------------------------ */

/* The statistics a limit can name (oq_stats): "p50", "p90", "p95", "p99", "p99.9", "max", "mean". */
#define OQ_BENCH_MAX_LIMITS 7
typedef struct oq_bench_limit {
    const char *stat; /* one of the names above (static) */
    double pct;       /* the slowdown allowed, in percent (>= 0): new/old above 1 + pct/100 regresses */
} oq_bench_limit;
typedef struct oq_bench_limits {
    size_t n;
    oq_bench_limit limit[OQ_BENCH_MAX_LIMITS];
} oq_bench_limits;
/* Parse "STAT=PCT[,STAT=PCT...]" ("p50=10%", the '%' optional; a statistic once).
 * OQ_ERR_INVALID_ARG quotes the item and says what is wrong. */
OQ_API oq_status oq_bench_limits_parse(const char *text, oq_bench_limits *out, oq_err *err);

/* An earlier run's summary.json (schema ortqual.bench/1 or /2), read once. */
typedef struct oq_bench_baseline oq_bench_baseline;
/* Read `path`. OQ_ERR_IO (unreadable), OQ_ERR_FORMAT (not JSON, not a bench summary, a row
 * without its identity or statistics) name the file and, for a row, its index. */
OQ_API oq_status oq_bench_baseline_read(const char *path, oq_bench_baseline **out, oq_err *err);
OQ_API void oq_bench_baseline_free(oq_bench_baseline *b);
/* Another ONNX Runtime library of the same version as the baseline's (its system.ort_library
 * against rt's path): "another ONNX Runtime library of version 1.29.0: PATH here, PATH in the
 * baseline", "" when the same, the versions differ (oq_bench_machine_differs says it) or the
 * baseline records none. Kept in b: oq_bench_compare copies it into the comparison's ort_diff. */
OQ_API const char *oq_bench_baseline_ort_differs(oq_bench_baseline *b, oq_runtime *rt);

/* The baseline timed the model this run times (o: the run's options): with o->model_path, a
 * model's sweep of a file of the same SHA-256 (read here once more, external-data files
 * included, as oq_bench_sweep's rows->model_sha256; a baseline that records none is refused);
 * without it, the attention sweep's (its generated model is what each row's identity holds:
 * variant, shapes, heads, head_dim, mask). Checked before the sweep; oq_bench_compare's
 * identity carries the model's SHA-256 too, so rows of two models never match.
 * OQ_ERR_INVALID_ARG names the baseline and, for two models, both files and SHA-256 prefixes;
 * OQ_ERR_IO, OQ_ERR_FORMAT: o->model_path cannot be read or hashed. */
OQ_API oq_status oq_bench_baseline_check_model(const oq_bench_baseline *b, const oq_bench_opts *o, oq_err *err);

/* The machine and runtime the timings depend on, as summary.json records them
 * (system.ort_version, system.evidence.host.cpu_model and cpus, the GPUs' names): "" (0) where
 * unknown. The host's name is not among them: CI runners of one pool have other names on
 * the same hardware. */
typedef struct oq_bench_machine {
    char ort_version[64];
    char cpu_model[256];
    int64_t cpus;
    char gpus[512]; /* the GPUs' names, ", "-joined; "" none */
} oq_bench_machine;
/* This process's machine, with `rt`'s ONNX Runtime version (rt NULL: ""). */
OQ_API oq_status oq_bench_machine_probe(oq_runtime *rt, oq_bench_machine *out, oq_err *err);
/* The baseline's machine (NULL b: zeroed). */
OQ_API void oq_bench_baseline_machine(const oq_bench_baseline *b, oq_bench_machine *out);
/* 0 when a and b are the same machine and runtime (or one is NULL: nothing to compare), else 1
 * with the first difference in `diff` ("ONNX Runtime version '1.24.0' here, '1.23.0' in the
 * baseline"). */
OQ_API int oq_bench_machine_differs(const oq_bench_machine *a, const oq_bench_machine *b, char *diff, size_t n);
/* Whether the baseline ran with other options that change what is timed (session creation
 * timed, warm-up, mask lengths, seed, graph optimization, session configs, EP options, the
 * memory sampler; with model_path the inputs file's bytes, the mask input given and a mask
 * polarity given; threads are in each row's identity): `diff` "" when not, else the first difference ("opts.include_session true
 * here, false in the baseline"). A key the baseline does not record is not compared. */
OQ_API oq_status oq_bench_config_differs(const oq_bench_baseline *b, const oq_bench_opts *o, char *diff, size_t n,
                                         oq_err *err);

/* A row's identity, THE rule rows are matched by: the variant, batch, seq_len, masked, export
 * shapes, io binding, heads/kv_heads/head_dim, threads, inter-op threads, and a model's named
 * dimensions, each in full whatever its name's length ("cpu:attention24:fp32 batch=1
 * seq_len=16 masked dynamic io=host h=2/2 d=8 threads=1 inter_op=0"). oq_bench_compare adds
 * the model's SHA-256 for a model's rows (rows->model_sha256, the summary's
 * config.model_sha256: " model=" and its first 16 hex digits), which the row does not hold.
 * Returns the whole identity's length (as snprintf: a buffer of fewer bytes holds its start),
 * -1 out of memory, 0 for a NULL row ("" in buf both times). */
OQ_API int oq_bench_row_key(const oq_bench_row *r, char *buf, size_t n);

/* One row of the comparison. */
typedef enum oq_bench_match {
    OQ_BENCH_MATCH_OK = 0,     /* compared, within every limit */
    OQ_BENCH_MATCH_REGRESSED,  /* compared, a ratio above its limit */
    OQ_BENCH_MATCH_UNTIMED,    /* in both, but no limited statistic could be compared: one of them
                                  has no timings (not ok there), or each such statistic is 0 or
                                  absent on one side */
    OQ_BENCH_MATCH_NEW,        /* in this run only */
    OQ_BENCH_MATCH_MISSING     /* in the baseline only */
} oq_bench_match;
OQ_API const char *oq_bench_match_name(oq_bench_match m); /* "ok", "regressed", "untimed", "new", "missing" */

typedef struct oq_bench_row_ratio {
    char key[512];                       /* oq_bench_row_key, " model=" a model's SHA-256 prefix: the
                                            first 511 bytes (oq_bench_comparison.keys: whole) */
    size_t row;                          /* index in rows; (size_t)-1 for a missing row */
    oq_bench_match match;
    double old_ms[OQ_BENCH_MAX_LIMITS];  /* per limit: the baseline's statistic, this run's, */
    double new_ms[OQ_BENCH_MAX_LIMITS];  /* and new/old (NAN where not compared) */
    double ratio[OQ_BENCH_MAX_LIMITS];
} oq_bench_row_ratio;
/* Why limit k (k < the comparison's limits.n) of a matched row (ok, regressed, untimed) was not
 * compared: "absent in the baseline", "not a positive time in the baseline" (0 there), "not
 * timed here"; NULL when it was, or for a new or missing row. Any compared ratio over its limit
 * regresses the row, whatever its other statistics. */
OQ_API const char *oq_bench_ratio_why(const oq_bench_row_ratio *e, size_t k);

typedef struct oq_bench_comparison {
    char file[4096];      /* the baseline, as given */
    char sha256[65];      /* of its bytes */
    char schema[32];      /* its schema */
    char verdict[16];     /* its run's own verdict ("passed", ...; "" when it records none:
                             schema /1) */
    oq_bench_limits limits;
    int any_host;         /* 1: compared although the machines differ */
    char host_diff[512];  /* that difference ("" the same machine) */
    char ort_diff[4200];  /* oq_bench_baseline_ort_differs's note when the comparison was made:
                             another ONNX Runtime library of the same version ("" none) */
    size_t compared, regressed, untimed, added, missing;
    size_t n;
    oq_bench_row_ratio *entries; /* this run's rows in order, then the missing ones */
    char **keys;                 /* beside entries: each one's identity whole (entries[i].key holds
                                    what fits in it) */
} oq_bench_comparison;

/* Compare `rows` (its ONNX Runtime rows: the reference's timings are ortqual's, not under
 * test) with the baseline's under `limits`, into rows->baseline (replacing one there);
 * `host_diff` (NULL or "": the same machine) is recorded as any_host. OQ_ERR_INVALID_ARG: a
 * model's rows generated with another mask input or polarity than the baseline records
 * ("another measurement"); OQ_ERR_NOMEM. */
OQ_API oq_status oq_bench_compare(oq_bench_rows *rows, const oq_bench_baseline *b, const oq_bench_limits *limits,
                                  const char *host_diff, oq_err *err);

/* The schema of bench's summary.json. Before it had one (before 2026-12-06) the time it was
 * written was "created"; it is now "end", as in every ortqual document (read either way). */
/* Version 2 adds the run's verdict: "verdict", "exit_status", "verdict_reason", "tested" and
 * "allow_skip" (oq_bench_verdict_of); a row that could not run is "error" (it was "failed"). */
#define OQ_BENCH_SCHEMA "ortqual.bench/2"

/* Write summary.json (atomically, replacing `path`): when the sweep started (rows->start, null
 * when "") and ended (now), the tool and runtime versions, the
 * evidence (evidence.h) gathered now, after the sweep, so that every library its sessions
 * loaded is listed, the command line ("ortqual" then the `argc` entries of `argv`), the
 * options, and every row with its raw samples (docs/bench.md). */
OQ_API oq_status oq_bench_write_summary(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_rows *rows,
                                        int argc, char *const *argv, const char *path, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
