/* The library's answers to a caller's bad arguments: a file that cannot be opened is an i/o
 * error in every reader, a NULL or empty path field is named by its field, and timeout_s takes
 * what the tool's --timeout takes and is reported as it was set. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/runtime.h"
#include "ortqual/validate.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"

#define ASSERT_MSG_HAS(err, text)                                                            \
    do {                                                                                     \
        if (!strstr((err).msg, (text))) fail_msg("\"%s\" does not say \"%s\"", (err).msg, (text)); \
    } while (0)

static void test_missing_file_is_io(void **state)
{
    (void)state;
    oq_err err = OQ_ERR_INIT;
    oq_validate_summary *s = NULL;
    assert_int_equal(oq_validate_summary_read("/nonexistent/summary.json", &s, &err), OQ_ERR_IO);
    assert_null(s);
    ASSERT_MSG_HAS(err, "/nonexistent/summary.json");
    assert_int_equal(oq_validate_worker("/nonexistent/plan.json", &err), OQ_ERR_IO);
    ASSERT_MSG_HAS(err, "/nonexistent/plan.json");
    /* a file that opens but is not JSON stays malformed input */
    char *dir = temp_dir("apiargs");
    char path[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not json", f);
    fclose(f);
    assert_int_equal(oq_validate_summary_read(path, &s, &err), OQ_ERR_FORMAT);
    remove_dir(dir);
}

static oq_config cfg[2];

static void base(oq_validate_opts *o, const char *outdir)
{
    validate_two_configs(o, cfg, outdir);
    o->overwrite = 1;
    o->threads = 1;
    o->isolate = 0;
    o->events.num_events = 4;
    o->events.batch_size = 2;
    o->events.max_len = 12;
}

/* One refusal: invalid argument, the field named, nothing returned. */
static void refused(const oq_validate_opts *o, const char *says)
{
    oq_err err = OQ_ERR_INIT;
    oq_validate_summary *s = NULL;
    oq_status st = oq_validate_run(o, &s, &err);
    if (st != OQ_ERR_INVALID_ARG) fail_msg("%s, not invalid argument: %s", oq_status_str(st), err.msg);
    assert_null(s);
    ASSERT_MSG_HAS(err, says);
}

static void test_null_path_fields_named(void **state)
{
    (void)state;
    char *dir = temp_dir("apiargs");
    oq_validate_opts o;
    base(&o, NULL);
    refused(&o, "outdir is NULL");
    base(&o, "");
    refused(&o, "outdir is empty");
    static const char *ins[2] = {"x.npz", NULL};
    base(&o, dir);
    o.input_files = ins;
    o.n_input_files = 2;
    refused(&o, "input_files[1] is NULL");
    base(&o, dir);
    o.n_input_files = 1; /* a count with no list */
    refused(&o, "input_files is NULL");
    base(&o, dir);
    o.kind = OQ_MODEL_USER;
    refused(&o, "model_path is NULL");
    base(&o, dir);
    o.weights_path = "";
    refused(&o, "weights_path is empty");
    assert_int_equal(dir_entries(dir), 0); /* refused before anything was written */
    remove_dir(dir);

    oq_runtime *rt = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_runtime_load("", &rt, &err), OQ_ERR_INVALID_ARG);
    assert_null(rt);
    ASSERT_MSG_HAS(err, "path is empty");
}

static void test_timeout_refused_as_the_tool(void **state)
{
    (void)state;
    char *dir = temp_dir("apiargs");
    const double bad[] = {0, -1, NAN, 1e13};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        oq_validate_opts o;
        base(&o, dir);
        o.timeout_s = bad[i];
        refused(&o, "timeout_s");
    }
    remove_dir(dir);
}

/* A worker killed at a fraction of a second says that limit, not "0 s". */
static void test_timeout_said_as_set(void **state)
{
    (void)state;
    char *dir = temp_dir("apiargs");
    oq_validate_opts o;
    base(&o, dir);
    o.isolate = 1;
    o.self_exe = OQ_BINARY_DIR "/ortqual";
    o.timeout_s = 0.001;
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    oq_status st = oq_validate_run(&o, &s, &err);
    if (st) fail_msg("%s", err.msg);
    int said = 0;
    for (size_t i = 0; i < s->n_configs; i++) {
        const char *ended = s->configs[i].worker.ended;
        if (strncmp(ended, "timed out", 9)) continue;
        assert_string_equal(ended, "timed out after 0.001 s (killed)");
        said++;
    }
    assert_true(said > 0);
    oq_validate_summary_free(s);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_file_is_io),
        cmocka_unit_test(test_null_path_fields_named),
        cmocka_unit_test(test_timeout_refused_as_the_tool),
        cmocka_unit_test(test_timeout_said_as_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
