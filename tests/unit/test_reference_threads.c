/* The references on several threads: bit-identical to one thread (Attention with
 * masks, GQA, softcap, causal, past and qk outputs; the encoder), long rows
 * (several key chunks, so the online softmax rescales) against a plain
 * two-pass float64 computation, the kernels (exp, matrix tiles) against libm
 * and plain loops, and the thread-count rules. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <omp.h>

#include "ortqual/reference.h"
#include "reference/reference-impl.h"

/* Thread counts compared with 1: more than the blocks of a head, fewer, and odd. */
static const int thread_counts[] = {2, 3, 7};

static uint64_t rng = 1;

static double uniform(void) /* [-1, 1) */
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) * 0x1p-52 - 1.0;
}

static oq_tensor *rand_t(oq_dtype dt, int32_t nd, const int64_t *shape, double amp)
{
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, dt, nd, shape, NULL, NULL), OQ_OK);
    for (int64_t i = 0; i < oq_tensor_numel(t); i++) oq_tensor_set_f64(t, i, amp * uniform());
    return t;
}

static void assert_same_bits(const oq_tensor *a, const oq_tensor *b, const char *what, int threads)
{
    if (!a && !b) return;
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(oq_tensor_nbytes(a), oq_tensor_nbytes(b));
    if (memcmp(a->data, b->data, oq_tensor_nbytes(a)))
        fail_msg("%s differs between 1 and %d threads", what, threads);
}

/* Run `in` on 1 thread and on each of thread_counts; every output must be the same bits. */
static void attention_identical(const oq_ref_attention_attrs *a, const oq_ref_attention_inputs *in,
                                int want_present, int want_qk)
{
    oq_ref_attention_outputs one = {.want_present = want_present, .want_qk_matmul_output = want_qk};
    oq_err err = {0};
    assert_int_equal(oq_ref_attention(a, in, 1, &one, &err), OQ_OK);
    for (size_t k = 0; k < sizeof thread_counts / sizeof *thread_counts; k++) {
        oq_ref_attention_outputs many = {.want_present = want_present, .want_qk_matmul_output = want_qk};
        assert_int_equal(oq_ref_attention(a, in, thread_counts[k], &many, &err), OQ_OK);
        assert_same_bits(one.y, many.y, "Y", thread_counts[k]);
        assert_same_bits(one.present_key, many.present_key, "present_key", thread_counts[k]);
        assert_same_bits(one.present_value, many.present_value, "present_value", thread_counts[k]);
        assert_same_bits(one.qk_matmul_output, many.qk_matmul_output, "qk_matmul_output",
                         thread_counts[k]);
        oq_ref_attention_outputs_clear(&many);
    }
    oq_ref_attention_outputs_clear(&one);
}

/* 4-D, GQA (4 query heads on 2 kv heads), a past, causal, softcap, a bool mask
 * broadcast over heads, head sizes 12 and 20 (not multiples of the kernels'
 * 16), 300 keys (two chunks); Y, present and every qk_matmul_output mode. */
static void test_attention_threads_masks_gqa_softcap_causal(void **state)
{
    (void)state;
    const int64_t qs[4] = {2, 4, 37, 12}, ks[4] = {2, 2, 295, 12}, vs[4] = {2, 2, 295, 20},
                  pks[4] = {2, 2, 5, 12}, pvs[4] = {2, 2, 5, 20}, ms[4] = {2, 1, 37, 300};
    oq_tensor *q = rand_t(OQ_DTYPE_FLOAT32, 4, qs, 2), *k = rand_t(OQ_DTYPE_FLOAT32, 4, ks, 2),
              *v = rand_t(OQ_DTYPE_FLOAT32, 4, vs, 1), *pk = rand_t(OQ_DTYPE_FLOAT32, 4, pks, 2),
              *pv = rand_t(OQ_DTYPE_FLOAT32, 4, pvs, 1), *m = rand_t(OQ_DTYPE_BOOL, 4, ms, 0);
    uint8_t *md = m->data;
    for (int64_t i = 0; i < oq_tensor_numel(m); i++) md[i] = uniform() > -0.6; /* 80% attend */
    for (int64_t j = 0; j < 300; j++) md[3 * 300 + j] = 0; /* query 3 of event 0 sees nothing */
    oq_ref_attention_attrs a;
    oq_ref_attention_attrs_default(&a);
    a.is_causal = 1;
    a.softcap = 2.5;
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v, .attn_mask = m, .past_key = pk,
                                  .past_value = pv};
    for (int mode = 0; mode < 4; mode++) {
        a.qk_matmul_output_mode = mode;
        attention_identical(&a, &in, 1, 1);
    }
    oq_tensor *ts[] = {q, k, v, pk, pv, m};
    for (int i = 0; i < 6; i++) oq_tensor_free(ts[i]);
}

/* 3-D float64 inputs, a float mask broadcast over batch and heads, opset-24
 * nonpad_kv_seqlen with causal (external cache), 3 heads of size 16, 600 keys. */
static void test_attention_threads_3d_seqlen(void **state)
{
    (void)state;
    const int64_t qs[3] = {3, 21, 48}, ks[3] = {3, 600, 48}, ms[2] = {21, 600}, ns[1] = {3};
    oq_tensor *q = rand_t(OQ_DTYPE_FLOAT64, 3, qs, 3), *k = rand_t(OQ_DTYPE_FLOAT64, 3, ks, 3),
              *v = rand_t(OQ_DTYPE_FLOAT64, 3, ks, 1), *m = rand_t(OQ_DTYPE_FLOAT64, 2, ms, 4),
              *n = NULL;
    assert_int_equal(oq_tensor_create(&n, OQ_DTYPE_INT64, 1, ns, NULL, NULL), OQ_OK);
    const int64_t lens[3] = {600, 300, 40};
    memcpy(n->data, lens, sizeof lens);
    oq_ref_attention_attrs a;
    oq_ref_attention_attrs_default(&a);
    a.q_num_heads = a.kv_num_heads = 3;
    a.is_causal = 1;
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v, .attn_mask = m, .nonpad_kv_seqlen = n};
    attention_identical(&a, &in, 0, 0);
    oq_tensor *ts[] = {q, k, v, m, n};
    for (int i = 0; i < 5; i++) oq_tensor_free(ts[i]);
}

/* y of one (b, h, i) by the textbook: all scores, mask, max, exp, sum, weighted sum. */
static void plain_row(const double *q, const double *k, const double *v, const double *bias,
                      int64_t T, int64_t D, int64_t Dv, double scale, double *y)
{
    double *s = malloc(sizeof *s * (size_t)T), mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < T; j++) {
        double dot = 0;
        for (int64_t d = 0; d < D; d++) dot += q[d] * k[j * D + d];
        s[j] = dot * scale + bias[j];
        mx = fmax(mx, s[j]);
    }
    for (int64_t j = 0; j < T; j++) sum += s[j] = mx == -INFINITY ? 0 : exp(s[j] - mx);
    for (int64_t d = 0; d < Dv; d++) {
        double acc = 0;
        for (int64_t j = 0; j < T; j++) acc += s[j] * v[j * Dv + d];
        y[d] = sum > 0 ? acc / sum : 0;
    }
    free(s);
}

/* Y of `in` (4-D, B = 1, float64; mask [L, T] or none) against plain_row, to
 * 1e-12 relative; row nan_row of every head must be NaN. */
static void match_two_pass(const oq_ref_attention_inputs *in, int64_t nan_row)
{
    const int64_t H = in->q->shape[1], L = in->q->shape[2], D = in->q->shape[3],
                  T = in->k->shape[2], Dv = in->v->shape[3];
    oq_ref_attention_attrs a;
    oq_ref_attention_attrs_default(&a);
    oq_ref_attention_outputs out = {0};
    assert_int_equal(oq_ref_attention(&a, in, 0, &out, NULL), OQ_OK);
    const double *y = out.y->data, scale = 1 / sqrt((double)D);
    double *zeros = calloc((size_t)T, sizeof *zeros), want[16];
    for (int64_t h = 0; h < H; h++)
        for (int64_t i = 0; i < L; i++) {
            const double *bias = in->attn_mask ? (double *)in->attn_mask->data + i * T : zeros;
            plain_row((double *)in->q->data + (h * L + i) * D, (double *)in->k->data + h * T * D,
                      (double *)in->v->data + h * T * Dv, bias, T, D, Dv, scale, want);
            for (int64_t d = 0; d < Dv; d++) {
                const double got = y[(h * L + i) * Dv + d];
                if (i == nan_row) {
                    assert_true(isnan(got));
                } else if (!(fabs(got - want[d]) <= 1e-12 * fmax(1.0, fabs(want[d])))) {
                    fail_msg("head %lld row %lld column %lld: got %.17g, two-pass %.17g",
                             (long long)h, (long long)i, (long long)d, got, want[d]);
                }
            }
        }
    free(zeros);
    oq_ref_attention_outputs_clear(&out);
}

/* 700 keys (three chunks) with scores that grow along the keys, so later chunks
 * raise the running maximum, and rows with one score raised by 50, 800 and 20
 * (above and below what the running maximum may stand for); rows whose first
 * chunk is all masked (maximum -inf, then finite), fully masked rows and one NaN
 * score: the online softmax against the plain one, to 1e-12 relative. */
static void test_attention_long_rows_match_two_pass(void **state)
{
    (void)state;
    const int64_t B = 1, H = 2, L = 19, T = 700, D = 9, Dv = 5;
    const int64_t qs[4] = {B, H, L, D}, ks[4] = {B, H, T, D}, vs[4] = {B, H, T, Dv},
                  ms[2] = {L, T};
    oq_tensor *q = rand_t(OQ_DTYPE_FLOAT64, 4, qs, 1), *k = rand_t(OQ_DTYPE_FLOAT64, 4, ks, 1),
              *v = rand_t(OQ_DTYPE_FLOAT64, 4, vs, 1), *m = rand_t(OQ_DTYPE_FLOAT64, 2, ms, 1);
    double *kd = k->data, *md = m->data;
    for (int64_t h = 0; h < H; h++)
        for (int64_t j = 0; j < T; j++) kd[(h * T + j) * D] += 0.02 * (double)j; /* rising scores */
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < T; j++) {
            if (i % 3 == 1 && j < 300) md[i * T + j] = -INFINITY; /* first chunk masked */
            if (i == 5) md[i * T + j] = -INFINITY;                 /* every key masked */
        }
    md[7 * T + 650] = NAN;
    md[10 * T + 500] = 50;  /* jumps past what the running maximum may stand for, */
    md[12 * T + 400] = 800; /* one past float64's exp range, */
    md[11 * T + 600] = 20;  /* and one it may stand for */
    match_two_pass(&(oq_ref_attention_inputs){.q = q, .k = k, .v = v, .attn_mask = m}, 7);
    oq_tensor *ts[] = {q, k, v, m};
    for (int i = 0; i < 4; i++) oq_tensor_free(ts[i]);
}

/* The same without a mask, through the kernel that keeps a block's rows in the
 * lanes of a vector (D and Dv <= 16): scores rising along the keys, a row whose
 * scores span more than float64's exp range (weights flushed to 0), one whose
 * query has a NaN, one whose scores are all below -1022, and 19 rows (a block
 * of 3); T keys, head size D. */
static void lanes_case(int64_t T, int64_t D, int64_t Dv)
{
    const int64_t qs[4] = {1, 2, 19, D}, ks[4] = {1, 2, T, D}, vs[4] = {1, 2, T, Dv};
    oq_tensor *q = rand_t(OQ_DTYPE_FLOAT64, 4, qs, 1), *k = rand_t(OQ_DTYPE_FLOAT64, 4, ks, 1),
              *v = rand_t(OQ_DTYPE_FLOAT64, 4, vs, 1);
    double *kd = k->data, *qd = q->data;
    for (int64_t j = 0; j < 2 * T; j++) kd[j * D] = 1.0 + 0.02 * (double)(j % T);
    for (int64_t h = 0; h < 2; h++) {
        for (int64_t d = 0; d < D; d++) qd[(h * 19 + 12) * D + d] *= 3000; /* span > 1022 */
        qd[(h * 19 + 7) * D + D / 2] = NAN;
        /* Every score far below 0 (the padding keys' score): a maximum taken
         * over the padding too would flush every weight. */
        for (int64_t d = 0; d < D; d++) qd[(h * 19 + 4) * D + d] = d ? 0.0 : -3000.0;
    }
    match_two_pass(&(oq_ref_attention_inputs){.q = q, .k = k, .v = v}, 7);
    oq_tensor *ts[] = {q, k, v};
    for (int i = 0; i < 3; i++) oq_tensor_free(ts[i]);
}

/* Three chunks, the last ending inside a panel of 16 keys; head sizes below 16
 * (some FMAs of a panel skipped); chunks shorter than the keys the weights run
 * ahead of their products (9) and than one group of 8 (5). */
static void test_attention_lanes_match_two_pass(void **state)
{
    (void)state;
    lanes_case(700, 16, 11);
    lanes_case(300, 9, 16);
    lanes_case(9, 16, 3);
    lanes_case(5, 7, 7);
}

/* Y of the rows of `q` (4-D, B = H = 1, float64) against k and v. */
static oq_tensor *attend(oq_tensor *q, oq_tensor *k, oq_tensor *v)
{
    oq_ref_attention_attrs a;
    oq_ref_attention_attrs_default(&a);
    oq_ref_attention_outputs out = {0};
    assert_int_equal(oq_ref_attention(&a, &(oq_ref_attention_inputs){.q = q, .k = k, .v = v}, 1, &out,
                                      NULL), OQ_OK);
    return out.y;
}

/* The lanes kernel shifts each row by a bound of its scores when the bound is small (no
 * running maximum) and by the running maximum otherwise; a row's bits must not depend on
 * which its neighbours in the block of 8 take: rows 0, 2 .. 7 alike beside a row 1 of
 * ordinary queries and beside one whose bound is far too large for a fixed shift. */
static void test_attention_lanes_row_alone(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 1, 8, 16}, ks[4] = {1, 1, 300, 16};
    oq_tensor *q = rand_t(OQ_DTYPE_FLOAT64, 4, qs, 1), *k = rand_t(OQ_DTYPE_FLOAT64, 4, ks, 1),
              *v = rand_t(OQ_DTYPE_FLOAT64, 4, ks, 1);
    oq_tensor *plain = attend(q, k, v);
    for (int d = 0; d < 16; d++) ((double *)q->data)[16 + d] *= 400; /* row 1's bound ~ 1000 */
    oq_tensor *beside = attend(q, k, v);
    const double *a = plain->data, *b = beside->data;
    for (int r = 0; r < 8; r++)
        if (r != 1 && memcmp(a + r * 16, b + r * 16, 16 * sizeof *a))
            fail_msg("row %d changed with row 1's queries", r);
    oq_tensor *ts[] = {q, k, v, plain, beside};
    for (int i = 0; i < 5; i++) oq_tensor_free(ts[i]);
}

/* The lanes kernel on one block, its keys' bound given (kmax) or not (NULL): out, 8 rows of 16. */
static void lanes_block(const double *q, const double *kp, const double *kmax, const double *vp,
                        int64_t T, double *out)
{
    oq_ref_block b = {.q = q, .ldq = 16, .rows = 8, .kp = kp, .kmax = kmax, .vp = vp, .D = 16, .T = T,
                      .Dv = 16};
    for (int r = 0; r < 8; r++) b.end[r] = T;
    double *scratch = oq_ref_alloc(OQ_REF_ATTEND_SCRATCH);
    assert_non_null(scratch);
    oq_ref_attend(&b, scratch, out);
    free(scratch);
}

/* With the keys' bound the kernel takes the fixed shift: its bits differ from the running
 * maximum's (the rounding differs) and its values agree with them to 1e-13. Fails if the
 * bound stops reaching the kernel or the kernel stops using it. */
static void test_attention_lanes_fixed_shift_taken(void **state)
{
    (void)state;
    const int64_t T = 300;
    double q[8 * 16], *k = malloc(sizeof *k * T * 16), *v = malloc(sizeof *v * T * 16), kmax[16];
    double *kp = oq_ref_alloc(oq_ref_round_up(T, 16) * 16), *vp = oq_ref_alloc(T * 16);
    assert_true(k && v && kp && vp);
    for (int i = 0; i < 8 * 16; i++) q[i] = uniform() * 0.25 * OQ_REF_LOG2E;
    for (int64_t i = 0; i < T * 16; i++) k[i] = uniform(), v[i] = uniform();
    oq_ref_pack_keys(k, 16, T, 16, kp);
    oq_ref_pack_values(v, 16, T, 16, T, vp);
    oq_ref_keys_bound(kp, T, 16, kmax);
    double fixed[8 * 16], running[8 * 16];
    lanes_block(q, kp, kmax, vp, T, fixed);
    lanes_block(q, kp, NULL, vp, T, running);
    int differ = 0;
    for (int i = 0; i < 8 * 16; i++) {
        differ |= fixed[i] != running[i];
        if (!(fabs(fixed[i] - running[i]) <= 1e-13 * fmax(1.0, fabs(running[i]))))
            fail_msg("output %d: fixed shift %.17g, running maximum %.17g", i, fixed[i], running[i]);
    }
    assert_true(differ);
    free(k), free(v), free(kp), free(vp);
}

/* Encoder: events of 300, 17 and 129 valid elements (several 48-row tiles, key
 * chunks and attention blocks), head size 10; every thread count gives the
 * bits of one thread. */
static void test_encoder_threads_bit_identical(void **state)
{
    (void)state;
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    c.features = 5, c.width = 40, c.heads = 4, c.ffn_width = 24, c.layers = 2;
    oq_encoder_weights *w;
    oq_err err = {0};
    assert_int_equal(oq_encoder_weights_random(&c, 3, &w, &err), OQ_OK);
    const int64_t B = 3, L = 300, lens[3] = {300, 17, 129}, fs[3] = {B, L, c.features}, mshape[2] = {B, L};
    oq_tensor *f = rand_t(OQ_DTYPE_FLOAT32, 3, fs, 2), *m = NULL;
    assert_int_equal(oq_tensor_create(&m, OQ_DTYPE_FLOAT32, 2, mshape, "mask", NULL), OQ_OK);
    for (int64_t b = 0; b < B; b++)
        for (int64_t l = 0; l < lens[b]; l++) ((float *)m->data)[b * L + l] = 1.0f;
    oq_encoder_ref *r1;
    oq_tensor *one[2] = {0};
    assert_int_equal(oq_encoder_ref_create(w, 1, &r1, &err), OQ_OK);
    assert_int_equal(oq_encoder_ref_run(r1, f, m, one, &err), OQ_OK);
    for (size_t k = 0; k < sizeof thread_counts / sizeof *thread_counts; k++) {
        oq_encoder_ref *rn;
        oq_tensor *many[2] = {0};
        assert_int_equal(oq_encoder_ref_create(w, thread_counts[k], &rn, &err), OQ_OK);
        assert_int_equal(oq_encoder_ref_run(rn, f, m, many, &err), OQ_OK);
        for (int o = 0; o < 2; o++) assert_same_bits(one[o], many[o], c.outputs[o].name, thread_counts[k]);
        oq_tensor_free(many[0]);
        oq_tensor_free(many[1]);
        oq_encoder_ref_free(rn);
    }
    /* Padded elements are exact zeros. */
    const double *y = one[0]->data;
    for (int64_t l = lens[1]; l < L; l++)
        for (int64_t kk = 0; kk < c.outputs[0].dim; kk++)
            assert_true(y[(L + l) * c.outputs[0].dim + kk] == 0.0);
    oq_tensor_free(one[0]);
    oq_tensor_free(one[1]);
    oq_encoder_ref_free(r1);
    oq_tensor_free(f);
    oq_tensor_free(m);
    oq_encoder_weights_free(w);
}

static void test_thread_rules(void **state)
{
    (void)state;
    assert_int_equal(oq_ref_threads(0, 1000), omp_get_num_procs());
    assert_int_equal(oq_ref_threads(4, 1000), 4);
    assert_int_equal(oq_ref_threads(4, 3), 3);
    assert_int_equal(oq_ref_threads(4, 0), 1);
    int inside = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        inside = oq_ref_threads(0, 1000);
    }
    assert_int_equal(inside, 1); /* the caller's threads already fill the cores */
    oq_err err = {0};
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    oq_encoder_weights *w;
    oq_encoder_ref *r = NULL;
    assert_int_equal(oq_encoder_weights_random(&c, 1, &w, &err), OQ_OK);
    assert_int_equal(oq_encoder_ref_create(w, -1, &r, &err), OQ_ERR_INVALID_ARG);
    assert_null(r);
    assert_non_null(strstr(err.msg, "threads must be >= 0"));
    oq_encoder_weights_free(w);
    const int64_t s[4] = {1, 1, 2, 4};
    oq_tensor *t = rand_t(OQ_DTYPE_FLOAT32, 4, s, 1);
    oq_ref_attention_attrs a;
    oq_ref_attention_attrs_default(&a);
    oq_ref_attention_outputs out = {0};
    assert_int_equal(oq_ref_attention(&a, &(oq_ref_attention_inputs){.q = t, .k = t, .v = t}, -2,
                                      &out, &err),
                     OQ_ERR_INVALID_ARG);
    assert_null(out.y);
    oq_tensor_free(t);
}

/* exp of the softmax against libm on [-745, 0]: within 1 ulp (both round), 0 below -708 and
 * for -inf; a NaN score makes the sum NaN. Against long double expl, in fractions of an ulp:
 * within 0.8 (0.65 where FMAs contract the polynomial): the table, polynomial and scaling
 * that the attention kernel's base-2 weights share. A polynomial one degree short is 16 ulp
 * off, the table's rounding left uncorrected 1.0. */
static void test_exp_against_libm(void **state)
{
    (void)state;
    enum { N = 200001 };
    double *s = malloc(sizeof *s * N);
    for (int j = 0; j < N; j++) s[j] = -745.0 * j / (N - 1);
    double *x = malloc(sizeof *x * N);
    memcpy(x, s, sizeof *x * N);
    const double sum = oq_ref_softmax_exp(s, N);
    double worst = 0, plain = 0;
    long double worst_l = 0;
    for (int j = 0; j < N; j++) {
        const double want = exp(x[j]);
        plain += want;
        if (x[j] < -708) {
            assert_true(s[j] == 0.0);
            continue;
        }
        const double ulps = fabs(s[j] - want) / (nextafter(want, INFINITY) - want);
        worst = fmax(worst, ulps);
        const long double exact = expl((long double)x[j]);
        const long double ulp = (long double)nextafter((double)exact, INFINITY) - (double)exact;
        worst_l = fmaxl(worst_l, fabsl((long double)s[j] - exact) / ulp);
    }
    if (worst > 1) fail_msg("exp off by %.2f ulp from libm", worst);
    if (worst_l > 0.8L) fail_msg("exp off by %.3Lf ulp from expl", worst_l);
    assert_true(fabs(sum - plain) <= 1e-12 * plain); /* same terms, another order */
    double special[3] = {0.0, -INFINITY, -1.0};
    oq_ref_softmax_exp(special, 3);
    assert_true(special[0] == 1.0 && special[1] == 0.0);
    assert_true(fabs(special[2] - exp(-1.0)) <= 2 * (nextafter(exp(-1.0), 1.0) - exp(-1.0)));
    double with_nan[3] = {0.0, NAN, -1.0};
    assert_true(isnan(oq_ref_softmax_exp(with_nan, 3)));
    free(s);
    free(x);
    print_message("exp: worst %.2f ulp from libm, %.3Lf from expl\n", worst, worst_l);
}

/* Matrix tiles against plain loops: two weights side by side (K 7, M 37 + 5, so
 * one full and one padded panel), 53 rows (a partial tile and a partial 6-row
 * block), each epilogue; columns past M are never written. */
static void test_gemm_tiles_against_loops(void **state)
{
    (void)state;
    const int64_t K = 7, M1 = 37, M2 = 5, M = M1 + M2, n = 53, ldy = M + 3;
    const int64_t w1s[2] = {K, M1}, w2s[2] = {K, M2}, b1s[1] = {M1}, b2s[1] = {M2};
    oq_tensor *w1 = rand_t(OQ_DTYPE_FLOAT32, 2, w1s, 1), *w2 = rand_t(OQ_DTYPE_FLOAT64, 2, w2s, 1),
              *b1 = rand_t(OQ_DTYPE_FLOAT32, 1, b1s, 1), *b2 = rand_t(OQ_DTYPE_FLOAT64, 1, b2s, 1);
    const oq_tensor *ws[2] = {w1, w2}, *bs[2] = {b1, b2};
    oq_ref_packed p;
    assert_int_equal(oq_ref_pack_weights(&p, ws, bs, 2, NULL), OQ_OK);
    assert_int_equal(p.panels, 2);
    double x[53 * 7], y[53 * 45], y0[53 * 45];
    for (int64_t i = 0; i < n * K; i++) x[i] = 2 * uniform();
    for (int64_t i = 0; i < n * ldy; i++) y0[i] = uniform();
    for (int ep = OQ_REF_STORE; ep <= OQ_REF_ELU; ep++) {
        memcpy(y, y0, sizeof y);
        for (int64_t t = 0; t < oq_ref_gemm_tiles(&p, n); t++)
            oq_ref_gemm_tile(&p, t, x, K, n, y, ldy, (oq_ref_epilogue)ep);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < ldy; j++) {
                const double got = y[i * ldy + j];
                if (j >= M) {
                    assert_true(got == y0[i * ldy + j]);
                    continue;
                }
                const oq_tensor *w = j < M1 ? w1 : w2, *b = j < M1 ? b1 : b2;
                const int64_t jj = j < M1 ? j : j - M1, mm = j < M1 ? M1 : M2;
                double v = oq_tensor_get_f64(b, jj);
                for (int64_t k = 0; k < K; k++) v += x[i * K + k] * oq_tensor_get_f64(w, k * mm + jj);
                const double want = ep == OQ_REF_STORE ? v : ep == OQ_REF_ADD ? y0[i * ldy + j] + v
                                                       : v > 0 ? v : expm1(v);
                if (!(fabs(got - want) <= 1e-14 * fmax(1.0, fabs(want))))
                    fail_msg("epilogue %d y[%lld,%lld] = %.17g, loops %.17g", ep, (long long)i,
                             (long long)j, got, want);
            }
    }
    oq_ref_packed_free(&p);
    oq_tensor *ts[] = {w1, w2, b1, b2};
    for (int i = 0; i < 4; i++) oq_tensor_free(ts[i]);
}

static cpu_set_t cpus(const int *c, int n)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int i = 0; i < n; i++) CPU_SET(c[i], &s);
    return s;
}

/* Workers start on the allowed CPUs after the creator's, in turn, the creator's last. */
static void test_team_start_cpu(void **state)
{
    (void)state;
    const int two[] = {0, 1}, three[] = {2, 5, 7};
    cpu_set_t s = cpus(two, 2);
    assert_int_equal(oq_ref_start_cpu(&s, 0, 1), 1);
    assert_int_equal(oq_ref_start_cpu(&s, 1, 1), 0);
    assert_int_equal(oq_ref_start_cpu(&s, 0, 2), 0);
    s = cpus(three, 3);
    assert_int_equal(oq_ref_start_cpu(&s, 5, 1), 7);
    assert_int_equal(oq_ref_start_cpu(&s, 5, 2), 2);
    assert_int_equal(oq_ref_start_cpu(&s, 5, 3), 5);
    assert_int_equal(oq_ref_start_cpu(&s, 7, 1), 2);
    assert_int_equal(oq_ref_start_cpu(&s, 2, 4), 5);
    /* unknown or foreign creator CPU, one CPU only: no placement */
    assert_int_equal(oq_ref_start_cpu(&s, -1, 1), -1);
    assert_int_equal(oq_ref_start_cpu(&s, 3, 1), -1);
    s = cpus(three, 1);
    assert_int_equal(oq_ref_start_cpu(&s, 2, 1), -1);
}

typedef struct {
    cpu_set_t allowed;
    _Atomic int worker_tasks, narrowed;
} team_probe;

/* A task that records whether a worker runs with fewer CPUs than its creator
 * may use. The creator's tasks last until a worker has taken one (10 s at most):
 * on a loaded machine a worker can start after 50 tasks of 1 ms are done. */
static void probe_task(void *ctx, int64_t task, int thread)
{
    (void)task;
    team_probe *p = ctx;
    const struct timespec ms = {0, 1000000};
    if (thread > 0) {
        cpu_set_t now;
        assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof now, &now), 0);
        if (!CPU_EQUAL(&now, &p->allowed)) p->narrowed++;
        p->worker_tasks++;
        nanosleep(&ms, NULL);
        return;
    }
    for (int i = 0; i < 10000 && !p->worker_tasks; i++) nanosleep(&ms, NULL);
}

/* A worker started on a CPU of its own is then let go to every allowed CPU:
 * pinned, it would stay on one however busy that CPU became. */
static void test_team_workers_widen(void **state)
{
    (void)state;
    team_probe p = {0};
    assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof p.allowed, &p.allowed), 0);
    if (CPU_COUNT(&p.allowed) < 2) skip();
    oq_ref_team *t = NULL;
    assert_int_equal(oq_ref_team_create(2, &t, NULL), OQ_OK);
    assert_int_equal(oq_ref_team_size(t), 2);
    oq_ref_team_run(t, 50, probe_task, &p);
    oq_ref_team_free(t);
    assert_true(p.worker_tasks > 0);
    assert_int_equal(p.narrowed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_threads_masks_gqa_softcap_causal),
        cmocka_unit_test(test_attention_threads_3d_seqlen),
        cmocka_unit_test(test_attention_long_rows_match_two_pass),
        cmocka_unit_test(test_attention_lanes_match_two_pass),
        cmocka_unit_test(test_attention_lanes_row_alone),
        cmocka_unit_test(test_attention_lanes_fixed_shift_taken),
        cmocka_unit_test(test_encoder_threads_bit_identical),
        cmocka_unit_test(test_thread_rules),
        cmocka_unit_test(test_exp_against_libm),
        cmocka_unit_test(test_gemm_tiles_against_loops),
        cmocka_unit_test(test_team_start_cpu),
        cmocka_unit_test(test_team_workers_widen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
