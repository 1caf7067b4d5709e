#!/usr/bin/env bash
# bench-start.sh ORTQUAL WORKDIR [RUNTIME OPTIONS...]: what `ortqual bench` costs to start with its
# default variants (CUDA looked for) against the same variants named, wall seconds of a tiny sweep,
# 5 runs each, alternated; prints each run and the medians. On a GPU host the defaults are the four
# named here; elsewhere the two CPU ones (the named run then also asks for CUDA's two).
set -u
Q=${1:?usage: bench-start.sh ORTQUAL WORKDIR [RUNTIME OPTIONS...]}
W=${2:?usage: bench-start.sh ORTQUAL WORKDIR [RUNTIME OPTIONS...]}
shift 2
NAMED=cpu:decomposed:fp32,cpu:attention24:fp32,cuda:attention24:fp16:flash,cuda:attention24:fp32
mkdir -p "$W"
for i in 1 2 3 4 5; do
  for v in default named; do
    extra=()
    [ "$v" = named ] && extra=(--variants "$NAMED")
    t0=$(date +%s%N)
    "$Q" bench "$@" "${extra[@]}" --seq-lens 64 --modes unmasked --iters 2 --warmup 1 --no-reference \
      --force --quiet --outdir "$W/$v" > "$W/$v.log" 2>&1
    rc=$?
    echo "$v $(( ($(date +%s%N) - t0) / 1000000 )) ms exit $rc"
  done
done | tee "$W/runs.txt"
for v in default named; do
  echo "$v: median $(awk -v v="$v" '$1 == v && $5 == 0 {print $2}' "$W/runs.txt" | sort -n | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "none"}') ms of the runs that exited 0"
done
