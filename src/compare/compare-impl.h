/* Internals of src/compare shared across the library (never installed). */
#ifndef ORTQUAL_COMPARE_IMPL_H
#define ORTQUAL_COMPARE_IMPL_H

#include <jansson.h>

#include "ortqual/compare.h"

/* The result as a new JSON object (caller owns it: json_decref). Non-finite
 * numbers, which JSON cannot hold, are written as the strings "nan", "inf", "-inf". */
oq_status oq_compare_result_to_json(const oq_compare_result *res, json_t **out, oq_err *err);
/* The result back from that JSON (what a validation worker reported). OQ_ERR_FORMAT when
 * `j` is not such a record. */
oq_status oq_compare_result_from_json(const json_t *j, oq_compare_result *res, oq_err *err);

#endif
