/* Figures, report.html and JUnit XML of real summaries (tests/fixtures): what each
 * figure draws is checked against the summary itself, point by point and bin by bin,
 * both in the figure's data and in the SVG written; each verdict (passed, failed, error,
 * untested) has its banner and never the passing colour unless it passed, a refusal is
 * explained, reported padding is told from judged, integer outputs from a real run are
 * compared exactly, and the JUnit XML is never all green unless the run passed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/compare.h"
#include "ortqual/fileio.h"
#include "ortqual/graph.h"
#include "ortqual/npz.h"
#include "ortqual/validate.h"
#include "plot/figures-impl.h"
#include "fileio/fileio-impl.h"
#include "report/report-impl.h"
#define TESTUTIL_REPORT_HTML
#include "testutil.h"

#define FIX OQ_SOURCE_DIR "/tests/fixtures/"

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) fail_msg("%s: %s", path, je.text);
    return j;
}

static oq_figures *figures_of(const json_t *doc, const char *baseline)
{
    oq_figures *f = NULL;
    oq_err err = {0};
    oq_plot_options opt = {.baseline = baseline};
    if (oq_figures_from_summary_json(doc, "fixture", &opt, &f, &err)) fail_msg("%s", err.msg);
    return f;
}

static const oq_plot_spec *figure(const oq_figures *f, const char *name)
{
    for (size_t i = 0; i < oq_figures_count(f); i++)
        if (!strcmp(oq_figures_name(f, i), name)) return oq_figures_spec(f, i);
    fail_msg("no figure %s", name);
    return NULL;
}

static int has_figure(const oq_figures *f, const char *name)
{
    for (size_t i = 0; i < oq_figures_count(f); i++)
        if (!strcmp(oq_figures_name(f, i), name)) return 1;
    return 0;
}

static const oq_plot_series *series(const oq_plot_spec *sp, const char *label)
{
    for (size_t i = 0; i < sp->nseries; i++)
        if (sp->series[i].label && !strcmp(sp->series[i].label, label)) return &sp->series[i];
    fail_msg("no series '%s' in '%s'", label, sp->title);
    return NULL;
}

static char *svg_of(const oq_plot_spec *sp)
{
    char *svg;
    size_t n;
    oq_err err = {0};
    if (oq_plot_svg(sp, &svg, &n, &err)) fail_msg("%s", err.msg);
    assert_int_equal(strlen(svg), n);
    return svg;
}

/* The points drawn for the series group labelled `label` (the n-th such group): its
 * data-points attribute, checked against the class="pt" elements it holds. */
static long drawn(const char *svg, const char *label, int nth)
{
    char head[512];
    snprintf(head, sizeof head, "<g class=\"series\" data-label=\"%s\" data-points=\"", label);
    const char *p = svg;
    for (int k = 0; k <= nth; k++) {
        p = strstr(k ? p + 1 : p, head);
        if (!p) fail_msg("no series group '%s' #%d in the SVG", label, nth);
    }
    long declared = strtol(p + strlen(head), NULL, 10), pts = 0;
    const char *q = strchr(p, '>') + 1;
    for (;;) {
        const char *open = strstr(q, "<g "), *close = strstr(q, "</g>");
        assert_non_null(close);
        if (open && open < close) {
            assert_true(!strncmp(open, "<g class=\"pt\">", 14)); /* nothing else nests in a series */
            pts++;
            q = strstr(open, "</g>") + 4;
        } else {
            break;
        }
    }
    assert_int_equal(pts, declared);
    return pts;
}

/* ---- validate figures, checked against the summary's own numbers ----------------- */

/* Non-empty |error| bins of one output of one configuration, summed over batches. */
static void expected_hist(const json_t *cfg, const char *output, int64_t *bins, double *max_ref, double *rtol,
                          double *atol)
{
    memset(bins, 0, OQ_HIST_BINS * sizeof *bins);
    *max_ref = 0;
    size_t i, j, k;
    json_t *b, *o, *c;
    json_array_foreach(json_object_get(cfg, "batches"), i, b) json_array_foreach(json_object_get(b, "outputs"), j, o) {
        if (strcmp(json_string_value(json_object_get(o, "output")), output)) continue;
        json_t *h = json_object_get(o, "error_histogram");
        int first = (int)json_integer_value(json_object_get(h, "first"));
        json_array_foreach(json_object_get(h, "counts"), k, c) bins[first + (int)k] += json_integer_value(c);
        *max_ref = fmax(*max_ref, json_number_value(json_object_get(o, "max_abs_ref")));
        *rtol = json_number_value(json_object_get(json_object_get(o, "tolerance"), "rtol"));
        *atol = json_number_value(json_object_get(json_object_get(o, "tolerance"), "atol"));
    }
}

/* Each output's name in every batch record of every configuration, renamed. */
static void rename_outputs(json_t *doc, const char *from, const char *to)
{
    size_t i, j, k;
    json_t *c, *b, *o;
    json_array_foreach(json_object_get(doc, "configs"), i, c) json_array_foreach(json_object_get(c, "batches"), j, b)
        json_array_foreach(json_object_get(b, "outputs"), k, o) if (!strcmp(oq_j_str(o, "output", ""), from))
            json_object_set_new(o, "output", json_string(to));
}

/* Outputs whose file names would be one ("a b" and "a_b"; "vs_ref_cls" beside "cls", whose
 * error_vs_ref_ figure is error_ of the other) get a figure each, under names of their own
 * (the later figure was written over the earlier: a failing output's figure replaced by a
 * passing one's, and summary.json's "plots" listed the file twice). */
static void test_figure_names_unique(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {{"a b", "a_b"}, {"cls", "vs_ref_cls"}};
    for (size_t p = 0; p < 2; p++) {
        json_t *doc = load(FIX "validate/pass.json");
        rename_outputs(doc, "cls", pairs[p][0]);
        rename_outputs(doc, "reg", pairs[p][1]);
        oq_figures *f = figures_of(doc, NULL);
        size_t n = oq_figures_count(f), titled[2] = {0, 0};
        assert_int_equal(n, 5); /* error_ and error_vs_ref_ of each output, and the latency */
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < i; j++) assert_string_not_equal(oq_figures_name(f, i), oq_figures_name(f, j));
            for (size_t k = 0; k < 2; k++) {
                char quoted[64];
                snprintf(quoted, sizeof quoted, "'%s'", pairs[p][k]);
                titled[k] += strstr(oq_figures_spec(f, i)->title, quoted) != NULL;
            }
        }
        assert_int_equal(titled[0], 2);
        assert_int_equal(titled[1], 2);
        /* what each shows is recorded as it is made, never read back from the name:
         * error_vs_ref_cls is the distribution of "vs_ref_cls" here, not "cls" against |ref| */
        int shown[2][2] = {{0, 0}, {0, 0}};
        for (size_t i = 0; i < n; i++) {
            oq_figure_kind kind = oq_figures_kind(f, i);
            const char *out = oq_figures_output(f, i);
            if (kind == OQ_FIGURE_RUNTIME_VALID_SIZE) {
                assert_null(out);
                continue;
            }
            assert_true(kind == OQ_FIGURE_ERROR || kind == OQ_FIGURE_ERROR_VS_REF);
            assert_non_null(out);
            size_t k = strcmp(out, pairs[p][0]) != 0;
            assert_string_equal(out, pairs[p][k]); /* as the summary names it, not file-safe */
            shown[k][kind == OQ_FIGURE_ERROR_VS_REF]++;
            assert_true(strstr(oq_figures_spec(f, i)->title, out) != NULL);
        }
        for (size_t k = 0; k < 2; k++) {
            assert_int_equal(shown[k][0], 1);
            assert_int_equal(shown[k][1], 1);
        }
        if (p == 1) {
            assert_int_equal(oq_figures_kind(f, 0), OQ_FIGURE_ERROR);
            assert_string_equal(oq_figures_output(f, 0), "cls");
            assert_true(has_figure(f, "error_vs_ref_cls"));
        }
        assert_int_equal(oq_figures_kind(f, n), OQ_FIGURE_UNKNOWN);
        assert_null(oq_figures_output(f, n));
        if (p == 0) {
            assert_true(has_figure(f, "error_a_b") && has_figure(f, "error_a_b_2"));
            assert_true(has_figure(f, "error_vs_ref_a_b") && has_figure(f, "error_vs_ref_a_b_2"));
        }
        oq_figures_free(f);
        json_decref(doc);
    }
}

static void test_validate_error_figure(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/pass.json");
    oq_figures *f = figures_of(doc, NULL);
    assert_int_equal(oq_figures_count(f), 5);
    assert_false(has_figure(f, "placement")); /* CPU only: nothing recorded */
    const oq_plot_spec *sp = figure(f, "error_cls");
    assert_int_equal(sp->kind, OQ_PLOT_BINNED);
    assert_int_equal(sp->npanels, 2); /* every configuration but the reference */
    char *svg = svg_of(sp);
    for (size_t c = 1; c < 3; c++) {
        const json_t *cfg = json_array_get(json_object_get(doc, "configs"), c);
        const char *name = json_string_value(json_object_get(cfg, "name"));
        int64_t bins[OQ_HIST_BINS];
        double max_ref = 0, rtol = NAN, atol = NAN;
        expected_hist(cfg, "cls", bins, &max_ref, &rtol, &atol);
        long nonempty = 0;
        for (int k = 0; k < OQ_HIST_BINS; k++) nonempty += bins[k] > 0;
        const oq_plot_series *s = series(sp, name);
        long bars = 0;
        for (size_t k = 0; k < s->n; k++) {
            int bin = oq_hist_bin(s->x[k] * 1.0000001); /* the bar's lower edge */
            assert_true(s->y[k] == (double)bins[bin]);
            bars += s->y[k] > 0;
        }
        assert_int_equal(bars, nonempty);
        assert_int_equal(drawn(svg, name, 0), nonempty);
        assert_true(s->has_band && s->band_lo == atol && fabs(s->band_hi - (atol + rtol * max_ref)) < 1e-15);
        assert_false(s->failed);
        assert_non_null(strstr(s->note, "PASSED"));
    }
    free(svg);
    oq_figures_free(f);
    json_decref(doc);
}

static void test_validate_runtime_figure(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/pass.json");
    oq_figures *f = figures_of(doc, NULL);
    const oq_plot_spec *sp = figure(f, "runtime_valid_size");
    assert_int_equal(sp->nseries, 3); /* every configuration, the reference included */
    char *svg = svg_of(sp);
    size_t i, k;
    json_t *cfg, *b;
    json_array_foreach(json_object_get(doc, "configs"), i, cfg) {
        const char *name = json_string_value(json_object_get(cfg, "name"));
        const oq_plot_series *s = series(sp, name);
        size_t nb = json_array_size(json_object_get(cfg, "batches"));
        assert_int_equal(s->n, nb);
        assert_int_equal(drawn(svg, name, 0), (long)nb);
        json_array_foreach(json_object_get(cfg, "batches"), k, b) {
            /* a batch without repeated calls (the reference, by default) shows its one call */
            const char *key = json_is_number(json_object_get(b, "median_s")) ? "median_s" : "first_call_s";
            double ms = json_number_value(json_object_get(b, key)) * 1e3;
            int found = 0;
            for (size_t j = 0; j < s->n; j++) found |= fabs(s->y[j] - ms) < 1e-9;
            assert_true(found);
        }
    }
    free(svg);
    oq_figures_free(f);
    json_decref(doc);
}

/* A summary whose configurations ran on two ONNX Runtime builds (a merged campaign's shards on
 * other libraries, replay's --reference-ort-lib): the latency figure names each series' build,
 * by version and the library's short SHA-256 (its path where it has none); the C reference,
 * which ran on none, and every series of a run on one build keep their names. */
static void test_runtime_figure_builds(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/pass.json");
    json_t *builds = json_pack("[{s:s, s:s, s:s, s:[s]}, {s:s, s:s, s:n, s:[s]}]", "version", "1.29.0", "library",
                               "/a/libonnxruntime.so", "library_sha256",
                               "5715f06d9a3b0000000000000000000000000000000000000000000000000000", "configs",
                               "cpu:decomposed:fp32", "version", "1.30.0", "library", "/b/libonnxruntime.so.1",
                               "library_sha256", "configs", "cpu:attention24:fp16");
    json_object_set_new(json_object_get(doc, "evidence"), "onnxruntime_builds", builds);
    oq_figures *f = figures_of(doc, NULL);
    const oq_plot_spec *sp = figure(f, "runtime_valid_size");
    assert_int_equal(sp->nseries, 3);
    series(sp, "ref:encoder:fp64");
    series(sp, "cpu:decomposed:fp32 (ORT 1.29.0, SHA-256 5715f06d9a3b)");
    series(sp, "cpu:attention24:fp16 (ORT 1.30.0, /b/libonnxruntime.so.1)");
    char *svg = svg_of(sp);
    assert_non_null(strstr(svg, "cpu:decomposed:fp32 (ORT 1.29.0, SHA-256 5715f06d9a3b)"));
    free(svg);
    oq_figures_free(f);
    /* one build: the names alone */
    json_array_remove(builds, 1);
    json_array_append_new(json_object_get(json_array_get(builds, 0), "configs"), json_string("cpu:attention24:fp16"));
    f = figures_of(doc, NULL);
    sp = figure(f, "runtime_valid_size");
    series(sp, "cpu:decomposed:fp32");
    series(sp, "cpu:attention24:fp16");
    oq_figures_free(f);
    json_decref(doc);
}

static void test_validate_failed_figures(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/fail.json");
    oq_figures *f = figures_of(doc, NULL);
    const oq_plot_spec *sp = figure(f, "error_cls");
    const oq_plot_series *s = series(sp, "cpu:model:fp32");
    assert_true(s->failed);
    assert_non_null(strstr(s->note, "FAILED"));
    char *svg = svg_of(sp);
    assert_non_null(strstr(svg, "fill=\"#c62828\">cpu:model:fp32")); /* the panel label in red */
    free(svg);
    /* error against |reference|: ringed bins are exactly those holding elements over tolerance */
    sp = figure(f, "error_vs_ref_cls");
    const json_t *cfg = json_array_get(json_object_get(doc, "configs"), 1);
    int64_t over[OQ_HIST_BINS] = {0};
    size_t i, j, k;
    json_t *b, *o, *x;
    json_array_foreach(json_object_get(cfg, "batches"), i, b) json_array_foreach(json_object_get(b, "outputs"), j, o) {
        if (strcmp(json_string_value(json_object_get(o, "output")), "cls")) continue;
        json_t *m = json_object_get(o, "error_by_magnitude");
        int first = (int)json_integer_value(json_object_get(m, "first"));
        json_array_foreach(json_object_get(m, "over_tolerance"), k, x) over[first + (int)k] += json_integer_value(x);
    }
    long ringed = 0;
    for (int q = 0; q < OQ_HIST_BINS; q++) ringed += over[q] > 0;
    assert_true(ringed > 0);
    svg = svg_of(sp);
    assert_int_equal(drawn(svg, "over tolerance", 0), ringed);
    free(svg);
    oq_figures_free(f);
    json_decref(doc);
}

/* A GPU run with placement and dispatch recorded (H200 evidence, older: no histograms). */
static void test_placement_figure(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/h200-placement.json");
    oq_figures *f = figures_of(doc, NULL);
    assert_false(has_figure(f, "error_cls")); /* no histograms in this summary: not drawn */
    const oq_plot_spec *sp = figure(f, "placement");
    assert_int_equal(sp->kind, OQ_PLOT_HBARS);
    assert_int_equal(sp->ncategories, 1);
    assert_string_equal(sp->categories[0], "cuda:attention24:fp16");
    assert_true(series(sp, "on the device EP")->y[0] == 64);
    assert_true(series(sp, "compute on CPU")->y[0] == 0);
    /* a routing line per node and Run (42 here): counted once per node */
    assert_non_null(strstr(sp->category_notes[0], "kernels: FLASH_ATTENTION on 2 nodes"));
    char *svg = svg_of(sp);
    assert_int_equal(drawn(svg, "on the device EP", 0), 1);
    assert_int_equal(drawn(svg, "compute on CPU", 0), 0);
    free(svg);
    oq_figures_free(f);
    json_decref(doc);
}

/* ---- bench figures from the summary.json `ortqual bench` writes -------------------- */

/* bench --model rows of a model with no length dimension, swept over batch: seq_len is 0 ("0
 * when none", bench.md), and the rows are drawn against their batch, in one group (plot refused
 * the summary bench had written, "column 'seq_len': 0 is not a positive size", and its
 * report.html said No figures with that error). */
static void test_bench_model_batch_sweep(void **state)
{
    (void)state;
    json_t *rows = json_array();
    for (int b = 1; b <= 4; b *= 2)
        json_array_append_new(rows, json_pack("{s:s, s:s, s:b, s:i, s:i, s:n, s:n, s:f, s:f, s:n, s:n, s:s, s:s}", "variant",
                                              "cpu:model:fp32", "status", "ok", "masked", 0, "batch", b, "seq_len", 0,
                                              "heads", "head_dim", "p50_ms", 0.5 * b, "peak_rss_mb", 30.0,
                                              "peak_gpu_mb", "max_abs_err", "dims", b == 1 ? "batch=1" : b == 2 ? "batch=2" : "batch=4",
                                              "seq_dim", ""));
    json_t *doc = json_pack("{s:s, s:s, s:o}", "tool", "ortqual bench", "mode", "model", "results", rows);
    oq_figures *f = figures_of(doc, NULL);
    const oq_plot_spec *sp = figure(f, "runtime");
    assert_string_equal(sp->xlabel, "batch size (dimension 'batch')");
    assert_string_equal(sp->subtitle, "unmasked");
    const oq_plot_series *s = series(sp, "cpu:model:fp32");
    assert_int_equal(s->n, 3);
    for (size_t k = 0; k < 3; k++) {
        assert_true(s->x[k] == (double)(1 << k));
        assert_true(s->y[k] == 0.5 * (double)(1 << k));
    }
    assert_false(has_figure(f, "runtime_b1"));
    oq_figures_free(f);
    /* an attention sweep's row of length 0 stays malformed */
    json_t *r0 = json_array_get(rows, 0);
    json_object_set_new(r0, "heads", json_integer(8));
    json_object_set_new(r0, "head_dim", json_integer(64));
    oq_figures *g = NULL;
    oq_err err = {0};
    assert_int_equal(oq_figures_from_summary_json(doc, "fixture", NULL, &g, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "column 'seq_len': 0 is not a positive size"));
    json_decref(doc);
}

/* A bench --model record of one point: dims as summary.csv writes them ("seq=16;batch=2"). */
static json_t *model_record(const char *dims, long long batch, long long seq_len, const char *seq_dim, double ms)
{
    return json_pack("{s:s, s:s, s:b, s:I, s:I, s:n, s:n, s:f, s:f, s:n, s:n, s:s, s:s}", "variant", "cpu:model:fp32",
                     "status", "ok", "masked", 0, "batch", (json_int_t)batch, "seq_len", (json_int_t)seq_len, "heads",
                     "head_dim", "p50_ms", ms, "peak_rss_mb", 30.0, "peak_gpu_mb", "max_abs_err", "dims", dims,
                     "seq_dim", seq_dim);
}

static oq_figures *model_figures(json_t *rows)
{
    json_t *doc = json_pack("{s:s, s:s, s:o}", "tool", "ortqual bench", "mode", "model", "results", rows);
    oq_figures *f = figures_of(doc, NULL);
    json_decref(doc);
    return f;
}

/* The figure's one series has the points (x[k], 0.1 x[k]). */
static void expect_line(const oq_plot_spec *sp, size_t n, const double *x)
{
    const oq_plot_series *s = series(sp, "cpu:model:fp32");
    assert_int_equal(s->n, n);
    for (size_t k = 0; k < n; k++) assert_true(s->x[k] == x[k] && s->y[k] == 0.1 * x[k]);
}

/* bench --model --dim seq=16 --sweep batch=1,2,4: seq_len is the fixed 16 on every row (seq_dim
 * "seq"), yet the batch is what varied: one figure against it (it was a single-point figure per
 * batch, drawn at seq 16). */
static void test_bench_model_fixed_seq_batch_sweep(void **state)
{
    (void)state;
    json_t *rows = json_array();
    char dims[64];
    for (int b = 1; b <= 4; b *= 2) {
        snprintf(dims, sizeof dims, "seq=16;batch=%d", b);
        json_array_append_new(rows, model_record(dims, b, 16, "seq", 0.1 * b));
    }
    oq_figures *f = model_figures(rows);
    const oq_plot_spec *sp = figure(f, "runtime");
    assert_string_equal(sp->xlabel, "batch size (dimension 'batch')");
    assert_string_equal(sp->subtitle, "seq 16, unmasked");
    expect_line(sp, 3, (const double[]){1, 2, 4});
    assert_false(has_figure(f, "runtime_b1"));
    oq_figures_free(f);
    /* a dims item that is no NAME=SIZE is named, not guessed at */
    json_t *doc = json_pack("{s:s, s:[o]}", "mode", "model", "results", model_record("seq=16;batch", 1, 16, "seq", 1));
    oq_err err = {0};
    assert_int_equal(oq_figures_from_summary_json(doc, "fixture", NULL, &f, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "column 'dims': 'batch' is not NAME=SIZE"));
    json_decref(doc);
}

/* --sweep batch=1,2 --sweep seq=8,16: against seq, a figure per batch that says which; and a
 * dimension of another name (--shape x=2,n,8 --sweep n=8,16, the model's seq following n). */
static void test_bench_model_two_dims(void **state)
{
    (void)state;
    json_t *rows = json_array();
    char dims[64];
    for (int b = 1; b <= 2; b++)
        for (int L = 8; L <= 16; L *= 2) {
            snprintf(dims, sizeof dims, "batch=%d;seq=%d", b, L);
            json_array_append_new(rows, model_record(dims, b, L, "seq", 0.1 * L));
        }
    oq_figures *f = model_figures(rows);
    for (int b = 1; b <= 2; b++) {
        char name[32], sub[64];
        snprintf(name, sizeof name, "runtime_b%d", b);
        snprintf(sub, sizeof sub, "batch %d, unmasked", b);
        const oq_plot_spec *sp = figure(f, name);
        assert_string_equal(sp->xlabel, "dimension 'seq'");
        assert_string_equal(sp->subtitle, sub);
        expect_line(sp, 2, (const double[]){8, 16});
    }
    assert_false(has_figure(f, "runtime"));
    oq_figures_free(f);
    rows = json_array();
    for (int n = 8; n <= 16; n *= 2) {
        snprintf(dims, sizeof dims, "n=%d;batch=2;seq=%d", n, n);
        json_array_append_new(rows, model_record(dims, 2, n, "n", 0.1 * n));
    }
    f = model_figures(rows);
    const oq_plot_spec *sp = figure(f, "runtime");
    assert_string_equal(sp->xlabel, "dimension 'n'");
    assert_string_equal(sp->subtitle, "batch 2, unmasked");
    expect_line(sp, 2, (const double[]){8, 16});
    oq_figures_free(f);
}

static void test_bench_summary_figures(void **state)
{
    (void)state;
    json_t *doc = load(FIX "bench/sweep.json");
    oq_figures *f = figures_of(doc, "ref"); /* the help's example: a runtime naming one variant */
    const oq_plot_spec *sp = figure(f, "speedup_b1_masked");
    assert_string_equal(sp->title, "Speed-up over ref:sdpa:fp64 (median time)");
    for (size_t i = 0; i < oq_figures_count(f); i++) {
        const oq_plot_spec *s = oq_figures_spec(f, i);
        for (size_t k = 0; k < s->nseries; k++) assert_null(strstr(s->series[k].label, "shapes)"));
    }
    /* runtime, memory: one point per row of the group (batch 1, masked), for every variant */
    static const char *const variants[] = {"ref:sdpa:fp64", "cpu:decomposed:fp32", "cpu:attention24:fp32"};
    for (int fig = 0; fig < 2; fig++) {
        sp = figure(f, fig ? "memory_b1_masked" : "runtime_b1_masked");
        char *text = svg_of(sp);
        for (size_t v = 0; v < 3; v++) {
            size_t i;
            json_t *r;
            long rows = 0;
            json_array_foreach(json_object_get(doc, "results"), i, r)
                rows += !strcmp(json_string_value(json_object_get(r, "variant")), variants[v]) &&
                        json_integer_value(json_object_get(r, "batch")) == 1 && json_is_true(json_object_get(r, "masked"));
            assert_true(rows > 0);
            assert_int_equal(series(sp, variants[v])->n, rows);
            assert_int_equal(drawn(text, variants[v], 0), rows);
        }
        free(text);
    }
    /* error_vs_runtime: colour by variant, marker by batch size and mask; one point per row */
    sp = figure(f, "error_vs_runtime");
    char *svg = svg_of(sp);
    size_t i;
    json_t *r;
    long rows = 0;
    json_array_foreach(json_object_get(doc, "results"), i, r) {
        if (strcmp(json_string_value(json_object_get(r, "variant")), "cpu:decomposed:fp32") ||
            json_integer_value(json_object_get(r, "batch")) != 2 || !json_is_true(json_object_get(r, "masked")))
            continue;
        rows++;
    }
    const char *label = "cpu:decomposed:fp32, batch 2, masked";
    assert_int_equal(series(sp, label)->n, rows);
    assert_int_equal(drawn(svg, label, 0), rows);
    assert_true(series(sp, label)->marker != series(sp, "cpu:decomposed:fp32, batch 1, masked")->marker);
    assert_null(strstr(svg, "data-label=\"ref:sdpa:fp64")); /* the reference has no error to draw */
    assert_non_null(strstr(svg, ">batch 2, unmasked</text>"));              /* marker legend */
    free(svg);
    oq_figures_free(f);
    oq_plot_options bad = {.baseline = "cpu"};
    oq_err err = {0};
    /* the public entry point takes the file's text */
    unsigned char *text;
    size_t n;
    assert_int_equal(oq_read_file(FIX "bench/sweep.json", &text, &n, &err), OQ_OK);
    assert_int_equal(oq_figures_from_summary((const char *)text, n, "sweep.json", &bad, &f, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "baseline 'cpu' names several series"));
    assert_int_equal(oq_figures_from_summary((const char *)text, n / 2, "sweep.json", NULL, &f, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "sweep.json:"));
    assert_non_null(strstr(err.msg, "not valid JSON"));
    free(text);
    json_decref(doc);
}

/* ---- report.html ------------------------------------------------------------------ */

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
    return n;
}

static void test_report_html(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/pass.json");
    char *html = html_of(doc);
    assert_non_null(strstr(html, "data-verdict=\"passed\""));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "configs"), i, c) {
        char want[256];
        snprintf(want, sizeof want, "data-config=\"%s\"", json_string_value(json_object_get(c, "name")));
        assert_int_equal(count(html, want), 1);
    }
    assert_int_equal(count(html, "<svg "), 5);
    assert_null(strstr(html, "<script"));
    assert_non_null(strstr(html, "Content-Security-Policy"));
    assert_non_null(strstr(html, "ortqual validate --outdir run")); /* the exact command line */
    free(html);
    json_decref(doc);

    doc = load(FIX "validate/fail.json");
    html = html_of(doc);
    assert_non_null(strstr(html, "<header class=\"verdict failed\" id=\"verdict\" data-verdict=\"failed\">"));
    assert_non_null(strstr(html, "FAILED \xe2\x80\x93 cpu:model:fp32"));
    assert_non_null(strstr(html, "<tr class=\"config failed\" data-config=\"cpu:model:fp32\">"));
    free(html);
    json_decref(doc);
}

/* The EP devices table: each configuration's own (its worker's evidence), configurations whose
 * devices read the same in one group under a row naming them; it was the first worker's alone,
 * a shard on ONNX Runtime 1.30 shown with 1.29's CPU provider. */
static void test_report_devices_per_config(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/pass.json");
    char *html = html_of(doc);
    const char *one = "<tr class=\"device-group\"><th colspan=\"6\">cpu:decomposed:fp32, cpu:attention24:fp16</th></tr>\n"
                      "<tr><td>CPUExecutionProvider</td><td>Microsoft</td><td>1.29.0</td><td>cpu</td>";
    assert_non_null(strstr(html, one));
    assert_int_equal(count(html, "class=\"device-group\""), 1);
    free(html);
    json_t *c = json_array_get(json_object_get(doc, "configs"), 2), *dev;
    assert_string_equal(json_string_value(json_object_get(c, "name")), "cpu:attention24:fp16");
    dev = json_array_get(json_object_get(json_object_get(json_object_get(c, "evidence"), "ort"), "ep_devices"), 0);
    json_object_set_new(json_object_get(dev, "ep_metadata"), "version", json_string("1.30.0"));
    html = html_of(doc);
    assert_int_equal(count(html, "class=\"device-group\""), 2);
    assert_non_null(strstr(html, "<tr class=\"device-group\"><th colspan=\"6\">cpu:decomposed:fp32</th></tr>\n"
                                 "<tr><td>CPUExecutionProvider</td><td>Microsoft</td><td>1.29.0</td>"));
    assert_non_null(strstr(html, "<tr class=\"device-group\"><th colspan=\"6\">cpu:attention24:fp16</th></tr>\n"
                                 "<tr><td>CPUExecutionProvider</td><td>Microsoft</td><td>1.30.0</td>"));
    free(html);
    /* an ONNX Runtime whose C API has no EP devices says why, in its own group */
    json_object_set_new(json_object_get(json_object_get(c, "evidence"), "ort"), "ep_devices", json_null());
    json_object_set_new(json_object_get(json_object_get(c, "evidence"), "ort"), "ep_devices_unavailable",
                        json_string("EP devices need ORT C API 22"));
    html = html_of(doc);
    assert_non_null(strstr(html, "<tr class=\"device-group\"><th colspan=\"6\">cpu:attention24:fp16</th></tr>\n"
                                 "<tr><td colspan=\"6\" class=\"muted\">not available: EP devices need ORT C API 22</td>"));
    free(html);
    json_decref(doc);
}

/* A group's shared cache: the other members who wrote the reference's entries, and each one's
 * spot check, are on the page as in the text output (summary.json's cache_writers). */
static void test_report_cache_writers(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/pass.json");
    json_object_set_new(doc, "reference_cache", json_pack("{s:b, s:s}", "shared", 1, "group", "qual"));
    json_t *ref = json_array_get(json_object_get(doc, "configs"), 0);
    json_object_set_new(ref, "cache_writers",
                        json_pack("[{s:s, s:i, s:i, s:{s:i, s:s, s:s}}]", "user", "bob<b>", "uid", 1001, "entries", 3,
                                  "spot_check", "batch", 2, "result", "identical", "seed", "00000000000000ff"));
    char *html = html_of(doc);
    assert_non_null(strstr(html, ", a cache shared by group qual, 3 written by other members: bob&lt;b&gt; (3)"));
    assert_non_null(strstr(html, "; spot check of bob&lt;b&gt;'s entries: batch 2 recomputed: identical"));
    free(html);
    json_decref(doc);
}

/* The public entry points take the file's text and give what the parsed document gives. */
static void test_report_text_api(void **state)
{
    (void)state;
    unsigned char *text;
    size_t n, hn, xn;
    char *html, *xml;
    oq_err err = {0};
    assert_int_equal(oq_read_file(FIX "validate/fail.json", &text, &n, &err), OQ_OK);
    json_t *doc = load(FIX "validate/fail.json");
    char *want = html_of(doc);
    assert_int_equal(oq_report_html((const char *)text, n, "fixture", &html, &hn, &err), OQ_OK);
    assert_string_equal(html, want);
    assert_int_equal(oq_junit_xml((const char *)text, n, "fail.json", &xml, &xn, &err), OQ_OK);
    assert_non_null(strstr(xml, "<testsuite name=\"cpu:model:fp32\""));
    free(xml);
    free(html);
    free(want);
    assert_int_equal(oq_report_html((const char *)text, n - 10, "fail.json", &html, &hn, &err), OQ_ERR_FORMAT);
    assert_null(html);
    assert_non_null(strstr(err.msg, "fail.json:"));
    assert_non_null(strstr(err.msg, "not valid JSON"));
    free(text);
    json_decref(doc);
}

/* A failed kernel expectation says how many failures ran MATH (the fallback it guards against),
 * and so does a --prove-teeth rerun; without the count (older summaries) nothing is claimed. */
/* The configuration of `doc` with a dispatch record (the last). */
static json_t *dispatch_config(json_t *doc)
{
    json_t *cfg = NULL, *c;
    size_t i;
    json_array_foreach(json_object_get(doc, "configs"), i, c) if (json_object_get(c, "dispatch")) cfg = c;
    assert_non_null(cfg);
    return cfg;
}

static void test_report_math_failures(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/h200-placement.json");
    json_t *cfg = dispatch_config(doc);
    json_t *d = json_object_get(cfg, "dispatch");
    json_object_set_new(d, "passed", json_false());
    json_object_set_new(d, "failures", json_pack("[s, s]", "blocks.0.attn: got MATH, expected FLASH_ATTENTION",
                                                 "blocks.1.attn: no routing line"));
    char *html = html_of(doc);
    assert_null(strstr(html, "class=\"math-failures\""));
    free(html);
    json_object_set_new(d, "math_failures", json_integer(1));
    json_object_set_new(cfg, "teeth", json_pack("{s:b, s:s, s:{s:[s], s:i}}", "proved", 1, "verdict",
                                                "the check failed with MATH forced, as it must", "rerun_dispatch",
                                                "failures", "blocks.0.attn: got MATH", "math_failures", 1));
    html = html_of(doc);
    assert_non_null(strstr(html, "<span class=\"math-failures\">(1 of 2 failures on nodes that ran MATH)</span>"));
    assert_non_null(strstr(html, "as it must <span class=\"math-failures\">(1 of 1 failure on nodes that ran MATH)"));
    free(html);
    json_decref(doc);
}

/* A summary's dispatch records count their routing lines (one record per node and kernel since
 * 2026-12-04): the page shows each route's lines as the count, not as one line per record. */
static void test_report_counted_routes(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/h200-placement.json");
    json_t *cfg = dispatch_config(doc);
    json_object_set_new(json_object_get(cfg, "dispatch"), "records",
                        json_pack("[{s:s, s:s, s:s, s:s, s:i, s:i}, {s:s, s:s, s:s, s:s, s:i, s:i}]", "node",
                                  "blocks.0.attn", "op", "Attention", "dtype", "fp16", "kernel", "FLASH_ATTENTION",
                                  "line", 3, "count", 21000, "node", "blocks.1.attn", "op", "Attention", "dtype",
                                  "fp16", "kernel", "FLASH_ATTENTION", "line", 4, "count", 21000));
    char *html = html_of(doc);
    assert_non_null(strstr(html, "<td>blocks.1.attn</td><td>Attention</td><td>fp16</td><td>FLASH_ATTENTION</td>"
                                 "<td class=\"n\">21000</td>"));
    free(html);
    json_decref(doc);
}

/* Names from models and files are text, never markup: in the page, the figures and the XML. */
static void test_hostile_names(void **state)
{
    (void)state;
    static const char evil[] = "<script>alert(\"x\")</script>'";
    static const char evil_esc[] = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;";
    json_t *doc = load(FIX "validate/fail.json");
    json_t *cfg = json_array_get(json_object_get(doc, "configs"), 1);
    json_object_set_new(cfg, "name", json_string(evil));
    json_object_set_new(cfg, "model_file", json_string("/tmp/\"><img src=x onerror=alert(1)>.onnx"));
    size_t i, j;
    json_t *b, *o;
    json_array_foreach(json_object_get(cfg, "batches"), i, b) json_array_foreach(json_object_get(b, "outputs"), j, o)
        json_object_set_new(o, "output", json_string("<b>out</b>&amp;"));
    char *html = html_of(doc);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<img"));
    assert_null(strstr(html, "<b>out"));
    assert_non_null(strstr(html, evil_esc));
    assert_non_null(strstr(html, "&lt;b&gt;out&lt;/b&gt;&amp;amp;"));
    free(html);
    char *xml;
    size_t n;
    oq_err err = {0};
    assert_int_equal(oq_junit_xml_json(doc, "fixture", &xml, &n, &err), OQ_OK);
    assert_null(strstr(xml, "<script"));
    assert_non_null(strstr(xml, evil_esc));
    free(xml);
    json_decref(doc);
}

static void test_report_dir_errors(void **state)
{
    (void)state;
    oq_err err = {0};
    char *dir = temp_dir("report");
    assert_int_equal(oq_report_write_dir(dir, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "summary.json: cannot open"));
    assert_non_null(strstr(err.msg, "(not a run directory?)"));
    char path[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    FILE *fp = fopen(path, "w");
    fputs("{\"schema\": ", fp);
    fclose(fp);
    assert_int_equal(oq_report_write_dir(dir, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    fp = fopen(path, "w");
    fputs("{\"what\": 1}", fp);
    fclose(fp);
    assert_int_equal(oq_report_write_dir(dir, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "not a summary with a report"));
    assert_int_equal(dir_entries(dir), 1); /* nothing half-written beside it */
    remove_dir(dir);
}


/* ---- the verdicts of docs/verdicts.md, as the page and the XML show them ------------- */

static char *xml_of(const json_t *doc)
{
    char *xml;
    size_t n;
    oq_err err = {0};
    if (oq_junit_xml_json(doc, "fixture", &xml, &n, &err)) fail_msg("%s", err.msg);
    return xml;
}

/* The text between `open` (found in `html`) and the next `close`, for a look at one element.
 * Not inlined: GCC -O3 then takes the pointers into the page for dangling ones (a false alarm). */
__attribute__((noinline)) static char *between(const char *html, const char *open, const char *close)
{
    const char *p = strstr(html, open);
    if (!p) fail_msg("no '%s' in the page", open);
    p += strlen(open);
    const char *q = strstr(p, close);
    assert_non_null(q);
    return strndup(p, (size_t)(q - p));
}

/* Each verdict has its banner, class and word; only PASSED is green, and a verdict this
 * version does not know (or none) is never shown as a pass. */
static void test_report_verdicts(void **state)
{
    (void)state;
    static const struct {
        const char *file, *verdict, *h1, *counts;
    } runs[] = {
        {"validate/pass.json", "passed", "ortqual validate: PASSED</h1>", "2 under test: 2 passed, 0 failed"},
        {"validate/fail.json", "failed", "ortqual validate: FAILED \xe2\x80\x93 cpu:model:fp32</h1>", "1 under test: 0 passed, 1 failed"},
        {"validate/error.json", "error", "ortqual validate: ERROR \xe2\x80\x93 cpu:model:fp32</h1>",
         "reference expected (the saved outputs) \xc2\xb7 1 under test: 0 passed, 0 failed, 0 skipped, 1 runtime error, 0 not run"},
        {"validate/untested.json", "untested", "ortqual validate: NOT TESTED</h1>",
         "reference expected (the saved outputs) \xc2\xb7 0 under test: 0 passed"},
    };
    for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
        char path[512], want[256];
        snprintf(path, sizeof path, FIX "%s", runs[r].file);
        json_t *doc = load(path);
        char *html = html_of(doc);
        snprintf(want, sizeof want, "<header class=\"verdict %s\" id=\"verdict\" data-verdict=\"%s\">", runs[r].verdict,
                 runs[r].verdict);
        if (!strstr(html, want)) fail_msg("%s: no '%s'", runs[r].file, want);
        assert_non_null(strstr(html, runs[r].h1));
        assert_non_null(strstr(html, runs[r].counts));
        if (strcmp(runs[r].verdict, "passed")) {
            assert_null(strstr(html, "class=\"verdict passed\""));
            assert_null(strstr(html, "<title>PASSED"));
        }
        const char *reason = json_string_value(json_object_get(doc, "verdict_reason"));
        if (reason) { /* why, under the headline (escaped as text) */
            char *shown = between(html, "<p id=\"verdict-reason\">", "</p>");
            oq_sb esc = {0};
            oq_sb_esc(&esc, reason);
            size_t n;
            char *e = oq_sb_take(&esc, &n);
            assert_non_null(strstr(shown, e));
            free(e);
            free(shown);
        }
        free(html);
        json_decref(doc);
    }
    /* a run stopped by a signal: INTERRUPTED, as the tool printed and summary.json says (the page
     * said FAILED, data-verdict "failed": a verdict it did not know) */
    json_t *doc = load(FIX "validate/fail.json");
    json_object_set_new(doc, "verdict", json_string("interrupted"));
    json_object_set_new(doc, "verdict_reason", json_string("interrupted by SIGINT while cpu:model:fp32 ran (1 of 2 batches done)"));
    char *html = html_of(doc);
    assert_non_null(strstr(html, "<header class=\"verdict interrupted\" id=\"verdict\" data-verdict=\"interrupted\">"));
    assert_non_null(strstr(html, "<title>INTERRUPTED: "));
    assert_non_null(strstr(html, "ortqual validate: INTERRUPTED</h1>"));
    assert_non_null(strstr(html, "header.verdict.interrupted{background:var(--bad)}"));
    assert_non_null(strstr(html, "<p id=\"verdict-reason\">interrupted by SIGINT while cpu:model:fp32 ran"));
    free(html);
    json_decref(doc);
    /* green is the passed banner's alone: no other verdict's rule uses the passing colour */
    doc = load(FIX "validate/untested.json");
    html = html_of(doc);
    assert_non_null(strstr(html, "header.verdict.untested{background:var(--skip)}"));
    assert_non_null(strstr(html, "header.verdict.error{background:var(--err)}"));
    assert_int_equal(count(html, "{background:var(--ok)}"), 1);
    assert_non_null(strstr(html, "header.verdict.passed{background:var(--ok)}"));
    assert_non_null(strstr(html, "only the reference ran: no configuration under test was compared"));
    assert_non_null(strstr(html, "(opts.allow_skip accepts that)"));
    /* the reference "passed" (it was read): shown as the reference, not as a green pass */
    assert_non_null(strstr(html, "<td class=\"status reference\">reference</td>"));
    assert_null(strstr(html, "class=\"status passed\""));
    free(html);
    /* accepted with --allow-skip (exit 0): still NOT TESTED, and said so */
    json_object_set_new(doc, "exit_status", json_integer(0));
    html = html_of(doc);
    assert_non_null(strstr(html, "data-verdict=\"untested\""));
    assert_non_null(strstr(html, "(accepted by opts.allow_skip)"));
    free(html);
    /* a word this version does not know, or none at all: never green */
    json_object_set_new(doc, "verdict", json_string("fine"));
    html = html_of(doc);
    assert_non_null(strstr(html, "data-verdict=\"failed\""));
    free(html);
    json_object_del(doc, "verdict");
    html = html_of(doc);
    assert_non_null(strstr(html, "data-verdict=\"failed\""));
    free(html);
    json_decref(doc);
}

/* ORT refused the model: the configuration is an error, explained (node, inputs, why, fix)
 * with ORT's message folded; nothing was compared or timed, so there is no figure. */
static void test_report_refusal(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/error.json");
    char *html = html_of(doc);
    assert_non_null(strstr(html, "<tr class=\"config error\" data-config=\"cpu:model:fp32\">"));
    assert_non_null(strstr(html, "<td class=\"status error\">error</td>"));
    assert_non_null(strstr(html, "<details id=\"cfg-1\" class=\"config error\" open data-status=\"error\">"));
    char *box = between(html, "<div class=\"refusal\" data-pattern=\"attn-mask-query-broadcast\">", "</div>");
    assert_non_null(strstr(box, "at node &#39;node_scaled_dot_product_attention&#39; (Attention)"));
    assert_non_null(strstr(box, "<span class=\"label\">inputs:</span> Q &#39;view_8&#39; float32 [batch,4,seq,8]"));
    assert_non_null(strstr(box, "<span class=\"label\">why:</span> the ONNX Attention operator"));
    assert_non_null(strstr(box, "<span class=\"label\">fix:</span> expand the mask to [B,1,Lq,Lk] (`ortqual convert --expand-mask`)"));
    char *raw = between(box, "<details class=\"raw\"><summary>ONNX Runtime's message</summary><pre>", "</pre>");
    assert_non_null(strstr(raw, "inconsistent q_sequence_length (between attn_mask and Q)"));
    free(raw);
    free(box);
    assert_non_null(strstr(html, "<p class=\"muted\">No batch ran.</p>"));
    assert_non_null(strstr(html, "<p class=\"muted\" id=\"no-figures\">Nothing to draw"));
    assert_int_equal(count(html, "<svg "), 0);
    /* the reference is the saved outputs, named file by file */
    assert_non_null(strstr(html, "<div class=\"expected-files\"><p>The reference is the outputs saved with the inputs"));
    assert_non_null(strstr(html, "<li>batch 0: <code>error/expected_000.npz</code></li>"));
    /* the model's inputs, and which one is the mask */
    assert_non_null(strstr(html, "<tr class=\"mask-input\"><td><code>mask</code></td>"));
    assert_non_null(strstr(html, "<td><code>features</code></td><td class=\"muted\">"));
    assert_null(strstr(html, "id=\"no-mask\""));
    free(html);
    /* a message no pattern knows is shown as it came; ORT's text is escaped */
    json_t *cfg = json_array_get(json_object_get(doc, "configs"), 1), *ref = json_object_get(cfg, "refusal");
    json_object_set_new(ref, "pattern", json_null());
    json_object_set_new(ref, "raw", json_string("<script>alert(1)</script>"));
    json_object_set_new(json_object_get(doc, "model_inputs"), "mask", json_null());
    html = html_of(doc);
    assert_non_null(strstr(html, "<div class=\"refusal\" data-pattern=\"\">"));
    assert_non_null(strstr(html, "(no known pattern matches its message: see it below)"));
    assert_non_null(strstr(html, "<pre>&lt;script&gt;alert(1)&lt;/script&gt;</pre>"));
    assert_null(strstr(html, "<script"));
    assert_non_null(strstr(html, "<p id=\"no-mask\">No mask input"));
    free(html);
    /* figures: an empty set, not an error (the run had nothing to draw) */
    oq_figures *f = figures_of(doc, NULL);
    assert_int_equal(oq_figures_count(f), 0);
    oq_figures_free(f);
    json_decref(doc);
    doc = load(FIX "validate/untested.json");
    f = figures_of(doc, NULL);
    assert_int_equal(oq_figures_count(f), 0);
    oq_figures_free(f);
    json_decref(doc);
    /* every batch empty (no valid element): no error panels, the timing still drawn */
    doc = load(FIX "validate/pass.json");
    size_t i, j, k;
    json_t *c, *b, *o;
    json_array_foreach(json_object_get(doc, "configs"), i, c) json_array_foreach(json_object_get(c, "batches"), j, b)
        json_array_foreach(json_object_get(b, "outputs"), k, o) json_object_set_new(o, "num_valid", json_integer(0));
    f = figures_of(doc, NULL);
    assert_false(has_figure(f, "error_cls") || has_figure(f, "error_vs_ref_cls"));
    assert_true(has_figure(f, "runtime_valid_size"));
    oq_figures_free(f);
    json_decref(doc);
}

/* A decoder's logits on padding are not zero in PyTorch either: reported, not judged, said
 * why, and never counted as a fault (not red, not in the figure's label); judged padding is. */
static void test_report_padding(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/padding.json");
    json_t *cfg = json_array_get(json_object_get(doc, "configs"), 1);
    long long reported = 0;
    size_t i, j;
    json_t *b, *o;
    json_array_foreach(json_object_get(cfg, "batches"), i, b) json_array_foreach(json_object_get(b, "outputs"), j, o) {
        assert_true(json_is_false(json_object_get(json_object_get(o, "padding"), "checked")));
        reported += json_integer_value(json_object_get(json_object_get(o, "padding"), "nonzero"));
    }
    assert_true(reported > 0);
    char *html = html_of(doc), want[256];
    snprintf(want, sizeof want, "<td class=\"n padding\"><span class=\"\">0</span><br><span class=\"muted\">%lld "
             "reported</span></td>", reported);
    assert_non_null(strstr(html, want));
    assert_non_null(strstr(html, "<li class=\"padding-note\">padding: logits has 4000 of 4000 padded elements non-zero "
                                 "(batch 0), reported, not judged: the reference is not zero there"));
    assert_non_null(strstr(html, "<td class=\"n muted\">4000 of 4000, reported, not judged</td>"));
    free(html);
    oq_figures *f = figures_of(doc, NULL);
    assert_null(strstr(series(figure(f, "error_logits"), "cpu:model:fp32")->note, "padding"));
    oq_figures_free(f);
    /* the same counts judged: red, in the figure's label, and no note; judged, they fail the
     * output and its configuration (a pass beside them contradicts itself: refused, below) */
    json_array_foreach(json_object_get(cfg, "batches"), i, b) json_array_foreach(json_object_get(b, "outputs"), j, o)
        json_object_set_new(json_object_get(o, "padding"), "checked", json_true());
    oq_err err = {0};
    assert_int_equal(oq_report_html_json(doc, "fixture", &html, &(size_t){0}, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "cpu:model:fp32 passed, but its output 'logits' in batch 0 has padding nonzero 4000"));
    json_array_foreach(json_object_get(cfg, "batches"), i, b) json_array_foreach(json_object_get(b, "outputs"), j, o)
        json_object_set_new(o, "passed", json_false());
    json_object_set_new(cfg, "status", json_string("failed"));
    json_object_set_new(doc, "verdict", json_string("failed"));
    html = html_of(doc);
    snprintf(want, sizeof want, "<td class=\"n padding\"><span class=\"reason\">%lld</span></td>", reported);
    assert_non_null(strstr(html, want));
    assert_null(strstr(html, "class=\"padding-note\""));
    free(html);
    f = figures_of(doc, NULL);
    assert_non_null(strstr(series(figure(f, "error_logits"), "cpu:model:fp32")->note, "4000 padding values not 0"));
    oq_figures_free(f);
    json_decref(doc);
}

static void test_junit_verdicts(void **state)
{
    (void)state;
    /* a refusal: an <error> with the explanation and ORT's message; the batch that never ran is no case */
    json_t *doc = load(FIX "validate/error.json");
    char *xml = xml_of(doc);
    assert_non_null(strstr(xml, "<testsuites name=\"ortqual validate\" tests=\"1\" failures=\"0\" errors=\"1\""));
    char *err = between(xml, "<error type=\"refusal\" message=\"refused by ONNX Runtime [attn-mask-query-broadcast] at node ",
                        "</error>");
    assert_non_null(strstr(err, "\nfix: expand the mask to [B,1,Lq,Lk]"));
    assert_non_null(strstr(err, "\nONNX Runtime&#39;s message: Run: Non-zero status code"));
    free(err);
    assert_null(strstr(xml, "<testcase name=\"batch 0\""));
    /* the saved outputs were read, and judged nothing: no case (it was a passing one) */
    assert_null(strstr(xml, "classname=\"ortqual.validate.expected\""));
    free(xml);
    /* the reference could not run: its error, and the configuration after it skipped */
    json_t *ref = json_array_get(json_object_get(doc, "configs"), 0), *cfg = json_array_get(json_object_get(doc, "configs"), 1);
    json_object_set_new(ref, "status", json_string("error"));
    json_object_set_new(ref, "reason", json_string("cannot load ONNX Runtime from /x/libonnxruntime.so"));
    json_object_set_new(cfg, "status", json_string("not-run"));
    json_object_set_new(cfg, "reason", json_string("not run: the reference could not run"));
    json_object_del(cfg, "refusal");
    xml = xml_of(doc);
    assert_non_null(strstr(xml, "<error type=\"error\" message=\"cannot load ONNX Runtime from /x/libonnxruntime.so\""));
    assert_non_null(strstr(xml, "<skipped>not run: the reference could not run</skipped>"));
    free(xml);
    json_decref(doc);

    /* nothing under test: a failing run-level case, never an all-green file */
    doc = load(FIX "validate/untested.json");
    xml = xml_of(doc);
    assert_non_null(strstr(xml, "<testsuites name=\"ortqual validate\" tests=\"1\" failures=\"1\" errors=\"0\""));
    assert_non_null(strstr(xml, "<testcase name=\"verdict\" classname=\"ortqual.validate\" time=\"0.000000\">\n"
                                "      <failure type=\"untested\" message=\"only the reference ran"));
    free(xml);
    json_object_set_new(doc, "exit_status", json_integer(0)); /* --allow-skip: skipped, not failed */
    xml = xml_of(doc);
    assert_non_null(strstr(xml, "failures=\"0\" errors=\"0\""));
    assert_non_null(strstr(xml, "<skipped>only the reference ran"));
    /* accepted, and still no test passed: every case is skipped (the reference's was a pass) */
    assert_int_equal(count(xml, "<testcase "), count(xml, "<skipped>"));
    free(xml);
    /* only an untested verdict is accepted: none, or one this version does not know (the page's
     * FAILED), with exit status 0 still fails */
    json_object_del(doc, "verdict");
    xml = xml_of(doc);
    assert_non_null(strstr(xml, "failures=\"1\" errors=\"0\""));
    assert_null(strstr(xml, "<skipped>"));
    free(xml);
    json_object_set_new(doc, "verdict", json_integer(1));
    xml = xml_of(doc);
    assert_non_null(strstr(xml, "failures=\"1\" errors=\"0\""));
    free(xml);
    json_decref(doc);

    /* the configuration under test skipped (no CUDA here): skipped, and the run fails on its own */
    doc = load(FIX "validate/pass.json");
    json_t *configs = json_object_get(doc, "configs");
    for (size_t i = 1; i < json_array_size(configs); i++) {
        json_object_set_new(json_array_get(configs, i), "status", json_string("skipped"));
        json_object_set_new(json_array_get(configs, i), "reason", json_string("no CUDA execution provider here"));
    }
    json_object_set_new(doc, "verdict", json_string("untested"));
    json_object_set_new(doc, "exit_status", json_integer(1));
    json_object_set_new(doc, "verdict_reason", json_string("every configuration under test was skipped"));
    xml = xml_of(doc);
    assert_int_equal(count(xml, "<skipped>no CUDA execution provider here</skipped>"), 2);
    assert_non_null(strstr(xml, "<failure type=\"untested\" message=\"every configuration under test was skipped\""));
    free(xml);
    json_decref(doc);
}

/* ---- integer outputs, from a real run ----------------------------------------------- */

/* ids int64 [batch,seq] and a bool mask in; ids_out (the ids) and y (the ids as float, halved) out. */
static void exact_model(const char *path)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "exact", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")};
    oq_graph_add_input(g, "ids", OQ_DTYPE_INT64, 2, bl);
    oq_graph_add_input(g, "attention_mask", OQ_DTYPE_BOOL, 2, bl);
    const char *ids = oq_graph_op(g, "Identity", 1, (const char *[]){"ids"}, 0, NULL);
    const oq_attr to_float = OQ_ATTR_I("to", OQ_DTYPE_FLOAT32);
    const char *f = oq_graph_op(g, "Cast", 1, (const char *[]){"ids"}, 1, &to_float);
    const char *y = oq_graph_op(g, "Add", 2, (const char *[]){f, f}, 0, NULL);
    oq_graph_add_output(g, ids, "ids_out", OQ_DTYPE_INT64, 2, bl);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 2, bl);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* io.npz: lengths 3 and 1 of 4, and the outputs saved beside them, one valid id off by one. */
static void exact_io(const char *path)
{
    const int64_t bl[] = {2, 4}, len[] = {3, 1};
    oq_tensor *t[4];
    static const char *const names[] = {"ids", "attention_mask", "ids_out", "y"};
    static const oq_dtype types[] = {OQ_DTYPE_INT64, OQ_DTYPE_BOOL, OQ_DTYPE_INT64, OQ_DTYPE_FLOAT32};
    for (int k = 0; k < 4; k++) assert_int_equal(oq_tensor_create(&t[k], types[k], 2, bl, names[k], NULL), OQ_OK);
    for (int64_t i = 0; i < 8; i++) {
        int valid = i % 4 < len[i / 4];
        int64_t id = valid ? 100 + i : 0;
        ((int64_t *)t[0]->data)[i] = ((int64_t *)t[2]->data)[i] = id;
        oq_tensor_set_f64(t[1], i, valid);
        oq_tensor_set_f64(t[3], i, 2.0 * (double)id);
    }
    ((int64_t *)t[2]->data)[1] += 1; /* batch 0, position 1: valid */
    assert_int_equal(oq_npz_write(path, 4, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (int k = 0; k < 4; k++) oq_tensor_free(t[k]);
}

/* validate, in this process: `model` on ORT CPU against the outputs saved in `io`, into `out`;
 * the run must fail (the tests' models differ from their saved outputs on purpose). */
static void validate_failing(const char *model, const char *io, const char *out)
{
    oq_config cfg[2];
    assert_int_equal(oq_config_parse("expected", &cfg[0], NULL), OQ_OK);
    assert_int_equal(oq_config_parse("cpu:model:fp32", &cfg[1], NULL), OQ_OK);
    const char *files[] = {io};
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    o.input_files = files;
    o.n_input_files = 1;
    o.configs = cfg;
    o.n_configs = 2;
    o.repeat = 1;
    o.isolate = 0;
    o.plots = 0;
    o.ort_lib = OQ_ORT_LIB;
    o.outdir = out;
    oq_validate_summary *s = NULL;
    oq_err err = {0};
    if (oq_validate_run(&o, &s, &err)) fail_msg("%s", err.msg);
    assert_string_equal(oq_run_verdict_name(s->verdict), "failed");
    oq_validate_summary_free(s);
}

/* Integer outputs are compared exactly: the page says "exact" where a float output has its
 * tolerance and lists the elements that differ; the JUnit failure says they differ. */
static void test_report_exact(void **state)
{
    (void)state;
    char *dir = temp_dir("exact_in"), *out = temp_dir("exact_out"), model[512], io[512], summary[512];
    snprintf(model, sizeof model, "%s/m.onnx", dir);
    snprintf(io, sizeof io, "%s/io.npz", dir);
    snprintf(summary, sizeof summary, "%s/summary.json", out);
    exact_model(model);
    exact_io(io);
    validate_failing(model, io, out);
    json_t *doc = load(summary);
    char *html = html_of(doc);
    assert_non_null(strstr(html, "data-verdict=\"failed\""));
    assert_int_equal(count(html, "<td class=\"tol exact\">exact (equal values)</td>"), 1); /* ids_out */
    assert_non_null(strstr(html, "<td class=\"tol\">0.0001, 1e-05</td>"));                  /* y */
    /* only the elements that differ (the matching ones rank after them, and are not listed) */
    assert_non_null(strstr(html, "<span class=\"muted\">elements that differ:</span> [0,1] (event 0) got 101 expected 102</td>"));
    free(html);
    char *xml = xml_of(doc);
    assert_non_null(strstr(xml, "<failure type=\"tolerance\" message=\"output ids_out: 1 of 4 valid elements differ, "
                                "max |error| 1 at [0,1] (event 0) (got 101, expected 102); compared exactly\""));
    free(xml);
    oq_figures *f = figures_of(doc, NULL);
    const char *note = series(figure(f, "error_ids_out"), "cpu:model:fp32")->note;
    assert_non_null(strstr(note, "FAILED \xc2\xb7 max |error| 1 \xc2\xb7 1 of 4 differ"));
    assert_non_null(strstr(note, "\xc2\xb7 exact"));
    assert_null(strstr(note, "rtol"));
    oq_figures_free(f);
    json_decref(doc);
    remove_dir(dir);
    remove_dir(out);
}

/* x [batch, seq, 2] -> s = Sqrt(x) (NaN where x < 0) and d = x / 0 (Inf everywhere). */
static void nonfinite_model(const char *path)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "nonfinite", &g, NULL), OQ_OK);
    const oq_dim d3[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq"), OQ_DIM(2)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, d3);
    const char *s = oq_graph_op(g, "Sqrt", 1, (const char *[]){"x"}, 0, NULL);
    const char *zero = oq_graph_const_f32(g, "zero", 0.0f);
    const char *d = oq_graph_op(g, "Div", 2, (const char *[]){"x", zero}, 0, NULL);
    oq_graph_add_output(g, s, "s", OQ_DTYPE_FLOAT32, 3, d3);
    oq_graph_add_output(g, d, "d", OQ_DTYPE_FLOAT32, 3, d3);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* io.npz: x with one negative element; saved s = sqrt(|x|) and d = 1, all finite. */
static void nonfinite_io(const char *path)
{
    const int64_t shape[] = {1, 2, 2};
    oq_tensor *t[3];
    static const char *const names[] = {"x", "s", "d"};
    for (int k = 0; k < 3; k++) assert_int_equal(oq_tensor_create(&t[k], OQ_DTYPE_FLOAT32, 3, shape, names[k], NULL), OQ_OK);
    for (int64_t i = 0; i < 4; i++) {
        double x = i == 2 ? -4.0 : (double)(i + 1);
        oq_tensor_set_f64(t[0], i, x);
        oq_tensor_set_f64(t[1], i, sqrt(fabs(x)));
        oq_tensor_set_f64(t[2], i, 1.0);
    }
    assert_int_equal(oq_npz_write(path, 3, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (int k = 0; k < 3; k++) oq_tensor_free(t[k]);
}

/* An output with a NaN, and one that is Inf on every element: max_abs, over the finite pairs,
 * is 0 for the second. validate.csv, the page and the JUnit say nan and inf, as the verdict
 * table does (they said 0 for the output of Infs, a finite error for the one with a NaN, and
 * the JUnit "got nan0"). */
static void test_report_nonfinite(void **state)
{
    (void)state;
    char *dir = temp_dir("nonfinite_in"), *out = temp_dir("nonfinite_out"), model[512], io[512], path[512];
    snprintf(model, sizeof model, "%s/m.onnx", dir);
    snprintf(io, sizeof io, "%s/io.npz", dir);
    nonfinite_model(model);
    nonfinite_io(io);
    validate_failing(model, io, out);
    char *csv;
    size_t n;
    snprintf(path, sizeof path, "%s/validate.csv", out);
    assert_int_equal(oq_read_file(path, (unsigned char **)&csv, &n, NULL), OQ_OK);
    assert_non_null(strstr(csv, "\ncpu:model:fp32,s,0,2,"));
    /* the batch's outputs are the saved ones of io.npz (the `expected` reference): its source */
    assert_non_null(strstr(csv, ",max_abs_err,source\n"));
    assert_non_null(strstr(csv, ",nan,saved-outputs\n"));
    assert_non_null(strstr(csv, ",inf,saved-outputs\n"));
    free(csv);
    snprintf(path, sizeof path, "%s/summary.json", out);
    json_t *doc = load(path);
    char *html = html_of(doc);
    /* the configuration's worst output is the one with a NaN, and its error says so */
    assert_non_null(strstr(html, "<td>s</td><td class=\"n reason\">NaN</td>"));
    char *rows = between(html, "<td>d</td>", "</tr>");
    assert_non_null(strstr(rows, "<td class=\"n reason\">Inf</td>"));
    free(rows);
    free(html);
    char *xml = xml_of(doc);
    assert_non_null(strstr(xml, "output s: 1 of 4 valid elements over tolerance, max |error| nan at [0,1,0] (got nan, "
                                "expected 2), 1 NaN, 0 Inf"));
    assert_non_null(strstr(xml, "output d: 4 of 4 valid elements over tolerance, max |error| inf at "));
    assert_null(strstr(xml, "nan0"));
    assert_null(strstr(xml, "inf0"));
    free(xml);
    json_decref(doc);
    remove_dir(dir);
    remove_dir(out);
}

/* Red rings (polylines of 17 points: radius 8 around a marker, 7.5 in the legend) in an SVG. */
static size_t rings(const char *svg)
{
    static const char red[] = "\" fill=\"none\" stroke=\"#c62828\" stroke-width=\"2\"/>";
    size_t n = 0;
    for (const char *p = svg; (p = strstr(p, "<polyline points=\"")); p++) {
        const char *end = strchr(p + 18, '"');
        size_t pts = 0;
        for (const char *q = p + 18; q < end; q++) pts += *q == ',';
        n += pts == 17 && !strncmp(end, red, sizeof red - 1);
    }
    return n;
}

/* The failing configuration's cls in fail.json, its batch 1 given a NaN in the reference and one
 * bin of batch 0 left over tolerance: the labels and the page say max |error| nan (and max rel.
 * nan), as validate.csv and the console do, naming the reference's NaN, and error_vs_ref_cls
 * rings that one bin (json_number_value read the "nan" as 0, and every bin of the failed output
 * was ringed; QA mlpf2 #1, #2). */
static void test_validate_nonfinite_and_rings(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/fail.json");
    const json_t *cfg = json_array_get(json_object_get(doc, "configs"), 1);
    json_t *cls[2];
    for (size_t b = 0; b < 2; b++) {
        size_t j;
        json_t *o, *over;
        json_array_foreach(json_object_get(json_array_get(json_object_get(cfg, "batches"), b), "outputs"), j, o)
            if (!strcmp(oq_j_str(o, "output", ""), "cls")) cls[b] = o;
        over = json_object_get(json_object_get(cls[b], "error_by_magnitude"), "over_tolerance");
        for (size_t k = 0; k < json_array_size(over); k++) json_array_set_new(over, k, json_integer(b == 0 && k == 4));
    }
    json_object_set_new(cls[1], "max_abs", json_string("nan"));
    json_object_set_new(cls[1], "max_rel", json_string("nan"));
    json_object_set_new(json_object_get(cls[1], "reference_nonfinite"), "nan", json_integer(1));
    oq_figures *f = figures_of(doc, NULL);
    const char *note = series(figure(f, "error_cls"), "cpu:model:fp32")->note;
    if (!strstr(note, "FAILED \xc2\xb7 max |error| nan \xc2\xb7") || !strstr(note, "\xc2\xb7 reference: 1 NaN, 0 Inf"))
        fail_msg("error_cls label: %s", note);
    const oq_plot_spec *sp = figure(f, "error_vs_ref_cls");
    note = series(sp, "cpu:model:fp32")->note;
    if (!strstr(note, "max |error| nan")) fail_msg("error_vs_ref_cls label: %s", note);
    char *svg = svg_of(sp);
    assert_int_equal(drawn(svg, "over tolerance", 0), 1);
    assert_int_equal(rings(svg), 1 + 1); /* the bin over tolerance, and the legend's marker */
    assert_non_null(strstr(svg, "fill=\"#c62828\">cpu:model:fp32")); /* the failed panel's label still red */
    free(svg);
    oq_figures_free(f);
    /* report.html's row of batch 1's cls: max |error| and max rel. NaN, not 0 */
    char *html = html_of(doc);
    assert_non_null(strstr(html, "<td>cls</td><td class=\"status failed\">failed</td><td class=\"n reason\">NaN</td>"
                                 "<td class=\"n reason\">NaN</td>"));
    free(html);
    json_decref(doc);
}

/* ---- many batches: records read one at a time, the table capped -------------------- */

/* A validate summary of n batches of one event: batch i's calls take i ms (batch 7's one
 * second, the slowest), batches 3 and 70 fail; strings and a "batches" elsewhere to mislead. */
static json_t *many_batches(int n)
{
    json_t *infos = json_array(), *recs = json_array();
    for (int i = 0; i < n; i++) {
        json_array_append_new(infos, json_pack("{s:i, s:s, s:i, s:i, s:i, s:[i], s:[i]}", "index", i, "inputs", "in.npz",
                                               "batch_size", 1, "padded_length", 4, "valid_size", 3, "lengths", 3,
                                               "event_indices", i));
        int failed = i == 3 || i == 70;
        double t = i == 7 ? 1.0 : i * 1e-3;
        json_array_append_new(recs, json_pack("{s:i, s:f, s:i, s:i, s:i, s:f, s:[{s:s, s:b, s:f, s:i, s:i}], s:b}",
                                              "index", i, "first_call_s", t, "repeat", 1, "warmup", 0, "calls", 2,
                                              "median_s", t, "outputs", "output", "y", "passed", !failed, "max_abs",
                                              failed ? 1.0 : 1e-7, "over_tolerance", failed, "num_valid", 3, "passed",
                                              !failed));
    }
    return json_pack("{s:s, s:s, s:s, s:{s:[s]}, s:o, s:[{s:s, s:s, s:b, s:[], s:s, s:s}, "
                     "{s:s, s:s, s:b, s:o, s:s, s:s, s:{s:[s]}}], s:s, s:i}",
                     "schema", OQ_VALIDATE_SCHEMA, "start", "s", "end", "e", "evidence", "command", "validate",
                     "batches", infos, "configs", "name", "ref:encoder:fp64", "runtime", "ref", "reference", 1,
                     "batches", "status", "passed", "note", "[\"batches\": {]", "name", "cpu:attention24:fp32",
                     "runtime", "cpu", "reference", 0, "batches", recs, "status", "failed", "reason", "batch 3",
                     "dispatch", "batches", "not records", "verdict", "failed", "exit_status", 1);
}

static void test_report_many_batches(void **state)
{
    (void)state;
    char *dir = temp_dir("many");
    char path[512], *html;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *doc = many_batches(120);
    assert_non_null(doc);
    assert_int_equal(json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
    oq_err err = {0};
    assert_int_equal(oq_report_write_dir(dir, &err), OQ_OK);
    snprintf(path, sizeof path, "%s/report.html", dir);
    size_t n;
    assert_int_equal(oq_read_file(path, (unsigned char **)&html, &n, NULL), OQ_OK);
    /* 2 failing and the 25 slowest of the others (95..119 and 7), of 120 */
    assert_non_null(strstr(html, "27 of 120 batches shown: the first 25 failing and the 25 slowest of the others; "
                                 "93 more not shown"));
    assert_int_equal(count(html, "<tr class=\"batch failed\" data-batch=\"3\">"), 2);
    assert_int_equal(count(html, "<tr class=\"batch failed\" data-batch=\"70\">"), 2);
    assert_int_equal(count(html, "data-batch=\"7\""), 1);
    assert_int_equal(count(html, "data-batch=\"119\""), 1);
    assert_int_equal(count(html, "data-batch=\"96\""), 1);
    assert_int_equal(count(html, "data-batch=\"94\""), 0);
    assert_non_null(strstr(html, "120 batches, 120 events, 360 valid tokens"));
    assert_non_null(strstr(html, "The first 50 shown; summary.json lists all 120."));
    /* the configuration's totals over every record: 2 failing, 6 over tolerance, the worst 1 */
    assert_non_null(strstr(html, "<td class=\"n\">120</td><td>y</td>"));
    /* the page from the file is the page of the document in memory */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *whole;
    assert_int_equal(oq_report_html_json(doc, path, &whole, &n, &err), OQ_OK);
    assert_string_equal(html, whole);
    free(whole);
    free(html);
    /* a few batches: every one is shown */
    json_decref(doc);
    doc = many_batches(40);
    html = html_of(doc);
    assert_null(strstr(html, "batches shown"));
    assert_int_equal(count(html, "<tr class=\"batch\" data-batch="), 39); /* 40, batch 3 failed */
    free(html);
    json_decref(doc);
    remove_dir(dir);
}

static oq_status keep_record(void *ctx, long which, json_t *rec, oq_err *err)
{
    (void)err;
    json_array_append_new(ctx, json_pack("{s:i, s:O}", "which", (int)which, "rec", rec));
    return OQ_OK;
}

/* The scanner: only the top-level "batches" and configs[K].batches are handed out (keys and
 * brackets inside strings, "batches" elsewhere stay in the document), plan.description.batches
 * too when asked for; bad JSON is refused. */
static void test_json_scan(void **state)
{
    (void)state;
    char *dir = temp_dir("scan");
    char path[512];
    snprintf(path, sizeof path, "%s/s.json", dir);
    json_t *doc = many_batches(3), *got = json_array();
    json_object_set_new(doc, "plan", json_pack("{s:s, s:{s:[{s:s}, {s:s}], s:i}}", "hash", "h", "description", "batches",
                                               "sha256", "a", "sha256", "b", "n", 2));
    assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
    oq_err err = {0};
    json_t *skel = oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES, keep_record, got, &err);
    assert_non_null(skel);
    assert_int_equal(json_array_size(got), 8); /* the plan's 2 as well */
    assert_int_equal(json_integer_value(json_object_get(json_array_get(got, 7), "which")), OQ_JSON_PLAN_BATCHES);
    assert_int_equal(json_array_size(json_object_get(json_object_get(json_object_get(skel, "plan"), "description"), "batches")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(skel, "plan"), "description"), "n")), 2);
    json_decref(skel);
    json_array_clear(got);
    skel = oq_json_scan_file(path, 0, keep_record, got, &err);
    assert_non_null(skel);
    assert_int_equal(json_array_size(got), 6); /* 3 infos, no reference record, 3 records */
    assert_int_equal(json_integer_value(json_object_get(json_array_get(got, 0), "which")), -1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(got, 5), "which")), 1);
    assert_true(json_equal(json_object_get(json_array_get(got, 5), "rec"),
                           json_array_get(json_object_get(json_array_get(json_object_get(doc, "configs"), 1), "batches"), 2)));
    /* the rest as written, the record arrays empty */
    json_t *cfgs = json_object_get(doc, "configs");
    json_array_clear(json_object_get(doc, "batches"));
    json_array_clear(json_object_get(json_array_get(cfgs, 1), "batches"));
    assert_true(json_equal(skel, doc));
    json_decref(skel);
    FILE *fp = fopen(path, "w");
    fputs("{\"batches\": [{\"a\": 1}, ]}", fp);
    fclose(fp);
    assert_null(oq_json_scan_file(path, 0, keep_record, got, &err));
    assert_int_equal(err.status, OQ_ERR_FORMAT);
    fp = fopen(path, "w");
    fputs("{\"configs\": [{\"batches\": [{\"a\": \"]\"}", fp);
    fclose(fp);
    assert_null(oq_json_scan_file(path, 0, keep_record, got, &err));
    assert_non_null(strstr(err.msg, "unterminated array"));
    json_decref(got);
    json_decref(doc);
    remove_dir(dir);
}

/* ---- JUnit -------------------------------------------------------------------------- */

static void test_junit(void **state)
{
    (void)state;
    char *xml;
    size_t n;
    oq_err err = {0};
    json_t *doc = load(FIX "validate/pass.json");
    assert_int_equal(oq_junit_xml_json(doc, "fixture", &xml, &n, &err), OQ_OK);
    assert_int_equal(count(xml, "<testsuite "), 3);
    /* configuration under test x batch: the C reference's batches judged nothing, no case */
    assert_int_equal(count(xml, "<testcase "), 2 * 2);
    assert_null(strstr(xml, "classname=\"ortqual.validate.ref:encoder:fp64\""));
    assert_non_null(strstr(xml, "<testsuites name=\"ortqual validate\" tests=\"4\" failures=\"0\" errors=\"0\""));
    free(xml);
    /* an edited command (evidence.command[0]) is escaped in the top element as everywhere */
    json_t *cmd = json_object_get(json_object_get(doc, "evidence"), "command");
    assert_non_null(cmd);
    json_array_set_new(cmd, 0, json_string("validate\"><x y=\"&"));
    assert_int_equal(oq_junit_xml_json(doc, "fixture", &xml, &n, &err), OQ_OK);
    assert_null(strstr(xml, "<x y="));
    assert_non_null(strstr(xml, "<testsuites name=\"ortqual validate&quot;&gt;&lt;x y=&quot;&amp;\" tests=\"4\""));
    free(xml);
    json_decref(doc);

    doc = load(FIX "validate/fail.json");
    assert_int_equal(oq_junit_xml_json(doc, "fixture", &xml, &n, &err), OQ_OK);
    const char *suite = strstr(xml, "<testsuite name=\"cpu:model:fp32\" tests=\"2\" failures=\"2\"");
    assert_non_null(suite);
    const char *c0 = strstr(suite, "<testcase name=\"batch 0\" classname=\"ortqual.validate.cpu:model:fp32\"");
    assert_non_null(c0);
    assert_non_null(strstr(c0, "<failure type=\"tolerance\" message=\"output cls: "));
    free(xml);

    /* a configuration that failed without a failing batch (here: a crashed worker) still fails */
    json_t *cfg = json_array_get(json_object_get(doc, "configs"), 1);
    json_object_set_new(cfg, "batches", json_array());
    json_object_set_new(cfg, "reason", json_string("worker killed by signal 6 (Aborted)"));
    assert_int_equal(oq_junit_xml_json(doc, "fixture", &xml, &n, &err), OQ_OK);
    assert_non_null(strstr(xml, "<testcase name=\"run\" classname=\"ortqual.validate.cpu:model:fp32\""));
    assert_non_null(strstr(xml, "<error type=\"failed\" message=\"worker killed by signal 6 (Aborted)\""));
    free(xml);
    json_decref(doc);

}

/* A bench summary's JUnit (it was refused: "bench rows are measurements"): a case per row under
 * test, failing for a failed or regressed row, skipped for one that did not run or was not
 * compared with the baseline (new, missing); the reference's row is no case. */
static void test_junit_bench(void **state)
{
    (void)state;
    json_t *doc = json_pack(
        "{s:s, s:s, s:s, s:i, s:s, s:["
        "{s:s, s:s, s:i, s:i, s:b}, {s:s, s:s, s:i, s:i, s:b}, {s:s, s:s, s:i, s:i, s:b},"
        "{s:s, s:s, s:s, s:i, s:i, s:b}, {s:s, s:s, s:i, s:i, s:b}, {s:s, s:s, s:i, s:i, s:b}],"
        " s:{s:[{s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:n, s:s}]}}",
        "schema", "ortqual.bench/2", "tool", "ortqual bench", "verdict", "failed", "exit_status", 1, "verdict_reason",
        "1 row regressed", "results",
        "variant", "ref:mha:fp64", "status", "ok", "batch", 1, "seq_len", 16, "masked", 0,
        "variant", "cpu:a:fp32", "status", "ok", "batch", 1, "seq_len", 16, "masked", 0,
        "variant", "cpu:a:fp32", "status", "ok", "batch", 1, "seq_len", 32, "masked", 0,
        "variant", "cpu:a:fp32", "status", "failed", "error", "max|err| 3 over tolerance", "batch", 1, "seq_len", 64,
        "masked", 0,
        "variant", "cpu:a:fp32", "status", "skipped", "batch", 1, "seq_len", 128, "masked", 1,
        "variant", "cpu:a:fp32", "status", "ok", "batch", 2, "seq_len", 16, "masked", 0,
        "baseline", "rows", "row", "cpu:a:fp32 batch=1 seq_len=16 k", "result", 1, "match", "ok",
        "row", "cpu:a:fp32 batch=1 seq_len=32 k", "result", 2, "match", "regressed",
        "row", "cpu:a:fp32 batch=2 seq_len=16 k", "result", 5, "match", "new",
        "row", "cpu:a:fp32 batch=4 seq_len=16 k", "result", "match", "missing");
    assert_non_null(doc);
    char *xml = xml_of(doc);
    assert_non_null(strstr(xml, "<testsuite name=\"ortqual bench\" tests=\"6\" failures=\"2\" errors=\"0\" skipped=\"3\""));
    assert_non_null(strstr(xml, "<testcase name=\"cpu:a:fp32 batch=1 seq_len=16 k\" classname=\"ortqual.bench\" time=\"0.000000\"/>"));
    assert_non_null(strstr(xml, "name=\"cpu:a:fp32 batch=1 seq_len=32 k\" classname=\"ortqual.bench\" time=\"0.000000\">\n"
                                "      <failure type=\"regressed\" message=\"baseline: regressed\""));
    assert_non_null(strstr(xml, "<failure type=\"failed\" message=\"failed: max|err| 3 over tolerance\""));
    assert_non_null(strstr(xml, "name=\"cpu:a:fp32 batch=1 seq_len=128 masked\""));
    assert_non_null(strstr(xml, "<skipped>baseline: new (not in the baseline)</skipped>"));
    assert_non_null(strstr(xml, "name=\"cpu:a:fp32 batch=4 seq_len=16 k\""));
    assert_null(strstr(xml, "ref:mha"));
    free(xml);
    json_decref(doc);
}

/* A gate verdict whose reasons are long and not ASCII (skip reasons as pytest prints them): the
 * failure's text holds all of them and the counts after them, never cut inside a character (a
 * 512-byte buffer cut "\xc3\xbc" in two: no XML parser read the file). */
static void test_junit_gate_long_reasons(void **state)
{
    (void)state;
    json_t *reasons = json_array();
    for (int i = 0; i < 20; i++)
        json_array_append_new(reasons, json_string("skipped (no --allow-skip given): [1] test_x.py: needs CUDA \xe2\x89\xa5 12 "
                                                   "\xc3\xbc \xc3\xbc \xc3\xbc \xc3\xbc"));
    json_t *doc = json_pack("{s:s, s:s, s:o, s:[s], s:s, s:{s:i, s:i, s:i, s:i}, s:f}", "tool", "ortqual gate", "verdict",
                            "fail", "reasons", reasons, "command", "/x/run_tests", "runner", "pytest", "counts", "passed",
                            20, "failed", 0, "skipped", 20, "errors", 0, "duration_s", 0.5);
    char *xml = xml_of(doc);
    char *text = between(xml, "<failure type=\"gate\" message=\"", "</failure>");
    assert_non_null(strstr(text, "\xc3\xbc; 20 passed, 0 failed, 20 skipped, 0 errors (pytest)"));
    assert_int_equal(count(text, "needs CUDA"), 40); /* 20 in the message, 20 in the text */
    /* every byte sequence is whole UTF-8 */
    for (const unsigned char *p = (const unsigned char *)xml; *p;) {
        int len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
        assert_int_not_equal(len, 0);
        for (int k = 1; k < len; k++) assert_int_equal(p[k] & 0xc0, 0x80);
        p += len;
    }
    free(text);
    free(xml);
    json_decref(doc);
}

/* The log property only where the log is: without --keep the gate removed its folder (the
 * property named a path that was gone). */
static void test_junit_gate_log_kept(void **state)
{
    (void)state;
    for (int kept = 0; kept < 2; kept++) {
        json_t *doc = json_pack("{s:s, s:s, s:[s], s:s, s:s, s:b, s:s}", "tool", "ortqual gate", "verdict", "pass",
                                "reasons", "ok", "command", "/x/run", "runner", "ctest", "kept", kept, "log",
                                "/tmp/ortqual-gate-X/gate.log");
        char *xml = xml_of(doc);
        assert_int_equal(strstr(xml, "<property name=\"log\" value=\"/tmp/ortqual-gate-X/gate.log\"/>") != NULL, kept);
        assert_non_null(strstr(xml, "<property name=\"runner\" value=\"ctest\"/>"));
        free(xml);
        json_decref(doc);
    }
}

/* XML text from outside need not be UTF-8 nor XML characters: a stray byte and a cut sequence
 * (one U+FFFD per byte) and U+FFFE (valid UTF-8, no XML character) become U+FFFD, a control
 * character goes; the rest is kept. The bytes were copied as they came: no XML parser read it. */
static void test_xml_text_not_utf8(void **state)
{
    (void)state;
    oq_sb b = {0};
    oq_sb_esc(&b, "a\xff" "b \xef\xbf\xbe \xc3\xbc\x01 \xe2\x82 <&>");
    size_t n;
    char *x = oq_sb_take(&b, &n);
    assert_string_equal(x, "a\xef\xbf\xbd" "b \xef\xbf\xbd \xc3\xbc \xef\xbf\xbd\xef\xbf\xbd &lt;&amp;&gt;");
    free(x);
    /* a gate verdict's reason as the JUnit failure: U+FFFF is valid JSON, and no XML */
    json_t *doc = json_pack("{s:s, s:s, s:[s], s:[s], s:s}", "tool", "ortqual gate", "verdict", "fail", "reasons",
                            "skipped: [1] t.py:1: \xef\xbf\xbf", "command", "/x/run", "runner", "pytest");
    char *xml = xml_of(doc);
    assert_null(strstr(xml, "\xef\xbf\xbf"));
    assert_non_null(strstr(xml, "message=\"skipped: [1] t.py:1: \xef\xbf\xbd\""));
    free(xml);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_error_figure),
        cmocka_unit_test(test_figure_names_unique),
        cmocka_unit_test(test_validate_runtime_figure),
        cmocka_unit_test(test_runtime_figure_builds),
        cmocka_unit_test(test_validate_failed_figures),
        cmocka_unit_test(test_placement_figure),
        cmocka_unit_test(test_bench_summary_figures),
        cmocka_unit_test(test_bench_model_batch_sweep),
        cmocka_unit_test(test_bench_model_fixed_seq_batch_sweep),
        cmocka_unit_test(test_bench_model_two_dims),
        cmocka_unit_test(test_report_html),
        cmocka_unit_test(test_report_devices_per_config),
        cmocka_unit_test(test_report_cache_writers),
        cmocka_unit_test(test_report_text_api),
        cmocka_unit_test(test_report_math_failures),
        cmocka_unit_test(test_report_counted_routes),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_report_dir_errors),
        cmocka_unit_test(test_junit),
        cmocka_unit_test(test_report_verdicts),
        cmocka_unit_test(test_report_refusal),
        cmocka_unit_test(test_report_padding),
        cmocka_unit_test(test_junit_verdicts),
        cmocka_unit_test(test_junit_gate_long_reasons),
        cmocka_unit_test(test_junit_bench),
        cmocka_unit_test(test_junit_gate_log_kept),
        cmocka_unit_test(test_xml_text_not_utf8),
        cmocka_unit_test(test_report_exact),
        cmocka_unit_test(test_report_nonfinite),
        cmocka_unit_test(test_validate_nonfinite_and_rings),
        cmocka_unit_test(test_report_many_batches),
        cmocka_unit_test(test_json_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
