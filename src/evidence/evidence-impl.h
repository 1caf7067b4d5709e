/* Internals of the evidence module (never installed). */
#ifndef ORTQUAL_EVIDENCE_IMPL_H
#define ORTQUAL_EVIDENCE_IMPL_H

#include <jansson.h>

#include "ortqual/evidence.h"

/* oq_loaded_libs, and in *core (malloc'ed, one per library; NULL: not wanted) whether each
 * defines OrtGetApiBase itself: an ONNX Runtime core library, grouped "ort" whatever its name. */
oq_status oq_loaded_libs_cores(oq_loaded_lib **out, size_t *n, int **core, oq_err *err);

/* The evidence as a new JSON object (the caller owns the reference). NULL on OOM. */
json_t *oq_evidence_json(const oq_evidence *ev);
/* Collects everything (oq_evidence_collect; `rt` and `opts` may be NULL) as
 * JSON for a summary; on failure an {"error": message} object. NULL only on OOM. */
json_t *oq_evidence_collect_json(oq_runtime *rt, const oq_evidence_opts *opts);

#endif
