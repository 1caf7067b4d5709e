/* The subgraphs of a graph, each with a view of the scopes around it (subgraph-impl.h). */
#include "inspect/subgraph-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lists of a graph and the graphs around it, enclosing ones first. */
typedef struct scope {
    Onnx__NodeProto **node;
    Onnx__TensorProto **init;
    Onnx__ValueInfoProto **in, **out, **vi;
    size_t n_node, n_init, n_in, n_out, n_vi;
} scope;

typedef struct walk {
    int64_t opset;
    int with;
    oq_subgraph_fn fn;
    void *ctx;
    int stop, oom;
} walk;

/* a[0 .. na) then b[0 .. nb), malloc'ed (NULL and w->oom on failure). */
static void *cat(walk *w, void *a, size_t na, void *b, size_t nb, size_t size)
{
    char *v = malloc((na + nb ? na + nb : 1) * size);
    if (!v) {
        w->oom = 1;
        return NULL;
    }
    if (na) memcpy(v, a, na * size);
    if (nb) memcpy(v + na * size, b, nb * size);
    return v;
}

static void scope_free(scope *s)
{
    free(s->node), free(s->init), free(s->in), free(s->out), free(s->vi);
}

/* The scope of `g` inside `outer`: outer's lists, then g's. */
static scope scope_in(walk *w, const scope *o, const Onnx__GraphProto *g)
{
    scope s = {0};
    s.node = cat(w, o->node, o->n_node, g->node, g->n_node, sizeof *s.node);
    s.init = cat(w, o->init, o->n_init, g->initializer, g->n_initializer, sizeof *s.init);
    s.in = cat(w, o->in, o->n_in, g->input, g->n_input, sizeof *s.in);
    s.out = cat(w, o->out, o->n_out, g->output, g->n_output, sizeof *s.out);
    s.vi = cat(w, o->vi, o->n_vi, g->value_info, g->n_value_info, sizeof *s.vi);
    s.n_node = o->n_node + g->n_node, s.n_init = o->n_init + g->n_initializer, s.n_in = o->n_in + g->n_input;
    s.n_out = o->n_out + g->n_output, s.n_vi = o->n_vi + g->n_value_info;
    return s;
}

static void visit(walk *w, const scope *outer, const Onnx__GraphProto *g, const char *where);

/* Whether a node of g (not of the subgraphs inside it) is one a view is read for: the softmax a
 * chain is matched from (and the opset rule for its axis), an attention operator's heads, a
 * Gather's indices. Others need none, and a view of every enclosing node per subgraph costs the
 * whole model's inference each time. */
static int needs_view(const Onnx__GraphProto *g)
{
    static const char *const ops[] = {"Softmax", "LogSoftmax", "Hardmax", "Attention", "Gather", "GatherElements",
                                      "GatherND"};
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (n->domain && !strcmp(n->domain, "com.microsoft") && n->op_type && strstr(n->op_type, "Attention")) return 1;
        for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
            if (oq_node_is(n, ops[k])) return 1;
    }
    return 0;
}

/* One subgraph `g` of node `n`: the callback, then the subgraphs inside it. */
static void one(walk *w, const scope *outer, const Onnx__NodeProto *n, const char *attr, const Onnx__GraphProto *g,
                const char *where_outer)
{
    char where[512], place[256];
    snprintf(where, sizeof where, "%s%s%s", where_outer, *where_outer ? ", " : "",
             oq_subgraph_place(n, attr, place, sizeof place));
    scope s = scope_in(w, outer, g);
    Onnx__GraphProto flat;
    onnx__graph_proto__init(&flat);
    flat.name = g->name;
    flat.node = s.node, flat.n_node = s.n_node, flat.initializer = s.init, flat.n_initializer = s.n_init;
    flat.input = s.in, flat.n_input = s.n_in, flat.output = s.out, flat.n_output = s.n_out;
    flat.value_info = s.vi, flat.n_value_info = s.n_vi;
    oq_subgraph sg = {n, attr, g, where, NULL, NULL, outer->n_node};
    oq_gview *view = NULL;
    int with = needs_view(g) ? w->with : OQ_SUBGRAPH_NAMES;
    if (!w->oom && with >= OQ_SUBGRAPH_VIEW && oq_gview_create(&flat, w->opset, &view, NULL)) w->oom = 1;
    if (!w->oom && with >= OQ_SUBGRAPH_SHAPES && (oq_symctx_create(view, &sg.sym, NULL) || oq_sym_infer(sg.sym, NULL)))
        w->oom = 1;
    sg.view = view;
    if (!w->oom) w->stop = w->fn(w->ctx, &sg);
    oq_symctx_free(sg.sym);
    oq_gview_free(view);
    if (!w->oom && !w->stop) visit(w, &s, g, where);
    scope_free(&s);
}

/* Every subgraph of g's nodes; `sc` is g's scope (g's lists and the enclosing ones). */
static void visit(walk *w, const scope *sc, const Onnx__GraphProto *g, const char *where)
{
    for (size_t i = 0; i < g->n_node && !w->stop && !w->oom; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t a = 0; a < n->n_attribute && !w->stop && !w->oom; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            const char *name = at->name ? at->name : "";
            if (at->g) one(w, sc, n, name, at->g, where);
            for (size_t k = 0; k < at->n_graphs && !w->stop && !w->oom; k++) one(w, sc, n, name, at->graphs[k], where);
        }
    }
}

const char *oq_subgraph_place(const Onnx__NodeProto *n, const char *attr, char *buf, size_t size)
{
    const char *op = n->op_type ? n->op_type : "?";
    if (n->name && *n->name) snprintf(buf, size, "%s '%.160s' %.64s", op, n->name, attr);
    else snprintf(buf, size, "%s of '%.160s' %.64s", op, n->n_output && n->output[0] ? n->output[0] : "", attr);
    return buf;
}

oq_status oq_subgraphs_walk(const Onnx__GraphProto *g, int64_t opset, int with, oq_subgraph_fn fn, void *ctx,
                            oq_err *err)
{
    walk w = {opset, with, fn, ctx, 0, 0};
    scope top = {g->node, g->initializer, g->input, g->output, g->value_info,
                 g->n_node, g->n_initializer, g->n_input, g->n_output, g->n_value_info};
    visit(&w, &top, g, "");
    return w.oom ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory while reading subgraphs") : OQ_OK;
}

int oq_graph_has_op(const Onnx__GraphProto *g, const char *op)
{
    for (size_t i = 0; g && i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (oq_node_is(n, op)) return 1;
        for (size_t a = 0; a < n->n_attribute; a++) {
            if (oq_graph_has_op(n->attribute[a]->g, op)) return 1;
            for (size_t k = 0; k < n->attribute[a]->n_graphs; k++)
                if (oq_graph_has_op(n->attribute[a]->graphs[k], op)) return 1;
        }
    }
    return 0;
}
