/* Internal: the node table shared by the placement sources, and the record as JSON. */
#ifndef ORTQUAL_PLACEMENT_IMPL_H
#define ORTQUAL_PLACEMENT_IMPL_H

#include <jansson.h>

#include "ortqual/placement.h"

/* The node named `name` (created with `op_type` if new), NULL when out of memory.
 * Lookups start after the previous hit, so events in graph order cost O(1). */
oq_placed_node *oq_placement_node_(oq_placement *p, const char *name, const char *op_type);

/* Replace *dst with a copy of src; false when out of memory. */
bool oq_placement_set_str_(char **dst, const char *src);

/* The whole record as a new jansson object (caller owns the reference):
 * {"passed", "strict", "sources": {"assignment", "profile"}, "counts": {...},
 *  "eps": [{"ep", "nodes", "runs", "us"}], "failures": [...], "notes": [...],
 *  "nodes": [{"name", "op", "ep_assigned", "ep_profiled", "class", "reason",
 *             "runs", "us", "inputs": [{"dtype", "shape"}], "outputs": [...]}]}.
 * `r` may be NULL (no verdict fields). NULL on allocation failure. */
json_t *oq_placement_to_json(const oq_placement *p, const oq_placement_report *r);
/* The record back from that JSON (what a validation worker reported): a new placement in
 * *out and the verdict fields in *r. OQ_ERR_FORMAT when `j` is no such record. */
oq_status oq_placement_from_json(const json_t *j, oq_placement **out, oq_placement_report *r, oq_err *err);

#endif
