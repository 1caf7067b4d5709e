#!/usr/bin/env bash
# The benchmark programs (build/bench/*) are run by hand, so their arguments are their only
# interface: --help prints the usage and exits 0 without measuring, a stray argument is a usage
# error (2), and a run whose tool did not run never reads as a target met: validate_cost given
# no tool printed "demo rest 0.00 s ... met" (its "--help" was taken for the tool, exit 127).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
B="$OQ_BINARY_DIR/bench"
[ -x "$B/validate_cost" ] || { echo "no benchmark programs in $B (ORTQUAL_BENCH off)"; exit 77; }

for p in compare_speed model_overhead npz_read overhead ref_vs_ort validate_cost validate_scale; do
    [ -x "$B/$p" ] || { bad "$p: not built"; continue; }
    out=$(timeout 20 "$B/$p" --help 2>&1)
    rc=$?
    # --help: the usage; some programs still call it a usage error (2), none may measure
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then bad "$p --help: exit $rc: $out"
    elif ! grep -q "usage: $p" <<<"$out"; then bad "$p --help: no usage: $out"
    else ok "$p --help"; fi
done
expect 0 "^usage: validate_cost" timeout 20 "$B/validate_cost" --help
expect 0 "^usage: validate_scale" timeout 20 "$B/validate_scale" --help
expect 2 "^usage: validate_cost" timeout 20 "$B/validate_cost" --bogus
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
report
