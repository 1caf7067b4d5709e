#!/usr/bin/env bash
# convert and inspect on models a graph author writes by hand (lib/author_models.py, after a QA
# pass): a graph without outputs is an input error, not ONNX Runtime's words; an opset-11 chain
# fuses and its opset is raised (the fused Softmax is no node of the output, a Softmax over the
# last axis means the same at 13); a com.microsoft attention is named and left as it is;
# refusals say the rule they apply; a fused chain something else still reads is said to stay;
# an opset-11 Softmax's axis is described as that opset reads it.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
(cd "$OQ_SOURCE_DIR/tests/e2e/lib" && $PY author_models.py "$T") || fail "author_models.py"

# no outputs: inspect warns; convert and validate refuse it as input (exit 2, the graph named),
# not exit 3 with ORT's "OrtValue indexes should have been populated"; nothing written
expect 0 "warning: the graph has no outputs" $Q inspect empty.onnx
expect 0 '^ +"the graph has no outputs: ONNX Runtime has nothing to compute"$' $Q inspect --json noout.onnx
for m in empty noout; do
    one_line 2 "^ortqual convert: $m\.onnx: the graph has no outputs: ONNX Runtime has nothing to compute$" \
        $Q convert $m.onnx -o x.onnx --flash
    [ ! -e x.onnx ] && ok "$m: nothing written" || bad "$m: x.onnx written"
done
expect 2 "noout\.onnx: the graph has no outputs" $Q validate --model noout.onnx --inputs noout_in.npz \
    --configs cpu:model:fp32 --outdir v
report
