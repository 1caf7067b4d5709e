#!/bin/sh
# One-off timings of the review mends of issue 17 (docs/results.md). Run from the repository root
# after `make build`, with BASE the commit before the mends (b440f2a) and HEAD's sources as after:
#   sh docs/evidence/review-17/build.sh && (cd build/review-17 && ./run_all.sh)
# finite_time.c and fill_time.c include the file they time (the function is static), once from
# BASE and once from the working tree; parse_time.c times both paths of one library.
set -e
BASE=${BASE:-b440f2a}
R=$(pwd)
O=build/review-17
E=docs/evidence/review-17
mkdir -p "$O"
git show "$BASE:src/validate/signature.c" > "$O/sig_before.c"
cp src/validate/signature.c "$O/sig_after.c"
git show "$BASE:src/bench/fill.c" > "$O/fill_before.c"
cp src/bench/fill.c "$O/fill_after.c"
FL="-O2 -g -DNDEBUG -D_GNU_SOURCE -std=gnu17 -fopenmp -I$R/include -I$R/src -I$R/build/gen -Wno-unused-function"
LIBS="$R/build/libortqual.a -lprotobuf-c -ljansson -lzip -lplplot -lz -lm -ldl -lpthread"
cd "$O"
for v in before after; do
    gcc $FL -I. -DSIG_SRC="\"sig_$v.c\"" -DLABEL="\"$v\"" "$R/$E/finite_time.c" -o finite_$v $LIBS
    gcc $FL -I. -DFILL_SRC="\"fill_$v.c\"" -DLABEL="\"$v\"" "$R/$E/fill_time.c" -o fill_$v $LIBS
done
gcc $FL "$R/$E/parse_time.c" -o parse_time $LIBS
"$R/build/ortqual" export encoder --format attention24 --width 512 --layers 8 --heads 8 --ffn-width 2048 \
    -o big.onnx --force > /dev/null
"$R/build/ortqual" export encoder --format attention24 -o small.onnx --force > /dev/null
cp "$R/$E/run_all.sh" .
