/* Internals shared by the files of src/bench (never installed). */
#ifndef ORTQUAL_BENCH_IMPL_H
#define ORTQUAL_BENCH_IMPL_H

#include <jansson.h>

#include "ortqual/bench.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"

/* The inputs of one (batch, length, mode) group, shared by its variants. */
typedef struct oq_bench_group {
    int64_t batch, seq_len;
    int masked;
    int64_t *lengths;      /* batch entries; all seq_len when unmasked */
    int64_t valid_tokens;  /* sum of lengths */
    int64_t valid;         /* sum of squared lengths: attended (query, key) pairs */
    size_t n_in;           /* 4 masked (query, key, value, mask), 3 unmasked */
    oq_tensor *in[4];      /* float32 [B,H,L,D], [B,G,L,D] x2, mask [B,L] */
    oq_tensor *ref64[4];   /* the reference's inputs: q, k, v as float64, nonpad_kv_seqlen */
    oq_tensor *ref_out;    /* float64 reference output, NULL when not computed */
    double ref_ms;         /* wall time of the call that computed ref_out */
    int ref_tried;         /* its computation was attempted (ref_out NULL: it failed) */
} oq_bench_group;

/* The float64 reference output for the group's inputs (ONNX Attention with
 * nonpad_kv_seqlen = lengths when masked) on `threads` threads (0: every core).
 * New tensor in *out. */
oq_status oq_bench_reference(oq_bench_group *g, int threads, oq_tensor **out, oq_err *err);
/* Free the reference's cached inputs. */
void oq_bench_reference_clear(oq_bench_group *g);

/* Sort an error into a row status (see oq_bench_status). */
oq_bench_status oq_bench_classify(oq_status st, const char *msg);

/* ---- one ORT row, whatever the model (row.c) ------------------------------------------ */

/* A row's defaults: not measured (NAN, -1), the variant, threads, warm-up and iters. */
void oq_bench_row_init(oq_bench_row *row, const oq_bench_opts *o, const oq_bench_variant *v);
/* The error as the row's status and message. */
void oq_bench_row_fail(oq_bench_row *row, oq_status st, const oq_err *e);
/* The attention sweep: a row over its tolerance (over_tol set by the check), with a NaN or Inf,
 * or nonzero padded rows becomes failed, saying so. */
void oq_bench_row_judge_accuracy(oq_bench_row *row);
/* The row's memory starts here: VmHWM reset (row->vmhwm_row says whether the kernel let it),
 * and the resident set read as row->rss_before. */
void oq_bench_row_peak_begin(oq_bench_row *row);
/* VmHWM now into row->vmhwm, when larger: read before each later reset and at the row's end,
 * the largest reading is the row's peak. */
void oq_bench_row_peak_note(oq_bench_row *row);

/* Session options of a variant: threads, graph optimisation, and for non-CPU runtimes the
 * user's EP library and options plus what the variant implies (oq_config_ep_options). */
typedef struct oq_bench_session {
    oq_session_opts so;
    const char *keys[64], *values[64];
    char mask[16];
} oq_bench_session;
oq_status oq_bench_session_opts(const oq_bench_opts *o, const oq_bench_variant *v, oq_bench_session *vs,
                                oq_err *err);

/* What a row runs: a model's bytes (with `path`, the file they were read from) or a model file
 * (path alone), its inputs, and what checks the first run's outputs (NULL: nothing; an error
 * fails the row). */
typedef struct oq_bench_model {
    const char *path;
    const uint8_t *bytes;
    size_t len;
    size_t n_in;
    oq_tensor *const *in;
    oq_status (*check)(void *ctx, size_t n_out, oq_tensor **outs, oq_bench_row *row, oq_err *err);
    void *check_ctx;
} oq_bench_model;

/* Session (session_ms), first run (first_run_ms, routing lines on GPU EPs, m->check),
 * warm-up, the timed loop (or cold samples with include_session), memory, and with
 * profile_runs ORT's profile (file profile_<index>_*.json). Failures go into the row. */
void oq_bench_run_ort_row(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_model *m, size_t index,
                          oq_bench_row *row);

/* ---- a baseline (baseline.c) ---------------------------------------------------------------- */

/* Free a comparison (oq_bench_rows_free frees rows->baseline with it). */
void oq_bench_comparison_free(oq_bench_comparison *c);

/* ---- ORT's profile (profile.c) ------------------------------------------------------------ */

/* Read a profile (JSON array of events or {"traceEvents": [...]}): the last `last_runs`
 * model_run events, and per run the events that started between its start and the next
 * run's ("<node>_kernel_time" Node events, "Kernel" GPU events); medians into *out.
 * OQ_ERR_FORMAT names the file when it is not a profile or has fewer runs. */
oq_status oq_bench_profile_parse(const char *text, size_t len, const char *path, size_t last_runs,
                                 oq_bench_profile *out, oq_err *err);
oq_status oq_bench_profile_read(const char *path, size_t last_runs, oq_bench_profile *out, oq_err *err);
/* The median of v[0..n) (NAN when n is 0 or a value is not finite): the profiled runs' summaries. */
double oq_bench_median(const double *v, size_t n);

/* ---- bench --model (shape.c, fill.c, model.c) ----------------------------------------- */

/* One point of a model sweep: every named dimension's value, each input's shape and fill. */
typedef struct oq_bench_point {
    size_t n_dims;
    oq_bench_dimval dims[OQ_BENCH_MAX_DIMS];
    size_t n_inputs;
    oq_bench_input_info *inputs; /* model input order; owned */
    int mask; /* the mask input [B, L] (oq_bench_resolve_point's rule), -1: none */
} oq_bench_point;

/* The model's mask input, chosen once for the sweep (model.c, oq_bench_choose_mask). */
typedef struct oq_bench_mask {
    int index;            /* the [B, L] mask input, -1: none */
    const char *source;   /* how it was found: "contract", "option" (opts.mask_input), "graph"; "none" */
    const char *why;      /* why it is the mask (graph: oq_input_mask_role's sentence); NULL otherwise */
    unsigned char *ones;  /* per model input, 1: mask-like but not the mask (a rank-4 mask, another
                             named like one): generated all ones; NULL: none; owned */
    char note[512];       /* "": else an input named like a mask that is not taken, and why */
} oq_bench_mask;

/* The mask input of model `mi` (inspect.h) whose input uses are `uses` (inputuse-impl.h):
 * the one `contract` names (the model's mask contract), else opts.mask_input, else the one
 * rank-2 input the graph uses as a padding mask or bias (oq_input_mask_role: an attention
 * operator's key-padding mask, or a flow into the attention scores; validate's rule), none
 * when no input is. Two such inputs: OQ_ERR_INVALID_ARG listing them. */
oq_status oq_bench_choose_mask(const oq_bench_opts *o, const oq_model_info *mi, const unsigned *uses,
                               const char *contract, oq_bench_mask *out, oq_err *err);
void oq_bench_mask_clear(oq_bench_mask *m);

/* Points of the sweep: the product of the sweeps' value counts (1 without). */
size_t oq_bench_point_count(const oq_bench_opts *o);
/* Point p for the model inputs `ins` (inspect.h): the npz tensors (NULL: none) as they are,
 * then --shape, then the model's shapes with named dimensions from --dim, the sweep and the
 * shapes already bound. The mask is mk's input where it is [B, L] (mk NULL: no mask).
 * OQ_ERR_INVALID_ARG names the option, input, axis or dimension. */
oq_status oq_bench_resolve_point(const oq_io_info *ins, size_t n_ins, const oq_npz *npz, const oq_bench_opts *o,
                                 const oq_bench_mask *mk, size_t p, oq_bench_point *out, oq_err *err);
void oq_bench_point_clear(oq_bench_point *p);
/* An --expected tensor for model output `out` must have the shape the model gives it at
 * point p: its rank, fixed sizes and named dimensions the inputs bound (open axes are not
 * checked). OQ_ERR_INVALID_ARG names `path`, the member and both shapes. */
oq_status oq_bench_check_expected_shape(const oq_io_info *out, const oq_bench_point *p, const oq_tensor *t,
                                        const char *path, oq_err *err);

/* The inputs of point p (model order, named): the npz's tensors copied, the rest generated, a
 * mask in polarity `pol` (the model's contract's where it has one, else o->mask_polarity). */
oq_status oq_bench_make_inputs(const oq_bench_opts *o, oq_mask_polarity pol, const oq_npz *npz, const oq_bench_point *p,
                               oq_tensor ***out, oq_err *err);
/* Valid elements: the valid entries of the point's mask input (*masked: some are padding); -1
 * without a mask. */
int64_t oq_bench_valid_elements(const oq_bench_point *p, oq_tensor *const *in, oq_mask_polarity pol, int *masked);
/* The run's options as the summary's `config` records them (a new object). */
oq_status oq_bench_config_json(const oq_bench_opts *o, json_t **out, oq_err *err);
/* Now, ISO 8601 UTC to the second ("2026-12-06T06:00:00Z"): a sweep's start and end. */
void oq_bench_utc_now(char buf[32]);
/* Event lengths of B rows of L as the attention sweep's masked batches make them
 * (length_policy, mask_fraction, seed). A mask_fraction that leaves a row of L no valid
 * element is OQ_ERR_INVALID_ARG naming opts.mask_fraction. */
oq_status oq_bench_event_lengths(const oq_bench_opts *o, int64_t B, int64_t L, int64_t *lengths, oq_err *err);
/* Whether rows of padded length L keep a valid element under o's length policy and fraction:
 * checked for every length before anything runs (the sweep and --model alike), not a row. */
oq_status oq_bench_check_fraction(const oq_bench_opts *o, int64_t L, oq_err *err);

/* The sweep of a model of the user's (o->model_path). */
oq_status oq_bench_model_sweep(oq_runtime *rt, const oq_bench_opts *o, oq_bench_progress_fn progress, void *user,
                               oq_bench_rows **out, oq_err *err);

/* The model's notes folded once by its sweep (notes.c), "MODEL: LINE\n" each: o->ready called
 * with them at hand, where oq_bench_ready_notes(o) gives them (borrowed; NULL for other options
 * or outside the ready step); kept with the rows the sweep returns (a copy) until
 * oq_bench_rows_free, where oq_bench_rows_notes gives them (NULL: rows no model sweep made, the
 * writer then folds the model itself). */
oq_status oq_bench_ready_with_notes(const oq_bench_opts *o, const char *notes, oq_err *err);
const char *oq_bench_ready_notes(const oq_bench_opts *o);
oq_status oq_bench_rows_keep_notes(const oq_bench_rows *rows, const char *notes, oq_err *err);
const char *oq_bench_rows_notes(const oq_bench_rows *rows);
void oq_bench_rows_drop_notes(const oq_bench_rows *rows);

#endif
