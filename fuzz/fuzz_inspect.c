/* libFuzzer harness: ONNX model inspection (oq_model_inspect_bytes) and its JSON; and the
 * copy a file's inspection unpacks (every initializer's raw data left out, counts kept). */
#include "fuzz.h"
#include "inspect/model-impl.h"
#include "ortqual/inspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_model_info *mi = NULL;
    if (oq_model_inspect_bytes(data, size, "fuzz.onnx", &mi, &err) == OQ_OK) {
        free(oq_model_info_json(mi));
        oq_model_info_free(mi);
    }
    Onnx__ModelProto *m = NULL;
    if (oq_model_unpack_lean(data, size, 0, &m) && m) {
        if (oq_model_inspect_proto(m, "fuzz.onnx", &mi, &err) == OQ_OK) {
            free(oq_model_info_json(mi));
            oq_model_info_free(mi);
        }
        onnx__model_proto__free_unpacked(m, NULL);
    }
    return 0;
}
