/* oq_validate_run called as validate.h's example calls it, from a program of one thread with no
 * tool to re-execute (self_exe NULL): its workers are forked. ORT 1.29's telemetry client, a
 * thread started with the first environment, used to make every worker re-executed, and with
 * no tool the run ended in error after writing everything. Where a worker cannot be forked and
 * no tool runs instead, the call is refused before anything is written.
 * A program of its own: it must stay one thread, with ORT_DISABLE_TELEMETRY unset (ctest sets
 * it for every unit test, which hid the thread). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/proc.h"
#include "ortqual/validate.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"

/* The header's example: every worker forked, the run passed, the caller's environment as it was. */
static void forked_without_tool(void **state)
{
    (void)state;
    if (!oq_proc_single_threaded()) fail_msg("threads before the run: the last ORT environment's telemetry client?");
    struct tiny_run r;
    tiny_run_init(&r, "vfork");
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    if (oq_validate_run(&r.o, &s, &err)) fail_msg("%s", err.msg);
    for (size_t i = 0; i < s->n_configs; i++)
        if (!s->configs[i].worker.forked) fail_msg("%s: re-executed, not forked", s->configs[i].config.name);
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    assert_int_equal(s->exit_status, 0);
    oq_validate_summary_free(s);
    assert_true(oq_proc_single_threaded());
    assert_null(getenv("ORT_DISABLE_TELEMETRY"));
    tiny_run_remove(&r);
}

/* The reference on another ORT library (a copy) cannot be forked beside this process's: with
 * no tool to re-execute, refused up front, nothing made (it used to be OQ_OK with the
 * reference in error and every file written). */
static void refused_before_writing(void **state)
{
    (void)state;
    char tool[PATH_MAX];
    if (oq_validate_find_tool(tool, sizeof tool, NULL) == OQ_OK) skip(); /* a tool would run them */
    struct tiny_run r;
    tiny_run_init(&r, "vfork");
    char copy[512], cmd[1200];
    snprintf(copy, sizeof copy, "%s/copy.so", r.dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", OQ_ORT_LIB, copy);
    assert_int_equal(system(cmd), 0);
    r.o.reference_ort_lib = copy;
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&r.o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_null(s);
    if (!strstr(err.msg, "isolated workers cannot be forked from a process whose ORT library is not the "
                         "reference's (reference_ort_lib), and self_exe is NULL ("))
        fail_msg("%s", err.msg);
    assert_non_null(strstr(err.msg, "set self_exe to the ortqual tool"));
    assert_int_equal(access(r.outdir, F_OK), -1);
    tiny_run_remove(&r);
}

int main(void)
{
    unsetenv("ORT_DISABLE_TELEMETRY"); /* as a program of the user's runs */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_before_writing), /* first: this process has loaded no ORT yet */
        cmocka_unit_test(forked_without_tool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
