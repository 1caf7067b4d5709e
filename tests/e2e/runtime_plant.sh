#!/usr/bin/env bash
# A program that links libortqual (static or shared) but is not one of ortqual's own never loads a
# libonnxruntime.so planted in the project's layout around its executable (../third_party/...,
# ../../third_party/..., ../lib/ortqual, ...: in /tmp, anyone's to create); ortqual's own tool
# copied there does (the plant bites). With nothing to find, the statically linked program's
# error says how to point it at ORT.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
: "${OQ_BINARY_DIR:?}" "${ORTQUAL:?}" "${OQ_ORT_LIB:?}" "${OQ_ORT_INSTALL_LIB:?}"
MARK="PLANTED libonnxruntime.so loaded"
cat > "$T/fake.c" <<C
#include <stdio.h>
__attribute__((constructor)) static void planted(void) { fprintf(stderr, "$MARK\n"); }
void *OrtGetApiBase(void) { return 0; }
C
gcc -shared -fPIC "$T/fake.c" -o "$T/fake.so" || fail "fake library build"
D="$T/plant/app/bin" # the executables' folder
mkdir -p "$D"
for rel in ../third_party/onnxruntime/lib ../../third_party/onnxruntime/lib ../lib/ortqual \
    ../lib64/ortqual ../lib/x86_64-linux-gnu/ortqual; do
    mkdir -p "$D/$rel" && cp "$T/fake.so" "$D/$rel/libonnxruntime.so"
done

cat > "$T/use.c" <<'C'
#include <stdio.h>
#include <ortqual/runtime.h>
int main(void)
{
    oq_err err = {0};
    oq_runtime *rt;
    if (oq_runtime_load(NULL, &rt, &err)) return printf("%s\n", err.msg), 3;
    printf("ORT from %s\n", oq_runtime_lib_path(rt));
    oq_runtime_free(rt);
    return 0;
}
C
# a sanitized libortqual needs the sanitizer runtimes in the program too
SAN=""
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && SAN="-fsanitize=address,undefined"
PC="$OQ_BINARY_DIR/ortqual.pc" # its dependencies are what a static link needs
DEPS=$(sed -n 's/^Libs.private: //p' "$PC")
gcc -std=c17 $SAN "$T/use.c" -o "$D/use_static" -I"$OQ_SOURCE_DIR/include" "$OQ_BINARY_DIR/libortqual.a" \
    $DEPS || fail "static build"
gcc -std=c17 $SAN "$T/use.c" -o "$D/use_shared" -I"$OQ_SOURCE_DIR/include" -L"$OQ_BINARY_DIR" -lortqual \
    -Wl,-rpath,"$OQ_BINARY_DIR" || fail "shared build"

run() { (cd "$D" && env -u ORTQUAL_ORT_LIB ORT_DISABLE_TELEMETRY=1 "$@" 2>&1); }
for prog in use_static use_shared; do
    out=$(run "$D/$prog") || fail "$prog found no ORT: $out"
    ! grep -q "$MARK" <<<"$out" || fail "$prog loaded the planted library: $out"
    grep -q "^ORT from /" <<<"$out" && ! grep -q "$T" <<<"$out" || fail "$prog: $out"
done
cp "$ORTQUAL" "$D/ortqual"
out=$(run "$D/ortqual" --version) || true
grep -q "$MARK" <<<"$out" || fail "the plant does not bite: ortqual's own tool beside it did not load it: $out"

# Nothing to find: the two places a statically linked libortqual looks (ORT under the prefix the
# build was configured for, which an earlier `make install` may have filled, and ORT_ROOT's) hidden
# under a tmpfs each in a private mount namespace, so that the check runs on any host.
if [ "$(id -u)" -eq 0 ]; then ns=(unshare --mount --propagation private)
else ns=(unshare --user --map-root-user --mount --propagation private); fi
hidden() { # hidden DIR... -- CMD...: CMD with each DIR that exists empty
    "${ns[@]}" sh -c 'while [ "$1" != -- ]; do [ ! -d "$1" ] || mount -t tmpfs tmpfs "$1" || exit 125; shift; done
        shift && cd / && exec "$@"' sh "$@"
}
rc=0
out=$(hidden "$(dirname "$OQ_ORT_LIB")" "$(dirname "$OQ_ORT_INSTALL_LIB")" -- env -u ORTQUAL_ORT_LIB "$D/use_static" 2>&1) || rc=$?
[ "$rc" -eq 3 ] || fail "static program with ORT_ROOT's and the prefix's ORT hidden: exit $rc: $out"
grep -q "cannot load ONNX Runtime; tried: .*; a statically linked libortqual looks only under the prefix it was configured for: set ORTQUAL_ORT_LIB or pass a path$" <<<"$out" ||
    fail "no hint in the static program's error: $out"
grep -qF "tried: $OQ_ORT_INSTALL_LIB (" <<<"$out" && grep -qF "; $OQ_ORT_LIB (" <<<"$out" ||
    fail "the static program did not try the prefix's and ORT_ROOT's library, in that order: $out"
! grep -q "$T" <<<"$out" || fail "a user's program tried the project's layout: $out"
echo "runtime plant e2e: a user's program ignored the planted library, ortqual's tool took it; the hint is there"
