/* Internals of the evidence module (never installed). */
#ifndef ORTQUAL_EVIDENCE_IMPL_H
#define ORTQUAL_EVIDENCE_IMPL_H

#include <jansson.h>

#include "ortqual/evidence.h"

/* What oq_evidence_collect gathers beyond oq_evidence, whose layout is the ABI's
 * (docs/design.md): the evidence is allocated as this, `pub` first, and the getters of
 * evidence.h read the rest. */
typedef struct oq_evidence_full {
    oq_evidence pub;
    char ort_lib_sha256[65]; /* the loaded library's content; "" without a runtime or unreadable */
    size_t n_loader_env;
    oq_kv *loader_env;       /* LD_PRELOAD, LD_LIBRARY_PATH (value NULL: unset) */
    size_t n_ort_cores;
    char **ort_cores;        /* mapped objects that define OrtGetApiBase, as in pub.libs */
    size_t n_warnings;
    char **warnings;         /* one line each: more than one ONNX Runtime core mapped */
} oq_evidence_full;

/* oq_loaded_libs, and in *core (malloc'ed, one per library; NULL: not wanted) whether each
 * defines OrtGetApiBase itself: an ONNX Runtime core library, grouped "ort" whatever its name. */
oq_status oq_loaded_libs_cores(oq_loaded_lib **out, size_t *n, int **core, oq_err *err);

/* The evidence as a new JSON object (the caller owns the reference). NULL on OOM. */
json_t *oq_evidence_json(const oq_evidence *ev);
/* Collects everything (oq_evidence_collect; `rt` and `opts` may be NULL) as
 * JSON for a summary; on failure an {"error": message} object. NULL only on OOM. */
json_t *oq_evidence_collect_json(oq_runtime *rt, const oq_evidence_opts *opts);

#endif
