/* Internals of src/csv shared across the library (never installed). */
#ifndef ORTQUAL_CSV_IMPL_H
#define ORTQUAL_CSV_IMPL_H

#include <jansson.h>

#include "core/core-impl.h"
#include "ortqual/csv.h"

/* oq_csv_read_json from a JSON document already read; `name` is used in messages. */
oq_status oq_csv_from_json(const json_t *doc, const char *name, oq_csv **out, oq_err *err);
/* Where a row is, for messages: "summary.csv:14", or "summary.json: record 3" for a table read
 * from JSON records (their index, not a line). */
void oq_csv_where(const oq_csv *t, size_t row, char *buf, size_t n);
/* One dimension of a `dims` text ("batch=2;seq=128") appended at buf+used: `sep` first unless
 * used is 0, then NAME=VALUE with a '\\' before each '\\', ';', '=' or space of the name, so that
 * any model's names (torch.export's "s0 + 1", "x;y") read back as written. Returns the new used. */
size_t oq_csv_dims_append(char *buf, size_t n, size_t used, const char *sep, const char *name, long long value);
/* The same item added to a growable buffer, never cut (`sep` first unless `b` is empty): a row's
 * identity holds every dimension whatever their names' length. OQ_ERR_NOMEM. */
oq_status oq_csv_dims_add(oq_dynbuf *b, const char *sep, const char *name, long long value);
/* The dims text's next item at *p: its name unescaped into name[n], its value text after the
 * '=' in *value (NULL when there is no unescaped '='); *p moves past the item and its ';'.
 * Returns the item's end. */
const char *oq_csv_dims_next(const char **p, char *name, size_t n, const char **value);

#endif
