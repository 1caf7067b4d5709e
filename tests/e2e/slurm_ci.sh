#!/usr/bin/env bash
# `ortqual slurm` and `merge` as a CI pipeline uses them, without a cluster: the written sbatch
# scripts are run by hand (SLURM_ARRAY_TASK_ID=I bash shards.sbatch), as SLURM runs them.
#   1. validate's --junit goes to the merge job only: a lost task gives a failing JUnit, never
#      the green file of the shard that ran last; --allow-skip and --no-plots go to the merge too;
#   2. `slurm --force` prepares again (for the prepare step only);
#   3. SIGTERM to slurm while it prepares is passed on: the prepare step cleans up, exit 143;
#   4. the outdir limit is the one validate takes, and its refusal gives the length and the limit;
#   5. SIGTERM to merge removes its work files (shards/.merge/) and its lock;
#   6. a merge refused by the lock says to wait, not to give another --outdir;
#   7. a refused validate or merge replaces a green --junit file with one error case.
set -euo pipefail
t0=$SECONDS
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
# junit FILE: "tests failures errors" of its <testsuites>
junit() { sed -n 's/.*<testsuites [^>]*tests="\([0-9]*\)" failures="\([0-9]*\)" errors="\([0-9]*\)".*/\1 \2 \3/p' "$1"; }
V=(validate --no-cache --num-events 6 --batch-size 2 --repeat 1 --threads 1 --configs ref:encoder:fp64,cuda:attention24:fp16)

# 1. --junit, --allow-skip and --no-plots given after '--' (CUDA is skipped on this host)
must 0 "prepared: 3 batches in 2 shards" "$T/a.log" \
    $Q slurm --shards 2 --outdir "$T/A" --no-submit -- "${V[@]}" --allow-skip --junit "$T/j.xml" --no-plots
! grep -q -- "--junit" "$T/A/slurm/shards.sbatch" || fail "a shard writes the JUnit: $(tail -1 "$T/A/slurm/shards.sbatch")"
grep -q -- " merge '--allow-skip' '--no-plots' '--junit' '$T/j.xml' '$T/A'$" "$T/A/slurm/merge.sbatch" ||
    fail "merge.sbatch: $(tail -1 "$T/A/slurm/merge.sbatch")"
SLURM_ARRAY_TASK_ID=0 bash "$T/A/slurm/shards.sbatch" >"$T/t0.log" 2>&1 || fail "task 0: $(tail -3 "$T/t0.log")"
# task 1 is lost: the merge fails, and so does the JUnit
must 1 "verdict: FAILED" "$T/m1.log" bash "$T/A/slurm/merge.sbatch"
read -r tests failures errors <<<"$(junit "$T/j.xml")"
[ $((failures + errors)) -gt 0 ] || fail "a lost task left a green JUnit: $(head -2 "$T/j.xml")"
SLURM_ARRAY_TASK_ID=1 bash "$T/A/slurm/shards.sbatch" >"$T/t1.log" 2>&1 || fail "task 1: $(tail -3 "$T/t1.log")"
# every task ran: the merge takes --allow-skip as the unsharded run does (exit 0)
must 0 "verdict: NOT TESTED" "$T/m2.log" bash "$T/A/slurm/merge.sbatch"
[ ! -d "$T/A/plots" ] || fail "the merge drew plots/ although --no-plots was given"
grep -q "<skipped" "$T/j.xml" && [ "$(junit "$T/j.xml" | cut -d' ' -f2-)" = "0 0" ] || fail "JUnit after the merge: $(cat "$T/j.xml")"
must 2 "--junit after '--' wants a FILE" "$T/a2.log" $Q slurm --shards 2 --outdir "$T/A2" --no-submit -- "${V[@]}" --junit
must 2 "--junit $T/A2/summary.json" "$T/a2.log" \
    $Q slurm --shards 2 --outdir "$T/A2" --no-submit -- "${V[@]}" --junit="$T/A2/summary.json"
[ ! -e "$T/A2" ] || fail "a refused --junit prepared: $(ls -A "$T/A2")"
# QA round 7 #6: the JUnit inside the relative DIR slurm makes, as validate takes it (it was
# refused: "folder 'A3': No such file or directory", against the absolute DIR)
(cd "$T" && must 0 "prepared: 3 batches in 2 shards" "$T/a3.log" \
    $Q slurm --shards 2 --outdir A3 --no-submit -- "${V[@]}" --allow-skip --junit A3/junit.xml)
grep -q -- " '--junit' 'A3/junit.xml' '$T/A3'$" "$T/A3/slurm/merge.sbatch" ||
    fail "merge.sbatch with --junit A3/junit.xml: $(tail -1 "$T/A3/slurm/merge.sbatch")"

echo "$((SECONDS - t0)) s"
# 2. a second slurm into a prepared DIR says to use --force, and slurm --force works
must 2 "use --force to prepare them again" "$T/f.log" $Q slurm --shards 2 --outdir "$T/A" --no-submit -- "${V[@]}"
must 0 "prepared: 3 batches in 2 shards" "$T/f.log" $Q slurm --shards 2 --outdir "$T/A" --no-submit --force -- "${V[@]}"
! grep -q -- "--force" "$T/A/slurm/shards.sbatch" || fail "slurm --force went to the shards: $(tail -1 "$T/A/slurm/shards.sbatch")"

echo "$((SECONDS - t0)) s"
# 3. SIGTERM while the prepare step writes its batches
P=(validate --no-cache --num-events 400000 --batch-size 2 --width 16 --max-len 32 --threads 1
   --configs ref:encoder:fp64,cpu:attention24:fp32)
$Q slurm --shards 4 --outdir "$T/P" --no-submit -- "${P[@]}" >"$T/p.log" 2>&1 &
pid=$!
for _ in $(seq 300); do compgen -G "$T/P/inputs_*.npz" >/dev/null && break; sleep 0.05; done
compgen -G "$T/P/inputs_*.npz" >/dev/null || { kill "$pid"; fail "the prepare step wrote no batch: $(cat "$T/p.log")"; }
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 143 ] || fail "slurm after SIGTERM: exit $rc: $(tail -3 "$T/p.log")"
grep -q "ortqual slurm: interrupted by signal 15 (Terminated), passed on to the prepare step" "$T/p.log" ||
    fail "no message: $(cat "$T/p.log")"
[ "$(ls -A "$T/P")" = error.json ] || fail "a SIGTERM'd prepare left: $(ls -A "$T/P" | grep -v '^inputs_' ; ls "$T/P" | grep -c inputs_)"

echo "$((SECONDS - t0)) s"
# 4. the outdir limit is validate's (OQ_OUTDIR_MAX, 3775 bytes with Linux's PATH_MAX)
long() { # long N: a folder name of N bytes under $T
    local p=$T/l
    while [ ${#p} -lt $(($1 - 201)) ]; do p=$p/$(printf 'd%.0s' $(seq 199)); done
    p=$p/$(printf 'e%.0s' $(seq $(($1 - ${#p} - 1))))
    echo "$p"
}
L=$(long 3208)
[ ${#L} = 3208 ] || fail "long: ${#L}"
mkdir -p "$(dirname "$L")"
must 0 "prepared: " "$T/l.log" $Q slurm --shards 2 --outdir "$L" --no-submit -- "${V[@]}"
L=$(long 3776)
# (a message this long shows the path's middle as "...")
must 2 "^ortqual slurm: $T/l/d.*e: path too long: 3776 bytes \(at most 3775\)$" "$T/l.log" \
    $Q slurm --shards 2 --outdir "$L" --no-submit -- "${V[@]}"

echo "$((SECONDS - t0)) s"
# 5. SIGTERM to a merge while it works: stopped once its work folder exists, then terminated
C=(--no-cache --num-events 600 --batch-size 1 --repeat 1 --warmup 0 --threads 1 --width 16 --max-len 16 --progress never
   --no-plots --configs ref:encoder:fp64,cpu:attention24:fp32)
$Q validate "${C[@]}" --outdir "$T/M" --prepare-shards 2 >"$T/mp.log" 2>&1 || fail "prepare: $(tail -3 "$T/mp.log")"
for i in 0 1; do $Q validate "${C[@]}" --outdir "$T/M" --shard $i/2 >"$T/ms.log" 2>&1 || fail "shard $i: $(tail -3 "$T/ms.log")"; done
caught=0
for _ in $(seq 20); do
    $Q merge "$T/M" --no-plots >"$T/mm.log" 2>&1 &
    pid=$!
    until [ -d "$T/M/shards/.merge" ] || ! kill -0 "$pid" 2>/dev/null; do :; done
    kill -STOP "$pid" 2>/dev/null || true
    if [ -d "$T/M/shards/.merge" ] && [ -e "$T/M/.ortqual.lock" ]; then
        kill -TERM "$pid"
        kill -CONT "$pid"
        caught=1
    else
        kill -CONT "$pid" 2>/dev/null || true
    fi
    rc=0
    wait "$pid" || rc=$?
    [ $caught = 1 ] && break
done
[ $caught = 1 ] || fail "20 merges ended before their work folder was seen"
[ "$rc" = 143 ] || fail "merge after SIGTERM: exit $rc: $(tail -3 "$T/mm.log")"
[ ! -e "$T/M/shards/.merge" ] && [ ! -e "$T/M/.ortqual.lock" ] ||
    fail "a SIGTERM'd merge left: $(ls -d "$T/M/.ortqual.lock" "$T/M/shards/.merge" 2>&1)"

echo "$((SECONDS - t0)) s"
# 6. a merge refused by the folder's lock: wait for the holder, merge has no --outdir
(exec 9>"$T/M/.ortqual.lock" && flock 9 && exec sleep 30) >/dev/null 2>&1 & # one process, holding it
holder=$!
for _ in $(seq 100); do [ -e "$T/M/.ortqual.lock" ] && break; sleep 0.05; done
sleep 0.2
must 2 "^ortqual merge: $T/M: in use by another ortqual run \(holding $T/M/.ortqual.lock\): wait for it to end$" \
    "$T/ml.log" $Q merge "$T/M" --junit "$T/mj.xml"
[ "$(junit "$T/mj.xml")" = "1 0 1" ] && grep -q "in use by another ortqual run" "$T/mj.xml" ||
    fail "JUnit of a merge refused by the lock: $(cat "$T/mj.xml" 2>&1)"
kill "$holder"
wait "$holder" 2>/dev/null || true

echo "$((SECONDS - t0)) s"
# 7. a refused rerun replaces the earlier run's green JUnit
G=(validate --no-cache --num-events 4 --batch-size 2 --repeat 1 --threads 1 --no-plots --configs ref:encoder:fp64,cpu:attention24:fp32)
must 0 "verdict: PASSED" "$T/g.log" $Q "${G[@]}" --outdir "$T/G" --junit "$T/g.xml"
[ "$(junit "$T/g.xml" | cut -d' ' -f2-)" = "0 0" ] || fail "run 1's JUnit: $(head -2 "$T/g.xml")"
must 2 "summary.json" "$T/g2.log" $Q "${G[@]}" --outdir "$T/G" --junit "$T/g.xml"
[ "$(junit "$T/g.xml")" = "1 0 1" ] && grep -q "summary.json" "$T/g.xml" || fail "a refused validate left: $(cat "$T/g.xml")"
must 0 "verdict: PASSED" "$T/g3.log" $Q "${G[@]}" --outdir "$T/G2" --junit "$T/g.xml"
must 2 "not a sharded|plan.json" "$T/g4.log" $Q merge "$T/G" --junit "$T/g.xml"
[ "$(junit "$T/g.xml")" = "1 0 1" ] || fail "a refused merge left: $(cat "$T/g.xml")"
echo "slurm_ci: ok"
