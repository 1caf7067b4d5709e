#!/usr/bin/env bash
# Long paths (PATH_MAX is 4096): an output folder of ~3000 bytes runs as any other (one above
# ~2 KiB failed: a 2048-byte buffer cut the work folder's path), and one too long for the files a
# run writes below it is refused before any work, naming it and why. No message is cut mid-path:
# a path too long for a message keeps its head and tail ("...") and the reason after it (the
# message was cut at 1 KiB, reason gone).
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"
seg=$(printf 'd%.0s' $(seq 199))
L=long
for _ in $(seq 15); do L="$L/$seg"; done # 3004 bytes
V=(validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 4 --batch-size 2 --repeat 1 --no-cache
   --progress never)

expect 0 "verdict: PASSED" $Q "${V[@]}" --save-outputs --outdir "$L"
n=$(ls "$L"/summary.json "$L"/report.html "$L"/plots/*.png "$L"/outputs_01_*.npz 2>/dev/null | wc -l)
[ "$n" -ge 5 ] && [ ! -e "$L/.work" ] && ok "3004-byte folder: its files" || bad "3004-byte folder: $(ls -A "$L")"
# and its shards
expect 0 "prepared 2 shards" $Q "${V[@]}" --no-plots --outdir "$L/s" --prepare-shards 2
for i in 0 1; do expect 0 "shard $i of 2 done" $Q "${V[@]}" --no-plots --outdir "$L/s" --shard $i/2; done
expect 0 "verdict: PASSED" $Q merge "$L/s"

# msg_ok LOG REASON: one line, the path's head, "...", its tail and the whole reason
msg_ok() {
    local line
    line=$(tail -1 "$1")
    [ "$(wc -l <"$1")" -eq 1 ] && [ "${#line}" -lt 1100 ] && [[ "$line" == *"long/ddd"*"..."*"$2" ]]
}
L2="$L"
for _ in 1 2 3 4; do L2="$L2/$seg"; done # 3804 bytes
rc=0
$Q "${V[@]}" --outdir "$L2" >too.log 2>&1 || rc=$?
[ "$rc" -eq 2 ] && msg_ok too.log "dd: path too long: 3804 bytes, and a run writes files up to 320 bytes below its folder: the system takes paths of at most 4095 bytes" &&
    [ ! -e "$L2" ] && ok "3804-byte folder refused" || bad "3804-byte folder: exit $rc: $(cut -c1-300 too.log)"
# a file name the system refuses: "File name too long", the reason kept
name=$(printf 'x%.0s' $(seq 300))
rc=0
$Q export sdpa -o "$L/$name.onnx" >name.log 2>&1 || rc=$?
[ "$rc" -eq 3 ] && msg_ok name.log "xxx.onnx: cannot create: File name too long" && ok "export: File name too long" ||
    bad "export to a 300-byte name: exit $rc: $(cut -c1-300 name.log)"
report
