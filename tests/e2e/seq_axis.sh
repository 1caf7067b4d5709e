#!/usr/bin/env bash
# The mask's axes in a static output whose heads equal the padded length ([B,H,L,D] with H = L
# = 4): ortqual's own static export says which axis is the sequence (ONNX denotations), so a wrong
# valid element fails and the export's own run passes; the same model without denotations is
# refused (exit 2, one line naming the axes and the fix) instead of having its heads axis masked
# (a wrong valid value was "reported, not judged": PASSED); --seq-axis says which, and a bad one
# is refused in one line (3b: or, an output's sizes unknown, fails the configuration as it runs,
# in the tool's words). convert's own check tells the axes by the same rule (6), and so does
# the check that the inputs' valid positions are finite (7).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q="$ORTQUAL"
PY=/usr/bin/python3
cd "$T" || exit 1

# only_error_json DIR: the refused run left error.json and nothing else
only_error_json() {
    local left
    left=$(cd "$1" 2>/dev/null && ls -A | tr '\n' ' ')
    [ "$left" = "error.json " ] && ok "$1 holds only error.json" || bad "$1 holds '$left', expected error.json only"
}

# in.npz: query, key, value [2,4,4,2] and mask [2,4] (lengths 3 and 2); OUT.npz: the exact
# attention, plus DELTA at [0,3,0,1] (head 3, position 0 of event 0: valid) when given
make_io() {
    $PY - "$@" <<'PY'
import math, struct, sys, zipfile
out, delta = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
B, H, L, D, lens = 2, 4, 4, 2, (3, 2)
def npy(shape, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d," % s for s in shape)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<%df" % len(vals), *vals)
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
q, k, v = ([f32(math.sin(s * 7.1 + i * 1.3)) for i in range(B * H * L * D)] for s in (1, 2, 3))
at = lambda t, b, h, l, d: t[((b * H + h) * L + l) * D + d]
y = []
for b in range(B):
    for h in range(H):
        for i in range(L):
            if i >= lens[b]:
                y += [0.0] * D
                continue
            s = [sum(at(q, b, h, i, d) * at(k, b, h, j, d) for d in range(D)) / math.sqrt(D) for j in range(lens[b])]
            e = [math.exp(x - max(s)) for x in s]
            y += [sum(e[j] / sum(e) * at(v, b, h, j, d) for j in range(lens[b])) for d in range(D)]
y[((0 * H + 3) * L + 0) * D + 1] += delta
with zipfile.ZipFile("in.npz", "w") as z:
    for n, t in (("query", q), ("key", k), ("value", v)):
        z.writestr(n + ".npy", npy((B, H, L, D), t))
    z.writestr("mask.npy", npy((B, L), [1.0 if l < lens[b] else 0.0 for b in range(B) for l in range(L)]))
with zipfile.ZipFile(out, "w") as z:
    z.writestr("output.npy", npy((B, H, L, D), y))
PY
}
make_io bad.npz 0.5 && make_io exact.npz || fail "writing the inputs"
"$Q" export sdpa --format decomposed --heads 4 --head-dim 2 --static 2,4 -o st2.onnx >/dev/null || fail "export"
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/strip_denotations.py" st2.onnx plain.onnx || fail "strip_denotations"
FAILS="output output: FAIL valid=40/64 .*worst \[0,3,0,1\] \(event 0 of in\.npz\) got 0.131"

# 1. ortqual's static export: the axes as its denotations say them (inspect shows them), so the
#    +0.5 at a valid element fails validate and replay (both said PASSED), the exact values pass
expect 0 "output +output +float32 +\[2 \(DATA_BATCH\), 4, 4 \(DATA_TIME\), 2\]" "$Q" inspect st2.onnx
expect 1 "$FAILS" "$Q" validate --model st2.onnx --inputs in.npz --expected bad.npz --outdir v_bad --no-plots
expect 1 "$FAILS" "$Q" replay --model st2.onnx --inputs in.npz --expected bad.npz --outdir r_bad
expect 0 "verdict: PASSED" "$Q" validate --model st2.onnx --inputs in.npz --expected exact.npz --outdir v_ok --no-plots

# 2. and its own static run judges its own output right (pad_nonzero on the heads axis: FAILED)
expect 0 "verdict: PASSED" "$Q" validate --export sdpa --static --configs ref:sdpa:fp64,cpu:decomposed:fp32 \
    --heads 4 --head-dim 2 --max-len 4 --pad-bin-size 4 --length-policy 'uniform 1 4' --num-events 2 --batch-size 2 \
    --no-cache --no-plots --outdir static

# 3. the same model without denotations: sizes alone cannot tell the heads from the sequence,
#    refused before anything runs, naming the axes and the fix (validate and replay, with the
#    expected outputs or against ORT on CPU)
AMBIGUOUS="^ortqual (validate|replay): plain.onnx: output 'output' shape \[2,4,4,2\]: axes 1 and 2 both have the mask's padded length 4 and the model names neither: say which with --seq-axis output=1 or output=2, or export with named dynamic axes"
one_line 2 "$AMBIGUOUS" "$Q" validate --model plain.onnx --inputs in.npz --expected bad.npz --outdir p_v --no-plots
only_error_json p_v
one_line 2 "$AMBIGUOUS" "$Q" replay --model plain.onnx --inputs in.npz --expected bad.npz --outdir p_r
only_error_json p_r
# against ORT CPU of another build (one build on both sides is refused as no comparison)
need_ort130
one_line 2 "$AMBIGUOUS" "$Q" replay --model plain.onnx --inputs in.npz --ort-lib "$ORT130" --reference-ort-lib "$OQ_ORT_LIB" --outdir p_cpu
# 3b. ... and with its output's sizes unknown ("?"), told only as it runs, by the isolated worker:
#     its reason names the tool's option in the progress line, the verdict table, the closing line
#     and summary.json (the worker wrote the library's "say which with seq_axes output=1")
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/unknown_dims.py" plain.onnx plain_q.onnx || fail "unknown_dims"
"$Q" replay --model plain_q.onnx --inputs in.npz --ort-lib "$ORT130" --reference-ort-lib "$OQ_ORT_LIB" \
    --outdir p_q >p_q.log 2>&1
rc=$?
RUNTIME="plain_q.onnx: output 'output' shape \[2,4,4,2\]: axes 1 and 2 both have the mask's padded length 4 and the model names neither: say which with --seq-axis output=1 or output=2"
[ "$rc" = 3 ] && [ "$(grep -cE "$RUNTIME" p_q.log)" = 3 ] && ! grep -q "seq_axes" p_q.log &&
    ok "the worker's reason in the tool's words (exit $rc)" || bad "the worker's reason: exit $rc: $(cat p_q.log)"
grep -qE "\"reason\": \"$RUNTIME" p_q/summary.json && ! grep -q "seq_axes" p_q/summary.json &&
    ok "summary.json: the worker's reason in the tool's words" ||
    bad "summary.json: the worker's reason: $(grep -o '"reason": "plain_q[^"]*"' p_q/summary.json)"

# 4. --seq-axis says which: the wrong value fails, the exact ones pass; none: every element valid
expect 1 "$FAILS" "$Q" validate --model plain.onnx --inputs in.npz --expected bad.npz --seq-axis output=2 \
    --outdir s_bad --no-plots
expect 1 "$FAILS" "$Q" replay --model plain.onnx --inputs in.npz --expected bad.npz --seq-axis output=2 --outdir s_rbad
expect 0 "verdict: PASSED" "$Q" validate --model plain.onnx --inputs in.npz --expected exact.npz --seq-axis output=2 \
    --outdir s_ok --no-plots
expect 0 "verdict: PASSED" "$Q" replay --model plain.onnx --inputs in.npz --expected exact.npz --seq-axis output=2 \
    --outdir s_rok
expect 1 "output output: FAIL valid=64/64 .*no padding \(every element valid\)" "$Q" validate --model plain.onnx \
    --inputs in.npz --expected bad.npz --seq-axis output=none --outdir s_none --no-plots
# each batch record says the axes masked and what decided them (its denotations, --seq-axis;
# none: no keys), and a merge of shards keeps them
masked() { # masked DIR 'BATCH SEQ BY' or 'none': the padding of config 1's batch 0 output 0
    got=$($PY -c 'import json, sys; p = json.load(open(sys.argv[1]))["configs"][1]["batches"][0]["outputs"][0]["padding"]
print(" ".join(str(p[k]) for k in ("batch_axis", "seq_axis", "masked_by")) if "masked_by" in p else "none")' "$1/summary.json")
    [ "$got" = "$2" ] && ok "$1: masked $2" || bad "$1: masked $got, not $2"
}
masked s_ok "0 2 seq_axes"
masked s_none none
masked v_ok "0 2 denotations"
SH=(validate --model st2.onnx --inputs in.npz --expected exact.npz --configs expected,cpu:model:fp32 --no-plots --outdir m_sh)
expect 0 "prepared 1 shard" "$Q" "${SH[@]}" --prepare-shards 1
expect 0 "shard 0 of 1 done" "$Q" "${SH[@]}" --shard 0/1
expect 0 "PASSED" "$Q" merge --no-plots m_sh
masked m_sh "0 2 denotations"
#    the batch axis said with it (what a sequence-first output needs: y=0,batch=1) reads the same
expect 1 "$FAILS" "$Q" validate --model plain.onnx --inputs in.npz --expected bad.npz --seq-axis output=2,batch=0 \
    --outdir s_batch --no-plots
expect 1 "$FAILS" "$Q" replay --model plain.onnx --inputs in.npz --expected bad.npz --seq-axis output=2,batch=0 \
    --outdir s_rbatch

# 5. a --seq-axis that cannot be: refused in one line before anything runs
V=(validate --model plain.onnx --inputs in.npz --expected exact.npz --no-plots)
one_line 2 "^ortqual validate: --seq-axis y=2: plain.onnx has no output 'y' \(its outputs: output\)$" \
    "$Q" "${V[@]}" --seq-axis y=2 --outdir o1
only_error_json o1
one_line 2 "^ortqual validate: --seq-axis output=4: output 'output' has 4 axes \(0 to 3\)$" \
    "$Q" "${V[@]}" --seq-axis output=4 --outdir o2
one_line 2 "^ortqual validate: --seq-axis output=0: that is the batch axis of output 'output'" \
    "$Q" "${V[@]}" --seq-axis output=0 --outdir o3
one_line 2 "^ortqual validate: --seq-axis: output 'output' is given twice$" \
    "$Q" "${V[@]}" --seq-axis output=2 --seq-axis output=none --outdir o4
one_line 2 "^ortqual validate: --seq-axis output=2: the model has no mask input \(or --no-mask\)" \
    "$Q" "${V[@]}" --seq-axis output=2 --no-mask --outdir o5
one_line 2 "^ortqual validate: --seq-axis output=0,batch=0: the batch and sequence axes are one$" \
    "$Q" "${V[@]}" --seq-axis output=0,batch=0 --outdir o8
one_line 2 "^ortqual validate: --seq-axis output=2,batch=4: output 'output' has 4 axes \(0 to 3\)$" \
    "$Q" "${V[@]}" --seq-axis output=2,batch=4 --outdir o9
one_line 2 "^ortqual validate: plain.onnx: output 'output' shape \[2,4,4,2\]: --seq-axis output=2: its batch axis 1 has size 4, not the batch's 2 events$" \
    "$Q" "${V[@]}" --seq-axis output=2,batch=1 --outdir o10
for arg in output=x output= =2 output=-1 output output=2,batch=x output=none,batch=1 =2,batch=0 output=1,batch=-1; do
    one_line 2 "^ortqual replay: --seq-axis '$arg': want OUTPUT=AXIS \(an axis number from 0, or none\), or OUTPUT=AXIS,batch=AXIS$" \
        "$Q" replay --model plain.onnx --inputs in.npz --seq-axis "$arg" --outdir o6
done
[ ! -e o6 ] && ok "a malformed --seq-axis made no folder" || bad "o6 was made"
one_line 2 "^ortqual validate: plain.onnx: output 'output' shape \[2,4,4,2\]: --seq-axis output=3: axis 3 has size 2, not the mask's padded length 4$" \
    "$Q" "${V[@]}" --seq-axis output=3 --outdir o7
only_error_json o7

# 6. convert's own check tells the axes by the same rule. It took axis 1 (the heads, of the
#    fixed size 4 like the mask's) for the sequence: the +0.5 was set apart as padding, and the
#    conversion PASSED and was written
CFAIL="in.npz, output 'output' differs from the expected outputs in bad.npz, and the original model's does too .* output: FAIL valid=40/64 .*worst \[0,3,0,1\]"
C=(--flash --inputs in.npz --expected)
expect 1 "$CFAIL" "$Q" convert st2.onnx -o c_bad.onnx "${C[@]}" bad.npz
[ ! -e c_bad.onnx ] && ok "a failed check wrote nothing" || bad "c_bad.onnx was written"
expect 0 "written: c_ok.onnx" "$Q" convert st2.onnx -o c_ok.onnx "${C[@]}" exact.npz
one_line 2 "^ortqual convert: plain.onnx: output 'output' shape \[2,4,4,2\]: axes 1 and 2 both have the mask's padded length 4 and the model names neither: say which with --seq-axis output=1 or output=2" \
    "$Q" convert plain.onnx -o c_amb.onnx "${C[@]}" bad.npz
[ ! -e c_amb.onnx ] && ok "a refused check wrote nothing" || bad "c_amb.onnx was written"
expect 1 "$CFAIL" "$Q" convert plain.onnx -o c_sbad.onnx --seq-axis output=2 "${C[@]}" bad.npz
expect 0 "written: c_sok.onnx" "$Q" convert plain.onnx -o c_sok.onnx --seq-axis output=2 "${C[@]}" exact.npz
one_line 2 "^ortqual convert: --seq-axis y=2: plain.onnx has no output 'y' \(its outputs: output\)$" \
    "$Q" convert plain.onnx -o c_y.onnx --seq-axis y=2 "${C[@]}" exact.npz
one_line 2 "^ortqual convert: --seq-axis '=2': want OUTPUT=AXIS" "$Q" convert plain.onnx -o c_y.onnx --seq-axis =2
one_line 2 "^ortqual convert: --plan and --seq-axis contradict" "$Q" convert plain.onnx --flash --plan --seq-axis output=2

# 7. the inputs' finite check tells their mask axes by the same rule. It took axis 1 (the heads,
#    of size L) for the sequence: a NaN at a valid position of head 2 (event 1 is 2 long: it read
#    "positions" 0 and 1, which were heads 0 and 1) was not seen, and one in padding (event 0,
#    head 1, position 3) was refused as "event 0 position 1". Without denotations every element
#    is read (two candidate axes are not guessed between), and the message says why.
$PY - <<'PY' || fail "writing the NaN inputs"
import numpy as np
z = dict(np.load("in.npz"))
for name, at in (("nan_valid", (1, 2, 0, 1)), ("nan_pad", (0, 1, 3, 0))):
    q = z["query"].copy()
    q[at] = np.nan
    np.savez(name + ".npz", **dict(z, query=q))
PY
NANV="^ortqual (validate|replay): nan_valid.npz: input 'query': event 1 position 0 \(element 5 of it\) is NaN: valid positions must be finite$"
one_line 2 "$NANV" "$Q" validate --model st2.onnx --inputs nan_valid.npz --expected exact.npz --outdir n_v --no-plots
only_error_json n_v
one_line 2 "$NANV" "$Q" replay --model st2.onnx --inputs nan_valid.npz --expected exact.npz --outdir n_r
one_line 2 "^ortqual convert: nan_valid.npz: input 'query': event 1 position 0 \(element 5 of it\)" \
    "$Q" convert st2.onnx -o n_c.onnx --flash --inputs nan_valid.npz --expected exact.npz
expect 0 "verdict: PASSED" "$Q" validate --model st2.onnx --inputs nan_pad.npz --expected exact.npz --outdir n_p --no-plots
one_line 2 "^ortqual validate: nan_pad.npz: input 'query': element 14 is NaN: inputs must be finite \(padding included, as its positions cannot be told: plain.onnx: input 'query' shape \[2,4,4,2\]: axes 1 and 2 both have the mask's padded length 4 and the model names neither; name its axes like the mask's, or denote them DATA_BATCH and DATA_TIME\)$" \
    "$Q" validate --model plain.onnx --inputs nan_pad.npz --expected exact.npz --seq-axis output=2 --outdir n_pp --no-plots
report
