/* Figures, report.html and JUnit XML of real summaries (tests/fixtures): what each
 * figure draws is checked against the summary itself, point by point and bin by bin,
 * both in the figure's data and in the SVG written. */
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
#include "plot/figures-impl.h"
#include "report/report-impl.h"
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
            double ms = json_number_value(json_object_get(b, "median_s")) * 1e3;
            int found = 0;
            for (size_t j = 0; j < s->n; j++) found |= fabs(s->y[j] - ms) < 1e-9;
            assert_true(found);
        }
    }
    free(svg);
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

static char *html_of(const json_t *doc)
{
    char *html;
    size_t n;
    oq_err err = {0};
    if (oq_report_html_json(doc, "fixture", &html, &n, &err)) fail_msg("%s", err.msg);
    return html;
}

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
static void test_report_math_failures(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/h200-placement.json");
    json_t *cfg = NULL, *c;
    size_t i;
    json_array_foreach(json_object_get(doc, "configs"), i, c) if (json_object_get(c, "dispatch")) cfg = c;
    assert_non_null(cfg);
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
    assert_int_equal(count(xml, "<testcase "), 3 * 2); /* configuration x batch */
    assert_non_null(strstr(xml, "<testsuites name=\"ortqual validate\" tests=\"6\" failures=\"0\" errors=\"0\""));
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

    doc = load(FIX "bench/sweep.json");
    assert_int_equal(oq_junit_xml_json(doc, "sweep.json", &xml, &n, &err), OQ_ERR_FORMAT);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_error_figure),
        cmocka_unit_test(test_validate_runtime_figure),
        cmocka_unit_test(test_validate_failed_figures),
        cmocka_unit_test(test_placement_figure),
        cmocka_unit_test(test_bench_summary_figures),
        cmocka_unit_test(test_report_html),
        cmocka_unit_test(test_report_text_api),
        cmocka_unit_test(test_report_math_failures),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_report_dir_errors),
        cmocka_unit_test(test_junit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
