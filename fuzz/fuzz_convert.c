/* libFuzzer harness: the convert passes over a model in memory (the shared attention
 * matcher, the mask analysis, the rewrites, the opset check, the serializer), as
 * `ortqual convert` runs them before its ORT check, then the plan as JSON.
 *
 * Input: two option bytes, then the ONNX model.
 *   byte 0: bits 0-4 the passes (oq_convert_pass), bits 5-6 the attention dtype
 *           (none, float16, bfloat16, none), bit 7 allow_refused
 *   byte 1: bits 0-3 the opset (0: the lowest the passes need, else 12 + value:
 *           13..24 and 25..27, which are refused), bit 4 keep_elu, bit 5 mask_input "mask",
 *           bit 6 OQ_CONVERT_PAD_HEAD asked for, bit 7 keep_head_size (padding is on by
 *           default with an attention dtype)
 * A converted model must be one `inspect` reads: anything else is a finding (abort). */
#include <stdio.h>

#include "convert/convert-impl.h"
#include "fuzz.h"
#include "ortqual/inspect.h"

static void options(uint8_t b0, uint8_t b1, oq_convert_opts *o)
{
    static const oq_dtype dtypes[4] = {OQ_DTYPE_UNDEFINED, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16, OQ_DTYPE_UNDEFINED};
    oq_convert_opts_default(o);
    o->passes = b0 & 0x1fu;
    o->attention_dtype = dtypes[(b0 >> 5) & 3u];
    o->allow_refused = b0 >> 7;
    o->opset = (b1 & 0xfu) ? 12 + (b1 & 0xfu) : 0;
    o->keep_elu = (b1 >> 4) & 1u;
    o->mask_input = (b1 >> 5) & 1u ? "mask" : NULL;
    if ((b1 >> 6) & 1u) o->passes |= OQ_CONVERT_PAD_HEAD;
    o->keep_head_size = b1 >> 7;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    oq_convert_opts o;
    options(data[0], data[1], &o);
    oq_err err = {0};
    oq_convert_report *r = NULL;
    uint8_t *conv = NULL;
    size_t conv_n = 0;
    oq_status st = cv_convert_bytes(data + 2, size - 2, "fuzz.onnx", NULL, &o, &r, &conv, &conv_n, &err);
    if (r) free(oq_convert_report_json(r));
    oq_convert_report_free(r);
    if (st == OQ_OK) {
        oq_model_info *mi = NULL;
        if (oq_model_inspect_bytes(conv, conv_n, "converted.onnx", &mi, &err) != OQ_OK) {
            fprintf(stderr, "fuzz_convert: the converted model does not inspect: %s\n", err.msg);
            abort();
        }
        oq_model_info_free(mi);
    }
    free(conv);
    return 0;
}
