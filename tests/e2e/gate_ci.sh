#!/usr/bin/env bash
# `ortqual gate` in a CI job (QA sre, twenty-seventh session): each --allow-skip on its own,
# ortqual's own verdict line read, verdict files that agree with the exit status when stdout
# fails, and one gate at a time per --verdict/--junit file.
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
PY=/usr/bin/python3
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
cd "$T"
mkdir bin
# printer NAME CODE TEXT: a program that prints TEXT (with escapes) and exits CODE
printer() {
    printf '#!/bin/sh\nprintf %%b %q\nexit %s\n' "$3" "$2" >"bin/$1"
    chmod +x "bin/$1"
}
# field FILE EXPR: EXPR of the JSON document v in FILE
field() { $PY -c "import json,sys; v=json.load(open('$1')); print($2)"; }

# 1. two --allow-skip were joined as text into "(gpu)|(.*)|(bf16)": a stray parenthesis in one
#    made the whole match every skip (PASS, exit 0). Each is compiled alone (the bad one named,
#    exit 2) and matched alone.
printer flaky 0 'SKIPPED [1] t.py:3: flaky on prod hardware, hides a regression\n=== 1 passed, 1 skipped in 0.1s ===\n'
expect 2 "^ortqual gate: --allow-skip 'gpu\)\|\(\.\*': " $Q gate -q --allow-skip 'gpu)|(.*' --allow-skip bf16 -- "$T/bin/flaky"
expect 2 "^ortqual gate: --allow-skip 'gpu\)\|\(\.\*': " $Q gate -q --allow-skip bf16 --allow-skip 'gpu)|(.*' -- "$T/bin/flaky"
expect 1 "skip not allowed by --allow-skip: \[1\] t.py:3: flaky on prod hardware" \
    $Q gate -q --allow-skip bf16 --allow-skip 'gpu\)' -- "$T/bin/flaky"
expect 0 "PASS" $Q gate -q --allow-skip bf16 --allow-skip 'flaky on prod' --verdict v1.json -- "$T/bin/flaky"
[ "$(field v1.json "v['schema'], v['allow_skip']")" = "ortqual.gate/2 ['bf16', 'flaky on prod']" ] &&
    ok "verdict: allow_skip is the list of expressions" || bad "verdict allow_skip: $(field v1.json "v['schema'], v['allow_skip']")"
expect 1 "skipped \(no --allow-skip given\)" $Q gate -q --verdict v0.json -- "$T/bin/flaky"
[ "$(field v0.json "v['allow_skip']")" = "[]" ] && ok "verdict: no --allow-skip is []" ||
    bad "verdict allow_skip without one: $(field v0.json "v['allow_skip']")"

# 2. ortqual's own verdict line (validate, replay, merge) is a summary: its counts, and any word
#    but PASSED fails (the gate said "no test summary found in the log")
printer v_pass 0 'verdict: PASSED (2 passed, 0 failed, 0 skipped; reference ref:encoder:fp64); details in d/summary.json\n'
expect 0 "ortqual summary \(line 1\): 2 passed, 0 failed, 0 skipped, 0 errors" $Q gate -q -- "$T/bin/v_pass"
printer v_fail 1 'verdict: FAILED (1 passed, 1 failed, 0 skipped; reference ref:encoder:fp64); details in d/summary.json\n'
expect 1 "  - 1 failed" $Q gate -q -- "$T/bin/v_fail"
# not green whatever the exit status: validate --allow-skip exits 0 on NOT TESTED
printer v_untested 0 'verdict: NOT TESTED (0 passed, 0 failed, 1 skipped; reference expected); details in d/summary.json\n'
expect 1 "a failing run at line 1 \(ortqual: verdict: NOT TESTED" $Q gate -q --allow-skip . -- "$T/bin/v_untested"
printer v_error 0 'verdict: ERROR (1 passed, 0 failed, 0 skipped, 1 runtime error; reference ref:encoder:fp64); details in d/summary.json\n'
expect 1 "  - 1 errors" $Q gate -q -- "$T/bin/v_error"
# a FAILED verdict whose counts show no failure (a --require unmet) still fails
printer v_require 0 'verdict: FAILED (1 passed, 0 failed, 0 skipped); details in d/summary.json\n'
expect 1 "a failing run at line 1 \(ortqual: verdict: FAILED" $Q gate -q -- "$T/bin/v_require"
printer v_none 0 'verdict: PASSED (0 passed, 0 failed, 0 skipped); details in d/summary.json\n'
expect 1 "zero tests passed \(ortqual summary at line 1" $Q gate -q -- "$T/bin/v_none"
# the real thing: a replay against the saved outputs
expect 0 "ortqual summary \(line [0-9]+\): 1 passed, 0 failed, 0 skipped, 0 errors" \
    $Q gate -q -- "$Q" replay --model "$FX/tx_encoder_op18.onnx" --inputs "$FX/io.npz" --reference expected --outdir "$T/rp"

# 3. stdout on a full disk: the tool exits 3, and the verdict and JUnit say so (they said pass)
$Q gate --verdict v3.json --junit j3.xml -- /bin/echo '1 passed, 0 failed' >/dev/full 2>g3.err
rc=$?
[ $rc -eq 3 ] && ok "gate > /dev/full -> 3" || bad "gate > /dev/full -> $rc, expected 3: $(cat g3.err)"
[ "$(field v3.json "v['verdict']")" = error ] && grep -q "standard output: write failed: No space left on device" v3.json &&
    ok "verdict error, with the reason" || bad "verdict after a failed stdout: $(cat v3.json)"
grep -q '<error' j3.xml && ok "JUnit has the error" || bad "JUnit after a failed stdout: $(cat j3.xml)"
# -q writes nothing to stdout: a pass
$Q gate -q --verdict v3q.json -- /bin/echo '1 passed, 0 failed' >/dev/full 2>g3q.err
rc=$?
[ $rc -eq 0 ] && [ "$(field v3q.json "v['verdict']")" = pass ] && ok "-q to /dev/full: pass" ||
    bad "-q to /dev/full -> $rc: $(cat g3q.err v3q.json)"

# 4. two gates with one --verdict (or --junit) file: the second is refused, naming the file and
#    the holder; the first one's verdict stands (it was replaced by the other's, unsaid)
# the first holds its files until the checks below are done (a fixed sleep ran out under ASan on
# a loaded host before the second gate started)
touch "$T/hold"
$Q gate -q --timeout 120 --verdict v4.json --junit j4.xml -- /bin/sh -c \
    "while [ -e '$T/hold' ]; do sleep 0.05; done; echo '1 passed, 1 failed'" >g4.out 2>&1 &
A=$!
for _ in $(seq 600); do [ -e .ortqual.j4.xml.lock ] && break; sleep 0.05; done
expect 2 "^ortqual gate: --verdict v4.json: in use by another ortqual run \(pid $A, holding \./\.ortqual\.v4\.json\.lock\)" \
    $Q gate -q --verdict v4.json -- /bin/echo '5 passed, 0 failed'
expect 2 "^ortqual gate: --junit $T/j4.xml: in use by another ortqual run \(pid $A, " \
    $Q gate -q --junit "$T/j4.xml" -- /bin/echo '5 passed, 0 failed'
# the files hold the first gate's "did not finish" (written before its command started), not theirs
[ "$(field v4.json "v['verdict'], 'did not finish' in v['reasons'][0], v['command'][0]")" = "error True /bin/sh" ] &&
    grep -q 'did not finish' j4.xml && ok "the refused gates wrote nothing" || bad "a refused gate wrote v4.json or j4.xml"
rm -f "$T/hold"
wait $A
rc=$?
[ $rc -eq 1 ] && [ "$(field v4.json "v['verdict']")" = fail ] && ok "the first gate's verdict stands" ||
    bad "first gate -> $rc, verdict $(field v4.json "v['verdict']" 2>&1)"
[ -z "$(ls -A | grep '^\.ortqual\.')" ] && ok "no lock file left" || bad "lock files left: $(ls -A)"
expect 0 "PASS" $Q gate -q --verdict v4.json -- /bin/echo '5 passed, 0 failed'

report
