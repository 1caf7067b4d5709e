"""unknown_dims.py IN.onnx OUT.onnx: the model with every dimension of its graph's outputs
unknown ("?": neither a size nor a name), as some exporters leave them, so that an output's
axes can be told only from the shape it has when it runs (a protobuf rewrite of the path to
TensorShapeProto.Dimension's dim_value and dim_param, fields 1 and 2; python3 alone)."""
import sys

from pbwire import rewrite

# message -> {field: the message it holds}, from onnx.proto: the graph's outputs (field 12) only
PATH = {"Model": {7: "Graph"}, "Graph": {12: "ValueInfo"}, "ValueInfo": {2: "Type"}, "Type": {1: "TensorType"},
        "TensorType": {2: "Shape"}, "Shape": {1: "Dimension"}, "Dimension": {}}


data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(rewrite(data, "Model", PATH, lambda msg, f: msg == "Dimension" and f in (1, 2)))
