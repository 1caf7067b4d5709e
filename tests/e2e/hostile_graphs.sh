#!/usr/bin/env bash
# QA round 8a's user models (tests/e2e/lib/hostile_graphs.py writes them), each failing on the
# code before 2026-12-07:
# 1. --seq-axis without batch= where axes 0, 1 and 2 have the batch's size (a static stacked
#    KV cache [2, B, H, L, D], B = H = 2): refused naming the candidates, in validate and in
#    convert's check (axis 0, the K/V stack, was taken as the batch and a wrong value of a valid
#    element PASSED); the sizes' refusal advises batch= too; batch=1 FAILs the wrong value.
# 2. validate --model --force refused by a batch check (ids out of the table, a bad --seq-axis):
#    the earlier result stays as it was, byte for byte, with no error.json beside it (its
#    summary, report and csv were removed, and error.json written beside its batches).
# 3. external data shorter than declared: validate refuses it before any work, exit 2, as convert
#    does (it was exit 3 with ORT's raw message and an ERROR summary); inspect warns.
# 4. a value defined twice (initializer + Constant node; two nodes): one line naming the value
#    and both definitions, exit 2, in inspect, convert and validate (inspect reported the scale
#    ORT does not use; convert fused it).
# 5. a cycle: one line naming the nodes on it, said to be the model's own (inspect was silent,
#    convert said "the converted graph has a cycle").
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
"$PY" "$OQ_SOURCE_DIR/tests/e2e/lib/hostile_graphs.py" "$T" || fail "hostile_graphs.py"

# 1. the batch axis of a stacked KV output
expect 2 "present=3,batch=0, present=3,batch=1 or present=3,batch=2" \
    "$Q" validate --model kv.onnx --inputs kv_io.npz --outdir v1 --seq-axis present=3
expect 2 "axes 0, 1 and 2 all have the batch's size 2" \
    "$Q" convert kv.onnx -o kv_c.onnx --fuse --inputs kv_in.npz --expected kv_exp.npz --seq-axis present=3
[ -e kv_c.onnx ] && bad "convert wrote kv_c.onnx" || ok "convert wrote nothing"
expect 2 "say --seq-axis present=3 \(with ,batch=AXIS added: axes 0, 1 and 2 all have" \
    "$Q" validate --model kv.onnx --inputs kv_io.npz --outdir v0
expect 1 "verdict: FAILED" "$Q" validate --model kv.onnx --inputs kv_io.npz --outdir v2 --seq-axis present=3,batch=1

# 2. a refused --force run leaves the earlier result as it was
expect 0 "verdict: PASSED" "$Q" validate --model ids.onnx --inputs ids_io.npz --outdir out
(cd out && find . -type f | sort | xargs sha256sum) >before.txt
for refusal in "--inputs ids_bad.npz" "--inputs ids_io.npz --seq-axis y=2"; do
    # shellcheck disable=SC2086
    expect 2 "the earlier result in out is left as it was" "$Q" validate --model ids.onnx $refusal --outdir out --force
    (cd out && find . -type f | sort | xargs sha256sum) >after.txt
    cmp -s before.txt after.txt && ok "$refusal: out/ as it was" || bad "$refusal: out/ changed: $(diff before.txt after.txt)"
    [ -z "$(ls -A out | grep -vxE 'summary.json|report.html|validate.csv|inputs_000.npz|expected_000.npz|plots')" ] &&
        ok "$refusal: nothing added" || bad "$refusal: out/ holds $(ls -A out | tr '\n' ' ')"
done

# 3. external data cut short
expect 2 "short.onnx: initializer 'w': external data ./short.bin holds 40 bytes, the tensor needs bytes 0..64$" \
    "$Q" validate --model short.onnx --inputs ext_io.npz --outdir v3
[ -e v3/summary.json ] && bad "validate wrote a summary for short.onnx" || ok "no summary for short.onnx"
one_line 2 "external data ./short.bin holds 40 bytes" "$Q" convert short.onnx -o short_c.onnx --fuse
expect 0 "warning: short.onnx: initializer 'w': external data ./short.bin holds 40 bytes" "$Q" inspect short.onnx

# 4. a value defined twice, 5. a cycle: every command that reads the model
TWICE="value 'c' is defined twice, by an initializer and by node 'Constant_c' \(Constant\)"
PRODUCERS="value 'a' is defined twice, by node 'relu_a' \(Relu\) and by node 'neg_a' \(Neg\)"
CYCLE="the graph has a cycle \(in the model as given\): node 'add_a' \(Add\) reads 'b' of node 'relu_b' \(Relu\), which reads 'a' of node 'add_a' \(Add\)$"
for c in "dupscale.onnx:$TWICE" "dupnodes.onnx:$PRODUCERS" "cycle.onnx:$CYCLE"; do
    m=${c%%:*} pat=${c#*:}
    one_line 2 "^ortqual inspect: $m: $pat" "$Q" inspect "$m"
    one_line 2 "^ortqual convert: $m: $pat" "$Q" convert "$m" -o c.onnx --fuse
    one_line 2 "^ortqual convert: $m: $pat" "$Q" convert "$m" --plan --fuse
    expect 2 "ortqual validate: $m: $pat" "$Q" validate --model "$m" --outdir "v_$m"
done
report
