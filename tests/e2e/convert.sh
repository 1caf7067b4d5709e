#!/usr/bin/env bash
# ortqual convert: every PyTorch fixture becomes Attention-24 (fp16, nonpad_kv_seqlen or is_causal)
# matching PyTorch's outputs; the opset-23 exports ORT refuses run after --mask-to-seqlen or
# --expand-mask; the softmax over the query axis stays; holes are refused; bad use is exit 2.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
PY=/usr/bin/python3

# the structure of a converted model: opset 24, only Attention nodes for attention, no attn_mask
structure() { # structure MODEL N_ATTENTION CAUSAL
    $ORTQUAL inspect --json "$1" | $PY -c '
import json, sys
m = json.load(sys.stdin); n, causal = int(sys.argv[1]), sys.argv[2] == "1"
ops = {o["op_type"]: o["count"] for o in m["operators"]}
assert m["opsets"][0]["version"] == 24, m["opsets"]
assert ops.get("Attention") == n and "Softmax" not in ops and "Elu" not in ops, ops
want = "inputs: Q K V" if causal else "inputs: Q K V nonpad_kv_seqlen"
for a in m["attention"]:
    assert a["kind"] == "Attention" and a["detail"] == want, a
    assert ("is_causal=1" in a["attributes"]) == causal, a
' "$2" "$3"
}

# (every fixture at both opsets is converted by unit/test_convert; here the tool's path, one of each kind)
# (--flash is the four flags: both spellings run)
for case in tx_encoder:23:2:0 decoder_lm:18:1:1 mlpf_like:18:2:0 mlpf_like:23:2:0; do
    IFS=: read -r fx op n causal <<<"$case"
    out="$T/${fx}_$op.onnx"
    passes="--fuse --mask-to-seqlen --attention-dtype fp16 --opset 24"
    [ "$op" = 23 ] && passes=--flash
    expect 0 "written: " $ORTQUAL convert "$F/$fx/${fx}_op$op.onnx" -o "$out" $passes --inputs "$F/$fx/inputs_000.npz" --inputs "$F/$fx/inputs_001.npz" \
        --expected "$F/$fx/outputs_000.npz" --expected "$F/$fx/outputs_001.npz"
    if structure "$out" "$n" "$causal"; then ok "$fx opset $op: $n Attention-24 node(s), no attn_mask"; else bad "$fx opset $op structure"; fi
done

# heads of 12 (mlpf_like) are zero-padded to 16, the multiple of 8 ORT's CUDA flash attention needs,
# by default with an attention dtype; --no-pad-head-size keeps them; heads of 8 (tx_encoder) stay
expect 0 "pad-head-size +rewritten +attention: head size 12 -> 16 \(from Q's shape\): Q, K, V zero-padded" \
    $ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24
plan_pads() { $ORTQUAL convert "$@" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24 | grep -c "^pad-head-size"; }
[ "$(plan_pads "$F/mlpf_like/mlpf_like_op18.onnx" --no-pad-head-size)" = 0 ] && ok "--no-pad-head-size: heads of 12 kept" \
    || bad "--no-pad-head-size still padded"
[ "$(plan_pads "$F/tx_encoder/tx_encoder_op18.onnx")" = 0 ] && ok "tx_encoder: heads of 8 not padded" || bad "tx_encoder padded"

# the opset-23 export: ORT refuses it as exported (a runtime error, explained), and runs it once
# the mask spans the queries
expect 3 "refused by ONNX Runtime \[attn-mask-query-broadcast\]" $ORTQUAL replay --model "$F/mlpf_like/mlpf_like_op23.onnx" --inputs "$F/mlpf_like/inputs_000.npz" \
    --ep cpu --outdir "$T/r23" --force
expect 0 "reference = original, lowered \(ORT refused it: node 'node_scaled_dot_product_attention': inconsistent q_sequence_length" \
    $ORTQUAL convert "$F/mlpf_like/mlpf_like_op23.onnx" -o "$T/expanded.onnx" --expand-mask
expect 0 "verdict: PASSED" $ORTQUAL replay --model "$T/expanded.onnx" --inputs "$F/mlpf_like/inputs_000.npz" \
    --ep cpu --outdir "$T/rx" --force
expect 0 "verdict: PASSED" $ORTQUAL replay --model "$T/mlpf_like_23.onnx" --inputs "$F/mlpf_like/inputs_001.npz" \
    --ep cpu --precision fp16 --outdir "$T/rs" --force

# a softmax over the query axis is not attention: left alone, and the model still matches PyTorch
expect 0 "skipped +node_softmax: not attention: softmax over axis 2 of 4 \(the query axis\)" \
    $ORTQUAL convert "$F/wrong_axis/wrong_axis_op18.onnx" -o "$T/wrong.onnx" --fuse --mask-to-seqlen \
    --inputs "$F/wrong_axis/io.npz" --expected "$F/wrong_axis/io.npz"
expect 0 "ai.onnx +Softmax +1" $ORTQUAL inspect "$T/wrong.onnx"

# the mask contract: recorded in the model, enforced on inputs, by convert and by validate
$PY - "$F/mlpf_like/inputs_000.npz" "$T/holes.npz" <<'PY'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); m = z["mask"].copy(); m[1, 10] = 0; z["mask"] = m; np.savez(sys.argv[2], **z)
PY
expect 0 '"ortqual.mask_contract"|mask_contract' $PY -c '
import sys
d = open(sys.argv[1], "rb").read()
assert b"ortqual.mask_contract" in d and b"\"contract\":\"valid_prefix\"" in d
print("ortqual.mask_contract")' "$T/mlpf_like_18.onnx"
expect 2 "holes.npz: input 'mask': event 1: hole at position 11" $ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" \
    -o "$T/h.onnx" --fuse --mask-to-seqlen --inputs "$T/holes.npz"
[ ! -e "$T/h.onnx" ] && ok "nothing written for holes" || bad "a model was written for inputs with holes"
expect 2 "event 1: hole at position 11" $ORTQUAL validate --model "$T/mlpf_like_18.onnx" --inputs "$T/holes.npz" \
    --configs cpu:model:fp32,cpu:model:fp16 --outdir "$T/vh" --force
expect 2 "event 1: hole at position 11" $ORTQUAL replay --model "$T/mlpf_like_18.onnx" --inputs "$T/holes.npz" \
    --ep cpu --outdir "$T/rh" --force
expect 2 "--mask 'features', but the model's ortqual.mask_contract names input 'mask'" $ORTQUAL validate \
    --model "$T/mlpf_like_18.onnx" --inputs "$F/mlpf_like/inputs_000.npz" --mask features \
    --configs cpu:model:fp32,cpu:model:fp16 --outdir "$T/vc" --force

# the check bites: a changed PyTorch value fails naming output and element; nothing is written
$PY - "$F/hand_attention/io.npz" "$T/bad_io.npz" <<'PY'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["y"] = z["y"].copy(); z["y"][0, 5, 3] += 0.25; np.savez(sys.argv[2], **z)
PY
expect 1 "output 'y' differs from the expected outputs: y: FAIL .*worst \[0,5,3\]" $ORTQUAL convert \
    "$F/hand_attention/hand_attention_op18.onnx" -o "$T/bad.onnx" --fuse --mask-to-seqlen --inputs "$T/bad_io.npz" \
    --expected "$T/bad_io.npz"
[ ! -e "$T/bad.onnx" ] && ok "nothing written when the check fails" || bad "written despite a failed check"

# validate notes that a converted float16 model misses float32 tolerances by its own rounding
expect 1 "note: .*tx_encoder_23.onnx computes attention in float16 \(Attention '[^']+'\); cpu:model:fp32 is judged with fp32 tolerances: use cpu:model:fp16" \
    $ORTQUAL validate --model "$T/tx_encoder_23.onnx" --inputs "$F/tx_encoder/inputs_000.npz" --features features --mask mask \
    --expected "$F/tx_encoder/outputs_000.npz" --configs expected,cpu:model:fp32 --no-plots --outdir "$T/v16"
if $ORTQUAL validate --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/inputs_000.npz" --features features \
    --mask mask --expected "$F/tx_encoder/outputs_000.npz" --configs expected,cpu:model:fp32 --no-plots --outdir "$T/v32" 2>&1 | grep -q "computes attention in"; then
    bad "float16 note for a float32 model"
else ok "no float16 note for the float32 export"; fi

# --plan writes nothing; --json is machine-readable
expect 0 "plan only: nothing written" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --mask-to-seqlen
expect 0 '"fused": 2' $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --json

# a head size ORT's CUDA fused kernels cannot take is noted at conversion time (mlpf_like: 12),
# and nothing is said where they can (tx_encoder: 8)
expect 0 "cuda +note +attention: head size 12 \(from Q's shape\): .* so this node runs MATH on CUDA; pad the head size to 16.*ortqual convert --pad-head-size writes it" \
    $ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --no-pad-head-size
# once padded (the default with an attention dtype) the output's heads of 16 need no note
if $ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" --plan --fuse --mask-to-seqlen --attention-dtype fp16 | grep -q "^cuda "; then
    bad "head-size note after padding to 16"
else ok "no head-size note once mlpf_like is padded"; fi
if $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --mask-to-seqlen | grep -q "head size"; then
    bad "head-size note for tx_encoder (head size 8)"
else ok "no head-size note for tx_encoder (head size 8)"; fi

# --fuse alone keeps the broadcast mask (valid ONNX): ORT refuses that, so the check fails and says what helps
expect 0 "broadcasts over the queries: valid ONNX, refused by ONNX Runtime .* add --expand-mask or --mask-to-seqlen" \
    $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" --plan --fuse
expect 1 "ORT CPU cannot run the converted model: node 'attention': inconsistent q_sequence_length.*--expand-mask" \
    $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/fuse_only.onnx" --fuse
expect 0 "written: " $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/fuse_expand.onnx" --fuse --expand-mask

# usage and input errors
expect 2 "--opset '12': want a whole number in 13..24" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --fuse --opset 12
expect 2 "opset 23 is below the 24 that nonpad_kv_seqlen needs \(--mask-to-seqlen writes it: raise --opset to 24" \
    $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --flash --opset 23
expect 2 "opset 18 is below the 23 that Attention needs \(raise --opset or leave it out\)" \
    $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --fuse --opset 18
[ ! -e "$T/o.onnx" ] && ok "opset refusals write nothing" || bad "o.onnx written"
expect 2 "-o OUT.onnx is required" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --fuse
expect 2 "fp16 or bf16" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --attention-dtype fp8
expect 2 "no pass chosen: --flash for ORT's CUDA flash attention" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx"
expect 2 "no pass chosen" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --keep-elu
expect 2 "--flash and --lower contradict" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --flash --lower
# --flash plans exactly what the four flags plan, on every fixture; --attention-dtype still chooses
for m in "$F"/*/*_op*.onnx; do
    a=$($ORTQUAL convert "$m" --plan --flash 2>&1); b=$($ORTQUAL convert "$m" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24 2>&1)
    if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "--flash plans as the four flags: ${m##*/}"; else bad "--flash differs on ${m##*/}"; fi
done
expect 0 "attention-dtype +rewritten .*bfloat16" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --flash --attention-dtype bf16
expect 2 "not an ONNX model" $ORTQUAL convert "$F/tx_encoder/io.npz" -o "$T/o.onnx" --fuse
expect 2 "exists \(not overwritten\)" $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/mlpf_like_18.onnx" --fuse
report
