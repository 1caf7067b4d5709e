#!/usr/bin/env bash
# What validate and replay judge against saved outputs (QA round 6, 2026-12-07), each once a
# silent green or a silent choice:
# 3. an --inputs file holding the model's outputs beside an --expected file: the inputs file's
#    were dropped without a word (logits off by 1.0 there: PASSED); now two references that
#    disagree are refused (exit 2, naming the element), and a reference other than `expected`
#    (--configs without it, replay's ORT CPU) says the file's outputs are not compared.
# 5. an output that is the same infinity on both sides at every valid element (x*x overflowing)
#    PASSED with max|err| 0: nothing finite was compared; now NOT TESTED, and the batch record
#    counts inf_matched.
#    (thirty-third session) one output all matched infinities beside a finite one PASSED, that
#    output shown with max|err| 0: now NOT TESTED naming it, and shown as not compared in the
#    console, summary.json, validate.csv and report.html.
# 9. cpu:model:fp16 on a model that computes in float32: judged at fp16's looser tolerances with
#    no note; now a note names the model's precision and both tolerances.
# 10. an --expected file's `lengths` member was not checked and its `event_indices` were taken
#    when the inputs file had none; both are checked now, as the inputs file's are.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

# sq.onnx (y = x*x) and two.onnx (beside it z = x+x), their of/of2/mix/fin batches: inf_models.py
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/inf_models.py" || fail "writing the model and batches"
DL="$F/torch/decoder_lm"
$PY - "$DL" <<'PY' || fail "writing the decoder_lm files"
import sys
import numpy as np
d = sys.argv[1]
io = dict(np.load(d + "/io.npz")); io["logits"] = io["logits"].copy(); io["logits"][0, 0, 0] += 1
np.savez("io_bad.npz", **io)
out = dict(np.load(d + "/outputs_000.npz"))
np.savez("out_len.npz", lengths=np.array([1, 1, 1]), **out)
np.savez("out_ev.npz", event_indices=np.array([5, 6, 7]), **out)
np.savez("out_ev0.npz", event_indices=np.array([0, 1, 2]), **out)
PY
common=(--no-plots --no-cache --progress never --repeat 1)
summary() { # summary DIR PYTHON-ASSERTS: s is DIR/summary.json, o the first output of config 1's batch 0
    $PY - "$1/summary.json" "$2" <<'PY' && ok "$1: $2" || bad "$1: $2"
import json, sys
s = json.load(open(sys.argv[1]))
o = s["configs"][1]["batches"][0]["outputs"][0]
assert eval(sys.argv[2]), (s["verdict"], s.get("verdict_reason"), o)
PY
}
# notes_are DIR [KIND TEXT-START]: DIR/summary.json's notes are that one note, or none
notes_are() {
    $PY - "$1/summary.json" "${2:-}" "${3:-}" <<'PY' && ok "$1: notes ${2:-none}" || bad "$1: notes ${2:-none}"
import json, sys
n = json.load(open(sys.argv[1]))["notes"]
kind, start = sys.argv[2:]
assert n == [] if not kind else len(n) == 1 and n[0]["kind"] == kind and n[0]["text"].startswith(start), n
PY
}

# 5. infinities alone compared nothing; one finite element besides them is a comparison
nothing="no finite value was compared: every valid element of cpu:model:fp32's outputs is an infinity the reference holds too"
expect 1 "verdict: NOT TESTED.*
$nothing" $Q validate --model sq.onnx --no-mask --inputs of_in.npz --expected of_exp.npz "${common[@]}" --outdir v5
summary v5 's["verdict"] == "untested" and o["inf_matched"] == 4 and o["num_valid"] == 4'
expect 1 "$nothing" $Q replay --model sq.onnx --no-mask --inputs of_in.npz --expected of_exp.npz --progress never \
    --repeat 1 --outdir r5
expect 0 "verdict: PASSED" $Q validate --model sq.onnx --no-mask --inputs mix_in.npz --expected mix_exp.npz \
    "${common[@]}" --outdir v5mix
summary v5mix 's["verdict"] == "passed" and o["inf_matched"] == 1'
# merged shards (a batch each) keep the batch records' counts and the verdict
SH=(validate --model sq.onnx --no-mask --inputs 'of*_in.npz' --expected 'of*_exp.npz' --configs expected,cpu:model:fp32
    "${common[@]}" --outdir sh)
expect 0 "prepared 2 shards by batch" $Q "${SH[@]}" --prepare-shards 2
for i in 0 1; do $Q "${SH[@]}" --shard $i/2 >"sh$i.log" 2>&1; done
expect 1 "NOT TESTED" $Q merge sh
summary sh 's["verdict"] == "untested" and [b["outputs"][0]["inf_matched"] for b in s["configs"][1]["batches"]] == [4, 4]'
# a shard summary whose configuration counts no matched infinity where its batch record counts 4
# (edited): merged, the counts said 4 of 8 valid elements and the run PASSED; the merge now holds
# each shard's count to its records, as it holds num_valid to the plan (thirty-third session)
cp -r sh sh_edit && rm -rf sh_edit/summary.json sh_edit/report.html sh_edit/validate.csv sh_edit/plots
$PY - sh_edit/shards/1/summary.json <<'PY' || bad "editing shard 1's summary"
import json, sys
s = json.load(open(sys.argv[1]))
s["configs"][1]["outputs"][0]["inf_matched"] = 0
json.dump(s, open(sys.argv[1], "w"))
PY
one_line 2 "^ortqual merge: sh_edit/shards/1/summary.json: cpu:model:fp32, output 'y' has inf_matched 0, but its batch records count 4: refusing to merge a summary that contradicts itself$" \
    $Q merge sh_edit
[ -e sh_edit/summary.json ] && bad "sh_edit: a summary.json was written" || ok "sh_edit: no summary.json"

# 5, one output: y all +inf on both sides beside a finite z compared nothing of y: NOT TESTED
# naming y (--allow-skip: exit 0), y not compared in every view; z's values keep the row's max|err|
one="every valid element of cpu:model:fp32's output 'y' is an infinity the reference holds too"
TWO=(validate --model two.onnx --no-mask --expected of_two.npz "${common[@]}")
expect 1 "cpu:model:fp32 +passed +1 z +0 .*
    output 'y': not compared \(its 4 valid elements are infinities the reference holds too: inf_matched\).*
verdict: NOT TESTED.*
no finite value was compared: $one" $Q "${TWO[@]}" --inputs of_in.npz --outdir v5two
summary v5two 's["verdict"] == "untested" and [o.get("compared") for o in s["configs"][1]["outputs"]] == [False, None] and [o.get("compared") for o in s["configs"][1]["batches"][0]["outputs"]] == [False, None]'
grep -qx "cpu:model:fp32,y,0,0,[^,]*,[^,]*,,saved-outputs" v5two/validate.csv &&
    grep -qx "cpu:model:fp32,z,0,0,[^,]*,[^,]*,0,saved-outputs" v5two/validate.csv &&
    ok "v5two/validate.csv: y's max_abs_err empty, z's 0" || bad "v5two/validate.csv: $(cat v5two/validate.csv)"
grep -q '<td>y</td><td class="status passed">passed</td><td class="n muted not-compared">not compared</td>' \
    v5two/report.html && grep -q 'class="reason not-compared">output y: not compared' v5two/report.html &&
    grep -q '<td><a href="#cfg-1">cpu:model:fp32</a></td><td class="status passed">passed</td><td class="n">1</td><td>z</td>' \
    v5two/report.html && grep -q 'data-verdict="untested"' v5two/report.html &&
    ok "v5two/report.html: y not compared, z the worst output" || bad "v5two/report.html shows y as compared"
expect 0 "verdict: NOT TESTED" $Q "${TWO[@]}" --inputs of_in.npz --allow-skip --outdir v5twoskip
# the figures too: y's panel said "PASSED · max |error| 0"
$Q validate --model two.onnx --no-mask --expected of_two.npz --no-cache --progress never --repeat 1 --inputs of_in.npz \
    --outdir v5twoplots >/dev/null 2>&1
grep -q "not compared (its 4 valid elements are infinities the reference holds too: inf_matched)" v5twoplots/report.html &&
    ok "v5twoplots: y's figure not compared" || bad "v5twoplots: y's figure shows an error"
expect 1 "$one" $Q replay --model two.onnx --no-mask --inputs of_in.npz --expected of_two.npz --progress never \
    --repeat 1 --outdir r5two
expect 0 "verdict: PASSED" $Q validate --model two.onnx --no-mask --inputs fin_in.npz --expected fin_two.npz \
    "${common[@]}" --outdir v5twofin
SH2=(validate --model two.onnx --no-mask --inputs 'of*_in.npz' --expected 'of*_two.npz' --configs expected,cpu:model:fp32
     "${common[@]}" --outdir sh2)
expect 0 "prepared 2 shards by batch" $Q "${SH2[@]}" --prepare-shards 2
for i in 0 1; do $Q "${SH2[@]}" --shard $i/2 >"sh2_$i.log" 2>&1; done
expect 1 "NOT TESTED.*
no finite value was compared: $one" $Q merge sh2

# an expected reference lacking one of the model's outputs (z): the last session's open item
# feared the merge would refuse what an unsharded run passes; both refuse it, before anything
# runs, at the same check (the plan is never prepared, so no shard runs and merge finds no plan)
lacks="of2?_yonly.npz: no member 'z' for the model's output z float32 \[1,4\] \(every output is compared with its saved values\)"
expect 2 "$lacks" $Q "${TWO[@]/of_two.npz/of_yonly.npz}" --inputs of_in.npz --outdir v5lacks
[ "$(ls -A v5lacks)" = "error.json" ] && ok "v5lacks: only error.json" || bad "v5lacks holds $(ls -A v5lacks | tr '\n' ' ')"
SH3=(validate --model two.onnx --no-mask --inputs 'of*_in.npz' --expected 'of*_yonly.npz' --configs expected,cpu:model:fp32
     "${common[@]}" --outdir sh3)
expect 2 "$lacks" $Q "${SH3[@]}" --prepare-shards 2
[ -e sh3/shards ] && bad "sh3: shards/ prepared" || ok "sh3: nothing prepared"
expect 2 "sh3/shards/plan.json not found" $Q merge sh3
expect 2 "$lacks" $Q replay --model two.onnx --no-mask --inputs of_in.npz --expected of_yonly.npz --progress never \
    --outdir r5lacks --prepare-shards 1

# 3. the inputs file's outputs beside --expected: refused when they differ (only error.json made),
#    judged when the same
disagree="^ortqual (validate|replay): io_bad.npz: member 'logits' \(an output\) holds 1.0078218 at element \[0,0,0\], but .*/outputs_000.npz \(the expected file, the reference\) holds 0.00782177597 there: two saved references of one output disagree"
one_line 2 "$disagree" $Q validate --model "$DL/decoder_lm_op18.onnx" --inputs io_bad.npz --expected "$DL/outputs_000.npz" \
    "${common[@]}" --outdir v3
[ "$(ls -A v3)" = "error.json" ] && ok "v3: only error.json" || bad "v3 holds $(ls -A v3 | tr '\n' ' ')"
one_line 2 "$disagree" $Q replay --model "$DL/decoder_lm_op18.onnx" --inputs io_bad.npz --expected "$DL/outputs_000.npz" \
    --ep cpu --progress never --outdir r3
expect 0 "verdict: PASSED" $Q validate --model "$DL/decoder_lm_op18.onnx" --inputs "$DL/io.npz" \
    --expected "$DL/outputs_000.npz" "${common[@]}" --outdir v3same
# a reference other than the saved outputs: said once, before the run
unjudged="ortqual validate: note: fin_io.npz holds saved outputs of the model \(y\); the reference is cpu:model:fp32, so they are not compared: put expected first in --configs"
expect 1 "$unjudged" $Q validate --model sq.onnx --no-mask --inputs fin_io.npz --configs cpu:model:fp32 "${common[@]}" \
    --outdir v3cfg
notes_are v3cfg outputs_not_reference "fin_io.npz holds saved outputs of the model (y); the reference is cpu:model:fp32, so"
# ... of whichever --inputs file holds them: the note read the first file only, and said nothing
# where a second held outputs (thirty-third session)
second="ortqual (validate|replay): note: mix_io.npz holds saved outputs of the model \(y\) \(--inputs file 2 of 2: those before it hold none\); the reference is"
expect 1 "$second cpu:model:fp32, so they are not compared" $Q validate --model sq.onnx --no-mask --inputs fin_in.npz mix_io.npz \
    --configs cpu:model:fp32 "${common[@]}" --outdir v3second
notes_are v3second outputs_not_reference "mix_io.npz holds saved outputs of the model (y) (--inputs file 2 of 2: those before it hold none); the reference is cpu:model:fp32"
expect 1 "$second ORT CPU" $Q replay --model sq.onnx --no-mask --inputs fin_in.npz mix_io.npz --ep cuda --progress never \
    --outdir r3second
# and two saved references of the second file that disagree are refused as the first file's are
# (they were already: a control)
expect 2 "ortqual validate: mix_iobad.npz: member 'y' \(an output\) holds 5 at element \[0,1\], but mix_exp.npz \(the expected file, the reference\) holds 4 there: two saved references" \
    $Q validate --model sq.onnx --no-mask --inputs fin_io.npz mix_iobad.npz --expected fin_exp.npz mix_exp.npz --configs expected,cpu:model:fp32 \
    "${common[@]}" --outdir v3second_bad
out=$($Q validate --model sq.onnx --no-mask --inputs fin_in.npz --configs cpu:model:fp32 "${common[@]}" --outdir v3no 2>&1)
grep -q "holds saved outputs" <<<"$out" && bad "a file without outputs has the note: $out" || ok "no outputs, no note"
expect 1 "ortqual replay: note: fin_io.npz holds saved outputs of the model \(y\); the reference is ORT CPU \(--reference cpu\), so they are not compared: --reference expected" \
    $Q replay --model sq.onnx --no-mask --inputs fin_io.npz --ep cuda --progress never --outdir r3cpu
notes_are r3cpu outputs_not_reference "fin_io.npz holds saved outputs of the model (y); the reference is ORT CPU"

# 9. a float32 model judged at fp16's tolerances is said, in validate and replay
loose="note: sq.onnx computes in float32 \(no attention or output of it is float16 or bfloat16\); %s judges it with fp16 tolerances \(rtol 0.01, atol 0.004; float32's: rtol 0.0001, atol 1e-05\)"
# shellcheck disable=SC2059
expect 0 "$(printf "$loose" "cpu:model:fp16")" $Q validate --model sq.onnx --no-mask --inputs fin_in.npz \
    --expected fin_exp.npz --configs expected,cpu:model:fp16 "${common[@]}" --outdir v9
# shellcheck disable=SC2059
expect 0 "$(printf "$loose" "--precision fp16")" $Q replay --model sq.onnx --no-mask --inputs fin_in.npz \
    --expected fin_exp.npz --precision fp16 --progress never --repeat 1 --outdir r9
out=$($Q validate --model sq.onnx --no-mask --inputs fin_in.npz --expected fin_exp.npz "${common[@]}" --outdir v9own 2>&1)
grep -q "judges it with" <<<"$out" && bad "fp32 at fp32 has the note: $out" || ok "fp32 at fp32, no note"
# the notes said are kept in summary.json as said (no note: an empty list) and shown by report.html
notes_are v9 tolerance_looser "sq.onnx computes in float32 (no attention or output of it is float16 or bfloat16); cpu:model:fp16 judges it"
notes_are r9 tolerance_looser "sq.onnx computes in float32 (no attention or output of it is float16 or bfloat16); --precision fp16 judges it"
notes_are v9own
grep -qF '<li class="note"><code>tolerance_looser</code> sq.onnx computes in float32' v9/report.html &&
    ok "v9/report.html: the note" || bad "v9/report.html has no note"

# 10. an --expected file's lengths and event_indices say what the batch says
one_line 2 "^ortqual validate: out_len.npz: member 'lengths' index 0: 1, but event 0 has 50 valid positions by the mask$" \
    $Q validate --model "$DL/decoder_lm_op18.onnx" --inputs "$DL/inputs_000.npz" --expected out_len.npz \
    "${common[@]}" --outdir v10len
one_line 2 "^ortqual validate: out_ev.npz: event_indices\[0\] is 5 where .*/inputs_000.npz has event 0 \(numbered on from the files before it: it has no member 'event_indices'\): the saved outputs are of other events than their inputs" \
    $Q validate --model "$DL/decoder_lm_op18.onnx" --inputs "$DL/inputs_000.npz" --expected out_ev.npz \
    "${common[@]}" --outdir v10ev
one_line 2 "^ortqual replay: out_len.npz: member 'lengths' index 0" $Q replay --model "$DL/decoder_lm_op18.onnx" \
    --inputs "$DL/inputs_000.npz" --expected out_len.npz --progress never --outdir r10len
expect 0 "verdict: PASSED" $Q validate --model "$DL/decoder_lm_op18.onnx" --inputs "$DL/inputs_000.npz" \
    --expected out_ev0.npz "${common[@]}" --outdir v10ev0

report
