#!/usr/bin/env bash
# QA 8b D5: `ortqual plot` of a 200,000-batch summary drew every batch (74 MB SVG, 3 GB, 2 min)
# while `report` drew a sample. plot reads a validate summary as report does (one record at a time,
# each configuration's latency points an evenly spaced sample of at most 600 batches): here a
# 20,000-batch summary made from a real 1-event run, and a small run drawn as validate drew it.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
"$Q" validate --num-events 1 --batch-size 1 --max-len 1 --length-policy fixed --pad-bin-size 1 --repeat 1 \
    --warmup 0 --progress never --no-cache --no-plots --configs ref:encoder:fp64,cpu:attention24:fp32 \
    --outdir tiny >tiny.log 2>&1 || fail "tiny run: $(tail -3 tiny.log)"
"$PY" - <<'PY' || fail "making the large summary"
import json, os
s = json.load(open('tiny/summary.json')); N = 20000; os.makedirs('huge', exist_ok=True)
b0 = s['batches'][0]
s['batches'] = [dict(b0, index=i, event_indices=[i], valid_size=1 + i % 50) for i in range(N)]
for c in s['configs']:
    cb = c['batches'][0]
    c['batches'] = [dict(cb, index=i, first_call_s=cb['first_call_s'] * (1 + i % 13)) for i in range(N)]
json.dump(s, open('huge/summary.json', 'w'))
PY

# 1. the large summary: at most 600 points per configuration (2 here), a small SVG, said sampled
expect 0 "runtime_valid_size.svg" "$Q" plot huge --out plots --format svg
svg=plots/runtime_valid_size.svg
pts=$(grep -o 'class="pt"' "$svg" | wc -l)
size=$(stat -c %s "$svg")
[ "$pts" -ge 2 ] && [ "$pts" -le 1200 ] && ok "points drawn: $pts (of 40000 records)" || bad "points drawn: $pts"
[ "$size" -lt 600000 ] && ok "SVG size $size bytes" || bad "SVG size $size bytes (every batch drawn?)"
grep -q "an evenly spaced sample of 20000" "$svg" && ok "the figure says it is a sample" ||
    bad "no word of the sample in $svg"

# 2. a small run: plot draws what validate drew (every batch; the same SVG text)
"$Q" validate --num-events 12 --batch-size 2 --max-len 16 --repeat 2 --warmup 0 --progress never --no-cache \
    --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir small >small.log 2>&1 ||
    fail "small run: $(tail -3 small.log)"
expect 0 "runtime_valid_size.svg" "$Q" plot small --out again --format svg
same=1
for f in small/plots/*.svg; do cmp -s "$f" "again/$(basename "$f")" || { same=0; bad "$(basename "$f") differs"; }; done
[ "$same" = 1 ] && ok "a small run's figures as validate drew them ($(ls small/plots/*.svg | wc -l) SVGs)"
report
