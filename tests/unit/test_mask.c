/* The mask contract: every violation has its own message naming event and position. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/mask.h"

/* A [B, L] mask of `dtype` holding `vals` (row-major). */
static oq_tensor *mask_of(oq_dtype dtype, int64_t B, int64_t L, const double *vals)
{
    int64_t shape[2] = {B, L};
    oq_tensor *m = NULL;
    assert_int_equal(oq_tensor_create(&m, dtype, 2, shape, "mask", NULL), OQ_OK);
    for (int64_t i = 0; i < B * L; i++) oq_tensor_set_f64(m, i, vals[i]);
    return m;
}

/* Check that `m` is refused with `status` and a message containing every needle. */
static void expect_refused(const oq_tensor *m, const oq_tensor *f, oq_status status, const char *n1,
                           const char *n2, const char *n3)
{
    oq_err err = {0};
    int64_t lengths[8] = {-7, -7, -7, -7, -7, -7, -7, -7};
    assert_int_equal(oq_mask_check(m, f, lengths, &err), status);
    assert_int_equal(err.status, status);
    const char *needles[3] = {n1, n2, n3};
    for (int i = 0; i < 3; i++)
        if (needles[i] && !strstr(err.msg, needles[i]))
            fail_msg("message '%s' lacks '%s'", err.msg, needles[i]);
    for (int i = 0; i < 8; i++) assert_int_equal(lengths[i], -7); /* untouched on failure */
}

static void test_valid_lengths_every_dtype(void **state)
{
    (void)state;
    const double v[3 * 5] = {1, 1, 1, 0, 0, /**/ 1, 1, 1, 1, 1, /**/ 1, 0, 0, 0, 0};
    const oq_dtype types[] = {OQ_DTYPE_BOOL,    OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16,
                              OQ_DTYPE_FLOAT64, OQ_DTYPE_INT32,   OQ_DTYPE_INT64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        oq_tensor *m = mask_of(types[t], 3, 5, v);
        int64_t lengths[3] = {0};
        oq_err err = {0};
        assert_int_equal(oq_mask_check(m, NULL, lengths, &err), OQ_OK);
        assert_int_equal(lengths[0], 3);
        assert_int_equal(lengths[1], 5);
        assert_int_equal(lengths[2], 1);
        oq_tensor_free(m);
    }
}

static void test_features_must_match(void **state)
{
    (void)state;
    const double v[2 * 5] = {1, 1, 0, 0, 0, 1, 1, 1, 1, 1};
    oq_tensor *m = mask_of(OQ_DTYPE_FLOAT32, 2, 5, v);
    oq_tensor *f = NULL;
    int64_t good[3] = {2, 5, 3}, bad_len[3] = {2, 6, 3}, bad_batch[3] = {3, 5, 3};
    assert_int_equal(oq_tensor_create(&f, OQ_DTYPE_FLOAT32, 3, good, "x", NULL), OQ_OK);
    int64_t lengths[2];
    assert_int_equal(oq_mask_check(m, f, lengths, NULL), OQ_OK);
    assert_int_equal(lengths[0], 2);
    oq_tensor_free(f);
    assert_int_equal(oq_tensor_create(&f, OQ_DTYPE_FLOAT32, 3, bad_len, "x", NULL), OQ_OK);
    expect_refused(m, f, OQ_ERR_SHAPE, "mask shape [2,5]", "features shape [2,6,3]", NULL);
    oq_tensor_free(f);
    assert_int_equal(oq_tensor_create(&f, OQ_DTYPE_FLOAT32, 3, bad_batch, "x", NULL), OQ_OK);
    expect_refused(m, f, OQ_ERR_SHAPE, "[2,5]", "[3,5,3]", NULL);
    oq_tensor_free(f);
    assert_int_equal(oq_tensor_create(&f, OQ_DTYPE_FLOAT32, 1, good, "x", NULL), OQ_OK);
    expect_refused(m, f, OQ_ERR_SHAPE, "[2,5]", "features shape [2]", NULL);
    oq_tensor_free(f);
    oq_tensor_free(m);
}

static void test_rank_and_dtype(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 1};
    oq_tensor *m = NULL;
    assert_int_equal(oq_tensor_create(&m, OQ_DTYPE_FLOAT32, 3, shape, "mask", NULL), OQ_OK);
    expect_refused(m, NULL, OQ_ERR_SHAPE, "rank 2", "[2,3,1]", NULL);
    m->dtype = OQ_DTYPE_UNDEFINED; /* a dtype the API cannot create, as a corrupt caller might */
    m->ndim = 2;
    expect_refused(m, NULL, OQ_ERR_SHAPE, "mask dtype undefined", NULL, NULL);
    m->dtype = OQ_DTYPE_FLOAT32;
    oq_tensor_free(m);
}

static void test_hole(void **state)
{
    (void)state;
    double v[4 * 20];
    for (int i = 0; i < 80; i++) v[i] = (i % 20) < 10;
    for (int p = 0; p < 20; p++) v[3 * 20 + p] = p < 12 || p == 17; /* event 3: 0 at 12, 1 at 17 */
    oq_tensor *m = mask_of(OQ_DTYPE_FLOAT32, 4, 20, v);
    expect_refused(m, NULL, OQ_ERR_MASK, "event 3: hole at position 17", "0 at 12 followed by 1", NULL);
    oq_tensor_free(m);
    /* the same hole in a bool mask, in the first event */
    const double w[1 * 4] = {1, 0, 1, 0};
    m = mask_of(OQ_DTYPE_BOOL, 1, 4, w);
    expect_refused(m, NULL, OQ_ERR_MASK, "event 0: hole at position 2", "0 at 1", NULL);
    oq_tensor_free(m);
}

static void test_left_padding(void **state)
{
    (void)state;
    const double v[2 * 5] = {1, 1, 1, 0, 0, /**/ 0, 0, 1, 1, 1};
    oq_tensor *m = mask_of(OQ_DTYPE_INT64, 2, 5, v);
    expect_refused(m, NULL, OQ_ERR_MASK, "event 1: left padding", "position 2 is 1",
                   "1 marks padding, as PyTorch's key_padding_mask");
    oq_tensor_free(m);
}

/* PyTorch's key_padding_mask: 1 (true) = padding. Read so, its rows give the lengths their
 * zeros do; each violation names the values as the mask holds them; oq_mask_check (KEEP) refuses
 * the same mask as left padding. */
static void test_pad_polarity(void **state)
{
    (void)state;
    const double v[3 * 5] = {0, 0, 0, 1, 1, /**/ 0, 0, 0, 0, 0, /**/ 0, 1, 1, 1, 1};
    oq_tensor *m = mask_of(OQ_DTYPE_BOOL, 3, 5, v);
    int64_t lengths[3] = {0};
    oq_err err = {0};
    assert_int_equal(oq_mask_check_polarity(m, NULL, OQ_MASK_POLARITY_PAD, lengths, &err), OQ_OK);
    assert_int_equal(lengths[0], 3);
    assert_int_equal(lengths[1], 5);
    assert_int_equal(lengths[2], 1);
    /* oq_mask_check reads 1 = valid alone (ortqual's models): its advice is 1 - mask; a caller of
     * oq_mask_check_polarity chose the polarity and may choose the other */
    expect_refused(m, NULL, OQ_ERR_MASK, "event 0: left padding", "so save 1 - mask", NULL);
    assert_int_equal(oq_mask_check_polarity(m, NULL, OQ_MASK_POLARITY_KEEP, lengths, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "read it with mask_polarity pad or save 1 - mask"));
    oq_tensor_free(m);
    const struct { double v[4]; const char *n1, *n2; } bad[] = {
        {{1, 0, 0, 0}, "event 0: left padding: position 0 is 1 but position 1 is 0", "(mask_polarity pad)"},
        {{0, 1, 0, 1}, "event 0: hole at position 2 (1 at 1 followed by 0", "zeros first, then ones"},
        {{1, 1, 1, 1}, "event 0: empty event: the mask is 1 at every position 0..3", "mask_polarity pad"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        m = mask_of(OQ_DTYPE_INT64, 1, 4, bad[i].v);
        assert_int_equal(oq_mask_check_polarity(m, NULL, OQ_MASK_POLARITY_PAD, lengths, &err), OQ_ERR_MASK);
        if (!strstr(err.msg, bad[i].n1) || !strstr(err.msg, bad[i].n2)) fail_msg("message '%s'", err.msg);
        oq_tensor_free(m);
    }
    assert_int_equal(oq_mask_check_polarity(m = mask_of(OQ_DTYPE_INT64, 1, 4, bad[0].v), NULL, (oq_mask_polarity)7,
                                            NULL, &err), OQ_ERR_INVALID_ARG);
    oq_tensor_free(m);
    oq_mask_polarity p = OQ_MASK_POLARITY_KEEP;
    assert_int_equal(oq_mask_polarity_parse("pad", &p), 0);
    assert_int_equal(p, OQ_MASK_POLARITY_PAD);
    assert_string_equal(oq_mask_polarity_name(p), "pad");
    assert_int_equal(oq_mask_polarity_parse("true", &p), -1);
    assert_string_equal(oq_mask_polarity_name((oq_mask_polarity)7), "unknown");
}

static void test_empty_event(void **state)
{
    (void)state;
    const double v[3 * 4] = {1, 1, 1, 0, /**/ 1, 0, 0, 0, /**/ 0, 0, 0, 0};
    oq_tensor *m = mask_of(OQ_DTYPE_INT32, 3, 4, v);
    expect_refused(m, NULL, OQ_ERR_MASK, "event 2: empty event", "every position 0..3", NULL);
    oq_tensor_free(m);
    /* L == 0 makes the first event empty, said without a range "0..-1" */
    int64_t shape[2] = {2, 0};
    assert_int_equal(oq_tensor_create(&m, OQ_DTYPE_BOOL, 2, shape, "mask", NULL), OQ_OK);
    expect_refused(m, NULL, OQ_ERR_MASK, "event 0: empty event", "the mask has no positions (length 0", NULL);
    {
        oq_err err = {0};
        assert_int_equal(oq_mask_check(m, NULL, NULL, &err), OQ_ERR_MASK);
        assert_null(strstr(err.msg, "-1"));
    }
    oq_tensor_free(m);
    /* B == 0 holds no event to violate anything */
    shape[0] = 0;
    shape[1] = 4;
    assert_int_equal(oq_tensor_create(&m, OQ_DTYPE_BOOL, 2, shape, "mask", NULL), OQ_OK);
    assert_int_equal(oq_mask_check(m, NULL, NULL, NULL), OQ_OK);
    oq_tensor_free(m);
}

/* One float mask with a single bad value at event 0, position 5. */
static void expect_bad_float(oq_dtype dtype, double bad, const char *shown)
{
    double v[2 * 8] = {1, 1, 1, 1, 1, 1, 0, 0, /**/ 1, 1, 1, 1, 1, 1, 1, 1};
    v[5] = bad;
    oq_tensor *m = mask_of(dtype, 2, 8, v);
    char want[96];
    snprintf(want, sizeof want, "event 0, position 5: mask value %s is not 0 or 1", shown);
    expect_refused(m, NULL, OQ_ERR_MASK, want, NULL, NULL);
    oq_tensor_free(m);
}

/* A float mask of 0s and large negatives is an additive mask: said so, with no_mask the way
 * (it read "event 0: empty event" or "value -1e+09 is not 0 or 1", QA round 9a's defect 9). */
static void test_additive_mask(void **state)
{
    (void)state;
    const double v[2 * 3] = {0, 0, 0, /**/ 0, -1e9, -INFINITY};
    oq_tensor *m = mask_of(OQ_DTYPE_FLOAT32, 2, 3, v);
    expect_refused(m, NULL, OQ_ERR_MASK, "only 0 and large negative values (-1e+09 at event 1, position 1)",
                   "it is itself an additive mask", "without a mask (no_mask)");
    oq_tensor_free(m);
    const double z[2 * 3] = {0};
    m = mask_of(OQ_DTYPE_FLOAT16, 2, 3, z);
    expect_refused(m, NULL, OQ_ERR_MASK, "the mask is 0 at every position: read as 1/0 every event is empty",
                   "if it is an additive mask (0 = keep)", NULL);
    /* read with 1 = padding, zeros are a valid mask: nothing to say */
    int64_t lengths[2];
    oq_err err = {0};
    assert_int_equal(oq_mask_check_polarity(m, NULL, OQ_MASK_POLARITY_PAD, lengths, &err), OQ_OK);
    assert_int_equal(lengths[1], 3);
    oq_tensor_free(m);
    /* a 1/0 float mask with an empty event keeps its own message */
    const double e[2 * 3] = {1, 1, 0, /**/ 0, 0, 0};
    m = mask_of(OQ_DTYPE_FLOAT32, 2, 3, e);
    expect_refused(m, NULL, OQ_ERR_MASK, "event 1: empty event", NULL, NULL);
    oq_tensor_free(m);
}

static void test_values_other_than_0_1(void **state)
{
    (void)state;
    expect_bad_float(OQ_DTYPE_FLOAT32, 0.5, "0.5");
    expect_bad_float(OQ_DTYPE_FLOAT32, NAN, "nan");
    expect_bad_float(OQ_DTYPE_FLOAT64, INFINITY, "inf");
    expect_bad_float(OQ_DTYPE_FLOAT16, -INFINITY, "-inf");
    expect_bad_float(OQ_DTYPE_FLOAT64, 2.0, "2");
    expect_bad_float(OQ_DTYPE_BFLOAT16, -1.0, "-1");
    expect_bad_float(OQ_DTYPE_INT32, 2.0, "2");
    expect_bad_float(OQ_DTYPE_INT64, -1.0, "-1");
    /* a value is refused even inside the padding, where it would otherwise be ignored */
    const double v[1 * 4] = {1, 0, 0, 0.25};
    oq_tensor *m = mask_of(OQ_DTYPE_FLOAT32, 1, 4, v);
    expect_refused(m, NULL, OQ_ERR_MASK, "event 0, position 3: mask value 0.25", NULL, NULL);
    oq_tensor_free(m);
    /* a bool byte other than 0/1 (a raw buffer from C, not from numpy) */
    const double w[1 * 3] = {1, 1, 0};
    m = mask_of(OQ_DTYPE_BOOL, 1, 3, w);
    ((uint8_t *)m->data)[1] = 2;
    expect_refused(m, NULL, OQ_ERR_MASK, "event 0, position 1: mask value 2", NULL, NULL);
    oq_tensor_free(m);
}

static void test_lengths_check(void **state)
{
    (void)state;
    oq_err err = {0};
    const int64_t ok[3] = {1, 7, 8};
    assert_int_equal(oq_mask_lengths_check(ok, 3, 8, &err), OQ_OK);
    const int64_t beyond[3] = {1, 9, 8};
    assert_int_equal(oq_mask_lengths_check(beyond, 3, 8, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "event 1: length 9 is beyond the padded length 8"));
    const int64_t empty[3] = {3, 2, 0};
    assert_int_equal(oq_mask_lengths_check(empty, 3, 8, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "event 2: length 0 leaves the event empty"));
    /* the padded length's positions as a reader says them: none for 0, one for 1 */
    const int64_t one[1] = {1};
    assert_int_equal(oq_mask_lengths_check(one, 1, 0, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "event 0: length 1 is beyond the padded length 0 (no positions)"));
    assert_null(strstr(err.msg, "-1"));
    const int64_t two[1] = {2};
    assert_int_equal(oq_mask_lengths_check(two, 1, 1, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "beyond the padded length 1 (position 0)"));
    assert_int_equal(oq_mask_lengths_check(beyond, 3, 8, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "(positions 0..7)"));
    const int64_t negative[1] = {-4};
    assert_int_equal(oq_mask_lengths_check(negative, 1, 8, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "event 0: length -4 is negative"));
    assert_int_equal(oq_mask_lengths_check(NULL, 2, 8, &err), OQ_ERR_INVALID_ARG);
}

static void test_make_round_trip(void **state)
{
    (void)state;
    const int64_t lengths[4] = {5, 1, 3, 6};
    const oq_dtype types[] = {OQ_DTYPE_BOOL, OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_INT64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        oq_tensor *m = NULL;
        assert_int_equal(oq_mask_make(lengths, 4, 6, types[t], &m, NULL), OQ_OK);
        assert_int_equal(m->dtype, types[t]);
        assert_int_equal(m->shape[0], 4);
        assert_int_equal(m->shape[1], 6);
        assert_true(oq_tensor_get_f64(m, 0 * 6 + 4) == 1.0 && oq_tensor_get_f64(m, 0 * 6 + 5) == 0.0);
        int64_t back[4];
        assert_int_equal(oq_mask_check(m, NULL, back, NULL), OQ_OK);
        assert_memory_equal(back, lengths, sizeof lengths);
        oq_tensor_free(m);
    }
    oq_err err = {0};
    oq_tensor dummy;
    oq_tensor *m = &dummy; /* must be reset to NULL on failure */
    const int64_t bad[2] = {3, 7};
    assert_int_equal(oq_mask_make(bad, 2, 6, OQ_DTYPE_FLOAT32, &m, &err), OQ_ERR_MASK);
    assert_null(m);
    assert_non_null(strstr(err.msg, "event 1: length 7 is beyond"));
}

static void test_sanitize_zeroes_only_padding(void **state)
{
    (void)state;
    int64_t shape[3] = {3, 4, 2};
    const int64_t lengths[3] = {2, 4, 1};
    const oq_dtype types[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16, OQ_DTYPE_FLOAT64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        oq_tensor *f = NULL;
        assert_int_equal(oq_tensor_create(&f, types[t], 3, shape, "x", NULL), OQ_OK);
        int64_t n = oq_tensor_numel(f);
        for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(f, i, i % 3 ? NAN : -(double)(i + 1));
        assert_int_equal(oq_mask_sanitize(f, lengths, NULL), OQ_OK);
        size_t es = oq_dtype_size(types[t]);
        static const uint8_t zeros[16] = {0};
        for (int64_t i = 0; i < n; i++) {
            int64_t b = i / 8, p = (i / 2) % 4;
            const uint8_t *bytes = (const uint8_t *)f->data + (size_t)i * es;
            if (p >= lengths[b]) {
                assert_memory_equal(bytes, zeros, es); /* +0.0 exactly, not -0.0 */
            } else {
                double v = oq_tensor_get_f64(f, i);
                assert_true(i % 3 ? isnan(v) : v < 0); /* untouched */
            }
        }
        oq_tensor_free(f);
    }
}

static void test_sanitize_refuses_bad_lengths(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 1};
    oq_tensor *f = NULL;
    assert_int_equal(oq_tensor_create(&f, OQ_DTYPE_FLOAT32, 3, shape, "x", NULL), OQ_OK);
    for (int i = 0; i < 6; i++) ((float *)f->data)[i] = 5.0f;
    oq_err err = {0};
    const int64_t bad[2] = {1, 4};
    assert_int_equal(oq_mask_sanitize(f, bad, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "event 1: length 4 is beyond the padded length 3"));
    for (int i = 0; i < 6; i++) assert_true(((float *)f->data)[i] == 5.0f); /* nothing written */
    f->ndim = 1;
    assert_int_equal(oq_mask_sanitize(f, bad, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "rank >= 2"));
    f->ndim = 3;
    oq_tensor_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_lengths_every_dtype),
        cmocka_unit_test(test_features_must_match),
        cmocka_unit_test(test_rank_and_dtype),
        cmocka_unit_test(test_hole),
        cmocka_unit_test(test_left_padding),
        cmocka_unit_test(test_empty_event),
        cmocka_unit_test(test_values_other_than_0_1),
        cmocka_unit_test(test_additive_mask),
        cmocka_unit_test(test_lengths_check),
        cmocka_unit_test(test_make_round_trip),
        cmocka_unit_test(test_sanitize_zeroes_only_padding),
        cmocka_unit_test(test_sanitize_refuses_bad_lengths),
        cmocka_unit_test(test_pad_polarity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
