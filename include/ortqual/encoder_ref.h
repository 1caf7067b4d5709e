/* The encoder's forward pass in float64: the ground truth `ref:encoder:fp64`.
 *
 * Same weights (export.h, oq_encoder_weights) and same function as every
 * exported representation, written independently of ONNX and ORT: each
 * event's valid elements only (padding never enters), LayerNorm with the
 * population variance, attention over the valid keys with 1/sqrt(head_dim),
 * ELU(x) = x > 0 ? x : expm1(x), every value and accumulation in double.
 * Padded output elements are exact zeros.
 *
 *     oq_tensor **out = calloc(w->cfg.n_outputs, sizeof *out);
 *     oq_encoder_ref_forward(w, features, mask, out, &err);
 *     ... out[i] is float64 [B, L, K_i], named after output head i ...
 */
#ifndef ORTQUAL_ENCODER_REF_H
#define ORTQUAL_ENCODER_REF_H

#include "ortqual/export.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* features: [B, L, F], any float dtype; mask: [B, L], any dtype mask.h accepts,
 * checked against the mask contract (OQ_ERR_MASK names the event and position).
 * outputs: caller array of w->cfg.n_outputs pointers, each set to a new float64
 * tensor [B, L, K] (freed by the caller with oq_tensor_free); untouched on error.
 * Errors: OQ_ERR_SHAPE (ranks, F, or B/L of features vs mask), OQ_ERR_MASK,
 * OQ_ERR_NOMEM. */
oq_status oq_encoder_ref_forward(const oq_encoder_weights *w, const oq_tensor *features,
                                 const oq_tensor *mask, oq_tensor **outputs, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
