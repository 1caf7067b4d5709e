"""if_model.py OUT.onnx IN.npz: a model whose If's then-branch is an attention chain reading the
top-level initializer `c` (its scale) and the outer inputs q, k, v: values a subgraph captures,
which ONNX leaves implicit (convert dropped `c` as unused). Written with pbwire alone, as the
other e2e model editors are; its inputs beside it. Its writers (node, graph, model...) are
subgraph_models.py's too."""
import struct
import sys

import numpy as np

from pbwire import enc, ld

B, H, L, D = 1, 2, 4, 8


def vi(f, v):
    return enc(f << 3) + enc(v)


def tensor(name, arr):
    et = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}[arr.dtype]
    return b"".join(vi(1, d) for d in arr.shape) + vi(2, et) + ld(8, name.encode()) + ld(9, arr.tobytes())


def attr(name, v):
    b = ld(1, name.encode())
    if isinstance(v, int): return b + vi(3, v & ((1 << 64) - 1)) + vi(20, 2)
    if isinstance(v, list): return b + b"".join(vi(8, x & ((1 << 64) - 1)) for x in v) + vi(20, 7)
    return b + ld(6, v) + vi(20, 5)  # a graph


def node(op, ins, outs, **a):
    b = b"".join(ld(1, i.encode()) for i in ins) + b"".join(ld(2, o.encode()) for o in outs)
    b += ld(3, (op + "_" + outs[0]).encode()) + ld(4, op.encode())
    return b + b"".join(ld(5, attr(k, v)) for k, v in a.items())


def valinfo(name, et, shape):
    dims = b"".join(ld(1, vi(1, d)) for d in shape)
    return ld(1, name.encode()) + ld(2, ld(1, vi(1, et) + ld(2, dims)))


def graph(nodes, inputs, outputs, inits=(), name="g"):
    b = b"".join(ld(1, n) for n in nodes) + ld(2, name.encode()) + b"".join(ld(5, t) for t in inits)
    return b + b"".join(ld(11, i) for i in inputs) + b"".join(ld(12, o) for o in outputs)


def model(top, opset, producer=b"if_model"):
    return vi(1, 8) + ld(2, producer) + ld(7, top) + ld(8, ld(1, b"") + vi(2, opset))


Y = valinfo("y", 1, [B, H, L, D])
CHAIN = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["s"]),
         node("Mul", ["s", "c"], ["ss"]), node("Softmax", ["ss"], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])]


def main():
    then = graph(CHAIN, [], [Y], name="then")
    other = graph([node("Identity", ["v"], ["ye"])], [], [valinfo("ye", 1, [B, H, L, D])], name="else")
    top = graph([node("If", ["cond"], ["y"], then_branch=then, else_branch=other)],
                [valinfo(n, 1, [B, H, L, D]) for n in "qkv"] + [valinfo("cond", 9, [])], [Y],
                [tensor("c", np.array(0.3, np.float32))])
    open(sys.argv[1], "wb").write(model(top, 18))
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((B, H, L, D)).astype(np.float32) for _ in range(3))
    np.savez(sys.argv[2], q=q, k=k, v=v, cond=np.array(True))


if __name__ == "__main__":
    main()
