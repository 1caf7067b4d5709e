#!/usr/bin/env bash
# A signal that was ignored when ortqual started stays ignored (docs/reliability.md,
# "Interruption"): `nohup ortqual ...` and a script's `ortqual ... &` (bash starts a background
# command with SIGINT ignored) ask that the signal end nothing, in ortqual nor in what it runs.
# gate (SIGINT, SIGTERM, SIGHUP) and validate (SIGINT, SIGTERM) put their handler over the
# ignored signal and passed it on to the child's group, whose exec had given it back its default
# action: the run ended 130 or 129. slurm kept it ignored; the three now share one handler
# (src/cli/cli_signals.c). Each case sends the signal to ortqual and to its child.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
PY=/usr/bin/python3
cd "$T"
env --ignore-signal=INT true 2>/dev/null || { echo "env has no --ignore-signal (coreutils < 8.31)"; exit 77; }

# held FILE PID WHAT LOG: FILE appears within 60 s (the process PID reached the point where it is
# signalled); else PID is killed and WHAT fails, with LOG's end
held() {
    for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
    kill -9 "$2"
    bad "$3: $(tail -3 "$4")"
    return 1
}

# alive PID: running (a zombie is not); ignores PID N: process PID ignores signal number N
alive() { [ "$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null || echo Z)" != Z ]; }
ignores() { (( 0x$(awk '/^SigIgn:/ {print $2}' "/proc/$1/status") >> ($2 - 1) & 1 )); }

# gate_signalled HOW SIG CODE: `ortqual gate` started with SIG at HOW (env --HOW-signal: ignore
# or default), its command waiting for the file `go`; SIG sent to the gate and to the command,
# then `go`: the gate must exit CODE (0: the run ended on its own and passed)
gate_signalled() {
    local how=$1 sig=$2 code=$3 rc=0 gpid
    rm -f cmd.pid go v.json
    local cmd="echo \$\$ >'$T/pid.tmp'; mv '$T/pid.tmp' '$T/cmd.pid'" # (whole when seen)
    cmd+="; while [ ! -e '$T/go' ]; do sleep 0.1; done; echo '1 passed, 0 failed'"
    env --"$how"-signal="$sig" "$Q" gate --quiet --verdict "$T/v.json" -- /bin/sh -c "$cmd" >gate.log 2>&1 &
    gpid=$!
    held cmd.pid $gpid "gate, SIG$sig at $how: the command never started" gate.log || return
    local cpid n
    cpid=$(cat cmd.pid)
    kill -"$sig" $gpid "$cpid" 2>/dev/null || true # (the command may be gone already)
    # what the signal did, not a time (a fixed 1 s could pass before a loaded machine ended the
    # command): a signal caught ends the command, waited for up to 60 s; an ignored one is
    # ignored by the gate and the command alike (SigIgn), so nothing can have ended by it
    if [ "$code" -ne 0 ]; then
        for _ in $(seq 600); do alive "$cpid" || break; sleep 0.1; done
        ! alive "$cpid" || { kill -9 $gpid "$cpid"; bad "gate, SIG$sig at $how: the command outlived the signal by 60 s"; return; }
    else
        n=$(kill -l "$sig")
        for p in $gpid "$cpid"; do
            ignores "$p" "$n" || { kill -9 $gpid "$cpid"; bad "gate, SIG$sig at $how: process $p does not ignore it"; return; }
        done
    fi
    touch go
    wait $gpid || rc=$?
    local verdict
    verdict=$($PY -c "import json; print(json.load(open('v.json'))['verdict'])" 2>&1)
    if [ "$rc" -ne "$code" ]; then bad "gate, SIG$sig at $how: exit $rc, expected $code: $(tail -3 gate.log)"
    elif [ "$code" -eq 0 ] && { [ "$verdict" != pass ] || grep -q interrupted gate.log; }; then
        bad "gate, SIG$sig at $how: verdict $verdict: $(tail -3 gate.log)"
    else ok "gate, SIG$sig at $how: exit $code, verdict $verdict"; fi
}

# the signal reaches the gate and the command here (else the cases below prove nothing) ...
gate_signalled default INT 130
# ... and one ignored at the start ends neither: a script's `&`, nohup
gate_signalled ignore INT 0
gate_signalled ignore HUP 0

# validate started with SIGINT ignored, held while its worker puts a saved output into place
# (libslow_rename.so, 5 s): SIGINT to it and to the worker ends neither, the run passes
PRE="$OQ_BINARY_DIR/tests/libslow_rename.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
OQ_SLOW_RENAME=_fp32_001.npz OQ_SLOW_RENAME_MARK="$T/save.mark" LD_PRELOAD="$PRE" \
    env --ignore-signal=INT "$Q" validate --num-events 4 --batch-size 2 --repeat 1 --no-plots --no-cache \
    --save-outputs --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/save" >save.log 2>&1 &
pid=$!
if held save.mark $pid "validate, SIGINT ignored: the worker never put its output into place" save.log; then
    workers=$(pgrep -P $pid || true)
    kill -INT $pid $workers 2>/dev/null || true
    rc=0
    wait $pid || rc=$?
    verdict=$($PY -c "import json; print(json.load(open('save/summary.json'))['verdict'])" 2>&1)
    [ "$rc" -eq 0 ] && [ "$verdict" = passed ] && [ -n "$workers" ] &&
        ok "validate, SIGINT ignored: to it and its worker: exit 0, verdict passed" ||
        bad "validate, SIGINT ignored: exit $rc, verdict $verdict, workers '$workers': $(tail -3 save.log)"
fi
report
