/* oq_validate_run's fields checked before anything runs or is written: a value outside its enum
 * or range is the caller's error (OQ_ERR_INVALID_ARG naming the field), never an assertion deep
 * in the run, a crash, or a runtime error recorded in a summary. */
#include <limits.h>
#include <stdio.h>

#include "ortqual/compare.h"
#include "validate/validate-impl.h"

/* (an enum read as int: a negative value shows as such, whatever type the compiler gives it) */
static oq_status out_of_range(const char *field, long long v, long long lo, long long hi, oq_err *err)
{
    if (v >= lo && v <= hi) return OQ_OK;
    if (hi == LLONG_MAX)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s %lld out of range (at least %lld)", field, v,
                          lo);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s %lld out of range %lld..%lld", field, v, lo, hi);
}

static oq_status check_config(const oq_config *c, size_t k, oq_err *err)
{
    char field[48];
    snprintf(field, sizeof field, "configs[%zu].repr", k);
    oq_status st = out_of_range(field, (int)c->repr, OQ_REPR_ENCODER, OQ_REPR_EXPECTED, err);
    snprintf(field, sizeof field, "configs[%zu].precision", k);
    if (!st) st = out_of_range(field, (int)c->precision, OQ_PREC_FP64, OQ_PREC_BF16, err);
    snprintf(field, sizeof field, "configs[%zu].kernel", k);
    if (!st) st = out_of_range(field, (int)c->kernel, OQ_KERNEL_AUTO, OQ_KERNEL_MATH, err);
    return st;
}

oq_status oq_validate_opts_check(const oq_validate_opts *o, oq_err *err)
{
    if (o->n_configs && !o->configs)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: configs is NULL (n_configs %zu)", o->n_configs);
    oq_status st = out_of_range("kind", (int)o->kind, OQ_MODEL_ENCODER, OQ_MODEL_USER, err);
    if (!st) st = out_of_range("graph_opt", (int)o->graph_opt, OQ_GRAPH_OPT_DEFAULT, OQ_GRAPH_OPT_ALL, err);
    if (!st) st = out_of_range("threads", o->threads, 0, LLONG_MAX, err);
    if (!st) st = out_of_range("padding", o->padding, -1, OQ_PADDING_AS_REFERENCE, err);
    if (!st) st = out_of_range("repeat", o->repeat, 1, LLONG_MAX, err);
    if (!st) st = out_of_range("warmup", o->warmup, 0, LLONG_MAX, err);
    for (size_t k = 0; !st && k < o->n_configs; k++) st = check_config(&o->configs[k], k, err);
    return st;
}
