#!/usr/bin/env bash
# What report.html, the figures and bench's tables show per build, per worker and per output
# (the thirty-fourth session's reportev; the gaps the thirty-third's qa8cache and infall left):
# 1. a campaign whose shards ran on ONNX Runtime 1.29 and 1.30 drew both builds in the latency
#    figure as one run's configurations; each series now names its build (version and the
#    library's short SHA-256), in report.html and in `ortqual plot`'s SVG. A run on one build
#    keeps the names alone.
# 2. report.html's EP devices table was the first worker's (1.29's CPU provider for both
#    builds); now each configuration's own, those whose devices read the same under one row
#    naming them.
# 3. bench --model --expected: an output of matched infinities (judge2's "not compared") had no
#    cell of its own in report.html and summary.csv, only the row's number or a blank; both now
#    say `output 'y': not compared (...)` as the console does, and a row none of whose outputs
#    compared a value says "not compared" in its max |error| cell.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
need_ort130
V=(--num-events 4 --batch-size 2 --max-len 16 --length-policy fixed --repeat 1 --warmup 0 --no-plots --progress never
   --no-cache --configs ref:encoder:fp64,cpu:attention24:fp32,cpu:decomposed:fp32)
expect 0 "prepared 2 shards" "$Q" validate "${V[@]}" --shard-by config --outdir C --prepare-shards 2
expect 0 "shard 0 of 2 done" env ORTQUAL_ORT_LIB="$OQ_ORT_LIB" "$Q" validate "${V[@]}" --shard-by config --outdir C --shard 0/2
expect 0 "shard 1 of 2 done" env ORTQUAL_ORT_LIB="$ORT130" "$Q" validate "${V[@]}" --shard-by config --outdir C --shard 1/2
expect 0 "verdict: PASSED" "$Q" merge C
expect 0 "runtime_valid_size.svg" "$Q" plot C/summary.json --out figs --format svg
expect 0 "verdict: PASSED" "$Q" validate "${V[@]}" --outdir one

# 1. the latency figure's series: "CONFIG (ORT VERSION, SHA-256 12 hex)" from summary.json's builds
$PY - C one figs/runtime_valid_size.svg <<'PY' && ok "latency figure: each series names its build" || bad "latency figure"
import json, re, sys
def labels(text):
    fig = text[text.index("Latency per batch against valid tokens"):]
    return sorted(set(re.findall(r'data-label="([^"]*)"', fig)))
s = json.load(open(sys.argv[1] + "/summary.json"))
want = ["ref:encoder:fp64"] + [f"{c} (ORT {b['version']}, SHA-256 {b['library_sha256'][:12]})"
                               for b in s["evidence"]["onnxruntime_builds"] for c in b["configs"]]
assert [b["version"] for b in s["evidence"]["onnxruntime_builds"]] == ["1.29.0", "1.30.0"], s["evidence"]
page = open(sys.argv[1] + "/report.html").read()
assert labels(page[page.index('<figure id="fig-runtime_valid_size">'):]) == sorted(want), labels(page)
assert labels(open(sys.argv[3]).read()) == sorted(want), "ortqual plot's SVG"
one = open(sys.argv[2] + "/report.html").read()
got = labels(one[one.index('<figure id="fig-runtime_valid_size">'):])
assert got == sorted(["ref:encoder:fp64", "cpu:attention24:fp32", "cpu:decomposed:fp32"]), got
PY

# 2. the EP devices table, per configuration: [(configurations, [(provider, version)])]
devices() {
  $PY - "$1" <<'PY'
import html, re, sys
page = open(sys.argv[1]).read()
table = page[page.index('<h3 id="ep-devices">'):]
table = table[:table.index("</table>")]
groups = []
for row in re.findall(r"<tr.*?</tr>", table):
    head = re.match(r'<tr class="device-group"><th colspan="6">(.*)</th></tr>', row)
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
    if head: groups.append((html.unescape(head.group(1)), []))
    elif cells: groups[-1][1].append((cells[0], cells[2]))
print(groups)
PY
}
got=$(devices C/report.html)
[ "$got" = "[('cpu:attention24:fp32', [('CPUExecutionProvider', '1.29.0')]), ('cpu:decomposed:fp32', [('CPUExecutionProvider', '1.30.0')])]" ] &&
  ok "EP devices: each build's worker its own" || bad "EP devices of the campaign: $got"
got=$(devices one/report.html)
[ "$got" = "[('cpu:attention24:fp32, cpu:decomposed:fp32', [('CPUExecutionProvider', '1.29.0')])]" ] &&
  ok "EP devices: one build's configurations grouped" || bad "EP devices of one run: $got"

# 3. bench --model: y all +inf on both sides beside a finite z (two.onnx); y alone (sq.onnx);
# every output finite (the control)
$PY "$OQ_SOURCE_DIR/tests/e2e/lib/inf_models.py" || bad "writing the models and batches"
B=(--iters 1 --warmup 0 --threads 1 --allow-skip)
expect 0 "verdict: NOT TESTED" "$Q" bench --model two.onnx --inputs of_in.npz --expected of_two.npz "${B[@]}" --outdir b1
expect 0 "verdict: NOT TESTED" "$Q" bench --model sq.onnx --inputs of_in.npz --expected of_exp.npz "${B[@]}" --outdir b2
expect 0 "verdict: PASSED" "$Q" bench --model two.onnx --inputs fin_in.npz --expected fin_two.npz "${B[@]}" --outdir b3
$PY - <<'PY' && ok "bench: report.html and summary.csv say which output was not compared" || bad "bench's tables"
import csv, html, re
note = "output 'y': not compared (its 4 valid elements are infinities the expected file holds too: inf_matched)"
def table(d):
    page = open(d + "/report.html").read()
    t = page[page.index('id="config-table"'):]
    t = t[:t.index("</table>")]
    rows = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in re.findall(r"<tr.*?</tr>", t)]
    return [r for r in rows if r]
def row_csv(d):
    (r,) = csv.DictReader(open(d + "/summary.csv"))
    return r["max_abs_err"], r["error"]
# y not compared beside z: the row's error is z's, and a row under it names y
assert table("b1")[1] == ["", note] and table("b1")[0][-1] == "0", table("b1")
assert row_csv("b1") == ("0", note), row_csv("b1")
# no output compared: the cell says so, not a blank
assert table("b2")[0][-1] == "not compared" and table("b2")[1] == ["", note], table("b2")
assert row_csv("b2") == ("", note), row_csv("b2")
# compared: a number, no note
assert len(table("b3")) == 1 and table("b3")[0][-1] == "0", table("b3")
assert row_csv("b3") == ("0", ""), row_csv("b3")
PY
report
