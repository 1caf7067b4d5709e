#!/usr/bin/env bash
# Output folder locks beyond validate's (docs/usage.md, "One run at a time"): conformance --outdir
# and plot --out are refused while a run holds the folder, as bench is; a folder left by a
# SIGKILLed run is said to be an interrupted run's that --force clears, not "not empty"; the
# shards of one split run at once, and while any runs a plain, --force, --prepare-shards or merge
# run into their folder is refused (each shard holds the folder's lock shared); bench and
# conformance with too few file descriptors (ulimit -n 4) say so (EMFILE, exit 3), leaving nothing.
# The running runs hang in an EP library (libhang_ep.so, as outdir.sh and interrupt.sh).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=${ORTQUAL:?}
cd "$T"
HANG=(--num-events 4 --batch-size 2 --repeat 1 --no-plots --ep-lib "hangep=$OQ_BINARY_DIR/tests/libhang_ep.so"
      --configs ref:encoder:fp64,hangep:attention24:fp32)
V=(validate --num-events 4 --batch-size 2 --repeat 1 --no-plots --progress never --configs ref:encoder:fp64,cpu:attention24:fp32)
B=(bench --variants cpu:attention24:fp32 --seq-lens 8 --num-heads 2 --head-dim 8 --iters 1)

# start LOG ARGS...: ortqual validate ARGS in the background until its hanging configuration runs;
# its pid appended to `pids`
pids=()
start() {
    local log=$1
    shift
    $Q validate "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 600); do
        grep -q "hangep:attention24:fp32 \.\.\." "$log" && return 0
        sleep 0.1
    done
    stop
    fail "the hanging run never started: $(cat "$log")"
}
# stop: SIGTERM to each started run (passed on to its worker's group), then waited for
stop() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}
trap 'stop; rm -rf "$T"' EXIT

# ---- conformance and bench into a held folder ------------------------------------------------
start a.log "${HANG[@]}" --outdir D
pid=${pids[0]}
must 2 "^ortqual conformance: D: in use by another ortqual run \(pid $pid, holding D/\.ortqual\.lock\)" c.log \
    $Q conformance --outdir D
[ "$(wc -l <c.log)" -eq 1 ] || fail "conformance into a held folder: more than one line: $(cat c.log)"
must 2 "D: in use by another ortqual run \(pid $pid" b.log $Q "${B[@]}" --outdir D
must 2 "^ortqual plot: D: in use by another ortqual run \(pid $pid" pl.log \
    $Q plot "$OQ_SOURCE_DIR/tests/fixtures/bench/summary.csv" --out D
ls D | grep -Eq '\.(png|svg)$' && fail "a refused plot drew into D: $(ls D)"
[ ! -e D/summary.json ] || fail "a refused run wrote D/summary.json"

# ---- killed: its leftovers are an interrupted run's, which --force clears -----------------------
kill -9 "$pid"
wait "$pid" || true
pids=()
for _ in $(seq 100); do pgrep -f "hangep=$OQ_BINARY_DIR" >/dev/null || break; sleep 0.1; done
for cmd in "${V[*]}" conformance; do
    must 2 "^ortqual ${cmd%% *}: (--outdir: )?D: an earlier run here was interrupted \(it left '[^']+' and no summary\.json\): --force clears what it left" \
        k.log $Q $cmd --outdir D
    [ "$(wc -l <k.log)" -eq 1 ] || fail "$cmd after a killed run: more than one line: $(cat k.log)"
done
must 0 "verdict: PASSED" f.log $Q "${V[@]}" --outdir D --force

# ---- shards run at once; a run that takes the folder whole waits for them ----------------------
must 0 "prepared 2 shards" p.log $Q validate "${HANG[@]}" --outdir S --prepare-shards 2
# (a prepared split's batches wait for its shards: not an interrupted run's)
must 2 "^ortqual validate: S: not empty \(it holds '[^']+'\)" pn.log $Q validate "${HANG[@]}" --outdir S
start s0.log "${HANG[@]}" --outdir S --shard 0/2
start s1.log "${HANG[@]}" --outdir S --shard 1/2 # beside shard 0: it got past the locks
busy="S: in use by the shards of a split run \(holding S/\.ortqual\.lock\)"
for force in "" --force; do
    must 2 "^ortqual validate: $busy" v.log $Q validate "${HANG[@]}" --outdir S $force
    must 2 "^ortqual validate: $busy" v.log $Q validate "${HANG[@]}" --outdir S --prepare-shards 2 $force
done
must 2 "^ortqual merge: $busy" m.log $Q merge S
must 2 "^ortqual validate: S: in use by another ortqual run \(pid ${pids[0]}, holding S/\.ortqual\.shard-0\.lock\)" \
    r.log $Q validate "${HANG[@]}" --outdir S --shard 0/2
[ -e S/shards/plan.json ] && [ -e S/shards/0/started.json ] && [ -e S/shards/1/started.json ] ||
    fail "the refused runs touched the shards: $(ls -A S S/shards S/shards/*)"
stop
[ ! -e S/.ortqual.lock ] || fail "the shards ended and left S/.ortqual.lock (the last to end removes it)"
must 0 "prepared 2 shards" p2.log $Q validate "${HANG[@]}" --outdir S --prepare-shards 2 --force # they ended

# ---- no descriptors left ----------------------------------------------------------------------
for cmd in "${B[*]}" conformance; do
    rc=0
    # (descriptors the shell inherited closed first: ctest's would take the loader's last one)
    (for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -le 2 ] || eval "exec $fd>&-"; done
     ulimit -n 4 && exec $Q $cmd --outdir F) >n.log 2>&1 || rc=$?
    [ "$rc" -eq 3 ] || fail "$cmd, ulimit -n 4: exit $rc, expected 3: $(cat n.log)"
    grep -q "^ortqual ${cmd%% *}: too few file descriptors (EMFILE): the limit of open files is 4" n.log ||
        fail "$cmd, ulimit -n 4: $(cat n.log)"
    [ ! -e F ] || fail "$cmd, ulimit -n 4 left $(ls -A F)"
done
echo "ok"
