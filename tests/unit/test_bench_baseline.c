/* bench against a baseline: limits, a row's identity, the matching of rows with an earlier
 * summary's, and the verdict it gives (a regressed row fails, a faster one passes, nothing
 * compared is not green, rows of one side only are listed). */
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
#include "core/core-impl.h"
#include "ortqual/bench.h"
#include "ortqual/export.h"
#include "ortqual/fileio.h"
#include "ortqual/graph.h"

#include "testutil.h"

/* An ONNX Runtime row, timed, p50 = p90 = ... = ms. */
static void make_row(oq_bench_row *r, int64_t seq_len, int threads, double ms)
{
    oq_err e = OQ_ERR_INIT;
    memset(r, 0, sizeof *r);
    assert_int_equal(oq_bench_variant_parse("cpu:attention24:fp32", &r->variant, &e), OQ_OK);
    r->status = OQ_BENCH_OK;
    r->batch = 1;
    r->seq_len = seq_len;
    r->masked = 1;
    r->static_shapes = 0;
    r->io = OQ_IO_HOST;
    r->heads = r->kv_heads = 2;
    r->head_dim = 8;
    r->threads = threads;
    r->n_samples = 5;
    r->max_abs_err = 1e-7;
    r->stats.p50 = r->stats.p90 = r->stats.p95 = r->stats.p99 = r->stats.p999 = r->stats.max = r->stats.mean = ms;
}

/* A summary.json row as bench writes it (the fields of the identity and stats_ms). */
static void json_row(FILE *f, const char *variant, int64_t seq_len, int threads, double ms, int last)
{
    fprintf(f,
            "{\"variant\":\"%s\",\"status\":\"ok\",\"batch\":1,\"seq_len\":%lld,\"masked\":true,"
            "\"shapes\":\"dynamic\",\"io_binding\":\"host\",\"heads\":2,\"kv_heads\":2,\"head_dim\":8,"
            "\"threads\":%d,\"inter_op_threads\":0,\"samples_ms\":[%g],\"stats_ms\":{\"mean\":%g,\"p50\":%g,"
            "\"p90\":%g,\"p95\":%g,\"p99\":%g,\"p99.9\":%g,\"max\":%g}}%s",
            variant, (long long)seq_len, threads, ms, ms, ms, ms, ms, ms, ms, ms, last ? "" : ",");
}

/* An earlier run: seq_len 16 at 1 ms, 32 at 2 ms, 64 at 1 ms (threads 1), and the reference. */
static char *write_baseline(const char *dir, const char *schema)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"%s\",\"system\":{\"ort_version\":\"1.23.0\",\"evidence\":{\"host\":"
               "{\"cpu_model\":\"Test CPU\",\"cpus\":2},\"gpu\":{\"gpus\":[]}}},\"results\":[", schema);
    json_row(f, "cpu:attention24:fp32", 16, 1, 1.0, 0);
    json_row(f, "cpu:attention24:fp32", 32, 1, 2.0, 0);
    json_row(f, "cpu:attention24:fp32", 64, 1, 1.0, 0);
    json_row(f, "ref:sdpa:fp64", 16, 1, 9.0, 1);
    fprintf(f, "]}\n");
    fclose(f);
    return path;
}

typedef struct fixture {
    char *dir;
    oq_bench_baseline *b;
    oq_bench_limits lim;
    oq_bench_opts o;
    oq_bench_row r[3];
    oq_bench_rows rows;
} fixture;

static void fixture_open(fixture *x, size_t n_rows)
{
    oq_err e = OQ_ERR_INIT;
    memset(x, 0, sizeof *x);
    x->dir = temp_dir("baseline");
    assert_int_equal(oq_bench_baseline_read(write_baseline(x->dir, "ortqual.bench/2"), &x->b, &e), OQ_OK);
    assert_int_equal(oq_bench_limits_parse("p50=10%", &x->lim, &e), OQ_OK);
    oq_bench_opts_default(&x->o);
    x->rows.n = n_rows;
    x->rows.rows = x->r;
}

static void fixture_close(fixture *x)
{
    oq_bench_comparison_free(x->rows.baseline);
    oq_bench_baseline_free(x->b);
    remove_dir(x->dir);
}

static void test_limits_parse(void **state)
{
    (void)state;
    oq_bench_limits l;
    oq_err e = OQ_ERR_INIT;
    assert_int_equal(oq_bench_limits_parse("p50=10%,p99.9=25,mean=0", &l, &e), OQ_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.limit[1].stat, "p99.9");
    assert_true(l.limit[1].pct == 25 && l.limit[2].pct == 0);
    const char *bad[] = {"p42=5", "p50=-1", "p50", "p50=10%,p50=20", "p50=x", "p50=10%%", "p50=nan", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(oq_bench_limits_parse(bad[i], &l, &e), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(e.msg, "slowdown limit"));
    }
}

/* The identity: the same shape on another thread count is another row. */
static void test_row_key(void **state)
{
    (void)state;
    oq_bench_row a, b;
    char ka[512], kb[512];
    make_row(&a, 16, 1, 1.0);
    make_row(&b, 16, 2, 1.0);
    oq_bench_row_key(&a, ka, sizeof ka);
    oq_bench_row_key(&b, kb, sizeof kb);
    assert_string_equal(ka, "cpu:attention24:fp32 batch=1 seq_len=16 masked dynamic io=host h=2/2 d=8 threads=1 "
                            "inter_op=0");
    assert_string_not_equal(ka, kb);
}

/* A dimension's name may hold ' ', '=' or ';' (torch.export): escaped in the identity, so
 * {"a=1 b": 2} is not {"a": 1, "b": 2}, and every dimension of the point is in it. */
static void test_row_key_escapes_dim_names(void **state)
{
    (void)state;
    oq_bench_row a, b;
    char ka[512], kb[512];
    make_row(&a, 0, 1, 1.0);
    make_row(&b, 0, 1, 1.0);
    oq_bench_dimval one[] = {{"a=1 b", 2}}, two[] = {{"a", 1}, {"b", 2}};
    a.dims = one, a.n_dims = 1;
    b.dims = two, b.n_dims = 2;
    oq_bench_row_key(&a, ka, sizeof ka);
    oq_bench_row_key(&b, kb, sizeof kb);
    assert_non_null(strstr(ka, " a\\=1\\ b=2"));
    assert_non_null(strstr(kb, " a=1 b=2"));
    assert_string_not_equal(ka, kb);
}

/* QA hostile4 #1: the dims were kept in 256 bytes, so with names of 100 characters the third
 * dimension was cut off: C=1 and C=64 were one row (compared, PASSED), and a sweep over C
 * refused as its own ambiguous baseline. The identity holds every dimension whole. */
static void test_row_key_long_dim_names(void **state)
{
    (void)state;
    oq_bench_row a, b;
    char ka[2048], kb[2048];
    make_row(&a, 0, 1, 1.0);
    make_row(&b, 0, 1, 1.0);
    oq_bench_dimval one[3], two[3];
    for (int i = 0; i < 3; i++) {
        memset(one[i].name, 'a' + i, 100);
        one[i].name[100] = '\0';
        one[i].value = i == 2 ? 1 : 4;
    }
    memcpy(two, one, sizeof two);
    two[2].value = 64;
    a.dims = one, a.n_dims = 3;
    b.dims = two, b.n_dims = 3;
    int len = oq_bench_row_key(&a, ka, sizeof ka);
    oq_bench_row_key(&b, kb, sizeof kb);
    assert_true(len > 300 && (size_t)len == strlen(ka));
    assert_non_null(strstr(ka, "cccccccccc=1"));
    assert_non_null(strstr(kb, "cccccccccc=64"));
    assert_string_not_equal(ka, kb);
    char small[16]; /* as snprintf: the start, and the whole length */
    assert_int_equal(oq_bench_row_key(&a, small, sizeof small), len);
    assert_int_equal(strlen(small), sizeof small - 1);
}

/* The same through a summary: its two rows of C=1 and C=64 are not one row, and this run's
 * C=64 is compared with the baseline's C=64 only, its identity in full in the comparison. */
static void test_long_dims_baseline_not_ambiguous(void **state)
{
    (void)state;
    char *dir = temp_dir("baseline");
    char path[4200], name[3][101];
    snprintf(path, sizeof path, "%s/long.json", dir);
    for (int i = 0; i < 3; i++) {
        memset(name[i], 'a' + i, 100);
        name[i][100] = '\0';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"ortqual.bench/2\",\"mode\":\"model\",\"config\":{\"model\":\"m.onnx\"},\"results\":[");
    for (int c = 0; c < 2; c++)
        fprintf(f, "{\"variant\":\"cpu:model:fp32\",\"status\":\"ok\",\"batch\":1,\"seq_len\":4,\"masked\":false,"
                   "\"shapes\":\"dynamic\",\"io_binding\":\"host\",\"threads\":1,\"inter_op_threads\":0,"
                   "\"samples_ms\":[%d],\"stats_ms\":{\"p50\":%d},\"dims\":{\"%s\":1,\"%s\":4,\"%s\":%d}}%s",
                c ? 9 : 1, c ? 9 : 1, name[0], name[1], name[2], c ? 64 : 1, c ? "" : ",");
    fprintf(f, "]}\n");
    fclose(f);
    oq_bench_baseline *b = NULL;
    oq_err e = OQ_ERR_INIT;
    assert_int_equal(oq_bench_baseline_read(path, &b, &e), OQ_OK);
    oq_bench_row r;
    make_row(&r, 4, 1, 1.0); /* C=64 at 1 ms: against the baseline's 9 ms, not its C=1's 1 ms */
    snprintf(r.variant.name, sizeof r.variant.name, "cpu:model:fp32");
    r.masked = 0, r.heads = r.kv_heads = r.head_dim = -1;
    oq_bench_dimval dv[3];
    for (int i = 0; i < 3; i++) {
        snprintf(dv[i].name, sizeof dv[i].name, "%.100s", name[i]); /* (-O2 with _FORTIFY_SOURCE: the bound said) */
        dv[i].value = i == 2 ? 64 : i == 1 ? 4 : 1;
    }
    r.dims = dv, r.n_dims = 3;
    oq_bench_rows rows = {0};
    rows.n = 1, rows.rows = &r;
    oq_bench_limits lim;
    assert_int_equal(oq_bench_limits_parse("p50=10%", &lim, &e), OQ_OK);
    assert_int_equal(oq_bench_compare(&rows, b, &lim, NULL, &e), OQ_OK);
    const oq_bench_comparison *c = rows.baseline;
    assert_int_equal(c->compared, 1);
    assert_int_equal(c->missing, 1);
    assert_true(fabs(c->entries[0].old_ms[0] - 9.0) < 1e-12);
    assert_non_null(strstr(c->keys[0], "=64"));
    oq_bench_comparison_free(rows.baseline);
    oq_bench_baseline_free(b);
    remove_dir(dir);
}

/* QA hostile4 #3: a model's run with another mask polarity, mask input or inputs file was
 * compared with the baseline (the verdict followed noise): each is another measurement, said
 * before the sweep where the options tell it, and by the comparison from the mask it took. */
static void test_mask_and_inputs_are_measured(void **state)
{
    (void)state;
    oq_err e = OQ_ERR_INIT;
    char *dir = temp_dir("baseline");
    char path[4200], npz[4200], diff[512];
    snprintf(path, sizeof path, "%s/mask.json", dir);
    snprintf(npz, sizeof npz, "%s/in.npz", dir);
    FILE *f = fopen(npz, "w");
    assert_non_null(f);
    fputs("some inputs", f);
    fclose(f);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"ortqual.bench/2\",\"mode\":\"model\",\"config\":{\"model\":\"m.onnx\",\"inputs\":null,"
               "\"inputs_sha256\":null,\"input_shapes\":{},\"mask_input\":\"mask\",\"mask_polarity\":\"keep\","
               "\"mask_polarity_source\":\"default\"},\"results\":[");
    json_row(f, "cpu:model:fp32", 16, 1, 1.0, 1);
    fprintf(f, "]}\n");
    fclose(f);
    oq_bench_baseline *b = NULL;
    assert_int_equal(oq_bench_baseline_read(path, &b, &e), OQ_OK);
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    o.model_path = "m.onnx";
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "");
    o.mask_polarity = OQ_MASK_POLARITY_PAD;
    o.given |= OQ_BENCH_GIVEN_MASK_POLARITY;
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "opts.mask_polarity \"pad\" here, \"keep\" in the baseline");
    o.mask_polarity = OQ_MASK_POLARITY_KEEP; /* given, the baseline's own: the same */
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "");
    o.mask_input = "attn";
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "opts.mask_input \"attn\" here, \"mask\" in the baseline");
    o.mask_input = NULL;
    o.inputs_path = npz;
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_non_null(strstr(diff, "opts.inputs_path "));
    assert_non_null(strstr(diff, "in.npz (sha256 "));
    assert_non_null(strstr(diff, " here, null in the baseline"));
    /* the mask the sweep took, when the options did not tell it */
    oq_bench_limits lim;
    oq_bench_rows rows = {0};
    oq_bench_row r;
    make_row(&r, 16, 1, 1.0);
    snprintf(r.variant.name, sizeof r.variant.name, "cpu:model:fp32");
    rows.n = 1, rows.rows = &r;
    assert_int_equal(oq_bench_limits_parse("p50=10%", &lim, &e), OQ_OK);
    snprintf(rows.mask_input, sizeof rows.mask_input, "mask");
    rows.mask_polarity = OQ_MASK_POLARITY_PAD;
    assert_int_equal(oq_bench_compare(&rows, b, &lim, NULL, &e), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "mask.json: another measurement: the mask polarity pad here, keep in the baseline"));
    rows.mask_input[0] = '\0';
    assert_int_equal(oq_bench_compare(&rows, b, &lim, NULL, &e), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "another measurement: the mask input none here, 'mask' in the baseline"));
    assert_null(rows.baseline);
    snprintf(rows.mask_input, sizeof rows.mask_input, "mask");
    rows.mask_polarity = OQ_MASK_POLARITY_KEEP;
    assert_int_equal(oq_bench_compare(&rows, b, &lim, NULL, &e), OQ_OK);
    assert_int_equal(rows.baseline->compared, 1);
    oq_bench_comparison_free(rows.baseline);
    oq_bench_baseline_free(b);
    remove_dir(dir);
}

static void test_faster_row_passes_and_missing_listed(void **state)
{
    (void)state;
    fixture x;
    oq_err e = OQ_ERR_INIT;
    fixture_open(&x, 2);
    make_row(&x.r[0], 16, 1, 0.5);  /* twice as fast */
    make_row(&x.r[1], 32, 1, 2.19); /* 1.095 x: within 10% */
    assert_int_equal(oq_bench_compare(&x.rows, x.b, &x.lim, NULL, &e), OQ_OK);
    const oq_bench_comparison *c = x.rows.baseline;
    assert_int_equal(c->compared, 2);
    assert_int_equal(c->regressed, 0);
    assert_int_equal(c->missing, 1); /* seq_len 64; the reference's row is not under test */
    assert_int_equal(c->n, 3);
    assert_int_equal(c->entries[2].match, OQ_BENCH_MATCH_MISSING);
    assert_non_null(strstr(c->entries[2].key, "seq_len=64"));
    assert_true(c->entries[2].row == (size_t)-1);
    assert_true(fabs(c->entries[0].ratio[0] - 0.5) < 1e-12);
    oq_bench_verdict v;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "passed");
    assert_int_equal(v.exit_status, 0);
    assert_non_null(strstr(v.reason, "2 compared with the baseline"));
    fixture_close(&x);
}

static void test_regressed_row_fails(void **state)
{
    (void)state;
    fixture x;
    oq_err e = OQ_ERR_INIT;
    fixture_open(&x, 2);
    make_row(&x.r[0], 16, 1, 1.0);
    make_row(&x.r[1], 32, 1, 2.21); /* 1.105 x: over 10% */
    assert_int_equal(oq_bench_compare(&x.rows, x.b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->regressed, 1);
    assert_int_equal(x.rows.baseline->entries[1].match, OQ_BENCH_MATCH_REGRESSED);
    oq_bench_verdict v;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "failed");
    assert_int_equal(v.exit_status, 1);
    assert_non_null(strstr(v.reason, "1 row regressed against the baseline"));
    assert_non_null(strstr(v.reason, "seq_len=32"));
    /* a looser limit on that statistic lets it pass */
    assert_int_equal(oq_bench_limits_parse("p50=20", &x.lim, &e), OQ_OK);
    assert_int_equal(oq_bench_compare(&x.rows, x.b, &x.lim, NULL, &e), OQ_OK);
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "passed");
    fixture_close(&x);
}

/* Rows that all miss the baseline (another thread count): nothing compared is not green,
 * --allow-skip or not; the rows are listed as new. */
static void test_nothing_matched_is_not_green(void **state)
{
    (void)state;
    fixture x;
    oq_err e = OQ_ERR_INIT;
    fixture_open(&x, 2);
    make_row(&x.r[0], 16, 4, 0.1);
    make_row(&x.r[1], 32, 4, 0.1);
    assert_int_equal(oq_bench_compare(&x.rows, x.b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->compared, 0);
    assert_int_equal(x.rows.baseline->added, 2);
    assert_int_equal(x.rows.baseline->missing, 3);
    assert_int_equal(x.rows.baseline->entries[0].match, OQ_BENCH_MATCH_NEW);
    oq_bench_verdict v;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "untested");
    assert_int_equal(v.exit_status, 1);
    assert_non_null(strstr(v.reason, "no row was compared with the baseline"));
    x.o.allow_skip = 1;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_int_equal(v.exit_status, 1);
    /* nothing ran at all, with --allow-skip: still not green when a baseline was given */
    x.r[0].status = x.r[1].status = OQ_BENCH_SKIPPED;
    x.r[0].n_samples = x.r[1].n_samples = 0;
    x.r[0].max_abs_err = x.r[1].max_abs_err = NAN;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "untested");
    assert_int_equal(v.exit_status, 1);
    fixture_close(&x);
}

/* A row that did not run here matches but is not compared (untimed); a failed row keeps
 * today's meaning over the baseline. */
static void test_untimed_and_failed_rows(void **state)
{
    (void)state;
    fixture x;
    oq_err e = OQ_ERR_INIT;
    fixture_open(&x, 2);
    make_row(&x.r[0], 16, 1, 1.0);
    make_row(&x.r[1], 32, 1, 2.0);
    x.r[1].status = OQ_BENCH_OOM;
    x.r[1].n_samples = 0;
    assert_int_equal(oq_bench_compare(&x.rows, x.b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->untimed, 1);
    assert_int_equal(x.rows.baseline->compared, 1);
    x.r[0].status = OQ_BENCH_FAILED;
    snprintf(x.r[0].error, sizeof x.r[0].error, "over tolerance");
    oq_bench_verdict v;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "failed");
    assert_non_null(strstr(v.reason, "over tolerance"));
    fixture_close(&x);
}

/* A file holding `rows` (JSON row texts) and `config`, with the machine of write_baseline. */
static char *write_doc(const char *dir, const char *config, int dup)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/doc.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"ortqual.bench/2\",\"verdict\":\"failed\",\"config\":%s,\"system\":"
               "{\"ort_version\":\"1.23.0\",\"evidence\":{\"host\":{\"cpu_model\":\"Test CPU\",\"cpus\":2},"
               "\"gpu\":{\"gpus\":[]}}},\"results\":[", config);
    json_row(f, "cpu:attention24:fp32", 16, 1, 1.0, 0);
    json_row(f, "cpu:attention24:fp32", dup ? 16 : 32, 1, 2.0, 1);
    fprintf(f, "]}\n");
    fclose(f);
    return path;
}

/* Two rows of one identity: which one a row is compared with would be chance. */
static void test_duplicate_rows_refused(void **state)
{
    (void)state;
    oq_err e = OQ_ERR_INIT;
    oq_bench_baseline *b = NULL;
    char *dir = temp_dir("baseline");
    assert_int_equal(oq_bench_baseline_read(write_doc(dir, "{}", 1), &b, &e), OQ_ERR_FORMAT);
    assert_null(b);
    assert_non_null(strstr(e.msg, "results[0] and results[1] are one row (cpu:attention24:fp32 batch=1 seq_len=16 "));
    assert_non_null(strstr(e.msg, "ambiguous"));
    remove_dir(dir);
}

/* Options that change what is timed: the first difference named, both values; a key the
 * baseline lacks is not compared; the baseline's verdict reaches the comparison. */
static void test_config_differs(void **state)
{
    (void)state;
    oq_err e = OQ_ERR_INIT;
    oq_bench_baseline *b = NULL;
    char *dir = temp_dir("baseline");
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    char diff[512];
    assert_int_equal(oq_bench_baseline_read(write_doc(dir, "{\"include_session\":false,\"iters\":7}", 0), &b, &e),
                     OQ_OK);
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, ""); /* iters is not a measured key; the rest are not recorded */
    o.include_session = 1;
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "opts.include_session true here, false in the baseline");
    oq_bench_baseline_free(b);
    assert_int_equal(oq_bench_baseline_read(write_doc(dir, "{\"mask_fraction\":0.1,\"seed\":0}", 0), &b, &e), OQ_OK);
    o.mask_fraction = 0.6;
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "opts.mask_fraction 0.6 here, 0.1 in the baseline");
    oq_bench_limits lim;
    oq_bench_rows rows = {0};
    oq_bench_row r;
    make_row(&r, 16, 1, 1.0);
    rows.n = 1, rows.rows = &r;
    assert_int_equal(oq_bench_limits_parse("p50=10%", &lim, &e), OQ_OK);
    assert_int_equal(oq_bench_compare(&rows, b, &lim, NULL, &e), OQ_OK);
    assert_string_equal(rows.baseline->verdict, "failed");
    oq_bench_comparison_free(rows.baseline);
    oq_bench_baseline_free(b);
    remove_dir(dir);
}

/* The baseline's session compared as ORT runs it, for a timing: a log id, the default level spelt
 * as an entry or as the option, and an entry's level over the option's are the same measurement
 * (each was "another measurement"); spinning and another level are not. */
static void test_config_differs_as_run(void **state)
{
    (void)state;
    oq_err e = OQ_ERR_INIT;
    oq_bench_baseline *b = NULL;
    char *dir = temp_dir("baseline");
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    char diff[512];
    assert_int_equal(oq_bench_baseline_read(write_doc(dir, "{\"graph_opt_level\":-1,\"session_configs\":[]}", 0), &b,
                                            &e),
                     OQ_OK);
    const char *k[] = {"session.log_id", "session.graph_optimization_level"}, *v[] = {"x", "enable_all"};
    o.session_config_keys = k, o.session_config_values = v;
    for (size_t n = 0; n <= 2; n++) { /* none, a log id, and the default level as an entry */
        o.n_session_configs = n;
        assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
        assert_string_equal(diff, "");
    }
    o.graph_opt = OQ_GRAPH_OPT_DISABLE; /* the entry's level is the one ORT runs */
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "");
    o.n_session_configs = 1;
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "the graph optimization level 0 (from opts.graph_opt) here, 99 in the baseline");
    o.graph_opt = OQ_GRAPH_OPT_ALL; /* the default, spelt */
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "");
    const char *spin[] = {"session.intra_op.allow_spinning"}, *zero[] = {"0"};
    o.session_config_keys = spin, o.session_config_values = zero;
    assert_int_equal(oq_bench_config_differs(b, &o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "opts.session_configs {\"session.intra_op.allow_spinning\":\"0\"} here, {} in the baseline");
    oq_bench_baseline_free(b);
    remove_dir(dir);
}

/* A baseline whose rows recorded --threads 1 where a session.intra_op_num_threads entry made ORT
 * run 2 (summaries before 2026-12-07): it is the measurement of --threads 2, its rows matched by
 * the 2 threads ORT ran; an execution mode entry is another measurement, named as ORT's. */
static void test_threads_compared_as_run(void **state)
{
    (void)state;
    fixture x;
    oq_err e = OQ_ERR_INIT;
    fixture_open(&x, 1);
    oq_bench_baseline_free(x.b);
    x.b = NULL;
    assert_int_equal(oq_bench_baseline_read(write_doc(x.dir, "{\"graph_opt_level\":-1,\"threads\":1,"
                                                             "\"inter_op_threads\":0,\"session_configs\":"
                                                             "[[\"session.intra_op_num_threads\",\"2\"]]}", 0),
                                            &x.b, &e),
                     OQ_OK);
    char diff[512];
    x.o.threads = 2;
    assert_int_equal(oq_bench_config_differs(x.b, &x.o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "");
    make_row(&x.r[0], 16, 2, 1.0);
    assert_int_equal(oq_bench_compare(&x.rows, x.b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->compared, 1);
    assert_int_equal(x.rows.baseline->entries[0].match, OQ_BENCH_MATCH_OK);
    const char *k[] = {"session.intra_op_num_threads", "session.execution_mode"}, *v[] = {"2", "parallel"};
    x.o.threads = 1, x.o.n_session_configs = 2, x.o.session_config_keys = k, x.o.session_config_values = v;
    assert_int_equal(oq_bench_config_differs(x.b, &x.o, diff, sizeof diff, &e), OQ_OK);
    assert_string_equal(diff, "ORT's execution mode \"parallel\" (from session config session.execution_mode) here, "
                              "\"sequential\" in the baseline");
    fixture_close(&x);
}

/* A baseline of this runtime's version that ran another library file: the note
 * oq_bench_baseline_ort_differs makes reaches the comparison (summary.json's ort_difference). */
static void test_ort_difference_reaches_comparison(void **state)
{
    (void)state;
    oq_err e = OQ_ERR_INIT;
    oq_runtime *rt = NULL;
    assert_int_equal(oq_runtime_load(OQ_ORT_LIB, &rt, &e), OQ_OK);
    char *dir = temp_dir("baseline"), path[4200];
    snprintf(path, sizeof path, "%s/other_lib.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"ortqual.bench/2\",\"system\":{\"ort_version\":\"%s\",\"ort_library\":"
               "\"/elsewhere/libonnxruntime.so\"},\"results\":[", oq_runtime_version(rt));
    json_row(f, "cpu:attention24:fp32", 16, 1, 1.0, 1);
    fprintf(f, "]}\n");
    fclose(f);
    oq_bench_baseline *b = NULL;
    assert_int_equal(oq_bench_baseline_read(path, &b, &e), OQ_OK);
    char want[8400];
    snprintf(want, sizeof want, "another ONNX Runtime library of version %s: %s here, /elsewhere/libonnxruntime.so "
             "in the baseline", oq_runtime_version(rt), oq_runtime_lib_path(rt));
    assert_string_equal(oq_bench_baseline_ort_differs(b, rt), want);
    oq_bench_limits lim;
    oq_bench_rows rows = {0};
    oq_bench_row r;
    make_row(&r, 16, 1, 1.0);
    rows.n = 1, rows.rows = &r;
    assert_int_equal(oq_bench_limits_parse("p50=10%", &lim, &e), OQ_OK);
    assert_int_equal(oq_bench_compare(&rows, b, &lim, NULL, &e), OQ_OK);
    assert_string_equal(rows.baseline->ort_diff, want);
    assert_string_equal(rows.baseline->verdict, ""); /* the document records none */
    oq_bench_comparison_free(rows.baseline);
    oq_bench_baseline_free(b);
    oq_runtime_free(rt);
    remove_dir(dir);
}

/* A baseline whose row has p50 = old_p50 and p99 as given ("0", or NULL: absent), the other
 * statistics at 1 ms. */
static oq_bench_baseline *odd_baseline(const char *dir, double old_p50, const char *p99)
{
    char path[4200], p99_item[64] = "";
    snprintf(path, sizeof path, "%s/odd.json", dir);
    if (p99) snprintf(p99_item, sizeof p99_item, ",\"p99\":%s", p99);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"ortqual.bench/2\",\"results\":[{\"variant\":\"cpu:attention24:fp32\",\"status\":\"ok\","
               "\"batch\":1,\"seq_len\":16,\"masked\":true,\"shapes\":\"dynamic\",\"io_binding\":\"host\",\"heads\":2,"
               "\"kv_heads\":2,\"head_dim\":8,\"threads\":1,\"inter_op_threads\":0,\"samples_ms\":[1],"
               "\"stats_ms\":{\"mean\":1,\"p50\":%.17g,\"p90\":1,\"p95\":1,\"p99.9\":1,\"max\":1%s}}]}\n",
            old_p50, p99_item);
    fclose(f);
    oq_bench_baseline *b = NULL;
    oq_err e = OQ_ERR_INIT;
    assert_int_equal(oq_bench_baseline_read(path, &b, &e), OQ_OK);
    return b;
}

/* QA hostile3 #3: a statistic 0 or absent in the baseline made the row untimed, which hid a
 * regression on another limited statistic (the run passed, exit 0). Any ratio over its limit
 * regresses the row, in whatever order the limits come; the statistic not compared is said. */
static void test_regression_not_hidden_by_a_missing_statistic(void **state)
{
    (void)state;
    const char *p99s[] = {"0", NULL};
    const char *orders[] = {"p50=10%,p99=10%", "p99=10%,p50=10%"};
    for (int z = 0; z < 2; z++)
        for (int o = 0; o < 2; o++) {
            fixture x;
            oq_err e = OQ_ERR_INIT;
            fixture_open(&x, 1);
            oq_bench_baseline *b = odd_baseline(x.dir, 1e-6, p99s[z]);
            assert_int_equal(oq_bench_limits_parse(orders[o], &x.lim, &e), OQ_OK);
            make_row(&x.r[0], 16, 1, 3.5); /* x3.5e6 on p50 */
            assert_int_equal(oq_bench_compare(&x.rows, b, &x.lim, NULL, &e), OQ_OK);
            const oq_bench_comparison *c = x.rows.baseline;
            assert_int_equal(c->entries[0].match, OQ_BENCH_MATCH_REGRESSED);
            assert_int_equal(c->regressed, 1);
            assert_int_equal(c->untimed, 0);
            size_t p99 = !strcmp(x.lim.limit[0].stat, "p99") ? 0 : 1;
            assert_true(isnan(c->entries[0].ratio[p99]));
            assert_string_equal(oq_bench_ratio_why(&c->entries[0], p99),
                                z ? "absent in the baseline" : "not a positive time in the baseline");
            assert_null(oq_bench_ratio_why(&c->entries[0], 1 - p99));
            oq_bench_verdict v;
            oq_bench_verdict_of(&x.o, &x.rows, &v);
            assert_string_equal(v.verdict, "failed");
            assert_int_equal(v.exit_status, 1);
            assert_non_null(strstr(v.reason, "p50 1e-06 ms -> 3.5 ms"));
            oq_bench_baseline_free(b);
            fixture_close(&x);
        }
}

/* A row whose limited statistics are all 0 or absent on one side is untimed, never ok; one
 * compared on some is ok or regressed on those, and the verdict says what was left out. */
static void test_statistics_not_compared(void **state)
{
    (void)state;
    fixture x;
    oq_err e = OQ_ERR_INIT;
    fixture_open(&x, 1);
    oq_bench_baseline *b = odd_baseline(x.dir, 0, NULL);
    assert_int_equal(oq_bench_limits_parse("p50=10%,p99=10%", &x.lim, &e), OQ_OK);
    make_row(&x.r[0], 16, 1, 1.0);
    assert_int_equal(oq_bench_compare(&x.rows, b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->entries[0].match, OQ_BENCH_MATCH_UNTIMED);
    assert_int_equal(x.rows.baseline->compared, 0);
    oq_bench_verdict v;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "untested");
    assert_int_equal(v.exit_status, 1);
    /* p90 compared (1 ms -> 1 ms), p99 absent: ok, and said */
    assert_int_equal(oq_bench_limits_parse("p99=10%,p90=10%", &x.lim, &e), OQ_OK);
    assert_int_equal(oq_bench_compare(&x.rows, b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->entries[0].match, OQ_BENCH_MATCH_OK);
    assert_string_equal(oq_bench_ratio_why(&x.rows.baseline->entries[0], 0), "absent in the baseline");
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "passed");
    assert_non_null(strstr(v.reason, "1 compared with the baseline, none regressed (1 limited statistic of compared "
                                     "rows not compared: 0 or absent on one side)"));
    /* this run's row did not run: every statistic "not timed here" */
    x.r[0].status = OQ_BENCH_OOM;
    x.r[0].n_samples = 0;
    assert_int_equal(oq_bench_compare(&x.rows, b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->entries[0].match, OQ_BENCH_MATCH_UNTIMED);
    assert_string_equal(oq_bench_ratio_why(&x.rows.baseline->entries[0], 1), "not timed here");
    assert_null(oq_bench_ratio_why(NULL, 0));
    oq_bench_baseline_free(b);
    fixture_close(&x);
}

/* A --model sweep's summary of model `path` (SHA-256 `sha`, NULL: none recorded), one row. */
static oq_bench_baseline *model_baseline(const char *dir, const char *path, const char *sha)
{
    char file[4200], sha_item[128] = "";
    snprintf(file, sizeof file, "%s/model_baseline.json", dir);
    if (sha) snprintf(sha_item, sizeof sha_item, ",\"model_sha256\":\"%s\"", sha);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"ortqual.bench/2\",\"mode\":\"model\",\"config\":{\"model\":\"%s\"%s},\"results\":[",
            path, sha_item);
    json_row(f, "cpu:model:fp32", 16, 1, 1.0, 1);
    fprintf(f, "]}\n");
    fclose(f);
    oq_bench_baseline *b = NULL;
    oq_err e = OQ_ERR_INIT;
    assert_int_equal(oq_bench_baseline_read(file, &b, &e), OQ_OK);
    return b;
}

/* QA hostile3 #4: a --model run compared with another model's baseline (1 compared, none
 * regressed). The check before the sweep refuses it, naming both files and SHA-256 prefixes,
 * and the identity carries the model, so rows of two models never match. */
static void test_another_model_never_matches(void **state)
{
    (void)state;
    fixture x;
    oq_err e = OQ_ERR_INIT;
    fixture_open(&x, 1);
    char here[4200], sha[65];
    snprintf(here, sizeof here, "%s/here.onnx", x.dir);
    oq_sdpa_config sc;
    oq_sdpa_config_default(&sc);
    oq_graph *g = NULL;
    uint8_t *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_export_sdpa(&sc, &g, &e), OQ_OK);
    assert_int_equal(oq_graph_serialize(g, &buf, &n, &e), OQ_OK);
    assert_int_equal(oq_write_file_atomic(here, buf, n, 1, &e), OQ_OK);
    oq_sha256_buf(buf, n, sha);
    free(buf);
    oq_graph_free(g);
    const char *other = "a1a0006dd5a5c3d7aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    oq_bench_baseline *b = model_baseline(x.dir, "/there/slow.onnx", other);
    x.o.model_path = here;
    assert_int_equal(oq_bench_baseline_check_model(b, &x.o, &e), OQ_ERR_INVALID_ARG);
    char want[8400];
    snprintf(want, sizeof want, "%s/model_baseline.json: another model: sha256 a1a0006dd5a5 (/there/slow.onnx) in "
                                "the baseline, %.12s (%s) here", x.dir, sha, here);
    assert_string_equal(e.msg, want);
    /* compared anyway (a library caller that skips the check): new and missing, not green */
    make_row(&x.r[0], 16, 1, 1.0);
    snprintf(x.r[0].variant.name, sizeof x.r[0].variant.name, "cpu:model:fp32"); /* as the baseline reads it */
    snprintf(x.rows.model_sha256, sizeof x.rows.model_sha256, "%s", sha);
    assert_int_equal(oq_bench_compare(&x.rows, b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->compared, 0);
    assert_int_equal(x.rows.baseline->added, 1);
    assert_int_equal(x.rows.baseline->missing, 1);
    assert_non_null(strstr(x.rows.baseline->entries[0].key, " model="));
    oq_bench_verdict v;
    oq_bench_verdict_of(&x.o, &x.rows, &v);
    assert_string_equal(v.verdict, "untested");
    oq_bench_baseline_free(b);
    /* the same model (another path): checked and compared */
    b = model_baseline(x.dir, "/there/copy.onnx", sha);
    assert_int_equal(oq_bench_baseline_check_model(b, &x.o, &e), OQ_OK);
    assert_int_equal(oq_bench_compare(&x.rows, b, &x.lim, NULL, &e), OQ_OK);
    assert_int_equal(x.rows.baseline->compared, 1);
    oq_bench_baseline_free(b);
    /* no SHA-256 recorded: cannot be told to be this model */
    b = model_baseline(x.dir, "/there/copy.onnx", NULL);
    assert_int_equal(oq_bench_baseline_check_model(b, &x.o, &e), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "records no model_sha256 for its model '/there/copy.onnx'"));
    /* a model's baseline for the attention sweep, and the attention sweep's for a model */
    x.o.model_path = NULL;
    assert_int_equal(oq_bench_baseline_check_model(b, &x.o, &e), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "a model's timings, and this run is the attention sweep"));
    assert_int_equal(oq_bench_baseline_check_model(x.b, &x.o, &e), OQ_OK);
    x.o.model_path = here;
    assert_int_equal(oq_bench_baseline_check_model(x.b, &x.o, &e), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "the attention sweep's timings, and this run is a model's"));
    oq_bench_baseline_free(b);
    fixture_close(&x);
}

static void test_baseline_refused(void **state)
{
    (void)state;
    oq_err e = OQ_ERR_INIT;
    oq_bench_baseline *b = NULL;
    char *dir = temp_dir("baseline");
    char *path = write_baseline(dir, "ortqual.validate/3");
    assert_int_equal(oq_bench_baseline_read(path, &b, &e), OQ_ERR_FORMAT);
    assert_null(b);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "not a bench summary"));
    path = write_baseline(dir, "ortqual.bench/1"); /* the schema before the verdict: read */
    assert_int_equal(oq_bench_baseline_read(path, &b, &e), OQ_OK);
    oq_bench_machine here = {0}, there;
    oq_bench_baseline_machine(b, &there);
    assert_string_equal(there.cpu_model, "Test CPU");
    here = there;
    char diff[512];
    assert_int_equal(oq_bench_machine_differs(&here, &there, diff, sizeof diff), 0);
    snprintf(here.ort_version, sizeof here.ort_version, "1.24.0");
    assert_int_equal(oq_bench_machine_differs(&here, &there, diff, sizeof diff), 1);
    assert_string_equal(diff, "ONNX Runtime version '1.24.0' here, '1.23.0' in the baseline");
    oq_bench_baseline_free(b);
    FILE *f = fopen(path, "w");
    fputs("{\"schema\":\"ortqual.bench/2\",\"results\":[{\"variant\":\"cpu:attention24:fp32\"}]}", f);
    fclose(f);
    assert_int_equal(oq_bench_baseline_read(path, &b, &e), OQ_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "results[0]"));
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_parse),
        cmocka_unit_test(test_config_differs_as_run),
        cmocka_unit_test(test_threads_compared_as_run),
        cmocka_unit_test(test_row_key),
        cmocka_unit_test(test_row_key_escapes_dim_names),
        cmocka_unit_test(test_row_key_long_dim_names),
        cmocka_unit_test(test_long_dims_baseline_not_ambiguous),
        cmocka_unit_test(test_mask_and_inputs_are_measured),
        cmocka_unit_test(test_duplicate_rows_refused),
        cmocka_unit_test(test_config_differs),
        cmocka_unit_test(test_ort_difference_reaches_comparison),
        cmocka_unit_test(test_faster_row_passes_and_missing_listed),
        cmocka_unit_test(test_regressed_row_fails),
        cmocka_unit_test(test_nothing_matched_is_not_green),
        cmocka_unit_test(test_untimed_and_failed_rows),
        cmocka_unit_test(test_regression_not_hidden_by_a_missing_statistic),
        cmocka_unit_test(test_statistics_not_compared),
        cmocka_unit_test(test_another_model_never_matches),
        cmocka_unit_test(test_baseline_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
