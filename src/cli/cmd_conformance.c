/* ortqual conformance: run ONNX backend node tests against the Attention reference. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/compare.h"
#include "ortqual/conformance.h"
#include "ortqual/evidence.h"
#include "ortqual/fileio.h"
#include "ortqual/refusal.h"
#include "ortqual/report.h"

const char cmd_conformance_summary[] = "run ONNX backend node tests (Attention) on the reference or on ONNX Runtime (--ep)";

static const char head[] =
    "usage: ortqual conformance [options] [DIR...]\n"
    "\n"
    "Run ONNX backend node tests (model.onnx + test_data_set_*/input_N.pb, output_N.pb)\n"
    "against ortqual's float64 reference of the ONNX Attention operator (opsets 23, 24).\n"
    "Each DIR is a test directory, or a directory of test directories (one level,\n"
    "sorted; every subdirectory not named .* must be a test, and each test is reached\n"
    "once). Without DIR: $OQ_CONFORMANCE_DIR, else the set shipped with ortqual (the\n"
    "ONNX v1.22.0 Attention tests: tests/data/onnx-backend/attention in the source tree,\n"
    "<prefix>/share/ortqual/onnx-backend/attention once installed).\n"
    "\n"
    "Outputs must satisfy numpy's allclose: |got - expected| <= atol + rtol*|expected|,\n"
    "where NaN matches only NaN. Tests whose model is not a single Attention node (the\n"
    "*_expanded function bodies) are skipped as not applicable, and so are tests with\n"
    "nothing to compare (every output empty, or NaN in both). The reference runs a node\n"
    "as the ai.onnx opset its model imports defines it: Attention below opset 23, or\n"
    "Attention-24's nonpad_kv_seqlen or short mask at opset 23, is an invalid model (FAIL).\n"
    "\n"
    "With --ep (or any runtime option), the models run through ONNX Runtime on that\n"
    "execution provider instead of the reference, the *_expanded ones included: the\n"
    "expected outputs are ONNX's, so this checks the runtime, not ortqual.\n"
    "\n"
    "Prints one line per test: PASS name, FAIL name: reason (the worst element when\n"
    "an output differs), SKIP name: reason (not applicable, or nothing to compare), or\n"
    "UNSUPPORTED name: reason (ORT answered with its NOT_IMPLEMENTED status: no kernel\n"
    "for that op, type or mode on the provider). Then 'N passed, M failed, K skipped', K counting the\n"
    "unsupported ones too, with '(U unsupported)' after it when there are any.\n"
    "When ONNX Runtime refuses a test's model in a way ortqual knows (refusal.h), the lines\n"
    "after it name the node and its inputs, say why and give the fix.\n"
    "A run in which no test passed (every test skipped or unsupported) is not a pass:\n"
    "exit 1 saying so, unless --allow-skip (docs/verdicts.md); so is an --ep provider\n"
    "not available here, found before any test (every test skipped with the reason).\n"
    "Exit status 0 when nothing failed, 1 when a test failed (or, with --strict, was\n"
    "unsupported), 2 on bad usage (e.g. a DIR or subdirectory with no model.onnx, or a\n"
    "test given twice).\n";

static const char foot[] =
    "\n"
    "examples:\n"
    "  ortqual conformance                      # the shipped set, on the reference\n"
    "  ortqual conformance --ep cpu             # the same tests on ORT CPU\n"
    "  ortqual conformance --outdir conf-ref --junit conf-ref/junit.xml\n"
    "  ortqual conformance tests/data/onnx-backend/attention/test_attention_4d_causal\n";

/* --rtol, --atol: a number >= 0 into the double at ctx, one a test can fail (compare.h). */
static int set_tol(const oq_opt *opt, const char *s)
{
    double v = 0;
    const char *end = oq_text_real(s, &v);
    if (!end || *end || !(v >= 0 && isfinite(v))) {
        oq_cli_error_in("conformance", "--%s wants a finite number >= 0, got '%s'", opt->name, oq_cli_shown(s));
        return -1;
    }
    oq_err e = {0};
    if (oq_tolerance_check_value(opt->name, v, &e)) {
        oq_cli_error_in("conformance", "--%s %s: %s", opt->name, s, e.msg);
        return -1;
    }
    *(double *)opt->ctx = v;
    return 0;
}

static const char *verdict_word(oq_conformance_verdict v)
{
    static const char *const words[] = {"PASS", "FAIL", "SKIP", "UNSUPPORTED"};
    return words[v];
}

/* 'N passed, M failed, K skipped', unsupported tests counted in K and named apart. */
static void print_closing_line(const size_t counts[4])
{
    size_t unsupported = counts[OQ_CONFORMANCE_UNSUPPORTED];
    printf("%zu passed, %zu failed, %zu skipped", counts[OQ_CONFORMANCE_PASS],
           counts[OQ_CONFORMANCE_FAIL], counts[OQ_CONFORMANCE_SKIP] + unsupported);
    if (unsupported) printf(" (%zu unsupported)", unsupported);
    putchar('\n');
}

/* ORT's refusal of the test's model explained (the reference's own failures match no pattern). */
static void explain(const char *test_dir, const oq_conformance_result *r, const char *ep, oq_refusal *x)
{
    memset(x, 0, sizeof *x);
    if (r->verdict != OQ_CONFORMANCE_FAIL && r->verdict != OQ_CONFORMANCE_UNSUPPORTED) return;
    char model[4096];
    snprintf(model, sizeof model, "%s/model.onnx", test_dir);
    oq_refusal_facts f = {.message = r->detail, .model = model, .ep = ep};
    if (oq_refusal_explain(&f, x, NULL) == OQ_OK && x->id) return;
    oq_refusal_clear(x);
}

static void print_refusal(const oq_refusal *x)
{
    if (!x->id) return;
    printf("    refused [%s]%s%s%s%s\n", x->id, x->node ? " at node " : "", x->node ? oq_cli_shown(x->node) : "",
           x->inputs ? "; inputs " : "", x->inputs ? oq_cli_shown(x->inputs) : "");
    printf("    why: %s\n    fix: %s\n", x->why ? oq_cli_shown(x->why) : "", x->fix ? oq_cli_shown(x->fix) : "");
}

static json_t *refusal_json(const oq_refusal *x)
{
    json_t *j = json_pack("{s:s}", "pattern", x->id);
    if (x->node) json_object_set_new(j, "node", oq_cli_json_text(x->node));
    if (x->inputs) json_object_set_new(j, "inputs", oq_cli_json_text(x->inputs));
    if (x->why) json_object_set_new(j, "why", oq_cli_json_text(x->why));
    if (x->fix) json_object_set_new(j, "fix", oq_cli_json_text(x->fix));
    return j;
}

/* JSON cannot hold NaN/Inf: "nan", "inf", "-inf", as validate's summary writes them (a bare
 * json_real(NaN) is NULL, and the member silently went missing). */
static json_t *value_json(double v)
{
    return isnan(v) ? json_string("nan") : isinf(v) ? json_string(v > 0 ? "inf" : "-inf") : json_real(v);
}

static json_t *result_json(const oq_conformance_result *r)
{
    /* the name is the test's folder's and the detail may name a file: neither need be UTF-8 */
    json_t *o = json_pack("{s:o, s:s, s:o}", "name", oq_cli_json_text(r->name), "verdict",
                          verdict_word(r->verdict), "detail", oq_cli_json_text(r->detail));
    if (r->output >= 0) {
        json_t *coord = json_array();
        for (int32_t i = 0; i < r->ndim; i++) json_array_append_new(coord, json_integer(r->coord[i]));
        json_object_set_new(o, "output", json_integer(r->output));
        json_object_set_new(o, "output_name", oq_cli_json_text(r->output_name));
        json_object_set_new(o, "worst_index", coord);
        json_object_set_new(o, "got", value_json(r->got));
        json_object_set_new(o, "expected", value_json(r->expected));
        json_object_set_new(o, "abs_diff", value_json(r->abs_diff));
    }
    return o;
}

/* Expands every DIR first, so that a bad DIR is a usage error before any test runs. */
static int collect(int argc, char **argv, char ***all, size_t *n_all)
{
    *all = NULL;
    *n_all = 0;
    for (int a = 0; a < argc; a++) {
        char **tests;
        size_t n;
        oq_err err = {0};
        if (oq_conformance_list(argv[a], &tests, &n, &err)) {
            oq_cli_error_in("conformance", "%s", err.msg);
            return 0;
        }
        char **nv = realloc(*all, (*n_all + n + 1) * sizeof *nv);
        if (!nv) {
            oq_conformance_list_free(tests);
            oq_cli_error_in("conformance", "out of memory");
            return 0;
        }
        *all = nv;
        for (size_t i = 0; i < n; i++) (*all)[(*n_all)++] = tests[i];
        (*all)[*n_all] = NULL;
        free(tests); /* the strings moved into *all */
    }
    return 1;
}

typedef struct resolved {
    char *real; /* realpath of the test */
    size_t at;  /* its place in the list */
} resolved;

static int by_real(const void *a, const void *b)
{
    const resolved *x = a, *y = b;
    int c = strcmp(x->real, y->real);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* A test reached twice (given twice, as a DIR and one of its tests, or through a link) ran and
 * counted twice: refused, naming it. Returns 1 when each test is reached once. */
static int each_once(char **tests, size_t n)
{
    resolved *r = calloc(n + 1, sizeof *r);
    int ok = r != NULL;
    if (!ok) oq_cli_error_in("conformance", "out of memory");
    for (size_t i = 0; ok && i < n; i++) {
        r[i].at = i;
        if (!(r[i].real = realpath(tests[i], NULL))) {
            oq_cli_error_in("conformance", "%s: %s", oq_cli_shown(tests[i]), strerror(errno));
            ok = 0;
        }
    }
    if (ok) qsort(r, n, sizeof *r, by_real);
    for (size_t i = 1; ok && i < n; i++) {
        if (strcmp(r[i - 1].real, r[i].real)) continue;
        oq_cli_error_in("conformance", "%s: the same test as %s, reached twice (each test runs once)",
                oq_cli_shown(tests[r[i].at]), oq_cli_shown(tests[r[i - 1].at]));
        ok = 0;
    }
    for (size_t i = 0; r && i < n; i++) free(r[i].real);
    free(r);
    return ok;
}

/* How results are printed, judged and written. */
typedef struct report_flags {
    int json;           /* one JSON document instead of lines */
    int strict;         /* UNSUPPORTED fails the run */
    int allow_skip;     /* a run where nothing passed may exit 0 */
    int force;          /* --outdir may hold files */
    const char *outdir; /* summary.json and report.html go here */
    const char *junit;  /* JUnit XML path */
    const char *ep;     /* ORT's name of the provider the tests run on (refusals are explained for it) */
    const char *absent; /* why the provider is not available here (NULL: it is): no test runs */
    int argc;
    char **argv;
} report_flags;

/* The evidence of the process that ran the tests (evidence.h); {"error"} when it cannot be
 * collected, NULL when out of memory. */
static json_t *evidence_json(oq_runtime *rt)
{
    oq_evidence *ev = NULL;
    oq_err e = {0};
    if (oq_evidence_collect(rt, NULL, &ev, &e)) return json_pack("{s:s}", "error", e.msg);
    char *text = oq_evidence_to_json(ev);
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    oq_evidence_free(ev);
    return j;
}

static json_t *argv_json(int argc, char **argv)
{
    json_t *a = json_array();
    for (int i = 0; a && i < argc; i++) json_array_append_new(a, oq_cli_json_text(argv[i]));
    return a;
}

/* An ISO 8601 UTC time to the second, as every ortqual document writes its times. */
static void utc_now(char when[32])
{
    time_t now = time(NULL);
    strftime(when, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

/* The document --json prints, --outdir keeps and --junit reads: the same whichever of them are
 * asked (a CI step parsing stdout must not find fewer keys without a report file). */
static json_t *summary_doc(json_t *tests, const size_t counts[4], const oq_conformance_opts *opts,
                           const report_flags *f, oq_runtime *rt, const char *ep, const char *start)
{
    size_t failed = counts[OQ_CONFORMANCE_FAIL] + (f->strict ? counts[OQ_CONFORMANCE_UNSUPPORTED] : 0);
    int untested = !failed && !counts[OQ_CONFORMANCE_PASS]; /* nothing compared: never green */
    char end[32], cwd[4096];
    utc_now(end);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:I}", "schema", OQ_CONFORMANCE_SCHEMA, "tool",
                            "ortqual conformance", "start", start, "end", end, "tests", tests, "passed",
                            (json_int_t)counts[0], "failed", (json_int_t)counts[1], "skipped",
                            (json_int_t)(counts[2] + counts[3]), "unsupported", (json_int_t)counts[3]);
    if (!doc) return NULL;
    json_object_set_new(doc, "command", argv_json(f->argc, f->argv));
    if (getcwd(cwd, sizeof cwd)) json_object_set_new(doc, "cwd", oq_cli_json_text(cwd));
    json_object_set_new(doc, "runner", json_string(rt ? "onnxruntime" : "reference"));
    json_object_set_new(doc, "tolerance", json_pack("{s:f, s:f}", "rtol", opts->rtol, "atol", opts->atol));
    json_object_set_new(doc, "strict", json_boolean(f->strict));
    json_object_set_new(doc, "verdict", json_string(failed ? "failed" : untested ? "untested" : "passed"));
    json_object_set_new(doc, "exit_status", json_integer(failed || (untested && !f->allow_skip) ? 1 : 0));
    if (untested)
        json_object_set_new(doc, "reason", f->absent ? json_pack("s+", "no test ran: ", f->absent)
                                                     : json_string("no test passed (all skipped or unsupported)"));
    if (rt) {
        json_object_set_new(doc, "ep", json_string(ep ? ep : "cpu"));
        json_object_set_new(doc, "onnxruntime", json_pack("{s:s, s:o, s:s}", "version", oq_runtime_version(rt), "library",
                                                          oq_cli_json_text(oq_runtime_lib_path(rt)), "build_info",
                                                          oq_runtime_build_info(rt)));
        json_object_set_new(doc, "evidence", evidence_json(rt));
    }
    return doc;
}

/* summary.json and report.html into --outdir, the JUnit XML to --junit. */
static int write_outputs(const json_t *doc, const report_flags *f)
{
    oq_err err = {0};
    char path[4096];
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    oq_status st = text ? OQ_OK : oq_err_set(&err, OQ_ERR_NOMEM, "out of memory");
    size_t n = text ? strlen(text) : 0;
    if (!st && f->outdir) {
        snprintf(path, sizeof path, "%s/summary.json", f->outdir);
        text[n] = '\n'; /* the file ends with a newline: the terminator is replaced, not counted */
        st = oq_mkdirs(f->outdir, &err);
        if (!st) st = oq_write_file_atomic(path, text, n + 1, 1, &err);
        text[n] = 0;
        if (!st) st = oq_report_write_dir(f->outdir, &err);
    }
    if (!st && f->junit) st = oq_junit_write(text, n, f->outdir ? path : "conformance", f->junit, &err);
    free(text);
    if (!st) return OQ_EXIT_OK;
    oq_cli_error_in("conformance", "%s", err.msg);
    return OQ_EXIT_RUNTIME;
}

/* A test that cannot run on a provider absent here: a SKIP with the reason, as validate skips a
 * configuration whose provider is absent. */
static void skipped_test(const char *test_dir, const char *absent, oq_conformance_result *r)
{
    oq_conformance_result_init(r, test_dir);
    r->verdict = OQ_CONFORMANCE_SKIP;
    snprintf(r->detail, sizeof r->detail, "not run: %s", absent);
}

/* Runs every test, prints the lines (or JSON) and the closing line; returns the exit status. */
static int run_all(char **tests, size_t n, const oq_conformance_opts *opts, const report_flags *f, oq_runtime *rt,
                   const char *ep)
{
    size_t counts[4] = {0, 0, 0, 0};
    char start[32];
    utc_now(start);
    json_t *arr = f->json || f->outdir || f->junit ? json_array() : NULL;
    int rc = OQ_EXIT_OK;
    /* which build the verdicts are of, as validate, replay and bench say it */
    if (rt && !f->json)
        printf("ONNX Runtime %s (%s) on %s\n", oq_cli_shown(oq_runtime_version(rt)), oq_cli_shown(oq_runtime_lib_path(rt)),
               oq_cli_shown(f->ep));
    for (size_t i = 0; i < n; i++) {
        oq_conformance_result r;
        oq_err err = {0};
        if (f->absent) skipped_test(tests[i], f->absent, &r);
        else if (oq_conformance_run_test(tests[i], opts, &r, &err)) {
            oq_cli_error_in("conformance", "%s", err.msg);
            rc = OQ_EXIT_RUNTIME;
            break;
        }
        counts[r.verdict]++;
        oq_refusal x;
        explain(tests[i], &r, f->ep, &x);
        if (arr) {
            json_t *jr = result_json(&r);
            if (x.id) json_object_set_new(jr, "refusal", refusal_json(&x));
            json_array_append_new(arr, jr);
        }
        if (!f->json && r.verdict == OQ_CONFORMANCE_PASS) {
            printf("PASS %s\n", oq_cli_shown(r.name));
        } else if (!f->json && !f->absent) { /* one line below says why none ran */
            printf("%s %s: %s\n", verdict_word(r.verdict), oq_cli_shown(r.name), oq_cli_shown(r.detail));
            print_refusal(&x);
        }
        oq_refusal_clear(&x);
        fflush(stdout);
    }
    json_t *doc = arr && rc == OQ_EXIT_OK ? summary_doc(arr, counts, opts, f, rt, ep, start) : NULL;
    if (!doc) json_decref(arr);
    int answer = doc && f->json;
    if (!answer && rc == OQ_EXIT_OK) print_closing_line(counts);
    /* written before the answer: when --outdir or --junit fails, the error object is the answer */
    if (doc && rc == OQ_EXIT_OK) rc = write_outputs(doc, f);
    if (answer && rc == OQ_EXIT_OK) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        oq_cli_json_answered();
    }
    json_decref(doc);
    if (rc != OQ_EXIT_OK) return rc;
    int failed = counts[OQ_CONFORMANCE_FAIL] || (f->strict && counts[OQ_CONFORMANCE_UNSUPPORTED]);
    if (f->absent) {
        oq_cli_error_in("conformance", "NOT TESTED: no test ran (%zu skipped): %s%s", n, f->absent,
                f->allow_skip ? " (accepted by --allow-skip)" : "; --allow-skip accepts that");
        return f->allow_skip ? OQ_EXIT_OK : OQ_EXIT_FAIL;
    }
    if (!failed && !counts[OQ_CONFORMANCE_PASS] && !f->allow_skip) {
        /* nothing under test ran and was compared: never green */
        fprintf(stderr, "ortqual conformance: no test passed (%zu run, all skipped or unsupported); "
                        "--allow-skip accepts that\n", n);
        return OQ_EXIT_FAIL;
    }
    return failed ? OQ_EXIT_FAIL : OQ_EXIT_OK;
}

/* The real path of the folder `path` goes into: of its nearest ancestor that exists (the
 * folders below it would be made). NULL when out of memory or none resolves. */
static char *real_folder_of(const char *path)
{
    char *up = strdup(path), *real = NULL;
    for (char *slash; up && !real && (slash = strrchr(up, '/'));) {
        slash[slash == up] = 0; /* "/x" is in "/" */
        real = realpath(up, NULL);
        if (slash == up) break;
    }
    if (up && !real && !strchr(up, '/')) real = realpath(".", NULL);
    free(up);
    return real;
}

/* --junit inside a test's folder (one of its files, or a new file beside them) is refused: renamed
 * into place, the JUnit XML would replace the model or a tensor the next run reads. */
static int junit_in_tests(const char *junit, char **tests, size_t n)
{
    char *folder = junit ? real_folder_of(junit) : NULL;
    int rc = OQ_EXIT_OK;
    for (size_t i = 0; folder && !rc && i < n; i++) {
        char *test = realpath(tests[i], NULL);
        size_t k = test ? strlen(test) : 0;
        if (test && !strncmp(folder, test, k) && (folder[k] == '/' || !folder[k])) {
            oq_cli_error("--junit %s is inside the test folder %s (its files are what the run reads): give another "
                         "--junit", junit, tests[i]);
            rc = OQ_EXIT_USAGE;
        }
        free(test);
    }
    free(folder);
    return rc;
}

/* --outdir and --junit before any test runs: --junit not a file of --outdir's nor of a test's,
 * --outdir taken for this run (*lock), new or empty unless --force, writable. */
static int check_outputs(const report_flags *f, char **tests, size_t n, oq_outdir_lock **lock)
{
    static const char *const made[] = {"summary.json", "report.html", "error.json", ".*"};
    oq_err err = {0};
    int rc = oq_cli_clashes_outdir("conformance", "--junit", f->junit, f->outdir, made, sizeof made / sizeof *made);
    if (!rc) rc = junit_in_tests(f->junit, tests, n);
    if (!rc && f->outdir) rc = oq_cli_outdir_lock("conformance", f->outdir, NULL, NULL, lock);
    if (rc) return rc;
    oq_status st = f->outdir ? oq_check_outdir(f->outdir, f->force, NULL, &err) : OQ_OK;
    if (st) {
        oq_cli_error_in("conformance", "--outdir: %s", err.msg);
        return oq_cli_exit_of(st);
    }
    return oq_cli_output_ready("conformance", "--junit", f->junit, f->outdir);
}

/* With runtime options: load ORT once and run every test through it. A provider that is not
 * available here (no library, no device) is found once, before any test: every test is then
 * skipped with that reason, and the run is not tested. */
static int run_with_ort(const struct oq_cli_runtime *cr, char **tests, size_t n,
                        oq_conformance_opts *opts, const report_flags *f)
{
    oq_runtime *rt = NULL;
    int rc = oq_cli_runtime_open(cr, &rt);
    if (rc) return rc;
    oq_session_opts so = {0};
    oq_cli_runtime_session_opts(cr, &so);
    oq_conformance_ort ort = {rt, &so};
    opts->runner = oq_conformance_ort_runner;
    opts->runner_ctx = &ort;
    report_flags g = *f;
    g.ep = oq_ep_full_name(cr->ep ? cr->ep : "cpu");
    oq_err absent = {0};
    if (oq_session_ep_check(rt, &so, &absent) == OQ_ERR_NOT_FOUND) g.absent = absent.msg;
    rc = run_all(tests, n, opts, &g, rt, cr->ep);
    oq_runtime_free(rt);
    return rc;
}

/* The set to run when no DIR is given; prints why and returns NULL when none is found. */
static char *default_set(void)
{
    const char *env = getenv("OQ_CONFORMANCE_DIR");
    if (env && *env) return strdup(env);
    char *dir = oq_cli_data_path("onnx-backend/attention");
    if (!dir)
        oq_cli_error_in("conformance", "no test directory given and the shipped set is not "
                        "installed beside the tool (give DIR or set OQ_CONFORMANCE_DIR)");
    return dir;
}

/* Returns 0 with *operands the first DIR, 1 after --help, or an exit status. */
static int parse_args(int argc, char **argv, oq_conformance_opts *opts, report_flags *f,
                      struct oq_cli_runtime *cr, int *operands)
{
    const oq_opt table[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_CALLBACK("rtol", "X", set_tol, &opts->rtol, "relative tolerance (default 1e-3, as ONNX's backend tests)"),
        OQ_OPT_CALLBACK("atol", "X", set_tol, &opts->atol, "absolute tolerance (default 1e-7)"),
        OQ_OPT_FLAG("strict", &f->strict, "an UNSUPPORTED test fails the run (exit 1)"),
        OQ_OPT_FLAG("allow-skip", &f->allow_skip, "a run where every test was skipped exits 0 (nothing was compared)"),
        OQ_OPT_FLAG("json", &f->json, "print one JSON document instead of lines"),
        OQ_OPT_STRING("outdir", "DIR", &f->outdir,
                      "write DIR/summary.json (the JSON document, with the command line\n"
                      "and, with ONNX Runtime, its evidence) and DIR/report.html"),
        OQ_OPT_FLAG("force", &f->force, "write into an --outdir that is not empty (an earlier run's)"),
        OQ_OPT_STRING("junit", "FILE", &f->junit,
                      "write JUnit XML: one test case per test (SKIP and UNSUPPORTED as\n"
                      "skipped, UNSUPPORTED failing with --strict)"),
        OQ_OPT_GROUP("runtime options (any of them selects ONNX Runtime instead of the reference):"),
        OQ_CLI_RUNTIME_OPTS(cr),
        OQ_OPT_END};
    const oq_cli_command c = {"conformance", head, foot, table, OQ_CLI_OPERANDS, "unknown or incomplete option '%s'"};
    int rc = oq_cli_parse(&c, argc, argv, operands);
    if (rc) return rc > 0 ? 1 : OQ_EXIT_USAGE;
    return cr->given ? oq_cli_runtime_check(cr) : OQ_EXIT_OK;
}

int cmd_conformance(int argc, char **argv)
{
    oq_conformance_opts opts;
    oq_conformance_opts_default(&opts);
    struct oq_cli_runtime cr = {0};
    report_flags f = {0, 0, 0, 0, NULL, NULL, NULL, NULL, argc, argv};
    int first = argc;
    int rc = parse_args(argc, argv, &opts, &f, &cr, &first);
    if (rc) {
        oq_cli_runtime_clear(&cr);
        return rc == 1 ? OQ_EXIT_OK : rc;
    }
    char **tests = NULL;
    size_t n = 0;
    char *dflt[1] = {NULL};
    char **dirs = argv + first;
    int n_dirs = argc - first;
    if (n_dirs == 0) {
        dirs = dflt;
        n_dirs = 1;
        if (!(dflt[0] = default_set())) {
            oq_cli_runtime_clear(&cr);
            return OQ_EXIT_USAGE;
        }
    }
    oq_outdir_lock *lock = NULL;
    rc = collect(n_dirs, dirs, &tests, &n) && each_once(tests, n) ? check_outputs(&f, tests, n, &lock) : OQ_EXIT_USAGE;
    if (!rc) rc = cr.given ? run_with_ort(&cr, tests, n, &opts, &f) : run_all(tests, n, &opts, &f, NULL, NULL);
    oq_outdir_lock_free(lock);
    oq_conformance_list_free(tests);
    oq_cli_runtime_clear(&cr);
    free(dflt[0]);
    return rc;
}
