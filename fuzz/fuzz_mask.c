/* libFuzzer harness: the mask contract (oq_mask_check), then sanitizing
 * features with the lengths it returned. Input: byte 0 picks the dtype,
 * bytes 1-2 the batch and padded length (0..15 each), the rest is mask data. */
#include "fuzz.h"
#include "ortqual/mask.h"

static const oq_dtype dtypes[] = {OQ_DTYPE_BOOL,    OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16,
                                  OQ_DTYPE_BFLOAT16, OQ_DTYPE_FLOAT64, OQ_DTYPE_INT32,
                                  OQ_DTYPE_INT64,   OQ_DTYPE_UNDEFINED};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    oq_dtype dt = dtypes[data[0] % (sizeof dtypes / sizeof *dtypes)];
    int64_t shape[3] = {data[1] & 15, data[2] & 15, 3};
    oq_err err = {0};
    oq_tensor *mask = NULL, *feat = NULL;
    if (oq_tensor_create(&mask, dt, 2, shape, "mask", &err) != OQ_OK) return 0;
    size_t n = oq_tensor_nbytes(mask);
    memcpy(mask->data, data + 3, n < size - 3 ? n : size - 3);
    int64_t lengths[16];
    if (oq_tensor_create(&feat, OQ_DTYPE_FLOAT32, 3, shape, "features", &err) == OQ_OK &&
        oq_mask_check(mask, feat, lengths, &err) == OQ_OK)
        oq_mask_sanitize(feat, lengths, &err);
    oq_tensor_free(feat);
    oq_tensor_free(mask);
    return 0;
}
