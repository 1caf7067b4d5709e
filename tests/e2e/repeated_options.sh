#!/usr/bin/env bash
# An option given twice (docs/usage.md): a single-valued one takes its last value, a comma list
# adds the items of each (`--variants a --variants b` kept b alone, silently); --ref-iters without
# a ref variant is refused as every other option that would be ignored. Each case runs the tool.
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
PY=/usr/bin/python3
cd "$T" || exit 1
TINY=(--num-heads 2 --head-dim 8 --iters 1 --warmup 0 --threads 1 --modes unmasked --quiet)
# rows CSV: "variant seq_len" of each row, sorted, on one line
rows() { "$PY" -c 'import csv,sys; print(" ".join(sorted(r["variant"]+"@"+r["seq_len"] for r in csv.DictReader(open(sys.argv[1])))))' "$1"; }

# 1. comma lists add up: two --variants, two --seq-lens give every variant at every length
expect 0 "wrote" "$Q" bench "${TINY[@]}" --variants cpu:attention24:fp32 --seq-lens 8 --variants cpu:decomposed:fp32 \
    --seq-lens 16 --outdir v2
got=$(rows v2/summary.csv)
want="cpu:attention24:fp32@16 cpu:attention24:fp32@8 cpu:decomposed:fp32@16 cpu:decomposed:fp32@8"
[ "$got" = "$want" ] && ok "--variants and --seq-lens twice: every item" || bad "rows: $got (want $want)"
# an item in both lists is listed twice: refused, as within one list, naming its places
expect 2 "^ortqual bench: --variants: 'cpu:decomposed:fp32' is listed twice \(items 1 and 2\)$" \
    "$Q" bench "${TINY[@]}" --variants cpu:decomposed:fp32 --variants cpu:decomposed:fp32 --seq-lens 8 --outdir v3
[ ! -e v3 ] && ok "refused: v3 not made" || bad "refused, yet v3 made"
# plot --format twice: both formats
expect 0 "runtime.png" "$Q" plot v2 --format svg --format png --out f2
[ -s f2/runtime.svg ] && [ -s f2/runtime.png ] && ok "--format svg --format png: both" || bad "f2: $(ls f2)"
# validate --configs twice: the reference from the first, the configuration from the second
expect 0 "PASSED" "$Q" validate --num-events 2 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --no-cache \
    --configs ref:encoder:fp64 --configs cpu:decomposed:fp32 --progress never --outdir c2
n=$("$PY" -c 'import json,sys; print(",".join(c["name"] for c in json.load(open(sys.argv[1]))["configs"]))' c2/summary.json)
[ "$n" = "ref:encoder:fp64,cpu:decomposed:fp32" ] && ok "--configs twice: $n" || bad "--configs twice: $n"

# 2. a single-valued option: the last value (git's convention), as the help says
expect 0 "wrote" "$Q" bench "${TINY[@]}" --variants cpu:decomposed:fp32 --seq-lens 8 --iters 3 --iters 2 --outdir i2
it=$("$PY" -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))["iters"])' i2/summary.csv)
[ "$it" = 2 ] && ok "--iters 3 --iters 2: 2" || bad "--iters 3 --iters 2: $it"
expect 0 "^An option given twice takes its last value \(--seed 3 --seed 7: 7\)\.$" "$Q" bench --help
expect 0 "^A comma list given twice keeps both \(--variants a --variants b: a,b\)\.$" "$Q" bench --help
expect 0 "^A repeatable option keeps every value given \(--inputs\)\.$" "$Q" validate --help
# the rule's examples are the command's own options (convert's help named --iters and --variants)
for cmd in bench validate plot estimate merge convert inspect report doctor replay gate export slurm; do
    h=$("$Q" $cmd --help 2>&1)
    rule=$(grep -E '^(An option given twice|A comma list|A repeatable option)' <<<"$h")
    [ -z "$rule" ] && continue # (a command of flags only: inspect, export's list)
    missing=""
    for o in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$rule" | sort -u); do
        grep -qE -- "^ +(-[a-zA-Z], )?$o\b" <<<"$h" || missing="$missing $o"
    done
    [ -z "$missing" ] && ok "$cmd --help: the repeat rule names its own options" || bad "$cmd --help names$missing, not its options: $rule"
done

# 3. --ref-iters times the ref variant: without one it would be ignored (and was recorded)
expect 2 "^ortqual bench: --ref-iters: no ref variant in --variants, so it would be ignored$" \
    "$Q" bench "${TINY[@]}" --variants cpu:decomposed:fp32 --seq-lens 8 --ref-iters 3 --outdir r1
expect 2 "^ortqual bench: --ref-iters: no ref variant in --variants \(the default lists none\), so it would be ignored$" \
    "$Q" bench "${TINY[@]}" --seq-lens 8 --ref-iters 3 --outdir r1
[ ! -e r1 ] && ok "refused: r1 not made" || bad "refused, yet r1 made"
expect 0 "wrote" "$Q" bench "${TINY[@]}" --variants ref,cpu:decomposed:fp32 --seq-lens 8 --ref-iters 2 --outdir r2

# 4. --tolerance names one output (or the default): given twice with another value it is refused,
#    saying both (the later, looser value was kept silently: a PASSED from an appended line);
#    the same value again is taken once
V=(validate --num-events 2 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --no-cache --progress never
    --configs ref:encoder:fp64,cpu:decomposed:fp32)
expect 2 "^ortqual validate: --tolerance: output 'cls' given twice \('cls:rtol=0,atol=1e-9' and 'cls:rtol=1e-3'\)$" \
    "$Q" "${V[@]}" --tolerance cls:rtol=0,atol=1e-9 --tolerance cls:rtol=1e-3 --outdir t1
expect 2 "^ortqual validate: --tolerance: the default given twice \('fp32' and 'fp16'\)$" \
    "$Q" "${V[@]}" --tolerance 'fp32; reg:fp16' --tolerance fp16 --outdir t1
[ ! -e t1 ] && ok "refused: t1 not made" || bad "refused, yet t1 made"
expect 2 "^ortqual bench: --tolerance: output 'cls' given twice \('cls:rtol=1e-6' and 'cls:rtol=1e-2'\)$" \
    "$Q" bench --model "$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder/tx_encoder_op18.onnx" --iters 1 --warmup 0 \
    --threads 1 --tolerance cls:rtol=1e-6 --tolerance cls:rtol=1e-2 --outdir t2
[ ! -e t2 ] && ok "refused: t2 not made" || bad "refused, yet t2 made"
expect 0 "PASSED" "$Q" "${V[@]}" --tolerance cls:rtol=1e-3 --tolerance 'cls: rtol = 0.001' --tolerance reg:fp32 \
    --outdir t3

report
