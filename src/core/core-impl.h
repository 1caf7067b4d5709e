/* Internals shared across the library (never installed). */
#ifndef ORTQUAL_CORE_IMPL_H
#define ORTQUAL_CORE_IMPL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"

/* Seconds on CLOCK_MONOTONIC: only differences mean anything. */
double oq_now_s(void);

/* `j` dumped with jansson's `flags` plus a final newline, written atomically
 * (replacing `path`). OQ_ERR_NOMEM when it cannot be serialized (or j is NULL). */
oq_status oq_json_write_file(const char *path, const json_t *j, size_t flags, oq_err *err);

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
oq_status oq_sha256_file(const char *path, char hex[65], oq_err *err);

#endif
