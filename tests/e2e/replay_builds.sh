#!/usr/bin/env bash
# replay and run options for ORT build maintainers: a default graph optimization level spelt out
# is still ORT compared with itself; saved outputs say who saved them; the reference of a
# cross-build replay has a name of its own; --ep-lib and --session-config are checked (a key,
# its value's domain and range, a key once), and entries that cannot change an output compare
# ORT with itself.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
need_ort130
V=(validate --export sdpa --configs ref:sdpa:fp64,cpu:decomposed:fp32 --num-events 2 --batch-size 2 --max-len 16
   --repeat 1 --warmup 0 --no-plots)

# outputs saved at ORT's default graph optimization level (all); replayed on the same build with
# --graph-opt-level 99 (all, spelt out) is the same session: refused like the default level
# (it PASSED with max|err| 0)
"$Q" "${V[@]}" --threads 0 --save-outputs --ort-lib "$OQ_ORT_LIB" --outdir v0 > v0.out 2>&1 || fail "validate --save-outputs: $(cat v0.out)"
R=(replay --model v0/sdpa_decomposed_fp32.onnx --inputs 'v0/inputs_*.npz' --expected 'v0/outputs_01_cpu_decomposed_fp32_*.npz'
   --ep cpu --repeat 1 --warmup 0)
for lvl in 99 -1; do
  "$Q" "${R[@]}" --ort-lib "$OQ_ORT_LIB" --graph-opt-level "$lvl" --outdir "g$lvl" > "g$lvl.out" 2>&1
  expect_rc=$?
  [ $expect_rc -eq 2 ] && grep -q "compared with its own outputs ORT is compared with itself" "g$lvl.out" && [ ! -e "g$lvl/summary.json" ] &&
    ok "--graph-opt-level $lvl against outputs saved at the default level: refused" ||
    bad "--graph-opt-level $lvl: exit $expect_rc: $(tail -2 "g$lvl.out")"
done
"$Q" "${R[@]}" --ort-lib "$OQ_ORT_LIB" --graph-opt-level 1 --outdir g1 > g1.out 2>&1
[ $? -le 1 ] && [ -e g1/summary.json ] && ok "--graph-opt-level 1: a comparison, runs" || bad "--graph-opt-level 1: $(tail -2 g1.out)"
# session config entries that cannot change an output (a log id, spinning, a log level) and the
# default level given as an entry (which ORT takes over --graph-opt-level) are the same session:
# refused (each PASSED with max|err| 0, no note); another level as an entry is a comparison
i=0
for opts in "--session-config session.log_id=x" "--session-config session.intra_op.allow_spinning=1" \
            "--session-config session.log_severity_level=0" "--session-config session.graph_optimization_level=enable_all" \
            "--graph-opt-level 0 --session-config session.graph_optimization_level=enable_all"; do
  i=$((i + 1))
  # shellcheck disable=SC2086 # the options and their values, split on purpose
  "$Q" "${R[@]}" --ort-lib "$OQ_ORT_LIB" $opts --outdir "n$i" > "n$i.out" 2>&1
  rc=$?
  [ $rc -eq 2 ] && grep -q "and the same session options as ORT runs them (.*ORT is compared with itself" "n$i.out" &&
    [ ! -e "n$i/summary.json" ] && ok "$opts against outputs saved without it: refused" ||
    bad "$opts against outputs saved without it: exit $rc: $(tail -2 "n$i.out")"
done
"$Q" "${R[@]}" --ort-lib "$OQ_ORT_LIB" --session-config session.graph_optimization_level=disable_all --outdir n0 > n0.out 2>&1
[ $? -le 1 ] && [ -e n0/summary.json ] && ok "session.graph_optimization_level=disable_all: a comparison, runs" ||
  bad "session.graph_optimization_level=disable_all: $(tail -2 n0.out)"

# the same outputs replayed on ORT 1.30: who saved them (1.29) is said on the console, in
# summary.json's expected configuration and in report.html, and the run folder's copy keeps it
"$Q" "${R[@]}" --ort-lib "$ORT130" --outdir x130 > x130.out 2>&1 || bad "replay on 1.30: $(tail -2 x130.out)"
grep -q "^    saved by ONNX Runtime 1.29.0 (.*) as cpu:decomposed:fp32 on cpu$" x130.out &&
  grep -q "^    note: saved by ONNX Runtime 1.29.0, replayed on 1.30.0 (.*): another build$" x130.out &&
  ok "console: saved by 1.29.0, replayed on 1.30.0" || bad "console: $(cat x130.out)"
$PY - x130/summary.json "$(readlink -f "$OQ_ORT_LIB")" <<'PY' && ok "summary.json: configs[0].saved_by" || bad "summary.json saved_by"
import json, sys, hashlib
s = json.load(open(sys.argv[1]))["configs"][0]["saved_by"]
sha = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
want = {"config": "cpu:decomposed:fp32", "provider": "cpu", "ort_version": "1.29.0", "ort_library": sys.argv[2],
        "ort_library_sha256": sha, "same_ort": False}
assert {k: s.get(k) for k in want} == want, s
assert s["file"].endswith("outputs_01_cpu_decomposed_fp32_000.npz"), s
PY
grep -q "Saved by ONNX Runtime 1.29.0 .*; replayed on ONNX Runtime 1.30.0 (.*): another build" x130/report.html &&
  ok "report.html: saved by, another build" || bad "report.html says nothing of who saved the outputs"
unzip -z x130/expected_000.npz 2>/dev/null | grep -q '^ortqual-outputs {"config":"cpu:decomposed:fp32".*"ort_version":"1.29.0"' &&
  ok "the run folder's expected_000.npz keeps the provenance" || bad "expected_000.npz: $(unzip -z x130/expected_000.npz 2>&1 | tail -2)"
"$Q" report x130 >/dev/null 2>&1 && grep -q "Saved by ONNX Runtime 1.29.0" x130/report.html &&
  ok "report.html drawn again from summary.json says it too" || bad "ortqual report lost saved_by"
# on 1.29 with other session options (a comparison): the same build is said
"$Q" "${R[@]}" --ort-lib "$OQ_ORT_LIB" --graph-opt-level 0 --outdir s129 > s129.out 2>&1
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["configs"][0]["saved_by"]["same_ort"] is True' s129/summary.json &&
  ! grep -q "another build" s129.out && ok "same build: same_ort true, no note" || bad "same build: $(cat s129.out)"

# replay ORT 1.30 against the CPU reference on 1.29: the two configurations have one name each in
# summary.json, validate.csv and the JUnit suites (both were cpu:model:fp32)
"$Q" replay --model v0/sdpa_decomposed_fp32.onnx --inputs 'v0/inputs_*.npz' --ep cpu --ort-lib "$ORT130" \
  --reference-ort-lib "$OQ_ORT_LIB" --repeat 1 --warmup 0 --outdir xv --junit xv.xml > xv.out 2>&1 || bad "cross-build replay: $(tail -2 xv.out)"
$PY - xv <<'PY' && ok "cross-build replay: cpu:model:fp32@reference and cpu:model:fp32" || bad "names: $(cut -d, -f1 xv/validate.csv | sort -u)"
import csv, json, sys, re
c = json.load(open(sys.argv[1] + "/summary.json"))["configs"]
assert [(x["name"], x["onnxruntime"]["version"]) for x in c] == [("cpu:model:fp32@reference", "1.29.0"), ("cpu:model:fp32", "1.30.0")], c
rows = list(csv.DictReader(open(sys.argv[1] + "/validate.csv")))
assert sorted({r["config"] for r in rows}) == ["cpu:model:fp32", "cpu:model:fp32@reference"], rows
suites = re.findall(r'<testsuite name="([^"]*)"', open(sys.argv[1] + ".xml").read())
assert sorted(suites) == ["cpu:model:fp32", "cpu:model:fp32@reference"], suites
PY

# --ep-lib for an EP no configuration runs: refused as --ep-option is (it was ignored, PASSED)
"$Q" "${V[@]}" --ep-lib "myep=$OQ_ORT_LIB" --outdir e1 > e1.out 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "^ortqual validate: --ep-lib 'myep': no configuration runs on myep" e1.out && [ ! -e e1/summary.json ] &&
  ok "--ep-lib for no configuration: exit 2" || bad "--ep-lib unused: exit $rc: $(cat e1.out)"

# --session-config: a misspelt key names the closest known one; a switch takes 0 or 1 (both PASSED)
"$Q" "${V[@]}" --session-config optimization.disable_specified_optimiser=GatherToSliceFusion --outdir c1 > c1.out 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "^ortqual validate: --session-config key 'optimization.disable_specified_optimiser': .*did you mean 'optimization.disable_specified_optimizers'?$" c1.out &&
  ok "misspelt session config key: exit 2, closest key named" || bad "misspelt key: exit $rc: $(cat c1.out)"
"$Q" "${R[@]}" --ort-lib "$ORT130" --session-config session.intra_op.allow_spinning=maybe --outdir c2 > c2.out 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q '^ortqual replay: --session-config session.intra_op.allow_spinning=maybe: the value of session.intra_op.allow_spinning is "0" or "1"$' c2.out &&
  ok "bad switch value: exit 2" || bad "allow_spinning=maybe: exit $rc: $(cat c2.out)"
"$Q" "${R[@]}" --ort-lib "$ORT130" --session-config optimization.disable_specified_optimizers=GatherToSliceFusion --outdir c3 > c3.out 2>&1 &&
  ok "a known key runs" || bad "known key refused: $(cat c3.out)"
# an integer's range is checked before anything is made: 99999999999999999999 threads failed every
# configuration at session creation (exit 3, the batches written) and -7 ran
for n in 99999999999999999999 -7; do
  kv=session.intra_op_num_threads=$n
  "$Q" "${V[@]}" --session-config "$kv" --outdir "c4$n" > "c4$n.out" 2>&1
  rc=$?
  [ $rc -eq 2 ] && [ ! -e "c4$n" ] &&
    grep -qx "ortqual validate: --session-config $kv: the value of session.intra_op_num_threads is a base-10 integer from 0 to 2147483647" "c4$n.out" &&
    ok "$kv: exit 2, nothing made" || bad "$kv: exit $rc: $(cat "c4$n.out")"
done
# a key given twice: ORT kept the last value without a word on the console (it PASSED)
"$Q" "${V[@]}" --session-config session.intra_op.allow_spinning=0 --session-config session.intra_op.allow_spinning=1 \
  --outdir c5 > c5.out 2>&1
rc=$?
[ $rc -eq 2 ] && [ ! -e c5 ] &&
  grep -qx "ortqual validate: --session-config session.intra_op.allow_spinning given twice (=0, then =1): ORT would keep the last without a word; give each key once" c5.out &&
  ok "a session config key twice: exit 2, both values named" || bad "a key twice: exit $rc: $(cat c5.out)"
report
