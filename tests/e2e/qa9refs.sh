#!/usr/bin/env bash
# convert's and validate's errors that blamed the wrong thing, after QA round 9a (defects 5, 6 and
# 9), on the models of lib/qa9refs_models.py. On main's code (5a76c8aa) each case here failed:
#  5  an opset-23 broadcast mask with no value_info: both stand-in references convert built were
#     invalid (Add of the bool mask, a tensor of type 0), and ORT was blamed: "ORT runs neither"
#  6  a KV cache without --inputs: past, new and total generated alone broke total = past + new,
#     and convert said "ORT refuses the original model" (exit 3) of a valid model
#  9  two bool masks: "(no table it indexes)", the reason for integer ids; a float input that is
#     itself an additive mask read as 1/0: "empty event", "the additive mask adds 1"
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
(cd "$OQ_SOURCE_DIR/tests/e2e/lib" && $PY qa9refs_models.py "$T") || fail "qa9refs_models.py"

# 5: the stand-ins read the mask's inferred type (bool): each conversion is checked and written
for p in lower:"mask expanded" expand-mask:lowered mask-to-seqlen:lowered; do
    expect 0 "check: reference = original, ${p#*:} \(ORT refused it: node 'att': inconsistent q_sequence_length" \
        $Q convert sq.onnx -o "sq_${p%%:*}.onnx" --"${p%%:*}"
done
# ... a mask whose type nothing tells is neither added nor selected on a guess: --lower refuses
# it, and the stand-in that would lower it is said to be ortqual's, not blamed on ORT
expect 1 "lower +refused +att: attn_mask 'keys' has no known type \(neither declared nor inferred\)" \
    $Q convert sqx.onnx -o sqx_low.onnx --lower
expect 3 "^ortqual convert: sqx\.onnx: ORT refuses the original \(.*\) and its lowered form cannot be made \(attn_mask 'keys' has no known type" \
    $Q convert sqx.onnx -o sqx_exp.onnx --expand-mask
[ ! -e sqx_low.onnx ] && [ ! -e sqx_exp.onnx ] && ok "sqx: nothing written" || bad "sqx: written"

# 6: generated sizes that break the model's total = past + new: exit 2, one line, --inputs asked for
one_line 2 "^ortqual convert: kv\.onnx: generated inputs cannot fit the model: Concat 'cat_k' makes 'present_key' of total = past \+ new along axis 2, .*\(total 16, past 4, new 4\): give --inputs for 'q', 'k', 'v', 'past_key', 'past_value', 'mask'$" \
    $Q convert kv.onnx -o kv_gen.onnx --fuse --expand-mask
[ ! -e kv_gen.onnx ] && ok "kv: nothing written" || bad "kv_gen.onnx written"
# ... where no declared size states it, ORT's failure on the generated inputs is said to be theirs
one_line 2 "^ortqual convert: kvy\.onnx: ORT fails the original on generated inputs \(node 'fill': .*\): generated batches give each named dim a size of its own, which this model may not take: give --inputs$" \
    $Q convert kvy.onnx -o kvy_gen.onnx --opset 19
expect 0 "^written: kv_in\.onnx" $Q convert kv.onnx -o kv_in.onnx --fuse --expand-mask --inputs kv_in.npz

# 9: a bool input is a mask, and the reason says so
one_line 2 "^ortqual convert: dec\.onnx: cannot generate values for bool input 'tgt_mask' \(generated batches make one mask, and the model has 2 bool inputs\): give --inputs$" \
    $Q convert dec.onnx -o dec_fx.onnx --fuse --expand-mask
one_line 2 "^ortqual convert: dec\.onnx: cannot generate values for bool input 'src_mask' \(a second mask beside 'tgt_mask', the one generated batches pad\): give --inputs$" \
    $Q convert dec.onnx -o dec_fx.onnx --fuse --expand-mask --mask tgt_mask
# ... a float input that is itself an additive mask is said to be one, with --no-mask the way
one_line 2 "mask 'attention_mask': the mask holds only 0 and large negative values \(-1e\+09 at event 1, position 4\): it is itself an additive mask .*without a mask \(--no-mask\)$" \
    $Q validate --model fmask.onnx --inputs fmask_in.npz --expected fmask_exp.npz --outdir v1
one_line 2 "^ortqual convert: fmask_zero\.npz: mask 'attention_mask': the mask is 0 at every position: .*if it is an additive mask \(0 = keep\), .*\(--no-mask\)$" \
    $Q convert fmask.onnx -o fmask_exp.onnx --expand-mask --inputs fmask_zero.npz
expect 0 "verdict: PASSED" $Q validate --model fmask.onnx --inputs fmask_in.npz --expected fmask_exp.npz --outdir v3 --no-mask
expect 1 "mask-to-seqlen +refused +attention: attn_mask 'keys': the float input 'attention_mask' is added to the scores as it is: it is itself an additive mask .*\(--no-mask\)" \
    $Q convert fmask.onnx -o fmask16.onnx --flash
report
