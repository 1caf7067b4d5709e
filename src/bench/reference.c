/* The float64 reference of the sweep's attention (reference.h, the C implementation). */
#include <stdlib.h>

#include "bench/bench-impl.h"

#include "ortqual/reference.h"

static oq_status ref_inputs(oq_bench_group *g, oq_err *err)
{
    if (g->ref64[0]) return OQ_OK;
    oq_status st = OQ_OK;
    for (int i = 0; !st && i < 3; i++) st = oq_tensor_convert(g->in[i], OQ_DTYPE_FLOAT64, &g->ref64[i], err);
    if (!st && g->masked) {
        int64_t shape[1] = {g->batch};
        st = oq_tensor_create(&g->ref64[3], OQ_DTYPE_INT64, 1, shape, "nonpad_kv_seqlen", err);
        if (!st)
            for (int64_t b = 0; b < g->batch; b++) ((int64_t *)g->ref64[3]->data)[b] = g->lengths[b];
    }
    if (st) oq_bench_reference_clear(g);
    return st;
}

oq_status oq_bench_reference(oq_bench_group *g, int threads, oq_tensor **out, oq_err *err)
{
    *out = NULL;
    oq_status st = ref_inputs(g, err);
    if (st) return st;
    oq_ref_attention_attrs attrs;
    oq_ref_attention_attrs_default(&attrs);
    attrs.opset = 24; /* the function, read from no node: its key padding is Attention-24's input */
    oq_ref_attention_inputs in = {.q = g->ref64[0], .k = g->ref64[1], .v = g->ref64[2],
                                  .nonpad_kv_seqlen = g->ref64[3]};
    oq_ref_attention_outputs o = {0};
    if ((st = oq_ref_attention(&attrs, &in, threads, &o, err))) return st;
    *out = o.y;
    return OQ_OK;
}

void oq_bench_reference_clear(oq_bench_group *g)
{
    for (int i = 0; i < 4; i++) {
        oq_tensor_free(g->ref64[i]);
        g->ref64[i] = NULL;
    }
}
