#!/usr/bin/env bash
# A sharded run's folder DIR as the one place of its outcome: a shard reads and hashes
# DIR/inputs_NNN.npz from any working directory and in a copy of DIR (it opened the path the
# prepare step's --outdir gave, relative to that step's directory: another folder's file, or the
# original's from a damaged copy, which passed); a shard that starts replaces the merge it was part
# of, and a prepare step replaces every output of the earlier plan (both left a PASSED merge
# beside shards that no longer gave it); a shard of another split is refused before its folder
# is looked at or made (it said "summary.json exists (use --force)", and left shards/7/error.json,
# or a shards/0/error.json before any prepare step that then refused the prepare step).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
json() { $PY -c "import json,os,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
flip() { $PY -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=1; open(p,'wb').write(b)" "$1"; }
V=(validate --no-cache --num-events 8 --batch-size 2 --max-len 16 --repeat 1 --warmup 0 --threads 1
   --progress never --configs ref:encoder:fp64,cpu:attention24:fp32)
MERGED="summary.json report.html validate.csv plots"
# merged DIR: every output of a merge is there, or (gone) none of them
merged() {
    local f
    for f in $MERGED; do
        if [ "$2" = there ]; then [ -e "$1/$f" ] || fail "$1/$f is missing: $(ls "$1")"
        else [ ! -e "$1/$f" ] || fail "$1/$f outlived the outcome it belongs to: $(ls "$1")"; fi
    done
}

# 1. prepared from a/ with a relative --outdir; the shards run from b/, which holds another plan's
#    folder of the same name, and in a copy of DIR with one batch damaged
mkdir -p "$T/a" "$T/b"
(cd "$T/a" && must 0 "prepared 4 shards" "$T/p.log" $ORTQUAL "${V[@]}" --outdir run --prepare-shards 4)
(cd "$T/b" && must 0 "prepared 4 shards" "$T/pb.log" $ORTQUAL "${V[@]}" --seed 99 --outdir run --prepare-shards 4)
(cd "$T/b" && must 0 "shard 0 of 4 done" "$T/s0.log" $ORTQUAL "${V[@]}" --outdir "$T/a/run" --shard 0/4)
(cd "$T/b" && must 0 "shard 1 of 4 done" "$T/s1.log" $ORTQUAL "${V[@]}" --outdir "$T/a/run" --shard 1/4)
[ "$(json "$T/a/run/shards/1/summary.json" '[b["inputs"] for b in d["batches"]]')" = "['inputs_001.npz']" ] ||
    fail "shard 1 names other inputs than DIR's: $(json "$T/a/run/shards/1/summary.json" '[b["inputs"] for b in d["batches"]]')"
cp -a "$T/a/run" "$T/a/copy"
flip "$T/a/copy/inputs_002.npz"
(cd "$T/a" && must 2 "^ortqual validate: copy/inputs_002.npz: SHA-256 [0-9a-f]{12}\.\.\. is not the prepared [0-9a-f]{12}\.\.\. \(changed since the shards were prepared\)" \
    "$T/c2.log" $ORTQUAL "${V[@]}" --outdir copy --shard 2/4)
(cd "$T/a" && must 0 "shard 3 of 4 done" "$T/c3.log" $ORTQUAL "${V[@]}" --outdir copy --shard 3/4)
[ "$(json "$T/a/copy/shards/3/summary.json" '[b["inputs"] for b in d["batches"]]')" = "['inputs_003.npz']" ] ||
    fail "a shard in the copy names the original's inputs"
echo "ok   shards read DIR's batches from any directory and in a copy of DIR"

# 2. a shard that starts, here with --force after a merge, removes the merge it was part of; one
#    refused by its checks leaves its earlier result, and so the merge, as they were
P="$T/P"
must 0 "prepared 2 shards" "$T/m.log" $ORTQUAL "${V[@]}" --outdir "$P" --prepare-shards 2
for i in 0 1; do must 0 "shard $i of 2 done" "$T/m$i.log" $ORTQUAL "${V[@]}" --outdir "$P" --shard $i/2; done
must 0 "PASSED" "$T/mm.log" $ORTQUAL merge "$P"
merged "$P" there
must 2 "differ in: repeat.*the earlier result in .*P/shards/0 is left as it was" "$T/mr.log" \
    $ORTQUAL "${V[@]}" --outdir "$P" --shard 0/2 --force --repeat 2
merged "$P" there
must 0 "shard 0: the earlier merge's summary.json, report.html, validate.csv, plots/ removed" "$T/mf.log" \
    $ORTQUAL "${V[@]}" --outdir "$P" --shard 0/2 --force --progress auto
merged "$P" gone
must 0 "PASSED" "$T/mm2.log" $ORTQUAL merge "$P"
echo "ok   a shard that starts removes the merge; one refused leaves it"

# 3. the merged DIR prepared again (--force, fewer batches): no output of the earlier plan stays,
#    its merge's page, table and figures included, nor its batches past the new plan's
must 0 "prepared 2 shards" "$T/r.log" $ORTQUAL "${V[@]}" --num-events 4 --outdir "$P" --prepare-shards 2 --force
merged "$P" gone
[ "$(cd "$P" && ls inputs_*.npz | tr '\n' ' ')" = "inputs_000.npz inputs_001.npz " ] ||
    fail "an earlier plan's batches stayed: $(ls "$P")"
# ... but the models this prepare step exported stay (they went: the shards had no model to run)
[ "$(cd "$P" && ls encoder_*.onnx 2>/dev/null | tr '\n' ' ')" = "encoder_attention24_fp32.onnx " ] ||
    fail "the prepare step's own model went with the earlier plan's: $(ls "$P")"
# (an unsharded run's folder prepared with --force: its page and table go with its summary)
must 0 "PASSED" "$T/u.log" $ORTQUAL "${V[@]}" --outdir "$T/U"
must 0 "prepared 2 shards" "$T/ur.log" $ORTQUAL "${V[@]}" --outdir "$T/U" --prepare-shards 2 --force
merged "$T/U" gone
echo "ok   a prepare step replaces every output of the earlier outcome"

# 4. a shard of another split: the plan's count first, whatever the shard's folder holds, and no
#    shard folder made; before any prepare step, nothing that refuses the prepare step
must 0 "shard 1 of 2 done" "$T/w1.log" $ORTQUAL "${V[@]}" --num-events 4 --outdir "$P" --shard 1/2
for s in 1/4 1/4\ --force 3/4; do
    # shellcheck disable=SC2086
    one=$($ORTQUAL "${V[@]}" --num-events 4 --outdir "$P" --shard $s 2>&1) && fail "--shard $s ran" || true
    [ "$one" = "ortqual validate: $P/shards/plan.json was prepared for 2 shards by batch, not 4 by batch" ] ||
        fail "--shard $s: $one"
done
[ "$(ls "$P/shards" | tr '\n' ' ')" = "1 plan.json plan_batches.jsonl plan_description.json " ] ||
    fail "a refused shard left a folder: $(ls "$P/shards")"
[ "$(ls -A "$P/shards/1" | grep -c error.json)" = 0 ] || fail "a refused shard wrote error.json beside a result"
must 2 "N/shards/plan.json not found: prepare the shards first" "$T/n.log" $ORTQUAL "${V[@]}" --outdir "$T/N" --shard 0/2
[ ! -e "$T/N/shards" ] || fail "a shard before the prepare step left $(find "$T/N/shards")"
must 0 "prepared 2 shards" "$T/np.log" $ORTQUAL "${V[@]}" --outdir "$T/N" --prepare-shards 2
echo "ok   a shard of another split is refused first and leaves nothing"
