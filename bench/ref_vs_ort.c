/* ref_vs_ort: the float64 references (Attention and the encoder) timed side by side
 * with ONNX Runtime's CPU float32 on the same inputs, on 1 thread and on N.
 *
 * usage: ref_vs_ort [--threads N] [--rounds R] [CASE...]
 *   CASE: attention[:L]  Attention, opset 23, one node, B=1, 16 heads, head size 16
 *                        (default L: 1024 and 4096)
 *         encoder        the encoder, width 128, 2 layers, 4 heads, 8 features,
 *                        ffn 64, one batch of 4 events of 1024 elements
 *         mlpf           the encoder, width 256, 4 layers, 8 heads, 17 features,
 *                        ffn 512, 2 batches of 4 events, lengths uniform 256..2048
 *                        (reference only; projects the time on a 16-core host)
 *   default: attention encoder mlpf
 *   --threads N  threads of the reference and ORT's intra-op threads (default: every online core)
 *   --rounds R   timed rounds after one warm-up (default 5); each round runs the
 *                reference on N threads, on 1 thread and ORT once each, in turn, so
 *                that load from other processes falls on all of them alike, each
 *                after a pause of 0.1 s (ORT's pool threads spin after a run)
 * Prints, per case, the FLOPs (2 per multiply-add of the matrix products; softmax,
 * exp, LayerNorm and ELU not counted), medians [min..max] over the rounds of the
 * wall times (and of the 1-thread run's CPU time, which competing processes do
 * not inflate), the reference's GFLOP/s, its parallel efficiency t1 / (N * tN)
 * and the ratios reference / ORT at the same thread count (N, and 1 against 1:
 * ORT's own N-thread runs swing on a shared VM), and checks that the 1- and
 * N-thread results are bit-identical and agree with ORT (allclose rtol
 * 1e-3, atol 1e-5 Attention, 1e-4 encoder). At the start and the end it prints the
 * load averages and how much faster two spinning threads finish than one (2.0: two
 * free cores), and beside each efficiency ORT's own: the machine's part in them.
 * Exit status 1 when a check fails. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ortqual/events.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"
#include "ortqual/reference.h"
#include "ortqual/runtime.h"
#include "usage.h"

#define USAGE "usage: ref_vs_ort [--threads N>=1] [--rounds 1..99] [attention[:L] | encoder | mlpf]...\n"

enum { HEADS = 16, HEAD = 16, MAX_ROUNDS = 100 };

typedef struct opts {
    int threads, rounds;
} opts;

/* Times (and ratios) of the rounds of one measurement. */
typedef struct series {
    double v[MAX_ROUNDS];
    int n;
} series;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread: a 1-thread reference run's compute time, which
 * other processes competing for the core do not inflate. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Called before each timed run. ORT's intra-op pool threads spin for a while
 * after a run (its default): a pause lets them sleep, so that the next
 * measurement starts with the cores free. Without it the reference's 2-thread
 * Attention at L=1024, which follows ORT's runs, was no faster than its
 * 1-thread run (efficiency 0.50 against 0.71-0.90 with it, same minutes). */
static void settle(void)
{
    usleep(100 * 1000);
}

static void die(const char *what, const oq_err *err)
{
    fprintf(stderr, "ref_vs_ort: %s: %s\n", what, err->msg);
    exit(3);
}

/* The 1, 5 and 15-minute load averages: how much else competed for the cores. */
static const char *load_average(void)
{
    static char buf[64];
    double a[3];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3)
        snprintf(buf, sizeof buf, "%.2f %.2f %.2f", a[0], a[1], a[2]);
    else
        snprintf(buf, sizeof buf, "unknown");
    if (f) fclose(f);
    return buf;
}

/* A fixed amount of dependent arithmetic: one thread's share of the control below. */
static void *spin_work(void *arg)
{
    volatile double x = 0;
    for (long k = 0; k < 50000000; k++) x += 1e-9;
    (void)arg;
    return NULL;
}

/* The control for the efficiency figures: how many times faster two independent
 * spinning threads finish than one does (2.0 = two free cores; a busy machine, or
 * a scheduler that shares the cores among sessions, gives less). */
static double spin_speedup(void)
{
    pthread_t t[2];
    double t0 = now();
    spin_work(NULL);
    double t1 = now();
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, spin_work, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 2 * (t1 - t0) / (now() - t1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const series *s)
{
    double v[MAX_ROUNDS];
    memcpy(v, s->v, sizeof(double) * (size_t)s->n);
    qsort(v, (size_t)s->n, sizeof *v, cmp_double);
    return s->n % 2 ? v[s->n / 2] : 0.5 * (v[s->n / 2 - 1] + v[s->n / 2]);
}

static double lo(const series *s)
{
    double m = INFINITY;
    for (int i = 0; i < s->n; i++) m = fmin(m, s->v[i]);
    return m;
}

static double hi(const series *s)
{
    double m = -INFINITY;
    for (int i = 0; i < s->n; i++) m = fmax(m, s->v[i]);
    return m;
}

static void put(series *s, double v)
{
    if (s->n < MAX_ROUNDS) s->v[s->n++] = v;
}

static void print_series(const char *label, const series *s, const char *unit)
{
    printf("  %-34s %9.4f%s [%.4f..%.4f]\n", label, median(s), unit, lo(s), hi(s));
}

/* Largest |got - ref| / (atol + rtol |ref|) over the elements (<= 1: allclose). */
static double violation(const oq_tensor *got, const oq_tensor *ref, double atol, double rtol,
                        double *max_abs)
{
    double worst = 0.0;
    for (int64_t i = 0; i < oq_tensor_numel(ref); i++) {
        double g = oq_tensor_get_f64(got, i), r = oq_tensor_get_f64(ref, i), d = fabs(g - r);
        if (!(d <= *max_abs)) *max_abs = d;
        double score = d / (atol + rtol * fabs(r));
        if (!(score <= worst)) worst = score;
    }
    return worst;
}

static int same_bits(const oq_tensor *a, const oq_tensor *b)
{
    const size_t n = oq_tensor_nbytes(a);
    return n == oq_tensor_nbytes(b) && !memcmp(a->data, b->data, n);
}

static oq_session *session(oq_runtime *rt, oq_graph *g, int threads)
{
    oq_err err = {0};
    uint8_t *buf;
    size_t len;
    if (oq_graph_serialize(g, &buf, &len, &err)) die("serialize", &err);
    oq_session_opts so = {.intra_op_threads = threads};
    oq_session *s;
    if (oq_session_create(rt, NULL, buf, len, &so, &s, &err)) die("session", &err);
    free(buf);
    return s;
}

/* t1 / (N tN) per round. ORT's own, measured alike, is the control: when other
 * processes leave less than N cores, it drops as much. */
static void print_efficiency(const char *label, const opts *o, const series *t1, const series *tn)
{
    series eff = {0};
    for (int i = 0; i < tn->n; i++) put(&eff, t1->v[i] / (o->threads * tn->v[i]));
    printf("  %-34s %9.3f  [%.3f..%.3f]%s\n", label, median(&eff), lo(&eff), hi(&eff),
           strstr(label, "control") ? "" : "  (target >= 0.7)");
}

/* Reference GFLOP/s and parallel efficiency from the rounds. */
static void summarize(const opts *o, double flop, const series *t1, const series *c1,
                      const series *tn)
{
    printf("  %-34s %9.1f GFLOP/s on %d threads, %.1f on 1 (%.1f per CPU second)\n",
           "reference float64", flop / median(tn) * 1e-9, o->threads, flop / median(t1) * 1e-9,
           flop / median(c1) * 1e-9);
    print_efficiency("parallel efficiency t1/(N tN)", o, t1, tn);
}

static void print_ratio(const char *label, const series *ref, const series *ort, double target)
{
    series r = {0};
    for (int i = 0; i < ref->n; i++) put(&r, ref->v[i] / ort->v[i]);
    printf("  %-34s %9.3f  [%.3f..%.3f]  (target <= %g)\n", label, median(&r), lo(&r), hi(&r),
           target);
}

/* ---- Attention -------------------------------------------------------------- */

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
static oq_graph *attention_model(int64_t L)
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
    return g;
}

static oq_tensor *ref_attention(oq_tensor *const *in, int threads, double *seconds, double *cpu)
{
    oq_ref_attention_attrs attrs;
    oq_ref_attention_attrs_default(&attrs);
    const oq_ref_attention_inputs rin = {.q = in[0], .k = in[1], .v = in[2]};
    oq_ref_attention_outputs out = {0};
    oq_err err = {0};
    settle();
    double t0 = now(), c0 = thread_cpu();
    if (oq_ref_attention(&attrs, &rin, threads, &out, &err)) die("reference", &err);
    *seconds = now() - t0;
    *cpu = thread_cpu() - c0;
    return out.y;
}

static oq_tensor **ort_run(oq_session *s, size_t n_in, oq_tensor *const *in, size_t *n_out,
                           double *seconds)
{
    oq_tensor **out;
    oq_err err = {0};
    settle();
    double t0 = now();
    if (oq_session_run(s, n_in, in, n_out, &out, &err)) die("ORT run", &err);
    *seconds = now() - t0;
    return out;
}

static int bench_attention(oq_runtime *rt, const opts *o, int64_t L)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)L;
    oq_tensor *in[3] = {random_input("Q", L, &seed), random_input("K", L, &seed),
                        random_input("V", L, &seed)};
    oq_graph *g = attention_model(L);
    /* ORT on N threads, on 1 (the control), and on its default thread count (0: the
     * way the earlier reference/ORT figures were taken; on a 2-vCPU VM ORT's default
     * pool has a single thread). */
    oq_session *s = session(rt, g, o->threads), *s1 = session(rt, g, 1), *s0 = session(rt, g, 0);
    oq_graph_free(g);
    const double flop = 2.0 * HEADS * (double)L * (double)L * (HEAD + HEAD);
    printf("attention L=%lld B=1 heads=%d head_size=%d: %.2f GFLOP\n", (long long)L, HEADS, HEAD,
           flop * 1e-9);
    series tn = {0}, t1 = {0}, c1 = {0}, tort = {0}, tort1 = {0}, tort0 = {0};
    int identical = 1;
    double viol = 0, max_abs = 0, t, c;
    for (int r = 0; r <= o->rounds; r++) { /* round 0 is the warm-up */
        oq_tensor *yn = ref_attention(in, o->threads, &t, &c);
        if (r) put(&tn, t);
        oq_tensor *y1 = ref_attention(in, 1, &t, &c);
        if (r) put(&t1, t), put(&c1, c);
        size_t n_out;
        oq_tensor **oy = ort_run(s, 3, in, &n_out, &t);
        if (r) put(&tort, t);
        oq_tensors_free(ort_run(s1, 3, in, &n_out, &t), n_out);
        if (r) put(&tort1, t);
        oq_tensors_free(ort_run(s0, 3, in, &n_out, &t), n_out);
        if (r) put(&tort0, t);
        identical &= same_bits(yn, y1);
        viol = fmax(viol, violation(oy[0], yn, 1e-5, 1e-3, &max_abs));
        oq_tensor_free(yn);
        oq_tensor_free(y1);
        oq_tensors_free(oy, n_out);
    }
    print_series("reference, N threads", &tn, " s");
    print_series("reference, 1 thread", &t1, " s");
    print_series("reference, 1 thread, its CPU time", &c1, " s");
    print_series("ORT CPU fp32, N threads", &tort, " s");
    print_series("ORT CPU fp32, 1 thread", &tort1, " s");
    print_series("ORT CPU fp32, its default threads", &tort0, " s");
    summarize(o, flop, &t1, &c1, &tn);
    print_efficiency("ORT's own efficiency (control)", o, &tort1, &tort);
    print_ratio("ratio reference / ORT (N threads)", &tn, &tort, 1.0);
    /* ORT's own N-thread runs are erratic on a shared VM; one thread against one is not. */
    print_ratio("ratio reference / ORT (1 thread)", &t1, &tort1, 1.0);
    print_ratio("ratio ref (N) / ORT (its default)", &tn, &tort0, 1.0);
    printf("  1 vs %d threads bit-identical: %s; max|ref - ORT| %.2e: %s\n", o->threads,
           identical ? "yes" : "NO", max_abs, viol <= 1 ? "agree" : "DISAGREE");
    oq_session_free(s);
    oq_session_free(s1);
    oq_session_free(s0);
    for (int i = 0; i < 3; i++) oq_tensor_free(in[i]);
    return identical && viol <= 1;
}

/* ---- the encoder ------------------------------------------------------------ */

typedef struct enc_case {
    const char *name;
    oq_encoder_config cfg;
    oq_events_opts ev;
    int with_ort;
} enc_case;

/* FLOPs of the encoder on one event of n valid elements. */
static double encoder_flop(const oq_encoder_config *c, double n)
{
    double W = c->width, FF = c->ffn_width, K = 0;
    for (int i = 0; i < c->n_outputs; i++) K += c->outputs[i].dim;
    double layer = 2 * n * W * (4 * W + 2 * FF) + 4 * n * n * W;
    return 2 * n * c->features * W + c->layers * layer + 2 * n * W * K;
}

static oq_tensor **ref_encoder(oq_encoder_ref *ref, oq_tensor *const *in, int n_out,
                               double *seconds, double *cpu)
{
    oq_tensor **out = calloc((size_t)n_out, sizeof *out);
    oq_err err = {0};
    settle();
    double t0 = now(), c0 = thread_cpu();
    if (!out || oq_encoder_ref_run(ref, in[0], in[1], out, &err)) die("encoder reference", &err);
    *seconds = now() - t0;
    *cpu = thread_cpu() - c0;
    return out;
}

/* What 16 cores of the same speed would take: the compute time of one core (the
 * 1-thread run's CPU time) over 16 threads used as efficiently as the N threads
 * here (every phase has far more than 16 tasks at this size, so the efficiency
 * should not drop from N to 16 threads). */
static void project16(const opts *o, double c1, double t1, double tn)
{
    const double eff = fmin(1.0, t1 / (o->threads * tn));
    printf("  %-34s %9.3f s per batch = %.3f / (16 x %.2f); at efficiency 1: %.3f s\n",
           "projected on 16 cores", c1 / (16 * eff), c1, eff, c1 / 16);
}

static int bench_encoder(oq_runtime *rt, const opts *o, const enc_case *ec)
{
    oq_err err = {0};
    oq_encoder_weights *w;
    oq_events *ev;
    if (oq_encoder_weights_random(&ec->cfg, 1, &w, &err)) die("weights", &err);
    if (oq_events_create(&ec->ev, &ev, &err)) die("events", &err);
    oq_encoder_ref *refn, *ref1;
    if (oq_encoder_ref_create(w, o->threads, &refn, &err) || oq_encoder_ref_create(w, 1, &ref1, &err))
        die("encoder reference", &err);
    /* ORT: attention24 and decomposed on N threads, attention24 on 1 (the control). */
    oq_session *s[3] = {NULL, NULL, NULL};
    const oq_attn_format formats[3] = {OQ_ATTN_ATTENTION24, OQ_ATTN_DECOMPOSED, OQ_ATTN_ATTENTION24};
    for (int k = 0; ec->with_ort && k < 3; k++) {
        oq_encoder_export x = {.format = formats[k], .attention_dtype = OQ_DTYPE_FLOAT32};
        oq_graph *g;
        if (oq_export_encoder(w, &x, &g, &err)) die("export", &err);
        s[k] = session(rt, g, k < 2 ? o->threads : 1);
        oq_graph_free(g);
    }
    const int64_t nb = oq_events_batch_count(ev);
    const int n_out = ec->cfg.n_outputs;
    double flop = 0;
    for (int64_t e = 0; e < oq_events_count(ev); e++)
        flop += encoder_flop(&ec->cfg, (double)oq_events_lengths(ev)[e]);
    flop /= (double)nb;
    printf("encoder %s: width %d, %d layers, %d heads, %d features, ffn %d; %lld events in %lld "
           "batches; %.2f GFLOP per batch\n",
           ec->name, ec->cfg.width, ec->cfg.layers, ec->cfg.heads, ec->cfg.features,
           ec->cfg.ffn_width, (long long)oq_events_count(ev), (long long)nb, flop * 1e-9);
    series tn = {0}, t1 = {0}, c1 = {0}, tort[3] = {{{0}}, {{0}}, {{0}}};
    int identical = 1;
    double viol = 0, max_abs = 0;
    for (int r = 0; r <= o->rounds; r++) {
        double sum_n = 0, sum_1 = 0, cpu_1 = 0, sum_o[3] = {0, 0, 0}, t, c;
        for (int64_t b = 0; b < nb; b++) {
            oq_tensor *in[2];
            if (oq_events_make_batch(ev, b, &in[0], &in[1], NULL, &err)) die("batch", &err);
            oq_tensor **yn = ref_encoder(refn, in, n_out, &t, &c);
            sum_n += t;
            oq_tensor **y1 = ref_encoder(ref1, in, n_out, &t, &c);
            sum_1 += t;
            cpu_1 += c;
            for (int i = 0; i < n_out; i++) identical &= same_bits(yn[i], y1[i]);
            for (int k = 0; k < 3 && s[k]; k++) {
                size_t n;
                oq_tensor **oy = ort_run(s[k], 2, in, &n, &t);
                sum_o[k] += t;
                for (int i = 0; i < n_out; i++) viol = fmax(viol, violation(oy[i], yn[i], 1e-4, 1e-3, &max_abs));
                oq_tensors_free(oy, n);
            }
            oq_tensors_free(yn, (size_t)n_out);
            oq_tensors_free(y1, (size_t)n_out);
            oq_tensor_free(in[0]);
            oq_tensor_free(in[1]);
        }
        if (!r) continue;
        put(&tn, sum_n / (double)nb);
        put(&t1, sum_1 / (double)nb);
        put(&c1, cpu_1 / (double)nb);
        for (int k = 0; k < 3; k++) put(&tort[k], sum_o[k] / (double)nb);
    }
    print_series("reference, N threads", &tn, " s per batch");
    print_series("reference, 1 thread", &t1, " s per batch");
    print_series("reference, 1 thread, its CPU time", &c1, " s per batch");
    if (ec->with_ort) {
        print_series("ORT fp32 attention24, N threads", &tort[0], " s per batch");
        print_series("ORT fp32 decomposed, N threads", &tort[1], " s per batch");
        print_series("ORT fp32 attention24, 1 thread", &tort[2], " s per batch");
    }
    summarize(o, flop, &t1, &c1, &tn);
    if (ec->with_ort) print_efficiency("ORT's own efficiency (control)", o, &tort[2], &tort[0]);
    if (ec->with_ort) {
        print_ratio("ratio reference / ORT attention24", &tn, &tort[0], 3.0);
        print_ratio("ratio reference / ORT decomposed", &tn, &tort[1], 3.0);
    } else {
        project16(o, median(&c1), median(&t1), median(&tn));
    }
    printf("  1 vs %d threads bit-identical: %s", o->threads, identical ? "yes" : "NO");
    if (ec->with_ort) printf("; max|ref - ORT| %.2e: %s", max_abs, viol <= 1 ? "agree" : "DISAGREE");
    printf("\n");
    for (int k = 0; k < 3; k++) oq_session_free(s[k]);
    oq_encoder_ref_free(refn);
    oq_encoder_ref_free(ref1);
    oq_events_free(ev);
    oq_encoder_weights_free(w);
    return identical && viol <= 1;
}

static enc_case encoder_case(const char *name, int32_t width, int32_t layers, int32_t heads,
                             int32_t features, int32_t ffn, int64_t events, const char *lengths,
                             int with_ort)
{
    enc_case c = {.name = name, .with_ort = with_ort};
    oq_encoder_config_default(&c.cfg);
    c.cfg.width = width, c.cfg.layers = layers, c.cfg.heads = heads;
    c.cfg.features = features, c.cfg.ffn_width = ffn;
    c.ev = oq_events_opts_default();
    c.ev.num_events = events, c.ev.batch_size = 4, c.ev.num_features = features;
    oq_err err = {0};
    if (oq_length_policy_parse(lengths, &c.ev, &err)) die("lengths", &err);
    return c;
}

static int run_case(oq_runtime *rt, const opts *o, const char *name)
{
    if (!strncmp(name, "attention", 9)) {
        if (name[9] == ':') return bench_attention(rt, o, atoll(name + 10));
        return bench_attention(rt, o, 1024) & bench_attention(rt, o, 4096);
    }
    enc_case c;
    if (!strcmp(name, "encoder"))
        c = encoder_case("dev case", 128, 2, 4, 8, 64, 4, "fixed 1024", 1);
    else if (!strcmp(name, "mlpf"))
        c = encoder_case("MLPF size", 256, 4, 8, 17, 512, 8, "uniform 256 2048", 0);
    else {
        fprintf(stderr, "ref_vs_ort: unknown case '%s' (attention[:L], encoder, mlpf)\n", name);
        exit(2);
    }
    return bench_encoder(rt, o, &c);
}

int main(int argc, char **argv)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    opts o = {.threads = cores > 0 ? (int)cores : 1, .rounds = 5};
    int i = 1;
    if (argc == 2 && bench_is_help(argv[1])) return bench_usage(USAGE, 1);
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "--threads")) o.threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) o.rounds = atoi(argv[i + 1]);
        else break;
    }
    if (o.threads < 1 || o.rounds < 1 || o.rounds >= MAX_ROUNDS || (i < argc && argv[i][0] == '-'))
        return bench_usage(USAGE, 0);
    oq_runtime *rt;
    oq_err err = {0};
    if (oq_runtime_load(NULL, &rt, &err)) die("load ORT", &err);
    printf("ref_vs_ort: ORT %s CPU, %d threads (%ld cores online), %d rounds after a warm-up; "
           "median [min..max]\nload average %s; 2 spinning threads vs 1: %.2fx\n",
           oq_runtime_version(rt), o.threads, cores, o.rounds, load_average(), spin_speedup());
    int ok = 1;
    if (i == argc) {
        const char *all[] = {"attention", "encoder", "mlpf"};
        for (int k = 0; k < 3; k++) ok &= run_case(rt, &o, all[k]);
    }
    for (; i < argc; i++) ok &= run_case(rt, &o, argv[i]);
    printf("at the end: load average %s; 2 spinning threads vs 1: %.2fx\n", load_average(),
           spin_speedup());
    oq_runtime_free(rt);
    return ok ? 0 : 1;
}
