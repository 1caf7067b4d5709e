#!/usr/bin/env bash
# Two false greens a hostile review proved (2026-12-06), each a pass that judged nothing:
# 1. rtol and atol together that pass an output of zeros (atol + rtol |e| >= |e| at every
#    element: rtol=0.5,atol=0.9 against expected values up to 1.71); only an atol alone at or
#    above the largest |value| was caught. Failed in replay, validate and bench --model.
# 2. merge trusting a shard's `passed` flags over its numbers: a summary edited to nan 2,
#    over_tolerance 3, max_abs 5 at atol 1e-5 or another tolerance, `passed` kept, merged PASSED;
#    a third review (2026-12-06): an output left out of a shard's batch record (its failure there
#    hidden, the merged output over fewer batches), one added, and a float output flagged `exact`
#    (its tolerance skipped) merged PASSED too; two more (2026-12-06, thirtieth session): a batch
#    record's max_abs 5 or nan (its output's, over every batch, was judged alone), num_valid 0 or
#    every element (padding counted as compared) or padding.checked false merged PASSED.
# 3. (no false green: the exit status was 1) a merge with every shard missing said `not-run`,
#    "the reference did not run", where one missing said `failed`, incomplete.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

"$Q" export sdpa --heads 1 --head-dim 2 --layout 3 --unmasked -o um.onnx >/dev/null || fail "export um.onnx"
"$Q" export sdpa --heads 1 --head-dim 2 --layout 3 -o m.onnx >/dev/null || fail "export m.onnx"
# exp.npz: the attention of in.npz in float64; zerov.npz: its value zeroed, so that the model's
# output is all zeros; b0/b1 (masked) and their e0/e1 for the sharded run
$PY - <<'EOF' || fail "batches"
import numpy as np
def attn(q, k, v, m=None):
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    if m is not None: s = s + np.where(m[:, None, :] > 0, 0, -1e30)
    p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True); o = p @ v
    return o * (m[:, :, None] > 0) if m is not None else o
rng = np.random.default_rng(0)
q, k, v = [rng.standard_normal((1, 3, 2)).astype(np.float32) for _ in range(3)]
f = lambda *a: attn(*[x.astype(np.float64) for x in a]).astype(np.float32)
np.savez("exp.npz", output=f(q, k, v))
np.savez("zerov.npz", query=q, key=k, value=np.zeros_like(v))
m = np.array([[1, 1, 0]], np.float32)
for i, s in enumerate((1.0, 0.5)):
    np.savez("b%d.npz" % i, query=q * s, key=k, value=v, mask=m); np.savez("e%d.npz" % i, output=f(q * s, k, v, m))
EOF
largest=$($PY -c "import numpy as np; print(abs(np.load('exp.npz')['output']).max())")

# 1. zeros pass from atol = (1 - rtol) * largest on: just below it the comparison itself fails
#    them (the largest alone), at it they pass and the tolerance is failed as one that cannot fail
below=$($PY -c "print(0.5 * $largest * (1 - 1e-6))")
at=$($PY -c "print(0.5 * $largest * (1 + 1e-6))")
R=(replay --model um.onnx --no-mask --ep cpu --inputs zerov.npz --expected exp.npz --repeat 1 --warmup 0
   --progress never --force)
VACUOUS="its atol [0-9.e+-]+ and rtol 0.5 pass zeros for every \|value\| up to [0-9.e+-]+, and its largest \|value\| is [0-9.e+-]+: zeros would pass in its place \(a tolerance that cannot fail: lower its atol or rtol\)"
expect 1 "batch 0, output output: FAIL .*over_tol=1 .*worst \[0,1,0\] got 0 " "$Q" "${R[@]}" --outdir r_below --tolerance "output:rtol=0.5,atol=$below"
expect 1 "batch 0, output output: $VACUOUS" "$Q" "${R[@]}" --outdir r_at --tolerance "output:rtol=0.5,atol=$at"
expect 1 "batch 0, output output: $VACUOUS" "$Q" "${R[@]}" --outdir r_review --tolerance "output:rtol=0.5,atol=0.9"
expect 1 "batch 0, output output: $VACUOUS" "$Q" validate --model um.onnx --no-mask --inputs zerov.npz \
    --expected exp.npz --configs expected,cpu:model:fp32 --tolerance "output:rtol=0.5,atol=0.9" --repeat 1 \
    --warmup 0 --no-plots --progress never --outdir v_review
expect 1 "output 'output': $VACUOUS" "$Q" bench --model um.onnx --inputs zerov.npz --expected exp.npz \
    --tolerance "output:rtol=0.5,atol=0.9" --iters 2 --warmup 0 --threads 1 --outdir b_review --force
# an rtol alone, the preset's atol kept: 0.999999 passes zeros against |values| up to 10
expect 1 "batch 0, output output: its atol 1e-05 and rtol 0.999999 pass zeros" "$Q" "${R[@]}" --outdir r_rtol \
    --tolerance "output:rtol=0.999999"
# 2. merge re-judges each shard's outputs from their numbers, at the plan's tolerance
V=(validate --model m.onnx --inputs b0.npz b1.npz --expected e0.npz e1.npz --configs expected,cpu:model:fp32
   --repeat 1 --warmup 0 --no-plots --progress never)
expect 0 "prepared 2 shards" "$Q" "${V[@]}" --outdir SD --prepare-shards 2
for i in 0 1; do expect 0 "shard $i of 2 done" "$Q" "${V[@]}" --outdir SD --shard $i/2; done
expect 0 "verdict: PASSED" "$Q" merge SD --no-plots
cp SD/shards/1/summary.json shard1.json
# edit WHERE FIELD VALUE: shard 1's summary with FIELD of its output (WHERE: "all", every batch;
# "batch", its batch's record) set to VALUE, every `passed` kept true
edit() {
    $PY - shard1.json SD/shards/1/summary.json "$@" <<'EOF'
import json, sys
src, dst, where, field, value = sys.argv[1:]
d = json.load(open(src)); c = d["configs"][1]
o = c["outputs"][0] if where == "all" else c["batches"][0]["outputs"][0]
assert o["passed"] and c["status"] == "passed"
keys = field.split(".")
for k in keys[:-1]: o = o[k]
o[keys[-1]] = json.loads(value)
json.dump(d, open(dst, "w"))
EOF
}
CONTRA=": refusing to merge a summary that contradicts itself(; the earlier merge.s .* removed)?$"
for case in "nan:2:has nan 2" "over_tolerance:3:has over_tolerance 3" \
            "reference_nonfinite.inf:1:has reference_nonfinite nan 0 inf 1" \
            "max_abs:5.0:has max_abs 5 above atol \+ rtol \* max_abs_ref = [0-9.e+-]+" \
            "tolerance.atol:100:was judged at rtol=0.0001,atol=100, not at the plan's rtol=0.0001,atol=1e-05"; do
    field=${case%%:*} rest=${case#*:}
    value=${rest%%:*} why=${rest#*:}
    edit all "$field" "$value" || fail "edit $field"
    expect 2 "^ortqual merge: SD/shards/1/summary.json: cpu:model:fp32 passed, but its output 'output' $why$CONTRA" \
        "$Q" merge SD --no-plots
    [ ! -e SD/summary.json ] && ok "$field: nothing merged" || bad "$field: SD/summary.json written"
    edit batch "$field" "$value" || fail "edit batch $field"
    expect 2 "^ortqual merge: SD/shards/1/summary.json: cpu:model:fp32 passed, but its batch 1, output 'output' $why$CONTRA" \
        "$Q" merge SD --no-plots
done
# outputs: shard 1's batch record without its output, with it twice, with an output no other
# shard compared (config and record); exact: the float output flagged exact at a tolerance of 100
outputs() {
    $PY - shard1.json SD/shards/1/summary.json "$1" <<'EOF'
import copy, json, sys
src, dst, how = sys.argv[1:]
d = json.load(open(src)); c = d["configs"][1]; rec = c["batches"][0]["outputs"]
if how == "none": rec.clear()
if how == "twice": rec.append(copy.deepcopy(rec[0]))
if how == "ghost":
    for o in (c["outputs"], rec):
        g = copy.deepcopy(o[0]); g.update({k: "ghost" for k in ("name", "output") if k in g}); o.append(g)
if how == "exact":
    for o in (c["outputs"][0], rec[0]): o["exact"] = True; o["tolerance"]["atol"] = 100
json.dump(d, open(dst, "w"))
EOF
}
for case in "none:SD/shards/1/summary.json: cpu:model:fp32 passed, but its batch 1, lists output 'output' 0 times" \
            "twice:SD/shards/1/summary.json: cpu:model:fp32 passed, but its batch 1, lists output 'output' 2 times"; do
    outputs "${case%%:*}" || fail "outputs ${case%%:*}"
    expect 2 "^ortqual merge: ${case#*:}, where every batch compares each output of the configuration once$CONTRA" \
        "$Q" merge SD --no-plots
    [ ! -e SD/summary.json ] && ok "${case%%:*}: nothing merged" || bad "${case%%:*}: SD/summary.json written"
done
# (an output no other shard compared is no output of the plan's model: plan.json lists its outputs)
outputs ghost || fail "outputs ghost"
expect 2 "^ortqual merge: SD/shards/1/summary.json: cpu:model:fp32 lists output 'ghost', which the plan's model has not \(plan.json\): refusing to merge a summary of another model(; the earlier merge.s .* removed)?$" \
    "$Q" merge SD --no-plots
outputs exact || fail "outputs exact"
expect 2 "^ortqual merge: SD/shards/1/summary.json: cpu:model:fp32 passed, but its output 'output' says it was compared exactly, but its dtypes float32 and float32 are compared by tolerance$CONTRA" \
    "$Q" merge SD --no-plots
# a batch record against the plan and its own output: batch 1 is one event of length 2 of 3
# positions, its output [1, 3, 2]: 4 valid elements, 2 padded, checked under the rule of saved
# outputs, `as-reference` (the reference's padding is zero);
# a max_abs of 5e-06 is within the bound (atol 1e-05) but above the output's over every batch
cp shard1.json SD/shards/1/summary.json
expect 0 "verdict: PASSED" "$Q" merge SD --no-plots
$PY -c "import json, sys; o = json.load(open('SD/summary.json'))['configs'][1]['outputs'][0]
sys.exit(not (o['num_elements'] == 12 and o['num_valid'] == 8 and o['max_abs'] < 5e-06))" ||
    fail "SD: not the output this test edits: $($PY -c "import json; print(json.load(open('SD/summary.json'))['configs'][1]['outputs'][0])")"
for case in 'max_abs:"nan":has max_abs nan above atol \+ rtol \* max_abs_ref = [0-9.e+-]+' \
            "max_abs:5e-06:has max_abs 5e-06 above its output's max_abs [0-9.e+-]+ over every batch" \
            "num_valid:0:has num_valid 0, but the plan's lengths make 4 of its 6 elements valid" \
            "num_valid:6:has num_valid 6, but the plan's lengths make 4 of its 6 elements valid" \
            "padding.padded:0:has padding.padded 0, but 2 of its 6 elements are padding" \
            "padding.checked:false:has padding.checked false, where the plan's padding rule 'as-reference' gives true" \
            "padding.rule:\"report\":was compared under padding rule 'report', not the plan's 'as-reference'"; do
    field=${case%%:*} rest=${case#*:}
    value=${rest%%:*} why=${rest#*:}
    edit batch "$field" "$value" || fail "edit batch $field"
    expect 2 "^ortqual merge: SD/shards/1/summary.json: cpu:model:fp32 passed, but its batch 1, output 'output' $why$CONTRA" \
        "$Q" merge SD --no-plots
    [ ! -e SD/summary.json ] && ok "batch $field $value: nothing merged" || bad "batch $field $value: SD/summary.json written"
done
cp shard1.json SD/shards/1/summary.json
expect 0 "verdict: PASSED" "$Q" merge SD --no-plots

# 3. shards that did not report: every one missing is as one missing, `failed` and incomplete
#    (it was `not-run`, "the reference did not run"), each named, with its state
missing() {
    $PY -c "import json; d = json.load(open('$1/summary.json')); c = d['configs']
print(d['verdict'], c[0]['status'], c[1]['status'], c[1]['reason'], c[0]['reason'] == c[1]['reason'], sep='|')"
}
mkdir SM && cp -r SD/shards SM/ && rm -rf SM/shards/0 SM/shards/1 || fail "SM"
expect 1 "incomplete: shards 0, 1 \(missing\) did not report" "$Q" merge SM --no-plots
[ "$(missing SM)" = "failed|error|failed|incomplete: shards 0, 1 (missing) did not report|True" ] &&
    ok "every shard missing: failed, incomplete" || bad "every shard missing: $(missing SM)"
mkdir SM/shards/0
expect 1 "incomplete: shards 0 \(unfinished\), 1 \(missing\) did not report" "$Q" merge SM --no-plots
cp -r SD/shards/0 SM/shards/
expect 1 "incomplete: shard 1 \(missing\) did not report" "$Q" merge SM --no-plots
[ "$(missing SM)" = "failed|error|failed|incomplete: shard 1 (missing) did not report|True" ] &&
    ok "one shard missing: failed, incomplete" || bad "one shard missing: $(missing SM)"
report
