/* ONNX model inspection: parse with protobuf-c, summarise, find attention. */
#include "ortqual/inspect.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "inspect/constidx-impl.h"
#include "inspect/graphdefs-impl.h"
#include "inspect/heads-impl.h"
#include "inspect/inspect-impl.h"
#include "inspect/model-impl.h"
#include "inspect/modelfile-impl.h"
#include "inspect/sdpa-impl.h"
#include "inspect/subgraph-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

/* Every optional string of an ONNX protobuf is NULL when absent. */
static const char *str0(const char *s)
{
    return s ? s : "";
}

/* Allocation failures set `oom` and are reported once at the end. */
typedef struct ctx {
    int oom;
    const Onnx__GraphProto *g;
    oq_gview *view;  /* for the attention matcher */
    oq_symctx *sym;
} ctx;

static char *dupf(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *dupf(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) {
        s = NULL;
        c->oom = 1;
    }
    va_end(ap);
    return s;
}

static char *dup0(ctx *c, const char *s)
{
    return dupf(c, "%s", str0(s));
}

static int is_default_domain(const char *d)
{
    return !d || !*d || !strcmp(d, "ai.onnx");
}

/* What each dim is, where the model says it (validate reads DATA_BATCH and DATA_TIME). */
static void io_denotations(ctx *c, const Onnx__TensorShapeProto *sh, oq_io_info *io)
{
    int any = 0;
    for (size_t i = 0; i < sh->n_dim; i++) any |= sh->dim[i]->denotation && *sh->dim[i]->denotation;
    if (!any) return;
    if (!(io->denotations = calloc(sh->n_dim, sizeof *io->denotations))) {
        c->oom = 1;
        return;
    }
    for (size_t i = 0; i < sh->n_dim; i++)
        if (sh->dim[i]->denotation && *sh->dim[i]->denotation) io->denotations[i] = dup0(c, sh->dim[i]->denotation);
}

/* "sequence of float32 tensors", "map from int64 to float32 tensors": a type told in words. */
static void type_words(const Onnx__TypeProto *tp, char *buf, size_t n)
{
    char inner[192] = "an unknown type";
    switch (tp ? tp->value_case : ONNX__TYPE_PROTO__VALUE__NOT_SET) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        snprintf(buf, n, "%s tensors", oq_elem_type_name(tp->tensor_type ? tp->tensor_type->elem_type : 0));
        return;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        snprintf(buf, n, "sparse %s tensors",
                 oq_elem_type_name(tp->sparse_tensor_type ? tp->sparse_tensor_type->elem_type : 0));
        return;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        if (tp->sequence_type) type_words(tp->sequence_type->elem_type, inner, sizeof inner);
        snprintf(buf, n, "sequence of %s", inner);
        return;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        if (tp->map_type) type_words(tp->map_type->value_type, inner, sizeof inner);
        snprintf(buf, n, "map from %s to %s", oq_elem_type_name(tp->map_type ? tp->map_type->key_type : 0), inner);
        return;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        if (tp->optional_type) type_words(tp->optional_type->elem_type, inner, sizeof inner);
        snprintf(buf, n, "optional %s", inner);
        return;
    default: snprintf(buf, n, "%s", inner);
    }
}

static void io_info(ctx *c, const Onnx__ValueInfoProto *vi, oq_io_info *io)
{
    io->name = dup0(c, vi->name);
    io->rank = -1;
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        char words[256];
        type_words(tp, words, sizeof words);
        io->not_tensor = dup0(c, words);
        return;
    }
    io->elem_type = tp->tensor_type->elem_type;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    if (!sh) return;
    io->rank = (int32_t)sh->n_dim;
    io->dims = calloc(sh->n_dim ? sh->n_dim : 1, sizeof *io->dims);
    if (!io->dims) {
        c->oom = 1;
        io->rank = -1;
        return;
    }
    for (size_t i = 0; i < sh->n_dim; i++) {
        int64_t size = oq_dim_size(sh->dim[i]);
        io->dims[i] = size >= 0 ? dupf(c, "%lld", (long long)size) : dup0(c, oq_dim_label(sh->dim[i]));
    }
    io_denotations(c, sh, io);
}

/* A graph input with an initializer of its name has a default (IR >= 4); below IR 4 every
 * initializer is listed as an input, and none is one. */
static void take_input(ctx *c, oq_model_info *mi, int64_t ir_version, const Onnx__ValueInfoProto *vi)
{
    int init = 0;
    for (size_t k = 0; k < c->g->n_initializer && !init; k++)
        init = c->g->initializer[k]->name && vi->name && !strcmp(c->g->initializer[k]->name, vi->name);
    if (!init) io_info(c, vi, &mi->inputs[mi->n_inputs++]);
    else if (ir_version >= 4) io_info(c, vi, &mi->default_inputs[mi->n_default_inputs++]);
}

static uint64_t tensor_bytes(const Onnx__TensorProto *t)
{
    if (t->has_raw_data) return t->raw_data.len;
    return t->n_float_data * 4 + t->n_int32_data * 4 + t->n_int64_data * 8 +
           t->n_double_data * 8 + t->n_uint64_data * 8;
}

static void count_op(ctx *c, oq_model_info *mi, const Onnx__NodeProto *n)
{
    const char *dom = is_default_domain(n->domain) ? "" : n->domain;
    for (size_t i = 0; i < mi->n_ops; i++)
        if (!strcmp(mi->ops[i].domain, dom) && !strcmp(mi->ops[i].op_type, str0(n->op_type))) {
            mi->ops[i].count++;
            return;
        }
    oq_op_count *op = OQ_PUSH(mi->ops, mi->n_ops);
    if (!op) {
        c->oom = 1;
        return;
    }
    *op = (oq_op_count){dup0(c, dom), dup0(c, n->op_type), 1};
}

static int cmp_ops(const void *a, const void *b)
{
    const oq_op_count *x = a, *y = b;
    int r = strcmp(x->domain, y->domain);
    return r ? r : strcmp(x->op_type, y->op_type);
}

/* w (owned) appended to v[0 .. *n) unless an equal string is there. */
static void push_unique(ctx *c, char ***v, size_t *n, char *w)
{
    if (!w) return;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i], w)) {
            free(w);
            return;
        }
    char **slot = OQ_PUSH(*v, *n);
    if (!slot) {
        free(w);
        c->oom = 1;
        return;
    }
    *slot = w;
}

static void add_warning(ctx *c, oq_model_info *mi, char *w) { push_unique(c, &mi->warnings, &mi->n_warnings, w); }

int oq_onnx_elem_bits(int32_t type)
{
    switch (type) {
    case 21: case 22: case 23: return 4;                                           /* (u)int4 float4e2m1 */
    case 2: case 3: case 9: case 17: case 18: case 19: case 20: case 24: return 8; /* uint8 int8 bool float8s */
    case 4: case 5: case 10: case 16: return 16;                                   /* (u)int16 float16 bfloat16 */
    case 1: case 6: case 12: return 32;                                            /* float (u)int32 */
    case 7: case 11: case 13: case 14: return 64;                                  /* (u)int64 double complex64 */
    case 15: return 128;                                                           /* complex128 */
    default: return 0;
    }
}

int64_t oq_dim_size(const Onnx__TensorShapeProto__Dimension *d)
{
    return d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0
               ? d->dim_value
               : -1;
}

const char *oq_dim_param(const Onnx__TensorShapeProto__Dimension *d)
{
    return d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param : NULL;
}

const char *oq_dim_label(const Onnx__TensorShapeProto__Dimension *d)
{
    const char *param = oq_dim_param(d);
    return param && *param ? param : "?";
}

/* The bytes of t's type and shape (4-bit types two to a byte, as ONNX stores them), 0 when
 * unknown (a type without a fixed size, a negative or overflowing dimension). */
static uint64_t shape_bytes(const Onnx__TensorProto *t)
{
    const int bits = oq_onnx_elem_bits(t->data_type);
    uint64_t n = bits ? 1 : 0;
    for (size_t i = 0; n && i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && n > UINT64_MAX / 16 / (uint64_t)t->dims[i])) return 0;
        n *= (uint64_t)t->dims[i];
    }
    return bits == 4 ? (n + 1) / 2 : n * (uint64_t)(bits / 8);
}

/* t's external bytes as ORT reads them: its "length" (the last one given), its
 * type and shape's where that is absent or 0 ("not given" to ORT), none where
 * it is not a byte count (ORT refuses it). */
static uint64_t external_length(const Onnx__TensorProto *t)
{
    const char *len = NULL;
    for (size_t k = 0; k < t->n_external_data; k++)
        if (t->external_data[k]->key && !strcmp(t->external_data[k]->key, "length")) len = t->external_data[k]->value;
    if (!len) return shape_bytes(t);
    if (!*len || strspn(len, "0123456789") != strlen(len) || strlen(len) > 19) return 0;
    const uint64_t n = strtoull(len, NULL, 10);
    return n ? n : shape_bytes(t);
}

/* t's external-data file (its "location"), appended to v unless there already. */
static void external_file(ctx *c, const Onnx__TensorProto *t, char ***v, size_t *n)
{
    if (!t->has_data_location || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) return;
    for (size_t k = 0; k < t->n_external_data; k++) {
        const char *key = t->external_data[k]->key, *loc = t->external_data[k]->value;
        if (key && loc && !strcmp(key, "location")) push_unique(c, v, n, dupf(c, "%s", loc));
    }
}

static char *attr_text(ctx *c, const Onnx__AttributeProto *a)
{
    const char *name = str0(a->name);
    switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        return dupf(c, "%s=%lld", name, (long long)a->i);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        return dupf(c, "%s=%.9g", name, (double)a->f);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        return dupf(c, "%s=%.*s", name, (int)a->s.len, a->s.len ? (const char *)a->s.data : "");
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: {
        char buf[256];
        size_t w = 0;
        for (size_t i = 0; i < a->n_ints && w < sizeof buf; i++)
            w += (size_t)snprintf(buf + w, sizeof buf - w, "%s%lld", i ? "," : "", (long long)a->ints[i]);
        return dupf(c, "%s=[%s]", name, a->n_ints ? buf : "");
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
        char buf[256];
        size_t w = 0;
        for (size_t i = 0; i < a->n_floats && w < sizeof buf; i++)
            w += (size_t)snprintf(buf + w, sizeof buf - w, "%s%.9g", i ? "," : "", (double)a->floats[i]);
        return dupf(c, "%s=[%s]", name, a->n_floats ? buf : "");
    }
    default:
        return dupf(c, "%s=<%s>", name,
                    a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR ? "tensor" : "other");
    }
}

/* The info with what its public structs have no member for (their sizes are the ABI's): each
 * attention's K/V heads (oq_attention_kv_heads). Every oq_model_info the library makes is one. */
typedef struct info_ext {
    oq_model_info info; /* first: a pointer to either is a pointer to both */
    int64_t *kv_heads;  /* per attention entry */
    size_t n_kv;
} info_ext;

/* A new attention entry whose K/V heads are kv_heads. */
static oq_attention_info *new_attention(ctx *c, oq_model_info *mi, int64_t kv_heads)
{
    info_ext *e = (info_ext *)mi;
    int64_t *kv = OQ_PUSH(e->kv_heads, e->n_kv);
    oq_attention_info *a = kv ? OQ_PUSH(mi->attention, mi->n_attention) : NULL;
    if (!a) {
        c->oom = 1;
        return NULL;
    }
    *kv = kv_heads;
    return a;
}

int64_t oq_attention_kv_heads(const oq_model_info *mi, size_t i)
{
    const info_ext *e = (const info_ext *)mi;
    return mi && i < e->n_kv ? e->kv_heads[i] : 0;
}

static void fill_attrs(ctx *c, oq_attention_info *a, const Onnx__NodeProto *n)
{
    a->attrs = calloc(n->n_attribute ? n->n_attribute : 1, sizeof *a->attrs);
    if (!a->attrs) {
        c->oom = 1;
        return;
    }
    a->n_attrs = n->n_attribute;
    for (size_t i = 0; i < n->n_attribute; i++) a->attrs[i] = attr_text(c, n->attribute[i]);
}

/* ONNX Attention: which of the optional inputs are connected. */
static char *onnx_attention_inputs(ctx *c, const Onnx__NodeProto *n)
{
    static const char *names[] = {"Q", "K", "V", "attn_mask", "past_key", "past_value",
                                  "nonpad_kv_seqlen"};
    char buf[256] = "inputs:";
    size_t w = strlen(buf);
    for (size_t i = 0; i < n->n_input && i < 7; i++)
        if (n->input[i] && *n->input[i])
            w += (size_t)snprintf(buf + w, sizeof buf - w, " %s", names[i]);
    return dup0(c, buf);
}

/* The fusability verdict that follows the chain in the detail text. */
static char *decomposed_detail(ctx *c, const oq_sdpa_match *m)
{
    char text[96];
    switch (m->verdict) {
    case OQ_SDPA_FUSABLE:
        return dupf(c, "%s; fusable: scale %.6g, %s%s%s", m->chain, m->scale,
                    oq_sdpa_mask_text(m, text, sizeof text),
                    m->guard ? ", IsNaN guard" : "", m->kform == OQ_SDPA_KT_RESHAPE ? ", K^T by reshapes" : "");
    case OQ_SDPA_NOT_ATTENTION:
        return dupf(c, "%s; not attention: %s", m->chain, m->why);
    default:
        return dupf(c, "%s; not fusable: %s", m->chain, m->why);
    }
}

/* bfloat16 rounds more than float16, which rounds more than anything else a chain holds. */
static int coarseness(int32_t t)
{
    return t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 ? 2 : t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
}

/* A chain computes at the precision of its coarsest step: a float16 product rounds the scores
 * even when the Softmax upcasts them. */
static int32_t decomposed_type(const oq_gview *v, const oq_sdpa_match *m)
{
    const Onnx__GraphProto *g = oq_gview_graph(v);
    const Onnx__NodeProto *s = g->node[m->softmax];
    size_t steps[] = {m->score_mm, m->softmax, m->out_mm};
    int32_t t = oq_gview_elem_type_derived(v, s->input[0]);
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        const Onnx__NodeProto *n = g->node[steps[i]];
        int32_t o = n->n_output ? oq_gview_elem_type_derived(v, n->output[0]) : 0;
        if (coarseness(o) > coarseness(t)) t = o;
    }
    return t;
}

/* [B*H, L, D] scores: said whether or not the reshapes fix H, so that a reader sees why heads is
 * null (the detail given is freed). */
static char *folded_detail(ctx *c, char *detail, int64_t heads)
{
    char *d = heads > 0 ? dupf(c, "%s; heads folded into the batch axis: %lld", detail, (long long)heads)
                        : dupf(c, "%s; heads folded into the batch axis, not fixed by the graph", detail);
    free(detail);
    return d;
}

static void find_decomposed(ctx *c, oq_model_info *mi, size_t idx)
{
    const Onnx__NodeProto *n = c->g->node[idx];
    oq_sdpa_match m;
    if (!c->view || !oq_sdpa_match_softmax(c->view, c->sym, idx, &m)) return;
    oq_attention_info *a = new_attention(c, mi, 0);
    if (!a) return;
    a->kind = dup0(c, "decomposed");
    a->domain = dup0(c, "");
    a->name = dup0(c, n->name);
    fill_attrs(c, a, n);
    a->elem_type = decomposed_type(c->view, &m);
    oq_heads h = c->sym ? oq_attention_heads_chain(c->view, c->sym, &m) : (oq_heads){0, 0, 0};
    a->heads = h.heads;
    a->head_dim = h.head_dim;
    a->detail = decomposed_detail(c, &m);
    if (h.folded && a->detail) a->detail = folded_detail(c, a->detail, a->heads);
}

static void scan_node(ctx *c, oq_model_info *mi, const Onnx__ModelProto *m, size_t idx)
{
    const Onnx__NodeProto *n = c->g->node[idx];
    count_op(c, mi, n);
    const char *op = str0(n->op_type);
    int def = is_default_domain(n->domain);
    int ms = !def && !strcmp(n->domain, "com.microsoft");
    if (!def && !ms && strcmp(n->domain, "ai.onnx.ml"))
        add_warning(c, mi, dupf(c, "custom domain '%s' (op %s): only runtimes with that operator "
                                   "library registered can run this model", n->domain, op));
    if (!def) {
        int imported = 0;
        for (size_t i = 0; i < m->n_opset_import; i++)
            imported |= m->opset_import[i]->domain && !strcmp(m->opset_import[i]->domain, n->domain);
        if (!imported)
            add_warning(c, mi, dupf(c, "domain '%s' is used by node '%s' but not imported",
                                    n->domain, str0(n->name)));
    }
    int onnx_attn = def && !strcmp(op, "Attention");
    int ms_attn = ms && strstr(op, "Attention");
    if (onnx_attn || ms_attn) {
        oq_attention_info *a = new_attention(c, mi, c->view && c->sym ? oq_attention_kv_heads_op(c->view, c->sym, n) : 0);
        if (!a) return;
        a->kind = dup0(c, op);
        a->domain = dup0(c, def ? "" : n->domain);
        a->name = dup0(c, n->name);
        fill_attrs(c, a, n);
        a->detail = onnx_attn ? onnx_attention_inputs(c, n) : dupf(c, "inputs: %zu", n->n_input);
        a->elem_type = c->view && n->n_input ? oq_gview_elem_type_derived(c->view, n->input[0]) : 0;
        int64_t q_heads, d = -1;
        const char *from;
        if (c->view && c->sym) {
            a->heads = oq_attention_query_heads(c->view, c->sym, n);
            d = oq_attention_head_size(c->sym, n, &q_heads, &from); /* convert's reading too */
        }
        a->head_dim = d > 0 ? d : 0;
    }
    find_decomposed(c, mi, idx);
    if (c->view) add_warning(c, mi, oq_const_indices_note(c->view, n));
}

/* The nodes of one subgraph, scanned as the top level's over the view of its scopes: their
 * operators counted, their attention listed with where it is, and the subgraph said once. */
typedef struct sub_scan {
    ctx *c;
    oq_model_info *mi;
    const Onnx__ModelProto *m;
} sub_scan;

static int scan_subgraph(void *arg, const oq_subgraph *s)
{
    sub_scan *x = arg;
    ctx *c = x->c, top = *c;
    size_t before = x->mi->n_attention;
    c->g = s->view ? oq_gview_graph(s->view) : s->g; /* (no view: nothing in g is matched) */
    c->view = (oq_gview *)s->view;
    c->sym = s->sym;
    for (size_t i = 0; i < s->g->n_node && !c->oom; i++) scan_node(c, x->mi, x->m, (s->view ? s->first : 0) + i);
    for (size_t i = before; i < x->mi->n_attention && !c->oom; i++) {
        oq_attention_info *a = &x->mi->attention[i];
        char *d = dupf(c, "in %s; %s", s->where, str0(a->detail));
        free(a->detail);
        a->detail = d;
    }
    add_warning(c, x->mi, dupf(c, "%s: a subgraph of %zu node%s (its operators and attention are counted above; "
                                  "convert rewrites no attention inside a subgraph)", s->where, s->g->n_node,
                               s->g->n_node == 1 ? "" : "s"));
    c->g = top.g, c->view = top.view, c->sym = top.sym;
    return c->oom;
}

static oq_status not_onnx(oq_err *err, const char *name, const char *why)
{
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ONNX model (%s)", name, why);
}

oq_status oq_model_inspect_proto(const Onnx__ModelProto *m, const char *name, oq_model_info **out, oq_err *err)
{
    *out = NULL;
    if (!m) return oq_model_parse_failed(name, err);
    oq_status st = OQ_OK;
    if (!m->has_ir_version || m->ir_version <= 0) st = not_onnx(err, name, "no ir_version");
    else if (!m->graph) st = not_onnx(err, name, "no graph");
    else if (!m->n_opset_import) st = not_onnx(err, name, "no opset_import");
    if (!st) st = oq_graph_defs_check(m->graph, name, err);
    info_ext *e = st ? NULL : calloc(1, sizeof *e);
    oq_model_info *mi = e ? &e->info : NULL;
    if (!st && !mi) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (st) return st;
    ctx c = {0, m->graph, NULL, NULL};
    int64_t opset = 0;
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (is_default_domain(m->opset_import[i]->domain)) opset = m->opset_import[i]->version;
    /* the shapes convert infers before it fuses, so that both say the same of a chain */
    if (oq_gview_create(m->graph, opset, &c.view, NULL) || oq_symctx_create(c.view, &c.sym, NULL) ||
        oq_sym_infer(c.sym, NULL))
        c.oom = 1;
    const Onnx__GraphProto *g = m->graph;
    mi->ir_version = m->ir_version;
    mi->producer_name = dup0(&c, m->producer_name);
    mi->producer_version = dup0(&c, m->producer_version);
    mi->doc_string = dup0(&c, m->doc_string);
    mi->opsets = calloc(m->n_opset_import, sizeof *mi->opsets);
    mi->inputs = calloc(g->n_input ? g->n_input : 1, sizeof *mi->inputs);
    mi->default_inputs = calloc(g->n_input ? g->n_input : 1, sizeof *mi->default_inputs);
    mi->outputs = calloc(g->n_output ? g->n_output : 1, sizeof *mi->outputs);
    if (!mi->opsets || !mi->inputs || !mi->default_inputs || !mi->outputs) c.oom = 1;
    for (size_t i = 0; !c.oom && i < m->n_opset_import; i++) {
        mi->opsets[mi->n_opsets].domain = dup0(&c, m->opset_import[i]->domain);
        mi->opsets[mi->n_opsets++].version = m->opset_import[i]->version;
    }
    for (size_t i = 0; !c.oom && i < g->n_input; i++) take_input(&c, mi, m->ir_version, g->input[i]);
    for (size_t i = 0; !c.oom && i < g->n_output; i++) io_info(&c, g->output[i], &mi->outputs[mi->n_outputs++]);
    mi->n_initializers = g->n_initializer;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!t->has_data_location || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
            mi->initializer_bytes += tensor_bytes(t);
            continue;
        }
        mi->n_external++;
        mi->external_bytes += external_length(t);
        external_file(&c, t, &mi->external_files, &mi->n_external_files);
    }
    mi->n_nodes = g->n_node;
    if (!g->n_output) add_warning(&c, mi, dupf(&c, "%s", OQ_NO_OUTPUTS_WHY));
    for (size_t i = 0; !c.oom && i < g->n_node; i++) scan_node(&c, mi, m, i);
    sub_scan sub = {&c, mi, m};
    if (!c.oom && oq_subgraphs_walk(g, opset, OQ_SUBGRAPH_SHAPES, scan_subgraph, &sub, NULL)) c.oom = 1;
    if (mi->n_ops) qsort(mi->ops, mi->n_ops, sizeof *mi->ops, cmp_ops);
    oq_symctx_free(c.sym);
    oq_gview_free(c.view);
    if (c.oom) {
        oq_model_info_free(mi);
        return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory while inspecting", name);
    }
    *out = mi;
    return OQ_OK;
}

oq_status oq_model_inspect_bytes(const void *buf, size_t n, const char *name, oq_model_info **out,
                                 oq_err *err)
{
    OQ_NEED_N(err, n, buf);
    OQ_NEED(err, out);
    *out = NULL;
    Onnx__ModelProto *m;
    oq_status st = oq_model_unpack_checked(buf, n, name ? name : "the model", OQ_UNPACK_LEAN, &m, err);
    if (st) return st;
    st = oq_model_inspect_proto(m, name ? name : "the model", out, err);
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

oq_status oq_model_inspect_file(const char *path, oq_model_info **out, oq_err *err)
{
    OQ_NEED_PATH(err, path);
    OQ_NEED(err, out);
    Onnx__ModelProto *m;
    *out = NULL;
    oq_status st = oq_model_proto_read(path, &m, err);
    if (!st) st = oq_model_inspect_proto(m, path, out, err);
    oq_err ext = OQ_ERR_INIT; /* said, not refused: a model is read without its data too */
    if (!st && oq_model_ext_check(m->graph, path, &ext)) {
        ctx c = {0};
        add_warning(&c, *out, dupf(&c, "%s (ONNX Runtime cannot load the model so)", ext.msg));
    }
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

oq_status oq_model_external_files(const char *path, char ***files, size_t *n, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, files);
    OQ_NEED(err, n);
    Onnx__ModelProto *m;
    ctx c = {0};
    *files = NULL;
    *n = 0;
    oq_status st = oq_model_proto_read(path, &m, err);
    if (st) return st;
    for (size_t i = 0; m->graph && i < m->graph->n_initializer; i++) external_file(&c, m->graph->initializer[i], files, n);
    onnx__model_proto__free_unpacked(m, NULL);
    if (!c.oom) return OQ_OK;
    for (size_t i = 0; i < *n; i++) free((*files)[i]); /* oq_strv_free is the runtime layer's */
    free(*files);
    *files = NULL;
    *n = 0;
    return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
}

static void free_io(oq_io_info *io)
{
    free(io->name);
    free(io->not_tensor);
    for (int32_t i = 0; io->dims && i < io->rank; i++) free(io->dims[i]);
    free(io->dims);
    for (int32_t i = 0; io->denotations && i < io->rank; i++) free(io->denotations[i]);
    free(io->denotations);
}

const char *oq_elem_type_name(int32_t t)
{
    /* onnx.TensorProto.DataType: oq_dtype_name has no name for string, complex, float8... */
    static const char *const names[] = {"undefined", "float32", "uint8", "int8", "uint16", "int16", "int32",
                                        "int64", "string", "bool", "float16", "float64", "uint32", "uint64",
                                        "complex64", "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz",
                                        "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1"};
    return t >= 0 && t < (int32_t)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

const oq_io_info *oq_model_default_input(const oq_model_info *mi, const char *name)
{
    for (size_t i = 0; mi && name && i < mi->n_default_inputs; i++)
        if (!strcmp(mi->default_inputs[i].name, name)) return &mi->default_inputs[i];
    return NULL;
}

oq_status oq_model_refuse_non_tensors(const oq_model_info *mi, const char *path, const char *tool, oq_err *err)
{
    for (size_t i = 0; mi && i < mi->n_inputs + mi->n_outputs; i++) {
        int in = i < mi->n_inputs;
        const oq_io_info *io = in ? &mi->inputs[i] : &mi->outputs[i - mi->n_inputs];
        if (io->not_tensor)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s '%s' is not a tensor (%s): %s cannot %s it (export "
                              "it as tensors: a list flattened into one output per element)", path,
                              in ? "input" : "output", io->name, io->not_tensor, tool, in ? "feed" : "compare");
    }
    return OQ_OK;
}

oq_status oq_model_refuse_default_inputs(const oq_model_info *mi, const oq_tensor *const *t, size_t n,
                                         const char *path, const char *what, oq_err *err)
{
    for (size_t i = 0; i < mi->n_default_inputs; i++) {
        const char *name = mi->default_inputs[i].name;
        if (oq_tensors_find(t, n, name))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s '%s': the model's input '%s' " OQ_DEFAULT_INPUT_WHY
                              ": it feeds only inputs without one", path, what, name, name);
    }
    return OQ_OK;
}

oq_status oq_model_refuse_no_outputs(const oq_model_info *mi, const char *path, oq_err *err)
{
    return mi && !mi->n_outputs ? oq_err_set(err, OQ_ERR_FORMAT, "%s: " OQ_NO_OUTPUTS_WHY, path) : OQ_OK;
}

const oq_io_info *oq_find_io(const oq_io_info *io, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(io[i].name, name)) return &io[i];
    return NULL;
}

void oq_io_names(const oq_io_info *io, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    if (!buf) return;
    if (size) buf[0] = 0;
    if (!io) return; /* names nothing, whatever n says */
    for (size_t i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", io[i].name);
}

void oq_model_info_free(oq_model_info *mi)
{
    if (!mi) return;
    free(mi->producer_name);
    free(mi->producer_version);
    free(mi->doc_string);
    for (size_t i = 0; i < mi->n_opsets; i++) free(mi->opsets[i].domain);
    free(mi->opsets);
    for (size_t i = 0; i < mi->n_inputs; i++) free_io(&mi->inputs[i]);
    for (size_t i = 0; i < mi->n_default_inputs; i++) free_io(&mi->default_inputs[i]);
    for (size_t i = 0; i < mi->n_outputs; i++) free_io(&mi->outputs[i]);
    free(mi->inputs);
    free(mi->default_inputs);
    free(mi->outputs);
    for (size_t i = 0; i < mi->n_ops; i++) {
        free(mi->ops[i].domain);
        free(mi->ops[i].op_type);
    }
    free(mi->ops);
    for (size_t i = 0; i < mi->n_attention; i++) {
        oq_attention_info *a = &mi->attention[i];
        free(a->kind);
        free(a->domain);
        free(a->name);
        for (size_t k = 0; k < a->n_attrs; k++) free(a->attrs[k]);
        free(a->attrs);
        free(a->detail);
    }
    free(mi->attention);
    for (size_t i = 0; i < mi->n_warnings; i++) free(mi->warnings[i]);
    free(mi->warnings);
    for (size_t i = 0; i < mi->n_external_files; i++) free(mi->external_files[i]);
    free(mi->external_files);
    free(((info_ext *)mi)->kv_heads);
    free(mi);
}

static json_t *io_entry(const oq_io_info *io)
{
    json_t *dims = json_array();
    for (int32_t d = 0; io->dims && d < io->rank; d++) {
        char *end;
        long long v = strtoll(io->dims[d], &end, 10);
        json_array_append_new(dims, *end || end == io->dims[d] ? oq_json_text(io->dims[d]) : json_integer(v));
    }
    json_t *j = json_pack("{s:o, s:i, s:o}", "name", oq_json_text(io->name), "elem_type", (int)io->elem_type, "dims",
                          io->rank < 0 ? (json_decref(dims), json_null()) : dims);
    if (!j || !io->denotations) return j;
    json_t *den = json_array();
    for (int32_t d = 0; d < io->rank; d++)
        json_array_append_new(den, io->denotations[d] ? oq_json_text(io->denotations[d]) : json_null());
    json_object_set_new(j, "denotations", den);
    return j;
}

static json_t *io_json(const oq_io_info *io, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, io_entry(&io[i]));
    return arr;
}

/* Every input, each with its "default": null (to be fed), or "initializer". */
static json_t *inputs_json(const oq_model_info *mi)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < mi->n_inputs + mi->n_default_inputs; i++) {
        int dflt = i >= mi->n_inputs;
        json_t *e = io_entry(dflt ? &mi->default_inputs[i - mi->n_inputs] : &mi->inputs[i]);
        json_object_set_new(e, "default", dflt ? json_string("initializer") : json_null());
        json_array_append_new(arr, e);
    }
    return arr;
}

static json_t *strv_json(char *const *v, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, oq_json_text(v[i]));
    return arr;
}

char *oq_model_info_json(const oq_model_info *mi)
{
    if (!mi) return NULL;
    json_t *opsets = json_array(), *ops = json_array(), *att = json_array();
    for (size_t i = 0; i < mi->n_opsets; i++)
        json_array_append_new(opsets, json_pack("{s:o, s:I}", "domain", oq_json_text(mi->opsets[i].domain),
                                                "version", (json_int_t)mi->opsets[i].version));
    for (size_t i = 0; i < mi->n_ops; i++)
        json_array_append_new(ops, json_pack("{s:o, s:o, s:I}", "domain", oq_json_text(mi->ops[i].domain),
                                             "op_type", oq_json_text(mi->ops[i].op_type), "count",
                                             (json_int_t)mi->ops[i].count));
    for (size_t i = 0; i < mi->n_attention; i++) {
        const oq_attention_info *a = &mi->attention[i];
        json_array_append_new(att, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "kind", oq_json_text(a->kind), "domain",
                                             oq_json_text(a->domain), "name", oq_json_text(a->name), "attributes",
                                             strv_json(a->attrs, a->n_attrs), "detail", oq_json_text(a->detail),
                                             "dtype", a->elem_type ? json_string(oq_elem_type_name(a->elem_type))
                                                                   : json_null()));
        json_object_set_new(json_array_get(att, i), "heads", a->heads > 0 ? json_integer(a->heads) : json_null());
        json_object_set_new(json_array_get(att, i), "head_dim", a->head_dim > 0 ? json_integer(a->head_dim) : json_null());
        int64_t kv = oq_attention_kv_heads(mi, i);
        json_object_set_new(json_array_get(att, i), "kv_heads", kv > 0 ? json_integer(kv) : json_null());
    }
    json_t *root = json_pack(
        "{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I}, s:I, s:o, s:o, s:o}", "schema", OQ_INSPECT_SCHEMA, "ir_version",
        (json_int_t)mi->ir_version, "producer_name", oq_json_text(mi->producer_name), "producer_version",
        oq_json_text(mi->producer_version), "doc_string", oq_json_text(mi->doc_string), "opsets", opsets, "inputs",
        inputs_json(mi), "outputs", io_json(mi->outputs, mi->n_outputs),
        "initializers", "count", (json_int_t)mi->n_initializers, "bytes",
        (json_int_t)mi->initializer_bytes, "nodes", (json_int_t)mi->n_nodes, "operators", ops,
        "attention", att, "warnings", strv_json(mi->warnings, mi->n_warnings));
    if (!root) return NULL;
    json_t *inits = json_object_get(root, "initializers");
    json_object_set_new(inits, "external", json_integer((json_int_t)mi->n_external));
    json_object_set_new(inits, "external_bytes", json_integer((json_int_t)mi->external_bytes));
    json_object_set_new(inits, "external_files", strv_json(mi->external_files, mi->n_external_files));
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}
