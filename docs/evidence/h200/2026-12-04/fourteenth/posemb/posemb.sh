#!/usr/bin/env bash
# position-embedding models on CUDA: ORT's optimizations at 1 (basic) against the default
set -u
sh .gpu-bundle/unpack.sh /tmp/ort >/dev/null
export LD_LIBRARY_PATH=$PWD/.gpu-build/lib:/tmp/ort:/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
B=.gpu-build/ortqual; FX=tests/fixtures/torch
E="--ort-lib /tmp/ort/libonnxruntime.so --ep-lib cuda=/tmp/ort/libonnxruntime_providers_cuda.so"
r() { local n=$1; shift; timeout 300 "$@" > "$OUT/$n.txt" 2>&1; echo "$n $?" >> "$OUT/steps.txt"; }
for case in decoder_lm:18 decoder_lm:23 bert_like:18; do
  fx=${case%%:*}; op=${case#*:}; m=$FX/$fx/${fx}_op$op.onnx; id=$fx-op$op
  bt="--inputs $FX/$fx/inputs_000.npz --inputs $FX/$fx/inputs_001.npz"; ex="--expected $FX/$fx/outputs_000.npz --expected $FX/$fx/outputs_001.npz"
  for lvl in 1 2; do
    r rm-$id-g$lvl $B validate $E --no-plots --model $m $bt $ex --configs expected,cpu:model:fp32,cuda:model:fp32 \
      --require-full-gpu --require cuda:model:fp32 --graph-opt-level $lvl --outdir $OUT/w/rm-$id-g$lvl
  done
  r convert-$id $B convert $m -o /tmp/$id-fast.onnx --force --flash $bt $ex --ort-lib /tmp/ort/libonnxruntime.so
  r flash-$id-g1 $B validate $E --no-plots --model /tmp/$id-fast.onnx --features input_ids --mask attention_mask $bt $ex \
    --configs expected,cpu:model:fp16,cuda:model:fp16 --expect-kernel flash --require-dispatch --prove-teeth \
    --require-full-gpu --graph-opt-level 1 --outdir $OUT/w/flash-$id-g1
  for which in export fast; do
    mm=$m; prec=fp32; [ $which = fast ] && mm=/tmp/$id-fast.onnx && prec=fp16
    r latency-$id-$which $B replay $E --reference-ort-lib /tmp/ort/libonnxruntime.so --ep cuda --model $mm \
      --features input_ids --mask attention_mask $bt --precision $prec --warmup 3 --repeat 50 --graph-opt-level 1 \
      --outdir $OUT/w/lat-$id-$which
  done
done
for d in $OUT/w/*; do cp $d/summary.json $OUT/$(basename $d)-summary.json 2>/dev/null; done
rm -rf $OUT/w; find $OUT -name "*.json" -size +300k -delete
cd $OUT && tar czf /tmp/pe.tgz . && rm -rf $OUT/* && mv /tmp/pe.tgz $OUT/
