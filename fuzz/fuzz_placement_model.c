/* libFuzzer harness: the placement model reader (oq_placement_add_model_bytes).
 * Input: an ORT profile (JSON text), a NUL byte, then ONNX model bytes; the
 * profile names the nodes whose types the model then fills in. */
#include "ortqual/placement.h"
#include "placement_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul) return 0;
    size_t jlen = (size_t)(nul - data);
    oq_err err = {0};
    oq_placement *p = NULL;
    if (oq_placement_create(&p, &err) != OQ_OK) return 0;
    if (oq_placement_add_profile_text(p, (const char *)data, jlen, "fuzz.json", &err) == OQ_OK &&
        oq_placement_add_model_bytes(p, nul + 1, size - jlen - 1, "fuzz.onnx", &err) == OQ_OK) {
        oq_placement_report r = {0};
        if (oq_placement_check(p, 0, &r, &err) == OQ_OK) {
            fuzz_placement_record(p, &r);
            oq_placement_report_clear(&r);
        }
    }
    oq_placement_free(p);
    return 0;
}
