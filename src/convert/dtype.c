/* --attention-dtype: Q, K, V (and an additive mask) cast to float16/bfloat16 before
 * each Attention node, the output cast back; the rest of the model keeps its dtype. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"

static const char *dtype_name(int32_t t)
{
    return oq_dtype_name((oq_dtype)t);
}

/* Cast `x` to `to` under a fresh name derived from `hint`; the shape of x is kept. */
static const char *cast(cv_model *m, const char *x, int32_t to, const char *hint)
{
    cv_dim d[OQ_SYM_MAX_RANK];
    int r;
    cv_type_of(m, x, &r, d);
    const char *y = cv_fresh(m, hint);
    Onnx__NodeProto *n = cv_node_add(m, "Cast", hint, 1, &x, 1, &y);
    cv_attr_int(m, n, "to", to);
    cv_set_type(m, y, to, r, d);
    return y;
}

/* x in the attention dtype: a Cast, or for the check's emulation a round trip
 * (to the dtype and back to x's type) so float32 arithmetic sees rounded values. */
static const char *in_dtype(cv_model *m, const char *x, int32_t to, int32_t from, int emulate, const char *hint)
{
    const char *y = cast(m, x, to, hint);
    return emulate ? cast(m, y, from, hint) : y;
}

static void convert_one(cv_ctx *c, cv_model *m, size_t i, int32_t to, int emulate)
{
    Onnx__NodeProto *n = m->nodes.v[i];
    int r;
    cv_dim d[OQ_SYM_MAX_RANK];
    if (!n->n_input || !*n->input[0] || !n->n_output || !*n->output[0]) {
        c->r->refused++;
        cv_step(c->r, "attention-dtype", n->name, "refused", "no Q input or no output");
        return;
    }
    int32_t from = cv_type_of(m, n->input[0], &r, d);
    if (from == to) {
        cv_step(c->r, "attention-dtype", n->name, "skipped", "already %s", dtype_name(to));
        c->reduced++;
        return;
    }
    if (from != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && from != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
        c->r->refused++;
        cv_step(c->r, "attention-dtype", n->name, "refused", "Q '%s' is of type %s, not float32/float64",
                n->input[0], from ? dtype_name(from) : "unknown");
        return;
    }
    if (n->n_output != 1) {
        c->r->refused++;
        cv_step(c->r, "attention-dtype", n->name, "refused", "present_key/value or qk outputs would change type");
        return;
    }
    static const char *const hints[] = {"q", "k", "v", "attn_bias", "past_key", "past_value"};
    const char *cast_in[6] = {0};
    for (size_t k = 0; k < n->n_input && k < 6; k++) {
        if (!*n->input[k]) continue;
        int32_t t = cv_type_of(m, n->input[k], &r, d);
        if (k == 3 && t == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL) continue; /* a bool mask stays */
        char hint[32];
        snprintf(hint, sizeof hint, "%s_%s", hints[k], to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ? "fp16" : "bf16");
        cast_in[k] = in_dtype(m, n->input[k], to, t ? t : from, emulate, hint);
    }
    char y[512];
    snprintf(y, sizeof y, "%s", n->output[0]);
    int32_t yt = cv_type_of(m, y, &r, d);
    const char *ya = cv_fresh(m, emulate ? "attn_out_emulated" : "attn_out_lowp");
    Onnx__NodeProto *own = cv_node_own(m, i);
    if (!own) return;
    for (size_t k = 0; k < 6; k++)
        if (cast_in[k]) cv_node_set_input(m, own, k, cast_in[k]);
    char *name = strdup(ya);
    if (!name) {
        m->oom = 1;
        return;
    }
    free(own->output[0]);
    own->output[0] = name;
    cv_touch(m);
    cv_set_type(m, ya, emulate ? from : to, r, d);
    /* back to the model's type under the original name, which its readers use */
    const char *out = ya;
    if (emulate) out = cast(m, ya, to, "attn_out_rounded");
    Onnx__NodeProto *back = cv_node_add(m, "Cast", "attn_out_cast", 1, &out, 1, (const char *[]){y});
    cv_attr_int(m, back, "to", yt ? yt : from);
    c->reduced++;
    cv_step(c->r, "attention-dtype", own->name, "rewritten", "%s%s attention: Q, K, V%s cast to %s, the output back to %s",
            emulate ? "emulated " : "", dtype_name(to), cast_in[3] ? ", the additive mask" : "", dtype_name(to),
            dtype_name(yt ? yt : from));
}

oq_status cv_pass_attention_dtype(cv_ctx *c, cv_model *m, int32_t to, int emulate, oq_err *err)
{
    size_t count = m->nodes.n, seen = 0;
    for (size_t i = 0; i < count; i++)
        if (oq_node_is(m->nodes.v[i], "Attention")) {
            seen++;
            convert_one(c, m, i, to, emulate);
        }
    if (!seen) cv_step(c->r, "attention-dtype", "", "note", "no Attention node");
    return m->oom ? cv_oom(m, err) : OQ_OK;
}
