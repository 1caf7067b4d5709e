#!/usr/bin/env bash
# libortqual's binary interface is the one recorded in cmake/ortqual.abi for its SOVERSION
# (tests/arch/abi.py: struct layouts, type sizes, enum values, exported symbols and their
# prototypes), the built library's SONAME is CMakeLists.txt's ORTQUAL_SOVERSION, and the check
# bites, on copies of the headers and the record: a member added to a struct or moved, a member's
# or a parameter's type and an enum value changed each fail naming what moved and what to do; the
# update refuses them until the SOVERSION is bumped, then records them; a compatible addition asks
# for the record alone; no record fails; another machine's record is skipped (77).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
CHECK="$OQ_SOURCE_DIR/tests/arch/abi.py"
INC="$OQ_SOURCE_DIR/include"
RECORD="$OQ_SOURCE_DIR/cmake/ortqual.abi"
SO=$OQ_SOVERSION
[ -f "$OQ_LIB" ] || fail "no library at $OQ_LIB"

soname=$(readelf -d "$OQ_LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libortqual.so.$SO" ] || fail "SONAME $soname, but ORTQUAL_SOVERSION is $SO"
rc=0; out=$($PY "$CHECK" check "$OQ_LIB" "$INC" "$RECORD" "$SO" "$OQ_CC") || rc=$?
[ $rc -eq 77 ] && { echo "$out"; exit 77; }
[ $rc -eq 0 ] || fail "the interface differs from cmake/ortqual.abi:
$out"
echo "$out"

# abi CMD INCLUDE RECORD SOVERSION: the checker on a scratch copy, its output in $out, status in $rc
abi() { rc=0; out=$($PY "$CHECK" "$1" "$OQ_LIB" "$2" "$3" "$4" "$OQ_CC") || rc=$?; }
# fails WHAT PATTERN...: the last abi call exited 1 and printed every PATTERN (grep -E)
fails() {
    local what=$1 p
    shift
    [ $rc -eq 1 ] || fail "$what: exit $rc, expected 1: $out"
    for p in "$@"; do grep -qE -- "$p" <<<"$out" || fail "$what: output lacks /$p/: $out"; done
}
scratch() { rm -rf "$T/inc" && cp -r "$INC" "$T/inc" && cp "$RECORD" "$T/rec"; }
NEXT=$((SO + 1))

# a member added after oq_slurm_job.merge_argc (in its padding today): the old program never sets it
scratch
sed -i 's/^\(    int merge_argc;.*\)$/\1\n    int added;/' "$T/inc/ortqual/slurm.h"
grep -q 'int added;' "$T/inc/ortqual/slurm.h" || fail "could not edit slurm.h"
abi check "$T/inc" "$T/rec" "$SO"
fails "a member added in padding" \
    "^incompatible: member oq_slurm_job\.added: added \(offset [0-9]+ size 4 type int\)$" \
    "accept it with scripts/abi-update\.sh --bump \(ORTQUAL_SOVERSION $SO -> $NEXT in CMakeLists\.txt, the record rewritten\)$"

# a member inserted first in oq_tensor: every other member moves and the struct grows
scratch
sed -i 's/^typedef struct oq_tensor {$/&\n    int added;/' "$T/inc/ortqual/tensor.h"
abi check "$T/inc" "$T/rec" "$SO"
fails "a member inserted" "^incompatible: struct oq_tensor: size [0-9]+ align 8 -> size [0-9]+ align 8$" \
    "^incompatible: member oq_tensor\.dtype: offset 0 size 4 type oq_dtype -> offset 4 size 4 type oq_dtype$" \
    "^incompatible: member oq_tensor\.added: added" "scripts/abi-update\.sh --bump \(ORTQUAL_SOVERSION $SO -> $NEXT"
# the update refuses it under the same SOVERSION and leaves the record as it was
abi update "$T/inc" "$T/rec" "$SO"
fails "update without a bump" "^refused: .*scripts/abi-update\.sh --bump \(ORTQUAL_SOVERSION $SO -> $NEXT"
cmp -s "$T/rec" "$RECORD" || fail "a refused update changed the record"
# the SOVERSION bumped but the record not updated: still stale
abi check "$T/inc" "$T/rec" "$NEXT"
fails "bumped, not recorded" "SOVERSION is $NEXT, .* describes $SO: run scripts/abi-update.sh to record interface $NEXT"
# bumped and recorded: the check passes, and a SOVERSION never goes back
abi update "$T/inc" "$T/rec" "$NEXT"
[ $rc -eq 0 ] || fail "update with SOVERSION $NEXT: exit $rc: $out"
grep -qx "soversion: $NEXT" "$T/rec" || fail "the updated record lacks soversion $NEXT"
abi check "$T/inc" "$T/rec" "$NEXT"
[ $rc -eq 0 ] || fail "bumped and recorded, the check still fails: $out"
abi check "$T/inc" "$T/rec" "$SO"
fails "SOVERSION lowered" "SOVERSION $SO is below the recorded $NEXT"

# an enum value changed (a constant inserted before it would do the same)
scratch
sed -i 's/OQ_DTYPE_BFLOAT16 = 16/OQ_DTYPE_BFLOAT16 = 17/' "$T/inc/ortqual/tensor.h"
abi check "$T/inc" "$T/rec" "$SO"
fails "an enum value changed" "^incompatible: enum OQ_DTYPE_BFLOAT16: 16 -> 17$" \
    "scripts/abi-update\.sh --bump \(ORTQUAL_SOVERSION $SO -> $NEXT"

# a member's type changed within its size, and a function's parameter type
scratch
sed -i 's/^    int owns_data; /    float owns_data; /' "$T/inc/ortqual/tensor.h"
sed -i 's/^OQ_API size_t oq_dtype_size(oq_dtype t);/OQ_API size_t oq_dtype_size(int t);/' "$T/inc/ortqual/tensor.h"
abi check "$T/inc" "$T/rec" "$SO"
fails "a type changed" \
    "^incompatible: member oq_tensor\.owns_data: offset ([0-9]+) size 4 type int -> offset \1 size 4 type float$" \
    "^incompatible: symbol oq_dtype_size: size_t \(oq_dtype\) -> size_t \(int\)$"

# a constant added with a new value breaks no old program: recorded without a bump
scratch
sed -i 's/OQ_DTYPE_BFLOAT16 = 16/&,\n    OQ_DTYPE_ADDED = 99/' "$T/inc/ortqual/tensor.h"
abi check "$T/inc" "$T/rec" "$SO"
fails "a compatible addition" "^compatible: enum OQ_DTYPE_ADDED: added \(99\)$" "no SOVERSION bump needed"
grep -q '^incompatible' <<<"$out" && fail "an added enum constant called incompatible: $out"
abi update "$T/inc" "$T/rec" "$SO"
[ $rc -eq 0 ] || fail "update of a compatible addition: exit $rc: $out"
abi check "$T/inc" "$T/rec" "$SO"
[ $rc -eq 0 ] || fail "a compatible addition recorded, the check still fails: $out"
# no record is no pass; another machine's record is skipped, never compared
abi check "$INC" "$T/none" "$SO"
fails "no record" "^no record at $T/none: run scripts/abi-update.sh$"
scratch
sed -i 's/^arch: .*/arch: riscv64/' "$T/rec"
abi check "$INC" "$T/rec" "$SO"
[ $rc -eq 77 ] && grep -q "describes riscv64" <<<"$out" || fail "another machine's record: exit $rc: $out"
echo "abi: the check catches a member added, moved or retyped, a prototype and an enum value changed," \
    "asks for a SOVERSION bump, and records additions without one"
