/* Internal to the library: the JSON form of a dispatch failure, which summary.json (validate)
 * and the gate's verdict.json both write. */
#ifndef OQ_DISPATCH_IMPL_H
#define OQ_DISPATCH_IMPL_H

#include <jansson.h>

#include "ortqual/dispatch.h"

/* {"kind", "node", "op", "dtype", "kernel", "expected", "line"} (docs/summary-schema.md);
 * NULL when out of memory. */
json_t *oq_dispatch_failure_json(const oq_dispatch_failure *f);

#endif
