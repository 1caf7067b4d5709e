#!/usr/bin/env bash
# The figures' drawing ended by GLib (pango could not start its thread under a small
# `ulimit -v`: g_error, SIGTRAP) is contained to the figures: validate and merge finish with
# their verdict, "plots: not drawn: ... killed by SIGTRAP ...", and no part of a figure set;
# `plot` fails (exit 3) with that message and leaves nothing of its own. It killed validate after
# every configuration had passed (exit 133, .work/ and a partial plots/ left, no summary).
# libabort_pango.so ends the process as GLib does, from the first text PLplot lays out.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
PY=/usr/bin/python3
PRE="$OQ_BINARY_DIR/tests/libabort_pango.so"
SAN=0
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && SAN=1
[ $SAN = 1 ] && PRE="$(gcc -print-file-name=libasan.so) $PRE"
cd "$T"
NOT_DRAWN="plots: not drawn: the process drawing the figures was killed by SIGTRAP \(signal 5\): .*GLib-ERROR"
V=(validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 4 --batch-size 2 --repeat 1 --no-cache
   --progress never)
json() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# whole DIR: a run's files with its verdict, no figure, no temporary and no .work/ left
whole() {
    local left
    left=$(cd "$1" && ls -d plots .work *.tmp.* 2>/dev/null)
    [ -z "$left" ] || bad "$1: left $left"
    [ "$(json "$1/summary.json" '(d["verdict"], d["plots"], "SIGTRAP" in d["plot_error"])')" = "('passed', [], True)" ] ||
        bad "$1/summary.json: $(json "$1/summary.json" '(d["verdict"], d.get("plots"), d.get("plot_error"))')"
}

expect 0 "$NOT_DRAWN" env LD_PRELOAD="$PRE" $Q "${V[@]}" --outdir v
whole v
# merge draws the same figures
expect 0 "prepared" $Q "${V[@]}" --outdir s --prepare-shards 2 --no-plots
for i in 0 1; do expect 0 "shard $i of 2" $Q "${V[@]}" --outdir s --shard $i/2; done
expect 0 "$NOT_DRAWN" env LD_PRELOAD="$PRE" $Q merge s
whole s

# plot: the command's failure, exit 3, nothing of its own left (a file of yours stays, and so do
# the temporaries of another process writing the same figures there: an older ortqual's name, and
# one of pid 1; they were removed by name)
mkdir figs && touch figs/mine.txt figs/runtime_valid_size.png.tmp.AbC123 figs/runtime_valid_size.png.tmp.1.XyZ789
expect 3 "^ortqual plot: the process drawing the figures was killed by SIGTRAP \(signal 5\): .*GLib-ERROR" \
    env LD_PRELOAD="$PRE" $Q plot v/summary.json --out figs
[ "$(ls -A figs | LC_ALL=C sort | tr '\n' ' ')" = "mine.txt runtime_valid_size.png.tmp.1.XyZ789 runtime_valid_size.png.tmp.AbC123 " ] &&
    ok "plot: only mine.txt and the other process's temporaries left" || bad "plot left: $(ls -A figs)"
expect 3 "killed by SIGTRAP" env LD_PRELOAD="$PRE" $Q plot v/summary.json --out new/figs
[ ! -e new/figs ] && ok "plot: its folder removed" || bad "plot left new/figs: $(ls -A new/figs)"
# SVG alone needs no pango: drawn
expect 0 "runtime_valid_size.svg" env LD_PRELOAD="$PRE" $Q plot v/summary.json --out svg --format svg

# a real small `ulimit -v` where it bites on this host (the window depends on the host: a run
# whose worker cannot start there tells nothing): never a parent ended by a signal, and a run
# whose configurations passed ends with its verdict
if [ $SAN = 0 ]; then
    for kb in 100000 120000; do
        rc=0
        (ulimit -v $kb; exec $Q "${V[@]}" --outdir "u$kb") >"u$kb.log" 2>&1 || rc=$?
        if [ "$rc" -ge 128 ]; then bad "ulimit -v $kb: ended by signal $((rc - 128)): $(tail -3 "u$kb.log")"
        elif grep -q "cpu:attention24:fp32: passed" "u$kb.log" && ! grep -q "^verdict: PASSED" "u$kb.log"; then
            bad "ulimit -v $kb: passed, no verdict: $(tail -3 "u$kb.log")"
        else ok "ulimit -v $kb: exit $rc$(grep -q '^plots: not drawn' "u$kb.log" && echo ', plots not drawn')"; fi
    done
fi
report
