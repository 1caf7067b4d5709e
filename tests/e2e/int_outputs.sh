#!/usr/bin/env bash
# Integer outputs are compared, shown and configured exactly (QA svc 1, 4, 9): an int64 output
# against saved uint64 values is compared as integers (2^53 + 1 against 2^53 passed, compared
# through doubles), a failed id reads every digit in the line, summary.json, validate.csv and
# JUnit (12-digit ids read 1.23456789e+11 on both sides; past 2^53 max_abs=0 on a FAILED
# output), and --tolerance for an integer output is refused, naming it and its dtype.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
cd "$T" || exit 1
json() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# ids.onnx: int64 ids [batch, seq] -> Identity -> out int64 [batch, seq]; NAME.npz holds one
# member, MEMBER [1, n] of DESCR (<i8 or <u8), with the values given
$PY - <<'PY' || fail "writing the model and files"
import struct, zipfile
def v(x):
    out = bytearray()
    while True:
        c = x & 0x7F; x >>= 7
        out.append(c | 0x80 if x else c)
        if not x: return bytes(out)
def f(n, b):
    b = b.encode() if isinstance(b, str) else b
    return v(n << 3 | 2) + v(len(b)) + b
def vinfo(name):  # int64 (7) [batch, seq]
    shape = f(1, f(2, "batch")) + f(1, f(2, "seq"))
    return f(1, name) + f(2, f(1, v(1 << 3) + v(7) + f(2, shape)))
node = f(1, "ids") + f(2, "out") + f(3, "id") + f(4, "Identity")
graph = f(1, node) + f(2, "g") + f(11, vinfo("ids")) + f(12, vinfo("out"))
open("ids.onnx", "wb").write(v(1 << 3) + v(8) + f(7, graph) + f(8, f(1, "") + v(2 << 3) + v(18)))
def npz(path, member, descr, vals):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (1, %d), }" % (descr, len(vals))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    fmt = "<%d%s" % (len(vals), "q" if descr == "<i8" else "Q")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member + ".npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack(fmt, *vals))
b = 1 << 53
npz("big_in.npz", "ids", "<i8", [b, b + 1, b + 2])
npz("big_u8.npz", "out", "<u8", [b, b, b + 2])        # element 1: 2^53 against 2^53 + 1
npz("big_u8_same.npz", "out", "<u8", [b, b + 1, b + 2])
npz("big_i8.npz", "out", "<i8", [b, b, b + 2])
npz("mid_in.npz", "ids", "<i8", [123456789012, 123456789013])
npz("mid_out.npz", "out", "<i8", [123456789012, 123456789012])
PY
V=(--no-mask --no-plots --force)

# 1. int64 against uint64: 2^53 + 1 differs from 2^53 (validate and replay said PASSED); the
#    same values as uint64 pass
BIGU8="out: FAIL valid=3/3 max_abs=1 .*worst \[0,1\] got 9007199254740993 expected 9007199254740992 \|d\|=1"
expect 1 "$BIGU8" "$Q" validate --model ids.onnx --inputs big_in.npz --expected big_u8.npz --outdir v_u8 "${V[@]}"
expect 1 "$BIGU8" "$Q" replay --model ids.onnx --inputs big_in.npz --expected big_u8.npz --ep cpu --no-mask \
    --outdir r_u8 --force
expect 0 "verdict: PASSED" "$Q" validate --model ids.onnx --inputs big_in.npz --expected big_u8_same.npz \
    --outdir v_u8_same "${V[@]}"

# 2. past 2^53 of one dtype: failed, and max |error| 1, not 0 (line, summary.json, validate.csv)
expect 1 "out: FAIL valid=3/3 max_abs=1 .*got 9007199254740993 expected 9007199254740992 \|d\|=1" \
    "$Q" validate --model ids.onnx --inputs big_in.npz --expected big_i8.npz --outdir v_i8 "${V[@]}"
[ "$(json v_i8/summary.json 'd["configs"][1]["outputs"][0]["max_abs"]')" = 1 ] &&
    ok "summary.json: max_abs 1 past 2^53" || bad "summary max_abs: $(json v_i8/summary.json 'd["configs"][1]["outputs"][0]["max_abs"]')"
[ "$(tail -1 v_i8/validate.csv | awk -F, '{print $(NF - 1), $NF}')" = "1 saved-outputs" ] &&
    ok "validate.csv: max_abs_err 1" || bad "validate.csv: $(tail -1 v_i8/validate.csv)"

# 3. 12-digit ids: every digit in the line, summary.json (strings: readers round a JSON number
#    past 2^53) and the JUnit message
MID="worst \[0,1\] got 123456789013 expected 123456789012 \|d\|=1"
expect 1 "$MID" "$Q" validate --model ids.onnx --inputs mid_in.npz --expected mid_out.npz --outdir v_mid "${V[@]}"
W='d["configs"][1]["batches"][0]["outputs"][0]["worst"][0]'
[ "$(json v_mid/summary.json "$W[\"got\"], $W[\"expected\"]")" = "123456789013 123456789012" ] &&
    [ "$(json v_mid/summary.json "type($W[\"got\"]).__name__")" = str ] &&
    ok "summary.json: the batch's worst element as strings of digits" || bad "summary worst: $(json v_mid/summary.json "$W")"
W='d["configs"][1]["outputs"][0]["worst_failing"]'
[ "$(json v_mid/summary.json "$W[\"got\"], $W[\"expected\"]")" = "123456789013 123456789012" ] &&
    ok "summary.json: the output's worst failing element in every digit" || bad "summary outputs: $(json v_mid/summary.json "$W")"
expect 0 "" "$Q" report v_mid --junit v_mid/junit.xml
grep -q "max |error| 1 at \[0,1\] (got 123456789013, expected 123456789012)" v_mid/junit.xml &&
    ok "JUnit: every digit" || bad "JUnit: $(grep -o 'message="[^"]*"' v_mid/junit.xml)"

# 4. --tolerance for an integer output would be ignored: refused, naming the output and its dtype
TOL="tolerance for output 'out': it is int64, compared exactly \(every valid element equal\), so a tolerance would be ignored"
expect 2 "$TOL" "$Q" validate --model ids.onnx --inputs mid_in.npz --expected mid_out.npz --outdir v_tol \
    --tolerance out:rtol=0.5,atol=1 "${V[@]}"
expect 2 "$TOL" "$Q" replay --model ids.onnx --inputs mid_in.npz --expected mid_out.npz --ep cpu --no-mask \
    --outdir r_tol --force --tolerance out:atol=1
[ ! -e v_tol/summary.json ] && ok "refused: no summary written" || bad "v_tol has a summary"
report
