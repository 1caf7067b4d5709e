"""polar_models.py: QA round 9a's defects 1 and 3 (tests/e2e/q9polar.sh), into the current folder.
Decomposed attention over q, k, v [batch, 2, seq, 8] and a [batch, seq] mask:
  keep.onnx   Where(mask, scores, -inf): the graph reads the mask with 1 = valid
  pad.onnx    Where(Not(mask), ...): 1 = padding (PyTorch's key_padding_mask)
  silent.onnx a float mask added as (mask - 1) * 10000: the graph's uses tell no polarity
  empty.onnx  keep.onnx's y beside z = y[..., 0:0] (a 0-sized axis)
Batches: left_in.npz (Hugging Face's left padding, 1 = valid, zeros first), left_bad.npz (its right
outputs, +5 at event 1 position 4: a real token), right_in.npz / right_exp.npz (the same events
right-padded), right_pad_in.npz (its mask inverted), silent_left_in.npz / silent_left_bad.npz (the
left padding as a float mask), empty_exp.npz (y and an empty z)."""
import os
import sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gather_pb import a_ints, f, ints, node, num  # noqa: E402

H, D, B, L = 2, 8, 3, 6


def sym(name, elem, dims):
    shape = b"".join(f(1, f(2, d) if isinstance(d, str) else num(1, d)) for d in dims)
    return f(1, name) + f(2, f(1, num(1, elem) + f(2, shape)))


def scalar(name, x):
    return num(2, 1) + f(8, name) + f(9, np.float32(x).tobytes())


def save(path, nodes, mask_elem, outs, inits):
    ins = b"".join(f(11, sym(x, 1, ["batch", H, "seq", D])) for x in "qkv") + f(11, sym("mask", mask_elem, ["batch", "seq"]))
    g = b"".join(f(1, n) for n in nodes) + f(2, "g") + b"".join(f(5, i) for i in inits) + ins
    g += b"".join(f(12, sym(n, 1, ["batch", H, "seq", d])) for n, d in outs)
    open(path, "wb").write(num(1, 8) + f(7, g) + f(8, f(1, "") + num(2, 18)))


def chain(masking):
    """the scores, `masking` (a node from "ss" to "sw"), the Softmax and the output y"""
    return [node("Transpose", "t", ["k"], "kt", a_ints("perm", [0, 1, 3, 2])), node("MatMul", "qk", ["q", "kt"], "s"),
            node("Div", "sc", ["s", "c"], "ss"), masking,
            node("Softmax", "sm", ["sw"], "p", f(5, f(1, "axis") + num(3, (1 << 64) - 1) + num(20, 2))),
            node("MatMul", "pv", ["p", "v"], "y")]


def where(keys):
    """the scores masked by bool `keys` [batch, 1, 1, seq]: -inf where it is false"""
    return chain(node("Where", "Where_sw", [keys, "ss", "neg"], "sw"))


inits = [scalar("c", np.sqrt(D)), scalar("neg", -np.inf), ints("ax12", [2], [1, 2])]
unsq = node("Unsqueeze", "un", ["mask", "ax12"], "keys")
save("keep.onnx", [unsq] + where("keys"), 9, [("y", D)], inits)
save("pad.onnx", [unsq, node("Not", "Not_keys", ["keys"], "valid")] + where("valid"), 9, [("y", D)], inits)
z = node("Slice", "Slice_z", ["y", "z0", "z0", "ax3"], "z")
save("empty.onnx", [unsq] + where("keys") + [z], 9, [("y", D), ("z", 0)],
     inits + [ints("z0", [1], [0]), ints("ax3", [1], [3])])
# silent: bias = (mask - 1) * 10000 added to the scores (BERT's form, 1 = valid, no polarity told)
bias = [node("Sub", "Sub_m", ["mask", "one"], "m1"), node("Mul", "Mul_m", ["m1", "big"], "m2"),
        node("Unsqueeze", "un", ["m2", "ax12"], "bias")] + chain(node("Add", "Add_b", ["ss", "bias"], "sw"))
save("silent.onnx", bias, 1, [("y", D)], inits + [scalar("one", 1), scalar("big", 10000)])

rng = np.random.default_rng(15)
q, k, v = [rng.standard_normal((B, H, L, D)).astype(np.float32) for _ in range(3)]


def attend(q, k, v, valid):
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2)) / np.sqrt(D)
    s = np.where(valid[:, None, None, :], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return ((p / p.sum(-1, keepdims=True)) @ v).astype(np.float32)


left = np.arange(L)[None] >= np.array([1, 2, 4])[:, None]  # events of 5, 4 and 2 tokens, zeros first
y = attend(q, k, v, left)
bad = y.copy()
bad[1, :, 4, :] += 5.0  # event 1, position 4: a real token (mask 1)
np.savez("left_in.npz", q=q, k=k, v=v, mask=left)
np.savez("left_bad.npz", y=bad)
np.savez("silent_left_in.npz", q=q, k=k, v=v, mask=left.astype(np.float32))
np.savez("silent_left_bad.npz", y=bad)
right = np.arange(L)[None] < np.array([5, 4, 2])[:, None]
np.savez("right_in.npz", q=q, k=k, v=v, mask=right)
np.savez("right_pad_in.npz", q=q, k=k, v=v, mask=~right)
yr = attend(q, k, v, right)
np.savez("right_exp.npz", y=yr)
np.savez("empty_exp.npz", y=yr, z=np.zeros((B, H, L, 0), np.float32))
