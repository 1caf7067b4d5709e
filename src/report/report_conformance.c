/* report.html of a conformance summary.json (`ortqual conformance --outdir`). */
#include <stdio.h>
#include <string.h>

#include "report/report-impl.h"
#include "status/terms-impl.h"
#include "version/version-impl.h"

static void tests_table(oq_sb *b, const json_t *tests)
{
    oq_sb_puts(b, "<section id=\"configurations\">\n<h2>Tests</h2>\n<table id=\"config-table\"><tr><th>test</th>"
                  "<th>verdict</th><th>detail</th><th>output</th><th>worst element</th><th>got</th><th>expected</th>"
                  "</tr>\n");
    size_t i, k;
    json_t *t, *x;
    json_array_foreach(tests, i, t) {
        const char *v = oq_j_str(t, "verdict", "?");
        const json_t *refusal = json_object_get(t, "refusal");
        oq_html_row_begin(b, oq_j_str(t, "name", "?"), !strcmp(v, "FAIL") ? "failed" : NULL);
        oq_html_td(b, oq_j_str(t, "name", "?"));
        oq_html_td_status(b, v);
        if (refusal) { /* the detail is ORT's message: explained, and kept folded */
            oq_sb_puts(b, "<td>");
            oq_html_refusal(b, refusal, oq_j_str(t, "detail", NULL));
            oq_sb_puts(b, "</td>");
        } else {
            oq_html_td(b, oq_j_str(t, "detail", ""));
        }
        oq_html_td(b, oq_j_str(t, "output_name", ""));
        oq_sb_puts(b, "<td>");
        json_array_foreach(json_object_get(t, "worst_index"), k, x) oq_sb_printf(b, "%s%lld", k ? "," : "[", (long long)json_integer_value(x));
        if (json_array_size(json_object_get(t, "worst_index"))) oq_sb_puts(b, "]");
        oq_sb_puts(b, "</td><td class=\"n\">");
        if (json_object_get(t, "got")) oq_html_value(b, json_object_get(t, "got"));
        oq_sb_puts(b, "</td><td class=\"n\">");
        if (json_object_get(t, "expected")) oq_html_value(b, json_object_get(t, "expected"));
        oq_sb_puts(b, "</td></tr>\n");
    }
    oq_sb_puts(b, "</table>\n</section>\n");
}

/* The run's verdict: "untested" when no test passed and none failed (all skipped or
 * unsupported), whether or not --allow-skip let it exit 0: green needs a test that passed. */
static const char *conformance_verdict(const json_t *s)
{
    long long failed = oq_j_int(s, "failed") + (json_is_true(json_object_get(s, "strict")) ? oq_j_int(s, "unsupported") : 0);
    if (!failed && !oq_j_int(s, "passed")) return "untested";
    return oq_j_str(s, "verdict", "failed");
}

oq_status oq_report_conformance(oq_sb *b, const json_t *s, const char *name, oq_err *err)
{
    (void)err;
    const char *verdict = conformance_verdict(s);
    const json_t *ort = json_object_get(s, "onnxruntime"), *tol = json_object_get(s, "tolerance");
    char runner[256], reason[256], detail[600], said[64];
    if (ort)
        snprintf(runner, sizeof runner, "ONNX Runtime %s on %s", oq_j_str(ort, "version", "?"), oq_j_str(s, "ep", "cpu"));
    else
        snprintf(runner, sizeof runner, "ortqual's float64 reference");
    snprintf(reason, sizeof reason, "%s%s", oq_j_str(s, "reason", "no test passed (all skipped or unsupported)"),
             oq_j_int(s, "exit_status") ? "" : oq_terms(" (accepted by opts.allow_skip)", said, sizeof said));
    char rt[32], at[32]; /* as given: 0.10008144378662108, not 0.100081 */
    snprintf(detail, sizeof detail, "%lld passed, %lld failed, %lld skipped (%lld unsupported) \xc2\xb7 %s \xc2\xb7 "
             "rtol %s, atol %s%s \xc2\xb7 %s", oq_j_int(s, "passed"), oq_j_int(s, "failed"), oq_j_int(s, "skipped"),
             oq_j_int(s, "unsupported"), runner, oq_real_str(oq_j_num(tol, "rtol"), 6, rt, sizeof rt),
             oq_real_str(oq_j_num(tol, "atol"), 6, at, sizeof at),
             json_is_true(json_object_get(s, "strict")) ? ", strict" : "",
             oq_j_str(s, "end", oq_j_str(s, "created", "?"))); /* "created": ortqual.conformance/1 */
    oq_html_begin(b, name, verdict);
    oq_html_verdict(b, "ortqual conformance", verdict, NULL, strcmp(verdict, "untested") ? NULL : reason, detail);
    oq_sb_puts(b, "<nav><a href=\"#configurations\">tests</a><a href=\"#environment\">environment</a>"
                  "<a href=\"#command\">command line</a></nav>\n");
    tests_table(b, json_object_get(s, "tests"));
    if (json_object_get(s, "evidence")) {
        oq_html_environment(b, json_object_get(s, "evidence"), NULL, NULL);
    } else {
        oq_sb_puts(b, "<section id=\"environment\">\n<h2>Environment</h2>\n<p>The tests ran on ortqual ");
        oq_sb_esc(b, oq_build_version());
        oq_sb_puts(b, "'s own reference; no runtime was loaded.</p>\n</section>\n");
    }
    oq_html_command(b, json_object_get(s, "command"), "ortqual", oq_j_str(s, "cwd", NULL));
    oq_html_end(b);
    return OQ_OK;
}
