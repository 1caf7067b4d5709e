/* What a model's inputs are used as, told by the nodes that read them: validate's mask
 * detection must not take an Attention's [Lq, T] attn_mask or token ids for the [B, L]
 * padding mask, and its finite check lets an additive mask hold -inf.
 */
#ifndef ORTQUAL_INSPECT_INPUTUSE_IMPL_H
#define ORTQUAL_INSPECT_INPUTUSE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "inspect/gview-impl.h"
#include "ortqual/inspect.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* Bits of an input's use. "Reaches": through Cast, CastLike, Identity, Not (its rank kept) or
 * Unsqueeze, Reshape, Expand, Squeeze, Transpose (its rank changed). */
enum {
    /* an ONNX Attention's attn_mask (input 3), reached with its rank kept: as ONNX broadcasts
     * it, a rank-2 one is [Lq, T] (axis 0 the query), never [B, L] */
    OQ_USE_ATTN_MASK_AS_IS = 1u << 0,
    /* added to the attention scores: a float attn_mask of ONNX Attention (input 3), the
     * attention_bias of com.microsoft Attention or MultiHeadAttention (input 5), or an Add
     * whose sum a Softmax reads (through Add, Sub, Mul, Div, Where, Cast, Identity, Reshape) */
    OQ_USE_ADDITIVE = 1u << 1,
    /* the indices of a Gather, GatherElements or GatherND (input 1): token ids, positions */
    OQ_USE_INDICES = 1u << 2,
    /* a key-padding mask by its operator's definition, reached with its rank kept:
     * com.microsoft Attention's mask_index (input 3), MultiHeadAttention's key_padding_mask (4) */
    OQ_USE_KEY_PADDING = 1u << 3,
    /* "Flows": through the nodes that compute a mask or bias from it (FLOW in inputuse.c:
     * casts, shape changes, comparisons, logic and arithmetic), in any data input of theirs.
     * The attention scores: it flows to a Softmax's input or to an attention operator's mask or
     * bias (what a [B, L] padding mask is made into: BERT's (1 - mask) * min added to them), or
     * to an Attention-24's nonpad_kv_seqlen (the mask summed: its key lengths) */
    OQ_USE_SCORES = 1u << 4,
    /* the data: it flows to a MatMul, Gemm, Conv or Einsum, or an attention operator's query,
     * key or value, never through the scores (ViT's bool_masked_pos: a Where that puts the mask
     * token in place of the masked patches' embeddings) */
    OQ_USE_DATA = 1u << 5,
    /* Which value marks a valid position, where the flow tells it (Not, Sub(c, x) and Equal(x, 0)
     * invert on the way): KEEP, 1 (true) = valid: it selects the kept branch of a Where whose
     * other branch is a large negative constant, its inverse is multiplied by one, or an
     * attention operator reads it as its key-padding mask or bool attn_mask (true = attend);
     * PAD, 1 = padding: the opposite. Both: the uses disagree, and nothing is told. */
    OQ_USE_SAYS_KEEP = 1u << 7,
    OQ_USE_SAYS_PAD = 1u << 8,
};

/* A bound on the values of an integer input: the indices of a Gather, GatherElements or
 * GatherND (its data an initializer) along one axis of that data. Indices outside -size..size-1
 * make ORT fail the run, so a batch's are checked before any (validate's and convert's input
 * check). */
typedef struct oq_index_bound {
    int64_t size;   /* the data's size along `axis`; 0: no bound */
    int64_t axis;   /* the data's axis */
    char op[16];    /* the node's operator */
    char node[128]; /* its name */
} oq_index_bound;

/* GatherND positions along the indices' last axis that are bounded (a data tensor of higher
 * rank than this leaves its later positions unchecked; ORT still checks them). */
#define OQ_INDEX_TUPLE_MAX 8

/* What an integer input indexes. Every element: a Gather's or GatherElements' indices (an
 * embedding's rows; along its axis for GatherElements), the smallest of them kept. A GatherND
 * reads its indices' last axis as a tuple: position j indexes the data's axis batch_dims + j,
 * so element e is bounded by tuple[e mod that axis's size], the smallest per position kept;
 * only where the input reaches the GatherND with its rank kept (a reshape moves its last axis). */
typedef struct oq_index_table {
    oq_index_bound all;
    oq_index_bound tuple[OQ_INDEX_TUPLE_MAX];
} oq_index_table;

/* The Casts on a route from an input to the indices of a Gather, in order: the node reads what
 * they make of the input's values (idcast-impl.h), and the check judges that. */
#define OQ_INDEX_CASTS_MAX 4
typedef struct oq_index_casts {
    int n;
    int32_t to[OQ_INDEX_CASTS_MAX];     /* each one's type (oq_dtype) */
    char node[OQ_INDEX_CASTS_MAX][64]; /* its node's name */
} oq_index_casts;

/* The tables an input indexes, one per chain of Casts it reaches them through (none: the input
 * as it is), as many chains as the model has (grown as the walk meets them: a fixed count left
 * the ones past it to ORT while inspect named them checked). A route through a cast the check
 * cannot follow (CastLike, a Cast to or from a type without a value rule, more than
 * OQ_INDEX_CASTS_MAX Casts) is left out: ORT checks those indices itself (inspect says so,
 * constidx.c). */
typedef struct oq_index_routes {
    int n;                  /* -1: the end of an array of them (oq_model_input_uses_*) */
    int cap;
    oq_index_casts *casts;  /* n of each, malloc'ed */
    oq_index_table *table;
} oq_index_routes;

/* Free an array of routes that oq_model_input_uses_* made (up to its end entry), and the array. */
void oq_index_routes_free(oq_index_routes *tables);

/* What the check found in an element of an input: a bound it breaks as its route's Casts make it,
 * or a Cast that has no value for it. */
typedef struct oq_index_hit {
    int64_t element;              /* -1: none */
    int route;                    /* the route in the oq_index_routes */
    const oq_index_bound *bound;  /* the bound broken; NULL: Cast `cast` has no value for it */
    int cast;                     /* (bound NULL) that Cast's place on the route */
    const char *why;              /* (bound NULL) why ("NaN", "outside int32's range") */
    int64_t index;                /* (bound set) the index the node reads */
} oq_index_hit;

/* The first element of t (of the input's type) that breaks a bound of one of r's routes as its
 * Casts make it, or that one of them has no value for, told in *hit (element -1: none). */
void oq_index_routes_check(const oq_index_routes *r, const oq_tensor *t, oq_index_hit *hit);
/* "Cast 'a' to float, Cast 'b' to int64": the first `upto` Casts of c, into buf; returns buf. */
char *oq_index_casts_str(const oq_index_casts *c, int upto, char *buf, size_t n);
/* Whether the per-batch check follows a Cast from type `from` to `to` (idcast-impl.h). */
int oq_index_cast_followed(int32_t from, int32_t to);

/* The bounds a Gather, GatherElements or GatherND `n` whose data is an initializer puts on its
 * indices (input 1), tightened into tb; a GatherND's only where its indices reach it `as_is`,
 * their rank kept: its tuples lie along their last axis. */
void oq_gather_bounds(const oq_gview *v, const Onnx__NodeProto *n, int as_is, oq_index_table *tb);
/* The first element of t (int64 or int32; other types: none) that breaks a bound of tb, that
 * bound in *b; -1: none. */
int64_t oq_index_outside(const oq_index_table *tb, const oq_tensor *t, const oq_index_bound **b);

/* The uses of each of mi's inputs in the model `buf` .. buf+n (mi: its inspection; `label`: its
 * name in messages), into *uses (mi->n_inputs entries, malloc'ed), and with `tables` (may be
 * NULL) the tables each indexes into *tables (as many, and an end entry: oq_index_routes_free). The model's constant indices
 * are held to their bounds first (constidx-impl.h), and with `unchecked` (may be NULL) the notes
 * of the indices nothing checks before a run go to *unchecked (oq_const_indices_check). Errors:
 * OQ_ERR_FORMAT (no model, a constant index outside its bound), OQ_ERR_NOMEM. */
oq_status oq_model_input_uses_bytes(const void *buf, size_t n, const oq_model_info *mi, const char *label,
                                    unsigned **uses, oq_index_routes **tables, char **unchecked, oq_err *err);
/* Only the notes of the indices nothing checks before a run, of the unpacked model m (convert's
 * check holds its original to them as validate does); *unchecked NULL when none. */
oq_status oq_model_unchecked_indices(const Onnx__ModelProto *m, const oq_model_info *mi, const char *label,
                                     char **unchecked, oq_err *err);
/* The same of the model file `path` (read for inspection: its large weights not copied). */
oq_status oq_model_input_uses_file(const char *path, const oq_model_info *mi, unsigned **uses,
                                   oq_index_routes **tables, oq_err *err);

/* What an input is as a [B, L] padding mask, told by its uses (above) and its name: the one rule
 * of validate's mask detection and bench --model's mask input. */
typedef enum oq_mask_role {
    OQ_MASK_ROLE_NONE = 0, /* its uses say it is something else (*why says what), or its two axes
                              are one named dimension or one fixed size ([L, L]: a query x key bias) */
    OQ_MASK_ROLE_OTHER,    /* neither its uses nor its name say anything */
    OQ_MASK_ROLE_NAME,     /* only its name ("mask" in it) says so: its uses tell nothing */
    OQ_MASK_ROLE_SCORES,   /* it flows into the attention scores (a mask or bias is made of it) */
    OQ_MASK_ROLE_OPERATOR, /* an attention operator reads it as its key-padding mask */
} oq_mask_role;

/* The role of input `in` whose uses are `uses` (0: not known), and in *why a sentence saying why
 * (NULL for OTHER); `named_only`: its name alone counts (convert's rule: an operator's
 * key-padding reading and the flow into the scores do not). The rank is the caller's to check. */
oq_mask_role oq_input_mask_role(const oq_io_info *in, unsigned uses, int named_only, const char **why);
/* Whether role `r` makes an input the [B, L] padding mask where no other input's does (NAME,
 * SCORES, OPERATOR; two such are refused): the one rule of validate's detection and bench
 * --model's mask input, so that both take the same input of the same model. */
int oq_mask_role_taken(oq_mask_role r);
/* The polarity a mask input's `uses` tell: OQ_USE_SAYS_KEEP or OQ_USE_SAYS_PAD; 0 where they
 * tell none or disagree. The one reading of bench --model and validate. */
unsigned oq_uses_polarity(unsigned uses);
/* The uses of input `input` of the unpacked model m (mi: its inspection) into *uses, as
 * oq_model_input_uses_* gives them, and what the first node that tells how it reads the input as
 * a mask (the reading oq_uses_polarity gives) does with it, into how (n bytes): "Where 'w' masks
 * the attention scores where 'mask' is 0", "Attention 'a' attends the keys where 'mask' is 1";
 * 0 and "" where m has no such input, "" where no node tells. Errors: OQ_ERR_FORMAT (no graph,
 * naming `label`), OQ_ERR_NOMEM. */
oq_status oq_mask_reading_str(const Onnx__ModelProto *m, const char *label, const oq_model_info *mi, const char *input,
                              unsigned *uses, char *how, size_t n, oq_err *err);
/* 1 when `name` contains "mask", in any case. */
int oq_named_like_mask(const char *name);

#endif
