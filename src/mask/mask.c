#include "mask/mask-impl.h"
#include "ortqual/mask.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mask element classes: the contract only knows exactly 0 and exactly 1. */
enum { MASK_ZERO = 0, MASK_ONE = 1, MASK_BAD = 2 };

int oq_mask_dtype_ok(oq_dtype t)
{
    switch (t) {
    case OQ_DTYPE_BOOL: case OQ_DTYPE_FLOAT32: case OQ_DTYPE_FLOAT16: case OQ_DTYPE_BFLOAT16:
    case OQ_DTYPE_FLOAT64: case OQ_DTYPE_INT32: case OQ_DTYPE_INT64: case OQ_DTYPE_UINT8: case OQ_DTYPE_INT8:
    case OQ_DTYPE_UINT16: case OQ_DTYPE_INT16: case OQ_DTYPE_UINT32: case OQ_DTYPE_UINT64:
        return 1;
    case OQ_DTYPE_UNDEFINED: break;
    }
    return 0;
}

/* Classify element i. Integer dtypes are read raw so that a bool byte of 2
 * or an int64 beyond 2^53 is never rounded into a legal value. */
static int mask_class(const oq_tensor *m, int64_t i)
{
    switch (m->dtype) {
    case OQ_DTYPE_BOOL: {
        uint8_t v = ((const uint8_t *)m->data)[i];
        return v <= 1 ? v : MASK_BAD;
    }
    case OQ_DTYPE_INT32: {
        int32_t v = ((const int32_t *)m->data)[i];
        return v == 0 || v == 1 ? (int)v : MASK_BAD;
    }
    case OQ_DTYPE_INT64: {
        int64_t v = ((const int64_t *)m->data)[i];
        return v == 0 || v == 1 ? (int)v : MASK_BAD;
    }
    default: {
        double v = oq_tensor_get_f64(m, i); /* NaN compares unequal to both */
        return v == 0.0 ? MASK_ZERO : v == 1.0 ? MASK_ONE : MASK_BAD;
    }
    }
}

/* The offending value as text, exact for integers ("2", "-1", "nan", "0.5"). */
static void mask_value_str(const oq_tensor *m, int64_t i, char *buf, size_t n)
{
    switch (m->dtype) {
    case OQ_DTYPE_BOOL: snprintf(buf, n, "%u (bool byte)", ((const uint8_t *)m->data)[i]); return;
    case OQ_DTYPE_INT32: snprintf(buf, n, "%" PRId32, ((const int32_t *)m->data)[i]); return;
    case OQ_DTYPE_INT64: snprintf(buf, n, "%" PRId64, ((const int64_t *)m->data)[i]); return;
    default: snprintf(buf, n, "%.9g", oq_tensor_get_f64(m, i)); return;
    }
}

static oq_status check_shapes(const oq_tensor *mask, const oq_tensor *features, oq_err *err)
{
    char ms[96], fs[96];
    if (!oq_mask_dtype_ok(mask->dtype))
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "mask dtype %s is not allowed (bool, float16/32/64, bfloat16, int32, int64)",
                          oq_dtype_name(mask->dtype));
    if (mask->ndim != 2)
        return oq_err_set(err, OQ_ERR_SHAPE, "mask must have rank 2 [batch, seq], got shape %s",
                          oq_shape_str(mask, ms, sizeof ms));
    if (!features) return OQ_OK;
    if (features->ndim < 2 || features->shape[0] != mask->shape[0] ||
        features->shape[1] != mask->shape[1])
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "mask shape %s does not match features shape %s (want [batch, seq, ...] "
                          "with the mask's batch and seq)",
                          oq_shape_str(mask, ms, sizeof ms), oq_shape_str(features, fs, sizeof fs));
    return OQ_OK;
}

/* "positions 0..L-1" as a message says it: "position 0" for L 1, "no positions" for L 0 (not
 * "0..-1"). */
static const char *positions_str(int64_t L, char *buf, size_t n)
{
    if (L <= 0) snprintf(buf, n, "no positions");
    else if (L == 1) snprintf(buf, n, "position 0");
    else snprintf(buf, n, "positions 0..%" PRId64, L - 1);
    return buf;
}

/* What the left-padding message adds: a KEEP row of padding then valid values reads as a PAD
 * mask (PyTorch's key_padding_mask); a PAD row so, as a KEEP mask. Only a caller that chose the
 * polarity can choose the other: ortqual's own models and C encoder read 1 = valid alone, and
 * where the graph reads it so, the other polarity would judge the positions the model ignores
 * (Hugging Face's left padding, 1 = valid, zeros first: QA round 9a). */
static const char *left_hint(oq_mask_polarity pol, oq_mask_reader by)
{
    if (by == OQ_MASK_READ_GRAPH)
        return pol == OQ_MASK_POLARITY_PAD
                   ? "; the model's graph reads this mask with 1 = padding, so a row whose padding comes first is "
                     "not supported: pad each row at its end"
                   : "; the model's graph reads this mask with 1 = valid, so a row whose padding comes first (Hugging "
                     "Face's left padding) is not supported: pad each row at its end";
    int chosen = by == OQ_MASK_READ_CHOSEN;
    if (pol == OQ_MASK_POLARITY_PAD)
        return "; the mask is read with 1 = padding (mask_polarity pad): a mask whose 1 marks a valid element "
               "is read with mask_polarity keep";
    return chosen ? "; zeros then ones is also a mask whose 1 marks padding, as PyTorch's key_padding_mask: the "
                    "mask is read with 1 = valid, so read it with mask_polarity pad or save 1 - mask for such a model"
                  : "; zeros then ones is also a mask whose 1 marks padding, as PyTorch's key_padding_mask: this "
                    "mask is read with 1 = valid (ortqual's models and C encoder read no other), so save 1 - mask";
}

/* One row: valid values, then padding, at least one valid value. Returns the length via *len.
 * `pol` swaps which of 0 and 1 is valid; messages name the values the mask holds. */
static oq_status check_row(const oq_tensor *mask, int64_t b, oq_mask_polarity pol, oq_mask_reader by, int64_t *len,
                          oq_err *err)
{
    int64_t L = mask->shape[1];
    const int64_t base = b * L;
    const int pad = pol == OQ_MASK_POLARITY_PAD ? MASK_ONE : MASK_ZERO, valid = 1 - pad;
    int64_t first_pad = -1; /* position where padding began, -1 while in the prefix */
    char hint[512];           /* the library's words as a value: worded here, as the format is */
    for (int64_t p = 0; p < L; p++) {
        int c = mask_class(mask, base + p);
        if (c == MASK_BAD) {
            char v[64];
            mask_value_str(mask, base + p, v, sizeof v);
            return oq_err_set(err, OQ_ERR_MASK,
                              "event %" PRId64 ", position %" PRId64 ": mask value %s is not 0 or 1",
                              b, p, v);
        }
        if (c == pad && first_pad < 0) first_pad = p;
        if (c == valid && first_pad == 0)
            return oq_err_set(err, OQ_ERR_MASK,
                              "event %" PRId64 ": left padding: position 0 is %d but position %" PRId64
                              " is %d (a valid row is %ss first, then %ss%s)",
                              b, pad, p, valid, valid ? "one" : "zero", pad ? "one" : "zero",
                              oq_terms(left_hint(pol, by), hint, sizeof hint));
        if (c == valid && first_pad > 0)
            return oq_err_set(err, OQ_ERR_MASK,
                              "event %" PRId64 ": hole at position %" PRId64 " (%d at %" PRId64
                              " followed by %d; a valid row is %ss first, then %ss)",
                              b, p, pad, first_pad, valid, valid ? "one" : "zero", pad ? "one" : "zero");
    }
    if (L == 0) /* no position to be 0 at ("0..-1") */
        return oq_err_set(err, OQ_ERR_MASK,
                          "event %" PRId64 ": empty event: the mask has no positions (length 0; each event "
                          "needs at least one valid element)",
                          b);
    if (first_pad == 0)
        return oq_err_set(err, OQ_ERR_MASK,
                          pol == OQ_MASK_POLARITY_PAD
                              ? "event %" PRId64 ": empty event: the mask is %d at every position 0..%" PRId64
                                " (each event needs at least one valid element; read with 1 = padding: mask_polarity pad)"
                              : "event %" PRId64 ": empty event: the mask is %d at every position 0..%" PRId64
                                " (each event needs at least one valid element)",
                          b, pad, L - 1);
    *len = first_pad < 0 ? L : first_pad;
    return OQ_OK;
}

const char *oq_mask_polarity_name(oq_mask_polarity p)
{
    return p == OQ_MASK_POLARITY_KEEP ? "keep" : p == OQ_MASK_POLARITY_PAD ? "pad" : "unknown";
}

int oq_mask_polarity_parse(const char *s, oq_mask_polarity *out)
{
    if (!s) return -1;
    if (!strcmp(s, "keep")) *out = OQ_MASK_POLARITY_KEEP;
    else if (!strcmp(s, "pad")) *out = OQ_MASK_POLARITY_PAD;
    else return -1;
    return 0;
}

/* A value that excludes a key when added to a score: inspect's fill bound (OQ_SDPA_FILL_MAX, a
 * folder of this layer, so not included): exp underflows to 0 in float16/32 far above it. */
#define ADDITIVE_PAD_MAX (-1.0e4)

/* A float mask of 0s and large negatives (at least one, else NULL into *at) is an additive mask,
 * as HF's extended attention mask: read as 1/0 it is all padding or bad values, which says
 * nothing of what it is. Returns whether it is one. */
static int additive(const oq_tensor *m, int64_t *at)
{
    if (!oq_dtype_is_float(m->dtype)) return 0;
    int64_t n = oq_tensor_numel(m), neg = -1;
    for (int64_t i = 0; i < n; i++) {
        double v = oq_tensor_get_f64(m, i);
        if (v != 0.0 && !(v <= ADDITIVE_PAD_MAX)) return 0;
        if (v != 0.0 && neg < 0) neg = i;
    }
    *at = neg;
    return 1;
}

/* A failed check of an additive mask says what it is and how such a model is validated. */
static oq_status additive_said(const oq_tensor *m, oq_status st, oq_err *err)
{
    int64_t at, L = m->shape[1];
    if (!st || !additive(m, &at)) return st;
    if (at < 0)
        return oq_err_set(err, OQ_ERR_MASK, "the mask is 0 at every position: read as 1/0 every event is empty; if it "
                          "is an additive mask (0 = keep), validate a model that takes one without a mask (no_mask)");
    char v[64];
    mask_value_str(m, at, v, sizeof v);
    return oq_err_set(err, OQ_ERR_MASK,
                      "the mask holds only 0 and large negative values (%s at event %" PRId64 ", position %" PRId64
                      "): it is itself an additive mask (0 = keep, large negative = pad), not the 1/0 mask the "
                      "contract reads; validate a model that takes one without a mask (no_mask)",
                      v, at / L, at % L);
}

/* The check behind the entry points (each names itself in its NULL message). */
static oq_status check_mask(const oq_tensor *mask, const oq_tensor *features, oq_mask_polarity polarity,
                            oq_mask_reader by, int64_t *lengths_out, oq_err *err)
{
    if (polarity != OQ_MASK_POLARITY_KEEP && polarity != OQ_MASK_POLARITY_PAD)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask polarity %d is neither keep nor pad", (int)polarity);
    oq_status st = check_shapes(mask, features, err);
    if (st) return st;
    /* Lengths land in lengths_out only once the whole batch is known good. */
    size_t B = (size_t)mask->shape[0];
    int64_t one, *len = lengths_out ? malloc(sizeof *len * (B ? B : 1)) : NULL;
    if (lengths_out && !len) return oq_err_set(err, OQ_ERR_NOMEM, "mask check: out of memory");
    for (size_t b = 0; !st && b < B; b++) st = check_row(mask, (int64_t)b, polarity, by, len ? &len[b] : &one, err);
    st = additive_said(mask, st, err);
    if (!st && len) memcpy(lengths_out, len, sizeof *len * B);
    free(len);
    return st;
}

oq_status oq_mask_check_polarity(const oq_tensor *mask, const oq_tensor *features, oq_mask_polarity polarity,
                                 int64_t *lengths_out, oq_err *err)
{
    OQ_NEED(err, mask);
    return check_mask(mask, features, polarity, OQ_MASK_READ_CHOSEN, lengths_out, err);
}

oq_status oq_mask_check_read(const oq_tensor *mask, const oq_tensor *features, oq_mask_polarity polarity,
                             oq_mask_reader by, int64_t *lengths_out, oq_err *err)
{
    OQ_NEED(err, mask);
    return check_mask(mask, features, polarity, by, lengths_out, err);
}

oq_status oq_mask_check(const oq_tensor *mask, const oq_tensor *features, int64_t *lengths_out,
                        oq_err *err)
{
    OQ_NEED(err, mask);
    return check_mask(mask, features, OQ_MASK_POLARITY_KEEP, OQ_MASK_READ_ORTQUAL, lengths_out, err);
}

static oq_status lengths_in_range(const int64_t *lengths, int64_t batch, int64_t seq_len,
                                  int64_t min_len, oq_err *err)
{
    if (batch < 0 || seq_len < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "negative batch %" PRId64 " or length %" PRId64,
                          batch, seq_len);
    char where[64];
    for (int64_t b = 0; b < batch; b++) {
        if (lengths[b] > seq_len)
            return oq_err_set(err, OQ_ERR_MASK,
                              "event %" PRId64 ": length %" PRId64 " is beyond the padded length %" PRId64
                              " (%s)",
                              b, lengths[b], seq_len, positions_str(seq_len, where, sizeof where));
        if (lengths[b] < 0)
            return oq_err_set(err, OQ_ERR_MASK, "event %" PRId64 ": length %" PRId64 " is negative",
                              b, lengths[b]);
        if (lengths[b] < min_len)
            return oq_err_set(err, OQ_ERR_MASK,
                              "event %" PRId64 ": length %" PRId64
                              " leaves the event empty (position 0 would be padding; "
                              "each event needs at least one valid element)",
                              b, lengths[b]);
    }
    return OQ_OK;
}

oq_status oq_mask_lengths_check(const int64_t *lengths, int64_t batch, int64_t seq_len, oq_err *err)
{
    OQ_NEED_N(err, batch > 0, lengths);
    return lengths_in_range(lengths, batch, seq_len, 1, err);
}

oq_status oq_mask_make(const int64_t *lengths, int64_t batch, int64_t seq_len, oq_dtype dtype,
                       oq_tensor **out, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED_N(err, batch > 0, lengths);
    *out = NULL;
    if (!oq_mask_dtype_ok(dtype))
        return oq_err_set(err, OQ_ERR_SHAPE, "mask dtype %s is not allowed", oq_dtype_name(dtype));
    oq_status st = oq_mask_lengths_check(lengths, batch, seq_len, err);
    if (st) return st;
    int64_t shape[2] = {batch, seq_len};
    oq_tensor *m;
    if ((st = oq_tensor_create(&m, dtype, 2, shape, "mask", err))) return st;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t p = 0; p < lengths[b]; p++) oq_tensor_set_f64(m, b * seq_len + p, 1.0);
    *out = m;
    return OQ_OK;
}

oq_status oq_mask_sanitize(oq_tensor *features, const int64_t *lengths, oq_err *err)
{
    char fs[96];
    OQ_NEED(err, features);
    if (features->ndim < 2)
        return oq_err_set(err, OQ_ERR_SHAPE, "features must have rank >= 2 [batch, seq, ...], got %s",
                          oq_shape_str(features, fs, sizeof fs));
    int64_t B = features->shape[0], L = features->shape[1];
    OQ_NEED_N(err, B > 0, lengths);
    oq_status st = lengths_in_range(lengths, B, L, 0, err);
    if (st) return st;
    size_t row = oq_dtype_size(features->dtype); /* bytes of one sequence position */
    for (int32_t d = 2; d < features->ndim; d++) row *= (size_t)features->shape[d];
    uint8_t *base = features->data;
    for (int64_t b = 0; b < B; b++) {
        size_t from = (size_t)(b * L + lengths[b]) * row;
        memset(base + from, 0, (size_t)(L - lengths[b]) * row);
    }
    return OQ_OK;
}
