#!/usr/bin/env bash
# bench --model and convert's check judge and check a model's inputs and outputs as validate does,
# with the real ONNX Runtime (the thirty-second session's leftovers, docs/results.md):
# 1. ids through Casts: an --inputs file's ids are checked as validate checks them (one function,
#    the same line), and --int-range is judged on the values the Casts make (int64 -1 through
#    uint8 is 255), not on the ids as generated;
# 2. an output whose valid elements are all infinities the expected outputs hold too compared no
#    value: bench's row is not compared (NOT TESTED) and convert's check is not a pass;
# 3. a mask input told by its name alone is bench's mask too, as validate's, replay's and
#    convert's: the same model's axes refused by all four;
# 4. the Gathers whose indices only ORT checks are said once before bench's run, as validate says
#    them, and kept with its warnings in summary.json.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
FAST=(--iters 1 --warmup 0 --threads 1)

# ch.onnx: ids int64 [4] -> Cast 'c1' to uint8 -> Cast 'c2' to int64 -> Gather 'emb' over E [200,2].
# sq.onnx: y = x * x, x float [2,3]. rt.onnx: Gather 'g' over E [2,5] axis 1, its indices Shape(x).
$PY - "$OQ_SOURCE_DIR/tests/e2e/lib" <<'PY' || fail "writing the models and batches"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from gather_pb import f, num, vinfo, node, a_int, zeros
def save(path, nodes, inits, ins, outs):
    g = b"".join(f(1, n) for n in nodes) + f(2, "g") + b"".join(f(5, i) for i in inits)
    g += b"".join(f(11, i) for i in ins) + b"".join(f(12, o) for o in outs)
    open(path, "wb").write(num(1, 8) + f(7, g) + f(8, f(1, "") + num(2, 18)))
save("ch.onnx", [node("Cast", "c1", ["ids"], "u8", a_int("to", 2)), node("Cast", "c2", ["u8"], "i64", a_int("to", 7)),
                 node("Gather", "emb", ["E", "i64"], "rows")], [zeros("E", 200, 2)], [vinfo("ids", 7, [4])],
     [vinfo("rows", 1, [4, 2])])
rows = np.zeros((4, 2), np.float32)
np.savez("ids_ok.npz", ids=np.array([0, 1, 300, 199], np.int64), rows=rows)  # 300 is row 44 through uint8
np.savez("ids_bad.npz", ids=np.array([0, 1, -1, 2], np.int64), rows=rows)    # -1 is row 255: past 199
save("sq.onnx", [node("Mul", "m", ["x", "x"], "y")], [], [vinfo("x", 1, [2, 3])], [vinfo("y", 1, [2, 3])])
x = np.full((2, 3), 1e30, np.float32)
with np.errstate(over="ignore"):
    np.savez("inf_in.npz", x=x)
    np.savez("inf_exp.npz", y=x * x)  # inf at every element, on both sides
    x[1, 2] = 2.0
    np.savez("one_in.npz", x=x)
    np.savez("one_exp.npz", y=x * x)  # one finite element besides
save("rt.onnx", [node("Shape", "sh", ["x"], "ind"), node("Gather", "g", ["E", "ind"], "picked", a_int("axis", 1))],
     [num(1, 2) + num(1, 5) + num(2, 1) + f(8, "E") + f(9, bytes(40))], [vinfo("x", 1, [2])], [vinfo("picked", 1, [2, 1])])
PY
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/width_axis.py" . || fail "width_axis.py"
# refused DIR: nothing but error.json, or nothing at all
refused() {
    local left
    left=$(cd "$1" 2>/dev/null && ls -A | tr '\n' ' ')
    [ -z "$left" ] || [ "$left" = "error.json " ] && ok "$1: nothing written" || bad "$1 holds '$left'"
}

# 1. the file's ids: bench says validate's very line; the ids the Casts keep in range run
line="ids_bad.npz: input 'ids' holds -1 at element \[2\], which becomes 255 through Cast 'c1' to uint8, Cast 'c2' to int64; the model's Gather 'emb' reads a table of 200 rows \(ids -200\.\.199\): are these inputs this model's\?"
one_line 2 "^ortqual bench: $line$" "$Q" bench --model ch.onnx --inputs ids_bad.npz "${FAST[@]}" --outdir b1
refused b1
expect 2 "^ortqual validate: $line$" \
    "$Q" validate --model ch.onnx --no-mask --configs expected,cpu:model:fp32 --inputs ids_bad.npz --outdir v1 --threads 1
expect 0 "verdict: PASSED" "$Q" bench --model ch.onnx --inputs ids_ok.npz --expected ids_ok.npz "${FAST[@]}" --outdir b2
expect 0 "verdict: PASSED" "$Q" validate --model ch.onnx --configs expected,cpu:model:fp32 --inputs ids_ok.npz \
    --outdir v2 --threads 1 --no-plots
# generated ids: judged through the Casts, both ways
one_line 2 "^ortqual bench: --int-range -1,5: input 'ids' is given -1, which becomes 255 through Cast 'c1' to uint8, Cast 'c2' to int64; the model's Gather 'emb' reads a table of 200 rows \(ids -200\.\.199\)$" \
    "$Q" bench --model ch.onnx --int-range -1,5 "${FAST[@]}" --outdir b3
refused b3
expect 0 "verdict: PASSED" "$Q" bench --model ch.onnx --int-range 300,305 "${FAST[@]}" --outdir b4

# 2. infinities alone compared nothing: bench, validate and convert agree; one finite value passes
said="no finite value was compared: every valid element of cpu:model:fp32's outputs is an infinity"
expect 1 "verdict: NOT TESTED" "$Q" bench --model sq.onnx --inputs inf_in.npz --expected inf_exp.npz "${FAST[@]}" --outdir b5
$PY - "$said" <<'PY' && ok "bench: the reason said" || bad "bench's summary: $(cat b5/summary.json | head -c 400)"
import json, sys
s = json.load(open("b5/summary.json"))
assert s["verdict"] == "untested" and s["exit_status"] == 1 and s["verdict_reason"].startswith(sys.argv[1]), s["verdict_reason"]
PY
expect 1 "NOT TESTED" "$Q" validate --model sq.onnx --no-mask --configs expected,cpu:model:fp32 --inputs inf_in.npz \
    --expected inf_exp.npz --outdir v5 --threads 1 --no-plots
expect 0 "verdict: PASSED" "$Q" bench --model sq.onnx --inputs one_in.npz --expected one_exp.npz "${FAST[@]}" --outdir b6
expect 1 "no finite value was compared: every valid element of the converted model's outputs is an infinity the original model's holds too" \
    "$Q" convert sq.onnx -o c5.onnx --fuse --inputs inf_in.npz
[ ! -e c5.onnx ] && ok "convert: nothing written" || bad "convert wrote c5.onnx"
expect 0 "" "$Q" convert sq.onnx -o c6.onnx --fuse --inputs one_in.npz
[ -e c6.onnx ] && ok "convert: one finite value checked, written" || bad "convert did not write c6.onnx"

# 3. attention_mask, named so and used only on the data: bench takes it as validate does, and the
# same scores [3,4,8] is refused by both in one line
axis() { echo "^ortqual $1: static_width.onnx: output 'scores' shape \[3,4,8\]: axis 2 has the mask's padded length 8, but the sizes read a sequence only on axis 1"; }
one_line 2 "$(axis bench)" "$Q" bench --model static_width.onnx --inputs sa_in.npz --expected sw_bad.npz "${FAST[@]}" --outdir b7
refused b7
one_line 2 "$(axis validate)" "$Q" validate --model static_width.onnx --inputs sa_in.npz --expected sw_bad.npz --outdir v7 --no-plots
expect 0 "^mask: input 'attention_mask' \(name: its name contains \"mask\"\)" \
    "$Q" bench --model static_width.onnx --inputs sa_in.npz --expected sw_ok.npz --seq-axis scores=none "${FAST[@]}" --outdir b8

# 4. the run-time indices said once, before the run, as validate says them; kept with the warnings
note="note: rt.onnx: Gather 'g': its indices 'ind' are computed at run time (from 'ind', the output of Shape 'sh'): not checked against its data's sizes, left to ONNX Runtime"
"$Q" bench --model rt.onnx "${FAST[@]}" --outdir b9 >b9.out 2>b9.err || bad "bench rt.onnx: $(cat b9.out b9.err)"
[ "$(grep -cxF "$note" b9.err)" = 1 ] && ok "bench: the note said once" || bad "bench rt.onnx said: $(cat b9.err)"
grep -q "WARNING" b9.err && bad "the note said again as a warning: $(cat b9.err)" || ok "not said twice"
$PY - "${note#note: }" <<'PY' && ok "summary.json: the note with the warnings" || bad "b9/summary.json's warnings"
import json, sys
assert sys.argv[1] in json.load(open("b9/summary.json"))["system"]["evidence"]["warnings"]
PY
# convert's check leaves them to ORT too: said in its plan, kept in --json's "notes" as validate's
# summary.json keeps its own ({"kind", "text"}, with the plan's other notes)
"$Q" convert rt.onnx -o c9.onnx --fuse >c9.out 2>&1 || bad "convert rt.onnx: $(cat c9.out)"
[ "$(grep -cxF "  indices          note       ${note#note: }" c9.out)" = 1 ] && ok "convert: the note said once" ||
    bad "convert rt.onnx said: $(cat c9.out)"
"$Q" convert rt.onnx -o c10.onnx --fuse --json >c10.json 2>c10.err || bad "convert --json: $(cat c10.json c10.err)"
$PY - "${note#note: }" <<'PY' && ok "convert --json: notes" || bad "convert --json's notes: $(cat c10.json)"
import json, sys
n = json.load(open("c10.json"))["notes"]
assert n == [{"kind": "fuse", "text": "no decomposed attention chain found"}, {"kind": "indices", "text": sys.argv[1]}], n
PY
report
