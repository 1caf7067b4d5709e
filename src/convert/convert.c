/* ortqual convert: the passes in order, the opset, the check, the write. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/compare-impl.h"
#include "convert/convert-impl.h"
#include "fileio/fileio-impl.h"
#include "inspect/model-impl.h"
#include "inspect/subgraph-impl.h"
#include "ortqual/advice.h"
#include "ortqual/fileio.h"
#include "ortqual/graph.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

void oq_convert_opts_default(oq_convert_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->seed = 1;
}

void oq_convert_opts_flash(oq_convert_opts *o)
{
    if (!o) return;
    o->passes |= OQ_CONVERT_FUSE | OQ_CONVERT_MASK_TO_SEQLEN;
    if (!o->attention_dtype) o->attention_dtype = OQ_DTYPE_FLOAT16;
    if (!o->opset && o->opset_min < 24) o->opset_min = 24; /* a model's higher opset stays */
}

/* ---- the report -------------------------------------------------------------------------- */

void cv_step(oq_convert_report *r, const char *pass, const char *node, const char *action, const char *fmt, ...)
{
    oq_convert_step *s = OQ_PUSH(r->steps, r->n_steps);
    if (!s) return;
    va_list ap;
    va_start(ap, fmt);
    s->detail = oq_terms_vformat(fmt, ap); /* in the caller's words (oq_set_terms), a node's name as it is */
    va_end(ap);
    s->pass = strdup(pass);
    s->node = strdup(node ? node : "");
    s->action = strdup(action);
    if (!s->detail || !s->pass || !s->node || !s->action) {
        free(s->detail), free(s->pass), free(s->node), free(s->action);
        r->n_steps--;
    }
}

void cv_report_clear(oq_convert_report *r)
{
    for (size_t i = 0; i < r->n_steps; i++) {
        free(r->steps[i].pass), free(r->steps[i].node), free(r->steps[i].action), free(r->steps[i].detail);
    }
    free(r->steps);
    free(r->checks);
    free(r->model);
    free(r->contract_input);
    free(r->reference);
    free(r->failure);
    free(r->external_data);
    memset(r, 0, sizeof *r);
}

void oq_convert_report_free(oq_convert_report *r)
{
    if (!r) return;
    cv_report_clear(r);
    free(r);
}

int cv_contract(cv_ctx *c, const char *pass, const char *node, const char *input)
{
    if (c->contract_input && strcmp(c->contract_input, input)) {
        c->r->refused++;
        cv_step(c->r, pass, node, "refused", "its mask comes from input '%s', but '%s' already carries the "
                "valid-prefix contract: one mask input per model", input, c->contract_input);
        return 1;
    }
    c->contract_input = input;
    for (size_t i = 0; i < c->n_contract; i++)
        if (!strcmp(c->contract_nodes[i], node ? node : "")) return 0;
    return oq_strv_push(&c->contract_nodes, &c->n_contract, node ? node : "") ? 1 : 0;
}

static void ctx_clear(cv_ctx *c)
{
    for (size_t i = 0; i < c->n_contract; i++) free(c->contract_nodes[i]);
    free(c->contract_nodes);
    for (size_t i = 0; i < c->n_lowp; i++) free(c->lowp_outputs[i]);
    free(c->lowp_outputs);
    cv_changed_clear(c);
}

/* ---- the passes ---------------------------------------------------------------------------- */

static oq_status check_opts(const oq_convert_opts *o, oq_err *err)
{
    if (o->attention_dtype && o->attention_dtype != OQ_DTYPE_FLOAT16 && o->attention_dtype != OQ_DTYPE_BFLOAT16)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "attention dtype %s: only float16 and bfloat16",
                          oq_dtype_name(o->attention_dtype));
    if (o->opset && (o->opset < 13 || o->opset > CV_OPSET_MAX))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opset %lld: convert writes opsets 13 to %d (%d: the newest "
                          "ONNX Runtime 1.29 runs)", (long long)o->opset, CV_OPSET_MAX, CV_OPSET_MAX);
    if (o->opset_min && (o->opset_min < 13 || o->opset_min > CV_OPSET_MAX))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opset_min %lld: convert writes opsets 13 to %d",
                          (long long)o->opset_min, CV_OPSET_MAX);
    if (!o->passes && !o->attention_dtype && !o->opset && !o->opset_min && !o->freeze_defaults && !o->n_freeze)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "nothing to do: no pass, attention dtype, opset or freeze chosen");
    if (o->n_batches && !o->inputs) return oq_err_set(err, OQ_ERR_INVALID_ARG, "n_batches without inputs");
    if (o->n_freeze && !o->freeze) return oq_err_set(err, OQ_ERR_INVALID_ARG, "n_freeze without freeze");
    return OQ_OK;
}

/* The lowest opset the graph's operators need now (Attention 23, nonpad_kv_seqlen 24). */
static int64_t needed_opset(cv_model *m, const char **why)
{
    int64_t need = 0;
    for (size_t i = 0; i < m->nodes.n; i++) {
        const Onnx__NodeProto *n = m->nodes.v[i];
        if (!oq_node_is(n, "Attention")) continue;
        if (n->n_input > 6 && *n->input[6]) {
            *why = "nonpad_kv_seqlen";
            return 24;
        }
        need = 23;
        *why = "Attention";
    }
    return need;
}

/* An `op` node in the graph or a subgraph in it. */
static int has_op(cv_model *m, const char *op)
{
    const oq_gview *v = cv_view(m);
    return v && oq_graph_has_op(oq_gview_graph(v), op);
}

/* Attention inputs without a declared shape get their rank at least (ORT's CUDA EP was
 * seen to crash on Attention inputs without shapes). */
static void attention_shapes(cv_ctx *c, cv_model *m)
{
    for (size_t i = 0; i < m->nodes.n; i++) {
        const Onnx__NodeProto *n = m->nodes.v[i];
        for (size_t k = 0; oq_node_is(n, "Attention") && k < 3 && k < n->n_input; k++) {
            int r;
            cv_dim d[OQ_SYM_MAX_RANK];
            int32_t t = cv_type_of(m, n->input[k], &r, d);
            if (r >= 0 || !t) continue;
            r = oq_gview_rank(cv_view(m), n->input[k]);
            if (r > OQ_SYM_MAX_RANK) continue; /* no Attention input; d has no room for its dims */
            for (int j = 0; j < r; j++) d[j] = (cv_dim){-1, NULL};
            cv_set_type(m, n->input[k], t, r, d);
            cv_step(c->r, "shapes", n->name, "added", "'%s' had no declared type: %s, rank %d", n->input[k],
                    oq_dtype_name((oq_dtype)t), r);
        }
    }
}

/* ORT's CUDA fused kernels need a head size that is a multiple of 8 (flash at most 256): say so
 * for each Attention node of the output that will run MATH (or miss flash) on CUDA. */
static void head_size_notes(cv_ctx *c, cv_model *m)
{
    for (size_t i = 0; i < m->nodes.n; i++) {
        const Onnx__NodeProto *n = m->nodes.v[i];
        if (!oq_node_is(n, "Attention")) continue;
        int64_t heads = 0;
        const char *from = "";
        int64_t h = cv_sym(m) ? oq_attention_head_size(cv_sym(m), n, &heads, &from) : -1;
        char *note = oq_head_size_note(h, heads, from);
        if (note) cv_step(c->r, "cuda", n->name, "note", "%s", note);
        else if (h < 0)
            cv_step(c->r, "cuda", n->name, "note", "head size unknown (Q's and K's head axis is dynamic and the graph "
                    "does not fix it): ORT's CUDA flash and memory-efficient kernels need a multiple of 8, so whether "
                    "this node runs flash, memory-efficient attention or MATH on CUDA is not known: check it");
        free(note);
    }
}

/* ONNX Runtime's contrib attention (com.microsoft MultiHeadAttention, GroupQueryAttention, ...)
 * is neither a decomposed chain nor an ONNX Attention: an attention pass asked for leaves it as
 * it is, and says so by name rather than "no Attention node" alone. */
static void contrib_notes(cv_ctx *c, cv_model *m)
{
    const oq_convert_opts *o = c->o;
    if (!(o->passes & ~OQ_CONVERT_DECOMPOSE_ELU) && !o->attention_dtype) return;
    for (size_t i = 0; i < m->nodes.n; i++) {
        const Onnx__NodeProto *n = m->nodes.v[i];
        if (!n->domain || strcmp(n->domain, "com.microsoft") || !n->op_type || !strstr(n->op_type, "Attention")) continue;
        cv_step(c->r, "contrib", n->name, "note", "com.microsoft %s left as it is: convert rewrites decomposed "
                "attention chains and ONNX Attention nodes, not ONNX Runtime's contrib operators", n->op_type);
    }
}

static void record_contract(cv_ctx *c, cv_model *m)
{
    if (!c->contract_input) return;
    json_t *nodes = json_array();
    for (size_t i = 0; i < c->n_contract; i++) json_array_append_new(nodes, json_string(c->contract_nodes[i]));
    json_t *j = json_pack("{s:s, s:s, s:o}", "input", c->contract_input, "contract", "valid_prefix", "nodes", nodes);
    int pad = c->polarity == OQ_MASK_POLARITY_PAD; /* (absent: keep, as before it) */
    if (j && pad) json_object_set_new(j, "polarity", json_string(oq_mask_polarity_name(OQ_MASK_POLARITY_PAD)));
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (s) cv_set_meta(m, OQ_CONVERT_CONTRACT_KEY, s);
    else m->oom = 1;
    free(s);
    json_decref(j);
    c->r->contract_input = strdup(c->contract_input);
    int kept = c->inherited && c->n_contract == c->n_inherited; /* converted before, nothing new */
    cv_step(c->r, "contract", "", kept ? "kept" : "added",
            "metadata %s: input '%s' must be a valid prefix (%s) in every batch", OQ_CONVERT_CONTRACT_KEY,
            c->contract_input, pad ? "zeros, then ones: 1 = padding" : "ones, then zeros");
}

/* The graph input called `name` (its own copy of the name), or NULL. */
static const char *graph_input(const cv_model *m, const char *name)
{
    for (size_t i = 0; name && i < m->inputs.n; i++) {
        const Onnx__ValueInfoProto *in = m->inputs.v[i];
        if (!strcmp(in->name, name)) return in->name;
    }
    return NULL;
}

/* The polarity a contract's "polarity" names (absent: keep, as contracts before it). */
static int contract_polarity(json_t *j, oq_mask_polarity *out)
{
    const char *pol = json_string_value(json_object_get(j, "polarity"));
    *out = OQ_MASK_POLARITY_KEEP;
    return json_object_get(j, "polarity") && (!pol || oq_mask_polarity_parse(pol, out));
}

/* The contract's polarity where none is given; a given one that contradicts it is refused
 * (its check would generate masks the model does not read). */
static oq_status adopt_polarity(cv_ctx *c, const cv_model *m, json_t *j, const char *text, oq_err *err)
{
    oq_mask_polarity pol;
    if (contract_polarity(j, &pol))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: metadata %s has a polarity that is neither keep nor pad: %.200s",
                          m->name, OQ_CONVERT_CONTRACT_KEY, text);
    c->polarity = c->o->mask_polarity;
    return oq_contract_polarity_adopt(m->name, pol, c->o->mask_polarity_given, &c->polarity, err);
}

/* A model converted before keeps its contract: the check enforces it, the output records it. */
static oq_status inherit_contract(cv_ctx *c, cv_model *m, oq_err *err)
{
    for (size_t i = 0; i < m->meta.n; i++) {
        const Onnx__StringStringEntryProto *e = m->meta.v[i];
        if (!e->key || strcmp(e->key, OQ_CONVERT_CONTRACT_KEY)) continue;
        const char *text = e->value ? e->value : "";
        json_t *j = e->value ? json_loads(e->value, 0, NULL) : NULL;
        const char *in = graph_input(m, json_string_value(json_object_get(j, "input")));
        json_t *nodes = json_object_get(j, "nodes");
        oq_status st = OQ_OK;
        if (!in) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: metadata %s names no input of the model: %.200s", m->name,
                                 OQ_CONVERT_CONTRACT_KEY, text);
        if (!st) st = adopt_polarity(c, m, j, text, err);
        for (size_t k = 0; !st && k < json_array_size(nodes); k++)
            if (cv_contract(c, "contract", json_string_value(json_array_get(nodes, k)), in)) st = cv_oom(m, err);
        if (!st && !json_array_size(nodes)) c->contract_input = in;
        c->inherited = 1;
        c->n_inherited = c->n_contract;
        json_decref(j);
        return st;
    }
    return OQ_OK;
}

/* The dtype the output's attention computes in, the least precise where several: each
 * Attention's Q (a model converted before keeps its float16), or --attention-dtype's where its
 * pass cast nodes that --lower then turned into standard ops. */
static oq_dtype computes_in(const cv_ctx *c, cv_model *m)
{
    oq_dtype d = c->reduced ? c->o->attention_dtype : OQ_DTYPE_FLOAT32;
    for (size_t i = 0; i < m->nodes.n; i++) {
        const Onnx__NodeProto *n = m->nodes.v[i];
        int r;
        cv_dim dims[OQ_SYM_MAX_RANK];
        if (!oq_node_is(n, "Attention") || !n->n_input) continue;
        oq_dtype q = (oq_dtype)cv_type_of(m, n->input[0], &r, dims);
        if (q == OQ_DTYPE_BFLOAT16 || (q == OQ_DTYPE_FLOAT16 && d != OQ_DTYPE_BFLOAT16)) d = q;
    }
    return d;
}

/* Whether node `n` is an Attention computing in float16 or bfloat16 (its Q's type). */
static int lowp_attention(cv_model *m, const Onnx__NodeProto *n)
{
    int r;
    cv_dim d[OQ_SYM_MAX_RANK];
    int32_t t = oq_node_is(n, "Attention") && n->n_input ? cv_type_of(m, n->input[0], &r, d) : 0;
    return t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 || t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
}

/* Whether `value` is computed from a float16/bfloat16 Attention; seen[] marks the nodes walked. */
static int fed_by_lowp(cv_model *m, const oq_gview *v, const char *value, unsigned char *seen)
{
    size_t i;
    const Onnx__NodeProto *n = oq_gview_producer(v, value, &i);
    if (!n || seen[i]) return 0;
    seen[i] = 1;
    if (lowp_attention(m, n)) return 1;
    for (size_t j = 0; j < n->n_input; j++)
        if (*n->input[j] && fed_by_lowp(m, v, n->input[j], seen)) return 1;
    return 0;
}

/* The graph outputs some float16/bfloat16 Attention feeds, taken before --lower makes standard
 * ops of it: the check holds them to the attention dtype's tolerance, every other output to
 * float32's (an output no reduced attention reaches is computed as the original computes it). */
static void lowp_outputs(cv_ctx *c, cv_model *m)
{
    const oq_gview *v = cv_view(m);
    const Onnx__GraphProto *g = v ? oq_gview_graph(v) : NULL;
    unsigned char *seen = g ? malloc(m->nodes.n + 1) : NULL;
    for (size_t o = 0; seen && o < g->n_output; o++) {
        memset(seen, 0, m->nodes.n + 1);
        if (fed_by_lowp(m, v, g->output[o]->name, seen) && oq_strv_push(&c->lowp_outputs, &c->n_lowp, g->output[o]->name))
            m->oom = 1;
    }
    if (!seen) m->oom = 1;
    free(seen);
}

/* Head padding runs when asked, and by default with a float16/bfloat16 attention dtype (the
 * flash target) unless the attention is lowered to standard ops anyway. */
static int pad_head(const oq_convert_opts *o)
{
    return (o->passes & OQ_CONVERT_PAD_HEAD) ||
           (o->attention_dtype && !o->keep_head_size && !(o->passes & OQ_CONVERT_LOWER));
}

/* The passes over `m`, with the dtype pass emulated or not (see cv_pass_attention_dtype). */
static oq_status run_passes(cv_ctx *c, cv_model *m, int emulate, oq_err *err)
{
    const oq_convert_opts *o = c->o;
    c->r->opset_in = m->opset_in;
    oq_status st = cv_pass_freeze(c, m, err);
    if (st) return st;
    if (o->mask_input && !graph_input(m, o->mask_input))
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: the mask '%s' is not an input of the model", m->name, o->mask_input);
    st = inherit_contract(c, m, err);
    if (st) return st;
    size_t typed = cv_infer_types(m);
    if (typed) cv_step(c->r, "shapes", "", "added", "%zu tensors without value_info got their inferred type", typed);
    contrib_notes(c, m);
    st = cv_subgraph_attention(c, m, err);
    if (!st && (o->passes & OQ_CONVERT_FUSE)) st = cv_pass_fuse(c, m, err);
    if (!st && (o->passes & OQ_CONVERT_MASK_TO_SEQLEN)) st = cv_pass_mask_to_seqlen(c, m, err);
    if (!st && (o->passes & OQ_CONVERT_EXPAND_MASK)) st = cv_pass_expand_mask(c, m, err);
    if (!st && pad_head(o)) st = cv_pass_pad_head(c, m, !!(o->passes & OQ_CONVERT_PAD_HEAD), err);
    if (!st && o->attention_dtype) st = cv_pass_attention_dtype(c, m, (int32_t)o->attention_dtype, emulate, err);
    if (!st) lowp_outputs(c, m);
    if (!st && (o->passes & OQ_CONVERT_LOWER)) st = cv_pass_lower(c, m, err);
    if (st) return st;
    /* before the opset check: a node a pass replaced (a fused Softmax) is no node of the output */
    size_t pruned = cv_prune(m);
    if (pruned) cv_step(c->r, "prune", "", "removed", "%zu nodes nothing reads any more", pruned);
    size_t refused = c->r->refused;
    const char *why = NULL;
    int64_t need = needed_opset(m, &why);
    int64_t floor = need > o->opset_min ? need : o->opset_min;
    int64_t target = o->opset ? o->opset : floor > m->opset_in ? floor : m->opset_in;
    if (target < need)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          need == 24 ? "%s: opset %lld is below the %lld that %s needs (OQ_CONVERT_MASK_TO_SEQLEN "
                                       "writes it: raise opts.opset to 24 or leave it 0; at opset 23, "
                                       "OQ_CONVERT_EXPAND_MASK instead)"
                                     : "%s: opset %lld is below the %lld that %s needs (raise opts.opset or leave it 0)",
                          m->name, (long long)target, (long long)need, why);
    if ((o->passes & OQ_CONVERT_DECOMPOSE_ELU) || (!o->keep_elu && target >= 22 && has_op(m, "Elu"))) {
        if (!(o->passes & OQ_CONVERT_DECOMPOSE_ELU))
            cv_step(c->r, "decompose-elu", "", "note", "on because the output opset is %lld: Elu-22 has no CUDA kernel "
                    "in ORT 1.29", (long long)target);
        st = cv_pass_decompose_elu(c, m, err);
    }
    if (st) return st;
    c->r->opset_out = target;
    if (target > CV_OPSET_MAX) {
        c->r->refused++;
        cv_step(c->r, "opset", "", "refused", "the model imports ai.onnx opset %lld; ONNX Runtime 1.29 runs up to "
                "opset %d, so the check could not run the output", (long long)target, CV_OPSET_MAX);
    } else {
        cv_opset_check(c, m, target);
    }
    if (c->r->refused > refused) /* an output whose nodes mean other things at its opset: never written */
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: opset refused: %s; nothing written", m->name,
                          c->r->n_steps ? c->r->steps[c->r->n_steps - 1].detail : "see the plan");
    if (target == m->opset && (o->opset || o->opset_min))
        cv_step(c->r, "opset", "", "skipped", "already ai.onnx opset %lld", (long long)target);
    if (target != m->opset) {
        cv_step(c->r, "opset", "", "rewritten", "ai.onnx opset %lld -> %lld", (long long)m->opset, (long long)target);
        st = cv_subgraphs_raised(c, m, target, err); /* the check says whether batches ran them */
        if (st) return st;
        m->opset = target;
        int64_t ir = oq_graph_ir_version_for_opset(target);
        if (ir > m->ir_version) m->ir_version = ir;
    }
    c->r->opset_out = m->opset;
    attention_shapes(c, m);
    head_size_notes(c, m);
    c->computes_in = computes_in(c, m);
    st = cv_toposort(m, err);
    if (!st) record_contract(c, m);
    if (!st && m->oom) st = cv_oom(m, err);
    return st;
}

static oq_status new_report(const char *name, oq_convert_report **out, oq_err *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out || !((*out)->model = strdup(name))) {
        free(*out);
        *out = NULL;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

static oq_status refusals(const cv_ctx *c, const char *name, oq_err *err)
{
    if (!c->r->refused || c->o->allow_refused) return OQ_OK;
    return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: %zu requested rewrite%s refused (see the plan); nothing written",
                      name, c->r->refused, c->r->refused == 1 ? " was" : "s were");
}

oq_status cv_convert_bytes(const void *buf, size_t len, const char *name, const char *dir,
                           const oq_convert_opts *o, oq_convert_report **out, uint8_t **conv, size_t *conv_n,
                           oq_err *err)
{
    *out = NULL;
    oq_status st = check_opts(o, err);
    cv_model *m = NULL;
    if (!st) st = cv_model_load(buf, len, name, dir, &m, err);
    if (!st) st = new_report(name, out, err); /* none for a model that cannot be read */
    cv_ctx c = {.o = o, .r = *out, .polarity = o ? o->mask_polarity : OQ_MASK_POLARITY_KEEP};
    if (!st) st = run_passes(&c, m, 0, err);
    if (!st) st = refusals(&c, name, err);
    if (!st && conv) st = cv_serialize(m, conv, conv_n, err);
    ctx_clear(&c);
    cv_model_free(m);
    return st;
}

oq_status oq_convert_plan_bytes(const void *buf, size_t len, const char *name, const oq_convert_opts *o,
                                oq_convert_report **out, oq_err *err)
{
    OQ_NEED_N(err, len, buf);
    OQ_NEED(err, name);
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    return cv_convert_bytes(buf, len, name, NULL, o, out, NULL, NULL, err);
}

/* The folder of `path` (malloc'ed): where its external data locations start. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
}

oq_status oq_convert_plan(const char *path, const oq_convert_opts *o, oq_convert_report **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    unsigned char *buf;
    size_t n;
    *out = NULL;
    char *dir = dir_of(path);
    if (!dir) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (!st) st = cv_convert_bytes(buf, n, path, dir, o, out, NULL, NULL, err);
    free(buf);
    free(dir);
    return st;
}

/* The model the check runs: the written one, or for bfloat16 attention (no CPU kernel) the
 * same conversion with the attention rounded to bfloat16 but computed in float32. */
static oq_status check_model(cv_ctx *c, const void *buf, size_t n, const char *name, const char *dir, cv_model **out,
                             oq_err *err)
{
    oq_convert_report scratch = {0};
    cv_ctx e = {.o = c->o, .r = &scratch};
    oq_status st = cv_model_load(buf, n, name, dir, out, err);
    if (!st) st = run_passes(&e, *out, 1, err);
    cv_step(c->r, "check", "", "note", "ORT CPU has no bfloat16 Attention kernel: the check runs the same "
            "conversion with Q, K, V and the output rounded to bfloat16 and the attention computed in float32");
    ctx_clear(&e);
    cv_report_clear(&scratch);
    return st;
}

/* A temporary output's bytes flushed and synced: a full disk is found while nothing is
 * replaced yet, and only the rename is left to its commit. */
static oq_status staged(oq_atomic_file *af, oq_err *err)
{
    if (fflush(af->fp) || fsync(fileno(af->fp)))
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", af->path, strerror(errno));
    af->no_sync = 1; /* synced here: the commit has only the rename left, not a second fsync */
    return OQ_OK;
}

/* OUT.onnx (and with external data OUT.onnx.data, first: the model names it) put in place.
 * Both are written whole before either replaces anything: converted in place, OUT.onnx.data
 * may be the input's own weights, which a model that then failed to write would lose. */
static oq_status write_converted(cv_model *m, const char *out_path, int overwrite, oq_err *err)
{
    uint8_t *conv = NULL;
    size_t conv_n = 0;
    int ext = cv_ext_count(m) > 0, placed = 0;
    char *data_path = ext ? cv_ext_data_path(out_path) : NULL;
    oq_atomic_file data = {0}, model = {0};
    oq_status st = ext && !data_path ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory") : OQ_OK;
    if (!st && ext) st = oq_atomic_open(&data, data_path, overwrite, err);
    if (!st && ext) st = cv_ext_write(m, &data, err);
    if (!st && ext) st = staged(&data, err);
    if (!st) st = cv_serialize(m, &conv, &conv_n, err);
    if (!st) st = oq_atomic_open(&model, out_path, overwrite, err);
    if (!st && fwrite(conv, 1, conv_n, model.fp) != conv_n)
        st = oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", out_path, strerror(errno));
    if (!st) st = staged(&model, err);
    if (!st && ext && !(st = oq_atomic_commit(&data, err))) placed = 1;
    if (!st) st = oq_atomic_commit(&model, err);
    if (st) {
        oq_atomic_abort(&data);
        oq_atomic_abort(&model);
        if (placed) unlink(data_path); /* no data file without its model */
    }
    free(data_path);
    free(conv);
    return st;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether paths `a` and `b` name one directory entry (one name in one folder): what a
 * conversion in place replaces. */
static int same_entry(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    char *da = dir_of(a), *db = dir_of(b);
    struct stat x, y;
    int same = da && db && !strcmp(sa ? sa + 1 : a, sb ? sb + 1 : b) && !stat(da, &x) && !stat(db, &y) &&
               same_file(&x, &y);
    free(da);
    free(db);
    return same;
}

/* Output `path` is no file the input reads: the rename would put new bytes under the input
 * (its data files as first opened, whatever path led there; with `model`, its model too).
 * Converted in place, the output pair replaces the input pair instead, and the check is not
 * made. */
static oq_status spares_input(const cv_model *orig, const char *in_path, const char *out_path, const char *path,
                              int model, oq_err *err)
{
    struct stat sb, in;
    if (stat(path, &sb) != 0 || same_entry(in_path, out_path)) return OQ_OK;
    if (model && !stat(in_path, &in) && same_file(&in, &sb))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s is the input model; nothing written (choose another -o)", path);
    for (size_t i = 0; i < orig->n_ext_files; i++)
        if (same_file(&orig->ext_files[i].st, &sb))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s is the input's external data file; writing over it "
                              "would change the weights %s reads: choose another out_path, or convert in place "
                              "(out_path %s with overwrite)", path, in_path, in_path);
    return OQ_OK;
}

/* Both outputs checked before the work, not after it. */
static oq_status check_outputs(const cv_model *m, const char *in_path, const char *out_path, int overwrite,
                               oq_err *err)
{
    oq_status st = spares_input(m, in_path, out_path, out_path, 0, err);
    if (!st) st = oq_check_output_path(out_path, overwrite, err);
    if (st || !cv_ext_count(m)) return st;
    char *data = cv_ext_data_path(out_path);
    st = data ? spares_input(m, in_path, out_path, data, 1, err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = oq_check_output_path(data, overwrite, err);
    free(data);
    return st;
}

oq_status oq_convert_file(const char *in_path, const char *out_path, int overwrite, const oq_convert_opts *o,
                          oq_convert_report **out, oq_err *err)
{
    OQ_NEED(err, in_path);
    OQ_NEED(err, out_path);
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    unsigned char *buf = NULL;
    size_t n = 0;
    cv_model *orig = NULL, *m = NULL, *checked = NULL;
    char *dir = dir_of(in_path);
    *out = NULL;
    oq_status st = dir ? check_opts(o, err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st && !o->runtime) st = oq_err_set(err, OQ_ERR_INVALID_ARG, "convert: a runtime is needed for the check");
    if (!st) st = oq_read_file(in_path, &buf, &n, err);
    if (!st) st = cv_model_load(buf, n, in_path, dir, &orig, err);
    if (!st) st = check_outputs(orig, in_path, out_path, overwrite, err);
    if (!st) st = cv_model_load(buf, n, in_path, dir, &m, err);
    if (!st) st = cv_ext_same(orig, m, err); /* the data files as first seen, through the copy */
    if (!st) st = new_report(in_path, out, err); /* none for a model that cannot be read */
    cv_ctx c = {.o = o, .r = *out, .polarity = o ? o->mask_polarity : OQ_MASK_POLARITY_KEEP};
    if (!st) st = run_passes(&c, m, 0, err);
    if (!st) st = refusals(&c, in_path, err);
    if (!st && o->attention_dtype == OQ_DTYPE_BFLOAT16) st = check_model(&c, buf, n, in_path, dir, &checked, err);
    if (!st) st = cv_check(&c, orig, checked ? checked : m, err);
    if (!st) st = write_converted(m, out_path, overwrite, err);
    if (!st && cv_ext_count(m) && !((*out)->external_data = cv_ext_data_path(out_path)))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    ctx_clear(&c);
    cv_model_free(checked);
    cv_model_free(m);
    cv_model_free(orig);
    free(buf);
    free(dir);
    return st;
}

/* ---- JSON -------------------------------------------------------------------------------- */

static json_t *compare_json(const oq_compare_result *r)
{
    json_t *j = NULL;
    return oq_compare_result_to_json(r, &j, NULL) ? json_null() : j;
}

/* The model's path, its names and the messages that quote them need not be UTF-8: oq_json_text
 * keeps them, where jansson's "s" fails the document. */
static json_t *text_or_null(const char *s)
{
    return s ? oq_json_text(s) : json_null();
}

/* The plan's and the check's notes (steps whose action is "note") as validate's summary.json
 * keeps its own: [{"kind": the pass, "text": "NODE: DETAIL"}], each once. */
static json_t *notes_json(const oq_convert_report *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->n_steps; i++) {
        const oq_convert_step *s = &r->steps[i];
        char *text = NULL;
        if (strcmp(s->action, "note")) continue;
        if (asprintf(&text, "%s%s%s", s->node, *s->node ? ": " : "", s->detail) < 0) break;
        json_t *n = json_pack("{s:s, s:o}", "kind", s->pass, "text", oq_json_text(text));
        size_t j;
        json_t *x;
        int seen = 0;
        json_array_foreach(a, j, x) seen |= json_equal(x, n);
        if (n && !seen) json_array_append(a, n);
        json_decref(n);
        free(text);
    }
    return a ? a : json_null();
}

char *oq_convert_report_json(const oq_convert_report *r)
{
    if (!r) return NULL;
    json_t *steps = json_array(), *checks = json_array();
    for (size_t i = 0; i < r->n_steps; i++)
        json_array_append_new(steps, json_pack("{s:s, s:o, s:s, s:o}", "pass", r->steps[i].pass, "node",
                                               oq_json_text(r->steps[i].node), "action", r->steps[i].action,
                                               "detail", oq_json_text(r->steps[i].detail)));
    for (size_t i = 0; i < r->n_checks; i++) {
        const oq_convert_check *c = &r->checks[i];
        json_t *jc = json_pack("{s:I, s:o}", "batch", (json_int_t)c->batch, "vs_reference", compare_json(&c->vs_reference));
        if (jc && c->has_expected) {
            json_object_set_new(jc, "vs_expected", compare_json(&c->vs_expected));
            json_object_set_new(jc, "reference_vs_expected", compare_json(&c->ref_vs_expected));
        }
        json_array_append_new(checks, jc);
    }
    json_t *root = json_pack("{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:b, s:b, s:b, s:o}", "schema",
                             OQ_CONVERT_SCHEMA, "model",
                             oq_json_text(r->model), "opset_in", (json_int_t)r->opset_in, "opset_out",
                             (json_int_t)r->opset_out, "fused", (json_int_t)r->fused, "refused",
                             (json_int_t)r->refused, "frozen", (json_int_t)r->frozen, "steps", steps, "checks", checks,
                             "generated_inputs", r->generated_inputs, "checked", r->checked, "passed", r->passed,
                             "contract_input", text_or_null(r->contract_input));
    if (!root) return NULL;
    json_object_set_new(root, "reference", text_or_null(r->reference));
    json_object_set_new(root, "notes", notes_json(r));
    json_object_set_new(root, "failure", text_or_null(r->failure));
    json_object_set_new(root, "external_data", text_or_null(r->external_data));
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}

/* ---- the contract, read back ------------------------------------------------------------- */

/* The contract in m's metadata. */
static oq_status contract_of(const Onnx__ModelProto *m, const char *path, int *has, char *input, size_t cap,
                             oq_mask_polarity *polarity, oq_err *err)
{
    oq_status st = OQ_OK;
    oq_mask_polarity pol = OQ_MASK_POLARITY_KEEP;
    *has = 0;
    if (cap) *input = 0;
    for (size_t i = 0; !st && i < m->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *e = m->metadata_props[i];
        if (!e->key || strcmp(e->key, OQ_CONVERT_CONTRACT_KEY)) continue;
        json_t *j = e->value ? json_loads(e->value, 0, NULL) : NULL;
        const char *in = json_string_value(json_object_get(j, "input"));
        const char *kind = json_string_value(json_object_get(j, "contract"));
        if (!in || !*in || !kind || strcmp(kind, "valid_prefix") || strlen(in) >= cap || contract_polarity(j, &pol))
            st = oq_err_set(err, OQ_ERR_FORMAT, "%s: metadata %s is not {\"input\": NAME, \"contract\": \"valid_prefix\"}"
                            " with a polarity keep or pad if any: %.200s", path, OQ_CONVERT_CONTRACT_KEY,
                            e->value ? e->value : "");
        else {
            snprintf(input, cap, "%s", in);
            *has = 1;
        }
        json_decref(j);
    }
    if (polarity) *polarity = pol;
    return st;
}

oq_status oq_convert_read_contract(const char *path, int *has, char *input, size_t cap, oq_mask_polarity *polarity,
                                   oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, has);
    OQ_NEED_N(err, cap, input);
    unsigned char *buf;
    size_t n;
    *has = 0;
    if (cap) *input = 0;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st) return st;
    st = oq_convert_contract_of(buf, n, path, has, input, cap, polarity, err);
    free(buf);
    return st;
}

oq_status oq_contract_polarity_adopt(const char *path, oq_mask_polarity recorded, int given, oq_mask_polarity *polarity,
                                     oq_err *err)
{
    if (given && *polarity != recorded)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: mask_polarity %s, but the model's %s says polarity %s", path,
                          oq_mask_polarity_name(*polarity), OQ_CONVERT_CONTRACT_KEY, oq_mask_polarity_name(recorded));
    *polarity = recorded;
    return OQ_OK;
}

oq_status oq_convert_contract_of(const void *buf, size_t n, const char *path, int *has, char *input, size_t cap,
                                 oq_mask_polarity *polarity, oq_err *err)
{
    Onnx__ModelProto *m; /* metadata only: the weights are not copied */
    oq_status st = oq_model_unpack_checked(buf, n, path ? path : "the model", OQ_UNPACK_LEAN, &m, err);
    if (st) return st;
    st = contract_of(m, path, has, input, cap, polarity, err);
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}
