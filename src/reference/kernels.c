/* float64 attention kernels: K and V packing, scores, the softmax's exp, and
 * oq_ref_attend, which runs a block of query rows over the keys chunk by chunk
 * (scores, bias, online softmax, weighted sums of V).
 *
 * Register blocking: OQ_REF_ROWS query rows by 16 keys (scores) or 16 value
 * columns (weighted sums), 16 accumulators, so each load of K or V feeds eight
 * FMAs. A call for fewer rows repeats the last row and stores only the real
 * ones, so a row's values never depend on how many rows share its call.
 *
 * On AVX-512 machines the FMA units bound these kernels: per 8 scores, 32
 * vector FMAs for the products at D = Dv = 16 and 8 for the weights (Zen 5 runs
 * two 512-bit FMAs a cycle, Zen 4 one: its units are 256 bits wide). Compares
 * and two-register permutes take FMA slots too; max, min, blends, additions,
 * shifts and one-register permutes do not (measured on both), which is why the
 * kernels use those. Blocks without a bias go through the lanes kernel below. */
#include <math.h>
#include <string.h>

#include "reference/reference-impl.h"
#include "reference/vec-impl.h"

#define ROWS OQ_REF_ROWS
_Static_assert(OQ_REF_KEYS == 16 && OQ_REF_COLS == 16, "the kernels work on 16 columns");

/* Panels of 16 along one axis of a matrix, `stride` doubles apart:
 * dst[p*stride + o*16 + c] = m[i*step + o*step_other] with i = p*16 + c < n, else 0. */
static void pack16(const double *m, int64_t n, int64_t step, int64_t n_other, int64_t step_other,
                   int64_t stride, double *dst)
{
    for (int64_t p = 0; p < oq_ref_round_up(n, 16) / 16; p++)
        for (int64_t o = 0; o < n_other; o++)
            for (int64_t c = 0; c < 16; c++) {
                const int64_t i = p * 16 + c;
                dst[p * stride + o * 16 + c] = i < n ? m[i * step + o * step_other] : 0.0;
            }
}

void oq_ref_pack_keys(const double *k, int64_t ldk, int64_t T, int64_t D, double *kp)
{
    pack16(k, T, ldk, D, 1, D * 16, kp);
}

void oq_ref_pack_values(const double *v, int64_t ldv, int64_t T, int64_t Dv, int64_t S, double *vp)
{
    pack16(v, Dv, 1, T, ldv, S * 16, vp);
}

/* Row pointers for a call on `rows` rows: the missing ones repeat the last. */
OQ_INLINE void row_ptrs(const double *base, int64_t ld, int rows, const double *p[ROWS])
{
    for (int r = 0; r < ROWS; r++) p[r] = base + (r < rows ? r : rows - 1) * ld;
}

/* a[r] += sum_{k < K} x[r][j + k] * p[k][0..16) for the ROWS rows (p: K rows of 16). */
OQ_INLINE void rows_by_16(const double *const *x, int64_t j, const double *p, int64_t K,
                          v8d a[ROWS][2])
{
    for (int64_t k = 0; k < K; k++) {
        const v8d p0 = load8(p + k * 16), p1 = load8(p + k * 16 + 8);
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) {
            const v8d xr = splat8(x[r][j + k]);
            a[r][0] += xr * p0;
            a[r][1] += xr * p1;
        }
    }
}

/* a[r] = in[r*ld + 0..16) for the first `rows` rows (the others repeat row 0). */
OQ_INLINE void load_rows(const double *in, int64_t ld, int rows, v8d a[ROWS][2])
{
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; r++) {
        const double *ar = in + (r < rows ? r : 0) * ld;
        a[r][0] = load8(ar);
        a[r][1] = load8(ar + 8);
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

/* a > b ? a : b lane by lane (b where a is NaN): written per lane, which GCC
 * turns into one max instruction, whose semantics these are; a compare and a
 * blend would take two slots of the FMA units. */
OQ_INLINE v8d max8(v8d a, v8d b)
{
    v8d m;
    for (int k = 0; k < 8; k++) m[k] = a[k] > b[k] ? a[k] : b[k];
    return m;
}

/* The lanes of m swapped in groups of 4, 2 and 1: the steps of a reduction tree. */
OQ_INLINE v8d swap8(v8d m, int step)
{
    switch (step) {
    case 0: return __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3);
    case 1: return __builtin_shufflevector(m, m, 2, 3, 0, 1, 6, 7, 4, 5);
    default: return __builtin_shufflevector(m, m, 1, 0, 3, 2, 5, 4, 7, 6);
    }
}

/* The largest lane of m (no NaN lanes). */
OQ_INLINE double hmax8(v8d m)
{
    for (int step = 0; step < 3; step++) m = max8(m, swap8(m, step));
    return m[0];
}

/* Panel by panel (D <= 16: a column's running maxima stay in a register), then
 * across the lanes. A key that is not finite (NaN too) makes every column +inf:
 * the magnitudes' sum, NaN or inf then, says so (or overflows on keys near
 * DBL_MAX / T, which only costs the bound). Heads above 16 never take the lanes
 * kernel, the bound's only user: +inf, unread. */
OQ_CLONES
void oq_ref_keys_bound(const double *kp, int64_t T, int64_t D, double *kmax)
{
    const v8u magnitude = (v8u)splat8(0.0) | 0x7fffffffffffffffull;
    v8d m[16], sum = splat8(0.0);
#pragma GCC unroll 16
    for (int d = 0; d < 16; d++) m[d] = splat8(0.0);
    for (int64_t p = 0; D <= 16 && p < oq_ref_round_up(T, 16) / 16; p++)
#pragma GCC unroll 16
        for (int d = 0; d < 16; d++)
            if (d < D) {
                const double *c = kp + (p * D + d) * 16;
                const v8d a = (v8d)((v8u)load8(c) & magnitude), b = (v8d)((v8u)load8(c + 8) & magnitude);
                sum += a + b;
                m[d] = max8(max8(a, b), m[d]);
            }
    const int finite = D <= 16 && hsum8(sum) < INFINITY;
    for (int64_t d = 0; d < D; d++) kmax[d] = finite ? hmax8(m[d]) : INFINITY;
}

OQ_INLINE v8d min8(v8d a, v8d b)
{
    v8d m;
    for (int k = 0; k < 8; k++) m[k] = a[k] < b[k] ? a[k] : b[k];
    return m;
}

/* The smallest lane of m (no NaN lanes). */
OQ_INLINE double hmin8(v8d m)
{
    for (int step = 0; step < 3; step++) m = min8(m, swap8(m, step));
    return m[0];
}

/* oq_ref_scores, and the range [mn[r], mx[r]] of row r's scores of keys <
 * full (a multiple of 16), NaNs ignored, [inf, -inf] if none: taken from the
 * registers, where max and min cost no FMA slot. */
OQ_INLINE void scores_range(const double *q, int64_t ldq, int rows, const double *kp, int64_t D,
                            int64_t ns, int64_t full, double *s, int64_t lds, double mn[ROWS],
                            double mx[ROWS])
{
    const double *qr[ROWS];
    row_ptrs(q, ldq, rows, qr);
    v8d lo[ROWS], hi[ROWS];
    for (int r = 0; r < ROWS; r++) lo[r] = splat8(INFINITY), hi[r] = splat8(-INFINITY);
    for (int64_t j = 0; j < ns; j += OQ_REF_KEYS, kp += D * OQ_REF_KEYS) {
        v8d a[ROWS][2];
#pragma GCC unroll 8
        for (int r = 0; r < ROWS; r++) a[r][0] = a[r][1] = splat8(0.0);
        rows_by_16(qr, 0, kp, D, a);
        if (j < full)
#pragma GCC unroll 8
            for (int r = 0; r < ROWS; r++) {
                hi[r] = max8(a[r][0], max8(a[r][1], hi[r]));
                lo[r] = min8(a[r][0], min8(a[r][1], lo[r]));
            }
        store_rows(a, rows, s + j, lds);
    }
    for (int r = 0; r < ROWS; r++) mn[r] = hmin8(lo[r]), mx[r] = hmax8(hi[r]);
}

OQ_CLONES
void oq_ref_scores(const double *q, int64_t ldq, int rows, const double *kp, int64_t D,
                   int64_t ns, double *s, int64_t lds)
{
    double mn[ROWS], mx[ROWS];
    scores_range(q, ldq, rows, kp, D, ns, 0, s, lds, mn, mx);
}

/* The bits of 2^(i/8), i = 0..7, correctly rounded, minus i << 49 (see
 * exp2_reduced), and the relative rounding error of each, (2^(i/8) - table) /
 * table, which the result adds back. */
static const uint64_t exp2_8th_bits[8] = {
    0x3ff0000000000000, 0x3fef72b83c7d517b, 0x3fef06fe0a31b715, 0x3feebfdad5362a27,
    0x3feea09e667f3bcd, 0x3feeace5422aa0db, 0x3feee89f995ad3ad, 0x3fef5818dcfba487,
};
static const double exp2_8th_err[8] = {
    0x0.0p+0, -0x1.01b15eaa59348p-55, 0x1.34d754db0abb6p-55, 0x1.690cebb7aafb0p-56,
    -0x1.3b3efbf5e2228p-54, 0x1.db72fc1f0eab4p-55, 0x1.c1a7792cb3387p-55, 0x1.4a385a63d07a7p-56,
};

/* tab[idx & 7] lane by lane: one single-register permute with AVX-512 (GCC's
 * shuffle takes the indices modulo 8, as the instruction does), which unlike
 * a two-register one leaves the FMA units alone. */
OQ_INLINE v8d table8(const void *tab, v8i idx)
{
#if defined(__clang__)
    v8d t = load8(tab), r;
    for (int k = 0; k < 8; k++) r[k] = t[idx[k] & 7];
    return r;
#else
    return __builtin_shuffle(load8(tab), idx);
#endif
}

/* x + SHIFT rounds x to a multiple of 1/8 (for |x| < 2^48) and leaves 8 x,
 * an integer n, in the low bits of the sum's representation. */
#define SHIFT 0x1.8p49

/* 2^(n/8 + r) for t = n/8 + SHIFT and |r| <= 1/16: s = 2^(n>>3) 2^((n&7)/8)
 * (the table entry with n>>3 added to its exponent bits, exact: t's bits
 * shifted left by 49 are (n>>3) << 52 | (n&7) << 49, whose second part the
 * table's bits already subtract, so one shift does it) times 1 + p,
 * p = r c(r) + the entry's rounding error, where c is the degree-6 Chebyshev
 * interpolant of (2^r - 1)/r on [-1/16, 1/16] (1 + r c(r) within 6e-18 of
 * 2^r), rounded once at the end, s + s p: within 0.6 ulp. The exponent must
 * stay in the normal range (n >> 3 >= -1022); callers flush what is below. */
OQ_INLINE v8d exp2_reduced(v8d t, v8d r)
{
    v8d c = splat8(0x1.ffd1f6633bd3ap-17);
    c = c * r + splat8(0x1.430deca12d584p-13);
    c = c * r + splat8(0x1.5d87fe72ac65ep-10);
    c = c * r + splat8(0x1.3b2ab6f1f1910p-7);
    c = c * r + splat8(0x1.c6b08d704a11fp-5);
    c = c * r + splat8(0x1.ebfbdff82c6c5p-3);
    c = c * r + splat8(0x1.62e42fefa39efp-1);
    const v8d p = c * r + table8(exp2_8th_err, (v8i)t);
    const v8d s = (v8d)((v8u)table8(exp2_8th_bits, (v8i)t) + ((v8u)t << 49));
    return s * p + s;
}

/* e where x >= lo, else 0 (-inf included); a NaN x keeps e, which is NaN. */
OQ_INLINE v8d flush_below(v8d x, double lo, v8d e)
{
    return (v8d)((v8i)e & ~(x < splat8(lo)));
}

/* exp(x) for x <= 0 (scores minus their maximum), -inf and NaN included,
 * within 0.7 ulp: x = n ln2/8 + r' (Cody-Waite, two-part ln2/8 whose high
 * part has 38 bits, so n * hi is exact without an FMA), |r'| <= ln2/16, and
 * r = r' log2 e rounded (off by 2^-58 at most). Below -708 the result would
 * be subnormal: it is returned as 0, below any weight that can change a
 * float64 sum. */
OQ_INLINE v8d vexp(v8d x)
{
    const v8d t = x * splat8(8 * OQ_REF_LOG2E) + splat8(SHIFT * 8);
    const v8d n = t - splat8(SHIFT * 8);
    const v8d r = (x - n * splat8(0x1.62e42fefa0000p-4)) - n * splat8(0x1.cf79abc9e3b3ap-43);
    return flush_below(x, -708.0, exp2_reduced(t, r * splat8(OQ_REF_LOG2E)));
}

/* The softmax weights of the attention kernel, whose logits are in base 2:
 * 2^(s - m) for s - m <= 0. With `flush`, 0 where the weight would be
 * subnormal (below 2^-1022, -inf included); without, the caller knows that
 * s - m >= -1022 (or NaN) in every lane, where both give the same bits. */
OQ_INLINE v8d weights8(v8d s, v8d m, int flush)
{
    const v8d x = s - m, t = x + splat8(SHIFT);
    const v8d w = exp2_reduced(t, x - (t - splat8(SHIFT)));
    return flush ? flush_below(x, -1022.0, w) : w;
}

/* 2^(s - m) for m a multiple of 1/8 below 2^45, given as c = SHIFT - m (exact), and
 * s - m >= -1022: t = s + c rounds s - m to a multiple of 1/8 once, and r = s - (t - c)
 * is exact (t - c is the multiple of 1/8 nearest to s). */
OQ_INLINE v8d weights8_fixed(v8d s, v8d c)
{
    const v8d t = s + c;
    return exp2_reduced(t, s - (t - c));
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
    double mx = hmax8(max8(max8(m[0], m[1]), max8(m[2], m[3])));
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

/* Keys j .. j+8 of each row: logits s[r][j ..] become their weights (rows up
 * to `rows` only: the others alias the last), whose sum goes to sum[r]. */
OQ_INLINE void weigh8(double *const *s, int rows, int64_t j, const double *shift, int flush,
                      v8d sum[ROWS])
{
#pragma GCC unroll 8
    for (int r = 0; r < ROWS; r++)
        if (r < rows) {
            const v8d w = weights8(load8(s[r] + j), splat8(shift[r]), flush);
            store8(s[r] + j, w);
            sum[r] += w;
        }
}

/* One strip of V (Dv <= 16), acc in registers: each group of 8 keys is weighed
 * a group ahead of its products, so that the exp's work runs beside the FMAs
 * of the group before, and its stores are not read back at once. */
OQ_INLINE void weigh_times_strip(double *const *sr, int rows, int64_t n, const double *shift,
                                 int flush, const double *vp, double *acc, int64_t lda,
                                 v8d sum[ROWS])
{
    v8d a[ROWS][2];
    load_rows(acc, lda, rows, a);
    weigh8(sr, rows, 0, shift, flush, sum);
    for (int64_t j = 0; j < n; j += 8) {
        if (j + 8 < n) weigh8(sr, rows, j + 8, shift, flush, sum);
        rows_by_16((const double *const *)sr, j, vp + j * OQ_REF_COLS, n - j < 8 ? n - j : 8, a);
    }
    store_rows(a, rows, acc, lda);
}

/* Several strips: all weights first, then each strip's products. */
OQ_INLINE void weigh_times_strips(double *const *sr, int rows, int64_t n, const double *shift,
                                  int flush, const double *vp, int64_t T, int64_t Dv, double *acc,
                                  int64_t lda, v8d sum[ROWS])
{
    for (int64_t j = 0; j < n; j += 8) weigh8(sr, rows, j, shift, flush, sum);
    for (int64_t c = 0; c < Dv; c += OQ_REF_COLS) {
        v8d a[ROWS][2];
        load_rows(acc + c, lda, rows, a);
        rows_by_16((const double *const *)sr, 0, vp + c / OQ_REF_COLS * T * OQ_REF_COLS, n, a);
        store_rows(a, rows, acc + c, lda);
    }
}

/* The chunk's weights times V: s[r*lds + j] for j < round_up(n, 8) become
 * 2^(s - shift[r]) (l[r] gets their sum; flush as weights8), and acc[r*lda +
 * d] += sum_{j < n} w[r][j] v[j][d] for all d of the strips (vp: row 0 of
 * strip 0; strips T rows apart). */
OQ_CLONES
static void weighted_add(double *s, int64_t lds, int rows, int64_t n, const double *shift,
                         int flush, const double *vp, int64_t T, int64_t Dv, double *acc,
                         int64_t lda, double *l)
{
    double *sr[ROWS];
    for (int r = 0; r < ROWS; r++) sr[r] = s + (r < rows ? r : rows - 1) * lds;
    v8d sum[ROWS];
    for (int r = 0; r < ROWS; r++) sum[r] = splat8(0.0);
    if (Dv <= OQ_REF_COLS && flush)
        weigh_times_strip(sr, rows, n, shift, 1, vp, acc, lda, sum);
    else if (Dv <= OQ_REF_COLS)
        weigh_times_strip(sr, rows, n, shift, 0, vp, acc, lda, sum);
    else if (flush)
        weigh_times_strips(sr, rows, n, shift, 1, vp, T, Dv, acc, lda, sum);
    else
        weigh_times_strips(sr, rows, n, shift, 0, vp, T, Dv, acc, lda, sum);
    for (int r = 0; r < rows; r++) l[r] += hsum8(sum[r]);
}

/* Row r's chunk of logits s[0 .. n) before its weights: the keys past n are
 * masked (-inf, up to cw); the running maximum *m is raised to the chunk's
 * (mc: the largest of s[0 .. from), from the registers, and the rest read
 * here), rescaling the sum *l and output sums acc. Returns the shift of the
 * weights: *m, or 0 while every key so far is masked (weights 0, NaN for NaN). */
OQ_INLINE double chunk_shift(double *s, int64_t n, int64_t cw, int64_t from, double mc, double *m,
                             double *l, double *acc, int64_t dv)
{
    for (int64_t j = n > 0 ? n : 0; j < cw; j++) s[j] = -INFINITY;
    if (n > from) {
        const double tail = row_max(s + from, n - from);
        mc = tail > mc ? tail : mc;
    }
    if (mc > *m) {
        const double scale = weights8(splat8(*m), splat8(mc), 1)[0]; /* 0 for the first finite maximum */
        *l *= scale;
        for (int64_t d = 0; d < dv; d++) acc[d] *= scale;
        *m = mc;
    }
    return *m == -INFINITY ? 0.0 : *m;
}

/* Keys whose scores every row of the chunk needs, in whole panels of 16: their
 * range comes from the registers (none when a bias changes the scores). */
static int64_t full_panels(const oq_ref_block *b, int64_t j0, int64_t C)
{
    if (b->bias) return 0;
    int64_t n = C;
    for (int r = 0; r < b->rows; r++) n = b->end[r] - j0 < n ? b->end[r] - j0 : n;
    return n > 0 ? n / OQ_REF_KEYS * OQ_REF_KEYS : 0;
}

/* ---- rows in lanes ---------------------------------------------------------
 * Blocks without a bias whose rows attend the same keys, with D, Dv <= 16, go
 * through a second layout: lane r of a vector holds row r, so that the block's
 * 8 rows share every instruction. A key's scores are 16 FMAs against Q held
 * in registers (K broadcast from memory inside the FMAs: no separate
 * broadcasts), its weights one exp for all rows, and its products with V
 * another 16 FMAs into the outputs, also in registers; the rows' maxima and
 * minima stay in lanes (no reductions), and keys are weighed in place,
 * LANE_AHEAD keys ahead of their products, so the exp's latency hides behind
 * them. On a core whose FMA units take one 512-bit FMA per cycle (Zen 4) it
 * took 41-43 cycles per key at D = Dv = 16, near the 40 of its FMAs (16 + 16 +
 * 8 for the exp); the kernel above, a row per accumulator pair, 48-50. On Zen 5
 * (two a cycle: 20 cycles' worth) 24-25 with one group of 8 keys a step and
 * keys weighed a step ahead, 22-22.5 as now (docs/reference.md). */
_Static_assert(ROWS == 8 && OQ_REF_ATTEND_SCRATCH >= 8 * OQ_REF_CHUNK,
               "a block's rows fill a vector's lanes; a chunk of their scores fits the scratch");

/* a[u] = the scores of a panel's 16 keys (p: [D][16], D <= 16) for the lanes'
 * rows (q[d]: column d of the rows). Two groups of 8 keys at once: 16 chains of
 * FMAs give the FMA units slack for the chains' latency, which 8 chains (4
 * cycles each, two FMAs a cycle) only just fill. */
OQ_INLINE void panel_scores(const v8d q[16], int64_t D, const double *p, v8d a[16])
{
#pragma GCC unroll 16
    for (int u = 0; u < 16; u++) a[u] = splat8(0.0);
#pragma GCC unroll 16
    for (int d = 0; d < 16; d++)
        if (d < D)
#pragma GCC unroll 16
            for (int u = 0; u < 16; u++) a[u] += q[d] * splat8(p[d * OQ_REF_KEYS + u]);
}

/* hi, lo (lanes) raised and lowered to the maxima and minima of a[0 .. m). A
 * whole panel goes through a chain that starts from a[0], so that no register
 * has to hold the running range across the panel's FMAs (q and a fill them). */
OQ_INLINE void panel_range(const v8d a[16], int m, double *hi, double *lo)
{
    if (m == 16) {
        v8d mx = a[0], mn = a[0];
#pragma GCC unroll 16
        for (int u = 1; u < 16; u++) mx = max8(a[u], mx), mn = min8(a[u], mn);
        store8(hi, max8(mx, load8(hi)));
        store8(lo, min8(mn, load8(lo)));
        return;
    }
    v8d mx = load8(hi), mn = load8(lo);
#pragma GCC unroll 16
    for (int u = 0; u < 16; u++)
        if (u < m) mx = max8(a[u], mx), mn = min8(a[u], mn);
    store8(hi, mx);
    store8(lo, mn);
}

/* Scores of a chunk's keys 0 .. n (kp: its first key's panel, D <= 16
 * columns) for the lanes' rows qt[d*8 + r]: st[j*8 + r] for j < round_up(n,
 * 16). With `range`, the lanes' maxima and minima over keys < n are merged
 * into hi and lo. */
OQ_INLINE void lane_scores_in(const double *qt, int64_t D, const double *kp, int64_t n, double *st,
                              int range, double *hi, double *lo)
{
    v8d q[16];
#pragma GCC unroll 16
    for (int d = 0; d < 16; d++) q[d] = load8(qt + d * 8);
    for (int64_t j = 0; j < n; j += OQ_REF_KEYS, kp += D * OQ_REF_KEYS) {
        v8d a[16];
        panel_scores(q, D, kp, a);
#pragma GCC unroll 16
        for (int u = 0; u < 16; u++) store8(st + (j + u) * 8, a[u]);
        if (range) panel_range(a, n - j < 16 ? (int)(n - j) : 16, hi, lo);
    }
}

/* lane_scores_in, with the range when hi and lo are given. */
OQ_CLONES
static void lane_scores(const double *qt, int64_t D, const double *kp, int64_t n, double *st,
                        double *hi, double *lo)
{
    if (hi)
        lane_scores_in(qt, D, kp, n, st, 1, hi, lo);
    else
        lane_scores_in(qt, D, kp, n, st, 0, NULL, NULL);
}

/* acc[c] += w v[c], c < 16. */
OQ_INLINE void lane_times_v(v8d w, const double *v, v8d acc[16])
{
#pragma GCC unroll 16
    for (int c = 0; c < 16; c++) acc[c] += w * splat8(v[c]);
}

/* How a chunk's weights are made from its scores: 2^(s - m) with m the running
 * maximum, exact (no weight can fall below 2^-1022) or flushed (weights8), or
 * with m a fixed bound given as SHIFT - m (weights8_fixed). */
enum { WEIGH_EXACT, WEIGH_FLUSH, WEIGH_FIXED };

/* Key j's weights in place of its scores st[j*8 ..]. */
OQ_INLINE v8d lane_weigh(double *st, int64_t j, v8d m, int how)
{
    const v8d s = load8(st + j * 8);
    const v8d w = how == WEIGH_FIXED ? weights8_fixed(s, m) : weights8(s, m, how == WEIGH_FLUSH);
    store8(st + j * 8, w);
    return w;
}

/* How many keys ahead of their products the weights are computed: the exp's
 * chain of dependent operations (~45 cycles) then runs beside the FMAs of the
 * keys between; a step ahead (2 keys, ~24 cycles of FMAs) left it exposed. */
#define LANE_AHEAD 8

/* o[c*8 + r] += sum_{j < n} w[j][r] v[j][c] (c < 16; vp: rows of 16), in key
 * order, with w[j] made from st[j] and shift as `how` says, which replace the
 * scores in st; l[r] += the sum of the even keys' weights, then of the odd
 * keys'. Weights are computed LANE_AHEAD keys before their products. */
OQ_INLINE void lane_products(double *st, int64_t n, const double *shift, int how,
                             const double *vp, double *o, double *l)
{
    const v8d m = load8(shift);
    v8d acc[16], sum0 = load8(l), sum1 = splat8(0.0);
    const int64_t ahead = n < LANE_AHEAD ? n : LANE_AHEAD;
    for (int64_t j = 0; j < ahead; j++) {
        const v8d w = lane_weigh(st, j, m, how);
        if (j & 1) sum1 += w; else sum0 += w;
    }
#pragma GCC unroll 16
    for (int c = 0; c < 16; c++) acc[c] = load8(o + c * 8);
    int64_t j = 0;
    for (; j + LANE_AHEAD + 2 <= n; j += 2) {
        sum0 += lane_weigh(st, j + LANE_AHEAD, m, how);
        sum1 += lane_weigh(st, j + LANE_AHEAD + 1, m, how);
        lane_times_v(load8(st + j * 8), vp + j * OQ_REF_COLS, acc);
        lane_times_v(load8(st + j * 8 + 8), vp + (j + 1) * OQ_REF_COLS, acc);
    }
    for (int64_t k = j + LANE_AHEAD; k < n; k++) {
        const v8d w = lane_weigh(st, k, m, how);
        if (k & 1) sum1 += w; else sum0 += w;
    }
    for (; j < n; j++) lane_times_v(load8(st + j * 8), vp + j * OQ_REF_COLS, acc);
#pragma GCC unroll 16
    for (int c = 0; c < 16; c++) store8(o + c * 8, acc[c]);
    store8(l, sum0 + sum1);
}

OQ_CLONES
static void lane_weighted(double *st, int64_t n, const double *shift, int how, const double *vp,
                          double *o, double *l)
{
    if (how == WEIGH_FIXED)
        lane_products(st, n, shift, WEIGH_FIXED, vp, o, l);
    else if (how == WEIGH_FLUSH)
        lane_products(st, n, shift, WEIGH_FLUSH, vp, o, l);
    else
        lane_products(st, n, shift, WEIGH_EXACT, vp, o, l);
}

/* Whether the block can go through the lanes: see above. */
static int lanes_fit(const oq_ref_block *b)
{
    if (b->bias || b->D < 1 || b->D > 16 || b->Dv < 1 || b->Dv > OQ_REF_COLS || b->end[0] <= 0)
        return 0;
    for (int r = 1; r < b->rows; r++)
        if (b->end[r] != b->end[0]) return 0;
    return 1;
}

/* The running maxima m (lanes) raised to hi, rescaling the sums l and outputs
 * o (16 vectors); the weights' shift (m, or 0 while a row has no finite score)
 * goes to shift. Returns whether a weight can fall below 2^-1022 (lo: minima). */
OQ_INLINE int lane_shift(double *m, const double *hi, const double *lo, double *l, double *o,
                         double *shift)
{
    const v8d old = load8(m), mx = load8(hi);
    const v8d scale = select8(mx > old, weights8(old, mx, 1), splat8(1.0));
    store8(l, load8(l) * scale);
    for (int c = 0; c < 16; c++) store8(o + c * 8, load8(o + c * 8) * scale);
    store8(m, mx);
    const v8d sh = select8(mx == splat8(-INFINITY), splat8(0.0), mx);
    store8(shift, sh);
    const v8i low = ~(load8(lo) - sh >= splat8(-1020.0));
    int flush = 0;
    for (int r = 0; r < 8; r++) flush |= low[r] != 0;
    return flush;
}

/* A fixed shift per lane instead of the running maximum: B = Σ_d |q_d| kmax[d]
 * bounds the row's every score from above and -B from below, so with B <= 500
 * (rounded up to a multiple of 1/8) every weight 2^(s - B) lies in [2^-1000, 1]:
 * no maximum to track, no rescaling, nothing to flush (the result equals the
 * running maximum's to rounding: the softmax does not depend on the shift).
 * c[r] = SHIFT - B for the lanes returned (a bit each), which have such a bound. */
OQ_INLINE int lanes_bound(const oq_ref_block *b, const double *qt, double *c)
{
    if (!b->kmax) return 0;
    int good = 0;
    for (int r = 0; r < 8; r++) {
        double B = 0.0;
        for (int64_t d = 0; d < b->D; d++) B += fabs(qt[d * 8 + r]) * b->kmax[d];
        B = ceil(B * 8.0) / 8.0; /* NaN or +inf when a query or key is not finite */
        c[r] = SHIFT - (B <= 500.0 ? B : 0.0);
        good |= (B <= 500.0) << r;
    }
    return good;
}

/* The block's lanes over every chunk, shifted by c (lanes_bound). */
OQ_INLINE void lanes_fixed(const oq_ref_block *b, const double *qt, const double *c, double *st,
                           double *o, double *l)
{
    const int64_t end = b->end[0];
    for (int64_t j0 = 0; j0 < end; j0 += OQ_REF_CHUNK) {
        const int64_t n = end - j0 < OQ_REF_CHUNK ? end - j0 : OQ_REF_CHUNK;
        lane_scores(qt, b->D, b->kp + j0 * b->D, n, st, NULL, NULL);
        lane_weighted(st, n, c, WEIGH_FIXED, b->vp + j0 * OQ_REF_COLS, o, l);
    }
}

/* The block's lanes over every chunk, shifted by the running maximum. */
OQ_INLINE void lanes_running(const oq_ref_block *b, const double *qt, double *st, double *o,
                             double *l)
{
    _Alignas(64) double m[8], hi[8], lo[8], shift[8];
    for (int r = 0; r < 8; r++) m[r] = hi[r] = -INFINITY;
    const int64_t end = b->end[0];
    for (int64_t j0 = 0; j0 < end; j0 += OQ_REF_CHUNK) {
        const int64_t n = end - j0 < OQ_REF_CHUNK ? end - j0 : OQ_REF_CHUNK;
        for (int r = 0; r < 8; r++) lo[r] = INFINITY;
        lane_scores(qt, b->D, b->kp + j0 * b->D, n, st, hi, lo);
        const int flush = lane_shift(m, hi, lo, l, o, shift);
        lane_weighted(st, n, shift, flush ? WEIGH_FLUSH : WEIGH_EXACT, b->vp + j0 * OQ_REF_COLS, o, l);
    }
}

/* oq_ref_attend for a block that lanes_fit: st holds a chunk's scores (8 per
 * key). Each lane takes the fixed shift when it has one, else the running
 * maximum, so a row's values do not depend on the rows beside it. */
OQ_INLINE void attend_lanes(const oq_ref_block *b, double *st, double *out)
{
    _Alignas(64) double qt[16 * 8] = {0}, o[16 * 8] = {0}, l[8] = {0}, c[8];
    for (int r = 0; r < 8; r++) {
        const double *qr = b->q + (r < b->rows ? r : b->rows - 1) * b->ldq;
        for (int64_t d = 0; d < b->D; d++) qt[d * 8 + r] = qr[d];
    }
    const int good = lanes_bound(b, qt, c);
    if (good) lanes_fixed(b, qt, c, st, o, l);
    if (good == 0) lanes_running(b, qt, st, o, l);
    if (good && good != 0xff) {
        _Alignas(64) double o2[16 * 8] = {0}, l2[8] = {0};
        lanes_running(b, qt, st, o2, l2);
        for (int r = 0; r < 8; r++) {
            if (good >> r & 1) continue;
            l[r] = l2[r];
            for (int k = 0; k < 16; k++) o[k * 8 + r] = o2[k * 8 + r];
        }
    }
    /* Divided a vector (the block's rows) at a time: 16 divisions instead of 128 (~1% of a
     * call at L = 1024), each lane rounded as the scalar one would be. */
    const v8d lv = load8(l), none = splat8(0.0);
    for (int k = 0; k < OQ_REF_COLS; k++)
        store8(o + k * 8, select8(lv == none, none, load8(o + k * 8) / lv));
    for (int r = 0; r < b->rows; r++)
        for (int k = 0; k < OQ_REF_COLS; k++) out[r * OQ_REF_COLS + k] = o[k * 8 + r];
}

OQ_CLONES
void oq_ref_attend(const oq_ref_block *b, double *scratch, double *out)
{
    if (lanes_fit(b)) {
        attend_lanes(b, scratch, out);
        return;
    }
    const int64_t lds = OQ_REF_CHUNK + 8, dv = oq_ref_round_up(b->Dv, OQ_REF_COLS);
    double m[ROWS], l[ROWS], mn[ROWS], mx[ROWS], shift[ROWS];
    int64_t max_end = 0;
    for (int r = 0; r < b->rows; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0;
        max_end = b->end[r] > max_end ? b->end[r] : max_end;
    }
    memset(out, 0, sizeof *out * (size_t)(b->rows * dv));
    for (int64_t j0 = 0; j0 < max_end; j0 += OQ_REF_CHUNK) {
        const int64_t C = max_end - j0 < OQ_REF_CHUNK ? max_end - j0 : OQ_REF_CHUNK;
        const int64_t full = full_panels(b, j0, C);
        scores_range(b->q, b->ldq, b->rows, b->kp + j0 * b->D, b->D, C, full, scratch, lds, mn, mx);
        /* Without a masked key or a weight below 2^-1022, the flush can go. */
        int flush = full < C;
        for (int r = 0; r < b->rows; r++) {
            double *sr = scratch + r * lds;
            const int64_t n = b->end[r] - j0 < C ? b->end[r] - j0 : C;
            if (b->bias && n > 0) b->bias(b->ctx, r, j0, j0 + n, sr);
            shift[r] = chunk_shift(sr, n, oq_ref_round_up(C, 8), full, mx[r], &m[r], &l[r],
                                   out + r * dv, dv);
            flush |= !(mn[r] - shift[r] >= -1020.0);
        }
        weighted_add(scratch, lds, b->rows, C, shift, flush, b->vp + j0 * OQ_REF_COLS, b->T,
                     b->Dv, out, dv, l);
    }
    /* A row with every key masked has no distribution: it is defined as zeros. */
    for (int r = 0; r < b->rows; r++)
        for (int64_t d = 0; d < dv; d += 8)
            store8(out + r * dv + d, l[r] == 0.0 ? splat8(0.0) : load8(out + r * dv + d) / splat8(l[r]));
}
