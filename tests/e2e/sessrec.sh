#!/usr/bin/env bash
# The session as ORT ran it, recorded and said in the tool's terms: bench records the graph
# optimization level as validate does (graph_opt_level, graph_opt_level_from, graph_opt_option);
# bench --baseline names what set a level that differs; validate's placement-entry refusal names
# the options, not the library's fields.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
B=(bench --variants cpu:attention24:fp32 --seq-lens 16 --modes masked --num-heads 2 --head-dim 8 --iters 3
   --warmup 1 --threads 1 --quiet)

# ---- bench: the level ORT ran, and what set it
"$Q" "${B[@]}" --graph-opt-level 0 --outdir b0 > b0.out 2>&1 || fail "bench --graph-opt-level 0: $(tail -3 b0.out)"
"$Q" "${B[@]}" --session-config session.graph_optimization_level=disable_all --outdir b1 > b1.out 2>&1 ||
  fail "bench with the entry: $(tail -3 b1.out)"
"$Q" "${B[@]}" --outdir bd > bd.out 2>&1 || fail "bench: $(tail -3 bd.out)"
$PY - b0/summary.json b1/summary.json bd/summary.json <<'PYEOF' && ok "bench summary.json: the level ran and its source" ||
import json, sys
def level(p):
    c = json.load(open(p))["config"]
    return tuple(c.get(k) for k in ("graph_opt_level", "graph_opt_level_from", "graph_opt_option"))
assert level(sys.argv[1]) == (0, "option", None), level(sys.argv[1])
assert level(sys.argv[2]) == (0, "session_config", -1), level(sys.argv[2])
assert level(sys.argv[3]) == (-1, None, None), level(sys.argv[3])
PYEOF
  bad "bench graph_opt_level: $(grep -ho '"graph_opt[^,]*' b0/summary.json b1/summary.json bd/summary.json)"
# the entry's level 0 is the option's level 0: the same measurement
"$Q" "${B[@]}" --session-config session.graph_optimization_level=disable_all --baseline b0/summary.json \
  --max-slowdown p50=100000% --outdir bs > bs.out 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "1 compared" bs.out && ok "bench: the entry's level 0 against --graph-opt-level 0, compared" ||
  bad "bench entry against option: exit $rc: $(tail -2 bs.out)"

# ---- bench --baseline: another level, named by what set it
one_line 2 "another measurement: the graph optimization level 99 \(from --session-config session\.graph_optimization_level, over --graph-opt-level 0\) here, 0 \(from --graph-opt-level\) in the baseline \(the timings" \
  "$Q" "${B[@]}" --graph-opt-level 0 --session-config session.graph_optimization_level=enable_all \
  --baseline b0/summary.json --outdir b2
one_line 2 "another measurement: the graph optimization level 1 \(from --graph-opt-level\) here, 0 \(from --session-config session\.graph_optimization_level\) in the baseline \(the timings" \
  "$Q" "${B[@]}" --graph-opt-level 1 --baseline b1/summary.json --outdir b3

# ---- validate: the placement entry refused in the tool's terms
V=(validate --export sdpa --configs ref:sdpa:fp64,cpu:decomposed:fp32 --num-events 2 --batch-size 2 --max-len 16
   --repeat 1 --warmup 0 --no-plots --threads 1)
one_line 2 "^ortqual validate: --session-config session\.record_ep_graph_assignment_info=0: the placement check \(--require-full-gpu, --profile\) records where ORT placed each node with it set to '1'; give '1' or leave it out$" \
  "$Q" "${V[@]}" --profile --session-config session.record_ep_graph_assignment_info=0 --outdir p1
[ ! -e p1 ] && ok "validate: nothing written for the refusal" || bad "validate: p1 written"
report
