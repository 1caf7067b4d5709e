/* The finite-input rule: every valid element of every floating-point input finite. One check
 * for every command that reads a user's inputs (validate, replay, convert's check and bench
 * --model --inputs), so that the same file gets the same answer from each. */
#include <math.h>
#include <stdio.h>

#include "axes/axes-impl.h"
#include "inspect/inputuse-impl.h"
#include "ortqual/tensor.h"

/* The first element of [from, to) that is NaN or infinite, or -1: one tight loop per dtype (the
 * check reads every valid element of every batch; float16/bfloat16 by their exponent bits). */
static int64_t first_f32(const float *p, int64_t from, int64_t to)
{
    for (int64_t e = from; e < to; e++)
        if (!isfinite(p[e])) return e;
    return -1;
}

static int64_t first_f64(const double *p, int64_t from, int64_t to)
{
    for (int64_t e = from; e < to; e++)
        if (!isfinite(p[e])) return e;
    return -1;
}

static int64_t first_exp_ones(const uint16_t *p, int64_t from, int64_t to, uint16_t exp_bits)
{
    for (int64_t e = from; e < to; e++)
        if ((p[e] & exp_bits) == exp_bits) return e;
    return -1;
}

static int64_t first_non_finite(const oq_tensor *t, int64_t from, int64_t to)
{
    switch (t->dtype) {
    case OQ_DTYPE_FLOAT32: return first_f32(t->data, from, to);
    case OQ_DTYPE_FLOAT64: return first_f64(t->data, from, to);
    case OQ_DTYPE_FLOAT16: return first_exp_ones(t->data, from, to, 0x7c00);
    case OQ_DTYPE_BFLOAT16: return first_exp_ones(t->data, from, to, 0x7f80);
    default: return -1;
    }
}

/* The first element of [from, to) of t that its use does not allow, or -1. An additive
 * attention mask (`additive`: OQ_USE_ADDITIVE, inspect/inputuse-impl.h) may hold -inf, the
 * standard "never attend" (PyTorch's 0/-inf masks): ONNX Runtime and the spec take it; NaN and
 * +inf never. */
static int64_t first_refused(const oq_tensor *t, int additive, int64_t from, int64_t to)
{
    if (!additive) return first_non_finite(t, from, to);
    for (int64_t e = from; e < to; e++) {
        double v = oq_tensor_get_f64(t, e);
        if (isnan(v) || v == INFINITY) return e;
    }
    return -1;
}

/* The first non-finite element of t at a valid position (-1: none), the mask's `lengths` running
 * along axes `a`: where the sequence axis is the later one ([B, L, ...], [B, H, L, D]) a run of
 * valid positions is contiguous, checked in one tight loop; else (a batch axis after it) each
 * position's elements of one event are. */
static int64_t first_valid_non_finite(const oq_tensor *t, int additive, oq_mask_axes a, const int64_t *lengths)
{
    int32_t hi = a.batch > a.seq ? a.batch : a.seq;
    int64_t run = 1, per_b = 1, per_s = 1, B = t->shape[a.batch], L = t->shape[a.seq];
    for (int32_t d = hi + 1; d < t->ndim; d++) run *= t->shape[d];
    for (int32_t d = a.batch + 1; d <= hi; d++) per_b *= t->shape[d]; /* in runs */
    for (int32_t d = a.seq + 1; d <= hi; d++) per_s *= t->shape[d];
    int64_t runs = run > 0 ? oq_tensor_numel(t) / run : 0;
    for (int64_t k = 0; k < runs;) {
        int64_t p = k / per_s % L, len = lengths[k / per_b % B];
        len = len < 0 ? 0 : len > L ? L : len;
        int64_t step = a.seq < hi ? 1 : p < len ? len - p : L - p, e;
        if (p < len && (e = first_refused(t, additive, k * run, (k + step) * run)) >= 0) return e;
        k += step;
    }
    return -1;
}

void oq_element_event(const oq_tensor *t, oq_mask_axes a, int64_t e, int64_t *event, int64_t *pos, int64_t *within)
{
    *within = 0;
    for (int64_t d = t->ndim - 1, mul = 1; d >= 0; d--) {
        int64_t i = e % t->shape[d];
        e /= t->shape[d];
        if (d == a.batch) *event = i;
        else if (d == a.seq) *pos = i;
        else *within += i * mul, mul *= t->shape[d];
    }
}

const char *oq_finite_event_str(const oq_finite_rule *f, int64_t event, char *buf, size_t n)
{
    if (f->event_name) return f->event_name(f->event_ctx, event, buf, n);
    snprintf(buf, n, "event %lld", (long long)event);
    return buf;
}

/* The message for element e of t: by event and position where the axes `a` say them (masked),
 * else by element, with `why` the positions could not be told (padding was read as well). */
static oq_status non_finite_error(const oq_finite_rule *f, const oq_tensor *t, int64_t e, oq_mask_axes a,
                                  const oq_err *why, const char *path, oq_err *err)
{
    double v = t->dtype == OQ_DTYPE_FLOAT32 ? ((const float *)t->data)[e]
               : t->dtype == OQ_DTYPE_FLOAT64 ? ((const double *)t->data)[e] : NAN;
    const char *what = isinf(v) ? v > 0 ? "inf" : "-inf" : t->dtype == OQ_DTYPE_FLOAT32 ||
                       t->dtype == OQ_DTYPE_FLOAT64 ? "NaN" : "NaN or inf";
    if (a.masked) {
        int64_t event = 0, pos = 0, within = 0;
        char ev[96];
        oq_element_event(t, a, e, &event, &pos, &within);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: input '%s': %s position %lld (element %lld of "
                          "it) is %s: %s", path, t->name, oq_finite_event_str(f, event, ev, sizeof ev),
                          (long long)pos, (long long)within, what,
                          f->all ? "every position must be finite, padding too (ortqual's sdpa model reads padded "
                                   "query, key and value rows: a zero weight times NaN is NaN)"
                                 : "valid positions must be finite");
    }
    if (why && *why->msg)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: input '%s': element %lld is %s: inputs must be finite (padding "
                          "included, as its positions cannot be told: %s; name its axes like the mask's, or denote "
                          "them DATA_BATCH and DATA_TIME)", path, t->name, (long long)e, what, why->msg);
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: input '%s': element %lld is %s: inputs must be finite", path,
                      t->name, (long long)e, what);
}

oq_status oq_inputs_check_finite(const oq_finite_rule *f, const oq_tensor *const *t, size_t n, const char *path,
                                 oq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!t[i] || !oq_dtype_is_float(t[i]->dtype)) continue;
        oq_mask_axes a = {0};
        oq_err why = {0};
        int masked = f->lengths && oq_input_mask_axes(f->axes, t[i]->name, t[i]->ndim, t[i]->shape, &a, &why);
        int additive = f->uses && (f->uses[i] & OQ_USE_ADDITIVE);
        int64_t e = masked && !f->all ? first_valid_non_finite(t[i], additive, a, f->lengths)
                                      : first_refused(t[i], additive, 0, oq_tensor_numel(t[i]));
        if (e >= 0) return non_finite_error(f, t[i], e, a, &why, path, err);
    }
    return OQ_OK;
}
