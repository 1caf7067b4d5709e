/* Shared by the sdpa and encoder exporters: one masked attention in any
 * representation, and the mask-derived values it needs (built once per graph). */
#ifndef ORTQUAL_EXPORT_ATTENTION_IMPL_H
#define ORTQUAL_EXPORT_ATTENTION_IMPL_H

#include "ortqual/export.h"
#include "ortqual/graph.h"

/* One-output nodes with their inputs listed inline: OP(g, "Add", a, b);
 * OPA(g, "Cast", attrs, x) with an oq_attr array. */
#define NAMES(...) ((const char *[]){__VA_ARGS__})
#define NARGS(...) (sizeof(NAMES(__VA_ARGS__)) / sizeof(const char *))
#define OP(g, op, ...) oq_graph_op((g), (op), NARGS(__VA_ARGS__), NAMES(__VA_ARGS__), 0, NULL)
#define OPA(g, op, attrs, ...)                                                                  \
    oq_graph_op((g), (op), NARGS(__VA_ARGS__), NAMES(__VA_ARGS__),                          \
                sizeof(attrs) / sizeof(oq_attr), (attrs))

typedef struct oq_attn_builder {
    oq_graph *g;
    oq_attn_format format;
    oq_mask_form mask;      /* resolved: NONE, ADDITIVE, BOOL or SEQLEN */
    oq_dtype dtype;         /* attention dtype */
    oq_dtype io_dtype;      /* q, k, v and the result: 0 (float32) or the attention dtype */
    int32_t heads, kv_heads, head_dim;
    int32_t layout;         /* 3 or 4, for q, k, v and the result */
    const char *mask_in;    /* public float32 [B, L] mask, NULL when unmasked */
    const char *node_name;  /* Attention node name (made unique), NULL: "attn" */
    /* Lazily built from mask_in, reused by every attention of the graph. */
    const char *valid_bool; /* [B, L] bool */
    const char *key_bias;   /* decomposed additive: [B,1,1,L] (or [B,1,1,1,L] for GQA) */
    const char *key_bias5;
    const char *key_bool;   /* decomposed bool: same shapes */
    const char *key_bool5;
    const char *attn_mask;  /* Attention: [B,1,L,L] additive or bool */
    const char *seqlen;     /* Attention-24: int64 [B] */
} oq_attn_builder;

/* Large negative bias of padded keys in the additive form, per dtype. */
double oq_attn_mask_bias(oq_dtype dtype);

/* Attention of q, k, v (io_dtype, layout b->layout) -> a result of that dtype in the
 * same layout as q, cast to and from the attention dtype when they differ. Returns
 * the value name, NULL after a graph error. */
const char *oq_attn_build(oq_attn_builder *b, const char *q, const char *k, const char *v);

/* Where(valid, x, 0) with the mask broadcast for a rank-3 [B, L, C] value
 * (rank3 != 0) or a rank-4 [B, H, L, D] value. */
const char *oq_attn_zero_padding(oq_attn_builder *b, const char *x, int rank3);

/* One-paragraph description of the attention for the model doc string. */
void oq_attn_describe(const oq_attn_builder *b, char *buf, size_t n);

/* The batch and sequence axes of every input and output: named "batch" and "seq", or of the
 * fixed size given (> 0) with ONNX's denotation of the axis, so that a reader of a static
 * model (validate's mask axes) is told what the sizes do not say. */
oq_dim oq_export_batch_dim(int64_t fixed);
oq_dim oq_export_seq_dim(int64_t fixed);

/* Checks shared by sdpa and encoder: representation, dtype, static shape,
 * mask form vs format; messages name the CLI option. */
oq_status oq_export_check_common(oq_attn_format f, oq_mask_form m, oq_dtype dt, int64_t sb,
                                 int64_t sl, oq_err *err);

#endif
