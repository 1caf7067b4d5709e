/* The C reference behind ref:encoder:fp64 (and ref:sdpa:fp64), as a model the worker can run. */
#include <stdlib.h>
#include <string.h>

#include "ortqual/reference.h"
#include "ortqual/runtime.h"
#include "validate/validate-impl.h"

struct oq_ref_model {
    oq_repr repr;
    oq_encoder_weights *weights; /* ref:encoder */
};

static oq_status open_encoder(oq_ref_model *m, const oq_validate_plan *plan, oq_err *err)
{
    if (!plan->weights) return oq_err_set(err, OQ_ERR_INVALID_ARG, "ref:encoder needs the encoder weights");
    return oq_encoder_weights_load(plan->weights, plan->heads, &m->weights, err);
}

oq_status oq_ref_model_open(const oq_validate_plan *plan, oq_ref_model **out, oq_err *err)
{
    oq_ref_model *m = calloc(1, sizeof *m);
    if (!m) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    m->repr = plan->config.repr;
    oq_status st = m->repr == OQ_REPR_ENCODER
                       ? open_encoder(m, plan, err)
                       : oq_err_set(err, OQ_ERR_UNSUPPORTED, "no C reference for representation '%s'",
                                    oq_repr_name(m->repr));
    if (st) {
        oq_ref_model_free(m);
        return st;
    }
    *out = m;
    return OQ_OK;
}

oq_status oq_ref_model_run(oq_ref_model *m, oq_tensor *const *inputs, size_t n_inputs,
                           oq_tensor ***outputs, size_t *n_outputs, oq_err *err)
{
    const oq_tensor *features = oq_tensors_find((const oq_tensor *const *)inputs, n_inputs, "features");
    const oq_tensor *mask = oq_tensors_find((const oq_tensor *const *)inputs, n_inputs, "mask");
    if (!features || !mask)
        return oq_err_set(err, OQ_ERR_SHAPE, "ref:encoder needs inputs 'features' and 'mask'");
    size_t n = (size_t)m->weights->cfg.n_outputs;
    oq_tensor **out = calloc(n, sizeof *out);
    if (!out) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_encoder_ref_forward(m->weights, features, mask, out, err);
    if (st) {
        free(out);
        return st;
    }
    *outputs = out;
    *n_outputs = n;
    return OQ_OK;
}

void oq_ref_model_free(oq_ref_model *m)
{
    if (!m) return;
    oq_encoder_weights_free(m->weights);
    free(m);
}
