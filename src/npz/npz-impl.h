/* Internal: an .npz archive built in memory, for writers that also hash it or store the same
 * bytes in more than one place (validate's per-batch files and its reference cache). */
#ifndef ORTQUAL_NPZ_IMPL_H
#define ORTQUAL_NPZ_IMPL_H

#include <stddef.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* The bytes oq_npz_write would write for the same tensors (same checks, same layout; `who`
 * names the archive in errors), in *buf (malloc'ed, the caller frees it) of *len bytes. */
oq_status oq_npz_bytes(size_t n, const oq_tensor *const *tensors, int compress, const char *who, unsigned char **buf,
                       size_t *len, oq_err *err);

#endif
