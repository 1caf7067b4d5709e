/* report.html of a validate or replay summary. The run's verdict, each configuration's status
 * and the reasons come from summary.json as written (docs/verdicts.md): nothing here decides
 * anew what passed, so the page says what the exit status said. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "ortqual/stats.h"
#include "report/report-impl.h"
#include "status/terms-impl.h"

/* The tint of a configuration's row and details: a failure and a runtime error stand out. */
static const char *status_class(const char *s)
{
    return !strcmp(s, "failed") ? "failed" : !strcmp(s, "error") ? "error" : NULL;
}

static int is_reference(const json_t *cfg) { return json_is_true(json_object_get(cfg, "reference")); }

/* `expected`: the saved outputs are the reference; nothing runs for it. */
static int is_expected(const json_t *cfg) { return !strcmp(oq_j_str(cfg, "runtime", ""), "expected"); }

/* v as oq_html_num shows it, unless it is over `bound` (a failed output's tolerance) and
 * that would not show it: then with the digits that do (0.000977 against atol 0.0009765624). */
static void num_over(oq_sb *b, double v, double bound)
{
    char t[32];
    int digits = fabs(v) >= 1e5 || fabs(v) < 1e-3 ? 3 : 4; /* oq_html_num's */
    if (isfinite(v) && v > bound) oq_sb_puts(b, oq_real_over_str(v, bound, digits, t, sizeof t));
    else oq_html_num(b, v);
}

/* A number, or a dash for none (NaN); over `bound` as num_over shows it (INFINITY: no bound). */
static void td_num_over(oq_sb *b, double v, double bound)
{
    oq_sb_puts(b, "<td class=\"n\">");
    if (isnan(v)) oq_sb_puts(b, "&ndash;");
    else num_over(b, v, bound);
    oq_sb_puts(b, "</td>");
}

static void td_num(oq_sb *b, double v) { td_num_over(b, v, INFINITY); }

/* A max |error| or max rel.: NaN and Inf are what a valid element held (oq_compare_record_max),
 * shown as such, never as none. */
static void td_err(oq_sb *b, double v, double bound)
{
    oq_sb_printf(b, "<td class=\"n%s\">", isfinite(v) ? "" : " reason");
    num_over(b, v, bound);
    oq_sb_puts(b, "</td>");
}

static void td_int(oq_sb *b, long long v, int bad_if_nonzero)
{
    oq_sb_printf(b, "<td class=\"n%s\">%lld</td>", bad_if_nonzero && v ? " reason" : "", v);
}

/* Padded elements not zero: judged ones in red, reported ones (not judged) apart and grey. */
static void td_padding(oq_sb *b, long long judged, long long reported)
{
    oq_sb_printf(b, "<td class=\"n padding\"><span class=\"%s\">%lld</span>", judged ? "reason" : "", judged);
    if (reported) oq_sb_printf(b, "<br><span class=\"muted\">%lld reported</span>", reported);
    oq_sb_puts(b, "</td>");
}

/* Distinct (node, kernel, dtype) routes and their lines (ORT prints one per node per Run;
 * a record counts the lines of its route, and differs from another by its op too). */
typedef struct route {
    const json_t *rec;
    int lines;
} route;

static size_t routes_of(const json_t *recs, route *out, size_t cap)
{
    size_t n = 0, i;
    json_t *r;
    json_array_foreach(recs, i, r) {
        size_t k = 0;
        for (; k < n; k++)
            if (!strcmp(oq_j_str(out[k].rec, "node", ""), oq_j_str(r, "node", "")) &&
                !strcmp(oq_j_str(out[k].rec, "kernel", ""), oq_j_str(r, "kernel", "")) &&
                !strcmp(oq_j_str(out[k].rec, "dtype", ""), oq_j_str(r, "dtype", "")))
                break;
        const int lines = json_is_integer(json_object_get(r, "count")) ? (int)oq_j_int(r, "count") : 1;
        if (k < n) out[k].lines += lines;
        else if (n < cap) out[n++] = (route){r, lines};
    }
    return n;
}

#define MAX_ROUTES 256

/* "FLASH_ATTENTION on 2 nodes" from the dispatch records, "-" when none. */
static void kernels_text(oq_sb *b, const json_t *cfg)
{
    route rt[MAX_ROUTES];
    size_t n = routes_of(json_object_get(json_object_get(cfg, "dispatch"), "records"), rt, MAX_ROUTES);
    if (!n) {
        oq_sb_puts(b, "&ndash;");
        return;
    }
    const char *seen[16];
    int count[16], m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = oq_j_str(rt[i].rec, "kernel", "?");
        int j = 0;
        while (j < m && strcmp(seen[j], k)) j++;
        if (j == m && m < 16) seen[m] = k, count[m++] = 0;
        if (j < m) count[j]++;
    }
    for (int j = 0; j < m; j++) oq_sb_escf(b, "%s%s on %d node%s", j ? ", " : "", seen[j], count[j], count[j] == 1 ? "" : "s");
}

static void placement_text(oq_sb *b, const json_t *cfg)
{
    const json_t *p = json_object_get(cfg, "placement"), *c = json_object_get(p, "counts");
    if (!p) {
        oq_sb_puts(b, "&ndash;");
        return;
    }
    oq_sb_printf(b, "%lld on device, %lld compute on CPU, %lld shape ops on CPU", oq_j_int(c, "device"),
                 oq_j_int(c, "cpu_compute"), oq_j_int(c, "cpu_shape"));
    if (json_is_false(json_object_get(p, "passed")) && !json_is_false(json_object_get(p, "required"))) /* judged */
        oq_sb_puts(b, " <span class=\"reason\">(check failed)</span>");
}

/* ", N written by other members: bob (2), ..." and each one's spot check (the batch recomputed
 * and what it showed) from the reference's cache_writers, as the text output says them: who else
 * computed the numbers the verdict rests on belongs beside them. */
static void cache_writers(oq_sb *b, const json_t *writers)
{
    size_t i, sum = 0;
    const json_t *v;
    if (!json_array_size(writers)) return;
    json_array_foreach(writers, i, v) sum += (size_t)json_integer_value(json_object_get(v, "entries"));
    oq_sb_printf(b, ", %zu written by other members%s", sum, sum ? ":" : "");
    json_array_foreach(writers, i, v) {
        json_int_t n = json_integer_value(json_object_get(v, "entries"));
        if (!n) continue;
        oq_sb_puts(b, " ");
        oq_sb_esc(b, oq_j_str(v, "user", "?"));
        oq_sb_printf(b, " (%lld)", (long long)n);
    }
    json_array_foreach(writers, i, v) {
        const json_t *sc = json_object_get(v, "spot_check");
        oq_sb_puts(b, "; spot check of ");
        oq_sb_esc(b, oq_j_str(v, "user", "?"));
        oq_sb_printf(b, "'s entries: batch %lld recomputed: ", (long long)json_integer_value(json_object_get(sc, "batch")));
        oq_sb_esc(b, oq_j_str(sc, "result", "?"));
    }
}

/* "reference: N of M batches from cache" (and a cache entry found bad), when the cache gave any;
 * the reference's row also says a group's shared cache (`group`, NULL: none), whatever it gave. */
static void cache_row(oq_sb *b, const json_t *c, const oq_vd_config *vc, const char *group)
{
    const char *warning = oq_j_str(c, "cache_warning", NULL);
    if (!vc->cached && !warning && !group) return;
    oq_sb_printf(b, "<tr><td></td><td colspan=\"12\" class=\"muted\">reference: %zu of %zu batches from cache", vc->cached,
                 vc->n);
    if (group) {
        oq_sb_puts(b, ", a cache shared by group ");
        oq_sb_esc(b, group);
    }
    cache_writers(b, json_object_get(c, "cache_writers"));
    if (warning) {
        oq_sb_puts(b, " (");
        oq_sb_esc(b, warning);
        oq_sb_puts(b, ")");
    }
    oq_sb_puts(b, "</td></tr>\n");
}

/* A row under the configuration's for each output that judged no value (every valid element an
 * infinity the reference holds too): the table's max |error| leaves it out, as 0 would read as
 * an error of 0. */
static void not_compared_rows(oq_sb *b, const json_t *c, const char *cls)
{
    size_t j;
    json_t *o;
    json_array_foreach(json_object_get(c, "outputs"), j, o) {
        if (!oq_compare_record_judged_nothing(o)) continue;
        oq_sb_printf(b, "<tr class=\"%s\"><td></td><td colspan=\"12\" class=\"reason not-compared\">output ",
                     cls ? cls : "");
        oq_sb_esc(b, oq_j_str(o, "name", "?"));
        char said[200];
        oq_sb_printf(b, ": %s</td></tr>\n",
                     oq_compare_not_compared_str(said, sizeof said, oq_j_int(o, "num_valid"), "the reference"));
    }
}

static void config_table(oq_sb *b, const json_t *configs, const oq_vd *d, const json_t *cache)
{
    const char *group = json_is_true(json_object_get(cache, "shared")) ? oq_j_str(cache, "group", "?") : NULL;
    oq_sb_puts(b, "<section id=\"configurations\">\n<h2>Configurations</h2>\n"
                  "<table id=\"config-table\"><tr><th>configuration</th><th>status</th><th>batches</th>"
                  "<th>worst output</th><th>max |error|</th><th>over tol.</th><th>NaN/Inf</th><th>padding &ne; 0</th>"
                  "<th>median ms/batch</th><th>p90 ms/batch</th><th>first call ms</th><th>kernels</th>"
                  "<th>placement</th></tr>\n");
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        const char *st = oq_vd_status(c), *cls = status_class(st);
        int ref = is_reference(c);
        const oq_vd_config *w = &d->configs[i];
        size_t ran = is_expected(c) ? d->n_batches : w->ran; /* expected: the saved outputs of every batch */
        oq_html_row_begin(b, oq_j_str(c, "name", "?"), cls);
        oq_sb_printf(b, "<td><a href=\"#cfg-%zu\">", i);
        oq_sb_esc(b, oq_j_str(c, "name", "?"));
        oq_sb_puts(b, "</a>");
        if (ref) oq_sb_puts(b, is_expected(c) ? " <span class=\"muted\">(reference: the saved outputs)</span>"
                                               : " <span class=\"muted\">(reference)</span>");
        oq_sb_puts(b, "</td>");
        /* the reference is not judged: it ran (or was read), or it is the error that stopped the run */
        oq_html_td_status(b, st);
        oq_sb_printf(b, "<td class=\"n\">%zu</td>", ran);
        oq_html_td(b, w->worst_output ? w->worst_output : "\xe2\x80\x93");
        if (w->worst_output) td_err(b, w->worst_abs, INFINITY);
        else td_num(b, NAN);
        if (w->worst_output) {
            td_int(b, w->over, 1);
            oq_sb_printf(b, "<td class=\"n%s\">%lld / %lld</td>", w->nan || w->inf ? " reason" : "", w->nan, w->inf);
            td_padding(b, w->pad, w->pad_reported);
        } else { /* nothing compared: no count to show */
            oq_sb_puts(b, "<td class=\"n\">&ndash;</td><td class=\"n\">&ndash;</td><td class=\"n\">&ndash;</td>");
        }
        td_num(b, w->median_ms);
        td_num(b, w->p90_ms);
        td_num(b, w->first_ms);
        oq_sb_puts(b, "<td>");
        kernels_text(b, c);
        oq_sb_puts(b, "</td><td>");
        placement_text(b, c);
        oq_sb_puts(b, "</td></tr>\n");
        if (json_object_get(c, "reason")) {
            oq_sb_printf(b, "<tr class=\"%s\"><td></td><td colspan=\"12\" class=\"%s\">", cls ? cls : "",
                         cls ? "reason" : "muted");
            oq_sb_esc(b, oq_j_str(c, "reason", ""));
            oq_sb_puts(b, "</td></tr>\n");
        }
        not_compared_rows(b, c, cls);
        cache_row(b, c, w, ref ? group : NULL);
    }
    oq_sb_puts_terms(b, "</table>\n<p class=\"muted\">Latency: the median and 90th percentile over batches of each batch's "
                        "median timed call (the first call of each batch is timed apart; the column shows batch 0's). "
                        "Errors over valid elements only; integer and bool outputs are compared exactly. Padding: padded "
                        "elements not exactly 0 where the padding is judged (red), and where it is reported, not judged "
                        "(the reference is not zero there either, or opts.padding OQ_PADDING_REPORT).</p>\n</section>\n");
}

static void worst_elements(oq_sb *b, const json_t *o)
{
    const json_t *ws = json_object_get(o, "worst");
    int exact = json_is_true(json_object_get(o, "exact"));
    if (!json_array_size(ws)) return;
    oq_sb_puts(b, exact ? "<span class=\"muted\">elements that differ:</span> " : "<span class=\"muted\">largest errors:</span> ");
    size_t i, k, shown = 0;
    json_t *w, *x;
    json_array_foreach(ws, i, w) {
        /* an exact comparison ranks the matching elements after the ones that differ: not listed */
        if (exact && json_equal(json_object_get(w, "got"), json_object_get(w, "expected"))) continue;
        oq_sb_puts(b, shown++ ? "; [" : "[");
        json_array_foreach(json_object_get(w, "coord"), k, x) oq_sb_printf(b, "%s%lld", k ? "," : "", (long long)json_integer_value(x));
        oq_sb_puts(b, "]");
        if (json_is_integer(json_object_get(w, "event_id"))) oq_sb_printf(b, " (event %lld)", oq_j_int(w, "event_id"));
        oq_sb_puts(b, " got ");
        oq_html_value(b, json_object_get(w, "got"));
        oq_sb_puts(b, " expected ");
        oq_html_value(b, json_object_get(w, "expected"));
    }
}

/* The padding cell of one output: judged, reported, or no padding (an output without the
 * mask's axes has every element valid). */
static void td_output_padding(oq_sb *b, const json_t *o)
{
    const json_t *p = json_object_get(o, "padding");
    long long nz = oq_j_int(p, "nonzero");
    if (json_is_false(json_object_get(p, "masked"))) {
        oq_sb_puts(b, "<td class=\"muted\">not masked: every element valid</td>");
        return;
    }
    if (oq_vd_padding_judged(o)) {
        td_int(b, nz, 1);
        return;
    }
    oq_sb_printf(b, "<td class=\"n muted\">%lld of %lld, reported, not judged</td>", nz, oq_j_int(p, "padded"));
}

/* One output's row of a batch (after the batch's own cells, on its first row). */
static void output_cells(oq_sb *b, const json_t *o, int passed)
{
    int exact = json_is_true(json_object_get(o, "exact"));
    const json_t *tol = json_object_get(o, "tolerance");
    /* a failed output's max |error| and max_rel read above atol and rtol however close */
    double atol = passed || exact ? INFINITY : oq_j_num(tol, "atol"), rtol = passed ? INFINITY : oq_j_num(tol, "rtol");
    oq_html_td(b, oq_j_str(o, "output", oq_j_str(o, "name", "?")));
    oq_html_td_status(b, passed ? "passed" : "failed");
    if (oq_compare_record_judged_nothing(o)) { /* its max_abs 0 is no error of 0 */
        oq_sb_puts(b, "<td class=\"n muted not-compared\">not compared</td>");
        td_num(b, NAN);
    } else {
        td_err(b, oq_compare_record_max(o, "max_abs"), atol);
        if (exact) td_num(b, NAN);
        else td_err(b, oq_compare_record_max(o, "max_rel"), rtol);
    }
    td_num(b, exact ? NAN : oq_compare_metric_back(json_object_get(o, "rms"))); /* NaN: no finite pair, none */
    oq_sb_printf(b, "<td class=\"n%s\">%lld / %lld</td>", oq_j_int(o, "over_tolerance") ? " reason" : "",
                 oq_j_int(o, "over_tolerance"), oq_j_int(o, "num_valid"));
    oq_sb_printf(b, "<td class=\"n\">%lld / %lld</td>", oq_j_int(o, "nan"), oq_j_int(o, "inf"));
    td_output_padding(b, o);
    if (exact) oq_sb_puts(b, "<td class=\"tol exact\">exact (equal values)</td></tr>\n");
    else {
        char rt[32], at[32]; /* as given: 0.10008144378662108, not 0.100081 */
        oq_sb_printf(b, "<td class=\"tol\">%s, %s</td></tr>\n", oq_real_str(oq_j_num(tol, "rtol"), 6, rt, sizeof rt),
                     oq_real_str(oq_j_num(tol, "atol"), 6, at, sizeof at));
    }
}

/* A batch's event indices as runs ("0-1499", "3, 7-9"), the first EVENT_RUNS of them: one
 * index each, 1500 events made a cell thousands of pixels wide that pushed the verdict columns
 * off the page. The count and every index stay in summary.json. */
enum { EVENT_RUNS = 4 };
static void event_cell(oq_sb *b, const json_t *idx)
{
    size_t n = json_array_size(idx), runs = 0;
    for (size_t k = 0; k < n;) {
        long long first = (long long)json_integer_value(json_array_get(idx, k)), last = first;
        for (k++; k < n && last < LLONG_MAX && json_integer_value(json_array_get(idx, k)) == last + 1; k++) last++;
        if (runs++ == EVENT_RUNS) {
            oq_sb_printf(b, ", &hellip; (%zu events; all in summary.json)", n);
            return;
        }
        oq_sb_printf(b, "%s%lld", runs > 1 ? ", " : "", first);
        if (last > first) oq_sb_printf(b, "&ndash;%lld", last);
    }
    if (n > 1) oq_sb_printf(b, " (%zu)", n);
}

/* The cells a batch's rows share: index, events, valid tokens, padded length, timing. */
static void batch_cells(oq_sb *b, const json_t *bt, const json_t *info, size_t rows)
{
    oq_sb_printf(b, "<td class=\"n\" rowspan=\"%zu\">%lld", rows, oq_j_int(bt, "index"));
    const char *source = oq_j_str(info, "source", NULL); /* the user's file it was read from */
    if (source) {
        oq_sb_puts(b, "<br><span class=\"muted source\">");
        oq_sb_esc(b, source);
        oq_sb_puts(b, "</span>");
    }
    oq_sb_printf(b, "</td><td rowspan=\"%zu\">", rows);
    event_cell(b, json_object_get(info, "event_indices"));
    oq_sb_printf(b, "</td><td class=\"n\" rowspan=\"%zu\">%lld</td><td class=\"n\" rowspan=\"%zu\">%lld</td>", rows,
                 oq_j_int(info, "valid_size"), rows, oq_j_int(info, "padded_length"));
    oq_sb_printf(b, "<td class=\"n\" rowspan=\"%zu\">", rows);
    oq_html_num(b, oq_j_num(bt, "first_call_s") * 1e3);
    oq_sb_printf(b, "</td><td class=\"n\" rowspan=\"%zu\">", rows);
    if (json_is_number(json_object_get(bt, "median_s"))) oq_html_num(b, oq_j_num(bt, "median_s") * 1e3);
    else oq_sb_puts(b, "&ndash;"); /* one call: nothing repeated */
    oq_sb_puts(b, "</td>");
}

/* The rows of the batches shown; when some are left out, how many and which are shown. */
static void batch_rows(oq_sb *b, const oq_vd_config *vc, const oq_vd *d)
{
    size_t shown = json_array_size(vc->rows);
    if (shown < vc->ran)
        oq_sb_printf(b, "<p class=\"muted rows-left-out\">%zu of %zu batches shown: the first %d failing and the %d "
                        "slowest of the others; %zu more not shown (every batch is in summary.json and "
                        "validate.csv).</p>\n", shown, vc->ran, OQ_VD_ROWS_EACH, OQ_VD_ROWS_EACH, vc->ran - shown);
    oq_sb_puts(b, "<table class=\"batches\"><tr><th>batch</th><th>events</th><th>valid tokens</th><th>padded L</th>"
                  "<th>first call ms</th><th>median ms</th><th>output</th><th>status</th><th>max |error|</th>"
                  "<th>max rel.</th><th>rms</th><th>over tol. / valid</th><th>NaN/Inf</th><th>padding &ne; 0</th>"
                  "<th>rtol, atol</th></tr>\n");
    size_t i, j;
    json_t *bt, *o;
    json_array_foreach(vc->rows, i, bt) {
        const json_t *info = oq_vd_info(d, oq_j_int(bt, "index"));
        const json_t *outs = json_object_get(bt, "outputs");
        size_t nout = json_array_size(outs) ? json_array_size(outs) : 1, n = nout;
        json_array_foreach(outs, j, o) n += !json_is_true(json_object_get(o, "passed")); /* + a worst row */
        for (j = 0; j < nout; j++) {
            o = json_array_get(outs, j);
            int passed = !o || json_is_true(json_object_get(o, "passed"));
            oq_sb_printf(b, "<tr class=\"batch%s\" data-batch=\"%lld\">", passed ? "" : " failed", oq_j_int(bt, "index"));
            if (j == 0) batch_cells(b, bt, info, n);
            if (!o) {
                oq_sb_puts(b, "<td colspan=\"9\" class=\"muted\">reference: not compared</td></tr>\n");
                continue;
            }
            output_cells(b, o, passed);
            if (passed) continue;
            oq_sb_printf(b, "<tr class=\"batch failed\" data-batch=\"%lld\"><td colspan=\"9\">", oq_j_int(bt, "index"));
            worst_elements(b, o);
            oq_sb_puts(b, "</td></tr>\n");
        }
    }
    oq_sb_puts(b, "</table>\n");
}

/* Outputs whose padding was not zero and not judged, once per output (the first batch that
 * shows it), with why: what the text output prints under the configuration. */
static void padding_notes(oq_sb *b, const oq_vd_config *vc)
{
    size_t i;
    json_t *n;
    char said[64];
    json_array_foreach(vc->notes, i, n) {
        if (i == 0) oq_sb_puts(b, "<ul class=\"padding-notes\">\n");
        oq_sb_puts(b, "<li class=\"padding-note\">");
        oq_sb_escf(b, "padding: %s has %lld of %lld padded elements non-zero (batch %lld), reported, not judged: %s",
                   oq_j_str(n, "output", "?"), oq_j_int(n, "nonzero"), oq_j_int(n, "padded"), oq_j_int(n, "batch"),
                   !strcmp(oq_j_str(n, "rule", ""), "report") ? oq_terms("opts.padding OQ_PADDING_REPORT", said, sizeof said)
                       : "the reference is not zero there (a language model's logits and hidden states are not), "
                         "so the runtime need not be either");
        oq_sb_puts(b, "</li>\n");
    }
    if (json_array_size(vc->notes)) oq_sb_puts(b, "</ul>\n");
}

/* The `expected` reference: the saved outputs, file by file (the first OQ_VD_ROWS_ALL). */
static void expected_files(oq_sb *b, const oq_vd *d)
{
    oq_sb_puts(b, "<div class=\"expected-files\"><p>The reference is the outputs saved with the inputs (e.g. "
                  "PyTorch's): nothing ran for it; every configuration after it is judged against these values, "
                  "batch by batch, on the valid elements.</p>\n<ul>\n");
    size_t i;
    json_t *bt;
    json_array_foreach(d->infos, i, bt) {
        oq_sb_printf(b, "<li>batch %lld: <code>", oq_j_int(bt, "index"));
        oq_sb_esc(b, oq_j_str(bt, "expected", "(not recorded)"));
        oq_sb_puts(b, "</code></li>\n");
    }
    if (d->n_batches > json_array_size(d->infos))
        oq_sb_printf(b, "<li class=\"muted\">and %zu more (summary.json lists them)</li>\n",
                     d->n_batches - json_array_size(d->infos));
    oq_sb_puts(b, "</ul>\n</div>\n");
}

/* Who saved the outputs the `expected` reference is made of (their .npz comment), and whether the
 * ORT under test (the first configuration's that ran ORT) is another build. */
static void saved_by(oq_sb *b, const json_t *c, const json_t *configs)
{
    const json_t *s = json_object_get(c, "saved_by"), *ort = NULL, *k;
    size_t i;
    if (!s) return;
    json_array_foreach(configs, i, k) if (!ort && i) ort = json_object_get(k, "onnxruntime");
    oq_sb_puts(b, "<p class=\"saved-by\">Saved by ONNX Runtime ");
    oq_sb_escf(b, "%s (%s", oq_j_str(s, "ort_version", "?"), oq_j_str(s, "ort_library", "?"));
    if (*oq_j_str(s, "ort_library_sha256", "")) oq_sb_escf(b, ", SHA-256 %s", oq_j_str(s, "ort_library_sha256", ""));
    oq_sb_escf(b, ") as %s on %s", oq_j_str(s, "config", "?"), oq_j_str(s, "provider", "?"));
    if (ort && json_is_false(json_object_get(s, "same_ort")))
        oq_sb_escf(b, "; replayed on ONNX Runtime %s (%s): another build", oq_j_str(ort, "version", "?"),
                   oq_j_str(ort, "library", "?"));
    else if (ort && json_is_true(json_object_get(s, "same_ort")))
        oq_sb_puts(b, "; replayed on the same build");
    oq_sb_puts(b, ".</p>\n");
}

/* A string's or an integer's value as text. */
static const char *value_str(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v)) return json_string_value(v);
    snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    return buf;
}

/* ", ORT's WHAT V (set by the session config entry KEY, over the option's O)" where an entry set
 * the `field` ORT ran with (its FIELD_from, FIELD_option). */
static void session_entry_note(oq_sb *b, const json_t *c, const char *field, const char *what, const char *key)
{
    char from[64], option[64];
    snprintf(from, sizeof from, "%s_from", field);
    snprintf(option, sizeof option, "%s_option", field);
    if (strcmp(oq_j_str(c, from, ""), "session_config")) return;
    char v[32], o[32];
    oq_sb_escf(b, ", ORT's %s %s (set by the session config entry %s, over the option's %s)", what,
               value_str(json_object_get(c, field), v, sizeof v), key, value_str(json_object_get(c, option), o, sizeof o));
}

/* ", ORT's intra-op threads 2 (its default for 0: the physical cores)" where ORT picked `field`'s count. */
static void ort_default_note(oq_sb *b, const json_t *c, const char *field, const char *what)
{
    char from[64];
    snprintf(from, sizeof from, "%s_from", field);
    if (!strcmp(oq_j_str(c, from, ""), "ort-default"))
        oq_sb_escf(b, ", ORT's %s %lld (its default for 0: the physical cores)", what,
                   (long long)json_integer_value(json_object_get(c, field)));
}

static void worker_lines(oq_sb *b, const json_t *c)
{
    const json_t *w = json_object_get(c, "worker");
    if (w) {
        oq_sb_puts(b, "<p class=\"muted\">worker: ");
        oq_sb_escf(b, "%s after %.2f s", oq_j_str(w, "ended", "?"), oq_j_num(w, "seconds"));
        oq_sb_puts(b, "</p>\n");
        if (*oq_j_str(w, "stderr_tail", "")) {
            oq_sb_puts(b, "<pre>");
            oq_sb_esc(b, oq_j_str(w, "stderr_tail", ""));
            oq_sb_puts(b, "</pre>\n");
        }
    }
    if (json_object_get(c, "model_file")) {
        oq_sb_puts(b, "<p>model <code>");
        oq_sb_esc(b, oq_j_str(c, "model_file", ""));
        oq_sb_puts(b, "</code>");
        /* a skipped configuration's session was tried and refused (no provider here): none was made */
        if (json_is_number(json_object_get(c, "session_create_s")))
            oq_sb_printf(b, ", session %s %.3f s", strcmp(oq_j_str(c, "status", ""), "skipped") ? "created in" : "refused after",
                         oq_j_num(c, "session_create_s"));
        if (json_is_integer(json_object_get(c, "graph_opt_level"))) /* the option or an entry chose it */
            oq_sb_printf(b, ", ORT's graph optimizations at level %lld",
                         (long long)json_integer_value(json_object_get(c, "graph_opt_level")));
        if (!strcmp(oq_j_str(c, "graph_opt_level_from", ""), "session_config")) /* ORT took it over the option */
            oq_sb_printf(b, " (set by the session config entry session.graph_optimization_level, over the level "
                         "option's %lld)", json_is_integer(json_object_get(c, "graph_opt_option")) &&
                         json_integer_value(json_object_get(c, "graph_opt_option")) >= 0
                             ? (long long)json_integer_value(json_object_get(c, "graph_opt_option")) : 99LL);
        session_entry_note(b, c, "threads", "intra-op threads", "session.intra_op_num_threads");
        ort_default_note(b, c, "threads", "intra-op threads");
        if (*oq_j_str(c, "thread_affinities", ""))
            oq_sb_escf(b, ", intra-op thread affinities %s (session.intra_op_thread_affinities)",
                       oq_j_str(c, "thread_affinities", ""));
        session_entry_note(b, c, "inter_op_threads", "inter-op threads",
                           "session.inter_op_num_threads or session.execution_mode");
        ort_default_note(b, c, "inter_op_threads", "inter-op threads");
        session_entry_note(b, c, "execution_mode", "execution mode", "session.execution_mode");
        oq_sb_puts(b, "</p>\n");
    }
}

static void config_details(oq_sb *b, const json_t *configs, const oq_vd *d)
{
    oq_sb_puts(b, "<section id=\"details\">\n<h2>Per batch and output</h2>\n");
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        const char *st = oq_vd_status(c), *cls = status_class(st);
        oq_sb_printf(b, "<details id=\"cfg-%zu\" class=\"config%s%s\"%s data-status=\"", i, cls ? " " : "", cls ? cls : "",
                     cls ? " open" : "");
        oq_sb_esc(b, st);
        oq_sb_puts(b, "\"><summary>");
        if (!is_reference(c)) oq_sb_escf(b, "%s: %s", oq_j_str(c, "name", "?"), st);
        else if (!strcmp(st, "reference"))
            oq_sb_escf(b, "%s: reference%s", oq_j_str(c, "name", "?"), is_expected(c) ? " (the saved outputs)" : "");
        else oq_sb_escf(b, "%s: %s (reference)", oq_j_str(c, "name", "?"), st);
        oq_sb_puts(b, "</summary>\n");
        if (json_object_get(c, "reason") && !json_object_get(c, "refusal")) { /* a refusal says it below */
            oq_sb_printf(b, "<p class=\"%s\">", cls ? "reason" : "muted");
            oq_sb_esc(b, oq_j_str(c, "reason", ""));
            oq_sb_puts(b, "</p>\n");
        }
        if (json_object_get(c, "refusal"))
            oq_html_refusal(b, json_object_get(c, "refusal"), oq_j_str(json_object_get(c, "refusal"), "raw", NULL));
        if (is_expected(c)) saved_by(b, c, configs);
        if (is_expected(c)) expected_files(b, d);
        worker_lines(b, c);
        padding_notes(b, &d->configs[i]);
        if (d->configs[i].ran) batch_rows(b, &d->configs[i], d);
        else if (!is_expected(c)) oq_sb_puts(b, "<p class=\"muted\">No batch ran.</p>\n");
        oq_sb_puts(b, "</details>\n");
    }
    oq_sb_puts(b, "</section>\n");
}

static void list_strings(oq_sb *b, const json_t *arr, const char *cls)
{
    if (!json_array_size(arr)) return;
    oq_sb_printf(b, "<ul class=\"%s\">\n", cls);
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s) {
        oq_sb_puts(b, "<li>");
        oq_sb_esc(b, json_string_value(s));
        oq_sb_puts(b, "</li>\n");
    }
    oq_sb_puts(b, "</ul>\n");
}

/* " (2 of 3 failures on nodes that ran MATH)": the fallback a fast-kernel expectation
 * guards against, told apart from other misses; nothing when there is no count. */
static void math_failures(oq_sb *b, const json_t *d)
{
    size_t nf = json_array_size(json_object_get(d, "failures"));
    if (!nf || !json_is_integer(json_object_get(d, "math_failures"))) return;
    oq_sb_printf(b, " <span class=\"math-failures\">(%lld of %zu failure%s on nodes that ran MATH)</span>",
                 oq_j_int(d, "math_failures"), nf, nf > 1 ? "s" : "");
}

static void dispatch_block(oq_sb *b, const json_t *d, const json_t *teeth)
{
    route rt[MAX_ROUTES];
    size_t n = routes_of(json_object_get(d, "records"), rt, MAX_ROUTES);
    oq_sb_puts(b, "<h4>Kernel per attention node (ORT's routing lines)</h4>\n");
    if (!n) {
        oq_sb_puts(b, "<p class=\"muted\">No routing line was printed for this session.</p>\n");
    } else {
        oq_sb_puts(b, "<table class=\"dispatch\"><tr><th>node</th><th>op</th><th>dtype</th><th>kernel</th>"
                      "<th>routing lines</th></tr>\n");
        for (size_t i = 0; i < n; i++) {
            oq_sb_puts(b, "<tr>");
            oq_html_td(b, oq_j_str(rt[i].rec, "node", ""));
            oq_html_td(b, oq_j_str(rt[i].rec, "op", ""));
            oq_html_td(b, oq_j_str(rt[i].rec, "dtype", ""));
            oq_html_td(b, oq_j_str(rt[i].rec, "kernel", ""));
            oq_sb_printf(b, "<td class=\"n\">%d</td></tr>\n", rt[i].lines);
        }
        oq_sb_puts(b, "</table>\n");
    }
    if (json_object_get(d, "passed")) {
        const char *v = json_is_true(json_object_get(d, "passed")) ? "passed" : "failed";
        oq_sb_printf(b, "<p>expectations: <span class=\"status %s\">%s</span>", v, v);
        math_failures(b, d);
        oq_sb_puts(b, "</p>\n");
    }
    list_strings(b, json_object_get(d, "failures"), "reason");
    if (teeth) {
        oq_sb_puts_terms(b, "<p>opts.prove_teeth: ");
        oq_sb_esc(b, oq_j_str(teeth, "verdict", ""));
        math_failures(b, json_object_get(teeth, "rerun_dispatch"));
        oq_sb_puts(b, "</p>\n");
    }
}

static void placement_block(oq_sb *b, const json_t *cfg, const json_t *p)
{
    oq_sb_puts(b, "<h4>Placement</h4>\n");
    const json_t *eps = json_object_get(p, "eps");
    size_t i;
    json_t *e;
    if (json_array_size(eps)) {
        oq_sb_puts(b, "<table><tr><th>execution provider</th><th>nodes</th><th>runs</th><th>time ms</th></tr>\n");
        json_array_foreach(eps, i, e) {
            oq_sb_puts(b, "<tr>");
            oq_html_td(b, oq_j_str(e, "ep", ""));
            oq_sb_printf(b, "<td class=\"n\">%lld</td><td class=\"n\">%lld</td>", oq_j_int(e, "nodes"), oq_j_int(e, "runs"));
            td_num(b, oq_j_num(e, "us") / 1000.0);
            oq_sb_puts(b, "</tr>\n");
        }
        oq_sb_puts(b, "</table>\n");
    }
    /* the reference and cpu configurations are never judged, whether it was asked for or not */
    if (json_is_false(json_object_get(p, "required")) && (is_reference(cfg) || !strcmp(oq_j_str(cfg, "runtime", ""), "cpu")))
        oq_sb_puts(b, "<p class=\"muted\">full-GPU check: not judged here (it judges configurations under test on a "
                      "GPU execution provider): evidence only</p>\n");
    else if (json_is_false(json_object_get(p, "required")))
        oq_sb_puts_terms(b, "<p class=\"muted\">full-GPU check: not asked for (opts.require_full_gpu): evidence only</p>\n");
    else if (json_object_get(p, "passed"))
        oq_sb_printf(b, "<p>full-GPU check: <span class=\"status %s\">%s</span></p>\n",
                     json_is_true(json_object_get(p, "passed")) ? "passed" : "failed",
                     json_is_true(json_object_get(p, "passed")) ? "passed" : "failed");
    list_strings(b, json_object_get(p, "failures"), "reason");
    list_strings(b, json_object_get(p, "notes"), "muted");
    const json_t *nodes = json_object_get(p, "nodes");
    if (!json_array_size(nodes)) return;
    oq_sb_printf(b, "<details><summary>%zu nodes</summary>\n<table><tr><th>node</th><th>op</th><th>assigned</th>"
                    "<th>profiled</th><th>class</th></tr>\n", json_array_size(nodes));
    json_array_foreach(nodes, i, e) {
        const char *cls = oq_j_str(e, "class", "");
        oq_sb_printf(b, "<tr class=\"%s\">", !strcmp(cls, "cpu_compute") || !strcmp(cls, "ep_mismatch") ? "failed" : "");
        oq_html_td(b, oq_j_str(e, "name", ""));
        oq_html_td(b, oq_j_str(e, "op", ""));
        oq_html_td(b, oq_j_str(e, "ep_assigned", ""));
        oq_html_td(b, oq_j_str(e, "ep_profiled", ""));
        oq_html_td(b, cls);
        oq_sb_puts(b, "</tr>\n");
    }
    oq_sb_puts(b, "</table>\n</details>\n");
}

static void config_heading(oq_sb *b, const json_t *cfg)
{
    oq_sb_puts(b, "<h3>");
    oq_sb_esc(b, oq_j_str(cfg, "name", "?"));
    oq_sb_puts(b, "</h3>\n");
}

static void evidence_section(oq_sb *b, const json_t *configs)
{
    oq_sb_puts(b, "<section id=\"dispatch\">\n<h2>Dispatch and placement</h2>\n");
    size_t i, any = 0;
    json_t *c;
    json_array_foreach(configs, i, c) {
        const json_t *d = json_object_get(c, "dispatch"), *p = json_object_get(c, "placement");
        if (!d && !p) continue;
        any++;
        config_heading(b, c);
        if (d) dispatch_block(b, d, json_object_get(c, "teeth"));
        if (p) placement_block(b, c, p);
    }
    if (!any)
        oq_sb_puts_terms(b, "<p class=\"muted\">Not recorded: routing lines exist on GPU execution providers only, "
                            "and placement is recorded with opts.require_full_gpu or opts.profile.</p>\n");
    oq_sb_puts(b, "</section>\n");
}

static void advice_section(oq_sb *b, const json_t *configs)
{
    oq_sb_puts(b, "<section id=\"advice\">\n<h2>Advice</h2>\n");
    size_t i, any = 0;
    json_t *c;
    json_array_foreach(configs, i, c) {
        const json_t *adv = json_object_get(json_object_get(c, "dispatch"), "advice");
        if (!json_array_size(adv)) continue;
        any++;
        config_heading(b, c);
        list_strings(b, adv, "advice");
    }
    if (!any) oq_sb_puts(b, "<p class=\"muted\">None: no node missed the kernel it could have had.</p>\n");
    oq_sb_puts(b, "</section>\n");
}

static void batches_section(oq_sb *b, const oq_vd *d)
{
    size_t shown = json_array_size(d->infos);
    oq_sb_printf(b, "<section id=\"inputs\">\n<h2>Batches</h2>\n<details><summary>%zu batches</summary>\n", d->n_batches);
    if (shown < d->n_batches)
        oq_sb_printf(b, "<p class=\"muted\">The first %zu shown; summary.json lists all %zu.</p>\n", shown, d->n_batches);
    oq_sb_puts(b, "<table><tr><th>batch</th><th>inputs</th><th>batch size</th><th>padded L</th><th>lengths</th>"
                  "<th>valid tokens</th></tr>\n");
    size_t i, k;
    json_t *bt, *x;
    json_array_foreach(d->infos, i, bt) {
        oq_sb_printf(b, "<tr><td class=\"n\">%lld</td><td><code>", oq_j_int(bt, "index"));
        oq_sb_esc(b, oq_j_str(bt, "inputs", ""));
        oq_sb_printf(b, "</code></td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td>", oq_j_int(bt, "batch_size"),
                     oq_j_int(bt, "padded_length"));
        json_array_foreach(json_object_get(bt, "lengths"), k, x) oq_sb_printf(b, "%s%lld", k ? "," : "", (long long)json_integer_value(x));
        oq_sb_printf(b, "</td><td class=\"n\">%lld</td></tr>\n", oq_j_int(bt, "valid_size"));
    }
    oq_sb_puts(b, "</table>\n</details>\n</section>\n");
}

/* The model's inputs, read by name from each .npz, and the one the mask contract applied to. */
static void model_inputs_section(oq_sb *b, const json_t *mi)
{
    if (!mi) return;
    const char *mask = oq_j_str(mi, "mask", NULL);
    oq_sb_puts(b, "<section id=\"model-inputs\">\n<h2>Model inputs</h2>\n<table><tr><th>input</th><th>role</th></tr>\n");
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(mi, "names"), i, n) {
        const char *name = json_string_value(n) ? json_string_value(n) : "?";
        int is_mask = mask && !strcmp(name, mask);
        oq_sb_printf(b, "<tr%s><td><code>", is_mask ? " class=\"mask-input\"" : "");
        oq_sb_esc(b, name);
        oq_sb_puts(b, is_mask ? "</code></td><td>the mask: each row a valid prefix, then padding; its rows give "
                                "each event's length</td></tr>\n"
                              : "</code></td><td class=\"muted\">read from the .npz member of its name</td></tr>\n");
    }
    oq_sb_puts(b, "</table>\n");
    if (!mask)
        oq_sb_puts(b, "<p id=\"no-mask\">No mask input: no mask contract, and every element of every output is "
                      "valid (compared).</p>\n");
    oq_sb_puts(b, "</section>\n");
}

/* The warnings of the run's evidence: the parent's (a session config key passed unchecked to a
 * newer ORT, said before the run) and each worker's (a second ONNX Runtime mapped), each once. */
static json_t *evidence_warnings(const json_t *s)
{
    json_t *w = json_array();
    const json_t *system = json_object_get(json_object_get(s, "evidence"), "system");
    oq_html_warnings_add(w, json_object_get(system, "warnings"));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(s, "configs"), i, c)
        oq_html_warnings_add(w, json_object_get(json_object_get(c, "evidence"), "warnings"));
    return w;
}

/* ---- Shards of a merged run (`ortqual merge`, summary.json's "shards") ---------------- */

/* The entry of shard `index` in shards.reported or shards.problems, or NULL. */
static const json_t *shard_entry(const json_t *list, long long index)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x) if (oq_j_int(x, "index") == index) return x;
    return NULL;
}

/* In the banner: the shards that did not report (each fails the merge, docs/scale-out.md),
 * all of them, as verdict_reason names only the first; or that every shard reported. */
static void shards_banner(oq_sb *b, const json_t *sh)
{
    if (!sh) return;
    const json_t *problems = json_object_get(sh, "problems");
    long long count = oq_j_int(sh, "count");
    if (!json_array_size(problems)) {
        oq_sb_puts(b, "<p id=\"verdict-shards\">");
        oq_sb_escf(b, "merged from %lld shards by %s, every shard reported", count, oq_j_str(sh, "by", "?"));
        oq_sb_puts(b, "</p>\n");
        return;
    }
    oq_sb_puts(b, "<p id=\"verdict-shards\" class=\"shard-problems\">");
    oq_sb_escf(b, "%zu of %lld shards did not report: ", json_array_size(problems), count);
    size_t i;
    json_t *p;
    json_array_foreach(problems, i, p)
        oq_sb_escf(b, "%sshard %lld %s: %s", i ? "; " : "", oq_j_int(p, "index"), oq_j_str(p, "state", "missing"),
                   oq_j_str(p, "detail", ""));
    oq_sb_puts(b, "</p>\n");
}

/* In a shard's banner: which shard, and that the campaign's verdict is the merge's. */
static void shard_banner(oq_sb *b, const json_t *s)
{
    char note[512];
    if (!oq_report_shard_note(s, note, sizeof note)) return;
    oq_sb_puts(b, "<p id=\"verdict-shard\">");
    oq_sb_esc(b, note);
    oq_sb_puts(b, "</p>\n");
}

/* "12345_3" (an array task), "12345" (a plain job) or empty. */
static void slurm_td(oq_sb *b, const json_t *slurm)
{
    const char *array = oq_j_str(slurm, "array_job_id", NULL), *task = oq_j_str(slurm, "array_task_id", NULL);
    oq_sb_puts(b, "<td>");
    if (array && task) oq_sb_escf(b, "%s_%s", array, task);
    else oq_sb_esc(b, oq_j_str(slurm, "job_id", ""));
    oq_sb_puts(b, "</td>");
}

/* One shard: what it reported, or why it did not (in red: it fails the run). */
static void shard_row(oq_sb *b, long long index, const json_t *reported, const json_t *problem)
{
    oq_sb_printf(b, "<tr class=\"shard%s\" data-shard=\"%lld\"><td class=\"n\">%lld</td>",
                 reported ? "" : " failed", index, index);
    if (reported) {
        oq_sb_puts(b, "<td class=\"status reported\">reported</td>");
        oq_html_td(b, oq_j_str(reported, "host", ""));
        oq_html_td(b, oq_j_str(reported, "start", ""));
        oq_html_td(b, oq_j_str(reported, "end", ""));
        oq_html_td_status(b, oq_j_str(reported, "verdict", "failed"));
        slurm_td(b, json_object_get(reported, "slurm"));
        oq_sb_puts(b, "<td></td></tr>\n");
        return;
    }
    /* a shard the summary has no word of is not a pass either */
    oq_sb_puts(b, "<td class=\"status failed\">");
    oq_sb_esc(b, problem ? oq_j_str(problem, "state", "missing") : "unknown");
    oq_sb_puts(b, "</td><td></td><td></td><td></td><td></td><td></td><td class=\"reason\">");
    oq_sb_esc(b, problem ? oq_j_str(problem, "detail", "") : "not in the merged summary");
    oq_sb_puts(b, "</td></tr>\n");
}

static void shards_section(oq_sb *b, const json_t *sh)
{
    if (!sh) return;
    const json_t *merged = json_object_get(sh, "merged");
    long long count = oq_j_int(sh, "count");
    oq_sb_puts(b, "<section id=\"shards\">\n<h2>Shards</h2>\n<p>");
    oq_sb_escf(b, "%lld shards by %s, merged on %s at %s.", count, oq_j_str(sh, "by", "?"),
               oq_j_str(merged, "host", "?"), oq_j_str(merged, "time", "?"));
    oq_sb_puts(b, "</p>\n<table id=\"shard-table\"><tr><th>shard</th><th>state</th><th>host</th><th>start</th>"
                  "<th>end</th><th>verdict</th><th>SLURM job</th><th>why it did not report</th></tr>\n");
    const json_t *reported = json_object_get(sh, "reported"), *problems = json_object_get(sh, "problems");
    for (long long k = 0; k < count && k < 1000000; k++) {
        const json_t *p = shard_entry(problems, k);
        shard_row(b, k, p ? NULL : shard_entry(reported, k), p);
    }
    oq_sb_puts(b, "</table>\n</section>\n");
}

/* Configurations under test (not the reference) by status. */
typedef struct counts {
    long long passed, failed, skipped, error, not_run;
} counts;

static counts counts_of(const json_t *configs, char *names, size_t cap, const char *verdict)
{
    counts n = {0, 0, 0, 0, 0};
    /* the headline names what made the verdict: the failed configurations, or those in error */
    const char *named = !strcmp(verdict, "failed") ? "failed" : !strcmp(verdict, "error") ? "error" : "";
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        const char *st = oq_vd_status(c);
        if (!strcmp(st, named) && strlen(names) + 80 < cap)
            snprintf(names + strlen(names), cap - strlen(names), "%s%s", *names ? ", " : "", oq_j_str(c, "name", "?"));
        if (is_reference(c)) continue;
        if (!strcmp(st, "passed")) n.passed++;
        else if (!strcmp(st, "skipped")) n.skipped++;
        else if (!strcmp(st, "error")) n.error++;
        else if (!strcmp(st, "not-run")) n.not_run++;
        else n.failed++;
    }
    return n;
}

/* "reference expected (the saved outputs) · 1 under test: 0 passed, ... · 1 batch, ..." */
static void detail_line(char *out, size_t cap, const json_t *s, counts n, const oq_vd *d)
{
    const json_t *configs = json_object_get(s, "configs"), *ref = NULL;
    long long valid = d->valid, events = d->events, under = 0;
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        if (is_reference(c) && !ref) ref = c;
        under += !is_reference(c);
    }
    char r[320] = "no reference";
    if (ref)
        snprintf(r, sizeof r, "reference %s%s", oq_j_str(ref, "name", "?"),
                 is_expected(ref) ? " (the saved outputs)" : strcmp(oq_vd_status(ref), "reference") ? " (did not run)" : "");
    snprintf(out, cap, "%s \xc2\xb7 %lld under test: %lld passed, %lld failed, %lld skipped, %lld runtime error%s, %lld not "
             "run \xc2\xb7 %zu batch%s, %lld events, %lld valid tokens \xc2\xb7 %s to %s", r, under, n.passed, n.failed,
             n.skipped, n.error, n.error == 1 ? "" : "s", n.not_run, d->n_batches,
             d->n_batches == 1 ? "" : "es", events, valid, oq_j_str(s, "start", "?"), oq_j_str(s, "end", "?"));
}

/* Configurations under test that passed on at least one batch: what a pass stands on. */
static long long passed_on_batches(const json_t *configs)
{
    long long n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c)
        n += !is_reference(c) && !strcmp(oq_j_str(c, "status", ""), "passed") &&
             json_array_size(json_object_get(c, "batches")) > 0;
    return n;
}

oq_status oq_report_validate_check(const json_t *s, const char *name, oq_err *err)
{
    const json_t *configs = json_object_get(s, "configs");
    if (!json_is_array(configs)) return oq_err_set(err, OQ_ERR_FORMAT, "%s: no \"configs\" array", name);
    /* each configuration that passed, by the numbers it is drawn with: a tolerance {"rtol": "x"}
     * was drawn as "rtol 0, atol 0", and PASSED beside max|error| 5 with atol 1e-5 */
    oq_status st = oq_compare_summary_holds(s, name, err);
    if (st) return st;
    /* a pass needs a configuration under test that passed (oq_validate_judge) on batches it
     * was compared on: a summary that says passed without one was drawn as a green PASSED,
     * "0 under test", or "0 batches" with a JUnit of zero tests */
    char names[8];
    if (strcmp(oq_j_str(s, "verdict", ""), "passed")) return OQ_OK;
    if (!counts_of(configs, names, sizeof names, "").passed)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: verdict 'passed', but no configuration under test passed", name);
    if (!passed_on_batches(configs))
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: verdict 'passed', but no configuration under test that passed has a batch: "
                          "nothing was compared", name);
    return OQ_OK;
}

oq_status oq_report_validate(oq_sb *b, const json_t *s, const char *name, oq_err *err)
{
    oq_vd d;
    oq_status st = oq_vd_of_doc(&d, s, err);
    if (!st) st = oq_report_validate_vd(b, s, &d, name, err);
    oq_vd_clear(&d);
    return st;
}

/* A configuration that passed in a summary from before outputs were aggregated: its records,
 * streamed (the document holds samples of them), as the digest found them. */
static oq_status records_hold(const json_t *configs, const oq_vd *d, const char *name, oq_err *err)
{
    size_t k;
    json_t *c;
    oq_status st = OQ_OK;
    json_array_foreach(configs, k, c) if (!st && k < d->n_configs && d->configs[k].contra && !is_reference(c) &&
                                          !json_object_get(c, "outputs") && !strcmp(oq_vd_status(c), "passed"))
        st = oq_compare_batch_holds(d->configs[k].contra, name, oq_j_str(c, "config", "a configuration"), err);
    return st;
}

oq_status oq_report_validate_vd(oq_sb *b, const json_t *s, const oq_vd *d, const char *name, oq_err *err)
{
    oq_status st = oq_report_validate_check(s, name, err);
    if (!st) st = records_hold(json_object_get(s, "configs"), d, name, err);
    if (st) return st;
    const json_t *configs = json_object_get(s, "configs");
    const json_t *ev = json_object_get(s, "evidence"), *cmd = json_object_get(ev, "command");
    const char *sub = json_string_value(json_array_get(cmd, 0)) ? json_string_value(json_array_get(cmd, 0)) : "validate";
    /* the verdict as written (a summary without one is not shown as a pass) */
    const char *verdict = oq_html_verdict_class(oq_j_str(s, "verdict", "failed"));
    char tool[64], names[512] = "", reason[1024] = "", detail[768], said[64];
    counts n = counts_of(configs, names, sizeof names, verdict);
    detail_line(detail, sizeof detail, s, n, d);
    snprintf(tool, sizeof tool, "ortqual %s", sub);
    if (json_is_string(json_object_get(s, "verdict_reason")))
        snprintf(reason, sizeof reason, "%s%s", oq_j_str(s, "verdict_reason", ""),
                 strcmp(verdict, "untested") ? ""
                 : json_is_integer(json_object_get(s, "exit_status")) && !oq_j_int(s, "exit_status")
                     ? oq_terms(" (accepted by opts.allow_skip)", said, sizeof said)
                     : oq_terms(" (opts.allow_skip accepts that)", said, sizeof said));
    oq_html_begin(b, name, verdict);
    const json_t *shards = json_object_get(s, "shards");
    oq_html_verdict_open(b, tool, verdict, names, reason, detail);
    shards_banner(b, shards);
    shard_banner(b, s);
    oq_html_verdict_close(b);
    oq_sb_puts(b, "<nav>");
    if (shards) oq_sb_puts(b, "<a href=\"#shards\">shards</a>");
    json_t *warnings = evidence_warnings(s);
    if (json_array_size(json_object_get(s, "notes")) || json_array_size(warnings))
        oq_sb_puts(b, "<a href=\"#notes\">notes</a>");
    oq_sb_puts(b, "<a href=\"#configurations\">configurations</a><a href=\"#details\">per batch</a>"
                  "<a href=\"#dispatch\">dispatch and placement</a><a href=\"#plots\">figures</a>"
                  "<a href=\"#advice\">advice</a><a href=\"#model-inputs\">model inputs</a>"
                  "<a href=\"#environment\">environment</a><a href=\"#command\">command line</a>"
                  "<a href=\"#inputs\">batches</a></nav>\n");
    shards_section(b, shards);
    oq_html_notes(b, json_object_get(s, "notes"), warnings);
    json_decref(warnings);
    config_table(b, configs, d, json_object_get(s, "reference_cache"));
    config_details(b, configs, d);
    evidence_section(b, configs);
    oq_html_figures(b, s, name);
    advice_section(b, configs);
    model_inputs_section(b, json_object_get(s, "model_inputs"));
    oq_html_environment(b, json_object_get(ev, "system"), configs, json_object_get(ev, "onnxruntime_builds"));
    oq_html_command(b, cmd, "ortqual", oq_j_str(ev, "cwd", NULL));
    batches_section(b, d);
    oq_html_end(b);
    return OQ_OK;
}
