/* libFuzzer harness: ONNX model inspection (oq_model_inspect_bytes) and its JSON. */
#include "fuzz.h"
#include "ortqual/inspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_model_info *mi = NULL;
    if (oq_model_inspect_bytes(data, size, "fuzz.onnx", &mi, &err) == OQ_OK) {
        free(oq_model_info_json(mi));
        oq_model_info_free(mi);
    }
    return 0;
}
