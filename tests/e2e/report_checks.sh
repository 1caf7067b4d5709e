#!/usr/bin/env bash
# ortqual report (and estimate) on inputs that are wrong before anything is written: --junit of
# a bench run, an unusable --junit path, a summary.json that is a folder, JSON syntax errors
# named at their line.
set -u
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q="$ORTQUAL"
FIX="$OQ_SOURCE_DIR/tests/fixtures"
mkdir "$T/bench" "$T/val"
cp "$FIX/bench/summary.json" "$T/bench/"
cp "$FIX/validate/pass.json" "$T/val/summary.json"

# 1. --junit of a summary of no known kind (an old bench summary: no "tool") is a usage error found before
#    report.html is written; so is an empty --junit, and an unwritable one is exit 3.
expect 2 "bench/summary.json: no JUnit for this document" "$Q" report "$T/bench" --junit "$T/b.xml"
[ ! -e "$T/bench/report.html" ] && [ ! -e "$T/b.xml" ] && ok "nothing written" || bad "written: $(ls "$T/bench" "$T"/b.xml 2>&1)"
expect 2 "^ortqual report: --junit: an empty value .want FILE.$" "$Q" report "$T/val" --junit ''
[ ! -e "$T/val/report.html" ] && ok "--junit '': no report.html" || bad "--junit '': report.html written"
if [ "$(id -u)" -eq 0 ]; then J=/proc/j.xml; else mkdir "$T/ro" && chmod 555 "$T/ro"; J="$T/ro/j.xml"; fi
expect 3 "^ortqual report: --junit: $J: cannot create" "$Q" report "$T/val" --junit "$J"
expect 0 "$T/v.xml" "$Q" report "$T/val" --junit "$T/v.xml"

# 2. A summary.json that is a folder is named as such, exit 2 (report said "read error", exit 3;
#    estimate "'[' or '{' expected").
mkdir -p "$T/dir/summary.json"
expect 2 "^ortqual report: $T/dir/summary.json: is a directory, not a regular file$" "$Q" report "$T/dir"
expect 2 "^ortqual estimate: $T/dir/summary.json: is a directory, not a regular file$" "$Q" estimate "$T/dir" --events 4 --workers 1

# 3. JSON syntax errors in a batch record and in the rest of the document are named at their
#    line in the file (the record scanner said :1 or :2), as Python's json finds them.
for what in record rest; do
    mkdir "$T/$what"
    line=$(/usr/bin/python3 - "$FIX/validate/pass.json" "$T/$what/summary.json" "$what" <<'PYEOF'
import json, sys
src = open(sys.argv[1]).read().split("\n")
key = '"first_call_s":' if sys.argv[3] == "record" else '"verdict":'
i = [k for k, l in enumerate(src) if key in l][1 if sys.argv[3] == "record" else -1]
src[i] = src[i].replace(key, key[:-1] + " ", 1)
open(sys.argv[2], "w").write("\n".join(src))
try:
    json.loads("\n".join(src))
except json.JSONDecodeError as e:
    print(e.lineno)
PYEOF
)
    expect 2 "^ortqual report: $T/$what/summary.json:$line: not valid JSON" "$Q" report "$T/$what"
done

# 4. QA round 7 #5: a configuration that passed is drawn only where its outputs bear it out, as merge
#    judges them: PASSED beside max|error| 5 at atol 1e-5, and a tolerance {"rtol": "x", "atol": null}
#    (drawn as "rtol 0, atol 0"), are refused by plot, report and its JUnit, naming the output, nothing
#    written; the run itself draws as before
"$Q" validate --no-cache --num-events 4 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --threads 1 --no-plots \
    --progress never --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/run" >"$T/run.log" 2>&1 ||
    bad "validate: $(tail -3 "$T/run.log")"
for edit in max_abs tolerance; do
    mkdir "$T/$edit"
    /usr/bin/python3 - "$T/run/summary.json" "$T/$edit/summary.json" "$edit" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
o = [c for c in d["configs"] if c["status"] == "passed" and not c.get("reference")][0]["outputs"][0]
if sys.argv[3] == "max_abs":
    o["max_abs"] = 5.0
else:
    o["tolerance"] = {"rtol": "x", "atol": None}
json.dump(d, open(sys.argv[2], "w"))
PYEOF
    why="has max_abs 5 above atol \+ rtol \* max_abs_ref = [0-9.e-]+"
    [ "$edit" = tolerance ] &&
        why="has tolerance.rtol nan, tolerance.atol nan, where each is a number >= 0 \(nan: not a number in the file\)"
    for cmd in "report $T/$edit --junit $T/$edit/j.xml" "plot $T/$edit --out $T/$edit/plots"; do
        expect 2 "^ortqual ${cmd%% *}: $T/$edit/summary.json: cpu:attention24:fp32 passed, but its output '[a-z]+' $why: refusing to draw a summary that contradicts itself$" \
            "$Q" $cmd
    done
    [ "$(ls "$T/$edit")" = summary.json ] && ok "$edit: nothing written" || bad "$edit: written: $(ls "$T/$edit")"
done
expect 0 "report.html" "$Q" report "$T/run" --junit "$T/run/j.xml"
expect 0 "svg" "$Q" plot "$T/run" --out "$T/run/plots"

report
