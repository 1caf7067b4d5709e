#!/usr/bin/env bash
# QA hostile4 #5: a space after a comma in --configs made ' cpu:model:fp32' a plugin EP named
# " cpu", skipped, and the run PASSED. An item of any comma list holding whitespace is refused
# before anything runs (exit 2, one line naming the option, the item and its place).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q="$ORTQUAL"
M="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like/mlpf_like_op18.onnx"

one_line 2 "^ortqual validate: --configs 'expected,cpu:model:fp32, cpu:model:fp32': item 3 ' cpu:model:fp32' holds whitespace" \
    "$Q" validate --model "$M" --configs "expected,cpu:model:fp32, cpu:model:fp32" --outdir "$T/v1"
one_line 2 "^ortqual validate: --configs 'cpu:model:fp32 ': item 1 'cpu:model:fp32 ' holds whitespace" \
    "$Q" validate --model "$M" --configs "cpu:model:fp32 " --outdir "$T/v1"
one_line 2 "^ortqual bench: --variants 'ref, cpu:attention24:fp32': item 2 ' cpu:attention24:fp32' holds whitespace" \
    "$Q" bench --variants "ref, cpu:attention24:fp32" --outdir "$T/b1"
one_line 2 "^ortqual bench: --seq-lens '16, 32': item 2 ' 32' holds whitespace" \
    "$Q" bench --variants cpu:attention24:fp32 --seq-lens "16, 32" --outdir "$T/b1"
one_line 2 "^ortqual plot: --format 'png,.x09svg': item 2 '.x09svg' holds whitespace" \
    "$Q" plot "$T/none.json" --format "png,	svg" --out "$T/p1"
[ ! -e "$T/v1" ] && [ ! -e "$T/b1" ] && [ ! -e "$T/p1" ] && ok "refusals wrote nothing" || bad "refusals left outputs"
report
