/* report.html entry points (see report.h): the kind of a summary, and writing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio/fileio-impl.h"
#include "plot/figures-impl.h"
#include "ortqual/fileio.h"
#include "report/report-impl.h"
#include "status/args-impl.h"

oq_report_kind oq_report_kind_of(const json_t *doc)
{
    const char *schema = oq_j_str(doc, "schema", ""), *tool = oq_j_str(doc, "tool", "");
    if (!strncmp(schema, "ortqual.validate/", 17)) return OQ_REPORT_VALIDATE;
    if (!strncmp(schema, "ortqual.conformance/", 20)) return OQ_REPORT_CONFORMANCE; /* /1 read as /2 */
    if (!strcmp(tool, "ortqual bench") && json_is_array(json_object_get(doc, "results"))) return OQ_REPORT_BENCH;
    if (!strcmp(tool, "ortqual gate")) return OQ_REPORT_GATE;
    if (!strcmp(schema, "ortqual-error/1")) return OQ_REPORT_REFUSAL;
    return OQ_REPORT_UNKNOWN;
}

oq_status oq_render_text(oq_render_fn fn, const char *json, size_t n, const char *name, char **out, size_t *out_n,
                         oq_err *err)
{
    *out = NULL;
    *out_n = 0;
    json_t *doc = oq_json_parse(json, n, name, err);
    if (!doc) return OQ_ERR_FORMAT;
    oq_status st = fn(doc, name, out, out_n, err);
    json_decref(doc);
    return st;
}

oq_status oq_render_write(oq_render_fn fn, const char *json, size_t n, const char *name, const char *path,
                          oq_err *err)
{
    char *text;
    size_t len;
    oq_status st = oq_render_text(fn, json, n, name, &text, &len, err);
    if (!st) st = oq_write_file_atomic(path, text, len, 1, err);
    free(text);
    return st;
}

oq_status oq_render_file(oq_render_fn fn, const char *in, const char *out, oq_err *err)
{
    unsigned char *text;
    size_t n;
    oq_err e = {0};
    if (oq_read_file(in, &text, &n, &e)) return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s", e.msg);
    oq_status st = oq_render_write(fn, (const char *)text, n, in, out, err);
    free(text);
    return st;
}

oq_status oq_report_html_json(const json_t *summary, const char *name, char **html, size_t *n, oq_err *err)
{
    *html = NULL;
    *n = 0;
    oq_sb b = {0};
    oq_status st;
    switch (oq_report_kind_of(summary)) {
    case OQ_REPORT_VALIDATE: st = oq_report_validate(&b, summary, name, err); break;
    case OQ_REPORT_BENCH: st = oq_report_bench(&b, summary, name, err); break;
    case OQ_REPORT_CONFORMANCE: st = oq_report_conformance(&b, summary, name, err); break;
    default:
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: not a summary with a report (validate, replay, bench or conformance "
                        "summary.json)", name);
    }
    if (!st && !(*html = oq_sb_take(&b, n))) st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory writing the report", name);
    oq_sb_free(&b);
    return st;
}

oq_status oq_report_html(const char *json, size_t n, const char *name, char **html, size_t *html_n, oq_err *err)
{
    OQ_NEED_N(err, n, json);
    OQ_NEED(err, name);
    OQ_NEED(err, html);
    OQ_NEED(err, html_n);
    return oq_render_text(oq_report_html_json, json, n, name, html, html_n, err);
}

/* The caller's n `warnings` among doc's evidence warnings (evidence.system.warnings), which the
 * page lists in its Notes; 0: out of memory. */
static int add_warnings(json_t *doc, const char *const *warnings, size_t n)
{
    json_t *ev = json_object_get(doc, "evidence"), *sys, *list;
    if (!n) return 1;
    if (!json_is_object(ev) && json_object_set_new(doc, "evidence", ev = json_object())) return 0;
    if (!json_is_object(sys = json_object_get(ev, "system")) && json_object_set_new(ev, "system", sys = json_object()))
        return 0;
    if (!json_is_array(list = json_object_get(sys, "warnings")) && json_object_set_new(sys, "warnings", list = json_array()))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(list, json_string(warnings[i]))) return 0;
    return 1;
}

/* The report of the summary file `in` into `out`: doc as oq_vd_scan or oq_vd_scan_rest returned
 * it (NULL: the error is in err), its records counted in d (a validate summary's), with the
 * caller's n `warnings` (add_warnings). */
static oq_status render(json_t *doc, oq_vd *d, const char *in, const char *out, const char *const *warnings, size_t nw,
                        oq_err *err)
{
    char *html = NULL;
    size_t n = 0;
    oq_status st = doc ? OQ_OK : err->status;
    if (!st && !add_warnings(doc, warnings, nw)) st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", in);
    if (!st && oq_report_kind_of(doc) == OQ_REPORT_VALIDATE) {
        oq_sb b = {0};
        st = oq_report_validate_vd(&b, doc, d, in, err);
        if (!st && !(html = oq_sb_take(&b, &n))) st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory writing the report", in);
        oq_sb_free(&b);
    } else if (!st) {
        st = oq_report_html_json(doc, in, &html, &n, err);
    }
    if (!st) st = oq_write_file_atomic(out, html, n, 1, err);
    free(html);
    json_decref(doc);
    return st;
}

/* The report of the summary file `in`, read with its batch records one at a time: a validate
 * summary's memory does not grow with its batches (other kinds have no such records). */
static oq_status render_scanned(const char *in, const char *out, const char *const *warnings, size_t n, oq_err *err)
{
    oq_vd d;
    oq_status st = render(oq_vd_scan(&d, in, err), &d, in, out, warnings, n, err);
    oq_vd_clear(&d);
    return st;
}

oq_status oq_report_write_counted(const char *dir, oq_vd *d, oq_err *err)
{
    char in[4096], out[4096];
    snprintf(in, sizeof in, "%s/summary.json", dir);
    snprintf(out, sizeof out, "%s/report.html", dir);
    return render(oq_vd_scan_rest(d, in, err), d, in, out, NULL, 0, err);
}

oq_status oq_report_write_dir(const char *dir, oq_err *err)
{
    OQ_NEED(err, dir);
    return oq_report_write_dir_warned(dir, NULL, 0, err);
}

oq_status oq_report_write_dir_warned(const char *dir, const char *const *warnings, size_t n_warnings, oq_err *err)
{
    OQ_NEED(err, dir);
    OQ_NEED_N(err, n_warnings, warnings);
    size_t len = strlen(dir) + 32;
    char *in = malloc(len), *out = malloc(len);
    oq_err e = {0};
    oq_status st = in && out ? OQ_OK : oq_err_set(&e, OQ_ERR_NOMEM, "out of memory");
    if (!st) {
        snprintf(in, len, "%s/summary.json", dir);
        snprintf(out, len, "%s/report.html", dir);
        st = render_scanned(in, out, warnings, n_warnings, &e);
    }
    if (st == OQ_ERR_NOT_FOUND) oq_err_set(err, st, "%s (not a run directory?)", e.msg);
    else if (st) oq_err_set(err, st, "%s", e.msg);
    free(in);
    free(out);
    return st;
}

/* A summary from before each configuration's outputs were aggregated ("outputs" beside its batch
 * records) keeps its comparisons in the batch records, which the sample drops: its error figures
 * need the whole document (such summaries predate large runs). */
static int outputs_per_batch(const json_t *doc)
{
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(doc, "configs"), k, c) if (!json_object_get(c, "outputs")) return 1;
    return 0;
}

static oq_status figures_of_whole(const char *path, const oq_plot_options *opt, oq_figures **out, oq_err *err)
{
    unsigned char *text = NULL;
    size_t n = 0;
    oq_status st = oq_read_file(path, &text, &n, err);
    if (!st) st = oq_figures_from_summary((const char *)text, n, path, opt, out, err);
    free(text);
    return st;
}

oq_status oq_figures_from_summary_file(const char *path, const oq_plot_options *opt, oq_figures **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    *out = NULL;
    oq_vd d;
    json_t *doc = oq_vd_scan(&d, path, err); /* the records sampled as report.html's figures are */
    oq_status st = !doc ? err->status : OQ_OK;
    if (!st && oq_report_kind_of(doc) == OQ_REPORT_VALIDATE)
        st = outputs_per_batch(doc) ? figures_of_whole(path, opt, out, err)
                                    : oq_figures_from_summary_json(doc, path, opt, out, err);
    json_decref(doc);
    oq_vd_clear(&d);
    return st;
}
