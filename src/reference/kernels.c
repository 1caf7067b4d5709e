/* float64 attention kernels: K and V packing, scores, the softmax's exp, and
 * oq_ref_attend, which runs a block of query rows over the keys chunk by chunk
 * (scores, bias, online softmax, weighted sums of V).
 *
 * Register blocking: OQ_REF_ROWS query rows by 16 keys (scores) or 16 value
 * columns (weighted sums), 16 accumulators, so each load of K or V feeds eight
 * FMAs. A call for fewer rows repeats the last row and stores only the real
 * ones, so a row's values never depend on how many rows share its call. */
#include <math.h>
#include <string.h>

#include "reference/reference-impl.h"
#include "reference/vec-impl.h"

#define ROWS OQ_REF_ROWS
_Static_assert(OQ_REF_KEYS == 16 && OQ_REF_COLS == 16, "the kernels work on 16 columns");

/* Panels of 16 along one axis of a matrix: dst[(p*n_other + o)*16 + c] =
 * m[i*step + o*step_other] with i = p*16 + c < n, else 0. */
static void pack16(const double *m, int64_t n, int64_t step, int64_t n_other, int64_t step_other,
                   double *dst)
{
    for (int64_t p = 0; p < oq_ref_round_up(n, 16) / 16; p++)
        for (int64_t o = 0; o < n_other; o++, dst += 16)
            for (int64_t c = 0; c < 16; c++) {
                const int64_t i = p * 16 + c;
                dst[c] = i < n ? m[i * step + o * step_other] : 0.0;
            }
}

void oq_ref_pack_keys(const double *k, int64_t ldk, int64_t T, int64_t D, double *kp)
{
    pack16(k, T, ldk, D, 1, kp);
}

void oq_ref_pack_values(const double *v, int64_t ldv, int64_t T, int64_t Dv, double *vp)
{
    pack16(v, Dv, 1, T, ldv, vp);
}

/* Row pointers for a call on `rows` rows: the missing ones repeat the last. */
OQ_INLINE void row_ptrs(const double *base, int64_t ld, int rows, const double *p[ROWS])
{
    for (int r = 0; r < ROWS; r++) p[r] = base + (r < rows ? r : rows - 1) * ld;
}

/* a[r] += sum_{k < K} x[r][k] * p[k][0..16) for the ROWS rows (p: K rows of 16). */
OQ_INLINE void rows_by_16(const double *const *x, const double *p, int64_t K, v8d a[ROWS][2])
{
    for (int64_t k = 0; k < K; k++) {
        const v8d p0 = load8(p + k * 16), p1 = load8(p + k * 16 + 8);
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) {
            const v8d xr = splat8(x[r][k]);
            a[r][0] += xr * p0;
            a[r][1] += xr * p1;
        }
    }
}

/* out[r*ld + 0..16) = a[r] for the first `rows` rows only. */
OQ_INLINE void store_rows(v8d a[ROWS][2], int rows, double *out, int64_t ld)
{
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; r++)
        if (r < rows) {
            store8(out + r * ld, a[r][0]);
            store8(out + r * ld + 8, a[r][1]);
        }
}

OQ_CLONES
void oq_ref_scores(const double *q, int64_t ldq, int rows, const double *kp, int64_t D,
                   int64_t ns, double *s, int64_t lds)
{
    const double *qr[ROWS];
    row_ptrs(q, ldq, rows, qr);
    for (int64_t j = 0; j < ns; j += OQ_REF_KEYS, kp += D * OQ_REF_KEYS) {
        v8d a[ROWS][2];
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) a[r][0] = a[r][1] = splat8(0.0);
        rows_by_16(qr, kp, D, a);
        store_rows(a, rows, s + j, lds);
    }
}

/* 2^(i/16), i = 0..15, correctly rounded, and the relative rounding error of
 * each, (2^(i/16) - table) / table, which the result adds back. */
static const double exp2_16th[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0,
};
static const double exp2_16th_err[16] = {
    0x0.0p+0, 0x1.79aa65d837b6dp-54, -0x1.01b15eaa59348p-55, 0x1.68efde3a8a894p-54,
    0x1.34d754db0abb6p-55, 0x1.59f48a72a4c6dp-55, 0x1.690cebb7aafb0p-56, 0x1.063e1e21c5409p-54,
    -0x1.3b3efbf5e2228p-54, -0x1.b32dcb94da51dp-56, 0x1.db72fc1f0eab4p-55, 0x1.1affc2b91ce27p-56,
    0x1.c1a7792cb3387p-55, 0x1.36eae30af0cb3p-56, 0x1.4a385a63d07a7p-56, -0x1.ff7128fd391f0p-55,
};

/* tab[idx & 15] lane by lane: one two-register permute with AVX-512 (GCC's
 * two-vector shuffle takes the indices modulo 16, as the instruction does). */
OQ_INLINE v8d table16(const double *tab, v8i idx)
{
#if defined(__clang__)
    v8d r;
    for (int k = 0; k < 8; k++) r[k] = tab[idx[k] & 15];
    return r;
#else
    return __builtin_shuffle(load8(tab), load8(tab + 8), idx);
#endif
}

/* exp(x) for x <= 0 (scores minus their maximum), -inf and NaN included.
 * x = (16e + i) ln2/16 + r with |r| <= ln2/32 (Cody-Waite, two-part ln2/16
 * whose high part has 38 bits, so n * hi is exact); exp(x) = s (1 + q) with
 * s = 2^e 2^(i/16) (the table entry with e added to its exponent bits: exact),
 * q = exp(r) - 1 by its Taylor series to degree 7 (truncation < 2e-18) plus
 * the table entry's rounding error, and one rounding at the end, s + s q: within
 * about 0.6 ulp. Below -708 the result would be subnormal: it is returned as 0,
 * which is below any weight that can change a float64 sum; those lanes (and
 * -inf, NaN) compute garbage that the final selects replace. */
OQ_INLINE v8d vexp(v8d x)
{
    const double shifter = 0x1.8p52;
    const v8i live = x >= splat8(-708.0); /* false for -inf and NaN */
    const v8i nan = x != x;
    const v8d t = x * splat8(0x1.71547652b82fep+4) + splat8(shifter);
    const v8d n = t - splat8(shifter);
    const v8d r = (x - n * splat8(0x1.62e42fefa0000p-5)) - n * splat8(0x1.cf79abc9e3b3ap-44);
    v8d q = splat8(1.0 / 5040.0);
    q = q * r + splat8(1.0 / 720.0);
    q = q * r + splat8(1.0 / 120.0);
    q = q * r + splat8(1.0 / 24.0);
    q = q * r + splat8(1.0 / 6.0);
    q = q * r + splat8(0.5);
    q = q * r + splat8(1.0);
    const v8i ni = (v8i)t - (v8i)splat8(shifter);
    q = q * r + table16(exp2_16th_err, ni);
    const v8u e_bits = (v8u)(ni >> 4) << 52; /* unsigned: e < 0 shifts its two's complement */
    const v8d sc = (v8d)((v8u)table16(exp2_16th, ni) + e_bits);
    const v8d e = sc * q + sc;
    return select8(nan, x, select8(live, e, splat8(0.0)));
}

OQ_INLINE v8d max8(v8d a, v8d b)
{
    return select8(a > b, a, b);
}

/* The largest of s[0 .. end) (NaNs ignored), -inf if none: four independent
 * vector maxima, so the loop is not one long chain of compares. */
OQ_INLINE double row_max(const double *s, int64_t end)
{
    v8d m[4] = {splat8(-INFINITY), splat8(-INFINITY), splat8(-INFINITY), splat8(-INFINITY)};
    int64_t j = 0;
    for (; j + 32 <= end; j += 32)
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) m[k] = max8(load8(s + j + 8 * k), m[k]);
    for (; j + 8 <= end; j += 8) m[0] = max8(load8(s + j), m[0]);
    const v8d m8 = max8(max8(m[0], m[1]), max8(m[2], m[3]));
    double mx = -INFINITY;
    for (int k = 0; k < 8; k++) mx = m8[k] > mx ? m8[k] : mx;
    for (; j < end; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

/* s[0 .. n) = exp(s - m8), n <= 8; padding lanes weigh 0. Their sum is added to *sum8. */
OQ_INLINE void exp8(double *s, int n, v8d m8, v8d *sum8)
{
    double x[8];
    for (int k = 0; k < 8; k++) x[k] = k < n ? s[k] : -INFINITY;
    const v8d e = vexp(load8(x) - m8);
    store8(x, e);
    memcpy(s, x, (size_t)n * sizeof *s);
    *sum8 += e;
}

/* s[j] = exp(s[j] - mx) for j < n (mx finite); returns their sum, in a fixed
 * order: two partial sums (even and odd vectors), lanes added pairwise. */
OQ_INLINE double exp_sum(double *s, int64_t n, double mx)
{
    v8d sum[2] = {splat8(0.0), splat8(0.0)};
    const v8d m8 = splat8(mx);
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
#pragma GCC unroll 2
        for (int k = 0; k < 2; k++) {
            const v8d e = vexp(load8(s + j + 8 * k) - m8);
            store8(s + j + 8 * k, e);
            sum[k] += e;
        }
    if (j + 8 <= n) {
        exp8(s + j, 8, m8, &sum[0]);
        j += 8;
    }
    if (j < n) exp8(s + j, (int)(n - j), m8, &sum[1]);
    return hsum8(sum[0] + sum[1]);
}

/* All keys so far masked (maximum -inf): weights 0, or NaN where a score is
 * NaN; returns NaN if there was one, else 0. */
OQ_INLINE double masked_weights(double *s, int64_t n)
{
    int has_nan = 0;
    for (int64_t j = 0; j < n; j++) has_nan |= isnan(s[j]);
    for (int64_t j = 0; j < n; j++) s[j] = isnan(s[j]) ? NAN : 0.0;
    return has_nan ? NAN : 0.0;
}

OQ_CLONES
double oq_ref_softmax_exp(double *s, int64_t end)
{
    const double mx = row_max(s, end);
    return mx == -INFINITY ? masked_weights(s, end) : exp_sum(s, end, mx);
}

/* acc[r*lda + d] += sum_{j < n} s[r*lds + j] * v[j][d] for `rows` rows, all d
 * of the strips (vp: row 0 of strip 0; strips T rows apart). */
OQ_CLONES
static void weighted_add(const double *s, int64_t lds, int rows, int64_t n, const double *vp,
                         int64_t T, int64_t Dv, double *acc, int64_t lda)
{
    const double *sr[ROWS];
    row_ptrs(s, lds, rows, sr);
    for (int64_t c = 0; c < Dv; c += OQ_REF_COLS, vp += T * OQ_REF_COLS) {
        v8d a[ROWS][2];
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) {
            const double *ar = acc + (r < rows ? r : 0) * lda + c;
            a[r][0] = load8(ar);
            a[r][1] = load8(ar + 8);
        }
        rows_by_16(sr, vp, n, a);
        store_rows(a, rows, acc + c, lda);
    }
}

/* One row's chunk of scores s[0 .. n) (keys past n masked; s[n .. C) zeroed)
 * into weights exp(s - m), with the row's running maximum *m, sum *l and
 * output sums acc rescaled when this chunk raises the maximum. */
OQ_INLINE void online_row(double *s, int64_t n, int64_t C, double *m, double *l, double *acc,
                          int64_t dv)
{
    for (int64_t j = n; j < C; j++) s[j] = 0.0;
    if (n <= 0) return;
    const double mc = row_max(s, n), mx = mc > *m ? mc : *m;
    if (mx == -INFINITY) {
        *l += masked_weights(s, n);
        return;
    }
    if (mx > *m) {
        const double scale = vexp(splat8(*m - mx))[0]; /* 0 for the first finite maximum */
        *l *= scale;
        for (int64_t d = 0; d < dv; d++) acc[d] *= scale;
        *m = mx;
    }
    *l += exp_sum(s, n, mx);
}

OQ_CLONES
void oq_ref_attend(const oq_ref_block *b, double *scratch, double *out)
{
    const int64_t lds = OQ_REF_CHUNK + 8, dv = oq_ref_round_up(b->Dv, OQ_REF_COLS);
    double m[ROWS], l[ROWS];
    int64_t max_end = 0;
    for (int r = 0; r < b->rows; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0;
        max_end = b->end[r] > max_end ? b->end[r] : max_end;
    }
    memset(out, 0, sizeof *out * (size_t)(b->rows * dv));
    for (int64_t j0 = 0; j0 < max_end; j0 += OQ_REF_CHUNK) {
        const int64_t C = max_end - j0 < OQ_REF_CHUNK ? max_end - j0 : OQ_REF_CHUNK;
        oq_ref_scores(b->q, b->ldq, b->rows, b->kp + j0 * b->D, b->D, C, scratch, lds);
        for (int r = 0; r < b->rows; r++) {
            double *sr = scratch + r * lds;
            const int64_t n = b->end[r] - j0 < C ? b->end[r] - j0 : C;
            if (b->bias && n > 0) b->bias(b->ctx, r, j0, j0 + n, sr);
            online_row(sr, n, C, &m[r], &l[r], out + r * dv, dv);
        }
        weighted_add(scratch, lds, b->rows, C, b->vp + j0 * OQ_REF_COLS, b->T, b->Dv, out, dv);
    }
    /* A row with every key masked has no distribution: it is defined as zeros. */
    for (int r = 0; r < b->rows; r++)
        for (int64_t d = 0; d < dv; d++) out[r * dv + d] = l[r] == 0.0 ? 0.0 : out[r * dv + d] / l[r];
}
