/* A batch record's line (src/validate/record.c): written as text, it must be the line jansson
 * would write (summary.json copies it as it is) and read back to the same record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "validate/validate-impl.h"

#define FLAGS JSON_PRESERVE_ORDER

/* The record's line, without its newline (the caller frees it). */
static char *line_of(const oq_batch_result *b)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    int ok = oq_batch_record_put(f, b);
    assert_int_equal(fclose(f), 0);
    if (!ok) {
        free(buf);
        return NULL;
    }
    assert_true(n > 0 && buf[n - 1] == '\n' && !memchr(buf, '\n', n - 1));
    buf[n - 1] = '\0';
    return buf;
}

static void assert_line(const oq_batch_result *b, const char *want)
{
    char *got = line_of(b);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static oq_batch_output one_output(const char *name)
{
    oq_batch_output o = {.tol = {1e-4, 1e-5}, .passed = 1, .masked = 1, .padding_rule = OQ_PADDING_ZERO,
                         .padding_checked = 1, .num_valid = 12, .num_padded = 4, .max_abs = 3.0, .max_rel = 1e-05,
                         .mean_abs = 1e20, .rms = NAN, .rel_l2 = -INFINITY};
    snprintf(o.name, sizeof o.name, "%s", name);
    return o;
}

/* jansson's forms: "3.0", "1e-5", "1e20", metrics that are not numbers as strings, a NaN
 * median as null, a NaN first call left out, a name escaped. */
static void known_lines(void **state)
{
    (void)state;
    oq_batch_output o = one_output("out\"1");
    oq_batch_result b = {.index = 7, .timed = 1, .first_call_s = NAN, .repeat = 2, .calls = 3, .median_s = NAN,
                         .compared = 1, .passed = 1, .outputs = &o, .n_outputs = 1};
    assert_line(&b, "{\"index\": 7, \"repeat\": 2, \"warmup\": 0, \"calls\": 3, \"median_s\": null, \"outputs\": "
                    "[{\"output\": \"out\\\"1\", \"name\": \"out\\\"1\", \"passed\": true, \"tolerance\": {\"rtol\": "
                    "0.0001, \"atol\": 1e-5}, \"num_valid\": 12, \"max_abs\": 3.0, \"max_rel\": 1e-5, \"mean_abs\": "
                    "1e20, \"rms\": \"nan\", \"rel_l2\": \"-inf\", \"over_tolerance\": 0, \"nan\": 0, \"inf\": 0, "
                    "\"reference_nonfinite\": {\"nan\": 0, \"inf\": 0}, \"padding\": {\"checked\": true, \"padded\": 4, "
                    "\"nonzero\": 0, \"masked\": true, \"rule\": \"zero\", \"reference_nonzero\": 0}}], \"passed\": true}");
    o.tol = (oq_tolerance){0.10008144378662108, 0.0009765624};
    char *tight = line_of(&b);
    assert_non_null(strstr(tight, "\"tolerance\": {\"rtol\": 0.10008144378662108, \"atol\": 0.0009765624}"));
    free(tight);
    oq_batch_result cached = {.index = 0, .reference_cached = 1};
    assert_line(&cached, "{\"index\": 0, \"reference_cached\": true}");
}

static double pick(unsigned *seed)
{
    const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-5, 1e20, 123456789012.0, 0.1};
    int k = rand_r(seed) % 12;
    if (k < 9) return special[k];
    return ((double)rand_r(seed) / RAND_MAX - 0.5) * pow(10, rand_r(seed) % 60 - 30);
}

static oq_batch_result random_record(unsigned *seed, oq_batch_output *outs)
{
    const char *names[] = {"cls", "reg/x", "a\"b", "t\\ab", "new\nline", "caf\xc3\xa9", "tab\t"};
    oq_batch_result b = {.index = rand_r(seed) % 100000, .timed = rand_r(seed) % 2, .first_call_s = rand_r(seed) % 1000 * 1e-5, /* a time */
                         .repeat = rand_r(seed) % 5, .warmup = rand_r(seed) % 3, .calls = rand_r(seed) % 9,
                         .median_s = pick(seed), .reference_cached = rand_r(seed) % 2, .compared = rand_r(seed) % 2,
                         .passed = rand_r(seed) % 2, .outputs = outs, .n_outputs = (size_t)(rand_r(seed) % 3)};
    for (size_t i = 0; i < b.n_outputs; i++) {
        oq_batch_output *o = &outs[i];
        *o = one_output(names[rand_r(seed) % 7]);
        o->exact = rand_r(seed) % 2;
        o->padding_rule = rand_r(seed) % 3;
        o->over_tol = rand_r(seed) % 5;
        o->max_abs = pick(seed);
        o->max_rel = pick(seed);
        o->mean_abs = pick(seed);
        o->rms = pick(seed);
        o->rel_l2 = pick(seed);
        o->passed = rand_r(seed) % 2;
        o->tol.rtol = (double)rand_r(seed) / RAND_MAX * pow(10, -(rand_r(seed) % 12)); /* up to 17 digits */
        o->tol.atol = rand_r(seed) % 2 ? 1e-5 : (double)rand_r(seed) / RAND_MAX;
        o->has_worst = !o->passed && rand_r(seed) % 2; /* a failed output's largest error, as the worker keeps it */
        o->ndim = rand_r(seed) % 4;
        for (int d = 0; d < o->ndim; d++) o->worst.coord[d] = rand_r(seed) % 100;
        o->worst.got = pick(seed);
        o->worst.expected = pick(seed);
        o->worst.abs_diff = pick(seed);
    }
    return b;
}

/* Read back as jansson reads it and written again as summary.json's writer writes (oq_json_dumps),
 * every line is the same text: its numbers and strings are in that form; and a tolerance reads
 * back as the very double it was (10 digits wrote 0.10008144378662108 as 0.1000814438). */
static void lines_are_jansson_lines(void **state)
{
    (void)state;
    unsigned seed = 17;
    for (int it = 0; it < 20000; it++) {
        oq_batch_output outs[3];
        oq_batch_result b = random_record(&seed, outs);
        char *line = line_of(&b);
        assert_non_null(line);
        json_t *j = json_loads(line, 0, NULL);
        assert_non_null(j);
        char *again = oq_json_dumps(j, FLAGS);
        assert_string_equal(again, line);
        for (size_t i = 0; b.compared && i < b.n_outputs; i++) {
            const json_t *tol = json_object_get(json_array_get(json_object_get(j, "outputs"), i), "tolerance");
            assert_true(json_real_value(json_object_get(tol, "rtol")) == outs[i].tol.rtol);
            assert_true(json_real_value(json_object_get(tol, "atol")) == outs[i].tol.atol);
        }
        json_t *k = oq_batch_record_json(&b);
        assert_true(json_equal(j, k));
        free(again);
        free(line);
        json_decref(j);
        json_decref(k);
    }
}

static int same_metric(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b || fabs(a - b) <= 1e-9 * fabs(b);
}

typedef struct expect {
    const oq_batch_result *want;
    size_t n, seen;
} expect;

static oq_status check_back(void *ctx, const oq_batch_result *got, json_t *rec, oq_err *err)
{
    (void)err;
    expect *x = ctx;
    const oq_batch_result *w = &x->want[x->seen++];
    json_t *again = oq_batch_record_json(got); /* the record as read is the one its struct writes */
    assert_true(json_equal(rec, again));
    json_decref(again);
    assert_int_equal(got->index, w->index);
    assert_int_equal(got->reference_cached, w->reference_cached);
    assert_int_equal(got->n_outputs, w->compared ? w->n_outputs : 0);
    for (size_t i = 0; i < got->n_outputs; i++) {
        const oq_batch_output *a = &got->outputs[i], *b = &w->outputs[i];
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->padding_rule, b->padding_rule);
        assert_int_equal(a->over_tol, b->over_tol);
        assert_true(same_metric(a->max_abs, b->max_abs) && same_metric(a->rel_l2, b->rel_l2));
    }
    if (w->timed) assert_true(same_metric(got->median_s, w->median_s) || !isfinite(w->median_s));
    return OQ_OK;
}

/* Written to a records file and read back by the orchestrator's reader: the same records,
 * and each as read the same JSON as its struct written again (a reader may use either). */
static void lines_read_back(void **state)
{
    (void)state;
    char *dir = temp_dir("record");
    char path[512];
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    unsigned seed = 5;
    enum { N = 300 };
    static oq_batch_output outs[N][3];
    oq_batch_result recs[N];
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < N; i++) {
        recs[i] = random_record(&seed, outs[i]);
        assert_true(oq_batch_record_put(f, &recs[i]));
    }
    assert_int_equal(fclose(f), 0);
    expect x = {recs, N, 0};
    oq_err e = {0};
    assert_int_equal(oq_batch_records_each(path, check_back, &x, &e), OQ_OK);
    assert_int_equal(x.seen, N);
    remove_dir(dir);
}

/* A name that is not UTF-8 cannot be written: the record fails, no output is dropped from it. */
static void bad_name_fails(void **state)
{
    (void)state;
    oq_batch_output o = one_output("bad\xff");
    oq_batch_result b = {.index = 1, .compared = 1, .outputs = &o, .n_outputs = 1};
    assert_null(line_of(&b));
    assert_null(oq_batch_record_json(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_lines),
        cmocka_unit_test(lines_are_jansson_lines),
        cmocka_unit_test(lines_read_back),
        cmocka_unit_test(bad_name_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
