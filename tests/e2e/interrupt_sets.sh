#!/usr/bin/env bash
# A signal that ends a command while it puts its set of outputs into place leaves the whole set
# or none of it, as a failed write does (docs/reliability.md, "Interruption"): bench's SIGINT
# between the rename of summary.json and that of summary.csv left the new summary.json beside the
# previous run's summary.csv and report.html (--force); one during a --profile-runs sweep left
# the profiles of a run without a summary, and the same command rerun was refused. The placed
# files are held where the signal handler removes them until the set is complete.
# libslow_rename.so holds the command as it puts the file ending in SUFFIX into place.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
PY=/usr/bin/python3
PRE="$OQ_BINARY_DIR/tests/libslow_rename.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
TINY=(--num-heads 2 --head-dim 8 --iters 1 --warmup 0 --variants cpu:attention24:fp32 --quiet)
cd "$T"

# held SIG SUFFIX ARGS...: ortqual ARGS, held as it puts the file ending in SUFFIX into place,
# gets SIG; its exit status in rc (-1: never held)
held() {
    local sig=$1 suffix=$2 pid
    shift 2
    rm -f mark
    set -m # a background job of a script ignores SIGINT otherwise (and so would ortqual)
    OQ_SLOW_RENAME=$suffix OQ_SLOW_RENAME_MARK="$T/mark" LD_PRELOAD="$PRE" $Q "$@" >held.log 2>&1 &
    pid=$!
    set +m
    for _ in $(seq 600); do [ -e mark ] && break; sleep 0.1; done
    rc=-1
    if [ ! -e mark ]; then
        kill -9 $pid
        bad "$*: never held at $suffix: $(tail -3 held.log)"
        return
    fi
    kill -"$sig" $pid
    rc=0
    wait $pid || rc=$?
}

# left DIR NAME...: those of the NAMEs that are in DIR
left() {
    local dir=$1 n out=""
    shift
    for n in "$@"; do [ -e "$dir/$n" ] && out="$out $n"; done
    echo "${out# }"
}

# 1. bench --force over an earlier run, SIGINT once summary.json is in place: neither run's set
"$Q" bench "${TINY[@]}" --seq-lens 8 --outdir s >s.log 2>&1 || bad "bench: $(tail -3 s.log)"
held INT /summary.csv bench "${TINY[@]}" --seq-lens 16 --force --outdir s
l=$(left s summary.json summary.csv report.html)
if [ "$rc" -ne 130 ]; then bad "bench --force, SIGINT between the summaries: exit $rc: $(tail -3 held.log)"
elif [ -n "$l" ]; then bad "bench --force, SIGINT between the summaries: left $l"
else ok "bench --force, SIGINT between the summaries: 130, no summary of either run"; fi
expect 0 "wrote" "$Q" bench "${TINY[@]}" --seq-lens 8 --outdir s # and the folder takes a run again
held TERM /summary.csv bench "${TINY[@]}" --seq-lens 8 --outdir s2
l=$(left s2 summary.json summary.csv report.html)
[ "$rc" -eq 143 ] && [ -z "$l" ] && ok "bench, SIGTERM between the summaries: 143, none left" ||
    bad "bench, SIGTERM between the summaries: exit $rc, left '$l'"

# 2. bench --profile-runs, SIGINT after its profiles were written: they go, and profiles/ it made
held INT /summary.json bench "${TINY[@]}" --seq-lens 8,16 --modes masked --profile-runs 1 --outdir pr
l=$(find pr -name 'profile_*' 2>/dev/null)
if [ "$rc" -ne 130 ]; then bad "bench --profile-runs, SIGINT: exit $rc: $(tail -3 held.log)"
elif [ -n "$l" ] || [ -e pr/profiles ]; then bad "bench --profile-runs, SIGINT: left profiles: $l"
else ok "bench --profile-runs, SIGINT: 130, its profiles and profiles/ removed"; fi
expect 0 "wrote" "$Q" bench "${TINY[@]}" --seq-lens 8,16 --modes masked --profile-runs 1 --outdir pr
[ "$(find pr/profiles -name 'profile_*.json' | wc -l)" -eq 2 ] && ok "the rerun's two profiles" ||
    bad "the rerun's profiles: $(ls pr/profiles)"

# 2b. ... and SIGINT during the profiled runs: ORT made its profile (its own name) with the
#     session and writes it at the end; it was left, empty, with profiles/
set -m
"$Q" bench "${TINY[@]}" --seq-lens 256 --profile-runs 100000 --outdir pr2 >pr2.log 2>&1 &
pid=$!
set +m
for _ in $(seq 600); do [ -n "$(find pr2/profiles -name 'profile_*.json' 2>/dev/null)" ] && break; sleep 0.1; done
if [ -z "$(find pr2/profiles -name 'profile_*.json' 2>/dev/null)" ]; then kill -9 $pid; bad "bench --profile-runs: no profile seen"
else
    sleep 0.5
    kill -INT $pid
    rc=0
    wait $pid || rc=$?
    l=$(find pr2 -name 'profile*' 2>/dev/null)
    [ "$rc" -eq 130 ] && [ -z "$l" ] && ok "bench --profile-runs, SIGINT during the profiled runs: 130, ORT's profile and profiles/ removed" ||
        bad "bench --profile-runs, SIGINT during the profiled runs: exit $rc, left $l: $(tail -2 pr2.log)"
fi

# 2c. ... and SIGINT while the profiled session is made (seconds for a big model; libslow_session.so
#     makes it take 60 s once ORT created the profile): the signals waited for the whole making,
#     the command ended only after it; now at once, ORT's profile and the folder it went to removed
cp "$OQ_BINARY_DIR/tests/libslow_session.so" "$T/libonnxruntime.so"
set -m
SLOW_ORT_REAL="$OQ_ORT_LIB" "$Q" bench "${TINY[@]}" --ort-lib "$T/libonnxruntime.so" --seq-lens 8 --profile-runs 1 \
    --outdir pr3 >pr3.log 2>&1 &
pid=$!
set +m
for _ in $(seq 600); do [ -n "$(find pr3 -name 'profile_*.json' 2>/dev/null)" ] && break; sleep 0.1; done
if [ -z "$(find pr3 -name 'profile_*.json' 2>/dev/null)" ]; then kill -9 $pid; bad "bench --profile-runs, slow session: no profile seen: $(tail -2 pr3.log)"
else
    kill -INT $pid
    for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done # 30 s of the 60
    if kill -0 $pid 2>/dev/null; then
        kill -9 $pid
        wait $pid
        bad "bench --profile-runs, SIGINT while the session is made: still running 30 s later"
    else
        rc=0
        wait $pid || rc=$?
        l=$(find pr3 -name '*profile*' 2>/dev/null)
        [ "$rc" -eq 130 ] && [ -z "$l" ] && ok "bench --profile-runs, SIGINT while the session is made: 130 at once, ORT's profile and its folder removed" ||
            bad "bench --profile-runs, SIGINT while the session is made: exit $rc, left $l: $(tail -2 pr3.log)"
    fi
fi

# 2d. a profiled session that fails after ORT created its profile: no row names the profile, so
#     none stays in OUTDIR/profiles/ (it was moved there and kept)
SLOW_ORT_REAL="$OQ_ORT_LIB" SLOW_ORT_SECONDS=0 SLOW_ORT_FAIL=1 "$Q" bench "${TINY[@]}" --ort-lib "$T/libonnxruntime.so" \
    --seq-lens 8 --profile-runs 1 --outdir pr4 >pr4.log 2>&1 || true
l=$(find pr4 -name 'profile_*' 2>/dev/null)
grep -rq "SLOW_ORT_FAIL" pr4.log pr4 && [ -z "$l" ] && ok "bench --profile-runs, the profiled session fails: no profile left" ||
    bad "bench --profile-runs, the profiled session fails: left $l: $(tail -2 pr4.log)"

# 2e. SIGTERM (a batch system's time limit) or SIGINT in the middle of the sweep's rows: the
#     folder's lock goes with the rest (a SIGTERM'd bench left OUTDIR/.ortqual.lock behind), no
#     temporary, profile or summary stays, and the same command run again in that folder writes
for sig in TERM INT; do
    d=sig$sig
    set -m
    "$Q" bench "${TINY[@]}" --seq-lens 64,128,256,512,1024,2048,4096 --iters 50 --profile-runs 1 --outdir $d \
        >$d.log 2>&1 &
    pid=$!
    set +m
    for _ in $(seq 600); do [ -n "$(find $d/profiles -name 'profile_*.json' 2>/dev/null)" ] && break; sleep 0.05; done
    if [ ! -e $d/.ortqual.lock ] || ! kill -$sig $pid 2>/dev/null; then
        kill -9 $pid 2>/dev/null
        bad "bench, SIG$sig mid-run: never caught running with its lock: $(tail -2 $d.log)"
        continue
    fi
    rc=0
    wait $pid || rc=$?
    l=$(ls -A $d 2>/dev/null | tr '\n' ' ')
    want=$((128 + $(kill -l $sig)))
    [ "$rc" -eq $want ] && [ -z "$l" ] && ok "bench, SIG$sig mid-run: $rc, nothing left (the lock included)" ||
        bad "bench, SIG$sig mid-run: exit $rc (want $want), left: $l"
    expect 0 "wrote" "$Q" bench "${TINY[@]}" --seq-lens 8 --outdir $d # the folder takes the same command again
done

# 3. merge over an earlier merge, SIGINT as its summary.json goes into place (its validate.csv is
#    there): the earlier merge's summary and report went first
V=(validate --num-events 4 --batch-size 2 --repeat 1 --no-cache --no-plots --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir m)
{ "$Q" "${V[@]}" --prepare-shards 2 && "$Q" "${V[@]}" --shard 0/2 && "$Q" "${V[@]}" --shard 1/2 &&
    "$Q" merge --no-plots m; } >m.log 2>&1 || bad "the shards and their merge: $(tail -3 m.log)"
held INT /summary.json merge --no-plots m
l=$(left m summary.json report.html)
if [ "$rc" -ne 130 ]; then bad "merge, SIGINT at its summary: exit $rc: $(tail -3 held.log)"
elif [ -n "$l" ]; then bad "merge, SIGINT at its summary: the earlier merge's $l beside this one's validate.csv"
else ok "merge, SIGINT at its summary: 130, no earlier merge's summary beside its tables"; fi

# 4. plot over earlier figures, SIGINT as its last figure goes into place (drawn in a child,
#    which the parent's end sends SIGTERM): none of the set stays, new or earlier
"$Q" merge --no-plots m >/dev/null 2>&1
mapfile -t figs < <("$Q" plot m/summary.json --out figs 2>figs.log) # the paths, in the order written
if [ "${#figs[@]}" -lt 2 ]; then bad "plot: no figure set to interrupt: ${figs[*]} $(tail -3 figs.log)"
else
    held INT "/$(basename "${figs[-1]}")" plot m/summary.json --out figs
    for _ in $(seq 50); do # the child ends by the SIGTERM of its parent's end
        l=$(find figs -type f ! -name ".ortqual*.lock") # the lock file may stay (the kernel dropped the lock)
        [ -z "$l" ] && break
        sleep 0.1
    done
    [ "$rc" -eq 130 ] && [ -z "$l" ] && ok "plot, SIGINT at its last figure: 130, none of the set left" ||
        bad "plot, SIGINT at its last figure: exit $rc, left $l"
fi
# 5. validate --no-isolate draws its figures in its own process: SIGINT as its last figure goes
#    into place ends it (its default handler) and none of the set stays, nor plots/, which it made
NI=(validate --num-events 4 --batch-size 2 --repeat 1 --no-cache --progress never --no-isolate
    --configs ref:encoder:fp64,cpu:attention24:fp32)
"$Q" "${NI[@]}" --outdir ni >ni.log 2>&1 || bad "validate --no-isolate: $(tail -3 ni.log)"
last=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["plots"][-1])' ni/summary.json 2>/dev/null)
if [ -z "$last" ] || [ "$(find ni/plots -type f | wc -l)" -lt 2 ]; then bad "validate --no-isolate: no figure set: $last"
else
    held INT "/$(basename "$last")" "${NI[@]}" --outdir ni2
    l=$(find ni2/plots 2>/dev/null)
    [ "$rc" -eq 130 ] && [ -z "$l" ] && ok "validate --no-isolate, SIGINT at its last figure: 130, no figure and no plots/ left" ||
        bad "validate --no-isolate, SIGINT at its last figure: exit $rc, left $l"
fi
report
