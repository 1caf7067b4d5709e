/* Float64 forward pass of the exported encoder (reference.h).
 *
 * The valid rows of every event of a batch are stacked into one [N, W] matrix
 * (padding never enters), so each step is one parallel phase over the whole
 * batch: LayerNorm over row blocks, matrix products over (48-row tile, 32-column
 * panel) tiles, attention over (event, head, 8 query rows) blocks. One team of
 * threads runs all phases of a run. Tiles and blocks depend only on the shapes,
 * so the thread count never changes a bit of the result (reference-impl.h). */
#include "ortqual/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/mask.h"
#include "reference/reference-impl.h"
#include "status/args-impl.h"

/* Rows per LayerNorm task. */
#define LN_ROWS 64

typedef struct layer {
    double *ln1_scale, *ln1_bias, *ln2_scale, *ln2_bias;
    oq_ref_packed qkv, wo, w1, w2; /* qkv: wq | wk | wv side by side */
} layer;

/* A buffer kept between runs, grown when a batch needs more. */
typedef struct grown {
    double *p;
    int64_t cap;
} grown;

/* The working buffers of a run (see fwd for what each holds). */
enum { WK_X, WK_H, WK_A, WK_QKV, WK_O, WK_F, WK_Y, WK_KP, WK_KMAX, WK_VP, WK_SCRATCH, WK_COUNT };

struct oq_encoder_ref {
    oq_encoder_config cfg;
    int threads;
    oq_ref_packed embed, heads; /* heads: every output head side by side */
    layer *layers;
    double *final_scale, *final_bias;
    /* Kept from run to run: fresh memory costs a page fault and the kernel's
     * zeroing per page at its first touch, on every run. */
    grown work[WK_COUNT];
};

/* One forward call's shapes and buffers (the buffers belong to the object). */
typedef struct fwd {
    const oq_encoder_ref *r;
    int64_t B, L, N;
    const int64_t *len;
    int64_t *row0;     /* [B+1] first stacked row of each event */
    int64_t *kv0;      /* [B+1] offset of each event's packed K (and V) in kp (vp) */
    int64_t *blk0;     /* [B+1] first attention block of each event */
    /* Stacked rows: x [N,F] features, h [N,W] the residual stream, a [N,W] a
     * LayerNorm's output, qkv [N,3W], o [N,W] attention, f [N,FF] feed-forward
     * hidden, y [N, sum K] the heads; kp, vp packed K and V per (event, head), kmax
     * [B, heads, head_dim] the bound of each head's keys (oq_ref_keys_bound). */
    double *x, *h, *a, *qkv, *o, *f, *y, *kp, *kmax, *vp;
    double *scratch;   /* per thread: attention scores and outputs */
    size_t per_thread;
    int64_t ld_acc;    /* round_up(head_dim, 16): a row of packed V, of attention output */
    const oq_tensor *features;
    oq_tensor **out;
} fwd;

static double *vec(const oq_tensor *t)
{
    const int64_t n = oq_tensor_numel(t);
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    if (v) oq_ref_load_row(t, 0, n, v);
    return v;
}

void oq_encoder_ref_free(oq_encoder_ref *r)
{
    if (!r) return;
    oq_ref_packed_free(&r->embed);
    oq_ref_packed_free(&r->heads);
    for (int i = 0; r->layers && i < r->cfg.layers; i++) {
        layer *l = &r->layers[i];
        free(l->ln1_scale), free(l->ln1_bias), free(l->ln2_scale), free(l->ln2_bias);
        oq_ref_packed_free(&l->qkv);
        oq_ref_packed_free(&l->wo);
        oq_ref_packed_free(&l->w1);
        oq_ref_packed_free(&l->w2);
    }
    free(r->layers);
    free(r->final_scale);
    free(r->final_bias);
    for (int i = 0; i < WK_COUNT; i++) free(r->work[i].p);
    free(r);
}

/* t: ln1.scale, ln1.bias, wq, bq, wk, bk, wv, bv, wo, bo, ln2.scale, ln2.bias, w1, b1, w2, b2 */
static oq_status load_layer(layer *l, oq_tensor *const *t, oq_err *err)
{
    const oq_tensor *qkv_w[3] = {t[2], t[4], t[6]}, *qkv_b[3] = {t[3], t[5], t[7]};
    oq_status st;
    if ((st = oq_ref_pack_weights(&l->qkv, qkv_w, qkv_b, 3, err)) ||
        (st = oq_ref_pack_weights(&l->wo, (const oq_tensor *const *)&t[8],
                                  (const oq_tensor *const *)&t[9], 1, err)) ||
        (st = oq_ref_pack_weights(&l->w1, (const oq_tensor *const *)&t[12],
                                  (const oq_tensor *const *)&t[13], 1, err)) ||
        (st = oq_ref_pack_weights(&l->w2, (const oq_tensor *const *)&t[14],
                                  (const oq_tensor *const *)&t[15], 1, err)))
        return st;
    l->ln1_scale = vec(t[0]), l->ln1_bias = vec(t[1]);
    l->ln2_scale = vec(t[10]), l->ln2_bias = vec(t[11]);
    if (!l->ln1_scale || !l->ln1_bias || !l->ln2_scale || !l->ln2_bias)
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory loading the encoder reference");
    return OQ_OK;
}

static oq_status load_weights(oq_encoder_ref *r, const oq_encoder_weights *w, oq_err *err)
{
    const oq_encoder_config *c = &w->cfg;
    oq_tensor *const *t = w->t;
    const size_t fin = 2 + 16 * (size_t)c->layers, heads = fin + 2;
    /* w->t is in the documented order (export.h): embed, 16 per block, final_ln, heads */
    OQ_ASSERT(w->n == heads + 2 * (size_t)c->n_outputs);
    oq_status st = oq_ref_pack_weights(&r->embed, (const oq_tensor *const *)&t[0],
                                       (const oq_tensor *const *)&t[1], 1, err);
    for (int i = 0; !st && i < c->layers; i++) st = load_layer(&r->layers[i], t + 2 + 16 * i, err);
    if (st) return st;
    const oq_tensor *hw[OQ_ENCODER_MAX_OUTPUTS], *hb[OQ_ENCODER_MAX_OUTPUTS];
    for (int i = 0; i < c->n_outputs; i++) hw[i] = t[heads + 2 * i], hb[i] = t[heads + 2 * i + 1];
    if ((st = oq_ref_pack_weights(&r->heads, hw, hb, c->n_outputs, err))) return st;
    r->final_scale = vec(t[fin]);
    r->final_bias = vec(t[fin + 1]);
    if (!r->final_scale || !r->final_bias)
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory loading the encoder reference");
    return OQ_OK;
}

oq_status oq_encoder_ref_create(const oq_encoder_weights *w, int threads, oq_encoder_ref **out,
                                oq_err *err)
{
    OQ_NEED(err, w);
    OQ_NEED(err, out);
    *out = NULL;
    oq_status st = oq_ref_threads_check(threads, "encoder reference", err);
    if (st) return st;
    oq_encoder_ref *r = calloc(1, sizeof *r);
    if (!r || !(r->layers = calloc((size_t)(w->cfg.layers ? w->cfg.layers : 1), sizeof *r->layers))) {
        free(r);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory creating the encoder reference");
    }
    r->cfg = w->cfg;
    r->threads = threads;
    if ((st = load_weights(r, w, err))) {
        oq_encoder_ref_free(r);
        return st;
    }
    *out = r;
    return OQ_OK;
}

int oq_encoder_ref_threads(const oq_encoder_ref *r)
{
    if (!r) return 0;
    return oq_ref_threads(r->threads, INT64_MAX);
}

/* ---- the phases: each runs its tasks on the team and ends when all are done ---- */

typedef struct gemm_job {
    const oq_ref_packed *w;
    const double *x;
    int64_t ldx, n;
    double *y;
    int64_t ldy;
    oq_ref_epilogue ep;
} gemm_job;

static void gemm_task(void *p, int64_t tile, int thread)
{
    const gemm_job *g = p;
    (void)thread;
    oq_ref_gemm_tile(g->w, tile, g->x, g->ldx, g->n, g->y, g->ldy, g->ep);
}

static void gemm(oq_ref_team *team, const oq_ref_packed *w, const double *x, int64_t ldx,
                 int64_t n, double *y, int64_t ldy, oq_ref_epilogue ep)
{
    gemm_job g = {w, x, ldx, n, y, ldy, ep};
    oq_ref_team_run(team, oq_ref_gemm_tiles(w, n), gemm_task, &g);
}

typedef struct ln_job {
    const fwd *f;
    const double *x, *scale, *bias;
    double *y;
} ln_job;

/* y = LayerNorm(x) on LN_ROWS rows: population variance, (x - mean) / sqrt(var + eps) * scale + bias. */
static void ln_task(void *p, int64_t blk, int thread)
{
    const ln_job *j = p;
    (void)thread;
    const int64_t W = j->f->r->cfg.width;
    const double eps = j->f->r->cfg.ln_epsilon;
    for (int64_t i = blk * LN_ROWS; i < j->f->N && i < (blk + 1) * LN_ROWS; i++) {
        const double *xr = j->x + i * W;
        double mean = 0, var = 0;
        for (int64_t k = 0; k < W; k++) mean += xr[k];
        mean /= (double)W;
        for (int64_t k = 0; k < W; k++) var += (xr[k] - mean) * (xr[k] - mean);
        var /= (double)W;
        const double inv = 1.0 / sqrt(var + eps);
        for (int64_t k = 0; k < W; k++) j->y[i * W + k] = (xr[k] - mean) * inv * j->scale[k] + j->bias[k];
    }
}

static void layer_norm(oq_ref_team *team, const fwd *f, const double *x, const double *scale,
                       const double *bias, double *y)
{
    ln_job j = {f, x, scale, bias, y};
    oq_ref_team_run(team, (f->N + LN_ROWS - 1) / LN_ROWS, ln_task, &j);
}

/* Event b's valid feature rows, stacked, as float64. */
static void gather(void *p, int64_t b, int thread)
{
    const fwd *f = p;
    (void)thread;
    const int64_t F = f->r->cfg.features;
    for (int64_t i = 0; i < f->len[b]; i++)
        oq_ref_load_row(f->features, (b * f->L + i) * F, F, f->x + (f->row0[b] + i) * F);
}

/* (event, head): scale Q in place by log2(e)/sqrt(head_dim) (the kernel's logits are
 * base 2), pack K and V for the kernels. */
static void pack_heads(void *p, int64_t bh, int thread)
{
    const fwd *f = p;
    (void)thread;
    const int64_t W = f->r->cfg.width, H = f->r->cfg.heads, dh = W / H, W3 = 3 * W;
    const int64_t b = bh / H, h = bh % H, n = f->len[b];
    const double scale = OQ_REF_LOG2E / sqrt((double)dh);
    double *rows = f->qkv + f->row0[b] * W3 + h * dh;
    for (int64_t i = 0; i < n; i++)
        for (int64_t d = 0; d < dh; d++) rows[i * W3 + d] *= scale;
    double *kp = f->kp + f->kv0[b] * dh + h * oq_ref_round_up(n, OQ_REF_KEYS) * dh;
    oq_ref_pack_keys(rows + W, W3, n, dh, kp);
    oq_ref_keys_bound(kp, n, dh, f->kmax + bh * dh);
    oq_ref_pack_values(rows + 2 * W, W3, n, dh, n, f->vp + f->kv0[b] * f->ld_acc + h * n * f->ld_acc);
}

/* One block of 8 query rows of one (event, head): o = softmax(q k^T) v among the valid elements. */
static void attention(void *p, int64_t t, int thread)
{
    const fwd *f = p;
    const int64_t W = f->r->cfg.width, H = f->r->cfg.heads, dh = W / H, W3 = 3 * W;
    double *scratch = f->scratch + (size_t)thread * f->per_thread;
    double *out = scratch + OQ_REF_ATTEND_SCRATCH;
    int64_t b = 0;
    while (t >= f->blk0[b + 1]) b++;
    const int64_t n = f->len[b], per_head = (n + OQ_REF_ROWS - 1) / OQ_REF_ROWS;
    const int64_t h = (t - f->blk0[b]) / per_head;
    const int64_t i0 = (t - f->blk0[b]) % per_head * OQ_REF_ROWS;
    oq_ref_block blk = {
        .q = f->qkv + (f->row0[b] + i0) * W3 + h * dh, .ldq = W3,
        .rows = (int)(n - i0 < OQ_REF_ROWS ? n - i0 : OQ_REF_ROWS),
        .kp = f->kp + f->kv0[b] * dh + h * oq_ref_round_up(n, OQ_REF_KEYS) * dh,
        .kmax = f->kmax + (b * H + h) * dh,
        .vp = f->vp + f->kv0[b] * f->ld_acc + h * n * f->ld_acc, .D = dh, .T = n, .Dv = dh};
    for (int r = 0; r < OQ_REF_ROWS; r++) blk.end[r] = n;
    oq_ref_attend(&blk, scratch, out);
    for (int r = 0; r < blk.rows; r++)
        memcpy(f->o + (f->row0[b] + i0 + r) * W + h * dh, out + r * f->ld_acc,
               sizeof(double) * (size_t)dh);
}

/* Event b's rows of the stacked head outputs y into the [B, L, K] tensors (padding stays 0). */
static void scatter(void *p, int64_t b, int thread)
{
    const fwd *f = p;
    (void)thread;
    const oq_encoder_config *c = &f->r->cfg;
    const int64_t ky = f->r->heads.m;
    for (int o = 0, col = 0; o < c->n_outputs; col += c->outputs[o].dim, o++) {
        const int64_t K = c->outputs[o].dim;
        double *dst = (double *)f->out[o]->data + b * f->L * K;
        for (int64_t i = 0; i < f->len[b]; i++)
            memcpy(dst + i * K, f->y + (f->row0[b] + i) * ky + col, sizeof(double) * (size_t)K);
    }
}

static void forward(oq_ref_team *team, fwd *f)
{
    const oq_encoder_ref *r = f->r;
    const int64_t F = r->cfg.features, W = r->cfg.width, FF = r->cfg.ffn_width, N = f->N;
    oq_ref_team_run(team, f->B, gather, f);
    gemm(team, &r->embed, f->x, F, N, f->h, W, OQ_REF_STORE);
    for (int i = 0; i < r->cfg.layers; i++) {
        const layer *l = &r->layers[i];
        layer_norm(team, f, f->h, l->ln1_scale, l->ln1_bias, f->a);
        gemm(team, &l->qkv, f->a, W, N, f->qkv, 3 * W, OQ_REF_STORE);
        oq_ref_team_run(team, f->B * r->cfg.heads, pack_heads, f);
        oq_ref_team_run(team, f->blk0[f->B], attention, f);
        gemm(team, &l->wo, f->o, W, N, f->h, W, OQ_REF_ADD);
        layer_norm(team, f, f->h, l->ln2_scale, l->ln2_bias, f->a);
        gemm(team, &l->w1, f->a, W, N, f->f, FF, OQ_REF_ELU);
        gemm(team, &l->w2, f->f, FF, N, f->h, W, OQ_REF_ADD);
    }
    layer_norm(team, f, f->h, r->final_scale, r->final_bias, f->a);
    gemm(team, &r->heads, f->a, W, N, f->y, r->heads.m, OQ_REF_STORE);
    oq_ref_team_run(team, f->B, scatter, f);
}

/* ---- one call -------------------------------------------------------------- */

static void fwd_free(fwd *f)
{
    free(f->row0), free(f->kv0), free(f->blk0);
}

/* Buffer `which` of the object with room for rows * cols doubles (grown by a
 * quarter more than asked, so slightly larger batches do not regrow it). */
static double *buf(oq_encoder_ref *r, int which, int64_t rows, int64_t cols)
{
    grown *g = &r->work[which];
    const int64_t n = rows * cols;
    if (n <= g->cap && g->p) return g->p;
    free(g->p);
    g->cap = n + n / 4;
    g->p = oq_ref_alloc(g->cap);
    return g->p;
}

/* Offsets of the stacked rows, packed K/V and attention blocks; every buffer. */
static int fwd_alloc(oq_encoder_ref *r, fwd *f, int nt)
{
    const oq_encoder_config *c = &f->r->cfg;
    const int64_t W = c->width, dh = W / c->heads;
    f->row0 = calloc((size_t)f->B + 1, sizeof *f->row0);
    f->kv0 = calloc((size_t)f->B + 1, sizeof *f->kv0);
    f->blk0 = calloc((size_t)f->B + 1, sizeof *f->blk0);
    if (!f->row0 || !f->kv0 || !f->blk0) return -1;
    for (int64_t b = 0; b < f->B; b++) {
        const int64_t n = f->len[b];
        f->row0[b + 1] = f->row0[b] + n;
        f->kv0[b + 1] = f->kv0[b] + c->heads * oq_ref_round_up(n, OQ_REF_KEYS);
        f->blk0[b + 1] = f->blk0[b] + c->heads * ((n + OQ_REF_ROWS - 1) / OQ_REF_ROWS);
    }
    f->N = f->row0[f->B];
    f->ld_acc = oq_ref_round_up(dh, OQ_REF_COLS);
    f->per_thread = (size_t)(OQ_REF_ATTEND_SCRATCH + OQ_REF_ROWS * f->ld_acc);
    const int64_t N = f->N, ff = c->ffn_width;
    f->x = buf(r, WK_X, N, c->features), f->h = buf(r, WK_H, N, W), f->a = buf(r, WK_A, N, W);
    f->qkv = buf(r, WK_QKV, N, 3 * W), f->o = buf(r, WK_O, N, W), f->f = buf(r, WK_F, N, ff);
    f->y = buf(r, WK_Y, N, r->heads.m);
    f->kp = buf(r, WK_KP, f->kv0[f->B], dh), f->vp = buf(r, WK_VP, f->kv0[f->B], f->ld_acc);
    f->kmax = buf(r, WK_KMAX, f->B * c->heads, dh);
    f->scratch = buf(r, WK_SCRATCH, nt, (int64_t)f->per_thread);
    return f->x && f->h && f->a && f->qkv && f->o && f->f && f->y && f->kp && f->kmax && f->vp &&
                   f->scratch ? 0 : -1;
}

static oq_status check_inputs(const oq_encoder_config *c, const oq_tensor *features,
                              const oq_tensor *mask, int64_t *lengths, oq_err *err)
{
    char a[64];
    if (features->ndim != 3 || features->shape[2] != c->features)
        return oq_err_set(err, OQ_ERR_SHAPE, "features: shape %s, expected [B, L, %d]",
                          oq_shape_str(features, a, sizeof a), (int)c->features);
    if (!oq_dtype_is_float(features->dtype))
        return oq_err_set(err, OQ_ERR_SHAPE, "features: dtype %s is not a float type",
                          oq_dtype_name(features->dtype));
    return oq_mask_check(mask, features, lengths, err); /* rank, shape against features, contract */
}

static oq_status make_outputs(const oq_encoder_config *c, int64_t B, int64_t L, oq_tensor **out,
                              oq_err *err)
{
    for (int i = 0; i < c->n_outputs; i++) {
        const int64_t shape[3] = {B, L, c->outputs[i].dim};
        oq_status st = oq_tensor_create(&out[i], OQ_DTYPE_FLOAT64, 3, shape, c->outputs[i].name, err);
        if (st) return st;
    }
    return OQ_OK;
}

/* Threads that can find work: one per 48-row tile of the widest product. */
static int64_t max_tasks(const oq_encoder_ref *r, int64_t rows)
{
    const oq_ref_packed *w = r->cfg.layers > 0 ? &r->layers[0].qkv : &r->embed;
    return oq_ref_gemm_tiles(w, rows);
}

static oq_status run_checked(oq_encoder_ref *r, fwd *f, oq_tensor **outputs, oq_err *err)
{
    const oq_encoder_config *c = &r->cfg;
    int64_t rows = 0;
    for (int64_t b = 0; b < f->B; b++) rows += f->len[b];
    oq_ref_team *team;
    oq_status st = oq_ref_team_create(oq_ref_threads(r->threads, max_tasks(r, rows)), &team, err);
    if (st) return st;
    oq_tensor *out[OQ_ENCODER_MAX_OUTPUTS] = {0};
    if (fwd_alloc(r, f, oq_ref_team_size(team)))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory in the encoder reference (%lld rows)",
                        (long long)rows);
    if (!st) st = make_outputs(c, f->B, f->L, out, err);
    if (!st) {
        f->out = out;
        forward(team, f);
    }
    oq_ref_team_free(team);
    for (int i = 0; i < c->n_outputs; i++) {
        if (st) oq_tensor_free(out[i]);
        else outputs[i] = out[i];
    }
    return st;
}

oq_status oq_encoder_ref_run(oq_encoder_ref *r, const oq_tensor *features,
                             const oq_tensor *mask, oq_tensor **outputs, oq_err *err)
{
    OQ_NEED(err, r);
    OQ_NEED(err, features);
    OQ_NEED(err, mask);
    OQ_NEED(err, outputs);
    fwd f = {.r = r, .features = features};
    f.B = features->ndim == 3 ? features->shape[0] : 0;
    int64_t *len = calloc((size_t)(f.B ? f.B : 1), sizeof *len);
    if (!len) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = check_inputs(&r->cfg, features, mask, len, err);
    if (!st) {
        f.L = features->shape[1];
        f.len = len;
        st = run_checked(r, &f, outputs, err);
    }
    fwd_free(&f);
    free(len);
    return st;
}

oq_status oq_encoder_ref_forward(const oq_encoder_weights *w, const oq_tensor *features,
                                 const oq_tensor *mask, oq_tensor **outputs, oq_err *err)
{
    OQ_NEED(err, w);
    OQ_NEED(err, features);
    OQ_NEED(err, mask);
    OQ_NEED(err, outputs);
    oq_encoder_ref *r;
    oq_status st = oq_encoder_ref_create(w, 0, &r, err);
    if (st) return st;
    st = oq_encoder_ref_run(r, features, mask, outputs, err);
    oq_encoder_ref_free(r);
    return st;
}
