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

report
