/* The mask contract's check with the advice fitted to who fixed the polarity (mask.h). */
#ifndef ORTQUAL_MASK_IMPL_H
#define ORTQUAL_MASK_IMPL_H

#include "ortqual/mask.h"

/* Who fixed the polarity a mask is read in: what a row padded first can be advised. */
typedef enum oq_mask_reader {
    OQ_MASK_READ_ORTQUAL = 0, /* ortqual's own models and C encoder: 1 = valid alone (advice: 1 - mask) */
    OQ_MASK_READ_CHOSEN,      /* the caller's choice (advice: the other polarity) */
    OQ_MASK_READ_GRAPH,       /* the model's graph reads it so: the other polarity would judge the
                                 positions it ignores (advice: pad each row at its end) */
} oq_mask_reader;

/* oq_mask_check_polarity with the left-padding advice of `by`. */
oq_status oq_mask_check_read(const oq_tensor *mask, const oq_tensor *features, oq_mask_polarity polarity,
                             oq_mask_reader by, int64_t *lengths_out, oq_err *err);

#endif
