/* oq_validate_run called from a program with a second thread, as a service calls it: isolated
 * workers cannot be forked there, so they re-execute self_exe; without one the call is refused
 * up front, saying what to set. A program of its own: the thread must be there from the start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/proc.h"
#include "ortqual/validate.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"
#include "validate/validate-impl.h"

static int wake[2];

/* The caller's other thread: idle until the tests end. */
static void *idle(void *arg)
{
    (void)arg;
    char c;
    ssize_t n = read(wake[0], &c, 1);
    (void)n;
    return NULL;
}

static void small_run(oq_validate_opts *o, oq_config cfg[2], const char *outdir)
{
    validate_two_configs(o, cfg, outdir);
    o->events.num_events = 8;
    o->events.batch_size = 8;
}

/* The defaults (isolate on, self_exe NULL): refused before anything is written, naming both
 * ways out (it used to fail each worker with "oq_proc_run_watch: argv[0] is NULL"). */
static void refused_without_self_exe(void **state)
{
    (void)state;
    assert_false(oq_proc_single_threaded());
    char *dir = temp_dir("vthreads");
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_config cfg[2];
    oq_validate_opts o;
    small_run(&o, cfg, outdir);
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_null(s);
    assert_non_null(strstr(err.msg, "other threads"));
    assert_non_null(strstr(err.msg, "set self_exe to the ortqual tool"));
    assert_non_null(strstr(err.msg, "isolate = 0"));
    /* linked in statically, the library looks for its tool under the configured prefix alone */
    assert_non_null(strstr(err.msg, "looked at "));
    assert_int_equal(access(outdir, F_OK), -1);
    remove_dir(dir);
}

/* A worker that must be re-executed (here: this process has threads) and no self_exe: the
 * spawn says what to set, not oq_proc's argv[0] (the check above can be passed before a
 * thread or an EP library appears). */
static void spawn_names_self_exe(void **state)
{
    (void)state;
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.ort_lib = OQ_ORT_LIB;
    oq_proc_result res = {0};
    int forked = 1;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_worker_spawn(&o, "/nonexistent/plan.json", o.ort_lib, NULL, &res, &forked, &err),
                     OQ_ERR_INVALID_ARG);
    assert_false(forked);
    assert_non_null(strstr(err.msg, "set self_exe to the ortqual tool"));
    assert_null(strstr(err.msg, "argv[0]"));
    oq_proc_result_clear(&res);
}

/* With self_exe the workers are the tool re-executed, and the run passes. */
static void runs_with_self_exe(void **state)
{
    (void)state;
    char *dir = temp_dir("vthreads");
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_config cfg[2];
    oq_validate_opts o;
    small_run(&o, cfg, outdir);
    o.self_exe = OQ_BINARY_DIR "/ortqual";
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    for (size_t i = 0; i < s->n_configs; i++) assert_false(s->configs[i].worker.forked);
    oq_validate_summary_free(s);
    oq_remove_tree(dir);
    free(dir);
}

int main(void)
{
    pthread_t t;
    if (pipe(wake) || pthread_create(&t, NULL, idle, NULL)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_without_self_exe),
        cmocka_unit_test(spawn_names_self_exe),
        cmocka_unit_test(runs_with_self_exe),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (write(wake[1], "x", 1) != 1 || pthread_join(t, NULL)) rc = 1;
    return rc;
}
