/* Exported models on ORT CPU against the float64 references, across
 * representations, shapes (odd lengths included), dtypes and masks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/reference.h"
#include "ortqual/export.h"
#include "ortqual/inspect.h"
#include "ortqual/runtime.h"

/* Tolerances (documented in docs/export.md): |ort - ref| <= atol + rtol * |ref|. */
#define TOL32_ATOL 1e-4
#define TOL32_RTOL 1e-4
#define TOL16_ATOL 3e-2
#define TOL16_RTOL 3e-2
/* Representations against each other, all float32. */
#define TOL_CROSS 2e-5

static oq_runtime *rt;
/* Largest errors seen, printed so a run documents the margins. */
static double worst32, worst16, worst_cross;

static int setup(void **state)
{
    (void)state;
    oq_err err = {0};
    if (oq_runtime_load(OQ_ORT_LIB, &rt, &err)) {
        fprintf(stderr, "cannot load ORT: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    oq_runtime_free(rt);
    return 0;
}

static uint64_t rng_state;
static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Random float32 tensor; `pad_rows` with lengths: padded positions get `pad`. */
static oq_tensor *rand_tensor(const char *name, int32_t ndim, const int64_t *shape)
{
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, ndim, shape, name, NULL), OQ_OK);
    float *d = t->data;
    for (int64_t i = 0; i < oq_tensor_numel(t); i++) d[i] = (float)urand();
    return t;
}

static oq_tensor *make_mask(int64_t B, int64_t L, const int64_t *len)
{
    int64_t shape[2] = {B, L};
    oq_tensor *m;
    assert_int_equal(oq_tensor_create(&m, OQ_DTYPE_FLOAT32, 2, shape, "mask", NULL), OQ_OK);
    float *d = m->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t l = 0; l < L; l++) d[b * L + l] = l < len[b] ? 1.0f : 0.0f;
    return m;
}

static oq_session *session_of(oq_graph *g)
{
    uint8_t *buf;
    size_t n;
    oq_err err = {0};
    assert_int_equal(oq_graph_serialize(g, &buf, &n, &err), OQ_OK);
    oq_session_opts so = {0};
    so.intra_op_threads = 1;
    oq_session *s = NULL;
    oq_status st = oq_session_create(rt, NULL, buf, n, &so, &s, &err);
    free(buf);
    if (st) fprintf(stderr, "session: %s\n", err.msg);
    assert_int_equal(st, OQ_OK);
    return s;
}

static oq_tensor **run(oq_session *s, size_t n_in, oq_tensor *const *in, size_t *n_out)
{
    oq_tensor **out = NULL;
    oq_err err = {0};
    oq_status st = oq_session_run(s, n_in, in, n_out, &out, &err);
    if (st) fprintf(stderr, "run: %s\n", err.msg);
    assert_int_equal(st, OQ_OK);
    return out;
}

/* Compare a [B, L, ...] (pos_axis 1) or [B, H, L, D] (pos_axis 2) float32
 * output with a float64 reference: valid elements within tolerance and
 * finite, padded elements exactly zero. Returns the max abs error. */
static double check_output(const oq_tensor *got, const oq_tensor *ref, const int64_t *len,
                           int pos_axis, double atol, double rtol)
{
    assert_int_equal(got->ndim, ref->ndim);
    for (int d = 0; d < got->ndim; d++) assert_int_equal(got->shape[d], ref->shape[d]);
    int64_t n = oq_tensor_numel(got), inner = 1;
    for (int d = pos_axis + 1; d < got->ndim; d++) inner *= got->shape[d];
    int64_t L = got->shape[pos_axis], per_b = n / got->shape[0];
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = i / per_b, l = (i / inner) % L;
        double g = oq_tensor_get_f64(got, i), r = oq_tensor_get_f64(ref, i);
        if (l >= len[b]) {
            if (g != 0.0 || signbit(g)) fail_msg("padded element %lld is %g, not +0", (long long)i, g);
            continue;
        }
        if (!isfinite(g)) fail_msg("valid element %lld is not finite", (long long)i);
        double e = fabs(g - r);
        if (e > atol + rtol * fabs(r))
            fail_msg("element %lld (event %lld, position %lld): got %.9g, reference %.9g",
                     (long long)i, (long long)b, (long long)l, g, r);
        if (e > worst) worst = e;
    }
    return worst;
}

/* ---- encoder ------------------------------------------------------------ */

struct shape_case {
    int64_t B, L;
    int64_t len[4];
};
/* The last: several 48-row tiles and key chunks of the reference's kernels. */
static const struct shape_case enc_shapes[] = {
    {2, 7, {7, 4}}, {3, 33, {33, 20, 1}}, {2, 300, {300, 129}}};

static oq_encoder_weights *test_weights(void)
{
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    c.features = 5;
    c.width = 24;
    c.heads = 3;
    c.ffn_width = 40;
    c.layers = 2;
    oq_encoder_weights *w;
    oq_err err = {0};
    assert_int_equal(oq_encoder_weights_random(&c, 7, &w, &err), OQ_OK);
    return w;
}

static void test_encoder_matches_reference(void **state)
{
    (void)state;
    oq_encoder_weights *w = test_weights();
    static const oq_attn_format formats[] = {OQ_ATTN_DECOMPOSED, OQ_ATTN_ATTENTION23,
                                             OQ_ATTN_ATTENTION24};
    static const oq_mask_form masks[] = {OQ_MASK_AUTO, OQ_MASK_BOOL};
    static const oq_dtype dtypes[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16};
    const size_t n_shapes = sizeof enc_shapes / sizeof *enc_shapes;
    /* [shape][output] float32 results of the first model */
    oq_tensor *first[sizeof enc_shapes / sizeof *enc_shapes][2] = {{0}};
    for (size_t f = 0; f < 3; f++)
        for (size_t m = 0; m < 2; m++)
            for (size_t d = 0; d < 2; d++) {
                oq_encoder_export x = {formats[f], masks[m], dtypes[d], 0, 0};
                oq_graph *g;
                oq_err err = {0};
                assert_int_equal(oq_export_encoder(w, &x, &g, &err), OQ_OK);
                oq_session *s = session_of(g); /* one dynamic session, two shapes */
                oq_graph_free(g);
                for (size_t k = 0; k < n_shapes; k++) {
                    const struct shape_case *sc = &enc_shapes[k];
                    rng_state = 100 + k;
                    int64_t fs[3] = {sc->B, sc->L, w->cfg.features};
                    oq_tensor *in[2] = {rand_tensor("features", 3, fs),
                                        make_mask(sc->B, sc->L, sc->len)};
                    oq_tensor *ref[2] = {0};
                    assert_int_equal(oq_encoder_ref_forward(w, in[0], in[1], ref, &err), OQ_OK);
                    size_t n_out;
                    oq_tensor **out = run(s, 2, in, &n_out);
                    assert_int_equal(n_out, 2);
                    for (size_t o = 0; o < 2; o++) {
                        assert_string_equal(out[o]->name, w->cfg.outputs[o].name);
                        int f32 = dtypes[d] == OQ_DTYPE_FLOAT32;
                        double e = check_output(out[o], ref[o], sc->len, 1,
                                                f32 ? TOL32_ATOL : TOL16_ATOL,
                                                f32 ? TOL32_RTOL : TOL16_RTOL);
                        if (f32) worst32 = fmax(worst32, e);
                        else worst16 = fmax(worst16, e);
                        if (!f32) continue;
                        if (!first[k][o]) {
                            oq_tensor_clone(out[o], &first[k][o], NULL);
                        } else {
                            for (int64_t i = 0; i < oq_tensor_numel(out[o]); i++) {
                                double dx = fabs(oq_tensor_get_f64(out[o], i) -
                                                oq_tensor_get_f64(first[k][o], i));
                                worst_cross = fmax(worst_cross, dx);
                                assert_true(dx <= TOL_CROSS);
                            }
                        }
                    }
                    oq_tensors_free(out, n_out);
                    oq_tensor_free(ref[0]);
                    oq_tensor_free(ref[1]);
                    oq_tensor_free(in[0]);
                    oq_tensor_free(in[1]);
                }
                oq_session_free(s);
            }
    for (size_t k = 0; k < n_shapes; k++)
        for (int o = 0; o < 2; o++) oq_tensor_free(first[k][o]);
    oq_encoder_weights_free(w);
    print_message("encoder max |ort - ref|: float32 %.3g, float16 %.3g; across representations %.3g\n",
                  worst32, worst16, worst_cross);
}

/* Garbage (huge, NaN, inf) in padded features changes no output bit. */
static void test_encoder_padding_isolation(void **state)
{
    (void)state;
    oq_encoder_weights *w = test_weights();
    for (int f = OQ_ATTN_DECOMPOSED; f <= OQ_ATTN_ATTENTION24; f++) {
        oq_encoder_export x = {(oq_attn_format)f, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0};
        oq_graph *g;
        assert_int_equal(oq_export_encoder(w, &x, &g, NULL), OQ_OK);
        oq_session *s = session_of(g);
        oq_graph_free(g);
        const struct shape_case *sc = &enc_shapes[1];
        rng_state = 5;
        int64_t fs[3] = {sc->B, sc->L, w->cfg.features};
        oq_tensor *in[2] = {rand_tensor("features", 3, fs), make_mask(sc->B, sc->L, sc->len)};
        size_t n1, n2;
        oq_tensor **a = run(s, 2, in, &n1);
        float *fd = in[0]->data;
        const float junk[3] = {1e30f, NAN, -INFINITY};
        for (int64_t b = 0; b < sc->B; b++)
            for (int64_t l = sc->len[b]; l < sc->L; l++)
                for (int64_t c = 0; c < fs[2]; c++) fd[(b * sc->L + l) * fs[2] + c] = junk[(l + c) % 3];
        oq_tensor **bo = run(s, 2, in, &n2);
        for (size_t o = 0; o < n1; o++)
            assert_memory_equal(a[o]->data, bo[o]->data, oq_tensor_nbytes(a[o]));
        oq_tensors_free(a, n1);
        oq_tensors_free(bo, n2);
        oq_tensor_free(in[0]);
        oq_tensor_free(in[1]);
        oq_session_free(s);
    }
    oq_encoder_weights_free(w);
}

static void test_static_model_refuses_other_shapes(void **state)
{
    (void)state;
    oq_encoder_weights *w = test_weights();
    oq_encoder_export x = {OQ_ATTN_ATTENTION24, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 2, 7};
    oq_graph *g;
    assert_int_equal(oq_export_encoder(w, &x, &g, NULL), OQ_OK);
    oq_session *s = session_of(g);
    oq_graph_free(g);
    int64_t len[3] = {7, 3, 2};
    int64_t ok[3] = {2, 7, w->cfg.features}, bad[3] = {3, 7, w->cfg.features};
    oq_tensor *in[2] = {rand_tensor("features", 3, ok), make_mask(2, 7, len)};
    size_t n;
    oq_tensor **out = run(s, 2, in, &n);
    oq_tensors_free(out, n);
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    in[0] = rand_tensor("features", 3, bad);
    in[1] = make_mask(3, 7, len);
    oq_err err = {0};
    out = NULL;
    assert_int_not_equal(oq_session_run(s, 2, in, &n, &out, &err), OQ_OK);
    assert_null(out);
    assert_non_null(strstr(err.msg, "features"));
    print_message("static model at B=3: %s\n", err.msg);
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    oq_session_free(s);
    oq_encoder_weights_free(w);
}

/* ---- sdpa --------------------------------------------------------------- */

/* Float64 masked GQA attention in the 4-D layout, inputs [B, H(kv), L, D]. */
static oq_tensor *sdpa_ref(const oq_tensor *q, const oq_tensor *k, const oq_tensor *v,
                           const int64_t *len, int masked)
{
    int64_t B = q->shape[0], H = q->shape[1], L = q->shape[2], D = q->shape[3], Hkv = k->shape[1];
    oq_tensor *y;
    assert_int_equal(oq_tensor_create(&y, OQ_DTYPE_FLOAT64, 4, q->shape, "output", NULL), OQ_OK);
    double *p = calloc((size_t)L, sizeof *p), *yd = y->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            int64_t hk = h / (H / Hkv), nk = masked ? len[b] : L;
            for (int64_t i = 0; i < L; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < nk; j++) {
                    double s = 0;
                    for (int64_t c = 0; c < D; c++)
                        s += oq_tensor_get_f64(q, ((b * H + h) * L + i) * D + c) *
                             oq_tensor_get_f64(k, ((b * Hkv + hk) * L + j) * D + c);
                    p[j] = s / sqrt((double)D);
                    mx = fmax(mx, p[j]);
                }
                for (int64_t j = 0; j < nk; j++) sum += (p[j] = exp(p[j] - mx));
                for (int64_t c = 0; c < D; c++) {
                    double acc = 0;
                    for (int64_t j = 0; j < nk; j++)
                        acc += p[j] * oq_tensor_get_f64(v, ((b * Hkv + hk) * L + j) * D + c);
                    yd[((b * H + h) * L + i) * D + c] = acc / sum;
                }
            }
        }
    free(p);
    return y;
}

/* [B, H, L, D] <-> [B, L, H*D] copies. */
static oq_tensor *to_layout3(const oq_tensor *t, const char *name)
{
    int64_t B = t->shape[0], H = t->shape[1], L = t->shape[2], D = t->shape[3];
    int64_t shape[3] = {B, L, H * D};
    oq_tensor *o;
    assert_int_equal(oq_tensor_create(&o, t->dtype, 3, shape, name, NULL), OQ_OK);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t l = 0; l < L; l++)
                for (int64_t d = 0; d < D; d++)
                    oq_tensor_set_f64(o, ((b * L + l) * H + h) * D + d,
                                      oq_tensor_get_f64(t, ((b * H + h) * L + l) * D + d));
    return o;
}

static void sdpa_case(const oq_sdpa_config *c, int64_t B, int64_t L, const int64_t *len)
{
    oq_graph *g;
    oq_err err = {0};
    if (oq_export_sdpa(c, &g, &err)) fail_msg("export: %s", err.msg);
    oq_session *s = session_of(g);
    oq_graph_free(g);
    rng_state = (uint64_t)(L * 31 + B);
    int64_t qs[4] = {B, c->heads, L, c->head_dim}, ks[4] = {B, c->kv_heads, L, c->head_dim};
    oq_tensor *q = rand_tensor("query", 4, qs), *k = rand_tensor("key", 4, ks),
              *v = rand_tensor("value", 4, ks);
    int masked = c->mask != OQ_MASK_NONE;
    oq_tensor *ref = sdpa_ref(q, k, v, len, masked);
    oq_tensor *in[4] = {q, k, v, masked ? make_mask(B, L, len) : NULL};
    if (c->layout == 3) {
        in[0] = to_layout3(q, "query");
        in[1] = to_layout3(k, "key");
        in[2] = to_layout3(v, "value");
    }
    size_t n;
    oq_tensor **out = run(s, masked ? 4 : 3, in, &n);
    oq_tensor *ref_l = c->layout == 3 ? to_layout3(ref, "output") : ref;
    int64_t all[4] = {L, L, L, L};
    int f32 = c->attention_dtype == OQ_DTYPE_FLOAT32;
    double e = check_output(out[0], ref_l, masked ? len : all, c->layout == 3 ? 1 : 2,
                            f32 ? TOL32_ATOL : TOL16_ATOL, f32 ? TOL32_RTOL : TOL16_RTOL);
    if (f32) worst32 = fmax(worst32, e);
    else worst16 = fmax(worst16, e);
    oq_tensors_free(out, n);
    if (c->layout == 3) {
        oq_tensor_free(ref_l);
        for (int i = 0; i < 3; i++) oq_tensor_free(in[i]);
    }
    oq_tensor_free(in[3]);
    oq_tensor_free(ref);
    oq_tensor_free(q);
    oq_tensor_free(k);
    oq_tensor_free(v);
    oq_session_free(s);
}

static void test_sdpa_matches_reference(void **state)
{
    (void)state;
    worst32 = worst16 = 0;
    static const int64_t len7[3] = {7, 5, 1}, len33[2] = {20, 33};
    for (int f = OQ_ATTN_DECOMPOSED; f <= OQ_ATTN_ATTENTION24; f++)
        for (int layout = 3; layout <= 4; layout++)
            for (int gqa = 0; gqa < 2; gqa++)
                for (int m = 0; m < 3; m++)
                    for (int d = 0; d < 2; d++) {
                        oq_sdpa_config c;
                        oq_sdpa_config_default(&c);
                        c.format = (oq_attn_format)f;
                        c.layout = layout;
                        c.heads = 4;
                        c.kv_heads = gqa ? 2 : 4;
                        c.head_dim = gqa ? 8 : 6; /* 1/sqrt(6) is not a power of two */
                        c.mask = m == 0 ? OQ_MASK_AUTO : m == 1 ? OQ_MASK_BOOL : OQ_MASK_NONE;
                        c.attention_dtype = d ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32;
                        sdpa_case(&c, 3, 7, len7);
                        if (!d && !gqa) sdpa_case(&c, 2, 33, len33);
                    }
    print_message("sdpa max |ort - ref|: float32 %.3g, float16 %.3g\n", worst32, worst16);
}

/* float16 inputs and output (--io-dtype float16): no Cast anywhere, the output float16 and
 * within float16 tolerance of float64 attention on the same (float16-rounded) inputs. */
static void test_sdpa_float16_io(void **state)
{
    (void)state;
    for (int f = OQ_ATTN_DECOMPOSED; f <= OQ_ATTN_ATTENTION24; f++) {
        oq_sdpa_config c;
        oq_sdpa_config_default(&c);
        c.format = (oq_attn_format)f;
        c.mask = OQ_MASK_NONE;
        c.attention_dtype = c.io_dtype = OQ_DTYPE_FLOAT16;
        oq_graph *g;
        uint8_t *buf;
        size_t n;
        oq_err err = {0};
        oq_model_info *mi = NULL;
        assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_OK);
        assert_int_equal(oq_graph_serialize(g, &buf, &n, &err), OQ_OK);
        assert_int_equal(oq_model_inspect_bytes(buf, n, "sdpa16", &mi, &err), OQ_OK);
        for (size_t i = 0; i < mi->n_ops; i++) assert_string_not_equal(mi->ops[i].op_type, "Cast");
        assert_int_equal(mi->inputs[0].elem_type, OQ_DTYPE_FLOAT16);
        assert_int_equal(mi->outputs[0].elem_type, OQ_DTYPE_FLOAT16);
        oq_model_info_free(mi);
        free(buf);
        oq_session *s = session_of(g);
        oq_graph_free(g);
        int64_t shape[4] = {2, c.heads, 9, c.head_dim}, all[2] = {9, 9};
        oq_tensor *x[3] = {rand_tensor("query", 4, shape), rand_tensor("key", 4, shape), rand_tensor("value", 4, shape)};
        oq_tensor *h[3];
        for (int i = 0; i < 3; i++) assert_int_equal(oq_tensor_convert(x[i], OQ_DTYPE_FLOAT16, &h[i], &err), OQ_OK);
        oq_tensor *ref = sdpa_ref(h[0], h[1], h[2], all, 0);
        size_t n_out;
        oq_tensor **out = run(s, 3, h, &n_out);
        assert_int_equal(out[0]->dtype, OQ_DTYPE_FLOAT16);
        check_output(out[0], ref, all, 2, TOL16_ATOL, TOL16_RTOL);
        oq_tensors_free(out, n_out);
        oq_tensor_free(ref);
        for (int i = 0; i < 3; i++) {
            oq_tensor_free(x[i]);
            oq_tensor_free(h[i]);
        }
        oq_session_free(s);
    }
}

/* ---- configuration and weights errors ------------------------------------ */

/* The library's messages name the fields a caller set, never the tool's options ("--heads"). */
static void assert_fields_named(const oq_err *err, const char *want)
{
    assert_non_null(strstr(err->msg, want));
    assert_null(strstr(err->msg, "--"));
}

static void test_config_errors(void **state)
{
    (void)state;
    oq_sdpa_config c;
    oq_graph *g = NULL;
    oq_err err = {0};
    oq_sdpa_config_default(&c);
    c.kv_heads = 3;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "kv_heads 3 does not divide heads 4");
    c.kv_heads = 0;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "heads 4, kv_heads 0, head_dim 16: all must be positive");
    oq_sdpa_config_default(&c);
    c.mask = OQ_MASK_SEQLEN;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "mask seqlen needs format attention24");
    oq_sdpa_config_default(&c);
    c.static_batch = 2;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "static_batch 2, static_seq 0");
    oq_sdpa_config_default(&c);
    c.layout = 5;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "layout 5: use 3");
    oq_sdpa_config_default(&c);
    c.attention_dtype = OQ_DTYPE_FLOAT64;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "attention_dtype float64");
    oq_sdpa_config_default(&c); /* float16 I/O: float16 attention, unmasked */
    c.io_dtype = OQ_DTYPE_FLOAT16;
    c.mask = OQ_MASK_NONE;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "io_dtype float16 needs attention_dtype float16 and mask none");
    c.attention_dtype = OQ_DTYPE_FLOAT16;
    c.mask = OQ_MASK_AUTO;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    c.mask = OQ_MASK_NONE;
    c.io_dtype = OQ_DTYPE_INT64;
    assert_int_equal(oq_export_sdpa(&c, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "io_dtype int64");
    assert_null(g);

    oq_encoder_config e;
    oq_encoder_config_default(&e);
    e.heads = 5;
    oq_encoder_weights *w = NULL;
    assert_int_equal(oq_encoder_weights_random(&e, 0, &w, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "heads 5 does not divide width 32");
    e.heads = 0;
    assert_int_equal(oq_encoder_config_check(&e, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "features 8, width 32, heads 0, layers 2, ffn_width 64");
    oq_encoder_config_default(&e);
    snprintf(e.outputs[1].name, OQ_ENCODER_NAME_MAX, "cls");
    assert_int_equal(oq_encoder_weights_random(&e, 0, &w, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "twice"));

    oq_encoder_config_default(&e);
    assert_int_equal(oq_encoder_weights_random(&e, 0, &w, &err), OQ_OK);
    oq_encoder_export x = {OQ_ATTN_DECOMPOSED, OQ_MASK_NONE, OQ_DTYPE_FLOAT32, 0, 0};
    assert_int_equal(oq_export_encoder(w, &x, &g, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "mask none: the encoder always takes a mask");
    oq_encoder_weights_free(w);
}

static void test_weights_from_tensors(void **state)
{
    (void)state;
    oq_encoder_weights *w = test_weights(), *w2 = NULL;
    oq_err err = {0};
    const oq_tensor *const *t = (const oq_tensor *const *)w->t;
    assert_int_equal(oq_encoder_weights_from_tensors(t, w->n, 3, &w2, &err), OQ_OK);
    assert_int_equal(w2->cfg.layers, 2);
    assert_int_equal(w2->cfg.ffn_width, 40);
    assert_int_equal(w2->cfg.n_outputs, 2);
    assert_string_equal(w2->cfg.outputs[1].name, "reg");
    for (size_t i = 0; i < w->n; i++)
        assert_memory_equal(w->t[i]->data, w2->t[i]->data, oq_tensor_nbytes(w->t[i]));
    oq_encoder_weights_free(w2);

    /* Same seed, same bits; another seed, other bits. */
    oq_encoder_weights *w3 = test_weights(), *w4;
    assert_memory_equal(w->t[0]->data, w3->t[0]->data, oq_tensor_nbytes(w->t[0]));
    assert_int_equal(oq_encoder_weights_random(&w->cfg, 8, &w4, NULL), OQ_OK);
    assert_memory_not_equal(w->t[0]->data, w4->t[0]->data, oq_tensor_nbytes(w->t[0]));
    oq_encoder_weights_free(w3);
    oq_encoder_weights_free(w4);

    /* Missing one (drop the last), wrong shape, extra name, heads not dividing. */
    assert_int_equal(oq_encoder_weights_from_tensors(t, w->n - 1, 3, &w2, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "heads.reg.bias"));
    oq_tensor *bad;
    int64_t shape[1] = {7};
    assert_int_equal(oq_tensor_create(&bad, OQ_DTYPE_FLOAT32, 1, shape, "embed.bias", NULL), OQ_OK);
    const oq_tensor **mod = calloc(w->n + 1, sizeof *mod);
    memcpy(mod, t, w->n * sizeof *mod);
    mod[1] = bad;
    assert_int_equal(oq_encoder_weights_from_tensors(mod, w->n, 3, &w2, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "'embed.bias' has shape [7], expected [24]"));
    mod[1] = t[1];
    oq_tensor_set_name(bad, "blocks.0.extra", NULL);
    mod[w->n] = bad;
    assert_int_equal(oq_encoder_weights_from_tensors(mod, w->n + 1, 3, &w2, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "blocks.0.extra"));
    assert_int_equal(oq_encoder_weights_from_tensors(t, w->n, 5, &w2, &err), OQ_ERR_INVALID_ARG);
    assert_fields_named(&err, "heads 5 does not divide width 24");
    assert_null(w2);
    free(mod);
    oq_tensor_free(bad);
    oq_encoder_weights_free(w);
}

static void test_reference_checks_inputs(void **state)
{
    (void)state;
    oq_encoder_weights *w = test_weights();
    int64_t fs[3] = {2, 4, 5}, len[2] = {4, 2};
    oq_tensor *f = rand_tensor("features", 3, fs), *m = make_mask(2, 4, len);
    oq_tensor *out[2] = {0};
    oq_err err = {0};
    ((float *)m->data)[4 + 3] = 1.0f; /* a hole in event 1 */
    assert_int_equal(oq_encoder_ref_forward(w, f, m, out, &err), OQ_ERR_MASK);
    assert_non_null(strstr(err.msg, "event 1"));
    assert_null(out[0]);
    oq_tensor_free(f);
    fs[2] = 6;
    f = rand_tensor("features", 3, fs);
    assert_int_equal(oq_encoder_ref_forward(w, f, m, out, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "[B, L, 5]"));
    oq_tensor_free(f);
    oq_tensor_free(m);
    oq_encoder_weights_free(w);
}

static void test_doc_strings(void **state)
{
    (void)state;
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    c.attention_dtype = OQ_DTYPE_FLOAT16;
    c.head_dim = 32;
    oq_graph *g;
    assert_int_equal(oq_export_sdpa(&c, &g, NULL), OQ_OK);
    uint8_t *buf;
    size_t n;
    assert_int_equal(oq_graph_serialize(g, &buf, &n, NULL), OQ_OK);
    oq_graph_free(g);
    /* The doc string is stored verbatim in the protobuf. */
    const char *needle = "scaled by the power of two 0.125 before the dot product";
    int found = 0;
    for (size_t i = 0; i + strlen(needle) <= n && !found; i++)
        found = !memcmp(buf + i, needle, strlen(needle));
    free(buf);
    assert_true(found);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoder_matches_reference),
        cmocka_unit_test(test_encoder_padding_isolation),
        cmocka_unit_test(test_static_model_refuses_other_shapes),
        cmocka_unit_test(test_sdpa_matches_reference),
        cmocka_unit_test(test_sdpa_float16_io),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_weights_from_tensors),
        cmocka_unit_test(test_reference_checks_inputs),
        cmocka_unit_test(test_doc_strings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
