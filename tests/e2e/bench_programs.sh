#!/usr/bin/env bash
# The benchmark programs (build/bench/*) are run by hand, so their arguments are their only
# interface: --help prints the usage and exits 0 without measuring, an option it does not take is a
# usage error (2), and a run whose tool did not run never reads as a target met: validate_cost given
# no tool printed "demo rest 0.00 s ... met" (its "--help" was taken for the tool, exit 127).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
B="$OQ_BINARY_DIR/bench"
[ -x "$B/validate_cost" ] || { echo "no benchmark programs in $B (ORTQUAL_BENCH off)"; exit 77; }

for p in compare_speed fp_ports model_overhead npz_read overhead ref_vs_ort shard_scale validate_cost validate_scale; do
    [ -x "$B/$p" ] || { bad "$p: not built"; continue; }
    # --help: the usage on stdout, exit 0, nothing measured (shard_scale ran its steps with
    # "--help" as the tool, fp_ports measured)
    out=$(timeout 20 "$B/$p" --help 2>/dev/null)
    rc=$?
    if [ "$rc" -ne 0 ]; then bad "$p --help: exit $rc: $out"
    elif ! grep -q "^usage: $p" <<<"$out"; then bad "$p --help: no usage on stdout: $out"
    else ok "$p --help"; fi
    # an option it does not take: the usage on stderr, exit 2
    out=$(timeout 20 "$B/$p" --bogus 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" -ne 2 ]; then bad "$p --bogus: exit $rc: $out"
    elif ! grep -q "^usage: $p" <<<"$out"; then bad "$p --bogus: no usage on stderr: $out"
    else ok "$p --bogus: 2"; fi
done
expect 2 "^usage: validate_scale" timeout 20 "$B/validate_scale" 1000
expect 2 "^usage: validate_scale" timeout 20 "$B/validate_scale" x y

# A tool that does not run: nothing measured, no target met, exit 1
out=$(timeout 60 "$B/validate_cost" "$T/no-such-ortqual" 2>&1)
rc=$?
if [ "$rc" -ne 1 ]; then bad "validate_cost, no tool: exit $rc"; else ok "validate_cost, no tool: exit 1"; fi
if grep -qE ": (met|yes)\b" <<<"$out"; then bad "validate_cost, no tool: a target reads met: $out"
else ok "validate_cost, no tool: no target met"; fi
grep -q "demo rest: not measured" <<<"$out" && ok "validate_cost: demo rest not measured" ||
    bad "validate_cost: no 'not measured': $out"
# shard_scale: its default tool is the ortqual beside it, wherever it is run; a tool that cannot
# be run says why (it left an empty log)
out=$(cd "$T" && timeout 300 "$B/shard_scale" --prepare 4 5 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then bad "shard_scale from another folder: exit $rc: $out"
elif ! grep -q "^shard_scale: .*/ortqual," <<<"$out" || ! grep -q "^  *5 batches: prepare" <<<"$out"; then
    bad "shard_scale from another folder: $out"
else ok "shard_scale from another folder: the ortqual beside it ran"; fi
out=$(timeout 60 "$B/shard_scale" --prepare 4 5 "$T/no-such-ortqual" 2>&1)
rc=$?
[ "$rc" -eq 2 ] && grep -q "cannot run $T/no-such-ortqual: No such file" <<<"$out" &&
    ok "shard_scale, no tool: exit 2, the exec error said" || bad "shard_scale, no tool: exit $rc: $out"
report
