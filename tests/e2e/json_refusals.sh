#!/usr/bin/env bash
# --json on refusal, in every subcommand that has --json: an option error (before or after
# --json on the line), an input that cannot be read or is malformed, a refused model: stdout is
# exactly one ortqual-error/1 object {schema, command, status, error, exit_code} whose
# exit_code is the process's and whose error is stderr's line; stderr keeps that line. inspect,
# plot, conformance, convert, slurm and doctor printed nothing on stdout (a CI step parsing it got
# an empty string), and validate, replay, estimate and merge printed nothing for an option error.
# A run that succeeds still prints its own document.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start

# refused NAME CODE ARGS...: `ortqual ARGS` exits CODE, stdout is one ortqual-error/1 object of
# command ARGS[0] and exit_code CODE, its error the one line on stderr after "ortqual CMD: "
refused() {
    local name=$1 code=$2 rc=0
    shift 2
    "$Q" "$@" >out.json 2>err.txt || rc=$?
    if [ "$rc" -ne "$code" ]; then
        bad "$name: exit $rc, expected $code: $(cat out.json err.txt)"
        return
    fi
    if $PY - "$rc" "$1" out.json err.txt <<'PY'; then ok "$name: ortqual-error/1, exit $code"; else bad "$name: stdout $(cat out.json), stderr $(cat err.txt)"; fi
import json, sys
rc, cmd, out, err = int(sys.argv[1]), sys.argv[2], open(sys.argv[3]).read(), open(sys.argv[4]).read()
j = json.loads(out)  # one document: json.loads refuses anything after it
assert set(j) == {"schema", "command", "status", "error", "exit_code"}, j
assert j["schema"] == "ortqual-error/1" and j["command"] == cmd and j["exit_code"] == rc, j
assert j["status"] and j["status"] != "ok" and j["error"], j
assert "ortqual %s: %s\n" % (cmd, j["error"]) in err, (j["error"], err)
PY
}

# answered NAME ARGS...: exit 0 and stdout is one JSON document that is not an error object
answered() {
    local name=$1 rc=0
    shift
    "$Q" "$@" >out.json 2>err.txt || rc=$?
    if [ "$rc" -eq 0 ] && $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert not (isinstance(j, dict) and j.get("schema") == "ortqual-error/1"), j' out.json; then
        ok "$name: its own JSON document"
    else bad "$name: exit $rc: $(head -c 300 out.json; cat err.txt)"; fi
}

$Q export sdpa -o m.onnx >/dev/null 2>&1 || fail "export sdpa"
printf 'not a model' >bad.onnx
printf '{"schema": "nothing"}' >bad.json
: >empty.json

# 1. an unknown option or a bad value, with --json after it and before it
for cmd in inspect plot conformance convert slurm doctor validate replay estimate merge; do
    refused "$cmd --bogus --json" 2 $cmd --bogus --json
    refused "$cmd --json --bogus" 2 $cmd --json --bogus
done
refused "validate --heads x --json" 2 validate --heads x --json
refused "estimate --events x --json" 2 estimate empty.json --events x --workers 1 --json
refused "plot --stat --json" 2 plot --stat nope --json "$F/bench/summary.csv"
# --json taken as an option's value, or after '--' (the command slurm runs), is not this
# command's --json: the refusal stays on stderr alone
quiet() { # quiet NAME ARGS...: exit 2, nothing on stdout
    local name=$1 rc=0
    shift
    "$Q" "$@" >out.json 2>/dev/null || rc=$?
    [ "$rc" -eq 2 ] && [ ! -s out.json ] && ok "$name: stdout empty" || bad "$name: exit $rc, stdout $(cat out.json)"
}
quiet "validate --outdir --json" validate --bogus --outdir --json
quiet "slurm -- validate --json" slurm --shards 2 -- validate --json
refused "slurm --json -- validate --json" 2 slurm --json --shards 2 -- validate --json

# 2. missing operands and files that cannot be read or are no model
refused "inspect, no model" 2 inspect --json
refused "inspect missing.onnx" 2 inspect --json missing.onnx
refused "inspect bad.onnx" 2 inspect bad.onnx --json
refused "plot missing" 2 plot --json missing.csv --out p
refused "plot bad.json" 2 plot --json bad.json --out p
# a table plot cannot draw, and a figure that cannot be written: the error object, not {"files": []}
printf 'a,b\n1,2\n' >x.csv
refused "plot x.csv (not a bench summary)" 2 plot --json x.csv --out p
refused "plot write failure" 3 plot --json "$F/bench/summary.csv" --out /proc/self
refused "conformance missing dir" 2 conformance --json nothere
refused "convert missing.onnx" 2 convert --json missing.onnx --plan --flash
refused "convert bad.onnx" 2 convert --json bad.onnx -o out.onnx --flash
refused "slurm without --shards" 2 slurm --json -- validate --configs ref:encoder:fp64
refused "estimate empty.json" 2 estimate empty.json --events 10 --workers 1 --json
refused "merge nothere" 2 merge nothere --json
refused "replay missing model" 2 replay --json --model missing.onnx --inputs missing.npz --ep cpu
refused "validate missing --model" 2 validate --json --model missing.onnx --inputs missing.npz \
    --configs expected,cpu:model:fp32 --outdir v

# 3. a model ORT's own refusal or the converter's late usage error: one error object, nothing else
refused "convert late --opset" 2 convert "$F/torch/tx_encoder/tx_encoder_op18.onnx" --plan --flash --opset 23 --json

# 3b. a folder another run holds (the lock, found after the options): the object says why, with
# the library's status (i/o error), for validate and merge alike
"$Q" validate --num-events 2000 --batch-size 2 --outdir held --no-plots --progress never >/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do [ -f held/.ortqual.lock ] && break; sleep 0.1; done
refused "validate into a held folder" 2 validate --json --num-events 2 --outdir held
grep -q '"status": "i/o error"' out.json && grep -q 'in use by another ortqual run' out.json &&
    ok "held folder: status i/o error, the reason" || bad "held folder: $(cat out.json)"
refused "merge of a held folder" 2 merge held --json
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# 4. a run that succeeds prints its own document, as before
answered "inspect --json" inspect --json m.onnx
answered "plot --json" plot "$F/bench/summary.csv" --out p2 --json
answered "estimate --json" estimate "$OQ_SOURCE_DIR/docs/evidence/h200/validate-demo-summary.json" --events 10 --workers 10 --json
answered "conformance --json" conformance --json "$CONF/test_attention_3d"
answered "convert --plan --json" convert "$F/torch/tx_encoder/tx_encoder_op18.onnx" --plan --fuse --json
answered "doctor --json" doctor --json
answered "validate --list-configs --json" validate --list-configs --json
report
