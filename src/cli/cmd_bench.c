/* ortqual bench: attention scaling sweeps (latency, memory, accuracy) on ONNX Runtime. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/bench.h"
#include "ortqual/events.h"
#include "ortqual/fileio.h"

const char cmd_bench_summary[] = "time attention variants over batch sizes and lengths (latency, memory, error)";

#define MAX_LIST 64

static const char head[] =
    "usage: ortqual bench --variants LIST [options]\n"
    "\n"
    "Sweep attention-only (sdpa) models over batch sizes, sequence lengths, masked and\n"
    "unmasked inputs and export shapes. Every variant x shape is exported in memory, run\n"
    "once (timed apart as first_run_ms; its output is compared with the float64 C\n"
    "reference; on CUDA ORT's SdpaKernel routing lines are captured), warmed up, then\n"
    "timed --iters times (CLOCK_MONOTONIC around each Run, nothing else). Session\n"
    "creation is timed apart (session_ms) unless --include-session.\n"
    "Writes OUTDIR/summary.json (system, options, every row with raw samples) and\n"
    "OUTDIR/summary.csv (one row per variant x shape), and prints a table.\n";

static const char foot[] =
    "  (--ep is not used: each variant names its runtime; --ep-lib and --ep-option apply\n"
    "  to every non-CPU variant)\n"
    "\n"
    "exit status: 0 the sweep ran (rows may be skipped, unsupported or oom: expected\n"
    "outcomes of a scaling sweep); 1 some row failed otherwise; 2 usage; 3 runtime or\n"
    "output error.\n"
    "\n"
    "examples:\n"
    "  ortqual bench --variants ref,cpu:decomposed:fp32,cpu:attention24:fp32 \\\n"
    "      --seq-lens 256,1024,4096 --iters 10 --outdir cpu-bench\n"
    "  ortqual bench --variants cuda:attention24:fp16:flash,cuda:attention24:fp16:math \\\n"
    "      --seq-lens 512,2048,8192,16384 --io-binding device --outdir gpu-bench\n";

/* ---- option values -------------------------------------------------------------- */

typedef struct cli_state {
    oq_bench_opts o;
    int64_t batch_sizes[MAX_LIST], seq_lens[MAX_LIST];
    const char *outdir;
    int kv_given, quiet;
    struct oq_cli_runtime cr;
} cli_state;

/* --batch-sizes, --seq-lens: a comma list of whole numbers >= 1. */
static int set_list(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    int seq = !strcmp(opt->name, "seq-lens");
    int64_t *vals = seq ? c->seq_lens : c->batch_sizes;
    size_t *n = seq ? &c->o.n_seq_lens : &c->o.n_batch_sizes;
    char name[32];
    snprintf(name, sizeof name, "--%s", opt->name);
    if (seq) c->o.seq_lens = vals;
    else c->o.batch_sizes = vals;
    char *copy = strdup(s);
    if (!copy) return -1;
    *n = 0;
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !rc;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LIST) {
            fprintf(stderr, "ortqual bench: %s: more than %d values\n", name, MAX_LIST);
            rc = -1;
        } else {
            rc = oq_cli_parse_int("bench", name, tok, 1, INT64_MAX, &vals[(*n)++]);
        }
    }
    free(copy);
    if (!rc && !*n) {
        fprintf(stderr, "ortqual bench: %s: empty list\n", name);
        rc = -1;
    }
    return rc;
}

static int set_variants(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    char *copy = strdup(s);
    if (!copy) return -1;
    int rc = 0;
    o->n_variants = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !rc;
         tok = strtok_r(NULL, ",", &save)) {
        oq_err err = {0};
        if (o->n_variants == OQ_BENCH_MAX_VARIANTS) {
            fprintf(stderr, "ortqual bench: --variants: more than %d\n", OQ_BENCH_MAX_VARIANTS);
            rc = -1;
        } else if (oq_bench_variant_parse(tok, &o->variants[o->n_variants], &err) != OQ_OK) {
            fprintf(stderr, "ortqual bench: --variants: %s\n", err.msg);
            rc = -1;
        } else {
            o->n_variants++;
        }
    }
    free(copy);
    return rc;
}

/* --modes masked|unmasked|both, --export-shapes dynamic|static|both: bits 1, 2, 3. */
static int set_pair_choice(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    int modes = !strcmp(opt->name, "modes");
    const char *a = modes ? "masked" : "dynamic", *b = modes ? "unmasked" : "static";
    unsigned *bits = modes ? &o->modes : &o->shapes;
    if (!strcmp(s, a)) *bits = 1;
    else if (!strcmp(s, b)) *bits = 2;
    else if (!strcmp(s, "both")) *bits = 3;
    else {
        fprintf(stderr, "ortqual bench: --%s '%s': want %s, %s or both\n", opt->name, s, a, b);
        return -1;
    }
    return 0;
}

static int set_policy(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    static const char *const names[] = {"fixed", "balanced", "uniform", "fraction"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            o->length_policy = i; /* the order of oq_length_policy */
            return 0;
        }
    fprintf(stderr, "ortqual bench: --length-policy '%s': want fixed, balanced, uniform or fraction\n", s);
    return -1;
}

static int set_fraction(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0 && v < 1)) {
        fprintf(stderr, "ortqual bench: --mask-fraction '%s': want a number in [0, 1)\n", s);
        return -1;
    }
    o->mask_fraction = v;
    return 0;
}

static int set_kv_heads(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    int64_t v;
    if (oq_cli_parse_int("bench", "--kv-heads", s, 1, INT32_MAX, &v)) return -1;
    c->o.kv_heads = (int32_t)v;
    c->kv_given = 1;
    return 0;
}

static int set_io(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    int io = oq_io_binding_parse(s);
    if (io < 0) {
        fprintf(stderr, "ortqual bench: --io-binding '%s': want auto, host or device\n", s);
        return -1;
    }
    o->io_binding = (oq_io_binding)io;
    return 0;
}

static int set_opt_level(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    int64_t v;
    if (oq_cli_parse_int("bench", "--graph-opt-level", s, -1, INT64_MAX, &v)) return -1;
    if (v > 99 || oq_graph_opt_from_level((int)v) < 0) {
        fprintf(stderr, "ortqual bench: --graph-opt-level '%s': want -1, 0, 1, 2 or 99\n", s);
        return -1;
    }
    o->graph_opt = (oq_graph_opt)oq_graph_opt_from_level((int)v);
    return 0;
}

static int set_mem_ms(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    int64_t v;
    if (oq_cli_parse_int("bench", "--mem-sample-ms", s, 1, UINT32_MAX / 1000, &v)) return -1;
    o->mem_sample_us = (unsigned)(v * 1000);
    return 0;
}

/* ---- progress and table ------------------------------------------------------------- */

typedef struct progress {
    int tty, quiet;
} progress;

static void describe(const oq_bench_row *r, char *buf, size_t n)
{
    snprintf(buf, n, "%s B=%lld L=%lld %s%s", r->variant.name, (long long)r->batch,
             (long long)r->seq_len, r->masked ? "masked" : "unmasked",
             r->static_shapes == 1 ? " static" : "");
}

static void on_progress(void *user, size_t index, size_t total, const oq_bench_row *r, int done)
{
    const progress *p = user;
    if (p->quiet) return;
    char what[256];
    describe(r, what, sizeof what);
    if (!done) {
        if (p->tty) fprintf(stderr, "\r\033[K[%zu/%zu] %s ...", index + 1, total, what);
        return;
    }
    char result[160];
    if (r->status == OQ_BENCH_OK)
        snprintf(result, sizeof result, "ok  p50 %.4g ms", r->stats.p50);
    else
        snprintf(result, sizeof result, "%s", oq_bench_status_name(r->status));
    if (p->tty)
        fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s", index + 1, total, what, result);
    else
        fprintf(stderr, "[%zu/%zu] %s: %s\n", index + 1, total, what, result);
    if (p->tty && index + 1 == total) fputc('\n', stderr);
    fflush(stderr);
}

static void print_table(const oq_bench_rows *rows)
{
    printf("%-28s %-7s %-8s %4s %6s %-11s %10s %10s %9s %9s %10s %s\n", "variant", "shapes",
           "mode", "B", "L", "status", "p50_ms", "mean_ms", "std_ms", "rss_MiB", "max_abs_err",
           "kernel");
    for (size_t i = 0; i < rows->n; i++) {
        const oq_bench_row *r = &rows->rows[i];
        printf("%-28s %-7s %-8s %4lld %6lld %-11s ", r->variant.name,
               r->static_shapes < 0 ? "-" : r->static_shapes ? "static" : "dynamic",
               r->masked ? "masked" : "unmasked", (long long)r->batch, (long long)r->seq_len,
               oq_bench_status_name(r->status));
        char err_text[32] = "-";
        if (!isnan(r->max_abs_err)) snprintf(err_text, sizeof err_text, "%.3g", r->max_abs_err);
        if (r->status == OQ_BENCH_OK)
            printf("%10.4g %10.4g %9.3g %9.1f %11s %s\n", r->stats.p50, r->stats.mean,
                   r->stats.std, r->peak_rss >= 0 ? (double)r->peak_rss / 1048576.0 : NAN,
                   err_text, r->kernel_observed[0] ? r->kernel_observed : "-");
        else
            printf("%s\n", r->error);
    }
}

/* ---- main ----------------------------------------------------------------------------- */

static int parse_args(cli_state *c, int argc, char **argv)
{
    oq_bench_opts *o = &c->o;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("sweep:"),
        OQ_OPT_CALLBACK("variants", "LIST", set_variants, o,
                        "comma list of RUNTIME:REPR:PRECISION[:KERNEL] (required), e.g.\n"
                        "ref,cpu:decomposed:fp32,cuda:attention24:fp16:flash; 'ref' is the\n"
                        "C reference (float64). REPR: decomposed|attention23|attention24;\n"
                        "PRECISION fp32|fp16; KERNEL auto|flash|efficient|cudnn|math"),
        OQ_OPT_CALLBACK("batch-sizes", "LIST", set_list, c, "batch sizes (default 1)"),
        OQ_OPT_CALLBACK("seq-lens", "LIST", set_list, c, "padded sequence lengths L (default 128,512,2048)"),
        OQ_OPT_CALLBACK("modes", "M", set_pair_choice, o, "masked | unmasked | both (default both)"),
        OQ_OPT_CALLBACK("length-policy", "P", set_policy, o,
                        "event lengths of masked batches: fixed (no padding), balanced,\n"
                        "uniform or fraction (default fraction)"),
        OQ_OPT_CALLBACK("mask-fraction", "F", set_fraction, o,
                        "mean share of padding in masked batches, [0,1) (default 0.25):\n"
                        "fraction: every event round((1-F)L) long; balanced/uniform:\n"
                        "lengths from round((1-2F)L) (>= 1) to L"),
        OQ_OPT_NUMBER("num-heads", "H", &o->heads, 1, INT32_MAX, "query heads (default 8)"),
        OQ_OPT_CALLBACK("kv-heads", "G", set_kv_heads, c, "key/value heads, divides H (default H)"),
        OQ_OPT_NUMBER("head-dim", "D", &o->head_dim, 1, INT32_MAX, "head size (default 64)"),
        OQ_OPT_CALLBACK("export-shapes", "S", set_pair_choice, o, "dynamic | static | both (default dynamic)"),
        OQ_OPT_NUMBER("seed", "N", &o->seed, 0, INT64_MAX, "inputs seed (default 12345)"),
        OQ_OPT_GROUP("timing:"),
        OQ_OPT_NUMBER("warmup", "N", &o->warmup, 0, INT64_MAX, "untimed runs after the first run (default 3)"),
        OQ_OPT_NUMBER("iters", "N", &o->iters, 1, INT64_MAX, "timed runs (default 20)"),
        OQ_OPT_NUMBER("ref-iters", "N", &o->ref_iters, 1, INT64_MAX,
                      "timed runs of the 'ref' variant (default: --iters); its\n"
                      "first run, the accuracy baseline, is its only warm-up"),
        OQ_OPT_NUMBER("threads", "N", &o->threads, 0, INT32_MAX,
                      "ORT intra-op threads and OpenMP threads of the reference\n"
                      "(default 0: ORT's and OpenMP's defaults)"),
        OQ_OPT_CALLBACK("graph-opt-level", "N", set_opt_level, o,
                        "-1 ORT default, 0 off, 1 basic, 2 extended, 99 all (default -1)"),
        OQ_OPT_CALLBACK("io-binding", "B", set_io, o,
                        "auto | host | device (default auto: device on GPU EPs, host on\n"
                        "CPU). device: inputs copied once to the EP's memory and\n"
                        "outputs bound there (IoBinding), so no host-device copy is\n"
                        "timed; host: copies are inside every timed Run"),
        OQ_OPT_FLAG("include-session", &o->include_session, "each timed sample is session creation + first Run"),
        OQ_OPT_SET("no-reference", &o->reference, 0, "skip the float64 reference (no max_abs_err)"),
        OQ_OPT_CALLBACK("mem-sample-ms", "MS", set_mem_ms, o, "RSS sampling period during the timed runs (default 2)"),
        OQ_OPT_GROUP("output:"),
        OQ_OPT_STRING("outdir", "DIR", &c->outdir, "where summary.json and summary.csv go (default bench-out)"),
        OQ_OPT_FLAG("quiet", &c->quiet, "no progress lines"),
        OQ_OPT_GROUP("runtime:"),
        OQ_CLI_RUNTIME_OPTS_PER_CONFIG(&c->cr),
        OQ_OPT_END};
    const oq_cli_command cmd = {"bench", head, foot, opts, 0, "unknown or incomplete option '%s'"};
    int rc = oq_cli_parse(&cmd, argc, argv, NULL);
    if (rc) return rc;
    if (c->cr.ep) {
        fprintf(stderr, "ortqual bench: --ep: each variant names its runtime (e.g. cuda:attention24:fp16)\n");
        return -1;
    }
    if (!c->o.n_variants) {
        fprintf(stderr, "ortqual bench: --variants is required (see --help)\n");
        return -1;
    }
    if (!c->kv_given) c->o.kv_heads = c->o.heads;
    return 0;
}

static int run_bench(cli_state *c, oq_runtime *rt, int argc, char **argv)
{
    oq_err err = {0};
    if (oq_mkdirs(c->outdir, &err) != OQ_OK) {
        fprintf(stderr, "ortqual bench: %s\n", err.msg);
        return OQ_EXIT_RUNTIME;
    }
    if (c->o.threads > 0) omp_set_num_threads(c->o.threads);
    progress p = {isatty(2), c->quiet};
    oq_bench_rows *rows = NULL;
    oq_status st = oq_bench_sweep(rt, &c->o, on_progress, &p, &rows, &err);
    if (st == OQ_ERR_INVALID_ARG) {
        fprintf(stderr, "ortqual bench: %s\n", err.msg);
        return OQ_EXIT_USAGE;
    }
    if (st) {
        fprintf(stderr, "ortqual bench: %s\n", err.msg);
        return OQ_EXIT_RUNTIME;
    }
    char csv[4096];
    snprintf(csv, sizeof csv, "%s/summary.csv", c->outdir);
    char json[4096];
    snprintf(json, sizeof json, "%s/summary.json", c->outdir);
    if (oq_bench_write_summary(rt, &c->o, rows, argc, argv, json, &err) != OQ_OK ||
        oq_bench_rows_write_csv(rows, csv, &err) != OQ_OK) {
        fprintf(stderr, "ortqual bench: %s\n", err.msg);
        oq_bench_rows_free(rows);
        return OQ_EXIT_RUNTIME;
    }
    print_table(rows);
    int failed = 0;
    for (size_t i = 0; i < rows->n; i++) failed |= rows->rows[i].status == OQ_BENCH_FAILED;
    printf("wrote %s/summary.json and %s\n", c->outdir, csv);
    oq_bench_rows_free(rows);
    return failed ? OQ_EXIT_FAIL : OQ_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
    cli_state c;
    memset(&c, 0, sizeof c);
    oq_bench_opts_default(&c.o);
    c.outdir = "bench-out";
    int rc = parse_args(&c, argc, argv);
    if (rc) {
        oq_cli_runtime_clear(&c.cr);
        return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    }
    oq_runtime *rt = NULL;
    rc = oq_cli_runtime_open(&c.cr, &rt);
    if (!rc) {
        c.o.ep_lib = NULL; /* a registered --ep-lib is found by the runtime */
        c.o.n_ep_options = c.cr.n_options;
        c.o.ep_option_keys = (const char *const *)c.cr.option_keys;
        c.o.ep_option_values = (const char *const *)c.cr.option_values;
        rc = run_bench(&c, rt, argc, argv);
    }
    oq_runtime_free(rt);
    oq_cli_runtime_clear(&c.cr);
    return rc;
}
