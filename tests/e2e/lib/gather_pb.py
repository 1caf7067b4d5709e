"""gather_pb.py: the ONNX protobuf pieces e2e/gather_indices and e2e/idcast write their models
with (pbwire alone, no onnx package): a field, a number, a value's type and shape, a float
initializer of zeros, an int64 initializer, a node and its integer attributes."""
import numpy as np

from pbwire import enc as v, ld


def f(n, b): return ld(n, b.encode() if isinstance(b, str) else b)
def num(n, x): return v(n << 3) + v(x)


def vinfo(name, elem, dims):
    """A value's type: dims are sizes or names."""
    shape = b"".join(f(1, f(2, d) if isinstance(d, str) else num(1, d)) for d in dims)
    return f(1, name) + f(2, f(1, num(1, elem) + f(2, shape)))


def zeros(name, rows, cols):
    """A float [rows, cols] initializer of zeros: a table a Gather reads."""
    return num(1, rows) + num(1, cols) + num(2, 1) + f(8, name) + f(9, bytes(4 * rows * cols))


def ints(name, dims, vals):
    return b"".join(num(1, d) for d in dims) + num(2, 7) + f(8, name) + f(9, np.array(vals, "<i8").tobytes())


def node(op, name, ins, out, attr=b""):
    return b"".join(f(1, i) for i in ins) + f(2, out) + f(3, name) + f(4, op) + attr


def a_int(name, x): return f(5, f(1, name) + num(3, x) + num(20, 2))
def a_ints(name, xs): return f(5, f(1, name) + b"".join(num(8, x) for x in xs) + num(20, 7))
