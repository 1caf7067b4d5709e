/* The C reference behind ref:encoder:fp64, as a model the worker can run: one reference object
 * per worker (weights converted and packed once, working memory kept between batches). */
#include <stdlib.h>
#include <string.h>

#include "ortqual/reference.h"
#include "ortqual/runtime.h"
#include "validate/validate-impl.h"

struct oq_ref_model {
    oq_encoder_ref *encoder;
    size_t n_outputs;
};

static oq_status open_encoder(oq_ref_model *m, const oq_validate_plan *plan, oq_err *err)
{
    if (!plan->weights) return oq_err_set(err, OQ_ERR_INVALID_ARG, "ref:encoder needs the encoder weights");
    oq_encoder_weights *w;
    oq_status st = oq_encoder_weights_load(plan->weights, plan->heads, &w, err);
    if (st) return st;
    m->n_outputs = (size_t)w->cfg.n_outputs;
    st = oq_encoder_ref_create(w, plan->threads, &m->encoder, err); /* keeps no pointer into w */
    oq_encoder_weights_free(w);
    return st;
}

oq_status oq_ref_model_open(const oq_validate_plan *plan, oq_ref_model **out, oq_err *err)
{
    oq_ref_model *m = calloc(1, sizeof *m);
    if (!m) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = plan->config.repr == OQ_REPR_ENCODER
                       ? open_encoder(m, plan, err)
                       : oq_err_set(err, OQ_ERR_UNSUPPORTED, "no C reference for representation '%s'",
                                    oq_repr_name(plan->config.repr));
    if (st) {
        oq_ref_model_free(m);
        return st;
    }
    *out = m;
    return OQ_OK;
}

int oq_ref_model_threads(const oq_ref_model *m)
{
    return oq_encoder_ref_threads(m->encoder);
}

oq_status oq_ref_model_run(oq_ref_model *m, oq_tensor *const *inputs, size_t n_inputs,
                           oq_tensor ***outputs, size_t *n_outputs, oq_err *err)
{
    const oq_tensor *features = oq_tensors_find((const oq_tensor *const *)inputs, n_inputs, "features");
    const oq_tensor *mask = oq_tensors_find((const oq_tensor *const *)inputs, n_inputs, "mask");
    if (!features || !mask)
        return oq_err_set(err, OQ_ERR_SHAPE, "ref:encoder needs inputs 'features' and 'mask'");
    oq_tensor **out = calloc(m->n_outputs, sizeof *out);
    if (!out) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_encoder_ref_run(m->encoder, features, mask, out, err);
    if (st) {
        free(out);
        return st;
    }
    *outputs = out;
    *n_outputs = m->n_outputs;
    return OQ_OK;
}

void oq_ref_model_free(oq_ref_model *m)
{
    if (!m) return;
    oq_encoder_ref_free(m->encoder);
    free(m);
}
