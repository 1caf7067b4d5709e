#!/usr/bin/env bash
# The tool's options as the option tables make them: `ortqual help CMD` is `CMD --help`, options
# are taken as the usage writes them (--length-policy balanced 10 64, --inputs with the files a
# shell glob expands to), and repeatable options keep every value (no silent caps).
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
json() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. help CMD is CMD --help, for every command the tool lists (and export's two models)
cmds=$("$ORTQUAL" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/ {print $1}')
[ -n "$cmds" ] || fail "no commands listed"
for c in $cmds; do
    diff <("$ORTQUAL" help "$c") <("$ORTQUAL" "$c" --help) > /dev/null || fail "ortqual help $c differs from $c --help"
done
for m in sdpa encoder; do
    diff <("$ORTQUAL" help export $m) <("$ORTQUAL" export $m --help) > /dev/null || fail "help export $m"
done
"$ORTQUAL" help validate > "$T/validate.help"
grep -q -- "--length-policy balanced 10 64" "$T/validate.help" || fail "the usage lost its example"
set +e
"$ORTQUAL" help nosuch > "$T/h.out" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "'nosuch' is not a command" "$T/h.out" || fail "help of no command: exit $rc"

# 2. --length-policy as the usage writes it, and the quoted form, give the same events
run() { "$ORTQUAL" validate --num-events 4 --batch-size 2 --max-len 64 --repeat 1 --no-plots \
        --configs ref:encoder:fp64,cpu:decomposed:fp32 "$@" > /dev/null 2>&1; }
run --outdir "$T/words" --length-policy balanced 10 64 || fail "--length-policy balanced 10 64 refused"
run --outdir "$T/quoted" --length-policy 'balanced 10 64' || fail "--length-policy 'balanced 10 64' refused"
lengths() { json "$1/summary.json" '[l for b in d["batches"] for l in b["lengths"]]'; }
[ "$(lengths "$T/words")" = "$(lengths "$T/quoted")" ] || fail "the two forms differ: $(lengths "$T/words")"
$PY - "$T/words/summary.json" <<'PY' || fail "lengths outside balanced 10..64"
import json, sys
d = json.load(open(sys.argv[1]))
ls = [l for b in d["batches"] for l in b["lengths"]]
assert len(ls) == 4 and all(10 <= l <= 64 for l in ls), ls
PY

# balanced at batch size 1 spreads the lengths over the events (every event was 64 long: no padding)
run --outdir "$T/one" --batch-size 1 --num-events 3 --length-policy balanced 10 64 || fail "balanced, batch 1 refused"
[ "$(lengths "$T/one")" = "[10, 37, 64]" ] || fail "balanced 10 64 at batch size 1: lengths $(lengths "$T/one")"

# 3. --inputs FILE... takes every file a shell glob expands to, and expands a quoted glob itself
for form in expanded quoted; do
    if [ $form = expanded ]; then files=("$T"/words/inputs_*.npz); else files=("$T/words/inputs_*.npz"); fi
    "$ORTQUAL" validate --outdir "$T/files_$form" --inputs "${files[@]}" --repeat 1 --no-plots \
        --configs ref:encoder:fp64,cpu:decomposed:fp32 > "$T/files_$form.out" 2>&1 ||
        fail "--inputs ($form glob) refused: $(tail -2 "$T/files_$form.out")"
    n=$(json "$T/files_$form/summary.json" 'len(d["batches"])')
    [ "$n" = 2 ] || fail "--inputs ($form glob) took $n files, not 2"
done

# 4. no cap drops a value: the 65th --require still counts (a configuration skipped here
#    must then fail the run); "noep" is an execution provider no host has
req=()
for i in $(seq 1 64); do req+=(--require ref:encoder:fp64); done # each names a configuration of the run
set +e
"$ORTQUAL" validate --outdir "$T/req" --num-events 2 --repeat 1 --no-plots "${req[@]}" \
    --require noep:attention24:fp32 --configs ref:encoder:fp64,noep:attention24:fp32 > "$T/req.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "65th --require dropped: exit $rc: $(tail -3 "$T/req.out")"
[ "$(json "$T/req/summary.json" 'd["configs"][1].get("required")')" = True ] || fail "not marked required"
# --list-configs --json: the list as JSON on stdout, nothing else (it printed the text)
(cd "$T" && "$ORTQUAL" validate --list-configs --json > "$T/lc.json") || fail "--list-configs --json exited $?"
[ "$(json "$T/lc.json" '[c["name"] for c in d["configs"] if c["possible"]][0]')" = "ref:encoder:fp64" ] ||
    fail "--list-configs --json: $(head -3 "$T/lc.json")"
# ... every configuration the parser takes, with what it needs: the fp16 ones of every
# representation and ref:sdpa:fp64 (--export sdpa) were missing
[ "$(json "$T/lc.json" '[(c["name"], c["needs"]) for c in d["configs"] if c["name"] in ("cpu:decomposed:fp16", "cpu:attention23:fp16", "ref:sdpa:fp64")]')" = \
    "[('ref:sdpa:fp64', ['--export sdpa']), ('cpu:decomposed:fp16', []), ('cpu:attention23:fp16', [])]" ] ||
    fail "--list-configs --json misses configurations: $(json "$T/lc.json" '[c["name"] for c in d["configs"]]')"
(cd "$T" && "$ORTQUAL" validate --list-configs > "$T/lc.txt") || fail "--list-configs exited $?"
grep -Eq '^  ref:sdpa:fp64 +possible here with --export sdpa$' "$T/lc.txt" || fail "--list-configs: $(cat "$T/lc.txt")"
echo "cli e2e: help CMD, --length-policy as written, --inputs FILE..., no silent caps"
