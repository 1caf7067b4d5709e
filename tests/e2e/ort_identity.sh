#!/usr/bin/env bash
# Which ONNX Runtime library really ran, as the evidence says it (an ORT build maintainer's
# report, 2026-12-06): the loaded library is listed under "ort" when --ort-lib is relative
# (./NAME, or a bare name found through LD_LIBRARY_PATH=.) or a file of any name; its SHA-256 is in doctor's,
# validate's and bench's records (a library rebuilt at the same path is another build); a
# second ORT core mapped in the process (LD_PRELOAD) is warned about, and LD_PRELOAD and
# LD_LIBRARY_PATH are recorded.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
REAL=$(readlink -f "$OQ_ORT_LIB")
SHA=$(sha256sum "$REAL" | cut -c1-64)
mkdir -p "$T/sub"
cp "$REAL" "$T/sub/libonnxruntime.so"
cp "$REAL" "$T/renamed_core.bin" # another file of the same bytes: a second core when both are mapped
# an ASan build refuses a process whose first library is not its runtime (LD_PRELOAD below)
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0"

# doctor_json FILE PYTHON-ASSERTS CMD...: CMD (a doctor --json) exits 0; its document as d holds
doctor_json() {
    local out=$1 check=$2
    shift 2
    "$@" >"$out" 2>"$out.err" || fail "$* -> exit $?: $(head -c 300 "$out.err")"
    $PY - "$out" "$T" "$REAL" "$SHA" <<PY || fail "$*: $(head -c 600 "$out")"
import json, sys
d, T, REAL, SHA = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
$check
PY
}

# 1. A relative --ort-lib and a bare name found in LD_LIBRARY_PATH's current folder (loaded as
#    ./NAME): glibc keeps the relative name,
#    and the library was left out of "Loaded libraries" ("ort (0)" with an ORT loaded).
doctor_json "$T/rel.json" '
assert d["ort"]["lib_path"] == T + "/sub/libonnxruntime.so", d["ort"]
assert d["libraries"]["ort"] == [T + "/sub/libonnxruntime.so"], d["libraries"]
assert d["ort_cores"] == [T + "/sub/libonnxruntime.so"] and d["warnings"] == [], d' \
    $Q doctor --json --ort-lib sub/libonnxruntime.so
(cd sub && doctor_json "$T/bare.json" '
assert d["libraries"]["ort"] == [T + "/sub/libonnxruntime.so"], d["libraries"]' \
    env LD_LIBRARY_PATH=. $Q doctor --json --ort-lib libonnxruntime.so)
must 0 "^  ort \(1\)$" "$T/rel.txt" $Q doctor --ort-lib sub/libonnxruntime.so
grep -qx "    $T/sub/libonnxruntime.so" "$T/rel.txt" || fail "doctor text: the relative library not listed: $(grep -A3 '^Loaded' "$T/rel.txt")"

# 2. A core of any file name is "ort" (it defines OrtGetApiBase), never "other".
doctor_json "$T/ren.json" '
assert d["libraries"]["ort"] == [T + "/renamed_core.bin"], d["libraries"]
assert not [p for p in d["libraries"]["other"] if "renamed" in p], d["libraries"]["other"]' \
    $Q doctor --json --ort-lib "$T/renamed_core.bin"

# 3. The library's SHA-256 in doctor's record, text and JSON.
doctor_json "$T/sha.json" '
assert d["ort"]["library_sha256"] == SHA, d["ort"]
assert d["loader_env"] == {"LD_PRELOAD": None, "LD_LIBRARY_PATH": None}, d["loader_env"]' \
    env -u LD_PRELOAD -u LD_LIBRARY_PATH ASAN_OPTIONS="$ASAN_OPTIONS" $Q doctor --json --ort-lib "$REAL"
must 0 "^  sha256      $SHA$" "$T/sha.txt" $Q doctor --ort-lib "$REAL"

# 4. Two cores mapped (one by LD_PRELOAD): a warning naming both, and the loader's variables
#    recorded; healthy otherwise (the session ran), as the CUDA copies' warnings are.
PRE="$T/renamed_core.bin"
doctor_json "$T/pre.json" '
w = d["warnings"]
assert len(w) == 1 and w[0].startswith("2 ONNX Runtime libraries mapped in this process: "), w
assert T + "/renamed_core.bin (LD_PRELOAD)" in w[0] and REAL + " (the one loaded)" in w[0], w
assert sorted(d["ort_cores"]) == sorted([T + "/renamed_core.bin", REAL]), d["ort_cores"]
assert d["loader_env"]["LD_PRELOAD"] == T + "/renamed_core.bin" and d["loader_env"]["LD_LIBRARY_PATH"] == T + "/sub", d["loader_env"]
assert d["healthy"] is True, d["problems"]' \
    env LD_PRELOAD="$PRE" LD_LIBRARY_PATH="$T/sub" $Q doctor --json --ort-lib "$REAL"
must 0 "^  WARNING: 2 ONNX Runtime libraries mapped in this process: " "$T/pre.txt" \
    env LD_PRELOAD="$PRE" $Q doctor --ort-lib "$REAL"
grep -qx "healthy, with 1 warning (Loaded libraries)" "$T/pre.txt" || fail "doctor's last line: $(tail -n 2 "$T/pre.txt")"
grep -qE "^  LD_PRELOAD +$PRE$" "$T/pre.txt" || fail "doctor text: LD_PRELOAD not shown"

# 5. validate: the SHA-256 in every configuration's record and the parent's, not only a
#    shard's; under LD_PRELOAD the worker's evidence warns, and so does the table.
V=(validate --export sdpa --configs ref:sdpa:fp64,cpu:decomposed:fp32 --num-events 2 --batch-size 2
   --max-len 8 --threads 1 --repeat 1 --warmup 0 --no-plots --no-cache --progress never --ort-lib "$REAL")
must 0 "PASSED" "$T/v.log" $Q "${V[@]}" --outdir "$T/v"
if grep -q "WARNING" "$T/v.log"; then fail "validate warned with one ORT: $(grep WARNING "$T/v.log")"; fi
must 0 "^    WARNING: 2 ONNX Runtime libraries mapped in this process: .*renamed_core.bin \(LD_PRELOAD\)" "$T/vp.log" \
    env LD_PRELOAD="$PRE" $Q "${V[@]}" --outdir "$T/vp"
$PY - "$T" "$SHA" <<'PY' || fail "validate summaries"
import json, sys
T, SHA = sys.argv[1], sys.argv[2]
for run, warned in (("v", 0), ("vp", 1)):
    d = json.load(open(f"{T}/{run}/summary.json"))
    c = d["configs"][1]
    assert c["onnxruntime"]["library_sha256"] == SHA, (run, c["onnxruntime"])
    assert d["evidence"]["onnxruntime"]["library_sha256"] == SHA, (run, d["evidence"]["onnxruntime"])
    assert c["evidence"]["ort"]["library_sha256"] == SHA, run
    assert len(c["evidence"]["warnings"]) == warned, (run, c["evidence"]["warnings"])
    assert c["evidence"]["loader_env"]["LD_PRELOAD"] == (T + "/renamed_core.bin" if warned else None), c["evidence"]["loader_env"]
PY

# 6. bench: the SHA-256 beside the library in "system" and in its evidence; the warning said.
B=(bench --variants cpu:decomposed:fp32 --seq-lens 8 --num-heads 2 --head-dim 8 --modes masked --iters 2
   --warmup 1 --threads 1 --ort-lib "$REAL")
must 0 "^ortqual bench: WARNING: 2 ONNX Runtime libraries mapped" "$T/bp.log" env LD_PRELOAD="$PRE" $Q "${B[@]}" --outdir "$T/bp"
$PY -c '
import json, sys
s = json.load(open(sys.argv[1] + "/bp/summary.json"))["system"]
assert s["ort_library_sha256"] == sys.argv[2] and s["evidence"]["ort"]["library_sha256"] == sys.argv[2], s["ort_library"]
assert len(s["evidence"]["warnings"]) == 1, s["evidence"]["warnings"]' "$T" "$SHA" || fail "bench summary: $(head -c 400 "$T/bp/summary.json")"
echo "ort_identity: the loaded ORT listed, grouped and hashed; a second core warned about"
