# Sourced by the end-to-end scripts (tests/e2e/*.sh), after their `set` line:
#   . "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
# Kept in lib/ because every tests/e2e/*.sh is itself a test.

# T: a private temporary directory, removed when the script exits.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# validate's reference cache: the script's own, never the user's (~/.cache)
export XDG_CACHE_HOME="$T/xdg-cache"

# e2e_start: the start of a script that runs the tool from T (its working folder from here on):
# Q the tool ($ORTQUAL, required), PY Debian's python3 (numpy, never a venv's), F the fixtures,
# CONF the ONNX backend's attention node tests ($OQ_CONFORMANCE_DIR, else the copy in the tree).
e2e_start() {
    Q=${ORTQUAL:?}
    PY=/usr/bin/python3
    F="$OQ_SOURCE_DIR/tests/fixtures"
    CONF="${OQ_CONFORMANCE_DIR:-$OQ_SOURCE_DIR/tests/data/onnx-backend/attention}"
    cd "$T" || fail "cd $T"
}

# json_edit SRC DST CODE: DST is the JSON file SRC with python CODE run on it as `s` (a summary
# edited by hand, for the readers that must refuse it)
json_edit() {
    $PY - "$1" "$2" "$3" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
}

# draw_refused DIR PATTERN: report (with --junit DIR/j.xml) and plot (--out DIR/plots) refuse
# DIR/summary.json, exit 2, in one line "ortqual CMD: DIR/summary.json: PATTERN" (grep -E)
draw_refused() {
    local cmd
    for cmd in "report $1 --junit $1/j.xml" "plot $1 --out $1/plots"; do
        # shellcheck disable=SC2086 # the command's words, split on purpose
        one_line 2 "^ortqual ${cmd%% *}: $1/summary.json: $2" "$Q" $cmd
    done
}

# fail MSG: stop the script here (exit 1), for scripts where one failure ends the run.
fail() { echo "FAIL: $*" >&2; exit 1; }

# need_ort130: ORT130, the second ONNX Runtime build (1.30) scripts/deps.sh installs, or stop.
need_ort130() {
    ORT130="$OQ_SOURCE_DIR/third_party/onnxruntime-1.30/lib/libonnxruntime.so.1"
    [ -f "$ORT130" ] || fail "ORT 1.30 missing at $ORT130 (scripts/deps.sh installs it)"
}

# must CODE PATTERN LOG CMD...: for `set -e` scripts that stop at the first failure: CMD exits
# with CODE and PATTERN (grep -E) is in its output, which is kept in LOG.
must() {
    local code=$1 pat=$2 log=$3 rc=0
    shift 3
    "$@" >"$log" 2>&1 || rc=$?
    [ "$rc" -eq "$code" ] || fail "$* -> exit $rc, expected $code: $(tail -5 "$log")"
    grep -qE -- "$pat" "$log" || fail "$* -> output lacks /$pat/: $(tail -5 "$log")"
}

# Scripts that run every case and count the failures use ok/bad/expect, and end with
# `report`, whose status is the script's: 0 only when nothing failed.
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# one_line CODE PATTERN CMD...: CMD exits CODE and says one line (stdout and stderr) matching PATTERN
one_line() {
    local code=$1 pat=$2 out rc
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" = "$code" ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -qE -- "$pat" <<<"$out" &&
        ok "$* -> $code, one line" || bad "$* -> exit $rc, expected $code and one line /$pat/: $out"
}

# expect CODE PATTERN CMD...: exit status CODE and PATTERN in stdout+stderr.
expect() {
    local code=$1 pat=$2
    shift 2
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$code" ]; then
        bad "$* -> exit $rc, expected $code: $out"
    elif ! grep -qE -- "$pat" <<<"$out"; then
        bad "$* -> output lacks /$pat/: $out"
    else
        ok "$* -> $code"
    fi
}

report() {
    echo "$fails failure(s)"
    [ "$fails" -eq 0 ]
}

# group_gone PGID SECONDS: waits, up to SECONDS, until no process of the process group PGID is
# alive (a zombie is dead: it waits only to be reaped, by a PID 1 that may never do it); else
# prints the ones left, kills them and returns 1. A generous bound: a loaded machine is slow to
# end a process, and a short one failed tests there.
group_gone() {
    local end=$((SECONDS + $2)) p left
    for (( ; ; )); do
        left=""
        for p in $(pgrep -g "$1"); do
            [ "$(sed 's/.*) //; s/ .*//' "/proc/$p/stat" 2>/dev/null || echo Z)" = Z ] || left+="${left:+,}$p"
        done
        [ -n "$left" ] || return 0
        [ $SECONDS -lt $end ] || break
        sleep 0.1
    done
    echo "process group $1 still has $left after $2 s: $(ps -o pid=,args= -p "$left" 2>/dev/null | head -3)"
    kill -KILL -- "-$1" 2>/dev/null || true
    return 1
}
