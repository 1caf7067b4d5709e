/* Runtime refusals explained, from ORT's own messages produced here: models built with the
 * graph builder (and a PyTorch export) run through ORT 1.29 on CPU, the error ORT returns
 * handed to oq_refusal_explain with the model. The CUDA-only message (output modes) is the one
 * recorded on the H200 (docs/evidence/h200/conformance-cuda.txt) with the test model it came
 * from; the crash pattern is judged from the signal and the model. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/fileio.h"
#include "ortqual/graph.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "ortqual/refusal.h"
#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

static char *dir;

static void assert_has(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle)) fail_msg("'%s' lacks '%s'", hay ? hay : "(null)", needle);
}

static oq_tensor *zeros(const char *name, oq_dtype dt, int32_t nd, const int64_t *shape)
{
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, dt, nd, shape, name, NULL), OQ_OK);
    return t;
}

/* Writes the model (with the IR version byte set to `ir` when non-zero), creates a session and
 * runs it; returns ORT's error (the test fails if ORT accepted everything). */
static void refused(oq_graph *g, const char *file, int ir, oq_tensor **in, size_t n_in, char *path, oq_err *e)
{
    uint8_t *buf;
    size_t len;
    assert_int_equal(oq_graph_serialize(g, &buf, &len, NULL), OQ_OK);
    assert_int_equal(buf[0], 0x08); /* ModelProto field 1, ir_version, comes first */
    if (ir) buf[1] = (uint8_t)ir;
    snprintf(path, 512, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
    oq_graph_free(g);
    oq_session *s = NULL;
    oq_status st = oq_session_create(rt, path, NULL, 0, NULL, &s, e);
    if (!st) {
        size_t n_out = 0;
        oq_tensor **out = NULL;
        st = oq_session_run(s, n_in, in, &n_out, &out, e);
        oq_tensors_free(out, n_out);
        oq_session_free(s);
    }
    for (size_t i = 0; i < n_in; i++) oq_tensor_free(in[i]);
    assert_int_not_equal(st, OQ_OK);
}

static void explain(const char *msg, const char *model, const char *ep, int sig, oq_refusal *r)
{
    oq_refusal_facts f = {.message = msg, .model = model, .ep = ep, .signal = sig};
    assert_int_equal(oq_refusal_explain(&f, r, NULL), OQ_OK);
}

static const oq_dim D4[] = {{0, "batch"}, {2, NULL}, {0, "seq"}, {4, NULL}};
static const int64_t S4[] = {2, 2, 5, 4};

/* One Attention node attn0 on q, k, v and a bool mask declared with `mask_dims`. */
static oq_graph *attention_model(int64_t opset, const oq_dim *mask_dims, int declare)
{
    oq_opset ops[] = {{"", opset}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "g", &g, NULL), OQ_OK);
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, 4, D4);
    oq_graph_add_input(g, "k", OQ_DTYPE_FLOAT32, 4, D4);
    oq_graph_add_input(g, "v", OQ_DTYPE_FLOAT32, 4, D4);
    oq_graph_add_input(g, "m", OQ_DTYPE_BOOL, 4, mask_dims);
    const char *in[] = {"q", "k", "v", "m"}, *out[] = {"y"};
    if (declare) {
        oq_graph_add_node(g, "Attention", NULL, "attn0", 4, in, 1, out, 0, NULL);
    } else { /* Q, K, V made by Identity nodes: values the model declares nothing about */
        const char *q = oq_graph_op(g, "Identity", 1, (const char *[]){"q"}, 0, NULL);
        const char *k = oq_graph_op(g, "Identity", 1, (const char *[]){"k"}, 0, NULL);
        const char *v = oq_graph_op(g, "Identity", 1, (const char *[]){"v"}, 0, NULL);
        const char *bare[] = {q, k, v, "m"};
        oq_graph_add_node(g, "Attention", NULL, "attn0", 4, bare, 1, out, 0, NULL);
    }
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 4, D4);
    assert_int_equal(oq_graph_status(g, NULL), OQ_OK);
    return g;
}

static void attention_inputs(oq_tensor **in, const int64_t *mask_shape)
{
    in[0] = zeros("q", OQ_DTYPE_FLOAT32, 4, S4);
    in[1] = zeros("k", OQ_DTYPE_FLOAT32, 4, S4);
    in[2] = zeros("v", OQ_DTYPE_FLOAT32, 4, S4);
    in[3] = zeros("m", OQ_DTYPE_BOOL, 4, mask_shape);
    memset(in[3]->data, 1, oq_tensor_nbytes(in[3]));
}

/* ORT's error for attention_model(opset, mask_dims, 1) fed a mask of mask_shape (Q, K, V S4),
 * the model written to dir/file, its path in path. */
static void mask_refused(int64_t opset, const oq_dim *mask_dims, const int64_t *mask_shape, const char *file,
                         char *path, oq_err *e)
{
    oq_tensor *in[4];
    attention_inputs(in, mask_shape);
    refused(attention_model(opset, mask_dims, 1), file, 0, in, 4, path, e);
}

static void mask_query_broadcast(void **state)
{
    (void)state;
    const oq_dim dm[] = {{0, "batch"}, {1, NULL}, {1, NULL}, {0, "seq"}};
    const int64_t sm[] = {2, 1, 1, 5};
    char path[512];
    oq_err e = {0};
    mask_refused(23, dm, sm, "bcast.onnx", path, &e);
    oq_refusal r;
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-query-broadcast");
    assert_string_equal(r.node, "'attn0' (Attention)");
    assert_string_equal(r.inputs, "Q 'q' float32 [batch,2,seq,4]; attn_mask 'm' bool [batch,1,1,seq]");
    assert_has(r.why, "broadcasts attn_mask over the query axis");
    assert_has(r.fix, "`ortqual convert --expand-mask`");
    assert_has(r.fix, "`ortqual convert --mask-to-seqlen --opset 24`");
    assert_string_equal(r.raw, e.msg); /* ORT's message kept as it was */
    char line[4096], tail[2048];
    assert_has(oq_refusal_str(&r, line, sizeof line),
               "refused by ONNX Runtime [attn-mask-query-broadcast] at node 'attn0' (Attention); inputs Q");
    assert_has(line, ". Fix: expand the mask");
    snprintf(tail, sizeof tail, " (ONNX Runtime: %s)", e.msg); /* ORT's message last, whole */
    assert_string_equal(line + strlen(line) - strlen(tail), tail);
    oq_refusal_clear(&r);
    /* without the model the message alone still explains, naming no input */
    explain(e.msg, NULL, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-query-broadcast");
    assert_null(r.inputs);
    oq_refusal_clear(&r);
}

/* The PyTorch export at opset 23 (tests/fixtures/torch): the refusal a user meets first. */
static void torch_export_op23(void **state)
{
    (void)state;
    const char *model = OQ_SOURCE_DIR "/tests/fixtures/torch/mlpf_like/mlpf_like_op23.onnx";
    oq_npz *z;
    assert_int_equal(oq_npz_read(OQ_SOURCE_DIR "/tests/fixtures/torch/mlpf_like/io.npz", &z, NULL), OQ_OK);
    oq_tensor *in[2];
    assert_int_equal(oq_npz_take(z, "features", &in[0], NULL), OQ_OK);
    assert_int_equal(oq_npz_take(z, "mask", &in[1], NULL), OQ_OK);
    oq_npz_free(z);
    oq_session *s;
    oq_err e = {0};
    assert_int_equal(oq_session_create(rt, model, NULL, 0, NULL, &s, &e), OQ_OK);
    size_t n_out = 0;
    oq_tensor **out = NULL;
    assert_int_equal(oq_session_run(s, 2, in, &n_out, &out, &e), OQ_ERR_RUNTIME);
    oq_session_free(s);
    oq_refusal r;
    explain(e.msg, model, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-query-broadcast");
    assert_string_equal(r.node, "'node_scaled_dot_product_attention' (Attention)");
    assert_has(r.inputs, "attn_mask '");
    assert_has(r.inputs, " bool [batch,1,1,seq]");
    /* the node ORT named, not its twin in the second block */
    assert_null(strstr(r.inputs, "such Attention nodes"));
    oq_refusal_clear(&r);
    /* with the inputs fed, the node's tensors (inside the graph) read the names at their sizes */
    oq_refusal_facts f = {.message = e.msg, .model = model, .inputs = (const oq_tensor *const *)in, .n_inputs = 2};
    assert_int_equal(oq_refusal_explain(&f, &r, NULL), OQ_OK);
    char want[64];
    snprintf(want, sizeof want, " bool [batch=%lld,1,1,seq=%lld]", (long long)in[1]->shape[0],
             (long long)in[1]->shape[1]);
    assert_has(r.inputs, want);
    oq_refusal_clear(&r);
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
}

static void mask_total_length(void **state)
{
    (void)state;
    const oq_dim dm[] = {{0, "batch"}, {1, NULL}, {0, "seq"}, {0, "mask_len"}};
    const int64_t sm[] = {2, 1, 5, 3};
    char path[512];
    oq_err e = {0};
    mask_refused(24, dm, sm, "short.onnx", path, &e);
    oq_refusal r;
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-total-length");
    assert_string_equal(r.inputs, "K 'k' float32 [batch,2,seq,4]; attn_mask 'm' bool [batch,1,seq,mask_len]");
    assert_has(r.why, "Attention-24 lets attn_mask's last axis be shorter");
    /* the symbolic lengths do not show the mask shorter: said so (a longer one would be invalid) */
    assert_has(r.why, "if the mask is shorter (the declared shapes do not say");
    oq_refusal_clear(&r);
}

/* The model as the caller holds it (a validate worker: its session's bytes and their inspection)
 * is read in place of the file, which is not read again: the explanation of the file's model,
 * though the file is another by now. */
static void model_held(void **state)
{
    (void)state;
    const oq_dim dm[] = {{0, "batch"}, {1, NULL}, {0, "seq"}, {0, "mask_len"}};
    const int64_t sm[] = {2, 1, 5, 3};
    char path[512];
    oq_err e = {0};
    mask_refused(24, dm, sm, "held.onnx", path, &e);
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_bytes(buf, n, path, &mi, NULL), OQ_OK);
    FILE *f = fopen(path, "wb"); /* the file is no model now */
    assert_non_null(f);
    fputs("not a model", f);
    fclose(f);
    for (int with_info = 0; with_info < 2; with_info++) {
        oq_refusal_facts facts = {.message = e.msg, .model = path, .model_bytes = buf, .model_n = n,
                                  .model_info = with_info ? mi : NULL};
        oq_refusal r;
        assert_int_equal(oq_refusal_explain(&facts, &r, NULL), OQ_OK);
        assert_string_equal(r.id, "attn-mask-total-length");
        assert_string_equal(r.inputs, "K 'k' float32 [batch,2,seq,4]; attn_mask 'm' bool [batch,1,seq,mask_len]");
        oq_refusal_clear(&r);
    }
    oq_model_info_free(mi);
    free(buf);
}

/* An Attention node attn0 at `opset` on float32 inputs of the given (numeric) 4-D shapes: q,
 * k (and v), a float mask m, past_key and past_value when ps is given (with the present
 * outputs ORT wants with them). Written to dir/file and run through ORT: returns its error. */
static void refused_shapes(int64_t opset, const int64_t *qs, const int64_t *ks, const int64_t *ms,
                           const int64_t *ps, const char *file, char *path, oq_err *e)
{
    oq_opset ops[] = {{"", opset}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "g", &g, NULL), OQ_OK);
    const int64_t *shapes[] = {qs, ks, ks, ms, ps, ps};
    const char *names[] = {"q", "k", "v", "m", "past_key", "past_value"};
    const size_t n_in = ps ? 6 : 4;
    oq_tensor *in[6];
    for (size_t i = 0; i < n_in; i++) {
        oq_dim d[4];
        for (int a = 0; a < 4; a++) d[a] = OQ_DIM(shapes[i][a]);
        oq_graph_add_input(g, names[i], OQ_DTYPE_FLOAT32, 4, d);
        in[i] = zeros(names[i], OQ_DTYPE_FLOAT32, 4, shapes[i]);
    }
    const char *out[] = {"y", "present_key", "present_value"};
    oq_graph_add_node(g, "Attention", NULL, "attn0", n_in, names, ps ? 3 : 1, out, 0, NULL);
    const oq_dim dy[] = {OQ_DIM(qs[0]), OQ_DIM(qs[1]), OQ_DIM(qs[2]), OQ_DIM(qs[3])};
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 4, dy);
    if (ps) {
        const oq_dim dp[] = {OQ_DIM(ks[0]), OQ_DIM(ks[1]), OQ_DIM(ps[2] + ks[2]), OQ_DIM(ks[3])};
        oq_graph_add_output(g, "present_key", "present_key", OQ_DTYPE_FLOAT32, 4, dp);
        oq_graph_add_output(g, "present_value", "present_value", OQ_DTYPE_FLOAT32, 4, dp);
    }
    assert_int_equal(oq_graph_status(g, NULL), OQ_OK);
    refused(g, file, 0, in, n_in, path, e);
}

/* The mask patterns explain ORT's departure only where the declared shapes show one: a mask
 * longer than T, a short mask at opset 23 and a query axis neither 1 nor Lq are the model's
 * fault, and no padding or expansion fixes them (the QA's longmask and qmask_bad). */
static void mask_shapes_that_do_not_fit(void **state)
{
    (void)state;
    const int64_t q[] = {2, 1, 3, 4}, k[] = {2, 1, 3, 4}, past[] = {2, 1, 2, 4}, longm[] = {2, 1, 3, 7},
                  shortm[] = {2, 1, 3, 4}, k5[] = {2, 1, 5, 4}, qm[] = {2, 1, 2, 5};
    char path[512];
    oq_err e = {0};
    oq_refusal r;
    refused_shapes(23, q, k, longm, past, "longmask.onnx", path, &e);
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-shape");
    assert_string_equal(r.inputs, "K 'k' float32 [2,1,3,4]; attn_mask 'm' float32 [2,1,3,7]; past_key 'past_key' "
                                  "float32 [2,1,2,4]");
    assert_has(r.why, "the mask does not fit: attn_mask axis 3 is 7; T (past 2 + current keys 3) is 5");
    assert_has(r.why, "longer than the total sequence length is invalid for every opset");
    assert_string_equal(r.fix, "give attn_mask's last axis the total sequence length 5 (past plus current keys)");
    oq_refusal_clear(&r);

    refused_shapes(23, q, k, shortm, past, "short23.onnx", path, &e);
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-shape");
    assert_has(r.why, "attn_mask axis 3 is 4; T (past 2 + current keys 3) is 5");
    assert_has(r.why, "The model imports opset 23");
    assert_null(strstr(r.why, "lets attn_mask's last axis be shorter"));
    assert_has(r.fix, "make attn_mask's last axis 5: pad a shorter mask");
    oq_refusal_clear(&r);

    refused_shapes(24, q, k, shortm, past, "short24.onnx", path, &e); /* the departure itself */
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-total-length");
    assert_true(!strncmp(r.why, "ONNX Attention-24 lets attn_mask's last axis be shorter", 55));
    oq_refusal_clear(&r);

    refused_shapes(23, q, k5, qm, NULL, "qmask.onnx", path, &e);
    assert_has(e.msg, "inconsistent q_sequence_length");
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "attn-mask-shape");
    assert_string_equal(r.inputs, "Q 'q' float32 [2,1,3,4]; attn_mask 'm' float32 [2,1,2,5]");
    assert_has(r.why, "the mask does not fit: attn_mask axis 2 is 2; Q's sequence length is 3");
    assert_null(strstr(r.fix, "expand"));
    char line[4096];
    assert_has(oq_refusal_str(&r, line, sizeof line), "refused by ONNX Runtime [attn-mask-shape] at node 'attn0'");
    oq_refusal_clear(&r);
}

/* ORT refuses a mask [batch,1,mq,mlen] of `opset` fed `mask_shape` (Q, K, V [2,2,5,4]); the
 * explanation given the inputs fed (fed 1) or the declared shapes alone (fed 0). */
static void explain_symbolic(int64_t opset, const int64_t *mask_shape, int fed, oq_refusal *r)
{
    const oq_dim dm[] = {{0, "batch"}, {1, NULL}, {0, "mq"}, {0, "mlen"}};
    char path[512];
    oq_err e = {0};
    mask_refused(opset, dm, mask_shape, "symbolic.onnx", path, &e);
    oq_tensor *in[4];
    attention_inputs(in, mask_shape); /* the same again: the run freed those it fed */
    oq_refusal_facts f = {.message = e.msg, .model = path, .inputs = (const oq_tensor *const *)in,
                          .n_inputs = fed ? 4 : 0};
    assert_int_equal(oq_refusal_explain(&f, r, NULL), OQ_OK);
    for (size_t i = 0; i < 4; i++) oq_tensor_free(in[i]);
}

/* A model whose mask's sizes are all names: which pattern holds rests on the sizes it was fed
 * (bench's --dim, a validate batch), as ORT's check did. Told by the declared names alone,
 * each was the departure "if" the mask were so; a mask longer than the keys or of a query
 * size neither 1 nor Lq was then given a fix (pad, expand) that cannot work. */
static void sizes_fed_decide(void **state)
{
    (void)state;
    const int64_t bcast[] = {2, 1, 1, 5}, q2[] = {2, 1, 2, 5}, shortm[] = {2, 1, 5, 3}, longm[] = {2, 1, 5, 7};
    oq_refusal r;
    explain_symbolic(24, bcast, 1, &r);
    assert_string_equal(r.id, "attn-mask-query-broadcast");
    assert_string_equal(r.inputs, "Q 'q' float32 [batch=2,2,seq=5,4]; attn_mask 'm' bool [batch=2,1,mq=1,mlen=5]");
    assert_true(!strncmp(r.why, "the ONNX Attention operator", 27)); /* no "if": the sizes say */
    oq_refusal_clear(&r);

    explain_symbolic(24, q2, 1, &r);
    assert_string_equal(r.id, "attn-mask-shape");
    assert_has(r.why, "the mask does not fit: attn_mask axis 2 is 2; Q's sequence length is 5");
    assert_null(strstr(r.fix, "expand"));
    oq_refusal_clear(&r);
    explain_symbolic(24, q2, 0, &r); /* the names alone: the departure, if the axis is 1 */
    assert_string_equal(r.id, "attn-mask-query-broadcast");
    assert_has(r.why, "if the mask's second-to-last axis is 1");
    oq_refusal_clear(&r);

    explain_symbolic(24, shortm, 1, &r);
    assert_string_equal(r.id, "attn-mask-total-length");
    assert_string_equal(r.inputs, "K 'k' float32 [batch=2,2,seq=5,4]; attn_mask 'm' bool [batch=2,1,mq=5,mlen=3]");
    assert_true(!strncmp(r.why, "ONNX Attention-24 lets attn_mask's last axis be shorter", 55));
    oq_refusal_clear(&r);

    explain_symbolic(24, longm, 1, &r);
    assert_string_equal(r.id, "attn-mask-shape");
    assert_has(r.why, "the mask does not fit: attn_mask axis 3 is 7; T (past 0 + current keys 5) is 5");
    assert_has(r.why, "longer than the total sequence length is invalid for every opset");
    oq_refusal_clear(&r);
    explain_symbolic(24, longm, 0, &r);
    assert_string_equal(r.id, "attn-mask-total-length");
    assert_has(r.why, "if the mask is shorter (the declared shapes do not say");
    oq_refusal_clear(&r);

    explain_symbolic(23, shortm, 1, &r); /* shorter, but at opset 23: the model's fault */
    assert_string_equal(r.id, "attn-mask-shape");
    assert_has(r.why, "attn_mask axis 3 is 3; T (past 0 + current keys 5) is 5");
    assert_has(r.fix, "make attn_mask's last axis 5");
    oq_refusal_clear(&r);
}

/* qk_matmul_output modes as the spec names them: 1 is after softcap, before the mask. */
static void output_mode_names(void **state)
{
    (void)state;
    static const char *const want[] = {"mode 0 (the scaled QK^T)", "mode 1 (QK^T after softcap, before the mask)",
                                       "mode 2 (QK^T after softcap and the mask)", "mode 3 (after softmax)"};
    for (int k = 0; k < 4; k++) {
        const int m = (k + 1) % 4; /* mode 1 first: the one named wrong ("after the mask and bias") */
        char msg[160];
        snprintf(msg, sizeof msg, "Only kNone and kQK output modes are supported in unified unfused attention. Mode: %d", m);
        oq_refusal r;
        explain(msg, NULL, "CUDAExecutionProvider", 0, &r);
        assert_string_equal(r.id, "attention-output-mode");
        assert_has(r.why, want[m]);
        oq_refusal_clear(&r);
    }
}

/* One node `op` named n0 in `domain`, x -> y of `dt` [3]. */
static oq_graph *one_node(const oq_opset *ops, size_t n_ops, const char *op, const char *domain, oq_dtype dt)
{
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, n_ops, "g", &g, NULL), OQ_OK);
    const oq_dim d[] = {{3, NULL}};
    oq_graph_add_input(g, "x", dt, 1, d);
    const char *in[] = {"x"}, *out[] = {"y"};
    oq_graph_add_node(g, op, domain, "n0", 1, in, 1, out, 0, NULL);
    oq_graph_add_output(g, "y", "y", dt, 1, d);
    assert_int_equal(oq_graph_status(g, NULL), OQ_OK);
    return g;
}

static void no_kernel(void **state)
{
    (void)state;
    const oq_opset ops[] = {{"", 22}};
    const int64_t s[] = {3};
    oq_tensor *in[] = {zeros("x", OQ_DTYPE_FLOAT64, 1, s)};
    char path[512];
    oq_err e = {0};
    refused(one_node(ops, 1, "Elu", NULL, OQ_DTYPE_FLOAT64), "elu.onnx", 0, in, 1, path, &e);
    assert_int_equal(e.status, OQ_ERR_UNSUPPORTED); /* ORT's NOT_IMPLEMENTED */
    oq_refusal r;
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "no-kernel");
    assert_string_equal(r.node, "'n0' (Elu)");
    assert_string_equal(r.inputs, "input 0 'x' float64 [3]");
    assert_has(r.why, "CPUExecutionProvider has no kernel for Elu as opset 22 defines it");
    assert_has(r.fix, "`ortqual convert --decompose-elu`");
    oq_refusal_clear(&r);
}

static void opset_and_ir_too_new(void **state)
{
    (void)state;
    const oq_opset ops[] = {{"", 40}};
    const int64_t s[] = {3};
    oq_tensor *in[] = {zeros("x", OQ_DTYPE_FLOAT32, 1, s)};
    char path[512];
    oq_err e = {0};
    refused(one_node(ops, 1, "Relu", NULL, OQ_DTYPE_FLOAT32), "opset40.onnx", 0, in, 1, path, &e);
    oq_refusal r;
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "opset-too-new");
    assert_has(r.why, "opset 40 of domain ai.onnx");
    assert_has(r.fix, "opset_version=26"); /* what ORT 1.29 said it supports */
    oq_refusal_clear(&r);
    const oq_opset ops18[] = {{"", 18}};
    in[0] = zeros("x", OQ_DTYPE_FLOAT32, 1, s);
    refused(one_node(ops18, 1, "Relu", NULL, OQ_DTYPE_FLOAT32), "ir20.onnx", 20, in, 1, path, &e);
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "ir-too-new");
    assert_has(r.why, "IR version 20; this ONNX Runtime reads IR versions up to 13");
    oq_refusal_clear(&r);
}

static void custom_domains(void **state)
{
    (void)state;
    const oq_opset ops[] = {{"", 18}, {"com.example", 1}};
    const int64_t s[] = {3};
    oq_tensor *in[] = {zeros("x", OQ_DTYPE_FLOAT32, 1, s)};
    char path[512];
    oq_err e = {0};
    refused(one_node(ops, 2, "Foo", "com.example", OQ_DTYPE_FLOAT32), "custom.onnx", 0, in, 1, path, &e);
    assert_has(e.msg, "com.example:Foo(-1) is not a registered function/op");
    oq_refusal r;
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "unregistered-op");
    assert_string_equal(r.node, "'n0' (Foo)");
    assert_has(r.why, "no operator Foo is registered in domain 'com.example'");
    oq_refusal_clear(&r);
    in[0] = zeros("x", OQ_DTYPE_FLOAT32, 1, s);
    refused(one_node(ops, 1, "Foo", "com.example", OQ_DTYPE_FLOAT32), "noimport.onnx", 0, in, 1, path, &e);
    explain(e.msg, path, NULL, 0, &r);
    assert_string_equal(r.id, "missing-opset-import");
    assert_string_equal(r.node, "'n0' (com.example)");
    oq_refusal_clear(&r);
}

/* The CUDA EP's refusal of qk_matmul_output modes, as the H200 printed it for the ONNX test. */
static void output_mode_recorded_on_h200(void **state)
{
    (void)state;
    FILE *f = fopen(OQ_SOURCE_DIR "/docs/evidence/h200/conformance-cuda.txt", "r");
    assert_non_null(f);
    char line[4096], *msg = NULL;
    const char *test = "UNSUPPORTED test_attention_3d_with_past_and_present_qk_matmul_softmax: ";
    while (!msg && fgets(line, sizeof line, f))
        if (!strncmp(line, test, strlen(test))) msg = line + strlen(test);
    fclose(f);
    assert_non_null(msg);
    oq_refusal r;
    explain(msg,
            OQ_SOURCE_DIR "/tests/data/onnx-backend/attention/test_attention_3d_with_past_and_present_qk_matmul_softmax/model.onnx",
            "CUDAExecutionProvider", 0, &r);
    assert_string_equal(r.id, "attention-output-mode");
    assert_string_equal(r.node, "'(unnamed)' (Attention)"); /* the ONNX test's node has none */
    assert_has(r.why, "mode 3 (after softmax)");
    assert_has(r.why, "CUDAExecutionProvider's unified unfused attention");
    oq_refusal_clear(&r);
}

/* SIGSEGV on a GPU provider with Attention inputs of no declared shape: explained; the same
 * crash with declared inputs, on CPU, or of another signal is not. */
static void crash_without_shapes(void **state)
{
    (void)state;
    const oq_dim dm[] = {{0, "batch"}, {1, NULL}, {0, "seq"}, {0, "seq"}};
    char bare[512], declared[512];
    oq_graph *g = attention_model(24, dm, 0);
    snprintf(bare, sizeof bare, "%s/bare.onnx", dir);
    assert_int_equal(oq_graph_write(g, bare, 1, NULL), OQ_OK);
    oq_graph_free(g);
    g = attention_model(24, dm, 1);
    snprintf(declared, sizeof declared, "%s/declared.onnx", dir);
    assert_int_equal(oq_graph_write(g, declared, 1, NULL), OQ_OK);
    oq_graph_free(g);
    oq_refusal r;
    explain("worker killed by signal 11 (Segmentation fault)", bare, "CUDAExecutionProvider", SIGSEGV, &r);
    assert_string_equal(r.id, "crash-attention-no-shapes");
    assert_string_equal(r.node, "'attn0' (Attention)");
    assert_string_equal(r.inputs, "Q 'Identity_out' (no declared shape); K 'Identity_out_1' (no declared shape); "
                                  "V 'Identity_out_2' (no declared shape)");
    assert_has(r.fix, "value_info");
    oq_refusal_clear(&r);
    explain("worker killed by signal 11", declared, "CUDAExecutionProvider", SIGSEGV, &r);
    assert_null(r.id);
    oq_refusal_clear(&r);
    explain("worker killed by signal 11", bare, "CPUExecutionProvider", SIGSEGV, &r);
    assert_null(r.id);
    oq_refusal_clear(&r);
    explain("worker killed by signal 6", bare, "CUDAExecutionProvider", SIGABRT, &r);
    assert_null(r.id);
    oq_refusal_clear(&r);
    /* a message no pattern knows: nothing explained, the message kept */
    explain("Run: something else went wrong", declared, NULL, 0, &r);
    assert_null(r.id);
    assert_string_equal(r.raw, "Run: something else went wrong");
    assert_string_equal(oq_refusal_str(&r, (char[64]){0}, 64), "Run: something else went wrong");
    oq_refusal_clear(&r);
}

/* The line is one line whatever the message held, and a line cut at the buffer says so. */
static void str_one_line(void **state)
{
    (void)state;
    oq_refusal r;
    explain("Could not find an implementation for Elu(22) node with name 'n0'\r\nsecond line\n", NULL, NULL, 0, &r);
    assert_string_equal(r.id, "no-kernel");
    assert_non_null(strchr(r.raw, '\n')); /* raw stays as given */
    char line[4096], cut[48];
    oq_refusal_str(&r, line, sizeof line);
    assert_null(strpbrk(line, "\r\n"));
    assert_has(line, "(ONNX Runtime: Could not find an implementation for Elu(22) node with name 'n0'  second line )");
    assert_string_equal(oq_refusal_str(&r, cut, sizeof cut), "refused by ONNX Runtime [no-kernel] at node ...");
    oq_refusal_clear(&r);
    explain("Run: two\nlines", NULL, NULL, 0, &r);
    assert_null(r.id);
    assert_string_equal(oq_refusal_str(&r, line, sizeof line), "Run: two lines");
    oq_refusal_clear(&r);
}

static int setup(void **state)
{
    dir = temp_dir("refusal");
    return group_setup(state);
}

static int teardown(void **state)
{
    remove_dir(dir);
    return group_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mask_query_broadcast), cmocka_unit_test(torch_export_op23),
        cmocka_unit_test(mask_total_length),    cmocka_unit_test(model_held),
        cmocka_unit_test(no_kernel),
        cmocka_unit_test(opset_and_ir_too_new), cmocka_unit_test(custom_domains),
        cmocka_unit_test(output_mode_recorded_on_h200), cmocka_unit_test(crash_without_shapes),
        cmocka_unit_test(str_one_line), cmocka_unit_test(mask_shapes_that_do_not_fit),
        cmocka_unit_test(output_mode_names),    cmocka_unit_test(sizes_fed_decide),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
