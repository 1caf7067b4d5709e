#!/usr/bin/env bash
# --session-config as the ORT loaded takes it: a key unknown to the headers ortqual is built with
# (ORT 1.29) is passed to a newer ORT with one warning (summary.json's warnings record it) and
# refused on 1.29 with the closest key; a session.graph_optimization_level entry is recorded as
# the level ORT ran, over --graph-opt-level, and said so; bench --baseline compares sessions as
# ORT runs them for a timing (a log id is the same measurement, spinning another).
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
need_ort130
V=(validate --export sdpa --configs ref:sdpa:fp64,cpu:decomposed:fp32 --num-events 2 --batch-size 2 --max-len 16
   --repeat 1 --warmup 0 --no-plots --threads 1)
NEW=mlas.nchwc_pointwise_conv_max_input_channel_batch # a key of ORT 1.30, not of 1.29's headers

# ---- a key newer than the headers: passed to ORT 1.30 with one warning, refused on 1.29
"$Q" "${V[@]}" --ort-lib "$ORT130" --session-config "$NEW=16" --outdir k130 > k130.out 2> k130.err
rc=$?
[ $rc -eq 0 ] && [ -e k130/summary.json ] && ok "$NEW on ORT 1.30: runs" || bad "$NEW on 1.30: exit $rc: $(tail -3 k130.err)"
[ "$(grep -c "WARNING: session config key '$NEW' is not a key of ONNX Runtime 1.29's session options .*passed unchecked to ONNX Runtime 1.30.0" k130.err)" = 1 ] &&
  ok "$NEW on 1.30: warned once, both versions named" || bad "warning: $(cat k130.err)"
$PY - k130/summary.json "$NEW" <<'PYEOF' && ok "summary.json's warnings record it" || bad "summary.json's warnings"
import json, sys
w = json.load(open(sys.argv[1]))["evidence"]["system"]["warnings"]
assert [x for x in w if sys.argv[2] in x and "1.30.0" in x], w
PYEOF
"$Q" "${V[@]}" --ort-lib "$OQ_ORT_LIB" --session-config "$NEW=16" --outdir k129 > k129.out 2>&1
rc=$?
[ $rc -eq 2 ] && [ ! -e k129/summary.json ] && grep -q "key '$NEW': not a key of .*did you mean" k129.out &&
  ok "$NEW on ORT 1.29: refused, exit 2, the closest key named" || bad "$NEW on 1.29: exit $rc: $(tail -3 k129.out)"
# a key the headers know keeps its domain on a newer ORT too
"$Q" "${V[@]}" --ort-lib "$ORT130" --session-config session.intra_op.allow_spinning=maybe --outdir kv > kv.out 2>&1
[ $? -eq 2 ] && grep -q '"0" or "1"' kv.out && ok "a known key's value is still checked on 1.30" || bad "value on 1.30: $(tail -2 kv.out)"

# ---- the level ORT ran: an entry over --graph-opt-level is recorded as ORT took it
"$Q" "${V[@]}" --ort-lib "$OQ_ORT_LIB" --graph-opt-level 0 --session-config session.graph_optimization_level=enable_all \
  --outdir g > g.out 2>&1 || bad "graph level entry: $(tail -3 g.out)"
$PY - g/summary.json <<'PYEOF' && ok "summary.json: graph_opt_level 99 from the entry, the option's 0 kept" || bad "graph_opt_level: $(grep -o '"graph_opt[^,]*' g/summary.json)"
import json, sys
c = json.load(open(sys.argv[1]))["configs"][1]
assert (c["graph_opt_level"], c["graph_opt_level_from"], c["graph_opt_option"]) == (99, "session_config", 0), c
PYEOF
grep -q "graph optimizations all (level 99), from --session-config session.graph_optimization_level, over --graph-opt-level 0$" g.out &&
  ok "text: the level ran and where it came from" || bad "text: $(grep 'ONNX Runtime' g.out)"
grep -q "at level 99 (set by the session config entry session.graph_optimization_level, over the level option&#39;s 0)\|at level 99 (set by the session config entry session.graph_optimization_level, over the level option's 0)" g/report.html &&
  ok "report.html: the level ran and where it came from" || bad "report.html: $(grep -o 'graph optimizations[^<]*' g/report.html)"
"$Q" "${V[@]}" --ort-lib "$OQ_ORT_LIB" --graph-opt-level 1 --outdir g1 > g1.out 2>&1 || bad "--graph-opt-level 1: $(tail -3 g1.out)"
$PY - g1/summary.json <<'PYEOF' && ok "summary.json: --graph-opt-level alone, from the option" || bad "g1: $(grep -o '"graph_opt[^,]*' g1/summary.json)"
import json, sys
c = json.load(open(sys.argv[1]))["configs"][1]
assert (c["graph_opt_level"], c["graph_opt_level_from"]) == (1, "option") and "graph_opt_option" not in c, c
PYEOF

# ---- bench --baseline: the same session for a timing is the same measurement
B=(bench --variants cpu:attention24:fp32 --seq-lens 16 --modes masked --num-heads 2 --head-dim 8 --iters 3
   --warmup 1 --threads 1 --quiet)
"$Q" "${B[@]}" --outdir base > base.out 2>&1 || fail "bench: $(tail -3 base.out)"
for opts in "--session-config session.log_id=x" "--session-config session.graph_optimization_level=enable_all" \
            "--graph-opt-level 99"; do
  # shellcheck disable=SC2086 # the options and their values, split on purpose
  "$Q" "${B[@]}" $opts --baseline base/summary.json --max-slowdown p50=100000% --outdir "b$RANDOM" > b.out 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q "1 compared" b.out && ok "bench $opts: the baseline's measurement, compared" ||
    bad "bench $opts: exit $rc: $(tail -2 b.out)"
done
one_line 2 "another measurement: --session-config \{\"session.intra_op.allow_spinning\":\"0\"\} here, \{\} in the baseline" \
  "$Q" "${B[@]}" --session-config session.intra_op.allow_spinning=0 --baseline base/summary.json --outdir bx
# bench on ORT 1.30 with the newer key: one warning, printed once
"$Q" "${B[@]}" --ort-lib "$ORT130" --session-config "$NEW=16" --outdir bn > bn.out 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c "WARNING: session config key '$NEW' is not a key of ONNX Runtime 1.29's" bn.out)" = 1 ] &&
  ok "bench: $NEW on 1.30 runs, warned once" || bad "bench $NEW on 1.30: exit $rc: $(cat bn.out)"
# and on 1.29: refused before the first row, nothing written
"$Q" "${B[@]}" --session-config "$NEW=16" --outdir bo > bo.out 2>&1
rc=$?
[ $rc -eq 2 ] && [ ! -e bo ] && grep -q "key '$NEW': not a key of .*did you mean" bo.out &&
  ok "bench: $NEW on 1.29 refused, exit 2, nothing written" || bad "bench $NEW on 1.29: exit $rc: $(cat bo.out)"
report
