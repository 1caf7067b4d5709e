#!/usr/bin/env bash
# ortqual bench end to end: a tiny CPU sweep (CSV header and rows, JSON with raw
# samples, accuracy against the reference), an impossible variant that becomes
# a row while the rest still runs, and usage errors.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"

COMMON=(--seq-lens 32,64 --num-heads 2 --head-dim 8 --iters 3 --warmup 1 --threads 1)

# 0. No --variants: ORT CPU's two forms (no CUDA here: an empty device tree), said and run
mkdir -p "$T/nodev"
expect 0 "--variants cpu:decomposed:fp32,cpu:attention24:fp32 \(the default here\)" env ORTQUAL_TEST_DEVICE_ROOT="$T/nodev" \
    "$Q" bench "${COMMON[@]}" --modes masked --outdir "$T/d"
got=$("$PY" -c 'import json,sys; print(sorted({r["variant"] for r in json.load(open(sys.argv[1]))["results"] if r["status"] == "ok"}))' "$T/d/summary.json")
[ "$got" = "['cpu:attention24:fp32', 'cpu:decomposed:fp32']" ] && ok "default variants ran" || bad "default variants: $got"

# 0b. The default variants are asked of the runtime the sweep then uses: ORT is loaded once. A GPU's
# device node makes bench look for CUDA (none_ep beside the core library: loads, offers no device);
# the probe loaded ORT, and the CUDA EP, a second time (~0.11 s a start on the H200).
mkdir -p "$T/ortshim" "$T/gpu/dev"
touch "$T/gpu/dev/nvidia0"
cp "$OQ_BINARY_DIR/tests/libort_count.so" "$T/ortshim/libonnxruntime.so"
cp "$OQ_BINARY_DIR/tests/libnone_ep.so" "$T/ortshim/libonnxruntime_providers_cuda.so"
expect 0 "--variants cpu:decomposed:fp32,cpu:attention24:fp32 \(the default here\)" env ORT_COUNT_LOG="$T/loads" \
    ORT_COUNT_REAL="$OQ_ORT_LIB" ORTQUAL_ORT_LIB="$T/ortshim/libonnxruntime.so" ORTQUAL_TEST_DEVICE_ROOT="$T/gpu" \
    "$Q" bench "${COMMON[@]:2}" --seq-lens 32 --modes masked --outdir "$T/d1"   # (COMMON but its --seq-lens)
loads=$(wc -l <"$T/loads")
[ "$loads" -eq 1 ] && ok "default variants: ORT loaded once" || bad "default variants: ORT loaded $loads times"

# 1. Two variants (the reference and ORT CPU), 2 lengths, both modes: 8 rows.
expect 0 "wrote $T/a/summary.json" "$Q" bench --variants ref,cpu:attention24:fp32 "${COMMON[@]}" --outdir "$T/a"
HEADER='variant,status,device,dtype,representation,kernel,kernel_requested,shapes,io_binding,masked,batch,seq_len,valid_elements,heads,kv_heads,head_dim,threads,inter_op_threads,warmup,iters,session_ms,first_run_ms,mean_ms,std_ms,min_ms,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms,peak_rss_mb,vmhwm_mb,peak_gpu_mb,max_abs_err,nan_count,profile_node_ms,profile_kernel_ms,dims,seq_dim,error,baseline,baseline_ratios'
if [ "$(head -n1 "$T/a/summary.csv")" = "$HEADER" ]; then ok "summary.csv header"; else bad "summary.csv header: $(head -n1 "$T/a/summary.csv")"; fi
rows=$(($(wc -l <"$T/a/summary.csv") - 1))
if [ "$rows" -eq 8 ]; then ok "8 rows (2 variants x 2 lengths x 2 modes)"; else bad "rows: $rows"; fi
if "$PY" - "$T/a" <<'EOF'; then ok "summary.json and summary.csv agree, accuracy small, samples == iters"; else bad "summary contents"; fi
import csv, json, sys
d = sys.argv[1]
j = json.load(open(d + "/summary.json"))
rows = list(csv.DictReader(open(d + "/summary.csv")))
res = j["results"]
assert len(res) == len(rows) == 8, (len(res), len(rows))
assert j["config"]["iters"] == 3 and j["system"]["ort_version"] and "host" in j["system"]["evidence"]
for r, c in zip(res, rows):
    assert r["status"] == "ok" == c["status"], (r["variant"], r["status"], r["error"])
    assert len(r["samples_ms"]) == 3, r["samples_ms"]
    assert all(s > 0 for s in r["samples_ms"])
    assert float(c["p50_ms"]) > 0 and float(c["peak_rss_mb"]) > 0
    assert c["variant"] == r["variant"] and int(c["seq_len"]) == r["seq_len"]
    if r["variant"].startswith("cpu:"):
        assert c["kernel"] == "" and c["dtype"] == "fp32" and c["shapes"] == "dynamic"
        assert c["io_binding"] == "host" and float(c["session_ms"]) > 0
        assert float(c["max_abs_err"]) < 1e-4, c["max_abs_err"]
        assert int(c["nan_count"]) == 0
        assert r["accuracy"]["pad_nonzero"] == 0
        # judged against the fp32 preset (a wrong row is 'failed': unit/test_bench)
        a = r["accuracy"]
        assert a["over_tol"] == 0 and a["rtol"] == 1e-4 and a["atol"] > 0 and r["status"] == "ok", a
        assert r["io_binding"] == "host" and r["session_ms"] > 0
    else:
        assert c["kernel"] == "" and c["max_abs_err"] == "" and c["shapes"] == ""
        assert c["iters"] == "3" and c["warmup"] == "0" and c["dtype"] == "fp64"
masked = [c for c in rows if c["masked"] == "1"]
unmasked = [c for c in rows if c["masked"] == "0"]
# fraction 0.25: events of 24 and 48 tokens of 32 and 64; unmasked: all of them
assert sorted({int(c["valid_elements"]) for c in masked}) == [24, 48]
assert sorted({int(c["valid_elements"]) for c in unmasked}) == [32, 64]
EOF

# 2. An impossible variant (CUDA on a CPU-only ORT) is a row with its status
#    and message; the rest of the sweep still runs and the exit status is 0.
expect 0 "cuda:attention24:fp16 .* skipped" "$Q" bench --variants cuda:attention24:fp16,cpu:decomposed:fp32 \
    --seq-lens 32 --modes masked --num-heads 2 --head-dim 8 --iters 2 --warmup 0 --export-shapes both --outdir "$T/b"
if "$PY" - "$T/b" <<'EOF'; then ok "skipped row with a message, others ok"; else bad "impossible variant rows"; fi
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/summary.csv")))
assert len(rows) == 4, len(rows)
for c in rows:
    if c["variant"].startswith("cuda"):
        assert c["status"] == "skipped" and c["error"], c
        assert c["p50_ms"] == ""
    else:
        assert c["status"] == "ok" and float(c["p50_ms"]) > 0, c
EOF

# 2b. The float64 reference is computed for a shape only when a variant of it ran and needs it:
#     a sweep whose variants are all skipped (CUDA absent: none_ep offers no device) computes none
#     (it took 50 s at L=16384 on a CPU host for 8 skipped rows); beside a variant that ran, one
#     per shape, and that row has its accuracy.
expect 1 "no variant under test ran" "$Q" bench --variants cuda:attention24:fp16:flash,cuda:attention24:fp16:math \
    --ep-lib "cuda=$OQ_BINARY_DIR/tests/libnone_ep.so" --seq-lens 32,64 --num-heads 2 --head-dim 8 --iters 2 \
    --outdir "$T/sk"
if "$PY" - "$T/sk/summary.json" "$T/b/summary.json" <<'EOF'; then ok "reference computed only where a variant ran"; else bad "reference work of skipped variants"; fi
import json, sys
sk, b = (json.load(open(p)) for p in sys.argv[1:])
assert {r["status"] for r in sk["results"]} == {"skipped"} and len(sk["results"]) == 8, sk["results"]
assert sk["config"]["reference"] and sk["reference_computed"] == {"shapes": 0, "ms": 0.0}, sk["reference_computed"]
assert b["reference_computed"]["shapes"] == 1 and b["reference_computed"]["ms"] > 0, b["reference_computed"]
assert all(r["accuracy"]["max_abs_err"] < 1e-4 for r in b["results"] if r["status"] == "ok"), b["results"]
EOF

# 3. Device binding on CPU memory runs the IoBinding path with the same numbers.
expect 0 "wrote" "$Q" bench --variants cpu:decomposed:fp32 --seq-lens 32 --modes unmasked --num-heads 2 \
    --head-dim 8 --iters 2 --io-binding device --outdir "$T/c"
expect 0 '"io_binding": "device"' cat "$T/c/summary.json"
if "$PY" -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); assert len(r)==1 and r[0]["status"]=="ok" and float(r[0]["max_abs_err"])<1e-4' "$T/c/summary.csv"; then
    ok "device binding output matches the reference"; else bad "device binding accuracy"; fi

# 4. Usage errors: exit 2 with a one-line message naming the problem.
expect 2 "unknown or incomplete option '--bogus'" "$Q" bench --variants ref --bogus
expect 2 "attention only" "$Q" bench --variants cpu:model:fp32
expect 2 "--seq-lens '0'" "$Q" bench --variants ref --seq-lens 0
expect 2 "--modes 'sometimes'" "$Q" bench --variants ref --modes sometimes
expect 2 "--mask-fraction '1.5'" "$Q" bench --variants ref --mask-fraction 1.5
expect 2 "--io-binding 'gpu'" "$Q" bench --variants ref --io-binding gpu
expect 2 "kv heads" "$Q" bench --variants ref --num-heads 4 --kv-heads 3 --outdir "$T/d"
expect 2 "each variant names its runtime" "$Q" bench --variants ref --ep cuda
expect 0 "usage: ortqual bench" "$Q" bench --help

report
