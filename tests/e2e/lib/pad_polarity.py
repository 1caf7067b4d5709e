"""pad_polarity.py model IN.onnx OUT.onnx INPUT | npz IN.npz OUT.npz MEMBER: a model whose bool
INPUT marks padding with true (PyTorch's src_key_padding_mask), made from one that reads true as
valid by a Not in front of every reader (GraphProto.node = 1; NodeProto input = 1, output = 2,
name = 3, op_type = 4); and the inputs for it, the bool MEMBER of an .npz inverted. python3 alone."""
import sys
import zipfile

from pbwire import enc, fields, ld, rewire, varint


def model(src, dst, name):
    name = name.encode(); keep = name + b"_keep"
    b = open(src, "rb").read()
    out = bytearray()
    for f, _, v, s, e in fields(b):
        if f != 7:
            out += b[s:e]; continue
        g = bytes(v)
        graph = ld(1, ld(1, name) + ld(2, keep) + ld(3, b"pad_polarity_not") + ld(4, b"Not"))
        graph += b"".join(ld(1, rewire(bytes(x), name, keep)) if gf == 1 else g[gs:ge]
                          for gf, _, x, gs, ge in fields(g))
        out += ld(7, graph)
    open(dst, "wb").write(bytes(out))


def npz(src, dst, member):
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for info in zi.infolist():
            d = zi.read(info)
            if info.filename == member + ".npy":
                n = 10 + int.from_bytes(d[8:10], "little") if d[6] == 1 else 12 + int.from_bytes(d[8:12], "little")
                assert b"'|b1'" in d[:n], "member %s is not bool" % member
                d = d[:n] + bytes(1 - x for x in d[n:])
            zo.writestr(info.filename, d)


{"model": model, "npz": npz}[sys.argv[1]](*sys.argv[2:5])
