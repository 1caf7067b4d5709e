/* libFuzzer harness: the summary.json scanner (oq_json_scan_fp) that hands each batch record
 * to a callback, and report.html's count over those records (oq_vd_scan's first pass). */
#include "fileio/fileio-impl.h"
#include "fuzz.h"

static oq_status count(void *ctx, long which, json_t *rec, oq_err *err)
{
    (void)err;
    *(size_t *)ctx += (size_t)(which + 2) + json_object_size(rec);
    return OQ_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    size_t seen = 0;
    FILE *in = size ? fmemopen((void *)data, size, "r") : NULL;
    if (!in) return 0;
    json_t *doc = oq_json_scan_fp(in, "fuzz", size % 2 ? OQ_JSON_SCAN_PLAN_BATCHES : 0, count, &seen, &err);
    json_decref(doc);
    fclose(in);
    return 0;
}
