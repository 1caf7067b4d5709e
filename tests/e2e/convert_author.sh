#!/usr/bin/env bash
# convert and inspect on models a graph author writes by hand (lib/author_models.py, after a QA
# pass): a graph without outputs is an input error, not ONNX Runtime's words; an opset-11 chain
# fuses and its opset is raised (the fused Softmax is no node of the output, a Softmax over the
# last axis means the same at 13); a com.microsoft attention is named and left as it is;
# refusals say the rule they apply; a fused chain something else still reads is said to stay;
# an opset-11 Softmax's axis is described as that opset reads it.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
(cd "$OQ_SOURCE_DIR/tests/e2e/lib" && $PY author_models.py "$T") || fail "author_models.py"

# no outputs: inspect warns; convert and validate refuse it as input (exit 2, the graph named),
# not exit 3 with ORT's "OrtValue indexes should have been populated"; nothing written
expect 0 "warning: the graph has no outputs" $Q inspect empty.onnx
expect 0 '^ +"the graph has no outputs: ONNX Runtime has nothing to compute"$' $Q inspect --json noout.onnx
for m in empty noout; do
    one_line 2 "^ortqual convert: $m\.onnx: the graph has no outputs: ONNX Runtime has nothing to compute$" \
        $Q convert $m.onnx -o x.onnx --flash
    [ ! -e x.onnx ] && ok "$m: nothing written" || bad "$m: x.onnx written"
done
expect 2 "noout\.onnx: the graph has no outputs" $Q validate --model noout.onnx --inputs noout_in.npz \
    --configs cpu:model:fp32 --outdir v
# a graph with outputs but no mask input, validated on generated events: refused before a batch
# is written (e2e/hostile's model without op_type now stops at its missing outputs first)
expect 2 "^ortqual validate: batch 0: generated events need a mask input \[B,L\]: give --inputs \(or --mask\)$" \
    $Q validate --model probs_out.onnx --configs cpu:model:fp32 --outdir nomask
[ "$(ls nomask 2>/dev/null)" = "error.json" ] && ok "no mask input: only error.json" || bad "no mask input left: $(ls nomask)"

# opset 11: the fused Softmax was refused by the opset check it no longer stood in (exit 1)
expect 0 "opset +rewritten +ai.onnx opset 11 -> 23" $Q convert op11_last.onnx --plan --fuse
expect 0 "written: " $Q convert op11_last.onnx -o op11_23.onnx --fuse
$Q inspect --json op11_23.onnx | $PY -c '
import json, sys
m = json.load(sys.stdin); ops = {o["op_type"] for o in m["operators"]}
assert m["opsets"][0]["version"] == 23 and "Attention" in ops and "Softmax" not in ops, (m["opsets"], ops)' &&
    ok "op11_last: Attention at opset 23, no Softmax left" || bad "op11_last's output"
# ... and a Softmax the raise keeps: over the last axis (2-D, its default axis 1) it reads the
# same at 13; over axis 1 of 3 it flattened two axes, and is still refused
expect 0 "written: " $Q convert op11_cls.onnx -o cls_13.onnx --opset 13
expect 1 "opset +refused +Softmax_y: cannot raise ai.onnx opset 11 to 13: Softmax changed meaning" \
    $Q convert op11_flat.onnx --plan --opset 13

# com.microsoft MultiHeadAttention: named and left as it is (the plan said only "no Attention node")
expect 0 "contrib +note +MultiHeadAttention_y: com.microsoft MultiHeadAttention left as it is: convert rewrites" \
    $Q convert ms_mha.onnx --plan --flash

# refusals say the rule, then the node (they said only "Mul 'Mul_ss' between the score product and
# the softmax")
expect 0 "not fusable: a score scale that is not a scalar: Mul 'Mul_ss' by 'c' of shape \[1, 2, 1, 1\]" \
    $Q inspect perhead.onnx
# a bias widening the scores (2 events of bias on scores of 1): no attn_mask does that (convert
# infers the scores' shape first)
expect 1 "^ortqual convert: widen\.onnx: 1 requested rewrite was refused \(see the plan\); nothing written$" \
    $Q convert widen.onnx -o wide.onnx --fuse
[ ! -e wide.onnx ] && ok "widen: nothing written" || bad "widen: wide.onnx written"
expect 1 "fuse +refused +Softmax_p: Add 'Add_sb' applies 'bias2' of shape \[2, 2, 4, 4\] to scores of shape \[1, 2, 4, 4\]: it does not broadcast" \
    $Q convert widen.onnx --plan --fuse
# ... and inspect says the same: it infers the scores' shape as convert does (it called the chain
# fusable, judging the declared shapes only)
expect 0 "not fusable: Add 'Add_sb' applies 'bias2' of shape \[2, 2, 4, 4\] to scores of shape \[1, 2, 4, 4\]: it does not broadcast" \
    $Q inspect widen.onnx
expect 1 "fuse +refused +Softmax_p: a score scale that is not a scalar" $Q convert perhead.onnx --plan --fuse

# two additive terms, a bias and key padding (either order): one Attention whose attn_mask sums
# them (they were refused: "at most one mask is fused"); convert's check runs the chain and the
# Attention on ORT over generated batches (event 1 padded), and over a batch given, padded, under
# ten times fp32's tolerance; --flash says the float mask keeps it from flash
expect 0 "fusable: scale 0\.3, additive mask of 2 terms" $Q inspect two_adds.onnx
expect 0 "fusable: scale 0\.3, Where mask and 1 additive term" $Q inspect bias_pad.onnx
# (y [B, H, L, D] is static with B = H = 2: the sizes read a sequence on axis 1 only and the batch on
# axis 0 or 1, so both are said)
for m in two_adds bias_pad pad_bias; do
    seq=; [ $m = two_adds ] || seq="--seq-axis y=2,batch=0"
    expect 0 "fuse +fused +Softmax_p: Attention 'attention': scale 0\.3, .* 'attn_bias_(sum|masked)'" \
        $Q convert $m.onnx -o ${m}_23.onnx --fuse $seq
    expect 0 "batch 1 vs reference +y: PASS" $Q convert $m.onnx -o ${m}_23.onnx --fuse --force $seq
done
$Q inspect --json bias_pad_23.onnx | $PY -c '
import json, sys
m = json.load(sys.stdin); ops = {o["op_type"] for o in m["operators"]}
assert "Attention" in ops and "Softmax" not in ops and "Where" in ops, ops' &&
    ok "bias_pad: one Attention, its mask a Where of the bias" || bad "bias_pad's output"
$PY - <<'PYEOF' || fail "batches"
import numpy as np
rng = np.random.default_rng(1)
q, k, v = (rng.standard_normal((2, 2, 4, 8)).astype(np.float32) for _ in range(3))
np.savez("bp_in.npz", q=q, k=k, v=v, mask=np.array([[1, 1, 1, 1], [1, 1, 0, 0]], bool))
PYEOF
expect 0 "batch 0 vs reference +y: PASS" $Q convert bias_pad.onnx -o bp_checked.onnx --fuse --inputs bp_in.npz \
    --seq-axis y=2,batch=0 --tolerance rtol=1e-5,atol=1e-6
expect 1 "fuse +note +Softmax_p: attn_mask 'attn_bias_masked' sums the chain's Where mask and 1 additive term into one float mask: ORT's CUDA flash attention takes no attn_mask" \
    $Q convert bias_pad.onnx --plan --flash

expect 0 "not fusable: Mul 'Mul_sc' scales the scores between two mask terms \('m' and 'bias'\)" \
    $Q inspect scaled_between.onnx

# the softmax output is also a graph output: fused, and the plan says the chain stays beside it
expect 0 "fuse +note +Softmax_p: the chain is kept beside the Attention node: 'p' is also a graph output, so the Softmax 'Softmax_p' stays" \
    $Q convert probs_out.onnx --plan --fuse
expect 0 "written: " $Q convert probs_out.onnx -o probs_23.onnx --fuse

# an opset-11 Softmax over axis 2 of 4 normalises over axes 2 and 3 together, not "the query axis"
expect 0 "not attention: softmax over axes 2\.\.3 of 4 flattened into one \(a Softmax of opset 11 normalises" \
    $Q inspect op11_axis2.onnx
report
