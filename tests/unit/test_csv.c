/* CSV reading (RFC 4180 quoting, typed getters, errors naming file, line and
 * column), JSON records, and the atomic writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv/csv-impl.h"
#include "ortqual/csv.h"
#include "ortqual/fileio.h"
#include "testutil.h"

static oq_csv *parse_ok(const char *text)
{
    oq_csv *t = NULL;
    oq_err err = {0};
    oq_status st = oq_csv_parse(text, strlen(text), "t.csv", &t, &err);
    if (st) fprintf(stderr, "unexpected: %s\n", err.msg);
    assert_int_equal(st, OQ_OK);
    return t;
}

/* Parsing must fail with OQ_ERR_FORMAT and a message containing `want`. */
static void parse_fails(const char *text, const char *want)
{
    oq_csv *t = NULL;
    oq_err err = {0};
    assert_int_equal(oq_csv_parse(text, strlen(text), "t.csv", &t, &err), OQ_ERR_FORMAT);
    assert_null(t);
    if (!strstr(err.msg, want)) fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, want);
    assert_non_null(strstr(err.msg, want));
}

static void test_plain(void **state)
{
    (void)state;
    oq_csv *t = parse_ok("a,b,c\n1,2,3\n4,5,6\n");
    assert_int_equal(oq_csv_ncols(t), 3);
    assert_int_equal(oq_csv_nrows(t), 2);
    assert_string_equal(oq_csv_colname(t, 2), "c");
    assert_string_equal(oq_csv_get(t, 1, 0), "4");
    assert_int_equal(oq_csv_line(t, 1), 3);
    size_t col;
    assert_true(oq_csv_find(t, "b", &col));
    assert_int_equal(col, 1);
    assert_false(oq_csv_find(t, "B", &col));
    assert_string_equal(oq_csv_name(t), "t.csv");
    oq_csv_free(t);
}

static void test_quotes(void **state)
{
    (void)state;
    /* Embedded comma, doubled quote, embedded CRLF and LF, empty quoted field. */
    oq_csv *t = parse_ok("name,msg,n\r\n"
                         "\"a,b\",\"say \"\"hi\"\"\",1\r\n"
                         "x,\"two\r\nlines\nthree\",\"\"\r\n"
                         "y,last,7");
    assert_int_equal(oq_csv_nrows(t), 3);
    assert_string_equal(oq_csv_get(t, 0, 0), "a,b");
    assert_string_equal(oq_csv_get(t, 0, 1), "say \"hi\"");
    assert_string_equal(oq_csv_get(t, 1, 1), "two\r\nlines\nthree");
    assert_string_equal(oq_csv_get(t, 1, 2), "");
    assert_true(oq_csv_is_empty(t, 1, 2));
    /* Line numbers count the newlines inside quoted fields. */
    assert_int_equal(oq_csv_line(t, 1), 3);
    assert_int_equal(oq_csv_line(t, 2), 6);
    assert_string_equal(oq_csv_get(t, 2, 1), "last");
    oq_csv_free(t);
}

static void test_bom_blank_lines(void **state)
{
    (void)state;
    oq_csv *t = parse_ok("\xEF\xBB\xBFk,v\n\n1,2\n\n3,4\n\n");
    assert_string_equal(oq_csv_colname(t, 0), "k");
    assert_int_equal(oq_csv_nrows(t), 2);
    assert_int_equal(oq_csv_line(t, 1), 5);
    oq_csv_free(t);
    /* A header alone is a table with no rows. */
    t = parse_ok("k,v\n");
    assert_int_equal(oq_csv_nrows(t), 0);
    oq_csv_free(t);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    parse_fails("a,b\n1,2\n3\n", "t.csv:3: 1 fields, but the header has 2 columns");
    parse_fails("a,b\n1,2,3\n", "t.csv:2: 3 fields");
    parse_fails("a,b\n1,\"open\nstill open\n", "t.csv:2: field 2: quoted field never closed");
    parse_fails("a,b\n1,ab\"c\n", "t.csv:2: field 2: quote inside an unquoted field");
    parse_fails("a,b\n\"x\"y,1\n", "t.csv:2: field 1: 'y' after a closing quote");
    parse_fails("", "t.csv: empty, expected a header row");
    parse_fails("\n\n", "t.csv: empty");
    parse_fails("a,b,a\n", "header names column 'a' twice");
    parse_fails("a,,c\n", "header column 2 has no name");
}

static void test_require_column(void **state)
{
    (void)state;
    oq_csv *t = parse_ok("variant,seq_len\nx,1\n");
    oq_err err = {0};
    size_t col = 99;
    assert_int_equal(oq_csv_require(t, "seq_len", &col, &err), OQ_OK);
    assert_int_equal(col, 1);
    assert_int_equal(oq_csv_require(t, "mean_ms", &col, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "t.csv: no column 'mean_ms' in the header");
    oq_csv_free(t);
}

static void test_typed_getters(void **state)
{
    (void)state;
    oq_csv *t = parse_ok("d,i,b\n"
                         " 1.5e-3 ,42,TRUE\n"
                         "nan,-7,no\n"
                         "inf, 0 ,0\n");
    double d;
    long long i;
    int b;
    oq_err err = {0};
    assert_int_equal(oq_csv_get_double(t, 0, 0, &d, &err), OQ_OK);
    assert_true(d == 1.5e-3);
    assert_int_equal(oq_csv_get_double(t, 1, 0, &d, &err), OQ_OK);
    assert_true(isnan(d));
    assert_int_equal(oq_csv_get_double(t, 2, 0, &d, &err), OQ_OK);
    assert_true(isinf(d));
    assert_int_equal(oq_csv_get_int(t, 0, 1, &i, &err), OQ_OK);
    assert_int_equal(i, 42);
    assert_int_equal(oq_csv_get_int(t, 1, 1, &i, &err), OQ_OK);
    assert_int_equal(i, -7);
    assert_int_equal(oq_csv_get_int(t, 2, 1, &i, &err), OQ_OK);
    assert_int_equal(i, 0);
    assert_int_equal(oq_csv_get_bool(t, 0, 2, &b, &err), OQ_OK);
    assert_int_equal(b, 1);
    assert_int_equal(oq_csv_get_bool(t, 1, 2, &b, &err), OQ_OK);
    assert_int_equal(b, 0);
    /* An int column read as double is fine. */
    assert_int_equal(oq_csv_get_double(t, 0, 1, &d, &err), OQ_OK);
    assert_true(d == 42.0);
    oq_csv_free(t);
}

static void test_bad_values(void **state)
{
    (void)state;
    /* The quoted newline in row 1 shifts row 2 to line 4. */
    oq_csv *t = parse_ok("note,mean_ms,batch,masked\n"
                         "\"a\nb\",1.0,2,1\n"
                         "c,12ms,2.5,maybe\n"
                         "d,,99999999999999999999,1\n");
    double d = -1;
    long long i = -1;
    int b = -1;
    oq_err err = {0};
    assert_int_equal(oq_csv_get_double(t, 1, 1, &d, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "t.csv:4: column 'mean_ms': '12ms' is not a number");
    assert_true(d == -1);
    assert_int_equal(oq_csv_get_int(t, 1, 2, &i, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "t.csv:4: column 'batch': '2.5' is not an integer");
    assert_int_equal(oq_csv_get_bool(t, 1, 3, &b, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "t.csv:4: column 'masked': 'maybe' is not a boolean"));
    assert_int_equal(oq_csv_get_double(t, 2, 1, &d, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "t.csv:5: column 'mean_ms': empty, expected a number");
    assert_int_equal(oq_csv_get_int(t, 2, 2, &i, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "'99999999999999999999' is not an integer"));
    assert_int_equal(i, -1);
    oq_csv_free(t);
}

static void test_writer_round_trip(void **state)
{
    (void)state;
    char *dir = temp_dir("csv"), path[512];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    static const char *const cols[] = {"s", "d", "i"};
    oq_csv_writer *w;
    oq_err err = {0};
    assert_int_equal(oq_csv_writer_open(&w, path, cols, 3, 0, &err), OQ_OK);
    const char *tricky[] = {"plain", "a,b", "say \"hi\"", "two\nlines", " padded", NULL};
    const double vals[] = {0.1, 1e-7, 1.0 / 3.0, NAN, INFINITY, -2.5};
    for (int r = 0; r < 6; r++) {
        oq_csv_write_str(w, tricky[r]);
        oq_csv_write_double(w, vals[r]);
        if (r == 5)
            oq_csv_write_empty(w);
        else
            oq_csv_write_int(w, -r * 1000000000000LL);
        assert_int_equal(oq_csv_end_row(w, &err), OQ_OK);
    }
    assert_int_equal(oq_csv_writer_commit(w, &err), OQ_OK);
    assert_int_equal(dir_entries(dir), 1); /* no temporary left */

    oq_csv *t;
    assert_int_equal(oq_csv_read(path, &t, &err), OQ_OK);
    assert_int_equal(oq_csv_nrows(t), 6);
    for (size_t r = 0; r < 6; r++) {
        assert_string_equal(oq_csv_get(t, r, 0), tricky[r] ? tricky[r] : "");
        double d;
        assert_int_equal(oq_csv_get_double(t, r, 1, &d, &err), OQ_OK);
        if (isnan(vals[r]))
            assert_true(isnan(d));
        else
            assert_true(d == vals[r]); /* exact round trip */
    }
    long long i;
    assert_int_equal(oq_csv_get_int(t, 4, 2, &i, &err), OQ_OK);
    assert_true(i == -4000000000000LL);
    assert_true(oq_csv_is_empty(t, 5, 2));
    assert_string_equal(oq_csv_get(t, 0, 1), "0.1"); /* shortest form, not 0.10000000000000001 */
    oq_csv_free(t);

    /* overwrite == 0 refuses to replace the file. */
    assert_int_equal(oq_csv_writer_open(&w, path, cols, 3, 0, &err), OQ_OK);
    assert_int_equal(oq_csv_writer_commit(w, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "exists"));
    assert_int_equal(dir_entries(dir), 1);
    remove_dir(dir);
}

static void test_writer_errors(void **state)
{
    (void)state;
    char *dir = temp_dir("csv"), path[512];
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    static const char *const cols[] = {"a", "b"};
    oq_csv_writer *w;
    oq_err err = {0};

    /* Too few fields: end_row fails, and so does the commit; nothing is left. */
    assert_int_equal(oq_csv_writer_open(&w, path, cols, 2, 1, &err), OQ_OK);
    oq_csv_write_str(w, "only one");
    assert_int_equal(oq_csv_end_row(w, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "record has 1 fields, expected 2"));
    assert_int_equal(oq_csv_writer_commit(w, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(dir_entries(dir), 0);

    /* Too many fields. */
    assert_int_equal(oq_csv_writer_open(&w, path, cols, 2, 1, &err), OQ_OK);
    oq_csv_write_int(w, 1);
    oq_csv_write_int(w, 2);
    oq_csv_write_int(w, 3);
    assert_int_equal(oq_csv_end_row(w, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "more fields than columns"));
    oq_csv_writer_abort(w);

    /* A record left open fails the commit. */
    assert_int_equal(oq_csv_writer_open(&w, path, cols, 2, 1, &err), OQ_OK);
    oq_csv_write_int(w, 1);
    assert_int_equal(oq_csv_writer_commit(w, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "last record not ended"));
    assert_int_equal(dir_entries(dir), 0);

    /* No columns; a directory that does not exist. */
    assert_int_equal(oq_csv_writer_open(&w, path, cols, 0, 1, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_csv_writer_open(&w, "/nonexistent-dir/x.csv", cols, 2, 1, &err), OQ_ERR_OUTPUT);
    assert_null(w);
    remove_dir(dir);
}

static void test_read_missing_file(void **state)
{
    (void)state;
    oq_csv *t;
    oq_err err = {0};
    assert_int_equal(oq_csv_read("/nonexistent/summary.csv", &t, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent/summary.csv"));
    assert_int_equal(oq_csv_read_json("/nonexistent/summary.json", &t, &err), OQ_ERR_IO);
    /* a FIFO with no writer: refused at once, not read (json_load_file would block) */
    char *dir = temp_dir("csv");
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/summary.json", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(10);
    assert_int_equal(oq_csv_read_json(fifo, &t, &err), OQ_ERR_IO);
    alarm(0);
    assert_non_null(strstr(err.msg, "is a FIFO (named pipe), not a regular file"));
    unlink(fifo);
    remove_dir(dir);
}

static void write_text(const char *path, const char *text)
{
    assert_int_equal(oq_write_file_atomic(path, text, strlen(text), 1, NULL), OQ_OK);
}

static void test_json_records(void **state)
{
    (void)state;
    char *dir = temp_dir("csv"), path[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    write_text(path, "{\"system\": {\"cpu\": \"x\"}, \"results\": ["
                     "{\"variant\": \"ref\", \"seq_len\": 128, \"mean_ms\": 0.1, \"masked\": true,"
                     " \"samples\": [1, 2]},"
                     "{\"variant\": \"cpu\", \"seq_len\": 256, \"mean_ms\": null, \"masked\": false,"
                     " \"error\": \"oom\"}]}");
    oq_csv *t;
    oq_err err = {0};
    assert_int_equal(oq_csv_read_json(path, &t, &err), OQ_OK);
    assert_int_equal(oq_csv_nrows(t), 2);
    assert_int_equal(oq_csv_ncols(t), 5); /* samples (an array) is left out */
    size_t c;
    assert_false(oq_csv_find(t, "samples", &c));
    assert_true(oq_csv_find(t, "mean_ms", &c));
    assert_string_equal(oq_csv_get(t, 0, c), "0.1");
    assert_true(oq_csv_is_empty(t, 1, c));
    assert_true(oq_csv_find(t, "masked", &c));
    assert_string_equal(oq_csv_get(t, 0, c), "1");
    assert_true(oq_csv_find(t, "error", &c));
    assert_string_equal(oq_csv_get(t, 0, c), "");
    assert_string_equal(oq_csv_get(t, 1, c), "oom");
    assert_true(oq_csv_find(t, "seq_len", &c));
    long long L;
    assert_int_equal(oq_csv_get_int(t, 1, c, &L, &err), OQ_OK);
    assert_int_equal(L, 256);
    /* Messages name the record. */
    assert_true(oq_csv_find(t, "variant", &c));
    double dummy;
    assert_int_equal(oq_csv_get_double(t, 1, c, &dummy, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "summary.json: record 2: column 'variant': 'cpu' is not a number"));
    oq_csv_free(t);

    write_text(path, "{\"results\": 3}");
    assert_int_equal(oq_csv_read_json(path, &t, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "no \"results\" array"));
    write_text(path, "{\"results\": [1]}");
    assert_int_equal(oq_csv_read_json(path, &t, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "results[0] is not an object"));
    write_text(path, "{\"results\": [");
    assert_int_equal(oq_csv_read_json(path, &t, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    remove_dir(dir);
}

static void test_schemas(void **state)
{
    (void)state;
    /* The bench summary.csv columns: issue 7's list plus the settings bench
     * reports (kernel requested, shapes, I/O binding, kv heads, threads, ...). */
    static const char *const want[] = {
        "variant", "status", "device", "dtype", "representation", "kernel", "kernel_requested",
        "shapes", "io_binding", "masked", "batch", "seq_len", "valid_elements", "heads", "kv_heads",
        "head_dim", "threads", "inter_op_threads", "warmup", "iters", "session_ms", "first_run_ms",
        "mean_ms", "std_ms", "min_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms",
        "peak_rss_mb", "vmhwm_mb", "peak_gpu_mb", "max_abs_err", "nan_count", "profile_node_ms",
        "profile_kernel_ms", "dims", "seq_dim", "error", "baseline", "baseline_ratios"};
    assert_int_equal(OQ_BENCH_NCOLS, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < OQ_BENCH_NCOLS; i++) assert_string_equal(oq_bench_csv_columns[i], want[i]);
    assert_string_equal(oq_bench_csv_columns[OQ_BENCH_COL_P50_MS], "p50_ms");
    assert_string_equal(oq_validate_csv_columns[OQ_VALIDATE_COL_MAX_ABS_ERR], "max_abs_err");
    /* source last: a reader by column name, or by the first seven positions, reads as before */
    assert_int_equal(OQ_VALIDATE_COL_SOURCE, OQ_VALIDATE_NCOLS - 1);
    assert_string_equal(oq_validate_csv_columns[OQ_VALIDATE_COL_SOURCE], "source");
    /* The committed fixture is an older summary.csv (before inter_op_threads, p95_ms, ...):
     * every column it has is still in the schema, in the same order. */
    oq_csv *t;
    oq_err err = {0};
    assert_int_equal(oq_csv_read(OQ_SOURCE_DIR "/tests/fixtures/bench/summary.csv", &t, &err), OQ_OK);
    size_t k = 0;
    for (size_t i = 0; i < oq_csv_ncols(t); i++) {
        while (k < OQ_BENCH_NCOLS && strcmp(oq_bench_csv_columns[k], oq_csv_colname(t, i))) k++;
        assert_true(k < OQ_BENCH_NCOLS);
    }
    assert_int_equal(oq_csv_ncols(t), 33);
    oq_csv_free(t);
}

/* A dims text round-trips whatever the names hold: bench writes it, plot reads it back. */
static void test_dims_text_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"batch", "x;y", "s0 + 1", "Min(s0, 1024)", "a=b", "back\\slash"};
    char buf[512], name[64];
    size_t used = 0;
    for (int i = 0; i < 6; i++) used = oq_csv_dims_append(buf, sizeof buf, used, ";", names[i], i + 1);
    assert_string_equal(buf, "batch=1;x\\;y=2;s0\\ +\\ 1=3;Min(s0,\\ 1024)=4;a\\=b=5;back\\\\slash=6");
    const char *p = buf, *value;
    for (int i = 0; i < 6; i++) {
        const char *end = oq_csv_dims_next(&p, name, sizeof name, &value);
        assert_string_equal(name, names[i]);
        assert_non_null(value);
        assert_int_equal(strtoll(value, NULL, 10), i + 1);
        assert_true(*end == ';' || !*end);
    }
    assert_string_equal(p, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_quotes),
        cmocka_unit_test(test_bom_blank_lines),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_require_column),
        cmocka_unit_test(test_typed_getters),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_writer_errors),
        cmocka_unit_test(test_read_missing_file),
        cmocka_unit_test(test_json_records),
        cmocka_unit_test(test_schemas),
        cmocka_unit_test(test_dims_text_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
