#!/usr/bin/env bash
# make install's layout works for a C project: pkg-config and the CMake package both link a
# program against libortqual, the ABI version CMakeLists.txt and cmake/ortqual.abi name
# (libortqual.so.N), and the installed tool finds the ONNX Runtime installed beside it.
set -euo pipefail
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$OQ_BINARY_DIR" --prefix "$T/prefix" > "$T/install.log" || fail "cmake --install: $(tail -3 "$T/install.log")"
# the installed library is the ABI CMakeLists.txt names and cmake/ortqual.abi records:
# libortqual.so -> libortqual.so.N (its SONAME) -> libortqual.so.N.<release>
SO=$OQ_SOVERSION
[ "$(readlink "$T/prefix/lib/libortqual.so")" = "libortqual.so.$SO" ] ||
  fail "installed libortqual.so -> $(readlink "$T/prefix/lib/libortqual.so"), not libortqual.so.$SO"
readelf -d "$T/prefix/lib/libortqual.so.$SO" | grep -q "(SONAME).*\[libortqual\.so\.$SO\]" ||
  fail "installed libortqual.so.$SO: $(readelf -d "$T/prefix/lib/libortqual.so.$SO" | grep SONAME)"
grep -qx "soversion: $SO" "$OQ_SOURCE_DIR/cmake/ortqual.abi" || fail "cmake/ortqual.abi records another SOVERSION than $SO"
# needs_so PROGRAM: it was linked against the ABI installed (the loader looks for libortqual.so.N)
needs_so() {
  readelf -d "$1" | grep -q "(NEEDED).*\[libortqual\.so\.$SO\]" ||
    fail "$1 needs $(readelf -d "$1" | grep -o 'libortqual[^]]*'), not libortqual.so.$SO"
}
cat > "$T/use.c" <<'C'
#include <stdio.h>
#include <ortqual/mask.h>
#include <ortqual/runtime.h>
int main(void)
{
    oq_err err = {0};
    int64_t shape[2] = {1, 4}, lengths[1];
    oq_tensor *m;
    if (oq_tensor_create(&m, OQ_DTYPE_FLOAT32, 2, shape, "mask", &err)) return 2;
    ((float *)m->data)[0] = 1; ((float *)m->data)[2] = 1;   /* a hole at position 2 */
    oq_status st = oq_mask_check(m, NULL, lengths, &err);
    printf("%s: %s\n", oq_status_str(st), err.msg);
    oq_tensor_free(m);
    oq_runtime *rt;
    if (oq_runtime_load(getenv("OQ_ORT_LIB"), &rt, &err)) return printf("%s\n", err.msg), 3;
    printf("ORT %s\n", oq_runtime_version(rt));
    oq_runtime_free(rt);
    return st == OQ_ERR_MASK ? 0 : 1;
}
C
sed -i '1i #include <stdlib.h>' "$T/use.c"
export PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig"
# a sanitized libortqual needs the sanitizer runtimes first in the program too
SAN=""
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && SAN="-fsanitize=address,undefined"
gcc -std=c17 $SAN "$T/use.c" -o "$T/use_pc" $(pkg-config --cflags --libs ortqual) -Wl,-rpath,"$T/prefix/lib" ||
  fail "pkg-config build"
needs_so "$T/use_pc"
"$T/use_pc" > "$T/pc.out" || fail "pkg-config program: $(cat "$T/pc.out")"
grep -q "event 0" "$T/pc.out" && grep -q "ORT 1.29.0" "$T/pc.out" || fail "pkg-config program output: $(cat "$T/pc.out")"
# --cflags is ortqual's include folder alone: the dependencies' (-I/usr/include/plplot, which holds
# nn.h, csa.h, pdf.h) hid a consumer's own headers of those names; --static --libs still lists them
for pc in ortqual ortqual-static; do
  read -r -a flags <<< "$(pkg-config --cflags $pc)"
  [ ${#flags[@]} -eq 1 ] && [ "${flags[0]#-I}" -ef "$T/prefix/include" ] ||
    fail "pkg-config --cflags $pc is more than ortqual's include folder: ${flags[*]}"
done
for l in -lortqual -lprotobuf-c -lzip -ljansson -lplplot -lpng16 -lz -fopenmp; do
  pkg-config --static --libs ortqual | tr ' ' '\n' | grep -qx -- "$l" ||
    fail "pkg-config --static --libs ortqual lacks $l: $(pkg-config --static --libs ortqual)"
done
mkdir -p "$T/nnapp/include"
echo '#define APP_NN 1' > "$T/nnapp/include/nn.h"
cat > "$T/nnapp/main.c" <<'C'
#include <nn.h>
#include <ortqual/status.h>
#ifndef APP_NN
#error another nn.h than the project's
#endif
int main(void) { return oq_status_str(OQ_OK) ? 0 : 1; }
C
gcc -std=c17 $SAN $(pkg-config --cflags ortqual) -I"$T/nnapp/include" "$T/nnapp/main.c" -o "$T/nnapp/app" \
  $(pkg-config --libs ortqual) 2> "$T/nnapp.log" || fail "a project with its own nn.h: $(head -3 "$T/nnapp.log")"
# the static library through pkg-config: ortqual-static (-lortqual takes the shared one)
gcc -std=c17 $SAN "$T/use.c" -o "$T/use_pc_static" $(pkg-config --cflags --libs ortqual-static) ||
  fail "pkg-config ortqual-static build"
readelf -d "$T/use_pc_static" | grep -q 'NEEDED.*libortqual' && fail "pkg-config ortqual-static linked libortqual.so"
env -u ORTQUAL_ORT_LIB "$T/use_pc_static" > "$T/pcs.out" && grep -q "ORT 1.29.0" "$T/pcs.out" ||
  fail "program linked with pkg-config's ortqual-static: $(cat "$T/pcs.out")"
# Debian's multiarch libdir (PREFIX=/usr gives lib/x86_64-linux-gnu, pkgconfig one level deeper):
# the .pc file's way up to the prefix follows it (it went up two, to <prefix>/lib)
cache() { sed -n "s/^$1:[A-Z]*=//p" "$OQ_BINARY_DIR/CMakeCache.txt"; }
cmake -S "$OQ_SOURCE_DIR" -B "$T/multiarch-cfg" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu \
  -DORT_ROOT="$(cache ORT_ROOT)" -DONNX_PROTO="$(cache ONNX_PROTO)" -DCMAKE_C_COMPILER="$(cache CMAKE_C_COMPILER)" \
  -DORTQUAL_TESTS=OFF -DORTQUAL_BENCH=OFF > "$T/multiarch-cfg.log" 2>&1 || fail "configure with a multiarch libdir: $(tail -5 "$T/multiarch-cfg.log")"
M="$T/usr"; ML="$M/lib/x86_64-linux-gnu"
mkdir -p "$ML/pkgconfig"
cp -a "$T/prefix/include" "$M/"
cp -a "$T/prefix/lib/"libortqual* "$ML/"
cp "$T/multiarch-cfg/"ortqual*.pc "$ML/pkgconfig/"
for pc in ortqual ortqual-static; do
  [ "$(PKG_CONFIG_PATH="$ML/pkgconfig" pkg-config --variable=libdir $pc)" -ef "$ML" ] ||
    fail "$pc.pc in $ML/pkgconfig: libdir $(PKG_CONFIG_PATH="$ML/pkgconfig" pkg-config --variable=libdir $pc), not $ML"
  [ "$(PKG_CONFIG_PATH="$ML/pkgconfig" pkg-config --variable=includedir $pc)" -ef "$M/include" ] ||
    fail "$pc.pc in $ML/pkgconfig: includedir $(PKG_CONFIG_PATH="$ML/pkgconfig" pkg-config --variable=includedir $pc), not $M/include"
done
gcc -std=c17 $SAN "$T/use.c" -o "$T/use_multiarch" $(PKG_CONFIG_PATH="$ML/pkgconfig" pkg-config --cflags --libs ortqual) \
  -Wl,-rpath,"$ML" || fail "pkg-config build against the multiarch layout"
"$T/use_multiarch" | grep -q "ORT 1.29.0" || fail "program linked against the multiarch layout"
mkdir -p "$T/cm"
cat > "$T/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(use C)
find_package(ortqual REQUIRED)
add_executable(use "$T/use.c")
target_link_libraries(use ortqual::ortqual)
add_executable(use_static "$T/use.c")
target_link_libraries(use_static ortqual::ortqual_static)
CM
cmake -S "$T/cm" -B "$T/cm/b" -DCMAKE_PREFIX_PATH="$T/prefix" -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" > "$T/cm.log" 2>&1 || fail "cmake configure: $(tail -5 "$T/cm.log")"
# find_package(ortqual) leaves the caller's own ZLIB_* and PNG_* alone: its dependencies are
# found under private names (pkg_check_modules(ZLIB) set ZLIB_LIBRARIES to 'z', FindZLIB's
# path gone, and PNG_LIBRARIES to libpng's bare name)
mkdir -p "$T/vars"
cat > "$T/vars/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(vars C)
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
# every ZLIB_* and PNG_* variable and its value, one "NAME=VALUE" a line
function(ours out)
  get_cmake_property(names VARIABLES)
  set(lines "")
  foreach(n IN LISTS names)
    if(n MATCHES "^(ZLIB|PNG)_")
      string(APPEND lines "${n}=${${n}}\n")
    endif()
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()
ours(before)
find_package(ortqual REQUIRED)
ours(after)
file(WRITE "${CMAKE_BINARY_DIR}/before.txt" "${before}")
file(WRITE "${CMAKE_BINARY_DIR}/after.txt" "${after}")
CM
cmake -S "$T/vars" -B "$T/vars/b" -DCMAKE_PREFIX_PATH="$T/prefix" > "$T/vars.log" 2>&1 ||
  fail "cmake configure of a project that finds ZLIB and PNG itself: $(tail -5 "$T/vars.log")"
grep -q '^ZLIB_LIBRARIES=/' "$T/vars/b/before.txt" || fail "FindZLIB gave no library path: $(cat "$T/vars/b/before.txt")"
diff "$T/vars/b/before.txt" "$T/vars/b/after.txt" > "$T/vars.diff" ||
  fail "find_package(ortqual) changed the caller's ZLIB_*/PNG_* variables (< before, > after):
$(cat "$T/vars.diff")"
cmake --build "$T/cm/b" > "$T/cmb.log" 2>&1 || fail "cmake build: $(tail -5 "$T/cmb.log")"
needs_so "$T/cm/b/use"
LD_LIBRARY_PATH="$T/prefix/lib" "$T/cm/b/use" | grep -q "ORT 1.29.0" || fail "CMake program"
"$T/cm/b/use_static" | grep -q "ORT 1.29.0" || fail "CMake program linked with ortqual::ortqual_static"
# a C++-only project (no C language enabled: OpenMP's C component cannot be found there) uses
# the package too, both targets, and the headers and their macros (graph.h's OQ_DIM, OQ_ATTR_I:
# compound literals in C) compile as C++ without warnings
mkdir -p "$T/cxx"
cat > "$T/cxx/use.cpp" <<'CXX'
#include <cstdio>
#include <ortqual/graph.h>
#include <ortqual/runtime.h>
int main()
{
    oq_err err = {};
    oq_opset ops[] = {{"", 20}};
    oq_graph *g;
    if (oq_graph_create(ops, 1, "tiny", &g, &err)) return std::printf("%s\n", err.msg), 3;
    oq_dim d[] = {OQ_DIM_SYM("batch"), OQ_DIM(4)};
    const char *in[] = {"x"};
    oq_attr axis = OQ_ATTR_I("axis", -1);
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 2, d);
    oq_graph_add_output(g, oq_graph_op(g, "Softmax", 1, in, 1, &axis), "y", OQ_DTYPE_FLOAT32, 2, d);
    if (oq_graph_status(g, &err)) return std::printf("%s\n", err.msg), 3;
    oq_graph_free(g);
    oq_runtime *rt;
    if (oq_runtime_load(nullptr, &rt, &err)) return std::printf("%s\n", err.msg), 3;
    std::printf("ORT %s\n", oq_runtime_version(rt));
    oq_runtime_free(rt);
    return 0;
}
CXX
cat > "$T/cxx/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(usecxx CXX)
find_package(ortqual REQUIRED)
add_compile_options(-Wall -Wextra -Werror -pedantic)
add_executable(use use.cpp)
target_link_libraries(use ortqual::ortqual)
add_executable(use_static use.cpp)
target_link_libraries(use_static ortqual::ortqual_static)
CM
cmake -S "$T/cxx" -B "$T/cxx/b" -DCMAKE_PREFIX_PATH="$T/prefix" -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" > "$T/cxx.log" 2>&1 ||
  fail "cmake configure of a C++ project: $(grep -m3 -A3 'CMake Error' "$T/cxx.log")"
cmake --build "$T/cxx/b" > "$T/cxxb.log" 2>&1 || fail "cmake build of a C++ project: $(tail -5 "$T/cxxb.log")"
env -u ORTQUAL_ORT_LIB LD_LIBRARY_PATH="$T/prefix/lib" "$T/cxx/b/use" | grep -q "ORT 1.29.0" || fail "C++ program"
# through pkg-config the headers are not system headers: warnings of their macros show there
g++ -std=c++11 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags ortqual) -c "$T/cxx/use.cpp" -o "$T/cxx/use.o" \
  2> "$T/cxx_pc.log" || fail "C++ with pkg-config's flags: $(grep -m2 'error' "$T/cxx_pc.log")"
env -u ORTQUAL_ORT_LIB "$T/cxx/b/use_static" | grep -q "ORT 1.29.0" || fail "C++ program linked with ortqual::ortqual_static"
# the installed tool finds the runtime installed beside it, with no environment
env -u ORTQUAL_ORT_LIB "$T/prefix/bin/ortqual" --version | grep -q "$T/prefix/lib/ortqual/libonnxruntime.so" ||
  fail "installed tool does not use its own ORT: $("$T/prefix/bin/ortqual" --version)"
echo "install e2e: all checks passed"
