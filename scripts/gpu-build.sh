#!/usr/bin/env bash
# gpu-build.sh [OUTDIR]: build ortqual for a GPU host that has no registry access and none of
# our Debian packages (e.g. Ubuntu 24.04 with CUDA 13 and cuDNN 9). The tool, the benchmark and
# test programs go into OUTDIR (default .gpu-build, ignored by git) with the shared libraries
# they need beside them in OUTDIR/lib; glibc and the toolchain's runtime come from the host.
# On the host:  export LD_LIBRARY_PATH=$PWD/.gpu-build/lib:...;  .gpu-build/ortqual doctor ...
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-.gpu-build}
BUILD=build-gpu
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$(nproc)" >/dev/null
rm -rf "$OUT" && mkdir -p "$OUT/lib" "$OUT/bench" "$OUT/tests"
cp "$BUILD/ortqual" "$OUT/"
cp "$BUILD"/bench/* "$OUT/bench/" 2>/dev/null || true
cp "$BUILD"/tests/* "$OUT/tests/" 2>/dev/null || true
strip "$OUT/ortqual" "$OUT"/bench/* "$OUT"/tests/* 2>/dev/null || true
# Every library the programs need except the C runtime itself and OpenSSL 3's libcrypto
# (libzip's; 4.6 MB, and every current distribution has it), which the host has.
for f in "$OUT/ortqual" "$OUT"/bench/* "$OUT"/tests/*; do
  [ -f "$f" ] || continue
  ldd "$f" | awk '/=> \//{print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libgcc_s|libstdc\+\+|libcrypto|libssl)\.so' |
  while read -r lib; do cp -L "$lib" "$OUT/lib/"; done
strip --strip-unneeded "$OUT"/lib/*.so* 2>/dev/null || true
du -sh "$OUT"
