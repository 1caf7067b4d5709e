#!/usr/bin/env bash
# Indices a model input gives a GatherElements or GatherND over an initializer are checked
# before anything runs, as a Gather's token ids are: ORT runs the edges of each bound (-s and
# s-1 along the axis indexed), and one index past them is exit 2 naming the file, the input, the
# element, the value, the node and the bound, where ORT would fail the run at the node. The
# model's own constant indices, folded through Transpose and Reshape, are held to the same bounds.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

# gi.onnx: sel int64 [2,3] -> GatherElements 'ge' (axis 1) over E [2,5]; pairs int64 [2,2] ->
# GatherND 'nd' over P [3,4] (a tuple's first position a row of 3, its second a column of 4);
# E and P zeros, so the outputs saved beside the inputs are zeros
$PY - "$OQ_SOURCE_DIR/tests/e2e/lib" <<'PY' || fail "writing the model and batches"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from gather_pb import f, num, vinfo, node, zeros  # vinfo's elem: 1 float, 7 int64
axis1 = f(5, f(1, "axis") + num(3, 1) + num(20, 2))  # AttributeProto INT
g = f(1, node("GatherElements", "ge", ["E", "sel"], "picked", axis1)) + f(1, node("GatherND", "nd", ["P", "pairs"], "cells"))
g += f(2, "g") + f(5, zeros("E", 2, 5)) + f(5, zeros("P", 3, 4))
g += f(11, vinfo("sel", 7, [2, 3])) + f(11, vinfo("pairs", 7, [2, 2]))
g += f(12, vinfo("picked", 1, [2, 3])) + f(12, vinfo("cells", 1, [2]))
open("gi.onnx", "wb").write(num(1, 8) + f(7, g) + f(8, f(1, "") + num(2, 18)))
out = dict(picked=np.zeros((2, 3), np.float32), cells=np.zeros(2, np.float32))
sel = np.array([[0, 4, -5], [1, 2, 3]], np.int64)
pairs = np.array([[2, 3], [-3, -4]], np.int64)
np.savez("good.npz", sel=sel, pairs=pairs, **out)
s = sel.copy(); s[1, 2] = 5; np.savez("bad_sel.npz", sel=s, pairs=pairs, **out)
p = pairs.copy(); p[0, 0] = 3; np.savez("bad_pairs.npz", sel=sel, pairs=p, **out)
p = pairs.copy(); p[1, 1] = -5; np.savez("bad_col.npz", sel=sel, pairs=p, **out)
PY

run() { "$Q" validate --model gi.onnx --configs expected,cpu:model:fp32 --inputs "$1" --outdir "$2" --threads 1; }

# every index at an edge of its bound: ORT runs them, the run passes
expect 0 "verdict: PASSED" run good.npz v0
expect 2 "bad_sel.npz: input 'sel' holds 5 at element \[1,2\]; the model's GatherElements 'ge' indexes axis 1 of its data, of size 5 \(indices -5..4\)" \
    run bad_sel.npz v1
expect 2 "bad_pairs.npz: input 'pairs' holds 3 at element \[0,0\]; the model's GatherND 'nd' indexes axis 0 of its data, of size 3 \(indices -3..2\)" \
    run bad_pairs.npz v2
expect 2 "bad_col.npz: input 'pairs' holds -5 at element \[1,1\]; the model's GatherND 'nd' indexes axis 1 of its data, of size 4 \(indices -4..3\)" \
    run bad_col.npz v3
# refused before anything ran: no batch written, no summary
for d in v1 v2 v3; do
    [ ! -e "$d/summary.json" ] && [ -z "$(ls "$d" | grep -v '^error.json$')" ] && ok "$d: nothing but error.json" ||
        bad "$d holds $(ls "$d" | tr '\n' ' ')"
done
# The model's own indices: cN.onnx reads cells = GatherND(P [3,4], Reshape(Transpose(idx), [2,2]))
# and y = Identity(x); c_in's idx [[0,1],[3,2]] transposed is (0,3) (1,2), in range (ORT runs it,
# where idx read as it is would put 3 at a row); c_out's [[0,3],[1,2]] transposed puts 3 there
$PY - "$OQ_SOURCE_DIR/tests/e2e/lib" <<'PY' || fail "writing the constant-index models"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from gather_pb import f, num, vinfo, ints, node
for tag, idx in (("c_in", [0, 1, 3, 2]), ("c_out", [0, 3, 1, 2])):
    g = f(1, node("Transpose", "t", ["idx"], "idx_t")) + f(1, node("Reshape", "r", ["idx_t", "s22"], "ind"))
    g += f(1, node("GatherND", "nd", ["P", "ind"], "cells")) + f(1, node("Identity", "id", ["x"], "y"))
    g += f(2, "g") + f(5, num(1, 3) + num(1, 4) + num(2, 1) + f(8, "P") + f(9, bytes(48)))
    g += f(5, ints("idx", [2, 2], idx)) + f(5, ints("s22", [2], [2, 2]))
    g += f(11, vinfo("x", 1, [2])) + f(12, vinfo("cells", 1, [2])) + f(12, vinfo("y", 1, [2]))
    open(tag + ".onnx", "wb").write(num(1, 8) + f(7, g) + f(8, f(1, "") + num(2, 18)))
x = np.array([1, 2], np.float32)
np.savez("cx.npz", x=x, y=x, cells=np.zeros(2, np.float32))
PY
crun() { "$Q" validate --model "$1" --configs expected,cpu:model:fp32 --inputs cx.npz --outdir "$2" --threads 1; }
expect 0 "verdict: PASSED" crun c_in.onnx c0
expect 2 "c_out.onnx: GatherND 'nd': its constant indices 'ind' \(the constant 'idx' through Transpose, Reshape\) hold 3 at element \[1,0\]; it indexes axis 0 of its data, of size 3 \(indices -3..2\)" \
    crun c_out.onnx c1
[ "$(ls c1 2>&1)" = error.json ] && ok "c1: nothing but error.json" ||
    bad "c1 holds $(ls c1 | tr '\n' ' ')"
# Indices computed from constants: Add, Concat, Range, a Constant's value_ints and an input's
# default (an initializer of its name, which validate always runs with) over E [2,5] along axis
# 1 (indices -5..4). In range (ok_*) they run and pass; one past (bad_*) is exit 2 before the run,
# naming the node, the element, the value and where it came from; nothing but error.json written.
$PY - "$OQ_SOURCE_DIR/tests/e2e/lib" <<'PY' || fail "writing the computed-index models"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from gather_pb import f, num, vinfo, ints, node, a_int, a_ints
E = num(1, 2) + num(1, 5) + num(2, 1) + f(8, "E") + f(9, bytes(40))
def model(path, nodes, inits, n, inputs=b""):
    g = b"".join(f(1, x) for x in nodes) + f(1, node("Gather", "g", ["E", "ind"], "picked", a_int("axis", 1)))
    g += f(1, node("Identity", "id", ["x"], "y")) + f(2, "g") + f(5, E) + b"".join(f(5, i) for i in inits)
    g += f(11, vinfo("x", 1, [2])) + inputs + f(12, vinfo("picked", 1, [2, n])) + f(12, vinfo("y", 1, [2]))
    open(path, "wb").write(num(1, 8) + f(7, g) + f(8, f(1, "") + num(2, 18)))
    np.savez(path.replace(".onnx", ".npz"), x=np.array([1, 2], np.float32), y=np.array([1, 2], np.float32),
             picked=np.zeros((2, n), np.float32))
for tag, last in (("ok", 4), ("bad", 5)):
    model(tag + "_add.onnx", [node("Add", "add", ["a", "b"], "ind")], [ints("a", [2], [1, 2]), ints("b", [2], [3, last - 2])], 2)
    model(tag + "_concat.onnx", [node("Concat", "cat", ["a", "b"], "ind", a_int("axis", 0))],
          [ints("a", [2], [0, 1]), ints("b", [1], [last])], 3)
    model(tag + "_range.onnx", [node("Range", "rg", ["s", "l", "d"], "ind")],
          [ints("s", [], [0]), ints("l", [], [last + 1]), ints("d", [], [1])], last + 1)
    model(tag + "_ints.onnx", [node("Constant", "c", [], "ind", a_ints("value_ints", [1, last]))], [], 2)
    model(tag + "_default.onnx", [], [ints("ind", [2], [0, last])], 2, f(11, vinfo("ind", 7, [2])))
model("rt.onnx", [node("Shape", "sh", ["x"], "ind")], [], 1)  # indices known at run time only: [2]
x = np.array([3, 4], np.float32)
np.savez("rt2.npz", x=x, y=x, picked=np.zeros((2, 1), np.float32))  # a second batch
PY
drun() { "$Q" validate --model "$1.onnx" --configs expected,cpu:model:fp32 --inputs "$1.npz" --outdir "o_$1" --threads 1; }
for m in add concat range ints default; do
    expect 0 "verdict: PASSED" drun ok_$m
done
at="; it indexes axis 1 of its data, of size 5 \(indices -5..4\): ONNX Runtime fails every run"
expect 2 "bad_add.onnx: Gather 'g': its constant indices 'ind' \(the constants 'a', 'b' through Add\) hold 5 at element \[1\]$at" drun bad_add
expect 2 "bad_concat.onnx: Gather 'g': its constant indices 'ind' \(the constants 'a', 'b' through Concat\) hold 5 at element \[2\]$at" \
    drun bad_concat
expect 2 "bad_range.onnx: Gather 'g': its constant indices 'ind' \(the constants 's', 'l', 'd' through Range\) hold 5 at element \[5\]$at" \
    drun bad_range
expect 2 "bad_ints.onnx: Gather 'g': its constant indices 'ind' hold 5 at element \[1\]$at" drun bad_ints
expect 2 "bad_default.onnx: Gather 'g': its constant indices 'ind' \(the default of input 'ind'\) hold 5 at element \[1\]$at that keeps the default" \
    drun bad_default
for m in add concat range ints default; do
    [ "$(ls o_bad_$m 2>&1)" = error.json ] && ok "o_bad_$m: nothing but error.json" ||
        bad "o_bad_$m holds $(ls o_bad_$m | tr '\n' ' ')"
done
# validate says once, before the run (however many batches), what inspect says: indices computed
# at run time are left to ONNX Runtime
"$Q" validate --model rt.onnx --configs expected,cpu:model:fp32 --inputs rt.npz rt2.npz --outdir o_rt --threads 1 \
    >rt.out 2>rt.err && grep -q "verdict: PASSED" rt.out && ok "validate rt.onnx: passed" || bad "validate rt.onnx: $(cat rt.out rt.err)"
note="note: rt.onnx: Gather 'g': its indices 'ind' are computed at run time (from 'ind', the output of Shape 'sh'): not checked against its data's sizes, left to ONNX Runtime"
[ "$(grep -cxF "$note" rt.err)" = 1 ] && ok "validate: the run-time indices said once" || bad "validate rt.onnx said: $(cat rt.err)"
first_run=$(grep -n '^\[1/2\]' rt.err | head -1 | cut -d: -f1)
[ -n "$first_run" ] && [ "$(grep -nxF "$note" rt.err | cut -d: -f1)" -lt "$first_run" ] &&
    ok "validate: the note before the run" || bad "validate rt.onnx: the note not before the run: $(cat rt.err)"
# ... and kept in summary.json (once) and report.html; a sharded run's merge keeps its shards' once
notes_of() { $PY -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])).get("notes")))' "$1/summary.json"; }
want=$($PY -c 'import json, sys; print(json.dumps([{"kind": "indices_unchecked", "text": sys.argv[1][6:]}]))' "$note")
[ "$(notes_of o_rt)" = "$want" ] && ok "summary.json: the note kept once" || bad "o_rt notes: $(notes_of o_rt)"
grep -qF "<li class=\"note\"><code>indices_unchecked</code> rt.onnx: Gather &#39;g&#39;: its indices" o_rt/report.html &&
    ok "report.html: the note shown" || bad "o_rt/report.html: $(grep -o '<section id="notes">.\{0,300\}' o_rt/report.html)"
SH=(validate --model rt.onnx --configs expected,cpu:model:fp32 --inputs rt.npz rt2.npz --threads 1 --outdir o_sh)
expect 0 "prepared 2 shards by batch" "$Q" "${SH[@]}" --prepare-shards 2
for i in 0 1; do "$Q" "${SH[@]}" --shard $i/2 >"sh$i.log" 2>&1 || bad "shard $i: $(cat "sh$i.log")"; done
[ "$(notes_of o_sh/shards/1)" = "$want" ] && ok "a shard's summary.json: the note" || bad "shard 1 notes: $(notes_of o_sh/shards/1)"
expect 0 "PASSED" "$Q" merge o_sh
[ "$(notes_of o_sh)" = "$want" ] && ok "merged summary.json: the shards' note once" || bad "merged notes: $(notes_of o_sh)"
"$Q" inspect bad_ints.onnx >i_ints.out 2>&1
grep -q "^warning: Gather 'g': its constant indices 'ind' hold 5 at element \[1\]" i_ints.out &&
    ok "inspect: a Constant's value_ints out of range said" || bad "inspect bad_ints.onnx: $(cat i_ints.out)"
"$Q" inspect gi.onnx >i_gi.out 2>&1
grep -q "^warning: GatherElements 'ge': its indices 'sel' are the input 'sel' as fed: not checked here" i_gi.out &&
    ok "inspect: an input's indices said checked per batch, not here" || bad "inspect gi.onnx: $(cat i_gi.out)"
grep -q "^warning: GatherND 'nd': its indices 'pairs' are the input 'pairs' as fed: not checked here" i_gi.out &&
    ok "inspect: a GatherND's input indices said checked per batch" || bad "inspect gi.onnx: $(cat i_gi.out)"
report
