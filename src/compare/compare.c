/* Mask-aware comparison of an output with its reference (see compare.h). */
#include "compare/compare-impl.h"
#include "core/core-impl.h"
#include "status/args-impl.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

oq_compare_opts oq_compare_opts_default(oq_dtype precision)
{
    oq_compare_opts o = {0};
    o.tol = oq_tolerance_for_dtype(precision);
    o.batch_axis = 0;
    o.seq_axis = 1;
    o.check_padding = 1;
    o.worst_k = 5;
    o.inf_match = 1; /* a masked score is -inf on both sides: the same function, not a failure */
    return o;
}

/* Smallest normal number of the output dtype: the floor of |ref| for max_rel. */
static double tiny_of(oq_dtype t)
{
    switch (t) {
    case OQ_DTYPE_FLOAT16: return 6.103515625e-05; /* 2^-14 */
    case OQ_DTYPE_FLOAT64: return DBL_MIN;
    default: return FLT_MIN; /* float32 and bfloat16 share the exponent range */
    }
}

static const char *tensor_label(const oq_tensor *t)
{
    return t->name && *t->name ? t->name : "(unnamed)";
}

/* The batch and sequence axes are axes of the output, lengths or not (a wrong axis found only
 * once lengths come would hide until then); an output of rank < 2 has no such pair, and only
 * lengths need one (the default axes 0 and 1 stay usable on vectors and scalars). */
static oq_status check_axes(const oq_tensor *out, const oq_compare_opts *o, oq_err *err)
{
    char a[128];
    if (!o->lengths && out->ndim < 2) return OQ_OK;
    const int32_t axis[2] = {o->batch_axis, o->seq_axis};
    static const char *const what[2] = {"batch axis", "sequence axis"};
    for (int i = 0; i < 2; i++)
        if (axis[i] < 0 || axis[i] >= out->ndim)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "output '%s' shape %s: %s %d is outside 0..%d (rank %d)",
                              tensor_label(out), oq_shape_str(out, a, sizeof a), what[i], (int)axis[i],
                              (int)out->ndim - 1, (int)out->ndim);
    if (o->batch_axis == o->seq_axis)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "output '%s' shape %s: batch axis %d and sequence axis %d must be distinct axes",
                          tensor_label(out), oq_shape_str(out, a, sizeof a), (int)o->batch_axis,
                          (int)o->seq_axis);
    return OQ_OK;
}

static oq_status check_args(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *o,
                            oq_err *err)
{
    char a[128], b[128];
    if (!oq_dtype_size(out->dtype) || !oq_dtype_size(ref->dtype))
        return oq_err_set(err, OQ_ERR_SHAPE, "output '%s' (%s) and reference (%s): a dtype ortqual does not know",
                          tensor_label(out), oq_dtype_name(out->dtype), oq_dtype_name(ref->dtype));
    if (o->check_padding < OQ_PADDING_REPORT || o->check_padding > OQ_PADDING_AS_REFERENCE)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "check_padding %d is not a padding rule", o->check_padding);
    int same = out->ndim == ref->ndim;
    for (int32_t d = 0; same && d < out->ndim; d++) same = out->shape[d] == ref->shape[d];
    if (!same)
        return oq_err_set(err, OQ_ERR_SHAPE, "output '%s' shape %s does not match reference shape %s",
                          tensor_label(out), oq_shape_str(out, a, sizeof a), oq_shape_str(ref, b, sizeof b));
    if (!(o->tol.rtol >= 0) || !(o->tol.atol >= 0) || !isfinite(o->tol.rtol) || !isfinite(o->tol.atol))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance rtol=%g atol=%g: both must be finite and >= 0",
                          o->tol.rtol, o->tol.atol);
    if (o->worst_k < 0 || o->worst_k > OQ_COMPARE_MAX_WORST)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "worst_k %d outside 0..%d", (int)o->worst_k,
                          OQ_COMPARE_MAX_WORST);
    oq_status st = check_axes(out, o, err);
    if (st || !o->lengths) return st;
    int64_t L = out->shape[o->seq_axis];
    for (int64_t i = 0; i < out->shape[o->batch_axis]; i++)
        if (o->lengths[i] < 0 || o->lengths[i] > L)
            return oq_err_set(err, OQ_ERR_MASK, "output '%s': event %" PRId64 " length %" PRId64
                              " is outside 0..%" PRId64, tensor_label(out), i, o->lengths[i], L);
    return OQ_OK;
}

static void unravel(const oq_tensor *t, int64_t index, int64_t *coord)
{
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        coord[d] = t->shape[d] ? index % t->shape[d] : 0;
        index = t->shape[d] ? index / t->shape[d] : 0;
    }
}

/* Keep the K largest keys, largest first; ties keep the earlier element. */
static void worst_insert(oq_compare_result *r, double *keys, int32_t k, double key,
                         const oq_compare_elem *e)
{
    if (k == 0 || (r->worst_count == k && !(key > keys[k - 1]))) return;
    int32_t pos = r->worst_count < k ? r->worst_count++ : k - 1;
    while (pos > 0 && key > keys[pos - 1]) {
        keys[pos] = keys[pos - 1];
        r->worst[pos] = r->worst[pos - 1];
        pos--;
    }
    keys[pos] = key;
    r->worst[pos] = *e;
}

/* The edges, computed once (as oq_hist_edge did with pow on every call: ~6 pow per element
 * of a comparison); the same doubles, so a bin never changes. Past the last edge a NaN,
 * which no value is at or above (bin_nonneg). */
static double hist_edges[OQ_HIST_BINS + 2];
static once_flag hist_once = ONCE_FLAG_INIT;

/* The last k with edge(k) <= v, for edge(0) <= v < edge(OQ_HIST_BINS) (normal doubles):
 * guessed from v's binary exponent (an octave spans ~1.2 bins), then settled on the edges, a
 * step or two. The edges must be ready. */
static int bin_in_range(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023; /* 2^e <= v < 2^(e+1) */
    int k = (int)((e * 0.30102999566398120 - OQ_HIST_MIN_EXP) * OQ_HIST_PER_DECADE);
    k = k < 0 ? 0 : k >= OQ_HIST_BINS ? OQ_HIST_BINS - 1 : k;
    while (k > 0 && v < hist_edges[k]) k--;
    while (k < OQ_HIST_BINS - 1 && v >= hist_edges[k + 1]) k++;
    return k;
}

/* Quarter octaves (a binary exponent and the mantissa's top two bits) from below edge(0) to
 * above edge(OQ_HIST_BINS): a bin spans 0.83 of an octave, so a quarter holds one edge at
 * most, and the bin of its lower bound is the value's or the one before it. Entry 0 stands
 * for every quarter below 2^OCTAVE_LO (zero and subnormals too), the last for every one from
 * 2^(OCTAVE_HI + 1) up (infinity too). */
#define OCTAVE_LO (-61) /* 2^-61 < 1e-18 */
#define OCTAVE_HI 20    /* 2^20 > 1e6 */
#define QUARTERS ((OCTAVE_HI - OCTAVE_LO + 1) * 4 + 2)
static int16_t quarter_bin[QUARTERS];

static void hist_edges_init(void)
{
    for (int k = 0; k <= OQ_HIST_BINS; k++) hist_edges[k] = pow(10.0, OQ_HIST_MIN_EXP + (double)k / OQ_HIST_PER_DECADE);
    hist_edges[OQ_HIST_BINS + 1] = NAN;
    quarter_bin[0] = -1;
    quarter_bin[QUARTERS - 1] = OQ_HIST_BINS;
    for (int i = 0; i < QUARTERS - 2; i++) {
        double low = ldexp(1.0 + (i % 4) / 4.0, OCTAVE_LO + i / 4);
        quarter_bin[i + 1] = (int16_t)(low < hist_edges[0]                ? -1
                                       : low >= hist_edges[OQ_HIST_BINS] ? OQ_HIST_BINS
                                                                         : bin_in_range(low));
    }
}

/* The bin of v >= 0, not NaN: -1 below edge(0) (zero too), OQ_HIST_BINS at or above the
 * last edge. Its quarter octave's bin, or the next when v is at or above that one's upper
 * edge; no branch, as which way that goes is a coin toss. */
static inline int bin_nonneg(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int64_t q = (int64_t)(bits >> 50) - (OCTAVE_LO + 1023) * 4 + 1; /* exponent and 2 bits */
    q = q < 0 ? 0 : q > QUARTERS - 1 ? QUARTERS - 1 : q;
    int k = quarter_bin[q];
    return k + (v >= hist_edges[k + 1]);
}

/* The bin of any v: -1 for NaN and v < edge(0). */
static inline int bin_of(double v)
{
    return v >= hist_edges[0] ? bin_nonneg(v) : -1;
}

int oq_hist_bin(double v)
{
    call_once(&hist_once, hist_edges_init);
    return bin_of(v);
}

double oq_hist_edge(int k)
{
    if (k < 0 || k > OQ_HIST_BINS) return pow(10.0, OQ_HIST_MIN_EXP + (double)k / OQ_HIST_PER_DECADE);
    call_once(&hist_once, hist_edges_init);
    return hist_edges[k];
}

static void hist_add(oq_log_hist *h, double v)
{
    if (v == 0) {
        h->zero++;
        return;
    }
    int k = bin_of(v);
    if (k < 0) h->below++;
    else if (k == OQ_HIST_BINS) h->above++;
    else h->bins[k]++;
}

static void mag_add(oq_mag_hist *m, double ref_abs, double ad, int over)
{
    int slot = ref_abs == 0 ? 0 : bin_of(ref_abs) + 1;
    m->count[slot]++;
    if (ad > m->max_abs[slot]) m->max_abs[slot] = ad;
    m->over_tol[slot] += over;
}

/* Running sums over the valid, finite elements. */
struct sums {
    double abs, sq, ref_sq;
    int64_t finite;
    double tiny;    /* tiny_of(out->dtype), once per comparison */
    double failing; /* worst_failing's excess over its bound; -1 while none failed */
};

/* An element of an exact comparison as an integer: a sign and a magnitude hold int64 and
 * uint64 alike (a double rounds both past 2^53). A float side is one only when it is an
 * integer of magnitude below 2^64; `ok` is 0 for another (0.5, NaN, 1e30). */
typedef struct exact_int {
    uint64_t mag;
    int neg, ok;
} exact_int;

static exact_int exact_at(const oq_tensor *t, int64_t i)
{
    if (t->dtype == OQ_DTYPE_UINT64) return (exact_int){.mag = ((const uint64_t *)t->data)[i], .ok = 1};
    if (t->dtype == OQ_DTYPE_INT64) {
        int64_t v = ((const int64_t *)t->data)[i];
        return (exact_int){.mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v, .neg = v < 0, .ok = 1};
    }
    double v = oq_tensor_get_f64(t, i); /* exact for the narrower integers and bool */
    if (!(fabs(v) < 0x1p64) || v != trunc(v)) return (exact_int){0};
    return (exact_int){.mag = (uint64_t)fabs(v), .neg = v < 0, .ok = 1};
}

/* |got - expected| of an exact comparison, 0 exactly when they are equal: the integers'
 * difference, computed exactly and rounded once (exact below 2^53). A float side that is no
 * integer in range differs: |g - e| as doubles, which are at least 1 apart where that rounds
 * to 0 (an integer near 2^64 against a float from 2^64 up). */
static double exact_abs_diff(exact_int a, exact_int b, double g, double e)
{
    if (!a.ok || !b.ok) {
        double ad = fabs(g - e);
        return ad > 0 || isnan(ad) ? ad : 1.0;
    }
    if (a.neg != b.neg) return (double)a.mag + (double)b.mag; /* one is not 0: neg is never -0 */
    return (double)(a.mag > b.mag ? a.mag - b.mag : b.mag - a.mag);
}

/* An exact comparison's value as text: every digit of an integer, a float's fewest. */
static void exact_text(exact_int v, double d, char *buf, size_t n)
{
    if (v.ok) snprintf(buf, n, "%s%" PRIu64, v.neg ? "-" : "", v.mag);
    else oq_real_str(d, 6, buf, n);
}

/* Element i as the result keeps it: an exact comparison's values as text too. */
static oq_compare_elem elem_of(const oq_compare_result *r, const oq_tensor *out, const oq_tensor *ref, int64_t i,
                               double g, double e, double ad)
{
    oq_compare_elem el = {.index = i, .got = g, .expected = e, .abs_diff = ad};
    unravel(out, i, el.coord);
    if (r->exact) {
        exact_text(exact_at(out, i), g, el.got_text, sizeof el.got_text);
        exact_text(exact_at(ref, i), e, el.expected_text, sizeof el.expected_text);
    }
    return el;
}

/* A failing element (`excess` over its bound, > 0; +inf for a non-finite one) further over
 * its bound than the one kept becomes worst_failing: rare, so out of the loop. */
static __attribute__((noinline)) void note_failing(oq_compare_result *r, struct sums *s, const oq_tensor *out,
                                                   const oq_tensor *ref, int64_t i, double g, double e, double ad,
                                                   double excess)
{
    if (!(excess > s->failing)) return;
    s->failing = excess;
    r->worst_failing = elem_of(r, out, ref, i, g, e, ad);
}

/* An exact comparison's |d| (0: equal), or a float one's. */
static double abs_diff_of(const oq_compare_result *r, const oq_tensor *out, const oq_tensor *ref, int64_t i,
                          double g, double e)
{
    return r->exact ? exact_abs_diff(exact_at(out, i), exact_at(ref, i), g, e) : fabs(g - e);
}

static void visit_valid(oq_compare_result *r, struct sums *s, double *keys, const oq_compare_opts *o,
                        const oq_tensor *out, const oq_tensor *ref, int64_t i, double g, double e)
{
    if (o->inf_match && isinf(e) && g == e) {
        r->inf_matched++;
        return;
    }
    double ad = abs_diff_of(r, out, ref, i, g, e);
    double d = r->exact ? ad : g - e; /* the sums take d^2 only */
    int finite = isfinite(g) && isfinite(e);
    if (isnan(g)) r->nan_count++;
    else if (isinf(g)) r->inf_count++;
    if (isnan(e)) r->ref_nan_count++;
    else if (isinf(e)) r->ref_inf_count++;
    if (finite) {
        double rel = ad / fmax(fabs(e), s->tiny);
        if (ad > r->max_abs) r->max_abs = ad;
        if (rel > r->max_rel) r->max_rel = rel;
        s->abs += ad;
        s->sq += d * d;
        s->ref_sq += e * e;
        s->finite++;
        double bound = r->exact ? 0 : o->tol.atol + o->tol.rtol * fabs(e);
        int over = ad > bound;
        r->over_tol += over;
        if (over) note_failing(r, s, out, ref, i, g, e, ad, ad - bound);
        if (fabs(e) > r->max_abs_ref) r->max_abs_ref = fabs(e);
        hist_add(&r->err_hist, ad);
        mag_add(&r->by_ref, fabs(e), ad, over);
    } else {
        r->over_tol++; /* NaN or Inf never passes */
        note_failing(r, s, out, ref, i, g, e, ad, INFINITY);
    }
    double key = !finite ? INFINITY : ad;
    if (o->worst_k && (r->worst_count < o->worst_k || key > keys[o->worst_k - 1])) {
        oq_compare_elem el = elem_of(r, out, ref, i, g, e, ad);
        worst_insert(r, keys, o->worst_k, key, &el);
    }
}

static void visit_padded(oq_compare_result *r, const oq_tensor *out, const oq_tensor *ref, int64_t i,
                         double g)
{
    if (g == 0.0) return; /* -0.0 is zero too */
    if (r->pad_nonzero++ == 0) r->first_pad_nonzero = elem_of(r, out, ref, i, g, oq_tensor_get_f64(ref, i), fabs(g));
    if (!isfinite(g)) r->pad_nonfinite++;
}

double oq_rel_l2_of(double sum_sq, double sum_ref_sq)
{
    return sum_ref_sq > 0 ? sqrt(sum_sq / sum_ref_sq) : sum_sq > 0 ? INFINITY : 0.0;
}

static void finish(oq_compare_result *r, const struct sums *s, const oq_compare_opts *o)
{
    if (s->finite) {
        r->mean_abs = s->abs / (double)s->finite;
        r->rms = sqrt(s->sq / (double)s->finite);
    }
    r->rel_l2 = oq_rel_l2_of(s->sq, s->ref_sq);
    oq_compare_metrics_shown(r, s->finite);
    r->sum_abs = s->abs;
    r->sum_sq = s->sq;
    r->sum_ref_sq = s->ref_sq;
    r->padding_rule = o->check_padding;
    r->padding_checked = o->check_padding == OQ_PADDING_ZERO ||
                         (o->check_padding == OQ_PADDING_AS_REFERENCE && r->ref_pad_nonzero == 0);
    r->passed = oq_compare_judge_numbers(r, NULL, 0);
}

int oq_compare_is_exact(oq_dtype out, oq_dtype ref) { return !oq_dtype_is_float(out) || !oq_dtype_is_float(ref); }

int oq_compare_judge_numbers(const oq_compare_result *r, char *why, size_t n)
{
    char none[64], a[32];
    if (!why || !n) {
        why = none;
        n = sizeof none;
    }
    *why = '\0';
    if (!r) return 0;
    /* no element within atol + rtol |ref| has |d| above that bound at the largest |ref| (the
     * rounding of both is monotone): a max_abs above it says an element failed */
    double bound = r->tol.atol + r->tol.rtol * r->max_abs_ref;
    if (r->nan_count) snprintf(why, n, "nan %" PRId64, r->nan_count);
    else if (r->inf_count) snprintf(why, n, "inf %" PRId64, r->inf_count);
    else if (r->over_tol) snprintf(why, n, "over_tolerance %" PRId64, r->over_tol);
    else if (r->ref_nan_count || r->ref_inf_count)
        snprintf(why, n, "reference_nonfinite nan %" PRId64 " inf %" PRId64, r->ref_nan_count, r->ref_inf_count);
    else if (r->padding_checked && r->pad_nonzero) snprintf(why, n, "padding nonzero %" PRId64, r->pad_nonzero);
    else if (!(r->max_abs <= bound))
        snprintf(why, n, "max_abs %s above atol + rtol * max_abs_ref = %.6g",
                 oq_real_over_str(r->max_abs, bound, 3, a, sizeof a), bound);
    return !*why;
}

/* Element i as a double: the float dtypes of outputs read inline, the others through the
 * tensor's accessor. */
static inline double value_at(const oq_tensor *t, int64_t i)
{
    if (t->dtype == OQ_DTYPE_FLOAT32) return ((const float *)t->data)[i];
    if (t->dtype == OQ_DTYPE_FLOAT64) return ((const double *)t->data)[i];
    return oq_tensor_get_f64(t, i);
}

/* The index along one axis of the element a flat walk is at: `stride` elements per step,
 * wrapping after `size` steps. An axis of -1 stays at 0. */
struct axis_walk {
    int64_t at, in, stride, size;
};

static struct axis_walk walk_of(const oq_tensor *t, int32_t axis)
{
    struct axis_walk w = {0, 0, 1, 1};
    if (axis < 0) {
        w.stride = INT64_MAX;
        return w;
    }
    for (int32_t d = axis + 1; d < t->ndim; d++) w.stride *= t->shape[d];
    w.size = t->shape[axis];
    return w;
}

static inline void walk_step(struct axis_walk *w)
{
    if (++w->in < w->stride) return;
    w->in = 0;
    if (++w->at == w->size) w->at = 0;
}

/* The walk `run` elements on at once, for a run that divides its stride. */
static inline void walk_by(struct axis_walk *w, int64_t run)
{
    if ((w->in += run) < w->stride) return;
    w->in = 0;
    if (++w->at == w->size) w->at = 0;
}

/* The walk along a mask axis: none without lengths (the axes are not checked then). */
static struct axis_walk mask_walk(const oq_tensor *t, const oq_compare_opts *o, int32_t axis)
{
    return walk_of(t, o->lengths ? axis : -1);
}

/* Every element through value_at and visit_valid, for any dtypes: the rule the fast path
 * below must match bit for bit. */
static void compare_generic(oq_compare_result *res, struct sums *s, double *keys, const oq_compare_opts *o,
                            const oq_tensor *out, const oq_tensor *ref)
{
    /* An element's event and position, counted along as i goes (no division per element). */
    struct axis_walk bw = mask_walk(out, o, o->batch_axis), sw = mask_walk(out, o, o->seq_axis);
    for (int64_t i = 0; i < res->num_elements; i++, walk_step(&bw), walk_step(&sw)) {
        double g = value_at(out, i);
        int valid = !o->lengths || sw.at < o->lengths[bw.at];
        double e = value_at(ref, i);
        if (valid) {
            res->num_valid++;
            visit_valid(res, s, keys, o, out, ref, i, g, e);
        } else {
            res->num_padded++;
            res->ref_pad_nonzero += e != 0.0;
            visit_padded(res, out, ref, i, g);
        }
    }
}

/* What a valid element must exceed to enter the worst list: anything while it is not full,
 * nothing when there is none. */
static inline double worst_floor(const oq_compare_result *r, const double *keys, int32_t k)
{
    return !k ? INFINITY : r->worst_count < k ? -1.0 : keys[k - 1];
}

/* A valid element where a value is NaN or Inf: rare, so out of the loop. */
static __attribute__((noinline)) void visit_nonfinite(oq_compare_result *r, struct sums *s, double *keys,
                                                      const oq_compare_opts *o, const oq_tensor *out,
                                                      const oq_tensor *ref, int64_t i, double g, double e)
{
    visit_valid(r, s, keys, o, out, ref, i, g, e);
}

/* A valid finite element above the worst list's floor: rare once the list is full. */
static __attribute__((noinline)) void visit_worst(oq_compare_result *r, double *keys, const oq_compare_opts *o,
                                                  const oq_tensor *out, int64_t i, double g, double e,
                                                  double ad)
{
    oq_compare_elem el = {.index = i, .got = g, .expected = e, .abs_diff = ad};
    unravel(out, i, el.coord);
    worst_insert(r, keys, o->worst_k, ad, &el);
}

/* Float32 against float64 with a tolerance, what every validation batch compares. The mask
 * is the same over a run of elements of one event and position (the axes past both mask
 * axes), so it is looked at once a run, not once an element. A valid element takes
 * visit_valid's arithmetic in the same order (the sums sequential over i: the same doubles),
 * with the maxima and sums in registers and one test of finiteness first: g - e is finite
 * exactly when both are (|g| < 2^128 cannot carry a finite e past DBL_MAX). */
static void compare_f32_f64(oq_compare_result *r, struct sums *s, double *keys, const oq_compare_opts *o,
                            const oq_tensor *out, const oq_tensor *ref)
{
    const float *gp = out->data;
    const double *ep = ref->data;
    const double atol = o->tol.atol, rtol = o->tol.rtol, tiny = s->tiny;
    double max_abs = r->max_abs, max_rel = r->max_rel, max_abs_ref = r->max_abs_ref;
    double sum_abs = s->abs, sum_sq = s->sq, sum_ref_sq = s->ref_sq;
    double floor = o->worst_k ? -1.0 : INFINITY; /* worst_floor of the empty list */
    int64_t n = r->num_elements, valid = 0, finite = 0, over_tol = 0, ref_pad_nonzero = 0;
    int64_t err[OQ_HIST_BINS + 3] = {0}; /* err_hist as one array: zero, below, the bins, above */
    oq_mag_hist *m = &r->by_ref;
    struct axis_walk bw = mask_walk(out, o, o->batch_axis), sw = mask_walk(out, o, o->seq_axis);
    int64_t run = !o->lengths ? n : bw.stride < sw.stride ? bw.stride : sw.stride;
    for (int64_t i = 0; i < n; i += run, walk_by(&bw, run), walk_by(&sw, run)) {
        if (o->lengths && sw.at >= o->lengths[bw.at]) {
            for (int64_t j = i; j < i + run; j++) {
                ref_pad_nonzero += ep[j] != 0.0;
                if (gp[j] != 0.0f) visit_padded(r, out, ref, j, gp[j]);
            }
            continue;
        }
        valid += run;
        for (int64_t j = i; j < i + run; j++) {
            double g = gp[j], e = ep[j];
            double d = g - e, ad = fabs(d);
            if (__builtin_expect(!(ad <= DBL_MAX), 0)) {
                visit_nonfinite(r, s, keys, o, out, ref, j, g, e);
                floor = worst_floor(r, keys, o->worst_k);
                continue;
            }
            double ae = fabs(e);
            double rel = ad / (ae > tiny ? ae : tiny); /* fmax without NaNs, and no call */
            max_abs = ad > max_abs ? ad : max_abs;
            max_rel = rel > max_rel ? rel : max_rel;
            sum_abs += ad;
            sum_sq += d * d;
            sum_ref_sq += e * e;
            finite++;
            double bound = atol + rtol * ae;
            int over = ad > bound;
            over_tol += over;
            if (__builtin_expect(over, 0)) note_failing(r, s, out, ref, j, g, e, ad, ad - bound);
            max_abs_ref = ae > max_abs_ref ? ae : max_abs_ref;
            err[bin_nonneg(ad) + 2 - (ad == 0)]++;
            int slot = bin_nonneg(ae) + 1; /* 0 for zero too, as in mag_add */
            m->count[slot]++;
            m->max_abs[slot] = ad > m->max_abs[slot] ? ad : m->max_abs[slot];
            if (over) m->over_tol[slot]++;
            if (ad > floor) {
                visit_worst(r, keys, o, out, j, g, e, ad);
                floor = worst_floor(r, keys, o->worst_k);
            }
        }
    }
    r->num_valid = valid;
    r->num_padded = n - valid;
    r->ref_pad_nonzero += ref_pad_nonzero;
    r->max_abs = max_abs;
    r->max_rel = max_rel;
    r->max_abs_ref = max_abs_ref;
    r->over_tol += over_tol;
    r->err_hist.zero += err[0];
    r->err_hist.below += err[1];
    for (int k = 0; k < OQ_HIST_BINS; k++) r->err_hist.bins[k] += err[k + 2];
    r->err_hist.above += err[OQ_HIST_BINS + 2];
    s->abs = sum_abs;
    s->sq = sum_sq;
    s->ref_sq = sum_ref_sq;
    s->finite += finite;
}

static oq_status compare_tensors(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *opts,
                                 oq_compare_result *res, int fast, oq_err *err)
{
    oq_compare_opts o = opts ? *opts : oq_compare_opts_default(out->dtype);
    oq_status st = check_args(out, ref, &o, err);
    if (st) return st;

    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s", out->name ? out->name : ref->name ? ref->name : "");
    res->ndim = out->ndim;
    memcpy(res->shape, out->shape, sizeof res->shape);
    res->out_dtype = out->dtype;
    res->ref_dtype = ref->dtype;
    res->exact = oq_compare_is_exact(out->dtype, ref->dtype);
    res->masked = o.lengths != NULL;
    res->tol = res->exact ? (oq_tolerance){0, 0} : o.tol;
    res->num_elements = oq_tensor_numel(out);

    struct sums s = {.tiny = tiny_of(out->dtype), .failing = -1.0};
    double keys[OQ_COMPARE_MAX_WORST];
    call_once(&hist_once, hist_edges_init); /* the histograms' edges, for bin_of */
    if (fast && out->dtype == OQ_DTYPE_FLOAT32 && ref->dtype == OQ_DTYPE_FLOAT64) /* never exact */
        compare_f32_f64(res, &s, keys, &o, out, ref);
    else
        compare_generic(res, &s, keys, &o, out, ref);
    finish(res, &s, &o);
    return OQ_OK;
}

oq_status oq_compare_tensors(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *opts,
                             oq_compare_result *res, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED(err, ref);
    OQ_NEED(err, res);
    return compare_tensors(out, ref, opts, res, 1, err);
}

oq_status oq_compare_check_kind(const oq_tensor *ref, const char *name, oq_dtype output_type, const char *path,
                                oq_err *err)
{
    /* a file holds bfloat16 only as ml_dtypes' 2-byte void, which is no number for another type */
    if (ref->dtype == OQ_DTYPE_BFLOAT16 && output_type && output_type != OQ_DTYPE_BFLOAT16)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "%s: expected '%s' is ml_dtypes.bfloat16 ('<V2'), read so only for a bfloat16 output; the "
                          "model's output is %s",
                          path, name, oq_dtype_name(output_type));
    if (!output_type || !oq_dtype_is_float(ref->dtype) == !oq_dtype_is_float(output_type)) return OQ_OK;
    return oq_err_set(err, OQ_ERR_SHAPE, "%s: expected '%s' is %s; the model's output is %s", path, name,
                      oq_dtype_name(ref->dtype), oq_dtype_name(output_type));
}

oq_status oq_compare_tensors_generic(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *opts,
                                     oq_compare_result *res, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED(err, ref);
    OQ_NEED(err, res);
    return compare_tensors(out, ref, opts, res, 0, err);
}

/* ---- reporting ---- */

/* NaN without its sign: printf writes a NaN whose sign bit is set (what x86 arithmetic makes) as
 * "-nan", which reads like a negative number. */
static double plain_nan(double v)
{
    return isnan(v) ? fabs(v) : v;
}

/* An element's value in the line: an exact comparison's every digit, else 9 digits. */
static const char *value_str(const char *text, double v, char *buf, size_t n)
{
    if (*text) return text;
    snprintf(buf, n, "%.9g", plain_nan(v));
    return buf;
}

/* An error in the line: an exact comparison's integer difference in full (3 digits read
 * 123456789013 - 1 as 1.23e+11 - 1), else as oq_real_over_str. */
static char *diff_str(const oq_compare_result *r, double v, double bound, char *buf, size_t n)
{
    if (r->exact && v == trunc(v) && fabs(v) < 0x1p64) snprintf(buf, n, "%.0f", v);
    else oq_real_over_str(v, bound, 3, buf, n);
    return buf;
}

char *oq_compare_result_str(const oq_compare_result *r, char *buf, size_t n)
{
    return oq_compare_result_str_vs(r, NULL, buf, n);
}

char *oq_compare_result_str_vs(const oq_compare_result *r, const char *side, char *buf, size_t n)
{
    return oq_compare_result_str_at(r, side, "", buf, n);
}

char *oq_compare_result_str_at(const oq_compare_result *r, const char *side, const char *where, char *buf, size_t n)
{
    if (!n || !buf) return buf;
    if (!r) {
        buf[0] = '\0';
        return buf;
    }
    size_t used = 0;
    buf[0] = '\0';
    oq_buf_appendf(buf, n, &used, "%s%s%s valid=%" PRId64 "/%" PRId64, r->name, r->name[0] ? ": " : "",
           r->passed ? "PASS" : "FAIL", r->num_valid, r->num_elements);
    double max_abs = r->max_abs;
    /* a failed output's max_abs and max_rel read back above atol and rtol however close they are
     * (3 digits printed a max_rel over rtol 0.10008144378662108 as 0.1) */
    int judged = !r->passed && !r->exact;
    char ma[32], mr[32];
    diff_str(r, max_abs, judged ? r->tol.atol : INFINITY, ma, sizeof ma);
    oq_real_over_str(r->max_rel, judged ? r->tol.rtol : INFINITY, 3, mr, sizeof mr);
    oq_buf_appendf(buf, n, &used, " max_abs=%s max_rel=%s mean_abs=%.3g rms=%.3g rel_l2=%.3g", ma, mr, r->mean_abs, r->rms,
           r->rel_l2);
    oq_buf_appendf(buf, n, &used, " over_tol=%" PRId64 " nan=%" PRId64 " inf=%" PRId64, r->over_tol, r->nan_count,
           r->inf_count);
    if (r->ref_nan_count || r->ref_inf_count)
        oq_buf_appendf(buf, n, &used, " %s nan=%" PRId64 " inf=%" PRId64, side ? side : "REFERENCE", r->ref_nan_count,
               r->ref_inf_count);
    if (r->masked) oq_buf_appendf(buf, n, &used, " pad_nonzero=%" PRId64 "/%" PRId64 "%s", r->pad_nonzero, r->num_padded,
                          r->padding_checked ? ""
                          : r->padding_rule == OQ_PADDING_REPORT ? " (reported, not judged)"
                                                                 : " (not judged: the reference is not zero there)");
    else oq_buf_appendf(buf, n, &used, " no padding (every element valid)");
    if (r->exact) oq_buf_appendf(buf, n, &used, " (exact)");
    else {
        char rt[32], at[32]; /* as given: 0.10008144378662108, not 0.1 */
        oq_buf_appendf(buf, n, &used, " (rtol=%s atol=%s)", oq_real_str(r->tol.rtol, 6, rt, sizeof rt),
               oq_real_str(r->tol.atol, 6, at, sizeof at));
    }
    char c[160];
    if (!r->passed && (r->over_tol || r->worst_count)) {
        /* the element that failed the most, not the largest |d|, which a large |ref| may allow */
        const oq_compare_elem *w = r->over_tol ? &r->worst_failing : &r->worst[0];
        char d[32], g[32], e[32]; /* |d| above its own bound, atol + rtol * |expected|, however close */
        oq_dims_str(w->coord, r->ndim, c, sizeof c);
        oq_buf_appendf(buf, n, &used, "; worst %s%s got %s expected %s |d|=%s", c, where ? where : "",
               value_str(w->got_text, w->got, g, sizeof g),
               value_str(w->expected_text, w->expected, e, sizeof e),
               diff_str(r, w->abs_diff, judged ? r->tol.atol + r->tol.rtol * fabs(w->expected) : INFINITY, d, sizeof d));
    }
    if (r->vacuous) {
        char why[200];
        oq_buf_appendf(buf, n, &used, "; %s", oq_compare_vacuous_str(r, why, sizeof why));
    }
    if (r->padding_checked && r->pad_nonzero) {
        const oq_compare_elem *p = &r->first_pad_nonzero;
        char g[32];
        oq_dims_str(p->coord, r->ndim, c, sizeof c);
        oq_buf_appendf(buf, n, &used, "; first non-zero padding %s = %s", c, value_str(p->got_text, p->got, g, sizeof g));
    }
    return buf;
}

/* The largest |value| of the side a pass at atol would not tell from zeros. */
static double vacuous_largest(const oq_compare_result *r)
{
    return r->max_abs_ref > 0 ? r->max_abs_ref : r->max_abs;
}

int oq_compare_judge_vacuous(oq_compare_result *r, oq_tolerance preset)
{
    if (!r) return 0;
    /* zeros in place of the reference pass where |ref| <= atol + rtol |ref| at every compared
     * element; with rtol < 1 that is at the largest |ref| (the compare's own bound, so its
     * rounding too). With the reference all zeros, any output within atol of it does (|out| <=
     * atol): zeros in its place too. The preset's own tolerance is exempt: an output whose
     * values all lie within it is not the user's choice. */
    double largest = vacuous_largest(r);
    int preset_tol = r->tol.atol == preset.atol && r->tol.rtol == preset.rtol;
    if (r->passed && !r->exact && r->num_valid > 0 && !preset_tol && largest > 0 &&
        largest <= r->tol.atol + r->tol.rtol * r->max_abs_ref) {
        r->passed = 0;
        r->vacuous = 1;
    }
    return r->vacuous;
}

int oq_compare_judge_atol(oq_compare_result *r, double preset_atol)
{
    return oq_compare_judge_vacuous(r, (oq_tolerance){.rtol = r ? r->tol.rtol : 0, .atol = preset_atol});
}

char *oq_compare_vacuous_str(const oq_compare_result *r, char *buf, size_t n)
{
    if (!n || !buf) return buf;
    char at[32], rt[32];
    double largest = r ? vacuous_largest(r) : 0;
    if (!r) *buf = '\0';
    else if (r->tol.atol >= largest)
        snprintf(buf, n, "its atol %s is at least its largest |value| %.6g: zeros would pass in its place (a "
                 "tolerance that cannot fail: lower its atol)", oq_real_str(r->tol.atol, 6, at, sizeof at), largest);
    else if (r->tol.rtol >= 1)
        snprintf(buf, n, "its rtol %s is 1 or more: zeros would pass in its place (a tolerance that cannot fail: "
                 "lower its rtol)", oq_real_str(r->tol.rtol, 6, rt, sizeof rt));
    else
        snprintf(buf, n, "its atol %s and rtol %s pass zeros for every |value| up to %.6g, and its largest |value| "
                 "is %.6g: zeros would pass in its place (a tolerance that cannot fail: lower its atol or rtol)",
                 oq_real_str(r->tol.atol, 6, at, sizeof at), oq_real_str(r->tol.rtol, 6, rt, sizeof rt),
                 r->tol.atol / (1 - r->tol.rtol), largest);
    return buf;
}

double oq_compare_max_abs_shown(int64_t nan, int64_t inf, int64_t ref_nan, int64_t ref_inf, double max_abs)
{
    if (nan || ref_nan) return NAN;
    if (inf || ref_inf) return INFINITY;
    return max_abs;
}

void oq_compare_metrics_shown(oq_compare_result *r, int64_t finite_pairs)
{
    /* a max over the finite pairs alone (0 when none is) would read like a pass */
    double shown = oq_compare_max_abs_shown(r->nan_count, r->inf_count, r->ref_nan_count, r->ref_inf_count, r->max_abs);
    if (!isfinite(shown)) r->max_abs = r->max_rel = shown;
    if (r->num_valid > 0 && finite_pairs == 0) r->mean_abs = r->rms = r->rel_l2 = NAN;
}

int oq_compare_max_abs_worse(double a, double b)
{
    if (isnan(b)) return 0;
    if (isnan(a)) return 1;
    return a > b;
}

int oq_compare_infinities_only(int64_t valid, int64_t inf_matched)
{
    return valid - inf_matched <= 0; /* no valid element at all (a 0-sized axis) judged nothing either */
}

int oq_compare_judged_nothing(const oq_compare_result *res)
{
    return res && oq_compare_infinities_only(res->num_valid, res->inf_matched);
}

int oq_compare_record_judged_nothing(const json_t *rec)
{
    return oq_compare_infinities_only(json_integer_value(json_object_get(rec, "num_valid")),
                                      json_integer_value(json_object_get(rec, "inf_matched")));
}

const char *oq_compare_not_compared_str(char *buf, size_t n, long long valid, const char *holder)
{
    if (!buf || !n) return buf;
    if (valid > 0) snprintf(buf, n, OQ_COMPARE_NOT_COMPARED_FMT, valid, holder ? holder : "the reference");
    else snprintf(buf, n, OQ_COMPARE_NOT_COMPARED_EMPTY);
    return buf;
}

char *oq_compare_infinities_only_str(const char *whose, const char *what, int64_t valid, const char *reference,
                                     char *buf, size_t n)
{
    if (valid <= 0)
        snprintf(buf, n, "no value was compared: no valid element in %s %s (a 0-sized axis: nothing judged)", whose,
                 what);
    else
        snprintf(buf, n, "no finite value was compared: every valid element of %s %s is an infinity %s holds too "
                 "(counted in inf_matched: equal, but no value judged)", whose, what, reference);
    return buf;
}

char *oq_compare_one_output_infinities_str(const char *whose, const char *name, int64_t valid, const char *reference)
{
    char what[160], why[800], *text = NULL;
    snprintf(what, sizeof what, "output '%.128s'", name);
    oq_compare_infinities_only_str(whose, what, valid, reference, why, sizeof why);
    return asprintf(&text, "%s; its other outputs were compared, but a pass would claim '%s' too", why, name) < 0 ? NULL
                                                                                                               : text;
}

/* JSON cannot hold NaN/Inf: write them as strings. NULL on allocation failure. */
static json_t *num(double v)
{
    if (isnan(v)) return json_string("nan");
    if (isinf(v)) return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

static json_t *coord_json(const oq_compare_result *r, const oq_compare_elem *e)
{
    json_t *a = json_array();
    for (int32_t d = 0; a && d < r->ndim; d++) json_array_append_new(a, json_integer(e->coord[d]));
    return a;
}

/* A value of an element: an exact comparison's as its text, a string of digits (JSON readers
 * such as JavaScript's and jq read a number as a double, which rounds int64 past 2^53, and
 * jansson has no uint64 past 2^63), a float comparison's as a number. */
static json_t *value_json(const char *text, double v)
{
    return *text ? json_string(text) : num(v);
}

/* An error: an exact comparison's integer difference as a JSON integer, every digit (a real is
 * written with 10), a float one's as a number. */
static json_t *error_json(const oq_compare_result *r, double v)
{
    if (r->exact && v == trunc(v) && fabs(v) < 0x1p63) return json_integer((json_int_t)v);
    return num(v);
}

static json_t *elem_json(const oq_compare_result *r, const oq_compare_elem *e)
{
    return json_pack("{s:o, s:I, s:o, s:o, s:o}", "coord", coord_json(r, e), "index", (json_int_t)e->index,
                     "got", value_json(e->got_text, e->got), "expected", value_json(e->expected_text, e->expected),
                     "abs_diff", error_json(r, e->abs_diff));
}

/* [first, last] of the non-zero entries of a[0..n); first > last when all are zero. */
static void nonzero_range(const int64_t *a, int n, int *first, int *last)
{
    *first = 0;
    *last = -1;
    while (*first < n && !a[*first]) ++*first;
    for (int i = n - 1; i >= *first; i--)
        if (a[i]) {
            *last = i;
            break;
        }
    if (*last < 0) *first = 0;
}

static json_t *int_range(const int64_t *a, int first, int last)
{
    json_t *j = json_array();
    for (int i = first; j && i <= last; i++) json_array_append_new(j, json_integer(a[i]));
    return j;
}

static json_t *err_hist_json(const oq_log_hist *h)
{
    int first, last;
    nonzero_range(h->bins, OQ_HIST_BINS, &first, &last);
    return json_pack("{s:i, s:i, s:i, s:o, s:I, s:I, s:I}", "min_exp", OQ_HIST_MIN_EXP, "per_decade",
                     OQ_HIST_PER_DECADE, "first", first, "counts", int_range(h->bins, first, last), "zero",
                     (json_int_t)h->zero, "below", (json_int_t)h->below, "above", (json_int_t)h->above);
}

static json_t *mag_slot_json(const oq_mag_hist *m, int slot)
{
    return json_pack("{s:I, s:f, s:I}", "count", (json_int_t)m->count[slot], "max_abs", m->max_abs[slot],
                     "over_tolerance", (json_int_t)m->over_tol[slot]);
}

static json_t *mag_hist_json(const oq_mag_hist *m)
{
    int first, last;
    nonzero_range(m->count + 1, OQ_HIST_BINS, &first, &last);
    json_t *mx = json_array();
    for (int i = first; mx && i <= last; i++) json_array_append_new(mx, json_real(m->max_abs[i + 1]));
    return json_pack("{s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o}", "min_exp", OQ_HIST_MIN_EXP, "per_decade",
                     OQ_HIST_PER_DECADE, "first", first, "count", int_range(m->count + 1, first, last),
                     "max_abs", mx, "over_tolerance", int_range(m->over_tol + 1, first, last), "below",
                     mag_slot_json(m, 0), "above", mag_slot_json(m, OQ_HIST_BINS + 1));
}

oq_status oq_compare_result_to_json(const oq_compare_result *r, json_t **out, oq_err *err)
{
    OQ_NEED(err, r);
    OQ_NEED(err, out);
    json_t *shape = json_array(), *worst = json_array();
    for (int32_t d = 0; shape && d < r->ndim; d++) json_array_append_new(shape, json_integer(r->shape[d]));
    for (int32_t i = 0; worst && i < r->worst_count; i++) json_array_append_new(worst, elem_json(r, &r->worst[i]));
    static const char *const rules[] = {"report", "zero", "as-reference"};
    json_t *padding = json_pack("{s:b, s:I, s:I, s:I, s:o, s:b, s:s, s:I}", "checked", r->padding_checked,
                                "padded", (json_int_t)r->num_padded, "nonzero", (json_int_t)r->pad_nonzero,
                                "nonfinite", (json_int_t)r->pad_nonfinite, "first_nonzero",
                                r->pad_nonzero ? elem_json(r, &r->first_pad_nonzero) : json_null(), "masked",
                                r->masked, "rule", rules[r->padding_rule], "reference_nonzero",
                                (json_int_t)r->ref_pad_nonzero);
    json_t *j = json_pack(
        "{s:s, s:b, s:o, s:s, s:s, s:{s:f, s:f}, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I,"
        " s:{s:I, s:I}, s:o, s:o}",
        "name", r->name, "passed", r->passed, "shape", shape, "dtype", oq_dtype_name(r->out_dtype),
        "reference_dtype", oq_dtype_name(r->ref_dtype), "tolerance", "rtol", r->tol.rtol, "atol",
        r->tol.atol, "num_elements", (json_int_t)r->num_elements, "num_valid", (json_int_t)r->num_valid,
        "max_abs", error_json(r, r->max_abs), "max_rel", num(r->max_rel), "mean_abs", num(r->mean_abs), "rms",
        num(r->rms), "rel_l2", num(r->rel_l2), "over_tolerance", (json_int_t)r->over_tol, "nan",
        (json_int_t)r->nan_count, "inf", (json_int_t)r->inf_count, "reference_nonfinite", "nan",
        (json_int_t)r->ref_nan_count, "inf", (json_int_t)r->ref_inf_count, "padding", padding, "worst",
        worst);
    if (j && (json_object_set_new(j, "max_abs_ref", json_real(r->max_abs_ref)) ||
              json_object_set_new(j, "inf_matched", json_integer((json_int_t)r->inf_matched)) ||
              json_object_set_new(j, "error_histogram", err_hist_json(&r->err_hist)) ||
              json_object_set_new(j, "error_by_magnitude", mag_hist_json(&r->by_ref)))) {
        json_decref(j);
        j = NULL;
    }
    if (j && r->over_tol && json_object_set_new(j, "worst_failing", elem_json(r, &r->worst_failing))) {
        json_decref(j);
        j = NULL;
    }
    if (!j) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory building the comparison JSON");
    if (r->exact) json_object_set_new(j, "exact", json_true());
    if (r->vacuous) json_object_set_new(j, "vacuous", json_true());
    if (oq_compare_judged_nothing(r)) json_object_set_new(j, "compared", json_false()); /* max_abs 0 is no error */
    *out = j;
    return OQ_OK;
}

/* ---- back from JSON ----------------------------------------------------------------- */

double oq_compare_value_back(const json_t *j, char *text, size_t n)
{
    const char *s = json_string_value(j);
    if (text && n) *text = '\0';
    if (!s) return json_is_number(j) ? json_number_value(j) : NAN;
    if (!strcmp(s, "nan")) return NAN;
    if (!strcmp(s, "inf") || !strcmp(s, "-inf")) return *s == '-' ? -INFINITY : INFINITY;
    if (text && n) snprintf(text, n, "%s", s);
    return strtod(s, NULL);
}

static int64_t int_of(const json_t *o, const char *key) { return json_integer_value(json_object_get(o, key)); }

double oq_compare_metric_back(const json_t *j)
{
    const char *s = json_string_value(j);
    if (!s) return json_is_number(j) ? json_number_value(j) : NAN;
    return !strcmp(s, "inf") ? INFINITY : !strcmp(s, "-inf") ? -INFINITY : NAN;
}

double oq_compare_record_max(const json_t *rec, const char *key)
{
    const json_t *refnf = json_object_get(rec, "reference_nonfinite");
    return oq_compare_max_abs_shown(int_of(rec, "nan"), int_of(rec, "inf"), int_of(refnf, "nan"), int_of(refnf, "inf"),
                                    oq_compare_metric_back(json_object_get(rec, key)));
}

static void elem_back(const json_t *j, oq_compare_elem *e)
{
    const json_t *coord = json_object_get(j, "coord");
    for (size_t d = 0; d < json_array_size(coord) && d < OQ_MAX_DIMS; d++)
        e->coord[d] = json_integer_value(json_array_get(coord, d));
    e->index = int_of(j, "index");
    e->got = oq_compare_value_back(json_object_get(j, "got"), e->got_text, sizeof e->got_text);
    e->expected = oq_compare_value_back(json_object_get(j, "expected"), e->expected_text, sizeof e->expected_text);
    e->abs_diff = oq_compare_metric_back(json_object_get(j, "abs_diff"));
}

/* a[first + i] = arr[i], for a trimmed array of the bins [0, n); 0 when it does not fit. */
static int ints_back(const json_t *arr, int first, int64_t *a, int n)
{
    if (json_array_size(arr) > (size_t)(n - first)) return 0;
    for (size_t i = 0; i < json_array_size(arr); i++) a[first + (int)i] = json_integer_value(json_array_get(arr, i));
    return 1;
}

/* The bins of a histogram record: those of this build, and `first` inside them. */
static int bins_back(const json_t *h, int *first)
{
    *first = (int)json_integer_value(json_object_get(h, "first"));
    return json_integer_value(json_object_get(h, "min_exp")) == OQ_HIST_MIN_EXP &&
           json_integer_value(json_object_get(h, "per_decade")) == OQ_HIST_PER_DECADE && *first >= 0 &&
           *first <= OQ_HIST_BINS;
}

static int err_hist_back(const json_t *h, oq_log_hist *e)
{
    int first;
    if (!h) return 1; /* a record from before the histograms */
    if (!bins_back(h, &first)) return 0;
    e->zero = int_of(h, "zero");
    e->below = int_of(h, "below");
    e->above = int_of(h, "above");
    return ints_back(json_object_get(h, "counts"), first, e->bins, OQ_HIST_BINS);
}

static void mag_slot_back(const json_t *o, oq_mag_hist *m, int slot)
{
    m->count[slot] = int_of(o, "count");
    m->max_abs[slot] = json_number_value(json_object_get(o, "max_abs"));
    m->over_tol[slot] = int_of(o, "over_tolerance");
}

static int mag_hist_back(const json_t *h, oq_mag_hist *m)
{
    int first;
    if (!h) return 1;
    if (!bins_back(h, &first)) return 0;
    const json_t *mx = json_object_get(h, "max_abs");
    if (json_array_size(mx) > (size_t)(OQ_HIST_BINS - first)) return 0;
    for (size_t i = 0; i < json_array_size(mx); i++)
        m->max_abs[first + 1 + (int)i] = json_number_value(json_array_get(mx, i));
    mag_slot_back(json_object_get(h, "below"), m, 0);
    mag_slot_back(json_object_get(h, "above"), m, OQ_HIST_BINS + 1);
    return ints_back(json_object_get(h, "count"), first, m->count + 1, OQ_HIST_BINS) &&
           ints_back(json_object_get(h, "over_tolerance"), first, m->over_tol + 1, OQ_HIST_BINS);
}

/* The record holds no sums: rebuilt from its means over the n finite pairs its histogram
 * counts, sum d^2 = n rms^2 and sum ref^2 = sum d^2 / rel_l2^2 (up to rounding; a record
 * without error cannot tell its ||ref||: 0). */
static void sums_of_means(oq_compare_result *r)
{
    const oq_log_hist *h = &r->err_hist;
    double n = (double)(h->zero + h->below + h->above);
    for (int i = 0; i < OQ_HIST_BINS; i++) n += (double)h->bins[i];
    r->sum_abs = r->mean_abs * n;
    r->sum_sq = r->rms * r->rms * n;
    r->sum_ref_sq = r->rel_l2 > 0 && isfinite(r->rel_l2) ? r->sum_sq / (r->rel_l2 * r->rel_l2) : 0.0;
}

oq_status oq_compare_result_from_json(const json_t *j, oq_compare_result *r, oq_err *err)
{
    memset(r, 0, sizeof *r);
    const json_t *shape = json_object_get(j, "shape"), *worst = json_object_get(j, "worst");
    const json_t *tol = json_object_get(j, "tolerance"), *pad = json_object_get(j, "padding");
    const json_t *refnf = json_object_get(j, "reference_nonfinite");
    const char *name = json_string_value(json_object_get(j, "name"));
    if (!json_is_object(j) || !name || !json_is_array(shape) || json_array_size(shape) > OQ_MAX_DIMS ||
        json_array_size(worst) > OQ_COMPARE_MAX_WORST)
        return oq_err_set(err, OQ_ERR_FORMAT, "not a comparison record");
    snprintf(r->name, sizeof r->name, "%s", name);
    r->passed = json_is_true(json_object_get(j, "passed"));
    r->vacuous = json_is_true(json_object_get(j, "vacuous"));
    r->ndim = (int32_t)json_array_size(shape);
    for (int32_t d = 0; d < r->ndim; d++) r->shape[d] = json_integer_value(json_array_get(shape, (size_t)d));
    r->out_dtype = oq_dtype_parse(json_string_value(json_object_get(j, "dtype")));
    r->ref_dtype = oq_dtype_parse(json_string_value(json_object_get(j, "reference_dtype")));
    r->tol.rtol = oq_compare_tolerance_back(tol, "rtol");
    r->tol.atol = oq_compare_tolerance_back(tol, "atol");
    r->num_elements = int_of(j, "num_elements");
    r->num_valid = int_of(j, "num_valid");
    r->max_abs = oq_compare_metric_back(json_object_get(j, "max_abs"));
    r->max_rel = oq_compare_metric_back(json_object_get(j, "max_rel"));
    r->mean_abs = oq_compare_metric_back(json_object_get(j, "mean_abs"));
    r->rms = oq_compare_metric_back(json_object_get(j, "rms"));
    r->rel_l2 = oq_compare_metric_back(json_object_get(j, "rel_l2"));
    r->over_tol = int_of(j, "over_tolerance");
    r->nan_count = int_of(j, "nan");
    r->inf_count = int_of(j, "inf");
    r->inf_matched = int_of(j, "inf_matched"); /* 0 in a summary written before it */
    r->ref_nan_count = int_of(refnf, "nan");
    r->ref_inf_count = int_of(refnf, "inf");
    r->padding_checked = json_is_true(json_object_get(pad, "checked"));
    r->masked = json_is_true(json_object_get(pad, "masked"));
    r->exact = json_is_true(json_object_get(j, "exact"));
    r->ref_pad_nonzero = int_of(pad, "reference_nonzero");
    const char *rule = json_string_value(json_object_get(pad, "rule"));
    r->padding_rule = rule && !strcmp(rule, "report")         ? OQ_PADDING_REPORT
                      : rule && !strcmp(rule, "as-reference") ? OQ_PADDING_AS_REFERENCE
                                                              : OQ_PADDING_ZERO;
    r->num_padded = int_of(pad, "padded");
    r->pad_nonzero = int_of(pad, "nonzero");
    r->pad_nonfinite = int_of(pad, "nonfinite");
    if (json_is_object(json_object_get(pad, "first_nonzero")))
        elem_back(json_object_get(pad, "first_nonzero"), &r->first_pad_nonzero);
    r->worst_count = (int32_t)json_array_size(worst);
    for (int32_t i = 0; i < r->worst_count; i++) elem_back(json_array_get(worst, (size_t)i), &r->worst[i]);
    const json_t *failing = json_object_get(j, "worst_failing");
    if (json_is_object(failing)) elem_back(failing, &r->worst_failing);
    else if (r->worst_count) r->worst_failing = r->worst[0]; /* a record from before it was kept */
    r->max_abs_ref = json_number_value(json_object_get(j, "max_abs_ref"));
    if (!err_hist_back(json_object_get(j, "error_histogram"), &r->err_hist) ||
        !mag_hist_back(json_object_get(j, "error_by_magnitude"), &r->by_ref))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: histogram bins other than this build's, or out of range", r->name);
    sums_of_means(r);
    return OQ_OK;
}
