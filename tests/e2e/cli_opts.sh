#!/usr/bin/env bash
# Options that were taken silently, or refused in the wrong words, are refused before any work
# with exit 2, naming the option (and what it contradicts); each case runs the real tool.
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
M="$FX/tx_encoder_op18.onnx"
cd "$T"
# only CODE PATTERN DIR CMD...: expect's check, and DIR holds error.json alone afterwards
only_error() {
    local d=$1
    [ "$(ls -A "$d" 2>/dev/null | tr '\n' ' ')" = "error.json " ] && ok "$d: only error.json" ||
        bad "$d: holds $(ls -A "$d" 2>&1 | tr '\n' ' ')"
}
# absent DIR: nothing was made
absent() { [ ! -e "$1" ] && ok "$1: not made" || bad "$1: made ($(ls -A "$1" 2>&1 | tr '\n' ' '))"; }

# 1. a --tolerance for an output the model does not have would be ignored: refused, the model's
#    outputs listed (a --model of yours and ortqual's encoder, in validate and replay)
expect 2 "--tolerance: tolerance for output 'otu': the model has no such output \(its outputs: out\)" \
    $Q validate --model "$M" --inputs "$FX/io.npz" --tolerance otu:rtol=0.5 --no-plots --outdir tol1
only_error tol1
expect 2 "output 'otu': the model has no such output \(its outputs: out\)" \
    $Q replay --model "$M" --inputs "$FX/io.npz" --reference expected --tolerance otu:rtol=0.5 --outdir tol2
only_error tol2
expect 2 "output 'clss': the model has no such output \(its outputs: cls, reg\)" \
    $Q validate --num-events 2 --repeat 1 --no-plots --configs ref:encoder:fp64,cpu:decomposed:fp32 \
    --tolerance reg:atol=1 --tolerance clss:fp16 --outdir tol3
expect 0 "verdict: PASSED" $Q validate --model "$M" --inputs "$FX/io.npz" --tolerance out:rtol=1e-3 \
    --tolerance atol=1e-4 --no-plots --outdir tol4

# 2. a file list followed by no file says so (it took the next option for its file, and blamed it)
for cmd in validate replay; do
    expect 2 "^ortqual $cmd: --inputs needs at least one file$" $Q $cmd --model "$M" --inputs --outdir in1
    expect 2 "^ortqual $cmd: --inputs needs at least one file$" $Q $cmd --model "$M" --inputs
    expect 2 "^ortqual $cmd: --expected needs at least one file$" $Q $cmd --model "$M" --inputs "$FX/io.npz" --expected --outdir in1
done
absent in1
# --timeout takes one range in both (replay took 0, which ran with no limit, and said 0..1000000)
for cmd in validate replay; do
    expect 2 "^ortqual $cmd: --timeout '0': want a whole number in 1\.\.1099511627776$" \
        $Q $cmd --model "$M" --inputs "$FX/io.npz" --timeout 0 --outdir to1
done
absent to1
# a real-valued option takes decimal digits alone, as whole-number ones do (strtod took hex and
# leading spaces: gate --timeout 0x10 was 16 s; --mask-fraction ' 0.5', --rtol 0x1p-3 likewise)
for t in 0x10 ' 5' inf; do
    expect 2 "^ortqual gate: --timeout '$t': expected seconds" $Q gate --timeout "$t" -- /bin/true
done
expect 2 "^ortqual bench: --mask-fraction ' 0.5': want a number" $Q bench --mask-fraction ' 0.5' --outdir to1
expect 2 "^ortqual conformance: --rtol wants a finite number >= 0, got '0x1p-3'" $Q conformance --rtol 0x1p-3
expect 2 "^ortqual validate: --tolerance: tolerance 'rtol=0x1p-10,atol=1': rtol value '0x1p-10'" \
    $Q validate --tolerance 'rtol=0x1p-10,atol=1' --outdir to1
absent to1
# 3. --max-len is the longest event: a policy's own lengths above it are refused (they were
#    generated past it), and the default policy draws up to it (it drew up to 96 whatever it was)
expect 2 "^ortqual validate: --length-policy 'fixed 200': length 200 is above --max-len 96$" \
    $Q validate --length-policy "fixed 200" --max-len 96 --outdir len1
expect 2 "'balanced 10 128': length 128 is above --max-len 96" \
    $Q validate --length-policy balanced 10 128 --max-len 96 --outdir len1
absent len1
lengths() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(max(l for b in d["batches"] for l in b["lengths"]))' "$1/summary.json"; }
L=(validate --num-events 6 --batch-size 3 --repeat 1 --warmup 0 --no-plots --configs ref:encoder:fp64,cpu:decomposed:fp32)
expect 0 "verdict: PASSED" $Q "${L[@]}" --max-len 24 --outdir len2
[ "$(lengths len2)" -le 24 ] && ok "default policy within --max-len 24" || bad "default policy: longest $(lengths len2) > 24"
expect 0 "verdict: PASSED" $Q "${L[@]}" --max-len 40 --length-policy fixed --outdir len3
[ "$(lengths len3)" = 40 ] && ok "fixed takes --max-len" || bad "fixed: longest $(lengths len3), not 40"

# 4. validate and replay take the same --repeat/--warmup ranges (replay took --repeat 0), and the
#    shared options' errors name the command (they said "ortqual:")
for cmd in validate replay; do
    expect 2 "^ortqual $cmd: --repeat '0': want a whole number in 1\.\.2147483647$" \
        $Q $cmd --model "$M" --inputs "$FX/io.npz" --repeat 0 --outdir rep1
    expect 2 "^ortqual $cmd: --warmup '-1': want a whole number in 0\.\.2147483647$" \
        $Q $cmd --model "$M" --inputs "$FX/io.npz" --warmup -1 --outdir rep1
    expect 2 "^ortqual $cmd: --padding: 'x' is not auto, zero or report$" $Q $cmd --model "$M" --padding x
    expect 2 "^ortqual $cmd: --progress: 'x' is not auto, always or never$" $Q $cmd --model "$M" --progress x
    expect 2 "^ortqual $cmd: --ep-option 'x': want KEY=VALUE$" $Q $cmd --model "$M" --ep-option x
    expect 2 "^ortqual $cmd: --ep-lib 'cuda=': empty path$" $Q $cmd --model "$M" --ep-lib cuda=
done
expect 2 "^ortqual replay: provider option 'bogus': the cpu EP takes no provider options$" \
    $Q replay --model "$M" --inputs "$FX/io.npz" --ep-option bogus=1 --outdir rep1
absent rep1

# 5. export sdpa: --unmasked and a --mask other than none contradict each other (the later won:
#    a mask input despite --unmasked), in either order; --unmasked --mask none agree
expect 2 "^ortqual export sdpa: --unmasked \(no mask input\) contradicts --mask bool: give one of them$" \
    $Q export sdpa --unmasked --mask bool -o ex1.onnx
expect 2 "contradicts --mask seqlen" $Q export sdpa --mask seqlen --format attention24 --unmasked -o ex1.onnx
absent ex1.onnx
expect 0 "wrote ex2.onnx" $Q export sdpa --unmasked --mask none -o ex2.onnx
expect 0 "wrote ex3.onnx" $Q export sdpa --unmasked -o ex3.onnx
$Q inspect ex3.onnx | grep -q "input   mask" && bad "--unmasked: the model has a mask input" || ok "--unmasked: no mask input"

# 6. --configs: an empty item (a stray comma) and a configuration listed twice (the reference
#    compared with itself gave PASSED) are refused, naming the position; the reference alone is
#    not green
expect 2 "^ortqual validate: --configs 'ref:encoder:fp64,': item 2 is empty$" $Q validate --configs ref:encoder:fp64, --outdir cf1
expect 2 "'ref:encoder:fp64,,cpu:decomposed:fp32': item 2 is empty" $Q validate --configs ref:encoder:fp64,,cpu:decomposed:fp32 --outdir cf1
expect 2 "',ref:encoder:fp64': item 1 is empty" $Q validate --configs ,ref:encoder:fp64 --outdir cf1
expect 2 "^ortqual validate: --configs: 'ref:encoder:fp64' is listed twice \(items 1 and 2\)$" \
    $Q validate --configs ref:encoder:fp64,ref:encoder:fp64 --outdir cf1
expect 2 "'cpu:decomposed:fp32' is listed twice \(items 2 and 3\)" \
    $Q validate --configs ref:encoder:fp64,cpu:decomposed:fp32,cpu:decomposed:fp32 --outdir cf1
expect 2 "'expected' is listed twice \(items 1 and 3\)" \
    $Q validate --model "$M" --inputs "$FX/io.npz" --configs expected,cpu:model:fp32,expected --outdir cf1
# ... under another spelling of the same provider too (ORT runs CPU and CPUExecutionProvider as
#    cpu: the reference ran again under that name and PASSED)
expect 2 "^ortqual validate: --configs: 'cpu:model:fp32' is listed twice \(items 1 and 2\)$" \
    $Q validate --model "$M" --inputs "$FX/io.npz" --configs cpu:model:fp32,CPU:model:fp32 --outdir cf1
expect 2 "'cpu:model:fp32' is listed twice \(items 2 and 3\)" \
    $Q validate --model "$M" --inputs "$FX/io.npz" --configs expected,CPUExecutionProvider:model:fp32,Cpu:model:fp32 --outdir cf1
expect 2 "^ortqual bench: --variants: 'cpu:attention24:fp32' is listed twice \(items 1 and 2\)$" \
    $Q bench --variants cpu:attention24:fp32,CPU:attention24:fp32 --outdir cf1
absent cf1
expect 1 "verdict: NOT TESTED.*only the reference ran|only the reference ran" \
    $Q validate --num-events 2 --no-plots --configs ref:encoder:fp64 --outdir cf2
expect 1 "only the reference ran.*e.g. --configs expected,cpu:model:fp32\)" $Q validate --model "$M" --inputs "$FX/io.npz" --no-plots --configs expected --outdir cf3

# 7. a named ORT library is checked before any work: not there (or not a file) is a usage error
#    with nothing made; there but not loadable a runtime error leaving only error.json (replay
#    copied the inputs, wrote a report and summary.json, then exited 3); --ort-lib alone is judged
#    against the saved outputs (against ORT CPU of itself it would be refused: section 8)
echo "not a library" > junk.so
for opt in --ort-lib --reference-ort-lib; do
    ref=(); [ $opt = --ort-lib ] && ref=(--reference expected)
    expect 2 "^ortqual replay: $opt /no/such\.so: cannot open: No such file or directory$" \
        $Q replay --model "$M" --inputs "$FX/io.npz" $opt /no/such.so --outdir lib1
    expect 2 "^ortqual replay: $opt $T: is a directory, not a regular file$" \
        $Q replay --model "$M" --inputs "$FX/io.npz" $opt "$T" --outdir lib1
    expect 3 "ortqual replay: $opt: cannot load ONNX Runtime; tried: \./junk\.so" \
        $Q replay --model "$M" --inputs "$FX/io.npz" "${ref[@]}" $opt ./junk.so --outdir "lib2$opt"
    only_error "lib2$opt"
done
expect 2 "^ortqual validate: --ort-lib /no/such\.so: cannot open" $Q validate --ort-lib /no/such.so --outdir lib1
absent lib1
expect 3 "ortqual validate: --ort-lib: cannot load ONNX Runtime; tried: \./junk\.so" \
    $Q validate --num-events 2 --no-plots --configs ref:encoder:fp64,cpu:decomposed:fp32 --ort-lib ./junk.so --outdir lib3
only_error lib3
# the default search too, with a $ORTQUAL_ORT_LIB that does not load (the batches were made, the
# reference ran in full, then every configuration was an error)
expect 3 "^ortqual validate: cannot load ONNX Runtime; tried: \./junk\.so .*ORTQUAL_ORT_LIB is set" \
    env ORTQUAL_ORT_LIB=./junk.so $Q validate --num-events 2 --no-plots --configs ref:encoder:fp64,cpu:decomposed:fp32 --outdir lib5
only_error lib5
expect 3 "^ortqual replay: cannot load ONNX Runtime; tried: /no/such\.so" \
    env ORTQUAL_ORT_LIB=/no/such.so $Q replay --model "$M" --inputs "$FX/io.npz" --reference expected --outdir lib6
only_error lib6
# so is an --ep-lib path (its configurations were skipped after the batches were made)
expect 2 "^ortqual validate: --ep-lib /no/such_ep\.so: cannot open: No such file or directory$" \
    $Q validate --configs ref:encoder:fp64,myep:attention24:fp32 --ep-lib myep=/no/such_ep.so --outdir lib4
absent lib4
expect 2 "^ortqual replay: --ep-lib /no/such_ep\.so: cannot open" \
    $Q replay --model "$M" --inputs "$FX/io.npz" --ep myep --ep-lib myep=/no/such_ep.so --outdir lib4
absent lib4

# 7b. --require-dispatch (or ORTQUAL_REQUIRE_DISPATCH=1) with no configuration under test on a GPU
#    provider judges nothing, as --require-full-gpu: refused (the run passed, proving no kernel)
RD="judges configurations under test on a GPU execution provider, and none is among"
expect 2 "^ortqual validate: --require-dispatch \(or ORTQUAL_REQUIRE_DISPATCH=1\) $RD" \
    $Q validate --num-events 2 --configs ref:encoder:fp64,cpu:attention24:fp32 --require-dispatch --outdir rd1
expect 2 "^ortqual validate: --require-dispatch \(or ORTQUAL_REQUIRE_DISPATCH=1\) $RD" \
    env ORTQUAL_REQUIRE_DISPATCH=1 $Q validate --num-events 2 --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir rd1
expect 2 "^ortqual replay: --require-dispatch \(or ORTQUAL_REQUIRE_DISPATCH=1\) $RD" \
    $Q replay --model "$M" --inputs "$FX/io.npz" --reference expected --require-dispatch --outdir rd1
absent rd1

# 8. an --ep that is neither cpu, cuda nor given an --ep-lib (a typo) is refused with the known
#    names (it ran as a plugin EP without its library: skipped, NOT TESTED, green with --allow-skip)
expect 2 "^ortqual replay: --ep 'cdua': not a known execution provider \(known: cpu, cuda\); a plugin EP needs its library, --ep-lib cdua=PATH$" \
    $Q replay --model "$M" --inputs "$FX/io.npz" --ep cdua --allow-skip --outdir ep1
expect 2 "\(known: cpu, cuda, noneep\)" \
    $Q replay --model "$M" --inputs "$FX/io.npz" --ep cdua --ep-lib "noneep=$OQ_BINARY_DIR/tests/libnone_ep.so" --outdir ep1
absent ep1
expect 1 "noneep:model:fp32 skipped" \
    $Q replay --model "$M" --inputs "$FX/io.npz" --ep noneep --ep-lib "noneep=$OQ_BINARY_DIR/tests/libnone_ep.so" --outdir ep2
expect 2 "^ortqual conformance: --ep 'cdua': not a known execution provider" $Q conformance --ep cdua

# 9. an --outdir that is a file (or below one) is the user's mistake, exit 2 (it was exit 3,
#    "cannot open directory: Not a directory"), --force or not; the file is left as it was
echo mine > afile
expect 2 "^ortqual validate: afile: exists and is not a directory$" $Q validate --outdir afile
expect 2 "^ortqual validate: afile: exists and is not a directory$" $Q validate --outdir afile/sub --force
expect 2 "^ortqual replay: afile: exists and is not a directory$" $Q replay --model "$M" --inputs "$FX/io.npz" \
    --reference expected --outdir afile/
[ "$(cat afile)" = mine ] && ok "afile untouched" || bad "afile changed"

# 10. a mask of length 0 is an empty event, said without a range "0..-1"
/usr/bin/python3 -c 'import numpy as np; np.savez("l0.npz", features=np.zeros((2, 0, 8), np.float32), mask=np.zeros((2, 0), bool))' ||
    bad "cannot write l0.npz"
expect 2 "l0\.npz: mask 'mask': event 0: empty event: the mask has no positions \(length 0; each event needs at least one valid element\)$" \
    $Q validate --model "$M" --inputs l0.npz --configs cpu:model:fp32,cuda:model:fp32 --outdir m0
only_error m0

# 11. an empty string option ("$UNSET") is a usage error naming the option, before any work (an
#     empty --cache-dir said "cache directory : cannot create", --model "" ": cannot open")
expect 2 "^ortqual validate: --cache-dir: an empty value \(want DIR\)$" $Q validate --cache-dir "" --outdir e1
expect 2 "^ortqual validate: --model: an empty value \(want M.onnx\)$" $Q validate --model "" --outdir e1
expect 2 "^ortqual replay: --junit: an empty value \(want FILE\)$" $Q replay --model "$M" --inputs "$FX/io.npz" --junit= --outdir e1
expect 2 "^ortqual bench: --outdir: an empty value \(want DIR\)$" $Q bench --outdir ""
absent e1

# 12. options the run would ignore, and options that contradict each other, are refused with one
#     line naming them, before any work. said_once PATTERN CMD...: exit 2, PATTERN the one line
#     said (no note before it); refused PATTERN DIR CMD...: that, and DIR not made
said_once() {
    local pat=$1 out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne 2 ] || [ "$(wc -l <<<"$out")" -ne 1 ] || ! grep -qE -- "$pat" <<<"$out"; then
        bad "$* -> exit $rc, expected 2 and one line /$pat/: $out"
    else
        ok "$* -> refused"
    fi
}
refused() {
    local pat=$1 d=$2
    shift 2
    said_once "$pat" "$@"
    absent "$d"
}
HA="$OQ_SOURCE_DIR/tests/fixtures/torch/hand_attention"
HM="$HA/hand_attention_op18.onnx"
# --model and --export: whichever came last won (a --model that does not exist, thrown away for
# the built-in encoder, PASSED)
for pair in "--model /nonexistent.onnx --export encoder" "--export sdpa --model $HM"; do
    refused "^ortqual validate: --model and --export are alternatives: " me1 \
        $Q validate $pair --num-events 3 --no-cache --no-plots --progress never --outdir me1
done
# options that shape generated events, with --inputs (the file's batch ran, PASSED, as if asked
# for 500 events of length 16), a value equal to the default included (it was asked for)
G=(--repeat 1 --warmup 0 --no-plots --configs ref:encoder:fp64,cpu:decomposed:fp32)
expect 0 "verdict: PASSED" $Q validate --num-events 8 --batch-size 8 "${G[@]}" --outdir gen8
for opt in "--num-events 500" "--batch-size 64" "--max-len 16" "--length-policy fixed" "--pad-bin-size 8" "--seed 7"; do
    refused "^ortqual validate: ${opt%% *} shapes generated events; with --inputs the files give the events$" ig1 \
        $Q validate --inputs gen8/inputs_000.npz $opt "${G[@]}" --outdir ig1
done
# the encoder's options with --inputs still shape the exported encoder
expect 0 "verdict: PASSED" $Q validate --inputs gen8/inputs_000.npz --width 16 --layers 1 --num-features 8 "${G[@]}" --outdir ig2
# a --model runs as it is: the options of ortqual's models (and of generated events, with
# --inputs) have nothing to act on
for opt in "--num-events 5" "--seed 3" "--num-features 16" "--width 64" "--layers 1" "--weights-seed 2" "--elu op" \
    "--mask-form bool" "--static" "--heads 4" "--head-dim 8" "--kv-heads 1"; do
    refused "^ortqual validate: ${opt%% *} [a-z]" ig3 $Q validate --model "$HM" --inputs "$HA/io.npz" $opt --outdir ig3
done
refused "^ortqual validate: --width belongs to ortqual's exported models; --model runs your file as it is$" ig3 \
    $Q validate --model "$HM" --inputs "$HA/io.npz" --width 64 --outdir ig3
# ... and generated events for it take the width its features input fixes: the library refuses
# another (it reads the model once, where it makes the events: the run's error.json is left)
said_once "^ortqual validate: --num-features 8: .*hand_attention_op18\.onnx's input 'x' fixes 16 features, and generated events take that width$" \
    $Q validate --model "$HM" --num-features 8 --num-events 3 --configs cpu:model:fp32,cuda:model:fp32 --outdir nf1
only_error nf1
LM="$OQ_SOURCE_DIR/tests/fixtures/torch/decoder_lm/decoder_lm_op18.onnx"
said_once "^ortqual validate: --num-features sizes generated events' features, and .*decoder_lm_op18\.onnx has no input they feed" \
    $Q validate --model "$LM" --num-features 4 --configs cpu:model:fp32,cuda:model:fp32 --outdir nf2
only_error nf2
expect 0 "verdict: NOT TESTED" $Q validate --model "$HM" --num-features 16 --num-events 3 --configs cpu:model:fp32 \
    --allow-skip --no-plots --outdir ig4
# --weights: with --model, only ref:encoder:fp64 reads them; with ortqual's encoder they give its
# sizes; the sdpa model has none
$Q export encoder --seed 1 --save-weights w1.npz -o enc.onnx >/dev/null || bad "export encoder"
refused "^ortqual validate: --weights: with --model only ref:encoder:fp64 reads them" ig3 \
    $Q validate --model enc.onnx --weights w1.npz --heads 4 --num-events 3 --outdir ig3
refused "^ortqual validate: --width sizes ortqual's encoder or seeds its weights; --weights takes" ig3 \
    $Q validate --weights w1.npz --width 32 --outdir ig3
for opt in "--weights w1.npz" "--width 16" "--num-features 4" "--elu op"; do
    refused "^ortqual validate: ${opt%% *} belongs to ortqual's encoder, not to the sdpa model" ig3 \
        $Q validate --export sdpa $opt --outdir ig3
done
refused "^ortqual validate: --head-dim shapes ortqual's sdpa model" ig3 $Q validate --head-dim 8 --outdir ig3
refused "^ortqual validate: --mask is about the inputs of a --model" ig3 $Q validate --mask mask --outdir ig3
refused "^ortqual validate: --no-mask is about the inputs of a --model" ig3 $Q validate --export sdpa --no-mask --outdir ig3
# the reference 'expected' runs nothing to time
refused "^ortqual validate: --repeat-reference times the reference, and the reference 'expected'" ig3 \
    $Q validate --model "$HM" --inputs "$HA/io.npz" --repeat-reference --outdir ig3
refused "^ortqual replay: --repeat-reference: the reference is the saved outputs" ig3 \
    $Q replay --model "$HM" --inputs "$HA/inputs_000.npz" --expected "$HA/outputs_000.npz" --repeat-reference --outdir ig3
# --mask NAME with --no-mask (the contract was dropped, PASSED), either order; --cache-dir with --no-cache
MN="^ortqual (validate|replay): --mask and --no-mask contradict: "
for cmd in validate replay; do
    refused "$MN" mn1 $Q $cmd --model "$HM" --inputs "$HA/io.npz" --mask mask --no-mask --outdir mn1
    refused "$MN" mn1 $Q $cmd --model "$HM" --inputs "$HA/io.npz" --no-mask --mask mask --outdir mn1
done
refused "^ortqual validate: --cache-dir and --no-cache contradict: " mn1 $Q validate --no-cache --cache-dir c --outdir mn1
# replay: --expected with --reference cpu is refused in replay's words, with no note before it (it
# said "note: ... --expected make it a comparison", then validate's "--expected files need the
# 'expected' configuration first")
refused "^ortqual replay: --expected and --reference cpu are alternatives: " rr1 \
    $Q replay --model "$HM" --inputs "$HA/inputs_000.npz" --expected "$HA/outputs_000.npz" --reference cpu \
    --progress never --outdir rr1
expect 0 "verdict: PASSED.*reference expected" $Q replay --model "$HM" --inputs "$HA/inputs_000.npz" \
    --expected "$HA/outputs_000.npz" --reference expected --outdir rr2

report
