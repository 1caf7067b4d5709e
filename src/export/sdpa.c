/* `export sdpa`: an attention-only model for scaling studies. */
#include <stdio.h>
#include <string.h>

#include "export/attention-impl.h"
#include "ortqual/export.h"
#include "status/args-impl.h"

void oq_sdpa_config_default(oq_sdpa_config *c)
{
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->heads = 4;
    c->kv_heads = 4;
    c->head_dim = 16;
    c->layout = 4;
    c->format = OQ_ATTN_DECOMPOSED;
    c->mask = OQ_MASK_AUTO;
    c->attention_dtype = OQ_DTYPE_FLOAT32;
}

oq_dim oq_export_batch_dim(int64_t fixed)
{
    return fixed ? OQ_DIM_DENOTED(fixed, OQ_DENOTATION_BATCH) : OQ_DIM_SYM("batch");
}

oq_dim oq_export_seq_dim(int64_t fixed)
{
    return fixed ? OQ_DIM_DENOTED(fixed, OQ_DENOTATION_TIME) : OQ_DIM_SYM("seq");
}

oq_status oq_export_check_common(oq_attn_format f, oq_mask_form m, oq_dtype dt, int64_t sb,
                                 int64_t sl, oq_err *err)
{
    if (f < OQ_ATTN_DECOMPOSED || f > OQ_ATTN_ATTENTION24)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "format: unknown representation %d", (int)f);
    if (dt != OQ_DTYPE_FLOAT32 && dt != OQ_DTYPE_FLOAT16)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "attention_dtype %s: only float32 and float16 are supported",
                          oq_dtype_name(dt));
    if ((sb == 0) != (sl == 0) || sb < 0 || sl < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "static_batch %lld, static_seq %lld: both positive (static) or both 0 (dynamic)",
                          (long long)sb, (long long)sl);
    oq_mask_form r = oq_mask_form_resolve(f, m);
    if (r == OQ_MASK_SEQLEN && f != OQ_ATTN_ATTENTION24)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "mask seqlen needs format attention24 (nonpad_kv_seqlen is an opset-24 input)");
    if (r < OQ_MASK_NONE || r > OQ_MASK_SEQLEN)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask: unknown form %d", (int)m);
    return OQ_OK;
}

oq_status oq_sdpa_config_check(const oq_sdpa_config *c, oq_err *err)
{
    OQ_NEED(err, c);
    if (c->heads < 1 || c->kv_heads < 1 || c->head_dim < 1)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "heads %d, kv_heads %d, head_dim %d: all must be positive",
                          (int)c->heads, (int)c->kv_heads, (int)c->head_dim);
    if (c->heads % c->kv_heads)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "kv_heads %d does not divide heads %d",
                          (int)c->kv_heads, (int)c->heads);
    if (c->layout != 3 && c->layout != 4)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "layout %d: use 3 ([B,L,H*D]) or 4 ([B,H,L,D])",
                          (int)c->layout);
    oq_dtype io = c->io_dtype ? c->io_dtype : OQ_DTYPE_FLOAT32;
    if (io != OQ_DTYPE_FLOAT32 && io != OQ_DTYPE_FLOAT16)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "io_dtype %s: only float32 and float16 are supported",
                          oq_dtype_name(io));
    if (io == OQ_DTYPE_FLOAT16 &&
        (c->attention_dtype != OQ_DTYPE_FLOAT16 || oq_mask_form_resolve(c->format, c->mask) != OQ_MASK_NONE))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "io_dtype float16 needs attention_dtype float16 and mask none (unmasked)");
    return oq_export_check_common(c->format, c->mask, c->attention_dtype, c->static_batch,
                                  c->static_seq, err);
}

static void io_dims(const oq_sdpa_config *c, int32_t heads, oq_dim *d)
{
    oq_dim bd = oq_export_batch_dim(c->static_batch), ld = oq_export_seq_dim(c->static_seq);
    if (c->layout == 3) {
        d[0] = bd;
        d[1] = ld;
        d[2] = OQ_DIM((int64_t)heads * c->head_dim);
    } else {
        d[0] = bd;
        d[1] = OQ_DIM(heads);
        d[2] = ld;
        d[3] = OQ_DIM(c->head_dim);
    }
}

oq_status oq_export_sdpa(const oq_sdpa_config *c, oq_graph **out, oq_err *err)
{
    OQ_NEED(err, c);
    OQ_NEED(err, out);
    *out = NULL;
    oq_status s = oq_sdpa_config_check(c, err);
    if (s) return s;
    oq_opset ops[] = {{"", oq_attn_format_opset(c->format)}};
    oq_graph *g;
    if ((s = oq_graph_create(ops, 1, "ortqual_sdpa", &g, err))) return s;

    oq_dim qd[4], kd[4];
    io_dims(c, c->heads, qd);
    io_dims(c, c->kv_heads, kd);
    oq_dtype io = c->io_dtype ? c->io_dtype : OQ_DTYPE_FLOAT32;
    oq_graph_add_input(g, "query", io, c->layout, qd);
    oq_graph_add_input(g, "key", io, c->layout, kd);
    oq_graph_add_input(g, "value", io, c->layout, kd);
    oq_attn_builder b = {
        .g = g, .format = c->format, .mask = oq_mask_form_resolve(c->format, c->mask),
        .dtype = c->attention_dtype, .io_dtype = io, .heads = c->heads, .kv_heads = c->kv_heads,
        .head_dim = c->head_dim, .layout = c->layout};
    if (b.mask != OQ_MASK_NONE) {
        oq_dim md[2] = {oq_export_batch_dim(c->static_batch), oq_export_seq_dim(c->static_seq)};
        oq_graph_add_input(g, "mask", OQ_DTYPE_FLOAT32, 2, md);
        b.mask_in = "mask";
    }
    const char *y = oq_attn_build(&b, "query", "key", "value");
    if (y && b.mask != OQ_MASK_NONE) y = oq_attn_zero_padding(&b, y, c->layout == 3);
    if (y) oq_graph_add_output(g, y, "output", io, c->layout, qd);

    char doc[1024], desc[768];
    oq_attn_describe(&b, desc, sizeof desc);
    snprintf(doc, sizeof doc,
             "ortqual sdpa: softmax(Q K^T / sqrt(D)) V, %d-D layout. %s%s", (int)c->layout, desc,
             b.mask != OQ_MASK_NONE
                 ? " Input 'mask' [B,L] is float32 1/0, a valid prefix then padding; padded "
                   "query rows of 'output' are exact zeros."
                 : "");
    oq_graph_set_doc(g, doc);
    if ((s = oq_graph_status(g, err))) {
        oq_graph_free(g);
        return s;
    }
    *out = g;
    return OQ_OK;
}
