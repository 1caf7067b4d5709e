/* Float64 forward pass of the exported encoder, one event at a time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/reference.h"
#include "ortqual/mask.h"

/* A weight as doubles (converted once per call). */
typedef struct dmat {
    double *v;
    int64_t rows, cols; /* cols 1 for vectors */
} dmat;

static int load(const oq_tensor *t, dmat *m)
{
    int64_t n = oq_tensor_numel(t);
    m->v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!m->v) return -1;
    for (int64_t k = 0; k < n; k++) m->v[k] = oq_tensor_get_f64(t, k);
    m->rows = t->shape[0];
    m->cols = t->ndim == 2 ? t->shape[1] : 1;
    return 0;
}

/* y[n, cols] = x[n, rows] @ W + b */
static void linear(const double *x, int64_t n, const dmat *W, const dmat *b, double *y)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < W->cols; j++) {
            double s = b->v[j];
            for (int64_t k = 0; k < W->rows; k++) s += x[i * W->rows + k] * W->v[k * W->cols + j];
            y[i * W->cols + j] = s;
        }
}

static void layer_norm(const double *x, int64_t n, int64_t w, const dmat *s, const dmat *b,
                       double eps, double *y)
{
    for (int64_t i = 0; i < n; i++) {
        const double *r = x + i * w;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < w; j++) mean += r[j];
        mean /= (double)w;
        for (int64_t j = 0; j < w; j++) var += (r[j] - mean) * (r[j] - mean);
        var /= (double)w;
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t j = 0; j < w; j++) y[i * w + j] = (r[j] - mean) * inv * s->v[j] + b->v[j];
    }
}

/* Multi-head attention among the n valid elements of one event. */
static void attention(const double *q, const double *k, const double *v, int64_t n, int64_t w,
                      int32_t heads, double *out, double *p)
{
    int64_t d = w / heads;
    double scale = 1.0 / sqrt((double)d);
    for (int32_t h = 0; h < heads; h++)
        for (int64_t i = 0; i < n; i++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t c = 0; c < d; c++) s += q[i * w + h * d + c] * k[j * w + h * d + c];
                p[j] = s * scale;
                if (p[j] > mx) mx = p[j];
            }
            for (int64_t j = 0; j < n; j++) sum += (p[j] = exp(p[j] - mx));
            for (int64_t c = 0; c < d; c++) {
                double acc = 0;
                for (int64_t j = 0; j < n; j++) acc += p[j] * v[j * w + h * d + c];
                out[i * w + h * d + c] = acc / sum;
            }
        }
}

typedef struct work {
    double *h, *a, *q, *k, *v, *o, *f, *p;
} work;

static void block(const oq_encoder_weights *w, dmat *m, int64_t n, work *s)
{
    const oq_encoder_config *c = &w->cfg;
    int64_t W = c->width, FF = c->ffn_width;
    /* m: ln1.scale, ln1.bias, wq, bq, wk, bk, wv, bv, wo, bo, ln2.scale, ln2.bias, w1, b1, w2, b2 */
    layer_norm(s->h, n, W, &m[0], &m[1], c->ln_epsilon, s->a);
    linear(s->a, n, &m[2], &m[3], s->q);
    linear(s->a, n, &m[4], &m[5], s->k);
    linear(s->a, n, &m[6], &m[7], s->v);
    attention(s->q, s->k, s->v, n, W, c->heads, s->o, s->p);
    linear(s->o, n, &m[8], &m[9], s->a);
    for (int64_t i = 0; i < n * W; i++) s->h[i] += s->a[i];
    layer_norm(s->h, n, W, &m[10], &m[11], c->ln_epsilon, s->a);
    linear(s->a, n, &m[12], &m[13], s->f);
    for (int64_t i = 0; i < n * FF; i++) s->f[i] = s->f[i] > 0 ? s->f[i] : expm1(s->f[i]);
    linear(s->f, n, &m[14], &m[15], s->a);
    for (int64_t i = 0; i < n * W; i++) s->h[i] += s->a[i];
}

static oq_status check_inputs(const oq_encoder_weights *w, const oq_tensor *features,
                              const oq_tensor *mask, int64_t *lengths, oq_err *err)
{
    char a[64];
    if (features->ndim != 3 || features->shape[2] != w->cfg.features)
        return oq_err_set(err, OQ_ERR_SHAPE, "features: shape %s, expected [B, L, %d]",
                          oq_shape_str(features, a, sizeof a), (int)w->cfg.features);
    if (!oq_dtype_is_float(features->dtype))
        return oq_err_set(err, OQ_ERR_SHAPE, "features: dtype %s is not a float type",
                          oq_dtype_name(features->dtype));
    return oq_mask_check(mask, features, lengths, err); /* rank, shape against features, contract */
}

oq_status oq_encoder_ref_forward(const oq_encoder_weights *w, const oq_tensor *features,
                                 const oq_tensor *mask, oq_tensor **outputs, oq_err *err)
{
    const oq_encoder_config *c = &w->cfg;
    int64_t B = features->ndim == 3 ? features->shape[0] : 0;
    int64_t *len = calloc((size_t)(B ? B : 1), sizeof *len);
    if (!len) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = check_inputs(w, features, mask, len, err);
    if (st) {
        free(len);
        return st;
    }
    int64_t L = features->shape[1], F = c->features, W = c->width;
    int64_t FF = c->ffn_width > W ? c->ffn_width : W, n_layer_w = 16 * (int64_t)c->layers;
    int64_t nw = 4 + n_layer_w + 2 * c->n_outputs;
    dmat *m = calloc((size_t)nw, sizeof *m);
    work s = {0};
    oq_tensor *out[OQ_ENCODER_MAX_OUTPUTS] = {0};
    size_t lw = (size_t)(L ? L : 1);
    int bad = !m;
    if (!bad) {
        /* w->t is in the documented order (export.h): embed, 16 per block, final_ln, heads */
        OQ_ASSERT((size_t)nw == w->n);
        for (size_t i = 0; i < w->n && !bad; i++) bad |= load(w->t[i], &m[i]);
        double **bufs[] = {&s.h, &s.a, &s.q, &s.k, &s.v, &s.o, &s.f};
        for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
            bad |= !(*bufs[i] = malloc(sizeof(double) * lw * (size_t)(FF > F ? FF : F)));
        bad |= !(s.p = malloc(sizeof(double) * lw));
    }
    for (int i = 0; i < c->n_outputs && !bad; i++) {
        int64_t shape[3] = {B, L, c->outputs[i].dim};
        bad |= oq_tensor_create(&out[i], OQ_DTYPE_FLOAT64, 3, shape, c->outputs[i].name, NULL) != OQ_OK;
    }
    for (int64_t b = 0; b < B && !bad; b++) {
        int64_t n = len[b];
        for (int64_t i = 0; i < n * F; i++) s.f[i] = oq_tensor_get_f64(features, b * L * F + i);
        linear(s.f, n, &m[0], &m[1], s.h);
        for (int i = 0; i < c->layers; i++) block(w, &m[2 + 16 * i], n, &s);
        layer_norm(s.h, n, W, &m[2 + n_layer_w], &m[3 + n_layer_w], c->ln_epsilon, s.a);
        for (int i = 0; i < c->n_outputs; i++) {
            int64_t K = c->outputs[i].dim;
            /* Valid rows first; the padded rest stays the zeros of creation. */
            linear(s.a, n, &m[4 + n_layer_w + 2 * i], &m[5 + n_layer_w + 2 * i],
                   (double *)out[i]->data + b * L * K);
        }
    }
    for (int64_t i = 0; i < nw && m; i++) free(m[i].v);
    free(m);
    free(s.h), free(s.a), free(s.q), free(s.k), free(s.v), free(s.o), free(s.f), free(s.p);
    free(len);
    if (bad) {
        for (int i = 0; i < c->n_outputs; i++) oq_tensor_free(out[i]);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory in the encoder reference");
    }
    for (int i = 0; i < c->n_outputs; i++) outputs[i] = out[i];
    return OQ_OK;
}
