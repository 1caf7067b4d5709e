#!/usr/bin/env bash
# Merged summaries held to their plan, and shards held to their plan's files (thirty-fourth
# session, mergeplan):
# 1. plot and report (and report --junit) of a merged summary hold it to its plan
#    (DIR/shards/plan.json beside it) as the merge holds its shards: a tolerance, padding rule or
#    output list that is not the plan's is refused, in its outputs or its batch records; where the
#    plan is not there (the summary copied alone) or is another plan, a warning line says it was
#    not checked, on stderr and on report's page (both drew it in silence);
# 2. a configuration's shards[] that leaves out a shard that ran it, or names one that did not,
#    is refused, plan or no plan (a hand-edited merge read as whole);
# 3. JUnit's `shard I` case fails for a shard that reported its own verdict failed, unless the
#    merge cleared that failure (it passed);
# 4. a shard command without --inputs on a plan prepared from files, or with --inputs on a plan of
#    generated events, is refused naming the plan's file (it ran the plan's batches silently).
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
CONTRA="refusing to draw a summary that (contradicts itself|left an output out)$"
V=(validate --max-len 8 --repeat 1 --warmup 0 --threads 1 --progress never --no-plots --no-cache
   --configs ref:encoder:fp64,cpu:attention24:fp32)
G=(--num-events 4 --batch-size 2)
"$Q" "${V[@]}" "${G[@]}" --outdir S --prepare-shards 2 >p.log 2>&1 || fail "prepare: $(tail -3 p.log)"
for i in 0 1; do "$Q" "${V[@]}" "${G[@]}" --outdir S --shard $i/2 >s$i.log 2>&1 || fail "shard $i: $(tail -3 s$i.log)"; done
"$Q" merge --no-plots S >m.log 2>&1 || fail "merge: $(tail -3 m.log)"

# edit DST CODE [SHARDS]: DST/summary.json is S's with python CODE run on its JSON `s`, beside
# DST/shards, a link to SHARDS (default S/shards: the plan reachable; "-": none)
edit() {
    mkdir -p "$1"
    [ "${3:-S/shards}" = - ] || ln -s "$T/${3:-S/shards}" "$1/shards"
    json_edit S/summary.json "$1/summary.json" "$2"
}
# refused DIR WHY: report --junit and plot refuse DIR/summary.json in one line, nothing written
refused() {
    draw_refused "$1" "$2: $CONTRA"
    [ "$(ls "$1")" = "$(printf 'shards\nsummary.json')" ] || [ "$(ls "$1")" = summary.json ] &&
        ok "$1: nothing written" || bad "$1: written: $(ls "$1")"
}
# drawn DIR WARNING: report and plot draw DIR/summary.json (exit 0), saying WARNING (grep -E) on
# stderr, or nothing there when WARNING is ""
drawn() {
    local cmd out
    for cmd in "report $1" "plot $1 --out $1/plots"; do
        # shellcheck disable=SC2086 # the command's words, split on purpose
        out=$("$Q" $cmd 2>&1 >/dev/null)
        [ $? = 0 ] && { [ -z "$2" ] && [ -z "$out" ] || grep -qE -- "^ortqual ${cmd%% *}: warning: $2" <<<"$out"; } &&
            ok "$cmd: drawn${2:+, with the warning}" || bad "$cmd: exit or stderr not as expected: $out"
    done
}

# ---- 1. the plan's rules: in the outputs, in the batch records, the output list
drawn S ""
PLAN="not at the plan's rtol=0.0001,atol=1e-05"
edit tol 'for o in s["configs"][1]["outputs"]: o["tolerance"] = {"rtol": 1, "atol": 1}
for b in s["configs"][1]["batches"]:
    for o in b["outputs"]: o["tolerance"] = {"rtol": 1, "atol": 1}'
refused tol "cpu:attention24:fp32 passed, but its output 'cls' was judged at rtol=1,atol=1, $PLAN"
edit pad 'for o in s["configs"][1]["outputs"]: o["padding"]["rule"] = "report"; o["padding"]["checked"] = False'
refused pad "cpu:attention24:fp32 passed, but its output 'cls' was compared under padding rule 'report', not the plan's 'zero'"
edit rec 'for o in s["configs"][1]["batches"][1]["outputs"]: o["tolerance"] = {"rtol": 1, "atol": 1}'
refused rec "cpu:attention24:fp32 passed, but its batch 1, output 'cls' was judged at rtol=1,atol=1, $PLAN"
edit outs 'del s["configs"][1]["outputs"][1]
for b in s["configs"][1]["batches"]: del b["outputs"][1]'
refused outs "cpu:attention24:fp32 lists no output 'reg', an output of the plan's model \(plan.json\)"
#    the plan not there, or another plan: drawn, with a warning line (the rules were not checked)
edit alone 'pass' -
drawn alone "alone/summary.json is a merged summary, but its plan alone/shards/plan.json is not there \(the summary moved or copied without shards/\?\): the plan's tolerances, padding rule and outputs were not checked against it$"
grep -q 'class="evidence-warning"><span class="warn">warning:</span> alone/summary.json is a merged summary, but its plan alone/shards/plan.json is not there' alone/report.html &&
    ! grep -q "is a merged summary, but" S/report.html && ok "alone's page says it too; S's page not" ||
    bad "the pages' warnings: $(grep -o 'evidence-warning.\{0,160\}' alone/report.html S/report.html)"
"$Q" "${V[@]}" "${G[@]}" --tolerance rtol=0.5 --outdir P2 --prepare-shards 2 >p2.log 2>&1 || fail "prepare P2: $(tail -3 p2.log)"
edit other 'pass' P2/shards
drawn other "other/summary.json is a merged summary, but its plan other/shards/plan.json is plan [0-9a-f]{16}, not this summary's [0-9a-f]{16} \(prepared again since\?\)"

# ---- 2. each configuration's shards[] against the merge's shards, plan or no plan
edit drop1 'del s["configs"][1]["shards"][1]' -
refused drop1 "cpu:attention24:fp32 lists no result of shard 1 \(shards\[\]\), which ran it and reported"
edit past 's["configs"][0]["shards"][1]["index"] = 5' -
refused past "ref:encoder:fp64, shards\[1\] names shard 5, which is not one of the merge's \(shards.count\)"
#    shard 1 made a problem by hand: the verdict follows, the configuration still says passed
edit hidden 'del s["configs"][1]["shards"][1]; del s["configs"][0]["shards"][1]; del s["shards"]["reported"][1]
s["shards"]["problems"] = [{"index": 1, "state": "missing", "detail": "never started"}]
s["verdict"] = "failed"; s["verdict_reason"] = "shard 1 of 2 missing"; s["exit_status"] = 1' -
refused hidden "ref:encoder:fp64 is 'reference', but shard 1, which runs it, did not report \(shards.problems\)"

# ---- 3. JUnit: a shard that reported its own failure is a failing case
T0=(--tolerance rtol=0,atol=0)
"$Q" "${V[@]}" "${G[@]}" "${T0[@]}" --outdir F --prepare-shards 2 >pf.log 2>&1 || fail "prepare F: $(tail -3 pf.log)"
for i in 0 1; do expect 1 "shard $i of 2 done" "$Q" "${V[@]}" "${G[@]}" "${T0[@]}" --outdir F --shard $i/2; done
expect 1 "verdict: FAILED" "$Q" merge --no-plots --junit fm.xml F
expect 0 "fr.xml" "$Q" report --junit fr.xml F
# cases FILE WANT: the shards suite's cases of JUnit FILE, as "name:kind:type" (kind pass,
# failure, error), are WANT
cases() {
    local got
    got=$($PY - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
suite = next(t for t in ET.parse(sys.argv[1]).getroot() if t.get("name") == "shards")
print(" ".join("%s:%s:%s" % (c.get("name"), c[0].tag if len(c) else "pass", c[0].get("type") if len(c) else "")
               for c in suite.findall("testcase")))
PY
)
    [ "$got" = "$2" ] && ok "$1: shards cases $2" || bad "$1: shards cases '$got', expected '$2'"
}
cases fm.xml "shard 0:failure:failed shard 1:failure:failed"
cases fr.xml "shard 0:failure:failed shard 1:failure:failed"
grep -qF 'message="shard 1 of 2 reported verdict failed: cpu:attention24:fp32 failed on it (' fm.xml &&
    ok "the case names the configuration" || bad "fm.xml: $(grep -o 'shard 1 of 2[^"]*' fm.xml)"
#    a shard failure the merge cleared (the others' routing lines: the configuration passed), and
#    a failed verdict no configuration explains
edit cleared 's["shards"]["reported"][1]["verdict"] = "failed"; s["configs"][1]["shards"][1]["status"] = "failed"'
expect 0 "cj.xml" "$Q" report --junit cleared/cj.xml cleared
cases cleared/cj.xml "shard 0:pass: shard 1:pass:"
edit unexplained 's["shards"]["reported"][0]["verdict"] = "error"'
expect 0 "uj.xml" "$Q" report --junit unexplained/uj.xml unexplained
cases unexplained/uj.xml "shard 0:error:error shard 1:pass:"
#    every shard passed: every case passes
expect 0 "sj.xml" "$Q" report --junit sj.xml S
cases sj.xml "shard 0:pass: shard 1:pass:"

# ---- 4. a shard's command makes its batches as the plan's were made
cp S/inputs_000.npz a.npz && cp S/inputs_001.npz b.npz
# (a plan from files takes no --max-len: the files give the events)
W=(validate --repeat 1 --warmup 0 --threads 1 --progress never --no-plots --no-cache
   --configs ref:encoder:fp64,cpu:attention24:fp32)
"$Q" "${W[@]}" --inputs a.npz b.npz --outdir I --prepare-shards 2 >pi.log 2>&1 || fail "prepare I: $(tail -3 pi.log)"
none="^ortqual validate: --inputs names no file, but batch 0 of I/shards/plan.json was prepared from the user's file a.npz \(SHA-256 [0-9a-f]{12}\.\.\.\): this shard's command would generate events, not read the files the plan runs; run every shard with the files the shards were prepared with$"
one_line 2 "$none" "$Q" "${W[@]}" --outdir I --shard 0/2
one_line 2 "$none" "$Q" "${W[@]}" --num-events 40 --batch-size 4 --outdir I --shard 0/2
[ "$(ls I/shards/0)" = error.json ] && ok "refused shard: its error.json only" || bad "I/shards/0: $(ls I/shards/0)"
expect 0 "shard 1 of 2 done" "$Q" "${W[@]}" --inputs a.npz b.npz --outdir I --shard 1/2
one_line 2 "^ortqual validate: --inputs names 2 files, but batch 1 of P2/shards/plan.json holds generated events, read from no file: this shard would run them, not the files it names; run every shard with the options the shards were prepared with$" \
    "$Q" "${W[@]}" --tolerance rtol=0.5 --inputs a.npz b.npz --outdir P2 --shard 1/2
report
