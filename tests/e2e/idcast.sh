#!/usr/bin/env bash
# Ids that reach a Gather through a Cast are checked per batch as the Cast makes them, the value
# ONNX Runtime indexes with: a float id truncated toward zero (4.9 is row 4), an int64 id cast to
# int32 kept to its low 32 bits (4294967298 is row 2). ORT runs such a batch; one that the Cast
# puts outside the table is exit 2 before anything runs, one line naming the file, the input, the
# element, both values and the node, where ORT would fail the run (exit 3, its own words).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

# ic.onnx: fid float [4] -> Cast 'cf' to int64 -> Gather 'emb' over E [5,2]; wid int64 [3] ->
# Cast 'cw' to int32 -> Gather 'g32' over W [3,2]; E and W zeros, so the outputs are zeros
$PY - "$OQ_SOURCE_DIR/tests/e2e/lib" <<'PY' || fail "writing the model and batches"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from gather_pb import f, num, vinfo, node, a_int, zeros  # vinfo's elem: 1 float, 6 int32, 7 int64
g = f(1, node("Cast", "cf", ["fid"], "fid64", a_int("to", 7))) + f(1, node("Gather", "emb", ["E", "fid64"], "rows"))
g += f(1, node("Cast", "cw", ["wid"], "wid32", a_int("to", 6))) + f(1, node("Gather", "g32", ["W", "wid32"], "wrows"))
g += f(2, "g") + f(5, zeros("E", 5, 2)) + f(5, zeros("W", 3, 2))
g += f(11, vinfo("fid", 1, [4])) + f(11, vinfo("wid", 7, [3]))
g += f(12, vinfo("rows", 1, [4, 2])) + f(12, vinfo("wrows", 1, [3, 2]))
open("ic.onnx", "wb").write(num(1, 8) + f(7, g) + f(8, f(1, "") + num(2, 18)))
out = dict(rows=np.zeros((4, 2), np.float32), wrows=np.zeros((3, 2), np.float32))
fid = np.array([0, 4.9, -5.9, 2], np.float32)
wid = np.array([0, 4294967298, -3], np.int64)
np.savez("good.npz", fid=fid, wid=wid, **out)
b = fid.copy(); b[1] = 5.5; np.savez("bad_float.npz", fid=b, wid=np.array([0, 1, -3], np.int64), **out)
b = wid.copy(); b[2] = 4294967299; np.savez("bad_wrap.npz", fid=fid, wid=b, **out)
PY

run() { "$Q" validate --model ic.onnx --configs expected,cpu:model:fp32 --inputs "$1" --outdir "$2" --threads 1; }

# ORT runs ids that are in range as the Casts make them (the int64 past int32 wraps to row 2)
expect 0 "verdict: PASSED" run good.npz v0
expect 2 "^ortqual validate: bad_float.npz: input 'fid' holds 5.5 at element \[1\], which becomes 5 through Cast 'cf' to int64; the model's Gather 'emb' reads a table of 5 rows \(ids -5..4\)" \
    run bad_float.npz v1
expect 2 "^ortqual validate: bad_wrap.npz: input 'wid' holds 4294967299 at element \[2\], which becomes 3 through Cast 'cw' to int32; the model's Gather 'g32' reads a table of 3 rows \(ids -3..2\)" \
    run bad_wrap.npz v2
# refused before anything ran: nothing but error.json
for d in v1 v2; do
    [ "$(ls "$d" 2>&1)" = error.json ] && ok "$d: nothing but error.json" || bad "$d holds $(ls "$d" | tr '\n' ' ')"
done
# inspect promises the check validate makes, naming the Cast
"$Q" inspect ic.onnx >i.out 2>&1
grep -q "^warning: Gather 'emb': its indices 'fid64' are the input 'fid' through Cast 'cf' to int64: not checked here; validate and bench hold each batch's, as those Casts make it," i.out &&
    ok "inspect: ids through a Cast said checked per batch as cast" || bad "inspect ic.onnx: $(cat i.out)"
report
