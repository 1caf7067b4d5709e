#!/usr/bin/env bash
# A second SIGTERM ends validate, and a gate running it, at once (docs/reliability.md
# "Interruption"): the first is passed on to the running worker's group and the run waits for it
# (5 s, then SIGKILL); a worker that ignores it (libhang_ep.so with HANG_EP_IGNORE_TERM) kept the
# run for that grace, and a run waiting in a call that does not return kept it until SIGKILL. The
# second kills the child's group and ends ortqual by the signal: exit 143, nothing of the run left
# running, no temporary, no summary or verdict. (`slurm`'s case is in slurm.sh: its cluster.)
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
V=(validate --num-events 4 --batch-size 2 --repeat 1 --no-plots --no-cache
   --ep-lib "hangep=$OQ_BINARY_DIR/tests/libhang_ep.so" --configs ref:encoder:fp64,hangep:attention24:fp32)

# hanging_worker PARENT: the child of PARENT that sleeps in the EP library (once its configuration
# hangs), waited for up to 120 s; empty if it never did
hanging_worker() {
    local w
    for _ in $(seq 1200); do
        for w in $(pgrep -P "$1"); do
            grep -q nanosleep "/proc/$w/wchan" 2>/dev/null && echo "$w" && return
        done
        sleep 0.1
    done
}

# twice PID WHAT LOG KEEP...: SIGTERM to PID, which must keep the processes KEEP (its grace), then
# a second, which must end PID by the signal within half the 5 s grace (it ended 5.2 s after the
# first: the grace); sets ms (from the second signal to the end). LOG: PID's output.
twice() {
    local pid=$1 what=$2 log=$3 p rc=0 second
    shift 3
    kill -TERM "$pid"
    sleep 0.5
    for p in "$pid" "$@"; do
        kill -0 "$p" 2>/dev/null || fail "$what: process $p ended on the first SIGTERM: the case proves nothing"
    done
    second=$(date +%s%N)
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    ms=$((($(date +%s%N) - second) / 1000000))
    [ $rc -eq 143 ] || fail "$what, second SIGTERM: exit $rc, expected 143: $(tail -3 "$log")"
    [ $ms -lt 2500 ] || fail "$what ended ${ms} ms after the second SIGTERM: it waited for the grace (5 s)"
}

# 1. validate
HANG_EP_IGNORE_TERM=1 $ORTQUAL "${V[@]}" --outdir "$T/run" >"$T/run.log" 2>&1 &
pid=$!
worker=$(hanging_worker $pid)
[ -n "$worker" ] || { kill -9 $pid; fail "the hanging worker never slept: $(cat "$T/run.log")"; }
twice $pid validate "$T/run.log" "$worker"
group_gone "$worker" 60 || fail "validate: the worker's group outlived the run"
[ ! -e "$T/run/summary.json" ] || fail "validate wrote its summary: it waited for the worker"
! ls -a "$T/run" | grep '\.tmp\.' || fail "validate: a temporary stayed in the output folder"
echo "validate: ended ${ms} ms after the second SIGTERM"

# 2. gate, its command that validate: the first SIGTERM goes to the command's group, where validate
# keeps its grace for its worker; the second kills that group at once, and the worker dies with
# validate (its parent-death signal)
export TMPDIR=$T/tmp # the gate's private folder
mkdir -p "$TMPDIR" "$T/gate"
$ORTQUAL gate --quiet --verdict "$T/gate/verdict.json" --env HANG_EP_IGNORE_TERM=1 -- \
    $ORTQUAL "${V[@]}" --outdir "$T/gate/run" >"$T/gate.log" 2>&1 &
pid=$!
cmd=""
for _ in $(seq 1200); do cmd=$(pgrep -P $pid) && break; sleep 0.1; done
worker=""
[ -z "$cmd" ] || worker=$(hanging_worker "$cmd")
[ -n "$worker" ] || { kill -9 $pid; fail "gate: the hanging worker never slept: $(cat "$T/gate.log")"; }
[ "$(ps -o pgid= -p "$cmd" | tr -d ' ')" = "$cmd" ] || fail "gate: its command $cmd leads no process group"
twice $pid gate "$T/gate.log" "$cmd" "$worker"
group_gone "$cmd" 60 || fail "gate: the command's group outlived the gate"
group_gone "$worker" 60 || fail "gate: validate's worker outlived the gate"
# what the gate wrote before its command started stays: an error, "the run did not finish"
grep -q '"verdict": "error"' "$T/gate/verdict.json" && grep -q 'the run did not finish' "$T/gate/verdict.json" ||
    fail "gate wrote a verdict: it waited for its command ($(cat "$T/gate/verdict.json"))"
! find "$T/gate" "$TMPDIR" -name '*.tmp.*' | grep . || fail "gate: a temporary stayed"
echo "gate: ended ${ms} ms after the second SIGTERM"
echo "interrupt twice: ok"
