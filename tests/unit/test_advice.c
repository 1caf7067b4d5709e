/* Dispatch advice: one test per ORT rule, plus the cases with nothing to say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/advice.h"

static oq_attention_facts fp16_nonpad(void)
{
    return (oq_attention_facts){.node = "attn0", .opset = 24, .dtype = OQ_DTYPE_FLOAT16,
                                .mask = OQ_ATTN_MASK_NONPAD_KV_SEQLEN, .q_len = 256, .kv_len = 256};
}

static oq_advice advise(const char *obs, const char *exp, const oq_attention_facts *f)
{
    oq_advice a;
    oq_err err = {0};
    assert_int_equal(oq_dispatch_advice(obs, exp, f, &a, &err), OQ_OK);
    return a;
}

static void assert_has(const char *text, const char *needle)
{
    if (!text || !strstr(text, needle)) fail_msg("'%s' not in advice: %s", needle, text ? text : "(null)");
}

/* Facts table row: fp16, bool attn_mask, kv 1001 -> MATH. Both rules fire. */
static void test_bool_mask_odd_length(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.mask = OQ_ATTN_MASK_BOOL;
    f.q_len = f.kv_len = 1001;
    oq_advice a = advise("MATH", NULL, &f);
    assert_int_equal(a.rules, OQ_ADVICE_MASK_NO_FLASH | OQ_ADVICE_MASK_KV_ALIGN);
    assert_has(a.text, "attn0 ran MATH: flash is never used when an attn_mask is given (here a bool mask)");
    assert_has(a.text, "multiple of 4 (here 1001)");
    assert_has(a.text, "To reach FLASH_ATTENTION: give padding as nonpad_kv_seqlen instead of an "
                       "attn_mask (the attention24 export's default, --mask-form seqlen)");
    assert_has(a.text, "(configuration cuda:attention24:fp16:flash).");
    oq_advice_clear(&a);
    assert_null(a.text);
    f.opset = 23; /* Attention-23 has no nonpad_kv_seqlen: the export must change */
    a = advise("MATH", NULL, &f);
    assert_has(a.text, "To reach FLASH_ATTENTION: export as attention24 so that padding goes through "
                       "nonpad_kv_seqlen, not attn_mask (Attention-23 has no nonpad_kv_seqlen)");
    oq_advice_clear(&a);
}

/* bool mask at a length % 4 == 0 ran EFFICIENT: when flash was expected, only the mask rule. */
static void test_mask_blocks_flash_only(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.mask = OQ_ATTN_MASK_FLOAT;
    oq_advice a = advise("EFFICIENT_ATTENTION", "flash", &f);
    assert_int_equal(a.rules, OQ_ADVICE_MASK_NO_FLASH);
    assert_has(a.text, "attn0 ran EFFICIENT_ATTENTION, expected FLASH_ATTENTION: ");
    assert_has(a.text, "(here a float mask)");
    oq_advice_clear(&a);
    /* the same run, nothing expected: EFFICIENT is fused, nothing to explain */
    a = advise("EFFICIENT_ATTENTION", NULL, &f);
    assert_int_equal(a.rules, 0);
    assert_null(a.text);
}

static void test_efficient_expected_mask_alignment(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.mask = OQ_ATTN_MASK_BOOL;
    f.opset = 23;
    f.kv_len = 1002;
    oq_advice a = advise("MATH", "EFFICIENT_ATTENTION", &f);
    assert_int_equal(a.rules, OQ_ADVICE_MASK_KV_ALIGN);
    assert_has(a.text, "(here 1002)");
    assert_has(a.text, "(Attention-23 has no nonpad_kv_seqlen)");
    assert_has(a.text, "or pad the kv length to a multiple of 4");
    assert_has(a.text, "cuda:attention24:fp16:efficient");
    oq_advice_clear(&a);
}

/* Facts table: fp32 with nonpad_kv_seqlen ran EFFICIENT; flash has no fp32 kernel. */
static void test_fp32_has_no_flash(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.dtype = OQ_DTYPE_FLOAT32;
    oq_advice a = advise("EFFICIENT_ATTENTION", "flash", &f);
    assert_int_equal(a.rules, OQ_ADVICE_FP32_NO_FLASH);
    assert_has(a.text, "flash has no float32 kernel");
    assert_has(a.text, "compute attention in float16 (precision fp16, --attention-dtype float16)");
    assert_has(a.text, "(configuration cuda:attention24:fp16:flash)");
    oq_advice_clear(&a);
}

/* Facts table: cuDNN forced (sdpa_kernel 8) at prefill q_len 2 -> MATH. */
static void test_cudnn_is_decode_only(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.q_len = f.kv_len = 2;
    f.sdpa_kernel = 8;
    oq_advice a = advise("MATH", "cudnn", &f);
    assert_int_equal(a.rules, OQ_ADVICE_CUDNN_DECODE_ONLY);
    assert_has(a.text, "the cuDNN tier serves decoding only");
    assert_has(a.text, "here q_len 2");
    assert_has(a.text, "To reach a fused kernel: outside decoding steps use FLASH_ATTENTION (kernel flash)");
    oq_advice_clear(&a);

    f.q_len = 1; /* a decode step with a bool mask, float32 and softcap: every limit named */
    f.mask = OQ_ATTN_MASK_BOOL;
    f.dtype = OQ_DTYPE_FLOAT32;
    f.softcap = true;
    a = advise("MATH", NULL, &f);
    assert_true(a.rules & OQ_ADVICE_CUDNN_DECODE_ONLY);
    assert_true(a.rules & OQ_ADVICE_KERNEL_DISABLED);
    assert_has(a.text, "here mask bool, float32, softcap");
    assert_has(a.text, "sdpa_kernel=8 does not enable FLASH_ATTENTION (bit 1)");
    oq_advice_clear(&a);

    f = fp16_nonpad(); /* a real decode step fits: CUDNN ran, nothing to say */
    f.q_len = 1;
    f.sdpa_kernel = 8;
    a = advise("CUDNN_FLASH_ATTENTION", "cudnn", &f);
    assert_null(a.text);
}

/* --prove-teeth: sdpa_kernel 16 forces MATH; that alone is the explanation. */
static void test_forced_math(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.sdpa_kernel = 16;
    f.mask = OQ_ATTN_MASK_BOOL;
    oq_advice a = advise("MATH", "FLASH_ATTENTION", &f);
    assert_int_equal(a.rules, OQ_ADVICE_FORCED_MATH);
    assert_has(a.text, "sdpa_kernel=16 enables MATH only");
    assert_has(a.text, "use kernel auto (sdpa_kernel 0)");
    oq_advice_clear(&a);
}

static void test_kernel_disabled_by_mask_option(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.sdpa_kernel = 2 | 16; /* efficient + math only */
    oq_advice a = advise("EFFICIENT_ATTENTION", "flash", &f);
    assert_int_equal(a.rules, OQ_ADVICE_KERNEL_DISABLED);
    assert_has(a.text, "sdpa_kernel=18 does not enable FLASH_ATTENTION (bit 1)");
    assert_has(a.text, "set sdpa_kernel to 0 or include bit 1 (FLASH_ATTENTION)");
    oq_advice_clear(&a);
}

static void test_no_rule_explains(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.node = NULL;
    oq_advice a = advise("MATH", NULL, &f);
    assert_int_equal(a.rules, OQ_ADVICE_NO_RULE);
    assert_has(a.text, "the attention node ran MATH: no ORT rule known to ortqual explains it "
                       "(opset 24, float16, mask nonpad_kv_seqlen, q_len 256, kv_len 256, sdpa_kernel 0)");
    oq_advice_clear(&a);
}

static void test_nothing_to_explain(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    oq_advice a = advise("FLASH_ATTENTION", "flash", &f);
    assert_int_equal(a.rules, 0);
    assert_null(a.text);
    a = advise("MATH", "math", &f); /* --prove-teeth's rerun got what it asked for */
    assert_null(a.text);
    a = advise("FLASH_ATTENTION", "auto", &f);
    assert_null(a.text);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    oq_advice a = {.rules = 7};
    oq_err err = {0};
    assert_int_equal(oq_dispatch_advice("MATH", "turbo", &f, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "advice: unknown expected kernel 'turbo' (flash, efficient, cudnn, "
                                 "math, auto or an ORT name)");
    assert_int_equal(a.rules, 0);
    f.dtype = OQ_DTYPE_INT64;
    assert_int_equal(oq_dispatch_advice("MATH", NULL, &f, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "advice: attention dtype int64 is not one ORT's CUDA Attention "
                                 "computes in (float16, bfloat16, float32)");
    assert_int_equal(oq_dispatch_advice(NULL, NULL, &f, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "advice: observed, facts and out must not be NULL");
    assert_string_equal(oq_attn_mask_kind_name(OQ_ATTN_MASK_NONPAD_KV_SEQLEN), "nonpad_kv_seqlen");
    assert_string_equal(oq_attn_mask_kind_name(OQ_ATTN_MASK_NONE), "none");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bool_mask_odd_length),
        cmocka_unit_test(test_mask_blocks_flash_only),
        cmocka_unit_test(test_efficient_expected_mask_alignment),
        cmocka_unit_test(test_fp32_has_no_flash),
        cmocka_unit_test(test_cudnn_is_decode_only),
        cmocka_unit_test(test_forced_math),
        cmocka_unit_test(test_kernel_disabled_by_mask_option),
        cmocka_unit_test(test_no_rule_explains),
        cmocka_unit_test(test_nothing_to_explain),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
