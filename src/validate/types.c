/* The typed plan and results: names, copies, and releasing what they own. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate-impl.h"

const char *oq_verdict_name(oq_verdict v)
{
    static const char *const names[] = {"passed", "failed", "skipped", "not-run", "error"};
    OQ_ASSERT((unsigned)v < sizeof names / sizeof *names);
    return names[v];
}

const char *oq_run_verdict_name(oq_run_verdict v)
{
    static const char *const names[] = {"passed", "failed", "error", "untested"};
    OQ_ASSERT((unsigned)v < sizeof names / sizeof *names);
    return names[v];
}

void oq_config_file_tag(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name);
    for (char *p = buf; *p; p++)
        if (*p == ':' || *p == '/') *p = '_';
}

static void strv_clear(char ***v, size_t *n)
{
    for (size_t i = 0; i < *n; i++) free((*v)[i]);
    free(*v);
    *v = NULL;
    *n = 0;
}

void oq_validate_plan_clear(oq_validate_plan *p)
{
    free(p->model);
    free(p->weights);
    size_t n = p->n_inputs; /* the members grow beside the names */
    strv_clear(&p->input_members, &n);
    strv_clear(&p->input_names, &p->n_inputs);
    free(p->mask_member);
    for (size_t i = 0; i < p->n_batches; i++) {
        free(p->batches[i].inputs);
        free(p->batches[i].ref);
        free(p->batches[i].save);
    }
    free(p->batches);
    free(p->tolerances);
    free(p->ort_lib);
    size_t k = p->n_ep_libs;
    strv_clear(&p->ep_lib_names, &k);
    strv_clear(&p->ep_lib_paths, &p->n_ep_libs);
    k = p->n_ep_options;
    strv_clear(&p->ep_option_keys, &k);
    strv_clear(&p->ep_option_values, &p->n_ep_options);
    strv_clear(&p->dispatch.expect, &p->dispatch.n_expect);
    free(p->result);
    memset(p, 0, sizeof *p);
}

oq_status oq_plan_add_input(oq_validate_plan *p, const char *name, const char *member, oq_err *err)
{
    size_t n = p->n_inputs; /* input_members[] grows beside input_names[] */
    if (oq_strv_push(&p->input_members, &n, member) ||
        oq_strv_push(&p->input_names, &p->n_inputs, name)) {
        if (n > p->n_inputs) free(p->input_members[n - 1]);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

void oq_dispatch_result_clear(oq_dispatch_result *d)
{
    oq_dispatch_log_clear(&d->log);
    strv_clear(&d->failures, &d->n_failures);
    strv_clear(&d->advice, &d->n_advice);
    memset(d, 0, sizeof *d);
}

static int copy_strv(char ***dst, size_t *n, char *const *src, size_t n_src)
{
    for (size_t i = 0; i < n_src; i++)
        if (oq_strv_push(dst, n, src[i])) return 0;
    return 1;
}

oq_status oq_dispatch_result_copy(oq_dispatch_result *dst, const oq_dispatch_result *src)
{
    oq_dispatch_result_clear(dst);
    dst->recorded = src->recorded;
    dst->checked = src->checked;
    dst->passed = src->passed;
    dst->n_math_failures = src->n_math_failures;
    int ok = oq_dispatch_log_copy(&dst->log, &src->log, NULL) == OQ_OK &&
             copy_strv(&dst->failures, &dst->n_failures, src->failures, src->n_failures) &&
             copy_strv(&dst->advice, &dst->n_advice, src->advice, src->n_advice);
    return ok ? OQ_OK : OQ_ERR_NOMEM;
}

static void placement_result_clear(oq_placement_result *p)
{
    free(p->error);
    oq_placement_free(p->placement);
    oq_placement_report_clear(&p->report);
    strv_clear(&p->witness_errors, &p->n_witness_errors);
    memset(p, 0, sizeof *p);
}

static void worker_run_clear(oq_worker_run *w)
{
    free(w->stderr_tail);
    memset(w, 0, sizeof *w);
}

void oq_config_result_clear(oq_config_result *r)
{
    free(r->reason);
    free(r->model_file);
    worker_run_clear(&r->worker);
    for (size_t i = 0; i < r->n_batches; i++) free(r->batches[i].outputs);
    free(r->batches);
    free(r->ort_version);
    free(r->ort_library);
    oq_ep_devices_free(r->ep_devices, r->n_ep_devices);
    free(r->evidence_json);
    oq_dispatch_result_clear(&r->dispatch);
    placement_result_clear(&r->placement);
    free(r->teeth.error);
    worker_run_clear(&r->teeth.worker);
    oq_dispatch_result_clear(&r->teeth.rerun_dispatch);
    oq_refusal_clear(&r->refusal);
    free(r->shards);
    memset(r, 0, sizeof *r);
}

void oq_result_reason(oq_config_result *r, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0) text = NULL; /* out of memory: the verdict stays, without its line */
    va_end(ap);
    free(r->reason);
    r->reason = text;
}

void oq_batch_info_clear(oq_batch_info *b)
{
    free(b->inputs);
    free(b->lengths);
    free(b->event_indices);
    free(b->expected);
    memset(b, 0, sizeof *b);
}

oq_status oq_batch_info_copy(oq_batch_info *dst, const oq_batch_info *src, oq_err *err)
{
    size_t bytes = (src->batch_size ? (size_t)src->batch_size : 1) * sizeof(int64_t);
    *dst = *src;
    dst->inputs = strdup(src->inputs);
    dst->lengths = malloc(bytes);
    dst->event_indices = malloc(bytes);
    dst->expected = src->expected ? strdup(src->expected) : NULL;
    if (!dst->inputs || !dst->lengths || !dst->event_indices || (src->expected && !dst->expected)) {
        oq_batch_info_clear(dst);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    memcpy(dst->lengths, src->lengths, (size_t)src->batch_size * sizeof(int64_t));
    memcpy(dst->event_indices, src->event_indices, (size_t)src->batch_size * sizeof(int64_t));
    return OQ_OK;
}

void oq_shard_info_clear(oq_shard_info *s)
{
    free(s->batches);
    strv_clear(&s->configs, &s->n_configs);
    memset(s, 0, sizeof *s);
}

void oq_merge_info_clear(oq_merge_info *m)
{
    free(m->reported);
    free(m->problems);
    memset(m, 0, sizeof *m);
}

void oq_shard_plan_clear(oq_shard_plan *p)
{
    free(p->description);
    strv_clear(&p->configs, &p->n_configs);
    for (size_t i = 0; i < p->n_batches; i++) oq_batch_info_clear(&p->batches[i]);
    free(p->batches);
    memset(p, 0, sizeof *p);
}

void oq_validate_summary_free(oq_validate_summary *s)
{
    if (!s) return;
    free(s->evidence_json);
    free(s->plan_description);
    oq_shard_info_clear(&s->shard);
    oq_merge_info_clear(&s->merged);
    for (size_t i = 0; i < s->n_batches; i++) oq_batch_info_clear(&s->batches[i]);
    free(s->batches);
    for (size_t i = 0; i < s->n_configs; i++) oq_config_result_clear(&s->configs[i]);
    free(s->configs);
    strv_clear(&s->input_names, &s->n_input_names);
    free(s->mask_input);
    free(s->verdict_reason);
    strv_clear(&s->plots, &s->n_plots);
    free(s->plot_error);
    free(s);
}
