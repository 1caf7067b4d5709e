"""mha_fold.py IN.onnx OUT.onnx [KEY_TARGET]: torch's SDPA export of nn.MultiheadAttention
(tx_encoder_op18) rewritten into the form of MHA's own path (need_weights=True, the legacy
exporter): the products read the [B*H, L, D] fold itself (Reshape [L, B*H, D] ->
Transpose(1,0,2)), K^T is Transpose(0,2,1) of it, the mask is the [B*H, 1, L] one, and the
output goes back by Transpose(1,0,2) -> [L, B*H, D]: no 4-D value is left around the chain. The
same numbers as the original. KEY_TARGET (e.g. 0,-1,16): the first layer's key fold is given that
Reshape target instead (a hand edit: another H for K than for Q). python3 alone (GraphProto node =
1, initializer = 5, value_info = 13; NodeProto input = 1, output = 2, name = 3, op_type = 4,
attribute = 5)."""
import struct
import sys

from pbwire import enc, fields, ld


class Node:
    def __init__(self, raw):
        self.raw, self.ins, self.outs, self.op, self.name = raw, [], [], "", ""
        for f, _, v, _, _ in fields(raw):
            if f == 1: self.ins.append(bytes(v).decode())
            elif f == 2: self.outs.append(bytes(v).decode())
            elif f == 3: self.name = bytes(v).decode()
            elif f == 4: self.op = bytes(v).decode()

    def encode(self, perm=None):
        """The node with its inputs as they are now (and `perm` for a Transpose)."""
        out = b"".join(ld(1, i.encode()) for i in self.ins) + b"".join(ld(2, o.encode()) for o in self.outs)
        out += ld(3, self.name.encode()) + ld(4, self.op.encode())
        if getattr(self, "noattr", False):
            pass
        elif perm is not None:
            out += ld(5, ld(1, b"perm") + b"".join(enc(8 << 3) + enc(p) for p in perm) + enc(20 << 3) + enc(7))
        else:
            out += b"".join(self.raw[s:e] for f, _, _, s, e in fields(self.raw) if f == 5)
        return out


def i64_tensor(name, vals):
    """An int64 TensorProto initializer (dims = 1, data_type = 2, raw_data = 9, name = 8)."""
    return enc(1 << 3) + enc(len(vals)) + enc(2 << 3) + enc(7) + ld(8, name.encode()) + \
        ld(9, struct.pack("<%dq" % len(vals), *vals))


def rewrite(nodes, key_target):
    prod = {o: n for n in nodes for o in n.outs}
    cons = lambda v: [n for n in nodes if v in n.ins]
    under = lambda v: prod[v].ins[0]  # the input of the Reshape that made v
    added, inits, changed, layer = {}, [], [], 0
    for sm in [n for n in nodes if n.op == "Softmax"]:
        add = prod[sm.ins[0]]; mm = prod[add.ins[0]]
        add.ins[1] = under(add.ins[1])  # [B, H, 1, L] -> the [B*H, 1, L] it was viewed from
        mulq, mulk = prod[mm.ins[0]], prod[mm.ins[1]]
        mulq.ins[0] = under(mulq.ins[0])  # Q [B, H, L, D] -> [B*H, L, D]
        k4 = prod[prod[prod[mulk.ins[0]].ins[0]].ins[0]].ins[0]  # Reshape(Transpose(Reshape(K)))
        k3 = under(k4)
        if key_target and layer == 0:
            fold = prod[prod[k3].ins[0]]
            inits.append(i64_tensor("mha_fold_key_target", key_target))
            fold.ins[1] = "mha_fold_key_target"
            fold.noattr = True  # allowzero off: the 0 copies L
            changed += [fold.outs[0], k3]
        kt = Node(b""); kt.ins, kt.outs, kt.op, kt.name = [k3], [k3 + "_kt"], "Transpose", k3 + "_kt"
        added[id(mulk)] = kt
        mulk.ins[0] = kt.outs[0]
        out = [n for n in cons(sm.outs[0]) if n.op == "MatMul"][0]
        out.ins[1] = under(out.ins[1])  # V
        perm = [n for n in cons(out.outs[0]) if n.op == "Transpose"][0]
        perm.perm = [1, 0, 2]  # [B*H, L, D] -> [L, B*H, D]: the [L*B, E] Reshape after it reads the same order
        changed += [x.outs[0] for x in (mulq, mulk, mm, add, sm, out, perm)]
        layer += 1
    body = b""
    for n in nodes:
        if id(n) in added: body += ld(1, added[id(n)].encode(perm=[0, 2, 1]))
        body += ld(1, n.encode(perm=getattr(n, "perm", None)))
    return body, inits, changed


def main(src, dst, key=None):
    b = open(src, "rb").read()
    key_target = [int(x) for x in key.split(",")] if key else None
    out = bytearray()
    for f, _, v, s, e in fields(b):
        if f != 7:
            out += b[s:e]; continue
        g = bytes(v)
        nodes = [Node(bytes(x)) for gf, _, x, _, _ in fields(g) if gf == 1]
        body, inits, changed = rewrite(nodes, key_target)
        graph = bytearray(body)
        for gf, _, x, gs, ge in fields(g):
            if gf == 1: continue
            if gf == 13 and any(ld(1, c.encode()) == bytes(x)[:len(c) + 2] for c in changed): continue
            graph += g[gs:ge]
        graph += b"".join(ld(5, t) for t in inits)
        out += ld(7, bytes(graph))
    open(dst, "wb").write(bytes(out))


main(*sys.argv[1:4])
