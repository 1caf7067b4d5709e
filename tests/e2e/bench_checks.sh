#!/usr/bin/env bash
# ortqual bench: what is checked before the sweep (duplicate or empty list items, zero sizes,
# repeated options, the output folder) and what the sweep outlives (a shape whose inputs do not
# fit in memory is an oom row).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
TINY=(--num-heads 2 --head-dim 8 --iters 1 --warmup 0 --variants cpu:attention24:fp32 --quiet)

# 1. A length whose inputs cannot be allocated: oom rows, the other lengths still ran, exit 0.
expect 0 "wrote" "$Q" bench "${TINY[@]}" --seq-lens 16,100000000000 --outdir "$T/oom"
if "$PY" - "$T/oom" <<'PYEOF'; then ok "oom rows for an impossible length, the rest ok"; else bad "oom rows"; fi
import json, sys
res = json.load(open(sys.argv[1] + "/summary.json"))["results"]
got = [(r["seq_len"], r["masked"], r["status"]) for r in res]
assert got == [(16, True, "ok"), (16, False, "ok"), (100000000000, True, "oom"),
               (100000000000, False, "oom")], got
assert "out of memory" in res[2]["error"], res[2]["error"]
PYEOF

report
