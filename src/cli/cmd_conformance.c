/* ortqual conformance: run ONNX backend node tests against the Attention reference. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ortqual/conformance.h"

const char cmd_conformance_summary[] = "run ONNX backend node tests (Attention) on the reference";

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual conformance [options] [DIR...]\n"
            "\n"
            "Run ONNX backend node tests (model.onnx + test_data_set_*/input_N.pb, output_N.pb)\n"
            "against ortqual's float64 reference of the ONNX Attention operator (opsets 23, 24).\n"
            "Each DIR is a test directory, or a directory of test directories (one level,\n"
            "sorted). Without DIR: $OQ_CONFORMANCE_DIR, else the set shipped with ortqual (the\n"
            "ONNX v1.22.0 Attention tests: tests/data/onnx-backend/attention in the source tree,\n"
            "<prefix>/share/ortqual/onnx-backend/attention once installed).\n"
            "\n"
            "Outputs must satisfy numpy's allclose: |got - expected| <= atol + rtol*|expected|,\n"
            "where NaN matches only NaN. Tests whose model is not a single Attention node (the\n"
            "*_expanded function bodies) are skipped as not applicable.\n"
            "\n"
            "With --ep (or any runtime option), the models run through ONNX Runtime on that\n"
            "execution provider instead of the reference, the *_expanded ones included: the\n"
            "expected outputs are ONNX's, so this checks the runtime, not ortqual.\n"
            "\n"
            "Prints one line per test: PASS name, FAIL name: reason (the worst element when\n"
            "an output differs), SKIP name: reason (not applicable), or UNSUPPORTED name:\n"
            "reason (ORT answered with its NOT_IMPLEMENTED status: no kernel for that op,\n"
            "type or mode on the provider). Then 'N passed, M failed, K skipped', K counting the\n"
            "unsupported ones too, with '(U unsupported)' after it when there are any.\n"
            "A run in which no test passed (every test skipped or unsupported) is not a pass:\n"
            "exit 1 saying so, unless --allow-skip.\n"
            "Exit status 0 when nothing failed, 1 when a test failed (or, with --strict, was\n"
            "unsupported), 2 on bad usage (e.g. a DIR with no model.onnx).\n"
            "\n"
            "options:\n"
            "  --rtol X     relative tolerance (default 1e-3, as ONNX's backend tests)\n"
            "  --atol X     absolute tolerance (default 1e-7)\n"
            "  --strict     an UNSUPPORTED test fails the run (exit 1)\n"
            "  --allow-skip a run where every test was skipped exits 0 (nothing was compared)\n"
            "  --json       print one JSON document instead of lines\n"
            "  -h, --help   this help\n"
            "runtime options (any of them selects ONNX Runtime instead of the reference):\n");
    oq_cli_runtime_help(fp, 0);
    fprintf(fp,
            "\n"
            "examples:\n"
            "  ortqual conformance                      # the shipped set, on the reference\n"
            "  ortqual conformance --ep cpu             # the same tests on ORT CPU\n"
            "  ortqual conformance tests/data/onnx-backend/attention/test_attention_4d_causal\n");
}

static int parse_tol(const char *opt, const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0)) {
        fprintf(stderr, "ortqual conformance: %s wants a number >= 0, got '%s'\n", opt, s);
        return 0;
    }
    *out = v;
    return 1;
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

static json_t *result_json(const oq_conformance_result *r)
{
    json_t *o = json_pack("{s:s, s:s, s:s}", "name", r->name, "verdict", verdict_word(r->verdict),
                          "detail", r->detail);
    if (r->output >= 0) {
        json_t *coord = json_array();
        for (int32_t i = 0; i < r->ndim; i++) json_array_append_new(coord, json_integer(r->coord[i]));
        json_object_set_new(o, "output", json_integer(r->output));
        json_object_set_new(o, "output_name", json_string(r->output_name));
        json_object_set_new(o, "worst_index", coord);
        json_object_set_new(o, "got", json_real(r->got));
        json_object_set_new(o, "expected", json_real(r->expected));
        json_object_set_new(o, "abs_diff", json_real(r->abs_diff));
    }
    return o;
}

/* Expands every DIR first, so that a bad DIR is a usage error before any test runs. */
static int collect(int argc, char **argv, char ***all, size_t *n_all)
{
    size_t cap = 0;
    *all = NULL;
    *n_all = 0;
    for (int a = 0; a < argc; a++) {
        char **tests;
        size_t n;
        oq_err err = {0};
        if (oq_conformance_list(argv[a], &tests, &n, &err)) {
            fprintf(stderr, "ortqual conformance: %s\n", err.msg);
            return 0;
        }
        if (*n_all + n + 1 > cap) {
            cap = (*n_all + n + 1) * 2;
            char **nv = realloc(*all, cap * sizeof *nv);
            if (!nv) {
                oq_conformance_list_free(tests);
                fprintf(stderr, "ortqual conformance: out of memory\n");
                return 0;
            }
            *all = nv;
        }
        for (size_t i = 0; i < n; i++) (*all)[(*n_all)++] = tests[i];
        (*all)[*n_all] = NULL;
        free(tests); /* the strings moved into *all */
    }
    return 1;
}

/* Runs every test, prints the lines (or JSON) and the closing line; returns the exit status. */
/* How results are printed and judged. */
typedef struct report_flags {
    int json;   /* one JSON document instead of lines */
    int strict; /* UNSUPPORTED fails the run */
    int allow_skip; /* a run where nothing passed may exit 0 */
} report_flags;

static int run_all(char **tests, size_t n, const oq_conformance_opts *opts, report_flags f)
{
    size_t counts[4] = {0, 0, 0, 0};
    json_t *arr = f.json ? json_array() : NULL;
    int rc = OQ_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        oq_conformance_result r;
        oq_err err = {0};
        if (oq_conformance_run_test(tests[i], opts, &r, &err)) {
            fprintf(stderr, "ortqual conformance: %s\n", err.msg);
            rc = OQ_EXIT_RUNTIME;
            break;
        }
        counts[r.verdict]++;
        if (arr)
            json_array_append_new(arr, result_json(&r));
        else if (r.verdict == OQ_CONFORMANCE_PASS)
            printf("PASS %s\n", r.name);
        else
            printf("%s %s: %s\n", verdict_word(r.verdict), r.name, r.detail);
        fflush(stdout);
    }
    if (arr) {
        json_t *doc = json_pack("{s:o, s:I, s:I, s:I, s:I}", "tests", arr, "passed",
                                (json_int_t)counts[0], "failed", (json_int_t)counts[1],
                                "skipped", (json_int_t)(counts[2] + counts[3]), "unsupported",
                                (json_int_t)counts[3]);
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(doc);
    } else if (rc == OQ_EXIT_OK) {
        print_closing_line(counts);
    }
    if (rc != OQ_EXIT_OK) return rc;
    int failed = counts[OQ_CONFORMANCE_FAIL] || (f.strict && counts[OQ_CONFORMANCE_UNSUPPORTED]);
    if (!failed && !counts[OQ_CONFORMANCE_PASS] && !f.allow_skip) {
        /* nothing under test ran and was compared: never green */
        fprintf(stderr, "ortqual conformance: no test passed (%zu run, all skipped or unsupported); "
                        "--allow-skip accepts that\n", n);
        return OQ_EXIT_FAIL;
    }
    return failed ? OQ_EXIT_FAIL : OQ_EXIT_OK;
}

/* With runtime options: load ORT once and run every test through it. */
static int run_with_ort(const struct oq_cli_runtime *cr, char **tests, size_t n,
                        oq_conformance_opts *opts, report_flags f)
{
    oq_runtime *rt = NULL;
    int rc = oq_cli_runtime_open(cr, &rt);
    if (rc) return rc;
    oq_session_opts so = {.graph_opt_level = -1};
    oq_cli_runtime_session_opts(cr, &so);
    oq_conformance_ort ort = {rt, &so};
    opts->runner = oq_conformance_ort_runner;
    opts->runner_ctx = &ort;
    rc = run_all(tests, n, opts, f);
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
        fprintf(stderr, "ortqual conformance: no test directory given and the shipped set is not "
                        "installed beside the tool (give DIR or set OQ_CONFORMANCE_DIR)\n");
    return dir;
}

static int parse_args(int argc, char **argv, oq_conformance_opts *opts, report_flags *f,
                      struct oq_cli_runtime *cr, int *use_ort)
{
    static const struct option longopts[] = {
        {"rtol", required_argument, NULL, 'r'}, {"atol", required_argument, NULL, 'a'},
        {"json", no_argument, NULL, 'j'},       {"strict", no_argument, NULL, 's'},
        {"allow-skip", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        OQ_CLI_RUNTIME_LONGOPTS,                {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int r = oq_cli_runtime_opt(cr, c, optarg);
        if (r < 0) return OQ_EXIT_USAGE;
        if (r > 0) {
            *use_ort = 1;
            continue;
        }
        switch (c) {
        case 'r': if (!parse_tol("--rtol", optarg, &opts->rtol)) return OQ_EXIT_USAGE; break;
        case 'a': if (!parse_tol("--atol", optarg, &opts->atol)) return OQ_EXIT_USAGE; break;
        case 'j': f->json = 1; break;
        case 's': f->strict = 1; break;
        case 'k': f->allow_skip = 1; break;
        case 'h': usage(stdout); return -1;
        default:
            fprintf(stderr, "ortqual conformance: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            return OQ_EXIT_USAGE;
        }
    }
    return *use_ort ? oq_cli_runtime_check(cr) : OQ_EXIT_OK;
}

int cmd_conformance(int argc, char **argv)
{
    oq_conformance_opts opts;
    oq_conformance_opts_init(&opts);
    struct oq_cli_runtime cr = {0};
    report_flags f = {0, 0, 0};
    int use_ort = 0;
    int rc = parse_args(argc, argv, &opts, &f, &cr, &use_ort);
    if (rc) {
        oq_cli_runtime_free(&cr);
        return rc < 0 ? OQ_EXIT_OK : rc;
    }
    char **tests = NULL;
    size_t n = 0;
    char *dflt[1] = {NULL};
    char **dirs = argv + optind;
    int n_dirs = argc - optind;
    if (n_dirs == 0) {
        dirs = dflt;
        n_dirs = 1;
        if (!(dflt[0] = default_set())) {
            oq_cli_runtime_free(&cr);
            return OQ_EXIT_USAGE;
        }
    }
    if (!collect(n_dirs, dirs, &tests, &n))
        rc = OQ_EXIT_USAGE;
    else if (use_ort)
        rc = run_with_ort(&cr, tests, n, &opts, f);
    else
        rc = run_all(tests, n, &opts, f);
    oq_conformance_list_free(tests);
    oq_cli_runtime_free(&cr);
    free(dflt[0]);
    return rc;
}
