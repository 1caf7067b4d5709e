#!/usr/bin/env bash
# The thirty-third session's infall (docs/results.md):
# 1. an output whose every valid element is an infinity both sides hold, beside a finite one
#    (two.onnx: y = x*x overflowing, z = x+x): validate called it not compared and its run NOT
#    TESTED, but `bench --model --expected` PASSED its row (max_abs_err 0) and convert's check
#    wrote the conversion. Now bench says y not compared (console, summary.json) and is NOT
#    TESTED naming y; convert's check fails naming y and writes nothing (as for all outputs).
# 2. a `replay --shard I/N` (or validate's) given other --inputs or --expected files than the
#    plan was prepared with ran the plan's batches, ignoring the files its command named; now
#    each file is held to the plan's SHA-256 of it (exit 2, one line naming the option and the
#    plan, nothing of the shard written); the same bytes at another path are accepted.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/inf_models.py" || fail "writing the models and batches"
FAST=(--iters 1 --warmup 0 --threads 1)

# 1. bench: y all +inf on both sides beside a finite z
one="no finite value was compared: every valid element of cpu:model:fp32's output 'y' is an infinity the expected file holds too \(counted in inf_matched: equal, but no value judged\); its other outputs were compared, but a pass would claim 'y' too"
expect 1 "
    output 'y': not compared \(its 4 valid elements are infinities the expected file holds too: inf_matched\).*
verdict: NOT TESTED.*
ortqual bench: untested: $one" "$Q" bench --model two.onnx --inputs of_in.npz --expected of_two.npz "${FAST[@]}" --outdir b1
$PY - b1/summary.json <<'PY' && ok "b1/summary.json: y not compared, z's error the row's" || bad "b1/summary.json: $(head -c 300 b1/summary.json)"
import json, sys
s = json.load(open(sys.argv[1]))
r = s["results"][0]
y, z = r["outputs"]
assert s["verdict"] == "untested" and s["exit_status"] == 1 and "output 'y'" in s["verdict_reason"], s["verdict_reason"]
assert y["output"] == "y" and y["compared"] is False and y["max_abs_err"] is None and y["inf_matched"] == 4, y
assert z["output"] == "z" and "compared" not in z and z["max_abs_err"] == 0, z
assert r["accuracy"]["max_abs_err"] == 0, r["accuracy"]
PY
expect 0 "verdict: NOT TESTED" "$Q" bench --model two.onnx --inputs of_in.npz --expected of_two.npz "${FAST[@]}" \
    --allow-skip --outdir b2
# controls: every output finite passes; one finite element of y besides infinities is a comparison
expect 0 "verdict: PASSED" "$Q" bench --model two.onnx --inputs fin_in.npz --expected fin_two.npz "${FAST[@]}" --outdir b3
expect 0 "verdict: PASSED" "$Q" bench --model two.onnx --inputs mix_in.npz --expected mix_two.npz "${FAST[@]}" --outdir b4
out=$("$Q" bench --model two.onnx --inputs mix_in.npz --expected mix_two.npz "${FAST[@]}" --outdir b5 2>&1)
grep -q "not compared" <<<"$out" && bad "mix: an output said not compared: $out" || ok "mix: every output compared"

# 1. convert's check: the same y, against the original model's outputs and against --expected
conv="no finite value was compared: every valid element of the converted model's output 'y' is an infinity %s holds too \(counted in inf_matched: equal, but no value judged\); its other outputs were compared, but a pass would claim 'y' too"
# shellcheck disable=SC2059
expect 1 "
    output 'y': not compared \(its 4 valid elements are infinities the original model's holds too: inf_matched\).*
ortqual convert: $(printf "$conv" "the original model's")" "$Q" convert two.onnx -o c1.onnx --fuse --inputs of_in.npz
[ ! -e c1.onnx ] && ok "convert: nothing written" || bad "convert wrote c1.onnx"
"$Q" convert two.onnx -o c2.onnx --fuse --inputs of_in.npz --json >c2.json 2>c2.err
$PY - c2.json <<'PY' && ok "convert --json: y not compared, not passed" || bad "convert --json: $(head -c 300 c2.json)"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["checked"] and not s["passed"] and "output 'y'" in s["failure"], s["failure"]
assert [(c["vs_reference"]["name"], c["vs_reference"].get("compared")) for c in s["checks"]] == [("y", False), ("z", None)]
PY
expect 0 "" "$Q" convert two.onnx -o c3.onnx --fuse --inputs fin_in.npz
[ -e c3.onnx ] && ok "convert: finite outputs checked, written" || bad "convert did not write c3.onnx"

# 2. a shard given other files than its plan's: refused, replay and validate alike (the refusal's
# line after the run's note "no mask input: ...")
R=(replay --model sq.onnx --no-mask --repeat 1 --warmup 0 --progress never --outdir S)
expect 0 "prepared 2 shards by batch" "$Q" "${R[@]}" --inputs fin_in.npz mix_in.npz --expected fin_exp.npz mix_exp.npz \
    --prepare-shards 2
other="is not the file batch %s of S/shards/plan.json was prepared from \(%s, [0-9a-f]{12}\.\.\.\): this shard would run the plan's batch, not the file it names; run every shard with the files the shards were prepared with$"
# shellcheck disable=SC2059
expect 2 "^ortqual replay: --inputs of_in.npz \(SHA-256 [0-9a-f]{12}\.\.\.\) $(printf "$other" 0 fin_in.npz)" \
    "$Q" "${R[@]}" --inputs of_in.npz mix_in.npz --expected fin_exp.npz mix_exp.npz --shard 0/2
# shellcheck disable=SC2059
expect 2 "^ortqual replay: --expected of_exp.npz \(SHA-256 [0-9a-f]{12}\.\.\.\) $(printf "$other" 0 fin_exp.npz)" \
    "$Q" "${R[@]}" --inputs fin_in.npz mix_in.npz --expected of_exp.npz mix_exp.npz --shard 0/2
expect 2 "^ortqual replay: --inputs names 3 files, but S/shards/plan.json was prepared from 2: run every shard with the files the shards were prepared with$" \
    "$Q" "${R[@]}" --inputs fin_in.npz mix_in.npz of2_in.npz --expected fin_exp.npz mix_exp.npz of_exp.npz --shard 0/2
expect 2 "^ortqual replay: --inputs names 1 files, but batch 1 of S/shards/plan.json was prepared from one after them \(mix_in.npz\)" \
    "$Q" "${R[@]}" --inputs fin_in.npz --expected fin_exp.npz --shard 1/2
[ "$(ls -A S/shards/0 S/shards/1 2>/dev/null | grep -v '^error.json$' | grep -v '^S/shards/[01]:$' | grep .)" = "" ] &&
    ok "refused shards wrote no result" || bad "a refused shard wrote: $(ls S/shards/*)"
# the plan's files (batch 0's at another path: a node's copy) run and merge
cp fin_in.npz copy_in.npz
expect 0 "shard 0 of 2 done" "$Q" "${R[@]}" --inputs copy_in.npz mix_in.npz --expected fin_exp.npz mix_exp.npz --shard 0/2
expect 0 "shard 1 of 2 done" "$Q" "${R[@]}" --inputs fin_in.npz mix_in.npz --expected fin_exp.npz mix_exp.npz --shard 1/2
expect 0 "verdict: PASSED" "$Q" merge --no-plots S
V=(validate --model sq.onnx --no-mask --configs expected,cpu:model:fp32 --no-plots --no-cache --progress never --repeat 1
   --outdir V)
expect 0 "prepared 2 shards by batch" "$Q" "${V[@]}" --inputs fin_in.npz mix_in.npz --expected fin_exp.npz mix_exp.npz \
    --prepare-shards 2
# shellcheck disable=SC2059
expect 2 "^ortqual validate: --inputs of_in.npz \(SHA-256 [0-9a-f]{12}\.\.\.\) $(printf "$other" 1 mix_in.npz | sed 's#S/#V/#')" \
    "$Q" "${V[@]}" --inputs fin_in.npz of_in.npz --expected fin_exp.npz mix_exp.npz --shard 1/2
report
