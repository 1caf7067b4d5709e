/* libFuzzer harness: ORT's routing lines (oq_dispatch_parse_text) fed in two
 * chunks split at the first byte's position, then checked against expectations. */
#include "fuzz.h"
#include "ortqual/dispatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_dispatch_parser *p = NULL;
    if (oq_dispatch_parser_create(&p, &err) != OQ_OK) return 0;
    size_t cut = size ? data[0] % (size + 1) : 0; /* chunk boundaries must not matter */
    if (oq_dispatch_parser_feed(p, data, cut, &err) == OQ_OK &&
        oq_dispatch_parser_feed(p, data + cut, size - cut, &err) == OQ_OK &&
        oq_dispatch_parser_finish(p, &err) == OQ_OK) {
        oq_dispatch_expect *e = NULL;
        if (oq_dispatch_expect_create(&e, &err) == OQ_OK) {
            oq_dispatch_report r = {0};
            if (oq_dispatch_expect_add(e, "FLASH_ATTENTION", &err) == OQ_OK &&
                oq_dispatch_expect_add(e, "attn1=MATH", &err) == OQ_OK &&
                oq_dispatch_check(e, oq_dispatch_parser_log(p), &r, &err) == OQ_OK)
                oq_dispatch_report_clear(&r);
            oq_dispatch_expect_free(e);
        }
    }
    oq_dispatch_parser_free(p);
    return 0;
}
