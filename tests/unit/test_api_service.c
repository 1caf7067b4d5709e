/* The library as a C++ service uses it (QA of 2026-12-06): a session's key/value lists NULL
 * beside a count are refused (they crashed), its arguments named as the header spells them, an
 * empty path refused as one; an in-process run (isolate 0) stops between batches when
 * interrupted, and a configuration whose worker did every batch keeps its result; the library
 * says its own version and ABI, and its evidence document says them under its "schema". */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "ortqual/config.h"
#include "ortqual/evidence.h"
#include "ortqual/fileio.h"
#include "ortqual/inspect.h"
#include "ortqual/runtime.h"
#include "ortqual/validate.h"
#include "ortqual/version.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"

/* The call refused as invalid, saying exactly `says`. */
#define REFUSED(call, says)                                                                          \
    do {                                                                                             \
        oq_err err_ = OQ_ERR_INIT;                                                                   \
        oq_status st_ = (call);                                                                      \
        if (st_ != OQ_ERR_INVALID_ARG) fail_msg("%s, not invalid argument: %s", oq_status_str(st_), err_.msg); \
        assert_string_equal(err_.msg, (says));                                                       \
    } while (0)

static const char *const one[] = {"x"};

static void session_lists_and_names(void **state)
{
    (void)state;
    oq_runtime *rt = NULL;
    assert_int_equal(oq_runtime_load(OQ_ORT_LIB, &rt, NULL), OQ_OK);
    oq_session *s = NULL;
    /* n_session_configs 1 and no lists: read at session.c's loop (SIGSEGV) */
    oq_session_opts o = {.n_session_configs = 1};
    REFUSED(oq_session_create(rt, "m.onnx", NULL, 0, &o, &s, &err_),
            "oq_session_create: opts->session_config_keys is NULL (n_session_configs 1)");
    o.session_config_keys = one;
    REFUSED(oq_session_create(rt, "m.onnx", NULL, 0, &o, &s, &err_),
            "oq_session_create: opts->session_config_values is NULL (n_session_configs 1)");
    o = (oq_session_opts){.n_ep_options = 1};
    REFUSED(oq_session_create(rt, "m.onnx", NULL, 0, &o, &s, &err_),
            "oq_session_create: opts->ep_option_keys is NULL (n_ep_options 1)");
    REFUSED(oq_session_ep_check(rt, &o, &err_), "oq_session_ep_check: opts->ep_option_keys is NULL (n_ep_options 1)");
    /* "" was blamed on oq_runtime_register_ep, which the caller never called */
    o = (oq_session_opts){.ep = ""};
    REFUSED(oq_session_create(rt, "m.onnx", NULL, 0, &o, &s, &err_), "oq_session_create: opts->ep is empty (NULL: cpu)");
    REFUSED(oq_session_ep_check(rt, &o, &err_), "oq_session_ep_check: opts->ep is empty (NULL: cpu)");
    /* "no runtime given" named neither the function nor the argument */
    REFUSED(oq_session_create(NULL, "m.onnx", NULL, 0, NULL, &s, &err_), "oq_session_create: rt is NULL");
    assert_null(s);
    oq_runtime_free(rt);
}

/* "" was opened (": cannot open: No such file or directory", an i/o error of no file) */
static void empty_path_refused(void **state)
{
    (void)state;
    oq_model_info *mi = NULL;
    REFUSED(oq_model_inspect_file("", &mi, &err_), "oq_model_inspect_file: path is empty");
    assert_null(mi);
}

/* Every configuration the parser gives passes oq_config_check: the check refuses only a
 * configuration changed after parsing. */
static void known_configs_checked(void **state)
{
    (void)state;
    oq_config c;
    size_t n = 0;
    for (; oq_config_known(n, &c); n++) {
        oq_err err = OQ_ERR_INIT;
        if (oq_config_check(&c, &err)) fail_msg("%s: %s", c.name, err.msg);
    }
    assert_true(n > 10);
    assert_int_equal(oq_config_parse("cuda:attention24:fp16:flash", &c, NULL), OQ_OK);
    c.kernel = OQ_KERNEL_MATH;
    REFUSED(oq_config_check(&c, &err_), "name 'cuda:attention24:fp16:flash' does not match its fields (kernel math)");
}

/* ---- an in-process run interrupted --------------------------------------------------------- */

static volatile int stop;
static size_t stop_at; /* the batch of configuration 1 after which the flag is set */

static void set_flag(void *ctx, const oq_validate_progress *p)
{
    (void)ctx;
    if (p->config == 1 && p->batches_done == stop_at) stop = SIGTERM;
}

/* cpu:attention24:fp32 in this process over 4 batches, the flag set after batch `at` of it. */
static oq_validate_summary *interrupted_run(size_t at, char **dir)
{
    static oq_config cfg[2];
    char outdir[512];
    *dir = temp_dir("apisvc");
    snprintf(outdir, sizeof outdir, "%s/out", *dir);
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    o.isolate = 0;
    o.threads = 1;
    o.events.num_events = 8;
    o.events.batch_size = 2;
    o.events.max_len = 12;
    stop = 0;
    stop_at = at;
    o.interrupt = &stop;
    o.on_batch = set_flag;
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    if (oq_validate_run(&o, &s, &err)) fail_msg("%s", err.msg);
    assert_int_equal(s->n_configs, 2);
    assert_int_equal(s->verdict, OQ_RUN_INTERRUPTED);
    return s;
}

/* Before: every batch ran, then "not-run: interrupted by SIGTERM after 4 of 4 batches". */
static void in_process_stops_between_batches(void **state)
{
    (void)state;
    char *dir;
    oq_validate_summary *s = interrupted_run(1, &dir);
    const oq_config_result *r = &s->configs[1];
    assert_int_equal(r->status, OQ_VERDICT_NOT_RUN);
    assert_string_equal(r->reason, "interrupted by SIGTERM after 1 of 4 batches");
    assert_string_equal(s->interrupted.config, "cpu:attention24:fp32");
    assert_int_equal(s->interrupted.batches_done, 1);
    assert_int_equal(s->interrupted.n_batches, 4);
    oq_validate_summary_free(s);
    oq_remove_tree(dir);
    free(dir);
}

/* Before: the finished comparison was thrown away ("not-run ... after 4 of 4 batches"). */
static void finished_config_keeps_its_result(void **state)
{
    (void)state;
    char *dir;
    oq_validate_summary *s = interrupted_run(4, &dir);
    const oq_config_result *r = &s->configs[1];
    if (r->status != OQ_VERDICT_PASSED) fail_msg("%s: %s", oq_verdict_name(r->status), r->reason ? r->reason : "");
    assert_string_equal(s->interrupted.config, "");
    assert_non_null(strstr(s->verdict_reason, "after every configuration had ended"));
    oq_validate_summary_free(s);
    oq_remove_tree(dir);
    free(dir);
}

/* ---- the library's version ------------------------------------------------------------------ */

static void version_said(void **state)
{
    (void)state;
    assert_string_equal(oq_version(), ORTQUAL_TEST_VERSION);
    assert_int_equal(oq_abi_version(), ORTQUAL_TEST_SOVERSION);
    oq_evidence *ev = NULL;
    assert_int_equal(oq_evidence_collect(NULL, NULL, &ev, NULL), OQ_OK);
    char *text = oq_evidence_to_json(ev);
    assert_non_null(text);
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    /* design.md: every JSON document opens with "schema" */
    assert_string_equal(json_object_iter_key(json_object_iter(j)), "schema");
    assert_string_equal(json_string_value(json_object_get(j, "schema")), OQ_EVIDENCE_SCHEMA);
    json_t *lib = json_object_get(j, "ortqual");
    assert_string_equal(json_string_value(json_object_get(lib, "version")), ORTQUAL_TEST_VERSION);
    assert_int_equal(json_integer_value(json_object_get(lib, "abi_version")), ORTQUAL_TEST_SOVERSION);
    assert_non_null(json_object_get(j, "host")); /* the evidence as before */
    json_decref(j);
    free(text);
    oq_evidence_free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(session_lists_and_names),
        cmocka_unit_test(empty_path_refused),
        cmocka_unit_test(known_configs_checked),
        cmocka_unit_test(in_process_stops_between_batches),
        cmocka_unit_test(finished_config_keeps_its_result),
        cmocka_unit_test(version_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
