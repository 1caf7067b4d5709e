"""author_models.py DIR: the small models of e2e/convert_author, as an ONNX graph author writes
them by hand (after a QA pass with ~37 such models): no outputs, opset-11 softmax axes, scales and
masks the fuse refuses, a softmax output also read elsewhere, a com.microsoft attention. Written
with pbwire alone, as the other e2e model writers are."""
import os
import struct
import sys

import numpy as np

from pbwire import enc, ld

B, H, L, D = 1, 2, 4, 8
F32, I64, BOOL = 1, 7, 9


def vi(f, v):
    return enc(f << 3) + enc(v & ((1 << 64) - 1))


def tensor(name, arr, et=F32):
    arr = np.asarray(arr, {I64: np.int64, BOOL: np.bool_}.get(et, np.float32))
    return b"".join(vi(1, d) for d in arr.shape) + vi(2, et) + ld(8, name.encode()) + ld(9, arr.tobytes())


def attr(name, v):
    b = ld(1, name.encode())
    if isinstance(v, float): return b + enc(2 << 3 | 5) + struct.pack("<f", v) + vi(20, 1)
    if isinstance(v, int): return b + vi(3, v) + vi(20, 2)
    return b + b"".join(vi(8, x) for x in v) + vi(20, 7)


def node(op, ins, outs, domain=None, **a):
    b = b"".join(ld(1, i.encode()) for i in ins) + b"".join(ld(2, o.encode()) for o in outs)
    b += ld(3, (op + "_" + outs[0]).encode()) + ld(4, op.encode())
    if domain: b += ld(7, domain.encode())
    return b + b"".join(ld(5, attr(k, v)) for k, v in a.items())


def valinfo(name, shape, et=F32):
    """A tensor's declaration; a str dim is a dim_param (a symbolic size)."""
    dims = b"".join(ld(1, ld(2, d.encode()) if isinstance(d, str) else vi(1, d)) for d in shape)
    return ld(1, name.encode()) + ld(2, ld(1, vi(1, et) + ld(2, dims)))


def graph(nodes, inputs, outputs, inits=()):
    b = b"".join(ld(1, n) for n in nodes) + ld(2, b"g") + b"".join(ld(5, t) for t in inits)
    return b + b"".join(ld(11, i) for i in inputs) + b"".join(ld(12, o) for o in outputs)


def save(name, g, opset=18, ms=False):
    m = vi(1, 8) + ld(2, b"author") + ld(7, g) + ld(8, ld(1, b"") + vi(2, opset))
    if ms: m += ld(8, ld(1, b"com.microsoft") + vi(2, 1))
    open(os.path.join(sys.argv[1], name + ".onnx"), "wb").write(m)


QKV = [valinfo(n, [B, H, L, D]) for n in "qkv"]
Y = valinfo("y", [B, H, L, D])
C = tensor("c", np.array(0.3))


def chain(scale="c", softmax_axis=-1, between=()):
    """Transpose(k) -> MatMul -> Mul(scale) [-> between] -> Softmax -> MatMul."""
    n = [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), node("MatMul", ["q", "kt"], ["s"]),
         node("Mul", ["s", scale], ["ss"])]
    last = "ss"
    for op, other, out in between:
        n.append(node(op, [last, other], [out]))
        last = out
    sm = {} if softmax_axis is None else {"axis": softmax_axis}
    return n + [node("Softmax", [last], ["p"], **sm), node("MatMul", ["p", "v"], ["y"])]


save("empty", graph([], [], []))
save("noout", graph([node("Relu", ["x"], ["r"])], [valinfo("x", [2])], []))
np.savez(os.path.join(sys.argv[1], "noout_in.npz"), x=np.ones(2, np.float32))
# opset 11: the keys' axis (3, the last: the same meaning as at 13), the query axis (2: flattened
# with the keys), a classifier's Softmax over the last axis (2-D: its default axis 1) and one
# over axis 1 of three (flattened: refused)
save("op11_last", graph(chain(softmax_axis=3), QKV, [Y], [C]), opset=11)
save("op11_axis2", graph(chain(softmax_axis=2), QKV, [Y], [C]), opset=11)
save("op11_cls", graph([node("Softmax", ["x"], ["y"])], [valinfo("x", [2, 3])], [valinfo("y", [2, 3])]), opset=11)
save("op11_flat", graph([node("Softmax", ["x"], ["y"], axis=1)], [valinfo("x", [2, 3, 4])],
                        [valinfo("y", [2, 3, 4])]), opset=11)
# a per-head scale [1, H, 1, 1]; a bias and a mask both added (fused: attn_mask = bias + m)
save("perhead", graph(chain(), QKV, [Y], [tensor("c", np.array([0.5, 0.125]).reshape(1, H, 1, 1))]))
bias = np.random.default_rng(0).standard_normal((1, H, L, L))
save("two_adds", graph(chain(between=[("Add", "bias", "sb"), ("Add", "m", "sm")]), QKV + [valinfo("m", [B, 1, 1, L])],
                       [Y], [C, tensor("bias", bias)]))
# a factor between the two terms scales the inner one only: refused
save("scaled_between", graph(chain(between=[("Add", "bias", "sb"), ("Mul", "c", "sc"), ("Add", "m", "sm")]),
                             QKV + [valinfo("m", [B, 1, 1, L])], [Y], [C, tensor("bias", bias)]))
# a position bias (T5/ALiBi) and key padding: Where(mask[:, None, None, :], s + bias, -inf), and
# masked_fill's order, (Where(not mask, finfo.min, s)) + bias; fused to attn_mask = Where(m, bias, fill).
# Two events, so that convert's generated masks pad one (lengths 4 and 2) and its check sees the
# keys dropped. A bias over 2 batches on scores of 1 widens them: no attn_mask of Attention does that.
QKV2, Y2, PAD = [valinfo(n, [2, H, L, D]) for n in "qkv"], valinfo("y", [2, H, L, D]), [valinfo("mask", [2, L], BOOL)]
KEYS = [node("Unsqueeze", ["mask", "ax12"], ["keys"])]
AX12, NEG, MIN = tensor("ax12", [1, 2], I64), tensor("neg", np.array(-np.inf)), tensor("fmin", np.array(-3.4028235e38))
save("bias_pad", graph(KEYS + chain(between=[("Add", "bias", "sb")])[:-2] +
                       [node("Where", ["keys", "sb", "neg"], ["sw"]), node("Softmax", ["sw"], ["p"], axis=-1),
                        node("MatMul", ["p", "v"], ["y"])], QKV2 + PAD, [Y2], [C, tensor("bias", bias), AX12, NEG]))
save("pad_bias", graph(KEYS + [node("Not", ["keys"], ["drop"])] + chain(between=[("Add", "bias", "sb")])[:3] +
                       [node("Where", ["drop", "fmin", "ss"], ["sw"]), node("Add", ["sw", "bias"], ["sb"]),
                        node("Softmax", ["sb"], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])],
                       QKV2 + PAD, [Y2], [C, tensor("bias", bias), AX12, MIN]))
save("widen", graph(chain(between=[("Add", "bias2", "sb")]), QKV, [Y],
                    [C, tensor("bias2", np.concatenate([bias, bias]).reshape(2, H, L, L))]))
# two Where masks, as PyTorch exports a causal mask and key padding each applied with
# masked_fill: fused into one Attention whose bool attn_mask is their AND (Where(keep, s, -inf)
# twice; masked_fill's order, Where(drop, fill, s), twice; and beside a bias, one float mask of
# nested Wheres). Refused: a factor between them (it scales the inner fill), a fill that excludes
# nothing, a third Where.
CAUSAL = tensor("causal", np.tril(np.ones((L, L))), BOOL)
UPPER = tensor("upper", 1 - np.tril(np.ones((L, L))), BOOL)


def wheres(*steps, before=()):
    """KEYS -> the score product and scale -> before -> each (cond, fill, keep) Where -> Softmax."""
    n, last = KEYS + chain()[:3], "ss"
    for op, other, out in before:
        n.append(node(op, [last, other], [out]))
        last = out
    for i, (cond, fill, keep) in enumerate(steps):
        op, ins = ("Mul", [last, fill]) if cond is None else ("Where", [cond, last, fill] if keep else [cond, fill, last])
        n.append(node(op, ins, ["w%d" % i]))
        last = "w%d" % i
    return n + [node("Softmax", [last], ["p"], axis=-1), node("MatMul", ["p", "v"], ["y"])]


INITS = [C, AX12, NEG, MIN, CAUSAL, UPPER, tensor("weak", np.array(-1.0))]
save("two_wheres", graph(wheres(("causal", "neg", 1), ("keys", "neg", 1)), QKV2 + PAD, [Y2], INITS))
save("two_fills", graph([node("Not", ["keys"], ["drop"])] + wheres(("drop", "fmin", 0), ("upper", "neg", 0)),
                        QKV2 + PAD, [Y2], INITS))
save("two_wheres_bias", graph(wheres(("causal", "neg", 1), ("keys", "neg", 1), before=[("Add", "bias", "sb")]),
                              QKV2 + PAD, [Y2], INITS + [tensor("bias", bias)]))
save("wheres_scaled", graph(wheres(("causal", "neg", 1), (None, "c", 1), ("keys", "neg", 1)), QKV2 + PAD, [Y2], INITS))
save("wheres_weak", graph(wheres(("causal", "neg", 1), ("keys", "weak", 1)), QKV2 + PAD, [Y2], INITS))
# three Where masks (a sliding window of 3 keys beside causal and key padding): one And of all three
WINDOW = tensor("window", np.triu(np.ones((L, L)), -2), BOOL)
save("three_wheres", graph(wheres(("causal", "neg", 1), ("keys", "neg", 1), ("window", "neg", 1)), QKV2 + PAD, [Y2],
                           INITS + [WINDOW]))
# --flash reads a constant lower triangle as causal, as a Trilu's: bool [L, L] (two_wheres, and
# masked_fill's negation in two_fills), an additive 0/-inf [1, 1, L, L] beside a Where of the key
# padding, and a triangle of 32 cut to the sequence by Slices from 0 (PyTorch's bias[:, :, :L, :L],
# one Slice an axis); refused: one element off the triangle, and a Slice at an offset
ADDC = np.where(np.tril(np.ones((L, L))) > 0, 0, -np.inf).reshape(1, 1, L, L)
save("three_causal", graph(wheres(("causal", "neg", 1), ("keys", "neg", 1), ("upper", "neg", 0)), QKV2 + PAD, [Y2],
                           INITS))
save("causal_add", graph(wheres(("keys", "neg", 1), before=[("Add", "causal_add", "sc")]), QKV2 + PAD, [Y2],
                         INITS + [tensor("causal_add", ADDC)]))
NEAR = np.tril(np.ones((L, L)))
NEAR[1, 3] = 1
save("near_causal", graph(wheres(("near", "neg", 1), ("keys", "neg", 1)), QKV2 + PAD, [Y2],
                          INITS + [tensor("near", NEAR, BOOL)]))
QKVL, YL, PADL = [valinfo(n, [2, H, "L", D]) for n in "qkv"], valinfo("y", [2, H, "L", D]), [valinfo("mask", [2, "L"], BOOL)]


def sliced(start, name):
    """Shape(q)[2] -> Slice(tri32, axis 2 from `start`) -> Slice(axis 3 from 0): the triangle cut to L."""
    n = [node("Shape", ["q"], ["len"], start=2, end=3), node("Slice", ["tri32", start, "len", "ax2"], ["rows"]),
         node("Slice", ["rows", "zero", "len", "ax3"], ["cut"])]
    tri = tensor("tri32", np.tril(np.ones((32, 32))).reshape(1, 1, 32, 32), BOOL)
    consts = [tri, tensor("zero", [0], I64), tensor("one", [1], I64), tensor("ax2", [2], I64), tensor("ax3", [3], I64)]
    save(name, graph(n + wheres(("cut", "neg", 1), ("keys", "neg", 1)), QKVL + PADL, [YL], INITS + consts))


sliced("zero", "sliced_causal")
sliced("one", "offset_causal")
# the triangle also a graph input (keep_initializers_as_inputs): a caller may feed another mask
save("kiai_causal", graph(wheres(("causal", "neg", 1), ("keys", "neg", 1)), QKV2 + PAD + [valinfo("causal", [L, L], BOOL)],
                          [Y2], INITS))
# a triangle of 4 on a model of any length L: not the sequence's, refused (with key padding beside
# it, and alone)
save("fixed_causal", graph(wheres(("causal", "neg", 1), ("keys", "neg", 1)), QKVL + PADL, [YL], INITS))
save("fixed_causal1", graph(wheres(("causal", "neg", 1))[1:], QKVL, [YL], INITS))
# need_weights: the softmax output is also a graph output
save("probs_out", graph(chain(), QKV, [Y, valinfo("p", [B, H, L, L])], [C]))
# ONNX Runtime's contrib MultiHeadAttention, 3-D
save("ms_mha", graph([node("MultiHeadAttention", ["q", "k", "v"], ["y"], domain="com.microsoft", num_heads=H)],
                     [valinfo(n, [B, L, H * D]) for n in "qkv"], [valinfo("y", [B, L, H * D])]), ms=True)
