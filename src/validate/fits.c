/* Whether an ONNX Runtime reads the files a configuration exports, asked of the runtime itself
 * with a one-node model stamped as the export would be: the limits are the runtime's, and its
 * refusal is explained as a run's would be (oq_refusal_explain). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/graph.h"
#include "ortqual/validate.h"
#include "status/args-impl.h"

/* The exported form of a configuration's attention, -1 for one that exports nothing. */
static int format_of(const oq_config *c)
{
    switch (c->repr) {
    case OQ_REPR_DECOMPOSED: return OQ_ATTN_DECOMPOSED;
    case OQ_REPR_ATTENTION23: return OQ_ATTN_ATTENTION23;
    case OQ_REPR_ATTENTION24: return OQ_ATTN_ATTENTION24;
    default: return -1;
    }
}

/* y = Identity(x) at `opset` (and the IR version that opset is saved with). */
static oq_status stamped_model(int64_t opset, uint8_t **buf, size_t *len, oq_err *err)
{
    const oq_opset ops[] = {{"", opset}};
    oq_graph *g = NULL;
    oq_status s = oq_graph_create(ops, 1, "ortqual_fits", &g, err);
    if (s) return s;
    const oq_dim d[] = {OQ_DIM(1)};
    const char *x = "x";
    oq_graph_add_input(g, x, OQ_DTYPE_FLOAT32, 1, d);
    const char *y = oq_graph_op(g, "Identity", 1, &x, 0, NULL);
    if (y) oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 1, d);
    s = oq_graph_status(g, err);
    if (!s) s = oq_graph_serialize(g, buf, len, err);
    oq_graph_free(g);
    return s;
}

static oq_status refused(const oq_runtime *rt, const oq_config *c, int64_t opset, const char *msg, oq_err *err)
{
    oq_refusal r;
    oq_err e = {0};
    const oq_refusal_facts f = {.message = msg};
    if (oq_refusal_explain(&f, &r, &e) != OQ_OK) return oq_err_set(err, e.status, "%s", e.msg);
    oq_status s = oq_err_set(err, OQ_ERR_UNSUPPORTED,
                             "ONNX Runtime %s refuses %s models (ONNX IR %lld, opset %lld): %s", oq_runtime_version(rt),
                             oq_repr_name(c->repr),
                             (long long)oq_graph_ir_version_for_opset(opset), (long long)opset,
                             r.id ? r.why : msg);
    oq_refusal_clear(&r);
    return s;
}

oq_status oq_validate_config_fits(oq_runtime *rt, const oq_config *c, oq_err *err)
{
    OQ_NEED(err, rt);
    OQ_NEED(err, c);
    int format = format_of(c);
    if (format < 0 || !strcmp(c->runtime, "ref")) return OQ_OK;
    int64_t opset = oq_attn_format_opset((oq_attn_format)format);
    uint8_t *buf = NULL;
    size_t len = 0;
    oq_status s = stamped_model(opset, &buf, &len, err);
    if (s) return s;
    oq_session *sess = NULL;
    oq_err e = {0};
    s = oq_session_create(rt, NULL, buf, len, NULL, &sess, &e);
    free(buf);
    oq_session_free(sess);
    if (s == OQ_ERR_RUNTIME) return refused(rt, c, opset, e.msg, err);
    return s ? oq_err_set(err, s, "%s", e.msg) : OQ_OK;
}
