/* Constant indices of a Gather, GatherElements or GatherND: computed from constants (initializers,
 * Constant nodes, inputs' defaults) by the ops constfold-impl.h folds, so that the bounds of its
 * data (inputuse-impl.h) hold them before ONNX Runtime runs a thing. An input's indices are
 * checked per batch instead (signature.c); others known only at run time are left to ORT, and
 * said so.
 */
#ifndef ORTQUAL_INSPECT_CONSTIDX_IMPL_H
#define ORTQUAL_INSPECT_CONSTIDX_IMPL_H

#include <stddef.h>

#include "inspect/gview-impl.h"
#include "ortqual/status.h"

/* Every bounded Gather's constant indices in range: one outside is OQ_ERR_FORMAT naming `label`
 * (the model), the node, the indices, the element, its value and the bound. With `unchecked`
 * (may be NULL): the notes of the nodes whose indices nothing checks before a run (computed at
 * run time, or a constant not folded; not an input's, checked per batch), each ending in '\n',
 * into *unchecked (malloc'ed; NULL: none). Errors: also OQ_ERR_NOMEM. */
oq_status oq_const_indices_check(const oq_gview *v, const char *label, char **unchecked, oq_err *err);

/* What a reader of node `n` is told of its indices (malloc'ed), else NULL: an index outside the
 * bound; a constant it could not fold, "not checked" and why; indices known only at run time:
 * an input's (checked per batch) or computed ones (left to ORT). */
char *oq_const_indices_note(const oq_gview *v, const Onnx__NodeProto *n);

#endif
