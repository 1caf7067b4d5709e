/* Internal: the node table shared by the placement sources. */
#ifndef ORTQUAL_PLACEMENT_IMPL_H
#define ORTQUAL_PLACEMENT_IMPL_H

#include "ortqual/placement.h"

/* The node named `name` (created with `op_type` if new), NULL when out of memory.
 * Lookups start after the previous hit, so events in graph order cost O(1). */
oq_placed_node *oq_placement_node_(oq_placement *p, const char *name, const char *op_type);

/* Replace *dst with a copy of src; false when out of memory. */
bool oq_placement_set_str_(char **dst, const char *src);

#endif
