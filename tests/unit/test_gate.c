/* Unit tests of the gate: summary parsers (every variant), the rules, the log file. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ortqual/gate.h"

/* Scan `text`; the caller frees the scanner. */
static oq_summary_scanner *scan(const char *text)
{
    oq_summary_scanner *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_summary_scan_text(text, strlen(text), &s, &err), OQ_OK);
    return s;
}

typedef struct expect_counts {
    oq_runner runner;
    int64_t passed, failed, skipped, errors, xfailed, xpassed, deselected, warnings;
} expect_counts;

static expect_counts none_of(void) { return (expect_counts){OQ_RUNNER_NONE, 0, 0, 0, 0, 0, 0, 0, 0}; }

static void assert_counts(const char *text, expect_counts e)
{
    oq_summary_scanner *s = scan(text);
    const oq_test_summary *t = oq_summary_scanner_last(s);
    if (e.runner == OQ_RUNNER_NONE) {
        assert_null(t);
    } else {
        assert_non_null(t);
        assert_int_equal(t->runner, e.runner);
        assert_int_equal(t->passed, e.passed);
        assert_int_equal(t->failed, e.failed);
        assert_int_equal(t->skipped, e.skipped);
        assert_int_equal(t->errors, e.errors);
        assert_int_equal(t->xfailed, e.xfailed);
        assert_int_equal(t->xpassed, e.xpassed);
        assert_int_equal(t->deselected, e.deselected);
        assert_int_equal(t->warnings, e.warnings);
    }
    oq_summary_scanner_free(s);
}

#define PYTEST(...) ((expect_counts){OQ_RUNNER_PYTEST, __VA_ARGS__})

static void pytest_variants(void **state)
{
    (void)state;
    assert_counts("===== 3 passed, 1 skipped, 2 xfailed, 1 xpassed, 1 error, 2 deselected, 1 warning "
                  "in 0.12s =====\n",
                  PYTEST(3, 0, 1, 1, 2, 1, 2, 1));
    assert_counts("= 1 failed, 2 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, 1 warning, "
                  "1 error in 0.05s =\n",
                  PYTEST(2, 1, 1, 1, 1, 1, 1, 1));
    assert_counts("==== 2 errors in 0.30s ====\n", PYTEST(0, 0, 0, 2, 0, 0, 0, 0));
    assert_counts("1 failed in 0.01s\n", PYTEST(0, 1, 0, 0, 0, 0, 0, 0));
    assert_counts("1 passed, 6 deselected, 1 xpassed in 0.01s\n", PYTEST(1, 0, 0, 0, 0, 1, 6, 0));
    assert_counts("====== 4 passed, 3 warnings in 12.50s (0:00:12) ======\r\n", PYTEST(4, 0, 0, 0, 0, 0, 0, 3));
    assert_counts("==== 5 passed in 0.12 seconds ====\n", PYTEST(5, 0, 0, 0, 0, 0, 0, 0));
    assert_counts("============================ 8 deselected in 0.01s =============\n",
                  PYTEST(0, 0, 0, 0, 0, 0, 8, 0));
    /* colour codes as pytest --color=yes prints them */
    assert_counts("\x1b[33m==== \x1b[33m\x1b[1m1 skipped\x1b[0m, \x1b[33m\x1b[1m7 deselected\x1b[0m"
                  "\x1b[33m in 0.01s\x1b[0m\x1b[33m ====\x1b[0m\n",
                  PYTEST(0, 0, 1, 0, 0, 0, 7, 0));

    oq_summary_scanner *s = scan("collected 0 items\n\n==== no tests ran in 0.00s ====\n");
    const oq_test_summary *t = oq_summary_scanner_last(s);
    assert_non_null(t);
    assert_int_equal(t->runner, OQ_RUNNER_PYTEST);
    assert_true(t->no_tests_ran);
    assert_int_equal(t->line, 3);
    assert_string_equal(t->text, "==== no tests ran in 0.00s ====");
    oq_summary_scanner_free(s);
}

static void not_summaries(void **state)
{
    (void)state;
    const expect_counts none = {OQ_RUNNER_NONE, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_counts("", none);
    assert_counts("collected 3 items\ntest_x.py::test_a PASSED [ 33%]\n", none);
    assert_counts("==== 3 passed, 2 subtests passed in 0.1s ====\n", none); /* unknown item */
    assert_counts("==== 3 passed ====\n", none);                         /* no duration */
    assert_counts("Results in 5s\n", none);
    assert_counts("3 passed, 1 failed, 2 broken\n", none);
    assert_counts("two words: 3 passed, 0 failed\n", none);
    assert_counts("95% tests passed, 1 tests failed out of 20 (more)\n", none);
    assert_counts("[  PASSED  ] many test(s).\n", none);
    /* ctest's passed = total - failed: counts that cannot be are not a summary */
    assert_counts("75% tests passed, -9223372036854775808 tests failed out of 5\n", none);
    assert_counts("75% tests passed, 6 tests failed out of 5\n", none);
    /* pytest prints each item once and no count beyond int64 (the campaign's finding: a
     * repeated item was added to itself, past INT64_MAX) */
    assert_counts("== 3 skipped, 1 passed, 9223372036854775807 skipped in 5.01s ==\n", none);
    assert_counts("== 1 passed, 1 error, 2 errors in 0.1s ==\n", none);
    assert_counts("== 9223372036854775808 passed in 0.1s ==\n", none);
    assert_counts("SKIPPED [99999999999999999999] t.py:1: x\n== 1 passed, 1 skipped in 0.1s ==\n",
                  (expect_counts){OQ_RUNNER_PYTEST, 1, 0, 1, 0, 0, 0, 0, 0});
    /* no runner counts below zero */
    assert_counts("[  PASSED  ] -1 test(s).\n", none);
    assert_counts("3 passed, -1 failed\n", none);
    assert_counts("3 passed, 0 failed, -2 skipped\n", none);
}

static void ctest_variants(void **state)
{
    (void)state;
    assert_counts("100% tests passed, 0 tests failed out of 12\n\nTotal Test time (real) =   0.35 sec\n",
                  (expect_counts){OQ_RUNNER_CTEST, 12, 0, 0, 0, 0, 0, 0, 0});
    oq_summary_scanner *s = scan("75% tests passed, 1 tests failed out of 4\n\n"
                                 "Total Test time (real) =   0.03 sec\n\n"
                                 "The following tests did not run:\n"
                                 "\t  3 - sk (Skipped)\n\n"
                                 "The following tests FAILED:\n"
                                 "\t  4 - bad (Failed)\n"
                                 "Errors while running CTest\n");
    const oq_test_summary *t = oq_summary_scanner_last(s);
    assert_int_equal(t->runner, OQ_RUNNER_CTEST);
    assert_int_equal(t->passed, 2); /* ctest counted the skipped test as passed */
    assert_int_equal(t->failed, 1);
    assert_int_equal(t->skipped, 1);
    assert_int_equal(t->n_skips, 1);
    assert_string_equal(t->skips[0].text, "sk (Skipped)");
    oq_summary_scanner_free(s);
    /* QA ci #2: as ctest 3.25 prints it; "out of 2" counts the skipped test (as passed) but
     * never the disabled one, which came off the passed too: "zero tests passed" */
    s = scan("3/3 Test #3: d ................................***Not Run (Disabled)   0.00 sec\n\n"
             "100% tests passed, 0 tests failed out of 2\n\n"
             "Total Test time (real) =   0.42 sec\n\n"
             "The following tests did not run:\n"
             "\t  2 - gpu_c (Skipped)\n"
             "\t  3 - d (Disabled)\n");
    t = oq_summary_scanner_last(s);
    assert_int_equal(t->passed, 1);
    assert_int_equal(t->skipped, 2);
    assert_int_equal(t->n_skips, 2);
    assert_string_equal(t->skips[1].text, "d (Disabled)");
    oq_summary_scanner_free(s);
    assert_counts("100% tests passed, 0 tests failed out of 2\n\nThe following tests did not run:\n"
                  "\t  3 - d (Disabled)\n",
                  (expect_counts){OQ_RUNNER_CTEST, 2, 0, 1, 0, 0, 0, 0, 0});
}

static void cmocka_variants(void **state)
{
    (void)state;
    assert_counts("[==========] 5 test(s) run.\n[  PASSED  ] 5 test(s).\n",
                  (expect_counts){OQ_RUNNER_CMOCKA, 5, 0, 0, 0, 0, 0, 0, 0});
    /* as cmocka 1.1 prints it; the run-time "[  SKIPPED ] b" before the summary is not a reason */
    oq_summary_scanner *s = scan("[ RUN      ] b\n[  SKIPPED ] b\n[==========] 3 test(s) run.\n"
                                 "[  PASSED  ] 1 test(s).\n"
                                 "[  SKIPPED ] 1 test(s), listed below:\n[  SKIPPED ] b\n\n"
                                 " 1 SKIPPED TEST(S)\n"
                                 "[  FAILED  ] group: 1 test(s), listed below:\n[  FAILED  ] c\n\n"
                                 " 1 FAILED TEST(S)\n");
    const oq_test_summary *t = oq_summary_scanner_last(s);
    assert_int_equal(t->runner, OQ_RUNNER_CMOCKA);
    assert_int_equal(t->passed, 1);
    assert_int_equal(t->failed, 1);
    assert_int_equal(t->skipped, 1);
    assert_int_equal(t->n_skips, 1);
    assert_string_equal(t->skips[0].text, "b");
    assert_int_equal(t->line, 4);
    oq_summary_scanner_free(s);
}

static void plain_variants(void **state)
{
    (void)state;
    assert_counts("5 passed, 0 failed\n", (expect_counts){OQ_RUNNER_PLAIN, 5, 0, 0, 0, 0, 0, 0, 0});
    assert_counts("tests: 3 passed, 2 failed, 1 skipped\n",
                  (expect_counts){OQ_RUNNER_PLAIN, 3, 2, 1, 0, 0, 0, 0, 0});
    assert_counts("  Summary: 0 passed, 0 failed\r\n", (expect_counts){OQ_RUNNER_PLAIN, 0, 0, 0, 0, 0, 0, 0, 0});
    /* ortqual conformance counts its unsupported tests among the skips and names them apart */
    assert_counts("3 passed, 0 failed, 2 skipped (1 unsupported)\n",
                  (expect_counts){OQ_RUNNER_PLAIN, 3, 0, 2, 0, 0, 0, 0, 0});
    assert_counts("3 passed, 0 failed, 2 skipped (3 unsupported)\n", none_of());
}

/* The summaries of cargo test, GoogleTest and Python's unittest, so each can be gated alone. */
static void other_runners(void **state)
{
    (void)state;
    assert_counts("test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out; "
                  "finished in 0.00s\n",
                  (expect_counts){OQ_RUNNER_CARGO, 3, 0, 1, 0, 0, 0, 2, 0});
    assert_counts("test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n",
                  (expect_counts){OQ_RUNNER_CARGO, 1, 1, 0, 0, 0, 0, 0, 0});
    /* a binary that ran nothing (doc-tests of a crate without any) does not hide the others */
    assert_counts("test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
                  "   Doc-tests crt\n\nrunning 0 tests\n\n"
                  "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
                  (expect_counts){OQ_RUNNER_CARGO, 3, 0, 0, 0, 0, 0, 0, 0});
    oq_summary_scanner *s = scan("test tests::gpu ... ignored, needs gpu\ntest tests::a ... ok\n\n"
                                 "test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; "
                                 "finished in 0.00s\n");
    const oq_test_summary *t = oq_summary_scanner_last(s);
    assert_int_equal(t->n_skips, 1);
    assert_string_equal(t->skips[0].text, "tests::gpu: needs gpu");
    oq_summary_scanner_free(s);

    assert_counts("[==========] 1 test from 1 test suite ran. (0 ms total)\n[  PASSED  ] 1 test.\n",
                  (expect_counts){OQ_RUNNER_GTEST, 1, 0, 0, 0, 0, 0, 0, 0});
    /* QA hostile2 #3: GoogleTest's DISABLED_ tests are skips (ctest's "(Disabled)" are) */
    s = scan("[  PASSED  ] 1 test.\n\n  YOU HAVE 3 DISABLED TESTS\n\n");
    t = oq_summary_scanner_last(s);
    assert_int_equal(t->skipped, 3);
    assert_int_equal(t->n_skips, 1);
    assert_string_equal(t->skips[0].text, "YOU HAVE 3 DISABLED TESTS");
    assert_int_equal(t->skips[0].count, 3);
    oq_summary_scanner_free(s);
    assert_counts("[  PASSED  ] 1 test.\n  YOU HAVE 1 DISABLED TEST\n",
                  (expect_counts){OQ_RUNNER_GTEST, 1, 0, 1, 0, 0, 0, 0, 0});
    assert_counts("[  PASSED  ] 1 test.\n  YOU HAVE 0 DISABLED TESTS\n",
                  (expect_counts){OQ_RUNNER_GTEST, 1, 0, 0, 0, 0, 0, 0, 0});
    s = scan("[  PASSED  ] 2 tests.\n[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] S.A\n"
             "[  FAILED  ] 3 tests, listed below:\n[  FAILED  ] S.T\n");
    t = oq_summary_scanner_last(s);
    assert_int_equal(t->runner, OQ_RUNNER_GTEST);
    assert_int_equal(t->passed, 2);
    assert_int_equal(t->failed, 3);
    assert_int_equal(t->skipped, 1);
    assert_string_equal(t->skips[0].text, "S.A");
    oq_summary_scanner_free(s);

    /* unittest -v, as Python 3.11 prints it */
    s = scan("test_a (test_u.T.test_a) ... ok\ntest_b (test_u.T.test_b) ... skipped 'needs gpu'\n"
             "test_c (test_u.T.test_c) ... expected failure\n\n"
             "----------------------------------------------------------------------\n"
             "Ran 3 tests in 0.015s\n\nOK (skipped=1, expected failures=1)\n");
    t = oq_summary_scanner_last(s);
    assert_int_equal(t->runner, OQ_RUNNER_UNITTEST);
    assert_int_equal(t->passed, 1);
    assert_int_equal(t->skipped, 1);
    assert_int_equal(t->xfailed, 1);
    assert_int_equal(t->line, 8);
    assert_int_equal(t->n_skips, 1);
    assert_string_equal(t->skips[0].text, "test_b (test_u.T.test_b): needs gpu");
    oq_summary_scanner_free(s);
    assert_counts("Ran 1 test in 0.001s\n\nFAILED (failures=1, errors=1, unexpected successes=1)\n", none_of());
    assert_counts("Ran 4 tests in 0.001s\n\nFAILED (failures=1, errors=1, unexpected successes=1)\n",
                  (expect_counts){OQ_RUNNER_UNITTEST, 1, 1, 0, 1, 0, 1, 0, 0});
    assert_counts("Ran 0 tests in 0.000s\n\nNO TESTS RAN\n",
                  (expect_counts){OQ_RUNNER_UNITTEST, 0, 0, 0, 0, 0, 0, 0, 0});
    /* not summaries: counts above N, unknown items, a result line without "Ran N tests" */
    assert_counts("Ran 3 tests in 0.1s\n\nOK (skipped=4)\n", none_of());
    assert_counts("Ran 3 tests in 0.1s\n\nOK (bogus=1)\n", none_of());
    assert_counts("Ran 3 tests in 0.1s\n\nOK (skipped=1, skipped=1)\n", none_of());
    assert_counts("Ran 9223372036854775807 tests in 0.1s\n\nFAILED (failures=9223372036854775807, "
                  "errors=9223372036854775807)\n", none_of());
    assert_counts("OK\n", none_of());
    assert_counts("[  PASSED  ] 1 tests.\n", none_of());
    assert_counts("test result: maybe. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n", none_of());
}

static void last_summary_wins_with_its_reasons(void **state)
{
    (void)state;
    oq_summary_scanner *s = scan("SKIPPED [2] test_a.py:3: old reason\n"
                                 "==== 1 passed, 2 skipped in 0.1s ====\n"
                                 "SKIPPED [1] test_b.py:7: needs CUDA\n"
                                 "\x1b[33mSKIPPED\x1b[0m [3] test_b.py:9: needs bf16\n"
                                 "==== 2 passed, 4 skipped in 0.2s ====\n"
                                 "trailing noise\n");
    const oq_test_summary *t = oq_summary_scanner_last(s);
    assert_int_equal(t->passed, 2);
    assert_int_equal(t->skipped, 4);
    assert_int_equal(t->line, 5);
    assert_int_equal(t->n_skips, 2);
    assert_string_equal(t->skips[0].text, "test_b.py:7: needs CUDA");
    assert_int_equal(t->skips[0].count, 1);
    assert_string_equal(t->skips[1].text, "test_b.py:9: needs bf16");
    assert_int_equal(t->skips[1].count, 3);
    oq_summary_scanner_free(s);
}

/* A NUL ends a line as a newline does, under the same line number: the text after it is seen
 * (in C strings it was not: a failing last summary went unseen). */
static void nul_ends_a_line(void **state)
{
    (void)state;
    static const char log[] = "=== 3 passed in 0.1s ===\n"
                              "SKIPPED [1] t.py:1: x\0\0SKIPPED [2] t.py:2: y\n"
                              "abc\0=== 1 failed, 2 passed, 3 skipped in 0.1s ===\n";
    oq_summary_scanner *s = NULL;
    assert_int_equal(oq_summary_scan_text(log, sizeof log - 1, &s, NULL), OQ_OK);
    const oq_test_summary *t = oq_summary_scanner_last(s);
    assert_non_null(t);
    assert_int_equal(t->failed, 1);
    assert_int_equal(t->line, 3); /* the log's line: its newlines */
    assert_string_equal(t->text, "=== 1 failed, 2 passed, 3 skipped in 0.1s ===");
    assert_int_equal(t->n_skips, 2);
    assert_string_equal(t->skips[1].text, "t.py:2: y");
    oq_summary_scanner_free(s);
}

/* A carriage return ends a line as a newline does, under the same line number: a progress line
 * redrawn before pytest's summary ("...\r=== 1 failed ..."), a runner's CRLF output. */
static void carriage_return_ends_a_line(void **state)
{
    (void)state;
    oq_summary_scanner *s = scan("=== 3 passed in 0.1s ===\n"
                                 "\rt.py ..F [100%]\r\r=== 1 failed, 2 passed in 0.1s ===\n");
    const oq_test_summary *t = oq_summary_scanner_last(s);
    assert_non_null(t);
    assert_int_equal(t->failed, 1);
    assert_int_equal(t->line, 2);
    assert_string_equal(t->text, "=== 1 failed, 2 passed in 0.1s ===");
    oq_summary_scanner_free(s);
    /* a Windows-built ctest: CRLF lines, the skip list still read to its end */
    s = scan("100% tests passed, 0 tests failed out of 3\r\n\r\nThe following tests did not run:\r\n"
             "\t  2 - gpu_a (Skipped)\r\n\t  3 - gpu_b (Skipped)\r\n\r\nTotal Test time (real) = 0.1 sec\r\n");
    t = oq_summary_scanner_last(s);
    assert_int_equal(t->passed, 1);
    assert_int_equal(t->skipped, 2);
    assert_int_equal(t->n_skips, 2);
    assert_string_equal(t->skips[1].text, "gpu_b (Skipped)");
    oq_summary_scanner_free(s);
}

/* Judge `log` with exit code `code`; returns the judgement (caller clears). */
static oq_gate_judgement judge(const char *log, int code, const char *allow)
{
    oq_summary_scanner *s = scan(log);
    oq_gate_outcome o = {code, 0, oq_summary_scanner_last(s), NULL, 0, oq_summary_scanner_failed_before(s), NULL, 0,
                         oq_summary_scanner_failure_line(s)};
    o.n_earlier = oq_summary_scanner_earlier(s, &o.earlier);
    oq_gate_judgement j;
    oq_err err = {0};
    assert_int_equal(oq_gate_judge(&o, &allow, allow != NULL, NULL, &j, &err), OQ_OK);
    oq_summary_scanner_free(s);
    return j;
}

static void assert_verdict(const char *log, int code, const char *allow, oq_gate_verdict v,
                           const char *first_reason)
{
    oq_gate_judgement j = judge(log, code, allow);
    assert_int_equal(j.verdict, v);
    if (first_reason) {
        assert_true(j.n_reasons > 0);
        assert_string_equal(j.reasons[0], first_reason);
    } else {
        assert_int_equal(j.n_reasons, 0);
    }
    oq_gate_judgement_clear(&j);
}

static void rules(void **state)
{
    (void)state;
    assert_verdict("==== 3 passed in 0.1s ====\n", 0, NULL, OQ_GATE_PASS, NULL);
    assert_verdict("==== 3 skipped in 0.1s ====\n", 0, ".", OQ_GATE_FAIL,
                   "zero tests passed (pytest summary at line 1: ==== 3 skipped in 0.1s ====)");
    assert_verdict("==== no tests ran in 0.0s ====\n", 5, NULL, OQ_GATE_FAIL,
                   "exit status 5: no tests collected (pytest's exit status 5 means no tests were "
                   "collected or all were deselected)");
    assert_verdict("all good\n", 0, NULL, OQ_GATE_FAIL, "no test summary found in the log");
    assert_verdict("==== 3 passed in 0.1s ====\n", 2, NULL, OQ_GATE_FAIL, "exit status 2");
    assert_verdict("5 passed, 1 failed\n", 0, NULL, OQ_GATE_FAIL, "1 failed"); /* `|| true` */
    assert_verdict("==== 1 passed, 1 error in 0.1s ====\n", 0, NULL, OQ_GATE_FAIL, "1 errors");
    /* `pytest a || true; pytest b`: b's summary is the last, a's failures still fail (they
     * passed: the last summary alone was judged) */
    assert_verdict("= 1 failed, 2 passed in 0.1s =\n= 4 passed in 0.1s =\n", 0, NULL, OQ_GATE_FAIL,
                   "an earlier run failed (pytest summary at line 1: = 1 failed, 2 passed in 0.1s =); "
                   "the last summary does not undo it");
    assert_verdict("1 passed, 0 failed\n==== 1 error in 0.1s ====\n3 passed, 0 failed\n", 0, NULL, OQ_GATE_FAIL,
                   "an earlier run failed (pytest summary at line 2: ==== 1 error in 0.1s ====); "
                   "the last summary does not undo it");
    assert_verdict("2 passed, 0 failed\n3 passed, 0 failed\n", 0, NULL, OQ_GATE_PASS, NULL);
    /* a failing summary behind a carriage return, exit status masked: it passed (the progress
     * text glued to it hid it, the other summary was judged alone) */
    assert_verdict("= 3 passed in 0.1s =\nt.py ..F\r= 1 failed, 2 passed in 0.1s =\n", 0, NULL, OQ_GATE_FAIL,
                   "1 failed");
    assert_verdict("t.py ..F\r= 1 failed, 2 passed in 0.1s =\r\n= 4 passed in 0.1s =\r\n", 0, NULL, OQ_GATE_FAIL,
                   "an earlier run failed (pytest summary at line 1: = 1 failed, 2 passed in 0.1s =); "
                   "the last summary does not undo it");
    /* nor an earlier run of nothing, whatever the runner said it with */
    assert_verdict("=== no tests ran in 0.1s ===\n=== 2 passed in 0.1s ===\n", 0, NULL, OQ_GATE_FAIL,
                   "an earlier run ran no tests (pytest summary at line 1: === no tests ran in 0.1s ===); "
                   "the last summary does not undo it");
    assert_verdict("0 passed, 0 failed\n2 passed, 0 failed\n", 0, NULL, OQ_GATE_FAIL,
                   "an earlier run ran no tests (plain summary at line 1: 0 passed, 0 failed); "
                   "the last summary does not undo it");
    assert_verdict("Test project /b\nNo tests were found!!!\n2 passed, 0 failed\n", 0, NULL, OQ_GATE_FAIL,
                   "an earlier run ran no tests (ctest summary at line 2: No tests were found!!!); "
                   "the last summary does not undo it");
    assert_verdict("No tests were found!!!\n", 0, NULL, OQ_GATE_FAIL,
                   "zero tests passed (ctest summary at line 1: No tests were found!!!)");
    /* GoogleTest's disabled tests need an --allow-skip as ctest's do (QA hostile2 #3: passed) */
    assert_verdict("[  PASSED  ] 1 test.\n\n  YOU HAVE 3 DISABLED TESTS\n", 0, NULL, OQ_GATE_FAIL,
                   "skipped (no opts.allow_skip given): [3] YOU HAVE 3 DISABLED TESTS");
    assert_verdict("[  PASSED  ] 1 test.\n\n  YOU HAVE 3 DISABLED TESTS\n", 0, "DISABLED", OQ_GATE_PASS, NULL);
    /* even when its skips are allowed: a run of skips alone fails as the last summary would */
    assert_verdict("SKIPPED [3] g.py:1: needs CUDA\n=== 3 skipped in 0.1s ===\n=== 2 passed in 0.1s ===\n", 0,
                   "needs CUDA", OQ_GATE_FAIL,
                   "an earlier run ran no tests (pytest summary at line 2: === 3 skipped in 0.1s ===); "
                   "the last summary does not undo it");
    /* nor an earlier run's skips: judged by the last summary's rules */
    assert_verdict("gpu: 0 passed, 0 failed, 3 skipped\nunit: 2 passed, 0 failed\n", 0, ".", OQ_GATE_FAIL,
                   "an earlier run ran no tests (plain summary at line 1: gpu: 0 passed, 0 failed, 3 skipped); "
                   "the last summary does not undo it");
    const char *earlier_skip = "SKIPPED [1] g.py:1: needs CUDA\n=== 1 passed, 1 skipped in 0.1s ===\n"
                               "unit: 2 passed, 0 failed\n";
    assert_verdict(earlier_skip, 0, NULL, OQ_GATE_FAIL,
                   "in an earlier run (pytest summary at line 2: === 1 passed, 1 skipped in 0.1s ===): "
                   "skipped (no opts.allow_skip given): [1] g.py:1: needs CUDA");
    assert_verdict(earlier_skip, 0, "needs bf16", OQ_GATE_FAIL,
                   "in an earlier run (pytest summary at line 2: === 1 passed, 1 skipped in 0.1s ===): "
                   "skip not allowed by opts.allow_skip: [1] g.py:1: needs CUDA");
    assert_verdict(earlier_skip, 0, "needs CUDA$", OQ_GATE_PASS, NULL);
    assert_verdict("=== 1 passed, 2 skipped in 0.1s ===\n=== 2 passed in 0.1s ===\n", 0, ".", OQ_GATE_FAIL,
                   "in an earlier run (pytest summary at line 1: === 1 passed, 2 skipped in 0.1s ===): "
                   "2 of 2 skips have no visible reason (for pytest add -rs so each skip prints one); a skip "
                   "without a reason is never allowed");
    /* every earlier one counts, in log order, not only the first */
    oq_gate_judgement j2 = judge("1 passed, 0 failed, 1 skipped\n1 passed, 0 failed\n0 passed, 0 failed\n"
                                 "2 passed, 0 failed\n", 0, NULL);
    assert_int_equal(j2.n_reasons, 2);
    assert_non_null(strstr(j2.reasons[0], "in an earlier run (plain summary at line 1: "));
    assert_non_null(strstr(j2.reasons[1], "an earlier run ran no tests (plain summary at line 3: "));
    oq_gate_judgement_clear(&j2);
    const char *skip_log = "SKIPPED [1] test_x.py:12: needs CUDA\n==== 2 passed, 1 skipped in 0.1s ====\n";
    assert_verdict(skip_log, 0, NULL, OQ_GATE_FAIL,
                   "skipped (no opts.allow_skip given): [1] test_x.py:12: needs CUDA");
    assert_verdict(skip_log, 0, "needs CUDA$", OQ_GATE_PASS, NULL);
    assert_verdict(skip_log, 0, "needs bf16", OQ_GATE_FAIL,
                   "skip not allowed by opts.allow_skip: [1] test_x.py:12: needs CUDA");
    /* a skip count without reasons (pytest without -rs) is never allowed, even by "." */
    assert_verdict("==== 2 passed, 1 skipped in 0.1s ====\n", 0, ".", OQ_GATE_FAIL,
                   "1 of 1 skips have no visible reason (for pytest add -rs so each skip prints "
                   "one); a skip without a reason is never allowed");

    /* the hint names what makes the runner that skipped print its reasons, not pytest's -rs */
    static const struct {
        const char *log, *reason;
    } hints[] = {
        {"Ran 2 tests in 0.1s\n\nOK (skipped=1)\n",
         "1 of 1 skips have no visible reason (for unittest add -v so each skip prints one); "
         "a skip without a reason is never allowed"},
        {"test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n",
         "1 of 1 skips have no visible reason (for cargo write #[ignore = \"why\"] and run without "
         "-q so each ignored test prints one); a skip without a reason is never allowed"},
        {"[  PASSED  ] 1 test.\n[  SKIPPED ] 1 test, listed below:\n",
         "1 of 1 skips have no visible reason (GoogleTest names each skipped test after its "
         "\"[  SKIPPED ] N tests, listed below:\" line: keep those lines in the log); a skip "
         "without a reason is never allowed"},
        {"[  PASSED  ] 1 test(s).\n[  SKIPPED ] 1 test(s), listed below:\n",
         "1 of 1 skips have no visible reason (cmocka names each skipped test after its "
         "\"[  SKIPPED ] N test(s), listed below:\" line: keep those lines in the log); a skip "
         "without a reason is never allowed"},
        {"1 passed, 0 failed, 1 skipped\n",
         "1 of 1 skips have no visible reason (a plain summary prints none: a \"SKIP name: reason\" "
         "line before it for each skip, as ortqual conformance prints, gives one); a skip without a "
         "reason is never allowed"},
    };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        assert_verdict(hints[i].log, 0, ".", OQ_GATE_FAIL, hints[i].reason);
    /* ortqual conformance's own log: a reason for each skip and unsupported test, so its run of
     * the shipped set (every *_expanded test skipped) can pass a gate that allows those reasons */
    static const char conf_log[] = "PASS test_attention_3d: max_abs=0\n"
                                   "SKIP test_attention_3d_expanded: not applicable: an expanded body\n"
                                   "UNSUPPORTED test_attention_4d: ORT has no kernel for it\n"
                                   "1 passed, 0 failed, 2 skipped (1 unsupported)\n";
    assert_verdict(conf_log, 0, "not applicable|no kernel", OQ_GATE_PASS, NULL);
    assert_verdict(conf_log, 0, "not applicable", OQ_GATE_FAIL,
                   "skip not allowed by opts.allow_skip: [1] test_attention_4d: ORT has no kernel for it");
    assert_verdict("SKIP a: why\nSKIP b: why\n1 passed, 0 failed, 3 skipped\n", 0, ".", OQ_GATE_FAIL,
                   "1 of 3 skips have no visible reason (a plain summary prints none: a \"SKIP name: "
                   "reason\" line before it for each skip, as ortqual conformance prints, gives one); a "
                   "skip without a reason is never allowed");

    /* ctest lists every skip it counts; a summary built by a caller may lack the list */
    oq_test_summary ctest = {.runner = OQ_RUNNER_CTEST, .passed = 1, .skipped = 1, .text = "x"};
    oq_gate_outcome with_ctest = {.summary = &ctest};
    oq_gate_judgement jc;
    assert_int_equal(oq_gate_judge(&with_ctest, (const char *[]){"."}, 1, NULL, &jc, NULL), OQ_OK);
    assert_string_equal(jc.reasons[0], "1 of 1 skips have no visible reason (ctest names each skipped "
                                       "test after \"The following tests did not run:\": keep that "
                                       "list in the log); a skip without a reason is never allowed");
    oq_gate_judgement_clear(&jc);

    /* issue 15: reasons whose counts add up past INT64_MAX (the sum overflowed) */
    assert_verdict("SKIPPED [9223372036854775807] t.py:1: needs CUDA\n"
                   "SKIPPED [9223372036854775807] t.py:2: needs CUDA\n"
                   "==== 1 passed, 9223372036854775807 skipped in 0.1s ====\n",
                   0, "needs CUDA", OQ_GATE_PASS, NULL);

    oq_gate_outcome killed = {-1, 9, NULL, NULL};
    oq_gate_judgement j;
    assert_int_equal(oq_gate_judge(&killed, NULL, 0, NULL, &j, NULL), OQ_OK);
    assert_int_equal(j.verdict, OQ_GATE_FAIL);
    assert_string_equal(j.reasons[0], "killed by signal 9 (Killed)");
    oq_gate_judgement_clear(&j);

    oq_err err = {0};
    assert_int_equal(oq_gate_judge(&killed, (const char *[]){"("}, 1, NULL, &j, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "allow_skip '(': "));
}

static int has_reason(const oq_gate_judgement *j, const char *text)
{
    for (size_t i = 0; i < j->n_reasons; i++)
        if (!strcmp(j->reasons[i], text)) return 1;
    return 0;
}

/* ortqual's own verdict line (validate, replay, merge): its counts of configurations, and any
 * word but PASSED a failure line (QA sre #4: "no test summary found in the log") */
static void ortqual_verdict_line(void **state)
{
    (void)state;
    const expect_counts ok = {OQ_RUNNER_ORTQUAL, 2, 0, 1, 0, 0, 0, 0, 0};
    assert_counts("verdict: PASSED (2 passed, 0 failed, 1 skipped; reference ref:encoder:fp64); details in "
                  "d/summary.json\n", ok);
    assert_counts("verdict: PASSED (2 passed, 0 failed, 1 skipped)\n", ok);
    assert_counts("verdict: ERROR (1 passed, 0 failed, 0 skipped, 2 runtime errors, 1 not run); details in d\n",
                  (expect_counts){OQ_RUNNER_ORTQUAL, 1, 0, 0, 3, 0, 0, 0, 0});
    assert_counts("verdict: FAILED (0 passed, 1 failed, 0 skipped, 1 runtime error; reference expected)\n",
                  (expect_counts){OQ_RUNNER_ORTQUAL, 0, 1, 0, 1, 0, 0, 0, 0});
    assert_counts("verdict: NOT TESTED (0 passed, 0 failed, 3 skipped; reference expected)\n",
                  (expect_counts){OQ_RUNNER_ORTQUAL, 0, 0, 3, 0, 0, 0, 0, 0});
    /* not the line: another word, a count missing, text after the counts, a negative count */
    assert_counts("verdict: MAYBE (2 passed, 0 failed, 0 skipped)\n", none_of());
    assert_counts("verdict: PASSED (2 passed, 0 failed)\n", none_of());
    assert_counts("verdict: PASSED (2 passed, 0 failed, 0 skipped, or so)\n", none_of());
    assert_counts("verdict: PASSED (-2 passed, 0 failed, 0 skipped)\n", none_of());
    assert_counts("  verdict: PASSED (2 passed, 0 failed, 0 skipped)\n", (expect_counts){OQ_RUNNER_ORTQUAL, 2, 0, 0, 0, 0, 0, 0, 0});
    assert_string_equal(oq_runner_name(OQ_RUNNER_ORTQUAL), "ortqual");

    assert_verdict("verdict: PASSED (1 passed, 0 failed, 0 skipped; reference cpu:model:fp32); details in d\n", 0, NULL,
                   OQ_GATE_PASS, NULL);
    /* validate --allow-skip exits 0 on NOT TESTED: the line still fails the gate */
    assert_verdict("verdict: NOT TESTED (0 passed, 0 failed, 1 skipped; reference expected); details in d\n", 0,
                   ".", OQ_GATE_FAIL,
                   "zero tests passed (ortqual summary at line 1: verdict: NOT TESTED (0 passed, 0 failed, 1 "
                   "skipped; reference expected); details in d)");
    /* a FAILED run whose configurations all passed (a --require unmet, the reference failed) */
    oq_gate_judgement j = judge("verdict: FAILED (1 passed, 0 failed, 0 skipped); details in d\n", 0, NULL);
    assert_int_equal(j.verdict, OQ_GATE_FAIL);
    assert_true(has_reason(&j, "a failing run at line 1 (ortqual: verdict: FAILED (1 passed, 0 failed, 0 skipped); "
                               "details in d); no other summary undoes it"));
    oq_gate_judgement_clear(&j);
    /* an earlier failing verdict is not undone by a later passing one (validate a || true; validate b) */
    assert_verdict("verdict: FAILED (0 passed, 1 failed, 0 skipped)\nverdict: PASSED (1 passed, 0 failed, 0 skipped)\n",
                   0, NULL, OQ_GATE_FAIL,
                   "an earlier run failed (ortqual summary at line 1: verdict: FAILED (0 passed, 1 failed, 0 skipped)); "
                   "the last summary does not undo it");
    /* its skips have no reason the gate reads */
    assert_verdict("verdict: PASSED (1 passed, 0 failed, 1 skipped)\n", 0, ".", OQ_GATE_FAIL,
                   "1 of 1 skips have no visible reason (ortqual's verdict line names no reason per skipped "
                   "configuration: leave out the configurations that cannot run here); a skip without a reason is "
                   "never allowed");
}

/* Several allow_skip expressions, each compiled and matched on its own (QA sre #1: joined as text
 * into "(gpu)|(.*)|(bf16)", a stray parenthesis in one made the whole match every skip). */
static void allow_skip_each_alone(void **state)
{
    (void)state;
    oq_summary_scanner *s = scan("SKIPPED [1] t.py:3: flaky on prod hardware\nSKIPPED [1] t.py:4: needs bf16\n"
                                 "=== 1 passed, 2 skipped in 0.1s ===\n");
    oq_gate_outcome o = {.summary = oq_summary_scanner_last(s)};
    oq_gate_judgement j;
    oq_err err = {0};
    const char *bad[] = {"bf16", "gpu)|(.*"};
    assert_int_equal(oq_gate_judge(&o, bad, 2, NULL, &j, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "allow_skip 'gpu)|(.*': Unmatched ( or \\(");
    assert_int_equal(j.n_reasons, 0);
    const char *one[] = {"bf16$", "gpu\\)"};
    assert_int_equal(oq_gate_judge(&o, one, 2, NULL, &j, &err), OQ_OK);
    assert_int_equal(j.verdict, OQ_GATE_FAIL);
    assert_int_equal(j.n_reasons, 1);
    assert_string_equal(j.reasons[0], "skip not allowed by opts.allow_skip: [1] t.py:3: flaky on prod hardware");
    oq_gate_judgement_clear(&j);
    const char *both[] = {"bf16$", "^t.py:3: flaky"};
    assert_int_equal(oq_gate_judge(&o, both, 2, NULL, &j, &err), OQ_OK);
    assert_int_equal(j.verdict, OQ_GATE_PASS);
    oq_gate_judgement_clear(&j);
    /* QA hostile2 #4: a stray '|' ("CUDA|") matches "" and so every reason: refused, as ".*" is */
    const char *empty_branch[][1] = {{"CUDA|"}, {"(CUDA|)"}, {".*"}, {"x?"}};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(oq_gate_judge(&o, empty_branch[i], 1, NULL, &j, &err), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "matches the empty string, so it would allow every skip"));
    }
    /* QA hostile3 #5: a zero-width assertion alone in an alternative never matches "" but matches
     * in every reason with a word: refused too, naming the text it matched in */
    const char *zero_width[][1] = {{"CUDA|\\<"}, {"CUDA|\\b"}, {"CUDA|\\>"}, {"GPU|\\<(x)?"}, {"(CUDA|\\<)x?"}};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(oq_gate_judge(&o, zero_width[i], 1, NULL, &j, &err), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "matches with zero width (in \""));
        assert_non_null(strstr(err.msg, "so it would allow every skip"));
        assert_int_equal(j.n_reasons, 0);
    }
    assert_string_equal(err.msg, "allow_skip '(CUDA|\\<)x?' matches with zero width (in \"a\" at offset 0), so it "
                                 "would allow every skip (an alternative that is only an assertion such as '\\<', "
                                 "'\\b', '^' or '$', or that may be empty); to allow every skip on purpose, give '.'");
    /* anchored and word-bounded expressions that need text still allow only their skips */
    const char *anchored[] = {"\\<bf16\\>$", "^t\\.py:3: flaky\\b"};
    assert_int_equal(oq_gate_judge(&o, anchored, 2, NULL, &j, &err), OQ_OK);
    assert_int_equal(j.verdict, OQ_GATE_PASS);
    oq_gate_judgement_clear(&j);
    const char *hole[] = {"bf16", NULL};
    assert_int_equal(oq_gate_judge(&o, hole, 2, NULL, &j, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_gate_judge: allow_skip[1] is NULL");
    assert_int_equal(oq_gate_judge(&o, NULL, 1, NULL, &j, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_gate_judge: allow_skip is NULL");
    oq_summary_scanner_free(s);
}

/* QA ci #1: with the exit status masked (`|| true`), a failing go test / cargo / TAP /
 * unittest / GoogleTest run printed after a passing pytest or plain summary passed the gate,
 * and so did a cargo test whose failing test printed "4 passed, 0 failed". */
static void failure_lines_anywhere(void **state)
{
    (void)state;
    static const struct {
        const char *log, *reason;
    } cases[] = {
        {"= 3 passed in 0.1s =\n--- FAIL: TestB (0.00s)\nFAIL\texample.com/m\t0.002s\n",
         "a failing run at line 2 (go: --- FAIL: TestB (0.00s)); no other summary undoes it"},
        {"= 3 passed in 0.1s =\nFAIL\texample.com/m\t0.002s\n",
         "a failing run at line 2 (go: FAIL\texample.com/m\t0.002s); no other summary undoes it"},
        {"unit: 3 passed, 0 failed\nFAIL\n", "a failing run at line 2 (go: FAIL); no other summary undoes it"},
        {"= 3 passed in 0.1s =\n1..2\nok 1 - a\nnot ok 2 - b\n",
         "a failing run at line 4 (tap: not ok 2 - b); no other summary undoes it"},
        {"= 3 passed in 0.1s =\r\n1..2\r\nok 1 - a\rnot ok 2 - b\r\n",
         "a failing run at line 3 (tap: not ok 2 - b); no other summary undoes it"},
        {"= 3 passed in 0.1s =\ntest a ... ok\rtest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; "
         "0 filtered out\n",
         "a failing run at line 2 (cargo: test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; "
         "0 filtered out); no other summary undoes it"},
        {"= 3 passed in 0.1s =\n1..2\nBail out! no database\n",
         "a failing run at line 3 (tap: Bail out! no database); no other summary undoes it"},
        {"= 3 passed in 0.1s =\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n",
         "a failing run at line 4 (unittest: FAILED (failures=1)); no other summary undoes it"},
        {"= 3 passed in 0.1s =\n[  FAILED  ] S.T (0 ms)\n",
         "a failing run at line 2 (gtest/cmocka: [  FAILED  ] S.T (0 ms)); no other summary undoes it"},
        {"running 1 test\n---- b stdout ----\n4 passed, 0 failed\nthread panicked\n"
         "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
         "a failing run at line 5 (cargo: test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; "
         "0 filtered out; finished in 0.00s); no other summary undoes it"},
        /* QA round 7 #2: a runner that crashed or was refused prints no summary of its own */
        {"test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n"
         "running 2 tests\nerror: test failed, to rerun pass `--test it`\n\nCaused by:\n"
         "  process didn't exit successfully: `it-1234` (signal: 11, SIGSEGV: invalid memory reference)\n",
         "a failing run at line 3 (cargo: error: test failed, to rerun pass `--test it`); no other summary undoes it"},
        {"= 2 passed in 0.04s =\nFatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n",
         "a failing run at line 2 (python: Fatal Python error: Segmentation fault); no other summary undoes it"},
        {"= 3 passed in 0.1s =\nINTERNALERROR> Traceback (most recent call last):\nINTERNALERROR> KeyError: 'x'\n",
         "a failing run at line 2 (pytest: INTERNALERROR> Traceback (most recent call last):); "
         "no other summary undoes it"},
        {"verdict: PASSED (1 passed, 0 failed, 0 skipped; reference r); details in U/summary.json\n"
         "ortqual merge: S/shards/1/summary.json:415: not valid JSON\n",
         "a failing run at line 2 (ortqual: ortqual merge: S/shards/1/summary.json:415: not valid JSON); "
         "no other summary undoes it"},
        /* refused, then another command ran to its verdict: the refusal had no verdict of its own */
        {"ortqual merge: S: no plan\nortqual validate: --configs a,b (--model's default here)\n"
         "verdict: PASSED (1 passed, 0 failed, 0 skipped; reference r); details in U/summary.json\n",
         "a failing run at line 1 (ortqual: ortqual merge: S: no plan); no other summary undoes it"},
        /* refused, then another run's verdict directly after it (a script's second validate,
         * which prints no ortqual line of its own): the verdict is not the refused run's */
        {"ortqual validate: --tolerance 'x:rtol=2': the model has no output 'x'\n"
         "[1/2] ref:encoder:fp64 ...\n[2/2] cpu:attention24:fp32 ...\nreport: U/report.html\n"
         "verdict: PASSED (1 passed, 0 failed, 0 skipped; reference r); details in U/summary.json\n",
         "a failing run at line 1 (ortqual: ortqual validate: --tolerance 'x:rtol=2': the model has no output 'x'); "
         "no other summary undoes it"},
        {"ortqual replay: --inputs 'a_*.npz': no such file\n"
         "verdict: PASSED (1 passed, 0 failed, 0 skipped; reference r); details in U/summary.json\n",
         "a failing run at line 1 (ortqual: ortqual replay: --inputs 'a_*.npz': no such file); no other summary undoes it"},
        {"ortqual bench: --variants: 'x' is listed twice (items 1 and 2)\nverdict: PASSED (1 passed, 0 failed, 0 skipped); "
         "details in B/summary.json\n",
         "a failing run at line 1 (ortqual: ortqual bench: --variants: 'x' is listed twice (items 1 and 2)); "
         "no other summary undoes it"},
        /* "ortqual: ..." names no command: a plan unreadable after --prepare-shards, a mistyped
         * command, before another run's verdict */
        {"ortqual: S/shards/plan.json: no such file\n"
         "verdict: PASSED (1 passed, 0 failed, 0 skipped; reference r); details in U/summary.json\n",
         "a failing run at line 1 (ortqual: ortqual: S/shards/plan.json: no such file); no other summary undoes it"},
        {"= 2 passed in 0.1s =\nortqual: 'valdate' is not a command (see 'ortqual --help')\n",
         "a failing run at line 2 (ortqual: ortqual: 'valdate' is not a command (see 'ortqual --help')); "
         "no other summary undoes it"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        oq_gate_judgement j = judge(cases[i].log, 0, NULL);
        assert_int_equal(j.verdict, OQ_GATE_FAIL);
        if (!has_reason(&j, cases[i].reason)) fail_msg("case %zu: no reason '%s'", i, cases[i].reason);
        oq_gate_judgement_clear(&j);
    }
    /* only as the runners print them, from the line's start: a test's name, a quote in a
     * passing test's output, a nested TAP subtest, a TODO test are no failure */
    assert_verdict("t.py::test_not_ok PASSED\nt.py::test_FAIL PASSED\n"
                   "log: test result: FAILED. 0 passed; 1 failed\n"
                   "FAILED (failures=1) quoted in a message\n"
                   "FAILED t.py::quoted\n"
                   "not okay\n    not ok 1 - inner\nnot ok 3 - x # TODO later\nnot ok 4 # todo\n"
                   "[  FAILED  ]x\nFAILURE\n--- FAIL\n"
                   "  Fatal Python error: quoted\nlog: INTERNALERROR> quoted\nINTERNALERRORS\n"
                   "  error: test failed, to rerun pass quoted\nerror: test failed\n"
                   "= 2 passed in 0.1s =\n",
                   0, NULL, OQ_GATE_PASS, NULL);
    /* ortqual's own notes, warnings and defaults, before its verdict or from a prepare step
     * (no verdict), are no refusal */
    assert_verdict("ortqual validate: --configs a,b (--model's default here)\n"
                   "ortqual validate: note: m computes in float32\nprepared 2 shards\n"
                   "ortqual replay: --precision fp32 (the default here, as validate's: fp32)\n"
                   "ortqual bench: WARNING: slow\n  ortqual merge: quoted\nortqual gate: log /tmp/x\n"
                   "ortqual bench: --baseline b.json: another CPU (x): compared anyway (--baseline-any-host)\n"
                   "verdict: PASSED (1 passed, 0 failed, 0 skipped; reference r); details in S/summary.json\n",
                   0, NULL, OQ_GATE_PASS, NULL);
}

static void dispatch_rule(void **state)
{
    (void)state;
    const char *log = "Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=FLASH_ATTENTION\n"
                      "Operator=Attention Node=attn1 DataType=fp16 SdpaKernel=MATH\n";
    oq_dispatch_parser *p;
    assert_int_equal(oq_dispatch_parse_text(log, strlen(log), &p, NULL), OQ_OK);
    oq_summary_scanner *s = scan("3 passed in 0.1s\n");
    oq_dispatch_expect *e;
    assert_int_equal(oq_dispatch_expect_create(&e, NULL), OQ_OK);
    assert_int_equal(oq_dispatch_expect_add(e, "FLASH_ATTENTION", NULL), OQ_OK);
    oq_gate_outcome o = {0, 0, oq_summary_scanner_last(s), oq_dispatch_parser_log(p)};
    oq_gate_judgement j;
    assert_int_equal(oq_gate_judge(&o, NULL, 0, e, &j, NULL), OQ_OK);
    assert_int_equal(j.verdict, OQ_GATE_FAIL);
    assert_int_equal(j.n_reasons, 1);
    assert_string_equal(j.reasons[0], "dispatch: attn1: expected FLASH_ATTENTION, got MATH (line 2)");
    assert_true(j.dispatch_checked);
    assert_int_equal(j.dispatch.n_records, 2);
    oq_gate_judgement_clear(&j);

    o.dispatch = NULL; /* no routing text at all */
    assert_int_equal(oq_gate_judge(&o, NULL, 0, e, &j, NULL), OQ_OK);
    assert_int_equal(j.verdict, OQ_GATE_FAIL);
    assert_non_null(strstr(j.reasons[0], "dispatch: no SdpaKernel= line"));
    oq_gate_judgement_clear(&j);
    oq_dispatch_expect_free(e);
    oq_summary_scanner_free(s);
    oq_dispatch_parser_free(p);
}

static void log_refuses_symlink_and_existing(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq-test-gate-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char target[256], link[256];
    snprintf(target, sizeof target, "%s/victim", dir);
    snprintf(link, sizeof link, "%s/gate.log", dir);
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);

    int fd = -1;
    oq_err err = {0};
    assert_int_equal(oq_gate_open_log(link, &fd, &err), OQ_ERR_IO);
    assert_int_equal(fd, -1);
    assert_non_null(strstr(err.msg, "gate.log: cannot create log: "));
    struct stat sb;
    assert_int_equal(stat(target, &sb), 0);
    assert_int_equal(sb.st_size, 9); /* the target is untouched */

    /* a dangling link too: O_EXCL does not follow it to create the target */
    assert_int_equal(unlink(target), 0);
    assert_int_equal(oq_gate_open_log(link, &fd, &err), OQ_ERR_IO);
    assert_int_not_equal(access(target, F_OK), 0);
    assert_int_equal(unlink(link), 0);

    assert_int_equal(oq_gate_open_log(link, &fd, &err), OQ_OK); /* a fresh path works */
    assert_int_equal(fstat(fd, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    close(fd);
    assert_int_equal(oq_gate_open_log(link, &fd, &err), OQ_ERR_IO); /* and only once */
    assert_int_equal(unlink(link), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void create_rejects_bad_options(void **state)
{
    (void)state;
    char *argv[] = {"true", NULL};
    const char *bad_env[] = {"NOEQUALS"};
    const char *bad_spec[] = {"flashy"};
    const char *missing[] = {"/nonexistent/libx.so"};
    oq_gate *g = NULL;
    oq_err err = {0};
    oq_gate_options o = {.argv = argv, .env = bad_env, .n_env = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "opts.env 'NOEQUALS': expected NAME=VALUE");
    o = (oq_gate_options){.argv = argv, .require_dispatch = bad_spec, .n_require_dispatch = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "opts.require_dispatch: 'flashy': 'flashy' is not a kernel"));
    o = (oq_gate_options){.argv = argv, .pin_libs = missing, .n_pin_libs = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "opts.pin_libs /nonexistent/libx.so: not a library file");
    o = (oq_gate_options){.argv = argv, .pythonpath = missing, .n_pythonpath = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "opts.pythonpath /nonexistent/libx.so: not a folder");
    const char *bad_re[] = {"a("};
    o = (oq_gate_options){.argv = argv, .allow_skip = bad_re, .n_allow_skip = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    char *nope[] = {"ortqual-no-such-command", NULL};
    o = (oq_gate_options){.argv = nope};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_NOT_FOUND);
    assert_string_equal(err.msg, "ortqual-no-such-command: command not found in PATH");
    o = (oq_gate_options){.argv = NULL};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    assert_null(g);
}

static int has_entry(const char *const *v, size_t n, const char *text)
{
    for (size_t i = 0; i < n; i++)
        if (strstr(v[i], text)) return 1;
    return 0;
}

/* issue 15: a python3 planted in the caller's directory, named by an absolute
 * PATH entry, must not be the command; an inherited LD_PRELOAD is reported. */
static void hostile_environment(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq-test-gate-env-XXXXXX", real[PATH_MAX], here[PATH_MAX], plant[PATH_MAX + 16];
    assert_non_null(mkdtemp(dir));
    assert_non_null(realpath(dir, real));
    assert_non_null(getcwd(here, sizeof here));
    snprintf(plant, sizeof plant, "%s/python3", real);
    FILE *f = fopen(plant, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\necho planted\n", f);
    fclose(f);
    assert_int_equal(chmod(plant, 0755), 0);
    char *old_path = strdup(getenv("PATH")), path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s:/usr/bin:/bin", real);
    assert_int_equal(chdir(real), 0);
    setenv("PATH", path, 1);
    setenv("LD_PRELOAD", "/nonexistent/libplanted.so", 1); /* only children would load it */

    char *argv[] = {"python3", NULL};
    oq_gate_options o = {.argv = argv};
    oq_gate *g = NULL;
    oq_err err = {0};
    oq_status st = oq_gate_create(&o, &g, &err);
    setenv("PATH", old_path, 1);
    unsetenv("LD_PRELOAD");
    assert_int_equal(chdir(here), 0);
    assert_int_equal(st, OQ_OK);
    assert_string_equal(oq_gate_command_path(g), "/usr/bin/python3");
    const char *const *v;
    size_t n = oq_gate_notes(g, &v);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "PATH entry %s dropped: it is the caller's directory", real);
    assert_true(has_entry(v, n, want));
    assert_true(has_entry(v, n, "LD_PRELOAD=/nonexistent/libplanted.so is inherited from the caller"));
    n = oq_gate_env_changes(g, &v);
    assert_true(has_entry(v, n, "PATH=/usr/bin:/bin"));
    oq_gate_free(g);
    free(old_path);
    unlink(plant);
    rmdir(dir);
}

/* QA ci #7: a relative TMPDIR gave the command a relative PWD (POSIX: always absolute). */
static void relative_tmpdir(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq-test-gate-rel-XXXXXX", real[PATH_MAX], here[PATH_MAX], want[PATH_MAX + 32];
    assert_non_null(mkdtemp(dir));
    assert_non_null(realpath(dir, real));
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(real), 0);
    assert_int_equal(mkdir("rel", 0700), 0);
    char *argv[] = {"/bin/true", NULL};
    oq_gate_options o = {.argv = argv, .tmp_parent = "rel"};
    oq_gate *g = NULL;
    oq_status st = oq_gate_create(&o, &g, NULL);
    assert_int_equal(chdir(here), 0);
    assert_int_equal(st, OQ_OK);
    snprintf(want, sizeof want, "%s/rel/ortqual-gate-", real);
    assert_memory_equal(oq_gate_dir(g), want, strlen(want));
    snprintf(want, sizeof want, "PWD=%s", oq_gate_dir(g));
    const char *const *v;
    size_t n = oq_gate_env_changes(g, &v);
    int found = 0;
    for (size_t i = 0; i < n; i++) found |= !strcmp(v[i], want);
    assert_true(found);
    oq_gate_free(g);
    snprintf(want, sizeof want, "%s/rel", real);
    assert_int_equal(rmdir(want), 0);
    assert_int_equal(rmdir(real), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pytest_variants),
        cmocka_unit_test(not_summaries),
        cmocka_unit_test(ctest_variants),
        cmocka_unit_test(cmocka_variants),
        cmocka_unit_test(plain_variants),
        cmocka_unit_test(other_runners),
        cmocka_unit_test(failure_lines_anywhere),
        cmocka_unit_test(relative_tmpdir),
        cmocka_unit_test(last_summary_wins_with_its_reasons),
        cmocka_unit_test(nul_ends_a_line),
        cmocka_unit_test(carriage_return_ends_a_line),
        cmocka_unit_test(rules),
        cmocka_unit_test(ortqual_verdict_line),
        cmocka_unit_test(allow_skip_each_alone),
        cmocka_unit_test(dispatch_rule),
        cmocka_unit_test(log_refuses_symlink_and_existing),
        cmocka_unit_test(create_rejects_bad_options),
        cmocka_unit_test(hostile_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
