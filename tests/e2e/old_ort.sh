#!/usr/bin/env bash
# Other ONNX Runtime builds than the bundled one: a damaged library is refused with what is wrong
# (a truncated copy crashed the loader with SIGBUS; one of another machine was "No such file");
# --version with an --ort-lib that does not load exits 3; and an older ORT (libold_ort.so: the
# bundled one calling itself 1.17.3, C API 17, refusing IR above 9) is told apart: --list-configs
# says which configurations it cannot run and why, a bench sweep row gets the refusal explained,
# doctor says EP devices cannot be asked rather than "(none)".
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
unset ORTQUAL_ORT_LIB
mkdir -p "$T/nodev"
export ORTQUAL_TEST_DEVICE_ROOT="$T/nodev" # no GPU: the cuda configurations are not asked

# 1. A truncated library: one line, exit 3, in every command (the loader died of SIGBUS)
head -c 14000000 "$OQ_ORT_LIB" >"$T/trunc.so"
TRUNC='trunc.so \(truncated or damaged: its ELF program headers map 28\.[0-9] MB, the file has 14\.0 MB\)'
expect 3 "$TRUNC" "$Q" doctor --ort-lib "$T/trunc.so"
expect 3 "$TRUNC" "$Q" --version --ort-lib "$T/trunc.so"
expect 3 "$TRUNC" env ORTQUAL_ORT_LIB="$T/trunc.so" "$Q" doctor
"$Q" doctor --json --ort-lib "$T/trunc.so" >"$T/dt.json" 2>/dev/null
rc=$?
if [ "$rc" -eq 3 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ort"] is None and any("truncated" in p for p in d["problems"]), d' "$T/dt.json"; then
    ok "doctor --json: the document, ort null, the reason in problems"
else bad "doctor --json on a truncated library: exit $rc, $(head -c 300 "$T/dt.json")"; fi
expect 3 "$TRUNC" "$Q" validate --ort-lib "$T/trunc.so" --num-events 2 --outdir "$T/v"
expect 3 "$TRUNC" "$Q" bench --ort-lib "$T/trunc.so" --variants cpu:decomposed:fp32 --seq-lens 16 \
    --modes masked --iters 2 --outdir "$T/b0"
# A bare name (no '/') is the dynamic loader's to find: one found in a folder of LD_LIBRARY_PATH
# is checked as a path is (it was not: SIGBUS), for ORT and for an EP library alike, whether the
# folder is the current one or not (an EP library there was found by access(), then handed to ORT
# by its bare name, which ORT looks for in its own folder: another file than the one found)
mkdir -p "$T/ldp"
cp "$T/trunc.so" "$T/ldp/libtrunc_ort.so"
cp "$T/trunc.so" "$T/ldp/libtrunc_ep.so"
expect 3 'libtrunc_ort\.so \(truncated or damaged: its ELF program headers map 28\.[0-9] MB' \
    env LD_LIBRARY_PATH="$T/nodev:$T/ldp" "$Q" doctor --ort-lib libtrunc_ort.so
expect 3 'libtrunc_ort\.so \(truncated or damaged' env LD_LIBRARY_PATH="$T/ldp" ORTQUAL_ORT_LIB=libtrunc_ort.so "$Q" doctor
BENCH=(bench --variants cpu:decomposed:fp32 --seq-lens 16 --modes masked --iters 2)
expect 3 "^ortqual bench: cannot load EP library libtrunc_ep\.so \($T/ldp/libtrunc_ep\.so\): truncated or damaged" \
    env LD_LIBRARY_PATH="$T/ldp" "$Q" "${BENCH[@]}" --ep-lib trunc=libtrunc_ep.so --outdir "$T/b1"
expect 3 "^ortqual bench: cannot load EP library libtrunc_ep\.so \($T/ldp/libtrunc_ep\.so\): truncated or damaged" \
    env -C "$T/ldp" LD_LIBRARY_PATH="$T/ldp" "$Q" "${BENCH[@]}" --ep-lib trunc=libtrunc_ep.so --outdir "$T/b2"

# 2. Another machine's library (e_machine patched): not "No such file or directory"
if [ "$(uname -m)" = x86_64 ]; then
    cp "$OQ_ORT_LIB" "$T/arm.so"
    printf '\xb7\x00' | dd of="$T/arm.so" bs=1 seek=18 conv=notrunc status=none
    expect 3 'arm\.so \(ELF for ARM aarch64, this process is x86-64\)' "$Q" doctor --ort-lib "$T/arm.so"
fi

# 3. --version: an --ort-lib that does not load is exit 3, without one the tool's version is 0
printf 'not a library\n' >"$T/notort.so"
expect 3 'ONNX Runtime: not loaded \(.*notort\.so' "$Q" --version --ort-lib "$T/notort.so"
expect 0 "ONNX Runtime 1\.29\.0 \(C API 29\)" "$Q" --version --ort-lib "$OQ_ORT_LIB"

# 4. --list-configs loads the ORT named: one that does not load runs nothing but the reference
expect 0 '^  cpu:decomposed:fp32 +not here: cannot load ONNX Runtime; tried: .*notort\.so' \
    "$Q" validate --list-configs --ort-lib "$T/notort.so"
expect 0 '^  ref:encoder:fp64 +possible here$' "$Q" validate --list-configs --ort-lib "$T/notort.so"

# 5. An older ORT: the IR versions it reads decide, the default run says which it cannot run
cp "$OQ_BINARY_DIR/tests/libold_ort.so" "$T/libonnxruntime.so"
export OLD_ORT_REAL="$OQ_ORT_LIB"
OLD="$T/libonnxruntime.so"
expect 0 '^  cpu:attention23:fp32 +not here: ONNX Runtime 1\.17\.3 refuses attention23 models \(ONNX IR 11, opset 23\): the file is stamped with ONNX IR version 11; this ONNX Runtime reads IR versions up to 9$' \
    "$Q" validate --list-configs --ort-lib "$OLD"
expect 0 '^  cpu:decomposed:fp32 +possible here$' "$Q" validate --list-configs --ort-lib "$OLD"
expect 0 '^of which cannot run here \(see above\): cpu:attention23:fp32, cpu:attention24:fp32, cpu:attention24:fp16$' \
    "$Q" validate --list-configs --ort-lib "$OLD"
"$Q" validate --list-configs --json --ort-lib "$OLD" >"$T/lc.json" 2>"$T/lc.err"
if "$PY" - "$T/lc.json" <<'PYEOF'; then ok "--list-configs --json on ORT 1.17.3"; else bad "--list-configs --json: $(head -c 600 "$T/lc.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in d["configs"]}
assert d["ort"]["version"] == "1.17.3" and d["ort"]["api_version"] == 17, d["ort"]
assert c["cpu:decomposed:fp32"]["possible"] and c["cpu:decomposed:fp32"]["why_not"] is None
assert not c["cpu:attention24:fp16"]["possible"]
assert "reads IR versions up to 9" in c["cpu:attention24:fp16"]["why_not"], c["cpu:attention24:fp16"]
assert c["ref:encoder:fp64"]["possible"]
assert d["default_not_here"] == ["cpu:attention23:fp32", "cpu:attention24:fp32", "cpu:attention24:fp16"], d
PYEOF
# the bundled ORT runs them all
expect 0 '^  cpu:attention24:fp16 +possible here$' "$Q" validate --list-configs --ort-lib "$OQ_ORT_LIB"
if "$Q" validate --list-configs --ort-lib "$OQ_ORT_LIB" | grep -q 'cannot run here'; then
    bad "--list-configs on ORT 1.29: a default configuration said not to run"
else ok "--list-configs on ORT 1.29: every default configuration runs"; fi

# 6. A bench sweep row that ORT refuses is explained, as a --model row is; a runtime error
#    (row `error`, exit 3 with no row failed, as validate's)
expect 3 'refused by ONNX Runtime \[ir-too-new\]: the file is stamped with ONNX IR version 12; this ONNX Runtime reads IR versions up to 9' \
    "$Q" bench --ort-lib "$OLD" --variants cpu:decomposed:fp32,cpu:attention24:fp32 --seq-lens 16 --modes masked \
    --num-heads 2 --head-dim 8 --iters 2 --warmup 0 --outdir "$T/b1"
if "$PY" -c '
import json, sys
r = {x["variant"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert r["cpu:decomposed:fp32"]["status"] == "ok", r["cpu:decomposed:fp32"]
e = r["cpu:attention24:fp32"]["error"]
assert r["cpu:attention24:fp32"]["status"] == "error" and e.startswith("refused by ONNX Runtime [ir-too-new]"), e
' "$T/b1/summary.json"; then ok "bench sweep: the refused row explained, the other ran"
else bad "bench sweep summary: $(head -c 600 "$T/b1/summary.json")"; fi

# 7. doctor on C API 17: EP devices were not asked, which is not "(none)"
expect 0 'not available: EP devices need ORT C API 22, ONNX Runtime 1\.17\.3 offers 17' "$Q" doctor --ort-lib "$OLD"
"$Q" doctor --json --ort-lib "$OLD" >"$T/d17.json" 2>/dev/null
if "$PY" -c '
import json, sys
o = json.load(open(sys.argv[1]))["ort"]
assert o["ep_devices"] is None and "need ORT C API 22" in o["ep_devices_unavailable"], o
' "$T/d17.json"; then ok "doctor --json: ep_devices null with the reason"; else bad "doctor --json ort: $(head -c 600 "$T/d17.json")"; fi
"$Q" doctor --json --ort-lib "$OQ_ORT_LIB" >"$T/d29.json" 2>/dev/null
if "$PY" -c '
import json, sys
o = json.load(open(sys.argv[1]))["ort"]
assert isinstance(o["ep_devices"], list) and o["ep_devices"] and o["ep_devices_unavailable"] is None, o
' "$T/d29.json"; then ok "doctor --json on 1.29: EP devices asked"; else bad "doctor --json 1.29 ort: $(head -c 600 "$T/d29.json")"; fi

report
