/* `export encoder`: a small particle-flow-style transformer as ONNX. */
#include <stdio.h>
#include <string.h>

#include "export/attention-impl.h"
#include "ortqual/export.h"
#include "status/args-impl.h"


/* Every weight becomes an initializer under its documented name. */
static const char *weight(oq_graph *g, const oq_encoder_weights *w, const char *fmt, int i)
{
    char name[96];
    snprintf(name, sizeof name, fmt, i);
    const oq_tensor *t = oq_encoder_weight(w, name);
    return t ? oq_graph_add_initializer(g, t, name) : NULL;
}

static const char *linear(oq_graph *g, const oq_encoder_weights *w, const char *x,
                          const char *wfmt, const char *bfmt, int i)
{
    const char *wt = weight(g, w, wfmt, i), *b = weight(g, w, bfmt, i);
    return wt && b ? OP(g, "Add", OP(g, "MatMul", x, wt), b) : NULL;
}

static const char *layer_norm(oq_graph *g, const oq_encoder_weights *w, const char *x,
                              const char *sfmt, const char *bfmt, int i)
{
    const char *s = weight(g, w, sfmt, i), *b = weight(g, w, bfmt, i);
    oq_attr a[] = {OQ_ATTR_I("axis", -1), OQ_ATTR_F("epsilon", w->cfg.ln_epsilon)};
    return s && b ? OPA(g, "LayerNormalization", a, x, s, b) : NULL;
}

/* ELU(alpha 1) from standard ops: Where(x > 0, x, Exp(Min(x, 0)) - 1). Min keeps
 * Exp from overflowing on the branch Where discards. */
static const char *elu(oq_graph *g, const char *x, int as_op)
{
    if (as_op) return x ? OP(g, "Elu", x) : NULL;
    const char *zero = oq_graph_const_f32(g, "zero", 0.0f);
    const char *one = oq_graph_const_f32(g, "one", 1.0f);
    const char *neg = OP(g, "Sub", OP(g, "Exp", OP(g, "Min", x, zero)), one);
    return OP(g, "Where", OP(g, "Greater", x, zero), x, neg);
}

static const char *block(oq_graph *g, const oq_encoder_weights *w, oq_attn_builder *b,
                         const char *h, int i, int elu_op)
{
    const char *a = layer_norm(g, w, h, "blocks.%d.ln1.scale", "blocks.%d.ln1.bias", i);
    const char *q = linear(g, w, a, "blocks.%d.attn.wq", "blocks.%d.attn.bq", i);
    const char *k = linear(g, w, a, "blocks.%d.attn.wk", "blocks.%d.attn.bk", i);
    const char *v = linear(g, w, a, "blocks.%d.attn.wv", "blocks.%d.attn.bv", i);
    char node[48];
    snprintf(node, sizeof node, "blocks.%d.attn", i);
    b->node_name = node; /* so dispatch lines (Node=...) name the block */
    const char *att = oq_attn_build(b, q, k, v);
    const char *o = linear(g, w, att, "blocks.%d.attn.wo", "blocks.%d.attn.bo", i);
    h = o ? OP(g, "Add", h, o) : NULL;
    const char *f = layer_norm(g, w, h, "blocks.%d.ln2.scale", "blocks.%d.ln2.bias", i);
    f = elu(g, linear(g, w, f, "blocks.%d.ffn.w1", "blocks.%d.ffn.b1", i), elu_op);
    f = linear(g, w, f, "blocks.%d.ffn.w2", "blocks.%d.ffn.b2", i);
    return f ? OP(g, "Add", h, f) : NULL;
}

static void describe(const oq_encoder_weights *w, const oq_attn_builder *b, char *doc, size_t n)
{
    const oq_encoder_config *c = &w->cfg;
    char desc[768], heads[256] = "";
    size_t hl = 0;
    for (int i = 0; i < c->n_outputs && hl < sizeof heads; i++)
        hl += (size_t)snprintf(heads + hl, sizeof heads - hl, "%s'%s' [B,L,%d]", i ? ", " : "",
                               c->outputs[i].name, (int)c->outputs[i].dim);
    oq_attn_describe(b, desc, sizeof desc);
    snprintf(doc, n,
             "ortqual encoder: features [B,L,%d] float32 and mask [B,L] float32 (1 valid, 0 "
             "padding; a valid prefix then padding) -> %s. Padded features are replaced by 0, "
             "embedding to width %d, %d pre-LayerNorm blocks (multi-head self-attention over "
             "valid keys only, feed-forward width %d with ELU from standard ops), final "
             "LayerNorm, output heads that are exact zeros on padding. %s",
             (int)c->features, heads, (int)c->width, (int)c->layers, (int)c->ffn_width, desc);
}

oq_status oq_export_encoder(const oq_encoder_weights *w, const oq_encoder_export *x,
                            oq_graph **out, oq_err *err)
{
    OQ_NEED(err, w);
    OQ_NEED(err, out);
    *out = NULL;
    static const oq_encoder_export defaults; /* NULL: the zeroed options */
    if (!x) x = &defaults;
    const oq_encoder_config *c = &w->cfg;
    oq_status s = oq_encoder_config_check(c, err);
    if (s) return s;
    if (oq_mask_form_resolve(x->format, x->mask) == OQ_MASK_NONE)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask none: the encoder always takes a mask");
    oq_dtype adt = x->attention_dtype ? x->attention_dtype : OQ_DTYPE_FLOAT32;
    if ((s = oq_export_check_common(x->format, x->mask, adt, x->static_batch, x->static_seq, err)))
        return s;
    oq_opset ops[] = {{"", oq_attn_format_opset(x->format)}};
    oq_graph *g;
    if ((s = oq_graph_create(ops, 1, "ortqual_encoder", &g, err))) return s;

    oq_dim bd = oq_export_batch_dim(x->static_batch), ld = oq_export_seq_dim(x->static_seq);
    oq_graph_add_input(g, "features", OQ_DTYPE_FLOAT32, 3, (oq_dim[]){bd, ld, OQ_DIM(c->features)});
    oq_graph_add_input(g, "mask", OQ_DTYPE_FLOAT32, 2, (oq_dim[]){bd, ld});
    oq_attn_builder b = {
        .g = g, .format = x->format, .mask = oq_mask_form_resolve(x->format, x->mask),
        .dtype = adt, .heads = c->heads, .kv_heads = c->heads,
        .head_dim = c->width / c->heads, .layout = 3, .mask_in = "mask"};

    /* Sanitize with Where rather than a product: NaN * 0 would still be NaN. */
    const char *h = oq_attn_zero_padding(&b, "features", 1);
    h = linear(g, w, h, "embed.weight", "embed.bias", 0);
    for (int i = 0; i < c->layers; i++) h = block(g, w, &b, h, i, x->elu_op);
    h = layer_norm(g, w, h, "final_ln.scale", "final_ln.bias", 0);
    int added = 0;
    for (int i = 0; i < c->n_outputs && h; i++) {
        char wn[64], bn[64];
        snprintf(wn, sizeof wn, "heads.%s.weight", c->outputs[i].name);
        snprintf(bn, sizeof bn, "heads.%s.bias", c->outputs[i].name);
        const char *y = linear(g, w, h, wn, bn, 0);
        y = y ? oq_attn_zero_padding(&b, y, 1) : NULL;
        if (y && !oq_graph_add_output(g, y, c->outputs[i].name, OQ_DTYPE_FLOAT32, 3,
                                      (oq_dim[]){bd, ld, OQ_DIM(c->outputs[i].dim)}))
            added++;
    }
    char doc[2048];
    describe(w, &b, doc, sizeof doc);
    oq_graph_set_doc(g, doc);
    if (!(s = oq_graph_status(g, err)) && added != c->n_outputs)
        s = oq_err_set(err, OQ_ERR_INVALID_ARG, "a weight of the encoder is missing");
    if (s) {
        oq_graph_free(g);
        return s;
    }
    *out = g;
    return OQ_OK;
}
