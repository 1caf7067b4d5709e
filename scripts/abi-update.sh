#!/usr/bin/env bash
# abi-update.sh: record libortqual's binary interface in cmake/ortqual.abi, which tests/arch/abi
# holds the library to (docs/design.md, "ABI and versioning").
#
#   scripts/abi-update.sh [--bump] [BUILD_DIR]
#       builds libortqual in BUILD_DIR (default: build, configured already), then rewrites the
#       record from the public headers and the symbols the library exports
#
# A change that a program built against the recorded interface would misread (a struct's size, a
# member's offset, size or type, a type's size, an enum value, a symbol's prototype; anything
# removed) is refused while ORTQUAL_SOVERSION in CMakeLists.txt is the record's. --bump is the
# decision to break it: ORTQUAL_SOVERSION set to the record's + 1, then the build and the record.
# Additions (a struct, an enum constant of a new value, a function) keep the SOVERSION.
set -euo pipefail
die() { echo "abi-update: $*" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUMP=0
if [ "${1:-}" = --bump ]; then BUMP=1; shift; fi
BUILD=${1:-$ROOT/build}
RECORD="$ROOT/cmake/ortqual.abi"
[ -f "$BUILD/CMakeCache.txt" ] || die "$BUILD is no configured build folder (cmake -S . -B $BUILD)"
if [ $BUMP = 1 ]; then
    recorded=$(sed -n 's/^soversion: //p' "$RECORD")
    now=$(sed -n 's/^set(ORTQUAL_SOVERSION \([0-9]*\))$/\1/p' "$ROOT/CMakeLists.txt")
    [ -n "$recorded" ] && [ -n "$now" ] || die "no soversion in $RECORD or no set(ORTQUAL_SOVERSION N) in CMakeLists.txt"
    if [ "$now" -le "$recorded" ]; then
        sed -i "s/^set(ORTQUAL_SOVERSION $now)$/set(ORTQUAL_SOVERSION $((recorded + 1)))/" "$ROOT/CMakeLists.txt"
        echo "abi-update: ORTQUAL_SOVERSION $now -> $((recorded + 1)) in CMakeLists.txt"
    fi
fi
cmake --build "$BUILD" --target ortqual >/dev/null
LIB="$BUILD/libortqual.so"
so=$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[libortqual\.so\.\([0-9]*\)\]/\1/p')
[ -n "$so" ] || die "$LIB has no SONAME libortqual.so.N"
CC=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
python3 "$ROOT/tests/arch/abi.py" update "$LIB" "$ROOT/include" "$RECORD" "$so" "${CC:-cc}"
echo "abi-update: commit cmake/ortqual.abi with the change (and CMakeLists.txt where the SOVERSION moved)"
