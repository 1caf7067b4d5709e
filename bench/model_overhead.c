/* Harness overhead of `ortqual bench --model`: its timed phase (oq_bench_runner_measure:
 * the timed loop with the memory sampler thread, exactly what a --model row runs) against
 * a bare OrtApi Run loop, on ONE session of the model with the settings bench uses, in ONE
 * process, on the inputs bench --model makes (oq_bench_model_inputs).
 *
 * The two run in alternating blocks of --iters runs (ortqual first in even blocks, bare first
 * in odd ones) so that drift hits both alike. Each block is timed from outside (for ortqual:
 * sampler start and stop included), on two clocks: wall (CLOCK_MONOTONIC) and the process's
 * CPU time (CLOCK_PROCESS_CPUTIME_ID, every thread: the sampler's work counts, the time spent
 * waiting for a core does not). The per-Run cost of a block is its time divided by its runs.
 * Printed per clock: the median per-Run cost of each, the ratio of the medians (target:
 * overhead < 1%), and the median of the paired block ratios with its 10-90% range.
 *
 * usage: model_overhead [--model M.onnx] [--dim NAME=V]... [--shape INPUT=d0,...]...
 *                       [--inputs FILE.npz] [--blocks N] [--iters N] [--threads N]
 *                       [--inter-op-threads N] [--mem-sample-ms MS]
 * Without --model: ortqual's encoder (attention24, width 64, 2 blocks, 4 heads, 17
 * features) exported to a temporary file, at --dim batch=4 --dim seq=256.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "onnxruntime_c_api.h"
#include "ortqual/bench.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"
#include "usage.h"

#define USAGE "usage: model_overhead [--model M.onnx] [--dim NAME=V]... [--shape INPUT=d0,...]...\n"     \
              "       [--inputs FILE.npz] [--blocks N] [--iters N] [--threads N]\n"                   \
              "       [--inter-op-threads N] [--mem-sample-ms MS]\n"

#define MAX_ARGS 16

typedef struct args {
    oq_bench_opts o;
    oq_bench_dim dims[MAX_ARGS];
    oq_bench_shape shapes[MAX_ARGS];
    int blocks;
    char tmp_model[64];
} args;

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int die(const char *what, const oq_err *err)
{
    fprintf(stderr, "model_overhead: %s: %s\n", what, err->msg);
    return 3;
}

/* The default model: ortqual's encoder, written where bench --model can read it. */
static oq_status default_model(args *a, oq_err *err)
{
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    c.features = 17;
    c.width = 64;
    oq_encoder_weights *w = NULL;
    oq_graph *g = NULL;
    oq_encoder_export x = {.format = OQ_ATTN_ATTENTION24};
    snprintf(a->tmp_model, sizeof a->tmp_model, "/tmp/model_overhead_%d.onnx", (int)getpid());
    oq_status st = oq_encoder_weights_random(&c, 1, &w, err);
    if (!st) st = oq_export_encoder(w, &x, &g, err);
    if (!st) st = oq_graph_write(g, a->tmp_model, 1, err);
    oq_graph_free(g);
    oq_encoder_weights_free(w);
    a->o.model_path = a->tmp_model;
    if (!st && !a->o.n_dims) {
        oq_bench_dim_parse_one("batch=4", &a->dims[a->o.n_dims++], err);
        oq_bench_dim_parse_one("seq=256", &a->dims[a->o.n_dims++], err);
    }
    return st;
}

static int parse(args *a, int argc, char **argv)
{
    static const struct option opts[] = {{"model", 1, NULL, 'M'},   {"dim", 1, NULL, 'd'},
                                         {"shape", 1, NULL, 's'},   {"inputs", 1, NULL, 'i'},
                                         {"blocks", 1, NULL, 'b'},  {"iters", 1, NULL, 'n'},
                                         {"threads", 1, NULL, 't'}, {"inter-op-threads", 1, NULL, 'T'},
                                         {"mem-sample-ms", 1, NULL, 'm'}, {"help", 0, NULL, 'h'}, {0}};
    oq_err err = {0};
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        oq_status st = OQ_OK;
        if ((ch == 'd' && a->o.n_dims == MAX_ARGS) || (ch == 's' && a->o.n_input_shapes == MAX_ARGS)) ch = '?';
        switch (ch) {
        case 'M': a->o.model_path = optarg; break;
        case 'd': st = oq_bench_dim_parse_one(optarg, &a->dims[a->o.n_dims++], &err); break;
        case 's': st = oq_bench_shape_parse(optarg, &a->shapes[a->o.n_input_shapes++], &err); break;
        case 'i': a->o.inputs_path = optarg; break;
        case 'b': a->blocks = atoi(optarg); break;
        case 'n': a->o.iters = (size_t)atol(optarg); break;
        case 't': a->o.threads = atoi(optarg); break;
        case 'T': a->o.inter_op_threads = atoi(optarg); break;
        case 'm': a->o.mem_sample_us = (unsigned)(atoi(optarg) * 1000); break;
        case 'h':
            bench_usage(USAGE, 1);
            return -1; /* done: exit 0 */
        default: return bench_usage(USAGE, 0);
        }
        if (st) {
            fprintf(stderr, "model_overhead: %s\n", err.msg);
            return 2;
        }
    }
    if (optind < argc) return bench_usage(USAGE, 0);
    if (a->blocks < 2 || a->o.iters < 1 || a->o.threads < 0 || a->o.inter_op_threads < 0) {
        fprintf(stderr, "model_overhead: --blocks >= 2, --iters >= 1, --threads >= 0\n");
        return 2;
    }
    a->o.dims = a->dims;
    a->o.input_shapes = a->shapes;
    return 0;
}

/* ---- the bare loop: what a user of the C API writes -------------------------------------- */

typedef struct bare {
    const OrtApi *api;
    OrtSession *sess;
    size_t n_in, n_out;
    OrtValue **in;
    const char **in_names, **out_names;
    OrtValue **out;
} bare;

static int bare_init(bare *b, oq_session *s, oq_tensor **in, size_t n, oq_err *err)
{
    memset(b, 0, sizeof *b);
    b->api = oq_runtime_api(oq_session_runtime(s));
    b->sess = oq_session_ort(s);
    b->n_in = n;
    b->n_out = oq_session_output_count(s);
    b->in = calloc(n, sizeof *b->in);
    b->in_names = calloc(n, sizeof *b->in_names);
    b->out_names = calloc(b->n_out, sizeof *b->out_names);
    b->out = calloc(b->n_out, sizeof *b->out);
    if (!b->in || !b->in_names || !b->out_names || !b->out) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    OrtMemoryInfo *mem = NULL;
    OrtStatus *st = b->api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem);
    for (size_t i = 0; !st && i < n; i++) {
        b->in_names[i] = in[i]->name;
        st = b->api->CreateTensorWithDataAsOrtValue(mem, in[i]->data, oq_tensor_nbytes(in[i]), in[i]->shape,
                                                    (size_t)in[i]->ndim, (ONNXTensorElementDataType)in[i]->dtype,
                                                    &b->in[i]);
    }
    if (mem) b->api->ReleaseMemoryInfo(mem);
    for (size_t i = 0; i < b->n_out; i++) b->out_names[i] = oq_session_output_name(s, i);
    if (st) {
        oq_err_set(err, OQ_ERR_RUNTIME, "%s", b->api->GetErrorMessage(st));
        b->api->ReleaseStatus(st);
        return -1;
    }
    return 0;
}

static int bare_loop(bare *b, size_t runs)
{
    for (size_t i = 0; i < runs; i++) {
        OrtStatus *st = b->api->Run(b->sess, NULL, b->in_names, (const OrtValue *const *)b->in, b->n_in,
                                    b->out_names, b->n_out, b->out);
        if (st) {
            fprintf(stderr, "model_overhead: bare Run: %s\n", b->api->GetErrorMessage(st));
            b->api->ReleaseStatus(st);
            return -1;
        }
        for (size_t k = 0; k < b->n_out; k++) {
            b->api->ReleaseValue(b->out[k]);
            b->out[k] = NULL;
        }
    }
    return 0;
}

static void bare_free(bare *b)
{
    for (size_t i = 0; b->in && i < b->n_in; i++)
        if (b->in[i]) b->api->ReleaseValue(b->in[i]);
    free(b->in);
    free(b->in_names);
    free(b->out_names);
    free(b->out);
}

/* ---- the comparison ---------------------------------------------------------------------- */

/* Per block and per Run: wall time (CLOCK_MONOTONIC) and the process's CPU time
 * (CLOCK_PROCESS_CPUTIME_ID: every thread, the sampler's included, but not the time the
 * process waited for a core, which dominates the wall time on a loaded machine). */
typedef struct result {
    double *oq_ms, *bare_ms, *ratio;
    double *oq_cpu, *bare_cpu, *cpu_ratio;
    int peak_exact; /* the timed phase read the peak RSS from a reset VmHWM (no sampling thread) */
} result;

static int alternate(const args *a, oq_bench_runner *r, bare *b, double *samples, result *res, oq_err *err)
{
    int64_t peak = 0;
    int exact = 0;
    for (int k = 0; k < a->blocks; k++)
        for (int half = 0; half < 2; half++) {
            int ours = (half == 0) == (k % 2 == 0);
            double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
            int fail = ours ? (int)oq_bench_runner_measure(r, a->o.iters, a->o.mem_sample_us, samples, &peak, &exact, err)
                            : bare_loop(b, a->o.iters);
            double runs = (double)a->o.iters;
            double per_run = (clock_ms(CLOCK_MONOTONIC) - t0) / runs, cpu = (clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0) / runs;
            if (fail) return -1;
            (ours ? res->oq_ms : res->bare_ms)[k] = per_run;
            (ours ? res->oq_cpu : res->bare_cpu)[k] = cpu;
        }
    res->peak_exact = exact;
    for (int k = 0; k < a->blocks; k++) {
        res->ratio[k] = res->oq_ms[k] / res->bare_ms[k];
        res->cpu_ratio[k] = res->oq_cpu[k] / res->bare_cpu[k];
    }
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One clock's lines: medians per Run, ratio of the medians, paired ratios. */
static void report_clock(const char *clock, size_t n, double *oq, double *bare_ms, double *ratio)
{
    oq_stats so, sb, sr;
    oq_stats_compute(oq, n, &so, NULL);
    oq_stats_compute(bare_ms, n, &sb, NULL);
    oq_stats_compute(ratio, n, &sr, NULL);
    qsort(ratio, n, sizeof *ratio, cmp_double);
    double r10 = oq_percentile_sorted(ratio, n, 10), r = so.p50 / sb.p50;
    printf("%s: bench --model timed phase %.4f ms/run, bare Run loop %.4f ms/run (medians)\n", clock, so.p50, sb.p50);
    printf("  ratio of medians ortqual/bare %.4f (%+.2f%%): %s\n", r, (r - 1) * 100,
           r < 1.01 ? "overhead < 1%" : "OVERHEAD >= 1%");
    printf("  paired block ratios: median %.4f (%+.2f%%), 10-90%% %.4f..%.4f\n", sr.p50, (sr.p50 - 1) * 100, r10,
           sr.p90);
}

static void report(const args *a, oq_session *s, const result *res, size_t n_in, oq_tensor **in)
{
    size_t n = (size_t)a->blocks;
    printf("model: %s, ORT %s, intra-op threads %d, inter-op threads %d\n", a->o.model_path,
           oq_runtime_version(oq_session_runtime(s)), a->o.threads, a->o.inter_op_threads);
    if (res->peak_exact)
        printf("peak RSS of the timed phase: VmHWM reset before it and read after (no sampling thread)\n");
    else
        printf("peak RSS of the timed phase: sampled every %u us by a thread (VmHWM cannot be reset here)\n",
               a->o.mem_sample_us);
    printf("inputs:");
    for (size_t i = 0; i < n_in; i++) {
        char shape[128];
        printf(" %s %s %s", in[i]->name, oq_dtype_name(in[i]->dtype), oq_shape_str(in[i], shape, sizeof shape));
    }
    printf("\nblocks %d x %zu runs, alternating order\n", a->blocks, a->o.iters);
    report_clock("wall (CLOCK_MONOTONIC)", n, res->oq_ms, res->bare_ms, res->ratio);
    report_clock("CPU (CLOCK_PROCESS_CPUTIME_ID, all threads)", n, res->oq_cpu, res->bare_cpu, res->cpu_ratio);
    printf("(both make the same Run call: the spread of the paired ratios is the machine's noise; on a\n"
           "loaded machine the CPU clock, which leaves out the time spent waiting for a core, is the one\n"
           "that can resolve 1%%)\n");
}

int main(int argc, char **argv)
{
    args a;
    memset(&a, 0, sizeof a);
    oq_bench_opts_default(&a.o);
    a.blocks = 60;
    a.o.threads = 1;
    int rc = parse(&a, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    oq_err err = {0};
    if (!a.o.model_path && default_model(&a, &err)) return die("export", &err);
    oq_runtime *rt = NULL;
    if (oq_runtime_load(NULL, &rt, &err)) return die("load", &err);
    size_t n_in = 0;
    oq_tensor **in = NULL;
    oq_session *s = NULL;
    oq_session_opts so = {.intra_op_threads = a.o.threads, .inter_op_threads = a.o.inter_op_threads,
                          .graph_opt = a.o.graph_opt};
    oq_bench_runner *r = NULL;
    bare b = {0};
    if (oq_bench_model_inputs(&a.o, 0, &n_in, &in, &err)) return die("inputs", &err);
    if (oq_session_create(rt, a.o.model_path, NULL, 0, &so, &s, &err)) return die("session", &err);
    if (oq_bench_runner_create(s, n_in, in, OQ_IO_HOST, &r, &err) || bare_init(&b, s, in, n_in, &err))
        return die("prepare", &err);
    size_t n = (size_t)a.blocks;
    double *samples = calloc(a.o.iters, sizeof *samples);
    double *mem = calloc(6 * n, sizeof(double));
    result res = {mem, mem + n, mem + 2 * n, mem + 3 * n, mem + 4 * n, mem + 5 * n};
    if (!samples || !mem) return 3;
    int64_t peak = 0; /* warm-up of both paths */
    int exact = 0;
    if (oq_bench_runner_measure(r, a.o.iters, a.o.mem_sample_us, samples, &peak, &exact, &err) || bare_loop(&b, a.o.iters) ||
        alternate(&a, r, &b, samples, &res, &err))
        return die("timed loop", &err);
    report(&a, s, &res, n_in, in);
    free(samples);
    free(mem);
    bare_free(&b);
    oq_bench_runner_free(r);
    oq_session_free(s);
    oq_tensors_free(in, n_in);
    oq_runtime_free(rt);
    if (*a.tmp_model) unlink(a.tmp_model);
    return 0;
}
