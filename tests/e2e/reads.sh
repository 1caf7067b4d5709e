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
echo "reads: ok"
