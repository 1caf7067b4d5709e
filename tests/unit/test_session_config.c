/* Session config entries are checked before ORT stores them unread: a misspelt key names the
 * closest known one, a switch takes "0" or "1", and the known keys are exactly those of the ORT
 * headers the build uses (their onnxruntime_session_options_config_keys.h, read here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/runtime.h"

static int known(const char *key)
{
    for (size_t i = 0; oq_session_config_key(i); i++)
        if (!strcmp(oq_session_config_key(i), key)) return 1;
    return 0;
}

/* Every "..." that a `static const char* const k... =` declaration assigns, the string on its
 * line or the next. */
static size_t header_keys(char keys[][96], size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", OQ_ORT_LIB);
    char *lib = strstr(path, "/lib/libonnxruntime.so");
    assert_non_null(lib);
    strcpy(lib, "/include/onnxruntime_session_options_config_keys.h");
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s", path);
    char line[1024];
    size_t n = 0;
    int pending = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "static const char* const k")) pending = 1;
        char *q = pending ? strchr(line, '"') : NULL;
        char *end = q ? strchr(q + 1, '"') : NULL;
        if (!end) continue;
        pending = 0;
        *end = '\0';
        if (!strchr(q + 1, '.')) continue; /* a value constant ("1"), not a key */
        assert_true(n < cap);
        snprintf(keys[n++], 96, "%s", q + 1);
    }
    fclose(f);
    return n;
}

static void test_every_header_key_known(void **state)
{
    (void)state;
    static char keys[256][96];
    size_t n = header_keys(keys, 256), listed = 0;
    assert_true(n > 50);
    for (size_t i = 0; i < n; i++)
        if (!known(keys[i])) fail_msg("the header's key %s is not known", keys[i]);
    while (oq_session_config_key(listed)) listed++;
    assert_int_equal(listed, n);
}

static void test_misspelt_key_names_closest(void **state)
{
    (void)state;
    oq_err e = {0};
    assert_int_equal(oq_session_config_check("optimization.disable_specified_optimiser", "GatherToSliceFusion", &e),
                     OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "'optimization.disable_specified_optimiser'"));
    assert_non_null(strstr(e.msg, "did you mean 'optimization.disable_specified_optimizers'?"));
    assert_int_equal(oq_session_config_check("optimization.disable_specified_optimizers", "GatherToSliceFusion", &e),
                     OQ_OK);
}

static void test_values_in_domain(void **state)
{
    (void)state;
    oq_err e = {0};
    assert_int_equal(oq_session_config_check("session.intra_op.allow_spinning", "maybe", &e), OQ_ERR_INVALID_ARG);
    assert_string_equal(e.msg, "session config session.intra_op.allow_spinning=maybe: the value of "
                               "session.intra_op.allow_spinning is \"0\" or \"1\"");
    assert_int_equal(oq_session_config_check("session.intra_op.allow_spinning", "0", &e), OQ_OK);
    assert_int_equal(oq_session_config_check("session.intra_op.allow_spinning", "1", &e), OQ_OK);
    assert_int_equal(oq_session_config_check("session.intra_op_num_threads", "4", &e), OQ_OK);
    assert_int_equal(oq_session_config_check("session.qdq_matmulnbits_block_size", "-1", &e), OQ_OK);
    const char *bad_ints[] = {"", " 4", "4x", "-", "1.5"};
    for (size_t i = 0; i < sizeof bad_ints / sizeof *bad_ints; i++)
        if (oq_session_config_check("session.intra_op_num_threads", bad_ints[i], &e) != OQ_ERR_INVALID_ARG)
            fail_msg("session.intra_op_num_threads='%s' taken", bad_ints[i]);
    assert_int_equal(oq_session_config_check("session.graph_optimization_level", "enable_all", &e), OQ_OK);
    assert_int_equal(oq_session_config_check("session.graph_optimization_level", "99", &e), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_session_config_check("session.node_partition_config_file", "any/path", &e), OQ_OK);
}

static void test_null_arguments(void **state)
{
    (void)state;
    oq_err e = {0};
    assert_int_equal(oq_session_config_check(NULL, "1", &e), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_session_config_check("session.log_id", NULL, &e), OQ_ERR_INVALID_ARG);
    assert_null(oq_session_config_key((size_t)-1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_header_key_known),
        cmocka_unit_test(test_misspelt_key_names_closest),
        cmocka_unit_test(test_values_in_domain),
        cmocka_unit_test(test_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
