#!/usr/bin/env bash
# validate --model reads the mask's polarity from the graph, as bench --model does, where no
# contract or --mask-polarity says it: PyTorch's src_key_padding_mask (True = padding, Not'ed
# before the -inf Where). Validate assumed 1 = valid: its generated events fed the model True on
# each event's valid prefix, so the model computed the padding and zeroed the events; the run
# compared those zeros (a false green) and never the positions the model computed.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
PM="$F/torch/tx_padmask/tx_padmask_op18.onnx"
# every event padded (lengths 5..7 of 8): an unpadded one read the wrong way round is all padding
GEN=(--num-events 4 --length-policy uniform 5 7 --max-len 8 --threads 1)

# 1. generated events: the mask fed is False on each event's valid prefix, True after; said in
#    the text and in the plan
out=$("$Q" validate --model "$PM" "${GEN[@]}" --configs cpu:model:fp32 --save-outputs --allow-skip --outdir g 2>&1)
rc=$?
[ $rc = 0 ] && grep -qx "mask: input 'src_key_padding_mask' read with 1 = padding, as the graph reads it (--mask-polarity keep reads it otherwise)" <<<"$out" &&
    ok "generated: 1 = padding, as the graph reads it" || bad "generated: exit $rc: $out"
$PY - g <<'EOF' && ok "generated: the mask marks the padding, the plan says pad (graph)" || bad "generated: the mask fed or the plan"
import glob, json, sys
import numpy as np
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
for b in s["batches"]:
    m = np.load(b["inputs"].replace("g/", d + "/", 1))["src_key_padding_mask"]
    for row, n in zip(m, b["lengths"]):
        assert not row[:n].any() and row[n:].all(), (b["inputs"], row.astype(int).tolist(), n)
plan = s["plan"]["description"]
plan = json.loads(plan) if isinstance(plan, str) else plan
cfg = json.dumps(plan)
assert '"mask_polarity": "pad"' in cfg and '"mask_polarity_source": "graph"' in cfg, cfg[:400]
EOF

# 2. what is compared: expected outputs off by 1 where the model computes (its False positions)
#    fail; the same outputs unchanged pass
$PY - g <<'EOF' || bad "expected files"
import glob, sys
import numpy as np
d = sys.argv[1]
for k in range(2):
    m = np.load("%s/inputs_%03d.npz" % (d, k))["src_key_padding_mask"]
    o = dict(np.load(glob.glob("%s/outputs_*_%03d.npz" % (d, k))[0]))
    np.savez("same_%03d.npz" % k, **o)
    o["out"] = o["out"] + (~m)[:, :, None].astype(np.float32)
    np.savez("off_%03d.npz" % k, **o)
EOF
IN=(--inputs g/inputs_000.npz g/inputs_001.npz)
expect 1 "^cpu:model:fp32 +failed " "$Q" validate --model "$PM" "${IN[@]}" --expected off_000.npz off_001.npz \
    --configs expected,cpu:model:fp32 --threads 1 --outdir off
expect 0 "^cpu:model:fp32 +passed" "$Q" validate --model "$PM" "${IN[@]}" --expected same_000.npz same_001.npz \
    --configs expected,cpu:model:fp32 --threads 1 --outdir same

# 3. PyTorch's own batches (True = padding) are read as they are, without --mask-polarity pad
TX="$F/torch/tx_padmask"
expect 0 "^cpu:model:fp32 +passed" "$Q" validate --model "$PM" --inputs "$TX/inputs_000.npz" "$TX/inputs_001.npz" \
    --expected "$TX/outputs_000.npz" "$TX/outputs_001.npz" --configs expected,cpu:model:fp32 --threads 1 --outdir tx

# 4. a polarity given that the graph contradicts is refused (QA round 9a, defect 1): keep would judge
#    the padding PyTorch's batches mark and skip their tokens
one_line 2 "tx_padmask_op18.onnx: --mask-polarity keep reads input 'src_key_padding_mask' with 1 = valid, but the graph reads it with 1 = padding" "$Q" validate --model "$PM" \
    --inputs "$TX/inputs_000.npz" --expected "$TX/outputs_000.npz" --configs expected,cpu:model:fp32 \
    --mask-polarity keep --threads 1 --outdir keep

# 5. ortqual's C encoder reads 1 = valid alone: it cannot judge a model the graph says reads 1 = padding
"$Q" export encoder -o enc.onnx --save-weights w.npz >/dev/null 2>&1 || bad "exporting the encoder's weights"
one_line 2 "^ortqual validate: config 'ref:encoder:fp64': ortqual's C encoder reads its mask with 1 = valid .* \(as the graph reads its mask\)$" \
    "$Q" validate --model "$PM" --weights w.npz --heads 4 "${GEN[@]}" --configs ref:encoder:fp64,cpu:model:fp32 --outdir enc
report
