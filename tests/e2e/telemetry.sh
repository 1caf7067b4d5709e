#!/usr/bin/env bash
# ONNX Runtime 1.29+ starts Microsoft's 1DS telemetry client at environment creation and leaves
# an empty /tmp/mat-debug-<pid>.log per process. ortqual turns it off (ORT_DISABLE_TELEMETRY=1
# unless the user set it), so a validation (one worker per configuration) leaves none; doctor
# reports the setting and the stale files. Runs in a private mount namespace with its own /tmp,
# so files made by other processes on the machine cannot blur the count.
set -euo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"

if [ "$(id -u)" -eq 0 ]; then ns=(unshare --mount --propagation private)
else ns=(unshare --user --map-root-user --mount --propagation private); fi
"${ns[@]}" true 2>/dev/null || fail "cannot make a private mount namespace with ${ns[*]} (needs root or user namespaces)"

"${ns[@]}" env ORTQUAL="$ORTQUAL" bash -euo pipefail -c '
fail() { echo "FAIL: $*" >&2; exit 1; }
mount -t tmpfs tmpfs /tmp
# the 1DS client writes to $TMPDIR when set (CI runners often set it): point it at the private /tmp
export TMPDIR=/tmp
count() { find /tmp -maxdepth 1 -name "mat-debug-*.log" | wc -l; }
[ "$(count)" -eq 0 ] || fail "private /tmp not empty"
# teeth: with telemetry on, ORT does leave the file, so the checks below can see one
ORT_DISABLE_TELEMETRY=0 "$ORTQUAL" doctor > /tmp/doctor-on.txt || true
grep -q "ON (ORT_DISABLE_TELEMETRY=0)" /tmp/doctor-on.txt || fail "doctor does not say telemetry is on"
bites=1
if [ "$(count)" -eq 0 ]; then
    # Some hosts (seen on the CI runner) never start the 1DS file logger even with telemetry
    # on; there the file checks below cannot fail, so the test ends as SKIPPED, never as passed.
    bites=0
    echo "note: ORT left no mat-debug file in \$TMPDIR=/tmp with telemetry on; doctor said:" >&2
    sed "s/^/  | /" /tmp/doctor-on.txt >&2
else
    grep -Eq "[0-9]+ empty /tmp/mat-debug-\*\.log left" /tmp/doctor-on.txt || fail "doctor does not count stale files"
    find /tmp -maxdepth 1 -name "mat-debug-*.log" -delete
    # doctor looks where the client writes: $TMPDIR
    mkdir /tmp/sub && TMPDIR=/tmp/sub ORT_DISABLE_TELEMETRY=0 "$ORTQUAL" doctor > /tmp/doctor-sub.txt || true
    grep -Eq "1 empty /tmp/sub/mat-debug-\*\.log left" /tmp/doctor-sub.txt || fail "doctor does not look in \$TMPDIR"
    rm -r /tmp/sub
fi
# a validation with three configurations (three worker processes) leaves nothing
env -u ORT_DISABLE_TELEMETRY "$ORTQUAL" validate --outdir /tmp/v --num-events 3 --no-plots \
    --configs ref:encoder:fp64,cpu:decomposed:fp32,cpu:attention24:fp32 > /tmp/v.out 2>&1 ||
    { cat /tmp/v.out; fail "validate failed"; }
[ "$(count)" -eq 0 ] || fail "validate left $(count) mat-debug file(s): $(ls /tmp/mat-debug-*)"
python3 -c "import json,sys; e=json.load(open(\"/tmp/v/summary.json\"))[\"evidence\"][\"ort_environment\"]; sys.exit(e.get(\"ORT_DISABLE_TELEMETRY\") != \"1\")" ||
    fail "summary.json does not record ORT_DISABLE_TELEMETRY=1"
env -u ORT_DISABLE_TELEMETRY "$ORTQUAL" doctor > /tmp/doctor-off.txt
grep -q "^  off (ORT_DISABLE_TELEMETRY=1" /tmp/doctor-off.txt || fail "doctor does not say telemetry is off"
[ "$(count)" -eq 0 ] || fail "doctor left a mat-debug file"
[ "$bites" -eq 1 ] || { echo "SKIPPED: ORT on this host writes no mat-debug file, so none left proves nothing here" >&2; exit 77; }
'
echo "telemetry e2e: no mat-debug files with ortqual's default, doctor reports the setting"
