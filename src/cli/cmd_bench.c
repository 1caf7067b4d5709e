/* ortqual bench: attention scaling sweeps (latency, memory, accuracy) on ONNX Runtime. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "cli_signals.h"
#include "ortqual/bench.h"
#include "ortqual/events.h"
#include "ortqual/fileio.h"
#include "ortqual/report.h"

const char cmd_bench_summary[] = "time attention variants, or a model of yours, over shapes (latency, memory, error)";

#define MAX_LIST 64
#define MAX_MODEL_ARGS 32

static const char head[] =
    "usage: ortqual bench [--variants LIST] [options]\n"
    "       ortqual bench --model M.onnx [--inputs FILE.npz] [--shape INPUT=d0,d1,...]\n"
    "                     [--dim NAME=V] [--sweep NAME=V1,V2,...] [options]\n"
    "\n"
    "Attention sweep (--variants): sweep attention-only (sdpa) models over batch sizes,\n"
    "sequence lengths, masked and unmasked inputs and export shapes. Every variant x shape\n"
    "is exported in memory, run once (timed apart as first_run_ms; its output is compared\n"
    "with the float64 C reference; on CUDA ORT's SdpaKernel routing lines are captured),\n"
    "warmed up, then timed --iters times (CLOCK_MONOTONIC around each Run, nothing else).\n"
    "Session creation is timed apart (session_ms) unless --include-session.\n"
    "\n"
    "A model of yours (--model): the file runs as it is, once per point of the --sweep\n"
    "dimensions (every combination), timed the same way. Each input is the tensor of its\n"
    "name in --inputs (as it is), or generated (seeded) with the shape of --shape, else\n"
    "the model's shape with its named dimensions from --dim, --sweep or another input's\n"
    "shape: floats uniform in [-1, 1), integers in --int-range, booleans true; the mask\n"
    "gets a valid prefix per row (lengths from --length-policy and --mask-fraction), then\n"
    "padding. The mask is the [batch, length] input the model's mask contract or --mask\n"
    "names, else the one the graph uses as a mask, whatever its name: an attention\n"
    "operator's key-padding mask, or an input that reaches the attention scores (a Softmax's\n"
    "input, an attention's mask or bias) through Cast, Not, Equal, Sub, Mul, Where,\n"
    "Unsqueeze, Reshape, Expand...; two such are refused (--mask picks one), an input named\n"
    "like a mask that is none is said, and which one was taken and why is printed and in\n"
    "summary.json. Its polarity (1 = valid or 1 = padding) is the contract's, else\n"
    "--mask-polarity, else as the graph reads it (a Not or 1 - x before a -inf Where or\n"
    "Mul), else 1 = valid; a --mask-polarity the graph contradicts is refused.\n"
    "--expected compares the first run's outputs with yours; one over\n"
    "tolerance fails the row.\n"
    "\n"
    "Writes OUTDIR/summary.json (system, options, every row with raw samples),\n"
    "OUTDIR/summary.csv (one row per variant x shape or per point) and OUTDIR/report.html\n"
    "(the rows, figures and environment in one page), and prints a table.\n"
    "\n"
    "Each row's statistics are of its --iters timed runs (ms per batch): mean, sample std\n"
    "(n-1; empty for one run), min, max and p50, p90, p95, p99, p99.9 by linear\n"
    "interpolation between closest ranks (numpy's default); memory in MiB (2^20 bytes).\n";

static const char foot[] =
    "  (attention sweep: --ep is refused, each variant names its runtime; --ep-lib and\n"
    "  --ep-option apply to every non-CPU variant)\n"
    "\n"
    "exit status (summary.json's verdict and exit_status): 0 passed: the sweep ran (rows\n"
    "may be skipped, unsupported or oom: expected outcomes of a scaling sweep) and at\n"
    "least one ONNX Runtime row ran and was compared with the reference (ran, with\n"
    "--no-reference or a model without --expected); 1 failed: some row failed (an output\n"
    "over tolerance included) or regressed against --baseline, or untested: nothing under\n"
    "test ran (unless --allow-skip; docs/verdicts.md), or --baseline given and no row\n"
    "compared with it (--allow-skip does not accept that); 2 usage or input error (nothing is written but --junit's error case, once the sweep checks it); 3 error: a row ONNX\n"
    "Runtime refused or could not run (none failed), or a runtime or output error.\n"
    "\n"
    "examples:\n"
    "  ortqual bench --variants ref,cpu:decomposed:fp32,cpu:attention24:fp32 \\\n"
    "      --seq-lens 256,1024,4096 --iters 10 --outdir cpu-bench\n"
    "  ortqual bench --variants cuda:attention24:fp16:flash,cuda:attention24:fp16:math \\\n"
    "      --seq-lens 512,2048,8192,16384 --io-binding device --outdir gpu-bench\n"
    "  ortqual bench --model mlpf.onnx --dim batch=4 --sweep seq=512,1024,2048 --threads 4\n"
    "  ortqual bench --model lm.onnx --inputs io.npz --expected io.npz --iters 100\n"
    "  ortqual bench --model enc.onnx --shape features=1,L,17 --sweep L=256,1024 --ep cuda\n"
    "  ortqual bench --variants cpu:attention24:fp32 --seq-lens 512 --iters 200 --outdir new \\\n"
    "      --baseline old/summary.json --max-slowdown p50=10%,p99=25%\n"
    "    (fails, exit 1, when a row's p50 is over 1.10x, or its p99 over 1.25x, the baseline's;\n"
    "    compare runs of one machine with enough --iters: docs/bench.md, \"A baseline\")\n";

/* ---- option values -------------------------------------------------------------- */

typedef struct cli_state {
    oq_bench_opts o;
    int64_t batch_sizes[MAX_LIST], seq_lens[MAX_LIST];
    const char *outdir;
    int kv_given, quiet, allow_skip, force;
    oq_outdir_lock *lock;       /* the output folder, held from the sweep's start */
    const char *attention_opt;  /* the first attention-sweep option given (not with --model) */
    const char *model_opt;      /* the first option that needs --model */
    oq_bench_shape shapes[MAX_MODEL_ARGS];
    oq_bench_dim dims[MAX_MODEL_ARGS], sweeps[MAX_MODEL_ARGS];
    const char *shape_texts[MAX_MODEL_ARGS], *dim_texts[MAX_MODEL_ARGS], *sweep_texts[MAX_MODEL_ARGS]; /* as given */
    oq_cli_list tolerances;
    struct oq_cli_seq_axes seq_axes; /* --seq-axis */
    oq_cli_list given;          /* the options given (oq_cli_command.given) */
    char *tolerance_text;
    char profile_dir[4096];
    const char *default_variants; /* the --variants taken by default, noted once all is checked */
    struct oq_cli_runtime cr;
    int cupti;                  /* --cupti */
    const char *cupti_lib;      /* --cupti-lib */
    const char *baseline_path;  /* --baseline */
    const char *junit;          /* --junit */
    const char *max_slowdown;   /* --max-slowdown */
    int any_host;               /* --baseline-any-host */
    oq_bench_limits limits;     /* --max-slowdown's, p50=10% by default */
    oq_bench_baseline *baseline;
    char host_diff[512];        /* the baseline's machine against this one ("" the same) */
    char *model_notes;          /* --model: the notes said before the run (oq_bench_model_notes) */
    oq_cli_signals sigs;        /* from the sweep's start until its set is written: a signal says so */
} cli_state;

/* Remember the first option of one mode, to refuse it in the other. */
static void mark(const char **slot, const oq_opt *opt) { if (!*slot) *slot = opt->name; }

/* --batch-sizes, --seq-lens: whole numbers >= 1, none listed twice (two rows of one shape
 * make a summary that plot and report refuse). */
typedef struct number_list {
    const char *opt; /* "--seq-lens" */
    int64_t *vals;
    size_t *n;
} number_list;

static int take_number(void *ctx, const char *item, size_t k)
{
    number_list *l = ctx;
    int64_t v;
    if (*l->n == MAX_LIST) {
        fprintf(stderr, "ortqual bench: %s: more than %d values\n", l->opt, MAX_LIST);
        return -1;
    }
    if (oq_cli_parse_int("bench", l->opt, item, 1, INT64_MAX, &v)) return -1;
    for (size_t i = 0; i < *l->n; i++)
        if (l->vals[i] == v) {
            fprintf(stderr, "ortqual bench: %s: %lld is listed twice (items %zu and %zu)\n", l->opt, (long long)v,
                    i + 1, k);
            return -1;
        }
    l->vals[(*l->n)++] = v;
    return 0;
}

static int set_list(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    mark(&c->attention_opt, opt);
    int seq = !strcmp(opt->name, "seq-lens");
    char name[32];
    snprintf(name, sizeof name, "--%s", opt->name);
    number_list l = {name, seq ? c->seq_lens : c->batch_sizes, seq ? &c->o.n_seq_lens : &c->o.n_batch_sizes};
    if (seq) c->o.seq_lens = l.vals;
    else c->o.batch_sizes = l.vals;
    *l.n = 0;
    return oq_cli_each_item("bench", name, s, take_number, &l);
}

/* One variant of --variants, not listed before ('ref' is 'ref:sdpa:fp64'). */
static int take_variant(void *ctx, const char *item, size_t k)
{
    oq_bench_opts *o = ctx;
    oq_err err = {0};
    if (o->n_variants == OQ_BENCH_MAX_VARIANTS) {
        fprintf(stderr, "ortqual bench: --variants: more than %d\n", OQ_BENCH_MAX_VARIANTS);
        return -1;
    }
    oq_bench_variant *v = &o->variants[o->n_variants];
    if (oq_bench_variant_parse(item, v, &err) != OQ_OK) {
        fprintf(stderr, "ortqual bench: --variants: %s\n", err.msg);
        return -1;
    }
    for (size_t i = 0; i < o->n_variants; i++)
        if (!strcmp(o->variants[i].name, v->name)) {
            fprintf(stderr, "ortqual bench: --variants: '%s' is listed twice (items %zu and %zu)\n", v->name, i + 1, k);
            return -1;
        }
    o->n_variants++;
    return 0;
}

static int parse_variants(oq_bench_opts *o, const char *s)
{
    o->n_variants = 0;
    return oq_cli_each_item("bench", "--variants", s, take_variant, o);
}

static int set_variants(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    mark(&c->attention_opt, opt);
    return parse_variants(&c->o, s);
}

/* No --variants and no --model: ORT's CPU forms, and CUDA's flash and float32 where CUDA runs
 * (asked of the runtime the sweep then uses: a probe of its own loaded ORT and the CUDA EP a
 * second time, ~0.11 s a start on the H200). */
static int default_variants(cli_state *c, oq_runtime *rt)
{
    const char *v = oq_cli_cuda_on(&c->cr, rt)
                        ? "cpu:decomposed:fp32,cpu:attention24:fp32,cuda:attention24:fp16:flash,cuda:attention24:fp32"
                        : "cpu:decomposed:fp32,cpu:attention24:fp32";
    c->default_variants = v;
    return parse_variants(&c->o, v);
}

/* Noted only once every option has passed: before, it made an option's error two lines. */
static void note_default_variants(const cli_state *c)
{
    if (c->default_variants && !c->quiet)
        fprintf(stderr, "ortqual bench: --variants %s (the default here)\n", c->default_variants);
}

/* --modes masked|unmasked|both, --export-shapes dynamic|static|both: bits 1, 2, 3. */
static int set_pair_choice(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    oq_bench_opts *o = &c->o;
    mark(&c->attention_opt, opt);
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
    double v = 0;
    const char *end = oq_text_real(s, &v);
    if (!end || *end || !(v >= 0 && v < 1)) {
        fprintf(stderr, "ortqual bench: --mask-fraction '%s': want a number in [0, 1)\n", s);
        return -1;
    }
    o->mask_fraction = v;
    return 0;
}

static int set_kv_heads(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    mark(&c->attention_opt, opt);
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

static int set_mem_ms(const oq_opt *opt, const char *s)
{
    oq_bench_opts *o = opt->ctx;
    int64_t v;
    if (oq_cli_parse_int("bench", "--mem-sample-ms", s, 1, UINT32_MAX / 1000, &v)) return -1;
    o->mem_sample_us = (unsigned)(v * 1000);
    return 0;
}

/* --num-heads, --head-dim, --ref-iters: attention sweep numbers. */
static int set_attention_number(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    mark(&c->attention_opt, opt);
    char name[32];
    snprintf(name, sizeof name, "--%s", opt->name);
    int64_t v;
    if (oq_cli_parse_int("bench", name, s, 1, INT32_MAX, &v)) return -1;
    if (!strcmp(opt->name, "num-heads")) c->o.heads = (int32_t)v;
    else if (!strcmp(opt->name, "head-dim")) c->o.head_dim = (int32_t)v;
    else c->o.ref_iters = (size_t)v;
    return 0;
}

/* --shape, --dim, --sweep: parsed by the library, kept in the state. */
static int same_dim(const oq_bench_dim *a, const oq_bench_dim *b)
{
    return !strcmp(a->name, b->name) && a->n_values == b->n_values &&
           !memcmp(a->values, b->values, a->n_values * sizeof *a->values);
}

static int same_shape(const oq_bench_shape *a, const oq_bench_shape *b)
{
    if (strcmp(a->input, b->input) || a->ndim != b->ndim) return 0;
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d] || strcmp(a->dim_names[d], b->dim_names[d])) return 0;
    return 1;
}

/* Entry k of --shape, --dim or --sweep against the earlier ones that name the same input or
 * dimension: the same value again is taken once (docs/usage.md: refused only with another
 * value), another is refused saying both. 1: new, 0: a repeat, -1: refused. */
static int model_arg_new(cli_state *c, const oq_opt *opt, size_t k, const char *s)
{
    int shape = !strcmp(opt->name, "shape"), sweep = !strcmp(opt->name, "sweep");
    const char **texts = shape ? c->shape_texts : sweep ? c->sweep_texts : c->dim_texts;
    texts[k] = s;
    for (size_t i = 0; i < k; i++) {
        const char *name = shape ? c->shapes[i].input : sweep ? c->sweeps[i].name : c->dims[i].name;
        if (strcmp(name, shape ? c->shapes[k].input : sweep ? c->sweeps[k].name : c->dims[k].name)) continue;
        if (shape ? same_shape(&c->shapes[i], &c->shapes[k])
                  : same_dim(sweep ? &c->sweeps[i] : &c->dims[i], sweep ? &c->sweeps[k] : &c->dims[k]))
            return 0;
        fprintf(stderr, "ortqual bench: --%s %s given twice ('%s' and '%s')\n", opt->name, name, texts[i], s);
        return -1;
    }
    return 1;
}

static int set_model_arg(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    mark(&c->model_opt, opt);
    oq_bench_opts *o = &c->o;
    int shape = !strcmp(opt->name, "shape"), sweep = !strcmp(opt->name, "sweep");
    size_t *n = shape ? &o->n_input_shapes : sweep ? &o->n_sweeps : &o->n_dims;
    if (*n == MAX_MODEL_ARGS) {
        fprintf(stderr, "ortqual bench: --%s: more than %d\n", opt->name, MAX_MODEL_ARGS);
        return -1;
    }
    oq_err err = {0};
    oq_status st = shape   ? oq_bench_shape_parse(s, &c->shapes[*n], &err)
                   : sweep ? oq_bench_dim_parse(s, &c->sweeps[*n], &err)
                           : oq_bench_dim_parse_one(s, &c->dims[*n], &err);
    if (st) {
        fprintf(stderr, "ortqual bench: --%s: %s\n", opt->name, err.msg);
        return -1;
    }
    int fresh = model_arg_new(c, opt, *n, s);
    if (fresh < 0) return -1;
    *n += (size_t)fresh;
    return 0;
}

/* --int-range LO,HI */
static int set_int_range(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    mark(&c->model_opt, opt);
    char lo[64], hi[64];
    const char *comma = strchr(s, ',');
    if (!comma || (size_t)(comma - s) >= sizeof lo || strlen(comma + 1) >= sizeof hi) {
        fprintf(stderr, "ortqual bench: --int-range '%s': want LO,HI\n", s);
        return -1;
    }
    snprintf(lo, sizeof lo, "%.*s", (int)(comma - s), s);
    snprintf(hi, sizeof hi, "%s", comma + 1);
    if (oq_cli_parse_int("bench", "--int-range", lo, INT64_MIN, INT64_MAX, &c->o.int_lo) ||
        oq_cli_parse_int("bench", "--int-range", hi, INT64_MIN, INT64_MAX, &c->o.int_hi))
        return -1;
    if (c->o.int_lo > c->o.int_hi) {
        fprintf(stderr, "ortqual bench: --int-range '%s': LO > HI\n", s);
        return -1;
    }
    return 0;
}

/* --seq-dim NAME, once (the same name again is taken) */
static int set_seq_dim(const oq_opt *opt, const char *s)
{
    cli_state *c = opt->ctx;
    mark(&c->model_opt, opt);
    if (c->o.seq_dim && strcmp(c->o.seq_dim, s)) {
        fprintf(stderr, "ortqual bench: --seq-dim given twice ('%s' and '%s')\n", c->o.seq_dim, s);
        return -1;
    }
    c->o.seq_dim = s;
    return 0;
}

/* --model, --inputs, --expected: one file each; another one is refused (the last won silently),
 * the same path again is taken. */
static int set_once(const oq_opt *opt, const char *s)
{
    const char **slot = opt->ctx;
    if (*slot && strcmp(*slot, s)) { /* the same file again names one thing still */
        fprintf(stderr, "ortqual bench: --%s given twice ('%s' and '%s'): it takes one file\n", opt->name, *slot, s);
        return -1;
    }
    *slot = s;
    return 0;
}

/* --mask NAME: one input; another name is refused (the last won silently). */
static int set_mask_input(const oq_opt *opt, const char *s)
{
    const char **slot = opt->ctx;
    if (*slot && strcmp(*slot, s)) {
        fprintf(stderr, "ortqual bench: --%s given twice ('%s' and '%s'): one input is the mask\n", opt->name, *slot, s);
        return -1;
    }
    *slot = s;
    return 0;
}

/* ---- progress and table ------------------------------------------------------------- */

typedef struct progress {
    int tty, quiet;
} progress;

/* "cpu:model:fp32 batch=2 seq=128" */
static void describe_point(const oq_bench_row *r, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "%s", r->variant.name);
    for (size_t i = 0; i < r->n_dims && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, " %s=%lld", r->dims[i].name, (long long)r->dims[i].value);
}

static void describe(const oq_bench_row *r, char *buf, size_t n)
{
    if (r->heads < 0) {
        describe_point(r, buf, n);
        return;
    }
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
        if (p->tty) fprintf(stderr, "\r\033[K[%zu/%zu] %s ...", index + 1, total, oq_cli_shown(what));
        return;
    }
    char result[160];
    if (r->status == OQ_BENCH_OK)
        snprintf(result, sizeof result, "ok  p50 %.4g ms", r->stats.p50);
    else
        snprintf(result, sizeof result, "%s", oq_bench_status_name(r->status));
    if (p->tty)
        fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s", index + 1, total, oq_cli_shown(what), result);
    else
        fprintf(stderr, "[%zu/%zu] %s: %s\n", index + 1, total, oq_cli_shown(what), result);
    if (p->tty && index + 1 == total) fputc('\n', stderr);
    fflush(stderr);
}

/* A standard deviation for the tables: "-" where it is undefined (one timed run). */
static const char *std_str(double std, char *buf, size_t n)
{
    if (isnan(std)) return "-";
    snprintf(buf, n, "%.3g", std);
    return buf;
}
static void print_table(const oq_bench_rows *rows)
{
    printf("%-28s %-7s %-8s %4s %6s %-11s %10s %10s %9s %9s %10s %s\n", "variant", "shapes",
           "mode", "B", "L", "status", "p50_ms", "mean_ms", "std_ms", "rss_MiB", "max_abs_err",
           "kernel");
    for (size_t i = 0; i < rows->n; i++) {
        const oq_bench_row *r = &rows->rows[i];
        printf("%-28s %-7s %-8s %4lld %6lld %-11s ", oq_cli_shown(r->variant.name),
               r->static_shapes < 0 ? "-" : r->static_shapes ? "static" : "dynamic",
               r->masked ? "masked" : "unmasked", (long long)r->batch, (long long)r->seq_len,
               oq_bench_status_name(r->status));
        char err_text[32] = "-", std_text[32];
        if (!isnan(r->max_abs_err)) snprintf(err_text, sizeof err_text, "%.3g", r->max_abs_err);
        if (r->status == OQ_BENCH_OK)
            printf("%10.4g %10.4g %9s %9.1f %11s %s\n", r->stats.p50, r->stats.mean,
                   std_str(r->stats.std, std_text, sizeof std_text),
                   r->peak_rss >= 0 ? (double)r->peak_rss / 1048576.0 : NAN, err_text,
                   r->kernel_observed[0] ? oq_cli_shown(r->kernel_observed) : "-");
        else
            printf("%s\n", oq_cli_shown(r->error));
    }
}

/* Where the mask's polarity came from, in the tool's words. */
static const char *polarity_said(const char *source)
{
    static const char *const said[][2] = {{"contract", "the model's mask contract"}, {"option", "--mask-polarity"},
                                          {"graph", "as the graph reads it"}, {"default", "the default"}};
    for (size_t i = 0; i < sizeof said / sizeof *said; i++)
        if (!strcmp(source, said[i][0])) return said[i][1];
    return source;
}

/* bench --model's mask input: which, how it was found and why; an input named like a mask that
 * is not one (never silently: its rows are all valid). */
static void print_mask(const oq_bench_rows *rows)
{
    static const char *const how[][2] = {{"contract", "the model's mask contract names it"},
                                         {"option", "--mask names it"}, {"graph", NULL}, {"name", NULL}};
    if (!*rows->mask_input) {
        printf("mask: none (no input is used as a [batch, length] mask: every row is all valid)\n");
    } else {
        const char *why = rows->mask_why;
        for (size_t i = 0; i < sizeof how / sizeof *how; i++)
            if (!strcmp(rows->mask_source, how[i][0]) && how[i][1]) why = how[i][1];
        printf("mask: input '%s' (%s: %s), %s (%s)\n", oq_cli_shown(rows->mask_input), rows->mask_source,
               oq_cli_shown(why), rows->mask_polarity == OQ_MASK_POLARITY_PAD ? "1 = padding" : "1 = valid",
               polarity_said(rows->mask_polarity_source));
    }
    if (*rows->mask_note) printf("note: %s\n", oq_cli_shown(rows->mask_note));
}

/* A model's rows: the point, then the percentiles users look for. */
static void print_model_table(const oq_bench_rows *rows)
{
    printf("%-32s %-8s %9s %9s %9s %9s %9s %9s %9s %9s %8s %10s\n", "point", "status", "p50_ms", "p90_ms",
           "p95_ms", "p99_ms", "p99.9_ms", "max_ms", "mean_ms", "std_ms", "rss_MiB", "max_abs_err");
    for (size_t i = 0; i < rows->n; i++) {
        const oq_bench_row *r = &rows->rows[i];
        char point[256] = "";
        for (size_t k = 0; k < r->n_dims; k++)
            snprintf(point + strlen(point), sizeof point - strlen(point), "%s%s=%lld", k ? " " : "",
                     r->dims[k].name, (long long)r->dims[k].value);
        printf("%-32s %-8s ", *point ? oq_cli_shown(point) : "-", oq_bench_status_name(r->status));
        if (r->n_samples) {
            const oq_stats *s = &r->stats;
            char std_text[32];
            printf("%9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9s %8.1f ", s->p50, s->p90, s->p95, s->p99, s->p999,
                   s->max, s->mean, std_str(s->std, std_text, sizeof std_text),
                   r->peak_rss >= 0 ? (double)r->peak_rss / 1048576.0 : NAN);
            if (isnan(r->max_abs_err)) printf("%10s", "-");
            else printf("%10.3g", r->max_abs_err);
        }
        printf("%s%s\n", r->error[0] && r->n_samples ? "  " : "", oq_cli_shown(r->error));
        char said[200];
        for (size_t k = 0; k < r->n_outputs; k++) /* its errors are left out of max_abs_err */
            if (oq_bench_output_judged_nothing(&r->outputs[k]))
                printf("    output '%s': %s\n", oq_cli_shown(r->outputs[k].name),
                       oq_compare_not_compared_str(said, sizeof said, (long long)r->outputs[k].inf_matched,
                                                   "the expected file"));
    }
}

/* "1.234" or "-" where not measured */
static const char *ms_str(double x, char *buf, size_t n)
{
    if (isnan(x)) return "-";
    snprintf(buf, n, "%.4g", x);
    return buf;
}

/* Each ONNX Runtime row against the baseline: old, new and their ratio per limited statistic;
 * the rows of one side only are listed too. */
static void print_baseline(const oq_bench_comparison *b)
{
    if (!b) return;
    printf("\nbaseline %s (sha256 %.12s): %zu compared, %zu regressed, %zu untimed, %zu new, %zu missing; limits",
           oq_cli_shown(b->file), b->sha256, b->compared, b->regressed, b->untimed, b->added, b->missing);
    for (size_t k = 0; k < b->limits.n; k++)
        printf("%s %s=%g%%", k ? "," : "", b->limits.limit[k].stat, b->limits.limit[k].pct);
    printf("\n");
    if (b->any_host)
        printf("baseline from %s (%s): compared anyway (--baseline-any-host)\n",
               strncmp(b->host_diff, "ONNX Runtime version", 20) ? "another machine" : "another ONNX Runtime",
               oq_cli_shown(b->host_diff));
    if (*b->verdict && strcmp(b->verdict, "passed")) /* bench.md: a baseline is a run you trust */
        printf("note: the baseline's own run was not passed (verdict %s)\n", oq_cli_shown(b->verdict));
    if (*b->ort_diff) printf("note: %s\n", oq_cli_shown(b->ort_diff));
    printf("%-10s", "match");
    for (size_t k = 0; k < b->limits.n; k++) printf(" %9s_old %9s_new %7s", b->limits.limit[k].stat,
                                                     b->limits.limit[k].stat, "ratio");
    printf("  row\n");
    for (size_t i = 0; i < b->n; i++) {
        const oq_bench_row_ratio *e = &b->entries[i];
        char x[32], y[32], q[32];
        printf("%-10s", oq_bench_match_name(e->match));
        for (size_t k = 0; k < b->limits.n; k++)
            printf(" %13s %13s %7s", ms_str(e->old_ms[k], x, sizeof x), ms_str(e->new_ms[k], y, sizeof y),
                   isnan(e->ratio[k]) ? "-" : (snprintf(q, sizeof q, "x%.3f", e->ratio[k]), q));
        printf("  %s", oq_cli_shown(b->keys[i]));
        for (size_t k = 0; k < b->limits.n; k++) { /* a statistic left out of the row's judgement */
            const char *why = oq_bench_ratio_why(e, k);
            if (why) printf("  (%s not compared: %s)", b->limits.limit[k].stat, why);
        }
        printf("\n");
    }
}

/* ---- main ----------------------------------------------------------------------------- */

/* --ref-iters times the ref variant: with none listed (the default variants have none), it would
 * be ignored (it was, and recorded as the run's ref_iters). */
static int refuse_unused_ref_iters(const cli_state *c)
{
    if (!oq_cli_given(&c->given, "ref-iters")) return 0;
    for (size_t i = 0; i < c->o.n_variants; i++)
        if (!oq_config_uses_ort(&c->o.variants[i])) return 0;
    fprintf(stderr, "ortqual bench: --ref-iters: no ref variant in --variants%s, so it would be ignored\n",
            c->o.n_variants ? "" : " (the default lists none)");
    return -1;
}

/* Options of one mode given in the other, missing --variants, --ep in the attention sweep. */
static int check_mode(cli_state *c)
{
    oq_bench_opts *o = &c->o;
    if (o->model_path) {
        const char *a = c->attention_opt ? c->attention_opt : o->reference ? NULL : "no-reference";
        if (a) {
            fprintf(stderr, "ortqual bench: --%s belongs to the attention sweep, not to --model\n", a);
            return -1;
        }
        const char *p = oq_cli_given(&c->given, "padding") ? "padding" : c->seq_axes.n ? "seq-axis" : NULL;
        if (p && !o->expected_path) { /* auto, the default, too: it would be ignored */
            fprintf(stderr, "ortqual bench: --%s needs --expected (without it nothing is compared)\n", p);
            return -1;
        }
        return 0;
    }
    const char *m = c->model_opt        ? c->model_opt
                    : o->inputs_path    ? "inputs"
                    : o->mask_input     ? "mask"
                    : o->expected_path  ? "expected"
                    : c->tolerances.n   ? "tolerance"
                    : oq_cli_given(&c->given, "padding") ? "padding"
                    : c->seq_axes.n     ? "seq-axis"
                                        : NULL;
    if (m) {
        fprintf(stderr, "ortqual bench: --%s needs --model\n", m);
        return -1;
    }
    if (c->cr.ep) {
        fprintf(stderr, "ortqual bench: --ep: each variant names its runtime (e.g. cuda:attention24:fp16); "
                        "--ep is for --model\n");
        return -1;
    }
    if (!c->kv_given) o->kv_heads = o->heads;
    return refuse_unused_ref_iters(c);
}

/* Which options of generated inputs (and --mask-polarity) were given: with --model, the sweep refuses those no
 * generated input uses (a default's value cannot tell). --mask-fraction sets the padding that
 * --length-policy fixed never has: refused with it, in either mode. */
static int note_generated_opts(cli_state *c)
{
    static const struct { const char *name; unsigned bit; } opts[] = {
        {"seed", OQ_BENCH_GIVEN_SEED}, {"int-range", OQ_BENCH_GIVEN_INT_RANGE},
        {"length-policy", OQ_BENCH_GIVEN_LENGTH_POLICY}, {"mask-fraction", OQ_BENCH_GIVEN_MASK_FRACTION},
        {"mask-polarity", OQ_BENCH_GIVEN_MASK_POLARITY}};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (oq_cli_given(&c->given, opts[i].name)) c->o.given |= opts[i].bit;
    if (!(c->o.given & OQ_BENCH_GIVEN_MASK_FRACTION) || c->o.length_policy != OQ_LENGTH_FIXED) return 0;
    fprintf(stderr, "ortqual bench: --mask-fraction: --length-policy fixed pads nothing (every row is valid to its "
                    "end), so it would be ignored\n");
    return -1;
}

/* --max-slowdown and --baseline-any-host qualify --baseline; the limits default to p50=10%. */
static int check_baseline_opts(cli_state *c)
{
    const char *lone = c->max_slowdown ? "--max-slowdown" : c->any_host ? "--baseline-any-host" : NULL;
    if (!c->baseline_path && lone) {
        fprintf(stderr, "ortqual bench: %s needs --baseline FILE (an earlier run's summary.json)\n", lone);
        return -1;
    }
    oq_err err = {0};
    if (oq_bench_limits_parse(c->max_slowdown ? c->max_slowdown : "p50=10%", &c->limits, &err)) {
        fprintf(stderr, "ortqual bench: --max-slowdown: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* The options parsed, joined into the sweep's (c->o) and checked together; -1 after an error (said). */
static int finish_args(cli_state *c)
{
    oq_bench_opts *o = &c->o;
    if (note_generated_opts(c)) return -1;
    static const char *const made[] = {"summary.json", "summary.csv", "report.html"};
    if (oq_cli_clashes_outdir("bench", "--junit", c->junit, c->outdir, made, 3) ||
        oq_cli_output_ready("bench", "--junit", c->junit, c->outdir))
        return -1;
    if (oq_cli_tolerance_join("bench", &c->tolerances, &c->tolerance_text)) return -1;
    o->tolerances = c->tolerance_text;
    o->seq_axes = c->seq_axes.v;
    o->n_seq_axes = c->seq_axes.n;
    o->input_shapes = c->shapes;
    o->dims = c->dims;
    o->sweeps = c->sweeps;
    c->cupti |= c->cupti_lib != NULL;
    if (c->cupti && !o->profile_runs) {
        fprintf(stderr, "ortqual bench: --cupti times the profiled runs: give --profile-runs N\n");
        return -1;
    }
    if (check_baseline_opts(c)) return -1;
    return check_mode(c);
}

/* bench's options, a group at a time (the help lists them in this order): the attention sweep */
#define SWEEP_OPTS(c, o)                                                                                        \
    OQ_OPT_GROUP("attention sweep:"),                                                                           \
    OQ_OPT_COMMA_CALLBACK("variants", "LIST", set_variants, c,                                                  \
                    "comma list of RUNTIME:REPR:PRECISION[:KERNEL], e.g.\n"                                     \
                    "ref,cpu:decomposed:fp32,cuda:attention24:fp16:flash; 'ref' is the\n"                       \
                    "C reference (float64). REPR: decomposed|attention23|attention24;\n"                        \
                    "PRECISION fp32|fp16|tf32 (cuda); KERNEL auto|flash|efficient|cudnn|math\n"                 \
                    "(default: cpu:decomposed:fp32,cpu:attention24:fp32, and\n"                                 \
                    "cuda:attention24:fp16:flash,cuda:attention24:fp32 where CUDA runs)"),                      \
    OQ_OPT_COMMA_CALLBACK("batch-sizes", "LIST", set_list, c, "batch sizes (default 1)"),                       \
    OQ_OPT_COMMA_CALLBACK("seq-lens", "LIST", set_list, c, "padded sequence lengths L (default 128,512,2048)"), \
    OQ_OPT_CALLBACK("modes", "M", set_pair_choice, c, "masked | unmasked | both (default both)"),               \
    OQ_OPT_CALLBACK("num-heads", "H", set_attention_number, c, "query heads (default 8)"),                      \
    OQ_OPT_CALLBACK("kv-heads", "G", set_kv_heads, c, "key/value heads, divides H (default H)"),                \
    OQ_OPT_CALLBACK("head-dim", "D", set_attention_number, c, "head size (default 64)"),                        \
    OQ_OPT_CALLBACK("export-shapes", "S", set_pair_choice, c, "dynamic | static | both (default dynamic)"),     \
    OQ_OPT_CALLBACK("ref-iters", "N", set_attention_number, c,                                                  \
                    "timed runs of the 'ref' variant (default: --iters); its\n"                                 \
                    "first run, the accuracy baseline, is its only warm-up"),                                   \
    OQ_OPT_SET("no-reference", &o->reference, 0, "skip the float64 reference (no max_abs_err)")

/* a model of yours, its inputs and what its outputs are compared with */
#define MODEL_OPTS(c, o)                                                                                        \
    OQ_OPT_GROUP("a model of yours:"),                                                                          \
    OQ_OPT_CALLBACK("model", "M.onnx", set_once, &o->model_path, "the model to time, run as it is"),            \
    OQ_OPT_CALLBACK("inputs", "FILE.npz", set_once, &o->inputs_path,                                            \
                  "tensors used as they are, matched to the model's inputs by\n"                                \
                  "name (other members are ignored); a wrong dtype, rank or size,\n"                            \
                  "a NaN or inf at a valid position, or an id outside the table it\n"                           \
                  "indexes as the Casts on its way make it (validate's rules), is a\n"                          \
                  "usage error"),                                                                               \
    OQ_OPT_CALLBACK("shape", "INPUT=d0,d1,...", set_model_arg, c,                                               \
                    "the shape of a generated input (repeatable); an entry may name\n"                          \
                    "a dimension given with --dim or --sweep: --shape x=1,L,16"),                               \
    OQ_OPT_CALLBACK("dim", "NAME=V", set_model_arg, c,                                                          \
                    "the size of a named dimension of the model (repeatable), e.g.\n"                           \
                    "--dim batch=4; a dimension no input fixes is a usage error\n"                              \
                    "naming the input and axis"),                                                               \
    OQ_OPT_CALLBACK("sweep", "NAME=V1,V2,...", set_model_arg, c,                                                \
                    "one row per value (repeatable: every combination, the first\n"                             \
                    "varying slowest), e.g. --sweep seq=512,1024,2048"),                                        \
    OQ_OPT_CALLBACK("seq-dim", "NAME", set_seq_dim, c,                                                          \
                    "the dimension the rows' seq_len is (default: the last --sweep\n"                           \
                    "not of the batch, else the mask's length axis, DATA_TIME, seq)"),                          \
    OQ_OPT_CALLBACK("int-range", "LO,HI", set_int_range, c,                                                     \
                    "generated integer inputs uniform in LO..HI, both included\n"                               \
                    "(default 0,1); ids of a vocabulary of V: 0,V-1; each value must\n"                        \
                    "index the model's tables as the Casts on its way make it"),                                          \
    OQ_OPT_CALLBACK("mask", "NAME", set_mask_input, &o->mask_input,                                             \
                    "the mask input [batch, length], given a valid prefix per row\n"                          \
                    "(default: the one the model's mask contract names, else the one\n"                       \
                    "the graph uses as a mask: read by an attention operator as its\n"                        \
                    "key-padding mask, or flowing into the attention scores; else the\n"                      \
                    "rank-2 input named like a mask, as validate takes it)"),                                 \
    OQ_CLI_MASK_POLARITY_OPT(&o->mask_polarity),                                                                \
    OQ_OPT_CALLBACK("expected", "FILE.npz", set_once, &o->expected_path,                                        \
                  "outputs of --inputs to compare the first run with (max abs\n"                                \
                  "error per output, on valid elements: padding never enters it,\n"                             \
                  "as in validate; one over tolerance, or a NaN, fails the row;\n"                              \
                  "one of another shape than the model's for --inputs, or of\n"                                 \
                  "another kind (int32 for a float32 output), or an output\n"                                   \
                  "without one: exit 2; an output whose valid elements are all\n"                               \
                  "infinities the file holds too is not compared: its row is\n"                                \
                  "NOT TESTED)"),                                                                               \
    OQ_OPT_LIST("tolerance", "SPEC", &c->tolerances,                                                            \
                "with --expected: [OUTPUT:]rtol=X,atol=Y or a preset (fp32,\n"                                  \
                "fp16...), repeatable (default: fp16's when the model computes in\n"                            \
                "float16, its attention or an output: said; else the preset of\n"                               \
                "each output's dtype, the model's, not the file's)"),                                           \
    OQ_CLI_PADDING_OPT(o),                                                                                      \
    OQ_CLI_SEQ_AXIS_OPT(&c->seq_axes)

/* the generated inputs of both */
#define INPUT_OPTS(o)                                                                                           \
    OQ_OPT_GROUP("inputs (both):"),                                                                             \
    OQ_OPT_CALLBACK("length-policy", "P", set_policy, o,                                                        \
                    "event lengths of masked batches and generated masks: fixed (no\n"                          \
                    "padding), balanced, uniform or fraction (default fraction);\n"                             \
                    "refused with --modes unmasked, which makes no mask"),                                      \
    OQ_OPT_CALLBACK("mask-fraction", "F", set_fraction, o,                                                      \
                    "mean share of padding in masks, [0,1) (default 0.25):\n"                                   \
                    "fraction: every event round((1-F)L) long; balanced/uniform:\n"                             \
                    "lengths from round((1-2F)L) (>= 1) to L (balanced, batch 1:\n"                             \
                    "one event of their mean); refused with\n"                                                  \
                    "--length-policy fixed or --modes unmasked (no padding), and\n"                             \
                    "where round((1-F)L) is 0 at a length (no valid element)"),                                 \
    OQ_OPT_NUMBER("seed", "N", &o->seed, 0, INT64_MAX, "inputs seed (default 12345)")

/* how the runs are made and timed */
#define TIMING_OPTS(c, o)                                                                                       \
    OQ_OPT_GROUP("timing:"),                                                                                    \
    OQ_OPT_NUMBER("warmup", "N", &o->warmup, 0, INT64_MAX, "untimed runs after the first run (default 3)"),     \
    OQ_OPT_NUMBER("iters", "N", &o->iters, 1, 100000000, "timed runs (default 20; each keeps its time: at most 10^8)"), \
    OQ_OPT_NUMBER("threads", "N", &o->threads, 0, 4096,                                                         \
                  "ORT intra-op threads and threads of the float64 reference\n"                                 \
                  "(default 0: ORT's default, the reference on every core); ORT takes a\n"                     \
                  "session.intra_op_num_threads entry over it (recorded so)"),                                  \
    OQ_OPT_NUMBER("inter-op-threads", "N", &o->inter_op_threads, 0, 4096,                                       \
                  "ORT inter-op threads; N >= 1 turns on ORT's parallel execution\n"                            \
                  "mode, the only one that uses them (default 0: sequential); ORT takes\n"                      \
                  "session.inter_op_num_threads and session.execution_mode entries\n"                          \
                  "over it (recorded so)"),                                                                     \
    OQ_CLI_GRAPH_OPT_OPT(&o->graph_opt, ""),                                                                    \
    OQ_CLI_SESSION_CONFIG_OPT(&c->cr),                                                                          \
    OQ_OPT_CALLBACK("io-binding", "B", set_io, o,                                                               \
                    "auto | host | device (default auto: device on GPU EPs, host on\n"                          \
                    "CPU). device: inputs copied once to the EP's memory and\n"                                 \
                    "outputs bound there (IoBinding), so no host-device copy is\n"                              \
                    "timed; host: copies are inside every timed Run"),                                          \
    OQ_OPT_FLAG("include-session", &o->include_session, "each timed sample is session creation + first Run"),   \
    OQ_OPT_CALLBACK("mem-sample-ms", "MS", set_mem_ms, o,                                                       \
                    "RSS sampling period during the timed runs where the kernel\n"                              \
                    "cannot reset VmHWM (default 2; otherwise the peak is exact)"),                             \
    OQ_OPT_NUMBER("profile-runs", "N", &o->profile_runs, 0, INT32_MAX,                                          \
                  "after the timed loop, N more runs of each ORT row in a\n"                                    \
                  "profiled session of its own: per run, ORT's node and GPU\n"                                  \
                  "kernel time (OUTDIR/profiles/; default 0: none)"),                                           \
    OQ_OPT_FLAG("cupti", &c->cupti,                                                                             \
                "the profiled runs' GPU kernel time from CUPTI (the CUDA\n"                                     \
                "toolkit's libcupti.so, on LD_LIBRARY_PATH), as torch.profiler\n"                               \
                "measures it: for ORT builds without CUDA profiling, whose\n"                                   \
                "profile has no GPU kernel events (needs --profile-runs)"),                                     \
    OQ_OPT_STRING("cupti-lib", "PATH", &c->cupti_lib, "--cupti with this libcupti.so")

/* where the results go and what is said */
#define OUTPUT_OPTS(c)                                                                                          \
    OQ_OPT_GROUP("output:"),                                                                                    \
    OQ_OPT_STRING("outdir", "DIR", &c->outdir,                                                                  \
                  "where summary.json, summary.csv and report.html go (default\n"                               \
                  "bench-out); new or empty unless --force"),                                                   \
    OQ_OPT_FLAG("force", &c->force,                                                                             \
                "write into a folder that is not empty (an earlier run's: its\n"                               \
                "summary.json, summary.csv, report.html and profiles/ are removed\n"                           \
                "when the sweep starts, so a run stopped or killed leaves none)"),                              \
    OQ_OPT_STRING("junit", "FILE", &c->junit,                                                                   \
                  "also write JUnit XML: a case per row (failed: its check or a\n"                              \
                  "slowdown; skipped: not run or not compared with --baseline); from\n"                         \
                  "the sweep's start until its end, one error case: the run did not finish"),                   \
    OQ_OPT_QUIET(&c->quiet, "no progress lines, nor the note of the default --variants"),                     \
    OQ_OPT_FLAG("allow-skip", &c->allow_skip, "a sweep in which nothing under test ran exits 0")

/* an earlier run to compare the timings with */
#define BASELINE_OPTS(c)                                                                                        \
    OQ_OPT_GROUP("baseline (fail on a slowdown):"),                                                             \
    OQ_OPT_CALLBACK("baseline", "FILE", set_once, &c->baseline_path,                                            \
                    "an earlier run's summary.json (ortqual.bench/1 or /2): each\n"                             \
                    "ONNX Runtime row is compared with the row of the same identity\n"                          \
                    "there (variant, batch, seq_len, mode, shapes, io binding,\n"                               \
                    "heads, threads, a model's dims and SHA-256); rows of one side\n"                          \
                    "only are listed. A baseline of another --model is refused"),                               \
    OQ_OPT_COMMA_STRING("max-slowdown", "STAT=PCT[,...]", &c->max_slowdown,                                     \
                    "with --baseline: a row whose STAT new/old is above 1 + PCT/100\n"                          \
                    "regressed (whatever its other STATs), and the run fails (exit 1).\n"                       \
                    "STAT: p50, p90, p95, p99, p99.9, max, mean (default p50=10%)"),                            \
    OQ_OPT_FLAG("baseline-any-host", &c->any_host,                                                              \
                "compare although the baseline ran on another machine or ONNX\n"                               \
                "Runtime (CPU model or count, GPUs, ORT version; refused otherwise)")

/* The command line into c: 0 to go on, 1 after --help, -1 after an error (said). */
static int parse_args(cli_state *c, int argc, char **argv)
{
    oq_bench_opts *o = &c->o;
    const oq_opt opts[] = {
        SWEEP_OPTS(c, o),
        MODEL_OPTS(c, o),
        INPUT_OPTS(o),
        TIMING_OPTS(c, o),
        OUTPUT_OPTS(c),
        BASELINE_OPTS(c),
        OQ_OPT_GROUP("runtime:"),
        OQ_OPT_CALLBACK("ort-lib", "PATH", oq_cli_runtime_string, &c->cr, OQ_CLI_ORT_LIB_HELP),
        OQ_OPT_CALLBACK("ep", "NAME", oq_cli_runtime_string, &c->cr,
                        "with --model: cpu (default), cuda, or a plugin EP name\n"
                        "(the attention sweep's variants name their runtime)"),
        OQ_OPT_CALLBACK("ep-lib", "NAME=PATH", oq_cli_runtime_ep_lib, &c->cr, OQ_CLI_EP_LIB_HELP),
        OQ_OPT_CALLBACK("ep-option", "KEY=VAL", oq_cli_runtime_ep_option, &c->cr,
                        OQ_CLI_EP_OPTION_HELP "\n(the attention sweep: for every variant on cuda or\n"
                        "a plugin EP)"),
        OQ_OPT_END};
    const oq_cli_command cmd = {"bench", head, foot, opts, 0, "unknown or incomplete option '%s'", &c->given};
    int rc = oq_cli_parse(&cmd, argc, argv, NULL);
    return rc ? rc : finish_args(c);
}

/* An earlier run's profiles (profile_*.json, the names bench gives them) go with --force: a run
 * without --profile-runs would leave them beside its summary as if they were its own. Returns
 * how many went. */
static int forget_profiles(const char *dir)
{
    DIR *d = opendir(dir);
    char path[4600];
    int went = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "profile_", 8) || n < 5 || strcmp(e->d_name + n - 5, ".json")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        went += unlink(path) == 0;
    }
    if (d) closedir(d);
    rmdir(dir); /* when nothing else is in it */
    return went;
}

/* A run's set, its verdict first (oq_outdir_forget removes them in this order). */
static const char *const result_set[] = {"summary.json", "summary.csv", "report.html"};
#define N_RESULT_SET (sizeof result_set / sizeof *result_set)

/* A run whose outputs cannot all be written leaves none of them: its profiles go, and once its
 * summary.json is in place (a later file failed), the set's files too. */
static void drop_outputs(const cli_state *c, int summary_placed)
{
    if (summary_placed) oq_outdir_forget(c->outdir, result_set, N_RESULT_SET, NULL, 0);
    forget_profiles(c->profile_dir);
}

/* report.html, read off the summary, is a diagnostic (as validate's): a failure is said, not
 * fatal, and an earlier run's (--force) is not left to pass for this run's. */
/* The model's notes (the Gathers whose indices ORT alone checks), each once before the run as
 * validate says them; summary.json keeps them among the evidence's warnings. */
static oq_status say_model_notes(cli_state *c, oq_err *err)
{
    oq_status st = oq_bench_model_notes(&c->o, &c->model_notes, err);
    char line[4200];
    for (const char *l = c->model_notes, *end; !st && (end = strchr(l, '\n')); l = end + 1) {
        snprintf(line, sizeof line, "%.*s", (int)(end - l), l);
        fprintf(stderr, "note: %s\n", oq_cli_shown(line));
    }
    return st;
}

/* Whether `w` is one of the model's notes said before the run. */
static int model_note_said(const cli_state *c, const char *w)
{
    size_t n = strlen(w);
    for (const char *l = c->model_notes, *end; l && (end = strchr(l, '\n')); l = end + 1)
        if ((size_t)(end - l) == n && !strncmp(l, w, n)) return 1;
    return 0;
}

/* The evidence's warnings (more than one ONNX Runtime core mapped), as summary.json records
 * them: said where the run is read too. */
static void print_evidence_warnings(const char *summary, const cli_state *c, oq_runtime *rt)
{
    const oq_bench_opts *o = &c->o;
    json_t *doc = json_load_file(summary, 0, NULL), *w;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(json_object_get(doc, "system"), "evidence"), "warnings"), i, w)
        if (json_is_string(w) && !oq_cli_session_config_warned(json_string_value(w), oq_runtime_version(rt),
                                                               o->n_session_configs, o->session_config_keys,
                                                               o->session_config_values) &&
            !model_note_said(c, json_string_value(w))) /* said before the sweep */
            fprintf(stderr, "ortqual bench: WARNING: %s\n", oq_cli_shown(json_string_value(w)));
    json_decref(doc);
}

static void write_report(const cli_state *c)
{
    oq_err err = {0};
    char path[4200];
    if (!oq_report_write_dir(c->outdir, &err)) {
        printf("report: %s/report.html\n", oq_cli_shown(c->outdir));
        return;
    }
    snprintf(path, sizeof path, "%s/report.html", c->outdir);
    unlink(path);
    fprintf(stderr, "ortqual bench: report.html not written: %s\n", err.msg);
}

/* The table is printed first: a summary that cannot be written still leaves the results on
 * the screen. */
static int write_outputs(cli_state *c, oq_runtime *rt, const oq_bench_rows *rows, int argc, char **argv)
{
    oq_err err = {0};
    char csv[4096], json[4096];
    snprintf(csv, sizeof csv, "%s/summary.csv", c->outdir);
    snprintf(json, sizeof json, "%s/summary.json", c->outdir);
    if (c->o.model_path) print_mask(rows);
    if (c->o.model_path) print_model_table(rows);
    else print_table(rows);
    print_baseline(rows->baseline);
    fflush(stdout);
    if (*rows->precision_why && rows->n) /* as validate says its --model default */
        fprintf(stderr, "ortqual bench: %s (--model's precision here: %s)\n", oq_cli_shown(rows->rows[0].variant.name),
                oq_cli_shown(rows->precision_why));
    oq_status st = oq_mkdirs(c->outdir, &err);
    /* a signal between two renames would leave this run's summary.json beside the previous
     * run's summary.csv and report.html (--force): it removes the three, as a failed write does */
    char report[4200];
    snprintf(report, sizeof report, "%s/report.html", c->outdir);
    oq_atomic_hold_output(json, 0);
    oq_atomic_hold_output(csv, 0);
    oq_atomic_hold_output(report, 0);
    if (!st) st = oq_bench_write_summary(rt, &c->o, rows, argc, argv, json, &err);
    int placed = !st;
    if (!st) st = oq_bench_rows_write_csv(rows, csv, &err);
    if (st) {
        drop_outputs(c, placed);
        fprintf(stderr, "ortqual bench: %s\n", err.msg);
        return OQ_EXIT_RUNTIME;
    }
    printf("wrote %s and %s\n", oq_cli_shown(json), oq_cli_shown(csv));
    print_evidence_warnings(json, c, rt);
    write_report(c);
    if (c->junit && oq_junit_write_summary(json, c->junit, &err)) {
        fprintf(stderr, "ortqual bench: --junit: %s\n", err.msg);
        return OQ_EXIT_RUNTIME;
    }
    return OQ_EXIT_OK;
}

/* How row i counts in the verdict line, as in its JUnit case (report/junit.c): 0 passed,
 * 1 failed (its check, or a slowdown over the baseline's limit), 2 skipped (did not run, or ran
 * and was not compared with the baseline: untimed, new), 3 a runtime error. */
static int row_count(const oq_bench_rows *rows, size_t i)
{
    const oq_bench_row *r = &rows->rows[i];
    if (r->status == OQ_BENCH_FAILED) return 1;
    if (r->status == OQ_BENCH_ERROR) return 3;
    if (r->status != OQ_BENCH_OK) return 2;
    for (size_t k = 0; rows->baseline && k < rows->baseline->n; k++)
        if (rows->baseline->entries[k].row == i)
            return rows->baseline->entries[k].match == OQ_BENCH_MATCH_OK          ? 0
                   : rows->baseline->entries[k].match == OQ_BENCH_MATCH_REGRESSED ? 1
                                                                                   : 2;
    return 0;
}

/* "verdict: WORD (P passed, F failed, S skipped[, E runtime errors])", the line validate, replay
 * and merge print and `gate` reads: the rows under test (not the reference's). */
static void print_verdict(const cli_state *c, const oq_bench_rows *rows, const oq_bench_verdict *v)
{
    size_t n[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < rows->n; i++)
        if (strncmp(rows->rows[i].variant.name, "ref:", 4)) n[row_count(rows, i)]++;
    const char *word = !strcmp(v->verdict, "passed")  ? "PASSED"
                       : !strcmp(v->verdict, "failed") ? "FAILED"
                       : !strcmp(v->verdict, "error")  ? "ERROR"
                                                       : "NOT TESTED";
    printf("verdict: %s (%zu passed, %zu failed, %zu skipped", word, n[0], n[1], n[2]);
    if (n[3]) printf(", %zu runtime error%s", n[3], n[3] > 1 ? "s" : "");
    /* a gate reading the line sees what its green stands for (docs/gate.md) */
    if (!v->compared && !rows->baseline && v->tested) printf("; timed only: no output compared");
    printf("); details in %s/summary.json\n", oq_cli_shown(c->outdir));
}

/* The sweep starts: under --force the earlier run's set and profiles go now (they would be
 * replaced at the end), and --junit says "did not finish" until the end writes it, so that a run
 * ended at any moment (SIGKILL too) leaves no earlier result to stand for its own; a signal the
 * tool sees says so, with what went. */
static oq_status forget_earlier(cli_state *c, oq_err *err)
{
    char went[256] = "", tail[4096];
    if (c->force) oq_outdir_forget(c->outdir, result_set, N_RESULT_SET, went, sizeof went);
    if (c->force && forget_profiles(c->profile_dir)) snprintf(went + strlen(went), sizeof went - strlen(went),
                                                              "%sprofiles/profile_*.json", *went ? ", " : "");
    oq_status st = oq_cli_junit_unfinished("bench", c->junit, c->outdir, err);
    if (st) return st;
    int n = *went ? snprintf(tail, sizeof tail, " before its results were written: the earlier run's %s in %s went "
                             "when it started (--force)", went, oq_cli_shown(c->outdir))
                  : snprintf(tail, sizeof tail, " before its results were written: none are in %s",
                             oq_cli_shown(c->outdir));
    if (c->junit && n >= 0 && (size_t)n < sizeof tail)
        snprintf(tail + n, sizeof tail - (size_t)n, "; --junit %s says the run did not finish", oq_cli_shown(c->junit));
    oq_cli_signals_say(&c->sigs, "ortqual bench: ", tail);
    return OQ_OK;
}

/* Called by the sweep once its options and inputs are checked, before its first row (its work
 * can take hours): the output folder new or empty unless --force, a folder, writable; then the
 * default-variants note, so that an error before it stays one line. */
static oq_status ready_to_run(void *ctx, oq_err *err)
{
    cli_state *c = ctx;
    oq_status st = oq_outdir_lock_create(c->outdir, NULL, &c->lock, err);
    if (!st) st = oq_check_outdir(c->outdir, c->force, NULL, err);
    if (st) return st == OQ_ERR_NOMEM ? st : oq_err_prefix(err, "--outdir: ");
    if (c->o.model_path && (st = say_model_notes(c, err))) return st;
    if ((st = forget_earlier(c, err))) return st;
    struct stat sb;
    if (c->o.profile_runs && stat(c->profile_dir, &sb) != 0) /* this run makes it */
        oq_atomic_hold_output(c->profile_dir, 1);
    note_default_variants(c);
    return OQ_OK;
}

/* --baseline read, its model and its machine checked before the sweep: a baseline that cannot be
 * used is said before hours of work, and exit 2 (an input of the user's). */
static int open_baseline(cli_state *c, oq_runtime *rt)
{
    if (!c->baseline_path) return OQ_EXIT_OK;
    oq_err err = {0};
    oq_bench_machine here, there;
    oq_status st = oq_bench_baseline_read(c->baseline_path, &c->baseline, &err);
    if (!st) st = oq_bench_baseline_check_model(c->baseline, &c->o, &err);
    if (!st) st = oq_bench_machine_probe(rt, &here, &err);
    if (st) {
        fprintf(stderr, "ortqual bench: --baseline: %s\n", err.msg);
        return st == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
    }
    char config_diff[512];
    if ((st = oq_bench_config_differs(c->baseline, &c->o, config_diff, sizeof config_diff, &err)) || *config_diff) {
        if (st) fprintf(stderr, "ortqual bench: --baseline: %s\n", err.msg);
        else fprintf(stderr, "ortqual bench: --baseline %s: another measurement: %s (the timings are of different "
                             "things)\n", oq_cli_shown(c->baseline_path), oq_cli_shown(config_diff));
        return st == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
    }
    oq_bench_baseline_machine(c->baseline, &there);
    oq_bench_baseline_ort_differs(c->baseline, rt); /* noted in the comparison */
    if (!oq_bench_machine_differs(&here, &there, c->host_diff, sizeof c->host_diff)) return OQ_EXIT_OK;
    /* said by what differs: comparing two ONNX Runtime builds on one host is a use of its own */
    const char *other = strcmp(here.ort_version, there.ort_version) ? "another ONNX Runtime" : "another machine";
    if (c->any_host) {
        fprintf(stderr, "ortqual bench: --baseline %s: %s (%s): compared anyway (--baseline-any-host)\n",
                oq_cli_shown(c->baseline_path), other, oq_cli_shown(c->host_diff));
        return OQ_EXIT_OK;
    }
    fprintf(stderr, "ortqual bench: --baseline %s: %s: %s (timings are not comparable; "
                    "--baseline-any-host compares anyway)\n", oq_cli_shown(c->baseline_path), other,
            oq_cli_shown(c->host_diff));
    return OQ_EXIT_USAGE;
}

static int run_bench(cli_state *c, oq_runtime *rt, int argc, char **argv)
{
    oq_err err = {0};
    progress p = {isatty(2), c->quiet};
    oq_bench_rows *rows = NULL;
    int rc = open_baseline(c, rt);
    if (rc) return rc;
    oq_cli_session_config_warn("bench", oq_runtime_version(rt), c->o.n_session_configs, c->o.session_config_keys,
                               c->o.session_config_values);
    oq_status st = oq_bench_sweep(rt, &c->o, on_progress, &p, &rows, &err);
    if (!st && c->baseline) st = oq_bench_compare(rows, c->baseline, &c->limits, c->host_diff, &err);
    if (st) {
        oq_cli_signals_release(&c->sigs);
        oq_bench_rows_free(rows);
        fprintf(stderr, "ortqual bench: %s\n", err.msg);
        /* a file it cannot read (big-endian, ...) is input: exit 2; --junit says why, not "did not finish" */
        return oq_cli_junit_refused("bench", c->junit, st, err.msg, oq_cli_exit_of(st));
    }
    oq_bench_verdict v;
    oq_bench_verdict_of(&c->o, rows, &v); /* the summary's verdict: the same call */
    int skip_said = !rows->baseline; /* --allow-skip has no say over a baseline's comparison */
    rc = write_outputs(c, rt, rows, argc, argv);
    oq_atomic_keep_outputs(); /* the set whole, or removed by drop_outputs */
    oq_cli_signals_release(&c->sigs);
    if (!rc) print_verdict(c, rows, &v);
    oq_bench_rows_free(rows);
    if (rc) return rc;
    if (v.exit_status || strcmp(v.verdict, "passed")) {
        char said[1024];
        fprintf(stderr, "ortqual bench: %s: %s%s\n", v.verdict, oq_cli_terms(v.reason, said, sizeof said),
                strcmp(v.verdict, "untested") || !skip_said ? ""
                : c->allow_skip                ? "; accepted by --allow-skip"
                                               : "; --allow-skip accepts that");
    }
    return v.exit_status;
}

/* Provider options are checked against the EP that takes them: --ep with --model, else the
 * first variant on a non-CPU runtime (the default variants are chosen first, by the runtime). */
static int open_runtime(cli_state *c, oq_runtime **rt)
{
    *rt = NULL;
    int rc;
    if (!c->o.model_path && !c->o.n_variants &&
        ((rc = oq_cli_runtime_load(&c->cr, rt)) || (rc = default_variants(c, *rt) ? OQ_EXIT_USAGE : 0)))
        return rc;
    struct oq_cli_runtime cr = c->cr;
    for (size_t i = 0; !cr.ep && i < c->o.n_variants; i++)
        if (oq_config_on_ep(&c->o.variants[i])) cr.ep = c->o.variants[i].runtime;
    if (!*rt) return oq_cli_runtime_open(&cr, rt);
    return oq_cli_runtime_check(&cr);
}

/* CUPTI's callbacks go in before ORT loads CUDA; collection is enabled around the profiled
 * runs only. */
static int open_cupti(cli_state *c)
{
    oq_err err = {0};
    if (!c->cupti || !oq_cupti_create(c->cupti_lib, &c->o.cupti, &err)) return OQ_EXIT_OK;
    fprintf(stderr, "ortqual bench: --cupti: %s\n", err.msg);
    return OQ_EXIT_RUNTIME; /* as an ORT or EP library that cannot be loaded */
}

static void state_clear(cli_state *c)
{
    oq_cli_runtime_clear(&c->cr);
    oq_cli_list_clear(&c->tolerances);
    oq_cli_seq_axes_clear(&c->seq_axes);
    oq_cli_list_clear(&c->given);
    free(c->tolerance_text);
    free(c->model_notes);
    oq_bench_baseline_free(c->baseline);
}

int cmd_bench(int argc, char **argv)
{
    cli_state *c = calloc(1, sizeof *c);
    if (!c) return OQ_EXIT_RUNTIME;
    oq_bench_opts_default(&c->o);
    c->outdir = "bench-out";
    int rc = parse_args(c, argc, argv);
    if (rc) {
        state_clear(c);
        free(c);
        return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    }
    rc = oq_cli_check_descriptors("bench"); /* before ORT loads: it fails on a file it cannot open */
    if (rc) {
        state_clear(c);
        free(c);
        return rc;
    }
    snprintf(c->profile_dir, sizeof c->profile_dir, "%s/profiles", c->outdir);
    c->o.profile_dir = c->profile_dir;
    c->o.model_ep = c->cr.ep;
    oq_runtime *rt = NULL;
    /* ORT runs in this process: its crash says where, and (its extended optimizations on)
     * how to tell one of them at fault */
    int extended = c->o.graph_opt != OQ_GRAPH_OPT_DISABLE && c->o.graph_opt != OQ_GRAPH_OPT_BASIC;
    oq_cli_crash_report("ortqual bench", extended ? "ortqual bench: a crash inside ONNX Runtime (a frame above in "
                                                    "libonnxruntime*) may be one of its extended graph optimizations: "
                                                    "see whether --graph-opt-level 1 runs it (--session-config "
                                                    "optimization.disable_specified_optimizers=NAME turns one off "
                                                    "alone)\n"
                                                  : NULL);
    c->o.ready = ready_to_run;
    c->o.allow_skip = c->allow_skip;
    c->o.ready_ctx = c;
    rc = open_cupti(c);
    if (!rc) rc = open_runtime(c, &rt);
    if (!rc) {
        c->o.ep_lib = NULL; /* a registered --ep-lib is found by the runtime */
        c->o.n_ep_options = c->cr.n_options;
        c->o.ep_option_keys = (const char *const *)c->cr.option_keys;
        c->o.ep_option_values = (const char *const *)c->cr.option_values;
        c->o.n_session_configs = c->cr.n_session_configs;
        c->o.session_config_keys = (const char *const *)c->cr.session_config_keys;
        c->o.session_config_values = (const char *const *)c->cr.session_config_values;
        rc = run_bench(c, rt, argc, argv);
    }
    oq_runtime_free(rt);
    oq_cupti_free(c->o.cupti);
    oq_outdir_lock_free(c->lock);
    state_clear(c);
    free(c);
    return rc;
}
