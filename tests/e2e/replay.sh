#!/usr/bin/env bash
# ortqual replay: saved batches replayed across ORT 1.29 and 1.30 on CPU; non-finite results rejected.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
need_ort130

$ORTQUAL validate --outdir "$T/v" --num-events 4 --repeat 1 --configs ref:encoder:fp64,cpu:attention24:fp32 >/dev/null 2>&1 ||
  fail "validate to make inputs"
$ORTQUAL replay --model "$T/v/encoder_attention24_fp32.onnx" --inputs "$T/v/inputs_*.npz" --ep cpu \
  --ort-lib "$ORT130" --reference-ort-lib "$OQ_ORT_LIB" --repeat 2 --outdir "$T/r" --junit "$T/r.xml" > "$T/r.out" 2>&1 ||
  fail "replay exited $?: $(cat "$T/r.out")"
$PY - "$T/r/summary.json" <<'PY' || fail "replay summary"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["configs"]
assert d["verdict"] == "passed", d["verdict"]
# the CPU reference ran and judged nothing: "reference", never counted as a pass
assert [x["status"] for x in c] == ["reference", "passed"], [x["status"] for x in c]
assert [x["onnxruntime"]["version"] for x in c] == ["1.29.0", "1.30.0"], [x.get("onnxruntime") for x in c]
assert len(c[1]["batches"]) == 2 and all(b["median_s"] > 0 for b in c[1]["batches"])
eps = c[1]["placement"]["eps"]
assert eps[0]["ep"] == "CPUExecutionProvider" and eps[0]["nodes"] > 10, eps
# ORT's profile comes from a session of its own over the first batch's calls (first, 1 warm-up,
# 2 repeats), not from the timed one: it was every call of every batch (2 batches: 8 runs per
# node), the profiler slowing each and holding its events in memory (~1 MB per batch)
assert eps[0]["runs"] == eps[0]["nodes"] * 4, eps
assert all(b["calls"] == 4 for b in c[1]["batches"]), c[1]["batches"]
PY
grep -q "profile: CPUExecutionProvider" "$T/r.out" || fail "no profile summary printed"
# the placement a replay records (every node on CPU here) is evidence, not a check: a passing run's
# JUnit has no failing case (it had a failing 'placement' case per configuration) and its page no
# failed check
grep -q '<testsuites name="ortqual replay" tests="[0-9]*" failures="0" errors="0"' "$T/r.xml" && ! grep -q "<failure" "$T/r.xml" ||
  fail "a passing replay's JUnit fails: $(grep -m3 -o '<failure type="[a-z]*"\|<testsuites [^>]*>' "$T/r.xml")"
$PY -c 'import json,sys; c=json.load(open(sys.argv[1]))["configs"]; assert [x["placement"]["required"] for x in c] == [False] * 2, c' \
  "$T/r/summary.json" || fail "placement not marked evidence only"
grep -q "full-GPU check: not judged here" "$T/r/report.html" && ! grep -q "check failed" "$T/r/report.html" ||
  fail "report.html judges the placement of a replay that did not ask for it"

# --ep cpu against ORT CPU of the same build compares ORT with itself: it passes and proves
# nothing (it was PASSED, with a note on stderr). Refused, exit 2, nothing made, whatever names
# the one library: no --reference-ort-lib, the same file by another path (a link), a copy of it;
# --precision fp16 changes only the tolerance on cpu, so it is refused too
SELF="^ortqual replay: --ep cpu judged against ORT CPU of the same build compares ORT with itself"
ln -s "$OQ_ORT_LIB" "$T/link.so"
cp "$OQ_ORT_LIB" "$T/copy.so"
n=0
for extra in "" "--precision fp16" "--ort-lib $ORT130" "--ort-lib $ORT130 --reference-ort-lib $ORT130" \
  "--reference-ort-lib $T/link.so" "--reference-ort-lib $T/copy.so" "--ort-lib $T/copy.so --reference-ort-lib $T/link.so"; do
  n=$((n + 1))
  set +e
  # shellcheck disable=SC2086 # the options are words
  $ORTQUAL replay --model "$T/v/encoder_attention24_fp32.onnx" --inputs "$T/v/inputs_000.npz" $extra \
    --outdir "$T/self$n" > "$T/self$n.out" 2>&1
  rc=$?
  set -e
  [ $rc -eq 2 ] && [ ! -e "$T/self$n" ] && [ "$(wc -l < "$T/self$n.out")" -eq 1 ] && grep -q "$SELF" "$T/self$n.out" ||
    fail "replay $extra against itself: exit $rc: $(cat "$T/self$n.out")"
done
grep -q "(--reference-ort-lib $T/link.so is the library the replay loads, $(realpath "$OQ_ORT_LIB")): it passes" \
  "$T/self5.out" || fail "the library's real file not named: $(cat "$T/self5.out")"
grep -q "(--reference-ort-lib $T/copy.so is a copy of the library the replay loads, $(realpath "$OQ_ORT_LIB")): it" \
  "$T/self6.out" || fail "the copy not named: $(cat "$T/self6.out")"
# the refusal says what makes it a comparison
grep -q -- "--expected.*--reference-ort-lib.*--ep cuda" "$T/self1.out" || fail "no way out said: $(cat "$T/self1.out")"
# without --reference-ort-lib the reference runs on --ort-lib too (a tool moved away from its
# build tree still has a reference): the replay on another provider (CUDA, which ORT 1.30's npm
# core lists but cannot load: skipped here) has its reference on 1.30
$ORTQUAL replay --model "$T/v/encoder_attention24_fp32.onnx" --inputs "$T/v/inputs_000.npz" --ep cuda --allow-skip \
  --ort-lib "$ORT130" --repeat 1 --outdir "$T/r2" > "$T/r2.out" 2>&1 || fail "replay on 1.30: $(cat "$T/r2.out")"
$PY -c 'import json,sys; c=json.load(open(sys.argv[1]))["configs"]; assert c[0]["onnxruntime"]["version"] == "1.30.0", c' \
  "$T/r2/summary.json" || fail "the reference did not use --ort-lib"

# a reference library that is not there is a usage error (exit 2), one there that does not load a
# runtime error (exit 3), both before any work
set +e
$ORTQUAL replay --model "$T/v/encoder_attention24_fp32.onnx" --inputs "$T/v/inputs_000.npz" --ep cpu \
  --ort-lib "$ORT130" --reference-ort-lib "$T/none/libonnxruntime.so" --outdir "$T/r3" > "$T/r3.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && [ ! -e "$T/r3" ] && grep -q -- "--reference-ort-lib $T/none/libonnxruntime.so: cannot open" "$T/r3.out" ||
  fail "missing reference library: exit $rc: $(cat "$T/r3.out")"
set +e
$ORTQUAL replay --model "$T/v/encoder_attention24_fp32.onnx" --inputs "$T/v/inputs_000.npz" --ep cpu \
  --ort-lib "$ORT130" --reference-ort-lib "$T/v/summary.json" --outdir "$T/r3" > "$T/r3.out" 2>&1
rc=$?
set -e
[ $rc -eq 3 ] && [ "$(ls -A "$T/r3")" = error.json ] &&
  grep -q -- "--reference-ort-lib: cannot load ONNX Runtime" "$T/r3.out" ||
  fail "unloadable reference: exit $rc, left $(ls -A "$T/r3" | tr '\n' ' '): $(cat "$T/r3.out")"

# --reference-ort-lib beside the saved outputs as the reference would be ignored (no ORT
# reference runs): refused before any work
set +e
$ORTQUAL replay --model "$T/v/encoder_attention24_fp32.onnx" --inputs "$T/v/inputs_000.npz" --expected "$T/v/inputs_000.npz" \
  --reference-ort-lib "$ORT130" --outdir "$T/r4" > "$T/r4.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && [ ! -e "$T/r4" ] && grep -q -- "--reference-ort-lib: the reference is the saved outputs" "$T/r4.out" ||
  fail "--reference-ort-lib with --expected: exit $rc: $(cat "$T/r4.out")"

# inputs (finite) that overflow float32 inside the model: non-finite outputs are rejected (exit 1)
$PY - "$T/v/inputs_000.npz" "$T/huge.npz" <<'PY'
import sys, numpy as np
# 1e38 and clipped to float32's range: ORT 1.31's CPU kernels keep 1e37 finite (1.29's do not)
f = np.clip(np.load(sys.argv[1])["features"].astype(np.float64) * 1e38, -3.4e38, 3.4e38)
z = dict(np.load(sys.argv[1])); z["features"] = f.astype(np.float32); np.savez(sys.argv[2], **z)
PY
set +e
$ORTQUAL replay --model "$T/v/encoder_attention24_fp32.onnx" --inputs "$T/huge.npz" --ort-lib "$ORT130" \
  --reference-ort-lib "$OQ_ORT_LIB" --outdir "$T/h" > "$T/h.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "non-finite replay: exit $rc, expected 1: $(cat "$T/h.out")"
grep -Eqi "nan|inf" "$T/h.out" || fail "non-finite not named: $(cat "$T/h.out")"
# the table's max|err| says non-finite, not the largest finite difference (0 here: every
# reference value is NaN, and the failed row showed max|err| 0)
$PY - "$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder/io.npz" "$T/nanref.npz" <<'PY'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["out"][:] = np.nan; np.savez(sys.argv[2], **z)
PY
set +e
$ORTQUAL replay --model "$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder/tx_encoder_op18.onnx" --inputs "$T/nanref.npz" \
  --expected "$T/nanref.npz" --outdir "$T/nr" > "$T/nr.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] && grep -Eq "^cpu:model:fp32 +failed +1 out +nan " "$T/nr.out" ||
  fail "NaN reference: exit $rc, row: $(grep -A1 '^configuration' "$T/nr.out")"
# ... and summary.json and validate.csv say the same (summary.json said max_abs 0.0, and mean_abs,
# rms and rel_l2 0.0 over no finite pair): one place decides the numbers shown
$PY - "$T/nr" <<'PY' || fail "NaN reference: summary.json and validate.csv disagree with the table"
import csv, json, sys
d = json.load(open(sys.argv[1] + "/summary.json"))
c = d["configs"][1]
for o in c["outputs"] + c["batches"][0]["outputs"]:
    for k in ("max_abs", "max_rel", "mean_abs", "rms", "rel_l2"):
        assert o[k] == "nan", (o["name"], k, o[k])
rows = list(csv.reader(open(sys.argv[1] + "/validate.csv")))
col = rows[0].index("max_abs_err")
assert [r[col] for r in rows[1:] if r[0] == "cpu:model:fp32"] == ["nan"], rows
PY

# outputs ortqual saved (--save-outputs) from ORT CPU of this build, replayed on ORT CPU of this
# build: ORT compared with itself passed (max|err| 0), as --reference cpu would, which is refused;
# the saved files now say who made them (the archive's comment) and this is refused too
M="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like"
$ORTQUAL validate --model "$M/mlpf_like_op18.onnx" --inputs "$M/inputs_000.npz" "$M/inputs_001.npz" \
  --expected "$M/outputs_000.npz" "$M/outputs_001.npz" --save-outputs --repeat 1 --no-plots --outdir "$T/so1" > "$T/so1.out" 2>&1 ||
  fail "validate --save-outputs: $(cat "$T/so1.out")"
mkdir "$T/so" && cp "$T"/so1/outputs_01_* "$T/so/"
set +e
$ORTQUAL replay --model "$M/mlpf_like_op18.onnx" --inputs "$M/inputs_000.npz" "$M/inputs_001.npz" \
  --expected "$T"/so/outputs_01_cpu_model_fp32_*.npz --outdir "$T/so2" > "$T/so2.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "outputs_01_cpu_model_fp32_000.npz: saved by 'cpu:model:fp32' (validate --save-outputs) running this --model on cpu with ORT 1.29" "$T/so2.out" &&
  [ ! -e "$T/so2/summary.json" ] || fail "replay against its own saved outputs: exit $rc: $(cat "$T/so2.out")"
# ... but other session options than those they were saved with (recorded in the comment) are a
# comparison (usage.md's table; they were refused): telling a fusion's error from the model's
# (an entry that cannot change an output, such as spinning, is not: replay_builds.sh)
i=0
for opt in "--graph-opt-level 0" "--session-config session.set_denormal_as_zero=1"; do
  i=$((i + 1))
  set +e
  # shellcheck disable=SC2086 # the option and its value, split on purpose
  $ORTQUAL replay --model "$M/mlpf_like_op18.onnx" --inputs "$M/inputs_000.npz" "$M/inputs_001.npz" \
    --expected "$T"/so/outputs_01_cpu_model_fp32_*.npz $opt --outdir "$T/sopt$i" > "$T/sopt$i.out" 2>&1; rc=$?
  set -e
  { [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && [ -e "$T/sopt$i/summary.json" ] ||
    fail "replay $opt against outputs saved without it: exit $rc: $(cat "$T/sopt$i.out")"
done
set +e
$ORTQUAL validate --model "$M/mlpf_like_op18.onnx" --inputs "$M/inputs_000.npz" "$M/inputs_001.npz" \
  --expected "$T"/so/outputs_01_cpu_model_fp32_*.npz --threads 1 --repeat 1 --no-plots --outdir "$T/sopt3" > "$T/sopt3.out" 2>&1; rc=$?
set -e
{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && [ -e "$T/sopt3/summary.json" ] ||
  fail "validate --threads 1 against outputs saved with the default threads: exit $rc: $(cat "$T/sopt3.out")"
$PY -c 'import sys, numpy as np; assert sorted(np.load(sys.argv[1]).keys()) == ["cls", "reg"]' "$T/so/outputs_01_cpu_model_fp32_000.npz" ||
  fail "numpy cannot read the saved outputs with their provenance"
# the build is told by its bytes, not its path: outputs saved by a byte-identical copy of this
# ORT library elsewhere, gone since (another host's, a module's), replayed on this one are ORT
# compared with itself, refused the same way (they were compared and PASSED: the path differed
# and no file was left there to compare bytes with)
mkdir "$T/ortcopy" && cp "$(readlink -f "$OQ_ORT_LIB")" "$T/ortcopy/libonnxruntime.so.1"
$ORTQUAL validate --model "$M/mlpf_like_op18.onnx" --inputs "$M/inputs_000.npz" --expected "$M/outputs_000.npz" \
  --save-outputs --repeat 1 --no-plots --ort-lib "$T/ortcopy/libonnxruntime.so.1" --outdir "$T/sc1" > "$T/sc1.out" 2>&1 ||
  fail "validate --save-outputs on a copy of ORT: $(cat "$T/sc1.out")"
rm -r "$T/ortcopy"
set +e
$ORTQUAL replay --model "$M/mlpf_like_op18.onnx" --inputs "$M/inputs_000.npz" \
  --expected "$T"/sc1/outputs_01_cpu_model_fp32_000.npz --outdir "$T/sc2" > "$T/sc2.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "outputs_01_cpu_model_fp32_000.npz: saved by 'cpu:model:fp32' (validate --save-outputs) running this --model on cpu with ORT 1.29" "$T/sc2.out" &&
  [ ! -e "$T/sc2/summary.json" ] || fail "replay against outputs saved by a copy of its ORT: exit $rc: $(cat "$T/sc2.out")"
# another build judged against them is a comparison: it runs
$ORTQUAL replay --model "$M/mlpf_like_op18.onnx" --inputs "$M/inputs_000.npz" "$M/inputs_001.npz" --ort-lib "$ORT130" \
  --expected "$T"/so/outputs_01_cpu_model_fp32_*.npz --outdir "$T/so3" > "$T/so3.out" 2>&1 ||
  fail "replay on ORT 1.30 against 1.29's saved outputs: $(cat "$T/so3.out")"

# a model converted with --flash computes attention in float16: validate judges it with fp16
# tolerances by default; replay used fp32 ones and FAILED the same model and outputs, saying nothing
$ORTQUAL convert "$M/mlpf_like_op18.onnx" -o "$T/flash.onnx" --flash --inputs "$M/inputs_*.npz" \
  --expected "$M/outputs_*.npz" > "$T/cv.out" 2>&1 || fail "convert --flash: $(cat "$T/cv.out")"
$ORTQUAL replay --model "$T/flash.onnx" --inputs "$M/inputs_*.npz" --expected "$M/outputs_*.npz" --repeat 1 \
  --outdir "$T/fl" > "$T/fl.out" 2>&1 || fail "replay of a --flash model: $(cat "$T/fl.out")"
grep -q "ortqual replay: --precision fp16 (the default here, as validate's: Attention '.*' computes in float16)" "$T/fl.out" ||
  fail "replay does not say why it judges fp16: $(cat "$T/fl.out")"
set +e
$ORTQUAL replay --model "$T/flash.onnx" --inputs "$M/inputs_*.npz" --expected "$M/outputs_*.npz" --repeat 1 \
  --precision fp32 --outdir "$T/fl32" > "$T/fl32.out" 2>&1; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "note: Attention '.*' computes in float16; --precision fp32 judges it with fp32 tolerances" "$T/fl32.out" ||
  fail "--precision fp32 on a float16 model: exit $rc, no hint: $(cat "$T/fl32.out")"

# Equal infinities of the same sign are equal (error 0, counted in inf_matched), in replay and
# validate as in bench --model: an Attention's qk_matmul_output is -inf wherever its additive
# mask is; replay --reference expected FAILED it ("got -inf expected -inf |d|=nan"). +inf
# against -inf still fails.
QK="$OQ_SOURCE_DIR/tests/fixtures/onnx/attention_qk_neginf"
$ORTQUAL replay --model "$QK.onnx" --inputs "$QK.npz" --reference expected --repeat 1 --outdir "$T/qk" \
  > "$T/qk.out" 2>&1 || fail "replay of equal -inf: exit $?: $(tail -2 "$T/qk.out")"
$ORTQUAL validate --model "$QK.onnx" --inputs "$QK.npz" --configs expected,cpu:model:fp32 --repeat 1 --no-plots \
  --outdir "$T/qkv" > "$T/qkv.out" 2>&1 || fail "validate of equal -inf: exit $?: $(tail -2 "$T/qkv.out")"
for d in qk qkv; do
  $PY - "$T/$d/summary.json" <<'PY' || fail "$d: equal -inf not matched"
import json, sys
o = {x["output"]: x for x in json.load(open(sys.argv[1]))["configs"][1]["outputs"]}
assert o["qk"]["passed"] and o["qk"]["inf_matched"] == 3 and o["qk"]["inf"] == 0, o["qk"]
assert o["Y"]["inf_matched"] == 0, o["Y"]
PY
done
# validate.csv tells the batches apart as summary.json does, in a column added last: the user's
# batches judged against their saved outputs, the user's batches against ORT CPU, generated ones
$PY - "$T/qk/validate.csv" "$T/qkv/validate.csv" "$T/r/validate.csv" "$T/v/validate.csv" <<'PY' || fail "validate.csv's source"
import csv, sys
want = ["saved-outputs", "saved-outputs", "inputs", "generated"]
for path, w in zip(sys.argv[1:], want):
    head = open(path).readline().strip().split(",")
    assert head[-1] == "source" and head[:7] == ["config", "output", "batch", "valid_size", "seconds_first",
                                                 "seconds_median", "max_abs_err"], (path, head)
    rows = list(csv.DictReader(open(path)))
    assert rows and {r["source"] for r in rows} == {w}, (path, [r["source"] for r in rows])
PY
$PY - "$QK.npz" "$T/qkpos.npz" <<'PY' || fail "cannot write the +inf variant"
import numpy as np, sys
z = dict(np.load(sys.argv[1]))
qk = z["qk"].reshape(-1)
qk[np.flatnonzero(np.isneginf(qk))[0]] = np.inf
np.savez(sys.argv[2], **z)
PY
set +e
$ORTQUAL replay --model "$QK.onnx" --inputs "$T/qkpos.npz" --reference expected --repeat 1 --outdir "$T/qkpos" \
  > "$T/qkpos.out" 2>&1; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "output qk: FAIL .* inf=1 REFERENCE nan=0 inf=1 " "$T/qkpos.out" ||
  fail "+inf against -inf: exit $rc: $(tail -2 "$T/qkpos.out")"

set +e
$ORTQUAL replay --inputs "$T/huge.npz" > "$T/u.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--model and --inputs are required" "$T/u.out" || fail "usage: exit $rc"
echo "replay e2e: all checks passed"
