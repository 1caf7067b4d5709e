#!/usr/bin/env bash
# What a run tells a physicist about a failure and where its files are: the C encoder's heads
# against the --model's Attention heads (a mismatch failed every batch as if the numbers were
# wrong), the event id of a failing element (it was named by batch coordinates only), each
# batch's output types and element count (the schema listed them, no record had them), and
# where a sharded --save-outputs run left its saved outputs (the merged summary did not say).
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

$Q export encoder --width 16 --layers 1 --heads 4 --num-features 8 --seed 1 --format attention24 \
    --save-weights w1.npz -o m1.onnx >/dev/null || fail "export m1"
$Q export encoder --weights w1.npz --heads 2 --format attention24 -o mh2.onnx >/dev/null || fail "export mh2"
$Q export encoder --width 16 --layers 1 --heads 4 --num-features 8 --seed 2 --format attention24 \
    -o m2.onnx >/dev/null || fail "export m2"
# two batch files, ids far from their rows (run << 32 | event), padding in each
mkdir -p ev
"$PY" - <<'PY' || fail "events"
import numpy as np
rng = np.random.default_rng(3)
for b, lens in enumerate([[5, 12, 3], [9, 16]]):
    B, L = len(lens), 16
    f = np.zeros((B, L, 8), np.float32); m = np.zeros((B, L), np.float32)
    for j, n in enumerate(lens):
        f[j, :n] = rng.standard_normal((n, 8)); m[j, :n] = 1
    ids = np.array([(357 << 32) | (1000 + 10 * b + j) for j in range(B)], np.int64)
    np.savez('ev/ev_%03d.npz' % b, features=f, mask=m, event_indices=ids)
PY
V=(validate --weights w1.npz --inputs ev/ev_000.npz ev/ev_001.npz --configs ref:encoder:fp64,cpu:model:fp32
   --threads 2 --no-cache --no-plots --progress never)

# 1. the reference's heads (default 4, or --heads) against the model's q_num_heads: refused
#    before anything runs, in one line that says what to give; the right --heads runs
one_line 2 "mh2.onnx: the reference ref:encoder:fp64 computes 4 heads, the model's Attention '[^']+' has 2; give --heads 2" \
    $Q "${V[@]}" --model mh2.onnx --outdir h_default
one_line 2 "computes 8 heads, .* has 2; give --heads 2" $Q "${V[@]}" --model mh2.onnx --heads 8 --outdir h_eight
[ ! -e h_default/summary.json ] && ok "refused: no summary" || bad "a refused run left a summary"
expect 0 "cpu:model:fp32: passed" $Q "${V[@]}" --model mh2.onnx --heads 2 --outdir h_two

# 2. a failing element named by its event id, its index in its source file and the file: the
#    reason (console, report.html, summary.json), the worst records, the JUnit message
expect 1 "worst \[[0-9]+,[0-9]+,[0-9]+\] \(event [0-9]+, index [0-9]+ in ev/ev_00[01]\.npz\) got" \
    $Q "${V[@]}" --model m2.onnx --outdir wrong --junit wrong/junit.xml
"$PY" - <<'PY' && ok "event ids in the worst records" || bad "event ids in the worst records"
import json, re
s = json.load(open('wrong/summary.json'))
ids = {b['index']: b['event_indices'] for b in s['batches']}
c = s['configs'][1]
def check(w, batch):
    assert w['event_id'] == ids[batch][w['coord'][0]], (w, ids[batch])
for o in c['outputs']:
    assert o['worst'], o
    for w in o['worst']:
        check(w, w['batch'])
    check(o['worst_failing'], o['worst_failing']['batch'])
for b in c['batches']:
    for o in b['outputs']:
        if not o['passed']:
            check(o['worst'][0], b['index'])
# the event as the input checks name it: its id, and its index in the file it came from
m = re.search(r'\(event (\d+), index (\d+) in ev/ev_00(\d)\.npz\)', c['reason'])
assert m and ids[int(m.group(3))][int(m.group(2))] == int(m.group(1)), c['reason']
PY
grep -qE 'at \[[0-9,]+\] \(event [0-9]+\) \(got' wrong/junit.xml && ok "JUnit names the event" ||
    bad "JUnit names no event: $(grep -m1 -o 'message="[^"]*"' wrong/junit.xml)"
grep -qE '\] \(event [0-9]+\) got' wrong/report.html && ok "report.html names the event" || bad "report.html names no event"

# 3. each batch's output records hold dtype, reference_dtype, num_elements (docs/summary-schema.md)
"$PY" - <<'PY' && ok "per-batch dtype, reference_dtype, num_elements" || bad "per-batch keys missing"
import json
s = json.load(open('h_two/summary.json'))
for b in s['configs'][1]['batches']:
    for o in b['outputs']:
        assert o['dtype'] == 'float32' and o['reference_dtype'] == 'float64', o
        n = {0: 3, 1: 2}[b['index']] * 16 * (6 if o['output'] == 'cls' else 4)
        assert o['num_elements'] == n, (o['num_elements'], n)
PY

# 4. a sharded --save-outputs run: the merged summary names every saved output, relative to DIR,
#    and the documented glob finds the reference's for replay
S=("${V[@]}" --model m1.onnx --save-outputs --outdir sh)
$Q "${S[@]}" --prepare-shards 2 >/dev/null 2>&1 || bad "prepare shards"
for i in 0 1; do $Q "${S[@]}" --shard $i/2 >/dev/null 2>&1 || bad "shard $i"; done
expect 0 "verdict: PASSED" $Q merge sh
"$PY" - <<'PY' && ok "merged summary lists the saved outputs" || bad "merged summary lists no saved outputs"
import json, glob, os
s = json.load(open('sh/summary.json'))
listed = s['saved_outputs']
on_disk = sorted(os.path.relpath(p, 'sh') for p in glob.glob('sh/shards/*/outputs_*.npz'))
assert listed == on_disk and len(listed) == 4, (listed, on_disk)
PY
expect 0 "verdict: PASSED" $Q replay --model m1.onnx --inputs 'sh/inputs_*.npz' --reference expected --expected 'sh/shards/*/outputs_00_*.npz' \
    --ep cpu --progress never --outdir rp
report
