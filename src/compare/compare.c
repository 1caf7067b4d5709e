/* Mask-aware comparison of an output with its reference (see compare.h). */
#include "compare/compare-impl.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

oq_compare_opts oq_compare_opts_default(oq_dtype precision)
{
    oq_compare_opts o = {0};
    o.tol = oq_tolerance_for_dtype(precision);
    o.batch_axis = 0;
    o.seq_axis = 1;
    o.check_padding = 1;
    o.worst_k = 5;
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

static oq_status check_args(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *o,
                            oq_err *err)
{
    char a[128], b[128];
    if (!oq_dtype_is_float(out->dtype) || !oq_dtype_is_float(ref->dtype))
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "output '%s' (%s) and reference (%s) must both be float tensors",
                          tensor_label(out), oq_dtype_name(out->dtype), oq_dtype_name(ref->dtype));
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
    if (!o->lengths) return OQ_OK;
    if (o->batch_axis < 0 || o->batch_axis >= out->ndim || o->seq_axis < 0 || o->seq_axis >= out->ndim ||
        o->batch_axis == o->seq_axis)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "output '%s' shape %s: batch axis %d and sequence axis %d must be distinct axes",
                          tensor_label(out), oq_shape_str(out, a, sizeof a), (int)o->batch_axis,
                          (int)o->seq_axis);
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

/* Running sums over the valid, finite elements. */
struct sums {
    double abs, sq, ref_sq;
    int64_t finite;
    double tiny; /* tiny_of(out->dtype), once per comparison */
};

static void visit_valid(oq_compare_result *r, struct sums *s, double *keys, const oq_compare_opts *o,
                        const oq_tensor *out, int64_t i, double g, double e)
{
    double d = g - e, ad = fabs(d);
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
        if (ad > o->tol.atol + o->tol.rtol * fabs(e)) r->over_tol++;
    } else {
        r->over_tol++; /* NaN or Inf never passes */
    }
    double key = finite ? ad : INFINITY;
    if (o->worst_k && (r->worst_count < o->worst_k || key > keys[o->worst_k - 1])) {
        oq_compare_elem el = {.index = i, .got = g, .expected = e, .abs_diff = ad};
        unravel(out, i, el.coord);
        worst_insert(r, keys, o->worst_k, key, &el);
    }
}

static void visit_padded(oq_compare_result *r, const oq_tensor *out, const oq_tensor *ref, int64_t i,
                         double g)
{
    if (g == 0.0) return; /* -0.0 is zero too */
    if (r->pad_nonzero++ == 0) {
        oq_compare_elem *el = &r->first_pad_nonzero;
        el->index = i;
        el->got = g;
        el->expected = oq_tensor_get_f64(ref, i);
        el->abs_diff = fabs(g);
        unravel(out, i, el->coord);
    }
    if (!isfinite(g)) r->pad_nonfinite++;
}

static void finish(oq_compare_result *r, const struct sums *s, const oq_compare_opts *o)
{
    if (s->finite) {
        r->mean_abs = s->abs / (double)s->finite;
        r->rms = sqrt(s->sq / (double)s->finite);
    }
    r->rel_l2 = s->ref_sq > 0 ? sqrt(s->sq / s->ref_sq) : s->sq > 0 ? INFINITY : 0.0;
    r->padding_checked = o->check_padding != 0;
    r->passed = r->over_tol == 0 && r->nan_count == 0 && r->inf_count == 0 && r->ref_nan_count == 0 &&
                r->ref_inf_count == 0 && (!r->padding_checked || r->pad_nonzero == 0);
}

oq_status oq_compare_tensors(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *opts,
                             oq_compare_result *res, oq_err *err)
{
    if (!out || !ref || !res) return oq_err_set(err, OQ_ERR_INVALID_ARG, "output, reference or result is NULL");
    oq_compare_opts o = opts ? *opts : oq_compare_opts_default(out->dtype);
    oq_status st = check_args(out, ref, &o, err);
    if (st) return st;

    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s", out->name ? out->name : ref->name ? ref->name : "");
    res->ndim = out->ndim;
    memcpy(res->shape, out->shape, sizeof res->shape);
    res->out_dtype = out->dtype;
    res->ref_dtype = ref->dtype;
    res->tol = o.tol;
    res->num_elements = oq_tensor_numel(out);

    /* Strides of the batch and sequence axes, to find an element's event and position. */
    int64_t bstride = 1, sstride = 1;
    for (int32_t d = o.batch_axis + 1; o.lengths && d < out->ndim; d++) bstride *= out->shape[d];
    for (int32_t d = o.seq_axis + 1; o.lengths && d < out->ndim; d++) sstride *= out->shape[d];

    struct sums s = {.tiny = tiny_of(out->dtype)};
    double keys[OQ_COMPARE_MAX_WORST];
    for (int64_t i = 0; i < res->num_elements; i++) {
        double g = oq_tensor_get_f64(out, i);
        int valid = 1;
        if (o.lengths) {
            int64_t b = (i / bstride) % out->shape[o.batch_axis];
            int64_t p = (i / sstride) % out->shape[o.seq_axis];
            valid = p < o.lengths[b];
        }
        if (valid) {
            res->num_valid++;
            visit_valid(res, &s, keys, &o, out, i, g, oq_tensor_get_f64(ref, i));
        } else {
            res->num_padded++;
            visit_padded(res, out, ref, i, g);
        }
    }
    finish(res, &s, &o);
    return OQ_OK;
}

/* ---- reporting ---- */

/* Append printf output at *used without overflowing buf. */
static void append(char *buf, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
    if (*used >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, n - *used, fmt, ap);
    va_end(ap);
    if (k > 0) *used += (size_t)k;
}

char *oq_compare_result_str(const oq_compare_result *r, char *buf, size_t n)
{
    if (!n) return buf;
    size_t used = 0;
    buf[0] = '\0';
    append(buf, n, &used, "%s%s%s valid=%" PRId64 "/%" PRId64, r->name, r->name[0] ? ": " : "",
           r->passed ? "PASS" : "FAIL", r->num_valid, r->num_elements);
    append(buf, n, &used, " max_abs=%.3g max_rel=%.3g mean_abs=%.3g rms=%.3g rel_l2=%.3g", r->max_abs,
           r->max_rel, r->mean_abs, r->rms, r->rel_l2);
    append(buf, n, &used, " over_tol=%" PRId64 " nan=%" PRId64 " inf=%" PRId64, r->over_tol, r->nan_count,
           r->inf_count);
    if (r->ref_nan_count || r->ref_inf_count)
        append(buf, n, &used, " REFERENCE nan=%" PRId64 " inf=%" PRId64, r->ref_nan_count, r->ref_inf_count);
    if (r->padding_checked) append(buf, n, &used, " pad_nonzero=%" PRId64 "/%" PRId64, r->pad_nonzero, r->num_padded);
    else append(buf, n, &used, " padding not checked");
    append(buf, n, &used, " (rtol=%.3g atol=%.3g)", r->tol.rtol, r->tol.atol);
    char c[160];
    if (!r->passed && r->worst_count) {
        oq_dims_str(r->worst[0].coord, r->ndim, c, sizeof c);
        append(buf, n, &used, "; worst %s got %.9g expected %.9g |d|=%.3g", c, r->worst[0].got,
               r->worst[0].expected, r->worst[0].abs_diff);
    }
    if (r->padding_checked && r->pad_nonzero) {
        oq_dims_str(r->first_pad_nonzero.coord, r->ndim, c, sizeof c);
        append(buf, n, &used, "; first non-zero padding %s = %.9g", c, r->first_pad_nonzero.got);
    }
    return buf;
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

static json_t *elem_json(const oq_compare_result *r, const oq_compare_elem *e)
{
    return json_pack("{s:o, s:I, s:o, s:o, s:o}", "coord", coord_json(r, e), "index", (json_int_t)e->index,
                     "got", num(e->got), "expected", num(e->expected), "abs_diff", num(e->abs_diff));
}

oq_status oq_compare_result_to_json(const oq_compare_result *r, json_t **out, oq_err *err)
{
    if (!r || !out) return oq_err_set(err, OQ_ERR_INVALID_ARG, "result or out is NULL");
    json_t *shape = json_array(), *worst = json_array();
    for (int32_t d = 0; shape && d < r->ndim; d++) json_array_append_new(shape, json_integer(r->shape[d]));
    for (int32_t i = 0; worst && i < r->worst_count; i++) json_array_append_new(worst, elem_json(r, &r->worst[i]));
    json_t *padding = json_pack("{s:b, s:I, s:I, s:I, s:o}", "checked", r->padding_checked,
                                "padded", (json_int_t)r->num_padded, "nonzero", (json_int_t)r->pad_nonzero,
                                "nonfinite", (json_int_t)r->pad_nonfinite, "first_nonzero",
                                r->pad_nonzero ? elem_json(r, &r->first_pad_nonzero) : json_null());
    json_t *j = json_pack(
        "{s:s, s:b, s:o, s:s, s:s, s:{s:f, s:f}, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I,"
        " s:{s:I, s:I}, s:o, s:o}",
        "name", r->name, "passed", r->passed, "shape", shape, "dtype", oq_dtype_name(r->out_dtype),
        "reference_dtype", oq_dtype_name(r->ref_dtype), "tolerance", "rtol", r->tol.rtol, "atol",
        r->tol.atol, "num_elements", (json_int_t)r->num_elements, "num_valid", (json_int_t)r->num_valid,
        "max_abs", num(r->max_abs), "max_rel", num(r->max_rel), "mean_abs", num(r->mean_abs), "rms",
        num(r->rms), "rel_l2", num(r->rel_l2), "over_tolerance", (json_int_t)r->over_tol, "nan",
        (json_int_t)r->nan_count, "inf", (json_int_t)r->inf_count, "reference_nonfinite", "nan",
        (json_int_t)r->ref_nan_count, "inf", (json_int_t)r->ref_inf_count, "padding", padding, "worst",
        worst);
    if (!j) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory building the comparison JSON");
    *out = j;
    return OQ_OK;
}

/* ---- back from JSON ----------------------------------------------------------------- */

static double num_back(const json_t *j)
{
    const char *s = json_string_value(j);
    if (!s) return json_number_value(j);
    return !strcmp(s, "nan") ? NAN : !strcmp(s, "-inf") ? -INFINITY : INFINITY;
}

static int64_t int_of(const json_t *o, const char *key) { return json_integer_value(json_object_get(o, key)); }

static void elem_back(const json_t *j, oq_compare_elem *e)
{
    const json_t *coord = json_object_get(j, "coord");
    for (size_t d = 0; d < json_array_size(coord) && d < OQ_MAX_DIMS; d++)
        e->coord[d] = json_integer_value(json_array_get(coord, d));
    e->index = int_of(j, "index");
    e->got = num_back(json_object_get(j, "got"));
    e->expected = num_back(json_object_get(j, "expected"));
    e->abs_diff = num_back(json_object_get(j, "abs_diff"));
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
    r->ndim = (int32_t)json_array_size(shape);
    for (int32_t d = 0; d < r->ndim; d++) r->shape[d] = json_integer_value(json_array_get(shape, (size_t)d));
    r->out_dtype = oq_dtype_parse(json_string_value(json_object_get(j, "dtype")));
    r->ref_dtype = oq_dtype_parse(json_string_value(json_object_get(j, "reference_dtype")));
    r->tol.rtol = json_number_value(json_object_get(tol, "rtol"));
    r->tol.atol = json_number_value(json_object_get(tol, "atol"));
    r->num_elements = int_of(j, "num_elements");
    r->num_valid = int_of(j, "num_valid");
    r->max_abs = num_back(json_object_get(j, "max_abs"));
    r->max_rel = num_back(json_object_get(j, "max_rel"));
    r->mean_abs = num_back(json_object_get(j, "mean_abs"));
    r->rms = num_back(json_object_get(j, "rms"));
    r->rel_l2 = num_back(json_object_get(j, "rel_l2"));
    r->over_tol = int_of(j, "over_tolerance");
    r->nan_count = int_of(j, "nan");
    r->inf_count = int_of(j, "inf");
    r->ref_nan_count = int_of(refnf, "nan");
    r->ref_inf_count = int_of(refnf, "inf");
    r->padding_checked = json_is_true(json_object_get(pad, "checked"));
    r->num_padded = int_of(pad, "padded");
    r->pad_nonzero = int_of(pad, "nonzero");
    r->pad_nonfinite = int_of(pad, "nonfinite");
    if (json_is_object(json_object_get(pad, "first_nonzero")))
        elem_back(json_object_get(pad, "first_nonzero"), &r->first_pad_nonzero);
    r->worst_count = (int32_t)json_array_size(worst);
    for (int32_t i = 0; i < r->worst_count; i++) elem_back(json_array_get(worst, (size_t)i), &r->worst[i]);
    return OQ_OK;
}
