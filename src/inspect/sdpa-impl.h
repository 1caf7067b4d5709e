/* Decomposed scaled-dot-product attention: the one matcher behind `inspect`
 * (which lists the chains) and `convert --fuse` (which replaces them).
 *
 * Found in two stages from a Softmax node:
 *  1. the shape (what inspect always reported): the Softmax input comes from a
 *     MatMul through Mul/Div/Add/Sub/Where/Cast only, and its output reaches a
 *     second MatMul, as that MatMul's first input, through Cast/Where/Mul only;
 *  2. the function: it is attention exactly when
 *       softmax(scale * Q K^T  [+ additive terms] [masked by one or two Wheres])  @ V
 *     over the key axis, with Q, K, V of rank 4 ([B, H, L, D]), every scale a
 *     constant scalar, K^T a transpose of K's last two axes (a Transpose with
 *     perm [0,1,3,2]; a Transpose [0,2,3,1] of the [B, L, H, D] projection; or
 *     torch's Reshape -> Transpose[0,2,1] -> Reshape, proven with symbolic
 *     shapes), and between softmax and the value product nothing but the
 *     Where(IsNaN(P), 0, P) guard for fully masked rows; or, rank 3, with
 *     Q, K and V nn.MultiheadAttention's fold of the heads into the batch
 *     axis ([L, B, E] -> [L, B*H, D] -> [B*H, L, D], oq_mha_fold), all three
 *     folded into the same H and D.
 * A chain that passes stage 1 but computes something else (a softmax over the
 * query axis) is NOT_ATTENTION; one that is attention in a form not rewritten
 * here (rank-5 grouped scores, a Cast inside the chain) is UNSUPPORTED; both
 * say why.
 */
#ifndef ORTQUAL_INSPECT_SDPA_IMPL_H
#define ORTQUAL_INSPECT_SDPA_IMPL_H

#include <stddef.h>

#include "inspect/gview-impl.h"
#include "inspect/symdim-impl.h"

typedef enum oq_sdpa_verdict {
    OQ_SDPA_FUSABLE = 1,
    OQ_SDPA_NOT_ATTENTION,
    OQ_SDPA_UNSUPPORTED
} oq_sdpa_verdict;

/* How the key operand of the score product is made from K. */
typedef enum oq_sdpa_kform {
    OQ_SDPA_KT_TRANSPOSE, /* Transpose(K, [0,1,3,2]): k is K */
    OQ_SDPA_KT_HEADS,     /* Transpose(X, [0,2,3,1]) of X [B,L,H,D]: K = Transpose(k, [0,2,1,3]) */
    OQ_SDPA_KT_RESHAPE,   /* Reshape(Transpose(Reshape(K,[-1,L,D]),[0,2,1]),[B,H,D,L]): k is K */
    OQ_SDPA_KT_FOLD       /* nn.MultiheadAttention's fold: q, k, v are the [L, B, E] values folded */
} oq_sdpa_kform;

typedef enum oq_sdpa_mask {
    OQ_SDPA_MASK_NONE,
    OQ_SDPA_MASK_ADD,  /* scores + mask_value */
    OQ_SDPA_MASK_KEEP, /* Where(mask_value, scores, fill): true keeps the key */
    OQ_SDPA_MASK_DROP  /* Where(mask_value, fill, scores): true removes it (masked_fill) */
} oq_sdpa_mask;

/* Additive terms on the scores a fused mask sums (a bias, a mask, ...). */
#define OQ_SDPA_TERMS_MAX 4
/* Nodes on the score chain between the score product and the softmax, at most. */
#define OQ_SDPA_CHAIN_MAX 8
/* Where masks on the scores (PyTorch's key padding and causal mask, each a masked_fill): their
 * keep-masks are one mask, the logical AND, since each fill excludes its keys. Any number: every
 * node of the chain may be one. */
#define OQ_SDPA_WHERES_MAX OQ_SDPA_CHAIN_MAX

/* One Where mask: Where(cond, scores, fill) (KEEP) or Where(cond, fill, scores) (DROP). */
typedef struct oq_sdpa_where {
    oq_sdpa_mask kind;
    const char *cond;
    const char *fill_value; /* the tensor of the fill (a combined float mask reuses it) */
    double fill;            /* its value, times any factor applied after it */
} oq_sdpa_where;

typedef struct oq_sdpa_match {
    oq_sdpa_verdict verdict;
    char why[256];         /* NOT_ATTENTION / UNSUPPORTED: the reason */
    char chain[1400];      /* "MatMul 'a' -> Mul -> Add -> Softmax 's' -> MatMul 'b'" */
    size_t softmax, score_mm, out_mm; /* node indices */
    /* FUSABLE: the Attention node's operands (names owned by the graph) */
    const char *q, *k, *v;
    oq_sdpa_kform kform;
    double scale;          /* every constant factor on the scores, multiplied */
    oq_sdpa_mask mask;     /* ADD: additive terms alone; KEEP/DROP: wheres[0]'s kind */
    const char *mask_value; /* the first term (ADD) or wheres[0].cond */
    oq_sdpa_where wheres[OQ_SDPA_WHERES_MAX]; /* the Where masks, outermost first */
    int n_wheres;
    /* every additive term on the scores, outermost first: one (mask ADD: mask_value) or more
     * (summed into attn_mask), beside Where masks or alone */
    const char *terms[OQ_SDPA_TERMS_MAX];
    int n_terms;
    int guard;             /* the IsNaN guard is present */
    const char *default_input; /* UNSUPPORTED for a graph input with a default it would fix: its name */
    int64_t fold_heads;    /* KT_FOLD: H (and fold_dim D) of Q, K and V; -1: they fold different ones */
    int64_t fold_dim;
} oq_sdpa_match;

/* Match the chain around the Softmax node at index `softmax`. Returns 0 when
 * stage 1 fails (not an attention-shaped chain: *m untouched but for zeroing),
 * else 1 with m->verdict set. `sc` evaluates the shape computations. */
int oq_sdpa_match_softmax(const oq_gview *v, oq_symctx *sc, size_t softmax, oq_sdpa_match *m);

/* What the match's mask is, in words ("additive mask", "2 Where masks and 1 additive term", ...),
 * into buf; returns buf. */
const char *oq_sdpa_mask_text(const oq_sdpa_match *m, char *buf, size_t n);

/* Additive terms beside a Where, or more than one: attn_mask combines them, a float mask (Where
 * masks alone are one bool mask, their AND). */
int oq_sdpa_mask_combined(const oq_sdpa_match *m);

/* The fill value a Where mask must have to exclude a key: -inf, or a finite
 * value at most this (exp underflows to exactly 0 in float16/32 for scores far
 * smaller in magnitude). */
#define OQ_SDPA_FILL_MAX (-1.0e4)

#endif
