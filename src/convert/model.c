/* The model being converted: lists of protos over the untouched original. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"
#include "inspect/graphdefs-impl.h"
#include "inspect/inspect-impl.h"
#include "inspect/model-impl.h"

static void *vec_push(cv_model *m, cv_vec *v, void *p)
{
    if (!p) {
        m->oom = 1;
        return NULL;
    }
    void **slot = OQ_PUSH(v->v, v->n);
    if (!slot) {
        m->oom = 1;
        return NULL;
    }
    return *slot = p;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int name_used(const cv_names *ns, const char *s)
{
    if (!ns->cap) return 0;
    for (size_t i = hash_str(s) & (ns->cap - 1); ns->v[i]; i = (i + 1) & (ns->cap - 1))
        if (!strcmp(ns->v[i], s)) return 1;
    return 0;
}

/* Record `s` (copied) as used; returns the stored copy, or NULL for an empty name and
 * once out of memory (never `s`, which may be the caller's buffer). */
static const char *set_add(cv_model *m, cv_names *ns, const char *s)
{
    if (!s || !*s || m->oom) return NULL;
    if ((ns->n + 1) * 2 > ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 1024;
        char **nn = calloc(cap, sizeof *nn);
        if (!nn) {
            m->oom = 1;
            return NULL;
        }
        for (size_t i = 0; i < ns->cap; i++)
            if (ns->v[i]) {
                size_t j = hash_str(ns->v[i]) & (cap - 1);
                while (nn[j]) j = (j + 1) & (cap - 1);
                nn[j] = ns->v[i];
            }
        free(ns->v);
        ns->v = nn;
        ns->cap = cap;
    }
    size_t i = hash_str(s) & (ns->cap - 1);
    for (; ns->v[i]; i = (i + 1) & (ns->cap - 1))
        if (!strcmp(ns->v[i], s)) return ns->v[i];
    ns->v[i] = strdup(s);
    if (!ns->v[i]) {
        m->oom = 1;
        return NULL;
    }
    ns->n++;
    return ns->v[i];
}

static const char *name_add(cv_model *m, const char *s)
{
    return set_add(m, &m->values, s);
}

static void names_free(cv_names *ns)
{
    for (size_t i = 0; i < ns->cap; i++) free(ns->v[i]);
    free(ns->v);
}

/* A node name no other node has: `hint`, else hint_1, ... */
static const char *fresh_node_name(cv_model *m, const char *hint)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", hint && *hint ? hint : "node");
    for (unsigned long k = 1; name_used(&m->nodes_named, buf); k++) snprintf(buf, sizeof buf, "%.480s_%lu", hint, k);
    return set_add(m, &m->nodes_named, buf);
}

static int is_default_domain(const char *d)
{
    return !d || !*d || !strcmp(d, "ai.onnx");
}

static void collect_names(cv_model *m)
{
    const Onnx__GraphProto *g = m->orig->graph;
    for (size_t i = 0; i < g->n_input; i++) name_add(m, g->input[i]->name);
    for (size_t i = 0; i < g->n_output; i++) name_add(m, g->output[i]->name);
    for (size_t i = 0; i < g->n_initializer; i++) name_add(m, g->initializer[i]->name);
    for (size_t i = 0; i < g->n_value_info; i++) name_add(m, g->value_info[i]->name);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        set_add(m, &m->nodes_named, n->name);
        for (size_t k = 0; k < n->n_input; k++) name_add(m, n->input[k]);
        for (size_t k = 0; k < n->n_output; k++) name_add(m, n->output[k]);
    }
}

void cv_names_inherit(cv_model *to, const cv_model *from)
{
    for (size_t i = 0; i < from->values.cap; i++)
        if (from->values.v[i]) set_add(to, &to->values, from->values.v[i]);
    for (size_t i = 0; i < from->nodes_named.cap; i++)
        if (from->nodes_named.v[i]) set_add(to, &to->nodes_named, from->nodes_named.v[i]);
}

oq_status cv_oom(cv_model *m, oq_err *err)
{
    return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory while converting", m ? m->name : "model");
}

/* Why the graph cannot be converted (a value without a name, a node without an op type), or
 * NULL. Unnamed nodes get "" so that every name the passes print is a string. */
static const char *unfit(Onnx__GraphProto *g, char *buf, size_t n)
{
    const struct {
        const char *what;
        size_t count;
        Onnx__ValueInfoProto **v;
    } lists[] = {{"input", g->n_input, g->input}, {"output", g->n_output, g->output},
                 {"value_info", g->n_value_info, g->value_info}};
    for (size_t l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l].count; i++)
            if (!lists[l].v[i]->name || !*lists[l].v[i]->name) {
                snprintf(buf, n, "graph %s %zu has no name", lists[l].what, i);
                return buf;
            }
    for (size_t i = 0; i < g->n_initializer; i++)
        if (!g->initializer[i]->name || !*g->initializer[i]->name) {
            snprintf(buf, n, "initializer %zu has no name", i);
            return buf;
        }
    for (size_t i = 0; i < g->n_node; i++) {
        if (!g->node[i]->op_type || !*g->node[i]->op_type) {
            snprintf(buf, n, "node %zu has no op_type", i);
            return buf;
        }
        if (!g->node[i]->name && !(g->node[i]->name = strdup(""))) return "out of memory";
    }
    return NULL;
}

/* 1 when `msg` or a message inside it holds an unknown field numbered 0 (forbidden in
 * protobuf): protobuf-c reads one written with an overlong tag, keeps it, and writes it
 * back with a tag it then refuses to read, so the converted model would not load. */
static int has_field0(const ProtobufCMessage *msg)
{
    for (unsigned i = 0; i < msg->n_unknown_fields; i++)
        if (msg->unknown_fields[i].tag == 0) return 1;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        const char *at = (const char *)msg + fd->offset;
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)((const char *)msg + fd->quantifier_offset);
            ProtobufCMessage *const *v = *(ProtobufCMessage *const *const *)at;
            for (size_t k = 0; k < n; k++)
                if (v[k] && has_field0(v[k])) return 1;
            continue;
        }
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)((const char *)msg + fd->quantifier_offset) != fd->id)
            continue;
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)at;
        if (sub && has_field0(sub)) return 1;
    }
    return 0;
}

oq_status cv_model_load(const void *buf, size_t len, const char *name, const char *dir, cv_model **out,
                        oq_err *err)
{
    char why_buf[96];
    *out = NULL;
    Onnx__ModelProto *pm;
    oq_status bad = oq_model_unpack_checked(buf, len, name, OQ_UNPACK_WHOLE, &pm, err);
    if (bad) return bad;
    const char *why = !pm->has_ir_version || pm->ir_version <= 0 ? "no ir_version" /* as inspect says */
                      : !pm->graph                               ? "no graph"
                      : !pm->n_opset_import                      ? "no opset_import"
                                                                 : NULL;
    int64_t opset = 0;
    for (size_t i = 0; !why && i < pm->n_opset_import; i++)
        if (is_default_domain(pm->opset_import[i]->domain)) opset = pm->opset_import[i]->version;
    if (!why && opset <= 0) why = "no ai.onnx opset import";
    if (!why && has_field0(&pm->base)) why = "a field numbered 0, which protobuf forbids";
    if (!why) why = unfit(pm->graph, why_buf, sizeof why_buf);
    if (why) {
        onnx__model_proto__free_unpacked(pm, NULL);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ONNX model (%s)", name, why);
    }
    if ((bad = oq_graph_defs_check(pm->graph, name, err))) {
        onnx__model_proto__free_unpacked(pm, NULL);
        return bad;
    }
    if (!pm->graph->n_output) { /* ORT cannot run it, and every node would be pruned */
        onnx__model_proto__free_unpacked(pm, NULL);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: " OQ_NO_OUTPUTS_WHY, name);
    }
    cv_model *m = calloc(1, sizeof *m);
    if (!m || !(m->name = strdup(name))) {
        free(m);
        onnx__model_proto__free_unpacked(pm, NULL);
        return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", name);
    }
    m->orig = pm;
    m->opset = m->opset_in = opset;
    m->ir_version = pm->ir_version;
    const Onnx__GraphProto *g = pm->graph;
    for (size_t i = 0; i < g->n_node; i++) vec_push(m, &m->nodes, g->node[i]);
    for (size_t i = 0; i < g->n_input; i++) vec_push(m, &m->inputs, g->input[i]);
    for (size_t i = 0; i < g->n_initializer; i++) vec_push(m, &m->inits, g->initializer[i]);
    for (size_t i = 0; i < g->n_value_info; i++) {
        vec_push(m, &m->vinfo, g->value_info[i]);
        set_add(m, &m->typed, g->value_info[i]->name);
    }
    for (size_t i = 0; i < pm->n_metadata_props; i++) vec_push(m, &m->meta, pm->metadata_props[i]);
    collect_names(m);
    if (m->oom) {
        cv_model_free(m);
        return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", name);
    }
    /* an input this tool cannot read is exit 2 (INVALID_ARG, FORMAT, IO), not a rewrite refused */
    oq_status st = cv_ext_load(m, dir, err);
    if (st) {
        cv_model_free(m);
        return st;
    }
    *out = m;
    return OQ_OK;
}

void cv_model_free(cv_model *m)
{
    if (!m) return;
    oq_symctx_free(m->sym);
    oq_gview_free(m->view);
    for (size_t i = 0; i < m->owned_nodes.n; i++) onnx__node_proto__free_unpacked(m->owned_nodes.v[i], NULL);
    for (size_t i = 0; i < m->owned_inits.n; i++) onnx__tensor_proto__free_unpacked(m->owned_inits.v[i], NULL);
    for (size_t i = 0; i < m->owned_vinfo.n; i++) onnx__value_info_proto__free_unpacked(m->owned_vinfo.v[i], NULL);
    for (size_t i = 0; i < m->owned_meta.n; i++)
        onnx__string_string_entry_proto__free_unpacked(m->owned_meta.v[i], NULL);
    cv_vec *vs[] = {&m->nodes, &m->inputs, &m->inits, &m->vinfo, &m->meta, &m->owned_nodes, &m->owned_inits, &m->owned_vinfo, &m->owned_meta, &m->created};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) free(vs[i]->v);
    names_free(&m->values);
    names_free(&m->nodes_named);
    names_free(&m->typed);
    onnx__model_proto__free_unpacked(m->orig, NULL);
    free(m->name);
    free(m->dir);
    for (size_t i = 0; i < m->n_ext_files; i++) free(m->ext_files[i].path);
    free(m->ext_files);
    free(m);
}

oq_status cv_model_clone(const cv_model *m, cv_model **out, oq_err *err)
{
    uint8_t *buf;
    size_t len;
    *out = NULL;
    oq_status st = cv_serialize((cv_model *)m, &buf, &len, err);
    if (st) return st;
    st = cv_model_load(buf, len, m->name, m->dir, out, err);
    free(buf);
    if (!st) (*out)->opset_in = m->opset_in;
    return st;
}

/* ---- the view ----------------------------------------------------------------------------- */

void cv_touch(cv_model *m)
{
    oq_symctx_free(m->sym);
    oq_gview_free(m->view);
    m->sym = NULL;
    m->view = NULL;
}

static void shell_graph(cv_model *m)
{
    m->gshell = *m->orig->graph;
    m->gshell.n_input = m->inputs.n;
    m->gshell.input = (Onnx__ValueInfoProto **)m->inputs.v;
    m->gshell.n_node = m->nodes.n;
    m->gshell.node = (Onnx__NodeProto **)m->nodes.v;
    m->gshell.n_initializer = m->inits.n;
    m->gshell.initializer = (Onnx__TensorProto **)m->inits.v;
    m->gshell.n_value_info = m->vinfo.n;
    m->gshell.value_info = (Onnx__ValueInfoProto **)m->vinfo.v;
}

const oq_gview *cv_view(cv_model *m)
{
    if (m->view) return m->view;
    shell_graph(m);
    if (oq_gview_create(&m->gshell, m->opset, &m->view, NULL) || oq_symctx_create(m->view, &m->sym, NULL)) {
        m->oom = 1;
        cv_touch(m);
    }
    return m->view;
}

oq_symctx *cv_sym(cv_model *m)
{
    return cv_view(m) ? m->sym : NULL;
}

/* ---- building --------------------------------------------------------------------------- */

const char *cv_fresh(cv_model *m, const char *prefix)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", prefix && *prefix ? prefix : "v");
    for (unsigned long k = 1; name_used(&m->values, buf); k++) snprintf(buf, sizeof buf, "%.480s_%lu", prefix, k);
    return name_add(m, buf);
}

/* malloc, an allocation failure noted in m->oom (reported once, at the end). */
static void *xmalloc(cv_model *m, size_t n)
{
    void *p = malloc(n);
    if (!p) m->oom = 1;
    return p;
}

static char *xstrdup(cv_model *m, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) m->oom = 1;
    return d;
}

static char **strv_dup(cv_model *m, size_t n, const char *const *v)
{
    char **out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        m->oom = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) out[i] = xstrdup(m, v[i]);
    return out;
}

Onnx__NodeProto *cv_node_add(cv_model *m, const char *op, const char *name_hint, size_t n_in,
                             const char *const *in, size_t n_out, const char *const *out)
{
    Onnx__NodeProto *n = xmalloc(m, sizeof *n);
    if (!n) return NULL;
    onnx__node_proto__init(n);
    n->op_type = xstrdup(m, op);
    n->name = xstrdup(m, fresh_node_name(m, name_hint ? name_hint : op));
    n->domain = xstrdup(m, "");
    n->input = strv_dup(m, n_in, in);
    n->n_input = n->input ? n_in : 0;
    n->output = strv_dup(m, n_out, out);
    n->n_output = n->output ? n_out : 0;
    for (size_t i = 0; i < n_out; i++) name_add(m, out[i]);
    vec_push(m, &m->owned_nodes, n);
    vec_push(m, &m->created, n);
    vec_push(m, &m->nodes, n);
    cv_touch(m);
    return n;
}

static Onnx__AttributeProto *attr_new(cv_model *m, Onnx__NodeProto *n, const char *name,
                                      Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = malloc(sizeof *a);
    Onnx__AttributeProto **arr = a ? realloc(n->attribute, (n->n_attribute + 1) * sizeof *arr) : NULL;
    if (!arr) {
        free(a);
        m->oom = 1;
        return NULL;
    }
    onnx__attribute_proto__init(a);
    a->name = xstrdup(m, name);
    a->has_type = 1;
    a->type = type;
    n->attribute = arr;
    arr[n->n_attribute++] = a;
    return a;
}

void cv_attr_int(cv_model *m, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = n ? attr_new(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) : NULL;
    if (!a) return;
    a->has_i = 1;
    a->i = v;
}

void cv_attr_float(cv_model *m, Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = n ? attr_new(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) : NULL;
    if (!a) return;
    a->has_f = 1;
    a->f = v;
}

void cv_attr_ints(cv_model *m, Onnx__NodeProto *n, const char *name, size_t k, const int64_t *v)
{
    Onnx__AttributeProto *a = n ? attr_new(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) : NULL;
    if (!a) return;
    a->ints = malloc((k ? k : 1) * sizeof *a->ints);
    if (!a->ints) {
        m->oom = 1;
        return;
    }
    if (k) memcpy(a->ints, v, k * sizeof *v);
    a->n_ints = k;
}

void cv_attr_set_int(cv_model *m, Onnx__NodeProto *n, const char *name, int64_t v)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name)) {
            n->attribute[i]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
            n->attribute[i]->has_type = 1;
            n->attribute[i]->has_i = 1;
            n->attribute[i]->i = v;
            return;
        }
    cv_attr_int(m, n, name, v);
}

/* A deep copy through the wire format: every piece malloc'ed, freed by free_unpacked. */
static Onnx__NodeProto *node_clone(cv_model *m, const Onnx__NodeProto *n)
{
    size_t len = onnx__node_proto__get_packed_size(n);
    uint8_t *buf = malloc(len ? len : 1);
    Onnx__NodeProto *c = NULL;
    if (buf) {
        onnx__node_proto__pack(n, buf);
        c = onnx__node_proto__unpack(NULL, len, buf);
    }
    free(buf);
    if (!c) m->oom = 1;
    return c;
}

Onnx__NodeProto *cv_node_own(cv_model *m, size_t i)
{
    Onnx__NodeProto *n = m->nodes.v[i];
    for (size_t k = 0; k < m->owned_nodes.n; k++)
        if (m->owned_nodes.v[k] == n) return n;
    Onnx__NodeProto *c = node_clone(m, n);
    if (!c || !vec_push(m, &m->owned_nodes, c)) {
        if (c) onnx__node_proto__free_unpacked(c, NULL);
        return NULL;
    }
    m->nodes.v[i] = c;
    cv_touch(m);
    return c;
}

void cv_node_set_input(cv_model *m, Onnx__NodeProto *n, size_t k, const char *value)
{
    if (k >= n->n_input) {
        char **in = realloc(n->input, (k + 1) * sizeof *in);
        if (!in) {
            m->oom = 1;
            return;
        }
        n->input = in;
        while (n->n_input <= k) n->input[n->n_input++] = xstrdup(m, "");
    }
    char *s = xstrdup(m, value);
    if (!s) return;
    free(n->input[k]);
    n->input[k] = s;
    cv_touch(m);
}

void cv_node_remove(cv_model *m, size_t i)
{
    if (i >= m->nodes.n) return; /* cv_node_index's (size_t)-1 */
    memmove(&m->nodes.v[i], &m->nodes.v[i + 1], (m->nodes.n - i - 1) * sizeof *m->nodes.v);
    m->nodes.n--;
    cv_touch(m);
}

int cv_node_created(const cv_model *m, const Onnx__NodeProto *n)
{
    for (size_t i = 0; i < m->created.n; i++)
        if (m->created.v[i] == n) return 1;
    return 0;
}

size_t cv_node_index(cv_model *m, const Onnx__NodeProto *n)
{
    for (size_t i = 0; i < m->nodes.n; i++)
        if (m->nodes.v[i] == n) return i;
    return (size_t)-1;
}

static Onnx__TensorProto *tensor_new(cv_model *m, const char *name, int32_t elem_type, size_t ndim,
                                     const int64_t *dims, const void *raw, size_t raw_len)
{
    Onnx__TensorProto *t = xmalloc(m, sizeof *t);
    if (!t) return NULL;
    onnx__tensor_proto__init(t);
    t->name = xstrdup(m, name);
    t->has_data_type = 1;
    t->data_type = elem_type;
    t->dims = malloc((ndim ? ndim : 1) * sizeof *t->dims);
    t->raw_data.data = malloc(raw_len ? raw_len : 1);
    if (!t->dims || !t->raw_data.data) m->oom = 1;
    else {
        if (ndim) memcpy(t->dims, dims, ndim * sizeof *dims);
        t->n_dims = ndim;
        memcpy(t->raw_data.data, raw, raw_len);
        t->raw_data.len = raw_len;
        t->has_raw_data = 1;
    }
    return t;
}

static const char *add_init(cv_model *m, const char *hint, int32_t elem_type, size_t ndim, const int64_t *dims,
                            const void *raw, size_t raw_len)
{
    const char *name = cv_fresh(m, hint);
    Onnx__TensorProto *t = name ? tensor_new(m, name, elem_type, ndim, dims, raw, raw_len) : NULL;
    if (!t || !vec_push(m, &m->owned_inits, t)) {
        if (t) onnx__tensor_proto__free_unpacked(t, NULL);
        return NULL;
    }
    vec_push(m, &m->inits, t);
    cv_touch(m);
    return name;
}

Onnx__TensorProto *cv_init_replace(cv_model *m, size_t i, const void *raw, size_t raw_len)
{
    const Onnx__TensorProto *old = m->inits.v[i];
    Onnx__TensorProto *t = tensor_new(m, old->name, old->data_type, old->n_dims, old->dims, raw, raw_len);
    if (!t || !vec_push(m, &m->owned_inits, t)) {
        if (t) onnx__tensor_proto__free_unpacked(t, NULL);
        return NULL;
    }
    m->inits.v[i] = t;
    cv_touch(m);
    return t;
}

static Onnx__StringStringEntryProto *entry_new(cv_model *m, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = xmalloc(m, sizeof *e);
    if (!e) return NULL;
    onnx__string_string_entry_proto__init(e);
    e->key = xstrdup(m, key);
    e->value = xstrdup(m, value);
    return e;
}

Onnx__TensorProto *cv_init_external(cv_model *m, size_t i, const char *location, int64_t offset, int64_t length)
{
    Onnx__TensorProto *t = cv_init_replace(m, i, "", 0);
    if (!t) return NULL;
    char off[24], len[24];
    snprintf(off, sizeof off, "%lld", (long long)offset);
    snprintf(len, sizeof len, "%lld", (long long)length);
    t->has_raw_data = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->external_data = xmalloc(m, 3 * sizeof *t->external_data);
    if (!t->external_data) return NULL;
    t->external_data[0] = entry_new(m, "location", location);
    t->external_data[1] = entry_new(m, "offset", off);
    t->external_data[2] = entry_new(m, "length", len);
    t->n_external_data = 3;
    for (int k = 0; k < 3; k++)
        if (!t->external_data[k]) t->n_external_data = (size_t)k, m->oom = 1;
    return m->oom ? NULL : t;
}

const char *cv_const_i64(cv_model *m, const char *hint, size_t n, const int64_t *v, int scalar)
{
    int64_t d[1] = {(int64_t)n};
    return add_init(m, hint, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, scalar ? 0 : 1, d, v, n * sizeof *v);
}

const char *cv_const_scalar(cv_model *m, const char *hint, int32_t elem_type, double v)
{
    float f = (float)v;
    uint16_t h;
    switch (elem_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        return add_init(m, hint, elem_type, 0, NULL, &f, 4);
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        return add_init(m, hint, elem_type, 0, NULL, &v, 8);
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
        h = oq_f32_to_f16_bits(f);
        return add_init(m, hint, elem_type, 0, NULL, &h, 2);
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16:
        h = oq_f32_to_bf16_bits(f);
        return add_init(m, hint, elem_type, 0, NULL, &h, 2);
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: {
        uint8_t b = v != 0;
        return add_init(m, hint, elem_type, 0, NULL, &b, 1);
    }
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: {
        int64_t i = (int64_t)v;
        return add_init(m, hint, elem_type, 0, NULL, &i, 8);
    }
    default:
        m->oom = 1; /* a programming error in a pass; reported like OOM would be */
        return NULL;
    }
}

/* ---- types ------------------------------------------------------------------------------- */

int32_t cv_type_of(cv_model *m, const char *value, int *rank, cv_dim *dims)
{
    *rank = -1;
    const oq_gview *v = cv_view(m);
    if (!v) return 0;
    const Onnx__ValueInfoProto *vi = oq_gview_value_info(v, value);
    const Onnx__TypeProto__Tensor *tt =
        vi && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? vi->type->tensor_type : NULL;
    if (tt && tt->shape && tt->shape->n_dim <= OQ_SYM_MAX_RANK) {
        *rank = (int)tt->shape->n_dim;
        for (size_t i = 0; i < tt->shape->n_dim; i++) {
            dims[i].value = oq_dim_size(tt->shape->dim[i]);
            dims[i].param = oq_dim_param(tt->shape->dim[i]);
        }
    } else {
        const Onnx__TensorProto *t = oq_gview_initializer(v, value);
        if (t && t->n_dims <= OQ_SYM_MAX_RANK) {
            *rank = (int)t->n_dims;
            for (size_t i = 0; i < t->n_dims; i++) dims[i] = (cv_dim){t->dims[i], NULL};
        }
    }
    return oq_gview_elem_type(v, value);
}

static Onnx__ValueInfoProto *vinfo_new(cv_model *m, const char *value, int32_t elem_type, int rank,
                                       const cv_dim *dims)
{
    Onnx__ValueInfoProto *vi = calloc(1, sizeof *vi);
    Onnx__TypeProto *tp = calloc(1, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
    Onnx__TensorShapeProto *sh = rank >= 0 ? calloc(1, sizeof *sh) : NULL;
    Onnx__TensorShapeProto__Dimension **dv = rank >= 0 ? calloc((size_t)rank + 1, sizeof *dv) : NULL;
    if (!vi || !tp || !tt || (rank >= 0 && (!sh || !dv))) {
        free(vi), free(tp), free(tt), free(sh), free(dv);
        m->oom = 1;
        return NULL;
    }
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    vi->name = xstrdup(m, value);
    vi->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = elem_type;
    if (rank < 0) return vi;
    onnx__tensor_shape_proto__init(sh);
    tt->shape = sh;
    sh->dim = dv;
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = xmalloc(m, sizeof *d);
        if (!d) break;
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i].param) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = xstrdup(m, dims[i].param);
        } else if (dims[i].value >= 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i].value;
        }
        dv[sh->n_dim++] = d;
    }
    return vi;
}

void cv_set_type(cv_model *m, const char *value, int32_t elem_type, int rank, const cv_dim *dims)
{
    const Onnx__GraphProto *g = m->orig->graph;
    if (!value) return; /* a fresh name that ran out of memory (m->oom is set) */
    for (size_t i = 0; i < g->n_output; i++) /* a graph output declares itself */
        if (!strcmp(g->output[i]->name, value)) return;
    Onnx__ValueInfoProto *vi = vinfo_new(m, value, elem_type, rank, dims);
    if (!vi || !vec_push(m, &m->owned_vinfo, vi)) {
        if (vi) onnx__value_info_proto__free_unpacked(vi, NULL);
        return;
    }
    /* a name never typed is appended at once: a scan of every value_info for each value typed
     * made convert quadratic (100,000 values: over 5 minutes) */
    for (size_t i = 0; name_used(&m->typed, value) && i < m->vinfo.n; i++)
        if (!strcmp(((Onnx__ValueInfoProto *)m->vinfo.v[i])->name, value)) {
            m->vinfo.v[i] = vi;
            cv_touch(m);
            return;
        }
    set_add(m, &m->typed, value);
    vec_push(m, &m->vinfo, vi);
    cv_touch(m);
}

/* ---- whole-graph edits --------------------------------------------------------------------- */

typedef cv_name_fn name_fn;
static void node_reads(const Onnx__NodeProto *n, int explicit, name_fn fn, void *ctx);

static void graph_reads(const Onnx__GraphProto *g, name_fn fn, void *ctx)
{
    for (size_t j = 0; j < g->n_node; j++) node_reads(g->node[j], 1, fn, ctx);
    for (size_t i = 0; i < g->n_output; i++) fn(ctx, g->output[i]->name); /* a branch may return an outer value */
}

void cv_graph_reads(const Onnx__GraphProto *g, cv_name_fn fn, void *ctx)
{
    graph_reads(g, fn, ctx);
}

/* The names node n reads: its inputs (`explicit`) and those its subgraphs (If branches, Loop and
 * Scan bodies, nested) read, which capture outer values as inputs ONNX leaves implicit: a prune
 * or sort that missed them dropped or misplaced what an If branch read. Names the subgraphs
 * make themselves are passed too: they name nothing outside (ONNX names are unique), so a
 * caller looking them up finds nothing. */
static void node_reads(const Onnx__NodeProto *n, int explicit, name_fn fn, void *ctx)
{
    for (size_t k = 0; explicit && k < n->n_input; k++)
        if (*n->input[k]) fn(ctx, n->input[k]);
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        if (at->g) graph_reads(at->g, fn, ctx);
        for (size_t i = 0; i < at->n_graphs; i++) graph_reads(at->graphs[i], fn, ctx);
    }
}

typedef struct live_walk {
    const oq_gview *v;
    unsigned char *live;
    size_t *stack, top;
} live_walk;

static void live_producer(void *ctx, const char *name)
{
    live_walk *w = ctx;
    size_t p;
    if (oq_gview_producer(w->v, name, &p) && !w->live[p]) {
        w->live[p] = 1;
        w->stack[w->top++] = p;
    }
}

/* Mark node `i` and, through their producers, everything it reads. */
static void mark_live(const oq_gview *v, const cv_model *m, unsigned char *live, size_t *stack, size_t i)
{
    live_walk w = {v, live, stack, 0};
    if (live[i]) return;
    live[i] = 1;
    stack[w.top++] = i;
    while (w.top) node_reads(m->nodes.v[stack[--w.top]], 1, live_producer, &w);
}

typedef struct captured {
    cv_model *m;
    cv_names names;
} captured;

static void capture(void *ctx, const char *name)
{
    captured *c = ctx;
    set_add(c->m, &c->names, name);
}

static int graph_input(const cv_model *m, const char *name)
{
    for (size_t i = 0; i < m->inputs.n; i++)
        if (!strcmp(((Onnx__ValueInfoProto *)m->inputs.v[i])->name, name)) return 1;
    return 0;
}

unsigned char *cv_live_nodes(cv_model *m)
{
    const oq_gview *v = cv_view(m);
    size_t n = m->nodes.n;
    unsigned char *live = calloc(n ? n : 1, 1);
    size_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!v || !live || !stack) {
        free(live), free(stack);
        m->oom = 1;
        return NULL;
    }
    const Onnx__GraphProto *g = m->orig->graph;
    for (size_t i = 0; i < g->n_output; i++) {
        size_t p;
        if (oq_gview_producer(v, g->output[i]->name, &p)) mark_live(v, m, live, stack, p);
    }
    free(stack);
    return live;
}

size_t cv_prune(cv_model *m)
{
    size_t n = m->nodes.n;
    unsigned char *live = cv_live_nodes(m);
    if (!live) return 0;
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (live[i]) m->nodes.v[w++] = m->nodes.v[i];
    m->nodes.n = w;
    free(live);
    cv_touch(m);
    const oq_gview *v = cv_view(m);
    if (!v) return n - w;
    captured sub = {m, {NULL, 0, 0}}; /* what the kept nodes' subgraphs read */
    for (size_t i = 0; i < m->nodes.n; i++) node_reads(m->nodes.v[i], 0, capture, &sub);
    size_t k = 0;
    for (size_t i = 0; i < m->inits.n; i++) {
        const char *name = ((Onnx__TensorProto *)m->inits.v[i])->name;
        /* an initializer that is also a graph input is that input's default (IR >= 4,
         * keep_initializers_as_inputs): the input stays, so its default stays with it */
        if (oq_gview_consumer_count(v, name) || oq_gview_is_output(v, name) || graph_input(m, name) ||
            name_used(&sub.names, name))
            m->inits.v[k++] = m->inits.v[i];
    }
    names_free(&sub.names);
    m->inits.n = k;
    k = 0;
    for (size_t i = 0; i < m->vinfo.n; i++) {
        const char *name = ((Onnx__ValueInfoProto *)m->vinfo.v[i])->name;
        if (oq_gview_producer(v, name, NULL) || oq_gview_initializer(v, name)) m->vinfo.v[k++] = m->vinfo.v[i];
    }
    m->vinfo.n = k;
    cv_touch(m);
    return n - w;
}

/* Edges p -> j where node j's subgraphs read what node p makes (node_reads). */
typedef struct implicit_edges {
    const oq_gview *v;
    size_t j, n, cap;
    size_t (*e)[2];
    int oom;
} implicit_edges;

static void implicit_edge(void *ctx, const char *name)
{
    implicit_edges *x = ctx;
    size_t p;
    if (x->oom || !oq_gview_producer(x->v, name, &p) || p == x->j) return;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        void *e = realloc(x->e, cap * sizeof *x->e);
        if (!e) {
            x->oom = 1;
            return;
        }
        x->e = e, x->cap = cap;
    }
    x->e[x->n][0] = p, x->e[x->n++][1] = x->j;
}

oq_status cv_toposort(cv_model *m, oq_err *err)
{
    const oq_gview *v = cv_view(m);
    if (!v) return cv_oom(m, err);
    size_t n = m->nodes.n;
    size_t *pending = calloc(n ? n : 1, sizeof *pending), *queue = malloc((n ? n : 1) * sizeof *queue);
    void **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!pending || !queue || !sorted) {
        free(pending), free(queue), free(sorted);
        return cv_oom(m, err);
    }
    /* pending[i]: inputs of node i whose producer has not been placed yet, its subgraphs' too */
    implicit_edges x = {v, 0, 0, 0, NULL, 0};
    for (size_t i = 0; i < n; i++) {
        const Onnx__NodeProto *nd = m->nodes.v[i];
        for (size_t k = 0; k < nd->n_input; k++)
            if (*nd->input[k] && oq_gview_producer(v, nd->input[k], NULL)) pending[i]++;
        x.j = i;
        node_reads(nd, 0, implicit_edge, &x);
    }
    for (size_t e = 0; e < x.n; e++) pending[x.e[e][1]]++;
    if (x.oom) {
        free(pending), free(queue), free(sorted), free(x.e);
        return cv_oom(m, err);
    }
    /* Kahn's algorithm; the queue is kept sorted by index so the order is stable */
    size_t head = 0, tail = 0, placed = 0;
    for (size_t i = 0; i < n; i++)
        if (!pending[i]) queue[tail++] = i;
    while (head < tail) {
        size_t best = head;
        for (size_t j = head + 1; j < tail; j++)
            if (queue[j] < queue[best]) best = j;
        size_t i = queue[best];
        queue[best] = queue[head++];
        const Onnx__NodeProto *nd = m->nodes.v[i];
        sorted[placed++] = m->nodes.v[i];
        for (size_t k = 0; k < nd->n_output; k++)
            for (size_t c = 0, nc = oq_gview_consumer_count(v, nd->output[k]); *nd->output[k] && c < nc; c++) {
                size_t j = oq_gview_consumer(v, nd->output[k], c);
                if (--pending[j] == 0) queue[tail++] = j;
            }
        for (size_t e = 0; e < x.n; e++)
            if (x.e[e][0] == i && --pending[x.e[e][1]] == 0) queue[tail++] = x.e[e][1];
    }
    oq_status st = OQ_OK;
    if (placed != n) {
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: the converted graph has a cycle", m->name);
    } else {
        if (n) memcpy(m->nodes.v, sorted, n * sizeof *sorted);
        cv_touch(m);
    }
    free(pending), free(queue), free(sorted), free(x.e);
    return st;
}

void cv_set_meta(cv_model *m, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = xmalloc(m, sizeof *e);
    if (!e) return;
    onnx__string_string_entry_proto__init(e);
    e->key = xstrdup(m, key);
    e->value = xstrdup(m, value);
    if (!vec_push(m, &m->owned_meta, e)) {
        onnx__string_string_entry_proto__free_unpacked(e, NULL);
        return;
    }
    for (size_t i = 0; i < m->meta.n; i++)
        if (((Onnx__StringStringEntryProto *)m->meta.v[i])->key &&
            !strcmp(((Onnx__StringStringEntryProto *)m->meta.v[i])->key, key)) {
            m->meta.v[i] = e;
            return;
        }
    vec_push(m, &m->meta, e);
}

oq_status cv_serialize(cv_model *m, uint8_t **buf, size_t *len, oq_err *err)
{
    *buf = NULL;
    if (m->oom) return cv_oom(m, err);
    Onnx__ModelProto shell = *m->orig;
    shell_graph(m);
    shell.graph = &m->gshell;
    shell.ir_version = m->ir_version;
    shell.has_ir_version = 1;
    shell.n_metadata_props = m->meta.n;
    shell.metadata_props = (Onnx__StringStringEntryProto **)m->meta.v;
    /* the opset imports with the default domain's version replaced */
    Onnx__OperatorSetIdProto *ops = calloc(m->orig->n_opset_import, sizeof *ops);
    Onnx__OperatorSetIdProto **opp = calloc(m->orig->n_opset_import, sizeof *opp);
    if (!ops || !opp) {
        free(ops), free(opp);
        return cv_oom(m, err);
    }
    for (size_t i = 0; i < m->orig->n_opset_import; i++) {
        ops[i] = *m->orig->opset_import[i];
        if (is_default_domain(ops[i].domain)) ops[i].version = m->opset;
        opp[i] = &ops[i];
    }
    shell.opset_import = opp;
    size_t n = onnx__model_proto__get_packed_size(&shell);
    *buf = malloc(n ? n : 1);
    if (*buf) *len = onnx__model_proto__pack(&shell, *buf);
    free(ops), free(opp);
    return *buf ? OQ_OK : cv_oom(m, err);
}
