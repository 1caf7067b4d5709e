#!/usr/bin/env bash
# ortqual merge judges the dispatch proof on every shard's routing lines, as one unsharded run
# judges its whole log: a node one shard never observed (not run in its batches) counts as
# observed when another shard observed it; a wrong kernel observed in any shard still fails, and
# a node no shard observed is never green. Routing lines exist on CUDA only, so the shards are
# real CPU shards of one plan whose summaries get the dispatch blocks a CUDA worker writes.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
cd "$T"

S=(validate --num-events 4 --batch-size 2 --max-len 8 --configs ref:encoder:fp64,cpu:attention24:fp32 --repeat 1
   --warmup 0 --no-plots --no-cache --outdir run)
"$ORTQUAL" "${S[@]}" --prepare-shards 2 >/dev/null 2>&1 || fail "prepare: exit $?"
for i in 0 1; do "$ORTQUAL" "${S[@]}" --shard $i/2 >/dev/null 2>&1 || fail "shard $i: exit $?"; done
for i in 0 1; do cp run/shards/$i/summary.json shard$i.json; done

# routes SHARD0 SHARD1: the shards' summaries with configuration 1's dispatch block as its
# worker writes it for the routes given ("attn0=FLASH_ATTENTION,attn1=MATH"; "-": no routing
# line at all), each node required on FLASH_ATTENTION (--expect-kernel attn0=flash,attn1=flash;
# REQUIRED=0: not required, a failed check is a skip)
routes() {
    for i in 0 1; do
        $PY - shard$i.json run/shards/$i/summary.json "$3" "$([ $i = 0 ] && echo "$1" || echo "$2")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); c = j["configs"][1]; required = sys.argv[3] == "1"
seen = dict(r.split("=") for r in sys.argv[4].split(",") if r != "-")
records = [{"node": n, "op": "Attention", "dtype": "fp16", "kernel": k, "line": 3 + 2 * i, "count": 2}
           for i, (n, k) in enumerate(seen.items())]
failures, failed = [], []
for r in records:
    if r["kernel"] != "FLASH_ATTENTION":
        failures.append(f"{r['node']}: expected FLASH_ATTENTION, got {r['kernel']} (line {r['line']})")
        failed.append({"kind": "kernel", "node": r["node"], "op": "Attention", "dtype": "fp16",
                       "kernel": r["kernel"], "expected": "FLASH_ATTENTION", "line": r["line"]})
for n in ("attn0", "attn1"):
    if n not in seen:
        failures.append(f"{n}: not observed (no SdpaKernel= line names this node)")
        failed.append({"kind": "unobserved", "node": n, "op": "", "dtype": "", "kernel": "",
                       "expected": "FLASH_ATTENTION", "line": 0})
if not records:
    failures.append("no SdpaKernel= line: dispatch not observed (set ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO=1 "
                    "before the session is created and capture native fd 1)")
    failed.append({"kind": "no_routing", "node": "", "op": "", "dtype": "", "kernel": "", "expected": "", "line": 0})
c["dispatch"] = {"records": records, "options": [], "failures": failures, "failed": failed,
                 "passed": not failures, "math_failures": sum(f["kernel"] == "MATH" for f in failed), "advice": []}
if failures:
    c["status"] = "failed" if required else "skipped"
    c["reason"] = "dispatch: " + failures[0] + (" (and more)" if len(failures) > 1 else "")
    j["verdict"], j["exit_status"] = ("failed", 1) if required else ("untested", 1)
    j["verdict_reason"] = f"{c['name']} failed: {c['reason']}" if required else "nothing under test passed"
json.dump(j, open(sys.argv[2], "w"))
PY
    done
}

# merged WANT_EXIT STATUS DISPATCH_PASSED 'FAILURE;...' WHAT: merge, then configuration 1 of the
# merged summary: its status, its dispatch verdict and its failures (texts, " (line N)" aside)
merged() {
    local rc=0
    "$ORTQUAL" merge run --no-plots >merge.out 2>&1 || rc=$?
    [ "$rc" = "$1" ] || { bad "$5: merge exit $rc, expected $1: $(cat merge.out)"; return; }
    $PY - run/summary.json "$2" "$3" "$4" <<'PY' && ok "$5" || bad "$5"
import json, re, sys
j = json.load(open(sys.argv[1])); c = j["configs"][1]; d = c["dispatch"]
got = [re.sub(r" \(line \d+\)$", "", f) for f in d["failures"]]
want = [f for f in sys.argv[4].split(";") if f]
assert c["status"] == sys.argv[2], (c["status"], c.get("reason"))
assert d["passed"] == (sys.argv[3] == "true"), d
assert got == want and len(d["failed"]) == len(got), (got, want)
assert (j["verdict"] == "passed") == (c["status"] == "passed"), j["verdict"]
if c["status"] == "passed": assert "reason" not in c or not c["reason"], c["reason"]
counts = {r["node"] + "=" + r["kernel"]: r["count"] for r in d["records"]}
assert all(v in (2, 4) for v in counts.values()), counts
PY
}

UNOBS="attn1: not observed (no SdpaKernel= line names this node)"
NOLINE="no SdpaKernel= line: dispatch not observed (set ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO=1 before the session is created and capture native fd 1)"

# shard 0 never ran attn1, shard 1 saw it on FLASH: proved, as one run over both shards' batches
routes attn0=FLASH_ATTENTION attn0=FLASH_ATTENTION,attn1=FLASH_ATTENTION 1
merged 0 passed true "" "attn1 unobserved on shard 0, on FLASH on shard 1: passed"
# the same without --require-dispatch: a skip on shard 0, not an incomplete matrix
routes attn0=FLASH_ATTENTION attn0=FLASH_ATTENTION,attn1=FLASH_ATTENTION 0
merged 0 passed true "" "not required: skipped on shard 0, passed on shard 1: passed"
# order does not matter: the shard that saw it may come first
routes attn0=FLASH_ATTENTION,attn1=FLASH_ATTENTION attn0=FLASH_ATTENTION 1
merged 0 passed true "" "attn1 on FLASH on shard 0, unobserved on shard 1: passed"
# seen on the wrong kernel elsewhere: that kernel's failure stands, the "not observed" does not
routes attn0=FLASH_ATTENTION attn0=FLASH_ATTENTION,attn1=MATH 1
merged 1 failed false "attn1: expected FLASH_ATTENTION, got MATH" "attn1 unobserved on shard 0, on MATH on shard 1: failed"
j=$($PY -c 'import json; print(json.load(open("run/summary.json"))["configs"][1]["dispatch"]["math_failures"])')
[ "$j" = 1 ] && ok "math_failures 1" || bad "math_failures $j, expected 1"
# no shard saw it: never green, listed once
routes attn0=FLASH_ATTENTION attn0=FLASH_ATTENTION 1
merged 1 failed false "$UNOBS" "attn1 unobserved on both shards: failed"
# a shard with no routing line at all proved nothing of its own batches (its capture or its ORT
# build printed none): it still fails, though the other shard saw every node
routes - attn0=FLASH_ATTENTION,attn1=FLASH_ATTENTION 1
merged 1 failed false "$NOLINE" "no routing line on shard 0: failed"

# --prove-teeth (plan.json's run.prove_teeth, set here: --prove-teeth needs a GPU configuration):
# each shard missed the node the other saw, so each failed its own check and none reran with MATH
# forced. The dispatch check passes merged, but nothing proved it can fail: not green.
$PY - run/shards/plan.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["run"] = {"prove_teeth": True}; json.dump(j, open(sys.argv[1], "w"))
PY
routes attn0=FLASH_ATTENTION attn1=FLASH_ATTENTION 1
merged 1 failed true "" "--prove-teeth, no shard's check passed: failed"
grep -q "no shard reran with MATH forced" run/summary.json && ok "the reason names the missing proof" ||
    bad "no --prove-teeth reason: $(grep -o '"reason": "[^"]*"' run/summary.json | head -3)"
# ... and with shard 1's rerun on record (its own check passed: it saw both nodes), the proof stands
routes attn0=FLASH_ATTENTION attn0=FLASH_ATTENTION,attn1=FLASH_ATTENTION 1
$PY - run/shards/1/summary.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["configs"][1]["teeth"] = {"rerun_status": "failed", "proved": True,
                            "verdict": "the check failed with MATH forced, as it must"}
json.dump(j, open(sys.argv[1], "w"))
PY
merged 0 passed true "" "--prove-teeth, proved on shard 1: passed"

report
