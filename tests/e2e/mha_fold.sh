#!/usr/bin/env bash
# nn.MultiheadAttention's own fold of the heads into the batch axis, with no 4-D value ([L, B, E]
# -> Reshape [L, B*H, D] -> Transpose(1,0,2) for Q, K and V; its need_weights path and the legacy
# exporter write it): the tx_encoder fixture rewritten into that form (lib/mha_fold.py; the same
# numbers as PyTorch's). inspect reads H and D through the fold (text and --json), convert fuses
# each chain into an Attention with q_num_heads/kv_num_heads, and the converted model validates
# against PyTorch's saved outputs. A hand edit that folds K into other heads than Q is refused
# with both folds named. The head dim is reported for every fixture's attention too.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q="$ORTQUAL"
PY=/usr/bin/python3
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
TX="$F/tx_encoder"
cd "$T" || exit 1
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/mha_fold.py" "$TX/tx_encoder_op18.onnx" fold.onnx &&
    $PY "$OQ_SOURCE_DIR/tests/e2e/lib/mha_fold.py" "$TX/tx_encoder_op18.onnx" fold_k.onnx 0,-1,16 ||
    fail "making the folded models"

# 1. the fold is what PyTorch computed (nothing ortqual rewrote: a plain validate)
expect 0 "verdict: PASSED" "$Q" validate --model fold.onnx --inputs "$TX/inputs_*.npz" --expected "$TX/outputs_*.npz" \
    --no-plots --outdir v_fold

# 2. inspect: heads and head dim through the fold, in text and JSON
expect 0 "decomposed 'node_Softmax_108' axis=-1 \(heads 4, head dim 8\)" "$Q" inspect fold.onnx
expect 0 "heads folded into the batch axis: 4" "$Q" inspect fold.onnx
heads=$("$Q" inspect --json fold.onnx | $PY -c "import json,sys; \
print(' '.join('%s/%s/%s' % (a['name'], a['heads'], a['head_dim']) for a in json.load(sys.stdin)['attention']))")
[ "$heads" = "node_Softmax_108/4/8 node_Softmax_213/4/8" ] && ok "inspect --json: heads 4, head_dim 8 for both layers" ||
    bad "inspect --json heads/head_dim: '$heads'"

# 3. convert: each chain one Attention with the fold's heads, checked on the fixture's batches
expect 0 "fused .*Attention 'attention'" "$Q" convert fold.onnx -o fused.onnx --fuse --expand-mask \
    --inputs "$TX/inputs_*.npz" --expected "$TX/outputs_*.npz"
expect 0 "Attention 'attention' scale=0.353553355 q_num_heads=4 kv_num_heads=4 \(heads 4, head dim 8\)" "$Q" inspect fused.onnx
n=$("$Q" inspect fused.onnx | grep -c "q_num_heads=4 kv_num_heads=4")
[ "$n" = 2 ] && ok "both layers fused with 4 heads" || bad "layers fused with 4 heads: $n"
expect 0 "verdict: PASSED" "$Q" validate --model fused.onnx --inputs "$TX/inputs_*.npz" --expected "$TX/outputs_*.npz" \
    --no-plots --outdir v_fused
expect 0 "written: flash.onnx" "$Q" convert fold.onnx -o flash.onnx --flash \
    --inputs "$TX/inputs_*.npz" --expected "$TX/outputs_*.npz"
expect 0 "q_num_heads=4 kv_num_heads=4 is_causal=0 \(heads 4, head dim 8\)" "$Q" inspect flash.onnx

# 4. K folded into 2 heads of 16 where Q has 4 of 8: refused, both Reshapes named; the other
#    layer, untouched, still fuses
msg="Q is folded into 4 heads of 8 \(Reshape 'node_view_1'\), K into 2 heads of 16 \(Reshape 'node_view_2'\)"
expect 0 "not fusable: $msg" "$Q" inspect fold_k.onnx
expect 1 "fuse +refused +node_Softmax_108: $msg" "$Q" convert fold_k.onnx -o out_k.onnx --fuse
h=$("$Q" inspect --json fold_k.onnx | $PY -c "import json,sys; print(json.load(sys.stdin)['attention'][0]['heads'])")
[ "$h" = None ] && ok "refused chain: heads null" || bad "refused chain: heads $h"
[ -e out_k.onnx ] && bad "out_k.onnx written" || ok "nothing written for the refused chain"

# 5. the head dim beside the heads for the fixtures' other forms (rank 4, an Attention node)
expect 0 "\(heads 4, head dim 12\)" "$Q" inspect "$F/mlpf_like/mlpf_like_op18.onnx"
expect 0 "Attention 'node_scaled_dot_product_attention' .*\(heads 4, head dim 8\)" "$Q" inspect "$F/decoder_lm/decoder_lm_op23.onnx"
report
