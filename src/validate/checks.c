/* Worker-side proofs: which attention kernel each node ran (ORT's routing lines, captured at
 * the file-descriptor level) and where every node was placed (EP assignment and profile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/advice.h"
#include "ortqual/inspect.h"
#include "placement/placement-impl.h"
#include "validate/validate-impl.h"

oq_status oq_wcheck_begin(oq_wcheck *c, const json_t *plan, const char *workdir, oq_err *err)
{
    memset(c, 0, sizeof *c);
    const json_t *d = json_object_get(plan, "dispatch");
    const json_t *p = json_object_get(plan, "placement");
    c->dispatch_on = json_is_true(json_object_get(d, "enable"));
    c->placement_on = json_is_true(json_object_get(p, "enable"));
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
    static const char *keys[] = {OQ_PLACEMENT_SESSION_CONFIG};
    static const char *vals[] = {"1"};
    c->sdpa_kernel = 0;
    for (size_t i = 0; i < so->n_ep_options; i++)
        if (!strcmp(so->ep_option_keys[i], "sdpa_kernel"))
            c->sdpa_kernel = (uint32_t)strtoul(so->ep_option_values[i], NULL, 0);
    if (!c->placement_on) return;
    so->profile_prefix = c->profile_prefix;
    so->n_session_configs = 1;
    so->session_config_keys = keys;
    so->session_config_values = vals;
}

/* Attention nodes that print routing lines (the fused operators, not decomposed chains). */
static size_t attention_nodes(const oq_model_info *mi, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; mi && i < mi->n_attention && n < cap; i++)
        if (strcmp(mi->attention[i].kind, "decomposed") != 0) names[n++] = mi->attention[i].name;
    return n;
}

static json_t *records_json(const oq_dispatch_log *log)
{
    json_t *a = json_array();
    for (size_t i = 0; i < log->n_records; i++) {
        const oq_dispatch_record *r = &log->records[i];
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:I}", "node", r->node, "op", r->op,
                                           "dtype", r->dtype, "kernel", r->kernel_name, "line",
                                           (json_int_t)r->line));
    }
    return a;
}

static json_t *options_json(const oq_dispatch_log *log)
{
    json_t *a = json_array();
    for (size_t i = 0; i < log->n_options; i++) {
        json_t *o = json_object();
        for (size_t k = 0; k < log->options[i].n_opts; k++)
            json_object_set_new(o, log->options[i].opts[k].name, json_integer(log->options[i].opts[k].value));
        json_array_append_new(a, o);
    }
    return a;
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

/* How the exported attention excluded padded keys (the plan's mask_form, as export resolved it). */
static oq_attn_mask_kind mask_kind(const json_t *plan)
{
    const char *m = oq_json_str(plan, "mask_form", "");
    return !strcmp(m, "seqlen") ? OQ_ATTN_MASK_NONPAD_KV_SEQLEN
           : !strcmp(m, "bool") ? OQ_ATTN_MASK_BOOL
           : !strcmp(m, "none") ? OQ_ATTN_MASK_NONE : OQ_ATTN_MASK_FLOAT;
}

/* Why a node missed the expected kernel, when ORT's rules say. */
static void add_advice(json_t *jd, const json_t *plan, const oq_dispatch_log *log, const char **nodes,
                       size_t n, const oq_config *cfg, uint32_t sdpa_kernel, const char *expected,
                       int64_t len)
{
    json_t *adv = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *obs = observed_kernel(log, nodes[i]);
        if (!obs) continue;
        oq_attention_facts f = {.node = nodes[i], .opset = cfg->repr == OQ_REPR_ATTENTION24 ? 24 : 23,
                                .dtype = cfg->precision == OQ_PREC_FP16 ? OQ_DTYPE_FLOAT16 : OQ_DTYPE_FLOAT32,
                                .mask = mask_kind(plan), .q_len = len, .kv_len = len,
                                .sdpa_kernel = sdpa_kernel};
        oq_advice a = {0};
        if (oq_dispatch_advice(obs, expected, &f, &a, NULL) == OQ_OK && a.text)
            json_array_append_new(adv, json_string(a.text));
        oq_advice_clear(&a);
    }
    json_object_set_new(jd, "advice", adv);
}

static oq_status build_expect(const json_t *d, const char **nodes, size_t n, oq_dispatch_expect **e,
                              int *have, oq_err *err)
{
    oq_status st = oq_dispatch_expect_create(e, err);
    const char *kernel = oq_json_str(d, "kernel", NULL);
    char spec[512];
    *have = 0;
    for (size_t i = 0; !st && kernel && i < n; i++, (*have)++) {
        snprintf(spec, sizeof spec, "%s=%s", nodes[i], kernel);
        st = oq_dispatch_expect_add(*e, spec, err);
    }
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(d, "expect"), i, s) {
        if (st) break;
        st = oq_dispatch_expect_add(*e, json_string_value(s), err);
        (*have)++;
    }
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

/* Sets *verdict: 1 verified (or nothing expected), 0 failed, -1 not verified (a skip). */
static json_t *dispatch_finish(oq_wcheck *c, const json_t *plan, const oq_config *cfg, const char *model,
                               int *verdict, char *reason, size_t rn)
{
    oq_err e = {0};
    oq_capture_end(c->cap, NULL, &e);
    c->cap = NULL;
    oq_dispatch_parser_finish(c->parser, NULL);
    oq_dispatch_env_restore(&c->env);
    const oq_dispatch_log *log = oq_dispatch_parser_log(c->parser);
    const json_t *d = json_object_get(plan, "dispatch");
    oq_model_info *mi = NULL;
    oq_model_inspect_file(model, &mi, NULL);
    const char *nodes[256];
    size_t n = attention_nodes(mi, nodes, 256);
    json_t *jd = json_pack("{s:o, s:o}", "records", records_json(log), "options", options_json(log));
    oq_dispatch_expect *ex = NULL;
    int have = 0;
    *verdict = 1;
    if (build_expect(d, nodes, n, &ex, &have, &e) != OQ_OK) {
        *verdict = 0;
        snprintf(reason, rn, "dispatch expectation: %.400s", e.msg);
    } else if (have || json_is_true(json_object_get(d, "require"))) {
        oq_dispatch_report r = {0};
        if (!have) require_observed(ex, log, nodes, n);
        oq_dispatch_check(ex, log, &r, NULL);
        json_t *f = json_array();
        for (size_t i = 0; i < r.n_failures; i++) json_array_append_new(f, json_string(r.failures[i]));
        json_object_set_new(jd, "failures", f);
        json_object_set_new(jd, "passed", json_boolean(r.passed));
        if (!r.passed) {
            *verdict = json_is_true(json_object_get(d, "require")) ? 0 : -1;
            snprintf(reason, rn, "dispatch: %s%s", r.n_failures ? r.failures[0] : "no routing line observed",
                     r.n_failures > 1 ? " (and more)" : "");
        }
        oq_dispatch_report_clear(&r);
    }
    add_advice(jd, plan, log, nodes, n, cfg, c->sdpa_kernel, oq_json_str(d, "kernel", NULL),
               json_integer_value(json_object_get(plan, "padded_length")));
    oq_dispatch_expect_free(ex);
    oq_model_info_free(mi);
    return jd;
}

static json_t *placement_finish(const json_t *plan, oq_session *s, int *verdict,
                                char *reason, size_t rn)
{
    const json_t *p = json_object_get(plan, "placement");
    oq_placement *pl = NULL;
    oq_placement_report r = {0};
    oq_err e = {0};
    char *profile = oq_session_end_profiling(s);
    json_t *notes = json_array();
    *verdict = 1;
    if (oq_placement_create(&pl, &e)) return json_pack("{s:s}", "error", e.msg);
    if (oq_placement_add_assignment(pl, s, &e)) json_array_append_new(notes, json_string(e.msg));
    if (!profile || oq_placement_add_profile(pl, profile, &e))
        json_array_append_new(notes, json_string(profile ? e.msg : "ORT wrote no profile"));
    unsigned flags = json_is_true(json_object_get(p, "strict")) ? OQ_PLACEMENT_STRICT : 0;
    oq_placement_check(pl, flags, &r, &e);
    json_t *j = oq_placement_to_json(pl, &r);
    json_object_set_new(j, "witness_errors", notes);
    if (json_is_true(json_object_get(p, "require")) && !r.passed) {
        *verdict = 0;
        snprintf(reason, rn, "placement: %s%s", r.n_failures ? r.failures[0] : "no placement evidence",
                 r.n_failures > 1 ? " (and more nodes)" : "");
    }
    if (profile) remove(profile);
    free(profile);
    oq_placement_report_clear(&r);
    oq_placement_free(pl);
    return j;
}

void oq_wcheck_finish(oq_wcheck *c, const json_t *plan, const oq_config *cfg, oq_session *s,
                      json_t *result, int *verdict, char *reason, size_t rn)
{
    int vd = 1, vp = 1;
    char rd[512] = "", rp[512] = "";
    const char *model = oq_json_str(plan, "model", "");
    if (c->dispatch_on)
        json_object_set_new(result, "dispatch", dispatch_finish(c, plan, cfg, model, &vd, rd, sizeof rd));
    if (c->placement_on && s)
        json_object_set_new(result, "placement", placement_finish(plan, s, &vp, rp, sizeof rp));
    snprintf(reason, rn, "%s%s%s", rd, *rd && *rp ? "; " : "", rp);
    *verdict = vd == 0 || vp == 0 ? 0 : vd;
    oq_dispatch_parser_free(c->parser);
    c->parser = NULL;
}

void oq_wcheck_abort(oq_wcheck *c)
{
    if (c->cap) oq_capture_end(c->cap, NULL, NULL);
    if (c->dispatch_on) oq_dispatch_env_restore(&c->env);
    oq_dispatch_parser_free(c->parser);
    memset(c, 0, sizeof *c);
}
