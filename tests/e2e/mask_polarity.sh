#!/usr/bin/env bash
# --mask-polarity pad: a model whose bool mask marks padding with true (PyTorch's
# src_key_padding_mask; here the tx_encoder fixture with a Not in front of its readers, fed its
# inputs with the mask inverted) validates and replays with its real padding: the same valid
# elements as the fixture itself, its padding judged. Without the option the graph's reading
# (that Not) is taken; --mask-polarity keep, which the graph contradicts, is refused naming the
# node. Generated events feed
# such a model their mask inverted, as convert's check does; bench counts the zeros valid;
# convert --mask-to-seqlen counts them too. A polarity, keep as well as pad when given, with no
# mask or ortqual's own models is refused.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q="$ORTQUAL"
PY=/usr/bin/python3
F="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
cd "$T" || exit 1

$PY "$OQ_SOURCE_DIR/tests/e2e/lib/pad_polarity.py" model "$F/tx_encoder_op18.onnx" pad.onnx mask &&
    $PY "$OQ_SOURCE_DIR/tests/e2e/lib/pad_polarity.py" npz "$F/io.npz" io_pad.npz mask || fail "making the pad model"
V=(--configs expected,cpu:model:fp32 --no-plots)
valid() { $PY -c "import json,sys; print(json.load(open(sys.argv[1]))['batches'][0]['valid_size'])" "$1" 2>/dev/null; }

# 1. read with 1 = valid (--mask-polarity keep), which the graph contradicts: refused, naming the
#    node and the option that reads it as the graph does (QA round 9a, defect 1); without it, the
#    graph's reading (the Not before its readers) is taken: 1 = padding
expect 2 "^ortqual validate: pad.onnx: --mask-polarity keep reads input 'mask' with 1 = valid, but the graph reads it with 1 = padding \(Where '[^']+' masks the attention scores where 'mask' is 1\).*--mask-polarity pad reads it as the graph does" \
    "$Q" validate --model pad.onnx --inputs io_pad.npz --mask-polarity keep --outdir keep "${V[@]}"
expect 0 "^mask: input 'mask' read with 1 = padding, as the graph reads it" \
    "$Q" validate --model pad.onnx --inputs io_pad.npz --outdir graph "${V[@]}"
# 1b. ortqual's own model (and its C encoder) read 1 = valid alone: the advice is 1 - mask, never
#     the option the same run refuses (QA mlpf2 #4)
$PY - <<'PY' || fail "making the left-padded encoder inputs"
import numpy as np
m = np.zeros((2, 8), np.float32); m[0, :5] = 1; m[1, :3] = 1
x = np.random.default_rng(0).standard_normal((2, 8, 8)).astype(np.float32)
np.savez("enc_pad.npz", features=x, mask=1 - m)
PY
out=$("$Q" validate --inputs enc_pad.npz --configs ref:encoder:fp64,cpu:attention24:fp32 --no-cache --no-plots --outdir own 2>&1)
[ $? -eq 2 ] && grep -q "so save 1 - mask)$" <<<"$out" && ! grep -q -- "--mask-polarity" <<<"$out" &&
    ok "ortqual's model: the advice is 1 - mask alone" || bad "ortqual's model, left-padded mask: $out"
# 2. read with 1 = padding: the fixture's valid elements, its padding judged
expect 0 "verdict: PASSED" "$Q" validate --model pad.onnx --inputs io_pad.npz --mask-polarity pad --outdir pad "${V[@]}"
expect 0 "verdict: PASSED" "$Q" validate --model "$F/tx_encoder_op18.onnx" --inputs "$F/io.npz" --outdir orig "${V[@]}"
a=$(valid pad/summary.json) b=$(valid orig/summary.json)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "pad: valid_size $a, as the fixture's" || bad "pad: valid_size '$a', the fixture's '$b'"
g=$(valid graph/summary.json)
[ "$g" = "$b" ] && ok "pad from the graph: valid_size $g, as the fixture's" || bad "pad from the graph: valid_size '$g', the fixture's '$b'"
[ "$($PY -c "import json; o=json.load(open('pad/summary.json'))['configs'][1]['batches'][0]['outputs'][0]['padding']; print(o['checked'] and o['padded'] > 0)")" = True ] &&
    ok "pad: padding judged" || bad "pad: padding not judged"
expect 0 "verdict: PASSED" "$Q" replay --model pad.onnx --inputs io_pad.npz --mask-polarity pad --reference expected --outdir rpad
# 3. generated events feed the model a mask whose 1 is padding (position 0 of every event valid: 0)
#    (the reference alone: the inputs are what is looked at)
expect 0 "verdict: NOT TESTED" "$Q" validate --model pad.onnx --mask-polarity pad --num-events 4 --batch-size 2 \
    --configs cpu:model:fp32 --allow-skip --no-plots --outdir gen
$PY - gen/inputs_000.npz <<'PY' && ok "generated: the mask fed is 1 = padding" || bad "generated: the mask fed is not 1 = padding"
import sys, zipfile
d = zipfile.ZipFile(sys.argv[1]).read("mask.npy")
n = 10 + int.from_bytes(d[8:10], "little")
shape = eval(d[10:n].decode())["shape"]
rows = [d[n + b * shape[1]:n + (b + 1) * shape[1]] for b in range(shape[0])]
assert all(r[0] == 0 and sorted(r) == list(r) for r in rows), rows
assert any(1 in r for r in rows), rows  # some padding, read as 1
PY
# 4. bench --model counts a row's valid tokens as the mask's zeros (it counted the padding's ones)
tokens() { $PY -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['valid_tokens'])" "$1" 2>/dev/null; }
expect 0 "report: bpad/report.html" "$Q" bench --model pad.onnx --inputs io_pad.npz --mask-polarity pad --iters 1 \
    --warmup 0 --outdir bpad
[ "$(tokens bpad/summary.json)" = "$b" ] && ok "bench: valid_tokens $b" || bad "bench: valid_tokens '$(tokens bpad/summary.json)', want $b"
expect 2 "^ortqual bench: --mask-polarity pad: no input of the model is the mask \(rank 2 \[batch, length\]: the input the mask contract or --mask names, else the one the graph uses as a mask\)" \
    "$Q" bench --model "$OQ_SOURCE_DIR/tests/fixtures/onnx/default_input.onnx" --dim batch=2 \
    --mask-polarity pad --iters 1 --outdir bx
expect 2 "^ortqual bench: --mask-polarity reads the mask of a --model file" "$Q" bench --mask-polarity pad --iters 1 --outdir by
# a given keep, the default's value, would be ignored all the same: refused so (it ran)
expect 2 "^ortqual bench: --mask-polarity keep: no input of the model is the mask" \
    "$Q" bench --model "$OQ_SOURCE_DIR/tests/fixtures/onnx/default_input.onnx" --dim batch=2 \
    --mask-polarity keep --iters 1 --outdir bx
expect 2 "^ortqual bench: --mask-polarity reads the mask of a --model file" "$Q" bench --mask-polarity keep --iters 1 --outdir by
# 5. convert's check reads the batches' mask so, and generates it so (it generated 1 = valid
#    masks: the reference's fully padded rows were NaN, "differs from the reference", exit 1;
#    valid counts elements of out [B, L, 3])
expect 0 "batch 0 vs expected +out: PASS valid=$((b * 3))/" "$Q" convert pad.onnx -o c_in.onnx --fuse --expand-mask \
    --mask-polarity pad --inputs io_pad.npz --expected io_pad.npz
expect 0 "batch 1 vs reference +out: PASS" "$Q" convert pad.onnx -o c_gen.onnx --fuse --expand-mask --mask-polarity pad
expect 2 "^ortqual convert: pad.onnx: --mask-polarity keep \(the default\) reads input 'mask' with 1 = valid, but the graph reads it with 1 = padding .*--mask-polarity pad reads it as the graph does" \
    "$Q" convert pad.onnx -o c_keep.onnx --fuse --expand-mask --inputs io_pad.npz
expect 2 "default_input.onnx: --mask-polarity pad, but no input is the mask \(--mask NAME names one\)" \
    "$Q" convert "$OQ_SOURCE_DIR/tests/fixtures/onnx/default_input.onnx" -o c_none.onnx --fuse --mask-polarity pad
# 5b. --mask-to-seqlen reads the pad mask's key padding: the lengths count its zeros (a Not before
#     the sum); convert's check passes on given and generated batches, and validate of the
#     converted model passes against the saved outputs with the fixture's valid elements (it was
#     refused: "the mask keeps only the keys where 'mask' is 0")
"$Q" convert pad.onnx -o c_len.onnx --fuse --mask-to-seqlen --mask-polarity pad --inputs io_pad.npz \
    --expected io_pad.npz >c_len.log 2>&1
rc=$? n=$(grep -cE "mask-to-seqlen +rewritten .*nonpad_kv_seqlen = ReduceSum\(Not\('mask'\), axis 1\)" c_len.log)
[ "$rc" = 0 ] && [ "$n" = 2 ] && grep -qE "batch 0 vs expected +out: PASS valid=$((b * 3))/" c_len.log &&
    ok "convert --mask-to-seqlen --mask-polarity pad: both nodes, PASS" ||
    bad "convert --mask-to-seqlen --mask-polarity pad: exit $rc, $n nodes rewritten: $(cat c_len.log)"
grep -aq '"input":"mask","contract":"valid_prefix","nodes":\[[^]]*\],"polarity":"pad"' c_len.onnx &&
    ok "the contract records polarity pad" || bad "the contract does not record polarity pad"
expect 0 "batch 1 vs reference +out: PASS" "$Q" convert pad.onnx -o c_len_gen.onnx --fuse --mask-to-seqlen --mask-polarity pad
expect 0 "attention_1: attn_mask '[^']*' is the key padding of input 'mask': nonpad_kv_seqlen = ReduceSum\(Not\('mask'\)" \
    "$Q" convert pad.onnx --plan --flash --mask-polarity pad
expect 2 "default_input.onnx: --mask-polarity pad, but no input is the mask \(--mask NAME names one\)" \
    "$Q" convert "$OQ_SOURCE_DIR/tests/fixtures/onnx/default_input.onnx" --plan --flash --mask-polarity pad
expect 0 "verdict: PASSED" "$Q" validate --model c_len.onnx --inputs io_pad.npz --mask-polarity pad --outdir len "${V[@]}"
# the contract is stated with its polarity (validate said "a valid prefix", which reads as ones
# then zeros) and inspect shows it (it showed nothing)
expect 0 "c_len\.onnx: ortqual\.mask_contract: input 'mask' must be a valid prefix \(zeros, then ones: 1 = padding\) in every batch" \
    "$Q" validate --model c_len.onnx --inputs io_pad.npz --outdir len_said "${V[@]}"
expect 0 "^mask contract input 'mask' is a valid prefix \(zeros, then ones: 1 = padding\) in every batch" "$Q" inspect c_len.onnx
"$Q" inspect --json c_len.onnx >c_len.json && "$Q" inspect --json pad.onnx >pad.json
if $PY -c '
import json, sys
a, b = json.load(open("c_len.json")), json.load(open("pad.json"))
assert a["mask_contract"] == {"input": "mask", "contract": "valid_prefix", "polarity": "pad"}, a["mask_contract"]
assert b["mask_contract"] is None, b["mask_contract"]
'; then ok "inspect --json: mask_contract"; else bad "inspect --json: mask_contract: $(grep -A4 mask_contract c_len.json pad.json)"; fi
a=$(valid len/summary.json)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "mask-to-seqlen, pad: valid_size $a, as the fixture's" ||
    bad "mask-to-seqlen, pad: valid_size '$a', the fixture's '$b'"
[ "$($PY -c "import json; c=json.load(open('len/summary.json'))['configs'][1]; print(c['name'], c['batches'][0]['outputs'][0]['padding']['checked'])")" = "cpu:model:fp32 True" ] &&
    ok "mask-to-seqlen, pad: the converted model compared" || bad "mask-to-seqlen, pad: the converted model not compared"
# 5c. the contract keeps its polarity: converted again, the model's check generates pad masks
#     (it generated 1 = valid ones, whose degenerate rows compared max_abs=0 at fp16: a false
#     green) and the output records "polarity":"pad" again; validate and replay read the
#     contract's polarity without --mask-polarity (they refused the mask as left padding); a
#     --mask-polarity keep that contradicts the contract is refused everywhere, nothing written
"$Q" convert c_len.onnx -o c_again.onnx --attention-dtype fp16 >c_again.log 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "valid prefix (zeros, then ones: 1 = padding)" c_again.log &&
    grep -qE "batch 0 vs reference +out: PASS .* max_abs=[0-9.]*[1-9]" c_again.log &&
    ! grep -qE "max_abs=0 " c_again.log && ok "converted again: the check used pad masks" ||
    bad "converted again: exit $rc, not checked with pad masks: $(cat c_again.log)"
grep -aq '"input":"mask","contract":"valid_prefix","nodes":\[[^]]*\],"polarity":"pad"' c_again.onnx &&
    ok "converted again: the contract keeps polarity pad" || bad "converted again: the contract lost polarity pad"
pk="c_len.onnx: --mask-polarity keep, but the model's ortqual.mask_contract says polarity pad$"
one_line 2 "^ortqual convert: $pk" "$Q" convert c_len.onnx -o c_keep2.onnx --attention-dtype fp16 --mask-polarity keep
[ ! -e c_keep2.onnx ] && ok "convert keep on a pad contract: nothing written" || bad "convert keep on a pad contract wrote c_keep2.onnx"
one_line 2 "^ortqual validate: $pk" "$Q" validate --model c_len.onnx --inputs io_pad.npz --mask-polarity keep --outdir lenk \
    "${V[@]}"
one_line 2 "^ortqual replay: $pk" "$Q" replay --model c_len.onnx --inputs io_pad.npz --mask-polarity keep \
    --reference expected --outdir rlenk
expect 0 "verdict: PASSED" "$Q" validate --model c_len.onnx --inputs io_pad.npz --outdir len2 "${V[@]}"
a=$(valid len2/summary.json)
[ -n "$a" ] && [ "$a" = "$b" ] &&
    [ "$($PY -c "import json; c=json.load(open('len2/summary.json'))['configs'][1]; print(c['name'], c['batches'][0]['outputs'][0]['padding']['checked'])")" = "cpu:model:fp32 True" ] &&
    ok "the contract's pad read without the option: valid_size $a, compared" ||
    bad "the contract's pad read without the option: valid_size '$a' (the fixture's '$b') or not compared"
expect 0 "verdict: PASSED" "$Q" replay --model c_len.onnx --inputs io_pad.npz --reference expected --outdir rlen2
# 5d. convert's --inputs check reads the batches in the contract's polarity too (it read them with
#     --mask-polarity's default, keep: the pad mask refused as left padding, exit 2); a given keep
#     that contradicts the contract is refused as such, with batches as without
expect 0 "batch 0 vs reference +out: PASS valid=$((b * 3))/" "$Q" convert c_len.onnx -o c_in_again.onnx \
    --attention-dtype fp16 --inputs io_pad.npz
one_line 2 "^ortqual convert: $pk" "$Q" convert c_len.onnx -o c_keep3.onnx --attention-dtype fp16 --mask-polarity keep \
    --inputs io_pad.npz
[ ! -e c_keep3.onnx ] && ok "convert --inputs keep on a pad contract: nothing written" ||
    bad "convert --inputs keep on a pad contract wrote c_keep3.onnx"
# 5e. bench --model reads the contract's polarity as validate does (one rule,
#     oq_contract_polarity_adopt): without --mask-polarity it read the pad mask as 1 = valid, so
#     --expected refused it as left padding (exit 2) and valid_tokens counted the padding; a given
#     keep that contradicts the contract is refused as validate refuses it
expect 0 "report: blen/report.html" "$Q" bench --model c_len.onnx --inputs io_pad.npz --expected io_pad.npz --iters 1 \
    --warmup 0 --threads 1 --outdir blen
[ "$(tokens blen/summary.json)" = "$b" ] && ok "bench of the pad contract: valid_tokens $b, as validate's valid_size" ||
    bad "bench of the pad contract: valid_tokens '$(tokens blen/summary.json)', validate's $b"
[ "$($PY -c "import json; r=json.load(open('blen/summary.json'))['results'][0]; print(r['status'], r['accuracy']['max_abs_err'] is not None and r['accuracy']['max_abs_err'] < 1e-3)")" = "ok True" ] &&
    ok "bench of the pad contract: compared with --expected" || bad "bench of the pad contract: not compared"
one_line 2 "^ortqual bench: $pk" "$Q" bench --model c_len.onnx --inputs io_pad.npz --mask-polarity keep --iters 1 \
    --warmup 0 --outdir blenk
[ ! -e blenk/summary.json ] && ok "bench keep on a pad contract: nothing written" || bad "bench keep on a pad contract wrote blenk"
# 6. refused: no mask to read, ortqual's models, a value other than keep or pad
expect 2 "contradict: --mask-polarity says how to read the mask, --no-mask says there is none" \
    "$Q" validate --model pad.onnx --inputs io_pad.npz --mask-polarity pad --no-mask --outdir x1 "${V[@]}"
expect 2 "--mask-polarity is about the inputs of a --model" \
    "$Q" validate --mask-polarity pad --no-plots --outdir x2
expect 2 "config 'ref:encoder:fp64': ortqual's C encoder reads its mask with 1 = valid \(--mask-polarity keep\)" \
    "$Q" validate --model pad.onnx --weights w.npz --heads 4 --inputs io_pad.npz --mask-polarity pad \
    --configs ref:encoder:fp64,cpu:model:fp32 --no-plots --outdir x4
# ... and so does a contract's pad, the option not given (the encoder ran on the pad masks)
"$Q" export encoder -o enc.onnx --save-weights w4.npz >/dev/null 2>&1 || fail "exporting the encoder's weights"
expect 2 "^ortqual validate: config 'ref:encoder:fp64': ortqual's C encoder reads its mask with 1 = valid \(--mask-polarity keep\): it cannot judge a --model that reads 1 = padding \(the model's ortqual.mask_contract says polarity pad\)$" \
    "$Q" validate --model c_len.onnx --weights w4.npz --heads 4 --inputs io_pad.npz \
    --configs ref:encoder:fp64,cpu:model:fp32 --no-plots --outdir x5
expect 2 "--mask-polarity 'yes': want keep \(1 = valid\) or pad \(1 = padding\)" \
    "$Q" replay --model pad.onnx --inputs io_pad.npz --mask-polarity yes --outdir x3
# a given keep, the default's value, is refused where pad is: no input is the mask (an Attention's
# [B, H, Lq, Lk] attn_mask as it is is none), so it would be ignored all the same (it ran); the
# default runs
A="$OQ_SOURCE_DIR/tests/fixtures/onnx/attention_qk_neginf"
for pol in pad keep; do
    one_line 2 "^ortqual validate: .*attention_qk_neginf.onnx: --mask-polarity $pol, but no input is the mask \(--mask NAME names one\)$" \
        "$Q" validate --model "$A.onnx" --inputs "$A.npz" --mask-polarity $pol --configs cpu:model:fp32 --allow-skip \
        --no-plots --outdir "xv$pol"
    one_line 2 "^ortqual replay: .*attention_qk_neginf.onnx: --mask-polarity $pol, but no input is the mask \(--mask NAME names one\)$" \
        "$Q" replay --model "$A.onnx" --inputs "$A.npz" --mask-polarity $pol --reference expected --outdir "xr$pol"
done
expect 0 "verdict: NOT TESTED" "$Q" validate --model "$A.onnx" --inputs "$A.npz" --configs cpu:model:fp32 --allow-skip \
    --no-plots --outdir xvd
report
