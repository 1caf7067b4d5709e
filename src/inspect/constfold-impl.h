/* A small folder of integer constants: what a value computed from initializers and Constant
 * nodes holds, for the bounds check of constant indices (constidx-impl.h). It folds Reshape,
 * Transpose, Unsqueeze, Squeeze, Cast, Identity, Add, Sub, Mul, Div, Mod, Min, Max, Neg, Where,
 * Expand, Tile, Gather, Concat, Range, Slice, ConstantOfShape and Constant (`value`, `value_int`,
 * `value_ints`), int32 and int64 (and a bool constant, Where's condition), with ONNX's
 * broadcasting and clamping and ORT's integer division; an overflow, a division by zero, a value
 * above OQ_FOLD_MAX_ELEMS elements, a rank above OQ_FOLD_MAX_RANK, a cycle or more than
 * OQ_FOLD_MAX_OPS operators is not folded (said why). An input's default (an initializer of its
 * name) is folded as the constant every run of ortqual's uses: it feeds only inputs without one.
 */
#ifndef ORTQUAL_INSPECT_CONSTFOLD_IMPL_H
#define ORTQUAL_INSPECT_CONSTFOLD_IMPL_H

#include <stdint.h>

#include "inspect/gview-impl.h"

#define OQ_FOLD_MAX_OPS 32
#define OQ_FOLD_MAX_ELEMS (1 << 20)
#define OQ_FOLD_MAX_RANK 64

typedef struct oq_folded {
    int rank;
    int32_t type; /* ONNX's INT32 or INT64: the range its arithmetic stays in (BOOL: 0 or 1) */
    int64_t shape[OQ_FOLD_MAX_RANK];
    int64_t *v; /* row-major, malloc'ed */
} oq_folded;

enum { OQ_FOLD_NONE, OQ_FOLD_DONE, OQ_FOLD_CANNOT };

/* A value read more than once, folded once: in a parameter or not (its constants noted or not). */
typedef struct oq_fold_memo {
    const char *value;
    int in_param;
    oq_folded f;
} oq_fold_memo;

/* One folding: its graph, and what it found on the way. */
typedef struct oq_fold {
    const oq_gview *v;
    int ops;            /* distinct operators folded so far, against OQ_FOLD_MAX_OPS */
    /* those operators, each counted once whether read as a parameter, as data or both */
    const Onnx__NodeProto *counted[OQ_FOLD_MAX_OPS];
    /* the operators being folded, outermost first: one met again is a cycle */
    const Onnx__NodeProto *path[OQ_FOLD_MAX_OPS];
    int depth;
    oq_fold_memo *memo; /* the values read more than once, folded so far */
    size_t n_memo;
    int64_t memo_elems; /* their elements, held to OQ_FOLD_MAX_ELEMS */
    int in_param;       /* inside a parameter (a shape, axes): its constants and ops not noted */
    char opnames[128];  /* those the values went through, in order: "Transpose, Reshape" */
    char consts[128];   /* the constants they came from: "'a', 'b'" */
    char defaults[128]; /* the inputs whose defaults they came from */
    const char *runtime; /* OQ_FOLD_NONE: the first value found that is known only at run time */
    char why[256];       /* OQ_FOLD_CANNOT: why not */
} oq_fold;

/* `value` folded into *out (its v malloc'ed, to free): OQ_FOLD_DONE; OQ_FOLD_NONE where it
 * depends on a value known only at run time (fo->runtime); OQ_FOLD_CANNOT with fo->why.
 * fo->v must be set; the rest zero; oq_fold_free when done. A value read twice is folded once. */
int oq_fold_value(oq_fold *fo, const char *value, oq_folded *out);
/* Frees what fo keeps between values (its memo); fo may then fold again. */
void oq_fold_free(oq_fold *fo);
/* Where the folded values came from, " (the constant 'a' through Add, Reshape)" or, from no
 * constant, " (made by ConstantOfShape 'c')", into buf; "" for a constant read as it is. */
const char *oq_fold_origin(const oq_fold *fo, char *buf, size_t cap);

#endif
