/* report.html entry points (see report.h): the kind of a summary, and writing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/fileio.h"
#include "report/report-impl.h"

oq_report_kind oq_report_kind_of(const json_t *doc)
{
    const char *schema = oq_j_str(doc, "schema", ""), *tool = oq_j_str(doc, "tool", "");
    if (!strncmp(schema, "ortqual.validate/", 17)) return OQ_REPORT_VALIDATE;
    if (!strcmp(schema, OQ_CONFORMANCE_SCHEMA)) return OQ_REPORT_CONFORMANCE;
    if (!strcmp(tool, "ortqual bench") && json_is_array(json_object_get(doc, "results"))) return OQ_REPORT_BENCH;
    if (!strcmp(tool, "ortqual gate")) return OQ_REPORT_GATE;
    return OQ_REPORT_UNKNOWN;
}

oq_status oq_report_html(const json_t *summary, const char *name, char **html, size_t *n, oq_err *err)
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

oq_status oq_report_write(const json_t *summary, const char *name, const char *path, oq_err *err)
{
    char *html;
    size_t n;
    oq_status st = oq_report_html(summary, name, &html, &n, err);
    if (!st) st = oq_write_file_atomic(path, html, n, 1, err);
    free(html);
    return st;
}

oq_status oq_report_write_dir(const char *dir, oq_err *err)
{
    size_t n = strlen(dir) + 32;
    char *in = malloc(n), *out = malloc(n);
    oq_status st = in && out ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    json_t *doc = NULL;
    if (!st) {
        snprintf(in, n, "%s/summary.json", dir);
        snprintf(out, n, "%s/report.html", dir);
        json_error_t je;
        doc = json_load_file(in, 0, &je);
        if (!doc) {
            FILE *fp = fopen(in, "rb");
            st = fp ? oq_err_set(err, OQ_ERR_FORMAT, "%s:%d: not valid JSON: %s", in, je.line, je.text)
                    : oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: cannot open (not a run directory?)", in);
            if (fp) fclose(fp);
        }
    }
    if (!st) st = oq_report_write(doc, in, out, err);
    json_decref(doc);
    free(in);
    free(out);
    return st;
}
