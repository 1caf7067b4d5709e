/* Internal: an .npz archive built in memory, for writers that also hash it or store the same
 * bytes in more than one place (validate's per-batch files and its reference cache); and the
 * two ways oq_npz_parse reads one, apart, for the tests and bench/npz_read.c. */
#ifndef ORTQUAL_NPZ_IMPL_H
#define ORTQUAL_NPZ_IMPL_H

#include <stddef.h>

#include "ortqual/npz.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* The bytes oq_npz_write would write for the same tensors (same checks, same layout; `who`
 * names the archive in errors), in *buf (malloc'ed, the caller frees it) of *len bytes. */
oq_status oq_npz_bytes(size_t n, const oq_tensor *const *tensors, int compress, const char *who, unsigned char **buf,
                       size_t *len, oq_err *err);

/* oq_npz_write, and the SHA-256 of the bytes written (hashed as they are written: a caller that
 * names the file by its content need not read it back). */
oq_status oq_npz_write_sha256(const char *path, size_t n, const oq_tensor *const *tensors, int compress, int overwrite,
                              char sha[65], oq_err *err);
/* The archive's comment (the end record's; numpy and libzip ignore it) set to `comment` on an
 * archive of oq_npz_bytes (which writes none): *buf grown. What saved outputs record of their
 * producer (validate --save-outputs). OQ_ERR_FORMAT when *buf ends in no end record without a
 * comment, OQ_ERR_INVALID_ARG for a comment over 65535 bytes. */
oq_status oq_npz_set_comment(unsigned char **buf, size_t *len, const char *comment, oq_err *err);
/* The comment of the archive at `path` (malloc'ed into *comment; NULL when it has none, or the
 * file is no archive, which its reader says). OQ_ERR_IO when the file cannot be read or is not a
 * regular file (a FIFO is refused, not waited on). */
oq_status oq_npz_comment_read(const char *path, char **comment, oq_err *err);
/* The comment of the archive in b[0..n) (malloc'ed into *comment, NULL when none); 0 when out of
 * memory. */
int oq_npz_comment_of(const unsigned char *b, size_t n, char **comment);

/* oq_npz_parse's fast path, the same arguments: a plain archive (one disk, no ZIP64, every
 * member stored, headers that agree, all inside `buf`) read straight from `buf`, each member's
 * CRC checked. Anything else sets *out to NULL and returns OQ_OK: libzip's to read. */
oq_status oq_npz_parse_plain(const void *buf, size_t n, const char *name_for_errors, oq_npz **out, oq_err *err);
/* oq_npz_parse through libzip, whatever the archive. */
oq_status oq_npz_parse_libzip(const void *buf, size_t n, const char *name_for_errors, oq_npz **out, oq_err *err);
/* oq_npz_read through libzip, which streams the file member by member (large files). */
oq_status oq_npz_read_libzip(const char *path, oq_npz **out, oq_err *err);

/* Tensor `t`, read from a file, made the type `want` of the model's input it feeds: numpy has no
 * bfloat16, so a bfloat16 input also takes float32 whose every value bfloat16 holds exactly
 * (narrowed here, in place; the first value it does not hold is refused by position, `what`
 * naming the tensor). Any other pair is left alone, for the caller's type check to refuse
 * with oq_npz_accepted. */
oq_status oq_npz_feed_as(oq_tensor *t, oq_dtype want, const char *what, oq_err *err);
/* "accepted: ..." for an input of type `want`, into buf: the .npz forms oq_npz_feed_as takes. */
char *oq_npz_accepted(oq_dtype want, char *buf, size_t n);

/* Outputs saved for a batch of inputs (`saved`, another file paired with `inputs` by order):
 * where both hold an `event_indices` member, the same ids in the same order (compared exactly),
 * else OQ_ERR_INVALID_ARG naming both paths and the first position and ids that differ. */
oq_status oq_npz_same_events(const oq_npz *inputs, const char *inputs_path, const oq_npz *saved,
                             const char *saved_path, oq_err *err);

#endif
