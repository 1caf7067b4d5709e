#!/usr/bin/env bash
# campaign.sh BUILD_FUZZ [NAME...]: the long runs recorded in docs/reliability.md. Each
# harness in turn (all by default), at nice 19, until 10 million executions or 30 minutes,
# from its seeds and regressions; the corpus it grows stays in BUILD_FUZZ/fuzz/campaign/NAME.
# Appends "name executions seconds corpus_files finding" to BUILD_FUZZ/fuzz/campaign/results.tsv
# (finding: "none", or the artifact libFuzzer wrote: crash-*, leak-*, timeout-*, oom-*).
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(inspect npz npy tensorproto profile placement_model gate_summary dispatch mask convert)
RUNS=${RUNS:-10000000} SECONDS_MAX=${SECONDS_MAX:-1800}
out=$build/fuzz/campaign
mkdir -p "$out"
for n in "${names[@]}"; do
    w=$out/$n
    mkdir -p "$w/corpus"
    rm -f "$w"/crash-* "$w"/leak-* "$w"/timeout-* "$w"/oom-*
    regress=$(ls -d "fuzz/regressions/$n" 2>/dev/null || true)
    start=$(date +%s)
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 nice -n 19 "$build/fuzz/fuzz_$n" \
        -runs="$RUNS" -max_total_time="$SECONDS_MAX" -rss_limit_mb=2048 -timeout=60 \
        -print_final_stats=1 -artifact_prefix="$w/" "$w/corpus" "fuzz/corpus/$n" $regress \
        >"$w/log" 2>&1
    secs=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log")
    found=$(cd "$w" && ls crash-* leak-* timeout-* oom-* 2>/dev/null | head -1)
    printf '%s\t%s\t%s\t%s\t%s\n' "$n" "${execs:-?}" "$secs" \
        "$(ls "$w/corpus" | wc -l)" "${found:-none}" >>"$out/results.tsv"
done
