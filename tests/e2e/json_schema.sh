#!/usr/bin/env bash
# Every --json document ortqual prints and every JSON file it writes for users says what it is in
# a "schema" string "ortqual.<name>/<n>" (a refusal: "ortqual-error/1"): a CI step tells an
# estimate from a refusal, and a version from the next, by that key. validate --list-configs,
# doctor, estimate, slurm and conformance --json had none. conformance --json printed `tests`
# and the counts alone, and the whole document only beside --junit or --outdir: stdout is now one
# document whatever else is asked. A run's times are "start" and "end" (ISO 8601 UTC) in every
# document (conformance's "created", bench's "created" and gate's "started_utc" were renamed;
# bench's summary had "end" alone until it gained "start"), and ortqual still reads the old names
# (docs/summary-schema.md).
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

# schema_is NAME WANT FILE: FILE is one JSON object whose "schema" is WANT, of the form
# ortqual.<name>/<n> or ortqual-error/1
schema_is() {
    if $PY - "$2" "$3" <<'PY'; then ok "$1: $2"; else bad "$1: $(head -c 300 "$3")"; fi
import json, re, sys
want, path = sys.argv[1], sys.argv[2]
j = json.load(open(path))  # one document: json.load refuses anything after it
assert isinstance(j, dict), "not an object"
s = j.get("schema")
assert isinstance(s, str) and re.fullmatch(r"ortqual\.[a-z][a-z-]*/[1-9][0-9]*|ortqual-error/1", s), s
assert s == want, (s, want)
PY
}

# doc NAME WANT CODE ARGS...: `ortqual ARGS` exits CODE ('any': whatever it says) and prints one
# document of schema WANT
doc() {
    local name=$1 want=$2 code=$3 rc=0
    shift 3
    "$Q" "$@" >out.json 2>err.txt || rc=$?
    if [ "$code" != any ] && [ "$rc" -ne "$code" ]; then
        bad "$name: exit $rc, expected $code: $(tail -3 err.txt)"
        return
    fi
    schema_is "$name" "$want" out.json
}

# times NAME FILE KEYS...: each key of FILE is an ISO 8601 UTC time to the second
times() {
    local name=$1 file=$2
    shift 2
    $PY - "$file" "$@" <<'PY' && ok "$name: $* ISO 8601 UTC" || bad "$name: times $*: $(head -c 300 "$file")"
import json, re, sys
j = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", j.get(k) or ""), (k, j.get(k))
PY
}

V=(--configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 6 --width 16 --max-len 32 --threads 1 --no-cache
    --progress never --no-plots)
"$Q" export sdpa -o m.onnx >/dev/null 2>&1 || fail "export sdpa"

# 1. validate, its files, and what reads them
doc "validate --json" ortqual.validate/1 0 validate "${V[@]}" --outdir r --json
schema_is "validate summary.json" ortqual.validate/1 r/summary.json
times "validate summary.json" r/summary.json start end
doc "validate --list-configs --json" ortqual.configs/1 0 validate --list-configs --json
need_ort130 # ORT CPU against another build
doc "replay --json" ortqual.validate/1 0 replay --model r/encoder_attention24_fp32.onnx --inputs r/inputs_000.npz \
    --ep cpu --ort-lib "$ORT130" --reference-ort-lib "$OQ_ORT_LIB" --outdir rp --json
doc "estimate --json" ortqual.estimate/1 0 estimate r --events 1000 --workers 2 --json
doc "estimate --events 0 --json (refused)" ortqual-error/1 2 estimate r --events 0 --workers 2 --json

# 2. sharded: slurm's answer, the prepare step, a shard, its started.json, the merge
doc "slurm --no-submit --json" ortqual.slurm/1 0 slurm --shards 2 --outdir js --no-submit --json -- validate "${V[@]}"
printf '#!/bin/sh\ncase " $* " in *" --dependency="*) echo 101 ;; *) echo 100 ;; esac\n' >sbatch-fake # ids, no queue
chmod +x sbatch-fake
doc "slurm --json (submitted)" ortqual.slurm/1 0 slurm --shards 2 --outdir jq --sbatch "$T/sbatch-fake" --json -- validate "${V[@]}"
schema_is "slurm/jobs.json" ortqual.slurm-jobs/1 jq/slurm/jobs.json
doc "validate --prepare-shards --json" ortqual.shards/2 0 validate "${V[@]}" --outdir S --prepare-shards 2 --json
schema_is "shards/plan.json" ortqual.shards/2 S/shards/plan.json
doc "validate --shard 0/2 --json" ortqual.validate/1 0 validate "${V[@]}" --outdir S --shard 0/2 --json
schema_is "shards/0/started.json" ortqual.shard/1 S/shards/0/started.json
"$Q" validate "${V[@]}" --outdir S --shard 1/2 >/dev/null 2>&1 || bad "shard 1/2"
doc "merge --json" ortqual.validate/1 0 merge S --no-plots --json

# 3. the other subcommands with --json
doc "doctor --json" ortqual.doctor/1 any doctor --json
doc "inspect --json" ortqual.inspect/1 0 inspect --json m.onnx
doc "convert --plan --json" ortqual.convert/1 0 convert "$F/torch/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --json
doc "plot --json" ortqual.plot/1 0 plot "$F/bench/summary.csv" --out p --json

# 4. conformance: one document on stdout, the same keys with and without --junit or --outdir
doc "conformance --json" ortqual.conformance/2 0 conformance --json "$CONF/test_attention_3d"
cp out.json c-alone.json
doc "conformance --json --junit" ortqual.conformance/2 0 conformance --json --junit c.xml "$CONF/test_attention_3d"
cp out.json c-junit.json
doc "conformance --json --outdir" ortqual.conformance/2 0 conformance --json --outdir co "$CONF/test_attention_3d"
cp out.json c-outdir.json
schema_is "conformance summary.json" ortqual.conformance/2 co/summary.json
times "conformance --json" c-alone.json start end
$PY - c-alone.json c-junit.json c-outdir.json co/summary.json <<'PY' && ok "conformance: the same keys alone, with --junit, with --outdir, in summary.json" || bad "conformance keys differ"
import json, sys
keys = [list(json.load(open(p))) for p in sys.argv[1:]]
assert all(k == keys[0] for k in keys), keys
assert {"verdict", "exit_status", "tolerance", "runner", "tests"} <= set(keys[0]), keys[0]
PY
# a summary of ortqual.conformance/1 ("created") is still rendered, its time shown
$PY - co/summary.json <<'PY' || bad "making a conformance/1 summary"
import json, sys
j = json.load(open(sys.argv[1]))
j["schema"] = "ortqual.conformance/1"
j["created"] = "2026-01-02T03:04:05Z"
del j["start"], j["end"]
json.dump(j, open(sys.argv[1], "w"))
PY
rm -f co/report.html
expect 0 "" "$Q" report co
grep -q '2026-01-02T03:04:05Z' co/report.html && ok "report of a conformance/1 summary: its created time" ||
    bad "report of a conformance/1 summary lacks its time"

# 5. bench's summary.json and gate's verdict; an old bench summary ("created") still reads
expect 0 "" "$Q" bench --variants cpu:attention24:fp32 --seq-lens 32 --num-heads 2 --head-dim 8 --iters 2 \
    --warmup 1 --threads 1 --modes masked --outdir b
schema_is "bench summary.json" ortqual.bench/2 b/summary.json
times "bench summary.json" b/summary.json start end
# --model's summary too; a sweep ends after it starts (both ISO 8601 UTC, so compared as text)
expect 0 "" "$Q" bench --model m.onnx --dim batch=2 --dim seq=8 --iters 1 --warmup 0 --threads 1 --outdir bm
times "bench --model summary.json" bm/summary.json start end
$PY - b/summary.json bm/summary.json <<'PY' && ok "bench: start <= end" || bad "bench: start after end"
import json, sys
for p in sys.argv[1:]:
    j = json.load(open(p))
    assert j["start"] <= j["end"], (p, j["start"], j["end"])
PY
printf '#!/bin/sh\necho "===== 3 passed in 0.12s ====="\n' >pytest_ok && chmod +x pytest_ok
expect 0 "" "$Q" gate --quiet --verdict g.json -- ./pytest_ok
schema_is "gate --verdict" ortqual.gate/2 g.json
times "gate --verdict" g.json start end
expect 3 "" "$Q" gate --quiet --verdict ge.json -- ./no-such-program
schema_is "gate --verdict (not run)" ortqual.gate/2 ge.json
mkdir old && cp "$F/bench/sweep.json" old/summary.json
expect 0 "" "$Q" report old
grep -q '2026-12-02T18:40:12Z' old/report.html && ok "report of a bench summary with created: its time" ||
    bad "report of a bench summary with created lacks its time"
report
