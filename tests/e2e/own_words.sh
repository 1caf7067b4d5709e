#!/usr/bin/env bash
# The tool rewords the library's own words (mask_polarity, mask_name '...) into its options, never
# a user's path or tensor name that happens to hold them: an error line and a validate progress
# line keep the folder "m mask_polarity x" and the tensor name "a mask_polarity b" byte for byte
# (the whole message was reworded: "m --mask-polarity x"), while the library's words in the same
# line still say --mask-polarity and --mask.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q="$ORTQUAL"
F="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
cd "$T" || exit 1
D="m mask_polarity x"
mkdir "$D" && cp "$F/tx_encoder_op18.onnx" "$F/io.npz" "$D/" || fail "copying the fixture"
V=(--configs expected,cpu:model:fp32 --no-plots)

# line WHAT TEXT FILE: FILE holds the line TEXT, whole and exact (grep -xF); WHAT names the check
line() {
    grep -qxF -- "$2" "$3" && ok "$1" || bad "$1: no line '$2' in: $(cat "$3")"
}

# 1. a tensor name holding an API phrase, in an error line whose own words name the option
"$Q" validate --model "$D/tx_encoder_op18.onnx" --inputs "$D/io.npz" --mask "a mask_polarity b" --outdir o1 \
    "${V[@]}" >e1.log 2>&1
[ $? -eq 2 ] && ok "unknown mask input: exit 2" || bad "unknown mask input: exit not 2: $(cat e1.log)"
line "tensor name and path kept, mask_name said --mask" \
    "ortqual validate: $D/tx_encoder_op18.onnx: --mask 'a mask_polarity b': the model has no such input (inputs: features, mask)" \
    e1.log

# 2. a path holding an API phrase, in an error line that names the option twice
"$Q" validate --model "$D/tx_encoder_op18.onnx" --inputs "$D/io.npz" --mask-polarity pad --outdir o2 "${V[@]}" \
    >e2.log 2>&1
[ $? -eq 2 ] && ok "a polarity the graph contradicts: exit 2" || bad "a polarity the graph contradicts: exit not 2: $(cat e2.log)"
line "path kept, mask_polarity said --mask-polarity" \
    "ortqual validate: $D/tx_encoder_op18.onnx: --mask-polarity pad reads input 'mask' with 1 = padding, but the graph reads it with 1 = valid (Where 'node_masked_fill' masks the attention scores where 'mask' is 0): the elements judged valid would be those the model ignores; --mask-polarity keep reads it as the graph does" \
    e2.log

# 3. validate's progress lines: the output folder as given, detection's words in options
"$Q" validate --model "$F/tx_encoder_op18.onnx" --inputs "$F/io.npz" --outdir "o3 mask_polarity x" "${V[@]}" \
    >e3.log 2>&1
[ $? -eq 0 ] && ok "run: exit 0" || bad "run: exit not 0: $(cat e3.log)"
line "progress: output folder kept" "1 batches checked against the mask contract and written to o3 mask_polarity x" e3.log
line "progress: mask_name and no_mask said --mask and --no-mask" \
    "mask: input 'mask' taken as the [B, L] padding mask because its name contains \"mask\" and it flows into the attention scores (--mask NAME names another, --no-mask says there is none)" \
    e3.log

report
