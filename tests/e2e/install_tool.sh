#!/usr/bin/env bash
# A program linked with the installed library runs oq_validate_run with isolated workers and
# self_exe NULL from a process with threads (as a service does): the library finds the tool
# installed with it (<libdir>/../bin/ortqual, also after the prefix moved) and the workers run it;
# with no tool there, or one of another version, the call is refused naming where it looked (not
# <libdir>/ortqual: ONNX Runtime's folder). A program of one thread (argument "one") forks its
# workers, tool or not, ORT_DISABLE_TELEMETRY unset (ORT's telemetry thread made them exec'd).
set -euo pipefail
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$OQ_BINARY_DIR" --prefix "$T/prefix" > "$T/install.log" || fail "cmake --install: $(tail -3 "$T/install.log")"
cat > "$T/run.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <ortqual/validate.h>
static int wake[2];
static void *idle(void *arg) { char c; (void)arg; return read(wake[0], &c, 1) < 0 ? NULL : NULL; }
int main(int argc, char **argv)
{
    pthread_t t;
    if (argc < 2 || pipe(wake) || (argc == 2 && pthread_create(&t, NULL, idle, NULL))) return 2;
    char tool[4096];
    oq_err err = OQ_ERR_INIT;
    if (oq_validate_find_tool(tool, sizeof tool, &err) == OQ_OK) printf("tool: %s\n", tool);
    else printf("no tool: %s\n", err.msg);
    oq_config cfg[2];
    oq_config_parse("ref:encoder:fp64", &cfg[0], NULL);
    oq_config_parse("cpu:attention24:fp32", &cfg[1], NULL);
    oq_validate_opts o;
    oq_validate_opts_default(&o);   /* isolate on, self_exe NULL */
    o.configs = cfg;
    o.n_configs = 2;
    o.repeat = 1;
    o.warmup = 0;
    o.plots = 0;
    o.events.num_events = 8;
    o.events.batch_size = 8;
    o.outdir = argv[1];
    oq_validate_summary *s = NULL;
    oq_status st = oq_validate_run(&o, &s, &err);
    if (st) return printf("refused: %s\n", err.msg), 1;
    printf("verdict: %s\n", oq_run_verdict_name(s->verdict));
    for (size_t i = 0; i < s->n_configs; i++) printf("%s forked=%d\n", s->configs[i].config.name, s->configs[i].worker.forked);
    int rc = s->verdict == OQ_RUN_PASSED ? 0 : 1;
    oq_validate_summary_free(s);
    return rc;
}
C
SAN=""
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && SAN="-fsanitize=address,undefined"
# $ORIGIN-relative rpath: the program still finds the library once the prefix moves
mkdir -p "$T/prefix/app"
gcc -std=c17 $SAN "$T/run.c" -o "$T/prefix/app/run" -I"$T/prefix/include" -L"$T/prefix/lib" -lortqual -pthread \
  -Wl,-rpath,'$ORIGIN/../lib' || fail "building the program"
export ORT_DISABLE_TELEMETRY=1
unset ORTQUAL_ORT_LIB
"$T/prefix/app/run" "$T/out" > "$T/run.out" 2>&1 || fail "run with the installed tool: $(cat "$T/run.out")"
grep -qx "tool: $T/prefix/bin/ortqual" "$T/run.out" || fail "the installed tool not found: $(cat "$T/run.out")"
grep -qx "verdict: passed" "$T/run.out" || fail "no passing run: $(cat "$T/run.out")"
grep -qx "cpu:attention24:fp32 forked=0" "$T/run.out" || fail "the worker was not the tool re-executed: $(cat "$T/run.out")"
# a moved prefix: found from where the library lies now
mv "$T/prefix" "$T/moved"
"$T/moved/app/run" "$T/out2" > "$T/moved.out" 2>&1 || fail "run from a moved prefix: $(cat "$T/moved.out")"
grep -qx "tool: $T/moved/bin/ortqual" "$T/moved.out" || fail "the moved tool not found: $(cat "$T/moved.out")"
# no tool: refused up front, naming where it looked, nothing written
mv "$T/moved/bin/ortqual" "$T/ortqual.away"
if "$T/moved/app/run" "$T/out3" > "$T/none.out" 2>&1; then fail "ran with no tool: $(cat "$T/none.out")"; fi
grep -q "refused: .*self_exe is NULL (no ortqual tool of this library's version .* found: looked at $T/moved/lib/../bin/ortqual (not there)" \
  "$T/none.out" || fail "the refusal does not say where it looked: $(cat "$T/none.out")"
grep -q "isolate = 0" "$T/none.out" || fail "the refusal does not name the way out: $(cat "$T/none.out")"
[ ! -e "$T/out3" ] || fail "a refused run wrote $T/out3"
[ -d "$T/moved/lib/ortqual" ] || fail "no ONNX Runtime folder at $T/moved/lib/ortqual"
if grep -q "$T/moved/lib/ortqual" "$T/none.out"; then fail "ONNX Runtime's folder named as a tool: $(cat "$T/none.out")"; fi
# one thread, no tool, the user's environment: every worker forked, passed
(unset ORT_DISABLE_TELEMETRY; "$T/moved/app/run" "$T/out5" one > "$T/one.out" 2>&1) ||
  fail "one thread, no tool: $(cat "$T/one.out")"
grep -qx "verdict: passed" "$T/one.out" || fail "one thread, no tool: $(cat "$T/one.out")"
[ "$(grep -c ' forked=1$' "$T/one.out")" = 2 ] || fail "one thread: workers not forked: $(cat "$T/one.out")"
# a tool of another version is not taken
printf '#!/bin/sh\necho "ortqual 0.0.0-other"\n' > "$T/moved/bin/ortqual"
chmod +x "$T/moved/bin/ortqual"
if "$T/moved/app/run" "$T/out4" > "$T/other.out" 2>&1; then fail "ran with another version's tool: $(cat "$T/other.out")"; fi
grep -q "ortqual (it calls itself 'ortqual 0.0.0-other', not 'ortqual " "$T/other.out" ||
  fail "another version's tool not named: $(cat "$T/other.out")"
echo "install_tool: the installed (and moved) tool runs the workers of a library caller with threads; none, or another version's, is refused naming where"
