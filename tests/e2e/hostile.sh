#!/usr/bin/env bash
# Hostile files through the real tool (issue 15): each gets one line naming the file
# and the reason, exit 2, at once, and nothing but error.json in an output folder.
# The bytes are the fuzz regressions (fuzz/regressions/), which crashed or hung before.
set -u
: "${ORTQUAL:?set ORTQUAL to the ortqual binary}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
R=$OQ_SOURCE_DIR/fuzz/regressions
Q=$ORTQUAL

# run CODE PATTERN CMD...: like expect, bounded to 60 s (a hang is a failure, exit 124)
run() {
    local code=$1 pat=$2
    shift 2
    expect "$code" "$pat" timeout 60 "$@"
}
# only_error_json DIR: the refused run left error.json and nothing else
only_error_json() {
    local left
    left=$(cd "$1" 2>/dev/null && ls -A | tr '\n' ' ')
    [ "$left" = "error.json " ] && ok "$1 holds only error.json" || bad "$1 holds '$left', expected error.json only"
}

# Models without optional strings (op_type, input names): listed, not a segfault (139).
run 0 "nodes +1" "$Q" inspect "$R/inspect/issue15-node-without-op_type.onnx"
run 0 "initializers 1" "$Q" inspect "$R/inspect/issue15-unnamed-input-beside-initializer.onnx"
# (it has no outputs either: refused for that first, as a graph without outputs is)
run 2 "issue15-node-without-op_type\.onnx: the graph has no outputs" \
    "$Q" validate --model "$R/inspect/issue15-node-without-op_type.onnx" --configs cpu:model:fp32 --outdir "$T/v1"
only_error_json "$T/v1"

# Not regular files: refused by what they are, never read (/dev/zero has no end).
run 2 "^ortqual inspect: /dev/zero: is a character device, not a regular file$" "$Q" inspect /dev/zero
run 2 "^ortqual inspect: $T: is a directory, not a regular file$" "$Q" inspect "$T"
mkfifo "$T/fifo"
run 2 "$T/fifo: is a FIFO \(named pipe\), not a regular file" "$Q" inspect "$T/fifo"
run 2 "/dev/zero: is a character device, not a regular file" \
    "$Q" validate --model /dev/zero --configs cpu:model:fp32 --outdir "$T/v2"
only_error_json "$T/v2"

# An .npz whose directory lies about both sizes: refused before 4 GiB are allocated.
run 2 "member 'f32': compressed size 4000000 is larger than the archive \(978 bytes\)" \
    "$Q" validate --inputs "$R/npz/issue15-lying-sizes.npz" --outdir "$T/v3"
only_error_json "$T/v3"
run 2 "member 'f32': 18253611008 bytes, above the limit of 17179869184 \(16 GiB\)" \
    "$Q" validate --inputs "$R/npz/issue15-above-limit.npz" --outdir "$T/v4"
only_error_json "$T/v4"

# Names that are escape sequences or not UTF-8 (the same bytes long as the names they replace,
# so the protobuf stays valid): the text shows the escape as \x1b, the JSON keeps the input
# (U+FFFD for the stray byte) instead of dropping it.
"$Q" export sdpa --format attention24 -o "$T/names.onnx" > /dev/null
/usr/bin/python3 - "$T/names.onnx" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"query") >= 2 and b.count(b"value") >= 2
open(sys.argv[1], "wb").write(b.replace(b"query", b"q\x1b[2J").replace(b"value", b"v\xffalu"))
PY
"$Q" inspect "$T/names.onnx" > "$T/names.txt" 2>&1
if grep -q $'\x1b' "$T/names.txt"; then bad "inspect printed a raw ESC"; else ok "no raw ESC in inspect's text"; fi
grep -q 'q\\x1b\[2J' "$T/names.txt" && ok "the escape shown as \\x1b" || bad "escape not shown: $(cat -v "$T/names.txt")"
"$Q" inspect --json "$T/names.onnx" > "$T/names.json"
got=$(/usr/bin/python3 -c 'import json,sys; print(ascii([i["name"] for i in json.load(open(sys.argv[1]))["inputs"]]))' "$T/names.json")
[ "$got" = "['q\x1b[2J', 'key', 'v\ufffdalu', 'mask']" ] && ok "JSON keeps every input" || bad "JSON inputs: $got"
report
