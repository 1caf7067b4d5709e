#!/usr/bin/env bash
# The #include lines of src/, include/ and bench/ against the layer table of docs/design.md
# (tests/arch/layers.py), and proof that the check bites: copies of the tree with one broken
# rule each must fail, naming the file.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
CHECK="$OQ_SOURCE_DIR/tests/arch/layers.py"

out=$($PY "$CHECK" "$OQ_SOURCE_DIR") || fail "layer violations:
$out"

# a copy of what the check reads, with one change; the check must fail and name $2
bites() {
    local what=$1 pattern=$2 edit=$3
    rm -rf "$T/tree" && mkdir -p "$T/tree/docs"
    cp -r "$OQ_SOURCE_DIR/src" "$OQ_SOURCE_DIR/include" "$OQ_SOURCE_DIR/bench" "$T/tree/"
    mkdir "$T/tree/fuzz" && cp "$OQ_SOURCE_DIR"/fuzz/*.[ch] "$T/tree/fuzz/"
    cp "$OQ_SOURCE_DIR/docs/design.md" "$T/tree/docs/"
    (cd "$T/tree" && eval "$edit")
    if out=$($PY "$CHECK" "$T/tree"); then fail "$what: not caught"; fi
    grep -q -- "$pattern" <<<"$out" || fail "$what: message lacks '$pattern': $out"
}
bites "the reference reaching ORT" "src/reference/attention.c:.*'reference' (layer [0-9]*) may not include 'runtime'" \
    'echo "#include \"ortqual/runtime.h\"" >> src/reference/attention.c'
bites "a lower layer including a higher one" "src/tensor/tensor.c:.*may not include 'validate'" \
    'echo "#include \"ortqual/validate.h\"" >> src/tensor/tensor.c'
bites "two folders of one layer" "src/npz/npz.c:.*may not include 'mask'" \
    'echo "#include \"ortqual/mask.h\"" >> src/npz/npz.c'
bites "ORT below the runtime layer" "src/compare/compare.c:.*onnxruntime_c_api.h below the runtime layer" \
    'echo "#include \"onnxruntime_c_api.h\"" >> src/compare/compare.c'
bites "the tool using internals" "src/cli/main.c:.*the tool includes runtime/runtime-impl.h" \
    'echo "#include \"runtime/runtime-impl.h\"" >> src/cli/main.c'
bites "a benchmark including a library source" "bench/overhead.c:.*core/core.c is neither a public header" \
    'echo "#include \"core/core.c\"" >> bench/overhead.c'
bites "a benchmark using the tool's internals" "bench/overhead.c:.*cli/cli-impl.h is neither a public header" \
    'echo "#include \"cli/cli-impl.h\"" >> bench/overhead.c'
bites "a fuzz harness using the tool's headers" "fuzz/fuzz_npy.c:.*cli.h is neither a public header" \
    'echo "#include \"cli.h\"" >> fuzz/fuzz_npy.c'
bites "a fuzz harness including a library source" "fuzz/fuzz_npz.c:.*npz/npz.c is neither a public header" \
    'echo "#include \"npz/npz.c\"" >> fuzz/fuzz_npz.c'
bites "a public header including a higher one" "include/ortqual/tensor.h:.*may not include 'runtime'" \
    'sed -i "s|#include \"ortqual/status.h\"|#include \"ortqual/runtime.h\"|" include/ortqual/tensor.h'
bites "jansson in the public API" "include/ortqual/validate.h:.*<jansson.h> in the public API" \
    'sed -i "0,/#include <stddef.h>/s//#include <jansson.h>\n#include <stddef.h>/" include/ortqual/validate.h'
bites "a folder missing from the table" "src/extra/: not in the layer table" 'mkdir src/extra'
bites "a header without its folder" "include/ortqual/extra.h: no folder src/extra/" 'touch include/ortqual/extra.h'
echo "layers: every #include follows docs/design.md, and each broken rule is caught"
