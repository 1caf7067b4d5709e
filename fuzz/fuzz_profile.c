/* libFuzzer harness: ORT profile JSON (oq_placement_add_profile_text), then the
 * placement verdict and its JSON record over what was read. */
#include <jansson.h>

#include "fuzz.h"
#include "ortqual/placement.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_placement *p = NULL;
    if (oq_placement_create(&p, &err) != OQ_OK) return 0;
    char *text = fuzz_copy(data, size);
    if (oq_placement_add_profile_text(p, text, size, "fuzz.json", &err) == OQ_OK) {
        oq_placement_report r = {0};
        if (oq_placement_check(p, OQ_PLACEMENT_STRICT, &r, &err) == OQ_OK) {
            json_decref(oq_placement_to_json(p, &r));
            oq_placement_report_free(&r);
        }
    }
    free(text);
    oq_placement_free(p);
    return 0;
}
