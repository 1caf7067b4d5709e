#!/usr/bin/env bash
# What a bench row carries, as its help and the figures say it: the statistics and their units
# (bench --help said how runs are timed, not what is reported), every tail statistic drawable
# (plot --stat took p50/mean/p90/p99 only), figures of two inputs told apart, and the padding of a
# row labelled masked (balanced at batch size 1 padded nothing, --mask-fraction ignored).
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
PY=/usr/bin/python3
M="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder/tx_encoder_op18.onnx"
cd "$T" || exit 1
RUN=(--iters 3 --warmup 0 --threads 1 --quiet)

# 1. the help names the statistics, how percentiles are made and the units
help=$("$Q" bench --help)
for w in "mean, sample std" "(n-1" "p50, p90, p95, p99, p99.9 by linear" "numpy's default" "ms per batch" \
    "MiB (2^20 bytes)"; do
    grep -qF -- "$w" <<<"$help" && ok "bench --help says '$w'" || bad "bench --help lacks '$w'"
done

# 2. plot --stat: every statistic of the CSV, named in the titles
expect 0 "wrote" "$Q" bench --model "$M" --dim batch=2 --sweep seq=8,16 "${RUN[@]}" --outdir b1
for s in p95:p95 p99.9:p99.9 max:max mean:mean p50:median; do
    expect 0 "runtime.svg" "$Q" plot b1 --stat "${s%%:*}" --format svg --out "st-${s%%:*}"
    grep -q "Model runtime (${s#*:})" "st-${s%%:*}/runtime.svg" && ok "--stat ${s%%:*}: titled ${s#*:}" ||
        bad "--stat ${s%%:*}: title $(grep -o 'Model runtime ([^)]*)' "st-${s%%:*}/runtime.svg")"
done
# the column drawn is the statistic's: a copy whose p999_ms and max_ms are p50_ms draws, with
# --stat p99.9 or max, the line --stat p50 draws of the original
mkdir -p cp && "$PY" - b1/summary.csv cp/summary.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    r["p999_ms"] = r["max_ms"] = r["p50_ms"]
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0]))
w.writeheader()
w.writerows(rows)
PY
line() { grep -o '<polyline points="[^"]*"' "$1"; }
for s in p99.9 max; do
    expect 0 "runtime.svg" "$Q" plot cp/summary.csv --stat $s --format svg --out "cp-$s"
    [ -n "$(line st-p50/runtime.svg)" ] && [ "$(line "cp-$s/runtime.svg")" = "$(line st-p50/runtime.svg)" ] &&
        ok "--stat $s draws its column" || bad "--stat $s: not its column's line"
done
expect 2 "unknown statistic 'p42' \(p50, mean, p90, p95, p99, p99.9, max\)" "$Q" plot b1 --stat p42 --out st-bad

# 3. two inputs whose figures come out under one name (two --model sweeps over other dimensions):
#    the later gets _2, and each subtitle names its input (they were the same)
expect 0 "wrote" "$Q" bench --model "$M" --shape features=2,L,8 --sweep L=8,16 "${RUN[@]}" --outdir sL
expect 0 "runtime_2.svg" "$Q" plot b1 sL --format svg --out two
sub() { grep -o '<text[^>]*>batch 2, masked, 1 thread[^<]*<' "$1" | sed 's/^<text[^>]*>//'; } # the subtitle
a=$(sub two/runtime.svg) b=$(sub two/runtime_2.svg)
if [ "$a" != "$b" ] && grep -qE "; from (b1|sL)<" <<<"$a" && grep -qE "; from (b1|sL)<" <<<"$b"; then
    ok "runtime and runtime_2: subtitles $a / $b"
else
    bad "runtime and runtime_2 not told apart: '$a' / '$b'"
fi
# one input: no such note
a=$(sub st-p50/runtime.svg)
[ "$a" = "batch 2, masked, 1 thread<" ] && ok "one input: subtitle as before" || bad "one input's subtitle: '$a'"

# 4. --length-policy balanced at batch size 1: one event of the spread's mean length (F 0.4 at
#    L 64: lengths 13..64, mean 39), not L (no padding in a row that says masked)
expect 0 "wrote" "$Q" bench --model "$M" --dim batch=1 --sweep seq=64 --length-policy balanced --mask-fraction 0.4 \
    "${RUN[@]}" --outdir bal
v=$("$PY" -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(r["valid_elements"], r["masked"])' bal/summary.csv)
[ "$v" = "39 1" ] && ok "balanced, batch 1: 39 of 64 valid, masked" || bad "balanced, batch 1: valid, masked = $v"
expect 0 "wrote" "$Q" bench --variants cpu:attention24:fp32 --seq-lens 64 --batch-sizes 1 --modes masked \
    --length-policy balanced --mask-fraction 0.4 --num-heads 2 --head-dim 8 "${RUN[@]}" --outdir balv
v=$("$PY" -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(r["valid_elements"], r["masked"])' balv/summary.csv)
[ "$v" = "39 1" ] && ok "attention sweep, balanced, batch 1: 39 of 64 valid" || bad "attention sweep: valid, masked = $v"

report
