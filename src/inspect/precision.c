/* The precision a model of yours is judged at (inspect.h): one decision for validate's and
 * replay's defaults and bench --model's rows, which had judged one model at two precisions. */
#include <stdio.h>
#include <string.h>

#include "ortqual/inspect.h"

/* bfloat16 rounds more than float16, which rounds more than float32. */
static int coarseness(int32_t t)
{
    return t == OQ_DTYPE_BFLOAT16 ? 2 : t == OQ_DTYPE_FLOAT16;
}

/* Whether t rounds more than what out holds; then out takes it (its reason is the caller's). */
static int coarser(oq_model_precision *out, int32_t t)
{
    if (coarseness(t) <= coarseness((int32_t)out->dtype)) return 0;
    out->dtype = (oq_dtype)t;
    return 1;
}

void oq_model_precision_of(const oq_model_info *mi, oq_model_precision *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; mi && i < mi->n_attention; i++) {
        const oq_attention_info *a = &mi->attention[i];
        const char *name = a->name && *a->name ? a->name : "?", *t = oq_elem_type_name(a->elem_type);
        if (!coarser(out, a->elem_type)) continue;
        if (a->kind && !strcmp(a->kind, "decomposed"))
            snprintf(out->why, sizeof out->why, "decomposed attention (Softmax '%s') computes in %s", name, t);
        else snprintf(out->why, sizeof out->why, "%s '%s' computes in %s", a->kind ? a->kind : "attention", name, t);
    }
    /* an output rounded to float16 misses float32 tolerances whatever computed it */
    for (size_t i = 0; mi && i < mi->n_outputs; i++)
        if (coarser(out, mi->outputs[i].elem_type))
            snprintf(out->why, sizeof out->why, "output '%s' is %s", mi->outputs[i].name ? mi->outputs[i].name : "?",
                     oq_elem_type_name(mi->outputs[i].elem_type));
}

const char *oq_model_precision_name(const oq_model_precision *p)
{
    return !p || !p->dtype ? "fp32" : p->dtype == OQ_DTYPE_BFLOAT16 ? "bf16" : "fp16";
}
