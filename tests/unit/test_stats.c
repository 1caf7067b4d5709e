/* Exact sums (ortqual/stats.h): the value is the true sum rounded once, whatever the order or
 * grouping the terms came in (a merged summary's rel_l2 is the unsharded run's to the bit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/stats.h"

static double sum_of(const double *v, size_t n)
{
    oq_fsum s = {0};
    for (size_t i = 0; i < n; i++) oq_fsum_add(&s, v[i]);
    return oq_fsum_value(&s);
}

/* What a double sum loses: 1e16 + 1 - 1e16 is 1, not 0; and a tie rounds to even across parts
 * (Python's math.fsum([1e-16, 1, 1e16]) == 1e16 + 2). */
static void exact_where_doubles_are_not(void **state)
{
    (void)state;
    const double a[] = {1e16, 1.0, -1e16}, b[] = {1e-16, 1.0, 1e16}, c[] = {0.1, 0.2, 0.3, -0.6};
    assert_true(sum_of(a, 3) == 1.0);
    assert_true(sum_of(b, 3) == 1e16 + 2.0);
    assert_true(sum_of(c, 4) == 2.7755575615628914e-17); /* math.fsum's; in order, doubles give 1.1e-16 */
    oq_fsum z = {0};
    assert_true(oq_fsum_value(&z) == 0.0);
}

/* Finite terms whose sum passes the largest double: +inf, and still +inf after more terms and
 * after a merge (an overflowed part kept as a term gave inf - inf = NaN). */
static void overflow_stays_inf(void **state)
{
    (void)state;
    oq_fsum s = {0}, m = {0};
    oq_fsum_add(&s, 1.5);
    oq_fsum_add(&s, 1e308);
    oq_fsum_add(&s, 1e308);
    assert_true(isinf(oq_fsum_value(&s)) && oq_fsum_value(&s) > 0);
    oq_fsum_add(&s, 1.0);
    oq_fsum_add(&s, 1e308);
    assert_true(isinf(oq_fsum_value(&s)) && oq_fsum_value(&s) > 0);
    oq_fsum_add(&m, 2.0);
    oq_fsum_merge(&m, &s);
    assert_true(isinf(oq_fsum_value(&m)) && oq_fsum_value(&m) > 0);
}

/* Squares of errors of many magnitudes, added in two orders and in two groupings merged: the
 * same double each time (a plain double sum differs in its last bits). */
static void same_whatever_the_order(void **state)
{
    (void)state;
    enum { N = 5000 };
    static double v[N];
    unsigned seed = 11;
    for (int i = 0; i < N; i++) {
        double d = ((double)rand_r(&seed) / RAND_MAX - 0.5) * pow(10, rand_r(&seed) % 24 - 16);
        v[i] = d * d;
    }
    double forward = sum_of(v, N), plain = 0;
    oq_fsum back = {0}, lo = {0}, hi = {0};
    for (int i = N - 1; i >= 0; i--) oq_fsum_add(&back, v[i]);
    for (int i = 0; i < N; i++) oq_fsum_add(i < N / 3 ? &lo : &hi, v[i]), plain += v[i];
    assert_true(oq_fsum_value(&back) == forward);
    oq_fsum_merge(&hi, &lo);
    assert_true(oq_fsum_value(&hi) == forward);
    assert_true(fabs(plain - forward) <= 1e-13 * forward); /* a plain sum is near it */
    oq_fsum_merge(&lo, &lo); /* a sum merged with itself doubles */
    oq_fsum once = {0};
    for (int i = 0; i < N / 3; i++) oq_fsum_add(&once, v[i]), oq_fsum_add(&once, v[i]);
    assert_true(oq_fsum_value(&lo) == oq_fsum_value(&once));
}

/* Non-finite terms and overflow make the value non-finite; more parts than fit keep a value
 * that is still the sum rounded; NULL is nothing (and NaN for the value). */
static void edges(void **state)
{
    (void)state;
    const double inf[] = {1.0, INFINITY, 2.0}, both[] = {INFINITY, -INFINITY}, big[] = {1e308, 1e308};
    assert_true(isinf(sum_of(inf, 3)) && sum_of(inf, 3) > 0);
    assert_true(isnan(sum_of(both, 2)));
    assert_true(isinf(sum_of(big, 2)));
    const double nan[] = {NAN, 1.0};
    assert_true(isnan(sum_of(nan, 2)));
    oq_fsum s = {0};
    for (int k = 0; k < 3 * OQ_FSUM_PARTS; k++) oq_fsum_add(&s, ldexp(1.0, -15 * k)); /* a part each */
    assert_true(s.n <= OQ_FSUM_PARTS);
    assert_true(oq_fsum_value(&s) == 1.0 + ldexp(1.0, -15) + ldexp(1.0, -30) + ldexp(1.0, -45));
    oq_fsum_add(NULL, 1.0);
    oq_fsum_merge(NULL, &s);
    oq_fsum_merge(&s, NULL);
    assert_true(isnan(oq_fsum_value(NULL)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_where_doubles_are_not),
        cmocka_unit_test(same_whatever_the_order),
        cmocka_unit_test(overflow_stays_inf),
        cmocka_unit_test(edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
