"""strip_denotations.py IN.onnx OUT.onnx: the model with no dimension denotation on its graph's
inputs, outputs and value_info, as exporters other than ortqual write static shapes (a protobuf
rewrite of the path to TensorShapeProto.Dimension.denotation, field 3; python3 alone)."""
import sys

from pbwire import rewrite

# message -> {field: the message it holds}, from onnx.proto; Dimension drops field 3
PATH = {"Model": {7: "Graph"}, "Graph": {11: "ValueInfo", 12: "ValueInfo", 13: "ValueInfo"},
        "ValueInfo": {2: "Type"}, "Type": {1: "TensorType"}, "TensorType": {2: "Shape"},
        "Shape": {1: "Dimension"}, "Dimension": {}}


data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(rewrite(data, "Model", PATH, lambda msg, f: msg == "Dimension" and f == 3))
