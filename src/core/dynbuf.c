/* Growable text, growable arrays, and an arena (core-impl.h). */
#include <stdalign.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"

void oq_dynbuf_init(oq_dynbuf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

/* Capacity for len + n bytes and the terminator, doubling. */
static oq_status reserve(oq_dynbuf *b, size_t n)
{
    if (n > SIZE_MAX - b->len - 1 || (b->max && b->len + n > b->max)) return OQ_ERR_NOMEM;
    size_t need = b->len + n + 1;
    if (need <= b->cap) return OQ_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
    char *p = realloc(b->buf, cap);
    if (!p) return OQ_ERR_NOMEM;
    b->buf = p;
    b->cap = cap;
    return OQ_OK;
}

oq_status oq_dynbuf_addn(oq_dynbuf *b, const void *p, size_t n)
{
    if (reserve(b, n)) return OQ_ERR_NOMEM;
    if (n) memcpy(b->buf + b->len, p, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return OQ_OK;
}

oq_status oq_dynbuf_add(oq_dynbuf *b, const char *s) { return oq_dynbuf_addn(b, s, strlen(s)); }

oq_status oq_dynbuf_vaddf(oq_dynbuf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    oq_status st = n < 0 || reserve(b, (size_t)n) ? OQ_ERR_NOMEM : OQ_OK;
    if (!st) {
        vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
    return st;
}

oq_status oq_dynbuf_addf(oq_dynbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    oq_status st = oq_dynbuf_vaddf(b, fmt, ap);
    va_end(ap);
    return st;
}

void oq_buf_appendf(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
    if (*used >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, n - *used, fmt, ap);
    va_end(ap);
    if (k > 0) *used += (size_t)k;
}

char *oq_dynbuf_space(oq_dynbuf *b, size_t n)
{
    return reserve(b, n) ? NULL : b->buf + b->len;
}

void oq_dynbuf_added(oq_dynbuf *b, size_t n)
{
    OQ_ASSERT(b->len + n < b->cap);
    b->len += n;
    b->buf[b->len] = '\0';
}

char *oq_dynbuf_take(oq_dynbuf *b, size_t *len)
{
    char *s = b->buf ? b->buf : calloc(1, 1);
    if (len) *len = b->len;
    size_t max = b->max;
    oq_dynbuf_init(b, max);
    return s;
}

void oq_dynbuf_truncate(oq_dynbuf *b, size_t len)
{
    OQ_ASSERT(len <= b->len);
    b->len = len;
    if (b->buf) b->buf[len] = '\0';
}

void oq_dynbuf_reset(oq_dynbuf *b) { oq_dynbuf_truncate(b, 0); }

void oq_dynbuf_clear(oq_dynbuf *b)
{
    free(b->buf);
    oq_dynbuf_init(b, b->max);
}

void *oq_array_push(void *items, size_t *n, size_t size)
{
    char *p;
    memcpy(&p, items, sizeof p);
    size_t k = *n;
    if ((k & (k - 1)) == 0) { /* k is 0 or a power of two: the array is full */
        size_t cap = k ? 2 * k : 1;
        if (cap < k || cap > SIZE_MAX / size) return NULL;
        char *np = realloc(p, cap * size);
        if (!np) return NULL;
        p = np;
        memcpy(items, &p, sizeof p);
    }
    memset(p + k * size, 0, size);
    (*n)++;
    return p + k * size;
}

static oq_status strv_take(char ***v, size_t *n, char *copy)
{
    char **slot = copy ? OQ_PUSH(*v, *n) : NULL;
    if (!slot) {
        free(copy);
        return OQ_ERR_NOMEM;
    }
    *slot = copy;
    return OQ_OK;
}

oq_status oq_strv_push(char ***v, size_t *n, const char *s) { return strv_take(v, n, strdup(s)); }

oq_status oq_strv_vpushf(char ***v, size_t *n, const char *fmt, va_list ap)
{
    char *copy = NULL;
    return strv_take(v, n, vasprintf(&copy, fmt, ap) < 0 ? NULL : copy);
}

oq_status oq_strv_pushf(char ***v, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    oq_status st = oq_strv_vpushf(v, n, fmt, ap);
    va_end(ap);
    return st;
}

struct oq_arena_block {
    struct oq_arena_block *next;
    alignas(max_align_t) unsigned char data[];
};

void *oq_arena_alloc(oq_arena *a, size_t n)
{
    if (n > SIZE_MAX - sizeof(struct oq_arena_block)) return NULL;
    struct oq_arena_block *b = calloc(1, sizeof *b + (n ? n : 1));
    if (!b) return NULL;
    b->next = a->head;
    a->head = b;
    return b->data;
}

char *oq_arena_strdup(oq_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = oq_arena_alloc(a, n);
    return d ? memcpy(d, s, n) : NULL;
}

char *oq_arena_printf(oq_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n < 0 ? NULL : oq_arena_alloc(a, (size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void oq_arena_clear(oq_arena *a)
{
    while (a->head) {
        struct oq_arena_block *b = a->head;
        a->head = b->next;
        free(b);
    }
}
