#!/usr/bin/env bash
# What someone else planted where a run reads or writes (a shared disk, an uploaded model) is
# never followed out: links in a shard's leftover .work (a --force rerun wrote its batch list
# through them), and an external-data location leading out of the model's folder (validate and
# bench opened and hashed the file it named, publishing the hash in summary.json).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
X="$OQ_SOURCE_DIR/tests/fixtures/torch/llama_like_ext"

# 1. a shard's .work holding a link to a file outside: --force clears it as an unsharded run's
V=(validate --no-cache --num-events 6 --max-len 16 --repeat 1 --warmup 0 --no-plots --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32)
must 0 "prepared 2 shards" "$T/p.log" $ORTQUAL "${V[@]}" --outdir "$T/S" --prepare-shards 2
echo original > "$T/victim.txt"
mkdir -p "$T/S/shards/0/.work"
ln -s "$T/victim.txt" "$T/S/shards/0/.work/batch_list.jsonl"
must 0 "shard 0 of 2 done" "$T/s0.log" $ORTQUAL "${V[@]}" --outdir "$T/S" --shard 0/2 --force
[ "$(cat "$T/victim.txt")" = original ] || fail "written through the planted link: $(head -c 200 "$T/victim.txt")"
[ ! -e "$T/S/shards/0/.work" ] || fail "the shard left .work: $(ls -A "$T/S/shards/0/.work")"

# 2. external data leading out of the model's folder (a link, and a location through ..):
#    refused before it is opened, with convert's message, exit 2, no hash of it anywhere
mkdir "$T/m" "$T/out"
cp "$X/llama_like_ext_op18.onnx" "$T/m/model.onnx"
cp "$X/llama_like_ext_op18.onnx.data" "$T/out/secret.data"
ln -s "$T/out/secret.data" "$T/m/llama_like_ext_op18.onnx.data"
OUT="external data location 'llama_like_ext_op18.onnx.data' leads out of the model's folder through a symbolic link"
must 2 "^ortqual validate: $T/m/model.onnx: $OUT" "$T/v.log" \
    $ORTQUAL validate --model "$T/m/model.onnx" --inputs "$X/io.npz" --configs expected,cpu:model:fp32 \
    --no-plots --progress never --outdir "$T/V"
[ ! -e "$T/V/summary.json" ] || fail "a refused model has a summary: $(head -c 300 "$T/V/summary.json")"
must 2 "^ortqual bench: $T/m/model.onnx: $OUT" "$T/b.log" \
    $ORTQUAL bench --model "$T/m/model.onnx" --inputs "$X/io.npz" --outdir "$T/B"
[ "$(wc -l < "$T/v.log")" = 1 ] && [ "$(wc -l < "$T/b.log")" = 1 ] || fail "not one line: $(cat "$T/v.log" "$T/b.log")"
echo "planted e2e: all checks passed"
