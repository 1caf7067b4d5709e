"""inits_as_inputs.py IN.onnx OUT.onnx: the model with every initializer declared as a graph input
too, as torch.onnx.export(..., keep_initializers_as_inputs=True) writes it (inputs with a default,
IR >= 4); a protobuf rewrite with python3 alone (ModelProto.graph = 7, GraphProto.initializer = 5,
GraphProto.input = 11; TensorProto.dims = 1, data_type = 2, name = 8)."""
import sys

from pbwire import enc, fields, ld, varint


def value_info(init):
    name, elem, dims = b"", 1, []
    for f, wt, v, _, _ in fields(init):
        if f == 8: name = bytes(v)
        elif f == 2: elem = v
        elif f == 1 and wt == 0: dims.append(v)
        elif f == 1:  # packed
            j = 0
            while j < len(v):
                d, j = varint(v, j); dims.append(d)
    shape = b"".join(ld(1, enc(1 << 3) + enc(d)) for d in dims)
    tensor_type = enc(1 << 3) + enc(elem) + ld(2, shape)
    return ld(1, name) + ld(2, ld(1, tensor_type))


def main():
    b = open(sys.argv[1], "rb").read()
    out = bytearray()
    for f, wt, v, s, e in fields(b):
        if f != 7:
            out += b[s:e]; continue
        graph = bytes(v) + b"".join(ld(11, value_info(bytes(x))) for g, _, x, _, _ in fields(v) if g == 5)
        out += ld(7, graph)
    open(sys.argv[2], "wb").write(bytes(out))


main()
