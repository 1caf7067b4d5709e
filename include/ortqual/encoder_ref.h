/* The encoder's forward pass in float64: the ground truth `ref:encoder:fp64`.
 *
 * Same weights (export.h, oq_encoder_weights) and same function as every
 * exported representation, written independently of ONNX and ORT: each
 * event's valid elements only (padding never enters), LayerNorm with the
 * population variance, attention over the valid keys with 1/sqrt(head_dim),
 * ELU(x) = x > 0 ? x : expm1(x), every value and accumulation in double.
 * Padded output elements are exact zeros.
 *
 *     oq_encoder_ref *ref;
 *     oq_encoder_ref_create(w, 0, &ref, &err);         (0: every core)
 *     oq_tensor **out = calloc(w->cfg.n_outputs, sizeof *out);
 *     oq_encoder_ref_run(ref, features, mask, out, &err);
 *     ... out[i] is float64 [B, L, K_i], named after output head i ...
 *     oq_encoder_ref_free(ref);
 *
 * Threads: a batch's work is cut into tiles fixed by the shapes (row blocks of
 * the matrix products, blocks of query rows per event and head); threads share
 * the tiles, and each output element is computed in one fixed order, so the
 * results are bit-identical for any thread count. Called from inside an OpenMP
 * parallel region, a run uses the calling thread alone; callers that run their
 * own threads should give each object its share of the cores.
 */
#ifndef ORTQUAL_ENCODER_REF_H
#define ORTQUAL_ENCODER_REF_H

#include "ortqual/export.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reference for weights `w`, converted to float64 and packed once (the
 * object keeps no pointer into w). threads: how many threads each run uses,
 * 0 = every core this process may run on. Errors: OQ_ERR_INVALID_ARG
 * (negative threads), OQ_ERR_NOMEM. Free with oq_encoder_ref_free. */
typedef struct oq_encoder_ref oq_encoder_ref;
oq_status oq_encoder_ref_create(const oq_encoder_weights *w, int threads, oq_encoder_ref **out,
                                oq_err *err);
void oq_encoder_ref_free(oq_encoder_ref *r);

/* features: [B, L, F], any float dtype; mask: [B, L], any dtype mask.h accepts,
 * checked against the mask contract (OQ_ERR_MASK names the event and position).
 * outputs: caller array of cfg.n_outputs pointers, each set to a new float64
 * tensor [B, L, K] (freed by the caller with oq_tensor_free); untouched on error.
 * Errors: OQ_ERR_SHAPE (ranks, F, or B/L of features vs mask), OQ_ERR_MASK,
 * OQ_ERR_NOMEM. The object keeps its working memory from run to run (about
 * (6 W + ffn_width + F) doubles per valid element of the largest batch so
 * far): one run at a time per object; callers that run several at once use
 * one object per thread. */
oq_status oq_encoder_ref_run(oq_encoder_ref *r, const oq_tensor *features,
                             const oq_tensor *mask, oq_tensor **outputs, oq_err *err);

/* One run on every core: create, run, free. */
oq_status oq_encoder_ref_forward(const oq_encoder_weights *w, const oq_tensor *features,
                                 const oq_tensor *mask, oq_tensor **outputs, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
