"""qa9refs_models.py DIR: the models of e2e/qa9refs (QA round 9a's defects 5, 6 and 9: convert and
validate errors that blamed the wrong thing), with the batches they run on. Written with pbwire
alone (gather_pb's pieces), as the other e2e model writers are.

  sq.onnx      keys = Unsqueeze(mask, [1, 2]) (bool [B,1,1,L], no value_info), Attention-23(q, k, v,
               keys): ORT refuses the broadcast mask, so convert's check needs its stand-ins
  sqx.onnx     the same with keys = Gather(Unsqueeze(mask), [0], axis 1): a mask whose type the
               forward inference does not know (Gather is none of its ops; Expand became one)
  kv.onnx      a KV cache: present_key = Concat(past_key [.., past, ..], k [.., new, ..]), declared
               [.., total, ..], the bool mask [batch, total] over its keys; kv_in.npz fits it
  kvy.onnx     kv.onnx with y its only output: the relation is nowhere declared
  dec.onnx     a decoder with two bool masks, tgt_mask (self-attention) and src_mask (cross)
  fmask.onnx   scores + Unsqueeze(attention_mask): the float input is itself an additive mask;
               fmask_in.npz (0 = keep, -1e9 = pad), fmask_zero.npz (every position kept: all 0),
               fmask_exp.npz (the outputs of fmask_in.npz)
"""
import os
import sys

import numpy as np

from gather_pb import a_int, a_ints, f, ints, node, num, vinfo

F32, BOOL, H, D = 1, 9, 2, 8
OUT = sys.argv[1]
rng = np.random.default_rng(34)


def scalar(name, x):
    return num(2, F32) + f(8, name) + f(9, np.float32(x).tobytes())


def save(name, nodes, inputs, outputs, inits, opset=18):
    g = b"".join(f(1, n) for n in nodes) + f(2, "g") + b"".join(f(5, t) for t in inits)
    g += b"".join(f(11, i) for i in inputs) + b"".join(f(12, o) for o in outputs)
    m = num(1, 11 if opset >= 23 else 8) + f(2, "qa9refs") + f(7, g) + f(8, f(1, "") + num(2, opset))
    with open(os.path.join(OUT, name), "wb") as fp:
        fp.write(m)


def chain(q, k, v, mask, sfx, out, fill=True):
    """keys = mask[:, None, None, :]; out = softmax(where(keys, q k^T * c, -inf)) v (fill), else
    softmax(q k^T * c + keys) v: the mask added as it is."""
    s = lambda x: x + sfx
    use = node("Where", s("fill"), [s("keys"), s("ss"), "neg"], s("sw")) if fill else node("Add", s("add"), [s("ss"), s("keys")], s("sw"))
    return [node("Unsqueeze", s("unsq"), [mask, "ax12"], s("keys")), node("Transpose", s("tr"), [k], s("kt"), a_ints("perm", [0, 1, 3, 2])),
            node("MatMul", s("qk"), [q, s("kt")], s("s")), node("Mul", s("sc"), [s("s"), "c"], s("ss")), use,
            node("Softmax", s("sm"), [s("sw")], s("p"), a_int("axis", 3)), node("MatMul", s("pv"), [s("p"), v], out)]


INITS = [scalar("c", 0.35), scalar("neg", -np.inf), ints("ax12", [2], [1, 2])]
QKV = [vinfo(x, F32, ["batch", H, "seq", D]) for x in "qkv"]
Y = [vinfo("y", F32, ["batch", H, "seq", D])]

# 5: the opset-23 broadcast mask, undeclared; and one of a type nothing infers
att = node("Attention", "att", ["q", "k", "v", "keys"], "y")
save("sq.onnx", [node("Unsqueeze", "unsq", ["mask", "ax12"], "keys"), att], QKV + [vinfo("mask", BOOL, ["batch", "seq"])], Y,
     [ints("ax12", [2], [1, 2])], 23)
save("sqx.onnx", [node("Unsqueeze", "unsq", ["mask", "ax12"], "keys1"), node("Gather", "ga", ["keys1", "zero"], "keys", a_int("axis", 1)),
     att], QKV + [vinfo("mask", BOOL, ["batch", "seq"])], Y, [ints("ax12", [2], [1, 2]), ints("zero", [1], [0])], 23)

# 6: a KV cache, total = past + new
kv = [node("Concat", "cat_k", ["past_key", "k"], "present_key", a_int("axis", 2)),
      node("Concat", "cat_v", ["past_value", "v"], "present_value", a_int("axis", 2))]
kv += chain("q", "present_key", "present_value", "mask", "", "y")
KV_IN = ([vinfo(x, F32, ["batch", H, "new", D]) for x in "qkv"] +
         [vinfo(x, F32, ["batch", H, "past", D]) for x in ("past_key", "past_value")] + [vinfo("mask", BOOL, ["batch", "total"])])
save("kv.onnx", kv, KV_IN,
     [vinfo("y", F32, ["batch", H, "new", D])] + [vinfo(x, F32, ["batch", H, "total", D]) for x in ("present_key", "present_value")],
     INITS)
# ... the same with y its only output: no declared size states the relation
save("kvy.onnx", kv, KV_IN, [vinfo("y", F32, ["batch", H, "new", D])], INITS)
B, P, N = 3, 5, 2
arr = {x: rng.standard_normal((B, H, N, D)).astype(np.float32) for x in "qkv"}
arr.update({x: rng.standard_normal((B, H, P, D)).astype(np.float32) for x in ("past_key", "past_value")})
arr["mask"] = np.arange(P + N)[None] < np.array([7, 5, 3])[:, None]
np.savez(os.path.join(OUT, "kv_in.npz"), **arr)

# 9: two bool masks; a float input added as it is
save("dec.onnx", chain("x", "x", "x", "tgt_mask", "_a", "h") + chain("h", "mem", "mem", "src_mask", "_b", "y"),
     [vinfo("x", F32, ["batch", H, "tgt", D]), vinfo("mem", F32, ["batch", H, "src", D]), vinfo("tgt_mask", BOOL, ["batch", "tgt"]),
      vinfo("src_mask", BOOL, ["batch", "src"])], [vinfo("y", F32, ["batch", H, "tgt", D])], INITS)
save("fmask.onnx", chain("q", "k", "v", "attention_mask", "", "y", fill=False), QKV + [vinfo("attention_mask", F32, ["batch", "seq"])],
     Y, INITS)
B, L = 3, 6
q, k, v = [rng.standard_normal((B, H, L, D)).astype(np.float32) for _ in range(3)]
add = np.where(np.arange(L)[None] < np.array([6, 4, 2])[:, None], 0, -1e9).astype(np.float32)
s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(0.35) + add[:, None, None, :]
p = np.exp(s - s.max(-1, keepdims=True))
np.savez(os.path.join(OUT, "fmask_in.npz"), q=q, k=k, v=v, attention_mask=add)
np.savez(os.path.join(OUT, "fmask_zero.npz"), q=q, k=k, v=v, attention_mask=np.zeros_like(add))
np.savez(os.path.join(OUT, "fmask_exp.npz"), y=((p / p.sum(-1, keepdims=True)) @ v).astype(np.float32))
