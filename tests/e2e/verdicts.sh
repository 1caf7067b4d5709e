#!/usr/bin/env bash
# No false greens (docs/verdicts.md): in every subcommand, a run in which nothing under test ran
# and was compared is not a pass (exit 1 with the reason) unless --allow-skip says so; a
# runtime error with nothing failed exits 3.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
CONF="$OQ_SOURCE_DIR/tests/data/onnx-backend/attention"
S=(--repeat 1 --no-plots --force)  # saved batches (--inputs): their files give the events
V=(--num-events 2 "${S[@]}")

# validate: only the reference ran
expect 1 "only the reference ran: no configuration under test was compared \(the first is the reference; add one after it, e.g. --configs ref:encoder:fp64,cpu:attention24:fp32\)" \
    "$Q" validate --configs ref:encoder:fp64 --outdir "$T/v1" "${V[@]}"
expect 0 "accepted by --allow-skip" "$Q" validate --configs ref:encoder:fp64 --allow-skip --outdir "$T/v2" "${V[@]}"
[ "$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d["exit_status"], d["tested"])' "$T/v2/summary.json")" = "untested 0 0" ] &&
    ok "summary.json: verdict untested, tested 0" || bad "untested summary"
# validate: the only configuration under test was skipped (no such execution provider here)
expect 1 "no configuration under test ran \(noep:attention24:fp32 skipped" \
    "$Q" validate --configs ref:encoder:fp64,noep:attention24:fp32 --outdir "$T/v3" "${V[@]}"
# validate: requirements that judged nothing (the only GPU configuration skipped) gave PASSED, exit 0,
# while the CPU-only case is refused for that very reason; now NOT TESTED, with the reason
RQ=(--configs ref:encoder:fp64,cpu:attention24:fp32,noep:attention24:fp32 --require-dispatch --require-full-gpu --prove-teeth)
expect 1 "^--require-full-gpu, --prove-teeth, --require-dispatch judged nothing: noep:attention24:fp32 skipped" \
    "$Q" validate "${RQ[@]}" --outdir "$T/vq1" "${V[@]}"
expect 0 "verdict: NOT TESTED" "$Q" validate "${RQ[@]}" --allow-skip --outdir "$T/vq2" "${V[@]}"
$PY - "$T/vq1/summary.json" <<'PYEOF' && ok "requirements recorded; placement of cpu is evidence, no verdict" || bad "vq1 summary"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "untested" and d["exit_status"] == 1 and d["tested"] == 1, d["verdict"]
assert d["requirements"] == ["--require-full-gpu", "--prove-teeth", "--require-dispatch"], d.get("requirements")
p = d["configs"][1]["placement"]
assert p["required"] is False and "passed" not in p, p
PYEOF
grep -q "full-GPU check: not judged here" "$T/vq1/report.html" && ! grep -q "not asked for (--require-full-gpu)" "$T/vq1/report.html" &&
    ok "report.html: cpu's full-GPU check not judged, not 'not asked for'" || bad "vq1 report.html placement wording"
# validate: an empty batch never passes (issue 15: it used to; then it compared nothing, exit 1):
# it is refused with the other input errors before any model runs
$PY -c 'import sys, numpy as np; np.savez(sys.argv[1], features=np.zeros((0, 8, 8), np.float32), mask=np.zeros((0, 8), np.float32))' "$T/empty.npz"
expect 2 "empty.npz: the batch has 0 events \(member 'mask' is \[0,8\]\)" \
    "$Q" validate --inputs "$T/empty.npz" --configs ref:encoder:fp64,cpu:decomposed:fp32 --outdir "$T/v4" "${S[@]}"
# validate, replay, bench: a tolerance that cannot fail passed every output (exit 0, PASSED);
# now refused before any model runs
expect 2 "tolerance 'rtol=1e308,atol=1e308': rtol 1e\+308 is 1 or more: an output of zeros would pass against any reference" \
    "$Q" validate --configs ref:encoder:fp64,cpu:decomposed:fp32 --tolerance rtol=1e308,atol=1e308 --outdir "$T/vt1" "${V[@]}"
expect 2 "tolerance 'reg:atol=1e308': atol 1e\+308 is float32's largest value \(3.4e38\) or more" \
    "$Q" validate --configs ref:encoder:fp64,cpu:decomposed:fp32 --tolerance reg:atol=1e308 --outdir "$T/vt2" "${V[@]}"
[ ! -e "$T/vt1/summary.json" ] && ok "nothing ran under a tolerance that cannot fail" || bad "$T/vt1 ran"
expect 2 "rtol 2 is 1 or more" "$Q" bench --model "$F/hand_attention/hand_attention_op18.onnx" \
    --inputs "$F/hand_attention/io.npz" --expected "$F/hand_attention/io.npz" --tolerance y:rtol=2 --iters 1 --warmup 0 \
    --quiet --outdir "$T/bt1"
# validate --model: fp32 and fp16 of one runtime run the same session (the file as it is; the
# precision is only the tolerance): the reference compared with itself gave PASSED, and it was
# the example the tool gave when nothing else could be compared; now refused
H=(--model "$F/hand_attention/hand_attention_op18.onnx" --inputs "$F/hand_attention/io.npz")
expect 2 "^ortqual validate: --configs: 'cpu:model:fp16' runs what the reference 'cpu:model:fp32' runs \(items 1 and 2\)" \
    "$Q" validate "${H[@]}" --configs cpu:model:fp32,cpu:model:fp16 --outdir "$T/vm1" "${S[@]}"
[ ! -e "$T/vm1" ] && ok "nothing made for a reference compared with itself" || bad "$T/vm1 made"
expect 0 "verdict: PASSED \(2 passed" "$Q" validate "${H[@]}" --configs expected,cpu:model:fp32,cpu:model:fp16 \
    --outdir "$T/vm2" "${S[@]}"
# --expected files make the saved outputs the reference of such a list too: two comparisons with
# them, none with itself (it was refused as the run compared with itself, before `expected` came first)
expect 0 "verdict: PASSED \(2 passed" "$Q" validate "${H[@]}" --expected "$F/hand_attention/io.npz" \
    --configs cpu:model:fp32,cpu:model:fp16 --outdir "$T/vm3" "${S[@]}"
# validate: a reference that cannot run is a runtime error
expect 3 "could not run: the reference cannot run: ref:sdpa needs input 'query'" "$Q" validate --configs ref:sdpa:fp64,cpu:decomposed:fp32 \
    --outdir "$T/v5" "${V[@]}"

# replay: no CUDA here, so the replayed provider is skipped: not a pass; --require makes it a failure
REPLAY=(--model "$F/hand_attention/hand_attention_op18.onnx" --inputs "$F/hand_attention/inputs_000.npz" --repeat 1 --force)
expect 1 "no configuration under test ran \(cuda:model:fp32 skipped" "$Q" replay "${REPLAY[@]}" --ep cuda --outdir "$T/r1"
expect 0 "verdict: NOT TESTED" "$Q" replay "${REPLAY[@]}" --ep cuda --allow-skip --outdir "$T/r2"
expect 1 "verdict: FAILED" "$Q" replay "${REPLAY[@]}" --ep cuda --require cuda:model:fp32 --outdir "$T/r3"
[ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["configs"][1].get("required"))' "$T/r3/summary.json")" = True ] &&
    ok "replay --require: the skip marked required" || bad "replay --require"
# an ORT that lists CUDAExecutionProvider without its provider libraries (onnxruntime-node's
# 1.30 core): the dynamic loader refuses them, and that is a missing EP (skipped), not a
# runtime error with ORT's raw words (exit 3)
need_ort130
expect 1 "cuda:model:fp32 skipped: EP 'cuda' is not available: .*ONNX Runtime 1.30.0 lists CUDAExecutionProvider but cannot load its provider libraries \(.*libonnxruntime_providers_shared.so: cannot open shared object file" \
    "$Q" replay "${REPLAY[@]}" --ort-lib "$ORT130" --ep cuda --outdir "$T/r130"
expect 1 "no variant under test ran" "$Q" bench --ort-lib "$ORT130" --variants cuda:attention24:fp16 --seq-lens 16 \
    --modes masked --num-heads 2 --head-dim 8 --iters 1 --warmup 0 --quiet --outdir "$T/b130"
# --require naming no configuration of the run never failed it: --model's default leaves cuda out
# where CUDA does not run, so `--require cuda:model:fp32` passed green with no CUDA (exit 0); now a
# usage error before any work. A canonical spelling with the kernel (":auto") still counts.
expect 2 "^ortqual validate: --require 'cuda:model:fp32': not a configuration of this run \(expected, cpu:model:fp32\)" \
    "$Q" validate --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/io.npz" \
    --require cuda:model:fp32 --outdir "$T/rq1" "${S[@]}"
[ ! -e "$T/rq1" ] && ok "nothing made for an unknown --require" || bad "$T/rq1 made"
expect 2 "^ortqual replay: --require 'cuda:model:fp16': not a configuration of this run" \
    "$Q" replay "${REPLAY[@]}" --ep cuda --require cuda:model:fp16 --allow-skip --outdir "$T/rq2"
expect 1 "verdict: FAILED" "$Q" validate --configs ref:encoder:fp64,noep:attention24:fp32 \
    --require noep:attention24:fp32:auto --allow-skip --outdir "$T/rq3" "${V[@]}"

# conformance: a run whose only test is skipped, and one with no test at all
expect 1 "no test passed \(1 run, all skipped or unsupported\)" "$Q" conformance "$CONF/test_attention_4d_expanded"
mkdir -p "$T/none"
expect 2 "no model.onnx" "$Q" conformance "$T/none"

# bench: only the reference, or only variants that cannot run here
B=(--seq-lens 16 --modes masked --num-heads 2 --head-dim 8 --iters 1 --warmup 0 --quiet)
expect 1 "no variant under test ran" "$Q" bench --variants ref "${B[@]}" --outdir "$T/b1"
expect 1 "no variant under test ran" "$Q" bench --variants cuda:attention24:fp16 "${B[@]}" --outdir "$T/b2"
expect 0 "accepted by --allow-skip" "$Q" bench --variants cuda:attention24:fp16 "${B[@]}" --allow-skip --outdir "$T/b3"
expect 0 "wrote" "$Q" bench --variants cpu:attention24:fp32 "${B[@]}" --outdir "$T/b4"

# gate: a command that ran no test, whatever its exit status
cat > "$T/zero.sh" <<'EOF'
#!/bin/sh
echo "0 passed, 0 failed"
EOF
chmod +x "$T/zero.sh"
expect 1 "zero tests passed" "$Q" gate -- "$T/zero.sh"
report
