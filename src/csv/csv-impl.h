/* Internals of src/csv shared across the library (never installed). */
#ifndef ORTQUAL_CSV_IMPL_H
#define ORTQUAL_CSV_IMPL_H

#include <jansson.h>

#include "ortqual/csv.h"

/* oq_csv_read_json from a JSON document already read; `name` is used in messages. */
oq_status oq_csv_from_json(const json_t *doc, const char *name, oq_csv **out, oq_err *err);

#endif
