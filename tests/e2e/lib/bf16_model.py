"""Writes, into the directory given, the bfloat16 models and .npz files of tests/e2e/bf16_inputs.sh
(python3 and numpy alone: the ONNX wire format by hand, no onnx or ml_dtypes package):

    bf16_io.onnx  x bfloat16 [batch,4], w float32 [batch,4] -> y = x (bfloat16), z = float(x) + w
    bf16_in.onnx  the same without y (an output bench times)

and the inputs and expected values, x = 1.5 * i (bfloat16 holds them exactly), w = 0.25:

    in_f32.npz    x as float32 ('<f4', what ortqual writes bfloat16 as)
    in_v2le.npz   x as '<V2' (what numpy.save writes for an ml_dtypes.bfloat16 array)
    in_v2.npz     x as '|V2' (a plain 2-byte void)
    in_inexact.npz  x float32 with x[1,2] = 1.00001 (no bfloat16)
    in_i64.npz    x int64
    in_wv2.npz    x float32, w as '<V2' (a float32 input)
    out.npz       y and z float32;  out_z.npz  z alone (bf16_in.onnx);  out_yv2.npz  y '<V2';  out_zv2.npz  z '<V2'
"""
import io
import os
import sys
import zipfile

import numpy as np

BF16, FLOAT = 16, 1


def varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)


def field(num, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def number(num, v):
    return varint(num << 3) + varint(v)


def value_info(name, elem, dims):
    shape = b"".join(field(1, number(1, d) if isinstance(d, int) else field(2, d)) for d in dims)
    return field(1, name) + field(2, field(1, number(1, elem) + field(2, shape)))


def node(ins, outs, op, name, attrs=b""):
    return b"".join(field(1, i) for i in ins) + b"".join(field(2, o) for o in outs) + field(3, name) + \
        field(4, op) + attrs


def model(with_y):
    to_float = field(5, field(1, "to") + number(3, FLOAT) + number(20, 2))  # AttributeProto INT
    nodes = field(1, node(["x"], ["xf"], "Cast", "cast", to_float))
    nodes += field(1, node(["xf", "w"], ["z"], "Add", "add"))
    outs = field(12, value_info("z", FLOAT, ["batch", 4]))
    if with_y:
        nodes += field(1, node(["x"], ["y"], "Identity", "id"))
        outs = field(12, value_info("y", BF16, ["batch", 4])) + outs
    graph = nodes + field(2, "g") + field(11, value_info("x", BF16, ["batch", 4]))
    graph += field(11, value_info("w", FLOAT, ["batch", 4])) + outs
    return number(1, 8) + field(2, "ortqual-test") + field(7, graph) + field(8, number(2, 17))


def bits(a):
    """float32 values bfloat16 holds exactly, as bfloat16 bits in a 2-byte void array."""
    return (a.view(np.uint32) >> 16).astype("<u2").view("V2")


def savez(path, **arrays):
    """np.savez, with '<V2' where an array's name ends in _le (numpy itself writes '|V2')."""
    with zipfile.ZipFile(path, "w") as z:
        for name, a in arrays.items():
            b = io.BytesIO()
            np.save(b, a)
            data = b.getvalue()
            if name.endswith("_le"):
                name = name[:-3]
                data = data.replace(b"'descr': '|V2'", b"'descr': '<V2'", 1)
            z.writestr(name + ".npy", data)


def main(d):
    for name, with_y in (("bf16_io.onnx", True), ("bf16_in.onnx", False)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(model(with_y))
    x = (1.5 * np.arange(12, dtype=np.float32)).reshape(3, 4)
    w = np.full((3, 4), 0.25, np.float32)
    inexact = x.copy()
    inexact[1, 2] = 1.00001
    p = lambda n: os.path.join(d, n)
    savez(p("in_f32.npz"), x=x, w=w)
    savez(p("in_v2le.npz"), x_le=bits(x), w=w)
    savez(p("in_v2.npz"), x=bits(x), w=w)
    savez(p("in_inexact.npz"), x=inexact, w=w)
    savez(p("in_i64.npz"), x=x.astype(np.int64), w=w)
    savez(p("in_wv2.npz"), x=x, w_le=bits(w))
    savez(p("out.npz"), y=x, z=x + w)
    savez(p("out_z.npz"), z=x + w)
    savez(p("out_yv2.npz"), y_le=bits(x), z=x + w)
    savez(p("out_zv2.npz"), y=x, z_le=bits(x + w))


if __name__ == "__main__":
    main(sys.argv[1])
