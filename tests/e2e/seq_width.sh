#!/usr/bin/env bash
# QA round 6 (2026-12-07), defects 1 and 4, with the real ONNX Runtime (models and batches:
# lib/width_axis.py, B = 3 events padded to L = 8).
# 1. A FALSE GREEN: a static export's cls [3,4,8] (4 rows of 8 class scores per event, no
#    sequence axis) had its last axis masked by the sizes rule, as 8 is L: the class columns past
#    each event's length were "reported, not judged", and a file wrong in every one of them
#    PASSED in validate, replay, bench --model and convert's check. The sizes read a sequence only
#    on axis 1, right after the batch: all four refuse (exit 2, one line naming the output, the
#    axis and the fix), a dynamic model whose cls has no declared shape too; --seq-axis cls=none
#    judges every element (the wrong file fails, the right one passes), and y [3,8,5] is still
#    masked by its sizes.
# 4. A static [L, L] causal mask was taken as the [B, L] padding mask: its 8 rows were counted
#    as the batch's events (summary, report, the rewritten inputs). It is not the padding mask.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/width_axis.py" . || fail "width_axis.py"

axis() { echo "^ortqual $1: $2: output '$3' shape \[3,4,8\]: axis 2 has the mask's padded length 8, but the sizes read a sequence only on axis 1, right after the batch \(\[B, L, \.\.\.\]\): an axis past it is as well a width of size L .*: say --seq-axis $3=2 if it is per position, or $3=none, or export with named dynamic axes \(or the sequence axis denoted DATA_TIME\)$"; }
# refused DIR: the refused run left error.json and nothing else
refused() {
    local left
    left=$(cd "$1" 2>/dev/null && ls -A | tr '\n' ' ')
    [ "$left" = "error.json " ] && ok "$1 holds only error.json" || bad "$1 holds '$left', expected error.json only"
}
one_line 2 "$(axis validate static_attn.onnx cls)" \
    "$Q" validate --model static_attn.onnx --inputs sa_in.npz --expected sa_bad.npz --outdir v --no-plots
refused v
one_line 2 "$(axis replay static_attn.onnx cls)" \
    "$Q" replay --model static_attn.onnx --inputs sa_in.npz --expected sa_bad.npz --outdir r
refused r
one_line 2 "$(axis bench static_attn.onnx cls)" \
    "$Q" bench --model static_attn.onnx --inputs sa_in.npz --expected sa_bad.npz --iters 1 --warmup 0 --outdir b
one_line 2 "$(axis convert static_width.onnx scores)" \
    "$Q" convert static_width.onnx -o sw.onnx --fuse --inputs sa_in.npz --expected sw_bad.npz
[ ! -e sw.onnx ] && ok "nothing converted written" || bad "sw.onnx written"
one_line 2 "$(axis validate dyn_noshape.onnx cls)" \
    "$Q" validate --model dyn_noshape.onnx --inputs sa_in.npz --expected sa_bad.npz --outdir d --no-plots
# the caller says the axis is none: every element judged; y [3,8,5] masked by its sizes
expect 1 "output cls: FAIL valid=96/96 .*over_tol=40 " \
    "$Q" validate --model static_attn.onnx --inputs sa_in.npz --expected sa_bad.npz --seq-axis cls=none --outdir n --no-plots
expect 0 "verdict: PASSED" \
    "$Q" validate --model static_attn.onnx --inputs sa_in.npz --expected sa_ok.npz --seq-axis cls=none --outdir k --no-plots
$PY - <<'PY' && ok "y masked (50 padded), cls not" || bad "the padding records"
import json
o = {x["output"]: x["padding"] for x in json.load(open("k/summary.json"))["configs"][1]["batches"][0]["outputs"]}
assert o["y"]["masked"] and o["y"]["padded"] == 10 * 5 + 0 and not o["cls"]["masked"], o
PY
expect 1 "FAILED" "$Q" bench --model static_attn.onnx --inputs sa_in.npz --expected sa_bad.npz --seq-axis cls=none \
    --iters 1 --warmup 0 --outdir nb
expect 1 "vs expected   scores: FAIL valid=96/96" "$Q" convert static_width.onnx -o nc.onnx --fuse --inputs sa_in.npz --expected sw_bad.npz --seq-axis scores=none

# 4: the causal [8, 8] mask is not the padding mask: 3 events of 8 valid positions
expect 0 "input 'causal_mask' is not taken as the padding mask: its two axes have one fixed size" \
    "$Q" validate --model causal_static.onnx --inputs cs_io.npz --outdir c --no-plots
$PY - <<'PY' && ok "3 events, 24 valid tokens" || bad "the causal mask's rows counted as events"
import json, zipfile
s = json.load(open("c/summary.json")); b = s["batches"][0]
assert (b["batch_size"], b["valid_size"], b["lengths"], s["model_inputs"]["mask"]) == (3, 24, [8, 8, 8], None), b
assert "3 events, 24 valid tokens" in open("c/report.html").read()
PY
report
