/* onnx.TensorProto: the serialized tensors of ONNX models and of ONNX backend
 * tests (test_data_set_N/input_M.pb, output_M.pb).
 *
 * Read: data in raw_data (little-endian, one byte per bool) or in the typed
 * fields ONNX defines: float_data (FLOAT), double_data (DOUBLE), int64_data
 * (INT64), int32_data (INT32; FLOAT16 and BFLOAT16 as their 16-bit patterns;
 * BOOL as 0/1). The data types are the seven of ortqual/tensor.h (the enum
 * values are ONNX's). Refused, one line naming the file and tensor: other data
 * types (by ONNX name, e.g. "unsupported data type UINT8 (2)"), external data,
 * segments, both raw_data and a typed field, a value count that does not match
 * the shape, a 16-bit pattern out of range, rank above OQ_MAX_DIMS.
 *
 * Write: raw_data, little-endian; dims, data_type and (if set) the name.
 * Files are written atomically (ortqual/fileio.h).
 *
 * The library's model code converts tensors to and from the protobuf-c structs
 * themselves through src/tensorproto/tensorproto-impl.h (not installed).
 */
#ifndef ORTQUAL_TENSORPROTO_H
#define ORTQUAL_TENSORPROTO_H

#include <stddef.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a .pb file holding one TensorProto; the tensor is named after the
 * proto's name (unnamed if it has none). Errors start with the path. */
OQ_API oq_status oq_tensorproto_read(const char *path, oq_tensor **out, oq_err *err);

/* Same from bytes; `name_for_errors` (NULL: "<memory>") starts every error. */
OQ_API oq_status oq_tensorproto_parse(const void *buf, size_t n, const char *name_for_errors,
                                      oq_tensor **out, oq_err *err);

/* Serialize `t` as a TensorProto into a malloc'ed buffer the caller frees. */
OQ_API oq_status oq_tensorproto_serialize(const oq_tensor *t, unsigned char **buf, size_t *n,
                                          oq_err *err);

/* Write `t` as a .pb file, atomically; overwrite == 0 refuses an existing file. */
OQ_API oq_status oq_tensorproto_write(const char *path, const oq_tensor *t, int overwrite, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
