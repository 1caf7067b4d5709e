#!/usr/bin/env bash
# QA round 9a (thirty-fourth session), defects 1 and 3: two false greens.
# 1. keep.onnx reads its mask as 1 = valid (Where(mask, scores, -inf)). Given Hugging Face's left
#    padding, validate advised --mask-polarity pad; followed, it judged the padding and skipped
#    the real tokens, and PASSED an expected file off by 5 at a real token; convert's check
#    (PASS valid=112/288) wrote the model, and bench --model PASSED too. A polarity the graph
#    contradicts is now refused naming the input and the node, and the left-padding advice of a
#    mask the graph reads is to pad at the end, never the other polarity. A graph that tells
#    nothing keeps the option, and validate says the count of the elements it judged.
# 2. an output with a 0-sized axis beside compared outputs was "passed" with 0 of 0 judged
#    (validate), "PASS valid=0/0" (convert's check, which wrote the model), PASSED (bench --model):
#    it is now not compared, the run NOT TESTED, the check failed, nothing written.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/polar_models.py" || fail "writing the models and batches"
V=(--configs expected,cpu:model:fp32 --no-plots --no-cache --progress never)
B=(--iters 1 --warmup 0 --threads 1)
contra="keep.onnx: --mask-polarity pad reads input 'mask' with 1 = padding, but the graph reads it with 1 = valid \(Where 'Where_sw' masks the attention scores where 'mask' is 0\): the elements judged valid would be those the model ignores; --mask-polarity keep reads it as the graph does"

# 1. the left-padding advice: pad at the end, never --mask-polarity pad
out=$("$Q" validate --model keep.onnx --inputs left_in.npz --expected left_bad.npz "${V[@]}" --outdir v0 2>&1)
[ $? -eq 2 ] && grep -q "the model's graph reads this mask with 1 = valid, so a row whose padding comes first (Hugging Face's left padding) is not supported: pad each row at its end)" <<<"$out" &&
    ! grep -q -- "--mask-polarity pad\|1 - mask" <<<"$out" && ok "validate: left padding advised to pad at the end" ||
    bad "validate, left padding: $out"
expect 2 "left padding.*pad each row at its end\)$" "$Q" convert keep.onnx -o c0.onnx --fuse --expand-mask \
    --inputs left_in.npz --expected left_bad.npz
# 1. the other polarity, refused in validate, replay, convert's check and bench, one line
one_line 2 "^ortqual validate: $contra" "$Q" validate --model keep.onnx --inputs left_in.npz --expected left_bad.npz \
    --mask-polarity pad "${V[@]}" --outdir v1
one_line 2 "^ortqual replay: $contra" "$Q" replay --model keep.onnx --inputs left_in.npz --expected left_bad.npz \
    --reference expected --mask-polarity pad --repeat 1 --warmup 0 --progress never --outdir r1
one_line 2 "^ortqual convert: $contra" "$Q" convert keep.onnx -o c1.onnx --fuse --expand-mask --mask-polarity pad \
    --inputs left_in.npz --expected left_bad.npz
[ ! -e c1.onnx ] && ok "convert: nothing written" || bad "convert wrote c1.onnx"
one_line 2 "^ortqual bench: $contra" "$Q" bench --model keep.onnx --inputs left_in.npz --expected left_bad.npz \
    --mask-polarity pad "${B[@]}" --outdir b1
# ... and a graph that reads 1 = padding given keep (convert's default too, which reads 1 = valid)
expect 2 "pad.onnx: --mask-polarity keep reads input 'mask' with 1 = valid, but the graph reads it with 1 = padding \(Where 'Where_sw' masks the attention scores where 'mask' is 1\)" \
    "$Q" validate --model pad.onnx --inputs right_pad_in.npz --mask-polarity keep "${V[@]}" --outdir v2
expect 2 "pad.onnx: --mask-polarity keep \(the default\) reads input 'mask' with 1 = valid, but the graph reads it with 1 = padding.*--mask-polarity pad reads it as the graph does" \
    "$Q" convert pad.onnx -o c2.onnx --fuse --expand-mask --inputs right_pad_in.npz
# controls: the graph's polarity passes, and a wrong value at a real token fails
expect 0 "verdict: PASSED" "$Q" validate --model keep.onnx --inputs right_in.npz --expected right_exp.npz "${V[@]}" --outdir v3
expect 0 "verdict: PASSED" "$Q" validate --model keep.onnx --inputs right_in.npz --expected right_exp.npz \
    --mask-polarity keep "${V[@]}" --outdir v4
expect 0 "verdict: PASSED" "$Q" validate --model pad.onnx --inputs right_pad_in.npz --expected right_exp.npz \
    --mask-polarity pad "${V[@]}" --outdir v5
expect 0 "written: c6.onnx" "$Q" convert pad.onnx -o c6.onnx --fuse --expand-mask --mask-polarity pad \
    --inputs right_pad_in.npz --expected right_exp.npz
# 1. a graph that tells nothing (an additive mask made of it): the option is kept, and the count
#    of the elements it judged is said (here the padding's: 112 of 288)
out=$("$Q" validate --model silent.onnx --inputs silent_left_in.npz --expected silent_left_bad.npz \
    --mask-polarity pad --configs expected,cpu:model:fp32 --no-plots --no-cache --outdir v6 2>&1)
grep -q "^mask: input 'mask' read with 1 = padding (--mask-polarity pad), which the graph does not confirm: output 'y' judged on 112 of its 288 elements$" <<<"$out" &&
    ok "silent graph: the judged count said" || bad "silent graph: $out"

# 2. an output with no elements beside a compared one: not compared, never passed
expect 1 "
    output 'z': not compared \(it has no valid element: a 0-sized axis\).*
verdict: NOT TESTED.*
ortqual validate: untested: no value was compared: no valid element in cpu:model:fp32's output 'z' \(a 0-sized axis: nothing judged\); its other outputs were compared, but a pass would claim 'z' too" \
    "$Q" validate --model empty.onnx --inputs right_in.npz --expected empty_exp.npz "${V[@]}" --outdir e1
$PY - e1/summary.json <<'PY' && ok "summary.json: z not compared" || bad "summary.json: z $(head -c 300 e1/summary.json)"
import json, sys
o = json.load(open(sys.argv[1]))["configs"][1]["outputs"]
assert o[1]["name"] == "z" and o[1]["num_valid"] == 0 and o[1]["compared"] is False, o[1]
assert "compared" not in o[0], o[0]
PY
expect 1 "
    output 'z': not compared \(it has no valid element: a 0-sized axis\).*
ortqual convert: no value was compared: no valid element in the converted model's output 'z' \(a 0-sized axis: nothing judged\)" \
    "$Q" convert empty.onnx -o e2.onnx --flash --inputs right_in.npz
[ ! -e e2.onnx ] && ok "convert: nothing written" || bad "convert wrote e2.onnx"
expect 1 "
    output 'z': not compared \(it has no valid element: a 0-sized axis\).*
verdict: NOT TESTED" "$Q" bench --model empty.onnx --inputs right_in.npz --expected empty_exp.npz "${B[@]}" --outdir e3
$PY - e3/summary.json <<'PY' && ok "bench summary.json: z not compared" || bad "bench summary.json: $(head -c 300 e3/summary.json)"
import json, sys
s = json.load(open(sys.argv[1]))
y, z = s["results"][0]["outputs"]
assert s["verdict"] == "untested" and "output 'z'" in s["verdict_reason"], s["verdict_reason"]
assert z["compared"] is False and z["max_abs_err"] is None and "compared" not in y, (y, z)
PY
report
