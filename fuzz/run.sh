#!/usr/bin/env bash
# run.sh HARNESS SECONDS WORKDIR INPUT_DIR...: fuzz one libFuzzer harness for SECONDS,
# starting from the input directories (never written: new inputs go to WORKDIR/corpus,
# a crash to WORKDIR/crash-*). Exit 0 when nothing was found; the finding's path otherwise.
set -euo pipefail
bin=$1 secs=$2 work=$3
shift 3
mkdir -p "$work/corpus"
rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
# -rss_limit_mb: a parser may not need more than 2 GiB for any input (the files' limits
# are far below); -timeout: no input may take a minute (10 s flagged inputs that ran in
# 1 s alone, on a machine loaded 5 times over); -max_len: inputs up to 64 KiB.
if "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=60 -max_len=65536 \
     -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$@" >"$work/log" 2>&1; then
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+.*DONE' "$work/log" || true
  exit 0
fi
tail -40 "$work/log"
ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null || true
exit 1
