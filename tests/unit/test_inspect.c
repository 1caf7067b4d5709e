/* Model inspection: attention nodes of every representation, warnings, bad files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "inspect/gview-impl.h"
#include "inspect/inspect-impl.h"
#include "inspect/model-impl.h"
#include "ortqual/export.h"
#include "ortqual/inspect.h"

static oq_model_info *inspect_graph(oq_graph *g)
{
    uint8_t *buf;
    size_t n;
    oq_err err = {0};
    assert_int_equal(oq_graph_serialize(g, &buf, &n, &err), OQ_OK);
    oq_graph_free(g);
    oq_model_info *mi = NULL;
    oq_status st = oq_model_inspect_bytes(buf, n, "mem.onnx", &mi, &err);
    free(buf);
    if (st) fail_msg("inspect: %s", err.msg);
    return mi;
}

/* The encoder of weights w exported in format f (float32, the mask its own), inspected. */
static oq_model_info *inspect_encoder(const oq_encoder_weights *w, oq_attn_format f)
{
    oq_encoder_export x = {f, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0};
    oq_graph *g;
    assert_int_equal(oq_export_encoder(w, &x, &g, NULL), OQ_OK);
    return inspect_graph(g);
}

static int64_t op_count(const oq_model_info *mi, const char *domain, const char *op)
{
    for (size_t i = 0; i < mi->n_ops; i++)
        if (!strcmp(mi->ops[i].domain, domain) && !strcmp(mi->ops[i].op_type, op))
            return mi->ops[i].count;
    return 0;
}

/* A C caller's NULL is an argument error, not a crash. */
static void test_null_arguments(void **state)
{
    (void)state;
    oq_model_info *mi = NULL;
    oq_err err = {0};
    assert_int_equal(oq_model_inspect_file(NULL, &mi, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "NULL"));
    assert_int_equal(oq_model_inspect_file("m.onnx", NULL, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_model_inspect_bytes(NULL, 4, "m", &mi, &err), OQ_ERR_INVALID_ARG);
    /* unnamed bytes: messages call them "the model" (they said "(null)") */
    assert_int_equal(oq_model_inspect_bytes("\x08\x01", 2, NULL, &mi, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "the model"));
    assert_null(strstr(err.msg, "(null)"));
}

static void test_encoder_attention_nodes(void **state)
{
    (void)state;
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    c.layers = 3;
    oq_encoder_weights *w;
    assert_int_equal(oq_encoder_weights_random(&c, 1, &w, NULL), OQ_OK);
    for (int f = OQ_ATTN_DECOMPOSED; f <= OQ_ATTN_ATTENTION24; f++) {
        oq_model_info *mi = inspect_encoder(w, (oq_attn_format)f);
        assert_int_equal(mi->ir_version, f == OQ_ATTN_DECOMPOSED ? 9 : f == OQ_ATTN_ATTENTION23 ? 11 : 12);
        assert_string_equal(mi->producer_name, "ortqual");
        assert_int_equal(mi->n_opsets, 1);
        assert_int_equal(mi->opsets[0].version, oq_attn_format_opset((oq_attn_format)f));
        assert_int_equal(mi->n_inputs, 2);
        assert_string_equal(mi->inputs[0].name, "features");
        assert_int_equal(mi->inputs[0].rank, 3);
        assert_string_equal(mi->inputs[0].dims[0], "batch");
        assert_string_equal(mi->inputs[0].dims[1], "seq");
        assert_string_equal(mi->inputs[0].dims[2], "8");
        assert_int_equal(mi->n_outputs, 2);
        assert_string_equal(mi->outputs[1].name, "reg");
        assert_int_equal(mi->n_attention, 3);
        assert_int_equal(op_count(mi, "", "Elu"), 0); /* ELU is written with standard ops */
        assert_int_equal(op_count(mi, "", "LayerNormalization"), 7);
        for (size_t i = 0; i < mi->n_attention; i++) {
            const oq_attention_info *a = &mi->attention[i];
            if (f == OQ_ATTN_DECOMPOSED) {
                assert_string_equal(a->kind, "decomposed");
                assert_non_null(strstr(a->detail, "Softmax"));
                assert_non_null(strstr(a->detail, "-> Add ->"));
            } else {
                char name[48];
                snprintf(name, sizeof name, "blocks.%zu.attn", i);
                assert_string_equal(a->kind, "Attention");
                assert_string_equal(a->name, name);
                assert_string_equal(a->attrs[0], "q_num_heads=4");
                assert_string_equal(a->detail, f == OQ_ATTN_ATTENTION24
                                                    ? "inputs: Q K V nonpad_kv_seqlen"
                                                    : "inputs: Q K V attn_mask");
            }
        }
        assert_int_equal(op_count(mi, "", "Attention"), f == OQ_ATTN_DECOMPOSED ? 0 : 3);
        assert_int_equal(mi->n_warnings, 0);
        char *json = oq_model_info_json(mi);
        assert_non_null(json);
        assert_non_null(strstr(json, "\"attention\""));
        free(json);
        oq_model_info_free(mi);
    }
    oq_encoder_weights_free(w);
}

static void test_sdpa_static_dims_and_bool_mask(void **state)
{
    (void)state;
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.format = OQ_ATTN_DECOMPOSED;
    c.mask = OQ_MASK_BOOL;
    c.static_batch = 2;
    c.static_seq = 33;
    oq_graph *g;
    assert_int_equal(oq_export_sdpa(&c, &g, NULL), OQ_OK);
    oq_model_info *mi = inspect_graph(g);
    assert_string_equal(mi->inputs[0].dims[0], "2");
    assert_string_equal(mi->inputs[0].dims[2], "33");
    /* the fixed sizes say what they are: batch and time (the heads and head size say nothing) */
    const oq_io_info *out = &mi->outputs[0], *mask = &mi->inputs[3];
    assert_string_equal(mask->name, "mask");
    assert_string_equal(mask->denotations[0], "DATA_BATCH");
    assert_string_equal(mask->denotations[1], "DATA_TIME");
    assert_string_equal(out->denotations[0], "DATA_BATCH");
    assert_null(out->denotations[1]);
    assert_string_equal(out->denotations[2], "DATA_TIME");
    assert_null(out->denotations[3]);
    char *json = oq_model_info_json(mi);
    assert_non_null(strstr(json, "\"denotations\""));
    assert_non_null(strstr(json, "\"DATA_TIME\""));
    free(json);
    assert_int_equal(mi->n_attention, 1);
    assert_non_null(strstr(mi->attention[0].detail, "-> Where ->"));
    oq_model_info_free(mi);
}

/* The heads of `mi`'s attention nodes, all the same: that count, else -1. */
static int64_t heads_of(const oq_model_info *mi)
{
    assert_true(mi->n_attention > 0);
    for (size_t i = 1; i < mi->n_attention; i++)
        if (mi->attention[i].heads != mi->attention[0].heads) return -1;
    return mi->attention[0].heads;
}

/* The query heads of every attention form: q_num_heads of 3-D Q, K, V; Q's axis 1 where it is
 * 4-D (the attribute is for 3-D inputs only); a decomposed chain's through the Reshape that
 * splits them off the hidden axis and the Transpose after it (grouped query heads: Hkv * G). */
static void test_attention_heads(void **state)
{
    (void)state;
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    c.width = 16;
    c.heads = 2;
    oq_encoder_weights *w;
    assert_int_equal(oq_encoder_weights_random(&c, 1, &w, NULL), OQ_OK);
    for (int f = OQ_ATTN_DECOMPOSED; f <= OQ_ATTN_ATTENTION24; f++) {
        oq_model_info *mi = inspect_encoder(w, (oq_attn_format)f);
        assert_int_equal(heads_of(mi), 2);
        /* the 3-D Attention's Q is a projection whose rank the graph does not declare: D not read */
        for (size_t i = 0; f == OQ_ATTN_DECOMPOSED && i < mi->n_attention; i++)
            if (mi->attention[i].head_dim != 8) fail_msg("head_dim %lld", (long long)mi->attention[i].head_dim);
        char *json = oq_model_info_json(mi);
        assert_non_null(strstr(json, "\"heads\": 2"));
        assert_non_null(strstr(json, f == OQ_ATTN_DECOMPOSED ? "\"head_dim\": 8" : "\"head_dim\": null"));
        free(json);
        oq_model_info_free(mi);
    }
    oq_encoder_weights_free(w);
    const struct {
        oq_attn_format format;
        int32_t layout, heads, kv_heads;
    } sdpa[] = {{OQ_ATTN_ATTENTION23, 4, 3, 3}, {OQ_ATTN_ATTENTION24, 4, 6, 2}, {OQ_ATTN_DECOMPOSED, 3, 3, 3},
                {OQ_ATTN_DECOMPOSED, 4, 5, 5}, {OQ_ATTN_DECOMPOSED, 3, 6, 2}};
    for (size_t i = 0; i < sizeof sdpa / sizeof *sdpa; i++) {
        oq_sdpa_config sc;
        oq_sdpa_config_default(&sc);
        sc.format = sdpa[i].format;
        sc.layout = sdpa[i].layout;
        sc.heads = sdpa[i].heads;
        sc.kv_heads = sdpa[i].kv_heads;
        sc.head_dim = (int32_t)(4 * (i + 1));
        oq_graph *g;
        assert_int_equal(oq_export_sdpa(&sc, &g, NULL), OQ_OK);
        oq_model_info *mi = inspect_graph(g);
        if (heads_of(mi) != sdpa[i].heads) fail_msg("case %zu: heads %lld", i, (long long)heads_of(mi));
        if (mi->attention[0].head_dim != sc.head_dim)
            fail_msg("case %zu: head_dim %lld, not %d", i, (long long)mi->attention[0].head_dim, (int)sc.head_dim);
        oq_model_info_free(mi);
    }
}

/* com.microsoft attention kernels and custom domains, built by hand. */
/* Heads folded into the batch axis ([B*H, L, D]): x [2, 16, 32] split into 4 heads of 8 and folded
 * into [8, 16, 8] for the products, unfolded after; `fixed` 0: a bare [n, L, D] query whose output
 * is unfolded to a target the graph computes (an input), where the heads are not fixed. */
static oq_model_info *folded_model(int fixed)
{
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "folded", &g, NULL), OQ_OK);
    const int64_t split[] = {2, 16, 4, 8}, fold[] = {8, 16, 8}, swap[] = {0, 2, 1, 3}, kt[] = {0, 2, 1};
    const oq_dim x_d[] = {OQ_DIM(2), OQ_DIM(16), OQ_DIM(32)}, y_d[] = {OQ_DIM(2), OQ_DIM(4), OQ_DIM(16), OQ_DIM(8)};
    const oq_dim q_d[] = {OQ_DIM_SYM("n"), OQ_DIM(16), OQ_DIM(8)}, s_d[] = {OQ_DIM(4)};
    const oq_dim y_sym[] = {OQ_DIM_SYM("b"), OQ_DIM_SYM("h"), OQ_DIM(16), OQ_DIM(8)};
    const char *q = "q", *to = NULL;
    if (fixed) {
        oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, x_d);
        const oq_attr perm = OQ_ATTR_IS("perm", 4, swap);
        const char *r = oq_graph_op(g, "Reshape", 2, (const char *[]){"x", oq_graph_const_i64(g, "split", 4, split)}, 0,
                                    NULL);
        const char *t = oq_graph_op(g, "Transpose", 1, &r, 1, &perm);
        q = oq_graph_op(g, "Reshape", 2, (const char *[]){t, oq_graph_const_i64(g, "fold", 3, fold)}, 0, NULL);
        to = oq_graph_const_i64(g, "unfold", 4, split);
    } else {
        oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, 3, q_d);
        oq_graph_add_input(g, "unfold", OQ_DTYPE_INT64, 1, s_d);
        to = "unfold";
    }
    const oq_attr perm_k = OQ_ATTR_IS("perm", 3, kt), last = OQ_ATTR_I("axis", -1);
    const char *k = oq_graph_op(g, "Transpose", 1, &q, 1, &perm_k);
    const char *s = oq_graph_op(g, "MatMul", 2, (const char *[]){q, k}, 0, NULL);
    const char *p = oq_graph_op(g, "Softmax", 1, &s, 1, &last);
    const char *o = oq_graph_op(g, "MatMul", 2, (const char *[]){p, q}, 0, NULL);
    const char *y = oq_graph_op(g, "Reshape", 2, (const char *[]){o, to}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 4, fixed ? y_d : y_sym);
    return inspect_graph(g);
}

/* [B*H, L, D] chains: the heads read off the Reshape that folds them into Q (or unfolds the
 * output), and where no constant fixes them, the detail says so instead of nothing. */
static void test_heads_folded_into_batch(void **state)
{
    (void)state;
    oq_model_info *mi = folded_model(1);
    assert_int_equal(mi->n_attention, 1);
    assert_int_equal(mi->attention[0].heads, 4);
    if (!strstr(mi->attention[0].detail, "; heads folded into the batch axis: 4"))
        fail_msg("detail: %s", mi->attention[0].detail);
    char *json = oq_model_info_json(mi);
    assert_non_null(strstr(json, "\"heads\": 4"));
    free(json);
    oq_model_info_free(mi);
    mi = folded_model(0);
    assert_int_equal(mi->n_attention, 1);
    assert_int_equal(mi->attention[0].heads, 0);
    if (!strstr(mi->attention[0].detail, "; heads folded into the batch axis, not fixed by the graph"))
        fail_msg("detail: %s", mi->attention[0].detail);
    oq_model_info_free(mi);
}

/* The target of a Reshape that splits `x` ([b, l, 32]) into [b, l, ?, 8]: [0, 0, -1, 8] (the
 * heads the -1 left to ONNX's Reshape), or computed from x's Shape and the graph input `nh`. */
static const char *split_target(oq_graph *g, int constant)
{
    const int64_t copy_infer[] = {0, 0, -1, 8}, head_dim[] = {8}, first_two[] = {0, 2};
    if (constant) return oq_graph_const_i64(g, "split", 4, copy_infer);
    const char *shape = oq_graph_op(g, "Shape", 1, (const char *[]){"x"}, 0, NULL);
    const char *from = oq_graph_const_i64(g, "s0", 1, first_two), *to = oq_graph_const_i64(g, "s1", 1, first_two + 1);
    const char *bl = oq_graph_op(g, "Slice", 3, (const char *[]){shape, from, to}, 0, NULL);
    const oq_attr at0 = OQ_ATTR_I("axis", 0);
    return oq_graph_op(g, "Concat", 3, (const char *[]){bl, "nh", oq_graph_const_i64(g, "hd", 1, head_dim)}, 1, &at0);
}

/* An export's [B*H, L, D] fold of a projection [B, L, H*D]: Reshape (split_target) ->
 * Transpose(0,2,1,3) -> Reshape [-1, l, 8] ([0, -1, 8] for the key), the output unfolded
 * to [b, -1, l, 8] (b from x's Shape): no constant names the heads, the Reshape semantics do. */
static oq_model_info *hidden_fold_model(int constant)
{
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "hidden_fold", &g, NULL), OQ_OK);
    const int64_t swap[] = {0, 2, 1, 3}, kt[] = {0, 2, 1}, zero[] = {0};
    const int64_t fold[] = {-1, 16, 8}, fold0[] = {0, -1, 8}, tail[] = {-1, 16, 8};
    const oq_dim x_d[] = {OQ_DIM_SYM("b"), OQ_DIM(16), OQ_DIM(32)}, nh_d[] = {OQ_DIM(1)};
    const oq_dim y_d[] = {OQ_DIM_SYM("b"), OQ_DIM_SYM("h"), OQ_DIM(16), OQ_DIM(8)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, x_d);
    if (!constant) oq_graph_add_input(g, "nh", OQ_DTYPE_INT64, 1, nh_d);
    const oq_attr perm = OQ_ATTR_IS("perm", 4, swap), perm_k = OQ_ATTR_IS("perm", 3, kt), last = OQ_ATTR_I("axis", -1);
    const oq_attr at0 = OQ_ATTR_I("axis", 0);
    const char *r = oq_graph_op(g, "Reshape", 2, (const char *[]){"x", split_target(g, constant)}, 0, NULL);
    const char *t = oq_graph_op(g, "Transpose", 1, &r, 1, &perm);
    const char *q = oq_graph_op(g, "Reshape", 2, (const char *[]){t, oq_graph_const_i64(g, "fold", 3, fold)}, 0, NULL);
    const char *kf0 = oq_graph_const_i64(g, "fold0", 3, fold0);
    const char *kf = oq_graph_op(g, "Reshape", 2, (const char *[]){t, kf0}, 0, NULL);
    const char *k = oq_graph_op(g, "Transpose", 1, &kf, 1, &perm_k);
    const char *s = oq_graph_op(g, "MatMul", 2, (const char *[]){q, k}, 0, NULL);
    const char *p = oq_graph_op(g, "Softmax", 1, &s, 1, &last);
    const char *o = oq_graph_op(g, "MatMul", 2, (const char *[]){p, q}, 0, NULL);
    const char *shape = oq_graph_op(g, "Shape", 1, (const char *[]){"x"}, 0, NULL);
    const char *b = oq_graph_op(g, "Gather", 2, (const char *[]){shape, oq_graph_const_i64(g, "b0", 1, zero)}, 1, &at0);
    const char *to = oq_graph_op(g, "Concat", 2, (const char *[]){b, oq_graph_const_i64(g, "tail", 3, tail)}, 1, &at0);
    const char *y = oq_graph_op(g, "Reshape", 2, (const char *[]){o, to}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 4, y_d);
    return inspect_graph(g);
}

/* H read through the Reshape semantics (0 copies, -1 is what is left: 32 / 8 = 4); a target
 * computed from an input stays "not fixed by the graph", said, not guessed. */
static void test_heads_folded_from_hidden(void **state)
{
    (void)state;
    oq_model_info *mi = hidden_fold_model(1);
    assert_int_equal(mi->n_attention, 1);
    if (mi->attention[0].heads != 4)
        fail_msg("heads %lld, detail: %s", (long long)mi->attention[0].heads, mi->attention[0].detail);
    if (!strstr(mi->attention[0].detail, "; heads folded into the batch axis: 4"))
        fail_msg("detail: %s", mi->attention[0].detail);
    oq_model_info_free(mi);
    mi = hidden_fold_model(0);
    assert_int_equal(mi->n_attention, 1);
    assert_int_equal(mi->attention[0].heads, 0);
    if (!strstr(mi->attention[0].detail, "; heads folded into the batch axis, not fixed by the graph"))
        fail_msg("detail: %s", mi->attention[0].detail);
    oq_model_info_free(mi);
}

/* nn.MultiheadAttention's fold with no 4-D value: x [16, b, 32] -> Reshape [0, -1, 8] ->
 * Transpose(1,0,2) for Q and V, K the same with `k_target`, K^T its Transpose(0,2,1). */
static oq_model_info *mha_fold_model(const int64_t k_target[3])
{
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "mha_fold", &g, NULL), OQ_OK);
    const int64_t fold[] = {0, -1, 8}, swap[] = {1, 0, 2}, kt[] = {0, 2, 1};
    const oq_dim x_d[] = {OQ_DIM(16), OQ_DIM_SYM("b"), OQ_DIM(32)};
    const oq_dim y_d[] = {OQ_DIM_SYM("bh"), OQ_DIM(16), OQ_DIM(8)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, x_d);
    const oq_attr p102 = OQ_ATTR_IS("perm", 3, swap), p021 = OQ_ATTR_IS("perm", 3, kt), last = OQ_ATTR_I("axis", -1);
    const char *qr = oq_graph_op(g, "Reshape", 2, (const char *[]){"x", oq_graph_const_i64(g, "fold", 3, fold)}, 0, NULL);
    const char *q = oq_graph_op(g, "Transpose", 1, &qr, 1, &p102);
    const char *kr = oq_graph_op(g, "Reshape", 2, (const char *[]){"x", oq_graph_const_i64(g, "kfold", 3, k_target)}, 0,
                                 NULL);
    const char *k = oq_graph_op(g, "Transpose", 1, &kr, 1, &p102);
    const char *kT = oq_graph_op(g, "Transpose", 1, &k, 1, &p021);
    const char *s = oq_graph_op(g, "MatMul", 2, (const char *[]){q, kT}, 0, NULL);
    const char *p = oq_graph_op(g, "Softmax", 1, &s, 1, &last);
    const char *o = oq_graph_op(g, "MatMul", 2, (const char *[]){p, q}, 0, NULL);
    oq_graph_add_output(g, o, "y", OQ_DTYPE_FLOAT32, 3, y_d);
    return inspect_graph(g);
}

/* H = E / D through the fold's Reshape (0 copies L, -1 is B*H), the same for Q, K and V: fusable,
 * heads 4 of 8; K folded into 2 heads of 16: refused, both Reshapes named, heads not fixed. */
static void test_heads_mha_fold(void **state)
{
    (void)state;
    const int64_t same[] = {0, -1, 8}, other[] = {0, -1, 16};
    oq_model_info *mi = mha_fold_model(same);
    assert_int_equal(mi->n_attention, 1);
    if (mi->attention[0].heads != 4 || mi->attention[0].head_dim != 8)
        fail_msg("heads %lld, head_dim %lld: %s", (long long)mi->attention[0].heads,
                 (long long)mi->attention[0].head_dim, mi->attention[0].detail);
    if (!strstr(mi->attention[0].detail, "; fusable: scale 1, no mask; heads folded into the batch axis: 4"))
        fail_msg("detail: %s", mi->attention[0].detail);
    oq_model_info_free(mi);
    mi = mha_fold_model(other);
    assert_int_equal(mi->n_attention, 1);
    assert_int_equal(mi->attention[0].heads, 0);
    if (!strstr(mi->attention[0].detail, "not fusable: Q is folded into 4 heads of 8 (Reshape 'Reshape'), "
                                         "K into 2 heads of 16 (Reshape 'Reshape_1')"))
        fail_msg("detail: %s", mi->attention[0].detail);
    oq_model_info_free(mi);
}

/* One attention node `op` of `domain` on q, k, v (k and v of `kd`), inspected. */
static oq_model_info *attention_model(const char *op, const char *domain, int rank, const oq_dim *qd,
                                      const oq_dim *kd, const oq_attr *attrs, size_t n_attrs)
{
    const oq_opset ops[] = {{"", 24}, {"com.microsoft", 1}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 2, "heads", &g, NULL), OQ_OK);
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, rank, qd);
    oq_graph_add_input(g, "k", OQ_DTYPE_FLOAT32, rank, kd);
    oq_graph_add_input(g, "v", OQ_DTYPE_FLOAT32, rank, kd);
    const char *y = "y";
    assert_int_equal(oq_graph_add_node(g, op, domain, "attn", 3, (const char *[]){"q", "k", "v"}, 1, &y, n_attrs, attrs),
                     OQ_OK);
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, -1, NULL);
    return inspect_graph(g);
}

/* The head size is convert's reading (oq_attention_head_size): Q's last axis, else K's where Q's
 * is dynamic; com.microsoft's MultiHeadAttention with a key input reads Q's hidden axis over
 * num_heads as ONNX's 3-D Attention does. */
static void test_head_size_as_convert_reads_it(void **state)
{
    (void)state;
    const oq_dim q4[] = {OQ_DIM_SYM("b"), OQ_DIM(2), OQ_DIM(16), OQ_DIM_SYM("d")};
    const oq_dim k4[] = {OQ_DIM_SYM("b"), OQ_DIM(2), OQ_DIM(16), OQ_DIM(8)};
    oq_model_info *mi = attention_model("Attention", NULL, 4, q4, k4, NULL, 0);
    assert_int_equal(mi->n_attention, 1);
    if (mi->attention[0].heads != 2 || mi->attention[0].head_dim != 8)
        fail_msg("Attention: heads %lld, head_dim %lld", (long long)mi->attention[0].heads,
                 (long long)mi->attention[0].head_dim);
    oq_model_info_free(mi);
    const oq_dim h3[] = {OQ_DIM_SYM("b"), OQ_DIM(4), OQ_DIM(64)};
    const oq_attr nh = OQ_ATTR_I("num_heads", 4);
    mi = attention_model("MultiHeadAttention", "com.microsoft", 3, h3, h3, &nh, 1);
    assert_int_equal(mi->n_attention, 1);
    if (mi->attention[0].heads != 4 || mi->attention[0].head_dim != 16)
        fail_msg("MultiHeadAttention: heads %lld, head_dim %lld", (long long)mi->attention[0].heads,
                 (long long)mi->attention[0].head_dim);
    oq_model_info_free(mi);
}

static void test_microsoft_and_custom_domains(void **state)
{
    (void)state;
    oq_opset ops[] = {{"", 20}, {"com.microsoft", 1}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 2, NULL, &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM_SYM("batch"), OQ_DIM(4), OQ_DIM(64)};
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT16, 3, d);
    oq_attr a[] = {OQ_ATTR_I("num_heads", 4), OQ_ATTR_F("scale", 0.125f)};
    const char *y = "y", *z = "z";
    assert_int_equal(oq_graph_add_node(g, "MultiHeadAttention", "com.microsoft", "mha", 3,
                                       (const char *[]){"q", "q", "q"}, 1, &y, 2, a),
                     OQ_OK);
    assert_int_equal(oq_graph_add_node(g, "GroupQueryAttention", "com.microsoft", "gqa", 1,
                                       (const char *[]){"y"}, 1, &z, 1, a),
                     OQ_OK);
    const char *u = "u";
    assert_int_equal(oq_graph_add_node(g, "FusedThing", "org.example", "custom", 1,
                                       (const char *[]){"z"}, 1, &u, 0, NULL),
                     OQ_OK);
    oq_graph_add_output(g, "u", "u", OQ_DTYPE_FLOAT16, 3, d);
    oq_model_info *mi = inspect_graph(g);
    assert_int_equal(mi->n_attention, 2);
    assert_string_equal(mi->attention[0].kind, "MultiHeadAttention");
    assert_string_equal(mi->attention[0].domain, "com.microsoft");
    assert_string_equal(mi->attention[0].attrs[1], "scale=0.125");
    assert_string_equal(mi->attention[1].kind, "GroupQueryAttention");
    assert_int_equal(mi->n_warnings, 2); /* custom domain, and not imported */
    assert_non_null(strstr(mi->warnings[0], "custom domain 'org.example'"));
    assert_non_null(strstr(mi->warnings[1], "not imported"));
    assert_int_equal(op_count(mi, "com.microsoft", "MultiHeadAttention"), 1);
    oq_model_info_free(mi);
}

/* A graph without outputs is a model ONNX Runtime runs nothing of: a warning, not silence. */
static void test_no_outputs_warned(void **state)
{
    (void)state;
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, NULL, &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d);
    const char *y = oq_graph_op(g, "Relu", 1, (const char *[]){"x"}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 1, d); /* the builder refuses none: dropped below */
    uint8_t *buf;
    size_t n;
    assert_int_equal(oq_graph_serialize(g, &buf, &n, NULL), OQ_OK);
    oq_graph_free(g);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    assert_non_null(m);
    size_t n_out = m->graph->n_output;
    m->graph->n_output = 0;
    oq_model_info *mi = NULL;
    assert_int_equal(oq_model_inspect_proto(m, "noout.onnx", &mi, NULL), OQ_OK);
    m->graph->n_output = n_out;
    onnx__model_proto__free_unpacked(m, NULL);
    free(buf);
    assert_int_equal(mi->n_outputs, 0);
    assert_int_equal(mi->n_warnings, 1);
    assert_string_equal(mi->warnings[0], "the graph has no outputs: ONNX Runtime has nothing to compute");
    oq_model_info_free(mi);
}

/* The matcher shared with convert: which decomposed chains are attention, and why not. */
static void test_fixture_chains(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        size_t n;
        const char *detail;
    } cases[] = {
        {"mlpf_like/mlpf_like_op18.onnx", 2, "; fusable: scale 0.288675, additive mask, IsNaN guard, K^T by reshapes"},
        {"tx_encoder/tx_encoder_op18.onnx", 2, "; fusable: scale 0.353553, additive mask, K^T by reshapes"},
        {"hand_attention/hand_attention_op18.onnx", 1, "; fusable: scale 0.353553, Where mask, IsNaN guard"},
        {"decoder_lm/decoder_lm_op18.onnx", 1, "; fusable: scale 0.353553, additive mask, IsNaN guard, K^T by reshapes"},
        {"llama_like/llama_like_op18.onnx", 1, "; fusable: scale 0.353553, additive mask, IsNaN guard, K^T by reshapes"},
        {"bert_like/bert_like_op18.onnx", 2, "; fusable: scale 0.353553, additive mask"},
        {"wrong_axis/wrong_axis_op18.onnx", 1,
         "; not attention: softmax over axis 2 of 4 (the query axis), not over the keys (the last axis)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fixtures/torch/%s", OQ_SOURCE_DIR, cases[i].file);
        oq_model_info *mi;
        assert_int_equal(oq_model_inspect_file(path, &mi, NULL), OQ_OK);
        assert_int_equal(mi->n_attention, cases[i].n);
        for (size_t k = 0; k < mi->n_attention; k++) {
            const char *d = mi->attention[k].detail;
            size_t dl = strlen(d), cl = strlen(cases[i].detail);
            assert_true(dl > cl);
            assert_string_equal(d + dl - cl, cases[i].detail);
        }
        oq_model_info_free(mi);
    }
}

/* Grouped-query heads give rank-5 scores: attention, but not in a form convert rewrites. */
static void test_gqa_chain_not_fusable(void **state)
{
    (void)state;
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.kv_heads = 2;
    oq_graph *g;
    assert_int_equal(oq_export_sdpa(&c, &g, NULL), OQ_OK);
    oq_model_info *mi = inspect_graph(g);
    assert_int_equal(mi->n_attention, 1);
    assert_non_null(strstr(mi->attention[0].detail, "; not fusable: rank-5 scores (grouped-query heads)"));
    oq_model_info_free(mi);
}

static void test_bad_files(void **state)
{
    (void)state;
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    oq_graph *g;
    assert_int_equal(oq_export_sdpa(&c, &g, NULL), OQ_OK);
    uint8_t *buf;
    size_t n;
    assert_int_equal(oq_graph_serialize(g, &buf, &n, NULL), OQ_OK);
    oq_graph_free(g);
    oq_model_info *mi = NULL;
    oq_err err = {0};
    /* Truncated inside the graph: protobuf lengths no longer add up. */
    assert_int_equal(oq_model_inspect_bytes(buf, n / 2, "half.onnx", &mi, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "half.onnx: not an ONNX model (protobuf parse failed: "
                                 "truncated, corrupt or another format)");
    assert_null(mi);
    free(buf);
    assert_int_equal(oq_model_inspect_bytes("", 0, "empty.onnx", &mi, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "empty.onnx: not an ONNX model (no ir_version)");
    const char text[] = "PK\x03\x04 not a model at all";
    assert_int_equal(oq_model_inspect_bytes(text, sizeof text - 1, "x.npz", &mi, &err), OQ_ERR_FORMAT);
    assert_int_equal(oq_model_inspect_file("/nonexistent/m.onnx", &mi, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent/m.onnx"));
}

/* An attention24 encoder of width 256 serialized (*n bytes, the caller frees): its
 * projections, 256 x 256 float32, are initializers of 256 KiB each. */
static uint8_t *wide_encoder_bytes(size_t *n)
{
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    c.width = 256;
    c.ffn_width = 512;
    oq_encoder_weights *w;
    assert_int_equal(oq_encoder_weights_random(&c, 1, &w, NULL), OQ_OK);
    oq_encoder_export x = {OQ_ATTN_ATTENTION24, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0};
    oq_graph *g;
    assert_int_equal(oq_export_encoder(w, &x, &g, NULL), OQ_OK);
    oq_encoder_weights_free(w);
    uint8_t *buf;
    assert_int_equal(oq_graph_serialize(g, &buf, n, NULL), OQ_OK);
    oq_graph_free(g);
    return buf;
}

/* buf's n bytes written to a fresh file named after the template `path`. */
static void write_temp(char *path, const uint8_t *buf, size_t n)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
    close(fd);
}

/* A model whose graph holds a node whose attribute holds a graph ... `ifs` times over (as If
 * nodes' then_branch do), with an ir_version: messages nested 1 + 3 ifs deep. Built outside in,
 * each level's length known from the levels inside it. */
static uint8_t *nested_model(size_t ifs, size_t *n)
{
    size_t levels = 1 + 3 * ifs, *len = calloc(levels, sizeof *len);
    uint8_t *field = malloc(levels), *buf = malloc(2 + 6 * levels), *p = buf;
    assert_true(len && field && buf);
    field[0] = 7; /* ModelProto.graph, then GraphProto.node, NodeProto.attribute, AttributeProto.g */
    for (size_t i = 1; i < levels; i++) field[i] = (uint8_t[]){1, 5, 6}[(i - 1) % 3];
    for (size_t i = levels - 1; i-- > 0;) { /* the innermost graph is empty */
        size_t v = len[i + 1], w = 1;
        while (v >>= 7) w++;
        len[i] = 1 + w + len[i + 1];
    }
    *p++ = 0x08, *p++ = 9; /* ir_version 9 */
    for (size_t i = 0; i < levels; i++) {
        *p++ = (uint8_t)(field[i] << 3 | 2);
        for (size_t v = len[i]; ; v >>= 7) {
            *p++ = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
            if (v < 0x80) break;
        }
    }
    *n = (size_t)(p - buf);
    free(len);
    free(field);
    return buf;
}

/* Subgraphs nested past protobuf's recursion limit (100: what ORT reads) are refused in one
 * line before protobuf-c unpacks them: it recursed without a limit, and 3000 If levels (112 KB)
 * overflowed the stack of every command (SIGSEGV). In memory, and from a file (its lean copy). */
static void test_nesting_bounded(void **state)
{
    (void)state;
    size_t n;
    oq_err err = {0};
    oq_model_info *mi = NULL;
    uint8_t *buf = nested_model(33, &n); /* 100 levels: read */
    oq_model_inspect_bytes(buf, n, "ok.onnx", &mi, &err);
    assert_null(strstr(err.msg, "nested"));
    oq_model_info_free(mi);
    mi = NULL;
    free(buf);
    buf = nested_model(34, &n); /* 103 */
    assert_int_equal(oq_model_inspect_bytes(buf, n, "deep.onnx", &mi, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "deep.onnx: messages nested deeper than 100 levels (subgraphs in subgraphs), the "
                        "most protobuf, and so ONNX Runtime, reads");
    assert_null(mi);
    free(buf);
    buf = nested_model(30000, &n); /* ~400 KB: the lean copy's path */
    char path[] = "/tmp/oq_test_deep_XXXXXX";
    write_temp(path, buf, n);
    assert_int_equal(oq_model_inspect_file(path, &mi, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, ": messages nested deeper than 100 levels"));
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(oq_model_inspect_bytes(buf, n, "deep.onnx", &mi, &err), OQ_ERR_FORMAT);
    unlink(path);
    free(buf);
}

/* A file's inspection does not read its weights (lean.c): the initializers above 64 KiB
 * keep their byte counts without data, the small ones (shape constants) their bytes, and
 * what inspection reports is what the whole model in memory gives. A truncated file still
 * fails as not a model. */
static void test_file_without_weights(void **state)
{
    (void)state;
    size_t n;
    uint8_t *buf = wide_encoder_bytes(&n);
    char path[] = "/tmp/oq_test_lean_XXXXXX";
    write_temp(path, buf, n);

    Onnx__ModelProto *m = NULL;
    oq_err err = {0};
    assert_int_equal(oq_model_proto_read(path, &m, &err), OQ_OK);
    assert_non_null(m);
    size_t big = 0, small = 0;
    for (size_t i = 0; i < m->graph->n_initializer; i++) {
        const Onnx__TensorProto *t = m->graph->initializer[i];
        if (t->raw_data.len > 65536) {
            assert_null(t->raw_data.data);
            big++;
        } else if (t->raw_data.len) {
            assert_non_null(t->raw_data.data);
            small++;
        }
    }
    assert_true(big >= 4 && small >= 1);
    onnx__model_proto__free_unpacked(m, NULL);

    oq_model_info *lean = NULL, *whole = NULL;
    assert_int_equal(oq_model_inspect_file(path, &lean, &err), OQ_OK);
    assert_int_equal(oq_model_inspect_bytes(buf, n, path, &whole, &err), OQ_OK);
    char *a = oq_model_info_json(lean), *b = oq_model_info_json(whole);
    assert_true(lean->initializer_bytes > 1000000); /* the weights are counted, unread */
    assert_string_equal(a, b);
    free(a);
    free(b);
    oq_model_info_free(lean);
    oq_model_info_free(whole);

    assert_int_equal(truncate(path, (off_t)(n - 100)), 0);
    assert_int_equal(oq_model_inspect_file(path, &lean, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "protobuf parse failed"));
    unlink(path);
    free(buf);
}

/* Bytes this program's fstat adds to a regular file's size: the file seen as it was before
 * it shrank (cp over a model truncates it while another process inspects it). */
static off_t fstat_extra;

int fstat(int fd, struct stat *st)
{
    int r = (int)syscall(SYS_fstat, fd, st);
    if (r == 0 && S_ISREG(st->st_mode)) st->st_size += fstat_extra;
    return r;
}

/* A model file that is shorter than its fstat said is read to its end and inspected, or
 * refused with an error: never a SIGBUS (a mapped file faults on the pages past its end;
 * lean.c read the model through mmap). */
static void test_file_shrunk_after_fstat(void **state)
{
    (void)state;
    size_t n;
    uint8_t *buf = wide_encoder_bytes(&n);
    char path[] = "/tmp/oq_test_shrunk_XXXXXX";
    write_temp(path, buf, n);

    oq_model_info *mi = NULL, *whole = NULL;
    oq_err err = {0};
    fstat_extra = 4 << 20;
    oq_status st = oq_model_inspect_file(path, &mi, &err);
    fstat_extra = 0;
    assert_int_equal(st, OQ_OK);
    assert_int_equal(oq_model_inspect_bytes(buf, n, path, &whole, &err), OQ_OK);
    char *a = oq_model_info_json(mi), *b = oq_model_info_json(whole);
    assert_string_equal(a, b);
    free(a);
    free(b);
    oq_model_info_free(mi);
    oq_model_info_free(whole);
    unlink(path);
    free(buf);
}

/* An attention24 sdpa model written to a fresh file named after the template `path`. */
static void write_attention24(char *path, oq_mask_form mask)
{
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.format = OQ_ATTN_ATTENTION24;
    c.mask = mask;
    oq_graph *g;
    assert_int_equal(oq_export_sdpa(&c, &g, NULL), OQ_OK);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* A node's inputs as the model declares them: graph inputs by their dims, an initializer by its
 * own, an omitted optional input as "", a value with no declaration as rank -1. */
static void test_find_nodes(void **state)
{
    (void)state;
    char path[] = "/tmp/oq_test_nodes_XXXXXX";
    write_attention24(path, OQ_MASK_SEQLEN);
    oq_node_info *nodes;
    size_t n;
    assert_int_equal(oq_model_find_nodes(path, NULL, "Attention", &nodes, &n, NULL), OQ_OK);
    assert_int_equal(n, 1);
    const oq_node_info *a = &nodes[0];
    assert_string_equal(a->op_type, "Attention");
    assert_int_equal(a->n_inputs, 7);
    assert_string_equal(a->inputs[0].name, "query"); /* a graph input, with its dims */
    assert_int_equal(a->inputs[0].elem_type, OQ_DTYPE_FLOAT32);
    assert_int_equal(a->inputs[0].rank, 4);
    assert_string_equal(a->inputs[0].dims[0], "batch");
    assert_string_equal(a->inputs[0].dims[1], "4");
    assert_string_equal(a->inputs[3].name, ""); /* no attn_mask */
    assert_int_equal(a->inputs[3].rank, -1);
    assert_int_equal(a->inputs[6].rank, -1);    /* nonpad_kv_seqlen: computed, undeclared */
    assert_int_equal(oq_node_info_attr_int(a, "is_causal", 7), 7);
    char name[256];
    snprintf(name, sizeof name, "%s", a->name);
    oq_node_infos_free(nodes, n);
    assert_int_equal(oq_model_find_nodes(path, name, NULL, &nodes, &n, NULL), OQ_OK);
    assert_int_equal(n, 1);
    oq_node_infos_free(nodes, n);
    assert_int_equal(oq_model_find_nodes(path, "no such node", NULL, &nodes, &n, NULL), OQ_OK);
    assert_int_equal(n, 0);
    oq_err err = {0};
    assert_int_equal(oq_model_find_nodes("/nonexistent/m.onnx", NULL, NULL, &nodes, &n, &err), OQ_ERR_IO);
    unlink(path);
}

/* One parse for both views (validate's dispatch check and advice): the same summary and nodes
 * as oq_model_inspect_file and oq_model_find_nodes; a failure leaves all three empty. */
static void test_inspect_nodes(void **state)
{
    (void)state;
    char path[] = "/tmp/oq_test_inodes_XXXXXX";
    write_attention24(path, OQ_MASK_AUTO);
    oq_model_info *mi, *want_mi;
    oq_node_info *nodes, *want;
    size_t n, n_want;
    assert_int_equal(oq_model_inspect_nodes(path, "Attention", &mi, &nodes, &n, NULL), OQ_OK);
    assert_int_equal(oq_model_inspect_file(path, &want_mi, NULL), OQ_OK);
    assert_int_equal(oq_model_find_nodes(path, NULL, "Attention", &want, &n_want, NULL), OQ_OK);
    char *j = oq_model_info_json(mi), *want_j = oq_model_info_json(want_mi);
    assert_string_equal(j, want_j);
    assert_int_equal(n, 1);
    assert_int_equal(n_want, 1);
    assert_string_equal(nodes[0].name, want[0].name);
    assert_int_equal(nodes[0].n_inputs, want[0].n_inputs);
    assert_int_equal(nodes[0].inputs[0].rank, 4);
    assert_string_equal(nodes[0].inputs[0].dims[1], want[0].inputs[0].dims[1]);
    free(j);
    free(want_j);
    oq_model_info_free(mi);
    oq_model_info_free(want_mi);
    oq_node_infos_free(nodes, n);
    oq_node_infos_free(want, n_want);
    assert_int_equal(truncate(path, 40), 0); /* cut inside the graph (the write replaced fd's file) */
    oq_err err = {0};
    assert_int_equal(oq_model_inspect_nodes(path, "Attention", &mi, &nodes, &n, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "not an ONNX model"));
    assert_null(mi);
    assert_null(nodes);
    assert_int_equal(n, 0);
    unlink(path);
    assert_int_equal(oq_model_inspect_nodes(path, "Attention", &mi, &nodes, &n, &err), OQ_ERR_IO);
    assert_null(mi);
}

/* issue 15: every optional string of a model may be absent (NULL after parsing). */
static void test_absent_strings(void **state)
{
    (void)state;
    oq_model_info *mi = NULL;
    oq_err err = {0};
    /* a node with one input and no op_type */
    static const uint8_t no_op[] = {0x08, 0x08, 0x42, 0x02, 0x10, 0x11, 0x3a,
                                    0x05, 0x0a, 0x03, 0x0a, 0x01, 0x78};
    assert_int_equal(oq_model_inspect_bytes(no_op, sizeof no_op, "no_op.onnx", &mi, &err), OQ_OK);
    assert_int_equal(mi->n_nodes, 1);
    assert_int_equal(op_count(mi, "", ""), 1);
    oq_model_info_free(mi);
    /* an unnamed graph input beside an initializer named 'w' */
    static const uint8_t unnamed[] = {0x08, 0x08, 0x42, 0x02, 0x10, 0x11, 0x3a, 0x07,
                                      0x2a, 0x03, 0x42, 0x01, 0x77, 0x5a, 0x00};
    assert_int_equal(oq_model_inspect_bytes(unnamed, sizeof unnamed, "unnamed.onnx", &mi, &err),
                     OQ_OK);
    assert_int_equal(mi->n_inputs, 1);
    assert_string_equal(mi->inputs[0].name, "");
    assert_int_equal(mi->n_initializers, 1);
    char *json = oq_model_info_json(mi);
    assert_non_null(json);
    free(json);
    oq_model_info_free(mi);
}

#define FIXTURES OQ_SOURCE_DIR "/tests/fixtures/onnx/"

/* A graph input that is also an initializer (IR >= 4) has a default, which a caller may
 * override: it is an input, listed apart from those to feed and marked in the JSON (it was
 * left out as an initializer). Below IR 4 every initializer is listed as an input, and none is
 * one. tests/fixtures/onnx/make_default_input.py writes both files. */
static void test_inputs_with_a_default(void **state)
{
    (void)state;
    oq_model_info *mi = NULL;
    oq_err err = {0};
    if (oq_model_inspect_file(FIXTURES "default_input.onnx", &mi, &err)) fail_msg("%s", err.msg);
    assert_int_equal(mi->n_inputs, 1);
    assert_string_equal(mi->inputs[0].name, "x");
    assert_int_equal(mi->n_default_inputs, 1);
    assert_string_equal(mi->default_inputs[0].name, "w");
    assert_int_equal(mi->default_inputs[0].rank, 1);
    assert_string_equal(mi->default_inputs[0].dims[0], "4");
    assert_ptr_equal(oq_model_default_input(mi, "w"), &mi->default_inputs[0]);
    assert_null(oq_model_default_input(mi, "x"));
    assert_null(oq_model_default_input(NULL, "w"));
    /* a file's tensor for it is refused (validate's batches, bench's inputs), one for x is not */
    oq_tensor *t[2] = {NULL, NULL};
    assert_int_equal(oq_tensor_create(&t[0], OQ_DTYPE_FLOAT32, 0, NULL, "x", NULL), OQ_OK);
    assert_int_equal(oq_tensor_create(&t[1], OQ_DTYPE_FLOAT32, 0, NULL, "w", NULL), OQ_OK);
    assert_int_equal(oq_model_refuse_default_inputs(mi, (const oq_tensor *const *)t, 1, "io.npz", "member", &err),
                     OQ_OK);
    assert_int_equal(oq_model_refuse_default_inputs(mi, (const oq_tensor *const *)t, 2, "io.npz", "member", &err),
                     OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "io.npz: member 'w': the model's input 'w' has a default (the initializer of its "
                        "name), which ortqual runs the model with: it feeds only inputs without one");
    oq_tensor_free(t[0]);
    oq_tensor_free(t[1]);
    char *json = oq_model_info_json(mi);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"default\": null"));
    assert_non_null(strstr(json, "\"default\": \"initializer\""));
    free(json);
    oq_model_info_free(mi);
    if (oq_model_inspect_file(FIXTURES "default_input_ir3.onnx", &mi, &err)) fail_msg("%s", err.msg);
    assert_int_equal(mi->n_inputs, 1);
    assert_int_equal(mi->n_default_inputs, 0);
    oq_model_info_free(mi);
}

/* Chains whose nodes lack inputs (fuzz/regressions/inspect/matcher-*, each read past a
 * node's inputs before the fix): the matcher says why they are not fusable. */
static void test_matcher_missing_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *file, *why;
    } cases[] = {
        {"matcher-score-matmul-without-inputs", "not fusable: the score MatMul has 0 inputs, not 2"},
        {"matcher-key-transpose-without-input", "not fusable: the key operand 'kt' is not a transpose"},
        {"matcher-reshape-transpose-without-input", "not fusable: the key operand 'kt' is not a transpose"},
        {"matcher-where-guard-with-two-inputs", "not fusable: Where 'w' between the softmax and the value product"},
        {"matcher-isnan-without-input", "not fusable: Where 'w' between the softmax and the value product"},
        {"matcher-value-matmul-without-output", "not fusable: the value MatMul 'out' has no output"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[512];
        snprintf(path, sizeof path, OQ_SOURCE_DIR "/fuzz/regressions/inspect/%s.onnx", cases[i].file);
        oq_model_info *mi = NULL;
        oq_err err = {0};
        if (oq_model_inspect_file(path, &mi, &err)) fail_msg("%s", err.msg);
        assert_int_equal(mi->n_attention, 1);
        assert_string_equal(mi->attention[0].kind, "decomposed");
        if (!strstr(mi->attention[0].detail, cases[i].why)) fail_msg("%s: %s", cases[i].file, mi->attention[0].detail);
        oq_model_info_free(mi);
    }
}

/* The bytes of a model of graph g at ir_version ir that imports the default domain at opset
 * (malloc'd, *n long): a graph built field by field in a test, as a file holds it. */
static uint8_t *pack_model(Onnx__GraphProto *g, int64_t opset, int64_t ir, size_t *n)
{
    Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT, *ops[] = {&op};
    op.domain = "", op.has_version = 1, op.version = opset;
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    m.has_ir_version = 1, m.ir_version = ir, m.graph = g, m.n_opset_import = 1, m.opset_import = ops;
    *n = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*n);
    assert_non_null(buf);
    onnx__model_proto__pack(&m, buf);
    return buf;
}

#define DIM_VALUE ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
#define DIM_PARAM ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM

/* A declared dimension as a number (oq_dim_size) or a name (oq_dim_param), as every reader of
 * shapes takes it: a negative dim_value (tf2onnx wrote -1 for a dynamic dimension) is none, and
 * read as text it named the dimension "-1" at every axis (validate bound them to one size); a
 * length above INT_MAX of a Reshape's shape was its rank cut to an int. */
static void test_declared_dims(void **state)
{
    (void)state;
    Onnx__TensorShapeProto__Dimension d[6], *dp[6];
    for (size_t i = 0; i < 6; i++) onnx__tensor_shape_proto__dimension__init(&d[i]), dp[i] = &d[i];
    d[0].value_case = DIM_VALUE, d[0].dim_value = -1;
    d[1].value_case = DIM_PARAM, d[1].dim_param = "batch";
    /* d[2]: neither set */
    d[3].value_case = DIM_VALUE, d[3].dim_value = INT64_MAX;
    d[4].value_case = DIM_PARAM, d[4].dim_param = "";
    d[5].value_case = DIM_VALUE, d[5].dim_value = 4; /* shares a union with dim_param */
    static const int64_t size[] = {-1, -1, -1, INT64_MAX, -1, 4};
    static const char *const text[] = {"?", "batch", "?", "9223372036854775807", "?", "4"};
    for (size_t i = 0; i < 6; i++) assert_int_equal(oq_dim_size(&d[i]), size[i]);
    assert_int_equal(oq_dim_size(NULL), -1);
    assert_null(oq_dim_param(NULL));
    assert_null(oq_dim_param(&d[0]));
    assert_string_equal(oq_dim_param(&d[1]), "batch");
    assert_null(oq_dim_param(&d[2]));
    assert_string_equal(oq_dim_param(&d[4]), "");
    assert_null(oq_dim_param(&d[5]));

    /* an input declared with them, and a Reshape to a shape of 2^32 + 3 elements: rank unknown */
    Onnx__TensorShapeProto sh = ONNX__TENSOR_SHAPE_PROTO__INIT, sh1 = ONNX__TENSOR_SHAPE_PROTO__INIT;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT, tt1 = ONNX__TYPE_PROTO__TENSOR__INIT;
    Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT, tp1 = ONNX__TYPE_PROTO__INIT;
    Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, s = ONNX__VALUE_INFO_PROTO__INIT, *in[] = {&x, &s};
    Onnx__TensorShapeProto__Dimension len = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT, *lenp = &len;
    len.value_case = DIM_VALUE, len.dim_value = (1ll << 32) + 3;
    sh.n_dim = 6, sh.dim = dp, sh1.n_dim = 1, sh1.dim = &lenp;
    tt.has_elem_type = tt1.has_elem_type = 1, tt.elem_type = 1, tt1.elem_type = 7, tt.shape = &sh, tt1.shape = &sh1;
    tp.value_case = tp1.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, tp.tensor_type = &tt, tp1.tensor_type = &tt1;
    x.name = "x", x.type = &tp, s.name = "s", s.type = &tp1;
    char *rin[] = {"x", "s"}, *rout[] = {"y"};
    Onnx__NodeProto reshape = ONNX__NODE_PROTO__INIT, *nodes[] = {&reshape};
    reshape.op_type = "Reshape", reshape.n_input = 2, reshape.input = rin, reshape.n_output = 1, reshape.output = rout;
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "g", g.n_input = 2, g.input = in, g.n_node = 1, g.node = nodes;
    size_t n;
    uint8_t *buf = pack_model(&g, 17, 8, &n);
    oq_model_info *mi = NULL;
    oq_err err = {0};
    if (oq_model_inspect_bytes(buf, n, "dims.onnx", &mi, &err)) fail_msg("%s", err.msg);
    free(buf);
    assert_int_equal(mi->inputs[0].rank, 6);
    for (size_t i = 0; i < 6; i++) assert_string_equal(mi->inputs[0].dims[i], text[i]);
    oq_model_info_free(mi);
    /* a node's inputs name an unnamed dimension as the model's inputs do: an empty dim_param
     * read "" there (a refusal's shape "[?,batch,?,..,,4]") */
    for (size_t i = 0; i < 6; i++) assert_string_equal(oq_dim_label(&d[i]), i == 1 ? "batch" : "?");
    assert_string_equal(oq_dim_label(NULL), "?");
    oq_node_info *ni = NULL;
    size_t n_ni = 0;
    buf = pack_model(&g, 17, 8, &n);
    if (oq_model_find_nodes_bytes(buf, n, "dims.onnx", NULL, "Reshape", &ni, &n_ni, &err)) fail_msg("%s", err.msg);
    free(buf);
    assert_int_equal(n_ni, 1);
    assert_int_equal(ni[0].inputs[0].rank, 6);
    for (size_t i = 0; i < 6; i++) assert_string_equal(ni[0].inputs[0].dims[i], text[i]);
    oq_node_infos_free(ni, n_ni);
    oq_gview *v = NULL;
    assert_int_equal(oq_gview_create(&g, 17, &v, &err), OQ_OK);
    assert_int_equal(oq_gview_rank(v, "y"), -1);
    oq_gview_free(v);
}

/* A graph that reads each value twice, Add(x, x) forty times over, every sum declared of rank 4
 * with no sizes, into a 4-D Attention: the walk back to the heads took each path (2^40 of them)
 * and never ended (the alarm ends a hang); bounded, it gives up, heads unknown. */
static void test_heads_walk_bounded(void **state)
{
    (void)state;
    enum { N = 40 };
    Onnx__TensorShapeProto__Dimension d[4], *dp[4];
    for (size_t i = 0; i < 4; i++) onnx__tensor_shape_proto__dimension__init(&d[i]), dp[i] = &d[i];
    Onnx__TensorShapeProto sh = ONNX__TENSOR_SHAPE_PROTO__INIT;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
    sh.n_dim = 4, sh.dim = dp, tt.has_elem_type = 1, tt.elem_type = 1, tt.shape = &sh;
    tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, tp.tensor_type = &tt;
    static char names[N + 1][16];
    static char *in[N][2], *out[N], *attn_in[3], *attn_out[] = {"y"};
    Onnx__ValueInfoProto vi[N + 1], *vip[N + 1];
    Onnx__NodeProto node[N + 1], *np[N + 1];
    for (size_t i = 0; i <= N; i++) {
        snprintf(names[i], sizeof names[i], "v%zu", i);
        onnx__value_info_proto__init(&vi[i]), vi[i].name = names[i], vi[i].type = &tp, vip[i] = &vi[i];
        onnx__node_proto__init(&node[i]), np[i] = &node[i];
    }
    for (size_t i = 0; i < N; i++) {
        in[i][0] = in[i][1] = names[i], out[i] = names[i + 1];
        node[i].op_type = "Add", node[i].n_input = 2, node[i].input = in[i], node[i].n_output = 1, node[i].output = &out[i];
    }
    attn_in[0] = attn_in[1] = attn_in[2] = names[N];
    node[N].op_type = "Attention", node[N].name = "attn", node[N].n_input = 3, node[N].input = attn_in;
    node[N].n_output = 1, node[N].output = attn_out;
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "g", g.n_input = 1, g.input = vip, g.n_value_info = N, g.value_info = vip + 1, g.n_node = N + 1, g.node = np;
    size_t n;
    uint8_t *buf = pack_model(&g, 23, 10, &n);
    oq_model_info *mi = NULL;
    oq_err err = {0};
    alarm(20);
    if (oq_model_inspect_bytes(buf, n, "twice.onnx", &mi, &err)) fail_msg("%s", err.msg);
    alarm(0);
    free(buf);
    assert_int_equal(mi->n_attention, 1);
    assert_int_equal(mi->attention[0].heads, 0);
    oq_model_info_free(mi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_nodes),
        cmocka_unit_test(test_inspect_nodes),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_encoder_attention_nodes),
        cmocka_unit_test(test_sdpa_static_dims_and_bool_mask),
        cmocka_unit_test(test_attention_heads),
        cmocka_unit_test(test_heads_folded_into_batch),
        cmocka_unit_test(test_heads_folded_from_hidden),
        cmocka_unit_test(test_heads_mha_fold),
        cmocka_unit_test(test_head_size_as_convert_reads_it),
        cmocka_unit_test(test_heads_walk_bounded),
        cmocka_unit_test(test_microsoft_and_custom_domains),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_file_without_weights),
        cmocka_unit_test(test_nesting_bounded),
        cmocka_unit_test(test_file_shrunk_after_fstat),
        cmocka_unit_test(test_fixture_chains),
        cmocka_unit_test(test_gqa_chain_not_fusable),
        cmocka_unit_test(test_absent_strings),
        cmocka_unit_test(test_matcher_missing_inputs),
        cmocka_unit_test(test_inputs_with_a_default),
        cmocka_unit_test(test_declared_dims),
        cmocka_unit_test(test_no_outputs_warned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
