/* The id check: every index an input gives a Gather inside the table it reads, as the Casts on
 * its way make it. One check for every command that feeds a user's inputs (validate, replay,
 * convert's check and bench --model), so that the same file gets the same answer from each. */
#include <stdio.h>
#include <string.h>

#include "axes/axes-impl.h"
#include "core/core-impl.h"
#include "inspect/idcast-impl.h"
#include "inspect/inputuse-impl.h"
#include "ortqual/tensor.h"

/* What a table is to a reader: an embedding's rows, else the axis its node indexes. */
static const char *table_str(const oq_index_bound *b, char *buf, size_t n)
{
    if (!strcmp(b->op, "Gather"))
        snprintf(buf, n, "reads a table of %lld rows (ids", (long long)b->size);
    else
        snprintf(buf, n, "indexes axis %lld of its data, of size %lld (indices", (long long)b->axis, (long long)b->size);
    return buf;
}

/* The first bound of a route's table: the node its indices reach. */
static const oq_index_bound *first_bound(const oq_index_table *tb)
{
    if (tb->all.size) return &tb->all;
    for (int j = 0; j < OQ_INDEX_TUPLE_MAX; j++)
        if (tb->tuple[j].size) return &tb->tuple[j];
    return &tb->all;
}

char *oq_index_hit_str(const oq_index_routes *r, const oq_tensor *t, const oq_index_hit *h, char *buf, size_t n)
{
    const oq_index_casts *c = &r->casts[h->route];
    char held[64], index[32], casts[320], table[96], became[400] = "";
    if (!h->bound) {
        const oq_index_bound *b = first_bound(&r->table[h->route]);
        oq_index_casts_str(c, h->cast, casts, sizeof casts);
        snprintf(buf, n, ", which Cast '%s' to %s%s%s leaves undefined (%s: ONNX gives it no value) on its way to "
                 "the model's %s '%s'", c->node[h->cast], oq_dtype_name((oq_dtype)c->to[h->cast]),
                 *casts ? " after " : "", casts, h->why, b->op, b->node);
        return buf;
    }
    oq_idval_str(oq_idval_of(t, h->element), held, sizeof held);
    snprintf(index, sizeof index, "%lld", (long long)h->index);
    if (strcmp(held, index))
        snprintf(became, sizeof became, ", which becomes %s through %s", index,
                 oq_index_casts_str(c, c->n, casts, sizeof casts));
    snprintf(buf, n, "%s; the model's %s '%s' %s %lld..%lld)", became, h->bound->op, h->bound->node,
             table_str(h->bound, table, sizeof table), (long long)-h->bound->size, (long long)h->bound->size - 1);
    return buf;
}

const char *oq_finite_element_str(const oq_finite_rule *f, const oq_tensor *t, int64_t e, char *buf, size_t n)
{
    oq_mask_axes a = {0, 0, 0};
    oq_err why = {0};
    if (f->lengths && oq_input_mask_axes(f->axes, t->name, t->ndim, t->shape, &a, &why) && a.masked) {
        int64_t event = 0, pos = 0, within = 0;
        char ev[96];
        oq_element_event(t, a, e, &event, &pos, &within);
        snprintf(buf, n, "%s position %lld", oq_finite_event_str(f, event, ev, sizeof ev), (long long)pos);
        return buf;
    }
    char at[320];
    snprintf(buf, n, "element %s", oq_coord_str(t->shape, t->ndim, e, at, sizeof at));
    return buf;
}

oq_status oq_inputs_check_ids(const oq_finite_rule *f, const oq_index_routes *tables, const oq_tensor *const *t,
                              size_t n, const char *path, oq_err *err)
{
    for (size_t i = 0; tables && i < n; i++) {
        if (!t[i]) continue;
        oq_index_hit h;
        oq_index_routes_check(&tables[i], t[i], &h);
        if (h.element < 0) continue;
        char held[64], where[256], tail[1000];
        oq_idval_str(oq_idval_of(t[i], h.element), held, sizeof held);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: input '%s' holds %s at %s%s: are these inputs this model's?", path,
                          t[i]->name, held, oq_finite_element_str(f, t[i], h.element, where, sizeof where),
                          oq_index_hit_str(&tables[i], t[i], &h, tail, sizeof tail));
    }
    return OQ_OK;
}
