#!/usr/bin/env python3
"""cuda-op-probe.py OUTDIR ORTQUAL_RUNTIME_ARGS...: small one- and few-node models (written with the
`onnx` package) validated on cpu and cuda by `ortqual validate --model` ($ORTQUAL), to find which
operator form makes ORT's CUDA EP fail. Written for the head-size padding of `convert`: on ORT
1.29 (npm packaging, H200) every Slice of the last axis killed the process while Pad, Split,
Gather and Attention with head size 16 ran (docs/convert.md). A team tool for the GPU host.
"""
import os, subprocess, sys, json
import numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
out = sys.argv[1]; B = os.environ["ORTQUAL"]; RT = sys.argv[2:]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
def model(name, nodes, inputs, outputs, inits, feeds, info=True):
    vinfo = []
    if info:
        outs = {o.name for o in outputs}
        for n in nodes:
            for o in n.output:
                if o in outs: continue
                t = T.FLOAT16 if o.endswith("h") else T.FLOAT
                d = [2, 4, 10, 12] if o == "y" else [2, 4, 10, 16]
                vinfo.append(vi(o, t, d))
    g = h.make_graph(nodes, name, inputs, outputs, inits, value_info=vinfo)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 24)]); m.ir_version = 12
    p = os.path.join(out, name + ".onnx"); onnx.save(m, p)
    np.savez(os.path.join(out, name + ".npz"), **feeds)
    r = subprocess.run([B, "validate", "--model", p, "--inputs", os.path.join(out, name + ".npz"), "--no-mask",
                        "--padding", "report", "--no-plots", "--force", "--outdir", os.path.join(out, "run_" + name),
                        "--configs", "cpu:model:fp32,cuda:model:fp16"] + RT, capture_output=True, text=True)
    res = []
    try:
        for c in json.load(open(os.path.join(out, "run_" + name, "summary.json")))["configs"]:
            res.append("%s=%s %s" % (c["name"], c.get("status"), (c.get("reason") or "")[:200]))
    except Exception as e:
        res.append("no summary: " + (r.stderr.strip().splitlines() or ["?"])[-1])
    print("%-14s exit %d  %s" % (name, r.returncode, " | ".join(res)), flush=True)
    open(os.path.join(out, name + ".log"), "w").write(r.stdout + r.stderr)
vi = lambda n, t, s: h.make_tensor_value_info(n, t, s)
q = {k: rng.standard_normal((2, 4, 10, 12)).astype(np.float32) for k in "qkv"}
q16 = {k: rng.standard_normal((2, 4, 10, 16)).astype(np.float32) for k in "qkv"}
seq = np.array([10, 6], dtype=np.int64)
pads = nh.from_array(np.array([0, 0, 0, 0, 0, 0, 0, 4], dtype=np.int64), "pads")
st = nh.from_array(np.array([0], np.int64), "st"); en = nh.from_array(np.array([-4], np.int64), "en"); ax = nh.from_array(np.array([3], np.int64), "ax")
I12 = [vi(k, T.FLOAT, [2, 4, 10, 12]) for k in "qkv"]; I16 = [vi(k, T.FLOAT, [2, 4, 10, 16]) for k in "qkv"]
S = vi("seq", T.INT64, [2])
casts16 = lambda src: [h.make_node("Cast", [src[i]], [k + "h"], to=T.FLOAT16) for i, k in enumerate("qkv")]
att = lambda extra=[]: h.make_node("Attention", ["qh", "kh", "vh"] + extra, ["oh"], scale=float(1 / np.sqrt(12)))
back = h.make_node("Cast", ["oh"], ["o"], to=T.FLOAT)
X16 = [vi("q", T.FLOAT, [2, 4, 10, 16])]; Y12 = [vi("y", T.FLOAT, [2, 4, 10, 12])]
big = np.iinfo(np.int64).max
c = lambda n, a: nh.from_array(np.array(a, dtype=np.int64), n)
F = {"q": q16["q"]}
model("slice_neg_axes", [h.make_node("Slice", ["q", "st", "en", "ax"], ["y"])], X16, Y12, [c("st", [0]), c("en", [-4]), c("ax", [3])], F)
model("slice_pos_axes", [h.make_node("Slice", ["q", "st", "en", "ax"], ["y"])], X16, Y12, [c("st", [0]), c("en", [12]), c("ax", [3])], F)
model("slice_neg1_axes", [h.make_node("Slice", ["q", "st", "en", "ax"], ["y"])], X16, Y12, [c("st", [0]), c("en", [12]), c("ax", [-1])], F)
model("slice_noaxes", [h.make_node("Slice", ["q", "st", "en"], ["y"])], X16, Y12, [c("st", [0, 0, 0, 0]), c("en", [big, big, big, 12])], F)
model("slice_steps", [h.make_node("Slice", ["q", "st", "en", "ax", "sp"], ["y"])], X16, Y12, [c("st", [0]), c("en", [12]), c("ax", [3]), c("sp", [1])], F)
model("split", [h.make_node("Split", ["q", "sp"], ["y", "z"], axis=3)], X16, Y12 + [vi("z", T.FLOAT, [2, 4, 10, 4])], [c("sp", [12, 4])], F)
model("gather", [h.make_node("Gather", ["q", "ix"], ["y"], axis=3)], X16, Y12, [c("ix", list(range(12)))], F)
eye = np.zeros((16, 12), np.float32); eye[:12, :12] = np.eye(12)
model("matmul", [h.make_node("MatMul", ["q", "E"], ["y"])], X16, Y12, [nh.from_array(eye, "E")], F)
