/* Internal: the .npy image of a tensor in two pieces, so writers (the .npy file
 * writer, the .npz archive writer) can stream the data without copying it. */
#ifndef ORTQUAL_NPY_IMPL_H
#define ORTQUAL_NPY_IMPL_H

#include <stddef.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* 10-byte preamble + dict with up to OQ_MAX_DIMS 20-digit dims, padded to 64. */
#define OQ_NPY_HEADER_MAX 384

typedef struct oq_npy_parts {
    unsigned char header[OQ_NPY_HEADER_MAX]; /* magic, version 1.0, length, dict */
    size_t header_len;
    const void *payload; /* t->data, or `owned`: bfloat16 widened to float32, bools normalized */
    size_t payload_len;
    void *owned;
} oq_npy_parts;

/* Fill `p` for `t`; `t` must outlive `p`. Release with oq_npy_parts_release. */
/* The descr written for `dt` ("<f4" for bfloat16, widened), NULL for a dtype .npy cannot hold. */
const char *oq_npy_descr(oq_dtype dt);

oq_status oq_npy_parts_make(const oq_tensor *t, oq_npy_parts *p, oq_err *err);
void oq_npy_parts_release(oq_npy_parts *p);

#endif
