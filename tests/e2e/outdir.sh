#!/usr/bin/env bash
# An output folder holds one run (docs/usage.md, --outdir): a second run into a folder that a
# run is writing is refused at once, naming the run's pid (exit 2), and leaves it as it was;
# --force after a run killed by SIGKILL clears that run's batches; --force removes an earlier
# run's JUnit XML (a user's other files stay) and is refused, before it touches the earlier run,
# when that run's figures cannot be removed (a read-only plots/); too few file descriptors
# (ulimit -n 4) is said as such (EMFILE, exit 3) before anything is made; a plots/ planted as a
# link is refused by validate --force and never written or cleared through by merge; a FIFO or a
# folder at report.html/validate.csv is refused before the work.
# The running run hangs in an EP library (libhang_ep.so, as interrupt.sh); the read-only plots/
# is a bind mount in a private mount namespace (as exit_codes.sh).
set -euo pipefail
. "${OQ_SOURCE_DIR:?}/tests/e2e/lib/mountns.sh"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=${ORTQUAL:?}
cd "$T"
trap 'cd /; umount "$T/ro/plots" 2>/dev/null; rm -rf "$T"' EXIT
V=(validate --num-events 4 --batch-size 2 --repeat 1 --progress never --configs ref:encoder:fp64,cpu:attention24:fp32)
# every name, and each file's size and time (a folder's time moves with a probe or lock file made and removed)
listing() { (cd "$1" && find . -printf '%p %y %s %TT\n' | sed 's/ d [0-9]* [0-9:.]*$/ d/' | LC_ALL=C sort); }

# ---- a run holding the folder --------------------------------------------------------------
$Q validate --num-events 8 --batch-size 2 --repeat 1 --no-plots --save-outputs \
    --ep-lib "hangep=$OQ_BINARY_DIR/tests/libhang_ep.so" \
    --configs ref:encoder:fp64,hangep:attention24:fp32 --outdir D >a.log 2>&1 &
pid=$!
for _ in $(seq 600); do
    grep -q "hangep:attention24:fp32 \.\.\." a.log && break
    sleep 0.1
done
grep -q "hangep:attention24:fp32 \.\.\." a.log || { kill -9 $pid; fail "the hanging run never started: $(cat a.log)"; }
before=$(listing D)
for force in "" --force; do
    must 2 "^ortqual validate: D: in use by another ortqual run \(pid $pid, holding D/\.ortqual\.lock\)" b.log \
        $Q "${V[@]}" --outdir D $force
    [ "$(wc -l <b.log)" -eq 1 ] || fail "validate $force into a held folder: more than one line: $(cat b.log)"
done
must 2 "^ortqual merge: D: in use by another ortqual run \(pid $pid" m.log $Q merge D
must 2 "^ortqual report: D: in use by another ortqual run \(pid $pid" r.log $Q report D
[ "$(listing D)" = "$before" ] || fail "refused runs changed the held folder: $(diff <(echo "$before") <(listing D))"

# ---- killed: the kernel drops its lock; --force clears its files ---------------------------
kill -9 $pid
wait $pid || true
for _ in $(seq 100); do pgrep -f "hangep=$OQ_BINARY_DIR" >/dev/null || break; sleep 0.1; done
[ -d D/.work ] && [ -e D/inputs_003.npz ] && ls D/outputs_*.npz >/dev/null 2>&1 ||
    fail "the killed run left no work folder, batches or saved outputs to clear: $(ls -A D)"
must 0 "verdict: PASSED" c.log $Q validate --num-events 2 --batch-size 2 --repeat 1 --progress never --no-plots \
    --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir D --force
left=$(cd D && ls -A | grep -Ev '^(summary\.json|report\.html|validate\.csv|weights\.npz|inputs_000\.npz|encoder_attention24_fp32\.onnx)$' || true)
[ -z "$left" ] || fail "--force after a killed run kept its files: $left"
must 0 "verdict: PASSED" c2.log $Q "${V[@]}" --outdir D --force # the finished run released it

# ---- --force: the earlier run's JUnit goes, a user's XML stays --------------------------------
must 0 "verdict: PASSED" j.log $Q "${V[@]}" --outdir J --junit J/ci.xml
echo '<?xml version="1.0"?><notes/>' >J/notes.xml
must 0 "verdict: PASSED" j2.log $Q "${V[@]}" --outdir J --force
[ ! -e J/ci.xml ] || fail "--force kept the earlier run's JUnit J/ci.xml"
[ -e J/notes.xml ] || fail "--force removed the user's J/notes.xml"

# ---- --force where the earlier run's figures cannot go: refused, that run untouched -----------
must 0 "verdict: PASSED" ro.log $Q "${V[@]}" --outdir ro
mount --bind ro/plots ro/plots && mount -o remount,bind,ro ro/plots || fail "cannot make ro/plots read-only"
before=$(listing ro)
must 3 "^ortqual validate: ro/plots: the earlier run's figures cannot be removed: Read-only file system" ro2.log \
    $Q "${V[@]}" --outdir ro --force
[ "$(listing ro)" = "$before" ] || fail "a refused --force changed the earlier run: $(diff <(echo "$before") <(listing ro))"

# ---- links and nodes planted where a run writes: refused before the work, nothing outside -------
mkdir elsewhere && echo keep >elsewhere/holiday.png && echo keep >elsewhere/logo.svg
must 0 "verdict: PASSED" l.log $Q "${V[@]}" --outdir L
rm -rf L/plots && ln -s "$T/elsewhere" L/plots
must 2 "^ortqual validate: L/plots: a symbolic link, where the run draws its figures" l2.log $Q "${V[@]}" --outdir L --force
[ "$(ls elsewhere)" = "$(printf 'holiday.png\nlogo.svg')" ] || fail "validate --force through a linked plots/: $(ls elsewhere)"
# merge has no --force to check: its stale figures are removed below the folder, never through the link
must 0 "" p.log $Q "${V[@]}" --outdir S --prepare-shards 2
for i in 0 1; do must 0 "verdict: PASSED" s$i.log $Q "${V[@]}" --outdir S --shard $i/2; done
ln -s "$T/elsewhere" S/plots
must 0 "plots: not drawn: S/plots" m2.log $Q merge S
[ "$(ls elsewhere)" = "$(printf 'holiday.png\nlogo.svg')" ] || fail "merge wrote or removed through a linked plots/: $(ls elsewhere)"
mkdir FF && mkfifo FF/report.html && mkdir FF/validate.csv
must 2 "^ortqual validate: FF/validate.csv: is a directory; results are written to regular files only" ff.log \
    $Q "${V[@]}" --outdir FF --force
rmdir FF/validate.csv
must 2 "^ortqual validate: FF/report.html: is a FIFO \(named pipe\); results are written to regular files only" ff2.log \
    $Q "${V[@]}" --outdir FF --force
[ -p FF/report.html ] && [ "$(ls -A FF)" = report.html ] || fail "a refused run into FF left: $(ls -A FF)"

# ---- no descriptors left ------------------------------------------------------------------
rc=0
# (descriptors the shell inherited closed first: ctest's would take the loader's last one)
(for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -le 2 ] || eval "exec $fd>&-"; done
 ulimit -n 4 && exec $Q "${V[@]}" --outdir F) >f.log 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "ulimit -n 4: exit $rc, expected 3: $(cat f.log)"
grep -q "^ortqual validate: too few file descriptors (EMFILE): the limit of open files is 4" f.log ||
    fail "ulimit -n 4: $(cat f.log)"
[ ! -e F ] || fail "ulimit -n 4 left $(ls -A F)"
echo "ok"
