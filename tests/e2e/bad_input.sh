#!/usr/bin/env bash
# Bad input from a user's side (the bad-input audit): each case names what is wrong in one
# line, exits non-zero and leaves no half-written output; or, where the input is fine after
# all, runs as it should.
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"

# 1. a --batch-size above --num-events makes one batch of every event (the generation window
#    was sized by --batch-size: 2^31 asked for 4 TiB, "out of memory", exit 3)
expect 0 "cpu:decomposed:fp32: passed" $Q validate --batch-size 2147483648 --num-events 3 --max-len 8 \
    --configs ref:encoder:fp64,cpu:decomposed:fp32 --repeat 1 --warmup 0 --no-plots --no-cache --outdir big
/usr/bin/python3 -c 'import json,sys; b=json.load(open("big/summary.json"))["batches"]; sys.exit(not (len(b) == 1 and b[0]["batch_size"] == 3))' &&
    ok "one batch of 3 events" || bad "big/summary.json: batches $(/usr/bin/python3 -c 'import json; print(json.load(open("big/summary.json"))["batches"])')"

# 2. report (and --junit) on a validate summary.json without its "configs" array, or one whose
#    verdict says passed while no configuration under test passed: refused, one line, the old
#    report.html kept (it was drawn as a green PASSED, "0 under test", and the JUnit had 0 tests)
$Q validate --num-events 2 --max-len 8 --configs ref:encoder:fp64,cpu:decomposed:fp32 --repeat 1 --warmup 0 \
    --no-plots --no-cache --outdir run >/dev/null 2>&1 || bad "validate run: exit $?"
edit() { # edit DIR PYTHON: a copy of run/ as DIR, its summary.json changed by PYTHON (on j)
    cp -r run "$1"
    /usr/bin/python3 - "$1/summary.json" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(j, open(sys.argv[1], "w"))
PY
}
edit noconfigs 'del j["configs"]'
edit strconfigs 'j["configs"] = "x"'
edit nopass 'j["configs"][1]["status"] = "skipped"'
for d in noconfigs strconfigs; do
    cp $d/report.html $d.before
    expect 2 "^ortqual report: $d/summary.json: no \"configs\" array$" $Q report $d
    expect 2 "^ortqual report: $d/summary.json: no \"configs\" array$" $Q report $d --junit $d.xml
    cmp -s $d.before $d/report.html && ok "$d/report.html kept" || bad "$d/report.html rewritten"
    [ ! -e $d.xml ] && ok "$d.xml not made" || bad "$d.xml made"
done
expect 2 "^ortqual report: nopass/summary.json: verdict 'passed', but no configuration under test passed$" $Q report nopass
expect 0 "run/report.html" $Q report run

# 3. merge of a shard whose summary.json lists its configurations in another order: refused,
#    one line, nothing merged (results are merged by position: the reference took the
#    configuration's outputs, the configuration kept half its batches, and the merge passed)
S=(validate --num-events 4 --batch-size 2 --max-len 8 --configs ref:encoder:fp64,cpu:decomposed:fp32 --repeat 1
   --warmup 0 --no-plots --no-cache --outdir sh)
$Q "${S[@]}" --prepare-shards 2 >/dev/null 2>&1 && $Q "${S[@]}" --shard 0/2 >/dev/null 2>&1 &&
    $Q "${S[@]}" --shard 1/2 >/dev/null 2>&1 || bad "sharded run: exit $?"
/usr/bin/python3 - sh/shards/1/summary.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["configs"].reverse()
json.dump(j, open(sys.argv[1], "w"))
PY
expect 2 "^ortqual merge: sh/shards/1/summary.json: configuration 1 is cpu:decomposed:fp32, but the plan's is ref:encoder:fp64 there$" \
    $Q merge sh --no-plots
[ ! -e sh/summary.json ] && [ ! -e sh/report.html ] && [ ! -e sh/validate.csv ] && ok "nothing merged into sh/" ||
    bad "sh/ holds: $(ls sh)"

report
