/* What each input of a model is used as: a walk from the input through the nodes that pass it
 * on (casts, reshapes) to the operator inputs that tell (inputuse-impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "inspect/constidx-impl.h"
#include "inspect/gview-impl.h"
#include "inspect/idcast-impl.h"
#include "inspect/inputuse-impl.h"
#include "inspect/model-impl.h"
#include "ortqual/tensor.h"

/* What the route the walk took from the input to a value makes of that value. */
typedef struct route {
    int reaches;   /* it is the input passed on (inputuse-impl.h, "Reaches") */
    int32_t dtype; /* while it reaches: its type (0: not known) */
    int as_is;     /* while it reaches: its rank kept */
    int sum;       /* a float Add's sum that the input reached, passed on through SCORES only since */
    int flows;     /* the input flows here (FLOW) */
    int inv;       /* while it flows: the value is the input inverted (an odd count of Not, Sub(c, x)...) */
    int told;      /* while it flows: a node already said which value marks a valid position */
} route;

/* A value on the walk's path and the next of its consumers to visit; `entered`: what to undo
 * on leaving it (enter, below). */
typedef struct frame {
    const char *value;
    route p;
    size_t next, n_cons;
    int entered;
} frame;

typedef struct walk {
    const oq_gview *v;
    const Onnx__GraphProto *g;
    unsigned uses;
    oq_index_routes routes; /* the bounds of the tables the input indexes, per chain of Casts */
    oq_index_casts casts;   /* the Casts on the route walked now */
    int opaque;             /* the route walked now passed a cast the check does not follow */
    int oom;                /* a route could not be kept: out of memory */
    /* per node, the routes (route_bits) on which its output was walked: walked again on one, it
     * would find nothing new, so each node is walked at most 32 times per input, however the
     * graph shares values (a route that reaches is one path: the input passed on through input 0
     * of each node, so its Casts are the same each time) */
    uint32_t *seen;
    frame *stack; /* the path walked now: an explicit stack, as deep as the model */
    size_t depth, cap;
    const Onnx__NodeProto *teller; /* the first node that said which value marks a valid position */
    unsigned teller_says;          /* ... and what it said (OQ_USE_SAYS_*) */
} walk;

static const char *const KEEP_RANK[] = {"Cast", "CastLike", "Identity", "Not", NULL};
static const char *const CHANGE_RANK[] = {"Unsqueeze", "Reshape", "Expand", "Squeeze", "Transpose", NULL};
/* what a decomposed attention's scores pass through between their MatMul and the Softmax */
static const char *const SCORES[] = {"Add", "Sub", "Mul", "Div", "Where", "Cast", "Identity", "Reshape", NULL};

static int is_one_of(const Onnx__NodeProto *n, const char *const *ops)
{
    for (; *ops; ops++)
        if (oq_node_is(n, *ops)) return 1;
    return 0;
}

static int is_ms(const Onnx__NodeProto *n, const char *op)
{
    return n->domain && !strcmp(n->domain, "com.microsoft") && n->op_type && !strcmp(n->op_type, op);
}

static int is_float(int32_t dtype)
{
    return dtype && oq_dtype_is_float((oq_dtype)dtype);
}

/* The use of input slot `slot` of `n`, reached by a value of type `dtype` (0: not known),
 * its rank kept or not (a float Add's: its sum, `sum` below, is followed to a Softmax). */
static unsigned slot_use(const Onnx__NodeProto *n, size_t slot, int32_t dtype, int as_is)
{
    unsigned u = 0;
    if (oq_node_is(n, "Attention") && slot == 3)
        u |= (as_is ? OQ_USE_ATTN_MASK_AS_IS : 0) | (is_float(dtype) ? OQ_USE_ADDITIVE : 0);
    if ((oq_node_is(n, "Gather") || oq_node_is(n, "GatherElements") || oq_node_is(n, "GatherND")) && slot == 1)
        u |= OQ_USE_INDICES;
    if (as_is && ((is_ms(n, "Attention") && slot == 3) || (is_ms(n, "MultiHeadAttention") && slot == 4)))
        u |= OQ_USE_KEY_PADDING;
    if (is_float(dtype) && (is_ms(n, "Attention") || is_ms(n, "MultiHeadAttention")) && slot == 5) u |= OQ_USE_ADDITIVE;
    return u;
}

/* `b` tightened to `size` along `axis` of `n`'s data, unless it holds a smaller bound already
 * (every node that reads the input must take its values). */
static void tighten(oq_index_bound *b, const Onnx__NodeProto *n, int64_t axis, int64_t size)
{
    if (size <= 0 || (b->size && b->size <= size)) return;
    b->size = size;
    b->axis = axis;
    snprintf(b->op, sizeof b->op, "%s", n->op_type);
    snprintf(b->node, sizeof b->node, "%s", n->name ? n->name : "");
}

void oq_gather_bounds(const oq_gview *v, const Onnx__NodeProto *n, int as_is, oq_index_table *tb)
{
    int nd = oq_node_is(n, "GatherND");
    if (n->n_input < 2 || !(oq_node_is(n, "Gather") || oq_node_is(n, "GatherElements") || nd)) return;
    const Onnx__TensorProto *t = oq_gview_initializer(v, n->input[0]);
    if (!t || !t->n_dims) return;
    int64_t rank = (int64_t)t->n_dims;
    if (nd) {
        int64_t b = oq_node_attr_int(n, "batch_dims", 0);
        for (int64_t j = 0; as_is && b >= 0 && j < OQ_INDEX_TUPLE_MAX && b + j < rank; j++)
            tighten(&tb->tuple[j], n, b + j, t->dims[b + j]);
        return;
    }
    int64_t axis = oq_node_attr_int(n, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis >= 0 && axis < rank) tighten(&tb->all, n, axis, t->dims[axis]);
}

static int outside(const oq_index_bound *b, int64_t v)
{
    return b->size && (v < -b->size || v >= b->size);
}

/* The bound of tb that v, element e of t, breaks: every element's, or for a GatherND's tuples
 * the one of its position along t's last axis (NULL: none). */
static const oq_index_bound *broken_bound(const oq_index_table *tb, const oq_tensor *t, int64_t e, int64_t v)
{
    if (outside(&tb->all, v)) return &tb->all;
    int64_t k = t->ndim ? t->shape[t->ndim - 1] : 0;
    if (k > 0 && e % k < OQ_INDEX_TUPLE_MAX && outside(&tb->tuple[e % k], v)) return &tb->tuple[e % k];
    return NULL;
}

static int bounded(const oq_index_table *tb)
{
    int any = tb->all.size != 0;
    for (size_t j = 0; j < OQ_INDEX_TUPLE_MAX; j++) any |= tb->tuple[j].size != 0;
    return any;
}

int64_t oq_index_outside(const oq_index_table *tb, const oq_tensor *t, const oq_index_bound **b)
{
    if (!bounded(tb) || (t->dtype != OQ_DTYPE_INT64 && t->dtype != OQ_DTYPE_INT32)) return -1;
    for (int64_t e = 0, n = oq_tensor_numel(t); e < n; e++) {
        int64_t v = t->dtype == OQ_DTYPE_INT64 ? ((const int64_t *)t->data)[e] : ((const int32_t *)t->data)[e];
        if ((*b = broken_bound(tb, t, e, v))) return e;
    }
    return -1;
}

int oq_index_cast_followed(int32_t from, int32_t to)
{
    return oq_idcast_modelled(from) && oq_idcast_modelled(to);
}

/* Element e of t through the Casts of route k of r, judged against its table into *hit: 1 when it
 * breaks a bound or a Cast has no value for it. */
static int route_breaks(const oq_index_routes *r, int k, const oq_tensor *t, int64_t e, oq_index_hit *hit)
{
    const oq_index_casts *c = &r->casts[k];
    oq_idval v = oq_idval_of(t, e);
    for (int j = 0; j < c->n; j++) {
        const char *why = oq_idval_cast(&v, c->to[j]);
        if (why) {
            *hit = (oq_index_hit){e, k, NULL, j, why, 0};
            return 1;
        }
    }
    int64_t index;
    const oq_index_bound *b = oq_idval_index(v, &index) ? broken_bound(&r->table[k], t, e, index) : NULL;
    if (b) *hit = (oq_index_hit){e, k, b, 0, NULL, index};
    return b != NULL;
}

void oq_index_routes_check(const oq_index_routes *r, const oq_tensor *t, oq_index_hit *hit)
{
    hit->element = -1;
    if (!oq_idcast_modelled(t->dtype)) return;
    for (int k = 0; k < r->n; k++) {
        const oq_index_bound *b = NULL;
        int64_t e = r->casts[k].n ? -1 : oq_index_outside(&r->table[k], t, &b), v = 0; /* no Cast: as they are */
        if (e >= 0) {
            oq_idval_index(oq_idval_of(t, e), &v); /* (an int64 or int32 t: oq_index_outside judged it) */
            *hit = (oq_index_hit){e, k, b, 0, NULL, v};
            return;
        }
        for (int64_t i = 0, n = oq_tensor_numel(t); r->casts[k].n && bounded(&r->table[k]) && i < n; i++)
            if (route_breaks(r, k, t, i, hit)) return;
    }
}

char *oq_index_casts_str(const oq_index_casts *c, int upto, char *buf, size_t n)
{
    size_t used = 0;
    *buf = 0;
    for (int j = 0; j < upto && j < c->n && used < n; j++)
        used += (size_t)snprintf(buf + used, n - used, "%sCast '%s' to %s", j ? ", " : "", c->node[j],
                                 oq_dtype_name((oq_dtype)c->to[j]));
    return buf;
}

/* The route of r for the Casts `c`, a new one where none has them yet; NULL: out of memory. */
static oq_index_table *route_table(oq_index_routes *r, const oq_index_casts *c)
{
    for (int k = 0; k < r->n; k++)
        if (r->casts[k].n == c->n && !memcmp(r->casts[k].to, c->to, sizeof c->to) &&
            !memcmp(r->casts[k].node, c->node, sizeof c->node))
            return &r->table[k];
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 4;
        oq_index_casts *casts = realloc(r->casts, (size_t)cap * sizeof *casts);
        if (casts) r->casts = casts;
        oq_index_table *table = casts ? realloc(r->table, (size_t)cap * sizeof *table) : NULL;
        if (!table) return NULL;
        r->table = table;
        r->cap = cap;
    }
    r->casts[r->n] = *c;
    memset(&r->table[r->n], 0, sizeof r->table[r->n]);
    return &r->table[r->n++];
}

static void routes_clear(oq_index_routes *r)
{
    free(r->casts);
    free(r->table);
}

void oq_index_routes_free(oq_index_routes *tables)
{
    for (oq_index_routes *r = tables; r && r->n >= 0; r++) routes_clear(r);
    free(tables);
}

/* The bounds Gather `n` puts on the input, on the route walked now (one the check follows). */
static void bound_route(walk *w, const Onnx__NodeProto *n, int as_is)
{
    oq_index_table tb = {0};
    oq_gather_bounds(w->v, n, as_is, &tb);
    if (w->opaque || !bounded(&tb)) return;
    oq_index_table *into = route_table(&w->routes, &w->casts);
    if (!into) {
        w->oom = 1;
        return;
    }
    if (tb.all.size) tighten(&into->all, n, tb.all.axis, tb.all.size);
    for (size_t j = 0; j < OQ_INDEX_TUPLE_MAX; j++)
        if (tb.tuple[j].size) tighten(&into->tuple[j], n, tb.tuple[j].axis, tb.tuple[j].size);
}

/* `n`, passing the input on, onto the route walked now: a Cast the check follows joins its
 * Casts, any other cast (CastLike, an unmodelled type, one too many) makes it opaque. What to
 * undo after the walk beyond it: 1 a Cast, 2 opaque, 0 nothing. */
static int enter(walk *w, const Onnx__NodeProto *n, int32_t from)
{
    int cast = oq_node_is(n, "Cast");
    if (!cast && !oq_node_is(n, "CastLike")) return 0;
    int32_t to = cast ? (int32_t)oq_node_attr_int(n, "to", 0) : 0;
    if (!cast || w->casts.n == OQ_INDEX_CASTS_MAX || !oq_index_cast_followed(from, to)) {
        w->opaque++;
        return 2;
    }
    w->casts.to[w->casts.n] = to;
    snprintf(w->casts.node[w->casts.n++], sizeof w->casts.node[0], "%s", n->name ? n->name : "");
    return 1;
}

static void leave(walk *w, int entered)
{
    if (entered == 2) w->opaque--;
    if (entered != 1) return;
    w->casts.n--; /* (zeroed: routes are told apart by their bytes) */
    w->casts.to[w->casts.n] = 0;
    memset(w->casts.node[w->casts.n], 0, sizeof w->casts.node[0]);
}

/* What a mask or bias is computed through on its way to the scores (any input slot that
 * FLOW_DATA_ONLY does not exclude), and the operators that consume data. */
static const char *const FLOW[] = {"Cast", "CastLike", "Identity", "Not", "Unsqueeze", "Reshape", "Expand", "Squeeze",
                                   "Transpose", "Add", "Sub", "Mul", "Div", "Neg", "Where", "Equal", "Less",
                                   "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Min", "Max",
                                   "Clip", "Tile", "Slice", "Concat", "ReduceSum", NULL};
/* their inputs past the first are shapes, axes or repeats, never data that flows */
static const char *const FLOW_DATA_ONLY[] = {"Unsqueeze", "Reshape", "Expand", "Squeeze", "Tile", "Slice",
                                             "ReduceSum", NULL};
static const char *const DATA[] = {"MatMul", "Gemm", "Conv", "Einsum", NULL};

/* The use the flow finds at input `slot` of `n`: the scores (or the key lengths an Attention-24
 * takes instead of a mask: a [B, L] mask summed) or the data (0: passed on, or neither). */
static unsigned flow_slot(const Onnx__NodeProto *n, size_t slot)
{
    if (oq_node_is(n, "Softmax") && slot == 0) return OQ_USE_SCORES;
    if (is_one_of(n, DATA)) return OQ_USE_DATA;
    int onnx = oq_node_is(n, "Attention"), ms = is_ms(n, "Attention"), mha = is_ms(n, "MultiHeadAttention");
    if ((onnx && (slot == 3 || slot == 6)) || (ms && (slot == 3 || slot == 5)) || (mha && (slot == 4 || slot == 5)))
        return OQ_USE_SCORES;
    if ((onnx && slot <= 2) || (ms && slot == 0) || (mha && slot <= 2)) return OQ_USE_DATA;
    return 0;
}

/* A constant large and negative enough to mask a score: -inf, the dtype's lowest, BERT's -1e4. */
static int masks_scores(const walk *w, const char *value)
{
    double c;
    return value && oq_gview_const_scalar(w->v, value, &c) && c <= -1e4;
}

/* Whether `n` inverts the mask it reads at `slot`: Not, Sub(c, x), Equal(x, 0). */
static int inverts(const walk *w, const Onnx__NodeProto *n, size_t slot)
{
    double c;
    if (oq_node_is(n, "Not")) return 1;
    if (oq_node_is(n, "Sub")) return slot == 1;
    return oq_node_is(n, "Equal") && n->n_input == 2 && oq_gview_const_scalar(w->v, n->input[1 - slot], &c) && c == 0;
}

/* Which value of the input marks a valid position, as `n` reads it at `slot` through `inv`
 * inversions (OQ_USE_SAYS_*; 0: `n` does not tell). */
static unsigned polarity_at(const walk *w, const Onnx__NodeProto *n, size_t slot, int32_t dtype, int inv)
{
    int keep = -1; /* 1: the value n reads is 1 where valid; 0: 1 where padded */
    if (oq_node_is(n, "Where") && slot == 0 && n->n_input == 3) {
        if (masks_scores(w, n->input[1])) keep = 0;
        else if (masks_scores(w, n->input[2])) keep = 1;
    } else if (oq_node_is(n, "Mul") && n->n_input == 2 && masks_scores(w, n->input[1 - slot])) {
        keep = 0;
    } else if ((is_ms(n, "Attention") && slot == 3) || (is_ms(n, "MultiHeadAttention") && slot == 4) ||
               (oq_node_is(n, "Attention") && slot == 3 && dtype == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)) {
        keep = 1;
    }
    if (keep < 0) return 0;
    return (keep ^ inv) ? OQ_USE_SAYS_KEEP : OQ_USE_SAYS_PAD;
}

/* What `n`'s output is on the route `p` took to its input `value` (read at slots whose `passes`
 * it says: the flow goes on through one of them). */
static route route_on(const Onnx__NodeProto *n, const char *value, route p, int passes)
{
    route next = {0};
    next.flows = p.flows && passes;
    next.sum = (p.sum && is_one_of(n, SCORES)) || (p.reaches && is_float(p.dtype) && oq_node_is(n, "Add"));
    if (!p.reaches || !n->n_input || strcmp(n->input[0], value)) return next; /* passed on as data only */
    if (is_one_of(n, KEEP_RANK)) {
        next.reaches = 1;
        next.as_is = p.as_is;
        next.dtype = oq_node_is(n, "Cast") ? (int32_t)oq_node_attr_int(n, "to", 0) : oq_node_is(n, "CastLike") ? 0 : p.dtype;
    } else if (is_one_of(n, CHANGE_RANK)) {
        next.reaches = 1;
        next.dtype = p.dtype;
    }
    return next;
}

static uint32_t route_bit(route p)
{
    return 1u << (p.reaches | p.sum << 1 | p.flows << 2 | p.inv << 3 | p.told << 4);
}

/* `value` onto the path, on route `p`; 0: out of memory (the walk stops, an error). */
static int push(walk *w, const char *value, route p, int entered)
{
    if (w->depth == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        frame *s = realloc(w->stack, cap * sizeof *s);
        if (!s) return !(w->oom = 1);
        w->stack = s;
        w->cap = cap;
    }
    w->stack[w->depth++] = (frame){value, p, 0, oq_gview_consumer_count(w->v, value), entered};
    return 1;
}

/* Node `ni`, a consumer of `value` reached on route `p`: what it uses the input as, and its
 * output onto the path unless walked on that route already. */
static void visit(walk *w, const char *value, route p, size_t ni)
{
    const Onnx__NodeProto *n = w->g->node[ni];
    int passes = 0, flip = 0;
    unsigned said = 0;
    for (size_t slot = 0; slot < n->n_input; slot++) /* a node may read it more than once */
        if (!strcmp(n->input[slot], value)) {
            if (p.reaches) w->uses |= slot_use(n, slot, p.dtype, p.as_is);
            if (p.reaches && slot == 1) bound_route(w, n, p.as_is);
            if (p.flows) w->uses |= flow_slot(n, slot);
            unsigned says = p.flows && !p.told ? polarity_at(w, n, slot, p.reaches ? p.dtype : 0, p.inv) : 0;
            if (says && !w->teller) w->teller = n, w->teller_says = says;
            said |= says;
            flip |= inverts(w, n, slot);
            passes |= is_one_of(n, FLOW) && (slot == 0 || !is_one_of(n, FLOW_DATA_ONLY));
        }
    if (p.sum && oq_node_is(n, "Softmax")) w->uses |= OQ_USE_ADDITIVE;
    w->uses |= said;
    route next = route_on(n, value, p, passes);
    next.inv = p.inv ^ flip;
    next.told = p.told || said;
    if (!n->n_output || !(next.reaches || next.sum || next.flows) || (w->seen[ni] & route_bit(next))) return;
    w->seen[ni] |= route_bit(next);
    int entered = next.reaches ? enter(w, n, p.dtype) : 0;
    if (!push(w, n->output[0], next, entered)) leave(w, entered);
}

/* One walk from the input answers the three questions of inputuse-impl.h: what it reaches, the
 * Softmax a float Add it reaches feeds, what it flows to. Depth first, as far as the graph goes. */
static void walk_from(walk *w, const char *input, route p)
{
    push(w, input, p, 0);
    while (w->depth && !w->oom) {
        frame *f = &w->stack[w->depth - 1];
        if (f->next == f->n_cons) {
            leave(w, f->entered);
            w->depth--;
            continue;
        }
        visit(w, f->value, f->p, oq_gview_consumer(w->v, f->value, f->next++)); /* (may move the stack) */
    }
}

/* The view of m's graph the walks read. */
static oq_status view_of(const Onnx__ModelProto *m, const char *label, oq_gview **v, oq_err *err)
{
    if (!m->graph) return oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ONNX model (no graph)", label);
    int64_t opset = 0;
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (!m->opset_import[i]->domain || !*m->opset_import[i]->domain) opset = m->opset_import[i]->version;
    return oq_gview_create(m->graph, opset, v, err) ? OQ_ERR_NOMEM : OQ_OK;
}

static oq_status uses_of(const Onnx__ModelProto *m, const oq_model_info *mi, const char *label, unsigned **uses,
                         oq_index_routes **tables, char **unchecked, oq_err *err)
{
    *uses = NULL;
    if (unchecked) *unchecked = NULL;
    if (tables) *tables = NULL;
    oq_gview *v;
    oq_status st = view_of(m, label, &v, err);
    if (st) return st;
    /* the model's own indices, before any batch's */
    st = oq_const_indices_check(v, label, unchecked, err);
    if (st) {
        oq_gview_free(v);
        return st;
    }
    unsigned *u = calloc(mi->n_inputs ? mi->n_inputs : 1, sizeof *u);
    oq_index_routes *tb = tables ? calloc(mi->n_inputs + 1, sizeof *tb) : NULL;
    if (tb) tb[mi->n_inputs].n = -1; /* the end: oq_index_routes_free */
    walk *w = malloc(sizeof *w); /* (its tables are some kilobytes) */
    uint32_t *seen = malloc((m->graph->n_node ? m->graph->n_node : 1) * sizeof *seen);
    frame *stack = NULL;
    size_t cap = 0;
    int lost = !w || !seen;
    for (size_t i = 0; u && !lost && (tb || !tables) && i < mi->n_inputs; i++) {
        int32_t type = mi->inputs[i].elem_type;
        memset(seen, 0, m->graph->n_node * sizeof *seen);
        *w = (walk){.v = v, .g = m->graph, .opaque = !oq_idcast_modelled(type), .seen = seen, .stack = stack,
                    .cap = cap};
        walk_from(w, mi->inputs[i].name, (route){1, type, 1, 0, 1, 0, 0});
        stack = w->stack; /* (kept for the next input) */
        cap = w->cap;
        u[i] = w->uses;
        lost = w->oom;
        if (tb) tb[i] = w->routes;
        else routes_clear(&w->routes);
    }
    oq_gview_free(v);
    free(stack);
    free(seen);
    free(w);
    if (!u || lost || (tables && !tb)) {
        free(u);
        oq_index_routes_free(tb);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *uses = u;
    if (tables) *tables = tb;
    return OQ_OK;
}

oq_status oq_model_input_uses_bytes(const void *buf, size_t n, const oq_model_info *mi, const char *label,
                                    unsigned **uses, oq_index_routes **tables, char **unchecked, oq_err *err)
{
    Onnx__ModelProto *m;
    *uses = NULL;
    oq_status st = oq_model_unpack_checked(buf, n, "the model", OQ_UNPACK_LEAN, &m, err);
    if (st) return st;
    st = uses_of(m, mi, label, uses, tables, unchecked, err);
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

oq_status oq_model_unchecked_indices(const Onnx__ModelProto *m, const oq_model_info *mi, const char *label,
                                     char **unchecked, oq_err *err)
{
    unsigned *uses = NULL;
    oq_status st = uses_of(m, mi, label, &uses, NULL, unchecked, err);
    free(uses);
    return st;
}

oq_status oq_model_input_uses_file(const char *path, const oq_model_info *mi, unsigned **uses,
                                   oq_index_routes **tables, oq_err *err)
{
    Onnx__ModelProto *m;
    *uses = NULL;
    oq_status st = oq_model_proto_read(path, &m, err);
    if (st) return st;
    st = uses_of(m, mi, path, uses, tables, NULL, err);
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

/* What the walk's teller does with `input`, in words (polarity_at's cases), into how. */
static void teller_str(const walk *w, const char *input, char *how, size_t n)
{
    const Onnx__NodeProto *t = w->teller;
    int keep = w->teller_says == OQ_USE_SAYS_KEEP, scores = oq_node_is(t, "Where") || oq_node_is(t, "Mul");
    snprintf(how, n, "%s '%s' %s where '%s' is %d", t->op_type, t->name ? t->name : "",
             scores ? "masks the attention scores" : "attends the keys", input, scores ? !keep : keep);
}

oq_status oq_mask_reading_str(const Onnx__ModelProto *m, const char *label, const oq_model_info *mi, const char *input,
                              unsigned *uses, char *how, size_t n, oq_err *err)
{
    *how = 0;
    *uses = 0;
    int32_t type = -1;
    for (size_t i = 0; i < mi->n_inputs; i++)
        if (!strcmp(mi->inputs[i].name, input)) type = mi->inputs[i].elem_type;
    oq_gview *v;
    oq_status st = type < 0 ? OQ_OK : view_of(m, label, &v, err);
    if (st || type < 0) return st;
    walk *w = calloc(1, sizeof *w);
    uint32_t *seen = calloc(m->graph->n_node ? m->graph->n_node : 1, sizeof *seen);
    if (w && seen) {
        *w = (walk){.v = v, .g = m->graph, .opaque = !oq_idcast_modelled(type), .seen = seen};
        walk_from(w, input, (route){1, type, 1, 0, 1, 0, 0});
        if (!w->oom && w->teller) teller_str(w, input, how, n);
        *uses = w->uses;
        routes_clear(&w->routes);
        free(w->stack);
    }
    int oom = !w || !seen || w->oom;
    free(seen);
    free(w);
    oq_gview_free(v);
    return oom ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory") : OQ_OK;
}

unsigned oq_uses_polarity(unsigned uses)
{
    unsigned says = uses & (OQ_USE_SAYS_KEEP | OQ_USE_SAYS_PAD);
    return says == OQ_USE_SAYS_KEEP || says == OQ_USE_SAYS_PAD ? says : 0; /* 0: silent, or the uses disagree */
}

int oq_mask_role_taken(oq_mask_role r)
{
    return r == OQ_MASK_ROLE_NAME || r == OQ_MASK_ROLE_SCORES || r == OQ_MASK_ROLE_OPERATOR;
}

int oq_named_like_mask(const char *name)
{
    for (const char *p = name; p && *p; p++)
        if (!strncasecmp(p, "mask", 4)) return 1;
    return 0;
}

/* A rank-2 input whose two axes are one named dimension is [L, L], never [batch, length]; one
 * whose two axes have one fixed size (a static export's causal [56, 56]) may be either, and a
 * [B, L] mask whose batch equals its length cannot be told from the query x key one: taken, its
 * rows were counted as events. 1: named, 2: fixed sizes, 0: neither. */
static int square(const oq_io_info *in)
{
    if (in->rank != 2 || !in->dims || !in->dims[0] || !in->dims[1] || !*in->dims[0] || !strcmp(in->dims[0], "?") ||
        strcmp(in->dims[0], in->dims[1]))
        return 0;
    return *in->dims[0] < '0' || *in->dims[0] > '9' ? 1 : 2;
}

oq_mask_role oq_input_mask_role(const oq_io_info *in, unsigned uses, int named_only, const char **why)
{
    int named = oq_named_like_mask(in->name);
    if (uses & OQ_USE_ATTN_MASK_AS_IS) {
        *why = "it is an Attention node's attn_mask as it is, which ONNX broadcasts over batch and heads ([Lq, T]: "
               "its axis 0 is the query, not the batch)";
        return OQ_MASK_ROLE_NONE;
    }
    if (uses & OQ_USE_INDICES) {
        *why = "it is the indices of a Gather (token ids or positions)";
        return OQ_MASK_ROLE_NONE;
    }
    if (!named_only && (uses & OQ_USE_KEY_PADDING)) {
        *why = "an attention operator reads it as its key-padding mask";
        return OQ_MASK_ROLE_OPERATOR;
    }
    int sq = square(in);
    if (sq) {
        *why = sq == 1 ? "its two axes are one dimension ([L, L]: a query x key mask or bias, not [batch, length])"
                       : "its two axes have one fixed size, as a query x key [L, L] mask or bias has (a [batch, "
                         "length] mask whose batch equals its length is told by naming it)";
        return OQ_MASK_ROLE_NONE;
    }
    if (!named_only && (uses & (OQ_USE_SCORES | OQ_USE_ADDITIVE))) {
        *why = named ? "its name contains \"mask\" and it flows into the attention scores"
                     : "it flows into the attention scores (a Softmax's input or an attention operator's mask or bias)";
        return OQ_MASK_ROLE_SCORES;
    }
    /* ViT's bool_masked_pos selects the patches the mask token replaces: taken by its name, the
     * positions past its prefix of ones were set apart as padding, unjudged */
    if (named && (uses & OQ_USE_DATA) &&
        !(uses & (OQ_USE_SCORES | OQ_USE_ADDITIVE | OQ_USE_KEY_PADDING))) {
        *why = "the model uses it on its data (it flows into a MatMul, Gemm, Conv or an attention's query, key or "
               "value, as ViT's bool_masked_pos selects the patches the mask token replaces) and never on attention "
               "scores";
        return OQ_MASK_ROLE_NONE;
    }
    *why = named ? "its name contains \"mask\"" : NULL;
    return named ? OQ_MASK_ROLE_NAME : OQ_MASK_ROLE_OTHER;
}
