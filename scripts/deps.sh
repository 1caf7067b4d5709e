#!/usr/bin/env bash
# deps.sh: install what ortqual needs on Debian 12, idempotently.
#   1. Debian packages (apt-get), only those missing (chromium and libxml2-utils: tests only).
#   2. ONNX Runtime 1.29.0 from the npm registry, sha512-checked, cached in
#      ${XDG_CACHE_HOME:-~/.cache}/ortqual and unpacked into third_party/onnxruntime.
#   3. With ORTQUAL_GPU=1: ORT's CUDA execution provider (com.github.asus4.onnxruntime.linux-x64-gpu
#      @0.4.9: ORT 1.29, CUDA 13, cuDNN 9; sha512-checked, cached) unpacked beside the core library,
#      where ortqual finds it by itself. The host needs the CUDA 13 runtime and cuDNN 9.
#      ORTQUAL_ORT_CUDA_DIR=DIR (a directory of already-unpacked ORT libraries, for hosts without
#      registry access) links DIR's CUDA EP instead of downloading; the tool itself then loads
#      ORT from DIR too (see docs/gpu.md).
# ORT_ROOT=/path (an official release layout: include/, lib/) skips step 2.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium and libxml2-utils are for the tests only: report.html is loaded in headless
# Chromium (tests/e2e/report.sh) and JUnit XML checked against its schema with xmllint.
# clang + libclang-rt-14-dev (libFuzzer: libclang_rt.fuzzer-x86_64.a) + libomp-dev (OpenMP
# for clang) build the fuzz harnesses of fuzz/ (make fuzz, make test-fuzz). slurm-wlm and munge
# run the one-node SLURM cluster of tests/e2e/slurm.sh (started privately, stopped by pid).
PKGS="build-essential cmake pkg-config libprotobuf-c-dev protobuf-c-compiler libonnx-dev
      libzip-dev zlib1g-dev libjansson-dev libplplot-dev plplot-driver-cairo libpng-dev libcmocka-dev
      python3 python3-numpy python3-pytest openssl chromium libxml2-utils clang libclang-rt-14-dev
      libomp-dev slurm-wlm munge"
ORT_PKG=com.github.asus4.onnxruntime@0.4.9
ORT_TGZ=com.github.asus4.onnxruntime-0.4.9.tgz
ORT_SHA512=BkzxduSZ9IkeDP6Q8lz2TFU2ie7hSSvS7ZIfzMooExoq0CNzJnuuGaUJ7IsojBgqO4ouD1jXah8OYyJbCN29Fg==
ORT_HDRS='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
ORT_LIBS='package/Plugins/Linux/x64'
# A second runtime, ORT 1.30.0, for cross-version replay tests (its C library only).
ORT130_PKG=onnxruntime-node@1.30.0
ORT130_TGZ=onnxruntime-node-1.30.0.tgz
ORT130_SHA512=twhs1C2C/BFkz1yc5OY0KIU2GUq6DURO7hD4bx5Q2Qy3nAMJwRXW8xU3NVczE29VA9lolLOYepoD8fjTGOfIqw==
ORT130_LIB='package/bin/napi-v6/linux/x64/libonnxruntime.so.1'
# The CUDA execution provider (ORTQUAL_GPU=1): a plugin library for the 1.29.0 core above.
ORT_GPU_PKG=com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9
ORT_GPU_TGZ=com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9.tgz
ORT_GPU_SHA512=FopIhNE/Ng+v2X65wVc9clPCBCvhvA53Hxo2U0Kf5fGdVsC7iCA+mZ0KLWggcQAj7TIZ6pNidR4AC10g74Xo6w==
ORT_GPU_LIB='package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so'
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/ortqual
DEST=third_party/onnxruntime
DEST130=third_party/onnxruntime-1.30

say() { printf 'deps: %s\n' "$*" >&2; }

install_debian() {
    local missing=()
    for p in $PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    # npm may come with a nodesource nodejs, which conflicts with Debian's npm package
    command -v npm >/dev/null || missing+=(npm)
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

sha512_ok() { [ "$(openssl dgst -sha512 -binary "$1" | base64 -w0)" = "$2" ]; }

# fetch_npm PKG TGZ SHA512: the tarball in the cache, downloaded once, verified every time.
fetch_npm() {
    mkdir -p "$CACHE"
    if [ -f "$CACHE/$2" ] && sha512_ok "$CACHE/$2" "$3"; then return 0; fi
    say "downloading $1 from the npm registry"
    rm -f "$CACHE/$2"
    (cd "$CACHE" && npm pack --silent "$1" >/dev/null)
    sha512_ok "$CACHE/$2" "$3" || { say "sha512 mismatch for $CACHE/$2 (removed)"; rm -f "$CACHE/$2"; exit 3; }
}

unpack_ort() {
    local stamp="$DEST/.sha512"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ORT_SHA512" ] && [ -f "$DEST/lib/libonnxruntime.so" ]; then
        return 0
    fi
    fetch_npm "$ORT_PKG" "$ORT_TGZ" "$ORT_SHA512"
    say "unpacking ONNX Runtime 1.29.0 into $DEST"
    local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
    tar -xzf "$CACHE/$ORT_TGZ" -C "$tmp" "$ORT_HDRS" "$ORT_LIBS"
    rm -rf "$DEST.tmp" && mkdir -p "$DEST.tmp/include" "$DEST.tmp/lib"
    cp "$tmp/$ORT_HDRS"/*.h "$DEST.tmp/include/"
    cp "$tmp/$ORT_LIBS"/*.so "$DEST.tmp/lib/"
    ln -sf libonnxruntime.so "$DEST.tmp/lib/libonnxruntime.so.1"
    echo "$ORT_SHA512" > "$DEST.tmp/.sha512"
    rm -rf "$DEST" && mv "$DEST.tmp" "$DEST"
}

unpack_ort130() {
    [ -f "$DEST130/.sha512" ] && [ "$(cat "$DEST130/.sha512")" = "$ORT130_SHA512" ] && return 0
    fetch_npm "$ORT130_PKG" "$ORT130_TGZ" "$ORT130_SHA512"
    say "unpacking ONNX Runtime 1.30.0 (C library only) into $DEST130"
    local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
    tar -xzf "$CACHE/$ORT130_TGZ" -C "$tmp" "$ORT130_LIB"
    rm -rf "$DEST130.tmp" && mkdir -p "$DEST130.tmp/lib"
    cp "$tmp/$ORT130_LIB" "$DEST130.tmp/lib/libonnxruntime.so.1"
    echo "$ORT130_SHA512" > "$DEST130.tmp/.sha512"
    rm -rf "$DEST130" && mv "$DEST130.tmp" "$DEST130"
}

# The CUDA EP beside the core library: from ORTQUAL_ORT_CUDA_DIR, or the npm package.
install_cuda_ep() {
    local lib=$DEST/lib/libonnxruntime_providers_cuda.so
    if [ -n "${ORTQUAL_ORT_CUDA_DIR:-}" ]; then
        local src=$ORTQUAL_ORT_CUDA_DIR/libonnxruntime_providers_cuda.so
        [ -f "$src" ] || { say "ORTQUAL_ORT_CUDA_DIR=$ORTQUAL_ORT_CUDA_DIR has no libonnxruntime_providers_cuda.so"; exit 2; }
        ln -sf "$(cd "$ORTQUAL_ORT_CUDA_DIR" && pwd)/libonnxruntime_providers_cuda.so" "$lib"
        say "CUDA execution provider linked from $ORTQUAL_ORT_CUDA_DIR"
        return 0
    fi
    local stamp=$DEST/.cuda-sha512
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ORT_GPU_SHA512" ] && [ -f "$lib" ] && [ ! -L "$lib" ]; then
        return 0
    fi
    fetch_npm "$ORT_GPU_PKG" "$ORT_GPU_TGZ" "$ORT_GPU_SHA512"
    say "unpacking the CUDA execution provider into $DEST/lib"
    local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
    tar -xzf "$CACHE/$ORT_GPU_TGZ" -C "$tmp" "$ORT_GPU_LIB"
    rm -f "$lib" && cp "$tmp/$ORT_GPU_LIB" "$lib.tmp" && mv "$lib.tmp" "$lib"
    echo "$ORT_GPU_SHA512" > "$stamp"
}

install_debian
unpack_ort130
if [ -n "${ORT_ROOT:-}" ]; then
    [ -f "$ORT_ROOT/include/onnxruntime_c_api.h" ] || { say "ORT_ROOT=$ORT_ROOT has no include/onnxruntime_c_api.h"; exit 2; }
    say "using ONNX Runtime from ORT_ROOT=$ORT_ROOT"
else
    unpack_ort
    [ "${ORTQUAL_GPU:-0}" = 1 ] && install_cuda_ep
fi
exit 0
