/* Placement from ORT's EP graph assignment (Session_GetEpGraphAssignmentInfo, ORT >= 1.24). */
#include "placement/placement-impl.h"

#include <stdio.h>
#include <string.h>

#include "onnxruntime_c_api.h"
#include "status/args-impl.h"

/* The API version that introduced Session_GetEpGraphAssignmentInfo. */
#define ASSIGNMENT_API 24

static oq_status ort_fail(const OrtApi *api, OrtStatus *st, const char *what, oq_err *err)
{
    oq_status s = oq_err_set(err, OQ_ERR_RUNTIME, "placement: %s: %s", what, api->GetErrorMessage(st));
    api->ReleaseStatus(st);
    return s;
}

static oq_status add_subgraph(oq_placement *p, const OrtApi *api, const OrtEpAssignedSubgraph *sg,
                              oq_err *err)
{
    const char *ep;
    const OrtEpAssignedNode *const *nodes;
    size_t nn;
    OrtStatus *st = api->EpAssignedSubgraph_GetEpName(sg, &ep);
    if (st) return ort_fail(api, st, "EpAssignedSubgraph_GetEpName", err);
    if ((st = api->EpAssignedSubgraph_GetNodes(sg, &nodes, &nn)))
        return ort_fail(api, st, "EpAssignedSubgraph_GetNodes", err);
    for (size_t j = 0; j < nn; j++) {
        const char *name, *op;
        if ((st = api->EpAssignedNode_GetName(nodes[j], &name)))
            return ort_fail(api, st, "EpAssignedNode_GetName", err);
        if ((st = api->EpAssignedNode_GetOperatorType(nodes[j], &op)))
            return ort_fail(api, st, "EpAssignedNode_GetOperatorType", err);
        oq_placed_node *n = oq_placement_node_(p, name, op);
        if (!n || !oq_placement_set_str_(&n->ep_assigned, ep))
            return oq_err_set(err, OQ_ERR_NOMEM, "placement: out of memory");
    }
    return OQ_OK;
}

oq_status oq_placement_add_assignment(oq_placement *p, const oq_session *s, oq_err *err)
{
    OQ_NEED(err, p);
    OQ_NEED(err, s);
    const oq_runtime *rt = oq_session_runtime(s);
    if (oq_runtime_api_version(rt) < ASSIGNMENT_API)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "placement: ORT %s (API %d) has no Session_GetEpGraphAssignmentInfo (needs 1.24)",
                          oq_runtime_version(rt), oq_runtime_api_version(rt));
    const OrtApi *api = oq_runtime_api(rt);
    const OrtEpAssignedSubgraph *const *sgs;
    size_t nsg;
    OrtStatus *st = api->Session_GetEpGraphAssignmentInfo(oq_session_ort(s), &sgs, &nsg);
    if (st) {
        oq_status r = oq_err_set(err, OQ_ERR_RUNTIME,
                                 "placement: Session_GetEpGraphAssignmentInfo: %s (create the session "
                                 "with the config entry " OQ_PLACEMENT_SESSION_CONFIG "=1)",
                                 api->GetErrorMessage(st));
        api->ReleaseStatus(st);
        return r;
    }
    for (size_t i = 0; i < nsg; i++) {
        oq_status r = add_subgraph(p, api, sgs[i], err);
        if (r != OQ_OK) return r;
    }
    p->have_assignment = true;
    return OQ_OK;
}
