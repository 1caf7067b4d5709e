#!/usr/bin/env bash
# The event-data pass's usability findings (2026-12-06), each with the real tool: a refusal is
# said before any work and names what it is about; --json answers a refusal with a document.
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"

$Q export encoder --features 17 --seed 3 --save-weights w.npz --format attention24 -o enc.onnx >/dev/null ||
    bad "export encoder"
# ragged/ holds batches [3,30] and [3,1]; nan/ one batch with a NaN in a valid feature
/usr/bin/python3 - <<'PY'
import os, numpy as np
def batch(path, lens, L, nan=False):
    f = np.random.default_rng(len(lens) + L).standard_normal((len(lens), L, 17)).astype(np.float32)
    m = np.zeros((len(lens), L), np.float32)
    for i, n in enumerate(lens): m[i, :n] = 1
    if nan: f[0, 0, 3] = np.nan
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez(path, features=f, mask=m)
batch("ragged/inputs_000.npz", [1, 5, 30], 30)
batch("ragged/inputs_001.npz", [1, 1, 1], 1)
batch("nan/inputs_000.npz", [2, 3], 3, nan=True)
np.savez("nan_expected.npz", cls=np.zeros((2, 3, 6), np.float32), reg=np.zeros((2, 3, 4), np.float32))
PY
V=(validate --weights w.npz --heads 4 --configs ref:encoder:fp64,cpu:attention24:fp32 --repeat 1 --warmup 0
   --no-plots --no-cache)

# 7. --static with batches of two shapes is refused before any work, naming both batches (the
#    reference ran, then every configuration errored: exit 3)
expect 2 "^ortqual validate: --static fixes B,L to batch 0's \[3,30\] \(ragged/inputs_000.npz\); batch 1 \(ragged/inputs_001.npz\) is \[3,1\]" \
    $Q "${V[@]}" --inputs 'ragged/inputs_*.npz' --static --outdir st
[ "$(ls st)" = error.json ] && ok "--static refusal: only error.json" || bad "--static refusal left: $(ls st)"
expect 0 "cpu:attention24:fp32: passed" $Q "${V[@]}" --inputs ragged/inputs_000.npz --static --outdir st1

# 8. --json prints a JSON object on stdout for a refusal too (stdout was empty), the same shape
#    for validate, replay, estimate and merge; the line on stderr stays
json_refusal() { # json_refusal NAME CMD...: stdout is {schema, command, status, error, exit_code} with the exit
    local name=$1 out rc
    shift
    out=$("$@" 2>"$T/err")
    rc=$?
    /usr/bin/python3 - "$rc" "$2" "$out" <<'PY' && ok "$name: JSON refusal" || bad "$name: exit $rc, stdout '$out'"
import json, sys
rc, cmd, j = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
assert set(j) == {"schema", "command", "status", "error", "exit_code"}, j
assert j["schema"] == "ortqual-error/1" and j["command"] == cmd and j["exit_code"] == rc == 2, j
assert j["error"] and j["status"] != "ok", j
PY
    grep -qF "ortqual $2: " "$T/err" || bad "$name: no line on stderr"
}
json_refusal "validate --json" $Q validate "${V[@]:1}" --inputs 'nan/inputs_*.npz' --outdir vj --json
grep -q NaN vj/error.json && ok "validate: error.json kept" || bad "validate: no error.json"
json_refusal "replay --json" $Q replay --model enc.onnx --inputs 'nan/inputs_*.npz' --expected nan_expected.npz --ep cpu \
    --repeat 1 --warmup 0 --outdir rj --json
: >empty.json
json_refusal "estimate --json" $Q estimate empty.json --events 10 --workers 1 --json
json_refusal "merge --json" $Q merge nothere --json

# 9. --length-policy with a word that is no number names the option (it said "unexpected
#    argument 'abc'")
for p in "fraction abc" "fixed abc" "uniform 1 abc"; do
    expect 2 "^ortqual validate: --length-policy: length policy '$p': " $Q validate --length-policy $p \
        --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir lp
done
expect 2 "^ortqual validate: --length-policy: length policy 'fraction nan': " $Q validate --length-policy fraction nan \
    --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir lp

# 10. report on a refused run's folder gives the refusal (it said "not a run directory?")
expect 2 "^ortqual report: vj holds error.json and no summary.json: the run was refused \(no result to render\): .*NaN" \
    $Q report vj
# with --junit too, the same explanation (it said "vj/summary.json: cannot open")
expect 2 "^ortqual report: vj holds error.json and no summary.json: the run was refused \(no result to render\): .*NaN" \
    $Q report vj --junit vj.xml
expect 2 "not a run directory\?" $Q report nothere

# 6. report.html's events cell: runs of indices ("0-1499"), not every index (1500 events made it
#    thousands of pixels wide)
/usr/bin/python3 - <<'PY'
import numpy as np
L = 4
f = np.random.default_rng(1).standard_normal((1500, L, 17)).astype(np.float32)
m = np.zeros((1500, L), np.float32)
for i in range(1500): m[i, :1 + i % L] = 1
np.savez("big.npz", features=f, mask=m)
PY
$Q "${V[@]}" --inputs big.npz --outdir big >/dev/null 2>&1 || bad "validate big.npz: exit $?"
grep -q '<td rowspan="[0-9]*">0&ndash;1499 (1500)</td>' big/report.html && ok "events cell: 0-1499 (1500)" ||
    bad "events cell: $(grep -o '<td rowspan="[0-9]*">[0-9][^<]\{0,60\}' big/report.html | head -2)"
grep -q '1498,1499' big/report.html && bad "report.html lists every index" || ok "report.html: no index list"
report
