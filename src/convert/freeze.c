/* freeze: graph inputs with a default made constants. torch.onnx.export(...,
 * keep_initializers_as_inputs=True) declares every weight an input whose initializer is its
 * default; the passes fold no such value, since a caller may feed another, so the caller says
 * which inputs are weights instead. */
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"

/* At most this many names in the plan's line (a large model has hundreds of weights). */
#define FREEZE_NAMES_SHOWN 8

/* Through the view's index: a large model has as many weights as inputs. */
static int has_default(cv_model *m, const char *name)
{
    const oq_gview *v = cv_view(m);
    return v && oq_gview_initializer(v, name);
}

static int is_input(const cv_model *m, const char *name)
{
    for (size_t i = 0; i < m->inputs.n; i++)
        if (!strcmp(((const Onnx__ValueInfoProto *)m->inputs.v[i])->name, name)) return 1;
    return 0;
}

static int named(const oq_convert_opts *o, const char *name)
{
    for (size_t i = 0; i < o->n_freeze; i++)
        if (!strcmp(o->freeze[i], name)) return 1;
    return 0;
}

/* Every name the caller gave is an input with a default: anything else is refused before the
 * model changes, naming it. */
static oq_status check_named(const oq_convert_opts *o, cv_model *m, oq_err *err)
{
    for (size_t i = 0; i < o->n_freeze; i++) {
        const char *name = o->freeze[i];
        if (!name || !is_input(m, name))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: freeze '%s': the model has no graph input of that name",
                              m->name, name ? name : "(null)");
        if (!has_default(m, name))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: freeze '%s': that input has no default (no initializer "
                              "of its name), so there is no value to freeze it to; it stays an input", m->name, name);
    }
    /* before IR 4 every initializer had to be a graph input: freezing would break the model */
    if (m->ir_version < 4)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: IR version %lld: an initializer must be a graph input "
                          "before IR 4, so no input can be frozen", m->name, (long long)m->ir_version);
    return OQ_OK;
}

/* The plan's line: how many were frozen, the first names. */
static oq_status freeze_step(cv_ctx *c, cv_model *m, const char *const *names, size_t n, oq_err *err)
{
    oq_dynbuf b = {0};
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < n && i < FREEZE_NAMES_SHOWN; i++) st = oq_dynbuf_addf(&b, "%s'%s'", i ? ", " : "", names[i]);
    if (!st && n > FREEZE_NAMES_SHOWN) st = oq_dynbuf_addf(&b, " and %zu more", n - FREEZE_NAMES_SHOWN);
    if (!st)
        cv_step(c->r, "freeze", "", "rewritten", "%zu graph input%s with a default made constant%s (the initializer "
                "kept, the input dropped): %s", n, n == 1 ? "" : "s", n == 1 ? "" : "s", b.buf ? b.buf : "");
    else
        st = cv_oom(m, err);
    oq_dynbuf_clear(&b);
    return st;
}

oq_status cv_pass_freeze(cv_ctx *c, cv_model *m, oq_err *err)
{
    const oq_convert_opts *o = c->o;
    if (!o->freeze_defaults && !o->n_freeze) return OQ_OK;
    oq_status st = check_named(o, m, err);
    if (st) return st;
    const char **frozen = calloc(m->inputs.n + 1, sizeof *frozen);
    if (!frozen) return cv_oom(m, err);
    size_t w = 0, n = 0;
    for (size_t i = 0; i < m->inputs.n; i++) {
        const char *name = ((const Onnx__ValueInfoProto *)m->inputs.v[i])->name;
        if (has_default(m, name) && (o->freeze_defaults || named(o, name))) frozen[n++] = name;
        else m->inputs.v[w++] = m->inputs.v[i];
    }
    m->inputs.n = w;
    cv_touch(m);
    if (m->oom) {
        free(frozen);
        return cv_oom(m, err);
    }
    c->r->frozen = n;
    if (n) st = freeze_step(c, m, frozen, n, err);
    else cv_step(c->r, "freeze", "", "note", "no graph input has a default: nothing to freeze");
    free(frozen);
    return st;
}
