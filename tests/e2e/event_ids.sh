#!/usr/bin/env bash
# A user's events accounted for exactly: the `event_indices` a batch file carries are the run's
# ids as they are (64-bit ids were read through a double: 2^53+1 became 2^53, uint64 ones
# -2^63), or refused in one line (wrong length, a float, negative, an id twice: they were
# dropped, truncated or counted twice in silence), as is a `lengths` member the mask
# contradicts (it was rewritten); errors name an event by its id; each batch records the
# user's file it came from.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like"
M="$FX/mlpf_like_op18.onnx"

# batch DIR N PYTHON: DIR/inputs_00N.npz, the fixture's batch N with z (a dict) changed by PYTHON
batch() {
    mkdir -p "$1"
    "$PY" - "$FX/inputs_00$2.npz" "$1/inputs_00$2.npz" "$3" <<'PY'
import sys, numpy as np
z = dict(np.load(sys.argv[1]))
exec(sys.argv[3])
np.savez(sys.argv[2], **z)
PY
}
run() { # run DIR OUT [more options]: validate DIR's batches against the fixture's outputs
    local d=$1 out=$2 f exp=()
    shift 2
    for f in "$d"/inputs_00*.npz; do exp+=("$FX/outputs_${f##*/inputs_}"); done
    $Q validate --model "$M" --inputs "$d"/inputs_00*.npz --expected "${exp[@]}" \
        --configs expected,cpu:model:fp32 --no-plots --no-cache --progress never --outdir "$out" "$@"
}

# 1. ids above 2^53 (and a packed run << 32 | event) kept exactly in summary.json, the kept batch
#    file and the report; uint64 ids that fit int64 taken as they are
BIG='[2**53 + 1, 2**62 + 3, (356123 << 32) | 1234567]'
batch big 0 "z['event_indices'] = np.array($BIG, np.int64)"
batch big 1 "z['event_indices'] = np.array([7, 8], np.uint64)"
expect 0 "cpu:model:fp32: passed" run big obig
"$PY" - obig "$BIG" <<'PY' && ok "ids exact in summary.json and the kept batch file" || bad "ids changed"
import json, sys, numpy as np
want = eval(sys.argv[2]) + [7, 8]
b = json.load(open(sys.argv[1] + "/summary.json"))["batches"]
got = b[0]["event_indices"] + b[1]["event_indices"]
kept = [int(v) for v in np.load(b[0]["inputs"])["event_indices"]]
print(got, kept)
sys.exit(not (got == want and kept == want[:3]))
PY
grep -q "9007199254740993" obig/report.html && ok "report.html: 2^53+1" || bad "report.html lacks 9007199254740993"

# 2. each batch names the user's file it came from, and its SHA-256 (inputs_N.npz is a rewrite)
"$PY" - obig big "$FX" <<'PY' && ok "batches[].source and source_sha256" || bad "no source recorded"
import hashlib, json, sys
run, d, fx = sys.argv[1:]
b = json.load(open(run + "/summary.json"))["batches"]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
for i in range(2):
    src, exp = "%s/inputs_00%d.npz" % (d, i), "%s/outputs_00%d.npz" % (fx, i)
    print(b[i].get("source"), b[i].get("source_sha256"), b[i].get("expected_source"))
    if b[i].get("source") != src or b[i].get("source_sha256") != sha(src): sys.exit(1)
    if b[i].get("expected_source") != exp or b[i].get("expected_source_sha256") != sha(exp): sys.exit(1)
PY
grep -q "class=\"muted source\">big/inputs_001.npz</span>" obig/report.html && ok "report.html names the source" || bad "report.html lacks the source"
# ... and merge/report read it back (report again from summary.json: the same cells)
cp obig/report.html obig.before
expect 0 "obig/report.html" $Q report obig
cmp -s obig.before obig/report.html && ok "report again: same page" || bad "report again differs"

# 3. refused in one line, naming file, member and index; only error.json left
batch u64 0 "z['event_indices'] = np.array([2**64 - 1, 2**63 + 5, 7], np.uint64)"
one_line 2 "^ortqual validate: u64/inputs_000.npz: member 'event_indices' index 0: 18446744073709551615 is beyond the largest event id ortqual records \(9223372036854775807, int64\)$" \
    run u64 ou64
batch flt 0 "z['event_indices'] = np.array([16777216., 2.5, -1.], np.float32)"
one_line 2 "^ortqual validate: flt/inputs_000.npz: member 'event_indices' is float32 \[3\]: it must be a 1-D integer array, one event id per event$" \
    run flt oflt
batch neg 0 "z['event_indices'] = np.array([4, -1, 5])"
one_line 2 "^ortqual validate: neg/inputs_000.npz: member 'event_indices' index 1: -1 is negative$" run neg oneg
batch short 0 "z['event_indices'] = np.array([10, 11])"
one_line 2 "^ortqual validate: short/inputs_000.npz: member 'event_indices' has 2 entries for the batch's 3 events \(one id per event\)$" \
    run short oshort
batch dup 0 "z['event_indices'] = np.arange(3)"
batch dup 1 "z['event_indices'] = np.array([5, 2])"
one_line 2 "^ortqual validate: dup/inputs_001.npz: event 2 \(index 1 in the file\) is also at index 2 of dup/inputs_000.npz: an event is counted once per run" \
    run dup odup
# a file without ids is numbered on from the batches before: 3, 4, 5 clash with the next file's
batch mix 0 "z['event_indices'] = np.array([3, 4, 5])"
batch mix 1 ""
one_line 2 "^ortqual validate: mix/inputs_001.npz: event 3 \(index 0 in the file\) is also at index 0 of mix/inputs_000.npz: .*; the file has no member 'event_indices': its events are numbered on from the events before it$" \
    run mix omix
for d in ou64 oflt oneg oshort odup omix; do
    [ "$(ls -A $d)" = "error.json" ] && ok "$d: only error.json" || bad "$d holds $(ls -A $d | tr '\n' ' ')"
done

# 4. a `lengths` member the mask contradicts (it was rewritten from the mask in silence)
batch len 0 "z['event_indices'] = np.array([100, 101, 102]); z['lengths'] = z['mask'].sum(1).astype(np.int64); z['lengths'][2] += 1"
one_line 2 "^ortqual validate: len/inputs_000.npz: member 'lengths' index 2: [0-9]+, but event 102 \(index 2 in the file\) has [0-9]+ valid positions by the mask$" \
    run len olen
batch lenok 0 "z['lengths'] = z['mask'].sum(1).astype(np.int32)"
expect 0 "cpu:model:fp32: passed" run lenok olenok

# 5. mask-contract and non-finite errors name the event by the run's id beside its index
batch empty 0 "z['event_indices'] = np.array([1000017, 1000018, 1000019]); z['mask'][1] = 0"
one_line 2 "^ortqual validate: empty/inputs_000.npz: mask 'mask': event 1000018 \(index 1 in the file\): empty event" \
    run empty oempty
batch nan 0 ""
batch nan 1 "z['features'][1, 0, 7] = np.nan"
one_line 2 "^ortqual validate: nan/inputs_001.npz: input 'features': event 4 \(index 1 in the file\) position 0 \(element 7 of it\) is NaN" \
    run nan onan
one_line 2 "^ortqual replay: nan/inputs_001.npz: input 'features': event 4 \(index 1 in the file\) position 0" \
    $Q replay --model "$M" --inputs nan/inputs_00*.npz --expected "$FX"/outputs_00[0-1].npz --progress never --outdir rnan

# 6. a shape clash between an inputs file and its expected outputs names both files
"$PY" -c 'import sys, numpy as np; z = dict(np.load(sys.argv[1])); z["cls"] = np.zeros((3, 57, 6), np.float32); np.savez("longer.npz", **z)' \
    "$FX/outputs_000.npz"
one_line 2 "^ortqual validate: longer.npz: dimension '[a-z_]+' is 56 in member 'features' \[3,56,17\] of .*/mlpf_like/inputs_000.npz but 57 in expected 'cls' \[3,57,6\] \(the model names both" \
    $Q validate --model "$M" --inputs "$FX/inputs_000.npz" --expected longer.npz --configs expected,cpu:model:fp32 \
    --progress never --outdir olonger

# 7. saved outputs whose event_indices contradict their inputs' ids (outputs saved for another
#    selection of events, paired in file order) are refused naming both files, the position and
#    both ids (they were taken in silence); the same ids, in the same order, pass
batch ids 0 "z['event_indices'] = np.array([100, 101, 102])"
batch ids 1 "z['event_indices'] = np.array([110, 111])"
saved() { # saved NAME N IDS: NAME_00N.npz, the fixture's outputs of batch N with these ids
    "$PY" -c 'import sys, numpy as np; z = dict(np.load(sys.argv[1])); z["event_indices"] = np.array(eval(sys.argv[3]), np.int64); np.savez(sys.argv[2], **z)' \
        "$FX/outputs_00$2.npz" "$1_00$2.npz" "$3"
}
saved same 0 "[100, 101, 102]"; saved same 1 "[110, 111]"
saved other 0 "[100, 101, 102]"; saved other 1 "[110, 1111]"
expect 0 "cpu:model:fp32: passed" $Q validate --model "$M" --inputs ids/inputs_00*.npz --expected same_00*.npz \
    --configs expected,cpu:model:fp32 --no-plots --no-cache --progress never --outdir osame
why="the saved outputs are of other events than their inputs \(files are paired in order\)$"
one_line 2 "^ortqual validate: other_001.npz: event_indices\[1\] is 1111 where ids/inputs_001.npz has event 111: $why" \
    $Q validate --model "$M" --inputs ids/inputs_00*.npz --expected other_00*.npz --configs expected,cpu:model:fp32 \
    --no-plots --no-cache --progress never --outdir oother
[ "$(ls -A oother)" = "error.json" ] && ok "oother: only error.json" || bad "oother holds $(ls -A oother | tr '\n' ' ')"
one_line 2 "^ortqual replay: other_001.npz: event_indices\[1\] is 1111 where ids/inputs_001.npz has event 111: $why" \
    $Q replay --model "$M" --inputs ids/inputs_00*.npz --expected other_00*.npz --progress never --outdir rother
saved short 0 "[100, 101]"
one_line 2 "^ortqual bench: short_000.npz: 2 event_indices, where ids/inputs_000.npz has 3: $why" \
    $Q bench --model "$M" --inputs ids/inputs_000.npz --expected short_000.npz --iters 1 --warmup 0 --outdir bshort

report
