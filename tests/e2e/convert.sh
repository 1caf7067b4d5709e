#!/usr/bin/env bash
# ortqual convert: every PyTorch fixture becomes Attention-24 (fp16, nonpad_kv_seqlen or is_causal)
# matching PyTorch's outputs; the opset-23 exports ORT refuses run after --mask-to-seqlen or
# --expand-mask; the softmax over the query axis stays; holes are refused; bad use is exit 2.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
PY=/usr/bin/python3

# the structure of a converted model: opset 24, only Attention nodes for attention, no attn_mask
structure() { # structure MODEL N_ATTENTION CAUSAL
    $ORTQUAL inspect --json "$1" | $PY -c '
import json, sys
m = json.load(sys.stdin); n, causal = int(sys.argv[1]), sys.argv[2] == "1"
ops = {o["op_type"]: o["count"] for o in m["operators"]}
assert m["opsets"][0]["version"] == 24, m["opsets"]
assert ops.get("Attention") == n and "Softmax" not in ops and "Elu" not in ops, ops
want = "inputs: Q K V" if causal else "inputs: Q K V nonpad_kv_seqlen"
for a in m["attention"]:
    assert a["kind"] == "Attention" and a["detail"] == want, a
    assert ("is_causal=1" in a["attributes"]) == causal, a
' "$2" "$3"
}

# (every fixture at both opsets is converted by unit/test_convert; here the tool's path, one of each kind)
# (--flash is the four flags: both spellings run)
for case in tx_encoder:23:2:0 decoder_lm:18:1:1 mlpf_like:18:2:0 mlpf_like:23:2:0; do
    IFS=: read -r fx op n causal <<<"$case"
    out="$T/${fx}_$op.onnx"
    passes="--fuse --mask-to-seqlen --attention-dtype fp16 --opset 24"
    [ "$op" = 23 ] && passes=--flash
    expect 0 "written: " $ORTQUAL convert "$F/$fx/${fx}_op$op.onnx" -o "$out" $passes --inputs "$F/$fx/inputs_000.npz" --inputs "$F/$fx/inputs_001.npz" \
        --expected "$F/$fx/outputs_000.npz" --expected "$F/$fx/outputs_001.npz"
    if structure "$out" "$n" "$causal"; then ok "$fx opset $op: $n Attention-24 node(s), no attn_mask"; else bad "$fx opset $op structure"; fi
done

# opset 26 (ONNX 1.21: BitCast and CumProd added, no operator changed) is checked like the
# others: raised to, the output runs on ORT 1.29 and matches PyTorch's outputs; the table reaches
# it, so a raise over an operator that changed meaning before it is refused naming that one
out="$T/tx_encoder_26.onnx"
expect 0 "opset +rewritten +ai.onnx opset 18 -> 26" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$out" \
    --flash --opset 26 --inputs "$F/tx_encoder/inputs_000.npz" --expected "$F/tx_encoder/outputs_000.npz"
$ORTQUAL inspect --json "$out" | $PY -c 'import json, sys; assert json.load(sys.stdin)["opsets"][0]["version"] == 26' &&
    ok "tx_encoder raised to opset 26 and checked" || bad "tx_encoder at opset 26: $(ls -l "$out" 2>&1)"
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/set_opset.py" "$F/tx_encoder/tx_encoder_op18.onnx" "$T/tx12.onnx" 12
expect 1 "opset +refused +node_sym_size_int_6: cannot raise ai.onnx opset 12 to 26: Squeeze changed meaning in opset 13" \
    $ORTQUAL convert "$T/tx12.onnx" --plan --flash --opset 26

# heads of 12 (mlpf_like) are zero-padded to 16, the multiple of 8 ORT's CUDA flash attention needs,
# by default with an attention dtype; --no-pad-head-size keeps them; heads of 8 (tx_encoder) stay
expect 0 "pad-head-size +rewritten +attention: head size 12 -> 16 \(from Q's shape\): Q, K, V zero-padded" \
    $ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24
plan_pads() { $ORTQUAL convert "$@" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24 | grep -c "^pad-head-size"; }
[ "$(plan_pads "$F/mlpf_like/mlpf_like_op18.onnx" --no-pad-head-size)" = 0 ] && ok "--no-pad-head-size: heads of 12 kept" \
    || bad "--no-pad-head-size still padded"
[ "$(plan_pads "$F/tx_encoder/tx_encoder_op18.onnx")" = 0 ] && ok "tx_encoder: heads of 8 not padded" || bad "tx_encoder padded"

# the opset-23 export: ORT refuses it as exported (a runtime error, explained), and runs it once
# the mask spans the queries, matching PyTorch's outputs
expect 3 "refused by ONNX Runtime \[attn-mask-query-broadcast\]" $ORTQUAL replay --model "$F/mlpf_like/mlpf_like_op23.onnx" --inputs "$F/mlpf_like/inputs_000.npz" \
    --expected "$F/mlpf_like/outputs_000.npz" --ep cpu --outdir "$T/r23" --force
expect 0 "reference = original, lowered \(ORT refused it: node 'node_scaled_dot_product_attention': inconsistent q_sequence_length" \
    $ORTQUAL convert "$F/mlpf_like/mlpf_like_op23.onnx" -o "$T/expanded.onnx" --expand-mask
expect 0 "verdict: PASSED" $ORTQUAL replay --model "$T/expanded.onnx" --inputs "$F/mlpf_like/inputs_000.npz" \
    --expected "$F/mlpf_like/outputs_000.npz" --ep cpu --outdir "$T/rx" --force
# --expand-mask with nothing to expand says so, as the other passes do (it printed no line)
expect 0 "expand-mask +note +no Attention node" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --expand-mask
expect 0 "verdict: PASSED" $ORTQUAL replay --model "$T/mlpf_like_23.onnx" --inputs "$F/mlpf_like/inputs_001.npz" \
    --expected "$F/mlpf_like/outputs_001.npz" --ep cpu --precision fp16 --outdir "$T/rs" --force

# a softmax over the query axis is not attention: left alone, and the model still matches PyTorch
expect 0 "skipped +node_softmax: not attention: softmax over axis 2 of 4 \(the query axis\)" \
    $ORTQUAL convert "$F/wrong_axis/wrong_axis_op18.onnx" -o "$T/wrong.onnx" --fuse --mask-to-seqlen \
    --inputs "$F/wrong_axis/io.npz" --expected "$F/wrong_axis/io.npz"
expect 0 "ai.onnx +Softmax +1" $ORTQUAL inspect "$T/wrong.onnx"
# --flash on it: no Attention computes in float16, so the check holds it to float32's tolerance
# (it was judged at fp16's rtol 1e-2, atol 1e-3 then, a hundred times looser than anything in it needs)
$ORTQUAL convert "$F/wrong_axis/wrong_axis_op18.onnx" -o "$T/wrong16.onnx" --flash --inputs "$F/wrong_axis/io.npz" \
    --expected "$F/wrong_axis/io.npz" >"$T/wrong16.out" 2>&1
if [ "$(grep -c 'vs .*PASS.*(rtol=0.0001 atol=1e-05)$' "$T/wrong16.out")" = 2 ] && ! grep -q "rtol=0.01" "$T/wrong16.out"; then
    ok "wrong_axis --flash: checked at fp32 tolerances"
else bad "wrong_axis --flash: not checked at fp32 tolerances: $(cat "$T/wrong16.out")"; fi

# the mask contract: recorded in the model, enforced on inputs, by convert and by validate
$PY - "$F/mlpf_like/inputs_000.npz" "$T/holes.npz" <<'PY'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); m = z["mask"].copy(); m[1, 10] = 0; z["mask"] = m; np.savez(sys.argv[2], **z)
PY
expect 0 '"ortqual.mask_contract"|mask_contract' $PY -c '
import sys
d = open(sys.argv[1], "rb").read()
assert b"ortqual.mask_contract" in d and b"\"contract\":\"valid_prefix\"" in d
print("ortqual.mask_contract")' "$T/mlpf_like_18.onnx"
expect 2 "holes.npz: mask 'mask': event 1: hole at position 11" $ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" \
    -o "$T/h.onnx" --fuse --mask-to-seqlen --inputs "$T/holes.npz"
[ ! -e "$T/h.onnx" ] && ok "nothing written for holes" || bad "a model was written for inputs with holes"
expect 2 "event 1: hole at position 11" $ORTQUAL validate --model "$T/mlpf_like_18.onnx" --inputs "$T/holes.npz" \
    --configs cpu:model:fp32,cuda:model:fp32 --outdir "$T/vh" --force
expect 2 "event 1: hole at position 11" $ORTQUAL replay --model "$T/mlpf_like_18.onnx" --inputs "$T/holes.npz" \
    --expected "$F/mlpf_like/outputs_000.npz" --ep cpu --outdir "$T/rh" --force
expect 2 "--mask 'features', but the model's ortqual.mask_contract names input 'mask'" $ORTQUAL validate \
    --model "$T/mlpf_like_18.onnx" --inputs "$F/mlpf_like/inputs_000.npz" --mask features \
    --configs cpu:model:fp32,cuda:model:fp32 --outdir "$T/vc" --force

# the check bites: a changed PyTorch value fails naming output and element; nothing is written
$PY - "$F/hand_attention/io.npz" "$T/bad_io.npz" <<'PY'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["y"] = z["y"].copy(); z["y"][0, 5, 3] += 0.25; np.savez(sys.argv[2], **z)
PY
# (the original misses the changed value as much: the line says the file is what is off)
expect 1 "output 'y' differs from the expected outputs in .*bad_io.npz, and the original model's does too \(max_abs 0.25; the converted 0.25\): are they this model's outputs, for these inputs\? y: FAIL .*worst \[0,5,3\]" $ORTQUAL convert \
    "$F/hand_attention/hand_attention_op18.onnx" -o "$T/bad.onnx" --fuse --mask-to-seqlen --inputs "$T/bad_io.npz" \
    --expected "$T/bad_io.npz"
[ ! -e "$T/bad.onnx" ] && ok "nothing written when the check fails" || bad "written despite a failed check"

# validate notes that a converted float16 model misses float32 tolerances by its own rounding
expect 1 "note: .*tx_encoder_23.onnx: Attention '[^']+' computes in float16; cpu:model:fp32 is judged with fp32 tolerances: use cpu:model:fp16" \
    $ORTQUAL validate --model "$T/tx_encoder_23.onnx" --inputs "$F/tx_encoder/inputs_000.npz" --features features --mask mask \
    --expected "$F/tx_encoder/outputs_000.npz" --configs expected,cpu:model:fp32 --no-plots --outdir "$T/v16"
if $ORTQUAL validate --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/inputs_000.npz" --features features \
    --mask mask --expected "$F/tx_encoder/outputs_000.npz" --configs expected,cpu:model:fp32 --no-plots --outdir "$T/v32" 2>&1 | grep -q "note: .* computes in"; then
    bad "float16 note for a float32 model"
else ok "no float16 note for the float32 export"; fi

# --plan writes nothing; --json is machine-readable
expect 0 "plan only: nothing written" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --mask-to-seqlen
expect 0 '"fused": 2' $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --json

# a head size ORT's CUDA fused kernels cannot take is noted at conversion time (mlpf_like: 12),
# and nothing is said where they can (tx_encoder: 8)
expect 0 "cuda +note +attention: head size 12 \(from Q's shape\): .* so this node runs MATH on CUDA; pad the head size to 16.*ortqual convert --pad-head-size writes it" \
    $ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --no-pad-head-size
# once padded (the default with an attention dtype) the output's heads of 16 need no note
plan=$($ORTQUAL convert "$F/mlpf_like/mlpf_like_op18.onnx" --plan --fuse --mask-to-seqlen --attention-dtype fp16)
if grep -q "^cuda " <<<"$plan"; then
    bad "head-size note after padding to 16"
else ok "no head-size note once mlpf_like is padded"; fi
plan=$($ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --mask-to-seqlen)
if grep -q "head size" <<<"$plan"; then
    bad "head-size note for tx_encoder (head size 8)"
else ok "no head-size note for tx_encoder (head size 8)"; fi

# without --inputs the check generates two batches: ortqual's own exports have fixed dimensions
# beside named ones (the heads, the head size; every one with --static), whose dim_value was read
# as a dim_param string (exit 139, nothing said). Every format, dynamic and static, converts;
# a fixed [2, 16] batch keeps its shape, and inputs laid out like the mask are zero on padding
for fmt in decomposed attention23 attention24; do
    for shape in dynamic 2,16; do
        st=(); [ "$shape" = dynamic ] || st=(--static "$shape")
        $ORTQUAL export sdpa --format "$fmt" "${st[@]}" -o "$T/sdpa.onnx" --force >/dev/null
        for pass in --flash --lower; do
            expect 0 "generated inputs" $ORTQUAL convert "$T/sdpa.onnx" -o "$T/sdpa_out.onnx" --force $pass
        done
    done
done
$ORTQUAL export sdpa --format decomposed --layout 3 --static 2,16 -o "$T/sdpa3.onnx" --force >/dev/null
expect 0 "batch 1 vs reference +output: PASS valid=1536/2048 .* pad_nonzero=0/512 \(rtol" \
    $ORTQUAL convert "$T/sdpa3.onnx" -o "$T/sdpa3_out.onnx" --flash

# --fuse alone keeps the broadcast mask (valid ONNX): ORT refuses that, so the check fails and says what helps
expect 0 "broadcasts over the queries: valid ONNX, refused by ONNX Runtime .* add --expand-mask or --mask-to-seqlen" \
    $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" --plan --fuse
expect 0 '"detail": "attn_mask .* add --expand-mask or --mask-to-seqlen"' \
    $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" --plan --fuse --json
expect 1 "ORT CPU cannot run the converted model: node 'attention': inconsistent q_sequence_length.*--expand-mask" \
    $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/fuse_only.onnx" --fuse
expect 0 "written: " $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/fuse_expand.onnx" --fuse --expand-mask
# an If branch that reads a top-level initializer and outer inputs (values ONNX leaves implicit):
# convert kept them (it pruned `c` as unused, and ORT refused the converted model, exit 1)
(cd "$OQ_SOURCE_DIR/tests/e2e/lib" && /usr/bin/python3 if_model.py "$T/if.onnx" "$T/if_in.npz") || fail "if_model.py"
expect 0 "written: .*if_23\.onnx" $ORTQUAL convert "$T/if.onnx" -o "$T/if_23.onnx" --opset 23 --inputs "$T/if_in.npz"
# its bool input cannot be generated: an input the caller must give is exit 2, the error alone
# (it was exit 1 after the plan, as a refused rewrite reads)
one_line 2 "^ortqual convert: .*if\.onnx: cannot generate values for bool input 'cond' \(generated batches make bool values only for the mask input \(--mask NAME\), which this is not\): give --inputs$" \
    $ORTQUAL convert "$T/if.onnx" -o "$T/if_gen.onnx" --opset 23
# onto an existing output: refused, and the refusal says how to overwrite (as bench and export do)
expect 2 "fuse_expand\.onnx: exists \(not overwritten\) \(use --force or another -o\)$" \
    $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/fuse_expand.onnx" --fuse --expand-mask

# usage and input errors
refused() { # refused PATTERN CMD...: exit 2 with PATTERN on stderr, nothing on stdout
    local pat=$1 rc
    shift
    "$@" >"$T/refused.out" 2>"$T/refused.err"
    rc=$?
    if [ "$rc" -ne 2 ] || ! grep -qE -- "$pat" "$T/refused.err" || [ -s "$T/refused.out" ]; then
        bad "$* -> exit $rc, expected 2 and /$pat/ alone: $(cat "$T/refused.out" "$T/refused.err")"
    else ok "$* -> 2: $(cat "$T/refused.err")"; fi
}
expect 2 "--opset '12': want a whole number >= 13" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --fuse --opset 12
expect 2 "opset 23 is below the 24 that nonpad_kv_seqlen needs \(--mask-to-seqlen writes it: raise --opset to 24" \
    $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --flash --opset 23
expect 2 "opset 18 is below the 23 that Attention needs \(raise --opset or leave it out\)" \
    $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --fuse --opset 18
# found after the passes ran, it is still the only output: no plan on stdout before it (7 lines
# were), with --plan too; --json gives the ortqual-error/1 object of every subcommand
refused "opset 17 is below the 24 that nonpad_kv_seqlen needs" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" \
    -o "$T/o.onnx" --flash --opset 17
refused "opset 23 is below the 24" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --flash --opset 23
$ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --flash --opset 23 --json >"$T/late.json" 2>/dev/null
rc=$?
if [ "$rc" = 2 ] && $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(d) == ["command", "error", "exit_code", "schema", "status"] and d["schema"] == "ortqual-error/1", d
assert d["exit_code"] == 2 and d["command"] == "convert" and "opset 23" in d["error"], d' "$T/late.json"; then
    ok "--json on a late usage error: no steps, the error object"
else bad "--json on a late usage error: exit $rc: $(cat "$T/late.json")"; fi
# the error in --json is worded as on stderr: the tool's options, not the library's fields
$ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --flash --opset 23 2>"$T/late.err" >/dev/null
if $PY -c '
import json, sys
said = open(sys.argv[2]).read().strip()
error = json.load(open(sys.argv[1]))["error"]
assert "ortqual convert: " + error == said and "raise --opset to 24" in error, (error, said)' "$T/late.json" "$T/late.err"; then
    ok "--json's error is stderr's"
else bad "--json's error is not stderr's: $(cat "$T/late.json" "$T/late.err")"; fi
# --plan writes nothing and checks nothing: an output or check option beside it would be dropped
for opt in "-o $T/p.onnx:output" "--force:force" "--inputs $F/tx_encoder/inputs_000.npz:inputs" \
           "--expected $F/tx_encoder/outputs_000.npz:expected" "--tolerance fp16:tolerance" "--seed 2:seed" \
           "--ort-lib /nonexistent.so:ort-lib"; do
    refused "^ortqual convert: --plan and --${opt##*:} contradict: --plan " \
        $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --flash ${opt%:*}
done
# --mask-polarity: read by --mask-to-seqlen (tests/e2e/mask_polarity.sh), by nothing else of a plan
refused "^ortqual convert: --plan and --mask-polarity contradict: --plan runs no check and no --mask-to-seqlen" \
    $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --mask-polarity pad
[ ! -e "$T/p.onnx" ] && ok "--plan -o: nothing written" || bad "--plan -o wrote p.onnx"
[ ! -e "$T/o.onnx" ] && ok "opset refusals write nothing" || bad "o.onnx written"
expect 2 "-o OUT.onnx is required" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --fuse
expect 2 "fp16 or bf16" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --attention-dtype fp8
expect 2 "no pass chosen: --flash for ORT's CUDA flash attention" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx"
expect 2 "no pass chosen" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --keep-elu
expect 2 "--flash and --lower contradict" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/o.onnx" --flash --lower
# --flash plans exactly what the four flags plan, on every fixture; --attention-dtype still chooses
for m in "$F"/*/*_op*.onnx; do
    a=$($ORTQUAL convert "$m" --plan --flash 2>&1); b=$($ORTQUAL convert "$m" --plan --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24 2>&1)
    if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "--flash plans as the four flags: ${m##*/}"; else bad "--flash differs on ${m##*/}"; fi
done
expect 0 "attention-dtype +rewritten .*bfloat16" $ORTQUAL convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --flash --attention-dtype bf16
expect 2 "not an ONNX model" $ORTQUAL convert "$F/tx_encoder/io.npz" -o "$T/o.onnx" --fuse
expect 2 "exists \(not overwritten\)" $ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/mlpf_like_18.onnx" --fuse
# --inputs are checked as validate and replay check theirs, before the plan is printed or ORT
# runs: exit 2 naming the file and member (a shape, a dtype, a batch size the members disagree on,
# Fortran order, big-endian, no events); nothing on stdout, nothing written
TX="$F/tx_encoder"
$PY - "$TX/inputs_000.npz" "$T" <<'PY'
import sys, numpy as np
z = np.load(sys.argv[1]); f, m, d = z["features"], z["mask"], sys.argv[2]
np.savez(d + "/shape.npz", features=f[:, :, :5].copy(), mask=m)
np.savez(d + "/f64.npz", features=f.astype(np.float64), mask=m)
np.savez(d + "/i64mask.npz", features=f, mask=m.astype(np.int64))
np.savez(d + "/batch.npz", features=f[:2].copy(), mask=m)
np.savez(d + "/fortran.npz", features=np.asfortranarray(f), mask=m)
np.savez(d + "/bigend.npz", features=f.astype(">f4"), mask=m)
np.savez(d + "/zero.npz", features=f[:0], mask=m[:0])
PY
for case in "shape:member 'features' has shape \[3,56,5\]; the model's 'features' is \[batch,seq,8\] \(axis 2 fixed to 8\)" \
            "f64:member 'features' is float64 \[3,56,8\]; the model's 'features' is float32" \
            "i64mask:member 'mask' is int64 \[3,56\]; the model's 'mask' is bool" \
            "batch:dimension 'batch' is 2 in member 'features' \[2,56,8\] but 3 in member 'mask'" \
            "fortran:member 'features': Fortran-order arrays are not supported" \
            "bigend:member 'features': big-endian dtype '>f4' is not supported" \
            "zero:the batch has 0 events \(member 'mask' is \[0,56\]\)"; do
    name=${case%%:*}
    refused "^ortqual convert: $T/$name.npz: ${case#*:}" $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/in.onnx" --flash \
        --inputs "$T/$name.npz"
    expect 2 "$name.npz: ${case#*:}" $ORTQUAL validate --model "$TX/tx_encoder_op18.onnx" --inputs "$T/$name.npz" \
        --configs cpu:model:fp32,cuda:model:fp32 --outdir "$T/v-$name"
done
[ ! -e "$T/in.onnx" ] && ok "nothing written for refused inputs" || bad "in.onnx written for refused inputs"

# --expected files are checked as validate checks its own, before the plan is printed or anything
# runs (a missing output was found after the check had printed half its lines; an int32 'out' was
# compared exactly, exit 1)
$PY - "$TX/outputs_000.npz" "$T" <<'PY'
import sys, numpy as np
z = np.load(sys.argv[1]); o, d = z["out"], sys.argv[2]
np.savez(d + "/ex_none.npz", other=o)
np.savez(d + "/ex_int.npz", out=o.astype(np.int32))
np.savez(d + "/ex_seq.npz", out=o[:, :10].copy())
PY
for case in "ex_none:no member 'out' for the model's output out float32 \[batch,seq,3\]" \
            "ex_int:expected 'out' is int32; the model's output is float32" \
            "ex_seq:dimension 'seq' is 56 in member 'features' \[3,56,8\] of $TX/inputs_000.npz but 10 in expected 'out' \[3,10,3\]"; do
    name=${case%%:*}
    refused "^ortqual convert: $T/$name.npz: ${case#*:}" $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/ex.onnx" --flash \
        --inputs "$TX/inputs_000.npz" --expected "$T/$name.npz"
done
[ ! -e "$T/ex.onnx" ] && ok "nothing written for refused expected outputs" || bad "ex.onnx written for refused expected outputs"

# errors before the plan: an unreadable model, a bad option value; --json says why and with what status
head -c 3000 "$TX/tx_encoder_op18.onnx" >"$T/truncated.onnx"
refused "truncated.onnx: not an ONNX model" $ORTQUAL convert "$T/truncated.onnx" -o "$T/t.onnx" --flash
refused "truncated.onnx: not an ONNX model" $ORTQUAL convert "$T/truncated.onnx" --plan --flash
refused "--tolerance: tolerance 'rtol=abc': rtol value 'abc' is not a finite number" \
    $ORTQUAL convert "$TX/tx_encoder_op18.onnx" --plan --flash --tolerance rtol=abc
mkfifo "$T/out.fifo" # not /dev/null: a regression would replace the machine's with a file
refused "out.fifo: is a FIFO \(named pipe\); results are written to regular files only" \
    $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/out.fifo" --flash --force
refused "nofolder/x.onnx: folder '.*nofolder': No such file or directory" \
    $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/nofolder/x.onnx" --flash
refused "--tolerance: tolerance for output 'foo': the model has no such output \(its outputs: out\)" \
    $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/tol.onnx" --flash --tolerance foo:rtol=1e-3
$ORTQUAL convert "$T/truncated.onnx" -o "$T/t.onnx" --flash --json >"$T/err.json" 2>/dev/null
rc=$?
if [ "$rc" = 2 ] && $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "ortqual-error/1" and d["exit_code"] == 2 and "not an ONNX model" in d["error"], d' "$T/err.json"; then
    ok "--json on an unreadable model: the error object, exit_code 2"
else bad "--json on an unreadable model: exit $rc: $(cat "$T/err.json")"; fi
$ORTQUAL convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/fj.onnx" --fuse --json >"$T/fail.json" 2>/dev/null
rc=$?
if [ "$rc" = 1 ] && $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exit_status"] == 1 and "inconsistent q_sequence_length" in d["error"] and d["failure"], d' "$T/fail.json"; then
    ok "--json on a failed check: exit_status 1, the error and the failure"
else bad "--json on a failed check: exit $rc: $(cat "$T/fail.json")"; fi
expect 0 '"exit_status": 0,' $ORTQUAL convert "$TX/tx_encoder_op18.onnx" --plan --fuse --json
# a model path that is not UTF-8 (byte 0xff): --json shows it with U+FFFD, in the report and in
# the error, where jansson refused it and convert said "out of memory"
bad8="$T/$(printf 'm\xff')"
mkdir "$bad8" && cp "$TX/tx_encoder_op18.onnx" "$bad8/"
$ORTQUAL convert "$bad8/tx_encoder_op18.onnx" --plan --fuse --json >"$T/u8.json" 2>"$T/u8.err"
rc=$?
$ORTQUAL convert "$bad8/none.onnx" --plan --fuse --json >"$T/u8none.json" 2>/dev/null
rc2=$?
if [ "$rc" = 0 ] && [ "$rc2" = 2 ] && $PY -c '
import json, sys
u8 = sys.argv[3] + "/m\ufffd"
d, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert d["model"] == u8 + "/tx_encoder_op18.onnx" and d["fused"] == 2 and d["exit_status"] == 0, d
assert e["schema"] == "ortqual-error/1" and e["exit_code"] == 2 and e["error"].startswith(u8 + "/none.onnx: "), e
' "$T/u8.json" "$T/u8none.json" "$T"; then
    ok "--json with a model path that is not UTF-8: shown with U+FFFD"
else bad "--json with a model path that is not UTF-8: exit $rc, $rc2: $(head -c 300 "$T/u8.json") $(cat "$T/u8.err")"; fi

# --mask must name a [B, L] mask input, as validate says
refused "tx_encoder_op18.onnx: input 'features' is rank 3; the mask contract is about a \[B, L\] mask$" \
    $ORTQUAL convert "$TX/tx_encoder_op18.onnx" --plan --flash --mask features
refused "input 'features' is rank 3" $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/m.onnx" --flash --mask features \
    --inputs "$TX/inputs_000.npz"
refused "--mask 'nosuch': the model has no such input \(inputs: features, mask\)" \
    $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/m.onnx" --flash --mask nosuch
expect 2 "input 'features' is rank 3" $ORTQUAL validate --model "$TX/tx_encoder_op18.onnx" --inputs "$TX/inputs_000.npz" \
    --mask features --configs cpu:model:fp32,cuda:model:fp32 --outdir "$T/vm"

# --inputs and --expected as validate and replay take them: a quoted glob, or several files
expect 0 "batch 1 vs expected .*PASS" $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/glob.onnx" --flash \
    --inputs "$TX/inputs_*.npz" --expected "$TX/outputs_*.npz"
expect 0 "batch 1 vs expected .*PASS" $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/many.onnx" --flash \
    --inputs "$TX/inputs_000.npz" "$TX/inputs_001.npz" --expected "$TX/outputs_000.npz" "$TX/outputs_001.npz"
expect 2 "2 --expected files for 1 --inputs" $ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/few.onnx" --flash \
    --inputs "$TX/inputs_000.npz" --expected "$TX/outputs_*.npz"
# (an option list takes the operands after it: the model among them is still the model)
expect 0 "batch 0 vs reference .*PASS" $ORTQUAL convert --inputs "$TX/inputs_000.npz" "$TX/tx_encoder_op18.onnx" -o "$T/after.onnx" --flash
expect 2 "expected one IN.onnx" $ORTQUAL convert --inputs "$TX/inputs_000.npz" -o "$T/none.onnx" --flash
# --help says what --pad-head-size does (its head said "no pass changes" the head size)
# (the help read whole first: `| head` closing the pipe early made the tool's exit SIGPIPE, which
# pipefail counted as a failure when the machine was busy)
help=$($ORTQUAL convert --help)
if grep -q "no pass changes" <<<"$help" || ! head -12 <<<"$help" | grep -q -- "--pad-head-size pads it"; then
    bad "convert --help: the head size paragraph does not name --pad-head-size"
else ok "convert --help names --pad-head-size for the head size"; fi
# initializers declared as graph inputs too (keep_initializers_as_inputs=True: inputs with a default):
# prune keeps the defaults of inputs it keeps (it dropped them and ORT then wanted 'val_110' fed);
# fuse folds no default: the score divisor 'val_41' is an input a caller may feed, which a fused
# node's scale attribute would ignore (it was folded and the chains fused), so those chains are
# refused, naming it, and kept with --allow-refused
/usr/bin/python3 "$OQ_SOURCE_DIR/tests/e2e/lib/inits_as_inputs.py" "$F/bert_like/bert_like_op18.onnx" "$T/kiai.onnx"
expect 1 "refused +node_softmax: the scores are scaled by 'val_41', a graph input with a default" \
    $ORTQUAL convert "$T/kiai.onnx" -o "$T/kiai_fuse.onnx" --fuse
[ ! -e "$T/kiai_fuse.onnx" ] && ok "kiai: nothing written with the fusion refused" || bad "kiai_fuse.onnx written"
expect 0 "written: $T/kiai_flash.onnx" $ORTQUAL convert "$T/kiai.onnx" -o "$T/kiai_flash.onnx" --flash --allow-refused \
    --inputs "$F/bert_like/inputs_*.npz" --expected "$F/bert_like/outputs_*.npz"
# --freeze says which inputs with a default are weights: made constants first, so the chains fuse
# with nothing refused; the check runs the original (its defaults) against the converted model on
# PyTorch's batches and passes; the converted model takes only the inputs without a default
expect 1 "freeze 'val_41' \(or --freeze all: every input with a default\) makes it a constant" \
    $ORTQUAL convert "$T/kiai.onnx" --plan --fuse
$ORTQUAL convert "$T/kiai.onnx" -o "$T/kiai_frozen.onnx" --flash --freeze all --inputs "$F/bert_like/inputs_*.npz" \
    --expected "$F/bert_like/outputs_*.npz" >"$T/kiai_frozen.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q "^  freeze  *rewritten  43 graph inputs with a default made constants" "$T/kiai_frozen.out" &&
   [ "$(grep -c '^  fuse  *fused ' "$T/kiai_frozen.out")" = 2 ] && ! grep -q refused "$T/kiai_frozen.out" &&
   [ "$(grep -c 'batch [01] vs reference .*PASS' "$T/kiai_frozen.out")" = 4 ] &&
   ! grep -q 'vs .*FAIL' "$T/kiai_frozen.out" && grep -q "^written: $T/kiai_frozen.onnx" "$T/kiai_frozen.out"; then
    ok "kiai --freeze all --flash: fused, nothing refused, checked against the original on given batches"
else bad "kiai --freeze all: exit $rc: $(cat "$T/kiai_frozen.out")"; fi
structure "$T/kiai_frozen.onnx" 2 0 && ok "kiai frozen: 2 Attention-24 nodes, nonpad_kv_seqlen" || bad "kiai frozen structure"
expect 0 "^inputs input_ids attention_mask$" $PY -c '
import json, sys
m = json.load(sys.stdin)
assert m["inputs"] and all(i["default"] is None for i in m["inputs"]), m["inputs"]
print("inputs", *[i["name"] for i in m["inputs"]])' < <($ORTQUAL inspect --json "$T/kiai_frozen.onnx")
expect 0 "verdict: PASSED" $ORTQUAL validate --model "$T/kiai_frozen.onnx" --inputs "$F/bert_like/inputs_*.npz" \
    --expected "$F/bert_like/outputs_*.npz" --no-plots --outdir "$T/kiai_v"
# the plan and --json list the freeze: one name frozen is enough for these chains
expect 0 "^1 2 0 rewritten 1 graph input with a default made constant \(the initializer kept, the input dropped\): 'val_41'$" \
    $PY -c '
import json, sys
d = json.load(sys.stdin)
f = [s for s in d["steps"] if s["pass"] == "freeze"]
assert len(f) == 1 and d["exit_status"] == 0, d
print(d["frozen"], d["fused"], d["refused"], f[0]["action"], f[0]["detail"])' < <($ORTQUAL convert "$T/kiai.onnx" --plan --fuse --freeze val_41 --json)
# an input without a default is never frozen: named, it is refused naming it (exit 2, nothing written)
refused "kiai.onnx: --freeze 'attention_mask': that input has no default \(no initializer of its name\)" \
    $ORTQUAL convert "$T/kiai.onnx" -o "$T/kiai_nd.onnx" --fuse --freeze val_41,attention_mask
refused "kiai.onnx: --freeze 'nosuch': the model has no graph input of that name" \
    $ORTQUAL convert "$T/kiai.onnx" --plan --fuse --freeze all --freeze nosuch
refused "--freeze 'val_41,': an empty name" $ORTQUAL convert "$T/kiai.onnx" --plan --fuse --freeze val_41,
[ ! -e "$T/kiai_nd.onnx" ] && ok "kiai: nothing written for a named input without a default" || bad "kiai_nd.onnx written"
# a model without defaults: 'all' freezes nothing, and says so
expect 0 "freeze +note +no graph input has a default: nothing to freeze" \
    $ORTQUAL convert "$F/bert_like/bert_like_op18.onnx" --plan --fuse --freeze all
# weights beside the model (torch.onnx.export's default; tests/fixtures/external): converted to a
# pair, OUT.onnx naming OUT.onnx.data by its file name, in another folder than the input's; the
# pair validates against PyTorch's outputs; an existing data file is an output not overwritten
X="$OQ_SOURCE_DIR/tests/fixtures/external"; L="$F/llama_like"
mkdir -p "$T/ext"
expect 0 "^initializers 33 \(549 bytes inside; 9 in external data, 53248 bytes\)" $ORTQUAL inspect "$X/llama_like_op18.onnx"
expect 0 "written: $T/ext/fast.onnx \(weights in $T/ext/fast.onnx.data\)" $ORTQUAL convert "$X/llama_like_op18.onnx" \
    -o "$T/ext/fast.onnx" --flash --inputs "$L/inputs_000.npz" --expected "$L/outputs_000.npz"
[ -s "$T/ext/fast.onnx.data" ] && ok "fast.onnx.data written" || bad "no fast.onnx.data"
structure "$T/ext/fast.onnx" 1 1 && ok "external: 1 Attention-24 node, causal" || bad "external structure"
expect 0 "verdict: PASSED" $ORTQUAL validate --model "$T/ext/fast.onnx" --inputs "$L/inputs_*.npz" \
    --expected "$L/outputs_*.npz" --no-plots --outdir "$T/ext/v"
rm "$T/ext/fast.onnx"
expect 2 "fast.onnx.data: exists \(not overwritten\)" $ORTQUAL convert "$X/llama_like_op18.onnx" -o "$T/ext/fast.onnx" --flash
[ ! -e "$T/ext/fast.onnx" ] && ok "nothing written beside an existing data file" || bad "fast.onnx written"
# a data file that does not hold the tensors: refused before any work, naming file and tensor
cp "$X/llama_like_op18.onnx" "$T/ext/short.onnx"; head -c 1000 "$X/llama_like_op18.onnx.data" > "$T/ext/llama_like_op18.onnx.data"
expect 2 "short.onnx: initializer '[^']+': external data $T/ext/llama_like_op18.onnx.data holds 1000 bytes, the tensor needs bytes" \
    $ORTQUAL convert "$T/ext/short.onnx" -o "$T/ext/s.onnx" --flash
[ ! -e "$T/ext/s.onnx" ] && [ ! -e "$T/ext/s.onnx.data" ] && ok "nothing written for a short data file" || bad "s.onnx written"

# a non-in-place conversion whose OUT.onnx.data is the input's data file (its location renamed to
# it, or an -o chosen beside it) would write the new weights under the input: refused, exit 2,
# even with --force, and the input pair still converts; converting in place replaces the pair
mkdir -p "$T/dup" "$T/dup2" "$T/inplace"
$PY - "$X/llama_like_op18.onnx" "$T/dup/llama_like_op18.onnx" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d.replace(b"llama_like_op18.onnx.data", b"llama_like_op19.onnx.data"))
PY
cp "$X/llama_like_op18.onnx.data" "$T/dup/llama_like_op19.onnx.data"
refused "^ortqual convert: $T/dup/llama_like_op19.onnx.data is the input's external data file; writing over it" \
    $ORTQUAL convert "$T/dup/llama_like_op18.onnx" -o "$T/dup/llama_like_op19.onnx" --force --flash
cp "$X/llama_like_op18.onnx" "$T/dup2/m.onnx"; cp "$X/llama_like_op18.onnx.data" "$T/dup2/"
refused "^ortqual convert: $T/dup2/llama_like_op18.onnx.data is the input's external data file" \
    $ORTQUAL convert "$T/dup2/m.onnx" -o "$T/dup2/llama_like_op18.onnx" --force --flash
refused "^ortqual convert: $T/dup2/llama_like_op18.onnx.data is the input's external data file" \
    $ORTQUAL convert "$T/dup2/m.onnx" -o "$T/dup2/llama_like_op18.onnx.data" --force --flash
# (nor may OUT.onnx.data be the input model itself, here named m.onnx.data)
cp "$X/llama_like_op18.onnx" "$T/dup2/m.onnx.data"
refused "^ortqual convert: $T/dup2/m.onnx.data is the input model; nothing written" \
    $ORTQUAL convert "$T/dup2/m.onnx.data" -o "$T/dup2/m.onnx" --force --flash
cmp -s "$T/dup2/m.onnx.data" "$X/llama_like_op18.onnx" && ok "the input model is not written over" ||
    bad "the input model m.onnx.data changed"
if cmp -s "$T/dup/llama_like_op19.onnx.data" "$X/llama_like_op18.onnx.data" &&
    cmp -s "$T/dup2/llama_like_op18.onnx.data" "$X/llama_like_op18.onnx.data" &&
    [ ! -e "$T/dup/llama_like_op19.onnx" ] && [ ! -e "$T/dup2/llama_like_op18.onnx" ]; then
    ok "the input's data file is not written over"
else bad "the input's data file changed, or a model was written: $(ls "$T/dup" "$T/dup2")"; fi
expect 0 "written: $T/dup/o.onnx" $ORTQUAL convert "$T/dup/llama_like_op18.onnx" -o "$T/dup/o.onnx" --flash \
    --inputs "$L/inputs_000.npz" --expected "$L/outputs_000.npz"
cp "$X/llama_like_op18.onnx" "$X/llama_like_op18.onnx.data" "$T/inplace/"
expect 0 "written: $T/inplace/llama_like_op18.onnx \(weights in $T/inplace/llama_like_op18.onnx.data\)" \
    $ORTQUAL convert "$T/inplace/llama_like_op18.onnx" -o "$T/inplace/llama_like_op18.onnx" --force --flash

# a model whose Attention computes in float16 already (an earlier --flash) is judged at fp16's
# tolerance when converted again, asked for float16 or not (--fuse alone failed it at fp32's)
mkdir -p "$T/again"
expect 0 "written: " $ORTQUAL convert "$X/llama_like_op18.onnx" -o "$T/again/f16.onnx" --flash \
    --inputs "$L/inputs_000.npz" --expected "$L/outputs_000.npz"
expect 0 "batch 0 vs expected +logits: PASS .*\(rtol=0.01 atol=0.004\)" $ORTQUAL convert "$T/again/f16.onnx" \
    -o "$T/again/fused.onnx" --fuse --inputs "$L/inputs_000.npz" --expected "$L/outputs_000.npz"

# NaN in --expected: the side that holds it is named, and max_abs is not the 0 of no finite pair
$PY - "$TX/outputs_000.npz" "$T/ex_nan.npz" <<'PY'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["out"] = np.full_like(z["out"], np.nan); np.savez(sys.argv[2], **z)
PY
$ORTQUAL convert "$TX/tx_encoder_op18.onnx" -o "$T/nan.onnx" --fuse --mask-to-seqlen --inputs "$TX/inputs_000.npz" \
    --expected "$T/ex_nan.npz" >"$T/nan.out" 2>"$T/nan.err"
rc=$?
if [ "$rc" = 1 ] && grep -qE "vs expected +out: FAIL valid=264/504 max_abs=nan .* EXPECTED nan=264 inf=0" "$T/nan.out" &&
    grep -q "for scale: max_abs=nan" "$T/nan.out" && grep -q "EXPECTED nan=264" "$T/nan.err" &&
    ! grep -q "REFERENCE nan" "$T/nan.out" "$T/nan.err"; then
    ok "NaN in --expected: EXPECTED nan=264, max_abs=nan"
else bad "NaN in --expected: exit $rc: $(cat "$T/nan.out" "$T/nan.err")"; fi

report
