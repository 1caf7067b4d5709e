/* libFuzzer harness: .npy bytes (oq_npy_parse), and the written image of what parsed. */
#include "fuzz.h"
#include "ortqual/npz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_tensor *t = NULL;
    if (oq_npy_parse(data, size, "fuzz.npy", &t, &err) == OQ_OK) {
        unsigned char *img = NULL;
        size_t n = 0;
        if (oq_npy_serialize(t, &img, &n, &err) == OQ_OK) free(img);
        oq_tensor_free(t);
    }
    return 0;
}
