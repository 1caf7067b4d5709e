/* Gate: run a test command so that a green result means tests really passed.
 *
 * A test command's exit status is weak evidence. pytest exits 0 when every
 * test skipped and 5 when it collected nothing; a working directory can shadow
 * the installed package (`./onnxruntime/` source tree before the wheel) or
 * inject code (`sitecustomize.py` is imported from sys.path at start-up); a
 * framework's bundled CUDA/cuDNN can be loaded instead of the ones ORT was
 * built against; and a fused attention kernel and ORT's MATH fallback give the
 * same numbers. The gate:
 *
 *   - runs the command from a fresh private directory (mkdtemp, 0700), never
 *     the caller's, with stdin from /dev/null, and keeps the merged
 *     stdout+stderr log there (created O_EXCL|O_NOFOLLOW, 0600);
 *   - prepends --pythonpath folders to PYTHONPATH, drops every PYTHONPATH
 *     entry that is the caller's directory, and pins libraries (LD_PRELOAD
 *     and their folders first in LD_LIBRARY_PATH, always together);
 *   - reads the runner's closing summary (pytest, ctest, cmocka, GoogleTest,
 *     cargo test, unittest, or a plain "N passed, N failed" line; the last one
 *     in the log) and fails on a non-zero exit, pytest's exit 5, no summary,
 *     failures or errors, zero passed, or any skip whose reason --allow-skip
 *     does not match; on an earlier summary that failed, ran no test or
 *     skipped what is not allowed; and on any runner's failure line (go test's
 *     "--- FAIL:", TAP's "not ok", cargo's "test result: FAILED.", ...);
 *   - optionally requires every SdpaKernel= routing line to name an allowed
 *     kernel (ortqual/dispatch.h), with at least one line present.
 *
 *     oq_gate *g;
 *     const char *allow[] = {"needs CUDA"};
 *     oq_gate_options o = {.argv = argv, .allow_skip = allow, .n_allow_skip = 1};
 *     if (oq_gate_create(&o, &g, &err) != OQ_OK) ...       // usage or system error
 *     printf("log: %s\n", oq_gate_log_path(g));
 *     oq_gate_result r;
 *     oq_gate_run(g, &r, &err);                            // r.j.verdict
 *     oq_gate_write_verdict(g, &r, "verdict.json", &err);
 *     oq_gate_result_clear(&r);
 *     oq_gate_free(g);                                     // removes the folder unless keep
 */
#ifndef ORTQUAL_GATE_H
#define ORTQUAL_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/dispatch.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Test-runner summaries ------------------------------------------------ */

typedef enum oq_runner {
    OQ_RUNNER_NONE = 0,
    OQ_RUNNER_PYTEST, /* "==== 3 passed, 1 skipped in 0.12s ====", "no tests ran in 0.01s" */
    OQ_RUNNER_CTEST,  /* "75% tests passed, 1 tests failed out of 4" + "did not run" list */
    OQ_RUNNER_CMOCKA, /* "[  PASSED  ] 5 test(s)." + "[  FAILED  ]"/"[  SKIPPED ]" lists */
    OQ_RUNNER_PLAIN,  /* "[word:] N passed, N failed[, N skipped]" */
    OQ_RUNNER_CARGO,  /* "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; ..." */
    OQ_RUNNER_GTEST,  /* GoogleTest: "[  PASSED  ] 5 tests." + lists as cmocka's */
    OQ_RUNNER_UNITTEST, /* Python unittest: "Ran 4 tests in 0.01s" then "OK (skipped=1)" */
    /* ortqual validate, replay and merge: "verdict: PASSED (1 passed, 0 failed, 0 skipped[,
     * E runtime errors][, N not run]; ...)", counting configurations; E and N are errors. Any
     * word but PASSED (FAILED, ERROR, NOT TESTED, INTERRUPTED) is also a failure line. */
    OQ_RUNNER_ORTQUAL
} oq_runner;

/* "pytest", "ctest", "cmocka", "plain", "cargo", "gtest", "unittest", "ortqual"; "none". Never
 * NULL. */
OQ_API const char *oq_runner_name(oq_runner r);

typedef struct oq_skip_reason {
    char *text;    /* pytest: "test_x.py:12: needs CUDA" (from -rs); cmocka: the test's
                    * name; ctest: "name (Skipped)" */
    int64_t count; /* tests skipped for it (pytest's "[N]") */
} oq_skip_reason;

typedef struct oq_test_summary {
    oq_runner runner;
    int64_t passed, failed, skipped, errors, xfailed, xpassed, deselected, warnings;
    int no_tests_ran; /* pytest said "no tests ran" */
    uint64_t line;    /* its line number in the log */
    char *text;       /* the summary line, colour codes stripped (owned) */
    oq_skip_reason *skips; /* the skip reasons printed for this run (owned) */
    size_t n_skips;
} oq_test_summary;

/* A line that a common runner prints only for a failing run, wherever it is in the log:
 * cargo's "test result: FAILED.", go test's "--- FAIL: ", "FAIL\t" and "FAIL", TAP's
 * "not ok" (but not "# TODO") and "Bail out!", unittest's "FAILED (failures=N...)",
 * GoogleTest's and cmocka's "[  FAILED  ]", ortqual's "verdict: " with another word than
 * PASSED (OQ_RUNNER_ORTQUAL); and a runner's crash or refusal, which prints no summary: cargo's
 * "error: test failed, to rerun pass ", CPython's "Fatal Python error: ", pytest's
 * "INTERNALERROR> ", an "ortqual validate|replay|merge|bench: " line that is not a note, a
 * warning or a default (a refusal; a verdict line after it does not undo it: docs/gate.md);
 * each at the start of the line, as the runners print them. */
typedef struct oq_failure_line {
    const char *runner; /* "cargo", "go", "tap", "unittest", "gtest/cmocka", "python", "pytest",
                           "ortqual" (static) */
    uint64_t line;
    char *text;         /* the line, colour codes stripped (owned) */
} oq_failure_line;

/* Reads a log line by line and keeps the LAST summary found, with the skip
 * reasons of its run: pytest's "SKIPPED [N] where: why" lines printed since the
 * previous summary, cmocka's and ctest's skip lists printed after it; the first
 * earlier summary that reported a failure; and every other earlier one that ran no
 * test or reported skips. */
typedef struct oq_summary_scanner oq_summary_scanner;

OQ_API oq_status oq_summary_scanner_create(oq_summary_scanner **out, oq_err *err);
OQ_API void oq_summary_scanner_free(oq_summary_scanner *s);
/* One line; a trailing "\n" or "\r\n" and ANSI colour codes are ignored. A NUL or a carriage
 * return in it ends a line there as a newline would (the text after it is read as a line of the
 * same number; an empty piece beside a carriage return is none). */
OQ_API oq_status oq_summary_scanner_line(oq_summary_scanner *s, const char *line, size_t n,
                                         uint64_t line_no, oq_err *err);
/* The last summary so far, or NULL (also for a NULL scanner). Owned by the scanner. */
OQ_API const oq_test_summary *oq_summary_scanner_last(const oq_summary_scanner *s);
/* The first summary before the last that reported failures or errors (a suite whose failure
 * the command ignored, `pytest a || true; pytest b`), or NULL. Owned by the scanner. */
OQ_API const oq_test_summary *oq_summary_scanner_failed_before(const oq_summary_scanner *s);
/* The other summaries before the last that ran no test (no test passed, failed, errored,
 * xfailed or xpassed: looser than the last summary's rule, none passed, which an earlier
 * failure already meets) or reported skips, in log order: their number (0 for a
 * NULL scanner) and, in *list (list may be NULL), the array, owned by the scanner. */
OQ_API size_t oq_summary_scanner_earlier(const oq_summary_scanner *s, const oq_test_summary **list);
/* The first failure line in the log (oq_failure_line), or NULL. Owned by the scanner. */
OQ_API const oq_failure_line *oq_summary_scanner_failure_line(const oq_summary_scanner *s);
/* Convenience: scan a whole text (lines numbered from 1). */
OQ_API oq_status oq_summary_scan_text(const char *text, size_t n, oq_summary_scanner **out,
                                      oq_err *err);

/* ---- Verdict ------------------------------------------------------------ */

typedef enum oq_gate_verdict {
    OQ_GATE_PASS = 0,
    OQ_GATE_FAIL = 1,
    OQ_GATE_ERROR = 3 /* the command could not be run */
} oq_gate_verdict;

/* What the command did, as the judge sees it. */
typedef struct oq_gate_outcome {
    int exit_code; /* -1 when killed by a signal */
    int signal;    /* 0 unless killed by a signal */
    const oq_test_summary *summary; /* NULL: none found */
    const oq_dispatch_log *dispatch; /* the routing lines of the log */
    double timed_out_s; /* > 0: killed by the gate's timeout after this many seconds */
    const oq_test_summary *failed_before; /* NULL, or an earlier summary with failures */
    const oq_test_summary *earlier; /* earlier summaries that ran no test or skipped some */
    size_t n_earlier;               /* (oq_summary_scanner_earlier) */
    /* NULL, or the first line in which a runner reported a failing run: it fails the
     * gate whatever the summary and exit status say (a suite run after `|| true`) */
    const oq_failure_line *failure_line;
} oq_gate_outcome;

typedef struct oq_gate_judgement {
    oq_gate_verdict verdict;
    char **reasons; /* why it failed, one line each (owned); empty on a pass */
    size_t n_reasons;
    oq_dispatch_report dispatch; /* filled when `expect` was given */
    int dispatch_checked;
} oq_gate_judgement;

/* Apply every rule to an outcome. `allow_skip` holds `n_allow_skip` POSIX extended regular
 * expressions, each compiled and searched in each skip reason on its own: a skip is allowed
 * when any one matches (none: no skip is allowed). They are never joined into one expression,
 * where a stray parenthesis in one ("gpu)|(.*") would make the whole match every reason. A
 * skip with no visible reason is never allowed (pytest prints reasons with -rs).
 * An earlier summary that failed or ran no test fails the gate, and its skips
 * are judged as the last summary's are.
 * `expect` (nullable) turns on the dispatch requirement.
 * OQ_ERR_INVALID_ARG naming the first expression that does not compile (or is NULL), or that
 * matches with zero length in any of a few probe texts ("", "a", "word reason", a skip reason):
 * the empty string ('CUDA|', '.*') or an assertion alone in an alternative ('CUDA|\<', '\b',
 * '\>'), which match in every reason and so would allow every skip ('.' does that on purpose). */
OQ_API oq_status oq_gate_judge(const oq_gate_outcome *o, const char *const *allow_skip, size_t n_allow_skip,
                               const oq_dispatch_expect *expect, oq_gate_judgement *out, oq_err *err);
OQ_API void oq_gate_judgement_clear(oq_gate_judgement *j);

/* ---- Running ------------------------------------------------------------ */

typedef struct oq_gate_options {
    char *const *argv;              /* the command, NULL-terminated; argv[0] is searched in
                                     * PATH unless it has a '/' */
    const char *const *pythonpath;  /* folders put first on PYTHONPATH */
    size_t n_pythonpath;
    const char *const *env;         /* "NAME=VALUE" set in the child */
    size_t n_env;
    const char *const *pin_libs;    /* libraries to LD_PRELOAD (folders first in LD_LIBRARY_PATH) */
    size_t n_pin_libs;
    const char *const *allow_skip;  /* POSIX EREs, any one allows a skip (oq_gate_judge) */
    size_t n_allow_skip;
    const char *const *require_dispatch; /* "KERNEL" or "NODE=KERNEL" (oq_dispatch_expect_add) */
    size_t n_require_dispatch;
    int keep;                       /* keep the private folder after oq_gate_free */
    const char *tmp_parent;         /* where to make the folder; NULL: $TMPDIR or /tmp */
    double timeout_s;               /* > 0: after this many seconds the command's process
                                     * group gets SIGTERM, OQ_GATE_KILL_GRACE_S later SIGKILL */
    /* Called with the child's output as it arrives (e.g. to show it live). */
    void (*on_output)(void *user, const void *buf, size_t n);
    /* Called once the command runs, with its process group (= its pid): a caller
     * that catches SIGINT/SIGTERM passes them on to it (kill(-pgid, sig)). */
    void (*on_start)(void *user, int pgid);
    void *user;
} oq_gate_options;

/* Seconds between the timeout's SIGTERM and SIGKILL, and after SIGKILL until the
 * gate stops reading output that an escaped process still holds open. */
#define OQ_GATE_KILL_GRACE_S 5.0

typedef struct oq_gate oq_gate;

typedef struct oq_gate_result {
    oq_gate_judgement j;
    int exit_code, signal;   /* as in oq_gate_outcome; -1/0 when it never ran */
    int timed_out;           /* the timeout killed the command's process group */
    double duration_s;
    uint64_t log_bytes;
    oq_test_summary summary; /* runner == OQ_RUNNER_NONE when none was found (owned) */
    size_t dispatch_records;
    size_t kernel_counts[OQ_SDPA_COUNT_]; /* routing lines per kernel */
} oq_gate_result;

/* Check the options (bad regex, NAME=VALUE, kernel spec, missing library or
 * folder: OQ_ERR_INVALID_ARG; command not found: OQ_ERR_NOT_FOUND), build the
 * child's environment, make the private folder and create the log in it
 * (OQ_ERR_IO). The options' strings must outlive the gate.
 * The child's PATH loses every absolute entry that is the caller's directory, so
 * a program planted there is neither the command nor found by it (relative
 * entries name the private folder in the child and are never searched for the
 * command); a notes entry says so, and another reports an LD_PRELOAD inherited
 * from the caller, which reaches the command. */
OQ_API oq_status oq_gate_create(const oq_gate_options *o, oq_gate **out, oq_err *err);
/* Remove the private folder (unless keep) and free everything. */
OQ_API void oq_gate_free(oq_gate *g);

/* For a NULL g the paths are NULL, the counts 0 and the lists NULL. */
OQ_API const char *oq_gate_dir(const oq_gate *g);
OQ_API const char *oq_gate_log_path(const oq_gate *g);
OQ_API const char *oq_gate_command_path(const oq_gate *g); /* argv[0] resolved */
/* Environment changes made for the child, "NAME=VALUE" each, and notes such as
 * a PYTHONPATH entry dropped because it was the caller's directory. */
OQ_API size_t oq_gate_env_changes(const oq_gate *g, const char *const **changes);
OQ_API size_t oq_gate_notes(const oq_gate *g, const char *const **notes);

/* Run the command once in a process group of its own (it is killed with SIGKILL
 * if the calling thread dies first), stream its output to the log (and
 * on_output), and judge it. OQ_OK when it ran, whatever the verdict; when it could not be
 * executed, OQ_OK with verdict OQ_GATE_ERROR and the reason in r->j. */
OQ_API oq_status oq_gate_run(oq_gate *g, oq_gate_result *r, oq_err *err);
/* A sharded ortqual validate prints "shard I of N done; ..." after its verdict line: that verdict is
 * one shard's, not its campaign's (the merge's), and when it is the last summary oq_gate_run fails
 * it, saying so. With `allow` set it is judged as any verdict and the gate's notes (oq_gate_notes,
 * the verdict document) say that one shard was gated. Call before oq_gate_run; a NULL g is ignored. */
OQ_API void oq_gate_allow_shard(oq_gate *g, int allow);
OQ_API void oq_gate_result_clear(oq_gate_result *r);

/* The schema of the verdict document. Before it had one (before 2026-12-06) its start was
 * "started_utc"; it is now "start", with "end", as in every ortqual document. Version 2:
 * "allow_skip" is the list of expressions, [] for none (version 1: one string, the
 * expressions joined as "(a)|(b)", or null). */
#define OQ_GATE_SCHEMA "ortqual.gate/2"

/* The verdict document as JSON text ("schema": OQ_GATE_SCHEMA; malloc'ed, the caller frees
 * it): what oq_gate_write_verdict writes and oq_junit_write (report.h) reads. NULL: out of
 * memory, or g or r NULL. */
OQ_API char *oq_gate_verdict_text(const oq_gate *g, const oq_gate_result *r);
/* The document of a command that could not even be prepared: verdict "error". */
OQ_API char *oq_gate_error_verdict_text(char *const *argv, const char *message);

/* Write the verdict as JSON (atomically, replacing `path`). */
OQ_API oq_status oq_gate_write_verdict(const oq_gate *g, const oq_gate_result *r, const char *path,
                                       oq_err *err);

/* A verdict for a command that could not even be prepared (e.g. not found):
 * {"schema", "tool", "ortqual_version", "verdict": "error", "reasons": [message], "command": argv}. */
OQ_API oq_status oq_gate_write_error_verdict(char *const *argv, const char *message, const char *path,
                                             oq_err *err);

/* Create a log file the way the gate does: O_CREAT|O_EXCL|O_NOFOLLOW, mode
 * 0600, close-on-exec. Refuses an existing file or a symbolic link (OQ_ERR_IO),
 * so a planted link cannot redirect the log onto another file. */
OQ_API oq_status oq_gate_open_log(const char *path, int *fd, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
