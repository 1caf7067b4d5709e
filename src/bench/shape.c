/* bench --model: the shapes of a model's inputs at each point of a sweep over named
 * dimensions (--inputs, --shape, --dim, --sweep), checked before anything runs. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench-impl.h"
#include "npz/npz-impl.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

/* ---- parsing --dim, --sweep and --shape ------------------------------------------- */

static int valid_name(const char *s)
{
    if (!*s || isdigit((unsigned char)*s) || *s == '-') return 0;
    for (; *s; s++)
        if (*s == ',' || *s == '=' || isspace((unsigned char)*s)) return 0;
    return 1;
}

/* A whole number >= 0, or -1 when `s` is not one. */
static int64_t size_value(const char *s)
{
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    return *end || errno ? -1 : (int64_t)v;
}

/* "NAME=V1,V2,...": the name copied into `name`, the comma list into buf for strtok_r (a list
 * longer than buf is an error, not silently cut). `what` opens the message, the library's words
 * with the quote before the text ("input shape '"), worded as a format is; `values` is what the
 * option takes after the '=' ("V1,V2,...", "V"). */
static oq_status split_list(const char *text, const char *what, const char *values, char *name, char *buf, size_t n,
                            oq_err *err)
{
    const char *eq = text ? strchr(text, '=') : NULL;
    size_t len = eq ? (size_t)(eq - text) : 0;
    char said[64];
    what = oq_terms(what, said, sizeof said);
    if (!eq || !len || len >= OQ_BENCH_NAME_MAX)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s%s': want NAME=%s", what, text ? text : "", values);
    memcpy(name, text, len);
    name[len] = '\0';
    if ((size_t)snprintf(buf, n, "%s", eq + 1) >= n)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s%.40s...': the list is longer than %zu characters", what,
                          text, n - 1);
    return OQ_OK;
}

static oq_status dim_parse(const char *text, const char *values, oq_bench_dim *out, oq_err *err)
{
    memset(out, 0, sizeof *out);
    char buf[1024];
    oq_status st = split_list(text, "dimension '", values, out->name, buf, sizeof buf, err);
    if (st) return st;
    if (!valid_name(out->name))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': '%s' is not a name", text, out->name);
    char *rest = *buf ? buf : NULL; /* "x=": no item (a scalar's shape) */
    for (char *tok; (tok = strsep(&rest, ","));) {
        if (!*tok) return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': item %zu is empty", text, out->n_values + 1);
        int64_t v = size_value(tok);
        if (v == 0) /* nothing would be computed, and the row would say ok */
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': size 0: want >= 1", text);
        if (v < 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': '%s' is not a size (a whole number >= 1)",
                              text, tok);
        for (size_t i = 0; i < out->n_values; i++)
            if (out->values[i] == v) /* two rows of one point: plot and report refuse the summary */
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': %lld is listed twice (items %zu and %zu)",
                                  text, (long long)v, i + 1, out->n_values + 1);
        if (out->n_values == OQ_BENCH_MAX_VALUES)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': more than %d values", text,
                              OQ_BENCH_MAX_VALUES);
        out->values[out->n_values++] = v;
    }
    if (!out->n_values) return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': no value", text);
    return OQ_OK;
}

oq_status oq_bench_dim_parse(const char *text, oq_bench_dim *out, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, out);
    return dim_parse(text, "V1,V2,...", out, err);
}

oq_status oq_bench_dim_parse_one(const char *text, oq_bench_dim *out, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, out);
    oq_status st = dim_parse(text, "V", out, err);
    if (!st && out->n_values != 1)
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s': one value (a sweep is opts.sweeps)", text);
    return st;
}

oq_status oq_bench_shape_parse(const char *text, oq_bench_shape *out, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    char buf[1024];
    oq_status st = split_list(text, "input shape '", "d0,d1,...", out->input, buf, sizeof buf, err);
    if (st) return st;
    char *rest = *buf ? buf : NULL; /* "x=": no item (a scalar's shape) */
    for (char *tok; (tok = strsep(&rest, ","));) {
        if (!*tok) return oq_err_set(err, OQ_ERR_INVALID_ARG, "input shape '%s': item %d is empty", text, out->ndim + 1);
        if (out->ndim == OQ_MAX_DIMS)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "input shape '%s': more than %d dimensions", text, OQ_MAX_DIMS);
        int64_t v = size_value(tok);
        if (v == 0) /* nothing would be computed, and the row would say ok */
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "input shape '%s': size 0 (axis %d): want >= 1", text, out->ndim);
        if (v < 0 && (!valid_name(tok) || strlen(tok) >= OQ_BENCH_NAME_MAX))
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "input shape '%s': '%s' is neither a size nor a dimension name", text, tok);
        if (v < 0) snprintf(out->dim_names[out->ndim], OQ_BENCH_NAME_MAX, "%s", tok);
        out->dims[out->ndim++] = v;
    }
    return OQ_OK;
}

/* ---- the values of named dimensions at a point --------------------------------------- */

typedef struct dim_env {
    size_t n;
    oq_bench_dimval v[OQ_BENCH_MAX_DIMS];
    char from[OQ_BENCH_MAX_DIMS][OQ_BENCH_NAME_MAX + 32]; /* who set it, for messages */
} dim_env;

static int env_find(const dim_env *e, const char *name)
{
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->v[i].name, name)) return (int)i;
    return -1;
}

/* Bind `name` to `value`: a second binding must agree. */
static oq_status env_bind(dim_env *e, const char *name, int64_t value, const char *from, oq_err *err)
{
    int i = env_find(e, name);
    if (i >= 0) {
        if (e->v[i].value == value) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "dimension '%s' is %lld from %s but %lld from %s", name,
                          (long long)e->v[i].value, e->from[i], (long long)value, from);
    }
    if (e->n == OQ_BENCH_MAX_DIMS)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "more than %d named dimensions", OQ_BENCH_MAX_DIMS);
    snprintf(e->v[e->n].name, sizeof e->v[e->n].name, "%s", name);
    e->v[e->n].value = value;
    snprintf(e->from[e->n], sizeof e->from[e->n], "%s", from);
    e->n++;
    return OQ_OK;
}

/* A model dimension is named when it is neither a number ("-3", a size the model got wrong,
 * is given by --shape) nor unknown ("?"). Names --dim cannot spell (torch.export's "s0 + 1",
 * "Min(s0, 1024)") are named too: --shape binds them, and the row's dims keep them. */
static int dim_is_named(const char *d)
{
    if (!d || !*d || !strcmp(d, "?")) return 0;
    char *end;
    errno = 0;
    (void)strtoll(d, &end, 10);
    return *end != '\0';
}

size_t oq_bench_point_count(const oq_bench_opts *o)
{
    size_t n = 1;
    for (size_t i = 0; i < o->n_sweeps; i++) n *= o->sweeps[i].n_values;
    return n;
}

/* --dim values and the sweep's values at point p (the first sweep varies slowest). */
static oq_status env_start(const oq_bench_opts *o, size_t p, dim_env *e, oq_err *err)
{
    memset(e, 0, sizeof *e);
    oq_status st = OQ_OK;
    char dims[64], sweeps[64]; /* who set a dimension, as messages name it: worded as a format is */
    const char *by_dims = oq_terms("opts.dims", dims, sizeof dims), *by_sweeps = oq_terms("opts.sweeps", sweeps, sizeof sweeps);
    for (size_t i = 0; !st && i < o->n_dims; i++) {
        if (o->dims[i].n_values != 1)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.dims %s: one value (a sweep is opts.sweeps)", o->dims[i].name);
        if (env_find(e, o->dims[i].name) >= 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.dims %s given twice", o->dims[i].name);
        st = env_bind(e, o->dims[i].name, o->dims[i].values[0], by_dims, err);
    }
    size_t stride = oq_bench_point_count(o);
    for (size_t i = 0; !st && i < o->n_sweeps; i++) {
        const oq_bench_dim *s = &o->sweeps[i];
        if (env_find(e, s->name) >= 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.sweeps %s: the dimension is also given by %s", s->name,
                              e->from[env_find(e, s->name)]);
        stride /= s->n_values;
        st = env_bind(e, s->name, s->values[(p / stride) % s->n_values], by_sweeps, err);
    }
    return st;
}

/* ---- the inputs ------------------------------------------------------------------- */

static void dims_text(const oq_io_info *in, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int32_t a = 0; a < in->rank && used < n; a++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", a ? "," : "", in->dims[a]);
    if (used < n) snprintf(buf + used, n - used, "]");
}

/* A concrete shape for input `in` (from the npz or --shape): rank and fixed sizes must
 * agree with the model, and each named model dimension takes the size found there. */
static oq_status bind_shape(const oq_io_info *in, int32_t ndim, const int64_t *shape, const char *from,
                            dim_env *e, oq_err *err)
{
    char decl[512];
    dims_text(in, decl, sizeof decl);
    if (in->rank >= 0 && in->rank != ndim)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %d dimensions, the model's input '%s' has %d %s", from,
                          ndim, in->name, in->rank, decl);
    for (int32_t a = 0; in->rank >= 0 && a < ndim; a++) {
        int64_t fixed = size_value(in->dims[a]);
        if (fixed >= 0 && fixed != shape[a])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: axis %d is %lld, the model's input '%s' has %lld there %s",
                              from, a, (long long)shape[a], in->name, (long long)fixed, decl);
        if (dim_is_named(in->dims[a])) {
            oq_status st = env_bind(e, in->dims[a], shape[a], from, err);
            if (st) return st;
        }
    }
    return OQ_OK;
}

static const oq_bench_shape *shape_for(const oq_bench_opts *o, const char *input)
{
    for (size_t i = 0; i < o->n_input_shapes; i++)
        if (!strcmp(o->input_shapes[i].input, input)) return &o->input_shapes[i];
    return NULL;
}

/* The sizes of a --shape, its named entries looked up in --dim and the sweep. */
static oq_status shape_sizes(const oq_bench_shape *s, const dim_env *e, int64_t *out, oq_err *err)
{
    for (int32_t a = 0; a < s->ndim; a++) {
        out[a] = s->dims[a];
        if (out[a] >= 0) continue;
        int i = env_find(e, s->dim_names[a]);
        if (i < 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "opts.input_shapes %s: axis %d names dimension '%s', which has no value: give opts.dims "
                              "%s=V or opts.sweeps %s=V1,V2,...",
                              s->input, a, s->dim_names[a], s->dim_names[a], s->dim_names[a]);
        out[a] = e->v[i].value;
    }
    return OQ_OK;
}

/* The mask gets a prefix per row; another mask-like input, and a mask not of rank 2, all ones. */
static const char *fill_for(const oq_bench_input_info *in, size_t i, const oq_bench_mask *mk)
{
    if (mk && (int)i == mk->index) return in->ndim == 2 ? "mask" : "ones";
    if (mk && mk->ones && mk->ones[i]) return "ones";
    if (in->dtype == OQ_DTYPE_BOOL) return "ones";
    return oq_dtype_is_float(in->dtype) ? "uniform" : "integers";
}

/* Given inputs (npz) and --shape first: they bind the named dimensions. */
static oq_status bind_given(const oq_io_info *ins, size_t n_ins, const oq_npz *npz, const oq_bench_opts *o,
                            dim_env *e, oq_bench_input_info *out, oq_err *err)
{
    for (size_t i = 0; i < n_ins; i++) {
        oq_bench_input_info *r = &out[i];
        const oq_tensor *t = npz ? oq_npz_get(npz, ins[i].name) : NULL;
        const oq_bench_shape *s = shape_for(o, ins[i].name);
        char from[OQ_BENCH_NAME_MAX + 1200], forms[160], said[64];
        oq_status st = OQ_OK;
        if (t && t->dtype != (oq_dtype)ins[i].elem_type)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: tensor '%s' is %s, the model's input wants %s (%s)",
                              npz->path, t->name, oq_dtype_name(t->dtype), oq_dtype_name((oq_dtype)ins[i].elem_type),
                              oq_npz_accepted((oq_dtype)ins[i].elem_type, forms, sizeof forms));
        if (t) {
            snprintf(from, sizeof from, "%s: tensor '%s'", npz->path, t->name);
            r->ndim = t->ndim;
            memcpy(r->shape, t->shape, sizeof r->shape);
            r->source = r->fill = "npz";
        } else if (s) {
            snprintf(from, sizeof from, "%s %s", oq_terms("opts.input_shapes", said, sizeof said), s->input);
            r->ndim = s->ndim;
            st = shape_sizes(s, e, r->shape, err);
            r->source = "shape";
        } else {
            continue;
        }
        if (!st) st = bind_shape(&ins[i], r->ndim, r->shape, from, e, err);
        if (st) return st;
    }
    return OQ_OK;
}

/* Inputs neither in the npz nor in --shape: the model's shape, every dimension known. */
static oq_status fill_generated(const oq_io_info *in, const dim_env *e, oq_bench_input_info *r, oq_err *err)
{
    char decl[512];
    dims_text(in, decl, sizeof decl);
    if (in->rank < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "input '%s': the model gives no shape: give opts.input_shapes %s=d0,d1,...",
                          in->name, in->name);
    r->ndim = in->rank;
    r->source = "generated";
    for (int32_t a = 0; a < in->rank; a++) {
        r->shape[a] = size_value(in->dims[a]);
        if (r->shape[a] >= 0) continue;
        int i = dim_is_named(in->dims[a]) ? env_find(e, in->dims[a]) : -1;
        if (i >= 0) {
            r->shape[a] = e->v[i].value;
        } else if (dim_is_named(in->dims[a])) {
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "input '%s' %s, axis %d ('%s'): no value: give opts.dims %s=V, opts.sweeps %s=V1,V2,... "
                              "or opts.input_shapes %s=...",
                              in->name, decl, a, in->dims[a], in->dims[a], in->dims[a], in->name);
        } else {
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "input '%s' %s, axis %d: unnamed dimension: give opts.input_shapes %s=d0,d1,...", in->name,
                              decl, a, in->name);
        }
    }
    return OQ_OK;
}

static oq_status check_names(const oq_io_info *ins, size_t n_ins, const oq_npz *npz, const oq_bench_opts *o,
                             oq_err *err)
{
    for (size_t i = 0; i < o->n_input_shapes; i++) {
        const char *name = o->input_shapes[i].input;
        size_t k = 0;
        while (k < n_ins && strcmp(ins[k].name, name)) k++;
        if (k == n_ins) {
            char list[512] = "";
            for (size_t j = 0; j < n_ins; j++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "", ins[j].name);
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.input_shapes %s: the model has no input '%s' (its inputs: %s)",
                              name, name, list);
        }
        if (shape_for(o, name) != &o->input_shapes[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.input_shapes %s given twice", name);
        if (npz && oq_npz_get(npz, name))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.input_shapes %s: the input is in %s, used as it is", name,
                              npz->path);
    }
    return OQ_OK;
}

/* Every --dim and --sweep name must be used: by a dimension of an input the run generates or a
 * --shape entry. An npz tensor's shape gives its own dimensions: one that only such tensors
 * have would be ignored (or contradict the file). */
static oq_status check_used(const oq_io_info *ins, size_t n_ins, const oq_npz *npz, const oq_bench_opts *o,
                            const char *name, const char *opt, oq_err *err)
{
    const char *given = NULL; /* an npz tensor that has the dimension */
    for (size_t i = 0; i < n_ins; i++)
        for (int32_t a = 0; a < ins[i].rank; a++) {
            if (strcmp(ins[i].dims[a], name)) continue;
            if (!npz || !oq_npz_get(npz, ins[i].name)) return OQ_OK;
            if (!given) given = ins[i].name;
        }
    for (size_t i = 0; i < o->n_input_shapes; i++)
        for (int32_t a = 0; a < o->input_shapes[i].ndim; a++)
            if (!strcmp(o->input_shapes[i].dim_names[a], name)) return OQ_OK;
    if (given)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s %s: every input with dimension '%s' comes from %s (such as "
                          "'%s'), whose shape gives it: no generated input takes it, so it would be ignored", opt,
                          name, name, npz->path, given);
    char list[512] = "";
    for (size_t i = 0; i < n_ins; i++)
        for (int32_t a = 0; a < ins[i].rank; a++)
            if (dim_is_named(ins[i].dims[a]) && !strstr(list, ins[i].dims[a]))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "", ins[i].dims[a]);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s %s: no model dimension and no opts.input_shapes entry is named '%s' "
                      "(the model's named dimensions: %s)", opt, name, name, *list ? list : "none");
}

/* Inputs that hold no element at all (a size 0 the model fixes, or an empty npz tensor):
 * nothing would be computed, yet the row would say ok, as with --dim N=0. One empty input
 * beside others is fine (an empty past key/value). An input whose byte count overflows
 * (--dim seq=2^62) is named here, not left to a failed row. */
static oq_status check_sizes(const oq_bench_point *p, const oq_npz *npz, oq_err *err)
{
    const oq_bench_input_info *first = NULL;
    int32_t axis = 0;
    int full = 0;
    for (size_t i = 0; i < p->n_inputs; i++) {
        const oq_bench_input_info *in = &p->inputs[i];
        uint64_t bytes = oq_dtype_size(in->dtype);
        int32_t zero = -1;
        for (int32_t a = 0; a < in->ndim; a++) {
            if (!in->shape[a] && zero < 0) zero = a;
            if (in->shape[a] && __builtin_mul_overflow(bytes, (uint64_t)in->shape[a], &bytes))
                bytes = UINT64_MAX;
        }
        if (bytes > (uint64_t)INT64_MAX) {
            char dims[OQ_MAX_DIMS * 21 + 3] = "[";
            for (int32_t a = 0; a < in->ndim; a++)
                snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", a ? "," : "",
                         (long long)in->shape[a]);
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "input '%s' %s] %s: its size overflows 2^63 bytes", in->name,
                              dims, oq_dtype_name(in->dtype));
        }
        if (zero < 0) full = 1;
        else if (!first) first = in, axis = zero;
    }
    if (full || !first) return OQ_OK; /* no inputs: the model computes from its constants */
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "input '%s' (%s%s) is empty (axis %d is 0), as every input: nothing would be computed",
                      first->name, strcmp(first->source, "npz") ? "the model's shape" : "from ",
                      strcmp(first->source, "npz") ? "" : npz->path, axis);
}

/* An input the sweep must generate needs a type it can fill (not string, complex...). */
static oq_status check_generatable(const oq_io_info *in, const oq_bench_input_info *r, oq_err *err)
{
    if (!strcmp(r->source, "npz") || oq_dtype_size(r->dtype)) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "input '%s' is %s: bench cannot generate it, nor read it from an npz",
                      in->name, oq_elem_type_name(in->elem_type));
}

oq_status oq_bench_resolve_point(const oq_io_info *ins, size_t n_ins, const oq_npz *npz, const oq_bench_opts *o,
                                 const oq_bench_mask *mk, size_t p, oq_bench_point *out, oq_err *err)
{
    memset(out, 0, sizeof *out);
    out->mask = -1;
    oq_status st = check_names(ins, n_ins, npz, o, err);
    char dims[64], sweeps[64]; /* the option a message names: worded as a format is */
    for (size_t i = 0; !st && i < o->n_dims; i++)
        st = check_used(ins, n_ins, npz, o, o->dims[i].name, oq_terms("opts.dims", dims, sizeof dims), err);
    for (size_t i = 0; !st && i < o->n_sweeps; i++)
        st = check_used(ins, n_ins, npz, o, o->sweeps[i].name, oq_terms("opts.sweeps", sweeps, sizeof sweeps), err);
    dim_env e;
    if (!st) st = env_start(o, p, &e, err);
    out->inputs = st ? NULL : calloc(n_ins ? n_ins : 1, sizeof *out->inputs);
    if (!st && !out->inputs) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < n_ins; i++) {
        oq_bench_input_info *r = &out->inputs[i];
        snprintf(r->name, sizeof r->name, "%s", ins[i].name);
        r->dtype = (oq_dtype)ins[i].elem_type;
    }
    if (!st) st = bind_given(ins, n_ins, npz, o, &e, out->inputs, err);
    for (size_t i = 0; !st && i < n_ins; i++) {
        oq_bench_input_info *r = &out->inputs[i];
        if (!r->source) st = fill_generated(&ins[i], &e, r, err);
        if (!st) st = check_generatable(&ins[i], r, err);
        if (!st && strcmp(r->source, "npz")) r->fill = fill_for(r, i, mk);
        if (!st && mk && (int)i == mk->index && r->ndim == 2) out->mask = (int)i;
    }
    out->n_inputs = n_ins;
    if (!st) st = check_sizes(out, npz, err);
    if (st) {
        oq_bench_point_clear(out);
        return st;
    }
    out->n_dims = e.n;
    memcpy(out->dims, e.v, e.n * sizeof *e.v);
    return OQ_OK;
}

void oq_bench_point_clear(oq_bench_point *p)
{
    free(p->inputs);
    memset(p, 0, sizeof *p);
}

/* ---- the expected outputs --------------------------------------------------------- */

/* The size the model gives axis a of `io` at point p: a number, or a named dimension the
 * point bound; -1 where the model leaves it open. */
static int64_t model_axis(const oq_io_info *io, int32_t a, const oq_bench_point *p)
{
    int64_t fixed = size_value(io->dims[a]);
    if (fixed >= 0 || !dim_is_named(io->dims[a])) return fixed;
    for (size_t i = 0; i < p->n_dims; i++)
        if (!strcmp(p->dims[i].name, io->dims[a])) return p->dims[i].value;
    return -1;
}

/* "[2,24,3]": a tensor's shape; "[2,24,?]": the model's for `io` at p (open axes as named). */
static void shape_text(const oq_io_info *io, const oq_bench_point *p, const oq_tensor *t, char *buf, size_t n)
{
    int32_t rank = io ? io->rank : t->ndim;
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int32_t a = 0; a < rank && used < n; a++) {
        int64_t v = io ? model_axis(io, a, p) : t->shape[a];
        if (v >= 0) used += (size_t)snprintf(buf + used, n - used, "%s%lld", a ? "," : "", (long long)v);
        else used += (size_t)snprintf(buf + used, n - used, "%s%s", a ? "," : "", io->dims[a]);
    }
    if (used < n) snprintf(buf + used, n - used, "]");
}

oq_status oq_bench_check_expected_shape(const oq_io_info *out, const oq_bench_point *p, const oq_tensor *t,
                                        const char *path, oq_err *err)
{
    if (out->rank < 0) return OQ_OK;
    int differs = t->ndim != out->rank;
    for (int32_t a = 0; !differs && a < t->ndim; a++) {
        int64_t v = model_axis(out, a, p);
        differs = v >= 0 && v != t->shape[a];
    }
    if (!differs) return OQ_OK;
    char got[256], want[256];
    shape_text(NULL, p, t, got, sizeof got);
    shape_text(out, p, NULL, want, sizeof want);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "%s: member '%s' is %s, but the model's output '%s' is %s for these inputs", path, out->name,
                      got, out->name, want);
}
