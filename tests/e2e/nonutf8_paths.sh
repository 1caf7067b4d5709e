#!/usr/bin/env bash
# Paths that are not UTF-8 (any bytes but '/' and 0 are a file name on Linux) run as any other:
# the worker plans and the batch list carry them byte for byte ("<key>_hex" beside a U+FFFD
# rendering), what is written for people shows them with U+FFFD. They failed: an --outdir with
# \xff was "the batch list cannot be written" (exit 2), a --model there "could not run: give
# exactly one of a model path and model bytes" (exit 3), replay the same.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
PY=/usr/bin/python3
cd "$T"
W=(--repeat 1 --no-cache --progress never)
V=(--num-events 4 --batch-size 2 "${W[@]}")

# batches DIR: summary.json is JSON; its batches' inputs show the folder with U+FFFD and their
# inputs_hex give the real path, which exists
batches() {
    local got
    got=$($PY - "$1" <<'EOF'
import json, os, sys
d = json.load(open(os.fsencode(sys.argv[1]) + b"/summary.json"))
b = d["batches"][0]
real = bytes.fromhex(b["inputs_hex"])
print("\ufffd" in b["inputs"], os.path.isfile(real), real.startswith(os.fsencode(sys.argv[1])), d["verdict"])
EOF
    )
    [ "$got" = "True True True passed" ] && ok "$1: summary" || bad "$1: summary: $got"
}

mkdir weird
expect 0 "verdict: PASSED" $Q validate --configs ref:encoder:fp64,cpu:attention24:fp32 "${V[@]}" --save-outputs \
    --outdir $'weird/bad\xff\xfe'
batches $'weird/bad\xff\xfe'
n=$(ls $'weird/bad\xff\xfe'/plots/*.png $'weird/bad\xff\xfe'/outputs_01_*.npz 2>/dev/null | wc -l)
[ "$n" -ge 3 ] && ok "figures and saved outputs there" || bad "figures and saved outputs: $n"

# a model, its weights and inputs under such a folder
B=$'weird/bad\xff\xfe'
mkdir $'m\xe9'
cp "$B/encoder_attention24_fp32.onnx" $'m\xe9/model.onnx'
cp "$B/weights.npz" $'m\xe9/w.npz'
cp "$B/inputs_000.npz" $'m\xe9/in.npz'
expect 0 "verdict: PASSED" $Q validate --model $'m\xe9/model.onnx' --weights $'m\xe9/w.npz' \
    --configs ref:encoder:fp64,cpu:model:fp32 --inputs $'m\xe9/in.npz' "${W[@]}" --outdir $'v\xe9'
[ "$($PY -c 'import json,os,sys; d=json.load(open(os.fsencode(sys.argv[1]))); c=d["configs"][1]; print(c["model_file"], bytes.fromhex(c["model_file_hex"]))' $'v\xe9/summary.json')" = \
  "m�/model.onnx b'm\\xe9/model.onnx'" ] && ok "model_file shown and exact" || bad "model_file: $(grep -a model_file $'v\xe9/summary.json')"
# against ORT 1.30's CPU: one build on both sides is refused as no comparison
expect 0 "verdict: PASSED" $Q replay --model $'m\xe9/model.onnx' --inputs $'m\xe9/in.npz' --ep cpu --repeat 1 \
    --ort-lib "$OQ_SOURCE_DIR/third_party/onnxruntime-1.30/lib/libonnxruntime.so.1" --reference-ort-lib "$OQ_ORT_LIB" \
    --progress never --outdir $'r\xff'
# sharded: the plan's identity does not depend on how a path is carried
S=(validate --configs ref:encoder:fp64,cpu:attention24:fp32 "${V[@]}" --no-plots --outdir $'s\xff')
expect 0 "prepared 2 shards" $Q "${S[@]}" --prepare-shards 2
for i in 0 1; do expect 0 "shard $i of 2 done" $Q "${S[@]}" --shard $i/2; done
expect 0 "verdict: PASSED" $Q merge $'s\xff'
# a file that is not there is named (shown with U+FFFD in error.json, which stays JSON)
expect 2 "/nothere.onnx: cannot open" $Q validate --model $'m\xe9/nothere.onnx' --weights $'m\xe9/w.npz' \
    --configs ref:encoder:fp64,cpu:model:fp32 --inputs $'m\xe9/in.npz' "${W[@]}" --outdir $'e\xff'
[ "$($PY -c 'import json,os,sys; print(json.load(open(os.fsencode(sys.argv[1])))["error"])' $'e\xff/error.json')" = \
  "m�/nothere.onnx: cannot open: No such file or directory" ] && ok "error.json" || bad "error.json: $(cat $'e\xff/error.json')"
report
