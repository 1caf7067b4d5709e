"""strip_denotations.py IN.onnx OUT.onnx: the model with no dimension denotation on its graph's
inputs, outputs and value_info, as exporters other than ortqual write static shapes (a protobuf
rewrite of the path to TensorShapeProto.Dimension.denotation, field 3; python3 alone)."""
import sys

from pbwire import enc, varint

# message -> {field: the message it holds}, from onnx.proto; Dimension drops field 3
PATH = {"Model": {7: "Graph"}, "Graph": {11: "ValueInfo", 12: "ValueInfo", 13: "ValueInfo"},
        "ValueInfo": {2: "Type"}, "Type": {1: "TensorType"}, "TensorType": {2: "Shape"},
        "Shape": {1: "Dimension"}, "Dimension": {}}


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
            if msg == "Dimension" and field == 3: continue
            if field in PATH[msg]:
                body = rewrite(b[j:i], PATH[msg][field])
                out += enc(key) + enc(len(body)) + body; continue
        else: raise SystemExit("unsupported wire type %d" % wire)
        out += b[start:i]
    return bytes(out)


data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(rewrite(data, "Model"))
