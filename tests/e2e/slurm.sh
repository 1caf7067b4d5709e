#!/usr/bin/env bash
# ortqual slurm on a real one-node SLURM cluster started here (munged, slurmctld, slurmd from
# Debian's slurm-wlm, private configuration under the test's temporary directory, free ports):
#   1. a 4-shard validation plus its merge, submitted by `ortqual slurm`, equals the unsharded
#      run field by field;
#   2. a second run, 2 shards by configuration, in which one hangs and is cancelled while it runs:
#      the merge job fails and names that shard, and the shard resubmitted by the documented
#      command runs again;
#   3. what the scripts pass to sbatch, and refusals that submit nothing;
#   4. sbatch answers other than --parsable's (fake sbatch wrappers), and the printed submit command
#      pasted into a shell, with an outdir holding a quote and a '#';
#   5. a second SIGINT while the prepare step does not end on the first: slurm ends at once,
#      nothing submitted.
# Nothing is skipped: a cluster that cannot start fails the test, with the daemons' logs.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
LOCAL="$OQ_SOURCE_DIR/scripts/slurm-local.sh"
CL=$T/cluster
WAIT_S=${OQ_SLURM_WAIT_S:-300}
json() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
t0=$SECONDS

# On any exit: on failure the logs first, then the daemons this test started (by their pids).
cleanup() {
    local rc=$?
    if [ $rc -ne 0 ] && [ -d "$CL" ]; then
        [ -z "${SLURM_CONF:-}" ] || { echo "---- slurm queue"; squeue 2>&1 || true; }
        "$LOCAL" logs "$CL" || true
        for f in "$T"/*/slurm/*.out; do [ -f "$f" ] && { echo "==== $f"; tail -n 20 "$f"; }; done
    fi
    [ -d "$CL" ] && "$LOCAL" stop "$CL"
    rm -rf "$T"
    exit $rc
}
trap cleanup EXIT

chmod 755 "$T" # munged serves its socket only under directories everyone may search
"$LOCAL" start "$CL" >"$T/start.log" 2>&1 || fail "the cluster did not start: $(cat "$T/start.log")"
export SLURM_CONF=$CL/slurm.conf
echo "cluster up in $((SECONDS - t0)) s: $(sinfo -h -o '%P %D %c %T')"

# state JOB: one state per line for the job (an array: one line per task)
state() { scontrol show job -o "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
# ended JOB: every state known and final (an unanswered query is not an end)
ended() {
    local s
    s=$(state "$1") && [ -n "$s" ] &&
        ! grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$' <<<"$s"
}
wait_ended() {
    local end=$((SECONDS + WAIT_S))
    for j in "$@"; do
        until ended "$j"; do
            [ $SECONDS -lt $end ] || fail "job $j did not end within ${WAIT_S}s: $(state "$j" | tr '\n' ' ')"
            sleep 0.5
        done
    done
}
exit_code() { scontrol show job -o "$1" | grep -o 'ExitCode=[0-9:]*' | cut -d= -f2; }

V=(validate --no-cache --num-events 7 --batch-size 2 --repeat 1 --configs ref:encoder:fp64,cpu:attention24:fp32)

# 1. the unsharded run, then the same plan through `ortqual slurm` in 4 shards
$ORTQUAL "${V[@]}" --outdir "$T/U" >"$T/u.log" 2>&1 || fail "unsharded run: $(tail -5 "$T/u.log")"
t1=$SECONDS
$ORTQUAL slurm --shards 4 --outdir "$T/S" --partition local --time 10:00 --json -- "${V[@]}" \
    >"$T/s.json" 2>"$T/s.err" || fail "ortqual slurm exited $?: $(cat "$T/s.err")"
A=$(json "$T/s.json" 'd["array_job_id"]')
M=$(json "$T/s.json" 'd["merge_job_id"]')
[[ "$A" =~ ^[0-9]+$ && "$M" =~ ^[0-9]+$ ]] || fail "job ids: $(cat "$T/s.json")"
wait_ended "$A" "$M"
last_end=$(scontrol show job -o "$A" | grep -o 'EndTime=[^ ]*' | cut -d= -f2 | sort | tail -1)
merge_start=$(scontrol show job -o "$M" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)
[[ ! "$merge_start" < "$last_end" ]] || fail "merge job $M started at $merge_start, before the array ended ($last_end)"
echo "4 shards and the merge ran in $((SECONDS - t1)) s"
[ "$(state "$A" | sort | uniq -c | awk '{print $1, $2}')" = "4 COMPLETED" ] || fail "shard tasks: $(state "$A" | tr '\n' ' ')"
[ "$(state "$M")" = COMPLETED ] && [ "$(exit_code "$M")" = "0:0" ] ||
    fail "merge job: $(state "$M") $(exit_code "$M"): $(cat "$T/S/slurm/merge-$M.out")"
grep -q "verdict: PASSED (1 passed, 0 failed, 0 skipped; reference " "$T/S/slurm/merge-$M.out" || fail "merge log: $(cat "$T/S/slurm/merge-$M.out")"
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/same_summary.py" "$T/U/summary.json" "$T/S/summary.json" ||
    fail "the merged SLURM run differs from the unsharded run"
[ "$(json "$T/S/summary.json" 'sorted((r["index"], r["slurm"]["array_job_id"], r["slurm"]["array_task_id"]) for r in d["shards"]["reported"])')" = \
  "[(0, '$A', '0'), (1, '$A', '1'), (2, '$A', '2'), (3, '$A', '3')]" ] ||
    fail "shards do not record their array tasks: $(json "$T/S/summary.json" 'd["shards"]["reported"]')"
for i in 0 1 2 3; do grep -q "shard $i of 4 done" "$T/S/slurm/shard-${A}_$i.out" || fail "log of task $i: $(cat "$T/S/slurm/shard-${A}_$i.out")"; done

# 2. by configuration, the last configuration hangs: its task is cancelled while it runs
K=(validate --num-events 4 --batch-size 2 --repeat 1 --ep-lib "hangep=$OQ_BINARY_DIR/tests/libhang_ep.so"
   --configs ref:encoder:fp64,cpu:attention24:fp32,hangep:attention24:fp32)
t2=$SECONDS
$ORTQUAL slurm --shards 2 --shard-by config --outdir "$T/K" --json -- "${K[@]}" >"$T/k.json" 2>"$T/k.err" ||
    fail "ortqual slurm (kill run) exited $?: $(cat "$T/k.err")"
A=$(json "$T/k.json" 'd["array_job_id"]')
M=$(json "$T/k.json" 'd["merge_job_id"]')
end=$((SECONDS + WAIT_S))
until [ "$(state "${A}_1")" = RUNNING ] && grep -qs "hangep:attention24:fp32 \.\.\." "$T/K/slurm/shard-${A}_1.out"; do
    [ $SECONDS -lt $end ] || fail "task ${A}_1 never ran its hanging configuration: $(state "${A}_1")"
    sleep 0.3
done
scancel "${A}_1"
wait_ended "$A" "$M"
echo "the kill run ended in $((SECONDS - t2)) s"
[ "$(state "${A}_1")" = CANCELLED ] || fail "task 1: $(state "${A}_1")"
[ "$(state "$M")" = FAILED ] && [ "$(exit_code "$M")" = "1:0" ] || fail "merge job after a kill: $(state "$M") $(exit_code "$M")"
# (scancel's SIGTERM reaches the shard, which passes it on and records where it stopped)
grep -qE "shard 1 of 2 interrupted: started on .* was interrupted by SIGTERM while hangep:attention24:fp32 ran \(0 of 2 batches done\); its summary was written at .* \(SLURM task ${A}_1, log $T/K/slurm/shard-${A}_1.out\)" \
    "$T/K/slurm/merge-$M.out" || fail "the merge does not name the killed shard: $(cat "$T/K/slurm/merge-$M.out")"
[ "$(json "$T/K/summary.json" '(d["verdict"], [(p["index"], p["state"]) for p in d["shards"]["problems"]], [c["status"] for c in d["configs"]])')" = \
  "('failed', [(1, 'interrupted')], ['reference', 'passed', 'failed'])" ] ||
    fail "merged summary after a kill: $(json "$T/K/summary.json" 'd["shards"]["problems"], [(c["name"], c["status"]) for c in d["configs"]]')"
# the documented recovery (scale-out.md), the same script for one task: the interrupted shard runs
# again (it was refused at once, "summary.json exists"); it hangs again here, so it is cancelled
# once its hanging configuration runs
A2=$(sbatch --parsable --array=1 "$T/K/slurm/shards.sbatch" | cut -d';' -f1)
end=$((SECONDS + WAIT_S))
until grep -qs "hangep:attention24:fp32 \.\.\." "$T/K/slurm/shard-${A2}_1.out"; do
    ! ended "$A2" || fail "the resubmitted shard ended: $(cat "$T/K/slurm/shard-${A2}_1.out")"
    [ $SECONDS -lt $end ] || fail "the resubmitted shard ${A2}_1 never ran: $(state "$A2")"
    sleep 0.3
done
scancel "$A2"
wait_ended "$A2"

# 3. the sbatch options in the scripts (no GPU here: written, not submitted), and refusals
$ORTQUAL slurm --shards 2 --outdir "$T/N" --no-submit --partition gpu --merge-partition cpu --merge-mem 4G --time 01:00:00 \
    --gpus-per-task 1 --cpus-per-task 4 --mem 8G --account hep --qos normal --sbatch-arg=--constraint=h200 \
    --job-name m1 -- "${V[@]}" >"$T/n.log" 2>&1 || fail "--no-submit: $(cat "$T/n.log")"
for line in --job-name=m1-shards --array=0-1 --partition=gpu --time=01:00:00 --gpus-per-task=1 --cpus-per-task=4 \
            --mem=8G --account=hep --qos=normal --constraint=h200 --ntasks=1 --export=ALL; do
    grep -qx -- "#SBATCH $line" "$T/N/slurm/shards.sbatch" || fail "shards.sbatch lacks '#SBATCH $line': $(cat "$T/N/slurm/shards.sbatch")"
done
grep -q -- '--shard "$SLURM_ARRAY_TASK_ID/2" --shard-by batch$' "$T/N/slurm/shards.sbatch" || fail "no task -> shard mapping"
grep -qx -- "#SBATCH --partition=cpu" "$T/N/slurm/merge.sbatch" && grep -qx -- "#SBATCH --mem=4G" "$T/N/slurm/merge.sbatch" &&
    ! grep -q -- "--gpus" "$T/N/slurm/merge.sbatch" ||
    fail "merge.sbatch: $(cat "$T/N/slurm/merge.sbatch")"
jobs_before=$(squeue -h | wc -l)
must 3 "sbatch .*shards.sbatch: .*(invalid partition|Invalid partition)" "$T/b.log" \
    $ORTQUAL slurm --shards 2 --outdir "$T/B" --partition nosuch -- "${V[@]}"
must 2 "belongs to slurm" "$T/b2.log" $ORTQUAL slurm --shards 2 --outdir "$T/B2" -- "${V[@]}" --outdir "$T/elsewhere"
must 2 "want '-- validate\|replay" "$T/b3.log" $ORTQUAL slurm --shards 2 --outdir "$T/B3" validate
# a value the scripts cannot take is refused before the prepare step, so the corrected command runs
must 2 "^ortqual slurm: --partition 'g 1': whitespace cannot go into an #SBATCH line$" "$T/b6.log" \
    $ORTQUAL slurm --shards 2 --outdir "$T/B6" --partition "g 1" --no-submit -- "${V[@]}"
must 2 "^ortqual slurm: --sbatch-arg: an empty value .want ARG.$" "$T/b6.log" \
    $ORTQUAL slurm --shards 2 --outdir "$T/B6" --sbatch-arg= --no-submit -- "${V[@]}"
[ ! -e "$T/B6" ] || fail "a refused slurm option left: $(ls -R "$T/B6")"
must 0 "prepared: 4 batches in 2 shards" "$T/b6.log" $ORTQUAL slurm --shards 2 --outdir "$T/B6" --partition g1 --no-submit -- "${V[@]}"
$PY -c "import numpy as np; m = np.zeros((2, 8), np.float32); m[0, :3] = 1; m[1, 2:5] = 1
np.savez('$T/left.npz', features=np.zeros((2, 8, 8), np.float32), mask=m)"
must 2 "nothing submitted" "$T/b4.log" $ORTQUAL slurm --shards 2 --outdir "$T/B4" -- validate --inputs "$T/left.npz"
must 2 "left.npz: .*event 1" "$T/b5.log" $ORTQUAL slurm --shards 1 --outdir "$T/B5" -- validate --inputs "$T/left.npz"
[ "$(squeue -h | wc -l)" = "$jobs_before" ] || fail "a refused submission left jobs: $(squeue)"
# values sbatch reads as numbers or times are refused before anything is written
must 2 "^ortqual slurm: --cpus-per-task '-3': want a positive integer$" "$T/b7.log" \
    $ORTQUAL slurm --shards 2 --outdir "$T/B7" --cpus-per-task -3 --no-submit -- "${V[@]}"
for bad in "--mem lots" "--merge-mem 1.5G" "--time 1h" "--time 1:2:3:4" "--gpus-per-task h100:" "--gpus-per-task 0"; do
    read -r opt value <<<"$bad"
    must 2 "^ortqual slurm: $opt '$value': want " "$T/b7.log" \
        $ORTQUAL slurm --shards 2 --outdir "$T/B7" "$opt" "$value" --no-submit -- "${V[@]}"
done
[ ! -e "$T/B7" ] || fail "a refused sbatch value left: $(ls -R "$T/B7")"
must 0 "prepared: " "$T/b7.log" $ORTQUAL slurm --shards 2 --outdir "$T/B7" --no-submit --time 1-12:30 --mem 512m \
    --merge-mem 2g --gpus-per-task h100:1,a100:2 --cpus-per-task 8 -- "${V[@]}"
grep -qx -- "#SBATCH --time=1-12:30" "$T/B7/slurm/shards.sbatch" || fail "shards.sbatch: $(cat "$T/B7/slurm/shards.sbatch")"

# 4. sbatch wrappers (--sbatch) that answer otherwise than `sbatch --parsable`
t4=$SECONDS
mkdir "$T/bin"
# a site wrapper that drops --parsable: the real sbatch's classic "Submitted batch job N"
cat >"$T/bin/sbatch-classic" <<'EOF'
#!/bin/bash
args=(); for a in "$@"; do [ "$a" = --parsable ] || args+=("$a"); done
exec sbatch "${args[@]}"
EOF
# the array goes to the real sbatch; the merge's answer holds no id
cat >"$T/bin/sbatch-noid" <<'EOF'
#!/bin/bash
case " $* " in *" --dependency="*) echo "queued, thanks"; exit 0 ;; esac
exec sbatch "$@"
EOF
# no id in the array's answer: a number that is not all digits is none
cat >"$T/bin/sbatch-42x" <<'EOF'
#!/bin/bash
echo "Submitted batch job 42x"
EOF
chmod +x "$T"/bin/sbatch-*
$ORTQUAL slurm --shards 2 --outdir "$T/C" --sbatch "$T/bin/sbatch-classic" --job-name classic --json -- "${V[@]}" \
    >"$T/c.json" 2>"$T/c.err" || fail "classic sbatch answer: exit $?: $(cat "$T/c.err")"
A=$(json "$T/c.json" 'd["array_job_id"]')
M=$(json "$T/c.json" 'd["merge_job_id"]')
scontrol show job -o "$A" | grep -q "JobName=classic-shards " && scontrol show job -o "$M" | grep -q "JobName=classic-merge " ||
    fail "classic sbatch answer: ids $A, $M: $(scontrol show job -o "$A" "$M")"
scancel "$A" "$M"
must 3 "^ortqual slurm: submitting the merge job failed \(array [0-9]+ cancelled\): $T/bin/sbatch-noid $T/NI/slurm/merge.sbatch exited 0 but printed no job id: 'queued, thanks'$" \
    "$T/ni.log" $ORTQUAL slurm --shards 2 --outdir "$T/NI" --sbatch "$T/bin/sbatch-noid" -- "${V[@]}"
A=$(grep -o 'array [0-9]* cancelled' "$T/ni.log" | cut -d' ' -f2)
wait_ended "$A"
[ "$(state "$A" | sort -u)" = CANCELLED ] || fail "array $A after a merge without an id: $(state "$A" | tr '\n' ' ')"
must 3 "^ortqual slurm: $T/bin/sbatch-42x $T/NX/slurm/shards.sbatch exited 0 but printed no job id: 'Submitted batch job 42x'" \
    "$T/nx.log" $ORTQUAL slurm --shards 2 --outdir "$T/NX" --sbatch "$T/bin/sbatch-42x" -- "${V[@]}"
# the command --no-submit prints, pasted into a shell, submits the scripts (an sbatch in front of
# the real one records its arguments); the outdir holds a quote and a '#', sbatch's own syntax
# in #SBATCH lines
Q="$T/q'4#5"
must 0 "submit with:" "$T/q.log" $ORTQUAL slurm --shards 1 --outdir "$Q" --no-submit -- "${V[@]}"
cat >"$T/bin/sbatch" <<'EOF'
#!/bin/bash
printf '%s\n' "$@" >>"$ARGS"
exec "$SBATCH" "$@"
EOF
chmod +x "$T/bin/sbatch"
real=$(command -v sbatch)
M=$(export PATH="$T/bin:$PATH" ARGS="$T/args" SBATCH="$real"; eval "$(grep -A1 '^submit with:$' "$T/q.log" | tail -1)") ||
    fail "the printed submit command fails in a shell: $(cat "$T/q.log")"
M=${M##* }
A=$(sed -n 's/^--dependency=afterany://p' "$T/args")
[ "$(sed 3d "$T/args")" = "--parsable
$Q/slurm/shards.sbatch
$Q/slurm/merge.sbatch" ] && [[ "$A" =~ ^[0-9]+$ && "$M" =~ ^[0-9]+$ ]] ||
    fail "the printed submit command gave sbatch: $(cat "$T/args"), then '$M'"
wait_ended "$A" "$M"
[ -s "$Q/slurm/shard-${A}_0.out" ] && grep -q "verdict: PASSED" "$Q/slurm/merge-$M.out" ||
    fail "outdir $Q: $(state "$A") $(state "$M"): $(ls "$Q/slurm")"
echo "the sbatch wrappers and the quoted outdir took $((SECONDS - t4)) s"

# 5. the second-signal rule (docs/reliability.md "Interruption"): the prepare step is held where
# a signal does not end it (libslow_rename.so with OQ_SLOW_RENAME_DEAF, as it moves the plan's
# description into place: no temporary is open then). The first SIGINT is passed on to it and
# slurm keeps its 5 s grace; the second kills the step's group and ends slurm by the signal at
# once: 130, nothing submitted, nothing left running, no temporary in the outdir.
PRE="$OQ_BINARY_DIR/tests/libslow_rename.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
jobs_before=$(squeue -h | wc -l)
set -m # a background job of a script ignores SIGINT otherwise (and so would ortqual)
OQ_SLOW_RENAME=/plan_description.json OQ_SLOW_RENAME_DEAF=1 OQ_SLOW_RENAME_SECONDS=120 \
    OQ_SLOW_RENAME_MARK="$T/twice.mark" LD_PRELOAD="$PRE" $ORTQUAL slurm --shards 2 --outdir "$T/I" -- "${V[@]}" \
    >"$T/i.log" 2>&1 &
pid=$!
set +m
end=$((SECONDS + WAIT_S))
until [ -e "$T/twice.mark" ]; do
    [ $SECONDS -lt $end ] || { kill -9 $pid; fail "the prepare step was never held: $(cat "$T/i.log")"; }
    sleep 0.1
done
step=$(pgrep -P $pid) || fail "slurm has no prepare step: $(cat "$T/i.log")"
kill -INT $pid
sleep 0.5
kill -0 $pid 2>/dev/null && kill -0 "$step" 2>/dev/null ||
    fail "slurm or its prepare step ended on the first SIGINT: the case proves nothing: $(tail -3 "$T/i.log")"
second=$(date +%s%N)
kill -INT $pid
rc=0
wait $pid || rc=$?
ms=$((($(date +%s%N) - second) / 1000000))
[ $rc -eq 130 ] || fail "slurm, second SIGINT: exit $rc, expected 130: $(tail -3 "$T/i.log")"
# (it ended 4.5 s after the second, 5 s after the first: the grace)
[ $ms -lt 2500 ] || fail "slurm ended ${ms} ms after the second SIGINT: it waited for the grace (5 s)"
group_gone "$step" 60 || fail "the prepare step's group outlived slurm"
! find "$T/I" -name '*.tmp.*' | grep . || fail "a temporary stayed in the outdir"
[ "$(squeue -h | wc -l)" = "$jobs_before" ] || fail "an interrupted slurm submitted: $(squeue)"
[ ! -e "$T/I/slurm" ] || fail "an interrupted slurm wrote its scripts: $(ls "$T/I/slurm")"
echo "slurm ended ${ms} ms after the second SIGINT"
echo "slurm e2e: $((SECONDS - t0)) s"
