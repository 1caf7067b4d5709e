/* The comparison engine: metrics, pass rule, padding, worst elements, tolerances, JSON. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare/compare-impl.h"

static oq_tensor *tensor(oq_dtype dtype, int32_t ndim, const int64_t *shape, const char *name)
{
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, dtype, ndim, shape, name, NULL), OQ_OK);
    return t;
}

/* out (float32) and ref (float64) [2,6,3] with identical smooth values on the
 * valid part (lengths 4 and 6) and exact zeros on padding. */
static const int64_t SHAPE[3] = {2, 6, 3};
static const int64_t LENGTHS[2] = {4, 6};

static void make_pair(oq_tensor **out, oq_tensor **ref)
{
    *out = tensor(OQ_DTYPE_FLOAT32, 3, SHAPE, "out_cls");
    *ref = tensor(OQ_DTYPE_FLOAT64, 3, SHAPE, "ref");
    for (int64_t i = 0; i < 36; i++) {
        int64_t b = i / 18, p = (i / 3) % 6;
        double v = p < LENGTHS[b] ? (double)(float)sin(0.37 * (double)i) : 0.0;
        oq_tensor_set_f64(*out, i, v);
        oq_tensor_set_f64(*ref, i, v);
    }
}

static int64_t flat(int64_t b, int64_t p, int64_t f) { return (b * 6 + p) * 3 + f; }

static oq_compare_opts masked_opts(void)
{
    oq_compare_opts o = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
    o.lengths = LENGTHS;
    return o;
}

static void assert_has(const char *hay, const char *needle)
{
    if (!strstr(hay, needle)) fail_msg("'%s' lacks '%s'", hay, needle);
}

static void test_exact_pass(void **state)
{
    (void)state;
    oq_tensor *out, *ref;
    make_pair(&out, &ref);
    oq_compare_opts o = masked_opts();
    oq_compare_result r;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_true(r.passed);
    assert_int_equal(r.num_elements, 36);
    assert_int_equal(r.num_valid, (4 + 6) * 3);
    assert_int_equal(r.num_padded, 2 * 3);
    assert_true(r.max_abs == 0.0 && r.rms == 0.0 && r.rel_l2 == 0.0);
    assert_int_equal(r.over_tol + r.nan_count + r.inf_count + r.pad_nonzero, 0);
    assert_string_equal(r.name, "out_cls");
    char line[512];
    assert_has(oq_compare_result_str(&r, line, sizeof line), "out_cls: PASS valid=30/36");
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void test_one_perturbed_element(void **state)
{
    (void)state;
    oq_tensor *out, *ref;
    make_pair(&out, &ref);
    int64_t at = flat(1, 2, 1);
    oq_tensor_set_f64(out, at, oq_tensor_get_f64(ref, at) + 1e-2);
    oq_compare_opts o = masked_opts();
    oq_compare_result r;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.over_tol, 1);
    assert_int_equal(r.worst[0].index, at);
    assert_int_equal(r.worst[0].coord[0], 1);
    assert_int_equal(r.worst[0].coord[1], 2);
    assert_int_equal(r.worst[0].coord[2], 1);
    assert_true(fabs(r.max_abs - 1e-2) < 1e-6);
    char line[512];
    oq_compare_result_str(&r, line, sizeof line);
    assert_has(line, "FAIL");
    assert_has(line, "worst [1,2,1]");
    assert_has(line, "over_tol=1");
    /* the same difference within a looser tolerance passes */
    o.tol.atol = 2e-2;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_true(r.passed);
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void test_nan_and_inf_fail(void **state)
{
    (void)state;
    oq_tensor *out, *ref;
    make_pair(&out, &ref);
    oq_compare_opts o = masked_opts();
    oq_compare_result r;
    oq_tensor_set_f64(out, flat(0, 3, 2), NAN);
    oq_tensor_set_f64(out, flat(1, 0, 0), INFINITY);
    oq_tensor_set_f64(ref, flat(1, 0, 0), INFINITY); /* equal infinities still fail */
    o.tol.atol = 1e9;                                 /* no tolerance excuses a non-finite value */
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.nan_count, 1);
    assert_int_equal(r.inf_count, 1);
    assert_int_equal(r.ref_inf_count, 1);
    assert_int_equal(r.over_tol, 2);
    assert_true(r.max_abs == 0.0); /* metrics cover finite pairs only */
    assert_int_equal(r.worst[0].index, flat(0, 3, 2)); /* non-finite elements head the list */
    assert_true(isnan(r.worst[0].got));
    assert_int_equal(r.worst[1].index, flat(1, 0, 0));
    /* a NaN output never passes, even against a NaN reference: both are reported */
    oq_tensor_set_f64(out, flat(1, 0, 0), 0.5);
    oq_tensor_set_f64(ref, flat(1, 0, 0), 0.5);
    oq_tensor_set_f64(ref, flat(0, 3, 2), NAN);
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.nan_count, 1);
    assert_int_equal(r.ref_nan_count, 1);
    char line[512];
    assert_has(oq_compare_result_str(&r, line, sizeof line), "REFERENCE nan=1");
    /* a NaN reference alone is a reference error, and fails too */
    oq_tensor_set_f64(out, flat(0, 3, 2), 0.0);
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.nan_count, 0);
    assert_int_equal(r.ref_nan_count, 1);
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void test_padding_checked_apart(void **state)
{
    (void)state;
    oq_tensor *out, *ref;
    make_pair(&out, &ref);
    /* event 0 is padded at positions 4 and 5: huge output values there */
    oq_tensor_set_f64(out, flat(0, 4, 1), 1e30);
    oq_tensor_set_f64(out, flat(0, 5, 0), NAN);
    oq_tensor_set_f64(ref, flat(0, 5, 2), -7.0); /* the reference's padding is never looked at */
    oq_tensor_set_f64(out, flat(0, 5, 1), -0.0); /* negative zero is zero */
    int64_t at = flat(1, 1, 0);
    oq_tensor_set_f64(out, at, oq_tensor_get_f64(ref, at) + 0.25);
    oq_compare_opts o = masked_opts();
    oq_compare_result r;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.pad_nonzero, 2);
    assert_int_equal(r.pad_nonfinite, 1);
    assert_int_equal(r.first_pad_nonzero.coord[0], 0);
    assert_int_equal(r.first_pad_nonzero.coord[1], 4);
    assert_int_equal(r.first_pad_nonzero.coord[2], 1);
    assert_true(r.first_pad_nonzero.got == 1e30f);
    /* the padding takes no part in the error metrics */
    assert_true(fabs(r.max_abs - 0.25) < 1e-6);
    assert_int_equal(r.nan_count, 0);
    assert_int_equal(r.over_tol, 1);
    assert_int_equal(r.worst[0].index, at);
    char line[512];
    assert_has(oq_compare_result_str(&r, line, sizeof line), "first non-zero padding [0,4,1] = 1.00000002e+30");
    /* with the padding check off, only the valid element decides */
    o.check_padding = 0;
    o.tol.atol = 0.5;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_true(r.passed);
    assert_false(r.padding_checked);
    assert_has(oq_compare_result_str(&r, line, sizeof line), "padding not checked");
    /* without lengths the same values are all valid and fail */
    o.lengths = NULL;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.num_padded, 0);
    assert_int_equal(r.nan_count, 1);
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void test_metrics_numerically(void **state)
{
    (void)state;
    int64_t shape[1] = {4};
    oq_tensor *out = tensor(OQ_DTYPE_FLOAT64, 1, shape, "y");
    oq_tensor *ref = tensor(OQ_DTYPE_FLOAT64, 1, shape, "y_ref");
    const double e[4] = {1, 2, -4, 0.5}, d[4] = {0.125, -0.125, 0.25, 0.125};
    for (int i = 0; i < 4; i++) {
        oq_tensor_set_f64(ref, i, e[i]);
        oq_tensor_set_f64(out, i, e[i] + d[i]); /* exact in binary */
    }
    oq_compare_opts o = oq_compare_opts_default(OQ_DTYPE_FLOAT64);
    o.tol = (oq_tolerance){.rtol = 0.125, .atol = 0.0};
    oq_compare_result r;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_true(r.max_abs == 0.25);
    assert_true(r.max_rel == 0.25); /* 0.125 / 0.5 */
    assert_true(r.mean_abs == 0.15625);
    assert_true(fabs(r.rms - sqrt(0.109375 / 4)) < 1e-15);
    assert_true(fabs(r.rel_l2 - sqrt(0.109375 / 21.25)) < 1e-15);
    /* allclose: 0.125 <= 0 + 0.125*1 passes at the boundary; 0.125 > 0.125*0.5 fails */
    assert_int_equal(r.over_tol, 1);
    assert_int_equal(r.worst[0].index, 2);
    assert_false(r.passed);
    o.tol.atol = 0.0625; /* 0.125 <= 0.0625 + 0.0625 */
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_int_equal(r.over_tol, 0);
    assert_true(r.passed);
    /* relative error against a zero reference uses the dtype's smallest normal */
    oq_tensor_free(out);
    out = tensor(OQ_DTYPE_FLOAT16, 1, shape, "y16");
    for (int i = 0; i < 4; i++) oq_tensor_set_f64(ref, i, 0.0);
    oq_tensor_set_f64(out, 3, 0.5);
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_true(r.max_rel == 0.5 / 6.103515625e-05);
    assert_true(isinf(r.rel_l2));
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void test_worst_k_and_axes(void **state)
{
    (void)state;
    /* layout [seq=5, batch=2, feat=2]: batch axis 1, sequence axis 0 */
    int64_t shape[3] = {5, 2, 2};
    const int64_t lengths[2] = {5, 3};
    oq_tensor *out = tensor(OQ_DTYPE_FLOAT32, 3, shape, "o");
    oq_tensor *ref = tensor(OQ_DTYPE_FLOAT64, 3, shape, "r");
    for (int64_t i = 0; i < 20; i++) {
        int64_t p = i / 4, b = (i / 2) % 2;
        if (p >= lengths[b]) continue;
        oq_tensor_set_f64(ref, i, 1.0);
        oq_tensor_set_f64(out, i, 1.0 + 0.001 * (double)i); /* error grows with the index */
    }
    oq_compare_opts o = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
    o.lengths = lengths;
    o.batch_axis = 1;
    o.seq_axis = 0;
    o.worst_k = 3;
    oq_compare_result r;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_int_equal(r.num_valid, 5 * 2 + 3 * 2);
    assert_int_equal(r.pad_nonzero, 0);
    assert_int_equal(r.worst_count, 3);
    /* largest valid indices: 17 ([4,0,1]), 16, 13; 18/19 are padding of event 1 */
    assert_int_equal(r.worst[0].index, 17);
    assert_int_equal(r.worst[0].coord[0], 4);
    assert_int_equal(r.worst[0].coord[1], 0);
    assert_int_equal(r.worst[0].coord[2], 1);
    assert_int_equal(r.worst[1].index, 16);
    assert_int_equal(r.worst[2].index, 13);
    assert_true(r.worst[0].abs_diff >= r.worst[1].abs_diff && r.worst[1].abs_diff >= r.worst[2].abs_diff);
    o.worst_k = 0;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    assert_int_equal(r.worst_count, 0);
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    oq_tensor *out, *ref;
    make_pair(&out, &ref);
    oq_compare_opts o = masked_opts();
    oq_compare_result r;
    oq_err err = {0};
    int64_t other[3] = {2, 5, 3};
    oq_tensor *small = tensor(OQ_DTYPE_FLOAT64, 3, other, "ref");
    assert_int_equal(oq_compare_tensors(out, small, &o, &r, &err), OQ_ERR_SHAPE);
    assert_has(err.msg, "output 'out_cls' shape [2,6,3] does not match reference shape [2,5,3]");
    oq_tensor_free(small);
    oq_tensor *ints = tensor(OQ_DTYPE_INT64, 3, SHAPE, "idx");
    assert_int_equal(oq_compare_tensors(ints, ref, &o, &r, &err), OQ_ERR_SHAPE);
    assert_has(err.msg, "(int64)");
    oq_tensor_free(ints);
    const int64_t too_long[2] = {4, 7};
    o.lengths = too_long;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, &err), OQ_ERR_MASK);
    assert_has(err.msg, "event 1 length 7 is outside 0..6");
    o = masked_opts();
    o.seq_axis = 0;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "must be distinct");
    o = masked_opts();
    o.seq_axis = 3;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, &err), OQ_ERR_INVALID_ARG);
    o = masked_opts();
    o.worst_k = OQ_COMPARE_MAX_WORST + 1;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "worst_k 65");
    o = masked_opts();
    o.tol.rtol = NAN;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "finite");
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void test_presets(void **state)
{
    (void)state;
    oq_tolerance t;
    oq_err err = {0};
    assert_int_equal(oq_tolerance_preset("fp32", &t, &err), OQ_OK);
    assert_true(t.rtol == 1e-4 && t.atol == 1e-5);
    assert_int_equal(oq_tolerance_preset("half", &t, &err), OQ_OK);
    assert_true(t.rtol == 1e-2 && t.atol == 1e-3);
    assert_int_equal(oq_tolerance_preset("onnx", &t, &err), OQ_OK);
    assert_true(t.rtol == 1e-3 && t.atol == 1e-7);
    assert_int_equal(oq_tolerance_preset("tf32", &t, &err), OQ_OK);
    assert_true(t.rtol == 1e-2 && t.atol == 5e-3);
    t = oq_tolerance_for_dtype(OQ_DTYPE_FLOAT64);
    assert_true(t.rtol == 1e-9 && t.atol == 1e-12);
    t = oq_tolerance_for_dtype(OQ_DTYPE_BFLOAT16);
    assert_true(t.rtol == 8e-2 && t.atol == 8e-3);
    assert_int_equal(oq_tolerance_preset("fp8", &t, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "unknown tolerance preset 'fp8'");
    assert_int_equal(oq_tolerance_preset("int64", &t, &err), OQ_ERR_INVALID_ARG);
}

static void expect_parse_error(const char *spec, const char *needle)
{
    char name[64];
    oq_tolerance t = {1, 1};
    oq_err err = {0};
    assert_int_equal(oq_tolerance_parse(spec, name, sizeof name, &t, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, needle);
    assert_true(t.rtol == 1 && t.atol == 1); /* untouched on error */
}

static void test_tolerance_parse(void **state)
{
    (void)state;
    char name[64];
    oq_tolerance t = {0.5, 0.5};
    assert_int_equal(oq_tolerance_parse("out_cls:rtol=1e-3,atol=1e-4", name, sizeof name, &t, NULL), OQ_OK);
    assert_string_equal(name, "out_cls");
    assert_true(t.rtol == 1e-3 && t.atol == 1e-4);
    assert_int_equal(oq_tolerance_parse("rtol=2e-3", name, sizeof name, &t, NULL), OQ_OK);
    assert_string_equal(name, "");
    assert_true(t.rtol == 2e-3 && t.atol == 1e-4); /* atol kept */
    assert_int_equal(oq_tolerance_parse("block:0:fp16", name, sizeof name, &t, NULL), OQ_OK);
    assert_string_equal(name, "block:0");
    assert_true(t.rtol == 1e-2 && t.atol == 1e-3);
    expect_parse_error("rtol=abc", "rtol value 'abc' is not a finite number >= 0");
    expect_parse_error("out:atol=-1", "atol value '-1'");
    expect_parse_error("rtol=inf", "rtol value 'inf'");
    expect_parse_error("rtol=", "rtol needs a number");
    expect_parse_error("tol=1", "unknown key 'tol'");
    expect_parse_error("rtol=1e-3,", "'' is not KEY=VALUE");
    expect_parse_error("out:", "nothing after the output name");
    expect_parse_error(":rtol=1", "empty output name");
    expect_parse_error("out:fp8", "tolerance 'out:fp8': unknown tolerance preset 'fp8'");
    char tiny[4];
    oq_err err = {0};
    assert_int_equal(oq_tolerance_parse("long_name:fp32", tiny, sizeof tiny, &t, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "longer than 3 bytes");
}

static void test_tolerance_table(void **state)
{
    (void)state;
    oq_tolerances *t = NULL;
    oq_err err = {0};
    assert_int_equal(oq_tolerances_create(oq_tolerance_for_dtype(OQ_DTYPE_FLOAT32), &t, &err), OQ_OK);
    assert_int_equal(oq_tolerances_add(t, "rtol=1e-3;out_reg:fp16;out_cls:atol=5e-5", &err), OQ_OK);
    oq_tolerance d = oq_tolerances_get(t, NULL);
    assert_true(d.rtol == 1e-3 && d.atol == 1e-5);
    oq_tolerance c = oq_tolerances_get(t, "out_cls");
    assert_true(c.rtol == 1e-3 && c.atol == 5e-5); /* starts from the default as it was */
    oq_tolerance g = oq_tolerances_get(t, "out_reg");
    assert_true(g.rtol == 1e-2 && g.atol == 1e-3);
    assert_int_equal(oq_tolerances_add(t, "out_reg:rtol=3e-2", &err), OQ_OK);
    g = oq_tolerances_get(t, "out_reg");
    assert_true(g.rtol == 3e-2 && g.atol == 1e-3); /* builds on its own earlier override */
    oq_tolerance u = oq_tolerances_get(t, "unlisted");
    assert_true(u.rtol == 1e-3 && u.atol == 1e-5);
    assert_int_equal(oq_tolerances_add(t, "", &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "no spec given");
    assert_int_equal(oq_tolerances_add(t, "out_x:rtol=1;bogus", &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "'bogus'");
    oq_tolerances_free(t);
    oq_tolerance bad = {-1, 0};
    assert_int_equal(oq_tolerances_create(bad, &t, &err), OQ_ERR_INVALID_ARG);
}

static void test_json(void **state)
{
    (void)state;
    oq_tensor *out, *ref;
    make_pair(&out, &ref);
    oq_tensor_set_f64(out, flat(1, 5, 2), NAN);
    oq_tensor_set_f64(out, flat(0, 4, 0), 3.0);
    oq_compare_opts o = masked_opts();
    oq_compare_result r;
    assert_int_equal(oq_compare_tensors(out, ref, &o, &r, NULL), OQ_OK);
    json_t *j = NULL;
    assert_int_equal(oq_compare_result_to_json(&r, &j, NULL), OQ_OK);
    char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(text);
    json_error_t jerr;
    json_t *back = json_loads(text, 0, &jerr); /* valid JSON despite the NaN */
    assert_non_null(back);
    assert_true(json_is_false(json_object_get(back, "passed")));
    assert_string_equal(json_string_value(json_object_get(back, "name")), "out_cls");
    assert_int_equal(json_integer_value(json_object_get(back, "nan")), 1);
    assert_int_equal(json_integer_value(json_object_get(back, "num_valid")), 30);
    json_t *w0 = json_array_get(json_object_get(back, "worst"), 0);
    assert_string_equal(json_string_value(json_object_get(w0, "got")), "nan");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(w0, "coord"), 1)), 5);
    json_t *pad = json_object_get(back, "padding");
    assert_int_equal(json_integer_value(json_object_get(pad, "nonzero")), 1);
    json_t *first = json_object_get(pad, "first_nonzero");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(first, "coord"), 1)), 4);
    assert_true(json_real_value(json_object_get(json_object_get(back, "tolerance"), "rtol")) == 1e-4);
    free(text);
    json_decref(back);
    json_decref(j);
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_pass),
        cmocka_unit_test(test_one_perturbed_element),
        cmocka_unit_test(test_nan_and_inf_fail),
        cmocka_unit_test(test_padding_checked_apart),
        cmocka_unit_test(test_metrics_numerically),
        cmocka_unit_test(test_worst_k_and_axes),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_tolerance_parse),
        cmocka_unit_test(test_tolerance_table),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
