/* --decompose-elu: Elu(x) -> Where(x > 0, x, alpha * (exp(min(x, 0)) - 1)).
 * Elu-22 has no CUDA kernel in ORT 1.29: after an opset raise every Elu would
 * run on CPU. min(x, 0) keeps exp() finite on the branch Where discards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"

static const char *emit(cv_model *m, const char *op, const char *hint, size_t n_in, const char *const *in,
                        int32_t et, int r, const cv_dim *d, const char *out)
{
    const char *y = out ? out : cv_fresh(m, hint);
    cv_node_add(m, op, hint, n_in, in, 1, &y);
    cv_set_type(m, y, et, r, d);
    return y;
}

static void decompose(cv_ctx *c, cv_model *m, const Onnx__NodeProto *n)
{
    int r;
    cv_dim d[OQ_SYM_MAX_RANK];
    const char *x = n->input[0];
    int32_t t = cv_type_of(m, x, &r, d);
    if (t != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 &&
        t != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE && t != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16) {
        c->r->refused++;
        cv_step(c->r, "decompose-elu", n->name, "refused", "the type of '%s' is unknown", x);
        return;
    }
    double alpha = oq_node_attr_float(n, "alpha", 1.0);
    char h[160], y[512], name[512];
    snprintf(h, sizeof h, "%.120s_elu", n->name ? n->name : "elu");
    snprintf(y, sizeof y, "%s", n->output[0]);
    snprintf(name, sizeof name, "%s", n->name ? n->name : "");
    const char *zero = cv_const_scalar(m, "elu_zero", t, 0), *one = cv_const_scalar(m, "elu_one", t, 1);
    const char *neg = emit(m, "Min", h, 2, (const char *[]){x, zero}, t, r, d, NULL);
    const char *ex = emit(m, "Exp", h, 1, &neg, t, r, d, NULL);
    const char *em1 = emit(m, "Sub", h, 2, (const char *[]){ex, one}, t, r, d, NULL);
    if (alpha != 1.0)
        em1 = emit(m, "Mul", h, 2, (const char *[]){em1, cv_const_scalar(m, "elu_alpha", t, alpha)}, t, r, d, NULL);
    const char *pos = emit(m, "Greater", h, 2, (const char *[]){x, zero}, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, r, d, NULL);
    cv_node_remove(m, cv_node_index(m, n));
    emit(m, "Where", h, 3, (const char *[]){pos, x, em1}, t, r, d, y);
    cv_step(c->r, "decompose-elu", name, "rewritten", "Elu (alpha %g) -> Where(x > 0, x, %sexp(min(x, 0)) - 1)",
            alpha, alpha != 1.0 ? "alpha * " : "");
}

oq_status cv_pass_decompose_elu(cv_ctx *c, cv_model *m, oq_err *err)
{
    size_t count = m->nodes.n, k = 0;
    const Onnx__NodeProto **todo = calloc(count ? count : 1, sizeof *todo);
    if (!todo) return cv_oom(m, err);
    for (size_t i = 0; i < count; i++)
        if (oq_node_is(m->nodes.v[i], "Elu") && ((Onnx__NodeProto *)m->nodes.v[i])->n_input == 1 &&
            ((Onnx__NodeProto *)m->nodes.v[i])->n_output == 1)
            todo[k++] = m->nodes.v[i];
    for (size_t i = 0; i < k; i++) decompose(c, m, todo[i]);
    free(todo);
    if (m->oom) return cv_oom(m, err);
    /* an Elu in an If branch or a Loop body runs as Elu-22 too */
    return cv_subgraphs_rewrite(c, m, "Elu", "decompose-elu", cv_pass_decompose_elu, err);
}
