#!/usr/bin/env bash
# A signal while `validate --prepare-shards` writes its plan (docs/reliability.md "Interruption"):
# it used to finish the plan and exit 143, a whole plan beside an interrupted exit. Now a signal
# before the plan is published leaves no plan (its batches, description and batch list removed,
# error.json saying so) and exits 128 + N; one that comes as plan.json is put into place finds it
# whole: exit 0, the plan printed, and the signal said with "the plan stands".
# libslow_rename.so holds the step as it moves the file ending in SUFFIX into place.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PRE="$OQ_BINARY_DIR/tests/libslow_rename.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
V=(validate --no-cache --num-events 4 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32)

# held SIG SUFFIX DIR: the prepare step into DIR, held at SUFFIX, gets SIG; its exit status in rc
held() {
    local sig=$1 suffix=$2 dir=$3 pid
    rm -f "$T/mark"
    set -m # a background job of a script ignores SIGINT otherwise (and so would ortqual)
    OQ_SLOW_RENAME=$suffix OQ_SLOW_RENAME_MARK="$T/mark" LD_PRELOAD="$PRE" $ORTQUAL "${V[@]}" --prepare-shards 2 --outdir "$dir" \
        >"$dir.log" 2>&1 &
    pid=$!
    set +m
    for _ in $(seq 600); do [ -e "$T/mark" ] && break; sleep 0.1; done
    [ -e "$T/mark" ] || { kill -9 $pid; fail "never held at $suffix: $(cat "$dir.log")"; }
    kill -"$sig" $pid
    rc=0
    wait $pid || rc=$?
}

# 1. as the description and the batch list move beside plan.json: no plan, nothing prepared
for sig in TERM INT; do
    for suffix in /plan_description.json /plan_batches.jsonl; do
        D="$T/before-$sig${suffix//[\/.]/_}"
        held $sig $suffix "$D"
        want=$([ $sig = TERM ] && echo 143 || echo 130)
        [ $rc -eq "$want" ] || fail "SIG$sig at $suffix: exit $rc, expected $want: $(tail -3 "$D.log")"
        grep -q "^ortqual validate: interrupted by SIG$sig while writing the shards' plan: nothing ran, and what preparation wrote was removed$" "$D.log" ||
            fail "SIG$sig at $suffix: not said: $(tail -3 "$D.log")"
        grep -q "interrupted by SIG$sig while writing the shards' plan" "$D/error.json" ||
            fail "SIG$sig at $suffix: error.json: $(cat "$D/error.json" 2>&1)"
        left=$(cd "$D" && find . -mindepth 1 ! -name error.json ! -name .ortqual.lock | sort | tr '\n' ' ')
        [ -z "$left" ] || fail "SIG$sig at $suffix: left $left"
        ! grep -q "prepared" "$D.log" || fail "SIG$sig at $suffix: said prepared: $(cat "$D.log")"
    done
done

# 2. as plan.json itself is put into place (the signal reaches the step during its rename): the
# plan is whole and says so, exit 0; a shard runs it
D="$T/at-plan"
held TERM /plan.json "$D"
[ $rc -eq 0 ] || fail "SIGTERM at plan.json: exit $rc, expected 0 (the plan stands): $(tail -3 "$D.log")"
grep -q "^prepared 2 shards by batch in $D/shards/plan.json" "$D.log" &&
    [ "$(tail -1 "$D.log")" = "interrupted by SIGTERM after the plan was written (the plan stands)" ] ||
    fail "SIGTERM at plan.json: said $(cat "$D.log")"
[ ! -e "$D/error.json" ] && [ -s "$D/shards/plan.json" ] || fail "SIGTERM at plan.json: left $(ls -R "$D")"
must 0 "shard 0 of 2 done" "$T/s0.log" $ORTQUAL "${V[@]}" --shard 0/2 --outdir "$D"
echo "interrupt_plan: no plan beside an interrupted exit; a plan published whole stands, said"
