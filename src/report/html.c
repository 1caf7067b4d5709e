/* The text buffer and the parts every report.html shares: page frame and style,
 * verdict banner, command line, environment, figures. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "plot/figures-impl.h"
#include "plot/plot-impl.h"
#include "report/report-impl.h"
#include "status/terms-impl.h"
#include "version/version-impl.h"

/* ---- Buffer ------------------------------------------------------------------ */

void oq_sb_put(oq_sb *b, const char *s, size_t n)
{
    if (!b->failed && oq_dynbuf_addn(&b->d, s, n)) b->failed = 1;
}

void oq_sb_puts(oq_sb *b, const char *s) { oq_sb_put(b, s, strlen(s)); }

void oq_sb_puts_terms(oq_sb *b, const char *s)
{
    char said[2048];
    oq_sb_puts(b, oq_terms(s, said, sizeof said));
}

void oq_sb_printf(oq_sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!b->failed && oq_dynbuf_vaddf(&b->d, fmt, ap)) b->failed = 1;
    va_end(ap);
}

void oq_sb_esc(oq_sb *b, const char *s)
{
    if (!b->failed && oq_xml_add(&b->d, s)) b->failed = 1;
}

void oq_sb_escf(oq_sb *b, const char *fmt, ...)
{
    oq_dynbuf t = {0};
    va_list ap;
    va_start(ap, fmt);
    if (oq_dynbuf_vaddf(&t, fmt, ap)) b->failed = 1;
    va_end(ap);
    oq_sb_esc(b, t.buf);
    oq_dynbuf_clear(&t);
}

char *oq_sb_take(oq_sb *b, size_t *n)
{
    char *p = b->failed ? NULL : oq_dynbuf_take(&b->d, n);
    oq_sb_free(b);
    return p;
}

void oq_sb_free(oq_sb *b)
{
    oq_dynbuf_clear(&b->d);
    b->failed = 0;
}

const char *oq_j_str(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

double oq_j_num(const json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }
void oq_html_value(oq_sb *b, const json_t *v)
{
    char text[96];
    double x = oq_compare_value_back(v, text, sizeof text);
    if (*text) oq_sb_esc(b, text);
    else oq_sb_printf(b, "%.7g", x);
}

long long oq_j_int(const json_t *o, const char *key) { return (long long)json_integer_value(json_object_get(o, key)); }

int oq_report_shard_note(const json_t *doc, char *buf, size_t n)
{
    const json_t *sh = json_object_get(doc, "shard");
    buf[0] = 0;
    if (!json_is_object(sh) || json_object_get(doc, "shards")) return 0;
    snprintf(buf, n, "shard %lld of %lld by %s, of plan %.12s: this verdict is the shard's; the campaign's is "
             "`ortqual merge DIR`'s", oq_j_int(sh, "index"), oq_j_int(sh, "count"), oq_j_str(sh, "by", "?"),
             oq_j_str(json_object_get(doc, "plan"), "hash", "?"));
    return 1;
}

void oq_html_td(oq_sb *b, const char *s)
{
    oq_sb_puts(b, "<td>");
    oq_sb_esc(b, s);
    oq_sb_puts(b, "</td>");
}

void oq_html_td_status(oq_sb *b, const char *s)
{
    oq_sb_puts(b, "<td class=\"status ");
    oq_sb_esc(b, s);
    oq_sb_puts(b, "\">");
    oq_sb_esc(b, s);
    oq_sb_puts(b, "</td>");
}

void oq_html_row_begin(oq_sb *b, const char *name, const char *cls)
{
    oq_sb_printf(b, "<tr class=\"config%s%s\" data-config=\"", cls ? " " : "", cls ? cls : "");
    oq_sb_esc(b, name);
    oq_sb_puts(b, "\">");
}

void oq_html_num(oq_sb *b, double v)
{
    if (!isfinite(v)) oq_sb_puts(b, isnan(v) ? "NaN" : v > 0 ? "Inf" : "-Inf");
    else if (v == 0) oq_sb_puts(b, "0");
    else if (fabs(v) >= 1e5 || fabs(v) < 1e-3) oq_sb_printf(b, "%.3g", v);
    else oq_sb_printf(b, "%.4g", v);
}

/* ---- Page --------------------------------------------------------------------- */

static const char style[] =
    ":root{--ok:#2e7d32;--bad:#c62828;--err:#bf360c;--skip:#8d6e00;--line:#d8d8d8;--muted:#666}"
    "*{box-sizing:border-box}"
    "body{font:14px/1.45 'DejaVu Sans',Verdana,Arial,sans-serif;color:#111;margin:0;background:#fafafa}"
    "main{max-width:1180px;margin:0 auto;padding:0 20px 40px}"
    "header.verdict{padding:18px 24px;color:#fff;margin:0 0 16px}"
    /* only passed is green: a runtime error and a run where nothing was compared have their own colours */
    "header.verdict.passed{background:var(--ok)}header.verdict.failed{background:var(--bad)}"
    "header.verdict.error{background:var(--err)}header.verdict.untested{background:var(--skip)}"
    "header.verdict.interrupted{background:var(--bad)}"
    "header.verdict h1{margin:0;font-size:26px}header.verdict p{margin:4px 0 0;font-size:15px}"
    "nav{margin:0 0 8px}nav a{margin-right:14px;color:#0b57a4}"
    "section{background:#fff;border:1px solid var(--line);border-radius:6px;padding:12px 18px;margin:14px 0}"
    "h2{font-size:19px;margin:4px 0 10px}h3{font-size:16px;margin:14px 0 6px}"
    "table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}"
    "th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "tr.failed td{background:#fdecea}tr.failed td:first-child{border-left:4px solid var(--bad)}"
    "tr.error td{background:#fbe9e7}tr.error td:first-child{border-left:4px solid var(--err)}tr.error .reason{color:var(--err)}"
    ".status{font-weight:bold;white-space:nowrap}.status.passed,.status.PASS,.status.ok{color:var(--ok)}"
    ".status.failed,.status.FAIL{color:var(--bad)}.status.error{color:var(--err)}"
    ".status.skipped,.status.SKIP,.status.UNSUPPORTED,.status.unsupported,.status.oom,.status.untested{color:var(--skip)}"
    ".status.not-run,.status.reference{color:var(--muted)}"
    ".reason{color:var(--bad)}.muted{color:var(--muted)}"
    ".refusal{border-left:4px solid var(--err);background:#fff8f5;padding:6px 10px;margin:6px 0}"
    ".refusal p{margin:2px 0}.refusal .label{font-weight:bold}"
    "code,pre{font-family:'DejaVu Sans Mono',monospace;font-size:12.5px}"
    "pre{background:#f4f4f4;padding:8px 10px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}"
    "details{margin:6px 0}summary{cursor:pointer;font-weight:bold}"
    "details.failed>summary{color:var(--bad)}details.error>summary{color:var(--err)}"
    "figure{margin:10px 0 18px}figure svg{max-width:100%;height:auto;border:1px solid var(--line)}"
    "figcaption{color:var(--muted);font-size:13px}"
    "ul.advice li{margin:4px 0}.warn{color:var(--bad);font-weight:bold}"
    /* shards that did not report: bold in the (red) banner, red in the shards section */
    "header.verdict p.shard-problems{font-weight:bold}"
    "footer{color:var(--muted);font-size:12px;margin:20px 0}";

const char *oq_html_verdict_class(const char *verdict)
{
    static const char *const known[] = {"passed", "failed", "error", "untested", "interrupted"};
    for (size_t i = 0; verdict && i < sizeof known / sizeof *known; i++)
        if (!strcmp(verdict, known[i])) return known[i];
    return "failed"; /* a word this version does not know is never shown as a pass */
}

const char *oq_html_verdict_word(const char *verdict)
{
    const char *v = oq_html_verdict_class(verdict);
    return !strcmp(v, "passed")        ? "PASSED"
           : !strcmp(v, "error")       ? "ERROR"
           : !strcmp(v, "untested")    ? "NOT TESTED"
           : !strcmp(v, "interrupted") ? "INTERRUPTED" /* validate, replay: a signal stopped the run */
                                       : "FAILED";
}

void oq_html_begin(oq_sb *b, const char *title, const char *verdict)
{
    oq_sb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  /* nothing may be loaded from anywhere: the page is complete as it is */
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "style-src 'unsafe-inline'; img-src data:\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    oq_sb_escf(b, "%s: %s", oq_html_verdict_word(verdict), title);
    oq_sb_puts(b, "</title>\n<style>");
    oq_sb_puts(b, style);
    oq_sb_puts(b, "</style>\n</head>\n<body>\n");
}

void oq_html_end(oq_sb *b)
{
    oq_sb_printf(b, "<footer>Written by ortqual %s from summary.json; re-render with "
                    "<code>ortqual report DIR</code>.</footer>\n</main>\n</body>\n</html>\n",
                 oq_build_version());
}

void oq_html_verdict(oq_sb *b, const char *tool, const char *verdict, const char *headline, const char *reason,
                     const char *detail)
{
    oq_html_verdict_open(b, tool, verdict, headline, reason, detail);
    oq_html_verdict_close(b);
}

void oq_html_verdict_close(oq_sb *b) { oq_sb_puts(b, "</header>\n<main>\n"); }

void oq_html_verdict_open(oq_sb *b, const char *tool, const char *verdict, const char *headline, const char *reason,
                          const char *detail)
{
    const char *v = oq_html_verdict_class(verdict);
    oq_sb_printf(b, "<header class=\"verdict %s\" id=\"verdict\" data-verdict=\"%s\">\n<h1>", v, v);
    oq_sb_esc(b, tool);
    oq_sb_puts(b, ": ");
    oq_sb_esc(b, oq_html_verdict_word(v));
    if (headline && *headline) {
        oq_sb_puts(b, " \xe2\x80\x93 ");
        oq_sb_esc(b, headline);
    }
    oq_sb_puts(b, "</h1>\n");
    if (reason && *reason) {
        oq_sb_puts(b, "<p id=\"verdict-reason\">");
        oq_sb_esc(b, reason);
        oq_sb_puts(b, "</p>\n");
    }
    oq_sb_puts(b, "<p id=\"verdict-counts\">");
    oq_sb_esc(b, detail);
    oq_sb_puts(b, "</p>\n");
}

static void refusal_line(oq_sb *b, const char *label, const char *text)
{
    if (!text || !*text) return;
    oq_sb_printf(b, "<p><span class=\"label\">%s</span> ", label);
    oq_sb_esc(b, text);
    oq_sb_puts(b, "</p>\n");
}

void oq_html_refusal(oq_sb *b, const json_t *refusal, const char *raw)
{
    const char *pattern = oq_j_str(refusal, "pattern", NULL), *node = oq_j_str(refusal, "node", NULL);
    oq_sb_puts(b, "<div class=\"refusal\" data-pattern=\"");
    oq_sb_esc(b, pattern ? pattern : "");
    oq_sb_puts(b, "\">\n<p><span class=\"label\">refused by ONNX Runtime</span> ");
    if (pattern) oq_sb_escf(b, "[%s]", pattern);
    else oq_sb_puts(b, "(no known pattern matches its message: see it below)");
    if (node) oq_sb_escf(b, " at node %s", node);
    oq_sb_puts(b, "</p>\n");
    refusal_line(b, "inputs:", oq_j_str(refusal, "inputs", NULL));
    refusal_line(b, "why:", oq_j_str(refusal, "why", NULL));
    refusal_line(b, "fix:", oq_j_str(refusal, "fix", NULL));
    if (raw && *raw) {
        oq_sb_puts(b, "<details class=\"raw\"><summary>ONNX Runtime's message</summary><pre>");
        oq_sb_esc(b, raw);
        oq_sb_puts(b, "</pre></details>\n");
    }
    oq_sb_puts(b, "</div>\n");
}

/* One argument as a POSIX shell reads it back: bare when safe, else single-quoted. */
static void shell_word(oq_sb *b, const char *s)
{
    int bare = *s != 0;
    for (const char *p = s; *p && bare; p++)
        bare = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@%", *p) != NULL;
    if (bare) {
        oq_sb_esc(b, s);
        return;
    }
    oq_sb_puts(b, "&#39;");
    for (const char *p = s; *p; p++) {
        if (*p == '\'') oq_sb_puts(b, "&#39;\\&#39;&#39;");
        else {
            char c[2] = {*p, 0};
            oq_sb_esc(b, c);
        }
    }
    oq_sb_puts(b, "&#39;");
}

void oq_html_command(oq_sb *b, const json_t *argv, const char *prefix, const char *cwd)
{
    oq_sb_puts(b, "<section id=\"command\">\n<h2>Command line</h2>\n<pre id=\"command-line\">");
    if (prefix) oq_sb_esc(b, prefix);
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a) {
        if (prefix || i) oq_sb_puts(b, " ");
        shell_word(b, json_string_value(a) ? json_string_value(a) : "");
    }
    if (!json_array_size(argv)) oq_sb_puts(b, "(not recorded)");
    oq_sb_puts(b, "</pre>\n");
    if (cwd) {
        oq_sb_puts(b, "<p>run in <code>");
        oq_sb_esc(b, cwd);
        oq_sb_puts(b, "</code></p>\n");
    }
    oq_sb_puts(b, "</section>\n");
}

/* ---- Environment ------------------------------------------------------------------- */

static void kv_row(oq_sb *b, const char *k, const char *v)
{
    if (!v || !*v) return;
    oq_sb_puts(b, "<tr><th>");
    oq_sb_esc(b, k);
    oq_sb_puts(b, "</th><td>");
    oq_sb_esc(b, v);
    oq_sb_puts(b, "</td></tr>\n");
}

/* The row of several builds: "2 builds: 1.29.0, 1.30.0 (below)". */
static void builds_row(oq_sb *b, const json_t *builds)
{
    size_t i;
    json_t *v;
    oq_sb_printf(b, "<tr><th>ONNX Runtime</th><td>%zu builds: ", json_array_size(builds));
    json_array_foreach(builds, i, v) oq_sb_escf(b, "%s%s", i ? ", " : "", oq_j_str(v, "version", "?"));
    oq_sb_puts(b, " (<a href=\"#ort-builds\">below</a>)</td></tr>\n");
}

/* oq_html_td for a path or digest. */
static void td_code(oq_sb *b, const char *s)
{
    oq_sb_puts(b, "<td><code>");
    oq_sb_esc(b, s);
    oq_sb_puts(b, "</code></td>");
}

/* Each build the configurations ran on, with the configurations it ran. */
static void builds_table(oq_sb *b, const json_t *builds)
{
    size_t i, k;
    json_t *v, *name;
    oq_sb_puts(b, "<h3 id=\"ort-builds\">ONNX Runtime builds</h3>\n<table><tr><th>version</th><th>build</th>"
                  "<th>ELF build-id</th><th>library</th><th>SHA-256</th><th>configurations</th></tr>\n");
    json_array_foreach(builds, i, v) {
        oq_sb_puts(b, "<tr>");
        oq_html_td(b, oq_j_str(v, "version", "?"));
        oq_html_td(b, oq_j_str(v, "build_info", ""));
        td_code(b, oq_j_str(v, "build_id", "none"));
        td_code(b, oq_j_str(v, "library", "?"));
        td_code(b, oq_j_str(v, "library_sha256", "not recorded"));
        oq_sb_puts(b, "<td>");
        json_array_foreach(json_object_get(v, "configs"), k, name)
            oq_sb_escf(b, "%s%s", k ? ", " : "", json_string_value(name) ? json_string_value(name) : "?");
        oq_sb_puts(b, "</td></tr>\n");
    }
    oq_sb_puts(b, "</table>\n");
}

/* ev's ONNX Runtime is one worker's: where the configurations ran on several builds, the row
 * names them all (a table follows) instead of that one's build, library and providers. */
static void runtime_table(oq_sb *b, const json_t *ev, const json_t *builds)
{
    const json_t *ort = json_object_get(ev, "ort"), *host = json_object_get(ev, "host"), *gpu = json_object_get(ev, "gpu");
    oq_sb_puts(b, "<table class=\"kv\">\n");
    if (json_array_size(builds) > 1) {
        builds_row(b, builds);
    } else {
        kv_row(b, "ONNX Runtime", oq_j_str(ort, "version", NULL));
        kv_row(b, "build", oq_j_str(ort, "build_info", NULL));
        kv_row(b, "library", oq_j_str(ort, "lib_path", NULL));
    }
    const json_t *prov = json_array_size(builds) > 1 ? NULL : json_object_get(ort, "providers"); /* one build's */
    if (json_array_size(prov)) {
        oq_sb_puts(b, "<tr><th>providers compiled in</th><td>");
        size_t i;
        json_t *p;
        json_array_foreach(prov, i, p) oq_sb_escf(b, "%s%s", i ? ", " : "", json_string_value(p));
        oq_sb_puts(b, "</td></tr>\n");
    }
    kv_row(b, "host", oq_j_str(host, "hostname", NULL));
    kv_row(b, "kernel", oq_j_str(host, "kernel", NULL));
    kv_row(b, "CPU", oq_j_str(host, "cpu_model", NULL));
    kv_row(b, "GPU driver", oq_j_str(gpu, "driver_version", NULL));
    kv_row(b, "NVML", oq_j_str(gpu, "nvml_status", NULL));
    kv_row(b, "CUDA driver API", oq_j_str(gpu, "cuda_status", NULL));
    oq_sb_puts(b, "</table>\n");
}

/* One worker's EP devices, a row each; an ONNX Runtime whose C API has none to ask for says why. */
static void device_rows(oq_sb *b, const json_t *ort)
{
    const json_t *devs = json_object_get(ort, "ep_devices"), *why = json_object_get(ort, "ep_devices_unavailable");
    size_t i;
    json_t *d;
    if (!json_array_size(devs)) {
        oq_sb_puts(b, "<tr><td colspan=\"6\" class=\"muted\">");
        oq_sb_esc(b, json_is_string(why) ? "not available: " : "none");
        oq_sb_esc(b, json_string_value(why));
        oq_sb_puts(b, "</td></tr>\n");
    }
    json_array_foreach(devs, i, d) {
        const json_t *meta = json_object_get(d, "ep_metadata");
        oq_sb_puts(b, "<tr>");
        oq_html_td(b, oq_j_str(d, "ep_name", ""));
        oq_html_td(b, oq_j_str(d, "ep_vendor", ""));
        oq_html_td(b, oq_j_str(meta, "version", ""));
        oq_html_td(b, oq_j_str(d, "hw_type", ""));
        oq_sb_printf(b, "<td class=\"n\">%lld</td>", oq_j_int(d, "device_id"));
        td_code(b, oq_j_str(meta, "library_path", ""));
        oq_sb_puts(b, "</tr>\n");
    }
}

static void devices_head(oq_sb *b)
{
    oq_sb_puts(b, "<h3 id=\"ep-devices\">Execution providers and their devices</h3>\n<table><tr><th>provider</th>"
                  "<th>vendor</th><th>version</th><th>hardware</th><th>device id</th><th>library</th></tr>\n");
}

/* Each configuration's own EP devices, from its worker's evidence after its run (a shard on
 * another ONNX Runtime build, or a worker that loaded an EP library, sees others than the first
 * worker), under a row naming the configurations whose devices read the same; the C reference,
 * which loads no ONNX Runtime, has none. */
static void config_devices(oq_sb *b, const json_t *configs)
{
    size_t n = json_array_size(configs), i, k, any = 0;
    char **rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) b->failed = 1;
    for (i = 0; rows && i < n; i++) {
        const json_t *ort = json_object_get(json_object_get(json_array_get(configs, i), "evidence"), "ort");
        oq_sb r = {0};
        if (!json_is_object(ort)) continue;
        device_rows(&r, ort);
        b->failed |= !(rows[i] = oq_sb_take(&r, NULL));
        any++;
    }
    if (any) devices_head(b);
    for (i = 0; any && i < n; i++) {
        if (!rows[i]) continue;
        oq_sb_puts(b, "<tr class=\"device-group\"><th colspan=\"6\">");
        for (k = i; k < n; k++) {
            if (!rows[k] || strcmp(rows[k], rows[i])) continue;
            oq_sb_escf(b, "%s%s", k > i ? ", " : "", oq_j_str(json_array_get(configs, k), "name", "?"));
            if (k > i) { /* shown in this group */
                free(rows[k]);
                rows[k] = NULL;
            }
        }
        oq_sb_printf(b, "</th></tr>\n%s", rows[i]);
        free(rows[i]);
    }
    if (any) oq_sb_puts(b, "</table>\n");
    free(rows);
}

/* `configs` NULL: the devices of `ev` alone (a sweep's, a conformance run's). */
static void devices_table(oq_sb *b, const json_t *ev, const json_t *configs)
{
    const json_t *ort = json_object_get(ev, "ort"), *gpus = json_object_get(json_object_get(ev, "gpu"), "gpus");
    size_t i;
    json_t *d;
    if (configs) {
        config_devices(b, configs);
    } else if (json_array_size(json_object_get(ort, "ep_devices"))) {
        devices_head(b);
        device_rows(b, ort);
        oq_sb_puts(b, "</table>\n");
    }
    if (json_array_size(gpus)) {
        oq_sb_puts(b, "<h3>GPUs</h3>\n<table><tr><th>#</th><th>name</th><th>compute capability</th><th>memory (GiB)</th>"
                      "<th>PCI bus</th></tr>\n");
        json_array_foreach(gpus, i, d) {
            oq_sb_printf(b, "<tr><td class=\"n\">%lld</td><td>", oq_j_int(d, "index"));
            oq_sb_esc(b, oq_j_str(d, "name", ""));
            oq_sb_puts(b, "</td><td>");
            oq_sb_esc(b, oq_j_str(d, "compute_capability", ""));
            oq_sb_printf(b, "</td><td class=\"n\">%.1f</td><td>", oq_j_num(d, "memory_total") / 1073741824.0);
            oq_sb_esc(b, oq_j_str(d, "pci_bus_id", ""));
            oq_sb_puts(b, "</td></tr>\n");
        }
        oq_sb_puts(b, "</table>\n");
    }
}

/* Loaded libraries by group; `other` is long and rarely interesting: folded. */
static void libraries(oq_sb *b, const json_t *libs, const char *whose)
{
    if (!json_object_size(libs)) return;
    oq_sb_puts(b, "<h3>Loaded libraries");
    if (whose) {
        oq_sb_puts(b, " (");
        oq_sb_esc(b, whose);
        oq_sb_puts(b, ")");
    }
    oq_sb_puts(b, "</h3>\n<table><tr><th>group</th><th>path</th></tr>\n");
    const char *group;
    const json_t *paths;
    json_object_foreach((json_t *)libs, group, paths) {
        if (!strcmp(group, "other") || !json_array_size(paths)) continue;
        size_t i;
        json_t *p;
        json_array_foreach(paths, i, p) {
            oq_sb_puts(b, "<tr>");
            oq_html_td(b, group);
            td_code(b, json_string_value(p));
            oq_sb_puts(b, "</tr>\n");
        }
    }
    oq_sb_puts(b, "</table>\n");
    const json_t *other = json_object_get(libs, "other");
    if (json_array_size(other)) {
        oq_sb_printf(b, "<details><summary>%zu other libraries</summary><pre>", json_array_size(other));
        size_t i;
        json_t *p;
        json_array_foreach(other, i, p) oq_sb_escf(b, "%s\n", json_string_value(p));
        oq_sb_puts(b, "</pre></details>\n");
    }
}

/* Two copies of a CUDA/cuDNN library within reach: which is loaded and how to pin one. */
static void shadowing(oq_sb *b, const json_t *sh)
{
    const json_t *conf = json_object_get(sh, "conflicts");
    oq_sb_puts(b, "<h3>Library shadowing</h3>\n");
    if (!json_array_size(conf)) {
        oq_sb_puts(b, "<p>No CUDA or cuDNN library has two versions within reach.</p>\n");
        return;
    }
    size_t i, j;
    json_t *c, *v;
    oq_sb_puts(b, "<ul>\n");
    json_array_foreach(conf, i, c) {
        oq_sb_puts(b, "<li><span class=\"warn\">shadowing:</span> ");
        oq_sb_esc(b, oq_j_str(c, "product", "?"));
        oq_sb_puts(b, " has ");
        json_array_foreach(json_object_get(c, "versions"), j, v) oq_sb_escf(b, "%s%s in %s", j ? ", " : "",
                                                                         oq_j_str(v, "version", "?"), oq_j_str(v, "dir", "?"));
        oq_sb_escf(b, "; loaded: %s", oq_j_str(c, "loaded_version", "none"));
        const json_t *alt = json_array_get(json_object_get(c, "alternatives"), 0);
        if (alt) {
            oq_sb_puts(b, "<br>to use the other one:<pre>");
            oq_sb_escf(b, "%s\n%s", oq_j_str(alt, "preload", ""), oq_j_str(alt, "library_path", ""));
            oq_sb_puts(b, "</pre>");
        }
        oq_sb_puts(b, "</li>\n");
    }
    oq_sb_puts(b, "</ul>\n");
}

static void ort_env(oq_sb *b, const json_t *env)
{
    const char *k;
    const json_t *v;
    int any = 0;
    json_object_foreach((json_t *)env, k, v) {
        if (!json_is_string(v)) continue;
        if (!any++) oq_sb_puts(b, "<h3>ORT_* environment</h3>\n<table>\n");
        kv_row(b, k, json_string_value(v));
    }
    if (any) oq_sb_puts(b, "</table>\n");
}

void oq_html_environment(oq_sb *b, const json_t *ev, const json_t *configs, const json_t *builds)
{
    oq_sb_puts(b, "<section id=\"environment\">\n<h2>Environment</h2>\n");
    /* The workers' evidence was taken after their runs: it has the provider libraries. */
    const json_t *worker_ev = NULL;
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) if (json_object_get(c, "evidence") && !worker_ev) worker_ev = json_object_get(c, "evidence");
    const json_t *main_ev = worker_ev ? worker_ev : ev;
    runtime_table(b, main_ev, builds);
    if (json_array_size(builds) > 1) builds_table(b, builds);
    devices_table(b, main_ev, worker_ev ? configs : NULL); /* each worker's own, where they have any */
    ort_env(b, json_object_get(main_ev, "ort_env"));
    if (json_array_size(configs)) {
        json_array_foreach(configs, i, c) {
            const json_t *libs = json_object_get(json_object_get(c, "evidence"), "libraries");
            if (libs) libraries(b, libs, oq_j_str(c, "name", "?"));
        }
    } else {
        libraries(b, json_object_get(main_ev, "libraries"), NULL);
    }
    /* a CPU worker does not scan (the parent did): the parent's scan then */
    const json_t *sh = json_object_get(main_ev, "shadowing");
    shadowing(b, json_is_object(sh) ? sh : json_object_get(ev, "shadowing"));
    oq_sb_puts(b, "</section>\n");
}

/* ---- Notes and the evidence's warnings ------------------------------------------------ */

void oq_html_warnings_add(json_t *into, const json_t *from)
{
    size_t i, j;
    json_t *w, *x;
    json_array_foreach(from, i, w) {
        if (!json_is_string(w)) continue;
        int seen = 0;
        json_array_foreach(into, j, x) seen |= json_equal(w, x);
        if (!seen) json_array_append(into, w);
    }
}

/* What the run said once before it ran, and what its evidence warned of (an ORT key passed
 * unchecked, a second ONNX Runtime mapped): none of it changes the verdict, all of it says what
 * a green one does not cover, so it sits above the results. */
void oq_html_notes(oq_sb *b, const json_t *notes, const json_t *warnings)
{
    if (!json_array_size(notes) && !json_array_size(warnings)) return;
    oq_sb_puts(b, "<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n");
    size_t i;
    json_t *n;
    json_array_foreach(notes, i, n) {
        oq_sb_puts(b, "<li class=\"note\"><code>");
        oq_sb_esc(b, oq_j_str(n, "kind", "?"));
        oq_sb_puts(b, "</code> ");
        oq_sb_esc(b, oq_j_str(n, "text", ""));
        oq_sb_puts(b, "</li>\n");
    }
    json_array_foreach(warnings, i, n) {
        if (!json_is_string(n)) continue;
        oq_sb_puts(b, "<li class=\"evidence-warning\"><span class=\"warn\">warning:</span> ");
        oq_sb_esc(b, json_string_value(n));
        oq_sb_puts(b, "</li>\n");
    }
    oq_sb_puts(b, "</ul>\n</section>\n");
}

/* ---- Figures ---------------------------------------------------------------------- */

void oq_html_figures(oq_sb *b, const json_t *summary, const char *name)
{
    oq_sb_puts(b, "<section id=\"plots\">\n<h2>Figures</h2>\n");
    oq_figures *figs = NULL;
    oq_err e = {0};
    if (oq_figures_from_summary_json(summary, name, NULL, &figs, &e)) {
        oq_sb_puts(b, "<p class=\"muted\">No figures: ");
        oq_sb_esc(b, e.msg);
        oq_sb_puts(b, "</p>\n</section>\n");
        return;
    }
    if (!oq_figures_count(figs))
        oq_sb_puts(b, "<p class=\"muted\" id=\"no-figures\">Nothing to draw: no output was compared and no batch was "
                      "timed in this run (see the verdict above).</p>\n");
    for (size_t i = 0; i < oq_figures_count(figs); i++) {
        const oq_plot_spec *sp = oq_figures_spec(figs, i);
        char *svg = NULL;
        size_t n = 0;
        oq_sb_printf(b, "<figure id=\"fig-%s\">\n", oq_figures_name(figs, i));
        if (oq_plot_svg(sp, &svg, &n, &e) == OQ_OK) oq_sb_put(b, svg, n);
        else oq_sb_escf(b, "(not drawn: %s)", e.msg);
        free(svg);
        oq_sb_puts(b, "<figcaption>");
        oq_sb_esc(b, sp->title);
        oq_sb_escf(b, " (plots/%s.png, .svg)", oq_figures_name(figs, i));
        oq_sb_puts(b, "</figcaption>\n</figure>\n");
    }
    oq_figures_free(figs);
    oq_sb_puts(b, "</section>\n");
}
