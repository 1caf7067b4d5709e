/* Runtime refusals explained: a table of ORT's messages for valid models it will not run
 * (refusal.h), each read with the model for the node and its inputs. */
#include "ortqual/refusal.h"

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "inspect/model-impl.h"
#include "ortqual/inspect.h"
#include "ortqual/tensor.h"
#include "status/args-impl.h"

/* What a pattern fills; strings built here are handed to the oq_refusal at the end. */
typedef struct expl {
    const oq_refusal_facts *f;
    const char *ep;             /* f->ep or CPUExecutionProvider */
    const char *id;             /* set by a pattern the shapes show to be another: its id */
    oq_dynbuf node, inputs, why, fix;
    int oom;
    int inspected;              /* mi was asked for (NULL: the model could not be read) */
    const oq_model_info *mi;    /* the model's graph inputs and opsets, read once ... */
    oq_model_info *own;         /* ... here (else the caller's f->model_info) */
} expl;

static void put(expl *x, oq_dynbuf *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(expl *x, oq_dynbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (oq_dynbuf_vaddf(b, fmt, ap)) x->oom = 1;
    va_end(ap);
}

/* The text between `prefix` and the next `end` character in `msg`, into buf ("" when absent);
 * returns 1 when the prefix was found. */
static int text_after(const char *msg, const char *prefix, char end, char *buf, size_t n)
{
    buf[0] = 0;
    const char *p = msg ? strstr(msg, prefix) : NULL;
    if (!p) return 0;
    p += strlen(prefix);
    const char *q = strchr(p, end);
    size_t len = q ? (size_t)(q - p) : strlen(p);
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p);
    return 1;
}

/* The number after `prefix` in `msg`, or -1. */
static long long number_after(const char *msg, const char *prefix)
{
    const char *p = msg ? strstr(msg, prefix) : NULL;
    return p ? strtoll(p + strlen(prefix), NULL, 10) : -1;
}

/* The model inspected once (NULL when there is none or it cannot be read). */
static const oq_model_info *model_info(expl *x)
{
    const oq_refusal_facts *f = x->f;
    if (x->inspected) return x->mi;
    x->inspected = 1;
    if (f->model_info) return x->mi = f->model_info;
    oq_status st = f->model_bytes ? oq_model_inspect_bytes(f->model_bytes, f->model_n, f->model, &x->own, NULL)
                   : f->model     ? oq_model_inspect_file(f->model, &x->own, NULL)
                                  : OQ_ERR_NOT_FOUND;
    if (st) x->own = NULL;
    return x->mi = x->own;
}

/* ---- the sizes the model ran with ------------------------------------------------------ */

/* An input's sizes, -1 where unknown (rank -1: no shape). ORT checks the real sizes, so where
 * the caller gave the inputs it fed (facts.inputs) a symbolic dimension is read through them:
 * whether a mask is shorter or of the wrong query size often depends on a --dim or a batch. */
typedef struct sizes {
    int32_t rank;
    long long d[OQ_MAX_DIMS];
} sizes;

/* The fed input called `name`, or NULL. */
static const oq_tensor *fed(const expl *x, const char *name)
{
    for (size_t i = 0; x->f->inputs && i < x->f->n_inputs; i++) {
        const oq_tensor *t = x->f->inputs[i];
        if (t && t->name && !strcmp(t->name, name)) return t;
    }
    return NULL;
}

/* The size the symbolic dimension `sym` had in the fed inputs the model declares with it; -1
 * when none has it, or two disagree (then it is not one size). */
static long long symbol_size(expl *x, const char *sym)
{
    const oq_model_info *mi = x->f->inputs ? model_info(x) : NULL;
    long long v = -1;
    for (size_t i = 0; mi && i < mi->n_inputs; i++) {
        const oq_io_info *io = &mi->inputs[i];
        const oq_tensor *t = fed(x, io->name);
        for (int32_t a = 0; t && t->ndim == io->rank && a < io->rank; a++) {
            if (strcmp(io->dims[a], sym)) continue;
            if (v >= 0 && v != t->shape[a]) return -1;
            v = t->shape[a];
        }
    }
    return v;
}

/* A declared dimension's size: its number, else the size its name had ("?": unknown). */
static long long dim_size(expl *x, const char *dim)
{
    char *end;
    long long v = strtoll(dim, &end, 10);
    if (*dim && !*end) return v >= 0 ? v : -1;
    return strcmp(dim, "?") ? symbol_size(x, dim) : -1;
}

/* io as fed when the node reads a fed graph input, else as declared, names read as fed. */
static sizes sizes_of(expl *x, const oq_io_info *io)
{
    sizes s = {.rank = -1};
    const oq_tensor *t = io ? fed(x, io->name) : NULL;
    if (t && (io->rank < 0 || io->rank == t->ndim)) {
        s.rank = t->ndim;
        for (int32_t a = 0; a < t->ndim; a++) s.d[a] = t->shape[a];
        return s;
    }
    if (!io || io->rank < 0 || io->rank > OQ_MAX_DIMS) return s;
    s.rank = io->rank;
    for (int32_t a = 0; a < io->rank; a++) s.d[a] = dim_size(x, io->dims[a]);
    return s;
}

/* "role 'name' float32 [batch,4,seq,8]" or "... (no declared shape)"; a name with the size it
 * had where the inputs fed are known ("seq=5"). */
static void describe(expl *x, const oq_node_info *n, size_t i, const char *role)
{
    if (i >= n->n_inputs || !*n->inputs[i].name) return;
    const oq_io_info *io = &n->inputs[i];
    const sizes s = sizes_of(x, io);
    put(x, &x->inputs, "%s%s '%s'", x->inputs.len ? "; " : "", role, io->name);
    if (io->elem_type) put(x, &x->inputs, " %s", oq_elem_type_name(io->elem_type));
    if (io->rank < 0) {
        put(x, &x->inputs, " (no declared shape)");
        for (int32_t d = 0; d < s.rank; d++) put(x, &x->inputs, "%s%lld%s", d ? "," : ", fed [", s.d[d],
                                                 d + 1 == s.rank ? "]" : "");
        return;
    }
    put(x, &x->inputs, " [");
    for (int32_t d = 0; d < io->rank; d++) {
        char *end;
        (void)strtoll(io->dims[d], &end, 10);
        const int named = !*io->dims[d] || *end;
        put(x, &x->inputs, "%s%s", d ? "," : "", io->dims[d]);
        if (named && s.rank == io->rank && s.d[d] >= 0) put(x, &x->inputs, "=%lld", s.d[d]);
    }
    put(x, &x->inputs, "]");
}

/* oq_model_find_nodes of the model, from the caller's bytes where it gave them. */
static oq_status find_nodes(const expl *x, const char *name, const char *op_type, oq_node_info **nodes, size_t *n)
{
    const oq_refusal_facts *f = x->f;
    if (f->model_bytes)
        return oq_model_find_nodes_bytes(f->model_bytes, f->model_n, f->model ? f->model : "the model", name, op_type,
                                         nodes, n, NULL);
    return oq_model_find_nodes(f->model, name, op_type, nodes, n, NULL);
}

/* The nodes of the model named in ORT's message ("Name:'attn0'"), else every node of op_type. */
static void model_nodes(const expl *x, const char *name, const char *op_type, oq_node_info **nodes, size_t *n)
{
    *nodes = NULL;
    *n = 0;
    if (!x->f->model && !x->f->model_bytes) return;
    if (name && *name && find_nodes(x, name, op_type, nodes, n) == OQ_OK && *n) return;
    oq_node_infos_free(*nodes, *n);
    if (find_nodes(x, NULL, op_type, nodes, n) != OQ_OK) *n = 0;
}

static void name_node(expl *x, const char *name, const char *op)
{
    put(x, &x->node, "'%s' (%s)", name && *name ? name : "(unnamed)", op);
}

/* An Attention node: among those the message names (else all of them), the first that
 * `prefer` likes, else the first (index into *nodes, -1 when there is none); named in x. */
static long pick_attention(expl *x, const char *name, int (*prefer)(expl *, const oq_node_info *),
                           oq_node_info **nodes, size_t *n)
{
    size_t pick = 0;
    model_nodes(x, name, "Attention", nodes, n);
    for (size_t k = 0; prefer && k < *n; k++)
        if (prefer(x, &(*nodes)[k])) {
            pick = k;
            break;
        }
    name_node(x, *n ? (*nodes)[pick].name : name, "Attention");
    return *n ? (long)pick : -1;
}

/* The node's inputs `roles` described, and how many such nodes there are. */
static void describe_roles(expl *x, const oq_node_info *nodes, size_t n, long pick, const size_t *roles,
                           const char *const *role_names, size_t n_roles)
{
    for (size_t r = 0; pick >= 0 && r < n_roles; r++) describe(x, &nodes[pick], roles[r], role_names[r]);
    if (n > 1) put(x, &x->inputs, "%s(the model has %zu such Attention nodes)", x->inputs.len ? "; " : "", n);
}

/* An Attention node's inputs `roles` described (see pick_attention). */
static void attention_inputs(expl *x, const char *name, int (*prefer)(expl *, const oq_node_info *),
                             const size_t *roles, const char *const *role_names, size_t n_roles)
{
    oq_node_info *nodes;
    size_t n;
    long pick = pick_attention(x, name, prefer, &nodes, &n);
    describe_roles(x, nodes, n, pick, roles, role_names, n_roles);
    oq_node_infos_free(nodes, n);
}

/* Input i of the node, NULL when it is not connected. */
static const oq_io_info *input_of(const oq_node_info *n, size_t i)
{
    return n && i < n->n_inputs && *n->inputs[i].name ? &n->inputs[i] : NULL;
}

/* The size of axis `axis` of s (negative: from the end), -1 when unknown. */
static long long size_at(const sizes *s, int axis)
{
    if (axis < 0) axis += s->rank;
    return axis >= 0 && axis < s->rank ? s->d[axis] : -1;
}

/* The sequence length of Q or K (axis 1 of 3-D, 2 of 4-D), -1 when unknown. */
static long long seq_len(const sizes *s)
{
    return s->rank == 3 || s->rank == 4 ? size_at(s, s->rank == 3 ? 1 : 2) : -1;
}

/* attn_mask (input 3) connected, and of size 1 on the query axis when `broadcast`. */
static int has_mask(expl *x, const oq_node_info *n)
{
    (void)x;
    return input_of(n, 3) != NULL;
}
static int has_broadcast_mask(expl *x, const oq_node_info *n)
{
    const sizes m = sizes_of(x, input_of(n, 3));
    return m.rank >= 2 && size_at(&m, -2) == 1;
}

/* The ai.onnx opset the model imports, -1 when unknown. */
static long long model_opset(expl *x)
{
    const oq_model_info *mi = model_info(x);
    long long v = -1;
    for (size_t i = 0; mi && i < mi->n_opsets; i++)
        if (!*mi->opsets[i].domain || !strcmp(mi->opsets[i].domain, "ai.onnx")) v = mi->opsets[i].version;
    return v;
}

/* ---- the patterns ------------------------------------------------------------------- */

/* Each pattern fills x and returns 1; 0 when the model contradicts it (ORT's message alone). */

/* ORT refuses a mask whose query axis is not Lq. The spec broadcasts an axis of 1, so only a
 * mask declared so is ORT's departure; any other size is invalid for ONNX too, and no
 * expansion fixes it. */
static int mask_query_broadcast(expl *x)
{
    static const size_t roles[] = {0, 3};
    static const char *const role_names[] = {"Q", "attn_mask"};
    char name[256];
    text_after(x->f->message, "Name:'", '\'', name, sizeof name);
    oq_node_info *nodes;
    size_t n;
    long pick = pick_attention(x, name, has_broadcast_mask, &nodes, &n);
    const oq_node_info *node = pick >= 0 ? &nodes[pick] : NULL;
    const sizes m = sizes_of(x, input_of(node, 3)), q = sizes_of(x, input_of(node, 0));
    const long long mq = size_at(&m, -2), lq = seq_len(&q);
    const int fits = mq == 1, known = mq >= 0 && lq >= 0;
    if (!fits && known && mq == lq) {
        oq_node_infos_free(nodes, n);
        return 0;
    }
    describe_roles(x, nodes, n, pick, roles, role_names, 2);
    const int axis = m.rank >= 2 ? m.rank - 2 : 0;
    oq_node_infos_free(nodes, n);
    if (!fits && known) {
        x->id = "attn-mask-shape";
        put(x, &x->why,
            "the mask does not fit: attn_mask axis %d is %lld; Q's sequence length is %lld. The ONNX Attention "
            "operator broadcasts that axis only from 1, so the model is invalid for ONNX as for ONNX Runtime",
            axis, mq, lq);
        put(x, &x->fix, "give attn_mask axis %d the size 1 (one row for every query) or %lld (one row per query)",
            axis, lq);
        return 1;
    }
    put(x, &x->why,
        "%sthe ONNX Attention operator (opsets 23 and 24) broadcasts attn_mask over the query axis, so a key-padding "
        "mask [B,1,1,Lk] is valid; ONNX Runtime's CPU and CUDA kernels require the mask's second-to-last axis to "
        "equal Q's sequence length (attention_helper.h) and refuse it when the model runs",
        fits ? "" : "if the mask's second-to-last axis is 1 (the declared shapes do not say; any size but 1 and Q's "
                    "sequence length is invalid for ONNX too): ");
    put(x, &x->fix,
        "expand the mask to [B,1,Lq,Lk] (`ortqual convert --expand-mask`), or pass the key padding as "
        "nonpad_kv_seqlen (`ortqual convert --mask-to-seqlen --opset 24`); exporting at opset 18 (decomposed "
        "attention) also runs");
    return 1;
}

/* The mask's last axis against T = past + current keys (sizes_of): -1 where unknown. */
typedef struct mask_len {
    long long len, past, keys, total;
    int axis;
} mask_len;

static mask_len mask_length(expl *x, const oq_node_info *node)
{
    const oq_io_info *pk = input_of(node, 4);
    const sizes m = sizes_of(x, input_of(node, 3)), p = sizes_of(x, pk), k = sizes_of(x, input_of(node, 1));
    mask_len r = {size_at(&m, -1), pk ? size_at(&p, 2) : 0, seq_len(&k), -1, m.rank > 0 ? m.rank - 1 : 0};
    if (r.past >= 0 && r.keys >= 0) r.total = r.past + r.keys;
    return r;
}

/* A mask whose declared shape is invalid at the model's opset: what does not fit. */
static void mask_length_invalid(expl *x, const mask_len *l, long long opset)
{
    x->id = "attn-mask-shape";
    if (l->len >= 0 && l->total >= 0)
        put(x, &x->why, "the mask does not fit: attn_mask axis %d is %lld; T (past %lld + current keys %lld) is %lld. ",
            l->axis, l->len, l->past, l->keys, l->total);
    if (l->len > l->total && l->total >= 0) {
        put(x, &x->why, "A mask longer than the total sequence length is invalid for every opset of Attention");
        put(x, &x->fix, "give attn_mask's last axis the total sequence length %lld (past plus current keys)",
            l->total);
        return;
    }
    put(x, &x->why,
        "The model imports opset %lld, whose Attention requires attn_mask's last axis to equal the total sequence "
        "length (past plus current keys); only Attention-24 allows a shorter mask (padded with -inf), so ONNX "
        "Runtime is right to refuse it",
        opset);
    if (l->total >= 0)
        put(x, &x->fix, "make attn_mask's last axis %lld: pad a shorter mask (False for a bool mask, -inf for a "
                        "float one)", l->total);
    else
        put(x, &x->fix, "make attn_mask's last axis the total sequence length: pad a shorter mask (False for a bool "
                        "mask, -inf for a float one), cut a longer one");
}

/* ORT wants the mask's last axis equal to T. Attention-24 allows a shorter one: only that is
 * ORT's departure; a longer mask, or a shorter one at opset 23, is the model's fault. */
static int mask_total_length(expl *x)
{
    static const size_t roles[] = {1, 3, 4};
    static const char *const role_names[] = {"K", "attn_mask", "past_key"};
    char name[256];
    text_after(x->f->message, "Name:'", '\'', name, sizeof name);
    oq_node_info *nodes;
    size_t n;
    long pick = pick_attention(x, name, has_mask, &nodes, &n);
    const mask_len l = mask_length(x, pick >= 0 ? &nodes[pick] : NULL);
    const int known = l.len >= 0 && l.total >= 0;
    const long long opset = model_opset(x);
    if (known && l.len == l.total) {
        oq_node_infos_free(nodes, n);
        return 0;
    }
    describe_roles(x, nodes, n, pick, roles, role_names, 3);
    oq_node_infos_free(nodes, n);
    if ((known && l.len > l.total) || opset == 23) {
        mask_length_invalid(x, &l, opset);
        return 1;
    }
    put(x, &x->why,
        "%sONNX Attention-24 lets attn_mask's last axis be shorter than the total sequence length (past plus "
        "current keys) and pads it with -inf; ONNX Runtime requires it to equal the total sequence length "
        "(attention_helper.h) and refuses the shorter mask",
        known ? "" : "if the mask is shorter (the declared shapes do not say; a longer mask is invalid for every "
                     "opset): ");
    put(x, &x->fix,
        "pad the mask to the total sequence length before the node (False for a bool mask, -inf for a float "
        "one), or pass the key padding as nonpad_kv_seqlen (`ortqual convert --mask-to-seqlen --opset 24`)");
    return 1;
}

static int output_mode(expl *x)
{
    char name[256];
    text_after(x->f->message, "Name:'", '\'', name, sizeof name);
    long long mode = number_after(x->f->message, "Mode: ");
    static const size_t roles[] = {0};
    static const char *const role_names[] = {"Q"};
    attention_inputs(x, name, NULL, roles, role_names, 1);
    /* as the spec's qk_matmul_output_mode says (docs/reference.md) */
    static const char *const modes[] = {"the scaled QK^T", "QK^T after softcap, before the mask",
                                        "QK^T after softcap and the mask", "after softmax"};
    put(x, &x->why,
        "the node asks for qk_matmul_output in mode %lld (%s), which the ONNX spec defines; %s's unified "
        "unfused attention implements only modes 0 (QK^T) and none",
        mode, mode >= 0 && mode < 4 ? modes[mode] : "unknown", x->ep);
    put(x, &x->fix,
        "set qk_matmul_output_mode to 0 or drop the qk_matmul_output output for this provider (compute what "
        "you need from Q and K outside the node), or run the node on a provider that implements the mode");
    return 1;
}

static int no_kernel(expl *x)
{
    /* "Could not find an implementation for Elu(22) node with name 'n0'" */
    char op[128], name[256];
    text_after(x->f->message, "implementation for ", '(', op, sizeof op);
    const char *at = strstr(x->f->message, "implementation for ");
    long long version = at ? number_after(at, "(") : -1;
    text_after(x->f->message, "node with name '", '\'', name, sizeof name);
    oq_node_info *nodes;
    size_t n;
    model_nodes(x, name, op[0] ? op : NULL, &nodes, &n);
    name_node(x, name, op[0] ? op : "?");
    for (size_t i = 0; n && i < nodes[0].n_inputs; i++) {
        char role[32];
        snprintf(role, sizeof role, "input %zu", i);
        describe(x, &nodes[0], i, role);
    }
    oq_node_infos_free(nodes, n);
    put(x, &x->why,
        "%s has no kernel for %s as opset %lld defines it with these input types (the model is valid; the "
        "provider implements other versions or types of the operator)",
        x->ep, op[0] ? op : "the operator", version);
    put(x, &x->fix, "give the node a type the provider implements (e.g. Cast float64 to float32 around it), or "
                    "export at an opset whose version of %s the provider has",
        op[0] ? op : "the operator");
    if (!strcmp(op, "Elu"))
        put(x, &x->fix, "; Elu from opset 22 on has no CUDA kernel: `ortqual convert --decompose-elu` writes it "
                        "with standard operators");
    return 1;
}

static int opset_too_new(expl *x)
{
    long long opset = number_after(x->f->message, "Opset ");
    char domain[128];
    text_after(x->f->message, "support for domain ", ' ', domain, sizeof domain);
    long long till = number_after(x->f->message, " is till opset ");
    put(x, &x->why,
        "the model imports opset %lld of domain %s; this ONNX Runtime officially supports it up to opset %lld "
        "and refuses a newer, unreleased one",
        opset, domain[0] ? domain : "ai.onnx", till);
    put(x, &x->fix, "export at opset %lld or lower (torch.onnx.export(..., opset_version=%lld)), or use an ONNX "
                    "Runtime release that supports opset %lld",
        till, till, opset);
    return 1;
}

static int ir_too_new(expl *x)
{
    long long ir = number_after(x->f->message, "IR version: ");
    long long max = number_after(x->f->message, "max supported IR version: ");
    put(x, &x->why, "the file is stamped with ONNX IR version %lld; this ONNX Runtime reads IR versions up to %lld",
        ir, max);
    put(x, &x->fix,
        "save the model with IR version %lld or lower (in Python: model.ir_version = %lld; onnx.save(...), valid "
        "when its opsets are ones that IR version covers), or use a newer ONNX Runtime",
        max, max);
    return 1;
}

static int unregistered_op(expl *x)
{
    char what[256], domain[256] = "", op[256] = "";
    const char *m = x->f->message;
    const char *end = m ? strstr(m, " is not a registered function/op") : NULL;
    const char *start = end;
    while (start && start > m && start[-1] != ' ') start--;
    snprintf(what, sizeof what, "%.*s", start ? (int)(end - start) : 0, start ? start : "");
    char *colon = strchr(what, ':'), *paren = strchr(what, '(');
    if (colon) snprintf(domain, sizeof domain, "%.*s", (int)(colon - what), what);
    if (paren) *paren = 0;
    snprintf(op, sizeof op, "%s", colon ? colon + 1 : what);
    oq_node_info *nodes;
    size_t n;
    model_nodes(x, NULL, op[0] ? op : NULL, &nodes, &n);
    if (n) name_node(x, nodes[0].name, op);
    if (n > 1) put(x, &x->node, " and %zu more", n - 1);
    oq_node_infos_free(nodes, n);
    put(x, &x->why,
        "no operator %s is registered in domain '%s' with this ONNX Runtime: a custom operator whose kernel "
        "library was not loaded, or a node written in the wrong domain",
        op, domain);
    put(x, &x->fix, "register the library that implements %s with the session (RegisterCustomOpsLibrary), or "
                    "replace the node by standard operators before export",
        op);
    return 1;
}

static int missing_opset_import(expl *x)
{
    char domain[128], name[256];
    text_after(x->f->message, "No opset import for domain '", '\'', domain, sizeof domain);
    if (text_after(x->f->message, "In Node, (\"", '"', name, sizeof name)) name_node(x, name, domain);
    put(x, &x->why, "a node uses domain '%s', which the model does not import (an ONNX model must list every "
                    "domain it uses in opset_import)",
        domain);
    put(x, &x->fix, "add an opset_import entry for '%s' (with the version its operators need)", domain);
    return 1;
}

/* An initializer's external-data file is not where the model says (copied without it). */
static int external_data_missing(expl *x)
{
    char tensor[256], path[PATH_MAX];
    /* "... failed for initializer: tok.weight. Error: ..." (names have dots) */
    text_after(x->f->message, "failed for initializer: ", '\n', tensor, sizeof tensor);
    char *end = strstr(tensor, ". Error");
    if (end) *end = 0;
    text_after(x->f->message, "does not exist: \"", '"', path, sizeof path);
    put(x, &x->why,
        "initializer '%s' keeps its data in an external-data file, %s, which is not there (the model was "
        "copied or moved without the file saved beside it; torch.onnx.export writes MODEL.onnx.data)",
        tensor, *path ? path : "(path not given)");
    put(x, &x->fix,
        "put the data file beside the model under the name the model records (`ortqual inspect --json MODEL` "
        "lists it under initializers.external_files), or save the model with its weights inside");
    return 1;
}

/* Shape inference reads constants (axes, shapes) only from inside the model. */
static int external_data_constants(expl *x)
{
    char tensor[256], name[256], op[64];
    text_after(x->f->message, "raw data for tensor: ", '\n', tensor, sizeof tensor);
    if (text_after(x->f->message, "Node (", ')', name, sizeof name) &&
        text_after(x->f->message, "Op (", ')', op, sizeof op))
        name_node(x, name, op);
    put(x, &x->why,
        "constant '%s', which shape inference reads, is stored in the external-data file; ONNX Runtime reads "
        "such constants only from inside the model (a model saved with every tensor outside, e.g. "
        "onnx.save_model(..., save_as_external_data=True, size_threshold=0))",
        tensor);
    put(x, &x->fix,
        "save the model again with its small tensors inside (onnx.save_model(..., size_threshold=1024), onnx's "
        "default), or convert it with `ortqual convert`, which reads tensors up to 4 KiB into the model");
    return 1;
}

/* A process killed by SIGSEGV while a GPU provider ran a model whose Attention inputs have no
 * declared shape: the crash seen on ORT 1.29's CUDA EP. Any other crash is left unexplained. */
static int crash_no_shapes_applies(const expl *x)
{
    if (x->f->signal != SIGSEGV || !x->f->ep || !strcmp(x->f->ep, "CPUExecutionProvider") ||
        (!x->f->model && !x->f->model_bytes))
        return 0;
    oq_node_info *nodes;
    size_t n;
    int bare = 0;
    if (find_nodes(x, NULL, "Attention", &nodes, &n)) return 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < 3 && i < nodes[k].n_inputs; i++) bare |= nodes[k].inputs[i].rank < 0;
    oq_node_infos_free(nodes, n);
    return bare;
}

static int crash_no_shapes(expl *x)
{
    oq_node_info *nodes;
    size_t n, bare = 0;
    static const char *const roles[] = {"Q", "K", "V"};
    model_nodes(x, NULL, "Attention", &nodes, &n);
    for (size_t k = 0; k < n; k++) {
        int first = 1;
        for (size_t i = 0; i < 3 && i < nodes[k].n_inputs; i++) {
            if (nodes[k].inputs[i].rank >= 0) continue;
            if (first && bare++ == 0) name_node(x, nodes[k].name, "Attention");
            if (first && bare == 2) put(x, &x->node, " and others");
            first = 0;
            if (bare == 1) describe(x, &nodes[k], i, roles[i]);
        }
    }
    oq_node_infos_free(nodes, n);
    put(x, &x->why,
        "the process died of SIGSEGV on %s; %zu Attention node(s) of the model read inputs with no declared "
        "type or shape, and ONNX Runtime 1.29's CUDA EP was seen dying inside libonnxruntime.so on exactly such "
        "nodes (the same model with its value_info ran)",
        x->ep, bare);
    put(x, &x->fix,
        "declare the type and shape (rank at least, symbolic dimensions where known) of every tensor the "
        "Attention nodes read: keep the exporter's value_info when rewriting a model (`ortqual convert` writes "
        "one for every tensor it creates)");
    return 1;
}

typedef struct pattern {
    const char *id;
    const char *needle;                  /* in ORT's message; NULL: `applies` decides */
    int (*applies)(const expl *x);
    int (*explain)(expl *x);             /* 0: the model says it is not this after all */
} pattern;

static const pattern table[] = {
    {"attn-mask-query-broadcast", "inconsistent q_sequence_length", NULL, mask_query_broadcast},
    {"attn-mask-total-length", "inconsistent total_sequence_length", NULL, mask_total_length},
    {"attention-output-mode", "output modes are supported in unified unfused attention", NULL, output_mode},
    {"no-kernel", "Could not find an implementation for ", NULL, no_kernel},
    {"opset-too-new", "is under development and support for this is limited", NULL, opset_too_new},
    {"ir-too-new", "Unsupported model IR version: ", NULL, ir_too_new},
    {"unregistered-op", " is not a registered function/op", NULL, unregistered_op},
    {"missing-opset-import", "No opset import for domain '", NULL, missing_opset_import},
    {"external-data-missing", "External data path does not exist", NULL, external_data_missing},
    {"external-data-constants", "Cannot parse data from external tensors", NULL, external_data_constants},
    {"crash-attention-no-shapes", NULL, crash_no_shapes_applies, crash_no_shapes},
};

static void expl_clear(expl *x)
{
    oq_model_info_free(x->own);
    x->own = NULL;
    x->mi = NULL;
    oq_dynbuf_clear(&x->node);
    oq_dynbuf_clear(&x->inputs);
    oq_dynbuf_clear(&x->why);
    oq_dynbuf_clear(&x->fix);
}

/* The text of `b` (NULL when empty), or oom noted. */
static char *take(expl *x, oq_dynbuf *b)
{
    if (!b->len) return NULL;
    char *s = oq_dynbuf_take(b, NULL);
    if (!s) x->oom = 1;
    return s;
}

oq_status oq_refusal_explain(const oq_refusal_facts *f, oq_refusal *out, oq_err *err)
{
    OQ_NEED(err, f);
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    if (f->message && !(out->raw = strdup(f->message))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    expl x = {.f = f, .ep = f->ep ? f->ep : "CPUExecutionProvider"};
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const pattern *p = &table[i];
        int hit = p->needle ? f->message && strstr(f->message, p->needle) : p->applies(&x);
        if (!hit) continue;
        if (!p->explain(&x)) {
            expl_clear(&x); /* ORT's message alone */
            break;
        }
        if (!(out->id = strdup(x.id ? x.id : p->id))) x.oom = 1;
        out->node = take(&x, &x.node);
        out->inputs = take(&x, &x.inputs);
        out->why = take(&x, &x.why);
        out->fix = take(&x, &x.fix);
        break;
    }
    expl_clear(&x);
    if (!x.oom) return OQ_OK;
    oq_refusal_clear(out);
    return oq_err_set(err, OQ_ERR_NOMEM, "out of memory explaining a runtime refusal");
}

void oq_refusal_clear(oq_refusal *r)
{
    if (!r) return;
    free(r->id);
    free(r->node);
    free(r->inputs);
    free(r->why);
    free(r->fix);
    free(r->raw);
    memset(r, 0, sizeof *r);
}

/* The line as one line whatever the message held (ORT's can span lines, a caller's too), and
 * a line cut at the buffer's end says so. */
static char *one_line(char *buf, size_t n, int len)
{
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    if (len >= 0 && (size_t)len >= n && n > 3) memcpy(buf + n - 4, "...", 4);
    return buf;
}

char *oq_refusal_str(const oq_refusal *r, char *buf, size_t n)
{
    if (!n || !buf) return buf;
    if (!r) {
        buf[0] = '\0';
        return buf;
    }
    const char *raw = r->raw ? r->raw : "";
    if (!r->id) return one_line(buf, n, snprintf(buf, n, "%s", raw));
    int len = snprintf(buf, n, "refused by ONNX Runtime [%s]%s%s%s%s: %s. Fix: %s%s%s%s", r->id,
                       r->node ? " at node " : "", r->node ? r->node : "", r->inputs ? "; inputs " : "",
                       r->inputs ? r->inputs : "", r->why ? r->why : "", r->fix ? r->fix : "",
                       r->raw ? " (ONNX Runtime: " : "", raw, r->raw ? ")" : "");
    return one_line(buf, n, len);
}
