/* Internal to src/validate: the plan a worker runs and small shared helpers. */
#ifndef ORTQUAL_VALIDATE_IMPL_H
#define ORTQUAL_VALIDATE_IMPL_H

#include <jansson.h>

#include "core/core-impl.h"
#include "ortqual/capture.h"
#include "ortqual/dispatch.h"
#include "ortqual/runtime.h"
#include "ortqual/shard.h"
#include "ortqual/status.h"
#include "ortqual/validate.h"

/* Plan keys (JSON written by the orchestrator, read by the worker):
 *   config        "cpu:attention24:fp32"
 *   kind          "encoder" | "sdpa" | "model"
 *   model         ONNX file (ORT configs)
 *   weights       encoder weights .npz and "heads" (ref:encoder)
 *   sdpa          {heads, kv_heads, head_dim} (ref:sdpa)
 *   inputs        {model input name: npz member}
 *   mask_member   npz member holding the mask
 *   batches       [{index, inputs, ref, save}]   ref: reference outputs .npz
 *   is_reference  true for configs[0]
 *   repeat, warmup, tolerances
 *   runtime       {ort_lib, ep_libs: [[name, path]], ep_options: [[k, v]]}
 *   dispatch      {expect: [NODE=KERNEL], require, force_kernel}
 *   placement     {require_full_gpu, strict}
 *   result        where the worker writes its result JSON */

/* "cuda:attention24:fp16:flash" -> "cuda_attention24_fp16_flash" */
void oq_config_file_tag(const char *name, char *buf, size_t n);
const char *oq_json_str(const json_t *obj, const char *key, const char *dflt);
/* Write JSON atomically (indented, sorted keys as inserted). */
oq_status oq_json_write(const char *path, const json_t *j, oq_err *err);
/* "2026-12-02T18:03:56Z" (now, UTC) */
void oq_iso_time(char *buf, size_t n);
/* rm -rf of a directory the library made (work directories, an earlier plan's shards). */
void oq_remove_tree(const char *dir);

/* The C reference as a runnable model (ref:encoder, ref:sdpa), loaded once per worker. */
typedef struct oq_ref_model oq_ref_model;
oq_status oq_ref_model_open(const json_t *plan, oq_ref_model **out, oq_err *err);
oq_status oq_ref_model_run(oq_ref_model *m, oq_tensor *const *inputs, size_t n_inputs,
                           oq_tensor ***outputs, size_t *n_outputs, oq_err *err);
void oq_ref_model_free(oq_ref_model *m);

/* checks.c: dispatch and placement proofs inside a worker. */
typedef struct oq_wcheck {
    int dispatch_on, placement_on;
    oq_dispatch_env env;
    oq_dispatch_parser *parser;
    oq_capture *cap;
    char profile_prefix[2048];
    uint32_t sdpa_kernel; /* the session's effective sdpa_kernel (0: ORT's choice), for advice */
} oq_wcheck;
oq_status oq_wcheck_begin(oq_wcheck *c, const json_t *plan, const char *workdir, oq_err *err);
/* Adds what the checks need to the session options, and notes the sdpa_kernel
 * they carry (the user's, the configuration's or a --prove-teeth rerun's). */
void oq_wcheck_session_opts(oq_wcheck *c, oq_session_opts *so);
/* Records "dispatch"/"placement" in result; verdict 1 pass, 0 fail, -1 unverified (skip). */
void oq_wcheck_finish(oq_wcheck *c, const json_t *plan, const oq_config *cfg, oq_session *s,
                      json_t *result, int *verdict, char *reason, size_t rn);
void oq_wcheck_abort(oq_wcheck *c);

/* report.c */
oq_status oq_validate_write_csv(const char *path, const json_t *summary, oq_err *err);
void oq_validate_plots(const char *outdir, const char *csv_path, json_t *summary);

/* prepare.c */
/* The export format of a representation (decomposed for anything not attention23/24). */
oq_attn_format oq_repr_attn_format(oq_repr r);
oq_status oq_validate_prepare_batches(const oq_validate_opts *o, json_t *jbatches, oq_err *err);
oq_status oq_validate_model_file(const oq_validate_opts *o, const oq_encoder_weights *w,
                                 const oq_config *c, const int64_t *static_bl, char *path,
                                 size_t n, oq_err *err);
oq_status oq_validate_user_inputs(const char *path, char *features, char *mask, size_t n, oq_err *err);
/* shard.c: the plan's identity and the shard steps (ortqual/shard.h). */
/* {"hash", "description"}: what decides what runs and how it is judged, with the SHA-256 of
 * every batch file (batches[].sha256), of the weights file and of a --model file. */
oq_status oq_plan_describe(const oq_validate_opts *o, const json_t *batches, const char *weights_file,
                           json_t **plan, oq_err *err);
/* A shard run (not the prepare step). */
int oq_shard_is_run(const oq_validate_opts *o);
/* For a shard run, a copy of o writing into outdir/shards/I (dir holds the path); else o. */
const oq_validate_opts *oq_shard_opts(const oq_validate_opts *o, oq_validate_opts *copy, char *dir, size_t n);
/* Prepare step: refuses an earlier plan.json (without --force), else clears its shards. */
oq_status oq_shard_setup(const oq_validate_opts *o, oq_err *err);
oq_status oq_shard_plan_write(const oq_validate_opts *o, const json_t *plan, const json_t *batches,
                              json_t **out, oq_err *err);
oq_status oq_shard_plan_load(const char *root, json_t **out, oq_err *err);
/* A shard's batch records (files checked against their SHA-256) appended to batches. */
oq_status oq_shard_load(const oq_validate_opts *o, const char *root, json_t **shardplan, json_t *batches,
                        oq_err *err);
oq_status oq_shard_check_plan(const json_t *shardplan, const json_t *plan, const char *root, oq_err *err);
int oq_shard_runs_config(const json_t *shardplan, int32_t index, size_t k);
json_t *oq_shard_block(const oq_validate_opts *o, const json_t *shardplan);
oq_status oq_shard_started(const oq_validate_opts *o, const json_t *block, oq_err *err);

/* evidence.c: versions, devices, environment, host, command line. */
json_t *oq_validate_evidence(const oq_validate_opts *o);

#endif
