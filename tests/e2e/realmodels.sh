#!/usr/bin/env bash
# Real PyTorch exports (tests/fixtures/torch) judged against PyTorch's own outputs on ORT CPU:
# every fixture passes validate and replay at fp32 tolerance, a perturbed expected value fails
# naming the output and the element, the opset-23 exports ORT refuses are runtime errors
# explained with the fix, a language model's non-zero padding is reported and not judged, and
# bad expected files or inputs are input errors before any model runs.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
Q="$ORTQUAL"
V=(--repeat 1 --no-plots --force)
json() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# summary.json: every output of the model compared in every batch, worst |err| within fp32's tolerance
compared_all() {
    $PY - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); want = sorted(sys.argv[2].split(","))
c = d["configs"][1]
assert d["verdict"] == "passed" and d["tested"] == 1, (d["verdict"], d.get("verdict_reason"))
for b in c["batches"]:
    got = sorted(o["name"] for o in b["outputs"])
    assert got == want, (got, want)
    for o in b["outputs"]:
        assert o["num_valid"] > 0 and o["max_abs"] < 1e-4, (o["name"], o["max_abs"])
print("ok")
EOF
}

# 1. validate: each export against io.npz (inputs and PyTorch's outputs in one file)
for spec in tx_encoder:out mlpf_like:cls,reg decoder_lm:logits,hidden hand_attention:y wrong_axis:y llama_like:logits \
            bert_like:last_hidden_state,pooler_output; do
    fx=${spec%%:*} outs=${spec#*:}
    for m in "$F/$fx/${fx}"_op18.onnx $(case $fx in decoder_lm | llama_like) echo "$F/$fx/${fx}_op23.onnx" ;; esac); do
        tag=$(basename "$m" .onnx)
        expect 0 "verdict: PASSED" "$Q" validate --model "$m" --inputs "$F/$fx/io.npz" --configs expected,cpu:model:fp32 \
            --outdir "$T/v_$tag" "${V[@]}"
        if compared_all "$T/v_$tag/summary.json" "$outs" >/dev/null; then ok "$tag: every output compared with PyTorch's";
        else bad "$tag: $(compared_all "$T/v_$tag/summary.json" "$outs" 2>&1 | tail -1)"; fi
    done
done
[ "$(json "$T/v_decoder_lm_op18/summary.json" 'd["model_inputs"]["mask"]')" = attention_mask ] &&
    ok "decoder_lm: attention_mask taken as the mask (input_ids is rank 2 too)" || bad "decoder_lm mask"

# 2. replay: two batches of different shapes against the parallel outputs_NNN.npz
for fx in tx_encoder mlpf_like decoder_lm hand_attention wrong_axis llama_like bert_like; do
    expect 0 "verdict: PASSED \(1 passed" "$Q" replay --model "$F/$fx/${fx}_op18.onnx" --inputs "$F/$fx/inputs_*.npz" \
        --expected "$F/$fx/outputs_*.npz" --ep cpu --repeat 1 --outdir "$T/r_$fx" --force
done
[ "$(json "$T/r_mlpf_like/summary.json" '[b["padded_length"] for b in d["batches"]]')" = "[56, 24]" ] &&
    ok "replay: batches matched in order" || bad "replay batches"

# 3. the opset-23 exports ORT refuses: a runtime error (exit 3), the node, the mask's shape, the fix
for fx in tx_encoder mlpf_like; do
    expect 3 "refused by ONNX Runtime \[attn-mask-query-broadcast\] at node 'node_scaled_dot_product_attention' \(Attention\)" \
        "$Q" validate --model "$F/$fx/${fx}_op23.onnx" --inputs "$F/$fx/io.npz" --configs expected,cpu:model:fp32 \
        --outdir "$T/v23_$fx" "${V[@]}"
done
if $PY - "$T/v23_mlpf_like/summary.json" <<'EOF'; then ok "refusal in summary.json: raw message kept, fix given"; else bad "refusal record"; fi
import json, sys
d = json.load(open(sys.argv[1])); r = d["configs"][1]["refusal"]
assert d["verdict"] == "error" and d["exit_status"] == 3, d["verdict"]
assert r["pattern"] == "attn-mask-query-broadcast" and "inconsistent q_sequence_length" in r["raw"]
assert "ortqual convert --expand-mask" in r["fix"] and "nonpad_kv_seqlen" in r["fix"]
EOF
"$Q" validate --model "$F/mlpf_like/mlpf_like_op23.onnx" --inputs "$F/mlpf_like/io.npz" --configs expected,cpu:model:fp32 \
    --outdir "$T/v23b" "${V[@]}" > "$T/v23b.out" 2>&1
grep -q "    fix: expand the mask to \[B,1,Lq,Lk\] (\`ortqual convert --expand-mask\`)" "$T/v23b.out" &&
    grep -Eq "    inputs: Q '[^']+' float32 \[batch=3,4,seq=56,12\]; attn_mask '[^']+' bool \[batch=3,1,1,seq=56\]" "$T/v23b.out" &&
    ok "the node's inputs (their names at the batch's sizes) and the fix printed under the configuration" ||
    bad "no fix line: $(cat "$T/v23b.out")"

# 4. a perturbed expected value fails, naming the output and the element
$PY - "$F/mlpf_like/io.npz" "$T/bad_io.npz" <<'EOF'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["reg"] = z["reg"].copy(); z["reg"][1, 20, 2] += np.float32(0.01); np.savez(sys.argv[2], **z)
EOF
expect 1 "batch 0, output reg: FAIL .*worst \[1,20,2\]" "$Q" validate --model "$F/mlpf_like/mlpf_like_op18.onnx" \
    --inputs "$T/bad_io.npz" --configs expected,cpu:model:fp32 --outdir "$T/bad" "${V[@]}"
# ... and a per-output tolerance wide enough accepts it (the other output keeps fp32's)
expect 0 "verdict: PASSED" "$Q" validate --model "$F/mlpf_like/mlpf_like_op18.onnx" --inputs "$T/bad_io.npz" \
    --configs expected,cpu:model:fp32 --tolerance reg:atol=0.02 --outdir "$T/badtol" "${V[@]}"
# ... but not an atol at or above every |value| of the output: zeros pass in its place, on either side
$PY - "$F/mlpf_like/io.npz" "$T/zero_io.npz" <<'EOF'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["reg"] = np.zeros_like(z["reg"]); np.savez(sys.argv[2], **z)
EOF
for io in "$F/mlpf_like/io.npz" "$T/zero_io.npz"; do
    expect 1 "batch 0, output reg: its atol 1e\\+30 is at least its largest \\|value\\| [0-9.e+-]+: zeros would pass" \
        "$Q" validate --model "$F/mlpf_like/mlpf_like_op18.onnx" --inputs "$io" --configs expected,cpu:model:fp32 \
        --tolerance reg:atol=1e30 --outdir "$T/vacuous" "${V[@]}"
    # bench and convert apply the same rule (they passed, and convert wrote the file)
    expect 1 "output 'reg': its atol 1e\\+30 is at least its largest \\|value\\| [0-9.e+-]+: zeros would pass" \
        "$Q" bench --model "$F/mlpf_like/mlpf_like_op18.onnx" --inputs "$io" --expected "$io" \
        --tolerance reg:atol=1e30 --iters 2 --outdir "$T/bvacuous" --force
    rm -f "$T/cvacuous.onnx"
    expect 1 "output 'reg' differs from the reference: .*its atol 1e\\+30 is at least its largest \\|value\\|" \
        "$Q" convert "$F/mlpf_like/mlpf_like_op18.onnx" -o "$T/cvacuous.onnx" --flash --inputs "$io" --expected "$io" \
        --tolerance reg:atol=1e30
    [ ! -e "$T/cvacuous.onnx" ] && ok "convert wrote nothing under a tolerance that cannot fail" ||
        bad "convert wrote $T/cvacuous.onnx under a tolerance that cannot fail"
done
# an io.npz whose mask member is the documented alias `mask` feeds attention_mask, no stray member
$PY - "$F/bert_like/io.npz" "$T/alias_io.npz" <<'EOF'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["mask"] = z.pop("attention_mask"); np.savez(sys.argv[2], **z)
EOF
expect 0 "verdict: PASSED" "$Q" validate --model "$F/bert_like/bert_like_op18.onnx" --inputs "$T/alias_io.npz" \
    --outdir "$T/alias" "${V[@]}"
/usr/bin/python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['configs'][1]['batches'][0]['outputs'][0]; \
assert o['name'] == 'last_hidden_state' and o['padding']['masked'] and o['padding']['padded'] > 0, o" \
    "$T/alias/summary.json" 2>/dev/null && ok "the alias member masked last_hidden_state" ||
    bad "the alias member did not mask: $(head -c 300 "$T/alias/summary.json")"

# ... and a reference with outputs the model does not have fails naming the missing one
"$Q" export encoder --seed 1 --save-weights "$T/w.npz" -o "$T/enc.onnx" >/dev/null 2>&1
expect 1 "batch 0, output cls: this configuration has no such output \(the reference has\)" "$Q" validate \
    --model "$F/tx_encoder/tx_encoder_op18.onnx" --weights "$T/w.npz" --heads 4 --inputs "$F/tx_encoder/io.npz" \
    --configs ref:encoder:fp64,cpu:model:fp32 --outdir "$T/noout" "${V[@]}"
# ... without --weights it cannot run: a usage error before anything is made (it was exit 3 after the run began)
expect 2 "^ortqual validate: config 'ref:encoder:fp64' with --model needs --weights W\.npz" "$Q" validate \
    --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/io.npz" \
    --configs ref:encoder:fp64,cpu:model:fp32 --outdir "$T/nowts" "${V[@]}"
[ ! -e "$T/nowts" ] && ok "nothing made without --weights" || bad "$T/nowts made"
# a --model file runs as it is: a configuration naming another representation is refused (it ran the
# model unchanged, reported as attention24 and judged at fp16 tolerances: PASSED)
expect 2 "^ortqual validate: config 'cpu:attention24:fp16': --model runs .*mlpf_like_op18\.onnx as it is, never ortqual's attention24 export: use cpu:model:fp16$" \
    "$Q" validate --model "$F/mlpf_like/mlpf_like_op18.onnx" --inputs "$F/mlpf_like/io.npz" \
    --configs expected,cpu:attention24:fp16 --outdir "$T/repr" "${V[@]}"
[ ! -e "$T/repr" ] && ok "nothing made for a representation --model does not run" || bad "$T/repr made"
expect 2 "^ortqual validate: config 'cpu:model:fp32': representation 'model' is the file given with --model" \
    "$Q" validate --configs ref:encoder:fp64,cpu:model:fp32 --outdir "$T/nomodel" "${V[@]}"

# 4b. PyTorch's own key_padding_mask as the model's input (True = padding): read with
# --mask-polarity pad it passes against PyTorch's outputs, padding judged; read as 1 = valid it is
# refused before any model runs, naming the file, the mask and the event
PM="$F/tx_padmask"
expect 0 "verdict: PASSED" "$Q" validate --model "$PM/tx_padmask_op18.onnx" --inputs "$PM/io.npz" \
    --configs expected,cpu:model:fp32 --mask-polarity pad --outdir "$T/v_padmask" "${V[@]}"
if compared_all "$T/v_padmask/summary.json" out >/dev/null &&
   [ "$(json "$T/v_padmask/summary.json" 'd["configs"][1]["batches"][0]["outputs"][0]["padding"]["checked"]')" = True ]; then
    ok "tx_padmask: out compared with PyTorch's, padding judged"; else bad "tx_padmask: $(compared_all "$T/v_padmask/summary.json" out 2>&1 | tail -1)"; fi
# without --mask-polarity the graph's polarity is taken (the graph reads the mask through a Not;
# the thirtieth session's polarity): it passes, and says so; --mask-polarity keep is refused
expect 0 "mask: input 'src_key_padding_mask' read with 1 = padding, as the graph reads it" \
    "$Q" validate --model "$PM/tx_padmask_op18.onnx" --inputs "$PM/io.npz" --configs expected,cpu:model:fp32 \
    --outdir "$T/v_padmask_graph" "${V[@]}"
expect 2 "tx_padmask_op18.onnx: --mask-polarity keep reads input 'src_key_padding_mask' with 1 = valid, but the graph reads it with 1 = padding .*--mask-polarity pad reads it as the graph does" \
    "$Q" validate --model "$PM/tx_padmask_op18.onnx" --inputs "$PM/io.npz" --configs expected,cpu:model:fp32 \
    --mask-polarity keep --outdir "$T/v_padmask_keep" "${V[@]}"
expect 0 "verdict: PASSED \(1 passed" "$Q" replay --model "$PM/tx_padmask_op18.onnx" --inputs "$PM/inputs_*.npz" \
    --expected "$PM/outputs_*.npz" --mask-polarity pad --ep cpu --repeat 1 --outdir "$T/r_padmask" --force

# 5. a language model's outputs are not zero on padding: reported, not judged; --padding zero judges them
expect 0 "padding: logits has 4000 of 4000 padded elements non-zero \(first in batch 0\), reported, not judged: the reference is not zero there" \
    "$Q" validate --model "$F/decoder_lm/decoder_lm_op18.onnx" --inputs "$F/decoder_lm/io.npz" \
    --configs expected,cpu:model:fp32 --outdir "$T/lm" "${V[@]}"
expect 1 "pad_nonzero=4000/4000" "$Q" validate --model "$F/decoder_lm/decoder_lm_op18.onnx" --inputs "$F/decoder_lm/io.npz" \
    --configs expected,cpu:model:fp32 --padding zero --outdir "$T/lmz" "${V[@]}"
# a model that zeroes its padding is held to it (PyTorch's padding is zero there): judged by default
if [ "$(json "$T/v_tx_encoder_op18/summary.json" 'd["configs"][1]["batches"][0]["outputs"][0]["padding"]["checked"]')" = True ]; then
    ok "tx_encoder: padding judged (PyTorch zeroes it)"; else bad "tx_encoder padding not judged"; fi
# no mask: every element is valid and compared
# (and nothing was "checked against the mask contract": the batches were written)
out=$("$Q" validate --model "$F/hand_attention/hand_attention_op18.onnx" --no-mask --inputs "$F/hand_attention/io.npz" \
    --configs expected,cpu:model:fp32 --outdir "$T/nomask" "${V[@]}" 2>&1)
[ $? -eq 0 ] && grep -q "no mask input: every element" <<<"$out" && grep -qx "1 batches written to $T/nomask" <<<"$out" &&
    ok "--no-mask: said, and 1 batch written (no contract)" || bad "--no-mask: $out"
[ "$(json "$T/nomask/summary.json" '(d["model_inputs"]["mask"], d["configs"][1]["batches"][0]["outputs"][0]["num_valid"])')" = "(None, 2688)" ] &&
    ok "--no-mask: all 3x56x16 elements compared" || bad "--no-mask: $(json "$T/nomask/summary.json" 'd["model_inputs"]')"

# 5b. --model without --configs: the saved outputs against ORT CPU (no CUDA here: an empty device tree)
mkdir -p "$T/nodev"
NODEV=(env ORTQUAL_TEST_DEVICE_ROOT="$T/nodev")
M18="$F/mlpf_like/mlpf_like_op18.onnx"
expect 0 "--configs expected,cpu:model:fp32 \(--model's default here\)" "${NODEV[@]}" "$Q" validate --model "$M18" \
    --inputs "$F/mlpf_like/io.npz" --outdir "$T/d1" "${V[@]}"
[ "$(json "$T/d1/summary.json" '[c["name"] for c in d["configs"]], d["verdict"]')" = "['expected', 'cpu:model:fp32'] passed" ] &&
    ok "default configurations ran and passed" || bad "default: $(json "$T/d1/summary.json" '[c["name"] for c in d["configs"]]')"
expect 0 "--configs expected,cpu:model:fp32 \(--model's default here\)" "${NODEV[@]}" "$Q" validate --model "$M18" \
    --inputs "$F/mlpf_like/inputs_*.npz" --expected "$F/mlpf_like/outputs_*.npz" --outdir "$T/d2" "${V[@]}"
# a model whose attention computes in float16 (convert --flash) is judged at fp16 tolerances by default
"$Q" convert "$M18" -o "$T/flash18.onnx" --flash >/dev/null 2>&1 || bad "convert --flash mlpf_like"
expect 0 "--configs expected,cpu:model:fp16 \(--model's default here: Attention 'attention' computes in float16\)" \
    "${NODEV[@]}" "$Q" validate --model "$T/flash18.onnx" --inputs "$F/mlpf_like/io.npz" --outdir "$T/d6" "${V[@]}"
expect 2 "--model needs --configs here: no saved outputs to judge against .* and no CUDA execution provider.*; .*mlpf_like/outputs_000.npz is beside .*inputs_000.npz: pass --expected '.*mlpf_like/outputs_\*.npz'" \
    "${NODEV[@]}" "$Q" validate --model "$M18" --inputs "$F/mlpf_like/inputs_000.npz" --outdir "$T/d3" "${V[@]}"
# some of the outputs saved with the inputs: meant as the reference, so the missing one is named
# (it said "no saved outputs", and where CUDA runs it compared CPU with CUDA, PyTorch's 'cls' unused)
$PY -c '
import sys, numpy as np
z = dict(np.load(sys.argv[1])); del z["reg"]; np.savez(sys.argv[2], **z)' "$F/mlpf_like/io.npz" "$T/noreg.npz"
expect 2 "noreg.npz holds the model's output 'cls' but not 'reg' \(1 of 2 outputs\)" \
    "${NODEV[@]}" "$Q" validate --model "$M18" --inputs "$T/noreg.npz" --outdir "$T/d7" "${V[@]}"
[ ! -e "$T/d7" ] && ok "nothing made for partial saved outputs" || bad "d7 made for partial saved outputs"
printf 'not a zip' >"$T/garbage.npz"
expect 2 "garbage.npz: cannot open as .npz" "${NODEV[@]}" "$Q" validate --model "$M18" --inputs "$T/garbage.npz" --outdir "$T/d5" "${V[@]}"
expect 2 "a sharded --model run needs --configs: the default depends on the host" "$Q" validate --model "$M18" \
    --inputs "$F/mlpf_like/io.npz" --outdir "$T/d4" --prepare-shards 2 "${V[@]}"

# 6. input errors before any model runs (exit 2, only error.json left)
$PY - "$F" "$T" <<'EOF'
import sys, numpy as np
F, T = sys.argv[1:]
z = dict(np.load(F + "/mlpf_like/io.npz"))
np.savez(T + "/no_cls.npz", **{k: v for k, v in z.items() if k != "cls"})
np.savez(T + "/short_cls.npz", **dict(z, cls=z["cls"][:, :, :5]))
d = dict(np.load(F + "/decoder_lm/io.npz"))
np.savez(T + "/seq.npz", input_ids=d["input_ids"], attention_mask=d["attention_mask"][:, :24])
np.savez(T + "/int32.npz", input_ids=d["input_ids"], attention_mask=d["attention_mask"].astype(np.int32))
EOF
MLPF=(--model "$F/mlpf_like/mlpf_like_op18.onnx" --configs expected,cpu:model:fp32)
expect 2 "no_cls.npz: no member 'cls' for the model's output cls float32 \[batch,seq,6\]" "$Q" validate "${MLPF[@]}" \
    --inputs "$T/no_cls.npz" --outdir "$T/e1" "${V[@]}"
[ "$(ls -A "$T/e1")" = "error.json" ] && ok "missing member: only error.json left" || bad "left: $(ls -A "$T/e1")"
# PyTorch's outputs in outputs_NNN.npz beside inputs_NNN.npz: the error names the option that reads them
expect 2 "inputs_000.npz: no member 'cls' .*; .*/mlpf_like/outputs_000.npz is beside it: pass --expected '.*/mlpf_like/outputs_\*.npz'" \
    "$Q" validate "${MLPF[@]}" --inputs "$F/mlpf_like/inputs_*.npz" --outdir "$T/e1b" "${V[@]}"
expect 2 "short_cls.npz: expected 'cls' has shape \[3,56,5\]; the model's 'cls' is \[batch,seq,6\] \(axis 2 fixed to 6\)" \
    "$Q" validate "${MLPF[@]}" --inputs "$T/short_cls.npz" --outdir "$T/e2" "${V[@]}"
expect 2 "--expected: 1 files for 2 --inputs files" "$Q" validate "${MLPF[@]}" --inputs "$F/mlpf_like/inputs_*.npz" \
    --expected "$F/mlpf_like/outputs_000.npz" --outdir "$T/e3" "${V[@]}"
expect 2 "outputs_001.npz is paired with .*inputs_000.npz" "$Q" validate "${MLPF[@]}" --inputs "$F/mlpf_like/inputs_000.npz" \
    --expected "$F/mlpf_like/outputs_001.npz" --outdir "$T/e4" "${V[@]}"
LM=(--model "$F/decoder_lm/decoder_lm_op18.onnx" --configs cpu:model:fp32,cuda:model:fp32)
expect 2 "dimension 'seq' is 56 in member 'input_ids' \[3,56\] but 24 in member 'attention_mask' \[3,24\]" \
    "$Q" validate "${LM[@]}" --inputs "$T/seq.npz" --outdir "$T/e5" "${V[@]}"
expect 2 "member 'attention_mask' is int32 \[3,56\]; the model's 'attention_mask' is int64 \[batch,seq\]" \
    "$Q" validate "${LM[@]}" --inputs "$T/int32.npz" --outdir "$T/e6" "${V[@]}"
expect 2 "the 'expected' configuration compares against saved outputs: it needs --model and the --inputs" \
    "$Q" validate --model "$F/mlpf_like/mlpf_like_op18.onnx" --configs expected,cpu:model:fp32 --outdir "$T/e7" "${V[@]}"
expect 2 "generated events cannot make the model's input 'input_ids'" "$Q" validate "${LM[@]}" --outdir "$T/e8" "${V[@]}"
"$Q" export encoder --static 3,56 -o "$T/static.onnx" >/dev/null 2>&1
expect 2 "batch 0: generated events: input 'features' has shape \[3,88,8\]; the model's 'features' is \[3,56,8\] \(axis 1 fixed to 56\)" \
    "$Q" validate --model "$T/static.onnx" --configs cpu:model:fp32,cuda:model:fp32 --outdir "$T/e9" "${V[@]}"

# 7. requirements judge GPU configurations only: the CPU one's placement is evidence, not a failure;
#    asked for where no configuration could be judged, they are a usage error, and where the only
#    GPU one was skipped they judged nothing: NOT TESTED (it was PASSED), 0 with --allow-skip
expect 0 "verdict: NOT TESTED" "$Q" validate "${MLPF[@]}",noep:model:fp32 --inputs "$F/mlpf_like/io.npz" --require-full-gpu \
    --allow-skip --outdir "$T/g1" "${V[@]}"
if $PY - "$T/g1/summary.json" <<'EOF'; then ok "cpu's placement recorded, not judged"; else bad "cpu placement judged"; fi
import json, sys
c = json.load(open(sys.argv[1]))["configs"]
assert c[1]["status"] == "passed" and c[1]["placement"]["eps"][0]["ep"] == "CPUExecutionProvider", c[1]
assert c[2]["status"] == "skipped"
EOF
expect 2 "--require-full-gpu judges configurations under test on a GPU execution provider, and none is among" \
    "$Q" validate "${MLPF[@]}" --inputs "$F/mlpf_like/io.npz" --require-full-gpu --outdir "$T/g2" "${V[@]}"

# 8. a GPU worker killed by SIGSEGV on Attention inputs without declared shapes: explained, a runtime
#    error; the same crash on a model without Attention nodes stays an unexplained failure
SEGV=(--ep-lib "segvep=$OQ_BINARY_DIR/tests/libsegv_ep.so" --num-events 2 --repeat 1 --no-plots --force)
expect 3 "refused by ONNX Runtime \[crash-attention-no-shapes\] at node 'blocks.0.attn' \(Attention\)" \
    "$Q" validate --configs ref:encoder:fp64,segvep:attention24:fp32 --outdir "$T/s1" "${SEGV[@]}"
expect 1 "worker killed by signal 11" "$Q" validate --configs ref:encoder:fp64,segvep:decomposed:fp32 \
    --outdir "$T/s2" "${SEGV[@]}"
# the crashed worker's stderr tail holds its backtrace, naming the provider library it died in
# (not under AddressSanitizer, whose own report replaces it)
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" ||
$PY - "$T/s2/summary.json" <<'EOF' || fail "no backtrace naming libsegv_ep.so in the crashed worker's stderr tail"
import json, sys
tail = json.load(open(sys.argv[1]))["configs"][1]["worker"]["stderr_tail"]
assert "crashed with signal 11 (SEGV)" in tail and "libsegv_ep.so" in tail, tail
reason = json.load(open(sys.argv[1]))["configs"][1]["reason"]
assert reason.startswith("worker killed by signal 11 (Segmentation fault) in libsegv_ep.so(") and \
    reason.endswith(": segv_ep: 'segvep' dies of SIGSEGV on purpose"), reason
EOF
# the same crash inside a library of ONNX Runtime's (the provider named like ORT's), with ORT's
# extended optimizations on (its default): the reason says how to tell one of them at fault;
# with --graph-opt-level 1 it does not (ORT 1.29's CUDA EP crashes on position embeddings so)
cp "$OQ_BINARY_DIR/tests/libsegv_ep.so" "$T/libonnxruntime_providers_segv.so"
ORTSEGV=(--configs ref:encoder:fp64,segvep:decomposed:fp32 --ep-lib "segvep=$T/libonnxruntime_providers_segv.so"
         --num-events 2 --repeat 1 --no-plots --force)
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" || {
    expect 1 "in libonnxruntime_providers_segv.so\(.*\): segv_ep: .segvep. dies of SIGSEGV on purpose \(if --graph-opt-level 1 runs it, one of ORT.s extended graph optimizations is at fault; --session-config optimization.disable_specified_optimizers=NAME turns one off alone\)" \
        "$Q" validate --outdir "$T/s3" "${ORTSEGV[@]}"
    "$Q" validate --outdir "$T/s4" "${ORTSEGV[@]}" --graph-opt-level 1 > "$T/s4.out" 2>&1
    grep -q "worker killed by signal 11 (Segmentation fault) in libonnxruntime_providers_segv.so" "$T/s4.out" &&
        ! grep -q "graph-opt-level" "$T/s4.out" && ok "--graph-opt-level 1: no hint" || bad "s4: $(cat "$T/s4.out")"
}
report
