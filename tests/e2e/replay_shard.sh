#!/usr/bin/env bash
# replay --prepare-shards / --shard I/N / merge (docs/scale-out.md, replay --help): saved batches
# replayed on ORT 1.30 against ORT 1.29's CPU, split in shards. The merge equals the unsharded
# replay; a shard index out of range, a count the plan was not prepared for, other options, a
# shard of another plan, and a shard that loads another pairing of builds than the plan compares
# (the libraries swapped: main ran it and merged it green) are each refused, one line, exit 2.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
need_ort130
same() { $PY "$OQ_SOURCE_DIR/tests/e2e/lib/same_summary.py" "$1" "$2"; }

# the batches and model: a validate run's (3 batches, so 2 shards split them 1 + 2)
"$Q" validate --no-cache --num-events 6 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots \
    --progress never --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir U > u.log 2>&1 || fail "validate: $(tail -3 u.log)"
R=(replay --model U/encoder_attention24_fp32.onnx --inputs 'U/inputs_*.npz' --repeat 1 --warmup 0 --progress never
   --ort-lib "$ORT130" --reference-ort-lib "$OQ_ORT_LIB")
SWAPPED=(replay --model U/encoder_attention24_fp32.onnx --inputs 'U/inputs_*.npz' --repeat 1 --warmup 0
         --progress never --ort-lib "$OQ_ORT_LIB" --reference-ort-lib "$ORT130")

# ---- the campaign: prepare, two shards, merge = the unsharded replay
"$Q" "${R[@]}" --outdir R > r.log 2>&1 || fail "unsharded replay: $(tail -3 r.log)"
expect 0 "prepared 2 shards by batch" "$Q" "${R[@]}" --outdir S --prepare-shards 2
$PY - S/shards/plan.json "$ORT130" "$OQ_ORT_LIB" <<'PY' && ok "plan.json names the two builds compared" || bad "plan.json's onnxruntime"
import hashlib, json, os, sys
p = json.load(open(sys.argv[1]))
h = lambda f: hashlib.sha256(open(os.path.realpath(f), "rb").read()).hexdigest()
assert p["onnxruntime"] == {"under_test": h(sys.argv[2]), "reference": h(sys.argv[3])}, p.get("onnxruntime")
PY
cp -r S W # an untouched copy of the prepared plan, for the refusals below
expect 0 "shard 0 of 2 done" "$Q" "${R[@]}" --outdir S --shard 0/2
expect 0 "shard 1 of 2 done" "$Q" "${R[@]}" --outdir S --shard 1/2
expect 0 "^verdict: PASSED \(1 passed" "$Q" merge --no-plots S
same R/summary.json S/summary.json && ok "the merge equals the unsharded replay" || bad "merged replay differs"
$PY - S/summary.json <<'PY' && ok "the merged summary: ORT 1.30 judged against 1.29" || bad "merged versions"
import json, sys
c = json.load(open(sys.argv[1]))["configs"]
assert [(x["name"], x["onnxruntime"]["version"]) for x in c] == [("cpu:model:fp32@reference", "1.29.0"), ("cpu:model:fp32", "1.30.0")], c
PY

# ---- bad input: one line each, exit 2, nothing of the shard written
for spec in 2/2 -1/2 1/0 x/2 0/2/1; do
    one_line 2 "^ortqual replay: --shard '$spec': want I/N with 0 <= I < N" "$Q" "${R[@]}" --outdir W --shard "$spec"
done
one_line 2 "^ortqual replay: W/shards/plan.json was prepared for 2 shards by batch, not 3 by batch$" \
    "$Q" "${R[@]}" --outdir W --shard 0/3
one_line 2 "^ortqual replay: W/shards/plan.json was prepared for 2 shards by batch, not 2 by config$" \
    "$Q" "${R[@]}" --outdir W --shard 0/2 --shard-by config
one_line 2 "^ortqual replay: this shard's options make another plan than W/shards/plan.json \(they differ in: repeat\)" \
    "$Q" "${R[@]}" --repeat 2 --outdir W --shard 0/2
one_line 2 "^ortqual replay: --shard and --prepare-shards need --outdir" "$Q" "${R[@]}" --shard 0/2
one_line 2 "^ortqual replay: .*none/shards/plan.json not found" "$Q" "${R[@]}" --outdir none --shard 0/2
# the libraries swapped (1.29 under test, judged against 1.30): another comparison than prepared,
# refused for the first shard too (no other shard to be held to yet)
one_line 2 "^ortqual replay: shard 0 would load .* as the reference's ONNX Runtime library .*another pairing of builds than the plan compares; run every shard with the --ort-lib and --reference-ort-lib the shards were prepared with$" \
    "$Q" "${SWAPPED[@]}" --outdir W --shard 0/2
# (a refused shard leaves only its error.json, the refusal's record)
[ -z "$(ls W/shards/0 W/shards/1 2>/dev/null | grep -v '^error.json$' | grep -v '^W/shards/[01]:$' | grep .)" ] &&
    ok "refused shards wrote no result" || bad "a refused shard wrote: $(ls W/shards/*)"
# the same bytes at another path (another node's copy) are the same build: accepted
mkdir node1 && cp "$(readlink -f "$OQ_ORT_LIB")" node1/libonnxruntime.so
expect 0 "shard 1 of 2 done" "$Q" "${R[@]}" --reference-ort-lib node1/libonnxruntime.so --outdir W --shard 1/2

# ---- a shard of another plan: validate's shard in replay's folder is refused (its command makes
# events where the plan's batches are the user's files: said before the plans are compared); a
# replay shard's result copied into a validate campaign is refused by the merge
one_line 2 "^ortqual validate: --inputs names no file, but batch 0 of W/shards/plan.json was prepared from the user's file U/inputs_000.npz" \
    "$Q" validate --no-cache --num-events 6 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots \
    --progress never --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir W --shard 0/2
V=(validate --no-cache --num-events 6 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32)
expect 0 "prepared 2 shards" "$Q" "${V[@]}" --outdir VS --prepare-shards 2
expect 0 "shard 1 of 2 done" "$Q" "${V[@]}" --outdir VS --shard 1/2
cp -r S/shards/0 VS/shards/0
expect 2 "shard 0 .* ran plan .*refusing to merge shards of different plans" "$Q" merge --no-plots VS
report
