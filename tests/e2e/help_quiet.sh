#!/usr/bin/env bash
# --quiet is -q too, in every subcommand that has it: `bench -q` was refused while `gate -q` worked,
# and a CI template passes -q to each ortqual step (QA sre #10).
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"
cmds=$($Q help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$cmds" ] || bad "no command listed by 'ortqual help'"
with=0
for c in $cmds; do
    $Q "$c" --help >help.txt 2>&1
    grep -qE -- '--quiet\b' help.txt || continue
    with=$((with + 1))
    grep -qE -- '^ +-q, --quiet ' help.txt && ok "$c --help: -q, --quiet" || bad "$c --help lists --quiet without -q: $(grep -- --quiet help.txt)"
done
# at least the two that have it (a help of no --quiet at all would pass the loop)
[ "$with" -ge 2 ] && ok "$with commands have --quiet" || bad "only $with commands list --quiet"
# and the parser takes it: a bench and a gate with -q run and print no progress
$Q export sdpa --format attention24 --heads 2 --head-dim 8 -o m.onnx >/dev/null 2>&1 || bad "export sdpa"
expect 0 '' $Q bench --model m.onnx --dim batch=1 --dim seq=8 --iters 2 --warmup 0 --threads 1 --outdir b -q
[ -s b/summary.json ] && ok "bench -q wrote its summary" || bad "bench -q: no summary"
expect 0 'PASS' $Q gate -q -- /bin/echo '1 passed, 0 failed'
report
