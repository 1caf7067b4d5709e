#!/usr/bin/env python3
"""Join `ortqual bench --model` runs and bench/pytorch_sdpa.py's JSON into one table, same clock
on both sides: per backend and length L, wall time per synchronized call (ORT: CLOCK_MONOTONIC
around Run with device I/O binding and SynchronizeBoundOutputs; PyTorch: perf_counter around the
call and torch.cuda.synchronize()) and GPU kernel time (ORT: CUPTI's kernel records of its
profiled runs, `bench --profile-runs N --cupti`, or the GPU kernel events of its profile, which
only ORT builds with CUDA profiling write; PyTorch: the CUDA kernels torch.profiler records, also
through CUPTI). Writes OUT/same-clock.csv and
OUT/same-clock.md. Python 3 standard library only.

usage: same_clock.py --ort flash=ORT_FLASH/summary.json --ort efficient=... --ort math=... \\
                     --torch pytorch-sdpa.json --out OUTDIR

Each --ort summary is one backend's run (the kernel chosen with --ep-option sdpa_kernel=N); rows
are matched on (backend, L), L being the ORT row's seq_len. The shapes must agree (batch, heads,
head_dim, float16 in and out), else exit 2. A length one side lacks is a row with that side
empty, never dropped. A PyTorch file marked "format_sample" (the committed test sample, made-up
numbers) is refused unless --allow-format-sample, and then every output says so.
"""
import argparse
import csv
import json
import math
import os
import sys

COLUMNS = ["backend", "seq_len", "batch", "heads", "head_dim",
           "ort_wall_p50_ms", "torch_wall_p50_ms", "wall_ratio",
           "ort_kernel_ms", "torch_kernel_ms", "kernel_ratio", "ort_kernel_source",
           "ort_node_ms", "torch_event_ms", "ort_kernel_seen", "note"]
# the GPU kernels' names on each side (CUPTI's, PyTorch's profiler's): in the CSV only, too wide
# for the Markdown table
CSV_ONLY = ["ort_gpu_kernels", "torch_gpu_kernels"]
ORT_KERNEL_NAMES = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION", "math": "MATH",
                    "cudnn": "CUDNN_FLASH_ATTENTION"}


class InputError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}")


def query_shape(row, path):
    """[B, H, L, D] and dtype of the ORT row's query input."""
    for i in row.get("inputs") or []:
        if i["name"] == "query":
            return i["shape"], i["dtype"]
    raise InputError(f"{path}: row seq_len={row.get('seq_len')} has no 'query' input: not an sdpa model run")


def ort_rows(backend, path):
    d = load(path)
    if d.get("tool") != "ortqual bench" or d.get("mode") != "model":
        raise InputError(f"{path}: not a summary.json of `ortqual bench --model`")
    rows = {}
    for r in d["results"]:
        shape, dtype = query_shape(r, path)
        if len(shape) != 4 or dtype != "float16":
            raise InputError(f"{path}: query is {dtype} {shape}; the table wants float16 [B, H, L, D] "
                             "(ortqual export sdpa --io-dtype float16)")
        rows[shape[2]] = {"row": r, "shape": shape, "path": path}
    return rows


def torch_rows(path, allow_sample):
    d = load(path)
    if d.get("tool") != "bench/pytorch_sdpa.py":
        raise InputError(f"{path}: not the JSON of bench/pytorch_sdpa.py")
    if d.get("format_sample") and not allow_sample:
        raise InputError(f"{path}: a format sample with made-up numbers, not a measurement "
                         "(--allow-format-sample is for tests)")
    rows = {}
    for r in d["results"]:
        if r.get("dtype") != "fp16":
            raise InputError(f"{path}: {r['backend']} L={r['seq_len']} is {r.get('dtype')}, the table wants fp16")
        rows[(r["backend"], r["seq_len"])] = r
    return d, rows


def check_shape(o, t, where):
    B, H, L, D = o["shape"]
    if (B, H, D) != (t["batch"], t["heads"], t["head_dim"]):
        raise InputError(f"{where}: ORT runs B={B} H={H} D={D} ({o['path']}), PyTorch B={t['batch']} "
                         f"H={t['heads']} D={t['head_dim']}: not the same problem")


def ratio(a, b):
    return a / b if a is not None and b is not None and b > 0 else None


def ort_side(o, backend):
    """Wall p50, GPU kernel time, node time and the kernel ORT's routing lines named."""
    if o is None:
        return None, None, None, [], None, "", "no ORT row"
    r = o["row"]
    notes = []
    if r["status"] != "ok":
        notes.append(f"ORT {r['status']}: {r.get('error') or ''}".strip())
    wall = (r.get("stats_ms") or {}).get("p50")
    prof = r.get("profile") or {}
    kernel, node = prof.get("kernel_ms"), prof.get("node_ms")
    if r["status"] == "ok" and not prof:
        notes.append("ORT not profiled (--profile-runs)")
    elif prof and kernel is None and r.get("device") == "cpu":
        notes.append("ORT on CPU: no GPU kernels; ort_node_ms is its nodes' compute time")
    elif prof and kernel is None:
        notes.append("ORT's profile has no GPU kernel events (a build without CUDA profiling; "
                     "bench --cupti measures them); ort_node_ms is host time per node, not GPU time")
    seen = r.get("kernel_observed") or ""
    want = ORT_KERNEL_NAMES.get(backend)
    if seen and want and any(k != want for k in seen.split("+")):
        notes.append(f"ORT ran {seen}, not {want}")
    return wall, kernel, prof.get("kernel_source"), prof.get("kernel_names") or [], node, seen, "; ".join(notes)


def torch_side(t):
    if t is None:
        return None, None, None, [], "no PyTorch row"
    if t["status"] != "ok":
        return None, None, None, [], f"PyTorch error: {t.get('error') or ''}"
    k = t["kernel_ms"]
    return t["wall_ms"]["p50"], k["per_call"], t["event_ms"]["p50"], k.get("kernels") or [], ""


def join(ort, torch, backends):
    out = []
    for b in backends:
        for L in sorted(set(ort[b]) | {L for (tb, L) in torch if tb == b}):
            o, t = ort[b].get(L), torch.get((b, L))
            if o and t:
                check_shape(o, t, f"{b} L={L}")
            shape = o["shape"] if o else [t["batch"], t["heads"], L, t["head_dim"]]
            ow, ok_, osrc, onames, on, seen, onote = ort_side(o, b)
            tw, tk, te, tnames, tnote = torch_side(t)
            out.append({"backend": b, "seq_len": L, "batch": shape[0], "heads": shape[1], "head_dim": shape[3],
                        "ort_wall_p50_ms": ow, "torch_wall_p50_ms": tw, "wall_ratio": ratio(ow, tw),
                        "ort_kernel_ms": ok_, "torch_kernel_ms": tk, "kernel_ratio": ratio(ok_, tk),
                        "ort_kernel_source": osrc, "ort_gpu_kernels": "; ".join(onames),
                        "torch_gpu_kernels": "; ".join(tnames), "ort_node_ms": on, "torch_event_ms": te, "ort_kernel_seen": seen,
                        "note": "; ".join(n for n in (onote, tnote) if n)})
    return out


def cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else ""
    return str(v)


def write_csv(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS + CSV_ONLY)
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in COLUMNS + CSV_ONLY])
    os.replace(tmp, path)


def write_md(path, rows, header):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(header)
        f.write("\n| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n")
        for r in rows:
            f.write("| " + " | ".join(cell(r[c]).replace("|", "/") for c in COLUMNS) + " |\n")
    os.replace(tmp, path)


def header(args, tdoc, ort):
    sample = tdoc.get("format_sample")
    lines = []
    if sample:
        lines.append("**FORMAT SAMPLE: the PyTorch numbers are made up (tests/fixtures/bench), not a measurement.**\n")
    first = next(iter(next(iter(ort.values())).values()))["path"]
    sysinfo = load(first).get("system", {})
    lines.append(f"ORT {sysinfo.get('ort_version', '?')} ({sysinfo.get('ort_library', '?')}); "
                 f"torch {tdoc.get('torch')}, CUDA {tdoc.get('cuda')}, cuDNN {tdoc.get('cudnn')}, "
                 f"{tdoc.get('device')}.\n")
    lines.append("Wall: per synchronized call, p50 (ORT: Run with device I/O binding + SynchronizeBoundOutputs; "
                 "PyTorch: call + torch.cuda.synchronize()). Kernel: GPU kernel time per call (ORT: "
                 "ort_kernel_source, CUPTI's kernel records or its profile's GPU kernel events; PyTorch: "
                 "torch.profiler's CUDA kernels, from CUPTI). Ratios are ORT / PyTorch.\n")
    lines.append("Inputs: " + ", ".join(f"{b}={p}" for b, p in args.ort) + f"; {args.torch}\n")
    return "\n".join(lines)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ort", action="append", required=True, metavar="BACKEND=SUMMARY",
                    help="one ortqual bench --model summary.json per backend (flash, efficient, math)")
    ap.add_argument("--torch", required=True, help="bench/pytorch_sdpa.py --json output")
    ap.add_argument("--out", required=True, help="directory for same-clock.csv and same-clock.md")
    ap.add_argument("--allow-format-sample", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    pairs = []
    for s in a.ort:
        b, eq, p = s.partition("=")
        if not eq or not b or not p:
            ap.error(f"--ort '{s}': want BACKEND=SUMMARY")
        pairs.append((b, p))
    a.ort = pairs
    return a


def main(argv):
    a = parse_args(argv)
    try:
        ort = {b: ort_rows(b, p) for b, p in a.ort}
        tdoc, torch = torch_rows(a.torch, a.allow_format_sample)
        rows = join(ort, torch, [b for b, _ in a.ort])
        os.makedirs(a.out, exist_ok=True)
        write_csv(os.path.join(a.out, "same-clock.csv"), rows)
        write_md(os.path.join(a.out, "same-clock.md"), rows, header(a, tdoc, ort))
    except InputError as e:
        print(f"same_clock: {e}", file=sys.stderr)
        return 2
    print(f"wrote {a.out}/same-clock.csv and {a.out}/same-clock.md ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
