/* Constant indices folded and held to their data's bounds (constidx-impl.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/constfold-impl.h"
#include "inspect/constidx-impl.h"
#include "inspect/idcast-impl.h"
#include "inspect/inputuse-impl.h"
#include "ortqual/tensor.h"

/* IDX_FED: an input's, checked per batch; IDX_UNCHECKED: nothing checks them before a run */
enum { IDX_FINE, IDX_OUTSIDE, IDX_FED, IDX_UNCHECKED };

static const char *name_of(const Onnx__NodeProto *p)
{
    return p->name ? p->name : "";
}

static int is_graph_input(const oq_gview *v, const char *value)
{
    const Onnx__GraphProto *g = oq_gview_graph(v);
    for (size_t i = 0; i < g->n_input; i++)
        if (g->input[i]->name && !strcmp(g->input[i]->name, value)) return 1;
    return 0;
}

/* Whether the per-batch check follows `n` Casts (met from the indices back: the last first) from
 * an input of type `type` (inputuse.c's walk: each one it has a value rule for, at most
 * OQ_INDEX_CASTS_MAX); they are named in casts from the input on where it does. */
static int casts_followed(int32_t type, const Onnx__NodeProto *const *cast, int n, char *casts, size_t cap)
{
    size_t used = 0;
    if (n > OQ_INDEX_CASTS_MAX || !oq_idcast_modelled(type)) return 0;
    for (int j = n - 1; j >= 0; j--) {
        int32_t to = (int32_t)oq_node_attr_int(cast[j], "to", 0);
        if (!oq_index_cast_followed(type, to)) return 0;
        type = to;
        if (used < cap)
            used += (size_t)snprintf(casts + used, cap - used, "%sCast '%s' to %s", j < n - 1 ? ", " : "",
                                     name_of(cast[j]), oq_dtype_name((oq_dtype)to));
    }
    return 1;
}

/* The graph input (without a default) whose values the indices of n are, through ops that keep
 * them as the batch check's walk does (inputuse.c: a GatherND's only with their rank kept, and
 * Casts only where it follows them), else NULL; the Casts on the way named in casts ("": none).
 * One path back, as long as the graph's (acyclic: oq_graph_defs_check) chain, as that walk
 * follows it to any length. */
static const char *fed_input(const oq_gview *v, const Onnx__NodeProto *n, char *casts, size_t cap)
{
    static const char *const KEEP[] = {"Cast", "Identity", "Reshape", "Transpose", "Unsqueeze", "Squeeze"};
    const Onnx__NodeProto *cast[OQ_INDEX_CASTS_MAX];
    const char *value = n->input[1];
    int n_cast = 0;
    *casts = 0;
    for (size_t depth = 0; depth <= oq_gview_graph(v)->n_node; depth++) {
        const Onnx__NodeProto *p = oq_gview_producer(v, value, NULL);
        if (!p)
            return !oq_gview_initializer(v, value) && is_graph_input(v, value) &&
                           casts_followed(oq_gview_elem_type(v, value), cast, n_cast, casts, cap) ? value : NULL;
        const char *const *op = KEEP;
        const char *const *end = oq_node_is(n, "GatherND") ? KEEP + 2 : KEEP + 6;
        while (op < end && !oq_node_is(p, *op)) op++;
        if (op == end || !p->n_input) return NULL;
        if (op == KEEP && n_cast++ < OQ_INDEX_CASTS_MAX) cast[n_cast - 1] = p; /* more: not followed */
        value = p->input[0];
    }
    return NULL;
}

/* Indices known only at run time, said so: an input's are checked per batch (IDX_FED), the rest
 * by ORT. */
static int runtime_note(const oq_gview *v, const Onnx__NodeProto *n, const char *from, char *msg, size_t cap)
{
    char casts[512];
    const char *in = fed_input(v, n, casts, sizeof casts);
    const Onnx__NodeProto *p = from ? oq_gview_producer(v, from, NULL) : NULL;
    if (in) {
        if (*casts)
            snprintf(msg, cap, "%s '%s': its indices '%s' are the input '%s' through %s: not checked here; validate and "
                     "bench hold each batch's, as those Casts make it, to its data's sizes before running it",
                     n->op_type, name_of(n), n->input[1], in, casts);
        else
            snprintf(msg, cap, "%s '%s': its indices '%s' are the input '%s' as fed: not checked here; validate and "
                     "bench hold each batch's to its data's sizes before running it", n->op_type, name_of(n),
                     n->input[1], in);
        return IDX_FED;
    }
    if (p)
        snprintf(msg, cap, "%s '%s': its indices '%s' are computed at run time (from '%s', the output of %s '%s'): not "
                 "checked against its data's sizes, left to ONNX Runtime", n->op_type, name_of(n), n->input[1], from,
                 p->op_type, name_of(p));
    else
        snprintf(msg, cap, "%s '%s': its indices '%s' are computed at run time (from the input '%s'): not checked "
                 "against its data's sizes, left to ONNX Runtime", n->op_type, name_of(n), n->input[1], from ? from : "");
    return IDX_UNCHECKED;
}

/* The first element of folded f outside tb's bounds, or -1: f seen as [rest, last] (the
 * tuples of a GatherND lie along its last axis), whatever its rank. */
static int64_t outside(const oq_index_table *tb, const oq_folded *f, const oq_index_bound **b)
{
    int64_t n = 1, shape[2];
    for (int i = 0; i < f->rank; i++) n *= f->shape[i];
    int rank = f->rank > 2 ? 2 : f->rank;
    shape[rank ? rank - 1 : 0] = f->rank ? f->shape[f->rank - 1] : 1;
    if (rank == 2) shape[0] = shape[1] ? n / shape[1] : 0;
    oq_tensor *t;
    if (oq_tensor_create(&t, OQ_DTYPE_INT64, rank, shape, "indices", NULL)) return -1;
    memcpy(t->data, f->v, (size_t)n * sizeof *f->v);
    int64_t e = oq_index_outside(tb, t, b);
    oq_tensor_free(t);
    return e;
}

/* Node n's constant indices against its data's bounds: IDX_FINE (in range, or nothing to
 * check), IDX_OUTSIDE, IDX_FED or IDX_UNCHECKED with what to say in msg. */
static int node_check(const oq_gview *v, const Onnx__NodeProto *n, char *msg, size_t cap)
{
    oq_index_table tb = {0};
    if (!(oq_node_is(n, "Gather") || oq_node_is(n, "GatherElements") || oq_node_is(n, "GatherND")) || n->n_input < 2)
        return IDX_FINE;
    oq_gather_bounds(v, n, 1, &tb); /* folded, they are what the node reads: their last axis its tuples' */
    int bounded = tb.all.size != 0;
    for (size_t j = 0; j < OQ_INDEX_TUPLE_MAX; j++) bounded |= tb.tuple[j].size != 0;
    if (!bounded) return IDX_FINE;
    oq_fold fo = {.v = v};
    oq_folded f;
    int st = oq_fold_value(&fo, n->input[1], &f), r = IDX_FINE;
    const oq_index_bound *b = NULL;
    int64_t e = st == OQ_FOLD_DONE ? outside(&tb, &f, &b) : -1;
    if (st == OQ_FOLD_NONE) r = runtime_note(v, n, fo.runtime, msg, cap);
    if (st == OQ_FOLD_CANNOT) {
        snprintf(msg, cap, "%s '%s': its indices '%s' are a constant, not checked against its data's sizes: %s",
                 n->op_type, name_of(n), n->input[1], fo.why);
        r = IDX_UNCHECKED;
    }
    if (e >= 0) {
        char coord[480], where[512], origin[512];
        if (f.rank) snprintf(where, sizeof where, "at element %s", oq_coord_str(f.shape, f.rank, e, coord, sizeof coord));
        else snprintf(where, sizeof where, "(a scalar)");
        snprintf(msg, cap, "%s '%s': its constant indices '%s'%s hold %lld %s; it indexes axis %lld of "
                 "its data, of size %lld (indices %lld..%lld): ONNX Runtime fails every run%s", n->op_type, name_of(n),
                 n->input[1], oq_fold_origin(&fo, origin, sizeof origin), (long long)f.v[e], where, (long long)b->axis,
                 (long long)b->size, (long long)-b->size, (long long)b->size - 1,
                 *fo.defaults ? " that keeps the default, as every run of ortqual's does" : "");
        r = IDX_OUTSIDE;
    }
    free(f.v);
    oq_fold_free(&fo);
    return r;
}

oq_status oq_const_indices_check(const oq_gview *v, const char *label, char **unchecked, oq_err *err)
{
    const Onnx__GraphProto *g = oq_gview_graph(v);
    oq_dynbuf b = {0};
    char msg[2048];
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < g->n_node; i++) {
        int r = node_check(v, g->node[i], msg, sizeof msg);
        if (r == IDX_OUTSIDE) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: %s", label, msg);
        else if (r == IDX_UNCHECKED && unchecked && oq_dynbuf_addf(&b, "%s\n", msg))
            st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    if (st) oq_dynbuf_clear(&b);
    if (unchecked) *unchecked = b.buf; /* NULL: nothing added */
    return st;
}

char *oq_const_indices_note(const oq_gview *v, const Onnx__NodeProto *n)
{
    char msg[2048];
    return node_check(v, n, msg, sizeof msg) == IDX_FINE ? NULL : strdup(msg);
}
