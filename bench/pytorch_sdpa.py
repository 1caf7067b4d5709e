#!/usr/bin/env python3
"""Time PyTorch's scaled_dot_product_attention on the GPU with the clocks ortqual's side reads,
for scripts/same-clock.sh. Shapes as `ortqual export sdpa --io-dtype float16` builds them:
q, k, v [B, H, L, D] float16 in, float16 out, no mask. Backends FLASH_ATTENTION,
EFFICIENT_ATTENTION and MATH; per backend and length L, after --warmup calls:

  wall_ms    time.perf_counter() around one call plus torch.cuda.synchronize(): wall time per
             synchronized call, the clock `ortqual bench` reads around Run (device I/O binding,
             outputs synchronized)
  event_ms   CUDA events recorded on the stream before and after the call (GPU time between them)
  kernel_ms  the CUDA kernels torch.profiler records over --profile-iters calls, summed per call:
             GPU kernel time, what ORT's profile gives when it has GPU kernel events

Writes JSON (--json; the format scripts/same_clock.py reads: tests/fixtures/bench/
pytorch_sdpa_format_sample.json shows it) and/or CSV (-o).

usage: pytorch_sdpa.py --seq-lens 512,1024 --batch 1 --heads 8 --head-dim 64 --iters 20 --json out.json
"""
import argparse
import csv
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "math": SDPBackend.MATH}


def summary(samples):
    return {"p50": statistics.median(samples), "mean": statistics.mean(samples), "min": min(samples),
            "samples": samples}


def wall_ms(q, k, v, iters):
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def event_ms(q, k, v, iters):
    out = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        F.scaled_dot_product_attention(q, k, v)
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return out


def device_us(e):
    """A GPU event's duration in microseconds (kernels and memsets are CUDA device events)."""
    if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA:
        return float(e.time_range.elapsed_us())
    return 0.0


def kernel_ms(q, k, v, calls):
    """Per call: the GPU work torch.profiler records (CUDA activity only: kernels, memsets)."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
    total, names = 0.0, set()
    for e in prof.events():
        us = device_us(e)
        if us > 0:
            total += us
            names.add(e.name)
    if not names:
        raise RuntimeError("torch.profiler recorded no CUDA kernel events")
    return {"per_call": total / 1e3 / calls, "calls": calls, "kernels": sorted(names)}


def time_backend(backend, q, k, v, a):
    with sdpa_kernel(BACKENDS[backend]):
        for _ in range(a.warmup):
            F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
        return {"wall_ms": summary(wall_ms(q, k, v, a.iters)),
                "event_ms": summary(event_ms(q, k, v, a.iters)),
                "kernel_ms": kernel_ms(q, k, v, a.profile_iters)}


def record(a, backend, L, timed, error):
    r = {"backend": backend, "batch": a.batch, "seq_len": L, "heads": a.heads, "head_dim": a.head_dim,
         "dtype": "fp16", "status": "ok" if timed else "error", "error": error}
    r.update(timed or {"wall_ms": None, "event_ms": None, "kernel_ms": None})
    return r


def write_csv(path, results):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["backend", "batch", "seq_len", "heads", "head_dim", "dtype", "wall_p50_ms", "event_p50_ms",
                    "kernel_ms", "iters", "error"])
        for r in results:
            ok = r["status"] == "ok"
            w.writerow([r["backend"], r["batch"], r["seq_len"], r["heads"], r["head_dim"], r["dtype"],
                        r["wall_ms"]["p50"] if ok else "", r["event_ms"]["p50"] if ok else "",
                        r["kernel_ms"]["per_call"] if ok else "", len(r["wall_ms"]["samples"]) if ok else 0,
                        r["error"] or ""])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seq-lens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--backends", default="flash,efficient,math")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--profile-iters", type=int, default=10)
    ap.add_argument("--json", help="write the JSON here")
    ap.add_argument("-o", "--output", help="write CSV here")
    ap.add_argument("--seed", type=int, default=12345)
    a = ap.parse_args()
    if not a.json and not a.output:
        ap.error("give --json and/or -o")
    g = torch.Generator(device="cuda").manual_seed(a.seed)
    results = []
    for L in [int(x) for x in a.seq_lens.split(",")]:
        shape = (a.batch, a.heads, L, a.head_dim)
        q, k, v = (torch.rand(shape, device="cuda", dtype=torch.float16, generator=g) * 2 - 1 for _ in range(3))
        for b in a.backends.split(","):
            try:
                results.append(record(a, b, L, time_backend(b, q, k, v, a), None))
            except (RuntimeError, torch.OutOfMemoryError) as e:  # e.g. MATH out of memory at long L
                results.append(record(a, b, L, None, str(e).splitlines()[0]))
                print(f"{b} L={L}: {str(e).splitlines()[0]}", file=sys.stderr)
            torch.cuda.empty_cache()
        print(f"L={L} done", file=sys.stderr)
    doc = {"tool": "bench/pytorch_sdpa.py", "format": 1, "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(),
           "command_line": sys.argv,
           "config": {"batch": a.batch, "heads": a.heads, "head_dim": a.head_dim, "dtype": "fp16",
                      "warmup": a.warmup, "iters": a.iters, "profile_iters": a.profile_iters, "seed": a.seed},
           "results": results}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    if a.output:
        write_csv(a.output, results)
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}", file=sys.stderr)


if __name__ == "__main__":
    main()
