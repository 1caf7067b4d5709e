#include "ortqual/status.h"
#include "status/terms-impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *oq_status_str(oq_status s)
{
    switch (s) {
    case OQ_OK: return "ok";
    case OQ_ERR_INVALID_ARG: return "invalid argument";
    case OQ_ERR_IO: return "i/o error";
    case OQ_ERR_FORMAT: return "malformed input";
    case OQ_ERR_SHAPE: return "shape mismatch";
    case OQ_ERR_MASK: return "mask contract violated";
    case OQ_ERR_NOMEM: return "out of memory";
    case OQ_ERR_UNSUPPORTED: return "unsupported";
    case OQ_ERR_RUNTIME: return "runtime error";
    case OQ_ERR_NOT_FOUND: return "not found";
    case OQ_ERR_CHECK_FAILED: return "check failed";
    case OQ_ERR_OUTPUT: return "cannot write output";
    }
    return "unknown status";
}

int oq_status_exit_code(oq_status s)
{
    return s == OQ_ERR_RUNTIME || s == OQ_ERR_OUTPUT || s == OQ_ERR_NOMEM ? 3 : 2;
}

/* What is kept of a word too long for a message: its head and its tail (a path's file name). */
enum { KEEP_HEAD = 200, KEEP_TAIL = 60 };

/* The longest run of text without a space in msg, when it is longer than what elide keeps. */
static char *longest_word(char *msg, size_t *len)
{
    char *best = NULL;
    *len = KEEP_HEAD + KEEP_TAIL + 3;
    for (char *p = msg; *p;) {
        size_t n = strcspn(p, " ");
        if (n > *len) best = p, *len = n;
        p += n + (p[n] != 0);
    }
    return best;
}

/* msg (malloc'ed, the whole text) into the message buffer. A text too long for it (a path of
 * 3000 bytes, say) loses the middle of its longest words, "head...tail", not its end, where
 * the reason is: never a path cut off mid-way with the reason gone. */
static void fit(char *dst, size_t cap, char *msg)
{
    size_t n = strlen(msg), len;
    for (char *w; n >= cap && (w = longest_word(msg, &len));) {
        memcpy(w + KEEP_HEAD, "...", 3);
        memmove(w + KEEP_HEAD + 3, w + len - KEEP_TAIL, strlen(w + len - KEEP_TAIL) + 1);
        n = strlen(msg);
    }
    snprintf(dst, cap, "%s", msg);
}

/* A control character (C0, DEL, or C1 as UTF-8 "\xC2\x80".."\xC2\x9F") at p: its length, else 0. */
static size_t control_at(const unsigned char *p)
{
    if (*p < 0x20 || *p == 0x7F) return 1;
    return p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F ? 2 : 0;
}

/* The first n bytes of s with their control characters shown as \xNN (a C1 one by its second
 * byte, as `ortqual inspect` shows them), malloc'ed; NULL when out of memory. */
static char *printable(const char *s, size_t n)
{
    char *out = malloc(4 * n + 1), *w = out;
    for (const unsigned char *p = (const unsigned char *)s, *end = p + n; out && p < end;) {
        size_t k = control_at(p);
        if (k) w += sprintf(w, "\\x%02x", p[k - 1]);
        else *w++ = (char)*p;
        p += k ? k : 1;
    }
    if (out) *w = 0;
    return out;
}

char *oq_text_printable(const char *s)
{
    return s ? printable(s, strlen(s)) : NULL;
}

int oq_text_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if (control_at(p)) return 1;
    return 0;
}

static const char *digits(const char *p)
{
    while (*p >= '0' && *p <= '9') p++;
    return p;
}

const char *oq_text_real(const char *s, double *v)
{
    if (!s || !v) return NULL;
    const char *p = s + (*s == '+' || *s == '-');
    const char *int_end = digits(p), *end = int_end;
    if (*end == '.') end = digits(end + 1);
    if (int_end == p && end <= p + 1) return NULL; /* no digit before or after the point */
    if (*end == 'e' || *end == 'E') {
        const char *e = end + 1 + (end[1] == '+' || end[1] == '-');
        if (digits(e) > e) end = digits(e);
    }
    char buf[128];
    if ((size_t)(end - s) >= sizeof buf) return NULL;
    memcpy(buf, s, (size_t)(end - s));
    buf[end - s] = '\0';
    *v = strtod(buf, NULL); /* strtod reads all of buf: its forms are a superset of these */
    return end;
}

/* msg made printable: a path, a tensor or a member name may hold a newline, and a message is
 * one line: a log that records it gets one record. Line ends that end it (a quoted stderr
 * line's) are dropped, not shown. */
static char *one_line(const char *msg)
{
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) n--;
    return printable(msg, n);
}

/* The message formatted whole, in the words of oq_set_terms's function (fmt's own words only,
 * never its values: a path or a tensor's name stays as it is), made one line, then fitted; cut
 * at the end (its control characters blanked) only when memory runs out. */
static void set_msg(char *dst, size_t cap, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    char *whole = oq_terms_vformat(fmt, again), *line = whole ? one_line(whole) : NULL;
    if (line) {
        fit(dst, cap, line);
    } else {
        vsnprintf(dst, cap, fmt, ap);
        for (char *p = dst; *p; p++)
            if (control_at((unsigned char *)p)) *p = ' ';
    }
    va_end(again);
    free(whole);
    free(line);
}

oq_status oq_err_set(oq_err *err, oq_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = s;
        set_msg(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

oq_status oq_err_prefix(oq_err *err, const char *fmt, ...)
{
    if (!err) return OQ_OK;
    char prefix[OQ_ERR_MSG_MAX], *whole = NULL;
    va_list ap;
    va_start(ap, fmt);
    set_msg(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (asprintf(&whole, "%s%s", prefix, err->msg) >= 0) fit(err->msg, sizeof err->msg, whole);
    free(whole); /* (out of memory: the old message stays) */
    return err->status;
}

/* Set by a tool at its start, read thereafter by any thread: atomic, so that a caller setting it
 * late races nothing (it still should not). */
static oq_terms_fn terms;

void oq_set_terms(oq_terms_fn fn)
{
    __atomic_store_n(&terms, fn, __ATOMIC_RELEASE);
}

int oq_terms_given(void)
{
    return __atomic_load_n(&terms, __ATOMIC_ACQUIRE) != NULL;
}

const char *oq_terms(const char *text, char *buf, size_t n)
{
    oq_terms_fn fn = __atomic_load_n(&terms, __ATOMIC_ACQUIRE);
    return fn && text ? fn(text, buf, n) : text;
}

/* The length of the conversion at p ('%' and what follows it up to its letter). */
static size_t conversion_len(const char *p)
{
    size_t k = 1 + strspn(p + 1, "0123456789$-+ #'.*hlLqjzt");
    return p[k] ? k + 1 : k;
}

/* The own words of a format, `run` (n bytes, its "%%" read as '%'), in fn's words into f,
 * each '%' doubled again: a '%' a rewording brings is not read as a conversion. */
static void put_words(FILE *f, oq_terms_fn fn, const char *run, size_t n)
{
    size_t cap = 2 * n + 512; /* room for longer words */
    char *buf = n ? malloc(cap) : NULL;
    const char *said = buf ? fn(run, buf, cap) : run;
    for (; *said; said++) {
        if (*said == '%') fputc('%', f);
        fputc(*said, f);
    }
    free(buf);
}

/* fmt with its own words, the runs between its conversions, in fn's words and its conversions
 * as they are: the values they put in (a path, a node's name, a log line) are never reworded.
 * Malloc'ed; NULL when out of memory. */
static char *worded_fmt(oq_terms_fn fn, const char *fmt)
{
    char *out = NULL, *run = malloc(strlen(fmt) + 1);
    size_t size = 0, n = 0;
    FILE *f = run ? open_memstream(&out, &size) : NULL;
    for (const char *p = fmt; f;) {
        if (*p && (*p != '%' || p[1] == '%')) {
            run[n++] = *p;
            p += *p == '%' ? 2 : 1;
            continue;
        }
        run[n] = '\0';
        put_words(f, fn, run, n);
        n = 0;
        if (!*p) break;
        size_t k = conversion_len(p);
        fwrite(p, 1, k, f);
        p += k;
    }
    free(run);
    if (f && fclose(f)) {
        free(out);
        out = NULL;
    }
    return out;
}

char *oq_terms_vformat(const char *fmt, va_list ap)
{
    oq_terms_fn fn = __atomic_load_n(&terms, __ATOMIC_ACQUIRE);
    char *worded = fn ? worded_fmt(fn, fmt) : NULL, *text = NULL;
    if ((!fn || worded) && vasprintf(&text, worded ? worded : fmt, ap) < 0) text = NULL;
    free(worded);
    return text;
}

void oq_abort_(const char *file, int line, const char *expr)
{
    fprintf(stderr, "ortqual: internal error at %s:%d: assertion '%s' failed\n", file, line, expr);
    abort();
}
