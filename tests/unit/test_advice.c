/* Dispatch advice: one test per ORT rule, plus the cases with nothing to say; the facts of a
 * real converted model read from its Attention nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/advice.h"
#include "ortqual/convert.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"

#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

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

static void assert_lacks(const char *text, const char *needle)
{
    if (text && strstr(text, needle)) fail_msg("'%s' in advice: %s", needle, text);
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
                       "attn_mask (the attention24 export's default, mask OQ_MASK_SEQLEN)");
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
    assert_has(a.text, "compute attention in float16 (precision fp16, attention_dtype OQ_DTYPE_FLOAT16)");
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
                       "(opset 24, float16, mask nonpad_kv_seqlen, q_len 256, kv_len 256, head size unknown, sdpa_kernel 0)");
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
    assert_string_equal(err.msg, "oq_dispatch_advice: observed is NULL");
    assert_string_equal(oq_attn_mask_kind_name(OQ_ATTN_MASK_NONPAD_KV_SEQLEN), "nonpad_kv_seqlen");
    assert_string_equal(oq_attn_mask_kind_name(OQ_ATTN_MASK_NONE), "none");
}

/* The H200 finding: a converted model (Attention-24, nonpad_kv_seqlen, no attn_mask, fp16) with
 * head size 12 ran MATH. The head size explains it; no mask rule may fire, no export form or
 * configuration is offered (the user's model must change). */
static void test_head_size_12_runs_math(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.head_size = 12;
    f.q_heads = 4;
    f.user_model = true;
    oq_advice a = advise("MATH", "flash", &f);
    assert_int_equal(a.rules, OQ_ADVICE_HEAD_SIZE);
    assert_has(a.text, "attn0 ran MATH, expected FLASH_ATTENTION: flash needs a head size that is a multiple "
                       "of 8, at most 256 (here 12)");
    assert_has(a.text, "To reach FLASH_ATTENTION: pad the head size to 16: zero-pad Q, K and V on the last axis "
                       "(Q K^T is unchanged; keep the scale 1/sqrt(12)) and slice each head's output back to 12");
    assert_has(a.text, "or split the width 48 into 6 heads of 8 or 3 of 16 (a different model: retrain it).");
    assert_lacks(a.text, "attn_mask");
    assert_lacks(a.text, "configuration");
    oq_advice_clear(&a);
    /* nothing expected: one clause for flash and memory-efficient attention together */
    a = advise("MATH", NULL, &f);
    assert_int_equal(a.rules, OQ_ADVICE_HEAD_SIZE);
    assert_has(a.text, "attn0 ran MATH: flash and memory-efficient attention need a head size that is a "
                       "multiple of 8, at most 256 and 1024 (here 12). To reach FLASH_ATTENTION: pad the head "
                       "size to 16");
    assert_lacks(a.text, "flash needs");
    oq_advice_clear(&a);
    /* from the scale alone the size is labelled so */
    f.head_size_from_scale = true;
    a = advise("MATH", "efficient", &f);
    assert_int_equal(a.rules, OQ_ADVICE_HEAD_SIZE);
    assert_has(a.text, "memory-efficient attention needs a head size that is a multiple of 8, at most 1024 "
                       "(here 12, from its scale)");
    oq_advice_clear(&a);
}

/* Head size 8 with nonpad_kv_seqlen fits every fused kernel: no head rule, and nothing else
 * explains a MATH run (the facts are listed, with the head size). */
static void test_head_size_8_fits(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.head_size = 8;
    f.user_model = true;
    oq_advice a = advise("MATH", NULL, &f);
    assert_int_equal(a.rules, OQ_ADVICE_NO_RULE);
    assert_has(a.text, "(opset 24, float16, mask nonpad_kv_seqlen, q_len 256, kv_len 256, head size 8, "
                       "sdpa_kernel 0)");
    oq_advice_clear(&a);
    a = advise("FLASH_ATTENTION", "flash", &f);
    assert_null(a.text);
}

/* 264 is a multiple of 8 but over flash's 256: memory-efficient attention takes it. */
static void test_head_size_over_flash_limit(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.head_size = 264;
    oq_advice a = advise("EFFICIENT_ATTENTION", "flash", &f);
    assert_int_equal(a.rules, OQ_ADVICE_HEAD_SIZE);
    assert_has(a.text, "flash needs a head size that is a multiple of 8, at most 256 (here 264)");
    assert_has(a.text, "use more heads so that each is a multiple of 8 and at most 256");
    assert_has(a.text, "or expect EFFICIENT_ATTENTION (kernel efficient), which takes head size 264");
    oq_advice_clear(&a);
    a = advise("EFFICIENT_ATTENTION", NULL, &f); /* a fused kernel ran: nothing to explain */
    assert_null(a.text);
}

/* A user's Attention-23 with a bool attn_mask: the fix converts the model, no configuration. */
static void test_user_model_mask_remedy(void **state)
{
    (void)state;
    oq_attention_facts f = fp16_nonpad();
    f.opset = 23;
    f.mask = OQ_ATTN_MASK_BOOL;
    f.head_size = 8;
    f.user_model = true;
    oq_advice a = advise("MATH", "flash", &f);
    assert_int_equal(a.rules, OQ_ADVICE_MASK_NO_FLASH);
    assert_has(a.text, "`ortqual convert --mask-to-seqlen` rewrites a key-padding attn_mask so (Attention-24)");
    assert_lacks(a.text, "configuration");
    assert_lacks(a.text, "export as attention24");
    oq_advice_clear(&a);
    f.mask = OQ_ATTN_MASK_NONPAD_KV_SEQLEN;
    f.dtype = OQ_DTYPE_FLOAT32;
    a = advise("EFFICIENT_ATTENTION", "flash", &f);
    assert_has(a.text, "compute attention in float16 (`ortqual convert --attention-dtype fp16`)");
    assert_lacks(a.text, "--flash");
    oq_advice_clear(&a);
    /* both the mask and float32: the one preset that fixes both is named */
    f.mask = OQ_ATTN_MASK_BOOL;
    a = advise("MATH", "flash", &f);
    assert_int_equal(a.rules, OQ_ADVICE_MASK_NO_FLASH | OQ_ADVICE_FP32_NO_FLASH);
    assert_has(a.text, "`ortqual convert --mask-to-seqlen`");
    assert_has(a.text, "; `ortqual convert --flash` does both (and pads the head size)");
    oq_advice_clear(&a);
    f.user_model = false; /* ortqual's own export: configurations, not convert */
    a = advise("MATH", "flash", &f);
    assert_lacks(a.text, "--flash");
    oq_advice_clear(&a);
}

static void test_head_size_from_scale(void **state)
{
    (void)state;
    assert_int_equal(oq_head_size_from_scale(0.288675129), 12);
    assert_int_equal(oq_head_size_from_scale(0.125), 64);
    assert_int_equal(oq_head_size_from_scale(1.0), 1);
    assert_int_equal(oq_head_size_from_scale(0.3), 0); /* 11.11: no default scale */
    assert_int_equal(oq_head_size_from_scale(0), 0);
    assert_int_equal(oq_head_size_from_scale(-0.5), 0);
}

static void test_head_size_note(void **state)
{
    (void)state;
    char *n = oq_head_size_note(12, 4, "Q's shape");
    assert_non_null(n);
    assert_has(n, "head size 12 (from Q's shape): ORT's CUDA flash and memory-efficient kernels need a "
                  "multiple of 8, at most 256 and 1024, so this node runs MATH on CUDA; pad the head size to 16");
    assert_has(n, "6 heads of 8 or 3 of 16");
    free(n);
    n = oq_head_size_note(264, 0, NULL);
    assert_has(n, "head size 264: ORT's CUDA flash kernel takes a multiple of 8 up to 256, so this node "
                  "runs EFFICIENT_ATTENTION at best on CUDA");
    free(n);
    assert_null(oq_head_size_note(8, 4, NULL));
    assert_null(oq_head_size_note(256, 1, NULL));
    assert_null(oq_head_size_note(0, 4, NULL)); /* unknown: nothing claimed */
    /* a hostile model's head size: no padding advice, and no overflow rounding it up or
     * multiplying by the heads (UBSan fails this test where it did) */
    n = oq_head_size_note(INT64_MAX, 3, NULL);
    assert_has(n, "use more heads so that each is a multiple of 8 and at most 256");
    assert_lacks(n, "pad the head size");
    free(n);
}

/* A node as oq_model_find_nodes gives it, without shapes: the scale decides the head size, the
 * inputs present the mask kind. */
static void test_facts_from_bare_node(void **state)
{
    (void)state;
    char *attrs[] = {"scale=0.288675129", "softcap=30"};
    char *dt[] = {"2", "seq", "48"};
    oq_io_info in[4] = {{.name = "q", .elem_type = OQ_DTYPE_FLOAT32, .rank = -1},
                        {.name = "k", .rank = -1},
                        {.name = "v", .rank = -1},
                        {.name = "m", .elem_type = OQ_DTYPE_BOOL, .rank = -1}};
    oq_node_info node = {.name = "att", .op_type = "Attention", .domain = "", .n_attrs = 2, .attrs = attrs,
                         .n_inputs = 4, .inputs = in};
    oq_attention_facts f;
    oq_attention_facts_from_node(&node, 23, &f);
    assert_string_equal(f.node, "att");
    assert_int_equal(f.opset, 23);
    assert_int_equal(f.dtype, OQ_DTYPE_FLOAT32);
    assert_int_equal(f.mask, OQ_ATTN_MASK_BOOL);
    assert_int_equal(f.head_size, 0); /* Q declares no shape: unknown, whatever the scale says (12) */
    assert_false(f.head_size_from_scale);
    assert_true(f.softcap);
    assert_true(f.user_model);
    assert_int_equal(f.q_len, 0);
    /* rank 3 with q_num_heads: hidden / heads, the sequence length when static */
    char *attrs3[] = {"q_num_heads=4"};
    dt[1] = "7";
    in[0] = (oq_io_info){.name = "q", .elem_type = OQ_DTYPE_FLOAT16, .rank = 3, .dims = dt};
    in[3] = (oq_io_info){.name = "", .rank = -1}; /* an omitted attn_mask */
    node.attrs = attrs3;
    node.n_attrs = 1;
    oq_attention_facts_from_node(&node, 24, &f);
    assert_int_equal(f.mask, OQ_ATTN_MASK_NONE);
    assert_int_equal(f.head_size, 12);
    assert_int_equal(f.q_heads, 4);
    assert_false(f.head_size_from_scale);
    assert_false(f.softcap);
    assert_int_equal(f.q_len, 7);
    assert_int_equal(f.dtype, OQ_DTYPE_FLOAT16);
}

/* The real thing: mlpf_like (PyTorch's export) converted as on the H200 run, read back from the
 * file: the facts the H200 advice should have used, and the advice they give for its MATH run. */
static void test_facts_from_converted_mlpf(void **state)
{
    (void)state;
    char *dir = temp_dir("advice");
    char out[512], p[512];
    snprintf(out, sizeof out, "%s/mlpf_like_24.onnx", dir);
    oq_npz *in[2], *exp[2];
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, OQ_SOURCE_DIR "/tests/fixtures/torch/mlpf_like/inputs_%03d.npz", i);
        assert_int_equal(oq_npz_read(p, &in[i], NULL), OQ_OK);
        snprintf(p, sizeof p, OQ_SOURCE_DIR "/tests/fixtures/torch/mlpf_like/outputs_%03d.npz", i);
        assert_int_equal(oq_npz_read(p, &exp[i], NULL), OQ_OK);
    }
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_FUSE | OQ_CONVERT_MASK_TO_SEQLEN;
    o.attention_dtype = OQ_DTYPE_FLOAT16;
    o.keep_head_size = 1; /* the model as the H200 ran it: heads of 12, not padded to 16 */
    o.opset = 24;
    o.runtime = rt;
    o.n_batches = 2;
    o.inputs = (const oq_npz *const *)in;
    o.expected = (const oq_npz *const *)exp;
    oq_convert_report *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_convert_file(OQ_SOURCE_DIR "/tests/fixtures/torch/mlpf_like/mlpf_like_op18.onnx", out, 0,
                                     &o, &r, &err), OQ_OK);
    /* convert said so at conversion time, once per Attention node */
    size_t notes = 0;
    for (size_t i = 0; i < r->n_steps; i++)
        if (!strcmp(r->steps[i].pass, "cuda") && !strcmp(r->steps[i].action, "note")) {
            assert_has(r->steps[i].detail, "head size 12 (from Q's shape)");
            assert_has(r->steps[i].detail, "this node runs MATH on CUDA");
            notes++;
        }
    assert_int_equal(notes, 2);
    oq_convert_report_free(r);

    oq_model_info *mi = NULL;
    assert_int_equal(oq_model_inspect_file(out, &mi, NULL), OQ_OK);
    assert_string_equal(mi->opsets[0].domain, "");
    int64_t opset = mi->opsets[0].version;
    oq_model_info_free(mi);
    oq_node_info *nodes = NULL;
    size_t n = 0;
    assert_int_equal(oq_model_find_nodes(out, NULL, "Attention", &nodes, &n, &err), OQ_OK);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        oq_attention_facts f;
        oq_attention_facts_from_node(&nodes[i], opset, &f);
        assert_int_equal(f.opset, 24);
        assert_int_equal(f.dtype, OQ_DTYPE_FLOAT16);
        assert_int_equal(f.mask, OQ_ATTN_MASK_NONPAD_KV_SEQLEN);
        assert_int_equal(f.head_size, 12);
        assert_false(f.head_size_from_scale); /* Q's declared shape says it */
        assert_int_equal(f.q_heads, 4);
        assert_false(f.softcap);
        /* the run as the H200 saw it: MATH where flash was expected */
        f.q_len = f.kv_len = 56;
        oq_advice a = advise("MATH", "FLASH_ATTENTION", &f);
        assert_int_equal(a.rules, OQ_ADVICE_HEAD_SIZE);
        assert_has(a.text, "(here 12)");
        assert_has(a.text, "pad the head size to 16");
        assert_lacks(a.text, "attn_mask");
        oq_advice_clear(&a);
    }
    oq_node_infos_free(nodes, n);
    for (int i = 0; i < 2; i++) {
        oq_npz_free(in[i]);
        oq_npz_free(exp[i]);
    }
    remove_dir(dir);
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
        cmocka_unit_test(test_head_size_12_runs_math),
        cmocka_unit_test(test_head_size_8_fits),
        cmocka_unit_test(test_head_size_over_flash_limit),
        cmocka_unit_test(test_user_model_mask_remedy),
        cmocka_unit_test(test_head_size_from_scale),
        cmocka_unit_test(test_head_size_note),
        cmocka_unit_test(test_facts_from_bare_node),
        cmocka_unit_test(test_facts_from_converted_mlpf),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
