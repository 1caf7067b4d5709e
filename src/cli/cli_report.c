/* Human output shared by validate and replay: progress, the verdict table, the reports. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ortqual/fileio.h"
#include "ortqual/plot.h"
#include "ortqual/report.h"
#include "ortqual/stats.h"
#include "ortqual/validate.h"

#include "cli.h"
#include "cli_signals.h"
#include "ortqual/compare.h"

int oq_cli_padding(const oq_opt *o, const char *arg)
{
    static const char *const words[] = {"report", "zero", "auto"};
    static const int rules[] = {OQ_PADDING_REPORT, OQ_PADDING_ZERO, -1};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strcmp(arg, words[i])) {
            *(int *)o->ctx = rules[i];
            return 0;
        }
    oq_cli_error("--padding: '%s' is not auto, zero or report", arg);
    return -1;
}

/* An axis number of `s` (0..INT32_MAX, digits only), "none" where `none` is allowed. */
static int axis_of(const char *s, int none, int32_t *axis)
{
    char *end = NULL;
    if (none && !strcmp(s, "none")) return *axis = OQ_SEQ_AXIS_NONE, 1;
    long v = *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (v < 0 || v > INT32_MAX || *end) return 0;
    *axis = (int32_t)v;
    return 1;
}

/* OUTPUT=AXIS or OUTPUT=AXIS,batch=AXIS (a sequence-first output names its batch axis too).
 * The last '=' splits: an output's name may hold one, an axis never does; ",batch=AXIS" at the
 * end, after an '=', is the batch axis (an output named "x,batch" is still x,batch=1). */
int oq_cli_seq_axis(const oq_opt *o, const char *arg)
{
    struct oq_cli_seq_axes *s = o->ctx;
    const char *eq = strrchr(arg, '='), *seq_eq = NULL;
    oq_seq_axis a = {0};
    int ok = eq && eq != arg;
    if (ok && eq - arg > 6 && !strncmp(eq - 6, ",batch", 6)) { /* NAME=AXIS,batch=AXIS */
        for (const char *p = arg; p < eq - 6; p++)
            if (*p == '=') seq_eq = p;
        a.batch_said = seq_eq != NULL;
    }
    if (a.batch_said) {
        char *axis = strndup(seq_eq + 1, (size_t)(eq - 6 - seq_eq - 1));
        ok = axis && seq_eq != arg && axis_of(axis, 0, &a.axis) && axis_of(eq + 1, 0, &a.batch);
        free(axis);
    } else if (ok) {
        ok = axis_of(eq + 1, 1, &a.axis);
    }
    if (!ok) {
        oq_cli_error("--seq-axis '%s': want OUTPUT=AXIS (an axis number from 0, or none), or OUTPUT=AXIS,batch=AXIS",
                     arg);
        return -1;
    }
    char *name = strndup(arg, (size_t)((seq_eq ? seq_eq : eq) - arg));
    oq_seq_axis *v = name ? realloc(s->v, (s->n + 1) * sizeof *v) : NULL;
    if (!v) {
        free(name);
        oq_cli_error("out of memory");
        return -1;
    }
    s->v = v;
    a.output = name;
    s->v[s->n++] = a;
    return 0;
}

void oq_cli_seq_axes_clear(struct oq_cli_seq_axes *s)
{
    for (size_t i = 0; i < s->n; i++) free((char *)s->v[i].output);
    free(s->v);
    memset(s, 0, sizeof *s);
}

int oq_cli_color(FILE *fp)
{
    const char *no = getenv("NO_COLOR"); /* https://no-color.org: set and not empty */
    return isatty(fileno(fp)) && !(no && *no);
}

/* "passed" in green, "failed" in red (others plain), padded to `width` columns. */
static void print_status(FILE *fp, const char *s, int width)
{
    static const char *const bad_words[] = {"failed", "FAILED", "error", "ERROR", "not-run", "NOT TESTED", "INTERRUPTED"};
    int good = !strcmp(s, "passed") || !strcmp(s, "PASSED"), bad = 0;
    for (size_t i = 0; i < sizeof bad_words / sizeof *bad_words; i++) bad |= !strcmp(s, bad_words[i]);
    int color = oq_cli_color(fp) && (good || bad);
    fprintf(fp, "%s%-*s%s", color ? (good ? "\033[32m" : "\033[1;31m") : "", width, s, color ? "\033[0m" : "");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Progress on stderr: one updating line on a terminal, plain lines (at most one every
 * PLAIN_EVERY_S) otherwise; nothing during the first QUIET_S of a run unless asked. */
#define QUIET_S 3.0
#define PLAIN_EVERY_S 5.0

struct oq_cli_progress {
    int mode;   /* OQ_CLI_PROGRESS_* */
    int tty;
    double start, last;
    int line_open; /* an updating line is on the terminal */
    oq_cli_eta eta;
    const char *note; /* oq_cli_run_output's, until said */
};

int oq_cli_progress_option(const oq_opt *o, const char *arg)
{
    static const char *const names[] = {"auto", "always", "never"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(arg, names[i])) {
            *(int *)o->ctx = i;
            return 0;
        }
    oq_cli_error("--progress: '%s' is not auto, always or never", arg);
    return -1;
}

static void progress_clear(struct oq_cli_progress *p)
{
    if (p->line_open) fputs("\r\033[K", stderr);
    p->line_open = 0;
}

/* The note held back until the run goes on (an input error is then the one line said). */
static void note_flush(struct oq_cli_progress *p)
{
    if (p->note) fputs(p->note, stderr);
    p->note = NULL;
}

void oq_cli_progress_line(void *ctx, const char *line)
{
    struct oq_cli_progress *p = ctx;
    if (p) progress_clear(p);
    if (p) note_flush(p);
    fprintf(stderr, "%s\n", oq_cli_shown(line));
}

static void duration(char *buf, size_t n, double s)
{
    if (s < 90) snprintf(buf, n, "%.0f s", s);
    else if (s < 5400) snprintf(buf, n, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
    else snprintf(buf, n, "%.0f h %02.0f min", floor(s / 3600), fmod(floor(s / 60), 60));
}

/* Whether a report at time t is shown: never, not in the first seconds (auto), at most every
 * `gap` seconds, and off a terminal (auto) only every few seconds; the last always. */
static int progress_due(const struct oq_cli_progress *p, double t, int last_one, double gap)
{
    if (p->mode == OQ_CLI_PROGRESS_NEVER || (p->mode == OQ_CLI_PROGRESS_AUTO && t - p->start < QUIET_S)) return 0;
    if (last_one) return 1;
    if (!p->tty && p->mode == OQ_CLI_PROGRESS_AUTO) return t - p->last >= PLAIN_EVERY_S;
    return t - p->last >= gap;
}

/* "WHAT  batch N/M  elapsed E[  ETA L]" (L < 0: none yet), over the open line on a terminal. */
static void progress_show(struct oq_cli_progress *p, double t, const char *what, size_t done, size_t n, double left)
{
    char el[32], eta[120] = "", d[32];
    duration(el, sizeof el, t - p->start);
    if (left >= 0) { /* none until a pace is measured, the reference's alone while it runs */
        duration(d, sizeof d, left);
        snprintf(eta, sizeof eta, "  ETA %s%s", d,
                 p->eta.partial ? " of this configuration; the rest after the next one's first batches" : "");
    }
    if (p->tty) fputs("\r\033[K", stderr);
    note_flush(p); /* said before any progress, as before the first configuration's line */
    fprintf(stderr, "%s  batch %zu/%zu  elapsed %s%s%s", oq_cli_shown(what), done, n, el, eta, p->tty ? "" : "\n");
    fflush(stderr);
    p->line_open = p->tty;
    p->last = t;
}

void oq_cli_progress_batch(void *ctx, const oq_validate_progress *b)
{
    struct oq_cli_progress *p = ctx;
    double t = now_s();
    /* every report measures the pace, shown or not */
    double left = oq_cli_eta_update(&p->eta, b->config, b->n_configs, b->batches_done, b->n_batches, t);
    /* a worker reports up to ten times a second: each shown on a terminal */
    if (!progress_due(p, t, b->batches_done >= b->n_batches, 0)) return;
    char what[300];
    snprintf(what, sizeof what, "[%zu/%zu] %s", b->config + 1, b->n_configs, b->config_name);
    progress_show(p, t, what, b->batches_done, b->n_batches, left);
}

void oq_cli_progress_prepare(void *ctx, size_t done, size_t n)
{
    struct oq_cli_progress *p = ctx;
    double t = now_s();
    /* a batch can take microseconds: ten updates a second on a terminal, a line a second off one */
    if (!progress_due(p, t, done >= n, p->tty ? 0.1 : 1.0)) return;
    /* the preparation's own pace: it starts with the run */
    double left = done && t - p->start >= 1.0 ? (t - p->start) / (double)done * (double)(n - done) : -1;
    progress_show(p, t, "preparing inputs", done, n, left);
}

/* Why a node missed its kernel and what reaches it: the first explanation, as
 * the others (one per node) usually repeat it for the next block. */
static void print_advice(const oq_dispatch_result *d)
{
    if (!d->n_advice) return;
    printf("    advice: %s", oq_cli_shown(d->advice[0]));
    if (d->n_advice > 1) printf(" (%zu more in summary.json)", d->n_advice - 1);
    putchar('\n');
}

/* A runtime refusal: the node, its inputs, why, the fix (ORT's own message is in summary.json). */
static void print_refusal(const oq_refusal *r)
{
    if (!r->id) return;
    if (r->inputs) printf("    inputs: %s\n", oq_cli_shown(r->inputs));
    if (r->why) printf("    why: %s\n", oq_cli_shown(r->why));
    if (r->fix) printf("    fix: %s\n", oq_cli_shown(r->fix));
    printf("    (ONNX Runtime's message: refusal.raw in summary.json)\n");
}

/* Outputs whose padding was not zero and not judged (the reference is not zero there either, or
 * --padding report): said once per output, over its batches, with the first batch that shows it. */
static void print_padding_notes(const oq_config_result *c)
{
    for (size_t i = 0; i < c->n_outputs; i++) {
        const oq_output_result *r = &c->outputs[i];
        const oq_compare_result *o = &r->all;
        int unjudged = o->padding_rule == OQ_PADDING_REPORT ||
                       (o->padding_rule == OQ_PADDING_AS_REFERENCE && o->ref_pad_nonzero); /* in some batch */
        if (!o->masked || !o->pad_nonzero || !unjudged) continue;
        printf("    padding: %s has %lld of %lld padded elements non-zero (first in batch %lld), reported, not judged: %s\n",
               oq_cli_shown(o->name), (long long)o->pad_nonzero, (long long)o->num_padded, (long long)r->first_pad_nonzero_batch,
               o->padding_rule == OQ_PADDING_REPORT ? "--padding report" : "the reference is not zero there");
    }
}

/* How many of the reference's batches the cache gave, and an entry found bad; a group's shared
 * cache (`group`, NULL: none) said whatever it gave. */
static const char *j_str(const json_t *j, const char *key, const char *none);

/* ", N written by other members: bob (2), ..." from the reference's cache_writers. */
static void print_writers(const json_t *writers)
{
    size_t i, sum = 0;
    json_t *v;
    json_array_foreach(writers, i, v) sum += (size_t)json_integer_value(json_object_get(v, "entries"));
    printf(", %zu written by other members%s", sum, sum ? ":" : "");
    json_array_foreach(writers, i, v) {
        json_int_t n = json_integer_value(json_object_get(v, "entries"));
        if (n) printf(" %s (%lld)", oq_cli_shown(j_str(v, "user", "?")), (long long)n);
    }
}

/* Each other writer's spot check: the batch recomputed and what it showed. */
static void print_spot_checks(const json_t *writers)
{
    size_t i;
    json_t *v;
    json_array_foreach(writers, i, v) {
        const json_t *sc = json_object_get(v, "spot_check");
        printf("    spot check of %s's entries: batch %lld recomputed: %s\n", oq_cli_shown(j_str(v, "user", "?")),
               (long long)json_integer_value(json_object_get(sc, "batch")), oq_cli_shown(j_str(sc, "result", "?")));
    }
}

static void print_cache(const oq_config_result *c, const char *group)
{
    const oq_batch_totals *t = &c->totals;
    json_t *writers = c->cache_writers ? json_loads(c->cache_writers, 0, NULL) : NULL;
    if (t->cached || c->cache_warning || group) {
        printf("    reference: %zu of %zu batches from cache%s%s", t->cached, t->n, group ? ", a cache shared by group " : "",
               group ? oq_cli_shown(group) : "");
        if (json_array_size(writers)) print_writers(writers);
        printf("\n");
    }
    print_spot_checks(writers);
    if (c->cache_warning) printf("    warning: %s\n", oq_cli_shown(c->cache_warning));
    json_decref(writers);
}

static void ms(char *buf, size_t n, double v)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, v < 10 ? "%.3f" : v < 1000 ? "%.1f" : "%.0f", v);
}

/* ", graph optimizations LEVEL" when --graph-opt-level or a session.graph_optimization_level entry
 * chose them, as the worker recorded the level ORT ran; an entry overrides the option (both said). */
/* ", intra-op thread affinities 1;2 (...)" where an entry gave them (ORT's default count is in
 * summary.json and report.html: said on every run's line it would be noise). */
static void affinities_note(const json_t *ran, char *buf, size_t n)
{
    size_t at = strlen(buf);
    if (*j_str(ran, "thread_affinities", ""))
        snprintf(buf + at, n - at, ", intra-op thread affinities %s (session.intra_op_thread_affinities)",
                 oq_cli_shown(j_str(ran, "thread_affinities", "")));
}

/* ", intra-op threads 2, from --session-config session.intra_op_num_threads, over --threads 1" and
 * the like for the execution mode, where an entry set what ORT ran with (the worker's record). */
static void threads_note(const json_t *ran, char *buf, size_t n)
{
    static const char *const notes[][3] = {
        {"threads", "intra-op threads", "session.intra_op_num_threads, over --threads"},
        {"execution_mode", "execution mode", "session.execution_mode, over the sequential default"},
    };
    *buf = '\0';
    for (size_t i = 0; i < sizeof notes / sizeof *notes; i++) {
        char from[32];
        snprintf(from, sizeof from, "%s_from", notes[i][0]);
        if (strcmp(j_str(ran, from, ""), "session_config")) continue;
        const json_t *v = json_object_get(ran, notes[i][0]);
        size_t at = strlen(buf);
        if (json_is_string(v))
            snprintf(buf + at, n - at, ", %s %s, from --session-config %s", notes[i][1], json_string_value(v),
                     notes[i][2]);
        else
            snprintf(buf + at, n - at, ", %s %lld, from --session-config %s %lld", notes[i][1],
                     (long long)json_integer_value(v), notes[i][2],
                     (long long)json_integer_value(json_object_get(ran, "threads_option")));
    }
    affinities_note(ran, buf, n);
}

static const char *graph_opt_note(const oq_config_result *c, char *buf, size_t n)
{
    static const char *const names[] = {"off", "basic", "extended", "layout"};
    json_t *ev = c->evidence_json ? json_loads(c->evidence_json, 0, NULL) : NULL, *ran = json_object_get(ev, "graph_opt");
    int level = json_is_integer(json_object_get(ran, "level")) ? (int)json_integer_value(json_object_get(ran, "level"))
                                                               : oq_graph_opt_level(c->graph_opt);
    int entry = !strcmp(j_str(ran, "from", ""), "session_config");
    int option = (int)json_integer_value(json_object_get(ran, "option"));
    *buf = '\0';
    if (level >= 0)
        snprintf(buf, n, ", graph optimizations %s (level %d)%s", level <= 3 ? names[level] : "all", level,
                 entry ? ", from --session-config " : "");
    if (entry)
        snprintf(buf + strlen(buf), n - strlen(buf), "session.graph_optimization_level, over --graph-opt-level%s%d",
                 option < 0 ? "'s default " : " ", option < 0 ? 99 : option);
    threads_note(json_object_get(ev, "session_threads"), buf + strlen(buf), n - strlen(buf));
    json_decref(ev);
    return buf;
}

/* Who saved the outputs the `expected` reference is made of (their provenance), and whether the
 * ORT under test (`ran`, NULL: none ran) is another build. */
static const char *j_str(const json_t *j, const char *key, const char *none)
{
    const char *v = json_string_value(json_object_get(j, key));
    return v ? v : none;
}

static void print_saved_by(const oq_config_result *c, const oq_config_result *ran)
{
    json_t *j = c->saved_by ? json_loads(c->saved_by, 0, NULL) : NULL;
    if (!j) return;
    const char *version = j_str(j, "ort_version", "?"), *sha = j_str(j, "ort_library_sha256", "");
    printf("    saved by ONNX Runtime %s (%s%s%.12s) as %s on %s\n", oq_cli_shown(version),
           oq_cli_shown(j_str(j, "ort_library", "?")), *sha ? ", sha256 " : "", sha,
           oq_cli_shown(j_str(j, "config", "?")), oq_cli_shown(j_str(j, "provider", "?")));
    if (ran && json_is_false(json_object_get(j, "same_ort")))
        printf("    note: saved by ONNX Runtime %s, replayed on %s (%s): another build\n", oq_cli_shown(version),
               oq_cli_shown(ran->ort_version), oq_cli_shown(ran->ort_library));
    json_decref(j);
}

/* The worst output of a configuration across batches, and its timing. */
/* The warnings of the evidence the configuration's worker recorded (more than one ONNX Runtime
 * core mapped): in summary.json, and said where the row is read. */
static void print_evidence_warnings(const oq_config_result *c)
{
    json_t *ev = c->evidence_json ? json_loads(c->evidence_json, 0, NULL) : NULL;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(ev, "warnings"), i, w)
        if (json_is_string(w)) printf("    WARNING: %s\n", oq_cli_shown(json_string_value(w)));
    json_decref(ev);
}

/* Outputs that judged no value (every valid element an infinity both sides hold, or none), each said:
 * the row's max|err| leaves them out, as 0 would read as an error of 0. */
static void print_not_compared(const oq_config_result *c)
{
    for (size_t j = 0; j < c->n_outputs; j++) {
        const oq_compare_result *r = &c->outputs[j].all;
        char said[200];
        if (oq_compare_judged_nothing(r))
            printf("    output '%s': %s\n", oq_cli_shown(r->name),
                   oq_compare_not_compared_str(said, sizeof said, (long long)r->num_valid, "the reference"));
    }
}

static void config_row(const oq_config_result *c, const char *group)
{
    double worst = -1, med, p90, first;
    const char *worst_out = "-";
    for (size_t j = 0; j < c->n_outputs; j++) { /* each output over every batch: nan, inf, then the largest */
        const oq_compare_result *r = &c->outputs[j].all;
        if (oq_compare_judged_nothing(r)) continue; /* its max_abs 0 is no error: said below the row */
        if (oq_compare_max_abs_worse(r->max_abs, worst)) worst = r->max_abs, worst_out = r->name;
    }
    med = c->totals.median_p50_s * 1e3, p90 = c->totals.median_p90_s * 1e3, first = c->totals.first_call_s * 1e3;
    if (!c->totals.n) med = p90 = first = NAN; /* no batch ran (not run, crashed): nothing timed, not 0 ms */
    char err_s[32] = "-", m_s[32], p_s[32], f_s[32];
    if (!(worst < 0)) snprintf(err_s, sizeof err_s, "%.3g", worst); /* "nan", "inf" as printf writes them */
    ms(m_s, sizeof m_s, med);
    ms(p_s, sizeof p_s, p90);
    ms(f_s, sizeof f_s, first);
    printf("%-34s ", oq_cli_shown(c->config.name));
    print_status(stdout, oq_verdict_name(c->status), 9);
    printf(" %7zu %-10s %10s %10s %10s %10s\n", c->totals.n, oq_cli_shown(worst_out), err_s, m_s, p_s, f_s);
    char note[512];
    if (c->ort_version)
        printf("    ONNX Runtime %s (%s)%s\n", oq_cli_shown(c->ort_version), oq_cli_shown(c->ort_library),
               graph_opt_note(c, note, sizeof note));
    print_evidence_warnings(c);
    const oq_placement *p = c->placement.placement;
    for (size_t k = 0; p && k < p->n_eps; k++)
        printf("    profile: %-24s %4lld nodes %10.3f ms\n", oq_cli_shown(p->eps[k].ep), (long long)p->eps[k].nodes,
               p->eps[k].us / 1000.0);
    if (c->reason) printf("    %s\n", oq_cli_shown(c->reason));
    print_not_compared(c);
    print_cache(c, group);
    print_refusal(&c->refusal);
    print_padding_notes(c);
    print_advice(&c->dispatch);
}

/* What the drawn figures show, from the kinds recorded as they were drawn (a name cannot say:
 * error_vs_ref_x is the error distribution of an output "vs_ref_x" as well as error against
 * |reference| of "x"): a run that compared nothing draws only the latency. */
static void plot_kinds(const oq_validate_summary *s, char *buf, size_t n)
{
    static const struct {
        oq_figure_kind kind;
        const char *what;
    } kinds[] = {{OQ_FIGURE_ERROR, "error distributions"}, {OQ_FIGURE_ERROR_VS_REF, "error against |reference|"},
                 {OQ_FIGURE_RUNTIME_VALID_SIZE, "latency"}, {OQ_FIGURE_PLACEMENT, "placement"}};
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && len < n; i++)
        if (s->plot_kinds & (1u << kinds[i].kind))
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", kinds[i].what);
}

/* Configurations that ran on several ONNX Runtime builds (a campaign split by configuration):
 * each build once, with the configurations it ran (each row names its own, and no line of a
 * run on one build names another). */
static void print_ort_builds(const oq_validate_summary *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_configs; i++) n += oq_validate_ort_build_of(s, i) == &s->configs[i];
    if (n < 2) return;
    printf("\nONNX Runtime: %zu builds ran (summary.json: evidence.onnxruntime_builds)", n);
    for (size_t i = 0; i < s->n_configs; i++) {
        const oq_config_result *b = &s->configs[i];
        if (oq_validate_ort_build_of(s, i) != b) continue;
        printf("\n    %s (%s, SHA-256 %.12s):", oq_cli_shown(b->ort_version), oq_cli_shown(b->ort_library),
               *b->ort_library_sha256 ? b->ort_library_sha256 : "not recorded");
        for (size_t k = i, said = 0; k < s->n_configs; k++)
            if (oq_validate_ort_build_of(s, k) == b) printf("%s %s", said++ ? "," : "", oq_cli_shown(s->configs[k].config.name));
    }
}

void oq_cli_print_verdict_table(const oq_validate_summary *s, const char *outdir)
{
    printf("%-34s %-9s %7s %-10s %10s %10s %10s %10s\n", "configuration", "status", "batches", "worst out",
           "max|err|", "median ms", "p90 ms", "first ms");
    int counts[OQ_VERDICT_REFERENCE + 1] = {0};
    const oq_config_result *ref = NULL;
    const oq_config_result *ran = NULL; /* the first configuration that ran ORT */
    for (size_t i = 1; i < s->n_configs && !ran; i++)
        if (s->configs[i].ort_version) ran = &s->configs[i];
    for (size_t i = 0; i < s->n_configs; i++) {
        config_row(&s->configs[i], i == 0 && s->cache_shared ? s->cache_group : NULL);
        print_saved_by(&s->configs[i], ran);
        /* the counts are of the configurations under test, as report.html's */
        if (s->configs[i].is_reference) ref = ref ? ref : &s->configs[i];
        else counts[s->configs[i].status]++;
    }
    print_ort_builds(s);
    if (s->n_plots) {
        char kinds[96];
        plot_kinds(s, kinds, sizeof kinds);
        printf("\nplots: %zu files in %s/plots/ (%s)", s->n_plots, oq_cli_shown(outdir), kinds);
    }
    if (s->plot_error) printf("\nplots: not drawn: %s", oq_cli_shown(s->plot_error));
    else if (s->plotted && !s->n_plots) printf("\nplots: none: no output was compared and no batch was timed");
    printf("\n(latency per batch: median and p90 over batches of each batch's median call; first: batch 0's first call)");
    printf("\nreport: %s/report.html\nverdict: ", oq_cli_shown(outdir));
    static const char *const words[] = {"PASSED", "FAILED", "ERROR", "NOT TESTED", "INTERRUPTED"};
    print_status(stdout, words[s->verdict], 0);
    printf(" (%d passed, %d failed, %d skipped", counts[OQ_VERDICT_PASSED], counts[OQ_VERDICT_FAILED],
           counts[OQ_VERDICT_SKIPPED]);
    if (counts[OQ_VERDICT_ERROR]) printf(", %d runtime error%s", counts[OQ_VERDICT_ERROR], counts[OQ_VERDICT_ERROR] > 1 ? "s" : "");
    if (counts[OQ_VERDICT_NOT_RUN]) printf(", %d not run", counts[OQ_VERDICT_NOT_RUN]);
    if (ref) printf("; reference %s%s%s", oq_cli_shown(ref->config.name), ref->status == OQ_VERDICT_REFERENCE ? "" : ": ",
                    ref->status == OQ_VERDICT_REFERENCE ? "" : oq_verdict_name(ref->status));
    printf("); details in %s/summary.json\n", oq_cli_shown(outdir));
    if (s->verdict_reason) printf("%s%s\n", oq_cli_shown(s->verdict_reason),
                                  s->verdict == OQ_RUN_UNTESTED ? s->exit_status ? " (--allow-skip accepts that)"
                                                                                 : " (accepted by --allow-skip)"
                                                                : "");
}

/* A file as written, to stdout; a failure is said (with --json the error object quotes it). */
/* A failed write to stdout is not this function's to judge: main's check at exit says it once
 * and keeps a status that had failed already (usage.md), as for every other --json writer. */
static int print_file(const char *cmd, const char *path)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    if (!f) {
        oq_cli_error_in(cmd, "cannot read %s: %s", oq_cli_shown(path), strerror(errno));
        return -1;
    }
    size_t n;
    int wrote = 1;
    while (wrote && (n = fread(buf, 1, sizeof buf, f)) > 0) wrote = fwrite(buf, 1, n, stdout) == n;
    int read_err = ferror(f), err = errno;
    fclose(f);
    if (read_err) oq_cli_error_in(cmd, "cannot read %s: %s", oq_cli_shown(path), strerror(err));
    return read_err ? -1 : 0;
}

int oq_cli_glob_inputs(const char *cmd, const oq_cli_list *patterns, glob_t *g, int *globbed)
{
    for (size_t i = 0; i < patterns->n; i++) {
        if (glob(patterns->v[i], (*globbed ? GLOB_APPEND : 0) | GLOB_NOCHECK, NULL, g)) {
            oq_cli_error_in(cmd, "--inputs '%s': cannot expand", oq_cli_shown(patterns->v[i]));
            return -1;
        }
        *globbed = 1;
    }
    return 0;
}

static int made_parent; /* ortqual-out/ was made by oq_cli_default_outdir */

void oq_cli_default_outdir(char *buf, size_t n, const char *prefix)
{
    char stamp[64];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, n, "ortqual-out/%s%s", prefix, stamp);
    /* made here, exclusively: two runs started in the same second get two folders (-2, -3, ...);
     * a folder that cannot be made is left to the run, which says why */
    if (mkdir("ortqual-out", 0777) == 0) made_parent = 1;
    else if (errno != EEXIST) return;
    for (int k = 2; mkdir(buf, 0777) != 0 && errno == EEXIST && k < 1000; k++)
        snprintf(buf, n, "ortqual-out/%s%s-%d", prefix, stamp, k);
}

void oq_cli_default_outdir_drop(const char *dir)
{
    /* the run folder, and ortqual-out/ when this process made it: gone if left empty (a usage
     * error, --list-configs) */
    if (*dir && rmdir(dir) == 0 && made_parent) rmdir("ortqual-out");
}

/* report.html beside summary.json unless the run wrote it (a diagnostic: a failure is said,
 * not fatal) and the JUnit XML asked for (fatal: CI reads it). */
int oq_cli_write_reports(const char *cmd, const char *outdir, int report_written, const char *junit)
{
    oq_err e = {0};
    if (!report_written && oq_report_write_dir(outdir, &e))
        oq_cli_error_in(cmd, "report.html not written: %s", e.msg);
    if (!junit) return OQ_EXIT_OK;
    char summary[4096];
    if (snprintf(summary, sizeof summary, "%s/summary.json", outdir) >= (int)sizeof summary) {
        oq_cli_error_in(cmd, "--junit: %s/summary.json: path too long", oq_cli_shown(outdir));
        return OQ_EXIT_RUNTIME;
    }
    if (oq_junit_write_summary(summary, junit, &e) == OQ_OK) return OQ_EXIT_OK;
    oq_cli_error_in(cmd, "--junit: %s", e.msg);
    return OQ_EXIT_RUNTIME;
}

/* Ctrl-C, SIGTERM (a batch system's time limit) and SIGHUP (the terminal closed) stop a
 * validation: the signal is passed on to the running worker's process group (cli_signals.h) and
 * the library ends the run with a summary that says where it stopped (docs/reliability.md). */
static void catch_interruption(oq_validate_opts *o, oq_cli_signals *sigs)
{
    /* without isolation the configuration runs in this process, which never reads the flag:
     * Ctrl-C keeps its default and stops the run at once */
    if (!o->isolate) return;
    oq_cli_signals_catch(sigs);
    o->interrupt = oq_cli_signal_flag();
    o->on_worker = oq_cli_signals_started;
}

int oq_cli_output_ready(const char *cmd, const char *opt, const char *path, const char *outdir)
{
    oq_err e = {0};
    if (!path || (oq_cli_in_outdir(path, outdir) && access(outdir, F_OK) != 0) || !oq_check_output_path(path, 1, &e))
        return OQ_EXIT_OK;
    oq_cli_error_in(cmd, "%s: %s", opt, e.msg);
    return oq_cli_exit_of(e.status);
}

/* The folder of `path` into buf ("." for a bare name, "/" for one at the root), trailing slashes cut. */
static void parent_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    snprintf(buf, n, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    size_t k = strlen(buf);
    while (k > 1 && buf[k - 1] == '/') buf[--k] = 0;
    if (!k) snprintf(buf, n, "/");
}

int oq_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    if (strcmp(na ? na + 1 : a, nb ? nb + 1 : b)) return 0;
    char da[PATH_MAX], db[PATH_MAX];
    parent_of(a, da, sizeof da);
    parent_of(b, db, sizeof db);
    if (stat(da, &sa) == 0 && stat(db, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return !strcmp(da, db); /* a folder the run will make */
}

int oq_cli_clashes_outdir(const char *cmd, const char *opt, const char *path, const char *outdir,
                          const char *const *made, size_t n_made)
{
    if (!path || !outdir) return OQ_EXIT_OK;
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    char mine[PATH_MAX];
    snprintf(mine, sizeof mine, "%s/%s", outdir, name);
    for (size_t k = 0; k < n_made; k++)
        if (!fnmatch(made[k], name, 0) && oq_cli_same_file(path, mine)) {
            char outdir_name[PATH_MAX];
            size_t n = strlen(outdir);
            while (n > 1 && outdir[n - 1] == '/') n--; /* "runs/new/" names the folder "runs/new" */
            snprintf(outdir_name, sizeof outdir_name, "%.*s", (int)n, outdir);
            oq_cli_error_in(cmd, "%s %s is %s's %s: give another %s", opt, oq_cli_shown(path),
                    oq_cli_shown(outdir_name), oq_cli_shown(name), opt);
            return OQ_EXIT_USAGE;
        }
    return OQ_EXIT_OK;
}

int oq_cli_junit_in_run(const char *cmd, const char *junit, const char *outdir)
{
    static const char *const made[] = {"summary.json", "validate.csv", "report.html", "error.json", "started.json",
                                       "plots", "shards", "*.npz", "*.onnx", ".*"};
    return oq_cli_clashes_outdir(cmd, "--junit", junit, outdir, made, sizeof made / sizeof *made);
}

/* --junit names neither a file the run reads nor one it writes in its output folder: renamed
 * over it, the JUnit XML would replace the model under test or the run's evidence. */
static int junit_clash(const char *cmd, const char *junit, const oq_validate_opts *o)
{
    int rc = oq_cli_junit_in_run(cmd, junit, o->outdir);
    const char *one[2] = {o->model_path, o->weights_path}, *what[4] = {"--model", "--weights", "--inputs", "--expected"};
    for (int k = 0; !rc && k < 4; k++) {
        size_t n = k < 2 ? one[k] != NULL : k == 2 ? o->n_input_files : o->n_expected_files;
        const char *const *f = k < 2 ? &one[k] : k == 2 ? o->input_files : o->expected_files;
        for (size_t i = 0; !rc && i < n; i++)
            if (oq_cli_same_file(junit, f[i])) {
                oq_cli_error_in(cmd, "--junit %s is the %s file %s: give another --junit",
                        oq_cli_shown(junit), what[k], oq_cli_shown(f[i]));
                rc = OQ_EXIT_USAGE;
            }
    }
    return rc;
}

/* Each session config entry the ORT under test takes unchecked (a key the headers do not know,
 * passed to a newer ORT), said once before the run, as summary.json's evidence keeps it: that
 * ORT is loaded here for its version only for such a key, as oq_validate_run's check loads it. */
static void print_session_config_warnings(const char *cmd, const oq_validate_opts *o)
{
    for (size_t i = 0; i < o->n_session_configs; i++) {
        if (!oq_session_config_check(o->session_config_keys[i], o->session_config_values[i], NULL)) continue;
        oq_runtime *rt = NULL;
        if (oq_runtime_load(o->ort_lib, &rt, NULL)) return; /* the run refuses it, naming the library */
        oq_cli_session_config_warn(cmd, oq_runtime_version(rt), o->n_session_configs, o->session_config_keys,
                                   o->session_config_values);
        oq_runtime_free(rt);
        return;
    }
}

static int run_caught(const char *cmd, oq_validate_opts *o, const struct oq_cli_runtime *cr, const char *self,
                      const struct oq_cli_run_output *out)
{
    struct oq_cli_progress prog = {out->progress, isatty(2), now_s(), now_s(), 0, {0}, *out->note ? out->note : NULL};
    o->self_exe = self;
    o->on_worker_fork = oq_cli_crash_backtrace;
    /* the non-skippable mode can be switched on from the environment too (the library reads none) */
    const char *require = getenv("ORTQUAL_REQUIRE_DISPATCH");
    if (require && !strcmp(require, "1")) o->require_dispatch = 1;
    o->progress = oq_cli_progress_line;
    o->progress_ctx = &prog;
    o->on_batch = out->progress == OQ_CLI_PROGRESS_NEVER ? NULL : oq_cli_progress_batch;
    o->on_prepare = out->progress == OQ_CLI_PROGRESS_NEVER ? NULL : oq_cli_progress_prepare;
    o->ort_lib = cr->ort_lib;
    o->n_ep_libs = cr->n_ep_libs;
    o->ep_lib_names = (const char *const *)cr->ep_lib_names;
    o->ep_lib_paths = (const char *const *)cr->ep_lib_paths;
    o->n_ep_options = cr->n_options;
    o->ep_option_keys = (const char *const *)cr->option_keys;
    o->ep_option_values = (const char *const *)cr->option_values;
    o->n_session_configs = cr->n_session_configs;
    o->session_config_keys = (const char *const *)cr->session_config_keys;
    o->session_config_values = (const char *const *)cr->session_config_values;
    oq_validate_summary *summary = NULL;
    oq_err e = {0};
    print_session_config_warnings(cmd, o);
    oq_status st = oq_validate_run_noted(o, out->note_kinds, (const char *const *)out->note_texts, out->n_notes, &summary,
                                         &e);
    progress_clear(&prog);
    if (!st && prog.note) fputs(prog.note, stderr); /* a run that said nothing before */
    if (st) {
        int caught = oq_cli_signal_caught();
        int rc = oq_cli_refuse(cmd, out->json, st, e.msg, caught ? 128 + caught : oq_cli_exit_of(st));
        return o->shard.prepare ? rc : oq_cli_junit_refused(cmd, out->junit, st, e.msg, rc); /* stopped while preparing */
    }
    char dir[4096], path[4200];
    /* a shard's files are in DIR/shards/I; the prepare step's answer is DIR/shards/plan.json */
    if (o->shard.count && !o->shard.prepare) snprintf(dir, sizeof dir, "%s/shards/%d", o->outdir, (int)o->shard.index);
    else snprintf(dir, sizeof dir, "%s", o->outdir);
    snprintf(path, sizeof path, o->shard.prepare ? "%s/shards/plan.json" : "%s/summary.json", dir);
    int reports = o->shard.prepare ? OQ_EXIT_OK : oq_cli_write_reports(cmd, dir, summary->report_written, out->junit);
    int rc = reports ? reports : summary->exit_status;
    /* A signal the summary does not record came once its verdict was fixed (as summary.json was
     * written, or report.html after it): the run's record is whole and is what merge, report and
     * CI read, so its verdict stands, and the exit status is that verdict's; said, not hidden. */
    int caught = oq_cli_signal_caught();
    /* likewise a plan the library published whole (one it had not, it removed and refused) */
    int late = caught && !summary->interrupted.signal;
    if (out->json) {
        /* a failed --junit write is answered by the error object, not by the run's summary */
        if (reports || print_file(cmd, path)) rc = OQ_EXIT_RUNTIME;
        else oq_cli_json_answered();
    } else if (o->shard.prepare) {
        if (oq_cli_print_prepared(o->outdir)) rc = OQ_EXIT_RUNTIME;
    } else {
        oq_cli_print_verdict_table(summary, dir);
        /* a batch log's last line: "done" after an interruption read as success */
        if (o->shard.count && summary->interrupted.signal)
            printf("shard %d of %d interrupted (SIG%s): run it again, then ortqual merge %s\n", (int)o->shard.index,
                   (int)o->shard.count,
                   sigabbrev_np(summary->interrupted.signal) ? sigabbrev_np(summary->interrupted.signal) : "?",
                   oq_cli_shown(o->outdir));
        else if (o->shard.count)
            printf("shard %d of %d done; when all have ended: ortqual merge %s\n", (int)o->shard.index,
                   (int)o->shard.count, oq_cli_shown(o->outdir));
    }
    if (late)
        fprintf(out->json ? stderr : stdout, "interrupted by SIG%s after %s\n", sigabbrev_np(caught) ? sigabbrev_np(caught) : "?",
                o->shard.prepare ? "the plan was written (the plan stands)"
                                 : "the summary was written (verdict stands)");
    oq_validate_summary_free(summary);
    return rc;
}

/* The run with its signals caught, and put back once it has said everything. */
static int run_validation(const char *cmd, oq_validate_opts *o, const struct oq_cli_runtime *cr, const char *self,
                          const struct oq_cli_run_output *out)
{
    oq_cli_signals sigs = {0};
    catch_interruption(o, &sigs);
    int rc = run_caught(cmd, o, cr, self, out);
    oq_cli_signals_release(&sigs);
    return rc;
}

/* Whether the run loads ONNX Runtime by the default search, as the library's check of its
 * libraries does: the configurations under test without ort_lib, the reference's without
 * ort_lib and reference_ort_lib, or with reference_ort_lib "". */
static int loads_default_ort(const oq_validate_opts *o)
{
    int ref = o->n_configs && oq_config_uses_ort(&o->configs[0]), others = 0;
    for (size_t k = 1; k < o->n_configs; k++) others |= oq_config_uses_ort(&o->configs[k]);
    const char *ref_lib = o->reference_ort_lib;
    return (!o->ort_lib && (others || (ref && !ref_lib))) || (ref && ref_lib && !*ref_lib);
}

/* ORTQUAL_ORT_CUDA_DIR named a folder without libonnxruntime.so: that load would fail in the
 * library's words, "nothing else (ORTQUAL_ORT_LIB is set)", a variable the user did not set.
 * Said in ours, the variable and what to do, before anything is made. */
static int cuda_dir_refused(const char *cmd, const oq_validate_opts *o, int json)
{
    const char *problem = oq_cli_cuda_dir_problem();
    if (!problem || !loads_default_ort(o)) return OQ_EXIT_OK;
    return oq_cli_refuse(cmd, json, OQ_ERR_NOT_FOUND, problem, OQ_EXIT_RUNTIME);
}

int oq_cli_run_validation(const char *cmd, oq_validate_opts *o, const struct oq_cli_runtime *cr,
                          const char *self, const struct oq_cli_run_output *out)
{
    int rc = cuda_dir_refused(cmd, o, out->json);
    if (!rc && out->junit) rc = junit_clash(cmd, out->junit, o);
    if (!rc) rc = oq_cli_output_ready(cmd, "--junit", out->junit, o->outdir);
    if (rc) return rc;
    /* The shards of one split run at once, each in its own shards/I: each takes its own lock, and
     * the folder's shared with the others, so that a run that clears or rewrites the folder whole
     * (plain, --force, --prepare-shards, merge) is refused while any shard runs. */
    int shard = o->shard.count && !o->shard.prepare;
    char name[64];
    oq_shard_lock_name(o->shard.index, name, sizeof name);
    oq_outdir_lock *folder = NULL, *own = NULL;
    rc = shard ? oq_cli_outdir_lock_shared(cmd, o->outdir, out->junit, &folder)
               : oq_cli_outdir_lock(cmd, o->outdir, NULL, out->junit, &folder);
    if (!rc && shard) rc = oq_cli_outdir_lock(cmd, o->outdir, name, out->junit, &own);
    /* from here only the run's end writes --junit (its result or refusal): killed before, it
     * leaves "did not finish", never an earlier run's file (the prepare step writes none) */
    oq_err e = {0};
    if (!rc && !o->shard.prepare && oq_cli_junit_unfinished(cmd, out->junit, o->outdir, &e))
        rc = oq_cli_refuse(cmd, out->json, e.status, e.msg, OQ_EXIT_RUNTIME);
    if (!rc) rc = run_validation(cmd, o, cr, self, out);
    oq_outdir_lock_free(own);
    oq_outdir_lock_free(folder);
    return rc;
}
