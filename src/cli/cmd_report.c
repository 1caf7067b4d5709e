/* ortqual report: re-render report.html (and JUnit XML) from a run's summary.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ortqual/fileio.h"
#include "ortqual/report.h"

const char cmd_report_summary[] = "re-render report.html (and JUnit XML) from a run directory's summary.json";

static const char head[] =
    "usage: ortqual report DIR... [--junit FILE]\n"
    "\n"
    "Write DIR/report.html from DIR/summary.json, for each DIR (or DIR/summary.json named\n"
    "itself): the page validate, replay, bench and conformance --outdir write after every\n"
    "run, drawn again (after copying a run back from a GPU host, merging shards, or\n"
    "upgrading ortqual). One self-contained file: verdict, configuration table with\n"
    "per-batch and per-output details, dispatch and placement per attention node,\n"
    "figures (inline SVG), advice, environment (ONNX Runtime build, providers, loaded\n"
    "CUDA/cuDNN libraries, shadowing) and the exact command line. No scripts, nothing\n"
    "loaded from anywhere.\n"
    "The banner is the run's verdict as summary.json has it: PASSED (the only green one),\n"
    "FAILED, ERROR (a runtime error: ONNX Runtime's refusal is explained with the fix)\n"
    "or NOT TESTED (nothing under test was compared), with the reason. The written\n"
    "paths are printed. A merged summary ('ortqual merge') is held to its plan,\n"
    "DIR/shards/plan.json, as the merge held its shards (refused where it does not\n"
    "hold; where the plan is not there, a warning on stderr and on the page).\n";

static const char foot[] =
    "\n"
    "exit status: 0 written; 2 usage, no or bad summary.json; 3 cannot write.\n"
    "\n"
    "examples:\n"
    "  ortqual report ortqual-out/demo\n"
    "  ortqual report gpu-run --junit gpu-run/junit.xml\n";

/* The JUnit XML of DIR's summary, made before anything is written: a document without JUnit (a
 * bench run) or a --junit path that cannot take it stops the command with no report.html
 * written. */
static int make_junit(const char *dir, const char *path, char **xml, size_t *xml_n)
{
    char in[4096];
    snprintf(in, sizeof in, "%s/summary.json", dir);
    oq_err err = {0};
    unsigned char *text = NULL;
    size_t n = 0;
    static const char *const made[] = {"summary.json", "report.html"}; /* read, written */
    int rc = oq_cli_clashes_outdir("report", "--junit", path, dir, made, 2);
    if (!rc) rc = oq_cli_output_ready("report", "--junit", path, NULL);
    if (rc) return rc;
    if (oq_read_file(in, &text, &n, &err) || oq_junit_xml((const char *)text, n, in, xml, xml_n, &err)) {
        /* a refused run's folder: the same explanation as without --junit */
        if (!oq_cli_refused_run("report", dir))
            fprintf(stderr, "ortqual report: %s\n", err.msg);
        rc = oq_cli_exit_of(err.status);
    }
    free(text);
    return rc;
}

static int write_junit(const char *path, const char *xml, size_t n)
{
    oq_err err = {0};
    if (oq_write_file_atomic(path, xml, n, 1, &err)) {
        fprintf(stderr, "ortqual report: --junit: %s\n", err.msg);
        return OQ_EXIT_RUNTIME;
    }
    printf("%s\n", oq_cli_shown(path));
    return OQ_EXIT_OK;
}

/* DIR, or DIR/summary.json named itself (what a user often types): the run directory. */
static const char *run_dir(const char *arg, char *buf, size_t n)
{
    size_t len = strlen(arg), k = strlen("summary.json");
    struct stat st;
    /* the name itself, not any name ending in it (runs/a/old-summary.json is not runs/a's) */
    int named = len >= k && !strcmp(arg + len - k, "summary.json") && (len == k || arg[len - k - 1] == '/');
    if (!named || stat(arg, &st) || !S_ISREG(st.st_mode)) return arg;
    const char *slash = strrchr(arg, '/');
    if (!slash) return ".";
    snprintf(buf, n, "%.*s", slash == arg ? 1 : (int)(slash - arg), arg);
    return buf;
}

int cmd_report(int argc, char **argv)
{
    const char *junit = NULL;
    int first = argc;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_STRING("junit", "FILE", &junit,
                      "also write JUnit XML of the (single) DIR's summary: one test case\n"
                      "per configuration x batch (validate, replay), per test\n"
                      "(conformance) or per row (bench), green only when the verdict\n"
                      "is PASSED; a gate\n"
                      "verdict JSON given as DIR/summary.json works too"),
        OQ_OPT_END};
    const oq_cli_command c = {"report", head, foot, opts, OQ_CLI_OPERANDS};
    int rc = oq_cli_parse(&c, argc, argv, &first);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (first >= argc) {
        fprintf(stderr, "ortqual report: no run directory given (see 'ortqual report --help')\n");
        return OQ_EXIT_USAGE;
    }
    if (junit && argc - first > 1) {
        fprintf(stderr, "ortqual report: --junit takes one run directory\n");
        return OQ_EXIT_USAGE;
    }
    char dir0[4096], *xml = NULL;
    size_t xml_n = 0;
    if (junit && (rc = make_junit(run_dir(argv[first], dir0, sizeof dir0), junit, &xml, &xml_n))) return rc;
    for (int i = first; i < argc; i++) {
        oq_err err = {0};
        char buf[4096];
        const char *dir = run_dir(argv[i], buf, sizeof buf);
        oq_outdir_lock *lock = NULL;
        int busy = oq_cli_dir_lock("report", dir, NULL, &lock); /* not while a run writes there */
        char path[4200], unchecked[1600] = "";
        const char *warned = unchecked;
        snprintf(path, sizeof path, "%s/summary.json", dir);
        /* a merge's, held to its plan; where it could not be, the page says so too */
        oq_status held = busy ? OQ_OK : oq_cli_merged_check("report", path, unchecked, sizeof unchecked, &err);
        oq_status st = busy || held ? OQ_OK : oq_report_write_dir_warned(dir, &warned, *unchecked != 0, &err);
        oq_outdir_lock_free(lock);
        if (busy && !rc) rc = busy;
        if (held) {
            fprintf(stderr, "ortqual report: %s\n", err.msg);
            if (!rc) rc = oq_cli_exit_of(held);
            continue;
        }
        if (busy || (st == OQ_ERR_FORMAT && junit)) continue; /* a gate verdict has JUnit but no page */
        if (st) {
            if (st != OQ_ERR_NOT_FOUND || !oq_cli_refused_run("report", dir)) fprintf(stderr, "ortqual report: %s\n", err.msg);
            if (!rc) rc = oq_cli_exit_of(st);
            continue;
        }
        printf("%s/report.html\n", oq_cli_shown(dir));
    }
    if (!rc && junit) rc = write_junit(junit, xml, xml_n);
    free(xml);
    return rc;
}
