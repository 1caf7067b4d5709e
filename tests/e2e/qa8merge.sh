#!/usr/bin/env bash
# QA round 8b's defects D4, D3, D8 and D9: a merge of shards that did not run, or failed.
# One plan of 2 shards by batch in a folder whose name is not UTF-8 (a byte 0xff); shard 0 runs
# and fails on its own (tolerance 0), shard 1 never runs.
# D4. summary.json keeps the missing shard (its detail byte for byte in "detail_hex"): it had
#     "problems": [] (jansson refuses a string that is not UTF-8, and the entry went with it),
#     the page said "every shard reported" and the JUnit case "shard 1" passed;
# D3. the reference, left `error` by the merge, has no passing "batch N" case (one per batch it
#     ran): only its `run` error;
# D8. the configuration's reason, the verdict's and the merge's advice name shard 0's own failure
#     beside the missing shard (they said only "incomplete: shard 1 (missing) did not report");
# D9. `report` of a shard folder with started.json and no summary (a killed shard) says what the
#     merge says of it (it said "not a run directory?").
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
export LC_ALL=C # grep's patterns match the byte 0xff of the folder's name (UTF-8's "." does not)
D=$(printf 'q\xff')
S=(--num-events 8 --batch-size 2 --max-len 16 --repeat 1 --warmup 0 --no-plots --progress never --no-cache
   --configs ref:encoder:fp64,cpu:attention24:fp32 --tolerance rtol=0,atol=0)
"$Q" validate "${S[@]}" --outdir "$D" --prepare-shards 2 >prep.log 2>&1 || fail "prepare: $(tail -3 prep.log)"
expect 1 "shard 0 of 2 done" "$Q" validate "${S[@]}" --outdir "$D" --shard 0/2
expect 1 "shard 0 of 2 reported verdict failed \(q./shards/0/summary.json says why\): it fails this merge too; rerun it as well as the shards that did not report" \
    "$Q" merge --no-plots --junit m.xml "$D"
expect 0 "r.xml" "$Q" report --junit r.xml "$D"

# pyck NAME <<PY: the Python check on stdin, given DIR and the two JUnit files, is ok or bad
pyck() { $PY - "$D" m.xml r.xml && ok "$1" || bad "$1"; }
pyck "D4: summary.json, the page and both JUnit files name the missing shard" <<'PY'
import json, os, sys
import xml.etree.ElementTree as ET
d = os.fsencode(sys.argv[1])
p = json.load(open(os.path.join(d, b"summary.json")))["shards"]["problems"]
assert [(x["index"], x["state"]) for x in p] == [(1, "missing")], p
assert bytes.fromhex(p[0]["detail_hex"]) == b"never started: no " + d + b"/shards/1", p
assert p[0]["detail"] == "never started: no q\ufffd/shards/1", p
page = open(os.path.join(d, b"report.html"), encoding="utf-8").read()
assert "1 of 2 shards did not report" in page and "every shard reported" not in page
for xml in sys.argv[2:]:
    suite = next(t for t in ET.parse(xml).getroot() if t.get("name") == "shards")
    shard1 = next(c for c in suite.findall("testcase") if c.get("name") == "shard 1")
    assert shard1.find("failure").get("type") == "missing", (xml, ET.tostring(shard1))
PY
pyck "D3: the reference left error has its run error only, no batch case" <<'PY'
import sys
import xml.etree.ElementTree as ET
for xml in sys.argv[2:]:
    ref = next(t for t in ET.parse(xml).getroot() if t.get("name") == "ref:encoder:fp64").findall("testcase")
    assert [(c.get("name"), c[0].tag if len(c) else "pass") for c in ref] == [("run", "error")], xml
    assert ref[0][0].get("message") == "incomplete: shard 1 (missing) did not report", xml
PY
pyck "D8: the configuration's and the verdict's reasons name shard 0's failure and the missing shard" <<'PY'
import json, os, sys
s = json.load(open(os.path.join(os.fsencode(sys.argv[1]), b"summary.json")))
c = s["configs"][1]["reason"]
assert c.startswith("shard 0: batch 0, output cls: FAIL") and c.endswith("; incomplete: shard 1 (missing) did not report"), c
assert s["verdict_reason"] == "cpu:attention24:fp32 failed: " + c, s["verdict_reason"]
PY

# D9: shard 0 killed (its started.json, no summary): report says the merge's words, --junit too
for f in summary.json report.html validate.csv; do rm -f "$D/shards/0/$f"; done
"$Q" merge --no-plots "$D" >k.log 2>&1
said=$(sed -n 's/^ortqual merge: shard 0 of 2 unfinished: //p' k.log)
[[ "$said" == "started on "*" (pid "*") and wrote no summary: killed, timed out or crashed" ]] &&
    ok "merge names shard 0 unfinished" || bad "merge of the killed shard: $(cat k.log)"
want="^ortqual report: q./shards/0 holds started.json and no summary.json \(no result to render\): shard 0 of 2 unfinished: "
for args in "" "--junit j.xml"; do
    # shellcheck disable=SC2086
    one_line 2 "$want" "$Q" report $args "$D/shards/0"
    # shellcheck disable=SC2086
    "$Q" report $args "$D/shards/0" 2>&1 | grep -qF -- "unfinished: $said" && ok "report $args: the merge's words" ||
        bad "report $args: not the merge's words ($said)"
done
report
