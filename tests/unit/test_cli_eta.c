/* The progress line's time left (src/cli/cli_eta.c), fed reports at chosen times: each
 * configuration at its own pace, the ones after it at the configurations under test's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "cli.h"

#define NEAR(a, b) assert_true((a) > (b) - 1e-9 && (a) < (b) + 1e-9)

/* The reference read from the cache reports its 5,000 batches at once: they say nothing of the
 * pace of the configuration under test (counted as work done, they made 2 s of 7 left). */
static void cached_reference(void **state)
{
    (void)state;
    oq_cli_eta e = {0};
    assert_true(oq_cli_eta_update(&e, 0, 2, 5000, 5000, 1.0) < 0);
    assert_true(oq_cli_eta_update(&e, 1, 2, 100, 5000, 2.0) < 0); /* its first report: no pace yet */
    NEAR(oq_cli_eta_update(&e, 1, 2, 1100, 5000, 4.0), 3900 * 0.002);
    NEAR(oq_cli_eta_update(&e, 1, 2, 5000, 5000, 11.8), 0);
}

/* A fast reference, then configurations under test ten times slower per batch: while the
 * reference runs only its own time is told (its pace stood for the others': a 100,000-event
 * run's "ETA 51 s" before a configuration that ran past the 300 s timeout); then theirs. */
static void paces(void **state)
{
    (void)state;
    oq_cli_eta e = {0};
    assert_true(oq_cli_eta_update(&e, 0, 3, 10, 100, 1.0) < 0);
    NEAR(oq_cli_eta_update(&e, 0, 3, 60, 100, 2.0), 40 * 0.02);
    assert_true(e.partial);
    assert_true(oq_cli_eta_update(&e, 1, 3, 0, 100, 3.0) < 0);
    assert_false(e.partial);
    NEAR(oq_cli_eta_update(&e, 1, 3, 50, 100, 8.0), 50 * 0.1 + 100 * 0.1);
    NEAR(oq_cli_eta_update(&e, 1, 3, 100, 100, 13.0), 100 * 0.1);
    assert_true(oq_cli_eta_update(&e, 2, 3, 10, 100, 20.0) < 0);
    NEAR(oq_cli_eta_update(&e, 2, 3, 30, 100, 22.0), 70 * 0.1);
    /* a report of an earlier configuration (a cached reference read beside) changes nothing */
    assert_true(oq_cli_eta_update(&e, 0, 3, 100, 100, 23.0) < 0);
    NEAR(oq_cli_eta_update(&e, 2, 3, 40, 100, 23.0), 60 * 0.1);
    NEAR(oq_cli_eta_update(&e, 2, 3, 100, 100, 29.0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cached_reference),
        cmocka_unit_test(paces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
