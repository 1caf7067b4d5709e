/* Each value of a graph defined once, and no cycle (graphdefs-impl.h). ORT refuses neither a
 * Constant node shadowing an initializer of its name (it runs the node's value) nor, in every
 * path, a second producer: what ortqual read (a scale, a fused chain) was then not what ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/graphdefs-impl.h"

/* What defines a value; the order sorts a node's definition after the others of its name. */
enum { DEF_INPUT, DEF_INIT, DEF_NODE };

typedef struct def {
    const char *name;
    int kind;
    size_t index; /* in the graph's inputs, initializers or nodes */
} def;

static int def_cmp(const void *a, const void *b)
{
    const def *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->kind != y->kind) return x->kind - y->kind;
    return (x->index > y->index) - (x->index < y->index);
}

static int name_cmp(const void *key, const void *d) { return strcmp(key, ((const def *)d)->name); }

/* "node 'relu_b' (Relu)", or "node 3 (Relu)" for one without a name; into buf, returned. */
static const char *node_str(const Onnx__GraphProto *g, size_t i, char *buf, size_t n)
{
    const Onnx__NodeProto *nd = g->node[i];
    const char *op = nd->op_type ? nd->op_type : "";
    if (nd->name && *nd->name) snprintf(buf, n, "node '%s' (%s)", nd->name, op);
    else snprintf(buf, n, "node %zu (%s)", i, op);
    return buf;
}

static const char *def_str(const Onnx__GraphProto *g, const def *d, char *buf, size_t n)
{
    if (d->kind == DEF_NODE) return node_str(g, d->index, buf, n);
    snprintf(buf, n, "%s", d->kind == DEF_INIT ? "an initializer" : "a graph input");
    return buf;
}

/* Every definition of the graph, sorted by name: *n of them (NULL: out of memory). */
static def *defs_of(const Onnx__GraphProto *g, size_t *n)
{
    size_t cap = g->n_input + g->n_initializer + 1;
    for (size_t i = 0; i < g->n_node; i++) cap += g->node[i]->n_output;
    def *d = malloc(cap * sizeof *d);
    *n = 0;
    for (size_t i = 0; d && i < g->n_input; i++)
        if (g->input[i]->name) d[(*n)++] = (def){g->input[i]->name, DEF_INPUT, i};
    for (size_t i = 0; d && i < g->n_initializer; i++)
        if (g->initializer[i]->name) d[(*n)++] = (def){g->initializer[i]->name, DEF_INIT, i};
    for (size_t i = 0; d && i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (g->node[i]->output[k] && *g->node[i]->output[k]) d[(*n)++] = (def){g->node[i]->output[k], DEF_NODE, i};
    if (d) qsort(d, *n, sizeof *d, def_cmp);
    return d;
}

/* A node's output that is also defined elsewhere (d sorted: a node's definition comes last). */
static oq_status twice(const Onnx__GraphProto *g, const def *d, size_t n, const char *name, oq_err *err)
{
    for (size_t i = 1; i < n; i++) {
        if (strcmp(d[i].name, d[i - 1].name) || d[i].kind != DEF_NODE) continue;
        char a[300], b[300];
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: value '%s' is defined twice, by %s and by %s: ONNX gives a value "
                          "one definition, and ONNX Runtime runs one of them while the other is what a reader of "
                          "the file sees: remove one", name, d[i].name, def_str(g, &d[i - 1], a, sizeof a),
                          def_str(g, &d[i], b, sizeof b));
    }
    return OQ_OK;
}

/* The producing node of `value` among the nodes' definitions p[0..n), else -1. */
static long producer(const def *p, size_t n, const char *value)
{
    const def *d = value && *value ? bsearch(value, p, n, sizeof *p, name_cmp) : NULL;
    return d ? (long)d->index : -1;
}

/* One cycle among the nodes Kahn's algorithm left (left[i]), in words: from a node left, its
 * inputs are followed back to a node left until one repeats, which is on a cycle. */
static oq_status cycle_said(const Onnx__GraphProto *g, const def *p, size_t np, const unsigned char *left,
                            const char *name, oq_err *err)
{
    size_t n = g->n_node, cur = 0;
    long *from = malloc(n * sizeof *from);
    unsigned char *seen = calloc(n, 1);
    const char **via = malloc(n * sizeof *via);
    if (!from || !seen || !via) {
        free(from), free(seen), free(via);
        return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", name);
    }
    while (!left[cur]) cur++;
    while (!seen[cur]) { /* a node left reads a value of another one left */
        seen[cur] = 1;
        for (size_t k = 0; k < g->node[cur]->n_input; k++) {
            long q = producer(p, np, g->node[cur]->input[k]);
            if (q >= 0 && left[q]) {
                from[cur] = q, via[cur] = g->node[cur]->input[k];
                break;
            }
        }
        cur = (size_t)from[cur];
    }
    char said[900] = "", a[300];
    size_t used = 0, hops = 0, start = cur;
    oq_buf_appendf(said, sizeof said, &used, "%s", node_str(g, cur, a, sizeof a));
    do { /* six hops at most: the line names a cycle, not all of a long one */
        oq_buf_appendf(said, sizeof said, &used, "%s reads '%s' of ", hops ? ", which" : "", via[cur]);
        cur = (size_t)from[cur];
        oq_buf_appendf(said, sizeof said, &used, "%s", node_str(g, cur, a, sizeof a));
        hops++;
    } while (cur != start && hops < 6);
    free(from), free(seen), free(via);
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: the graph has a cycle (in the model as given): %s%s", name, said,
                      cur != start ? ", ..." : "");
}

/* The edges producer -> reader as lists per producer: to[off[q] .. off[q + 1]); indeg per reader. */
typedef struct edges {
    size_t *off, *to, *indeg;
} edges;

static int edges_make(const Onnx__GraphProto *g, const def *p, size_t np, edges *e)
{
    size_t nn = g->n_node, ne = 0;
    for (size_t j = 0; j < nn; j++)
        for (size_t k = 0; k < g->node[j]->n_input; k++) ne += producer(p, np, g->node[j]->input[k]) >= 0;
    e->off = calloc(nn + 2, sizeof *e->off);
    e->to = malloc((ne + 1) * sizeof *e->to);
    e->indeg = calloc(nn + 1, sizeof *e->indeg);
    if (!e->off || !e->to || !e->indeg) return 0;
    for (size_t j = 0; j < nn; j++)
        for (size_t k = 0; k < g->node[j]->n_input; k++) {
            long q = producer(p, np, g->node[j]->input[k]);
            if (q >= 0) e->off[q + 2]++, e->indeg[j]++;
        }
    for (size_t q = 0; q < nn; q++) e->off[q + 2] += e->off[q + 1];
    for (size_t j = 0; j < nn; j++) /* off[q + 1] moves from q's start to its end */
        for (size_t k = 0; k < g->node[j]->n_input; k++) {
            long q = producer(p, np, g->node[j]->input[k]);
            if (q >= 0) e->to[e->off[q + 1]++] = j;
        }
    return 1;
}

/* Kahn's algorithm over the edges; the nodes it cannot place are on a cycle or after one. */
static oq_status acyclic(const Onnx__GraphProto *g, const def *d, size_t n, const char *name, oq_err *err)
{
    size_t np = 0, nn = g->n_node, placed = 0, tail = 0;
    def *p = malloc((n + 1) * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        if (d[i].kind == DEF_NODE) p[np++] = d[i]; /* still sorted by name */
    edges e = {0};
    size_t *queue = malloc((nn + 1) * sizeof *queue);
    unsigned char *left = malloc(nn + 1);
    int made = p && queue && left && edges_make(g, p, np, &e);
    oq_status st = made ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", name);
    for (size_t j = 0; !st && j < nn; j++)
        if (!e.indeg[j]) queue[tail++] = j;
    for (; !st && placed < tail; placed++)
        for (size_t x = e.off[queue[placed]]; x < e.off[queue[placed] + 1]; x++)
            if (--e.indeg[e.to[x]] == 0) queue[tail++] = e.to[x];
    for (size_t j = 0; !st && j < nn; j++) left[j] = e.indeg[j] > 0;
    if (!st && placed < nn) st = cycle_said(g, p, np, left, name, err);
    free(p), free(queue), free(left), free(e.off), free(e.to), free(e.indeg);
    return st;
}

oq_status oq_graph_defs_check(const Onnx__GraphProto *g, const char *name, oq_err *err)
{
    if (!g) return OQ_OK;
    size_t n;
    def *d = defs_of(g, &n);
    if (!d) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", name);
    oq_status st = twice(g, d, n, name, err);
    if (!st) st = acyclic(g, d, n, name, err);
    free(d);
    return st;
}
