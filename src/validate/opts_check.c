/* oq_validate_run's fields checked before anything runs or is written: a value outside its enum
 * or range is the caller's error (OQ_ERR_INVALID_ARG naming the field), never an assertion deep
 * in the run, a crash, or a runtime error recorded in a summary. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ortqual/compare.h"
#include "ortqual/config.h"
#include "ortqual/mask.h"
#include "runtime/sessioncfg-impl.h"
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
    /* the run takes some things from the name and others from the fields: they must agree */
    if (!st && (st = oq_config_check(c, err))) oq_err_prefix(err, "oq_validate_run: configs[%zu]: ", k);
    return st;
}

/* Results, tables and files are told apart by the configuration's name (the tool refuses a
 * repeated --configs item too). The reference's own name again is a replay's on another ORT
 * library (reference_ort_lib), or a self-comparison, refused as such. */
static oq_status check_config_names(const oq_validate_opts *o, oq_err *err)
{
    for (size_t k = 2; k < o->n_configs; k++)
        for (size_t i = 1; i < k; i++)
            if (!strcmp(o->configs[i].name, o->configs[k].name))
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: configs[%zu] and configs[%zu] are both "
                                  "'%s'", i, k, o->configs[k].name);
    return OQ_OK;
}

/* The command line recorded as evidence: argc entries, none NULL. */
static oq_status check_argv(const oq_validate_opts *o, oq_err *err)
{
    oq_status st = out_of_range("argc", o->argc, 0, INT_MAX, err);
    if (!st && o->argc && !o->argv)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: argv is NULL (argc %d)", o->argc);
    for (int i = 0; !st && i < o->argc; i++)
        if (!o->argv[i]) st = oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: argv[%d] is NULL (argc %d)", i, o->argc);
    return st;
}

/* A list given by its count: NULL with a count would be read past by whoever reads it first. */
static oq_status list_null(const char *field, const void *v, size_t n, oq_err *err)
{
    if (!n || v) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s is NULL (n_%s %zu)", field, field, n);
}

/* A list of names: none NULL or empty (each would be matched against nothing, or crash). */
static oq_status names(const char *field, const char *const *v, size_t n, oq_err *err)
{
    oq_status st = list_null(field, v, n, err);
    for (size_t i = 0; !st && i < n; i++)
        if (!v[i] || !*v[i])
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s[%zu] is %s", field, i,
                            v[i] ? "empty" : "NULL");
    return st;
}

/* Key/value lists of one count (provider options, session config entries): a list NULL, a key
 * NULL or empty, or a value NULL would be read through by the first reader, deep in the run
 * (the provider options' check named no field, or crashed where no configuration takes them). */
static oq_status pairs(const char *keys_field, const char *const *keys, const char *values_field,
                       const char *const *values, const char *count_field, size_t n, oq_err *err)
{
    if (n && (!keys || !values))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s is NULL (%s %zu)",
                          keys ? values_field : keys_field, count_field, n);
    for (size_t i = 0; i < n; i++) {
        if (!keys[i] || !*keys[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s[%zu] is %s", keys_field, i,
                              keys[i] ? "empty" : "NULL");
        if (!values[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: %s[%zu] is NULL (key '%s')", values_field,
                              i, keys[i]);
    }
    return OQ_OK;
}

/* The version of the ORT library `lib` (the default search for NULL) as loaded here; "" when it
 * does not load (the run refuses that before any batch, naming the library). */
static void version_of(const char *lib, char *version, size_t n)
{
    oq_runtime *rt = NULL;
    snprintf(version, n, "%s", oq_runtime_load(lib, &rt, NULL) ? "" : oq_runtime_version(rt));
    oq_runtime_free(rt);
}

/* The placement check (require_full_gpu, profile) makes its session with the entry
 * OQ_PLACEMENT_SESSION_CONFIG=1 added to the user's: a user's "1" is that entry (taken once), any
 * other value would be overridden there without a word. */
static oq_status placement_entry(const oq_validate_opts *o, oq_err *err)
{
    for (size_t i = 0; (o->require_full_gpu || o->profile) && i < o->n_session_configs; i++)
        if (!strcmp(o->session_config_keys[i], OQ_PLACEMENT_SESSION_CONFIG) && strcmp(o->session_config_values[i], "1"))
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "oq_validate_run: session config %s=%s: the placement check (require_full_gpu, "
                              "profile) records where ORT placed each node with it set to '1'; give '1' or leave it out",
                              o->session_config_keys[i], o->session_config_values[i]);
    return OQ_OK;
}

/* Every session config entry as the ORT that will read it takes it: a key the headers do not know
 * is refused unless each ORT whose sessions get it (the configurations' and, on another build,
 * the reference's) is newer than them and may know it; those are loaded only for such a key. */
static oq_status check_session_configs(const oq_validate_opts *o, oq_err *err)
{
    oq_status st = oq_session_config_repeated("oq_validate_run", "session_config_keys", o->n_session_configs,
                                              o->session_config_keys, o->session_config_values, err);
    char under_test[64] = "", reference[64] = "";
    int loaded = 0, other_ref = o->n_configs && oq_config_uses_ort(&o->configs[0]) && o->reference_ort_lib;
    for (size_t i = 0; !st && i < o->n_session_configs; i++) {
        const char *k = o->session_config_keys[i], *v = o->session_config_values[i];
        if (!oq_session_config_check(k, v, err)) continue;
        if (!loaded++) {
            version_of(o->ort_lib, under_test, sizeof under_test);
            if (other_ref) version_of(*o->reference_ort_lib ? o->reference_ort_lib : NULL, reference, sizeof reference);
        }
        st = oq_session_config_check_for(under_test, k, v, NULL, 0, err);
        if (!st && other_ref) st = oq_session_config_check_for(reference, k, v, NULL, 0, err);
    }
    return st;
}

/* The generated events, as oq_events_create would refuse them: that is only when the batches are
 * drawn, after the folder was made. num_features 0 takes the model's width. */
static oq_status check_events(const oq_events_opts *e, oq_err *err)
{
    oq_status st = out_of_range("events.num_events", e->num_events, 1, LLONG_MAX, err);
    if (!st) st = out_of_range("events.batch_size", e->batch_size, 1, LLONG_MAX, err);
    if (!st) st = out_of_range("events.num_features", e->num_features, 0, LLONG_MAX, err);
    if (!st) st = out_of_range("events.max_len", e->max_len, 1, LLONG_MAX, err);
    if (!st) st = out_of_range("events.pad_bin_size", e->pad_bin_size, 0, LLONG_MAX, err);
    if (!st) st = out_of_range("events.policy", (int)e->policy, OQ_LENGTH_FIXED, OQ_LENGTH_FRACTION, err);
    if (!st && (e->policy == OQ_LENGTH_BALANCED || e->policy == OQ_LENGTH_UNIFORM))
        st = out_of_range("events.min_len", e->min_len, 1, e->max_len, err);
    if (!st && e->policy == OQ_LENGTH_FRACTION && !(e->fraction >= 0.0 && e->fraction < 1.0))
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: events.fraction %g outside [0, 1)", e->fraction);
    if (!st && !oq_mask_dtype_ok(e->mask_dtype))
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: events.mask_dtype %d (%s) is not a mask dtype",
                        (int)e->mask_dtype, oq_dtype_name(e->mask_dtype));
    if (!st && !oq_dtype_is_float(e->feature_dtype))
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: events.feature_dtype %d (%s) is not a float dtype",
                        (int)e->feature_dtype, oq_dtype_name(e->feature_dtype));
    return st;
}

/* Each output's sequence axis as said: the model's outputs are checked once it is read. */
static oq_status check_seq_axes(const oq_validate_opts *o, oq_err *err)
{
    oq_status st = list_null("seq_axes", o->seq_axes, o->n_seq_axes, err);
    char field[48];
    for (size_t i = 0; !st && i < o->n_seq_axes; i++) {
        const oq_seq_axis *a = &o->seq_axes[i];
        if (!a->output || !*a->output)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_run: seq_axes[%zu].output is %s", i,
                              a->output ? "empty" : "NULL");
        snprintf(field, sizeof field, "seq_axes[%zu].axis", i);
        st = out_of_range(field, a->axis, OQ_SEQ_AXIS_NONE, LLONG_MAX, err);
        snprintf(field, sizeof field, "seq_axes[%zu].batch", i);
        if (!st && a->batch_said) st = out_of_range(field, a->batch, 0, LLONG_MAX, err);
    }
    return st;
}

/* A polarity chosen says how to read a mask, no_mask that there is none: both fields named, as
 * the tool names both options (the model's signature said "no input is the mask" of a model
 * with one). */
static oq_status check_no_mask(const oq_validate_opts *o, oq_err *err)
{
    if (!o->mask_polarity_given || !o->no_mask) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask_polarity and no_mask contradict: mask_polarity says how to read "
                      "the mask, no_mask says there is none; give one");
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
    if (!st) st = check_config_names(o, err);
    if (!st) st = check_argv(o, err);
    if (!st) st = out_of_range("mask_polarity", (int)o->mask_polarity, OQ_MASK_POLARITY_KEEP, OQ_MASK_POLARITY_PAD, err);
    if (!st) st = out_of_range("mask_form", (int)o->mask_form, OQ_MASK_AUTO, OQ_MASK_SEQLEN, err);
    if (!st && !o->n_input_files) st = check_events(&o->events, err);
    if (!st) st = check_seq_axes(o, err);
    if (!st) st = names("required", o->required, o->n_required, err);
    if (!st) st = names("expect_kernel", o->expect_kernel, o->n_expect_kernel, err);
    if (!st) st = check_no_mask(o, err);
    if (!st)
        st = pairs("ep_option_keys", o->ep_option_keys, "ep_option_values", o->ep_option_values, "n_ep_options",
                   o->n_ep_options, err);
    if (!st)
        st = pairs("session_config_keys", o->session_config_keys, "session_config_values", o->session_config_values,
                   "n_session_configs", o->n_session_configs, err);
    if (!st) st = check_session_configs(o, err);
    if (!st) st = placement_entry(o, err);
    return st;
}
