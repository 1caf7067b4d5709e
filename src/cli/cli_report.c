/* Human output shared by validate and replay: progress, the verdict table, the report. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ortqual/bench.h"
#include "ortqual/report.h"
#include "ortqual/validate.h"

#include "cli/cli.h"

int oq_cli_color(FILE *fp)
{
    const char *no = getenv("NO_COLOR"); /* https://no-color.org: set and not empty */
    return isatty(fileno(fp)) && !(no && *no);
}

/* "passed" in green, "failed" in red (others plain), padded to `width` columns. */
static void print_status(FILE *fp, const char *s, int width)
{
    int good = !strcmp(s, "passed") || !strcmp(s, "PASSED"), bad = !strcmp(s, "failed") || !strcmp(s, "FAILED") ||
                                                                     !strcmp(s, "error") || !strcmp(s, "not-run");
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
};

int oq_cli_parse_progress(const char *cmd, const char *s)
{
    static const char *const names[] = {"auto", "always", "never"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) return i;
    fprintf(stderr, "ortqual %s: --progress: '%s' is not auto, always or never\n", cmd, s);
    return -1;
}

static void progress_clear(struct oq_cli_progress *p)
{
    if (p->line_open) fputs("\r\033[K", stderr);
    p->line_open = 0;
}

void oq_cli_progress_line(void *ctx, const char *line)
{
    struct oq_cli_progress *p = ctx;
    if (p) progress_clear(p);
    fprintf(stderr, "%s\n", line);
}

static void duration(char *buf, size_t n, double s)
{
    if (s < 90) snprintf(buf, n, "%.0f s", s);
    else if (s < 5400) snprintf(buf, n, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
    else snprintf(buf, n, "%.0f h %02.0f min", floor(s / 3600), fmod(floor(s / 60), 60));
}

void oq_cli_progress_batch(void *ctx, const oq_validate_progress *b)
{
    struct oq_cli_progress *p = ctx;
    double t = now_s(), elapsed = t - p->start;
    if (p->mode == OQ_CLI_PROGRESS_NEVER || (p->mode == OQ_CLI_PROGRESS_AUTO && elapsed < QUIET_S)) return;
    if (!p->tty && p->mode == OQ_CLI_PROGRESS_AUTO && t - p->last < PLAIN_EVERY_S && b->batches_done < b->n_batches)
        return;
    /* Every configuration runs every batch: the work done so far in batches, of all. */
    double total = (double)b->n_configs * (double)b->n_batches;
    double done = (double)b->config * (double)b->n_batches + (double)b->batches_done;
    char el[32], eta[32];
    duration(el, sizeof el, elapsed);
    duration(eta, sizeof eta, done > 0 ? elapsed * (total - done) / done : 0);
    if (p->tty) fputs("\r\033[K", stderr);
    fprintf(stderr, "[%zu/%zu] %s  batch %zu/%zu  elapsed %s  ETA %s%s", b->config + 1, b->n_configs, b->config_name,
            b->batches_done, b->n_batches, el, eta, p->tty ? "" : "\n");
    fflush(stderr);
    p->line_open = p->tty;
    p->last = t;
}

/* Why a node missed its kernel and what reaches it: the first explanation, as
 * the others (one per node) usually repeat it for the next block. */
static void print_advice(const json_t *advice)
{
    size_t n = json_array_size(advice);
    if (!n) return;
    printf("    advice: %s", json_string_value(json_array_get(advice, 0)));
    if (n > 1) printf(" (%zu more in summary.json)", n - 1);
    putchar('\n');
}

/* Per-batch latency over the batches of a configuration: median and p90 of the batches'
 * median calls, and the first call of batch 0 (session warm-up included), in ms. */
static void batch_latency(const json_t *c, double *median, double *p90, double *first)
{
    const json_t *bs = json_object_get(c, "batches");
    double *v = calloc(json_array_size(bs) + 1, sizeof *v);
    size_t n = 0, i;
    json_t *b;
    *median = *p90 = *first = NAN;
    json_array_foreach(bs, i, b) {
        if (i == 0) *first = json_number_value(json_object_get(b, "first_call_s")) * 1e3;
        if (v && json_is_number(json_object_get(b, "median_s")))
            v[n++] = json_number_value(json_object_get(b, "median_s")) * 1e3;
    }
    oq_bench_stats st;
    if (n && oq_bench_stats_compute(v, n, &st, NULL) == OQ_OK) {
        *median = st.p50;
        *p90 = st.p90;
    }
    free(v);
}

static void ms(char *buf, size_t n, double v)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, v < 10 ? "%.3f" : v < 1000 ? "%.1f" : "%.0f", v);
}

/* The worst output of a configuration across batches, and its timing. */
static void config_row(const json_t *c)
{
    double worst = -1, med, p90, first;
    const char *worst_out = "-";
    size_t i, j;
    json_t *b, *o;
    json_array_foreach(json_object_get(c, "batches"), i, b) {
        json_array_foreach(json_object_get(b, "outputs"), j, o) {
            double m = json_number_value(json_object_get(o, "max_abs"));
            if (m > worst) worst = m, worst_out = json_string_value(json_object_get(o, "output"));
        }
    }
    batch_latency(c, &med, &p90, &first);
    char err_s[32] = "-", m_s[32], p_s[32], f_s[32];
    if (worst >= 0) snprintf(err_s, sizeof err_s, "%.3g", worst);
    ms(m_s, sizeof m_s, med);
    ms(p_s, sizeof p_s, p90);
    ms(f_s, sizeof f_s, first);
    size_t nb = json_array_size(json_object_get(c, "batches"));
    printf("%-34s ", json_string_value(json_object_get(c, "name")));
    print_status(stdout, json_string_value(json_object_get(c, "status")), 8);
    printf(" %7zu %-10s %10s %10s %10s %10s\n", nb, worst_out ? worst_out : "-", err_s, m_s, p_s, f_s);
    const char *ort = json_string_value(json_object_get(json_object_get(c, "onnxruntime"), "version"));
    if (ort) printf("    ONNX Runtime %s (%s)\n", ort, json_string_value(json_object_get(json_object_get(c, "onnxruntime"), "library")));
    size_t k;
    json_t *ep;
    json_array_foreach(json_object_get(json_object_get(c, "placement"), "eps"), k, ep)
        printf("    profile: %-24s %4lld nodes %10.3f ms\n", json_string_value(json_object_get(ep, "ep")),
               (long long)json_integer_value(json_object_get(ep, "nodes")),
               json_number_value(json_object_get(ep, "us")) / 1000.0);
    const char *reason = json_string_value(json_object_get(c, "reason"));
    if (reason) printf("    %s\n", reason);
    print_advice(json_object_get(json_object_get(c, "dispatch"), "advice"));
}

void oq_cli_print_verdict_table(const json_t *summary, const char *outdir)
{
    printf("%-34s %-8s %7s %-10s %10s %10s %10s %10s\n", "configuration", "status", "batches", "worst out",
           "max|err|", "median ms", "p90 ms", "first ms");
    size_t i;
    json_t *c;
    int counts[4] = {0};
    json_array_foreach(json_object_get(summary, "configs"), i, c) {
        config_row(c);
        const char *s = json_string_value(json_object_get(c, "status"));
        counts[!strcmp(s, "passed") ? 0 : !strcmp(s, "skipped") ? 2 : 1]++;
    }
    size_t nplots = json_array_size(json_object_get(summary, "plots"));
    const char *perr = json_string_value(json_object_get(summary, "plot_error"));
    if (nplots) printf("\nplots: %zu files in %s/plots/ (error distributions, error against |reference|, latency)", nplots, outdir);
    if (perr) printf("\nplots: not drawn: %s", perr);
    printf("\n(latency per batch: median and p90 over batches of each batch's median call; first: batch 0's first call)");
    printf("\nreport: %s/report.html\nverdict: ", outdir);
    print_status(stdout, counts[1] ? "FAILED" : "PASSED", 0);
    printf(" (%d passed, %d failed, %d skipped); details in %s/summary.json\n", counts[0], counts[1], counts[2], outdir);
}


void oq_cli_default_outdir(char *buf, size_t n, const char *prefix)
{
    char stamp[64];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, n, "ortqual-out/%s%s", prefix, stamp);
}

/* report.html beside summary.json (a diagnostic: a failure is said, not fatal) and the
 * JUnit XML asked for (fatal: CI reads it). */
static int write_reports(const char *cmd, const json_t *summary, const char *outdir, const char *junit)
{
    oq_err e = {0};
    if (oq_report_write_dir(outdir, &e)) fprintf(stderr, "ortqual %s: report.html not written: %s\n", cmd, e.msg);
    if (!junit) return OQ_EXIT_OK;
    char name[4096];
    snprintf(name, sizeof name, "%s/summary.json", outdir);
    if (oq_junit_write(summary, name, junit, &e) == OQ_OK) return OQ_EXIT_OK;
    fprintf(stderr, "ortqual %s: --junit: %s\n", cmd, e.msg);
    return OQ_EXIT_RUNTIME;
}

int oq_cli_run_validation(const char *cmd, oq_validate_opts *o, const struct oq_cli_runtime *cr,
                          const char *self, const struct oq_cli_run_output *out)
{
    struct oq_cli_progress prog = {out->progress, isatty(2), now_s(), now_s(), 0};
    o->self_exe = self;
    o->progress = oq_cli_progress_line;
    o->progress_ctx = &prog;
    o->on_batch = out->progress == OQ_CLI_PROGRESS_NEVER ? NULL : oq_cli_progress_batch;
    o->ort_lib = cr->ort_lib;
    o->n_ep_libs = cr->n_ep_libs;
    o->ep_lib_names = (const char *const *)cr->ep_lib_names;
    o->ep_lib_paths = (const char *const *)cr->ep_lib_paths;
    o->n_ep_options = cr->n_options;
    o->ep_option_keys = (const char *const *)cr->option_keys;
    o->ep_option_values = (const char *const *)cr->option_values;
    json_t *summary = NULL;
    int verdict = 0;
    oq_err e = {0};
    oq_status st = oq_validate_run(o, &summary, &verdict, &e);
    progress_clear(&prog);
    if (st) {
        fprintf(stderr, "ortqual %s: %s\n", cmd, e.msg);
        return st == OQ_ERR_RUNTIME || st == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
    }
    int rc = write_reports(cmd, summary, o->outdir, out->junit);
    if (out->json) json_dumpf(summary, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER), putchar('\n');
    else oq_cli_print_verdict_table(summary, o->outdir);
    json_decref(summary);
    return rc ? rc : verdict ? OQ_EXIT_FAIL : OQ_EXIT_OK;
}
