#!/usr/bin/env bash
# Work inside If branches and Loop bodies (QA round 9a, defects 2 and 4; models from
# lib/subgraph_models.py and lib/if_model.py):
#  - an opset raise reads every subgraph's nodes with the top level's rules: an opset-12
#    Softmax(axis=1) in an else-branch is refused by name and branch (it was raised to 13 and
#    written once a check on batches that skip the branch passed), the last-axis one beside it
#    not; a raised branch no batch runs is said to be unchecked;
#  - inspect counts and lists what subgraphs hold, each said where (it said "attention nodes: 0");
#  - convert's attention passes refuse a chain inside a subgraph by name (--flash said "no
#    decomposed attention chain found" and wrote the model unchanged, exit 0);
#  - the Elu decomposition rewrites Elus in branches, nested ones included (they stayed Elu-22),
#    and the check says which batches ran each rewritten branch: none is not checked.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
(cd "$OQ_SOURCE_DIR/tests/e2e/lib" && $PY subgraph_models.py "$T" && $PY if_model.py "$T/if.onnx" "$T/if_in.npz") ||
    fail "subgraph_models.py / if_model.py"

# ops and attention of a model's --json, inspected: "OP=COUNT ..." and each attention's detail
summary() {
    $Q inspect --json "$1" | $PY -c '
import json, sys
m = json.load(sys.stdin)
print(" ".join("%s=%d" % (o["op_type"], o["count"]) for o in m["operators"]))
for a in m["attention"]: print(a["kind"], a["name"], a["detail"])
for w in m["warnings"]: print("warning:", w)'
}

# 1. the opset raise over a subgraph
expect 1 "cannot raise ai.onnx opset 12 to 13: Softmax changed meaning in opset 13 \(no longer flattens the input to 2-D\), node 'Softmax_z_e' inside If 'If_z' else_branch; nothing written" \
    $Q convert softmax12.onnx -o s13.onnx --opset 13 --inputs cond_true.npz
[ ! -e s13.onnx ] && ok "nothing written for the refused raise" || bad "s13.onnx written"
expect 1 "Softmax_z_e: cannot raise" $Q convert softmax12.onnx --plan --opset 13
# unnamed nodes are named by their outputs, nested places outer first
expect 1 "Softmax changed meaning in opset 13 \(no longer flattens the input to 2-D\), the node of 'n_s' inside If of 'z' then_branch, If of 'z_t' then_branch" \
    $Q convert unnamed.onnx --plan --opset 22
# a raise the table allows over a branch no batch takes: said, not passed by omission
expect 0 "check +note +If 'If_y' else_branch, which the raise to ai.onnx opset 23 changed, ran in no batch \('cond' is true in every one\): its nodes mean at the new opset what they meant \(the opset table\), unchecked" \
    $Q convert if.onnx -o if_23.onnx --opset 23 --inputs if_in.npz

# 2. inspect: what the branches and the Loop body hold
out=$(summary if.onnx)
grep -q "^Identity=1 If=1 MatMul=2 Mul=1 Softmax=1 Transpose=1$" <<<"$out" &&
    grep -q "^decomposed Softmax_p in If 'If_y' then_branch; MatMul 'MatMul_s' -> Mul -> Softmax 'Softmax_p' -> MatMul 'MatMul_y'; fusable: scale 0.3, no mask$" <<<"$out" &&
    grep -q "^warning: If 'If_y' else_branch: a subgraph of 1 node " <<<"$out" &&
    ok "inspect if.onnx: the then-branch's chain and operators" || bad "inspect if.onnx: $out"
out=$(summary loop_att.onnx)
grep -q "MatMul=2" <<<"$out" && grep -q "^decomposed Softmax_p in Loop 'Loop_y' body; .*fusable: scale 0.3" <<<"$out" &&
    ok "inspect loop_att.onnx: the body's chain" || bad "inspect loop_att.onnx: $out"
expect 0 "^attention nodes: 1$" $Q inspect loop_att.onnx

# 3. convert's attention passes refuse a chain inside a subgraph; nothing is written
expect 1 "fuse +refused +Softmax_p: attention chain inside If 'If_y' then_branch \(MatMul 'MatMul_s' .*\): convert rewrites no attention inside a subgraph" \
    $Q convert if.onnx -o if_flash.onnx --flash --inputs if_in.npz
expect 1 "fuse +refused +Softmax_p: attention chain inside Loop 'Loop_y' body" \
    $Q convert loop_att.onnx -o loop_flash.onnx --flash --inputs loop_in.npz
[ ! -e if_flash.onnx ] && [ ! -e loop_flash.onnx ] && ok "nothing written for --flash" || bad "a --flash output was written"
# an Attention node in a branch: listed where it is, refused by the passes that rewrite Attention
expect 0 "Attention 'Attention_y_t' \(heads 2, head dim 8\)
      in If 'If_y' then_branch; inputs: Q K V" $Q inspect att23.onnx
expect 1 "mask-to-seqlen +refused +Attention_y_t: Attention inside If 'If_y' then_branch: convert rewrites no attention inside a subgraph" \
    $Q convert att23.onnx --plan --mask-to-seqlen
expect 1 "attention-dtype +refused +Attention_y_t: Attention inside If 'If_y' then_branch" $Q convert att23.onnx --plan --attention-dtype fp16
expect 1 "pad-head-size +refused +Attention_y_t: Attention inside If 'If_y' then_branch" $Q convert att23.onnx --plan --pad-head-size
# an opset raise alone has nothing of attention to refuse: the body runs as before
expect 0 "written: .*loop_23\.onnx" $Q convert loop_att.onnx -o loop_23.onnx --opset 23 --inputs loop_in.npz

# 4. the Elu decomposition inside the branches (the nested If's too), checked on both branches
expect 0 "Elu_n_t: Elu \(alpha 1\) -> .*, inside If 'If_n' then_branch, inside If 'If_z' then_branch" \
    $Q convert elu_if.onnx -o elu22.onnx --opset 22 --inputs elu_true.npz elu_false.npz
out=$(summary elu22.onnx)
! grep -q "Elu=" <<<"$out" && grep -q "Where=4" <<<"$out" && ok "no Elu left, in any branch: $out" || bad "elu22.onnx: $out"
out=$($Q convert elu_if.onnx -o elu22b.onnx --opset 22 --inputs elu_true.npz elu_false.npz 2>&1)
grep -q "If 'If_z' else_branch, which decompose-elu rewrote, ran in 1 of 2 batches ('cond')" <<<"$out" &&
    grep -q "If 'If_z' then_branch, If 'If_n' then_branch, which decompose-elu rewrote: the check cannot show that a batch ran it" <<<"$out" &&
    grep -q "If 'If_z' then_branch, If 'If_n' else_branch, which the raise to ai.onnx opset 22 changed: the check cannot show" <<<"$out" &&
    ok "the check says which batches ran each rewritten branch" || bad "check notes: $out"
# batches that never take the else-branch do not check its rewrite: not green, nothing written
expect 1 "not checked: If 'If_z' else_branch, which decompose-elu rewrote, ran in no batch \('cond' is true in every one\)" \
    $Q convert elu_if.onnx -o elu22c.onnx --opset 22 --inputs elu_true.npz
[ ! -e elu22c.onnx ] && ok "nothing written unchecked" || bad "elu22c.onnx written"
report
