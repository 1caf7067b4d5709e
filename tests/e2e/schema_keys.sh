#!/usr/bin/env bash
# Every key of the files a validation writes for readers is named in docs/summary-schema.md:
# summary.json (a run's, a shard's, a merged one), shards/plan.json and started.json. Keys the
# files carried undocumented (padding.nonfinite, worst.coord, dispatch.enable, plan.json's "run")
# were found by a reader; this names the next one. By word, not by place (a key named anywhere
# in the document passes), except plan.json's top level, held to its own paragraph. The
# evidence blocks are doctor's (docs/doctor.md), and objects keyed by data (ORT_* variables,
# input names, library groups) are not keys.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
V=(validate --no-cache --num-events 4 --batch-size 2 --max-len 8 --repeat 1 --warmup 0 --no-plots --progress never
   --configs ref:encoder:fp64,cpu:attention24:fp32)
must 0 "PASSED" "$T/u.log" $ORTQUAL "${V[@]}" --outdir "$T/U"
must 0 "prepared" "$T/p.log" $ORTQUAL "${V[@]}" --outdir "$T/S" --prepare-shards 2
for i in 0 1; do must 0 "shard $i of 2 done" "$T/s$i.log" $ORTQUAL "${V[@]}" --outdir "$T/S" --shard $i/2; done
must 0 "PASSED" "$T/m.log" $ORTQUAL merge --no-plots "$T/S"
/usr/bin/python3 - "$OQ_SOURCE_DIR/docs/summary-schema.md" "$T" <<'PY' || fail "undocumented keys (above)"
import json, re, sys
doc = open(sys.argv[1]).read()
words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_-]*", doc))
SKIP = {"evidence"}                                          # doctor.md's
MAPS = {"ort_environment", "inputs", "ort_env", "libraries"}  # keyed by data
missing = set()
def walk(j, path):
    if isinstance(j, dict):
        for k, v in j.items():
            if path and path[-1] in MAPS or k in SKIP:
                continue
            if k not in words:
                missing.add(".".join(path + [k]))
            walk(v, path + [k])
    elif isinstance(j, list):
        for v in j:
            walk(v, path)
T = sys.argv[2]
for f in ["U/summary.json", "S/summary.json", "S/shards/0/summary.json", "S/shards/0/started.json",
          "S/shards/plan.json"]:
    walk(json.load(open(f"{T}/{f}")), [f.split("/")[-1]])
# plan.json's top level: in the paragraph that describes it
para = next(p for p in doc.split("\n\n") if "`ortqual.shards/2`" in p)
for k in json.load(open(f"{T}/S/shards/plan.json")):
    if f'"{k}"' not in para:
        missing.add(f"plan.json {k} (its paragraph)")
for m in sorted(missing):
    print("undocumented:", m)
sys.exit(1 if missing else 0)
PY
echo "schema_keys: every key of summary.json, plan.json and started.json is in docs/summary-schema.md"
