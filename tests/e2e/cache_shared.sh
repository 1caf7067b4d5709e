#!/usr/bin/env bash
# validate --cache-shared: a group's reference cache. A 2770 folder of one of our groups is taken
# as it is (never made private), its entries stored group-readable even under umask 077, and
# summary.json, the text table and report.html say it was shared and whose; a world-writable
# folder, one the group cannot write, one of a group we are not in and an absent one are refused
# (exit 2, one line naming the folder and the rule, nothing written); a folder without setgid is
# taken with one warning; a corrupt entry is ignored, recomputed and listed in cache_ignored.
# As root, a second user of the group (nobody, given our group) reads the entries, ignores one
# found corrupt, and its own entry is read back as ours would be; two members storing the same
# entries at once leave whole ones; and another user's folder is
# still refused without --cache-shared.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
small=(--num-events 6 --batch-size 2 --max-len 16 --length-policy "uniform 4 16" --repeat 1 --warmup 0 --no-plots
       --progress never --configs ref:encoder:fp64,cpu:attention24:fp32)
G=$(id -g)
GN=$(id -gn)
S="$T/shared"
umask 077 # the strictest: a group's entries must still be readable by the group

# summary DIR CACHED: the run shared the cache of our group, CACHED of 3 batches came from it, and
# the bad entries it ignored (one key a line) are printed
summary() {
  $PY - "$1/summary.json" "$2" "$S" "$GN" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["verdict"] == "passed", s["verdict"]
rc = s["reference_cache"]
assert rc == {"dir": sys.argv[3], "shared": True, "group": sys.argv[4], "trust": "group"}, rc
ref = s["configs"][0]
got = sum(1 for b in ref["batches"] if b.get("reference_cached"))
assert got == int(sys.argv[2]), (got, sys.argv[2])
for e in ref.get("cache_ignored", []): print(e["entry"])
PY
}
# entries_shared: every entry file is group-readable and of our group (the folder's setgid)
entries_shared() {
  local f n=0
  for f in "$S"/*; do
    n=$((n + 1))
    [ $((0$(stat -c %a "$f") & 040)) != 0 ] || fail "$(basename "$f"): mode $(stat -c %a "$f"), not group-readable"
    [ "$(stat -c %g "$f")" = "$G" ] || fail "$(basename "$f"): group $(stat -c %g "$f"), not the folder's $G"
  done
  [ "$n" = 6 ] || fail "the shared cache holds $n files, not 3 entries: $(ls "$S")"
}

# usage: --cache-shared names a folder, and --no-cache contradicts it
must 2 "--cache-shared needs --cache-dir DIR" "$T/u1.log" $ORTQUAL validate --outdir "$T/u1" "${small[@]}" --cache-shared
must 2 "--cache-shared and --no-cache contradict" "$T/u2.log" $ORTQUAL validate --outdir "$T/u2" "${small[@]}" \
  --cache-shared --no-cache

# a group's folder as its admin makes it: taken as it is, entries group-readable, said shared
install -d -m 2770 -g "$G" "$S"
must 0 "reference: 0 of 3 batches from cache, a cache shared by group $GN" "$T/a.log" $ORTQUAL validate \
  --outdir "$T/a" "${small[@]}" --cache-dir "$S" --cache-shared
[ "$(stat -c %a "$S")" = 2770 ] || fail "the shared cache's mode was changed to $(stat -c %a "$S")"
! grep -q "warning" "$T/a.log" || fail "a setgid group folder warned: $(grep warning "$T/a.log")"
entries_shared
ign=$(summary "$T/a" 0) || fail "summary.json of the first shared run"
[ -z "$ign" ] || fail "a fresh shared cache ignored entries: $ign"
grep -q "a cache shared by group $GN" "$T/a/report.html" || fail "report.html does not say the cache was shared"
must 0 "reference: 3 of 3 batches from cache, a cache shared by group $GN" "$T/b.log" $ORTQUAL validate \
  --outdir "$T/b" "${small[@]}" --cache-dir "$S" --cache-shared
summary "$T/b" 3 >/dev/null || fail "summary.json of the second shared run"

# refused, exit 2, one line naming the folder and the rule, nothing written
refused() { # MODE PATTERN
  chmod "$1" "$S"
  must 2 "^ortqual validate: cache directory $S: $2" "$T/r$1.log" $ORTQUAL validate --outdir "$T/r$1" "${small[@]}" \
    --cache-dir "$S" --cache-shared
  [ "$(wc -l <"$T/r$1.log")" = 1 ] || fail "refusal of a $1 folder is not one line: $(cat "$T/r$1.log")"
  [ ! -e "$T/r$1" ] || fail "a refused $1 shared cache still let the run write $T/r$1"
}
refused 2777 "world-writable \(02777\): anyone could plant a reference"
refused 2750 "the group $GN cannot read, write and enter it \(02750\)"
refused 2730 "the group $GN cannot read, write and enter it \(02730\)"
chmod 2770 "$S"
must 2 "cache directory $T/absent: No such file or directory: a shared cache is made once" "$T/abs.log" \
  $ORTQUAL validate --outdir "$T/abs" "${small[@]}" --cache-dir "$T/absent" --cache-shared
[ ! -e "$T/absent" ] || fail "an absent shared cache was made"

# without setgid: taken, with one warning (the workers check the folder again, silently)
chmod g-s "$S"
must 0 "warning: cache directory $S: not setgid: new entries may get their writer's group instead of $GN" \
  "$T/ns.log" $ORTQUAL validate --outdir "$T/ns" "${small[@]}" --cache-dir "$S" --cache-shared
[ "$(grep -c "not setgid" "$T/ns.log")" = 1 ] || fail "the setgid warning is not said once: $(grep setgid "$T/ns.log")"
chmod g+s "$S"

# a corrupt entry: ignored, recomputed, listed in cache_ignored, stored again group-readable
npz=$(ls "$S"/*.npz | head -1)
key=$(basename "$npz" .npz)
printf 'XXXX' | dd of="$npz" bs=1 seek=200 conv=notrunc status=none
must 0 "ignored and recomputed: .*corrupt" "$T/c.log" $ORTQUAL validate --outdir "$T/c" "${small[@]}" \
  --cache-dir "$S" --cache-shared
ign=$(summary "$T/c" 2) || fail "summary.json of the run with a corrupt entry"
[ "$ign" = "$key" ] || fail "cache_ignored does not name the corrupt entry $key: $ign"
entries_shared

# without --cache-shared, the per-user rule as before: a folder of ours is made private, said
cp -a "$S" "$T/own"
must 0 "warning: cache directory $T/own: mode changed from 02770 to 0700: the reference cache is private" \
  "$T/own.log" $ORTQUAL validate --outdir "$T/own-run" "${small[@]}" --cache-dir "$T/own"

if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
  echo "skip: another member of the group, a group not ours, another user's folder: they need root"
  exit 0
fi
# a group we are not in
other=$(getent group | awk -F: -v mine=" $(id -G) " 'index(mine, " " $3 " ") == 0 {print $3; exit}')
[ -n "$other" ] || fail "no group outside $(id -G) to give the folder"
chgrp "$other" "$S"
must 2 "cache directory $S: its group [^ ]+ is none of this user's: a shared cache is a folder of one of your groups" \
  "$T/og.log" $ORTQUAL validate --outdir "$T/og" "${small[@]}" --cache-dir "$S" --cache-shared
[ ! -e "$T/og" ] || fail "a shared cache of another group still let the run write $T/og"
chgrp "$G" "$S"
# another user's folder of our group: refused per user without --cache-shared, taken with it
cp -a "$S" "$T/theirs" && chown nobody "$T/theirs"
must 2 "owned by another user \(uid [0-9]+\): the reference cache is per user" "$T/th.log" $ORTQUAL validate \
  --outdir "$T/th" "${small[@]}" --cache-dir "$T/theirs"
must 0 "reference: 3 of 3 batches from cache, a cache shared by group $GN" "$T/th2.log" $ORTQUAL validate \
  --outdir "$T/th2" "${small[@]}" --cache-dir "$T/theirs" --cache-shared

# another member of the group: nobody, with our group as a supplementary one, reads our entries
chmod 711 "$T"
mkdir "$T/nb" && chown nobody "$T/nb"
# the tool and ONNX Runtime where nobody reaches them: a clone under a private folder (mktemp -d)
# is out of its reach
install -d -m 755 "$T/bin" && install -m 755 "$ORTQUAL" "$T/bin/ortqual" &&
  install -m 644 "$OQ_ORT_LIB" "$T/bin/libonnxruntime.so" ||
  fail "copy the tool and ONNX Runtime for another user"
member() { # ortqual ARGS... as nobody, the copy
  setpriv --reuid=nobody --regid="$(id -g nobody)" --groups="$G" -- \
    env ORTQUAL_ORT_LIB="$T/bin/libonnxruntime.so" "$T/bin/ortqual" "$@"
}
must 0 "reference: 3 of 3 batches from cache" "$T/m1.log" member validate --outdir "$T/nb/m1" "${small[@]}" \
  --cache-dir "$S" --cache-shared
# one of ours corrupt: the member ignores it, lists it and stores its own (nobody's, our group's)
npz=$(ls "$S"/*.npz | tail -1)
key=$(basename "$npz" .npz)
printf 'XXXX' | dd of="$npz" bs=1 seek=200 conv=notrunc status=none
must 0 "ignored and recomputed: .*corrupt" "$T/m2.log" member validate --outdir "$T/nb/m2" "${small[@]}" \
  --cache-dir "$S" --cache-shared
ign=$(summary "$T/nb/m2" 2) || fail "summary.json of the member's run"
[ "$ign" = "$key" ] || fail "the member's cache_ignored does not name $key: $ign"
[ "$(stat -c %U "$npz")" = nobody ] || fail "the member did not store its entry: $(stat -c %U "$npz")"
entries_shared
# the member's entry, read and verified by us; then one of the member's corrupt, ignored by us
must 0 "reference: 3 of 3 batches from cache, a cache shared by group $GN, 1 written by other members: nobody \(1\)" \
  "$T/m3.log" $ORTQUAL validate --outdir "$T/m3" "${small[@]}" --cache-dir "$S" --cache-shared
grep -q "spot check of nobody's entries: batch [0-2] recomputed: identical" "$T/m3.log" ||
  fail "the member's entry was used without its spot check: $(grep -i spot "$T/m3.log")"
$PY - "$T/m3/summary.json" <<'PY' || fail "summary.json does not name the member's entry"
import json, sys
w = json.load(open(sys.argv[1]))["configs"][0]["cache_writers"]
assert len(w) == 1 and w[0]["user"] == "nobody" and w[0]["entries"] == 1, w
assert w[0]["spot_check"]["result"] == "identical" and len(w[0]["spot_check"]["seed"]) == 16, w
PY
printf 'XXXX' | dd of="$npz" bs=1 seek=200 conv=notrunc status=none
must 0 "ignored and recomputed: .*corrupt" "$T/m4.log" $ORTQUAL validate --outdir "$T/m4" "${small[@]}" \
  --cache-dir "$S" --cache-shared
ign=$(summary "$T/m4" 2) || fail "summary.json of the run with a member's corrupt entry"
[ "$ign" = "$key" ] || fail "a member's corrupt entry was not listed in cache_ignored: $ign"
# two members storing the same entries at once: each entry whole, whoever's it is, none torn
S2="$T/shared2"
install -d -m 2770 -g "$G" "$S2"
$ORTQUAL validate --outdir "$T/p1" "${small[@]}" --cache-dir "$S2" --cache-shared >"$T/p1.log" 2>&1 &
p1=$!
member validate --outdir "$T/nb/p2" "${small[@]}" --cache-dir "$S2" --cache-shared >"$T/p2.log" 2>&1 ||
  fail "the member's concurrent run: $(tail -3 "$T/p2.log")"
wait $p1 || fail "our concurrent run: $(tail -3 "$T/p1.log")"
! ls -a "$S2" | grep -q '\.tmp' || fail "temporary files left in the shared cache: $(ls -a "$S2")"
must 0 "reference: 3 of 3 batches from cache" "$T/p3.log" member validate --outdir "$T/nb/p3" "${small[@]}" \
  --cache-dir "$S2" --cache-shared
! grep -q "ignored" "$T/p3.log" || fail "concurrent members left a bad entry: $(grep ignored "$T/p3.log")"

# A false green the group's content check alone let through: a member plants, under our keys, a
# reference of other weights whose records it rewrote (self-consistent); the wrong model must
# still FAIL. wrong.onnx is not the model of w1.npz: against the true reference it fails.
F="$T/fg"
install -d -m 755 "$F" && install -d -m 2770 -g "$G" "$F/shared" && install -d -o nobody "$T/nb/fg"
$ORTQUAL export encoder --seed 1 --save-weights "$F/w1.npz" -o "$F/right.onnx" >/dev/null
$ORTQUAL export encoder --seed 2 --save-weights "$F/w2.npz" -o "$F/wrong.onnx" >/dev/null
chmod 644 "$F"/*.onnx "$F"/*.npz
enc=(--configs ref:encoder:fp64,cpu:model:fp32 --num-events 4 --threads 1 --model "$F/wrong.onnx" --no-plots
     --progress never)
must 1 "verdict: FAILED" "$T/fg1.log" $ORTQUAL validate --outdir "$T/fg1" "${enc[@]}" --weights "$F/w1.npz" \
  --cache-dir "$F/shared" --cache-shared
member validate --outdir "$T/nb/fg/run" "${enc[@]}" --weights "$F/w2.npz" --cache-dir "$T/nb/fg/cache" \
  >/dev/null 2>&1 || true
# plant FROM INTO: INTO's entries replaced by FROM's outputs of the same inputs, sha256 rewritten
plant() {
  $PY - "$1" "$2" <<'PY'
import glob, hashlib, json, os, sys
def by_inputs(d):
    return {json.load(open(r))["key"].strip().splitlines()[-1]: r[:-5] for r in glob.glob(d + "/*.json")}
src, dst = by_inputs(sys.argv[1]), by_inputs(sys.argv[2])
assert dst and set(dst) <= set(src), (sorted(src), sorted(dst))
for inp, base in dst.items():
    data = open(src[inp] + ".npz", "rb").read()
    text = open(base + ".json").read()
    text = text.replace(json.loads(text)["sha256"], hashlib.sha256(data).hexdigest())
    for p, x in ((base + ".npz", data), (base + ".json", text.encode())):
        os.unlink(p); open(p, "wb").write(x); os.chmod(p, 0o444)
PY
}
setpriv --reuid=nobody --regid="$(id -g nobody)" --groups="$G" -- bash -c "$(declare -f plant); PY=$PY; plant \
  '$T/nb/fg/cache' '$F/shared'" || fail "the member could not plant its entries"
[ "$(stat -c %U "$(ls "$F"/shared/*.npz | head -1)")" = nobody ] || fail "the planted entries are not the member's"
# trusted by group: the member's batch spot-checked differs, so none of its entries is used
must 1 "spot check of nobody's entries: batch [01] recomputed: batch [01], recomputed here, differs from its entry" \
  "$T/fg2.log" $ORTQUAL validate --outdir "$T/fg2" "${enc[@]}" --weights "$F/w1.npz" --cache-dir "$F/shared" \
  --cache-shared
grep -q "warning: reference cache: every entry written by uid [0-9]* (nobody) ignored and recomputed" "$T/fg2.log" ||
  fail "no warning that the member's entries were ignored: $(grep warning "$T/fg2.log")"
grep -q "verdict: FAILED" "$T/fg2.log" || fail "a planted reference made a wrong model pass"
$PY - "$T/fg2/summary.json" <<'PY' || fail "summary.json of the run with planted entries"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["verdict"] == "failed", s["verdict"]
ref = s["configs"][0]
assert not any(b.get("reference_cached") for b in ref["batches"]), "a planted entry was used"
ign = ref["cache_ignored"]
assert len(ign) == 2 and all("(nobody), whose spot-checked batch" in e["reason"] for e in ign), ign
w = ref["cache_writers"]
assert len(w) == 1 and w[0]["user"] == "nobody" and w[0]["entries"] == 0 and "differs" in w[0]["spot_check"]["result"], w
PY
# trusted by self: the member's entries are never used
setpriv --reuid=nobody --regid="$(id -g nobody)" --groups="$G" -- bash -c "$(declare -f plant); PY=$PY; plant \
  '$T/nb/fg/cache' '$F/shared'" || fail "the member could not plant its entries again"
must 1 "written by uid [0-9]* \(nobody\), not you: only your own entries are trusted" "$T/fg3.log" $ORTQUAL validate \
  --outdir "$T/fg3" "${enc[@]}" --weights "$F/w1.npz" --cache-dir "$F/shared" --cache-shared --cache-trust self
grep -q "verdict: FAILED" "$T/fg3.log" || fail "--cache-trust self used a planted reference"
must 2 "--cache-trust 'anyone': self or group" "$T/fg4.log" $ORTQUAL validate --outdir "$T/fg4" "${enc[@]}" \
  --weights "$F/w1.npz" --cache-dir "$F/shared" --cache-shared --cache-trust anyone

# a per-user cache whose folder was open to others: their files in it are never used, and are
# replaced by ours (the folder made 0700 keeps the files another user planted while it was open)
P="$F/mine"
must 1 "verdict: FAILED" "$T/pu1.log" $ORTQUAL validate --outdir "$T/pu1" "${enc[@]}" --weights "$F/w1.npz" \
  --cache-dir "$P"
plant "$T/nb/fg/cache" "$P" && chown nobody "$P"/* && chmod 2775 "$P"
must 1 "owned by uid [0-9]* \(nobody\), not you" "$T/pu2.log" $ORTQUAL validate --outdir "$T/pu2" "${enc[@]}" \
  --weights "$F/w1.npz" --cache-dir "$P"
grep -q "verdict: FAILED" "$T/pu2.log" || fail "another user's entries in a per-user cache made a wrong model pass"
[ "$(stat -c %U "$P"/* | sort -u)" = "$(id -un)" ] || fail "another user's entries were not replaced: $(ls -l "$P")"
must 1 "reference: 2 of 2 batches from cache" "$T/pu3.log" $ORTQUAL validate --outdir "$T/pu3" "${enc[@]}" \
  --weights "$F/w1.npz" --cache-dir "$P"
