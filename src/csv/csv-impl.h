/* Internals of src/csv shared across the library (never installed). */
#ifndef ORTQUAL_CSV_IMPL_H
#define ORTQUAL_CSV_IMPL_H

#include <jansson.h>

#include "ortqual/csv.h"

/* oq_csv_read_json from a JSON document already read; `name` is used in messages. */
oq_status oq_csv_from_json(const json_t *doc, const char *name, oq_csv **out, oq_err *err);
/* Where a row is, for messages: "summary.csv:14", or "summary.json: record 3" for a table read
 * from JSON records (their index, not a line). */
void oq_csv_where(const oq_csv *t, size_t row, char *buf, size_t n);

#endif
