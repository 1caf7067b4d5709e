/* convert: the real PyTorch exports become Attention-24 models that match PyTorch, the
 * checks bite, and the rewrites that would not be exact are refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "convert/convert-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/convert.h"
#include "ortqual/export.h"
#include "ortqual/fileio.h"
#include "ortqual/graph.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "ortqual/validate.h"

#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

#define FIX OQ_SOURCE_DIR "/tests/fixtures/torch/"

/* The fixture's two batches and PyTorch's outputs for them. */
typedef struct batches {
    oq_npz *in[2], *out[2];
} batches;

static void load_batches(const char *fixture, batches *b)
{
    char p[512];
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, FIX "%s/inputs_%03d.npz", fixture, i);
        assert_int_equal(oq_npz_read(p, &b->in[i], NULL), OQ_OK);
        snprintf(p, sizeof p, FIX "%s/outputs_%03d.npz", fixture, i);
        assert_int_equal(oq_npz_read(p, &b->out[i], NULL), OQ_OK);
    }
}

static void free_batches(batches *b)
{
    for (int i = 0; i < 2; i++) {
        oq_npz_free(b->in[i]);
        oq_npz_free(b->out[i]);
    }
}

/* The done-when conversion: --flash (--fuse --mask-to-seqlen --attention-dtype fp16 --opset 24). */
static oq_convert_opts fast_opts(const batches *b)
{
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    oq_convert_opts_flash(&o);
    o.runtime = rt;
    if (b) {
        o.n_batches = 2;
        o.inputs = (const oq_npz *const *)b->in;
        o.expected = (const oq_npz *const *)b->out;
    }
    return o;
}

static int64_t op_count(const oq_model_info *mi, const char *op)
{
    for (size_t i = 0; i < mi->n_ops; i++)
        if (!*mi->ops[i].domain && !strcmp(mi->ops[i].op_type, op)) return mi->ops[i].count;
    return 0;
}

static int has_attr(const oq_attention_info *a, const char *s)
{
    for (size_t i = 0; i < a->n_attrs; i++)
        if (!strcmp(a->attrs[i], s)) return 1;
    return 0;
}

/* The declared last dim of Attention node `node`'s input k (0 when not static). */
static int64_t attention_input_dim(const Onnx__GraphProto *g, const Onnx__NodeProto *node, size_t k, int *rank)
{
    for (size_t j = 0; j < g->n_value_info; j++) {
        const Onnx__ValueInfoProto *vi = g->value_info[j];
        if (strcmp(vi->name, node->input[k])) continue;
        const Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
        *rank = sh ? (int)sh->n_dim : -1;
        return sh && sh->n_dim ? sh->dim[sh->n_dim - 1]->dim_value : 0;
    }
    *rank = -1;
    return 0;
}

/* Every Attention node's Q, K and V of `path` have a static last dim `head` (rank 4) or
 * heads * `head` (rank 3): the head size after padding. */
static void assert_head_size(const char *path, int64_t head, int64_t heads)
{
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    assert_non_null(m);
    size_t seen = 0;
    for (size_t i = 0; i < m->graph->n_node; i++) {
        if (strcmp(m->graph->node[i]->op_type, "Attention")) continue;
        seen++;
        for (size_t k = 0; k < 3; k++) {
            int r;
            int64_t d = attention_input_dim(m->graph, m->graph->node[i], k, &r);
            if (d != (r == 3 ? heads * head : head))
                fail_msg("%s: Attention input '%s': last dim %lld (rank %d), want head size %lld", path,
                         m->graph->node[i]->input[k], (long long)d, r, (long long)head);
        }
    }
    assert_true(seen > 0);
    onnx__model_proto__free_unpacked(m, NULL);
}

static size_t count_steps(const oq_convert_report *r, const char *pass, const char *action)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n_steps; i++)
        k += !strcmp(r->steps[i].pass, pass) && !strcmp(r->steps[i].action, action);
    return k;
}

/* Every Attention node's Q, K, V are declared float16 of rank 4 (ORT's CUDA EP was seen
 * to crash on Attention inputs without shapes). */
static void assert_attention_inputs_typed(const char *path)
{
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    assert_non_null(m);
    const Onnx__GraphProto *g = m->graph;
    for (size_t i = 0; i < g->n_node; i++) {
        if (strcmp(g->node[i]->op_type, "Attention")) continue;
        for (size_t k = 0; k < 3; k++) {
            const Onnx__ValueInfoProto *vi = NULL;
            for (size_t j = 0; j < g->n_value_info && !vi; j++)
                if (!strcmp(g->value_info[j]->name, g->node[i]->input[k])) vi = g->value_info[j];
            if (!vi) fail_msg("%s: Attention input '%s' has no value_info", path, g->node[i]->input[k]);
            assert_int_equal(vi->type->tensor_type->elem_type, OQ_DTYPE_FLOAT16);
            assert_non_null(vi->type->tensor_type->shape);
            assert_int_equal(vi->type->tensor_type->shape->n_dim, 4);
        }
    }
    onnx__model_proto__free_unpacked(m, NULL);
}

/* An export with weights outside it converts to a pair: OUT.onnx and OUT.onnx.data beside it,
 * holding weights the model names; one with its weights inside stays one file. */
static void assert_external_kept(const char *in, const char *out, const oq_convert_report *r)
{
    oq_model_info *a, *b;
    assert_int_equal(oq_model_inspect_file(in, &a, NULL), OQ_OK);
    assert_int_equal(oq_model_inspect_file(out, &b, NULL), OQ_OK);
    if (a->n_external) {
        char data[520];
        snprintf(data, sizeof data, "%s.data", out);
        assert_non_null(r->external_data);
        assert_string_equal(r->external_data, data);
        assert_true(b->n_external > 0 && b->n_external_files == 1);
        assert_int_equal(access(data, R_OK), 0);
    } else {
        assert_null(r->external_data);
        assert_int_equal(b->n_external, 0);
    }
    oq_model_info_free(a);
    oq_model_info_free(b);
}

/* Convert one fixture export the done-when way and check what was written. */
static void convert_fixture(const char *fixture, int opset, int n_attention, int causal, const char *mask)
{
    char in[512], out[512];
    snprintf(in, sizeof in, FIX "%s/%s_op%d.onnx", fixture, fixture, opset);
    char *dir = temp_dir("convert");
    snprintf(out, sizeof out, "%s/fast.onnx", dir);
    batches b;
    load_batches(fixture, &b);
    oq_convert_opts o = fast_opts(&b);
    oq_convert_report *r = NULL;
    oq_err err = {0};
    oq_status st = oq_convert_file(in, out, 0, &o, &r, &err);
    if (st) fail_msg("%s: %s", in, err.msg);
    assert_true(r->checked && r->passed);
    assert_external_kept(in, out, r);
    int two_outputs = !strcmp(fixture, "mlpf_like") || !strcmp(fixture, "decoder_lm") || !strcmp(fixture, "bert_like");
    assert_int_equal(r->n_checks, 2 * (two_outputs ? 2 : 1));
    for (size_t i = 0; i < r->n_checks; i++) {
        const oq_compare_result *v = &r->checks[i].vs_expected;
        assert_true(r->checks[i].has_expected && v->passed);
        assert_true(v->num_valid > 0);
        /* padding left out; bert_like's pooler_output [B,d] has no sequence axis: all valid */
        if (strcmp(v->name, "pooler_output")) assert_true(v->num_valid < v->num_elements);
        else assert_true(v->num_valid == v->num_elements);
    }
    /* ORT refuses the opset-23 broadcast key-padding mask [B,1,1,L]: the lowered original was the
     * reference; the causal masks [B,1,L,L] of decoder_lm and llama_like it runs */
    int refused = opset == 23 && strcmp(fixture, "decoder_lm") && strcmp(fixture, "llama_like");
    assert_int_equal(!strncmp(r->reference, "original, lowered", 17), refused);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(out, &mi, NULL), OQ_OK);
    assert_int_equal(mi->opsets[0].version, 24);
    assert_int_equal((int)mi->n_attention, n_attention);
    assert_int_equal(op_count(mi, "Softmax"), 0);
    assert_int_equal(op_count(mi, "Elu"), 0);
    for (size_t i = 0; i < mi->n_attention; i++) {
        assert_string_equal(mi->attention[i].kind, "Attention");
        assert_string_equal(mi->attention[i].detail, causal ? "inputs: Q K V" : "inputs: Q K V nonpad_kv_seqlen");
        assert_true(has_attr(&mi->attention[i], causal ? "is_causal=1" : "is_causal=0"));
    }
    oq_model_info_free(mi);
    assert_attention_inputs_typed(out);
    /* mlpf_like has 4 heads of 12: padded to 16 for ORT's CUDA flash attention; the others
     * have heads of 8 and stay as they are */
    int padded = !strcmp(fixture, "mlpf_like");
    assert_head_size(out, padded ? 16 : 8, 0);
    assert_int_equal(count_steps(r, "pad-head-size", "rewritten"), padded ? (size_t)n_attention : 0);
    int has;
    char input[64];
    assert_int_equal(oq_convert_read_contract(out, &has, input, sizeof input, NULL, NULL), OQ_OK);
    assert_true(has);
    assert_string_equal(input, mask);
    oq_convert_report_free(r);
    free_batches(&b);
    remove_dir(dir);
}

static void test_tx_encoder(void **state)
{
    (void)state;
    convert_fixture("tx_encoder", 18, 2, 0, "mask");
    convert_fixture("tx_encoder", 23, 2, 0, "mask");
}

static void test_mlpf_like(void **state)
{
    (void)state;
    convert_fixture("mlpf_like", 18, 2, 0, "mask");
    convert_fixture("mlpf_like", 23, 2, 0, "mask");
}

static void test_hand_attention(void **state)
{
    (void)state;
    convert_fixture("hand_attention", 18, 1, 0, "mask");
}

/* Causal AND key padding: is_causal = 1 without nonpad_kv_seqlen (see the next test for why). */
static void test_decoder_causal_padding(void **state)
{
    (void)state;
    convert_fixture("decoder_lm", 18, 1, 1, "attention_mask");
    convert_fixture("decoder_lm", 23, 1, 1, "attention_mask");
}

/* BERT as Hugging Face writes it: the extended mask (1 - mask) * finfo.min added to the
 * scores is the key padding of attention_mask (nonpad_kv_seqlen), and an output without the
 * sequence axis (the pooler's) is compared whole. */
static void test_bert_like(void **state)
{
    (void)state;
    convert_fixture("bert_like", 18, 2, 0, "attention_mask");
}

/* Grouped-query attention as Hugging Face writes it (K and V of 2 heads repeated for 4 query
 * heads by Expand + Reshape before the product), rotary embeddings, causal + key padding: the
 * repeated K and V are ordinary 4-head inputs, so the chain fuses like any other. llama_like_ext
 * is the same block as torch.onnx.export writes it by default, its weights in a file beside it. */
static void test_llama_like(void **state)
{
    (void)state;
    convert_fixture("llama_like", 18, 1, 1, "attention_mask");
    convert_fixture("llama_like", 23, 1, 1, "attention_mask");
    convert_fixture("llama_like_ext", 18, 1, 1, "attention_mask");
}

/* Why the converter never writes is_causal = 1 with nonpad_kv_seqlen for a padded
 * self-attention: ORT aligns that diagonal bottom-right (query i sees keys
 * j <= i + len - L, as ONNX 24's errata says), so with len < L the first valid
 * queries would see no key at all. This pins ORT's behaviour. */
static void test_ort_causal_nonpad_is_bottom_right(void **state)
{
    (void)state;
    oq_opset ops[] = {{"", 24}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "causal", &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM(1), OQ_DIM(1), OQ_DIM(4), OQ_DIM(2)}, b1[] = {OQ_DIM(1)};
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, 4, d);
    oq_graph_add_input(g, "v", OQ_DTYPE_FLOAT32, 4, d);
    oq_graph_add_input(g, "n", OQ_DTYPE_INT64, 1, b1);
    const char *in[] = {"q", "q", "v", "", "", "", "n"}, *out[] = {"y"};
    oq_attr a[] = {OQ_ATTR_I("is_causal", 1)};
    oq_graph_add_node(g, "Attention", NULL, "att", 7, in, 1, out, 1, a);
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 4, d);
    uint8_t *buf;
    size_t len;
    assert_int_equal(oq_graph_serialize(g, &buf, &len, NULL), OQ_OK);
    oq_graph_free(g);
    oq_session_opts so = {0};
    oq_session *s;
    assert_int_equal(oq_session_create(rt, NULL, buf, len, &so, &s, NULL), OQ_OK);
    free(buf);
    int64_t sh[] = {1, 1, 4, 2}, one = 1;
    float qv[8] = {0}, vv[8] = {1, 1, 2, 2, 3, 3, 4, 4}; /* equal scores: the output is the mean of the seen values */
    int64_t nv[1] = {2};                                 /* 2 valid keys of 4 */
    oq_tensor *q, *v, *n, **y;
    oq_tensor_wrap(&q, OQ_DTYPE_FLOAT32, 4, sh, qv, "q", NULL);
    oq_tensor_wrap(&v, OQ_DTYPE_FLOAT32, 4, sh, vv, "v", NULL);
    oq_tensor_wrap(&n, OQ_DTYPE_INT64, 1, &one, nv, "n", NULL);
    oq_tensor *ins[] = {q, v, n};
    size_t n_out;
    assert_int_equal(oq_session_run(s, 3, ins, &n_out, &y, NULL), OQ_OK);
    const float *yv = y[0]->data;
    /* top-left causal + padding would give rows 1, 1.5, 1.5, 1.5; ORT gives 0, 0, 1, 1.5 */
    assert_float_equal(yv[0], 0.0, 1e-6);
    assert_float_equal(yv[2], 0.0, 1e-6);
    assert_float_equal(yv[4], 1.0, 1e-6);
    assert_float_equal(yv[6], 1.5, 1e-6);
    oq_tensors_free(y, n_out);
    oq_tensor_free(q), oq_tensor_free(v), oq_tensor_free(n);
    oq_session_free(s);
}

static const oq_convert_step *find_step(const oq_convert_report *r, const char *pass, const char *action)
{
    for (size_t i = 0; i < r->n_steps; i++)
        if (!strcmp(r->steps[i].pass, pass) && !strcmp(r->steps[i].action, action)) return &r->steps[i];
    return NULL;
}

/* A softmax over the query axis looks like attention and is not: it stays as it is. */
static void test_wrong_axis_not_fused(void **state)
{
    (void)state;
    batches b;
    load_batches("wrong_axis", &b);
    oq_convert_opts o = fast_opts(&b);
    oq_convert_report *r;
    char *dir = temp_dir("convert");
    char out[512];
    snprintf(out, sizeof out, "%s/w.onnx", dir);
    assert_int_equal(oq_convert_file(FIX "wrong_axis/wrong_axis_op18.onnx", out, 0, &o, &r, NULL), OQ_OK);
    assert_int_equal(r->fused, 0);
    const oq_convert_step *s = find_step(r, "fuse", "skipped");
    assert_non_null(s);
    assert_non_null(strstr(s->detail, "not attention: softmax over axis 2 of 4 (the query axis)"));
    assert_true(r->passed);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(out, &mi, NULL), OQ_OK);
    assert_int_equal(op_count(mi, "Softmax"), 1);
    assert_int_equal(op_count(mi, "Attention"), 0);
    assert_non_null(strstr(mi->attention[0].detail, "not attention"));
    oq_model_info_free(mi);
    oq_convert_report_free(r);
    free_batches(&b);
    remove_dir(dir);
}

/* The comparison is real: a perturbed expected value and a zero tolerance both fail,
 * naming the output and the element, and nothing is written. */
static void test_check_bites(void **state)
{
    (void)state;
    batches b;
    load_batches("mlpf_like", &b);
    oq_tensor *cls = (oq_tensor *)oq_npz_get(b.out[1], "cls");
    ((float *)cls->data)[6 * 3 + 2] += 0.5f; /* event 0, position 3, class 2: a valid element */
    oq_convert_opts o = fast_opts(&b);
    char *dir = temp_dir("convert");
    char out[512];
    snprintf(out, sizeof out, "%s/x.onnx", dir);
    oq_convert_report *r;
    oq_err err = {0};
    assert_int_equal(oq_convert_file(FIX "mlpf_like/mlpf_like_op18.onnx", out, 0, &o, &r, &err), OQ_ERR_CHECK_FAILED);
    assert_false(r->passed);
    assert_non_null(strstr(r->failure, "output 'cls' differs from the expected outputs"));
    assert_non_null(strstr(r->failure, "[0,3,2]"));
    /* the original misses that value as much: the file is what is off, not the conversion */
    assert_non_null(strstr(r->failure, "and the original model's does too"));
    assert_non_null(strstr(err.msg, "cls"));
    assert_int_equal(access(out, F_OK), -1);
    oq_convert_report_free(r);
    ((float *)cls->data)[6 * 3 + 2] -= 0.5f;
    o.tolerances = "rtol=0,atol=0"; /* float16 attention is not bit-exact */
    assert_int_equal(oq_convert_file(FIX "mlpf_like/mlpf_like_op18.onnx", out, 0, &o, &r, &err), OQ_ERR_CHECK_FAILED);
    assert_non_null(strstr(r->failure, "differs from the reference"));
    assert_int_equal(access(out, F_OK), -1);
    oq_convert_report_free(r);
    free_batches(&b);
    remove_dir(dir);
}

/* nonpad_kv_seqlen is exact only for valid-prefix masks: inputs with a hole are refused. */
static void test_holes_refused(void **state)
{
    (void)state;
    batches b;
    load_batches("mlpf_like", &b);
    oq_tensor *m = (oq_tensor *)oq_npz_get(b.in[0], "mask");
    ((float *)m->data)[1 * 56 + 10] = 0; /* event 1 (31 long): a hole at position 10 */
    oq_convert_opts o = fast_opts(&b);
    oq_convert_report *r;
    oq_err err = {0};
    char *dir = temp_dir("holes"), out[512];
    snprintf(out, sizeof out, "%s/x.onnx", dir);
    assert_int_equal(oq_convert_file(FIX "mlpf_like/mlpf_like_op18.onnx", out, 0, &o, &r, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "input 'mask'"));
    assert_non_null(strstr(err.msg, "event 1"));
    assert_int_equal(dir_entries(dir), 0); /* nothing written for a refused conversion */
    remove_dir(dir);
    oq_convert_report_free(r);
    free_batches(&b);
}

/* How the tiny model's mask is made from mask [B, L]; the last four add a bias (an input
 * [1, 1, L, L], or a constant over 3 heads that widens the one head's scores). */
enum { KEY_PADDING, INVERTED, QUERY_PADDING, QUERY_AND_KEY, BIAS_THEN_MASK, MASK_THEN_BIAS, TWO_TERMS, WIDE_BIAS };

/* The scores with the form's bias, key padding and their order. */
static const char *tiny_masked(oq_graph *g, int form, const char *s, const char *cond, const char *keys)
{
    const char *bias = "bias";
    if (form == WIDE_BIAS) {
        oq_tensor *t;
        assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, 4, (const int64_t[]){1, 3, 1, 1}, "wide", NULL), OQ_OK);
        bias = oq_graph_add_initializer(g, t, "wide");
        oq_tensor_free(t);
    }
    if (form >= BIAS_THEN_MASK && form != MASK_THEN_BIAS)
        s = oq_graph_op(g, "Add", 2, (const char *[]){s, bias}, 0, NULL);
    if (form == TWO_TERMS) /* the additive key padding of Hugging Face's (1 - mask) * -1e9 */
        return oq_graph_op(g, "Add", 2, (const char *[]){s, oq_graph_op(g, "Where", 3, (const char *[]){
            keys, oq_graph_const_f32(g, "zero", 0), oq_graph_const_f32(g, "neg", -1e9f)}, 0, NULL)}, 0, NULL);
    if (form == WIDE_BIAS) return s;
    s = oq_graph_op(g, "Where", 3, (const char *[]){cond, oq_graph_const_f32(g, "neg", -1e9f), s}, 0, NULL);
    return form == MASK_THEN_BIAS ? oq_graph_op(g, "Add", 2, (const char *[]){s, bias}, 0, NULL) : s;
}

/* x [B, L, 4], mask [B, L]: one-head attention whose mask is `Where(cond, -1e9, scores)`. */
static void write_tiny(const char *path, int form)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "tiny", &g, NULL), OQ_OK);
    oq_dim dx[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq"), OQ_DIM(4)}, dm[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, dx);
    oq_graph_add_input(g, "mask", OQ_DTYPE_BOOL, 2, dm);
    oq_dim db[] = {OQ_DIM(1), OQ_DIM(1), OQ_DIM_SYM("seq"), OQ_DIM_SYM("seq")};
    if (form >= BIAS_THEN_MASK && form != WIDE_BIAS) oq_graph_add_input(g, "bias", OQ_DTYPE_FLOAT32, 4, db);
    static const int64_t s4[] = {0, 0, 1, 4}, s3[] = {0, 0, 4}, p0213[] = {0, 2, 1, 3}, p0132[] = {0, 1, 3, 2},
                         ax12[] = {1, 2};
    oq_attr t1[] = {OQ_ATTR_IS("perm", 4, p0213)}, t2[] = {OQ_ATTR_IS("perm", 4, p0132)}, sm[] = {OQ_ATTR_I("axis", -1)};
    const char *q = oq_graph_op(g, "Transpose", 1, (const char *[]){oq_graph_op(g, "Reshape", 2, (const char *[]){
                                                                        "x", oq_graph_const_i64(g, "s", 4, s4)}, 0, NULL)}, 1, t1);
    const char *kt = oq_graph_op(g, "Transpose", 1, &q, 1, t2);
    const char *s = oq_graph_op(g, "MatMul", 2, (const char *[]){q, kt}, 0, NULL);
    static const int64_t ax13[] = {1, 3};
    const char *keys = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){"mask", oq_graph_const_i64(g, "ax", 2, ax12)}, 0, NULL);
    const char *queries = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){"mask", oq_graph_const_i64(g, "ax", 2, ax13)}, 0, NULL);
    const char *keep = form == QUERY_PADDING ? queries
                       : form == QUERY_AND_KEY ? oq_graph_op(g, "And", 2, (const char *[]){queries, keys}, 0, NULL)
                                               : keys;
    const char *cond = form == INVERTED ? keep : oq_graph_op(g, "Not", 1, &keep, 0, NULL);
    s = tiny_masked(g, form, s, cond, keys);
    const char *y = oq_graph_op(g, "MatMul", 2, (const char *[]){oq_graph_op(g, "Softmax", 1, &s, 1, sm), q}, 0, NULL);
    y = oq_graph_op(g, "Reshape", 2, (const char *[]){oq_graph_op(g, "Transpose", 1, &y, 1, t1), oq_graph_const_i64(g, "s", 3, s3)}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 3, dx);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* A model with no value_info at all: types are inferred, the mask is proven key padding. */
static void test_tiny_without_value_info(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/tiny.onnx", dir);
    snprintf(out, sizeof out, "%s/fast.onnx", dir);
    write_tiny(in, KEY_PADDING);
    oq_convert_opts o = fast_opts(NULL);
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(in, out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_int_equal(r->fused, 1);
    assert_true(r->generated_inputs && r->passed);
    assert_non_null(find_step(r, "shapes", "added"));
    assert_attention_inputs_typed(out);
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* A mask that keeps the keys where the input is 0 is not the input's key padding. */
static void test_inverted_mask_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512];
    snprintf(in, sizeof in, "%s/inv.onnx", dir);
    write_tiny(in, INVERTED);
    oq_convert_opts o = fast_opts(NULL);
    oq_convert_report *r;
    oq_err err = {0};
    assert_int_equal(oq_convert_plan(in, &o, &r, &err), OQ_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "1 requested rewrite was refused"));
    const oq_convert_step *s = find_step(r, "mask-to-seqlen", "refused");
    assert_non_null(s);
    assert_non_null(strstr(s->detail, "keeps only the keys where 'mask' is 0"));
    assert_non_null(strstr(s->detail, "(PyTorch's key_padding_mask) is read with mask_polarity pad"));
    oq_convert_report_free(r);
    /* padding over the queries, alone or with the keys': not a key-padding mask */
    static const struct {
        int form;
        const char *why;
    } other[] = {{QUERY_PADDING, "not laid out as [B, *, *, L]"}, {QUERY_AND_KEY, "along two different axes"}};
    for (size_t i = 0; i < 2; i++) {
        write_tiny(in, other[i].form);
        assert_int_equal(oq_convert_plan(in, &o, &r, &err), OQ_ERR_UNSUPPORTED);
        s = find_step(r, "mask-to-seqlen", "refused");
        assert_non_null(s);
        if (!strstr(s->detail, other[i].why)) fail_msg("%s", s->detail);
        oq_convert_report_free(r);
    }
    o.allow_refused = 1;
    assert_int_equal(oq_convert_plan(in, &o, &r, &err), OQ_OK);
    assert_int_equal(r->refused, 1);
    assert_int_equal(r->fused, 1);
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* A bias (T5's relative bias, ALiBi) and key padding on the scores, in either order, and a bias
 * beside an additive padding mask: one Attention whose attn_mask combines them (Where(m, bias,
 * fill) or bias + mask), which the check on ORT proves against the chain; float16 attention casts
 * it as an additive mask; --flash says it is no flash form. Each was refused ("at most one mask"). */
static void test_fuse_bias_and_mask(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/bias.onnx", dir);
    snprintf(out, sizeof out, "%s/fused.onnx", dir);
    static const struct {
        int form;
        oq_dtype dtype;
        const char *mask;
    } cases[] = {{BIAS_THEN_MASK, OQ_DTYPE_UNDEFINED, "Where mask and 1 additive term 'attn_bias_masked'"},
                 {MASK_THEN_BIAS, OQ_DTYPE_UNDEFINED, "Where mask and 1 additive term 'attn_bias_masked'"},
                 {TWO_TERMS, OQ_DTYPE_UNDEFINED, "additive mask of 2 terms 'attn_bias_sum'"},
                 {BIAS_THEN_MASK, OQ_DTYPE_FLOAT16, "Where mask and 1 additive term 'attn_bias_masked'"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_tiny(in, cases[i].form);
        oq_convert_opts o;
        oq_convert_opts_default(&o);
        o.passes = OQ_CONVERT_FUSE;
        o.attention_dtype = cases[i].dtype;
        o.runtime = rt;
        oq_convert_report *r;
        oq_err err = {0};
        if (oq_convert_file(in, out, 1, &o, &r, &err)) fail_msg("case %zu: %s", i, err.msg);
        assert_int_equal(r->fused, 1);
        assert_true(r->generated_inputs && r->passed);
        const oq_convert_step *s = find_step(r, "fuse", "fused");
        if (!strstr(s->detail, cases[i].mask)) fail_msg("case %zu: %s", i, s->detail);
        assert_non_null(strstr(find_step(r, "fuse", "note")->detail, "is not flash-eligible"));
        if (cases[i].dtype)
            assert_non_null(strstr(find_step(r, "attention-dtype", "rewritten")->detail, "the additive mask cast"));
        oq_model_info *mi;
        assert_int_equal(oq_model_inspect_file(out, &mi, NULL), OQ_OK);
        assert_int_equal(op_count(mi, "Attention"), 1);
        assert_int_equal(op_count(mi, "Softmax"), 0);
        oq_model_info_free(mi);
        oq_convert_report_free(r);
    }
    /* --flash: the float mask stays, the plan says why */
    oq_convert_opts o = fast_opts(NULL);
    oq_convert_report *r;
    oq_err err = {0};
    assert_int_equal(oq_convert_plan(in, &o, &r, &err), OQ_ERR_UNSUPPORTED);
    assert_non_null(strstr(find_step(r, "fuse", "note")->detail, "ORT's CUDA flash attention takes no attn_mask"));
    assert_non_null(find_step(r, "mask-to-seqlen", "refused"));
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* A term that widens the scores (3 heads of bias on 1 head of scores) is no attn_mask:
 * refused, naming both shapes. */
static void test_fuse_wide_bias_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512];
    snprintf(in, sizeof in, "%s/wide.onnx", dir);
    write_tiny(in, WIDE_BIAS);
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_FUSE;
    oq_convert_report *r;
    oq_err err = {0};
    assert_int_equal(oq_convert_plan(in, &o, &r, &err), OQ_ERR_UNSUPPORTED);
    const oq_convert_step *s = find_step(r, "fuse", "refused");
    assert_non_null(s);
    if (!strstr(s->detail, "applies 'wide' of shape [1, 3, 1, 1] to scores of shape [batch, 1, seq, seq]: it does "
                "not broadcast to the scores"))
        fail_msg("%s", s->detail);
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* The same mask read with 1 = padding (PyTorch's key_padding_mask) is the input's key padding:
 * the lengths count its zeros (a Not before the sum), and the check, fed masks generated so,
 * passes (it was refused as above whatever the polarity). */
static void test_pad_mask_to_seqlen(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/pad.onnx", dir);
    snprintf(out, sizeof out, "%s/fast.onnx", dir);
    write_tiny(in, INVERTED);
    oq_convert_opts o = fast_opts(NULL);
    o.mask_polarity = OQ_MASK_POLARITY_PAD;
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(in, out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_int_equal(r->refused, 0);
    assert_true(r->generated_inputs && r->passed);
    const oq_convert_step *s = find_step(r, "mask-to-seqlen", "rewritten");
    assert_non_null(s);
    if (!strstr(s->detail, "nonpad_kv_seqlen = ReduceSum(Not('mask'), axis 1)")) fail_msg("%s", s->detail);
    oq_convert_report_free(r);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(out, &mi, &err), OQ_OK);
    assert_int_equal(op_count(mi, "Not"), 1);
    oq_model_info_free(mi);
    /* the contract read back with its polarity */
    int has = 0;
    char input[64];
    oq_mask_polarity pol = OQ_MASK_POLARITY_KEEP;
    assert_int_equal(oq_convert_read_contract(out, &has, input, sizeof input, &pol, &err), OQ_OK);
    assert_true(has);
    assert_int_equal(pol, OQ_MASK_POLARITY_PAD);
    /* converted again: nothing left to do, and each pass says so; the contract is kept */
    oq_convert_opts_default(&o);
    oq_convert_opts_flash(&o);
    assert_int_equal(oq_convert_plan(out, &o, &r, &err), OQ_OK);
    assert_int_equal(count_steps(r, "mask-to-seqlen", "skipped"), 1);
    assert_non_null(strstr(find_step(r, "mask-to-seqlen", "skipped")->detail, "already done: nonpad_kv_seqlen"));
    assert_non_null(strstr(find_step(r, "opset", "skipped")->detail, "already ai.onnx opset 24"));
    assert_non_null(find_step(r, "contract", "kept"));
    assert_null(find_step(r, "contract", "added"));
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* Raising the opset over a change of meaning is refused, naming the operator. */
static void test_opset_changed_operator(void **state)
{
    (void)state;
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "gn", &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM(1), OQ_DIM(4), OQ_DIM(3)}, dg[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, d);
    oq_graph_add_input(g, "s", OQ_DTYPE_FLOAT32, 1, dg);
    oq_attr a[] = {OQ_ATTR_I("num_groups", 2)};
    const char *y = oq_graph_op(g, "GroupNormalization", 3, (const char *[]){"x", "s", "s"}, 1, a);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 3, d);
    uint8_t *buf;
    size_t len;
    assert_int_equal(oq_graph_serialize(g, &buf, &len, NULL), OQ_OK);
    oq_graph_free(g);
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.opset = 24;
    oq_convert_report *r;
    oq_err err = {0};
    assert_int_equal(oq_convert_plan_bytes(buf, len, "gn.onnx", &o, &r, &err), OQ_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "GroupNormalization"));
    assert_non_null(strstr(err.msg, "changed meaning in opset 21"));
    assert_non_null(strstr(err.msg, "nothing written"));
    /* a refusal like the others: a counted "refused" step naming the node, the opset asked */
    assert_int_equal(r->refused, 1);
    assert_int_equal(r->opset_out, 24);
    const oq_convert_step *s = find_step(r, "opset", "refused");
    assert_non_null(s);
    assert_string_equal(s->node, "GroupNormalization");
    oq_convert_report_free(r);
    o.allow_refused = 1; /* never written at an opset whose meaning its nodes do not have */
    assert_int_equal(oq_convert_plan_bytes(buf, len, "gn.onnx", &o, &r, &err), OQ_ERR_UNSUPPORTED);
    oq_convert_report_free(r);
    o.allow_refused = 0;
    o.opset = 20; /* below the change: fine */
    assert_int_equal(oq_convert_plan_bytes(buf, len, "gn.onnx", &o, &r, &err), OQ_OK);
    assert_int_equal(r->opset_out, 20);
    oq_convert_report_free(r);
    o.opset = 17;
    assert_int_equal(oq_convert_plan_bytes(buf, len, "gn.onnx", &o, &r, &err), OQ_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "lowering it to 17 is not supported"));
    assert_int_equal(r->refused, 1);
    oq_convert_report_free(r);
    o.opset = 26; /* the table read up to 26: the change of 21 is what refuses it */
    assert_int_equal(oq_convert_plan_bytes(buf, len, "gn.onnx", &o, &r, &err), OQ_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "cannot raise ai.onnx opset 18 to 26: GroupNormalization changed meaning in "
                                    "opset 21"));
    oq_convert_report_free(r);
    o.opset = 27; /* ORT 1.29 runs up to 26 */
    assert_int_equal(oq_convert_plan_bytes(buf, len, "gn.onnx", &o, &r, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "the newest ONNX Runtime 1.29 runs"));
    free(buf);
}

/* A tiny model with one Relu at ai.onnx opset `opset`. */
static void relu_model(int64_t opset, uint8_t **buf, size_t *len)
{
    oq_opset ops[] = {{"", opset}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "relu", &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d);
    const char *y = oq_graph_op(g, "Relu", 1, (const char *[]){"x"}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 1, d);
    assert_int_equal(oq_graph_serialize(g, buf, len, NULL), OQ_OK);
    oq_graph_free(g);
}

/* Opset 26 (ONNX 1.21) added BitCast and CumProd and changed no operator: a raise to 26 is
 * checked like the others, so a model of older operators is raised and its check runs on ORT
 * 1.29, and a default-domain node named like one of the new operators (no ONNX operator before
 * 26) is refused naming the node. */
static void test_opset_26(void **state)
{
    (void)state;
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.opset = 26;
    oq_convert_report *r;
    oq_err err = {0};
    uint8_t *buf;
    size_t len;
    for (int64_t from = 18; from <= 25; from += 7) {
        relu_model(from, &buf, &len);
        if (oq_convert_plan_bytes(buf, len, "relu.onnx", &o, &r, &err)) fail_msg("opset %lld: %s", (long long)from,
                                                                                 err.msg);
        assert_int_equal(r->opset_out, 26);
        assert_int_equal(r->refused, 0);
        char want[64];
        snprintf(want, sizeof want, "ai.onnx opset %lld -> 26", (long long)from);
        assert_string_equal(find_step(r, "opset", "rewritten")->detail, want);
        oq_convert_report_free(r);
        free(buf);
    }
    static const char *const added[] = {"BitCast", "CumProd"};
    for (size_t k = 0; k < 2; k++) {
        oq_opset ops[] = {{"", 25}};
        oq_graph *g;
        assert_int_equal(oq_graph_create(ops, 1, "new", &g, NULL), OQ_OK);
        oq_dim d[] = {OQ_DIM(2)}, d0[] = {OQ_DIM(1)};
        oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d);
        oq_graph_add_input(g, "axis", OQ_DTYPE_INT64, 1, d0);
        oq_attr to[] = {OQ_ATTR_I("to", OQ_DTYPE_INT32)};
        const char *y = k ? oq_graph_op(g, added[k], 2, (const char *[]){"x", "axis"}, 0, NULL)
                          : oq_graph_op(g, added[k], 1, (const char *[]){"x"}, 1, to);
        oq_graph_add_output(g, y, "y", k ? OQ_DTYPE_FLOAT32 : OQ_DTYPE_INT32, 1, d);
        assert_int_equal(oq_graph_serialize(g, &buf, &len, NULL), OQ_OK);
        oq_graph_free(g);
        assert_int_equal(oq_convert_plan_bytes(buf, len, "new.onnx", &o, &r, &err), OQ_ERR_UNSUPPORTED);
        char want[128];
        snprintf(want, sizeof want, "cannot raise ai.onnx opset 25 to 26: %s changed meaning in opset 26 (new: ",
                 added[k]);
        assert_non_null(strstr(err.msg, want));
        assert_int_equal(r->refused, 1);
        assert_string_equal(find_step(r, "opset", "refused")->node, added[k]);
        oq_convert_report_free(r);
        free(buf);
    }
}

/* --flash asks for at least opset 24: a model at 25 or 26 (ORT 1.29 runs both) keeps its own,
 * one at 27 is refused naming ORT's limit. */
static void test_flash_keeps_newer_opset(void **state)
{
    (void)state;
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    oq_convert_opts_flash(&o);
    oq_convert_report *r;
    oq_err err = {0};
    uint8_t *buf;
    size_t len;
    for (int64_t v = 24; v <= 26; v++) {
        relu_model(v, &buf, &len);
        if (oq_convert_plan_bytes(buf, len, "relu.onnx", &o, &r, &err)) fail_msg("opset %lld: %s", (long long)v, err.msg);
        assert_int_equal(r->opset_out, v);
        assert_int_equal(r->refused, 0);
        oq_convert_report_free(r);
        free(buf);
    }
    relu_model(18, &buf, &len);
    assert_int_equal(oq_convert_plan_bytes(buf, len, "relu.onnx", &o, &r, &err), OQ_OK);
    assert_int_equal(r->opset_out, 24); /* raised to flash's 24, as before */
    oq_convert_report_free(r);
    free(buf);
    relu_model(27, &buf, &len);
    assert_int_equal(oq_convert_plan_bytes(buf, len, "relu.onnx", &o, &r, &err), OQ_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "ONNX Runtime 1.29 runs up to opset 26"));
    assert_int_equal(r->refused, 1);
    oq_convert_report_free(r);
    free(buf);
}

/* A model that cannot be read has no report (the CLI printed its header above the error). */
static void test_unreadable_no_report(void **state)
{
    (void)state;
    static const uint8_t junk[] = {0x08, 0x07, 0x12, 0x40, 0x01}; /* a field cut short */
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_FUSE;
    oq_convert_report *r = (oq_convert_report *)&o; /* not NULL before the call */
    oq_err err = {0};
    assert_int_equal(oq_convert_plan_bytes(junk, sizeof junk, "junk.onnx", &o, &r, &err), OQ_ERR_FORMAT);
    assert_null(r);
    assert_non_null(strstr(err.msg, "junk.onnx: not an ONNX model"));
}

/* An Attention-23 node over graph inputs q, k, v of element type `t` and shape [1, 1, 2, 4]. */
static void attention_model(oq_dtype t, uint8_t **buf, size_t *len)
{
    oq_opset ops[] = {{"", 23}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "a", &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM(1), OQ_DIM(1), OQ_DIM(2), OQ_DIM(4)};
    oq_graph_add_input(g, "q", t, 4, d);
    oq_graph_add_input(g, "k", t, 4, d);
    oq_graph_add_input(g, "v", t, 4, d);
    const char *y = oq_graph_op(g, "Attention", 3, (const char *[]){"q", "k", "v"}, 0, NULL);
    oq_graph_add_output(g, y, "y", t, 4, d);
    assert_int_equal(oq_graph_serialize(g, buf, len, NULL), OQ_OK);
    oq_graph_free(g);
}

/* Models the fuzzer made (fuzz/regressions/convert/): each pass refuses what it cannot
 * rewrite, naming why, instead of failing as "out of memory" (or worse). */
static void test_hostile_models(void **state)
{
    (void)state;
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_LOWER;
    oq_convert_report *r;
    oq_err err = {0};
    uint8_t *buf;
    size_t len;
    /* lower-q-of-undefined-type: no float constant of Q's type exists for the scale */
    attention_model(OQ_DTYPE_INT32, &buf, &len);
    assert_int_equal(oq_convert_plan_bytes(buf, len, "int.onnx", &o, &r, &err), OQ_ERR_UNSUPPORTED);
    const oq_convert_step *s = find_step(r, "lower", "refused");
    assert_non_null(s);
    if (!strstr(s->detail, "Q 'q' is of type int32, not a floating-point type")) fail_msg("%s", s->detail);
    oq_convert_report_free(r);
    free(buf);
    attention_model(OQ_DTYPE_FLOAT16, &buf, &len); /* the same model in float16 lowers */
    if (oq_convert_plan_bytes(buf, len, "f16.onnx", &o, &r, &err)) fail_msg("%s", err.msg);
    assert_non_null(find_step(r, "lower", "rewritten"));
    oq_convert_report_free(r);
    /* field-numbered-0: an overlong tag of field 0 (wire type 2, "A") that protobuf-c reads
     * but would write back as a tag it refuses: the converted model would not load */
    static const uint8_t field0[] = {0x82, 0x00, 0x01, 'A'};
    uint8_t *bad = malloc(len + sizeof field0);
    assert_non_null(bad);
    memcpy(bad, buf, len);
    memcpy(bad + len, field0, sizeof field0);
    assert_int_equal(oq_convert_plan_bytes(bad, len + sizeof field0, "f0.onnx", &o, &r, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "f0.onnx: not an ONNX model (a field numbered 0, which protobuf forbids)");
    oq_convert_report_free(r);
    free(bad);
    /* fuzzed-no-ir_version: written back with ir_version 0, which inspect refuses */
    Onnx__ModelProto *pm = onnx__model_proto__unpack(NULL, len, buf);
    assert_non_null(pm);
    pm->has_ir_version = 0;
    bad = malloc(onnx__model_proto__get_packed_size(pm));
    assert_non_null(bad);
    size_t n = onnx__model_proto__pack(pm, bad);
    onnx__model_proto__free_unpacked(pm, NULL);
    assert_int_equal(oq_convert_plan_bytes(bad, n, "noir.onnx", &o, &r, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "noir.onnx: not an ONNX model (no ir_version)");
    oq_convert_report_free(r);
    free(bad);
    free(buf);
    /* no outputs: an input error naming it (the check got ORT's "OrtValue indexes should have
     * been populated", exit 3), with no report */
    attention_model(OQ_DTYPE_FLOAT32, &buf, &len);
    pm = onnx__model_proto__unpack(NULL, len, buf);
    assert_non_null(pm);
    size_t n_out = pm->graph->n_output;
    pm->graph->n_output = 0; /* the graph builder refuses none */
    bad = malloc(onnx__model_proto__get_packed_size(pm));
    assert_non_null(bad);
    n = onnx__model_proto__pack(pm, bad);
    pm->graph->n_output = n_out;
    onnx__model_proto__free_unpacked(pm, NULL);
    o.passes = OQ_CONVERT_FUSE;
    assert_int_equal(oq_convert_plan_bytes(bad, n, "noout.onnx", &o, &r, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "noout.onnx: the graph has no outputs: ONNX Runtime has nothing to compute");
    assert_null(r);
    free(bad);
    free(buf);
}

/* The opset-23 export that ORT refuses runs once its mask spans the queries. */
static void test_expand_mask(void **state)
{
    (void)state;
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_EXPAND_MASK;
    o.runtime = rt;
    char *dir = temp_dir("convert");
    char out[512];
    snprintf(out, sizeof out, "%s/e.onnx", dir);
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(FIX "tx_encoder/tx_encoder_op23.onnx", out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_non_null(strstr(r->reference, "inconsistent q_sequence_length"));
    assert_null(r->contract_input); /* an expanded mask is exact for any mask */
    oq_convert_report_free(r);
    /* ... and the written model runs as it is: converting it again needs no lowering */
    o.passes = OQ_CONVERT_MASK_TO_SEQLEN;
    char out2[512];
    snprintf(out2, sizeof out2, "%s/s.onnx", dir);
    if (oq_convert_file(out, out2, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_string_equal(r->reference, "original");
    assert_string_equal(r->contract_input, "mask");
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* bfloat16: no CPU kernel, so the check runs the conversion with bfloat16 rounding. */
static void test_bf16_lower_and_contract(void **state)
{
    (void)state;
    oq_convert_opts o = fast_opts(NULL);
    o.attention_dtype = OQ_DTYPE_BFLOAT16;
    char *dir = temp_dir("convert");
    char out[512], low[512];
    snprintf(out, sizeof out, "%s/b.onnx", dir);
    snprintf(low, sizeof low, "%s/l.onnx", dir);
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(FIX "hand_attention/hand_attention_op18.onnx", out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_non_null(find_step(r, "check", "note"));
    oq_convert_report_free(r);
    /* a bfloat16 model cannot be a reference here: ORT has no kernel for it, which is no refusal a
     * rewrite exists for (no lowered stand-in): a runtime error naming ORT's reason, not a pass */
    oq_convert_opts lo;
    oq_convert_opts_default(&lo);
    lo.passes = OQ_CONVERT_LOWER;
    lo.runtime = rt;
    assert_int_equal(oq_convert_file(out, low, 0, &lo, &r, &err), OQ_ERR_RUNTIME);
    if (!strstr(err.msg, "ORT refuses the original model: ")) fail_msg("%s", err.msg);
    assert_int_equal(access(low, F_OK), -1);
    oq_convert_report_free(r);
    /* --lower of a float16 conversion: the contract it carries is kept and enforced */
    o.attention_dtype = OQ_DTYPE_FLOAT16;
    assert_int_equal(oq_convert_file(FIX "hand_attention/hand_attention_op18.onnx", out, 1, &o, &r, &err), OQ_OK);
    oq_convert_report_free(r);
    lo.tolerances = "fp16";
    if (oq_convert_file(out, low, 0, &lo, &r, &err)) fail_msg("%s", err.msg);
    assert_string_equal(r->contract_input, "mask");
    oq_convert_report_free(r);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(low, &mi, NULL), OQ_OK);
    assert_int_equal(op_count(mi, "Attention"), 0);
    assert_int_equal(op_count(mi, "Softmax"), 1);
    oq_model_info_free(mi);
    int has;
    char input[8];
    assert_int_equal(oq_convert_read_contract(low, &has, input, sizeof input, NULL, NULL), OQ_OK);
    assert_true(has);
    remove_dir(dir);
}

/* ortqual's own decomposed encoder (no value_info, additive (mask - 1) * 1e9 bias) fuses too. */
static void test_own_export(void **state)
{
    (void)state;
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    oq_encoder_weights *w;
    assert_int_equal(oq_encoder_weights_random(&c, 1, &w, NULL), OQ_OK);
    oq_encoder_export x = {OQ_ATTN_DECOMPOSED, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0};
    oq_graph *g;
    assert_int_equal(oq_export_encoder(w, &x, &g, NULL), OQ_OK);
    char *dir = temp_dir("convert");
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/dec.onnx", dir);
    snprintf(out, sizeof out, "%s/fast.onnx", dir);
    assert_int_equal(oq_graph_write(g, in, 0, NULL), OQ_OK);
    oq_graph_free(g);
    oq_encoder_weights_free(w);
    oq_convert_opts o = fast_opts(NULL);
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(in, out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_int_equal(r->fused, (size_t)c.layers);
    assert_true(r->passed);
    assert_attention_inputs_typed(out);
    oq_convert_report_free(r);
    remove_dir(dir);
}

static void test_contract_malformed(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512], bad[512];
    snprintf(in, sizeof in, "%s/t.onnx", dir);
    snprintf(bad, sizeof bad, "%s/bad.onnx", dir);
    write_tiny(in, KEY_PADDING);
    int has = 1;
    char input[64];
    assert_int_equal(oq_convert_read_contract(in, &has, input, sizeof input, NULL, NULL), OQ_OK);
    assert_false(has); /* no contract before conversion */
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(in, &buf, &n, NULL), OQ_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    Onnx__StringStringEntryProto e = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *ep = &e;
    e.key = (char *)OQ_CONVERT_CONTRACT_KEY;
    e.value = (char *)"{\"input\": \"mask\", \"contract\": \"anything\"}";
    m->n_metadata_props = 1;
    m->metadata_props = &ep;
    n = onnx__model_proto__get_packed_size(m);
    buf = malloc(n);
    onnx__model_proto__pack(m, buf);
    m->n_metadata_props = 0;
    m->metadata_props = NULL;
    onnx__model_proto__free_unpacked(m, NULL);
    assert_int_equal(oq_write_file_atomic(bad, buf, n, 0, NULL), OQ_OK);
    free(buf);
    oq_err err = {0};
    assert_int_equal(oq_convert_read_contract(bad, &has, input, sizeof input, NULL, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, OQ_CONVERT_CONTRACT_KEY));
    remove_dir(dir);
}

/* Progress lines of a validation, kept for the test to read. */
static void keep_line(void *ctx, const char *line)
{
    char *buf = ctx;
    size_t w = strlen(buf);
    snprintf(buf + w, 4096 - w, "%s\n", line);
}

/* validate takes a converted model's contract: the input it names is the mask whose every
 * batch is checked before any model runs, and a --mask naming another input is refused. */
static void test_contract_enforced_by_validate(void **state)
{
    (void)state;
    char *dir = temp_dir("contract");
    char in[512], conv[512], batch[512], lines[4096] = "";
    snprintf(in, sizeof in, "%s/tiny.onnx", dir);
    snprintf(conv, sizeof conv, "%s/fast.onnx", dir);
    snprintf(batch, sizeof batch, "%s/holes.npz", dir);
    write_tiny(in, KEY_PADDING);
    oq_convert_opts co = fast_opts(NULL);
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(in, conv, 0, &co, &r, &err)) fail_msg("%s", err.msg);
    assert_string_equal(r->contract_input, "mask");
    oq_convert_report_free(r);
    /* event 1 is 1 0 1 0 0: a hole at position 1 */
    int64_t xs[] = {2, 5, 4}, ms[] = {2, 5};
    oq_tensor *x, *m;
    assert_int_equal(oq_tensor_create(&x, OQ_DTYPE_FLOAT32, 3, xs, "features", NULL), OQ_OK);
    assert_int_equal(oq_tensor_create(&m, OQ_DTYPE_BOOL, 2, ms, "mask", NULL), OQ_OK);
    static const uint8_t rows[] = {1, 1, 1, 0, 0, 1, 0, 1, 0, 0};
    memcpy(m->data, rows, sizeof rows);
    const oq_tensor *t[] = {x, m};
    assert_int_equal(oq_npz_write(batch, 2, t, 0, 0, NULL), OQ_OK);
    oq_tensor_free(x);
    oq_tensor_free(m);
    oq_config cfg[1]; /* the reference alone: the batch is refused before anything runs */
    assert_int_equal(oq_config_parse("cpu:model:fp32", &cfg[0], NULL), OQ_OK);
    const char *files[] = {batch};
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = conv;
    o.input_files = files;
    o.n_input_files = 1;
    o.configs = cfg;
    o.n_configs = 1;
    char outdir[600];
    snprintf(outdir, sizeof outdir, "%s/out", dir); /* the model and batch stay outside it */
    o.outdir = outdir;
    o.isolate = 0;
    o.plots = 0;
    o.ort_lib = OQ_ORT_LIB;
    o.progress = keep_line;
    o.progress_ctx = lines;
    oq_validate_summary *s = NULL;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "event 1"));
    assert_non_null(strstr(err.msg, "hole at position"));
    assert_non_null(strstr(lines, OQ_CONVERT_CONTRACT_KEY ": input 'mask' must be a valid prefix"));
    assert_null(s);
    o.mask_name = "pad"; /* what the model calls its mask is not the user's to contradict */
    o.overwrite = 1;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "mask_name 'pad', but the model's " OQ_CONVERT_CONTRACT_KEY " names input 'mask'"));
    remove_dir(dir);
}

/* --no-pad-head-size (keep_head_size): mlpf_like keeps its heads of 12 (which run MATH on
 * ORT's CUDA EP) and still matches PyTorch. */
static void test_pad_head_off(void **state)
{
    (void)state;
    batches b;
    load_batches("mlpf_like", &b);
    oq_convert_opts o = fast_opts(&b);
    o.keep_head_size = 1;
    char *dir = temp_dir("convert");
    char out[512];
    snprintf(out, sizeof out, "%s/off.onnx", dir);
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(FIX "mlpf_like/mlpf_like_op18.onnx", out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_true(r->passed);
    assert_int_equal(count_steps(r, "pad-head-size", "rewritten"), 0);
    assert_head_size(out, 12, 0);
    oq_convert_report_free(r);
    free_batches(&b);
    remove_dir(dir);
}

/* One Attention-23 node over Q = x, K = x/2, V = x + 1.5: 3-D [B, L, heads*head] with
 * q_num_heads = kv_num_heads = heads (layout 3), or 4-D [B, heads, L, head] with a head
 * size the shapes leave symbolic (layout 4). */
static void write_attention_scaled(const char *path, int layout, int64_t heads, int64_t head, float scale);
static void write_attention(const char *path, int layout, int64_t heads, int64_t head)
{
    write_attention_scaled(path, layout, heads, head, 0);
}

/* write_attention with a `scale` attribute (0: none). */
static void write_attention_scaled(const char *path, int layout, int64_t heads, int64_t head, float scale)
{
    oq_opset ops[] = {{"", 23}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "attention", &g, NULL), OQ_OK);
    oq_dim d3[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq"), OQ_DIM(heads * head)},
           d4[] = {OQ_DIM_SYM("batch"), OQ_DIM(heads), OQ_DIM_SYM("seq"), OQ_DIM_SYM("head")};
    oq_dim *d = layout == 3 ? d3 : d4;
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, layout, d);
    const char *k = oq_graph_op(g, "Mul", 2, (const char *[]){"x", oq_graph_const_f32(g, "half", 0.5f)}, 0, NULL);
    const char *v = oq_graph_op(g, "Add", 2, (const char *[]){"x", oq_graph_const_f32(g, "c", 1.5f)}, 0, NULL);
    oq_attr at[] = {OQ_ATTR_F("scale", scale), OQ_ATTR_I("q_num_heads", heads), OQ_ATTR_I("kv_num_heads", heads)};
    size_t n_at = (scale != 0) + (layout == 3 ? 2 : 0);
    const char *y = oq_graph_op(g, "Attention", 3, (const char *[]){"x", k, v}, n_at, scale != 0 ? at : at + 1);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, layout, d);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* 3-D Q, K, V: each head padded on its own (padding the whole [B, L, 12] to 16 would mix
 * heads, and the check would fail), the scale set to 1/sqrt(6) since the node had none. */
static void test_pad_head_3d(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/a3.onnx", dir);
    snprintf(out, sizeof out, "%s/p3.onnx", dir);
    write_attention(in, 3, 2, 6);
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_PAD_HEAD;
    o.runtime = rt;
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(in, out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_true(r->checked && r->passed && r->n_checks > 0);
    const oq_convert_step *s = find_step(r, "pad-head-size", "rewritten");
    assert_non_null(s);
    assert_non_null(strstr(s->detail, "head size 6 -> 8 (from Q's shape)"));
    assert_non_null(strstr(s->detail, "scale 0.408248 set"));
    assert_head_size(out, 8, 2);
    /* the output is cut back by a Split, never a Slice: ORT 1.29's CUDA EP killed the process
     * on every Slice of the last axis tried on the H200 */
    oq_node_info *nodes = NULL;
    size_t n = 0;
    assert_int_equal(oq_model_find_nodes(out, NULL, "Slice", &nodes, &n, &err), OQ_OK);
    assert_int_equal(n, 0);
    oq_node_infos_free(nodes, n);
    assert_int_equal(oq_model_find_nodes(out, NULL, "Split", &nodes, &n, &err), OQ_OK);
    assert_int_equal(n, 1);
    oq_node_infos_free(nodes, n);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(out, &mi, NULL), OQ_OK);
    char scale[64];
    snprintf(scale, sizeof scale, "scale=%.9g", (double)(float)(1.0 / sqrt(6.0)));
    assert_true(has_attr(&mi->attention[0], scale));
    oq_model_info_free(mi);
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* A head size nothing states (a symbolic last dim, no scale): asked for, the node is refused
 * and nothing written; on by default (fp16 attention) too, since the flash form would be a
 * guess; keep_head_size writes it with a cuda note that the head size is unknown. */
static void test_pad_head_unknown(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/a4.onnx", dir);
    snprintf(out, sizeof out, "%s/p4.onnx", dir);
    write_attention(in, 4, 2, 0);
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_PAD_HEAD;
    o.runtime = rt;
    oq_convert_report *r;
    oq_err err = {0};
    assert_int_equal(oq_convert_file(in, out, 0, &o, &r, &err), OQ_ERR_UNSUPPORTED);
    const oq_convert_step *s = find_step(r, "pad-head-size", "refused");
    assert_non_null(s);
    assert_non_null(strstr(s->detail, "head size unknown"));
    assert_int_equal(access(out, F_OK), -1);
    oq_convert_report_free(r);
    o.passes = 0;
    o.attention_dtype = OQ_DTYPE_FLOAT16;
    assert_int_equal(oq_convert_file(in, out, 0, &o, &r, &err), OQ_ERR_UNSUPPORTED);
    assert_non_null(find_step(r, "pad-head-size", "refused"));
    assert_int_equal(access(out, F_OK), -1);
    oq_convert_report_free(r);
    o.keep_head_size = 1;
    if (oq_convert_file(in, out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    const oq_convert_step *note = find_step(r, "cuda", "note");
    if (!note || !strstr(note->detail, "head size unknown")) fail_msg("%s", note ? note->detail : "no cuda note");
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* The padding and convert's CUDA note read a head size the same way (one function), and never
 * from the scale: 1/sqrt(6) with a symbolic head axis is no head size of 6 (T5 scales by 1). It
 * was read as one ("from its scale"), padded on that guess and written as flash-ready. */
static void test_head_size_one_reading(void **state)
{
    (void)state;
    char *dir = temp_dir("convert");
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/s4.onnx", dir);
    snprintf(out, sizeof out, "%s/o4.onnx", dir);
    write_attention_scaled(in, 4, 2, 0, (float)(1.0 / sqrt(6.0)));
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.passes = 0;
    o.opset = 24; /* something to do, the head size kept */
    o.runtime = rt;
    oq_convert_report *r;
    oq_err err = {0};
    if (oq_convert_file(in, out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    const oq_convert_step *s = find_step(r, "cuda", "note");
    assert_non_null(s);
    if (!strstr(s->detail, "head size unknown")) fail_msg("%s", s->detail);
    oq_convert_report_free(r);
    o.passes = OQ_CONVERT_PAD_HEAD;
    o.opset = 0;
    assert_int_equal(oq_convert_file(in, out, 1, &o, &r, &err), OQ_ERR_UNSUPPORTED);
    s = find_step(r, "pad-head-size", "refused");
    if (!s || !strstr(s->detail, "head size unknown")) fail_msg("%s", s ? s->detail : err.msg);
    assert_null(find_step(r, "pad-head-size", "rewritten"));
    oq_convert_report_free(r);
    remove_dir(dir);
}

/* x [2,16,32] -> y [2,16,16,2], 16 heads of 2 (y[b,h,l,d] = x[b,l,2h+d]), mask [2,16], all
 * static: the heads have the padded length. `wrong`: y + 1 at [1,12,3,0], a valid element
 * (event 1 is 8 long of 16, position 3) on head 12, which a check that took the heads for the
 * sequence would set apart as padding. `denoted`: y's axes 0 and 2 are DATA_BATCH, DATA_TIME. */
static cv_model *heads_model(int wrong, int denoted, uint8_t **bytes, size_t *n)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "heads", &g, NULL), OQ_OK);
    oq_dim dx[] = {OQ_DIM(2), OQ_DIM(16), OQ_DIM(32)}, dm[] = {OQ_DIM(2), OQ_DIM(16)};
    oq_dim dy[] = {denoted ? OQ_DIM_DENOTED(2, OQ_DENOTATION_BATCH) : OQ_DIM(2), OQ_DIM(16),
                   denoted ? OQ_DIM_DENOTED(16, OQ_DENOTATION_TIME) : OQ_DIM(16), OQ_DIM(2)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, dx);
    oq_graph_add_input(g, "mask", OQ_DTYPE_BOOL, 2, dm);
    static const int64_t s4[] = {2, 16, 16, 2}, p0213[] = {0, 2, 1, 3};
    oq_attr t[] = {OQ_ATTR_IS("perm", 4, p0213)};
    const char *r = oq_graph_op(g, "Reshape", 2, (const char *[]){"x", oq_graph_const_i64(g, "s", 4, s4)}, 0, NULL);
    const char *y = oq_graph_op(g, "Transpose", 1, &r, 1, t);
    if (wrong) {
        oq_tensor *d;
        assert_int_equal(oq_tensor_create(&d, OQ_DTYPE_FLOAT32, 4, s4, "delta", NULL), OQ_OK);
        ((float *)d->data)[((1 * 16 + 12) * 16 + 3) * 2] = 1;
        y = oq_graph_op(g, "Add", 2, (const char *[]){y, oq_graph_add_initializer(g, d, "delta")}, 0, NULL);
        oq_tensor_free(d);
    }
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 4, dy);
    assert_int_equal(oq_graph_serialize(g, bytes, n, NULL), OQ_OK);
    oq_graph_free(g);
    cv_model *m;
    assert_int_equal(cv_model_load(*bytes, *n, "heads.onnx", NULL, &m, NULL), OQ_OK);
    return m;
}

/* convert's check of the heads model against its `wrong` twin on generated batches. */
static oq_status check_heads(int wrong, int denoted, const oq_seq_axis *said, size_t n_said, oq_convert_report *r,
                             oq_err *err)
{
    uint8_t *b1, *b2;
    size_t n1, n2;
    cv_model *ref = heads_model(0, denoted, &b1, &n1), *conv = heads_model(wrong, denoted, &b2, &n2);
    oq_convert_opts o = fast_opts(NULL);
    o.seq_axes = said;
    o.n_seq_axes = n_said;
    memset(r, 0, sizeof *r);
    cv_ctx c = {.o = &o, .r = r, .computes_in = OQ_DTYPE_FLOAT32};
    oq_status st = cv_check(&c, ref, conv, err);
    cv_model_free(ref);
    cv_model_free(conv);
    free(b1);
    free(b2);
    return st;
}

/* An output whose heads have the padded length: its sequence axis is the one its denotations
 * say, else the caller's --seq-axis; by the sizes alone it is refused, never guessed. A wrong
 * value at a valid position of a head numbered past the event's length is found (the check
 * that took axis 1 for the sequence passed it). */
static void test_check_heads_like_length(void **state)
{
    (void)state;
    oq_convert_report r = {0};
    oq_err err = {0};
    assert_int_equal(check_heads(1, 1, NULL, 0, &r, &err), OQ_ERR_CHECK_FAILED);
    if (!r.failure || !strstr(r.failure, "output 'y'") || !strstr(r.failure, "[1,12,3,0]"))
        fail_msg("%s", r.failure ? r.failure : err.msg);
    cv_report_clear(&r);
    assert_int_equal(check_heads(0, 1, NULL, 0, &r, &err), OQ_OK);
    assert_true(r.checked && r.passed);
    cv_report_clear(&r);

    assert_int_equal(check_heads(1, 0, NULL, 0, &r, &err), OQ_ERR_INVALID_ARG);
    if (!strstr(err.msg, "heads.onnx: output 'y' shape [2,16,16,2]: axes 1 and 2") ||
        !strstr(err.msg, "seq_axes y=1 or y=2"))
        fail_msg("%s", err.msg);
    assert_false(r.checked);
    cv_report_clear(&r);
    const oq_seq_axis seq2 = {"y", 2}, batch = {"y", 0}, other = {"z", 2};
    assert_int_equal(check_heads(1, 0, &seq2, 1, &r, &err), OQ_ERR_CHECK_FAILED);
    if (!r.failure || !strstr(r.failure, "[1,12,3,0]")) fail_msg("%s", r.failure ? r.failure : err.msg);
    cv_report_clear(&r);
    assert_int_equal(check_heads(0, 0, &seq2, 1, &r, &err), OQ_OK);
    assert_true(r.checked && r.passed);
    cv_report_clear(&r);
    assert_int_equal(check_heads(1, 0, &batch, 1, &r, &err), OQ_ERR_INVALID_ARG);
    if (!strstr(err.msg, "seq_axes y=0: that is the batch axis of output 'y'")) fail_msg("%s", err.msg);
    cv_report_clear(&r);
    assert_int_equal(check_heads(1, 0, &other, 1, &r, &err), OQ_ERR_INVALID_ARG);
    if (!strstr(err.msg, "has no output 'z'")) fail_msg("%s", err.msg);
    cv_report_clear(&r);
}

/* The preset adds its passes and fills the dtype and opset only where none was chosen. */
static void test_opts_flash(void **state)
{
    (void)state;
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    oq_convert_opts_flash(&o);
    assert_int_equal(o.passes, OQ_CONVERT_FUSE | OQ_CONVERT_MASK_TO_SEQLEN);
    assert_int_equal(o.attention_dtype, OQ_DTYPE_FLOAT16);
    assert_int_equal(o.opset, 0); /* a model's own higher opset stays */
    assert_int_equal(o.opset_min, 24);
    oq_convert_opts_default(&o);
    o.passes = OQ_CONVERT_DECOMPOSE_ELU;
    o.attention_dtype = OQ_DTYPE_BFLOAT16;
    o.opset = 23;
    oq_convert_opts_flash(&o);
    assert_int_equal(o.passes, OQ_CONVERT_DECOMPOSE_ELU | OQ_CONVERT_FUSE | OQ_CONVERT_MASK_TO_SEQLEN);
    assert_int_equal(o.attention_dtype, OQ_DTYPE_BFLOAT16);
    assert_int_equal(o.opset, 23);
    assert_int_equal(o.opset_min, 0);
}

/* y = x * w with w declared an input whose initializer is its default (keep_initializers_as_inputs),
 * serialized at IR `ir`. */
static uint8_t *weight_input_model(int64_t ir, size_t *len)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "wi", &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM(2), OQ_DIM(3)}, dw[] = {OQ_DIM(3)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 2, d);
    oq_graph_add_input(g, "w", OQ_DTYPE_FLOAT32, 1, dw);
    oq_tensor *w;
    static const float wv[3] = {1, 2, 3};
    assert_int_equal(oq_tensor_create(&w, OQ_DTYPE_FLOAT32, 1, (int64_t[]){3}, NULL, NULL), OQ_OK);
    memcpy(w->data, wv, sizeof wv);
    assert_non_null(oq_graph_add_initializer(g, w, "w_default")); /* named 'w' below: the builder refuses a name in use */
    oq_tensor_free(w);
    const char *y = oq_graph_op(g, "Mul", 2, (const char *[]){"x", "w"}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 2, d);
    uint8_t *buf;
    assert_int_equal(oq_graph_serialize(g, &buf, len, NULL), OQ_OK);
    oq_graph_free(g);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, *len, buf);
    assert_non_null(m);
    assert_int_equal(m->graph->n_initializer, 1);
    free(m->graph->initializer[0]->name);
    m->graph->initializer[0]->name = strdup("w");
    m->ir_version = ir;
    free(buf);
    buf = malloc(onnx__model_proto__get_packed_size(m));
    *len = onnx__model_proto__pack(m, buf);
    onnx__model_proto__free_unpacked(m, NULL);
    return buf;
}

/* freeze: an input with a default becomes a constant (the input dropped, the initializer kept);
 * an input without one, a name that is no input, and a model before IR 4 are refused, naming it. */
static void test_freeze(void **state)
{
    (void)state;
    size_t len, conv_n;
    uint8_t *buf = weight_input_model(8, &len), *conv;
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    o.freeze_defaults = 1;
    oq_convert_report *r;
    oq_err err = {0};
    assert_int_equal(cv_convert_bytes(buf, len, "wi.onnx", NULL, &o, &r, &conv, &conv_n, &err), OQ_OK);
    assert_int_equal(r->frozen, 1);
    const oq_convert_step *s = find_step(r, "freeze", "rewritten");
    assert_non_null(s);
    assert_non_null(strstr(s->detail, "1 graph input with a default made constant"));
    assert_non_null(strstr(s->detail, "'w'"));
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, conv_n, conv);
    assert_non_null(m);
    assert_int_equal(m->graph->n_input, 1);
    assert_string_equal(m->graph->input[0]->name, "x");
    assert_int_equal(m->graph->n_initializer, 1);
    assert_string_equal(m->graph->initializer[0]->name, "w");
    onnx__model_proto__free_unpacked(m, NULL);
    free(conv);
    oq_convert_report_free(r);
    static const struct {
        const char *name, *why;
    } bad[] = {{"x", "wi.onnx: freeze 'x': that input has no default"},
               {"nosuch", "wi.onnx: freeze 'nosuch': the model has no graph input of that name"}};
    for (size_t i = 0; i < 2; i++) {
        o.n_freeze = 1;
        o.freeze = (const char *const[]){bad[i].name};
        assert_int_equal(oq_convert_plan_bytes(buf, len, "wi.onnx", &o, &r, &err), OQ_ERR_INVALID_ARG);
        if (!strstr(err.msg, bad[i].why)) fail_msg("%s", err.msg);
        oq_convert_report_free(r);
    }
    o.freeze = (const char *const[]){"w"};
    o.freeze_defaults = 0;
    assert_int_equal(oq_convert_plan_bytes(buf, len, "wi.onnx", &o, &r, &err), OQ_OK);
    assert_int_equal(r->frozen, 1);
    oq_convert_report_free(r);
    free(buf);
    buf = weight_input_model(3, &len);
    assert_int_equal(oq_convert_plan_bytes(buf, len, "wi.onnx", &o, &r, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "IR version 3"));
    oq_convert_report_free(r);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_flash),
        cmocka_unit_test(test_flash_keeps_newer_opset),
        cmocka_unit_test(test_opset_26),
        cmocka_unit_test(test_freeze),
        cmocka_unit_test(test_tx_encoder),
        cmocka_unit_test(test_mlpf_like),
        cmocka_unit_test(test_hand_attention),
        cmocka_unit_test(test_llama_like),
        cmocka_unit_test(test_bert_like),
        cmocka_unit_test(test_decoder_causal_padding),
        cmocka_unit_test(test_ort_causal_nonpad_is_bottom_right),
        cmocka_unit_test(test_wrong_axis_not_fused),
        cmocka_unit_test(test_check_bites),
        cmocka_unit_test(test_check_heads_like_length),
        cmocka_unit_test(test_holes_refused),
        cmocka_unit_test(test_tiny_without_value_info),
        cmocka_unit_test(test_inverted_mask_refused),
        cmocka_unit_test(test_fuse_bias_and_mask),
        cmocka_unit_test(test_fuse_wide_bias_refused),
        cmocka_unit_test(test_pad_mask_to_seqlen),
        cmocka_unit_test(test_opset_changed_operator),
        cmocka_unit_test(test_hostile_models),
        cmocka_unit_test(test_expand_mask),
        cmocka_unit_test(test_bf16_lower_and_contract),
        cmocka_unit_test(test_own_export),
        cmocka_unit_test(test_contract_malformed),
        cmocka_unit_test(test_contract_enforced_by_validate),
        cmocka_unit_test(test_pad_head_off),
        cmocka_unit_test(test_pad_head_3d),
        cmocka_unit_test(test_pad_head_unknown),
        cmocka_unit_test(test_head_size_one_reading),
        cmocka_unit_test(test_unreadable_no_report),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
