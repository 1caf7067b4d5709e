#!/usr/bin/env bash
# ortqual bench --model end to end, on real PyTorch exports (tests/fixtures/torch) and a model
# `ortqual export` wrote: a sweep over a named dimension with generated inputs (masks with
# lengths, integer ids), the percentiles in summary.json/summary.csv recomputed from the raw
# samples, saved inputs judged against PyTorch's outputs, ORT's profile per run, and every
# bad input a one-line usage error (exit 2) that leaves nothing written.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
Q="$ORTQUAL"
FAST=(--iters 5 --warmup 1 --threads 1 --quiet)

# 1. mlpf_like: batch fixed, seq swept; features uniform, the float mask a prefix per row.
expect 0 "batch=2 seq=32 +ok" "$Q" bench --model "$F/mlpf_like/mlpf_like_op18.onnx" --dim batch=2 \
    --sweep seq=16,32 "${FAST[@]}" --outdir "$T/a"
if "$PY" - "$T/a" <<'EOF'; then ok "sweep rows: dims, inputs, percentiles from the samples, CSV = JSON"; else bad "sweep rows"; fi
import csv, json, sys
d = sys.argv[1]
j = json.load(open(d + "/summary.json"))
rows = list(csv.DictReader(open(d + "/summary.csv")))
res = j["results"]
assert j["mode"] == "model" and j["config"]["sweeps"] == {"seq": [16, 32]} and j["config"]["dims"] == {"batch": 2}
assert len(res) == len(rows) == 2
def pct(s, p):  # numpy's linear percentile
    s = sorted(s); h = (len(s) - 1) * p / 100; lo = int(h)
    return s[lo] + (h - lo) * (s[min(lo + 1, len(s) - 1)] - s[lo])
for r, c, L in zip(res, rows, (16, 32)):
    assert r["status"] == "ok" == c["status"], r["error"]
    assert r["variant"] == "cpu:model:fp32" and r["representation"] == "model" and r["heads"] is None
    assert r["dims"] == {"batch": 2, "seq": L} and r["seq_dim"] == "seq" and r["batch"] == 2 and r["seq_len"] == L
    ins = {i["name"]: i for i in r["inputs"]}
    assert ins["features"]["shape"] == [2, L, 17] and ins["features"]["fill"] == "uniform", ins
    assert ins["mask"]["shape"] == [2, L] and ins["mask"]["fill"] == "mask" and ins["mask"]["source"] == "generated"
    assert r["masked"] and r["valid_tokens"] == 2 * round(0.75 * L), r["valid_tokens"]
    s, st = r["samples_ms"], r["stats_ms"]
    assert len(s) == 5 and r["iters"] == 5 and r["warmup"] == 1
    for key, p in (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99), ("p99.9", 99.9)):
        assert abs(st[key] - pct(s, p)) <= 1e-9 * max(1, st[key]), (key, st[key], pct(s, p))
    assert st["max"] == max(s) and st["min"] == min(s)
    for col, key in (("p50_ms", "p50"), ("p95_ms", "p95"), ("p99_ms", "p99"), ("p999_ms", "p99.9"), ("max_ms", "max")):
        assert abs(float(c[col]) - st[key]) <= 1e-9 * st[key], (col, c[col], st[key])
    assert c["dims"] == "batch=2;seq=%d" % L and c["seq_dim"] == "seq" and c["heads"] == "" and c["kernel"] == ""
    assert r["accuracy"] is None and c["max_abs_err"] == ""
    m = r["memory"]  # VmHWM reset before the timed runs: the exact peak, not below the RSS before
    assert m["peak_rss_exact"] is True and m["peak_rss_bytes"] >= m["rss_before_bytes"] > 0
    assert m["vmhwm_bytes"] >= m["peak_rss_bytes"] and m["vmhwm_row"] is True  # the row's own peak
EOF
if [ -s "$T/a/report.html" ] && grep -q ">batch=2 seq=32<" "$T/a/report.html"; then ok "report.html with the points"; else bad "report.html"; fi
expect 0 "runtime.svg" "$Q" plot "$T/a/summary.json" --out "$T/a/plots" --format svg
if grep -q "dimension &#39;seq&#39;" "$T"/a/plots/runtime.svg 2>/dev/null; then ok "plot: x is the swept dimension"; else bad "plot x label: $(ls "$T/a/plots")"; fi

# 2. decoder_lm: int64 ids in --int-range, the int64 attention_mask a prefix per row.
expect 0 "batch=2 seq=24 +ok" "$Q" bench --model "$F/decoder_lm/decoder_lm_op18.onnx" --dim batch=2 --dim seq=24 \
    --int-range 0,49 "${FAST[@]}" --outdir "$T/b"
if "$PY" - "$T/b/summary.json" <<'EOF'; then ok "ids and mask generated"; else bad "decoder_lm inputs"; fi
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
ins = {i["name"]: i for i in r["inputs"]}
assert ins["input_ids"]["fill"] == "integers" and ins["input_ids"]["dtype"] == "int64"
assert ins["attention_mask"]["fill"] == "mask" and r["valid_tokens"] == 36
EOF
# ids past the embedding table: refused before anything runs (ORT failed the row at its Gather,
# exit 3, with the folder written); the last row of the table is fine (above)
expect 2 "^ortqual bench: --int-range 0,50: input 'input_ids' indexes axis 0 of Gather '[^']+', of size 50 \(ids -50\.\.49\)$" \
    "$Q" bench --model "$F/decoder_lm/decoder_lm_op18.onnx" --dim batch=2 --dim seq=24 --int-range 0,50 "${FAST[@]}" \
    --outdir "$T/b50"
[ ! -e "$T/b50" ] && ok "--int-range past the table: nothing written" || bad "--int-range past the table wrote $T/b50"
# without --expected nothing is compared: the verdict line a gate reads says so (it read as any PASSED)
expect 0 "^verdict: PASSED \(1 passed, 0 failed, 0 skipped; timed only: no output compared\); details in" \
    "$Q" bench --model "$F/decoder_lm/decoder_lm_op18.onnx" --dim batch=2 --dim seq=24 --int-range 0,49 "${FAST[@]}" \
    --outdir "$T/b49"

# 3. Saved inputs as they are, judged against PyTorch's outputs; another batch's outputs are
#    refused before any timing (exit 2).
expect 0 "batch=3 seq=56 +ok" "$Q" bench --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/io.npz" \
    --expected "$F/tx_encoder/io.npz" "${FAST[@]}" --outdir "$T/c"
if "$PY" - "$T/c/summary.json" <<'EOF'; then ok "expected outputs compared"; else bad "expected outputs"; fi
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert [i["source"] for i in r["inputs"]] == ["npz", "npz"]
o = r["outputs"]
assert len(o) == 1 and o[0]["output"] == "out" and o[0]["passed"] and o[0]["max_abs_err"] < 1e-5, o
assert r["accuracy"]["max_abs_err"] == o[0]["max_abs_err"]
EOF
expect 2 "outputs_001.npz: member 'out' is \\[2,24,3\\], but the model's output 'out' is \\[3,56,3\\]" "$Q" bench --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/inputs_000.npz" \
    --expected "$F/tx_encoder/outputs_001.npz" "${FAST[@]}" --outdir "$T/c2"
# validate's batch members (event_indices, lengths) in one file of inputs and outputs are ignored
# as validate ignores them (they were refused as "not an output"); a misspelt output is refused
"$PY" -c 'import numpy as np, sys; z = dict(np.load(sys.argv[1])); z["lengths"] = np.array([56, 40, 3]); z["event_indices"] = np.arange(3); np.savez(sys.argv[2], **z); z["outt"] = z["out"]; np.savez(sys.argv[3], **z)' \
    "$F/tx_encoder/io.npz" "$T/meta.npz" "$T/typo.npz" || bad "cannot write meta.npz"
expect 0 "batch=3 seq=56 +ok" "$Q" bench --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$T/meta.npz" \
    --expected "$T/meta.npz" "${FAST[@]}" --outdir "$T/c3"
expect 2 "typo.npz: tensor 'outt' is not an output of" "$Q" bench --model "$F/tx_encoder/tx_encoder_op18.onnx" \
    --inputs "$T/typo.npz" --expected "$T/typo.npz" "${FAST[@]}" --outdir "$T/c4"

# 3a. --expected judged as validate judges it: on the valid elements of the mask (its lengths
#     50, 31, 7 here), padding never in the errors (junk there in the expected file made the row
#     fail with "max abs err 99", the padded elements counted as over tolerance); a real error on
#     a valid element still fails the row; padding judged by --padding (auto: zero where the
#     expected file is 0 on every padded element; zero; report)
"$PY" - "$F/tx_encoder/io.npz" "$T" <<'EOF' || bad "cannot write the padded --expected files"
import numpy as np, sys
z, t = dict(np.load(sys.argv[1])), sys.argv[2]
lens = z["mask"].sum(1)
junk = z["out"].copy()
for b, n in enumerate(lens): junk[b, n:] = 99.0
np.savez(t + "/padjunk.npz", **dict(z, out=junk))
bad = junk.copy(); bad[0, lens[0] - 1, 2] += 0.5
np.savez(t + "/padbad.npz", **dict(z, out=bad))
zero = z["out"].copy()
for b, n in enumerate(lens): zero[b, n:] = 0.0
zero[0, lens[0] - 1, 2] += 0.5
np.savez(t + "/padzero_bad.npz", **dict(z, out=zero))
hole = z["mask"].copy(); hole[1, 2] = False
np.savez(t + "/hole.npz", **dict(z, mask=hole))
EOF
PADIN=(--model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/io.npz" "${FAST[@]}")
expect 0 "batch=3 seq=56 +ok" "$Q" bench "${PADIN[@]}" --expected "$T/padjunk.npz" --outdir "$T/pj"
if "$PY" - "$T/pj/summary.json" <<'EOF'; then ok "junk on padding: not in the errors, reported"; else bad "padding in the errors"; fi
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
o = r["outputs"][0]
assert o["passed"] and o["max_abs_err"] < 1e-5 and o["over_tol"] == 0, o
p = o["padding"]
assert p["masked"] and p["padded"] == (3 * 56 - 88) * 3 and not p["checked"] and p["rule"] == "as-reference", p
assert r["accuracy"]["pad_nonzero"] == p["nonzero"], r["accuracy"]
EOF
expect 1 "failed .*output 'out': max abs err 0.5[0-9]* against $T/padbad.npz, 1 elements over tolerance" \
    "$Q" bench "${PADIN[@]}" --expected "$T/padbad.npz" --outdir "$T/pb"
expect 1 "failed .*output 'out': max abs err 0.5[0-9]* against $T/padzero_bad.npz, 1 elements over tolerance" \
    "$Q" bench "${PADIN[@]}" --expected "$T/padzero_bad.npz" --padding report --outdir "$T/pzr"
# zero: this model zeroes its padding, which passes; a language model's logits are not 0 there
# (auto leaves them unjudged, as PyTorch's are not 0 either), which zero fails
expect 0 "batch=3 seq=56 +ok" "$Q" bench "${PADIN[@]}" --expected "$T/padjunk.npz" --padding zero --outdir "$T/pz"
LM=(--model "$F/decoder_lm/decoder_lm_op18.onnx" --inputs "$F/decoder_lm/io.npz" --expected "$F/decoder_lm/io.npz" "${FAST[@]}")
expect 0 "batch=3 seq=56 +ok" "$Q" bench "${LM[@]}" --outdir "$T/lma"
expect 1 "failed .*output 'logits': 4000 of its 4000 padded elements are not 0 \(padded elements must be 0\); its valid elements are within tolerance" \
    "$Q" bench "${LM[@]}" --padding zero --outdir "$T/lmz"
# an output said to have no mask axes is compared whole: the junk counts again
expect 1 "failed .*output 'out': max abs err 99" "$Q" bench "${PADIN[@]}" --expected "$T/padjunk.npz" --seq-axis out=none \
    --outdir "$T/pn"
# a mask that breaks the contract cannot say which elements are valid: refused, as validate does
expect 2 "^ortqual bench: $T/hole.npz: mask 'mask': event 1: hole at position 3" "$Q" bench \
    --model "$F/tx_encoder/tx_encoder_op18.onnx" "${FAST[@]}" --inputs "$T/hole.npz" --expected "$T/hole.npz" --outdir "$T/phole"
expect 2 "^ortqual bench: --padding needs --expected" "$Q" bench "${PADIN[@]}" --padding auto --outdir "$T/pne"
expect 2 "^ortqual bench: --seq-axis" "$Q" bench "${PADIN[@]}" --expected "$T/padjunk.npz" --seq-axis nosuch=1 --outdir "$T/pns"
if [ -e "$T/pne" ] || [ -e "$T/pns" ] || [ -e "$T/phole" ]; then bad "a refused --padding or --seq-axis wrote its folder"; else ok "refusals wrote nothing"; fi

# 3b. --expected judged by the model's outputs: the tolerance is the output's dtype preset
#     (float32 here) whatever dtype the file was saved in, a file of another kind (integers for a
#     float output) or a layout the reader cannot take is an input error (exit 2, nothing
#     written), and a NaN on either side is counted and named, never "max abs err 0".
TX=(--model "$F/tx_encoder/tx_encoder_op18.onnx" "${FAST[@]}")
IO="$F/tx_encoder/io.npz"
"$PY" - "$IO" "$T" <<'EOF' || bad "cannot write the --expected variants"
import numpy as np, sys
z, t = dict(np.load(sys.argv[1])), sys.argv[2]
out = z["out"]
np.savez(t + "/f64.npz", out=out.astype(np.float64))
np.savez(t + "/i32.npz", out=out.astype(np.int32))
np.savez(t + "/c64.npz", out=out.astype(np.complex64))
np.savez(t + "/allnan.npz", out=np.full_like(out, np.nan))
np.savez(t + "/be.npz", **dict(z, features=z["features"].astype(">f4")))
np.savez(t + "/fortran.npz", **dict(z, features=np.asfortranarray(z["features"])))
f = z["features"].copy()
f[2, 40, 0] = np.nan  # event 2's padding (7 valid): allowed, yet the attention spreads it
np.savez(t + "/nanin.npz", **dict(z, features=f))
f[0, 0, 0] = np.nan   # a valid position: the file's error
np.savez(t + "/nanvalid.npz", **dict(z, features=f))
EOF
expect 0 "batch=3 seq=56 +ok" "$Q" bench "${TX[@]}" --inputs "$IO" --expected "$T/f64.npz" --outdir "$T/x64"
if "$PY" - "$T/x64/summary.json" <<'EOF'; then ok "float64 --expected of a float32 output: the fp32 preset"; else bad "float64 --expected"; fi
import json, sys
o = json.load(open(sys.argv[1]))["results"][0]["outputs"][0]
assert o["passed"] and o["rtol"] == 1e-4 and o["atol"] == 1e-5, o
EOF
xbad() { # xbad PATTERN ARGS...: exit 2, the message, nothing written
    local pat=$1
    shift
    expect 2 "$pat" "$Q" bench "${TX[@]}" "$@" --outdir "$T/xu"
    if [ -e "$T/xu" ]; then bad "$* wrote $T/xu"; rm -rf "$T/xu"; fi
}
xbad "^ortqual bench: $T/i32.npz: expected 'out' is int32; the model's output is float32$" --inputs "$IO" --expected "$T/i32.npz"
xbad "^ortqual bench: $T/be.npz: member 'features': big-endian dtype '>f4' is not supported" --inputs "$T/be.npz"
xbad "^ortqual bench: $T/fortran.npz: member 'features': Fortran-order arrays are not supported" --inputs "$T/fortran.npz"
xbad "^ortqual bench: $T/c64.npz: member 'out': unsupported dtype '<c8'" --inputs "$IO" --expected "$T/c64.npz"
xbad "^ortqual bench: --tolerance needs --expected" --inputs "$IO" --tolerance fp16
xbad "^ortqual bench: tolerance for output 'nosuch': the model has no such output \(its outputs: out\)$" --inputs "$IO" \
    --expected "$IO" --tolerance nosuch:rtol=0.9,atol=1
# (the valid elements only: 88 positions of 3; the padded ones are no part of the errors)
expect 1 "failed .*output 'out': non-finite values: 264 NaN in $T/allnan.npz; 264 elements over tolerance" \
    "$Q" bench "${TX[@]}" --inputs "$IO" --expected "$T/allnan.npz" --outdir "$T/xnan"
expect 1 "failed .*output 'out': non-finite values: 21 NaN in the output; 21 elements over tolerance" \
    "$Q" bench "${TX[@]}" --inputs "$T/nanin.npz" --expected "$IO" --outdir "$T/xnanin"
xbad "^ortqual bench: $T/nanvalid.npz: input 'features': event 0 position 0 \(element 0 of it\) is NaN: valid positions must be finite$" \
    --inputs "$T/nanvalid.npz" --expected "$IO"
if "$PY" - "$T/xnan" "$T/xnanin" <<'EOF'; then ok "NaN on either side: counted, max abs err null"; else bad "NaN reported as a number"; fi
import csv, json, sys
for d, out_nan, exp_nan in ((sys.argv[1], 0, 264), (sys.argv[2], None, 0)):
    r = json.load(open(d + "/summary.json"))["results"][0]
    c = list(csv.DictReader(open(d + "/summary.csv")))[0]
    o, a = r["outputs"][0], r["accuracy"]
    assert r["status"] == "failed" and not o["passed"], r
    assert o["max_abs_err"] is None and a["max_abs_err"] is None and c["max_abs_err"] == "", (o, a, c)
    assert o["expected_nan_count"] == exp_nan and (out_nan is None or o["nan_count"] == out_nan), o
    assert o["nan_count"] + o["expected_nan_count"] > 0, o
    assert a["nan_count"] == o["nan_count"] + o["expected_nan_count"] == int(c["nan_count"]), (a, c)
EOF

# 3c. Equal infinities of the same sign compare equal (counted in inf_matched), as conformance
#     judges them: an Attention's qk_matmul_output is -inf where an additive 0/-inf mask is (the
#     row failed: "3 Inf in the output and 3 Inf in" the expected file); +inf against -inf still
#     fails. The fixture: one Attention-23 node, mask float [2,4,3,5] of 0/0.5/-1/-inf, Y and qk
#     from a float64 implementation of the spec.
QK="$OQ_SOURCE_DIR/tests/fixtures/onnx/attention_qk_neginf"
expect 0 "^- +ok " "$Q" bench --model "$QK.onnx" --inputs "$QK.npz" --expected "$QK.npz" "${FAST[@]}" --outdir "$T/qk"
"$PY" - "$QK.npz" "$T/qkpos.npz" <<'EOF' || bad "cannot write the +inf variant"
import numpy as np, sys
z = dict(np.load(sys.argv[1]))
qk = z["qk"].reshape(-1)
qk[np.flatnonzero(np.isneginf(qk))[0]] = np.inf
np.savez(sys.argv[2], **z)
EOF
expect 1 "output 'qk': non-finite values: 1 Inf in the output and 1 Inf in" "$Q" bench --model "$QK.onnx" \
    --inputs "$QK.npz" --expected "$T/qkpos.npz" "${FAST[@]}" --outdir "$T/qkpos"
if "$PY" - "$T/qk/summary.json" <<'EOF'; then ok "equal -inf: matched, passed"; else bad "equal -inf: $(cat "$T/qk/summary.json")"; fi
import json, sys
o = {x["output"]: x for x in json.load(open(sys.argv[1]))["results"][0]["outputs"]}
assert o["qk"]["passed"] and o["qk"]["inf_matched"] == 3 and o["qk"]["inf_count"] == 0, o["qk"]
assert o["Y"]["inf_matched"] == 0, o["Y"]
EOF

# 4. A model `ortqual export` wrote, with ORT's profile of 2 more runs per point.
"$Q" export encoder --format attention24 -o "$T/enc.onnx" >/dev/null || bad "export encoder"
expect 0 "batch=1 seq=64 +ok" "$Q" bench --model "$T/enc.onnx" --dim batch=1 --sweep seq=32,64 --profile-runs 2 \
    --inter-op-threads 1 "${FAST[@]}" --outdir "$T/d"
if "$PY" - "$T/d" <<'EOF'; then ok "profile per run read, files kept"; else bad "profile"; fi
import csv, json, os, sys
d = sys.argv[1]
res = json.load(open(d + "/summary.json"))["results"]
rows = list(csv.DictReader(open(d + "/summary.csv")))
for r, c in zip(res, rows):
    p = r["profile"]
    assert p["runs"] == 2 and p["node_ms"] > 0 and p["run_ms"] > 0 and p["kernel_ms"] is None, p
    assert os.path.isfile(p["file"]) and p["file"].startswith(d + "/profiles/")
    assert abs(float(c["profile_node_ms"]) - p["node_ms"]) <= 1e-9 * p["node_ms"] and c["profile_kernel_ms"] == ""
    assert r["inter_op_threads"] == 1 and c["inter_op_threads"] == "1"
EOF

# 4b. --cupti: the profiled runs' GPU kernel time from CUPTI (tests/fixtures/modules/fake_cupti.c
#     stands in: 3 kernels of 1000, 2500 and 500 ns and a memcpy at every flush), enabled around
#     the profiled runs only; sums CUPTI cannot complete fail the row (exit 1); a CUPTI that
#     cannot be had is one line and exit 3, nothing written.
FAKE=(--cupti-lib "$OQ_BINARY_DIR/tests/libfake_cupti.so")
FAKE_CUPTI_KERNELS=1000,2500,500 expect 0 "batch=1 seq=32 +ok" "$Q" bench --model "$T/enc.onnx" --dim batch=1 \
    --sweep seq=32 --profile-runs 3 "${FAKE[@]}" "${FAST[@]}" --outdir "$T/cu"
if "$PY" - "$T/cu" <<'EOF'; then ok "CUPTI's kernels per profiled run"; else bad "cupti"; fi
import csv, json, sys
d = sys.argv[1]
r = json.load(open(d + "/summary.json"))["results"][0]
c = list(csv.DictReader(open(d + "/summary.csv")))[0]
p = r["profile"]
assert p["runs"] == 3 and p["kernel_source"] == "cupti" and p["kernel_events"] == 3, p
assert abs(p["kernel_ms"] - 0.004) < 1e-12 and float(c["profile_kernel_ms"]) == p["kernel_ms"], (p, c)
assert sorted(p["kernel_names"]) == ["fake::flash_kernel()", "plain_kernel"], p  # demangled
html = open(d + "/report.html").read()  # the profiled runs in the report
sec = html[html.index('<section id="profile">'):]
assert "<td>cupti</td>" in sec and "fake::flash_kernel()" in sec and "plain_kernel" in sec, sec[:2000]
EOF
if ! grep -q 'id="profile"' "$T/a/report.html"; then ok "no profiled runs, no such section"; else bad "profile section without a profile"; fi
expect 0 "batch=1 seq=32 +ok" "$Q" bench --model "$T/enc.onnx" --dim batch=1 --sweep seq=32 --profile-runs 2 \
    "${FAKE[@]}" "${FAST[@]}" --outdir "$T/cu0"
if "$PY" - "$T/cu0" <<'EOF'; then ok "no kernel seen: kernel_ms null, no source"; else bad "cupti without kernels"; fi
import json, sys
p = json.load(open(sys.argv[1] + "/summary.json"))["results"][0]["profile"]
assert p["kernel_ms"] is None and p["kernel_source"] is None and p["kernel_events"] == 0, p
assert p["kernel_names"] == [], p
EOF
FAKE_CUPTI_KERNELS=1000 FAKE_CUPTI_UNFINISHED=1 expect 3 "error .*profile: .*1 kernel records without an end time" "$Q" bench --model "$T/enc.onnx" \
    --dim batch=1 --sweep seq=32 --profile-runs 2 "${FAKE[@]}" "${FAST[@]}" --outdir "$T/cu3"
expect 3 "--cupti: /nonexistent/libcupti.so: cannot load CUPTI" "$Q" bench --model "$T/enc.onnx" --dim batch=1 \
    --sweep seq=32 --profile-runs 2 --cupti-lib /nonexistent/libcupti.so "${FAST[@]}" --outdir "$T/cu1"
expect 2 "--cupti times the profiled runs: give --profile-runs N" "$Q" bench --model "$T/enc.onnx" --dim batch=1 \
    --sweep seq=32 --cupti "${FAST[@]}" --outdir "$T/cu2"
[ ! -e "$T/cu1" ] && [ ! -e "$T/cu2" ] && ok "nothing written on refusal" || bad "refused --cupti runs wrote output"

# 5. A provider that is not here: skipped, which is not green.
expect 1 "no variant under test ran" "$Q" bench --model "$T/enc.onnx" --dim batch=1 --dim seq=8 --ep cuda \
    "${FAST[@]}" --outdir "$T/e"
expect 0 "accepted by --allow-skip" "$Q" bench --model "$T/enc.onnx" --dim batch=1 --dim seq=8 --ep cuda \
    --allow-skip "${FAST[@]}" --outdir "$T/e2"

# 6. Bad input: one line naming the problem, exit 2, nothing written.
M="$F/mlpf_like/mlpf_like_op18.onnx"
usage() { # usage PATTERN ARGS...: exit 2, the message, no output directory
    local pat=$1
    shift
    expect 2 "$pat" "$Q" bench --model "$M" "$@" --outdir "$T/u"
    if [ -e "$T/u" ]; then bad "$* wrote $T/u"; rm -rf "$T/u"; fi
}
usage "--shape feature: the model has no input 'feature' \(its inputs: features, mask\)" --shape feature=1,8,17
usage "--shape features: 2 dimensions, the model's input 'features' has 3 \[batch,seq,17\]" --shape features=1,8
usage "input 'features' \[batch,seq,17\], axis 0 \('batch'\): no value" --sweep seq=8,16
usage "tensor 'mask' is bool, the model's input wants float32" --inputs "$F/hand_attention/io.npz" --dim batch=1 --dim seq=8
usage "no tensor named after an input of the model" --inputs "$F/decoder_lm/io.npz"
usage "--dim heads: no model dimension" --dim batch=1 --dim seq=8 --dim heads=2
usage "--expected compares outputs of the inputs" --dim batch=1 --dim seq=8 --expected "$F/mlpf_like/io.npz"
usage "--num-heads belongs to the attention sweep" --dim batch=1 --dim seq=8 --num-heads 2
usage "--int-range '3,1': LO > HI" --int-range 3,1
usage "input 'features' \[4,4611686018427387904,17\] float32: its size overflows" --dim batch=4 --dim seq=4611686018427387904
usage "/nonexistent.npz" --inputs /nonexistent.npz
usage "^ortqual bench: --dim: dimension 'seq': want NAME=V$" --dim batch=2 --dim seq
expect 2 "--sweep needs --model" "$Q" bench --variants ref --sweep seq=8
expect 2 "--ep is for --model" "$Q" bench --variants ref --ep cpu
expect 0 "a model of yours" "$Q" bench --help

# 6b. Options that shape generated inputs only, given where the run generates no input they reach,
#     would be ignored (the run exited 0): each refused, one line naming it, nothing written. Given
#     counts, not the value (--seed 12345 is the default). With every input from --inputs, the
#     file's shapes give the dimensions: --dim and --sweep have nothing to set either.
TX=(--model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$F/tx_encoder/io.npz")
for opt in "--seed 5" "--seed 12345" "--length-policy fixed" "--mask-fraction 0.1" "--int-range 0,3" \
    "--dim batch=3" "--sweep seq=56"; do
    out=$("$Q" bench "${TX[@]}" $opt "${FAST[@]}" --outdir "$T/g" 2>&1)
    rc=$?
    if [ $rc = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && [ ! -e "$T/g" ] &&
        grep -qE "^ortqual bench: ${opt%%[ =]*}( [a-z]+)?: every input .*comes from $F/tx_encoder/io.npz.*, so it would be ignored$" <<<"$out"; then
        ok "--inputs gives every input: $opt refused"
    else
        bad "--inputs gives every input, $opt: exit $rc: $out"
        rm -rf "$T/g"
    fi
done
# the features from the file, the mask generated: --seed and the mask's options reach the mask
# (--length-policy fixed: every element valid); --int-range reaches no input (none is integer)
"$PY" -c 'import numpy as np, sys; np.savez(sys.argv[2], features=np.load(sys.argv[1])["features"])' \
    "$F/tx_encoder/io.npz" "$T/features.npz" || bad "cannot write features.npz"
expect 0 "batch=3 seq=56 +ok" "$Q" bench --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$T/features.npz" \
    --seed 5 --length-policy fixed --dim batch=3 "${FAST[@]}" --outdir "$T/g2"
if "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; assert r["valid_tokens"] == 3 * 56 and not r["masked"], r' \
    "$T/g2/summary.json" 2>/dev/null; then ok "a generated mask takes --length-policy"; else bad "the generated mask"; fi
expect 2 "^ortqual bench: --int-range: no generated input is an integer one \(generated: mask mask\), so it would be ignored$" \
    "$Q" bench --model "$F/tx_encoder/tx_encoder_op18.onnx" --inputs "$T/features.npz" --int-range 0,4 "${FAST[@]}" \
    --outdir "$T/g3"
usage "^ortqual bench: --int-range: no generated input is an integer one \(generated: features uniform, mask mask\)" \
    --dim batch=1 --dim seq=8 --int-range 0,4
# --mask-fraction sets the padding --length-policy fixed never has (either mode)
usage "^ortqual bench: --mask-fraction: --length-policy fixed pads nothing" --dim batch=1 --dim seq=8 \
    --length-policy fixed --mask-fraction 0.1
expect 2 "^ortqual bench: --mask-fraction: --length-policy fixed pads nothing" "$Q" bench --variants ref \
    --length-policy fixed --mask-fraction 0.1 --outdir "$T/g4"
# the attention sweep's lengths are those of its masked batches: --modes unmasked makes none, and
# ran without them (exit 0); masked and both take them
SW=(bench --variants ref --seq-lens 8 --iters 1 --warmup 0 --quiet --allow-skip)
for opt in "--length-policy uniform" "--length-policy fraction" "--mask-fraction 0.1" "--mask-fraction 0.25"; do
    out=$("$Q" "${SW[@]}" --modes unmasked $opt --outdir "$T/g5" 2>&1)
    rc=$?
    if [ $rc = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && [ ! -e "$T/g5" ] &&
        grep -qx "ortqual bench: ${opt%% *} shapes the padding of masked batches; --modes unmasked makes none, so it would be ignored" <<<"$out"; then
        ok "--modes unmasked: $opt refused"
    else
        bad "--modes unmasked, $opt: exit $rc: $out"
        rm -rf "$T/g5"
    fi
done
for modes in masked both; do
    expect 0 "wrote " "$Q" "${SW[@]}" --modes $modes --length-policy uniform --mask-fraction 0.3 --outdir "$T/g6$modes"
done

# 7. ORT runs in bench's own process: a crash there says so, with its backtrace and, with ORT's
#    extended optimizations on (its default), how to tell one of them at fault; nothing written
#    (not under AddressSanitizer, whose own report replaces the backtrace)
CRASH=(bench --model "$F/tx_encoder/tx_encoder_op18.onnx" --dim batch=1 --dim seq=8 --ep segvep
       --ep-lib "segvep=$OQ_BINARY_DIR/tests/libsegv_ep.so" --iters 1)
if ! grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt"; then
    "$Q" "${CRASH[@]}" --outdir "$T/crash" > "$T/crash.out" 2>&1
    rc=$?
    [ $rc = 139 ] && grep -q '^ortqual bench: crashed with signal 11 (SEGV); backtrace' "$T/crash.out" &&
        grep -q "^ortqual bench: a crash inside ONNX Runtime .* see whether --graph-opt-level 1 runs it (--session-config optimization.disable_specified_optimizers=NAME turns one off alone)$" "$T/crash.out" &&
        [ ! -e "$T/crash/summary.json" ] && ok "a crash in bench: signal, backtrace, the hint" || bad "crash: rc $rc: $(cat "$T/crash.out")"
    "$Q" "${CRASH[@]}" --graph-opt-level 1 --outdir "$T/crash1" > "$T/crash1.out" 2>&1
    grep -q '^ortqual bench: crashed with signal 11' "$T/crash1.out" && ! grep -q "graph-opt-level" "$T/crash1.out" &&
        ok "--graph-opt-level 1: no hint" || bad "crash at level 1: $(cat "$T/crash1.out")"
fi

# 8. --session-config reaches the sessions (the profiled one included): with ORT's
#    SkipLayerNormFusion disabled alone, the demo's decomposed encoder profiles no
#    SkipLayerNormalization node, which the default level makes; the summary records the entries
"$Q" validate --configs ref:encoder:fp64,cpu:decomposed:fp32 --num-events 2 --repeat 1 --no-plots --no-cache \
    --outdir "$T/enc" > /dev/null 2>&1 || bad "the demo's encoder export"
skip_ln() {
    "$Q" bench --model "$T/enc/encoder_decomposed_fp32.onnx" --dim batch=1 --dim seq=16 --iters 2 --profile-runs 1 \
        --quiet --outdir "$T/$1" "${@:2}" > /dev/null 2>&1 || { echo "exit $?"; return; }
    "$PY" - "$T/$1/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = json.load(open(d["results"][0]["profile"]["file"]))
print(sum(e.get("cat") == "Node" and e.get("args", {}).get("op_name") == "SkipLayerNormalization" for e in p),
      d["config"]["session_configs"])
PY
}
on=$(skip_ln sc_default) off=$(skip_ln sc_off --session-config optimization.disable_specified_optimizers=SkipLayerNormFusion)
[[ "$on" == [1-9]*" []" ]] && [ "$off" = "0 [['optimization.disable_specified_optimizers', 'SkipLayerNormFusion']]" ] &&
    ok "--session-config: SkipLayerNormalization nodes '$on' by default, '$off' with the fusion off" ||
    bad "--session-config: '$on' by default, '$off' with SkipLayerNormFusion disabled"
expect 2 "--session-config 'x': want KEY=VALUE" "$Q" bench --model "$T/enc/encoder_decomposed_fp32.onnx" --session-config x

# 9. ORT's refusal of a user's model is explained in the row in the library's line
#    (oq_refusal_str: validate's headline, the inputs, why, the fix, then ORT's message): the
#    opset-23 export's broadcast mask, and a model copied without its external-data file; a
#    runtime error (row `error`, exit 3, as validate's for the same model), not a failure
expect 3 "error +refused by ONNX Runtime \[attn-mask-query-broadcast\] at node 'node_scaled_dot_product_attention' \(Attention\); inputs Q .*: .*\. Fix: .*convert.* \(ONNX Runtime: Run: Non-zero status code returned while running Attention node" \
    "$Q" bench --model "$F/tx_encoder/tx_encoder_op23.onnx" --inputs "$F/tx_encoder/inputs_000.npz" --iters 2 --outdir "$T/ref23"
mkdir -p "$T/nodata" && cp "$OQ_SOURCE_DIR/tests/fixtures/external/llama_like_op18.onnx" "$T/nodata/"
expect 3 "refused by ONNX Runtime \[external-data-missing\]: initializer 'tok.weight' keeps its data in an external-data file, $T/nodata/llama_like_op18.onnx.data, which is not there.*\. Fix: .* \(ONNX Runtime: .*External data path does not exist" \
    "$Q" bench --model "$T/nodata/llama_like_op18.onnx" --inputs "$F/llama_like/inputs_000.npz" --iters 2 --outdir "$T/nodata/b"
# summary.json's and summary.csv's error: that line, the same in both, one line
if "$PY" - "$T/ref23" "$T/nodata/b" <<'PY'; then ok "summary.json's and summary.csv's error is the explanation, one line"; else bad "the refusal in summary.json/summary.csv"; fi
import csv, json, sys
for d, head, raw in ((sys.argv[1], "[attn-mask-query-broadcast] at node 'node_scaled_dot_product_attention' (Attention); inputs Q",
                      "Run: Non-zero status code returned while running Attention node"),
                     (sys.argv[2], "[external-data-missing]: initializer 'tok.weight'", "External data path does not exist")):
    e = json.load(open(d + "/summary.json"))["results"][0]["error"]
    lines = open(d + "/summary.csv").read().splitlines()
    assert len(lines) == 2, lines
    assert list(csv.DictReader(lines))[0]["error"] == e, d
    assert e.startswith("refused by ONNX Runtime " + head) and ". Fix: " in e, e
    assert raw in e.split(" (ONNX Runtime: ", 1)[1], e
    assert "\n" not in e and "\r" not in e, e
PY

# an external-data file that is a folder or a FIFO: refused by name before ORT opens it, exit 2,
# as validate and convert do (ORT failed the row on it, exit 1; a FIFO is not waited on)
for kind in dir fifo; do
    mkdir -p "$T/x$kind" && cp "$OQ_SOURCE_DIR/tests/fixtures/external/llama_like_op18.onnx" "$T/x$kind/"
    if [ $kind = dir ]; then mkdir "$T/x$kind/llama_like_op18.onnx.data"; else mkfifo "$T/x$kind/llama_like_op18.onnx.data"; fi
    expect 2 "^ortqual bench: .*/x$kind/llama_like_op18.onnx: external data: .*/x$kind/llama_like_op18.onnx.data: not a regular file$" \
        timeout -s KILL 60 "$Q" bench --model "$T/x$kind/llama_like_op18.onnx" --inputs "$F/llama_like/inputs_000.npz" --iters 1 --warmup 0 --threads 1 --outdir "$T/xb$kind"
    [ ! -e "$T/xb$kind" ] && ok "$kind: nothing written" || bad "$kind: $T/xb$kind made"
done

report
