#!/usr/bin/env bash
# validate's reference cache: a second run takes the reference's outputs from the cache (the same
# bytes), a corrupt entry is detected and recomputed, two batches' swapped records are refused, as
# is a record edited to name another batch's outputs and a FIFO in an entry's place (not waited
# on), a re-hashed entry with a wrong value fails the configuration compared with it, --no-cache
# neither reads nor writes, summary.json says which cache was used or why none (and a run without
# a home says so), two runs at once on one cache both pass, and a cache directory that is not
# ours is refused.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
C="$T/cache"
small=(--num-events 6 --batch-size 2 --max-len 32 --length-policy "uniform 4 32" --repeat 1 --warmup 0 --no-plots
       --progress never)

# cached OUTDIR N: the reference's batches that came from the cache are N (of 3)
cached() {
  $PY - "$1/summary.json" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["verdict"] == "passed", s["verdict"]
ref = s["configs"][0]
got = sum(1 for b in ref["batches"] if b.get("reference_cached"))
assert got == int(sys.argv[2]), (got, sys.argv[2], [b for b in ref["batches"]])
# a cached batch ran nothing: no timing, no calls
assert all("first_call_s" not in b for b in ref["batches"] if b.get("reference_cached"))
PY
}

must 0 PASSED "$T/1.log" $ORTQUAL validate --outdir "$T/1" "${small[@]}" --save-outputs --cache-dir "$C" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
cached "$T/1" 0 || fail "first run: no batch may come from an empty cache"
[ "$(stat -c %a "$C")" = 700 ] || fail "cache directory mode $(stat -c %a "$C"), expected 700"

# a new configuration against the same inputs: the reference is read, not run, and gives the same bytes
must 0 "reference: 3 of 3 batches from cache" "$T/2.log" $ORTQUAL validate --outdir "$T/2" "${small[@]}" \
  --save-outputs --cache-dir "$C" --configs ref:encoder:fp64,cpu:decomposed:fp32
cached "$T/2" 3 || fail "second run: every batch from the cache"
for f in "$T"/1/outputs_00_ref_encoder_fp64_*.npz; do
  cmp -s "$f" "$T/2/$(basename "$f")" || fail "$(basename "$f"): the cached reference outputs differ"
done
grep -q "reference: 3 of 3 batches from cache" "$T/2/report.html" || fail "report.html does not say the cache gave the reference"
# validate.csv keeps the reference's rows of cached batches (it had none: the same plan's CSV
# changed shape with the cache), their seconds empty: nothing ran
[ "$(grep -cE '^ref:encoder:fp64,all,[0-9]+,[0-9]+,,,,generated$' "$T/2/validate.csv")" = 3 ] ||
  fail "validate.csv: no reference rows for cached batches: $(head -5 "$T/2/validate.csv")"

# a corrupt entry: detected, ignored with a warning, recomputed, then repaired
npz=$(ls "$C"/*.npz | head -1)
printf 'XXXX' | dd of="$npz" bs=1 seek=200 conv=notrunc status=none
must 0 "ignored and recomputed: .*corrupt" "$T/3.log" $ORTQUAL validate --outdir "$T/3" "${small[@]}" --save-outputs \
  --cache-dir "$C" --configs ref:encoder:fp64,cpu:attention24:fp32
cached "$T/3" 2 || fail "the corrupt entry was trusted"
grep -q '"cache_warning"' "$T/3/summary.json" || fail "summary.json lacks the cache warning"
for f in "$T"/1/outputs_00_ref_encoder_fp64_*.npz; do
  cmp -s "$f" "$T/3/$(basename "$f")" || fail "$(basename "$f"): recomputed outputs differ"
done
# a record whose outputs are other tensors (the file hashes right): never used either
rec=$(ls "$C"/*.json | head -1)
sed -i 's/"name": "cls"/"name": "renamed"/' "$rec"
must 0 "ignored and recomputed: .*not the tensors its record lists" "$T/4.log" $ORTQUAL validate --outdir "$T/4" \
  "${small[@]}" --cache-dir "$C" --configs ref:encoder:fp64,cpu:attention24:fp32
must 0 "reference: 3 of 3 batches from cache" "$T/5.log" $ORTQUAL validate --outdir "$T/5" "${small[@]}" \
  --cache-dir "$C" --configs ref:encoder:fp64,cpu:attention24:fp32
cached "$T/5" 3 || fail "the recomputed entries were not stored again"

# two batches' records swapped (a copy, a sync tool): with fixed lengths every batch's outputs are
# the same tensors, so each record verifies but names the other batch's outputs; both are refused
# and recomputed, the verdict is the one computed, and the entries are stored right again
fixed=(--num-events 6 --batch-size 2 --max-len 16 --length-policy "fixed 16" --repeat 1 --warmup 0 --no-plots
       --progress never)
must 0 PASSED "$T/s1.log" $ORTQUAL validate --outdir "$T/s1" "${fixed[@]}" --cache-dir "$T/sw" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
$PY - "$T/s1/summary.json" "$T/sw" <<'PY' || fail "could not swap batch 0's and 1's records"
import glob, json, os, sys
s = json.load(open(sys.argv[1]))
by_inputs = {}
for path in glob.glob(os.path.join(sys.argv[2], "*.json")):
    line = json.load(open(path))["key"].splitlines()[-1]  # "inputs <the batch's inputs SHA-256>"
    by_inputs[line.split()[1]] = path
a, b = (by_inputs[s["batches"][i]["sha256"]] for i in (0, 1))
os.rename(a, a + ".swap"); os.rename(b, a); os.rename(a + ".swap", b)
PY
must 0 PASSED "$T/s2.log" $ORTQUAL validate --outdir "$T/s2" "${fixed[@]}" --cache-dir "$T/sw" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
grep -q "ignored and recomputed: .*its record is for other inputs" "$T/s2.log" ||
  fail "no warning for the swapped records"
$PY - "$T/s1/summary.json" "$T/s2/summary.json" <<'PY' || fail "swapped records were used"
import json, sys
s1, s2 = (json.load(open(p)) for p in sys.argv[1:])
assert [b.get("reference_cached", False) for b in s2["configs"][0]["batches"]] == [False, False, True]
assert s2["verdict"] == s1["verdict"] == "passed", s2["verdict"]
assert [b["passed"] for b in s2["configs"][1]["batches"]] == [b["passed"] for b in s1["configs"][1]["batches"]]
PY
must 0 "reference: 3 of 3 batches from cache" "$T/s3.log" $ORTQUAL validate --outdir "$T/s3" "${fixed[@]}" \
  --cache-dir "$T/sw" --configs ref:encoder:fp64,cpu:attention24:fp32

# batch 0's record edited to give batch 1's outputs' SHA-256 (same shapes: with the outputs' file
# named by that SHA-256 it was trusted, and the configuration was judged against batch 1's
# outputs, FAILED): the outputs' file is the key's, so the record no longer names another's
cp -r "$T/sw" "$T/pt"
$PY - "$T/s1/summary.json" "$T/pt" <<'PY' || fail "could not point batch 0's record at batch 1's outputs"
import glob, json, os, sys
s = json.load(open(sys.argv[1]))
rec = {}
for path in glob.glob(os.path.join(sys.argv[2], "*.json")):
    r = json.load(open(path))
    rec[r["key"].splitlines()[-1].split()[1]] = (path, r)
(p0, r0), (p1, r1) = (rec[s["batches"][i]["sha256"]] for i in (0, 1))
r0["sha256"] = r1["sha256"]
json.dump(r0, open(p0, "w"))
PY
must 0 PASSED "$T/pt.log" $ORTQUAL validate --outdir "$T/pt-run" "${fixed[@]}" --cache-dir "$T/pt" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
grep -q "reference: 2 of 3 batches from cache" "$T/pt.log" || fail "the edited record's batch was not recomputed: $(cat "$T/pt.log")"
grep -q "ignored and recomputed: .*content does not match the SHA-256 its record gives" "$T/pt.log" ||
  fail "no warning for the record naming another batch's outputs"

# a FIFO in an entry's place (its record, its outputs): refused without waiting for a writer (the
# worker waited until --timeout), the batch recomputed, and the FIFO replaced by the entry
for ext in json npz; do
  cp -r "$T/sw" "$T/ff-$ext"
  f=$(ls "$T/ff-$ext"/*.$ext | head -1)
  rm "$f" && mkfifo "$f"
  must 0 PASSED "$T/ff-$ext.log" timeout -s KILL 60 $ORTQUAL validate --outdir "$T/ff-$ext-run" "${fixed[@]}" \
    --timeout 30 --cache-dir "$T/ff-$ext" --configs ref:encoder:fp64,cpu:attention24:fp32
  grep -q "ignored and recomputed: .*$(basename "$f"): is a FIFO (named pipe), not a regular file" "$T/ff-$ext.log" ||
    fail "no warning for the FIFO $(basename "$f"): $(cat "$T/ff-$ext.log")"
  [ -f "$f" ] && [ ! -p "$f" ] || fail "the FIFO $(basename "$f") was not replaced by the entry"
done
# an entry that cannot be read (EACCES): the same warning, naming why
if [ "$(id -u)" != 0 ]; then
  cp -r "$T/sw" "$T/ea" && chmod 000 "$(ls "$T/ea"/*.json | head -1)"
  must 0 "ignored and recomputed: .*json: cannot open: Permission denied" "$T/ea.log" $ORTQUAL validate \
    --outdir "$T/ea-run" "${fixed[@]}" --cache-dir "$T/ea" --configs ref:encoder:fp64,cpu:attention24:fp32
else
  echo "skip: an unreadable entry needs a user that permissions bind (not root)"
fi

# an entry whose outputs were changed and re-hashed (it verifies): the batch is still compared
# against what the cache holds, and the wrong value fails the run. The ORT worker reads the
# entry itself (a link, no copy), so this also checks that link.
tam="$T/tampered"
cp -r "$C" "$tam"
$PY - "$tam" <<'PY'
import glob, hashlib, io, json, os, sys
import numpy as np
d = sys.argv[1]
for rec_path in sorted(glob.glob(os.path.join(d, "*.json"))):
    rec = json.load(open(rec_path))
    npz_path = rec_path[:-len(".json")] + ".npz"  # KEY.npz beside KEY.json
    z = np.load(npz_path)
    arrays = {k: z[k].copy() for k in z.files}
    first = rec["outputs"][0]["name"]
    arrays[first].reshape(-1)[0] += 0.5  # event 0, position 0: a valid element
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    open(npz_path, "wb").write(data)
    rec["sha256"] = hashlib.sha256(data).hexdigest()
    json.dump(rec, open(rec_path, "w"))
PY
must 1 "FAILED" "$T/t.log" $ORTQUAL validate --outdir "$T/t" "${small[@]}" --cache-dir "$tam" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
grep -q "reference: 3 of 3 batches from cache" "$T/t.log" || fail "the tampered entries were not taken from the cache"
$PY - "$T/t/summary.json" <<'PY' || fail "the wrong cached value was not what failed the run"
import json, sys
s = json.load(open(sys.argv[1]))
ort = s["configs"][1]
assert ort["status"] == "failed", ort["status"]
assert all(not b["passed"] for b in ort["batches"]), [b["passed"] for b in ort["batches"]]
assert "output" in ort["reason"], ort["reason"]
PY

# other weights are another reference: nothing from the cache
must 0 PASSED "$T/w.log" $ORTQUAL validate --outdir "$T/w" "${small[@]}" --weights-seed 2 --cache-dir "$C" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
cached "$T/w" 0 || fail "other weights took cached outputs"

# --no-cache: the cache is neither read nor made (the default one, here $T/none/ortqual/reference);
# with --cache-dir, which it would ignore, it is refused
must 0 PASSED "$T/n.log" env XDG_CACHE_HOME="$T/none" $ORTQUAL validate --outdir "$T/n" "${small[@]}" --no-cache \
  --configs ref:encoder:fp64,cpu:attention24:fp32
cached "$T/n" 0 || fail "--no-cache read the cache"
[ ! -e "$T/none" ] || fail "--no-cache made a cache directory"
must 2 "^ortqual validate: --cache-dir and --no-cache contradict" "$T/n2.log" $ORTQUAL validate --outdir "$T/n2" \
  "${small[@]}" --no-cache --cache-dir "$C" --configs ref:encoder:fp64,cpu:attention24:fp32
[ ! -e "$T/n2" ] || fail "--cache-dir with --no-cache made its outdir"
# summary.json names the cache used, or says why there was none; with no home to find the default
# in, a note says the cache is off (every batch was computed, and stored for no later run)
cache_rec() { $PY -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["reference_cache"], sort_keys=True))' "$1/summary.json"; }
[ "$(cache_rec "$T/n")" = '{"dir": null, "off": "--no-cache"}' ] || fail "--no-cache recorded as $(cache_rec "$T/n")"
[ "$(cache_rec "$T/1")" = "{\"dir\": \"$C\"}" ] || fail "--cache-dir recorded as $(cache_rec "$T/1")"
must 0 "^reference cache: off \(HOME and XDG_CACHE_HOME unset; use --cache-dir\)$" "$T/h.log" env -u HOME -u XDG_CACHE_HOME \
  $ORTQUAL validate --outdir "$T/h" "${small[@]}" --configs ref:encoder:fp64,cpu:attention24:fp32
[ "$(cache_rec "$T/h")" = '{"dir": null, "off": "HOME and XDG_CACHE_HOME unset; use --cache-dir"}' ] ||
  fail "no home recorded as $(cache_rec "$T/h")"
# (the default cache: a --cache-dir given with it is refused, e2e/cache_dir_unused)
must 0 PASSED "$T/h2.log" $ORTQUAL validate --outdir "$T/h2" "${small[@]}" \
  --configs cpu:attention24:fp32,cpu:decomposed:fp32
[ "$(cache_rec "$T/h2")" = '{"dir": null, "off": "only a C reference (ref:*) is cached"}' ] ||
  fail "an ORT reference recorded as $(cache_rec "$T/h2")"
! grep -q "reference cache: off" "$T/h2.log" || fail "an ORT reference got the cache-off note"
# a default cache that cannot be made (HOME a file, or read-only: a CI container's arbitrary uid
# with HOME=/nonexistent) is off, with the reason, as no home is; a --cache-dir named there is an error
: > "$T/homefile"
must 0 "^reference cache: off \(the default directory $T/homefile/.cache/ortqual/reference cannot be made, $T/homefile: Not a directory; use --cache-dir\)$" \
  "$T/hf.log" env -u XDG_CACHE_HOME HOME="$T/homefile" $ORTQUAL validate --outdir "$T/hf" "${small[@]}" \
  --configs ref:encoder:fp64,cpu:attention24:fp32
grep -q PASSED "$T/hf.log" || fail "a home where the cache cannot be made: $(tail -2 "$T/hf.log")"
must 2 "cache directory $T/homefile/c: cannot create: Not a directory" "$T/hf2.log" env -u XDG_CACHE_HOME HOME="$T/homefile" $ORTQUAL validate \
  --outdir "$T/hf2" "${small[@]}" --cache-dir "$T/homefile/c" --configs ref:encoder:fp64,cpu:attention24:fp32
mkdir -p "$T/rohome"
if [ "$(id -u)" != 0 ]; then
  chmod 0500 "$T/rohome"
  ro() { env -u XDG_CACHE_HOME HOME="$T/rohome" "$@"; }
elif unshare -m true 2>/dev/null; then
  ro() { unshare -m sh -c 'mount --bind -o ro "$0" "$0" && exec env -u XDG_CACHE_HOME HOME="$0" "$@"' "$T/rohome" "$@"; }
else
  ro() { return 99; }
fi
ro true && {
  must 0 "^reference cache: off \(the default directory $T/rohome/.cache/ortqual/reference cannot be made, $T/rohome: (Read-only file system|Permission denied); use --cache-dir\)$" \
    "$T/roh.log" ro $ORTQUAL validate --outdir "$T/roh" "${small[@]}" --configs ref:encoder:fp64,cpu:attention24:fp32
  [ ! -e "$T/rohome/.cache" ] || fail "a read-only home got a cache directory"
}
chmod 0700 "$T/rohome"

# the default is the XDG cache directory
must 0 PASSED "$T/x.log" $ORTQUAL validate --outdir "$T/x" "${small[@]}" --configs ref:encoder:fp64,cpu:attention24:fp32
ls "$XDG_CACHE_HOME"/ortqual/reference/*.json >/dev/null 2>&1 || fail "nothing stored under \$XDG_CACHE_HOME/ortqual/reference"

# two runs at once on one empty cache: both pass, and the entries they wrote are whole
$ORTQUAL validate --outdir "$T/c1" "${small[@]}" --cache-dir "$T/shared" --configs ref:encoder:fp64,cpu:attention24:fp32 \
  > "$T/c1.log" 2>&1 & p1=$!
$ORTQUAL validate --outdir "$T/c2" "${small[@]}" --cache-dir "$T/shared" --configs ref:encoder:fp64,cpu:decomposed:fp32 \
  > "$T/c2.log" 2>&1 & p2=$!
wait $p1 || fail "concurrent run 1: $(tail -3 "$T/c1.log")"
wait $p2 || fail "concurrent run 2: $(tail -3 "$T/c2.log")"
must 0 "reference: 3 of 3 batches from cache" "$T/c3.log" $ORTQUAL validate --outdir "$T/c3" "${small[@]}" \
  --cache-dir "$T/shared" --configs ref:encoder:fp64,cpu:attention24:fp32
! grep -q "ignored and recomputed" "$T/c3.log" || fail "concurrent runs left a bad entry: $(grep recomputed "$T/c3.log")"
! ls "$T/shared" | grep -q '\.tmp\.' || fail "temporary files left in the cache"

# a cache made read-only by its owner stays read-only: made private (0500), never writable (it
# was made 0700); its entries are read. On a read-only file system (a shared cache mounted
# read-only) it is used as it is (it was refused, exit 2: "cannot make it private")
mkdir "$T/ro" && cp "$C"/* "$T/ro/" && chmod 555 "$T/ro"
must 0 "reference: 3 of 3 batches from cache" "$T/ro.log" $ORTQUAL validate --outdir "$T/ro-run" "${small[@]}" \
  --cache-dir "$T/ro" --configs ref:encoder:fp64,cpu:attention24:fp32
[ "$(stat -c %a "$T/ro")" = 500 ] || fail "the read-only cache was made $(stat -c %a "$T/ro")"
grep -qF "cache directory $T/ro: mode changed from 0555 to 0500" "$T/ro.log" \
  || fail "the cache's mode was changed without a word: $(grep -i mode "$T/ro.log")"
# a group's folder given as the cache (setgid, 2775) is made private, never silently: the warning
# names the folder and both modes; a private one (made 0700 above) is left without a word
mkdir "$T/grp" && chmod 2775 "$T/grp"
must 0 "warning: cache directory $T/grp: mode changed from 02775 to 0700" "$T/grp.log" $ORTQUAL validate \
  --outdir "$T/grp-run" "${small[@]}" --cache-dir "$T/grp" --configs ref:encoder:fp64,cpu:attention24:fp32
[ "$(stat -c %a "$T/grp")" = 700 ] || fail "the group's cache folder was made $(stat -c %a "$T/grp")"
! grep -q "mode changed" "$T/2.log" || fail "a private cache's mode was reported changed: $(grep mode "$T/2.log")"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  chmod 755 "$T/ro"
  must 0 "reference: 3 of 3 batches from cache" "$T/rofs.log" unshare -m sh -c \
    'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"' sh "$T/ro" \
    $ORTQUAL validate --outdir "$T/rofs-run" "${small[@]}" --cache-dir "$T/ro" --configs ref:encoder:fp64,cpu:attention24:fp32
else
  echo "skip: the read-only file system case needs root and mount namespaces"
fi

# a cache directory that is not ours is refused before anything is written
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  mkdir "$T/theirs"
  chown nobody "$T/theirs"
  must 2 "owned by another user \(uid [0-9]+\): the reference cache is per user" "$T/o.log" $ORTQUAL validate --outdir "$T/o" "${small[@]}" --cache-dir "$T/theirs"
  [ ! -e "$T/o" ] || fail "a refused cache directory still let the run write $T/o"
  ln -s "$T/shared" "$T/link"
  chown -h nobody "$T/link"
  must 2 "symbolic link owned by another user" "$T/l.log" $ORTQUAL validate --outdir "$T/l" "${small[@]}" \
    --cache-dir "$T/link"
else
  echo "skip: the other-user cases need root to make another user's directory"
fi
# Entries that agree with their records (SHA-256 right) but are not the reference's: another
# output name (the configuration under test was blamed: "this configuration has no such output"),
# float32 values for the float64 reference (used: the reference became float32). Each is ignored
# and recomputed, and the one warning counts the others (one warning stood for two entries).
S=(--export sdpa --num-events 4 --batch-size 2 --max-len 16 --threads 1 --no-plots
   --configs ref:sdpa:fp64,cpu:attention24:fp32)
must 0 PASSED "$T/s0.log" $ORTQUAL validate "${S[@]}" --outdir "$T/s0" --cache-dir "$T/sc"
for mut in renamed float32; do
  cp -r "$T/sc" "$T/sc-$mut"
  $PY - "$mut" "$T/sc-$mut" <<'PY'
import glob, hashlib, json, sys
import numpy as np
mut, d = sys.argv[1:]
for j in glob.glob(d + "/*.json"):
    z = j[:-5] + ".npz"
    r, o = json.load(open(j)), dict(np.load(z))
    if mut == "renamed":
        o = {"other": v for v in o.values()}
        r["outputs"][0]["name"] = "other"
    else:
        o = {k: v.astype(np.float32) for k, v in o.items()}
        r["outputs"][0]["dtype"] = "float32"
    np.savez(z, **o)
    r["sha256"] = hashlib.sha256(open(z, "rb").read()).hexdigest()
    json.dump(r, open(j, "w"), indent=1)
PY
done
why_renamed="output 'other' is none of the reference's \(output\)"
why_float32="output 'output' is float32, not the reference's float64"
for mut in renamed float32; do
  why=why_$mut
  must 0 "warning: reference cache entry [0-9a-f]{64} ignored and recomputed: ${!why}; and 1 more entry ignored and recomputed$" \
    "$T/s-$mut.log" $ORTQUAL validate "${S[@]}" --outdir "$T/s-$mut" --cache-dir "$T/sc-$mut"
  grep -q "reference: 0 of 2 batches from cache" "$T/s-$mut.log" || fail "$mut entries used: $(grep cache "$T/s-$mut.log")"
  [ "$(grep -o '"reference_dtype": "[a-z0-9]*"' "$T/s-$mut/summary.json" | sort -u)" = '"reference_dtype": "float64"' ] ||
    fail "$mut entries: the reference is not float64"
done
# records that are no cache records: the run does not say every batch has an entry (it said
# "every batch's outputs are in the cache" and then took none of them)
cp -r "$T/sc" "$T/sc-schema"
for j in "$T"/sc-schema/*.json; do echo '{"schema": 1}' > "$j"; done
must 0 "not a cache record; and 1 more entry ignored and recomputed$" "$T/s-schema.log" \
  $ORTQUAL validate "${S[@]}" --outdir "$T/s-schema" --cache-dir "$T/sc-schema"
! grep -E "in the cache: read beside|a cache entry for every batch" "$T/s-schema.log" ||
  fail "bad records announced as cache entries for every batch"
# stderr names the first bad entry and counts the others; summary.json names every one, and why
$PY - "$T/s-schema/summary.json" "$T/sc-schema" <<'PY' || fail "summary.json does not name every bad entry"
import glob, json, os, sys
ref = json.load(open(sys.argv[1]))["configs"][0]
keys = sorted(os.path.basename(j)[:-5] for j in glob.glob(sys.argv[2] + "/*.json"))
got = ref.get("cache_ignored", [])
assert sorted(e["entry"] for e in got) == keys, (got, keys)
assert all(e["reason"] == e["entry"] + ".json: not a cache record" for e in got), got
PY
# the good entries (rewritten by the runs above) are announced, read beside the first configuration
must 0 "\[1/2\] ref:sdpa:fp64: a cache entry for every batch: read and verified beside \[2/2\] cpu:attention24:fp32" \
  "$T/s-good.log" $ORTQUAL validate "${S[@]}" --outdir "$T/s-good" --cache-dir "$T/sc-schema"
grep -q "reference: 2 of 2 batches from cache" "$T/s-good.log" || fail "good entries: $(grep cache "$T/s-good.log")"
# a split run: the merged summary names every shard's bad entries (it kept the first shard's)
cp -r "$T/sc" "$T/sc-split"
for j in "$T"/sc-split/*.json; do echo '{"schema": 1}' > "$j"; done
must 0 "prepared" "$T/sp.log" $ORTQUAL validate "${S[@]}" --outdir "$T/sp" --cache-dir "$T/sc-split" --prepare-shards 2
for i in 0 1; do
  must 0 "shard $i of 2 done" "$T/sp$i.log" $ORTQUAL validate "${S[@]}" --outdir "$T/sp" --cache-dir "$T/sc-split" --shard $i/2
done
must 0 PASSED "$T/spm.log" $ORTQUAL merge --no-plots "$T/sp"
$PY - "$T/sp/summary.json" <<'PY' || fail "the merged summary does not name every shard's bad entry"
import json, sys
got = json.load(open(sys.argv[1]))["configs"][0].get("cache_ignored", [])
assert len(got) == 2 and len({e["entry"] for e in got}) == 2, got
PY
echo "refcache: ok"
