/* A NULL the embedding API cannot use, beside arguments that are fine, is OQ_ERR_INVALID_ARG
 * naming the function and the argument (status.h), not a crash; tests/arch/nulls.sh calls the
 * same headers with every argument NULL at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/bench.h"
#include "ortqual/csv.h"
#include "ortqual/dispatch.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"
#include "ortqual/npz.h"
#include "ortqual/plot.h"
#include "ortqual/proc.h"
#include "ortqual/reference.h"
#include "ortqual/runtime.h"
#include "ortqual/shard.h"
#include "ortqual/stats.h"
#include "ortqual/tensor.h"
#include "ortqual/validate.h"

#define assert_refused(call, text)                                                  \
    do {                                                                            \
        oq_err err_ = {0};                                                          \
        oq_err *err = &err_;                                                        \
        assert_int_equal((call), OQ_ERR_INVALID_ARG);                               \
        if (!strstr(err_.msg, (text))) fail_msg("message '%s' lacks '%s'", err_.msg, (text)); \
    } while (0)

static oq_tensor *tensor(const char *name)
{
    int64_t shape[2] = {2, 3};
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, 2, shape, name, NULL), OQ_OK);
    return t;
}

static void test_tensor_arguments(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 3};
    float data[6] = {0};
    oq_tensor *t = tensor("x"), *out = (oq_tensor *)1;
    assert_refused(oq_tensor_create(NULL, OQ_DTYPE_FLOAT32, 2, shape, "x", err), "oq_tensor_create: out is NULL");
    assert_refused(oq_tensor_create(&out, OQ_DTYPE_FLOAT32, 2, NULL, "x", err), "shape is NULL");
    assert_refused(oq_tensor_wrap(NULL, OQ_DTYPE_FLOAT32, 2, shape, data, "x", err), "oq_tensor_wrap: out is NULL");
    /* a borrowed NULL buffer of 24 bytes was accepted, and read by the first use */
    out = (oq_tensor *)1;
    assert_refused(oq_tensor_wrap(&out, OQ_DTYPE_FLOAT32, 2, shape, NULL, "x", err), "data is NULL for 24 bytes");
    assert_null(out);
    /* nothing to borrow: NULL is fine for an empty tensor */
    int64_t empty[2] = {0, 3};
    assert_int_equal(oq_tensor_wrap(&out, OQ_DTYPE_FLOAT32, 2, empty, NULL, "e", NULL), OQ_OK);
    oq_tensor_free(out);
    assert_refused(oq_tensor_clone(t, NULL, err), "oq_tensor_clone: out is NULL");
    assert_refused(oq_tensor_convert(NULL, OQ_DTYPE_FLOAT64, &out, err), "oq_tensor_convert: t is NULL");
    assert_refused(oq_tensor_set_name(NULL, "y", err), "oq_tensor_set_name: t is NULL");
    const oq_tensor *some[2] = {t, NULL};
    assert_null(oq_tensors_find(some, 2, "nope"));
    oq_tensor_free(t);
}

static void test_npz_arguments(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq-args-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.npz", dir);
    oq_tensor *t = tensor("x");
    const oq_tensor *list[2] = {t, NULL};
    oq_npz *z = NULL;
    assert_refused(oq_npz_write(path, 1, NULL, 0, 1, err), "oq_npz_write: tensors is NULL");
    assert_refused(oq_npz_write(NULL, 1, list, 0, 1, err), "oq_npz_write: path is NULL");
    assert_refused(oq_npz_write(path, 2, list, 0, 1, err), "tensor 1 is NULL");
    assert_refused(oq_npy_write(path, NULL, 1, err), "oq_npy_write: t is NULL");
    assert_refused(oq_npz_read(NULL, &z, err), "oq_npz_read: path is NULL"); /* was "(null): cannot open" */
    assert_int_equal(oq_npz_write(path, 1, list, 0, 1, NULL), OQ_OK);
    assert_refused(oq_npz_read(path, NULL, err), "oq_npz_read: out is NULL");
    assert_int_equal(oq_npz_read(path, &z, NULL), OQ_OK);
    assert_refused(oq_npz_take(z, "x", NULL, err), "oq_npz_take: out is NULL");
    oq_npz_free(z);
    unlink(path);
    rmdir(dir);
    oq_tensor_free(t);
}

static void test_model_arguments(void **state)
{
    (void)state;
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    oq_encoder_weights *w = NULL;
    oq_graph *g = NULL;
    assert_refused(oq_encoder_weights_random(&c, 1, NULL, err), "oq_encoder_weights_random: out is NULL");
    assert_int_equal(oq_encoder_weights_random(&c, 1, &w, NULL), OQ_OK);
    /* the export options may be NULL: the zeroed ones */
    assert_int_equal(oq_export_encoder(w, NULL, &g, NULL), OQ_OK);
    assert_int_equal(oq_graph_add_input(NULL, "x", OQ_DTYPE_FLOAT32, 0, NULL), OQ_ERR_INVALID_ARG);
    assert_null(oq_graph_op(NULL, "Relu", 0, NULL, 0, NULL));
    assert_int_equal(oq_graph_add_node(g, "Relu", NULL, NULL, 1, NULL, 0, NULL, 0, NULL), OQ_ERR_INVALID_ARG);
    assert_refused(oq_graph_status(g, err), "Relu node: inputs is NULL");
    oq_graph_free(g);
    oq_encoder_ref *r = NULL;
    assert_refused(oq_encoder_ref_create(w, 1, NULL, err), "oq_encoder_ref_create: out is NULL");
    assert_int_equal(oq_encoder_ref_create(w, 1, &r, NULL), OQ_OK);
    assert_refused(oq_encoder_ref_run(r, NULL, NULL, NULL, err), "oq_encoder_ref_run: features is NULL");
    oq_encoder_ref_free(r);
    oq_encoder_weights_free(w);
    assert_refused(oq_runtime_load("/nonexistent/libonnxruntime.so", NULL, err), "oq_runtime_load: out is NULL");
    assert_refused(oq_session_run(NULL, 0, NULL, NULL, NULL, err), "oq_session_run: s is NULL");
}

/* The tool's headers under the same rule: an array of n > 0 entries that is NULL, an out
 * pointer, a part of an argument (argv[0]); void functions take NULL as free() does. */
static void test_tool_arguments(void **state)
{
    (void)state;
    oq_csv *t = NULL;
    assert_refused(oq_csv_parse(NULL, 5, "t.csv", &t, err), "oq_csv_parse: text is NULL");
    assert_refused(oq_csv_parse("a\n1\n", 4, NULL, &t, err), "oq_csv_parse: name is NULL");
    assert_int_equal(oq_csv_parse("a\n1\n", 4, "t.csv", &t, NULL), OQ_OK);
    double v = 0;
    assert_refused(oq_csv_get_double(t, 0, 0, NULL, err), "oq_csv_get_double: out is NULL");
    assert_refused(oq_csv_require(t, "a", NULL, err), "oq_csv_require: col is NULL");
    assert_int_equal(oq_csv_get_double(t, 0, 0, &v, NULL), OQ_OK);
    oq_csv_free(t);
    oq_csv_write_str(NULL, "x"); /* a writer that failed to open: nothing */
    oq_csv_write_int(NULL, 1);
    assert_refused(oq_csv_end_row(NULL, err), "oq_csv_end_row: w is NULL");
    oq_stats st;
    assert_refused(oq_stats_compute(NULL, 3, &st, err), "oq_stats_compute: samples is NULL");
    char *argv[] = {NULL};
    oq_proc_result res;
    assert_refused(oq_proc_run(argv, 0, 64, 0, &res, err), "oq_proc_run: argv[0] is NULL");
    assert_refused(oq_proc_run(NULL, 0, 64, 0, &res, err), "oq_proc_run: argv is NULL");
    oq_proc_result_clear(NULL);
    oq_dispatch_parser *p = NULL;
    assert_refused(oq_dispatch_parse_text(NULL, 3, &p, err), "oq_dispatch_parse_text: text is NULL");
    assert_refused(oq_dispatch_expect_add(NULL, "flash", err), "oq_dispatch_expect_add: e is NULL");
    oq_bench_dim dim;
    assert_refused(oq_bench_dim_parse(NULL, &dim, err), "oq_bench_dim_parse: text is NULL");
    assert_refused(oq_bench_runner_time(NULL, 3, NULL, err), "oq_bench_runner_time: r is NULL");
    oq_plot_files written;
    assert_refused(oq_figures_write(NULL, NULL, &written, err), "oq_figures_write: f is NULL");
    oq_plot_files_clear(NULL);
    oq_shard_plan plan;
    assert_refused(oq_shard_plan_read(NULL, &plan, err), "oq_shard_plan_read: outdir is NULL");
    assert_refused(oq_validate_summary_read("summary.json", NULL, err), "oq_validate_summary_read: summary is NULL");
    oq_validate_opts_default(NULL);
    oq_bench_opts_default(NULL);
    /* count 0 is "not sharded" (oq_shard_spec): every item; it aborted */
    size_t lo = 7, hi = 7;
    oq_shard_range(0, 0, 5, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 5);
    oq_shard_range(2, 1, 5, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_arguments),
        cmocka_unit_test(test_npz_arguments),
        cmocka_unit_test(test_model_arguments),
        cmocka_unit_test(test_tool_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
