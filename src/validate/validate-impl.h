/* Internal to src/validate: the plan a worker runs, the JSON of plans and results, and the
 * steps of the validation flow (docs/design.md names the files). */
#ifndef ORTQUAL_VALIDATE_IMPL_H
#define ORTQUAL_VALIDATE_IMPL_H

#include <jansson.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/capture.h"
#include "ortqual/dispatch.h"
#include "ortqual/runtime.h"
#include "ortqual/status.h"
#include "ortqual/validate.h"

/* ---- the plan (types.c) ------------------------------------------------------------ */

/* One batch of a plan: its inputs, the reference's outputs (written by the reference's
 * worker, read by the others) and, with --save-outputs, where this configuration's go. */
typedef struct oq_plan_batch {
    int64_t index;
    char *inputs, *ref, *save; /* save NULL: not saved */
} oq_plan_batch;

/* What one worker runs: one configuration over every batch. The orchestrator fills it and
 * writes it as JSON; the worker reads it back into the same struct. */
typedef struct oq_validate_plan {
    oq_config config;
    int is_reference;
    char *model;                     /* the ONNX file (ORT configurations), else NULL */
    char *weights;                   /* ref:encoder: the encoder weights .npz ... */
    int32_t heads;                   /* ... and their head count */
    size_t n_inputs;                 /* model input name <- member of inputs_NNN.npz */
    char **input_names, **input_members;
    char *mask_member;
    size_t n_batches;
    oq_plan_batch *batches;
    int repeat, warmup;
    char *tolerances;                /* "out:rtol=..,atol=..;..." or NULL */
    int64_t padded_length;           /* the longest batch's L (for dispatch advice) */
    oq_mask_form mask_form;          /* how the exported attention excludes padded keys, as
                                        export resolved it; AUTO when ortqual did not export */
    char *ort_lib;                   /* NULL: the default search */
    size_t n_ep_libs;
    char **ep_lib_names, **ep_lib_paths;
    size_t n_ep_options;
    char **ep_option_keys, **ep_option_values;
    struct {
        int enable;                  /* capture ORT's routing lines (an EP configuration) */
        int require;                 /* an unverified expectation fails instead of skipping */
        size_t n_expect;
        char **expect;               /* NODE=KERNEL rules */
        int force_sdpa_kernel;       /* >= 0: a --prove-teeth rerun's sdpa_kernel; -1: none */
    } dispatch;
    struct {
        int enable, require, strict;
    } placement;
    char *result;                    /* where the worker writes its oq_config_result */
} oq_validate_plan;

/* The plan's strings and arrays freed, the struct zeroed. */
void oq_validate_plan_clear(oq_validate_plan *p);
oq_status oq_plan_add_input(oq_validate_plan *p, const char *name, const char *member, oq_err *err);

/* ---- JSON: the one place plans and results are written and read (json.c) ---------- */

oq_status oq_plan_write(const oq_validate_plan *p, const char *path, oq_err *err);
oq_status oq_plan_read(const char *path, oq_validate_plan *p, oq_err *err);
/* A configuration's result as the worker writes it and as summary.json holds it. */
json_t *oq_config_result_to_json(const oq_config_result *r);
oq_status oq_config_result_from_json(const json_t *j, oq_config_result *r, oq_err *err);
oq_status oq_config_result_write(const oq_config_result *r, const char *path, oq_err *err);
oq_status oq_config_result_read(const char *path, oq_config_result *r, oq_err *err);
oq_status oq_summary_write(const oq_validate_summary *s, const char *path, oq_err *err);
/* outdir/error.json of a run that stopped before any model ran, and its message back. */
oq_status oq_error_record_write(const char *path, const oq_err *e, oq_err *err);
oq_status oq_error_record_read(const char *path, char *msg, size_t n, oq_err *err);
/* Write JSON atomically (indented, keys in insertion order, reals with 10 digits). */
oq_status oq_json_write(const char *path, const json_t *j, oq_err *err);

/* ---- results (result.c) ---------------------------------------------------------- */

void oq_config_result_clear(oq_config_result *r);
void oq_dispatch_result_clear(oq_dispatch_result *d);
/* Copy `src` into `dst` (cleared first); OQ_ERR_NOMEM. */
oq_status oq_dispatch_result_copy(oq_dispatch_result *dst, const oq_dispatch_result *src);
void oq_batch_info_clear(oq_batch_info *b);
oq_status oq_batch_info_copy(oq_batch_info *dst, const oq_batch_info *src, oq_err *err);
void oq_shard_info_clear(oq_shard_info *s);
void oq_merge_info_clear(oq_merge_info *m);
/* Set r->reason to a copy of `fmt` formatted (replacing any earlier one). */
void oq_result_reason(oq_config_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "cuda:attention24:fp16:flash" -> "cuda_attention24_fp16_flash" */
void oq_config_file_tag(const char *name, char *buf, size_t n);

/* ---- the C reference as a model (refmodel.c) --------------------------------------- */

typedef struct oq_ref_model oq_ref_model;
oq_status oq_ref_model_open(const oq_validate_plan *plan, oq_ref_model **out, oq_err *err);
oq_status oq_ref_model_run(oq_ref_model *m, oq_tensor *const *inputs, size_t n_inputs,
                           oq_tensor ***outputs, size_t *n_outputs, oq_err *err);
void oq_ref_model_free(oq_ref_model *m);

/* ---- dispatch and placement proofs inside a worker (checks.c) ---------------------- */

typedef struct oq_wcheck {
    int dispatch_on, placement_on;
    oq_dispatch_env env;
    oq_dispatch_parser *parser;
    oq_capture *cap;
    char profile_prefix[2048];
    uint32_t sdpa_kernel; /* the session's effective sdpa_kernel (0: ORT's choice), for advice */
} oq_wcheck;
oq_status oq_wcheck_begin(oq_wcheck *c, const oq_validate_plan *plan, const char *workdir, oq_err *err);
/* Adds what the checks need to the session options, and notes the sdpa_kernel
 * they carry (the user's, the configuration's or a --prove-teeth rerun's). */
void oq_wcheck_session_opts(oq_wcheck *c, oq_session_opts *so);
/* Fills r->dispatch and r->placement; *verdict 1 pass, 0 fail, -1 unverified (a skip), with
 * the reason in `reason`. Releases what oq_wcheck_begin acquired. */
void oq_wcheck_finish(oq_wcheck *c, const oq_validate_plan *plan, oq_session *s, oq_config_result *r,
                      int *verdict, char *reason, size_t rn);
/* Releases what oq_wcheck_begin acquired when the checks cannot finish. */
void oq_wcheck_abort(oq_wcheck *c);

/* ---- before any model runs (prepare.c) ---------------------------------------------- */

/* The export format of a representation (decomposed for anything not attention23/24). */
oq_attn_format oq_repr_attn_format(oq_repr r);
oq_status oq_validate_prepare_batches(const oq_validate_opts *o, oq_validate_summary *s, oq_err *err);
oq_status oq_validate_model_file(const oq_validate_opts *o, const oq_encoder_weights *w,
                                 const oq_config *c, const int64_t *static_bl, char *path,
                                 size_t n, oq_err *err);
oq_status oq_validate_user_inputs(const char *path, char *features, char *mask, size_t n, oq_err *err);

/* ---- sharded runs (shard_plan.c; merge.c is oq_validate_merge) ----------------------- */

/* What shard i runs: batches [batch_lo, batch_hi) and, besides the reference (configuration
 * 0, which every shard runs), configurations [config_lo, config_hi). */
typedef struct oq_shard_part {
    size_t batch_lo, batch_hi, config_lo, config_hi;
} oq_shard_part;
oq_shard_part oq_shard_part_of(int32_t count, oq_shard_by by, size_t n_batches, size_t n_configs, int32_t i);
/* Where configuration k is among the shard's results (the reference first), -1: not run there. */
long oq_shard_part_config(const oq_shard_part *p, size_t k);

/* A shard run (not the prepare step). */
int oq_shard_is_run(const oq_validate_opts *o);
/* For a shard run, a copy of o writing into outdir/shards/I (dir holds the path); else o. */
const oq_validate_opts *oq_shard_opts(const oq_validate_opts *o, oq_validate_opts *copy, char *dir, size_t n);
/* The prepare step: refuses an earlier plan.json (without --force), else clears its shards. */
oq_status oq_shard_setup(const oq_validate_opts *o, oq_err *err);
/* The prepare step: N shards need N batches (by batch) or N configurations besides the
 * reference (by configuration). */
oq_status oq_shard_split_check(const oq_validate_opts *o, size_t n_batches, oq_err *err);
/* A shard's start: the prepared plan of `root`, and this shard's batches (each file checked
 * against its SHA-256) copied into s. */
oq_status oq_shard_load(const oq_validate_opts *o, const char *root, oq_shard_plan *plan, oq_validate_summary *s,
                        oq_err *err);
/* The plan's identity into s->plan_hash and s->plan_description: every configuration's worker
 * plan with its model and weights files by SHA-256, the batches `all` by theirs, and the
 * orchestrator's rules (--require, --prove-teeth, --save-outputs). */
oq_status oq_plan_identify(const oq_validate_opts *o, const oq_validate_plan *plans, const oq_batch_info *all,
                           size_t n_all, const char *weights_path, oq_validate_summary *s, oq_err *err);
/* A shard's identity against the prepared one: OQ_ERR_INVALID_ARG naming what differs. */
oq_status oq_shard_check_identity(const oq_shard_plan *plan, const oq_validate_summary *s, const char *root,
                                  oq_err *err);
/* The prepare step's record: outdir/shards/plan.json from the prepared summary. */
oq_status oq_shard_plan_prepare(const oq_validate_opts *o, const oq_validate_summary *s, oq_err *err);
/* s->shard filled for this shard and written to its started.json. */
oq_status oq_shard_begin(const oq_validate_opts *o, const oq_shard_plan *plan, oq_validate_summary *s, oq_err *err);

/* JSON of the sharded files (json.c). The description's text is canonical (compact, keys
 * sorted), so its SHA-256 names it. */
char *oq_plan_description(const oq_validate_opts *o, const oq_validate_plan *plans, char (*model_sha256)[65],
                          const char *weights_sha256, const oq_batch_info *all, size_t n_all);
/* The names of the parts in which two descriptions differ ("repeat, model"). */
void oq_plan_difference(const char *a, const char *b, char *buf, size_t n);
oq_status oq_shard_plan_write(const oq_shard_plan *p, const char *path, oq_err *err);
oq_status oq_shard_info_write(const oq_shard_info *i, const char *path, oq_err *err);
oq_status oq_shard_info_read(const char *path, oq_shard_info *i, oq_err *err);

/* "2026-12-02T18:03:56Z" (now, UTC) */
void oq_iso_time(char *buf, size_t n);
/* rm -rf of a directory the library made (work directories, an earlier plan's shards). */
void oq_remove_tree(const char *dir);

/* ---- after (report.c, evidence.c) ------------------------------------------------- */

oq_status oq_validate_write_csv(const char *path, const oq_validate_summary *s, oq_err *err);
/* Draws the plots into outdir/plots and records them (or why not) in the summary. */
void oq_validate_plots(const char *outdir, const char *csv_path, oq_validate_summary *s);
/* Versions, devices, environment, host, command line: JSON text (NULL on OOM). */
char *oq_validate_evidence(const oq_validate_opts *o);

#endif
