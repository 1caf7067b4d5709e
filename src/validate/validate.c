/* The orchestrator: prepare everything, run each configuration, gather the summary. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compare/compare-impl.h"
#include "fileio/fileio-impl.h"
#include "convert/convert-impl.h"
#include "ortqual/convert.h"
#include "ortqual/fileio.h"
#include "ortqual/proc.h"
#include "inspect/inputuse-impl.h"
#include "inspect/modelfile-impl.h"
#include "npz/npz-impl.h"
#include "reference/reference-impl.h"
#include "report/report-impl.h"
#include "runtime/runtime-impl.h"
#include "validate/validate-impl.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

void oq_validate_opts_default(oq_validate_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->kind = OQ_MODEL_ENCODER;
    oq_encoder_config_default(&o->encoder);
    oq_sdpa_config_default(&o->sdpa);
    o->weights_seed = 1;
    o->events = oq_events_opts_default();
    o->events.num_features = 0; /* none asked: the model's width */
    o->repeat = 5;
    o->warmup = 1;
    o->isolate = 1;
    o->timeout_s = 300;
    o->plots = 1;
    o->padding = -1;
}

size_t oq_validate_demo_configs(int has_cuda, oq_config *out, size_t cap)
{
    static const char *const cpu[] = {"ref:encoder:fp64", "cpu:decomposed:fp32", "cpu:attention23:fp32",
                                      "cpu:attention24:fp32", "cpu:attention24:fp16"};
    static const char *const cuda[] = {"cuda:decomposed:fp32", "cuda:attention24:fp32", "cuda:attention24:tf32",
                                       "cuda:attention24:fp16:flash", "cuda:attention24:fp16:efficient",
                                       "cuda:attention24:fp16:math"};
    size_t n = 0;
    if (!out) return 0; /* no room: cap counts nothing */
    for (size_t i = 0; i < sizeof cpu / sizeof *cpu && n < cap; i++) oq_config_parse(cpu[i], &out[n++], NULL);
    for (size_t i = 0; has_cuda && i < sizeof cuda / sizeof *cuda && n < cap; i++)
        oq_config_parse(cuda[i], &out[n++], NULL);
    return n;
}

typedef struct run_ctx {
    const oq_validate_opts *o;  /* a shard's writes into root/shards/I */
    const char *root;           /* the output directory asked for */
    char workdir[PATH_MAX];
    oq_validate_summary *s;
    oq_shard_plan shard_plan;   /* a shard run: the prepared plan */
    size_t n_all;               /* every batch of the plan (a shard runs some of them) */
    int64_t padded_length;      /* the plan's longest batch's */
    int64_t first_bl[2];        /* the plan's first batch's size and padded length */
    oq_encoder_weights *weights;
    char weights_path[4096];
    char weights_sha256[65];    /* of the bytes written at weights_path */
    oq_signature sig;           /* the model's inputs and outputs, which input is the mask */
    char *unchecked;            /* the user's model's indices nothing checks before the run, a
                                   note a line (constidx-impl.h), said once its inputs are accepted */
    oq_run_notes notes;         /* the caller's notes and those of unchecked, kept in summary.json */
    char user_sha256[65];       /* the user's model's identity, "" when a data file was unread ... */
    oq_err user_unhashed;       /* ... and why */
    char **models;              /* per configuration: its ONNX file (NULL: the C reference) ... */
    char (*exported_sha256)[65]; /* ... and, exported, the SHA-256 of the bytes written */
    oq_validate_plan *plans;    /* per configuration: what its worker runs */
    int overlap;                /* the reference runs beside configuration 1 (reference_overlaps) */
    int replaces_run;           /* not a shard: the folder held an earlier run's result (--force) */
    int left_by_killed;         /* not a shard: ... or the work folder of a run killed there */
    int replaces_plan;          /* the prepare step: ... or an earlier plan's batches and merge (--force) */
    int fork_refused;           /* a worker could no longer be forked, and no tool runs instead */
    oq_spilled sp;              /* on file once the workers start: the batch list, the plan's
                                   description, each configuration's batch records (read one
                                   record at a time, never held) */
    oq_batch_sink sink;         /* not a shard: the batches as prepared, on file from the start */
    oq_plan_desc desc;          /* its description, begun before the batches are made */
    oq_shard_ort ort[2];        /* the ORT libraries the workers will load, as the probes found them */
} run_ctx;

static void progress(const oq_validate_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const oq_validate_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    va_list ap;
    va_start(ap, fmt);
    char *line = oq_terms_vformat(fmt, ap); /* in the caller's words (oq_set_terms), a path or a name as it is */
    va_end(ap);
    if (line) o->progress(o->progress_ctx, line);
    free(line);
}

/* Where the files a run makes before its last check go: a shard's wait in the work folder until
 * its plan is found to be the prepared one (unstage), so that a shard run refused leaves the
 * shard's earlier result as it was; an unsharded run's go to its folder at once. */
static const oq_validate_opts *staged(const run_ctx *c, oq_validate_opts *copy)
{
    if (!oq_shard_is_run(c->o)) return c->o;
    *copy = *c->o;
    copy->outdir = c->workdir;
    return copy;
}

static oq_status make_weights(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    if (o->kind != OQ_MODEL_ENCODER && !o->weights_path) return OQ_OK;
    return o->weights_path ? oq_encoder_weights_load(o->weights_path, o->encoder.heads, &c->weights, err)
                           : oq_encoder_weights_random(&o->encoder, o->weights_seed, &c->weights, err);
}

/* On file once every check before the batches passed: the run's first write. Hashed as
 * written: the plans name the weights by those bytes, never read back. */
static oq_status save_weights(run_ctx *c, oq_err *err)
{
    oq_validate_opts copy;
    if (!c->weights) return OQ_OK;
    const char *dir = staged(c, &copy)->outdir;
    int n = snprintf(c->weights_path, sizeof c->weights_path, "%s/weights.npz", dir);
    if (n < 0 || (size_t)n >= sizeof c->weights_path)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s/weights.npz: path too long", dir);
    return oq_npz_write_sha256(c->weights_path, c->weights->n, (const oq_tensor *const *)c->weights->t, 0, 1,
                               c->weights_sha256, err);
}

/* ---- the plan of one configuration ------------------------------------------------------ */

static int copy_str(char **dst, const char *src)
{
    return !src || (*dst = strdup(src)) != NULL;
}

static int copy_strv(char ***dst, size_t *n, const char *const *src, size_t n_src)
{
    for (size_t i = 0; i < n_src; i++)
        if (oq_strv_push(dst, n, src[i])) return 0;
    return 1;
}

const char *oq_validate_plan_ort_lib(const oq_validate_opts *o, int is_ref)
{
    /* reference_ort_lib "" means the default search (ORTQUAL_ORT_LIB, then the bundled copy) */
    return is_ref && o->reference_ort_lib ? (*o->reference_ort_lib ? o->reference_ort_lib : NULL) : o->ort_lib;
}

/* The ORT library, EP libraries and provider options; the reference may use another ORT. */
static int plan_runtime(const oq_validate_opts *o, int is_ref, oq_validate_plan *p)
{
    const char *lib = oq_validate_plan_ort_lib(o, is_ref);
    size_t k = 0, m = 0, v = 0; /* paths and values grow beside names and keys */
    return copy_str(&p->ort_lib, lib) && copy_strv(&p->ep_lib_paths, &k, o->ep_lib_paths, o->n_ep_libs) &&
           copy_strv(&p->ep_lib_names, &p->n_ep_libs, o->ep_lib_names, o->n_ep_libs) &&
           copy_strv(&p->ep_option_values, &m, o->ep_option_values, o->n_ep_options) &&
           copy_strv(&p->ep_option_keys, &p->n_ep_options, o->ep_option_keys, o->n_ep_options) &&
           copy_strv(&p->session_config_values, &v, o->session_config_values, o->n_session_configs) &&
           copy_strv(&p->session_config_keys, &p->n_session_configs, o->session_config_keys, o->n_session_configs);
}

/* The batches this run holds (a shard: its own). */
static size_t run_n_batches(const run_ctx *c) { return oq_shard_is_run(c->o) ? c->s->n_batches : c->sink.n; }

/* Each batch this run holds, in order: a shard's own from the summary, else the batch list
 * the prepare step wrote (read a line at a time: the run holds no batch list). */
static oq_status run_batches_each(const run_ctx *c, oq_batch_info_fn fn, void *ctx, oq_err *err)
{
    if (!oq_shard_is_run(c->o)) return oq_batch_list_each(c->sp.batch_list, fn, ctx, err);
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < c->s->n_batches; i++) st = fn(ctx, &c->s->batches[i], err);
    return st;
}

typedef struct plan_lines {
    const run_ctx *c;
    const char *tag;
    FILE *f;
    const char *path;
} plan_lines;

static oq_status plan_line(void *ctx, const oq_batch_info *bi, oq_err *err)
{
    plan_lines *pl = ctx;
    char save[4096];
    snprintf(save, sizeof save, "%s/outputs_%s_%0*lld.npz", pl->c->o->outdir, pl->tag,
             oq_batch_digits(run_n_batches(pl->c)), (long long)bi->index);
    /* a shard's batches are named relative to DIR (oq_shard_load) */
    char in[OQ_PATH_BUF], ex[OQ_PATH_BUF];
    int shard = oq_shard_is_run(pl->c->o);
    if (shard) oq_shard_file(pl->c->root, bi->inputs, in, sizeof in);
    if (shard && bi->expected) oq_shard_file(pl->c->root, bi->expected, ex, sizeof ex);
    oq_plan_batch b = {bi->index, shard ? in : bi->inputs, shard && bi->expected ? ex : bi->expected,
                       pl->c->o->save_outputs ? save : NULL, bi->source, *bi->sha256 ? (char *)bi->sha256 : NULL,
                       bi->batch_size};
    return oq_plan_batch_put(pl->f, &b) ? OQ_OK : oq_err_write(err, pl->path, errno);
}

/* The batches this run holds (a shard: its own), named by their index in the plan, written to
 * the plan's batches file a line each; the longest padded length is the plan's, as dispatch
 * advice of an unsharded run sees it. */
static oq_status plan_batches(const run_ctx *c, const char *tag, oq_validate_plan *p, oq_err *err)
{
    char path[OQ_PATH_BUF];
    snprintf(path, sizeof path, "%s/plan_%s.batches.jsonl", c->workdir, tag);
    plan_lines pl = {c, tag, NULL, NULL};
    oq_status st = copy_str(&p->batches_file, path) ? oq_fopen_scratch(path, &pl.f, err)
                                                    : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    pl.path = p->batches_file;
    if (!st) st = run_batches_each(c, plan_line, &pl, err);
    /* the reference's outputs reach the others in one file, unless they are the user's */
    snprintf(path, sizeof path, "%s/reference_outputs.bin", c->workdir);
    if (!st && !oq_config_is_expected(&c->o->configs[0]) && !copy_str(&p->ref_stream, path))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (pl.f && fclose(pl.f) != 0 && !st) st = oq_err_write(err, p->batches_file, errno);
    p->n_batches = run_n_batches(c);
    p->padded_length = c->padded_length;
    return st;
}

/* The padding rule: ortqual's exports zero their padding by construction; a user's model is
 * judged there only where the reference is zero (docs/verdicts.md). */
static int padding_rule(const oq_validate_opts *o)
{
    return o->padding >= 0 ? o->padding : o->kind == OQ_MODEL_USER ? OQ_PADDING_AS_REFERENCE : OQ_PADDING_ZERO;
}

/* The C reference's outputs by name, which a cache entry must hold (refcache.c); 0: no memory. */
static int ref_outputs(const run_ctx *c, oq_validate_plan *p)
{
    const char *names[OQ_ENCODER_MAX_OUTPUTS];
    size_t n = oq_ref_model_outputs(&p->config, c->weights, names, OQ_ENCODER_MAX_OUTPUTS);
    return copy_strv(&p->ref_outputs, &p->n_ref_outputs, names, n);
}

static oq_status make_plan(const run_ctx *c, const oq_config *cfg, int is_ref, const char *model, const char *tag,
                           const char *result_path, oq_validate_plan *p, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    memset(p, 0, sizeof *p);
    p->config = *cfg;
    p->is_reference = is_ref;
    /* the reference's outputs are what is needed: one call per batch, unless asked to time it */
    int once = is_ref && !o->repeat_reference;
    p->repeat = once ? 0 : o->repeat;
    p->warmup = once ? 0 : o->warmup;
    p->threads = o->threads;
    p->graph_opt = o->graph_opt;
    p->padding = padding_rule(o);
    oq_status st = OQ_OK;
    const oq_model_info *mi = c->sig.mi;
    for (size_t i = 0; !st && i < mi->n_inputs; i++) st = oq_plan_add_input(p, mi->inputs[i].name, mi->inputs[i].name, err);
    if (oq_config_uses_ort(cfg) && cfg->repr != OQ_REPR_MODEL)
        p->mask_form = oq_mask_form_resolve(oq_repr_attn_format(cfg->repr), o->mask_form);
    /* routing lines exist on GPU execution providers only; requirements judge the configurations
     * under test there, never the reference nor a CPU configuration (their placement is evidence) */
    int judged = oq_config_on_ep(cfg) && !is_ref;
    p->dispatch.enable = oq_config_on_ep(cfg);
    p->dispatch.require = o->require_dispatch && judged;
    p->dispatch.force_sdpa_kernel = -1;
    p->ref_stream_fd = -1;
    p->placement.enable = o->require_full_gpu || o->profile;
    p->placement.require = o->require_full_gpu && judged;
    p->placement.strict = o->strict_placement;
    p->progress = o->on_batch != NULL || o->interrupt != NULL; /* an interruption names the batch */
    p->words = oq_terms_given();
    p->heads = c->weights ? c->weights->cfg.heads : o->kind == OQ_MODEL_SDPA ? o->sdpa.heads : 0;
    p->kv_heads = o->kind == OQ_MODEL_SDPA ? o->sdpa.kv_heads : 0;
    const char *mask = c->sig.mask >= 0 ? mi->inputs[c->sig.mask].name : NULL;
    p->mask_polarity = c->sig.polarity;
    p->mask_polarity_source = c->sig.polarity_source;
    if (!st) st = plan_batches(c, tag, p, err);
    int ok = !st && copy_str(&p->model, model) && copy_str(&p->mask_member, mask) &&
             copy_str(&p->tolerances, o->tolerances) && plan_runtime(o, is_ref, p) &&
             oq_seq_axes_copy(&p->seq_axes, &p->n_seq_axes, o->seq_axes, o->n_seq_axes) &&
             (!judged || copy_strv(&p->dispatch.expect, &p->dispatch.n_expect, o->expect_kernel, o->n_expect_kernel)) &&
             copy_str(&p->weights, c->weights ? c->weights_path : NULL) &&
             copy_str(&p->weights_sha256, c->weights ? c->weights_sha256 : NULL) && copy_str(&p->result, result_path) &&
             (!is_ref || o->repeat_reference || copy_str(&p->cache_dir, o->cache_dir)) && /* timed: it runs */
             (!p->cache_dir || ref_outputs(c, p));
    p->cache_shared = p->cache_dir && o->cache_shared;
    p->cache_trust_self = p->cache_shared && o->cache_shared == OQ_CACHE_TRUST_SELF;
    if (!ok) {
        oq_validate_plan_clear(p);
        return st ? st : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

/* ---- running a worker ----------------------------------------------------------------- */

/* The frame a crashed worker died in: its backtrace (printed by the CLI's crash handler) starts
 * with the handler and the signal trampoline; the next frame outside the C library (memcpy's
 * caller, raise's) is the crash site, shown by the library's base name
 * ("libonnxruntime.so(+0xd26efa)"). The header is cut off the tail. */
static int in_libc(const char *frame)
{
    const char *end = strchr(frame, '\n'), *libc = strstr(frame, "/libc.so");
    return libc && (!end || libc < end);
}

static void crash_site(char *tail, char *site, size_t n)
{
    static const char header[] = "ortqual worker: crashed with signal";
    char *h = strstr(tail, header), *line = h;
    *site = 0;
    if (!h) return;
    for (int k = 0; k < 3 && line; k++) line = strchr(line + 1, '\n');
    while (line && in_libc(line + 1)) line = strchr(line + 1, '\n');
    if (line) {
        char *end = strchr(++line, '\n'), *bracket = strchr(line, '[');
        size_t len = (size_t)((bracket && (!end || bracket < end) ? bracket : end ? end : line + strlen(line)) - line);
        char frame[512];
        snprintf(frame, sizeof frame, "%.*s", (int)(len < sizeof frame ? len : sizeof frame - 1), line);
        const char *base = strrchr(frame, '/');
        snprintf(site, n, " in %s", base ? base + 1 : frame);
    }
    *h = 0;
}

/* " in LIB(+off)" for a crash with a backtrace, then ": <last non-empty line>" of what the worker
 * said before, from a stderr tail (trimmed in place) into buf, or "". */
static const char *last_line(char *tail, char *buf, size_t n)
{
    char site[600];
    crash_site(tail, site, sizeof site);
    size_t len = strlen(tail);
    while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r')) tail[--len] = 0;
    char *start = strrchr(tail, '\n');
    start = start ? start + 1 : tail;
    snprintf(buf, n, "%s%s%s", site, *start ? ": " : "", start);
    return buf;
}

/* A result made here, when the worker could not make one. */
static void failed_result(oq_config_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failed_result(oq_config_result *r, const char *fmt, ...)
{
    char line[OQ_ERR_MSG_MAX + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    oq_config_result_clear(r);
    r->status = OQ_VERDICT_FAILED;
    oq_result_reason(r, "%s", line);
}

/* Batches done by the configuration running now, kept (an interruption names them) and passed
 * on to the caller. */
typedef struct batch_watch {
    const oq_validate_opts *o;
    size_t config;
    size_t done, total;
} batch_watch;

/* Non-zero (an in-process worker stops there) once the run is interrupted with batches left:
 * an isolated worker's process group gets the signal instead. */
static int batch_done(void *ctx, size_t done, size_t total)
{
    batch_watch *bw = ctx;
    bw->done = done;
    bw->total = total;
    oq_validate_progress p = {bw->config, bw->o->n_configs, bw->o->configs[bw->config].name, done, total};
    if (bw->o->on_batch) bw->o->on_batch(bw->o->progress_ctx, &p);
    return bw->o->interrupt && *bw->o->interrupt && done < total;
}

/* The worker's process group (0: it ended), for the caller's signal handler. */
static void worker_started(void *ctx, int pgid)
{
    const batch_watch *bw = ctx;
    bw->o->on_worker(bw->o->progress_ctx, pgid);
}

static void batch_line(void *ctx, const char *line)
{
    size_t done, total;
    if (sscanf(line, "%zu %zu", &done, &total) == 2) batch_done(ctx, done, total);
}

/* Batches a stopped worker finished: the records it appended (each flushed as its batch
 * ended), which its progress lines (a few a second, worker.c) may trail. */
static size_t records_done(const char *result_path, size_t reported)
{
    char path[OQ_PATH_BUF];
    oq_batch_records_path(result_path, path, sizeof path);
    FILE *f = fopen(path, "r");
    size_t n = 0;
    for (int ch; f && (ch = getc_unlocked(f)) != EOF;) n += ch == '\n';
    if (f) fclose(f);
    return n > reported ? n : reported;
}

/* A crash inside ONNX Runtime with its extended optimizations on (its default) may be one of
 * them: ORT 1.29's CUDA EP dies on a position embedding Gather(table, Range(0, L)) once its
 * GatherToSliceFusion made it a Slice (docs/real-models.md). */
static const char *optimizer_hint(const oq_validate_opts *o, const oq_proc_result *pr, const char *site, char *buf,
                                  size_t n)
{
    oq_graph_opt g = o->graph_opt;
    int extended = g == OQ_GRAPH_OPT_DEFAULT || g == OQ_GRAPH_OPT_EXTENDED || g == OQ_GRAPH_OPT_ALL;
    return pr->signaled && extended && strstr(site, " in libonnxruntime")
               ? oq_terms(" (if graph_opt OQ_GRAPH_OPT_BASIC runs it, one of ORT's extended graph "
                           "optimizations is at fault; a session config entry "
                           "optimization.disable_specified_optimizers=NAME turns one off alone)", buf, n)
               : "";
}

/* What a child worker's end says into `run`; its result read into `r` unless it crashed. A
 * timeout says how far it got (a worker that hung at its first batch and one that needed a few
 * more seconds for its last ones read alike). */
static void worker_ended(oq_worker_run *run, oq_proc_result *pr, const char *result_path, const batch_watch *bw,
                         oq_config_result *r)
{
    char last[1200];
    run->ran = 1;
    run->signal = pr->signaled ? pr->signal : 0;
    oq_proc_describe(pr, run->ended, sizeof run->ended);
    if (pr->timed_out) /* the limit set (0.5 s, not "0 s"), not the wall time the kill took */
        snprintf(run->ended, sizeof run->ended, "timed out after %g s (killed)", bw->o->timeout_s);
    run->seconds = pr->seconds;
    run->stderr_tail = strdup(pr->stderr_tail);
    int crashed = pr->signaled || pr->timed_out || pr->exit_code != 0;
    char done[256] = "", raise[128];
    if (pr->timed_out) /* which option raises it: the default 300 s ends a large run's configuration */
        snprintf(done, sizeof done, " with %zu of %zu batches done%s", records_done(result_path, bw->done), bw->total,
                 oq_terms(" (timeout_s, each configuration's limit, raises it)", raise, sizeof raise));
    if (crashed) {
        const char *said = last_line(pr->stderr_tail, last, sizeof last); /* before the hint reads it */
        char hint[512];
        failed_result(r, "worker %s%s%s%s", run->ended, done, said, optimizer_hint(bw->o, pr, said, hint, sizeof hint));
    }
    oq_proc_result_clear(pr);
    oq_err e = {0};
    if (!crashed && oq_config_result_read(result_path, r, &e)) failed_result(r, "worker wrote no result");
}

/* Runs the worker of configuration k (child process or in-process) into `r`; `run` records
 * the child, `bw` the batches it reported done. A worker that can no longer be forked and has no
 * tool to run instead (a thread the caller started after oq_validate_run's check) stops the run:
 * every later worker would fail alike. */
static oq_status run_worker(run_ctx *c, size_t k, const char *plan_path, const char *result_path,
                            oq_worker_run *run, batch_watch *bw, oq_config_result *r, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_err e = {0};
    *bw = (batch_watch){o, k, 0, c->sp.n_brief};
    if (!o->isolate) {
        if (oq_validate_worker_hooked(plan_path, o->on_batch || o->interrupt ? batch_done : NULL, bw, &e))
            failed_result(r, "%s", e.msg);
        else if (oq_config_result_read(result_path, r, &e)) failed_result(r, "worker wrote no result");
        return OQ_OK;
    }
    oq_proc_result pr;
    oq_proc_watch w = {OQ_PROGRESS_PREFIX, batch_line, o->on_worker ? worker_started : NULL, o->interrupt, bw};
    oq_status st = oq_worker_spawn(o, plan_path, c->plans[k].ort_lib, &w, &pr, &run->forked, &e);
    if (st && !run->forked && !o->self_exe) {
        c->fork_refused = 1;
        return oq_err_set(err, st, "%s", e.msg);
    }
    if (st) failed_result(r, "%s", e.msg);
    else worker_ended(run, &pr, result_path, bw, r);
    return OQ_OK;
}

/* Reruns a configuration whose dispatch check passed with MATH forced (sdpa_kernel=16): the
 * check must now fail on a node that ran MATH, or it has not been seen to bite. */
static oq_status prove_teeth(run_ctx *c, size_t k, oq_config_result *r, oq_validate_plan *plan,
                             const char *plan_path, batch_watch *bw, oq_err *err)
{
    oq_teeth_result *t = &r->teeth;
    plan->dispatch.force_sdpa_kernel = 16;
    plan->dispatch.require = 1;
    oq_err e = {0};
    t->ran = 1;
    /* its own result and records: the first run's records go into summary.json */
    char *teeth_result = NULL;
    if (asprintf(&teeth_result, "%s.teeth.json", plan->result) < 0) teeth_result = NULL;
    if (teeth_result) free(plan->result), plan->result = teeth_result;
    if (oq_plan_write(plan, plan_path, &e)) t->error = strdup(e.msg);
    progress(c->o, "    %s: proving the dispatch check has teeth (rerun with sdpa_kernel=16, MATH only)",
             r->config.name);
    oq_config_result rerun = {0};
    oq_status st = run_worker(c, k, plan_path, plan->result, &t->worker, bw, &rerun, err);
    if (st) return st;
    t->rerun_status = rerun.status;
    if (rerun.dispatch.recorded) oq_dispatch_result_copy(&t->rerun_dispatch, &rerun.dispatch);
    t->proved = rerun.dispatch.n_math_failures > 0;
    oq_config_result_clear(&rerun);
    if (!t->proved) {
        r->status = OQ_VERDICT_FAILED;
        char said[160];
        const char *why = "prove_teeth: with MATH forced the dispatch check did not fail";
        oq_result_reason(r, "%s", oq_terms(why, said, sizeof said));
    }
    return OQ_OK;
}

/* Whether a `required` entry names the configuration `name`, as written or in canonical form
 * ("cuda:attention24:fp16:auto"). */
static int names_config(const char *required, const char *name)
{
    oq_config c;
    return !strcmp(required, name) || (!oq_config_parse(required, &c, NULL) && !strcmp(c.name, name));
}

static int config_required(const oq_validate_opts *o, const char *name)
{
    for (size_t i = 0; i < o->n_required; i++)
        if (names_config(o->required[i], name)) return 1;
    return 0;
}

/* A `required` entry that names no configuration of this run would never fail it: the tool's
 * `--require cuda:model:fp32` beside --model's default on a host without CUDA (which leaves cuda
 * out), or a typo, passed green without the configuration ever running. */
static oq_status check_required(const oq_validate_opts *o, oq_err *err)
{
    for (size_t i = 0; i < o->n_required; i++) {
        int found = 0;
        for (size_t k = 0; k < o->n_configs && !found; k++) found = names_config(o->required[i], o->configs[k].name);
        if (found) continue;
        char names[512] = "";
        for (size_t k = 0, used = 0; k < o->n_configs && used < sizeof names; k++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", o->configs[k].name);
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "required '%s': not a configuration of this run (%s); a configuration must run to be "
                          "required", o->required[i], names);
    }
    return OQ_OK;
}

/* The earlier configuration of the same representation and precision that exported the ONNX
 * file configuration k runs (the file depends on nothing else), or k. */
static size_t exported_by(const run_ctx *c, size_t k)
{
    const oq_config *cfg = &c->o->configs[k];
    for (size_t i = 0; i < k; i++)
        if (c->models[i] && c->o->configs[i].repr == cfg->repr && c->o->configs[i].precision == cfg->precision)
            return i;
    return k;
}

/* Every configuration's ONNX file, exported once per representation and precision before
 * any model runs: the plan names them by content, and a shard exports what it will run. */
static oq_status export_models(run_ctx *c, oq_err *err)
{
    oq_validate_opts copy;
    const oq_validate_opts *o = staged(c, &copy);
    int64_t static_bl[2] = {0, 0};
    if (o->static_shapes && c->n_all) {
        static_bl[0] = c->first_bl[0];
        static_bl[1] = c->first_bl[1];
    }
    for (size_t k = 0; k < o->n_configs; k++) {
        const oq_config *cfg = &o->configs[k];
        const size_t same = exported_by(c, k);
        char path[OQ_PATH_BUF];
        if (!oq_config_uses_ort(cfg)) continue;
        if (same < k) {
            snprintf(path, sizeof path, "%s", c->models[same]);
            memcpy(c->exported_sha256[k], c->exported_sha256[same], sizeof c->exported_sha256[k]);
        } else if (oq_validate_model_file(o, c->weights, cfg, static_bl, path, sizeof path, c->exported_sha256[k], err))
            return oq_err_prefix(err, "config %s: ", cfg->name);
        if (!(c->models[k] = strdup(path))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

/* "02_cpu_attention24_fp32": the index keeps files apart when a name repeats (replay: cpu
 * against cpu on another ORT). */
static void config_tag(const oq_config *cfg, size_t k, char *tag, size_t n)
{
    char name[OQ_CONFIG_NAME_MAX];
    oq_config_file_tag(cfg->name, name, sizeof name);
    snprintf(tag, n, "%02u_%s", (unsigned)(k % 100), name);
}

/* Plan k's model by its identity, never read again for it: an export's of the bytes written, the
 * user's of the one read that gave its signature. What its worker checks the bytes it reads
 * against, and what the plan's description names. */
static oq_status model_identity(run_ctx *c, size_t k, oq_err *err)
{
    oq_validate_plan *p = &c->plans[k];
    if (!p->model) return OQ_OK;
    const char *sha = c->o->kind == OQ_MODEL_USER ? c->user_sha256 : c->exported_sha256[k];
    if (!*sha) { /* an external-data file could not be read */
        oq_err_set(err, c->user_unhashed.status, "%s", c->user_unhashed.msg);
        return oq_err_prefix(err, "config %s: ", p->config.name);
    }
    return copy_str(&p->model_sha256, sha) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

static oq_status make_plans(run_ctx *c, oq_err *err)
{
    for (size_t k = 0; k < c->o->n_configs; k++) {
        char tag[OQ_CONFIG_NAME_MAX + 32], result_path[OQ_PATH_BUF];
        config_tag(&c->o->configs[k], k, tag, sizeof tag);
        snprintf(result_path, sizeof result_path, "%s/result_%s.json", c->workdir, tag);
        oq_status st = make_plan(c, &c->o->configs[k], k == 0, c->models[k], tag, result_path, &c->plans[k], err);
        if (!st) st = model_identity(c, k, err);
        if (st) return st;
    }
    return oq_plans_ep_content(c->o, c->plans, err);
}

/* The worker's report into `slot`, keeping what only the orchestrator knows: the
 * configuration as given, its place, its model file and its child process. */
static void take_result(oq_config_result *slot, oq_config_result *got)
{
    got->config = slot->config;
    got->is_reference = slot->is_reference;
    free(got->model_file);
    got->model_file = slot->model_file;
    free(got->worker.stderr_tail);
    got->worker = slot->worker;
    *slot = *got;
}

static char **records_of(const run_ctx *c, const oq_config_result *r) { return &c->sp.records[r - c->s->configs]; }

/* The `expected` reference: nothing runs; its outputs were written beside each batch. Its
 * records (an index each) go to a records file like a worker's. */
static oq_status expected_result(const run_ctx *c, oq_config_result *r, oq_err *err)
{
    r->status = OQ_VERDICT_REFERENCE;
    r->reported = 1;
    oq_status st = oq_validate_saved_by(c->o, &r->saved_by, err);
    if (st) return st;
    char path[OQ_PATH_BUF];
    snprintf(path, sizeof path, "%s/result_expected.jsonl", c->workdir);
    FILE *f = NULL;
    st = oq_fopen_scratch(path, &f, err);
    if (st) return st;
    int ok = 1;
    for (size_t i = 0; ok && i < c->sp.n_brief; i++)
        ok = oq_batch_record_put(f, &(oq_batch_result){.index = c->sp.brief[i].index});
    ok = fclose(f) == 0 && ok;
    r->totals = (oq_batch_totals){.n = c->sp.n_brief, .first_call_s = NAN, .median_p50_s = NAN, .median_p90_s = NAN};
    if (!ok) return oq_err_write(err, path, errno);
    return (*records_of(c, r) = strdup(path)) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

/* The worker's records file noted for summary.json; validate.csv's pass over it counts it into
 * r->totals (oq_validate_write_tables). A worker that stopped before it opened the file has no
 * records. */
static oq_status take_records(const run_ctx *c, const char *result_path, oq_config_result *r, oq_err *err)
{
    char path[OQ_PATH_BUF];
    oq_batch_records_path(result_path, path, sizeof path);
    if (!r->reported || access(path, F_OK) != 0) return OQ_OK;
    return (*records_of(c, r) = strdup(path)) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

/* ORT's message (or the crash) explained with the model; the reason names the pattern, the
 * raw message stays in refusal.raw. A crash is a runtime error only when a pattern knows it.
 * A batch's refusal comes explained by its worker, which knew the sizes it fed (explained
 * again from the declared shapes, it could be told otherwise). */
static void explain_refusal(oq_config_result *r)
{
    int crashed = r->worker.signal != 0;
    if (r->status != OQ_VERDICT_ERROR && !(r->status == OQ_VERDICT_FAILED && crashed)) return;
    oq_refusal_facts f = {.message = r->reason, .model = r->model_file,
                          .ep = oq_ep_full_name(r->config.runtime), .signal = r->worker.signal};
    if (!r->refusal.raw && oq_refusal_explain(&f, &r->refusal, NULL)) return;
    if (!r->refusal.id) return;
    r->status = OQ_VERDICT_ERROR;
    oq_result_reason(r, "refused by ONNX Runtime [%s]%s%s", r->refusal.id, r->refusal.node ? " at node " : "",
                     r->refusal.node ? r->refusal.node : "");
}

/* The reference only runs: anything but running is a runtime error, and nothing is compared. */
static void reference_outcome(oq_config_result *r, int *ref_ok)
{
    if (r->status == OQ_VERDICT_REFERENCE) return;
    *ref_ok = 0;
    if (r->status == OQ_VERDICT_ERROR && r->refusal.id) return;
    r->status = OQ_VERDICT_ERROR;
    oq_result_reason(r, "the reference cannot run: %s", r->reason ? r->reason : "no reason given");
}

/* ---- interruption ----------------------------------------------------------------------- */

static int interrupted(const oq_validate_opts *o) { return o->interrupt && *o->interrupt; }

static const char *sig_abbrev(int sig)
{
    const char *a = sigabbrev_np(sig);
    return a ? a : "?";
}

/* The first configuration the interruption stopped (or "" when none was running) is where the
 * summary says the run stopped. */
static void note_interruption(const run_ctx *c, const char *config, size_t done, size_t total)
{
    oq_interruption *in = &c->s->interrupted;
    if (in->signal) return;
    in->signal = (int)*c->o->interrupt;
    snprintf(in->config, sizeof in->config, "%s", config);
    in->batches_done = done;
    in->n_batches = total;
}

/* The configuration running when the signal came: not a result (its worker was stopped). */
static oq_status interrupt_config(const run_ctx *c, oq_config_result *r, const char *result_path,
                                  const batch_watch *bw)
{
    size_t done = records_done(result_path, bw->done);
    note_interruption(c, r->config.name, done, bw->total);
    r->status = OQ_VERDICT_NOT_RUN;
    oq_result_reason(r, "interrupted by SIG%s after %zu of %zu batches", sig_abbrev(c->s->interrupted.signal), done,
                     bw->total);
    progress(c->o, "%s: %s", r->config.name, r->reason);
    return OQ_OK;
}

/* A configuration the run did not reach. */
static void not_reached(const run_ctx *c, size_t k)
{
    oq_config_result *r = &c->s->configs[c->s->n_configs++];
    r->config = c->o->configs[k];
    r->is_reference = k == 0;
    note_interruption(c, "", 0, 0);
    r->status = OQ_VERDICT_NOT_RUN;
    oq_result_reason(r, "the run was interrupted (SIG%s) before it started", sig_abbrev(c->s->interrupted.signal));
}

/* After the verdict of what ran: an interrupted run is not green, whatever ran passed. */
static void judge_interruption(oq_validate_summary *s)
{
    const oq_interruption *in = &s->interrupted;
    if (!in->signal) return;
    s->verdict = OQ_RUN_INTERRUPTED;
    s->exit_status = 128 + in->signal;
    free(s->verdict_reason);
    int rc = *in->config ? asprintf(&s->verdict_reason, "interrupted by SIG%s while %s ran (%zu of %zu batches done)",
                                    sig_abbrev(in->signal), in->config, in->batches_done, in->n_batches)
                         : asprintf(&s->verdict_reason, "interrupted by SIG%s between configurations",
                                    sig_abbrev(in->signal));
    if (rc < 0) s->verdict_reason = NULL;
}

/* A signal after the last configuration ended, up to summary.json, stops the run all the same:
 * its results are whole, but it was not let finish, so it is not green (it was PASSED, exit 0). */
static void judge_late_interruption(run_ctx *c)
{
    oq_validate_summary *s = c->s;
    if (!interrupted(c->o) || s->interrupted.signal) return;
    note_interruption(c, "", 0, 0);
    judge_interruption(s);
    free(s->verdict_reason);
    if (asprintf(&s->verdict_reason, "interrupted by SIG%s after every configuration had ended",
                 sig_abbrev(s->interrupted.signal)) < 0)
        s->verdict_reason = NULL;
}

/* Configuration k's place in the summary, in the order the configurations were given. */
static oq_config_result *config_slot(run_ctx *c, size_t k)
{
    oq_config_result *r = &c->s->configs[c->s->n_configs++];
    r->config = c->o->configs[k];
    r->is_reference = k == 0;
    return r;
}

/* Configuration k's plan on file. The reference's names the stream of its outputs, created and
 * locked here (*stream_fd) for its worker to inherit (refstream.c); the caller closes this
 * process's copy once the worker has its own. */
static oq_status write_plan(run_ctx *c, size_t k, const char *plan_path, int *stream_fd, oq_err *err)
{
    oq_validate_plan *plan = &c->plans[k];
    *stream_fd = -1;
    oq_status st = k == 0 && plan->ref_stream ? oq_refstream_create(plan->ref_stream, stream_fd, err) : OQ_OK;
    plan->ref_stream_fd = *stream_fd;
    if (!st) st = oq_plan_write(plan, plan_path, err);
    if (st && *stream_fd >= 0) close(*stream_fd), *stream_fd = -1;
    return st;
}

static void plan_path_of(const run_ctx *c, size_t k, char *path, size_t n)
{
    char tag[OQ_CONFIG_NAME_MAX + 32];
    config_tag(&c->o->configs[k], k, tag, sizeof tag);
    snprintf(path, n, "%s/plan_%s.json", c->workdir, tag);
}

/* After configuration k's worker: its report into `r` (`got` taken), its records noted, the
 * dispatch check's teeth proved when asked, the reference's outcome into *ref_ok; or, when
 * the interruption stopped it, not a result. */
static oq_status config_done(run_ctx *c, size_t k, oq_config_result *r, oq_config_result *got, const char *plan_path,
                             batch_watch *bw, int stopped, int *ref_ok, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_validate_plan *plan = &c->plans[k];
    if (stopped) {
        oq_config_result_clear(got);
        return interrupt_config(c, r, plan->result, bw);
    }
    take_result(r, got);
    oq_status st = take_records(c, plan->result, r, err);
    if (st) return st;
    explain_refusal(r);
    if (r->status == OQ_VERDICT_SKIPPED && config_required(o, r->config.name)) {
        r->status = OQ_VERDICT_FAILED;
        r->required = 1;
    }
    if (o->prove_teeth && !r->is_reference && r->dispatch.checked && r->dispatch.passed) {
        st = prove_teeth(c, k, r, plan, plan_path, bw, err);
        if (st) return st;
        if (interrupted(o)) return interrupt_config(c, r, plan->result, bw);
    }
    if (k == 0) reference_outcome(r, ref_ok);
    progress(o, "[%zu/%zu] %s: %s%s%s", k + 1, o->n_configs, r->config.name,
             r->status == OQ_VERDICT_REFERENCE ? "ran (reference)" : oq_verdict_name(r->status),
             r->reason ? ": " : "", r->reason ? r->reason : "");
    return OQ_OK;
}

/* The interruption stopped configuration k's worker: one that ended by itself with every batch
 * done has a result like any other (as the overlapped reference has, finish_reference). */
static int worker_stopped(const run_ctx *c, size_t k, const oq_worker_run *run, const batch_watch *bw)
{
    if (!interrupted(c->o)) return 0;
    int whole = !strcmp(run->ended, "exit 0") || !run->ran; /* (in-process: nothing ran apart) */
    return !whole || records_done(c->plans[k].result, bw->done) < bw->total;
}

static oq_status run_config(run_ctx *c, size_t k, int *ref_ok, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_config_result *r = config_slot(c, k);
    if (!*ref_ok) {
        r->status = OQ_VERDICT_NOT_RUN;
        oq_result_reason(r, "the reference did not run");
        return OQ_OK;
    }
    if (oq_config_is_expected(&r->config)) {
        progress(o, "[%zu/%zu] %s: the saved outputs (expected_NNN.npz)", k + 1, o->n_configs, r->config.name);
        return expected_result(c, r, err);
    }
    char plan_path[OQ_PATH_BUF];
    plan_path_of(c, k, plan_path, sizeof plan_path);
    if (c->models[k] && !(r->model_file = strdup(c->models[k]))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    int stream_fd;
    oq_status st = write_plan(c, k, plan_path, &stream_fd, err);
    if (st) return st;
    progress(o, "[%zu/%zu] %s ...", k + 1, o->n_configs, r->config.name);
    oq_config_result got = {0};
    batch_watch bw;
    st = run_worker(c, k, plan_path, c->plans[k].result, &r->worker, &bw, &got, err);
    if (stream_fd >= 0) close(stream_fd);
    if (st) return st;
    return config_done(c, k, r, &got, plan_path, &bw, worker_stopped(c, k, &r->worker, &bw), ref_ok, err);
}

/* ---- the cached reference beside the first configuration under test ------------------- */

/* Configuration 1 leaves a core free: it runs on a device's execution provider, or on fewer
 * CPU threads than this process may use. (ORT's pool threads wait for each other in every
 * parallel section: on 2 cores, a reader beside ORT's default threads cost the configuration
 * 2-4 s of 9 at 20,000 events while the reading took 0.5-1 s.) */
static int leaves_a_core(const oq_validate_opts *o)
{
    return oq_config_on_ep(&o->configs[1]) || (o->threads > 0 && o->threads < oq_ref_threads(0, INT64_MAX));
}

static oq_status cached_batch(void *ctx, const oq_batch_info *b, oq_err *err)
{
    return oq_refcache_has(ctx, b->sha256) ? OQ_OK : oq_err_set(err, OQ_ERR_NOT_FOUND, "batch %lld: not cached", (long long)b->index);
}

/* Whether the reference's worker runs at the same time as configuration 1's: only when it has
 * nothing to compute (every batch has a cache entry, its record this batch's: it reads,
 * verifies and passes on the outputs, and recomputes those found bad) and a core to itself, so that configuration's timings share the machine with that
 * reading alone; not with --no-overlap, in-process or in a shard. Asked before the batch list
 * is spilled. */
static int reference_overlaps(const run_ctx *c)
{
    const oq_validate_opts *o = c->o;
    if (!o->isolate || o->no_overlap || oq_shard_is_run(o) || o->n_configs < 2 || !c->plans[0].ref_stream ||
        !oq_refcache_applies(&c->plans[0]) || !oq_config_uses_ort(&o->configs[1]) || !leaves_a_core(o))
        return 0;
    oq_refcache cache;
    if (oq_refcache_open(&c->plans[0], &cache, NULL)) return 0;
    oq_err e = {0};
    int all = cache.enabled && run_n_batches(c) > 0 && run_batches_each(c, cached_batch, &cache, &e) == OQ_OK;
    oq_refcache_close(&cache);
    return all;
}

/* The reference's worker in the background, and when it started (the wall clock: its result
 * file's time says when it ended, which waiting for it after configuration 1 does not). */
typedef struct bg_reference {
    oq_proc_bg proc;
    struct timespec started;
} bg_reference;

/* The reference's worker started in the background (its stderr on a file beside its plan). */
static oq_status start_reference(run_ctx *c, bg_reference *bg, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_config_result *r = config_slot(c, 0);
    snprintf(r->worker.beside, sizeof r->worker.beside, "%s", o->configs[1].name);
    char plan_path[OQ_PATH_BUF], stderr_path[OQ_PATH_BUF + 8];
    plan_path_of(c, 0, plan_path, sizeof plan_path);
    snprintf(stderr_path, sizeof stderr_path, "%s.stderr", plan_path);
    c->plans[0].progress = 0; /* its lines would only fill its stderr file */
    int stream_fd;
    oq_status st = write_plan(c, 0, plan_path, &stream_fd, err);
    if (st) return st;
    progress(o, "[1/%zu] %s: a cache entry for every batch: read and verified beside [2/%zu] %s", o->n_configs,
             r->config.name, o->n_configs, o->configs[1].name);
    clock_gettime(CLOCK_REALTIME, &bg->started);
    st = oq_worker_spawn_bg(o, plan_path, c->plans[0].ort_lib, stderr_path, &bg->proc, &r->worker.forked, err);
    c->fork_refused = st && !r->worker.forked && !o->self_exe;
    close(stream_fd);
    return st;
}

/* The background reference waited for and judged as run_config judges it. */
static oq_status finish_reference(run_ctx *c, bg_reference *bg, int *ref_ok, oq_err *err)
{
    oq_config_result *r = &c->s->configs[0], got = {0};
    char plan_path[OQ_PATH_BUF];
    plan_path_of(c, 0, plan_path, sizeof plan_path);
    batch_watch bw = {c->o, 0, 0, c->sp.n_brief};
    oq_proc_result pr;
    oq_err e = {0};
    struct stat sb;
    if (oq_proc_wait_bg(&bg->proc, c->o->timeout_s, 4096, c->o->interrupt, &pr, &e)) failed_result(&got, "%s", e.msg);
    else worker_ended(&r->worker, &pr, c->plans[0].result, &bw, &got);
    if (got.status == OQ_VERDICT_REFERENCE && stat(c->plans[0].result, &sb) == 0)
        r->worker.seconds = (double)(sb.st_mtim.tv_sec - bg->started.tv_sec) +
                            (double)(sb.st_mtim.tv_nsec - bg->started.tv_nsec) * 1e-9;
    /* a reference that had finished when the signal came is a result like any other */
    int stopped = interrupted(c->o) && got.status != OQ_VERDICT_REFERENCE;
    return config_done(c, 0, r, &got, plan_path, &bw, stopped, ref_ok, err);
}

/* Configurations 0 (the reference, from the cache) and 1 at the same time; 1 is not judged
 * when the reference did not pass every batch on. */
static oq_status run_overlapped(run_ctx *c, int *ref_ok, oq_err *err)
{
    bg_reference bg;
    oq_status st = start_reference(c, &bg, err);
    if (st) return st;
    st = run_config(c, 1, ref_ok, err);
    oq_status ref = finish_reference(c, &bg, ref_ok, err);
    oq_config_result *r = &c->s->configs[1];
    if (!*ref_ok && r->status != OQ_VERDICT_NOT_RUN) {
        r->status = OQ_VERDICT_NOT_RUN;
        oq_result_reason(r, "the reference did not run (it ran beside this configuration)");
    }
    return st ? st : ref;
}

/* Valid elements a configuration compared, over every batch and output: an infinity both sides
 * hold is equal (inf_matched) but no value compared. */
static int64_t compared_elements(const oq_config_result *r)
{
    int64_t n = 0;
    for (size_t j = 0; j < r->n_outputs; j++) /* summed over batches */
        n += r->outputs[j].all.num_valid - r->outputs[j].all.inf_matched;
    return n;
}

/* An output of r that judged no value over every batch (all its valid elements matched
 * infinities, or none valid: oq_compare_judged_nothing), or NULL. */
static const oq_compare_result *judged_nothing(const oq_config_result *r)
{
    for (size_t j = 0; j < r->n_outputs; j++)
        if (oq_compare_judged_nothing(&r->outputs[j].all)) return &r->outputs[j].all;
    return NULL;
}

/* r compared: a value of its outputs, and one of each output. An output of matched infinities
 * beside finite ones was PASSED with max|err| 0, and one with no valid element (a 0-sized axis)
 * with 0 of 0 judged (docs/verdicts.md). */
static int compared(const oq_config_result *r)
{
    return compared_elements(r) > 0 && !judged_nothing(r);
}

/* A configuration under test that passed with an output of matched infinities alone (compare.h:
 * passed with max|err| 0, no finite value seen: docs/verdicts.md), or NULL. */
static const oq_config_result *infinities_only(const oq_validate_summary *s)
{
    for (size_t i = 1; i < s->n_configs; i++)
        if (s->configs[i].status == OQ_VERDICT_PASSED && judged_nothing(&s->configs[i])) return &s->configs[i];
    return NULL;
}

/* Why configuration r is not tested: all its outputs, or one of them, infinities alone. */
static char *infinities_reason(const oq_config_result *r)
{
    char whose[sizeof r->config.name + 4], why[sizeof whose + 300];
    snprintf(whose, sizeof whose, "%s's", r->config.name);
    int64_t valid = 0;
    for (size_t j = 0; j < r->n_outputs; j++) valid += r->outputs[j].all.num_valid;
    if (compared_elements(r) <= 0)
        return strdup(oq_compare_infinities_only_str(whose, "outputs", valid, "the reference", why, sizeof why));
    const oq_compare_result *none = judged_nothing(r);
    return oq_compare_one_output_infinities_str(whose, none->name, none->num_valid, "the reference");
}

/* A configuration to compare with `ref` (the first): the same model on another runtime, or
 * one of ortqual's exports on ORT CPU. */
static const char *companion(const oq_config *ref)
{
    if (ref->repr == OQ_REPR_EXPECTED) return "cpu:model:fp32";
    if (ref->repr == OQ_REPR_MODEL) return strcmp(ref->runtime, "cpu") ? "cpu:model:fp32" : "cuda:model:fp32";
    return ref->repr == OQ_REPR_ATTENTION24 ? "cpu:decomposed:fp32" : "cpu:attention24:fp32";
}

/* Why nothing under test was compared, in one line. */
static char *untested_reason(const oq_validate_summary *s)
{
    char *text = NULL;
    const oq_config_result *skipped = NULL, *inf = infinities_only(s);
    for (size_t i = 1; i < s->n_configs && !skipped; i++)
        if (s->configs[i].status == OQ_VERDICT_SKIPPED) skipped = &s->configs[i];
    if (!s->n_configs) return strdup("no configuration was given");
    if (inf) return infinities_reason(inf);
    const oq_config *ref = &s->configs[0].config;
    char said[96];
    const char *add = oq_terms("add one after it, e.g. configs ", said, sizeof said);
    int rc = s->n_configs < 2 ? asprintf(&text, "only the reference ran: no configuration under test was compared "
                                                "(the first is the reference; %s%s,%s)", add, ref->name, companion(ref))
             : skipped ? asprintf(&text, "no configuration under test ran (%s skipped: %s)", skipped->config.name,
                                  skipped->reason ? skipped->reason : "no reason given")
                       : asprintf(&text, "no valid element was compared (every batch is empty, or every output has no elements)");
    return rc < 0 ? NULL : text;
}

/* Requirements judge configurations under test on a GPU provider: where this summary lists such
 * configurations (a shard by configuration may hold none) and none ran and compared, they judged
 * nothing, and a green would claim kernels and placement nobody checked (docs/verdicts.md). NULL:
 * they judged one, or none was asked for. */
static char *unjudged_requirements(const oq_validate_summary *s)
{
    const oq_config_result *gpu = NULL;
    for (size_t i = 0; s->n_requirements && i < s->n_configs; i++) {
        const oq_config_result *r = &s->configs[i];
        if (r->is_reference || !oq_config_on_ep(&r->config)) continue;
        if (r->status == OQ_VERDICT_PASSED && compared(r)) return NULL;
        if (!gpu) gpu = r;
    }
    if (!gpu) return NULL;
    char names[512] = "", *text = NULL;
    for (size_t i = 0, n = 0; i < s->n_requirements && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", s->requirements[i]);
    if (asprintf(&text, "%s judged nothing: %s %s%s%s", names, gpu->config.name, oq_verdict_name(gpu->status),
                 gpu->reason ? ": " : "", gpu->reason ? gpu->reason : "") < 0)
        text = NULL;
    return text;
}

/* The run's verdict (docs/verdicts.md): a failure, else a runtime error, else nothing under test
 * compared (or judged by the requirements asked), else passed. */
void oq_validate_judge(oq_validate_summary *s, int allow_skip)
{
    const oq_config_result *failed = NULL, *error = NULL; /* the first of each */
    for (size_t i = 0; i < s->n_configs; i++) {
        const oq_config_result *r = &s->configs[i];
        if (!failed && r->status == OQ_VERDICT_FAILED) failed = r;
        if (!error && r->status == OQ_VERDICT_ERROR) error = r;
        s->n_tested += !r->is_reference && r->status == OQ_VERDICT_PASSED && compared(r);
    }
    const oq_config_result *first = failed ? failed : error;
    char *unjudged = failed || error || !s->n_tested ? NULL : unjudged_requirements(s);
    s->verdict = failed ? OQ_RUN_FAILED : error ? OQ_RUN_ERROR : s->n_tested && !unjudged ? OQ_RUN_PASSED : OQ_RUN_UNTESTED;
    s->exit_status = s->verdict == OQ_RUN_FAILED ? 1 : s->verdict == OQ_RUN_ERROR ? 3
                     : s->verdict == OQ_RUN_UNTESTED && !allow_skip ? 1 : 0;
    if (first && asprintf(&s->verdict_reason, "%s %s: %s", first->config.name,
                          first->status == OQ_VERDICT_FAILED ? "failed" : "could not run",
                          first->reason ? first->reason : "no reason given") < 0)
        s->verdict_reason = NULL;
    if (s->verdict == OQ_RUN_UNTESTED) s->verdict_reason = unjudged ? unjudged : untested_reason(s);
}

void oq_iso_time(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* An EP library no configuration runs on is never loaded (a worker registers the one its own
 * runtime names): given, it would leave a run on the other providers green, the library unseen. */
static oq_status check_ep_libs(const oq_validate_opts *o, oq_err *err)
{
    for (size_t i = 0; i < o->n_ep_libs; i++) {
        size_t k = 0;
        while (k < o->n_configs && strcmp(o->configs[k].runtime, o->ep_lib_names[i])) k++;
        if (k == o->n_configs)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "ep_libs '%s': no configuration runs on %s, so its library would never load (run a "
                              "configuration on it, e.g. %s:model:fp32)",
                              o->ep_lib_names[i], o->ep_lib_names[i], o->ep_lib_names[i]);
    }
    return OQ_OK;
}

/* Provider options go to the configurations on an execution provider other than
 * cpu (ORT's CPU EP takes none), checked against each before anything runs; so are the
 * EP libraries, each to a configuration that runs on it. */
static oq_status check_ep_options(const oq_validate_opts *o, oq_err *err)
{
    oq_status st = check_ep_libs(o, err);
    if (st) return st;
    size_t takers = 0;
    for (size_t k = 0; o->n_ep_options && k < o->n_configs; k++) {
        if (!oq_config_on_ep(&o->configs[k])) continue;
        takers++;
        st = oq_ep_options_validate(o->configs[k].runtime, o->n_ep_options, o->ep_option_keys,
                                              o->ep_option_values, err);
        if (st) return st;
    }
    if (o->n_ep_options && !takers)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "provider option '%s': no configuration runs on an execution provider that takes "
                          "options (ref and cpu take none)",
                          o->ep_option_keys[0]);
    return OQ_OK;
}

/* The requirements asked, by field in the caller's terms, into the summary (its verdict judges
 * what they judged). */
static oq_status list_requirements(const oq_validate_opts *o, oq_validate_summary *s, oq_err *err)
{
    const int asked[] = {o->require_full_gpu, o->strict_placement, o->n_expect_kernel > 0, o->prove_teeth,
                         o->require_dispatch};
    static const char *const names[] = {"require_full_gpu", "strict_placement", "expect_kernel", "prove_teeth",
                                        "require_dispatch"};
    char said[64];
    for (size_t i = 0; i < sizeof asked / sizeof *asked; i++)
        if (asked[i] &&
            oq_strv_push(&s->requirements, &s->n_requirements, oq_terms(names[i], said, sizeof said)))
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return OQ_OK;
}

/* Requirements judge configurations under test on an execution provider other than CPU: asked
 * for where there is none, they would judge nothing (a green that proves nothing). */
static oq_status check_requirements(const oq_validate_opts *o, oq_err *err)
{
    int judged = 0;
    for (size_t k = 1; k < o->n_configs; k++) judged |= oq_config_on_ep(&o->configs[k]);
    const char *asked = o->require_full_gpu ? "require_full_gpu judges" : o->strict_placement ? "strict_placement judges"
                        : o->n_expect_kernel ? "expect_kernel judges" : o->prove_teeth ? "prove_teeth judges"
                        : o->require_dispatch ? "require_dispatch judges" : NULL;
    char said[128]; /* the field, the library's words, worded as a format is */
    if (asked && !judged)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%s configurations under test on a GPU execution provider, and none is among the "
                          "configurations (the reference and cpu record placement as evidence only)",
                          oq_terms(asked, said, sizeof said));
    return OQ_OK;
}

/* `expected` is the reference (configs[0]) of a user's model with saved batches. */
static oq_status check_expected(const oq_validate_opts *o, oq_err *err)
{
    for (size_t k = 1; k < o->n_configs; k++)
        if (oq_config_is_expected(&o->configs[k]))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "'expected' must be the first configuration (the reference)");
    int expected = o->n_configs && oq_config_is_expected(&o->configs[0]);
    if (o->n_expected_files && !expected)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "expected_files need the 'expected' configuration first");
    if (expected && (o->kind != OQ_MODEL_USER || !o->n_input_files))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "the 'expected' configuration compares against saved outputs: it needs model_path and the "
                          "input_files they belong to");
    return OQ_OK;
}

/* ortqual's C encoder reads its mask with 1 = valid: it cannot judge a model that reads it the
 * other way, whether the caller said so (before anything is read) or the model's contract did
 * (`why`: where the polarity came from). */
static oq_status encoder_polarity(const oq_validate_opts *o, oq_mask_polarity pol, const char *why, oq_err *err)
{
    for (size_t k = 0; pol != OQ_MASK_POLARITY_KEEP && k < o->n_configs; k++)
        if (o->configs[k].repr == OQ_REPR_ENCODER)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': ortqual's C encoder reads its mask with 1 = "
                              "valid (mask_polarity keep): it cannot judge a model_path that reads 1 = padding%s",
                              o->configs[k].name, why);
    return OQ_OK;
}

/* A model_path file runs as it is, whatever representation a configuration names: one naming
 * decomposed/attention23/attention24 would be labelled (and reported) as a form that never ran;
 * 'model' without model_path would be ortqual's decomposed export under another name. */
static oq_status check_representations(const oq_validate_opts *o, oq_err *err)
{
    int user = o->kind == OQ_MODEL_USER;
    for (size_t k = 0; k < o->n_configs; k++) {
        const oq_config *c = &o->configs[k];
        if (user && c->repr == OQ_REPR_ENCODER && !o->weights_path) /* else the reference fails after the run began */
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "config '%s' with model_path needs weights_path (the weights %s was exported with)",
                              c->name, o->model_path);
        if (!oq_config_uses_ort(c) || (c->repr == OQ_REPR_MODEL) == user) continue;
        if (user)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "config '%s': model_path runs %s as it is, never ortqual's %s export: use %s:model:%s",
                              c->name, o->model_path, oq_repr_name(c->repr), c->runtime,
                              oq_precision_name(c->precision));
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': representation 'model' is the file given with model_path (without it: "
                          "decomposed, attention23 or attention24)", c->name);
    }
    return OQ_OK;
}

/* A mask read with 1 = padding (not the default), and where that came from, in words the
 * caller's terms reword (the format's, not an argument's). */
static void say_pad_polarity(const run_ctx *c)
{
    const char *name = c->sig.mi->inputs[c->sig.mask].name, *from = c->sig.polarity_source;
    if (!strcmp(from, "graph"))
        progress(c->o, "mask: input '%s' read with 1 = padding, as the graph reads it (mask_polarity keep reads it "
                 "otherwise)", name);
    else if (!strcmp(from, "contract"))
        progress(c->o, "mask: input '%s' read with 1 = padding, as the model's " OQ_CONVERT_CONTRACT_KEY " says", name);
    else
        progress(c->o, "mask: input '%s' read with 1 = padding (mask_polarity pad)", name);
}

/* The model's inputs as the summary records them. */
static oq_status record_signature(run_ctx *c, oq_err *err)
{
    const oq_model_info *mi = c->sig.mi;
    for (size_t i = 0; i < mi->n_inputs; i++)
        if (oq_strv_push(&c->s->input_names, &c->s->n_input_names, mi->inputs[i].name))
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (c->sig.mask >= 0 && !(c->s->mask_input = strdup(mi->inputs[c->sig.mask].name)))
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (c->sig.mask >= 0 && c->sig.polarity == OQ_MASK_POLARITY_PAD) say_pad_polarity(c);
    if (c->sig.mask < 0 && *c->sig.not_mask) progress(c->o, "%s", c->sig.not_mask);
    if (c->sig.mask < 0) progress(c->o, "no mask input: every element of every output is valid (mask_name names one)");
    return OQ_OK;
}

/* A model written by `ortqual convert` may compute its function only for valid-prefix masks
 * and says so in its metadata (OQ_CONVERT_CONTRACT_KEY): the input it names is the mask,
 * whatever detection would pick, so that every batch's check covers the tensor that input
 * gets. A mask_name naming another input, or no_mask, contradicts the model and is refused;
 * so is a mask_polarity given that is not the contract's, which `pol` gets. */
static oq_status contract_mask(const oq_validate_opts *o, const oq_model_file *m, char *mask, size_t n,
                               oq_mask_polarity *pol, oq_err *err)
{
    int has;
    char input[256];
    oq_mask_polarity recorded;
    *mask = 0;
    oq_status st = oq_convert_contract_of(m->bytes, m->n, o->model_path, &has, input, sizeof input, &recorded, err);
    if (st || !has) return st;
    if (o->no_mask)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%s: no_mask, but the model's %s names input '%s' as its mask (valid prefixes only)",
                          o->model_path, OQ_CONVERT_CONTRACT_KEY, input);
    if (o->mask_name && strcmp(o->mask_name, input))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%s: mask_name '%s', but the model's %s names input '%s' as its mask (valid prefixes only)",
                          o->model_path, o->mask_name, OQ_CONVERT_CONTRACT_KEY, input);
    *pol = o->mask_polarity;
    if ((st = oq_contract_polarity_adopt(o->model_path, recorded, o->mask_polarity_given, pol, err))) return st;
    snprintf(mask, n, "%s", input);
    progress(o, "%s: %s: input '%s' must be a valid prefix (%s) in every batch", o->model_path,
             OQ_CONVERT_CONTRACT_KEY, input,
             *pol == OQ_MASK_POLARITY_KEEP ? "ones, then zeros" : "zeros, then ones: 1 = padding");
    return OQ_OK;
}

/* The tolerances are read by each worker; a value it would refuse is refused before anything runs,
 * and so is an override of an output the model lacks (`mi`; NULL: not known yet), which would
 * otherwise be ignored (a typo silently judged at the default), or of an integer or bool output,
 * which is compared exactly. */
oq_status oq_validate_check_tolerances(const char *text, const oq_model_info *mi, oq_err *err)
{
    const char **names = mi ? calloc(mi->n_outputs + 1, sizeof *names) : NULL;
    int32_t *types = mi ? calloc(mi->n_outputs + 1, sizeof *types) : NULL;
    if (mi && (!names || !types)) {
        free(names);
        free(types);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; names && i < mi->n_outputs; i++) {
        names[i] = mi->outputs[i].name;
        types[i] = mi->outputs[i].elem_type;
    }
    oq_status st = oq_tolerances_check_specs(text, names, types, mi ? mi->n_outputs : 0, err);
    free(names);
    free(types);
    return st == OQ_ERR_NOMEM || !st ? st : oq_err_prefix(err, "tolerances: ");
}

static oq_status check_tolerances(const oq_validate_opts *o, const oq_signature *sig, oq_err *err)
{
    return oq_validate_check_tolerances(o->tolerances, sig ? sig->mi : NULL, err);
}


/* An earlier refusal's error.json goes once this run may write: its outcome replaces it. */
static oq_status forget_refusal(const oq_validate_opts *o)
{
    char path[OQ_PATH_BUF];
    snprintf(path, sizeof path, "%s/error.json", o->outdir);
    unlink(path);
    return OQ_OK;
}

/* The output folder is the tool's: an earlier run's (its summary.json) or another's files are
 * written over only with --force; an earlier refusal's error.json is not in the way. */
static oq_status check_outdir(const oq_validate_opts *o, oq_err *err)
{
    oq_status st = oq_check_outdir(o->outdir, o->overwrite, "error.json", err);
    if (!st && o->overwrite) st = oq_validate_check_clearable(o->outdir, err);
    /* the run's fixed outputs: a FIFO or folder planted there is refused now, not after the work */
    static const char *const fixed[] = {"summary.json", "validate.csv", "report.html"};
    char path[OQ_PATH_BUF];
    for (size_t i = 0; !st && i < sizeof fixed / sizeof *fixed; i++) {
        snprintf(path, sizeof path, "%s/%s", o->outdir, fixed[i]);
        if (access(path, F_OK) == 0 || errno != ENOENT) st = oq_check_output_path(path, 1, err);
    }
    return st ? st : forget_refusal(o);
}

/* The output folder, a shard's folder in it and the work folder: below the folder asked for,
 * never through a symbolic link (oq_mkdir_in). */
static oq_status make_dirs(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    char shards[4096], index[16];
    oq_status st = oq_mkdirs(c->root, err);
    if (!st && oq_shard_is_run(o)) {
        snprintf(shards, sizeof shards, "%s/shards", c->root);
        snprintf(index, sizeof index, "%d", (int)o->shard.index);
        st = oq_mkdir_in(c->root, "shards", err);
        if (!st) st = oq_mkdir_in(shards, index, err);
    }
    /* a killed run's (--force: without it the folder was refused): its files are an earlier run's.
     * A shard's goes too (its files are written by name, so links planted there would be written
     * through), but is no earlier result of its own: that one stays until unstage */
    if (!st && o->overwrite) {
        int dropped = oq_validate_drop_left_work(o->outdir);
        if (!oq_shard_is_run(o)) c->left_by_killed = dropped;
    }
    if (!st) st = oq_mkdir_in(o->outdir, ".work", err);
    if (!st) snprintf(c->workdir, sizeof c->workdir, "%s/.work", o->outdir);
    return st;
}

/* ORT `lib` loaded here, as a forked worker's parent loads it (spawn.c), and named by the bytes
 * it mapped, once: the forked workers inherit the mapping and its digest (libident.c) for their
 * evidence and saved outputs instead of each reading the library again, and a library replaced
 * or a link re-pointed after this is still named by what ran. Where no probe was tried (an EP
 * library or threads in this process: a GPU host's parent), `file` is set to the mapped file:
 * saved outputs are judged against it, and a shard names it by content at its start. Its ELF
 * build-id into id[n]. */
static void named_here(const char *lib, char *file, size_t n, char *id, size_t id_n)
{
    oq_runtime *rt = NULL;
    char sha[65];
    if (oq_runtime_load(lib, &rt, NULL) != OQ_OK) return;
    if (!*file) snprintf(file, n, "%s", oq_runtime_lib_path(rt));
    (void)oq_runtime_lib_sha256(rt, sha, NULL, 0);
    (void)oq_runtime_build_id(rt, id, id_n);
    oq_runtime_free(rt);
}

/* The ORT libraries the workers will load (--ort-lib, else the default search with
 * $ORTQUAL_ORT_LIB first; --reference-ort-lib) load: one that does not is a runtime error before
 * any batch is written (each worker met it after the batches were prepared and the reference had
 * run, and the run left a summary of configurations that could not run). */
static oq_status check_ort_libs(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    int ref = o->n_configs && oq_config_uses_ort(&o->configs[0]), others = 0;
    for (size_t k = 1; k < o->n_configs; k++) others |= oq_config_uses_ort(&o->configs[k]);
    oq_status st = OQ_OK;
    char *file = c->ort[1].file;
    if (others || (ref && !o->reference_ort_lib)) st = oq_worker_probe_ort(o->ort_lib, file, sizeof c->ort[1].file, err);
    if (st && o->ort_lib) return st == OQ_ERR_NOMEM ? st : oq_err_prefix(err, "ort_lib: ");
    if (st) return st; /* the search's message names what it tried, and $ORTQUAL_ORT_LIB */
    if (ref && o->reference_ort_lib)
        st = oq_worker_probe_ort(o->reference_ort_lib, c->ort[0].file, sizeof c->ort[0].file, err);
    if (st) return st == OQ_ERR_NOMEM ? st : oq_err_prefix(err, "reference_ort_lib: ");
    char id[129] = "";
    if (others || (ref && !o->reference_ort_lib)) named_here(o->ort_lib, file, sizeof c->ort[1].file, id, sizeof id);
    return others ? oq_validate_saved_self(o, file, id, err) : OQ_OK; /* outputs saved by the others' own session */
}

/* Whether file `path`'s directory entry, or the file it resolves to, is in folder `dir`
 * (`dir_id`: its stat): a run writes inputs_NNN.npz, models and weights there by rename and,
 * replacing an earlier run, removes their earlier copies. */
static int file_in_dir(const char *path, const struct stat *dir_id)
{
    char parent[OQ_PATH_BUF], *real = realpath(path, NULL);
    struct stat st;
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash) *(slash == parent ? slash + 1 : slash) = 0;
    int in = stat(slash ? parent : ".", &st) == 0 && st.st_dev == dir_id->st_dev && st.st_ino == dir_id->st_ino;
    if (!in && real) {
        char *rs = strrchr(real, '/');
        if (rs) *(rs == real ? rs + 1 : rs) = 0;
        in = stat(real, &st) == 0 && st.st_dev == dir_id->st_dev && st.st_ino == dir_id->st_ino;
    }
    free(real);
    return in;
}

/* The files the run reads stay outside its output folder: written over there (inputs_000.npz
 * is a name the run writes), or removed as an earlier run's with --force, they would be lost. */
static oq_status check_inputs_outside(const oq_validate_opts *o, oq_err *err)
{
    struct stat d;
    if (stat(o->outdir, &d) != 0 || !S_ISDIR(d.st_mode)) return OQ_OK; /* made by this run */
    const char *what[4] = {"model_path ", "weights_path ", "input_files ", "expected_files "};
    const char *one[2] = {o->model_path, o->weights_path};
    char said[64];
    for (int k = 0; k < 2; k++)
        if (one[k] && file_in_dir(one[k], &d))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s%s is in the output folder %s, which the run writes "
                              "and clears: choose another output folder", oq_terms(what[k], said, sizeof said), one[k],
                              o->outdir);
    for (int k = 0; k < 2; k++) {
        size_t n = k ? o->n_expected_files : o->n_input_files;
        const char *const *f = k ? o->expected_files : o->input_files;
        for (size_t i = 0; i < n; i++)
            if (file_in_dir(f[i], &d))
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s%s is in the output folder %s, which the run "
                                  "writes and clears: choose another output folder",
                                  oq_terms(what[2 + k], said, sizeof said), f[i], o->outdir);
    }
    return OQ_OK;
}

/* Each note of c->unchecked kept for summary.json, as say_unchecked says it. */
static oq_status keep_unchecked(run_ctx *c, oq_err *err)
{
    oq_status st = OQ_OK;
    for (const char *line = c->unchecked, *end; !st && line && (end = strchr(line, '\n')); line = end + 1) {
        char *text = NULL;
        if (asprintf(&text, "%s: %.*s", c->o->model_path, (int)(end - line), line) < 0)
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        st = oq_run_notes_add(&c->notes, "indices_unchecked", text, err);
        free(text);
    }
    return st;
}

/* The run's model and its signature. The user's file is read once: the contract in its
 * metadata, its inputs and outputs, and its identity (what every worker checks the bytes it
 * reads against) all come from those bytes, which are let go before any worker starts. */
static oq_status model_signature(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    if (o->kind != OQ_MODEL_USER) return oq_signature_make(o, c->weights, NULL, NULL, &c->sig, err);
    oq_model_file m;
    char contract[256];
    oq_mask_polarity pol = OQ_MASK_POLARITY_KEEP;
    oq_status st = oq_model_file_read(o->model_path, &m, err);
    if (st) return st;
    st = contract_mask(o, &m, contract, sizeof contract, &pol, err);
    if (!st && !m.mi) st = oq_err_set(err, m.inspected.status, "%s", m.inspected.msg);
    unsigned *uses = NULL;
    oq_index_routes *tables = NULL;
    if (!st) st = oq_model_input_uses_bytes(m.bytes, m.n, m.mi, o->model_path, &uses, &tables, &c->unchecked, err);
    if (!st) st = keep_unchecked(c, err);
    if (!st)
        st = oq_signature_make_used(o, c->weights, &m.mi, &uses, &tables, *contract ? contract : NULL, &c->sig, err);
    if (!st && *contract && !o->mask_polarity_given) c->sig.polarity = pol; /* the user need not repeat it */
    if (!st && *contract && !o->mask_polarity_given) c->sig.polarity_source = "contract";
    if (!st && *contract && !o->mask_polarity_given)
        st = encoder_polarity(o, pol, " (the model's " OQ_CONVERT_CONTRACT_KEY " says polarity pad)", err);
    if (!st && !strcmp(c->sig.polarity_source, "graph"))
        st = encoder_polarity(o, c->sig.polarity, " (as the graph reads its mask)", err);
    free(uses); /* (both moved into the signature unless an error came first) */
    oq_index_routes_free(tables);
    memcpy(c->user_sha256, m.sha256, sizeof c->user_sha256);
    c->user_unhashed = m.unhashed;
    oq_model_file_clear(&m);
    return st;
}

/* The C encoder beside a user's model computes the heads the weights were loaded with
 * (encoder.heads: the caller's, else the default 4), which the weights' shapes cannot tell; a
 * model whose attention splits into other heads would fail every batch as if its numbers were
 * wrong. Refused before anything runs, whatever the form: an Attention's q_num_heads or its
 * 4-D Q's shape, a decomposed chain's head-splitting Reshape (oq_attention_info.heads). */
static oq_status check_reference_heads(const run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    const oq_config *ref = NULL;
    for (size_t k = 0; k < o->n_configs && !ref; k++)
        if (!strcmp(o->configs[k].runtime, "ref") && o->configs[k].repr == OQ_REPR_ENCODER) ref = &o->configs[k];
    if (o->kind != OQ_MODEL_USER || !c->weights || !ref) return OQ_OK;
    const oq_model_info *mi = c->sig.mi;
    long long want = c->weights->cfg.heads;
    for (size_t i = 0; i < mi->n_attention; i++) {
        const oq_attention_info *a = &mi->attention[i];
        long long h = (long long)a->heads;
        char what[OQ_PATH_BUF];
        if (h <= 0 || h == want) continue;
        if (!strcmp(a->kind, "decomposed")) snprintf(what, sizeof what, "decomposed attention (Softmax '%s')", a->name);
        else snprintf(what, sizeof what, "%s '%s'", a->kind, a->name);
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%s: the reference %s computes %lld heads, the model's %s has %lld; give encoder.heads %lld",
                          o->model_path, ref->name, want, what, h, h);
    }
    return OQ_OK;
}

/* The reference is the user's saved outputs: prepare writes them beside the inputs. */
static int expects(const oq_validate_opts *o) { return o->n_configs && oq_config_is_expected(&o->configs[0]); }

/* --force over an earlier result with the user's batches: they are checked first, written into
 * the work folder and removed, so that a refusal of one (ids out of a table, a bad seq_axes) leaves
 * the earlier result as it was; its files go only once every check passed. */
static oq_status precheck_batches(const run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    char summary[OQ_PATH_BUF], list[OQ_PATH_BUF];
    snprintf(summary, sizeof summary, "%s/summary.json", o->outdir);
    if (!o->n_input_files || oq_shard_is_run(o) || o->shard.prepare || access(summary, F_OK) != 0) return OQ_OK;
    oq_validate_opts dry = *o;
    dry.outdir = c->workdir;
    snprintf(list, sizeof list, "%s/precheck.jsonl", c->workdir);
    oq_batch_sink k = {.list_path = list, .interrupt = o->interrupt};
    oq_status st = oq_fopen_scratch(list, &k.list, err);
    if (!st) st = oq_validate_prepare_batches(&dry, &c->sig, expects(o), &k, err);
    if (k.list) fclose(k.list);
    oq_validate_unprepare(&dry, expects(o), &k);
    unlink(list);
    return st;
}

static oq_status setup(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_status st = check_ep_options(o, err);
    if (!st) st = check_requirements(o, err);
    if (!st) st = check_expected(o, err);
    if (!st) st = check_representations(o, err);
    if (!st) st = encoder_polarity(o, o->mask_polarity, "", err);
    if (!st) st = oq_validate_self_comparison(o, NULL, err);
    if (!st) st = check_required(o, err);
    if (!st) st = check_tolerances(o, NULL, err);
    if (!st) st = oq_check_outdir_kind(c->root, err);
    if (!st) st = oq_shard_split_check(o, err); /* before --force removes the shards of an earlier plan */
    if (!st) st = oq_shard_setup(o, &c->replaces_plan, err);
    /* a shard of another plan is refused before its folder is looked at, let alone made */
    if (!st) st = oq_shard_plan_open(o, c->root, &c->shard_plan, err);
    if (!st) st = check_inputs_outside(o, err);
    if (!st) st = check_outdir(o, err);
    if (!st) st = make_dirs(c, err);
    if (!st) st = check_ort_libs(c, err);
    if (!st) st = make_weights(c, err);
    if (!st) st = model_signature(c, err);
    if (!st) st = check_reference_heads(c, err);
    if (!st) st = check_tolerances(o, &c->sig, err);
    if (!st) st = record_signature(c, err);
    if (!st) st = precheck_batches(c, err);
    /* a signal ends the run here too: a call it interrupted has failed or gone on without it */
    if (!st && interrupted(o))
        st = oq_err_set(err, OQ_ERR_RUNTIME, "interrupted by SIG%s while setting up", sig_abbrev((int)*o->interrupt));
    /* the checks passed: from here the run writes, and an unsharded one replaces the folder's
     * earlier result (a shard's waits for its plan check: unstage; the prepare step's for its
     * plan: publish_plan) */
    if (!st && !oq_shard_is_run(o) && !o->shard.prepare)
        c->replaces_run = oq_validate_forget_result(o->outdir) || c->left_by_killed || c->replaces_plan;
    return st ? st : save_weights(c, err);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Directories the library made: the work directory (plans, results, reference outputs), an
 * earlier plan's shards. */
void oq_remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* outdir/error.json: why the run stopped (when the disk still takes it). */
static void record_error(const run_ctx *c, const oq_err *e)
{
    char path[OQ_PATH_BUF];
    snprintf(path, sizeof path, "%s/error.json", c->o->outdir);
    oq_error_record_write(path, e, NULL);
}

/* The folder still holds an earlier run's result (--force): this run stopped before its first
 * write, which replaces it (a shard's, after its plan check), so it wrote nothing there. */
static int earlier_result_kept(const run_ctx *c)
{
    char path[4096], plan[4096];
    snprintf(path, sizeof path, "%s/summary.json", c->o->outdir);
    snprintf(plan, sizeof plan, "%s/shards/plan.json", c->o->outdir);
    return access(path, F_OK) == 0 || (c->o->shard.prepare && access(plan, F_OK) == 0);
}

/* A run that stops before any model ran leaves an error record and nothing else (a shard's
 * batches are the prepared ones, shared with the other shards: they stay, and so does the
 * user's model); an earlier result it did not replace stays alone, the refusal said on the
 * caller's error only (an error.json beside it would be a second outcome: docs/scale-out.md). */
static void undo_prepare(run_ctx *c, oq_err *e)
{
    if (!oq_shard_is_run(c->o)) oq_validate_unprepare(c->o, expects(c->o), &c->sink);
    if (*c->weights_path) unlink(c->weights_path);
    for (size_t k = 0; c->o->kind != OQ_MODEL_USER && k < c->o->n_configs; k++)
        if (c->models[k]) unlink(c->models[k]);
    if (!earlier_result_kept(c)) {
        record_error(c, e);
        return;
    }
    char tail[4300];
    /* the prepare step writes its batches and weights in place: an earlier plan's, written over, went */
    if (c->replaces_plan && (c->sink.n || *c->weights_path))
        snprintf(tail, sizeof tail, "; the earlier plan's shard results and merge in %s are left as they were, but "
                 "not the batch and weight files this step wrote over (prepare again before any shard runs)",
                 c->o->outdir);
    else
        snprintf(tail, sizeof tail, "; the earlier result in %s is left as it was", c->o->outdir);
    oq_validate_err_tail(e, tail);
}

/* Each note of the model's indices that nothing checks before the run, once for the run (the
 * batch check holds an input's; these are ORT's to refuse). */
static void say_unchecked(const run_ctx *c)
{
    for (const char *line = c->unchecked, *end; line && (end = strchr(line, '\n')); line = end + 1)
        progress(c->o, "note: %s: %.*s", c->o->model_path, (int)(end - line), line);
}

/* The batches: prepared here, or (a shard) taken from the prepared plan. */
static oq_status load_batches(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    if (oq_shard_is_run(o)) {
        oq_status st = oq_shard_load(o, c->root, &c->shard_plan, c->s, err);
        c->n_all = c->shard_plan.n_batches;
        c->padded_length = c->shard_plan.padded_length;
        c->first_bl[0] = c->shard_plan.first_batch_size;
        c->first_bl[1] = c->shard_plan.first_padded_length;
        return st;
    }
    /* streamed: each batch's list line and description entry written as it is made */
    char list[OQ_PATH_BUF], desc[OQ_PATH_BUF];
    snprintf(list, sizeof list, "%s/batch_list.jsonl", c->workdir);
    snprintf(desc, sizeof desc, "%s/description.json", c->workdir);
    c->sink = (oq_batch_sink){.list_path = list, .desc = &c->desc, .keep_brief = !o->shard.prepare,
                              .on_put = o->on_prepare, .put_ctx = o->progress_ctx, .interrupt = o->interrupt};
    oq_status st = oq_fopen_scratch(list, &c->sink.list, err);
    if (!st) st = oq_plan_desc_begin(&c->desc, desc, err);
    if (!st && !(c->sp.batch_list = strdup(list))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = oq_validate_prepare_batches(o, &c->sig, expects(o), &c->sink, err);
    if (c->sink.list && fclose(c->sink.list) != 0 && !st) st = oq_err_write(err, list, errno);
    c->sink.list = NULL;
    c->sink.list_path = NULL; /* (a buffer of this function) */
    c->n_all = c->sink.n;
    c->padded_length = c->sink.padded_length;
    memcpy(c->first_bl, c->sink.first_bl, sizeof c->first_bl);
    if (!st && c->replaces_run) oq_validate_clear_stale(o, c->n_all, NULL, 0);
    if (!st && c->sig.mask >= 0 && c->sig.mask_why) /* detection's choice, said where it can be checked */
        progress(o, "mask: input '%s' taken as the [B, L] padding mask because %s (mask_name names another, "
                 "no_mask says there is none)", c->sig.mi->inputs[c->sig.mask].name, c->sig.mask_why);
    if (!st) say_unchecked(c);
    if (!st)
        progress(o, "%zu batches %s to %s", c->n_all,
                 c->sig.mask >= 0 ? "checked against the mask contract and written" : "written", o->outdir);
    return st;
}

/* A staged file (the work folder's) moved into the run's folder; *path is where it is now. */
static oq_status move_in(const run_ctx *c, char **path, oq_err *err)
{
    size_t wl = strlen(c->workdir);
    if (!*path || strncmp(*path, c->workdir, wl) || (*path)[wl] != '/') return OQ_OK; /* a user's model */
    char *to = NULL;
    if (asprintf(&to, "%s%s", c->o->outdir, *path + wl) < 0) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    /* configurations of one representation and precision share a file: moved by the first */
    if (rename(*path, to) != 0 && (errno != ENOENT || access(to, F_OK) != 0)) {
        oq_status st = oq_err_write(err, to, errno);
        free(to);
        return st;
    }
    free(*path);
    *path = to;
    return OQ_OK;
}

/* A shard run past its plan check: the shard's earlier result goes (stale.c), and with it a merge
 * of the shards, which that result was part of (as a merge that stops removes it), and the
 * weights and models it staged move in, the plans naming them there. */
static oq_status unstage(run_ctx *c, oq_err *err)
{
    oq_validate_forget_result(c->o->outdir);
    oq_err dropped = OQ_ERR_INIT;
    oq_validate_merge_drop(c->root, &dropped);
    if (*dropped.msg) /* "; the earlier merge's ... removed" */
        progress(c->o, "shard %d: %s (it no longer describes the shards)", (int)c->o->shard.index, dropped.msg + 2);
    char *weights = *c->weights_path ? strdup(c->weights_path) : NULL;
    oq_status st = *c->weights_path && !weights ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory") : OQ_OK;
    if (!st) st = move_in(c, &weights, err);
    if (!st && weights) snprintf(c->weights_path, sizeof c->weights_path, "%s", weights);
    free(weights);
    for (size_t k = 0; !st && k < c->o->n_configs; k++) {
        oq_validate_plan *p = &c->plans[k];
        st = move_in(c, &c->models[k], err);
        if (!st && p->model && c->models[k] && strcmp(p->model, c->models[k])) {
            free(p->model);
            if (!(p->model = strdup(c->models[k]))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
        if (!st && p->weights) {
            free(p->weights);
            if (!(p->weights = strdup(c->weights_path))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
    }
    return st;
}

/* The plan's identity, its description on file (the summary copies it from there); a shard
 * checks it against the prepared plan and records its start. */
static oq_status identify(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    char desc[OQ_PATH_BUF];
    snprintf(desc, sizeof desc, "%s/description.json", c->workdir);
    oq_status st = oq_plan_identify(o, c->plans, oq_shard_is_run(o) ? &c->shard_plan : NULL, &c->desc, c->s, desc,
                                    err);
    if (!st && !(c->sp.description = strdup(desc))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (st || !oq_shard_is_run(o)) return st;
    st = oq_shard_check_identity(o, &c->shard_plan, c->s, desc, c->root, err);
    if (!st) st = oq_shard_runtimes_start(o, &c->shard_plan, c->root, c->ort, err);
    if (!st) st = unstage(c, err);
    if (!st) st = oq_shard_begin(o, &c->shard_plan, c->s, err);
    if (!st)
        progress(o, "shard %d of %d (by %s): %zu of %zu batches, %zu of %zu configurations", (int)o->shard.index,
                 (int)o->shard.count, oq_shard_by_name(o->shard.by), c->s->n_batches, c->n_all,
                 c->s->shard.n_configs, o->n_configs);
    return st;
}

/* validate.csv, the plots, then summary.json from the typed summary, and report.html from
 * the records as the same pass counted them (summary.json read once more, its records not:
 * `ortqual report` parses each of them again). A report that cannot be written is left to
 * the caller (report_written 0). */
static oq_status write_outputs(run_ctx *c, oq_err *err)
{
    oq_validate_summary *s = c->s;
    oq_iso_time(s->end, sizeof s->end);
    s->evidence_json = oq_validate_evidence(c->o);
    oq_status listed = list_requirements(c->o, s, err);
    if (listed) return listed;
    oq_validate_judge(s, c->o->allow_skip);
    judge_interruption(s);
    judge_late_interruption(c);
    char path[OQ_PATH_BUF];
    oq_vd vd;
    int counted = oq_vd_init(&vd, s->n_configs);
    int plots = !c->o->plots ? OQ_PLOTS_NONE : c->o->isolate ? OQ_PLOTS_ISOLATED : OQ_PLOTS_HERE;
    oq_status st = oq_validate_write_tables(c->o->outdir, s, &c->sp, plots, 1, counted ? &vd : NULL, err);
    snprintf(path, sizeof path, "%s/summary.json", c->o->outdir);
    judge_late_interruption(c); /* (the tables and plots take a while) */
    if (!st) st = oq_summary_write(s, &c->sp, path, err);
    if (st) oq_validate_drop_tables(c->o->outdir);
    oq_err re = {0};
    s->report_written = !st && counted && oq_report_write_counted(c->o->outdir, &vd, &re) == OQ_OK;
    oq_vd_clear(&vd);
    return st;
}

/* The batch list and the plan's description to files before the workers run: from here on the
 * run's memory does not grow with its batches (the summary returned holds neither). */
static oq_status spill(run_ctx *c, oq_err *err)
{
    if (!oq_shard_is_run(c->o)) { /* prepared here: on file from the start, the brief kept */
        c->sp.brief = c->sink.brief;
        c->sp.n_brief = c->sink.n;
        c->sink.brief = NULL;
        return OQ_OK;
    }
    oq_status st = oq_spill_batches(c->s, c->workdir, &c->sp, err);
    malloc_trim(0); /* their pages handed back: what runs next would otherwise sit on top of them */
    return st;
}

/* A polarity the caller gave that the graph does not confirm (it tells nothing of how it reads
 * the mask): which elements were judged rests on the option alone, so each output's count of
 * them is said; a count that is the padding's would show (QA round 9a, defect 1). */
static void say_unconfirmed_polarity(const run_ctx *c)
{
    const oq_signature *g = &c->sig;
    if (g->mask < 0 || strcmp(g->polarity_source, "option") || g->polarity_by_graph) return;
    const oq_config_result *r = NULL;
    for (size_t i = 1; !r && i < c->s->n_configs; i++)
        if (c->s->configs[i].n_outputs) r = &c->s->configs[i];
    for (size_t j = 0; r && j < r->n_outputs; j++)
        progress(c->o, "mask: input '%s' read with 1 = %s (mask_polarity %s), which the graph does not confirm: "
                 "output '%s' judged on %lld of its %lld elements", g->mi->inputs[g->mask].name,
                 g->polarity == OQ_MASK_POLARITY_PAD ? "padding" : "valid", oq_mask_polarity_name(g->polarity),
                 r->outputs[j].all.name, (long long)r->outputs[j].all.num_valid,
                 (long long)r->outputs[j].all.num_elements);
}

/* Every configuration this run holds (a shard: the reference and its share), then the files. */
static oq_status run_all(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_shard_part part = {0, 0, 1, o->n_configs};
    if (oq_shard_is_run(o))
        part = oq_shard_part_of(o->shard.count, o->shard.by, c->n_all, o->n_configs, o->shard.index);
    int ref_ok = 1;
    size_t k = 0;
    oq_status st = OQ_OK;
    if (c->overlap && !interrupted(o)) {
        st = run_overlapped(c, &ref_ok, err);
        k = 2;
    }
    for (; !st && k < o->n_configs; k++)
        if (oq_shard_part_config(&part, k) >= 0) {
            if (interrupted(o)) not_reached(c, k);
            else st = run_config(c, k, &ref_ok, err);
        }
    /* every run names its ONNX Runtime by content (a library rebuilt at the same path is another
     * build); a shard's must, for the merge */
    if (!st) st = oq_shard_runtimes(c->s, c->ort, oq_shard_is_run(o), err);
    if (!st) st = oq_validate_saved_by_compare(c->s->configs, c->s->n_configs, err);
    if (!st) say_unconfirmed_polarity(c);
    return st ? st : write_outputs(c, err);
}

/* The reference cache's directory, refused before anything is written when it is not ours (or,
 * shared, not our group's alone); its group kept for summary.json. */
static oq_status check_cache(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    const oq_config *ref = o->n_configs ? &o->configs[0] : NULL;
    if (!o->cache_dir || o->repeat_reference || !ref || oq_config_uses_ort(ref) || oq_config_is_expected(ref))
        return OQ_OK;
    oq_refcache_dir d;
    oq_status st = oq_refcache_dir_ready(o->cache_dir, o->cache_shared, &d, err);
    if (!st && d.was) /* a folder the user gave, changed: never silently (a group's shared cache lost its bits) */
        progress(o, "warning: cache directory %s: mode changed from 0%o to 0%o: the reference cache is private, "
                 "per user", o->cache_dir, d.was, d.was & 0700);
    if (!st && d.no_setgid) /* once, here: the workers check the folder again in silence */
        progress(o, "warning: cache directory %s: not setgid: new entries may get their writer's group instead of "
                 "%s (chmod g+s)", o->cache_dir, d.group);
    if (!st && o->cache_shared && !(c->s->cache_group = strdup(d.group)))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return st;
}

/* Which reference cache the run uses, or why none, for summary.json. A C reference without one
 * says so (every batch is computed, and stored for no later run): a miss nobody is told about. */
static oq_status note_cache(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    const oq_config *ref = o->n_configs ? &o->configs[0] : NULL;
    int c_ref = ref && !oq_config_uses_ort(ref) && !oq_config_is_expected(ref);
    char timed[96];
    const char *off = !c_ref ? "only a C reference (ref:*) is cached"
                      : o->repeat_reference ? oq_terms("repeat_reference: the reference is timed, so "
                                                        "every batch runs", timed, sizeof timed)
                      : !o->cache_dir ? (o->cache_off ? o->cache_off : "no cache directory given")
                                      : NULL;
    if (off && c_ref && !o->repeat_reference && !o->shard.prepare) progress(o, "reference cache: off (%s)", off);
    c->s->cache_shared = off ? 0 : o->cache_shared; /* whose entries it trusts, too */
    char **field = off ? &c->s->cache_off : &c->s->cache_dir;
    return (*field = strdup(off ? off : o->cache_dir)) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

/* A file of a list, where it is in the list (for the same file named twice). */
typedef struct listed_file {
    uint64_t dev, ino;
    size_t at;
} listed_file;

static int by_file(const void *a, const void *b)
{
    const listed_file *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* No file twice in the list `what` (by device and inode: a link or another spelling of a path is
 * the same file); `why` says what it would do. Sorted, not compared pairwise: 10^5 batches. A
 * file that cannot be read is left to its reader's message. */
static oq_status listed_once(const char *what, const char *const *paths, size_t n, const char *why, oq_err *err)
{
    char said[64]; /* what, the library's words ("input_files: "), worded as a format is */
    listed_file *v = n ? malloc(n * sizeof *v) : NULL;
    if (n && !v) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (stat(paths[i], &sb) == 0) v[m++] = (listed_file){(uint64_t)sb.st_dev, (uint64_t)sb.st_ino, i};
    }
    if (m > 1) qsort(v, m, sizeof *v, by_file); /* v is NULL when n is 0 */
    oq_status st = OQ_OK;
    for (size_t i = 1; !st && i < m; i++)
        if (v[i].dev == v[i - 1].dev && v[i].ino == v[i - 1].ino)
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "%sfiles %zu and %zu are the same file (%s and %s): %s",
                            oq_terms(what, said, sizeof said), v[i - 1].at + 1, v[i].at + 1, paths[v[i - 1].at],
                            paths[v[i].at], why);
    free(v);
    return st;
}

/* (a copy of a file, by its members, is refused as its batch is read: oq_event_seen_file) */
static oq_status check_lists(const oq_validate_opts *o, oq_err *err)
{
    oq_status st = listed_once("input_files: ", o->input_files, o->n_input_files, "its events would count twice", err);
    if (!st)
        st = listed_once("expected_files: ", o->expected_files, o->n_expected_files,
                         "a batch would be judged against another batch's outputs", err);
    return st;
}

/* self_exe NULL: the tool installed with this library, found once up front (a worker that cannot
 * be forked later, after an EP library was loaded, needs it too); `why` says why none was taken. */
static const oq_validate_opts *with_tool(const oq_validate_opts *o, oq_validate_opts *copy, char *tool, size_t n,
                                         oq_err *why)
{
    if (!o->isolate || o->shard.prepare || o->self_exe || oq_validate_find_tool(tool, n, why)) return o;
    *copy = *o;
    copy->self_exe = tool;
    return copy;
}

/* A path list's entries: NULL or "" would be read as some other file (or none) and named
 * by an inner function, not by the field the caller set. */
static oq_status check_path_list(const char *field, const char *const *v, const char *count_field, size_t n,
                                 oq_err *err)
{
    if (n && !v) return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s is NULL (%s %zu)", field, count_field, n);
    for (size_t i = 0; i < n; i++)
        if (!v[i] || !*v[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s[%zu] is %s", field, i,
                              v[i] ? "empty" : "NULL");
    return OQ_OK;
}

/* The path fields, before anything reads them: each refusal names its field. */
static oq_status check_paths(const oq_validate_opts *o, oq_err *err)
{
    if (!o->outdir || !*o->outdir)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: outdir is %s", o->outdir ? "empty" : "NULL");
    if (o->kind == OQ_MODEL_USER && (!o->model_path || !*o->model_path))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: model_path is %s (kind OQ_MODEL_USER)",
                          o->model_path ? "empty" : "NULL");
    if (o->weights_path && !*o->weights_path)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: weights_path is empty (NULL: random weights)");
    oq_status st = check_path_list("input_files", o->input_files, "n_input_files", o->n_input_files, err);
    if (!st) st = check_path_list("expected_files", o->expected_files, "n_expected_files", o->n_expected_files, err);
    if (!st) st = check_path_list("ep_lib_names", o->ep_lib_names, "n_ep_libs", o->n_ep_libs, err);
    if (!st) st = check_path_list("ep_lib_paths", o->ep_lib_paths, "n_ep_libs", o->n_ep_libs, err);
    return st;
}

/* The tool's --timeout takes whole seconds from 1: the library refuses what can be no limit
 * (0, negative, NaN) rather than run a worker unwatched; fractions are the library's own. */
static oq_status check_timeout(const oq_validate_opts *o, oq_err *err)
{
    if (!(o->timeout_s > 0) || o->timeout_s > (double)(1LL << 40))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "timeout_s %g: want seconds above 0, up to 2^40 (default 300)",
                          o->timeout_s);
    return OQ_OK;
}

/* Isolated workers are the tool re-executed wherever forking is not safe (a caller with
 * threads): a self_exe that cannot run, or none where a worker cannot be forked, would fail
 * every configuration, and only after the inputs were prepared. (NULL is a caller's who relies
 * on the fork: see self_exe.) */
static oq_status check_self_exe(const oq_validate_opts *o, const oq_err *why, oq_err *err)
{
    if (!o->isolate || o->shard.prepare) return OQ_OK;
    const char *no_fork = o->self_exe ? NULL : oq_workers_fork_obstacle(o);
    if (no_fork)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "isolated workers cannot be forked from %s, and self_exe is "
                          "NULL (%s): set self_exe to the ortqual tool (the workers run it), or isolate = 0",
                          no_fork, why->msg);
    if (!o->self_exe) return OQ_OK;
    if (access(o->self_exe, X_OK) != 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "self_exe %s: cannot run it: %s (isolated workers run the ortqual tool)",
                          o->self_exe, strerror(errno));
    return OQ_OK;
}

static void ctx_clear(run_ctx *c)
{
    for (size_t k = 0; c->models && k < c->o->n_configs; k++) free(c->models[k]);
    for (size_t k = 0; c->plans && k < c->o->n_configs; k++) oq_validate_plan_clear(&c->plans[k]);
    oq_spilled_clear(&c->sp, c->o->n_configs);
    oq_run_notes_clear(&c->notes);
    if (c->desc.f) fclose(c->desc.f);
    free(c->sink.brief);
    free(c->models);
    free(c->exported_sha256);
    free(c->plans);
    oq_shard_plan_clear(&c->shard_plan);
    oq_encoder_weights_free(c->weights);
    oq_signature_clear(&c->sig);
    free(c->unchecked);
}

/* One run at a time in an output folder, as the tool's: the folder's lock (shared by the shards
 * of a split, each of which also takes its own), unless this thread holds it already (the tool
 * takes it first, to answer a refusal in its own words). */
static oq_status lock_outdir(const oq_validate_opts *o, oq_outdir_lock **folder, oq_outdir_lock **own, oq_err *err)
{
    *folder = *own = NULL;
    if (!o->outdir || !*o->outdir) return OQ_OK; /* refused by the run's own checks */
    int shard = o->shard.count && !o->shard.prepare;
    char name[64];
    oq_shard_lock_name(o->shard.index, name, sizeof name);
    oq_status st = OQ_OK;
    if (!oq_outdir_lock_held(o->outdir, NULL, shard))
        st = shard ? oq_outdir_lock_create_shared(o->outdir, folder, err)
                   : oq_outdir_lock_create(o->outdir, NULL, folder, err);
    if (!st && shard && !oq_outdir_lock_held(o->outdir, name, 0)) st = oq_outdir_lock_create(o->outdir, name, own, err);
    return st;
}

/* The prepare step's plan written, every check passed and the batches made: only now does the
 * folder's earlier outcome go (overwrite: an earlier plan's shards and merge, or a run's result),
 * the earlier plan.json replaced by the new one in one rename. A signal from here: no plan,
 * unless it was published whole. */
static oq_status publish_plan(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    if (c->replaces_plan) oq_shard_drop_results(o->outdir);
    if (oq_validate_forget_result(o->outdir) || c->left_by_killed || c->replaces_plan)
        oq_validate_clear_stale(o, c->n_all, c->models, o->n_configs);
    return oq_shard_plan_prepare(o, &c->sink, c->sp.batch_list, c->sp.description, c->s->plan_hash, c->models,
                                 c->ort, err);
}

static oq_status validate_run(const oq_validate_opts *o_in, const char *const *kinds, const char *const *texts,
                              size_t n_notes, oq_validate_summary **summary, oq_err *err)
{
    oq_validate_opts shard_opts;
    char shard_dir[4096];
    const oq_validate_opts *o = oq_shard_opts(o_in, &shard_opts, shard_dir, sizeof shard_dir);
    oq_validate_opts tool_opts;
    char tool[PATH_MAX];
    oq_err why = OQ_ERR_INIT;
    o = with_tool(o, &tool_opts, tool, sizeof tool, &why);
    size_t n = o->n_configs ? o->n_configs : 1;
    run_ctx c = {.o = o, .root = o_in->outdir, .s = calloc(1, sizeof *c.s), .models = calloc(n, sizeof *c.models),
                 .exported_sha256 = calloc(n, sizeof *c.exported_sha256), .plans = calloc(n, sizeof *c.plans),
                 .sp.records = calloc(n, sizeof *c.sp.records)};
    if (c.s) c.s->configs = calloc(n, sizeof *c.s->configs);
    if (!c.s || !c.s->configs || !c.models || !c.exported_sha256 || !c.plans || !c.sp.records) {
        oq_validate_summary_free(c.s);
        ctx_clear(&c);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    oq_iso_time(c.s->start, sizeof c.s->start);
    c.sp.notes = &c.notes;
    oq_status st = check_self_exe(o, &why, err);
    for (size_t i = 0; !st && i < n_notes; i++) st = oq_run_notes_add(&c.notes, kinds[i], texts[i], err);
    if (!st) st = check_lists(o, err);
    if (!st) st = check_cache(&c, err);
    if (!st) st = setup(&c, err);
    if (!st) st = load_batches(&c, err);
    if (!st) st = export_models(&c, err);
    if (!st) st = make_plans(&c, err);
    if (!st) st = identify(&c, err);
    if (!st) st = note_cache(&c, err); /* once the inputs are accepted: a usage error is one line */
    if (!st && interrupted(o)) /* during preparation's later steps (models, identities) */
        st = oq_err_set(err, OQ_ERR_RUNTIME, "interrupted by SIG%s while preparing (the batches were written)",
                        sig_abbrev((int)*o->interrupt));
    if (!st && o->shard.prepare) st = publish_plan(&c, err);
    if (!st && !o->shard.prepare) c.overlap = reference_overlaps(&c);
    if (st && *c.workdir && interrupted(o)) oq_validate_err_tail(err, ": nothing ran, and what preparation wrote was removed");
    if (st && *c.workdir) undo_prepare(&c, err);
    if (!st && !o->shard.prepare && (st = spill(&c, err))) record_error(&c, err);
    if (!st && !o->shard.prepare && (st = run_all(&c, err))) {
        if (c.fork_refused) undo_prepare(&c, err); /* a run that cannot go on leaves why, nothing half-made */
        else record_error(&c, err);
    }
    if (*c.workdir) oq_remove_tree(c.workdir);
    if (*c.workdir && !o->shard.prepare) oq_validate_drop_temps(o->outdir);
    ctx_clear(&c);
    if (st) oq_validate_summary_free(c.s);
    else *summary = c.s;
    return st;
}

oq_status oq_validate_run(const oq_validate_opts *o, oq_validate_summary **summary, oq_err *err)
{
    if (!o) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: o is NULL", __func__);
    OQ_NEED(err, summary);
    return oq_validate_run_noted(o, NULL, NULL, 0, summary, err);
}

/* A NULL or empty kind or a NULL text of the caller's notes, named by its index. */
static oq_status check_notes(const char *const *kinds, const char *const *texts, size_t n, oq_err *err)
{
    if (n && (!kinds || !texts))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run_noted: %s is NULL with n_notes %zu",
                          !kinds ? "note_kinds" : "note_texts", n);
    for (size_t i = 0; i < n; i++)
        if (!kinds[i] || !*kinds[i] || !texts[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run_noted: note %zu has %s", i,
                              !texts[i] ? "a NULL text" : "no kind");
    return OQ_OK;
}

oq_status oq_validate_run_noted(const oq_validate_opts *o, const char *const *note_kinds,
                                const char *const *note_texts, size_t n_notes, oq_validate_summary **summary,
                                oq_err *err)
{
    if (!o) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: o is NULL", __func__);
    OQ_NEED(err, summary);
    *summary = NULL;
    oq_outdir_lock *folder = NULL, *own = NULL;
    oq_status st = oq_validate_opts_check(o, err);
    if (!st) st = check_notes(note_kinds, note_texts, n_notes, err);
    if (!st) st = check_paths(o, err);
    if (!st) st = check_timeout(o, err);
    if (!st) st = lock_outdir(o, &folder, &own, err);
    if (!st) st = validate_run(o, note_kinds, note_texts, n_notes, summary, err);
    oq_outdir_lock_free(own);
    oq_outdir_lock_free(folder);
    return st;
}
