#!/usr/bin/env bash
# A PyTorch user's mistakes and exports, as convert and validate answer them (the QA pass of
# the twenty-seventh session): an export at opset 25 keeps it under --flash, an opset refusal
# is a counted refused step, token ids beyond the embedding table and an --expected file whose
# inputs are not the batch's are input errors naming file, input and position, an expected file
# of another model is said to be one, a padding-polarity mask points at --mask-polarity pad, and
# a model converted twice says that nothing was left to do.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
Q="$ORTQUAL"

# opset IN OUT N: IN with its ai.onnx opset_import set to N (nothing else changed), as an exporter
# of that opset would declare it
opset() { $PY "$OQ_SOURCE_DIR/tests/e2e/lib/set_opset.py" "$@" || fail "set_opset.py $*"; }

# 1. --flash on an opset-25 export keeps 25 (ORT 1.29 runs up to 26); --opset 25 is a choice too;
#    above ORT's newest, refused naming it
opset "$F/tx_encoder/tx_encoder_op18.onnx" "$T/tx25.onnx" 25
expect 0 "opset 25 -> 25" "$Q" convert "$T/tx25.onnx" -o "$T/c25.onnx" --flash --inputs "$F/tx_encoder/io.npz" \
    --expected "$F/tx_encoder/io.npz"
expect 0 "opset 18 -> 25" "$Q" convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan --flash --opset 25
one_line 2 "opset 27: .*the newest ONNX Runtime 1.29 runs" "$Q" convert "$F/tx_encoder/tx_encoder_op18.onnx" --plan \
    --flash --opset 27
expect 1 "lowering it to 24 is not supported; nothing written" "$Q" convert "$T/tx25.onnx" --plan --flash --opset 24

# 2. an opset refusal is a refused step naming the node, counted, in text and JSON; nothing written
opset "$F/tx_encoder/tx_encoder_op18.onnx" "$T/tx12.onnx" 12
expect 1 "opset +refused +node_sym_size_int_6: cannot raise ai.onnx opset 12 to 24: Squeeze" \
    "$Q" convert "$T/tx12.onnx" -o "$T/c12.onnx" --flash
"$Q" convert "$T/tx12.onnx" -o "$T/c12.onnx" --flash --json > "$T/c12.json" 2>/dev/null
$PY - "$T/c12.json" <<'EOF' && [ ! -e "$T/c12.onnx" ] && ok "opset refusal in JSON" || bad "opset refusal in JSON"
import json, sys
d = json.load(open(sys.argv[1]))
steps = [s for s in d["steps"] if s["action"] == "refused"]
assert d["exit_status"] == 1 and d["refused"] == 1 and d["opset_out"] == 24, d
assert [(s["pass"], s["node"]) for s in steps] == [("opset", "node_sym_size_int_6")], steps
assert "nothing written" in d["error"], d["error"]
EOF

# 3. token ids beyond the embedding table (llama_like's inputs, vocabulary 64, fed to decoder_lm's
#    50 rows): exit 2 before any run, naming the file, the input, the position and the table
$PY - "$F/llama_like/io.npz" "$T/llama_in.npz" <<'EOF'
import numpy as np, sys
d = np.load(sys.argv[1])
np.savez(sys.argv[2], input_ids=d["input_ids"], attention_mask=d["attention_mask"])
EOF
IDS="llama_in.npz: input 'input_ids' holds 60 at event 0 position 4; the model's Gather 'node_embedding' reads a table of 50 rows"
one_line 2 "$IDS" "$Q" validate --model "$F/decoder_lm/decoder_lm_op18.onnx" --inputs "$T/llama_in.npz" \
    --expected "$F/decoder_lm/outputs_000.npz" --outdir "$T/v3" --force --threads 1
one_line 2 "$IDS" "$Q" convert "$F/decoder_lm/decoder_lm_op18.onnx" -o "$T/c3.onnx" --flash --inputs "$T/llama_in.npz"

# 4. convert's refusal of a mask whose 1 marks padding names --mask-polarity pad, as validate's does
expect 1 "is 0 \(read with 1 = valid\); a mask whose 1 marks padding \(PyTorch's key_padding_mask\) is read with --mask-polarity pad" \
    "$Q" convert "$F/tx_padmask/tx_padmask_op18.onnx" --plan --flash

# 5. a member that is no input or output is refused (a misspelt output would go unchecked)
$PY - "$F/tx_encoder/inputs_000.npz" "$T/extra.npz" <<'EOF'
import numpy as np, sys
d = dict(np.load(sys.argv[1])); d["extra"] = np.zeros(3, np.float32); np.savez(sys.argv[2], **d)
EOF
one_line 2 "extra.npz: member 'extra' is neither an output nor an input of the model" \
    "$Q" convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/c5.onnx" --flash --inputs "$T/extra.npz"

# 6. expected outputs of another model: the original is as far from them as the conversion, and
#    the line says the file may not be this model's
expect 1 "output 'y' differs from the expected outputs in .*wrong_axis/outputs_000.npz, and the original model's does too \(max_abs 0.637; the converted 0.636\): are they this model's outputs" \
    "$Q" convert "$F/hand_attention/hand_attention_op18.onnx" -o "$T/c6.onnx" --flash \
    --inputs "$F/hand_attention/inputs_000.npz" --expected "$F/wrong_axis/outputs_000.npz"
[ ! -e "$T/c6.onnx" ] && ok "nothing written" || bad "c6.onnx written"

# 7. an --expected file holding the inputs too: they must be the batch's
$PY - "$F/decoder_lm/io.npz" "$T/dl_in.npz" "$T/dl_exp.npz" <<'EOF'
import numpy as np, sys
d = dict(np.load(sys.argv[1]))
np.savez(sys.argv[2], input_ids=d["input_ids"], attention_mask=d["attention_mask"])
d["input_ids"] = (d["input_ids"] + 1) % 50; np.savez(sys.argv[3], **d)
EOF
EXP="dl_exp.npz: member 'input_ids' holds 48 at event 0 position 0, but the batch's input holds 47 there"
one_line 2 "$EXP" "$Q" validate --model "$F/decoder_lm/decoder_lm_op18.onnx" --inputs "$T/dl_in.npz" \
    --expected "$T/dl_exp.npz" --outdir "$T/v7" --force --threads 1
one_line 2 "$EXP" "$Q" convert "$F/decoder_lm/decoder_lm_op18.onnx" -o "$T/c7.onnx" --flash --inputs "$T/dl_in.npz" \
    --expected "$T/dl_exp.npz"
expect 0 "verdict: PASSED" "$Q" validate --model "$F/decoder_lm/decoder_lm_op18.onnx" --inputs "$T/dl_in.npz" \
    --expected "$F/decoder_lm/io.npz" --outdir "$T/v7b" --force --threads 1

# 8. a converted model converted again: each pass says it has nothing left to do, the contract is kept
"$Q" convert "$F/tx_encoder/tx_encoder_op18.onnx" -o "$T/once.onnx" --flash >/dev/null 2>&1
"$Q" convert "$T/once.onnx" --plan --flash > "$T/twice.txt" 2>&1
grep -qE "^  mask-to-seqlen +skipped +attention: already done: nonpad_kv_seqlen" "$T/twice.txt" &&
    grep -qE "^  opset +skipped +already ai.onnx opset 24" "$T/twice.txt" &&
    grep -qE "^  contract +kept +metadata ortqual.mask_contract" "$T/twice.txt" &&
    ! grep -q "contract +added" "$T/twice.txt" && ok "converted twice" || bad "converted twice: $(cat "$T/twice.txt")"
# PyTorch's outputs saved under names of the user's own ("output_0"): validate --model's default
# said "no saved outputs to judge against" (asking for --configs); now the member is named
$PY -c '
import numpy as np, sys
z = np.load(sys.argv[1])
np.savez(sys.argv[2], input_ids=z["input_ids"], attention_mask=z["attention_mask"],
         output_0=z["last_hidden_state"], output_1=z["pooler_output"])' "$F/bert_like/io.npz" "$T/misnamed.npz" ||
    fail "misnamed.npz"
one_line 2 "misnamed\.npz: member 'output_0' is neither an output nor an input of the model \(its outputs: last_hidden_state, pooler_output\)" \
    "$Q" validate --model "$F/bert_like/bert_like_op18.onnx" --inputs "$T/misnamed.npz" --outdir "$T/mis"
[ ! -e "$T/mis" ] && ok "misnamed: nothing written" || bad "misnamed: $T/mis written"

report
