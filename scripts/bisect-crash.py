#!/usr/bin/env python3
"""bisect-crash.py MODEL INPUTS.npz OUTDIR -- ORTQUAL_ARGS...: which node makes a provider crash.

For each node of MODEL in topological order, the sub-model that computes that node's first
output from the graph inputs (onnx.utils.Extractor) is validated with `ortqual validate --model
SUB --inputs INPUTS --no-mask --padding report ORTQUAL_ARGS...` (e.g. --configs
cpu:model:fp32,cuda:model:fp32 plus the runtime options); a sub-model whose worker dies of a
signal is reported with the node's name and op type. Writes OUTDIR/bisect.csv
(index,node,op,exit,reason) and prints the first node whose sub-model crashes; with
BISECT_FIRST=1 in the environment it stops there. Only INPUTS' members that are graph inputs
are given (saved outputs would name tensors a sub-model lacks, and validate refuses them). No
crash found while some sub-model did not run (refused, not extracted) is not an answer: it
says how many did not run and exits 1. A team tool for
hosts with the `onnx` Python package (the GPU host); the product does not need it.
"""
import csv
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.utils


def main():
    if "--" not in sys.argv or len(sys.argv[:sys.argv.index("--")]) != 4:
        sys.exit(__doc__)
    model_path, inputs, outdir = sys.argv[1:4]
    extra = sys.argv[sys.argv.index("--") + 1:]
    ortqual = os.environ.get("ORTQUAL", "ortqual")
    os.makedirs(outdir, exist_ok=True)
    model = onnx.load(model_path)
    model = onnx.shape_inference.infer_shapes(model)
    ex = onnx.utils.Extractor(model)
    graph_inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    with np.load(inputs) as z:
        given = {k: z[k] for k in z.files if k in graph_inputs}
    if not given:
        sys.exit("bisect-crash: %s: no member is a graph input of %s" % (inputs, model_path))
    inputs = os.path.join(outdir, "graph_inputs.npz")
    np.savez(inputs, **given)
    rows, first = [], None
    for k, node in enumerate(model.graph.node):
        if not node.output or not node.output[0]:
            continue
        sub_path = os.path.join(outdir, "sub_%03d.onnx" % k)
        try:
            sub = ex.extract_model(graph_inputs, [node.output[0]])
            onnx.save(sub, sub_path)
        except Exception as e:  # a value without type information cannot be a graph output
            rows.append((k, node.name, node.op_type, "", "not extracted: %s" % str(e).splitlines()[0]))
            continue
        run_dir = os.path.join(outdir, "run_%03d" % k)
        cmd = [ortqual, "validate", "--model", sub_path, "--inputs", inputs, "--no-mask", "--padding", "report",
               "--no-plots", "--force", "--outdir", run_dir] + extra
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        reason = ""
        try:
            for c in json.load(open(os.path.join(run_dir, "summary.json")))["configs"]:
                if "signal" in (c.get("reason") or ""):
                    reason = "%s: %s" % (c["name"], c["reason"])
        except (OSError, ValueError, KeyError):
            reason = (p.stderr.strip().splitlines() or ["no summary"])[-1]
        rows.append((k, node.name, node.op_type, p.returncode, reason))
        print("%3d %-40s %-20s exit %s %s" % (k, node.name[:40], node.op_type, p.returncode, reason), flush=True)
        os.remove(sub_path)
        if first is None and "signal" in reason:
            first = (k, node.name, node.op_type)
            if os.environ.get("BISECT_FIRST"):
                break
    with open(os.path.join(outdir, "bisect.csv"), "w", newline="") as f:
        csv.writer(f).writerows([("index", "node", "op", "exit", "reason")] + rows)
    if first:
        print("first crashing node: #%d %s (%s)" % first)
        return
    ran = sum(1 for r in rows if r[3] in (0, 1))
    if ran < len(rows) or not rows:
        sys.exit("first crashing node: NOT TESTED: %d of %d sub-models did not run (bisect.csv says why)"
                 % (len(rows) - ran, len(rows)))
    print("first crashing node: none (all %d sub-models ran)" % ran)


if __name__ == "__main__":
    main()
