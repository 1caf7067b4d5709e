/* The typed plan and results: names, copies, and releasing what they own. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "ortqual/stats.h"
#include "validate/validate-impl.h"

const char *oq_verdict_name(oq_verdict v)
{
    static const char *const names[] = {"passed", "failed", "skipped", "not-run", "error", "reference"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "unknown";
}

const char *oq_run_verdict_name(oq_run_verdict v)
{
    static const char *const names[] = {"passed", "failed", "error", "untested", "interrupted"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "unknown";
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
    free(p->model_sha256);
    free(p->weights);
    free(p->weights_sha256);
    size_t n = p->n_inputs; /* the members grow beside the names */
    strv_clear(&p->input_members, &n);
    strv_clear(&p->input_names, &p->n_inputs);
    free(p->mask_member);
    free(p->batches_file);
    free(p->tolerances);
    strv_clear(&p->ref_outputs, &p->n_ref_outputs);
    oq_seq_axes_clear(&p->seq_axes, &p->n_seq_axes);
    free(p->ort_lib);
    size_t k = p->n_ep_libs;
    strv_clear(&p->ep_lib_names, &k);
    strv_clear(&p->ep_lib_paths, &p->n_ep_libs);
    free(p->ep_lib_content);
    k = p->n_ep_options;
    strv_clear(&p->ep_option_keys, &k);
    strv_clear(&p->ep_option_values, &p->n_ep_options);
    k = p->n_session_configs;
    strv_clear(&p->session_config_keys, &k);
    strv_clear(&p->session_config_values, &p->n_session_configs);
    strv_clear(&p->dispatch.expect, &p->dispatch.n_expect);
    free(p->result);
    free(p->cache_dir);
    free(p->ref_stream);
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

int oq_seq_axes_copy(oq_seq_axis **v, size_t *n, const oq_seq_axis *src, size_t n_src)
{
    for (size_t i = 0; i < n_src; i++) {
        char *name = strdup(src[i].output);
        oq_seq_axis *a = name ? OQ_PUSH(*v, *n) : NULL;
        if (!a) {
            free(name);
            return 0;
        }
        *a = src[i];
        a->output = name;
    }
    return 1;
}

void oq_seq_axes_clear(oq_seq_axis **v, size_t *n)
{
    for (size_t i = 0; i < *n; i++) free((char *)(*v)[i].output);
    free(*v);
    *v = NULL;
    *n = 0;
}

void oq_dispatch_result_clear(oq_dispatch_result *d)
{
    oq_dispatch_log_clear(&d->log);
    for (size_t i = 0; d->failed && i < d->n_failures; i++) oq_dispatch_failure_clear(&d->failed[i]);
    free(d->failed);
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
    int ok = oq_dispatch_log_copy(&dst->log, &src->log, NULL) == OQ_OK;
    for (size_t i = 0; ok && i < src->n_failures; i++) {
        oq_dispatch_failure f;
        ok = oq_dispatch_failure_get(src, i, &f) == OQ_OK && oq_dispatch_failure_add(dst, src->failures[i], &f) == OQ_OK;
        oq_dispatch_failure_clear(&f);
    }
    ok = ok && copy_strv(&dst->advice, &dst->n_advice, src->advice, src->n_advice);
    return ok ? OQ_OK : OQ_ERR_NOMEM;
}

oq_status oq_dispatch_failure_add(oq_dispatch_result *d, const char *text, const oq_dispatch_failure *f)
{
    size_t n = d->n_failures; /* failed[] grows beside failures[] */
    oq_dispatch_failure *slot = OQ_PUSH(d->failed, n);
    if (!slot || oq_dispatch_failure_copy(slot, f, NULL) != OQ_OK) return OQ_ERR_NOMEM;
    if (oq_strv_push(&d->failures, &d->n_failures, text)) {
        oq_dispatch_failure_clear(slot); /* past n_failures: zeroed, as an unused entry is */
        return OQ_ERR_NOMEM;
    }
    return OQ_OK;
}

oq_status oq_dispatch_failures_add(oq_dispatch_result *d, char *const *texts, const oq_dispatch_failure *failed,
                                   size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (oq_dispatch_failure_add(d, texts[i], &failed[i]) != OQ_OK) return OQ_ERR_NOMEM;
    return OQ_OK;
}

oq_status oq_dispatch_failure_get(const oq_dispatch_result *d, size_t i, oq_dispatch_failure *out)
{
    return d->failed ? oq_dispatch_failure_copy(out, &d->failed[i], NULL)
                     : oq_dispatch_failure_from_text(d->failures[i], &d->log, out, NULL);
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
    free(r->cache_warning);
    for (size_t i = 0; i < r->n_cache_ignored; i++) free(r->cache_ignored[i].entry), free(r->cache_ignored[i].reason);
    free(r->cache_ignored);
    free(r->model_file);
    worker_run_clear(&r->worker);
    for (size_t i = 0; i < r->n_batches; i++) free(r->batches[i].outputs);
    free(r->batches);
    free(r->outputs);
    free(r->ort_version);
    free(r->ort_library);
    oq_ep_devices_free(r->ep_devices, r->n_ep_devices);
    free(r->evidence_json);
    free(r->saved_by);
    free(r->cache_writers);
    oq_dispatch_result_clear(&r->dispatch);
    placement_result_clear(&r->placement);
    free(r->teeth.error);
    worker_run_clear(&r->teeth.worker);
    oq_dispatch_result_clear(&r->teeth.rerun_dispatch);
    oq_refusal_clear(&r->refusal);
    free(r->shards);
    memset(r, 0, sizeof *r);
}

int oq_config_same_runtime(const oq_config_result *a, const oq_config_result *b)
{
    if (strcmp(a->ort_version, b->ort_version)) return 0;
    if (*a->ort_library_sha256 && *b->ort_library_sha256) return !strcmp(a->ort_library_sha256, b->ort_library_sha256);
    return a->ort_library && b->ort_library && !strcmp(a->ort_library, b->ort_library);
}

const oq_config_result *oq_validate_ort_build_of(const oq_validate_summary *s, size_t i)
{
    if (!s || i >= s->n_configs || !s->configs[i].ort_version) return NULL;
    size_t j = 0; /* ends at i at the latest */
    while (!s->configs[j].ort_version || !oq_config_same_runtime(&s->configs[j], &s->configs[i])) j++;
    return &s->configs[j];
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

const char *oq_batch_source_name(const oq_batch_info *b)
{
    return b->expected ? "saved-outputs" : b->source ? "inputs" : "generated";
}

oq_batch_brief oq_batch_brief_of(const oq_batch_info *b)
{
    return (oq_batch_brief){b->index, b->valid_size, oq_batch_source_name(b)};
}

void oq_batch_info_clear(oq_batch_info *b)
{
    free(b->inputs);
    free(b->lengths);
    free(b->event_indices);
    free(b->expected);
    free(b->source);
    free(b->expected_source);
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
    dst->source = src->source ? strdup(src->source) : NULL;
    dst->expected_source = src->expected_source ? strdup(src->expected_source) : NULL;
    if (!dst->inputs || !dst->lengths || !dst->event_indices || (src->expected && !dst->expected) ||
        (src->source && !dst->source) || (src->expected_source && !dst->expected_source)) {
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
    strv_clear(&m->saved_outputs, &m->n_saved_outputs);
    memset(m, 0, sizeof *m);
}

void oq_shard_plan_clear(oq_shard_plan *p)
{
    if (!p) return;
    free(p->description_path);
    free(p->batches_path);
    strv_clear(&p->configs, &p->n_configs);
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
    free(s->cache_dir);
    free(s->cache_off);
    free(s->cache_group);
    free(s->verdict_reason);
    strv_clear(&s->requirements, &s->n_requirements);
    strv_clear(&s->plots, &s->n_plots);
    free(s->plot_error);
    free(s);
}

/* ---- outputs over batches ------------------------------------------------------------ */

void oq_batch_output_counts(const oq_batch_output *o, oq_compare_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", o->name);
    r->tol = o->tol;
    r->exact = o->exact;
    r->out_dtype = o->dtype;
    r->ref_dtype = o->ref_dtype;
    r->num_valid = o->num_valid;
    r->over_tol = o->over_tol;
    r->nan_count = o->nan_count;
    r->inf_count = o->inf_count;
    r->ref_nan_count = o->ref_nan_count;
    r->ref_inf_count = o->ref_inf_count;
    r->padding_checked = o->padding_checked;
    r->pad_nonzero = o->pad_nonzero;
    r->padding_rule = o->padding_rule;
    r->ref_pad_nonzero = o->ref_pad_nonzero;
    r->masked = o->masked;
    r->num_elements = o->num_elements;
    r->num_padded = o->num_padded;
}

void oq_batch_output_of(const oq_compare_result *r, const oq_worst_events *ev, oq_batch_output *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", r->name);
    o->tol = r->tol;
    o->passed = r->passed;
    o->exact = r->exact;
    o->masked = r->masked;
    o->padding_rule = r->padding_rule;
    o->padding_checked = r->padding_checked;
    o->num_valid = r->num_valid;
    o->num_padded = r->num_padded;
    o->over_tol = r->over_tol;
    o->nan_count = r->nan_count;
    o->inf_count = r->inf_count;
    o->ref_nan_count = r->ref_nan_count;
    o->ref_inf_count = r->ref_inf_count;
    o->pad_nonzero = r->pad_nonzero;
    o->ref_pad_nonzero = r->ref_pad_nonzero;
    o->max_abs = r->max_abs;
    o->max_rel = r->max_rel;
    o->mean_abs = r->mean_abs;
    o->rms = r->rms;
    o->rel_l2 = r->rel_l2;
    o->ndim = r->ndim;
    o->has_worst = !r->passed && r->worst_count > 0;
    if (o->has_worst) o->worst = r->worst[0];
    o->dtype = r->out_dtype;
    o->ref_dtype = r->ref_dtype;
    o->num_elements = r->num_elements;
    o->worst_event_known = o->has_worst && ev && (ev->known & 1u);
    o->worst_event = o->worst_event_known ? ev->worst[0] : 0;
}

/* Elements whose |d| the metrics hold: the valid finite ones (every one is in the histogram). */
static int64_t finite_count(const oq_log_hist *h)
{
    int64_t n = h->zero + h->below + h->above;
    for (int i = 0; i < OQ_HIST_BINS; i++) n += h->bins[i];
    return n;
}

/* The order of the worst list: non-finite (NaN included) first, then the largest |d|. */
static double worst_key(const oq_compare_elem *e)
{
    return isfinite(e->abs_diff) || isinf(e->abs_diff) ? e->abs_diff : INFINITY;
}

/* The two worst lists merged, largest first, as long as the longer one. */
static void merge_worst(oq_output_result *a, const oq_output_result *b)
{
    const oq_compare_result *x = &a->all, *y = &b->all;
    oq_compare_elem e[OQ_COMPARE_MAX_WORST];
    int64_t at[OQ_COMPARE_MAX_WORST], ev[OQ_COMPARE_MAX_WORST];
    unsigned known = 0;
    int32_t k = x->worst_count > y->worst_count ? x->worst_count : y->worst_count, n = 0, i = 0, j = 0;
    while (n < k && (i < x->worst_count || j < y->worst_count)) {
        int take_a = j >= y->worst_count || (i < x->worst_count && worst_key(&x->worst[i]) >= worst_key(&y->worst[j]));
        const oq_output_result *from = take_a ? a : b;
        int32_t at_i = take_a ? i++ : j++;
        e[n] = from->all.worst[at_i];
        at[n] = from->worst_batch[at_i];
        ev[n] = from->worst_event[at_i];
        known |= ((from->worst_event_known >> at_i) & 1u) << n;
        n++;
    }
    memcpy(a->all.worst, e, (size_t)n * sizeof *e);
    memcpy(a->worst_batch, at, (size_t)n * sizeof *at);
    memcpy(a->worst_event, ev, (size_t)n * sizeof *ev);
    a->worst_event_known = known;
    a->all.worst_count = n;
}

/* How far worst_failing is over its bound (+inf for a non-finite one), to keep the furthest. */
static double failing_excess(const oq_compare_result *r)
{
    const oq_compare_elem *e = &r->worst_failing;
    if (!isfinite(e->got) || !isfinite(e->expected)) return INFINITY;
    return e->abs_diff - (r->tol.atol + r->tol.rtol * fabs(e->expected));
}

static void merge_hists(oq_compare_result *a, const oq_compare_result *b)
{
    a->err_hist.zero += b->err_hist.zero;
    a->err_hist.below += b->err_hist.below;
    a->err_hist.above += b->err_hist.above;
    for (int i = 0; i < OQ_HIST_BINS; i++) a->err_hist.bins[i] += b->err_hist.bins[i];
    for (int i = 0; i < OQ_MAG_SLOTS; i++) {
        a->by_ref.count[i] += b->by_ref.count[i];
        a->by_ref.over_tol[i] += b->by_ref.over_tol[i];
        a->by_ref.max_abs[i] = fmax(a->by_ref.max_abs[i], b->by_ref.max_abs[i]);
    }
}

/* The larger (a NaN, which no finite metric is, loses as in the per-batch rows). */
static double max_of(double a, double b) { return fmax(a, b); }

/* mean_abs, rms and rel_l2 over the finite elements of both, from the exact sums: the same
 * doubles whichever batches or shards were added first. */
static void merge_sums(oq_output_result *into, const oq_output_result *from, int64_t n)
{
    oq_fsum_merge(&into->sum_abs, &from->sum_abs);
    oq_fsum_merge(&into->sum_sq, &from->sum_sq);
    oq_fsum_merge(&into->sum_ref_sq, &from->sum_ref_sq);
    into->sums_known = into->sums_known && from->sums_known;
    oq_compare_result *a = &into->all;
    a->sum_abs = oq_fsum_value(&into->sum_abs);
    a->sum_sq = oq_fsum_value(&into->sum_sq);
    a->sum_ref_sq = oq_fsum_value(&into->sum_ref_sq);
    a->rel_l2 = oq_rel_l2_of(a->sum_sq, a->sum_ref_sq);
    if (!n) return;
    a->mean_abs = a->sum_abs / (double)n;
    a->rms = sqrt(a->sum_sq / (double)n);
}

void oq_output_result_merge(oq_output_result *into, const oq_output_result *from)
{
    oq_compare_result *a = &into->all;
    const oq_compare_result *b = &from->all;
    if (!into->n_batches) {
        *into = *from;
        return;
    }
    merge_sums(into, from, finite_count(&a->err_hist) + finite_count(&b->err_hist));
    merge_worst(into, from);
    merge_hists(a, b);
    if (!a->pad_nonzero && b->pad_nonzero) {
        a->first_pad_nonzero = b->first_pad_nonzero;
        into->first_pad_nonzero_batch = from->first_pad_nonzero_batch;
    }
    a->passed = a->passed && b->passed;
    a->exact |= b->exact;
    a->masked |= b->masked;
    a->padding_checked |= b->padding_checked;
    a->num_elements += b->num_elements;
    a->num_valid += b->num_valid;
    a->num_padded += b->num_padded;
    if (b->over_tol && (!a->over_tol || failing_excess(b) > failing_excess(a))) {
        a->worst_failing = b->worst_failing;
        into->worst_failing_batch = from->worst_failing_batch;
        into->worst_failing_event_known = from->worst_failing_event_known;
        into->worst_failing_event = from->worst_failing_event;
    }
    a->over_tol += b->over_tol;
    a->nan_count += b->nan_count;
    a->inf_count += b->inf_count;
    a->inf_matched += b->inf_matched;
    a->ref_nan_count += b->ref_nan_count;
    a->ref_inf_count += b->ref_inf_count;
    a->pad_nonzero += b->pad_nonzero;
    a->ref_pad_nonzero += b->ref_pad_nonzero;
    a->pad_nonfinite += b->pad_nonfinite;
    a->max_abs = max_of(a->max_abs, b->max_abs);
    a->max_rel = max_of(a->max_rel, b->max_rel);
    a->max_abs_ref = fmax(a->max_abs_ref, b->max_abs_ref);
    oq_compare_metrics_shown(a, finite_count(&a->err_hist));
    into->n_batches += from->n_batches;
}

oq_status oq_output_results_add(oq_output_result **v, size_t *n, const oq_output_result *r, oq_err *err)
{
    oq_output_result *into = NULL;
    for (size_t i = 0; i < *n && !into; i++)
        if (!strcmp((*v)[i].all.name, r->all.name)) into = &(*v)[i];
    if (!into) {
        if (!(into = OQ_PUSH(*v, *n))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        memset(into, 0, sizeof *into);
    }
    oq_output_result_merge(into, r);
    return OQ_OK;
}

oq_status oq_output_results_add_batch(oq_output_result **v, size_t *n, const oq_compare_result *r, int64_t batch,
                                      const oq_worst_events *ev, oq_err *err)
{
    oq_output_result *one = calloc(1, sizeof *one); /* ~10 KB: not on the stack */
    if (!one) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    one->all = *r;
    for (int i = 0; i < OQ_COMPARE_MAX_WORST; i++) one->worst_batch[i] = batch;
    if (ev) {
        one->worst_event_known = ev->known;
        memcpy(one->worst_event, ev->worst, sizeof one->worst_event);
        one->worst_failing_event_known = ev->failing_known;
        one->worst_failing_event = ev->failing;
    }
    one->worst_failing_batch = batch;
    one->first_pad_nonzero_batch = batch;
    one->n_batches = 1;
    one->sums_known = 1;
    oq_fsum_add(&one->sum_abs, r->sum_abs);
    oq_fsum_add(&one->sum_sq, r->sum_sq);
    oq_fsum_add(&one->sum_ref_sq, r->sum_ref_sq);
    oq_status st = oq_output_results_add(v, n, one, err);
    free(one);
    return st;
}

void oq_totals_begin(oq_totals_acc *a)
{
    memset(a, 0, sizeof *a);
    a->t.first_call_s = a->t.median_p50_s = a->t.median_p90_s = NAN;
}

/* The medians are kept (8 bytes a batch) until oq_totals_end: the percentiles need them all. */
int oq_totals_add(oq_totals_acc *a, const oq_batch_result *b)
{
    if (!a->t.n++ && b->timed) a->t.first_call_s = b->first_call_s;
    a->t.timed += b->timed != 0;
    a->t.cached += b->reference_cached != 0;
    a->t.compared += b->compared != 0;
    a->t.failed += b->compared && !b->passed;
    if (!b->timed || isnan(b->median_s)) return 1;
    double *m = OQ_PUSH(a->medians, a->n_medians);
    if (m) *m = b->median_s;
    return m != NULL;
}

void oq_totals_end(oq_totals_acc *a, oq_batch_totals *out)
{
    oq_stats st;
    if (a->n_medians && oq_stats_compute(a->medians, a->n_medians, &st, NULL) == OQ_OK) {
        a->t.median_p50_s = st.p50;
        a->t.median_p90_s = st.p90;
    }
    free(a->medians);
    *out = a->t;
    memset(a, 0, sizeof *a);
}

int oq_batch_totals_of(oq_config_result *r)
{
    oq_totals_acc a;
    oq_totals_begin(&a);
    int ok = 1;
    for (size_t i = 0; i < r->n_batches; i++) ok = oq_totals_add(&a, &r->batches[i]) && ok;
    oq_totals_end(&a, &r->totals);
    return ok;
}
