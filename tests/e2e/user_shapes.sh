#!/usr/bin/env bash
# A user's own attention models that inspect and convert refused (QA round 9a, D7, D8, D10):
# bfloat16 scale and fill constants are read as float16 ones are (raw_data and int32_data); a
# scalar that is not read says so (it was "not a scalar ... of shape []"); rotary (Slice/Neg/Concat)
# and repeat_kv (Tile; Expand of a computed shape) chains without value_info are inferred and fuse;
# where inference stops the line names the tensor, the node and what to declare, and never an
# internal symbol ("k_r#2"); a 4-D Attention of 2 KV heads for 4 says so, in text and --json.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/user_shapes.py" "$T" || fail "user_shapes.py"

# D7: bf16 constants, as model.to(torch.bfloat16) exports them (the fill was "a non-constant value")
for m in bf16_raw bf16_i32; do
    expect 0 "fusable: scale 0\.349609, Where mask$" $Q inspect $m.onnx
    expect 0 "fuse +fused +Softmax_p: Attention 'attention': scale 0\.349609, Where mask 'keys'" \
        $Q convert $m.onnx --plan --fuse
done
expect 0 "not fusable: a score scale that is not read: Mul 'Mul_ss' by 'c', a float32 scalar in external data$" \
    $Q inspect ext_scale.onnx

# D8: undeclared rotary and repeat_kv chains fuse (they were "the rank of the scores is unknown",
# "K 'k_r' is not known to be rank 4"); --flash's mask rewrite sees K's length through them
for m in rope gqa_tile gqa_expand; do
    expect 0 "fusable: scale 0\.35, Where mask$" $Q inspect $m.onnx
    expect 0 "mask-to-seqlen +rewritten +attention: attn_mask 'keys' is the key padding of input 'mask'" \
        $Q convert $m.onnx --plan --flash
done
expect 0 "batch 0 vs reference +y: PASS" $Q convert rope.onnx -o rope_flash.onnx --flash
# ... where inference stops (Split: its second output), the tensor, the node and the fix
expect 0 "not fusable: the rank of the scores 's' is unknown: shapes are not inferred through Split 'Split_q' \(output 'q2'\); declare the shape of 'q2' \(value_info\)" \
    $Q inspect rope_split.onnx
# ... and a dim nothing names is said as the reader writes it, with the fix
out=$($Q convert gqa_unnamed.onnx --plan --flash 2>&1)
grep -qE "mask-to-seqlen +refused +attention: attn_mask 'keys': cannot show that the mask's length seq is K's sequence length k_r\.shape\[2\] \(declare the shape of K 'k_r'" <<<"$out" &&
    ! grep -q "#" <<<"$out" && ok "gqa_unnamed: k_r.shape[2], no internal symbol" || bad "gqa_unnamed: $out"

# D10: grouped-query heads of a 4-D Attention, which --lower refuses for that reason
expect 0 "Attention 'att' \(heads 4, kv heads 2, head dim 8\)$" $Q inspect att_gqa.onnx
expect 0 "Attention 'att' \(heads 4, head dim 8\)$" $Q inspect att_mha.onnx
for m in att_gqa:2 att_mha:4; do
    $Q inspect --json ${m%:*}.onnx | $PY -c '
import json, sys
a = json.load(sys.stdin)["attention"][0]
assert (a["heads"], a["kv_heads"], a["head_dim"]) == (4, int(sys.argv[1]), 8), a' ${m#*:} &&
        ok "${m%:*}: --json kv_heads ${m#*:}" || bad "${m%:*}: --json kv_heads"
done
report
