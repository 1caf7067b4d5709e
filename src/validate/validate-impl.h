/* Internal to src/validate: the plan a worker runs, the JSON of plans and results, and the
 * steps of the validation flow (docs/design.md names the files). */
#ifndef ORTQUAL_VALIDATE_IMPL_H
#define ORTQUAL_VALIDATE_IMPL_H

#include <limits.h>
#include <stdio.h>

#include <jansson.h>

#include "axes/axes-impl.h"
#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "inspect/inputuse-impl.h"
#include "ortqual/capture.h"
#include "ortqual/dispatch.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "ortqual/proc.h"
#include "ortqual/runtime.h"
#include "ortqual/status.h"
#include "ortqual/validate.h"

/* A file's path below the run's folder: a folder path the system takes (PATH_MAX with its 0)
 * and a name of ours after it. Never cut: oq_check_outdir refused a folder that leaves no room. */
#define OQ_PATH_BUF (PATH_MAX + 256)

/* ---- the plan (types.c) ------------------------------------------------------------ */

/* One batch of a plan: its inputs, the `expected` reference's outputs (NULL: the reference's
 * worker computes them, into the plan's ref_stream) and, with --save-outputs, where this
 * configuration's go. A plan's batches are a file of JSON lines, one each: neither the
 * orchestrator nor the worker holds them all. */
typedef struct oq_plan_batch {
    int64_t index;
    char *inputs, *ref, *save; /* save NULL: not saved */
    char *source;              /* the user's file the batch was read from (NULL: generated) */
    char *sha256;              /* the inputs file's, as the orchestrator wrote it (NULL: not known) */
    int64_t batch_size;        /* its events (0: not known) */
} oq_plan_batch;

/* A file named by its content, where a plan's identity would otherwise hold its path. */
typedef struct oq_file_content {
    int64_t size;
    char sha256[65];
} oq_file_content;

/* What one worker runs: one configuration over every batch. The orchestrator fills it and
 * writes it as JSON; the worker reads it back into the same struct. */
typedef struct oq_validate_plan {
    oq_config config;
    int is_reference;
    char *model;                     /* the ONNX file (ORT configurations), else NULL ... */
    char *model_sha256;              /* ... and its identity when the plan was made
                                        (oq_model_file_read): the worker runs it only if the
                                        bytes it reads are that model (NULL: not checked) */
    char *weights;                   /* ref:encoder: the encoder weights .npz ... */
    char *weights_sha256;            /* ... its SHA-256, of the bytes the orchestrator wrote (the
                                        cache's key; the reference runs them only if the bytes it
                                        reads are those) ... */
    int32_t heads, kv_heads;         /* ... and their head count; ref:sdpa: its heads */
    size_t n_inputs;                 /* model input name <- member of inputs_NNN.npz */
    char **input_names, **input_members;
    char *mask_member;               /* the member the mask contract applies to; NULL: none */
    oq_mask_polarity mask_polarity;  /* which of its values marks a valid element */
    const char *mask_polarity_source; /* where that came from (oq_signature.polarity_source; static) */
    int padding;                     /* OQ_PADDING_* for masked outputs */
    size_t n_batches;
    char *batches_file;              /* the batches, an oq_plan_batch a line (oq_plan_batch_put) */
    int repeat, warmup;              /* 0 and 0: one call per batch (the reference) */
    int threads;                     /* the C reference's threads, ORT's intra-op threads */
    oq_graph_opt graph_opt;          /* ORT's graph optimization level */
    char *tolerances;                /* "out:rtol=..,atol=..;..." or NULL */
    size_t n_seq_axes;               /* the caller's --seq-axis (the output names owned) */
    oq_seq_axis *seq_axes;
    int64_t padded_length;           /* the longest batch's L (for dispatch advice) */
    oq_mask_form mask_form;          /* how the exported attention excludes padded keys, as
                                        export resolved it; AUTO when ortqual did not export */
    char *ort_lib;                   /* NULL: the default search */
    size_t n_ep_libs;
    char **ep_lib_names, **ep_lib_paths;
    oq_file_content *ep_lib_content; /* each EP library's bytes, as the plan's identity names it
                                        (the worker loads it by path); NULL: not hashed */
    size_t n_ep_options;
    char **ep_option_keys, **ep_option_values;
    size_t n_session_configs;        /* ORT session config entries */
    char **session_config_keys, **session_config_values;
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
    int progress;                    /* an isolated worker writes an OQ_PROGRESS_PREFIX line
                                        per batch done */
    int words;                       /* the run's caller words the library's texts its own way
                                        (oq_set_terms): an isolated worker keeps its process's
                                        words, the caller's when forked, the tool's when the tool
                                        is re-executed; 0: it writes the library's */
    char *cache_dir;                 /* the reference's outputs cached there (refcache.c); NULL:
                                        no cache */
    int cache_shared;                /* cache_dir is a group's (opts.cache_shared) */
    int cache_trust_self;            /* ... of which only this user's entries are used */
    size_t n_ref_outputs;            /* with cache_dir: the C reference's outputs by name, each
                                        float64, which a cache entry must hold, no other */
    char **ref_outputs;
    char *ref_stream;                /* the reference's outputs, every batch's, written there by
                                        its worker and read by the others (refstream.c); NULL:
                                        the batches' `expected` files */
    int ref_stream_fd;               /* the reference's: the stream's locked descriptor it
                                        inherits (-1: none, it creates the file) */
} oq_validate_plan;

/* A worker's progress line on stderr, OQ_PROGRESS_PREFIX "<done> <total>": the orchestrator
 * takes it off the stderr it keeps (oq_proc_run_watch). */
#define OQ_PROGRESS_PREFIX "\036ortqual-progress "
/* Called after each batch with how many are done of how many; non-zero stops the worker there
 * (its result then a failure, its batches' records kept). */
typedef int (*oq_batch_hook_fn)(void *ctx, size_t done, size_t total);
/* The worker with a per-batch hook (in-process runs); without one, oq_validate_worker writes
 * the progress line when the plan asks for it. */
oq_status oq_validate_worker_hooked(const char *plan_path, oq_batch_hook_fn on_batch, void *ctx, oq_err *err);
/* The tolerances a configuration's outputs are judged by: its precision's preset (*preset,
 * what oq_compare_judge_vacuous exempts) with the plan's overrides `spec` (may be NULL) on it.
 * The worker's, and the merge's when it judges a shard's summary again. *tols is the caller's
 * to free, also after an error. */
oq_status oq_config_tolerances(oq_precision precision, const char *spec, oq_tolerance *preset, oq_tolerances **tols,
                               oq_err *err);

/* The ORT library a configuration's worker loads: the reference's (is_ref) may be another. */
const char *oq_validate_plan_ort_lib(const oq_validate_opts *o, int is_ref);
/* Why some worker of run `o` could not be forked from this process (a phrase: "a process with
 * other threads"), or NULL where every one can: asked before anything is written where no tool
 * can be re-executed instead (spawn.c). */
const char *oq_workers_fork_obstacle(const oq_validate_opts *o);
/* The worker of the plan at plan_path in a child process (isolation): forked from this process
 * when that is safe and ORT `ort_lib` is already loaded here (spawn.c), else o->self_exe
 * re-executed as `validate --worker PLAN`; *forked says which. As oq_proc_run_watch otherwise. */
oq_status oq_worker_spawn(const oq_validate_opts *o, const char *plan_path, const char *ort_lib,
                          const oq_proc_watch *w, oq_proc_result *res, int *forked, oq_err *err);
/* As oq_worker_spawn, started in the background (oq_proc_start_bg) with its stderr on
 * stderr_path: waited for with oq_proc_wait_bg. */
oq_status oq_worker_spawn_bg(const oq_validate_opts *o, const char *plan_path, const char *ort_lib,
                             const char *stderr_path, oq_proc_bg *bg, int *forked, oq_err *err);

/* Whether the ORT library `lib` (NULL or "": the default search, $ORTQUAL_ORT_LIB first) loads,
 * tried in a forked child so that this process loads no other ORT than its own: OQ_ERR_RUNTIME
 * with the loader's reason when it does not; else the real file it loaded into `file` (n bytes;
 * may be NULL). Not tried where a fork is unsafe (threads, an EP library loaded): the workers
 * then say it, and `file` is "". */
oq_status oq_worker_probe_ort(const char *lib, char *file, size_t n, oq_err *err);

/* oq_validate_run's up-front check of the caller's fields: configs NULL with n_configs, and a
 * value outside its enum or range (kind, graph_opt, threads, padding, repeat, warmup, each
 * configuration's repr, precision and kernel) is OQ_ERR_INVALID_ARG naming the field. */
oq_status oq_validate_opts_check(const oq_validate_opts *o, oq_err *err);

/* Saved outputs' provenance (validate --save-outputs): the .npz archive's comment, "ortqual-outputs "
 * and a JSON object of the configuration, provider, model SHA-256, ONNX Runtime (version, the
 * mapped file, that file's SHA-256 (NULL: not named, written null), its ELF build-id (NULL: none,
 * left out)) and session options ("session": threads, graph_opt, config and ep_options) that made
 * them (malloc'ed; NULL when out of memory). */
char *oq_outputs_provenance(const oq_validate_plan *p, const char *ort_version, const char *ort_library,
                            const char *ort_sha256, const char *ort_build_id);
/* An `expected` reference whose files say (oq_outputs_provenance) they were saved by a configuration
 * under test's own session (the same --model files by SHA-256, its provider, ORT of the bytes
 * `ort_file` holds, at any path, and the same session options: docs/verdicts.md): compared with them it compares ORT with itself,
 * passes and proves nothing; OQ_ERR_INVALID_ARG naming the file and the configuration. `ort_file`
 * "": not known, not judged. A file that records the ELF build-id of the library this run maps
 * (`ort_build_id`, NULL or "": none) was saved by that build whatever its SHA-256 says (a file
 * signed through a link re-pointed since, a patched copy). */
oq_status oq_validate_saved_self(const oq_validate_opts *o, const char *ort_file, const char *ort_build_id,
                                 oq_err *err);
/* Whether two ORT libraries are one build by their ELF build-ids (a[na], b[nb], hex as
 * oq_runtime_build_id writes them): OQ_SAME_ORT_BUILD_ID where both have one and it is the same
 * (strip keeps it; two builds of one commit differ in it), else OQ_SAME_ORT_NONE (nothing told
 * where either has none). replay's self-comparison (selfcmp.c) and saved outputs' share it. */
oq_same_ort oq_ort_build_id_same(const char *a, size_t na, const char *b, size_t nb);

/* What the `expected` reference records of the outputs it is made of (oq_config_result.saved_by):
 * the first file's provenance (config, provider, ort_version, ort_library, ort_library_sha256, as
 * its comment says) and that file, as JSON text (malloc'ed); NULL when the file records none. */
oq_status oq_validate_saved_by(const oq_validate_opts *o, char **saved_by, oq_err *err);
/* configs[0].saved_by told whether the first configuration that ran ORT ran the build that saved
 * them ("same_ort"): the same bytes where the file recorded their SHA-256, else the same version
 * and path. */
oq_status oq_validate_saved_by_compare(oq_config_result *configs, size_t n, oq_err *err);

/* The plan's strings and arrays freed, the struct zeroed. */
void oq_validate_plan_clear(oq_validate_plan *p);
oq_status oq_plan_add_input(oq_validate_plan *p, const char *name, const char *member, oq_err *err);
/* src[0..n_src) appended to *v (their output names copied); 0 when out of memory. */
int oq_seq_axes_copy(oq_seq_axis **v, size_t *n, const oq_seq_axis *src, size_t n_src);
void oq_seq_axes_clear(oq_seq_axis **v, size_t *n);

/* ---- JSON: the one place plans and results are written and read (json.c) ---------- */

/* The schemas of the scratch files between the orchestrator and a worker (.work/plan_X.json,
 * .work/result_X.json): a file of another schema is refused by name, one without a schema
 * (written before they had one) is read as before. */
#define OQ_WORKER_PLAN_SCHEMA "ortqual.worker-plan/1"
#define OQ_WORKER_RESULT_SCHEMA "ortqual.worker-result/1"

oq_status oq_plan_write(const oq_validate_plan *p, const char *path, oq_err *err);
oq_status oq_plan_read(const char *path, oq_validate_plan *p, oq_err *err);
/* One batch of a plan written as one line; 0 on a write error or out of memory. */
int oq_plan_batch_put(FILE *f, const oq_plan_batch *b);
/* Each batch of the plan's batches file to fn in turn, with its place (from 0); stops at fn's
 * error. OQ_ERR_FORMAT when a line is not a batch. */
typedef oq_status (*oq_plan_batch_fn)(void *ctx, const oq_plan_batch *b, size_t i, oq_err *err);
oq_status oq_plan_batches_each(const oq_validate_plan *p, oq_plan_batch_fn fn, void *ctx, oq_err *err);
/* A configuration's result as the worker writes it and as summary.json holds it. */
json_t *oq_config_result_to_json(const oq_config_result *r);
oq_status oq_config_result_from_json(const json_t *j, oq_config_result *r, oq_err *err);
oq_status oq_config_result_write(const oq_config_result *r, const char *path, oq_err *err);
oq_status oq_config_result_read(const char *path, oq_config_result *r, oq_err *err);
/* summary.json as a document without any batch record (every "batches" array empty): the plots
 * add a sample of them (oq_validate_plots). */
json_t *oq_summary_to_json_for_plots(const oq_validate_summary *s);
/* What a run keeps on file instead of in its summary, so its memory does not grow with its
 * batches: the batch list (a batch's index and valid size kept), the plan's description, and
 * each configuration's batch records. A NULL member (or no oq_spilled): taken from the summary. */
typedef struct oq_batch_brief {
    int64_t index, valid_size;
    const char *source;           /* oq_batch_source_name's word (static) */
} oq_batch_brief;
/* Where a batch came from, as validate.csv's `source` says it: "generated" (events ortqual made),
 * "inputs" (the user's file, judged against a reference that ran) or "saved-outputs" (the
 * user's file, judged against the outputs saved with it: the `expected` reference). */
const char *oq_batch_source_name(const oq_batch_info *b);
oq_batch_brief oq_batch_brief_of(const oq_batch_info *b);
/* A run's notes, each said once before it ran (summary.json's "notes", docs/summary-schema.md):
 * kept beside the summary, as oq_validate_summary has no member for them (the ABI keeps it).
 * kind[i] and text[i] for i < n, each pair once. */
typedef struct oq_run_notes {
    size_t n;
    char **kind, **text;
} oq_run_notes;
/* The pair appended unless held already (merged shards each carry the run's); OQ_ERR_NOMEM. */
oq_status oq_run_notes_add(oq_run_notes *n, const char *kind, const char *text, oq_err *err);
void oq_run_notes_clear(oq_run_notes *n);
json_t *oq_run_notes_json(const oq_run_notes *n); /* [{"kind", "text"}, ...]; n NULL: [] */
/* summary.json's "notes" (`a`, NULL: a summary without them, none) added to *n; OQ_ERR_FORMAT
 * naming `path` for an entry without a string kind and text. */
oq_status oq_run_notes_back(const json_t *a, oq_run_notes *n, const char *path, oq_err *err);
typedef struct oq_spilled {
    char *batch_list;             /* JSON lines, a batch list entry each */
    oq_batch_brief *brief;        /* n_brief, in the list's order */
    size_t n_brief;
    char *description;            /* the plan's description (JSON text) */
    char **records;               /* per configuration of the summary: its batch records */
    const oq_run_notes *notes;    /* the run's notes (borrowed; NULL: none) */
} oq_spilled;
/* The batch list and description of s moved to files in `dir` (s keeps neither after). */
oq_status oq_spill_batches(oq_validate_summary *s, const char *dir, oq_spilled *sp, oq_err *err);
void oq_spilled_clear(oq_spilled *sp, size_t n_configs);
oq_status oq_summary_write(const oq_validate_summary *s, const oq_spilled *sp, const char *path, oq_err *err);

/* Batch records as JSON lines: a worker appends each as its batch finishes; the run's parent
 * reads them one at a time and never holds them all. */
/* A worker's file of them: its result's path with "l" added (result_X.jsonl). */
void oq_batch_records_path(const char *result, char *buf, size_t n);
/* One record written as one line; 0 on a write error or out of memory. */
int oq_batch_record_put(FILE *f, const oq_batch_result *b);
/* What a record's output holds that the public oq_batch_output has no member for (the ABI keeps
 * it): its matched infinities, and where the mask's lengths applied and what decided it. */
typedef struct oq_output_beside {
    int64_t inf_matched;          /* -1: not known, the key left out */
    int32_t batch_axis, seq_axis; /* the axes masked (padding's "batch_axis", "seq_axis") ... */
    const char *masked_by;        /* ... and the rule (oq_mask_axes.by; NULL: none masked, or not
                                     known: the three keys left out) */
} oq_output_beside;
/* The same with beside[i] for b->outputs[i] (NULL: none known). */
int oq_batch_record_put_beside(FILE *f, const oq_batch_result *b, const oq_output_beside *beside);
json_t *oq_batch_record_json(const oq_batch_result *b); /* as summary.json holds it */
/* Each record of the file to fn in turn, typed and as read (fn may keep `rec` with
 * json_incref; b's outputs are freed after); stops at fn's error. */
typedef oq_status (*oq_batch_fn)(void *ctx, const oq_batch_result *b, json_t *rec, oq_err *err);
oq_status oq_batch_records_each(const char *path, oq_batch_fn fn, void *ctx, oq_err *err);
/* summary.json read with its configurations' batch records moved one at a time into
 * "<prefix>K.jsonl" (configuration K; (*records)[K], NULL: it had none, *n_records entries,
 * freed by the caller): the summary holds no batch record, no batch list, no batch in its
 * plan_description and no shard.batches (a merge takes those from the plan). */
/* Its notes are added to *notes (a merge's, each once). */
oq_status oq_validate_summary_read_spilled(const char *path, const char *prefix, oq_validate_summary **summary,
                                           char ***records, size_t *n_records, oq_run_notes *notes, oq_err *err);
/* outdir/error.json of a run that stopped before any model ran, and its message back. */
oq_status oq_error_record_write(const char *path, const oq_err *e, oq_err *err);
oq_status oq_error_record_read(const char *path, char *msg, size_t n, oq_err *err);
/* Write JSON atomically (indented, keys in insertion order, reals with 10 digits). */
oq_status oq_json_write(const char *path, const json_t *j, oq_err *err);

/* ---- results (result.c) ---------------------------------------------------------- */

void oq_config_result_clear(oq_config_result *r);
void oq_dispatch_result_clear(oq_dispatch_result *d);
/* A failure's text and a copy of its fields appended to d, failures[] and failed[] kept the
 * same length; OQ_ERR_NOMEM leaves d as it was. _failures_add: n of them. */
oq_status oq_dispatch_failure_add(oq_dispatch_result *d, const char *text, const oq_dispatch_failure *f);
oq_status oq_dispatch_failures_add(oq_dispatch_result *d, char *const *texts, const oq_dispatch_failure *failed,
                                   size_t n);
/* A copy of failure i's fields; from its text and d's log when d has no failed[] (a result
 * built by hand, with its texts only). OQ_ERR_NOMEM. */
oq_status oq_dispatch_failure_get(const oq_dispatch_result *d, size_t i, oq_dispatch_failure *out);
/* Copy `src` into `dst` (cleared first); OQ_ERR_NOMEM. */
oq_status oq_dispatch_result_copy(oq_dispatch_result *dst, const oq_dispatch_result *src);
void oq_batch_info_clear(oq_batch_info *b);
oq_status oq_batch_info_copy(oq_batch_info *dst, const oq_batch_info *src, oq_err *err);
void oq_shard_info_clear(oq_shard_info *s);
void oq_merge_info_clear(oq_merge_info *m);
/* The events of a batch's worst elements (oq_output_result.worst_event says what they are). */
typedef struct oq_worst_events {
    unsigned known;               /* bit i: worst[i] is set */
    int64_t worst[OQ_COMPARE_MAX_WORST];
    int failing_known;
    int64_t failing;              /* of worst_failing */
} oq_worst_events;
/* A batch's output as the run keeps it: the comparison without worst elements and histograms;
 * ev: its worst elements' events (NULL: none known). */
void oq_batch_output_of(const oq_compare_result *r, const oq_worst_events *ev, oq_batch_output *o);
/* What oq_compare_judge_numbers reads of a batch's record, with its element counts and padding
 * rule, back in a comparison record (the rest zero, max_abs too: written to 10 digits, it is
 * judged apart): oq_batch_output_of's inverse for judging a record again (merge). */
void oq_batch_output_counts(const oq_batch_output *o, oq_compare_result *r);
/* v as a batch record holds a float output's metric: to 10 significant digits, read back
 * (record.c). Monotone, so a value no larger than another is recorded no larger. */
double oq_batch_real_kept(double v);
/* `from` added into `into` (oq_output_result says how each field combines). */
void oq_output_result_merge(oq_output_result *into, const oq_output_result *from);
/* r added to the aggregate of its output in v (appended when new). */
oq_status oq_output_results_add(oq_output_result **v, size_t *n, const oq_output_result *r, oq_err *err);
/* One batch's comparison added to the aggregate of its output in v; ev as oq_batch_output_of. */
oq_status oq_output_results_add_batch(oq_output_result **v, size_t *n, const oq_compare_result *r, int64_t batch,
                                      const oq_worst_events *ev, oq_err *err);
/* Two loads of ONNX Runtime are one build: the same file content (the same path where a summary
 * predates the hash). Both loaded one (ort_version set). */
int oq_config_same_runtime(const oq_config_result *a, const oq_config_result *b);
/* Set r->reason to a copy of `fmt` formatted (replacing any earlier one). */
void oq_result_reason(oq_config_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Batch totals counted one record at a time (oq_batch_totals). */
typedef struct oq_totals_acc {
    oq_batch_totals t;
    double *medians;
    size_t n_medians;
} oq_totals_acc;
void oq_totals_begin(oq_totals_acc *a);
int oq_totals_add(oq_totals_acc *a, const oq_batch_result *b); /* 0: out of memory */
void oq_totals_end(oq_totals_acc *a, oq_batch_totals *out);
/* r->totals from r->batches (a summary read back, a merge); 0: out of memory. */
int oq_batch_totals_of(oq_config_result *r);
/* "cuda:attention24:fp16:flash" -> "cuda_attention24_fp16_flash" */
void oq_config_file_tag(const char *name, char *buf, size_t n);

/* ---- the C reference as a model (refmodel.c) --------------------------------------- */

typedef struct oq_ref_model oq_ref_model;
/* Creates the reference once for the worker, on plan->threads threads. */
oq_status oq_ref_model_open(const oq_validate_plan *plan, oq_ref_model **out, oq_err *err);
/* The most threads one of its runs uses. */
int oq_ref_model_threads(const oq_ref_model *m);
/* The same before it is opened (a reference whose batches all come from the cache). */
int oq_ref_model_threads_of(const oq_validate_plan *plan);
oq_status oq_ref_model_run(oq_ref_model *m, oq_tensor *const *inputs, size_t n_inputs,
                           oq_tensor ***outputs, size_t *n_outputs, oq_err *err);
void oq_ref_model_free(oq_ref_model *m);
/* The names of the outputs the C reference of `cfg` gives (`w`: ref:encoder's weights), into
 * names[0..max) (borrowed: "output", the weights' heads); how many (0: not a C reference). */
size_t oq_ref_model_outputs(const oq_config *cfg, const oq_encoder_weights *w, const char **names, size_t max);
/* The axis a reference output's positions run along, as ortqual's exports lay them out: 2 of
 * [B, H, L, D], else 1 ([B, L, C]). */
int32_t oq_ref_model_seq_axis(int32_t ndim);

/* ---- the reference cache (refcache.c) ------------------------------------------------ */

/* A reference's outputs stored per batch by content: a batch's key text names the reference
 * and its numerics' version (OQ_REFERENCE_NUMERICS), its weights' SHA-256, the options that
 * change its outputs and the batch's inputs file's SHA-256; its record holds that text, and
 * KEY, its SHA-256, names the record and the outputs' file. */
typedef struct oq_refcache {
    int enabled;
    int shared;                      /* a group's: entries stored group-readable */
    int own_only;                    /* only this user's entries are used (per user, or a group's
                                        with cache_trust_self): another's is a bad entry */
    char dir[4096];
    char *key_text;                  /* the key text but for the batch's inputs line */
    size_t n_outputs;                /* the plan's ref_outputs (borrowed): an entry holds these */
    char *const *outputs;
} oq_refcache;
/* The plan's reference is cached: a C reference (ref:*) with a cache directory. */
int oq_refcache_applies(const oq_validate_plan *p);
/* Ready for the plan (disabled when it does not apply): the directory made 0700 if absent, and
 * refused when it or its symlink belongs to another user. */
oq_status oq_refcache_open(const oq_validate_plan *p, oq_refcache *c, oq_err *err);
void oq_refcache_close(oq_refcache *c);
/* What oq_refcache_dir_ready found, for the caller to say. */
typedef struct oq_refcache_dir {
    unsigned was;                    /* per user: its mode before it was made private, 0: unchanged */
    int no_setgid;                   /* shared: no setgid bit, so new entries take their writer's group */
    char group[64];                  /* shared: the folder's group, by name (else its number) */
} oq_refcache_dir;
/* The directory made (0700) or checked: refused (OQ_ERR_INVALID_ARG) when it is not a
 * directory or a symlink to it belongs to another user. Per user (`shared` 0): refused when it
 * belongs to another user, or when it is world-writable or sticky (a shared folder such as /tmp);
 * an existing one that group or others could read or write is made private when it holds only
 * the cache's entries (KEY.json, KEY.npz, their temporary files), else refused. Shared (a group's, made by its administrator): never made nor changed; refused when
 * absent, when its group is none of this process's (getegid, getgroups), when the group cannot
 * read, write and enter it, or when others can write to it. `d` may be NULL. */
oq_status oq_refcache_dir_ready(const char *dir, int shared, oq_refcache_dir *d, oq_err *err);
/* The user's name, else the number. */
void oq_user_name(unsigned uid, char *name, size_t n);
/* The batch's KEY: the SHA-256 of its key text, the reference's and then `inputs_sha`, the
 * SHA-256 of the batch's inputs file as the worker read it (hashed once, from the bytes it
 * parses). The calls below take the same `inputs_sha`. */
void oq_refcache_key(const oq_refcache *c, const char inputs_sha[65], char key[65]);
/* Whether the batch of these inputs has an entry: its record is there, a cache record for this
 * batch's key (read, not yet the outputs it names: oq_refcache_get verifies those). */
int oq_refcache_has(const oq_refcache *c, const char inputs_sha[65]);
/* The cached outputs of the batch of these inputs (its size `batch`, 0: unknown), verified:
 * their .npz bytes (malloc'ed), and the file and its identity (oq_refstream_put_file passes
 * them on by name); hit->npz NULL on a miss. A bad entry (corrupt, other tensors, a record for
 * other inputs, a file that cannot be read or is not a regular file) is a miss with `warning`
 * saying why; it is never used. */
typedef struct oq_refcache_hit {
    unsigned char *npz; /* NULL: a miss or a bad entry */
    size_t n;
    char path[4200];    /* the file they were read from ... */
    oq_file_id id;      /* ... and which file it was (id.uid: who wrote them) */
    unsigned record_uid; /* who wrote the record, and whose the entry is (oq_refcache_writer) */
    unsigned writer;
    char key[65];       /* the entry's KEY, and why it was bad ("": it was not) */
    char why[1200];
} oq_refcache_hit;
/* Whose an entry is, from its files' owners: yours only when you wrote both; one with a file of
 * another user is that user's, the record's writer first (the record binds outputs to a key). */
unsigned oq_refcache_writer(unsigned record_uid, unsigned outputs_uid);
/* The writer of the entry of KEY as its files are now (their owners, not read); 0: not both there. */
int oq_refcache_entry_writer(const oq_refcache *c, const char key[65], unsigned *uid);
/* "KEY.json: VERB by uid N (USER)" of the entry's writer, and whose outputs it holds when they
 * are another's ("..., over outputs of uid M (OTHER)"). */
void oq_refcache_writer_said(const oq_refcache_hit *e, const char *verb, char *s, size_t n);
void oq_refcache_get(const oq_refcache *c, const char inputs_sha[65], int64_t batch, oq_refcache_hit *hit,
                     char *warning, size_t wn);
/* Whether a record's text (n bytes) is exactly what oq_refcache_put writes for the batch of
 * these inputs and outputs z stored as `sha` (read so, it needs no parse); 0 also for a name
 * that would be escaped. */
int oq_refcache_record_is(const oq_refcache *c, const char inputs_sha[65], const char *text, size_t n,
                          const char *sha, const oq_npz *z);
/* The reference's outputs of the batch of these inputs stored: `npz`, the n bytes of their
 * .npz. Files already there with the same bytes are kept as they are. */
oq_status oq_refcache_put(const oq_refcache *c, const char inputs_sha[65], const unsigned char *npz, size_t n,
                          oq_err *err);

/* ---- the reference's outputs for the other workers (refstream.c) -------------------- */

/* One file a run: the reference's worker appends each batch's outputs (their .npz bytes) with
 * the batch's index and the SHA-256 of the inputs they belong to; each other worker reads them
 * back in the plan's order, waiting for them while the writer's process still holds the
 * file's lock (it may run at the same time). */
typedef struct oq_refstream {
    char *path;       /* NULL: closed */
    FILE *f;          /* the writer's */
    int fd;           /* the reader's; the writer's when it created the file itself */
    uint64_t at;      /* the reader's offset: the next frame */
    int writer_ended; /* the reader saw the lock gone */
} oq_refstream;
/* The file made empty and locked (exclusive) on *fd, which is not closed on exec: the
 * reference's worker inherits it, and the lock is held until every copy is closed. */
oq_status oq_refstream_create(const char *path, int *fd, oq_err *err);
/* A writer uses write_fd, the creator's descriptor (< 0: creates the file itself). */
oq_status oq_refstream_open(oq_refstream *s, const char *path, int write, int write_fd, oq_err *err);
oq_status oq_refstream_put(oq_refstream *s, int64_t index, const char inputs_sha[65], const unsigned char *npz,
                           size_t n, oq_err *err);
/* The batch's outputs by name: the file at `path`, as read (id) and verified by the writer. */
oq_status oq_refstream_put_file(oq_refstream *s, int64_t index, const char inputs_sha[65], const char *path,
                                const oq_file_id *id, oq_err *err);
/* The next batch's outputs, parsed; OQ_ERR_FORMAT when there are none (the writer ended
 * without them), they are another batch's or of other inputs than `inputs_sha` (the
 * SHA-256 of the inputs file this worker read), or the file a frame names is no longer the
 * one the writer read. */
oq_status oq_refstream_next(oq_refstream *s, int64_t index, const char inputs_sha[65], oq_npz **out, oq_err *err);
/* Closed (a writer's error on its last write reported here); a zeroed stream is closed. */
oq_status oq_refstream_close(oq_refstream *s, oq_err *err);

/* ---- dispatch and placement proofs inside a worker (checks.c) ---------------------- */

typedef struct oq_wcheck {
    int dispatch_on, placement_on;
    oq_dispatch_env env;
    oq_dispatch_parser *parser;
    oq_capture *cap;
    char profile_prefix[2048];
    uint32_t sdpa_kernel; /* the session's effective sdpa_kernel (0: ORT's choice), for advice */
    const unsigned char *model; /* the bytes the session was made from (NULL: none), whose */
    size_t model_n;             /* attention nodes the expectations name (not the file's now) */
} oq_wcheck;
oq_status oq_wcheck_begin(oq_wcheck *c, const oq_validate_plan *plan, const char *workdir, oq_err *err);
/* Adds what the checks need to the session options, and notes the sdpa_kernel
 * they carry (the user's, the configuration's or a --prove-teeth rerun's). */
void oq_wcheck_session_opts(oq_wcheck *c, oq_session_opts *so);
/* Adds ORT's profiler and its EP assignment record to the options of the session the placement
 * is read from (the record's session config entry after so's n_session_configs in keys and
 * vals, which have room for it): one of its own, never the timed one (ORT's profiler keeps every event of every
 * call in memory and slows each call). */
void oq_wcheck_placement_opts(oq_wcheck *c, oq_session_opts *so, const char **keys, const char **vals);
/* Makes the session the placement is read from, its calls made (NULL, with `why`, when it
 * cannot be made); the caller of oq_wcheck_finish frees nothing: the checks free it. */
typedef oq_session *(*oq_wcheck_profiled)(void *ctx, char *why, size_t n);
/* Fills r->dispatch and r->placement (from the session `profiled` makes, once the routing lines'
 * capture ended); *verdict 1 pass, 0 fail, -1 unverified (a skip), with the reason in `reason`.
 * Releases what oq_wcheck_begin acquired. */
void oq_wcheck_finish(oq_wcheck *c, const oq_validate_plan *plan, oq_wcheck_profiled profiled, void *ctx,
                      oq_config_result *r, int *verdict, char *reason, size_t rn);
/* Releases what oq_wcheck_begin acquired when the checks cannot finish. */
void oq_wcheck_abort(oq_wcheck *c);

/* ---- before any model runs (prepare.c) ---------------------------------------------- */

/* The export format of a representation (decomposed for anything not attention23/24). */
oq_attn_format oq_repr_attn_format(oq_repr r);
/* Where prepared batches go, one at a time and in order, as each is made: the batch list's
 * line, the plan description's entry (hashed as written), and a few numbers; nothing per batch
 * is held but the brief, and that only when asked (a run's validate.csv rows; not a prepare
 * step's). A plan of 10^6 events in batches of 3 held as oq_batch_info cost ~0.3 KB a batch. */
struct oq_plan_desc;
typedef struct oq_batch_sink {
    FILE *list;                   /* the batch list, a JSON line each (oq_batch_info_put) */
    const char *list_path;        /* its path, for messages */
    struct oq_plan_desc *desc;    /* begun by the caller; its batches part written here */
    int keep_brief;
    oq_batch_brief *brief;        /* n entries when kept */
    size_t n;                     /* batches put */
    size_t planned;               /* the batches to be made (numbering their files) */
    int64_t padded_length;        /* the longest batch's */
    int64_t first_bl[2];          /* batch 0's size and padded length */
    void (*on_put)(void *ctx, size_t n, size_t planned); /* after each put (may be NULL) */
    void *put_ctx;
    const volatile int *interrupt; /* a signal caught (may be NULL): the put stops preparation */
} oq_batch_sink;
oq_status oq_batch_sink_put(oq_batch_sink *k, const oq_batch_info *b, oq_err *err);
/* Generated or saved batches, each checked and written as inputs_NNN.npz (with `expected`,
 * the expected outputs beside them as expected_NNN.npz) and put into the sink in order; on an
 * error the files of batches not put are removed, those put (k->n) left to the caller. */
struct oq_signature;
oq_status oq_validate_prepare_batches(const oq_validate_opts *o, const struct oq_signature *sig, int expected,
                                      oq_batch_sink *k, oq_err *err);
/* The files of the batches put into k, removed (a run that stops before any model ran). */
void oq_validate_unprepare(const oq_validate_opts *o, int expected, const oq_batch_sink *k);
/* Its ONNX file's path into `path`, exported there (`sha`: the SHA-256 of the bytes written) or
 * the user's (`sha` "": the run read it for its signature). */
oq_status oq_validate_model_file(const oq_validate_opts *o, const oq_encoder_weights *w,
                                 const oq_config *c, const int64_t *static_bl, char *path,
                                 size_t n, char sha[65], oq_err *err);

/* ---- the model's inputs and outputs (signature.c) ---------------------------------- */

/* What the model takes and gives, and which input is the mask (and the features). */
typedef struct oq_signature {
    oq_model_info *mi;   /* inputs and outputs as the model declares them */
    int mask;            /* index into mi->inputs of the mask, -1: no mask */
    int features;        /* the input generated events' features feed, -1: none */
    const char *mask_why; /* why detection took the mask (messages name it, and how to decide);
                            NULL: --mask, the contract or ortqual's own model named it */
    oq_mask_role mask_role; /* detection's reason for mask_why (OQ_MASK_ROLE_NONE: not detected) */
    char not_mask[320];  /* "": else why an input named like a mask is none (told by the run) */
    unsigned *uses;      /* each input's OQ_USE_* bits (inspect/inputuse-impl.h); NULL: not known */
    oq_mask_polarity polarity; /* which value of the mask marks a valid element */
    const char *polarity_source; /* where it came from: "option" (mask_polarity given), "contract",
                                    "graph" (the mask's uses tell it: oq_uses_polarity), "default" (keep) */
    int polarity_fixed;  /* ortqual's models or its C encoder judge the run: they read 1 = valid alone */
    int polarity_by_graph; /* the graph reads the mask in `polarity` (taken from it, or a given one it agrees with) */
    oq_model_kind kind;  /* ortqual's exported models take their sizes from the run's options; its sdpa
                            model does not sanitize padded Q, K, V (a NaN there reaches the output) */
    const char *label;   /* the model in messages: its path, or "the exported model" */
    size_t n_seq_axes;   /* the caller's --seq-axis, checked against the outputs (borrowed) */
    const oq_seq_axis *seq_axes;
    oq_index_routes *tables; /* the tables each input indexes (inputuse-impl.h); NULL: not known */
} oq_signature;


/* The signature of the run's model: the user's file as inspected (`*user_mi`, moved into the
 * signature: NULL after; validate takes it from the one read of the file that also gives the
 * plan's SHA-256), or one of ortqual's exports (`user_mi` unused). `contract`: the mask input a
 * converted model's metadata names (it wins over --mask and detection). */
oq_status oq_signature_make(const oq_validate_opts *o, const oq_encoder_weights *w, oq_model_info **user_mi,
                            const char *contract, oq_signature *sig, oq_err *err);
/* As oq_signature_make, with the uses of the user's inputs and the tables they index
 * (`*user_uses`, `*user_tables`, moved into the signature as *user_mi is:
 * oq_model_input_uses_bytes of the bytes the run read; NULL or *NULL: oq_signature_make reads
 * them from o->model_path). */
oq_status oq_signature_make_used(const oq_validate_opts *o, const oq_encoder_weights *w, oq_model_info **user_mi,
                                 unsigned **user_uses,
                                 oq_index_routes **user_tables, const char *contract, oq_signature *sig, oq_err *err);
void oq_signature_clear(oq_signature *sig);
/* Every input of one batch, read by name from `path` (the features and mask inputs also from
 * members "features" and "mask"), each checked against the model's type, rank and fixed
 * dimensions, named dimensions consistent across inputs; the mask checked against the
 * contract (lengths: B entries, malloc'ed; NULL without a mask). */
typedef struct oq_batch_inputs {
    oq_tensor **t;       /* sig->mi->n_inputs tensors, named as the model's inputs */
    size_t n;
    int64_t batch, seq;  /* B and L: the mask's, else the first input's first two axes */
    int64_t *lengths;
    size_t n_dims;       /* the named dimensions bound in this batch: name, size, where seen */
    char **dim_names, **dim_where;
    int64_t *dim_values;
    const unsigned *uses; /* the signature's (borrowed): an additive mask may hold -inf */
    const struct oq_event_ids *ids; /* borrowed, or NULL: names the events in messages */
} oq_batch_inputs;
oq_status oq_signature_read_inputs(const oq_signature *sig, const char *path, oq_batch_inputs *in, oq_err *err);
/* The same from the archive `z` read from `path`: the inputs' members taken out of z (the rest,
 * outputs too, left there), messages naming each event by its id in the run as well as its
 * position. */
oq_status oq_signature_take_batch(const oq_signature *sig, struct oq_npz *z, const char *path,
                                  const struct oq_event_ids *ids, oq_batch_inputs *in, oq_err *err);
void oq_batch_inputs_clear(oq_batch_inputs *in);

/* The run's ids of a saved batch's events (event_ids.c): its `event_indices` member, exactly,
 * when it carries one (a 1-D integer array of ids >= 0; anything else refused), else numbered
 * on from the batches before it: first + position. */
typedef struct oq_event_ids {
    int64_t *v; /* the member's n values, or NULL */
    int64_t n, first;
} oq_event_ids;
oq_status oq_event_ids_read(const struct oq_npz *z, const char *path, int64_t first, oq_event_ids *ids,
                            oq_err *err);
int64_t oq_event_id(const oq_event_ids *ids, int64_t pos);
/* "event ID (index POS in the file)"; "event POS" where that is its id, or ids is NULL or has no
 * such position. */
const char *oq_event_str(const oq_event_ids *ids, int64_t pos, char *buf, size_t n);
void oq_event_ids_clear(oq_event_ids *ids);
/* The member has one id per event of the batch. */
oq_status oq_event_ids_fit(const oq_event_ids *ids, const char *path, int64_t batch, oq_err *err);
/* A `lengths` member the batch carries says what the mask says (L each without a mask). */
oq_status oq_event_lengths_fit(const struct oq_npz *z, const oq_event_ids *ids, const char *path,
                               const oq_batch_inputs *in, oq_err *err);
/* The `event_indices` member of a batch's saved outputs (`saved`, read from saved_path), if it
 * has one, lists the batch's events as the run has them (`ids`: the inputs file's own, or
 * numbered), one per event of `batch`, in order. */
oq_status oq_event_ids_match(const struct oq_npz *saved, const char *saved_path, const oq_event_ids *ids,
                             const char *inputs_path, int64_t batch, oq_err *err);
/* The ids of the run's events so far, each with the file and position it came from: an id
 * seen twice is refused, naming both (`numbered`: the file's ids are numbered, not its own). */
typedef struct oq_event_seen oq_event_seen;
oq_status oq_event_seen_create(oq_event_seen **out, oq_err *err);
void oq_event_seen_free(oq_event_seen *s);
oq_status oq_event_seen_add(oq_event_seen *s, const int64_t *idx, int64_t n, int numbered, const char *const *paths,
                            size_t file, oq_err *err);
/* The list's next file (the n-th call's is paths[n]), read as `z`: refused when its members
 * are an earlier file's, by content (names, dtypes, shapes and values, whatever the archive's
 * order or compression: np.savez and np.savez_compressed of one batch are the same events). */
oq_status oq_event_seen_file(oq_event_seen *s, const struct oq_npz *z, const char *const *paths, oq_err *err);
/* The SHA-256 of a .npz's members in name order, each its name, dtype, rank, shape, byte count
 * and bytes; 0 when out of memory. */
int oq_npz_members_sha256(const struct oq_npz *z, char hex[65]);
/* The same checks for inputs made here (generated events); `what` names the batch. */
oq_status oq_signature_check(const oq_signature *sig, oq_batch_inputs *in, const char *what, oq_err *err);
/* The model's outputs an inputs file holds (`held`, an io.npz) beside the --expected file paired
 * with it (`saved`): two saved references of which only `saved` is judged, so each output in both
 * must hold the same values (NaN equal to NaN), or the run is refused naming the first element
 * that differs: a silent choice between them could drop a failing one. */
oq_status oq_signature_same_saved(const oq_signature *sig, const struct oq_npz *held, const char *held_path,
                                  const struct oq_npz *saved, const char *saved_path, oq_err *err);
/* Every model output from the member of its name in `z` (taken out of it; read from `path`,
 * which messages name), checked against the declared dims with the batch's named dimensions;
 * written to `out` (the expected outputs) unless it is NULL (a check alone). */
oq_status oq_signature_expected(const oq_signature *sig, oq_batch_inputs *in, struct oq_npz *z, const char *path,
                                const char *out, oq_err *err);

/* A user's batch file (input_files, expected_files) read once: one descriptor (a regular file
 * only, as oq_read_file), its bytes hashed and parsed from that one read and freed, so that the
 * SHA-256 a batch records, its event ids, inputs and outputs are of the same bytes however the
 * file changes meanwhile (userfile.c). */
typedef struct oq_user_file {
    struct oq_npz *z;
    char sha256[65];
    char *comment; /* the archive's comment (saved outputs' provenance), NULL: none */
} oq_user_file;
/* Where batch k's `expected` outputs are written: outdir/expected_NNN.npz. */
void oq_validate_expected_path(const oq_validate_opts *o, size_t k, char *path, size_t n);
oq_status oq_user_file_read(const char *path, oq_user_file *f, oq_err *err);
void oq_user_file_clear(oq_user_file *f);
/* Before any model runs: each output's mask axes told for this batch from its declared shape,
 * its named sizes bound by the batch (an output declared with a size unknown until it runs
 * from the outputs in `expected`, the batch's checked .npz, when not NULL; else its worker tells
 * them), so that an output whose axes cannot be told is refused as an input error, never judged
 * on the wrong elements. */
oq_status oq_signature_mask_axes(const oq_signature *sig, const oq_batch_inputs *in, const char *expected,
                                 oq_err *err);

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
/* The summary.json at `path` is of a run stopped by a signal (read without its batch records). */
int oq_summary_interrupted(const char *path);
/* One configuration's ONNX Runtime as a summary records it. */
typedef struct oq_ort_record {
    char *config, *version, *library; /* version, library NULL: it loaded none */
    char sha256[65];                  /* "" when the summary has none */
} oq_ort_record;
/* The ONNX Runtime of each configuration, in the summary's order, of the finished run whose
 * summary.json is `path` (json.c, the batch records skipped); none (*n 0, OQ_OK) when the file
 * is missing, unreadable or of an interrupted run. */
oq_status oq_summary_ort_records(const char *path, oq_ort_record **out, size_t *n, oq_err *err);
void oq_ort_records_free(oq_ort_record *r, size_t n);
/* The prepare step: refuses an earlier plan.json (without overwrite); *replaced 1 when there is
 * one that this step replaces (overwrite), once every check passed (oq_shard_drop_results). */
oq_status oq_shard_setup(const oq_validate_opts *o, int *replaced, oq_err *err);
/* An earlier plan's results removed, just before the new plan is written: the outputs of their
 * merge (oq_validate_merge_drop) and every shard's folder; plan.json stays, to be replaced. */
void oq_shard_drop_results(const char *outdir);
/* root/NAME: a prepared file the plan (and a shard's or merged summary) names relative to DIR,
 * as the DIR `root` was given (a shard's workers open it so). */
void oq_shard_file(const char *root, const char *name, char *buf, size_t n);
/* The prepare step: N shards need N batches (by batch) or N configurations besides the
 * reference (by configuration); refused from the options, before any batch is made. */
oq_status oq_shard_split_check(const oq_validate_opts *o, oq_err *err);
/* A shard run's first check, before it looks at its folder: the prepared plan of `root` read
 * into plan, and refused when it was prepared for another count or split (OQ_OK, nothing read,
 * for a run that is no shard's). */
oq_status oq_shard_plan_open(const oq_validate_opts *o, const char *root, oq_shard_plan *plan, oq_err *err);
/* A shard's batches: each of its batches of `plan` (the files in `root`, DIR, whatever directory
 * the plan names them by, each checked against its SHA-256) copied into s; the plan's batch list
 * is read a line at a time. */
oq_status oq_shard_load(const oq_validate_opts *o, const char *root, const oq_shard_plan *plan, oq_validate_summary *s,
                        oq_err *err);
/* The plan's identity: its description written to the file `desc_path` (never held whole) and
 * its SHA-256 into s->plan_hash: every configuration's worker plan with its model and weights
 * files by SHA-256 (the ORT library by none: a shard holds its build to the others' by
 * content, oq_shard_runtimes_start), the batches by theirs (the prepared plan's list when `plan` is given, else
 * already in `d`, begun on desc_path and fed as the batches were made), and the orchestrator's
 * rules (--require, --prove-teeth, --save-outputs). `d` is ended (its file closed) in any case. */
struct oq_plan_desc;
oq_status oq_plan_identify(const oq_validate_opts *o, const oq_validate_plan *plans, const oq_shard_plan *plan,
                           struct oq_plan_desc *d, oq_validate_summary *s, const char *desc_path, oq_err *err);
/* A shard's identity (its description in the file `desc_path`) against the prepared one:
 * OQ_ERR_INVALID_ARG naming what differs (an EP library also by this shard's path to it). */
oq_status oq_shard_check_identity(const oq_validate_opts *o, const oq_shard_plan *plan, const oq_validate_summary *s,
                                  const char *desc_path, const char *root, oq_err *err);
/* Every plan's EP libraries named by content (ep_lib_content), each file hashed once. */
oq_status oq_plans_ep_content(const oq_validate_opts *o, oq_validate_plan *plans, oq_err *err);
/* An ORT library a shard's configurations load ([0]: --reference-ort-lib's, [1]: the others'),
 * named by content at the shard's start, before any batch runs. */
typedef struct oq_shard_ort {
    char file[OQ_PATH_BUF]; /* its real file, as the probe loaded it ("": not known before a worker loads it) */
    char sha256[65];        /* that file's ("" until hashed) */
} oq_shard_ort;
/* The prepare step's record: outdir/shards/plan.json, the batch list (the file `list`, the
 * sink's, closed; its files named relative to outdir there) and the description (`desc_path`)
 * moved beside it. plan.json lists each configuration's outputs, its ONNX file's (`models`,
 * per configuration; NULL: none), which the merge holds every shard to; and for a comparison of
 * two ORT builds (--reference-ort-lib: replay's) the two libraries the probes found (`ort`), by
 * SHA-256, which every shard is held to (oq_shard_runtimes_start). */
oq_status oq_shard_plan_prepare(const oq_validate_opts *o, const oq_batch_sink *k, const char *list,
                                const char *desc_path, const char *plan_hash, char *const *models,
                                const oq_shard_ort ort[2], oq_err *err);
/* A shard's start: each known file of ort[2] hashed, and held to the builds plan.json records
 * (a comparison of two builds) and to what every other shard of the plan in `root` that
 * finished (its summary.json, not an interrupted one) recorded for the configurations this shard
 * runs: another build is OQ_ERR_INVALID_ARG, one line naming the configuration, both shards (or
 * the plan), libraries and SHA-256 (the merge would refuse two shards anyway, after this shard
 * had spent its time; shards that all ran another pairing than prepared merged). */
oq_status oq_shard_runtimes_start(const oq_validate_opts *o, const oq_shard_plan *plan, const char *root,
                                  oq_shard_ort ort[2], oq_err *err);
/* The ORT library each configuration of a run loaded, named by content
 * (oq_config_result.ort_library_sha256): a path says nothing of a node's module, a switched link
 * or a library rebuilt in place. Each takes the hash its worker's evidence recorded of the file
 * it had mapped (none where that file was replaced after it was loaded); else the one hashed at a
 * shard's start (ort) or for an earlier configuration, else it is hashed now. `must` (a shard,
 * for the merge): a library not named so is an error; else its hash is left "". */
oq_status oq_shard_runtimes(oq_validate_summary *s, const oq_shard_ort ort[2], int must, oq_err *err);
/* s->shard filled for this shard and written to its started.json. */
oq_status oq_shard_begin(const oq_validate_opts *o, const oq_shard_plan *plan, oq_validate_summary *s, oq_err *err);

/* JSON of the sharded files (json.c). The description's text is canonical (compact, keys
 * sorted), so its SHA-256 names it; it is written as it is hashed, a batch at a time:
 * oq_plan_desc_begin, oq_plan_desc_batch for each batch in order, oq_plan_desc_end. */
typedef struct oq_plan_desc {
    FILE *f;
    oq_sha256 h;
    size_t n;  /* batches written */
    int ok;    /* 0 once a write failed */
} oq_plan_desc;
oq_status oq_plan_desc_begin(oq_plan_desc *d, const char *path, oq_err *err);
void oq_plan_desc_batch(oq_plan_desc *d, const oq_batch_info *b);
oq_status oq_plan_desc_end(oq_plan_desc *d, const oq_validate_opts *o, const oq_validate_plan *plans,
                           const char *path, char hash[65], oq_err *err);
/* The parts in which two descriptions (files) differ ("repeat, model"): an object's by its keys
 * ("runtime.ep_libs"), with both values where they are texts ("model 'c9feaa4a37b4...' vs
 * '0f8d31126ab0...'"). */
void oq_plan_difference(const char *a_path, const char *b_path, char *buf, size_t n);
/* plan.json's header; the files it names (p->description_path, p->batches_path) written first.
 * `outputs` (borrowed): per configuration, its model's output names (an array) or null; `ort`
 * (borrowed, NULL: none): {"reference": SHA-256, "under_test": SHA-256}, the two builds compared. */
oq_status oq_shard_plan_write(const oq_shard_plan *p, const json_t *outputs, const json_t *ort, const char *path,
                               oq_err *err);
/* plan.json's per-configuration outputs (oq_shard_plan_write's), *outputs a new reference; NULL
 * where the plan records none (prepared by an ortqual before 2026-12-07). A list that is not
 * one null or array of names per configuration is OQ_ERR_FORMAT. */
oq_status oq_shard_plan_outputs(const char *outdir, size_t n_configs, json_t **outputs, oq_err *err);
/* plan.json's ORT builds of a comparison of two (oq_shard_plan_write's `ort`): sha256[0] the
 * reference's, [1] the one under test; "" where the plan records none (not a comparison of
 * builds, or prepared before the thirty-third session). Not two SHA-256 texts: OQ_ERR_FORMAT. */
oq_status oq_shard_plan_ort(const char *outdir, char sha256[2][65], oq_err *err);
/* A batch list on file: each batch a JSON line, as summary.json lists it. */
int oq_batch_info_put(FILE *f, const oq_batch_info *b);
/* Each batch of a plan's list in [lo, hi) to fn (borrowed), the whole file read a line at a
 * time and checked against the plan (its count, order and SHA-256). */
typedef oq_status (*oq_batch_info_fn)(void *ctx, const oq_batch_info *b, oq_err *err);
oq_status oq_shard_plan_batches_each(const oq_shard_plan *p, size_t lo, size_t hi, oq_batch_info_fn fn, void *ctx,
                                     oq_err *err);
/* Each batch of a batch list file (oq_batch_info_put's lines) to fn (borrowed), in order. */
oq_status oq_batch_list_each(const char *path, oq_batch_info_fn fn, void *ctx, oq_err *err);
oq_status oq_shard_info_write(const oq_shard_info *i, const char *path, oq_err *err);
oq_status oq_shard_info_read(const char *path, oq_shard_info *i, oq_err *err);

/* "2026-12-02T18:03:56Z" (now, UTC) */
void oq_iso_time(char *buf, size_t n);
/* s->verdict, verdict_reason, n_tested and exit_status from the configurations' results
 * (docs/verdicts.md); allow_skip: a run that compared nothing under test exits 0; `terms` words
 * the advice of a run with nothing under test. */
void oq_validate_judge(oq_validate_summary *s, int allow_skip);
/* --force into an earlier run's folder (its summary.json was there: oq_validate_forget_result),
 * not a shard: that run's saved outputs, its inputs and expected outputs from batch n_batches on,
 * its exported models and its figures removed (stale.c); this run writes the rest over. The
 * files `keep` names (n_keep; NULL entries skipped) stay: the prepare step clears after it
 * exported its own models, of the same names. */
void oq_validate_clear_stale(const oq_validate_opts *o, size_t n_batches, char *const *keep, size_t n_keep);
/* A run past its checks, about to write its first file (a shard: past its plan check, before
 * started.json), replaces the folder's earlier outcome: its summary.json (first), report.html,
 * validate.csv and an earlier refusal's error.json go, so that the folder never holds the outcome
 * of another run than its latest (docs/scale-out.md). Returns 1 when the folder held a run's
 * (its summary.json). */
int oq_validate_forget_result(const char *outdir);
/* --force into an earlier run's folder: the files of that run it will remove can be removed
 * (OQ_ERR_OUTPUT "DIR/plots: the earlier run's figures cannot be removed: ..." where plots/ is
 * read-only), checked before anything is, so that a refused run leaves that run as it was. */
oq_status oq_validate_check_clearable(const char *outdir, oq_err *err);
/* A run killed (SIGKILL, a crash) in outdir left its work folder, and no summary.json: the work
 * folder is removed and 1 returned (the folder's files are then that run's, cleared as an
 * earlier result's are); 0 when there is none. */
int oq_validate_drop_left_work(const char *outdir);
/* `tail` appended to err's message whole (the reason cut short where both do not fit). */
void oq_validate_err_tail(oq_err *err, const char *tail);
/* The digits of a run's per-batch file numbers (inputs_NNN.npz, expected_NNN.npz,
 * outputs_<tag>_NNN.npz): 3, or as many as its last batch's index needs, so that names sort as
 * their batches do (a glob 'DIR/inputs_*.npz' gives batch 1000 after batch 999, not after 100). */
int oq_batch_digits(size_t n_batches);
/* The writer's temporaries (NAME.tmp.<pid>.XXXXXX, any pid) left in the output folder by a worker stopped while
 * it wrote a file (a saved output: SIGINT, SIGTERM, a --timeout's SIGKILL), removed: the run
 * owns the folder (a shard its own), so every such file is this run's, half written. */
void oq_validate_drop_temps(const char *outdir);
/* outdir/validate.csv and the figures in outdir/plots removed: a run whose summary.json could
 * not be written leaves no tables that stand for it. */
void oq_validate_drop_tables(const char *outdir);
/* rm -rf of a directory the library made (work directories, an earlier plan's shards). */
void oq_remove_tree(const char *dir);

/* ---- after (report.c, evidence.c) ------------------------------------------------- */

/* validate.csv and (with_plots) the plots into outdir/plots, from one pass over each
 * configuration's batch records (sp->records[k] when set, as oq_summary_write's, else s's):
 * the rows, and a sample of the records the plots draw (OQ_FIGURE_BATCHES) from the summary's
 * error histograms, as `ortqual plot summary.json` does (recorded in s, or why not); with
 * `totals`, each spilled configuration's r->totals counted in the same pass; with `vd`
 * (report-impl.h, its configurations s's), each record counted for report.html too. */
struct oq_vd;
/* with_plots: none, drawn in this process (validate --no-isolate), or in a child of it
 * (oq_plot_options.isolate: an abort there is the plots' failure, not the run's end) */
enum { OQ_PLOTS_NONE, OQ_PLOTS_HERE, OQ_PLOTS_ISOLATED };
oq_status oq_validate_write_tables(const char *outdir, oq_validate_summary *s, const oq_spilled *sp, int with_plots,
                                   int totals, struct oq_vd *vd, oq_err *err);
/* Versions, devices, environment, host, command line: JSON text (NULL on OOM). */
char *oq_validate_evidence(const oq_validate_opts *o);

#endif
