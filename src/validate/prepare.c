/* Before any model runs: the batches (generated or loaded, every one checked
 * against the mask contract) and the ONNX files of every configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/fileio.h"
#include "ortqual/inspect.h"
#include "ortqual/mask.h"
#include "ortqual/npz.h"
#include "validate/validate-impl.h"

/* The batch as the summary records it; lengths and event indices copied. */
static oq_status record_batch(oq_validate_summary *s, size_t index, const char *path, int64_t b, int64_t l,
                              const int64_t *lengths, const int64_t *event_idx, oq_err *err)
{
    oq_batch_info *bi = OQ_PUSH(s->batches, s->n_batches);
    size_t bytes = (b ? (size_t)b : 1) * sizeof(int64_t);
    if (!bi || !(bi->inputs = strdup(path)) || !(bi->lengths = malloc(bytes)) || !(bi->event_indices = malloc(bytes)))
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    bi->index = (int64_t)index;
    bi->batch_size = b;
    bi->padded_length = l;
    memcpy(bi->lengths, lengths, (size_t)b * sizeof *lengths);
    memcpy(bi->event_indices, event_idx, (size_t)b * sizeof *event_idx);
    for (int64_t i = 0; i < b; i++) bi->valid_size += lengths[i];
    return OQ_OK;
}

/* Writes inputs_NNN.npz (features, mask, event_indices, lengths) and records the batch. */
static oq_status write_batch(const char *outdir, size_t index, oq_tensor *features, oq_tensor *mask,
                             const int64_t *event_idx, oq_validate_summary *s, oq_err *err)
{
    int64_t b = mask->shape[0], l = mask->shape[1];
    oq_tensor *lens = NULL, *idx = NULL;
    oq_status st = oq_tensor_create(&lens, OQ_DTYPE_INT64, 1, &b, "lengths", err);
    if (!st) st = oq_tensor_create(&idx, OQ_DTYPE_INT64, 1, &b, "event_indices", err);
    if (!st) st = oq_mask_check(mask, features, (int64_t *)lens->data, err);
    if (st) {
        oq_err_prefix(err, "batch %zu: ", index);
    } else {
        memcpy(idx->data, event_idx, (size_t)b * sizeof *event_idx);
        char path[4096];
        snprintf(path, sizeof path, "%s/inputs_%03zu.npz", outdir, index);
        const oq_tensor *t[] = {features, mask, idx, lens};
        st = oq_npz_write(path, 4, t, 1, 1, err);
        /* recorded even when writing failed, so that undoing the preparation removes it */
        oq_status rs = record_batch(s, index, path, b, l, lens->data, event_idx, err);
        if (!st) st = rs;
        if (!st) st = oq_sha256_file(path, s->batches[s->n_batches - 1].sha256, err);
    }
    oq_tensor_free(lens);
    oq_tensor_free(idx);
    return st;
}

static oq_status generated_batches(const oq_validate_opts *o, oq_validate_summary *s, oq_err *err)
{
    oq_events *ev;
    oq_status st = oq_events_create(&o->events, &ev, err);
    if (st) return st;
    int64_t nb = oq_events_batch_count(ev);
    int64_t *idx = calloc((size_t)o->events.batch_size, sizeof *idx);
    if (!idx) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; !st && k < nb; k++) {
        oq_tensor *x = NULL, *m = NULL;
        st = oq_events_make_batch(ev, k, &x, &m, idx, err);
        if (!st) st = oq_tensor_set_name(x, "features", err);
        if (!st) st = oq_tensor_set_name(m, "mask", err);
        if (!st) st = write_batch(o->outdir, (size_t)k, x, m, idx, s, err);
        oq_tensor_free(x);
        oq_tensor_free(m);
    }
    free(idx);
    oq_events_free(ev);
    return st;
}

/* Saved batches keep their event indices when they carry them. */
static oq_status loaded_batch(const oq_validate_opts *o, size_t k, int64_t *next_event,
                              oq_validate_summary *s, oq_err *err)
{
    const char *path = o->input_files[k];
    oq_npz *z;
    oq_status st = oq_npz_read(path, &z, err);
    if (st) return st;
    oq_tensor *x = NULL, *m = NULL;
    const char *fname = o->features_name ? o->features_name : "features";
    const char *mname = o->mask_name ? o->mask_name : "mask";
    st = oq_npz_take(z, fname, &x, err);
    if (!st) st = oq_npz_take(z, mname, &m, err);
    if (!st && m->ndim != 2)
        st = oq_err_set(err, OQ_ERR_SHAPE, "%s: mask '%s' must be [B, L], got rank %d", path, mname, m->ndim);
    if (!st) {
        const oq_tensor *saved = oq_npz_get(z, "event_indices");
        int64_t b = m->shape[0];
        int64_t *idx = calloc(b ? (size_t)b : 1, sizeof *idx);
        if (!idx) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; idx && i < b; i++)
            idx[i] = saved && oq_tensor_numel(saved) == b ? (int64_t)oq_tensor_get_f64(saved, i) : *next_event + i;
        *next_event += b;
        if (!st) st = oq_tensor_set_name(x, "features", err);
        if (!st) st = oq_tensor_set_name(m, "mask", err);
        if (!st) st = write_batch(o->outdir, k, x, m, idx, s, err);
        if (st) oq_err_prefix(err, "%s: ", path);
        free(idx);
    }
    oq_tensor_free(x);
    oq_tensor_free(m);
    oq_npz_free(z);
    return st;
}

oq_status oq_validate_prepare_batches(const oq_validate_opts *o, oq_validate_summary *s, oq_err *err)
{
    if (!o->n_input_files) return generated_batches(o, s, err);
    int64_t next = 0;
    for (size_t k = 0; k < o->n_input_files; k++) {
        oq_status st = loaded_batch(o, k, &next, s, err);
        if (st) return st;
    }
    return OQ_OK;
}

/* ---- models ------------------------------------------------------------------------ */

oq_attn_format oq_repr_attn_format(oq_repr r)
{
    return r == OQ_REPR_ATTENTION23 ? OQ_ATTN_ATTENTION23
           : r == OQ_REPR_ATTENTION24 ? OQ_ATTN_ATTENTION24 : OQ_ATTN_DECOMPOSED;
}

/* Exports the ONNX file of one configuration; it depends only on the representation and
 * precision, so run_config calls this once for each pair. */
oq_status oq_validate_model_file(const oq_validate_opts *o, const oq_encoder_weights *w,
                                 const oq_config *c, const int64_t *static_bl, char *path,
                                 size_t n, oq_err *err)
{
    if (o->kind == OQ_MODEL_USER) {
        snprintf(path, n, "%s", o->model_path);
        return OQ_OK;
    }
    const char *kind = o->kind == OQ_MODEL_ENCODER ? "encoder" : "sdpa";
    snprintf(path, n, "%s/%s_%s_%s%s%s%s%s.onnx", o->outdir, kind, oq_repr_name(c->repr),
             oq_precision_name(c->precision), o->mask_form ? "_" : "",
             o->mask_form ? oq_mask_form_name(o->mask_form) : "", o->elu_op ? "_eluop" : "",
             o->static_shapes ? "_static" : "");
    oq_graph *g = NULL;
    oq_dtype adt = c->precision == OQ_PREC_FP16 ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32;
    oq_status st;
    if (o->kind == OQ_MODEL_ENCODER) {
        oq_encoder_export x = {.format = oq_repr_attn_format(c->repr), .mask = o->mask_form, .attention_dtype = adt,
                               .static_batch = static_bl[0], .static_seq = static_bl[1],
                               .elu_op = o->elu_op};
        st = oq_export_encoder(w, &x, &g, err);
    } else {
        oq_sdpa_config s = o->sdpa;
        s.format = oq_repr_attn_format(c->repr);
        s.attention_dtype = adt;
        s.mask = o->mask_form;
        s.static_batch = static_bl[0];
        s.static_seq = static_bl[1];
        st = oq_export_sdpa(&s, &g, err);
    }
    if (!st) st = oq_graph_write(g, path, 1, err);
    oq_graph_free(g);
    return st;
}

/* ---- the user's model: which inputs are features and mask ------------------------- */

/* A fixed dimension ("7"), or -1 for a symbolic or unknown one. */
static int64_t fixed_dim(const char *d)
{
    char *end;
    long long v = strtoll(d, &end, 10);
    return end != d && !*end ? v : -1;
}

/* Fills names (when not given) from the model's inputs, and checks the feature dimension. */
oq_status oq_validate_user_inputs(const char *path, char *features, char *mask, size_t n, oq_err *err)
{
    oq_model_info *mi;
    oq_status st = oq_model_inspect_file(path, &mi, err);
    if (st) return st;
    int64_t num_features = -1;
    for (size_t i = 0; i < mi->n_inputs; i++) { /* initializers are not among them */
        const oq_io_info *v = &mi->inputs[i];
        if (!*features && v->rank == 3) snprintf(features, n, "%s", v->name);
        else if (!*mask && v->rank == 2) snprintf(mask, n, "%s", v->name);
        if (!strcmp(v->name, features) && v->rank > 0) num_features = fixed_dim(v->dims[v->rank - 1]);
    }
    oq_model_info_free(mi);
    if (!*features || !*mask)
        return oq_err_set(err, OQ_ERR_SHAPE,
                          "%s: cannot tell the features [B,L,F] and mask [B,L] inputs apart; name them with --features and --mask",
                          path);
    if (num_features <= 0)
        return oq_err_set(err, OQ_ERR_SHAPE, "%s: input '%s' has no fixed feature dimension", path, features);
    return OQ_OK;
}
