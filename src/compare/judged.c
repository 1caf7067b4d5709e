/* A comparison record that says it passed, judged again from its own fields: the copy in a
 * summary is what merge merges and what plot and report draw, and a hand-edited or copied-back
 * one said passed next to numbers that fail it (or a tolerance that is no number, read as 0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "core/core-impl.h"

double oq_compare_tolerance_back(const json_t *tol, const char *key)
{
    const json_t *v = json_object_get(tol, key);
    return !tol ? 0.0 : json_is_number(v) ? json_number_value(v) : NAN;
}

int oq_compare_record_holds(const oq_compare_result *r, char *why, size_t n)
{
    int exact = oq_compare_is_exact(r->out_dtype, r->ref_dtype);
    char a[32], b[32];
    if (r->exact != exact)
        snprintf(why, n, "says it was compared %s, but its dtypes %s and %s are compared %s",
                 r->exact ? "exactly" : "by tolerance", oq_dtype_name(r->out_dtype), oq_dtype_name(r->ref_dtype),
                 exact ? "exactly" : "by tolerance");
    else if (!(r->tol.rtol >= 0) || !(r->tol.atol >= 0))
        snprintf(why, n, "has tolerance.rtol %s, tolerance.atol %s, where each is a number >= 0 (nan: not a "
                 "number in the file)",
                 oq_real_str(r->tol.rtol, 6, a, sizeof a), oq_real_str(r->tol.atol, 6, b, sizeof b));
    else
        return 1;
    return 0;
}

oq_status oq_compare_contradiction(oq_err *err, const char *path, const char *config, const char *output,
                                   const char *why, const char *verb)
{
    if (!output)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s passed, but lists no compared output: refusing to %s a "
                          "summary that contradicts itself", path, config, verb);
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s passed, but its output '%s' %s: refusing to %s a summary that "
                      "contradicts itself", path, config, output, why, verb);
}

/* The outputs of configuration `config`, which passed: each a record that passed, holds
 * (oq_compare_record_holds) and passes by its numbers (oq_compare_judge_numbers). */
static oq_status outputs_hold(const json_t *outs, const char *path, const char *config, oq_compare_result *r,
                              oq_err *err)
{
    if (!json_array_size(outs)) return oq_compare_contradiction(err, path, config, NULL, NULL, "draw");
    for (size_t j = 0; j < json_array_size(outs); j++) {
        if (oq_compare_result_from_json(json_array_get(outs, j), r, err))
            return oq_err_prefix(err, "%s: %s, outputs[%zu]: ", path, config, j);
        char why[600] = "failed", numbers[160];
        if (!r->passed || !oq_compare_record_holds(r, why, sizeof why)) {
            /* why says it */
        } else if (!oq_compare_judge_numbers(r, numbers, sizeof numbers)) {
            snprintf(why, sizeof why, "has %s", numbers);
        } else {
            continue;
        }
        return oq_compare_contradiction(err, path, config, r->name, why, "draw");
    }
    return OQ_OK;
}

oq_status oq_compare_summary_holds(const json_t *summary, const char *path, oq_err *err)
{
    const json_t *configs = json_object_get(summary, "configs");
    oq_compare_result *r = malloc(sizeof *r);
    if (!r) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < json_array_size(configs); k++) {
        const json_t *c = json_array_get(configs, k), *outs = json_object_get(c, "outputs");
        const char *status = json_string_value(json_object_get(c, "status"));
        const char *config = json_string_value(json_object_get(c, "config"));
        /* a summary written before outputs were aggregated has them in its batch records only */
        if (outs && !json_is_true(json_object_get(c, "reference")) && status && !strcmp(status, "passed"))
            st = outputs_hold(outs, path, config ? config : "a configuration", r, err);
    }
    free(r);
    return st;
}
