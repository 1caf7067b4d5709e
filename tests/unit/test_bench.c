/* bench: statistics, the timed runner (host and device binding), memory, variants. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/bench-impl.h"
#include "ortqual/bench.h"
#include "ortqual/csv.h"
#include "ortqual/events.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"

#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

/* cmocka 1.1 has no assert_double_equal. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ---- statistics: values checked against numpy.percentile / std(ddof=1) ---------- */

static void test_stats_known_samples(void **state)
{
    (void)state;
    const double x[] = {7, 3, 10, 1, 9, 2, 8, 5, 4, 6};
    oq_stats s;
    assert_int_equal(oq_stats_compute(x, 10, &s, NULL), OQ_OK);
    assert_int_equal(s.n, 10);
    assert_near(s.mean, 5.5, 1e-12);
    assert_near(s.std, 3.0276503540974917, 1e-12);
    assert_near(s.min, 1, 0);
    assert_near(s.max, 10, 0);
    assert_near(s.p50, 5.5, 1e-12);
    assert_near(s.p90, 9.1, 1e-12);
    assert_near(s.p95, 9.55, 1e-12);
    assert_near(s.p99, 9.91, 1e-12);
    assert_near(s.p999, 9.991, 1e-12);
    assert_near(x[0], 7, 0); /* the input is not sorted in place */
}

static void test_stats_odd_count(void **state)
{
    (void)state;
    const double x[] = {2.5, 0.5, 4.0};
    oq_stats s;
    assert_int_equal(oq_stats_compute(x, 3, &s, NULL), OQ_OK);
    assert_near(s.p50, 2.5, 1e-12);
    assert_near(s.p90, 3.7, 1e-12);
    assert_near(s.p95, 3.85, 1e-12);
    assert_near(s.p99, 3.97, 1e-12);
    assert_near(s.p999, 3.997, 1e-12);
    assert_near(s.std, 1.755942292142123, 1e-12);
}

static void test_stats_single_sample(void **state)
{
    (void)state;
    const double x[] = {1.25};
    oq_stats s;
    assert_int_equal(oq_stats_compute(x, 1, &s, NULL), OQ_OK);
    assert_true(isnan(s.std)); /* undefined, not 0: JSON null, an empty CSV cell */
    assert_near(s.p50, 1.25, 0);
    assert_near(s.p99, 1.25, 0);
}

static void test_percentile_edges(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4};
    assert_near(oq_percentile_sorted(x, 4, 0), 1, 0);
    assert_near(oq_percentile_sorted(x, 4, 100), 4, 0);
    assert_near(oq_percentile_sorted(x, 4, 25), 1.75, 1e-12);
}

static void test_stats_bad_input(void **state)
{
    (void)state;
    oq_err err = {0};
    oq_stats s;
    double x[] = {1, NAN, 3};
    assert_int_equal(oq_stats_compute(x, 0, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "zero samples"));
    assert_int_equal(oq_stats_compute(x, 3, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "sample 1"));
}

/* ---- variants and options --------------------------------------------------------- */

static void test_variant_parse(void **state)
{
    (void)state;
    oq_err err = {0};
    oq_bench_variant v;
    assert_int_equal(oq_bench_variant_parse("ref", &v, &err), OQ_OK);
    assert_string_equal(v.runtime, "ref");
    assert_int_equal(v.repr, OQ_REPR_SDPA);
    assert_int_equal(oq_bench_variant_parse("cuda:attention24:fp16:flash", &v, &err), OQ_OK);
    assert_int_equal(v.kernel, OQ_KERNEL_FLASH);
    assert_int_equal(oq_bench_variant_parse("cpu:model:fp32", &v, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "attention only"));
    assert_int_equal(oq_bench_variant_parse("ref:encoder:fp64", &v, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_bench_variant_parse("cpu:nonsense:fp32", &v, &err), OQ_ERR_INVALID_ARG);
}

static void test_row_count(void **state)
{
    (void)state;
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    oq_bench_variant_parse("ref", &o.variants[o.n_variants++], NULL);
    oq_bench_variant_parse("cpu:decomposed:fp32", &o.variants[o.n_variants++], NULL);
    oq_bench_variant_parse("cpu:attention24:fp32", &o.variants[o.n_variants++], NULL);
    o.shapes = OQ_BENCH_DYNAMIC | OQ_BENCH_STATIC;
    /* 1 batch x 3 lengths x 2 modes x (2 shapes x 2 ORT variants + ref once) */
    assert_int_equal(oq_bench_row_count(&o), 1 * 3 * 2 * 5);
}

static void test_sweep_rejects_bad_options(void **state)
{
    (void)state;
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    oq_bench_rows *rows = NULL;
    oq_err err = {0};
    assert_int_equal(oq_bench_sweep(NULL, &o, NULL, NULL, &rows, &err), OQ_ERR_INVALID_ARG); /* not a crash */
    assert_int_equal(oq_bench_sweep(rt, NULL, NULL, NULL, &rows, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "variant"));
    oq_bench_variant_parse("cpu:decomposed:fp32", &o.variants[o.n_variants++], NULL);
    o.kv_heads = 3;
    assert_int_equal(oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "kv heads"));
    o.kv_heads = 8;
    o.mask_fraction = 1.0;
    assert_int_equal(oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "mask fraction"));
    assert_null(rows);
}

/* ---- runner ------------------------------------------------------------------------ */

static oq_session *tiny_session(void)
{
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.heads = c.kv_heads = 2;
    c.head_dim = 8;
    c.mask = OQ_MASK_NONE;
    c.format = OQ_ATTN_ATTENTION24;
    oq_graph *g = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_OK);
    assert_int_equal(oq_graph_serialize(g, &buf, &len, &err), OQ_OK);
    oq_session_opts so = {.intra_op_threads = 1};
    assert_int_equal(oq_session_create(rt, NULL, buf, len, &so, &s, &err), OQ_OK);
    oq_graph_free(g);
    free(buf);
    return s;
}

static void make_qkv(oq_tensor *t[3])
{
    const char *names[3] = {"query", "key", "value"};
    int64_t shape[4] = {1, 2, 16, 8};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(oq_tensor_create(&t[i], OQ_DTYPE_FLOAT32, 4, shape, names[i], NULL), OQ_OK);
        float *x = t[i]->data;
        for (int64_t j = 0; j < oq_tensor_numel(t[i]); j++) x[j] = (float)sin((double)(j * (i + 1)));
    }
}

static void test_runner_host_and_device_agree(void **state)
{
    (void)state;
    oq_session *s = tiny_session();
    oq_tensor *in[3];
    make_qkv(in);
    oq_bench_runner *host = NULL, *dev = NULL, *autob = NULL;
    oq_err err = {0};
    assert_int_equal(oq_bench_runner_create(s, 3, in, OQ_IO_HOST, &host, &err), OQ_OK);
    assert_int_equal(oq_bench_runner_create(s, 3, in, OQ_IO_DEVICE, &dev, &err), OQ_OK);
    assert_int_equal(oq_bench_runner_create(s, 3, in, OQ_IO_AUTO, &autob, &err), OQ_OK);
    for (int i = 0; i < 3; i++) oq_tensor_free(in[i]); /* the runners keep copies */
    assert_int_equal(oq_bench_runner_io(host), OQ_IO_HOST);
    assert_int_equal(oq_bench_runner_io(dev), OQ_IO_DEVICE);
    assert_int_equal(oq_bench_runner_io(autob), OQ_IO_HOST); /* CPU session */
    size_t n1 = 0, n2 = 0;
    oq_tensor **o1 = NULL, **o2 = NULL;
    assert_int_equal(oq_bench_runner_run_outputs(host, &n1, &o1, &err), OQ_OK);
    assert_int_equal(oq_bench_runner_run_outputs(dev, &n2, &o2, &err), OQ_OK);
    assert_int_equal(n1, 1);
    assert_int_equal(n2, 1);
    assert_int_equal(oq_tensor_nbytes(o1[0]), 1 * 2 * 16 * 8 * sizeof(float));
    assert_memory_equal(o1[0]->data, o2[0]->data, oq_tensor_nbytes(o1[0]));
    double samples[4] = {0};
    assert_int_equal(oq_bench_runner_time(host, 4, samples, &err), OQ_OK);
    assert_int_equal(oq_bench_runner_time(dev, 4, samples, &err), OQ_OK);
    for (int i = 0; i < 4; i++) assert_true(samples[i] > 0 && samples[i] < 1000);
    oq_kv *kv = NULL;
    size_t nkv = 0;
    assert_int_equal(oq_bench_runner_alloc_stats(host, &kv, &nkv, &err), OQ_OK);
    int has_max = 0;
    for (size_t i = 0; i < nkv; i++) has_max |= !strcmp(kv[i].key, "MaxInUse");
    assert_true(has_max);
    oq_kvs_free(kv, nkv);
    oq_tensors_free(o1, n1);
    oq_tensors_free(o2, n2);
    oq_bench_runner_free(host);
    oq_bench_runner_free(dev);
    oq_bench_runner_free(autob);
    oq_session_free(s);
}

static void test_runner_bad_inputs(void **state)
{
    (void)state;
    oq_session *s = tiny_session();
    oq_tensor *in[3];
    make_qkv(in);
    oq_bench_runner *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_bench_runner_create(s, 2, in, OQ_IO_HOST, &r, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "'value' missing"));
    assert_null(r);
    oq_tensor *dup[3] = {in[0], in[0], in[1]};
    assert_int_equal(oq_bench_runner_create(s, 3, dup, OQ_IO_HOST, &r, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "given twice"));
    oq_tensor *d64 = NULL;
    assert_int_equal(oq_tensor_convert(in[2], OQ_DTYPE_FLOAT64, &d64, NULL), OQ_OK);
    oq_tensor_set_name(d64, "value", NULL);
    oq_tensor *wrong[3] = {in[0], in[1], d64};
    assert_int_equal(oq_bench_runner_create(s, 3, wrong, OQ_IO_HOST, &r, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "dtype"));
    oq_tensor_free(d64);
    for (int i = 0; i < 3; i++) oq_tensor_free(in[i]);
    oq_session_free(s);
}

/* ---- memory ------------------------------------------------------------------------- */

static void test_memory_figures(void **state)
{
    (void)state;
    uint64_t rss = 0, hwm = 0;
    assert_int_equal(oq_proc_memory(&rss, &hwm, NULL), OQ_OK);
    assert_true(rss > 0 && hwm >= rss);
    oq_mem_sampler *m = NULL;
    assert_int_equal(oq_mem_sampler_start(1000, &m, NULL), OQ_OK);
    /* Touch 64 MiB: the sampler's last reading at stop must see it. */
    size_t n = 64u << 20;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, 1, n);
    uint64_t peak = oq_mem_sampler_stop(m);
    assert_true(peak >= rss + (n / 2));
    free(big);
    oq_err err = {0};
    assert_int_equal(oq_mem_sampler_start(0, &m, &err), OQ_ERR_INVALID_ARG);
}

static void test_nvml_answers_or_says_why(void **state)
{
    (void)state;
    uint64_t bytes = 0;
    oq_err err = {0};
    oq_status st = oq_nvml_process_memory(&bytes, &err);
    if (st == OQ_OK)
        assert_true(bytes > 0);
    else {
        assert_int_equal(st, OQ_ERR_NOT_FOUND);
        assert_true(strlen(err.msg) > 0);
    }
}

static void test_io_binding_names(void **state)
{
    (void)state;
    assert_int_equal(oq_io_binding_parse("device"), OQ_IO_DEVICE);
    assert_int_equal(oq_io_binding_parse("host"), OQ_IO_HOST);
    assert_int_equal(oq_io_binding_parse("auto"), OQ_IO_AUTO);
    assert_int_equal(oq_io_binding_parse("gpu"), -1);
    assert_string_equal(oq_io_binding_name(OQ_IO_DEVICE), "device");
    assert_string_equal(oq_bench_status_name(OQ_BENCH_OOM), "oom");
}

static void test_classify_errors(void **state)
{
    (void)state;
    assert_int_equal(oq_bench_classify(OQ_ERR_RUNTIME, "Run: Failed to allocate memory for requested buffer"),
                     OQ_BENCH_OOM);
    assert_int_equal(oq_bench_classify(OQ_ERR_RUNTIME, "CUDA failure 2: out of memory"), OQ_BENCH_OOM);
    assert_int_equal(oq_bench_classify(OQ_ERR_UNSUPPORTED, /* how oq_ort_status maps NOT_IMPLEMENTED */
                                       "Could not find an implementation for Attention(24)"),
                     OQ_BENCH_UNSUPPORTED);
    assert_int_equal(oq_bench_classify(OQ_ERR_RUNTIME, "Could not find an implementation"),
                     OQ_BENCH_ERROR); /* the status decides, not the wording */
    assert_int_equal(oq_bench_classify(OQ_ERR_NOT_FOUND, "no CUDA EP library"), OQ_BENCH_SKIPPED);
    /* ORT refused or could not run it: a runtime error, as validate's (exit 3), not a failure */
    assert_int_equal(oq_bench_classify(OQ_ERR_RUNTIME, "Invalid input shape"), OQ_BENCH_ERROR);
    assert_int_equal(oq_bench_classify(OQ_ERR_SHAPE, "output 'y' is [2,3], expected [2,4]"), OQ_BENCH_FAILED);
    assert_string_equal(oq_bench_status_name(OQ_BENCH_ERROR), "error");
}

/* One rule gives summary.json's verdict and the exit status: failed before error before
 * untested; --model without expected outputs and no_reference rows are under test when they ran. */
static void test_verdict_of(void **state)
{
    (void)state;
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    oq_bench_row r[2] = {0};
    oq_bench_rows rows = {.n = 2, .rows = r};
    oq_err e = OQ_ERR_INIT;
    assert_int_equal(oq_bench_variant_parse("cpu:attention24:fp32", &r[0].variant, &e), OQ_OK);
    assert_int_equal(oq_bench_variant_parse("ref", &r[1].variant, &e), OQ_OK);
    r[0].status = OQ_BENCH_SKIPPED;
    r[0].max_abs_err = r[1].max_abs_err = NAN;
    oq_bench_verdict v;
    oq_bench_verdict_of(&o, &rows, &v); /* only the reference ran */
    assert_string_equal(v.verdict, "untested");
    assert_int_equal(v.exit_status, 1);
    o.allow_skip = 1;
    oq_bench_verdict_of(&o, &rows, &v);
    assert_string_equal(v.verdict, "untested");
    assert_int_equal(v.exit_status, 0);
    r[0].status = OQ_BENCH_OK; /* ran, but not compared: not under test while there is a reference */
    oq_bench_verdict_of(&o, &rows, &v);
    assert_string_equal(v.verdict, "untested");
    o.reference = 0;
    oq_bench_verdict_of(&o, &rows, &v);
    assert_string_equal(v.verdict, "passed");
    assert_int_equal(v.tested, 1);
    o.model_path = "m.onnx"; /* --model without expected outputs: ran is under test */
    o.reference = 1;
    oq_bench_verdict_of(&o, &rows, &v);
    assert_string_equal(v.verdict, "passed");
    assert_non_null(strstr(v.reason, "no expected outputs"));
    r[1].status = OQ_BENCH_ERROR;
    snprintf(r[1].error, sizeof r[1].error, "refused by ONNX Runtime [x]");
    oq_bench_verdict_of(&o, &rows, &v);
    assert_string_equal(v.verdict, "error");
    assert_int_equal(v.exit_status, 3);
    assert_non_null(strstr(v.reason, "refused by ONNX Runtime [x]"));
    r[0].status = OQ_BENCH_FAILED;
    oq_bench_verdict_of(&o, &rows, &v);
    assert_string_equal(v.verdict, "failed");
    assert_int_equal(v.exit_status, 1);
}

/* summary.csv's error column: a --model row's outputs that compared no value (every valid element
 * an infinity the expected file holds too), in the console's words, after the row's own error;
 * its max_abs_err is the compared outputs' (a number, or empty where none compared one). */
static void test_csv_not_compared(void **state)
{
    (void)state;
    oq_bench_row r[2] = {0};
    oq_bench_output_check out[2] = {{.name = "y", .inf_matched = 4}, {.name = "z", .passed = 1}};
    out[0].max_abs_err = out[0].max_rel_err = NAN;
    oq_bench_rows rows = {.n = 2, .rows = r};
    oq_err e = OQ_ERR_INIT;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(oq_bench_variant_parse("cpu:attention24:fp32", &r[i].variant, &e), OQ_OK);
        r[i].outputs = out;
        r[i].n_outputs = 2;
    }
    snprintf(r[1].error, sizeof r[1].error, "output 'w' is string: bench --model cannot read it");
    r[1].status = OQ_BENCH_FAILED;
    char *dir = temp_dir("csvnc"), path[512];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    if (oq_bench_rows_write_csv(&rows, path, &e)) fail_msg("%s", e.msg);
    oq_csv *t = NULL;
    size_t col, mcol;
    assert_int_equal(oq_csv_read(path, &t, &e), OQ_OK);
    assert_true(oq_csv_find(t, "error", &col) && oq_csv_find(t, "max_abs_err", &mcol));
    const char *note = "output 'y': not compared (its 4 valid elements are infinities the expected file holds too: "
                       "inf_matched)";
    assert_string_equal(oq_csv_get(t, 0, col), note);
    assert_string_equal(oq_csv_get(t, 0, mcol), "0");
    char both[OQ_ERR_MSG_MAX + 256];
    snprintf(both, sizeof both, "%s; %s", r[1].error, note);
    assert_string_equal(oq_csv_get(t, 1, col), both);
    oq_csv_free(t);
    remove_dir(dir);
}

/* A sweep row that ran is judged on its accuracy: over tolerance, NaN, Inf or nonzero padding
 * fails it, saying which; a row not compared (the reference skipped) or already failed stays. */
static void test_judge_accuracy(void **state)
{
    (void)state;
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    oq_bench_variant v;
    oq_err err = {0};
    assert_int_equal(oq_bench_variant_parse("cpu:attention24:fp32", &v, &err), OQ_OK);
    const struct {
        int64_t over, nan, inf, pad;
        oq_bench_status want;
        const char *says;
    } cases[] = {
        {0, 0, 0, 0, OQ_BENCH_OK, ""},
        {3, 0, 0, 0, OQ_BENCH_FAILED, "3 elements over tolerance (rtol 0.0001, atol 1e-05)"},
        {0, 2, 0, 0, OQ_BENCH_FAILED, "2 NaN"},
        {0, 0, 1, 0, OQ_BENCH_FAILED, "1 Inf"},
        {0, 0, 0, 5, OQ_BENCH_FAILED, "5 padded elements not 0"},
        {-1, -1, -1, -1, OQ_BENCH_OK, ""}, /* not compared: nothing to judge */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        oq_bench_row row;
        oq_bench_row_init(&row, &o, &v);
        row.status = OQ_BENCH_OK;
        row.max_abs_err = 0.5, row.rtol = 1e-4, row.atol = 1e-5;
        row.over_tol = cases[i].over, row.nan_count = cases[i].nan, row.inf_count = cases[i].inf,
        row.pad_nonzero = cases[i].pad;
        oq_bench_row_judge_accuracy(&row);
        assert_int_equal(row.status, cases[i].want);
        assert_non_null(strstr(row.error, cases[i].says));
    }
    oq_bench_row row; /* a failed row keeps its own error */
    oq_bench_row_init(&row, &o, &v);
    row.status = OQ_BENCH_OOM;
    row.over_tol = 7;
    snprintf(row.error, sizeof row.error, "out of memory");
    oq_bench_row_judge_accuracy(&row);
    assert_int_equal(row.status, OQ_BENCH_OOM);
    assert_string_equal(row.error, "out of memory");
}

/* --mask-fraction F is the mean share of padding: balanced at batch size 1 made its one event L
 * long (no padding in a row labelled masked, F silently ignored); now the spread's mean. */
static void test_balanced_batch_of_one_is_padded(void **state)
{
    (void)state;
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    o.length_policy = OQ_LENGTH_BALANCED;
    o.mask_fraction = 0.4;
    oq_err err = OQ_ERR_INIT;
    int64_t len[3];
    assert_int_equal(oq_bench_event_lengths(&o, 1, 64, len, &err), OQ_OK);
    assert_int_equal(len[0], 39); /* round((13 + 64) / 2): from round(0.2 x 64) = 13 to 64 */
    assert_int_equal(oq_bench_event_lengths(&o, 3, 64, len, &err), OQ_OK);
    assert_int_equal(len[0] + len[1] + len[2], 13 + 39 + 64); /* a batch of 3 spreads them, mean 39 */
    o.mask_fraction = 0; /* no padding asked: none made */
    assert_int_equal(oq_bench_event_lengths(&o, 1, 64, len, &err), OQ_OK);
    assert_int_equal(len[0], 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_known_samples),
        cmocka_unit_test(test_stats_odd_count),
        cmocka_unit_test(test_stats_single_sample),
        cmocka_unit_test(test_percentile_edges),
        cmocka_unit_test(test_stats_bad_input),
        cmocka_unit_test(test_variant_parse),
        cmocka_unit_test(test_row_count),
        cmocka_unit_test(test_sweep_rejects_bad_options),
        cmocka_unit_test(test_runner_host_and_device_agree),
        cmocka_unit_test(test_runner_bad_inputs),
        cmocka_unit_test(test_memory_figures),
        cmocka_unit_test(test_nvml_answers_or_says_why),
        cmocka_unit_test(test_io_binding_names),
        cmocka_unit_test(test_classify_errors),
        cmocka_unit_test(test_verdict_of),
        cmocka_unit_test(test_csv_not_compared),
        cmocka_unit_test(test_judge_accuracy),
        cmocka_unit_test(test_balanced_batch_of_one_is_padded),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
