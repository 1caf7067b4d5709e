/* The model's inputs and outputs: which input is the mask, each batch's inputs read by name
 * and checked before any model runs, the expected outputs beside them, and the axes of an
 * output that the mask's lengths apply to. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare-impl.h"
#include "convert/convert-impl.h"
#include "inspect/inputuse-impl.h"
#include "inspect/inspect-impl.h"
#include "ortqual/convert.h"
#include "ortqual/export.h"
#include "ortqual/graph.h"
#include "ortqual/mask.h"
#include "npz/npz-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "validate/validate-impl.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

/* ---- the signature ------------------------------------------------------------------ */

static oq_status inspect_graph(oq_graph *g, oq_status st, oq_model_info **mi, oq_err *err)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    if (!st) st = oq_graph_serialize(g, &buf, &n, err);
    if (!st) st = oq_model_inspect_bytes(buf, n, "the exported model", mi, err);
    free(buf);
    oq_graph_free(g);
    return st;
}

/* ortqual's own models: one export tells the inputs and outputs of all (they differ only inside). */
static oq_status export_signature(const oq_validate_opts *o, const oq_encoder_weights *w, oq_model_info **mi,
                                  oq_err *err)
{
    oq_graph *g = NULL;
    oq_status st;
    if (o->kind == OQ_MODEL_ENCODER) {
        oq_encoder_export x = {0};
        st = oq_export_encoder(w, &x, &g, err);
    } else {
        oq_sdpa_config c = o->sdpa;
        c.format = OQ_ATTN_DECOMPOSED;
        c.mask = OQ_MASK_AUTO;
        st = oq_export_sdpa(&c, &g, err);
    }
    return inspect_graph(g, st, mi, err);
}

static int find_input(const oq_model_info *mi, const char *name)
{
    for (size_t i = 0; name && i < mi->n_inputs; i++)
        if (!strcmp(mi->inputs[i].name, name)) return (int)i;
    return -1;
}

/* Detection took the mask by its name alone, nothing in the graph backing it: every contract
 * error then says the mask was guessed. */
static int name_only(const oq_signature *sig)
{
    return sig->mask_role == OQ_MASK_ROLE_NAME;
}

static oq_status refuse_guess(const char *path, const char *what, const char *name, oq_err *err)
{
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s: name the [B, L] padding mask (mask_name %s) or say there "
                      "is none (no_mask)", path, what, name);
}

/* Detection, without --mask or a contract: among the rank-2 inputs, those whose role
 * (oq_input_mask_role: an operator's key-padding mask, a flow into the attention scores, a name
 * containing "mask") says they may be the [B, L] padding mask. Unless `named_only` (convert's
 * rule: only the name counts, nothing is refused), two such, or none and a lone rank-2 input,
 * are refused: the lone one was taken once, and token ids or an [Lq, T] mask taken as the
 * padding mask left wrong values unjudged. */
static oq_status detect_mask(oq_signature *sig, int named_only, const char *path, oq_err *err)
{
    const oq_model_info *mi = sig->mi;
    int found = -1, second = -1, n_found = 0, other = -1, n_other = 0;
    oq_mask_role role = OQ_MASK_ROLE_NONE;
    const char *why = NULL;
    for (size_t i = 0; i < mi->n_inputs; i++) {
        if (mi->inputs[i].rank != 2) continue;
        const char *said = NULL;
        oq_mask_role r = oq_input_mask_role(&mi->inputs[i], sig->uses ? sig->uses[i] : 0, named_only, &said);
        if (r == OQ_MASK_ROLE_NONE && oq_named_like_mask(mi->inputs[i].name) && !*sig->not_mask)
            snprintf(sig->not_mask, sizeof sig->not_mask, "input '%s' is not taken as the padding mask: %s",
                     mi->inputs[i].name, said);
        if (r == OQ_MASK_ROLE_OTHER) other = (int)i, n_other++;
        if (!oq_mask_role_taken(r)) continue;
        if (n_found++) second = second < 0 ? (int)i : second;
        else found = (int)i, role = r, why = said;
    }
    char what[640];
    if (n_found > 1 && !named_only) {
        snprintf(what, sizeof what, "inputs '%s' and '%s'%s may each be the padding mask", mi->inputs[found].name,
                 mi->inputs[second].name, n_found > 2 ? " (and more)" : "");
        return refuse_guess(path, what, "NAME", err);
    }
    if (n_found > 1) found = -1; /* convert: none */
    if (!n_found && n_other == 1 && !named_only) {
        snprintf(what, sizeof what, "input '%s' is the only rank-2 input, and nothing in the model says whether it "
                 "is a padding mask", mi->inputs[other].name);
        return refuse_guess(path, what, mi->inputs[other].name, err);
    }
    sig->mask = found >= 0 ? found : -1;
    sig->mask_why = found < 0 ? NULL : why;
    sig->mask_role = found < 0 ? OQ_MASK_ROLE_NONE : role;
    return OQ_OK;
}

/* The input an option (or the contract) names: its index, or the error naming the choices. */
static oq_status named_input(const oq_model_info *mi, const char *path, const char *what, const char *name, int *index,
                             oq_err *err)
{
    char names[512], said[256];
    if ((*index = find_input(mi, name)) >= 0) return OQ_OK;
    oq_io_names(mi->inputs, mi->n_inputs, names, sizeof names);
    what = oq_terms(what, said, sizeof said); /* the library's words ("mask_name '"), worded as a format is */
    if (oq_model_default_input(mi, name))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s%s': that input " OQ_DEFAULT_INPUT_WHY "; it feeds only "
                          "inputs without one (%s)", path, what, name, names);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s%s': the model has no such input (inputs: %s)", path, what,
                      name, names);
}

/* The mask input is [B, L] of a type oq_mask_check reads; `hint`, the library's words, ends the message. */
static oq_status mask_input_ok(const oq_io_info *io, const char *path, const char *hint, oq_err *err)
{
    char said[256];
    hint = oq_terms(hint, said, sizeof said);
    if (io->rank >= 0 && io->rank != 2)
        return oq_err_set(err, OQ_ERR_SHAPE, "%s: input '%s' is rank %d; the mask contract is about a [B, L] mask%s",
                          path, io->name, (int)io->rank, hint);
    if (io->elem_type && !oq_mask_dtype_ok((oq_dtype)io->elem_type))
        return oq_err_set(err, OQ_ERR_SHAPE, "%s: input '%s' is %s; a mask is bool, int32/int64 or a float type%s",
                          path, io->name, oq_dtype_name((oq_dtype)io->elem_type), hint);
    return OQ_OK;
}

/* A polarity other than KEEP, or one the caller chose (mask_polarity_given), reads the user's
 * mask: ortqual's models read 1 = valid, and with no mask it would read nothing (said, not
 * ignored: the user meant a mask to be read so, whichever way). */
static oq_status choose_polarity(const oq_validate_opts *o, const char *path, oq_signature *sig, oq_err *err)
{
    sig->polarity = o->mask_polarity;
    sig->polarity_source = o->mask_polarity_given || o->mask_polarity != OQ_MASK_POLARITY_KEEP ? "option" : "default";
    sig->polarity_fixed = o->kind != OQ_MODEL_USER;
    for (size_t k = 0; k < o->n_configs; k++) sig->polarity_fixed |= o->configs[k].repr == OQ_REPR_ENCODER;
    if (o->mask_polarity != OQ_MASK_POLARITY_KEEP && o->mask_polarity != OQ_MASK_POLARITY_PAD)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask_polarity %d is neither keep nor pad", (int)o->mask_polarity);
    if (o->mask_polarity == OQ_MASK_POLARITY_KEEP && !o->mask_polarity_given) return OQ_OK;
    if (o->kind != OQ_MODEL_USER)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask_polarity %s is about a model_path file's mask input; "
                          "ortqual's models take none of yours", oq_mask_polarity_name(o->mask_polarity));
    if (sig->mask < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: mask_polarity %s, but no input is the mask (mask_name names "
                          "one)", path, oq_mask_polarity_name(o->mask_polarity));
    return OQ_OK;
}

/* sig's polarity (`given`: the caller's, else the default) held to the graph's reading of its mask. */
static oq_status held_to_graph(oq_signature *sig, int given, oq_err *err)
{
    if (sig->mask < 0 || !sig->uses) return OQ_OK;
    return oq_mask_polarity_held(NULL, sig->label, sig->mi, sig->mi->inputs[sig->mask].name, sig->uses[sig->mask],
                                 sig->polarity, given, &sig->polarity_by_graph, err);
}

/* Neither the caller nor a contract says the polarity: the graph's reading of the mask does, as
 * bench --model's (PyTorch's src_key_padding_mask, True = padding, Not'ed before its -inf Where);
 * what events make, what the batches' check calls valid and what is compared all follow it. A
 * polarity the caller gives is held to that reading: the other would judge the positions the
 * model ignores and pass a wrong value at a real token (QA round 9a, defect 1). */
static oq_status graph_polarity(const char *contract, oq_signature *sig, oq_err *err)
{
    if (sig->kind != OQ_MODEL_USER || contract || sig->mask < 0 || !sig->uses) return OQ_OK;
    if (!strcmp(sig->polarity_source, "option")) return held_to_graph(sig, 1, err);
    unsigned says = oq_uses_polarity(sig->uses[sig->mask]);
    if (!says || strcmp(sig->polarity_source, "default")) return OQ_OK;
    sig->polarity = says == OQ_USE_SAYS_PAD ? OQ_MASK_POLARITY_PAD : OQ_MASK_POLARITY_KEEP;
    sig->polarity_source = "graph";
    sig->polarity_by_graph = 1;
    return OQ_OK;
}

static oq_status choose_mask(const oq_validate_opts *o, const char *path, const char *contract, oq_signature *sig,
                             oq_err *err)
{
    const oq_model_info *mi = sig->mi;
    const char *named = contract ? contract : o->mask_name;
    oq_status st = OQ_OK;
    if (o->kind != OQ_MODEL_USER) sig->mask = find_input(mi, "mask");
    else if (o->no_mask && !contract) sig->mask = -1;
    else if (!named) st = detect_mask(sig, 0, path, err);
    else st = named_input(mi, path, contract ? "the mask contract names '" : "mask_name '", named, &sig->mask, err);
    if (!st && sig->mask >= 0) st = mask_input_ok(&mi->inputs[sig->mask], path, " (no_mask: none)", err);
    if (!st) st = choose_polarity(o, path, sig, err);
    if (!st) st = graph_polarity(contract, sig, err);
    if (!st && o->features_name) st = named_input(mi, path, "features_name '", o->features_name, &sig->features, err);
    for (size_t i = 0; !st && !o->features_name && sig->features < 0 && i < mi->n_inputs; i++)
        if (mi->inputs[i].rank == 3 && oq_dtype_is_float((oq_dtype)mi->inputs[i].elem_type)) sig->features = (int)i;
    return st;
}

oq_status oq_signature_make(const oq_validate_opts *o, const oq_encoder_weights *w, oq_model_info **user_mi,
                            const char *contract, oq_signature *sig, oq_err *err)
{
    return oq_signature_make_used(o, w, user_mi, NULL, NULL, contract, sig, err);
}

oq_status oq_signature_make_used(const oq_validate_opts *o, const oq_encoder_weights *w, oq_model_info **user_mi,
                                 unsigned **user_uses, oq_index_routes **user_tables, const char *contract,
                                 oq_signature *sig, oq_err *err)
{
    memset(sig, 0, sizeof *sig);
    sig->mask = sig->features = -1;
    const char *path = o->kind == OQ_MODEL_USER ? o->model_path : "the exported model";
    sig->label = path;
    sig->kind = o->kind;
    sig->seq_axes = o->seq_axes;
    sig->n_seq_axes = o->n_seq_axes;
    oq_status st = OQ_OK;
    if (o->kind == OQ_MODEL_USER) {
        sig->mi = *user_mi;
        *user_mi = NULL;
        st = oq_model_refuse_non_tensors(sig->mi, path, "ortqual", err);
        if (!st) st = oq_model_refuse_no_outputs(sig->mi, path, err);
        if (!st && user_uses && *user_uses) {
            sig->uses = *user_uses, *user_uses = NULL;
            if (user_tables) sig->tables = *user_tables, *user_tables = NULL;
        } else if (!st) {
            st = oq_model_input_uses_file(o->model_path, sig->mi, &sig->uses, &sig->tables, err);
        }
    } else {
        st = export_signature(o, w, &sig->mi, err);
    }
    if (!st) st = choose_mask(o, path, contract, sig, err);
    if (!st)
        st = oq_seq_axes_check_model(path, sig->mi, sig->mask >= 0 ? sig->mi->inputs[sig->mask].name : NULL,
                                     sig->seq_axes, sig->n_seq_axes, err);
    if (st) oq_signature_clear(sig);
    return st;
}

void oq_signature_clear(oq_signature *sig)
{
    oq_model_info_free(sig->mi);
    free(sig->uses);
    oq_index_routes_free(sig->tables);
    memset(sig, 0, sizeof *sig);
    sig->mask = sig->features = -1;
}

/* ---- a batch's inputs --------------------------------------------------------------- */

/* A declared dimension: its size (>= 0), or -1 for a name, -2 for an unknown one ("?"). */
static int64_t declared_size(const char *d)
{
    char *end;
    long long v = strtoll(d, &end, 10);
    return end != d && !*end ? v : strcmp(d, "?") ? -1 : -2;
}

/* The value a named dimension took in this batch, or -1. */
static int64_t bound(const oq_batch_inputs *in, const char *name, const char **where)
{
    for (size_t i = 0; i < in->n_dims; i++)
        if (!strcmp(in->dim_names[i], name)) {
            if (where) *where = in->dim_where[i];
            return in->dim_values[i];
        }
    return -1;
}

static oq_status bind(oq_batch_inputs *in, const char *name, int64_t value, const char *where, oq_err *err)
{
    size_t k = in->n_dims, m = in->n_dims;
    if (oq_strv_push(&in->dim_names, &k, name) || oq_strv_push(&in->dim_where, &m, where)) {
        if (k > in->n_dims) free(in->dim_names[--k]);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    int64_t *v = OQ_PUSH(in->dim_values, in->n_dims);
    if (!v) {
        free(in->dim_names[k - 1]);
        free(in->dim_where[m - 1]);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *v = value;
    return OQ_OK;
}

/* The length of `where` ("member 'x' [2,4] of FILE") without " of FILE" when FILE is `path`, which
 * the message names first: a clash between an inputs file and its expected outputs names both. */
static int unless_in(const char *where, const char *path)
{
    size_t n = strlen(where), p = strlen(path);
    int same = n > p + 4 && !strcmp(where + n - p, path) && !strncmp(where + n - p - 4, " of ", 4);
    return (int)(same ? n - p - 4 : n);
}

/* ortqual's own model takes the features width it was exported with: inputs of another width
 * want the option that builds it so, not a model the user never chose. */
static oq_status own_width_hint(const oq_io_info *io, const oq_tensor *t, oq_err *err)
{
    int64_t built = io->rank == 3 ? declared_size(io->dims[2]) : -1;
    if (!err || built < 0 || t->ndim != 3 || t->shape[2] == built) return OQ_ERR_SHAPE;
    char was[sizeof err->msg];
    snprintf(was, sizeof was, "%s", err->msg);
    return oq_err_set(err, OQ_ERR_SHAPE, "%s; ortqual's model is exported with events.num_features %lld: give "
                      "events.num_features %lld for these inputs", was, (long long)built, (long long)t->shape[2]);
}

/* `t` against the declaration `io`: type, rank, fixed sizes, and named sizes consistent with
 * the ones bound so far in this batch (bound here when new). `what` names t in messages. */
static oq_status check_declared(const oq_io_info *io, const oq_tensor *t, const char *path, const char *what,
                                oq_batch_inputs *in, oq_err *err)
{
    char got[128], want[256], here[4600], forms[160];
    oq_shape_str(t, got, sizeof got);
    oq_io_declared_str(io, want, sizeof want);
    if (io->elem_type && (oq_dtype)io->elem_type != t->dtype)
        return oq_err_set(err, OQ_ERR_SHAPE, "%s: %s '%s' is %s %s; the model's '%s' is %s %s (%s)", path, what,
                          t->name, oq_dtype_name(t->dtype), got, io->name,
                          oq_dtype_size((oq_dtype)io->elem_type) ? oq_dtype_name((oq_dtype)io->elem_type)
                                                                 : "a type ortqual cannot feed",
                          want, oq_npz_accepted((oq_dtype)io->elem_type, forms, sizeof forms));
    if (io->rank < 0) return OQ_OK;
    if (t->ndim != io->rank)
        return oq_err_set(err, OQ_ERR_SHAPE, "%s: %s '%s' has shape %s; the model's '%s' is %s", path, what, t->name,
                          got, io->name, want);
    snprintf(here, sizeof here, "%s '%s' %s of %s", what, t->name, got, path);
    for (int32_t d = 0; d < io->rank; d++) {
        int64_t size = declared_size(io->dims[d]);
        const char *where = NULL;
        int64_t was = size == -1 ? bound(in, io->dims[d], &where) : -1;
        if (size >= 0 && size != t->shape[d])
            return oq_err_set(err, OQ_ERR_SHAPE, "%s: %s '%s' has shape %s; the model's '%s' is %s (axis %d fixed to %lld)",
                              path, what, t->name, got, io->name, want, (int)d, (long long)size);
        if (was >= 0 && was != t->shape[d])
            return oq_err_set(err, OQ_ERR_SHAPE,
                              "%s: dimension '%s' is %lld in %.*s but %lld in %.*s (the model names both '%s')", path,
                              io->dims[d], (long long)was, unless_in(where, path), where, (long long)t->shape[d],
                              unless_in(here, path), here, io->dims[d]);
        if (size == -1 && was < 0) {
            oq_status st = bind(in, io->dims[d], t->shape[d], here, err);
            if (st) return st;
        }
    }
    return OQ_OK;
}

/* The member for input i: its own name, else "features"/"mask" for those inputs. */
static const char *member_for(const oq_signature *sig, const oq_npz *z, size_t i)
{
    const char *name = sig->mi->inputs[i].name;
    if (oq_npz_get(z, name)) return name;
    if ((int)i == sig->features && oq_npz_get(z, "features")) return "features";
    if ((int)i == sig->mask && oq_npz_get(z, "mask")) return "mask";
    return name;
}

/* `name` is the "features" or "mask" member that feeds an input of another name (member_for). */
static int alias_member(const oq_signature *sig, const oq_npz *z, const char *name)
{
    int feeds_features = sig->features >= 0 && !strcmp(member_for(sig, z, (size_t)sig->features), name);
    int feeds_mask = sig->mask >= 0 && !strcmp(member_for(sig, z, (size_t)sig->mask), name);
    return (!strcmp(name, "features") && feeds_features) || (!strcmp(name, "mask") && feeds_mask);
}

/* Without a mask, the input whose axes say the batch and the sequence, and the sequence axis
 * (axis 1 of the features [B, L, F] or of token ids [B, L], a Gather's indices; else the axis
 * denoted DATA_TIME, the batch on axis 0); NULL where none says it: any other axis 1 may be
 * anything (the heads of [B, H, L, D]), and the batch's padded length is then not known. */
static const oq_tensor *unmasked_sequence(const oq_signature *sig, const oq_batch_inputs *in, int32_t *seq_axis)
{
    const oq_model_info *mi = sig->mi;
    for (size_t i = 0; i < in->n; i++) {
        const oq_tensor *t = in->t[i];
        int ids = t->ndim == 2 && sig->uses && (sig->uses[i] & OQ_USE_INDICES) && !oq_dtype_is_float(t->dtype);
        if (((int)i == sig->features && t->ndim == 3) || ids) return *seq_axis = 1, t;
    }
    for (size_t i = 0; i < in->n; i++) {
        const oq_io_info *io = &mi->inputs[i];
        for (int32_t d = 1; io->denotations && d < io->rank && d < in->t[i]->ndim; d++)
            if (io->denotations[d] && !strcmp(io->denotations[d], OQ_DENOTATION_TIME)) return *seq_axis = d, in->t[i];
    }
    return NULL;
}

/* validate's words for an event: its id in the run as well as its position. */
static const char *event_name(const void *ids, int64_t event, char *buf, size_t n)
{
    return oq_event_str(ids, event, buf, n);
}

static oq_status batch_shape(const oq_signature *sig, const char *path, oq_batch_inputs *in, oq_err *err)
{
    if (sig->mask >= 0) {
        const oq_tensor *m = in->t[sig->mask];
        oq_mask_taken k = {sig->polarity, sig->polarity_fixed, sig->mask_why, name_only(sig),
                           "mask_name names the mask, no_mask says there is none", event_name, in->ids,
                           sig->polarity_by_graph};
        oq_status st = oq_input_mask_check(&k, m, path, &in->lengths, err);
        if (!st) in->batch = m->shape[0], in->seq = m->shape[1];
        return st;
    }
    in->batch = 1, in->seq = 0; /* no mask: B of the first input that has one; L where an input tells it */
    for (size_t i = 0; i < in->n; i++)
        if (in->t[i]->ndim >= 1) {
            if (!in->t[i]->shape[0]) return oq_batch_no_events(in->t[i], path, err);
            in->batch = in->t[i]->shape[0];
            break;
        }
    int32_t seq_axis = -1;
    const oq_tensor *t = unmasked_sequence(sig, in, &seq_axis);
    if (t && !t->shape[0]) return oq_batch_no_events(t, path, err);
    if (t) in->batch = t->shape[0], in->seq = t->shape[seq_axis];
    return OQ_OK;
}

/* How one batch's inputs are read (axes-impl.h): the axes the rule of outputs tells for each
 * input (src/axes/: its names, its denotations, the sizes), its events named by their ids.
 * ortqual's sdpa model reads padded query, key and value rows: there every element. */
static void batch_rule(const oq_signature *sig, const oq_batch_inputs *in, oq_axes_rule *r, oq_finite_rule *f)
{
    const oq_model_info *mi = sig->mi;
    *r = (oq_axes_rule){sig->label, mi, sig->mask >= 0 ? mi->inputs[sig->mask].name : NULL, 0, NULL, in->batch,
                        in->seq};
    *f = (oq_finite_rule){r, in->lengths, in->uses, sig->kind == OQ_MODEL_SDPA, event_name, in->ids};
}

/* The finite-input rule (axes-impl.h, the one bench --model applies to its --inputs too). */
static oq_status check_finite(const oq_signature *sig, const oq_batch_inputs *in, const char *path, oq_err *err)
{
    oq_axes_rule r;
    oq_finite_rule f;
    batch_rule(sig, in, &r, &f);
    return oq_inputs_check_finite(&f, (const oq_tensor *const *)in->t, in->n, path, err);
}

/* Where element e of t is: "event E position P" where the axes rule tells them, else "element
 * [i,j,..]" in C order. */
static const char *element_str(const oq_signature *sig, const oq_batch_inputs *in, const oq_tensor *t, int64_t e,
                               char *buf, size_t n)
{
    oq_axes_rule r;
    oq_finite_rule f;
    batch_rule(sig, in, &r, &f);
    return oq_finite_element_str(&f, t, e, buf, n);
}

/* Indices inside the tables each input indexes (sig->tables), as the Casts on the way make them:
 * the id check bench --model runs on what it feeds too (axes-impl.h). */
static oq_status check_ids(const oq_signature *sig, const oq_batch_inputs *in, const char *path, oq_err *err)
{
    oq_axes_rule r;
    oq_finite_rule f;
    batch_rule(sig, in, &r, &f);
    size_t n = in->n < sig->mi->n_inputs ? in->n : sig->mi->n_inputs;
    return oq_inputs_check_ids(&f, sig->tables, (const oq_tensor *const *)in->t, n, path, err);
}

/* A member that is no output, input or batch member of ortqual's is most likely a name
 * misspelt: an output's was dropped, and that output never compared (bench --expected refuses
 * it); an optional input's left the model on its default. The same for an --inputs file as for
 * the expected one (or an io.npz, both). */
static oq_status refuse_stray_members(const oq_signature *sig, const oq_npz *z, const char *path, oq_err *err)
{
    const oq_model_info *mi = sig->mi;
    for (size_t i = 0; i < z->count; i++) {
        const char *name = z->tensors[i]->name;
        if (name && !oq_find_io(mi->outputs, mi->n_outputs, name) && !oq_find_io(mi->inputs, mi->n_inputs, name) &&
            !oq_model_default_input(mi, name) && strcmp(name, "event_indices") && strcmp(name, "lengths") &&
            !alias_member(sig, z, name))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: member '%s' is neither an output nor an input of the "
                              "model", path, name);
    }
    return OQ_OK;
}

oq_status oq_signature_read_inputs(const oq_signature *sig, const char *path, oq_batch_inputs *in, oq_err *err)
{
    oq_npz *z = NULL;
    oq_status st = oq_npz_read(path, &z, err);
    if (!st) st = oq_signature_take_batch(sig, z, path, NULL, in, err);
    oq_npz_free(z);
    return st;
}

/* Member `member` out of z, or a copy where it is also an output's (a graph that passes an input
 * through): the expected outputs may be read from the same archive afterwards. */
static oq_status member_tensor(const oq_model_info *mi, oq_npz *z, const char *member, oq_tensor **t, oq_err *err)
{
    if (!oq_find_io(mi->outputs, mi->n_outputs, member)) return oq_npz_take(z, member, t, err);
    return oq_tensor_clone(oq_npz_get(z, member), t, err);
}

oq_status oq_signature_take_batch(const oq_signature *sig, oq_npz *z, const char *path, const oq_event_ids *ids,
                                  oq_batch_inputs *in, oq_err *err)
{
    memset(in, 0, sizeof *in);
    in->ids = ids;
    const oq_model_info *mi = sig->mi;
    oq_status st = oq_model_refuse_default_inputs(mi, (const oq_tensor *const *)z->tensors, z->count, path, "member",
                                                  err);
    if (!st) st = refuse_stray_members(sig, z, path, err);
    if (!st && !(in->t = calloc(mi->n_inputs ? mi->n_inputs : 1, sizeof *in->t)))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < mi->n_inputs; i++) {
        const char *member = member_for(sig, z, i);
        char want[256];
        if (!oq_npz_get(z, member)) {
            st = oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: no member '%s' for the model's input %s %s %s", path, member,
                            mi->inputs[i].name,
                            mi->inputs[i].elem_type ? oq_dtype_name((oq_dtype)mi->inputs[i].elem_type) : "",
                            oq_io_declared_str(&mi->inputs[i], want, sizeof want));
            break;
        }
        if ((st = member_tensor(mi, z, member, &in->t[i], err))) break;
        in->n++;
        char what[4200];
        snprintf(what, sizeof what, "%s: member '%s'", path, member);
        st = oq_npz_feed_as(in->t[i], (oq_dtype)mi->inputs[i].elem_type, what, err);
        if (!st) st = check_declared(&mi->inputs[i], in->t[i], path, "member", in, err);
        if (st == OQ_ERR_SHAPE && sig->kind != OQ_MODEL_USER && (int)i == sig->features) st = own_width_hint(&mi->inputs[i], in->t[i], err);
        if (!st) st = oq_tensor_set_name(in->t[i], mi->inputs[i].name, err);
    }
    in->uses = sig->uses;
    if (!st) st = batch_shape(sig, path, in, err);
    if (!st) st = check_finite(sig, in, path, err);
    if (!st) st = check_ids(sig, in, path, err);
    if (st) oq_batch_inputs_clear(in);
    return st;
}

oq_status oq_signature_check(const oq_signature *sig, oq_batch_inputs *in, const char *what, oq_err *err)
{
    for (size_t i = 0; i < in->n && i < sig->mi->n_inputs; i++) {
        oq_status st = check_declared(&sig->mi->inputs[i], in->t[i], what, "input", in, err);
        if (st) return st;
    }
    return OQ_OK;
}

void oq_batch_inputs_clear(oq_batch_inputs *in)
{
    oq_tensors_free(in->t, in->n);
    free(in->lengths);
    for (size_t i = 0; i < in->n_dims; i++) {
        free(in->dim_names[i]);
        free(in->dim_where[i]);
    }
    free(in->dim_names);
    free(in->dim_where);
    free(in->dim_values);
    memset(in, 0, sizeof *in);
}

/* ---- for other commands (convert) ------------------------------------------------------ */

/* convert's mask: the contract's input, else --mask (which must be a mask), else the one rank-2
 * input named like a mask. */
static oq_status convert_mask(oq_signature *sig, const char *path, const char *contract, const char *mask,
                              oq_err *err)
{
    if (contract) return OQ_OK; /* chosen, and checked, by oq_signature_make */
    if (!mask) {
        oq_status st = detect_mask(sig, 1, path, err);
        sig->mask_why = NULL; /* convert has no --no-mask to offer */
        return st;
    }
    oq_status st = named_input(sig->mi, path, "mask_input '", mask, &sig->mask, err);
    return st ? st : mask_input_ok(&sig->mi->inputs[sig->mask], path, "", err);
}

/* The outputs saved in `path` checked against the batch `in` (convert writes nothing of them). */
static oq_status expected_check(const oq_signature *sig, oq_batch_inputs *in, const char *path, oq_err *err)
{
    oq_npz *z = NULL;
    oq_status st = oq_npz_read(path, &z, err);
    if (!st) st = oq_signature_expected(sig, in, z, path, NULL, err);
    oq_npz_free(z);
    return st;
}

/* The mask contract in the model's metadata, with the polarity it records (KEEP where none). */
static oq_status read_contract(const char *model_path, int *has, char *input, size_t cap, oq_mask_polarity *recorded,
                               oq_err *err)
{
    unsigned char *buf;
    size_t n;
    *has = 0;
    oq_status st = oq_read_file(model_path, &buf, &n, err);
    if (st) return st;
    st = oq_convert_contract_of(buf, n, model_path, has, input, cap, recorded, err);
    free(buf);
    return st;
}

/* The check behind the entry points (each names itself in its NULL messages); `given`: the
 * caller chose `polarity`, else a contract's is read instead. */
static oq_status check_inputs(const char *model_path, const char *mask, oq_mask_polarity polarity, int given,
                              const char *const *paths, const char *const *expected, size_t n, const char *tolerances,
                              oq_err *err)
{
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model_path;
    o.no_mask = 1; /* no detection there: convert_mask chooses */
    char contract[256];
    int has = 0;
    oq_signature sig;
    oq_model_info *mi = NULL;
    oq_mask_polarity recorded = OQ_MASK_POLARITY_KEEP;
    oq_status st = read_contract(model_path, &has, contract, sizeof contract, &recorded, err);
    if (!st && has) st = oq_contract_polarity_adopt(model_path, recorded, given, &polarity, err);
    if (!st) st = oq_model_inspect_file(model_path, &mi, err);
    if (!st) st = oq_signature_make(&o, NULL, &mi, has ? contract : NULL, &sig, err);
    if (st) return st;
    st = convert_mask(&sig, model_path, has ? contract : NULL, mask, err);
    o.mask_polarity = polarity; /* (after the mask is chosen: with none it is refused) */
    if (!st) st = choose_polarity(&o, model_path, &sig, err);
    if (!st && !has && n) st = held_to_graph(&sig, given, err); /* as convert's check reads them (convert/check.c) */
    if (!st) st = oq_validate_check_tolerances(tolerances, sig.mi, err);
    for (size_t i = 0; !st && i < n; i++) {
        oq_batch_inputs in;
        st = oq_signature_read_inputs(&sig, paths[i], &in, err);
        if (st) break;
        if (expected) st = expected_check(&sig, &in, expected[i], err);
        oq_batch_inputs_clear(&in);
    }
    oq_signature_clear(&sig);
    return st;
}

oq_status oq_validate_check_inputs(const char *model_path, const char *mask, const char *const *paths,
                                   const char *const *expected, size_t n, const char *tolerances, oq_err *err)
{
    OQ_NEED(err, model_path);
    OQ_NEED_N(err, n, paths);
    return check_inputs(model_path, mask, OQ_MASK_POLARITY_KEEP, 0, paths, expected, n, tolerances, err);
}

oq_status oq_validate_check_inputs_polarity(const char *model_path, const char *mask, oq_mask_polarity polarity,
                                            const char *const *paths, const char *const *expected, size_t n,
                                            const char *tolerances, oq_err *err)
{
    OQ_NEED(err, model_path);
    OQ_NEED_N(err, n, paths);
    return check_inputs(model_path, mask, polarity, polarity != OQ_MASK_POLARITY_KEEP, paths, expected, n, tolerances,
                        err);
}

oq_status oq_validate_check_convert_inputs(const char *model_path, const oq_convert_opts *o, const char *const *paths,
                                           const char *const *expected, size_t n, oq_err *err)
{
    OQ_NEED(err, model_path);
    OQ_NEED(err, o);
    OQ_NEED_N(err, n, paths);
    return check_inputs(model_path, o->mask_input, o->mask_polarity, o->mask_polarity_given, paths, expected, n,
                        o->tolerances, err);
}

/* ---- the expected outputs ------------------------------------------------------------ */

/* When the outputs were looked for in DIR/inputs_X.npz and DIR/outputs_X.npz exists (the
 * layout validate --save-outputs and the fixtures use), the hint names the option that reads it. */
static void outputs_beside_hint(const char *path, char *hint, size_t n)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char sib[4096], said[64];
    hint[0] = 0;
    if (strncmp(base, "inputs_", 7) ||
        snprintf(sib, sizeof sib, "%.*soutputs_%s", (int)(base - path), path, base + 7) >= (int)sizeof sib)
        return;
    if (access(sib, F_OK)) return;
    snprintf(hint, n, "; %s is beside it: %s%.*soutputs_*.npz'", sib, oq_terms("give expected_files '", said, sizeof said),
             (int)(base - path), path);
}

/* Inputs an expected file holds too (an io.npz, or PyTorch's outputs saved with their inputs)
 * are the batch's, exactly: other values say the outputs were made from other inputs (a file
 * paired with the wrong batch), and a comparison with them would judge the wrong thing. */
/* Whether a and b have one shape. */
static int same_shape(const oq_tensor *a, const oq_tensor *b)
{
    int same = a->ndim == b->ndim;
    for (int32_t d = 0; same && d < a->ndim; d++) same = a->shape[d] == b->shape[d];
    return same;
}

/* The first element where a and b (one shape) hold other numbers, NaN equal to NaN; -1: none. */
static int64_t first_difference(const oq_tensor *a, const oq_tensor *b)
{
    for (int64_t e = 0, n = oq_tensor_numel(a); e < n; e++) {
        double x = oq_tensor_get_f64(a, e), y = oq_tensor_get_f64(b, e);
        if (x != y && !(isnan(x) && isnan(y))) return e;
    }
    return -1;
}

static oq_status same_inputs(const oq_signature *sig, const oq_batch_inputs *in, const oq_npz *z, const char *path,
                             oq_err *err)
{
    const oq_model_info *mi = sig->mi;
    for (size_t i = 0; i < in->n && i < mi->n_inputs; i++) {
        const oq_tensor *x = oq_npz_get(z, mi->inputs[i].name), *t = in->t[i];
        if (!x || oq_find_io(mi->outputs, mi->n_outputs, mi->inputs[i].name)) continue;
        char got[128], want[128], where[256];
        if (!same_shape(x, t))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: member '%s' has shape %s, but the batch's input is %s: "
                              "outputs made from other inputs?", path, x->name, oq_shape_str(x, got, sizeof got),
                              oq_shape_str(t, want, sizeof want));
        int64_t e = first_difference(x, t);
        if (e >= 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: member '%s' holds %.9g at %s, but the batch's input "
                              "holds %.9g there: outputs made from other inputs?", path, x->name,
                              oq_tensor_get_f64(x, e), element_str(sig, in, t, e, where, sizeof where),
                              oq_tensor_get_f64(t, e));
    }
    return OQ_OK;
}

oq_status oq_signature_same_saved(const oq_signature *sig, const oq_npz *held, const char *held_path,
                                  const oq_npz *saved, const char *saved_path, oq_err *err)
{
    const oq_model_info *mi = sig->mi;
    static const char fix[] = "two saved references of one output disagree, and only one would be judged: drop the "
                              "outputs from one of the files";
    for (size_t i = 0; i < mi->n_outputs; i++) {
        const char *name = mi->outputs[i].name;
        const oq_tensor *x = oq_npz_get(held, name), *t = oq_npz_get(saved, name);
        if (!x || !t || oq_find_io(mi->inputs, mi->n_inputs, name)) continue; /* a missing one is said later */
        char got[128], want[128], at[320];
        if (!same_shape(x, t))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: member '%s' (an output) has shape %s, but %s (the expected "
                              "file, the reference) has %s: %s", held_path, name, oq_shape_str(x, got, sizeof got),
                              saved_path, oq_shape_str(t, want, sizeof want), fix);
        int64_t e = first_difference(x, t);
        if (e >= 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: member '%s' (an output) holds %.9g at element %s, but %s "
                              "(the expected file, the reference) holds %.9g there: %s", held_path, name,
                              oq_tensor_get_f64(x, e), oq_coord_str(x->shape, x->ndim, e, at, sizeof at), saved_path,
                              oq_tensor_get_f64(t, e), fix);
    }
    return OQ_OK;
}

oq_status oq_signature_expected(const oq_signature *sig, oq_batch_inputs *in, oq_npz *z, const char *path,
                                const char *out, oq_err *err)
{
    oq_status st = OQ_OK;
    const oq_model_info *mi = sig->mi;
    oq_tensor **t = calloc(mi->n_outputs ? mi->n_outputs : 1, sizeof *t);
    size_t n = 0;
    if (!t) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    size_t n_dims = in->n_dims; /* an output's own names bind nothing across batches */
    for (size_t i = 0; !st && i < mi->n_outputs; i++) {
        const oq_io_info *io = &mi->outputs[i];
        char want[256];
        if (!oq_npz_get(z, io->name)) {
            char hint[4200];
            outputs_beside_hint(path, hint, sizeof hint);
            st = oq_err_set(err, OQ_ERR_NOT_FOUND,
                            "%s: no member '%s' for the model's output %s %s %s (every output is compared with "
                            "its saved values)%s",
                            path, io->name, io->name, io->elem_type ? oq_dtype_name((oq_dtype)io->elem_type) : "",
                            oq_io_declared_str(io, want, sizeof want), hint);
            break;
        }
        if ((st = oq_npz_take(z, io->name, &t[n], err))) break;
        n++;
        st = oq_compare_check_kind(t[n - 1], io->name, (oq_dtype)io->elem_type, path, err);
        oq_io_info untyped = *io;
        untyped.elem_type = 0; /* float32 from PyTorch for a float16 output is fine: compared as numbers */
        if (!st) st = check_declared(&untyped, t[n - 1], path, "expected", in, err);
    }
    /* said after a missing output, which names what is wanted */
    if (!st) st = refuse_stray_members(sig, z, path, err);
    if (!st) st = same_inputs(sig, in, z, path, err);
    for (size_t i = n_dims; i < in->n_dims; i++) {
        free(in->dim_names[i]);
        free(in->dim_where[i]);
    }
    in->n_dims = n_dims;
    if (!st && out) st = oq_npz_write_nosync(out, n, (const oq_tensor *const *)t, 1, err);
    oq_tensors_free(t, n);
    return st;
}

/* ---- the mask's axes in each output, told before any model runs ---------------------- */

/* The declared shape of `io` with the batch's sizes for its names; 0 when a size is unknown
 * until the model runs ("?", a name the inputs did not bind, no shape). */
static int declared_shape(const oq_io_info *io, const oq_batch_inputs *in, int64_t *shape)
{
    if (io->rank < 0 || io->rank > OQ_MAX_DIMS) return 0;
    for (int32_t d = 0; d < io->rank; d++) {
        int64_t size = declared_size(io->dims[d]);
        shape[d] = size == -1 ? bound(in, io->dims[d], NULL) : size;
        if (shape[d] < 0) return 0;
    }
    return 1;
}

/* The output's shape from the checked expected outputs (NULL: none). */
static int expected_shape(const oq_npz *z, const char *name, int32_t *ndim, int64_t *shape)
{
    const oq_tensor *t = z ? oq_npz_get(z, name) : NULL;
    if (!t) return 0;
    *ndim = t->ndim;
    memcpy(shape, t->shape, sizeof *shape * (size_t)t->ndim);
    return 1;
}

oq_status oq_signature_mask_axes(const oq_signature *sig, const oq_batch_inputs *in, const char *expected,
                                 oq_err *err)
{
    if (sig->mask < 0) return OQ_OK; /* no mask: every element is valid */
    const oq_model_info *mi = sig->mi;
    oq_axes_rule r = {sig->label, mi, mi->inputs[sig->mask].name, sig->n_seq_axes, sig->seq_axes, in->batch, in->seq};
    oq_npz *z = NULL;
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < mi->n_outputs; i++) {
        const oq_io_info *io = &mi->outputs[i];
        int64_t shape[OQ_MAX_DIMS];
        int32_t ndim = io->rank;
        if (!declared_shape(io, in, shape)) {
            if (expected && !z && (st = oq_npz_read(expected, &z, err))) break; /* read once, when needed */
            if (!expected_shape(z, io->name, &ndim, shape)) continue;       /* its worker tells */
        }
        oq_mask_axes a;
        st = oq_output_mask_axes(&r, io->name, ndim, shape, &a, err);
    }
    oq_npz_free(z);
    return st;
}
