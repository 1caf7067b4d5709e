/* --opset: the operators whose meaning changed between two default-domain opsets.
 *
 * The list is the upgrade steps for which ONNX's own version converter
 * (onnx/version_converter/convert.h) needs more than a CompatibleAdapter: an
 * attribute became an input (Reduce*, Squeeze, Unsqueeze, Split, DFT), a
 * semantic changed (Softmax/LogSoftmax/Hardmax coerced their input to 2-D before
 * 13, GroupNormalization's scale and bias became per-channel in 21, GridSample's
 * mode names in 20), or a legacy attribute went away (broadcast, is_test,
 * consumed_inputs, spatial). A node written for the old opset would be read
 * with the new meaning, silently; so raising the opset over one of these
 * versions is refused, naming the operator (but a Softmax over the last axis, which means the
 * same in both, passes). Type-only extensions (bfloat16,
 * float8, int4) keep the meaning and are not listed. An operator new in an opset is listed
 * too: before it, a default-domain node of that name is no ONNX operator, and the raise
 * would give it the new one's meaning. */
#include <stdio.h>
#include <string.h>

#include "convert/convert-impl.h"
#include "inspect/subgraph-impl.h"

typedef struct changed {
    const char *op;
    int64_t since; /* the first opset with the new meaning */
    const char *what;
} changed;

static const changed table[] = {
    {"Concat", 4, "axis became required"},
    {"Reshape", 5, "the shape moved from an attribute to an input"},
    {"Add", 6, "consumed_inputs removed"}, {"Mul", 6, "consumed_inputs removed"},
    {"Relu", 6, "consumed_inputs removed"}, {"Sum", 6, "consumed_inputs removed"},
    {"Abs", 6, "consumed_inputs removed"}, {"Ceil", 6, "consumed_inputs removed"},
    {"Clip", 6, "consumed_inputs removed"}, {"Div", 6, "consumed_inputs removed"},
    {"Elu", 6, "consumed_inputs removed"}, {"Exp", 6, "consumed_inputs removed"},
    {"Floor", 6, "consumed_inputs removed"}, {"HardSigmoid", 6, "consumed_inputs removed"},
    {"InstanceNormalization", 6, "consumed_inputs removed"}, {"LeakyRelu", 6, "consumed_inputs removed"},
    {"Log", 6, "consumed_inputs removed"}, {"Max", 6, "consumed_inputs removed"},
    {"Mean", 6, "consumed_inputs removed"}, {"Min", 6, "consumed_inputs removed"},
    {"Neg", 6, "consumed_inputs removed"}, {"PRelu", 6, "consumed_inputs removed"},
    {"Reciprocal", 6, "consumed_inputs removed"}, {"Selu", 6, "consumed_inputs removed"},
    {"Sigmoid", 6, "consumed_inputs removed"}, {"Sqrt", 6, "consumed_inputs removed"},
    {"Sub", 6, "consumed_inputs removed"}, {"Tanh", 6, "consumed_inputs removed"},
    {"BatchNormalization", 6, "consumed_inputs removed"}, {"Dropout", 6, "consumed_inputs removed"},
    {"Add", 7, "numpy broadcasting replaced the broadcast attribute"},
    {"Sub", 7, "numpy broadcasting replaced the broadcast attribute"},
    {"Mul", 7, "numpy broadcasting replaced the broadcast attribute"},
    {"Div", 7, "numpy broadcasting replaced the broadcast attribute"},
    {"Pow", 7, "numpy broadcasting replaced the broadcast attribute"},
    {"Gemm", 7, "numpy broadcasting replaced the broadcast attribute"},
    {"BatchNormalization", 7, "is_test removed"}, {"Dropout", 7, "is_test removed"},
    {"Upsample", 7, "scales became an attribute"},
    {"BatchNormalization", 9, "spatial removed"}, {"Scan", 9, "the batch axis went away"},
    {"Upsample", 9, "scales became an input"},
    {"Slice", 10, "starts/ends/axes became inputs"}, {"TopK", 10, "k became an input"},
    {"Upsample", 10, "deprecated for Resize"},
    {"Clip", 11, "min/max became inputs"}, {"Pad", 11, "pads and value became inputs"},
    {"Resize", 11, "new inputs and coordinate modes"}, {"Scatter", 11, "replaced by ScatterElements"},
    {"Dropout", 12, "ratio became an input, training_mode added"},
    {"ReduceSum", 13, "axes became an input"}, {"Squeeze", 13, "axes became an input"},
    {"Unsqueeze", 13, "axes became an input"}, {"Split", 13, "split became an input"},
    {"Softmax", 13, "no longer flattens the input to 2-D"},
    {"LogSoftmax", 13, "no longer flattens the input to 2-D"},
    {"Hardmax", 13, "no longer flattens the input to 2-D"},
    {"GRU", 14, "layout added"}, {"LSTM", 14, "layout added"}, {"RNN", 14, "layout added"},
    {"BatchNormalization", 14, "training outputs changed"},
    {"RoiAlign", 16, "coordinate_transformation_mode added (default half_pixel)"},
    {"Split", 18, "num_outputs added"}, {"LpPool", 18, "ceil_mode added"},
    {"ReduceL1", 18, "axes became an input"}, {"ReduceL2", 18, "axes became an input"},
    {"ReduceLogSum", 18, "axes became an input"}, {"ReduceLogSumExp", 18, "axes became an input"},
    {"ReduceMax", 18, "axes became an input"}, {"ReduceMean", 18, "axes became an input"},
    {"ReduceMin", 18, "axes became an input"}, {"ReduceProd", 18, "axes became an input"},
    {"ReduceSumSquare", 18, "axes became an input"},
    {"DFT", 20, "axis became an input"}, {"GridSample", 20, "mode names changed (linear, cubic)"},
    {"GroupNormalization", 21, "scale and bias became per-channel"},
    /* ONNX 1.21, docs/Changelog.md "Version 26 of the default ONNX operator set": BitCast-26 and
     * CumProd-26, both new; no operator of 25 changed (version_converter/convert.h has no
     * 25 -> 26 adapter) */
    {"BitCast", 26, "new: before it, a default-domain node of that name is no ONNX operator"},
    {"CumProd", 26, "new: before it, a default-domain node of that name is no ONNX operator"},
};

/* The newest opset whose changes the table holds (opset 25, ONNX 1.20, changed only types:
 * 2-bit integers). A raise past it would go unchecked: the opset convert writes may not pass it
 * until the table has read the newer opsets' changes. */
#define KNOWN_MAX 26
_Static_assert(CV_OPSET_MAX <= KNOWN_MAX, "read the ONNX changelog of the new opsets into the table first");

/* Softmax, LogSoftmax and Hardmax before 13 flatten the input to 2-D at their axis (default 1);
 * from 13 they normalise over that one axis (default -1). Over the last axis both read the
 * same, as ONNX's own 12 -> 13 adapter keeps it: only then may the raise leave the node. */
static int same_over_last_axis(const oq_gview *v, const Onnx__NodeProto *n)
{
    if (!oq_node_is(n, "Softmax") && !oq_node_is(n, "LogSoftmax") && !oq_node_is(n, "Hardmax")) return 0;
    int64_t axis = oq_node_attr_int(n, "axis", 1);
    if (axis == -1) return 1;
    int rank = n->n_input && v ? oq_gview_rank(v, n->input[0]) : -1;
    return rank > 0 && (axis < 0 ? axis + rank : axis) == rank - 1;
}

/* Node n (of the graph v views; inside the subgraph `where`, or NULL at the top level) read with
 * another meaning at `target`: 1 with a refused step, else 0. */
static int means_other(cv_ctx *c, cv_model *m, const oq_gview *v, const Onnx__NodeProto *n, int64_t target,
                       const char *where)
{
    if (m->opset_in < 13 && same_over_last_axis(v, n)) return 0;
    for (size_t k = 0; k < sizeof table / sizeof *table; k++)
        if (oq_node_is(n, table[k].op) && table[k].since > m->opset_in && table[k].since <= target) {
            c->r->refused++;
            int named = n->name && *n->name; /* (else its first output names it) */
            cv_step(c->r, "opset", n->name, "refused", "cannot raise ai.onnx opset %lld to %lld: %s changed meaning "
                    "in opset %lld (%s)%s%s%s%s", (long long)m->opset_in, (long long)target, table[k].op,
                    (long long)table[k].since, table[k].what, !where ? "" : named ? ", node '" : ", the node of '",
                    !where ? "" : named ? n->name : n->n_output && n->output[0] ? n->output[0] : "",
                    where ? "' inside " : "", where ? where : "");
            return 1;
        }
    return 0;
}

typedef struct sub_check {
    cv_ctx *c;
    cv_model *m;
    int64_t target;
} sub_check;

/* A subgraph's nodes take the raise with the model (ONNX has one opset per domain): the same
 * rules as the top level's, or a branch that batches skip would change meaning unchecked. */
static int check_subgraph(void *arg, const oq_subgraph *s)
{
    sub_check *x = arg;
    for (size_t i = 0; i < s->g->n_node; i++)
        if (!cv_node_created(x->m, s->g->node[i]) && means_other(x->c, x->m, s->view, s->g->node[i], x->target, s->where))
            return 1;
    return 0;
}

int cv_opset_check(cv_ctx *c, cv_model *m, int64_t target)
{
    long long from = (long long)m->opset_in, to = (long long)target;
    if (target < m->opset_in) {
        c->r->refused++;
        cv_step(c->r, "opset", "", "refused", "the model is at ai.onnx opset %lld: lowering it to %lld is not "
                "supported", from, to);
        return 1;
    }
    const oq_gview *v = cv_view(m);
    for (size_t i = 0; i < m->nodes.n; i++)
        if (!cv_node_created(m, m->nodes.v[i]) && means_other(c, m, v, m->nodes.v[i], target, NULL)) return 1;
    size_t refused = c->r->refused;
    sub_check x = {c, m, target};
    if (!v || oq_subgraphs_walk(oq_gview_graph(v), m->opset_in, OQ_SUBGRAPH_VIEW, check_subgraph, &x, NULL)) {
        m->oom = 1;
        return 1;
    }
    return c->r->refused > refused;
}
