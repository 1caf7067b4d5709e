#!/usr/bin/env bash
# A full disk part-way through `merge`, `validate`, `bench` or `plot`: exit 3, and none of the files
# that call wrote is left behind (no validate.csv or figures without their summary.json, no
# summary.json without its summary.csv, no partial figure set).
# The disk is a real tmpfs in a private mount namespace (as exit_codes.sh), mounted at a series
# of sizes so that one of them runs out in the middle of the outputs.
set -uo pipefail
. "${OQ_SOURCE_DIR:?}/tests/e2e/lib/mountns.sh"
: "${ORTQUAL:?}" "${OQ_SOURCE_DIR:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"
trap 'cd /; umount "$T/disk" 2>/dev/null; rm -rf "$T"' EXIT
mkdir disk

# sizes FROM_KB TO_KB: about 16 sizes from one to the other, in KiB
sizes() { local step=$(( ($2 - $1) / 16 )); [ "$step" -ge 4 ] || step=4; seq "$1" "$step" "$2"; }
kb() { du -sk --apparent-size "$@" | awk '{s += $1} END {print s + 0}'; }
remount() { umount disk 2>/dev/null; mount -t tmpfs -o size="$1"k tmpfs disk || fail "cannot mount a tmpfs"; }

# ---- merge ------------------------------------------------------------------------------
V=(validate --no-cache --num-events 4 --batch-size 2 --repeat 1 --configs ref:encoder:fp64,cpu:attention24:fp32)
must 0 "prepared 2 shards" p.log $Q "${V[@]}" --outdir P --prepare-shards 2
for i in 0 1; do must 0 "shard $i of 2" p$i.log $Q "${V[@]}" --outdir P --shard $i/2; done
cp -a P whole && must 0 "merged 2 shards" whole.log $Q merge whole
base=$(kb P)
full=$((base + $(kb whole/validate.csv whole/plots whole/summary.json whole/report.html) + 64))
midway=0
for s in $(sizes "$base" "$full"); do
    remount "$s"
    cp -a P disk/ 2>/dev/null || continue
    rc=0
    $Q merge disk/P >merge.log 2>&1 || rc=$?
    [ "$rc" -eq 0 ] && continue
    [ "$rc" -eq 3 ] || fail "merge on a ${s}k disk: exit $rc, expected 3: $(tail -3 merge.log)"
    grep -q "summary.json: write failed" merge.log && midway=1
    left=$(cd disk/P && ls -d validate.csv summary.json report.html plots/*.png plots/*.svg 2>/dev/null)
    [ -z "$left" ] || fail "merge on a ${s}k disk ($(tail -1 merge.log)) left: $left"
done
[ "$midway" -eq 1 ] || fail "no disk size between ${base}k and ${full}k ran out at summary.json"

# ---- validate ---------------------------------------------------------------------------
# A full disk is an output that cannot be written (exit 3, "write failed"), also where the
# summary's batch records are copied in: once "out of memory" and exit 2, an input's status.
H="$OQ_SOURCE_DIR/tests/fixtures/torch/hand_attention"
VA=(validate --model "$H/hand_attention_op18.onnx" --inputs "$H/io.npz" --progress never --no-plots)
must 0 "PASSED" v.log $Q "${VA[@]}" --outdir vfull
midway=0
for s in $(sizes 8 $(($(kb vfull) + 32))); do
    remount "$s"
    rc=0
    $Q "${VA[@]}" --outdir disk/v >v.log 2>&1 || rc=$?
    [ "$rc" -eq 0 ] && continue
    [ "$rc" -eq 3 ] || fail "validate on a ${s}k disk: exit $rc, expected 3: $(tail -3 v.log)"
    grep -q "summary.json: write failed: No space left on device" v.log && midway=1
done
[ "$midway" -eq 1 ] || fail "no disk size between 8k and $(kb vfull)k ran out at summary.json"

# ---- bench ------------------------------------------------------------------------------
# summary.json and summary.csv are one set: a disk that runs out at summary.csv takes this run's
# summary.json away again (left behind, it made a rerun refuse: "summary.json exists"); report.html,
# read off them, is a diagnostic (said, not fatal, as in validate). Every page count up to the set.
TX="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder/tx_encoder_op18.onnx"
BA=(bench --model "$TX" --dim batch=1 --dim seq=8 --iters 2 --warmup 0 --quiet)
must 0 "wrote" b.log $Q "${BA[@]}" --outdir bfull
midway=0
for s in $(seq 4 4 $(($(kb bfull) + 8))); do
    remount "$s"
    rc=0
    $Q "${BA[@]}" --outdir disk/b >b.log 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        [ -s disk/b/summary.json ] && [ -s disk/b/summary.csv ] || fail "bench on a ${s}k disk: exit 0 without its set: $(ls disk/b)"
        [ -e disk/b/report.html ] || grep -q "report.html not written" b.log || fail "bench on a ${s}k disk: no report.html, not said"
        continue
    fi
    [ "$rc" -eq 3 ] || fail "bench on a ${s}k disk: exit $rc, expected 3: $(tail -3 b.log)"
    left=$(ls -A disk/b 2>/dev/null)
    [ -z "$left" ] || fail "bench on a ${s}k disk ($(tail -1 b.log)) left: $left"
    grep -q "summary.csv: write failed: No space left on device" b.log && midway=1
done
[ "$midway" -eq 1 ] || fail "no disk size up to $(kb bfull)k ran out at summary.csv, after summary.json"

# ---- plot -------------------------------------------------------------------------------
bench="$OQ_SOURCE_DIR/tests/fixtures/bench/summary.csv"
must 0 "runtime_masked.png" plot.log $Q plot "$bench" --out figs
midway=0
for s in $(sizes 8 "$(kb figs)"); do
    remount "$s"
    rc=0
    $Q plot "$bench" --out disk/figs >plot.out 2>plot.log || rc=$?
    [ "$rc" -eq 0 ] && continue
    [ "$rc" -eq 3 ] || fail "plot on a ${s}k disk: exit $rc, expected 3: $(cat plot.log)"
    left=$(ls -A disk/figs 2>/dev/null)
    [ -z "$left" ] || { midway=1; fail "plot on a ${s}k disk ($(cat plot.log)) left: $left"; }
    [ -s plot.out ] && fail "plot on a ${s}k disk printed files it did not keep: $(cat plot.out)"
    grep -q "No space left" plot.log && midway=1
done
[ "$midway" -eq 1 ] || fail "no disk size ran out of space while plotting"

# ---- convert in place, weights beside the model ----------------------------------------
# OUT.onnx.data is then the input's own data file: a disk that runs out on either output leaves
# the input pair as it was (both are written whole before either is put in place), and no
# temporary file behind.
X="$OQ_SOURCE_DIR/tests/fixtures/external"; L="$OQ_SOURCE_DIR/tests/fixtures/torch/llama_like"
M=llama_like_op18.onnx
base=$(kb "$X/$M" "$X/$M.data")
midway=0
for s in $(sizes "$base" $((base * 2 + 64))); do
    remount "$s"
    cp "$X/$M" "$X/$M.data" disk/ 2>/dev/null || continue
    rc=0
    $Q convert "disk/$M" -o "disk/$M" --force --flash --inputs "$L/inputs_000.npz" \
        --expected "$L/outputs_000.npz" >conv.log 2>&1 || rc=$?
    [ "$rc" -eq 0 ] && continue
    [ "$rc" -eq 3 ] || fail "convert in place on a ${s}k disk: exit $rc, expected 3: $(tail -3 conv.log)"
    cmp -s "disk/$M" "$X/$M" && cmp -s "disk/$M.data" "$X/$M.data" ||
        fail "convert in place on a ${s}k disk ($(head -1 conv.log)) changed its input: $(ls -l disk)"
    [ "$(ls disk)" = "$(printf '%s\n' "$M" "$M.data")" ] || fail "convert on a ${s}k disk left: $(ls disk)"
    grep -q "$M: write failed" conv.log && midway=1
done
[ "$midway" -eq 1 ] || fail "no disk size ran out of space at the converted model, after its data file"
echo "ok"
