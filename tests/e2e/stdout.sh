#!/usr/bin/env bash
# Standard output that cannot be written (a full disk, a closed descriptor) is a failure of every
# subcommand: "ortqual: stdout: write failed: <reason>" and exit 3, unless the command had
# failed already (its status stands). A reader that went away on purpose is not: SIGPIPE at its
# default ends the process, silently; ignored, EPIPE is no error (as git). They all exited 0 with
# nothing delivered.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"
FULL="stdout: write failed: No space left on device"
CLOSED="stdout: write failed: Bad file descriptor"

# full CODE PATTERN ARGS...: ortqual ARGS with stdout on /dev/full
full() {
    local code=$1 pat=$2 rc=0
    shift 2
    $Q "$@" >/dev/full 2>err.log || rc=$?
    if [ "$rc" -ne "$code" ]; then bad "$* >/dev/full -> exit $rc, expected $code: $(tail -3 err.log)"
    elif ! grep -q "^ortqual: $pat\$" err.log; then bad "$* >/dev/full -> no '$pat' line: $(tail -3 err.log)"
    else ok "$* >/dev/full -> $code"; fi
}

$Q export sdpa -o m.onnx >/dev/null || fail "export sdpa"
V=(validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 4 --batch-size 2 --repeat 1 --no-cache
   --no-plots --progress never)
full 3 "$FULL" "${V[@]}" --json --outdir v1
[ -s v1/summary.json ] || bad "validate --json >/dev/full: the run's summary.json is missing"
full 3 "$FULL" inspect m.onnx
full 3 "$FULL" doctor
full 3 "$FULL" validate --list-configs --json
full 3 "$FULL" --help
full 3 "$FULL" help validate
# a run that failed already keeps its status (1: nothing under test ran), and says both
full 1 "$FULL" validate --configs ref:encoder:fp64 --num-events 2 --batch-size 2 --no-cache --no-plots \
    --progress never --outdir v2
# with --json too (it was 3): one rule for every --json writer, as merge and conformance keep it
full 1 "$FULL" validate --configs ref:encoder:fp64 --num-events 2 --batch-size 2 --no-cache --no-plots \
    --progress never --outdir v3 --json
/usr/bin/python3 - "$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder/io.npz" nanref.npz <<'EOF'
import sys, numpy as np
z = dict(np.load(sys.argv[1])); z["out"][:] = np.nan; np.savez(sys.argv[2], **z)
EOF
full 1 "$FULL" replay --model "$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder/tx_encoder_op18.onnx" \
    --inputs nanref.npz --expected nanref.npz --progress never --outdir r1 --json

# a closed stdout: the same, and nothing of it lands in a file opened later (the descriptor is
# held, so the model written is the model)
rc=0
$Q export sdpa -o m2.onnx >&- 2>err.log || rc=$?
[ "$rc" -eq 3 ] && grep -q "^ortqual: $CLOSED\$" err.log && cmp -s m.onnx m2.onnx &&
    ok "export >&- -> 3, model intact" || bad "export >&- -> exit $rc: $(cat err.log)"
rc=0
$Q inspect m.onnx >&- 2>err.log || rc=$?
[ "$rc" -eq 3 ] && grep -q "^ortqual: $CLOSED\$" err.log && ok "inspect >&- -> 3" || bad "inspect >&- -> exit $rc: $(cat err.log)"

# a reader that closed the pipe before anything was written: SIGPIPE at its default ends the
# process by it (no message); with SIGPIPE ignored (inherited), EPIPE is not a failure
got=$(/usr/bin/python3 - "$Q" <<'EOF'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
for restore in (True, False):
    p = subprocess.run([sys.argv[1], "inspect", "m.onnx"], stdout=w, stderr=subprocess.PIPE, restore_signals=restore)
    print(p.returncode, repr(p.stderr.decode()))
EOF
)
[ "$got" = "-13 ''
0 ''" ] && ok "a closed pipe: SIGPIPE, or EPIPE ignored" || bad "a closed pipe: $got"

# a stdout that takes it: no message, 0
$Q inspect m.onnx >out.txt 2>err.log && [ -s out.txt ] && [ ! -s err.log ] && ok "inspect >file -> 0" ||
    bad "inspect >file: $(cat err.log)"
report
