#!/usr/bin/env bash
# ortqual doctor and --version against the real ONNX Runtime 1.29 (CPU build).
set -u
: "${ORTQUAL:?}" "${OQ_ORT_LIB:?}"
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect RC WANT_IN_OUTPUT CMD...: exit status and a piece of stdout+stderr
expect() {
    local rc=$1 want=$2
    shift 2
    local out got
    out=$("$@" 2>&1)
    got=$?
    [ "$got" -eq "$rc" ] || fail "$* exited $got, wanted $rc; output: $(echo "$out" | tail -3)"
    case "$out" in *"$want"*) ;; *) fail "$*: output lacks '$want'; got: $(echo "$out" | tail -3)" ;; esac
}

unset ORTQUAL_ORT_LIB

# Text report: the bundled ORT found beside the tool, the CPU EP ran.
"$ORTQUAL" doctor >"$tmp/d.txt" 2>&1 || fail "doctor exited $?"
for want in "version     1.29.0 (C API 29)" "CPUExecutionProvider   default  ok" \
    "ORT_DISABLE_FLASH_ATTENTION                  unset" "Loaded libraries" "healthy"; do
    grep -qF "$want" "$tmp/d.txt" || fail "doctor text lacks '$want'"
done
expect 0 "healthy" "$ORTQUAL" doctor --ort-lib "$OQ_ORT_LIB"

# JSON report parses and says the same.
"$ORTQUAL" doctor --json >"$tmp/d.json" 2>"$tmp/err" || fail "doctor --json exited $?"
$PY - "$tmp/d.json" <<'PYEOF' || fail "doctor --json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ort"]["version"] == "1.29.0", d["ort"]
assert d["ort"]["api_version"] == 29
assert "CPUExecutionProvider" in d["ort"]["providers"]
assert any(e["ep_name"] == "CPUExecutionProvider" and e["hw_type"] == "cpu" for e in d["ort"]["ep_devices"])
assert d["healthy"] is True and d["problems"] == []
assert d["sessions"][0]["ep_name"] == "CPUExecutionProvider" and d["sessions"][0]["ok"] is True
assert any("libonnxruntime" in p for p in d["libraries"]["ort"])
assert "ORT_DISABLE_FLASH_ATTENTION" in d["ort_env"]
for k in ("host", "gpu", "shadowing", "cwd"):
    assert k in d, k
PYEOF

# A fake tree with two cuDNN versions: the conflict and its pin lines.
mkdir -p "$tmp/sys" "$tmp/torch"
touch "$tmp/sys/libcudnn.so.9.14.0" "$tmp/torch/libcudnn.so.9.19.0"
ln -s libcudnn.so.9.14.0 "$tmp/sys/libcudnn.so.9"
ln -s libcudnn.so.9.19.0 "$tmp/torch/libcudnn.so.9"
"$ORTQUAL" doctor --search-root "$tmp" >"$tmp/s.txt" 2>&1 || fail "doctor --search-root exited $?"
for want in "WARNING: cudnn present at several versions; 9.19.0 $tmp/torch is the newest" \
    "LD_PRELOAD=$tmp/torch/libcudnn.so.9 LD_LIBRARY_PATH=$tmp/torch" \
    "or use cudnn 9.14.0 instead:" "LD_PRELOAD=$tmp/sys/libcudnn.so.9 LD_LIBRARY_PATH=$tmp/sys"; do
    grep -qF "$want" "$tmp/s.txt" || fail "doctor --search-root lacks '$want'"
done
"$ORTQUAL" doctor --json --search-root "$tmp" >"$tmp/s.json" || fail "doctor --json --search-root"
$PY - "$tmp/s.json" "$tmp" <<'PYEOF' || fail "shadowing JSON"
import json, sys
d, root = json.load(open(sys.argv[1])), sys.argv[2]
c = d["shadowing"]["conflicts"]
assert len(c) == 1 and c[0]["product"] == "cudnn", c
assert sorted(v["version"] for v in c[0]["versions"]) == ["9.14.0", "9.19.0"]
assert c[0]["chosen"]["version"] == "9.19.0"
assert d["shadowing"]["pin"]["preload"] == "LD_PRELOAD=%s/torch/libcudnn.so.9" % root
PYEOF

# A --search-root that is no folder searched nothing and said healthy: a usage error now.
expect 2 "ortqual doctor: --search-root $tmp/none: No such file or directory" "$ORTQUAL" doctor --search-root "$tmp/none"
expect 2 "ortqual doctor: --search-root $tmp/s.txt: not a folder" "$ORTQUAL" doctor --search-root "$tmp/s.txt"

# ORT missing: exit 3 and a one-line message naming the path tried.
expect 3 "/nonexistent/libonnxruntime.so" "$ORTQUAL" doctor --ort-lib /nonexistent/libonnxruntime.so
# --json still prints its document, "ort": null, with the load failure as a problem (exit 3)
if "$ORTQUAL" doctor --json --ort-lib /nonexistent/libonnxruntime.so >"$tmp/noort.json" 2>"$tmp/noort.err"; then fail "doctor --json without ORT: exit 0"
elif !  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ort"] is None and not d["healthy"] and "cannot load ONNX Runtime" in d["problems"][0] and list(d)[:7] == ["schema", "tool", "healthy", "problems", "sessions", "telemetry", "ort"], d' "$tmp/noort.json"; then
    fail "doctor --json without ORT: $(head -c 300 "$tmp/noort.json")"; fi
expect 3 "/bad/libonnxruntime.so" env ORTQUAL_ORT_LIB=/bad/libonnxruntime.so "$ORTQUAL" doctor
lines=$("$ORTQUAL" doctor --ort-lib /nonexistent/x.so 2>&1 | wc -l)
[ "$lines" -eq 1 ] || fail "missing ORT gives $lines lines, wanted 1"
expect 3 "OrtGetApiBase" "$ORTQUAL" doctor --ort-lib "$(ls /lib/x86_64-linux-gnu/libz.so.1)"

# Usage errors: exit 2 naming the culprit.
expect 2 "'--bogus'" "$ORTQUAL" doctor --bogus
expect 2 "'bogus'" "$ORTQUAL" doctor --ep cuda --ep-option bogus=1
expect 2 "sdpa_kernel=300" "$ORTQUAL" doctor --ep cuda --ep-option sdpa_kernel=300
expect 2 "ortqual doctor: --ep-lib 'cuda': want NAME=PATH" "$ORTQUAL" doctor --ep-lib cuda
expect 2 "unexpected argument 'extra'" "$ORTQUAL" doctor extra

# An EP asked for but absent here: reported, exit 1, the path it looked at named.
expect 1 "no EP library at $tmp/none.so" "$ORTQUAL" doctor --ep cuda --ep-lib "cuda=$tmp/none.so"

# Working-directory warnings.
mkdir "$tmp/ww" && chmod 0777 "$tmp/ww" && touch "$tmp/ww/sitecustomize.py"
(cd "$tmp/ww" && "$ORTQUAL" doctor >"$tmp/ww.txt" 2>&1) || fail "doctor in a world-writable dir exited $?"
grep -q "WARNING: world-writable" "$tmp/ww.txt" || fail "no world-writable warning"
grep -q "contains sitecustomize.py" "$tmp/ww.txt" || fail "no sitecustomize warning"

# CUPTI (bench --cupti's kernel timer): the library named, the file loaded and its API version
# (CUPTI's stand-in answers 130001); one that does not load, or is not CUPTI, is a problem.
FAKE="$OQ_BINARY_DIR/tests/libfake_cupti.so"
expect 0 "CUPTI        $FAKE (API version 130001): " "$ORTQUAL" doctor --cupti-lib "$FAKE"
"$ORTQUAL" doctor --json --cupti-lib "$FAKE" >"$tmp/c.json" || fail "doctor --json --cupti-lib exited $?"
$PY -c 'import json,sys; c=json.load(open(sys.argv[1]))["cupti"]; assert c["found"] is True and c["library"] == sys.argv[2] and c["version"] == 130001, c' \
    "$tmp/c.json" "$FAKE" || fail "doctor --json cupti: $(head -c 300 "$tmp/c.json")"
# Found without the CUDA driver, it times nothing and says so (it said it could time GPU kernels);
# where a driver is, what it says depends on the GPUs
if [ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpu"]["cuda_status"])' "$tmp/c.json")" != ok ]; then
    expect 0 "CUPTI        $FAKE (API version 130001): found, but no CUDA driver here: nothing to time" \
        "$ORTQUAL" doctor --cupti-lib "$FAKE"
    $PY -c 'import json,sys; c=json.load(open(sys.argv[1]))["cupti"]; assert c["message"] == "found, but no CUDA driver here: nothing to time", c' \
        "$tmp/c.json" || fail "doctor --json cupti without a driver: $(head -c 300 "$tmp/c.json")"
fi
expect 1 "CUPTI        unavailable: $tmp/none.so: cannot load CUPTI" "$ORTQUAL" doctor --cupti-lib "$tmp/none.so"
expect 1 "libnone_ep.so is not CUPTI: it lacks the activity API" "$ORTQUAL" doctor --cupti-lib "$OQ_BINARY_DIR/tests/libnone_ep.so"
"$ORTQUAL" doctor --json --cupti-lib "$tmp/none.so" >"$tmp/n.json"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["cupti"]; assert c["found"] is False and c["library"] is None and c["version"] is None and "cannot load CUPTI" in c["message"] and not d["healthy"], d' \
    "$tmp/n.json" || fail "doctor --json missing cupti: $(head -c 300 "$tmp/n.json")"
# Without --cupti-lib, a CUPTI the loader cannot find is reported, not a problem.
grep -q "^  CUPTI        " "$tmp/d.txt" || fail "doctor text lacks the CUPTI line"

# Paths that are not UTF-8 (byte 0xff; Linux paths are bytes): --json still writes its document,
# each such byte shown as U+FFFD, where jansson refused the text and doctor said "out of memory".
bad="$tmp/$(printf 'b\xff')"
mkdir -p "$bad/root/cuda"
ln -s "$FAKE" "$bad/libcupti.so"
cp "$(readlink -f "$OQ_ORT_LIB")" "$bad/libonnxruntime.so" # a copy: the runtime names the file it loaded
touch "$bad/root/cuda/libcudnn.so.9.14.0"
TMPDIR="$bad" "$ORTQUAL" doctor --json --ort-lib "$bad/libonnxruntime.so" --cupti-lib "$bad/libcupti.so" \
    --search-root "$bad/root" >"$tmp/u.json" 2>"$tmp/u.err" || fail "doctor --json, paths not UTF-8: exit $?, $(head -c 300 "$tmp/u.err")"
$PY - "$tmp/u.json" "$tmp" <<'PYEOF' || fail "doctor --json, paths not UTF-8: $(head -c 300 "$tmp/u.json")"
import json, sys
d, u8 = json.load(open(sys.argv[1])), sys.argv[2] + "/b\ufffd"
assert d["ort"]["lib_path"] == u8 + "/libonnxruntime.so", d["ort"]
assert d["cupti"]["found"] and d["cupti"]["library"] == u8 + "/libcupti.so", d["cupti"]
assert d["shadowing"]["roots"] == [u8 + "/root"], d["shadowing"]
assert [c["dir"] for c in d["shadowing"]["copies"]] == [u8 + "/root/cuda"], d["shadowing"]
assert d["telemetry"]["log_dir"] == u8, d["telemetry"]
PYEOF
"$ORTQUAL" doctor --json --cupti-lib "$bad/none.so" --ep-lib "cuda=$bad/none_ep.so" >"$tmp/u2.json" 2>"$tmp/u2.err"
[ $? -eq 1 ] || fail "doctor --json, missing libraries not UTF-8: exit not 1, $(head -c 300 "$tmp/u2.err")"
$PY - "$tmp/u2.json" "$tmp" <<'PYEOF' || fail "doctor --json, missing libraries not UTF-8: $(head -c 300 "$tmp/u2.json")"
import json, sys
d, u8 = json.load(open(sys.argv[1])), sys.argv[2] + "/b\ufffd"
assert not d["healthy"] and len(d["problems"]) == 2, d["problems"]
assert all(u8 + "/none" in p for p in d["problems"]), d["problems"]
assert u8 + "/none_ep.so" in d["sessions"][1]["message"], d["sessions"]
assert u8 + "/none.so" in d["cupti"]["message"], d["cupti"]
PYEOF

# --version names the ORT it loads, or why it cannot: an --ort-lib that does not load is exit 3
# (a deployment check must not pass), an $ORTQUAL_ORT_LIB or the search still answers the version.
expect 0 "ONNX Runtime 1.29.0 (C API 29)" "$ORTQUAL" --version
expect 3 "ONNX Runtime: not loaded (cannot load ONNX Runtime; tried: /nope.so" "$ORTQUAL" --version --ort-lib /nope.so
expect 0 "not loaded" env ORTQUAL_ORT_LIB=/nope.so "$ORTQUAL" --version
expect 0 "usage: ortqual doctor" "$ORTQUAL" doctor --help

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "doctor: all checks passed"
