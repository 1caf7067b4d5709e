/* Subgraphs (If branches, Loop and Scan bodies): the attention passes refuse what is inside
 * them, by name; a pass that can run there (the Elu decomposition) rewrites them, each as a
 * model of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-impl.h"
#include "inspect/subgraph-impl.h"

/* ---- attention inside subgraphs: refused ----------------------------------------------- */

/* The pass asked for that rewrites Attention nodes (the first in the order they run), or NULL. */
static const char *attention_pass(const oq_convert_opts *o)
{
    return (o->passes & OQ_CONVERT_MASK_TO_SEQLEN) ? "mask-to-seqlen"
           : (o->passes & OQ_CONVERT_EXPAND_MASK)  ? "expand-mask"
           : (o->passes & OQ_CONVERT_PAD_HEAD)     ? "pad-head-size"
           : o->attention_dtype                    ? "attention-dtype"
           : (o->passes & OQ_CONVERT_LOWER)        ? "lower"
                                                   : NULL;
}

static int refuse_inside(void *arg, const oq_subgraph *s)
{
    cv_ctx *c = arg;
    const char *pass = attention_pass(c->o);
    for (size_t i = 0; i < s->g->n_node; i++) {
        const Onnx__NodeProto *n = s->g->node[i];
        oq_sdpa_match mt;
        if (pass && oq_node_is(n, "Attention")) {
            c->r->refused++;
            cv_step(c->r, pass, n->name, "refused", "Attention inside %s: convert rewrites no attention inside a "
                    "subgraph (If branches, Loop and Scan bodies)", s->where);
        } else if ((c->o->passes & OQ_CONVERT_FUSE) && oq_node_is(n, "Softmax") &&
                   oq_sdpa_match_softmax(s->view, s->sym, s->first + i, &mt) && mt.verdict != OQ_SDPA_NOT_ATTENTION) {
            c->r->refused++;
            cv_step(c->r, "fuse", n->name, "refused", "attention chain inside %s (%s): convert rewrites no attention "
                    "inside a subgraph (If branches, Loop and Scan bodies)", s->where, mt.chain);
        }
    }
    return 0;
}

oq_status cv_subgraph_attention(cv_ctx *c, cv_model *m, oq_err *err)
{
    const oq_gview *v = cv_view(m);
    if (!v) return cv_oom(m, err);
    if (!(c->o->passes & OQ_CONVERT_FUSE) && !attention_pass(c->o)) return OQ_OK;
    return oq_subgraphs_walk(oq_gview_graph(v), m->opset, OQ_SUBGRAPH_SHAPES, refuse_inside, c, err);
}

/* ---- a pass inside subgraphs ------------------------------------------------------------ */

/* A subgraph's declarations and initializers, then those of the outer values it reads, as the
 * model around it declares them. */
typedef struct outer {
    const oq_gview *v;
    cv_vec vinfo, inits;
    size_t own_vinfo, own_inits; /* the subgraph's own come first */
    int oom;
} outer;

static void push(outer *o, cv_vec *vec, size_t from, void *p)
{
    for (size_t i = from; i < vec->n; i++)
        if (vec->v[i] == p) return;
    if (!OQ_PUSH(vec->v, vec->n)) o->oom = 1;
    else vec->v[vec->n - 1] = p;
}

static void read_name(void *arg, const char *name)
{
    outer *o = arg;
    if (!name || !*name) return;
    const Onnx__ValueInfoProto *vi = oq_gview_value_info(o->v, name);
    const Onnx__TensorProto *t = oq_gview_initializer(o->v, name);
    if (vi) push(o, &o->vinfo, o->own_vinfo, (void *)vi);
    if (t) push(o, &o->inits, o->own_inits, (void *)t);
}

static void outer_of(outer *o, const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_value_info; i++) push(o, &o->vinfo, o->vinfo.n, g->value_info[i]);
    for (size_t i = 0; i < g->n_initializer; i++) push(o, &o->inits, o->inits.n, g->initializer[i]);
    o->own_vinfo = o->vinfo.n;
    o->own_inits = o->inits.n;
    cv_graph_reads(g, read_name, o);
}

/* g as a model of its own, its outer reads declared (o). */
static oq_status sub_load(cv_model *m, const outer *o, const Onnx__GraphProto *g, cv_model **out, oq_err *err)
{
    Onnx__GraphProto sg = *g;
    sg.value_info = (Onnx__ValueInfoProto **)o->vinfo.v;
    sg.initializer = (Onnx__TensorProto **)o->inits.v;
    sg.n_value_info = o->vinfo.n;
    sg.n_initializer = o->inits.n;
    Onnx__ModelProto shell = *m->orig;
    shell.graph = &sg;
    shell.n_metadata_props = 0;
    size_t len = onnx__model_proto__get_packed_size(&shell);
    uint8_t *buf = malloc(len ? len : 1);
    oq_status st = buf ? OQ_OK : cv_oom(m, err);
    if (!st) {
        onnx__model_proto__pack(&shell, buf);
        st = cv_model_load(buf, len, m->name, m->dir, out, err);
    }
    free(buf);
    if (!st) cv_names_inherit(*out, m);
    return st;
}

/* Whether `name` is one of the outer values o declared (not the subgraph's own). */
static int is_outer(const outer *o, const char *name)
{
    for (size_t i = o->own_vinfo; i < o->vinfo.n; i++)
        if (!strcmp(((Onnx__ValueInfoProto *)o->vinfo.v[i])->name, name)) return 1;
    for (size_t i = o->own_inits; i < o->inits.n; i++)
        if (!strcmp(((Onnx__TensorProto *)o->inits.v[i])->name, name)) return 1;
    return 0;
}

/* The rewritten subgraph: sub's graph, less the outer declarations sub_load added. */
static oq_status sub_take(cv_model *sub, const outer *o, Onnx__GraphProto **out, oq_err *err)
{
    uint8_t *buf;
    size_t len;
    *out = NULL;
    oq_status st = cv_toposort(sub, err);
    if (!st) st = cv_serialize(sub, &buf, &len, err);
    if (st) return st;
    Onnx__ModelProto *pm = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    if (!pm) return cv_oom(sub, err);
    Onnx__GraphProto *g = pm->graph;
    pm->graph = NULL;
    onnx__model_proto__free_unpacked(pm, NULL);
    size_t k = 0;
    for (size_t i = 0; i < g->n_value_info; i++)
        if (is_outer(o, g->value_info[i]->name)) onnx__value_info_proto__free_unpacked(g->value_info[i], NULL);
        else g->value_info[k++] = g->value_info[i];
    g->n_value_info = k;
    k = 0;
    for (size_t i = 0; i < g->n_initializer; i++)
        if (is_outer(o, g->initializer[i]->name)) onnx__tensor_proto__free_unpacked(g->initializer[i], NULL);
        else g->initializer[k++] = g->initializer[i];
    g->n_initializer = k;
    *out = g;
    return OQ_OK;
}

/* ", inside WHERE" appended to the steps from these on, and WHERE put before the records' places
 * (outer first, as the walk says them): said where they are. */
static void say_where(cv_ctx *c, size_t step, size_t rec, const char *where)
{
    for (size_t i = step; i < c->r->n_steps; i++) {
        char *d = NULL;
        if (asprintf(&d, "%s, inside %s", c->r->steps[i].detail, where) < 0) continue;
        free(c->r->steps[i].detail);
        c->r->steps[i].detail = d;
    }
    for (size_t i = rec; i < c->n_changed; i++) {
        char *d = NULL;
        if (asprintf(&d, "%s, %s", where, c->changed[i].where) < 0) continue;
        free(c->changed[i].where);
        c->changed[i].where = d;
        free(c->changed[i].cond); /* an inner If's condition is no value a batch shows */
        c->changed[i].cond = NULL;
    }
}

/* Subgraph `attr` of `owner` (a node of the main graph: top), at `where`, changed as `what` says;
 * a place recorded before keeps its first record (a rewrite's, before the raise's). */
static void record(cv_ctx *c, const Onnx__NodeProto *owner, const char *attr, const char *where, int top,
                   int rewritten, const char *what)
{
    for (size_t i = 0; i < c->n_changed; i++)
        if (c->changed[i].where && !strcmp(c->changed[i].where, where)) return;
    cv_changed *x = OQ_PUSH(c->changed, c->n_changed);
    if (!x) return;
    int branch = top && oq_node_is(owner, "If") && owner->n_input && *owner->input[0];
    *x = (cv_changed){strdup(where), strdup(what), branch ? strdup(owner->input[0]) : NULL,
                      !strcmp(attr, "then_branch"), rewritten};
    if (!x->where || !x->what || (branch && !x->cond)) { /* out of memory: no record rather than half of one */
        free(x->where), free(x->what), free(x->cond);
        c->n_changed--;
    }
}

/* The pass run on subgraph *gp of `owner` (an owned node of m), and the result put in its place. */
static oq_status rewrite(cv_ctx *c, cv_model *m, const Onnx__NodeProto *owner, const char *attr,
                         Onnx__GraphProto **gp, const char *pass_name, cv_pass_fn pass, oq_err *err)
{
    char where[256];
    outer o = {cv_view(m), {NULL, 0}, {NULL, 0}, 0, 0, 0};
    if (!o.v) return cv_oom(m, err);
    oq_subgraph_place(owner, attr, where, sizeof where);
    outer_of(&o, *gp);
    cv_model *sub = NULL;
    Onnx__GraphProto *g = NULL;
    size_t step = c->r->n_steps, rec = c->n_changed;
    oq_status st = o.oom ? cv_oom(m, err) : sub_load(m, &o, *gp, &sub, err);
    if (!st) st = pass(c, sub, err);
    if (!st) st = sub_take(sub, &o, &g, err);
    if (!st) {
        cv_names_inherit(m, sub);
        onnx__graph_proto__free_unpacked(*gp, NULL);
        *gp = g;
        say_where(c, step, rec, where);
        char what[96];
        snprintf(what, sizeof what, "%s rewrote", pass_name);
        record(c, owner, attr, where, 1, 1, what);
        cv_touch(m);
    }
    cv_model_free(sub);
    free(o.vinfo.v);
    free(o.inits.v);
    return st;
}

oq_status cv_subgraphs_rewrite(cv_ctx *c, cv_model *m, const char *op, const char *pass_name, cv_pass_fn pass,
                               oq_err *err)
{
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < m->nodes.n; i++) {
        const Onnx__NodeProto *n = m->nodes.v[i];
        int has = 0;
        for (size_t a = 0; a < n->n_attribute; a++) {
            has |= oq_graph_has_op(n->attribute[a]->g, op);
            for (size_t k = 0; k < n->attribute[a]->n_graphs; k++) has |= oq_graph_has_op(n->attribute[a]->graphs[k], op);
        }
        Onnx__NodeProto *own = has ? cv_node_own(m, i) : NULL;
        if (has && !own) return cv_oom(m, err);
        for (size_t a = 0; own && !st && a < own->n_attribute; a++) {
            Onnx__AttributeProto *at = own->attribute[a];
            const char *name = at->name ? at->name : "";
            if (at->g && oq_graph_has_op(at->g, op)) st = rewrite(c, m, own, name, &at->g, pass_name, pass, err);
            for (size_t k = 0; !st && k < at->n_graphs; k++)
                if (oq_graph_has_op(at->graphs[k], op)) st = rewrite(c, m, own, name, &at->graphs[k], pass_name, pass, err);
        }
    }
    return st;
}

typedef struct raised {
    cv_ctx *c;
    cv_model *m;
    char what[96];
} raised;

static int raised_one(void *arg, const oq_subgraph *s)
{
    raised *x = arg;
    record(x->c, s->owner, s->attr, s->where, cv_node_index(x->m, s->owner) != (size_t)-1, 0, x->what);
    return 0;
}

oq_status cv_subgraphs_raised(cv_ctx *c, cv_model *m, int64_t target, oq_err *err)
{
    raised x = {c, m, ""};
    const oq_gview *v = cv_view(m);
    if (!v) return cv_oom(m, err);
    snprintf(x.what, sizeof x.what, "the raise to ai.onnx opset %lld changed", (long long)target);
    return oq_subgraphs_walk(oq_gview_graph(v), m->opset, OQ_SUBGRAPH_NAMES, raised_one, &x, err);
}

void cv_changed_clear(cv_ctx *c)
{
    for (size_t i = 0; i < c->n_changed; i++) {
        free(c->changed[i].where);
        free(c->changed[i].what);
        free(c->changed[i].cond);
    }
    free(c->changed);
    c->changed = NULL;
    c->n_changed = 0;
}
