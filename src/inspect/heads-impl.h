/* The query heads an attention node computes, as the graph fixes them: what a reference that
 * computes a fixed number of heads is checked against before a run (validate). */
#ifndef ORTQUAL_INSPECT_HEADS_IMPL_H
#define ORTQUAL_INSPECT_HEADS_IMPL_H

#include <stdint.h>

#include "inspect/gview-impl.h"
#include "inspect/sdpa-impl.h"
#include "inspect/symdim-impl.h"

/* An ONNX Attention node's (`ms` 0) or a com.microsoft one's (`ms` 1): Q's axis 1 where Q is
 * 4-D ([B, H, L, D]: ONNX reads the heads off the shape then), else q_num_heads (com.microsoft:
 * num_heads); 0 when the graph does not fix them. */
int64_t oq_attention_heads_op(const oq_gview *v, oq_symctx *sc, const Onnx__NodeProto *n, int ms);
/* A decomposed chain's: the heads axis of the query side of its score product (rank 4: axis 1;
 * rank 5, grouped query heads [B, Hkv, G, L, D]: Hkv * G), carried back through the Transpose and
 * the Reshape that split the heads off the hidden axis; rank 3, the heads folded into the batch
 * axis ([B*H, L, D], *folded set): through the Reshape that folded them into Q or the one that
 * unfolds the output; 0 when the graph does not fix them. */
int64_t oq_attention_heads_chain(const oq_gview *v, oq_symctx *sc, const oq_sdpa_match *m, int *folded);

#endif
