#!/usr/bin/env bash
# ortqual export / inspect end to end: files, overwrite protection, option
# errors, weights round trip, attention nodes listed by inspect, bad files.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"

Q="$ORTQUAL"

# Every representation, written and listed by inspect with its attention nodes.
for f in decomposed attention23 attention24; do
    expect 0 "wrote $T/sdpa_$f.onnx: sdpa, $f" "$Q" export sdpa --format "$f" --layout 3 -o "$T/sdpa_$f.onnx"
    expect 0 "wrote $T/enc_$f.onnx: encoder, $f" "$Q" export encoder --format "$f" --layers 2 -o "$T/enc_$f.onnx"
done
expect 0 "attention nodes: 1" "$Q" inspect "$T/sdpa_decomposed.onnx"
expect 0 "decomposed 'Softmax' axis=-1" "$Q" inspect "$T/sdpa_decomposed.onnx"
expect 0 "Attention 'attn' q_num_heads=4 kv_num_heads=4" "$Q" inspect "$T/sdpa_attention23.onnx"
expect 0 "inputs: Q K V attn_mask" "$Q" inspect "$T/sdpa_attention23.onnx"
expect 0 "inputs: Q K V nonpad_kv_seqlen" "$Q" inspect "$T/sdpa_attention24.onnx"
expect 0 "attention nodes: 2" "$Q" inspect "$T/enc_attention24.onnx"
expect 0 "Attention 'blocks.1.attn'" "$Q" inspect "$T/enc_attention24.onnx"
expect 0 "input +features +float32 +\[batch, seq, 8\]" "$Q" inspect "$T/enc_decomposed.onnx"
expect 0 "ir_version   12" "$Q" inspect "$T/enc_attention24.onnx"
expect 0 '"kind": "Attention"' "$Q" inspect --json "$T/enc_attention23.onnx"

# Never overwrite without --force; the file is left as it was.
before=$(cksum <"$T/sdpa_decomposed.onnx")
expect 2 "exists.*--force" "$Q" export sdpa --heads 8 -o "$T/sdpa_decomposed.onnx"
[ "$(cksum <"$T/sdpa_decomposed.onnx")" = "$before" ] && ok "refused overwrite kept the file" ||
    bad "refused overwrite changed the file"
expect 0 "wrote" "$Q" export sdpa --heads 8 --force -o "$T/sdpa_decomposed.onnx"
[ "$(cksum <"$T/sdpa_decomposed.onnx")" != "$before" ] && ok "--force replaced the file" ||
    bad "--force did not replace the file"
ls "$T" | grep -q '\.tmp\.' && bad "temporary files left behind" || ok "no temporary files left"

# Saved random weights load back into the same model, byte for byte.
expect 0 "wrote" "$Q" export encoder --seed 3 --save-weights "$T/w.npz" -o "$T/m1.onnx"
expect 0 "wrote" "$Q" export encoder --weights "$T/w.npz" -o "$T/m2.onnx"
cmp -s "$T/m1.onnx" "$T/m2.onnx" && ok "weights round trip gives identical models" ||
    bad "weights round trip changed the model"
expect 0 "wrote" "$Q" export encoder --seed 4 -o "$T/m3.onnx"
cmp -s "$T/m1.onnx" "$T/m3.onnx" && bad "another seed gave the same model" || ok "seeds differ"
expect 2 "exists" "$Q" export encoder --seed 3 --save-weights "$T/w.npz" -o "$T/m4.onnx"
# -o and --save-weights naming one file: refused before anything is written (the weights
# were written, then the model refused; with --force the model replaced the weights)
expect 2 "--save-weights $T/same.onnx and -o $T/./same.onnx name the same file" \
    "$Q" export encoder --save-weights "$T/same.onnx" -o "$T/./same.onnx"
[ -e "$T/same.onnx" ] && bad "a refused export left $T/same.onnx" || ok "nothing written"
expect 2 "name the same file" "$Q" export encoder --save-weights "$T/m1.onnx" -o "$T/m1.onnx" --force
expect 2 "weights: heads.reg.bias|heads 5 does not divide width 32" \
    "$Q" export encoder --weights "$T/w.npz" --heads 5 -o "$T/m5.onnx"
expect 2 "drop --features" "$Q" export encoder --weights "$T/w.npz" --width 16 -o "$T/m6.onnx"
expect 2 "cannot open|No such file" "$Q" export encoder --weights "$T/none.npz" -o "$T/m7.onnx"

# Bad options: one line, exit 2.
expect 2 "kv_heads 3 does not divide heads 4" "$Q" export sdpa --kv-heads 3 -o "$T/x.onnx"
expect 2 "heads 5 does not divide width 32" "$Q" export encoder --heads 5 -o "$T/x.onnx"
expect 2 "--static '2': expected B,L" "$Q" export sdpa --static 2 -o "$T/x.onnx"
expect 2 "--static \(length\) '0'" "$Q" export sdpa --static 2,0 -o "$T/x.onnx"
expect 2 "--static \(batch\) 'x'" "$Q" export sdpa --static x,3 -o "$T/x.onnx"
expect 2 "mask seqlen needs format attention24" "$Q" export sdpa --mask seqlen -o "$T/x.onnx"
expect 2 "--format 'attention22'" "$Q" export sdpa --format attention22 -o "$T/x.onnx"
expect 2 "--attention-dtype 'int8'" "$Q" export sdpa --attention-dtype int8 -o "$T/x.onnx"
expect 2 "layout 5: use 3" "$Q" export sdpa --layout 5 -o "$T/x.onnx"
expect 2 "--heads '-1'" "$Q" export sdpa --heads -1 -o "$T/x.onnx"
expect 2 "the encoder always takes a mask" "$Q" export encoder --mask none -o "$T/x.onnx"
expect 2 "unknown or incomplete option '--bogus'" "$Q" export sdpa --bogus -o "$T/x.onnx"
expect 2 "-o/--output MODEL.onnx is required" "$Q" export sdpa
expect 2 "'mlp' is not a model" "$Q" export mlp
[ -e "$T/x.onnx" ] && bad "a refused export wrote a file" || ok "refused exports wrote nothing"
expect 0 "--kv-heads G" "$Q" export sdpa --help
expect 0 "--regression-targets K" "$Q" export encoder --help
expect 0 "ortqual export encoder" "$Q" export --help

# inspect on files that are not models.
head -c 1000 "$T/enc_decomposed.onnx" >"$T/trunc.onnx"
expect 2 "trunc.onnx: not an ONNX model" "$Q" inspect "$T/trunc.onnx"
: >"$T/empty.onnx"
expect 2 "empty.onnx: not an ONNX model \(no ir_version\)" "$Q" inspect "$T/empty.onnx"
expect 2 "missing.onnx" "$Q" inspect "$T/missing.onnx"
expect 2 "expected one MODEL.onnx" "$Q" inspect
expect 2 "unknown option '--yaml'" "$Q" inspect --yaml "$T/enc_decomposed.onnx"
# --num-features, validate's name for the features per element, is export's --features too
expect 0 "wrote" "$Q" export encoder --num-features 5 -o "$T/nf.onnx"
expect 0 "features +float32 +\[batch, seq, 5\]" "$Q" inspect "$T/nf.onnx"

# validate's --weights-seed (up to 2^40) is export's --seed: the same weights, byte for byte (export
# stopped at 2^31-1, so a validation's weights above it could not be exported again)
expect 0 "verdict: PASSED" "$Q" validate --weights-seed 3000000000 --num-events 2 --no-plots --no-cache \
    --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/vs"
expect 0 "wrote" "$Q" export encoder --seed 3000000000 --save-weights "$T/ws.npz" -o "$T/ws.onnx"
cmp -s "$T/ws.npz" "$T/vs/weights.npz" && ok "validate's and export's weights of seed 3e9 are the same" ||
    bad "export --seed 3000000000 gave other weights than validate --weights-seed 3000000000"
expect 2 "--seed" "$Q" export encoder --seed 1099511627777 -o "$T/ws2.onnx"

# -o under a regular file or a missing folder: refused before the model is built, exit 2, as
# convert -o does (it was exit 3, "cannot create", after the work)
: > "$T/plainfile"
expect 2 "^ortqual export: -o: $T/plainfile/x.onnx: '$T/plainfile' is not a folder$" \
    "$ORTQUAL" export sdpa -o "$T/plainfile/x.onnx"
expect 2 "^ortqual export: -o: $T/nodir/x.onnx: folder '$T/nodir': No such file or directory$" \
    "$ORTQUAL" export encoder -o "$T/nodir/x.onnx"
[ ! -e "$T/nodir" ] && ok "nothing made under a missing folder" || bad "$T/nodir made"

# whole numbers: blanks before one are refused as blanks after it are (' 4' was taken, '4 ' refused)
for v in ' 4' '4 ' $'\t16'; do
    expect 2 "^ortqual export: --heads '.*': want a whole number in 1\.\.2147483647$" \
        "$ORTQUAL" export sdpa --heads "$v" -o "$T/blank.onnx"
done
expect 2 "^ortqual bench: --iters ' 3': want a whole number" "$ORTQUAL" bench --iters ' 3' --outdir "$T/blank"
[ ! -e "$T/blank.onnx" ] && [ ! -e "$T/blank" ] && ok "blanks: nothing written" || bad "blanks: something written"

report
