#!/usr/bin/env bash
# The build's commit in `ortqual --version` and the evidence's tool_version (QA round 9b, minor
# note): 0.1.0 after 34 sessions named no build, so two builds that behave differently recorded
# the same version. Configured from a git checkout: "0.1.0 (commit <git describe --always
# --dirty>)"; from sources without their own .git (a tarball, even one unpacked inside another
# project's checkout): "(unknown commit)".
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
line=$($Q --version | head -1)
if [ -e "$OQ_SOURCE_DIR/.git" ] && command -v git >/dev/null; then
  [[ "$line" =~ ^ortqual\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-z.-]+\)$ ]] && ok "--version: $line" || bad "--version: $line"
else
  [[ "$line" =~ ^ortqual\ [0-9.]+\ \(unknown\ commit\)$ ]] && ok "--version: $line" || bad "--version: $line"
fi
expect 0 "verdict: PASSED" $Q validate --num-events 3 --configs ref:encoder:fp64,cpu:attention24:fp32 --no-cache \
    --progress never --outdir o
tv=$($PY -c "import json; print(json.load(open('o/summary.json'))['evidence']['tool_version'])")
[ "ortqual $tv" = "$line" ] && ok "evidence tool_version: $tv" || bad "evidence tool_version '$tv', --version '$line'"
# ... and every other record of the tool names the same build: report.html's footer, gate's verdict
grep -qF "Written by $line from summary.json" o/report.html && ok "report.html: $line" || bad "report.html's footer: $(grep -o 'Written by[^<]*' o/report.html)"
$Q gate --verdict g.json -- true >/dev/null 2>&1
gv=$($PY -c "import json; print(json.load(open('g.json'))['ortqual_version'])" 2>&1)
[ "ortqual $gv" = "$line" ] && ok "gate's ortqual_version: $gv" || bad "gate's ortqual_version '$gv', --version '$line'"
# the configure step's rule, on sources with and without their own .git
mkdir -p tarball/src && git init -q inside && mkdir -p inside/vendored
for d in tarball inside/vendored; do
  got=$(cmake -DOQ_DIR="$T/$d" -P "$OQ_SOURCE_DIR/cmake/commit.cmake" 2>&1)
  [ "$got" = "unknown commit" ] && ok "$d: unknown commit" || bad "$d: '$got'"
done
git -C inside -c user.name=t -c user.email=t@t commit -q --allow-empty -m x
got=$(cmake -DOQ_DIR="$T/inside" -P "$OQ_SOURCE_DIR/cmake/commit.cmake" 2>&1)
[ "$got" = "commit $(git -C inside rev-parse --short HEAD)" ] && ok "git checkout: $got" || bad "git checkout: '$got'"
# the build's header: rewritten at a build only when the commit moved (no rebuild without one),
# and then at once (no configure step needed to name a new commit)
gen() { cmake -DOQ_DIR="$T/inside" -DOQ_OUT="$T/commit.h" -DOQ_VERSION=9.8.7 -P "$OQ_SOURCE_DIR/cmake/commit.cmake"; }
gen && first=$(stat -c %Y.%y commit.h) && sleep 1.1 && gen
[ "$(stat -c %Y.%y commit.h)" = "$first" ] && ok "header kept when the commit did not move" || bad "header rewritten"
grep -qx "#define ORTQUAL_VERSION_BUILD \"9.8.7 (commit $(git -C inside rev-parse --short HEAD))\"" commit.h \
  && ok "header: $(cat commit.h)" || bad "header: $(cat commit.h)"
git -C inside -c user.name=t -c user.email=t@t commit -q --allow-empty -m y && gen
grep -q "(commit $(git -C inside rev-parse --short HEAD))" commit.h && ok "a new commit named at the next build" \
  || bad "after a new commit: $(cat commit.h)"
report
