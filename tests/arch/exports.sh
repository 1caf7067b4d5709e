#!/usr/bin/env bash
# libortqual.so exports exactly what include/ortqual/ declares with OQ_API (tests/arch/exports.py),
# libortqual.a defines no other global symbol (a program's own cv_model_load or onnx.pb-c.c
# would clash with it), and the check bites: an extra export, a missing one, an unmarked
# declaration and the library's objects archived as compiled each fail.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
CHECK="$OQ_SOURCE_DIR/tests/arch/exports.py"
INC="$OQ_SOURCE_DIR/include"
[ -f "$OQ_LIB" ] || fail "no library at $OQ_LIB"

out=$($PY "$CHECK" "$OQ_LIB" "$INC") || fail "exported API differs from the headers:
$out"
echo "$out"
[ -f "$OQ_ARCHIVE" ] || fail "no archive at $OQ_ARCHIVE"
out=$($PY "$CHECK" "$OQ_ARCHIVE" "$INC") || fail "libortqual.a defines globals beyond the API:
$out"
echo "libortqual.a: $out"

nm -D --defined-only "$OQ_LIB" > "$T/nm.txt"
# bites NAME PATTERN NM_FILE INCLUDE_DIR [LIB]: the check must fail with PATTERN
bites() {
    local what=$1 pattern=$2
    if out=$($PY "$CHECK" "${5:-$OQ_LIB}" "$4" ${3:+"$3"}); then fail "$what: not caught"; fi
    grep -q -- "$pattern" <<<"$out" || fail "$what: message lacks '$pattern': $out"
}
{ cat "$T/nm.txt"; echo "0000000000001000 T gate_strv_push"; } > "$T/extra.txt"
bites "an internal helper exported" "gate_strv_push: exported by .* but declared in no public header" "$T/extra.txt" "$INC"
{ cat "$T/nm.txt"; echo "0000000000001000 D onnx__tensor_proto__descriptor"; } > "$T/proto.txt"
bites "generated protobuf code exported" "onnx__tensor_proto__descriptor: exported" "$T/proto.txt" "$INC"
grep -v ' oq_status_str$' "$T/nm.txt" > "$T/missing.txt"
bites "a declared function not exported" "oq_status_str: declared OQ_API in status.h but not exported" "$T/missing.txt" "$INC"
cp -r "$INC" "$T/inc"
sed -i 's/^OQ_API const char \*oq_status_str/const char *oq_status_str/' "$T/inc/ortqual/status.h"
bites "a declaration without OQ_API" "oq_status_str: declared in status.h without OQ_API" "$T/nm.txt" "$T/inc"
# ortqual's own programs link the objects archived as compiled (the tests call internal functions):
# every internal helper and the generated protobuf code are global there
for name in cv_model_load gate_strv_push onnx__tensor_proto__descriptor; do
    bites "$name global in an archive" "$name: exported by libortqual_internal.a" "" "$INC" "$OQ_ARCHIVE_INTERNAL"
done
echo "exports: the check catches an extra export, a missing one, an unmarked declaration and internal globals of an archive"
