/* oq_cupti against tests/fixtures/modules/fake_cupti.c (no GPU here): records summed by kind,
 * taken per interval, collection only while enabled, and each failure said. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/proc.h"

#define FAKE OQ_BINARY_DIR "/tests/libfake_cupti.so"

static int reset_env(void **state)
{
    (void)state;
    unsetenv("FAKE_CUPTI_KERNELS");
    unsetenv("FAKE_CUPTI_UNFINISHED");
    unsetenv("FAKE_CUPTI_DROPPED");
    unsetenv("FAKE_CUPTI_FAIL_ENABLE");
    unsetenv("FAKE_CUPTI_BAD_NAMES");
    return 0;
}

static oq_cupti *open_fake(void)
{
    oq_cupti *c = NULL;
    oq_err err = {0};
    assert_int_equal(oq_cupti_create(FAKE, &c, &err), OQ_OK);
    return c;
}

/* The stand-in handing out `kernels` (durations in ns) at every flush, collecting. */
static oq_cupti *enabled_fake(const char *kernels)
{
    setenv("FAKE_CUPTI_KERNELS", kernels, 1);
    oq_cupti *c = open_fake();
    oq_err err = {0};
    assert_int_equal(oq_cupti_enable(c, 1, &err), OQ_OK);
    return c;
}

static void test_kernels_summed_per_take(void **state)
{
    (void)state;
    setenv("FAKE_CUPTI_KERNELS", "1000,2500,500", 1);
    oq_cupti *c = open_fake();
    oq_err err = {0};
    double ms = -1;
    size_t n = 99;
    /* not enabled: nothing collected */
    assert_int_equal(oq_cupti_take(c, &ms, &n, &err), OQ_OK);
    assert_int_equal(n, 0);
    assert_true(ms == 0);
    assert_int_equal(oq_cupti_enable(c, 1, &err), OQ_OK);
    for (int i = 0; i < 2; i++) { /* each take: that interval's kernels only, the memcpy not */
        assert_int_equal(oq_cupti_take(c, &ms, &n, &err), OQ_OK);
        assert_int_equal(n, 3);
        assert_true(fabs(ms - 0.004) < 1e-12);
        /* named in turn: two distinct names, the mangled one demangled (libstdc++ is loaded) */
        const char *names[4];
        assert_int_equal(oq_cupti_kernel_names(c, names, 4), 2);
        int flash = !strcmp(names[0], "fake::flash_kernel()") ? 0 : 1;
        assert_string_equal(names[flash], "fake::flash_kernel()");
        assert_string_equal(names[1 - flash], "plain_kernel");
    }
    assert_int_equal(oq_cupti_enable(c, 0, &err), OQ_OK);
    assert_int_equal(oq_cupti_take(c, &ms, &n, &err), OQ_OK);
    assert_int_equal(n, 0);
    oq_cupti_free(c);
}

/* A name pointer into nothing (a record layout read wrong) is "?", not a crash. */
static void test_unreadable_name(void **state)
{
    (void)state;
    setenv("FAKE_CUPTI_BAD_NAMES", "1", 1);
    oq_cupti *c = enabled_fake("1000,2000");
    oq_err err = {0};
    double ms;
    size_t n;
    const char *names[4];
    assert_int_equal(oq_cupti_take(c, &ms, &n, &err), OQ_OK);
    assert_int_equal(n, 2);
    assert_int_equal(oq_cupti_kernel_names(c, names, 4), 1);
    assert_string_equal(names[0], "?");
    oq_cupti_free(c);
}

static void test_one_collector_at_a_time(void **state)
{
    (void)state;
    oq_cupti *a = open_fake(), *b = NULL;
    oq_err err = {0};
    assert_int_equal(oq_cupti_create(FAKE, &b, &err), OQ_ERR_INVALID_ARG);
    assert_null(b);
    assert_non_null(strstr(err.msg, "one CUPTI collector at a time"));
    oq_cupti_free(a);
    b = open_fake(); /* free lets the next one in */
    oq_cupti_free(b);
}

static void test_incomplete_sums_refused(void **state)
{
    (void)state;
    setenv("FAKE_CUPTI_UNFINISHED", "1", 1);
    oq_cupti *c = enabled_fake("1000");
    oq_err err = {0};
    double ms;
    size_t n;
    assert_int_equal(oq_cupti_take(c, &ms, &n, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "1 kernel records without an end time"));
    unsetenv("FAKE_CUPTI_UNFINISHED");
    setenv("FAKE_CUPTI_DROPPED", "5", 1);
    assert_int_equal(oq_cupti_take(c, &ms, &n, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "dropped 5 activity records"));
    unsetenv("FAKE_CUPTI_DROPPED");
    assert_int_equal(oq_cupti_take(c, &ms, &n, &err), OQ_OK); /* the counts start over */
    assert_int_equal(n, 1);
    oq_cupti_free(c);
}

static void test_failures_named(void **state)
{
    (void)state;
    oq_cupti *c = NULL;
    oq_err err = {0};
    assert_int_equal(oq_cupti_create("/nonexistent/libcupti.so", &c, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "/nonexistent/libcupti.so"));
    /* a library that is not CUPTI */
    assert_int_equal(oq_cupti_create(OQ_BINARY_DIR "/tests/libnone_ep.so", &c, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "is not CUPTI"));
    assert_null(c);
    setenv("FAKE_CUPTI_FAIL_ENABLE", "1", 1);
    c = open_fake();
    assert_int_equal(oq_cupti_enable(c, 1, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "cuptiActivityEnable(CONCURRENT_KERNEL) failed: CUPTI_ERROR_NOT_INITIALIZED"));
    oq_cupti_free(c);
}

int main(void)
{
    /* the demangler ORT's libstdc++ brings into a real process */
    if (!dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_kernels_summed_per_take, reset_env),
        cmocka_unit_test_setup(test_unreadable_name, reset_env),
        cmocka_unit_test_setup(test_one_collector_at_a_time, reset_env),
        cmocka_unit_test_setup(test_incomplete_sums_refused, reset_env),
        cmocka_unit_test_setup(test_failures_named, reset_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
