/* The precision validate and replay judge a model of yours at by default: one computing attention
 * in float16 or bfloat16 misses float32 tolerances by its own rounding. In the library, so that a
 * caller choosing configurations gets the tool's defaults. */
#include <stdio.h>

#include "ortqual/advice.h"
#include "ortqual/inspect.h"
#include "ortqual/validate.h"

static int reduced(oq_dtype d) { return d == OQ_DTYPE_FLOAT16 || d == OQ_DTYPE_BFLOAT16; }

oq_status oq_validate_reduced_attention(const char *model_path, oq_dtype *dtype, char *node, size_t n, oq_err *err)
{
    if (!model_path) return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_reduced_attention: model_path is NULL");
    if (!dtype) return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_reduced_attention: dtype is NULL");
    *dtype = OQ_DTYPE_UNDEFINED;
    if (node && n) node[0] = '\0';
    oq_node_info *nodes = NULL;
    size_t cnt = 0;
    oq_status st = oq_model_find_nodes(model_path, NULL, "Attention", &nodes, &cnt, err);
    if (st) return st;
    oq_attention_facts f = {0};
    for (size_t i = 0; i < cnt && !reduced(f.dtype); i++) oq_attention_facts_from_node(&nodes[i], 0, &f);
    if (reduced(f.dtype)) {
        *dtype = f.dtype;
        if (node && n) snprintf(node, n, "%s", f.node && f.node[0] ? f.node : "?");
    }
    oq_node_infos_free(nodes, cnt);
    return OQ_OK;
}
