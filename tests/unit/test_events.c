/* Synthetic events: RNG, reproducibility, length policies, batching, padding. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/events.h"
#include "ortqual/mask.h"

static void assert_has(const char *hay, const char *needle)
{
    if (!strstr(hay, needle)) fail_msg("'%s' lacks '%s'", hay, needle);
}

static void test_xoshiro_known_answers(void **state)
{
    (void)state;
    /* The reference xoshiro256**.c from state {1, 2, 3, 4}. */
    oq_rng r = {.s = {1, 2, 3, 4}};
    assert_true(oq_rng_next(&r) == 11520u);
    assert_true(oq_rng_next(&r) == 0u);
    assert_true(oq_rng_next(&r) == 1509978240u);
    assert_true(oq_rng_next(&r) == 1215971899390074240u);
    /* The seeding recipe of events.h, transcribed independently in Python:
     *   x = mix(seed + mix(stream + 1)); 4 x (x += golden; s[i] = mix(x)) */
    oq_rng_seed(&r, 12345, 0);
    assert_true(r.s[0] == 0xbe6909d2f3c518a3u && r.s[3] == 0x50288c56ee667d46u);
    assert_true(oq_rng_next(&r) == 0xd4330c690feece5cu);
    assert_true(oq_rng_next(&r) == 0x0ecfb0b63a1dd6f3u);
    oq_rng_seed(&r, 12345, 7);
    assert_true(oq_rng_next(&r) == 0x1b8927f925f7415fu);
}

static void test_uniform_and_normal(void **state)
{
    (void)state;
    oq_rng r;
    oq_rng_seed(&r, 99, 3);
    int seen[5] = {0};
    for (int i = 0; i < 5000; i++) {
        int64_t v = oq_rng_uniform_int(&r, -2, 2);
        assert_true(v >= -2 && v <= 2);
        seen[v + 2]++;
    }
    for (int i = 0; i < 5; i++) assert_true(seen[i] > 850 && seen[i] < 1150); /* ~1000 each */
    assert_true(oq_rng_uniform_int(&r, 7, 7) == 7);
    double sum = 0, sq = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double z = oq_rng_normal(&r);
        assert_true(isfinite(z));
        sum += z;
        sq += z * z;
    }
    assert_true(fabs(sum / n) < 0.01);      /* sd of the mean: 0.0022 */
    assert_true(fabs(sq / n - 1.0) < 0.02); /* sd of the variance: 0.0032 */
}

static oq_events *make(const oq_events_opts *o)
{
    oq_events *ev = NULL;
    oq_err err = {0};
    if (oq_events_create(o, &ev, &err) != OQ_OK) fail_msg("oq_events_create: %s", err.msg);
    return ev;
}

/* Every batch: shapes, mask contract, lengths, exact-zero padding. Returns total events seen. */
static int64_t check_batches(const oq_events *ev, const oq_events_opts *o)
{
    int64_t seen = 0;
    for (int64_t k = 0; k < oq_events_batch_count(ev); k++) {
        oq_tensor *x = NULL, *m = NULL;
        int64_t idx[64], lengths[64];
        oq_err err = {0};
        assert_int_equal(oq_events_make_batch(ev, k, &x, &m, idx, &err), OQ_OK);
        int64_t B = x->shape[0], L = x->shape[1];
        assert_int_equal(x->shape[2], o->num_features);
        assert_int_equal(x->dtype, o->feature_dtype);
        assert_int_equal(m->dtype, o->mask_dtype);
        assert_int_equal(oq_mask_check(m, x, lengths, &err), OQ_OK);
        for (int64_t b = 0; b < B; b++) {
            assert_int_equal(idx[b], seen + b); /* distinct events, in order */
            assert_int_equal(lengths[b], oq_events_lengths(ev)[idx[b]]);
            for (int64_t p = 0; p < L; p++)
                for (int64_t f = 0; f < o->num_features; f++) {
                    double v = oq_tensor_get_f64(x, (b * L + p) * o->num_features + f);
                    if (p >= lengths[b]) assert_true(v == 0.0 && !signbit(v));
                    else assert_true(v != 0.0 && isfinite(v));
                }
        }
        seen += B;
        oq_tensor_free(x);
        oq_tensor_free(m);
    }
    assert_int_equal(seen, o->num_events);
    return seen;
}

static void test_same_seed_same_events(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 7;
    o.batch_size = 3;
    o.num_features = 5;
    assert_int_equal(oq_length_policy_parse("uniform 4 40", &o, NULL), OQ_OK);
    oq_events *a = make(&o), *b = make(&o);
    o.seed += 1;
    oq_events *c = make(&o);
    assert_memory_equal(oq_events_lengths(a), oq_events_lengths(b), 7 * sizeof(int64_t));
    assert_true(memcmp(oq_events_lengths(a), oq_events_lengths(c), 7 * sizeof(int64_t)) != 0);
    for (int64_t k = 0; k < oq_events_batch_count(a); k++) {
        oq_tensor *xa, *xb, *xc, *ma, *mb;
        assert_int_equal(oq_events_make_batch(a, k, &xa, &ma, NULL, NULL), OQ_OK);
        assert_int_equal(oq_events_make_batch(b, k, &xb, &mb, NULL, NULL), OQ_OK);
        assert_int_equal(oq_events_make_batch(c, k, &xc, NULL, NULL, NULL), OQ_OK);
        assert_int_equal(oq_tensor_nbytes(xa), oq_tensor_nbytes(xb));
        assert_memory_equal(xa->data, xb->data, oq_tensor_nbytes(xa));
        assert_memory_equal(ma->data, mb->data, oq_tensor_nbytes(ma));
        /* another seed: the first feature of event 0 of the batch differs */
        assert_true(oq_tensor_get_f64(xa, 0) != oq_tensor_get_f64(xc, 0));
        oq_tensor_free(xa), oq_tensor_free(xb), oq_tensor_free(xc), oq_tensor_free(ma), oq_tensor_free(mb);
    }
    oq_events_free(a), oq_events_free(b), oq_events_free(c);
}

static void test_event_values_independent_of_batching(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 6;
    o.num_features = 3;
    o.policy = OQ_LENGTH_FRACTION;
    o.fraction = 0.5;
    o.max_len = 10;
    o.batch_size = 4; /* event 5 is row 1 of batch 1 */
    oq_events *a = make(&o);
    o.batch_size = 1; /* event 5 is batch 5 */
    o.pad_bin_size = 16;
    oq_events *b = make(&o);
    oq_tensor *xa, *xb;
    assert_int_equal(oq_events_make_batch(a, 1, &xa, NULL, NULL, NULL), OQ_OK);
    assert_int_equal(oq_events_make_batch(b, 5, &xb, NULL, NULL, NULL), OQ_OK);
    assert_int_equal(xa->shape[1], 10);
    assert_int_equal(xb->shape[1], 16);
    const float *ra = (const float *)xa->data + 1 * 10 * 3, *rb = xb->data;
    assert_memory_equal(ra, rb, 5 * 3 * sizeof(float)); /* the 5 valid positions */
    /* as documented: event e's features are stream e + 1 of the seed, row-major */
    oq_rng r;
    oq_rng_seed(&r, o.seed, 5 + 1);
    for (int i = 0; i < 5 * 3; i++) assert_true(rb[i] == (float)oq_rng_normal(&r));
    oq_tensor_free(xa), oq_tensor_free(xb);
    oq_events_free(a), oq_events_free(b);
}

static void test_fixed_and_last_batch_smaller(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 10;
    o.batch_size = 4;
    o.num_features = 2;
    assert_int_equal(oq_length_policy_parse("fixed 12", &o, NULL), OQ_OK);
    o.mask_dtype = OQ_DTYPE_BOOL;
    o.feature_dtype = OQ_DTYPE_FLOAT16;
    oq_events *ev = make(&o);
    assert_int_equal(oq_events_count(ev), 10);
    assert_int_equal(oq_events_batch_count(ev), 3);
    int64_t n, L;
    const int64_t want[3] = {4, 4, 2};
    for (int64_t k = 0; k < 3; k++) {
        assert_int_equal(oq_events_batch_shape(ev, k, &n, &L, NULL), OQ_OK);
        assert_int_equal(n, want[k]);
        assert_int_equal(L, 12);
    }
    for (int e = 0; e < 10; e++) assert_int_equal(oq_events_lengths(ev)[e], 12);
    check_batches(ev, &o);
    oq_err err = {0};
    assert_int_equal(oq_events_batch_shape(ev, 3, &n, &L, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, "batch 3 outside 0..2");
    oq_events_free(ev);
}

static void test_balanced(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 10;
    o.batch_size = 4;
    o.num_features = 1;
    assert_int_equal(oq_length_policy_parse("balanced:8:64", &o, NULL), OQ_OK);
    oq_events *ev = make(&o);
    /* step 56/3 within each batch of 4; the last batch of 2 spans min..max */
    const int64_t want[10] = {8, 27, 45, 64, 8, 27, 45, 64, 8, 64};
    assert_memory_equal(oq_events_lengths(ev), want, sizeof want);
    int64_t L;
    assert_int_equal(oq_events_batch_shape(ev, 2, NULL, &L, NULL), OQ_OK);
    assert_int_equal(L, 64);
    check_batches(ev, &o);
    oq_events_free(ev);
}

/* Batches of one event: the spread runs over the run's events (every event was max_len long, no
 * padding made at all); a run of one event takes the spread's mean, as bench's batch of one. */
static void test_balanced_batches_of_one(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 6;
    o.batch_size = 1;
    o.num_features = 1;
    assert_int_equal(oq_length_policy_parse("balanced 10 64", &o, NULL), OQ_OK);
    oq_events *ev = make(&o);
    const int64_t want[6] = {10, 21, 32, 42, 53, 64}; /* step 54/5 over the run */
    assert_memory_equal(oq_events_lengths(ev), want, sizeof want);
    check_batches(ev, &o);
    oq_events_free(ev);
    o.num_events = 1;
    ev = make(&o);
    assert_int_equal(oq_events_lengths(ev)[0], 37); /* round((10 + 64) / 2) */
    oq_events_free(ev);
}

static void test_uniform_with_bins(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 9;
    o.batch_size = 2;
    o.num_features = 4;
    o.pad_bin_size = 16;
    o.mask_dtype = OQ_DTYPE_INT64;
    o.feature_dtype = OQ_DTYPE_FLOAT64;
    assert_int_equal(oq_length_policy_parse("uniform 3 50", &o, NULL), OQ_OK);
    oq_events *ev = make(&o);
    const int64_t *len = oq_events_lengths(ev);
    for (int64_t k = 0; k < oq_events_batch_count(ev); k++) {
        int64_t n, L, longest = 0;
        assert_int_equal(oq_events_batch_shape(ev, k, &n, &L, NULL), OQ_OK);
        for (int64_t i = 0; i < n; i++) {
            assert_true(len[2 * k + i] >= 3 && len[2 * k + i] <= 50);
            if (len[2 * k + i] > longest) longest = len[2 * k + i];
        }
        assert_int_equal(L % 16, 0);
        assert_true(L >= longest && L < longest + 16); /* the longest event, rounded up */
    }
    check_batches(ev, &o);
    oq_events_free(ev);
    /* static shapes: every batch as long as max_len, then rounded up */
    o.pad_to_max_len = 1;
    ev = make(&o);
    int64_t L;
    assert_int_equal(oq_events_batch_shape(ev, 0, NULL, &L, NULL), OQ_OK);
    assert_int_equal(L, 64);
    oq_events_free(ev);
}

static void test_fraction(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 3;
    o.batch_size = 3;
    o.num_features = 2;
    o.max_len = 100;
    assert_int_equal(oq_length_policy_parse("fraction 0.25", &o, NULL), OQ_OK);
    oq_events *ev = make(&o);
    int64_t L;
    assert_int_equal(oq_events_batch_shape(ev, 0, NULL, &L, NULL), OQ_OK);
    assert_int_equal(L, 100);
    for (int e = 0; e < 3; e++) assert_int_equal(oq_events_lengths(ev)[e], 75);
    check_batches(ev, &o);
    oq_events_free(ev);
    o.pad_bin_size = 48;
    ev = make(&o);
    assert_int_equal(oq_events_batch_shape(ev, 0, NULL, &L, NULL), OQ_OK);
    assert_int_equal(L, 144);
    oq_events_free(ev);
}

static void expect_policy_error(const char *text, const char *needle)
{
    oq_events_opts o = oq_events_opts_default(), before = o;
    oq_err err = {0};
    assert_int_equal(oq_length_policy_parse(text, &o, &err), OQ_ERR_INVALID_ARG);
    assert_has(err.msg, needle);
    assert_memory_equal(&o, &before, sizeof o); /* untouched */
}

static void test_policy_parse(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    assert_int_equal(oq_length_policy_parse("uniform:8:64", &o, NULL), OQ_OK);
    assert_int_equal(o.policy, OQ_LENGTH_UNIFORM);
    assert_int_equal(o.min_len, 8);
    assert_int_equal(o.max_len, 64);
    assert_int_equal(oq_length_policy_parse("balanced", &o, NULL), OQ_OK);
    assert_int_equal(o.policy, OQ_LENGTH_BALANCED);
    assert_int_equal(o.min_len, 8); /* kept */
    assert_int_equal(oq_length_policy_parse("fraction 0", &o, NULL), OQ_OK);
    assert_true(o.policy == OQ_LENGTH_FRACTION && o.fraction == 0.0);
    assert_int_equal(oq_length_policy_parse("fixed", &o, NULL), OQ_OK);
    assert_string_equal(oq_length_policy_name(o.policy), "fixed");
    expect_policy_error("", "length policy is empty");
    expect_policy_error("gaussian 3", "unknown policy 'gaussian'");
    expect_policy_error("uniform 8", "uniform needs MIN and MAX");
    expect_policy_error("uniform 64 8", "want 1 <= MIN <= MAX, got MIN 64 MAX 8");
    expect_policy_error("uniform 0 8", "got MIN 0");
    expect_policy_error("uniform a 8", "must be integers");
    expect_policy_error("fraction 1", "0 <= F < 1");
    expect_policy_error("fraction -0.1", "0 <= F < 1");
    expect_policy_error("fraction half", "0 <= F < 1");
    expect_policy_error("fraction", "0 <= F < 1");
    expect_policy_error("fixed 0", "fixed takes at most one integer length >= 1");
    expect_policy_error("uniform 1 2 3 4 5", "too many values");
}

static void expect_create_error(oq_events_opts o, const char *needle)
{
    oq_events *ev = NULL;
    oq_err err = {0};
    assert_int_equal(oq_events_create(&o, &ev, &err), OQ_ERR_INVALID_ARG);
    assert_null(ev);
    assert_has(err.msg, needle);
}

static void test_create_errors(void **state)
{
    (void)state;
    oq_events_opts o = oq_events_opts_default();
    o.num_events = 0;
    expect_create_error(o, "num_events 0 must be >= 1");
    o = oq_events_opts_default();
    o.batch_size = -1;
    expect_create_error(o, "batch_size -1");
    o = oq_events_opts_default();
    o.policy = OQ_LENGTH_UNIFORM;
    o.min_len = 70;
    expect_create_error(o, "uniform lengths need 1 <= min_len <= max_len, got 70..64");
    o = oq_events_opts_default();
    o.policy = OQ_LENGTH_FRACTION;
    o.fraction = 0.96;
    o.max_len = 10;
    expect_create_error(o, "leaves no valid element at max_len 10");
    o = oq_events_opts_default();
    o.mask_dtype = OQ_DTYPE_UNDEFINED;
    expect_create_error(o, "mask dtype undefined");
    o = oq_events_opts_default();
    o.feature_dtype = OQ_DTYPE_INT64;
    expect_create_error(o, "feature dtype int64 is not a float dtype");
    o = oq_events_opts_default();
    o.pad_bin_size = -2;
    expect_create_error(o, "pad_bin_size -2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xoshiro_known_answers),
        cmocka_unit_test(test_uniform_and_normal),
        cmocka_unit_test(test_same_seed_same_events),
        cmocka_unit_test(test_event_values_independent_of_batching),
        cmocka_unit_test(test_fixed_and_last_batch_smaller),
        cmocka_unit_test(test_balanced),
        cmocka_unit_test(test_balanced_batches_of_one),
        cmocka_unit_test(test_uniform_with_bins),
        cmocka_unit_test(test_fraction),
        cmocka_unit_test(test_policy_parse),
        cmocka_unit_test(test_create_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
