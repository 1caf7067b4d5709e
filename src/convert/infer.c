/* The types oq_sym_infer gives the tensors a model leaves undeclared, declared before any pass
 * (value_info): the passes read them, ORT's CUDA EP was seen to crash on Attention inputs without
 * shapes, and inspect reads the same inference, so both judge a chain on the same shapes. */
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"

size_t cv_infer_types(cv_model *m)
{
    oq_symctx *sc = cv_sym(m);
    if (!sc || oq_sym_infer(sc, NULL)) {
        m->oom = 1;
        return 0;
    }
    size_t n;
    const oq_sym_typed *t = oq_sym_inferred(sc, &n);
    /* copied first: each write rebuilds the view and its symbols (the names live there) */
    oq_sym_typed *k = n ? malloc(n * sizeof *k) : NULL;
    cv_dim (*dims)[OQ_SYM_MAX_RANK] = n ? calloc(n, sizeof *dims) : NULL;
    if (n && (!k || !dims)) m->oom = 1;
    for (size_t i = 0; k && dims && i < n; i++) {
        k[i] = t[i];
        for (int j = 0; j < t[i].rank; j++) {
            const char *p = oq_symdim_name(sc, t[i].d[j]);
            dims[i][j].param = p ? strdup(p) : NULL;
            if (p && !dims[i][j].param) m->oom = 1;
            dims[i][j].value = !p && oq_symdim_known(t[i].d[j]) ? t[i].d[j].coef : -1;
        }
    }
    for (size_t i = 0; k && dims && !m->oom && i < n; i++) cv_set_type(m, k[i].name, k[i].elem, k[i].rank, dims[i]);
    for (size_t i = 0; k && dims && i < n; i++)
        for (int j = 0; j < k[i].rank; j++) free((char *)dims[i][j].param);
    free(dims);
    free(k);
    return m->oom ? 0 : n;
}
