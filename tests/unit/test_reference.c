/* Unit tests of the Attention reference: small cases checked by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/reference.h"

/* A float64 tensor with the given shape and values (NULL: 0, 1, 2, ... scaled by 0.1). */
static oq_tensor *t64(int32_t ndim, const int64_t *shape, const double *vals)
{
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT64, ndim, shape, NULL, NULL), OQ_OK);
    double *d = t->data;
    for (int64_t i = 0; i < oq_tensor_numel(t); i++) d[i] = vals ? vals[i] : 0.1 * (double)(i % 7) - 0.2;
    return t;
}

static double at(const oq_tensor *t, int64_t i)
{
    return oq_tensor_get_f64(t, i);
}

static oq_status run(const oq_ref_attention_attrs *a, const oq_ref_attention_inputs *in,
                     oq_ref_attention_outputs *out, oq_err *err)
{
    return oq_ref_attention(a, in, 0, out, err);
}

static oq_ref_attention_attrs defaults(void)
{
    oq_ref_attention_attrs a;
    oq_ref_attention_attrs_default(&a);
    return a;
}

/* One query, two keys: y = softmax([q.k0, q.k1] / sqrt(2)) . V by hand. */
static void test_one_query_two_keys(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 1, 1, 2}, ks[4] = {1, 1, 2, 2};
    oq_tensor *q = t64(4, qs, (double[]){1, 0});
    oq_tensor *k = t64(4, ks, (double[]){1, 0, 0, 1});
    oq_tensor *v = t64(4, ks, (double[]){1, 2, 3, 4});
    oq_ref_attention_attrs a = defaults();
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v};
    oq_ref_attention_outputs out = {0};
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    double e0 = exp(1 / sqrt(2.0)), e1 = 1.0, p0 = e0 / (e0 + e1), p1 = e1 / (e0 + e1);
    assert_int_equal(out.y->dtype, OQ_DTYPE_FLOAT64);
    assert_int_equal(out.y->ndim, 4);
    assert_true(fabs(at(out.y, 0) - (p0 * 1 + p1 * 3)) < 1e-14);
    assert_true(fabs(at(out.y, 1) - (p0 * 2 + p1 * 4)) < 1e-14);
    oq_ref_attention_outputs_clear(&out);
    assert_null(out.y);
    oq_tensor_free(q);
    oq_tensor_free(k);
    oq_tensor_free(v);
}

/* With one key the softmax is 1, so y is the kv head's value row: head h must
 * read kv head h / (Hq/Hkv) (interleaved), not h % Hkv (tiled). */
static void test_gqa_mapping(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 4, 1, 2}, ks[4] = {1, 2, 1, 2};
    oq_tensor *q = t64(4, qs, NULL), *k = t64(4, ks, NULL);
    oq_tensor *v = t64(4, ks, (double[]){10, 11, 20, 21});
    oq_ref_attention_attrs a = defaults();
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v};
    oq_ref_attention_outputs out = {0};
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    const double want[8] = {10, 11, 10, 11, 20, 21, 20, 21};
    for (int i = 0; i < 8; i++) assert_true(fabs(at(out.y, i) - want[i]) < 1e-12);
    oq_ref_attention_outputs_clear(&out);
    oq_tensor_free(q);
    oq_tensor_free(k);
    oq_tensor_free(v);
}

/* Causal with a past of 2: query i sees keys j <= i + 2; mode 2 shows -inf where masked.
 * present_key is past then K. */
static void test_causal_with_past(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 1, 2, 2}, ps[4] = {1, 1, 2, 2};
    oq_tensor *q = t64(4, qs, NULL), *k = t64(4, qs, (double[]){5, 6, 7, 8});
    oq_tensor *v = t64(4, qs, NULL), *pk = t64(4, ps, (double[]){1, 2, 3, 4}), *pv = t64(4, ps, NULL);
    oq_ref_attention_attrs a = defaults();
    a.is_causal = 1;
    a.qk_matmul_output_mode = 2;
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v, .past_key = pk, .past_value = pv};
    oq_ref_attention_outputs out = {.want_present = 1, .want_qk_matmul_output = 1};
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    assert_int_equal(out.qk_matmul_output->shape[3], 4);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            double s = at(out.qk_matmul_output, i * 4 + j);
            if (j <= i + 2) assert_true(isfinite(s));
            else assert_true(isinf(s) && s < 0);
        }
    assert_int_equal(out.present_key->shape[2], 4);
    for (int i = 0; i < 8; i++) assert_true(at(out.present_key, i) == (double)(i + 1));
    oq_ref_attention_outputs_clear(&out);
    oq_tensor *ts[] = {q, k, v, pk, pv};
    for (int i = 0; i < 5; i++) oq_tensor_free(ts[i]);
}

/* qk_matmul_output modes 0..3 on one row with softcap 1 and a float mask. */
static void test_qk_modes_and_softcap(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 1, 1, 1}, ks[4] = {1, 1, 2, 1}, ms[2] = {1, 2};
    oq_tensor *q = t64(4, qs, (double[]){2}), *k = t64(4, ks, (double[]){1, -1});
    oq_tensor *v = t64(4, ks, (double[]){1, 0}), *m = t64(2, ms, (double[]){0.5, 0});
    double raw[2] = {2, -2}, cap[2] = {tanh(2.0), tanh(-2.0)}, biased[2] = {cap[0] + 0.5, cap[1]};
    double z = exp(biased[0]) + exp(biased[1]), soft[2] = {exp(biased[0]) / z, exp(biased[1]) / z};
    const double *want[4] = {raw, cap, biased, soft};
    for (int mode = 0; mode < 4; mode++) {
        oq_ref_attention_attrs a = defaults();
        a.scale = 1.0;
        a.softcap = 1.0;
        a.qk_matmul_output_mode = mode;
        oq_ref_attention_inputs in = {.q = q, .k = k, .v = v, .attn_mask = m};
        oq_ref_attention_outputs out = {.want_qk_matmul_output = 1};
        assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
        for (int j = 0; j < 2; j++) assert_true(fabs(at(out.qk_matmul_output, j) - want[mode][j]) < 1e-14);
        assert_true(fabs(at(out.y, 0) - soft[0]) < 1e-14);
        oq_ref_attention_outputs_clear(&out);
    }
    oq_tensor *ts[] = {q, k, v, m};
    for (int i = 0; i < 4; i++) oq_tensor_free(ts[i]);
}

/* A bool mask that hides every key of query 0 gives a zero row (and zero
 * probabilities); query 1 is unaffected. nonpad_kv_seqlen 0 does the same. */
static void test_fully_masked_row_is_zero(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 1, 2, 2}, ms[2] = {2, 2};
    oq_tensor *q = t64(4, qs, NULL), *k = t64(4, qs, NULL), *v = t64(4, qs, (double[]){1, 2, 3, 4});
    oq_tensor *m = NULL;
    assert_int_equal(oq_tensor_create(&m, OQ_DTYPE_BOOL, 2, ms, NULL, NULL), OQ_OK);
    ((uint8_t *)m->data)[2] = ((uint8_t *)m->data)[3] = 1;
    oq_ref_attention_attrs a = defaults();
    a.qk_matmul_output_mode = 3;
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v, .attn_mask = m};
    oq_ref_attention_outputs out = {.want_qk_matmul_output = 1};
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    assert_true(at(out.y, 0) == 0.0 && at(out.y, 1) == 0.0);
    assert_true(at(out.qk_matmul_output, 0) == 0.0 && at(out.qk_matmul_output, 1) == 0.0);
    assert_true(at(out.y, 2) > 1.0 && at(out.y, 2) < 3.0);
    oq_ref_attention_outputs_clear(&out);

    const int64_t ns[1] = {1};
    oq_tensor *n = NULL;
    assert_int_equal(oq_tensor_create(&n, OQ_DTYPE_INT64, 1, ns, NULL, NULL), OQ_OK);
    in = (oq_ref_attention_inputs){.q = q, .k = k, .v = v, .nonpad_kv_seqlen = n};
    out = (oq_ref_attention_outputs){0};
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    for (int i = 0; i < 4; i++) assert_true(at(out.y, i) == 0.0);
    oq_ref_attention_outputs_clear(&out);
    /* nonpad 1: only key 0 counts, so y is V's row 0 for both queries. */
    ((int64_t *)n->data)[0] = 1;
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    assert_true(at(out.y, 0) == 1.0 && at(out.y, 3) == 2.0);
    oq_ref_attention_outputs_clear(&out);
    oq_tensor *ts[] = {q, k, v, m, n};
    for (int i = 0; i < 5; i++) oq_tensor_free(ts[i]);
}

/* Opset 24 short mask: a mask covering 2 of 3 keys acts as -inf on key 2. */
static void test_short_mask_padded(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 1, 1, 2}, ks[4] = {1, 1, 3, 2}, ms[2] = {1, 2};
    oq_tensor *q = t64(4, qs, NULL), *k = t64(4, ks, NULL);
    oq_tensor *v = t64(4, ks, (double[]){1, 1, 1, 1, 100, 100}), *m = t64(2, ms, (double[]){0, 0});
    oq_ref_attention_attrs a = defaults();
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v, .attn_mask = m};
    oq_ref_attention_outputs out = {0};
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    assert_true(fabs(at(out.y, 0) - 1.0) < 1e-14);
    oq_ref_attention_outputs_clear(&out);
    oq_tensor *ts[] = {q, k, v, m};
    for (int i = 0; i < 4; i++) oq_tensor_free(ts[i]);
}

/* 3-D [B, L, H*D] gives the same numbers as 4-D [B, H, L, D], transposed. */
static void test_3d_matches_4d(void **state)
{
    (void)state;
    const int64_t B = 1, H = 2, L = 3, D = 2;
    const int64_t s4[4] = {B, H, L, D}, s3[3] = {B, L, H * D};
    oq_tensor *q4 = t64(4, s4, NULL), *q3 = t64(3, s3, NULL);
    double *a4 = q4->data, *a3 = q3->data;
    for (int64_t h = 0; h < H; h++)
        for (int64_t l = 0; l < L; l++)
            for (int64_t d = 0; d < D; d++) a3[(l * H + h) * D + d] = a4[(h * L + l) * D + d] = 0.3 * h - 0.2 * l + 0.1 * d;
    oq_ref_attention_attrs a = defaults();
    oq_ref_attention_inputs in4 = {.q = q4, .k = q4, .v = q4}, in3 = {.q = q3, .k = q3, .v = q3};
    oq_ref_attention_outputs o4 = {0}, o3 = {0};
    assert_int_equal(run(&a, &in4, &o4, NULL), OQ_OK);
    a.q_num_heads = a.kv_num_heads = H;
    assert_int_equal(run(&a, &in3, &o3, NULL), OQ_OK);
    assert_int_equal(o3.y->ndim, 3);
    for (int64_t h = 0; h < H; h++)
        for (int64_t l = 0; l < L; l++)
            for (int64_t d = 0; d < D; d++)
                assert_true(at(o3.y, (l * H + h) * D + d) == at(o4.y, (h * L + l) * D + d));
    oq_ref_attention_outputs_clear(&o4);
    oq_ref_attention_outputs_clear(&o3);
    oq_tensor_free(q4);
    oq_tensor_free(q3);
}

/* float16 in, float16 out, numbers within float16 rounding of the float64 result. */
static void test_float16_inputs(void **state)
{
    (void)state;
    const int64_t s[4] = {1, 2, 3, 4};
    oq_tensor *x64 = t64(4, s, NULL), *x16 = NULL, *xb = NULL;
    assert_int_equal(oq_tensor_convert(x64, OQ_DTYPE_FLOAT16, &x16, NULL), OQ_OK);
    assert_int_equal(oq_tensor_convert(x64, OQ_DTYPE_BFLOAT16, &xb, NULL), OQ_OK);
    oq_ref_attention_attrs a = defaults();
    oq_ref_attention_inputs i64 = {.q = x64, .k = x64, .v = x64}, i16 = {.q = x16, .k = x16, .v = x16},
                            ib = {.q = xb, .k = xb, .v = xb};
    oq_ref_attention_outputs o64 = {0}, o16 = {0}, ob = {0};
    assert_int_equal(run(&a, &i64, &o64, NULL), OQ_OK);
    assert_int_equal(run(&a, &i16, &o16, NULL), OQ_OK);
    assert_int_equal(run(&a, &ib, &ob, NULL), OQ_OK);
    assert_int_equal(o16.y->dtype, OQ_DTYPE_FLOAT16);
    assert_int_equal(ob.y->dtype, OQ_DTYPE_BFLOAT16);
    for (int64_t i = 0; i < oq_tensor_numel(o64.y); i++) {
        double r = at(o64.y, i);
        assert_true(fabs(at(o16.y, i) - r) <= 2e-3 * fabs(r) + 1e-3);
        assert_true(fabs(at(ob.y, i) - r) <= 2e-2 * fabs(r) + 1e-2);
    }
    oq_ref_attention_outputs_clear(&o64);
    oq_ref_attention_outputs_clear(&o16);
    oq_ref_attention_outputs_clear(&ob);
    oq_tensor_free(x64);
    oq_tensor_free(x16);
    oq_tensor_free(xb);
}

/* Causal + nonpad_kv_seqlen without a past (external cache): offset n - Lq. */
static void test_causal_external_cache(void **state)
{
    (void)state;
    const int64_t qs[4] = {1, 1, 1, 1}, ks[4] = {1, 1, 4, 1}, ns[1] = {1};
    oq_tensor *q = t64(4, qs, (double[]){1}), *k = t64(4, ks, (double[]){0, 0, 0, 0});
    oq_tensor *v = t64(4, ks, (double[]){1, 2, 3, 4}), *n = NULL;
    assert_int_equal(oq_tensor_create(&n, OQ_DTYPE_INT64, 1, ns, NULL, NULL), OQ_OK);
    ((int64_t *)n->data)[0] = 3; /* keys 0..2 valid; the one query is the newest: it sees all 3 */
    oq_ref_attention_attrs a = defaults();
    a.is_causal = 1;
    oq_ref_attention_inputs in = {.q = q, .k = k, .v = v, .nonpad_kv_seqlen = n};
    oq_ref_attention_outputs out = {0};
    assert_int_equal(run(&a, &in, &out, NULL), OQ_OK);
    assert_true(fabs(at(out.y, 0) - 2.0) < 1e-14);
    oq_ref_attention_outputs_clear(&out);
    oq_tensor *ts[] = {q, k, v, n};
    for (int i = 0; i < 4; i++) oq_tensor_free(ts[i]);
}

/* Each inconsistency is refused with OQ_ERR_SHAPE (or INVALID_ARG) and a message naming it. */
static void expect_error(const oq_ref_attention_attrs *a, const oq_ref_attention_inputs *in,
                         oq_status want, const char *needle)
{
    oq_err err = {0};
    oq_ref_attention_outputs out = {.want_present = 1};
    assert_int_equal(oq_ref_attention(a, in, 0, &out, &err), want);
    assert_null(out.y);
    if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_shape_errors(void **state)
{
    (void)state;
    const int64_t s4[4] = {2, 4, 3, 8}, k4[4] = {2, 3, 5, 8}, d4[4] = {2, 4, 5, 6},
                  b4[4] = {1, 4, 5, 8}, s3[3] = {2, 3, 32}, m2[2] = {3, 6}, m3[2] = {2, 5},
                  p4[4] = {2, 4, 2, 8}, n1[1] = {2};
    oq_tensor *q = t64(4, s4, NULL), *k = t64(4, d4, NULL), *k3 = t64(4, k4, NULL),
              *kb = t64(4, b4, NULL), *q3 = t64(3, s3, NULL), *long_mask = t64(2, m2, NULL),
              *bad_mask = t64(2, m3, NULL), *past = t64(4, p4, NULL), *k8 = NULL, *n = NULL;
    const int64_t k8s[4] = {2, 4, 5, 8};
    k8 = t64(4, k8s, NULL);
    assert_int_equal(oq_tensor_create(&n, OQ_DTYPE_INT64, 1, n1, NULL, NULL), OQ_OK);
    ((int64_t *)n->data)[1] = 9;
    oq_ref_attention_attrs a = defaults();
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k, .v = k8}, OQ_ERR_SHAPE,
                 "head size: Q has 8, K has 6");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k3, .v = k3}, OQ_ERR_SHAPE,
                 "4 query heads is not a multiple of 3 kv heads");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = kb, .v = kb}, OQ_ERR_SHAPE,
                 "batch: K axis 0 is 1 but Q axis 0 is 2");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q3, .k = k8, .v = k8}, OQ_ERR_SHAPE,
                 "must all be 3-D or all 4-D (ranks 3, 4, 4)");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q3, .k = q3, .v = q3}, OQ_ERR_SHAPE,
                 "needs attribute q_num_heads");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k8, .v = k8, .attn_mask = long_mask},
                 OQ_ERR_SHAPE, "longer than the total kv length 5");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k8, .v = k8, .attn_mask = bad_mask},
                 OQ_ERR_SHAPE, "attn_mask axis 0 is 2: it must be 1 or 3 (q sequence)");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k8, .v = k8, .past_key = past},
                 OQ_ERR_SHAPE, "past_key given without past_value");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k8, .v = k8, .nonpad_kv_seqlen = n},
                 OQ_ERR_SHAPE, "nonpad_kv_seqlen[1] = 9 outside 0..5");
    a.q_num_heads = 3;
    expect_error(&a, &(oq_ref_attention_inputs){.q = q3, .k = q3, .v = q3}, OQ_ERR_SHAPE,
                 "hidden size 32 (axis 2) is not a multiple of q_num_heads=3");
    a = defaults();
    a.qk_matmul_output_mode = 4;
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k8, .v = k8}, OQ_ERR_INVALID_ARG,
                 "qk_matmul_output_mode must be 0..3");
    a = defaults();
    a.scale = -1;
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k8, .v = k8}, OQ_ERR_INVALID_ARG,
                 "scale must be > 0");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = NULL, .v = k8}, OQ_ERR_INVALID_ARG,
                 "oq_ref_attention: in->k is NULL");
    oq_tensor *ts[] = {q, k, k3, kb, q3, long_mask, bad_mask, past, k8, n};
    for (int i = 0; i < 10; i++) oq_tensor_free(ts[i]);
}

/* The node is judged by its model's opset: no Attention before 23, nothing of Attention-24's
 * (nonpad_kv_seqlen, a short mask) at 23, and no guess at a later version. */
static void test_opset(void **state)
{
    (void)state;
    const int64_t s4[4] = {2, 4, 3, 8}, k4[4] = {2, 4, 5, 8}, short_m[2] = {3, 4}, one_m[2] = {3, 1},
                  full_m[2] = {3, 5}, n1[1] = {2};
    oq_tensor *q = t64(4, s4, NULL), *k = t64(4, k4, NULL), *sm = t64(2, short_m, NULL),
              *om = t64(2, one_m, NULL), *fm = t64(2, full_m, NULL), *n = NULL;
    assert_int_equal(oq_tensor_create(&n, OQ_DTYPE_INT64, 1, n1, NULL, NULL), OQ_OK);
    ((int64_t *)n->data)[0] = ((int64_t *)n->data)[1] = 5;
    oq_ref_attention_attrs a = defaults();
    assert_int_equal(a.opset, 24);
    a.opset = 22;
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k, .v = k}, OQ_ERR_INVALID_ARG,
                 "invalid model: ai.onnx opset 22 has no Attention operator");
    a.opset = 25;
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k, .v = k}, OQ_ERR_UNSUPPORTED,
                 "Attention-25: the reference implements Attention-23 and -24 only");
    a.opset = 23;
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k, .v = k, .nonpad_kv_seqlen = n},
                 OQ_ERR_INVALID_ARG, "Attention-23 has no input nonpad_kv_seqlen");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k, .v = k, .attn_mask = sm}, OQ_ERR_SHAPE,
                 "Attention-23 attn_mask last axis is 4, shorter than the total kv length 5");
    expect_error(&a, &(oq_ref_attention_inputs){.q = q, .k = k, .v = k, .attn_mask = om}, OQ_ERR_UNSUPPORTED,
                 "broadcast over the keys is not judged");
    /* what opset 23 has runs, and both forms run at 24 */
    const oq_ref_attention_inputs ok23 = {.q = q, .k = k, .v = k, .attn_mask = fm};
    const oq_ref_attention_inputs ok24[2] = {{.q = q, .k = k, .v = k, .nonpad_kv_seqlen = n},
                                             {.q = q, .k = k, .v = k, .attn_mask = sm}};
    oq_ref_attention_outputs out = {0};
    assert_int_equal(run(&a, &ok23, &out, NULL), OQ_OK);
    oq_ref_attention_outputs_clear(&out);
    a.opset = 24;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run(&a, &ok24[i], &out, NULL), OQ_OK);
        oq_ref_attention_outputs_clear(&out);
    }
    oq_tensor *ts[] = {q, k, sm, om, fm, n};
    for (int i = 0; i < 6; i++) oq_tensor_free(ts[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_query_two_keys),
        cmocka_unit_test(test_gqa_mapping),
        cmocka_unit_test(test_causal_with_past),
        cmocka_unit_test(test_qk_modes_and_softcap),
        cmocka_unit_test(test_fully_masked_row_is_zero),
        cmocka_unit_test(test_short_mask_padded),
        cmocka_unit_test(test_3d_matches_4d),
        cmocka_unit_test(test_float16_inputs),
        cmocka_unit_test(test_causal_external_cache),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_opset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
