#!/usr/bin/env bash
# What a shard takes on trust, checked: the saved reference outputs it reads from the prepared
# folder (a swapped one made a sharded run pass where the unsharded one failed), the ONNX
# Runtime each shard loaded (a node with another build was merged silently), a copy of an
# --inputs file (its events counted twice), a split larger than the batches (refused only after
# all of them were written), and the documented rerun of a killed or interrupted shard.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
json() { $PY -c "import json,os,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
F="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like"
need_ort130

# 1. the saved outputs of batch 1 swapped after preparation: the shard that reads them refuses,
#    by name (it ran, and passed, against the other file); they are part of the plan's identity
E=(validate --model "$F/mlpf_like_op18.onnx" --inputs "$F/inputs_000.npz" "$F/inputs_001.npz"
   --expected "$F/outputs_000.npz" "$F/outputs_001.npz" --configs expected,cpu:model:fp32 --no-plots --progress never)
must 0 "prepared 2 shards" "$T/e.log" $ORTQUAL "${E[@]}" --outdir "$T/E" --prepare-shards 2
[ "$(json "$T/E/shards/plan_description.json" '[("expected" in b) for b in d["batches"]]')" = "[True, True]" ] ||
    fail "the plan does not name the saved outputs: $(head -c 400 "$T/E/shards/plan_description.json")"
cp "$T/E/expected_000.npz" "$T/E/expected_001.npz"
must 2 "E/expected_001.npz: SHA-256 .* is not the prepared .*changed since the shards were prepared" "$T/e1.log" \
    $ORTQUAL "${E[@]}" --outdir "$T/E" --shard 1/2
must 0 "shard 0 of 2 done" "$T/e0.log" $ORTQUAL "${E[@]}" --outdir "$T/E" --shard 0/2
# (the unsharded run names them too: the same plan)
must 0 "PASSED" "$T/eu.log" $ORTQUAL "${E[@]}" --outdir "$T/EU"
[ "$(json "$T/EU/summary.json" 'd["plan"]["hash"]')" = "$(json "$T/E/shards/0/summary.json" 'd["plan"]["hash"]')" ] ||
    fail "the unsharded run and its shard have different plans"

# 2. a shard on another ORT build than a finished shard of the plan ($ORTQUAL_ORT_LIB on its node;
#    a link switched between tasks) is refused at its start, before any batch runs, in one line
#    naming both libraries and their SHA-256 (the merge refused it, once every shard had run);
#    the merge still refuses shards of two builds (here a summary edited to say so)
V=(validate --no-cache --num-events 4 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32)
OTHER="shard 1 would run cpu:attention24:fp32 on the ONNX Runtime library [^ ]+ \(SHA-256 [0-9a-f]{12}\), shard 0 ran it on ONNX Runtime 1.29.0 \([^ ]+, SHA-256 [0-9a-f]{12}\): another build, which the merge refuses"
must 0 "prepared" "$T/o.log" $ORTQUAL "${V[@]}" --outdir "$T/O" --prepare-shards 2
must 0 "shard 0 of 2 done" "$T/o0.log" $ORTQUAL "${V[@]}" --outdir "$T/O" --shard 0/2
ORTQUAL_ORT_LIB="$ORT130" must 2 "^ortqual validate: $OTHER" "$T/o1.log" $ORTQUAL "${V[@]}" --outdir "$T/O" --shard 1/2
[ "$(wc -l < "$T/o1.log")" = 1 ] && [ ! -e "$T/O/shards/1/started.json" ] && [ ! -e "$T/O/shards/1/summary.json" ] ||
    fail "a shard on another build ran: $(cat "$T/o1.log"; ls -A "$T/O/shards/1")"
must 0 "shard 1 of 2 done" "$T/o1.log" $ORTQUAL "${V[@]}" --outdir "$T/O" --shard 1/2 --force
$PY - "$T/O/shards/1/summary.json" <<'PY' || fail "editing shard 1's summary"
import json, sys
d = json.load(open(sys.argv[1]))
d["configs"][1]["onnxruntime"].update(version="1.30.0", library_sha256="f" * 64)
json.dump(d, open(sys.argv[1], "w"))
PY
must 2 "shard 1 ran cpu:attention24:fp32 on ONNX Runtime 1.30.0 .*shard 0 on 1.29.0 .*refusing to merge shards of different runtimes" \
    "$T/om.log" $ORTQUAL merge "$T/O"
[ ! -e "$T/O/summary.json" ] || fail "a merge of shards of two runtimes wrote a summary"
mkdir "$T/lib" && ln -s "$OQ_ORT_LIB" "$T/lib/libonnxruntime.so"
must 0 "prepared" "$T/l.log" $ORTQUAL "${V[@]}" --ort-lib "$T/lib/libonnxruntime.so" --outdir "$T/L" --prepare-shards 2
must 0 "done" "$T/l0.log" $ORTQUAL "${V[@]}" --ort-lib "$T/lib/libonnxruntime.so" --outdir "$T/L" --shard 0/2
ln -sfn "$ORT130" "$T/lib/libonnxruntime.so"
must 2 "^ortqual validate: $OTHER" "$T/l1.log" $ORTQUAL "${V[@]}" --ort-lib "$T/lib/libonnxruntime.so" --outdir "$T/L" --shard 1/2
# the same build everywhere merges, each shard's library named by content
ln -sfn "$OQ_ORT_LIB" "$T/lib/libonnxruntime.so"
must 0 "done" "$T/l1.log" $ORTQUAL "${V[@]}" --ort-lib "$T/lib/libonnxruntime.so" --outdir "$T/L" --shard 1/2 --force
must 0 "verdict: PASSED" "$T/lm.log" $ORTQUAL merge "$T/L"
[ "$(json "$T/L/shards/1/summary.json" 'len(d["configs"][1]["onnxruntime"]["library_sha256"])')" = 64 ] ||
    fail "a shard does not name its ORT library by content"
# the same file by another path is the same plan: prepared through a linked folder, shard 0 given
# the real path, shard 1 none (the search finds that file); the path was part of the plan's
# identity and both were refused, "they differ in: runtime"
mkdir "$T/ortdir" && ln -s "$(dirname "$(readlink -f "$OQ_ORT_LIB")")" "$T/ortdir/lib"
must 0 "prepared" "$T/p.log" $ORTQUAL "${V[@]}" --ort-lib "$T/ortdir/lib/$(basename "$OQ_ORT_LIB")" --outdir "$T/P" --prepare-shards 2
! grep -q "libonnxruntime" "$T/P/shards/plan_description.json" || fail "the plan's identity names a path of ORT"
must 0 "shard 0 of 2 done" "$T/p0.log" $ORTQUAL "${V[@]}" --ort-lib "$OQ_ORT_LIB" --outdir "$T/P" --shard 0/2
(unset ORTQUAL_ORT_LIB; must 0 "shard 1 of 2 done" "$T/p1.log" $ORTQUAL "${V[@]}" --outdir "$T/P" --shard 1/2)
must 0 "verdict: PASSED" "$T/pm.log" $ORTQUAL merge "$T/P"

# 3. a byte-identical copy of an --inputs file is the same events: refused, naming both
cp "$T/O/inputs_000.npz" "$T/copy.npz"
must 2 "--inputs: files 1 and 2 have the same content \($T/O/inputs_000.npz and $T/copy.npz, SHA-256" "$T/d.log" \
    $ORTQUAL validate --no-cache --inputs "$T/O/inputs_000.npz" "$T/copy.npz" --configs ref:encoder:fp64,cpu:attention24:fp32 \
    --outdir "$T/D"
[ ! -e "$T/D/summary.json" ] || fail "a run of one batch twice wrote a summary"

# 4. more shards than the options' batches: refused before a batch is made (it was refused once
#    every batch had been written, checked and removed again: minutes at 10^6 events), the
#    output folder never made
must 2 "^ortqual validate: 5 shards by batch, but the plan has 4 batches$" "$T/n.log" \
    $ORTQUAL validate --no-cache --num-events 7 --batch-size 2 --configs ref:encoder:fp64,cpu:attention24:fp32 \
    --outdir "$T/N" --prepare-shards 5 --progress always
[ ! -e "$T/N" ] && [ "$(wc -l < "$T/n.log")" = 1 ] || fail "the refused split prepared: $(cat "$T/n.log"; ls -A "$T/N")"
must 2 "3 shards by batch, but the plan has 2 batches" "$T/n2.log" $ORTQUAL "${E[@]}" --outdir "$T/N2" --prepare-shards 3
[ ! -e "$T/N2" ] || fail "the refused split prepared: $(ls -A "$T/N2")"

# 5. a killed shard (SIGKILL: started, its .work left, no summary) and an interrupted one
#    (SIGTERM: a summary that says so) are finished by the same command again, as the generated
#    sbatch script runs it (docs/scale-out.md); a finished one still needs --force
K=(validate --no-cache --num-events 600 --batch-size 1 --max-len 8 --repeat 1 --warmup 0 --no-plots
   --configs ref:encoder:fp64,cpu:attention24:fp32)
must 0 "prepared" "$T/k.log" $ORTQUAL slurm --no-submit --shards 2 --outdir "$T/K" -- "${K[@]}"
# start_until I LOG: shard I runs until its configuration under test has run its batches, and
# is held there (libslow_rename.so holds its worker as it puts its result into place, after
# making the mark): the signal below lands in a shard that has started and not finished. Waiting
# for the log's "cpu:attention24:fp32 ..." raced the shard: a loaded host let it write its summary
# before the signal came (a full `ctest -j2` did once). Its pid in $pid.
PRE="$OQ_BINARY_DIR/tests/libslow_rename.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
start_until() {
    rm -f "$T/held"
    OQ_SLOW_RENAME=/result_01_cpu_attention24_fp32.json OQ_SLOW_RENAME_MARK="$T/held" OQ_SLOW_RENAME_SECONDS=120 \
        LD_PRELOAD="$PRE" $ORTQUAL "${K[@]}" --outdir "$T/K" --shard "$1/2" >"$2" 2>&1 &
    pid=$!
    for _ in $(seq 600); do
        [ -e "$T/held" ] && return 0
        sleep 0.1
    done
    kill -9 $pid $(pgrep -P $pid) 2>/dev/null || true
    fail "shard $1 was never held in its configuration under test: $(ls -A "$T/K/shards/$1"; cat "$2")"
}
start_until 0 "$T/k0.log"
kids=$(pgrep -P $pid || true)
exec 3>&2 2>/dev/null
kill -KILL $pid $kids
wait $pid || true
exec 2>&3 3>&-
[ -e "$T/K/shards/0/started.json" ] && [ -d "$T/K/shards/0/.work" ] && [ ! -e "$T/K/shards/0/summary.json" ] ||
    fail "killed shard: $(ls -A "$T/K/shards/0" | tr "\n" " ")"
start_until 1 "$T/k1.log"
kill -TERM $pid
wait $pid || true
[ "$(json "$T/K/shards/1/summary.json" 'd["verdict"]')" = interrupted ] || fail "SIGTERM: $(tail -3 "$T/k1.log")"
must 1 "shard 0 of 2 unfinished" "$T/km.log" $ORTQUAL merge "$T/K"
for i in 0 1; do
    must 0 "shard $i of 2 done" "$T/kr$i.log" env SLURM_ARRAY_TASK_ID=$i bash "$T/K/slurm/shards.sbatch"
done
[ ! -e "$T/K/shards/0/error.json" ] && [ ! -e "$T/K/shards/0/.work" ] || fail "the rerun left: $(ls -A "$T/K/shards/0")"
must 0 "verdict: PASSED" "$T/km.log" $ORTQUAL merge "$T/K"
must 2 "shards/1/summary.json exists \(use --force" "$T/kf.log" $ORTQUAL "${K[@]}" --outdir "$T/K" --shard 1/2
# a rerun of an unfinished shard refused by its plan check: its error.json is the shard's record
rm "$T/K/shards/0/summary.json" && cp "$T/K/shards/1/started.json" "$T/K/shards/0/started.json"
must 2 "differ in: repeat" "$T/kx.log" $ORTQUAL "${K[@]}" --repeat 2 --outdir "$T/K" --shard 0/2
[ -e "$T/K/shards/0/error.json" ] || fail "a refused rerun of an unfinished shard wrote no error.json: $(ls -A "$T/K/shards/0")"
must 1 "shard 0 of 2 failed: stopped before running: .*differ in: repeat" "$T/kxm.log" $ORTQUAL merge "$T/K"
echo "shard_trust e2e: all checks passed"
