#!/usr/bin/env bash
# validate --cache-dir: a folder that is not the cache's is never taken over (QA round 9b, D6).
# A shared folder (01777, like /tmp, holding a user's files) given as --cache-dir was made 0700
# and filled with entries, with a warning after the fact. Now a world-writable or sticky folder
# is refused whatever it holds, and a folder others can open is made private only when it holds
# nothing but cache entries: else refused, exit 2, one line naming it and why, its mode and
# files as they were. A private folder is used as it is; a folder of entries alone is still
# made private, with the warning.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
e2e_start
run() { $Q validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 3 --progress never "$@"; }
# state DIR: its mode and its names, for "left as it was"
state() { echo "$(stat -c %a "$1") $(ls -A "$1" | tr '\n' ' ')"; }

mkdir -p shared/docs && echo hi >shared/docs/notes.txt && chmod 1777 shared
one_line 2 "^ortqual validate: cache directory $T/shared: world-writable \(01777\), a folder shared with others such as /tmp: its mode is not changed" \
    run --outdir o1 --cache-dir "$T/shared"
[ "$(state shared)" = "1777 docs " ] && ok "shared: mode and files as they were" || bad "shared: $(state shared)"

mkdir sticky && chmod 1755 sticky
one_line 2 "^ortqual validate: cache directory $T/sticky: sticky \(01755\)" run --outdir o2 --cache-dir "$T/sticky"

mkdir project && echo x >project/main.c && chmod 755 project
one_line 2 "^ortqual validate: cache directory $T/project: holds 'main.c', which is no cache entry, and others can open it \(0755\)" \
    run --outdir o3 --cache-dir "$T/project"
[ "$(state project)" = "755 main.c " ] && ok "project: mode and files as they were" || bad "project: $(state project)"

# the cache's own entries (and a killed run's temporary file) are no obstacle: made private, said
expect 0 "verdict: PASSED" run --outdir o4 --cache-dir "$T/c"
entry=$(ls c | head -1)
: >"c/$entry.tmp.12345.AbC123" && chmod 755 c
expect 0 "warning: cache directory $T/c: mode changed from 0755 to 0700" run --outdir o5 --cache-dir "$T/c"
[ "$(stat -c %a c)" = 700 ] && ok "entries alone: made private" || bad "c: $(state c)"

# a private folder is the user's choice: used as it is, whatever else it holds
mkdir mine && echo y >mine/own.txt && chmod 700 mine
expect 0 "verdict: PASSED" run --outdir o6 --cache-dir "$T/mine"
report
