/* The query heads an attention node computes, as the graph fixes them: what a reference that
 * computes a fixed number of heads is checked against before a run (validate). */
#ifndef ORTQUAL_INSPECT_HEADS_IMPL_H
#define ORTQUAL_INSPECT_HEADS_IMPL_H

#include <stdint.h>

#include "inspect/gview-impl.h"
#include "inspect/sdpa-impl.h"
#include "inspect/symdim-impl.h"

/* The query heads and the head dim D of an attention, as the graph fixes them (0 where not). */
typedef struct oq_heads {
    int64_t heads, head_dim;
    int folded; /* a chain of [B*H, L, D] scores */
} oq_heads;

/* The query heads of an ONNX Attention node or a com.microsoft one: Q's axis 1 where an ONNX
 * Attention's Q is 4-D ([B, H, L, D]: ONNX reads the heads off the shape then), else q_num_heads
 * (com.microsoft: num_heads); 0 where the graph does not fix them. */
int64_t oq_attention_query_heads(const oq_gview *v, oq_symctx *sc, const Onnx__NodeProto *n);

/* The head size of input `x` of an attention node of rank `rank` (4: [B, H, L, D]; 3:
 * [B, L, H*D] with `heads` heads), or -1 (also for any other rank, or x of another one): its
 * last axis as declared, else as the graph computes it (oq_sym_computed_last: projections'
 * initializers, Reshape targets; *computed set). */
int64_t oq_input_head_size(oq_symctx *sc, const char *x, int rank, int64_t heads, int *computed);

/* The head size of attention node `n`, the one reading of convert (its padding, its CUDA notes)
 * and inspect (and so validate's advice): Q's (rank 4; rank 3: hidden / q_num_heads), else K's
 * (kv_num_heads), each oq_input_head_size; com.microsoft's MultiHeadAttention and
 * GroupQueryAttention likewise with num_heads (K: MultiHeadAttention's num_heads, GroupQuery's
 * kv_num_heads), where Q is the query alone (a key input given); -1 unknown. Never from the
 * scale: 1/sqrt(D) is only the default (T5 scales by 1 whatever D). *from: "Q's shape", "K's
 * shape", or either "as the graph computes it"; *q_heads: Q's head count when the size is read
 * from Q's shape, else 0. */
int64_t oq_attention_head_size(oq_symctx *sc, const Onnx__NodeProto *n, int64_t *q_heads, const char **from);

/* The K/V heads of an ONNX Attention node or a com.microsoft one: K's axis 1 where an ONNX
 * Attention's K is 4-D, else kv_num_heads (grouped-query where they differ from the query
 * heads); 0 where the graph does not fix them. */
int64_t oq_attention_kv_heads_op(const oq_gview *v, oq_symctx *sc, const Onnx__NodeProto *n);
/* A decomposed chain's: the heads axis of the query side of its score product (rank 4: axis 1;
 * rank 5, grouped query heads [B, Hkv, G, L, D]: Hkv * G), carried back through the Transpose and
 * the Reshape that split the heads off the hidden axis, D its last axis; rank 3, the heads folded
 * into the batch axis ([B*H, L, D]): nn.MultiheadAttention's fold (oq_mha_fold; none where the
 * match found Q, K and V folded differently), else the Reshape that folded them into Q or the
 * one that unfolds the output. */
oq_heads oq_attention_heads_chain(const oq_gview *v, oq_symctx *sc, const oq_sdpa_match *m);

/* nn.MultiheadAttention's fold of heads into the batch axis, with no 4-D value: x [L, B, E] ->
 * Reshape [L, B*H, D] -> Transpose `perm` ([1,0,2]: [B*H, L, D], Q and V; [1,2,0]: [B*H, D, L],
 * K^T at once). */
typedef struct oq_mha_fold {
    const char *x;                   /* [L, B, E] */
    const Onnx__NodeProto *reshape;
    int64_t heads, head_dim;         /* H and D, H * D = E */
} oq_mha_fold;
/* 1 when `value` is that Transpose of that Reshape (its target a constant or computed, 0 and -1
 * as ONNX's Reshape reads them), proven with symbolic shapes: L kept, B*H = B times E/D. */
int oq_mha_fold_of(const oq_gview *v, oq_symctx *sc, const char *value, const int64_t perm[3], oq_mha_fold *out);

#endif
