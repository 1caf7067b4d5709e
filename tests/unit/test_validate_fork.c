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
#include <dirent.h>
#include <limits.h>
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

/* The caller's thread, started once the run's check has passed: idle until told. */
struct late_thread {
    pthread_t t;
    int started, wake[2];
};

static void *idle(void *arg)
{
    char c;
    ssize_t n = read(((struct late_thread *)arg)->wake[0], &c, 1);
    (void)n;
    return NULL;
}

static void start_late_thread(void *ctx, size_t done, size_t n)
{
    (void)done;
    (void)n;
    struct late_thread *l = ctx;
    if (!l->started) l->started = pthread_create(&l->t, NULL, idle, l) == 0;
}

/* A thread the caller starts after oq_validate_run's check (here: as the batches are written)
 * makes the workers unforkable, and there is no tool to run instead: the run stops at the first
 * worker's start with one line saying why and what to set, and leaves error.json alone (it used to
 * fail every configuration with that advice and write a failed summary, exit status 1). */
static void late_thread_refused_at_fork(void **state)
{
    (void)state;
    char tool[PATH_MAX];
    if (oq_validate_find_tool(tool, sizeof tool, NULL) == OQ_OK) skip(); /* a tool would run them */
    if (!oq_proc_single_threaded()) fail_msg("threads before the run");
    char *dir = temp_dir("vfork");
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_config cfg[2];
    oq_validate_opts o;
    validate_tiny(&o, cfg, outdir);
    struct late_thread l = {0};
    assert_int_equal(pipe(l.wake), 0);
    o.on_prepare = start_late_thread;
    o.progress_ctx = &l;
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    oq_status st = oq_validate_run(&o, &s, &err);
    assert_true(l.started);
    assert_int_equal(write(l.wake[1], "x", 1), 1);
    assert_int_equal(pthread_join(l.t, NULL), 0);
    close(l.wake[0]);
    close(l.wake[1]);
    if (st != OQ_ERR_INVALID_ARG) fail_msg("status %d, not refused: %s", (int)st, s ? "a summary was written" : err.msg);
    assert_null(s);
    if (!strstr(err.msg, "isolated workers cannot be forked from a process with other threads, and self_exe is NULL; "
                         "oq_validate_run's check before anything was written found none (a thread started"))
        fail_msg("%s", err.msg);
    assert_non_null(strstr(err.msg, "set self_exe to the ortqual tool"));
    assert_null(strchr(err.msg, '\n'));
    /* why, and nothing else: no summary, no batches, no models, no work folder */
    DIR *d = opendir(outdir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "error.json") &&
            strcmp(e->d_name, ".ortqual.lock"))
            fail_msg("%s left in the output folder", e->d_name);
    closedir(d);
    char path[600];
    snprintf(path, sizeof path, "%s/error.json", outdir);
    char text[4096] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    assert_non_null(strstr(text, "a process with other threads"));
    oq_remove_tree(dir);
    free(dir);
}

int main(void)
{
    unsetenv("ORT_DISABLE_TELEMETRY"); /* as a program of the user's runs */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_before_writing), /* first: this process has loaded no ORT yet */
        cmocka_unit_test(forked_without_tool),
        cmocka_unit_test(late_thread_refused_at_fork), /* its thread joined before it ends */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
