#!/usr/bin/env bash
# Output modes follow the caller's umask, as any Unix tool's: files 0666 and folders 0777 less
# the umask. umask 002 gives a campaign's group write access (a colleague reruns or merges),
# umask 077 keeps everything private (nothing world-readable). A folder made by a setgid parent
# keeps its setgid bit.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
small=(--num-events 4 --batch-size 2 --max-len 16 --repeat 1 --warmup 0 --threads 1 --no-cache --progress never
       --configs ref:encoder:fp64,cpu:attention24:fp32)

# modes U DIR FILE_MODE DIR_MODE: every file under DIR has FILE_MODE, every folder DIR_MODE
modes() {
  local u=$1 d=$2 fm=$3 dm=$4 p m
  while IFS= read -r p; do
    m=$(stat -c %a "$p")
    if [ -d "$p" ]; then [ "$m" = "$dm" ] || fail "umask $u: folder $p mode $m, expected $dm"
    else [ "$m" = "$fm" ] || fail "umask $u: file $p mode $m, expected $fm"; fi
  done < <(find "$d" -mindepth 1)
}

mkdir g; chmod 2775 g
(umask 002; must 0 PASSED "$T/002.log" "$Q" validate "${small[@]}" --outdir g/run)
[ -f g/run/plots/index.html ] || [ -d g/run/plots ] || fail "umask 002: no plots/ made"
modes 002 g/run 664 2775

(umask 077; must 0 PASSED "$T/077.log" "$Q" validate "${small[@]}" --outdir p/run)
modes 077 p 600 700

# a shard plan: the prepared folder and a shard's, then the merge's outputs
(umask 002; must 0 "" "$T/prep.log" "$Q" validate "${small[@]}" --outdir g/sh --prepare-shards 2
 must 0 "" "$T/s0.log" "$Q" validate "${small[@]}" --outdir g/sh --shard 0/2
 must 0 "" "$T/s1.log" "$Q" validate "${small[@]}" --outdir g/sh --shard 1/2
 must 0 PASSED "$T/m.log" "$Q" merge g/sh)
modes 002 g/sh 664 2775
echo "ok umask 002 and 077 decide the output modes"
