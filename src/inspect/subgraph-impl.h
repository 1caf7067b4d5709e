/* The subgraphs of a graph (If branches, Loop and Scan bodies, nested), each seen with the
 * scopes around it: inspect counts and matches inside them, convert checks and rewrites them.
 *
 * A subgraph reads the values of its enclosing graphs (ONNX leaves those reads implicit), so a
 * matcher over its nodes alone would see Q, K, V, the scale and the mask as undeclared names.
 * The view given for each is of one flattened graph: the enclosing graphs' nodes, inputs,
 * initializers and declarations, then the subgraph's own (ONNX names are unique across scopes,
 * so nothing clashes). The subgraph's nodes are the view's [first, first + g->n_node).
 */
#ifndef ORTQUAL_INSPECT_SUBGRAPH_IMPL_H
#define ORTQUAL_INSPECT_SUBGRAPH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "inspect/gview-impl.h"
#include "inspect/symdim-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/status.h"

typedef struct oq_subgraph {
    const Onnx__NodeProto *owner; /* the If, Loop or Scan node */
    const char *attr;             /* its attribute: "then_branch", "else_branch", "body" */
    const Onnx__GraphProto *g;    /* the subgraph */
    const char *where;            /* "If 'If_y' then_branch"; nested: "Loop 'L' body, If 'I' else_branch" */
    const oq_gview *view;         /* the flattened graph (NULL unless asked for, and unless g holds a
                                     Softmax, LogSoftmax, Hardmax, attention operator or Gather) */
    oq_symctx *sym;               /* its shapes, inferred (NULL unless asked for, as view) */
    size_t first;                 /* the subgraph's first node in the view */
} oq_subgraph;

/* Return nonzero to stop the walk (oq_subgraphs_walk then returns OQ_OK). */
typedef int (*oq_subgraph_fn)(void *ctx, const oq_subgraph *s);

enum { OQ_SUBGRAPH_NAMES = 0, OQ_SUBGRAPH_VIEW = 1, OQ_SUBGRAPH_SHAPES = 2 };

/* Call fn for every subgraph of the nodes of `g`, a parent before the subgraphs inside it.
 * `with`: OQ_SUBGRAPH_VIEW builds s->view, OQ_SUBGRAPH_SHAPES also s->sym (shapes inferred as
 * inspect's and convert's top level). `opset`: the model's default-domain opset. Errors:
 * OQ_ERR_NOMEM. */
oq_status oq_subgraphs_walk(const Onnx__GraphProto *g, int64_t opset, int with, oq_subgraph_fn fn, void *ctx,
                            oq_err *err);
/* "If 'If_y' then_branch" (an unnamed node: "If of 'y' then_branch", its first output): subgraph
 * `attr` of node n, in words, into buf; returns buf. */
const char *oq_subgraph_place(const Onnx__NodeProto *n, const char *attr, char *buf, size_t size);
/* 1 when a node of `g` or of a subgraph inside it is the ai.onnx operator `op`. */
int oq_graph_has_op(const Onnx__GraphProto *g, const char *op);

#endif
