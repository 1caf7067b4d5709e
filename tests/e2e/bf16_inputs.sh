#!/usr/bin/env bash
# A bfloat16 input fed from an .npz (numpy has no bfloat16): as float32 whose every value bfloat16
# holds exactly (what ortqual itself writes bfloat16 as), or as the 2-byte void numpy.save writes
# for an ml_dtypes.bfloat16 array ('<V2', or '|V2'), which is read as bfloat16 bits only for a
# bfloat16 input or output. Before, validate and bench refused both forms. Any other dtype is
# refused saying what is accepted. tests/e2e/lib/bf16_model.py writes the models and files.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
"$PY" "$OQ_SOURCE_DIR/tests/e2e/lib/bf16_model.py" "$T" || bad "cannot write the models and npz files"
M="$T/bf16_io.onnx"
FAST=(--iters 2 --warmup 0 --threads 1 --quiet)

# 1. validate: each accepted form runs and compares (y, bfloat16, as z, float32)
for f in in_f32 in_v2le in_v2; do
    expect 0 "verdict: PASSED" "$Q" validate --model "$M" --inputs "$T/$f.npz" --expected "$T/out.npz" --no-mask \
        --outdir "$T/v_$f"
done
# ... and the expected value of a bfloat16 output may be '<V2' too, but of no other output
expect 0 "verdict: PASSED" "$Q" validate --model "$M" --inputs "$T/in_f32.npz" --expected "$T/out_yv2.npz" \
    --no-mask --outdir "$T/v_yv2"
expect 2 "out_zv2.npz: expected 'z' is ml_dtypes.bfloat16 \('<V2'\), read so only for a bfloat16 output; the model's output is float32" \
    "$Q" validate --model "$M" --inputs "$T/in_f32.npz" --expected "$T/out_zv2.npz" --no-mask --outdir "$T/v_zv2"

# 2. refused, one line naming file, member and what is accepted; nothing written
expect 2 "in_inexact.npz: member 'x' is float32 for a bfloat16 input, but its value 1.00001.* at \[1,2\] is no bfloat16" \
    "$Q" validate --model "$M" --inputs "$T/in_inexact.npz" --expected "$T/out.npz" --no-mask --outdir "$T/v_bad1"
expect 2 "in_i64.npz: member 'x' is int64 \[3,4\]; the model's 'x' is bfloat16 \[batch,4\] \(accepted: ml_dtypes.bfloat16 \('<V2'\), or float32 \('<f4'\) whose values bfloat16 holds exactly\)" \
    "$Q" validate --model "$M" --inputs "$T/in_i64.npz" --expected "$T/out.npz" --no-mask --outdir "$T/v_bad2"
expect 2 "in_wv2.npz: member 'w' is bfloat16 \[3,4\]; the model's 'w' is float32 \[batch,4\] \(accepted: float32 \('<f4'\)\)" \
    "$Q" validate --model "$M" --inputs "$T/in_wv2.npz" --expected "$T/out.npz" --no-mask --outdir "$T/v_bad3"
for d in v_bad1 v_bad2 v_bad3 v_zv2; do # a refusal leaves its error.json alone
    [ "$(ls "$T/$d" 2>&1)" = error.json ] || bad "a refused validate wrote in $d: $(ls "$T/$d" 2>&1)"
done

# 3. bench: the same forms time the model and compare with --expected
for f in in_f32 in_v2le; do
    expect 0 "batch=3 +ok" "$Q" bench --model "$T/bf16_in.onnx" --inputs "$T/$f.npz" --expected "$T/out_z.npz" \
        "${FAST[@]}" --outdir "$T/b_$f"
done
expect 2 "in_inexact.npz: tensor 'x' is float32 for a bfloat16 input, but its value 1.00001.* at \[1,2\] is no bfloat16" \
    "$Q" bench --model "$T/bf16_in.onnx" --inputs "$T/in_inexact.npz" "${FAST[@]}" --outdir "$T/b_bad1"
expect 2 "in_i64.npz: tensor 'x' is int64, the model's input wants bfloat16 \(accepted: ml_dtypes.bfloat16" \
    "$Q" bench --model "$T/bf16_in.onnx" --inputs "$T/in_i64.npz" "${FAST[@]}" --outdir "$T/b_bad2"
for d in b_bad1 b_bad2; do [ ! -e "$T/$d" ] || bad "a refused bench wrote $d"; done

report
