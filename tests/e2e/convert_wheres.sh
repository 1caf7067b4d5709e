#!/usr/bin/env bash
# convert --fuse with two or three Where masks (PyTorch's causal mask and key padding, each a
# masked_fill; a sliding window): one Attention whose bool attn_mask is the AND of their
# keep-masks (or, beside a bias, one float mask), checked against the original by convert's check;
# a factor between them and a fill that excludes nothing refused, one line each, by inspect as by
# convert (--flash on them: e2e/convert_flashcausal). Models: lib/author_models.py.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
(cd "$OQ_SOURCE_DIR/tests/e2e/lib" && $PY author_models.py "$T") || fail "author_models.py"

# fused (main: "not fusable: at most one Where mask is fused ... (two Where masks: not done)");
# y [B, H, L, D] is static, its sequence axis said; the generated batches pad event 1
expect 0 "fusable: scale 0\.3, 2 Where masks$" $Q inspect two_wheres.onnx
expect 0 "fusable: scale 0\.3, 2 Where masks and 1 additive term$" $Q inspect two_wheres_bias.onnx
# three (main: "at most 2 Where masks are fused ... (three Where masks: not done)")
expect 0 "fusable: scale 0\.3, 3 Where masks$" $Q inspect three_wheres.onnx
for m in two_wheres two_fills two_wheres_bias three_wheres; do
    out=$($Q convert $m.onnx -o ${m}_23.onnx --fuse --seq-axis y=2,batch=0 2>&1)
    rc=$?
    [ $rc -eq 0 ] && [ -s ${m}_23.onnx ] && ok "$m: written" || bad "$m: exit $rc: $out"
    grep -qE "fuse +fused +Softmax_p: Attention 'attention': scale 0\.3, [23] Where masks" <<<"$out" &&
        ok "$m: fused" || bad "$m: not fused: $out"
    for b in 0 1; do
        grep -qE "batch $b vs reference +y: PASS" <<<"$out" && ok "$m: batch $b checked" || bad "$m: batch $b: $out"
    done
done
# the bool AND, one Attention, no Softmax left; masked_fill's order keeps its Not's input
for m in two_wheres:1 three_wheres:2; do
    $Q inspect --json ${m%:*}_23.onnx | $PY -c '
import json, sys
m = json.load(sys.stdin); ops = {o["op_type"]: o["count"] for o in m["operators"]}
assert ops.get("Attention") == 1 and "Softmax" not in ops and ops.get("And") == int(sys.argv[1]) and "Where" not in ops, ops' \
        ${m#*:} && ok "${m%:*}: one Attention, its attn_mask ${m#*:} And of the masks" || bad "${m%:*}'s output"
done
# a given batch padded, under a tenth of fp32's tolerance
$PY - <<'PYEOF' || fail "batches"
import numpy as np
rng = np.random.default_rng(2)
q, k, v = (rng.standard_normal((2, 2, 4, 8)).astype(np.float32) for _ in range(3))
np.savez("tw_in.npz", q=q, k=k, v=v, mask=np.array([[1, 1, 1, 0], [1, 0, 0, 0]], bool))
PYEOF
for m in two_wheres two_fills two_wheres_bias three_wheres; do
    expect 0 "batch 0 vs reference +y: PASS" $Q convert $m.onnx -o ${m}_checked.onnx --fuse --inputs tw_in.npz \
        --seq-axis y=2,batch=0 --tolerance rtol=1e-5,atol=1e-6
done

# refused, the same words from inspect and convert; nothing written
refused() { # MODEL REASON
    expect 0 "not fusable: $2" $Q inspect $1.onnx
    expect 1 "fuse +refused +Softmax_p: $2" $Q convert $1.onnx --plan --fuse
    expect 1 "^ortqual convert: $1\.onnx: 1 requested rewrite was refused \(see the plan\); nothing written$" \
        $Q convert $1.onnx -o $1_23.onnx --fuse --seq-axis y=2,batch=0
    [ ! -e $1_23.onnx ] && ok "$1: nothing written" || bad "$1: $1_23.onnx written"
}
refused wheres_scaled "Mul 'Mul_w1' scales the scores between two mask terms \('keys' and 'causal'\)"
refused wheres_weak "masked scores are filled with -1 \(the mask 'keys'\), which does not exclude a key"
report
