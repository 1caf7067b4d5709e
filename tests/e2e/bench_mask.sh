#!/usr/bin/env bash
# bench --model finds the mask input from the graph, not its name: a real export whose mask is
# renamed ("valid") still gets a valid prefix per row (it got random integers: every row was
# all valid, the padded path never timed), an input named like a mask that is a Gather's ids
# gets ids (it got a prefix mask) and is said so, two inputs that each reach the scores are
# refused (--mask picks one), and the polarity is read from the graph (PyTorch's
# src_key_padding_mask, 1 = padding). stdout and summary.json say which input and why.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
L="$OQ_SOURCE_DIR/tests/e2e/lib"
LM="$F/torch/decoder_lm/decoder_lm_op18.onnx"
RUN=(--dim batch=4 --dim seq=16 --iters 1 --warmup 0 --threads 1 --quiet)
mask_of() { # summary.json -> "input source polarity polarity_source masked valid_tokens fill-of-each-input"
    $PY - "$1" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1])); c = j["config"]; r = j["results"][0]
print(c["mask_input"], c["mask_source"], c["mask_polarity"], c["mask_polarity_source"], r["masked"], r["valid_tokens"],
      ",".join("%s=%s" % (i["name"], i["fill"]) for i in r["inputs"]))
PYEOF
}

# 1. the mask renamed: found by what the graph does with it (Cast, And with the causal mask, Where)
$PY "$L/rename_input.py" "$LM" valid.onnx attention_mask valid || bad "rename_input.py"
expect 0 "^mask: input 'valid' \(graph: it flows into the attention scores" "$Q" bench --model valid.onnx "${RUN[@]}" \
    --int-range 0,49 --outdir a
got=$(mask_of a/summary.json 2>&1)
case "$got" in
"valid graph keep graph True "*" input_ids=integers,valid=mask")
    n=$(cut -d' ' -f6 <<<"$got")
    [ "$n" -gt 0 ] && [ "$n" -lt 64 ] && ok "renamed mask: a prefix per row ($n of 64 valid)" ||
        bad "renamed mask: valid_tokens $n" ;;
*) bad "renamed mask: $got" ;;
esac

# 2. an input named like a mask that is a Gather's indices: ids, and said in one line
$PY "$L/rename_input.py" "$LM" ids.onnx input_ids mask_token_ids || bad "rename_input.py"
out=$("$Q" bench --model ids.onnx "${RUN[@]}" --int-range 0,49 --outdir b 2>&1)
rc=$?
[ $rc = 0 ] && grep -qx "note: input 'mask_token_ids' is named like a mask but is not taken as the mask: it is the indices of a Gather (token ids or positions)" <<<"$out" &&
    grep -q "^mask: input 'attention_mask' (graph: " <<<"$out" && ok "a mask-named Gather index: said, not taken" ||
    bad "mask_token_ids: exit $rc: $out"
got=$(mask_of b/summary.json 2>&1)
[[ "$got" == "attention_mask graph keep graph True "*" mask_token_ids=integers,attention_mask=mask" ]] &&
    ok "mask_token_ids gets ids, attention_mask the prefix" || bad "mask_token_ids fills: $got"

# 3. two inputs that each reach the scores: which one is not guessed (exit 2, nothing written)
$PY "$L/two_masks.py" "$LM" two.onnx attention_mask keep Mul || bad "two_masks.py"
one_line 2 "^ortqual bench: two.onnx: inputs 'attention_mask', 'keep' may each be the \[batch, length\] mask \(each is used as one by the graph, or named like one\): name it \(--mask NAME\) or record it in the model's mask contract$" \
    "$Q" bench --model two.onnx "${RUN[@]}" --int-range 0,49 --outdir c
[ ! -e c ] && ok "two masks: nothing written" || bad "two masks: c/ written"
expect 0 "^mask: input 'keep' \(option: --mask names it\)" "$Q" bench --model two.onnx "${RUN[@]}" --int-range 0,49 \
    --mask keep --outdir d
got=$(mask_of d/summary.json 2>&1)
[[ "$got" == "keep option keep graph True "*",keep=mask" && "$got" == *"attention_mask=ones"* ]] &&
    ok "--mask keep: the mask, the other all ones" || bad "--mask keep: $got"
one_line 2 "^ortqual bench: two.onnx: --mask 'nope': the model has no such input \(inputs: input_ids, attention_mask, keep\)$" \
    "$Q" bench --model two.onnx "${RUN[@]}" --mask nope --outdir e
one_line 2 "^ortqual bench: --mask needs --model$" "$Q" bench --mask keep --outdir e

# 4. PyTorch's src_key_padding_mask (True = padding) read so from the graph: its zeros are the valid tokens
PM="$F/torch/tx_padmask/tx_padmask_op18.onnx"
expect 0 "^mask: input 'src_key_padding_mask' \(graph: .*\), 1 = padding \(as the graph reads it\)$" "$Q" bench \
    --model "$PM" "${RUN[@]}" --outdir f
got=$(mask_of f/summary.json 2>&1)
[[ "$got" == "src_key_padding_mask graph pad graph True "* ]] && ok "src_key_padding_mask: pad, from the graph" ||
    bad "src_key_padding_mask: $got"
# a given polarity the graph contradicts is refused (its rows would mask the tokens the model reads:
# QA round 9a, defect 1), naming the node that tells; the graph's own is taken
one_line 2 "^ortqual bench: .*tx_padmask_op18.onnx: --mask-polarity keep reads input 'src_key_padding_mask' with 1 = valid, but the graph reads it with 1 = padding \(Where 'node_masked_fill' masks the attention scores where 'src_key_padding_mask' is 1\)" \
    "$Q" bench --model "$PM" "${RUN[@]}" --mask-polarity keep --outdir g
expect 0 "1 = padding \(--mask-polarity\)$" "$Q" bench --model "$PM" "${RUN[@]}" --mask-polarity pad --outdir g

# 5. by its name: a model whose only rank-2 input named like a mask never reaches the scores has
# it as the mask by its name, as validate takes it (bench found none: the two disagreed)
expect 0 "^mask: input 'mask' \(name: its name contains \"mask\"\)" \
    "$Q" bench --model "$F/torch/wrong_axis/wrong_axis_op18.onnx" "${RUN[@]}" --outdir h
$PY -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; assert c["mask_input"] == "mask" and c["mask_source"] == "name", c' \
    h/summary.json 2>/dev/null && ok "by its name: mask, name" || bad "by its name: $(cat h/summary.json 2>&1 | head -3)"
report
