#!/usr/bin/env bash
# Every public header answers NULL and zero arguments with a status and a message naming the
# function and the argument, never a crash, its void functions take NULL as free() does, and
# its functions returning a value (a getter, a count, a name) return one (tests/arch/nulls.py
# calls each of their functions so, in a child process); each is called again with its object
# NULL and the other arguments real (a buffer and its size, an index, a name), where a function
# returning a value must give its header's answer for a NULL object, and a status-returning one
# refuses it as "FUNCTION: OBJECT is NULL"; and the check bites: a
# function that dereferences its argument, or another argument before its object, is caught, as
# is a wrong answer for a NULL object.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
GEN="$OQ_SOURCE_DIR/tests/arch/nulls.py"
INC="$OQ_SOURCE_DIR/include"
[ -f "$OQ_LIB" ] || fail "no library at $OQ_LIB"
# status.h's NULL rule covers every public header: a new one is checked as it comes
HEADERS=$(cd "$INC/ortqual" && ls -- *.h)
[ "$(wc -w <<<"$HEADERS")" -ge 30 ] || fail "public headers not found in $INC/ortqual: $HEADERS"
# a sanitized libortqual needs the sanitizer runtimes in the program too
SAN=""
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && SAN="-fsanitize=address,undefined"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0"
# UBSan stopping a call (make test-asan: halt_on_error=1) aborts, a signal as a plain crash is
# (it exited 1, which the probe check did not count as a crash)
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}abort_on_error=1"
export ORT_DISABLE_TELEMETRY=1

# run_check INCLUDE_DIR EXTRA_OBJECT HEADERS...: generate, build and run; its output in $T/out.txt
run_check() {
    local inc=$1 extra=$2
    shift 2
    # shellcheck disable=SC2086
    $PY "$GEN" "$inc" "$@" > "$T/nulls.c" || fail "nulls.py"
    # shellcheck disable=SC2086
    cc -std=c11 -w $SAN -I"$inc" "$T/nulls.c" $extra "$OQ_LIB" -Wl,-rpath,"$(dirname "$OQ_LIB")" \
        -o "$T/nulls" 2> "$T/cc.log" || fail "building the calls: $(head -5 "$T/cc.log")"
    # strings "x" may be taken as paths: whatever a call makes lands in a scratch directory
    rm -rf "$T/scratch" && mkdir "$T/scratch"
    (cd "$T/scratch" && "$T/nulls") > "$T/out.txt" 2>&1
}

# shellcheck disable=SC2086
run_check "$INC" "" $HEADERS || fail "NULL arguments:
$(grep -v ' calls (' "$T/out.txt")"
tail -n 1 "$T/out.txt"
grep -q "CRASH\|WRONG\|NOMSG\|NULLMSG\|BADNAME\|UNNAMED" "$T/out.txt" && fail "problems listed, exit 0: $(cat "$T/out.txt")"

# the check bites: a header of one function that reads its argument, built beside the library
mkdir -p "$T/inc/ortqual"
cp "$INC/ortqual/status.h" "$T/inc/ortqual/"
cat > "$T/inc/ortqual/probe.h" <<'H'
#include "ortqual/status.h"
OQ_API oq_status oq_probe_length(const char *s, size_t *n, oq_err *err);
OQ_API oq_status oq_probe_quiet(const char *s, oq_err *err);
OQ_API oq_status oq_probe_null(const char *s, oq_err *err);
OQ_API oq_status oq_probe_misnamed(const char *text, oq_err *err);
OQ_API void oq_probe_clear(size_t *n);
OQ_API size_t oq_probe_size(const char *s);
OQ_API size_t oq_probe_sum(const unsigned char *v, size_t n);
OQ_API oq_status oq_probe_at(const int *v, size_t i, int *out, oq_err *err);
OQ_API const char *oq_probe_find(const int *v, const char *name);
OQ_API oq_status oq_probe_vague(const int *v, const char *name, oq_err *err);
H
cat > "$T/probe.c" <<'C'
#include <string.h>
#include "ortqual/probe.h"
oq_status oq_probe_length(const char *s, size_t *n, oq_err *err) { (void)err; *n = strlen(s); return OQ_OK; }
oq_status oq_probe_quiet(const char *s, oq_err *err) { (void)s; (void)err; return OQ_ERR_INVALID_ARG; }
oq_status oq_probe_null(const char *s, oq_err *err) { return oq_err_set(err, OQ_ERR_IO, "%s: cannot open", s ? s : "(null)"); }
oq_status oq_probe_misnamed(const char *text, oq_err *err) { (void)text; return oq_err_set(err, OQ_ERR_INVALID_ARG, "probe: text or err is NULL"); }
void oq_probe_clear(size_t *n) { *n = 0; }
size_t oq_probe_size(const char *s) { return strlen(s); }
size_t oq_probe_sum(const unsigned char *v, size_t n) { size_t k = 0; for (size_t i = 0; i < n; i++) k += v[i]; return k; }
oq_status oq_probe_at(const int *v, size_t i, int *out, oq_err *err)
{
    if (!out) return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_probe_at: out is NULL");
    *out = v[i];
    return OQ_OK;
}
const char *oq_probe_find(const int *v, const char *name) { return v ? NULL : name; }
oq_status oq_probe_vague(const int *v, const char *name, oq_err *err)
{
    (void)name;
    return v ? OQ_OK : oq_err_set(err, OQ_ERR_INVALID_ARG, "no object given");
}
C
if run_check "$T/inc" "$T/probe.c" probe.h; then fail "the probes passed: $(cat "$T/out.txt")"; fi
grep -q "CRASH oq_probe_length (probe.h): signal" "$T/out.txt" || fail "a NULL dereference not caught: $(cat "$T/out.txt")"
grep -q "NOMSG oq_probe_quiet" "$T/out.txt" || fail "a status without a message not caught: $(cat "$T/out.txt")"
grep -q "NULLMSG oq_probe_null" "$T/out.txt" || fail "a '(null)' message not caught: $(cat "$T/out.txt")"
grep -q "BADNAME oq_probe_misnamed (probe.h): 'probe: text or err is NULL'" "$T/out.txt" ||
    fail "a NULL not named 'FUNCTION: ARGUMENT is NULL' not caught: $(cat "$T/out.txt")"
grep -q "CRASH oq_probe_clear (probe.h): signal" "$T/out.txt" || fail "a void function reading NULL not caught: $(cat "$T/out.txt")"
grep -q "CRASH oq_probe_size (probe.h): signal" "$T/out.txt" ||
    fail "a function returning a value reading NULL not caught: $(cat "$T/out.txt")"
# all-zero arguments pass these three; with the object NULL and the rest real they do not
grep -q "CRASH oq_probe_sum (probe.h, NULL v): signal" "$T/out.txt" ||
    fail "a function reading its buffer before its NULL check not caught: $(cat "$T/out.txt")"
grep -q "CRASH oq_probe_at (probe.h, NULL v): signal" "$T/out.txt" ||
    fail "a status reading its object after its other checks not caught: $(cat "$T/out.txt")"
grep -q "WRONG oq_probe_find (probe.h, NULL v): not its answer for a NULL object: ret == NULL" "$T/out.txt" ||
    fail "a wrong answer for a NULL object not caught: $(cat "$T/out.txt")"
grep -q "UNNAMED oq_probe_vague (probe.h, NULL v): 'no object given', not 'oq_probe_vague: v is NULL'" "$T/out.txt" ||
    fail "a NULL object refused without its function and name not caught: $(cat "$T/out.txt")"
grep -q "CRASH oq_probe_sum (probe.h)\|CRASH oq_probe_at (probe.h)\|WRONG oq_probe_find (probe.h)" "$T/out.txt" &&
    fail "all-zero arguments blamed: $(cat "$T/out.txt")"
grep -q " calls (5 to functions returning a value, 4 with a NULL object and real arguments), " "$T/out.txt" ||
    fail "the probes not counted: $(cat "$T/out.txt")"
echo "nulls: the check catches a crash (a status, a void function or one returning a value; with all-zero arguments or with the object NULL and the rest real), a wrong answer for a NULL object, a status without a message, a '(null)' in one, a NULL misnamed and a NULL object refused without its name"
