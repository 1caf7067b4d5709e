"""two_masks.py IN.onnx OUT.onnx MASK NEW OP: IN with a second input NEW declared as MASK is
(GraphProto.input = 11; ValueInfoProto name = 1) and combined with it by a node OP (Mul for a
float mask, And for a bool one) in front of every reader of MASK (GraphProto.node = 1; NodeProto
input = 1, output = 2, name = 3, op_type = 4): a model with two padding masks, each of which
flows into the attention scores. python3 alone."""
import sys

from pbwire import fields, ld, rewire


def named(vi, name):
    return b"".join(ld(1, name) if f == 1 else vi[s:e] for f, _, v, s, e in fields(vi))


src, dst, mask, new, op = sys.argv[1:6]
mask, new, op = mask.encode(), new.encode(), op.encode()
both = mask + b"_both"
b = open(src, "rb").read()
out = bytearray()
for f, _, v, s, e in fields(b):
    if f != 7:
        out += b[s:e]; continue
    g = bytes(v)
    graph = ld(1, ld(1, mask) + ld(1, new) + ld(2, both) + ld(3, b"two_masks_" + op) + ld(4, op))
    for gf, _, x, gs, ge in fields(g):
        x = bytes(x)
        if gf == 1: graph += ld(1, rewire(x, mask, both))
        elif gf == 11 and [y for k, _, y, _, _ in fields(x) if k == 1 and bytes(y) == mask]:
            graph += g[gs:ge] + ld(11, named(x, new))
        else: graph += g[gs:ge]
    out += ld(7, graph)
open(dst, "wb").write(bytes(out))
