#!/usr/bin/env bash
# End-to-end tests of `ortqual gate`: real processes print each kind of test
# summary, and real pytest runs (Debian's python3-pytest) skip, collect nothing,
# or pass. Each case checks the exit status and the reason the gate gives.
set -u
: "${ORTQUAL:?set ORTQUAL to the ortqual binary}"
PY=/usr/bin/python3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export TMPDIR="$W/tmp" # the gate's private folders go here, so we can look at them
mkdir -p "$TMPDIR" "$W/bin" "$W/tests" "$W/caller"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# gate EXPECTED_RC [gate options] -- CMD...: run from $W/caller, output in $W/out
gate() {
    local want=$1; shift
    (cd "$W/caller" && "$ORTQUAL" gate --quiet "$@") >"$W/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "gate $* exited $rc, expected $want"; sed 's/^/    /' "$W/out"
        return 1
    fi
}
# expect TEXT: the last gate output contains TEXT
expect() { grep -qF -- "$1" "$W/out" || { fail "output lacks '$1'"; sed 's/^/    /' "$W/out"; }; }
json() { $PY -c "import json,sys; v=json.load(open('$W/v.json')); print($1)"; }

# A program that prints TEXT (with escapes) and exits with CODE.
printer() { # name code text
    printf '#!/bin/sh\nprintf %%b %q\nexit %s\n' "$3" "$2" >"$W/bin/$1"
    chmod +x "$W/bin/$1"
}

# ---- each runner's summary, from small programs ------------------------------
printer pytest_ok 0 'collected 3 items\n===== 3 passed, 1 xfailed, 1 warning in 0.12s =====\n'
gate 0 -- "$W/bin/pytest_ok" && expect "pytest summary (line 2): 3 passed, 0 failed"
printer pytest_masked 0 '= 1 failed, 2 passed in 0.05s =\n' # a `|| true` in a script
gate 1 -- "$W/bin/pytest_masked" && expect "  - 1 failed"
printer pytest_errors 1 '==== 2 errors in 0.30s ====\n'
gate 1 -- "$W/bin/pytest_errors" && expect "  - 2 errors"
printer ctest_ok 0 '100% tests passed, 0 tests failed out of 12\n\nTotal Test time (real) =   0.35 sec\n'
gate 0 -- "$W/bin/ctest_ok" && expect "ctest summary (line 1): 12 passed"
printer ctest_skip 0 '100% tests passed, 0 tests failed out of 4\n\nThe following tests did not run:\n\t  3 - gpu_only (Skipped)\n'
gate 1 -- "$W/bin/ctest_skip" && expect "skipped (no --allow-skip given): [1] gpu_only (Skipped)"
gate 0 --allow-skip '^gpu_only ' -- "$W/bin/ctest_skip" && expect "3 passed, 0 failed, 1 skipped"
printer ctest_bad 8 '75% tests passed, 1 tests failed out of 4\n'
gate 1 -- "$W/bin/ctest_bad" && expect "  - exit status 8"
printer cmocka_ok 0 '[==========] 5 test(s) run.\n[  PASSED  ] 5 test(s).\n'
gate 0 -- "$W/bin/cmocka_ok" && expect "cmocka summary (line 2): 5 passed"
printer cmocka_skip 0 '[  PASSED  ] 4 test(s).\n[  SKIPPED ] 1 test(s), listed below:\n[  SKIPPED ] test_cuda\n\n 1 SKIPPED TEST(S)\n'
gate 1 -- "$W/bin/cmocka_skip" && expect "skipped (no --allow-skip given): [1] test_cuda"
gate 0 --allow-skip cuda -- "$W/bin/cmocka_skip"
printer plain_ok 0 'unit: 7 passed, 0 failed\n'
gate 0 -- "$W/bin/plain_ok" && expect "plain summary (line 1): 7 passed"
printer plain_zero 0 '0 passed, 0 failed\n'
gate 1 -- "$W/bin/plain_zero" && expect "zero tests passed"
printer silent 0 'all good, trust me\n'
gate 1 -- "$W/bin/silent" && expect "no test summary found in the log"
printer last_wins 0 '5 passed, 0 failed\n==== 2 skipped in 0.1s ====\n'
gate 1 -- "$W/bin/last_wins" && expect "zero tests passed"
printer earlier_failed 0 '==== 1 failed, 2 passed in 0.1s ====\n5 passed, 0 failed\n' # pytest a || true; b
gate 1 -- "$W/bin/earlier_failed" && expect "an earlier run failed (pytest summary at line 1: ==== 1 failed, 2 passed in 0.1s ====)"
# a NUL ends a line (it hid the rest of it: the failing last summary was missed, a pass)
printer nul_line 0 '=== 3 passed in 0.1s ===\nabc\0=== 1 failed, 2 passed in 0.1s ===\n'
gate 1 -- "$W/bin/nul_line" && expect "pytest summary (line 2): 2 passed, 1 failed" && expect "  - 1 failed"
# a carriage return ends a line (a failing summary after a progress line's \r, the exit status
# masked: the gate passed on the other summary)
printer cr_line 0 '=== 3 passed in 0.1s ===\nt.py ..F [100%]\r=== 1 failed, 2 passed in 0.1s ===\r\n'
gate 1 -- "$W/bin/cr_line" && expect "pytest summary (line 2): 2 passed, 1 failed" && expect "  - 1 failed"
# an earlier run of nothing, or with skips, is not undone by a later pass
printer earlier_none 0 '=== no tests ran in 0.1s ===\n=== 2 passed in 0.1s ===\n'
gate 1 -- "$W/bin/earlier_none" &&
    expect "an earlier run ran no tests (pytest summary at line 1: === no tests ran in 0.1s ===); the last summary does not undo it"
printer earlier_plain_skips 0 'gpu: 0 passed, 0 failed, 3 skipped\nunit: 2 passed, 0 failed\n'
gate 1 --allow-skip . -- "$W/bin/earlier_plain_skips" &&
    expect "in an earlier run (plain summary at line 1: gpu: 0 passed, 0 failed, 3 skipped): 3 of 3 skips have no visible reason (a plain summary prints none: a \"SKIP name: reason\" line before it for each skip, as ortqual conformance prints, gives one)"
printer earlier_skip 0 'SKIPPED [1] g.py:1: needs CUDA\n=== 1 passed, 1 skipped in 0.1s ===\nunit: 2 passed, 0 failed\n'
gate 1 -- "$W/bin/earlier_skip" &&
    expect "in an earlier run (pytest summary at line 2: === 1 passed, 1 skipped in 0.1s ===): skipped (no --allow-skip given): [1] g.py:1: needs CUDA"
gate 1 --allow-skip bf16 -- "$W/bin/earlier_skip" && expect "skip not allowed by --allow-skip: [1] g.py:1: needs CUDA"
gate 0 --allow-skip 'needs CUDA$' -- "$W/bin/earlier_skip"
# the gate's own words say the option; a log line that names an API field is quoted as it is
printer api_words 0 'SKIPPED [1] t.py:2: set (opts.allow_skip) here\n=== 1 passed, 1 skipped in 0.1s ===\n'
gate 1 -- "$W/bin/api_words" && expect "skipped (no --allow-skip given): [1] t.py:2: set (opts.allow_skip) here"
# a real ctest that finds no tests (it exits 0), before a passing suite
if command -v ctest >/dev/null; then
    mkdir -p "$W/no_ctest" && : >"$W/no_ctest/CTestTestfile.cmake"
    gate 1 -- /bin/sh -c "cd '$W/no_ctest' && ctest; echo 'unit: 2 passed, 0 failed'" &&
        expect "an earlier run ran no tests (ctest summary at line " && expect ": No tests were found!!!)"
fi
# text that is not UTF-8 (the log, an argument) is in the verdict as U+FFFD, never dropped, and
# U+FFFF (UTF-8, no XML character) too in the JUnit XML, which stays well-formed
gate 1 --verdict "$W/v.json" --junit "$W/j.xml" -- /bin/sh -c \
    "printf 'SKIPPED [1] a.py:3: x \\377\nSKIPPED [1] a.py:4: y \\357\\277\\277\n=== 1 passed, 2 skipped in 0.1s ===\n'" $'arg\377z'
[ "$(json "ascii((v['reasons'], v['summary']['skip_reasons'][0], v['command'][-1]))")" = \
  "(['skipped (no --allow-skip given): [1] a.py:3: x \\ufffd', 'skipped (no --allow-skip given): [1] a.py:4: y \\uffff'], {'reason': 'a.py:3: x \\ufffd', 'count': 1}, 'arg\\ufffdz')" ] ||
    fail "text that is not UTF-8 lost from the verdict: $(json "ascii((v['reasons'], v['summary'], v['command']))")"
$PY -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$W/j.xml" || fail "JUnit XML not well-formed"
grep -q "a.py:4: y $(printf '\357\277\275')" "$W/j.xml" || fail "JUnit XML lacks U+FFFF as U+FFFD"

# --verdict and --junit naming one file (by two paths): refused before CMD runs, nothing written
gate 2 --verdict "$W/same.json" --junit "$W/caller/../same.json" -- /bin/echo '1 passed, 0 failed' &&
    expect "ortqual gate: --junit and --verdict name the same file $W/caller/../same.json: give two"
[ ! -e "$W/same.json" ] || fail "--verdict F --junit F wrote $W/same.json"

# a real C test program (cmocka) built from nothing but cc, if a compiler is here
if command -v cc >/dev/null; then
    cat >"$W/cm.c" <<'EOF'
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
static void ok(void **s) { (void)s; }
static void later(void **s) { (void)s; skip(); }
int main(void)
{
    const struct CMUnitTest t[] = {cmocka_unit_test(ok), cmocka_unit_test(later)};
    return cmocka_run_group_tests(t, NULL, NULL);
}
EOF
    if cc "$W/cm.c" -o "$W/bin/cm" -lcmocka 2>/dev/null; then
        gate 1 -- "$W/bin/cm" && expect "skipped (no --allow-skip given): [1] later"
        gate 0 --allow-skip '^later$' -- "$W/bin/cm" && expect "cmocka summary"
    fi
fi

# ---- other runners (QA ci #1) ------------------------------------------------
# Logs of real runs (tests/fixtures/gate), printed with exit status 0 as `|| true` leaves it:
# a failing suite after a passing one is never green, whatever summary is used
FX="$OQ_SOURCE_DIR/tests/fixtures/gate"
emit() { printf '#!/bin/sh\ncat %q\n' "$FX/$1" >"$W/bin/emit_$1"; chmod +x "$W/bin/emit_$1"; }
for f in pytest_then_go pytest_then_tap pytest_then_unittest plain_then_gtest pytest_then_cargo cargo_captured_summary; do
    emit "$f.log"
    gate 1 --verdict "$W/v.json" -- "$W/bin/emit_$f.log" && expect "  - a failing run at line "
done
[ "$(json "(v['runner'], v['counts']['failed'])")" = "('cargo', 1)" ] ||
    fail "cargo's 'test result: FAILED.' not the summary: $(json "v['summary']")"
gate 1 -- "$W/bin/emit_pytest_then_go.log" && expect "a failing run at line 4 (go: --- FAIL: TestB (0.00s))"
# a runner's summary alone is read for its counts and skip reasons (unittest -v)
emit unittest_skip.log
gate 1 -- "$W/bin/emit_unittest_skip.log" && expect "skipped (no --allow-skip given): [1] test_b (test_u.T.test_b): needs gpu"
gate 0 --allow-skip 'needs gpu$' -- "$W/bin/emit_unittest_skip.log" && expect "unittest summary (line 8): 1 passed"
# a real unittest run without -v prints no skip reasons: the hint is unittest's, not pytest's -rs
mkdir -p "$W/ut" && printf 'import unittest\nclass T(unittest.TestCase):\n    def test_a(self): pass\n    @unittest.skip("needs gpu")\n    def test_b(self): pass\n' >"$W/ut/test_u.py"
gate 1 --allow-skip . -- $PY -m unittest discover -s "$W/ut" &&
    expect "1 of 1 skips have no visible reason (for unittest add -v so each skip prints one)"
gate 0 --allow-skip 'needs gpu$' -- $PY -m unittest discover -v -s "$W/ut"
# a real cargo test, if cargo and its standard library are here (no dependencies: no network)
if command -v cargo >/dev/null; then
    mkdir -p "$W/crt/src"
    printf '[package]\nname = "crt"\nversion = "0.1.0"\nedition = "2021"\n' >"$W/crt/Cargo.toml"
    printf '#[cfg(test)]\nmod tests {\n    #[test] fn ok() {}\n    #[test] fn bad() { assert_eq!(1, 2); }\n}\n' >"$W/crt/src/lib.rs"
    if (cd "$W/crt" && cargo test --offline -q >/dev/null 2>&1; [ $? -eq 101 ]); then
        gate 1 -- /bin/sh -c "echo '= 1 passed in 0.1s ='; cargo test --offline --manifest-path '$W/crt/Cargo.toml' || true" &&
            expect "  - a failing run at line " && expect "(cargo: test result: FAILED. 1 passed; 1 failed;"
    fi
fi

# ---- a runner that crashed or was refused after a passing summary (QA round 7 #2) ----------
# It prints no summary of its own; with its exit status masked the earlier summary passed the gate.
# pytest (its faulthandler) on a segfault, pytest's internal error, cargo's crashed test binary and
# an ortqual refusal (no verdict line) each count as a failing run
printf 'def test_a():\n    pass\n' >"$W/tests/test_ok.py"
printf 'import ctypes\ndef test_crash():\n    ctypes.string_at(0)\ndef test_never():\n    assert False\n' >"$W/tests/test_crash.py"
gate 1 -- /bin/sh -c "$PY -m pytest -q -p no:cacheprovider '$W/tests/test_ok.py'; $PY -m pytest -q -p no:cacheprovider '$W/tests/test_crash.py' || true" &&
    expect "(python: Fatal Python error: Segmentation fault); no other summary undoes it"
printer internal 0 '= 3 passed in 0.1s =\nINTERNALERROR> Traceback (most recent call last):\nINTERNALERROR> KeyError: 1\n'
gate 1 -- "$W/bin/internal" && expect "a failing run at line 2 (pytest: INTERNALERROR> Traceback (most recent call last):)"
printer cargo_crash 0 'test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\nrunning 2 tests\nerror: test failed, to rerun pass `--test it`\n\nCaused by:\n  process didn'"'"'t exit successfully: `/x/it-1234` (signal: 11, SIGSEGV: invalid memory reference)\n'
gate 1 -- "$W/bin/cargo_crash" && expect "a failing run at line 4 (cargo: error: test failed, to rerun pass \`--test it\`)"
gate 1 -- /bin/sh -c "echo '= 2 passed in 0.1s ='; '$ORTQUAL' merge '$W/no-campaign' || true" &&
    expect "a failing run at line 2 (ortqual: ortqual merge: "
# a refused run directly followed by another run's verdict (a script of two validations: the first
# refused, exit 2, the second PASSED; and a refused merge before it): the verdict is not the
# refused run's (main's gate took it as that run's own and passed)
V2="'$ORTQUAL' validate --no-cache --no-plots --num-events 2 --batch-size 2 --repeat 1 --warmup 0 --configs ref:encoder:fp64,cpu:attention24:fp32"
gate 1 -- /bin/sh -c "$V2 --tolerance 'nosuch:rtol=1e-3' --outdir '$W/v2a' || true; $V2 --outdir '$W/v2b'" &&
    expect "a failing run at line 1 (ortqual: ortqual validate: --tolerance: tolerance for output 'nosuch'" &&
    grep -q '"verdict": "passed"' "$W/v2b/summary.json" ||
    fail "two validations, the first refused, the second passed: $(ls "$W"; cat "$W/out")"
gate 1 -- /bin/sh -c "'$ORTQUAL' merge '$W/no-campaign' || true; $V2 --outdir '$W/v2c'" &&
    expect "a failing run at line 1 (ortqual: ortqual merge: "
# "ortqual: ..." names no command (a mistyped command, an option before the command): refused
# all the same before another run's verdict (main's gate passed both)
gate 1 -- /bin/sh -c "'$ORTQUAL' valdate || true; $V2 --outdir '$W/v2d'" &&
    expect "a failing run at line 1 (ortqual: ortqual: 'valdate' is not a command"
gate 1 -- /bin/sh -c "'$ORTQUAL' --outdir x validate || true; $V2 --outdir '$W/v2e'" &&
    expect "a failing run at line 1 (ortqual: ortqual: unknown option '--outdir'"
# the same words printed by a test in passing (indented, quoted, mid-line), and ortqual's notes
# and defaults before its verdict, are no failure
printer mentions 0 '  Fatal Python error: quoted\nlog: INTERNALERROR> quoted\n    error: test failed, to rerun pass x\nsaid: ortqual merge: x\nortqual validate: --configs a,b (--model'"'"'s default here)\nverdict: PASSED (1 passed, 0 failed, 0 skipped; reference r); details in d/summary.json\n= 2 passed in 0.1s =\n'
gate 0 -- "$W/bin/mentions" && expect "pytest summary (line 7): 2 passed"

# ---- ctest's skipped and disabled tests (QA ci #2) ------------------------------
# ctest's "out of N" counts a skipped test but never a disabled one: a passing run was read
# as "zero tests passed"
if command -v ctest >/dev/null; then
    mkdir -p "$W/ct"
    cat >"$W/ct/CTestTestfile.cmake" <<'EOF'
add_test(a "/bin/true")
add_test(gpu_c "/bin/sh" "-c" "exit 77")
set_tests_properties(gpu_c PROPERTIES SKIP_RETURN_CODE 77)
add_test(d "/bin/true")
set_tests_properties(d PROPERTIES DISABLED TRUE)
EOF
    gate 0 --allow-skip ' \((Skipped|Disabled)\)$' --verdict "$W/v.json" -- ctest --test-dir "$W/ct" &&
        expect "ctest summary (line "
    [ "$(json "(v['counts']['passed'], v['counts']['skipped'])")" = "(1, 2)" ] ||
        fail "ctest counts with a disabled test: $(json "v['counts']")"
fi

# ---- a relative TMPDIR (QA ci #7): CMD's PWD and the folder are still absolute ---
mkdir -p "$W/caller/rel"
# (python reads PWD as given: a shell would put its own in its place)
(cd "$W/caller" && TMPDIR=rel "$ORTQUAL" gate --verdict "$W/v.json" -- $PY -c \
    "import os; print('PWD=' + os.environ['PWD']); print('1 passed, 0 failed')") \
    >"$W/out" 2>&1 || fail "relative TMPDIR run failed: $(cat "$W/out")"
case "$(grep '^PWD=' "$W/out")" in "PWD=$(cd "$W/caller" && pwd -P)/rel/ortqual-gate-"*) ;;
    *) fail "relative TMPDIR: $(grep '^PWD=' "$W/out") is not absolute" ;; esac
case "$(json "v['directory']")" in /*) ;; *) fail "relative TMPDIR: verdict directory $(json "v['directory']")" ;; esac

# ---- exit statuses, signals, usage -------------------------------------------
printf '#!/bin/sh\necho "3 passed, 0 failed"\nkill -SEGV $$\n' >"$W/bin/crash"; chmod +x "$W/bin/crash"
gate 1 -- "$W/bin/crash" && expect "killed by signal 11"
gate 3 -- ortqual-no-such-command && expect "ortqual-no-such-command: command not found in PATH"
gate 3 --verdict "$W/v.json" -- "$W/bin/../bin/nope" && [ "$(json "v['verdict']")" = error ] ||
    fail "no error verdict for a missing command"
gate 2 --frobnicate -- true && expect "option '--frobnicate' is unknown"
gate 2 --allow-skip 'CUDA|' -- true && expect "--allow-skip 'CUDA|' matches the empty string, so it would allow every skip"
printf '[  PASSED  ] 1 test.\n\n  YOU HAVE 3 DISABLED TESTS\n' >"$W/gtest_disabled.log"
gate 1 -- cat "$W/gtest_disabled.log" && expect "skipped (no --allow-skip given): [3] YOU HAVE 3 DISABLED TESTS"
gate 0 --allow-skip '^YOU HAVE [0-9]+ DISABLED' -- cat "$W/gtest_disabled.log"
# QA hostile3 #5: a zero-width assertion alone in an alternative matches in every reason
for re in 'CUDA|\<' 'CUDA|\b' 'CUDA|\>'; do
    gate 2 --allow-skip "$re" -- cat "$W/gtest_disabled.log" &&
        expect "--allow-skip '$re' matches with zero width (in \"a\" at offset"
done
# the failing tests GoogleTest lists are named, as skipped ones are (it said "2 failed" alone)
printf '[==========] 3 tests from 1 test suite ran. (0 ms total)\n[  PASSED  ] 1 test.\n[  FAILED  ] 2 tests, listed below:\n[  FAILED  ] S.x\n[  FAILED  ] S.y\n\n 2 FAILED TESTS\n' >"$W/gtest_failed.log"
gate 1 --verdict "$W/vf.json" --junit "$W/jf.xml" -- cat "$W/gtest_failed.log" && expect "failed tests: S.x, S.y"
grep -q '"failed tests: S.x, S.y"' "$W/vf.json" && grep -q 'failed tests: S.x, S.y' "$W/jf.xml" ||
    fail "failing tests not named in the verdict or the JUnit: $(cat "$W/vf.json")"
gate 2 && expect "no command given"
gate 2 --allow-skip '(' -- true && expect "--allow-skip '('"
gate 2 --require-dispatch flashy -- true && expect "'flashy' is not a kernel"
gate 2 --env NOEQUALS -- true && expect "expected NAME=VALUE"
(cd "$W/caller" && "$ORTQUAL" gate --help) | grep -q "sitecustomize.py" || fail "--help does not teach"

# ---- private folder, log, verdict, environment --------------------------------
cat >"$W/bin/probe" <<'EOF'
#!/bin/sh
echo "cwd=$(pwd)"
echo "mode=$(stat -c %a .)"
echo "logmode=$(stat -c %a gate.log)"
echo "FOO=$FOO"
echo "PYTHONPATH=$PYTHONPATH"
echo "LD_PRELOAD=$LD_PRELOAD"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
grep -q 'libz\.so' /proc/$$/maps && echo "libz mapped"
read -r line && echo "stdin had: $line"
echo "1 passed, 0 failed"
EOF
chmod +x "$W/bin/probe"
LIBZ=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)
LIBM=$(dirname "$LIBZ")/libm.so.6 # a second library from the same folder: the folder is listed once
mkdir -p "$W/pylib"
(cd "$W/caller" && PYTHONPATH="$W/caller:/opt/keep" LD_LIBRARY_PATH=/opt/old "$ORTQUAL" gate --quiet --keep \
    --env FOO=bar --pythonpath "$W/pylib" --pin-lib "$LIBZ" --pin-lib "$LIBM" --verdict "$W/v.json" -- "$W/bin/probe") \
    >"$W/out" 2>&1 </dev/null || fail "probe run failed: $(cat "$W/out")"
dir=$(json "v['directory']")
log=$(json "v['log']")
case "$dir" in "$TMPDIR"/ortqual-gate-*) ;; *) fail "private folder $dir not under TMPDIR" ;; esac
[ "$log" = "$dir/gate.log" ] || fail "log $log not inside $dir"
grep -qx "cwd=$dir" "$log" || fail "command did not run in the private folder"
grep -qx "mode=700" "$log" || fail "private folder is not 0700"
grep -qx "logmode=600" "$log" || fail "log is not 0600"
grep -qx "FOO=bar" "$log" || fail "--env not passed"
grep -qx "PYTHONPATH=$W/pylib:/opt/keep" "$log" || fail "PYTHONPATH: $(grep PYTHONPATH= "$log") (caller dir must be dropped)"
grep -qx "LD_PRELOAD=$LIBZ:$LIBM" "$log" || fail "LD_PRELOAD not pinned"
grep -qx "LD_LIBRARY_PATH=$(dirname "$LIBZ"):/opt/old" "$log" || fail "LD_LIBRARY_PATH not pinned with LD_PRELOAD"
grep -qx "libz mapped" "$log" || fail "pinned library not loaded in the child"
grep -q "stdin had" "$log" && fail "the command read the caller's stdin"
[ "$(json "v['pinned_libraries'][0]")" = "$LIBZ" ] || fail "verdict lacks the pinned library"
[ "$(json "v['environment']['FOO']")" = bar ] || fail "verdict lacks the environment change"
[ "$(json "v['verdict']")" = pass ] || fail "probe verdict not pass"
[ "$(json "len(v['notes'])")" = 1 ] || fail "no note about the dropped PYTHONPATH entry"
grep -q "ortqual gate: log $log" "$W/out" || fail "log path not printed"
[ -d "$dir" ] || fail "--keep did not keep $dir"
gate 0 --verdict "$W/v.json" -- "$W/bin/plain_ok"
[ -e "$(json "v['directory']")" ] && fail "folder not removed without --keep"
[ "$(json "v['counts']['passed']")" = 7 ] || fail "verdict counts"
# the live stream: without --quiet the command's output reaches our stdout
(cd "$W/caller" && "$ORTQUAL" gate -- "$W/bin/plain_ok" 2>/dev/null) | grep -qx "unit: 7 passed, 0 failed" ||
    fail "output not streamed live"

# ---- --require-dispatch -------------------------------------------------------
route() { printf '\\033[36mOperator=Attention Node=%s DataType=fp16 SdpaKernel=%s\\033[0m\\n' "$1" "$2"; }
printer flash_all 0 "$(route attn0 FLASH_ATTENTION)$(route attn1 FLASH_ATTENTION)1 passed in 0.1s\n"
printer one_math 0 "$(route attn0 FLASH_ATTENTION)noise\n$(route attn1 MATH)$(route attn2 FLASH_ATTENTION)1 passed in 0.1s\n"
printer no_route 0 '1 passed in 0.1s\n'
gate 0 --require-dispatch FLASH_ATTENTION --verdict "$W/v.json" -- "$W/bin/flash_all" && expect "2 routing lines checked"
[ "$(json "v['dispatch']['kernels']['FLASH_ATTENTION']")" = 2 ] || fail "verdict kernel counts"
[ "$(json "v['environment']['ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO']")" = 1 ] || fail "debug-info variable not set"
gate 1 --require-dispatch FLASH_ATTENTION --verdict "$W/v.json" -- "$W/bin/one_math" &&
    expect "dispatch: attn1: expected FLASH_ATTENTION, got MATH (line 3)"
# the verdict carries each failure's route as fields, as summary.json does
[ "$(json "[(f['kind'], f['node'], f['op'], f['dtype'], f['kernel'], f['expected'], f['line']) for f in v['dispatch']['failed']]")" = \
  "[('kernel', 'attn1', 'Attention', 'fp16', 'MATH', 'FLASH_ATTENTION', 3)]" ] ||
    fail "verdict failed fields: $(json "v['dispatch'].get('failed')")"
gate 1 --require-dispatch FLASH_ATTENTION -- "$W/bin/no_route" && expect "dispatch: no SdpaKernel= line"
gate 0 --require-dispatch flash --require-dispatch attn1=math -- "$W/bin/one_math"
gate 1 --require-dispatch flash --require-dispatch attn9=flash -- "$W/bin/flash_all" && expect "attn9: not observed"

# ---- hostile environment, timeout, interruption (issue 15) ---------------------
# A python3 planted in the caller's directory, which is on PATH as an absolute entry.
printf '#!/bin/sh\necho planted >"%s/planted"\necho "1 passed, 0 failed"\n' "$W" >"$W/caller/python3"
chmod +x "$W/caller/python3"
(cd "$W/caller" && PATH="$W/caller:/usr/bin:/bin" "$ORTQUAL" gate --quiet -- python3 -c 'print("1 passed, 0 failed")') >"$W/out" 2>&1 ||
    fail "gate with the caller's directory on PATH: $(cat "$W/out")"
[ -e "$W/planted" ] && fail "the python3 planted in the caller's directory ran"
expect "note: PATH entry $W/caller dropped: it is the caller's directory"
expect "running /usr/bin/python3"
# the control: the same PATH without the gate runs the planted one (so the check can fail)
(cd "$W/caller" && PATH="$W/caller:/usr/bin:/bin" python3 -c pass >/dev/null)
[ -e "$W/planted" ] || fail "control: the planted python3 did not run directly, the test proves nothing"
rm -f "$W/planted" "$W/caller/python3"

# alive PID: running (a zombie whose parent died may wait for a PID 1 that never reaps)
alive() { [ -e "/proc/$1" ] && ! grep -q '^[^)]*) Z' "/proc/$1/stat" 2>/dev/null; }

# --timeout ends the command and everything it started (its process group).
start=$(date +%s)
gate 1 --timeout 1 -- /bin/sh -c "sleep 300 & echo \$! >'$W/bg.pid'; sleep 300" &&
    expect "timed out after 1 s: its process group was killed"
[ $(( $(date +%s) - start )) -lt 20 ] || fail "--timeout 1 took $(( $(date +%s) - start )) s"
alive "$(cat "$W/bg.pid")" && fail "--timeout left the background sleep running"
gate 2 --timeout 0 -- /bin/true && expect "--timeout '0': expected seconds"
gate 2 --timeout 1x -- /bin/true && expect "--timeout '1x': expected seconds"
gate 2 --timeout 1e8 -- /bin/true && expect "--timeout '1e8': expected seconds, more than 0 and at most 1e7"

# The gate on the shell command $1 (which writes its pid to cmd.pid) in the background,
# SIGTERMed once the command has started; its exit status in rc.
gate_term() {
    (cd "$W/caller" && exec "$ORTQUAL" gate --quiet --verdict "$W/v.json" -- /bin/sh -c "$1") >"$W/out" 2>&1 &
    local gpid=$!
    for _ in $(seq 100); do [ -s "$W/cmd.pid" ] && break; sleep 0.1; done
    kill -TERM "$gpid"
    wait "$gpid"
    rc=$?
}
# SIGTERM to the gate reaches the command's group; the gate exits 128+15 with a verdict.
gate_term "echo \$\$ >'$W/cmd.pid'; sleep 300"
[ "$rc" -eq 143 ] || fail "gate after SIGTERM exited $rc, expected 143: $(cat "$W/out")"
expect "interrupted by signal 15"
sleep 0.2
alive "$(cat "$W/cmd.pid")" && fail "SIGTERM to the gate left the command running"
[ "$(json "v['verdict']")" = fail ] || fail "no fail verdict after SIGTERM"
rm -f "$W/cmd.pid"
# a command that traps the signal, prints a passing summary and exits 0 is still no pass
gate_term "trap 'echo 3 passed, 0 failed; exit 0' TERM; echo \$\$ >'$W/cmd.pid'; sleep 300 & wait"
[ "$rc" -eq 143 ] || fail "gate after SIGTERM (trapped) exited $rc, expected 143: $(cat "$W/out")"
expect "interrupted by signal 15 (Terminated): the run did not end on its own"
[ "$(json "v['verdict'], v['exit_code'], v['counts']['passed']")" = "fail 0 3" ] ||
    fail "a trapped SIGTERM with a passing summary: $(json "v['verdict'], v['exit_code'], v['counts'], v['reasons']")"
rm -f "$W/cmd.pid"

# SIGKILL of the gate (no handler can run): the command dies with it. (Its private
# folder stays: nothing can remove it; a TMPDIR of its own keeps the count below.)
mkdir -p "$W/tmpkill"
(cd "$W/caller" && TMPDIR="$W/tmpkill" exec "$ORTQUAL" gate --quiet -- /bin/sh -c "echo \$\$ >'$W/cmd.pid'; exec sleep 300") >"$W/out" 2>&1 &
gpid=$!
for _ in $(seq 100); do [ -s "$W/cmd.pid" ] && break; sleep 0.1; done
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null
sleep 0.5
alive "$(cat "$W/cmd.pid")" && { fail "SIGKILL of the gate left the command running"; kill "$(cat "$W/cmd.pid")"; }

# ---- real pytest ----------------------------------------------------------------
if ! $PY -c 'import pytest' 2>/dev/null; then
    fail "python3-pytest is not installed (scripts/deps.sh installs it)"
else
    T=$W/tests
    cat >"$T/test_skips.py" <<'EOF'
import pytest
@pytest.mark.skip(reason="needs CUDA")
def test_a(): pass
@pytest.mark.skip(reason="needs CUDA")
def test_b(): pass
EOF
    cat >"$T/test_mixed.py" <<'EOF'
import pytest
def test_ok(): pass
@pytest.mark.skip(reason="needs bf16")
def test_bf16(): pass
EOF
    cat >"$T/test_ok.py" <<'EOF'
def test_ok(): pass
def test_ok2(): pass
EOF
    mkdir -p "$T/empty"
    PYT="$PY -m pytest -p no:cacheprovider -rs"
    gate 1 -- $PYT "$T/test_skips.py" && expect "zero tests passed"
    gate 1 --allow-skip 'needs CUDA' -- $PYT "$T/test_skips.py" && expect "zero tests passed"
    gate 1 -- $PYT "$T/empty" && expect "exit status 5: no tests collected"
    gate 1 -- $PYT -k nothing_matches "$T/test_ok.py" && expect "exit status 5"
    gate 1 -- $PYT "$T/test_mixed.py" && expect "skipped (no --allow-skip given): [1] " &&
        expect "test_mixed.py:3: needs bf16"
    gate 1 --allow-skip 'needs CUDA' -- $PYT "$T/test_mixed.py" && expect "skip not allowed by --allow-skip"
    gate 0 --allow-skip 'needs bf16$' -- $PYT "$T/test_mixed.py" && expect "pytest summary"
    gate 1 --allow-skip '.' -- $PY -m pytest -p no:cacheprovider "$T/test_mixed.py" &&
        expect "1 of 1 skips have no visible reason (for pytest add -rs so each skip prints one)"
    gate 0 -- $PYT "$T/test_ok.py" && expect "2 passed, 0 failed"
    cp "$T/test_ok.py" "$W/caller/test_rel.py" # a relative test path is named in a note
    gate 1 -- $PYT test_rel.py && expect "note: argument 'test_rel.py' names a path in the caller's directory"
    gate 1 -- $PY -c 'print("ran some tests")' && expect "no test summary found in the log"

    # sitecustomize.py in the caller's directory must not run in the gated command.
    cat >"$W/caller/sitecustomize.py" <<EOF
open("$W/marker", "w").write("injected")
EOF
    (cd "$W/caller" && PYTHONPATH=. "$ORTQUAL" gate --quiet -- $PYT "$T/test_ok.py") >"$W/out" 2>&1 ||
        fail "gated pytest with PYTHONPATH=. failed: $(cat "$W/out")"
    [ -e "$W/marker" ] && fail "sitecustomize.py from the caller's directory was executed"
    # the control: run directly from there, the same file does run (so the check can fail)
    (cd "$W/caller" && PYTHONPATH=. $PY -c 'pass')
    [ -e "$W/marker" ] || fail "control: sitecustomize.py did not run directly, the test proves nothing"
    rm -f "$W/marker" "$W/caller/sitecustomize.py"

    # a package in the caller's directory must not shadow the one on --pythonpath
    mkdir -p "$W/caller/shadowpkg" "$W/pylib/shadowpkg"
    echo 'WHERE = "caller"' >"$W/caller/shadowpkg/__init__.py"
    echo 'WHERE = "installed"' >"$W/pylib/shadowpkg/__init__.py"
    cat >"$T/test_shadow.py" <<'EOF'
import shadowpkg
def test_where(): assert shadowpkg.WHERE == "installed"
EOF
    gate 0 --pythonpath "$W/pylib" -- $PY -m pytest -p no:cacheprovider "$T/test_shadow.py"
    (cd "$W/caller" && PYTHONPATH="$W/pylib" $PY -m pytest -q -p no:cacheprovider "$T/test_shadow.py" >/dev/null 2>&1) &&
        fail "control: running from the caller's directory did not pick up the shadowing package"
fi

# ortqual's own conformance run, the shipped set: its 58 *_expanded tests are skipped, each with a
# "SKIP name: reason" line, so a gate that allows that reason passes it (it could never pass:
# "58 of 58 skips have no visible reason"); another reason allowed names the first skip
gate 0 --allow-skip 'not applicable' --verdict "$W/v.json" -- "$ORTQUAL" conformance &&
    [ "$(json 'v["verdict"], v["runner"]')" = "pass plain" ] || fail "gate of conformance: $(cat "$W/v.json")"
gate 1 --allow-skip 'needs CUDA' -- "$ORTQUAL" conformance &&
    expect "skip not allowed by --allow-skip: [1] test_"

# no gate folder is left behind (all runs but the --keep one cleaned up)
left=$(find "$TMPDIR" -maxdepth 1 -name 'ortqual-gate-*' | wc -l)
[ "$left" -eq 1 ] || fail "$left private folders left in $TMPDIR, expected 1 (the --keep run)"

if [ "$failures" -ne 0 ]; then
    echo "gate.sh: $failures failure(s)"
    exit 1
fi
echo "gate.sh: all passed"
