/* libFuzzer harness: the test-summary scanner of gate (oq_summary_scan_text)
 * and the judge over what it found (counts, skip reasons, the skip regex, the
 * earlier summaries, a runner's failure line). */
#include "fuzz.h"
#include "ortqual/gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_summary_scanner *s = NULL;
    char *text = fuzz_copy(data, size);
    if (oq_summary_scan_text(text, size, &s, &err) == OQ_OK) {
        oq_gate_outcome o = {.exit_code = 0, .summary = oq_summary_scanner_last(s),
                             .failed_before = oq_summary_scanner_failed_before(s),
                             .failure_line = oq_summary_scanner_failure_line(s)};
        o.n_earlier = oq_summary_scanner_earlier(s, &o.earlier);
        oq_gate_judgement j = {0};
        static const char *const allow[] = {"needs (CUDA|GPU)", "bf16"};
        if (oq_gate_judge(&o, allow, 2, NULL, &j, &err) == OQ_OK)
            oq_gate_judgement_clear(&j);
        oq_summary_scanner_free(s);
    }
    free(text);
    return 0;
}
