#!/usr/bin/env bash
# validate --cache-dir where the run would not use it is refused, as every option the run would
# not use is (QA round 9b, minor note): with the reference 'expected' or an ORT reference it was
# accepted and summary.json said "off: only a C reference (ref:*) is cached". Also with
# --repeat-reference (the reference then runs every batch). One line, exit 2, nothing made.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
FX="$F/torch/mlpf_like"
WHY="nothing would be read from it or stored in it$"
one_line 2 "^ortqual validate: --cache-dir keeps a C reference's outputs \(ref:\*\), and here the reference 'expected' is read from the saved outputs \('expected'\): $WHY" \
    $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" --cache-dir "$T/c1" --outdir o1
one_line 2 "and here the reference runs on ONNX Runtime \('cpu:decomposed:fp32'\): $WHY" \
    $Q validate --configs cpu:decomposed:fp32,cpu:attention24:fp32 --num-events 3 --cache-dir "$T/c2" --outdir o2
one_line 2 "and here --repeat-reference times the reference, so every batch runs \('ref:encoder:fp64'\): $WHY" \
    $Q validate --num-events 3 --repeat-reference --cache-dir "$T/c3" --outdir o3
for d in c1 c2 c3 o1 o2 o3; do [ ! -e "$d" ] && ok "$d not made" || bad "$d made: $(ls -A "$d")"; done
# the default cache (not given) is still only noted off
expect 0 "verdict: PASSED" $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" --outdir o4 --progress never
report
