/* NumPy .npy and .npz files, readable and writable by numpy both ways.
 *
 * Read: .npy format versions 1.0, 2.0 and 3.0, C order, little-endian, dtypes
 *
 *     descr   '<f4'    '<f2'    '<f8'    '<i8'  '<i4'  '|b1'  '|u1'  '|i1'  '<u2'   '<i2'  '<u4'   '<u8'
 *     dtype   float32  float16  float64  int64  int32  bool   uint8  int8   uint16  int16  uint32  uint64
 *
 * ('=' and '|' byte-order marks are accepted for the same types; bool bytes
 * other than 0 read as 1), and '<V2' / '|V2' read as bfloat16 bits: what numpy.save
 * writes for an ml_dtypes.bfloat16 array (docs/files.md, "bfloat16 policy").
 * Everything else is refused by name, one line naming the file (and the .npz
 * member): Fortran order, object arrays ('|O'), big-endian ('>f4'), other
 * dtypes ('<c8', '<U3', '<V4', structured), rank above OQ_MAX_DIMS, a malformed
 * header, truncated or trailing data.
 * A .npz is a zip archive (stored or deflated, zip64 included) of
 * "<name>.npy" members; each becomes a tensor called <name>. Before a member is
 * allocated, the size its directory entry declares must be possible: at most
 * OQ_READ_MAX (ortqual/fileio.h, 16 GiB), compressed bytes inside the archive, and
 * at most 1032 times those (deflate's best ratio); a lie is refused by name.
 *
 * Write: format version 1.0, the descr above. numpy has no bfloat16, so a
 * bfloat16 tensor is written as '<f4' (float32 widening is exact, so nothing
 * is lost; it reads back as float32 and oq_tensor_convert gives back the same
 * bfloat16 bits). Output files are written atomically (ortqual/fileio.h).
 *
 * Scalars (shape ()) and zero-size arrays work everywhere.
 */
#ifndef ORTQUAL_NPZ_H
#define ORTQUAL_NPZ_H

#include <stddef.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- .npy ---- */

/* Read one .npy file into a new tensor (owned by the caller, unnamed). */
OQ_API oq_status oq_npy_read(const char *path, oq_tensor **out, oq_err *err);

/* Parse .npy bytes. `name_for_errors` (e.g. "x.npz: member 'a'") starts every
 * error message; NULL means "<memory>". The tensor is unnamed. */
OQ_API oq_status oq_npy_parse(const void *buf, size_t n, const char *name_for_errors, oq_tensor **out,
                              oq_err *err);

/* Write `t` as a .npy file, atomically; overwrite == 0 refuses an existing file. */
OQ_API oq_status oq_npy_write(const char *path, const oq_tensor *t, int overwrite, oq_err *err);

/* Serialize `t` to a malloc'ed .npy image (*buf, *n); the caller frees *buf. */
OQ_API oq_status oq_npy_serialize(const oq_tensor *t, unsigned char **buf, size_t *n, oq_err *err);

/* ---- .npz ---- */

/* A set of named tensors as read from a .npz file. */
typedef struct oq_npz {
    size_t count;
    oq_tensor **tensors; /* owned, each named after its member without ".npy", archive order */
    char *path;          /* owned; the file read, used in error messages */
} oq_npz;

/* Read a .npz file. Members must all be .npy files with distinct names. */
OQ_API oq_status oq_npz_read(const char *path, oq_npz **out, oq_err *err);

/* Same from an in-memory archive; `name_for_errors` plays the part of the path. */
OQ_API oq_status oq_npz_parse(const void *buf, size_t n, const char *name_for_errors, oq_npz **out,
                              oq_err *err);

/* The tensor called `name` (still owned by `z`), or NULL if absent. */
OQ_API const oq_tensor *oq_npz_get(const oq_npz *z, const char *name);

/* Detach the tensor called `name` from `z`: *out now belongs to the caller and
 * `z` no longer lists it. If absent: OQ_ERR_NOT_FOUND, the message naming the
 * file, the member and the members present. */
OQ_API oq_status oq_npz_take(oq_npz *z, const char *name, oq_tensor **out, oq_err *err);

/* Free the set and every tensor still in it. NULL is fine. */
OQ_API void oq_npz_free(oq_npz *z);

/* Write `n` tensors as a .npz file. Each must have a non-empty name (the member
 * is "<name>.npy"); duplicate names are refused. `compress` != 0 deflates the
 * members like numpy.savez_compressed, else they are stored like numpy.savez.
 * Atomic: the archive goes to a temporary file in the same directory and is
 * renamed into place; overwrite == 0 refuses an existing file. */
OQ_API oq_status oq_npz_write(const char *path, size_t n, const oq_tensor *const *tensors, int compress,
                              int overwrite, oq_err *err);
/* The same, replacing `path`, without the fsync (oq_atomic_file.no_sync: whole for readers,
 * not durable across a machine crash): a run's per-batch files. */
OQ_API oq_status oq_npz_write_nosync(const char *path, size_t n, const oq_tensor *const *tensors, int compress,
                                     oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
