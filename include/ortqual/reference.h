/* The reference: an independent C implementation of the ONNX Attention
 * operator (Attention-23 and Attention-24), the numerical ground truth of ortqual.
 *
 * Every computation is carried out in float64 whatever the input dtype; the
 * outputs are rounded once, at the end, to the dtype of the matching input.
 *
 *     oq_ref_attention_attrs attrs;
 *     oq_ref_attention_attrs_default(&attrs);            (ONNX defaults)
 *     oq_ref_attention_inputs in = {.q = q, .k = k, .v = v};
 *     oq_ref_attention_outputs out = {0};
 *     if (oq_ref_attention(&attrs, &in, 0, &out, &err) != OQ_OK) ...   (0: every core)
 *     ... use out.y ...
 *     oq_ref_attention_outputs_clear(&out);
 *
 * Semantics (ONNX Attention, docs/reference.md has the long form):
 *   - Layouts: 4-D Q [B, Hq, Lq, D], K [B, Hkv, Lkv, D], V [B, Hkv, Lkv, Dv];
 *     3-D Q [B, Lq, Hq*D], K [B, Lkv, Hkv*D], V [B, Lkv, Hkv*Dv] with the head
 *     counts from q_num_heads/kv_num_heads (required for 3-D). Y is [B, Hq, Lq, Dv]
 *     for 4-D inputs and [B, Lq, Hq*Dv] for 3-D inputs.
 *   - GQA: Hq must be a multiple of Hkv; query head h uses kv head h / (Hq/Hkv).
 *   - past_key [B, Hkv, P, D] / past_value [B, Hkv, P, Dv] (always 4-D) are
 *     concatenated before K/V along the sequence axis; T = P + Lkv is the total
 *     length. present_key/present_value are those concatenations.
 *   - Scores: s = scale * Q.K^T (scale NAN means 1/sqrt(D)); softcap > 0 gives
 *     softcap * tanh(s / softcap), applied before any mask.
 *   - attn_mask, broadcastable to [B, Hq, Lq, T] (numpy rules, rank 1..4): bool
 *     (true = attend, false = -inf) or float (added). A last dimension shorter
 *     than T (opset 24) is padded with -inf (false).
 *   - is_causal: query i attends key j only if j <= i + offset, where offset is P
 *     with a past, else nonpad_kv_seqlen[b] - Lq when nonpad_kv_seqlen is given
 *     (opset 24 external cache), else 0. Causal and attn_mask combine.
 *   - nonpad_kv_seqlen (int64 or int32 [B], opset 24): key j >= n[b] is masked.
 *   - qk_matmul_output [B, Hq, Lq, T]: mode 0 the scaled scores, 1 after softcap,
 *     2 after softcap and every mask (masked entries are -inf), 3 the softmax.
 *   - A query row whose keys are all masked gives a zero output row (and zero
 *     probabilities in mode 3), as the current ONNX spec says; ONNX v1.22's
 *     Python reference gives NaN there.
 *   - softmax_precision is accepted and ignored: the softmax is always float64.
 *
 * Threads: the work is cut into blocks of query rows of one (batch, head),
 * fixed by the shapes; threads share the blocks. Each output element is computed
 * in one fixed order whatever the thread count, so results are bit-identical
 * for 1 thread and for N. Called from inside an OpenMP parallel region, the
 * reference runs on the calling thread alone; callers that run their own
 * threads should pass each call its share of the cores.
 */
#ifndef ORTQUAL_REFERENCE_H
#define ORTQUAL_REFERENCE_H

#include <stdint.h>

#include "ortqual/export.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the references' numerics (Attention and the encoder): bumped whenever a change
 * can alter one bit of their outputs, so that outputs stored by an earlier version (validate's
 * reference cache) are never taken for this one's. */
#define OQ_REFERENCE_NUMERICS 4

/* The node's attributes. Fill with oq_ref_attention_attrs_default, then override. */
typedef struct oq_ref_attention_attrs {
    int is_causal;              /* 0 or 1 (default 0) */
    int64_t q_num_heads;        /* 0 = not given (needed for 3-D inputs) */
    int64_t kv_num_heads;       /* 0 = not given (needed for 3-D inputs) */
    int qk_matmul_output_mode;  /* 0..3 (default 0) */
    double scale;               /* NAN = default 1/sqrt(head_size) */
    double softcap;             /* <= 0 = off (default 0) */
    int64_t softmax_precision;  /* accepted and ignored: always float64 */
    int64_t opset;              /* the ai.onnx opset the node's model imports (default 24):
                                   below 23 there is no Attention operator (invalid); 23
                                   refuses what only Attention-24 has (nonpad_kv_seqlen, a
                                   mask shorter than the total kv length); above 24 is not
                                   implemented */
} oq_ref_attention_attrs;

/* ONNX defaults: not causal, heads from the 4-D shapes, mode 0, default scale, no softcap;
 * opset 24. */
OQ_API void oq_ref_attention_attrs_default(oq_ref_attention_attrs *attrs);

/* Inputs, borrowed for the duration of the call. q, k, v are required; any
 * other member may be NULL (an omitted optional input). Floating tensors may be
 * float32, float16, bfloat16 or float64, each independently; attn_mask may also
 * be bool; nonpad_kv_seqlen is int64 or int32. past_key and past_value come
 * together or not at all. */
typedef struct oq_ref_attention_inputs {
    const oq_tensor *q, *k, *v;
    const oq_tensor *attn_mask;
    const oq_tensor *past_key, *past_value;
    const oq_tensor *nonpad_kv_seqlen;
} oq_ref_attention_inputs;

/* Outputs. Set the want_* flags before the call; on success the call fills y
 * (always) and the wanted optional outputs with new tensors that the caller
 * owns (free them with oq_ref_attention_outputs_clear). y and qk_matmul_output
 * have Q's dtype, present_key K's, present_value V's. On failure nothing is
 * allocated and the tensor members are left NULL. */
typedef struct oq_ref_attention_outputs {
    int want_present;           /* in: also produce present_key and present_value */
    int want_qk_matmul_output;  /* in: also produce qk_matmul_output (O(T) memory per row
                                   becomes O(B*Hq*Lq*T) for this output) */
    oq_tensor *y;
    oq_tensor *present_key, *present_value;
    oq_tensor *qk_matmul_output;
} oq_ref_attention_outputs;

/* Free the output tensors and set them to NULL (the want_* flags are kept). */
OQ_API void oq_ref_attention_outputs_clear(oq_ref_attention_outputs *out);

/* Run Attention on `threads` threads (0 = every core this process may run on;
 * never more threads than blocks of work). Errors: OQ_ERR_INVALID_ARG (NULL
 * q/k/v, bad attribute value, negative threads, an opset below 23, or
 * nonpad_kv_seqlen at opset 23: an invalid model), OQ_ERR_SHAPE (ranks, dims,
 * head counts or the mask do not fit together, a mask shorter than the total
 * kv length at opset 23; the message names the tensor and the axis),
 * OQ_ERR_UNSUPPORTED (a dtype outside the ones above, an opset above 24, a
 * mask whose last axis of 1 would broadcast over the keys at opset 23),
 * OQ_ERR_NOMEM. */
OQ_API oq_status oq_ref_attention(const oq_ref_attention_attrs *attrs,
                                  const oq_ref_attention_inputs *in, int threads,
                                  oq_ref_attention_outputs *out, oq_err *err);

/* ---- the encoder -----------------------------------------------------------
 *
 * The encoder's forward pass in float64: the ground truth `ref:encoder:fp64`.
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

/* The reference for weights `w`, converted to float64 and packed once (the
 * object keeps no pointer into w). threads: how many threads each run uses,
 * 0 = every core this process may run on. Errors: OQ_ERR_INVALID_ARG
 * (negative threads), OQ_ERR_NOMEM. Free with oq_encoder_ref_free. */
typedef struct oq_encoder_ref oq_encoder_ref;
OQ_API oq_status oq_encoder_ref_create(const oq_encoder_weights *w, int threads,
                                       oq_encoder_ref **out, oq_err *err);
OQ_API void oq_encoder_ref_free(oq_encoder_ref *r);
/* The most threads a run of `r` uses: its `threads`, or for 0 every core this
 * process may run on now (a small batch, with fewer tiles, uses fewer; inside
 * an OpenMP parallel region, 1). 0 for a NULL r. */
OQ_API int oq_encoder_ref_threads(const oq_encoder_ref *r);

/* features: [B, L, F], any float dtype; mask: [B, L], any dtype mask.h accepts,
 * checked against the mask contract (OQ_ERR_MASK names the event and position).
 * outputs: caller array of cfg.n_outputs pointers, each set to a new float64
 * tensor [B, L, K] (freed by the caller with oq_tensor_free); untouched on error.
 * Errors: OQ_ERR_SHAPE (ranks, F, or B/L of features vs mask), OQ_ERR_MASK,
 * OQ_ERR_NOMEM. The object keeps its working memory from run to run (about
 * (6 W + ffn_width + F) doubles per valid element of the largest batch so
 * far): one run at a time per object; callers that run several at once use
 * one object per thread. */
OQ_API oq_status oq_encoder_ref_run(oq_encoder_ref *r, const oq_tensor *features,
                                    const oq_tensor *mask, oq_tensor **outputs, oq_err *err);

/* One run on every core: create, run, free. */
OQ_API oq_status oq_encoder_ref_forward(const oq_encoder_weights *w, const oq_tensor *features,
                                        const oq_tensor *mask, oq_tensor **outputs, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
