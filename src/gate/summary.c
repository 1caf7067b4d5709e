/* Closing summaries of test runners, read line by line from a log. */
#include "ortqual/gate.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core-impl.h"
#include "gate/gate-impl.h"
#include "status/args-impl.h"

struct oq_summary_scanner {
    oq_test_summary last;   /* runner == NONE until a summary is seen */
    oq_test_summary failed_before; /* the first summary a later one replaced that reported a
                                      failure or an error (runner == NONE: none) */
    oq_test_summary *earlier; /* every other one replaced that ran no test or skipped some */
    size_t n_earlier;
    oq_skip_reason *pending; /* pytest -rs reasons since the previous summary */
    size_t n_pending;
    size_t cmocka_skip_list; /* cmocka/GoogleTest skip names still to come after its header */
    size_t cmocka_fail_list; /* and failing test names */
    char **failed_names;     /* those names, every list of the log */
    size_t n_failed_names;
    int ctest_not_run;       /* inside ctest's "The following tests did not run:" list */
    int64_t unittest_ran;    /* -1, or N of unittest's "Ran N tests", whose result line is next */
    oq_failure_line failure; /* the first failure line (text NULL: none yet) */
    oq_dynbuf line;          /* the current line, cleaned */
};

const char *oq_runner_name(oq_runner r)
{
    switch (r) {
    case OQ_RUNNER_PYTEST: return "pytest";
    case OQ_RUNNER_CTEST: return "ctest";
    case OQ_RUNNER_CMOCKA: return "cmocka";
    case OQ_RUNNER_PLAIN: return "plain";
    case OQ_RUNNER_CARGO: return "cargo";
    case OQ_RUNNER_GTEST: return "gtest";
    case OQ_RUNNER_UNITTEST: return "unittest";
    case OQ_RUNNER_ORTQUAL: return "ortqual";
    case OQ_RUNNER_NONE: return "none";
    }
    return "unknown";
}

static void free_reasons(oq_skip_reason *r, size_t n)
{
    for (size_t i = 0; i < n; i++) free(r[i].text);
    free(r);
}

static void summary_clear(oq_test_summary *s)
{
    free(s->text);
    free_reasons(s->skips, s->n_skips);
    memset(s, 0, sizeof *s);
}

oq_status oq_summary_scanner_create(oq_summary_scanner **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = calloc(1, sizeof **out);
    if (!*out) return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
    (*out)->unittest_ran = -1;
    return OQ_OK;
}

void oq_summary_scanner_free(oq_summary_scanner *s)
{
    if (!s) return;
    summary_clear(&s->last);
    summary_clear(&s->failed_before);
    for (size_t i = 0; i < s->n_earlier; i++) summary_clear(&s->earlier[i]);
    free(s->earlier);
    free_reasons(s->pending, s->n_pending);
    free(s->failure.text);
    for (size_t i = 0; i < s->n_failed_names; i++) free(s->failed_names[i]);
    free(s->failed_names);
    oq_dynbuf_clear(&s->line);
    free(s);
}

const oq_test_summary *oq_summary_scanner_last(const oq_summary_scanner *s)
{
    return !s || s->last.runner == OQ_RUNNER_NONE ? NULL : &s->last;
}

const oq_test_summary *oq_summary_scanner_failed_before(const oq_summary_scanner *s)
{
    return !s || s->failed_before.runner == OQ_RUNNER_NONE ? NULL : &s->failed_before;
}

const oq_failure_line *oq_summary_scanner_failure_line(const oq_summary_scanner *s)
{
    return s && s->failure.text ? &s->failure : NULL;
}

size_t oq_summary_scanner_earlier(const oq_summary_scanner *s, const oq_test_summary **list)
{
    if (list) *list = s ? s->earlier : NULL;
    return s ? s->n_earlier : 0;
}

int oq_test_summary_ran_none(const oq_test_summary *t)
{
    return t->no_tests_ran ||
           (t->passed <= 0 && t->failed <= 0 && t->errors <= 0 && t->xfailed <= 0 && t->xpassed <= 0);
}

static oq_status add_reason(oq_skip_reason **list, size_t *n, const char *text, int64_t count,
                            oq_err *err)
{
    char *copy = strdup(text);
    oq_skip_reason *r = copy ? OQ_PUSH(*list, *n) : NULL;
    if (!r) {
        free(copy);
        return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
    }
    r->text = copy;
    r->count = count;
    return OQ_OK;
}

/* Strip colour codes, the terminator and surrounding blanks into s->line. */
static oq_status clean_line(oq_summary_scanner *s, const char *line, size_t n, oq_err *err)
{
    oq_dynbuf_reset(&s->line);
    char *buf = oq_dynbuf_space(&s->line, n);
    if (!buf) return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (line[i] == 0x1b && i + 1 < n && line[i + 1] == '[') {
            i += 2;
            while (i < n && !((unsigned char)line[i] >= 0x40 && (unsigned char)line[i] <= 0x7e)) i++;
            continue;
        }
        buf[j++] = line[i];
    }
    while (j > 0 && isspace((unsigned char)buf[j - 1])) j--;
    oq_dynbuf_added(&s->line, j);
    return OQ_OK;
}

static const char *skip_blanks(const char *p)
{
    while (isspace((unsigned char)*p)) p++;
    return p;
}

static int starts_with(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* "<digits>" at p: the value and the end, or NULL (also above INT64_MAX: no count). */
static const char *number(const char *p, int64_t *v)
{
    if (!isdigit((unsigned char)*p)) return NULL;
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (errno == ERANGE) return NULL;
    *v = x;
    return end;
}

#define AT(field) offsetof(oq_test_summary, field)

static int64_t *count_at(oq_test_summary *t, size_t at)
{
    return (int64_t *)((char *)t + at);
}

/* A count and where it goes in oq_test_summary (AT(field)). */
typedef struct field_count {
    size_t at;
    long long v;
} field_count;

/* Make t runner r's summary with these counts, the others zero. A negative count makes the
 * line no summary: no runner counts below zero. */
static int summary_of(oq_test_summary *t, oq_runner r, const field_count *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].v < 0) return 0;
    memset(t, 0, sizeof *t);
    t->runner = r;
    for (size_t i = 0; i < n; i++) *count_at(t, c[i].at) = c[i].v;
    return 1;
}

#define SUMMARY_OF(t, r, ...) \
    summary_of(t, r, (const field_count[]){__VA_ARGS__}, \
               sizeof((const field_count[]){__VA_ARGS__}) / sizeof(field_count))

/* A counter in a runner's own words ("errors", "skipped=") and where it goes. */
typedef struct count_word {
    const char *w;
    size_t at;
} count_word;

/* Store v in the counter `word` (n bytes) names in `words`, each counter once per summary:
 * an unknown word or a counter seen again (`seen` holds one bit per counter) makes the line
 * no summary, and no count is ever added to another. */
static int put_count(oq_test_summary *t, const count_word *words, size_t n_words, unsigned *seen,
                     const char *word, size_t n, int64_t v)
{
    for (size_t i = 0; i < n_words; i++)
        if (strlen(words[i].w) == n && !strncmp(words[i].w, word, n)) {
            unsigned bit = 1u << (words[i].at / sizeof(int64_t));
            if (*seen & bit) return 0;
            *seen |= bit;
            *count_at(t, words[i].at) = v;
            return 1;
        }
    return 0;
}

static const count_word pytest_words[] = {
    {"passed", AT(passed)},   {"failed", AT(failed)},         {"skipped", AT(skipped)},
    {"error", AT(errors)},    {"errors", AT(errors)},         {"xfailed", AT(xfailed)},
    {"xpassed", AT(xpassed)}, {"deselected", AT(deselected)}, {"warning", AT(warnings)},
    {"warnings", AT(warnings)},
};

static const count_word unittest_words[] = {
    {"failures=", AT(failed)},
    {"errors=", AT(errors)},
    {"skipped=", AT(skipped)},
    {"expected failures=", AT(xfailed)},
    {"unexpected successes=", AT(xpassed)},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* " in 0.12s", " in 0.12s (0:00:00)" or " in 0.12 seconds" ending the line:
 * where it starts, or NULL. */
static const char *pytest_duration(const char *body, const char *end)
{
    const char *in = NULL;
    for (const char *p = body; (p = strstr(p, " in ")) && p < end; p++) in = p;
    if (!in) return NULL;
    const char *p = in + 4;
    if (!isdigit((unsigned char)*p)) return NULL;
    while (isdigit((unsigned char)*p) || *p == '.') p++;
    if (!strncmp(p, " seconds", 8))
        p += 8;
    else if (*p == 's')
        p++;
    else
        return NULL;
    if (*p == ' ' && p[1] == '(') {
        p += 2;
        while (isdigit((unsigned char)*p) || *p == ':') p++;
        if (*p++ != ')') return NULL;
    }
    return p == end ? in : NULL;
}

/* "===== 3 passed, 1 skipped in 0.12s =====" (the '=' padding is optional). Every
 * item must be one pytest prints: an unknown word makes it not a summary. */
static int parse_pytest(const char *line, oq_test_summary *t)
{
    const char *b = line, *e = line + strlen(line);
    while (*b == '=' || *b == ' ') b++;
    while (e > b && (e[-1] == '=' || e[-1] == ' ')) e--;
    const char *in = pytest_duration(b, e);
    if (!in || in == b) return 0;
    memset(t, 0, sizeof *t);
    unsigned seen = 0;
    for (const char *p = b; p < in;) {
        if (!strncmp(p, "no tests ran", 12)) {
            t->no_tests_ran = 1;
            p += 12;
        } else {
            int64_t v;
            const char *w = number(p, &v);
            if (!w || *w != ' ') return 0;
            const char *we = ++w;
            while (we < in && isalpha((unsigned char)*we)) we++;
            if (!put_count(t, pytest_words, N_OF(pytest_words), &seen, w, (size_t)(we - w), v)) return 0;
            p = we;
        }
        if (p == in) break;
        if (strncmp(p, ", ", 2)) return 0;
        p += 2;
    }
    t->runner = OQ_RUNNER_PYTEST;
    return 1;
}

/* "75% tests passed, 1 tests failed out of 4" */
static int parse_ctest(const char *line, oq_test_summary *t)
{
    int pct, used = -1;
    long long failed, total;
    if (sscanf(line, "%d%% tests passed, %lld tests failed out of %lld%n", &pct, &failed, &total,
               &used) != 3 || used < 0 || line[used] != '\0' || failed < 0 || failed > total)
        return 0;
    /* ctest counts skipped tests as passed; see the list */
    return SUMMARY_OF(t, OQ_RUNNER_CTEST, {AT(failed), failed}, {AT(passed), total - failed});
}

/* "No tests were found!!!": ctest ran nothing (and exits 0 unless --no-tests=error). */
static int parse_ctest_none(const char *line, oq_test_summary *t)
{
    if (strncmp(line, "No tests were found", 19) || line[19 + strspn(line + 19, "!")] != '\0') return 0;
    return summary_of(t, OQ_RUNNER_CTEST, NULL, 0);
}

/* cmocka's "[  PASSED  ] 5 test(s)." or GoogleTest's "[  PASSED  ] 5 tests." ("1 test.") */
static int parse_cmocka(const char *line, oq_test_summary *t)
{
    int64_t passed;
    const char *e = starts_with(line, "[  PASSED  ] ") ? number(line + 13, &passed) : NULL;
    oq_runner r = !e                      ? OQ_RUNNER_NONE
                  : !strcmp(e, " test(s).") ? OQ_RUNNER_CMOCKA
                  : !strcmp(e, passed == 1 ? " test." : " tests.") ? OQ_RUNNER_GTEST
                                                                 : OQ_RUNNER_NONE;
    return r != OQ_RUNNER_NONE && SUMMARY_OF(t, r, {AT(passed), passed});
}

/* cargo's "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out;
 * finished in 0.00s" (older: no "finished"). A test binary that ran nothing (the doc-tests of a
 * crate without any, every binary a name filter matched nothing in) prints one with zero
 * passed, failed and ignored: it is no summary, or the last binary's would hide the others. */
static int parse_cargo(const char *line, oq_test_summary *t)
{
    char word[8];
    long long passed, failed, ignored, measured, filtered;
    int used = -1;
    if (sscanf(line, "test result: %7[^.]. %lld passed; %lld failed; %lld ignored; %lld measured; "
                     "%lld filtered out%n",
               word, &passed, &failed, &ignored, &measured, &filtered, &used) != 6 ||
        used < 0 || (line[used] && !starts_with(line + used, "; finished in ")) ||
        (strcmp(word, "ok") && strcmp(word, "FAILED")) || (passed == 0 && failed == 0 && ignored == 0))
        return 0;
    return SUMMARY_OF(t, OQ_RUNNER_CARGO, {AT(passed), passed}, {AT(failed), failed},
                      {AT(skipped), ignored}, {AT(deselected), filtered});
}

/* unittest's counts after its result word: "" or " (failures=1, errors=2, skipped=3,
 * expected failures=1, unexpected successes=1)". An unknown item or one given twice makes it
 * no summary. */
static int unittest_counts(const char *p, oq_test_summary *t)
{
    if (!*p) return 1;
    if (!starts_with(p, " (")) return 0;
    unsigned seen = 0;
    for (p += 2;;) {
        const char *eq = strchr(p, '=');
        int64_t v;
        const char *e = eq ? number(eq + 1, &v) : NULL;
        if (!e || !put_count(t, unittest_words, N_OF(unittest_words), &seen, p, (size_t)(eq + 1 - p), v))
            return 0;
        if (!strcmp(e, ")")) return 1;
        if (!starts_with(e, ", ")) return 0;
        p = e + 2;
    }
}

/* unittest's result line after "Ran N tests in 0.01s": "OK", "FAILED (failures=1)",
 * "NO TESTS RAN" (Python 3.12), each optionally with counts. */
static int parse_unittest(const char *line, int64_t ran, oq_test_summary *t)
{
    const char *words[] = {"OK", "FAILED", "NO TESTS RAN"};
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < N_OF(words); i++)
        if (starts_with(line, words[i]) && unittest_counts(line + strlen(words[i]), t)) {
            const int64_t taken[] = {t->failed, t->errors, t->skipped, t->xfailed, t->xpassed};
            for (size_t k = 0; k < N_OF(taken); k++) {
                if (taken[k] > ran) return 0; /* more than ran: no summary (nor an overflow) */
                ran -= taken[k];
            }
            t->runner = OQ_RUNNER_UNITTEST;
            t->passed = ran;
            return 1;
        }
    return 0;
}

/* "Ran 4 tests in 0.012s" ("Ran 1 test in"): N, or -1 */
static int64_t unittest_ran(const char *line)
{
    int64_t n;
    const char *e = starts_with(line, "Ran ") ? number(line + 4, &n) : NULL;
    if (!e || !(starts_with(e, " tests in ") || starts_with(e, " test in "))) return -1;
    return ends_with(e, "s") ? n : -1;
}

/* ortqual's verdict line (the tool's validate, replay and merge): "verdict: WORD (P passed, F
 * failed, S skipped[, E runtime error(s)][, N not run]" then ";" or ")". *passed_word: WORD is
 * PASSED (else FAILED, ERROR, NOT TESTED or INTERRUPTED); the configurations a run could not give a
 * result for (runtime errors, not run) are its errors. */
static int ortqual_verdict(const char *line, oq_test_summary *t, int *passed_word)
{
    static const char *const words[] = {"PASSED", "FAILED", "ERROR", "NOT TESTED", "INTERRUPTED"};
    if (!starts_with(line, "verdict: ")) return 0;
    const char *p = line + 9;
    size_t w = 0;
    while (w < N_OF(words) && !(starts_with(p, words[w]) && starts_with(p + strlen(words[w]), " ("))) w++;
    if (w == N_OF(words)) return 0;
    p += strlen(words[w]) + 2;
    long long passed, failed, skipped, errors = 0, not_run = 0;
    int used = -1;
    if (!isdigit((unsigned char)*p) ||
        sscanf(p, "%lld passed, %lld failed, %lld skipped%n", &passed, &failed, &skipped, &used) != 3 || used < 0)
        return 0;
    p += used;
    int k = -1;
    if (sscanf(p, ", %lld runtime error%n", &errors, &k) == 1 && k > 0) p += k + (p[k] == 's');
    k = -1;
    if (sscanf(p, ", %lld not run%n", &not_run, &k) == 1 && k > 0) p += k;
    if (*p != ';' && *p != ')') return 0;
    *passed_word = w == 0;
    return SUMMARY_OF(t, OQ_RUNNER_ORTQUAL, {AT(passed), passed}, {AT(failed), failed}, {AT(skipped), skipped},
                      {AT(errors), errors + not_run});
}

static int parse_ortqual(const char *line, oq_test_summary *t)
{
    int passed_word;
    return ortqual_verdict(line, t, &passed_word);
}

/* An ortqual refusal: "ortqual CMD: MESSAGE" from a command that ends in a verdict line, the
 * message no note, warning or default. A run that goes on to its verdict marks every message so
 * ("note: ", "WARNING: ", "(... default here)", "): compared anyway"); an unmarked one is a
 * refusal (exit 2 or 3, no verdict) or a merge's shard problem after its FAILED verdict. Or
 * "ortqual: MESSAGE", naming no command: said outside any command's own checks (an unknown
 * command or option, a plan unreadable after --prepare-shards, out of memory, stdout's write
 * failing, an internal error), never a note. Read from the line alone, as the other runners'
 * failure lines: the next verdict line may be another run's (a script's second validate), so it
 * undoes nothing. */
static int ortqual_refusal(const char *line)
{
    static const char *const cmds[] = {": ", " validate: ", " replay: ", " merge: ", " bench: "};
    if (!starts_with(line, "ortqual")) return 0;
    for (size_t i = 0; i < N_OF(cmds); i++) {
        if (!starts_with(line + 7, cmds[i])) continue;
        const char *msg = line + 7 + strlen(cmds[i]);
        return !(starts_with(msg, "note: ") || starts_with(msg, "WARNING: ") || strstr(msg, "default here") ||
                 strstr(msg, "): compared anyway"));
    }
    return 0;
}

/* The runner whose failing run `line` (from its first column) reports, or NULL. */
static const char *failure_runner(const char *line)
{
    oq_test_summary t;
    int passed_word;
    if (ortqual_verdict(line, &t, &passed_word) && !passed_word) return "ortqual";
    if (starts_with(line, "test result: FAILED.")) return "cargo";
    /* a test binary that crashed prints no "test result:" line, only this */
    if (starts_with(line, "error: test failed, to rerun pass ")) return "cargo";
    if (starts_with(line, "Fatal Python error: ")) return "python";
    if (starts_with(line, "INTERNALERROR> ")) return "pytest";
    if (ortqual_refusal(line)) return "ortqual";
    if (starts_with(line, "--- FAIL: ") || starts_with(line, "FAIL\t") || !strcmp(line, "FAIL"))
        return "go";
    if (starts_with(line, "Bail out!")) return "tap";
    if (starts_with(line, "not ok") && (!line[6] || line[6] == ' ')) {
        const char *d = strchr(line, '#'); /* "not ok 3 - x # TODO later": expected to fail */
        return d && !strncasecmp(skip_blanks(d + 1), "todo", 4) ? NULL : "tap";
    }
    if (starts_with(line, "FAILED (") && unittest_counts(line + 6, &t)) return "unittest";
    if (starts_with(line, "[  FAILED  ] ")) return "gtest/cmocka";
    return NULL;
}

static oq_status set_failure(oq_failure_line *f, const char *runner, const char *text, uint64_t line_no,
                             oq_err *err)
{
    free(f->text);
    if (!(f->text = strdup(text))) return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
    f->runner = runner;
    f->line = line_no;
    return OQ_OK;
}

/* Keep the first failure line. */
static oq_status note_failure(oq_summary_scanner *s, uint64_t line_no, oq_err *err)
{
    const char *runner = s->failure.text ? NULL : failure_runner(s->line.buf);
    return runner ? set_failure(&s->failure, runner, s->line.buf, line_no, err) : OQ_OK;
}

/* A skip reason printed before the summary: cargo's "test name ... ignored, why" and
 * unittest -v's "test_x (m.T.test_x) ... skipped 'why'", as "name: why". */
static oq_status other_skip(oq_summary_scanner *s, const char *line, oq_err *err)
{
    const char *sep = strstr(line, " ... "), *why = NULL;
    if (!sep) return OQ_OK;
    size_t name_n = (size_t)(sep - line);
    if (starts_with(line, "test ") && starts_with(sep + 5, "ignored, ")) {
        line += 5;
        name_n -= 5;
        why = sep + 14;
    } else if (starts_with(sep + 5, "skipped '") && ends_with(sep, "'") && strlen(sep) > 15) {
        why = sep + 14;
    }
    if (!why) return OQ_OK;
    size_t why_n = strlen(why) - (why[-1] == '\'');
    char *text;
    if (asprintf(&text, "%.*s: %.*s", (int)name_n, line, (int)why_n, why) < 0)
        return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
    oq_status st = add_reason(&s->pending, &s->n_pending, text, 1, err);
    free(text);
    return st;
}

/* ortqual conformance's " (U unsupported)" after its skips, U of them: the end of the line. */
static int unsupported_tail(const char *p, long long skipped)
{
    long long u;
    int used = -1;
    return !*p || (sscanf(p, " (%lld unsupported)%n", &u, &used) == 1 && used > 0 && !p[used] && u >= 0 && u <= skipped);
}

/* "[word:] N passed, N failed[, N skipped[ (U unsupported)]]" */
static int parse_plain(const char *line, oq_test_summary *t)
{
    const char *p = line;
    const char *w = p;
    while (isalnum((unsigned char)*w) || *w == '_' || *w == '-') w++;
    if (w > p && *w == ':') p = skip_blanks(w + 1);
    long long passed, failed, skipped = 0;
    int used = -1, used2 = -1;
    if (!isdigit((unsigned char)*p) ||
        sscanf(p, "%lld passed, %lld failed%n", &passed, &failed, &used) != 2 || used < 0)
        return 0;
    if (p[used] && (sscanf(p + used, ", %lld skipped%n", &skipped, &used2) != 1 || used2 < 0 ||
                    !unsupported_tail(p + used + used2, skipped)))
        return 0;
    return SUMMARY_OF(t, OQ_RUNNER_PLAIN, {AT(passed), passed}, {AT(failed), failed},
                      {AT(skipped), skipped});
}

/* The last summary, about to be replaced, kept where it still says something:
 * `pytest a || true; pytest b` ends with b's summary, and a's failures, a run of nothing or
 * a's skips must not go unseen. The first one with a failure or an error is failed_before;
 * every other one that ran no test or skipped some is kept for the judge (which alone knows
 * --allow-skip). */
static oq_status keep_replaced(oq_summary_scanner *s, oq_err *err)
{
    oq_test_summary *l = &s->last, *keep;
    if (l->runner == OQ_RUNNER_NONE) return OQ_OK;
    if (s->failed_before.runner == OQ_RUNNER_NONE && (l->failed > 0 || l->errors > 0))
        keep = &s->failed_before;
    else if (oq_test_summary_ran_none(l) || l->skipped > 0)
        keep = OQ_PUSH(s->earlier, s->n_earlier);
    else
        return OQ_OK;
    if (!keep) return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
    *keep = *l;
    memset(l, 0, sizeof *l);
    return OQ_OK;
}

/* A new summary replaces the last one and takes the pending pytest reasons. */
static oq_status take_summary(oq_summary_scanner *s, oq_test_summary *t, uint64_t line_no,
                              oq_err *err)
{
    oq_status st = keep_replaced(s, err);
    if (st != OQ_OK) return st;
    t->text = strdup(s->line.buf);
    if (!t->text) return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
    t->line = line_no;
    t->skips = s->pending;
    t->n_skips = s->n_pending;
    s->pending = NULL;
    s->n_pending = 0;
    summary_clear(&s->last);
    s->last = *t;
    s->cmocka_skip_list = 0;
    s->cmocka_fail_list = 0;
    s->ctest_not_run = 0;
    s->unittest_ran = -1;
    return OQ_OK;
}

size_t oq_summary_scanner_failed_names(const oq_summary_scanner *s, char *const **names)
{
    *names = s->failed_names;
    return s->n_failed_names;
}

/* cmocka's "[  FAILED  ] [group: ]N test(s), listed below:" and the SKIPPED one,
 * printed after its PASSED line; GoogleTest's "N tests, listed below:" ("1 test, "). */
static int cmocka_count(const char *line, const char *tag, oq_runner r, int64_t *v)
{
    size_t n = strlen(tag);
    if (strncmp(line, tag, n)) return 0;
    const char *p = line + n, *e = number(p, v), *colon;
    if (r == OQ_RUNNER_GTEST)
        return e && !strcmp(e, *v == 1 ? " test, listed below:" : " tests, listed below:");
    if (!e && (colon = strstr(p, ": "))) e = number(colon + 2, v); /* newer: "group: N" */
    return e && !strcmp(e, " test(s), listed below:");
}

/* GoogleTest's "  YOU HAVE 3 DISABLED TESTS" ("1 DISABLED TEST") after its summary: tests it
 * did not run, skips as ctest's "(Disabled)" are, or a DISABLED_ prefix hides a test as green. */
static int gtest_disabled(const char *line, int64_t *v)
{
    const char *p = starts_with(line, "YOU HAVE ") ? number(line + 9, v) : NULL;
    return p && *v > 0 && !strcmp(p, *v == 1 ? " DISABLED TEST" : " DISABLED TESTS");
}

/* Lines that belong to the last summary: cmocka's, GoogleTest's and ctest's lists. */
static oq_status follow_up(oq_summary_scanner *s, int *used, oq_err *err)
{
    oq_test_summary *t = &s->last;
    const char *line = s->line.buf;
    int64_t v;
    *used = 1;
    if (t->runner == OQ_RUNNER_CMOCKA || t->runner == OQ_RUNNER_GTEST) {
        if (s->cmocka_skip_list > 0 && !strncmp(line, "[  SKIPPED ] ", 13)) {
            s->cmocka_skip_list--;
            return add_reason(&t->skips, &t->n_skips, line + 13, 1, err);
        }
        if (cmocka_count(line, "[  FAILED  ] ", t->runner, &v)) {
            t->failed = v;
            s->cmocka_fail_list = (size_t)v;
            return OQ_OK;
        }
        if (s->cmocka_fail_list > 0 && !strncmp(line, "[  FAILED  ] ", 13)) {
            s->cmocka_fail_list--;
            if (oq_strv_push(&s->failed_names, &s->n_failed_names, line + 13))
                return oq_err_set(err, OQ_ERR_NOMEM, "summary scanner: out of memory");
            return OQ_OK;
        }
        if (cmocka_count(line, "[  SKIPPED ] ", t->runner, &v)) {
            t->skipped = v;
            s->cmocka_skip_list = (size_t)v;
            return OQ_OK;
        }
        if (t->runner == OQ_RUNNER_GTEST && gtest_disabled(skip_blanks(line), &v)) {
            t->skipped = t->skipped > INT64_MAX - v ? INT64_MAX : t->skipped + v;
            return add_reason(&t->skips, &t->n_skips, skip_blanks(line), v, err);
        }
    }
    if (t->runner == OQ_RUNNER_CTEST) {
        if (!strcmp(line, "The following tests did not run:")) {
            s->ctest_not_run = 1;
            return OQ_OK;
        }
        /* "\t  3 - name (Skipped)" or "(Disabled)". ctest's "out of N" counts a skipped
         * test (as passed) but never a disabled one: only a skip comes off the passed. */
        const char *p = skip_blanks(line), *dash;
        if (s->ctest_not_run && number(p, &v) && (dash = strstr(p, " - "))) {
            int skipped = ends_with(dash, " (Skipped)");
            if (skipped || ends_with(dash, " (Disabled)")) {
                t->skipped++;
                t->passed -= skipped;
                return add_reason(&t->skips, &t->n_skips, dash + 3, 1, err);
            }
        }
        s->ctest_not_run = 0;
    }
    *used = 0;
    return OQ_OK;
}

/* pytest -rs: "SKIPPED [2] test_x.py:12: reason" */
static int pytest_skip(const char *line, int64_t *count, const char **reason)
{
    const char *p = skip_blanks(line);
    if (strncmp(p, "SKIPPED [", 9)) return 0;
    const char *e = number(p + 9, count);
    if (!e || strncmp(e, "] ", 2)) return 0;
    *reason = e + 2;
    return 1;
}

/* ortqual conformance: "SKIP name: reason" and "UNSUPPORTED name: reason" (counted among its
 * skips) before its plain summary, from the first column; the reason is "name: reason". */
static int conformance_skip(const char *line, const char **reason)
{
    const char *p = starts_with(line, "SKIP ") ? line + 5 : starts_with(line, "UNSUPPORTED ") ? line + 12 : NULL;
    const char *colon = p ? strstr(p, ": ") : NULL;
    if (!colon || colon == p || !colon[2]) return 0;
    *reason = p;
    return 1;
}

/* A summary read from its line alone (unittest's needs the line before). */
static int closing_summary(const char *line, oq_test_summary *t)
{
    static int (*const parsers[])(const char *, oq_test_summary *) = {
        parse_pytest, parse_ctest, parse_ctest_none, parse_cmocka, parse_cargo, parse_plain, parse_ortqual,
    };
    for (size_t i = 0; i < N_OF(parsers); i++)
        if (parsers[i](line, t)) return 1;
    return 0;
}

/* One line with no NUL or carriage return in it. */
static oq_status scan_line(oq_summary_scanner *s, const char *line, size_t n, uint64_t line_no,
                           oq_err *err)
{
    oq_status st = clean_line(s, line, n, err);
    if (st == OQ_OK) st = note_failure(s, line_no, err);
    if (st != OQ_OK) return st;
    int used;
    st = follow_up(s, &used, err);
    if (st != OQ_OK || used) return st;
    int64_t count, ran = s->unittest_ran;
    const char *reason;
    oq_test_summary t;
    if (ran >= 0 && s->line.len > 0) { /* unittest: the result line follows "Ran N tests" */
        s->unittest_ran = -1;
        if (parse_unittest(s->line.buf, ran, &t)) return take_summary(s, &t, line_no, err);
    }
    if ((count = unittest_ran(s->line.buf)) >= 0) {
        s->unittest_ran = count;
        return OQ_OK;
    }
    if (pytest_skip(s->line.buf, &count, &reason))
        return add_reason(&s->pending, &s->n_pending, reason, count, err);
    if (conformance_skip(s->line.buf, &reason)) return add_reason(&s->pending, &s->n_pending, reason, 1, err);
    if (closing_summary(skip_blanks(s->line.buf), &t)) return take_summary(s, &t, line_no, err);
    return other_skip(s, s->line.buf, err);
}

/* A NUL or a carriage return ends a line as a newline does, keeping the line's number (the
 * log's lines are its newlines). Runners never print a NUL: it comes from a test's raw bytes, and
 * what follows it is text of its own (a terminal shows nothing for the NUL). A carriage return
 * redraws the line: a progress line overwritten by pytest's summary ("..F\r=== 1 failed ..."), or
 * half of a Windows-built runner's "\r\n". As ordinary bytes either glued the runner's next text
 * onto the noise before it, where no summary or failure line is recognised: a failing summary
 * went unseen and the gate passed. */
static int line_break(char c)
{
    return c == '\0' || c == '\r';
}

/* An empty piece beside a carriage return is no line ("\r..." at the start, "\r\r"): only the
 * line's own blank counts, which ends ctest's skip list. */
static int no_line(const char *line, size_t start, size_t end, size_t n)
{
    return start == end && ((end < n && line[end] == '\r') || (start > 0 && line[start - 1] == '\r'));
}

oq_status oq_summary_scanner_line(oq_summary_scanner *s, const char *line, size_t n,
                                  uint64_t line_no, oq_err *err)
{
    OQ_NEED(err, s);
    OQ_NEED_N(err, n, line);
    if (n > 0 && line[n - 1] == '\n') n--;
    if (n > 0 && line[n - 1] == '\r') n--; /* "\r\n" is one terminator */
    oq_status st = OQ_OK;
    for (size_t start = 0, end = 0; st == OQ_OK && end <= n; start = ++end) {
        while (end < n && !line_break(line[end])) end++;
        if (!no_line(line, start, end, n)) st = scan_line(s, line + start, end - start, line_no, err);
    }
    return st;
}

oq_status oq_summary_scan_text(const char *text, size_t n, oq_summary_scanner **out,
                               oq_err *err)
{
    OQ_NEED_N(err, n, text);
    OQ_NEED(err, out);
    oq_status st = oq_summary_scanner_create(out, err);
    uint64_t line_no = 0;
    while (st == OQ_OK && n > 0) {
        const char *nl = memchr(text, '\n', n);
        size_t len = nl ? (size_t)(nl - text) + 1 : n;
        st = oq_summary_scanner_line(*out, text, len, ++line_no, err);
        text += len;
        n -= len;
    }
    if (st != OQ_OK) {
        oq_summary_scanner_free(*out);
        *out = NULL;
    }
    return st;
}
