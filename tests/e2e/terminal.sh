#!/usr/bin/env bash
# Terminal manners of validate: per-batch progress on stderr (one updating line on a terminal,
# plain lines otherwise), colour for PASS/FAIL only on a terminal and never with NO_COLOR, and a
# table of per-batch latency (median, p90) rather than sums. The terminal is a real pty (script).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
command -v script >/dev/null || fail "script (bsdutils) not installed"
args=(--num-events 4 --batch-size 2 --repeat 1 --configs ref:encoder:fp64,cpu:decomposed:fp32)
ESC=$'\033'

# 1. not a terminal: plain progress lines, no escape codes anywhere
$ORTQUAL validate --outdir "$T/plain" "${args[@]}" --progress always >"$T/plain.out" 2>"$T/plain.err" ||
  fail "plain run: $(cat "$T/plain.err")"
grep -Eq '^\[2/2\] cpu:decomposed:fp32  batch 2/2  elapsed [0-9]+ s  ETA 0 s$' "$T/plain.err" ||
  fail "no per-batch progress line: $(cat "$T/plain.err")"
# the inputs' preparation reports too (a million events take a minute before any model runs)
grep -Eq '^preparing inputs  batch 2/2  elapsed [0-9]+ s' "$T/plain.err" ||
  fail "no progress line of the preparation: $(cat "$T/plain.err")"
grep -q $'\r' "$T/plain.err" && fail "carriage returns on a pipe"
grep -q "$ESC" "$T/plain.out" "$T/plain.err" && fail "escape codes on a pipe"
head -1 "$T/plain.out" | grep -q "median ms     p90 ms   first ms" || fail "table header: $(head -1 "$T/plain.out")"
grep -q "^verdict: PASSED" "$T/plain.out" || fail "verdict: $(tail -1 "$T/plain.out")"

# the table's latency is the median over batches of each batch's median call, in ms
/usr/bin/python3 - "$T/plain/summary.json" "$T/plain.out" <<'PY' || fail "table latency is not the per-batch median"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
c = d["configs"][1]
med = statistics.median(b["median_s"] * 1e3 for b in c["batches"])
row = next(l for l in open(sys.argv[2]) if l.startswith(c["name"] + " "))
shown = float(row.split()[5])
# the table rounds to 3 decimals below 10 ms, 1 decimal below 1000 ms (a loaded or ASan run
# reaches 10 ms): within half a unit of the last digit shown
half = 0.0005 if med < 10 else 0.05 if med < 1000 else 0.5
assert abs(shown - med) <= half * 1.001, (shown, med, row)
PY

# 2. never: no progress at all
$ORTQUAL validate --outdir "$T/never" "${args[@]}" --progress never >/dev/null 2>"$T/never.err" || fail "never run"
grep -q "batch [12]/2" "$T/never.err" && fail "--progress never printed progress"
# a word it does not know: a usage error naming the value, before anything runs
rc=0; $ORTQUAL validate --outdir "$T/bad" "${args[@]}" --progress sometimes >/dev/null 2>"$T/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "--progress sometimes exited $rc"
grep -q "'sometimes' is not auto, always or never" "$T/bad.err" || fail "bad --progress: $(cat "$T/bad.err")"
[ ! -e "$T/bad" ] || fail "--progress sometimes wrote $T/bad"

# 3. a terminal: one updating line, PASS in colour, none with NO_COLOR
run_tty() { # run_tty OUT ENV... : validate on a pty, everything it shows into OUT
  local out=$1
  shift
  env "$@" script -qec "$ORTQUAL validate --outdir $T/tty --force ${args[*]} --progress always" /dev/null >"$out" 2>&1 ||
    fail "tty run: $(cat "$out")"
}
run_tty "$T/tty.out" TERM=xterm
grep -q $'\r'"$ESC\[K\[2/2\] cpu:decomposed:fp32  batch 1/2" "$T/tty.out" || fail "no updating line on a terminal"
grep -q "$ESC\[32mpassed   $ESC\[0m" "$T/tty.out" || fail "no colour for passed on a terminal"
# the reference is not judged: shown as `reference`, never as a (green) pass, nor counted as one
grep -Eq "^ref:encoder:fp64 +reference +2 " "$T/tty.out" || fail "reference row: $(grep '^ref:' "$T/tty.out")"
grep "^ref:encoder:fp64 " "$T/tty.out" | grep -q "$ESC" && fail "reference row coloured: $(grep '^ref:' "$T/tty.out" | cat -v)"
grep -q "^verdict: $ESC\[32mPASSED$ESC\[0m (1 passed, 0 failed, 0 skipped; reference ref:encoder:fp64)" "$T/tty.out" ||
  fail "verdict counts the reference: $(grep '^verdict' "$T/tty.out" | cat -v)"
grep -q "^verdict: $ESC\[32mPASSED$ESC\[0m" "$T/tty.out" || fail "verdict not coloured"
run_tty "$T/nocolor.out" TERM=xterm NO_COLOR=1
grep -q "$ESC\[32m" "$T/nocolor.out" && fail "colour despite NO_COLOR"
grep -q "^verdict: PASSED" "$T/nocolor.out" || fail "NO_COLOR verdict: $(tail -2 "$T/nocolor.out")"
# nothing under test (only PyTorch's saved outputs): NOT TESTED in red on a terminal, never green
torch="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
TERM=xterm script -qec "$ORTQUAL validate --outdir $T/untested --model $torch/tx_encoder_op18.onnx --inputs $torch/io.npz --configs expected --progress never" \
  /dev/null >"$T/untested.out" 2>&1 && fail "untested run exited 0: $(cat "$T/untested.out")"
grep -q "^verdict: $ESC\[1;31mNOT TESTED$ESC\[0m" "$T/untested.out" || fail "NOT TESTED not red: $(tail -3 "$T/untested.out")"
grep -q "^verdict: $ESC\[32m" "$T/untested.out" && fail "an untested verdict in green"
# ... and nothing on it green: the saved outputs are the reference, not a pass (as report.html)
grep -q "$ESC\[32m" "$T/untested.out" && fail "green on an untested run: $(grep "$ESC\[32m" "$T/untested.out" | cat -v)"
grep -Eq "^expected +reference +1 " "$T/untested.out" || fail "expected row: $(grep '^expected' "$T/untested.out" | cat -v)"
grep -q "NOT TESTED$ESC\[0m (0 passed, 0 failed, 0 skipped; reference expected)" "$T/untested.out" ||
  fail "untested counts: $(grep '^verdict' "$T/untested.out" | cat -v)"
echo "terminal e2e ok"
