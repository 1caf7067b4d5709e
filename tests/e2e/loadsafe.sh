#!/usr/bin/env bash
# What another user can put in a shared folder (a security QA pass, 2026-12-06):
# 1. A bare library name (ORTQUAL_ORT_LIB=libonnxruntime.so.1, --ort-lib NAME, --ep-lib
#    NAME=libx.so) loaded a file of that name from the current folder, which the dynamic loader
#    never searches: a library planted in a group's project folder ran its constructor as
#    whoever started ortqual there. A bare name is the loader's to find (LD_LIBRARY_PATH, also
#    when it names the current folder, its cache, the system's folders); a file here only is
#    named in the error, with how to load it on purpose.
# 2. The output folder's lock file was opened through a hard link and truncated to the pid:
#    `ln precious.txt out/.ortqual.lock` lost precious.txt. A lock of more than one link is
#    refused, the linked file untouched.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
unset ORTQUAL_ORT_LIB LD_LIBRARY_PATH

# the planted library: its constructor leaves a mark, whatever loads it
cat >evil.c <<C
#include <stdio.h>
__attribute__((constructor)) static void mark(void)
{
    FILE *f = fopen("$T/MARK", "a");
    if (f) fputs("planted library ran\n", f), fclose(f);
}
C
cc -shared -fPIC -o libonnxruntime.so.1 evil.c || fail "cc"
cp libonnxruntime.so.1 libmy_ep.so

# no_mark WHAT: the planted library did not run
no_mark() {
    if [ -e "$T/MARK" ]; then bad "$1: the library of the current folder ran"; rm -f "$T/MARK"; else ok "$1: not loaded"; fi
}
HINT='not found by the dynamic loader; \./%s exists in the current folder: write \./%s to load it'
# shellcheck disable=SC2059
ORT_HINT=$(printf "$HINT" libonnxruntime\\.so\\.1 libonnxruntime\\.so\\.1)
# shellcheck disable=SC2059
EP_HINT=$(printf "$HINT" libmy_ep\\.so libmy_ep\\.so)

one_line 3 "^ortqual doctor: cannot load ONNX Runtime; tried: libonnxruntime\.so\.1 \($ORT_HINT\); nothing else" \
    env ORTQUAL_ORT_LIB=libonnxruntime.so.1 "$Q" doctor
no_mark "ORTQUAL_ORT_LIB=libonnxruntime.so.1"
expect 3 "tried: libonnxruntime\.so\.1 \($ORT_HINT\)" "$Q" doctor --ort-lib libonnxruntime.so.1
no_mark "--ort-lib libonnxruntime.so.1"
expect 1 "EP 'myep' is not available: no EP library at libmy_ep\.so \($EP_HINT\)" "$Q" doctor --ep-lib myep=libmy_ep.so
no_mark "--ep-lib myep=libmy_ep.so"
# validate records each EP library's file (SHA-256) before its workers load it: it read ./NAME
expect 2 "^ortqual validate: EP library libmy_ep\.so: in no folder of LD_LIBRARY_PATH, so its file cannot be recorded: give its path \(\./libmy_ep\.so for one in the current folder\)$" \
    "$Q" validate --configs ref:encoder:fp64,myep:decomposed:fp32 --ep-lib myep=libmy_ep.so --num-events 2 \
    --threads 1 --no-cache --outdir ve
no_mark "validate --ep-lib myep=libmy_ep.so"

# what names the file on purpose still loads it: a path, or LD_LIBRARY_PATH naming this folder
expect 3 "tried: \./libonnxruntime\.so\.1 \(not an ONNX Runtime library: no OrtGetApiBase\)" \
    "$Q" doctor --ort-lib ./libonnxruntime.so.1
[ -e MARK ] && ok "--ort-lib ./NAME: loaded" || bad "--ort-lib ./NAME: not loaded"
rm -f MARK
expect 3 "tried: libonnxruntime\.so\.1 \(not an ONNX Runtime library: no OrtGetApiBase\)" \
    env LD_LIBRARY_PATH=. "$Q" doctor --ort-lib libonnxruntime.so.1
[ -e MARK ] && ok "LD_LIBRARY_PATH=. and a bare name: loaded" || bad "LD_LIBRARY_PATH=.: not loaded"
rm -f MARK

# an EP library's bare name found by the loader's cache or the system's folders (it was "no EP
# library" unless the file was here): handed to ORT by the file the loader took
LIBZ=$(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libz.so.1" {print $NF; exit}')
if [ -n "$LIBZ" ]; then
    expect 1 "EP zep: registering EP library /[^ ]*/libz\.so\.1: .*CreateEpFactories" \
        "$Q" doctor --ep-lib zep=libz.so.1
else ok "(no libz.so.1 in the loader's cache: the cache case is not checked here)"; fi

# 2. a hard link at the lock file's name: refused, exit 2, one line; the linked file intact
printf 'IMPORTANT DATA, 30 bytes long\n' >precious.txt
cp precious.txt precious.orig
mkdir out
ln precious.txt out/.ortqual.lock
V=(validate --configs ref:encoder:fp64 --num-events 2 --threads 1 --no-cache --allow-skip)
one_line 2 "^ortqual validate: out/\.ortqual\.lock: has 2 hard links: ortqual does not write through links in an output folder \(remove it\)$" \
    "$Q" "${V[@]}" --outdir out
cmp -s precious.txt precious.orig && ok "the hard-linked file is intact" || bad "precious.txt: $(od -c precious.txt | head -2)"
[ ! -e out/summary.json ] && ok "nothing ran" || bad "the run went on"
rm out/.ortqual.lock
expect 0 "" "$Q" "${V[@]}" --outdir out
[ ! -e out/.ortqual.lock ] && ok "a fresh lock: made and removed" || bad "the lock was left"

report
