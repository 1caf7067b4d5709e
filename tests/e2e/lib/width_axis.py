"""width_axis.py OUTDIR: e2e/seq_width's models and batches (QA round 6, defects 1 and 4), written
with gather_pb's protobuf pieces (no onnx package). B = 3 events padded to L = 8, widths F = 5.
- static_attn.onnx: a static export, x [3,8,5] and attention_mask int64 [3,8] added to the scores
  as (1 - mask) * -1e9; y [3,8,5] per position and cls [3,4,8]: 4 rows of L = 8 class scores per
  event (no sequence axis; its last axis only has L's size). sa_in.npz, sa_ok.npz, and sa_bad.npz
  with cls wrong past each event's length (the elements a masked axis 2 would set apart).
- dyn_noshape.onnx: the same with dims batch, seq and cls declared with no shape (older exporters).
- static_width.onnx: y = x * mask and scores [3,4,8] (no attention): convert's check; sw_*.npz.
- causal_static.onnx: x [3,8,5] and causal_mask bool [8,8] (lower triangle) into the scores by
  Where(mask, s, -inf); cs_io.npz holds its inputs and output."""
import os
import sys

import numpy as np

from gather_pb import a_int, a_ints, f, node, num

B, L, F, C = 3, 8, 5, 4
LENS = (7, 5, 2)


def dims(shape):
    return b"".join(f(1, f(2, d) if isinstance(d, str) else num(1, d)) for d in shape)


def vi(name, shape, elem=1):
    t = num(1, elem) + (f(2, dims(shape)) if shape is not None else b"")
    return f(1, name) + f(2, f(1, t))


def init(name, arr):
    arr = np.ascontiguousarray(arr)
    elem = {np.float32: 1, np.int64: 7}[arr.dtype.type]
    return b"".join(num(1, d) for d in arr.shape) + num(2, elem) + f(8, name) + f(9, arr.tobytes())


def save(path, nodes, inputs, outputs, inits):
    g = b"".join(f(1, n) for n in nodes) + f(2, "g") + b"".join(f(5, t) for t in inits)
    g += b"".join(f(11, i) for i in inputs) + b"".join(f(12, o) for o in outputs)
    with open(path, "wb") as out:
        out.write(num(1, 8) + f(2, "e2e") + f(7, g) + f(8, f(1, "") + num(2, 18)))


def cls_nodes(out):
    """The mean of x over the sequence times W, reshaped [B, C, L]: class scores, no sequence."""
    return [node("ReduceMean", "rm", ["x", "ax1"], "xm", a_int("keepdims", 0)), node("MatMul", "mw", ["xm", "W"], "z0"),
            node("Reshape", "rs", ["z0", "shp"], out)]


def softmax(s):
    p = np.exp(s - s.max(-1, keepdims=True))
    return p / p.sum(-1, keepdims=True)


def main(d):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((F, C * L)).astype(np.float32)
    consts = [init("one", np.array(1, np.float32)), init("big", np.array(-1e9, np.float32)),
              init("ax1", np.array([1], np.int64)), init("ax2", np.array([2], np.int64)), init("W", W)]
    attn = [node("Cast", "c", ["attention_mask"], "mf", a_int("to", 1)), node("Sub", "s", ["one", "mf"], "inv"),
            node("Mul", "m", ["inv", "big"], "b2"), node("Unsqueeze", "u", ["b2", "ax1"], "bias"),
            node("Transpose", "t", ["x"], "xt", a_ints("perm", [0, 2, 1])), node("MatMul", "qk", ["x", "xt"], "sc"),
            node("Add", "a", ["sc", "bias"], "sb"), node("Softmax", "sm", ["sb"], "p", a_int("axis", 2)),
            node("MatMul", "pv", ["p", "x"], "y")] + cls_nodes("cls")
    save(os.path.join(d, "static_attn.onnx"), attn, [vi("x", [B, L, F]), vi("attention_mask", [B, L], 7)],
         [vi("y", [B, L, F]), vi("cls", [B, C, L])], consts + [init("shp", np.array([B, C, L], np.int64))])
    save(os.path.join(d, "dyn_noshape.onnx"), attn, [vi("x", ["batch", "seq", F]),
         vi("attention_mask", ["batch", "seq"], 7)], [vi("y", ["batch", "seq", F]), vi("cls", None)],
         consts + [init("shp", np.array([-1, C, L], np.int64))])
    width = [node("Cast", "c", ["attention_mask"], "mf", a_int("to", 1)), node("Unsqueeze", "u", ["mf", "ax2"], "mu"),
             node("Mul", "m", ["x", "mu"], "y")] + cls_nodes("scores")
    save(os.path.join(d, "static_width.onnx"), width, [vi("x", [B, L, F]), vi("attention_mask", [B, L], 7)],
         [vi("y", [B, L, F]), vi("scores", [B, C, L])], consts + [init("shp", np.array([B, C, L], np.int64))])
    x = rng.standard_normal((B, L, F)).astype(np.float32)
    m = np.zeros((B, L), np.int64)
    for b, n in enumerate(LENS):
        m[b, :n] = 1
    y = (softmax(x @ x.transpose(0, 2, 1) + ((1 - m) * -1e9)[:, None, :]) @ x).astype(np.float32)
    cls = (x.mean(1) @ W).reshape(B, C, L).astype(np.float32)
    bad = cls.copy()
    for b, n in enumerate(LENS):
        bad[b, :, n:] += 3.0  # every class column at or past the event's length
    np.savez(os.path.join(d, "sa_in.npz"), x=x, attention_mask=m)
    np.savez(os.path.join(d, "sa_ok.npz"), y=y, cls=cls)
    np.savez(os.path.join(d, "sa_bad.npz"), y=y, cls=bad)
    np.savez(os.path.join(d, "sw_ok.npz"), y=x * m[:, :, None], scores=cls)
    np.savez(os.path.join(d, "sw_bad.npz"), y=x * m[:, :, None], scores=bad)
    causal = [node("Transpose", "t", ["x"], "xt", a_ints("perm", [0, 2, 1])), node("MatMul", "qk", ["x", "xt"], "sc"),
              node("Where", "w", ["causal_mask", "sc", "ninf"], "sm"),
              node("Softmax", "sx", ["sm"], "p", a_int("axis", 2)), node("MatMul", "pv", ["p", "x"], "y")]
    save(os.path.join(d, "causal_static.onnx"), causal, [vi("x", [B, L, F]), vi("causal_mask", [L, L], 9)],
         [vi("y", [B, L, F])], [init("ninf", np.array(-np.inf, np.float32))])
    cm = np.tril(np.ones((L, L), bool))
    y = (softmax(np.where(cm, x @ x.transpose(0, 2, 1), -np.inf)) @ x).astype(np.float32)
    np.savez(os.path.join(d, "cs_io.npz"), x=x, causal_mask=cm, y=y)


if __name__ == "__main__":
    main(sys.argv[1])
