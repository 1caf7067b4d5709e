/* Tolerance presets, their parsing, and per-output overrides.
 *
 * Why these presets (u = unit roundoff of the compute precision; eps = 2u):
 *
 * fp32 (u = 6.0e-8): attention accumulates dot products over head_dim and
 *   weighted sums over the whole sequence (L up to ~1e4 elements per event).
 *   Rounding errors of a sum of n terms grow like sqrt(n) * u in practice, so
 *   about 6e-6 at L = 1e4, and a model stacks several such layers (with
 *   LayerNorm, which rescales errors): a few 1e-5. rtol 1e-4 keeps a margin over
 *   that and stays below fp16's u (4.9e-4), so a computation that silently went
 *   through half precision cannot pass as fp32. atol 1e-5 covers outputs near
 *   zero, whose error is set by the O(1) intermediates, not by the output.
 *
 * fp16 (u = 4.9e-4, eps 9.8e-4): every fp16 input, intermediate and output is
 *   rounded at least once; attention kernels accumulate in fp32 but round the
 *   probabilities and outputs to fp16, so each layer adds a few u. rtol 1e-2
 *   (~10 eps) allows a handful of roundings per layer over a few layers. atol
 *   4e-3 (four eps at the O(1) scale of normalized intermediates) judges the
 *   outputs near zero, whose error those intermediates set: the largest of
 *   N such errors grows with N, slowly. One eps (1e-3) failed correct runs on one
 *   element in millions (the demo encoder at 20,000 events: 1.18e-3), two eps
 *   (2e-3) on one in 2.2e8 (the demo encoder at 10^6 events on an H200: 2.20e-3,
 *   14 times the rms error, where CUDA's flash and efficient kernels and ORT's
 *   CPU float16 path, three implementations, all erred on that element by
 *   2.20-2.35e-3), while a bf16 computation (8 times fp16's error: its largest
 *   over a batch ~1e-2) or a wrong mask fails it by far.
 *
 * bf16 (u = 3.9e-3, eps 7.8e-3): the fp16 argument with bf16's 8-bit
 *   mantissa: rtol 8e-2 (~10 eps), atol 3.2e-2 (four eps).
 *
 * fp64 (u = 1.1e-16): two float64 implementations differ only in summation
 *   order, ~sqrt(L) * u * depth ~ 1e-13. rtol 1e-9 / atol 1e-12 leave room for
 *   ill-conditioned rows (large logits, near-constant LayerNorm inputs) while
 *   anything that went through fp32 (u = 6e-8) fails.
 *
 * tf32 (inputs of every matrix product rounded to a 10-bit mantissa, u = 4.9e-4,
 *   fp32 accumulation): unlike the fp16 configurations, where only the attention is
 *   reduced, every MatMul of the model is (embedding, Q/K/V and output projections,
 *   both feed-forward layers, the heads: ~10 products between input and output in a
 *   2-block encoder), and their errors add on O(1) activations: ~10 u = 5e-3 absolute.
 *   rtol as fp16. Seen on an H200: max |d| 2.3e-3 on the demo encoder.
 *
 * onnx (rtol 1e-3, atol 1e-7): the values the ONNX backend node tests use, for
 *   conformance runs only.
 */
#include "ortqual/compare.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "core/core-impl.h"
#include "status/args-impl.h"

static const struct {
    const char *name;
    oq_tolerance tol;
} presets[] = {
    {"fp64", {1e-9, 1e-12}},
    {"fp32", {1e-4, 1e-5}},
    {"fp16", {1e-2, 4e-3}},
    {"bf16", {8e-2, 3.2e-2}},
    {"onnx", {1e-3, 1e-7}},
    {"tf32", {1e-2, 5e-3}},
};

oq_tolerance oq_tolerance_for_dtype(oq_dtype precision)
{
    switch (precision) {
    case OQ_DTYPE_FLOAT64: return presets[0].tol;
    case OQ_DTYPE_FLOAT16: return presets[2].tol;
    case OQ_DTYPE_BFLOAT16: return presets[3].tol;
    default: return presets[1].tol;
    }
}

oq_status oq_tolerance_preset(const char *name, oq_tolerance *out, oq_err *err)
{
    OQ_NEED(err, name);
    OQ_NEED(err, out);
    for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(name, presets[i].name) == 0) {
            *out = presets[i].tol;
            return OQ_OK;
        }
    oq_dtype t = name ? oq_dtype_parse(name) : OQ_DTYPE_UNDEFINED;
    if (oq_dtype_is_float(t)) {
        *out = oq_tolerance_for_dtype(t);
        return OQ_OK;
    }
    /* the list from the table, so a preset added there is offered here too */
    char known[128] = "";
    for (size_t i = 0, used = 0; i < sizeof presets / sizeof presets[0] && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", presets[i].name);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "unknown tolerance preset '%s' (known: %s)", name, known);
}

oq_status oq_tolerance_check_value(const char *key, double v, oq_err *err)
{
    OQ_NEED(err, key);
    int rtol = !strcmp(key, "rtol");
    if (!rtol && strcmp(key, "atol"))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance key '%s': want rtol or atol", key);
    char t[32]; /* the value as given (%g printed 0.9999999 as 1, "1 is 1 or more") */
    oq_real_str(v, 6, t, sizeof t);
    if (!isfinite(v) || v < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s %s is not a finite number >= 0", key, t);
    /* a tolerance that cannot fail judges nothing: its green would be a false one */
    if (rtol && v >= 1)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "rtol %s is 1 or more: an output of zeros would pass against "
                          "any reference (a check that cannot tell a result from nothing)", t);
    if (!rtol && v >= FLT_MAX)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "atol %s is float32's largest value (3.4e38) or more: only NaN "
                          "and Inf could fail it (a check that cannot fail)", t);
    return OQ_OK;
}

/* "rtol=1e-3,atol=1e-4" into *tol; `spec` is only for messages. */
static oq_status parse_pairs(const char *body, const char *spec, oq_tolerance *tol, oq_err *err)
{
    oq_tolerance t = *tol;
    const char *p = body;
    const double *seen[2] = {NULL, NULL};
    while (1) {
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        if (!eq)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "tolerance '%s': '%.*s' is not KEY=VALUE (keys: rtol, atol)", spec,
                              (int)n, p);
        size_t klen = (size_t)(eq - p);
        double *dst = klen == 4 && !strncmp(p, "rtol", 4)   ? &t.rtol
                      : klen == 4 && !strncmp(p, "atol", 4) ? &t.atol
                                                            : NULL;
        if (!dst)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "tolerance '%s': unknown key '%.*s' (keys: rtol, atol)", spec, (int)klen, p);
        if (seen[dst == &t.atol]) /* which of two values was meant cannot be known */
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance '%s': %.*s given twice", spec, (int)klen, p);
        seen[dst == &t.atol] = dst;
        char num[64];
        size_t vlen = n - klen - 1;
        if (vlen == 0 || vlen >= sizeof num)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance '%s': %.*s needs a number", spec,
                              (int)klen, p);
        memcpy(num, eq + 1, vlen);
        num[vlen] = '\0';
        double v = 0;
        const char *end = oq_text_real(num, &v);
        if (!end || *end || !isfinite(v) || v < 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "tolerance '%s': %.*s value '%s' is not a finite number >= 0", spec,
                              (int)klen, p, num);
        oq_status st = oq_tolerance_check_value(dst == &t.rtol ? "rtol" : "atol", v, err);
        if (st) {
            oq_err_prefix(err, "tolerance '%s': ", spec);
            return st;
        }
        *dst = v;
        if (!p[n]) break;
        p += n + 1;
    }
    *tol = t;
    return OQ_OK;
}

/* Whether the space at s[i] (of n bytes) is padding: at either end, or beside a separator. */
static int padding_at(const char *s, size_t i, size_t n)
{
    size_t a = i, b = i;
    while (a > 0 && s[a - 1] == ' ') a--;
    while (b < n && s[b] == ' ') b++;
    return a == 0 || b == n || strchr(";:,=", s[a - 1]) || strchr(";:,=", s[b]);
}

/* `spec` without the spaces around its items, names, keys and values ("fp16; out_reg : fp32"
 * is "fp16;out_reg:fp32"), malloc'ed; NULL when out of memory. Kept, a space there named an
 * output " out_reg" that none has: its override was silently never used. */
static char *unpadded(const char *spec)
{
    size_t n = strlen(spec), w = 0;
    char *out = malloc(n + 1);
    for (size_t i = 0; out && i < n; i++)
        if (spec[i] != ' ' || !padding_at(spec, i, n)) out[w++] = spec[i];
    if (out) out[w] = '\0';
    return out;
}

static oq_status parse_spec(const char *spec, char *name, size_t cap, oq_tolerance *tol, oq_err *err)
{
    const char *colon = strrchr(spec, ':');
    const char *body = colon ? colon + 1 : spec;
    size_t nlen = colon ? (size_t)(colon - spec) : 0;
    if (colon && nlen == 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance '%s': empty output name before ':'", spec);
    if (nlen >= cap)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance '%s': output name longer than %zu bytes",
                          spec, cap - 1);
    if (!*body)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "tolerance '%s': nothing after the output name (want a preset or rtol=X,atol=Y)",
                          spec);
    oq_status st;
    if (strchr(body, '=')) {
        st = parse_pairs(body, spec, tol, err);
    } else if ((st = oq_tolerance_preset(body, tol, err))) {
        oq_err_prefix(err, "tolerance '%s': ", spec);
    }
    if (st) return st;
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
    return OQ_OK;
}

oq_status oq_tolerance_parse(const char *spec, char *name, size_t cap, oq_tolerance *tol, oq_err *err)
{
    OQ_NEED(err, spec);
    OQ_NEED(err, name);
    OQ_NEED(err, tol);
    if (!cap) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: cap is 0 (no room for the name)", __func__);
    char *s = unpadded(spec);
    if (!s) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = parse_spec(s, name, cap, tol, err);
    free(s);
    return st;
}

/* A target (an output, or the default) and the spec that set it: what that spec said by itself
 * (`said`), to tell a second spec for it that says the same from one that would change it. */
struct override {
    char *name;
    oq_tolerance tol;
    oq_tolerance said;
    char *spec;
};

struct oq_tolerances {
    oq_tolerance base;
    struct override base_set; /* name unused; spec NULL until a spec sets the default */
    size_t n;
    struct override *items;
};

oq_status oq_tolerances_create(oq_tolerance base, oq_tolerances **out, oq_err *err)
{
    OQ_NEED(err, out);
    if (!isfinite(base.rtol) || !isfinite(base.atol) || base.rtol < 0 || base.atol < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance rtol=%g atol=%g: both must be finite and >= 0",
                          base.rtol, base.atol);
    if (!(*out = calloc(1, sizeof **out))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    (*out)->base = base;
    return OQ_OK;
}

void oq_tolerances_free(oq_tolerances *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->items[i].name);
        free(t->items[i].spec);
    }
    free(t->base_set.spec);
    free(t->items);
    free(t);
}

static struct override *find_override(const oq_tolerances *t, const char *name)
{
    for (size_t i = 0; name && i < t->n; i++)
        if (strcmp(t->items[i].name, name) == 0) return &t->items[i];
    return NULL;
}

static oq_status set_override(oq_tolerances *t, const char *name, oq_tolerance tol, struct override **set, oq_err *err)
{
    struct override *item = OQ_PUSH(t->items, t->n);
    if (!item || !(item->name = strdup(name))) {
        t->n -= item != NULL; /* the new slot, unused */
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    item->tol = tol;
    *set = item;
    return OQ_OK;
}

/* What a spec says by itself: a key it does not give stays -1 ("rtol=1" is not "rtol=1,atol=0"). */
static oq_tolerance said_by(const char *spec)
{
    oq_tolerance said = {-1, -1};
    char name[256];
    oq_tolerance_parse(spec, name, sizeof name, &said, NULL);
    return said;
}

/* A second spec for a target already set: the same values again are taken once; others would
 * silently loosen or tighten the first (as the tool refuses --tolerance twice for one output). */
static oq_status set_before(const struct override *o, const char *name, const char *spec, oq_err *err)
{
    oq_tolerance said = said_by(spec);
    const char *first = o->spec ? o->spec : "";
    if (said.rtol == o->said.rtol && said.atol == o->said.atol) return OQ_OK;
    if (!*name)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance: the default given twice ('%s' and '%s')", first,
                          spec);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance: output '%s' given twice ('%s' and '%s')", name, first,
                      spec);
}

/* One spec, already cut out of the ';' list. */
static oq_status add_one(oq_tolerances *t, const char *spec, oq_err *err)
{
    char name[256];
    /* Peek at the output name to start from its current tolerance. */
    const char *colon = strrchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : 0;
    oq_tolerance tol = t->base;
    if (nlen && nlen < sizeof name) {
        memcpy(name, spec, nlen);
        name[nlen] = '\0';
        tol = oq_tolerances_get(t, name);
    }
    oq_status st = oq_tolerance_parse(spec, name, sizeof name, &tol, err);
    if (st) return st;
    struct override *set = name[0] ? find_override(t, name) : t->base_set.spec ? &t->base_set : NULL;
    if (set) return set_before(set, name, spec, err);
    if (!name[0]) {
        t->base = tol;
        set = &t->base_set;
    } else if ((st = set_override(t, name, tol, &set, err)))
        return st;
    set->said = said_by(spec);
    return (set->spec = strdup(spec)) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

oq_status oq_tolerances_add(oq_tolerances *t, const char *specs, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, specs);
    char *copy = unpadded(specs);
    if (!copy) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    char *save = NULL;
    int seen = 0;
    for (char *s = strtok_r(copy, ";", &save); s && !st; s = strtok_r(NULL, ";", &save), seen++)
        st = add_one(t, s, err);
    free(copy);
    if (!st && !seen)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance '%s': no spec given", specs);
    return st;
}

oq_tolerance oq_tolerances_get(const oq_tolerances *t, const char *output)
{
    if (!t) return (oq_tolerance){0};
    const struct override *o = find_override(t, output);
    return o ? o->tol : t->base;
}

static int has_name(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && !strcmp(names[i], name)) return 1;
    return 0;
}

oq_status oq_tolerances_check_outputs(const oq_tolerances *t, const char *const *outputs, size_t n, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED_N(err, n, outputs);
    for (size_t i = 0; i < t->n; i++) {
        if (has_name(outputs, n, t->items[i].name)) continue;
        char list[512] = "";
        size_t used = 0;
        for (size_t k = 0; k < n && used < sizeof list; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "", outputs[k]);
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "tolerance for output '%s': the model has no such output (%s%s)",
                          t->items[i].name, n ? "its outputs: " : "it has no outputs", list);
    }
    return OQ_OK;
}

/* An override of an integer or bool output, which is compared exactly: it would be ignored. */
static oq_status check_exact(const oq_tolerances *t, const char *const *outputs, const int32_t *types, size_t n,
                             oq_err *err)
{
    for (size_t i = 0; i < t->n; i++)
        for (size_t k = 0; k < n; k++)
            if (outputs[k] && !strcmp(outputs[k], t->items[i].name) && types[k] && !oq_dtype_is_float((oq_dtype)types[k]))
                return oq_err_set(err, OQ_ERR_INVALID_ARG,
                                  "tolerance for output '%s': it is %s, compared exactly (every valid element "
                                  "equal), so a tolerance would be ignored",
                                  outputs[k], oq_dtype_name((oq_dtype)types[k]));
    return OQ_OK;
}

oq_status oq_tolerances_check_specs(const char *specs, const char *const *outputs, const int32_t *types, size_t n,
                                    oq_err *err)
{
    if (!specs || !*specs) return OQ_OK;
    oq_tolerances *t;
    oq_status st = oq_tolerances_create(oq_tolerance_for_dtype(OQ_DTYPE_FLOAT32), &t, err);
    if (st) return st;
    st = oq_tolerances_add(t, specs, err);
    if (!st && outputs) st = oq_tolerances_check_outputs(t, outputs, n, err);
    if (!st && outputs && types) st = check_exact(t, outputs, types, n, err);
    oq_tolerances_free(t);
    return st;
}
