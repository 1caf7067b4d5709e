/* Symbolic dimensions: what a dynamic graph's shape computations evaluate to.
 *
 * Exporters compute shapes inside the graph (Shape -> Slice -> Concat ->
 * Reshape). To prove that a Reshape/Transpose/Reshape chain only swaps two
 * axes, or that a mask was reshaped [B,H,1,L] -> [H*B,1,L] -> [B,H,1,L], a
 * matcher needs those computations as formulas. A dimension here is a
 * monomial: an integer coefficient times a product of symbols, where a symbol
 * is a named dimension of the model ("batch", "seq": equal names are equal
 * sizes, as ONNX's IR says for dim_param) or an opaque "value#axis" for a
 * dimension nothing names.
 */
#ifndef ORTQUAL_INSPECT_SYMDIM_IMPL_H
#define ORTQUAL_INSPECT_SYMDIM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "inspect/gview-impl.h"

#define OQ_SYM_MAX_FACTORS 6
#define OQ_SYM_MAX_RANK 8

/* coef * sym[0] * ... * sym[n-1] (symbols sorted). coef INT64_MIN is "unknown";
 * coef -1 with n 0 is the literal -1 of a Reshape target, coef 0 a literal 0. */
typedef struct oq_symdim {
    int64_t coef;
    int n;
    uint32_t sym[OQ_SYM_MAX_FACTORS];
} oq_symdim;

typedef struct oq_symctx oq_symctx;

oq_status oq_symctx_create(const oq_gview *v, oq_symctx **out, oq_err *err);
void oq_symctx_free(oq_symctx *c);

oq_symdim oq_symdim_const(int64_t c);
int oq_symdim_known(oq_symdim d);
int oq_symdim_eq(oq_symdim a, oq_symdim b);
/* a * b; unknown when either is or the product has too many factors. */
oq_symdim oq_symdim_mul(oq_symdim a, oq_symdim b);
/* a / b when b divides a exactly, else unknown. */
oq_symdim oq_symdim_div(oq_symdim a, oq_symdim b);
/* The model's name for `d` when it is exactly one named dimension ("seq"), NULL for
 * constants, products and the opaque "value#axis" symbols. */
const char *oq_symdim_name(const oq_symctx *c, oq_symdim d);
/* "4*batch", "seq", "7", "?" into buf, a dim nothing names as "k.shape[2]"; returns buf. */
char *oq_symdim_str(const oq_symctx *c, oq_symdim d, char *buf, size_t n);

/* The view c evaluates over. */
const oq_gview *oq_sym_view(const oq_symctx *c);

/* A tensor the model leaves undeclared, typed by oq_sym_infer. */
typedef struct oq_sym_typed {
    const char *name; /* a node's first output (the graph's string) */
    int32_t elem;     /* onnx data type */
    int rank;
    oq_symdim d[OQ_SYM_MAX_RANK]; /* a size, one named dim, or unknown (a dim of its own) */
} oq_sym_typed;

/* Infer the element type and shape of every node output without value_info, forward through the
 * ops exporters use around attention (typeinfer.c: elementwise with broadcasting, MatMul,
 * Transpose, Reshape, Unsqueeze, Squeeze, Cast, Softmax, rotary's Slice and Concat, repeat_kv's
 * Expand and Tile with a constant or computed shape, Shape, ...), where both are known; from then on
 * oq_sym_shape and oq_sym_rank read them as a value_info declaring them would be read. The one
 * shape reasoning of inspect (which reads them so) and convert (which declares them before its
 * passes). Errors: OQ_ERR_NOMEM. */
oq_status oq_sym_infer(oq_symctx *c, oq_err *err);
/* The tensors oq_sym_infer typed, in node order (*n of them). */
const oq_sym_typed *oq_sym_inferred(const oq_symctx *c, size_t *n);
/* The last axis of `value` as the graph computes it (every node inferred, declared or not: a
 * declared dynamic size is no answer), a plain size, or -1 when the graph does not fix it. */
int64_t oq_sym_computed_last(oq_symctx *c, const char *value);
/* Where the inference stopped on the way to `value`, whose rank is unknown: the first tensor back
 * through inputs of unknown rank whose own inputs are all of known rank, *at its producer (NULL: a
 * graph input or an initializer that declares no shape); NULL when value's rank is known. */
const char *oq_sym_unknown_from(oq_symctx *c, const char *value, const Onnx__NodeProto **at);
/* (oq_sym_infer's) c takes the n typed tensors and their index by producing node, both malloc'ed. */
void oq_sym_adopt(oq_symctx *c, oq_sym_typed *typed, size_t n, size_t *slot);

/* The symbolic shape of `value` (declared dims, else inferred, else opaque symbols
 * when only the rank is known). Returns the rank (<= cap), or -1 when unknown. */
int oq_sym_shape(oq_symctx *c, const char *value, oq_symdim *dims, int cap);
/* The rank of `value`: inferred, else oq_gview_rank's. */
int oq_sym_rank(oq_symctx *c, const char *value);
/* Evaluate a 1-D (or scalar) int64 shape tensor: returns the element count and
 * fills `out`, or -1 when some element cannot be expressed. */
int oq_sym_vec(oq_symctx *c, const char *value, oq_symdim *out, int cap);
/* The output dims of Reshape(input of `in` dims, target), target as evaluated by
 * oq_sym_vec (0 copies the input dim unless allowzero, one -1 is inferred).
 * Returns the rank or -1 when it cannot be worked out. */
int oq_sym_reshape(const oq_symdim *in, int in_rank, const oq_symdim *target, int n, int allowzero,
                   oq_symdim *out);

#endif
