#!/usr/bin/env bash
# Errors that said the wrong thing, each case run with the real tool: the message names what is
# really wrong (and the exit status is the usage table's).
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"

# 1. a number past 64 bits is too large (it said "want a whole number >= 1", and --int-range
#    "want ... >= -9223372036854775808")
expect 2 "^ortqual estimate: --events '99999999999999999999': too large \(at most 9223372036854775807\)$" \
    $Q estimate x.json --events 99999999999999999999 --workers 2
expect 2 "^ortqual bench: --int-range '99999999999999999999': too large \(at most 9223372036854775807\)$" \
    $Q bench --int-range 0,99999999999999999999
expect 2 "^ortqual bench: --int-range '-99999999999999999999': too small \(at least -9223372036854775808\)$" \
    $Q bench --int-range -99999999999999999999,0

# 2. --ort-lib ./NAME for a file in the current folder loads it, and a file that is no library
#    gets the loader's reason (it said "No such file"); a bare NAME is the loader's to find, and
#    the current folder is not its (e2e/loadsafe)
: "${OQ_ORT_LIB:?}"
cp -L "$OQ_ORT_LIB" libonnxruntime.so
: >empty.so
expect 0 "library +$T/libonnxruntime.so" $Q doctor --ort-lib ./libonnxruntime.so
expect 3 "tried: \./empty.so \(file too short\)" $Q doctor --ort-lib ./empty.so
rm -f libonnxruntime.so

# 3. conformance given a regular file is "not a directory" (it said "no such directory")
: >afile
expect 2 "^ortqual conformance: afile: not a directory$" $Q conformance afile
expect 2 "^ortqual conformance: nothere: no such directory$" $Q conformance nothere

# 4. `ortqual help help` is the top-level usage (it said "'help' is not a command")
expect 0 "^usage: ortqual \[--version\] \[--help\] <command>" $Q help help

# 5. bench's note of its default --variants comes after the options are checked (an option's
#    error was two lines) and not with --quiet
out=$($Q bench --kv-heads 3 2>&1)
[ "$(wc -l <<<"$out")" = 1 ] && grep -q "kv heads 3" <<<"$out" && ok "bench --kv-heads 3: one line" ||
    bad "bench --kv-heads 3: $out"
mkdir -p nodev
B=(bench --seq-lens 8 --num-heads 2 --head-dim 8 --iters 1 --warmup 0 --threads 1 --modes masked)
out=$(ORTQUAL_TEST_DEVICE_ROOT=$T/nodev $Q "${B[@]}" --quiet --outdir bq 2>&1)
[ $? = 0 ] && ! grep -q "the default here" <<<"$out" && ok "bench --quiet: no --variants note" ||
    bad "bench --quiet: $out"
expect 0 "--variants cpu:decomposed:fp32,cpu:attention24:fp32 \(the default here\)" \
    env ORTQUAL_TEST_DEVICE_ROOT="$T/nodev" $Q "${B[@]}" --outdir bn

# 6. bench --model with an empty .npz (a zip without members) says so (it said "no tensor named
#    after an input")
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
/usr/bin/python3 -c 'import numpy; numpy.savez("e.npz")'
expect 2 "^ortqual bench: e.npz: holds no arrays$" $Q bench --model "$FX/tx_encoder_op18.onnx" --inputs e.npz --outdir be
expect 2 "^ortqual bench: e.npz: holds no arrays$" \
    $Q bench --model "$FX/tx_encoder_op18.onnx" --inputs "$FX/inputs_000.npz" --expected e.npz --outdir be

# 7. bench --model --expected whose shapes are not the model's outputs for --inputs is refused
#    before any timing (the row failed after the run, its timings dropped)
expect 2 "^ortqual bench: $FX/outputs_001.npz: member 'out' is \[2,24,3\], but the model's output 'out' is \[3,56,3\] for these inputs$" \
    $Q bench --model "$FX/tx_encoder_op18.onnx" --inputs "$FX/inputs_000.npz" --expected "$FX/outputs_001.npz" --outdir bx
absent() { [ ! -e "$1" ] && ok "$1: not made" || bad "$1: made"; }
absent bx
expect 0 "wrote" $Q bench --model "$FX/tx_encoder_op18.onnx" --inputs "$FX/inputs_001.npz" \
    --expected "$FX/outputs_001.npz" --iters 2 --warmup 0 --threads 1 --quiet --outdir bok

# 8. a mistyped --configs is said before the model is read: a large model's bytes never reach
#    memory (the typo took 2 s and 1.2 GB with a 600 MB model); peak memory of the child in KiB
$Q export encoder --width 512 --layers 4 --heads 8 --ffn-width 2048 -o wide.onnx >/dev/null
[ "$(stat -c %s wide.onnx)" -gt 40000000 ] || bad "wide.onnx: smaller than 40 MB"
# (against the same typo with a tiny model, measured alike: the build's own footprint, ASan's
# shadow memory included, is not the model's)
peak() { # peak MODEL: exit status, the child's peak RSS in KiB, its last line
    /usr/bin/python3 - "$Q" "$1" <<'PY'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "validate", "--model", sys.argv[2], "--configs", "cpu:model:fp32:noopt",
                    "--outdir", "typo"], capture_output=True, text=True)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.stderr.strip().splitlines()[-1])
PY
}
$Q export sdpa -o tiny.onnx >/dev/null
read -r _ base _ <<<"$(peak tiny.onnx)"
rss=$(peak wide.onnx)
read -r code kib msg <<<"$rss"
[ "$code" = 2 ] && [ "$kib" -lt $((base + 10000)) ] && grep -q "unknown kernel 'noopt'" <<<"$msg" &&
    ok "validate --configs typo: said at once ($kib KiB, $base with a tiny model)" || bad "validate --configs typo: $rss (tiny model: $base KiB)"
absent typo

# 9. bench's thread counts and --iters have a ceiling (--threads 100000 had ORT start threads
#    until the machine stalled; --iters 99999999999 ended in a bare "out of memory")
expect 2 "^ortqual bench: --threads '100000': want a whole number in 0..4096$" $Q bench --threads 100000
expect 2 "^ortqual bench: --inter-op-threads '5000': want a whole number in 0..4096$" $Q bench --inter-op-threads 5000
expect 2 "^ortqual bench: --iters '99999999999': want a whole number in 1..100000000$" $Q bench --iters 99999999999

# 10. validate --list-configs and a usage error leave no empty ortqual-out/ behind (the default
#     folder's parent stayed)
mkdir lc && (cd lc && $Q validate --list-configs >/dev/null && $Q validate --configs nosuch >/dev/null 2>&1
             [ -z "$(ls -A)" ]) && ok "no empty ortqual-out/ left" || bad "left in lc: $(ls -A lc)"

# 11. ORTQUAL_ORT_CUDA_DIR naming a folder without libonnxruntime.so broke every command with
#     exit 2, help and --version included, and --ort-lib did not override it: now only a load
#     without --ort-lib fails on it, naming the folder, and doctor reports it as a problem
mkdir nocuda
nc() { env -u ORTQUAL_ORT_LIB ORTQUAL_ORT_CUDA_DIR="$T/nocuda" "$@"; }
expect 0 "^usage: ortqual" nc $Q help
expect 0 "^usage: ortqual export" nc $Q export --help
expect 0 "wrote $T/nc.onnx" nc $Q export sdpa -o "$T/nc.onnx"
expect 0 "attention nodes: 1" nc $Q inspect "$T/nc.onnx"
expect 0 "ONNX Runtime: not loaded \(ORTQUAL_ORT_CUDA_DIR=$T/nocuda has no readable libonnxruntime.so: point it at .*\)$" nc $Q --version
expect 0 "^ONNX Runtime 1\.[0-9.]+ \(C API" nc $Q --version --ort-lib "$OQ_ORT_LIB"
expect 0 "healthy" nc $Q doctor --ort-lib "$OQ_ORT_LIB"
expect 3 "NOT HEALTHY:.*
  ORTQUAL_ORT_CUDA_DIR=$T/nocuda has no readable libonnxruntime.so" nc $Q doctor
# a run that loads ORT without --ort-lib fails on the folder: it never quietly takes another ORT
out=$(nc $Q validate --num-events 2 --max-len 8 --configs ref:encoder:fp64,cpu:decomposed:fp32 --repeat 1 \
      --no-plots --no-cache --outdir ncv 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "nocuda" <<<"$out" && ! grep -q "verdict: PASSED" <<<"$out" &&
    ok "validate without --ort-lib fails on the folder (exit $rc)" || bad "validate with a bad ORTQUAL_ORT_CUDA_DIR: exit $rc: $out"
# ... in the tool's words, the variable and what to do, before anything is made (it said the
# library's "cannot load ONNX Runtime; tried: .../nocuda/libonnxruntime.so (no such file); nothing
# else (ORTQUAL_ORT_LIB is set)", a variable the user never set, and left ncv/error.json);
# a run that loads no ORT runs
cd_why="ORTQUAL_ORT_CUDA_DIR=$T/nocuda has no readable libonnxruntime.so: point it at the folder of ONNX Runtime's unpacked libraries \(libonnxruntime.so, the CUDA EP's libonnxruntime_providers_cuda.so beside it\), unset it, or give --ort-lib PATH"
one_line 3 "^ortqual validate: $cd_why$" nc $Q validate --num-events 2 --max-len 8 --configs ref:encoder:fp64,cpu:decomposed:fp32 \
    --repeat 1 --no-plots --no-cache --outdir ncv2
[ ! -e ncv2 ] && ok "validate on the folder: nothing made" || bad "validate on the folder left ncv2: $(ls -A ncv2)"
expect 3 "\"error\": \"$cd_why\"," nc $Q validate --json --num-events 2 --max-len 8 --configs ref:encoder:fp64,cpu:decomposed:fp32 \
    --no-plots --no-cache --outdir ncv3
expect 0 "verdict: NOT TESTED" nc $Q validate --num-events 2 --max-len 8 --configs ref:encoder:fp64 --allow-skip --no-plots \
    --no-cache --outdir ncv4

# 12. the same garbage file is "not an ONNX model (protobuf parse failed ...)" in every command
#     that reads a model (inspect, convert and conformance each said it another way)
printf garbage >garbage.onnx && mkdir -p conf/test_x && cp garbage.onnx conf/test_x/model.onnx
why="not an ONNX model \(protobuf parse failed: truncated, corrupt or another format\)"
expect 2 "^ortqual inspect: garbage.onnx: $why$" $Q inspect garbage.onnx
expect 2 "garbage.onnx: $why$" $Q convert garbage.onnx -o g2.onnx --flash
expect 1 "^FAIL test_x: conf/test_x/model.onnx: $why$" $Q conformance conf

report
