/* Exporting attention models to ONNX, in C.
 *
 * Two models, each in three attention representations with the same weights:
 *
 *   sdpa     attention only, for scaling studies: inputs query/key/value
 *            (3-D [B, L, H*D] or 4-D [B, H, L, D]) and mask [B, L]; output
 *            "output" in the query's layout.
 *   encoder  a small particle-flow-style transformer: inputs features [B, L, F]
 *            and mask [B, L]; one output [B, L, K] per output head.
 *
 * Representations (oq_attn_format):
 *   decomposed   opset 20, standard operators only: MatMul, Transpose, Mul,
 *                Add (additive key mask) or Where (bool key mask), Softmax, MatMul.
 *   attention23  opset 23, one ONNX Attention node per attention, the key mask
 *                as attn_mask [B, 1, L, L] (ORT 1.29 does not broadcast the
 *                mask over the query axis, so it is materialized).
 *   attention24  opset 24, one Attention node whose valid lengths come through
 *                nonpad_kv_seqlen (int64 [B], computed in the graph from the
 *                mask with ReduceSum + Cast); padded tensors are kept.
 *
 * Masks: the public mask is float32 1/0, a valid prefix followed by padding
 * (see mask.h; the graph cannot check it). Padded keys are excluded from every
 * attention; padded query rows and padded output elements are exact zeros
 * (Where on the mask, so even non-finite padded values give 0).
 *
 * attention_dtype float16 casts to float16 around the attention computation
 * only; public inputs and outputs stay float32. Decomposed float16 scales the
 * query by a power of two before the dot product (exact in float16, lowers
 * overflow risk) and applies the rest of 1/sqrt(D) to the scores; the model's
 * doc string says so.
 *
 * The builders return an oq_graph (graph.h); write it with oq_graph_write.
 */
#ifndef ORTQUAL_EXPORT_H
#define ORTQUAL_EXPORT_H

#include <stdint.h>

#include "ortqual/graph.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum oq_attn_format {
    OQ_ATTN_DECOMPOSED = 0,
    OQ_ATTN_ATTENTION23,
    OQ_ATTN_ATTENTION24
} oq_attn_format;

/* How the key-padding mask reaches the attention. */
typedef enum oq_mask_form {
    OQ_MASK_AUTO = 0,  /* decomposed/attention23: additive; attention24: seqlen */
    OQ_MASK_NONE,      /* unmasked: no mask input at all (sdpa only) */
    OQ_MASK_ADDITIVE,  /* float bias, 0 on valid keys, -1e9 (float32) / -3e4 (float16) on padded keys */
    OQ_MASK_BOOL,      /* boolean: Where in decomposed, bool attn_mask in Attention */
    OQ_MASK_SEQLEN     /* nonpad_kv_seqlen (attention24 only) */
} oq_mask_form;

/* "decomposed", "attention23", "attention24"; parse returns -1 if unknown. */
OQ_API const char *oq_attn_format_name(oq_attn_format f);
OQ_API int oq_attn_format_parse(const char *s);
/* "auto", "none", "additive", "bool", "seqlen"; parse returns -1 if unknown. */
OQ_API const char *oq_mask_form_name(oq_mask_form m);
OQ_API int oq_mask_form_parse(const char *s);
/* Opset a representation is written with (20, 23, 24). */
OQ_API int64_t oq_attn_format_opset(oq_attn_format f);
/* The mask form `m` resolves to for format `f` (AUTO resolved; others unchanged). */
OQ_API oq_mask_form oq_mask_form_resolve(oq_attn_format f, oq_mask_form m);

/* Shapes: static_batch/static_seq 0 means dynamic ("batch", "seq" symbolic dims). */
typedef struct oq_sdpa_config {
    int32_t heads;          /* query heads, >= 1 */
    int32_t kv_heads;       /* key/value heads, divides heads (GQA when smaller) */
    int32_t head_dim;       /* >= 1 */
    int32_t layout;         /* 3: [B, L, H*D]; 4: [B, H, L, D] */
    int64_t static_batch;
    int64_t static_seq;
    oq_attn_format format;
    oq_mask_form mask;      /* OQ_MASK_NONE for unmasked */
    oq_dtype attention_dtype; /* OQ_DTYPE_FLOAT32 or OQ_DTYPE_FLOAT16 */
    oq_dtype io_dtype;      /* query, key, value and output: OQ_DTYPE_FLOAT32 (also 0, the
                               default) or OQ_DTYPE_FLOAT16, which needs float16 attention and
                               no mask: the model is then the attention alone, no Cast (what
                               PyTorch's fp16 scaled_dot_product_attention is timed on) */
} oq_sdpa_config;

/* Defaults: 4 heads, 4 kv heads, head_dim 16, layout 4, dynamic, decomposed,
 * auto mask, float32. */
OQ_API void oq_sdpa_config_default(oq_sdpa_config *c);
/* OQ_ERR_INVALID_ARG with a message naming the option for an impossible combination. */
OQ_API oq_status oq_sdpa_config_check(const oq_sdpa_config *c, oq_err *err);
/* Build the sdpa model. The caller frees *out with oq_graph_free. */
OQ_API oq_status oq_export_sdpa(const oq_sdpa_config *c, oq_graph **out, oq_err *err);

/* ---- encoder ---------------------------------------------------------- */

#define OQ_ENCODER_MAX_OUTPUTS 8
#define OQ_ENCODER_NAME_MAX 32

typedef struct oq_encoder_output {
    char name[OQ_ENCODER_NAME_MAX]; /* [A-Za-z0-9_], the ONNX output name */
    int32_t dim;                    /* K: the output is [B, L, K] */
} oq_encoder_output;

typedef struct oq_encoder_config {
    int32_t features;   /* F */
    int32_t width;      /* W, model width */
    int32_t layers;     /* N blocks, >= 0 */
    int32_t heads;      /* attention heads, divides W */
    int32_t ffn_width;  /* hidden width of the feed-forward part */
    int32_t n_outputs;
    oq_encoder_output outputs[OQ_ENCODER_MAX_OUTPUTS];
    float ln_epsilon;   /* LayerNormalization epsilon, 1e-5 */
} oq_encoder_config;

/* Defaults: F 8, W 32, N 2, heads 4, ffn 64, outputs cls K=6 and reg K=4. */
OQ_API void oq_encoder_config_default(oq_encoder_config *c);
OQ_API oq_status oq_encoder_config_check(const oq_encoder_config *c, oq_err *err);

/* The weights, float32, one tensor per documented name (docs/export.md):
 *   embed.weight [F,W], embed.bias [W],
 *   blocks.<i>.ln1.scale [W], blocks.<i>.ln1.bias [W],
 *   blocks.<i>.attn.{wq,wk,wv,wo} [W,W], blocks.<i>.attn.{bq,bk,bv,bo} [W],
 *   blocks.<i>.ln2.scale [W], blocks.<i>.ln2.bias [W],
 *   blocks.<i>.ffn.w1 [W,FF], blocks.<i>.ffn.b1 [FF], blocks.<i>.ffn.w2 [FF,W], blocks.<i>.ffn.b2 [W],
 *   final_ln.scale [W], final_ln.bias [W],
 *   heads.<name>.weight [W,K], heads.<name>.bias [K]
 * Weights are used as x @ weight + bias (row vectors). Owned by the struct.
 * `t` holds them in that order, with each block as ln1.scale, ln1.bias, wq, bq,
 * wk, bk, wv, bv, wo, bo, ln2.scale, ln2.bias, w1, b1, w2, b2 (whichever
 * constructor made them): the C reference relies on it. */
typedef struct oq_encoder_weights {
    oq_encoder_config cfg;
    size_t n;
    oq_tensor **t;
} oq_encoder_weights;

/* Deterministic random weights (splitmix64 + Box-Muller): matrices normal with
 * standard deviation 1/sqrt(fan_in), biases and LayerNorm biases with 0.1,
 * LayerNorm scales 1 + normal(0.1). Same seed, same bits on every platform. */
OQ_API oq_status oq_encoder_weights_random(const oq_encoder_config *c, uint64_t seed,
                                           oq_encoder_weights **out, oq_err *err);
/* Weights from named float tensors (e.g. an npz's arrays, any float dtype):
 * F, W, N, FF and the output heads (in the order given) are taken from the
 * shapes; `heads` (attention heads) cannot be and must be passed. Every
 * expected name must be present with the right shape; extra names are an error
 * (they usually mean a mismatched file). */
OQ_API oq_status oq_encoder_weights_from_tensors(const oq_tensor *const *tensors, size_t n,
                                                 int32_t heads, oq_encoder_weights **out, oq_err *err);
/* Look up one weight by name; NULL if absent (or w or name is NULL). */
OQ_API const oq_tensor *oq_encoder_weight(const oq_encoder_weights *w, const char *name);
OQ_API void oq_encoder_weights_free(oq_encoder_weights *w);
/* Weights from an .npz (names in docs/export.md; the shapes give the sizes, `heads` is
 * needed besides); errors are prefixed with the path. */
OQ_API oq_status oq_encoder_weights_load(const char *path, int32_t heads, oq_encoder_weights **out,
                                         oq_err *err);
/* Write the weights as an .npz (atomically; overwrite as in oq_npz_write). */
OQ_API oq_status oq_encoder_weights_save(const oq_encoder_weights *w, const char *path, int overwrite,
                                         oq_err *err);

/* Zeroed: decomposed, the mask form AUTO, float32 attention, dynamic shapes, ELU from
 * standard ops. */
typedef struct oq_encoder_export {
    oq_attn_format format;
    oq_mask_form mask;          /* AUTO, ADDITIVE, BOOL or SEQLEN (not NONE) */
    oq_dtype attention_dtype;   /* FLOAT32 or FLOAT16; 0 (UNDEFINED) is FLOAT32 */
    int64_t static_batch;       /* 0: dynamic */
    int64_t static_seq;
    int elu_op;                 /* 1: the ONNX Elu operator (ORT 1.29 has no CUDA kernel for
                                   Elu-22, so CUDA sessions place it on CPU); 0: standard ops */
} oq_encoder_export;

/* Build the encoder model from `w` (`x` NULL: the zeroed options). The caller frees *out with
 * oq_graph_free. */
OQ_API oq_status oq_export_encoder(const oq_encoder_weights *w, const oq_encoder_export *x,
                                   oq_graph **out, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
