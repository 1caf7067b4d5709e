/* The mask contract: what a padded batch of events must look like.
 *
 * A batch holds B events padded to a common length L. The mask `[B, L]` says
 * which positions are real: every row must be a prefix of ones followed by
 * zeros, with at least one 1. The number of ones is the event's length.
 *
 *     valid:   1 1 1 1 0 0      length 4
 *     valid:   1 1 1 1 1 1      length 6 (no padding)
 *     hole:    1 1 0 1 0 0      a 1 after padding began
 *     left:    0 0 1 1 1 1      padding before the event
 *     empty:   0 0 0 0 0 0      no valid element at all
 *     value:   1 1 0.5 0 0 0    only exactly 0 and 1 are allowed (NaN, inf, 2, -1 refused)
 *
 * An exported ONNX graph cannot raise these errors itself: it silently computes
 * garbage for a bad mask. Deployment callers check the mask with oq_mask_check
 * before running the model, exactly as the validation tools do:
 *
 *     int64_t lengths[B];
 *     oq_err err = OQ_ERR_INIT;
 *     if (oq_mask_check(mask, features, lengths, &err) != OQ_OK) {
 *         fprintf(stderr, "bad input: %s\n", err.msg);   // "event 3: hole at position 17 ..."
 *         return -1;
 *     }
 *     oq_mask_sanitize(features, lengths, &err);          // padded features become exact zeros
 *
 * Violations of the contract return OQ_ERR_MASK; tensors whose rank, dtype or
 * shape do not fit return OQ_ERR_SHAPE. Every message names the event (its
 * index in the batch) and the position in the sequence.
 */
#ifndef ORTQUAL_MASK_H
#define ORTQUAL_MASK_H

#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check `mask` against the contract and return each event's length.
 *
 * mask:      rank 2 `[B, L]`, dtype bool, a float or an integer dtype (int8 to int64, uint8 to uint64).
 *            A bool byte other than 0/1 is refused like any other value.
 * features:  NULL, or a tensor of rank >= 2 whose first two dimensions are `[B, L]`
 *            (any dtype); a mismatch is OQ_ERR_SHAPE naming both shapes.
 * lengths_out: caller-owned array of B entries, filled only on success (may be NULL).
 *
 * Rows are checked in order, each left to right; the first violation is reported.
 * An empty batch (B == 0) is valid. L == 0 with B > 0 makes every event empty. */
OQ_API oq_status oq_mask_check(const oq_tensor *mask, const oq_tensor *features, int64_t *lengths_out,
                               oq_err *err);

/* Which value marks a valid element. ortqual's masks, ONNX Attention's bool attn_mask and the
 * usual int attention_mask read 1 (true) as a valid element; PyTorch's key_padding_mask and
 * src_key_padding_mask read 1 (true) as padding. The contract is the same either way (a valid
 * prefix, then padding, at least one valid element); only the values are swapped. Which one a
 * model reads is not decided from the values: a row 0 0 1 1 is a PAD mask of length 2 or a KEEP
 * mask padded on the left, which the contract refuses. */
typedef enum oq_mask_polarity {
    OQ_MASK_POLARITY_KEEP = 0, /* 1 = valid, 0 = padding (the default) */
    OQ_MASK_POLARITY_PAD       /* 1 = padding, 0 = valid */
} oq_mask_polarity;

/* "keep" or "pad"; "unknown" for another value (never NULL). */
OQ_API const char *oq_mask_polarity_name(oq_mask_polarity p);
/* "keep" or "pad" into *out: 0, else -1 (*out untouched). */
OQ_API int oq_mask_polarity_parse(const char *s, oq_mask_polarity *out);

/* oq_mask_check with the mask read in `polarity` (oq_mask_check reads KEEP). Messages name the
 * values as the mask holds them ("left padding: position 0 is 1 but position 2 is 0"). */
OQ_API oq_status oq_mask_check_polarity(const oq_tensor *mask, const oq_tensor *features, oq_mask_polarity polarity,
                                        int64_t *lengths_out, oq_err *err);

/* 1 when oq_mask_check accepts masks of this dtype, else 0. */
OQ_API int oq_mask_dtype_ok(oq_dtype dtype);

/* Check explicit lengths (e.g. a `nonpad_kv_seqlen` input) against a padded
 * length L: each must be in 1..L. OQ_ERR_MASK names the event otherwise. */
OQ_API oq_status oq_mask_lengths_check(const int64_t *lengths, int64_t batch, int64_t seq_len, oq_err *err);

/* Make a new `[batch, seq_len]` mask of `dtype` (any dtype oq_mask_check accepts)
 * from lengths, which are checked with oq_mask_lengths_check first.
 * The caller frees *out with oq_tensor_free. */
OQ_API oq_status oq_mask_make(const int64_t *lengths, int64_t batch, int64_t seq_len, oq_dtype dtype,
                              oq_tensor **out, oq_err *err);

/* Set every padded element of `features` (rank >= 2, `[B, L, ...]`, any dtype)
 * to exact zero: positions lengths[b]..L-1 of event b, all trailing dimensions.
 * Zero bits are +0.0 in every float dtype. Lengths must be in 0..L
 * (OQ_ERR_MASK otherwise, before anything is written). */
OQ_API oq_status oq_mask_sanitize(oq_tensor *features, const int64_t *lengths, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
