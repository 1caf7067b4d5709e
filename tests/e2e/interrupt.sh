#!/usr/bin/env bash
# Interrupting validate (issue 15, docs/reliability.md "Interruption"): a configuration whose
# worker hangs (libhang_ep.so sleeps in ONNX Runtime's EP registration, a real plugin EP) is
# running when the parent gets SIGINT, SIGTERM or SIGKILL. No worker may be left behind; on
# SIGINT/SIGTERM the worker gets the signal itself (passed on to its process group), and the
# summary says which configuration was running, after how many batches, and what was not run.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
json() { $PY -c "import json,os,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
V=(validate --num-events 4 --batch-size 2 --repeat 1 --no-plots
   --ep-lib "hangep=$OQ_BINARY_DIR/tests/libhang_ep.so"
   --configs ref:encoder:fp64,hangep:attention24:fp32,cpu:attention24:fp32)

# start LOG ARGS...: runs ortqual ARGS in the background (with the variables WITH, NAME=VALUE
# each); sets pid (the parent) and worker (the hanging configuration's worker, once it runs: the
# child that sleeps; a cached reference's worker may run beside it)
WITH=()
start() {
    local log=$1
    shift
    set -m # a background job of a script ignores SIGINT otherwise (and so would ortqual)
    env "${WITH[@]}" $ORTQUAL "$@" >"$log" 2>&1 &
    pid=$!
    set +m
    worker=""
    for _ in $(seq 600); do
        grep -q "hangep:attention24:fp32 \.\.\." "$log" && break
        sleep 0.1
    done
    # until it hangs (sleeps in the EP library, after its last write: a worker stopped earlier
    # would die of SIGPIPE at its next write into the dead parent's pipe, and prove nothing)
    for _ in $(seq 600); do
        for w in $(pgrep -P $pid); do
            grep -q nanosleep "/proc/$w/wchan" 2>/dev/null && worker=$w && break 2
        done
        sleep 0.1
    done
    [ -n "$worker" ] || { kill -9 $pid $(pgrep -P $pid); fail "the hanging configuration's worker never started or never slept: $(cat "$log")"; }
    # and until a reference beside it has ended (a zombie until the parent waits for it): the
    # summaries below expect it to have run, not to have been interrupted in its last steps
    for _ in $(seq 600); do
        local busy=0
        for w in $(pgrep -P $pid); do
            [ "$w" = "$worker" ] || [ "$(awk '{print $3}' "/proc/$w/stat" 2>/dev/null)" = Z ] || busy=1
        done
        [ $busy = 0 ] && return 0
        sleep 0.1
    done
    kill -9 $pid $(pgrep -P $pid)
    fail "a worker beside the hanging one never ended: $(cat "$log")"
}

# gone PGID: no process of the worker's group is left within 60 s (2 s was too short for a
# sanitizer build on a loaded machine; the hanging EP gives up only after 120 s)
gone() {
    group_gone "$1" 60 || fail "worker group $1 outlived the stopped parent"
}

# interrupted DIR SIG CODE: the parent ended with CODE and its summary records the interruption
interrupted() {
    local dir=$1 sig=$2 code=$3 rc=0
    wait $pid || rc=$?
    [ "$rc" -eq "$code" ] || fail "SIG$sig: exit $rc, expected $code: $(tail -5 "$dir.log")"
    gone "$worker"
    grep -q "verdict: INTERRUPTED" "$dir.log" || fail "SIG$sig: no INTERRUPTED verdict: $(tail -5 "$dir.log")"
    # nothing of the stopped configuration was timed: its row shows no latency (it showed 0.000 ms)
    grep -Eq '^hangep:attention24:fp32 +not-run +0 +- +- +- +- +-$' "$dir.log" ||
        fail "SIG$sig: the stopped configuration's row: $(grep '^hangep' "$dir.log")"
    [ "$(json "$dir/summary.json" '(d["verdict"], d["exit_status"], d["interrupted"])')" = \
      "('interrupted', $code, {'signal': 'SIG$sig', 'number': $((code - 128)), 'config': 'hangep:attention24:fp32', 'batches_done': 0, 'batches': 2})" ] ||
        fail "SIG$sig: summary: $(json "$dir/summary.json" '(d["verdict"], d["exit_status"], d.get("interrupted"))')"
    [ "$(json "$dir/summary.json" '[(c["name"], c["status"], c.get("reason")) for c in d["configs"]]')" = \
      "[('ref:encoder:fp64', 'reference', None), ('hangep:attention24:fp32', 'not-run', 'interrupted by SIG$sig after 0 of 2 batches'), ('cpu:attention24:fp32', 'not-run', 'the run was interrupted (SIG$sig) before it started')]" ] ||
        fail "SIG$sig: configurations: $(json "$dir/summary.json" '[(c["name"], c["status"], c.get("reason")) for c in d["configs"]]')"
    # the worker ended by the signal passed on to it, not by the grace period's SIGKILL
    [ "$(json "$dir/summary.json" 'd["configs"][1]["worker"]["signal"]')" = "$((code - 128))" ] ||
        fail "SIG$sig: the worker did not get the signal: $(json "$dir/summary.json" 'd["configs"][1]["worker"]')"
    [ ! -e "$dir/.work" ] || fail "SIG$sig: $dir/.work left behind"
}

# 1. Ctrl-C and SIGTERM: passed on, summary written, 128 + N
start "$T/int.log" "${V[@]}" --outdir "$T/int"
kill -INT $pid
interrupted "$T/int" INT 130
start "$T/term.log" "${V[@]}" --outdir "$T/term"
kill -TERM $pid
interrupted "$T/term" TERM 143
# a closed terminal (SIGHUP) too (it killed the parent: .work/ left, no summary)
start "$T/hup.log" "${V[@]}" --outdir "$T/hup"
kill -HUP $pid
interrupted "$T/hup" HUP 129
# (the first run cached the reference: this one read it beside the hanging configuration)
[ "$(json "$T/term/summary.json" 'd["configs"][0]["worker"].get("beside")')" = hangep:attention24:fp32 ] ||
    fail "SIGTERM: the cached reference did not run beside the hanging configuration"

# 2. SIGKILL of the parent: nothing can be written, but the worker dies with it (PDEATHSIG),
# not 120 s later when the hanging EP gives up
start "$T/kill.log" "${V[@]}" --outdir "$T/kill"
exec 3>&2 2>/dev/null # (bash would announce the kill)
kill -KILL $pid
wait $pid || true
exec 2>&3 3>&-
gone "$worker"

# 3. the per-configuration timeout still ends a hanging worker and its group, and says how far
# it got (it said only "worker timed out after 2 s (killed)") and which option raises it. The limit is every worker's: at
# 2 s a reference slowed by a sanitizer on a loaded machine was killed too ("with 2 of 2 batches
# done"), so it is 20 s, and the test waits for what happens (the worker hangs, the run ends,
# the worker's group is gone), each with a bound, not for a time. The reference is held 3 s as
# it puts its result into place (libslow_rename.so), as such a machine slowed it
PRE="$OQ_BINARY_DIR/tests/libslow_rename.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
WITH=(OQ_SLOW_RENAME=/result_00_ref_encoder_fp64.json OQ_SLOW_RENAME_SECONDS=3 "LD_PRELOAD=$PRE")
start "$T/timeout.log" "${V[@]}" --timeout 20 --outdir "$T/timeout"
WITH=()
for _ in $(seq 3000); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "--timeout 20: the run still went on after 300 s"; }
rc=0
wait $pid || rc=$?
[ $rc -eq 1 ] || fail "--timeout 20: exit $rc, expected 1: $(tail -5 "$T/timeout.log")"
gone "$worker"
grep -Eq "hangep:attention24:fp32: failed: worker timed out after 20 s \(killed\) with 0 of 2 batches done \(--timeout SECONDS, each configuration's limit, default 300, raises it\)" "$T/timeout.log" ||
    fail "--timeout 20: $(grep hangep "$T/timeout.log")"
[ "$(json "$T/timeout/summary.json" '[(c["name"], c["status"]) for c in d["configs"]]')" = \
  "[('ref:encoder:fp64', 'reference'), ('hangep:attention24:fp32', 'failed'), ('cpu:attention24:fp32', 'passed')]" ] ||
    fail "--timeout 20: only the hanging configuration may fail: $(json "$T/timeout/summary.json" '[(c["name"], c["status"], c.get("reason")) for c in d["configs"]]')"

# 4. a shard stopped by SIGTERM (a batch system's time limit) says so, and merge names it
# (by configuration, shard 1 runs the last one: the hanging one)
S=("${V[@]:0:$((${#V[@]} - 1))}" ref:encoder:fp64,cpu:attention24:fp32,hangep:attention24:fp32 --shard-by config)
must 0 "prepared" "$T/sp.log" $ORTQUAL "${S[@]}" --outdir "$T/S" --prepare-shards 2
must 0 "shard 0 of 2" "$T/s0.log" $ORTQUAL "${S[@]}" --outdir "$T/S" --shard 0/2
start "$T/S.log" "${S[@]}" --outdir "$T/S" --shard 1/2
kill -TERM $pid
rc=0
wait $pid || rc=$?
[ "$rc" -eq 143 ] || fail "shard SIGTERM: exit $rc: $(tail -5 "$T/S.log")"
gone "$worker"
# its log's last line (a batch system's log) says so: it said "shard 1 of 2 done"
last=$(tail -1 "$T/S.log")
[[ "$last" == "shard 1 of 2 interrupted (SIGTERM): run it again, then ortqual merge $T/S" ]] ||
    fail "shard SIGTERM: last line '$last'"
must 1 "shard 1 of 2 interrupted: started on .* and was interrupted by SIGTERM while hangep:attention24:fp32 ran \(0 of 2 batches done\)" \
    "$T/sm.log" $ORTQUAL merge --no-plots "$T/S"

# 5. a signal after the last configuration ended (libslow_rename.so holds the parent as it writes
# validate.csv) still stops the run: not green, 128 + N, the summary says so (it was PASSED, exit 0)
set -m # (as in start)
OQ_SLOW_RENAME=/validate.csv OQ_SLOW_RENAME_MARK="$T/late.mark" LD_PRELOAD="$PRE" \
    $ORTQUAL validate --num-events 4 --batch-size 2 --repeat 1 --no-plots --no-cache \
    --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/late" >"$T/late.log" 2>&1 &
pid=$!
set +m
for _ in $(seq 600); do [ -e "$T/late.mark" ] && break; sleep 0.1; done
[ -e "$T/late.mark" ] || { kill -9 $pid; fail "late: validate.csv never written: $(cat "$T/late.log")"; }
kill -INT $pid
rc=0
wait $pid || rc=$?
[ "$rc" -eq 130 ] || fail "late SIGINT: exit $rc, expected 130: $(tail -5 "$T/late.log")"
[ "$(json "$T/late/summary.json" '(d["verdict"], d["exit_status"], d["verdict_reason"], [c["status"] for c in d["configs"]])')" = \
  "('interrupted', 130, 'interrupted by SIGINT after every configuration had ended', ['reference', 'passed'])" ] ||
    fail "late SIGINT: summary: $(json "$T/late/summary.json" '(d["verdict"], d["exit_status"], d.get("verdict_reason"))')"

# 6. a signal while a worker writes a saved output (held between writing its temporary and
# renaming it): the half-written temporary does not stay in the output folder (it did:
# outputs_01_cpu_attention24_fp32_001.npz.tmp.XXXXXX beside the summary)
rm -f "$T/late.mark"
set -m
OQ_SLOW_RENAME=_fp32_001.npz OQ_SLOW_RENAME_MARK="$T/save.mark" LD_PRELOAD="$PRE" \
    $ORTQUAL validate --num-events 4 --batch-size 2 --repeat 1 --no-plots --no-cache --save-outputs \
    --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/save" >"$T/save.log" 2>&1 &
pid=$!
set +m
for _ in $(seq 600); do [ -e "$T/save.mark" ] && break; sleep 0.1; done
[ -e "$T/save.mark" ] || { kill -9 $pid; fail "save: the output was never renamed: $(cat "$T/save.log")"; }
ls "$T/save" | grep -q '_fp32_001\.npz\.tmp\.' || { kill -9 $pid; fail "save: no temporary while it was held"; }
kill -INT $pid
rc=0
wait $pid || rc=$?
[ "$rc" -eq 130 ] || fail "save SIGINT: exit $rc, expected 130: $(tail -5 "$T/save.log")"
! ls -a "$T/save" | grep '\.tmp\.' || fail "a half-written temporary stayed in the output folder"
# 7. a signal as summary.json is put in place (its verdict already fixed) and one as report.html
# is: the summary's verdict stands and is the exit status, and the run says it was interrupted
# (it exited 143 while summary.json said passed, and stdout ended "verdict: PASSED")
for file in summary.json report.html; do
    rm -f "$T/stand.mark"
    OQ_SLOW_RENAME=/$file OQ_SLOW_RENAME_MARK="$T/stand.mark" LD_PRELOAD="$PRE" \
        $ORTQUAL validate --num-events 4 --batch-size 2 --repeat 1 --no-plots --no-cache \
        --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/stand-$file" >"$T/stand.log" 2>&1 &
    pid=$!
    for _ in $(seq 600); do [ -e "$T/stand.mark" ] && break; sleep 0.1; done
    [ -e "$T/stand.mark" ] || { kill -9 $pid; fail "stand: $file never written: $(cat "$T/stand.log")"; }
    kill -TERM $pid
    rc=0
    wait $pid || rc=$?
    [ "$rc" -eq 0 ] || fail "SIGTERM at $file: exit $rc, expected 0 (the verdict): $(tail -5 "$T/stand.log")"
    [ "$(json "$T/stand-$file/summary.json" '(d["verdict"], d["exit_status"])')" = "('passed', 0)" ] ||
        fail "SIGTERM at $file: summary: $(json "$T/stand-$file/summary.json" '(d["verdict"], d["exit_status"])')"
    [ "$(tail -2 "$T/stand.log" | head -1 | cut -c1-16)" = "verdict: PASSED " ] &&
        [ "$(tail -1 "$T/stand.log")" = "interrupted by SIGTERM after the summary was written (verdict stands)" ] ||
        fail "SIGTERM at $file: the run's last lines: $(tail -2 "$T/stand.log")"
    [ -s "$T/stand-$file/report.html" ] || fail "SIGTERM at $file: no report.html"
done
# 8. a signal while the inputs are prepared: at 10^6 batches preparation takes minutes, and a
# Ctrl-C went on until every batch was written (379 s), then said "between configurations";
# now preparation stops at the next batch, what it wrote goes, and error.json says where
set -m
$ORTQUAL validate --no-cache --num-events 200000 --batch-size 1 --max-len 8 --repeat 1 --warmup 0 --no-plots \
    --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/prep" >"$T/prep.log" 2>&1 &
pid=$!
set +m
for _ in $(seq 600); do compgen -G "$T/prep/inputs_*.npz" >/dev/null && break; sleep 0.1; done
kill -INT $pid
rc=0
wait $pid || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT while preparing: exit $rc, expected 130: $(tail -3 "$T/prep.log")"
grep -q "^ortqual validate: interrupted by SIGINT while preparing inputs ([0-9]* of 200000 batches written): nothing ran, and what preparation wrote was removed$" "$T/prep.log" ||
    fail "SIGINT while preparing: not said: $(tail -3 "$T/prep.log")"
grep -q "interrupted by SIGINT while preparing inputs" "$T/prep/error.json" && [ ! -e "$T/prep/summary.json" ] &&
    ! compgen -G "$T/prep/inputs_*.npz" >/dev/null || fail "SIGINT while preparing: left $(ls "$T/prep" | head -5)"
echo "interruption: ok"
