#!/usr/bin/env bash
# ortqual bench: what is checked before the sweep (duplicate or empty list items, zero sizes,
# repeated options, the output folder) and what the sweep outlives (a shape whose inputs do not
# fit in memory is an oom row).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
TINY=(--num-heads 2 --head-dim 8 --iters 1 --warmup 0 --variants cpu:attention24:fp32 --quiet)

# 1. A length whose inputs cannot be allocated: oom rows, the other lengths still ran, exit 0.
#    (under ASan an allocation that large aborts unless the allocator may return NULL, as malloc does)
expect 0 "wrote" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1" \
    "$Q" bench "${TINY[@]}" --seq-lens 16,100000000000 --outdir "$T/oom"
if "$PY" - "$T/oom" <<'PYEOF'; then ok "oom rows for an impossible length, the rest ok"; else bad "oom rows"; fi
import json, sys
res = json.load(open(sys.argv[1] + "/summary.json"))["results"]
got = [(r["seq_len"], r["masked"], r["status"]) for r in res]
assert got == [(16, True, "ok"), (16, False, "ok"), (100000000000, True, "oom"),
               (100000000000, False, "oom")], got
assert "out of memory" in res[2]["error"], res[2]["error"]
PYEOF

# 2. The output folder is checked before the sweep: unwritable (exit 3), a file (exit 2), not
#    empty without --force (exit 2: a user's summary.csv is not replaced); nothing runs.
if [ "$(id -u)" -eq 0 ]; then RO=/proc/ortqual-bench-out; else mkdir "$T/ro" && chmod 555 "$T/ro"; RO="$T/ro/out"; fi
out=$("$Q" bench "${TINY[@]}" --seq-lens 8 --outdir "$RO" 2>&1); rc=$?
if [ "$rc" -eq 3 ] && grep -q "^ortqual bench: --outdir: $RO: cannot create directory" <<<"$out" && ! grep -q "^variant" <<<"$out"; then
    ok "read-only output folder: exit 3 before the sweep"; else bad "read-only output folder: rc $rc: $out"; fi
touch "$T/file"
expect 2 "^ortqual bench: --outdir: $T/file: exists and is not a directory" "$Q" bench "${TINY[@]}" --seq-lens 8 --outdir "$T/file/x"
mkdir "$T/mine" && echo mine >"$T/mine/summary.csv"
expect 2 "$T/mine: not empty \(it holds 'summary.csv'\).*--force" "$Q" bench "${TINY[@]}" --seq-lens 8 --outdir "$T/mine"
[ "$(cat "$T/mine/summary.csv")" = mine ] && ok "the user's summary.csv kept" || bad "the user's summary.csv replaced"
expect 0 "wrote" "$Q" bench "${TINY[@]}" --seq-lens 8 --modes masked --profile-runs 1 --outdir "$T/p"
expect 2 "$T/p/summary.json exists \(use --force" "$Q" bench "${TINY[@]}" --seq-lens 8 --outdir "$T/p"
echo keep >"$T/p/profiles/notes.txt"
expect 0 "wrote" "$Q" bench "${TINY[@]}" --seq-lens 8 --modes masked --outdir "$T/p" --force
got=$(ls "$T/p/profiles")
[ "$got" = notes.txt ] && ok "--force: the earlier run's profiles removed, other files kept" || bad "profiles left: $got"

# 3. A value listed twice (two rows of one shape: plot and report refuse the summary) or an
#    empty item (a stray comma) is refused before anything runs, naming it; so is a size 0.
M="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like/mlpf_like_op18.onnx"
MODEL=(--model "$M" --iters 1 --warmup 0 --quiet)
expect 2 "^ortqual bench: --seq-lens: 16 is listed twice \(items 1 and 2\)$" "$Q" bench "${TINY[@]}" --seq-lens 16,16 --outdir "$T/d1"
expect 2 "^ortqual bench: --batch-sizes: 2 is listed twice \(items 1 and 3\)$" "$Q" bench "${TINY[@]}" --batch-sizes 2,1,2 --outdir "$T/d1"
expect 2 "^ortqual bench: --variants: 'ref:sdpa:fp64' is listed twice \(items 1 and 2\)$" "$Q" bench --variants ref,ref:sdpa:fp64 --outdir "$T/d1"
expect 2 "^ortqual bench: --seq-lens '16,,32': item 2 is empty$" "$Q" bench "${TINY[@]}" --seq-lens 16,,32 --outdir "$T/d1"
expect 2 "^ortqual bench: --variants 'ref,': item 2 is empty$" "$Q" bench --variants ref, --outdir "$T/d1"
expect 2 "^ortqual bench: --sweep: dimension 'seq=8,8': 8 is listed twice \(items 1 and 2\)$" "$Q" bench "${MODEL[@]}" --dim batch=1 --sweep seq=8,8 --outdir "$T/d1"
expect 2 "^ortqual bench: --sweep: dimension 'seq=4,,8': item 2 is empty$" "$Q" bench "${MODEL[@]}" --dim batch=1 --sweep seq=4,,8 --outdir "$T/d1"
expect 2 "^ortqual bench: --dim: dimension 'batch=0': size 0: want >= 1$" "$Q" bench "${MODEL[@]}" --dim batch=0 --sweep seq=8 --outdir "$T/d1"
expect 2 "^ortqual bench: --shape: --shape 'features=0,8,17': size 0 \(axis 0\)" "$Q" bench "${MODEL[@]}" --shape features=0,8,17 --outdir "$T/d1"
expect 2 "^ortqual bench: --shape: --shape 'features=1,,17': item 2 is empty" "$Q" bench "${MODEL[@]}" --shape features=1,,17 --outdir "$T/d1"
# a length whose query tensor overflows 2^63 bytes names the option, the value and the tensor
expect 2 "^ortqual bench: --seq-lens 4611686018427387904 \(--batch-sizes 1\): the query \[1,2,4611686018427387904,8\] float32: its size overflows 2\^63 bytes$" \
    "$Q" bench "${TINY[@]}" --seq-lens 4611686018427387904 --modes unmasked --outdir "$T/d1"
expect 2 "^ortqual plot: --format 'png,,svg': item 2 is empty$" "$Q" plot "$T/oom/summary.json" --format png,,svg --out "$T/d1"
# 4. A file option given twice is refused (the last one won silently).
D="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like"
expect 2 "^ortqual bench: --inputs given twice \('$D/inputs_000.npz' and '$D/inputs_001.npz'\)" "$Q" bench "${MODEL[@]}" \
    --inputs "$D/inputs_000.npz" --inputs "$D/inputs_001.npz" --outdir "$T/d1"
expect 2 "^ortqual bench: --model given twice \('$M' and '$D/mlpf_like_op23.onnx'\)" "$Q" bench "${MODEL[@]}" \
    --model "$D/mlpf_like_op23.onnx" --outdir "$T/d1"
# ... a named dimension, input shape or sweep given twice with another value, saying both values
expect 2 "^ortqual bench: --dim batch given twice \('batch=1' and 'batch=2'\)$" "$Q" bench "${MODEL[@]}" \
    --dim batch=1 --dim batch=2 --outdir "$T/d1"
expect 2 "^ortqual bench: --shape x given twice \('x=1,4' and 'x=1,5'\)$" "$Q" bench "${MODEL[@]}" \
    --shape x=1,4 --shape x=1,5 --outdir "$T/d1"
# ... and the same value again is taken (docs/usage.md: refused only with another value)
expect 0 "--dim NAME=V" "$Q" bench "${MODEL[@]}" --model "$M" --dim batch=1 --dim batch=1 --shape x=1,L --shape x=1,L \
    --sweep L=4,8 --sweep L=4,8 --seq-dim L --seq-dim L --help
[ ! -e "$T/d1" ] && ok "nothing written by the refusals" || bad "a refusal wrote $T/d1"

report
