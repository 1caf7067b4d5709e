#!/usr/bin/env bash
# Which output axes are masked as the batch and the sequence, and which rule said so
# (src/axes/: --seq-axis, the declared names, the ONNX denotations, the sizes), through the tool:
# each batch record's padding keeps batch_axis, seq_axis and masked_by. e2e/seq_axis covers
# seq_axes and denotations on a [B,H,L,D] output; here one encoder, [B,L,K] outputs, three ways:
# its dynamic export (names 'batch', 'seq'), its static export (DATA_BATCH/DATA_TIME denotations)
# and the static one without denotations (sizes: axis 1 is the mask's padded length 16, which no
# width of the model is), each through validate and replay against the C reference's outputs.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
R=(--repeat 1 --warmup 0 --threads 1 --progress never --no-cache)
# the inputs and the C reference's outputs, and the static model of the same weights
"$Q" validate --num-events 2 --batch-size 2 --max-len 16 --static "${R[@]}" --no-plots --save-outputs \
    --configs ref:encoder:fp64,cpu:decomposed:fp32 --outdir ref > ref.log 2>&1 || fail "reference run: $(tail -3 ref.log)"
cp ref/encoder_decomposed_fp32_static.onnx denoted.onnx
"$PY" "$OQ_SOURCE_DIR/tests/e2e/lib/strip_denotations.py" denoted.onnx sized.onnx || fail "strip_denotations"
"$Q" export encoder --weights ref/weights.npz --heads 4 -o named.onnx > export.log 2>&1 || fail "export: $(cat export.log)"
expect 0 "output +cls +float32 +\[batch, seq, 6\]" "$Q" inspect named.onnx
expect 0 "output +cls +float32 +\[2, 16, 6\]$" "$Q" inspect sized.onnx
IO=(--inputs ref/inputs_000.npz --expected ref/outputs_00_ref_encoder_fp64_000.npz)

# masked DIR 'LINE...': each output of config 1's every batch record as "OUTPUT BATCH SEQ BY"
masked() {
    local got
    got=$("$PY" - "$1/summary.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["configs"][1]
rows = {" ".join([o["name"]] + [str(o["padding"].get(k, "-")) for k in ("batch_axis", "seq_axis", "masked_by")])
        for b in c["batches"] for o in b["outputs"]}
print("; ".join(sorted(rows)))
PY
)
    [ "$got" = "$2" ] && ok "$1: $2" || bad "$1: masked '$got', not '$2'"
}
for rule in named denoted sized; do
    by=${rule/named/names}
    by=${by/denoted/denotations}
    by=${by/sized/sizes}
    expect 0 "verdict: PASSED" "$Q" validate --model "$rule.onnx" "${IO[@]}" --configs expected,cpu:model:fp32 "${R[@]}" \
        --no-plots --outdir "v_$rule"
    masked "v_$rule" "cls 0 1 $by; reg 0 1 $by"
    expect 0 "verdict: PASSED" "$Q" replay --model "$rule.onnx" "${IO[@]}" --outdir "r_$rule"
    masked "r_$rule" "cls 0 1 $by; reg 0 1 $by"
done
# --seq-axis over the sizes: the rule says so; none masks nothing (every element valid: no keys)
expect 0 "verdict: PASSED" "$Q" validate --model sized.onnx "${IO[@]}" --configs expected,cpu:model:fp32 "${R[@]}" \
    --no-plots --seq-axis cls=1 --seq-axis reg=1 --outdir v_seq
masked v_seq "cls 0 1 seq_axes; reg 0 1 seq_axes"
# the sizes cannot tell a sequence from a width of the same size: refused, not guessed
"$Q" validate --num-events 2 --batch-size 2 --max-len 8 --static "${R[@]}" --no-plots --save-outputs \
    --configs ref:encoder:fp64,cpu:decomposed:fp32 --outdir ref8 > ref8.log 2>&1 || fail "reference run 8: $(tail -3 ref8.log)"
"$PY" "$OQ_SOURCE_DIR/tests/e2e/lib/strip_denotations.py" ref8/encoder_decomposed_fp32_static.onnx sized8.onnx ||
    fail "strip_denotations 8"
one_line 2 "^ortqual validate: sized8.onnx: output 'cls' shape \[2,8,6\]: axis 1 has the mask's padded length 8, but so do two axes of input 'features' \[2,8,8\]" \
    "$Q" validate --model sized8.onnx --inputs ref8/inputs_000.npz --expected ref8/outputs_00_ref_encoder_fp64_000.npz \
    --configs expected,cpu:model:fp32 "${R[@]}" --no-plots --outdir v_8
report
