/* ortqual gate: run a test command so that a green result means tests passed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_signals.h"
#include "ortqual/fileio.h"
#include "ortqual/gate.h"
#include "ortqual/report.h"

const char cmd_gate_summary[] = "run a test command with no false greens (skips, exit 5, shadowing)";

static const char head[] =
"usage: ortqual gate [options] -- CMD [ARGS...]\n"
"\n"
"Run a test command and decide from its log, not its exit status alone, whether it\n"
"passed. An exit status of 0 is weak evidence: pytest exits 0 when every test was\n"
"skipped, and 5 when it collected nothing; a working directory can shadow what you\n"
"meant to test. The gate closes each of these holes:\n"
"\n"
"  * CMD runs from a fresh private folder (mkdtemp, mode 0700), never from yours,\n"
"    with stdin from /dev/null. Python puts the working directory ('' or the\n"
"    script's folder) first on sys.path, so a source tree there (./onnxruntime/)\n"
"    shadows the installed package, and a sitecustomize.py there runs as code in\n"
"    every Python process. Any PYTHONPATH entry that is your directory is dropped.\n"
"    Give test files and scripts by absolute path.\n"
"  * The merged stdout+stderr log is created inside that folder with\n"
"    O_EXCL|O_NOFOLLOW (mode 0600), so no pre-made file or symlink can catch or\n"
"    redirect it; it is also shown live. Its path is printed first.\n"
"  * The verdict comes from the runner's LAST closing summary: pytest\n"
"    (\"3 passed, 1 skipped in 0.1s\", any mix of failed/errors/xfailed/xpassed/\n"
"    deselected/warnings, \"no tests ran\"), ctest (\"75% tests passed, 1 tests\n"
"    failed out of 4\" and its \"did not run\" list), cmocka (\"[  PASSED  ] 5\n"
"    test(s).\" and its FAILED/SKIPPED lists), GoogleTest (\"[  PASSED  ] 5\n"
"    tests.\", the same lists), cargo test (\"test result: ok. 3 passed; ...\"),\n"
"    Python unittest (\"Ran 4 tests ...\" then \"OK (skipped=1)\"), ortqual's own\n"
"    \"verdict: PASSED (N passed, N failed, N skipped; ...)\" (validate, replay,\n"
"    merge, bench; any other word fails), or a plain\n"
"    \"[word:] N passed, N failed[, N skipped]\" line. It FAILS when: the exit\n"
"    status is not 0 (5 is pytest's \"no tests collected\"); CMD was killed by\n"
"    a signal; no summary is found; anything failed or errored; zero tests\n"
"    passed (whatever --allow-skip allows); any skip's reason is not matched by\n"
"    --allow-skip. pytest prints skip reasons only with -rs, unittest with -v,\n"
"    cargo for #[ignore = \"why\"]: a skip without a visible reason is never\n"
"    allowed. A summary before the last that failed, ran no test or skipped\n"
"    what --allow-skip does not allow FAILS it too: the later one does not\n"
"    undo it. So does a runner's failure line anywhere in the log, at the\n"
"    start of a line: cargo's \"test result: FAILED.\", go test's \"--- FAIL:\"\n"
"    and \"FAIL\", TAP's \"not ok\" (not # TODO) and \"Bail out!\", unittest's\n"
"    \"FAILED (failures=N)\", \"[  FAILED  ]\"; and a crash or refusal that printed\n"
"    no summary: cargo's \"error: test failed, to rerun pass\", \"Fatal Python\n"
"    error:\", pytest's \"INTERNALERROR>\", an \"ortqual merge: ...\" refusal or\n"
"    an \"ortqual: ...\" one that names no command (a mistyped command), even\n"
"    where another run's verdict follows it (docs/gate.md). A carriage return\n"
"    ends a line.\n"
"    An ortqual verdict that \"shard I of N done; ...\" follows is one shard's,\n"
"    not its campaign's: it FAILS (gate the merge) unless --allow-shard.\n";

static const char foot[] =
"\n"
"CMD runs in a process group of its own and is killed if the gate dies. Ctrl-C\n"
"(SIGINT), SIGTERM and SIGHUP are passed on to that group; the gate then writes\n"
"its verdict and exits 128 + the signal (130 for Ctrl-C); a second signal ends the\n"
"gate at once (the group killed; the files keep \"the run did not finish\",\n"
"written before CMD started, as after SIGKILL). A signal ignored when\n"
"the gate started (nohup; a script's `&` ignores SIGINT) stays ignored, by CMD\n"
"too. An LD_PRELOAD you have is reported (it reaches CMD), and a PATH entry that\n"
"is your directory is dropped.\n"
"\n"
"A --verdict or --junit FILE is locked while the gate runs: a second gate given\n"
"it is refused (exit 2). Output that cannot be shown live (a full disk) makes a\n"
"pass an error, in the files as in the exit status.\n"
"\n"
"exit status: 0 pass, 1 fail, 2 usage error, 3 CMD could not be run (or its live\n"
"output not written), 128+N interrupted by signal N.\n"
"\n"
"example:\n"
"  ortqual gate --pythonpath $PWD/onnxruntime/test/python/transformers \\\n"
"      --pin-lib /usr/local/cuda/lib64/libcudart.so.13 --allow-skip 'needs bf16' \\\n"
"      --require-dispatch cudnn --verdict gate.json -- \\\n"
"      python3 -m pytest -rs -s $PWD/onnxruntime/test/python/transformers/test_x.py\n";

/* The first failed write of CMD's live output (0: none): the tool exits 3 for it at its end, and
 * the verdict files must say so too, not "pass". */
static int stdout_errno;

static void stream(void *user, const void *buf, size_t n)
{
    (void)user;
    errno = 0;
    if ((fwrite(buf, 1, n, stdout) != n || fflush(stdout) != 0) && !stdout_errno) stdout_errno = errno ? errno : EIO;
}

/* Live output that was not delivered (a full disk): a reason, and a pass becomes an error, as
 * the exit status (3) will be. A reader that went away (EPIPE) is no failure, as at the tool's end. */
static void judge_stdout(oq_gate_result *r)
{
    if (!stdout_errno || stdout_errno == EPIPE) return;
    char **v = realloc(r->j.reasons, (r->j.n_reasons + 1) * sizeof *v), *why = NULL;
    if (v) r->j.reasons = v;
    if (v && asprintf(&why, "standard output: write failed: %s (the command's live output was lost; the log "
                            "holds it)", strerror(stdout_errno)) < 0)
        why = NULL;
    if (why) r->j.reasons[r->j.n_reasons++] = why;
    if (r->j.verdict == OQ_GATE_PASS) r->j.verdict = OQ_GATE_ERROR;
}

static void print_setup(const oq_gate *g)
{
    const char *const *v;
    size_t n = oq_gate_notes(g, &v);
    for (size_t i = 0; i < n; i++) fprintf(stderr, "ortqual gate: note: %s\n", oq_cli_shown(v[i]));
    n = oq_gate_env_changes(g, &v);
    for (size_t i = 0; i < n; i++) fprintf(stderr, "ortqual gate: set %s\n", oq_cli_shown(v[i]));
    fprintf(stderr, "ortqual gate: running %s in %s\n", oq_cli_shown(oq_gate_command_path(g)), oq_cli_shown(oq_gate_dir(g)));
    fprintf(stderr, "ortqual gate: log %s\n", oq_cli_shown(oq_gate_log_path(g)));
}

static void print_result(const oq_gate_result *r)
{
    const oq_test_summary *s = &r->summary;
    if (s->runner != OQ_RUNNER_NONE)
        fprintf(stderr,
                "ortqual gate: %s summary (line %llu): %lld passed, %lld failed, %lld skipped, "
                "%lld errors\n",
                oq_runner_name(s->runner), (unsigned long long)s->line, (long long)s->passed,
                (long long)s->failed, (long long)s->skipped, (long long)s->errors);
    if (r->j.dispatch_checked)
        fprintf(stderr, "ortqual gate: dispatch: %zu routing lines checked\n", r->dispatch_records);
    const char *word = r->j.verdict == OQ_GATE_PASS ? "PASS" : r->j.verdict == OQ_GATE_FAIL ? "FAIL" : "ERROR";
    if (r->timed_out) /* the exit status of a process the timeout killed says nothing */
        fprintf(stderr, "ortqual gate: %s (timed out, killed, %.2f s)\n", word, r->duration_s);
    else
        fprintf(stderr, "ortqual gate: %s (exit status %d%s, %.2f s)\n", word, r->exit_code,
                r->signal ? ", killed by a signal" : "", r->duration_s);
    for (size_t i = 0; i < r->j.n_reasons; i++) fprintf(stderr, "  - %s\n", oq_cli_shown(r->j.reasons[i]));
}

/* Where the verdict goes: JSON and JUnit XML files, either may be NULL. */
typedef struct outputs {
    const char *verdict, *junit;
} outputs;

/* The verdict document (JSON text, freed here; NULL: out of memory) as JUnit XML. */
static int write_junit(char *doc, const char *path)
{
    oq_err err = {0};
    oq_status st = doc ? oq_junit_write(doc, strlen(doc), "gate verdict", path, &err)
                       : oq_err_set(&err, OQ_ERR_NOMEM, "out of memory");
    free(doc);
    if (st) {
        fprintf(stderr, "ortqual gate: --junit: %s\n", err.msg);
        return OQ_EXIT_RUNTIME;
    }
    fprintf(stderr, "ortqual gate: JUnit XML %s\n", oq_cli_shown(path));
    return OQ_EXIT_OK;
}

/* A command that could not be prepared or run still gets its verdict, "error", where one was asked. */
static void write_error_outputs(const oq_gate_options *o, const char *message, const outputs *out)
{
    oq_err err = {0};
    if (out->verdict && oq_gate_write_error_verdict(o->argv, message, out->verdict, &err) != OQ_OK)
        fprintf(stderr, "ortqual gate: %s\n", err.msg);
    if (out->junit) write_junit(oq_gate_error_verdict_text(o->argv, message), out->junit);
}

/* Before anything runs, both files say "error: the run did not finish" (each written atomically):
 * only a gate that ends writes its verdict over it, so one killed (SIGKILL: a CI job's time
 * limit, the OOM killer; no handler sees it) leaves that, never an earlier gate's pass. A file
 * that cannot take it is an error before CMD starts, and neither file is left. */
static int mark_unfinished(const oq_gate_options *o, const outputs *out)
{
    char why[512];
    oq_cli_unfinished_text("gate", why, sizeof why);
    oq_err err = {0};
    const char *opt = "--verdict";
    oq_status st = out->verdict ? oq_gate_write_error_verdict(o->argv, why, out->verdict, &err) : OQ_OK;
    char *doc = !st && out->junit ? oq_gate_error_verdict_text(o->argv, why) : NULL;
    if (!st && out->junit) {
        opt = "--junit";
        st = doc ? oq_junit_write(doc, strlen(doc), "gate verdict", out->junit, &err)
                 : oq_err_set(&err, OQ_ERR_NOMEM, "out of memory");
    }
    free(doc);
    if (!st) return OQ_EXIT_OK;
    if (out->verdict) unlink(out->verdict);
    if (out->junit) unlink(out->junit);
    fprintf(stderr, "ortqual gate: %s: %s\n", opt, err.msg);
    return OQ_EXIT_RUNTIME;
}

static int write_outputs(const oq_gate *g, const oq_gate_result *r, const outputs *out)
{
    oq_err err = {0};
    int rc = OQ_EXIT_OK;
    if (out->verdict && oq_gate_write_verdict(g, r, out->verdict, &err) != OQ_OK) {
        fprintf(stderr, "ortqual gate: %s\n", err.msg);
        rc = OQ_EXIT_RUNTIME;
    } else if (out->verdict) {
        fprintf(stderr, "ortqual gate: verdict %s\n", oq_cli_shown(out->verdict));
    }
    if (out->junit && write_junit(oq_gate_verdict_text(g, r), out->junit)) rc = OQ_EXIT_RUNTIME;
    return rc;
}

/* --verdict and --junit before CMD runs (it may take hours): an empty or invalid path, or one
 * file named twice, is exit 2, an unwritable folder exit 3. */
static int check_outputs(const outputs *out)
{
    const char *path[2] = {out->verdict, out->junit}, *name[2] = {"--verdict", "--junit"};
    int rc = OQ_EXIT_OK;
    for (int i = 0; !rc && i < 2; i++) rc = oq_cli_output_ready("gate", name[i], path[i], NULL);
    if (!rc && out->verdict && out->junit && oq_cli_same_file(out->verdict, out->junit)) {
        fprintf(stderr, "ortqual gate: --junit and --verdict name the same file %s: give two\n", oq_cli_shown(out->junit));
        rc = OQ_EXIT_USAGE; /* the second written would replace the first */
    }
    return rc;
}

/* The verdict of a run that ended, said, written and turned into the exit status. */
static int judged(const oq_gate *g, oq_gate_result *r, const outputs *out, int keep)
{
    int caught = oq_cli_signal_caught();
    judge_stdout(r);
    /* an interrupted run is never a pass, whatever the command made of the signal (a handler
     * that prints a passing summary and exits 0): the verdict files say so, as the exit status */
    if (caught && r->j.verdict == OQ_GATE_PASS) {
        char **v = realloc(r->j.reasons, (r->j.n_reasons + 1) * sizeof *v), *why = NULL;
        if (v) r->j.reasons = v;
        if (!v || asprintf(&why, "interrupted by signal %d (%s): the run did not end on its own", caught,
                           strsignal(caught)) < 0)
            why = NULL;
        if (why) r->j.reasons[r->j.n_reasons++] = why;
        r->j.verdict = why ? OQ_GATE_FAIL : OQ_GATE_ERROR;
    }
    print_result(r);
    int rc = r->j.verdict == OQ_GATE_PASS ? OQ_EXIT_OK
             : r->j.verdict == OQ_GATE_FAIL ? OQ_EXIT_FAIL : OQ_EXIT_RUNTIME;
    if (write_outputs(g, r, out)) rc = OQ_EXIT_RUNTIME;
    if (keep) fprintf(stderr, "ortqual gate: kept %s (log %s)\n", oq_cli_shown(oq_gate_dir(g)), oq_cli_shown(oq_gate_log_path(g)));
    else fprintf(stderr, "ortqual gate: removed %s\n", oq_cli_shown(oq_gate_dir(g)));
    if (caught) {
        fprintf(stderr, "ortqual gate: interrupted by signal %d (%s), passed on to the command\n",
                caught, strsignal(caught));
        rc = 128 + caught;
    }
    oq_gate_result_clear(r);
    return rc;
}

/* The notes the run added (a shard's verdict gated with --allow-shard), from the `seen`th on. */
static void print_run_notes(const oq_gate *g, size_t seen)
{
    const char *const *v;
    size_t n = oq_gate_notes(g, &v);
    for (size_t i = seen; i < n; i++) fprintf(stderr, "ortqual gate: note: %s\n", oq_cli_shown(v[i]));
}

static int run_gate(const oq_gate_options *o, const outputs *out, int keep, int allow_shard)
{
    oq_err err = {0};
    oq_gate *g;
    int rc = mark_unfinished(o, out);
    if (rc) return rc;
    oq_status st = oq_gate_create(o, &g, &err);
    if (st != OQ_OK) {
        fprintf(stderr, "ortqual gate: %s\n", err.msg);
        write_error_outputs(o, err.msg, out); /* in place of "did not finish" */
        return st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    print_setup(g);
    oq_gate_allow_shard(g, allow_shard);
    size_t seen = oq_gate_notes(g, NULL);
    oq_gate_result r;
    oq_cli_signals sigs;
    oq_cli_signals_catch(&sigs);
    st = oq_gate_run(g, &r, &err);
    oq_cli_signals_started(NULL, 0); /* the group is gone: its number may be reused */
    if (st != OQ_OK) fprintf(stderr, "ortqual gate: %s\n", err.msg);
    if (st != OQ_OK) write_error_outputs(o, err.msg, out);
    else print_run_notes(g, seen);
    rc = st != OQ_OK ? OQ_EXIT_RUNTIME : judged(g, &r, out, keep);
    oq_cli_signals_release(&sigs);
    oq_gate_free(g);
    return rc;
}

static int set_timeout(const oq_opt *o, const char *arg)
{
    double v = 0;
    const char *end = oq_text_real(arg, &v);
    if (!end || *end || !(v > 0 && v <= 1e7)) {
        fprintf(stderr, "ortqual gate: --timeout '%s': expected seconds, more than 0 and at most 1e7\n", arg);
        return -1;
    }
    *(double *)o->ctx = v;
    return 0;
}

int cmd_gate(int argc, char **argv)
{
    oq_cli_list py = {0}, env = {0}, pin = {0}, allow = {0}, disp = {0};
    outputs out = {NULL, NULL};
    double timeout = 0;
    int keep = 0, quiet = 0, allow_shard = 0;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_LIST("pythonpath", "DIR", &py, "put DIR first on PYTHONPATH (repeatable; made absolute)"),
        OQ_OPT_LIST("env", "NAME=VALUE", &env, "set a variable for CMD (repeatable)"),
        OQ_OPT_LIST("pin-lib", "PATH", &pin,
                    "LD_PRELOAD the library and put its folder first in\n"
                    "LD_LIBRARY_PATH, always both (repeatable). Preloading alone\n"
                    "lets a dependency resolve against a framework's bundled copy\n"
                    "(torch's cuDNN); the path alone loses to what loads first.\n"
                    "'ortqual doctor' prints the set to pin."),
        OQ_OPT_LIST("allow-skip", "REGEX", &allow,
                    "allow skips whose reason matches this POSIX extended\n"
                    "regular expression (searched, not anchored). pytest's reason\n"
                    "is the text after \"SKIPPED [N] \" (e.g. \"test_x.py:12: needs\n"
                    "CUDA\"); cmocka's and GoogleTest's the test name (GoogleTest's\n"
                    "disabled tests: \"YOU HAVE N DISABLED TESTS\"); ctest's\n"
                    "\"name (Skipped)\" or \"name (Disabled)\"; cargo's and\n"
                    "unittest -v's \"name: why\".\n"
                    "Repeated: each is compiled and matched on its own, any\n"
                    "of them allows a skip. One that matches the empty string\n"
                    "('CUDA|') or with zero width ('CUDA|\\<', '\\b') is refused:\n"
                    "it would allow every skip; '.' does that on purpose.\n"
                    "Default: no skip is allowed."),
        OQ_OPT_LIST("require-dispatch", "KERNEL|NODE=KERNEL", &disp,
                    "every SdpaKernel= routing line ORT prints must name an\n"
                    "allowed kernel (all lines, not the first), and at least one\n"
                    "must exist; NODE=KERNEL rules one node and requires its line.\n"
                    "KERNEL: FLASH_ATTENTION, EFFICIENT_ATTENTION,\n"
                    "CUDNN_FLASH_ATTENTION, MATH, ... or flash, efficient, cudnn,\n"
                    "math. Sets ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO=1 for CMD\n"
                    "unless --env sets it. pytest captures fd 1: run it with -s\n"
                    "so the lines reach the log. (repeatable)"),
        OQ_OPT_CALLBACK("timeout", "S", set_timeout, &timeout,
                        "after S seconds (decimals allowed) end CMD: SIGTERM to its\n"
                        "process group (CMD and all it started), SIGKILL 5 s later;\n"
                        "the verdict is FAIL \"timed out after S s\". Default: none."),
        OQ_OPT_STRING("verdict", "FILE", &out.verdict,
                      "write the verdict as JSON (atomically) to FILE; from the\n"
                      "start until the gate ends it says error: the run did not finish\n"
                      "(--junit's too): a gate killed leaves that, never a pass"),
        OQ_OPT_STRING("junit", "FILE", &out.junit,
                      "write the verdict as JUnit XML for CI test reports: one test\n"
                      "case for CMD (failing with the reasons) and one skipped case\n"
                      "per skip reason"),
        OQ_OPT_FLAG("keep", &keep,
                    "keep the private folder (and the log) afterwards;\n"
                    "default: removed once the verdict is written"),
        OQ_OPT_FLAG("allow-shard", &allow_shard,
                    "pass one shard's own verdict (\"shard I of N done\" after an\n"
                    "ortqual verdict line), with a note that only that shard was\n"
                    "gated. Default: it FAILS: the campaign's verdict is its merge's\n"
                    "(gate ortqual merge DIR)"),
        OQ_OPT_QUIET(&quiet, "do not show CMD's output live (it is still logged)"),
        OQ_OPT_END};
    const oq_cli_command c = {"gate", head, foot, opts, OQ_CLI_OPERANDS_LAST, "option '%s' is unknown or needs a value"};
    int first = argc;
    int rc = oq_cli_parse(&c, argc, argv, &first);
    rc = rc > 0 ? OQ_EXIT_OK : rc < 0 ? OQ_EXIT_USAGE : -1;
    if (rc < 0 && first >= argc) {
        fprintf(stderr, "ortqual gate: no command given (usage: ortqual gate [options] -- CMD [ARGS...])\n");
        rc = OQ_EXIT_USAGE;
    }
    if (rc < 0 && (rc = check_outputs(&out)) == OQ_EXIT_OK) rc = -1;
    oq_outdir_lock *locks[2] = {NULL, NULL};
    if (rc < 0 && out.verdict && (rc = oq_cli_file_lock("gate", "--verdict", out.verdict, &locks[0])) == OQ_EXIT_OK) rc = -1;
    if (rc < 0 && out.junit && (rc = oq_cli_file_lock("gate", "--junit", out.junit, &locks[1])) == OQ_EXIT_OK) rc = -1;
    if (rc < 0) {
        oq_gate_options o = {
            .argv = argv + first, .pythonpath = py.v, .n_pythonpath = py.n, .env = env.v,
            .n_env = env.n, .pin_libs = pin.v, .n_pin_libs = pin.n, .allow_skip = allow.v, .n_allow_skip = allow.n,
            .require_dispatch = disp.v, .n_require_dispatch = disp.n, .keep = keep,
            .on_output = quiet ? NULL : stream, .on_start = oq_cli_signals_started, .timeout_s = timeout,
        };
        rc = run_gate(&o, &out, keep, allow_shard);
    }
    oq_outdir_lock_free(locks[1]);
    oq_outdir_lock_free(locks[0]);
    oq_cli_list_clear(&py);
    oq_cli_list_clear(&env);
    oq_cli_list_clear(&pin);
    oq_cli_list_clear(&allow);
    oq_cli_list_clear(&disp);
    return rc;
}
