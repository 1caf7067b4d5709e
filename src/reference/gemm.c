/* float64 matrix products of the encoder reference: y = x @ w + bias, w packed.
 *
 * The micro-kernel holds a 6-row by 32-column block of y in 24 vector
 * registers; per k it loads four vectors of the weight panel and broadcasts
 * six x values (24 FMAs for 10 loads). A 48-row tile reuses its panel (K * 256
 * bytes) from cache eight times. Partial blocks (the last rows of x, the last
 * panel's padding columns) are computed in full and stored in part, so every
 * element goes through the same arithmetic. */
#include <math.h>
#include <stdlib.h>

#include "reference/reference-impl.h"
#include "reference/vec-impl.h"

#define MR 6
#define NV (OQ_REF_PANEL / 8)

oq_status oq_ref_pack_weights(oq_ref_packed *p, const oq_tensor *const *w,
                              const oq_tensor *const *b, int n, oq_err *err)
{
    int64_t m = 0;
    for (int i = 0; i < n; i++) m += w[i]->shape[1];
    p->k = w[0]->shape[0];
    p->m = m;
    p->panels = oq_ref_round_up(m, OQ_REF_PANEL) / OQ_REF_PANEL;
    const size_t cols = (size_t)(p->panels * OQ_REF_PANEL);
    p->w = calloc(cols * (size_t)(p->k ? p->k : 1), sizeof *p->w);
    p->bias = calloc(cols, sizeof *p->bias);
    if (!p->w || !p->bias) {
        oq_ref_packed_free(p);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory packing reference weights");
    }
    int64_t col = 0;
    for (int i = 0; i < n; i++) {
        const int64_t mi = w[i]->shape[1];
        for (int64_t j = 0; j < mi; j++, col++) {
            double *panel = p->w + (col / OQ_REF_PANEL) * p->k * OQ_REF_PANEL + col % OQ_REF_PANEL;
            for (int64_t k = 0; k < p->k; k++)
                panel[k * OQ_REF_PANEL] = oq_tensor_get_f64(w[i], k * mi + j);
            p->bias[col] = oq_tensor_get_f64(b[i], j);
        }
    }
    return OQ_OK;
}

void oq_ref_packed_free(oq_ref_packed *p)
{
    free(p->w);
    free(p->bias);
    p->w = p->bias = NULL;
}

int64_t oq_ref_gemm_tiles(const oq_ref_packed *w, int64_t n)
{
    return (n + OQ_REF_TILE_ROWS - 1) / OQ_REF_TILE_ROWS * w->panels;
}

/* out[r][0..32) = bias + sum_k x_r[k] * panel[k][0..32) for the MR rows x_r. */
OQ_CLONES
static void block(const double *const *x, const double *panel, const double *bias, int64_t K,
                  double *out)
{
    v8d a[MR][NV];
#pragma GCC unroll 8
    for (int c = 0; c < NV; c++) {
        const v8d b = load8(bias + 8 * c);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) a[r][c] = b;
    }
    for (int64_t k = 0; k < K; k++, panel += OQ_REF_PANEL) {
        v8d wv[NV];
#pragma GCC unroll 8
        for (int c = 0; c < NV; c++) wv[c] = load8(panel + 8 * c);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            const v8d xr = splat8(x[r][k]);
#pragma GCC unroll 8
            for (int c = 0; c < NV; c++) a[r][c] += xr * wv[c];
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int c = 0; c < NV; c++) store8(out + r * OQ_REF_PANEL + 8 * c, a[r][c]);
}

static void finish(const double *v, int64_t cols, double *y, oq_ref_epilogue ep)
{
    switch (ep) {
    case OQ_REF_STORE:
        for (int64_t j = 0; j < cols; j++) y[j] = v[j];
        break;
    case OQ_REF_ADD:
        for (int64_t j = 0; j < cols; j++) y[j] += v[j];
        break;
    case OQ_REF_ELU:
        for (int64_t j = 0; j < cols; j++) y[j] = v[j] > 0 ? v[j] : expm1(v[j]);
        break;
    }
}

void oq_ref_gemm_tile(const oq_ref_packed *w, int64_t tile, const double *x, int64_t ldx,
                      int64_t n, double *y, int64_t ldy, oq_ref_epilogue ep)
{
    const int64_t panel = tile % w->panels, r0 = tile / w->panels * OQ_REF_TILE_ROWS;
    const int64_t r1 = r0 + OQ_REF_TILE_ROWS < n ? r0 + OQ_REF_TILE_ROWS : n;
    const int64_t c0 = panel * OQ_REF_PANEL;
    const int64_t cols = w->m - c0 < OQ_REF_PANEL ? w->m - c0 : OQ_REF_PANEL;
    const double *pw = w->w + panel * w->k * OQ_REF_PANEL, *pb = w->bias + c0;
    double out[MR * OQ_REF_PANEL];
    for (int64_t i = r0; i < r1; i += MR) {
        const double *xr[MR];
        for (int r = 0; r < MR; r++) xr[r] = x + (i + r < r1 ? i + r : r1 - 1) * ldx;
        block(xr, pw, pb, w->k, out);
        for (int r = 0; r < MR && i + r < r1; r++)
            finish(out + r * OQ_REF_PANEL, cols, y + (i + r) * ldy + c0, ep);
    }
}
