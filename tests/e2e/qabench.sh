#!/usr/bin/env bash
# QA round 6's defects 2, 6, 7 and 8: bench --model reads its inputs as validate does, and replay
# knows a build by what survives strip.
# 6. a NaN at a valid position of an --inputs file is the file's error (exit 2, naming the element,
#    validate's very line), with --expected (it was a failed row, "NaN in the output") or without
#    (a green timing of NaNs); one in the padding is not (validate's rule);
# 7. a --mask-fraction that leaves a row no valid element is refused before anything runs (exit 2,
#    naming the option), in --model (it was a failed row, exit 1) and in the attention sweep at
#    any of its lengths (it ran the lengths before that one, then stopped);
# 8. an --expected file without one of the model's outputs is refused (it PASSED, that output
#    never compared and never named), as validate, replay and convert refuse it;
# 2. replay --ep cpu against a stripped copy of its own ORT compares ORT with itself: refused (it
#    PASSED with max|err| 0); one without the build-id note runs, with a note; another build runs.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
TX="$F/torch/tx_encoder"
LM="$F/torch/decoder_lm"
RUN=(--iters 1 --warmup 0 --threads 1 --quiet)

# the batch files: tx_encoder's batch 0 (lengths 50, 31, 7 of 56) with one NaN each
$PY - "$TX/inputs_000.npz" <<'PYEOF' || bad "making the batch files"
import numpy as np, sys
z = dict(np.load(sys.argv[1]))
assert z["mask"][0].sum() == 50 and z["mask"][2].sum() == 7, z["mask"].sum(axis=1)
def save(name, event, pos, members=("features", "mask")):
    f = z["features"].copy()
    f[event, pos, 3] = np.nan
    np.savez(name, **{k: (f if k == "features" else z[k]) for k in members})
save("valid.npz", 1, 30)        # event 1's last valid position
save("pad.npz", 2, 40)          # event 2's padding
save("features.npz", 0, 0, ("features",))  # the mask generated (lengths 42 of 56)
save("gen_pad.npz", 0, 50, ("features",))
PYEOF
WANT="^ortqual bench: valid.npz: input 'features': event 1 position 30 \(element 3 of it\) is NaN: valid positions must be finite$"
one_line 2 "$WANT" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs valid.npz --expected "$TX/outputs_000.npz" "${RUN[@]}" --outdir e6a
one_line 2 "$WANT" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs valid.npz "${RUN[@]}" --outdir e6b
[ ! -e e6a ] && [ ! -e e6b ] && ok "NaN input: nothing written" || bad "NaN input: an output folder was made"
# validate's line, word for word: one check
v=$("$Q" validate --model "$TX/tx_encoder_op18.onnx" --inputs valid.npz --expected "$TX/outputs_000.npz" --no-plots \
    --outdir v6 2>&1)
[ "${v#ortqual validate: }" = "$(sed 's/^\^ortqual bench: //; s/\\//g; s/\$$//' <<<"$WANT")" ] &&
    ok "validate says the same line" || bad "validate: $v"
expect 0 "PASSED" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs pad.npz "${RUN[@]}" --outdir e6c
# the mask generated from --mask-fraction (0.25 of 56: 42 valid) sets the valid positions
one_line 2 "^ortqual bench: features.npz: input 'features': event 0 position 0 \(element 3 of it\) is NaN: valid positions must be finite$" \
    "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs features.npz "${RUN[@]}" --outdir e6d
expect 0 "PASSED" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs gen_pad.npz "${RUN[@]}" --outdir e6e

# 7. --mask-fraction 0.9 at length 4 leaves round(0.4) = 0 valid positions
FRAC="^ortqual bench: --mask-fraction 0.9 leaves no valid element at length 4 \(padding 0.9 of 4 positions rounds to all of them; every row needs one valid position\)$"
one_line 2 "$FRAC" "$Q" bench --model "$LM/decoder_lm_op18.onnx" --dim batch=2 --sweep seq=64,4 --mask-fraction 0.9 \
    "${RUN[@]}" --outdir e7a
one_line 2 "$FRAC" "$Q" bench --variants cpu:decomposed:fp32 --seq-lens 64,4 --mask-fraction 0.9 --modes masked \
    --num-heads 1 --head-dim 8 "${RUN[@]}" --outdir e7b
[ ! -e e7a ] && [ ! -e e7b ] && ok "--mask-fraction: nothing ran, nothing written" || bad "--mask-fraction: a folder was made"
# at length 8 round(0.8) = 1 position stays valid: the sweep runs
expect 0 "PASSED" "$Q" bench --variants cpu:decomposed:fp32 --seq-lens 64,8 --mask-fraction 0.9 --modes masked \
    --num-heads 1 --head-dim 8 "${RUN[@]}" --outdir e7c

# 8. decoder_lm has outputs logits and hidden: a file with logits alone
$PY -c 'import numpy as np, sys; z = np.load(sys.argv[1]); np.savez("logits.npz", logits=z["logits"])' \
    "$LM/outputs_000.npz" || bad "making logits.npz"
one_line 2 "^ortqual bench: logits.npz: no tensor for the model's output hidden float32 \[batch,seq,32\] \(every output is compared with its saved values\)$" \
    "$Q" bench --model "$LM/decoder_lm_op18.onnx" --inputs "$LM/inputs_000.npz" --expected logits.npz "${RUN[@]}" --outdir e8
expect 2 "logits.npz: no member 'hidden' for the model's output hidden" "$Q" validate --model "$LM/decoder_lm_op18.onnx" \
    --inputs "$LM/inputs_000.npz" --expected logits.npz --no-plots --outdir v8
expect 0 "PASSED" "$Q" bench --model "$LM/decoder_lm_op18.onnx" --inputs "$LM/inputs_000.npz" --expected "$LM/outputs_000.npz" \
    "${RUN[@]}" --outdir e8ok

# 2. the loaded ORT stripped (strip keeps the ELF build-id note), and with the note removed
REP=(replay --model "$LM/decoder_lm_op18.onnx" --inputs "$LM/inputs_000.npz" --ep cpu --repeat 1 --warmup 0)
strip --strip-unneeded -o "$T/stripped.so" "$OQ_ORT_LIB" && objcopy --remove-section .note.gnu.build-id "$T/stripped.so" "$T/noid.so" ||
    bad "strip/objcopy"
cmp -s "$T/stripped.so" "$OQ_ORT_LIB" && bad "the stripped copy is byte-identical: the check would not bite"
SELF="^ortqual replay: --ep cpu judged against ORT CPU of the same build compares ORT with itself \(--reference-ort-lib"
one_line 2 "$SELF $T/stripped.so is the build \(the same ELF build-id: a stripped or patched copy\) of the library the replay loads, $(realpath "$OQ_ORT_LIB")\): it passes" \
    "$Q" "${REP[@]}" --reference-ort-lib "$T/stripped.so" --outdir r2a
[ ! -e r2a ] && ok "the same build: nothing written" || bad "the same build: a folder was made"
# without the note, its bytes alone could tell: the same version and build info is not enough (two
# builds of one commit report it too), so it runs, said (e2e/bench2)
expect 0 "note: --reference-ort-lib $T/noid.so reports the ORT version and build info of $(realpath "$OQ_ORT_LIB"), which it is not a copy of, and one of the two has no ELF build-id" \
    "$Q" "${REP[@]}" --reference-ort-lib "$T/noid.so" --outdir r2b
# another build without its note is another version: compared, as before
need_ort130
strip --strip-unneeded -o "$T/other.so" "$ORT130" && objcopy --remove-section .note.gnu.build-id "$T/other.so" || bad "strip 1.30"
expect 0 "PASSED" "$Q" "${REP[@]}" --reference-ort-lib "$T/other.so" --outdir r2c
report
