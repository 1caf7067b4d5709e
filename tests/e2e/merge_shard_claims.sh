#!/usr/bin/env bash
# What a shard's summary and page claim, held to the plan (QA round 7, 2026-12-07):
# 1. an output left out of every shard's summary merged PASSED (the merge took the outputs from
#    the shards' union): now plan.json lists each configuration's model outputs and the merge
#    refuses a shard that lacks one (exit 2); a plan without the list is refused for a user model
# 3. a shard run alone wrote report.html PASSED and JUnit with 0 failures, saying nothing of being
#    one shard of N: both now name the shard and that the campaign's verdict is the merge's
# 4. an `interrupted` record beside verdict passed, and library_sha256 null beside a shard that
#    recorded it, merged PASSED: both refused (exit 2, naming the file and the field)
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
V=(validate --num-events 8 --batch-size 2 --max-len 16 --repeat 1 --warmup 0 --threads 1 --progress never --no-plots
   --no-cache --configs ref:encoder:fp64,cpu:attention24:fp32)
# edit FILE CODE: run python CODE on summary/plan FILE's JSON `s`, written back
edit() { $PY - "$1" "$2" <<'PY'
import json, sys
f = sys.argv[1]; s = json.load(open(f))
exec(sys.argv[2])
json.dump(s, open(f, "w"))
PY
}

$Q "${V[@]}" --outdir S --prepare-shards 2 >p.log 2>&1 || fail "prepare: $(tail -3 p.log)"
for i in 0 1; do $Q "${V[@]}" --outdir S --shard $i/2 >s$i.log 2>&1 || fail "shard $i: $(tail -3 s$i.log)"; done

# 1. the plan lists the model's outputs; a shard that lacks one is refused
got=$($PY -c "import json; print(json.load(open('S/shards/plan.json'))['outputs'])")
[ "$got" = "[None, ['cls', 'reg']]" ] && ok "plan.json lists the model's outputs" || bad "plan.json outputs: $got"
cp -a S D
for i in 0 1; do
    edit D/shards/$i/summary.json 'for c in s["configs"]:
    c["outputs"] = [o for o in c["outputs"] if o["name"] != "reg"]
    for b in c.get("batches", []):
        if "outputs" in b: b["outputs"] = [o for o in b["outputs"] if o["name"] != "reg"]'
done
one_line 2 "D/shards/0/summary.json: cpu:attention24:fp32 lists no output 'reg', an output of the plan's model" \
    $Q merge D
[ ! -e D/summary.json ] && ok "a refused merge leaves no summary.json" || bad "D/summary.json written"
cp -a S X
edit X/shards/1/summary.json 's["configs"][1]["outputs"].append(dict(s["configs"][1]["outputs"][1], output="other", name="other"))'
one_line 2 "X/shards/1/summary.json: cpu:attention24:fp32 lists output 'other', which the plan's model has not" \
    $Q merge X
# a plan prepared before the list: built-in models merge as before
cp -a S O
edit O/shards/plan.json 'del s["outputs"]'
expect 0 "verdict: PASSED" $Q merge O

# 1b. a user model: the list is its ONNX file's; without it the merge refuses
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like"
E=(validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/inputs_000.npz" "$FX/inputs_001.npz"
   --expected "$FX/outputs_000.npz" "$FX/outputs_001.npz" --configs expected,cpu:model:fp32 --no-plots --progress never)
$Q "${E[@]}" --outdir U --prepare-shards 2 >up.log 2>&1 || fail "user prepare: $(tail -3 up.log)"
for i in 0 1; do $Q "${E[@]}" --outdir U --shard $i/2 >u$i.log 2>&1 || fail "user shard $i: $(tail -3 u$i.log)"; done
expect 0 "verdict: PASSED" $Q merge U
edit U/shards/plan.json 'del s["outputs"]'
one_line 2 "U/shards/0/summary.json: cpu:model:fp32 runs a user model, but .*plan.json records no list of its outputs.*prepare the shards again" \
    $Q merge U

# 3. a shard run alone: its page and JUnit say it is one shard, and whose the campaign's verdict is
cp -a S H
rm -rf H/shards/0 H/summary.json
expect 0 "shard 1 of 2 done" $Q "${V[@]}" --outdir H --shard 1/2 --force --junit h1.xml
q="(&#39;|')" # an apostrophe, as HTML and XML escape it
note="shard 1 of 2 by batch, of plan [0-9a-f]{12}: this verdict is the shard${q}s; the campaign${q}s is .ortqual merge DIR.${q}s"
grep -qE "<p id=\"verdict-shard\">$note" H/shards/1/report.html && ok "the shard's page names the shard" ||
    bad "H/shards/1/report.html: $(grep -o '<p id="verdict[^<]*' H/shards/1/report.html)"
grep -qE "<testsuites name=\"ortqual validate, $note\" tests=\"2\" failures=\"0\"" h1.xml &&
    grep -qE "<property name=\"shard\" value=\"$note\"/>" h1.xml && ok "the shard's JUnit names the shard" ||
    bad "h1.xml: $(head -c 600 h1.xml)"
expect 1 "verdict: FAILED" $Q merge H
! grep -q 'id="verdict-shard"' H/report.html && ok "the merged page is no shard's" || bad "H/report.html says shard"

# 4. a summary that contradicts itself in fields the merge did not check
cp -a S I
edit I/shards/1/summary.json 's["interrupted"] = {"signal": "SIGTERM", "number": 15, "config": "cpu:attention24:fp32"}'
one_line 2 "I/shards/1/summary.json: field 'interrupted' records signal 15, but its verdict is 'passed'" $Q merge I
cp -a S L
edit L/shards/1/summary.json 's["configs"][1]["onnxruntime"]["library_sha256"] = None'
one_line 2 "L/shards/1/summary.json: cpu:attention24:fp32, field onnxruntime.library_sha256 is empty where another shard recorded it" \
    $Q merge L
cp -a S L0
edit L0/shards/0/summary.json 's["configs"][1]["onnxruntime"]["library_sha256"] = None'
one_line 2 "L0/shards/0/summary.json: cpu:attention24:fp32, field onnxruntime.library_sha256 is empty" $Q merge L0
expect 0 "verdict: PASSED" $Q merge S
report
