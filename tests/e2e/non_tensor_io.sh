#!/usr/bin/env bash
# A model value that is no tensor (a sequence, map or optional: older exporters return
# hidden_states as a list): inspect names its type (it said "undefined"), and validate and bench
# refuse the model before anything runs, in one line naming the output (validate asked for a
# saved member for it, then every run ended in ORT's "Argument is not a tensor").
# tests/fixtures/onnx/make_sequence_output.py writes the model: y = x + x, hs = [x, y].
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
M="$OQ_SOURCE_DIR/tests/fixtures/onnx/sequence_output.onnx"
"$PY" - "$T" <<'PY' || bad "cannot write the npz files"
import numpy as np, sys
x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10
np.savez(sys.argv[1] + "/in.npz", x=x)
np.savez(sys.argv[1] + "/out.npz", y=2 * x)
PY
WHY="output 'hs' is not a tensor \(sequence of float32 tensors\): ortqual cannot compare it"

expect 0 "^  output  hs +sequence of float32 tensors \(not a tensor\)$" "$Q" inspect "$M"
one_line 2 "^ortqual validate: .*sequence_output.onnx: $WHY \(export it as tensors" \
    "$Q" validate --model "$M" --inputs "$T/in.npz" --expected "$T/out.npz" --no-mask --outdir "$T/v"
one_line 2 "^ortqual bench: .*sequence_output.onnx: output 'hs' is not a tensor \(sequence of float32 tensors\): bench --model cannot compare it" \
    "$Q" bench --model "$M" --dim batch=2 --dim seq=3 --iters 2 --warmup 0 --quiet --outdir "$T/b"
[ ! -e "$T/b/summary.json" ] && ok "bench wrote no summary" || bad "bench wrote $T/b/summary.json"
report
