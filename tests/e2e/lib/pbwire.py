"""The protobuf wire format's varints, for the e2e scripts that rewrite ONNX files with python3
alone (strip_denotations.py, unknown_dims.py, inits_as_inputs.py, pad_polarity.py, set_opset.py): varints, a message's fields,
a length-delimited field."""


def varint(b, i):
    """The varint at b[i]: (its value, the index after it)."""
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7F) << s; s += 7
        if c < 0x80: return v, i


def enc(v):
    """The varint bytes of v >= 0."""
    out = bytearray()
    while True:
        c = v & 0x7F; v >>= 7
        if v: out.append(c | 0x80)
        else: out.append(c); return bytes(out)


def fields(b):
    """(field, wire type, value bytes or int, start, end) of each field of a message."""
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0: v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif wt == 5: v = b[i:i + 4]; i += 4
        elif wt == 1: v = b[i:i + 8]; i += 8
        else: raise SystemExit("unexpected wire type %d" % wt)
        yield f, wt, v, start, i


def ld(f, payload):
    """A length-delimited field f holding payload."""
    return enc(f << 3 | 2) + enc(len(payload)) + payload


def rewire(node, old, new):
    """NodeProto `node` with its inputs (field 1) named `old` renamed `new`."""
    return b"".join(ld(1, new) if f == 1 and bytes(v) == old else node[s:e] for f, _, v, s, e in fields(node))


def rewrite(b, msg, path, drop):
    """Message b (of type msg) with the fields drop(msg, field) says dropped, in the messages
    reached through path ({message: {field: the message it holds}}, from onnx.proto); every
    other byte as it was."""
    out = bytearray()
    for f, wt, v, start, end in fields(b):
        if drop(msg, f): continue
        if wt == 2 and f in path[msg]:
            out += ld(f, rewrite(v, path[msg][f], path, drop))
        else:
            out += b[start:end]
    return bytes(out)
