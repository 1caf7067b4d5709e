#!/usr/bin/env bash
# validate --inputs: a batch saved again is the same events, however its bytes differ (QA round
# 9b, D7). The check compared file bytes: io.npz re-saved with np.savez_compressed (no event
# ids) was judged twice, 2 batches, PASSED. Now its members decide (names, dtypes, shapes,
# values; not the archive's order or compression): refused as a byte-for-byte copy is, one
# line naming both files, exit 2, nothing but error.json. A file that differs in one value is
# another batch.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
FX="$F/torch/mlpf_like"
$PY - "$FX/io.npz" <<'PY' || fail "numpy could not write the copies"
import sys, numpy as np
z = np.load(sys.argv[1]); d = {k: z[k] for k in z}
np.savez_compressed("packed.npz", **d)                         # other bytes, same members
np.savez("reordered.npz", **dict(reversed(list(d.items()))))   # other order, same members
e = dict(d); e["cls"] = d["cls"].copy(); e["cls"][2, 5, 3] = np.nextafter(e["cls"][2, 5, 3], np.float32(1))
np.savez("edited.npz", **e)                                    # one value differs (by one ulp)
PY
run() { $Q validate --model "$FX/mlpf_like_op18.onnx" --configs expected,cpu:model:fp32 --progress never "$@"; }
SAME="have the same content \(.*io.npz and packed.npz, SHA-256 [0-9a-f]{12}\.\.\. of their members' names, dtypes, shapes and values\): its events would count twice$"
one_line 2 "^ortqual validate: --inputs: files 1 and 2 $SAME" run --inputs "$FX/io.npz" packed.npz --outdir o1
[ "$(ls o1)" = "error.json" ] && ok "o1 holds error.json only" || bad "o1 holds $(ls o1 | tr '\n' ' ')"
one_line 2 "^ortqual validate: --inputs: files 2 and 3 have the same content \(reordered.npz and packed.npz" \
    run --inputs edited.npz reordered.npz packed.npz --outdir o2
expect 0 "verdict: PASSED" run --inputs "$FX/io.npz" edited.npz --outdir o3
$PY -c "import json,sys; sys.exit(len(json.load(open('o3/summary.json'))['configs'][1]['batches']) != 2)" &&
    ok "o3: 2 batches judged" || bad "o3: not 2 batches judged"
report
