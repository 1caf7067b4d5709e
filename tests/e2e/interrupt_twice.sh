#!/usr/bin/env bash
# A second SIGTERM ends validate at once (docs/reliability.md "Interruption"): the first is passed
# on to the running worker's group and the run waits for it (5 s, then SIGKILL); a worker that
# ignores it (libhang_ep.so with HANG_EP_IGNORE_TERM) kept the run for that grace, and a run
# waiting in a call that does not return kept it until SIGKILL. The second kills the worker's
# group and ends ortqual by the signal: exit 143, nothing of the run left running, no temporary.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
HANG_EP_IGNORE_TERM=1 $ORTQUAL validate --num-events 4 --batch-size 2 --repeat 1 --no-plots --no-cache \
  --ep-lib "hangep=$OQ_BINARY_DIR/tests/libhang_ep.so" --configs ref:encoder:fp64,hangep:attention24:fp32 \
  --outdir "$T/run" > "$T/run.log" 2>&1 &
pid=$!
worker=""
for _ in $(seq 600); do # until the hanging configuration's worker sleeps in the EP library
  for w in $(pgrep -P $pid); do
    grep -q nanosleep "/proc/$w/wchan" 2>/dev/null && worker=$w && break 2
  done
  sleep 0.1
done
[ -n "$worker" ] || { kill -9 $pid; fail "the hanging worker never slept: $(cat "$T/run.log")"; }
first=$(date +%s%N)
kill -TERM $pid
sleep 0.5
kill -0 "$worker" 2>/dev/null || fail "the worker ended on the first SIGTERM: the case proves nothing"
kill -TERM $pid
rc=0
wait $pid || rc=$?
ms=$((($(date +%s%N) - first) / 1000000))
# the first alone ends the run after its 5 s grace (5.4 s measured): the second must end it sooner
[ $ms -lt 4500 ] || fail "validate ended ${ms} ms after the first SIGTERM: the second did not end it (the grace is 5 s)"
[ $rc -eq 143 ] || fail "second SIGTERM: exit $rc, expected 143: $(tail -3 "$T/run.log")"
for _ in $(seq 20); do pgrep -g "$worker" > /dev/null || break; sleep 0.1; done
! pgrep -g "$worker" > /dev/null || { pkill -KILL -g "$worker"; fail "the worker's group outlived the run"; }
! ls -a "$T/run" | grep '\.tmp\.' || fail "a temporary stayed in the output folder"
echo "interrupt twice: ok"
