#!/usr/bin/env bash
# position embeddings on CUDA at ORT's default level with only GatherToSliceFusion disabled
set -u
sh .gpu-bundle/unpack.sh /tmp/ort >/dev/null
export LD_LIBRARY_PATH=$PWD/.gpu-build/lib:/tmp/ort:/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
B=.gpu-build/ortqual; FX=tests/fixtures/torch
E="--ort-lib /tmp/ort/libonnxruntime.so --ep-lib cuda=/tmp/ort/libonnxruntime_providers_cuda.so"
D="--session-config optimization.disable_specified_optimizers=GatherToSliceFusion"
r() { local n=$1; shift; timeout 300 "$@" > "$OUT/$n.txt" 2>&1; echo "$n $?" >> "$OUT/steps.txt"; }
for case in decoder_lm:18 decoder_lm:23 bert_like:18; do
  fx=${case%%:*}; op=${case#*:}; m=$FX/$fx/${fx}_op$op.onnx; id=$fx-op$op
  bt="--inputs $FX/$fx/inputs_000.npz --inputs $FX/$fx/inputs_001.npz"; ex="--expected $FX/$fx/outputs_000.npz --expected $FX/$fx/outputs_001.npz"
  r rm-$id-nog2s $B validate $E --no-plots --model $m $bt $ex --configs expected,cpu:model:fp32,cuda:model:fp32 \
    --require-full-gpu --require cuda:model:fp32 $D --outdir /tmp/w/rm-$id
  r convert-$id $B convert $m -o /tmp/$id-fast.onnx --force --flash $bt $ex --ort-lib /tmp/ort/libonnxruntime.so
  r flash-$id-nog2s $B validate $E --no-plots --model /tmp/$id-fast.onnx --features input_ids --mask attention_mask $bt $ex \
    --configs expected,cuda:model:fp16 --expect-kernel flash --require-dispatch --prove-teeth --require-full-gpu $D \
    --outdir /tmp/w/flash-$id
done
