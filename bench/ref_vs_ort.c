/* ref_vs_ort: time ortqual's float64 Attention reference against ONNX Runtime's
 * CPU float32 Attention (opset 23, one node, 4-D inputs) on the same inputs,
 * check that they agree, and print both times and their ratio.
 *
 * usage: ref_vs_ort [L...]        (default: 1024 4096; B=1, 16 heads, head size 16)
 * env:   REPS (timed runs, default 3; the best is reported), OMP_NUM_THREADS for
 *        the reference; ORT uses its default intra-op thread count.
 * Exit status 1 when the outputs disagree (allclose rtol 1e-3, atol 1e-5). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "ortqual/graph.h"
#include "ortqual/reference.h"
#include "ortqual/runtime.h"

enum { HEADS = 16, HEAD = 16 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const oq_err *err)
{
    fprintf(stderr, "ref_vs_ort: %s: %s\n", what, err->msg);
    exit(2);
}

/* Uniform [-1, 1) from a fixed-seed xorshift, so every run sees the same inputs. */
static oq_tensor *random_input(const char *name, int64_t L, uint64_t *seed)
{
    const int64_t shape[4] = {1, HEADS, L, HEAD};
    oq_tensor *t;
    oq_err err = {0};
    if (oq_tensor_create(&t, OQ_DTYPE_FLOAT32, 4, shape, name, &err)) die("tensor", &err);
    float *d = t->data;
    for (int64_t i = 0; i < oq_tensor_numel(t); i++) {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        d[i] = (float)((double)(*seed >> 11) * 0x1p-52 - 1.0);
    }
    return t;
}

/* One Attention node, opset 23, static [1, 16, L, 16] inputs, built in memory. */
static uint8_t *attention_model(int64_t L, size_t *len)
{
    const oq_opset ops[] = {{"", 23}};
    oq_graph *g;
    oq_err err = {0};
    if (oq_graph_create(ops, 1, "ref_vs_ort", &g, &err)) die("graph", &err);
    const oq_dim dims[4] = {OQ_DIM(1), OQ_DIM(HEADS), OQ_DIM(L), OQ_DIM(HEAD)};
    oq_graph_add_input(g, "Q", OQ_DTYPE_FLOAT32, 4, dims);
    oq_graph_add_input(g, "K", OQ_DTYPE_FLOAT32, 4, dims);
    oq_graph_add_input(g, "V", OQ_DTYPE_FLOAT32, 4, dims);
    oq_graph_add_node(g, "Attention", NULL, "attn", 3, (const char *[]){"Q", "K", "V"}, 1,
                      (const char *[]){"Y"}, 0, NULL);
    oq_graph_add_output(g, "Y", "Y", OQ_DTYPE_FLOAT32, 4, dims);
    uint8_t *buf;
    if (oq_graph_serialize(g, &buf, len, &err)) die("serialize", &err);
    oq_graph_free(g);
    return buf;
}

static double max_violation(const oq_tensor *got, const oq_tensor *ref, double *max_abs)
{
    double worst = 0.0;
    *max_abs = 0.0;
    for (int64_t i = 0; i < oq_tensor_numel(ref); i++) {
        double g = oq_tensor_get_f64(got, i), r = oq_tensor_get_f64(ref, i), d = fabs(g - r);
        double score = d / (1e-5 + 1e-3 * fabs(r));
        if (!(d <= *max_abs)) *max_abs = d;
        if (!(score <= worst)) worst = score;
    }
    return worst;
}

static int bench_one(oq_runtime *rt, int64_t L, int reps)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)L;
    oq_tensor *in[3] = {random_input("Q", L, &seed), random_input("K", L, &seed),
                        random_input("V", L, &seed)};
    oq_err err = {0};
    size_t len;
    uint8_t *model = attention_model(L, &len);
    oq_session_opts so = {0};
    oq_session *s;
    if (oq_session_create(rt, NULL, model, len, &so, &s, &err)) die("session", &err);
    free(model);

    oq_ref_attention_attrs attrs;
    oq_ref_attention_attrs_default(&attrs);
    const oq_ref_attention_inputs rin = {.q = in[0], .k = in[1], .v = in[2]};
    double t_ref = INFINITY, t_ort = INFINITY;
    oq_ref_attention_outputs rout = {0};
    oq_tensor **oout = NULL;
    size_t n_out = 0;
    for (int r = 0; r <= reps; r++) { /* run 0 is the warm-up */
        oq_ref_attention_outputs_clear(&rout);
        oq_tensors_free(oout, n_out);
        double t0 = now();
        if (oq_ref_attention(&attrs, &rin, &rout, &err)) die("reference", &err);
        double t1 = now();
        if (oq_session_run(s, 3, in, &n_out, &oout, &err)) die("ORT run", &err);
        double t2 = now();
        if (r > 0) {
            t_ref = fmin(t_ref, t1 - t0);
            t_ort = fmin(t_ort, t2 - t1);
        }
    }
    double max_abs, viol = max_violation(oout[0], rout.y, &max_abs);
    int agree = viol <= 1.0;
    printf("L=%-6lld ref %8.4f s   ort %8.4f s   ratio ref/ort %6.2f   max|diff| %.2e   %s\n",
           (long long)L, t_ref, t_ort, t_ref / t_ort, max_abs, agree ? "agree" : "DISAGREE");
    oq_ref_attention_outputs_clear(&rout);
    oq_tensors_free(oout, n_out);
    oq_session_free(s);
    for (int i = 0; i < 3; i++) oq_tensor_free(in[i]);
    return agree;
}

int main(int argc, char **argv)
{
    int reps = getenv("REPS") ? atoi(getenv("REPS")) : 3;
    if (reps < 1) reps = 1;
    oq_runtime *rt;
    oq_err err = {0};
    if (oq_runtime_load(NULL, &rt, &err)) die("load ORT", &err);
    printf("ref_vs_ort: B=1 heads=%d head_size=%d float32, ORT %s CPU (default threads), "
           "reference float64 with %d OpenMP threads, best of %d\n",
           HEADS, HEAD, oq_runtime_version(rt), omp_get_max_threads(), reps);
    int ok = 1;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) ok &= bench_one(rt, atoll(argv[i]), reps);
    } else {
        ok &= bench_one(rt, 1024, reps);
        ok &= bench_one(rt, 4096, reps);
    }
    oq_runtime_free(rt);
    return ok ? 0 : 1;
}
