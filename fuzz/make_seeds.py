#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/ (text logs, profiles, masks) and the
convert seeds (option bytes before a model: the PyTorch export fixtures made small, the
'ortqual export' models); run from the repository root. The other binary seeds (npy, npz,
pb, onnx) are copies of the test fixtures, tests/data/onnx-backend files and models from
'ortqual export'."""
import json
import os
import struct

C = "fuzz/corpus"


def put(target, name, data):
    os.makedirs(f"{C}/{target}", exist_ok=True)
    with open(f"{C}/{target}/{name}", "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of one protobuf message, length-delimited as bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type")
        yield f, w, v


def enc_varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def enc(f, w, v):
    """One field: an int for wire type 0, bytes otherwise."""
    key = enc_varint(f << 3 | w)
    if w == 0:
        return key + enc_varint(v)
    if w == 2:
        return key + enc_varint(len(v)) + v
    return key + v


def rebuild(msg, edit):
    """The message with each field replaced by edit(f, w, v): bytes to write, or None to drop."""
    return b"".join(x for x in (edit(f, w, v) for f, w, v in fields(msg)) if x is not None)


# The big parts of an export that the convert passes never read: weights (initializers
# above WEIGHT_MAX bytes become graph inputs of the same type and shape), doc strings,
# and the node and value metadata (stack traces) torch.onnx.export writes.
WEIGHT_MAX = 64
DOC = {"model": 6, "graph": 10, "node": 6, "value": 3}
META = {"node": 9, "value": 4}


def weight_as_input(t):
    """TensorProto -> ValueInfoProto (name, tensor type, shape), or None for a small one."""
    d = list(fields(t))
    if len(t) <= WEIGHT_MAX:
        return None
    name = next(v for f, _, v in d if f == 8)
    dims = []
    for f, w, v in d:
        if f == 1 and w == 0:
            dims.append(v)
        elif f == 1 and w == 2:  # packed
            i = 0
            while i < len(v):
                x, i = varint(v, i)
                dims.append(x)
    elem = next(v for f, _, v in d if f == 2)
    shape = b"".join(enc(1, 2, enc(1, 0, x)) for x in dims)
    tensor = enc(1, 0, elem) + enc(2, 2, shape)
    return enc(1, 2, name) + enc(2, 2, enc(1, 2, tensor))


def slim_value(v):
    return rebuild(v, lambda f, w, x: None if f in (DOC["value"], META["value"]) else enc(f, w, x))


def slim_node(n):
    return rebuild(n, lambda f, w, x: None if f in (DOC["node"], META["node"]) else enc(f, w, x))


def slim_graph(g):
    weights = []

    def edit(f, w, v):
        if f == 5:
            vi = weight_as_input(v)
            if vi is not None:
                weights.append(vi)
                return None
        if f == DOC["graph"]:
            return None
        if f == 1:
            return enc(f, w, slim_node(v))
        if f in (11, 12, 13):
            return enc(f, w, slim_value(v))
        return enc(f, w, v)
    body = rebuild(g, edit)
    return body + b"".join(enc(11, 2, vi) for vi in weights)


def slim_model(model):
    return rebuild(model, lambda f, w, v: None if f == DOC["model"] else
                   enc(f, w, slim_graph(v)) if f == 7 else enc(f, w, v))


def nodes(model):
    """(name, op_type) of each node of ModelProto.graph (field 7; GraphProto.node is 1)."""
    graph = next(v for f, _, v in fields(model) if f == 7)
    for f, _, node in fields(graph):
        if f == 1:
            d = {k: v for k, _, v in fields(node) if k in (3, 4)}
            yield d.get(3, b"").decode(), d.get(4, b"").decode()


def profile(model, provider_of):
    ev = [{"cat": "Session", "pid": 1, "tid": 1, "dur": 10, "ts": 1, "ph": "X",
           "name": "session_initialization", "args": {}}]
    for k, (name, op) in enumerate(nodes(model)):
        args = {"op_name": op, "provider": provider_of(op), "node_index": str(k)}
        if k % 3 == 0:
            args["input_type_shape"] = [{"float": [2, 4, 8]}]
            args["output_type_shape"] = [{"float": [2, 4, 8]}]
        ev.append({"cat": "Node", "pid": 1, "tid": 1, "dur": 3 + k, "ts": 100 + k, "ph": "X",
                   "name": f"{name}_kernel_time", "args": args})
    return json.dumps(ev)


def cuda_except_shape(op):
    return "CPUExecutionProvider" if op in ("Shape", "Gather", "Unsqueeze", "Concat") \
        else "CUDAExecutionProvider"


def main():
    esc = "\x1b[36m"
    put("dispatch", "one_node.txt",
        f"{esc}Operator=Attention Node=attn1 DataType=fp16 SdpaKernel=FLASH_ATTENTION\x1b[0m\n")
    put("dispatch", "two_nodes_crlf.txt",
        "Operator=Attention Node=attn0 DataType=fp32 SdpaKernel=EFFICIENT_ATTENTION\r\n"
        "noise line\nOperator=Attention Node=attn1 DataType=fp16 SdpaKernel=MATH\r\n")
    put("dispatch", "bare_token.txt", "dispatched SdpaKernel=CUDNN_FLASH_ATTENTION\n")
    put("dispatch", "no_newline.txt", "Operator=MultiHeadAttention SdpaKernel=TRT_FUSED_ATTENTION")

    put("gate_summary", "pytest.txt",
        "collected 9 items\n\ntest_a.py ..s..x\n"
        "SKIPPED [2] test_a.py:12: needs CUDA\nSKIPPED [1] test_b.py:3: no GPU\n"
        "===== 3 passed, 3 skipped, 2 xfailed, 1 xpassed, 1 error, 2 deselected, 1 warning "
        "in 0.52s =====\n")
    put("gate_summary", "pytest_none.txt", "==== no tests ran in 0.00s ====\n")
    put("gate_summary", "ctest.txt",
        "75% tests passed, 1 tests failed out of 4\n\nTotal Test time (real) =   0.35 sec\n\n"
        "The following tests did not run:\n\t  3 - unit/gpu (Skipped)\n\n"
        "The following tests FAILED:\n\t  2 - unit/x (Failed)\n")
    put("gate_summary", "cmocka.txt",
        "[ RUN      ] b\n[  SKIPPED ] b\n[==========] 3 test(s) run.\n[  PASSED  ] 1 test(s).\n"
        "[  SKIPPED ] 1 test(s), listed below:\n[  SKIPPED ] b\n\n 1 SKIPPED TEST(S)\n")
    put("gate_summary", "plain.txt", "tests: 3 passed, 2 failed, 1 skipped\n")
    # summary.json's shape: the top-level batch list and each configuration's batch records
    # are what the scanner hands out; strings and a nested "batches" that it must not
    rec = {"index": 0, "first_call_s": 0.001, "median_s": None, "outputs": [{"output": "y", "passed": True}],
           "passed": True}
    put("json_scan", "summary.json", json.dumps({
        "schema": "ortqual.validate/1", "note": "[\"batches\": {]",
        "batches": [{"index": 0, "valid_size": 3, "lengths": [3]}, {"index": 1, "valid_size": 2, "lengths": [2]}],
        "configs": [{"name": "ref:encoder:fp64", "batches": []},
                    {"name": "cpu", "batches": [rec, dict(rec, index=1)], "dispatch": {"batches": [1, 2]}}],
        "verdict": "passed"}, indent=2))
    put("json_scan", "empty.json", '{"batches": [], "configs": [{"batches": [ ]}]}')

    # mask: byte 0 dtype (0 bool, 1 f32, 5 i32, 6 i64), bytes 1-2 B and L, then the data
    put("mask", "bool_2x4.bin", bytes([0, 2, 4]) + bytes([1, 1, 0, 0, 1, 1, 1, 0]))
    put("mask", "f32_2x3.bin", bytes([1, 2, 3]) + struct.pack("<6f", 1, 1, 1, 1, 0, 0))
    put("mask", "i64_hole.bin", bytes([6, 1, 3]) + struct.pack("<3q", 1, 0, 1))
    put("mask", "i32_empty_event.bin", bytes([5, 2, 2]) + struct.pack("<4i", 1, 1, 0, 0))

    with open("tests/fixtures/profiles/cuda_dynamic_encoder.json") as f:
        put("profile", "cuda_dynamic_encoder.json", f.read())
    put("profile", "trace_events.json", json.dumps({"traceEvents": [
        {"cat": "Node", "name": "Softmax_3_kernel_time", "dur": 5,
         "args": {"op_name": "Softmax", "provider": "CPUExecutionProvider",
                  "input_type_shape": [{"float": [2, 8]}], "output_type_shape": [{"float": [2, 8]}]}},
        {"cat": "Node", "name": "MemcpyToHost_kernel_time", "dur": 1,
         "args": {"op_name": "MemcpyToHost", "provider": "CUDAExecutionProvider"}}]}))
    put("profile", "empty.json", "[]")

    for m in ("sdpa_decomposed", "encoder_decomposed", "encoder_a24_fp16"):
        with open(f"{C}/inspect/{m}.onnx", "rb") as f:
            model = f.read()
        put("placement_model", f"{m}.bin",
            profile(model, cuda_except_shape).encode() + b"\0" + model)
    convert_seeds()


def convert_seeds():
    """fuzz_convert's input: byte 0 the passes (bits 0-4: fuse, mask-to-seqlen, expand-mask,
    lower, decompose-elu), the dtype (bits 5-6: float16, bfloat16) and allow_refused (bit 7);
    byte 1 the opset (bits 0-3: 12 + value, 0 the lowest needed), keep_elu (bit 4) and
    mask_input "mask" (bit 5); then the model."""
    fuse_seqlen_fp16 = bytes([0x01 | 0x02 | 0x20, 0])
    everything_bf16 = bytes([0x01 | 0x04 | 0x08 | 0x10 | 0x40 | 0x80, 24 - 12])
    seqlen_mask = bytes([0x02 | 0x80, 0x20])
    torch = "tests/fixtures/torch"
    for fixture in sorted(os.listdir(torch)):
        d = f"{torch}/{fixture}"
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith(".onnx"):
                continue
            with open(f"{d}/{f}", "rb") as fh:
                model = slim_model(fh.read())
            stem = f[:-5]
            opts = [fuse_seqlen_fp16, everything_bf16] if "op23" not in f else [seqlen_mask, everything_bf16]
            for k, o in enumerate(opts):
                put("convert", f"{stem}.{k}.bin", o + model)
            if "op18" in f:  # the matcher through inspect too
                put("inspect", f"torch_{stem}.onnx", model)
    for m in ("sdpa_decomposed", "encoder_decomposed", "sdpa_attention23"):
        with open(f"{C}/inspect/{m}.onnx", "rb") as fh:
            model = fh.read()
        put("convert", f"{m}.0.bin", fuse_seqlen_fp16 + model)
        put("convert", f"{m}.1.bin", everything_bf16 + model)


if __name__ == "__main__":
    main()
