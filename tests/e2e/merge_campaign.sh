#!/usr/bin/env bash
# A sharded campaign read from anywhere and kept whole: every summary (the merged one, each
# shard's) names its batches relative to DIR (they were relative to the prepare step's own
# directory: pointing nowhere from another); a `--prepare-shards --force` refused by its checks
# leaves the earlier plan's shards and merge (they were removed before the checks); the merged
# summary gives every shard's reference cache warning (it gave shard 0's only); and a compared
# value written as "nan" shows as nan in conformance's report.html and JUnit (it showed 0).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
V=(validate --num-events 8 --batch-size 2 --max-len 16 --repeat 1 --warmup 0 --threads 1 --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32)

# 1. prepared from a/ (relative --outdir), shards run from b/ and from /, merged from b/
mkdir -p "$T/a" "$T/b"
(cd "$T/a" && must 0 "prepared 2 shards" "$T/p.log" $ORTQUAL "${V[@]}" --no-cache --outdir run --prepare-shards 2)
(cd "$T/b" && must 0 "shard 0 of 2 done" "$T/s0.log" $ORTQUAL "${V[@]}" --no-cache --outdir ../a/run --shard 0/2)
(cd / && must 0 "shard 1 of 2 done" "$T/s1.log" $ORTQUAL "${V[@]}" --no-cache --outdir "$T/a/run" --shard 1/2)
(cd "$T/b" && must 0 "PASSED" "$T/m.log" $ORTQUAL merge ../a/run)
$PY - "$T/a/run" <<'PY' || fail "a summary names its batches other than relative to DIR"
import json, os, sys
d = sys.argv[1]
for f, want in (("summary.json", 4), ("shards/0/summary.json", 2), ("shards/1/summary.json", 2)):
    paths = [b["inputs"] for b in json.load(open(os.path.join(d, f)))["batches"]]
    assert len(paths) == want and all(p == os.path.basename(p) and os.path.isfile(os.path.join(d, p)) for p in paths), (f, paths)
plan = [json.loads(l)["inputs"] for l in open(os.path.join(d, "shards/plan_batches.jsonl"))]
assert plan == ["inputs_00%d.npz" % i for i in range(4)], plan
PY
echo "ok   every summary of a campaign names its batches relative to DIR"

# 2. --prepare-shards --force with a broken input: refused, the earlier shards and merge stay
R="$T/a/run"
cp "$R/inputs_000.npz" "$T/good.npz"
echo garbage >"$T/bad.npz"
must 2 "bad.npz: cannot open as .npz.*the earlier plan's shard results and merge in .* are left as they were" "$T/f.log" \
    $ORTQUAL validate --repeat 1 --warmup 0 --threads 1 --progress never --configs ref:encoder:fp64,cpu:attention24:fp32 \
    --no-cache --inputs "$T/good.npz" "$T/bad.npz" --outdir "$R" --prepare-shards 2 --force
for f in shards/plan.json shards/plan_batches.jsonl shards/0/summary.json shards/1/summary.json summary.json report.html; do
    [ -e "$R/$f" ] || fail "a refused --force prepare removed $f: $(ls -R "$R")"
done
must 0 "PASSED" "$T/m2.log" $ORTQUAL merge "$R"
echo "ok   a refused --force prepare leaves the earlier shards and merge"

# 2b. an --inputs file changed after the prepare step: its shard is refused, naming it (it ran the
#     copy prepared from the earlier file, silently); one that is gone (a node with only DIR) runs
# (two files of other events, made from good.npz: the refused prepare above removed R's batches)
$PY - "$T/good.npz" "$T" <<'PY' || fail "making e0.npz, e1.npz"
import sys, numpy as np
d = dict(np.load(sys.argv[1]))
np.savez(sys.argv[2] + "/e0.npz", **d)
if "event_indices" in d: d["event_indices"] = d["event_indices"] + 1000
np.savez(sys.argv[2] + "/e1.npz", **d)
d["features"] = d["features"] * 2  # recalibrated
np.savez(sys.argv[2] + "/e1_new.npz", **d)
PY
E=(validate --repeat 1 --warmup 0 --threads 1 --progress never --configs ref:encoder:fp64,cpu:attention24:fp32
   --no-cache --inputs "$T/e0.npz" "$T/e1.npz" --outdir "$T/E")
must 0 "prepared 2 shards" "$T/ep.log" $ORTQUAL "${E[@]}" --prepare-shards 2
cp "$T/e1_new.npz" "$T/e1.npz"
must 2 "^ortqual validate: --inputs $T/e1\.npz changed since the shards were prepared \(SHA-256 [0-9a-f]{12}\.\.\. now, [0-9a-f]{12}\.\.\. then\): .*prepare the shards again \(--prepare-shards N --force\)" \
    "$T/e1.log" $ORTQUAL "${E[@]}" --shard 1/2
rm "$T/e0.npz"
must 0 "shard 0 of 2 done" "$T/e0.log" $ORTQUAL "${E[@]}" --shard 0/2
echo "ok   a shard whose --inputs file changed since the prepare step is refused"

# 3. each shard's reference cache warning reaches the merged summary, named by shard
C="$T/cache" P="$T/c"
must 0 "prepared 2 shards" "$T/cp.log" $ORTQUAL "${V[@]}" --cache-dir "$C" --outdir "$P" --prepare-shards 2
for i in 0 1; do must 0 "shard $i of 2 done" "$T/c$i.log" $ORTQUAL "${V[@]}" --cache-dir "$C" --outdir "$P" --shard $i/2; done
for npz in "$C"/*.npz; do printf 'XXXX' | dd of="$npz" bs=1 seek=200 conv=notrunc status=none; done
for i in 0 1; do
    must 0 "ignored and recomputed" "$T/cf$i.log" $ORTQUAL "${V[@]}" --cache-dir "$C" --outdir "$P" --shard $i/2 --force
done
must 0 "warning: shard 0: .*corrupt.*; shard 1: .*corrupt" "$T/cm.log" $ORTQUAL merge "$P"
$PY - "$P/summary.json" <<'PY' || fail "the merged cache_warning is not every shard's: $(grep -o '"cache_warning": "[^"]*"' "$P/summary.json")"
import json, sys
w = json.load(open(sys.argv[1]))["configs"][0]["cache_warning"]
assert w.startswith("shard 0: ") and "; shard 1: " in w, w
PY
grep -q "shard 1: " "$P/report.html" || fail "report.html does not show shard 1's cache warning"
echo "ok   the merged summary gives every shard's cache warning"

# 4. conformance: a "nan" compared value is shown as nan in report.html and the JUnit XML
mkdir -p "$T/conf"
cat >"$T/conf/summary.json" <<'JSON'
{"schema": "ortqual.conformance/2", "verdict": "failed", "exit_status": 1, "passed": 0, "failed": 1, "skipped": 0,
 "unsupported": 0, "tolerance": {"rtol": 1e-3, "atol": 1e-5},
 "tests": [{"name": "test_nan_out", "verdict": "FAIL", "detail": "output 0 over tolerance", "output": 0,
            "output_name": "y", "worst_index": [0, 3], "got": "nan", "expected": 1.5, "abs_diff": "nan"}]}
JSON
must 0 "report.html" "$T/r.log" $ORTQUAL report "$T/conf" --junit "$T/conf.xml"
[ "$(grep -o '<td class="n">[^<]*</td>' "$T/conf/report.html" | tr '\n' ' ')" = '<td class="n">nan</td> <td class="n">1.5</td> ' ] ||
    fail "report.html shows the NaN as: $(grep -o '<td class="n">[^<]*</td>' "$T/conf/report.html" | tr '\n' ' ')"
grep -q "got nan, expected 1.5" "$T/conf.xml" || fail "the JUnit case does not say got nan: $(grep failure "$T/conf.xml")"
echo "ok   a NaN compared value shows as nan, not 0"
