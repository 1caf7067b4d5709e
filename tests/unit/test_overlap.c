/* validate's cached reference beside the first configuration under test (validate.c): when it
 * runs so, and what a background reference's failure leaves. A program of its own: the workers
 * are forked only from a process of one thread (an earlier test's thread pools would make them
 * re-executed, where the failure below cannot be injected). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/validate.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"
#include "validate/validate-impl.h"

/* In a forked worker: the one whose stderr is a file (the background reference) exits at once,
 * as a crashed worker would. */
static void reference_in_background_fails(void)
{
    struct stat sb;
    if (fstat(2, &sb) == 0 && S_ISREG(sb.st_mode)) _exit(5);
}

/* The CPUs this process may run on. */
static int usable_cores(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* threads: ORT's intra-op threads and the reference's (0: every core). */
static oq_validate_summary *run_cached(const char *dir, const char *name, int no_overlap, int threads,
                                       void (*hook)(void))
{
    oq_config cfg[2];
    char outdir[512], cache[512];
    snprintf(outdir, sizeof outdir, "%s/%s", dir, name);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    o.cache_dir = cache;
    o.no_overlap = no_overlap;
    o.threads = threads;
    o.on_worker_fork = hook;
    o.self_exe = OQ_BINARY_DIR "/ortqual"; /* where a fork is not safe */
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    return s;
}

/* The reference runs beside configuration 1 only when every batch is in the cache, the
 * configuration leaves it a core (here: 1 thread of 2 or more cores; ORT's default threads take
 * every core) and --no-overlap is not given; a background reference that fails leaves
 * configuration 1 not run (its comparison had nothing to go on), never passed, and the run
 * ends. */
static void reference_beside_when_cached(void **state)
{
    (void)state;
    char *dir = temp_dir("beside");
    oq_validate_summary *s = run_cached(dir, "cold", 0, 1, NULL);
    assert_string_equal(s->configs[0].worker.beside, "");
    assert_true(s->configs[0].worker.forked); /* the hook below runs in forked workers */
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    oq_validate_summary_free(s);
    s = run_cached(dir, "every-core", 0, 0, NULL);
    assert_string_equal(s->configs[0].worker.beside, "");
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    oq_validate_summary_free(s);
    s = run_cached(dir, "serial", 1, 1, NULL);
    assert_string_equal(s->configs[0].worker.beside, "");
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    oq_validate_summary_free(s);
    /* the rest needs a second core; CI's machines have two */
    assert_true(usable_cores() >= 2);
    s = run_cached(dir, "warm", 0, 1, NULL);
    assert_string_equal(s->configs[0].worker.beside, "cpu:attention24:fp32");
    assert_int_equal(s->configs[0].status, OQ_VERDICT_REFERENCE);
    assert_int_equal(s->configs[1].status, OQ_VERDICT_PASSED);
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    oq_validate_summary_free(s);
    s = run_cached(dir, "failed", 0, 1, reference_in_background_fails);
    assert_string_equal(s->configs[0].worker.beside, "cpu:attention24:fp32");
    assert_int_equal(s->configs[0].status, OQ_VERDICT_ERROR);
    assert_int_equal(s->configs[1].status, OQ_VERDICT_NOT_RUN);
    assert_non_null(strstr(s->configs[1].reason, "the reference did not run"));
    assert_int_not_equal(s->verdict, OQ_RUN_PASSED);
    oq_validate_summary_free(s);
    oq_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_beside_when_cached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
