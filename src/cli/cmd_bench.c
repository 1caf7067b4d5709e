/* ortqual bench: attention scaling sweeps (latency, memory, accuracy) on ONNX Runtime. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ortqual/bench.h"
#include "ortqual/events.h"
#include "core/core-impl.h"
#include "evidence/evidence-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/report.h"

const char cmd_bench_summary[] = "time attention variants over batch sizes and lengths (latency, memory, error)";

#define MAX_LIST 64

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual bench --variants LIST [options]\n"
            "\n"
            "Sweep attention-only (sdpa) models over batch sizes, sequence lengths, masked and\n"
            "unmasked inputs and export shapes. Every variant x shape is exported in memory, run\n"
            "once (timed apart as first_run_ms; its output is compared with the float64 C\n"
            "reference; on CUDA ORT's SdpaKernel routing lines are captured), warmed up, then\n"
            "timed --iters times (CLOCK_MONOTONIC around each Run, nothing else). Session\n"
            "creation is timed apart (session_ms) unless --include-session.\n"
            "Writes OUTDIR/summary.json (system, options, every row with raw samples),\n"
            "OUTDIR/summary.csv (one row per variant x shape) and OUTDIR/report.html (the\n"
            "rows, figures and environment in one page), and prints a table.\n"
            "\n"
            "sweep:\n"
            "  --variants LIST         comma list of RUNTIME:REPR:PRECISION[:KERNEL] (required), e.g.\n"
            "                          ref,cpu:decomposed:fp32,cuda:attention24:fp16:flash; 'ref' is the\n"
            "                          C reference (float64). REPR: decomposed|attention23|attention24;\n"
            "                          PRECISION fp32|fp16; KERNEL auto|flash|efficient|cudnn|math\n"
            "  --batch-sizes LIST      batch sizes (default 1)\n"
            "  --seq-lens LIST         padded sequence lengths L (default 128,512,2048)\n"
            "  --modes M               masked | unmasked | both (default both)\n"
            "  --length-policy P       event lengths of masked batches: fixed (no padding), balanced,\n"
            "                          uniform or fraction (default fraction)\n"
            "  --mask-fraction F       mean share of padding in masked batches, [0,1) (default 0.25):\n"
            "                          fraction: every event round((1-F)L) long; balanced/uniform:\n"
            "                          lengths from round((1-2F)L) (>= 1) to L\n"
            "  --num-heads H           query heads (default 8)\n"
            "  --kv-heads G            key/value heads, divides H (default H)\n"
            "  --head-dim D            head size (default 64)\n"
            "  --export-shapes S       dynamic | static | both (default dynamic)\n"
            "  --seed N                inputs seed (default 12345)\n"
            "\n"
            "timing:\n"
            "  --warmup N              untimed runs after the first run (default 3)\n"
            "  --iters N               timed runs (default 20)\n"
            "  --ref-iters N           timed runs of the 'ref' variant (default: --iters); its\n"
            "                          first run, the accuracy baseline, is its only warm-up\n"
            "  --threads N             ORT intra-op threads and OpenMP threads of the reference\n"
            "                          (default 0: ORT's and OpenMP's defaults)\n"
            "  --graph-opt-level N     -1 ORT default, 0 off, 1 basic, 2 extended, 99 all (default -1)\n"
            "  --io-binding B          auto | host | device (default auto: device on GPU EPs, host on\n"
            "                          CPU). device: inputs copied once to the EP's memory and\n"
            "                          outputs bound there (IoBinding), so no host-device copy is\n"
            "                          timed; host: copies are inside every timed Run\n"
            "  --include-session       each timed sample is session creation + first Run\n"
            "  --no-reference          skip the float64 reference (no max_abs_err)\n"
            "  --mem-sample-ms MS      RSS sampling period during the timed runs (default 2)\n"
            "\n"
            "output:\n"
            "  --outdir DIR            where summary.json and summary.csv go (default bench-out)\n"
            "  --quiet                 no progress lines\n"
            "  -h, --help              this help\n"
            "\n"
            "runtime:\n");
    oq_cli_runtime_help(fp, 1);
    fprintf(fp,
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
            "      --seq-lens 512,2048,8192,16384 --io-binding device --outdir gpu-bench\n");
}

/* ---- option values -------------------------------------------------------------- */

static int parse_list(const char *opt, const char *s, int64_t *vals, size_t *n)
{
    char *copy = strdup(s);
    if (!copy) return -1;
    *n = 0;
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !rc;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LIST) {
            fprintf(stderr, "ortqual bench: %s: more than %d values\n", opt, MAX_LIST);
            rc = -1;
        } else {
            rc = oq_cli_parse_int("bench", opt, tok, 1, INT64_MAX, &vals[(*n)++]);
        }
    }
    free(copy);
    if (!rc && !*n) {
        fprintf(stderr, "ortqual bench: %s: empty list\n", opt);
        rc = -1;
    }
    return rc;
}

static int parse_variants(const char *s, oq_bench_opts *o)
{
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

static int parse_pair_choice(const char *opt, const char *s, const char *a, const char *b,
                             unsigned *bits)
{
    if (!strcmp(s, a)) *bits = 1;
    else if (!strcmp(s, b)) *bits = 2;
    else if (!strcmp(s, "both")) *bits = 3;
    else {
        fprintf(stderr, "ortqual bench: %s '%s': want %s, %s or both\n", opt, s, a, b);
        return -1;
    }
    return 0;
}

static int parse_policy(const char *s, int *policy)
{
    static const char *const names[] = {"fixed", "balanced", "uniform", "fraction"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            *policy = i; /* the order of oq_length_policy */
            return 0;
        }
    fprintf(stderr, "ortqual bench: --length-policy '%s': want fixed, balanced, uniform or fraction\n", s);
    return -1;
}

static int parse_fraction(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0 && v < 1)) {
        fprintf(stderr, "ortqual bench: --mask-fraction '%s': want a number in [0, 1)\n", s);
        return -1;
    }
    *out = v;
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

/* ---- summary.json --------------------------------------------------------------------- */

/* The evidence (runtime, host, GPUs, loaded libraries, ORT_* environment) is
 * gathered after the sweep so every library the sessions loaded is listed. */
static json_t *system_json(oq_runtime *rt)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return json_pack("{s:s,s:s,s:s,s:i,s:s,s:I,s:o}", "ortqual_version", ORTQUAL_VERSION,
                     "ort_version", oq_runtime_version(rt), "ort_library",
                     oq_runtime_lib_path(rt), "ort_api_version", oq_runtime_api_version(rt),
                     "ort_build_info", oq_runtime_build_info(rt), "online_cpus",
                     (json_int_t)ncpu, "evidence", oq_evidence_collect_json(rt));
}

static json_t *argv_json(int argc, char **argv)
{
    json_t *a = json_array();
    json_array_append_new(a, json_string("ortqual"));
    for (int i = 0; i < argc; i++) json_array_append_new(a, json_string(argv[i]));
    return a;
}

static oq_status write_json(const char *dir, oq_runtime *rt, const oq_bench_opts *o,
                            const oq_bench_rows *rows, int argc, char **argv, oq_err *err)
{
    json_t *opts = NULL, *results = json_array();
    oq_status st = oq_bench_opts_to_json(o, &opts, err);
    for (size_t i = 0; !st && i < rows->n; i++) {
        json_t *r = NULL;
        if (!(st = oq_bench_row_to_json(&rows->rows[i], &r, err))) json_array_append_new(results, r);
    }
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_t *doc = st ? NULL
                     : json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "tool", "ortqual bench", "created",
                                 when, "command_line", argv_json(argc, argv), "system",
                                 system_json(rt), "config", opts, "results", results);
    if (st) {
        json_decref(opts);
        json_decref(results);
        return st;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    st = oq_json_write_file(path, doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10), err);
    json_decref(doc);
    return st;
}

/* ---- main ----------------------------------------------------------------------------- */

enum {
    OPT_BATCH = 0x1200, OPT_SEQ, OPT_POLICY, OPT_MODES, OPT_FRACTION, OPT_HEADS, OPT_KV_HEADS,
    OPT_HEAD_DIM, OPT_THREADS, OPT_WARMUP, OPT_ITERS, OPT_VARIANTS, OPT_SHAPES, OPT_SEED,
    OPT_OUTDIR, OPT_IO, OPT_REF_ITERS, OPT_INCLUDE_SESSION, OPT_NO_REF, OPT_MEM_MS, OPT_OPT_LEVEL, OPT_QUIET
};

typedef struct cli_state {
    oq_bench_opts o;
    int64_t batch_sizes[MAX_LIST], seq_lens[MAX_LIST];
    const char *outdir;
    int kv_given, quiet;
    struct oq_cli_runtime cr;
} cli_state;

/* Returns 0 when handled, -1 on a bad value. */
static int handle_opt(cli_state *c, int opt, const char *arg)
{
    oq_bench_opts *o = &c->o;
    int64_t v = 0;
    switch (opt) {
    case OPT_BATCH:
        o->batch_sizes = c->batch_sizes;
        return parse_list("--batch-sizes", arg, c->batch_sizes, &o->n_batch_sizes);
    case OPT_SEQ:
        o->seq_lens = c->seq_lens;
        return parse_list("--seq-lens", arg, c->seq_lens, &o->n_seq_lens);
    case OPT_POLICY: return parse_policy(arg, &o->length_policy);
    case OPT_MODES: return parse_pair_choice("--modes", arg, "masked", "unmasked", &o->modes);
    case OPT_SHAPES: return parse_pair_choice("--export-shapes", arg, "dynamic", "static", &o->shapes);
    case OPT_FRACTION: return parse_fraction(arg, &o->mask_fraction);
    case OPT_VARIANTS: return parse_variants(arg, o);
    case OPT_OUTDIR: c->outdir = arg; return 0;
    case OPT_INCLUDE_SESSION: o->include_session = 1; return 0;
    case OPT_NO_REF: o->reference = 0; return 0;
    case OPT_QUIET: c->quiet = 1; return 0;
    case OPT_IO: {
        int io = oq_io_binding_parse(arg);
        if (io < 0) fprintf(stderr, "ortqual bench: --io-binding '%s': want auto, host or device\n", arg);
        o->io_binding = io < 0 ? OQ_IO_AUTO : (oq_io_binding)io;
        return io < 0 ? -1 : 0;
    }
    case OPT_OPT_LEVEL:
        if (oq_cli_parse_int("bench", "--graph-opt-level", arg, -1, INT64_MAX, &v)) return -1;
        if (v != -1 && v != 0 && v != 1 && v != 2 && v != 99) {
            fprintf(stderr, "ortqual bench: --graph-opt-level '%s': want -1, 0, 1, 2 or 99\n", arg);
            return -1;
        }
        o->graph_opt_level = (int)v;
        return 0;
    default: break;
    }
    /* The integer options. */
    static const struct { int opt; const char *name; int64_t lo; } ints[] = {
        {OPT_HEADS, "--num-heads", 1}, {OPT_KV_HEADS, "--kv-heads", 1},
        {OPT_HEAD_DIM, "--head-dim", 1}, {OPT_THREADS, "--threads", 0},
        {OPT_WARMUP, "--warmup", 0}, {OPT_ITERS, "--iters", 1}, {OPT_REF_ITERS, "--ref-iters", 1}, {OPT_SEED, "--seed", 0},
        {OPT_MEM_MS, "--mem-sample-ms", 1}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        if (ints[i].opt != opt) continue;
        if (oq_cli_parse_int("bench", ints[i].name, arg, ints[i].lo, INT64_MAX, &v)) return -1;
        switch (opt) {
        case OPT_HEADS: o->heads = (int32_t)v; break;
        case OPT_KV_HEADS: o->kv_heads = (int32_t)v; c->kv_given = 1; break;
        case OPT_HEAD_DIM: o->head_dim = (int32_t)v; break;
        case OPT_THREADS: o->threads = (int)v; break;
        case OPT_WARMUP: o->warmup = (size_t)v; break;
        case OPT_ITERS: o->iters = (size_t)v; break;
        case OPT_REF_ITERS: o->ref_iters = (size_t)v; break;
        case OPT_SEED: o->seed = (uint64_t)v; break;
        default: o->mem_sample_us = (unsigned)(v * 1000); break;
        }
        return 0;
    }
    return -1;
}

static int parse_args(cli_state *c, int argc, char **argv)
{
    static const struct option longopts[] = {
        OQ_CLI_RUNTIME_LONGOPTS,
        {"batch-sizes", required_argument, NULL, OPT_BATCH},
        {"seq-lens", required_argument, NULL, OPT_SEQ},
        {"length-policy", required_argument, NULL, OPT_POLICY},
        {"modes", required_argument, NULL, OPT_MODES},
        {"mask-fraction", required_argument, NULL, OPT_FRACTION},
        {"num-heads", required_argument, NULL, OPT_HEADS},
        {"kv-heads", required_argument, NULL, OPT_KV_HEADS},
        {"head-dim", required_argument, NULL, OPT_HEAD_DIM},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"iters", required_argument, NULL, OPT_ITERS},
        {"ref-iters", required_argument, NULL, OPT_REF_ITERS},
        {"variants", required_argument, NULL, OPT_VARIANTS},
        {"export-shapes", required_argument, NULL, OPT_SHAPES},
        {"seed", required_argument, NULL, OPT_SEED},
        {"outdir", required_argument, NULL, OPT_OUTDIR},
        {"io-binding", required_argument, NULL, OPT_IO},
        {"include-session", no_argument, NULL, OPT_INCLUDE_SESSION},
        {"no-reference", no_argument, NULL, OPT_NO_REF},
        {"mem-sample-ms", required_argument, NULL, OPT_MEM_MS},
        {"graph-opt-level", required_argument, NULL, OPT_OPT_LEVEL},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        {0}};
    opterr = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (ch == 'h') {
            usage(stdout);
            return 1;
        }
        if (ch == '?' || ch == ':') {
            fprintf(stderr, "ortqual bench: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return -1;
        }
        int r = oq_cli_runtime_opt(&c->cr, ch, optarg);
        if (r < 0) return -1;
        if (r > 0) continue;
        if (handle_opt(c, ch, optarg)) return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "ortqual bench: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
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
    if (write_json(c->outdir, rt, &c->o, rows, argc, argv, &err) != OQ_OK ||
        oq_bench_rows_write_csv(rows, csv, &err) != OQ_OK) {
        fprintf(stderr, "ortqual bench: %s\n", err.msg);
        oq_bench_rows_free(rows);
        return OQ_EXIT_RUNTIME;
    }
    print_table(rows);
    int failed = 0;
    for (size_t i = 0; i < rows->n; i++) failed |= rows->rows[i].status == OQ_BENCH_FAILED;
    printf("wrote %s/summary.json and %s\n", c->outdir, csv);
    if (oq_report_write_dir(c->outdir, &err)) fprintf(stderr, "ortqual bench: report.html not written: %s\n", err.msg);
    else printf("report: %s/report.html\n", c->outdir);
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
        oq_cli_runtime_free(&c.cr);
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
    oq_cli_runtime_free(&c.cr);
    return rc;
}
