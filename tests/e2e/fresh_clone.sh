#!/usr/bin/env bash
# A clone stands alone: the repository cloned into an empty temporary directory (no sibling
# folders) installs its dependencies with its own script, builds, runs conformance tests from the
# set vendored in the tree; `make install` into a prefix, the clone deleted, a C program linked
# against the installed libortqual (shared, and static: it finds ORT through the prefix the build
# was configured for) still finds the ONNX Runtime installed with it, and the installed tool runs
# the installed conformance set.
set -euo pipefail
: "${OQ_SOURCE_DIR:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
git -C "$OQ_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1 || fail "$OQ_SOURCE_DIR is not a git checkout"
# what is committed is what a user clones
git clone -q "$OQ_SOURCE_DIR" "$T/clone" || fail "git clone"
C="$T/clone"
[ ! -e "$T/shared" ] || fail "$T/shared exists: not an empty neighbourhood"
if out=$(git -C "$C" grep -n -I '\.\./shared' -- . ':!docs/evidence'); then fail "the tree points outside itself: $out"; fi

"$C/scripts/deps.sh" > "$T/deps.log" 2>&1 || fail "deps.sh: $(tail -5 "$T/deps.log")"
cmake -S "$C" -B "$C/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORTQUAL_TESTS=OFF -DORTQUAL_BENCH=OFF \
    -DCMAKE_INSTALL_PREFIX="$T/prefix" \
    > "$T/cmake.log" 2>&1 || fail "cmake configure: $(tail -5 "$T/cmake.log")"
cmake --build "$C/build" -j "$(nproc)" > "$T/build.log" 2>&1 || fail "build: $(grep -m3 -E 'error|Error' "$T/build.log")"

# one conformance test by path, then the whole shipped set by default
"$C/build/ortqual" conformance "$C/tests/data/onnx-backend/attention/test_attention_4d_causal" > "$T/one.out" ||
    fail "conformance in the clone: $(cat "$T/one.out")"
grep -qx "PASS test_attention_4d_causal" "$T/one.out" || fail "no PASS line: $(cat "$T/one.out")"
[ "$(tail -n 1 "$T/one.out")" = "1 passed, 0 failed, 0 skipped" ] || fail "closing line: $(tail -n 1 "$T/one.out")"

cmake --install "$C/build" > "$T/install.log" || fail "install: $(tail -3 "$T/install.log")"
rm -rf "$C"
[ ! -e "$C" ] || fail "clone not removed"

cat > "$T/use.c" <<'C'
#include <stdio.h>
#include <ortqual/runtime.h>
int main(void)
{
    oq_err err = {0};
    oq_runtime *rt;
    if (oq_runtime_load(NULL, &rt, &err)) return printf("%s\n", err.msg), 3;
    printf("ORT %s from %s\n", oq_runtime_version(rt), oq_runtime_lib_path(rt));
    oq_runtime_free(rt);
    return 0;
}
C
mkdir "$T/bin"
gcc -std=c17 "$T/use.c" -o "$T/bin/use" -I"$T/prefix/include" -L"$T/prefix/lib" -lortqual \
    -Wl,-rpath,"$T/prefix/lib" || fail "consumer build"
out=$(cd / && env -u ORTQUAL_ORT_LIB -u LD_LIBRARY_PATH ORT_DISABLE_TELEMETRY=1 "$T/bin/use") ||
    fail "consumer with the build tree gone: $out"
[ "$out" = "ORT 1.29.0 from $T/prefix/lib/ortqual/libonnxruntime.so" ] || fail "consumer loaded: $out"
# linked with libortqual.a, elsewhere (no libortqual.so to look beside): the configured prefix's ORT
mkdir "$T/elsewhere"
gcc -std=c17 "$T/use.c" -o "$T/elsewhere/use_static" \
    $(PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" pkg-config --cflags --libs ortqual-static) || fail "static consumer build"
out=$(cd / && env -u ORTQUAL_ORT_LIB -u LD_LIBRARY_PATH ORT_DISABLE_TELEMETRY=1 "$T/elsewhere/use_static") ||
    fail "static consumer with the build tree gone: $out"
[ "$out" = "ORT 1.29.0 from $T/prefix/lib/ortqual/libonnxruntime.so" ] || fail "static consumer loaded: $out"

"$T/prefix/bin/ortqual" conformance > "$T/all.out" 2>&1 || fail "installed conformance: $(tail -3 "$T/all.out")"
n_base=$(grep -c '^PASS ' "$T/all.out")
[ "$n_base" -eq 58 ] && grep -qx "58 passed, 0 failed, 58 skipped" "$T/all.out" ||
    fail "installed set: $(tail -n 1 "$T/all.out")"
echo "fresh clone e2e: built in an empty directory, conformance passed, installed consumer found its ORT"
