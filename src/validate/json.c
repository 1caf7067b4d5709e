/* Plans, results and the summary as JSON: the one place their keys are written and read.
 * The worker writes its oq_config_result with the same function that writes the
 * configurations of summary.json, and the orchestrator reads it back into the same struct
 * (docs/summary-schema.md documents the keys). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "placement/placement-impl.h"
#include "validate/validate-impl.h"

oq_status oq_json_write(const char *path, const json_t *j, oq_err *err)
{
    return oq_json_write_file(path, j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10), err);
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A copy of o[key] when it is a string, else NULL; *ok cleared when the copy fails. */
static char *dup_of(const json_t *o, const char *key, int *ok)
{
    const char *s = str_of(o, key);
    char *d = s ? strdup(s) : NULL;
    if (s && !d) *ok = 0;
    return d;
}

static void set_str(json_t *o, const char *key, const char *s)
{
    if (s) json_object_set_new(o, key, json_string(s));
}

static json_t *strv_json(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_string(v[i]));
    return a;
}

static int strv_back(const json_t *a, char ***v, size_t *n)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (oq_strv_push(v, n, s ? s : "")) return 0;
    }
    return 1;
}

/* [[a, b], ...] from two parallel arrays, and back. */
static json_t *pairs_json(char *const *a, char *const *b, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, json_pack("[s,s]", a[i], b[i]));
    return arr;
}

static int pairs_back(const json_t *arr, char ***a, char ***b, size_t *n)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *p = json_array_get(arr, i);
        const char *x = json_string_value(json_array_get(p, 0)), *y = json_string_value(json_array_get(p, 1));
        size_t k = *n; /* b grows beside a */
        if (!x || !y) return 0;
        if (oq_strv_push(b, &k, y) || oq_strv_push(a, n, x)) return 0;
    }
    return 1;
}

static json_t *num_or_null(double x) { return isnan(x) ? json_null() : json_real(x); }

static double num_back(const json_t *j) { return json_is_number(j) ? json_number_value(j) : NAN; }

/* Writes `j` (NULL: it could not be built) and releases it. */
static oq_status write_new(const char *path, json_t *j, oq_err *err)
{
    oq_status st = j ? oq_json_write(path, j, err) : oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    json_decref(j);
    return st;
}

/* The JSON of a file; NULL with the error (naming the file) when it cannot be read. */
static json_t *load(const char *path, oq_err *err)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) oq_err_set(err, OQ_ERR_FORMAT, "%s: %s (line %d)", path, je.text, je.line);
    return j;
}

/* ---- the plan ------------------------------------------------------------------------ */

static json_t *plan_json(const oq_validate_plan *p)
{
    json_t *inputs = json_object(), *batches = json_array();
    for (size_t i = 0; i < p->n_inputs; i++)
        json_object_set_new(inputs, p->input_names[i], json_string(p->input_members[i]));
    for (size_t i = 0; i < p->n_batches; i++) {
        const oq_plan_batch *b = &p->batches[i];
        json_t *jb = json_pack("{s:I, s:s, s:s}", "index", (json_int_t)b->index, "inputs", b->inputs, "ref", b->ref);
        set_str(jb, "save", b->save);
        json_array_append_new(batches, jb);
    }
    json_t *runtime = json_pack("{s:o, s:o}", "ep_libs", pairs_json(p->ep_lib_names, p->ep_lib_paths, p->n_ep_libs),
                                "ep_options",
                                pairs_json(p->ep_option_keys, p->ep_option_values, p->n_ep_options));
    set_str(runtime, "ort_lib", p->ort_lib);
    json_t *dispatch = json_pack("{s:b, s:b, s:o, s:i}", "enable", p->dispatch.enable, "require", p->dispatch.require,
                                 "expect", strv_json(p->dispatch.expect, p->dispatch.n_expect),
                                 "force_sdpa_kernel", p->dispatch.force_sdpa_kernel);
    json_t *j = json_pack("{s:s, s:b, s:o, s:s, s:o, s:i, s:i, s:I, s:o, s:o, s:{s:b, s:b, s:b}, s:s}", "config",
                          p->config.name, "is_reference", p->is_reference, "inputs", inputs, "mask_member",
                          p->mask_member, "batches", batches, "repeat", p->repeat, "warmup", p->warmup,
                          "padded_length", (json_int_t)p->padded_length, "runtime", runtime, "dispatch",
                          dispatch, "placement", "enable", p->placement.enable, "require", p->placement.require,
                          "strict", p->placement.strict, "result", p->result);
    if (!j) return NULL;
    set_str(j, "model", p->model);
    set_str(j, "weights", p->weights);
    if (p->weights) json_object_set_new(j, "heads", json_integer(p->heads));
    set_str(j, "tolerances", p->tolerances);
    if (p->mask_form != OQ_MASK_AUTO) set_str(j, "mask_form", oq_mask_form_name(p->mask_form));
    return j;
}

oq_status oq_plan_write(const oq_validate_plan *p, const char *path, oq_err *err)
{
    return write_new(path, plan_json(p), err);
}

static int plan_batches_back(const json_t *a, oq_validate_plan *p)
{
    int ok = 1;
    for (size_t i = 0; ok && i < json_array_size(a); i++) {
        const json_t *jb = json_array_get(a, i);
        oq_plan_batch *b = OQ_PUSH(p->batches, p->n_batches);
        if (!b) return 0;
        b->index = json_integer_value(json_object_get(jb, "index"));
        b->inputs = dup_of(jb, "inputs", &ok);
        b->ref = dup_of(jb, "ref", &ok);
        b->save = dup_of(jb, "save", &ok);
        ok = ok && b->inputs && b->ref;
    }
    return ok;
}

static oq_status plan_back(const json_t *j, oq_validate_plan *p, oq_err *err)
{
    oq_status st = oq_config_parse(str_of(j, "config") ? str_of(j, "config") : "", &p->config, err);
    if (st) return st;
    int ok = 1;
    p->is_reference = json_is_true(json_object_get(j, "is_reference"));
    p->model = dup_of(j, "model", &ok);
    p->weights = dup_of(j, "weights", &ok);
    p->heads = (int32_t)json_integer_value(json_object_get(j, "heads"));
    const char *name;
    const json_t *member;
    json_object_foreach((json_t *)json_object_get(j, "inputs"), name, member)
        if (ok && oq_plan_add_input(p, name, json_string_value(member) ? json_string_value(member) : "", NULL)) ok = 0;
    p->mask_member = dup_of(j, "mask_member", &ok);
    ok = ok && plan_batches_back(json_object_get(j, "batches"), p);
    p->repeat = (int)json_integer_value(json_object_get(j, "repeat"));
    p->warmup = (int)json_integer_value(json_object_get(j, "warmup"));
    p->tolerances = dup_of(j, "tolerances", &ok);
    p->padded_length = json_integer_value(json_object_get(j, "padded_length"));
    int form = str_of(j, "mask_form") ? oq_mask_form_parse(str_of(j, "mask_form")) : OQ_MASK_AUTO;
    p->mask_form = form < 0 ? OQ_MASK_AUTO : (oq_mask_form)form;
    const json_t *rt = json_object_get(j, "runtime"), *d = json_object_get(j, "dispatch");
    const json_t *pl = json_object_get(j, "placement");
    p->ort_lib = dup_of(rt, "ort_lib", &ok);
    ok = ok && pairs_back(json_object_get(rt, "ep_libs"), &p->ep_lib_names, &p->ep_lib_paths, &p->n_ep_libs) &&
         pairs_back(json_object_get(rt, "ep_options"), &p->ep_option_keys, &p->ep_option_values, &p->n_ep_options);
    p->dispatch.enable = json_is_true(json_object_get(d, "enable"));
    p->dispatch.require = json_is_true(json_object_get(d, "require"));
    ok = ok && strv_back(json_object_get(d, "expect"), &p->dispatch.expect, &p->dispatch.n_expect);
    p->dispatch.force_sdpa_kernel = (int)json_integer_value(json_object_get(d, "force_sdpa_kernel"));
    p->placement.enable = json_is_true(json_object_get(pl, "enable"));
    p->placement.require = json_is_true(json_object_get(pl, "require"));
    p->placement.strict = json_is_true(json_object_get(pl, "strict"));
    p->result = dup_of(j, "result", &ok);
    if (!ok) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!p->mask_member || !p->result)
        return oq_err_set(err, OQ_ERR_FORMAT, "no mask_member or result: not a validation plan");
    return OQ_OK;
}

oq_status oq_plan_read(const char *path, oq_validate_plan *p, oq_err *err)
{
    memset(p, 0, sizeof *p);
    json_t *j = load(path, err);
    oq_status st = j ? plan_back(j, p, err) : OQ_ERR_FORMAT;
    if (j && st) oq_err_prefix(err, "%s: ", path);
    if (st) oq_validate_plan_clear(p);
    json_decref(j);
    return st;
}

/* ---- a configuration's result ---------------------------------------------------------- */

static json_t *batch_json(const oq_batch_result *b)
{
    json_t *jb = json_pack("{s:I}", "index", (json_int_t)b->index);
    if (b->timed) {
        json_object_set_new(jb, "first_call_s", json_real(b->first_call_s));
        json_object_set_new(jb, "repeat", json_integer(b->repeat));
        json_object_set_new(jb, "warmup", json_integer(b->warmup));
        json_object_set_new(jb, "median_s", num_or_null(b->median_s));
    }
    if (!b->compared) return jb;
    json_t *outs = json_array();
    for (size_t i = 0; i < b->n_outputs; i++) {
        json_t *jo = NULL;
        if (oq_compare_result_to_json(&b->outputs[i], &jo, NULL) == OQ_OK) {
            json_object_set_new(jo, "output", json_string(b->outputs[i].name));
            json_array_append_new(outs, jo);
        }
    }
    json_object_set_new(jb, "outputs", outs);
    json_object_set_new(jb, "passed", json_boolean(b->passed));
    return jb;
}

static int batch_back(const json_t *jb, oq_batch_result *b)
{
    b->index = json_integer_value(json_object_get(jb, "index"));
    b->timed = json_object_get(jb, "first_call_s") != NULL;
    b->first_call_s = json_number_value(json_object_get(jb, "first_call_s"));
    b->repeat = (int)json_integer_value(json_object_get(jb, "repeat"));
    b->warmup = (int)json_integer_value(json_object_get(jb, "warmup"));
    b->median_s = num_back(json_object_get(jb, "median_s"));
    const json_t *outs = json_object_get(jb, "outputs");
    b->compared = outs != NULL;
    b->passed = json_is_true(json_object_get(jb, "passed"));
    for (size_t i = 0; i < json_array_size(outs); i++) {
        oq_compare_result *c = OQ_PUSH(b->outputs, b->n_outputs);
        if (!c || oq_compare_result_from_json(json_array_get(outs, i), c, NULL)) return 0;
    }
    return 1;
}

static json_t *dispatch_json(const oq_dispatch_result *d)
{
    json_t *records = json_array(), *options = json_array();
    for (size_t i = 0; i < d->log.n_records; i++) {
        const oq_dispatch_record *r = &d->log.records[i];
        json_array_append_new(records, json_pack("{s:s, s:s, s:s, s:s, s:I}", "node", r->node, "op", r->op, "dtype",
                                                 r->dtype, "kernel", r->kernel_name, "line", (json_int_t)r->line));
    }
    for (size_t i = 0; i < d->log.n_options; i++) {
        json_t *o = json_object();
        for (size_t k = 0; k < d->log.options[i].n_opts; k++)
            json_object_set_new(o, d->log.options[i].opts[k].name, json_integer(d->log.options[i].opts[k].value));
        json_array_append_new(options, o);
    }
    json_t *jd = json_pack("{s:o, s:o}", "records", records, "options", options);
    if (d->checked) {
        json_object_set_new(jd, "failures", strv_json(d->failures, d->n_failures));
        json_object_set_new(jd, "passed", json_boolean(d->passed));
        json_object_set_new(jd, "math_failures", json_integer((json_int_t)d->n_math_failures));
    }
    json_object_set_new(jd, "advice", strv_json(d->advice, d->n_advice));
    return jd;
}

static int record_back(const json_t *jr, oq_dispatch_log *log)
{
    oq_dispatch_record *r = OQ_PUSH(log->records, log->n_records);
    if (!r) return 0;
    int ok = 1;
    r->node = dup_of(jr, "node", &ok);
    r->op = dup_of(jr, "op", &ok);
    r->dtype = dup_of(jr, "dtype", &ok);
    r->kernel_name = dup_of(jr, "kernel", &ok);
    r->line = (uint64_t)json_integer_value(json_object_get(jr, "line"));
    ok = ok && r->node && r->op && r->dtype && r->kernel_name;
    r->kernel = ok ? oq_sdpa_kernel_from_name(r->kernel_name) : OQ_SDPA_UNKNOWN;
    return ok;
}

static int options_back(const json_t *jo, oq_dispatch_log *log)
{
    oq_dispatch_options *o = OQ_PUSH(log->options, log->n_options);
    if (!o) return 0;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)jo, name, v) {
        oq_dispatch_option *opt = OQ_PUSH(o->opts, o->n_opts);
        if (!opt || !(opt->name = strdup(name))) return 0;
        opt->value = (long)json_integer_value(v);
    }
    return 1;
}

static int dispatch_back(const json_t *jd, oq_dispatch_result *d)
{
    d->recorded = jd != NULL;
    if (!jd) return 1;
    int ok = 1;
    for (size_t i = 0; ok && i < json_array_size(json_object_get(jd, "records")); i++)
        ok = record_back(json_array_get(json_object_get(jd, "records"), i), &d->log);
    for (size_t i = 0; ok && i < json_array_size(json_object_get(jd, "options")); i++)
        ok = options_back(json_array_get(json_object_get(jd, "options"), i), &d->log);
    d->checked = json_object_get(jd, "passed") != NULL;
    d->passed = json_is_true(json_object_get(jd, "passed"));
    d->n_math_failures = (size_t)json_integer_value(json_object_get(jd, "math_failures"));
    return ok && strv_back(json_object_get(jd, "failures"), &d->failures, &d->n_failures) &&
           strv_back(json_object_get(jd, "advice"), &d->advice, &d->n_advice);
}

static json_t *placement_json(const oq_placement_result *p)
{
    if (p->error) return json_pack("{s:s}", "error", p->error);
    json_t *j = oq_placement_to_json(p->placement, &p->report);
    if (j) json_object_set_new(j, "witness_errors", strv_json(p->witness_errors, p->n_witness_errors));
    return j;
}

static int placement_back(const json_t *jp, oq_placement_result *p)
{
    p->recorded = jp != NULL;
    if (!jp) return 1;
    int ok = 1;
    if ((p->error = dup_of(jp, "error", &ok))) return ok;
    return ok && oq_placement_from_json(jp, &p->placement, &p->report, NULL) == OQ_OK &&
           strv_back(json_object_get(jp, "witness_errors"), &p->witness_errors, &p->n_witness_errors);
}

static json_t *worker_json(const oq_worker_run *w)
{
    return json_pack("{s:s, s:f, s:s}", "ended", w->ended, "seconds", w->seconds, "stderr_tail",
                     w->stderr_tail ? w->stderr_tail : "");
}

static int worker_back(const json_t *jw, oq_worker_run *w)
{
    w->ran = jw != NULL;
    if (!jw) return 1;
    int ok = 1;
    snprintf(w->ended, sizeof w->ended, "%s", str_of(jw, "ended") ? str_of(jw, "ended") : "");
    w->seconds = json_number_value(json_object_get(jw, "seconds"));
    w->stderr_tail = dup_of(jw, "stderr_tail", &ok);
    return ok;
}

static json_t *ep_devices_json(const oq_ep_device *d, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:I}", "ep", d[i].ep_name, "vendor", d[i].ep_vendor,
                                           "hardware", oq_hw_type_name(d[i].hw_type), "device_id",
                                           (json_int_t)d[i].device_id));
    return a;
}

static int ep_devices_back(const json_t *a, oq_config_result *r)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *jd = json_array_get(a, i);
        oq_ep_device *d = OQ_PUSH(r->ep_devices, r->n_ep_devices);
        int ok = d != NULL;
        if (!ok) return 0;
        d->ep_name = dup_of(jd, "ep", &ok);
        d->ep_vendor = dup_of(jd, "vendor", &ok);
        d->hw_type = OQ_HW_OTHER;
        for (int t = OQ_HW_CPU; t <= OQ_HW_OTHER; t++)
            if (str_of(jd, "hardware") && !strcmp(str_of(jd, "hardware"), oq_hw_type_name((oq_hw_type)t)))
                d->hw_type = (oq_hw_type)t;
        d->device_id = (uint32_t)json_integer_value(json_object_get(jd, "device_id"));
        if (!ok || !d->ep_name || !d->ep_vendor) return 0;
    }
    return 1;
}

static json_t *cost_json(const oq_worker_cost *c)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I}", "session_s", c->session_s, "run_s", c->run_s,
                     "compare_s", c->compare_s, "io_s", c->io_s, "rss_after_session_bytes",
                     (json_int_t)c->rss_after_session_bytes, "rss_after_first_run_bytes",
                     (json_int_t)c->rss_after_first_run_bytes, "rss_start_bytes", (json_int_t)c->rss_start_bytes,
                     "vmhwm_bytes", (json_int_t)c->vmhwm_bytes, "max_batch_bytes", (json_int_t)c->max_batch_bytes);
}

static void cost_back(const json_t *jc, oq_worker_cost *c)
{
    c->recorded = jc != NULL;
    c->session_s = json_number_value(json_object_get(jc, "session_s"));
    c->run_s = json_number_value(json_object_get(jc, "run_s"));
    c->compare_s = json_number_value(json_object_get(jc, "compare_s"));
    c->io_s = json_number_value(json_object_get(jc, "io_s"));
    c->rss_after_session_bytes = json_integer_value(json_object_get(jc, "rss_after_session_bytes"));
    c->rss_after_first_run_bytes = json_integer_value(json_object_get(jc, "rss_after_first_run_bytes"));
    c->rss_start_bytes = json_integer_value(json_object_get(jc, "rss_start_bytes"));
    c->vmhwm_bytes = json_integer_value(json_object_get(jc, "vmhwm_bytes"));
    c->max_batch_bytes = json_integer_value(json_object_get(jc, "max_batch_bytes"));
}

static json_t *teeth_json(const oq_teeth_result *t)
{
    json_t *j = json_object();
    set_str(j, "error", t->error);
    if (t->worker.ran) json_object_set_new(j, "worker", worker_json(&t->worker));
    json_object_set_new(j, "rerun_status", json_string(oq_verdict_name(t->rerun_status)));
    if (t->rerun_dispatch.recorded) json_object_set_new(j, "rerun_dispatch", dispatch_json(&t->rerun_dispatch));
    json_object_set_new(j, "proved", json_boolean(t->proved));
    json_object_set_new(j, "verdict", json_string(t->proved ? "the check failed with MATH forced, as it must"
                                                            : "the check was never seen failing"));
    return j;
}

static int verdict_back(const char *s, oq_verdict *v)
{
    for (int k = OQ_VERDICT_PASSED; k <= OQ_VERDICT_NOT_RUN; k++)
        if (s && !strcmp(s, oq_verdict_name((oq_verdict)k))) {
            *v = (oq_verdict)k;
            return 1;
        }
    *v = OQ_VERDICT_FAILED;
    return 0;
}

static int teeth_back(const json_t *jt, oq_teeth_result *t)
{
    t->ran = jt != NULL;
    if (!jt) return 1;
    int ok = 1;
    t->error = dup_of(jt, "error", &ok);
    verdict_back(str_of(jt, "rerun_status"), &t->rerun_status);
    t->proved = json_is_true(json_object_get(jt, "proved"));
    return ok && worker_back(json_object_get(jt, "worker"), &t->worker) &&
           dispatch_back(json_object_get(jt, "rerun_dispatch"), &t->rerun_dispatch);
}

/* The keys in the order summary.json has always had them (the worker's part in the middle). */
json_t *oq_config_result_to_json(const oq_config_result *r)
{
    const oq_config *c = &r->config;
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "name", c->name, "runtime", c->runtime, "representation",
                          oq_repr_name(c->repr), "precision", oq_precision_name(c->precision), "kernel",
                          oq_kernel_name(c->kernel), "reference", r->is_reference);
    if (!j) return NULL;
    set_str(j, "model_file", r->model_file);
    if (r->worker.ran) json_object_set_new(j, "worker", worker_json(&r->worker));
    if (r->reported) {
        json_object_set_new(j, "config", json_string(c->name));
        json_t *batches = json_array();
        for (size_t i = 0; i < r->n_batches; i++) json_array_append_new(batches, batch_json(&r->batches[i]));
        json_object_set_new(j, "batches", batches);
    }
    if (r->ort_version)
        json_object_set_new(j, "onnxruntime", json_pack("{s:s, s:s, s:i}", "version", r->ort_version, "library",
                                                        r->ort_library ? r->ort_library : "", "api_version",
                                                        r->ort_api_version));
    if (r->session_tried) {
        json_object_set_new(j, "session_create_s", json_real(r->session_create_s));
        json_object_set_new(j, "ep_devices", ep_devices_json(r->ep_devices, r->n_ep_devices));
    }
    if (r->cost.recorded) json_object_set_new(j, "cost", cost_json(&r->cost));
    if (r->evidence_json) json_object_set_new(j, "evidence", json_loads(r->evidence_json, 0, NULL));
    if (r->dispatch.recorded) json_object_set_new(j, "dispatch", dispatch_json(&r->dispatch));
    if (r->placement.recorded) json_object_set_new(j, "placement", placement_json(&r->placement));
    json_object_set_new(j, "status", json_string(oq_verdict_name(r->status)));
    set_str(j, "reason", r->reason);
    if (r->required) json_object_set_new(j, "required", json_true());
    if (r->teeth.ran) json_object_set_new(j, "teeth", teeth_json(&r->teeth));
    return j;
}

static int batches_back(const json_t *a, oq_config_result *r)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        oq_batch_result *b = OQ_PUSH(r->batches, r->n_batches);
        if (!b || !batch_back(json_array_get(a, i), b)) return 0;
    }
    return 1;
}

oq_status oq_config_result_from_json(const json_t *j, oq_config_result *r, oq_err *err)
{
    memset(r, 0, sizeof *r);
    const char *name = str_of(j, "config") ? str_of(j, "config") : str_of(j, "name");
    oq_status st = oq_config_parse(name ? name : "", &r->config, err);
    if (st) return st;
    if (!verdict_back(str_of(j, "status"), &r->status))
        return oq_err_set(err, OQ_ERR_FORMAT, "config %s: no status", r->config.name);
    int ok = 1;
    r->is_reference = json_is_true(json_object_get(j, "reference"));
    r->reason = dup_of(j, "reason", &ok);
    r->required = json_is_true(json_object_get(j, "required"));
    r->model_file = dup_of(j, "model_file", &ok);
    ok = ok && worker_back(json_object_get(j, "worker"), &r->worker);
    r->reported = json_object_get(j, "batches") != NULL;
    ok = ok && batches_back(json_object_get(j, "batches"), r);
    const json_t *ort = json_object_get(j, "onnxruntime");
    r->ort_version = dup_of(ort, "version", &ok);
    r->ort_library = dup_of(ort, "library", &ok);
    r->ort_api_version = (int)json_integer_value(json_object_get(ort, "api_version"));
    r->session_tried = json_object_get(j, "session_create_s") != NULL;
    r->session_create_s = json_number_value(json_object_get(j, "session_create_s"));
    ok = ok && ep_devices_back(json_object_get(j, "ep_devices"), r);
    cost_back(json_object_get(j, "cost"), &r->cost);
    if (json_object_get(j, "evidence") && !(r->evidence_json = json_dumps(json_object_get(j, "evidence"), JSON_COMPACT)))
        ok = 0;
    ok = ok && dispatch_back(json_object_get(j, "dispatch"), &r->dispatch) &&
         placement_back(json_object_get(j, "placement"), &r->placement) &&
         teeth_back(json_object_get(j, "teeth"), &r->teeth);
    if (ok) return OQ_OK;
    oq_config_result_clear(r);
    return oq_err_set(err, OQ_ERR_NOMEM, "out of memory reading a configuration's result");
}

oq_status oq_config_result_write(const oq_config_result *r, const char *path, oq_err *err)
{
    return write_new(path, oq_config_result_to_json(r), err);
}

oq_status oq_config_result_read(const char *path, oq_config_result *r, oq_err *err)
{
    memset(r, 0, sizeof *r);
    json_t *j = load(path, err);
    oq_status st = j ? oq_config_result_from_json(j, r, err) : OQ_ERR_FORMAT;
    if (j && st) oq_err_prefix(err, "%s: ", path);
    json_decref(j);
    return st;
}

/* ---- summary.json ---------------------------------------------------------------------- */

static json_t *ints_json(const int64_t *v, int64_t n)
{
    json_t *a = json_array();
    for (int64_t i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *batch_info_json(const oq_batch_info *b)
{
    return json_pack("{s:I, s:s, s:I, s:I, s:o, s:o, s:I}", "index", (json_int_t)b->index, "inputs", b->inputs,
                     "batch_size", (json_int_t)b->batch_size, "padded_length", (json_int_t)b->padded_length,
                     "lengths", ints_json(b->lengths, b->batch_size), "event_indices",
                     ints_json(b->event_indices, b->batch_size), "valid_size", (json_int_t)b->valid_size);
}

oq_status oq_summary_write(const oq_validate_summary *s, const char *path, oq_err *err)
{
    json_t *batches = json_array(), *configs = json_array();
    for (size_t i = 0; i < s->n_batches; i++) json_array_append_new(batches, batch_info_json(&s->batches[i]));
    for (size_t i = 0; i < s->n_configs; i++) json_array_append_new(configs, oq_config_result_to_json(&s->configs[i]));
    json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:s, s:i}", "schema", OQ_VALIDATE_SCHEMA, "start", s->start,
                          "end", s->end, "evidence",
                          s->evidence_json ? json_loads(s->evidence_json, 0, NULL) : json_object(), "batches",
                          batches, "configs", configs, "verdict", s->exit_status ? "failed" : "passed",
                          "exit_status", s->exit_status);
    if (j && s->plotted) {
        json_object_set_new(j, "plots", strv_json(s->plots, s->n_plots));
        set_str(j, "plot_error", s->plot_error);
    }
    return write_new(path, j, err);
}
