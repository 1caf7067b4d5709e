/* oq_validate_run refuses a caller's impossible fields up front (OQ_ERR_INVALID_ARG naming the
 * field, nothing written): they used to abort the process (graph_opt), crash it (configs NULL,
 * a repr out of range) or run and be recorded as a runtime error (threads, padding, kind,
 * repeat, warmup). And it takes the output folder's lock itself: a second process's run into
 * the same folder is refused before it writes anything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/validate.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"
#include "validate/validate-impl.h"

/* One impossible value set by `spoil`: refused naming it, and the folder never made. */
static void refused(void (*spoil)(oq_validate_opts *, oq_config *), const char *says)
{
    char *dir = temp_dir("vargs");
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_config cfg[2];
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    o.isolate = 0;
    spoil(&o, cfg);
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_null(s);
    if (!strstr(err.msg, says)) fail_msg("'%s' does not say '%s'", err.msg, says);
    assert_int_equal(access(outdir, F_OK), -1);
    remove_dir(dir);
}

static void graph_opt_9(oq_validate_opts *o, oq_config *c) { (void)c; o->graph_opt = (oq_graph_opt)9; }
static void configs_null(oq_validate_opts *o, oq_config *c) { (void)c; o->configs = NULL; }
static void repr_99(oq_validate_opts *o, oq_config *c) { (void)o; c[1].repr = (oq_repr)99; }
static void precision_9(oq_validate_opts *o, oq_config *c) { (void)o; c[1].precision = (oq_precision)9; }
static void kernel_minus(oq_validate_opts *o, oq_config *c) { (void)o; c[0].kernel = (oq_kernel)-1; }
static void threads_minus_2(oq_validate_opts *o, oq_config *c) { (void)c; o->threads = -2; }
static void padding_7(oq_validate_opts *o, oq_config *c) { (void)c; o->padding = 7; }
static void kind_9(oq_validate_opts *o, oq_config *c) { (void)c; o->kind = (oq_model_kind)9; }
static void repeat_minus_1(oq_validate_opts *o, oq_config *c) { (void)c; o->repeat = -1; }
static void warmup_minus_3(oq_validate_opts *o, oq_config *c) { (void)c; o->warmup = -3; }

static void bad_enums_refused(void **state)
{
    (void)state;
    refused(graph_opt_9, "oq_validate_run: graph_opt 9 out of range 0..4");
    refused(configs_null, "oq_validate_run: configs is NULL (n_configs 2)");
    refused(repr_99, "oq_validate_run: configs[1].repr 99 out of range 0..6");
    refused(precision_9, "oq_validate_run: configs[1].precision 9 out of range 0..4");
    refused(kernel_minus, "oq_validate_run: configs[0].kernel -1 out of range 0..4");
    refused(kind_9, "oq_validate_run: kind 9 out of range 0..2");
}

static void bad_numbers_refused(void **state)
{
    (void)state;
    refused(threads_minus_2, "oq_validate_run: threads -2 out of range (at least 0)");
    refused(padding_7, "oq_validate_run: padding 7 out of range -1..2");
    refused(repeat_minus_1, "oq_validate_run: repeat -1 out of range (at least 1)");
    refused(warmup_minus_3, "oq_validate_run: warmup -3 out of range (at least 0)");
}

/* Two processes, one folder: the second is refused while the first runs, and writes nothing. */
static void second_process_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("vlock");
    char outdir[512], lock[600], inputs[600];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    snprintf(lock, sizeof lock, "%s/" OQ_OUTDIR_LOCK, outdir);
    snprintf(inputs, sizeof inputs, "%s/inputs_000.npz", outdir);
    struct run_hold g;
    assert_int_equal(pipe(g.ready), 0);
    assert_int_equal(pipe(g.go), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        oq_config cfg[2];
        oq_validate_opts o;
        validate_tiny_in_process(&o, cfg, outdir);
        o.progress = hold_first_line;
        o.progress_ctx = &g;
        oq_validate_summary *s = NULL;
        oq_status st = oq_validate_run(&o, &s, NULL);
        int ok = !st && s->verdict == OQ_RUN_PASSED;
        oq_validate_summary_free(s);
        _exit(ok ? 0 : 1);
    }
    char c;
    assert_int_equal(read(g.ready[0], &c, 1), 1); /* the child's run has begun */
    assert_int_equal(access(lock, F_OK), 0);
    oq_config cfg[2];
    oq_validate_opts o;
    validate_tiny_in_process(&o, cfg, outdir);
    o.overwrite = 1; /* not refused as a full folder: refused as one in use */
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    oq_status st = oq_validate_run(&o, &s, &err);
    assert_int_equal(write(g.go[1], "g", 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(st, OQ_ERR_IO);
    assert_null(s);
    if (!strstr(err.msg, "in use by another ortqual run")) fail_msg("%s", err.msg);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* the first run passed, undisturbed */
    assert_int_equal(access(lock, F_OK), -1);                   /* released when it ended */
    assert_int_equal(access(inputs, F_OK), 0);
    oq_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_enums_refused),
        cmocka_unit_test(bad_numbers_refused),
        cmocka_unit_test(second_process_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
