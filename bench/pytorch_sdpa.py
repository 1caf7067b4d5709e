#!/usr/bin/env python3
"""Time PyTorch's scaled_dot_product_attention on the GPU, for the ORT/PyTorch ratios of
docs/results.md. Same shapes as `ortqual bench` (B, heads, L, head_dim; fp16; no mask),
backends FLASH_ATTENTION, EFFICIENT_ATTENTION and MATH, timed with CUDA events after a
warm-up. Writes CSV: backend,batch,seq_len,heads,head_dim,dtype,mean_ms,p50_ms,min_ms,iters

usage: pytorch_sdpa.py --seq-lens 512,1024 --batch 1 --heads 8 --head-dim 64 --iters 20 -o out.csv
"""
import argparse
import csv
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "math": SDPBackend.MATH}


def time_one(backend, q, k, v, warmup, iters):
    with sdpa_kernel(BACKENDS[backend]):
        for _ in range(warmup):
            F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
        samples = []
        for _ in range(iters):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            F.scaled_dot_product_attention(q, k, v)
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
    return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seq-lens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--backends", default="flash,efficient,math")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    g = torch.Generator(device="cuda").manual_seed(12345)
    rows = []
    for L in [int(x) for x in a.seq_lens.split(",")]:
        shape = (a.batch, a.heads, L, a.head_dim)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
        for b in a.backends.split(","):
            try:
                s = time_one(b, q, k, v, a.warmup, a.iters)
                rows.append([b, a.batch, L, a.heads, a.head_dim, "fp16", statistics.mean(s), statistics.median(s), min(s), len(s)])
            except (RuntimeError, torch.OutOfMemoryError) as e:  # e.g. MATH out of memory at long L
                rows.append([b, a.batch, L, a.heads, a.head_dim, "fp16", "", "", "", 0])
                print(f"{b} L={L}: {str(e).splitlines()[0]}", file=sys.stderr)
            torch.cuda.empty_cache()
        print(f"L={L} done", file=sys.stderr)
    with open(a.output, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["backend", "batch", "seq_len", "heads", "head_dim", "dtype", "mean_ms", "p50_ms", "min_ms", "iters"])
        w.writerows(rows)
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}", file=sys.stderr)


if __name__ == "__main__":
    main()
