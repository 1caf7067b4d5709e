/* One ORT row of a sweep, whatever the model: session, first run, warm-up, timed
 * loop, memory, ORT's profile. The attention sweep and bench --model both use it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench-impl.h"
#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/capture.h"
#include "ortqual/dispatch.h"
#include "ortqual/fileio.h"
#include "ortqual/refusal.h"
#include "ortqual/runtime.h"
#include "runtime/sessioncfg-impl.h"
#include "status/args-impl.h"

void oq_bench_row_init(oq_bench_row *row, const oq_bench_opts *o, const oq_bench_variant *v)
{
    memset(row, 0, sizeof *row);
    row->variant = *v;
    snprintf(row->device, sizeof row->device, "%s", oq_config_uses_ort(v) ? v->runtime : "cpu");
    row->io = OQ_IO_HOST;
    oq_session_threads t; /* an ORT row's as ORT runs them: the entries over the options */
    oq_session_threads_ran(o->threads, o->inter_op_threads, o->n_session_configs, o->session_config_keys,
                           o->session_config_values, &t);
    int ort = oq_config_uses_ort(v);
    row->threads = ort ? t.intra : o->threads;
    row->inter_op_threads = ort ? t.inter : o->inter_op_threads;
    row->warmup = o->warmup;
    row->iters = o->iters;
    row->session_ms = row->first_run_ms = NAN;
    row->stats.mean = row->stats.std = row->stats.min = row->stats.max = NAN;
    row->stats.p50 = row->stats.p90 = row->stats.p95 = row->stats.p99 = row->stats.p999 = NAN;
    row->rss_before = row->peak_rss = row->vmhwm = row->gpu_mem = -1;
    row->max_abs_err = row->max_rel_err = NAN;
    row->nan_count = row->inf_count = row->pad_nonzero = row->over_tol = -1;
    row->profile.run_ms = row->profile.node_ms = row->profile.kernel_ms = NAN;
}

void oq_bench_row_peak_begin(oq_bench_row *row)
{
    uint64_t rss = 0, hwm = 0;
    row->vmhwm_row = oq_proc_peak_reset(NULL) == OQ_OK;
    if (!oq_proc_memory(&rss, &hwm, NULL)) row->rss_before = (int64_t)rss;
}

void oq_bench_row_peak_note(oq_bench_row *row)
{
    uint64_t rss = 0, hwm = 0;
    if (!oq_proc_memory(&rss, &hwm, NULL) && (int64_t)hwm > row->vmhwm) row->vmhwm = (int64_t)hwm;
}

void oq_bench_row_fail(oq_bench_row *row, oq_status st, const oq_err *e)
{
    row->status = oq_bench_classify(st, e->msg);
    snprintf(row->error, sizeof row->error, "%s", e->msg[0] ? e->msg : oq_status_str(st)); /* worded when set */
}

/* A failed row whose ORT message a refusal pattern knows: the library's line (the explanation,
 * then ORT's message) in place of the raw message, as validate explains it; judged by the sizes
 * the row fed (its dims, shapes or npz), not by the declared ones. A sweep's model has no file
 * (path NULL): the patterns read from the message alone (an old ORT's IR or opset limit) say
 * all, those that read the node's inputs say less. */
static void explain_refusal(oq_bench_row *row, const oq_bench_model *m, const char *ep)
{
    oq_refusal_facts f = {.message = row->error, .model = m->path, .ep = ep,
                          .inputs = (const oq_tensor *const *)m->in, .n_inputs = m->n_in};
    oq_refusal r;
    if (!oq_refusal_explain(&f, &r, NULL) && r.id) oq_refusal_str(&r, row->error, sizeof row->error);
    oq_refusal_clear(&r);
}

/* Session options for a variant: the user's EP library and options for
 * non-CPU runtimes, plus what the variant implies (oq_config_ep_options). */
oq_status oq_bench_session_opts(const oq_bench_opts *o, const oq_bench_variant *v, oq_bench_session *vs,
                                oq_err *err)
{
    memset(vs, 0, sizeof *vs);
    vs->so.ep = v->runtime;
    vs->so.intra_op_threads = o->threads;
    vs->so.inter_op_threads = o->inter_op_threads;
    vs->so.graph_opt = o->graph_opt;
    vs->so.n_session_configs = o->n_session_configs;
    vs->so.session_config_keys = o->session_config_keys;
    vs->so.session_config_values = o->session_config_values;
    if (!strcmp(v->runtime, "cpu")) return OQ_OK; /* config.h refuses kernels on cpu */
    if (o->n_ep_options + 2 > sizeof vs->keys / sizeof *vs->keys)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "too many provider options");
    vs->so.ep_lib = o->ep_lib;
    size_t n = 0;
    for (size_t i = 0; i < o->n_ep_options; i++, n++) {
        vs->keys[n] = o->ep_option_keys[i];
        vs->values[n] = o->ep_option_values[i];
    }
    n = oq_config_ep_options(v, -1, vs->keys, vs->values, n, vs->mask, sizeof vs->mask);
    vs->so.n_ep_options = n;
    vs->so.ep_option_keys = vs->keys;
    vs->so.ep_option_values = vs->values;
    return OQ_OK;
}

/* ---- routing lines captured around session creation and the first Run -------------- */

typedef struct dispatch_watch {
    int active;
    oq_dispatch_env env;
    oq_capture *cap;
    oq_dispatch_parser *parser;
} dispatch_watch;

static bool dispatch_sink(void *user, int fd, const char *line, size_t len)
{
    (void)fd;
    dispatch_watch *w = user;
    if (!strstr(line, "SdpaKernel=") && !strstr(line, "AttentionKernelOptions")) return false;
    oq_dispatch_parser_feed(w->parser, line, len, NULL);
    oq_dispatch_parser_feed(w->parser, "\n", 1, NULL);
    return true;
}

static void watch_begin(dispatch_watch *w, const char *runtime)
{
    memset(w, 0, sizeof *w);
    if (!strcmp(runtime, "cpu")) return; /* the CPU EP prints no routing lines */
    if (oq_dispatch_parser_create(&w->parser, NULL)) return;
    if (oq_dispatch_env_enable(&w->env, NULL)) {
        oq_dispatch_parser_free(w->parser);
        w->parser = NULL;
        return;
    }
    oq_capture_begin(&w->cap, OQ_CAPTURE_STDOUT, dispatch_sink, w, NULL);
    w->active = 1;
}

/* End the capture and write the distinct kernels seen into `out`. */
static void watch_end(dispatch_watch *w, char *out, size_t n)
{
    out[0] = '\0';
    if (!w->active) return;
    oq_capture_end(w->cap, NULL, NULL);
    oq_dispatch_env_restore(&w->env);
    const oq_dispatch_log *log = oq_dispatch_parser_log(w->parser);
    for (size_t i = 0; log && i < log->n_records; i++) {
        const char *k = log->records[i].kernel_name;
        int seen = 0;
        for (size_t j = 0; j < i; j++) seen |= !strcmp(log->records[j].kernel_name, k);
        if (seen) continue;
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s", used ? "+" : "", k);
    }
    oq_dispatch_parser_free(w->parser);
    memset(w, 0, sizeof *w);
}

/* ---- timing -------------------------------------------------------------------------- */

static oq_status new_session(oq_runtime *rt, const oq_bench_model *m, const oq_session_opts *so, oq_session **s,
                             oq_err *err)
{
    return oq_session_create(rt, m->path, m->bytes, m->len, so, s, err);
}

/* --include-session: each sample is a new session plus its first Run. */
static oq_status time_cold(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_model *m,
                           const oq_session_opts *so, oq_bench_row *row, oq_err *err)
{
    for (size_t i = 0; i < o->iters; i++) {
        oq_session *s = NULL;
        oq_bench_runner *r = NULL;
        double a = oq_now_s();
        oq_status st = new_session(rt, m, so, &s, err);
        if (!st) st = oq_bench_runner_create(s, m->n_in, m->in, o->io_binding, &r, err);
        if (!st) st = oq_bench_runner_run(r, err);
        double b = oq_now_s();
        oq_bench_runner_free(r);
        oq_session_free(s);
        if (st) return st;
        row->samples_ms[row->n_samples++] = 1e3 * (b - a);
    }
    return OQ_OK;
}

oq_status oq_bench_runner_measure(oq_bench_runner *r, size_t iters, unsigned mem_sample_us, double *samples_ms,
                                  int64_t *peak_rss, int *peak_exact, oq_err *err)
{
    OQ_NEED(err, r);
    OQ_NEED_N(err, iters, samples_ms);
    OQ_NEED(err, peak_rss);
    OQ_NEED(err, peak_exact);
    *peak_rss = -1;
    *peak_exact = oq_proc_peak_reset(NULL) == OQ_OK;
    oq_mem_sampler *ms = NULL;
    if (!*peak_exact && mem_sample_us) oq_mem_sampler_start(mem_sample_us, &ms, NULL);
    oq_status st = oq_bench_runner_time(r, iters, samples_ms, err);
    uint64_t rss = 0, hwm = 0;
    if (ms) *peak_rss = (int64_t)oq_mem_sampler_stop(ms);
    else if (*peak_exact && !oq_proc_memory(&rss, &hwm, NULL)) *peak_rss = (int64_t)hwm;
    return st;
}

/* After the timed runs: the row's peak (the timed phase may have reset VmHWM: the peak before
 * it was noted), GPU memory, the allocator's figures. */
static void measure_after(oq_bench_row *row, oq_bench_runner *r)
{
    oq_bench_row_peak_note(row);
    if (strcmp(row->variant.runtime, "cpu")) {
        uint64_t gpu = 0;
        oq_err e = {0};
        if (oq_nvml_process_memory(&gpu, &e) == OQ_OK)
            row->gpu_mem = (int64_t)gpu;
        else
            snprintf(row->gpu_mem_note, sizeof row->gpu_mem_note, "%.150s", e.msg);
    }
    oq_bench_runner_alloc_stats(r, &row->alloc_stats, &row->n_alloc_stats, NULL);
}

/* The timed phase: warm session samples (with memory), or cold samples. */
static oq_status timed(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_model *m, const oq_session_opts *so,
                       oq_bench_runner *r, oq_bench_row *row, oq_err *err)
{
    oq_bench_row_peak_note(row); /* session, first run and warm-up, before the timed reset */
    if (!o->include_session) {
        oq_status st = oq_bench_runner_measure(r, o->iters, o->mem_sample_us, row->samples_ms, &row->peak_rss,
                                               &row->peak_rss_exact, err);
        if (!st) row->n_samples = o->iters;
        return st;
    }
    oq_mem_sampler *ms = NULL;
    oq_mem_sampler_start(o->mem_sample_us, &ms, NULL);
    oq_status st = time_cold(rt, o, m, so, row, err);
    if (ms) row->peak_rss = (int64_t)oq_mem_sampler_stop(ms);
    return st;
}

/* ---- ORT's profile of more runs, in a session of its own ---------------------------- */

/* Per profiled run, the GPU kernels CUPTI saw: their time (ms) and number; and the names
 * over all of them (p). */
typedef struct cupti_runs {
    oq_cupti *c;
    double *ms, *count;
    oq_bench_profile *p;
} cupti_runs;

static void merge_names(cupti_runs *cr)
{
    const char *names[OQ_CUPTI_MAX_NAMES];
    size_t n = oq_cupti_kernel_names(cr->c, names, OQ_CUPTI_MAX_NAMES);
    oq_bench_profile *p = cr->p;
    for (size_t i = 0; i < n && i < OQ_CUPTI_MAX_NAMES; i++) {
        size_t k = 0;
        while (k < p->n_kernel_names && strcmp(p->kernel_names[k], names[i])) k++;
        if (k == p->n_kernel_names && k < OQ_CUPTI_MAX_NAMES)
            snprintf(p->kernel_names[p->n_kernel_names++], OQ_CUPTI_NAME_MAX, "%s", names[i]);
    }
}

/* One Run; with CUPTI, its kernels (the runner synchronizes the outputs first). */
static oq_status profiled_run(oq_bench_runner *r, cupti_runs *cr, size_t slot, oq_err *err)
{
    oq_status st = oq_bench_runner_run(r, err);
    double ms = 0;
    size_t n = 0;
    if (!st && cr->c) st = oq_cupti_take(cr->c, &ms, &n, err);
    if (st || !cr->c || slot == SIZE_MAX) return st;
    cr->ms[slot] = ms;
    cr->count[slot] = (double)n;
    merge_names(cr);
    return OQ_OK;
}

/* The median over the profiled runs of CUPTI's kernel time, in place of the profile's. Where
 * CUPTI saw no kernel (a CPU row; or an ORT built with CUDA profiling took CUPTI's callbacks
 * over) the profile's own kernel events, if any, stay. */
static void cupti_summary(const cupti_runs *cr, size_t runs, oq_bench_profile *p)
{
    double n = oq_bench_median(cr->count, runs);
    if (!(n > 0)) return;
    p->kernel_events = (size_t)n;
    p->kernel_ms = oq_bench_median(cr->ms, runs);
    p->kernel_source = "cupti";
}

/* CUPTI collecting from before the profiled session's creation, whose own kernels are
 * then dropped by the first take. */
static oq_status cupti_begin(cupti_runs *cr, const oq_bench_opts *o, oq_bench_row *row, oq_err *err)
{
    *cr = (cupti_runs){o->cupti, NULL, NULL, &row->profile};
    row->profile.n_kernel_names = 0;
    if (!cr->c) return OQ_OK;
    cr->ms = calloc(o->profile_runs, sizeof *cr->ms);
    cr->count = calloc(o->profile_runs, sizeof *cr->count);
    if (!cr->ms || !cr->count) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return oq_cupti_enable(cr->c, 1, err);
}

/* Collection off (its error counts only when nothing failed before). */
static oq_status cupti_end(cupti_runs *cr, oq_status st, oq_err *err)
{
    if (!cr->c) return st;
    oq_status off = oq_cupti_enable(cr->c, 0, st ? NULL : err);
    return st ? st : off;
}

/* What ORT put in `scratch` (its profile) moved to `dir` and held as an output, its path into
 * *moved (NULL: none there), or removed (keep 0: the session failed, no row would name it); then
 * `scratch` removed. Held before the move, the file is in a held
 * place at every moment, whichever thread a signal comes to (the session's own threads take
 * them). */
static oq_status profile_move(const char *scratch, const char *dir, int keep, char **moved, oq_err *err)
{
    oq_status st = OQ_OK;
    DIR *d = opendir(scratch);
    for (struct dirent *e; d && (e = readdir(d));) {
        char to[PATH_MAX];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (!keep || *moved || st) { /* ORT makes one */
            unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        if (snprintf(to, sizeof to, "%s/%s", dir, e->d_name) >= (int)sizeof to)
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "%s/%s: path too long", dir, e->d_name);
        else if (oq_atomic_hold_output(to, 0), renameat(dirfd(d), e->d_name, AT_FDCWD, to)) {
            st = oq_err_write(err, to, errno);
            oq_output_release(to);
        } else if (!(*moved = strdup(to))) {
            st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
        if (st) unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d) closedir(d);
    rmdir(scratch);
    oq_output_release(scratch);
    return st;
}

/* ORT names its profile (STEM_<date>_<time>.json) and creates it as the session is made, and
 * writes it when profiling ends. The session is made with its prefix in a folder of our own,
 * held: a signal while it is made (seconds for a big model) removes the folder and what ORT put
 * in it. Made, the profile is moved to `dir` and held, so that a signal during the profiled runs
 * leaves no profile that no row names (it left an empty one). The signals wait only while the
 * folder is made and held (they waited for the whole making of the session: a Ctrl-C did
 * nothing until it was made). ORT writes the moved file (its stream stays open); *path: its
 * name in `dir`. */
static oq_status profiled_session(oq_runtime *rt, const oq_bench_model *m, oq_session_opts so, const char *dir,
                                  const char *stem, oq_session **s, char **path, oq_err *err)
{
    char scratch[PATH_MAX], prefix[PATH_MAX];
    *path = NULL;
    if (snprintf(scratch, sizeof scratch, "%s/.%s.XXXXXX", dir, stem) >= (int)sizeof scratch ||
        snprintf(prefix, sizeof prefix, "%s/%s", scratch, stem) >= (int)sizeof prefix)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: path too long", dir);
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    int made = mkdtemp(scratch) != NULL, saved = errno;
    if (made) oq_scratch_hold(scratch);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!made) return oq_err_write(err, scratch, saved);
    memcpy(prefix, scratch, strlen(scratch)); /* the folder's name mkdtemp made of the template */
    so.profile_prefix = prefix;
    oq_status st = new_session(rt, m, &so, s, err);
    oq_status moved = profile_move(scratch, dir, !st, path, st ? NULL : err);
    return st ? st : moved;
}

static oq_status profile_runs(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_model *m, oq_session_opts so,
                              size_t index, oq_bench_row *row, oq_err *err)
{
    char stem[32];
    const char *dir = o->profile_dir ? o->profile_dir : ".";
    snprintf(stem, sizeof stem, "profile_%03zu", index);
    oq_status st = o->profile_dir ? oq_mkdirs(o->profile_dir, err) : OQ_OK;
    oq_session *s = NULL;
    char *path = NULL;
    oq_bench_runner *r = NULL;
    cupti_runs cr = {0};
    if (!st) st = cupti_begin(&cr, o, row, err);
    if (!st) st = profiled_session(rt, m, so, dir, stem, &s, &path, err);
    if (!st) st = oq_bench_runner_create(s, m->n_in, m->in, o->io_binding, &r, err);
    double ms;
    size_t n, skip = 1 + o->warmup;
    if (!st && cr.c) st = oq_cupti_take(cr.c, &ms, &n, err);
    for (size_t i = 0; !st && i < skip + o->profile_runs; i++)
        st = profiled_run(r, &cr, i < skip ? SIZE_MAX : i - skip, err);
    st = cupti_end(&cr, st, err);
    oq_bench_runner_free(r);
    char *ended = s ? oq_session_end_profiling(s) : NULL; /* ORT's name of it, before the move */
    oq_session_free(s);
    if (!st && (!ended || !path)) st = oq_err_set(err, OQ_ERR_RUNTIME, "ORT wrote no profile for prefix %s/%s", dir, stem);
    if (!st) st = oq_bench_profile_read(path, o->profile_runs, &row->profile, err);
    if (!st && cr.c) cupti_summary(&cr, o->profile_runs, &row->profile);
    free(ended);
    free(path);
    free(cr.ms);
    free(cr.count);
    if (st) oq_err_prefix(err, "profile: ");
    return st;
}

/* ---- the row ---------------------------------------------------------------------------- */

/* Session, first run (checked by m->check, dispatch captured), warm-up, timed runs. */
/* *watched: the session was made with the routing lines on (it prints one at every Run). */
static oq_status run_first(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_model *m, const oq_session_opts *so,
                           oq_session **s, oq_bench_runner **r, oq_bench_row *row, int *watched, oq_err *err)
{
    dispatch_watch w;
    watch_begin(&w, row->variant.runtime);
    *watched = w.active;
    double a = oq_now_s();
    oq_status st = new_session(rt, m, so, s, err);
    if (!st) row->session_ms = 1e3 * (oq_now_s() - a);
    if (!st) st = oq_bench_runner_create(*s, m->n_in, m->in, o->io_binding, r, err);
    size_t n_out = 0;
    oq_tensor **outs = NULL;
    if (!st) {
        row->io = oq_bench_runner_io(*r);
        a = oq_now_s();
        st = oq_bench_runner_run_outputs(*r, &n_out, &outs, err);
        row->first_run_ms = 1e3 * (oq_now_s() - a);
    }
    watch_end(&w, row->kernel_observed, sizeof row->kernel_observed);
    if (!st && m->check) st = m->check(m->check_ctx, n_out, outs, row, err);
    oq_tensors_free(outs, n_out);
    return st;
}

void oq_bench_run_ort_row(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_model *m, size_t index,
                          oq_bench_row *row)
{
    oq_err e = {0};
    oq_bench_session vs;
    oq_session *s = NULL;
    oq_bench_runner *r = NULL;
    oq_status st = oq_bench_session_opts(o, &row->variant, &vs, &e);
    if (!st) oq_bench_row_peak_begin(row);
    int watched = 0;
    if (!st) st = run_first(rt, o, m, &vs.so, &s, &r, row, &watched, &e);
    /* the session still prints a routing line at every Run: after the first run's were read,
     * the rest go to /dev/null, not to the terminal */
    int saved = !st && watched ? oq_capture_mute(1) : -1;
    for (size_t i = 0; !st && i < o->warmup; i++) st = oq_bench_runner_run(r, &e);
    if (!st) st = timed(rt, o, m, &vs.so, r, row, &e);
    oq_capture_unmute(1, saved);
    if (!st) measure_after(row, r);
    if (!st) st = oq_stats_compute(row->samples_ms, row->n_samples, &row->stats, &e);
    oq_bench_runner_free(r);
    oq_session_free(s);
    if (!st && o->profile_runs) st = profile_runs(rt, o, m, vs.so, index, row, &e);
    if (st) oq_bench_row_fail(row, st, &e);
    if (st) explain_refusal(row, m, vs.so.ep);
}

/* A variant that ran but is wrong (over its dtype's tolerance, non-finite, padded rows not 0)
 * fails its row: its time is not the time of the function under test. */
void oq_bench_row_judge_accuracy(oq_bench_row *row)
{
    if (row->status != OQ_BENCH_OK || row->over_tol < 0 ||
        (row->over_tol == 0 && row->nan_count == 0 && row->inf_count == 0 && row->pad_nonzero == 0))
        return;
    row->status = OQ_BENCH_FAILED;
    /* the tolerance as given, and the error above atol however close (both printed 0.000977) */
    char err[32], rt[32], at[32];
    snprintf(row->error, sizeof row->error,
             "wrong output: max abs err %s against the float64 reference, %lld elements over tolerance "
             "(rtol %s, atol %s), %lld NaN, %lld Inf, %lld padded elements not 0",
             oq_real_over_str(row->max_abs_err, row->atol, 3, err, sizeof err), (long long)row->over_tol,
             oq_real_str(row->rtol, 6, rt, sizeof rt), oq_real_str(row->atol, 6, at, sizeof at),
             (long long)row->nan_count, (long long)row->inf_count, (long long)row->pad_nonzero);
}
