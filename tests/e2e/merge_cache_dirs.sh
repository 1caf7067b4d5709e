#!/usr/bin/env bash
# merge of shards run with --cache-dir DIR --cache-shared says when the shards' cache folders
# differ (a shard pointed at another folder reused none of the group's entries and stored its own
# elsewhere): a warning in the merged summary naming the shards and folders, not a failure (the
# results are still compared). It said nothing: the first shard's folder was recorded as the run's.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
V=(validate --num-events 8 --batch-size 2 --max-len 16 --repeat 1 --warmup 0 --threads 1 --progress never --no-plots
   --configs ref:encoder:fp64,cpu:attention24:fp32)
A="$T/groupcache" B="$T/other"
mkdir "$A" "$B" && chmod 2770 "$A" "$B"

# run DIR CACHE0 CACHE1: prepare 2 shards with CACHE0, run shard i with CACHEi
run() {
    must 0 "prepared 2 shards" "$T/p.log" $ORTQUAL "${V[@]}" --cache-dir "$2" --cache-shared --outdir "$1" --prepare-shards 2
    must 0 "shard 0 of 2 done" "$T/s0.log" $ORTQUAL "${V[@]}" --cache-dir "$2" --cache-shared --outdir "$1" --shard 0/2
    must 0 "shard 1 of 2 done" "$T/s1.log" $ORTQUAL "${V[@]}" --cache-dir "$3" --cache-shared --outdir "$1" --shard 1/2
}

# 1. one folder: no warning
run "$T/same" "$A" "$A"
must 0 "PASSED" "$T/m1.log" $ORTQUAL merge "$T/same"
! grep -q "reference caches are not one folder" "$T/m1.log" "$T/same/summary.json" || fail "one folder, yet a warning"
echo "ok   one cache folder: merged without a warning"

# 2. shard 1 pointed at another folder: PASSED (compared), the warning names both shards and folders
run "$T/diff" "$A" "$B"
must 0 "warning: the shards' reference caches are not one folder \(shard 0: $A; shard 1: $B\)" "$T/m2.log" \
    $ORTQUAL merge "$T/diff"
grep -q "PASSED" "$T/m2.log" || fail "different folders: not compared and passed: $(tail -3 "$T/m2.log")"
$PY - "$T/diff/summary.json" "$A" "$B" <<'PY' || fail "the merged summary lacks the warning: $(grep -o '"cache_warning": "[^"]*"' "$T/diff/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
w = s["configs"][0]["cache_warning"]
assert "shard 0: %s; shard 1: %s" % (sys.argv[2], sys.argv[3]) in w, w
assert s["verdict"] == "passed", s["verdict"]
PY
grep -q "not one folder" "$T/diff/report.html" || fail "report.html does not show the warning"
echo "ok   two cache folders: the merged summary warns, naming the shards"
