#!/usr/bin/env bash
# same-clock.sh OUTDIR: ONNX Runtime and PyTorch on the same clocks, on a GPU host, into one table
# (OUTDIR/same-clock.csv and OUTDIR/same-clock.md; docs/results.md says how to read it).
#
# The problem: one attention, q, k, v [1, 8, L, 64] float16 in and out, no mask, for L in $LENS
# and the kernels flash, efficient and math. ORT runs the model `ortqual export sdpa --io-dtype
# float16` writes (one Attention node, no Cast) through `ortqual bench --model` on the CUDA EP,
# one run per kernel (--ep-option sdpa_kernel=1, 2, 16), device I/O binding, ORT's profile of
# --profile-runs more runs; PyTorch runs F.scaled_dot_product_attention on the same shapes
# (bench/pytorch_sdpa.py). scripts/same_clock.py joins them:
#   wall   per synchronized call (ORT: CLOCK_MONOTONIC around Run + SynchronizeBoundOutputs;
#          PyTorch: perf_counter around the call + torch.cuda.synchronize())
#   kernel GPU kernel time per call (ORT: CUPTI's kernel records of the profiled runs, bench --cupti
#          with the toolkit's libcupti; PyTorch: torch.profiler, which reads CUPTI too)
#
# Expects (as scripts/h200-evidence.sh): ORT with the CUDA EP unpacked in $ORT (default /tmp/ort;
# docs/gpu.md), the tool built by scripts/gpu-build.sh in $GPU_BUILD (default .gpu-build),
# LD_LIBRARY_PATH with the build's lib/, $ORT and CUDA 13 for ortqual, and python3 with torch
# (run without LD_LIBRARY_PATH: PyTorch brings its own cuDNN). Each step is logged to
# OUTDIR/<step>.txt and its exit status to OUTDIR/steps.txt; a failing step does not stop the
# others. Nothing here runs without a GPU.
set -u
OUT=${1:?usage: same-clock.sh OUTDIR}
ORT=${ORT:-/tmp/ort}
B=${GPU_BUILD:-.gpu-build}/ortqual
LENS=${LENS:-512,1024,2048,4096,8192,16384}
ITERS=${ITERS:-20}
PROFILE_RUNS=${PROFILE_RUNS:-10}
E=(--ort-lib "$ORT/libonnxruntime.so" --ep-lib "cuda=$ORT/libonnxruntime_providers_cuda.so")
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
: > "$OUT/steps.txt"
step() { # step NAME TIMEOUT CMD...: run, log to OUT/NAME.txt, record the exit code
    local name=$1 t=$2
    shift 2
    echo "== $name: $*" >&2
    timeout "$t" "$@" >"$OUT/$name.txt" 2>&1
    echo "$name $?" >>"$OUT/steps.txt"
}

step export 60 "$B" export sdpa --format attention24 --attention-dtype float16 --io-dtype float16 --mask none \
    --heads 8 --head-dim 64 -o "$OUT/sdpa_fp16.onnx" --force
for k in flash:1 efficient:2 math:16; do
    name=${k%%:*}
    step "ort-$name" 600 "$B" bench "${E[@]}" --model "$OUT/sdpa_fp16.onnx" --ep cuda --ep-option "sdpa_kernel=${k#*:}" \
        --dim batch=1 --sweep "seq=$LENS" --io-binding device --warmup 3 --iters "$ITERS" \
        --profile-runs "$PROFILE_RUNS" --cupti --outdir "$OUT/ort-$name" --force
done
step pytorch 600 env -u LD_LIBRARY_PATH python3 "$here/bench/pytorch_sdpa.py" --seq-lens "$LENS" --batch 1 --heads 8 \
    --head-dim 64 --warmup 3 --iters "$ITERS" --profile-iters "$PROFILE_RUNS" --json "$OUT/pytorch-sdpa.json"
step join 60 python3 "$here/scripts/same_clock.py" --ort "flash=$OUT/ort-flash/summary.json" \
    --ort "efficient=$OUT/ort-efficient/summary.json" --ort "math=$OUT/ort-math/summary.json" \
    --torch "$OUT/pytorch-sdpa.json" --out "$OUT"
cat "$OUT/steps.txt"
[ -f "$OUT/same-clock.md" ] && cat "$OUT/same-clock.md"
