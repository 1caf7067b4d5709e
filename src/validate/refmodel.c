/* The C references behind ref:encoder:fp64 and ref:sdpa:fp64, as models the worker can run: one
 * reference object per worker (weights converted and packed once, working memory kept between
 * batches). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/mask.h"
#include "ortqual/reference.h"
#include "ortqual/runtime.h"
#include "validate/validate-impl.h"

#define SDPA_OUTPUT "output" /* ref:sdpa's one output, as the exported sdpa model names it */

struct oq_ref_model {
    oq_repr repr;
    oq_encoder_ref *encoder;     /* ref:encoder */
    size_t n_outputs;
    int32_t heads, kv_heads;     /* ref:sdpa (3-D inputs need them) */
    int threads;                 /* ref:sdpa: threads per run, 0 = every core */
};

/* The plan's weights, run only if they are the bytes the plan names: the orchestrator hashed what
 * it wrote, and the file may have been replaced since (the reference cache keys outputs by that
 * SHA-256: other weights would be cached under it). The file is hashed as it streams, then read
 * (libzip streams a large one member by member), and must be the same file (device, inode, size,
 * change time) after the read as before the hash. Read twice by design: read whole, hashed and
 * parsed from memory, a 302 MB file cost ~1.5 s more CPU on the dev VM than these two passes (a
 * third 302 MB of fresh pages, the buffer's, beside the parsed tensors' and the weights'). */
static oq_status planned_weights(const oq_validate_plan *plan, oq_encoder_weights **w, oq_err *err)
{
    const char *path = plan->weights;
    if (!path) return oq_err_set(err, OQ_ERR_INVALID_ARG, "ref:encoder needs the encoder weights");
    if (!plan->weights_sha256) return oq_encoder_weights_load(path, plan->heads, w, err);
    oq_file_id before, after;
    char sha[65];
    if (oq_file_id_at(path, &before) != 0) return oq_err_set(err, OQ_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    oq_status st = oq_sha256_file(path, sha, err);
    if (!st && strcmp(sha, plan->weights_sha256))
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: changed during the run (sha256 %s in the plan, %s now)", path,
                          plan->weights_sha256, sha);
    if (!st) st = oq_encoder_weights_load(path, plan->heads, w, err);
    if (st || (oq_file_id_at(path, &after) == 0 && oq_file_id_same(&before, &after))) return st;
    oq_encoder_weights_free(*w);
    return oq_err_set(err, OQ_ERR_RUNTIME, "%s: changed during the run: written or replaced while it was read (sha256 "
                      "%s in the plan)", path, plan->weights_sha256);
}

static oq_status open_encoder(oq_ref_model *m, const oq_validate_plan *plan, oq_err *err)
{
    oq_encoder_weights *w;
    oq_status st = planned_weights(plan, &w, err);
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
    m->repr = plan->config.repr;
    m->heads = plan->heads;
    m->kv_heads = plan->kv_heads;
    m->threads = plan->threads;
    oq_status st = m->repr == OQ_REPR_ENCODER ? open_encoder(m, plan, err)
                   : m->repr == OQ_REPR_SDPA  ? OQ_OK
                                              : oq_err_set(err, OQ_ERR_UNSUPPORTED, "no C reference for representation '%s'",
                                                           oq_repr_name(m->repr));
    if (st) {
        oq_ref_model_free(m);
        return st;
    }
    *out = m;
    return OQ_OK;
}

size_t oq_ref_model_outputs(const oq_config *cfg, const oq_encoder_weights *w, const char **names, size_t max)
{
    size_t n = 0;
    if (cfg->repr == OQ_REPR_SDPA && max) names[n++] = SDPA_OUTPUT;
    for (int32_t i = 0; cfg->repr == OQ_REPR_ENCODER && w && i < w->cfg.n_outputs && n < max; i++)
        names[n++] = w->cfg.outputs[i].name;
    return n;
}

int32_t oq_ref_model_seq_axis(int32_t ndim) { return ndim == 4 ? 2 : 1; }

/* Padded query rows of y are exact zeros, as the exported sdpa model makes them. */
static void zero_padded_queries(oq_tensor *y, const int64_t *lengths)
{
    int32_t seq_axis = oq_ref_model_seq_axis(y->ndim);
    int64_t inner = 1;
    for (int32_t d = seq_axis + 1; d < y->ndim; d++) inner *= y->shape[d];
    int64_t L = y->shape[seq_axis], mid = y->ndim == 4 ? y->shape[1] : 1;
    double *p = y->data;
    for (int64_t b = 0; b < y->shape[0]; b++)
        for (int64_t h = 0; h < mid; h++)
            for (int64_t l = lengths[b]; l < L; l++) memset(p + ((b * mid + h) * L + l) * inner, 0, (size_t)inner * sizeof *p);
}

/* ref:sdpa: ONNX Attention in float64 on the sdpa model's query, key, value, with the mask's
 * lengths as nonpad_kv_seqlen. */
static oq_status run_sdpa(const oq_ref_model *m, oq_tensor *const *inputs, size_t n_inputs, oq_tensor **y,
                          oq_err *err)
{
    static const char *const names[] = {"query", "key", "value"};
    const oq_tensor *const *in = (const oq_tensor *const *)inputs;
    const oq_tensor *mask = oq_tensors_find(in, n_inputs, "mask");
    oq_tensor *qkv[3] = {NULL, NULL, NULL}, *seqlen = NULL;
    oq_status st = mask && mask->ndim == 2 ? OQ_OK
                                           : oq_err_set(err, OQ_ERR_SHAPE, "ref:sdpa needs inputs query, key, value and mask [B,L]");
    for (int i = 0; !st && i < 3; i++) {
        const oq_tensor *t = oq_tensors_find(in, n_inputs, names[i]);
        st = t ? oq_tensor_convert(t, OQ_DTYPE_FLOAT64, &qkv[i], err)
               : oq_err_set(err, OQ_ERR_SHAPE, "ref:sdpa needs input '%s'", names[i]);
    }
    if (!st) st = oq_tensor_create(&seqlen, OQ_DTYPE_INT64, 1, mask->shape, "nonpad_kv_seqlen", err);
    if (!st) st = oq_mask_check(mask, NULL, seqlen->data, err);
    oq_ref_attention_attrs attrs;
    oq_ref_attention_attrs_default(&attrs);
    attrs.opset = 24; /* the function, read from no node: its key padding is Attention-24's input */
    if (!st && qkv[0]->ndim == 3) {
        attrs.q_num_heads = m->heads;
        attrs.kv_num_heads = m->kv_heads;
    }
    oq_ref_attention_inputs ri = {.q = qkv[0], .k = qkv[1], .v = qkv[2], .nonpad_kv_seqlen = seqlen};
    oq_ref_attention_outputs ro = {0};
    if (!st) st = oq_ref_attention(&attrs, &ri, m->threads, &ro, err);
    if (!st) st = oq_tensor_set_name(ro.y, SDPA_OUTPUT, err);
    if (!st) zero_padded_queries(ro.y, seqlen->data);
    if (!st) *y = ro.y;
    else oq_ref_attention_outputs_clear(&ro);
    for (int i = 0; i < 3; i++) oq_tensor_free(qkv[i]);
    oq_tensor_free(seqlen);
    return st;
}

/* 0: every core this process may run on */
static int resolve_threads(int threads)
{
    if (threads) return threads;
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

int oq_ref_model_threads_of(const oq_validate_plan *plan) { return resolve_threads(plan->threads); }

int oq_ref_model_threads(const oq_ref_model *m)
{
    return m->encoder ? oq_encoder_ref_threads(m->encoder) : resolve_threads(m->threads);
}

oq_status oq_ref_model_run(oq_ref_model *m, oq_tensor *const *inputs, size_t n_inputs,
                           oq_tensor ***outputs, size_t *n_outputs, oq_err *err)
{
    if (m->repr == OQ_REPR_SDPA) {
        oq_tensor **out = calloc(1, sizeof *out);
        oq_status st = out ? run_sdpa(m, inputs, n_inputs, &out[0], err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        if (st) {
            free(out);
            return st;
        }
        *outputs = out;
        *n_outputs = 1;
        return OQ_OK;
    }
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
