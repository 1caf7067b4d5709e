/* Encoder configuration and weights: random, from named tensors, lookup. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/weights-impl.h"
#include "ortqual/export.h"
#include "ortqual/npz.h"
#include "status/args-impl.h"

void oq_encoder_config_default(oq_encoder_config *c)
{
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->features = 8;
    c->width = 32;
    c->layers = 2;
    c->heads = 4;
    c->ffn_width = 64;
    c->n_outputs = 2;
    snprintf(c->outputs[0].name, OQ_ENCODER_NAME_MAX, "cls");
    c->outputs[0].dim = 6;
    snprintf(c->outputs[1].name, OQ_ENCODER_NAME_MAX, "reg");
    c->outputs[1].dim = 4;
    c->ln_epsilon = 1e-5f;
}

static int valid_head_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

oq_status oq_encoder_config_check(const oq_encoder_config *c, oq_err *err)
{
    OQ_NEED(err, c);
    if (c->features < 1 || c->width < 1 || c->heads < 1 || c->layers < 0 ||
        (c->layers > 0 && c->ffn_width < 1))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "features %d, width %d, heads %d, layers %d, ffn_width %d: "
                          "sizes must be positive (layers >= 0)",
                          (int)c->features, (int)c->width, (int)c->heads, (int)c->layers,
                          (int)c->ffn_width);
    if (c->width % c->heads)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "heads %d does not divide width %d",
                          (int)c->heads, (int)c->width);
    if (c->n_outputs < 1 || c->n_outputs > OQ_ENCODER_MAX_OUTPUTS)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "the encoder needs 1 to %d output heads, not %d",
                          OQ_ENCODER_MAX_OUTPUTS, (int)c->n_outputs);
    for (int i = 0; i < c->n_outputs; i++) {
        if (!valid_head_name(c->outputs[i].name) || !strcmp(c->outputs[i].name, "features") ||
            !strcmp(c->outputs[i].name, "mask"))
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "output head %d: name '%s' must be [A-Za-z0-9_] and not an input name",
                              i, c->outputs[i].name);
        if (c->outputs[i].dim < 1)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "output head '%s': width %d must be positive",
                              c->outputs[i].name, (int)c->outputs[i].dim);
        for (int j = 0; j < i; j++)
            if (!strcmp(c->outputs[i].name, c->outputs[j].name))
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "output head '%s' appears twice",
                                  c->outputs[i].name);
    }
    return OQ_OK;
}

/* The documented weight list, in a fixed order. */
size_t oq_encoder_weight_specs(const oq_encoder_config *c, oq_wspec **out)
{
    size_t n = 2 + (size_t)c->layers * 16 + 2 + (size_t)c->n_outputs * 2, k = 0;
    oq_wspec *s = calloc(n, sizeof *s);
    if (!s) return 0;
    int64_t W = c->width, F = c->features, FF = c->ffn_width;
#define SPEC(kind_, r, cc, ...)                                                   \
    do {                                                                         \
        snprintf(s[k].name, sizeof s[k].name, __VA_ARGS__);                      \
        s[k].kind = (kind_);                                                     \
        s[k].ndim = (cc) ? 2 : 1;                                                \
        s[k].shape[0] = (r);                                                     \
        s[k].shape[1] = (cc);                                                    \
        k++;                                                                     \
    } while (0)
    SPEC(OQ_W_MATRIX, F, W, "embed.weight");
    SPEC(OQ_W_BIAS, W, 0, "embed.bias");
    for (int i = 0; i < c->layers; i++) {
        SPEC(OQ_W_LN_SCALE, W, 0, "blocks.%d.ln1.scale", i);
        SPEC(OQ_W_BIAS, W, 0, "blocks.%d.ln1.bias", i);
        static const char *proj[] = {"q", "k", "v", "o"};
        for (int p = 0; p < 4; p++) {
            SPEC(OQ_W_MATRIX, W, W, "blocks.%d.attn.w%s", i, proj[p]);
            SPEC(OQ_W_BIAS, W, 0, "blocks.%d.attn.b%s", i, proj[p]);
        }
        SPEC(OQ_W_LN_SCALE, W, 0, "blocks.%d.ln2.scale", i);
        SPEC(OQ_W_BIAS, W, 0, "blocks.%d.ln2.bias", i);
        SPEC(OQ_W_MATRIX, W, FF, "blocks.%d.ffn.w1", i);
        SPEC(OQ_W_BIAS, FF, 0, "blocks.%d.ffn.b1", i);
        SPEC(OQ_W_MATRIX, FF, W, "blocks.%d.ffn.w2", i);
        SPEC(OQ_W_BIAS, W, 0, "blocks.%d.ffn.b2", i);
    }
    SPEC(OQ_W_LN_SCALE, W, 0, "final_ln.scale");
    SPEC(OQ_W_BIAS, W, 0, "final_ln.bias");
    for (int i = 0; i < c->n_outputs; i++) {
        SPEC(OQ_W_MATRIX, W, c->outputs[i].dim, "heads.%s.weight", c->outputs[i].name);
        SPEC(OQ_W_BIAS, c->outputs[i].dim, 0, "heads.%s.bias", c->outputs[i].name);
    }
#undef SPEC
    OQ_ASSERT(k == n);
    *out = s;
    return n;
}

/* splitmix64: tiny, well-mixed, and the same on every platform. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double next_normal(uint64_t *s)
{
    /* Box-Muller with u1 in (0, 1]. */
    double u1 = ((double)(next_u64(s) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = (double)(next_u64(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static oq_status alloc_weights(const oq_encoder_config *c, oq_encoder_weights **out,
                               oq_wspec **specs, oq_err *err)
{
    size_t n = oq_encoder_weight_specs(c, specs);
    oq_encoder_weights *w = calloc(1, sizeof *w);
    if (!n || !w || !(w->t = calloc(n, sizeof *w->t))) {
        free(w);
        free(*specs);
        *specs = NULL;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory allocating encoder weights");
    }
    w->cfg = *c;
    w->n = n;
    *out = w;
    return OQ_OK;
}

oq_status oq_encoder_weights_random(const oq_encoder_config *c, uint64_t seed,
                                    oq_encoder_weights **out, oq_err *err)
{
    OQ_NEED(err, c);
    OQ_NEED(err, out);
    *out = NULL;
    oq_status st = oq_encoder_config_check(c, err);
    if (st) return st;
    oq_wspec *specs;
    oq_encoder_weights *w;
    if ((st = alloc_weights(c, &w, &specs, err))) return st;
    uint64_t rng = seed ^ 0x6f72747175616cull; /* "ortqual" */
    for (size_t i = 0; i < w->n && !st; i++) {
        st = oq_tensor_create(&w->t[i], OQ_DTYPE_FLOAT32, specs[i].ndim, specs[i].shape,
                              specs[i].name, err);
        if (st) break;
        float *d = w->t[i]->data;
        int64_t n = oq_tensor_numel(w->t[i]);
        double sd = specs[i].kind == OQ_W_MATRIX ? 1.0 / sqrt((double)specs[i].shape[0]) : 0.1;
        for (int64_t j = 0; j < n; j++)
            d[j] = (float)((specs[i].kind == OQ_W_LN_SCALE ? 1.0 : 0.0) + sd * next_normal(&rng));
    }
    free(specs);
    if (st) {
        oq_encoder_weights_free(w);
        return st;
    }
    *out = w;
    return OQ_OK;
}

/* Sizes from the shapes of the named tensors (embed, blocks.*, heads.*). */
static oq_status infer_config(const oq_tensor *const *t, size_t n, int32_t heads,
                              oq_encoder_config *c, oq_err *err)
{
    oq_encoder_config_default(c);
    c->heads = heads;
    const oq_tensor *e = oq_tensors_find(t, n, "embed.weight");
    if (!e || e->ndim != 2)
        return oq_err_set(err, OQ_ERR_FORMAT, "no 2-D 'embed.weight' [features, width] among the weights");
    c->features = (int32_t)e->shape[0];
    c->width = (int32_t)e->shape[1];
    c->layers = 0;
    c->n_outputs = 0;
    for (size_t i = 0; i < n; i++) {
        const char *nm = t[i]->name ? t[i]->name : "";
        int layer;
        if (sscanf(nm, "blocks.%d.", &layer) == 1 && layer >= 0 && layer < 4096 && layer >= c->layers)
            c->layers = layer + 1;
        size_t len = strlen(nm);
        if (!strncmp(nm, "heads.", 6) && len > 13 && !strcmp(nm + len - 7, ".weight")) {
            if (c->n_outputs == OQ_ENCODER_MAX_OUTPUTS)
                return oq_err_set(err, OQ_ERR_FORMAT, "more than %d output heads",
                                  OQ_ENCODER_MAX_OUTPUTS);
            oq_encoder_output *o = &c->outputs[c->n_outputs++];
            size_t nl = len - 13;
            if (nl >= OQ_ENCODER_NAME_MAX)
                return oq_err_set(err, OQ_ERR_FORMAT, "'%s': head name too long", nm);
            memcpy(o->name, nm + 6, nl);
            o->name[nl] = 0;
            if (t[i]->ndim != 2)
                return oq_err_set(err, OQ_ERR_SHAPE, "'%s' must be 2-D [width, K]", nm);
            o->dim = (int32_t)t[i]->shape[1];
        }
    }
    const oq_tensor *w1 = oq_tensors_find(t, n, "blocks.0.ffn.w1");
    if (c->layers > 0) {
        if (!w1 || w1->ndim != 2)
            return oq_err_set(err, OQ_ERR_FORMAT, "no 2-D 'blocks.0.ffn.w1' [width, ffn_width]");
        c->ffn_width = (int32_t)w1->shape[1];
    }
    return oq_encoder_config_check(c, err);
}

static int same_shape(const oq_tensor *t, const oq_wspec *s)
{
    if (t->ndim != s->ndim) return 0;
    for (int d = 0; d < s->ndim; d++)
        if (t->shape[d] != s->shape[d]) return 0;
    return 1;
}

oq_status oq_encoder_weights_from_tensors(const oq_tensor *const *tensors, size_t n,
                                          int32_t heads, oq_encoder_weights **out, oq_err *err)
{
    OQ_NEED_N(err, n, tensors);
    OQ_NEED(err, out);
    *out = NULL;
    oq_encoder_config c;
    oq_status st = infer_config(tensors, n, heads, &c, err);
    if (st) return st;
    oq_wspec *specs;
    oq_encoder_weights *w;
    if ((st = alloc_weights(&c, &w, &specs, err))) return st;
    for (size_t i = 0; i < w->n && !st; i++) {
        const oq_tensor *t = oq_tensors_find(tensors, n, specs[i].name);
        char want[64], got[64];
        if (!t) {
            st = oq_err_set(err, OQ_ERR_NOT_FOUND, "weight '%s' is missing", specs[i].name);
        } else if (!same_shape(t, &specs[i])) {
            oq_tensor probe = {.ndim = specs[i].ndim};
            memcpy(probe.shape, specs[i].shape, sizeof specs[i].shape);
            st = oq_err_set(err, OQ_ERR_SHAPE, "weight '%s' has shape %s, expected %s",
                            specs[i].name, oq_shape_str(t, got, sizeof got),
                            oq_shape_str(&probe, want, sizeof want));
        } else if (t->dtype != OQ_DTYPE_FLOAT32 && t->dtype != OQ_DTYPE_FLOAT64 &&
                   t->dtype != OQ_DTYPE_FLOAT16 && t->dtype != OQ_DTYPE_BFLOAT16) {
            st = oq_err_set(err, OQ_ERR_FORMAT, "weight '%s' is %s, not a float type",
                            specs[i].name, oq_dtype_name(t->dtype));
        } else if (!(st = oq_tensor_convert(t, OQ_DTYPE_FLOAT32, &w->t[i], err))) {
            st = oq_tensor_set_name(w->t[i], specs[i].name, err);
        }
    }
    if (!st && n != w->n) {
        for (size_t i = 0; i < n; i++) {
            const char *nm = tensors[i]->name ? tensors[i]->name : "(unnamed)";
            size_t k = 0;
            while (k < w->n && strcmp(specs[k].name, nm)) k++;
            if (k == w->n) {
                st = oq_err_set(err, OQ_ERR_FORMAT,
                                "unexpected weight '%s' (not part of a %d-layer encoder)", nm,
                                (int)c.layers);
                break;
            }
        }
        if (!st) st = oq_err_set(err, OQ_ERR_FORMAT, "duplicate weight names");
    }
    free(specs);
    if (st) {
        oq_encoder_weights_free(w);
        return st;
    }
    *out = w;
    return OQ_OK;
}

const oq_tensor *oq_encoder_weight(const oq_encoder_weights *w, const char *name)
{
    return w ? oq_tensors_find((const oq_tensor *const *)w->t, w->n, name) : NULL;
}

void oq_encoder_weights_free(oq_encoder_weights *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) oq_tensor_free(w->t[i]);
    free(w->t);
    free(w);
}

oq_status oq_encoder_weights_load(const char *path, int32_t heads, oq_encoder_weights **out,
                                  oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    oq_npz *npz = NULL;
    oq_status s = oq_npz_read(path, &npz, err);
    if (s) return s;
    s = oq_encoder_weights_from_tensors((const oq_tensor *const *)npz->tensors, npz->count, heads, out, err);
    if (s) oq_err_prefix(err, "%s: ", path);
    oq_npz_free(npz);
    return s;
}

oq_status oq_encoder_weights_save(const oq_encoder_weights *w, const char *path, int overwrite,
                                  oq_err *err)
{
    OQ_NEED(err, w);
    OQ_NEED(err, path);
    return oq_npz_write(path, w->n, (const oq_tensor *const *)w->t, 0, overwrite, err);
}
