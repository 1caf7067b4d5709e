#!/usr/bin/env bash
# Paths named inside input files are never opened: a saved-outputs comment (the archive comment
# validate --save-outputs writes) names the ORT library that saved them; one without its SHA-256
# whose path is a FIFO made validate and replay open it and wait for a writer for ever (SIGTERM
# did not end them either: each file's open was the next wait). Now the recorded path is compared
# as a string, and opened only where stat says it is a regular file of the ORT library's size (a
# copy of this ORT at another path is this ORT); a batch file that is a FIFO is refused, not
# waited on. Every run here is bounded by `timeout`: a hang is a failure (exit 124 or 137), not a
# stuck CI.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
M="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like"
IN=("$M/inputs_000.npz" "$M/inputs_001.npz")

# outputs saved by ORT CPU of this build: their comments name it by path and SHA-256
timeout 300 $ORTQUAL validate --model "$M/mlpf_like_op18.onnx" --inputs "${IN[@]}" --expected "$M/outputs_000.npz" \
  "$M/outputs_001.npz" --save-outputs --repeat 1 --no-plots --outdir "$T/so" > "$T/so.log" 2>&1 ||
  fail "validate --save-outputs: $(tail -3 "$T/so.log")"

# recomment LIB DIR: DIR/outputs_00N.npz, the saved outputs with the comment's ort_library set to
# LIB and its ort_library_sha256 and ort_build_id left out (as files saved before 2026-12-05 have it:
# a build-id recorded names the build whatever the path)
recomment() {
  mkdir -p "$2"
  $PY - "$1" "$2" "$T"/so/outputs_01_cpu_model_fp32_00[01].npz <<'PY'
import json, shutil, sys, zipfile
lib, to = sys.argv[1:3]
for i, src in enumerate(sys.argv[3:]):
    dst = "%s/outputs_%03d.npz" % (to, i)
    shutil.copy(src, dst)
    with zipfile.ZipFile(dst, "a") as z:
        mark = b"ortqual-outputs "
        assert z.comment.startswith(mark), z.comment[:40]
        prov = json.loads(z.comment[len(mark):])
        del prov["ort_library_sha256"]
        del prov["ort_build_id"]
        prov["ort_library"] = lib
        z.comment = mark + json.dumps(prov).encode()
PY
}

# bounded NAME CMD...: CMD runs to its end within 120 s (SIGKILL 10 s after timeout's SIGTERM)
bounded() {
  local name=$1 rc=0
  shift
  timeout -k 10 120 "$@" > "$T/$name.log" 2>&1 || rc=$?
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "$name: did not end (exit $rc): $(tail -3 "$T/$name.log")"
  echo $rc
}

# 1. the comment names a FIFO: nothing waits on it; the saved outputs are another build's
# (the path is not this ORT's), judged as a comparison: it runs and passes
mkfifo "$T/fifo"
recomment "$T/fifo" "$T/ff"
for cmd in "validate --repeat 1 --no-plots" replay; do
  # shellcheck disable=SC2086 # the subcommand and its options, split on purpose
  rc=$(bounded "${cmd%% *}-fifo" $ORTQUAL $cmd --model "$M/mlpf_like_op18.onnx" --inputs "${IN[@]}" \
    --expected "$T"/ff/outputs_00[01].npz --outdir "$T/${cmd%% *}-out")
  cmd=${cmd%% *}
  [ "$rc" -eq 0 ] && grep -q "verdict: PASSED" "$T/$cmd-fifo.log" && [ ! -e "$T/$cmd-out/.work" ] ||
    fail "$cmd against outputs whose comment names a FIFO: exit $rc: $(tail -3 "$T/$cmd-fifo.log")"
done

# 2. a recorded path that is this ORT's real file, as a string, is still told: ORT compared with
# itself is refused (exit 2), with the same message as by SHA-256
recomment "$(readlink -f "$OQ_ORT_LIB")" "$T/same"
rc=$(bounded same $ORTQUAL replay --model "$M/mlpf_like_op18.onnx" --inputs "${IN[@]}" \
  --expected "$T"/same/outputs_00[01].npz --outdir "$T/same-out")
[ "$rc" -eq 2 ] && grep -q "outputs_000.npz: saved by 'cpu:model:fp32' (validate --save-outputs) running this --model on cpu" \
  "$T/same.log" || fail "outputs saved by this ORT (by its path): exit $rc: $(cat "$T/same.log")"

# 2b. a byte-identical copy of this ORT at another path is this ORT: refused, naming both paths
cp "$(readlink -f "$OQ_ORT_LIB")" "$T/libcopy.so"
recomment "$T/libcopy.so" "$T/copy"
rc=$(bounded copy $ORTQUAL replay --model "$M/mlpf_like_op18.onnx" --inputs "${IN[@]}" \
  --expected "$T"/copy/outputs_00[01].npz --outdir "$T/copy-out")
[ "$rc" -eq 2 ] && grep -qF "($T/libcopy.so, the same bytes as $(readlink -f "$OQ_ORT_LIB"))" "$T/copy.log" ||
  fail "outputs saved by a copy of this ORT (named by its path): exit $rc: $(cat "$T/copy.log")"

# 3. a batch file that is a FIFO (--inputs, --expected) is refused at once, exit 2, one line
for opt in inputs expected; do
  files=(--inputs "${IN[@]}" --expected "$M/outputs_000.npz" "$M/outputs_001.npz")
  [ $opt = inputs ] && files[2]="$T/fifo" || files[5]="$T/fifo"
  rc=$(bounded "$opt-fifo" $ORTQUAL validate --model "$M/mlpf_like_op18.onnx" "${files[@]}" --repeat 1 --no-plots \
    --outdir "$T/$opt-out")
  [ "$rc" -eq 2 ] && [ "$(cat "$T/$opt-fifo.log")" = "ortqual validate: $T/fifo: is a FIFO (named pipe), not a regular file" ] ||
    fail "--$opt naming a FIFO: exit $rc: $(cat "$T/$opt-fifo.log")"
done
echo "saved paths: ok"
