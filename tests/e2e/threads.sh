#!/usr/bin/env bash
# The threads and execution mode ORT really ran with: ORT takes session.intra_op_num_threads,
# session.inter_op_num_threads and session.execution_mode over --threads and --inter-op-threads,
# so validate's and bench's records say the entry's value with its source and the option's
# (as graph_opt_level does); bench --baseline matches rows by the threads ORT ran, older
# summaries included; a newer ORT's unchecked key is said before the first configuration runs.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
need_ort130
V=(validate --export sdpa --configs ref:sdpa:fp64,cpu:decomposed:fp32 --num-events 2 --batch-size 2 --max-len 16
   --repeat 1 --warmup 0 --no-plots --threads 1)
B=(bench --variants cpu:attention24:fp32 --seq-lens 16 --modes masked --num-heads 2 --head-dim 8 --iters 3
   --warmup 1)

# ---- validate: the entry's count, its source and the option's
"$Q" "${V[@]}" --session-config session.intra_op_num_threads=2 --outdir v > v.out 2>&1 || fail "validate: $(tail -3 v.out)"
$PY - v/summary.json <<'PYEOF' && ok "validate summary.json: threads 2 from the entry, --threads 1 kept" || bad "validate threads: $(grep -o '"threads[^,]*' v/summary.json)"
import json, sys
ref, cpu = json.load(open(sys.argv[1]))["configs"]
assert (cpu["threads"], cpu["threads_from"], cpu["threads_option"]) == (2, "session_config", 1), cpu
assert ref["threads"] == 1 and "threads_from" not in ref, ref  # the C reference's own threads
assert "execution_mode" not in cpu and "inter_op_threads" not in cpu, cpu
PYEOF
grep -q "intra-op threads 2, from --session-config session.intra_op_num_threads, over --threads 1" v.out &&
  ok "validate text: the threads ran and where they came from" || bad "text: $(grep 'ONNX Runtime' v.out)"
grep -q "intra-op threads 2 (set by the session config entry session.intra_op_num_threads, over the option&#39;s 1)" v/report.html &&
  ok "report.html: the threads ran and where they came from" || bad "report.html: $(grep -o 'intra-op threads[^<]*' v/report.html)"
# ORT's default count (0) of a pool: one thread per physical core (its cpuinfo count of sysfs'
# cores: counted here from each CPU's core and package ids)
cores=$($PY -c '
import glob
ids = set()
for d in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology"):
    ids.add((open(d + "/physical_package_id").read().strip(), open(d + "/core_id").read().strip()))
print(max(1, len(ids)))')
"$Q" "${V[@]}" --session-config session.execution_mode=parallel --outdir vp > vp.out 2>&1 || fail "validate parallel: $(tail -3 vp.out)"
$PY - vp/summary.json "$cores" <<'PYEOF' && ok "validate summary.json: the entry's parallel mode, its inter-op threads ORT's default $cores" || bad "validate mode: $(grep -o '"execution_mode[^,]*\|"inter_op[^,]*' vp/summary.json)"
import json, sys
cpu = json.load(open(sys.argv[1]))["configs"][1]
assert (cpu["execution_mode"], cpu["execution_mode_from"], cpu["execution_mode_option"]) == ("parallel", "session_config", "sequential"), cpu
assert (cpu["threads"], "threads_from" in cpu) == (1, False), cpu
assert (cpu["inter_op_threads"], cpu["inter_op_threads_from"], "inter_op_threads_option" in cpu) == (int(sys.argv[2]), "ort-default", False), cpu
PYEOF
grep -q "ORT&#39;s inter-op threads $cores (its default for 0: the physical cores)" vp/report.html &&
  ok "report.html: ORT's default inter-op threads in parallel mode" || bad "parallel report.html: $(grep -o 'inter-op threads[^<]*' vp/report.html)"
# a summary without the new fields (written before them) still reads
$PY - v/summary.json <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
for c in s["configs"]:
    for k in ("threads_from", "threads_option"): c.pop(k, None)
    c.get("evidence", {}).pop("session_threads", None)
json.dump(s, open(sys.argv[1], "w"))
PYEOF
"$Q" report v > r.out 2>&1 && grep -q "report.html" r.out && ok "report: an older summary without the fields reads" || bad "report of an older summary: $(tail -3 r.out)"

# ---- bench: threads, inter-op threads and mode as run, in the config, the rows and the CSV
"$Q" "${B[@]}" --threads 1 --inter-op-threads 2 --session-config session.intra_op_num_threads=2 \
  --session-config session.execution_mode=sequential --quiet --outdir b > b.out 2>&1 || fail "bench: $(tail -3 b.out)"
$PY - b/summary.json b/summary.csv <<'PYEOF' && ok "bench: threads 2 and the sequential mode ORT ran, with their sources" || bad "bench: $(grep -o '"[a-z_]*thread[^,]*\|"execution_mode[^,]*' b/summary.json)"
import csv, json, sys
s = json.load(open(sys.argv[1]))
c, row = s["config"], s["results"][0]
assert (c["threads"], c["threads_from"], c["threads_option"]) == (2, "session_config", 1), c
assert (c["inter_op_threads"], c["inter_op_threads_from"], c["inter_op_threads_option"]) == (0, "session_config", 2), c
assert (c["execution_mode"], c["execution_mode_from"], c["execution_mode_option"]) == ("sequential", "session_config", "parallel"), c
assert (row["threads"], row["inter_op_threads"]) == (2, 0), row
r = next(csv.DictReader(open(sys.argv[2])))
assert (r["threads"], r["inter_op_threads"]) == ("2", "0"), r
PYEOF

"$Q" "${B[@]}" --threads 1 --session-config session.execution_mode=parallel --quiet --outdir bp > bp.out 2>&1 || fail "bench parallel: $(tail -3 bp.out)"
$PY - bp/summary.json "$cores" <<'PYEOF' && ok "bench: parallel mode's inter-op threads ORT's default $cores, the row's 0 as asked" || bad "bench parallel: $(grep -o '"inter_op[^,]*' bp/summary.json)"
import json, sys
s = json.load(open(sys.argv[1]))
c, row = s["config"], s["results"][0]
assert (c["inter_op_threads"], c["inter_op_threads_from"], "inter_op_threads_option" in c) == (int(sys.argv[2]), "ort-default", False), c
assert (c["execution_mode"], c["execution_mode_from"]) == ("parallel", "session_config"), c
assert row["inter_op_threads"] == 0, row
PYEOF

# ---- bench --baseline: rows matched by the threads ORT ran
"$Q" "${B[@]}" --threads 2 --quiet --outdir b2 > b2.out 2>&1 || fail "bench --threads 2: $(tail -3 b2.out)"
"$Q" "${B[@]}" --threads 1 --session-config session.intra_op_num_threads=2 --baseline b2/summary.json \
  --max-slowdown p50=100000% --quiet --outdir b3 > b3.out 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "1 compared" b3.out && ok "bench: the entry's 2 threads against --threads 2, compared" ||
  bad "bench entry against --threads 2: exit $rc: $(tail -2 b3.out)"
# an older baseline recorded --threads 1 where the entry ran 2: read as ORT ran it
$PY - b3/summary.json <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
for k in ("threads_from", "threads_option", "inter_op_threads_from", "inter_op_threads_option", "execution_mode",
          "execution_mode_from", "execution_mode_option"): s["config"].pop(k, None)
s["config"]["threads"] = 1
for r in s["results"]: r["threads"] = 1
json.dump(s, open(sys.argv[1], "w"))
PYEOF
"$Q" "${B[@]}" --threads 2 --baseline b3/summary.json --max-slowdown p50=100000% --quiet --outdir b4 > b4.out 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "1 compared" b4.out && ok "bench: an older baseline's --threads 1 under the entry's 2, compared with --threads 2" ||
  bad "bench against an older baseline: exit $rc: $(tail -2 b4.out)"
one_line 2 "another measurement: ORT's execution mode \"parallel\" \(from session config session\.execution_mode\) here, \"sequential\" in the baseline" \
  "$Q" "${B[@]}" --threads 2 --session-config session.execution_mode=parallel --baseline b2/summary.json --quiet --outdir b5

# ---- ORT's default (0): recorded as the threads ORT starts, one per physical core ($cores), with
# its source; the affinities entry recorded beside the count (ORT wants one per thread but the
# caller's, and numbers the processors from 1)
V0=("${V[@]:0:${#V[@]}-2}") # V without its --threads 1
"$Q" "${V0[@]}" --threads 0 --outdir d0 > d0.out 2>&1 || fail "validate --threads 0: $(tail -3 d0.out)"
$PY - d0/summary.json "$cores" <<'PYEOF' && ok "validate --threads 0: threads $cores, from ORT's default" || bad "threads 0: $(grep -o '"threads[^,]*' d0/summary.json)"
import json, sys
ref, cpu = json.load(open(sys.argv[1]))["configs"]
assert (cpu["threads"], cpu["threads_from"]) == (int(sys.argv[2]), "ort-default"), cpu
assert "threads_option" not in cpu and "threads_from" not in ref, (cpu, ref)
PYEOF
grep -q "ORT&#39;s intra-op threads $cores (its default for 0: the physical cores)" d0/report.html &&
  ok "validate --threads 0: report.html says ORT's count" || bad "threads 0 report.html: $(grep -o 'intra-op threads[^<]*' d0/report.html)"
"$Q" "${V0[@]}" --threads 1 --session-config session.intra_op_num_threads=0 --outdir d1 > d1.out 2>&1 || fail "validate entry 0: $(tail -3 d1.out)"
$PY - d1/summary.json "$cores" <<'PYEOF' && ok "validate: an entry's 0 over --threads 1 is ORT's default" || bad "entry 0: $(grep -o '"threads[^,]*' d1/summary.json)"
import json, sys
cpu = json.load(open(sys.argv[1]))["configs"][1]
assert (cpu["threads"], cpu["threads_from"], cpu["threads_option"]) == (int(sys.argv[2]), "ort-default", 1), cpu
PYEOF
"$Q" "${V0[@]}" --threads 2 --session-config session.intra_op_thread_affinities=1 --outdir af > af.out 2>&1 || fail "validate affinities: $(tail -3 af.out)"
$PY - af/summary.json <<'PYEOF' && ok "validate: the affinities entry recorded beside the threads" || bad "affinities: $(grep -o '"thread[^,]*' af/summary.json)"
import json, sys
cpu = json.load(open(sys.argv[1]))["configs"][1]
assert (cpu["threads"], cpu["thread_affinities"], "threads_from" in cpu) == (2, "1", False), cpu
PYEOF
grep -q "intra-op thread affinities 1 (session.intra_op_thread_affinities)" af.out &&
  ok "validate: the text says the affinities" || bad "affinities text: $(grep 'ONNX Runtime' af.out)"

# ---- a newer ORT's unchecked key: said before the first configuration's progress line
NEW=mlas.nchwc_pointwise_conv_max_input_channel_batch # a key of ORT 1.30, not of 1.29's headers
"$Q" "${V[@]}" --ort-lib "$ORT130" --session-config "$NEW=16" --outdir w > w.out 2>&1 || fail "validate on 1.30: $(tail -3 w.out)"
warn=$(grep -n "WARNING: session config key '$NEW'" w.out | cut -d: -f1)
first=$(grep -n '^\[1/2\]\|^\[2/2\]' w.out | head -1 | cut -d: -f1)
[ "$(grep -c "WARNING: session config key '$NEW'" w.out)" = 1 ] && [ -n "$first" ] && [ "$warn" -lt "$first" ] &&
  ok "validate: the warning once, before the first configuration's progress line" || bad "validate warning at line ${warn:-none}, progress at ${first:-none}: $(cat w.out)"
"$Q" "${B[@]}" --threads 1 --ort-lib "$ORT130" --session-config "$NEW=16" --outdir bw > bw.out 2>&1 || fail "bench on 1.30: $(tail -3 bw.out)"
warn=$(grep -n "WARNING: session config key '$NEW'" bw.out | cut -d: -f1)
first=$(grep -n '^\[1/1\]' bw.out | head -1 | cut -d: -f1)
[ "$(grep -c "WARNING: session config key '$NEW'" bw.out)" = 1 ] && [ -n "$first" ] && [ "$warn" -lt "$first" ] &&
  ok "bench: the warning once, before the first row's progress line" || bad "bench warning at line ${warn:-none}, progress at ${first:-none}: $(cat bw.out)"
$PY - bw/summary.json "$NEW" <<'PYEOF' && ok "bench summary.json's warnings still record it" || bad "bench summary.json's warnings"
import json, sys
w = json.load(open(sys.argv[1]))["system"]["evidence"]["warnings"]
assert [x for x in w if sys.argv[2] in x], w
PYEOF
report
