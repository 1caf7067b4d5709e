/* Atomic file output: nothing half-written is ever left at the final path.
 *
 * oq_atomic_open creates "<path>.tmp.XXXXXX" in the same directory (so the
 * final rename stays on one filesystem); oq_atomic_commit flushes, fsyncs and
 * renames it over `path`; oq_atomic_abort closes and removes it. With
 * `overwrite == 0`, commit refuses to replace an existing file (checked at
 * commit time with link(2), so a race cannot clobber it either).
 */
#ifndef ORTQUAL_FILEIO_H
#define ORTQUAL_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oq_atomic_file {
    FILE *fp;      /* write here */
    char *path;    /* final path (owned) */
    char *tmp;     /* temporary path (owned) */
    int overwrite;
} oq_atomic_file;

OQ_API oq_status oq_atomic_open(oq_atomic_file *af, const char *path, int overwrite, oq_err *err);
OQ_API oq_status oq_atomic_commit(oq_atomic_file *af, oq_err *err);
OQ_API void oq_atomic_abort(oq_atomic_file *af);

/* Write a whole buffer atomically. */
OQ_API oq_status oq_write_file_atomic(const char *path, const void *buf, size_t n, int overwrite,
                                      oq_err *err);
/* Read a whole file into a malloc'ed buffer (NUL-terminated for convenience). */
OQ_API oq_status oq_read_file(const char *path, unsigned char **buf, size_t *n, oq_err *err);
/* mkdir -p with mode 0755. */
OQ_API oq_status oq_mkdirs(const char *path, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
