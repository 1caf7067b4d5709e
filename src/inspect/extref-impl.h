/* A tensor's external data (TensorProto.external_data: location, offset, length) as ORT reads
 * it, and whether its file holds those bytes: one rule for convert, which reads the data, and
 * for validate, bench and inspect, which leave reading it to ORT (a file cut short was ORT's raw
 * "GetExtDataFromTensorProto ... out of bounds" after the batches were written).
 */
#ifndef ORTQUAL_INSPECT_EXTREF_IMPL_H
#define ORTQUAL_INSPECT_EXTREF_IMPL_H

#include <stdint.h>

#include "onnx.pb-c.h"
#include "ortqual/status.h"

typedef struct oq_ext_ref {
    const char *location; /* t's, borrowed */
    int64_t offset, length;
} oq_ext_ref;

/* t's reference: its keys ORT reads (the last of one given twice), its location allowed
 * (oq_ext_location_check, no folder), its offset and length byte counts, the length the one
 * its type and shape need (0: not given, as ORT takes it). OQ_ERR_FORMAT "MODEL: initializer
 * 'w': ..." otherwise. */
oq_status oq_ext_ref_of(const char *model, const Onnx__TensorProto *t, oq_ext_ref *r, oq_err *err);
/* The file `path`, of `size` bytes, holds r's bytes; else OQ_ERR_FORMAT "MODEL: initializer 'w':
 * external data PATH holds 40 bytes, the tensor needs bytes 0..64". */
oq_status oq_ext_ref_fits(const char *model, const Onnx__TensorProto *t, const oq_ext_ref *r, const char *path,
                          int64_t size, oq_err *err);

#endif
