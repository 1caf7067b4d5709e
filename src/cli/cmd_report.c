/* ortqual report: re-render report.html (and JUnit XML) from a run's summary.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ortqual/report.h"

const char cmd_report_summary[] = "re-render report.html (and JUnit XML) from a run directory's summary.json";

static const char head[] =
    "usage: ortqual report DIR... [--junit FILE]\n"
    "\n"
    "Write DIR/report.html from DIR/summary.json, for each DIR: the page validate,\n"
    "replay, bench and conformance --outdir write after every run, drawn again (after\n"
    "copying a run back from a GPU host, merging shards, or upgrading ortqual). One\n"
    "self-contained file: verdict, configuration table with per-batch and per-output\n"
    "details, dispatch and placement per attention node, figures (inline SVG),\n"
    "advice, environment (ONNX Runtime build, providers, loaded CUDA/cuDNN libraries,\n"
    "shadowing) and the exact command line. No scripts, nothing loaded from anywhere.\n"
    "The banner is the run's verdict as summary.json has it: PASSED (the only green one),\n"
    "FAILED, ERROR (a runtime error: ONNX Runtime's refusal is explained with the fix)\n"
    "or NOT TESTED (nothing under test was compared), with the reason. The written\n"
    "paths are printed.\n";

static const char foot[] =
    "\n"
    "exit status: 0 written; 2 usage, no or bad summary.json; 3 cannot write.\n"
    "\n"
    "examples:\n"
    "  ortqual report ortqual-out/demo\n"
    "  ortqual report gpu-run --junit gpu-run/junit.xml\n";

static int exit_for(oq_status st)
{
    return st == OQ_ERR_IO || st == OQ_ERR_OUTPUT || st == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
}

static int write_junit(const char *dir, const char *path)
{
    char in[4096];
    snprintf(in, sizeof in, "%s/summary.json", dir);
    oq_err err = {0};
    oq_status st = oq_junit_write_summary(in, path, &err);
    if (st) {
        fprintf(stderr, "ortqual report: %s\n", err.msg);
        return st == OQ_ERR_FORMAT || st == OQ_ERR_NOT_FOUND ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    printf("%s\n", path);
    return OQ_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
    const char *junit = NULL;
    int first = argc;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_STRING("junit", "FILE", &junit,
                      "also write JUnit XML of the (single) DIR's summary: one test case\n"
                      "per configuration x batch (validate, replay) or per test\n"
                      "(conformance), green only when the verdict is PASSED; a gate\n"
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
    for (int i = first; i < argc; i++) {
        oq_err err = {0};
        oq_status st = oq_report_write_dir(argv[i], &err);
        if (st == OQ_ERR_FORMAT && junit) continue; /* a gate verdict has JUnit but no page */
        if (st) {
            fprintf(stderr, "ortqual report: %s\n", err.msg);
            if (!rc) rc = exit_for(st);
            continue;
        }
        printf("%s/report.html\n", argv[i]);
    }
    if (!rc && junit) rc = write_junit(argv[first], junit);
    return rc;
}
