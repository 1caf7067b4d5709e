/* Worker-side proofs: which attention kernel each node ran (ORT's routing lines, captured at
 * the file-descriptor level) and where every node was placed (EP assignment and profile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/advice.h"
#include "inspect/model-impl.h"
#include "ortqual/inspect.h"
#include "placement/placement-impl.h"
#include "validate/validate-impl.h"

oq_status oq_wcheck_begin(oq_wcheck *c, const oq_validate_plan *plan, const char *workdir, oq_err *err)
{
    memset(c, 0, sizeof *c);
    c->dispatch_on = plan->dispatch.enable;
    c->placement_on = plan->placement.enable;
    if (c->placement_on) snprintf(c->profile_prefix, sizeof c->profile_prefix, "%s/profile", workdir);
    if (!c->dispatch_on) return OQ_OK;
    /* ORT reads the switch when the session is created: set it first, capture from then on */
    oq_status st = oq_dispatch_env_enable(&c->env, err);
    if (!st) st = oq_dispatch_parser_create(&c->parser, err);
    if (!st) st = oq_capture_begin_dispatch(&c->cap, OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR, c->parser, err);
    return st;
}

void oq_wcheck_session_opts(oq_wcheck *c, oq_session_opts *so)
{
    c->sdpa_kernel = 0;
    for (size_t i = 0; i < so->n_ep_options; i++)
        if (!strcmp(so->ep_option_keys[i], "sdpa_kernel"))
            c->sdpa_kernel = (uint32_t)strtoul(so->ep_option_values[i], NULL, 0);
}

void oq_wcheck_placement_opts(oq_wcheck *c, oq_session_opts *so, const char **keys, const char **vals)
{
    so->profile_prefix = c->profile_prefix;
    so->session_config_keys = keys;
    so->session_config_values = vals;
    /* the user's own entry of it is this one ("1": another value is refused before the run) */
    for (size_t i = 0; i < so->n_session_configs; i++)
        if (!strcmp(keys[i], OQ_PLACEMENT_SESSION_CONFIG)) return;
    keys[so->n_session_configs] = OQ_PLACEMENT_SESSION_CONFIG;
    vals[so->n_session_configs++] = "1";
}

/* Attention nodes that print routing lines (the fused operators, not decomposed chains). */
static size_t attention_nodes(const oq_model_info *mi, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; mi && i < mi->n_attention && n < cap; i++)
        if (strcmp(mi->attention[i].kind, "decomposed") != 0) names[n++] = mi->attention[i].name;
    return n;
}

static const char *observed_kernel(const oq_dispatch_log *log, const char *node)
{
    const char *k = NULL;
    for (size_t i = 0; i < log->n_records; i++)
        if (!strcmp(log->records[i].node, node)) {
            k = log->records[i].kernel_name;
            if (strcmp(k, "MATH") == 0) return k; /* a MATH run anywhere is the one to explain */
        }
    return k;
}

/* How the exported attention excluded padded keys (additive when ortqual did not export it). */
static oq_attn_mask_kind mask_kind(oq_mask_form f)
{
    return f == OQ_MASK_SEQLEN ? OQ_ATTN_MASK_NONPAD_KV_SEQLEN
           : f == OQ_MASK_BOOL ? OQ_ATTN_MASK_BOOL
           : f == OQ_MASK_NONE ? OQ_ATTN_MASK_NONE : OQ_ATTN_MASK_FLOAT;
}

/* The model's ai.onnx opset (0 when it imports none). */
static int64_t onnx_opset(const oq_model_info *mi)
{
    for (size_t i = 0; mi && i < mi->n_opsets; i++)
        if (!*mi->opsets[i].domain || !strcmp(mi->opsets[i].domain, "ai.onnx")) return mi->opsets[i].version;
    return 0;
}

static const oq_node_info *node_named(const oq_node_info *ni, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ni[i].name, name) && (!*ni[i].domain || !strcmp(ni[i].domain, "ai.onnx"))) return &ni[i];
    return NULL;
}

/* The dtype a configuration's precision computes attention in (tf32 and fp32: float32). */
static oq_dtype precision_dtype(oq_precision p)
{
    return p == OQ_PREC_FP16 ? OQ_DTYPE_FLOAT16 : p == OQ_PREC_BF16 ? OQ_DTYPE_BFLOAT16 : OQ_DTYPE_FLOAT32;
}

/* The model's attention operator `name` as inspect read it: its Q typed through its producers
 * (a Cast to bfloat16 before it declares nothing), its heads from Q's shape as the graph computes
 * it (the inference convert reads head sizes with, never the scale); NULL: none. */
static const oq_attention_info *computed_info(const oq_model_info *mi, const char *name)
{
    for (size_t i = 0; mi && i < mi->n_attention; i++)
        if (strcmp(mi->attention[i].kind, "decomposed") && !strcmp(mi->attention[i].name, name))
            return &mi->attention[i];
    return NULL;
}

/* The float type `a` computes in; UNDEFINED when unknown or not a float type. */
static oq_dtype computed_dtype(const oq_attention_info *a)
{
    int32_t t = a ? a->elem_type : 0;
    return t == OQ_DTYPE_FLOAT16 || t == OQ_DTYPE_BFLOAT16 || t == OQ_DTYPE_FLOAT32 ? (oq_dtype)t : OQ_DTYPE_UNDEFINED;
}

/* What the advice knows of node `name`. ortqual's export: the configuration says how it was
 * exported. The user's model: the node says (its inputs, types, attributes; `computed`, what
 * inspect computed where nothing is declared: Q's type, heads and head size), the configuration
 * only what the node does not tell. The head size always comes from the node's shapes: unknown
 * (0) where they do not fix it. */
static oq_attention_facts node_facts(const oq_validate_plan *plan, const oq_node_info *ni,
                                     const oq_attention_info *computed, int64_t opset, const char *name,
                                     uint32_t sdpa_kernel)
{
    const oq_config *cfg = &plan->config;
    bool user = cfg->repr == OQ_REPR_MODEL;
    oq_attention_facts f = {.node = name, .opset = cfg->repr == OQ_REPR_ATTENTION24 ? 24 : 23,
                            .dtype = precision_dtype(cfg->precision),
                            .mask = user ? OQ_ATTN_MASK_NONE : mask_kind(plan->mask_form),
                            .q_len = plan->padded_length, .kv_len = plan->padded_length,
                            .user_model = user};
    if (user && computed_dtype(computed) != OQ_DTYPE_UNDEFINED) f.dtype = computed_dtype(computed);
    if (ni) {
        oq_attention_facts m;
        oq_attention_facts_from_node(ni, opset, &m);
        f.head_size = m.head_size > 0 ? m.head_size : computed ? computed->head_dim : 0;
        f.q_heads = m.q_heads > 0 ? m.q_heads : computed ? computed->heads : 0;
        if (user) {
            f.opset = m.opset;
            f.mask = m.mask;
            f.softcap = m.softcap;
            if (m.dtype != OQ_DTYPE_UNDEFINED) f.dtype = m.dtype;
            if (m.q_len > 0) f.q_len = m.q_len;
            if (m.kv_len > 0) f.kv_len = m.kv_len;
        }
    } else if (user) {
        f.opset = 0; /* not an ai.onnx Attention: ortqual knows no more of it */
    }
    f.sdpa_kernel = sdpa_kernel;
    return f;
}

/* Why a node missed the expected kernel, when ORT's rules say; `ni`: the model's Attention nodes. */
static void add_advice(oq_dispatch_result *d, const oq_validate_plan *plan, const oq_model_info *mi,
                       const oq_node_info *ni, size_t n_ni, const char **nodes, size_t n, uint32_t sdpa_kernel,
                       const char *expected)
{
    for (size_t i = 0; i < n; i++) {
        const char *obs = observed_kernel(&d->log, nodes[i]);
        if (!obs) continue;
        oq_attention_facts f = node_facts(plan, node_named(ni, n_ni, nodes[i]), computed_info(mi, nodes[i]),
                                          onnx_opset(mi), nodes[i], sdpa_kernel);
        oq_advice a = {0};
        if (oq_dispatch_advice(obs, expected, &f, &a, NULL) == OQ_OK && a.text)
            oq_strv_push(&d->advice, &d->n_advice, a.text);
        oq_advice_clear(&a);
    }
}

/* The configuration's kernel for every fused node, then the plan's NODE=KERNEL rules. */
static oq_status build_expect(const oq_validate_plan *plan, const char *kernel, const char **nodes, size_t n,
                              oq_dispatch_expect **e, int *have, oq_err *err)
{
    oq_status st = oq_dispatch_expect_create(e, err);
    char spec[512];
    *have = 0;
    for (size_t i = 0; !st && kernel && i < n; i++, (*have)++) {
        snprintf(spec, sizeof spec, "%s=%s", nodes[i], kernel);
        st = oq_dispatch_expect_add(*e, spec, err);
    }
    for (size_t i = 0; !st && i < plan->dispatch.n_expect; i++, (*have)++)
        st = oq_dispatch_expect_add(*e, plan->dispatch.expect[i], err);
    return st;
}

/* Required, but no kernel named: every attention node must at least have a routing line.
 * A node may keep any kernel it was seen with; an unseen node fails as "not observed". */
static void require_observed(oq_dispatch_expect *ex, const oq_dispatch_log *log, const char **nodes, size_t n)
{
    char spec[512];
    for (size_t i = 0; i < log->n_records; i++) {
        snprintf(spec, sizeof spec, "%s=%s", log->records[i].node, log->records[i].kernel_name);
        oq_dispatch_expect_add(ex, spec, NULL);
    }
    for (size_t i = 0; i < n; i++)
        if (!observed_kernel(log, nodes[i])) {
            snprintf(spec, sizeof spec, "%s=MATH", nodes[i]);
            oq_dispatch_expect_add(ex, spec, NULL);
        }
}

/* Fills r->dispatch; sets *verdict: 1 verified (or nothing expected), 0 failed, -1 not
 * verified (a skip). */
static void dispatch_finish(oq_wcheck *c, const oq_validate_plan *plan, int *verdict, char *reason, size_t rn,
                            oq_dispatch_result *d)
{
    oq_err e = {0};
    oq_capture_end(c->cap, NULL, &e);
    c->cap = NULL;
    oq_dispatch_parser_finish(c->parser, NULL);
    oq_dispatch_env_restore(&c->env);
    const oq_dispatch_log *log = oq_dispatch_parser_log(c->parser);
    oq_model_info *mi = NULL;
    oq_node_info *ni = NULL; /* the model parsed once for the attention nodes and the advice */
    size_t n_ni = 0;
    if (c->model) oq_model_inspect_nodes_bytes(c->model, c->model_n, plan->model, "Attention", &mi, &ni, &n_ni, NULL);
    else oq_model_inspect_nodes(plan->model ? plan->model : "", "Attention", &mi, &ni, &n_ni, NULL);
    const char *nodes[256];
    size_t n = attention_nodes(mi, nodes, 256);
    /* the reference's routing lines are evidence: its kernel choice is not an expectation */
    const char *kernel = plan->is_reference ? NULL : oq_kernel_ort_name(plan->config.kernel);
    oq_dispatch_expect *ex = NULL;
    int have = 0;
    *verdict = 1;
    d->recorded = 1;
    oq_dispatch_log_copy(&d->log, log, NULL); /* the result outlives the parser */
    if (build_expect(plan, kernel, nodes, n, &ex, &have, &e) != OQ_OK) {
        *verdict = 0;
        snprintf(reason, rn, "dispatch expectation: %.400s", e.msg);
    } else if (have || plan->dispatch.require) {
        oq_dispatch_report r = {0};
        if (!have) require_observed(ex, log, nodes, n);
        oq_dispatch_check(ex, log, &r, NULL);
        d->checked = 1;
        d->passed = r.passed;
        d->n_math_failures = r.n_math_failures;
        oq_dispatch_failures_add(d, r.failures, r.failed, r.n_failures);
        if (!r.passed) {
            *verdict = plan->dispatch.require ? 0 : -1;
            snprintf(reason, rn, "dispatch: %s%s", r.n_failures ? r.failures[0] : "no routing line observed",
                     r.n_failures > 1 ? " (and more)" : "");
        }
        oq_dispatch_report_clear(&r);
    }
    add_advice(d, plan, mi, ni, n_ni, nodes, n, c->sdpa_kernel, kernel);
    oq_dispatch_expect_free(ex);
    oq_model_info_free(mi);
    oq_node_infos_free(ni, n_ni);
}

static void placement_finish(const oq_validate_plan *plan, oq_session *s, const char *why, int *verdict, char *reason,
                             size_t rn, oq_placement_result *p)
{
    oq_err e = {0};
    char *profile = s ? oq_session_end_profiling(s) : NULL;
    *verdict = 1;
    p->recorded = 1;
    p->required = plan->placement.require;
    if (oq_placement_create(&p->placement, &e)) {
        p->error = strdup(e.msg);
    } else {
        if (!s) oq_strv_push(&p->witness_errors, &p->n_witness_errors, why && *why ? why : "no profiled session");
        if (s && oq_placement_add_assignment(p->placement, s, &e))
            oq_strv_push(&p->witness_errors, &p->n_witness_errors, e.msg);
        if (s && (!profile || oq_placement_add_profile(p->placement, profile, &e)))
            oq_strv_push(&p->witness_errors, &p->n_witness_errors, profile ? e.msg : "ORT wrote no profile");
        oq_placement_check(p->placement, plan->placement.strict ? OQ_PLACEMENT_STRICT : 0, &p->report, &e);
        if (plan->placement.require && !p->report.passed) {
            *verdict = 0;
            snprintf(reason, rn, "placement: %s%s", p->report.n_failures ? p->report.failures[0] : "no placement evidence",
                     p->report.n_failures > 1 ? " (and more nodes)" : "");
        }
    }
    if (profile) remove(profile);
    free(profile);
}

void oq_wcheck_finish(oq_wcheck *c, const oq_validate_plan *plan, oq_wcheck_profiled profiled, void *ctx,
                      oq_config_result *r, int *verdict, char *reason, size_t rn)
{
    int vd = 1, vp = 1;
    char rd[512] = "", rp[512] = "", why[512] = "";
    if (c->dispatch_on) dispatch_finish(c, plan, &vd, rd, sizeof rd, &r->dispatch);
    if (c->placement_on) { /* after the capture ended: the profiled session's lines are not the run's */
        oq_session *s = profiled(ctx, why, sizeof why);
        placement_finish(plan, s, why, &vp, rp, sizeof rp, &r->placement);
        oq_session_free(s);
    }
    snprintf(reason, rn, "%s%s%s", rd, *rd && *rp ? "; " : "", rp);
    *verdict = vd == 0 || vp == 0 ? 0 : vd;
    oq_dispatch_parser_free(c->parser); /* capture and environment were ended by dispatch_finish */
    memset(c, 0, sizeof *c);
}

void oq_wcheck_abort(oq_wcheck *c)
{
    if (c->cap) oq_capture_end(c->cap, NULL, NULL);
    if (c->dispatch_on) oq_dispatch_env_restore(&c->env);
    oq_dispatch_parser_free(c->parser);
    memset(c, 0, sizeof *c);
}
