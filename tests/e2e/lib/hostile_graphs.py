"""hostile_graphs.py DIR: the small models of QA round 8a that a user may bring, with their batches
(numpy), written with pbwire alone:
- kv.onnx: a static stacked KV output present [2, B, H, L, D] with B = H = 2 (axes 0, 1 and 2 of
  the batch's size), kv_io.npz its inputs and outputs wrong by 1 at present[1,0,0,3,:], a valid
  element of event 0's value cache (kv_in.npz, kv_exp.npz: the same, apart);
- ids.onnx: a Gather of 50 rows, ids_io.npz its batch, ids_bad.npz one with id 77;
- short.onnx: w in external data short.bin, 40 bytes of the 64 it declares; ext_io.npz;
- dupscale.onnx: the score factor c an initializer (0.5) and a Constant node (0.05);
- dupnodes.onnx: a, the output of Relu and of Neg;
- cycle.onnx: add_a (a = x + b) and relu_b (b = Relu(a))."""
import os
import struct
import sys

import numpy as np

from pbwire import enc, ld

F32, I64, BOOL = 1, 7, 9


def num(field, v):
    return enc(field << 3) + enc(v & ((1 << 64) - 1))


def init(name, arr, et=F32, external=()):
    a = np.asarray(arr, np.int64 if et == I64 else np.float32)
    out = b"".join(num(1, d) for d in a.shape) + num(2, et) + ld(8, name.encode())
    if not external: return out + ld(9, a.tobytes())
    return out + b"".join(ld(13, ld(1, k.encode()) + ld(2, v.encode())) for k, v in external) + num(14, 1)


def attribute(key, v):
    head = ld(1, key.encode())
    if isinstance(v, float): return head + enc(2 << 3 | 5) + struct.pack("<f", v) + num(20, 1)
    if isinstance(v, int): return head + num(3, v) + num(20, 2)
    if isinstance(v, bytes): return head + ld(5, v) + num(20, 4)
    return head + b"".join(num(8, x) for x in v) + num(20, 7)


def op(kind, ins, outs, name=None, **attrs):
    out = b"".join(ld(1, i.encode()) for i in ins) + b"".join(ld(2, o.encode()) for o in outs)
    out += ld(3, (name or kind + "_" + outs[0]).encode()) + ld(4, kind.encode())
    return out + b"".join(ld(5, attribute(k, v)) for k, v in attrs.items())


def value(name, dims, et=F32):
    shape = b"".join(ld(1, ld(2, d.encode()) if isinstance(d, str) else num(1, d)) for d in dims)
    return ld(1, name.encode()) + ld(2, ld(1, num(1, et) + ld(2, shape)))


def write(path, nodes, inputs, outputs, inits=()):
    g = b"".join(ld(1, n) for n in nodes) + ld(2, b"g") + b"".join(ld(5, t) for t in inits)
    g += b"".join(ld(11, i) for i in inputs) + b"".join(ld(12, o) for o in outputs)
    with open(os.path.join(OUT, path), "wb") as f:
        f.write(num(1, 8) + ld(2, b"qa8val") + ld(7, g) + ld(8, ld(1, b"") + num(2, 18)))


def savez(name, **arrays):
    np.savez(os.path.join(OUT, name), **arrays)


def stacked_kv(rng):
    b, h, l, d = 2, 2, 5, 4
    nodes = [op("Cast", ["mask"], ["mf"], to=F32), op("Unsqueeze", ["mf", "ax13"], ["m4"]),
             op("Mul", ["k", "m4"], ["km"]), op("Mul", ["v", "m4"], ["vm"]),
             op("Unsqueeze", ["km", "ax0"], ["k0"]), op("Unsqueeze", ["vm", "ax0"], ["v0"]),
             op("Concat", ["k0", "v0"], ["present"], axis=0)]
    write("kv.onnx", nodes, [value("k", [b, h, l, d]), value("v", [b, h, l, d]), value("mask", [b, l], BOOL)],
          [value("present", [2, b, h, l, d])], [init("ax13", [1, 3], I64), init("ax0", [0], I64)])
    k, v = (rng.standard_normal((b, h, l, d)).astype(np.float32) for _ in range(2))
    m = np.arange(l)[None] < np.array([5, 2])[:, None]
    bad = np.stack([k * m[:, None, :, None], v * m[:, None, :, None]]).astype(np.float32)
    bad[1, 0, 0, 3, :] += 1.0
    savez("kv_io.npz", k=k, v=v, mask=m, present=bad)
    savez("kv_in.npz", k=k, v=v, mask=m)
    savez("kv_exp.npz", present=bad)


def gather(rng):
    table = rng.standard_normal((50, 8)).astype(np.float32)
    nodes = [op("Gather", ["table", "ids"], ["e"]), op("Cast", ["mask"], ["mf"], to=F32),
             op("Unsqueeze", ["mf", "axm1"], ["m3"]), op("Mul", ["e", "m3"], ["y"])]
    write("ids.onnx", nodes, [value("ids", ["batch", "seq"], I64), value("mask", ["batch", "seq"], I64)],
          [value("y", ["batch", "seq", 8])], [init("table", table), init("axm1", [-1], I64)])
    ids = rng.integers(0, 50, (3, 7))
    mask = (np.arange(7)[None] < np.array([7, 4, 2])[:, None]).astype(np.int64)
    y = (table[ids] * mask[..., None]).astype(np.float32)
    savez("ids_io.npz", ids=ids, mask=mask, y=y)
    ids[0, 0] = 77
    savez("ids_bad.npz", ids=ids, mask=mask, y=y)


def external():
    w = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
    with open(os.path.join(OUT, "short.bin"), "wb") as f:
        f.write(w.tobytes()[:40])
    x = value("x", ["batch", "seq", 4])
    write("short.onnx", [op("MatMul", ["x", "w"], ["y"])], [x], [value("y", ["batch", "seq", 4])],
          [init("w", w, external=[("location", "short.bin"), ("length", "64")])])
    ones = np.ones((2, 3, 4), np.float32)
    savez("ext_io.npz", x=ones, y=ones @ w)


def defined_twice():
    qkv = [value(n, ["batch", 2, "seq", 4]) for n in "qkv"]
    chain = [op("Unsqueeze", ["mask", "ax12"], ["keys"]), op("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             op("MatMul", ["q", "kt"], ["s"]), op("Mul", ["s", "c"], ["ss"]),
             op("Where", ["keys", "ss", "neg"], ["sw"]), op("Softmax", ["sw"], ["p"], axis=-1),
             op("MatMul", ["p", "v"], ["y"])]
    write("dupscale.onnx", [op("Constant", [], ["c"], value=init("", np.array(0.05)))] + chain,
          qkv + [value("mask", ["batch", "seq"], BOOL)], [value("y", ["batch", 2, "seq", 4])],
          [init("c", np.array(0.5)), init("ax12", [1, 2], I64), init("neg", np.array(-np.inf))])
    x, y = value("x", ["batch", 4]), value("y", ["batch", 4])
    write("dupnodes.onnx", [op("Relu", ["x"], ["a"], name="relu_a"), op("Neg", ["x"], ["a"], name="neg_a"),
                            op("Identity", ["a"], ["y"])], [x], [y])
    write("cycle.onnx", [op("Add", ["x", "b"], ["a"], name="add_a"), op("Relu", ["a"], ["b"], name="relu_b"),
                         op("Identity", ["b"], ["y"])], [x], [y])


OUT = sys.argv[1]
generator = np.random.default_rng(0)
stacked_kv(generator)
gather(generator)
external()
defined_twice()
