/* oq_model_precision_of: the one precision validate's and replay's --model defaults and
 * bench --model's rows judge a model of yours at, from the attention inspect finds (an
 * operator's Q, a decomposed chain's steps, typed through undeclared intermediates) and the
 * outputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/convert.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"
#include "ortqual/inspect.h"

#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

#define FIX OQ_SOURCE_DIR "/tests/fixtures/torch/"

/* `ortqual export sdpa --format decomposed` at these dtypes, inspected, and its precision. */
static oq_model_info *decomposed(const char *dir, oq_dtype attention, oq_dtype io, oq_model_precision *p)
{
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.format = OQ_ATTN_DECOMPOSED;
    c.mask = OQ_MASK_NONE;
    c.attention_dtype = attention;
    c.io_dtype = io;
    oq_graph *g = NULL;
    oq_err err = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/d_%d_%d.onnx", dir, (int)attention, (int)io);
    if (oq_export_sdpa(&c, &g, &err) || oq_graph_write(g, path, 1, &err)) fail_msg("%s", err.msg);
    oq_graph_free(g);
    oq_model_info *mi = NULL;
    if (oq_model_inspect_file(path, &mi, &err)) fail_msg("%s", err.msg);
    oq_model_precision_of(mi, p);
    return mi;
}

/* A decomposed chain computing in float16 is found whether the outputs are float16 or float32
 * (validate judged both at float32, bench the latter), though ortqual's export declares none of
 * its intermediates; the float32 one stays float32. */
static void test_decomposed_chain(void **state)
{
    (void)state;
    char *dir = temp_dir("precision");
    oq_model_precision p;
    oq_model_info *mi = decomposed(dir, OQ_DTYPE_FLOAT16, OQ_DTYPE_FLOAT32, &p);
    assert_int_equal(mi->n_attention, 1);
    assert_string_equal(mi->attention[0].kind, "decomposed");
    assert_int_equal(mi->attention[0].elem_type, OQ_DTYPE_FLOAT16);
    assert_int_equal(mi->outputs[0].elem_type, OQ_DTYPE_FLOAT32);
    assert_int_equal(p.dtype, OQ_DTYPE_FLOAT16);
    char want[600];
    snprintf(want, sizeof want, "decomposed attention (Softmax '%s') computes in float16", mi->attention[0].name);
    assert_string_equal(p.why, want);
    oq_model_info_free(mi);

    mi = decomposed(dir, OQ_DTYPE_FLOAT16, OQ_DTYPE_FLOAT16, &p); /* the attention named before the outputs */
    assert_int_equal(p.dtype, OQ_DTYPE_FLOAT16);
    assert_string_equal(p.why, want);
    oq_model_info_free(mi);

    mi = decomposed(dir, OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT32, &p);
    assert_int_equal(mi->attention[0].elem_type, OQ_DTYPE_FLOAT32);
    assert_int_equal(p.dtype, OQ_DTYPE_UNDEFINED);
    assert_string_equal(p.why, "");
    oq_model_info_free(mi);
    remove_dir(dir);
}

/* `convert` to a bfloat16 Attention (float32 I/O): the node named; none in the float32 original. */
static void test_converted_attention(void **state)
{
    (void)state;
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    oq_convert_opts_flash(&o);
    o.runtime = rt;
    o.attention_dtype = OQ_DTYPE_BFLOAT16;
    char *dir = temp_dir("precision");
    char out[512];
    snprintf(out, sizeof out, "%s/b.onnx", dir);
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(FIX "hand_attention/hand_attention_op18.onnx", out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    oq_convert_report_free(r);
    oq_model_info *mi = NULL;
    if (oq_model_inspect_file(out, &mi, &err)) fail_msg("%s", err.msg);
    oq_model_precision p;
    oq_model_precision_of(mi, &p);
    assert_int_equal(p.dtype, OQ_DTYPE_BFLOAT16);
    assert_non_null(strstr(p.why, "Attention '"));
    assert_non_null(strstr(p.why, "' computes in bfloat16"));
    oq_model_info_free(mi);
    if (oq_model_inspect_file(FIX "hand_attention/hand_attention_op18.onnx", &mi, &err)) fail_msg("%s", err.msg);
    oq_model_precision_of(mi, &p);
    assert_int_equal(p.dtype, OQ_DTYPE_UNDEFINED);
    assert_string_equal(p.why, "");
    oq_model_info_free(mi);
    remove_dir(dir);
}

/* An output of float16 alone makes it float16; bfloat16 anywhere wins over float16, its reason
 * the first bfloat16 one; no model info is float32. */
static void test_outputs_and_coarsest(void **state)
{
    (void)state;
    oq_io_info outs[2] = {{.name = "a", .elem_type = OQ_DTYPE_FLOAT32}, {.name = "b", .elem_type = OQ_DTYPE_FLOAT16}};
    oq_attention_info att[2] = {{.kind = "decomposed", .name = "", .elem_type = OQ_DTYPE_FLOAT16},
                                {.kind = "MultiHeadAttention", .name = "mha", .elem_type = OQ_DTYPE_BFLOAT16}};
    oq_model_info mi = {.n_outputs = 2, .outputs = outs};
    oq_model_precision p;
    oq_model_precision_of(&mi, &p);
    assert_int_equal(p.dtype, OQ_DTYPE_FLOAT16);
    assert_string_equal(p.why, "output 'b' is float16");
    assert_string_equal(oq_model_precision_name(&p), "fp16");
    mi.n_attention = 1;
    mi.attention = att;
    oq_model_precision_of(&mi, &p);
    assert_string_equal(p.why, "decomposed attention (Softmax '?') computes in float16");
    mi.n_attention = 2;
    oq_model_precision_of(&mi, &p);
    assert_int_equal(p.dtype, OQ_DTYPE_BFLOAT16);
    assert_string_equal(p.why, "MultiHeadAttention 'mha' computes in bfloat16");
    assert_string_equal(oq_model_precision_name(&p), "bf16"); /* the configurations' field: one name */
    outs[0].elem_type = OQ_DTYPE_BFLOAT16;
    oq_model_precision_of(&mi, &p);
    assert_string_equal(p.why, "MultiHeadAttention 'mha' computes in bfloat16");
    oq_model_precision_of(NULL, &p);
    assert_int_equal(p.dtype, OQ_DTYPE_UNDEFINED);
    assert_string_equal(p.why, "");
    assert_string_equal(oq_model_precision_name(&p), "fp32");
    assert_string_equal(oq_model_precision_name(NULL), "fp32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomposed_chain),
        cmocka_unit_test(test_converted_attention),
        cmocka_unit_test(test_outputs_and_coarsest),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
