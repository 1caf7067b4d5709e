/* The encoder's documented weight list (names, shapes, initialisation kind). */
#ifndef ORTQUAL_EXPORT_WEIGHTS_IMPL_H
#define ORTQUAL_EXPORT_WEIGHTS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/export.h"

typedef enum { OQ_W_MATRIX, OQ_W_BIAS, OQ_W_LN_SCALE } oq_wkind;

typedef struct oq_wspec {
    char name[64];
    oq_wkind kind;
    int ndim;
    int64_t shape[OQ_MAX_DIMS];
} oq_wspec;

/* malloc'ed list in the canonical order; returns its length (0: out of memory). */
size_t oq_encoder_weight_specs(const oq_encoder_config *c, oq_wspec **out);

#endif
