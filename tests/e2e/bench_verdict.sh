#!/usr/bin/env bash
# bench's verdict (docs/verdicts.md) is one: its exit status, summary.json's `verdict`,
# `exit_status`, `verdict_reason` and `allow_skip`, and report.html's banner agree, for the
# attention sweep and --model, with and without something to compare with, a sweep whose rows
# were all skipped (with and without --allow-skip), and a model ONNX Runtime refuses (a runtime
# error: exit 3, as validate's).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
B=(--seq-lens 16 --modes masked --num-heads 2 --head-dim 8 --iters 1 --warmup 0 --quiet)
M=(--model "$F/hand_attention/hand_attention_op18.onnx" --inputs "$F/hand_attention/io.npz" --iters 1 --warmup 0 --quiet)

# agree DIR CODE VERDICT ALLOW_SKIP REASON BANNER_REASON: the last run exited CODE; its summary
# says VERDICT, CODE, ALLOW_SKIP and a reason matching REASON; its page's banner says VERDICT
# and (BANNER_REASON not empty) a reason matching it.
agree() {
    local dir=$1 code=$2 verdict=$3 allow=$4 reason=$5 banner=$6
    $PY - "$dir" "$code" "$verdict" "$allow" "$reason" "$banner" <<'PYEOF' && ok "$dir: $verdict, exit $code, banner" || bad "$dir: not $verdict/$code"
import json, re, sys
d, code, verdict, allow, reason, banner = sys.argv[1:]
s = json.load(open(d + "/summary.json"))
assert s["schema"] == "ortqual.bench/2", s["schema"]
got = (s["verdict"], s["exit_status"], s["allow_skip"])
assert got == (verdict, int(code), allow == "true"), got
assert re.search(reason, s["verdict_reason"]), s["verdict_reason"]
page = open(d + "/report.html").read()
assert 'data-verdict="%s"' % verdict in page, re.findall(r'data-verdict="\w+"', page)
said = re.findall(r'<p id="verdict-reason">([^<]*)', page)
if banner:
    assert said and re.search(banner, said[0]), said
else:
    assert not said, said
PYEOF
}

# run DIR CODE CMD...: CMD exits CODE (its output kept in DIR.log)
run() {
    local dir=$1 code=$2 rc=0
    shift 2
    "$@" --outdir "$dir" >"$dir.log" 2>&1 || rc=$?
    [ "$rc" = "$code" ] && ok "$* -> $code" || bad "$* -> exit $rc, expected $code: $(tail -3 "$dir.log")"
}

# attention sweep, compared with the float64 reference, and with --no-reference (ran: timings)
run "$T/a1" 0 "$Q" bench --variants cpu:attention24:fp32 "${B[@]}"
agree "$T/a1" 0 passed false "^1 ONNX Runtime row ran and was compared$" ""
run "$T/a2" 0 "$Q" bench --variants cpu:attention24:fp32 --no-reference "${B[@]}"
agree "$T/a2" 0 passed false "no reference, so no output was compared" ""
# every row skipped (no CUDA here): NOT TESTED, exit 1; with --allow-skip exit 0, and the banner says so
run "$T/s1" 1 "$Q" bench --variants cuda:attention24:fp16 "${B[@]}"
agree "$T/s1" 1 untested false "^no variant under test ran and was compared" "--allow-skip accepts that"
run "$T/s2" 0 "$Q" bench --variants cuda:attention24:fp16 --allow-skip "${B[@]}"
agree "$T/s2" 0 untested true "^no variant under test ran and was compared" "\(accepted by --allow-skip\)"
grep -q "untested: no variant under test ran and was compared .*; accepted by --allow-skip" "$T/s2.log" &&
    ok "s2: said on stderr" || bad "s2: stderr $(cat "$T/s2.log")"

# --model without --expected: the points ran and were timed, nothing compared (verdicts.md: bench's
# "compared" is "ran" there), so PASSED, exit 0 — the page said NOT TESTED, "no ONNX Runtime
# variant ran and was compared"
run "$T/m1" 0 "$Q" bench "${M[@]}"
agree "$T/m1" 0 passed false "no expected outputs, so no output was compared" ""
run "$T/m2" 0 "$Q" bench "${M[@]}" --expected "$F/hand_attention/io.npz"
agree "$T/m2" 0 passed false "^1 ONNX Runtime row ran and was compared$" ""
# --model on a provider not here: --allow-skip accepts it, and the banner says so
run "$T/m3" 0 "$Q" bench "${M[@]}" --ep cuda --allow-skip
agree "$T/m3" 0 untested true "^no variant under test ran \(" "\(accepted by --allow-skip\)"

# ONNX Runtime refuses the model: a runtime error, exit 3, as validate gives for the same model
# (it was a `failed` row and exit 1)
run "$T/r1" 3 "$Q" bench --model "$F/tx_encoder/tx_encoder_op23.onnx" --dim batch=2 --dim seq=8 --iters 1 --warmup 0 --quiet
agree "$T/r1" 3 error false "^1 row could not run \(the first, cpu:model:fp32: refused by ONNX Runtime \[attn-mask-query-broadcast\]" "refused by ONNX Runtime"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["results"][0]["status"] == "error"' "$T/r1/summary.json" &&
    ok "r1: the row is error" || bad "r1: row status"
grep -q '^[^,]*' "$T/r1/summary.csv" && grep -q ',error,' "$T/r1/summary.csv" && ok "r1: csv says error" || bad "r1: csv"

# A summary written before the verdict (ortqual.bench/1): the page derives it from the rows, and a
# --model summary (no config.reference) without expected outputs is PASSED, not NOT TESTED
$PY - "$T/m1/summary.json" "$T/old/summary.json" <<'PYEOF'
import json, os, sys
s = json.load(open(sys.argv[1]))
s["schema"] = "ortqual.bench/1"
for k in ("verdict", "exit_status", "verdict_reason", "tested", "allow_skip"):
    s.pop(k, None)
os.makedirs(os.path.dirname(sys.argv[2]))
json.dump(s, open(sys.argv[2], "w"))
PYEOF
expect 0 "report" "$Q" report "$T/old"
grep -q 'data-verdict="passed"' "$T/old/report.html" && ok "old --model summary: PASSED" ||
    bad "old --model summary: $(grep -o 'data-verdict="[a-z]*"' "$T/old/report.html")"
report
