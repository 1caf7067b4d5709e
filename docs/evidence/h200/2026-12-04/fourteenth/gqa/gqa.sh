#!/usr/bin/env bash
set -u
sh .gpu-bundle/unpack.sh /tmp/ort >/dev/null
export LD_LIBRARY_PATH=$PWD/.gpu-build/lib:/tmp/ort:/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
B=.gpu-build/ortqual
E="--ort-lib /tmp/ort/libonnxruntime.so --ep-lib cuda=/tmp/ort/libonnxruntime_providers_cuda.so"
for g in 8 32; do
  timeout 240 $B bench $E --variants cuda:attention24:fp16:flash,cuda:attention24:fp16:efficient,cuda:attention24:fp16 \
    --num-heads 32 --kv-heads $g --head-dim 128 --seq-lens 1024,4096 --modes both --iters 20 --no-reference \
    --outdir $OUT/gqa$g > $OUT/gqa$g.txt 2>&1; echo "gqa$g $?" >> $OUT/steps.txt
done
timeout 120 $B export sdpa --heads 8 --kv-heads 2 --head-dim 64 --format attention24 --mask seqlen --attention-dtype float16 -o /tmp/gqa.onnx > $OUT/export.txt 2>&1
timeout 120 $B validate $E --no-plots --model /tmp/gqa.onnx --configs ref:sdpa:fp64,cuda:model:fp16 --expect-kernel flash --prove-teeth --require-dispatch \
   --outdir $OUT/vgqa > $OUT/vgqa.txt 2>&1; echo "vgqa $?" >> $OUT/steps.txt
rm -f $OUT/*/*.npz $OUT/*/*.html $OUT/*/*.onnx
