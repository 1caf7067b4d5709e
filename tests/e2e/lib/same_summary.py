"""same_summary.py A/summary.json B/summary.json: exit 0 when two validation summaries agree
field by field, except what may differ between runs of one plan: timings, hosts, process ids,
the evidence of where they ran, and the directory they were written to (paths are compared
relative to their own output directory, with shards/<i>/ removed). Prints every difference."""
import json
import os
import re
import sys

# keys whose values are timings, places or the split itself, never results
# ("sums": an output's exact sums over its batches, as parts whose split depends on the order
# the shards were added in, never their value; the mean_abs, rms and rel_l2 made from them are
# compared, to the bit)
IGNORED = {"start", "end", "evidence", "worker", "cost", "session_create_s", "first_call_s",
           "median_s", "us", "seconds", "shards", "shard", "line", "sums"}


def norm_path(v, root):
    if isinstance(v, str) and "/" in v and os.path.abspath(v).startswith(root + "/"):
        return re.sub(r"^shards/\d+/", "", os.path.abspath(v)[len(root) + 1:])
    return v


def compare(a, b, ra, rb, where, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in IGNORED:
                continue
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'first' if k in a else 'second'}")
            else:
                compare(a[k], b[k], ra, rb, f"{where}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} items, {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, ra, rb, f"{where}[{i}]", out)
    elif norm_path(a, ra) != norm_path(b, rb):
        out.append(f"{where}: {a!r} != {b!r}")


def main():
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    ra, rb = (os.path.dirname(os.path.abspath(p)) for p in sys.argv[1:3])
    out = []
    compare(a, b, ra, rb, "summary", out)
    for line in out[:40]:
        print(line)
    if out:
        print(f"{len(out)} difference(s) between {sys.argv[1]} and {sys.argv[2]}")
    return 1 if out else 0


sys.exit(main())
