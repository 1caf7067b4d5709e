#!/usr/bin/env bash
# Screenshots of report.html for docs/report.md, taken in headless Chromium (tests/e2e/lib/cdp.py):
#   docs/img/report-demo.png     the demo `make run` writes (passing)
#   docs/img/report-failed.png   a model whose classification head was perturbed (failing, red)
#   docs/img/report-error.png    a PyTorch export ONNX Runtime refuses (ERROR, the refusal explained)
#   docs/img/report-bench.png    a CPU bench sweep
# usage: scripts/report-screenshots.sh [BUILD_DIR]   (default build; needs chromium, numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
ortqual=$(realpath "${1:-build}/ortqual")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
"$ortqual" validate --outdir demo --progress never >/dev/null 2>&1
"$ortqual" export encoder --seed 1 --save-weights w1.npz -o good.onnx >/dev/null
/usr/bin/python3 - <<'PY'
import numpy as np
w = dict(np.load("w1.npz"))
k = sorted(n for n in w if n.startswith("head") or "cls" in n)[0]
w[k] = w[k] + np.float32(0.05)   # a small, systematic change in one head
np.savez("w2.npz", **w)
PY
"$ortqual" export encoder --weights w2.npz --heads 4 -o perturbed.onnx >/dev/null
"$ortqual" validate --outdir failed --model perturbed.onnx --weights w1.npz --heads 4 --progress never \
  --configs ref:encoder:fp64,cpu:model:fp32 >/dev/null 2>&1 || true
cp -r "$src/tests/fixtures/torch/tx_encoder" . # relative paths: the page shows them
"$ortqual" validate --outdir error --model tx_encoder/tx_encoder_op23.onnx --inputs tx_encoder/io.npz \
  --configs expected,cpu:model:fp32 --progress never >/dev/null 2>&1 || true
"$ortqual" bench --variants ref,cpu:decomposed:fp32,cpu:attention24:fp32 --seq-lens 128,256,512 \
  --batch-sizes 1,4 --iters 5 --ref-iters 2 --outdir bench --force --quiet >/dev/null 2>&1
OQ_SHOT_HEIGHT=1700 /usr/bin/python3 "$src/tests/e2e/lib/cdp.py" shots demo/report.html failed/report.html \
  bench/report.html >/dev/null
OQ_SHOT_HEIGHT=1000 /usr/bin/python3 "$src/tests/e2e/lib/cdp.py" shots error/report.html >/dev/null
for n in demo failed error bench; do cp "shots/$n.png" "$src/docs/img/report-$n.png"; done
echo "wrote docs/img/report-{demo,failed,error,bench}.png"
