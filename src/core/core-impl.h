/* Internals shared across the library (never installed): the lowest layer
 * above status.h, with no dependency on any other folder. */
#ifndef ORTQUAL_CORE_IMPL_H
#define ORTQUAL_CORE_IMPL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"

/* Seconds on CLOCK_MONOTONIC: only differences mean anything. */
double oq_now_s(void);

/* ---- growable buffers (after curl's dynbuf) --------------------------------------
 *
 * Every growing array and text of the library goes through these three, so capacity
 * doubling, overflow checks and out-of-memory paths are written once.
 *
 *     oq_dynbuf b;                            text or bytes of unknown length
 *     oq_dynbuf_init(&b, 0);
 *     if (oq_dynbuf_addf(&b, "%s=%d;", k, v)) return oq_err_set(err, OQ_ERR_NOMEM, ...);
 *     char *text = oq_dynbuf_take(&b, NULL);  (the caller frees it)
 *
 *     item *items = NULL; size_t n = 0;       an array of structs
 *     item *it = OQ_PUSH(items, n);           zeroed, n incremented; NULL: out of memory
 *
 *     oq_arena a = {0};                       many small allocations, freed together
 *     char *s = oq_arena_printf(&a, "%s (%s)", x, y);
 *     oq_arena_clear(&a);
 */

/* A zeroed oq_dynbuf is empty and without limit, like one after oq_dynbuf_init(b, 0). */
typedef struct oq_dynbuf {
    char *buf;  /* NULL until something is added; then always NUL-terminated */
    size_t len; /* bytes in use, the terminator not counted */
    size_t cap; /* bytes allocated */
    size_t max; /* most bytes it may hold (0: no limit): a guard against runaway input */
} oq_dynbuf;

void oq_dynbuf_init(oq_dynbuf *b, size_t max);
/* Append; OQ_ERR_NOMEM when out of memory or past `max` (the buffer is kept as it was). */
oq_status oq_dynbuf_addn(oq_dynbuf *b, const void *p, size_t n);
oq_status oq_dynbuf_add(oq_dynbuf *b, const char *s);
/* One byte appended, inline while it fits (the JSON scanner's per-character copy: a call, a
 * reserve and a memcpy per byte were a third of report.html's time at 20,000 batches). */
static inline oq_status oq_dynbuf_addc(oq_dynbuf *b, char c)
{
    if (b->len + 2 > b->cap || (b->max && b->len + 1 > b->max)) return oq_dynbuf_addn(b, &c, 1);
    b->buf[b->len++] = c;
    b->buf[b->len] = '\0';
    return OQ_OK;
}
oq_status oq_dynbuf_addf(oq_dynbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* printf output appended to a fixed buf[n] at *used, cut where it is full (a one-line message
 * built in parts). */
void oq_buf_appendf(char *buf, size_t n, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
oq_status oq_dynbuf_vaddf(oq_dynbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Room for `n` more bytes at buf + len (written by the caller, then counted with
 * oq_dynbuf_added); NULL when out of memory or past `max`. */
char *oq_dynbuf_space(oq_dynbuf *b, size_t n);
void oq_dynbuf_added(oq_dynbuf *b, size_t n);
/* Hand the text over (malloc'ed, NUL-terminated, "" when nothing was added; NULL only
 * when out of memory) and leave `b` empty. *len (may be NULL) gets its length. */
char *oq_dynbuf_take(oq_dynbuf *b, size_t *len);
void oq_dynbuf_truncate(oq_dynbuf *b, size_t len); /* keep the first len <= b->len bytes */
void oq_dynbuf_reset(oq_dynbuf *b);                /* empty, memory kept */
void oq_dynbuf_clear(oq_dynbuf *b); /* empty, memory freed */

/* Append one zeroed element of `size` bytes to the array *(T **)items of *n elements,
 * increment *n and return the element; NULL when out of memory (array and *n kept). The
 * array must only ever grow through this function: its capacity is not stored but is the
 * power of two at or above *n. Use it through OQ_PUSH. */
void *oq_array_push(void *items, size_t *n, size_t size);
#define OQ_PUSH(items, n) ((__typeof__(items))oq_array_push(&(items), &(n), sizeof *(items)))

/* Append a copy of `s` to the string array *v of *n (grown with oq_array_push only);
 * OQ_ERR_NOMEM with *v and *n kept. oq_strv_pushf formats the string. */
oq_status oq_strv_push(char ***v, size_t *n, const char *s);
oq_status oq_strv_pushf(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
oq_status oq_strv_vpushf(char ***v, size_t *n, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Allocations freed all at once: a context's strings and small structs. */
typedef struct oq_arena {
    struct oq_arena_block *head;
} oq_arena;
void *oq_arena_alloc(oq_arena *a, size_t n); /* zeroed; NULL when out of memory */
char *oq_arena_strdup(oq_arena *a, const char *s);
char *oq_arena_printf(oq_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void oq_arena_clear(oq_arena *a);

/* A buffer of `bytes` for bulk data, freed with free(); NULL when out of memory.
 * From 2 MiB on it is 2 MiB aligned and advised onto transparent huge pages, so
 * that its first touch faults once per 2 MiB instead of once per 4 KiB: on
 * virtual machines a fault costs tens of microseconds (25 us on the development
 * VM: 25 ms for the first touch of 4 MiB, as much as the arithmetic that fills
 * it). Whole huge pages only: a tail short of 2 MiB stays on small pages.
 * oq_calloc_huge: zeroed, like calloc. Neither returns NULL for 0 bytes. */
void *oq_alloc_huge(size_t bytes);
void *oq_calloc_huge(size_t bytes);

/* SHA-256 of bytes or of a file, as 64 lowercase hex digits (plus NUL). */
typedef struct oq_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t used;
} oq_sha256;
void oq_sha256_init(oq_sha256 *s);
void oq_sha256_update(oq_sha256 *s, const void *data, size_t n);
void oq_sha256_hex(oq_sha256 *s, char hex[65]); /* finishes s */
void oq_sha256_buf(const void *data, size_t n, char hex[65]); /* the three at once */
oq_status oq_sha256_file(const char *path, char hex[65], oq_err *err);
/* The same of the file open on fd (read with pread, from its start; `name` in messages). */
oq_status oq_sha256_fd(int fd, const char *name, char hex[65], oq_err *err);
/* Whether s starts with 64 lowercase hex digits, as oq_sha256_hex writes a digest; reads no
 * further than the first byte that is not one (a shorter string's NUL stops it). */
int oq_sha256_hex_at(const char *s);
/* n 64-byte blocks into the state h: the x86 SHA extensions where the CPU has them, else
 * the portable code (kept callable, so tests compare the two). */
void oq_sha256_blocks(uint32_t h[8], const unsigned char *p, size_t n);
void oq_sha256_blocks_portable(uint32_t h[8], const unsigned char *p, size_t n);

/* CRC-32 as zlib's crc32_z computes it (start from 0; chain by passing the last value): the
 * carry-less multiply where the CPU has it, else zlib (kept callable, so tests compare the two). */
uint32_t oq_crc32(uint32_t crc, const void *data, size_t n);
uint32_t oq_crc32_portable(uint32_t crc, const void *data, size_t n);

/* ---- UTF-8 (src/core/utf8.c) ------------------------------------------------------ */

/* U+FFFD, what stands for each byte of outside text that is not UTF-8. */
#define OQ_UTF8_REPLACEMENT "\xEF\xBF\xBD"
/* The length of the valid UTF-8 sequence at p (at most rem bytes, rem > 0); 0 when none
 * starts there (a stray byte, an overlong form, a surrogate, past U+10FFFF, cut short). */
size_t oq_utf8_len(const unsigned char *p, size_t rem);
/* A copy of s (caller frees) in which each byte that starts no valid sequence is U+FFFD:
 * nothing is dropped, and the result is valid UTF-8. NULL when out of memory. */
char *oq_utf8_lossy(const char *s);

/* ---- reals as text (src/core/real.c) ---------------------------------------------- */

/* Printed digits a reader can read back: v in the fewest "%.Ng" digits that strtod reads back
 * as exactly v, trying N from `digits` up to 17 ("nan", "inf", "-inf" for the others). %g drops
 * trailing zeros, so any `digits` up to 15 gives a value that needs fewer its fewest; `digits`
 * sets the form, fixed or exponent, as %.{digits}g would choose it (6: what %g prints; 10:
 * jansson's JSON_REAL_PRECISION(10)). A tolerance of 0.10008144378662108 is printed so, not
 * as 0.1, which hid why an output at max_rel 0.1000814438 failed. Returns buf. */
char *oq_real_str(double v, int digits, char *buf, size_t n);
/* v with `digits` significant digits, or as many more as it takes to read back above `bound`
 * when v is above it: a metric over its bound never prints at or below it (max_abs 0.00097656
 * against atol 0.0009765624 read as 0.000977 against 0.000977). Returns buf. */
char *oq_real_over_str(double v, double bound, int digits, char *buf, size_t n);
/* "[i,j,...]": flat element e of a row-major array of shape[0..rank) as its coordinates (a
 * size 0 read as 1). Returns buf. */
char *oq_coord_str(const int64_t *shape, int64_t rank, int64_t e, char *buf, size_t n);

#endif
