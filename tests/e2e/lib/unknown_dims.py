"""unknown_dims.py IN.onnx OUT.onnx: the model with every dimension of its graph's outputs
unknown ("?": neither a size nor a name), as some exporters leave them, so that an output's
axes can be told only from the shape it has when it runs (a protobuf rewrite of the path to
TensorShapeProto.Dimension's dim_value and dim_param, fields 1 and 2; python3 alone)."""
import sys

from pbwire import enc, varint

# message -> {field: the message it holds}, from onnx.proto: the graph's outputs (field 12) only
PATH = {"Model": {7: "Graph"}, "Graph": {12: "ValueInfo"}, "ValueInfo": {2: "Type"}, "Type": {1: "TensorType"},
        "TensorType": {2: "Shape"}, "Shape": {1: "Dimension"}, "Dimension": {}}


def rewrite(b, msg):
    out, i = bytearray(), 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0: _, i = varint(b, i)
        elif wire == 1: i += 8
        elif wire == 5: i += 4
        elif wire == 2:
            n, j = varint(b, i); i = j + n
            if field in PATH[msg]:
                body = rewrite(b[j:i], PATH[msg][field])
                out += enc(key) + enc(len(body)) + body; continue
        else: raise SystemExit("unsupported wire type %d" % wire)
        if msg == "Dimension" and field in (1, 2): continue
        out += b[start:i]
    return bytes(out)


data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(rewrite(data, "Model"))
