/* The decomposed attention matcher (see sdpa-impl.h for what it accepts). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "inspect/heads-impl.h"
#include "inspect/sdpa-impl.h"
#include "ortqual/inspect.h"

static const char *node_name(const Onnx__NodeProto *n)
{
    return n->name ? n->name : "";
}

static const char *op_name(const Onnx__NodeProto *n)
{
    return n->op_type ? n->op_type : "";
}

static int op_in(const Onnx__NodeProto *n, const char *const *ops)
{
    for (; *ops; ops++)
        if (oq_node_is(n, *ops)) return 1;
    return 0;
}

/* ---- stage 1: the shape ------------------------------------------------------------------ */

/* Walk back from `value` to a MatMul through score-side ops; the op types are
 * appended to `path` (outermost last). */
static const Onnx__NodeProto *matmul_before(const oq_gview *v, const char *value, int depth,
                                            char *path, size_t cap, size_t *idx, int *budget)
{
    static const char *const pass[] = {"Mul", "Div", "Add", "Sub", "Where", "Cast", NULL};
    size_t pi;
    const Onnx__NodeProto *n = oq_gview_producer(v, value, &pi);
    if (!n || depth > 8 || --*budget < 0) return NULL;
    if (oq_node_is(n, "MatMul")) {
        snprintf(path, cap, "MatMul '%s'", node_name(n));
        *idx = pi;
        return n;
    }
    if (!op_in(n, pass)) return NULL;
    for (size_t i = 0; i < n->n_input; i++) {
        const Onnx__NodeProto *m = matmul_before(v, n->input[i], depth + 1, path, cap, idx, budget);
        if (m) {
            size_t w = strlen(path);
            snprintf(path + w, cap - w, " -> %s", op_name(n));
            return m;
        }
    }
    return NULL;
}

/* Walk forward from `value` to a MatMul that takes it as first input. */
static const Onnx__NodeProto *matmul_after(const oq_gview *v, const char *value, int depth,
                                           char *path, size_t cap, size_t *idx, int *budget)
{
    static const char *const pass[] = {"Cast", "Where", "Mul", NULL};
    if (depth > 4 || --*budget < 0) return NULL;
    const Onnx__GraphProto *g = oq_gview_graph(v);
    for (size_t i = 0, nc = oq_gview_consumer_count(v, value); i < nc; i++) {
        size_t ni = oq_gview_consumer(v, value, i);
        const Onnx__NodeProto *n = g->node[ni];
        if (oq_node_is(n, "MatMul") && n->n_input && !strcmp(n->input[0], value)) {
            snprintf(path, cap, " -> MatMul '%s'", node_name(n));
            *idx = ni;
            return n;
        }
        if (op_in(n, pass) && n->n_output) {
            int w = snprintf(path, cap, " -> %s", op_name(n));
            if (w < 0 || (size_t)w >= cap) return NULL;
            const Onnx__NodeProto *m = matmul_after(v, n->output[0], depth + 1, path + w, cap - (size_t)w, idx, budget);
            if (m) return m;
        }
    }
    return NULL;
}

/* ---- stage 2: the function ----------------------------------------------------------------- */

static int refuse(oq_sdpa_match *m, oq_sdpa_verdict verdict, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(oq_sdpa_match *m, oq_sdpa_verdict verdict, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, sizeof m->why, fmt, ap);
    va_end(ap);
    m->verdict = verdict;
    return 1;
}

/* `what` `value` (Q, K, V, the scores) is not of rank `want`: its rank, or where its shape is
 * unknown, the tensor whose shape the inference could not work out and what to declare. */
static int refuse_rank(oq_symctx *sc, oq_sdpa_match *m, const char *what, const char *value, int want)
{
    int r = oq_sym_rank(sc, value);
    if (r >= 0) return refuse(m, OQ_SDPA_UNSUPPORTED, "%s '%s' is of rank %d, not %d", what, value, r, want);
    const Onnx__NodeProto *at;
    const char *x = oq_sym_unknown_from(sc, value, &at);
    if (!at)
        return refuse(m, OQ_SDPA_UNSUPPORTED, "the rank of %s '%s' is unknown: '%s' declares no shape; declare its "
                      "shape (value_info) or export with shape inference", what, value, x);
    return refuse(m, OQ_SDPA_UNSUPPORTED, "the rank of %s '%s' is unknown: shapes are not inferred through %s '%s' "
                  "(output '%s'); declare the shape of '%s' (value_info) or export with shape inference", what, value,
                  op_name(at), node_name(at), x, x);
}

/* Does `value` come from node `target` through score-side ops only? */
static int reaches(const oq_gview *v, const char *value, size_t target, int depth, int *budget)
{
    static const char *const pass[] = {"Mul", "Div", "Add", "Sub", "Where", "Cast", NULL};
    size_t pi;
    const Onnx__NodeProto *n = oq_gview_producer(v, value, &pi);
    if (!n || depth > 8 || --*budget < 0) return 0;
    if (pi == target) return 1;
    if (!op_in(n, pass)) return 0;
    for (size_t i = 0; i < n->n_input; i++)
        if (reaches(v, n->input[i], target, depth + 1, budget)) return 1;
    return 0;
}

/* A constant scalar a fused node may fix. An input with a default (keep_initializers_as_inputs)
 * is none: a value fed for it would be ignored once folded. Its factor on Q or K stays a node
 * that feeds the fused one; anywhere else the chain is refused, naming it (by_default). */
static int fixed_scalar(const oq_gview *v, const char *value, double *out)
{
    return !oq_gview_default_input(v, value) && oq_gview_const_scalar(v, value, out);
}

static int by_default(oq_sdpa_match *m, const char *what, const char *input)
{
    m->default_input = input;
    return refuse(m, OQ_SDPA_UNSUPPORTED, "%s '%s', a graph input with a default (the initializer of its name): "
                  "a fused node would fix that value and ignore one fed for it", what, input);
}

/* The value under constant scalar Mul/Div nodes, their factors multiplied into *scale.
 * 0 when a factor is not positive and finite. */
static int unscale(const oq_gview *v, const char **value, double *scale)
{
    for (int depth = 0; depth < 8; depth++) {
        const Onnx__NodeProto *p = oq_gview_producer(v, *value, NULL);
        int mul = oq_node_is(p, "Mul"), div = oq_node_is(p, "Div");
        if ((!mul && !div) || p->n_input != 2) return 1;
        double c;
        int side = fixed_scalar(v, p->input[1], &c) ? 0 : mul && fixed_scalar(v, p->input[0], &c) ? 1 : -1;
        if (side < 0) return 1; /* not a constant factor: the base is this node's output */
        if (!(c > 0) || !isfinite(c)) return 0;
        *scale *= mul ? c : 1.0 / c;
        *value = p->input[side];
    }
    return 1;
}

static int perm_is(const Onnx__NodeProto *n, const int64_t *want, size_t len)
{
    size_t k;
    const int64_t *perm = oq_node_attr_ints(n, "perm", &k);
    if (!perm || k != len) return 0;
    for (size_t i = 0; i < k; i++)
        if (perm[i] != want[i]) return 0;
    return 1;
}

/* torch's transpose of the last two axes of a rank-4 K:
 * Reshape(Transpose(Reshape(K, [-1, L, D]), [0,2,1]), [B, H, D, L]). */
static const char *kt_by_reshape(const oq_gview *v, oq_symctx *sc, const Onnx__NodeProto *r2)
{
    static const int64_t p021[] = {0, 2, 1};
    const Onnx__NodeProto *t = r2->n_input == 2 ? oq_gview_producer(v, r2->input[0], NULL) : NULL;
    if (!oq_node_is(t, "Transpose") || t->n_input != 1 || !perm_is(t, p021, 3)) return NULL;
    const Onnx__NodeProto *r1 = oq_gview_producer(v, t->input[0], NULL);
    if (!oq_node_is(r1, "Reshape") || r1->n_input != 2) return NULL;
    const char *k = r1->input[0];
    oq_symdim kd[OQ_SYM_MAX_RANK], s[OQ_SYM_MAX_RANK], a[OQ_SYM_MAX_RANK], b[OQ_SYM_MAX_RANK];
    if (oq_sym_shape(sc, k, kd, OQ_SYM_MAX_RANK) != 4) return NULL;
    int n = oq_sym_vec(sc, r1->input[1], s, OQ_SYM_MAX_RANK);
    if (n != 3 || oq_sym_reshape(kd, 4, s, n, (int)oq_node_attr_int(r1, "allowzero", 0), a) != 3) return NULL;
    /* the first Reshape merges B and H only */
    if (!oq_symdim_eq(a[0], oq_symdim_mul(kd[0], kd[1])) || !oq_symdim_eq(a[1], kd[2]) || !oq_symdim_eq(a[2], kd[3]))
        return NULL;
    oq_symdim tr[3] = {a[0], a[2], a[1]};
    n = oq_sym_vec(sc, r2->input[1], s, OQ_SYM_MAX_RANK);
    if (n != 4 || oq_sym_reshape(tr, 3, s, n, (int)oq_node_attr_int(r2, "allowzero", 0), b) != 4) return NULL;
    /* ... and the second splits them again */
    if (!oq_symdim_eq(b[0], kd[0]) || !oq_symdim_eq(b[1], kd[1]) || !oq_symdim_eq(b[2], kd[3]) || !oq_symdim_eq(b[3], kd[2]))
        return NULL;
    return k;
}

static int key_side(const oq_gview *v, oq_symctx *sc, oq_sdpa_match *m, const char *kt)
{
    static const int64_t p0132[] = {0, 1, 3, 2}, p0231[] = {0, 2, 3, 1};
    if (!unscale(v, &kt, &m->scale)) return refuse(m, OQ_SDPA_UNSUPPORTED, "a key scale that is not a positive constant");
    const Onnx__NodeProto *p = oq_gview_producer(v, kt, NULL);
    const char *k = NULL;
    int transpose = oq_node_is(p, "Transpose") && p->n_input == 1;
    if (transpose && perm_is(p, p0132, 4)) {
        m->kform = OQ_SDPA_KT_TRANSPOSE;
        k = p->input[0];
    } else if (transpose && perm_is(p, p0231, 4)) {
        m->kform = OQ_SDPA_KT_HEADS;
        k = p->input[0];
    } else if (oq_node_is(p, "Reshape") && (k = kt_by_reshape(v, sc, p))) {
        m->kform = OQ_SDPA_KT_RESHAPE;
    } else {
        return refuse(m, OQ_SDPA_UNSUPPORTED, "the key operand '%s' is not a transpose of K's last two axes", kt);
    }
    if (!unscale(v, &k, &m->scale)) return refuse(m, OQ_SDPA_UNSUPPORTED, "a key scale that is not a positive constant");
    if (oq_sym_rank(sc, k) != 4) return refuse_rank(sc, m, "K", k, 4);
    m->k = k;
    return 0;
}

/* The key operand of folded scores: Transpose(0,2,1) of a folded K, or the fold's own
 * Transpose(1,2,0). */
static int key_fold(const oq_gview *v, oq_symctx *sc, oq_sdpa_match *m, const char *kt, oq_mha_fold *f)
{
    static const int64_t p021[] = {0, 2, 1}, p102[] = {1, 0, 2}, p120[] = {1, 2, 0};
    const Onnx__NodeProto *p = oq_gview_producer(v, kt, NULL);
    if (oq_node_is(p, "Transpose") && p->n_input == 1 && perm_is(p, p021, 3)) {
        const char *k = p->input[0];
        if (!unscale(v, &k, &m->scale)) return 0;
        return oq_mha_fold_of(v, sc, k, p102, f);
    }
    return oq_mha_fold_of(v, sc, kt, p120, f);
}

/* [B*H, L, D] products: Q, K and V each nn.MultiheadAttention's fold, of one H and D. */
static int folded_side(const oq_gview *v, oq_symctx *sc, oq_sdpa_match *m, const Onnx__NodeProto *mm, const char *val)
{
    static const int64_t p102[] = {1, 0, 2};
    static const char *const what[] = {"Q", "K", "V"};
    const char *q = mm->input[0], *kt = mm->input[1];
    oq_mha_fold f[3];
    if (!unscale(v, &q, &m->scale) || !unscale(v, &kt, &m->scale))
        return refuse(m, OQ_SDPA_UNSUPPORTED, "a query or key scale that is not a positive constant");
    int got[3] = {oq_mha_fold_of(v, sc, q, p102, &f[0]), key_fold(v, sc, m, kt, &f[1]), oq_mha_fold_of(v, sc, val, p102, &f[2])};
    if (!got[0] && !got[1] && !got[2])
        return refuse(m, OQ_SDPA_UNSUPPORTED, "rank-3 scores; only [B, H, Lq, Lk] and nn.MultiheadAttention's fold "
                      "([L, B, E] -> Reshape [L, B*H, D] -> Transpose(1,0,2)) are rewritten");
    for (int i = 0; i < 3; i++)
        if (!got[i]) return refuse(m, OQ_SDPA_UNSUPPORTED, "%s '%s' is not folded as nn.MultiheadAttention folds "
                                   "([L, B, E] -> Reshape [L, B*H, D] -> Transpose(1,0,2))", what[i], i ? i == 1 ? kt : val : q);
    for (int i = 1; i < 3; i++)
        if (f[i].heads != f[0].heads || f[i].head_dim != f[0].head_dim) {
            m->fold_heads = -1;
            return refuse(m, OQ_SDPA_UNSUPPORTED, "Q is folded into %lld heads of %lld (Reshape '%s'), %s into %lld "
                          "heads of %lld (Reshape '%s'): the products pair heads that are not the same",
                          (long long)f[0].heads, (long long)f[0].head_dim, node_name(f[0].reshape), what[i],
                          (long long)f[i].heads, (long long)f[i].head_dim, node_name(f[i].reshape));
        }
    m->q = f[0].x;
    m->k = f[1].x;
    m->v = f[2].x;
    m->kform = OQ_SDPA_KT_FOLD;
    m->fold_heads = f[0].heads;
    m->fold_dim = f[0].head_dim;
    return 0;
}

/* A constant's shape as "[1, 2, 1, 1]" into buf. */
static const char *shape_text(const Onnx__TensorProto *t, char *buf, size_t cap)
{
    size_t w = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < t->n_dims && w < cap; i++)
        w += (size_t)snprintf(buf + w, cap - w, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    if (w < cap) snprintf(buf + w, cap - w, "]");
    return buf;
}

/* Constant t holds one number, which the caller could not read: said as "a float32 scalar in
 * external data" (or of a type not read); NULL when it holds another count. */
static const char *unread_scalar(const Onnx__TensorProto *t, char *buf, size_t cap)
{
    for (size_t i = 0; i < t->n_dims; i++)
        if (t->dims[i] != 1) return NULL;
    int external = t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    snprintf(buf, cap, "a %s scalar%s", oq_elem_type_name(t->data_type), external ? " in external data" : "");
    return buf;
}

/* Node p (input `path` on the score chain) is none the fuse takes: the rule it breaks, then
 * the node, so the reader learns what to change, not only where. */
static int refuse_score_op(const oq_gview *v, oq_sdpa_match *m, const Onnx__NodeProto *p, int path)
{
    int mul = oq_node_is(p, "Mul"), div = oq_node_is(p, "Div");
    const char *other = p->n_input == 2 ? p->input[1 - path] : NULL;
    const Onnx__TensorProto *t = other && (mul || div) ? oq_gview_const_proto(v, other) : NULL;
    char dims[96];
    if (t && (mul || path == 0) && unread_scalar(t, dims, sizeof dims))
        return refuse(m, OQ_SDPA_UNSUPPORTED, "a score scale that is not read: %s '%s' by '%s', %s", op_name(p),
                      node_name(p), other, dims);
    if (t && (mul || path == 0))
        return refuse(m, OQ_SDPA_UNSUPPORTED, "a score scale that is not a scalar: %s '%s' by '%s' of shape %s "
                      "(Attention's scale is one number)", op_name(p), node_name(p), other,
                      shape_text(t, dims, sizeof dims));
    return refuse(m, OQ_SDPA_UNSUPPORTED, "%s '%s' between the score product and the softmax: only positive "
                  "constant scalar scales, additive terms (Add) and Where masks are fused there", op_name(p),
                  node_name(p));
}

/* A shape as "[1, 3, s, s]" into buf. */
static const char *sym_text(oq_symctx *sc, const oq_symdim *d, int r, char *buf, size_t cap)
{
    size_t w = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < r && w < cap; i++) {
        char one[64];
        w += (size_t)snprintf(buf + w, cap - w, "%s%s", i ? ", " : "", oq_symdim_str(sc, d[i], one, sizeof one));
    }
    if (w < cap) snprintf(buf + w, cap - w, "]");
    return buf;
}

/* The dim's size when it is a constant, else -1. */
static int64_t const_dim(oq_symdim d)
{
    return oq_symdim_known(d) && d.n == 0 ? d.coef : -1;
}

/* A mask operand must broadcast to the scores (Attention's attn_mask to [B, H, Lq, Lk]): one that
 * widens them (a bias of 3 heads on scores of 1) would change the product's shape. Refused only
 * where the shapes prove it; an unknown dim is left to the check, which runs both models. */
static int broadcasts_to_scores(oq_symctx *sc, oq_sdpa_match *m, const Onnx__NodeProto *p, const char *x,
                                const char *scores)
{
    oq_symdim d[OQ_SYM_MAX_RANK], s[OQ_SYM_MAX_RANK];
    int r = oq_sym_shape(sc, x, d, OQ_SYM_MAX_RANK), rs = oq_sym_shape(sc, scores, s, OQ_SYM_MAX_RANK);
    if (r < 0 || rs < 0) return 0;
    int bad = r > rs;
    for (int i = 0; !bad && i < r; i++) {
        oq_symdim a = d[r - 1 - i], b = s[rs - 1 - i];
        int64_t ca = const_dim(a), cb = const_dim(b);
        bad = ca > 1 && cb >= 0 && ca != cb;
    }
    if (!bad) return 0;
    char dt[160], st[160];
    return refuse(m, OQ_SDPA_UNSUPPORTED, "%s '%s' applies '%s' of shape %s to scores of shape %s: it does not "
                  "broadcast to the scores, as Attention's attn_mask must ([B, H, Lq, Lk])", op_name(p), node_name(p),
                  x, sym_text(sc, d, r, dt, sizeof dt), sym_text(sc, s, rs, st, sizeof st));
}

/* One more Where mask at node p (`path`: the input the scores come in by). Several are one mask,
 * the AND of their keep-masks, since each fill excludes the keys it masks (the chain's length
 * bounds their number: OQ_SDPA_WHERES_MAX is OQ_SDPA_CHAIN_MAX). */
static int add_where(const oq_gview *v, oq_sdpa_match *m, const Onnx__NodeProto *p, int path)
{
    oq_sdpa_where *w = &m->wheres[m->n_wheres++];
    w->kind = path == 1 ? OQ_SDPA_MASK_KEEP : OQ_SDPA_MASK_DROP;
    w->cond = p->input[0];
    w->fill_value = p->input[path == 1 ? 2 : 1];
    if (m->n_wheres == 1) {
        m->mask = w->kind;
        m->mask_value = w->cond;
    }
    const Onnx__TensorProto *t = oq_gview_const_proto(v, w->fill_value);
    char why[96];
    if (oq_gview_const_scalar(v, w->fill_value, &w->fill)) return 0;
    if (t && unread_scalar(t, why, sizeof why))
        return refuse(m, OQ_SDPA_UNSUPPORTED, "Where '%s' fills masked scores with '%s', %s, which is not read",
                      node_name(p), w->fill_value, why);
    return refuse(m, OQ_SDPA_UNSUPPORTED, "Where '%s' fills masked scores with a non-constant value", node_name(p));
}

/* One more mask term at node p: an additive one (Add) or a Where. A factor met since the last
 * term (*outer, then this one's) would scale that term too (`(s + a) * c + b`), which `scale`
 * cannot say. */
static int add_term(const oq_gview *v, oq_symctx *sc, oq_sdpa_match *m, const Onnx__NodeProto *p, int path,
                    const Onnx__NodeProto *scaled, const char **outer)
{
    const char *other = oq_node_is(p, "Add") ? p->input[1 - path] : p->input[0];
    if (scaled && *outer)
        return refuse(m, OQ_SDPA_UNSUPPORTED, "%s '%s' scales the scores between two mask terms ('%s' and '%s'): "
                      "the outer term would not be scaled, the inner one would", op_name(scaled), node_name(scaled),
                      *outer, other);
    *outer = other;
    if (broadcasts_to_scores(sc, m, p, other, oq_gview_graph(v)->node[m->score_mm]->output[0])) return 1;
    if (!oq_node_is(p, "Add")) return add_where(v, m, p, path);
    if (m->n_terms == OQ_SDPA_TERMS_MAX)
        return refuse(m, OQ_SDPA_UNSUPPORTED, "more than %d additive terms on the scores", OQ_SDPA_TERMS_MAX);
    m->terms[m->n_terms++] = other;
    if (m->mask == OQ_SDPA_MASK_NONE) {
        m->mask = OQ_SDPA_MASK_ADD;
        m->mask_value = other;
    }
    return 0;
}

/* Each Where's fill, scaled by the factors after it (`after`), must still exclude its keys. */
static int fills_exclude(oq_sdpa_match *m, double after)
{
    for (int i = 0; i < m->n_wheres; i++) {
        m->wheres[i].fill *= after;
        if (!(m->wheres[i].fill <= OQ_SDPA_FILL_MAX))
            return refuse(m, OQ_SDPA_UNSUPPORTED, "masked scores are filled with %g%s%s%s, which does not exclude a key",
                          m->wheres[i].fill, m->n_wheres > 1 ? " (the mask '" : "",
                          m->n_wheres > 1 ? m->wheres[i].cond : "", m->n_wheres > 1 ? "')" : "");
    }
    return 0;
}

/* From the Softmax input back to the score MatMul: scales, the additive terms and the Where mask. */
static int score_side(const oq_gview *v, oq_symctx *sc, oq_sdpa_match *m, const char *value)
{
    double after_mask = 1.0; /* factors applied after the mask (met first, walking back) */
    const Onnx__NodeProto *scaled = NULL; /* a factor met since the last term */
    const char *outer = NULL;             /* that term */
    for (int depth = 0; depth < OQ_SDPA_CHAIN_MAX; depth++) {
        size_t pi;
        const Onnx__NodeProto *p = oq_gview_producer(v, value, &pi);
        if (pi == m->score_mm) break;
        int path = -1;
        int budget = 512;
        for (size_t i = 0; p && i < p->n_input && path < 0; i++)
            if (reaches(v, p->input[i], m->score_mm, 0, &budget)) path = (int)i;
        if (path < 0) return refuse(m, OQ_SDPA_UNSUPPORTED, "the score chain could not be followed");
        double c;
        const char *fed = NULL;
        if ((oq_node_is(p, "Mul") || oq_node_is(p, "Div")) && p->n_input == 2 &&
            (fed = oq_gview_default_input(v, p->input[1 - path])))
            return by_default(m, "the scores are scaled by", fed);
        if (oq_node_is(p, "Where") && p->n_input == 3 && path > 0 &&
            (fed = oq_gview_default_input(v, p->input[path == 1 ? 2 : 1])))
            return by_default(m, "masked scores are filled with", fed);
        if ((oq_node_is(p, "Mul") || oq_node_is(p, "Div")) && p->n_input == 2 &&
            oq_gview_const_scalar(v, p->input[1 - path], &c) && (path == 0 || oq_node_is(p, "Mul"))) {
            if (!(c > 0) || !isfinite(c))
                return refuse(m, OQ_SDPA_UNSUPPORTED, "a score scale that is not a positive constant");
            double f = oq_node_is(p, "Mul") ? c : 1.0 / c;
            if (m->mask == OQ_SDPA_MASK_NONE) after_mask *= f;
            else m->scale *= f;
            if (m->mask != OQ_SDPA_MASK_NONE) scaled = p;
        } else if ((oq_node_is(p, "Add") && p->n_input == 2) ||
                   (oq_node_is(p, "Where") && p->n_input == 3 && path > 0)) {
            if (add_term(v, sc, m, p, path, scaled, &outer)) return 1;
            scaled = NULL;
        } else {
            return refuse_score_op(v, m, p, path);
        }
        value = p->input[path];
        if (depth == OQ_SDPA_CHAIN_MAX - 1) return refuse(m, OQ_SDPA_UNSUPPORTED, "the score chain is too long");
    }
    if (m->mask == OQ_SDPA_MASK_NONE) {
        m->scale *= after_mask;
    } else if (after_mask != 1.0) {
        if (m->n_terms)
            return refuse(m, OQ_SDPA_UNSUPPORTED, "the scores are scaled after the additive mask is added");
        m->scale *= after_mask; /* Where masks: the fills scale along, checked below */
    }
    return fills_exclude(m, after_mask);
}

int oq_sdpa_mask_combined(const oq_sdpa_match *m)
{
    return m->n_terms > 1 || (m->n_terms && m->n_wheres);
}

const char *oq_sdpa_mask_text(const oq_sdpa_match *m, char *buf, size_t n)
{
    const char *s = m->n_terms == 1 ? "" : "s";
    int w = m->n_wheres < 0 ? 0 : m->n_wheres;
    char wheres[32];
    if (w == 1) snprintf(wheres, sizeof wheres, "Where mask");
    else snprintf(wheres, sizeof wheres, "%d Where masks", w);
    if (!w && !m->n_terms) snprintf(buf, n, "no mask");
    else if (!w && m->n_terms == 1) snprintf(buf, n, "additive mask");
    else if (!w) snprintf(buf, n, "additive mask of %d terms", m->n_terms);
    else if (!m->n_terms) snprintf(buf, n, "%s", wheres);
    else snprintf(buf, n, "%s and %d additive term%s", wheres, m->n_terms, s);
    return buf;
}

/* Between the softmax and the value product: nothing, or the IsNaN guard. */
static int prob_side(const oq_gview *v, oq_sdpa_match *m, const char *p_value, const char *read)
{
    if (!strcmp(read, p_value)) return 0;
    const Onnx__NodeProto *w = oq_gview_producer(v, read, NULL);
    double z;
    const Onnx__NodeProto *nan = w && w->n_input == 3 ? oq_gview_producer(v, w->input[0], NULL) : NULL;
    const char *fed = oq_node_is(w, "Where") && w->n_input == 3 ? oq_gview_default_input(v, w->input[1]) : NULL;
    if (fed) return by_default(m, "the softmax's guard fills NaN rows with", fed);
    if (oq_node_is(w, "Where") && w->n_input == 3 && !strcmp(w->input[2], p_value) &&
        oq_gview_const_scalar(v, w->input[1], &z) && z == 0 && oq_node_is(nan, "IsNaN") && nan->n_input == 1 &&
        !strcmp(nan->input[0], p_value)) {
        m->guard = 1;
        return 0;
    }
    return refuse(m, OQ_SDPA_UNSUPPORTED, "%s '%s' between the softmax and the value product",
                  w ? op_name(w) : "?", w ? node_name(w) : read);
}

static int value_end(const oq_gview *v, oq_sdpa_match *m, const Onnx__NodeProto *s, const Onnx__NodeProto *out)
{
    if (prob_side(v, m, s->output[0], out->input[0])) return 1;
    if (!out->n_output || !*out->output[0])
        return refuse(m, OQ_SDPA_UNSUPPORTED, "the value MatMul '%s' has no output", node_name(out));
    return 0;
}

/* Rank-3 scores, after the score side: the fold, then the value product. */
static int fold_end(const oq_gview *v, oq_symctx *sc, oq_sdpa_match *m, const Onnx__NodeProto *s,
                    const Onnx__NodeProto *mm, const Onnx__NodeProto *out)
{
    if (out->n_input != 2) return refuse(m, OQ_SDPA_UNSUPPORTED, "the value MatMul '%s' has %zu inputs, not 2",
                                         node_name(out), out->n_input);
    if (folded_side(v, sc, m, mm, out->input[1]) || value_end(v, m, s, out)) return 1;
    m->verdict = OQ_SDPA_FUSABLE;
    return 1;
}

int oq_sdpa_match_softmax(const oq_gview *v, oq_symctx *sc, size_t softmax, oq_sdpa_match *m)
{
    memset(m, 0, sizeof *m);
    const Onnx__NodeProto *s = oq_gview_graph(v)->node[softmax];
    if (!oq_node_is(s, "Softmax") || !s->n_input || !s->n_output) return 0;
    char before[768], after[256];
    int budget = 512; /* a graph that shares values could make these walks exponential */
    if (!matmul_before(v, s->input[0], 0, before, sizeof before, &m->score_mm, &budget)) return 0;
    budget = 512;
    const Onnx__NodeProto *out = matmul_after(v, s->output[0], 0, after, sizeof after, &m->out_mm, &budget);
    if (!out) return 0;
    snprintf(m->chain, sizeof m->chain, "%s -> Softmax '%.300s'%s", before, node_name(s), after);
    m->softmax = softmax;
    m->scale = 1.0;
    const Onnx__NodeProto *mm = oq_gview_graph(v)->node[m->score_mm];
    if (mm->n_input != 2) return refuse(m, OQ_SDPA_UNSUPPORTED, "the score MatMul has %zu inputs, not 2", mm->n_input);
    int rank = oq_sym_rank(sc, mm->output[0]);
    if (rank < 0) rank = oq_sym_rank(sc, mm->input[0]);
    int64_t axis = oq_node_attr_int(s, "axis", oq_gview_opset(v) >= 13 ? -1 : 1);
    if (rank < 0) return refuse_rank(sc, m, "the scores", mm->output[0], 4);
    if (axis < 0) axis += rank;
    if (axis >= 0 && axis < rank - 1 && oq_gview_opset(v) < 13) /* before 13 Softmax flattens at its axis */
        return refuse(m, OQ_SDPA_NOT_ATTENTION, "softmax over axes %lld..%d of %d flattened into one (a Softmax of "
                      "opset %lld normalises over its axis and every axis after it), not over the keys (the last "
                      "axis) alone", (long long)axis, rank - 1, rank, (long long)oq_gview_opset(v));
    if (axis != rank - 1)
        return refuse(m, OQ_SDPA_NOT_ATTENTION, "softmax over axis %lld of %d%s, not over the keys (the last axis)",
                      (long long)axis, rank, axis == rank - 2 ? " (the query axis)" : "");
    if (rank != 4 && rank != 3)
        return refuse(m, OQ_SDPA_UNSUPPORTED, "rank-%d scores%s; only [B, H, Lq, Lk] is rewritten", rank,
                      rank == 5 ? " (grouped-query heads)" : "");
    if (score_side(v, sc, m, s->input[0])) return 1;
    if (rank == 3) return fold_end(v, sc, m, s, mm, out);
    const char *q = mm->input[0];
    if (!unscale(v, &q, &m->scale)) return refuse(m, OQ_SDPA_UNSUPPORTED, "a query scale that is not a positive constant");
    if (oq_sym_rank(sc, q) != 4) return refuse_rank(sc, m, "Q", q, 4);
    m->q = q;
    if (key_side(v, sc, m, mm->input[1])) return 1;
    if (value_end(v, m, s, out)) return 1;
    if (out->n_input != 2)
        return refuse(m, OQ_SDPA_UNSUPPORTED, "the output MatMul has %zu inputs, not 2", out->n_input);
    if (oq_sym_rank(sc, out->input[1]) != 4) return refuse_rank(sc, m, "V", out->input[1], 4);
    m->v = out->input[1];
    m->verdict = OQ_SDPA_FUSABLE;
    return 1;
}
