/* Kernel expectations checked against every routing record. */
#include "ortqual/dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "status/args-impl.h"

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

static oq_status add_failure(oq_dispatch_report *out, oq_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static oq_status add_failure(oq_dispatch_report *out, oq_err *err, const char *fmt, ...)
{
    char *text = NULL, **slot;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0 || !(slot = OQ_PUSH(out->failures, out->n_failures))) {
        if (n >= 0) free(text);
        return oq_err_set(err, OQ_ERR_NOMEM, "dispatch check: out of memory");
    }
    *slot = text;
    return OQ_OK;
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
    out->n_math_failures += r->kernel == OQ_SDPA_MATH;
    return add_failure(out, err, "%s: expected %s, got %s (line %llu)", label, expected,
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
            st = add_failure(out, err,
                             "%s: not observed (no SdpaKernel= line names this node)", node);
    }
    if (st == OQ_OK && log->n_records == 0)
        st = add_failure(out, err,
                         "no SdpaKernel= line: dispatch not observed (set "
                         "ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO=1 before the session is "
                         "created and capture native fd 1)");
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
    for (size_t i = 0; i < r->n_failures; i++) free(r->failures[i]);
    free(r->failures);
    memset(r, 0, sizeof *r);
}
