/* The gate's rules: what makes a test run green. */
#include "ortqual/gate.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "gate/gate-impl.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

static oq_status reason(oq_gate_judgement *j, oq_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static oq_status reason(oq_gate_judgement *j, oq_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *said = oq_terms_vformat(fmt, ap); /* in the caller's words (oq_set_terms), a log's lines as they are */
    va_end(ap);
    oq_status st = said ? oq_strv_push(&j->reasons, &j->n_reasons, said) : OQ_ERR_NOMEM;
    free(said);
    return st ? oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory") : OQ_OK;
}

static oq_status judge_exit(const oq_gate_outcome *o, oq_gate_judgement *j, oq_err *err)
{
    if (o->timed_out_s > 0)
        return reason(j, err, "timed out after %g s: its process group was killed", o->timed_out_s);
    if (o->signal) return reason(j, err, "killed by signal %d (%s)", o->signal, strsignal(o->signal));
    if (o->exit_code == 5)
        return reason(j, err, "exit status 5: no tests collected (pytest's exit status 5 means "
                              "no tests were collected or all were deselected)");
    if (o->exit_code != 0) return reason(j, err, "exit status %d", o->exit_code);
    return OQ_OK;
}

static oq_status judge_counts(const oq_test_summary *s, oq_gate_judgement *j, oq_err *err)
{
    oq_status st = OQ_OK;
    if (s->failed > 0) st = reason(j, err, "%lld failed", (long long)s->failed);
    if (st == OQ_OK && s->errors > 0) st = reason(j, err, "%lld errors", (long long)s->errors);
    if (st == OQ_OK && s->no_tests_ran) st = reason(j, err, "no tests ran");
    if (st == OQ_OK && s->passed <= 0)
        st = reason(j, err, "zero tests passed (%s summary at line %llu: %s)", oq_runner_name(s->runner),
                    (unsigned long long)s->line, s->text);
    return st;
}

/* What makes the runner that skipped print a reason for each skip, in its own terms. */
static const char *skip_hint(oq_runner r)
{
    switch (r) {
    case OQ_RUNNER_PYTEST: return "for pytest add -rs so each skip prints one";
    case OQ_RUNNER_UNITTEST: return "for unittest add -v so each skip prints one";
    case OQ_RUNNER_CARGO:
        return "for cargo write #[ignore = \"why\"] and run without -q so each ignored test prints one";
    case OQ_RUNNER_CTEST:
        return "ctest names each skipped test after \"The following tests did not run:\": keep that "
               "list in the log";
    case OQ_RUNNER_GTEST:
        return "GoogleTest names each skipped test after its \"[  SKIPPED ] N tests, listed below:\" "
               "line: keep those lines in the log";
    case OQ_RUNNER_CMOCKA:
        return "cmocka names each skipped test after its \"[  SKIPPED ] N test(s), listed below:\" "
               "line: keep those lines in the log";
    case OQ_RUNNER_PLAIN:
        return "a plain summary prints none: a \"SKIP name: reason\" line before it for each skip, "
               "as ortqual conformance prints, gives one";
    case OQ_RUNNER_ORTQUAL:
        return "ortqual's verdict line names no reason per skipped configuration: leave out the "
               "configurations that cannot run here";
    case OQ_RUNNER_NONE: break;
    }
    return "no runner was recognised";
}

/* The --allow-skip expressions, each compiled on its own. */
typedef struct allow_set {
    regex_t *re;
    size_t n;
} allow_set;

static void allow_free(allow_set *a)
{
    for (size_t i = 0; i < a->n; i++) regfree(&a->re[i]);
    free(a->re);
    a->re = NULL;
    a->n = 0;
}

/* Texts each expression is searched in before it is used. One that matches any of them with
 * zero width (the empty string, or an assertion alone in an alternative: 'CUDA|\<', '\b',
 * '^', '$', 'x*' in "a") matches in nearly every reason, so it would allow every skip. */
static const char *const zero_width_probes[] = {"", "a", "word reason",
                                                "test_fp16: requires CUDA (sm_80 or newer), found 0 GPUs"};

/* 1 with the probe and the offset in it where `re` matches with zero length; searched from
 * every offset, since a search reports only its leftmost match. */
static int zero_width_match(const regex_t *re, const char **probe, size_t *at)
{
    for (size_t p = 0; p < sizeof zero_width_probes / sizeof *zero_width_probes; p++) {
        const char *s = zero_width_probes[p];
        for (size_t i = 0; i <= strlen(s); i++) {
            regmatch_t m;
            if (regexec(re, s + i, 1, &m, i ? REG_NOTBOL : 0) == 0 && m.rm_eo == m.rm_so) {
                *probe = s;
                *at = i + (size_t)m.rm_so;
                return 1;
            }
        }
    }
    return 0;
}

static oq_status refuse_zero_width(const char *pat, const char *probe, size_t at, oq_err *err)
{
    if (!*probe)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "allow_skip '%s' matches the empty string, so it would allow every skip (an empty "
                          "alternative, or the whole pattern under '*' or '?'); to allow every skip on purpose, "
                          "give '.'",
                          pat);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "allow_skip '%s' matches with zero width (in \"%s\" at offset %zu), so it would allow every "
                      "skip (an alternative that is only an assertion such as '\\<', '\\b', '^' or '$', or that "
                      "may be empty); to allow every skip on purpose, give '.'",
                      pat, probe, at);
}

/* Each expression alone: joined as text into one ("(a)|(b)"), a stray parenthesis in one closed
 * its group early and the rest matched every reason. Compiled with its match positions, which
 * the zero-width probe reads. */
static oq_status allow_compile(allow_set *a, const char *const *pat, size_t n, oq_err *err)
{
    memset(a, 0, sizeof *a);
    if (n == 0) return OQ_OK;
    if (!(a->re = calloc(n, sizeof *a->re))) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    for (; a->n < n; a->n++) {
        if (!pat[a->n]) {
            oq_status st = oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_gate_judge: allow_skip[%zu] is NULL", a->n);
            allow_free(a);
            return st;
        }
        int rc = regcomp(&a->re[a->n], pat[a->n], REG_EXTENDED);
        if (rc != 0) {
            char msg[256];
            regerror(rc, &a->re[a->n], msg, sizeof msg);
            oq_status st = oq_err_set(err, OQ_ERR_INVALID_ARG, "allow_skip '%s': %s", pat[a->n], msg);
            allow_free(a);
            return st;
        }
        const char *probe;
        size_t at;
        if (zero_width_match(&a->re[a->n], &probe, &at)) {
            oq_status st = refuse_zero_width(pat[a->n], probe, at, err);
            a->n++; /* compiled: freed with the rest */
            allow_free(a);
            return st;
        }
    }
    return OQ_OK;
}

static int allow_match(const allow_set *a, const char *text)
{
    for (size_t i = 0; i < a->n; i++)
        if (regexec(&a->re[i], text, 0, NULL, 0) == 0) return 1;
    return 0;
}

/* Every skip needs a reason one of the expressions matches; skips with no printed reason
 * are never allowed, whatever the regex (it could match the empty string). Each
 * reason starts with `where` ("" for the last summary). */
static oq_status judge_skips(const oq_test_summary *s, const allow_set *allow, const char *where,
                             oq_gate_judgement *j, oq_err *err)
{
    if (s->skipped <= 0) return OQ_OK;
    oq_status st = OQ_OK;
    int64_t explained = 0;
    for (size_t i = 0; i < s->n_skips && st == OQ_OK; i++) {
        const oq_skip_reason *r = &s->skips[i];
        explained = r->count > INT64_MAX - explained ? INT64_MAX : explained + r->count;
        if (!allow->n)
            st = reason(j, err, "%sskipped (no opts.allow_skip given): [%lld] %s", where,
                        (long long)r->count, r->text);
        else if (!allow_match(allow, r->text))
            st = reason(j, err, "%sskip not allowed by opts.allow_skip: [%lld] %s", where,
                        (long long)r->count, r->text);
    }
    if (st == OQ_OK && s->skipped > explained)
        st = reason(j, err,
                    "%s%lld of %lld skips have no visible reason (%s); a skip without a reason "
                    "is never allowed",
                    where, (long long)(s->skipped - explained), (long long)s->skipped,
                    skip_hint(s->runner));
    return st;
}

/* A later summary does not undo an earlier run that ran nothing or skipped what the last
 * summary's rules would not allow (`pytest gpu/ || true; pytest cpu/`: the first may have
 * skipped everything). */
static oq_status judge_earlier(const oq_test_summary *s, const allow_set *allow, oq_gate_judgement *j,
                               oq_err *err)
{
    const char *runner = oq_runner_name(s->runner);
    unsigned long long line = (unsigned long long)s->line;
    oq_status st = OQ_OK;
    if (oq_test_summary_ran_none(s))
        st = reason(j, err, "an earlier run ran no tests (%s summary at line %llu: %s); the last summary "
                            "does not undo it", runner, line, s->text);
    if (st != OQ_OK || s->skipped <= 0) return st;
    char *where;
    if (asprintf(&where, "in an earlier run (%s summary at line %llu: %s): ", runner, line, s->text) < 0)
        return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    st = judge_skips(s, allow, where, j, err);
    free(where);
    return st;
}

static oq_status judge_dispatch(const oq_gate_outcome *o, const oq_dispatch_expect *expect,
                                oq_gate_judgement *j, oq_err *err)
{
    static const oq_dispatch_log empty = {0};
    oq_status st = oq_dispatch_check(expect, o->dispatch ? o->dispatch : &empty, &j->dispatch, err);
    if (st != OQ_OK) return st;
    j->dispatch_checked = 1;
    for (size_t i = 0; i < j->dispatch.n_failures && st == OQ_OK; i++)
        st = reason(j, err, "dispatch: %s", j->dispatch.failures[i]);
    return st;
}

oq_status oq_gate_judge(const oq_gate_outcome *o, const char *const *allow_skip, size_t n_allow_skip,
                        const oq_dispatch_expect *expect, oq_gate_judgement *out, oq_err *err)
{
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    OQ_NEED_N(err, n_allow_skip, allow_skip);
    allow_set allow;
    oq_status st = allow_compile(&allow, allow_skip, n_allow_skip, err);
    if (st != OQ_OK) return st;
    st = judge_exit(o, out, err);
    if (st == OQ_OK && !o->summary) st = reason(out, err, "no test summary found in the log");
    if (st == OQ_OK && o->summary) st = judge_counts(o->summary, out, err);
    if (st == OQ_OK && o->summary) st = judge_skips(o->summary, &allow, "", out, err);
    /* a later summary does not undo an earlier run's failures (the exit status would have said
     * so, had the command not dropped it) */
    if (st == OQ_OK && o->failed_before)
        st = reason(out, err, "an earlier run failed (%s summary at line %llu: %s); the last summary does not undo it",
                    oq_runner_name(o->failed_before->runner), (unsigned long long)o->failed_before->line,
                    o->failed_before->text);
    /* a runner's failure line fails whatever summary was used: a suite whose summary the gate
     * reads no counts from (go test, TAP) or that came before another's, its exit status
     * dropped by `|| true` */
    if (st == OQ_OK && o->failure_line)
        st = reason(out, err, "a failing run at line %llu (%s: %s); no other summary undoes it",
                    (unsigned long long)o->failure_line->line, o->failure_line->runner,
                    o->failure_line->text);
    for (size_t i = 0; st == OQ_OK && o->earlier && i < o->n_earlier; i++)
        st = judge_earlier(&o->earlier[i], &allow, out, err);
    if (st == OQ_OK && expect) st = judge_dispatch(o, expect, out, err);
    allow_free(&allow);
    if (st != OQ_OK) {
        oq_gate_judgement_clear(out);
        return st;
    }
    out->verdict = out->n_reasons ? OQ_GATE_FAIL : OQ_GATE_PASS;
    return OQ_OK;
}

void oq_gate_judgement_clear(oq_gate_judgement *j)
{
    if (!j) return;
    for (size_t i = 0; i < j->n_reasons; i++) free(j->reasons[i]);
    free(j->reasons);
    oq_dispatch_report_clear(&j->dispatch);
    memset(j, 0, sizeof *j);
}
