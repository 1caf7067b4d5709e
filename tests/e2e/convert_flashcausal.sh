#!/usr/bin/env bash
# convert --flash on PyTorch's causal mask given as a constant lower triangle beside key padding
# (two Where masks, or a 0/-inf additive one beside a Where): read as causal, as a Trilu is, so
# the fused Attention becomes is_causal = 1 with no attn_mask (the flash-eligible form), checked
# against the original by convert's check; a triangle of 32 cut to the sequence by Slices too.
# Refused, one line each: an element off the triangle (its position), a Slice at an offset (the
# node). Three Where masks fuse into one And and pass the check. Models: lib/author_models.py.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
(cd "$OQ_SOURCE_DIR/tests/e2e/lib" && $PY author_models.py "$T") || fail "author_models.py"

# main: "attn_mask 'attn_keep_both': 'causal' is a constant with different values", exit 1, nothing written
flash() { # MODEL [ARG...]: written under --flash, is_causal = 1 alone, every generated batch PASS
    # (convert --json), and inspect --json of the output says it: one Attention, is_causal=1, Q K V only
    $Q convert $1.onnx -o $1_f.onnx --flash --seq-axis y=2,batch=0 --json "${@:2}" >$1.json 2>$1.err
    $Q inspect --json $1_f.onnx >$1_i.json 2>>$1.err
    $PY - $1.json $1_i.json <<'PYEOF' && ok "$1: is_causal = 1 alone, checked, said by inspect" || bad "$1: $(cat $1.err)"
import json, sys
d, m = (json.load(open(f)) for f in sys.argv[1:])
s = [x for x in d["steps"] if x["pass"] == "mask-to-seqlen"]
assert len(s) == 1 and s[0]["action"] == "rewritten" and s[0]["detail"].startswith("attn_mask '") and \
    "is causal and the key padding of input 'mask': is_causal = 1 alone" in s[0]["detail"], s
assert d["checked"] and d["passed"] and d["refused"] == 0 and d["fused"] == 1 and len(d["checks"]) == 2, d
assert all(c["vs_reference"]["passed"] is True for c in d["checks"]), d["checks"]
ops = {o["op_type"]: o["count"] for o in m["operators"]}
a = [x for x in m["attention"] if x["kind"] == "Attention"]
assert ops.get("Attention") == 1 and "Softmax" not in ops and "And" not in ops, ops
assert len(a) == 1 and "is_causal=1" in a[0]["attributes"] and a[0]["detail"] == "inputs: Q K V", a
PYEOF
}
flash two_wheres      # Where(causal, s, -inf), Where(keys, s, -inf); causal a bool [4, 4]
flash two_fills       # masked_fill's order: its condition the triangle's negation
flash causal_add      # s + causal_add (0/-inf [1, 1, 4, 4]), then Where(keys, s, -inf)
flash three_causal    # three Where masks: causal, keys, and masked_fill of the triangle's negation
flash sliced_causal   # a [1, 1, 32, 32] triangle cut to L (dynamic; 16 and 7 generated) by two Slices
flash kiai_causal --freeze causal # the triangle a graph input with a default, declared a constant
# in float32 (--fuse --mask-to-seqlen, no fp16 cast) is_causal is the triangle's function: a tenth of
# fp32's tolerance (the outputs match bit for bit: max_abs=0 on the dev VM)
for m in two_wheres sliced_causal; do
    expect 0 "batch 1 vs reference +y: PASS" $Q convert $m.onnx -o ${m}_32.onnx --fuse --mask-to-seqlen \
        --seq-axis y=2,batch=0 --tolerance rtol=1e-5,atol=1e-6
done
# refused, one line naming the element or the node; exit 1, nothing written
refused() { # MODEL REASON: the plan's line, exit 1, nothing written
    expect 1 "mask-to-seqlen +refused +attention: attn_mask '[^']+': $2" \
        $Q convert $1.onnx -o $1_r.onnx --flash --seq-axis y=2,batch=0
    [ -e $1_r.onnx ] && bad "$1: $1_r.onnx written" || ok "$1: nothing written"
}
refused near_causal "'near' is a constant \[4, 4\] that is not a causal triangle \(one value on and below the diagonal, another above\): element \[1, 3\] is 1 where the others above the diagonal are 0"
refused three_wheres "'window' is a constant \[4, 4\] that is not a causal triangle .*: element \[3, 0\] is 0 where the others on and below the diagonal are 1"
refused offset_causal "Slice 'Slice_rows' cuts mask axis 2 at an offset or a step \(only a block from position 0, the upper-left one of a causal triangle, is read\)"
refused fixed_causal "And '[^']+' combines mask operands whose axes do not line up: axis 3 is L in one and 4 in the other"
refused kiai_causal "'causal' is a graph input with a default \(the initializer of its name\): is_causal would fix that value and ignore a mask fed for it; if it is a constant, not a value to feed, --freeze 'causal' makes it one"
refused fixed_causal1 "the causal mask is 4 positions square, cannot show that it is the sequence length L of Q and K"
# --allow-refused writes the fused model with its bool attn_mask, checked
expect 0 "batch 1 vs reference +y: PASS" $Q convert near_causal.onnx -o near_f.onnx --flash --allow-refused --seq-axis y=2,batch=0
report
