#!/usr/bin/env bash
# report.html and plot on the summaries users keep (thirty-third session, report2):
# 1. the evidence's warnings (a session config key passed unchecked to a newer ORT, a second ONNX
#    Runtime mapped) are shown in the Notes section, escaped, each once (the page showed none);
#    a bench page shows its sweep's;
# 2. a summary from before outputs were aggregated (outputs only in its batch records): a pass
#    its records contradict is refused by report, its JUnit and plot, naming the batch (it was
#    drawn as PASSED);
# 3. a merged summary whose shards do not add up to the merge's count, or that says passed beside a
#    shard that did not report, and a shard's summary whose index is past its count: refused.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
CONTRA="refusing to draw a summary that contradicts itself$"
# edit SRC DST CODE: DST/summary.json is SRC with python CODE run on its JSON `s`
edit() {
    mkdir -p "$2"
    json_edit "$1" "$2/summary.json" "$3"
}
# refused DIR WHY: report (with --junit) and plot refuse DIR/summary.json in one line, nothing written
refused() {
    draw_refused "$1" "$2: $CONTRA"
    [ "$(ls "$1")" = summary.json ] && ok "$1: nothing written" || bad "$1: written: $(ls "$1")"
}

# ---- 1. the evidence's warnings on the page
edit "$F/validate/pass.json" w 's["evidence"].setdefault("system", {})["warnings"] = ["key <k> & more passed unchecked"]
s["configs"][1].setdefault("evidence", {})["warnings"] = ["key <k> & more passed unchecked", "2 ONNX Runtime cores mapped"]'
expect 0 "report.html" "$Q" report w
sec=$(sed -n '/<section id="notes">/,/<\/section>/p' w/report.html)
[ "$(grep -c 'class="evidence-warning"' <<<"$sec")" = 2 ] &&
    grep -qF '<span class="warn">warning:</span> key &lt;k&gt; &amp; more passed unchecked</li>' <<<"$sec" &&
    grep -qF '2 ONNX Runtime cores mapped' <<<"$sec" && grep -qF '<a href="#notes">notes</a>' w/report.html &&
    ok "report.html: both warnings in Notes, escaped, the parent's and a worker's same one once" ||
    bad "report.html's notes: $sec"
mkdir plain && cp "$F/validate/pass.json" plain/summary.json
expect 0 "report.html" "$Q" report plain
! grep -q 'id="notes"\|href="#notes"' plain/report.html && ok "no warning, no notes section" || bad "plain has notes"
"$Q" bench --variants cpu:attention24:fp32 --seq-lens 16 --modes masked --num-heads 2 --head-dim 8 --iters 2 \
    --warmup 0 --threads 1 --quiet --outdir b > b.log 2>&1 || bad "bench: $(tail -3 b.log)"
edit b/summary.json bw 's["system"]["evidence"]["warnings"] = ["M.onnx: <indices> left to ONNX Runtime"]'
expect 0 "report.html" "$Q" report bw
grep -qF '<span class="warn">warning:</span> M.onnx: &lt;indices&gt; left to ONNX Runtime</li>' bw/report.html &&
    ok "bench report.html: the sweep's warning" || bad "bench page: $(grep -c warn bw/report.html)"
# a real run: ORT 1.30 takes a key 1.29's headers do not know, with a warning before the run;
# the run's page and `ortqual report`'s both show it (the same bytes)
need_ort130
NEW=mlas.nchwc_pointwise_conv_max_input_channel_batch
"$Q" validate --export sdpa --configs ref:sdpa:fp64,cpu:decomposed:fp32 --num-events 2 --batch-size 2 --max-len 16 \
    --repeat 1 --warmup 0 --no-plots --threads 1 --no-cache --progress never --ort-lib "$ORT130" \
    --session-config "$NEW=16" --outdir k > k.log 2>&1 || bad "validate on 1.30: $(tail -3 k.log)"
cp k/report.html k_run.html
expect 0 "report.html" "$Q" report k
[ "$(grep -c "class=\"evidence-warning\".*session config key &#39;$NEW&#39; is not a key of ONNX Runtime 1.29.*passed unchecked to ONNX Runtime 1.30.0" k/report.html)" = 1 ] &&
    cmp -s k/report.html k_run.html && ok "the run's page and report's: the key's warning once" ||
    bad "k/report.html: $(grep -o 'evidence-warning.\{0,200\}' k/report.html)"

# ---- 2. a summary from before outputs were aggregated per configuration (the fixture)
edit "$F/validate/pass.json" o_abs 's["configs"][1]["batches"][1]["outputs"][0]["max_abs"] = 5.0'
refused o_abs "cpu:decomposed:fp32 passed, but its output 'cls' in batch 1 has max_abs 5 above atol \+ rtol \* max_abs_ref = [0-9.e-]+"
edit "$F/validate/pass.json" o_fail 's["configs"][2]["batches"][0]["outputs"][0]["passed"] = False'
refused o_fail "cpu:attention24:fp16 passed, but its output 'cls' in batch 0 failed"
edit "$F/validate/pass.json" o_tol 's["configs"][1]["batches"][0]["outputs"][0]["tolerance"] = {"rtol": "x", "atol": None}'
refused o_tol "cpu:decomposed:fp32 passed, but its output 'cls' in batch 0 has tolerance.rtol nan, tolerance.atol nan, where each is a number >= 0 \(nan: not a number in the file\)"
#    a failed configuration's failing records are no contradiction
edit "$F/validate/pass.json" o_failed 's["configs"][1]["batches"][1]["outputs"][0]["max_abs"] = 5.0
s["configs"][1]["status"] = "failed"; s["verdict"] = "failed"'
expect 0 "report.html" "$Q" report o_failed
expect 0 "svg" "$Q" plot plain --out plain/plots

# ---- 3. a merged summary's shards, and a shard's own index
V=(validate --num-events 4 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --threads 1 --progress never --no-plots
   --no-cache --configs ref:encoder:fp64,cpu:attention24:fp32)
"$Q" "${V[@]}" --outdir S --prepare-shards 2 >p.log 2>&1 || fail "prepare: $(tail -3 p.log)"
for i in 0 1; do "$Q" "${V[@]}" --outdir S --shard $i/2 >s$i.log 2>&1 || fail "shard $i: $(tail -3 s$i.log)"; done
"$Q" merge --no-plots S >m.log 2>&1 || fail "merge: $(tail -3 m.log)"
edit S/summary.json m_fewer 'del s["shards"]["reported"][1]'
refused m_fewer "shards.count 2, but 1 shard is recorded \(reported or problems\)"
edit S/summary.json m_problem 's["shards"]["problems"] = [{"index": 1, "state": "missing", "detail": "no summary.json"}]
del s["shards"]["reported"][1]'
refused m_problem "verdict 'passed', but 1 of 2 shards did not report \(shards.problems\)"
edit S/summary.json m_twice 's["shards"]["reported"][1]["index"] = 0'
refused m_twice "shards.reported\[1\] names shard 0, where each of shards 0..1 is named once"
edit S/shards/1/summary.json s_past 's["shard"]["index"] = 2'
refused s_past "shard.index 2 of shard.count 2, where 0 <= index < count"
expect 0 "report.html" "$Q" report S
expect 0 "report.html" "$Q" report S/shards/1
report
