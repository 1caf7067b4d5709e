/* Harness overhead: ortqual's timed loop (oq_bench_runner_time, the loop
 * `ortqual bench` uses) against a bare OrtApi Run loop, on ONE session in ONE
 * process, for an attention model of about 1 ms.
 *
 * The two loops run in alternating blocks (ortqual first in even blocks, bare
 * first in odd ones) so that drift (frequency, other processes) hits both
 * alike. Each block is timed from outside with CLOCK_MONOTONIC; the per-Run
 * cost of a block is its time divided by its runs. Printed: the median per-Run
 * cost of each loop over the blocks, the ratio of the medians, and the median
 * of the paired ratios (block k of ortqual over block k of bare, run back to
 * back) with its 10-90% range. Target: ratio of medians within 1%.
 *
 * usage: overhead [--blocks N] [--runs-per-block N] [--threads N] [--seq-len L]
 *                 [--target-ms MS]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxruntime_c_api.h"
#include "ortqual/bench.h"
#include "ortqual/events.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"
#include "usage.h"

#define USAGE "usage: overhead [--blocks N] [--runs-per-block N] [--threads N] [--seq-len L] [--target-ms MS]\n"

#define HEADS 8
#define HEAD_DIM 64

typedef struct setup {
    oq_runtime *rt;
    oq_session *s;
    oq_tensor *in[3];
    int64_t seq_len;
} setup;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int die(const char *what, const oq_err *err)
{
    fprintf(stderr, "overhead: %s: %s\n", what, err->msg);
    return 3;
}

static int make_session(setup *su, int64_t L, int threads, oq_err *err)
{
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.heads = c.kv_heads = HEADS;
    c.head_dim = HEAD_DIM;
    c.mask = OQ_MASK_NONE;
    c.format = OQ_ATTN_ATTENTION24;
    oq_graph *g = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    oq_status st = oq_export_sdpa(&c, &g, err);
    if (!st) st = oq_graph_serialize(g, &buf, &len, err);
    oq_graph_free(g);
    oq_session_opts so = {.intra_op_threads = threads};
    if (!st) st = oq_session_create(su->rt, NULL, buf, len, &so, &su->s, err);
    free(buf);
    const char *names[3] = {"query", "key", "value"};
    int64_t shape[4] = {1, HEADS, L, HEAD_DIM};
    oq_rng r;
    oq_rng_seed(&r, 7, 0);
    for (int i = 0; !st && i < 3; i++) {
        st = oq_tensor_create(&su->in[i], OQ_DTYPE_FLOAT32, 4, shape, names[i], err);
        float *x = st ? NULL : su->in[i]->data;
        for (int64_t j = 0; x && j < oq_tensor_numel(su->in[i]); j++) x[j] = (float)oq_rng_normal(&r);
    }
    su->seq_len = L;
    return st ? -1 : 0;
}

static void free_session(setup *su)
{
    for (int i = 0; i < 3; i++) {
        oq_tensor_free(su->in[i]);
        su->in[i] = NULL;
    }
    oq_session_free(su->s);
    su->s = NULL;
}

/* The bare loop: exactly what a user of the C API writes. */
typedef struct bare {
    const OrtApi *api;
    OrtSession *sess;
    OrtValue *in[3];
    const char *in_names[3], *out_name;
} bare;

static int bare_init(bare *b, setup *su, oq_err *err)
{
    memset(b, 0, sizeof *b);
    b->api = oq_runtime_api(su->rt);
    b->sess = oq_session_ort(su->s);
    OrtMemoryInfo *mem = NULL;
    OrtStatus *st = b->api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem);
    for (int i = 0; !st && i < 3; i++) {
        b->in_names[i] = su->in[i]->name;
        st = b->api->CreateTensorWithDataAsOrtValue(mem, su->in[i]->data, oq_tensor_nbytes(su->in[i]),
                                                    su->in[i]->shape, 4,
                                                    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &b->in[i]);
    }
    if (mem) b->api->ReleaseMemoryInfo(mem);
    b->out_name = oq_session_output_name(su->s, 0);
    if (st) {
        oq_err_set(err, OQ_ERR_RUNTIME, "%s", b->api->GetErrorMessage(st));
        b->api->ReleaseStatus(st);
        return -1;
    }
    return 0;
}

static int bare_loop(bare *b, int runs)
{
    for (int i = 0; i < runs; i++) {
        OrtValue *out = NULL;
        OrtStatus *st = b->api->Run(b->sess, NULL, b->in_names, (const OrtValue *const *)b->in, 3,
                                    &b->out_name, 1, &out);
        if (st) {
            fprintf(stderr, "overhead: bare Run: %s\n", b->api->GetErrorMessage(st));
            b->api->ReleaseStatus(st);
            return -1;
        }
        b->api->ReleaseValue(out);
    }
    return 0;
}

static void bare_free(bare *b)
{
    for (int i = 0; i < 3; i++)
        if (b->in[i]) b->api->ReleaseValue(b->in[i]);
}

/* The smallest length from the list whose median Run takes >= target_ms. */
static int calibrate(setup *su, int threads, double target_ms, oq_err *err)
{
    static const int64_t lens[] = {64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        if (make_session(su, lens[k], threads, err)) return -1;
        oq_bench_runner *r = NULL;
        double samples[7];
        oq_stats s = {0};
        if (oq_bench_runner_create(su->s, 3, su->in, OQ_IO_HOST, &r, err) ||
            oq_bench_runner_run(r, err) || oq_bench_runner_time(r, 7, samples, err) ||
            oq_stats_compute(samples, 7, &s, err)) {
            oq_bench_runner_free(r);
            return -1;
        }
        oq_bench_runner_free(r);
        if (s.p50 >= target_ms || k + 1 == sizeof lens / sizeof *lens) return 0;
        free_session(su);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int blocks = 100, runs = 10, threads = 1;
    int64_t seq_len = 0;
    double target_ms = 1.0;
    static const struct option opts[] = {{"blocks", 1, NULL, 'b'}, {"runs-per-block", 1, NULL, 'r'},
                                         {"threads", 1, NULL, 't'}, {"seq-len", 1, NULL, 'l'},
                                         {"target-ms", 1, NULL, 'm'}, {"help", 0, NULL, 'h'}, {0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'b': blocks = atoi(optarg); break;
        case 'r': runs = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        case 'l': seq_len = atoll(optarg); break;
        case 'm': target_ms = atof(optarg); break;
        default: return bench_usage(USAGE, ch == 'h');
        }
    }
    if (optind < argc) return bench_usage(USAGE, 0);
    if (blocks < 2 || runs < 1 || threads < 0) {
        fprintf(stderr, "overhead: --blocks >= 2, --runs-per-block >= 1, --threads >= 0\n");
        return 2;
    }
    oq_err err = {0};
    setup su = {0};
    if (oq_runtime_load(NULL, &su.rt, &err)) return die("load", &err);
    int bad = seq_len > 0 ? make_session(&su, seq_len, threads, &err)
                          : calibrate(&su, threads, target_ms, &err);
    if (bad) return die("session", &err);

    oq_bench_runner *r = NULL;
    bare b;
    if (oq_bench_runner_create(su.s, 3, su.in, OQ_IO_HOST, &r, &err) || bare_init(&b, &su, &err))
        return die("prepare", &err);
    double *samples = calloc((size_t)runs, sizeof *samples);
    double *oq_ms = calloc((size_t)blocks, sizeof *oq_ms), *bare_ms = calloc((size_t)blocks, sizeof *bare_ms);
    if (!samples || !oq_ms || !bare_ms) return 3;
    oq_bench_runner_time(r, (size_t)runs, samples, &err); /* warm-up of both paths */
    bare_loop(&b, runs);
    for (int k = 0; k < blocks; k++) {
        for (int half = 0; half < 2; half++) {
            int ours = (half == 0) == (k % 2 == 0);
            double t0 = now_ms();
            int fail = ours ? (int)oq_bench_runner_time(r, (size_t)runs, samples, &err) : bare_loop(&b, runs);
            double per_run = (now_ms() - t0) / runs;
            if (fail) return die("timed loop", &err);
            (ours ? oq_ms : bare_ms)[k] = per_run;
        }
    }
    double *ratios = calloc((size_t)blocks, sizeof *ratios);
    if (!ratios) return 3;
    for (int k = 0; k < blocks; k++) ratios[k] = oq_ms[k] / bare_ms[k];
    oq_stats so, sb, sr;
    oq_stats_compute(oq_ms, (size_t)blocks, &so, NULL);
    oq_stats_compute(bare_ms, (size_t)blocks, &sb, NULL);
    oq_stats_compute(ratios, (size_t)blocks, &sr, NULL);
    double r10 = 0, r90 = 0;
    {
        double *sorted = malloc((size_t)blocks * sizeof *sorted);
        if (!sorted) return 3;
        memcpy(sorted, ratios, (size_t)blocks * sizeof *sorted);
        for (int i = 1; i < blocks; i++) /* insertion sort: a few hundred values at most */
            for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                double t = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = t;
            }
        r10 = oq_percentile_sorted(sorted, (size_t)blocks, 10);
        r90 = oq_percentile_sorted(sorted, (size_t)blocks, 90);
        free(sorted);
    }
    printf("model: sdpa attention24 fp32, B=1 H=%d L=%lld D=%d, intra-op threads %d, ORT %s\n",
           HEADS, (long long)su.seq_len, HEAD_DIM, threads, oq_runtime_version(su.rt));
    printf("blocks %d x %d runs, alternating order\n", blocks, runs);
    printf("ortqual loop  median %.4f ms/run (min %.4f, max %.4f)\n", so.p50, so.min, so.max);
    printf("bare Run loop median %.4f ms/run (min %.4f, max %.4f)\n", sb.p50, sb.min, sb.max);
    double ratio = so.p50 / sb.p50;
    printf("ratio of medians ortqual/bare %.4f (%+.2f%%): %s\n", ratio, (ratio - 1) * 100,
           ratio > 0.99 && ratio < 1.01 ? "within 1%" : "OUTSIDE 1%");
    printf("paired ratio median %.4f (%+.2f%%), 10-90%% of blocks %.4f..%.4f (the spread is the\n"
           "machine's noise: both loops make the same Run call)\n",
           sr.p50, (sr.p50 - 1) * 100, r10, r90);
    free(ratios);
    free(samples);
    free(oq_ms);
    free(bare_ms);
    bare_free(&b);
    oq_bench_runner_free(r);
    free_session(&su);
    oq_runtime_free(su.rt);
    return 0;
}
