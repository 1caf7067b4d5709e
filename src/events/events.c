/* Synthetic events: length policies, batching, padding and features (see events.h). */
#include "ortqual/events.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/mask.h"
#include "status/args-impl.h"

struct oq_events {
    oq_events_opts opts;
    int64_t *lengths; /* num_events */
};

oq_events_opts oq_events_opts_default(void)
{
    oq_events_opts o = {0};
    o.seed = 12345;
    o.num_events = 8;
    o.batch_size = 4;
    o.num_features = 16;
    o.policy = OQ_LENGTH_FIXED;
    o.min_len = 1;
    o.max_len = 64;
    o.mask_dtype = OQ_DTYPE_FLOAT32;
    o.feature_dtype = OQ_DTYPE_FLOAT32;
    return o;
}

const char *oq_length_policy_name(oq_length_policy p)
{
    switch (p) {
    case OQ_LENGTH_FIXED: return "fixed";
    case OQ_LENGTH_BALANCED: return "balanced";
    case OQ_LENGTH_UNIFORM: return "uniform";
    case OQ_LENGTH_FRACTION: return "fraction";
    }
    return "unknown";
}

/* ---- parsing ---- */

static int parse_i64(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno) return 0;
    *v = x;
    return 1;
}

static oq_status parse_range(const char *text, char **tok, oq_events_opts *o, oq_err *err)
{
    int64_t lo, hi;
    if (!parse_i64(tok[1], &lo) || !parse_i64(tok[2], &hi))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "length policy '%s': MIN and MAX must be integers",
                          text);
    if (lo < 1 || lo > hi)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "length policy '%s': want 1 <= MIN <= MAX, got MIN %" PRId64 " MAX %" PRId64,
                          text, lo, hi);
    o->min_len = lo;
    o->max_len = hi;
    return OQ_OK;
}

/* Split on spaces and ':' into at most 4 tokens of buf. */
static int tokenize(char *buf, char **tok)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " \t:", &save); t; t = strtok_r(NULL, " \t:", &save)) {
        if (n == 4) return 5;
        tok[n++] = t;
    }
    return n;
}

static oq_status parse_policy(const char *text, char **tok, int n, oq_events_opts *o, oq_err *err)
{
    const char *name = tok[0];
    if (!strcmp(name, "fixed")) {
        o->policy = OQ_LENGTH_FIXED;
        if (n == 1) return OQ_OK;
        int64_t len;
        if (n != 2 || !parse_i64(tok[1], &len) || len < 1)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "length policy '%s': fixed takes at most one integer length >= 1 ('fixed 128')",
                              text);
        o->max_len = len;
        return OQ_OK;
    }
    if (!strcmp(name, "balanced") || !strcmp(name, "uniform")) {
        int uniform = name[0] == 'u';
        o->policy = uniform ? OQ_LENGTH_UNIFORM : OQ_LENGTH_BALANCED;
        if (n == 1 && !uniform) return OQ_OK;
        if (n != 3)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "length policy '%s': %s needs MIN and MAX ('%s 8 64')",
                              text, name, name);
        return parse_range(text, tok, o, err);
    }
    if (!strcmp(name, "fraction")) {
        o->policy = OQ_LENGTH_FRACTION;
        double f = NAN;
        const char *end = n == 2 ? oq_text_real(tok[1], &f) : "";
        if (n != 2 || !end || *end || !(f >= 0.0 && f < 1.0))
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "length policy '%s': fraction needs the share of padding F, 0 <= F < 1 "
                              "('fraction 0.25')",
                              text);
        o->fraction = f;
        return OQ_OK;
    }
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "length policy '%s': unknown policy '%s' (fixed [L], balanced [MIN MAX], uniform MIN "
                      "MAX, fraction F)",
                      text, name);
}

oq_status oq_length_policy_parse(const char *text, oq_events_opts *opts, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, opts);
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "length policy text longer than %zu bytes", sizeof buf - 1);
    strcpy(buf, text);
    char *tok[4];
    int n = tokenize(buf, tok);
    if (n == 0) return oq_err_set(err, OQ_ERR_INVALID_ARG, "length policy is empty (fixed, balanced, uniform, fraction)");
    if (n > 3) return oq_err_set(err, OQ_ERR_INVALID_ARG, "length policy '%s': too many values", text);
    oq_events_opts o = *opts; /* commit only on success */
    oq_status st = parse_policy(text, tok, n, &o, err);
    if (!st) *opts = o;
    return st;
}

/* ---- creation ---- */

static oq_status check_opts(const oq_events_opts *o, oq_err *err)
{
#define NEED(cond, ...) \
    if (!(cond)) return oq_err_set(err, OQ_ERR_INVALID_ARG, __VA_ARGS__)
    NEED(o->num_events >= 1, "events: num_events %" PRId64 " must be >= 1", o->num_events);
    NEED(o->batch_size >= 1, "events: batch_size %" PRId64 " must be >= 1", o->batch_size);
    NEED(o->num_features >= 1, "events: num_features %" PRId64 " must be >= 1", o->num_features);
    NEED(o->max_len >= 1, "events: max_len %" PRId64 " must be >= 1", o->max_len);
    NEED(o->pad_bin_size >= 0, "events: pad_bin_size %" PRId64 " must be >= 0", o->pad_bin_size);
    NEED(o->policy >= OQ_LENGTH_FIXED && o->policy <= OQ_LENGTH_FRACTION, "events: unknown length policy %d",
         (int)o->policy);
    NEED(oq_mask_dtype_ok(o->mask_dtype), "events: mask dtype %s is not a mask dtype", oq_dtype_name(o->mask_dtype));
    NEED(oq_dtype_is_float(o->feature_dtype), "events: feature dtype %s is not a float dtype",
         oq_dtype_name(o->feature_dtype));
    if (o->policy == OQ_LENGTH_BALANCED || o->policy == OQ_LENGTH_UNIFORM)
        NEED(o->min_len >= 1 && o->min_len <= o->max_len,
             "events: %s lengths need 1 <= min_len <= max_len, got %" PRId64 "..%" PRId64,
             oq_length_policy_name(o->policy), o->min_len, o->max_len);
    if (o->policy == OQ_LENGTH_FRACTION) {
        NEED(o->fraction >= 0.0 && o->fraction < 1.0, "events: padding fraction %g outside [0, 1)", o->fraction);
        NEED(llround((1.0 - o->fraction) * (double)o->max_len) >= 1,
             "events: padding fraction %g leaves no valid element at max_len %" PRId64, o->fraction, o->max_len);
    }
#undef NEED
    return OQ_OK;
}

/* Event j of n, lengths spread evenly over min..max; one event alone takes the spread's mean
 * (max made it as long as a fixed policy's: no padding, nothing of the spread asked for). */
static int64_t balanced_length(const oq_events_opts *o, int64_t j, int64_t n)
{
    if (n == 1) return llround((double)(o->min_len + o->max_len) / 2.0);
    double step = (double)(o->max_len - o->min_len) / (double)(n - 1);
    return o->min_len + llround(step * (double)j);
}

static void draw_lengths(oq_events *ev)
{
    const oq_events_opts *o = &ev->opts;
    oq_rng rng;
    oq_rng_seed(&rng, o->seed, 0);
    for (int64_t e = 0; e < o->num_events; e++) {
        int64_t first = e - e % o->batch_size;
        int64_t n = o->num_events - first < o->batch_size ? o->num_events - first : o->batch_size;
        switch (o->policy) {
        case OQ_LENGTH_FIXED: ev->lengths[e] = o->max_len; break;
        case OQ_LENGTH_BALANCED: /* batches of one: the spread runs over the run's events */
            ev->lengths[e] = o->batch_size == 1 ? balanced_length(o, e, o->num_events) : balanced_length(o, e - first, n);
            break;
        case OQ_LENGTH_UNIFORM: ev->lengths[e] = oq_rng_uniform_int(&rng, o->min_len, o->max_len); break;
        case OQ_LENGTH_FRACTION: ev->lengths[e] = llround((1.0 - o->fraction) * (double)o->max_len); break;
        }
    }
}

oq_status oq_events_create(const oq_events_opts *opts, oq_events **out, oq_err *err)
{
    OQ_NEED(err, opts);
    OQ_NEED(err, out);
    *out = NULL;
    oq_status st = check_opts(opts, err);
    if (st) return st;
    oq_events *ev = calloc(1, sizeof *ev);
    if (ev) ev->lengths = calloc((size_t)opts->num_events, sizeof *ev->lengths);
    if (!ev || !ev->lengths) {
        oq_events_free(ev);
        return oq_err_set(err, OQ_ERR_NOMEM, "events: out of memory for %" PRId64 " events", opts->num_events);
    }
    ev->opts = *opts;
    draw_lengths(ev);
    *out = ev;
    return OQ_OK;
}

void oq_events_free(oq_events *ev)
{
    if (!ev) return;
    free(ev->lengths);
    free(ev);
}

int64_t oq_events_count(const oq_events *ev) { return ev ? ev->opts.num_events : 0; }

const int64_t *oq_events_lengths(const oq_events *ev) { return ev ? ev->lengths : NULL; }

int64_t oq_events_batch_count(const oq_events *ev)
{
    if (!ev) return 0;
    return (ev->opts.num_events + ev->opts.batch_size - 1) / ev->opts.batch_size;
}

oq_status oq_events_batch_shape(const oq_events *ev, int64_t batch, int64_t *batch_size,
                                int64_t *padded_len, oq_err *err)
{
    OQ_NEED(err, ev);
    const oq_events_opts *o = &ev->opts;
    if (batch < 0 || batch >= oq_events_batch_count(ev))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "events: batch %" PRId64 " outside 0..%" PRId64, batch,
                          oq_events_batch_count(ev) - 1);
    int64_t first = batch * o->batch_size;
    int64_t n = o->num_events - first < o->batch_size ? o->num_events - first : o->batch_size;
    int64_t L = 0;
    if (o->pad_to_max_len || o->policy == OQ_LENGTH_FIXED || o->policy == OQ_LENGTH_FRACTION) L = o->max_len;
    for (int64_t i = 0; i < n; i++)
        if (ev->lengths[first + i] > L) L = ev->lengths[first + i];
    if (o->pad_bin_size > 1) L = (L + o->pad_bin_size - 1) / o->pad_bin_size * o->pad_bin_size;
    if (batch_size) *batch_size = n;
    if (padded_len) *padded_len = L;
    return OQ_OK;
}

/* Event e's features into rows [row, row + length) of x, from its own stream. */
static void fill_features(const oq_events *ev, int64_t e, oq_tensor *x, int64_t row_start)
{
    oq_rng rng;
    oq_rng_seed(&rng, ev->opts.seed, (uint64_t)e + 1);
    int64_t n = ev->lengths[e] * ev->opts.num_features;
    int64_t base = row_start * ev->opts.num_features;
    for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(x, base + i, oq_rng_normal(&rng));
}

oq_status oq_events_make_batch(const oq_events *ev, int64_t batch, oq_tensor **features,
                               oq_tensor **mask, int64_t *event_indices_out, oq_err *err)
{
    OQ_NEED(err, ev);
    int64_t B, L;
    oq_status st = oq_events_batch_shape(ev, batch, &B, &L, err);
    if (st) return st;
    const int64_t first = batch * ev->opts.batch_size;
    const int64_t *lengths = ev->lengths + first;
    oq_tensor *x = NULL, *m = NULL;
    if (features) {
        int64_t shape[3] = {B, L, ev->opts.num_features};
        if ((st = oq_tensor_create(&x, ev->opts.feature_dtype, 3, shape, "features", err))) return st;
        for (int64_t b = 0; b < B; b++) fill_features(ev, first + b, x, b * L); /* padding stays 0 */
    }
    if (mask && (st = oq_mask_make(lengths, B, L, ev->opts.mask_dtype, &m, err))) {
        oq_tensor_free(x);
        return st;
    }
    for (int64_t b = 0; event_indices_out && b < B; b++) event_indices_out[b] = first + b;
    if (features) *features = x;
    if (mask) *mask = m;
    return OQ_OK;
}
