"""The protobuf wire format's varints, for the e2e scripts that rewrite ONNX files with python3
alone (strip_denotations.py, inits_as_inputs.py)."""


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
