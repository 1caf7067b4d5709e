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
#include "ortqual/shard.h"
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

/* The defaults (isolate on, self_exe NULL): refused before anything is written, naming both
 * ways out (it used to fail each worker with "oq_proc_run_watch: argv[0] is NULL"). */
static void refused_without_self_exe(void **state)
{
    (void)state;
    assert_false(oq_proc_single_threaded());
    struct tiny_run r;
    tiny_run_init(&r, "vthreads");
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&r.o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_null(s);
    assert_non_null(strstr(err.msg, "other threads"));
    assert_non_null(strstr(err.msg, "set self_exe to the ortqual tool"));
    assert_non_null(strstr(err.msg, "isolate = 0"));
    /* linked in statically, the library looks for its tool under the configured prefix alone */
    assert_non_null(strstr(err.msg, "looked at "));
    assert_int_equal(access(r.outdir, F_OK), -1);
    tiny_run_remove(&r);
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
    struct tiny_run r;
    tiny_run_init(&r, "vthreads");
    r.o.self_exe = OQ_BINARY_DIR "/ortqual";
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&r.o, &s, &err), OQ_OK);
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    for (size_t i = 0; i < s->n_configs; i++) assert_false(s->configs[i].worker.forked);
    oq_validate_summary_free(s);
    tiny_run_remove(&r);
}

/* A run held at its first progress line (the folder's lock taken) until the other thread says. */
struct gate {
    struct run_hold hold;
    const char *outdir;
    oq_status st;
    int passed;
};

static void *first_run(void *arg)
{
    struct gate *g = arg;
    g->passed = validate_tiny_held(g->outdir, &g->hold, &g->st);
    return NULL;
}

/* Two threads, one folder: the library takes the folder's lock itself (flock, per open file:
 * a second thread is refused as a second process is), before the second writes anything. Two
 * such runs used to overwrite each other's files and both report a verdict. */
static void second_thread_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("vthreads");
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    struct gate g = {.outdir = outdir};
    run_hold_open(&g.hold);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, first_run, &g), 0);
    if (!run_hold_wait(&g.hold)) { /* let a late run go on past its line, then end the test */
        assert_int_equal(write(g.hold.go[1], "g", 1), 1);
        assert_int_equal(pthread_join(t, NULL), 0);
        fail_msg("the first run never reached its first progress line (status %d)", (int)g.st);
    }
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    oq_status st = validate_tiny_again(outdir, &s, &err);
    assert_int_equal(write(g.hold.go[1], "g", 1), 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(st, OQ_ERR_IO);
    assert_null(s);
    if (!strstr(err.msg, "in use by another ortqual run")) fail_msg("%s", err.msg);
    assert_int_equal(g.st, OQ_OK);
    assert_true(g.passed);
    run_hold_close(&g.hold);
    oq_remove_tree(dir);
    free(dir);
}

/* A caller that holds the folder's lock itself (as the tool does, to word a refusal its own
 * way) runs in it from the same thread: the library's lock is not taken twice. */
static void holder_runs_in_its_folder(void **state)
{
    (void)state;
    char *dir = temp_dir("vthreads");
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_outdir_lock *lock = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_outdir_lock_create(outdir, NULL, &lock, &err), OQ_OK);
    assert_non_null(lock);
    oq_config cfg[2];
    oq_validate_opts o;
    validate_tiny_in_process(&o, cfg, outdir);
    oq_validate_summary *s = NULL;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    assert_int_equal(s->verdict, OQ_RUN_PASSED);
    oq_validate_summary_free(s);
    oq_outdir_lock_free(lock);
    oq_remove_tree(dir);
    free(dir);
}

/* Another thread of the process, holding a lock file of `dir` until told. */
struct holder {
    const char *dir, *name;
    int ready[2], done[2];
};

static void *hold_lock(void *arg)
{
    struct holder *h = arg;
    oq_outdir_lock *lock = NULL;
    char c;
    oq_status st = oq_outdir_lock_create(h->dir, h->name, &lock, NULL);
    if (write(h->ready[1], st || !lock ? "e" : "h", 1) != 1 || read(h->done[0], &c, 1) != 1) abort();
    oq_outdir_lock_free(lock);
    return NULL;
}

/* A shard's own lock is the one file oq_shard_lock_name names, and the tool takes that file
 * too: held elsewhere, shard 3 of 4 is refused naming it, before it reads any plan. */
static void shard_lock_named_once(void **state)
{
    (void)state;
    char name[32];
    oq_shard_lock_name(3, name, sizeof name);
    assert_string_equal(name, ".ortqual.shard-3.lock");
    char *dir = temp_dir("vthreads");
    char outdir[512], want[700];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    struct holder h = {.dir = outdir, .name = name};
    assert_int_equal(pipe(h.ready), 0);
    assert_int_equal(pipe(h.done), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_lock, &h), 0);
    char c = 0;
    assert_int_equal(read(h.ready[0], &c, 1), 1);
    assert_int_equal(c, 'h');
    oq_config cfg[2];
    oq_validate_opts o;
    validate_tiny_in_process(&o, cfg, outdir);
    o.shard.count = 4;
    o.shard.index = 3;
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    oq_status st = oq_validate_run(&o, &s, &err);
    assert_int_equal(write(h.done[1], "d", 1), 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(st, OQ_ERR_IO);
    assert_null(s);
    snprintf(want, sizeof want, "holding %s/%s)", outdir, name);
    if (!strstr(err.msg, want)) fail_msg("'%s' does not say '%s'", err.msg, want);
    for (int i = 0; i < 2; i++) {
        close(h.ready[i]);
        close(h.done[i]);
    }
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
        cmocka_unit_test(second_thread_refused),
        cmocka_unit_test(holder_runs_in_its_folder),
        cmocka_unit_test(shard_lock_named_once),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (write(wake[1], "x", 1) != 1 || pthread_join(t, NULL)) rc = 1;
    return rc;
}
