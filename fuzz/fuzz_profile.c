/* libFuzzer harness: ORT profile JSON (oq_placement_add_profile_text), then the
 * placement verdict, and its record written and read back (placement_record.h). */
#include "ortqual/placement.h"
#include "placement_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_placement *p = NULL;
    if (oq_placement_create(&p, &err) != OQ_OK) return 0;
    char *text = fuzz_copy(data, size);
    if (oq_placement_add_profile_text(p, text, size, "fuzz.json", &err) == OQ_OK) {
        oq_placement_report r = {0};
        if (oq_placement_check(p, OQ_PLACEMENT_STRICT, &r, &err) == OQ_OK) {
            fuzz_placement_record(p, &r);
            oq_placement_report_clear(&r);
        }
    }
    free(text);
    oq_placement_free(p);
    return 0;
}
