#!/usr/bin/env bash
# ortqual validate end to end on ORT CPU: a passing run, a reference that disagrees, a broken
# mask, and a configuration that crashes in its child process.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
# replay's reference: ORT CPU of another build (against its own ORT a CPU replay is refused)
need_ort130
json() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. passing run: summary, inputs and models written, numpy reads the inputs
$ORTQUAL validate --outdir "$T/pass" --num-events 5 --batch-size 2 --repeat 2 \
  --configs ref:encoder:fp64,cpu:decomposed:fp32,cpu:attention24:fp32 > "$T/pass.out" 2> "$T/pass.err" ||
  fail "passing run exited $?: $(cat "$T/pass.err")"
grep -q "verdict: PASSED (2 passed, 0 failed, 0 skipped; reference ref:encoder:fp64)" "$T/pass.out" || fail "no PASSED verdict: $(cat "$T/pass.out")"
[ "$(json "$T/pass/summary.json" '(d["verdict"], len(d["batches"]), d["schema"])')" = "('passed', 3, 'ortqual.validate/1')" ] ||
  fail "summary: $(json "$T/pass/summary.json" 'd["verdict"], len(d["batches"])')"
# the reference ran and judged nothing: its status is "reference" in summary.json, the JUnit XML and
# report.html, never "passed", so a count of "passed" is the configurations under test that passed
[ "$(json "$T/pass/summary.json" '([c["status"] for c in d["configs"]], [c["status"] for c in d["configs"]].count("passed") == d["tested"])')" = \
  "(['reference', 'passed', 'passed'], True)" ] || fail "statuses: $(json "$T/pass/summary.json" '[c["status"] for c in d["configs"]]')"
$ORTQUAL report "$T/pass" --junit "$T/pass.xml" > /dev/null || fail "report --junit"
must 2 "^ortqual report: --junit $T/pass/./summary.json is $T/pass's summary.json: give another --junit$" \
  "$T/rj.out" $ORTQUAL report "$T/pass" --junit "$T/pass/./summary.json"
must 2 "^ortqual merge: --junit $T/pass/validate.csv is $T/pass's validate.csv: give another --junit$" \
  "$T/rj.out" $ORTQUAL merge "$T/pass" --junit "$T/pass/validate.csv"
[ "$(grep -c '<property name="status" value="passed"/>' "$T/pass.xml")" = 2 ] &&
  grep -q '<property name="status" value="reference"/>' "$T/pass.xml" &&
  grep -q 'data-status="reference"' "$T/pass/report.html" || fail "JUnit or report.html: the reference's status"
ls "$T/pass"/encoder_decomposed_fp32.onnx "$T/pass"/encoder_attention24_fp32.onnx "$T/pass"/weights.npz >/dev/null
[ ! -e "$T/pass/.work" ] || fail "work directory left behind"
# the reference ran once per batch (its outputs are what is needed), on every core this process
# may use; each ORT configuration ran first + warm-up 1 + repeat 2 calls, on ORT's default threads
# (recorded as the count ORT starts: one per physical core, sysfs' core and package ids)
calls=$(json "$T/pass/summary.json" '[(c["threads"], sorted({(b["calls"], b["warmup"], b["repeat"]) for b in c["batches"]})) for c in d["configs"]]')
cores=$($PY -c 'import os; print(len(os.sched_getaffinity(0)))')
phys=$($PY -c 'import glob; print(max(1, len({(open(d + "/physical_package_id").read(), open(d + "/core_id").read()) for d in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology")})))')
[ "$calls" = "[($cores, [(1, 0, 0)]), ($phys, [(4, 1, 2)]), ($phys, [(4, 1, 2)])]" ] || fail "calls per batch: $calls"
# columns: batches, worst out, max|err|, median ms, p90 ms, first ms: no repeated calls, no median
grep -Eq '^ref:encoder:fp64 +reference +3 +- +- +- +- +[0-9.]+$' "$T/pass.out" || fail "the reference's median is not '-': $(cat "$T/pass.out")"
$PY - "$T/pass/inputs_002.npz" <<'PY' || fail "numpy cannot read inputs_002.npz"
import sys, numpy as np
z = np.load(sys.argv[1])
assert z["features"].shape[0] == 1 and z["mask"].shape[0] == 1, z["features"].shape  # 5 events, batches of 2
assert (z["features"][0, z["lengths"][0]:] == 0).all()
PY
# every compared output carries its error histograms through the worker's typed result into
# summary.json: they count each valid finite element once, by |error| and by |reference|
$PY - "$T/pass/summary.json" <<'PY' || fail "histograms lost between worker and summary.json"
import json, sys
d = json.load(open(sys.argv[1]))
# each output over every batch (the batches keep a few numbers each, no histograms)
outs = [o for c in d["configs"][1:] for o in c["outputs"]]
assert outs and all(o["batches"] == len(d["batches"]) for o in outs)
assert all("error_histogram" not in o and "worst" not in o for c in d["configs"] for b in c["batches"] for o in b.get("outputs", []))
for o in outs:
    h, m = o["error_histogram"], o["error_by_magnitude"]
    finite = o["num_valid"] - o["nan"] - o["inf"]
    assert sum(h["counts"]) + h["zero"] + h["below"] + h["above"] == finite, (o["name"], h)
    assert sum(m["count"]) + m["below"]["count"] + m["above"]["count"] == finite, (o["name"], m)
    assert o["max_abs_ref"] > 0 and sum(h["counts"]) > 0
PY

# 2. a model whose weights differ from the reference's: exit 1, the output and element named
$ORTQUAL export encoder --seed 1 --save-weights "$T/w1.npz" -o "$T/good.onnx" >/dev/null
$PY - "$T/w1.npz" "$T/w2.npz" <<'PY'
import sys, numpy as np
w = dict(np.load(sys.argv[1]))
k = sorted(n for n in w if n.startswith("head") or "cls" in n)[0]
w[k] = w[k] + np.float32(0.05)   # a small, systematic change in one head
np.savez(sys.argv[2], **w)
PY
$ORTQUAL export encoder --weights "$T/w2.npz" --heads 4 -o "$T/bad.onnx" >/dev/null
set +e
$ORTQUAL validate --outdir "$T/perturbed" --model "$T/bad.onnx" --weights "$T/w1.npz" --heads 4 \
  --num-events 3 --configs ref:encoder:fp64,cpu:model:fp32 > "$T/pert.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "perturbed model: exit $rc, expected 1: $(cat "$T/pert.out")"
grep -Eq "output (cls|reg):.*\[[0-9]+,[0-9]+,[0-9]+\]" "$T/pert.out" || fail "perturbed model: output/element not named: $(cat "$T/pert.out")"
# control: the same model with its own weights passes
$ORTQUAL validate --outdir "$T/control" --model "$T/good.onnx" --weights "$T/w1.npz" --heads 4 \
  --num-events 3 --configs ref:encoder:fp64,cpu:model:fp32 > /dev/null 2>&1 || fail "control model did not pass"

# 3. a broken mask: exit 2 before any model runs, the event and position named, only error.json
$PY - "$T/holes.npz" <<'PY'
import sys, numpy as np
m = np.zeros((2, 16), np.float32); m[0, :10] = 1; m[1, :6] = 1; m[1, 9] = 1   # event 1: hole
np.savez(sys.argv[1], features=np.random.default_rng(0).normal(size=(2, 16, 8)).astype(np.float32) * m[..., None], mask=m)
PY
set +e
$ORTQUAL validate --outdir "$T/broken" --inputs "$T/holes.npz" > "$T/broken.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "broken mask: exit $rc, expected 2"
grep -q "event 1" "$T/broken.out" && grep -q "position 9" "$T/broken.out" || fail "broken mask message: $(cat "$T/broken.out")"
[ "$(ls -A "$T/broken")" = "error.json" ] || fail "broken mask left: $(ls -A "$T/broken")"
# after good batches (each written and listed as it was made): theirs removed too
$PY - "$T/fine.npz" <<'PY'
import sys, numpy as np
m = np.zeros((2, 16), np.float32); m[0, :10] = 1; m[1, :6] = 1
for k, path in enumerate((sys.argv[1], sys.argv[1].replace("fine", "fine2"))):  # two files: other events
    np.savez(path, features=np.random.default_rng(k).normal(size=(2, 16, 8)).astype(np.float32) * m[..., None], mask=m)
PY
set +e
$ORTQUAL validate --outdir "$T/broken2" --inputs "$T/fine.npz" "$T/fine2.npz" "$T/holes.npz" > "$T/broken2.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "position 9" "$T/broken2.out" || fail "broken third batch: exit $rc: $(cat "$T/broken2.out")"
[ "$(ls -A "$T/broken2")" = "error.json" ] || fail "broken third batch left: $(ls -A "$T/broken2")"
# a later run into that folder passes, and the refusal's record does not stay beside its summary
$ORTQUAL validate --outdir "$T/broken" --num-events 2 --configs ref:encoder:fp64,cpu:attention24:fp32 \
  > /dev/null 2>&1 || fail "a run into a refusal's folder failed"
[ ! -e "$T/broken/error.json" ] || fail "the earlier refusal's error.json stayed beside summary.json"
# --force into that run's folder: a run refused by its checks (before its first write) leaves the
# folder as it was, with no error.json beside the summary (it was written there, and the weights
# and model the summary names deleted); so does one refused by a batch's checks (a batch broken:
# the batches are checked before the earlier result goes; it was replaced by error.json alone)
(cd "$T/broken" && find . -type f | sort | xargs md5sum) > "$T/broken.md5"
must 2 "no such output .*; the earlier result in $T/broken is left as it was" "$T/kept.out" $ORTQUAL validate \
  --outdir "$T/broken" --num-events 2 --configs ref:encoder:fp64,cpu:attention24:fp32 --force --tolerance otu:rtol=1e-3
(cd "$T/broken" && md5sum --quiet -c "$T/broken.md5") || fail "a refused --force run changed the earlier run's files"
[ "$(ls -A "$T/broken" | grep -c -e error.json -e '^\.work')" = 0 ] || fail "a refused --force run left: $(ls -A "$T/broken")"
must 2 "position 9.*; the earlier result in $T/broken is left as it was" "$T/replaced.out" $ORTQUAL validate \
  --outdir "$T/broken" --inputs "$T/holes.npz" --force
(cd "$T/broken" && md5sum --quiet -c "$T/broken.md5") || fail "a --force run refused by a batch changed the earlier run's files"
[ "$(ls -A "$T/broken" | grep -c -e error.json -e '^\.work')" = 0 ] || fail "a --force run refused by a batch left: $(ls -A "$T/broken")"

# 3a. a batch of no events: refused with the others before any model runs (ORT's own error was a
# Reshape of 0 elements, exit 3, after "1 batches checked")
TX="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
$PY - "$TX/inputs_000.npz" "$T/zero.npz" <<'PY'
import sys, numpy as np
z = np.load(sys.argv[1]); np.savez(sys.argv[2], features=z["features"][:0], mask=z["mask"][:0])
PY
must 2 "zero.npz: the batch has 0 events \(member 'mask' is \[0,56\]\)" "$T/zero.out" $ORTQUAL validate \
  --model "$TX/tx_encoder_op18.onnx" --inputs "$T/zero.npz" --configs cpu:model:fp32,cuda:model:fp32 --outdir "$T/zero"
must 2 "zero.npz: the batch has 0 events" "$T/zero-replay.out" $ORTQUAL replay --model "$TX/tx_encoder_op18.onnx" \
  --inputs "$T/zero.npz" --ep cpu --reference-ort-lib "$ORT130" --outdir "$T/zero-replay"

# 3b. --force into an earlier run's folder: the earlier run's files this run does not write go
# (batches 1 and 2 of the 3, the decomposed model), the user's own file stays
touch "$T/pass/notes.txt"
$ORTQUAL validate --outdir "$T/pass" --force --num-events 2 --batch-size 2 \
  --configs ref:encoder:fp64,cpu:attention24:fp32 > /dev/null 2>&1 || fail "--force rerun failed"
left=$(cd "$T/pass" && LC_ALL=C ls inputs_*.npz encoder_*.onnx notes.txt | tr '\n' ' ')
[ "$left" = "encoder_attention24_fp32.onnx inputs_000.npz notes.txt " ] || fail "after --force: $left"
# a replay of that folder's model into it: the encoder's weights.npz (the replay reads none) and
# the figures go, and plots/ with them (replay draws none: an empty plots/ and the weights stayed)
# (the files it reads may not be in that folder: it writes and clears them; refused, untouched)
before=$(cd "$T/pass" && LC_ALL=C ls -l --time-style=+%s.%N | tr '\n' ' ')
out=$($ORTQUAL replay --model "$T/pass/encoder_attention24_fp32.onnx" --inputs "$T/pass/inputs_000.npz" \
  --reference-ort-lib "$ORT130" --outdir "$T/pass" --force 2>&1) && fail "replay of the folder's own files into it ran"
case "$out" in *"--model $T/pass/encoder_attention24_fp32.onnx is in the output folder $T/pass, which the run writes and clears: give another --outdir") ;;
  *) fail "replay into the folder of its inputs: $out" ;; esac
[ "$(cd "$T/pass" && LC_ALL=C ls -l --time-style=+%s.%N | tr '\n' ' ')" = "$before" ] || fail "refused replay touched $T/pass"
mkdir "$T/pass-src" && cp "$T/pass/encoder_attention24_fp32.onnx" "$T/pass/inputs_000.npz" "$T/pass-src/"
$ORTQUAL replay --model "$T/pass-src/encoder_attention24_fp32.onnx" --inputs "$T/pass-src/inputs_000.npz" \
  --reference-ort-lib "$ORT130" --outdir "$T/pass" --force > /dev/null 2>&1 || fail "replay --force into a validate run's folder failed"
left=$(cd "$T/pass" && LC_ALL=C ls | tr '\n' ' ')
[ "$left" = "encoder_attention24_fp32.onnx inputs_000.npz notes.txt report.html summary.json validate.csv " ] ||
  fail "after replay --force: $left"

# 3d. a run of more than 1000 batches numbers every file with 4 digits, so that 'DIR/inputs_*.npz'
# gives them in batch order (inputs_1000.npz came after inputs_100.npz: a replay of the glob
# renumbered the batches); a --force rerun of fewer batches removes them all (a 4-digit name was
# not recognised: inputs_1000.npz stayed for the next glob to pick up)
$ORTQUAL validate --outdir "$T/many" --num-events 1001 --batch-size 1 --max-len 8 --length-policy "uniform 2 8" \
  --repeat 1 --warmup 0 --no-plots --progress never --save-outputs --configs ref:encoder:fp64,cpu:attention24:fp32 \
  > "$T/many.out" 2>&1 || fail "1001 batches: $(tail -3 "$T/many.out")"
names=$(cd "$T/many" && LC_ALL=C ls inputs_*.npz | sed -n '1p;101p;1001p' | tr '\n' ' ')
[ "$names" = "inputs_0000.npz inputs_0100.npz inputs_1000.npz " ] || fail "1001 batches named: $names"
[ "$(cd "$T/many" && ls outputs_01_*_1000.npz)" = outputs_01_cpu_attention24_fp32_1000.npz ] ||
  fail "saved outputs named: $(cd "$T/many" && ls outputs_01_* | tail -1)"
$ORTQUAL validate --outdir "$T/many" --force --num-events 2 --batch-size 1 --max-len 8 --length-policy "uniform 2 8" \
  --repeat 1 --warmup 0 --no-plots --progress never --configs ref:encoder:fp64,cpu:attention24:fp32 > /dev/null 2>&1 ||
  fail "--force rerun of 2 batches"
left=$(cd "$T/many" && LC_ALL=C ls | grep -E '^(inputs|outputs)_' | tr '\n' ' ')
[ "$left" = "inputs_000.npz inputs_001.npz " ] || fail "after a --force rerun of 2 batches: $(echo "$left" | cut -c1-200)"

# 3c. outputs that are not files are refused before any work, and left as they were; two runs
# started together without --outdir get a folder each
mkfifo "$T/junit.fifo"
set +e
$ORTQUAL validate --outdir "$T/fifo" --num-events 2 --junit "$T/junit.fifo" > "$T/fifo.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "--junit FIFO: exit $rc, expected 2"
grep -q "junit.fifo: is a FIFO (named pipe); results are written to regular files only" "$T/fifo.out" ||
  fail "--junit FIFO message: $(cat "$T/fifo.out")"
[ -p "$T/junit.fifo" ] && [ ! -e "$T/fifo" ] || fail "--junit FIFO: replaced, or the run went ahead"
# --junit naming a file the run reads, or one it writes in its output folder (by any path), is
# refused before any work: renamed over it, the XML would replace the model or the run's evidence
M="$T/pass-src/encoder_attention24_fp32.onnx" I="$T/pass-src/inputs_000.npz"
sums=$(sha256sum "$M" "$I" "$T/pass/summary.json")
must 2 "^ortqual validate: --junit $M is the --model file $M: give another --junit$" "$T/jm.out" \
  $ORTQUAL validate --model "$M" --inputs "$I" --configs cpu:model:fp32 --outdir "$T/jm" --junit "$M"
must 2 "^ortqual validate: --junit $T/pass-src/./inputs_000.npz is the --inputs file $I: give another --junit$" \
  "$T/jm.out" $ORTQUAL validate --model "$M" --inputs "$I" --configs cpu:model:fp32 --outdir "$T/jm" \
  --junit "$T/pass-src/./inputs_000.npz"
for f in summary.json validate.csv inputs_000.npz; do
  must 2 "^ortqual validate: --junit $T/jm/$f is $T/jm's $f: give another --junit$" "$T/jm.out" \
    $ORTQUAL validate --outdir "$T/jm/" --num-events 2 --junit "$T/jm/$f"
done
must 2 "is $T/pass's summary.json: give another --junit$" "$T/jm.out" \
  $ORTQUAL validate --outdir "$T/pass" --force --num-events 2 --junit "$T/pass-src/../pass/summary.json"
[ "$(sha256sum "$M" "$I" "$T/pass/summary.json")" = "$sums" ] && [ ! -e "$T/jm" ] || fail "a refused --junit touched a file"
# --outdir with a trailing slash, not made yet, and --junit inside it: the run makes the folder
$ORTQUAL validate --outdir "$T/slash/" --junit "$T/slash/j.xml" --num-events 2 \
  --configs ref:encoder:fp64,cpu:attention24:fp32 > "$T/slash.out" 2>&1 || fail "trailing slash: $(tail -2 "$T/slash.out")"
[ -s "$T/slash/j.xml" ] || fail "trailing slash: no JUnit written"
mkdir "$T/cwd"
(cd "$T/cwd" && for i in 1 2 3; do $ORTQUAL validate --num-events 2 --configs ref:encoder:fp64,cpu:attention24:fp32 \
  --progress never > "run$i.out" 2>&1 & done; wait)
[ "$(ls "$T/cwd/ortqual-out"/*/summary.json | wc -l)" = 3 ] ||
  fail "three runs, default folders: $(ls "$T/cwd/ortqual-out"; cat "$T/cwd"/run*.out)"

# 4. a configuration that crashes in its child: failed with the signal, the others still run
set +e
$ORTQUAL validate --outdir "$T/crash" --num-events 2 --repeat 1 \
  --configs ref:encoder:fp64,crashep:attention24:fp32,cpu:attention24:fp32 \
  --ep-lib "crashep=$OQ_BINARY_DIR/tests/libcrash_ep.so" > "$T/crash.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "crash: exit $rc, expected 1"
[ "$(json "$T/crash/summary.json" '[c["status"] for c in d["configs"]]')" = "['reference', 'failed', 'passed']" ] ||
  fail "crash statuses: $(json "$T/crash/summary.json" '[c["status"] for c in d["configs"]]')"
tail_text=$(json "$T/crash/summary.json" 'd["configs"][1]["worker"]["stderr_tail"]')
[[ "$tail_text" == *"aborts on purpose"* ]] || fail "no stderr tail: $tail_text"
grep -q "signal 6" "$T/crash.out" || fail "signal not reported"
# the parent loaded no EP library (crashep is the worker's): every worker was forked, not re-executed,
# and the crash still ended only its own process
[ "$(json "$T/crash/summary.json" '[c["worker"]["start"] for c in d["configs"]]')" = "['fork', 'fork', 'fork']" ] ||
  fail "crash: worker starts: $(json "$T/crash/summary.json" '[c["worker"]["start"] for c in d["configs"]]')"

# 4b. the demo looks for the CUDA EP (on a GPU host it finds it); none_ep loads and offers no device,
# so the demo's configurations are CPU ones and none runs on the --ep-lib given: refused, exit 2, as
# an --ep-option with no EP to take it is (the library was ignored and the CPU run green). (This
# case also showed that a parent that loaded an EP library re-executes its workers: that needs a
# GPU host now.)
set +e
$ORTQUAL validate --outdir "$T/epparent" --num-events 2 --repeat 1 --no-plots \
  --ep-lib "cuda=$OQ_BINARY_DIR/tests/libnone_ep.so" > "$T/epparent.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "^ortqual validate: --ep-lib 'cuda': no configuration runs on cuda" "$T/epparent.out" ||
  fail "EP library no configuration runs on: exit $rc: $(tail -3 "$T/epparent.out")"

# 4c. the CUDA EP library beside the core one (ORTQUAL_GPU=1 installs it) on a host whose device files
# name no NVIDIA GPU: the demo's parent does not load it to list configurations, so its workers still
# fork; the same files with a GPU's device node make it look (none_ep: loads, offers no device) and
# re-execute. ORTQUAL_TEST_DEVICE_ROOT is the tree the device files are read from.
mkdir -p "$T/ortcuda" "$T/nogpu/dev" "$T/gpu/dev"
ln "$OQ_ORT_LIB" "$T/ortcuda/libonnxruntime.so" 2>/dev/null || cp "$OQ_ORT_LIB" "$T/ortcuda/libonnxruntime.so"
cp "$OQ_BINARY_DIR/tests/libnone_ep.so" "$T/ortcuda/libonnxruntime_providers_cuda.so"
touch "$T/nogpu/dev/null" "$T/gpu/dev/nvidia0"
for host in nogpu gpu; do
  ORTQUAL_ORT_LIB="$T/ortcuda/libonnxruntime.so" ORTQUAL_TEST_DEVICE_ROOT="$T/$host" \
    $ORTQUAL validate --outdir "$T/epbeside_$host" --num-events 2 --repeat 1 --no-plots > "$T/epbeside.out" 2>&1 ||
    fail "CUDA EP beside the core library ($host): $(tail -3 "$T/epbeside.out")"
done
[ "$(json "$T/epbeside_nogpu/summary.json" 'sorted(set((c["runtime"], c["worker"]["start"]) for c in d["configs"]))')" = \
  "[('cpu', 'fork'), ('ref', 'fork')]" ] ||
  fail "EP beside, no GPU: $(json "$T/epbeside_nogpu/summary.json" '[(c["name"], c["worker"]["start"]) for c in d["configs"]]')"
[ "$(json "$T/epbeside_gpu/summary.json" 'sorted(set((c["runtime"], c["worker"]["start"]) for c in d["configs"]))')" = \
  "[('cpu', 'exec'), ('ref', 'exec')]" ] ||
  fail "EP beside, a GPU's node: $(json "$T/epbeside_gpu/summary.json" '[(c["name"], c["worker"]["start"]) for c in d["configs"]]')"

# 5. ortqual's own sdpa model with every default: the C reference of Attention against each export
$ORTQUAL validate --export sdpa --outdir "$T/sdpa" > "$T/sdpa.out" 2>&1 || fail "validate --export sdpa: $(tail -5 "$T/sdpa.out")"
grep -q "verdict: PASSED (4 passed, 0 failed, 0 skipped; reference " "$T/sdpa.out" || fail "sdpa demo: $(tail -3 "$T/sdpa.out")"
[ "$(json "$T/sdpa/summary.json" '[o["padding"]["masked"] for o in d["configs"][1]["batches"][0]["outputs"]]')" = "[True]" ] ||
  fail "sdpa: output [B,H,L,D] not compared with the mask's axes"

# 6. usage errors
set +e
$ORTQUAL validate --configs cpu:attention25:fp32 > "$T/u.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "unknown representation 'attention25'" "$T/u.out" || fail "bad config: exit $rc"
[ -n "$($ORTQUAL validate --help | grep -- '--ep-option')" ] && ! $ORTQUAL validate --help | grep -q -- '--ep NAME' ||
  fail "validate --help: --ep-option without --ep"
set +e
$ORTQUAL validate --ep cuda --outdir "$T/ep" > "$T/ep.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "each configuration names its runtime" "$T/ep.out" && [ ! -e "$T/ep" ] || fail "--ep: exit $rc"

# 7. provider options go to the configurations on an execution provider, never to cpu
#    (whose EP takes none: the cpu configuration would fail if it got them)
$ORTQUAL validate --outdir "$T/opts" --num-events 2 --repeat 1 --no-plots --ep-option sdpa_kernel=1 \
  --configs ref:encoder:fp64,cpu:attention24:fp32,cuda:attention24:fp16:flash > "$T/opts.out" 2>&1 ||
  fail "options with a cuda configuration: exit $?: $(cat "$T/opts.out")"
[ "$(json "$T/opts/summary.json" '[c["status"] for c in d["configs"]][:2]')" = "['reference', 'passed']" ] ||
  fail "options: $(json "$T/opts/summary.json" '[(c["status"], c.get("reason")) for c in d["configs"]]')"
set +e
$ORTQUAL validate --outdir "$T/opts2" --num-events 2 --ep-option sdpa_kernel=1 \
  --configs ref:encoder:fp64,cpu:attention24:fp32 > "$T/opts2.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "provider option 'sdpa_kernel': no configuration runs on an execution provider" "$T/opts2.out" &&
  [ ! -e "$T/opts2" ] || fail "options without a taker: exit $rc: $(cat "$T/opts2.out")"
set +e
$ORTQUAL validate --outdir "$T/opts3" --ep-option sdpa_kernel=fast \
  --configs ref:encoder:fp64,cuda:attention24:fp16 > "$T/opts3.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "sdpa_kernel" "$T/opts3.out" && [ ! -e "$T/opts3" ] || fail "bad cuda option value: exit $rc: $(cat "$T/opts3.out")"

# 7. --repeat-reference times the reference like the others; --warmup 0 is allowed; --threads
#    reaches the reference and ORT's intra-op threads
$ORTQUAL validate --outdir "$T/rr" --num-events 2 --repeat 2 --warmup 0 --repeat-reference --threads 1 --no-plots \
  --configs ref:encoder:fp64,cpu:attention24:fp32 > "$T/rr.out" 2>&1 || fail "--repeat-reference: exit $?: $(cat "$T/rr.out")"
calls=$(json "$T/rr/summary.json" '[(c["threads"], [(b["calls"], b["warmup"], b["repeat"], b["median_s"] is not None) for b in c["batches"]]) for c in d["configs"]]')
[ "$calls" = "[(1, [(3, 0, 2, True)]), (1, [(3, 0, 2, True)])]" ] || fail "--repeat-reference --warmup 0 --threads 1: $calls"
# 8. generated batches are made by several threads (--threads), each seeded by its index: the
#    files are the same bytes as one thread's, and a bad batch still fails the whole preparation
for th in 1 3; do
  $ORTQUAL validate --outdir "$T/gen$th" --num-events 40 --batch-size 3 --threads $th --no-plots --no-cache \
    --configs ref:encoder:fp64,cpu:attention24:fp32 > "$T/gen$th.out" 2>&1 || fail "--threads $th: exit $?: $(cat "$T/gen$th.out")"
done
[ "$(cd "$T/gen1" && sha256sum inputs_*.npz)" = "$(cd "$T/gen3" && sha256sum inputs_*.npz)" ] ||
  fail "batches generated by 3 threads differ from one thread's"
# 9. an output named like a figure's prefix: the plots line says what the figures show from what
# each was drawn as, not from its file name (error_vs_ref_x is the error distribution of an output
# "vs_ref_x"; the line said "error against |reference|, latency" alone)
$ORTQUAL export encoder --seed 1 --save-weights "$T/w.npz" -o "$T/enc.onnx" >/dev/null
$PY - "$T/w.npz" "$T/wx.npz" <<'PY'
import sys, numpy as np
w = dict(np.load(sys.argv[1]))
np.savez(sys.argv[2], **{k.replace("heads.cls.", "heads.vs_ref_x."): a for k, a in w.items() if not k.startswith("heads.reg.")})
PY
$ORTQUAL validate --outdir "$T/vsref" --weights "$T/wx.npz" --num-events 2 --batch-size 2 --repeat 1 --warmup 0 \
  --progress never --configs ref:encoder:fp64,cpu:decomposed:fp32 >"$T/vsref.out" 2>&1 || fail "output vs_ref_x: exit $?: $(cat "$T/vsref.out")"
[ -s "$T/vsref/plots/error_vs_ref_x.svg" ] && [ -s "$T/vsref/plots/error_vs_ref_vs_ref_x.svg" ] ||
  fail "output vs_ref_x: figures $(ls "$T/vsref/plots")"
grep -qx "plots: 6 files in $T/vsref/plots/ (error distributions, error against |reference|, latency)" "$T/vsref.out" ||
  fail "output vs_ref_x: plots line: $(grep plots "$T/vsref.out")"
# 10. --graph-opt-level reaches every ORT configuration's session and is recorded: with ORT's
#     optimizations off the profile holds every node of the decomposed model (its fusions
#     make fewer by default); replay takes it too; a level ORT has not is a usage error
G=(--configs ref:encoder:fp64,cpu:decomposed:fp32 --profile --num-events 3 --repeat 1 --no-plots --no-cache)
$ORTQUAL validate "${G[@]}" --graph-opt-level 0 --outdir "$T/g0" > "$T/g0.out" 2>&1 || fail "--graph-opt-level 0 exited $?"
grep -Eq '^    ONNX Runtime [0-9.]+ \(.*\), graph optimizations off \(level 0\)$' "$T/g0.out" ||
  fail "the table does not say the level: $(grep 'ONNX Runtime' "$T/g0.out")"
$ORTQUAL report "$T/g0" > /dev/null 2>&1 && grep -q "ORT's graph optimizations at level 0" "$T/g0/report.html" ||
  fail "report.html does not say the level"
$ORTQUAL validate "${G[@]}" --outdir "$T/gd" > /dev/null 2>&1 || fail "default level exited $?"
nodes() { json "$1/summary.json" '(d["configs"][1].get("graph_opt_level"), d["configs"][1]["placement"]["eps"][0]["nodes"])'; }
read -r l0 n0 < <(nodes "$T/g0" | tr -d '(),')
read -r ld nd < <(nodes "$T/gd" | tr -d '(),')
[ "$l0" = 0 ] && [ "$ld" = None ] && [ "$n0" -gt "$nd" ] ||
  fail "--graph-opt-level 0: level $l0 with $n0 profiled nodes, default $ld with $nd"
$ORTQUAL replay --model "$T/g0/encoder_decomposed_fp32.onnx" --inputs "$T/g0/inputs_000.npz" --graph-opt-level 1 \
  --reference-ort-lib "$ORT130" --repeat 1 --outdir "$T/gr" > /dev/null 2>&1 || fail "replay --graph-opt-level 1 exited $?"
[ "$(json "$T/gr/summary.json" '[c.get("graph_opt_level") for c in d["configs"]]')" = "[1, 1]" ] ||
  fail "replay levels: $(json "$T/gr/summary.json" '[c.get("graph_opt_level") for c in d["configs"]]')"
# --session-config reaches the sessions too (and the plan): with ORT's SkipLayerNormFusion
# disabled alone the default level keeps every LayerNormalization, which it fuses otherwise
$ORTQUAL validate "${G[@]}" --session-config optimization.disable_specified_optimizers=SkipLayerNormFusion \
  --outdir "$T/gs" > /dev/null 2>&1 || fail "--session-config exited $?"
skip_ln() { json "$1/summary.json" 'sum(n["op"] == "SkipLayerNormalization" for n in d["configs"][1]["placement"]["nodes"] if n.get("runs"))'; }
[ "$(skip_ln "$T/gd")" -ge 1 ] && [ "$(skip_ln "$T/gs")" = 0 ] ||
  fail "--session-config: SkipLayerNormalization nodes $(skip_ln "$T/gd") by default, $(skip_ln "$T/gs") with the fusion disabled"
[ "$(json "$T/gs/summary.json" 'd["plan"]["description"]["configs"][1]["runtime"]["session_configs"]')" = \
  "[['optimization.disable_specified_optimizers', 'SkipLayerNormFusion']]" ] || fail "--session-config not in the plan"
out=$($ORTQUAL validate --session-config nokey --outdir "$T/gk" 2>&1) && fail "--session-config nokey accepted"
[ "$out" = "ortqual validate: --session-config 'nokey': want KEY=VALUE" ] || fail "--session-config nokey: $out"
out=$($ORTQUAL validate --graph-opt-level 3 --outdir "$T/g3" 2>&1) && fail "--graph-opt-level 3 accepted"
[ "$out" = "ortqual validate: --graph-opt-level '3': want -1, 0, 1, 2 or 99" ] || fail "--graph-opt-level 3: $out"

# 11. a failure at the edge of its tolerance says why, everywhere it is told: rtol a hair under the
#     measured max_rel (it printed "max_rel=0.00313 ... (rtol=0.00313 atol=0)", and summary.json held
#     rtol to 10 digits): the tolerance as given, to its last digit, and max_rel above it
E=(--configs ref:encoder:fp64,cpu:decomposed:fp32 --num-events 4 --repeat 1 --no-plots)
$ORTQUAL validate "${E[@]}" --outdir "$T/e0" > /dev/null 2>&1 || fail "edge: the first run exited $?"
rtol=$($PY -c 'import json,sys; o=json.load(open(sys.argv[1]))["configs"][1]["outputs"][0]; print(repr(o["max_rel"] * (1 - 1e-12)))' "$T/e0/summary.json")
set +e
$ORTQUAL validate "${E[@]}" --tolerance "cls:rtol=$rtol,atol=0" --junit "$T/e1.xml" --outdir "$T/e1" > "$T/e1.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "edge: exit $rc: $(tail -3 "$T/e1.out")"
$PY - "$rtol" "$T/e1.out" "$T/e1/summary.json" "$T/e1.xml" "$T/e1/report.html" <<'PY' || fail "edge failure not told: $(grep -m1 'output cls: FAIL' "$T/e1.out")"
import json, re, sys
rtol, out, summary, junit, page = float(sys.argv[1]), *(open(p).read() for p in sys.argv[2:])
line = next(l for l in out.splitlines() if "output cls: FAIL" in l)
assert float(re.search(r"\(rtol=([^ ]+) atol=0\)", line).group(1)) == rtol, line
assert float(re.search(r" max_rel=([^ ]+)", line).group(1)) > rtol, line
c = json.loads(summary)["configs"][1]
assert c["outputs"][0]["tolerance"]["rtol"] == rtol, c["outputs"][0]["tolerance"]
assert all(x["tolerance"]["rtol"] == rtol for b in c["batches"] for x in b["outputs"] if x["output"] == "cls")
assert f"rtol {sys.argv[1]}, atol 0" in junit, "JUnit"
assert f'<td class="tol">{sys.argv[1]}, 0</td>' in page, "report.html"
PY
echo "validate e2e: all checks passed"
