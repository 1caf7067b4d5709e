/* Constant indices of a Gather, GatherElements or GatherND: a constant (an initializer or a
 * Constant node) that reaches the node as it is or through Reshape, Transpose, Unsqueeze, Squeeze,
 * Cast or Identity, folded here so that the bounds of its data (inputuse-impl.h) hold it before
 * ONNX Runtime runs a thing. An input's indices are checked per batch instead (signature.c).
 */
#ifndef ORTQUAL_INSPECT_CONSTIDX_IMPL_H
#define ORTQUAL_INSPECT_CONSTIDX_IMPL_H

#include <stddef.h>

#include "inspect/gview-impl.h"
#include "ortqual/status.h"

/* Every bounded Gather's constant indices in range: one outside is OQ_ERR_FORMAT naming `label`
 * (the model), the node, the indices, the element, its value and the bound. */
oq_status oq_const_indices_check(const oq_gview *v, const char *label, oq_err *err);

/* What a reader of node `n` is told of its constant indices (malloc'ed), else NULL: an index
 * outside the bound, or a constant it could not fold, "not checked" and why. */
char *oq_const_indices_note(const oq_gview *v, const Onnx__NodeProto *n);

#endif
