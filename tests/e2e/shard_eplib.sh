#!/usr/bin/env bash
# The shard plan names an EP library (--ep-lib) by its content, not its path (docs/scale-out.md):
# a node whose copy of the library lies elsewhere runs the same plan (it was refused as another
# plan, "runtime.ep_libs"), and a library changed in place since the shards were prepared is
# refused, naming it and the path this shard gave (it was accepted as the same plan).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
V=(validate --no-cache --num-events 4 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32,noneep:attention24:fp32)
mkdir "$T/node0" "$T/node1"
cp "$OQ_BINARY_DIR/tests/libnone_ep.so" "$T/node0/libep.so"
cp "$T/node0/libep.so" "$T/node1/libep.so"
must 0 "prepared 2 shards" "$T/p.log" $ORTQUAL "${V[@]}" --ep-lib "noneep=$T/node0/libep.so" --outdir "$T/S" --prepare-shards 2
# the description holds the library's size and SHA-256, no path
$PY - "$T/S/shards/plan_description.json" "$T/node0/libep.so" <<'PY' || fail "the plan's ep_libs (above)"
import hashlib, json, os, sys
d, lib = json.load(open(sys.argv[1])), sys.argv[2]
want = [["noneep", {"sha256": hashlib.sha256(open(lib, "rb").read()).hexdigest(), "size": os.path.getsize(lib)}]]
for c in d["configs"]:
    assert c["runtime"]["ep_libs"] == want, c["runtime"]["ep_libs"]
assert lib not in open(sys.argv[1]).read(), "the library's path is in the plan"
PY
# the same bytes at another path: the same plan
must 0 "shard 0 of 2 done" "$T/s0.log" $ORTQUAL "${V[@]}" --ep-lib "noneep=$T/node1/libep.so" --outdir "$T/S" --shard 0/2
# one byte changed where the plan was prepared: refused, nothing of shard 1 written
printf 'X' | dd of="$T/node0/libep.so" bs=1 seek=100 conv=notrunc 2>/dev/null
must 2 "differ in: runtime.ep_libs\[noneep\] '[0-9a-f]{12}\.\.\.' vs '[0-9a-f]{12}\.\.\.'; the prepared value first; this shard's noneep library is $T/node0/libep.so \(not the bytes the shards were prepared with\)\)" \
    "$T/s1.log" $ORTQUAL "${V[@]}" --ep-lib "noneep=$T/node0/libep.so" --outdir "$T/S" --shard 1/2
[ ! -e "$T/S/shards/1/summary.json" ] || fail "a refused shard wrote a summary"
# the unchanged copy runs shard 1, and the shards merge
must 0 "shard 1 of 2 done" "$T/s1b.log" $ORTQUAL "${V[@]}" --ep-lib "noneep=$T/node1/libep.so" --outdir "$T/S" --shard 1/2
must 0 "verdict: PASSED" "$T/m.log" $ORTQUAL merge --no-plots "$T/S"
echo "shard_eplib: an EP library by content: another path accepted, a changed byte refused"
