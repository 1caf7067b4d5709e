#!/usr/bin/env bash
# Bad input from a user's side (the bad-input audit): each case names what is wrong in one
# line, exits non-zero and leaves no half-written output; or, where the input is fine after
# all, runs as it should.
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
cd "$T"

# 1. a --batch-size above --num-events makes one batch of every event (the generation window
#    was sized by --batch-size: 2^31 asked for 4 TiB, "out of memory", exit 3)
expect 0 "cpu:decomposed:fp32: passed" $Q validate --batch-size 2147483648 --num-events 3 --max-len 8 \
    --configs ref:encoder:fp64,cpu:decomposed:fp32 --repeat 1 --warmup 0 --no-plots --no-cache --outdir big
/usr/bin/python3 -c 'import json,sys; b=json.load(open("big/summary.json"))["batches"]; sys.exit(not (len(b) == 1 and b[0]["batch_size"] == 3))' &&
    ok "one batch of 3 events" || bad "big/summary.json: batches $(/usr/bin/python3 -c 'import json; print(json.load(open("big/summary.json"))["batches"])')"

# 2. report (and --junit) on a validate summary.json without its "configs" array, or one whose
#    verdict says passed while no configuration under test passed: refused, one line, the old
#    report.html kept (it was drawn as a green PASSED, "0 under test", and the JUnit had 0 tests)
$Q validate --num-events 2 --max-len 8 --configs ref:encoder:fp64,cpu:decomposed:fp32 --repeat 1 --warmup 0 \
    --no-plots --no-cache --outdir run >/dev/null 2>&1 || bad "validate run: exit $?"
edit() { # edit DIR PYTHON: a copy of run/ as DIR, its summary.json changed by PYTHON (on j)
    cp -r run "$1"
    /usr/bin/python3 - "$1/summary.json" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(j, open(sys.argv[1], "w"))
PY
}
edit noconfigs 'del j["configs"]'
edit strconfigs 'j["configs"] = "x"'
edit nopass 'j["configs"][1]["status"] = "skipped"'
for d in noconfigs strconfigs; do
    cp $d/report.html $d.before
    expect 2 "^ortqual report: $d/summary.json: no \"configs\" array$" $Q report $d
    expect 2 "^ortqual report: $d/summary.json: no \"configs\" array$" $Q report $d --junit $d.xml
    cmp -s $d.before $d/report.html && ok "$d/report.html kept" || bad "$d/report.html rewritten"
    [ ! -e $d.xml ] && ok "$d.xml not made" || bad "$d.xml made"
done
expect 2 "^ortqual report: nopass/summary.json: verdict 'passed', but no configuration under test passed$" $Q report nopass
# ... or whose passed configuration has no batch: nothing was compared (it was a green page and a
# JUnit of zero tests)
edit nobatch 'j["configs"][1]["batches"] = []'
cp nobatch/report.html nobatch.before
expect 2 "^ortqual report: nobatch/summary.json: verdict 'passed', but no configuration under test that passed has a batch: nothing was compared$" \
    $Q report nobatch --junit nobatch.xml
cmp -s nobatch.before nobatch/report.html && [ ! -e nobatch.xml ] && ok "nobatch: nothing written" || bad "nobatch: written"
expect 0 "run/report.html" $Q report run

# 3. merge of a shard whose summary.json lists its configurations in another order: refused,
#    one line, nothing merged (results are merged by position: the reference took the
#    configuration's outputs, the configuration kept half its batches, and the merge passed)
S=(validate --num-events 4 --batch-size 2 --max-len 8 --configs ref:encoder:fp64,cpu:decomposed:fp32 --repeat 1
   --warmup 0 --no-plots --no-cache --outdir sh)
$Q "${S[@]}" --prepare-shards 2 >/dev/null 2>&1 && $Q "${S[@]}" --shard 0/2 >/dev/null 2>&1 &&
    $Q "${S[@]}" --shard 1/2 >/dev/null 2>&1 || bad "sharded run: exit $?"
cp sh/shards/1/summary.json shard1.json
/usr/bin/python3 - sh/shards/1/summary.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["configs"].reverse()
json.dump(j, open(sys.argv[1], "w"))
PY
expect 2 "^ortqual merge: sh/shards/1/summary.json: configuration 1 is cpu:decomposed:fp32, but the plan's is ref:encoder:fp64 there$" \
    $Q merge sh --no-plots
[ ! -e sh/summary.json ] && [ ! -e sh/report.html ] && [ ! -e sh/validate.csv ] && ok "nothing merged into sh/" ||
    bad "sh/ holds: $(ls sh)"

# 3b. merge of a shard whose configuration passed while its summary lists an output that failed,
#     or no output at all: refused as a contradiction (the merged run passed with the failed
#     output in it; with none, that shard's part was left out of the merged counts unseen)
for case in "failed:but its output 'reg' failed" "none:but lists no compared output"; do
    kind=${case%%:*}
    /usr/bin/python3 - shard1.json sh/shards/1/summary.json "$kind" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); c = j["configs"][1]
if sys.argv[3] == "failed":
    c["outputs"][1]["passed"] = False
else:
    c["outputs"] = []
json.dump(j, open(sys.argv[2], "w"))
PY
    expect 2 "^ortqual merge: sh/shards/1/summary.json: cpu:decomposed:fp32 passed, ${case#*:}: refusing to merge a summary that contradicts itself$" \
        $Q merge sh --no-plots
    [ ! -e sh/summary.json ] && ok "$kind: nothing merged" || bad "$kind: sh/summary.json written"
done
cp shard1.json sh/shards/1/summary.json
expect 0 "verdict: PASSED" $Q merge sh --no-plots

# only_error_json DIR: the refused run left error.json and nothing else
only_error_json() {
    local left
    left=$(cd "$1" 2>/dev/null && ls -A | tr '\n' ' ')
    [ "$left" = "error.json " ] && ok "$1 holds only error.json" || bad "$1 holds '$left', expected error.json only"
}
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/mlpf_like"
# expected_npz OUT MEMBER...: $FX/outputs_000.npz's members, renamed OLD=NEW or kept
expected_npz() {
    /usr/bin/python3 - "$FX/outputs_000.npz" "$@" <<'PY'
import sys, zipfile
src, out, pairs = sys.argv[1], sys.argv[2], dict(a.split("=") for a in sys.argv[3:])
with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w") as o:
    for m in z.namelist():
        o.writestr(pairs.get(m[:-4], m[:-4]) + ".npy", z.read(m))
PY
}

# 4. validate --expected with a member that is no output nor input of the model (an output's
#    name misspelt beside the right one): refused, naming it (it was dropped, silently)
expected_npz extra.npz reg=reg
/usr/bin/python3 -c 'import zipfile,sys; z=zipfile.ZipFile("extra.npz","a"); z.writestr("rgs.npy", zipfile.ZipFile(sys.argv[1]).read("reg.npy"))' "$FX/outputs_000.npz"
one_line 2 "^ortqual validate: extra.npz: member 'rgs' is neither an output nor an input of the model$" \
    $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/inputs_000.npz" --expected extra.npz \
    --configs expected,cpu:model:fp32 --outdir vx
only_error_json vx
#    its error.json is the --json refusal's document (ortqual-error/1, the same keys and values:
#    it was "ortqual.validate/1" with no exit_code, a summary's schema without a verdict)
$Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/inputs_000.npz" --expected extra.npz \
    --configs expected,cpu:model:fp32 --outdir vxj --json >vxj.json 2>/dev/null || true
/usr/bin/python3 - vx/error.json vxj.json <<'PY' && ok "error.json is the --json refusal's ortqual-error/1" ||
import json, sys
f, j = (json.load(open(p)) for p in sys.argv[1:])
assert f == j, (f, j)
assert f["schema"] == "ortqual-error/1" and f["exit_code"] == 2 and f["command"] == "validate", f
PY
    bad "error.json differs from the --json refusal: $(cat vx/error.json) vs $(cat vxj.json)"
expect 0 "cpu:model:fp32: passed" $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" \
    --configs expected,cpu:model:fp32 --no-plots --outdir vio
#    the same member in the --inputs file (a tokenizer's position_ids the export dropped, an
#    optional input misspelt) with the outputs in --expected: refused the same way (it was ignored)
/usr/bin/python3 -c 'import zipfile,sys; s=zipfile.ZipFile(sys.argv[1]); z=zipfile.ZipFile("in_extra.npz","w")
for m in s.namelist(): z.writestr(m, s.read(m))
z.writestr("position_ids.npy", zipfile.ZipFile(sys.argv[2]).read("reg.npy"))' "$FX/inputs_000.npz" "$FX/outputs_000.npz"
one_line 2 "^ortqual validate: in_extra.npz: member 'position_ids' is neither an output nor an input of the model$" \
    $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs in_extra.npz --expected "$FX/outputs_000.npz" \
    --configs expected,cpu:model:fp32 --outdir vxi
only_error_json vxi

# 5. validate --model without --configs: an input error is the one line said (the note of the
#    default --configs came first: two lines); a run that goes on still says it first
expected_npz short.npz
/usr/bin/python3 - short.npz <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); cls = z.read("cls.npy"); z.close()
with zipfile.ZipFile(sys.argv[1], "w") as o:
    o.writestr("cls.npy", cls)
PY
one_line 2 "^ortqual validate: short.npz: no member 'reg' for the model's output reg" \
    env ORTQUAL_TEST_DEVICE_ROOT="$T/nodev" $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/inputs_000.npz" \
    --expected short.npz --outdir vs
only_error_json vs
out=$(ORTQUAL_TEST_DEVICE_ROOT="$T/nodev" $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" --no-plots \
      --outdir vd 2>&1)
[ $? = 0 ] && [ "$(head -1 <<<"$out")" = "ortqual validate: --configs expected,cpu:model:fp32 (--model's default here)" ] &&
    ok "the default --configs said first" || bad "validate --model without --configs: $out"
# the same when the preparation's progress is shown (a slow host shows it after a few seconds)
out=$(ORTQUAL_TEST_DEVICE_ROOT="$T/nodev" $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" --no-plots \
      --progress always --outdir vdp 2>&1)
[ $? = 0 ] && [ "$(head -1 <<<"$out")" = "ortqual validate: --configs expected,cpu:model:fp32 (--model's default here)" ] &&
    ok "the default --configs said before the preparation's progress" ||
    bad "validate --model --progress always without --configs: $out"


# 6. report of a bench summary.json whose rows have keys of the wrong JSON type, a key the page
#    needs missing, a status bench never writes, an ok row without its median, or no row at all:
#    refused in one line naming the file and the key, exit 2, report.html untouched and nothing
#    else left in the folder (the page was drawn with "?", 0 and dashes where the values did not
#    parse, exit 0; no rows drew an empty table)
$Q bench --variants ref,cpu:decomposed:fp32 --seq-lens 32,64 --batch-sizes 1 --iters 2 --warmup 0 --ref-iters 1 \
    --outdir bench --quiet >/dev/null 2>&1 || bad "bench run: exit $?"
bench_case() { # bench_case DIR PYTHON MESSAGE: a copy of bench/ with its summary.json edited
    rm -rf "$1" && cp -r bench "$1"
    /usr/bin/python3 - "$1/summary.json" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(j, open(sys.argv[1], "w"))
PY
    local before
    before=$(cd "$1" && ls -A | tr '\n' ' ')
    cp "$1/report.html" "$1.before"
    one_line 2 "^ortqual report: $1/summary.json: $3\$" $Q report "$1"
    cmp -s "$1.before" "$1/report.html" && [ "$(cd "$1" && ls -A | tr '\n' ' ')" = "$before" ] &&
        ok "$1: report.html kept, nothing else written" || bad "$1: holds $(cd "$1" && ls -A | tr '\n' ' ')"
}
bench_case b_str 'j["results"][3]["stats_ms"]["p50"] = "0.5"' \
    'results\[3\]\.stats_ms\.p50: want a number or null, got a string'
bench_case b_obj 'j["results"][1]["batch"] = {"n": 1}' 'results\[1\]\.batch: want a whole number, got an object'
bench_case b_nostatus 'del j["results"][2]["status"]' 'results\[2\]\.status: missing'
bench_case b_status 'j["results"][0]["status"] = "great"' \
    "results\\[0\\]\\.status: want ok, skipped, unsupported, oom, failed or error, got 'great'"
bench_case b_null 'j["results"][1]["stats_ms"]["p50"] = None' \
    'results\[1\]\.stats_ms\.p50: want a number \(the row is ok: it was timed\)'
bench_case b_mem 'j["results"][0]["memory"]["peak_rss_bytes"] = [1]' \
    'results\[0\]\.memory\.peak_rss_bytes: want a number or null, got an array'
bench_case b_row 'j["results"][2] = 7' 'results\[2\]: want an object, got a whole number'
bench_case b_config 'j["config"] = "x"' 'config: want an object, got a string'
bench_case b_empty 'j["results"] = []' '"results" has no rows: not a sweep ortqual bench wrote'
expect 0 "^bench/report.html$" $Q report bench

# 7. the same file twice among --inputs (another spelling of its path, a link to it: the same
#    device and inode), or among --expected: refused in one line naming both positions, nothing
#    made (every event of that file was counted twice, or a batch judged against another's outputs)
cp "$FX/io.npz" io2.npz && ln -s "$FX/io.npz" same.npz
one_line 2 "^ortqual validate: --inputs: files 1 and 3 are the same file \(.*/io.npz and same.npz\): its events would count twice$" \
    $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" io2.npz same.npz \
    --configs expected,cpu:model:fp32 --outdir twice1
cp "$FX/io.npz" ex.npz
one_line 2 "^ortqual validate: --expected: files 1 and 2 are the same file \(ex.npz and \./ex.npz\): a batch would be judged against another batch's outputs$" \
    $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" io2.npz --expected ex.npz ./ex.npz \
    --configs expected,cpu:model:fp32 --outdir twice2
# ... and a copy is the same events: by content (it was accepted, every event counted twice)
one_line 2 "^ortqual validate: --inputs: files 1 and 2 have the same content \(.*/io.npz and io2.npz, SHA-256 [0-9a-f]{12}\.\.\. of their members. names, dtypes, shapes and values\): its events would count twice$" \
    $Q validate --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/io.npz" io2.npz --configs expected,cpu:model:fp32 --outdir twice4
one_line 2 "^ortqual replay: --inputs: files 1 and 2 are the same file \(.*/inputs_001.npz and .*/\.\./mlpf_like/inputs_001.npz\)" \
    $Q replay --model "$FX/mlpf_like_op18.onnx" --inputs "$FX/inputs_001.npz" "$FX/../mlpf_like/inputs_001.npz" \
    --ep cpu --ort-lib "$OQ_SOURCE_DIR/third_party/onnxruntime-1.30/lib/libonnxruntime.so.1" --reference-ort-lib "$OQ_ORT_LIB" \
    --outdir twice3
for d in twice1 twice2 twice3; do [ ! -e $d ] && ok "$d not made" || bad "$d made: $(ls -A $d)"; done
# (a copy is found by its members as the batches are read: then only the run's error.json is left)
[ "$(ls -A twice4)" = error.json ] && ok "twice4 holds error.json only" || bad "twice4 holds $(ls -A twice4)"

# 8. inputs of another width for ortqual's own encoder: the option that builds it so is named
#    (QA mlpf2 #6: "the model's 'features' is [batch,seq,8]" of a model the user never chose)
/usr/bin/python3 -c 'import numpy as np; np.savez("w17.npz", features=np.zeros((2, 4, 17), np.float32), mask=np.ones((2, 4), np.float32))' &&
    one_line 2 "^ortqual validate: w17.npz: member 'features' has shape \[2,4,17\]; .*; ortqual's model is exported with --num-features 8: give --num-features 17 for these inputs$" \
        $Q validate --inputs w17.npz --configs ref:encoder:fp64,cpu:attention24:fp32 --no-cache --no-plots --outdir w17

# 9. ortqual's sdpa model reads its padded query/key/value rows (docs/export.md): a NaN there is
#    refused up front, by event and position (QA mlpf2 #5: accepted, then NaN outputs at valid
#    positions with nothing pointing at it); the same NaN at a padded feature of the encoder is fine
/usr/bin/python3 - <<'PY' || fail "making the sdpa inputs"
import numpy as np
r = np.random.default_rng(3); B, H, L, D = 2, 4, 8, 16
q = r.standard_normal((B, H, L, D)).astype(np.float32); k = q.copy(); v = r.standard_normal((B, H, L, D)).astype(np.float32)
m = np.zeros((B, L), np.float32); m[0, :5] = 1; m[1, :] = 1
for t in (q, k, v): t[0, :, 5:] = 0
np.savez("sdpa_ok.npz", query=q, key=k, value=v, mask=m)
v[0, :, 6, 3] = np.nan
np.savez("sdpa_nanpad.npz", query=q, key=k, value=v, mask=m)
PY
S=(validate --export sdpa --configs ref:sdpa:fp64,cpu:decomposed:fp32 --threads 1 --no-cache --no-plots)
one_line 2 "^ortqual validate: sdpa_nanpad.npz: input 'value': event 0 position 6 \(element 3 of it\) is NaN: every position must be finite, padding too" \
    $Q "${S[@]}" --inputs sdpa_nanpad.npz --outdir sdpa_nan
expect 0 "verdict: PASSED" $Q "${S[@]}" --inputs sdpa_ok.npz --outdir sdpa_ok

report
