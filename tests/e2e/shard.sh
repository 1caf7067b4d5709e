#!/usr/bin/env bash
# Sharded validation without a scheduler: prepare once, run the shards, merge; the merge must
# equal the unsharded run field by field (except timings and hosts), and every way a shard can
# go missing, fail, be killed or belong to another plan must be named and fail the merge.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
json() { $PY -c "import json,os,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
same() { $PY "$OQ_SOURCE_DIR/tests/e2e/lib/same_summary.py" "$1" "$2"; }
# shards_page DIR 'PROBLEMS' [JUNIT]: DIR/report.html (and the JUnit XML) show every shard, those
# that did not report in red, failing, with their state and detail; PROBLEMS: "2:missing,..." or ""
shards_page() {
    $PY - "$1/report.html" "$1/summary.json" "$2" "${3:-}" <<'PY' || fail "shards on the page or in JUnit of $1"
import html, json, re, sys
import xml.etree.ElementTree as ET
page, s = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
want = dict((int(k), v) for k, v in (p.split(":") for p in sys.argv[3].split(",") if p))
sh = s["shards"]
assert {p["index"]: p["state"] for p in sh["problems"]} == want, (sh["problems"], want)
assert '<section id="shards">' in page and 'href="#shards"' in page, "no shards section"
rows = dict((int(i), (c, r)) for c, i, r in re.findall(r'<tr class="shard( failed)?" data-shard="(\d+)">(.*?)</tr>', page))
assert sorted(rows) == list(range(sh["count"])), sorted(rows)
for i, (cls, row) in rows.items():
    if i in want:  # red (a failed row, a failed status) with its state and why
        p = next(p for p in sh["problems"] if p["index"] == i)
        assert cls and f'<td class="status failed">{want[i]}</td>' in row and p["detail"] in html.unescape(row), row
    else:
        assert not cls and '<td class="status reported">reported</td>' in row, row
banner = re.search(r'<header class="verdict (\w+)".*?</header>', page, re.S)
line = re.search(r'<p id="verdict-shards"( class="shard-problems")?>(.*?)</p>', banner.group(0))
assert line, "no shards line in the banner"
if want:  # the problems make the run FAILED: the banner is red and names every one
    assert banner.group(1) == "failed" and line.group(1), banner.group(0)
    assert f"{len(want)} of {sh['count']} shards did not report" in line.group(2), line.group(2)
    for i, st in want.items(): assert f"shard {i} {st}: " in line.group(2), line.group(2)
else:
    assert not line.group(1) and "every shard reported" in line.group(2), line.group(0)
if sys.argv[4]:
    suite = next(t for t in ET.parse(sys.argv[4]).getroot() if t.get("name") == "shards")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert sorted(cases) == sorted(f"shard {i}" for i in range(sh["count"])), sorted(cases)
    for i in range(sh["count"]):
        f = cases[f"shard {i}"].find("failure")
        if i in want:
            assert f is not None and f.get("type") == want[i] and f.get("message").startswith(f"shard {i} of "), ET.tostring(f)
        else:
            assert f is None and cases[f"shard {i}"].find("error") is None, ET.tostring(cases[f"shard {i}"])
    assert int(suite.get("failures")) == len(want), suite.attrib
PY
}
V=(validate --no-cache --num-events 7 --batch-size 2 --repeat 1
   --configs ref:encoder:fp64,cpu:decomposed:fp32,cpu:attention24:fp32)

# 1. the unsharded run, and the same plan in 3 shards by batch (batches 0|1|2,3)
must 0 "verdict: PASSED" "$T/u.log" $ORTQUAL "${V[@]}" --outdir "$T/U"
must 0 "prepared 3 shards by batch" "$T/p.log" $ORTQUAL "${V[@]}" --outdir "$T/P" --prepare-shards 3
[ ! -e "$T/P/summary.json" ] && [ ! -e "$T/P/shards/0" ] || fail "prepare ran something: $(ls "$T/P" "$T/P/shards")"
# plan.json does not grow with the batches: they are in plan_batches.jsonl, a line each, read a
# line at a time (and the description, every batch by SHA-256, in plan_description.json)
[ "$(json "$T/P/shards/plan.json" '(d["schema"], d["batches"]["file"], d["batches"]["count"], d["plan"]["description"], "inputs" in open(sys.argv[1]).read())')" = \
  "('ortqual.shards/2', 'plan_batches.jsonl', 4, 'plan_description.json', False)" ] ||
    fail "plan.json names its batches: $(cat "$T/P/shards/plan.json")"
[ "$(wc -l < "$T/P/shards/plan_batches.jsonl")" = 4 ] || fail "plan_batches.jsonl: $(cat "$T/P/shards/plan_batches.jsonl")"
cmp -s "$T/U/inputs_002.npz" "$T/P/inputs_002.npz" || fail "the same batch written twice differs (npz not reproducible)"
for i in 0 1 2; do
    must 0 "shard $i of 3 done" "$T/p$i.log" $ORTQUAL "${V[@]}" --outdir "$T/P" --shard $i/3
done
[ "$(json "$T/P/shards/2/summary.json" '(d["shard"]["index"], d["shard"]["batches"], d["plan"]["hash"] == json.load(open(sys.argv[1].replace("shards/2/summary.json", "shards/plan.json")))["plan"]["hash"])')" = "(2, [2, 3], True)" ] ||
    fail "shard 2 does not describe itself: $(json "$T/P/shards/2/summary.json" 'd["shard"]')"
must 0 "merged 3 shards .*0 did not report" "$T/pm.log" $ORTQUAL merge --junit "$T/pm.xml" "$T/P"
shards_page "$T/P" "" "$T/pm.xml"
same "$T/U/summary.json" "$T/P/summary.json" || fail "merge of 3 shards by batch differs from the unsharded run"
[ "$(json "$T/P/summary.json" '(d["plan"]["hash"] == json.load(open(sys.argv[1].replace("/P/", "/U/")))["plan"]["hash"], len(d["shards"]["reported"]), len(d["plots"]) == len(json.load(open(sys.argv[1].replace("/P/", "/U/")))["plots"]) > 0, os.path.exists(sys.argv[1].replace("summary.json", "report.html")))')" = "(True, 3, True, True)" ] ||
    fail "merged summary: plan hash, shards or plots: $(json "$T/P/summary.json" 'd["shards"]')"
[ "$(wc -l <"$T/P/validate.csv")" = "$(wc -l <"$T/U/validate.csv")" ] || fail "merged CSV rows differ"
# rows: configuration, output, batch, valid size and source (the times differ from run to run)
rows() { cut -d, -f1-4,8 "$1" | sort; }
[ "$(rows "$T/P/validate.csv")" = "$(rows "$T/U/validate.csv")" ] && [ "$(head -1 "$T/P/validate.csv" | cut -d, -f8)" = source ] &&
    [ "$(tail -n +2 "$T/P/validate.csv" | cut -d, -f8 | sort -u)" = generated ] ||
    fail "merged CSV's rows or sources differ: $(head -3 "$T/P/validate.csv")"

# the comparison bites: one per-batch figure changed is found
$PY - "$T/P/summary.json" "$T/X.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["configs"][2]["batches"][3]["outputs"][1]["max_abs"] *= 1.5
json.dump(d, open(sys.argv[2], "w"))
PY
mkdir "$T/X" && mv "$T/X.json" "$T/X/summary.json"
! same "$T/P/summary.json" "$T/X/summary.json" >"$T/x.log" && grep -q 'configs\[2\].batches\[3\].outputs\[1\].max_abs' "$T/x.log" ||
    fail "same_summary.py missed a changed figure: $(cat "$T/x.log")"

# an output's rel_l2 is ||d|| / ||ref|| over every valid element of every batch, as mean_abs and
# rms are (it was the largest batch's): recomputed here from the batches' own numbers (sum d^2 =
# rms^2 n, sum ref^2 = sum d^2 / rel_l2^2), and the merged shards hold the same exact sums
# (same above compares rel_l2 to the bit; the sums' parts may differ by grouping, not their value)
$PY - "$T/U/summary.json" "$T/P/summary.json" <<'PY' || fail "rel_l2 over all batches"
import json, math, sys
u, p = (json.load(open(a)) for a in sys.argv[1:3])
def value(parts): return math.fsum(float.fromhex(x) for x in parts)
for k, c in enumerate(u["configs"][1:], 1):
    for j, o in enumerate(c["outputs"]):
        rows = [x for b in c["batches"] for x in b["outputs"] if x["output"] == o["output"]]
        sq = sum(x["rms"] ** 2 * x["num_valid"] for x in rows)
        want = math.sqrt(sq / sum(x["rms"] ** 2 * x["num_valid"] / x["rel_l2"] ** 2 for x in rows))
        assert abs(o["rel_l2"] - want) <= 1e-8 * want, (c["name"], o["output"], o["rel_l2"], want)
        assert o["rel_l2"] < max(x["rel_l2"] for x in rows), (c["name"], o["output"], "the largest batch's")
        assert o["rel_l2"] == math.sqrt(value(o["sums"]["sq"]) / value(o["sums"]["ref_sq"])), o
        m = p["configs"][k]["outputs"][j]["sums"]
        assert all(value(m[s]) == value(o["sums"][s]) for s in ("abs", "sq", "ref_sq")), (m, o["sums"])
PY
# a shard's summary from before the exact sums (its outputs' rel_l2 the largest batch's, no
# sums.ref_sq) is refused: merged, its numbers would mean another thing than the others'
cp -r "$T/P" "$T/O" && rm -f "$T/O/summary.json"
$PY - "$T/O/shards/1/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["configs"]:
    for o in c["outputs"]:
        o["sums"] = {"abs": o["sums"]["abs"][-1], "sq": o["sums"]["sq"][-1]}  # as written before
json.dump(d, open(sys.argv[1], "w"))
PY
must 2 "shards/1/summary.json: cpu:decomposed:fp32, output 'cls': no exact sums \(sums.abs, sq, ref_sq\): written by an ortqual before 2026-12-05, whose rel_l2 was the largest batch's; run the shard again with this one" \
    "$T/o.log" $ORTQUAL merge --no-plots "$T/O"
[ ! -e "$T/O/summary.json" ] || fail "a merge of a shard without exact sums wrote a summary"

# 2. by configuration: each shard runs the reference and one other configuration
must 0 "prepared 2 shards by config" "$T/c.log" $ORTQUAL "${V[@]}" --outdir "$T/C" --prepare-shards 2 --shard-by config
for i in 0 1; do must 0 "shard $i of 2" "$T/c$i.log" $ORTQUAL "${V[@]}" --outdir "$T/C" --shard $i/2 --shard-by config; done
[ "$(json "$T/C/shards/1/summary.json" '[c["name"] for c in d["configs"]]')" = "['ref:encoder:fp64', 'cpu:attention24:fp32']" ] ||
    fail "shard 1 by config ran: $(json "$T/C/shards/1/summary.json" '[c["name"] for c in d["configs"]]')"
must 0 "verdict: PASSED" "$T/cm.log" $ORTQUAL merge --no-plots "$T/C"
$PY - "$T/C/summary.json" "$T/C/summary-plots.json" <<'PY'
import json, sys, os
d = json.load(open(sys.argv[1]))
u = sys.argv[1].replace("/C/", "/U/")
# merged without plots: the unsharded run's plot list, as if drawn in C
d["plots"] = [p.replace(os.path.dirname(u), os.path.dirname(sys.argv[1])) for p in json.load(open(u))["plots"]]
json.dump(d, open(sys.argv[2], "w"))
PY
same "$T/U/summary.json" "$T/C/summary-plots.json" || fail "merge of 2 shards by config differs from the unsharded run"

# 3. a shard that never ran: named by index, the merge fails, the configurations say why
cp -r "$T/P" "$T/M" && rm -rf "$T/M/shards/2" "$T/M/summary.json"
must 1 "shard 2 of 3 missing: never started" "$T/m.log" $ORTQUAL merge --no-plots --junit "$T/m.xml" "$T/M"
shards_page "$T/M" "2:missing" "$T/m.xml"
# the reference is never failed (verdicts.md): its missing batches make it `error`
[ "$(json "$T/M/summary.json" '(d["verdict"], [(p["index"], p["state"]) for p in d["shards"]["problems"]], d["configs"][0]["status"], d["configs"][0]["reason"], d["configs"][1]["status"], d["configs"][1]["reason"])')" = \
  "('failed', [(2, 'missing')], 'error', 'incomplete: shard 2 (missing) did not report', 'failed', 'incomplete: shard 2 (missing) did not report')" ] ||
    fail "merge with a missing shard: $(json "$T/M/summary.json" 'd["verdict"], d["shards"]["problems"]')"

# 4. a shard run with other options stops before running; the merge names it and its error
cp -r "$T/P" "$T/F" && rm -rf "$T/F/shards/1" "$T/F/summary.json"
# (the plan names its models by content: options that export another model are another plan;
# a text that differs is given with both values, the prepared one first)
# (two configurations' models differ, each named: two bare "model" entries could not be told apart)
H="'[0-9a-f]{12}\.\.\.' vs '[0-9a-f]{12}\.\.\.'"
must 2 "differ in: configs\[1\] cpu:decomposed:fp32 mask_form 'additive' vs 'bool', configs\[1\] cpu:decomposed:fp32 model $H, configs\[2\] cpu:attention24:fp32 mask_form 'seqlen' vs 'bool', configs\[2\] cpu:attention24:fp32 model $H; the prepared value first\)" "$T/f0.log" \
    $ORTQUAL "${V[@]}" --mask-form bool --outdir "$T/F" --shard 1/3
must 2 "differ in: repeat\\)" "$T/f1.log" $ORTQUAL "${V[@]}" --repeat 2 --outdir "$T/F" --shard 1/3
[ "$(ls "$T/F/shards/1")" = "error.json" ] || fail "refused shard left: $(ls -A "$T/F/shards/1")"
must 1 "shard 1 of 3 failed: stopped before running: .*differ in: repeat" "$T/f.log" $ORTQUAL merge --no-plots "$T/F"
shards_page "$T/F" "1:failed"

# 4b. a refused rerun of a finished shard (--force, other options) writes nothing into it: the
#     shard keeps its one outcome, no error.json beside its summary (it was there, the models and
#     weights it read deleted, and the merge passed over it), the prepared files untouched; the
#     refusal is said on stderr. A rerun that passes its check replaces the earlier result.
cp -r "$T/P" "$T/RR" && rm -f "$T/RR/summary.json"
tree_sums() { (cd "$1" && find . -type f | sort | xargs md5sum); }
tree_sums "$T/RR" > "$T/r.before"
must 2 "differ in: repeat\); .*; the earlier result in $T/RR/shards/1 is left as it was" "$T/r1.log" \
    $ORTQUAL "${V[@]}" --repeat 2 --outdir "$T/RR" --shard 1/3 --force
must 2 "differ in: .*model.*left as it was" "$T/r2.log" $ORTQUAL "${V[@]}" --mask-form bool --outdir "$T/RR" --shard 1/3 --force
[ "$(ls -A "$T/RR/shards/1" | tr '\n' ' ')" = "encoder_attention24_fp32.onnx encoder_decomposed_fp32.onnx report.html started.json summary.json validate.csv weights.npz " ] ||
    fail "a refused rerun changed the shard's folder: $(ls -A "$T/RR/shards/1")"
tree_sums "$T/RR" | diff "$T/r.before" - >&2 || fail "a refused rerun changed files of the plan or the shard"
must 0 "merged 3 shards .*0 did not report" "$T/rm.log" $ORTQUAL merge --no-plots "$T/RR"
must 0 "shard 1 of 3 done" "$T/r3.log" $ORTQUAL "${V[@]}" --outdir "$T/RR" --shard 1/3 --force
[ ! -e "$T/RR/shards/1/error.json" ] && [ ! -e "$T/RR/shards/1/.work" ] &&
    [ "$(json "$T/RR/shards/1/summary.json" '[c.get("model_file", "") for c in d["configs"]]')" = \
      "['', '$T/RR/shards/1/encoder_decomposed_fp32.onnx', '$T/RR/shards/1/encoder_attention24_fp32.onnx']" ] ||
    fail "a rerun's models: $(ls -A "$T/RR/shards/1")"
# a folder holding both outcomes (an earlier ortqual's refused rerun, a hand) is not merged
cp "$T/F/shards/1/error.json" "$T/RR/shards/1/error.json"
must 2 "shards/1 holds both summary.json and error.json: two outcomes" "$T/rb.log" $ORTQUAL merge --no-plots "$T/RR"

# 5. a shard killed while it runs (its configuration hangs): started, no summary, named
K=(validate --num-events 2 --batch-size 2 --repeat 1 --ep-lib "hangep=$OQ_BINARY_DIR/tests/libhang_ep.so"
   --configs ref:encoder:fp64,cpu:attention24:fp32,hangep:attention24:fp32)
must 0 "prepared" "$T/k.log" $ORTQUAL "${K[@]}" --outdir "$T/K" --prepare-shards 2 --shard-by config
must 0 "shard 0 of 2" "$T/k0.log" $ORTQUAL "${K[@]}" --outdir "$T/K" --shard 0/2 --shard-by config
$ORTQUAL "${K[@]}" --outdir "$T/K" --shard 1/2 --shard-by config >"$T/k1.log" 2>&1 &
pid=$!
kids=""
for _ in $(seq 300); do   # until the hanging configuration's worker runs
    grep -q "hangep:attention24:fp32 \.\.\." "$T/k1.log" && kids=$(pgrep -P $pid) && break
    sleep 0.1
done
[ -n "$kids" ] || { kill -9 $pid; fail "the hanging configuration never started: $(cat "$T/k1.log")"; }
kill -STOP $pid               # the shard, then its worker, by pid
exec 3>&2 2>/dev/null         # (bash would announce the kill)
kill -KILL $pid $kids
wait $pid || true
exec 2>&3 3>&-
must 1 "shard 1 of 2 unfinished: started on .* and wrote no summary: killed" "$T/km.log" $ORTQUAL merge --no-plots "$T/K"
shards_page "$T/K" "1:unfinished"
[ "$(json "$T/K/summary.json" '[(c["name"], c["status"]) for c in d["configs"]]')" = \
  "[('ref:encoder:fp64', 'reference'), ('cpu:attention24:fp32', 'passed'), ('hangep:attention24:fp32', 'failed')]" ] ||
    fail "killed shard: $(json "$T/K/summary.json" '[(c["name"], c["status"], c.get("reason")) for c in d["configs"]]')"

# 6. replay shards the same way (against ORT 1.30's CPU: against its own, refused)
R=(replay --model "$T/U/encoder_attention24_fp32.onnx" --inputs "$T/U/inputs_00[01].npz" --repeat 1
   --reference-ort-lib "$OQ_SOURCE_DIR/third_party/onnxruntime-1.30/lib/libonnxruntime.so.1")
must 0 "PASSED" "$T/r.log" $ORTQUAL "${R[@]}" --outdir "$T/R"
must 0 "prepared 2 shards" "$T/rp.log" $ORTQUAL "${R[@]}" --outdir "$T/RS" --prepare-shards 2
for i in 0 1; do must 0 "shard $i of 2" "$T/r$i.log" $ORTQUAL "${R[@]}" --outdir "$T/RS" --shard $i/2; done
must 0 "verdict: PASSED" "$T/rm.log" $ORTQUAL merge --no-plots "$T/RS"
same "$T/R/summary.json" "$T/RS/summary.json" || fail "merged replay differs from the unsharded replay"
[ "$(rows "$T/RS/validate.csv")" = "$(rows "$T/R/validate.csv")" ] &&
    [ "$(tail -n +2 "$T/RS/validate.csv" | cut -d, -f8 | sort -u)" = inputs ] ||
    fail "merged replay's CSV rows or sources differ: $(head -3 "$T/RS/validate.csv")"

# 7. a shard of another plan (the replay's) is refused and nothing is written; the earlier merge's
# outputs go (its summary said "passed" for shards just refused), said in the one line, and
# nothing else in DIR: a file of the user's, in DIR or in plots/, stays
merged='(summary.json|report.html|validate.csv|plots)'
cp -r "$T/P" "$T/W" && rm -rf "$T/W/shards/0" && cp -r "$T/RS/shards/0" "$T/W/shards/0"
touch "$T/W/notes.txt" "$T/W/plots/notes.txt"
must 2 "shard 0 .* ran plan .*refusing to merge shards of different plans; the earlier merge's summary.json, report.html, validate.csv, plots/ removed$" \
    "$T/w.log" $ORTQUAL merge "$T/W"
[ "$(wc -l <"$T/w.log")" = 1 ] || fail "a refused merge said more than one line: $(cat "$T/w.log")"
[ "$(ls "$T/W" | grep -v '^notes.txt$' | grep -Ev "^$merged$")" = "$(ls "$T/P" | grep -Ev "^$merged$")" ] &&
    [ -e "$T/W/notes.txt" ] && [ "$(ls "$T/W/plots")" = notes.txt ] && [ ! -e "$T/W/summary.json" ] ||
    fail "a refused merge left (or took): $(ls "$T/W" "$T/W/plots")"
must 2 "refusing to merge shards of different plans$" "$T/w.log" $ORTQUAL merge "$T/W"
[ ! -e "$T/W/summary.json" ] || fail "a refused merge wrote a summary"
# a --junit that cannot be written is refused before the merge writes anything, as the merge refuses
rm -rf "$T/W" && cp -r "$T/P" "$T/W"
must 2 "--junit: .*W/shards: is a directory.*; the earlier merge's summary.json, report.html, validate.csv, plots/ removed$" \
    "$T/w.log" $ORTQUAL merge --junit "$T/W/shards" "$T/W"
[ "$(ls "$T/W")" = "$(ls "$T/P" | grep -Ev "^$merged$")" ] ||
    fail "a merge with an unusable --junit wrote or left: $(ls "$T/W")"
# a shard whose summary passed without its batch records (none, one of two, one twice) would pass
# the batches it lacks unchecked: refused, naming the file, and nothing is written
for cut in '[]' 'c["batches"][:1]' '[c["batches"][0]] * 2'; do
    rm -rf "$T/W" && cp -r "$T/P" "$T/W" && rm -f "$T/W/summary.json" "$T/W/report.html" "$T/W/validate.csv" && rm -rf "$T/W/plots"
    $PY -c "import json,sys; d=json.load(open(sys.argv[1])); [c.__setitem__('batches', $cut) for c in d['configs'][1:]]; json.dump(d, open(sys.argv[1], 'w'))" "$T/W/shards/2/summary.json"
    must 2 "W/shards/2/summary.json: cpu:decomposed:fp32 passed, but its batch records are not the shard's batches 2..3" \
        "$T/w.log" $ORTQUAL merge "$T/W"
    [ ! -e "$T/W/summary.json" ] && [ ! -e "$T/W/validate.csv" ] || fail "a refused merge ($cut) wrote: $(ls "$T/W")"
done
# ... or whose batch failed its comparison
cp "$T/P/shards/2/summary.json" "$T/W/shards/2/summary.json"
$PY -c "import json,sys; d=json.load(open(sys.argv[1])); d['configs'][2]['batches'][1]['passed'] = False; json.dump(d, open(sys.argv[1], 'w'))" "$T/W/shards/2/summary.json"
must 2 "W/shards/2/summary.json: cpu:attention24:fp32 passed, but its batch 3 failed its comparison" "$T/w.log" $ORTQUAL merge "$T/W"
[ ! -e "$T/W/summary.json" ] || fail "a refused merge (a failed batch) wrote a summary"

# 8. a prepared batch changed afterwards: the shard that runs it refuses, naming the file
must 0 "prepared" "$T/z.log" $ORTQUAL "${V[@]}" --outdir "$T/Z" --prepare-shards 2
cp "$T/U/inputs_000.npz" "$T/Z/inputs_003.npz"
must 2 "inputs_003.npz: SHA-256 .* is not the prepared" "$T/z1.log" $ORTQUAL "${V[@]}" --outdir "$T/Z" --shard 1/2

# 9. the time of a larger plan modelled from the merged summary's per-batch costs
must 0 '"waves": 2' "$T/est.json" $ORTQUAL estimate "$T/P/summary.json" --events 10 --workers 3 --shards 4 --json
must 0 '"waves": 1' "$T/est0.json" $ORTQUAL estimate "$T/P/summary.json" --events 10 --workers 4 --repeat 1 --warmup 0 --json
$PY - "$T/P/summary.json" "$T/est.json" "$T/est0.json" <<'PY' || fail "estimate: $(cat "$T/est.json")"
import json, sys
s, e, e0 = (json.load(open(p)) for p in sys.argv[1:4])
names = [c["name"] for c in s["configs"]]
assert [c["name"] for c in e["configs"]] == names, e["configs"]
# 10 events in batches of 2 are 5 batches: over 4 shards the largest runs 2 (4 events; 10/4
# rounded up said 3)
assert e["measured_events"] == 7 and e["events_per_shard"] == 4 and e["shards"] == 4, e
per = [c["per_event_s"] for c in e["configs"]]
assert all(p > 0 for p in per) and all(c["fixed_s"] >= 0 for c in e["configs"]), e["configs"]
# one shard: every configuration's fixed part, and its per-event cost for its 4 events
close = lambda a, b: abs(a - b) <= 1e-7 * abs(b)
assert close(e["shard_fixed_s"], sum(c["fixed_s"] for c in e["configs"])), e
assert close(e["shard_events_s"], 4 * sum(per)) and close(e["shard_s"], e["shard_fixed_s"] + e["shard_events_s"]), e
assert close(e["wall_s"], 2 * e["shard_s"]) and close(e["worker_hours"], 4 * e["shard_s"] / 3600), e
# fewer calls per batch cost less per event; the reference runs once per batch either way
assert all(a["per_event_s"] < b["per_event_s"] for a, b in zip(e0["configs"][1:], e["configs"][1:])), (e0, e)
assert close(e0["configs"][0]["per_event_s"], e["configs"][0]["per_event_s"]), (e0, e)
PY
# a merged summary's worker time is the sum over its 3 shards, each of which paid the fixed part
# once: the fixed part of one task is theirs (it was the sum, 3 times too large; measured times,
# so 2.5 times their mean: a loaded machine moved one past 2)
for i in 0 1 2; do
    must 0 '"fixed_s"' "$T/est_s$i.json" $ORTQUAL estimate "$T/P/shards/$i/summary.json" --events 10 --workers 3 --json
done
$PY - "$T/est.json" "$T"/est_s[012].json <<'PY' || fail "estimate of a merged summary: $(cat "$T/est.json")"
import json, sys
m, *shards = (json.load(open(p)) for p in sys.argv[1:])
for k, c in enumerate(m["configs"]):
    each = [s["configs"][k]["fixed_s"] for s in shards]
    mean = sum(each) / len(each)
    assert c["fixed_s"] < 2.5 * mean + 1e-3, (c["name"], c["fixed_s"], each)
PY
# impossible inputs: more shards than the batches E events make, a negative time in the summary
must 2 "--shards 6: above the 5 batches of 10 events in batches of 2" "$T/est5.log" \
    $ORTQUAL estimate "$T/P/summary.json" --events 10 --workers 3 --shards 6
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); d["configs"][1]["batches"][0]["median_s"] = -0.5; json.dump(d, open(sys.argv[2], "w"))' \
    "$T/P/summary.json" "$T/neg.json"
must 2 "'cpu:decomposed:fp32', batch 0: .*median_s -0.5: a time is negative" "$T/est6.log" \
    $ORTQUAL estimate "$T/neg.json" --events 10 --workers 3
must 2 "no timed configuration besides the reference matches cuda:" "$T/est1.log" \
    $ORTQUAL estimate "$T/P/summary.json" --events 10 --workers 3 --only cuda:
must 2 "not a validation summary" "$T/est2.log" $ORTQUAL estimate "$T/P/shards/plan.json" --events 10 --workers 3
# a reference read from the cache was not timed: the estimate says so and what measures it
C=(validate --cache-dir "$T/cache" --num-events 2 --repeat 1 --no-plots --configs ref:encoder:fp64,cpu:attention24:fp32)
must 0 "PASSED" "$T/c1.log" $ORTQUAL "${C[@]}" --outdir "$T/C1"
must 0 "PASSED" "$T/c2.log" $ORTQUAL "${C[@]}" --outdir "$T/C2"
must 2 "1 of 1 batches were not timed \(their outputs came from the reference cache: measure with --no-cache\)" "$T/est3.log" \
    $ORTQUAL estimate "$T/C2/summary.json" --events 10 --workers 3
must 0 "wall" "$T/est4.log" $ORTQUAL estimate "$T/C1" --events 10 --workers 3   # a run directory: its summary.json

# 10. usage and input errors, before anything runs
must 2 "prepared already" "$T/e1.log" $ORTQUAL "${V[@]}" --outdir "$T/P" --prepare-shards 3
must 2 "shards/plan.json not found: prepare the shards first" "$T/e2.log" $ORTQUAL "${V[@]}" --outdir "$T/none" --shard 0/2
must 2 "5 shards by batch, but the plan has 4 batches" "$T/e3.log" $ORTQUAL "${V[@]}" --outdir "$T/e3" --prepare-shards 5
[ ! -e "$T/e3" ] || fail "a refused prepare left: $(ls -A "$T/e3")"   # (refused from the options)
must 2 "3 shards by configuration, but the plan has 2 configurations besides the reference" "$T/e4.log" \
    $ORTQUAL "${V[@]}" --outdir "$T/e4" --prepare-shards 3 --shard-by config
must 2 "prepared for 2 shards by batch, not 2 by config" "$T/e5.log" $ORTQUAL "${V[@]}" --outdir "$T/Z" --shard 1/2 --shard-by config
must 2 "shard '3/3': want I/N" "$T/e6.log" $ORTQUAL "${V[@]}" --outdir "$T/P" --shard 3/3
must 2 "need --outdir" "$T/e7.log" $ORTQUAL "${V[@]}" --shard 0/3
must 2 "exclude each other" "$T/e8.log" $ORTQUAL "${V[@]}" --outdir "$T/P" --shard 0/3 --prepare-shards 3
must 2 "--shard-by needs --shard or --prepare-shards" "$T/e9.log" $ORTQUAL "${V[@]}" --outdir "$T/P" --shard-by config
must 2 "shards/plan.json not found" "$T/e10.log" $ORTQUAL merge "$T/U"
# (an unsharded run's folder: its summary is no merge's, and stays)
[ -s "$T/U/summary.json" ] && [ -s "$T/U/report.html" ] && ! grep -q removed "$T/e10.log" ||
    fail "a refused merge of an unsharded run's folder took its files: $(ls "$T/U"; cat "$T/e10.log")"
# a plan prepared by an older ortqual (every batch in plan.json) is refused in one line, as is a
# batch list changed since it was prepared
mkdir -p "$T/old/shards" && echo '{"schema": "ortqual.shards/1", "batches": []}' > "$T/old/shards/plan.json"
must 2 "prepared by an older ortqual \(schema ortqual.shards/1, every batch in one file\): prepare the shards again" \
    "$T/e11.log" $ORTQUAL merge "$T/old"
[ "$(wc -l < "$T/e11.log")" = 1 ] || fail "the old plan's refusal is not one line: $(cat "$T/e11.log")"
cp -r "$T/P" "$T/L" && sed -i '1s/"index": 0/"index":0/' "$T/L/shards/plan_batches.jsonl"
must 2 "plan_batches.jsonl is not the prepared batch list" "$T/e12.log" $ORTQUAL merge "$T/L"
# a model whose weights are in an external-data file: the file is part of the plan's identity, so
# a shard run with other weights (the same .onnx) is refused, not merged as the plan's
mkdir -p "$T/X" && cp "$OQ_SOURCE_DIR"/tests/fixtures/external/llama_like_op18.onnx* "$T/X/"
LL="$OQ_SOURCE_DIR/tests/fixtures/torch/llama_like"
XV=(validate --model "$T/X/llama_like_op18.onnx" --inputs "$LL/inputs_00[01].npz" --expected "$LL/outputs_00[01].npz"
    --configs expected,cpu:model:fp32 --no-plots --outdir "$T/XS")
must 0 "prepared 2 shards" "$T/x.log" $ORTQUAL "${XV[@]}" --prepare-shards 2
must 0 "shard 0 of 2" "$T/x0.log" $ORTQUAL "${XV[@]}" --shard 0/2
printf '\x01' | dd of="$T/X/llama_like_op18.onnx.data" bs=1 seek=20000 conv=notrunc status=none
must 2 "this shard's options make another plan than .*XS/shards/plan.json \(they differ in: .*model" "$T/x1.log" \
    $ORTQUAL "${XV[@]}" --shard 1/2
# an external-data location naming a FIFO: the plan's identity (every run has one) refuses it by
# name instead of waiting for a writer forever (which SIGTERM did not end; KILL ends it here)
mkdir -p "$T/F" && cp "$OQ_SOURCE_DIR/tests/fixtures/external/llama_like_op18.onnx" "$T/F/"
mkfifo "$T/F/llama_like_op18.onnx.data"
must 2 "external data: .*/F/llama_like_op18.onnx.data: not a regular file" "$T/f.log" timeout -s KILL 60 \
    $ORTQUAL validate --model "$T/F/llama_like_op18.onnx" --inputs "$LL/inputs_000.npz" \
    --expected "$LL/outputs_000.npz" --configs expected,cpu:model:fp32 --no-plots --outdir "$T/FS"
echo "shard e2e: all checks passed"
