#!/usr/bin/env bash
# How often validate's processes open the files it runs (libopen_count.so logs each open of a
# file by process). The user's model: once by the library in the orchestrator (its contract,
# signature and SHA-256 from one read: it was opened four times), beside the tool's own look at
# its graph (the note on reduced-precision attention: the weights left unread, lean.c), and once
# in each worker (the bytes its session is made from, checked against that SHA-256). The
# encoder's weights: never by the orchestrator, which hashes the bytes it writes (it read the
# file back); by the C reference only on a cache miss, twice (hashed against the plan, then
# read), never when every batch is in the cache (the cache's key is the plan's SHA-256: the file
# was hashed for it). The models the run exports: hashed as written (the orchestrator read each
# back), read by the worker that runs it.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PRE="$OQ_BINARY_DIR/tests/libopen_count.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
small=(--num-events 4 --batch-size 2 --max-len 16 --repeat 1 --warmup 0 --no-plots --progress never)

# opens SUFFIX LOG CMD...: CMD run with every open of a path ending in SUFFIX logged in LOG (a
# process id a line); the command's own process id in $top
opens() {
  local suffix=$1 log=$2
  shift 2
  : >"$log"
  OQ_OPEN_COUNT="$suffix" OQ_OPEN_COUNT_LOG="$log" LD_PRELOAD="$PRE" "$@" >"$log.out" 2>&1 &
  top=$!
  wait $top || fail "$* -> exit $?: $(tail -5 "$log.out")"
}

# by LOG TOP: "orchestrator N, workers a b c": the orchestrator's opens, then each other process's
by() {
  local n
  n=$(grep -cx "$2" "$1" || true)
  echo "orchestrator $n, workers $(grep -vx "$2" "$1" | sort | uniq -c | awk '{print $1}' | sort | xargs)"
}

mkdir -p "$T/m"
# weights above 64 KiB a matrix: the tool's look at the graph is one open (a small file is read whole)
$ORTQUAL export encoder --width 256 --layers 1 --save-weights "$T/m/w.npz" -o "$T/m/enc.onnx" >/dev/null

# the user's model: two opens in the orchestrator (the tool's, the library's), one in the worker
# that runs it (the reference is the C one, from the weights)
opens /enc.onnx "$T/model.log" $ORTQUAL validate --model "$T/m/enc.onnx" --weights "$T/m/w.npz" --outdir "$T/mo" \
  "${small[@]}" --no-cache --configs ref:encoder:fp64,cpu:model:fp32
got=$(by "$T/model.log" $top)
[ "$got" = "orchestrator 2, workers 1" ] || fail "opens of the model: $got (expected orchestrator 2, workers 1)"

# the encoder's weights, written by the orchestrator: read by the reference on its misses alone
opens /w/weights.npz "$T/weights.log" $ORTQUAL validate --outdir "$T/w" "${small[@]}" --cache-dir "$T/cache" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
got=$(by "$T/weights.log" $top)
[ "$got" = "orchestrator 0, workers 2" ] || fail "opens of weights.npz: $got (expected orchestrator 0, workers 2)"

# an exported model: hashed as the orchestrator writes it (it read it back twice), read by its worker
opens /x/encoder_attention24_fp32.onnx "$T/export.log" $ORTQUAL validate --outdir "$T/x" "${small[@]}" --no-cache \
  --configs ref:encoder:fp64,cpu:attention24:fp32
got=$(by "$T/export.log" $top)
[ "$got" = "orchestrator 0, workers 1" ] || fail "opens of the exported model: $got (expected orchestrator 0, workers 1)"

# every batch in the cache: the reference's key is the plan's SHA-256, the file is not read
rm -rf "$T/w"
opens /w/weights.npz "$T/cached.log" $ORTQUAL validate --outdir "$T/w" "${small[@]}" --cache-dir "$T/cache" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
grep -q "2 of 2 batches from cache" "$T/cached.log.out" || fail "second run: not from the cache: $(tail -5 "$T/cached.log.out")"
got=$(by "$T/cached.log" $top)
[ "$got" = "orchestrator 0, workers " ] || fail "opens of weights.npz, every batch cached: $got (expected none)"
# a user's batch: read once by the orchestrator, one open, whose bytes give the SHA-256 its record
# names as its source, its event ids, inputs and saved outputs (it was read for each: 3 opens of
# an --inputs file, 5 of an io.npz, and the hash could be of other bytes than those judged); the
# workers read the batch as the orchestrator rewrote it. A saved-outputs reference also has its
# archive's comment read up front (who saved them, provenance.c): one more open of the file
# holding the outputs.
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/bert_like"
mkdir -p "$T/u"
cp "$FX/inputs_000.npz" "$T/u/user_in.npz"
cp "$FX/outputs_000.npz" "$T/u/user_out.npz"
cp "$FX/io.npz" "$T/u/user_io.npz"
user=(validate --model "$FX/bert_like_op18.onnx" --configs expected,cpu:model:fp32 --no-plots --no-cache --progress never)
opens /user_in.npz "$T/in.log" $ORTQUAL "${user[@]}" --inputs "$T/u/user_in.npz" --expected "$T/u/user_out.npz" --outdir "$T/ui"
got=$(by "$T/in.log" $top)
[ "$got" = "orchestrator 1, workers " ] || fail "opens of an --inputs file: $got (expected orchestrator 1, workers none)"
opens /user_out.npz "$T/out.log" $ORTQUAL "${user[@]}" --inputs "$T/u/user_in.npz" --expected "$T/u/user_out.npz" --outdir "$T/uo"
got=$(by "$T/out.log" $top)
[ "$got" = "orchestrator 2, workers " ] || fail "opens of an --expected file: $got (expected orchestrator 2, workers none)"
opens /user_io.npz "$T/io.log" $ORTQUAL "${user[@]}" --inputs "$T/u/user_io.npz" --outdir "$T/uio"
got=$(by "$T/io.log" $top)
[ "$got" = "orchestrator 2, workers " ] || fail "opens of an io.npz: $got (expected orchestrator 2, workers none)"
# the hash recorded is the file's (the bytes read)
want=$(sha256sum "$T/u/user_io.npz" | cut -d' ' -f1)
grep -q "\"source_sha256\": \"$want\"" "$T/uio/summary.json" || fail "summary.json: source_sha256 is not $want"
echo "reads: ok"
