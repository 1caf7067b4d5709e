"""qa8conv_models.py DIR: the models of e2e/qa8conv (QA round 8a's defects 1, 3, 5 and 9 of
convert's check and head size), with the batches they are checked on. Written with pbwire alone
(gather_pb's pieces), as the other e2e model writers are.

  att18.onnx      an Attention node at opset 18, where no such operator exists (ORT refuses it)
  dangling.onnx   y = Relu(x) beside a node reading 'zz', which nothing defines (ORT refuses it)
  kv.onnx         a decomposed attention y and kv = stack(k, v), which no attention feeds;
                  kv_in.npz, kv_exp.npz (PyTorch's outputs with kv off by 2e-3 everywhere)
  t5.onnx         a chain with a dynamic head axis "hd", scale 1 (T5), heads of 12 in hd_in.npz
  s64.onnx        the same with scale 1/8 (1/sqrt(64)), heads of 12
  proj.onnx       q, k, v projected from x [batch,seq,24] (MatMul, Reshape [0,0,2,12],
                  Transpose), declared [batch,2,seq,"hd"]: the graph fixes the head at 12
  full.npz        batches of kv.onnx's inputs whose mask rows are all full (no padded key)
  pos.onnx        kv.onnx's y with an int64 input 'pos' passed through (nothing to generate)
"""
import os
import sys

import numpy as np

from gather_pb import a_ints, f, node, num

F32, F16, I64, BOOL = 1, 10, 7, 9
H = 2
OUT = sys.argv[1]


def vi(name, elem, dims):
    """A value's type: dims are sizes or names."""
    shape = b"".join(f(1, f(2, d) if isinstance(d, str) else num(1, d)) for d in dims)
    return f(1, name) + f(2, f(1, num(1, elem) + f(2, shape)))


def a_int(name, x):
    """An integer attribute; a negative one as protobuf writes it (two's complement, 64 bits)."""
    return f(5, f(1, name) + num(3, x & ((1 << 64) - 1)) + num(20, 2))


def init(name, arr, elem=F32):
    arr = np.asarray(arr, {F32: "<f4", I64: "<i8"}[elem])
    return b"".join(num(1, d) for d in arr.shape) + num(2, elem) + f(8, name) + f(9, arr.tobytes())


def save(name, nodes, inputs, outputs, inits=(), opset=18, vinfo=()):
    g = b"".join(f(1, n) for n in nodes) + f(2, "g") + b"".join(f(5, t) for t in inits)
    g += b"".join(f(11, i) for i in inputs) + b"".join(f(12, o) for o in outputs) + b"".join(f(13, x) for x in vinfo)
    m = num(1, 8) + f(2, "qa8conv") + f(7, g) + f(8, f(1, "") + num(2, opset))
    with open(os.path.join(OUT, name), "wb") as fp:
        fp.write(m)


def chain(scale):
    """keys = mask[:, None, None, :]; y = softmax(where(keys, q k^T * c, -inf)) v."""
    nodes = [node("Unsqueeze", "unsq", ["mask", "ax12"], "keys"), node("Transpose", "tr", ["k"], "kt", a_ints("perm", [0, 1, 3, 2])),
             node("MatMul", "qk", ["q", "kt"], "s"), node("Mul", "sc", ["s", "c"], "ss"),
             node("Where", "fill", ["keys", "ss", "neg"], "sw"), node("Softmax", "sm", ["sw"], "p", a_int("axis", -1)),
             node("MatMul", "pv", ["p", "v"], "y")]
    inits = [init("c", np.float32(scale)), init("ax12", [1, 2], I64), init("neg", np.float32(-np.inf))]
    return nodes, inits


MASK = vi("mask", BOOL, ["batch", "seq"])
rng = np.random.default_rng(8)

# 1: models ORT refuses for reasons of their own, which no rewrite may repair unseen
save("att18.onnx", [node("Attention", "att", ["q", "k", "v"], "y")], [vi(n, F16, ["batch", H, "seq", 8]) for n in "qkv"],
     [vi("y", F16, ["batch", H, "seq", 8])])
save("dangling.onnx", [node("Relu", "relu", ["x"], "y"), node("Neg", "dead", ["zz"], "d")], [vi("x", F32, ["batch", "seq", 4])],
     [vi("y", F32, ["batch", "seq", 4])])

# 3: an output no attention feeds, beside one it does
n, i = chain(0.35)
n += [node("Unsqueeze", "k0", ["k", "ax0"], "k0"), node("Unsqueeze", "v0", ["v", "ax0"], "v0"),
      f(1, "k0") + f(1, "v0") + f(2, "kv") + f(3, "stack") + f(4, "Concat") + a_int("axis", 0)]
qkv8 = [vi(x, F32, ["batch", H, "seq", 8]) for x in "qkv"]
save("kv.onnx", n, qkv8 + [MASK], [vi("y", F32, ["batch", H, "seq", 8]), vi("kv", F32, [2, "batch", H, "seq", 8])],
     i + [init("ax0", [0], I64)])
B, L = 2, 5
q, k, v = [rng.standard_normal((B, H, L, 8)).astype(np.float32) for _ in range(3)]
m = np.arange(L)[None] < np.array([5, 3])[:, None]
s = np.where(m[:, None, None, :], (q @ k.transpose(0, 1, 3, 2)) * np.float32(0.35), -np.inf)
p = np.exp(s - s.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
np.savez(os.path.join(OUT, "kv_in.npz"), q=q, k=k, v=v, mask=m)
np.savez(os.path.join(OUT, "kv_exp.npz"), y=(p @ v).astype(np.float32), kv=np.stack([k, v]) + np.float32(2e-3))
np.savez(os.path.join(OUT, "full.npz"), q=q, k=k, v=v, mask=np.ones((B, L), bool))

# 5: a dynamic head axis; a scale is no head size
for name, scale in (("t5.onnx", 1.0), ("s64.onnx", 0.125)):
    n, i = chain(scale)
    save(name, n, [vi(x, F32, ["batch", H, "seq", "hd"]) for x in "qkv"] + [MASK], [vi("y", F32, ["batch", H, "seq", "hd"])], i)
q, k, v = [rng.standard_normal((3, H, 6, 12)).astype(np.float32) for _ in range(3)]
np.savez(os.path.join(OUT, "hd_in.npz"), q=q, k=k, v=v, mask=np.arange(6)[None] < np.array([6, 4, 2])[:, None])
n, i = chain(0.125)
for x in "qkv":
    n = [node("MatMul", "proj_" + x, ["x", "w" + x], x + "_flat"), node("Reshape", "heads_" + x, [x + "_flat", "split"], x + "_h"),
         node("Transpose", "perm_" + x, [x + "_h"], x, a_ints("perm", [0, 2, 1, 3]))] + n
    i.append(init("w" + x, rng.standard_normal((24, 24)) / 5))
save("proj.onnx", n, [vi("x", F32, ["batch", "seq", 24]), MASK], [vi("y", F32, ["batch", H, "seq", "hd"])],
     i + [init("split", [0, 0, H, 12], I64)], vinfo=[vi(x, F32, ["batch", H, "seq", "hd"]) for x in "qkv"])

# 9: an input nothing can be generated for (int64, no table it indexes)
n, i = chain(0.35)
save("pos.onnx", n + [node("Identity", "pos_id", ["pos"], "pos_out")], qkv8 + [MASK, vi("pos", I64, ["batch"])],
     [vi("y", F32, ["batch", H, "seq", 8]), vi("pos_out", I64, ["batch"])], i)
np.savez(os.path.join(OUT, "pos_full.npz"), q=q[:, :, :, :8].copy(), k=k[:, :, :, :8].copy(), v=v[:, :, :, :8].copy(),
         mask=np.ones((3, 6), bool), pos=np.arange(3, dtype=np.int64))
