#!/usr/bin/env bash
# One precision for a model of yours, in validate's --model default and bench --model's rows:
# float16 when its attention computes in float16 (an Attention node after `convert --flash`, or
# a decomposed MatMul -> Softmax -> MatMul chain) or an output is float16, with the same reason
# on both. They disagreed: bench judged a --flash model (float32 I/O) at fp32 tolerances and
# failed it where validate passed it at fp16; validate judged a float16 model with decomposed
# attention at fp32 and failed it where bench passed it. Explicit --configs and --tolerance win.
# bfloat16 is bf16 on both (validate judged it at fp16's tolerances, bench at bf16's).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
Q="$ORTQUAL"
cd "$T" || exit 1
NODEV=(env ORTQUAL_TEST_DEVICE_ROOT="$T/nodev") # no CUDA: validate's default is expected,cpu
mkdir nodev
V=(--repeat 1 --no-plots)
B=(--iters 2 --warmup 1 --threads 1 --quiet)

# Attention alone, decomposed, unmasked, computing in float16: with float16 I/O (d16) and with
# float32 I/O (d16io32: Casts around the chain, no Attention node, no float16 output)
"$Q" export sdpa --format decomposed --mask none --attention-dtype float16 --io-dtype float16 -o d16.onnx >/dev/null &&
    "$Q" export sdpa --format decomposed --mask none --attention-dtype float16 -o d16io32.onnx >/dev/null ||
    fail "export"
# in16.npz / in32.npz: query, key, value [2,4,24,16] (the export's heads and head size), the
# same float16 values; out.npz: their attention in float64, saved as float32
$PY - <<'PY' || fail "writing the inputs"
import math, struct, zipfile
B, H, L, D = 2, 4, 24, 16
def npy(shape, vals, t):  # t: 'f2' (struct's 'e') or 'f4'
    hdr = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (t, "".join("%d," % s for s in shape))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    code = "e" if t == "f2" else "f"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<%d%s" % (len(vals), code), *vals)
f16 = lambda x: struct.unpack("<e", struct.pack("<e", x))[0]
q, k, v = ([f16(math.sin(s * 7.1 + i * 1.3)) for i in range(B * H * L * D)] for s in (1, 2, 3))
at = lambda t, b, h, l, d: t[((b * H + h) * L + l) * D + d]
y = []
for b in range(B):
    for h in range(H):
        for i in range(L):
            s = [sum(at(q, b, h, i, d) * at(k, b, h, j, d) for d in range(D)) / math.sqrt(D) for j in range(L)]
            e = [math.exp(x - max(s)) for x in s]
            y += [sum(e[j] / sum(e) * at(v, b, h, j, d) for j in range(L)) for d in range(D)]
for name, t in (("in16.npz", "f2"), ("in32.npz", "f4")):
    with zipfile.ZipFile(name, "w") as z:
        for n, x in (("query", q), ("key", k), ("value", v)):
            z.writestr(n + ".npy", npy((B, H, L, D), x, t))
with zipfile.ZipFile("out.npz", "w") as z:
    z.writestr("output.npy", npy((B, H, L, D), y, "f4"))
PY
# a --flash conversion of a PyTorch export: an Attention node in float16, float32 I/O
"$Q" convert "$F/hand_attention/hand_attention_op18.onnx" -o flash.onnx --flash >/dev/null 2>&1 || fail "convert --flash"
HI=(--inputs "$F/hand_attention/inputs_000.npz" --expected "$F/hand_attention/outputs_000.npz")

# the reason each prints: validate's in its default's note, bench's after its table
vwhy() { sed -n "s/^ortqual validate: --configs [^ ]* (--model's default here: \(.*\))$/\1/p" "$1"; }
bwhy() { sed -n "s/^ortqual bench: [^ ]* (--model's precision here: \(.*\))$/\1/p" "$1"; }

# 1. float16 I/O, decomposed attention in float16: validate took fp32 (max_abs 2e-3, FAILED)
DEC="decomposed attention \(Softmax '[^']+'\) computes in float16"
expect 0 "--configs expected,cpu:model:fp16 \(--model's default here: $DEC\)" "${NODEV[@]}" "$Q" validate \
    --model d16.onnx --inputs in16.npz --expected out.npz --outdir v16 "${V[@]}"
expect 0 "cpu:model:fp16 \(--model's precision here: $DEC\)" "$Q" bench --model d16.onnx --inputs in16.npz \
    --expected out.npz --outdir b16 "${B[@]}"

# 2. float32 I/O around the float16 chain: nothing but the chain says float16 (both took fp32)
expect 0 "--configs expected,cpu:model:fp16 \(--model's default here: $DEC\)" "${NODEV[@]}" "$Q" validate \
    --model d16io32.onnx --inputs in32.npz --expected out.npz --outdir v32 "${V[@]}"
"${NODEV[@]}" "$Q" validate --model d16io32.onnx --inputs in32.npz --expected out.npz --outdir v32b "${V[@]}" >v32b.log 2>&1
"$Q" bench --model d16io32.onnx --inputs in32.npz --expected out.npz --outdir b32 "${B[@]}" >b32.log 2>&1
[ "$?" = 0 ] && [ -n "$(bwhy b32.log)" ] && [ "$(bwhy b32.log)" = "$(vwhy v32b.log)" ] &&
    ok "the decomposed chain: bench and validate give one reason ($(bwhy b32.log))" ||
    bad "the decomposed chain: bench '$(bwhy b32.log)', validate '$(vwhy v32b.log)': $(tail -3 b32.log)"
[ "$($PY -c 'import json; r = json.load(open("b32/summary.json"))["results"][0]; print(r["variant"], r["status"], r["outputs"][0]["rtol"])')" = "cpu:model:fp16 ok 0.01" ] &&
    ok "bench's row: cpu:model:fp16, ok, at fp16's rtol" || bad "bench's row: $(cat b32/summary.json | head -c 600)"

# 3. convert --flash: bench took fp32 (row failed, rtol 1e-4) where validate passed it at fp16
"${NODEV[@]}" "$Q" validate --model flash.onnx "${HI[@]}" --outdir vf "${V[@]}" >vf.log 2>&1
rc=$?
"$Q" bench --model flash.onnx "${HI[@]}" --outdir bf "${B[@]}" >bf.log 2>&1
brc=$?
[ $rc = 0 ] && [ $brc = 0 ] && [ "$(bwhy bf.log)" = "$(vwhy vf.log)" ] && grep -qE "^Attention '[^']+' computes in float16$" <<<"$(bwhy bf.log)" &&
    ok "--flash: both pass at fp16, one reason ($(bwhy bf.log))" ||
    bad "--flash: validate exit $rc '$(vwhy vf.log)', bench exit $brc '$(bwhy bf.log)': $(tail -3 bf.log)"

# 4. what the user says wins: --tolerance on bench, --configs on validate (with the note)
expect 1 "output 'y': max abs err .* \(rtol 0.0001, atol 1e-05\)" "$Q" bench --model flash.onnx "${HI[@]}" \
    --tolerance fp32 --outdir bt "${B[@]}"
expect 1 "note: .*flash.onnx: Attention '[^']+' computes in float16; cpu:model:fp32 is judged with fp32 tolerances" \
    "$Q" validate --model flash.onnx "${HI[@]}" --configs expected,cpu:model:fp32 --outdir vc "${V[@]}"

# 5. a float32 model: fp32, no reason given
"$Q" bench --model "$F/hand_attention/hand_attention_op18.onnx" "${HI[@]}" --outdir b0 "${B[@]}" >b0.log 2>&1
[ $? = 0 ] && ! grep -q "precision here" b0.log &&
    [ "$($PY -c 'import json; print(json.load(open("b0/summary.json"))["results"][0]["variant"])')" = cpu:model:fp32 ] &&
    ok "float32: cpu:model:fp32, no note" || bad "float32: $(tail -3 b0.log)"
expect 0 "--configs expected,cpu:model:fp32 \(--model's default here\)$" "${NODEV[@]}" "$Q" validate \
    --model "$F/hand_attention/hand_attention_op18.onnx" "${HI[@]}" --outdir v0 "${V[@]}"

# 6. inspect --json says what each attention computes in
"$Q" inspect --json d16io32.onnx >i.json 2>&1 &&
    [ "$($PY -c 'import json; a = json.load(open("i.json"))["attention"]; print([(x["kind"], x["dtype"]) for x in a])')" = "[('decomposed', 'float16')]" ] &&
    ok "inspect --json: the chain's dtype" || bad "inspect --json: $(head -c 400 i.json)"

# 7. a bfloat16 output: validate and bench name one precision, bf16, and judge at its tolerances
# (rtol 8e-2). validate took :fp16 (fp16's, 8x tighter) where bench labelled its row :fp16 and
# judged it at bf16's
mkdir bf16 && $PY "$OQ_SOURCE_DIR/tests/e2e/lib/bf16_model.py" bf16 || fail "writing the bfloat16 model"
BH=(--model bf16/bf16_io.onnx --inputs bf16/in_f32.npz --expected bf16/out.npz)
expect 0 "--configs expected,cpu:model:bf16 \(--model's default here: output 'y' is bfloat16\)" "${NODEV[@]}" \
    "$Q" validate "${BH[@]}" --no-mask --outdir vbf "${V[@]}"
"$Q" bench "${BH[@]}" --outdir bbf "${B[@]}" >bbf.log 2>&1
[ "$?" = 0 ] && [ "$($PY -c 'import json; r = json.load(open("bbf/summary.json"))["results"][0]; print(r["variant"], r["status"], [(o["output"], o["rtol"]) for o in r["outputs"]])')" = "cpu:model:bf16 ok [('y', 0.08), ('z', 0.08)]" ] &&
    ok "bench's row: cpu:model:bf16, ok, at bf16's rtol" || bad "bench's row: $(tail -3 bbf.log) $(head -c 600 bbf/summary.json)"
[ "$($PY -c 'import json; c = json.load(open("vbf/summary.json"))["configs"][1]; print(c["name"], c["status"], [(o["name"], o["tolerance"]["rtol"]) for o in c["outputs"]])')" = "cpu:model:bf16 passed [('y', 0.08), ('z', 0.08)]" ] &&
    ok "validate's configuration: cpu:model:bf16 at bf16's rtol, as bench's row" || bad "validate's configuration: $(head -c 900 vbf/summary.json)"
report
