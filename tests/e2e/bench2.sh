#!/usr/bin/env bash
# bench2: bench --model holds an --inputs mask to the contract as validate does, and replay knows
# a build without an ELF build-id only by its bytes.
# 1. without --expected, bench --model timed a left-padded (or holed) mask that validate refuses:
#    now refused, exit 2, validate's very line (one function: src/axes/maskin.c), nothing written;
# 2. two files of one ORT version and build info, neither with a build-id, that differ in their
#    bytes (a section added to one) were refused as one build: whether they are cannot be
#    established (two builds of one commit report the same), so the run goes on and says so (a
#    note, kept in summary.json); a byte copy is still the same build, refused.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
TX="$F/torch/tx_encoder"
LM="$F/torch/decoder_lm"
RUN=(--iters 1 --warmup 0 --threads 1 --quiet)

# tx_encoder's batch 0 (lengths 50, 31, 7 of 56): event 1 padded on the left, event 2 with a hole
$PY - "$TX/inputs_000.npz" <<'PYEOF' || bad "making the batch files"
import numpy as np, sys
z = dict(np.load(sys.argv[1]))
m = z["mask"].copy()
m[1] = m[1][::-1]
np.savez("left.npz", features=z["features"], mask=m)
m = z["mask"].copy()
m[2, 3] = False
np.savez("hole.npz", features=z["features"], mask=m)
PYEOF
LEFT="left.npz: mask 'mask': event 1: left padding: position 0 is 0 but position 25 is 1 \(a valid row is ones first"
one_line 2 "^ortqual bench: $LEFT" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs left.npz "${RUN[@]}" --outdir b1
one_line 2 "^ortqual bench: hole.npz: mask 'mask': event 2: hole" \
    "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs hole.npz "${RUN[@]}" --outdir b2
[ ! -e b1 ] && [ ! -e b2 ] && ok "a broken mask: nothing written" || bad "a broken mask: an output folder was made"
# validate's line, word for word, for both files
for f in left hole; do
    b=$("$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs $f.npz "${RUN[@]}" --outdir b3 2>&1)
    v=$("$Q" validate --model "$TX/tx_encoder_op18.onnx" --inputs $f.npz --expected "$TX/outputs_000.npz" --no-plots \
        --outdir v_$f 2>&1)
    [ -n "$b" ] && [ "${b#ortqual bench: }" = "${v#ortqual validate: }" ] && ok "$f: validate says the same line" ||
        bad "$f: bench: $b / validate: $v"
done
# the batch as saved (every row a prefix): timed
expect 0 "PASSED" "$Q" bench --model "$TX/tx_encoder_op18.onnx" --inputs "$TX/inputs_000.npz" "${RUN[@]}" --outdir b4

# 2. ORT 1.29 without its build-id note, and that copy with a section added: two files, one
# version and build info, no build-id in either
ORT=$(realpath "$OQ_ORT_LIB")
objcopy --remove-section .note.gnu.build-id "$ORT" "$T/noid.so" && echo x >"$T/x" &&
    objcopy --add-section .oqextra="$T/x" "$T/noid.so" "$T/other.so" || bad "objcopy"
readelf -n "$T/other.so" 2>/dev/null | grep -q "Build ID" && bad "other.so still has a build-id"
cmp -s "$T/noid.so" "$T/other.so" && bad "the two copies are byte-identical: the check would not bite"
REP=(replay --model "$LM/decoder_lm_op18.onnx" --inputs "$LM/inputs_000.npz" --ep cpu --repeat 1 --warmup 0
     --ort-lib "$T/noid.so")
NOTE="ortqual replay: note: --reference-ort-lib $T/other.so reports the ORT version and build info of $T/noid.so, which it is not a copy of, and one of the two has no ELF build-id: whether it is the same build \(then the comparison proves nothing\) or another build of that commit cannot be established; it runs as another build"
expect 0 "^$NOTE$" "$Q" "${REP[@]}" --reference-ort-lib "$T/other.so" --outdir r1
[ "$($PY -c 'import json, sys; print([n["kind"] for n in json.load(open(sys.argv[1]))["notes"]].count("ort_build_unknown"))' r1/summary.json)" = 1 ] &&
    ok "replay: the note kept once in summary.json" || bad "replay: summary.json's notes: $(grep -A3 '"notes"' r1/summary.json)"
# a byte copy without a build-id is the build: refused, nothing written
cp "$T/noid.so" "$T/copy.so"
one_line 2 "^ortqual replay: --ep cpu judged against ORT CPU of the same build compares ORT with itself \(--reference-ort-lib $T/copy.so is a copy of the library the replay loads, $T/noid.so\)" \
    "$Q" "${REP[@]}" --reference-ort-lib "$T/copy.so" --outdir r2
[ ! -e r2 ] && ok "a byte copy: nothing written" || bad "a byte copy: a folder was made"
report
