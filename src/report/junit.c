/* JUnit XML from summary documents (see report.h). Every failed configuration,
 * test or gate run has at least one failing test case, a runtime error an error case,
 * and a run in which nothing under test was compared a failing case of its own, so a CI
 * system shows green exactly when ortqual's verdict is PASSED. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "ortqual/fileio.h"
#include "report/report-impl.h"
#include "status/args-impl.h"

/* One test case, collected first so the suite's counts can be written before it. */
typedef struct tcase {
    char *name, *classname;
    double time;
    int kind;        /* 0 pass, 1 failure, 2 error, 3 skipped */
    char *type, *message, *text;
} tcase;

enum { TC_PASS, TC_FAILURE, TC_ERROR, TC_SKIPPED };

typedef struct suite {
    tcase *c;
    size_t n;
    int nomem;
} suite;

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

static tcase *add_case(suite *s, const char *classname, const char *name, double time, int kind, const char *type,
                       const char *message, const char *text)
{
    tcase *c = OQ_PUSH(s->c, s->n);
    if (!c) {
        s->nomem = 1;
        return NULL;
    }
    *c = (tcase){strdup(name), strdup(classname), isfinite(time) && time > 0 ? time : 0, kind,
                 type ? strdup(type) : NULL, message ? strdup(message) : NULL, text ? strdup(text) : NULL};
    if (!c->name || !c->classname) s->nomem = 1;
    return c;
}

static void suite_clear(suite *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->c[i].name);
        free(s->c[i].classname);
        free(s->c[i].type);
        free(s->c[i].message);
        free(s->c[i].text);
    }
    free(s->c);
    memset(s, 0, sizeof *s);
}

typedef struct totals {
    long tests, failures, errors, skipped;
    double time;
} totals;

static void write_suite(oq_sb *b, const suite *s, const char *name, size_t id, const char *timestamp,
                        const char *hostname, const char *const *props, totals *all)
{
    totals t = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < s->n; i++) {
        t.tests++;
        t.failures += s->c[i].kind == TC_FAILURE;
        t.errors += s->c[i].kind == TC_ERROR;
        t.skipped += s->c[i].kind == TC_SKIPPED;
        t.time += s->c[i].time;
    }
    oq_sb_puts(b, "  <testsuite name=\"");
    oq_sb_esc(b, name);
    oq_sb_printf(b, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"%ld\" time=\"%.6f\" id=\"%zu\"", t.tests,
                 t.failures, t.errors, t.skipped, t.time, id);
    if (timestamp) {
        oq_sb_puts(b, " timestamp=\"");
        oq_sb_esc(b, timestamp);
        oq_sb_puts(b, "\"");
    }
    if (hostname) {
        oq_sb_puts(b, " hostname=\"");
        oq_sb_esc(b, hostname);
        oq_sb_puts(b, "\"");
    }
    oq_sb_puts(b, ">\n");
    if (props && props[0]) {
        oq_sb_puts(b, "    <properties>\n");
        for (size_t i = 0; props[i]; i += 2) {
            oq_sb_puts(b, "      <property name=\"");
            oq_sb_esc(b, props[i]);
            oq_sb_puts(b, "\" value=\"");
            oq_sb_esc(b, props[i + 1] ? props[i + 1] : "");
            oq_sb_puts(b, "\"/>\n");
        }
        oq_sb_puts(b, "    </properties>\n");
    }
    static const char *const tags[] = {NULL, "failure", "error", "skipped"};
    for (size_t i = 0; i < s->n; i++) {
        const tcase *c = &s->c[i];
        oq_sb_puts(b, "    <testcase name=\"");
        oq_sb_esc(b, c->name);
        oq_sb_puts(b, "\" classname=\"");
        oq_sb_esc(b, c->classname);
        oq_sb_printf(b, "\" time=\"%.6f\"", c->time);
        if (c->kind == TC_PASS) {
            oq_sb_puts(b, "/>\n");
            continue;
        }
        oq_sb_printf(b, ">\n      <%s", tags[c->kind]);
        if (c->kind != TC_SKIPPED) {
            oq_sb_puts(b, " type=\"");
            oq_sb_esc(b, c->type ? c->type : "check");
            oq_sb_puts(b, "\" message=\"");
            oq_sb_esc(b, c->message ? c->message : "");
            oq_sb_puts(b, "\"");
        }
        oq_sb_puts(b, ">");
        oq_sb_esc(b, c->kind == TC_SKIPPED ? c->message : c->text ? c->text : c->message);
        oq_sb_printf(b, "</%s>\n    </testcase>\n", tags[c->kind]);
    }
    oq_sb_puts(b, "  </testsuite>\n");
    all->tests += t.tests;
    all->failures += t.failures;
    all->errors += t.errors;
    all->skipped += t.skipped;
    all->time += t.time;
}

/* <testsuites NAME ...> around the suites in `body` (freed here): the totals, then the body;
 * a failed buffer or `failed` marks `b` failed */
static void wrap_suites(oq_sb *b, const char *top, const totals *all, oq_sb *body, int failed)
{
    oq_sb_puts(b, "<testsuites name=\"");
    oq_sb_esc(b, top);
    oq_sb_printf(b, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" time=\"%.6f\">\n", all->tests, all->failures,
                 all->errors, all->time);
    if (body->d.buf) oq_sb_put(b, body->d.buf, body->d.len);
    oq_sb_puts(b, "</testsuites>\n");
    b->failed |= body->failed | failed;
    oq_sb_free(body);
}


/* ---- validate and replay ----------------------------------------------------------- */

/* A value of a worst element, read as the report reads it (oq_compare_value_back): a number,
 * "nan"/"inf" as JSON holds those (it was printed with a 0 after it: "got nan0"), or an exact
 * comparison's integer in every digit. */
static void worst_value(oq_sb *m, const json_t *v)
{
    char text[96];
    double x = oq_compare_value_back(v, text, sizeof text);
    if (*text) oq_sb_puts(m, text);
    else oq_sb_printf(m, "%.9g", x);
}

/* A max |error|: an exact comparison's integer difference in every digit (4 read 123456789013 - 0
 * as 1.235e+11), a float one's read above atol however close. */
static char *error_str(double v, int exact, double atol, char *buf, size_t n)
{
    if (exact && v == trunc(v) && fabs(v) < 0x1p64) snprintf(buf, n, "%.0f", v);
    else oq_real_over_str(v, exact ? INFINITY : atol, 4, buf, n);
    return buf;
}

/* "output cls: 936 of 936 valid elements over tolerance, max |error| 0.05 at [0,43,5] ..." */
static void output_failure(oq_sb *m, const json_t *o)
{
    int exact = json_is_true(json_object_get(o, "exact"));
    const json_t *tol = json_object_get(o, "tolerance");
    char e[32], rt[32], at[32]; /* the error read above atol however close; the tolerance as given */
    oq_sb_printf(m, "output %s: ", oq_j_str(o, "output", oq_j_str(o, "name", "?")));
    oq_sb_printf(m, "%lld of %lld valid elements %s, max |error| %s", oq_j_int(o, "over_tolerance"),
                 oq_j_int(o, "num_valid"), exact ? "differ" : "over tolerance",
                 error_str(oq_compare_record_max(o, "max_abs"), exact, oq_j_num(tol, "atol"), e, sizeof e));
    const json_t *w = json_array_get(json_object_get(o, "worst"), 0);
    if (w) {
        oq_sb_puts(m, " at [");
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(w, "coord"), k, x) oq_sb_printf(m, "%s%lld", k ? "," : "", (long long)json_integer_value(x));
        oq_sb_puts(m, "]");
        /* the id a physicist pulls the event by, not only its row in the batch */
        if (json_is_integer(json_object_get(w, "event_id"))) oq_sb_printf(m, " (event %lld)", oq_j_int(w, "event_id"));
        oq_sb_puts(m, " (got ");
        worst_value(m, json_object_get(w, "got"));
        oq_sb_puts(m, ", expected ");
        worst_value(m, json_object_get(w, "expected"));
        oq_sb_puts(m, ")");
    }
    if (oq_j_int(o, "nan") || oq_j_int(o, "inf")) oq_sb_printf(m, ", %lld NaN, %lld Inf", oq_j_int(o, "nan"), oq_j_int(o, "inf"));
    const json_t *pad = json_object_get(o, "padding");
    if (oq_j_int(pad, "nonzero") && !json_is_false(json_object_get(pad, "checked"))) /* judged, not only reported */
        oq_sb_printf(m, ", %lld padding values not 0", oq_j_int(pad, "nonzero"));
    if (exact) oq_sb_puts(m, "; compared exactly");
    else oq_sb_printf(m, "; rtol %s, atol %s", oq_real_str(oq_j_num(tol, "rtol"), 6, rt, sizeof rt),
                      oq_real_str(oq_j_num(tol, "atol"), 6, at, sizeof at));
}

static void batch_cases(suite *s, const json_t *cfg, const char *cls)
{
    size_t i, j;
    json_t *b, *o;
    json_array_foreach(json_object_get(cfg, "batches"), i, b) {
        /* a batch that did not run (the configuration was refused or not run) is no test case */
        if (!json_is_number(json_object_get(b, "first_call_s")) && !json_array_size(json_object_get(b, "outputs")))
            continue;
        char name[64];
        snprintf(name, sizeof name, "batch %lld", oq_j_int(b, "index"));
        double t = oq_j_num(b, "first_call_s") + (double)oq_j_int(b, "repeat") * oq_j_num(b, "median_s");
        oq_sb msg = {0};
        int failed = 0;
        json_array_foreach(json_object_get(b, "outputs"), j, o) {
            if (json_is_true(json_object_get(o, "passed"))) continue;
            if (failed++) oq_sb_puts(&msg, "; ");
            output_failure(&msg, o);
        }
        if (failed && !msg.failed && msg.d.buf) add_case(s, cls, name, t, TC_FAILURE, "tolerance", msg.d.buf, msg.d.buf);
        else if (failed) s->nomem = 1;
        else add_case(s, cls, name, t, TC_PASS, NULL, NULL, NULL);
        oq_sb_free(&msg);
    }
}

/* The check's verdict as a case, when the check ran. */
static void check_case(suite *s, const char *cls, const char *name, const json_t *check)
{
    const json_t *passed = json_object_get(check, "passed");
    if (!json_is_boolean(passed)) return;
    if (json_is_true(passed)) {
        add_case(s, cls, name, 0, TC_PASS, NULL, NULL, NULL);
        return;
    }
    oq_sb msg = {0};
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(check, "failures"), i, f) oq_sb_printf(&msg, "%s%s", i ? "; " : "", json_string_value(f));
    add_case(s, cls, name, 0, TC_FAILURE, name, msg.d.buf ? msg.d.buf : "failed", msg.d.buf ? msg.d.buf : "failed");
    oq_sb_free(&msg);
}

/* ONNX Runtime's refusal explained, and its own message: the text of an <error>. */
static char *refusal_text(const json_t *r)
{
    const char *pattern = oq_j_str(r, "pattern", NULL);
    const char *node = oq_j_str(r, "node", NULL);
    return dupf("refused by ONNX Runtime %s%s%s%s%s\ninputs: %s\nwhy: %s\nfix: %s\nONNX Runtime's message: %s",
                pattern ? "[" : "(no known pattern)", pattern ? pattern : "", pattern ? "]" : "", node ? " at node " : "",
                node ? node : "", oq_j_str(r, "inputs", "-"), oq_j_str(r, "why", "-"), oq_j_str(r, "fix", "-"),
                oq_j_str(r, "raw", "-"));
}

static int suite_bad(const suite *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->c[i].kind == TC_FAILURE || s->c[i].kind == TC_ERROR) return 1;
    return 0;
}

/* What a configuration under test was judged by: its batches and its checks. */
static void judged_cases(suite *s, const json_t *cfg, const char *cls)
{
    batch_cases(s, cfg, cls);
    check_case(s, cls, "dispatch", json_object_get(cfg, "dispatch"));
    const json_t *placement = json_object_get(cfg, "placement");
    /* placement recorded as evidence only (replay, --profile) judged nothing: a CPU run's
     * "compute on CPU" is no failure of a run that passed */
    if (!json_is_false(json_object_get(placement, "required"))) check_case(s, cls, "placement", placement);
    const json_t *teeth = json_object_get(cfg, "teeth");
    if (teeth)
        add_case(s, cls, "prove-teeth", 0, json_is_true(json_object_get(teeth, "proved")) ? TC_PASS : TC_FAILURE,
                 "prove-teeth", oq_j_str(teeth, "verdict", ""), NULL);
}

static void config_cases(suite *s, const json_t *cfg, const char *cls)
{
    const char *status = oq_vd_status(cfg), *reason = oq_j_str(cfg, "reason", "");
    if (!strcmp(status, "skipped") || !strcmp(status, "not-run")) { /* not-run: the reference's error says why */
        add_case(s, cls, "run", 0, TC_SKIPPED, NULL, *reason ? reason : status, NULL);
        return;
    }
    /* a reference judged nothing, whatever its status: a passing case of it (a batch it ran,
     * in a merge that left it `error`) would count as a test passed where nothing was
     * compared; only its error is a case */
    if (!strcmp(status, "reference")) return;
    if (!json_is_true(json_object_get(cfg, "reference"))) judged_cases(s, cfg, cls);
    if (!strcmp(status, "passed") || (strcmp(status, "error") && suite_bad(s))) return;
    /* a runtime error, or failed with no failing case yet: the worker crashed, timed out */
    const json_t *w = json_object_get(cfg, "worker"), *refusal = json_object_get(cfg, "refusal");
    char *text = refusal ? refusal_text(refusal) : NULL;
    if (refusal && !text) s->nomem = 1;
    add_case(s, cls, "run", oq_j_num(w, "seconds"), TC_ERROR, refusal ? "refusal" : status, *reason ? reason : status,
             text ? text : oq_j_str(w, "stderr_tail", *reason ? reason : status));
    free(text);
}

/* The first configuration shard k failed on its own (its entry in the configuration's "shards"
 * not passed, run or skipped) that the merge did not clear: a failure the other shards' routing
 * lines answered leaves the merged configuration passed (docs/scale-out.md). *cleared: one such
 * failure was cleared. NULL: none left. */
static const json_t *shard_own_failure(const json_t *doc, long long k, int *cleared)
{
    static const char *const fine[] = {"passed", "reference", "skipped"};
    size_t i, j;
    json_t *c, *e;
    *cleared = 0;
    json_array_foreach(json_object_get(doc, "configs"), i, c) json_array_foreach(json_object_get(c, "shards"), j, e) {
            const char *st = oq_j_str(e, "status", "");
            int ok = 0;
            for (size_t f = 0; f < 3; f++) ok |= !strcmp(st, fine[f]);
            if (oq_j_int(e, "index") != k || ok) continue;
            if (strcmp(oq_j_str(c, "status", ""), "passed")) return c;
            *cleared = 1;
        }
    return NULL;
}

/* Shard k, which reported: failing when its own verdict was failed or error and the merge did
 * not clear that (shard_own_failure; a verdict no configuration explains stays failing), so a
 * shard that failed on its own is named as one that did not report is. */
static void reported_case(suite *s, const json_t *doc, const json_t *r, long long k, long long count,
                          const char *cls, const char *name)
{
    const char *v = oq_j_str(r, "verdict", "");
    int cleared;
    const json_t *c = shard_own_failure(doc, k, &cleared);
    if ((strcmp(v, "failed") && strcmp(v, "error")) || (!c && cleared)) {
        add_case(s, cls, name, 0, TC_PASS, NULL, NULL, NULL);
        return;
    }
    char *msg = c ? dupf("shard %lld of %lld reported verdict %s: %s failed on it (%s)", k, count, v,
                         oq_j_str(c, "name", "?"), oq_j_str(c, "reason", oq_j_str(c, "status", "?")))
                  : dupf("shard %lld of %lld reported verdict %s (its summary.json says why)", k, count, v);
    if (!msg) s->nomem = 1;
    add_case(s, cls, name, 0, !strcmp(v, "error") ? TC_ERROR : TC_FAILURE, v, msg ? msg : v, NULL);
    free(msg);
}

/* A merged run (ortqual merge): one case per shard, failing for a shard that did not report
 * (missing, unfinished, failed, interrupted) or that reported its own failure (reported_case),
 * so CI names the shard and not only the configurations it left incomplete. */
static void shard_cases(suite *s, const json_t *doc, const json_t *shards, const char *pkg)
{
    char cls[96];
    snprintf(cls, sizeof cls, "%s.shards", pkg);
    long long count = oq_j_int(shards, "count");
    const json_t *problems = json_object_get(shards, "problems"), *reported = json_object_get(shards, "reported");
    for (long long k = 0; k < count && k < 1000000; k++) {
        char name[48];
        snprintf(name, sizeof name, "shard %lld", k);
        const json_t *p = NULL, *r = NULL, *x;
        size_t i;
        json_array_foreach(problems, i, x) if (oq_j_int(x, "index") == k) p = x;
        json_array_foreach(reported, i, x) if (oq_j_int(x, "index") == k) r = x;
        if (!p) {
            reported_case(s, doc, r, k, count, cls, name);
            continue;
        }
        char *msg = dupf("shard %lld of %lld %s: %s", k, count, oq_j_str(p, "state", "missing"), oq_j_str(p, "detail", ""));
        if (!msg) s->nomem = 1;
        add_case(s, cls, name, 0, TC_FAILURE, oq_j_str(p, "state", "missing"), msg ? msg : "did not report", NULL);
        free(msg);
    }
}

/* A run whose verdict is not PASSED and that no case shows failing (nothing under test
 * compared: only the reference, every configuration skipped) fails a case of its own;
 * accepted with --allow-skip (untested, exit status 0), it is skipped. Only that verdict can
 * be accepted: a missing or unknown one (the page's FAILED) with exit status 0 still fails. */
static void run_case(suite *s, const json_t *doc, const char *pkg, const totals *all)
{
    const char *v = oq_j_str(doc, "verdict", "failed"), *why = oq_j_str(doc, "verdict_reason", v);
    if (!strcmp(v, "passed") || all->failures || all->errors) return;
    int accepted = !strcmp(v, "untested") && json_is_integer(json_object_get(doc, "exit_status")) &&
                   !oq_j_int(doc, "exit_status");
    add_case(s, pkg, "verdict", 0, accepted ? TC_SKIPPED : !strcmp(v, "error") ? TC_ERROR : TC_FAILURE, v, why, why);
}

static oq_status junit_validate(oq_sb *b, const json_t *doc)
{
    const json_t *ev = json_object_get(doc, "evidence");
    const char *sub = json_string_value(json_array_get(json_object_get(ev, "command"), 0));
    char top[640], pkg[64], note[512];
    int shard = oq_report_shard_note(doc, note, sizeof note);
    /* a shard's suites are its part's: said where CI shows the run's name */
    snprintf(top, sizeof top, "ortqual %s%s%s", sub ? sub : "validate", shard ? ", " : "", note);
    snprintf(pkg, sizeof pkg, "ortqual.%s", sub ? sub : "validate");
    const char *host = oq_j_str(json_object_get(ev, "host"), "name", NULL);
    char stamp[32] = "";
    snprintf(stamp, sizeof stamp, "%.19s", oq_j_str(doc, "start", "")); /* without the Z: a local-less time */
    oq_sb body = {0};
    totals all = {0, 0, 0, 0, 0};
    size_t i;
    json_t *cfg;
    int nomem = 0;
    json_array_foreach(json_object_get(doc, "configs"), i, cfg) {
        suite s = {0};
        const char *name = oq_j_str(cfg, "name", "?");
        char cls[320];
        snprintf(cls, sizeof cls, "%s.%s", pkg, name);
        config_cases(&s, cfg, cls);
        const char *props[] = {"status", oq_vd_status(cfg), "reason", oq_j_str(cfg, "reason", ""),
                               "onnxruntime", oq_j_str(json_object_get(cfg, "onnxruntime"), "version", ""),
                               shard ? "shard" : NULL, note, NULL};
        write_suite(&body, &s, name, i, *stamp ? stamp : NULL, host, props, &all);
        nomem |= s.nomem;
        suite_clear(&s);
    }
    const json_t *shards = json_object_get(doc, "shards");
    if (shards) {
        suite sh = {0};
        shard_cases(&sh, doc, shards, pkg);
        const char *props[] = {"by", oq_j_str(shards, "by", ""), NULL};
        write_suite(&body, &sh, "shards", i++, *stamp ? stamp : NULL, host, props, &all);
        nomem |= sh.nomem;
        suite_clear(&sh);
    }
    suite run = {0};
    run_case(&run, doc, pkg, &all);
    if (run.n) {
        const char *props[] = {"verdict", oq_j_str(doc, "verdict", "?"), "reason", oq_j_str(doc, "verdict_reason", ""),
                               shard ? "shard" : NULL, note, NULL};
        write_suite(&body, &run, "run", i, *stamp ? stamp : NULL, host, props, &all);
    }
    nomem |= run.nomem;
    suite_clear(&run);
    /* command[0] comes from a summary.json a user may have edited: escaped as every field is */
    wrap_suites(b, top, &all, &body, nomem);
    return OQ_OK;
}

/* ---- conformance ------------------------------------------------------------------ */

/* A failed test's detail and its worst element, "DETAIL (output y at [0,3]: got nan, expected
 * 1.5)", as report.html shows it (NULL: none recorded, or out of memory). */
static char *worst_element(const json_t *t, const char *detail)
{
    if (!json_object_get(t, "got")) return NULL;
    oq_sb m = {0};
    size_t k;
    json_t *x;
    oq_sb_printf(&m, "%s (output %s at [", detail, oq_j_str(t, "output_name", "?"));
    json_array_foreach(json_object_get(t, "worst_index"), k, x) oq_sb_printf(&m, "%s%lld", k ? "," : "", (long long)json_integer_value(x));
    oq_sb_puts(&m, "]: got ");
    worst_value(&m, json_object_get(t, "got"));
    oq_sb_puts(&m, ", expected ");
    worst_value(&m, json_object_get(t, "expected"));
    oq_sb_puts(&m, ")");
    return oq_sb_take(&m, NULL);
}

static oq_status junit_conformance(oq_sb *b, const json_t *doc)
{
    suite s = {0};
    int strict = json_is_true(json_object_get(doc, "strict"));
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(doc, "tests"), i, t) {
        const char *v = oq_j_str(t, "verdict", "?"), *detail = oq_j_str(t, "detail", "");
        int kind = !strcmp(v, "PASS")                          ? TC_PASS
                   : !strcmp(v, "FAIL")                        ? TC_FAILURE
                   : !strcmp(v, "UNSUPPORTED") && strict       ? TC_FAILURE
                   : !strcmp(v, "SKIP") || !strcmp(v, "UNSUPPORTED") ? TC_SKIPPED
                                                               : TC_ERROR;
        const json_t *refusal = json_object_get(t, "refusal");
        json_t *r = refusal ? json_deep_copy(refusal) : NULL; /* the detail is ORT's own message */
        if (r) json_object_set_new(r, "raw", json_string(detail));
        char *text = r ? refusal_text(r) : NULL;
        json_decref(r);
        if (refusal && !text) s.nomem = 1;
        char *worst = kind == TC_FAILURE && !text ? worst_element(t, detail) : NULL;
        add_case(&s, "ortqual.conformance", oq_j_str(t, "name", "?"), 0, kind, v, detail,
                 text ? text : worst ? worst : detail);
        free(text);
        free(worst);
    }
    int any_bad = 0;
    for (size_t k = 0; k < s.n; k++) any_bad |= s.c[k].kind == TC_FAILURE || s.c[k].kind == TC_ERROR;
    /* nothing passed (all skipped, the provider absent): a failing case, skipped when --allow-skip
     * accepted it (exit 0), as validate's run_case */
    const char *v = oq_j_str(doc, "verdict", "passed");
    int accepted = !strcmp(v, "untested") && json_is_integer(json_object_get(doc, "exit_status")) &&
                   !oq_j_int(doc, "exit_status");
    if (!any_bad && strcmp(v, "passed"))
        add_case(&s, "ortqual.conformance", "verdict", 0, accepted ? TC_SKIPPED : TC_FAILURE, v,
                 oq_j_str(doc, "reason", v), NULL);
    totals all = {0, 0, 0, 0, 0};
    oq_sb body = {0};
    const char *props[] = {"runner", oq_j_str(doc, "runner", ""), "onnxruntime",
                           oq_j_str(json_object_get(doc, "onnxruntime"), "version", ""), NULL};
    write_suite(&body, &s, "ortqual conformance", 0, NULL, NULL, props, &all);
    wrap_suites(b, "ortqual conformance", &all, &body, s.nomem);
    suite_clear(&s);
    return OQ_OK;
}

/* ---- gate ----------------------------------------------------------------------------- */

static oq_status junit_gate(oq_sb *b, const json_t *doc)
{
    suite s = {0};
    oq_sb cmd = {0}, why = {0};
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(doc, "command"), i, x) oq_sb_printf(&cmd, "%s%s", i ? " " : "", json_string_value(x));
    json_array_foreach(json_object_get(doc, "reasons"), i, x) oq_sb_printf(&why, "%s%s", i ? "; " : "", json_string_value(x));
    const char *v = oq_j_str(doc, "verdict", "error");
    int kind = !strcmp(v, "pass") ? TC_PASS : !strcmp(v, "fail") ? TC_FAILURE : TC_ERROR;
    const json_t *counts = json_object_get(doc, "counts");
    /* as long as the reasons are: a fixed buffer cut them inside a UTF-8 character (invalid XML) */
    char *text = dupf("%s; %lld passed, %lld failed, %lld skipped, %lld errors (%s)", why.d.buf ? why.d.buf : v,
                      oq_j_int(counts, "passed"), oq_j_int(counts, "failed"), oq_j_int(counts, "skipped"),
                      oq_j_int(counts, "errors"), oq_j_str(doc, "runner", "?"));
    if (!text) s.nomem = 1;
    add_case(&s, "ortqual.gate", cmd.d.buf ? cmd.d.buf : "(no command)", oq_j_num(doc, "duration_s"), kind, "gate",
             why.d.buf ? why.d.buf : v, text ? text : v);
    free(text);
    json_array_foreach(json_object_get(json_object_get(doc, "summary"), "skip_reasons"), i, x) {
        char name[64];
        snprintf(name, sizeof name, "skip reason %zu", i + 1);
        char *msg = dupf("%s (%lld tests)", oq_j_str(x, "reason", ""), oq_j_int(x, "count"));
        add_case(&s, "ortqual.gate.skips", name, 0, TC_SKIPPED, NULL, msg ? msg : "", NULL);
        free(msg);
    }
    totals all = {0, 0, 0, 0, 0};
    oq_sb body = {0};
    /* the log only where it stays: without --keep the gate removed it with its folder */
    int kept = json_is_true(json_object_get(doc, "kept"));
    const char *props[] = {"runner", oq_j_str(doc, "runner", ""), kept ? "log" : NULL, oq_j_str(doc, "log", ""), NULL};
    write_suite(&body, &s, "ortqual gate", 0, NULL, NULL, props, &all);
    wrap_suites(b, "ortqual gate", &all, &body, s.nomem | cmd.failed | why.failed);
    oq_sb_free(&cmd);
    oq_sb_free(&why);
    suite_clear(&s);
    return OQ_OK;
}

/* ---- bench ---------------------------------------------------------------------------- */

/* The baseline's comparison of results[i] (NULL: none, as without --baseline). */
static const json_t *bench_match(const json_t *baseline, size_t i)
{
    size_t k;
    json_t *e;
    json_array_foreach(json_object_get(baseline, "rows"), k, e) {
        const json_t *at = json_object_get(e, "result");
        if (json_is_integer(at) && json_integer_value(at) == (json_int_t)i) return e;
    }
    return NULL;
}

/* A row's name: its baseline identity where it has one, else variant, sizes and mode. */
static char *bench_row_name(const json_t *row, const json_t *match)
{
    if (match) return strdup(oq_j_str(match, "row", "?"));
    oq_sb b = {0};
    oq_sb_printf(&b, "%s batch=%lld seq_len=%lld %s", oq_j_str(row, "variant", "?"), oq_j_int(row, "batch"),
                 oq_j_int(row, "seq_len"), json_is_true(json_object_get(row, "masked")) ? "masked" : "unmasked");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(row, "dims"), k, v) oq_sb_printf(&b, " %s=%lld", k, (long long)json_integer_value(v));
    return oq_sb_take(&b, NULL);
}

/* One ONNX Runtime row: failed by its own check or a slowdown over the baseline's limit, an error
 * where ONNX Runtime could not run it, skipped where it did not run or was not compared with the
 * baseline (untimed, new); the reference rows are not under test. */
static void bench_row_case(suite *s, const json_t *row, const json_t *match)
{
    const char *status = oq_j_str(row, "status", "?"), *why = oq_j_str(row, "error", "");
    const char *m = match ? oq_j_str(match, "match", "?") : NULL;
    int kind = !strcmp(status, "failed") ? TC_FAILURE
               : !strcmp(status, "error") ? TC_ERROR
               : strcmp(status, "ok")     ? TC_SKIPPED
               : !m || !strcmp(m, "ok")   ? TC_PASS
               : !strcmp(m, "regressed")  ? TC_FAILURE
                                          : TC_SKIPPED;
    char *name = bench_row_name(row, match);
    char *msg = strcmp(status, "ok") ? dupf("%s%s%s", status, *why ? ": " : "", why)
                : m ? dupf("baseline: %s", !strcmp(m, "new") ? "new (not in the baseline)" : m) : NULL;
    if (!name || (kind != TC_PASS && !msg)) s->nomem = 1;
    else add_case(s, "ortqual.bench", name, 0, kind, strcmp(status, "ok") ? status : m, msg, NULL);
    free(name);
    free(msg);
}

static oq_status junit_bench(oq_sb *b, const json_t *doc)
{
    suite s = {0};
    const json_t *baseline = json_object_get(doc, "baseline");
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(doc, "results"), i, row)
        if (strncmp(oq_j_str(row, "variant", ""), "ref:", 4)) bench_row_case(&s, row, bench_match(baseline, i));
    json_array_foreach(json_object_get(baseline, "rows"), i, row)
        if (!strcmp(oq_j_str(row, "match", ""), "missing"))
            add_case(&s, "ortqual.bench", oq_j_str(row, "row", "?"), 0, TC_SKIPPED, NULL,
                     "baseline: missing (the baseline's row did not run here)", NULL);
    totals bad = {0, 0, 0, 0, 0}; /* run_case reads the failures and errors so far */
    for (size_t k = 0; k < s.n; k++) {
        bad.failures += s.c[k].kind == TC_FAILURE;
        bad.errors += s.c[k].kind == TC_ERROR;
    }
    run_case(&s, doc, "ortqual.bench", &bad);
    totals all = {0, 0, 0, 0, 0};
    oq_sb body = {0};
    const char *props[] = {"verdict", oq_j_str(doc, "verdict", "?"), "reason", oq_j_str(doc, "verdict_reason", ""), NULL};
    write_suite(&body, &s, "ortqual bench", 0, NULL, NULL, props, &all);
    wrap_suites(b, "ortqual bench", &all, &body, s.nomem);
    suite_clear(&s);
    return OQ_OK;
}

/* ---- a refusal ------------------------------------------------------------------------ */

/* The error document of a command that was refused ("schema": "ortqual-error/1"): one <error>
 * case saying why, so that a --junit path never keeps an earlier run's green file. */
static oq_status junit_refusal(oq_sb *b, const json_t *doc)
{
    const char *cmd = oq_j_str(doc, "command", "?"), *why = oq_j_str(doc, "error", "refused");
    char top[64], pkg[64];
    snprintf(top, sizeof top, "ortqual %s", cmd);
    snprintf(pkg, sizeof pkg, "ortqual.%s", cmd);
    suite s = {0};
    add_case(&s, pkg, "run", 0, TC_ERROR, oq_j_str(doc, "status", "error"), why, why);
    totals all = {0, 0, 0, 0, 0};
    oq_sb body = {0};
    write_suite(&body, &s, "run", 0, NULL, NULL, NULL, &all);
    wrap_suites(b, top, &all, &body, s.nomem);
    suite_clear(&s);
    return OQ_OK;
}

oq_status oq_junit_xml_json(const json_t *doc, const char *name, char **xml, size_t *n, oq_err *err)
{
    *xml = NULL;
    *n = 0;
    oq_sb b = {0};
    oq_sb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    oq_status st;
    switch (oq_report_kind_of(doc)) {
    case OQ_REPORT_VALIDATE:
        if (!(st = oq_report_validate_check(doc, name, err))) st = junit_validate(&b, doc);
        break;
    case OQ_REPORT_CONFORMANCE: st = junit_conformance(&b, doc); break;
    case OQ_REPORT_GATE: st = junit_gate(&b, doc); break;
    case OQ_REPORT_BENCH: st = junit_bench(&b, doc); break;
    case OQ_REPORT_REFUSAL: st = junit_refusal(&b, doc); break;
    default:
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: no JUnit for this document (validate, replay, conformance, bench or gate "
                        "results and refusals have test cases)", name);
    }
    if (!st && !(*xml = oq_sb_take(&b, n))) st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory writing JUnit XML", name);
    oq_sb_free(&b);
    return st;
}

oq_status oq_junit_xml(const char *json, size_t n, const char *name, char **xml, size_t *xml_n, oq_err *err)
{
    OQ_NEED_N(err, n, json);
    OQ_NEED(err, name);
    OQ_NEED(err, xml);
    OQ_NEED(err, xml_n);
    return oq_render_text(oq_junit_xml_json, json, n, name, xml, xml_n, err);
}

oq_status oq_junit_write(const char *json, size_t n, const char *name, const char *path, oq_err *err)
{
    OQ_NEED_N(err, n, json);
    OQ_NEED(err, name);
    OQ_NEED(err, path);
    return oq_render_write(oq_junit_xml_json, json, n, name, path, err);
}

oq_status oq_junit_write_summary(const char *summary_path, const char *path, oq_err *err)
{
    OQ_NEED(err, summary_path);
    OQ_NEED(err, path);
    return oq_render_file(oq_junit_xml_json, summary_path, path, err);
}
