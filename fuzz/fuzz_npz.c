/* libFuzzer harness: .npz archives (oq_npz_parse, libzip from memory). */
#include "fuzz.h"
#include "ortqual/npz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_npz *z = NULL;
    if (oq_npz_parse(data, size, "fuzz.npz", &z, &err) == OQ_OK) {
        oq_tensor *t = NULL;
        if (z->count && oq_npz_take(z, z->tensors[0]->name, &t, &err) == OQ_OK) oq_tensor_free(t);
        oq_npz_free(z);
    }
    return 0;
}
