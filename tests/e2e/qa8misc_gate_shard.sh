#!/usr/bin/env bash
# QA 8b D6: `gate -- ortqual validate ... --shard 0/2` passed (exit 0, verdict "pass", JUnit green)
# with no word that the verdict was one shard's of two, while the campaign's merge failed (shard 1
# never ran). A shard's verdict line is followed by "shard I of N done; ..."; the gate fails it,
# naming the merge, unless --allow-shard, which passes it with a note. Real shard runs.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
S=(--num-events 4 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --progress never --no-cache
   --configs ref:encoder:fp64,cpu:attention24:fp32)
"$Q" validate "${S[@]}" --outdir "$T/P" --prepare-shards 2 >"$T/prep.log" 2>&1 || fail "prepare: $(tail -3 "$T/prep.log")"

# 1. the shard's own verdict: FAIL, the reason names the shard line and the merge
expect 1 "the verdict at line [0-9]+ is one shard's, not its campaign's \(line [0-9]+: shard 0 of 2 done; " \
    "$Q" gate --quiet --verdict "$T/g.json" --junit "$T/g.xml" -- "$Q" validate "${S[@]}" --outdir "$T/P" --shard 0/2
"$PY" - "$T/g.json" <<'PY' && ok "verdict.json: fail, the reason names ortqual merge" || bad "verdict.json: $(cat "$T/g.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "fail", d
assert any("one shard's" in r and "ortqual merge DIR" in r for r in d["reasons"]), d["reasons"]
PY
grep -q "<failure" "$T/g.xml" && ok "JUnit: a failing case" || bad "JUnit green: $(cat "$T/g.xml")"

# 2. --allow-shard: the same run passes, and says that only one shard was gated
expect 0 "note: the verdict at line [0-9]+ is one shard's" \
    "$Q" gate --quiet --allow-shard --verdict "$T/a.json" -- "$Q" validate "${S[@]}" --outdir "$T/P" --shard 1/2
"$PY" - "$T/a.json" <<'PY' && ok "--allow-shard: pass with a note" || bad "--allow-shard: $(cat "$T/a.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "pass" and any("one shard's" in n for n in d["notes"]), d
PY

# 3. a later verdict that is no shard's (the merge's) is judged as before: the shard lines are
#    their own verdicts' only
"$Q" validate "${S[@]}" --outdir "$T/Q" --prepare-shards 2 >"$T/prep2.log" 2>&1 || fail "prepare Q: $(tail -3 "$T/prep2.log")"
expect 0 "PASS" "$Q" gate --quiet -- bash -c \
    "for i in 0 1; do '$Q' validate ${S[*]} --outdir '$T/Q' --shard \$i/2 || exit 1; done; '$Q' merge '$T/Q'"
report
