#!/usr/bin/env bash
# A graph input that is also an initializer (ONNX IR >= 4): the initializer is its default,
# which a caller may override (ONNX Runtime lists it as an overridable initializer, not as an
# input). inspect lists it, marked (it was hidden); validate, convert and bench run the model
# with the default and feed only the other inputs, so a tensor given for it (which they would
# ignore) is refused, and a name check that asks "is it an input?" says yes.
# tests/fixtures/onnx/make_default_input.py writes the models: y = x + w, w = [1, 2, 3, 4].
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
M="$OQ_SOURCE_DIR/tests/fixtures/onnx/default_input.onnx"
FAST=(--iters 2 --warmup 0 --threads 1 --quiet)
"$PY" - "$T" <<'EOF' || bad "cannot write the npz files"
import numpy as np, sys
x = np.zeros((2, 4), np.float32)
w = np.arange(1, 5, dtype=np.float32)
np.savez(sys.argv[1] + "/x.npz", x=x)
np.savez(sys.argv[1] + "/xy.npz", x=x, y=x + w)
np.savez(sys.argv[1] + "/xw.npz", x=x, w=-w, y=x + w)
np.savez(sys.argv[1] + "/yw.npz", y=x + w, w=w)
EOF

# 1. inspect: listed after the inputs to feed, marked, in the text and the JSON; below IR 4 an
#    initializer listed as an input is no input (none is overridable there)
expect 0 "^  input   w +float32  \[4\]  default: the initializer of its name$" "$Q" inspect "$M"
"$Q" inspect --json "$M" >"$T/i.json" 2>&1 || bad "inspect --json: $(cat "$T/i.json")"
if "$PY" - "$T/i.json" <<'EOF'; then ok "inspect --json: w has a default"; else bad "inspect --json: $(cat "$T/i.json")"; fi
import json, sys
ins = json.load(open(sys.argv[1]))["inputs"]
assert [(i["name"], i["default"]) for i in ins] == [("x", None), ("w", "initializer")], ins
EOF
out=$("$Q" inspect "${M%.onnx}_ir3.onnx" 2>&1)
if grep -q "input   x" <<<"$out" && ! grep -q "input   w" <<<"$out"; then ok "IR 3: w is no input"; else bad "IR 3: $out"; fi

# 2. bench --model: w is not generated (the model runs with its default); a tensor or a --shape
#    for it is refused (the tensor was ignored, the --shape said "no input 'w'"); an expected file
#    that holds w beside the outputs is taken (it was "not an output")
expect 0 "batch=2 +ok" "$Q" bench --model "$M" --dim batch=2 "${FAST[@]}" --outdir "$T/b1"
if "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; assert [i["name"] for i in r["inputs"]] == ["x"], r["inputs"]' \
    "$T/b1/summary.json" 2>/dev/null; then ok "bench: x generated, w left to its default"; else bad "bench inputs: $(ls "$T/b1")"; fi
for args in "--inputs $T/xw.npz" "--dim batch=2 --shape w=4"; do
    expect 2 "(xw.npz: tensor 'w'|--shape w): the model's input 'w' has a default \(the initializer of its name\), which ortqual runs the model with" \
        "$Q" bench --model "$M" $args "${FAST[@]}" --outdir "$T/b2"
    [ ! -e "$T/b2" ] || { bad "a refused bench wrote $T/b2"; rm -rf "$T/b2"; }
done
expect 0 "batch=2 +ok +.* 0$" "$Q" bench --model "$M" --inputs "$T/x.npz" --expected "$T/yw.npz" "${FAST[@]}" --outdir "$T/b3"

# 3. validate --model and convert: the same (they read batches alike)
expect 0 "verdict: PASSED" "$Q" validate --model "$M" --inputs "$T/xy.npz" --no-mask --outdir "$T/v1"
expect 2 "xw.npz: member 'w': the model's input 'w' has a default \(the initializer of its name\)" \
    "$Q" validate --model "$M" --inputs "$T/xw.npz" --no-mask --outdir "$T/v2"
expect 2 "--mask 'w': that input has a default \(the initializer of its name\), which ortqual runs the model with; it feeds only inputs without one \(x\)" \
    "$Q" validate --model "$M" --inputs "$T/xy.npz" --mask w --outdir "$T/v3"
expect 0 "verdict: PASSED" "$Q" validate --model "$M" --inputs "$T/x.npz" --expected "$T/yw.npz" --no-mask --outdir "$T/v4"
expect 2 "xw.npz: member 'w': the model's input 'w' has a default" \
    "$Q" convert "$M" -o "$T/c.onnx" --opset 18 --inputs "$T/xw.npz"

report
