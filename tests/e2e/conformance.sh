#!/usr/bin/env bash
# ortqual conformance on the ONNX v1.22 Attention backend tests: every base test
# passes on the reference, every *_expanded test is skipped, the closing line
# counts them; a corrupted expected output fails with exit 1; bad usage exits 2.
set -euo pipefail
: "${ORTQUAL:?}" "${OQ_SOURCE_DIR:?}"
CONF="${OQ_CONFORMANCE_DIR:-$OQ_SOURCE_DIR/tests/data/onnx-backend/attention}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
[ -d "$CONF" ] || fail "conformance set not found at $CONF (set OQ_CONFORMANCE_DIR)"

n_base=$(find "$CONF" -mindepth 1 -maxdepth 1 -type d ! -name '*_expanded' | wc -l)
n_exp=$(find "$CONF" -mindepth 1 -maxdepth 1 -type d -name '*_expanded' | wc -l)
[ "$n_base" -gt 0 ] || fail "no tests in $CONF"

rc=0
"$ORTQUAL" conformance "$CONF" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$T/out" "$T/err"; fail "conformance exited $rc"; }
last=$(tail -n 1 "$T/out")
[ "$last" = "$n_base passed, 0 failed, $n_exp skipped" ] || fail "closing line '$last'"
[ "$(grep -c '^PASS test_attention_' "$T/out")" -eq "$n_base" ] || fail "PASS lines"
grep -q '^SKIP test_attention_4d_expanded: function body of standard ops' "$T/out" ||
    fail "expanded test not skipped with its reason"

# With no DIR the shipped set runs (the same closing line).
"$ORTQUAL" conformance >"$T/dflt" 2>&1 || { cat "$T/dflt"; fail "conformance with no DIR"; }
[ "$(tail -n 1 "$T/dflt")" = "$n_base passed, 0 failed, $n_exp skipped" ] || fail "default set closing line"

# A single test directory works too, and --json reports the same verdicts.
"$ORTQUAL" conformance --json "$CONF/test_attention_4d_causal" >"$T/json"
grep -q '"verdict": "PASS"' "$T/json" || fail "--json verdict"
grep -q '"passed": 1' "$T/json" || fail "--json count"
# A test folder, an --outdir and a working folder whose names are not UTF-8 (byte 0xff): the
# JSON has them with U+FFFD (jansson refused such text: the test, the command line, the folder
# and the evidence silently went missing).
u8="$T/$(printf 'c\xff')"
mkdir "$u8" && cp -r "$CONF/test_attention_4d_causal" "$u8/$(printf 't\xff')"
(cd "$u8" && "$ORTQUAL" conformance --json "$u8" >"$T/u8.json") || fail "--json, a test folder not UTF-8: exit $?"
(cd "$u8" && "$ORTQUAL" conformance --outdir "$u8/out" --ort-lib "$OQ_ORT_LIB" "$u8/$(printf 't\xff')" >/dev/null) ||
    fail "--outdir not UTF-8: exit $?"
/usr/bin/python3 - "$T/u8.json" "$u8/out/summary.json" "$T" <<'PYEOF' || fail "conformance JSON, paths not UTF-8"
import json, sys
d, s, u8 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3] + "/c\ufffd"
assert d["passed"] == 1 and [t["name"] for t in d["tests"]] == ["t\ufffd"], d
assert s["passed"] == 1 and [t["name"] for t in s["tests"]] == ["t\ufffd"], s["tests"]
assert s["command"][1:3] == ["--outdir", u8 + "/out"] and s["command"][-1] == u8 + "/t\ufffd", s["command"]
assert s["cwd"] == u8 and s["evidence"]["cwd"]["path"] == u8, s.get("evidence")
PYEOF

# --ep cpu: ONNX Runtime runs the models instead, the expanded function body included.
if [ -n "${OQ_ORT_LIB:-}" ]; then
    "$ORTQUAL" conformance --ep cpu --ort-lib "$OQ_ORT_LIB" "$CONF/test_attention_4d_gqa" \
        "$CONF/test_attention_4d_gqa_expanded" >"$T/ort" || { cat "$T/ort"; fail "--ep cpu"; }
    [ "$(tail -n 1 "$T/ort")" = "2 passed, 0 failed, 0 skipped" ] || fail "--ep cpu closing line"
    # which build ran, in one line (the verdicts of two builds read alike otherwise)
    case "$(head -n 1 "$T/ort")" in "ONNX Runtime 1."*" ($(readlink -f "$OQ_ORT_LIB")) on CPUExecutionProvider") ;;
        *) fail "--ep cpu: no line naming ONNX Runtime: $(head -n 1 "$T/ort")" ;; esac
    # ORT's refusal of the opset-24 short mask (valid ONNX) is explained under the FAIL line
    rc=0
    "$ORTQUAL" conformance --ep cpu --ort-lib "$OQ_ORT_LIB" "$CONF/test_attention_4d_diff_heads_mask4d_padded_kv" \
        >"$T/short" || rc=$?
    [ "$rc" -eq 1 ] && grep -q "^    refused \[attn-mask-total-length\] at node '(unnamed)' (Attention); inputs K 'K' float32 \[2,3,6,8\]; attn_mask 'attn_mask' float32 \[2,3,4,4\]" "$T/short" &&
        grep -q "^    fix: pad the mask to the total sequence length" "$T/short" || { cat "$T/short"; fail "refusal not explained"; }
    "$ORTQUAL" conformance --json --ep cpu --ort-lib "$OQ_ORT_LIB" "$CONF/test_attention_4d_diff_heads_mask4d_padded_kv" \
        >"$T/short.json" || true
    grep -q '"pattern": "attn-mask-total-length"' "$T/short.json" || fail "--json: no refusal record"
fi

# Corrupt the expected Y of one test (its last float, in the raw data): must FAIL, exit 1.
cp -r "$CONF/test_attention_4d" "$T/test_attention_4d"
chmod -R u+w "$T/test_attention_4d"
pb="$T/test_attention_4d/test_data_set_0/output_0.pb"
size=$(stat -c %s "$pb")
printf '\x00\x00\x80\x40' | dd of="$pb" bs=1 seek=$((size - 4)) conv=notrunc status=none
rc=0
"$ORTQUAL" conformance "$T/test_attention_4d" >"$T/out2" || rc=$?
[ "$rc" -eq 1 ] || { cat "$T/out2"; fail "corrupted output: exit $rc, expected 1"; }
grep -q '^FAIL test_attention_4d: output 0 (Y) worst element \[1,2,3,7\] got .* expected 4 ' "$T/out2" ||
    { cat "$T/out2"; fail "corrupted output: FAIL line"; }
[ "$(tail -n 1 "$T/out2")" = "0 passed, 1 failed, 0 skipped" ] || fail "corrupted closing line"
# The same element NaN: the JSON keeps got/expected/abs_diff, NaN as "nan" (they went missing)
printf '\x00\x00\xc0\x7f' | dd of="$pb" bs=1 seek=$((size - 4)) conv=notrunc status=none
"$ORTQUAL" conformance --json "$T/test_attention_4d" >"$T/nan.json" && fail "NaN expected: exit 0"
grep -q '"expected": "nan"' "$T/nan.json" && grep -q '"abs_diff": "nan"' "$T/nan.json" &&
    grep -Eq '"got": -?[0-9]' "$T/nan.json" || { cat "$T/nan.json"; fail "--json: NaN values missing"; }

# A data set with one file more than the model has outputs (or inputs) was made for another
# model: FAIL, not a PASS on the files the model happens to read.
cp -r "$CONF/test_attention_4d" "$T/extra_out" && chmod -R u+w "$T/extra_out"
cp "$T/extra_out/test_data_set_0/output_0.pb" "$T/extra_out/test_data_set_0/output_1.pb"
must 1 "^FAIL extra_out: .*/output_1.pb: the model has 1 output, the data set more" "$T/extra1" \
    "$ORTQUAL" conformance "$T/extra_out"
cp -r "$CONF/test_attention_4d" "$T/extra_in" && chmod -R u+w "$T/extra_in"
cp "$T/extra_in/test_data_set_0/input_0.pb" "$T/extra_in/test_data_set_0/input_3.pb"
must 1 "^FAIL extra_in: .*/input_3.pb: the model has 3 inputs, the data set more" "$T/extra2" \
    "$ORTQUAL" conformance "$T/extra_in"

# A test that compares nothing is not a PASS (it was one): outputs of no element, or NaN both in
# the expected values and in the result (NaN matches NaN), agree whatever ran. Q and Y are
# rewritten as TensorProtos (dims, FLOAT, name, raw_data) encoded here by hand.
pb() { # FILE NAME VALUE D0 D1 D2 D3: a float tensor of that shape, every element VALUE
    /usr/bin/python3 - "$@" <<'EOF'
import struct, sys
path, name, value, dims = sys.argv[1], sys.argv[2], float(sys.argv[3]), [int(d) for d in sys.argv[4:]]
def varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | 0x80 if v else b)
        if not v: return bytes(out)
n = 1
for d in dims: n *= d
raw = struct.pack("<%df" % n, *([value] * n))
msg = b"".join(b"\x08" + varint(d) for d in dims) + b"\x10\x01"
msg += b"\x42" + varint(len(name)) + name.encode() + b"\x4a" + varint(len(raw)) + raw
open(path, "wb").write(msg)
EOF
}
for c in zero nan; do
    cp -r "$CONF/test_attention_4d" "$T/$c" && chmod -R u+w "$T/$c"
done
pb "$T/zero/test_data_set_0/input_0.pb" Q 0 2 3 0 8
pb "$T/zero/test_data_set_0/output_0.pb" Y 0 2 3 0 8
pb "$T/nan/test_data_set_0/input_0.pb" Q nan 2 3 4 8
pb "$T/nan/test_data_set_0/output_0.pb" Y nan 2 3 4 8
for c in zero nan; do
    must 1 "^SKIP $c: nothing to compare: every output is empty, or NaN both in the expected values and in the result" \
        "$T/$c.log" "$ORTQUAL" conformance "$T/$c"
    grep -q "no test passed (1 run, all skipped or unsupported)" "$T/$c.log" || fail "$c: $(cat "$T/$c.log")"
done
if [ -n "${OQ_ORT_LIB:-}" ]; then
    must 1 "^SKIP nan: nothing to compare" "$T/nan_ort.log" "$ORTQUAL" conformance --ep cpu --ort-lib "$OQ_ORT_LIB" "$T/nan"
fi
# beside a test that compared values, the run passes and names the one that could not
"$ORTQUAL" conformance "$CONF/test_attention_4d" "$T/nan" >"$T/mixed" || fail "a PASS beside a SKIP: $(cat "$T/mixed")"
[ "$(tail -n 1 "$T/mixed")" = "1 passed, 0 failed, 1 skipped" ] || fail "mixed closing line: $(tail -n 1 "$T/mixed")"

# A run where nothing passed is not green: one skipped test exits 1 saying so; --allow-skip accepts it.
rc=0
"$ORTQUAL" conformance "$CONF/test_attention_4d_expanded" >"$T/skip.out" 2>"$T/skip.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "no test passed (1 run, all skipped or unsupported)" "$T/skip.err" ||
    fail "all-skipped run: exit $rc, $(cat "$T/skip.err")"
"$ORTQUAL" conformance --allow-skip "$CONF/test_attention_4d_expanded" >/dev/null || fail "--allow-skip"

# A provider that is not available here is found once, before any test: one line says why, the
# run is NOT TESTED (exit 1; --allow-skip: 0), and the outputs say every test was skipped with the
# reason (it printed a FAIL line per test and "0 passed, N failed"). none_ep loads and offers no
# device, so the CUDA EP it stands for is absent on every host; ORT's own CUDA EP too where
# its library is not beside the core one (this CPU host).
NONE_EP="$OQ_BINARY_DIR/tests/libnone_ep.so"
n_all=$((n_base + n_exp))
why="EP 'cuda' is not available: EP library $NONE_EP is registered but reports no CUDAExecutionProvider device"
rc=0
"$ORTQUAL" conformance --ep cuda --ep-lib "cuda=$NONE_EP" --outdir "$T/absent" --junit "$T/absent.xml" "$CONF" \
    >"$T/absent.out" 2>"$T/absent.err" || rc=$?
[ "$rc" -eq 1 ] && [ "$(tail -n +2 "$T/absent.out")" = "0 passed, 0 failed, $n_all skipped" ] &&
    [ "$(wc -l <"$T/absent.err")" = 1 ] &&
    grep -qF "ortqual conformance: NOT TESTED: no test ran ($n_all skipped): $why" "$T/absent.err" ||
    fail "an absent provider: exit $rc: $(head -3 "$T/absent.out" "$T/absent.err")"
/usr/bin/python3 - "$T/absent/summary.json" "$T/absent.xml" "$why" "$n_all" <<'PY' || fail "an absent provider's outputs"
import json, sys, xml.etree.ElementTree as ET
d, why, n = json.load(open(sys.argv[1])), sys.argv[3], int(sys.argv[4])
assert (d["verdict"], d["exit_status"], d["passed"], d["failed"], d["skipped"]) == ("untested", 1, 0, 0, n), d
assert d["reason"].startswith("no test ran: " + why), d["reason"]
assert len(d["tests"]) == n and all(t["verdict"] == "SKIP" and t["detail"].startswith("not run: " + why) for t in d["tests"])
suite = ET.parse(sys.argv[2]).getroot().find("testsuite")
cases = suite.findall("testcase")
assert (suite.get("skipped"), suite.get("failures")) == (str(n), "1"), suite.attrib
assert all(c.find("skipped").text.startswith("not run: " + why) for c in cases[:-1])
assert cases[-1].get("name") == "verdict" and cases[-1].find("failure").get("type") == "untested", ET.tostring(cases[-1])
PY
"$ORTQUAL" conformance --ep cuda --ep-lib "cuda=$NONE_EP" --allow-skip --outdir "$T/absent2" "$CONF/test_attention_4d" \
    >/dev/null 2>"$T/absent2.err" || fail "an absent provider with --allow-skip: $(cat "$T/absent2.err")"
grep -q "(accepted by --allow-skip)" "$T/absent2.err" && grep -q '"verdict": "untested"' "$T/absent2/summary.json" ||
    fail "--allow-skip: $(cat "$T/absent2.err")"
if [ -n "${OQ_ORT_LIB:-}" ] && [ ! -e "$(dirname "$(readlink -f "$OQ_ORT_LIB")")/libonnxruntime_providers_cuda.so" ]; then
    must 1 "^ortqual conformance: NOT TESTED: no test ran \(1 skipped\): EP 'cuda' is not available: no EP library at" \
        "$T/cuda.log" "$ORTQUAL" conformance --ep cuda --ort-lib "$OQ_ORT_LIB" "$CONF/test_attention_4d"
    grep -q '^FAIL' "$T/cuda.log" && fail "--ep cuda without CUDA: $(cat "$T/cuda.log")"
fi

# Usage errors exit 2 and name the problem.
mkdir "$T/empty"
rc=0
"$ORTQUAL" conformance "$T/empty" 2>"$T/err3" || rc=$?
[ "$rc" -eq 2 ] && grep -q "$T/empty: no model.onnx" "$T/err3" || fail "empty dir: exit $rc"
# A directory of tests holds tests only: a subdirectory without model.onnx was left out and the
# run passed without it. Named, exit 2, before anything runs or is written; hidden entries and
# files beside the tests are not tests.
mkdir "$T/set" && cp -r "$CONF/test_attention_4d_causal" "$T/set/t1" && cp -r "$CONF/test_attention_4d_causal" "$T/set/t2"
chmod -R u+w "$T/set" && rm "$T/set/t2/model.onnx"
must 2 "^ortqual conformance: $T/set/t2: not a test \(no model.onnx\); every directory in $T/set must be one$" \
    "$T/set.log" "$ORTQUAL" conformance --outdir "$T/set.out" --junit "$T/set.xml" "$T/set"
[ "$(wc -l <"$T/set.log")" = 1 ] && [ ! -e "$T/set.out" ] && [ ! -e "$T/set.xml" ] ||
    fail "a refused directory of tests: $(cat "$T/set.log"), wrote: $(ls -d "$T"/set.* 2>&1)"
# --json: no verdicts, just the refusal's ortqual-error/1 object (docs/usage.md)
rc=0
"$ORTQUAL" conformance --json "$T/set" >"$T/set.json" 2>"$T/set.log" || rc=$?
[ "$rc" = 2 ] && grep -q "t2: not a test" "$T/set.log" && /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "ortqual-error/1" and d["exit_code"] == 2 and "t2: not a test" in d["error"], d' "$T/set.json" ||
    fail "--json for a refused directory: exit $rc: $(cat "$T/set.json" "$T/set.log")"
rm -r "$T/set/t2" && mkdir "$T/set/.git" && touch "$T/set/README.md"
"$ORTQUAL" conformance "$T/set" >"$T/set.log" 2>&1 && [ "$(tail -n 1 "$T/set.log")" = "1 passed, 0 failed, 0 skipped" ] ||
    fail "hidden entries and files beside the tests: $(cat "$T/set.log")"
# A test reached twice (given twice, as a directory and one of its tests, through a link) ran and
# counted twice: named, exit 2, nothing written.
for twice in "$T/set/t1 $T/set/t1" "$T/set/t1/ $T/set"; do
    must 2 "^ortqual conformance: .*: the same test as .*, reached twice" "$T/twice.log" \
        "$ORTQUAL" conformance --outdir "$T/twice.out" $twice
    [ "$(wc -l <"$T/twice.log")" = 1 ] && [ ! -e "$T/twice.out" ] || fail "reached twice ($twice): $(cat "$T/twice.log")"
done
ln -s t1 "$T/set/t1-link"
must 2 "^ortqual conformance: $T/set/t1-link: the same test as $T/set/t1, reached twice" "$T/twice.log" \
    "$ORTQUAL" conformance "$T/set"
rc=0
"$ORTQUAL" conformance --bogus "$CONF" 2>"$T/err4" || rc=$?
[ "$rc" -eq 2 ] && grep -q "'--bogus'" "$T/err4" || fail "unknown option: exit $rc"
rc=0
"$ORTQUAL" conformance --rtol x "$CONF" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "bad --rtol: exit $rc"
for tol in "--rtol inf" "--atol inf" "--rtol -inf" "--atol nan"; do
    must 2 "wants a finite number >= 0" "$T/tol.log" "$ORTQUAL" conformance $tol "$CONF/test_attention_4d"
done
# a tolerance that cannot fail passed every test (a false green): refused before any test runs
must 2 "^ortqual conformance: --rtol 1: rtol 1 is 1 or more: an output of zeros would pass" "$T/tol.log" \
    "$ORTQUAL" conformance --rtol 1 "$CONF/test_attention_4d"
must 2 "^ortqual conformance: --atol 1e308: atol 1e\+308 is float32's largest value" "$T/tol.log" \
    "$ORTQUAL" conformance --atol 1e308 "$CONF/test_attention_4d"
grep -q '^PASS' "$T/tol.log" && fail "a refused --atol still ran the tests"
# (read whole: grep -q leaving early would end a help of more than one write with SIGPIPE)
"$ORTQUAL" conformance --help > "$T/help" && grep -q 'usage: ortqual conformance' "$T/help" || fail "--help"

# The outputs are checked before any test runs: an earlier run's folder needs --force (exit 2),
# an unwritable folder or --junit is exit 3, an empty --junit exit 2.
one="$CONF/test_attention_4d"
"$ORTQUAL" conformance --outdir "$T/c1" --junit "$T/c1/junit.xml" "$one" >/dev/null || fail "--outdir with --junit inside it"
[ -s "$T/c1/summary.json" ] && [ -s "$T/c1/junit.xml" ] || fail "--outdir: $(ls "$T/c1")"
must 2 "^ortqual conformance: --outdir: $T/c1/summary.json exists \(use --force" "$T/o1" "$ORTQUAL" conformance --outdir "$T/c1" "$one"
grep -q '^PASS' "$T/o1" && fail "a refused --outdir still ran the tests"
"$ORTQUAL" conformance --outdir "$T/c1" --force "$one" >/dev/null || fail "--force into an earlier run's folder"
if [ "$(id -u)" -eq 0 ]; then RO=/proc/ortqual-conf J=/proc/j.xml; else mkdir "$T/ro" && chmod 555 "$T/ro"; RO="$T/ro/x" J="$T/ro/j.xml"; fi
must 3 "^ortqual conformance: --outdir: $RO: cannot (create directory|write in)" "$T/o2" "$ORTQUAL" conformance --outdir "$RO" "$one"
grep -q '^PASS' "$T/o2" && fail "an unwritable --outdir still ran the tests"
must 3 "^ortqual conformance: --junit: $J: cannot create" "$T/o3" "$ORTQUAL" conformance --junit "$J" "$one"
must 2 "^ortqual conformance: --junit: an empty value .want FILE." "$T/o4" "$ORTQUAL" conformance --junit '' "$one"
# --junit over the folder's own summary.json is refused before any test runs, the file kept
must 2 "^ortqual conformance: --junit $T/c1/summary.json is $T/c1's summary.json: give another --junit$" \
  "$T/o5" "$ORTQUAL" conformance --outdir "$T/c1" --force --junit "$T/c1/summary.json" "$one"
[ "$(head -c1 "$T/c1/summary.json")" = "{" ] || fail "a refused --junit replaced summary.json"
# A detail's own words say the option; a test folder's path that holds an API field's words is
# shown as it is (it was reworded with them: a path the user could not find)
mkdir "$T/words" && cp -r "$CONF/test_attention_4d_expanded" "$T/words/"
odd="$T/words/t (runs with opts.runner)"
cp -r "$one" "$odd" && rm -r "$odd"/test_data_set_*
rc=0
"$ORTQUAL" conformance "$T/words" >"$T/words.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a test with no data set: exit $rc, expected 1: $(cat "$T/words.out")"
grep -qF "$odd: no test_data_set_* directory" "$T/words.out" || fail "the folder not as it is: $(cat "$T/words.out")"
grep -q '^SKIP test_attention_4d_expanded: .*runs with --ep$' "$T/words.out" || fail "the library's words: $(cat "$T/words.out")"
# A tolerance that cannot fail compares nothing (validate's rule, compare.h): test_attention_3d
# with its expected output made all zeros (wrong) fails at the defaults, and --atol at or above
# every value compared fails too (it PASSED: any output within 100 of zeros did)
mkdir "$T/allzero" && cp -r "$CONF/test_attention_3d" "$T/allzero/"
/usr/bin/python3 - "$T/allzero/test_attention_3d/test_data_set_0/output_0.pb" <<'PY'
import sys
# the TensorProto's top-level fields; raw_data (9) and packed float_data (4) zeroed in place
b = bytearray(open(sys.argv[1], "rb").read())
def varint(i):
    v = s = 0
    while True:
        v |= (b[i] & 0x7F) << s; s += 7; i += 1
        if not b[i - 1] & 0x80: return v, i
i = zeroed = 0
while i < len(b):
    key, i = varint(i)
    kind = key & 7
    if kind == 0: _, i = varint(i)
    elif kind == 5: i += 4
    elif kind == 1: i += 8
    elif kind == 2:
        n, i = varint(i)
        if key >> 3 in (4, 9): b[i:i + n] = bytes(n); zeroed += n
        i += n
    else: sys.exit("wire type %d" % kind)
assert zeroed, "no float data found"
open(sys.argv[1], "wb").write(b)
PY
must 1 "^FAIL test_attention_3d: output 0 \(Y\) worst element .* expected 0 " "$T/z1.log" "$ORTQUAL" conformance "$T/allzero/test_attention_3d"
for atol in 100 1e30; do
  must 1 "^FAIL test_attention_3d: output 0 \(Y\): its atol ${atol/e/e\\+} is at least its largest \|value\| 0\.727194: zeros would pass" \
    "$T/z2.log" "$ORTQUAL" conformance --atol "$atol" "$T/allzero/test_attention_3d"
done
must 1 "its atol 100 is at least its largest \|value\|" "$T/z3.log" "$ORTQUAL" conformance --ep cpu --atol 100 "$T/allzero/test_attention_3d"
# the right expected output passes with a loose atol below its values, and fails with one above
"$ORTQUAL" conformance --atol 0.01 "$CONF/test_attention_3d" >"$T/z4.log" || fail "--atol 0.01 on the right output: $(cat "$T/z4.log")"
must 1 "^FAIL test_attention_3d: output 0 \(Y\): its atol 100 is at least its largest \|value\|" "$T/z5.log" \
  "$ORTQUAL" conformance --atol 100 "$CONF/test_attention_3d"
echo "conformance e2e ok ($n_base passed, $n_exp skipped)"
