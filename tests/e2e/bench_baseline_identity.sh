#!/usr/bin/env bash
# bench --baseline compares only rows that measure the same thing: every dimension of a --model
# point is in the row's identity, whatever its name holds (torch.export's "s 1", "x;y"), and
# plot reads bench's own dims back; a baseline with other options that change what is timed, or
# with two rows of one identity, is refused (exit 2, one line); a baseline whose run failed is
# noted; another ONNX Runtime is called so, not another machine; no GPU is "no GPU".
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"

# ---- a model whose dimension names have a space, or a ';' and a '='
"$Q" export encoder --width 8 --layers 1 --heads 2 --num-features 4 --ffn-width 8 -o "$T/enc.onnx" >/dev/null ||
    fail "export encoder"
$PY - "$T" <<'PYEOF'
import sys
d = sys.argv[1]
b = open(d + "/enc.onnx", "rb").read()
open(d + "/space.onnx", "wb").write(b.replace(b"seq", b"s 1"))
open(d + "/semi.onnx", "wb").write(b.replace(b"seq", b"x;y"))
PYEOF
M=(bench --iters 5 --warmup 1 --threads 1 --quiet)
expect 0 "wrote" "$Q" "${M[@]}" --model "$T/space.onnx" --shape features=1,8,4 --shape mask=1,8 --outdir "$T/L8"
"$Q" "${M[@]}" --model "$T/space.onnx" --shape features=1,16,4 --shape mask=1,16 --outdir "$T/L16" \
    --baseline "$T/L8/summary.json" --max-slowdown p50=100000% >"$T/L16.log" 2>&1
$PY - "$T" <<'PYEOF' && ok "'s 1' kept in dims; L=16 is not compared with L=8" || bad "spaced dim: $(cat "$T/L16.log")"
import json, sys
d = sys.argv[1]
for L in (8, 16):
    r = json.load(open("%s/L%d/summary.json" % (d, L)))["results"][0]
    assert r["dims"].get("s 1") == L, r["dims"]
b = json.load(open(d + "/L16/summary.json"))["baseline"]
assert (b["compared"], b["new"], b["missing"]) == (0, 1, 1), b
PYEOF

# a ';' in a name: bench writes dims escaped, plot reads its CSV and JSON back
expect 0 "wrote" "$Q" "${M[@]}" --model "$T/semi.onnx" --dim batch=1 --sweep 'x;y=8,16' \
    --outdir "$T/semi"
grep -q 'x\\;y=8' "$T/semi/summary.csv" && ok "summary.csv: 'x;y' escaped" || bad "csv: $(cat "$T/semi/summary.csv")"
expect 0 "runtime.svg" "$Q" plot "$T/semi/summary.csv" --out "$T/plot_csv" --format svg
expect 0 "runtime.svg" "$Q" plot "$T/semi/summary.json" --out "$T/plot_json" --format svg
grep -q "dimension &#39;x;y&#39;" "$T/plot_csv/runtime.svg" && ok "plot: the dimension 'x;y' named" || bad "plot: no 'x;y' in runtime.svg"

# ---- the attention sweep's baseline
B=(bench --variants cpu:attention24:fp32 --seq-lens 16 --modes masked --num-heads 2 --head-dim 8 --iters 5
   --warmup 1 --threads 1 --quiet)
expect 0 "wrote" "$Q" "${B[@]}" --outdir "$T/base"

# options that change what is timed: refused, the option and both values named
one_line 2 "^ortqual bench: --baseline .*base/summary.json: another measurement: --include-session true here, false in the baseline" \
    "$Q" "${B[@]}" --include-session --outdir "$T/x1" --baseline "$T/base/summary.json"
one_line 2 "another measurement: --mask-fraction 0.6 here, 0.[0-9]+ in the baseline" \
    "$Q" "${B[@]}" --mask-fraction 0.6 --outdir "$T/x1" --baseline "$T/base/summary.json"
one_line 2 "another measurement: the graph optimization level 0 \(from --graph-opt-level\) here, 99 in the baseline" \
    "$Q" "${B[@]}" --graph-opt-level 0 --outdir "$T/x1" --baseline "$T/base/summary.json"
[ ! -e "$T/x1" ] && ok "refusals wrote nothing" || bad "refusals left $T/x1"

# two rows of one identity: ambiguous
$PY - "$T/base/summary.json" "$T/dup.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
r = [x for x in s["results"] if x["variant"].startswith("cpu:")][0]
s["results"].insert(0, json.loads(json.dumps(r)))
json.dump(s, open(sys.argv[2], "w"))
PYEOF
one_line 2 "^ortqual bench: --baseline: .*dup.json: results\[0\] and results\[[0-9]+\] are one row \(cpu:attention24:fp32 batch=1 seq_len=16 .*ambiguous" \
    "$Q" "${B[@]}" --outdir "$T/x2" --baseline "$T/dup.json"

# a baseline whose run failed: noted in stdout and summary.json
$PY - "$T/base/summary.json" "$T/failed.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["verdict"], s["exit_status"] = "failed", 1
json.dump(s, open(sys.argv[2], "w"))
PYEOF
expect 0 "note: the baseline's own run was not passed \(verdict failed\)" \
    "$Q" "${B[@]}" --outdir "$T/f1" --baseline "$T/failed.json" --max-slowdown p50=100000%
grep -q '"verdict": "failed"' <($PY -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["baseline"]))' \
    "$T/f1/summary.json") && ok "summary.json baseline.verdict" || bad "f1: no baseline verdict"

# another ONNX Runtime (version, or library of one version), and a GPU baseline on a host without one
$PY - "$T/base/summary.json" "$T" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
d = sys.argv[2]
v = json.loads(json.dumps(s)); v["system"]["ort_version"] = "0.0.1"
json.dump(v, open(d + "/ortver.json", "w"))
g = json.loads(json.dumps(s)); g["system"]["evidence"]["gpu"] = {"gpus": [{"name": "NVIDIA H100"}]}
json.dump(g, open(d + "/gpu.json", "w"))
l = json.loads(json.dumps(s)); l["system"]["ort_library"] = "/elsewhere/libonnxruntime.so"
json.dump(l, open(d + "/lib.json", "w"))
PYEOF
one_line 2 "^ortqual bench: --baseline .*ortver.json: another ONNX Runtime: ONNX Runtime version '.*' here, '0.0.1' in the baseline" \
    "$Q" "${B[@]}" --outdir "$T/x3" --baseline "$T/ortver.json"
if $PY -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["system"]["evidence"]["gpu"]["gpus"] != [])' \
    "$T/base/summary.json"; then  # this host has no GPU
    one_line 2 "another machine: no GPU here, GPUs 'NVIDIA H100' in the baseline" \
        "$Q" "${B[@]}" --outdir "$T/x3" --baseline "$T/gpu.json"
fi
expect 0 "note: another ONNX Runtime library of version .*/elsewhere/libonnxruntime.so in the baseline" \
    "$Q" "${B[@]}" --outdir "$T/l1" --baseline "$T/lib.json" --max-slowdown p50=100000%
grep -q '"ort_difference": "another ONNX Runtime library' "$T/l1/summary.json" &&
    ok "summary.json baseline.ort_difference" || bad "l1: no ort_difference"
report
