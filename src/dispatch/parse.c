/* Streaming parser of ORT's attention routing text (see ortqual/dispatch.h). */
#include "ortqual/dispatch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "status/args-impl.h"

struct oq_dispatch_parser {
    oq_dynbuf pending; /* the start of a line whose terminator has not arrived yet */
    oq_dynbuf clean;   /* the current line without escape sequences and terminator */
    oq_dynbuf other;   /* non-routing text of a mixed line, for the pass-through */
    uint64_t line;     /* lines completed so far */
    oq_dispatch_log log;
    oq_dispatch_passthrough_fn passthrough;
    void *user;
};

static const char ROUTING_KEY[] = "SdpaKernel=";
static const char OPTIONS_KEY[] = "AttentionKernelOptions:";

#define NOMEM(err) oq_err_set(err, OQ_ERR_NOMEM, "dispatch parser: out of memory")

oq_status oq_dispatch_parser_create(oq_dispatch_parser **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = calloc(1, sizeof **out);
    if (!*out) return oq_err_set(err, OQ_ERR_NOMEM, "dispatch parser: out of memory");
    return OQ_OK;
}

static void record_strings_free(const oq_dispatch_record *r)
{
    free((char *)r->op);
    free((char *)r->node);
    free((char *)r->dtype);
    free((char *)r->kernel_name);
}

void oq_dispatch_log_clear(oq_dispatch_log *log)
{
    if (!log) return;
    for (size_t i = 0; i < log->n_records; i++) record_strings_free(&log->records[i]);
    for (size_t i = 0; i < log->n_options; i++) {
        for (size_t j = 0; j < log->options[i].n_opts; j++) free((char *)log->options[i].opts[j].name);
        free(log->options[i].opts);
    }
    free(log->records);
    free(log->options);
    memset(log, 0, sizeof *log);
}

static int dup_into(const char **dst, const char *src) { return (*dst = strdup(src ? src : "")) != NULL; }

oq_status oq_dispatch_log_copy(oq_dispatch_log *dst, const oq_dispatch_log *src, oq_err *err)
{
    OQ_NEED(err, dst);
    OQ_NEED(err, src);
    memset(dst, 0, sizeof *dst);
    int ok = 1;
    for (size_t i = 0; ok && i < src->n_records; i++) {
        const oq_dispatch_record *s = &src->records[i];
        oq_dispatch_record *r = OQ_PUSH(dst->records, dst->n_records);
        ok = r && dup_into(&r->op, s->op) && dup_into(&r->node, s->node) && dup_into(&r->dtype, s->dtype) &&
             dup_into(&r->kernel_name, s->kernel_name);
        if (ok) {
            r->kernel = s->kernel;
            r->line = s->line;
            r->count = s->count;
        }
    }
    for (size_t i = 0; ok && i < src->n_options; i++) {
        const oq_dispatch_options *s = &src->options[i];
        oq_dispatch_options *o = OQ_PUSH(dst->options, dst->n_options);
        ok = o != NULL;
        if (ok) o->line = s->line;
        for (size_t k = 0; ok && k < s->n_opts; k++) {
            oq_dispatch_option *opt = OQ_PUSH(o->opts, o->n_opts);
            ok = opt && dup_into(&opt->name, s->opts[k].name);
            if (ok) opt->value = s->opts[k].value;
        }
    }
    if (ok) return OQ_OK;
    oq_dispatch_log_clear(dst);
    return NOMEM(err);
}

void oq_dispatch_parser_free(oq_dispatch_parser *p)
{
    if (!p) return;
    oq_dispatch_log_clear(&p->log);
    oq_dynbuf_clear(&p->pending);
    oq_dynbuf_clear(&p->clean);
    oq_dynbuf_clear(&p->other);
    free(p);
}

void oq_dispatch_parser_set_passthrough(oq_dispatch_parser *p, oq_dispatch_passthrough_fn fn,
                                        void *user)
{
    if (!p) return;
    p->passthrough = fn;
    p->user = user;
}

const oq_dispatch_log *oq_dispatch_parser_log(const oq_dispatch_parser *p)
{
    return p ? &p->log : NULL;
}

/* Length of the escape sequence at s[0] == ESC: CSI (ESC [ params final),
 * OSC (ESC ] ... BEL or ESC \), or a two-byte escape. */
static size_t escape_len(const char *s, size_t n)
{
    if (n < 2) return n;
    if (s[1] == '[') {
        size_t i = 2;
        while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] <= 0x3f) i++;
        return i < n ? i + 1 : n;
    }
    if (s[1] == ']') {
        for (size_t i = 2; i < n; i++) {
            if (s[i] == '\a') return i + 1;
            if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\') return i + 2;
        }
        return n;
    }
    return 2;
}

/* Copy raw[0..n) into p->clean without escape sequences; returns its length. */
static oq_status strip(oq_dispatch_parser *p, const char *raw, size_t n, size_t *len, oq_err *err)
{
    *len = 0;
    oq_dynbuf_reset(&p->clean);
    char *c = oq_dynbuf_space(&p->clean, n);
    if (!c) return NOMEM(err);
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        if (raw[i] == 0x1b) {
            i += escape_len(raw + i, n - i);
            continue;
        }
        c[j++] = raw[i++];
    }
    oq_dynbuf_added(&p->clean, j);
    *len = j;
    return OQ_OK;
}

static char *dup_range(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Position of `key` in s[from..to), or `to` when absent. */
static size_t find(const char *s, size_t from, size_t to, const char *key)
{
    if (from >= to) return to;
    const char *hit = memmem(s + from, to - from, key, strlen(key));
    return hit ? (size_t)(hit - s) : to;
}

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int same_route(const oq_dispatch_record *a, const oq_dispatch_record *b)
{
    return !strcmp(a->node, b->node) && !strcmp(a->kernel_name, b->kernel_name) &&
           !strcmp(a->op, b->op) && !strcmp(a->dtype, b->dtype);
}

/* r (its strings handed over, its count lines) counted into the record of its route in
 * log, or appended; on OQ_ERR_NOMEM r is left to the caller. */
static oq_status add_record(oq_dispatch_log *log, oq_dispatch_record *r, oq_err *err)
{
    for (size_t i = log->n_records; i-- > 0;)
        if (same_route(&log->records[i], r)) {
            log->records[i].count += r->count;
            record_strings_free(r);
            return OQ_OK;
        }
    oq_dispatch_record *slot = OQ_PUSH(log->records, log->n_records);
    if (!slot) return NOMEM(err);
    *slot = *r;
    return OQ_OK;
}

oq_status oq_dispatch_log_merge(oq_dispatch_log *dst, oq_dispatch_log *src, oq_err *err)
{
    OQ_NEED(err, dst);
    OQ_NEED(err, src);
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < src->n_records; i++) {
        oq_dispatch_record r = src->records[i];
        st = add_record(dst, &r, err);
        if (!st) memset(&src->records[i], 0, sizeof src->records[i]); /* its strings moved or freed */
    }
    return st;
}

/* Parse the routing text s[start..k) "Operator=X Node=Y DataType=Z " and the
 * kernel name at s[k + strlen(ROUTING_KEY)..); *end is set past the kernel name.
 * Node names may contain spaces, so each field runs to the next field's key. */
static oq_status parse_record(oq_dispatch_parser *p, const char *s, size_t start, size_t k,
                              size_t len, size_t *end, oq_err *err)
{
    size_t node_at = find(s, start, k, " Node=");
    size_t dtype_at = find(s, start, k, " DataType=");
    size_t op_end = node_at < dtype_at ? node_at : dtype_at;
    size_t op_at = start + strlen("Operator=");
    int has_op = k - start >= strlen("Operator=") && !strncmp(s + start, "Operator=", 9);
    size_t kname = k + strlen(ROUTING_KEY), kend = kname;
    while (kend < len && is_name_char(s[kend])) kend++;
    *end = kend;

    oq_dispatch_record r = {0};
    r.op = has_op ? dup_range(s + op_at, op_end > op_at ? op_end - op_at : 0) : dup_range("", 0);
    r.node = node_at < k ? dup_range(s + node_at + 6, (dtype_at > node_at ? dtype_at : k) - node_at - 6)
                         : dup_range("", 0);
    r.dtype = dtype_at < k ? dup_range(s + dtype_at + 10, k - dtype_at - 10) : dup_range("", 0);
    r.kernel_name = dup_range(s + kname, kend - kname);
    r.line = p->line;
    r.count = 1;
    if (!r.op || !r.node || !r.dtype || !r.kernel_name) {
        record_strings_free(&r);
        return NOMEM(err);
    }
    r.kernel = oq_sdpa_kernel_from_name(r.kernel_name);
    /* An alias ("flash") is not what ORT prints: only exact names count. */
    if (r.kernel != OQ_SDPA_UNKNOWN && strcmp(r.kernel_name, oq_sdpa_kernel_name(r.kernel)) != 0)
        r.kernel = OQ_SDPA_UNKNOWN;
    oq_status st = add_record(&p->log, &r, err);
    if (st != OQ_OK) record_strings_free(&r);
    return st;
}

/* Where the routing text that ends with the key at k begins: the last
 * "Operator=" at a word boundary in [from, k), else the key itself. A NUL
 * before it is a boundary: the summary scanner reads a NUL as a line break. */
static size_t record_start(const char *s, size_t from, size_t k)
{
    size_t start = k;
    for (size_t i = find(s, from, k, "Operator="); i < k; i = find(s, i + 1, k, "Operator="))
        if (i == 0 || isspace((unsigned char)s[i - 1]) || s[i - 1] == '\0') start = i;
    return start;
}

static oq_status append_other(oq_dispatch_parser *p, const char *s, size_t len, oq_err *err)
{
    return oq_dynbuf_addn(&p->other, s, len) ? NOMEM(err) : OQ_OK;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

/* Hand the non-routing part of a mixed line, p->other, to the pass-through. */
static oq_status pass_other(oq_dispatch_parser *p, const char *term, size_t term_len, oq_err *err)
{
    if (!p->passthrough || blank(p->other.buf, p->other.len)) return OQ_OK;
    if (append_other(p, term, term_len, err)) return OQ_ERR_NOMEM;
    p->passthrough(p->user, p->other.buf, p->other.len, p->line);
    return OQ_OK;
}

static oq_status parse_routing(oq_dispatch_parser *p, size_t len, const char *term,
                               size_t term_len, oq_err *err)
{
    const char *s = p->clean.buf;
    size_t pos = 0;
    oq_status st = OQ_OK;
    oq_dynbuf_reset(&p->other);
    for (size_t k = find(s, 0, len, ROUTING_KEY); k < len && st == OQ_OK;
         k = find(s, pos, len, ROUTING_KEY)) {
        size_t start = record_start(s, pos, k), end = len;
        st = append_other(p, s + pos, start - pos, err);
        if (st == OQ_OK) st = parse_record(p, s, start, k, len, &end, err);
        pos = end;
    }
    if (st == OQ_OK) st = append_other(p, s + pos, len - pos, err);
    if (st == OQ_OK) st = pass_other(p, term, term_len, err);
    return st;
}

static oq_status add_option(oq_dispatch_options *o, const char *name, size_t n, long value,
                            oq_err *err)
{
    char *copy = dup_range(name, n);
    oq_dispatch_option *slot = copy ? OQ_PUSH(o->opts, o->n_opts) : NULL;
    if (!slot) {
        free(copy);
        return NOMEM(err);
    }
    *slot = (oq_dispatch_option){copy, value};
    return OQ_OK;
}

/* "NAME=1 NAME=0 ..." after the options key; tokens of another form are skipped. */
static oq_status parse_option_pairs(oq_dispatch_options *o, const char *s, size_t i, size_t len,
                                    oq_err *err)
{
    while (i < len) {
        while (i < len && isspace((unsigned char)s[i])) i++;
        size_t name = i;
        while (i < len && is_name_char(s[i])) i++;
        size_t name_end = i;
        if (i < len && s[i] == '=' && name_end > name) {
            char *endp;
            long v = strtol(s + i + 1, &endp, 10);
            size_t after = (size_t)(endp - s);
            if (after > i + 1 && (after == len || isspace((unsigned char)s[after]))) {
                oq_status st = add_option(o, s + name, name_end - name, v, err);
                if (st != OQ_OK) return st;
                i = after;
                continue;
            }
        }
        while (i < len && !isspace((unsigned char)s[i])) i++;
    }
    return OQ_OK;
}

static oq_status parse_options(oq_dispatch_parser *p, size_t at, size_t len, const char *term,
                               size_t term_len, oq_err *err)
{
    oq_dispatch_options *o = OQ_PUSH(p->log.options, p->log.n_options);
    if (!o) return NOMEM(err);
    o->line = p->line;
    oq_status st = parse_option_pairs(o, p->clean.buf, at + strlen(OPTIONS_KEY), len, err);
    oq_dynbuf_reset(&p->other);
    if (st == OQ_OK) st = append_other(p, p->clean.buf, at, err);
    if (st == OQ_OK) st = pass_other(p, term, term_len, err);
    return st;
}

/* One complete line: raw[0..n) including its terminator, if any. */
static oq_status process_line(oq_dispatch_parser *p, const char *raw, size_t n, oq_err *err)
{
    p->line++;
    size_t body = n;
    if (body > 0 && raw[body - 1] == '\n') body--;
    if (body > 0 && raw[body - 1] == '\r') body--;
    size_t len;
    oq_status st = strip(p, raw, body, &len, err);
    if (st != OQ_OK) return st;
    size_t opt = find(p->clean.buf, 0, len, OPTIONS_KEY);
    if (opt < len) return parse_options(p, opt, len, raw + body, n - body, err);
    if (find(p->clean.buf, 0, len, ROUTING_KEY) < len)
        return parse_routing(p, len, raw + body, n - body, err);
    if (p->passthrough) p->passthrough(p->user, raw, n, p->line);
    return OQ_OK;
}

oq_status oq_dispatch_parser_feed(oq_dispatch_parser *p, const void *buf, size_t n, oq_err *err)
{
    OQ_NEED(err, p);
    OQ_NEED_N(err, n, buf);
    const char *s = buf;
    while (n > 0) {
        const char *nl = memchr(s, '\n', n);
        size_t take = nl ? (size_t)(nl - s) + 1 : n;
        oq_status st = OQ_OK;
        if (nl && p->pending.len == 0) {
            st = process_line(p, s, take, err); /* the common case: no copy */
        } else {
            if (oq_dynbuf_addn(&p->pending, s, take)) return NOMEM(err);
            if (nl) {
                st = process_line(p, p->pending.buf, p->pending.len, err);
                oq_dynbuf_reset(&p->pending);
            }
        }
        if (st != OQ_OK) return st;
        s += take;
        n -= take;
    }
    return OQ_OK;
}

oq_status oq_dispatch_parser_finish(oq_dispatch_parser *p, oq_err *err)
{
    OQ_NEED(err, p);
    if (p->pending.len == 0) return OQ_OK;
    oq_status st = process_line(p, p->pending.buf, p->pending.len, err);
    oq_dynbuf_reset(&p->pending);
    return st;
}

oq_status oq_dispatch_parse_text(const char *text, size_t n, oq_dispatch_parser **out,
                                 oq_err *err)
{
    OQ_NEED_N(err, n, text);
    OQ_NEED(err, out);
    oq_status st = oq_dispatch_parser_create(out, err);
    if (st == OQ_OK) st = oq_dispatch_parser_feed(*out, text, n, err);
    if (st == OQ_OK) st = oq_dispatch_parser_finish(*out, err);
    if (st != OQ_OK) {
        oq_dispatch_parser_free(*out);
        *out = NULL;
    }
    return st;
}
