#!/usr/bin/env bash
# validate --cache-shared: an entry is yours only when you wrote both its files (QA round 8b, D2).
# A member deletes one of our entries, renames our outputs of another batch of the same shapes
# to its key (a rename in a group folder without the sticky bit keeps the file ours) and writes
# the record himself: the entry was taken for ours (the writer was the outputs' owner), never
# spot-checked, and the other batch's reference made a right model FAIL. The entry is now the
# member's: trusted by group, his spot-checked batch is that one, recomputed, found different,
# none of his entries used, each listed in cache_ignored, PASSED; trusted by self, refused. An
# honest mixed entry (two members storing one entry at once leave one's record over the
# other's outputs of the same bytes) is the other member's too, either way round: spot-checked
# identical and used.
# Needs root (a second user, nobody, in our group); elsewhere exit 77: ctest counts it skipped.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
  echo "SKIP: a second member of the group needs root, the user nobody and setpriv"
  exit 77
fi
G=$(id -g)
GN=$(id -gn)
NB=$(id -u nobody)
S="$T/cache"
chmod 711 "$T"
install -d -m 2770 -g "$G" "$S"
A=(--num-events 4 --batch-size 2 --max-len 16 --length-policy fixed --repeat 1 --warmup 0 --no-plots
   --progress never --configs ref:encoder:fp64,cpu:attention24:fp32 --cache-dir "$S" --cache-shared)
# the member's forgery: the entry of inputs VICTIM gets our outputs of inputs DONOR (renamed, so
# still ours) and a record of his naming them
cat >"$T/forge.py" <<'PY'
import glob, hashlib, json, os, sys
cache, victim, donor = sys.argv[1:4]
def entry(sha):
    for f in glob.glob(os.path.join(cache, "*.json")):
        if json.load(open(f))["key"].rstrip("\n").endswith("inputs " + sha): return f[:-5], json.load(open(f))
    sys.exit("no entry for inputs " + sha)
vk, rec = entry(victim)
dk, _ = entry(donor)
os.unlink(vk + ".npz"); os.unlink(vk + ".json")
os.rename(dk + ".npz", vk + ".npz")
rec["sha256"] = hashlib.sha256(open(vk + ".npz", "rb").read()).hexdigest()
json.dump(rec, open(vk + ".json.tmp", "w"), indent=1); os.chmod(vk + ".json.tmp", 0o640)
os.rename(vk + ".json.tmp", vk + ".json")
print(os.path.basename(vk))
PY
chmod 644 "$T/forge.py"
forge() { # the member's forgery of our seed-7 batch 0 from our seed-8 batch 0; prints its KEY
  setpriv --reuid=nobody --regid="$(id -g nobody)" --groups="$G" -- /usr/bin/python3 "$T/forge.py" "$S" \
    "$(sha256sum "$T/a7/inputs_000.npz" | cut -d' ' -f1)" "$(sha256sum "$T/a8/inputs_000.npz" | cut -d' ' -f1)"
}
must 0 "verdict: PASSED" "$T/a7.log" "$Q" validate "${A[@]}" --outdir "$T/a7"
must 0 "verdict: PASSED" "$T/a8.log" "$Q" validate "${A[@]}" --seed 8 --outdir "$T/a8"

# check DIR KEY USED: summary.json: PASSED, KEY (if any) in cache_ignored for nobody's record over
# our outputs, nobody's entries used USED (nobody a writer when USED is a number)
check() {
  $PY - "$T/$1/summary.json" "$2" "$3" "$NB" <<'PY'
import json, sys
path, key, used, nb = sys.argv[1:5]
s = json.load(open(path))
assert s["verdict"] == "passed", s["verdict"]
ref = s["configs"][0]
ign = {e["entry"]: e["reason"] for e in ref.get("cache_ignored", [])}
if key:
    why = ign.get(key, "")
    assert why.startswith(key + ".json: written by uid %s (nobody), over outputs of uid 0 (" % nb), ign
w = ref.get("cache_writers")
if used == "-":
    assert w is None, w
else:
    assert w and w[0]["user"] == "nobody" and w[0]["entries"] == int(used), w
PY
}

# trusted by group: the forged entry is the member's only one, so it is his spot-checked batch
key=$(forge)
must 0 "spot check of nobody's entries: batch 0 recomputed: batch 0, recomputed here, differs from its entry" \
  "$T/g.log" "$Q" validate "${A[@]}" --outdir "$T/g"
grep -q "verdict: PASSED" "$T/g.log" || fail "a forged entry made a right model fail: $(grep verdict "$T/g.log")"
grep -q "warning: reference cache: every entry written by uid $NB (nobody) ignored and recomputed" "$T/g.log" ||
  fail "no warning that the member's entries were ignored: $(grep warning "$T/g.log")"
check g "$key" 0 || fail "summary.json of the group-trusting run over a forged entry"

# trusted by self: the member's record makes the entry his, refused, recomputed and replaced
must 0 "verdict: PASSED" "$T/a8b.log" "$Q" validate "${A[@]}" --seed 8 --outdir "$T/a8b"
key=$(forge)
must 0 "ignored and recomputed: $key.json: written by uid $NB \(nobody\), over outputs of uid 0 \(.*\), not you: only your own" \
  "$T/s.log" "$Q" validate "${A[@]}" --outdir "$T/s" --cache-trust self
check s "$key" - || fail "summary.json of the self-trusting run over a forged entry"
[ "$(stat -c %U "$S/$key.json")" = "$(id -un)" ] || fail "the forged record was not replaced: $(ls -l "$S")"

# honest mixed entries, either way round, of the same bytes: the member's, checked identical, used
for own in "nobody:$GN root:$GN" "root:$GN nobody:$GN"; do
  read -r rec out <<<"$own"
  chown "$rec" "$S/$key.json" && chown "$out" "$S/$key.npz"
  must 0 "reference: 2 of 2 batches from cache, a cache shared by group $GN, 1 written by other members: nobody \(1\)" \
    "$T/h.log" "$Q" validate "${A[@]}" --outdir "$T/h" --force
  grep -q "spot check of nobody's entries: batch 0 recomputed: identical" "$T/h.log" ||
    fail "a mixed entry (record $rec, outputs $out) was used without its spot check: $(grep -i spot "$T/h.log")"
  check h "" 1 || fail "summary.json of the run over a mixed entry (record $rec, outputs $out)"
done
echo "ok: a shared cache's entry is its writer's only when both its files are"
