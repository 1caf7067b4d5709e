/* Shared by the placement harnesses: the record a validation worker writes
 * (oq_placement_to_json, library-internal) read back as the parent reads it
 * (oq_placement_from_json). What was written must come back whole: a node or
 * failure lost on the way would change the verdict the parent reports. */
#ifndef ORTQUAL_FUZZ_PLACEMENT_RECORD_H
#define ORTQUAL_FUZZ_PLACEMENT_RECORD_H

#include <jansson.h>
#include <stdio.h>

#include "fuzz.h"
#include "placement/placement-impl.h"

static inline void fuzz_placement_record(const oq_placement *p, const oq_placement_report *r)
{
    json_t *j = oq_placement_to_json(p, r);
    if (!j) return; /* out of memory */
    oq_err err = {0};
    oq_placement *back = NULL;
    oq_placement_report rb = {0};
    if (oq_placement_from_json(j, &back, &rb, &err) != OQ_OK) {
        fprintf(stderr, "placement record not read back: %s\n", err.msg);
        abort();
    }
    if (back->n_nodes != p->n_nodes || back->n_eps != p->n_eps || rb.passed != r->passed ||
        rb.n_failures != r->n_failures || rb.n_notes != r->n_notes) {
        fprintf(stderr, "placement record changed on the way: nodes %zu -> %zu, eps %zu -> %zu, "
                        "passed %d -> %d, failures %zu -> %zu, notes %zu -> %zu\n",
                p->n_nodes, back->n_nodes, p->n_eps, back->n_eps, r->passed, rb.passed, r->n_failures,
                rb.n_failures, r->n_notes, rb.n_notes);
        abort();
    }
    oq_placement_report_clear(&rb);
    oq_placement_free(back);
    json_decref(j);
}

#endif
