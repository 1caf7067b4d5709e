#!/usr/bin/env bash
# Names from outside in text output: a test folder, an output folder or a --verdict path named
# with an escape sequence ("\033[2J" clears the terminal) or a newline (a forged line) is shown
# as \xNN, as error messages and JSON show it (it was printed raw). Also conformance's --junit
# inside a test folder: refused before any test runs, the folder untouched.
set -euo pipefail
: "${ORTQUAL:?}" "${OQ_SOURCE_DIR:?}"
CONF="${OQ_CONFORMANCE_DIR:-$OQ_SOURCE_DIR/tests/data/onnx-backend/attention}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
[ -d "$CONF/test_attention_4d" ] || fail "conformance set not found at $CONF (set OQ_CONFORMANCE_DIR)"

ESC=$(printf 'e\033[2J')
NL=$(printf 'n\nPASS forged')
# no_raw FILE WHAT: FILE holds no ESC byte and no line that starts with the forged "PASS forged"
no_raw() {
    if LC_ALL=C grep -q $'\033' "$1"; then fail "$2: an ESC byte printed raw: $(od -c "$1" | head -5)"; fi
    if grep -q '^PASS forged' "$1"; then fail "$2: a newline in a name forged a line"; fi
}

# 1. conformance: PASS and FAIL lines, and the closing line, of test folders so named
mkdir "$T/set"
cp -r "$CONF/test_attention_4d" "$T/set/$ESC"
cp -r "$CONF/test_attention_4d" "$T/set/$NL"
cp -r "$CONF/test_attention_4d_causal" "$T/set/f$ESC"
chmod -R u+w "$T/set"
# a failing test, its detail naming a file of its folder
cp "$T/set/f$ESC/test_data_set_0/output_0.pb" "$T/set/f$ESC/test_data_set_0/output_1.pb"
rc=0
"$ORTQUAL" conformance "$T/set" >"$T/c.out" 2>"$T/c.err" || rc=$?
[ "$rc" -eq 1 ] || fail "conformance exited $rc, expected 1 (one test fails): $(cat "$T/c.err")"
no_raw "$T/c.out" "conformance stdout"
no_raw "$T/c.err" "conformance stderr"
grep -qxF 'PASS e\x1b[2J' "$T/c.out" || fail "PASS line of the ESC folder: $(cat -v "$T/c.out")"
grep -qxF 'PASS n\x0aPASS forged' "$T/c.out" || fail "PASS line of the newline folder: $(cat -v "$T/c.out")"
grep -qF 'FAIL fe\x1b[2J: '"$T"'/set/fe\x1b[2J/test_data_set_0/output_1.pb: the model has 1 output' "$T/c.out" ||
    fail "FAIL line: $(cat -v "$T/c.out")"
[ "$(tail -n 1 "$T/c.out")" = "2 passed, 1 failed, 0 skipped" ] || fail "closing line: $(tail -n 1 "$T/c.out")"
# a test reached twice names both ways in, escaped
must 2 'the same test as' "$T/twice" "$ORTQUAL" conformance "$T/set/$ESC" "$T/set/$ESC/"
no_raw "$T/twice" "conformance, a test given twice"

# 2. conformance --junit inside a test folder: refused (exit 2) before any test runs, nothing
# written there; beside the tests (in DIR, not a test) it is fine
one="$T/set/$ESC"
before=$(cd "$one" && find . -type f | sort | xargs sha256sum)
for j in "$one/model.onnx" "$one/test_data_set_0/input_0.pb" "$one/junit.xml" "$one/new/j.xml"; do
    must 2 "^ortqual conformance: --junit .* is inside the test folder .*: give another --junit$" "$T/j.log" \
        "$ORTQUAL" conformance --junit "$j" "$T/set"
    grep -q '^PASS' "$T/j.log" && fail "a refused --junit still ran the tests"
    no_raw "$T/j.log" "--junit refusal"
done
ln -s "$one" "$T/link"
must 2 "is inside the test folder" "$T/j.log" "$ORTQUAL" conformance --junit "$T/link/j.xml" "$one"
[ "$(cd "$one" && find . -type f | sort | xargs sha256sum)" = "$before" ] || fail "a refused --junit changed the test"
"$ORTQUAL" conformance --junit "$T/set/junit.xml" "$one" >/dev/null || fail "--junit beside the tests refused"
[ -s "$T/set/junit.xml" ] || fail "--junit beside the tests not written"

# 3. validate's table and report: an output folder so named
out="$T/$ESC"
"$ORTQUAL" validate --outdir "$out" --num-events 2 --batch-size 2 --max-len 16 --repeat 1 --no-plots \
    --configs ref:encoder:fp64,cpu:decomposed:fp32 >"$T/v.out" 2>"$T/v.err" || fail "validate: $(cat "$T/v.err")"
no_raw "$T/v.out" "validate stdout"
no_raw "$T/v.err" "validate stderr"
grep -qF 'report: '"$T"'/e\x1b[2J/report.html' "$T/v.out" || fail "validate's report line: $(cat -v "$T/v.out")"
"$ORTQUAL" report "$out" >"$T/r.out" 2>&1 || fail "report: $(cat "$T/r.out")"
no_raw "$T/r.out" "report"
grep -qxF "$T"'/e\x1b[2J/report.html' "$T/r.out" || fail "report's line: $(cat -v "$T/r.out")"

# 4. gate: a --verdict path so named, said on stderr
"$ORTQUAL" gate --verdict "$T/v$ESC.json" -- sh -c 'echo "1 passed in 0.01s"; echo "=== 1 passed in 0.01s ==="' \
    >"$T/g.out" 2>"$T/g.err" || true
[ -s "$T/v$ESC.json" ] || fail "gate wrote no verdict: $(cat "$T/g.err")"
no_raw "$T/g.err" "gate stderr"
grep -qF 'verdict '"$T"'/ve\x1b[2J.json' "$T/g.err" || fail "gate's verdict line: $(cat -v "$T/g.err")"
# 5. inspect: an input named with a newline (as long as the name it replaces, so the protobuf
# stays valid) is one line (inspect kept newlines: "key" on a line of its own)
"$ORTQUAL" export sdpa --format attention24 -o "$T/names.onnx" >/dev/null
/usr/bin/python3 - "$T/names.onnx" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"query") >= 2
open(sys.argv[1], "wb").write(b.replace(b"query", b"q\nkey"))
PY
"$ORTQUAL" inspect "$T/names.onnx" >"$T/i.out" 2>&1 || fail "inspect: $(cat "$T/i.out")"
grep -qF 'q\x0akey' "$T/i.out" || fail "inspect: the newline not shown: $(cat -v "$T/i.out")"
if grep -q '^key' "$T/i.out"; then fail "inspect: a newline in a name forged a line"; fi
echo "text escapes e2e ok"
