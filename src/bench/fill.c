/* bench --model: the input tensors of one point, given (npz) or generated (seeded). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench-impl.h"
#include "ortqual/events.h"

/* Streams of generated inputs: far above the events' and the attention sweep's. */
#define MODEL_STREAM (UINT64_C(1) << 44)

oq_status oq_bench_event_lengths(const oq_bench_opts *o, int64_t B, int64_t L, int64_t *lengths, oq_err *err)
{
    if (L < 1 || B < 1) {
        for (int64_t b = 0; b < B; b++) lengths[b] = 0;
        return OQ_OK;
    }
    oq_events_opts eo = oq_events_opts_default();
    eo.seed = o->seed;
    eo.num_events = B;
    eo.batch_size = B;
    eo.num_features = 1;
    eo.policy = (oq_length_policy)o->length_policy;
    eo.max_len = L;
    eo.fraction = o->mask_fraction;
    long long lo = llround((double)L * (1.0 - 2.0 * o->mask_fraction));
    eo.min_len = lo < 1 ? 1 : lo > L ? L : lo;
    eo.pad_to_max_len = 1;
    oq_events *ev = NULL;
    oq_status st = oq_events_create(&eo, &ev, err);
    if (st == OQ_ERR_INVALID_ARG && eo.policy == OQ_LENGTH_FRACTION) /* the option's, not the events' words */
        return oq_err_set(err, st, "opts.mask_fraction %g leaves no valid element at length %lld (padding "
                          "%g of %lld positions rounds to all of them; every row needs one valid position)",
                          o->mask_fraction, (long long)L, o->mask_fraction, (long long)L);
    /* balanced makes a batch of one the spread's mean (events.h), so that --mask-fraction's mean
     * share of padding holds at B = 1 too */
    if (!st) memcpy(lengths, oq_events_lengths(ev), (size_t)B * sizeof *lengths);
    oq_events_free(ev);
    return st;
}

oq_status oq_bench_check_fraction(const oq_bench_opts *o, int64_t L, oq_err *err)
{
    int64_t one;
    return oq_bench_event_lengths(o, 1, L, &one, err);
}

/* Uniform in [0, 1): the top 53 bits of the generator. */
static double uniform01(oq_rng *r) { return (double)(oq_rng_next(r) >> 11) * 0x1.0p-53; }

/* A valid prefix per row of [B, L], then padding (ones then zeros, or zeros then ones for a
 * PAD mask); the count of valid elements. */
static oq_status fill_mask(const oq_bench_opts *o, oq_mask_polarity pol, oq_tensor *t, int64_t *valid, oq_err *err)
{
    int64_t B = t->shape[0], L = t->shape[1];
    int64_t *len = malloc((size_t)(B ? B : 1) * sizeof *len);
    if (!len) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_bench_event_lengths(o, B, L, len, err);
    *valid = 0;
    const double on = pol == OQ_MASK_POLARITY_PAD ? 0.0 : 1.0;
    for (int64_t b = 0; !st && b < B; b++) {
        for (int64_t j = 0; j < L; j++) oq_tensor_set_f64(t, b * L + j, j < len[b] ? on : 1.0 - on);
        *valid += len[b];
    }
    free(len);
    return st;
}

/* The fill named once per tensor, not compared per element. */
static void fill_values(const oq_bench_opts *o, const oq_bench_input_info *in, size_t index, oq_tensor *t)
{
    oq_rng r;
    oq_rng_seed(&r, o->seed, MODEL_STREAM + index);
    int64_t n = oq_tensor_numel(t);
    if (!strcmp(in->fill, "uniform"))
        for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(t, i, 2.0 * uniform01(&r) - 1.0);
    else if (!strcmp(in->fill, "integers"))
        for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(t, i, (double)oq_rng_uniform_int(&r, o->int_lo, o->int_hi));
    else
        for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(t, i, 1.0);
}

/* Valid elements of a mask-like [B, L] input: its non-zero elements, its zeros for a PAD mask. */
static int64_t valid_count(const oq_tensor *t, oq_mask_polarity pol)
{
    int64_t c = 0;
    const int pad = pol == OQ_MASK_POLARITY_PAD;
    for (int64_t i = 0, n = oq_tensor_numel(t); i < n; i++) c += (oq_tensor_get_f64(t, i) != 0.0) != pad;
    return c;
}

static oq_status make_one(const oq_bench_opts *o, oq_mask_polarity pol, const oq_npz *npz, const oq_bench_input_info *in,
                          size_t index, oq_tensor **out, oq_err *err)
{
    if (!strcmp(in->source, "npz")) return oq_tensor_clone(oq_npz_get(npz, in->name), out, err);
    if (!oq_dtype_size(in->dtype))
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "input '%s': element type %d cannot be generated (give it in inputs_path)",
                          in->name, (int)in->dtype);
    oq_status st = oq_tensor_create(out, in->dtype, in->ndim, in->shape, in->name, err);
    int64_t valid = 0;
    if (!st && !strcmp(in->fill, "mask")) st = fill_mask(o, pol, *out, &valid, err);
    else if (!st) fill_values(o, in, index, *out);
    if (st) {
        oq_tensor_free(*out);
        *out = NULL;
    }
    return st;
}

oq_status oq_bench_make_inputs(const oq_bench_opts *o, oq_mask_polarity pol, const oq_npz *npz, const oq_bench_point *p,
                               oq_tensor ***out, oq_err *err)
{
    oq_tensor **t = calloc(p->n_inputs ? p->n_inputs : 1, sizeof *t);
    if (!t) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < p->n_inputs; i++) st = make_one(o, pol, npz, &p->inputs[i], i, &t[i], err);
    if (st) {
        oq_tensors_free(t, p->n_inputs);
        return st;
    }
    *out = t;
    return OQ_OK;
}

int64_t oq_bench_valid_elements(const oq_bench_point *p, oq_tensor *const *in, oq_mask_polarity pol, int *masked)
{
    *masked = 0;
    if (p->mask < 0) return -1;
    int64_t v = valid_count(in[p->mask], pol);
    *masked = v < oq_tensor_numel(in[p->mask]);
    return v;
}
