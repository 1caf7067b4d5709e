/* Kernel expectations checked against every routing record. */
#include "ortqual/dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "status/args-impl.h"

/* The wordings of the failures without a route; oq_dispatch_failure_from_text reads them back. */
static const char UNOBSERVED_SUFFIX[] = ": not observed (no SdpaKernel= line names this node)";
static const char NO_ROUTING_TEXT[] = "no SdpaKernel= line: dispatch not observed (set "
                                      "ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO=1 before the session is "
                                      "created and capture native fd 1)";

typedef struct rule {
    char *node;   /* NULL: applies to every node without its own rule */
    char *kernel; /* ORT's name, or an upper-case name kept as written */
} rule;

struct oq_dispatch_expect {
    rule *rules;
    size_t n;
};

oq_status oq_dispatch_expect_create(oq_dispatch_expect **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = calloc(1, sizeof **out);
    if (!*out) return oq_err_set(err, OQ_ERR_NOMEM, "dispatch expectations: out of memory");
    return OQ_OK;
}

void oq_dispatch_expect_free(oq_dispatch_expect *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->n; i++) {
        free(e->rules[i].node);
        free(e->rules[i].kernel);
    }
    free(e->rules);
    free(e);
}

static int upper_name(const char *s)
{
    if (!(*s >= 'A' && *s <= 'Z')) return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

static oq_status bad_kernel(const char *spec, const char *kernel, oq_err *err)
{
    char known[512] = "";
    size_t n = 0;
    for (int k = 1; k < OQ_SDPA_COUNT_ && n < sizeof known; k++)
        n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", k > 1 ? ", " : "",
                              oq_sdpa_kernel_name((oq_sdpa_kernel)k));
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "'%s': '%s' is not a kernel (known: %s; aliases flash, efficient, cudnn, "
                      "math, ...)",
                      spec, kernel, known);
}

oq_status oq_dispatch_expect_add(oq_dispatch_expect *e, const char *spec, oq_err *err)
{
    OQ_NEED(err, e);
    OQ_NEED(err, spec);
    const char *eq = strrchr(spec, '=');
    const char *kernel = eq ? eq + 1 : spec;
    if (!*spec) return oq_err_set(err, OQ_ERR_INVALID_ARG, "empty kernel expectation");
    if (eq == spec)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "'%s': empty node name before '='", spec);
    oq_sdpa_kernel k = oq_sdpa_kernel_from_name(kernel);
    if (k == OQ_SDPA_UNKNOWN && !upper_name(kernel)) return bad_kernel(spec, kernel, err);
    rule r = {eq ? strndup(spec, (size_t)(eq - spec)) : NULL,
              strdup(k != OQ_SDPA_UNKNOWN ? oq_sdpa_kernel_name(k) : kernel)};
    rule *slot = r.kernel && (!eq || r.node) ? OQ_PUSH(e->rules, e->n) : NULL;
    if (!slot) {
        free(r.node);
        free(r.kernel);
        return oq_err_set(err, OQ_ERR_NOMEM, "dispatch expectations: out of memory");
    }
    *slot = r;
    return OQ_OK;
}

/* A failure's text and its fields `f` (moved in: cleared on return) appended to out, the
 * two arrays kept the same length. */
static oq_status add_failure(oq_dispatch_report *out, oq_dispatch_failure *f, oq_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static oq_status add_failure(oq_dispatch_report *out, oq_dispatch_failure *f, oq_err *err, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    size_t n_failed = out->n_failures;
    oq_dispatch_failure *slot = n >= 0 ? OQ_PUSH(out->failed, n_failed) : NULL;
    if (!slot || oq_strv_push(&out->failures, &out->n_failures, text)) {
        if (slot) memset(slot, 0, sizeof *slot); /* a zeroed entry past n_failures: nothing to free */
        free(text);
        oq_dispatch_failure_clear(f);
        return oq_err_set(err, OQ_ERR_NOMEM, "dispatch check: out of memory");
    }
    free(text);
    *slot = *f;
    memset(f, 0, sizeof *f);
    return OQ_OK;
}

/* A failure of `kind` with its strings copied (NULL: ""); 0 when out of memory. */
static int failure_of(oq_dispatch_failure *f, oq_dispatch_failure_kind kind, const char *node, const char *op,
                      const char *dtype, const char *kernel, const char *expected, uint64_t line)
{
    const oq_dispatch_failure src = {kind, (char *)node, (char *)op, (char *)dtype, (char *)kernel,
                                     (char *)expected, line};
    return oq_dispatch_failure_copy(f, &src, NULL) == OQ_OK;
}

static int rule_applies(const rule *r, const char *node)
{
    return node ? (r->node && !strcmp(r->node, node)) : !r->node;
}

/* Does a rule for `node` (NULL: a global rule) allow `kernel`? *any is set
 * when at least one such rule exists. */
static int allowed(const oq_dispatch_expect *e, const char *node, const char *kernel, int *any)
{
    int ok = 0;
    *any = 0;
    for (size_t i = 0; i < e->n; i++) {
        const rule *r = &e->rules[i];
        if (rule_applies(r, node)) {
            *any = 1;
            ok |= !strcmp(r->kernel, kernel);
        }
    }
    return ok;
}

/* "FLASH_ATTENTION or EFFICIENT_ATTENTION": the kernels of the rules for `node`. */
static void expected_list(const oq_dispatch_expect *e, const char *node, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < e->n && n < cap; i++) {
        if (!rule_applies(&e->rules[i], node)) continue;
        int dup = 0; /* the same kernel named by an earlier rule */
        for (size_t j = 0; j < i; j++)
            dup |= rule_applies(&e->rules[j], node) && !strcmp(e->rules[j].kernel, e->rules[i].kernel);
        if (!dup) n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " or " : "", e->rules[i].kernel);
    }
}

static void record_label(const oq_dispatch_record *r, char *buf, size_t cap)
{
    if (*r->node)
        snprintf(buf, cap, "%s", r->node);
    else
        snprintf(buf, cap, "(unnamed %s node)", *r->op ? r->op : "attention");
}

static oq_status check_record(const oq_dispatch_expect *e, const oq_dispatch_record *r,
                              oq_dispatch_report *out, oq_err *err)
{
    const char *node = *r->node ? r->node : NULL;
    int own = 0, any = 0;
    int ok = node ? allowed(e, node, r->kernel_name, &own) : 0;
    if (!own) ok = allowed(e, NULL, r->kernel_name, &any);
    if (!(own || any) || ok) return OQ_OK; /* unconstrained, or allowed */
    char label[256], expected[512];
    record_label(r, label, sizeof label);
    expected_list(e, own ? node : NULL, expected, sizeof expected);
    oq_dispatch_failure f;
    if (!failure_of(&f, OQ_DISPATCH_FAILURE_KERNEL, r->node, r->op, r->dtype, r->kernel_name, expected, r->line))
        return oq_err_set(err, OQ_ERR_NOMEM, "dispatch check: out of memory");
    out->n_math_failures += r->kernel == OQ_SDPA_MATH;
    return add_failure(out, &f, err, "%s: expected %s, got %s (line %llu)", label, expected,
                       *r->kernel_name ? r->kernel_name : "no kernel name",
                       (unsigned long long)r->line);
}

static int node_seen(const oq_dispatch_log *log, const char *node)
{
    for (size_t i = 0; i < log->n_records; i++)
        if (!strcmp(log->records[i].node, node)) return 1;
    return 0;
}

static int rule_node_first(const oq_dispatch_expect *e, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (e->rules[j].node && !strcmp(e->rules[j].node, e->rules[i].node)) return 0;
    return 1;
}

static oq_status check_unobserved(const oq_dispatch_expect *e, const char *node, oq_dispatch_report *out,
                                  oq_err *err)
{
    char expected[512];
    oq_dispatch_failure f;
    expected_list(e, node, expected, sizeof expected);
    if (!failure_of(&f, OQ_DISPATCH_FAILURE_UNOBSERVED, node, NULL, NULL, NULL, expected, 0))
        return oq_err_set(err, OQ_ERR_NOMEM, "dispatch check: out of memory");
    return add_failure(out, &f, err, "%s%s", node, UNOBSERVED_SUFFIX);
}

oq_status oq_dispatch_check(const oq_dispatch_expect *e, const oq_dispatch_log *log,
                            oq_dispatch_report *out, oq_err *err)
{
    OQ_NEED(err, e);
    OQ_NEED(err, log);
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    oq_status st = OQ_OK;
    for (size_t i = 0; i < log->n_records && st == OQ_OK; i++) {
        out->n_records += log->records[i].count;
        st = check_record(e, &log->records[i], out, err);
    }
    for (size_t i = 0; i < e->n && st == OQ_OK; i++) {
        const char *node = e->rules[i].node;
        if (node && rule_node_first(e, i) && !node_seen(log, node))
            st = check_unobserved(e, node, out, err);
    }
    if (st == OQ_OK && log->n_records == 0) {
        oq_dispatch_failure f;
        st = failure_of(&f, OQ_DISPATCH_FAILURE_NO_ROUTING, NULL, NULL, NULL, NULL, NULL, 0)
                 ? add_failure(out, &f, err, "%s", NO_ROUTING_TEXT)
                 : oq_err_set(err, OQ_ERR_NOMEM, "dispatch check: out of memory");
    }
    if (st != OQ_OK) {
        oq_dispatch_report_clear(out);
        return st;
    }
    out->passed = out->n_records > 0 && out->n_failures == 0;
    return OQ_OK;
}

void oq_dispatch_report_clear(oq_dispatch_report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_failures; i++) {
        free(r->failures[i]);
        oq_dispatch_failure_clear(&r->failed[i]);
    }
    free(r->failures);
    free(r->failed);
    memset(r, 0, sizeof *r);
}

/* The N of a " (line N)" that ends `text`, and where that suffix starts; 0 when none. */
static uint64_t line_suffix(const char *text, size_t *at)
{
    const char *p = NULL, *end = text + strlen(text);
    for (const char *q = strstr(text, " (line "); q; q = strstr(q + 1, " (line ")) p = q;
    if (!p || end[-1] != ')') return 0;
    char *stop;
    unsigned long long line = strtoull(p + 7, &stop, 10);
    if (stop != end - 1 || stop == p + 7 || p[7] < '0' || p[7] > '9') return 0;
    *at = (size_t)(p - text);
    return line;
}

/* Is `text` (its " (line N)" at `at`) record r's "LABEL: expected EXP, got KERNEL"? *exp and
 * *exp_n: EXP. */
static int words_of(const char *text, size_t at, const oq_dispatch_record *r, const char **exp, size_t *exp_n)
{
    static const char EXPECTED[] = ": expected ";
    char label[256], got[300];
    record_label(r, label, sizeof label);
    snprintf(got, sizeof got, ", got %s", *r->kernel_name ? r->kernel_name : "no kernel name");
    size_t nl = strlen(label), ng = strlen(got), nx = sizeof EXPECTED - 1;
    if (at < nl + nx + ng || strncmp(text, label, nl) != 0 || strncmp(text + nl, EXPECTED, nx) != 0 ||
        strncmp(text + at - ng, got, ng) != 0)
        return 0;
    *exp = text + nl + nx;
    *exp_n = at - ng - nl - nx;
    return 1;
}

/* A KERNEL failure's text matched against the records of its line (a merged log may hold
 * several shards' records of one line number), its route taken from the record that matches:
 * the node is never cut out of the words around it. 1 found, 0 not, -1 out of memory. */
static int kernel_from_text(const char *text, const oq_dispatch_log *log, oq_dispatch_failure *out)
{
    size_t at = 0, exp_n = 0;
    const char *exp = NULL;
    uint64_t line = log ? line_suffix(text, &at) : 0;
    const oq_dispatch_record *r = NULL;
    for (size_t i = 0; line && !r && i < log->n_records; i++)
        if (log->records[i].line == line && words_of(text, at, &log->records[i], &exp, &exp_n)) r = &log->records[i];
    if (!r) return 0;
    char *expected = strndup(exp, exp_n);
    int ok = expected && failure_of(out, OQ_DISPATCH_FAILURE_KERNEL, r->node, r->op, r->dtype, r->kernel_name,
                                    expected, r->line);
    free(expected);
    return ok ? 1 : -1;
}

oq_status oq_dispatch_failure_from_text(const char *text, const oq_dispatch_log *log, oq_dispatch_failure *out,
                                        oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    size_t n = strlen(text), ns = strlen(UNOBSERVED_SUFFIX);
    int ok = kernel_from_text(text, log, out);
    if (ok == 0 && n > ns && !strcmp(text + n - ns, UNOBSERVED_SUFFIX)) {
        char *node = strndup(text, n - ns);
        ok = node && failure_of(out, OQ_DISPATCH_FAILURE_UNOBSERVED, node, NULL, NULL, NULL, NULL, 0) ? 1 : -1;
        free(node);
    }
    if (ok == 0)
        ok = failure_of(out, !strcmp(text, NO_ROUTING_TEXT) ? OQ_DISPATCH_FAILURE_NO_ROUTING : OQ_DISPATCH_FAILURE_TEXT,
                        NULL, NULL, NULL, NULL, NULL, 0) ? 1 : -1;
    return ok > 0 ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "dispatch failure: out of memory");
}
