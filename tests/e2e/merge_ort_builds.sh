#!/usr/bin/env bash
# A campaign split by configuration whose shards ran on two ONNX Runtime builds (1.29 and 1.30,
# QA round 8b, D1) merges to PASSED, and says so: summary.json's evidence.onnxruntime_builds
# lists each build (version, library, SHA-256, ELF build-id, build string) with the
# configurations it ran, report.html's Environment names both builds and tables them, and the
# console lists them (the merged summary said "ONNX Runtime 1.29.0", its first shard's, alone).
# A run on one build lists that one with every configuration, and its page and console say
# nothing more.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
need_ort130
LIB30="$(realpath "$(dirname "$ORT130")")/$(basename "$ORT130")" # as the tool records it: its folder resolved
S=(--num-events 4 --batch-size 2 --max-len 16 --length-policy fixed --repeat 1 --warmup 0 --no-plots
   --progress never --no-cache --configs ref:encoder:fp64,cpu:attention24:fp32,cpu:decomposed:fp32 --shard-by config)
must 0 "prepared 2 shards" "$T/p.log" "$Q" validate "${S[@]}" --outdir "$T/C" --prepare-shards 2
must 0 "shard 0 of 2 done" "$T/c0.log" env ORTQUAL_ORT_LIB="$OQ_ORT_LIB" "$Q" validate "${S[@]}" --outdir "$T/C" --shard 0/2
must 0 "shard 1 of 2 done" "$T/c1.log" env ORTQUAL_ORT_LIB="$ORT130" "$Q" validate "${S[@]}" --outdir "$T/C" --shard 1/2
must 0 "verdict: PASSED" "$T/m.log" "$Q" merge "$T/C"
grep -q "^ONNX Runtime: 2 builds ran" "$T/m.log" || fail "the merge's console does not say two builds ran: $(cat "$T/m.log")"
grep -qE "^    1\.29\.0 \(.*, SHA-256 [0-9a-f]{12}\): cpu:attention24:fp32$" "$T/m.log" &&
  grep -qF "    1.30.0 ($LIB30, SHA-256 " "$T/m.log" && grep -qE "^    1\.30\.0 \(.*, SHA-256 [0-9a-f]{12}\): cpu:decomposed:fp32$" "$T/m.log" ||
  fail "the merge's console does not name each build's configurations: $(cat "$T/m.log")"

# builds DIR: each build of DIR's summary.json, "VERSION CONFIG,CONFIG" a line, after checking
# that each is recorded whole
builds() {
  $PY - "$1/summary.json" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["evidence"]["onnxruntime_builds"]:
    assert b["library"] and len(b["library_sha256"]) == 64 and b["build_info"].startswith("ORT Build Info"), b
    assert b["build_id"] is None or len(b["build_id"]) >= 16, b
    print(b["version"], ",".join(b["configs"]))
PY
}
got=$(builds "$T/C") || fail "summary.json's onnxruntime_builds"
[ "$got" = "$(printf '1.29.0 cpu:attention24:fp32\n1.30.0 cpu:decomposed:fp32')" ] ||
  fail "summary.json does not list both builds with their configurations: $got"
# the page: the Environment's row names both, and a table each with its library and configurations
page() {
  $PY - "$1" "$LIB30" <<'PY'
import re, sys
html, lib30 = open(sys.argv[1]).read(), sys.argv[2]
assert "<tr><th>ONNX Runtime</th><td>2 builds: 1.29.0, 1.30.0" in html, "no row naming both builds"
assert "<th>providers compiled in</th>" not in html, "one build's providers given for both"
table = html[html.index('<h3 id="ort-builds">'):]
table = table[:table.index("</table>")]
rows = re.findall(r"<tr><td>(.*?)</td>.*?<code>(.*?)</code></td><td><code>(.*?)</code></td><td><code>(.*?)</code></td><td>(.*?)</td></tr>", table)
assert [(r[0], r[4]) for r in rows] == [("1.29.0", "cpu:attention24:fp32"), ("1.30.0", "cpu:decomposed:fp32")], rows
assert rows[1][2] == lib30 and len(rows[1][3]) == 64, rows
PY
}
page "$T/C/report.html" || fail "report.html of the merge does not show both builds"
rm "$T/C/report.html" && must 0 "report.html" "$T/r.log" "$Q" report "$T/C"
page "$T/C/report.html" || fail "report.html written again by ortqual report does not show both builds"

# one build: listed once with every configuration; no line, no table
V=(--num-events 4 --batch-size 2 --max-len 16 --length-policy fixed --repeat 1 --warmup 0 --no-plots --progress never
   --no-cache --configs ref:encoder:fp64,cpu:attention24:fp32,cpu:decomposed:fp32)
must 0 "verdict: PASSED" "$T/one.log" "$Q" validate "${V[@]}" --outdir "$T/one"
got=$(builds "$T/one") || fail "summary.json's onnxruntime_builds of a run on one build"
[ "$got" = "1.29.0 cpu:attention24:fp32,cpu:decomposed:fp32" ] || fail "one build listed as: $got"
! grep -q "builds ran" "$T/one.log" || fail "a run on one build said several ran: $(cat "$T/one.log")"
! grep -q 'id="ort-builds"' "$T/one/report.html" || fail "a run on one build has a table of builds"
echo "ok: the ONNX Runtime builds of a campaign are each named, with their configurations"
