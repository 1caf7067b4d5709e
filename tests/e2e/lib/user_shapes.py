"""user_shapes.py DIR: the models of e2e/user_shapes (QA round 9a, D7, D8, D10): bfloat16 scale
and fill constants (raw_data and int32_data), a scale in external data, LLaMA's rotary
(Slice/Neg/Concat; one by Split, which is not inferred) and repeat_kv (Tile; torch's
Shape -> Slice -> Concat -> Expand -> Reshape) with no value_info, a repeated K declared with a
dim nothing names, and 4-D ONNX Attention with 2 KV heads for 4 query heads."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gather_pb import a_ints, f, num, node  # noqa: E402
from pbwire import enc  # noqa: E402

F32, I64, BOOL, BF16 = 1, 7, 9, 16
H, HKV, D = 4, 2, 8
os.chdir(sys.argv[1])


def a_int(name, x):
    """An int attribute; negative ones (axis -1) as protobuf writes them, two's complement."""
    return f(5, f(1, name) + enc(3 << 3) + enc(x & ((1 << 64) - 1)) + num(20, 2))


def vi(name, elem, dims):
    """dims: a size, a dim name, or None (a dim nothing names)."""
    dim = lambda d: f(1, b"" if d is None else f(2, d) if isinstance(d, str) else num(1, d))
    return f(1, name) + f(2, f(1, num(1, elem) + f(2, b"".join(dim(d) for d in dims))))


def init(name, arr, elem=F32, int32_form=False, ext=None):
    a = np.asarray(arr, np.int64 if elem == I64 else np.float32)
    head = b"".join(num(1, d) for d in a.shape) + num(2, elem) + f(8, name)
    if elem == BF16:  # the high half of each float32
        bits = (a.view(np.uint32) >> 16).astype("<u2")
        return head + (b"".join(num(5, int(b)) for b in bits.ravel()) if int32_form else f(9, bits.tobytes()))
    if ext:
        open(ext, "wb").write(a.tobytes())
        kv = lambda k, v: f(13, f(1, k) + f(2, v))
        return head + kv("location", ext) + kv("offset", "0") + kv("length", str(a.nbytes)) + num(14, 1)
    return head + f(9, a.tobytes())


def save(name, nodes, inputs, outputs, inits, opset=18, vinfo=()):
    g = b"".join(f(1, n) for n in nodes) + f(2, "g") + b"".join(f(5, t) for t in inits)
    g += b"".join(f(11, i) for i in inputs) + b"".join(f(12, o) for o in outputs) + b"".join(f(13, x) for x in vinfo)
    open(name + ".onnx", "wb").write(num(1, 10 if opset >= 21 else 8) + f(7, g) + f(8, f(1, "") + num(2, opset)))


def n(op, ins, out, **attrs):
    extra = b"".join(a_ints(k, v) if isinstance(v, list) else a_int(k, v) for k, v in attrs.items())
    return node(op, op + "_" + out, ins, out, extra)


def chain(q="q", k="k", v="v", where=True):
    """Transpose(K) -> MatMul -> Mul(c) [-> Where(keys, ., neg)] -> Softmax -> MatMul."""
    s = [n("Transpose", [k], "kt", perm=[0, 1, 3, 2]), n("MatMul", [q, "kt"], "s"), n("Mul", ["s", "c"], "ss")]
    s += [n("Where", ["keys", "ss", "neg"], "sw")] if where else []
    return s + [n("Softmax", ["sw" if where else "ss"], "p", axis=-1), n("MatMul", ["p", v], "y")]


def qkv(elem=F32, kv_heads=H):
    return [vi("q", elem, ["batch", H, "seq", D])] + [vi(x, elem, ["batch", kv_heads, "seq", D]) for x in "kv"]


KEYS = [n("Unsqueeze", ["mask", "ax12"], "keys")]
MASK = vi("mask", BOOL, ["batch", "seq"])
Y = vi("y", F32, ["batch", H, "seq", D])
INTS = [init("ax12", [1, 2], I64)]
FLOAT = [init("c", np.float32(0.35)), init("neg", np.float32(-np.inf))] + INTS

# D7: bfloat16 scale and fill, each as raw_data and as int32_data
for form in ("raw", "i32"):
    consts = [init(x, val, BF16, form == "i32") for x, val in (("c", np.float32(0.35)), ("neg", np.float32(-np.inf)))]
    save("bf16_" + form, KEYS + chain(), qkv(BF16) + [MASK], [vi("y", BF16, ["batch", H, "seq", D])], consts + INTS)
# a float scale in external data: one number, not read (it was "not a scalar ... of shape []")
save("ext_scale", chain(where=False), qkv(), [Y], [init("c", np.float32(0.35), ext="ext_scale.bin")])


# D8: rotary's rotate_half on Q and K, no value_info (halves by Slice, or by Split: not inferred)
def rope(x, split=False):
    halves = ([node("Split", "Split_" + x, [x, "halves"], x + "1", f(2, x + "2") + a_int("axis", -1))] if split else
              [n("Slice", [x, "i0", "i4", "im1"], x + "1"), n("Slice", [x, "i4", "i8", "im1"], x + "2")])
    return halves + [n("Neg", [x + "2"], x + "2n"), n("Concat", [x + "2n", x + "1"], x + "rh", axis=-1),
                     n("Mul", [x, "cos"], x + "c"), n("Mul", [x + "rh", "sin"], x + "s"), n("Add", [x + "c", x + "s"], x + "_r")]


ROPE_IN = qkv() + [MASK, vi("cos", F32, ["seq", D]), vi("sin", F32, ["seq", D])]
ROPE_INTS = FLOAT + [init(x, [val], I64) for x, val in (("i0", 0), ("i4", 4), ("i8", 8), ("im1", -1))]
for name, split in (("rope", False), ("rope_split", True)):
    save(name, KEYS + rope("q", split) + rope("k", split) + chain("q_r", "k_r"), ROPE_IN, [Y],
         ROPE_INTS + [init("halves", [4, 4], I64)])


# D8: repeat_kv of 2 KV heads to 4, no value_info: Tile, torch's Expand of a computed shape, and
# a constant Expand and Reshape whose K is declared with a sequence dim nothing names
def torch_repeat(x):
    return [n("Shape", [x], x + "_sh"), n("Slice", [x + "_sh", "i0", "i1", "i0"], x + "_b"),
            n("Slice", [x + "_sh", "i2", "i3", "i0"], x + "_l"),
            n("Concat", [x + "_b", "hkv", "nrep", x + "_l", "dd"], x + "_es", axis=0),
            n("Concat", [x + "_b", "hh", x + "_l", "dd"], x + "_rs", axis=0),
            n("Unsqueeze", [x, "i2"], x + "_u"), n("Expand", [x + "_u", x + "_es"], x + "_e"), n("Reshape", [x + "_e", x + "_rs"], x + "_r")]


def const_repeat(x):
    return [n("Unsqueeze", [x, "i2"], x + "_u"), n("Expand", [x + "_u", "eshape"], x + "_e"), n("Reshape", [x + "_e", "rshape"], x + "_r")]


GQA_INTS = FLOAT + [init(x, [val], I64) for x, val in (("i0", 0), ("i1", 1), ("i2", 2), ("i3", 3), ("hkv", HKV),
                                                       ("nrep", H // HKV), ("dd", D), ("hh", H))]
GQA_INTS += [init("reps", [1, H // HKV, 1, 1], I64), init("eshape", [1, 1, H // HKV, 1, 1], I64), init("rshape", [0, H, -1, D], I64)]
save("gqa_tile", KEYS + [n("Tile", [x, "reps"], x + "_r") for x in "kv"] + chain("q", "k_r", "v_r"), qkv(F32, HKV) + [MASK], [Y], GQA_INTS)
save("gqa_expand", KEYS + torch_repeat("k") + torch_repeat("v") + chain("q", "k_r", "v_r"), qkv(F32, HKV) + [MASK], [Y], GQA_INTS)
save("gqa_unnamed", KEYS + const_repeat("k") + const_repeat("v") + chain("q", "k_r", "v_r"), qkv(F32, HKV) + [MASK], [Y],
     GQA_INTS, vinfo=[vi("k_r", F32, ["batch", H, None, D])])

# D10: ONNX Attention, 4-D, 4 query heads over 2 KV heads; and 4 over 4
save("att_gqa", KEYS + [node("Attention", "att", ["q", "k", "v", "keys"], "y")], qkv(F32, HKV) + [MASK], [Y], INTS, opset=23)
save("att_mha", [node("Attention", "att", ["q", "k", "v"], "y")], qkv(), [Y], [], opset=23)
