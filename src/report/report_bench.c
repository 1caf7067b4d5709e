/* report.html of a bench summary.json (`ortqual bench`). The banner is the summary's verdict,
 * the one its exit status gave (oq_bench_verdict_of): skipped, unsupported and oom rows are
 * expected outcomes of a scaling sweep, a failed row is not, a row ONNX Runtime could not run is
 * a runtime error, and a sweep in which no ONNX Runtime row ran (and was compared) is not
 * tested (docs/verdicts.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/compare.h"
#include "report/report-impl.h"
#include "status/terms-impl.h"

static void cell_num(oq_sb *b, const json_t *v, double scale)
{
    oq_sb_puts(b, "<td class=\"n\">");
    if (json_is_number(v)) oq_html_num(b, json_number_value(v) * scale);
    else oq_sb_puts(b, "&ndash;");
    oq_sb_puts(b, "</td>");
}

static void error_row(oq_sb *b, const json_t *r, const char *st, int cols)
{
    if (!json_is_string(json_object_get(r, "error"))) return;
    int failed = !strcmp(st, "failed") || !strcmp(st, "error");
    oq_sb_printf(b, "<tr class=\"%s\"><td></td><td colspan=\"%d\" class=\"%s\">", failed ? "failed" : "", cols,
                 failed ? "reason" : "muted");
    oq_sb_esc(b, oq_j_str(r, "error", ""));
    oq_sb_puts(b, "</td></tr>\n");
}

static void rows_table(oq_sb *b, const json_t *results)
{
    oq_sb_puts(b, "<section id=\"configurations\">\n<h2>Rows</h2>\n<table id=\"config-table\"><tr><th>variant</th>"
                  "<th>status</th><th>shapes</th><th>I/O</th><th>masked</th><th>batch</th><th>L</th><th>heads</th>"
                  "<th>head dim</th><th>kernel seen</th><th>p50 ms</th><th>p90 ms</th><th>first run ms</th>"
                  "<th>session ms</th><th>peak RSS MiB</th><th>peak GPU MiB</th><th>max |error|</th></tr>\n");
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *st = oq_j_str(r, "status", "?");
        const json_t *stats = json_object_get(r, "stats_ms"), *mem = json_object_get(r, "memory");
        oq_html_row_begin(b, oq_j_str(r, "variant", "?"), !strcmp(st, "failed") || !strcmp(st, "error") ? "failed" : NULL);
        oq_html_td(b, oq_j_str(r, "variant", "?"));
        oq_html_td_status(b, st);
        oq_html_td(b, oq_j_str(r, "shapes", "\xe2\x80\x93"));
        oq_html_td(b, oq_j_str(r, "io_binding", ""));
        oq_html_td(b, json_is_true(json_object_get(r, "masked")) ? "yes" : "no");
        oq_sb_printf(b, "<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>",
                     oq_j_int(r, "batch"), oq_j_int(r, "seq_len"), oq_j_int(r, "heads"), oq_j_int(r, "head_dim"));
        oq_html_td(b, oq_j_str(r, "kernel_observed", "\xe2\x80\x93"));
        int ok = !strcmp(st, "ok");
        cell_num(b, ok ? json_object_get(stats, "p50") : NULL, 1);
        cell_num(b, ok ? json_object_get(stats, "p90") : NULL, 1);
        cell_num(b, json_object_get(r, "first_run_ms"), 1);
        cell_num(b, json_object_get(r, "session_ms"), 1);
        cell_num(b, json_object_get(mem, "peak_rss_bytes"), 1.0 / 1048576);
        cell_num(b, json_object_get(mem, "gpu_bytes"), 1.0 / 1048576);
        cell_num(b, json_object_get(json_object_get(r, "accuracy"), "max_abs_err"), 1);
        oq_sb_puts(b, "</tr>\n");
        error_row(b, r, st, 16);
    }
    oq_sb_puts(b, "</table>\n<p class=\"muted\">Times per batch over the timed runs (the first run and session "
                  "creation apart); error against the float64 reference.</p>\n</section>\n");
}

/* "batch=2 seq=128" from a model row's dims. */
static void point_text(const json_t *dims, char *buf, size_t n)
{
    size_t used = 0;
    const char *k;
    json_t *v;
    buf[0] = '\0';
    json_object_foreach((json_t *)dims, k, v) {
        if (used < n) used += (size_t)snprintf(buf + used, n - used, "%s%s=%lld", used ? " " : "", k,
                                               (long long)json_integer_value(v));
    }
}

/* A --model row's outputs that compared no value (every valid element an infinity the expected
 * file holds too: "compared": false), a row each under the point, in the console's words. */
static void not_compared_rows(oq_sb *b, const json_t *r, int cols)
{
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(r, "outputs"), k, o) {
        if (!json_is_false(json_object_get(o, "compared"))) continue;
        oq_sb_printf(b, "<tr><td></td><td colspan=\"%d\" class=\"muted not-compared\">", cols);
        oq_sb_escf(b, "output '%s': " OQ_COMPARE_NOT_COMPARED_FMT, oq_j_str(o, "output", "?"), oq_j_int(o, "inf_matched"),
                   "the expected file");
        oq_sb_puts(b, "</td></tr>\n");
    }
}

/* Whether no output of a --model row compared a value: its max |error| is none, not a blank. */
static int none_compared(const json_t *r)
{
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(r, "outputs"), k, o) if (!json_is_false(json_object_get(o, "compared"))) return 0;
    return json_array_size(json_object_get(r, "outputs")) > 0;
}

/* bench --model: one row per point, the percentiles users look for. */
static void model_rows_table(oq_sb *b, const json_t *results)
{
    static const char *const pct[] = {"p50", "p90", "p95", "p99", "p99.9", "max", "mean", "std"};
    oq_sb_puts(b, "<section id=\"configurations\">\n<h2>Points</h2>\n<table id=\"config-table\"><tr><th>variant</th>"
                  "<th>status</th><th>point</th><th>I/O</th><th>p50 ms</th><th>p90 ms</th><th>p95 ms</th><th>p99 ms</th>"
                  "<th>p99.9 ms</th><th>max ms</th><th>mean ms</th><th>std ms</th><th>first run ms</th>"
                  "<th>session ms</th><th>peak RSS MiB</th><th>max |error|</th></tr>\n");
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *st = oq_j_str(r, "status", "?");
        const json_t *stats = json_object_get(r, "stats_ms"), *mem = json_object_get(r, "memory");
        char point[512];
        point_text(json_object_get(r, "dims"), point, sizeof point);
        oq_html_row_begin(b, oq_j_str(r, "variant", "?"), !strcmp(st, "failed") || !strcmp(st, "error") ? "failed" : NULL);
        oq_html_td(b, oq_j_str(r, "variant", "?"));
        oq_html_td_status(b, st);
        oq_html_td(b, *point ? point : "\xe2\x80\x93");
        oq_html_td(b, oq_j_str(r, "io_binding", ""));
        for (size_t k = 0; k < sizeof pct / sizeof *pct; k++) cell_num(b, json_object_get(stats, pct[k]), 1);
        cell_num(b, json_object_get(r, "first_run_ms"), 1);
        cell_num(b, json_object_get(r, "session_ms"), 1);
        cell_num(b, json_object_get(mem, "peak_rss_bytes"), 1.0 / 1048576);
        if (none_compared(r)) oq_sb_puts(b, "<td class=\"n muted not-compared\">not compared</td>");
        else cell_num(b, json_object_get(json_object_get(r, "accuracy"), "max_abs_err"), 1);
        oq_sb_puts(b, "</tr>\n");
        error_row(b, r, st, 15);
        not_compared_rows(b, r, 15);
    }
    oq_sb_puts_terms(b, "</table>\n<p class=\"muted\">Times per run over the timed runs (the first run and session "
                        "creation apart); error against the outputs given in opts.expected_path.</p>\n</section>\n");
}

/* The profiled runs (--profile-runs), where a row has them: ORT's own times and the GPU
 * kernels' (docs/bench.md), with the kernels' names where CUPTI gave them. */
static void profile_section(oq_sb *b, const json_t *results)
{
    size_t i, any = 0;
    json_t *r;
    json_array_foreach(results, i, r) any += json_is_object(json_object_get(r, "profile"));
    if (!any) return;
    oq_sb_puts(b, "<section id=\"profile\">\n<h2>Profiled runs</h2>\n<table><tr><th>variant</th><th>row</th>"
                  "<th>runs</th><th>Run ms (ORT)</th><th>node ms</th><th>GPU kernel ms</th><th>kernels</th>"
                  "<th>from</th><th>GPU kernels</th></tr>\n");
    json_array_foreach(results, i, r) {
        const json_t *p = json_object_get(r, "profile");
        if (!json_is_object(p)) continue;
        char row[512];
        point_text(json_object_get(r, "dims"), row, sizeof row);
        if (!*row) snprintf(row, sizeof row, "B=%lld L=%lld", oq_j_int(r, "batch"), oq_j_int(r, "seq_len"));
        oq_sb_puts(b, "<tr>");
        oq_html_td(b, oq_j_str(r, "variant", "?"));
        oq_html_td(b, row);
        oq_sb_printf(b, "<td class=\"n\">%lld</td>", oq_j_int(p, "runs"));
        cell_num(b, json_object_get(p, "run_ms"), 1);
        cell_num(b, json_object_get(p, "node_ms"), 1);
        cell_num(b, json_object_get(p, "kernel_ms"), 1);
        oq_sb_printf(b, "<td class=\"n\">%lld</td>", oq_j_int(p, "kernel_events"));
        oq_html_td(b, oq_j_str(p, "kernel_source", "\xe2\x80\x93"));
        oq_sb_puts(b, "<td>");
        size_t k;
        json_t *name;
        json_array_foreach(json_object_get(p, "kernel_names"), k, name) {
            if (k) oq_sb_puts(b, "<br>");
            oq_sb_esc(b, json_string_value(name) ? json_string_value(name) : "?");
        }
        oq_sb_puts(b, "</td></tr>\n");
    }
    oq_sb_puts_terms(b, "</table>\n<p class=\"muted\">Medians over the profiled runs, a session of their own after "
                        "the timed loop. node ms: ORT's node events (on a GPU, host time); GPU kernel ms: from ORT's "
                        "profile (builds with CUDA profiling) or CUPTI (<code>opts.cupti</code>).</p>\n</section>\n");
}

/* The rows against an earlier run (bench's baseline): counts, limits and per row old, new and
 * their ratio for each limited statistic; the rows of one side only are listed. */
static void baseline_section(oq_sb *b, const json_t *base)
{
    if (!json_is_object(base)) return;
    const json_t *limits = json_object_get(base, "max_slowdown_pct");
    oq_sb_puts(b, "<section id=\"baseline\">\n<h2>Against the baseline</h2>\n<p>");
    oq_sb_esc(b, oq_j_str(base, "file", "?"));
    oq_sb_printf(b, " (sha256 %.12s): %lld compared, %lld regressed, %lld untimed, %lld new, %lld missing; limits",
                 oq_j_str(base, "sha256", "?"), oq_j_int(base, "compared"), oq_j_int(base, "regressed"),
                 oq_j_int(base, "untimed"), oq_j_int(base, "new"), oq_j_int(base, "missing"));
    const char *stat;
    json_t *v;
    json_object_foreach((json_t *)limits, stat, v) {
        oq_sb_puts(b, " ");
        oq_sb_esc(b, stat);
        oq_sb_printf(b, " +%g%%", json_number_value(v));
    }
    oq_sb_puts(b, "</p>\n");
    if (json_is_string(json_object_get(base, "host_difference"))) {
        oq_sb_puts(b, "<p class=\"reason\">Another machine, compared anyway: ");
        oq_sb_esc(b, oq_j_str(base, "host_difference", ""));
        oq_sb_puts(b, "</p>\n");
    }
    oq_sb_puts(b, "<table><tr><th>match</th><th>row</th><th>statistic</th><th>old ms</th><th>new ms</th>"
                  "<th>ratio</th><th>limit</th></tr>\n");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(base, "rows"), i, r) {
        const char *match = oq_j_str(r, "match", "?");
        oq_sb_printf(b, "<tr class=\"%s\">", !strcmp(match, "regressed") ? "failed" : "");
        oq_html_td(b, match);
        oq_html_td(b, oq_j_str(r, "row", "?"));
        const json_t *stats = json_object_get(r, "stats");
        if (!json_object_size(stats)) oq_sb_puts(b, "<td></td><td></td><td></td><td></td><td></td>");
        int first = 1;
        json_object_foreach((json_t *)stats, stat, v) {
            if (!first) oq_sb_puts(b, "</tr>\n<tr><td></td><td></td>");
            first = 0;
            oq_html_td(b, stat);
            cell_num(b, json_object_get(v, "old_ms"), 1);
            cell_num(b, json_object_get(v, "new_ms"), 1);
            if (json_is_string(json_object_get(v, "not_compared"))) /* why (the row may be compared on others) */
                oq_html_td(b, oq_j_str(v, "not_compared", ""));
            else
                cell_num(b, json_object_get(v, "ratio"), 1);
            cell_num(b, json_object_get(v, "max_ratio"), 1);
        }
        oq_sb_puts(b, "</tr>\n");
    }
    oq_sb_puts(b, "</table>\n<p class=\"muted\">ratio = new/old of the statistic; above its limit the row "
                  "regressed and the run failed. Compare runs of one machine, with enough timed runs.</p>\n"
                  "</section>\n");
}

static void options_section(oq_sb *b, const json_t *config)
{
    oq_sb_puts(b, "<section id=\"options\">\n<h2>Options</h2>\n<pre>");
    char *text = json_dumps(config, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    oq_sb_esc(b, text ? text : "");
    free(text);
    oq_sb_puts(b, "</pre>\n</section>\n");
}

/* A summary before ortqual.bench/2 has no verdict: the rows give it, by the rule of
 * oq_bench_verdict_of (a --model row is compared only against expected outputs). */
static const char *derived_verdict(const json_t *s, char *reason, size_t n)
{
    int model = !strcmp(oq_j_str(s, "mode", "attention"), "model");
    const json_t *config = json_object_get(s, "config");
    int compared = model ? json_is_string(json_object_get(config, "expected"))
                         : !json_is_false(json_object_get(config, "reference"));
    long long failed = 0, tested = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(s, "results"), i, r) {
        const char *st = oq_j_str(r, "status", "?");
        failed += !strcmp(st, "failed") || !strcmp(st, "error");
        tested += !strcmp(st, "ok") && strncmp(oq_j_str(r, "variant", "ref"), "ref", 3) &&
                  (!compared || json_is_number(json_object_get(json_object_get(r, "accuracy"), "max_abs_err")));
    }
    snprintf(reason, n, "no variant under test ran%s (every ONNX Runtime row skipped, unsupported or oom, or only "
             "the reference)", compared ? " and was compared" : "");
    return failed ? "failed" : tested ? "passed" : "untested";
}

oq_status oq_report_bench(oq_sb *b, const json_t *s, const char *name, oq_err *err)
{
    oq_status bad = oq_report_bench_check(s, name, err);
    if (bad) return bad;
    const json_t *results = json_object_get(s, "results"), *sys = json_object_get(s, "system");
    long long ok = 0, failed = 0, errors = 0, other = 0;
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *st = oq_j_str(r, "status", "?");
        ok += !strcmp(st, "ok");
        failed += !strcmp(st, "failed");
        errors += !strcmp(st, "error");
    }
    other = (long long)json_array_size(results) - ok - failed - errors;
    char derived[256], reason[768], said[64];
    const char *verdict = json_is_string(json_object_get(s, "verdict"))
                              ? oq_html_verdict_class(oq_j_str(s, "verdict", "failed"))
                              : derived_verdict(s, derived, sizeof derived);
    int accepted = json_is_integer(json_object_get(s, "exit_status")) ? !oq_j_int(s, "exit_status") : 0;
    const json_t *base = json_object_get(s, "baseline"); /* nothing compared with it: not a skip */
    snprintf(reason, sizeof reason, "%s%s", oq_j_str(s, "verdict_reason", derived),
             strcmp(verdict, "untested") || json_is_object(base) ? ""
             : accepted ? oq_terms(" (accepted by opts.allow_skip)", said, sizeof said)
                        : oq_terms(" (opts.allow_skip accepts that)", said, sizeof said));
    char headline[128], detail[512];
    long long bad_rows = failed ? failed : errors;
    snprintf(headline, sizeof headline, "%lld row%s %s", bad_rows, bad_rows == 1 ? "" : "s",
             failed ? "failed" : "could not run");
    snprintf(detail, sizeof detail, "%zu rows: %lld ok, %lld failed, %lld runtime error%s, %lld skipped, unsupported "
             "or out of memory \xc2\xb7 ONNX Runtime %s \xc2\xb7 %s", json_array_size(results), ok, failed, errors,
             errors == 1 ? "" : "s", other, oq_j_str(sys, "ort_version", "?"),
             oq_j_str(s, "end", oq_j_str(s, "created", "?"))); /* "created": before OQ_BENCH_SCHEMA */
    oq_html_begin(b, name, verdict);
    oq_html_verdict(b, "ortqual bench", verdict, failed + errors ? headline : NULL,
                    strcmp(verdict, "passed") ? reason : NULL, detail);
    /* the sweep's warnings (a second ONNX Runtime mapped; --model's notes said before the run) */
    const json_t *warnings = json_object_get(json_object_get(sys, "evidence"), "warnings");
    oq_sb_puts(b, "<nav>");
    if (json_array_size(warnings)) oq_sb_puts(b, "<a href=\"#notes\">notes</a>");
    oq_sb_puts(b, "<a href=\"#configurations\">rows</a><a href=\"#plots\">figures</a><a href=\"#options\">sweep</a>"
                  "<a href=\"#environment\">environment</a><a href=\"#command\">command line</a></nav>\n");
    oq_html_notes(b, NULL, warnings);
    if (!strcmp(oq_j_str(s, "mode", "attention"), "model")) model_rows_table(b, results);
    else rows_table(b, results);
    baseline_section(b, json_object_get(s, "baseline"));
    profile_section(b, results);
    oq_html_figures(b, s, name);
    options_section(b, json_object_get(s, "config"));
    oq_html_environment(b, json_object_get(sys, "evidence"), NULL, NULL);
    oq_html_command(b, json_object_get(s, "command_line"), NULL, NULL);
    oq_html_end(b);
    return OQ_OK;
}
