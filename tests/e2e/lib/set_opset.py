"""set_opset.py IN.onnx OUT.onnx N: IN with its default domain's opset_import set to N
(ModelProto.opset_import = 8; OperatorSetIdProto domain = 1, version = 2), nothing else changed,
as an exporter of that opset would declare it. python3 alone."""
import sys

from pbwire import enc, fields, ld


def default_domain(entry):
    return not [v for f, _, v, _, _ in fields(entry) if f == 1 and v]


def with_version(entry, n):
    kept = b"".join(entry[s:e] for f, _, _, s, e in fields(entry) if f != 2)
    return kept + enc(2 << 3 | 0) + enc(n)


model = open(sys.argv[1], "rb").read()
out = bytearray()
for f, wt, v, s, e in fields(model):
    out += ld(8, with_version(v, int(sys.argv[3]))) if f == 8 and default_domain(v) else model[s:e]
open(sys.argv[2], "wb").write(bytes(out))
