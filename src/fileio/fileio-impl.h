/* Internals of src/fileio shared across the library (never installed): JSON
 * documents written as files, atomically. */
#ifndef ORTQUAL_FILEIO_IMPL_H
#define ORTQUAL_FILEIO_IMPL_H

#include <jansson.h>
#include <stddef.h>

#include "ortqual/status.h"

/* `j` dumped with jansson's `flags` plus a final newline, written atomically
 * (replacing `path`). OQ_ERR_NOMEM when it cannot be serialized (or j is NULL). */
oq_status oq_json_write_file(const char *path, const json_t *j, size_t flags, oq_err *err);

#endif
