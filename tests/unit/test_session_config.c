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
#include "runtime/sessioncfg-impl.h"

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

/* An integer key's range: ORT parses counts as int32 and refused 99999999999999999999 only when
 * each session was made (exit 3, every configuration failed, the batches written), and read a
 * negative count as its default (-7 ran); a byte size is 64-bit, a block size takes -1. */
static void test_integers_in_range(void **state)
{
    (void)state;
    oq_err e = {0};
    const char *bad[] = {"99999999999999999999", "-99999999999999999999", "2147483648", "-7", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (oq_session_config_check("session.intra_op_num_threads", bad[i], &e) != OQ_ERR_INVALID_ARG)
            fail_msg("session.intra_op_num_threads=%s taken", bad[i]);
    assert_string_equal(e.msg, "session config session.intra_op_num_threads=-1: the value of "
                               "session.intra_op_num_threads is a base-10 integer from 0 to 2147483647");
    assert_int_equal(oq_session_config_check("session.intra_op_num_threads", "2147483647", &e), OQ_OK);
    assert_int_equal(oq_session_config_check("session.intra_op_num_threads", "0", &e), OQ_OK);
    assert_int_equal(oq_session_config_check("optimization.constant_folding_max_output_size_in_bytes", "4294967296", &e),
                     OQ_OK);
    assert_int_equal(oq_session_config_check("optimization.constant_folding_max_output_size_in_bytes", "-1", &e),
                     OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_session_config_check("session.qdq_matmulnbits_block_size", "-2", &e), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_session_config_check("session.log_severity_level", "4", &e), OQ_OK);
    assert_int_equal(oq_session_config_check("session.log_severity_level", "5", &e), OQ_ERR_INVALID_ARG);
}

/* Which entries cannot change an output (replay's self-comparison drops them), and the level
 * names as ORT numbers them. Thread counts and affinities are not neutral: an operator may split
 * its work by the count. */
static void test_neutral_keys_and_levels(void **state)
{
    (void)state;
    const char *neutral[] = {"session.log_id", "session.log_severity_level", "session.log_verbosity_level",
                             "session.enable_profiling", "session.intra_op.allow_spinning",
                             "session.inter_op.allow_spinning", "session.intra_op.spin_duration_us",
                             "session.force_spinning_stop"};
    const char *not_neutral[] = {"session.intra_op_num_threads", "session.inter_op_num_threads",
                                 "session.intra_op_thread_affinities", "session.graph_optimization_level",
                                 "session.set_denormal_as_zero", "session.dynamic_block_base", "no.such.key"};
    for (size_t i = 0; i < sizeof neutral / sizeof *neutral; i++)
        if (!oq_session_config_neutral(neutral[i])) fail_msg("%s not neutral", neutral[i]);
    for (size_t i = 0; i < sizeof not_neutral / sizeof *not_neutral; i++)
        if (oq_session_config_neutral(not_neutral[i])) fail_msg("%s neutral", not_neutral[i]);
    assert_int_equal(oq_session_config_neutral(NULL), 0);
    assert_int_equal(oq_session_config_level("disable_all"), 0);
    assert_int_equal(oq_session_config_level("enable_layout"), 3);
    assert_int_equal(oq_session_config_level("enable_all"), 99);
    assert_int_equal(oq_session_config_level("99"), -1);
    assert_int_equal(oq_session_config_level(NULL), -1);
}

/* A key the headers (ORT 1.29) do not know may be one a newer ORT reads: passed to it with a
 * warning naming both versions; refused as unknown on 1.29 or older, or an ORT not known. A
 * known key's value is checked whatever the version. */
static void test_unknown_key_on_newer_ort(void **state)
{
    (void)state;
    oq_err e = {0};
    char w[512] = "x";
    const char *key = "mlas.nchwc_pointwise_conv_max_input_channel_batch"; /* ORT 1.30's */
    assert_int_equal(oq_session_config_check_for("1.30.0", key, "16", w, sizeof w, &e), OQ_OK);
    assert_string_equal(w, "session config key 'mlas.nchwc_pointwise_conv_max_input_channel_batch' is not a key of "
                           "ONNX Runtime 1.29's session options (onnxruntime_session_options_config_keys.h, which "
                           "ortqual is built with); passed unchecked to ONNX Runtime 1.30.0, which may read it or "
                           "store it unread");
    assert_int_equal(oq_session_config_check_for("2.0.1", key, "16", w, sizeof w, &e), OQ_OK);
    const char *not_newer[] = {"1.29.0", "1.29.5", "1.16.3", "", "x.y", NULL};
    for (size_t i = 0; i < sizeof not_newer / sizeof *not_newer; i++) {
        strcpy(w, "x");
        if (oq_session_config_check_for(not_newer[i], key, "16", w, sizeof w, &e) != OQ_ERR_INVALID_ARG)
            fail_msg("%s took an unknown key", not_newer[i] ? not_newer[i] : "NULL");
        assert_non_null(strstr(e.msg, "did you mean '"));
        assert_string_equal(w, "");
    }
    assert_int_equal(oq_session_config_check_for("1.30.0", "session.intra_op.allow_spinning", "maybe", w, sizeof w, &e),
                     OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_session_config_check_for("1.30.0", "session.intra_op.allow_spinning", "1", w, sizeof w, &e),
                     OQ_OK);
    assert_string_equal(w, ""); /* a known key: nothing to say */
    assert_int_equal(oq_session_config_newer("1.30.0"), 1);
    assert_int_equal(oq_session_config_newer("1.29.9"), 0);
    assert_int_equal(oq_session_config_newer(NULL), 0);
}

/* For a timing only the log id is the same session: spinning, profiling and logging cost time;
 * a level entry takes the option's place and the default level is all (99). */
static void test_as_run_for_timing(void **state)
{
    (void)state;
    json_t *cfg = json_pack("{s:s, s:s, s:s, s:s}", "session.log_id", "x", "session.intra_op.allow_spinning", "0",
                            "session.enable_profiling", "p", "session.graph_optimization_level", "enable_all");
    assert_int_equal(oq_session_as_run(0, cfg, OQ_SESSION_SAME_TIMING), 99);
    json_t *want = json_pack("{s:s, s:s}", "session.intra_op.allow_spinning", "0", "session.enable_profiling", "p");
    assert_true(json_equal(cfg, want));
    json_decref(want);
    assert_int_equal(oq_session_as_run(-1, cfg, OQ_SESSION_SAME_OUTPUTS), 99);
    assert_int_equal(json_object_size(cfg), 0);
    json_decref(cfg);
    cfg = json_object();
    assert_int_equal(oq_session_as_run(1, cfg, OQ_SESSION_SAME_TIMING), 1);
    json_decref(cfg);
    assert_int_equal(oq_session_config_neutral_for("session.log_id", OQ_SESSION_SAME_TIMING), 1);
    assert_int_equal(oq_session_config_neutral_for("session.intra_op.allow_spinning", OQ_SESSION_SAME_TIMING), 0);
    assert_int_equal(oq_session_config_neutral_for("session.intra_op.allow_spinning", OQ_SESSION_SAME_OUTPUTS), 1);
}

/* The record of `t` as one compact JSON text (sorted keys), for comparing with the expected. */
static void assert_threads_record(const oq_session_threads *t, int all, const char *want)
{
    json_t *j = oq_session_threads_json(t, all);
    char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(text, want);
    free(text);
    json_decref(j);
}

/* The threads and execution mode ORT runs, as measured on 1.29 and 1.30 (the threads a session
 * starts): each entry over its option, either way; inter-op threads only in parallel mode. */
static void test_threads_as_run(void **state)
{
    (void)state;
    oq_session_threads t;
    oq_session_threads_ran(1, 0, 0, NULL, NULL, &t);
    assert_threads_record(&t, 0, "{\"threads\":1}");
    assert_threads_record(&t, 1, "{\"execution_mode\":\"sequential\",\"inter_op_threads\":0,\"threads\":1}");
    const char *k[] = {"session.intra_op_num_threads", "session.execution_mode", "session.inter_op_num_threads"};
    const char *v[] = {"2", "sequential", "3"};
    oq_session_threads_ran(1, 0, 1, k, v, &t);
    assert_int_equal(t.intra, 2);
    assert_threads_record(&t, 0, "{\"threads\":2,\"threads_from\":\"session_config\",\"threads_option\":1}");
    oq_session_threads_ran(4, 2, 2, k, v, &t); /* the entry's sequential mode over --inter-op-threads 2 */
    assert_int_equal(t.intra, 2);
    assert_int_equal(t.parallel, 0);
    assert_int_equal(t.inter, 0);
    assert_threads_record(&t, 1,
                          "{\"execution_mode\":\"sequential\",\"execution_mode_from\":\"session_config\","
                          "\"execution_mode_option\":\"parallel\",\"inter_op_threads\":0,\"inter_op_threads_from\":"
                          "\"session_config\",\"inter_op_threads_option\":2,\"threads\":2,\"threads_from\":"
                          "\"session_config\",\"threads_option\":4}");
    const char *pk[] = {"session.execution_mode", "session.inter_op_num_threads"}, *pv[] = {"ort_parallel", "3"};
    oq_session_threads_ran(1, 0, 2, pk, pv, &t);
    assert_true(t.parallel && t.inter == 3 && t.intra == 1);
    oq_session_threads_ran(1, 0, 1, pk + 1, pv + 1, &t); /* stored, unread: sequential mode */
    assert_true(!t.parallel && t.inter == 0);
    assert_threads_record(&t, 0, "{\"threads\":1}");
    json_t *cfg = json_pack("{s:s, s:s, s:s}", "session.intra_op_num_threads", "0", "session.log_id", "x",
                            "session.execution_mode", "parallel");
    oq_session_threads_as_run(2, 0, cfg, &t);
    assert_true(t.intra == 0 && t.intra_default && t.parallel && t.inter == 0 && t.intra_entry && t.mode_entry);
    assert_int_equal(json_object_size(cfg), 1); /* the log id stays */
    json_decref(cfg);
}

/* A count of 0 is recorded as the threads ORT starts for it (its physical cores), with that
 * source; the affinities entry is recorded as given. */
static void test_threads_default_resolved(void **state)
{
    (void)state;
    int cores = oq_ort_default_threads();
    assert_true(cores >= 1);
    char want[160];
    oq_session_threads t;
    oq_session_threads_ran(0, 0, 0, NULL, NULL, &t);
    assert_true(t.intra == 0 && t.intra_default && !t.intra_entry && !t.affinities);
    snprintf(want, sizeof want, "{\"threads\":%d,\"threads_from\":\"ort-default\"}", cores);
    assert_threads_record(&t, 0, want);
    /* read back as 0, the session's identity; a count asked for reads as itself */
    json_t *rec = oq_session_threads_json(&t, 0);
    assert_int_equal(oq_session_threads_recorded(rec), 0);
    json_decref(rec);
    rec = json_pack("{s:i}", "threads", 3);
    assert_int_equal(oq_session_threads_recorded(rec), 3);
    json_decref(rec);
    const char *k[] = {"session.intra_op_num_threads", "session.intra_op_thread_affinities"}, *v[] = {"0", "1;2"};
    oq_session_threads_ran(3, 0, 1, k, v, &t); /* the entry's 0 over --threads 3 */
    snprintf(want, sizeof want, "{\"threads\":%d,\"threads_from\":\"ort-default\",\"threads_option\":3}", cores);
    assert_threads_record(&t, 0, want);
    oq_session_threads_ran(3, 0, 1, k + 1, v + 1, &t);
    assert_true(t.intra == 3 && !t.intra_default && t.affinities == v[1]);
    assert_threads_record(&t, 0, "{\"thread_affinities\":\"1;2\",\"threads\":3}");
}

/* Parallel mode's inter-op count of 0 is ORT's default pool, the intra-op pool's count (the same
 * CreateThreadPoolHelper): recorded as that count, with that source, as the intra-op one is;
 * sequential mode starts no inter-op pool, its 0 stays 0. */
static void test_inter_default_resolved(void **state)
{
    (void)state;
    int cores = oq_ort_default_threads();
    char want[320];
    oq_session_threads t;
    const char *k[] = {"session.execution_mode", "session.inter_op_num_threads"}, *v[] = {"parallel", "0"};
    oq_session_threads_ran(1, 0, 1, k, v, &t); /* validate with the mode entry alone */
    assert_true(t.parallel && t.inter == 0);
    snprintf(want, sizeof want,
             "{\"execution_mode\":\"parallel\",\"execution_mode_from\":\"session_config\",\"execution_mode_option\":"
             "\"sequential\",\"inter_op_threads\":%d,\"inter_op_threads_from\":\"ort-default\",\"threads\":1}",
             cores);
    assert_threads_record(&t, 0, want);
    oq_session_threads_ran(1, 2, 1, k + 1, v + 1, &t); /* the entry's 0 over --inter-op-threads 2 */
    snprintf(want, sizeof want,
             "{\"execution_mode\":\"parallel\",\"inter_op_threads\":%d,\"inter_op_threads_from\":\"ort-default\","
             "\"inter_op_threads_option\":2,\"threads\":1}",
             cores);
    assert_threads_record(&t, 1, want);
    oq_session_threads_ran(1, 0, 0, NULL, NULL, &t); /* sequential: no pool, 0 as it was */
    assert_threads_record(&t, 1, "{\"execution_mode\":\"sequential\",\"inter_op_threads\":0,\"threads\":1}");
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
        cmocka_unit_test(test_integers_in_range),
        cmocka_unit_test(test_neutral_keys_and_levels),
        cmocka_unit_test(test_unknown_key_on_newer_ort),
        cmocka_unit_test(test_as_run_for_timing),
        cmocka_unit_test(test_threads_as_run),
        cmocka_unit_test(test_threads_default_resolved),
        cmocka_unit_test(test_inter_default_resolved),
        cmocka_unit_test(test_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
