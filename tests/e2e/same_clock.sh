#!/usr/bin/env bash
# The same-clock table (scripts/same_clock.py, run on the GPU host by scripts/same-clock.sh),
# tested here on what runs here: real `ortqual bench --model` runs of an fp16 sdpa export on
# ORT CPU (one per backend label), joined with the committed format sample of
# bench/pytorch_sdpa.py's JSON (made-up numbers, refused without --allow-format-sample).
# Checks: every (backend, L) of either side is a row, ratios are ORT / PyTorch from the two
# files' own numbers, missing sides and errors are notes, mismatched problems are refused.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q="$ORTQUAL"
J="$OQ_SOURCE_DIR/scripts/same_clock.py"
SAMPLE="$OQ_SOURCE_DIR/tests/fixtures/bench/pytorch_sdpa_format_sample.json"

if bash -n "$OQ_SOURCE_DIR/scripts/same-clock.sh"; then ok "same-clock.sh parses"; else bad "same-clock.sh syntax"; fi
"$Q" export sdpa --format attention24 --attention-dtype float16 --io-dtype float16 --mask none --heads 2 --head-dim 8 \
    -o "$T/sdpa16.onnx" >/dev/null || bad "export sdpa --io-dtype float16"
# flash's runs take their kernel time from CUPTI (its stand-in: 2 kernels, 5 us a run)
for b in flash efficient math; do
    cupti=()
    [ $b = flash ] && cupti=(--cupti-lib "$OQ_BINARY_DIR/tests/libfake_cupti.so")
    FAKE_CUPTI_KERNELS=2000,3000 "$Q" bench --model "$T/sdpa16.onnx" --dim batch=1 --sweep seq=32,64 --iters 3 \
        --warmup 1 --threads 1 --profile-runs 2 "${cupti[@]}" --quiet --outdir "$T/ort-$b" >/dev/null ||
        bad "ortqual bench --model ($b)"
done
ORTS=(--ort "flash=$T/ort-flash/summary.json" --ort "efficient=$T/ort-efficient/summary.json" --ort "math=$T/ort-math/summary.json")

expect 2 "a format sample with made-up numbers" "$PY" "$J" "${ORTS[@]}" --torch "$SAMPLE" --out "$T/refused"
if [ ! -e "$T/refused" ]; then ok "refused sample wrote nothing"; else bad "refused sample wrote $T/refused"; fi
expect 0 "wrote $T/t/same-clock.csv .* \(7 rows\)" "$PY" "$J" "${ORTS[@]}" --torch "$SAMPLE" --allow-format-sample --out "$T/t"
if "$PY" - "$T" "$SAMPLE" <<'EOF'; then ok "table joined from both files' numbers"; else bad "table contents"; fi
import csv, json, sys
T, sample = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(T + "/t/same-clock.csv")))
torch = {(r["backend"], r["seq_len"]): r for r in json.load(open(sample))["results"]}
ort = {b: {r["seq_len"]: r for r in json.load(open(f"{T}/ort-{b}/summary.json"))["results"]}
       for b in ("flash", "efficient", "math")}
got = {(r["backend"], int(r["seq_len"])) for r in rows}
want = {(b, L) for b in ("flash", "efficient", "math") for L in (32, 64)} | {("flash", 128)}
assert got == want, got ^ want
for r in rows:
    b, L = r["backend"], int(r["seq_len"])
    o, t = ort[b].get(L), torch.get((b, L))
    if o:
        assert abs(float(r["ort_wall_p50_ms"]) - o["stats_ms"]["p50"]) < 1e-12
        assert abs(float(r["ort_node_ms"]) - o["profile"]["node_ms"]) < 1e-12
        if b == "flash":  # CUPTI's kernels
            assert float(r["ort_kernel_ms"]) == o["profile"]["kernel_ms"] == 0.005 and r["ort_kernel_source"] == "cupti", r
            assert sorted(r["ort_gpu_kernels"].split("; ")) == ["fake::flash_kernel()", "plain_kernel"], r
            assert "no GPU kernels" not in r["note"], r
        else:
            assert r["ort_kernel_ms"] == "" and "ORT on CPU: no GPU kernels" in r["note"], r  # node events only
        assert (r["batch"], r["heads"], r["head_dim"]) == ("1", "2", "8")
    else:
        assert r["ort_wall_p50_ms"] == "" and "no ORT row" in r["note"], r
    if t and t["status"] == "ok":
        assert float(r["torch_wall_p50_ms"]) == t["wall_ms"]["p50"]
        assert float(r["torch_kernel_ms"]) == t["kernel_ms"]["per_call"]
        assert float(r["torch_event_ms"]) == t["event_ms"]["p50"]
        assert r["torch_gpu_kernels"] == "; ".join(t["kernel_ms"].get("kernels") or []), r
    if o and t and t["status"] == "ok":
        assert abs(float(r["wall_ratio"]) - o["stats_ms"]["p50"] / t["wall_ms"]["p50"]) < 1e-12
        if b == "flash":
            assert abs(float(r["kernel_ratio"]) - 0.005 / t["kernel_ms"]["per_call"]) < 1e-12, r
        else:
            assert r["kernel_ratio"] == ""  # no ORT kernel time to divide
    if t and t["status"] != "ok":
        assert r["torch_wall_p50_ms"] == "" and r["wall_ratio"] == "" and "PyTorch error: CUDA out of memory" in r["note"]
md = open(T + "/t/same-clock.md").read()
assert md.startswith("**FORMAT SAMPLE") and "| flash | 128 |" in md and md.count("\n| ") == 8
EOF

# A PyTorch run of another problem (heads 2 vs 4 here) is refused, not joined.
"$Q" export sdpa --format attention24 --attention-dtype float16 --io-dtype float16 --mask none --heads 4 --head-dim 8 \
    -o "$T/sdpa16h4.onnx" >/dev/null
"$Q" bench --model "$T/sdpa16h4.onnx" --dim batch=1 --dim seq=32 --iters 2 --threads 1 --quiet --outdir "$T/h4" >/dev/null
expect 2 "flash L=32: ORT runs B=1 H=4 D=8 .*PyTorch B=1 H=2 D=8: not the same problem" "$PY" "$J" \
    --ort "flash=$T/h4/summary.json" --torch "$SAMPLE" --allow-format-sample --out "$T/x"
# An ORT run of a float32 model, or not a bench --model summary, is refused.
"$Q" export sdpa --format attention24 --mask none --heads 2 --head-dim 8 -o "$T/sdpa32.onnx" >/dev/null
"$Q" bench --model "$T/sdpa32.onnx" --dim batch=1 --dim seq=32 --iters 2 --threads 1 --quiet --outdir "$T/f32" >/dev/null
expect 2 "query is float32 .*the table wants float16" "$PY" "$J" --ort "flash=$T/f32/summary.json" --torch "$SAMPLE" \
    --allow-format-sample --out "$T/y"
expect 2 "not a summary.json of .ortqual bench --model" "$PY" "$J" --ort "flash=$SAMPLE" --torch "$SAMPLE" \
    --allow-format-sample --out "$T/z"

report
