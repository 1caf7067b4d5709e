/* Internals of src/inspect shared across the library (never installed). */
#ifndef ORTQUAL_INSPECT_IMPL_H
#define ORTQUAL_INSPECT_IMPL_H

#include "ortqual/inspect.h"
#include "ortqual/tensor.h"

/* What every refusal of a value for an input with a default says of that input. */
#define OQ_DEFAULT_INPUT_WHY "has a default (the initializer of its name), which ortqual runs the model with"

/* A tensor of `t` (n, read from `path`) for an input with a default would be ignored: ortqual's
 * runs feed the inputs ONNX Runtime lists, those without one. The first of mi's default inputs
 * that `t` holds is refused, OQ_ERR_INVALID_ARG "PATH: WHAT 'w': the model's input 'w' has a
 * default ...: it feeds only inputs without one" (`what`: "member" for validate's batches,
 * "tensor" for bench's inputs). */
oq_status oq_model_refuse_default_inputs(const oq_model_info *mi, const oq_tensor *const *t, size_t n,
                                         const char *path, const char *what, oq_err *err);

/* ortqual feeds and compares tensors only: the first input or output of mi that is none (a
 * sequence, map or optional) is refused before anything runs, OQ_ERR_INVALID_ARG "PATH: output
 * 'hs' is not a tensor (sequence of float32 tensors): TOOL cannot compare it ...". */
oq_status oq_model_refuse_non_tensors(const oq_model_info *mi, const char *path, const char *tool, oq_err *err);

/* What inspect warns of, and convert, validate and bench refuse (OQ_ERR_FORMAT, "PATH: ..."),
 * for a graph without outputs: ONNX Runtime runs nothing for it ("OrtValue indexes should
 * have been populated", or "At least one output should be requested"). */
#define OQ_NO_OUTPUTS_WHY "the graph has no outputs: ONNX Runtime has nothing to compute"

/* A graph without outputs refused, OQ_ERR_FORMAT "PATH: " OQ_NO_OUTPUTS_WHY. */
oq_status oq_model_refuse_no_outputs(const oq_model_info *mi, const char *path, oq_err *err);

/* The input or output of that name among io[0..n) (NULL name or none: NULL). */
const oq_io_info *oq_find_io(const oq_io_info *io, size_t n, const char *name);

#endif
