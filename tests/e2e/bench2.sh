#!/usr/bin/env bash
# bench2: bench --model holds an --inputs mask to the contract as validate does.
# 1. without --expected, bench --model timed a left-padded (or holed) mask that validate refuses:
#    now refused, exit 2, validate's very line (one function: src/axes/maskin.c), nothing written;
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
TX="$F/torch/tx_encoder"
RUN=(--iters 1 --warmup 0 --threads 1 --quiet)

# tx_encoder's batch 0 (lengths 50, 31, 7 of 56): event 1 padded on the left, event 2 with a hole
$PY - "$TX/inputs_000.npz" <<'PYEOF' || bad "making the batch files"
import numpy as np, sys
z = dict(np.load(sys.argv[1]))
m = z["mask"].copy()
m[1] = m[1][::-1]
np.savez("left.npz", features=z["features"], mask=m)
m = z["mask"].copy()
m[2, 3] = False
np.savez("hole.npz", features=z["features"], mask=m)
PYEOF
LEFT="left.npz: mask 'mask': event 1: left padding: position 0 is 0 but position 25 is 1 \(a valid row is ones first"
one_line 2 "^ortqual bench: $LEFT" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs left.npz "${RUN[@]}" --outdir b1
one_line 2 "^ortqual bench: hole.npz: mask 'mask': event 2: hole" \
    "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs hole.npz "${RUN[@]}" --outdir b2
[ ! -e b1 ] && [ ! -e b2 ] && ok "a broken mask: nothing written" || bad "a broken mask: an output folder was made"
# validate's line, word for word, for both files
for f in left hole; do
    b=$("$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs $f.npz "${RUN[@]}" --outdir b3 2>&1)
    v=$("$Q" validate --model "$TX/tx_encoder_op18.onnx" --inputs $f.npz --expected "$TX/outputs_000.npz" --no-plots \
        --outdir v_$f 2>&1)
    [ -n "$b" ] && [ "${b#ortqual bench: }" = "${v#ortqual validate: }" ] && ok "$f: validate says the same line" ||
        bad "$f: bench: $b / validate: $v"
done
# the batch as saved (every row a prefix): timed
expect 0 "PASSED" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs "$TX/inputs_000.npz" "${RUN[@]}" --outdir b4

report
