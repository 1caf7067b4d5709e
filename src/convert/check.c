/* Every conversion is checked before it is written: the reference (the original,
 * or its lowered form when ORT refuses it) and the converted model run on ORT CPU
 * over the same batches, and every output is compared on the valid elements. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axes/axes-impl.h"
#include "compare/compare-impl.h"
#include "convert/convert-impl.h"
#include "inspect/inputuse-impl.h"
#include "inspect/model-impl.h"
#include "mask/mask-impl.h"
#include "ortqual/events.h"
#include "ortqual/mask.h"
#include "ortqual/refusal.h"
#include "status/terms-impl.h"

enum { MAX_GIVEN = 64 };

/* One batch: the model inputs, the mask's lengths, the expected outputs (or NULL). */
typedef struct batch {
    oq_tensor **in;   /* borrowed from the caller's npz, or owned when generated */
    size_t n_in;
    int owned;
    int64_t *lengths; /* NULL without a mask input */
    const oq_npz *expected;
    const char *label; /* for messages */
} batch;

typedef struct checker {
    cv_ctx *c;
    cv_model *ref;
    const oq_gview *v;  /* of the reference */
    oq_model_info *mi;  /* the reference's inputs and outputs as declared: where the mask's axes are */
    const char *mask;   /* the mask input, or NULL */
    int by_graph;       /* the graph reads the mask in the check's polarity (oq_mask_polarity_held) */
    batch b[MAX_GIVEN + 2]; /* the given ones, and two generated */
    size_t nb;
    oq_tolerances *tol[2];  /* float32's and the attention dtype's, each with the user's over it */
    oq_tolerance preset[2]; /* ... before the user's */
} checker;

/* ---- inputs ----------------------------------------------------------------------- */

/* The polarity the check reads the mask in, held to the original's graph where it tells how it
 * reads the mask (validate's rule, oq_mask_polarity_held): the other would judge the positions
 * the model ignores and pass a wrong value at a real token (QA round 9a, defect 1). A contract's
 * polarity is the model's own word, held by convert.c. */
static oq_status graph_polarity(checker *k, oq_err *err)
{
    if (!k->mask || k->c->contract_input) return OQ_OK;
    unsigned uses;
    char how[8];
    oq_status st = oq_mask_reading_str(k->ref->orig, k->ref->name, k->mi, k->mask, &uses, how, sizeof how, err);
    if (!st)
        st = oq_mask_polarity_held(k->ref->orig, k->ref->name, k->mi, k->mask, uses, k->c->polarity,
                                   k->c->o->mask_polarity_given, &k->by_graph, err);
    return st;
}

static const Onnx__TypeProto__Tensor *input_type(const Onnx__ValueInfoProto *vi)
{
    return vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? vi->type->tensor_type : NULL;
}

/* The contract's input, else the user's, else the one rank-2 input named like a mask. */
static const char *find_mask(checker *k)
{
    if (k->c->contract_input) return k->c->contract_input;
    if (k->c->o->mask_input) return k->c->o->mask_input;
    const Onnx__GraphProto *g = k->ref->orig->graph;
    const char *found = NULL;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__TypeProto__Tensor *t = input_type(g->input[i]);
        char low[256];
        size_t j = 0;
        for (; g->input[i]->name[j] && j + 1 < sizeof low; j++) low[j] = (char)tolower((unsigned char)g->input[i]->name[j]);
        low[j] = 0;
        if (oq_gview_initializer(k->v, g->input[i]->name) || !t || !t->shape || t->shape->n_dim != 2 || !strstr(low, "mask"))
            continue;
        if (found) return NULL; /* two candidates: no guess */
        found = g->input[i]->name;
    }
    return found;
}

/* Uniform in [-1, 1). */
static double uniform(oq_rng *s)
{
    return (double)(oq_rng_next(s) >> 11) / (double)(1ull << 52) - 1.0;
}

/* The sizes a generated batch gives named dims: the mask's batch and length, any other name one
 * size of its own ("past", "new" and "total" alike). */
typedef struct gen_sizes {
    const char *bsym, *lsym; /* the mask's dim names, or NULL */
    int64_t B, L, other;
} gen_sizes;

static int64_t named_size(const gen_sizes *z, const char *name)
{
    if (z->bsym && !strcmp(name, z->bsym)) return z->B;
    if (z->lsym && !strcmp(name, z->lsym)) return z->L;
    return z->other;
}

/* The size a generated batch gives a dimension. */
static int64_t dim_value(const Onnx__TensorShapeProto__Dimension *d, const gen_sizes *z)
{
    int64_t size = oq_dim_size(d);
    if (size >= 0) return size;
    const char *name = oq_dim_param(d);
    return name ? named_size(z, name) : -1;
}

/* The names of the mask input's [B, L] dims (NULL where it has none). */
static void mask_syms(checker *k, gen_sizes *z)
{
    const Onnx__TypeProto__Tensor *mt = k->mask ? input_type(oq_gview_value_info(k->v, k->mask)) : NULL;
    int two = mt && mt->shape && mt->shape->n_dim == 2;
    z->bsym = two ? oq_dim_param(mt->shape->dim[0]) : NULL;
    z->lsym = two ? oq_dim_param(mt->shape->dim[1]) : NULL;
}

/* An index input's range from the table it gathers from: [0, rows). */
static int64_t gather_rows(checker *k, const char *input)
{
    const Onnx__GraphProto *g = oq_gview_graph(k->v);
    for (size_t i = 0, n = oq_gview_consumer_count(k->v, input); i < n; i++) {
        const Onnx__NodeProto *c = g->node[oq_gview_consumer(k->v, input, i)];
        const Onnx__TensorProto *t = oq_node_is(c, "Gather") && c->n_input == 2 && !strcmp(c->input[1], input)
                                         ? oq_gview_initializer(k->v, c->input[0]) : NULL;
        if (t && t->n_dims >= 1 && oq_node_attr_int(c, "axis", 0) == 0) return t->dims[0];
    }
    return -1;
}

/* The elements between neighbours along `axis` of a C-order shape[0..r). */
static int64_t stride(const int64_t *shape, int32_t r, int32_t axis)
{
    int64_t s = 1;
    for (int32_t d = axis + 1; d < r; d++) s *= shape[d];
    return s;
}

/* Why an input gets no generated values: what the check needs from the caller, as a bad input
 * is (exit 2), not a refused rewrite. A bool input is most often a mask: its reason says which. */
static oq_status no_values(checker *k, oq_dtype dt, const char *name, oq_err *err)
{
    if (dt != OQ_DTYPE_BOOL)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cannot generate values for %s input '%s' (no table it indexes): "
                          "give inputs batches", oq_dtype_name(dt), name);
    if (k->mask)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cannot generate values for bool input '%s' (a second mask beside "
                          "'%s', the one generated batches pad): give inputs batches", name, k->mask);
    const Onnx__GraphProto *g = k->ref->orig->graph;
    size_t n = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__TypeProto__Tensor *t = input_type(g->input[i]);
        n += t && t->elem_type == OQ_DTYPE_BOOL && !oq_gview_initializer(k->v, g->input[i]->name);
    }
    if (n > 1)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cannot generate values for bool input '%s' (generated batches make "
                          "one mask, and the model has %zu bool inputs): give inputs batches", name, n);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "cannot generate values for bool input '%s' (generated batches make "
                      "bool values only for the mask input (mask_input NAME), which this is not): give inputs batches",
                      name);
}

static oq_status gen_input(checker *k, const Onnx__ValueInfoProto *vi, const int64_t *len, int64_t B, int64_t L,
                           int64_t other, oq_rng *rng, oq_tensor **out, oq_err *err)
{
    const Onnx__TypeProto__Tensor *t = input_type(vi);
    gen_sizes z = {NULL, NULL, B, L, other};
    mask_syms(k, &z);
    if (!t || !t->shape || t->shape->n_dim > OQ_MAX_DIMS)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "input '%s' has no tensor shape to generate values for: give inputs batches", vi->name);
    int64_t shape[OQ_MAX_DIMS];
    int32_t r = (int32_t)t->shape->n_dim;
    for (int32_t i = 0; i < r; i++) {
        shape[i] = dim_value(t->shape->dim[i], &z);
        if (shape[i] < 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "input '%s': dimension %d has no size or name: give inputs batches",
                              vi->name, (int)i);
    }
    oq_dtype dt = (oq_dtype)t->elem_type;
    if (k->mask && !strcmp(vi->name, k->mask)) {
        if (r != 2) /* the library's caller may name any input: no [B, L] to make */
            return oq_err_set(err, OQ_ERR_SHAPE, "mask input '%s' is rank %d, not [B, L]", vi->name, (int)r);
        oq_status st = oq_mask_make(len, shape[0], shape[1], dt, out, err);
        int64_t n = !st && k->c->polarity == OQ_MASK_POLARITY_PAD ? oq_tensor_numel(*out) : 0;
        for (int64_t i = 0; i < n; i++) oq_tensor_set_f64(*out, i, 1.0 - oq_tensor_get_f64(*out, i)); /* 1 = padding */
        if (!st) st = oq_tensor_set_name(*out, vi->name, err);
        return st;
    }
    int64_t rows = dt == OQ_DTYPE_INT64 || dt == OQ_DTYPE_INT32 ? gather_rows(k, vi->name) : 0;
    if (!oq_dtype_is_float(dt) && rows <= 0) return no_values(k, dt, vi->name, err);
    oq_status st = oq_tensor_create(out, dt, r, shape, vi->name, err);
    if (st) return st;
    /* inputs with the mask's axes (the rule outputs are judged by) are zero on padding, as
     * exporters' sanitized inputs are; one whose axes the rule cannot tell stays whole */
    oq_axes_rule ar = {k->ref->name, k->mi, k->mask, 0, NULL, B, L};
    oq_mask_axes a;
    int padded = len && oq_input_mask_axes(&ar, vi->name, r, shape, &a, NULL);
    int64_t bstride = padded ? stride(shape, r, a.batch) : 1, sstride = padded ? stride(shape, r, a.seq) : 1;
    for (int64_t i = 0, n = oq_tensor_numel(*out); i < n; i++) {
        double x = rows > 0 ? (double)oq_rng_uniform_int(rng, 0, rows - 1) : uniform(rng) + uniform(rng) + uniform(rng);
        int pad = padded && (i / sstride) % shape[a.seq] >= len[(i / bstride) % shape[a.batch]];
        oq_tensor_set_f64(*out, i, pad ? 0 : x);
    }
    return OQ_OK;
}

/* Whether graph input `vi` declares a dim named `name`. */
static int declares(const Onnx__ValueInfoProto *vi, const char *name)
{
    const Onnx__TypeProto__Tensor *t = input_type(vi);
    for (size_t d = 0; t && t->shape && d < t->shape->n_dim; d++)
        if (oq_dim_param(t->shape->dim[d]) && !strcmp(oq_dim_param(t->shape->dim[d]), name)) return 1;
    return 0;
}

/* The generated inputs (no initializer backs them) that declare a dim of one of names[0..n),
 * quoted, into buf; returns how many names some such input declares. */
static size_t inputs_with(checker *k, const char *const *names, size_t n, char *buf, size_t cap)
{
    const Onnx__GraphProto *g = k->ref->orig->graph;
    size_t used = 0, sized = 0;
    *buf = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < g->n_input; i++)
            if (!oq_gview_initializer(k->v, g->input[i]->name) && declares(g->input[i], names[j])) {
                sized++;
                break;
            }
    for (size_t i = 0; i < g->n_input && used < cap; i++) {
        int has = 0;
        for (size_t j = 0; j < n; j++) has |= declares(g->input[i], names[j]);
        if (has && !oq_gview_initializer(k->v, g->input[i]->name))
            used += (size_t)snprintf(buf + used, cap - used, "%s'%s'", used ? ", " : "", g->input[i]->name);
    }
    return sized;
}

/* A Concat whose output's size along its axis is declared by a name (a KV cache's present =
 * Concat(past, new), declared [.., total, ..]) states that name = the sum of its inputs' sizes
 * there. Generated batches give each name a size of its own: a sum they break is no run of
 * the model, and ORT's failure would read as the model's. */
static oq_status concat_fits(checker *k, const Onnx__NodeProto *n, const gen_sizes *z, oq_err *err)
{
    oq_symctx *sc = cv_sym(k->ref);
    oq_symdim d[OQ_SYM_MAX_RANK];
    int r = sc && n->n_output ? oq_sym_shape(sc, n->output[0], d, OQ_SYM_MAX_RANK) : -1;
    int64_t ax = oq_node_attr_int(n, "axis", 0), sum = 0;
    ax += ax < 0 ? r : 0;
    const char *names[OQ_MAX_DIMS + 1] = {r > 0 && ax >= 0 && ax < r ? oq_symdim_name(sc, d[ax]) : NULL};
    if (!names[0] || n->n_input + 1 > OQ_MAX_DIMS) return OQ_OK;
    char terms[512] = "", sizes[512];
    size_t nn = 1, tu = 0;
    size_t su = (size_t)snprintf(sizes, sizeof sizes, "%s %lld", names[0], (long long)named_size(z, names[0]));
    for (size_t i = 0; i < n->n_input; i++) {
        if (oq_sym_shape(sc, n->input[i], d, OQ_SYM_MAX_RANK) != r) return OQ_OK;
        const char *nm = oq_symdim_name(sc, d[ax]);
        if (!nm && !(oq_symdim_known(d[ax]) && !d[ax].n)) return OQ_OK; /* a size neither named nor fixed */
        sum += nm ? named_size(z, nm) : d[ax].coef;
        if (nm) names[nn++] = nm;
        tu += (size_t)snprintf(terms + tu, sizeof terms - tu, "%s%s", i ? " + " : "", nm ? nm : "");
        if (!nm) tu += (size_t)snprintf(terms + tu, sizeof terms - tu, "%lld", (long long)d[ax].coef);
        if (nm && su < sizeof sizes)
            su += (size_t)snprintf(sizes + su, sizeof sizes - su, ", %s %lld", nm, (long long)named_size(z, nm));
        if (tu >= sizeof terms || su >= sizeof sizes) return OQ_OK;
    }
    char ins[512];
    /* a name no input declares is no size generated batches choose: the model computes it */
    if (sum == named_size(z, names[0]) || inputs_with(k, names, nn, ins, sizeof ins) < nn) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: generated inputs cannot fit the model: Concat '%s' makes '%s' of "
                      "%s = %s along axis %lld, and generated batches size each named dim alone (%s): give inputs "
                      "batches for %s", k->ref->name, n->name ? n->name : "", n->output[0], names[0], terms,
                      (long long)ax, sizes, ins);
}

/* The relations between named dims the model states, held by the sizes generated batches give. */
static oq_status sizes_fit(checker *k, const gen_sizes *z, oq_err *err)
{
    const Onnx__GraphProto *g = oq_gview_graph(k->v);
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < g->n_node; i++)
        if (oq_node_is(g->node[i], "Concat")) st = concat_fits(k, g->node[i], z, err);
    return st;
}

static oq_status generate(checker *k, oq_err *err)
{
    static const int64_t Bs[2] = {3, 2}, Ls[2] = {16, 7}, others[2] = {4, 3};
    const Onnx__GraphProto *g = k->ref->orig->graph;
    oq_rng rng;
    oq_rng_seed(&rng, k->c->o->seed, 0);
    for (size_t bi = 0; bi < 2; bi++) {
        batch *b = &k->b[k->nb++];
        int64_t B = Bs[bi], L = Ls[bi];
        const Onnx__TypeProto__Tensor *mt = k->mask ? input_type(oq_gview_value_info(k->v, k->mask)) : NULL;
        if (mt && mt->shape && mt->shape->n_dim == 2) { /* a fixed mask shape wins */
            /* a fixed size as it is, a named one the default (`other`) */
            const gen_sizes fixed_b = {NULL, NULL, 0, 0, B}, fixed_l = {NULL, NULL, 0, 0, L};
            int64_t fb = dim_value(mt->shape->dim[0], &fixed_b), fl = dim_value(mt->shape->dim[1], &fixed_l);
            if (!fb || !fl) /* no event, or no position to make a valid prefix of */
                return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: mask input '%s' has a dimension fixed to 0: "
                                  "give inputs batches", k->ref->name, k->mask);
            B = fb > 0 ? fb : B;
            L = fl > 0 ? fl : L;
        }
        gen_sizes z = {NULL, NULL, B, L, others[bi]};
        mask_syms(k, &z);
        oq_status st = sizes_fit(k, &z, err);
        if (st) return st;
        b->owned = 1;
        b->label = bi ? "generated batch 1" : "generated batch 0";
        b->in = calloc(g->n_input + 1, sizeof *b->in);
        b->lengths = calloc((size_t)B, sizeof *b->lengths);
        if (!b->in || !b->lengths) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < B; i++) b->lengths[i] = L - (i * L) / B > 0 ? L - (i * L) / B : 1;
        if (!k->mask) {
            free(b->lengths);
            b->lengths = NULL;
        }
        for (size_t i = 0; i < g->n_input; i++) {
            if (oq_gview_initializer(k->v, g->input[i]->name)) continue;
            st = gen_input(k, g->input[i], b->lengths, B, L, others[bi], &rng, &b->in[b->n_in], err);
            if (st) return oq_err_prefix(err, "%s: ", k->ref->name);
            b->n_in++;
        }
    }
    return OQ_OK;
}

/* The given batches: every model input by name (other members, such as outputs, are ignored). */
static oq_status given(checker *k, oq_err *err)
{
    const oq_convert_opts *o = k->c->o;
    const Onnx__GraphProto *g = k->ref->orig->graph;
    if (o->n_batches > MAX_GIVEN)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "at most %d input batches", MAX_GIVEN);
    for (size_t bi = 0; bi < o->n_batches; bi++) {
        batch *b = &k->b[k->nb++];
        const oq_npz *z = o->inputs[bi];
        b->label = z->path ? z->path : "inputs";
        b->expected = o->expected ? o->expected[bi] : NULL;
        b->in = calloc(g->n_input + 1, sizeof *b->in);
        if (!b->in) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < g->n_input; i++) {
            const char *name = g->input[i]->name;
            if (oq_gview_initializer(k->v, name)) continue;
            const oq_tensor *t = oq_npz_get(z, name);
            if (!t) return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: no member '%s' for the model input of that name", b->label, name);
            b->in[b->n_in++] = (oq_tensor *)t;
        }
    }
    return OQ_OK;
}

/* Lengths from the mask input, every batch checked against the contract. */
static oq_status lengths(checker *k, oq_err *err)
{
    for (size_t bi = 0; k->mask && bi < k->nb; bi++) {
        batch *b = &k->b[bi];
        if (b->lengths) continue;
        const oq_tensor *m = oq_tensors_find((const oq_tensor *const *)b->in, b->n_in, k->mask);
        if (!m || m->ndim != 2)
            return oq_err_set(err, OQ_ERR_SHAPE, "%s: mask input '%s' must be [B, L]", b->label, k->mask);
        b->lengths = calloc((size_t)m->shape[0] + 1, sizeof *b->lengths);
        if (!b->lengths) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        oq_status st = oq_mask_check_read(m, NULL, k->c->polarity, k->by_graph ? OQ_MASK_READ_GRAPH : OQ_MASK_READ_CHOSEN,
                                          b->lengths, err);
        if (st) return oq_err_prefix(err, "%s: input '%s': ", b->label, k->mask);
    }
    return OQ_OK;
}

/* Whether some batch pads a key: a mask row shorter than the mask. */
static int pads_a_key(const checker *k)
{
    for (size_t bi = 0; k->mask && bi < k->nb; bi++) {
        const batch *b = &k->b[bi];
        const oq_tensor *m = oq_tensors_find((const oq_tensor *const *)b->in, b->n_in, k->mask);
        for (int64_t i = 0; b->lengths && m && m->ndim == 2 && i < m->shape[0]; i++)
            if (b->lengths[i] < m->shape[1]) return 1;
    }
    return 0;
}

/* A rewrite exact only under the valid-prefix contract (nonpad_kv_seqlen, causal over the
 * padding) changes nothing that a batch without a padded key shows. Given batches that pad none
 * get generated ones beside them that do; where none can be made (or none pads either), the
 * rewrite was not exercised: not green, as validate's rule has it. */
static oq_status exercise_mask(checker *k)
{
    cv_ctx *c = k->c;
    if (c->n_contract <= c->n_inherited || !k->mask || pads_a_key(k)) return OQ_OK;
    size_t given = k->nb;
    oq_err e = {0};
    oq_status st = c->o->n_batches ? generate(k, &e) : OQ_OK; /* (generated ones pad unless B is 1) */
    if (!st && pads_a_key(k)) {
        cv_step(c->r, "check", "", "note", "no batch of the given inputs pads a key of '%s', so the mask rewrite "
                "exact for valid-prefix masks would not be exercised: %zu generated batches with padded keys "
                "added", k->mask, k->nb - given);
        return OQ_OK;
    }
    if (asprintf(&c->r->failure, "not checked: the mask rewrite of input '%s' (exact for valid-prefix masks) "
                 "was not exercised: no batch pads a key (every row of '%s' is full)%s%s%s; add a batch with padded "
                 "keys", k->mask, k->mask, st ? " and none could be generated (" : "", st ? e.msg : "", st ? ")" : "") < 0)
        c->r->failure = NULL;
    return OQ_ERR_CHECK_FAILED;
}

/* Whether the batch `b` takes the branch x rewrote: 1 or 0, -1 when it does not say (the If's
 * condition is computed inside the model, or no bool scalar is fed for it). */
static int takes(const batch *b, const cv_changed *x)
{
    const oq_tensor *t = x->cond ? oq_tensors_find((const oq_tensor *const *)b->in, b->n_in, x->cond) : NULL;
    if (!t || t->dtype != OQ_DTYPE_BOOL || oq_tensor_numel(t) != 1) return -1;
    return (*(const uint8_t *)t->data != 0) == x->then_branch;
}

/* A subgraph a pass rewrote (or the opset raise changed) is checked only by the batches that run
 * it, and ORT does not say which ran: a top-level If branch whose condition a batch feeds is
 * counted (none taking a rewritten one is not checked, as validate's rule has it; a raised one
 * rests on the opset table, and is said so); any other is said to be unshown, never passed
 * silently. */
static oq_status subgraphs_ran(checker *k)
{
    cv_ctx *c = k->c;
    for (size_t i = 0; i < c->n_changed; i++) {
        const cv_changed *x = &c->changed[i];
        size_t took = 0, bi = 0;
        int t = 0;
        for (; bi < k->nb && (t = takes(&k->b[bi], x)) >= 0; bi++) took += (size_t)t;
        if (t < 0 || !k->nb) {
            cv_step(c->r, "check", "", "note", "%s, which %s: the check cannot show that a batch ran it (ONNX Runtime "
                    "does not say which subgraphs a run takes; only an If whose condition is an input is counted), so "
                    "its outputs match only for batches that did", x->where, x->what);
        } else if (took) {
            cv_step(c->r, "check", "", "note", "%s, which %s, ran in %zu of %zu batches ('%s')", x->where, x->what,
                    took, k->nb, x->cond);
        } else if (!x->rewritten) {
            cv_step(c->r, "check", "", "note", "%s, which %s, ran in no batch ('%s' is %s in every one): its nodes "
                    "mean at the new opset what they meant (the opset table), unchecked", x->where, x->what, x->cond,
                    x->then_branch ? "false" : "true");
        } else {
            if (asprintf(&c->r->failure, "not checked: %s, which %s, ran in no batch ('%s' is %s in every one); add a "
                         "batch that takes it", x->where, x->what, x->cond, x->then_branch ? "false" : "true") < 0)
                c->r->failure = NULL;
            return OQ_ERR_CHECK_FAILED;
        }
    }
    return OQ_OK;
}

static void free_batches(checker *k)
{
    for (size_t i = 0; i < k->nb; i++) {
        if (k->b[i].owned)
            for (size_t j = 0; j < k->b[i].n_in; j++) oq_tensor_free(k->b[i].in[j]);
        free(k->b[i].in);
        free(k->b[i].lengths);
    }
}

/* ---- running -------------------------------------------------------------------------- */

static oq_status open_session(oq_runtime *rt, cv_model *m, oq_session **s, oq_err *err)
{
    uint8_t *buf;
    size_t len;
    oq_status st = cv_serialize(m, &buf, &len, err);
    if (st) return st;
    oq_session_opts so = {0};
    so.intra_op_threads = 1;
    /* a model in memory has no folder: its external data is found through this entry */
    static const char *const key[] = {"session.model_external_initializers_file_folder_path"};
    const char *const val[] = {m->dir};
    if (cv_ext_count(m)) {
        so.n_session_configs = 1;
        so.session_config_keys = key;
        so.session_config_values = val;
    }
    st = oq_session_create(rt, NULL, buf, len, &so, s, err);
    free(buf);
    return st;
}

static oq_status run(oq_session *s, const batch *b, size_t *n_out, oq_tensor ***out, oq_err *err)
{
    return oq_session_run(s, b->n_in, b->in, n_out, out, err);
}

/* One line of an ORT message: the node it names and what follows ORT_ENFORCE's
 * "... was false." (else its "Status Message:"), without the C++ signature. */
static void short_reason(const char *msg, char *out, size_t n)
{
    static const char mem[] = "in-memory model: "; /* the bytes are always in memory: nothing said */
    if (!strncmp(msg, mem, sizeof mem - 1)) msg += sizeof mem - 1;
    const char *node = strstr(msg, "Name:'"), *s = msg, *p;
    for (p = msg; (p = strstr(p, " was false. ")); p++) s = p + 12;
    if (s == msg && (p = strstr(msg, "Status Message: "))) s = p + 16;
    const char *nl = strchr(s, '\n');
    int len = (int)(nl ? (size_t)(nl - s) : strlen(s));
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r')) len--;
    if (node) {
        node += 6;
        const char *q = strchr(node, '\'');
        snprintf(out, n, "node '%.*s': %.*s", q ? (int)(q - node) : 0, node, len < 300 ? len : 300, s);
    } else {
        snprintf(out, n, "%.*s", len < 300 ? len : 300, s);
    }
}

/* Whether ORT's refusal `msg` of the original is the one its exact rewrites exist for: the
 * opset-23 broadcast key-padding mask (refusal.h's attn-mask-query-broadcast, read with the
 * batch it ran on). Any other refusal is the model's own: a rewrite would repair it unseen. */
static int broadcast_refusal(checker *k, const char *msg)
{
    uint8_t *buf;
    size_t len;
    oq_err e = {0};
    if (cv_serialize(k->ref, &buf, &len, &e)) return 0;
    oq_refusal_facts f = {.message = msg, .model = k->ref->name, .model_bytes = buf, .model_n = len,
                          .inputs = (const oq_tensor *const *)k->b[0].in, .n_inputs = k->b[0].n_in};
    oq_refusal r;
    int yes = !oq_refusal_explain(&f, &r, &e) && r.id && !strcmp(r.id, "attn-mask-query-broadcast");
    oq_refusal_clear(&r);
    free(buf);
    return yes;
}

/* The form of the refused original that runs and is not what the conversion does (else the
 * check would compare the conversion with itself): its mask expanded over the queries when the
 * conversion lowers, else its lowered form. Both are exact. NULL: both are the conversion's. */
static const char *independent_form(const oq_convert_opts *o)
{
    if (!(o->passes & OQ_CONVERT_LOWER)) return "lowered";
    return o->passes & OQ_CONVERT_EXPAND_MASK ? NULL : "mask expanded";
}

/* A clone of the reference in `form`, pruned and sorted; a refusal of its pass is an error. */
static oq_status reference_form(checker *k, const char *form, const char *why, cv_model **out, oq_err *err)
{
    *out = NULL;
    oq_status st = cv_model_clone(k->ref, out, err);
    if (st) return st;
    cv_infer_types(*out); /* as the conversion's passes read them: an undeclared mask's type */
    oq_convert_report scratch = {0};
    cv_ctx lc = {.o = k->c->o, .r = &scratch, .polarity = k->c->polarity};
    st = *form == 'l' ? cv_pass_lower(&lc, *out, err) : cv_pass_expand_mask(&lc, *out, err);
    if (!st) cv_prune(*out);
    if (!st) st = cv_toposort(*out, err);
    if (!st && scratch.refused)
        st = oq_err_set(err, OQ_ERR_RUNTIME, "%s: ORT refuses the original (%s) and its %s form cannot be made (%s)",
                        k->ref->name, why, form, scratch.n_steps ? scratch.steps[0].detail : "?");
    cv_report_clear(&scratch);
    return st;
}

/* The conversion of an original ORT refuses is checked against neither the original nor itself:
 * not green, and the failure says what was and was not run. */
static oq_status not_checked(checker *k, const char *why)
{
    char said[320];
    if (asprintf(&k->c->r->failure, "not checked: ORT refuses the original (%s), and both forms of it that run, "
                 "lowered and mask expanded, are what this conversion does: the converted model would be compared "
                 "with itself. %s", why, oq_terms("Convert with OQ_CONVERT_LOWER alone (checked against the mask-"
                                                  "expanded original) or OQ_CONVERT_EXPAND_MASK alone", said,
                                                  sizeof said)) < 0)
        k->c->r->failure = NULL;
    return OQ_ERR_CHECK_FAILED;
}

/* ORT's refusal of the original, not the one its exact forms exist for: the model's own (exit 3,
 * as validate's ERROR), unless ORT loaded it and failed on generated inputs, whose sizes ortqual
 * made up name by name: then the inputs are what the caller must give. */
static oq_status refused_original(checker *k, int loaded, const char *why, oq_err *err)
{
    if (loaded && k->b[0].owned)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: ORT fails the original on generated inputs (%s): generated "
                          "batches give each named dim a size of its own, which this model may not take: give inputs "
                          "batches", k->ref->name, why);
    return oq_err_set(err, OQ_ERR_RUNTIME, "%s: ORT refuses the original model: %s", k->ref->name, why);
}

/* The reference session: the original; when ORT refuses it for the broadcast mask, the exact
 * form of it the conversion does not make. Any other refusal of the original is an error
 * naming the model and ORT's reason, as validate's of the same model. */
static oq_status reference_session(checker *k, oq_session **s, oq_err *err)
{
    oq_runtime *rt = k->c->o->runtime;
    size_t n_out;
    oq_tensor **out;
    oq_err e1 = {0};
    oq_status st = open_session(rt, k->ref, s, &e1);
    int loaded = !st;
    if (!st) {
        st = run(*s, &k->b[0], &n_out, &out, &e1);
        if (!st) oq_tensors_free(out, n_out);
        else oq_session_free(*s);
    }
    if (!st) {
        k->c->r->reference = strdup("original");
        return OQ_OK;
    }
    *s = NULL;
    char why[320];
    short_reason(e1.msg, why, sizeof why);
    if (!broadcast_refusal(k, e1.msg)) return refused_original(k, loaded, why, err);
    const char *form = independent_form(k->c->o);
    if (!form) return not_checked(k, why);
    cv_model *low = NULL;
    st = reference_form(k, form, why, &low, err);
    oq_err e2 = {0};
    if (!st && (open_session(rt, low, s, &e2) || run(*s, &k->b[0], &n_out, &out, &e2))) {
        char why2[320];
        short_reason(e2.msg, why2, sizeof why2);
        /* the model ran up to the refusal the stand-in exists for: its failure is ortqual's */
        st = oq_err_set(err, OQ_ERR_RUNTIME, "%s: ORT refuses the original (%s), and the %s form ortqual built to "
                        "stand in for it fails too (%s): ortqual's error, not the model's; please report it",
                        k->ref->name, why, form, why2);
    } else if (!st) {
        oq_tensors_free(out, n_out);
        char *r = NULL;
        if (asprintf(&r, "original, %s (ORT refused it: %s)", form, why) < 0) r = NULL;
        k->c->r->reference = r;
    }
    cv_model_free(low);
    return st;
}

/* ---- comparing ------------------------------------------------------------------------- */

/* The mask's lengths on the reference's output `t` along its batch and sequence axes, told
 * as validate tells them (the caller's --seq-axis, the declared names, the denotations, the
 * sizes); an output with two candidate sequence axes is refused, never judged on a guess.
 * Its padding must be zero where the reference's is. */
static oq_status mask_axes(checker *k, const oq_tensor *t, const batch *b, oq_compare_opts *o, oq_err *err)
{
    const oq_tensor *m = oq_tensors_find((const oq_tensor *const *)b->in, b->n_in, k->mask);
    if (!b->lengths || !m) return OQ_OK;
    const oq_convert_opts *co = k->c->o;
    oq_axes_rule r = {k->ref->name, k->mi, k->mask, co->n_seq_axes, co->seq_axes, m->shape[0], m->shape[1]};
    oq_mask_axes a;
    oq_status st = oq_output_mask_axes(&r, t->name, t->ndim, t->shape, &a, err);
    if (st || !a.masked) return st;
    o->lengths = b->lengths;
    o->batch_axis = a.batch;
    o->seq_axis = a.seq;
    o->check_padding = OQ_PADDING_AS_REFERENCE;
    return OQ_OK;
}

/* Compare any two tensors: floats with the tolerance, others exactly (as float64). */
static oq_status compare(const oq_tensor *got, const oq_tensor *want, oq_compare_opts *o, oq_compare_result *res,
                         oq_err *err)
{
    if (oq_dtype_is_float(got->dtype) && oq_dtype_is_float(want->dtype)) return oq_compare_tensors(got, want, o, res, err);
    oq_tensor *a = NULL, *b = NULL;
    oq_status st = oq_tensor_convert(got, OQ_DTYPE_FLOAT64, &a, err);
    if (!st) st = oq_tensor_convert(want, OQ_DTYPE_FLOAT64, &b, err);
    if (!st) st = oq_tensor_set_name(a, got->name, err);
    oq_compare_opts exact = *o;
    exact.tol = (oq_tolerance){0, 0};
    if (!st) st = oq_compare_tensors(a, b, &exact, res, err);
    oq_tensor_free(a);
    oq_tensor_free(b);
    return st;
}

/* `side`: what the reference of `res` is to the reader (NULL: the reference model). */
static void note_failure(checker *k, size_t bi, const char *what, const char *side, const oq_compare_result *res)
{
    if (k->c->r->failure) return;
    char line[900];
    oq_compare_result_str_vs(res, side, line, sizeof line);
    if (asprintf(&k->c->r->failure, "%s, output '%s' %s: %s", k->b[bi].label, res->name, what, line) < 0)
        k->c->r->failure = NULL;
}

/* The original fails against the expected outputs as the conversion does: what is off is the
 * expected file (another model's, other inputs'), not the conversion, and the line says so. */
static void expected_not_this_models(checker *k, size_t bi, const oq_convert_check *ck)
{
    if (k->c->r->failure) return;
    const char *path = k->b[bi].expected->path ? k->b[bi].expected->path : "the expected outputs";
    char line[900];
    oq_compare_result_str_vs(&ck->vs_expected, "EXPECTED", line, sizeof line);
    if (asprintf(&k->c->r->failure, "%s, output '%s' differs from the expected outputs in %s, and the original "
                 "model's does too (max_abs %.3g; the converted %.3g): are they this model's outputs, for these "
                 "inputs? %s", k->b[bi].label, ck->vs_expected.name, path, ck->ref_vs_expected.max_abs,
                 ck->vs_expected.max_abs, line) < 0)
        k->c->r->failure = NULL;
}

/* Whether output `name` is fed by a float16/bfloat16 Attention (cv_ctx.lowp_outputs). */
static int lowp(const checker *k, const char *name)
{
    for (size_t i = 0; i < k->c->n_lowp; i++)
        if (!strcmp(k->c->lowp_outputs[i], name)) return 1;
    return 0;
}

static oq_status compare_batch(checker *k, size_t bi, oq_tensor **ref, oq_tensor **conv, size_t n_out, oq_err *err)
{
    oq_convert_report *r = k->c->r;
    const batch *b = &k->b[bi];
    for (size_t i = 0; i < n_out; i++) {
        const char *name = ref[i]->name;
        int lp = lowp(k, name);
        oq_compare_opts o = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
        o.tol = oq_tolerances_get(k->tol[lp], name);
        oq_status st = mask_axes(k, ref[i], b, &o, err);
        if (st) return st;
        oq_convert_check *ck = OQ_PUSH(r->checks, r->n_checks);
        if (!ck) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        ck->batch = bi;
        st = compare(conv[i], ref[i], &o, &ck->vs_reference, err);
        if (st) {
            r->n_checks--;
            return oq_err_prefix(err, "%s: output '%s': ", b->label, name);
        }
        oq_compare_judge_vacuous(&ck->vs_reference, k->preset[lp]);
        if (!ck->vs_reference.passed) note_failure(k, bi, "differs from the reference", NULL, &ck->vs_reference);
        const oq_tensor *want = b->expected ? oq_npz_get(b->expected, name) : NULL;
        if (b->expected && !want)
            return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: no member '%s' for the model output of that name",
                              b->expected->path ? b->expected->path : "expected outputs", name);
        if (!want) continue;
        ck->has_expected = 1;
        /* PyTorch's padding is judged where the reference's was: zero */
        o.check_padding = ck->vs_reference.padding_checked ? OQ_PADDING_ZERO : OQ_PADDING_REPORT;
        st = compare(conv[i], want, &o, &ck->vs_expected, err);
        if (!st) st = compare(ref[i], want, &o, &ck->ref_vs_expected, err);
        if (st) return oq_err_prefix(err, "%s: expected output '%s': ", b->expected->path ? b->expected->path : "", name);
        oq_compare_judge_vacuous(&ck->vs_expected, k->preset[lp]);
        oq_compare_judge_vacuous(&ck->ref_vs_expected, k->preset[lp]);
        if (!ck->vs_expected.passed && !ck->ref_vs_expected.passed) expected_not_this_models(k, bi, ck);
        else if (!ck->vs_expected.passed)
            note_failure(k, bi, "differs from the expected outputs", "EXPECTED", &ck->vs_expected);
    }
    return OQ_OK;
}

/* Output `name`'s elements (NULL: every output's) over every batch, against the original's
 * outputs (side 0) or the expected ones (1): valid, and of them infinities both sides hold. */
static void output_counts(const oq_convert_report *r, const char *name, int side, int64_t *valid, int64_t *matched)
{
    *valid = *matched = 0;
    for (size_t i = 0; i < r->n_checks; i++) {
        const oq_convert_check *c = &r->checks[i];
        const oq_compare_result *x = side ? &c->vs_expected : &c->vs_reference;
        if ((name && strcmp(c->vs_reference.name, name)) || (side && !c->has_expected)) continue;
        *valid += x->num_valid;
        *matched += x->inf_matched;
    }
}

/* A check in which the outputs, or one of them, compared no value: every valid element an
 * infinity both sides hold, or none valid, against the original's outputs or the expected ones (validate's
 * rule, compare-impl.h: an output of infinities beside finite ones too). Not a pass: the
 * conversion is not written unchecked. */
static oq_status infinities_only(checker *k, oq_err *err)
{
    oq_convert_report *r = k->c->r;
    int64_t valid, matched;
    const char *name = NULL;
    int side = -1;
    for (size_t i = 0; side < 0 && i < 2 * r->n_checks; i++) {
        if (i % 2 && !r->checks[i / 2].has_expected) continue; /* (no expected file: nothing to count) */
        output_counts(r, r->checks[i / 2].vs_reference.name, (int)(i % 2), &valid, &matched);
        if (oq_compare_infinities_only(valid, matched)) name = r->checks[i / 2].vs_reference.name, side = (int)(i % 2);
    }
    if (side < 0 || r->failure) return OQ_OK;
    const char *holder = side ? "the expected file" : "the original model's";
    char why[600];
    int64_t one = valid; /* the output's */
    output_counts(r, NULL, side, &valid, &matched);
    r->failure = oq_compare_infinities_only(valid, matched)
                     ? strdup(oq_compare_infinities_only_str("the converted model's", "outputs", valid, holder, why,
                                                             sizeof why))
                     : oq_compare_one_output_infinities_str("the converted model's", name, one, holder);
    return r->failure ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

static oq_status compare_all(checker *k, oq_session *ref, oq_session *conv, oq_err *err)
{
    for (size_t bi = 0; bi < k->nb; bi++) {
        size_t n_ref, n_conv;
        oq_tensor **a = NULL, **b = NULL;
        oq_status st = run(ref, &k->b[bi], &n_ref, &a, err);
        if (st) return oq_err_prefix(err, "%s: the reference: ", k->b[bi].label);
        oq_err e = {0};
        if (run(conv, &k->b[bi], &n_conv, &b, &e)) {
            oq_tensors_free(a, n_ref);
            char why[320], said[256];
            short_reason(e.msg, why, sizeof why);
            if (asprintf(&k->c->r->failure, "%s: ORT CPU cannot run the converted model: %s%s", k->b[bi].label, why,
                         strstr(why, "inconsistent q_sequence_length")
                             ? oq_terms(" (its attn_mask broadcasts over the queries: add OQ_CONVERT_EXPAND_MASK or "
                                        "OQ_CONVERT_MASK_TO_SEQLEN)", said, sizeof said)
                             : "") < 0)
                k->c->r->failure = NULL;
            return OQ_ERR_CHECK_FAILED;
        }
        st = n_ref == n_conv ? compare_batch(k, bi, a, b, n_ref, err)
                             : oq_err_set(err, OQ_ERR_SHAPE, "the converted model has %zu outputs, the original %zu", n_conv, n_ref);
        oq_tensors_free(a, n_ref);
        oq_tensors_free(b, n_conv);
        if (st) return st;
    }
    return OQ_OK;
}

/* What the check leaves to ORT, said as validate says it (its summary's indices_unchecked notes):
 * a Gather whose indices the model computes at run time is not held to its table here either. */
static oq_status unchecked_notes(cv_ctx *c, const cv_model *reference, const oq_model_info *mi, oq_err *err)
{
    char *lines = NULL;
    oq_status st = oq_model_unchecked_indices(reference->orig, mi, reference->name, &lines, err);
    for (const char *l = lines, *end; !st && l && (end = strchr(l, '\n')); l = end + 1)
        cv_step(c->r, "indices", "", "note", "%s: %.*s", reference->name, (int)(end - l), l);
    free(lines);
    return st;
}

oq_status cv_check(cv_ctx *c, cv_model *reference, cv_model *converted, oq_err *err)
{
    const oq_convert_opts *o = c->o;
    if (!o->runtime) return oq_err_set(err, OQ_ERR_INVALID_ARG, "convert: no runtime to check the conversion with");
    checker k = {.c = c, .ref = reference, .v = cv_view(reference)};
    if (!k.v) return cv_oom(reference, err);
    k.mask = find_mask(&k);
    const char *pol = oq_mask_polarity_name(c->polarity);
    if (!k.mask && c->polarity != OQ_MASK_POLARITY_KEEP) /* it would read nothing */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: mask_polarity %s, but no input is the mask (mask_input names "
                          "one)", reference->name, pol);
    oq_status st = oq_model_inspect_proto(reference->orig, reference->name, &k.mi, err);
    if (!st) st = graph_polarity(&k, err);
    if (!st) st = oq_seq_axes_check_model(reference->name, k.mi, k.mask, o->seq_axes, o->n_seq_axes, err);
    if (!st) st = unchecked_notes(c, reference, k.mi, err);
    /* the attention dtype's tolerance only for the outputs some Attention computing in it feeds,
     * asked for or not (a model converted before): the others, and an Attention the passes left
     * in float32, are held to float32's */
    k.preset[0] = oq_tolerance_for_dtype(OQ_DTYPE_FLOAT32);
    k.preset[1] = oq_tolerance_for_dtype(c->computes_in);
    for (int i = 0; i < 2 && !st; i++) {
        st = oq_tolerances_create(k.preset[i], &k.tol[i], err);
        if (!st && o->tolerances) st = oq_tolerances_add(k.tol[i], o->tolerances, err);
    }
    if (!st) st = o->n_batches ? given(&k, err) : generate(&k, err);
    c->r->generated_inputs = !o->n_batches;
    if (!st) st = lengths(&k, err);
    if (!st) st = exercise_mask(&k);
    if (!st) st = subgraphs_ran(&k);
    oq_session *ref = NULL, *conv = NULL;
    if (!st) st = reference_session(&k, &ref, err);
    if (!st) {
        oq_err e = {0};
        if (open_session(o->runtime, converted, &conv, &e)) {
            char why[320];
            short_reason(e.msg, why, sizeof why);
            if (asprintf(&c->r->failure, "ORT CPU refuses the converted model: %s", why) < 0) c->r->failure = NULL;
            st = OQ_ERR_CHECK_FAILED;
        }
    }
    if (!st) st = compare_all(&k, ref, conv, err);
    if (!st) st = infinities_only(&k, err);
    if (!st) {
        c->r->checked = 1;
        c->r->passed = !c->r->failure;
        if (!c->r->passed) st = OQ_ERR_CHECK_FAILED;
    }
    if (st == OQ_ERR_CHECK_FAILED) oq_err_set(err, st, "%s", c->r->failure ? c->r->failure : "the check failed");
    oq_session_free(conv);
    oq_session_free(ref);
    oq_tolerances_free(k.tol[0]);
    oq_tolerances_free(k.tol[1]);
    oq_model_info_free(k.mi);
    free_batches(&k);
    return st;
}
