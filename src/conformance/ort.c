/* The ONNX Runtime runner of the conformance tests (see include/ortqual/conformance.h). */
#include <stdlib.h>
#include <string.h>

#include "ortqual/conformance.h"
#include "status/args-impl.h"

/* Borrowing views of the inputs, renamed to the model's input names. */
static oq_status wrap_inputs(const char *const *names, const oq_tensor *const *inputs, size_t n,
                             oq_tensor **views, oq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const oq_tensor *t = inputs[i];
        oq_status st = oq_tensor_wrap(&views[i], t->dtype, t->ndim, t->shape, t->data, names[i], err);
        if (st) return st;
    }
    return OQ_OK;
}

oq_status oq_conformance_ort_runner(void *ctx, const char *model_path,
                                    const char *const *input_names,
                                    const oq_tensor *const *inputs, size_t n_in,
                                    const char *const *output_names, size_t n_out,
                                    oq_tensor **outputs, oq_err *err)
{
    OQ_NEED(err, ctx);
    OQ_NEED(err, model_path);
    OQ_NEED_N(err, n_in, input_names);
    OQ_NEED_N(err, n_in, inputs);
    OQ_NEED_N(err, n_out, output_names);
    OQ_NEED_N(err, n_out, outputs);
    const oq_conformance_ort *c = ctx;
    oq_session *s = NULL;
    oq_tensor **views = calloc(n_in ? n_in : 1, sizeof *views);
    oq_tensor **got = NULL;
    size_t n_got = 0;
    if (!views) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = wrap_inputs(input_names, inputs, n_in, views, err);
    if (!st) st = oq_session_create(c->rt, model_path, NULL, 0, c->session_opts, &s, err);
    if (!st) st = oq_session_run(s, n_in, views, &n_got, &got, err);
    for (size_t k = 0; !st && k < n_out; k++) {
        for (size_t i = 0; i < n_got; i++)
            if (got[i] && !strcmp(oq_session_output_name(s, i), output_names[k])) {
                outputs[k] = got[i];
                got[i] = NULL;
                break;
            }
        if (!outputs[k])
            st = oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: the model has no output '%s'", model_path,
                            output_names[k]);
    }
    if (st)
        for (size_t k = 0; k < n_out; k++) {
            oq_tensor_free(outputs[k]);
            outputs[k] = NULL;
        }
    oq_tensors_free(got, n_got);
    oq_session_free(s);
    for (size_t i = 0; i < n_in; i++) oq_tensor_free(views[i]);
    free(views);
    return st;
}
