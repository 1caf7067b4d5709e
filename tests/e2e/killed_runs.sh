#!/usr/bin/env bash
# A run killed at any moment never leaves an earlier run's green result in place (QA 9b D3, D4,
# D5). SIGKILL (a CI job's hard time limit, the OOM killer) cannot be caught, so the rule holds by
# construction: at a run's start, before its work, each result file it will write that an earlier
# run left is removed or replaced atomically by "the run did not finish" (docs/verdicts.md).
# Before, a killed gate left the previous gate's "pass" in --verdict and --junit, a killed
# validate --force its earlier green --junit outside the output folder, and bench --force stopped
# by SIGTERM mid-sweep the earlier PASSED summary.json/csv/html and JUnit, saying nothing.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

# field FILE EXPR: EXPR of the JSON document v in FILE
field() { $PY -c "import json,sys; v=json.load(open('$1')); print($2)" 2>&1; }
# junit FILE: "tests failures errors type" of a JUnit file's suites and its first error's type
junit() {
    $PY - "$1" <<'EOF' 2>&1
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
e = r.find('.//error')
print(r.get('tests'), r.get('failures'), r.get('errors'), e.get('type') if e is not None else '-',
      'did-not-finish' if e is not None and 'the run did not finish' in e.get('message', '') else '')
EOF
}
# wait_for PATTERN FILE PID: until FILE holds PATTERN (grep -E) or PID ended; 0 when it holds it
wait_for() {
    for _ in $(seq 600); do
        grep -qE -- "$1" "$2" 2>/dev/null && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# 1. gate: the previous gate passed; this one, on a suite that would fail, is killed while CMD runs
$Q gate -q --verdict v.json --junit j.xml -- bash -c 'echo "1 passed, 0 failed"' >g1.log 2>&1 ||
    fail "gate run 1: $(tail -3 g1.log)"
[ "$(field v.json "v['verdict']")" = pass ] || fail "gate run 1 did not pass: $(cat v.json)"
$Q gate -q --verdict v.json --junit j.xml -- bash -c "touch '$T/started'; exec sleep 30" >g2.log 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e started ] && break; sleep 0.02; done
[ -e started ] || fail "gate run 2: CMD never started: $(tail -3 g2.log)"
# while it runs, the files say so already (what a reader sees now is no pass either)
during=$(field v.json "v['verdict']")
kill -KILL $pid
wait $pid
rc=$?
[ $rc = 137 ] || bad "gate run 2: exit $rc, expected 137 (SIGKILL)"
[ "$during" = error ] && ok "gate: while CMD runs, --verdict says error" || bad "gate: while CMD runs, --verdict says $during"
[ "$(field v.json "v['verdict'], 'the run did not finish' in v['reasons'][0], v['command'][2][:5]")" = "error True touch" ] &&
    ok "gate killed: --verdict says error, the run did not finish (this run's command)" ||
    bad "gate killed: --verdict is $(cat v.json)"
[ "$(junit j.xml)" = "1 0 1 gate did-not-finish" ] && ok "gate killed: --junit one error case, did not finish" ||
    bad "gate killed: --junit is $(junit j.xml)"
# a gate that ends writes its verdict over it; one refused after the files were checked writes its refusal
$Q gate -q --verdict v.json --junit j.xml -- bash -c 'echo "0 passed, 2 failed"; exit 1' >g3.log 2>&1
[ "$(field v.json "v['verdict']")" = fail ] && [ "$(junit j.xml)" = "1 1 0 - " ] && ok "gate that ends: its own verdict" ||
    bad "gate that ends: $(cat v.json) / $(junit j.xml)"
$Q gate -q --verdict v.json --junit j.xml -- bash -c 'echo "1 passed, 0 failed"' >g4.log 2>&1 || fail "gate run 4: $(tail -3 g4.log)"
expect 2 "^ortqual gate: .*nonexistent" $Q gate -q --pin-lib "$T/nonexistent.so" --verdict v.json --junit j.xml -- true
[ "$(field v.json "v['verdict'], 'nonexistent' in v['reasons'][0]")" = "error True" ] && [ "$(junit j.xml)" = "1 0 1 gate " ] &&
    ok "gate refused after its files were checked: both say error with its reason, not the earlier pass" ||
    bad "gate refused: $(cat v.json) / $(junit j.xml)"

# 2. validate --junit FILE outside --outdir: run 1 green; run 2 --force killed once it has begun
$Q validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 6 --outdir run --no-cache --progress never \
    --junit junit.xml >v1.log 2>&1 || fail "validate run 1: $(tail -3 v1.log)"
[ "$(junit junit.xml)" = "2 0 0 - " ] || fail "validate run 1's JUnit: $(junit junit.xml)"
$Q validate --configs ref:encoder:fp64,cpu:decomposed:fp32 --num-events 600 --outdir run --force --no-cache \
    --progress never --junit junit.xml >v2.log 2>&1 &
pid=$!
# killed once its checks passed and it removed the earlier summary.json (during its checks that
# stays, the earlier result as it was: docs/usage.md), long after the JUnit's mark
for _ in $(seq 600); do [ -e run/summary.json ] || break; sleep 0.02; done
kill -KILL $pid
wait $pid
rc=$?
[ $rc = 137 ] || bad "validate run 2: exit $rc, expected 137 (it ended before the kill: $(tail -2 v2.log))"
[ "$(junit junit.xml)" = "1 0 1 unfinished did-not-finish" ] &&
    ok "validate --force killed: --junit outside the folder says the run did not finish" ||
    bad "validate --force killed: --junit is $(junit junit.xml)"
# the next run writes its own over it
$Q validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 3 --outdir run --force --no-cache \
    --progress never --junit junit.xml >v3.log 2>&1 || bad "validate run 3: $(tail -3 v3.log)"
[ "$(junit junit.xml)" = "1 0 0 - " ] && ok "validate that ends: its own JUnit" || bad "validate run 3's JUnit: $(junit junit.xml)"
# the prepare step of a split writes no JUnit: none is marked
rm -f prep.xml
$Q validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 6 --outdir split --prepare-shards 2 --no-cache \
    --progress never --junit prep.xml >p.log 2>&1 || bad "prepare-shards: $(tail -3 p.log)"
[ ! -e prep.xml ] && ok "--prepare-shards: no JUnit left saying 'did not finish'" || bad "--prepare-shards left prep.xml"

# 3. bench --force into an earlier run's folder, stopped by a signal mid-sweep (row 1 of 2 done)
$Q export encoder -o m.onnx >x.log 2>&1 || fail "export: $(tail -3 x.log)"
bench_again() { # SIG: run 1 green, then a --force run stopped by SIG after its first row
    rm -rf b b.xml
    $Q bench --model m.onnx --dim batch=1 --dim seq=8 --iters 5 --outdir b --junit b.xml -q >b1.log 2>&1 ||
        fail "bench run 1: $(tail -3 b1.log)"
    [ -e b/summary.json ] && [ "$(junit b.xml)" = "1 0 0 - " ] || fail "bench run 1: $(ls b) $(junit b.xml)"
    $Q bench --model m.onnx --dim batch=2 --sweep seq=8,512 --iters 2000 --outdir b --force --junit b.xml \
        >b2.log 2>&1 &
    pid=$!
    wait_for '^\[1/2\]' b2.log $pid || fail "bench run 2: no first row: $(tail -3 b2.log)"
    kill -"$1" $pid
    wait $pid
}
bench_again TERM
rc=$?
[ $rc = 143 ] || bad "bench --force SIGTERM: exit $rc, expected 143"
left=$(ls b 2>/dev/null | tr '\n' ' ')
[ -z "$left" ] && ok "bench --force SIGTERM: no earlier summary.json, summary.csv, report.html" ||
    bad "bench --force SIGTERM: b holds $left"
[ "$(junit b.xml)" = "1 0 1 unfinished did-not-finish" ] && ok "bench --force SIGTERM: --junit says the run did not finish" ||
    bad "bench --force SIGTERM: --junit is $(junit b.xml)"
said=$(grep -v '^\[' b2.log)
[ "$(grep -c . <<<"$said")" = 1 ] && grep -q "^ortqual bench: stopped by SIGTERM before its results were written: the earlier \
run's summary.json, summary.csv, report.html in b went when it started (--force); --junit b.xml says the run did not finish$" <<<"$said" &&
    ok "bench --force SIGTERM: one line says what went" || bad "bench --force SIGTERM said: $said"
bench_again KILL
rc=$?
[ $rc = 137 ] && [ -z "$(ls b 2>/dev/null)" ] && [ "$(junit b.xml)" = "1 0 1 unfinished did-not-finish" ] &&
    ok "bench --force SIGKILL: nothing of the earlier run, --junit did not finish" ||
    bad "bench --force SIGKILL: exit $rc, b holds $(ls b 2>/dev/null | tr '\n' ' '), --junit $(junit b.xml)"
# without --force, into a new folder: the line says nothing of it is there
rm -rf nb
$Q bench --model m.onnx --dim batch=2 --sweep seq=8,512 --iters 2000 --outdir nb >nb.log 2>&1 &
pid=$!
wait_for '^\[1/2\]' nb.log $pid || fail "bench new folder: no first row: $(tail -3 nb.log)"
kill -HUP $pid
wait $pid
rc=$?
said=$(grep -v '^\[' nb.log)
[ $rc = 129 ] && [ "$said" = "ortqual bench: stopped by SIGHUP before its results were written: none are in nb" ] &&
    ok "bench SIGHUP in a new folder: exit 129, one line" || bad "bench SIGHUP in a new folder: exit $rc, said: $said"

report
