"""rename_input.py IN.onnx OUT.onnx OLD NEW [OLD NEW ...]: IN with each graph input OLD named NEW
where it is declared (GraphProto.input = 11, value_info = 13; ValueInfoProto name = 1) and where a
node reads it (GraphProto.node = 1; NodeProto input = 1), nothing else changed: a user's export
whose mask is called otherwise. python3 alone."""
import sys

from pbwire import fields, ld


def renamed(msg, field, names):
    """msg with each string field `field` that names an OLD input holding NEW instead."""
    return b"".join(ld(f, names.get(bytes(v), bytes(v))) if f == field and wt == 2 else msg[s:e]
                    for f, wt, v, s, e in fields(msg))


def graph(g, names):
    out = bytearray()
    for f, _, v, s, e in fields(g):
        if f == 1: out += ld(1, renamed(bytes(v), 1, names))
        elif f in (11, 13): out += ld(f, renamed(bytes(v), 1, names))
        else: out += g[s:e]
    return bytes(out)


args = sys.argv[3:]
names = {args[i].encode(): args[i + 1].encode() for i in range(0, len(args), 2)}
model = open(sys.argv[1], "rb").read()
out = bytearray()
for f, _, v, s, e in fields(model):
    out += ld(7, graph(bytes(v), names)) if f == 7 else model[s:e]
open(sys.argv[2], "wb").write(bytes(out))
