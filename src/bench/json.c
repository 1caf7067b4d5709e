/* summary.json of a sweep: the system, the options and every row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench-impl.h"
#include "core/core-impl.h"
#include "evidence/evidence-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/bench.h"
#include "ortqual/events.h"
#include "runtime/sessioncfg-impl.h"
#include "status/args-impl.h"
#include "version/version-impl.h"

/* A number, or null when it was not measured (NAN) . */
static json_t *num_or_null(double x) { return isfinite(x) ? json_real(x) : json_null(); }
static json_t *int_or_null(int64_t x) { return x >= 0 ? json_integer(x) : json_null(); }

static json_t *stats_json(const oq_stats *s)
{
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "mean", num_or_null(s->mean), "std",
                     num_or_null(s->std), "min", num_or_null(s->min), "max", num_or_null(s->max), "p50",
                     num_or_null(s->p50), "p90", num_or_null(s->p90), "p95", num_or_null(s->p95), "p99",
                     num_or_null(s->p99), "p99.9", num_or_null(s->p999));
}

static json_t *samples_json(const oq_bench_row *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->n_samples; i++) json_array_append_new(a, json_real(r->samples_ms[i]));
    return a;
}

static json_t *alloc_json(const oq_bench_row *r)
{
    if (!r->n_alloc_stats) return json_null();
    json_t *o = json_object();
    for (size_t i = 0; o && i < r->n_alloc_stats; i++)
        json_object_set_new(o, r->alloc_stats[i].key, json_string(r->alloc_stats[i].value));
    return o;
}

static json_t *memory_json(const oq_bench_row *r)
{
    return json_pack("{s:o,s:o,s:b,s:o,s:b,s:o,s:s?,s:o}", "rss_before_bytes", int_or_null(r->rss_before),
                     "peak_rss_bytes", int_or_null(r->peak_rss), "peak_rss_exact", r->peak_rss_exact, "vmhwm_bytes",
                     int_or_null(r->vmhwm), "vmhwm_row", r->vmhwm_row, "gpu_bytes", int_or_null(r->gpu_mem), "gpu_note",
                     r->gpu_mem_note[0] ? r->gpu_mem_note : NULL, "allocator_stats",
                     alloc_json(r));
}

static json_t *accuracy_json(const oq_bench_row *r)
{
    if (isnan(r->max_abs_err) && r->nan_count < 0) return json_null();
    json_t *a = json_pack("{s:o,s:o,s:o,s:o,s:o}", "max_abs_err", num_or_null(r->max_abs_err),
                          "max_rel_err", num_or_null(r->max_rel_err), "nan_count",
                          int_or_null(r->nan_count), "inf_count", int_or_null(r->inf_count),
                          "pad_nonzero", int_or_null(r->pad_nonzero));
    if (a && r->over_tol >= 0) /* the attention sweep's judgement */
        json_object_update_new(a, json_pack("{s:f,s:f,s:I}", "rtol", r->rtol, "atol", r->atol, "over_tol",
                                            (json_int_t)r->over_tol));
    return a;
}

static json_t *shapes_json(int static_shapes)
{
    return static_shapes < 0 ? json_null() : json_string(static_shapes ? "static" : "dynamic");
}

static void set_str(json_t *o, const char *k, const char *v)
{
    json_object_set_new(o, k, v && *v ? json_string(v) : json_null());
}

static void set_int(json_t *o, const char *k, int64_t v) { json_object_set_new(o, k, json_integer(v)); }

static json_t *profile_json(const oq_bench_profile *p)
{
    if (!p->runs) return json_null();
    json_t *names = json_array();
    for (size_t i = 0; names && i < p->n_kernel_names; i++) json_array_append_new(names, json_string(p->kernel_names[i]));
    return json_pack("{s:I,s:o,s:o,s:o,s:I,s:o,s:o,s:s}", "runs", (json_int_t)p->runs, "run_ms", num_or_null(p->run_ms),
                     "node_ms", num_or_null(p->node_ms), "kernel_ms", num_or_null(p->kernel_ms), "kernel_events",
                     (json_int_t)p->kernel_events, "kernel_source",
                     p->kernel_source ? json_string(p->kernel_source) : json_null(), "kernel_names", names, "file",
                     p->path);
}

static json_t *shape_json(const int64_t *shape, int32_t ndim)
{
    json_t *a = json_array();
    for (int32_t i = 0; a && i < ndim; i++) json_array_append_new(a, json_integer(shape[i]));
    return a;
}

/* An output's padding as validate's summary says it: set apart (masked), how many, how many
 * not 0, whether they were judged and by which rule; null where no mask applied. */
static json_t *padding_json(const oq_bench_output_check *c)
{
    static const char *const rules[] = {"report", "zero", "as-reference"};
    if (!c->masked) return json_null();
    return json_pack("{s:b,s:I,s:I,s:b,s:s}", "masked", c->masked, "padded", (json_int_t)c->padded, "nonzero",
                     (json_int_t)c->pad_nonzero, "checked", c->padding_checked, "rule",
                     rules[(unsigned)c->padding_rule < 3 ? c->padding_rule : 1]);
}

/* bench --model: the point's dimensions, what each input was, the outputs compared. */
static void model_json(json_t *o, const oq_bench_row *r)
{
    json_t *dims = json_object(), *ins = json_array(), *outs = json_array();
    for (size_t i = 0; i < r->n_dims; i++) json_object_set_new(dims, r->dims[i].name, json_integer(r->dims[i].value));
    for (size_t i = 0; i < r->n_inputs; i++) {
        const oq_bench_input_info *in = &r->inputs[i];
        json_array_append_new(ins, json_pack("{s:s,s:s,s:o,s:s,s:s}", "name", in->name, "dtype",
                                             oq_dtype_name(in->dtype), "shape", shape_json(in->shape, in->ndim),
                                             "source", in->source, "fill", in->fill));
    }
    for (size_t i = 0; i < r->n_outputs; i++) {
        const oq_bench_output_check *c = &r->outputs[i];
        json_array_append_new(outs, json_pack("{s:s,s:o,s:o,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:b}", "output", c->name,
                                              "max_abs_err", num_or_null(c->max_abs_err), "max_rel_err",
                                              num_or_null(c->max_rel_err), "rtol", c->rtol, "atol", c->atol,
                                              "over_tol", (json_int_t)c->over_tol, "nan_count",
                                              (json_int_t)c->nan_count, "inf_count", (json_int_t)c->inf_count,
                                              "expected_nan_count", (json_int_t)c->expected_nan_count,
                                              "expected_inf_count", (json_int_t)c->expected_inf_count,
                                              "inf_matched", (json_int_t)c->inf_matched, "passed",
                                              c->passed));
        json_object_set_new(json_array_get(outs, i), "padding", padding_json(c));
        if (oq_bench_output_judged_nothing(c)) /* its null errors: not measured, as validate's "compared" */
            json_object_set_new(json_array_get(outs, i), "compared", json_false());
    }
    set_str(o, "seq_dim", r->seq_dim);
    json_object_set_new(o, "dims", dims);
    json_object_set_new(o, "inputs", ins);
    json_object_set_new(o, "outputs", r->n_outputs ? outs : (json_decref(outs), json_null()));
}

static oq_status row_json(const oq_bench_row *r, int model, json_t **out, oq_err *err)
{
    const oq_bench_variant *v = &r->variant;
    json_t *o = json_object();
    if (!o) return oq_err_set(err, OQ_ERR_NOMEM, "JSON for row %s", v->name);
    set_str(o, "variant", v->name);
    set_str(o, "status", oq_bench_status_name(r->status));
    set_str(o, "error", r->error);
    set_str(o, "device", r->device);
    set_str(o, "dtype", oq_precision_name(v->precision));
    set_str(o, "representation", oq_repr_name(v->repr));
    set_str(o, "kernel", oq_kernel_name(v->kernel));
    set_str(o, "kernel_observed", r->kernel_observed);
    json_object_set_new(o, "masked", json_boolean(r->masked));
    json_object_set_new(o, "shapes", shapes_json(r->static_shapes));
    set_str(o, "io_binding", oq_io_binding_name(r->io));
    set_int(o, "batch", r->batch);
    set_int(o, "seq_len", r->seq_len);
    json_object_set_new(o, "valid_tokens", int_or_null(r->valid_tokens));
    json_object_set_new(o, "valid_pairs", model ? json_null() : json_integer(r->valid_pairs));
    json_object_set_new(o, "heads", int_or_null(r->heads));
    json_object_set_new(o, "kv_heads", int_or_null(r->kv_heads));
    json_object_set_new(o, "head_dim", int_or_null(r->head_dim));
    set_int(o, "threads", r->threads);
    set_int(o, "inter_op_threads", r->inter_op_threads);
    set_int(o, "warmup", (int64_t)r->warmup);
    set_int(o, "iters", (int64_t)r->iters);
    json_object_set_new(o, "session_ms", num_or_null(r->session_ms));
    json_object_set_new(o, "first_run_ms", num_or_null(r->first_run_ms));
    json_object_set_new(o, "stats_ms", stats_json(&r->stats));
    json_object_set_new(o, "samples_ms", samples_json(r));
    json_object_set_new(o, "memory", memory_json(r));
    json_object_set_new(o, "accuracy", accuracy_json(r));
    json_object_set_new(o, "profile", profile_json(&r->profile));
    if (model) model_json(o, r);
    if (json_object_size(o) != (model ? 33u : 29u)) {
        json_decref(o);
        return oq_err_set(err, OQ_ERR_NOMEM, "JSON for row %s", v->name);
    }
    *out = o;
    return OQ_OK;
}

static json_t *int_list(const int64_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *variant_list(const oq_bench_opts *o)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < o->n_variants; i++) json_array_append_new(a, json_string(o->variants[i].name));
    return a;
}

static json_t *mode_list(unsigned bits, const char *one, const char *two)
{
    json_t *a = json_array();
    if (a && (bits & 1u)) json_array_append_new(a, json_string(one));
    if (a && (bits & 2u)) json_array_append_new(a, json_string(two));
    return a;
}

/* The provider options given (--ep-option), as given. */
static json_t *ep_options_json(const oq_bench_opts *o)
{
    json_t *j = json_object();
    for (size_t i = 0; j && i < o->n_ep_options; i++)
        json_object_set_new(j, o->ep_option_keys[i], json_string(o->ep_option_values[i]));
    return j;
}

/* The graph optimization level ORT runs, as validate records it (graph_opt_level, with
 * graph_opt_level_from and graph_opt_option): ORT's default stays -1 with no source. Returns
 * how many keys it meant to add (1 to 3). */
static size_t graph_opt_json(const oq_bench_opts *o, json_t *j)
{
    json_t *ran = oq_session_graph_opt_ran(o->graph_opt, o->n_session_configs, o->session_config_keys,
                                           o->session_config_values);
    json_t *level = json_object_get(ran, "level");
    json_object_set_new(j, "graph_opt_level", level ? json_incref(level) : json_integer(-1));
    if (ran) json_object_set(j, "graph_opt_level_from", json_object_get(ran, "from"));
    if (json_object_get(ran, "option")) json_object_set(j, "graph_opt_option", json_object_get(ran, "option"));
    size_t added = 1 + (ran != NULL) + (json_object_get(ran, "option") != NULL);
    json_decref(ran);
    return added;
}

/* The threads and execution mode ORT runs (threads, inter_op_threads, execution_mode), as
 * validate records them: an entry's over the option, with its source and the option's value.
 * Returns how many keys it meant to add. */
static size_t threads_json(const oq_bench_opts *o, json_t *j)
{
    oq_session_threads t;
    oq_session_threads_ran(o->threads, o->inter_op_threads, o->n_session_configs, o->session_config_keys,
                           o->session_config_values, &t);
    json_t *ran = oq_session_threads_json(&t, 1);
    size_t added = json_object_size(ran);
    if (json_object_update(j, ran)) added = 0;
    json_decref(ran);
    return added;
}

/* The options both sweeps share (how each row runs), added to `j`; `keys`: how many `j` then
 * holds when nothing failed, the sources and options of the graph level, threads and mode not
 * counted. */
static oq_status run_opts_json(const oq_bench_opts *o, json_t *j, size_t keys, json_t **out, oq_err *err)
{
    size_t ran = threads_json(o, j);
    keys += (ran ? ran : 3) - 3; /* threads, inter_op_threads, execution_mode */
    keys += graph_opt_json(o, j) - 1;
    json_t *sc = json_array(); /* [[key, value]] of --session-config, [] when none */
    for (size_t i = 0; sc && i < o->n_session_configs; i++)
        json_array_append_new(sc, json_pack("[s,s]", o->session_config_keys[i], o->session_config_values[i]));
    json_object_set_new(j, "session_configs", sc);
    set_int(j, "warmup", (int64_t)o->warmup);
    set_int(j, "iters", (int64_t)o->iters);
    json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
    set_str(j, "io_binding", oq_io_binding_name(o->io_binding));
    json_object_set_new(j, "include_session", json_boolean(o->include_session));
    set_int(j, "mem_sample_us", o->mem_sample_us);
    set_int(j, "profile_runs", (int64_t)o->profile_runs);
    json_object_set_new(j, "ep_options", ep_options_json(o));
    if (json_object_size(j) != keys) {
        json_decref(j);
        return oq_err_set(err, OQ_ERR_NOMEM, "JSON for the options");
    }
    *out = j;
    return OQ_OK;
}

static oq_status opts_json(const oq_bench_opts *o, json_t **out, oq_err *err)
{
    json_t *j = json_object();
    if (!j) return oq_err_set(err, OQ_ERR_NOMEM, "JSON for the options");
    json_object_set_new(j, "batch_sizes", int_list(o->batch_sizes, o->n_batch_sizes));
    json_object_set_new(j, "seq_lens", int_list(o->seq_lens, o->n_seq_lens));
    set_str(j, "length_policy", oq_length_policy_name((oq_length_policy)o->length_policy));
    json_object_set_new(j, "mask_fraction", json_real(o->mask_fraction));
    json_object_set_new(j, "modes", mode_list(o->modes, "masked", "unmasked"));
    json_object_set_new(j, "export_shapes", mode_list(o->shapes, "dynamic", "static"));
    set_int(j, "heads", o->heads);
    set_int(j, "kv_heads", o->kv_heads);
    set_int(j, "head_dim", o->head_dim);
    set_int(j, "ref_iters", (int64_t)(o->ref_iters ? o->ref_iters : o->iters));
    json_object_set_new(j, "reference", json_boolean(o->reference));
    json_object_set_new(j, "variants", variant_list(o));
    return run_opts_json(o, j, 25, out, err);
}

static json_t *dims_json(const oq_bench_dim *d, size_t n, int list)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++)
        json_object_set_new(o, d[i].name, list ? int_list(d[i].values, d[i].n_values) : json_integer(d[i].values[0]));
    return o;
}

/* --shape entries as given: sizes, or the names of dimensions. */
static json_t *input_shapes_json(const oq_bench_opts *o)
{
    json_t *all = json_object();
    for (size_t i = 0; all && i < o->n_input_shapes; i++) {
        const oq_bench_shape *s = &o->input_shapes[i];
        json_t *a = json_array();
        for (int32_t k = 0; a && k < s->ndim; k++)
            json_array_append_new(a, s->dims[k] >= 0 ? json_integer(s->dims[k]) : json_string(s->dim_names[k]));
        json_object_set_new(all, s->input, a);
    }
    return all;
}

static oq_status model_opts_json(const oq_bench_opts *o, json_t **out, oq_err *err)
{
    json_t *j = json_object();
    if (!j) return oq_err_set(err, OQ_ERR_NOMEM, "JSON for the options");
    set_str(j, "model", o->model_path);
    set_str(j, "ep", o->model_ep ? o->model_ep : "cpu");
    set_str(j, "inputs", o->inputs_path);
    char sha[65] = ""; /* the file's bytes: another file at that path is another measurement */
    oq_status st = o->inputs_path ? oq_sha256_file(o->inputs_path, sha, err) : OQ_OK;
    if (st) {
        json_decref(j);
        return st;
    }
    set_str(j, "inputs_sha256", sha);
    set_str(j, "expected", o->expected_path);
    set_str(j, "tolerances", o->tolerances);
    json_object_set_new(j, "input_shapes", input_shapes_json(o));
    json_object_set_new(j, "dims", dims_json(o->dims, o->n_dims, 0));
    json_object_set_new(j, "sweeps", dims_json(o->sweeps, o->n_sweeps, 1));
    json_object_set_new(j, "int_range", json_pack("[I,I]", (json_int_t)o->int_lo, (json_int_t)o->int_hi));
    set_str(j, "length_policy", oq_length_policy_name((oq_length_policy)o->length_policy));
    json_object_set_new(j, "mask_fraction", json_real(o->mask_fraction));
    return run_opts_json(o, j, 25, out, err);
}

/* bench --model: the model's notes said before the run (the Gathers whose indices ORT alone
 * checks), with the other warnings, one line each: those its sweep folded and kept with the rows,
 * else (rows a caller made) oq_bench_model_notes'; a model it cannot read again leaves them out:
 * they are notes, not results. */
static void model_notes(const oq_bench_opts *o, const oq_bench_rows *rows, json_t *warnings)
{
    char *notes = NULL;
    oq_err e = {0};
    if (!o->model_path || !json_is_array(warnings)) return;
    const char *kept = oq_bench_rows_notes(rows);
    if (kept ? !(notes = strdup(kept)) : oq_bench_model_notes(o, &notes, &e) != OQ_OK) return;
    for (char *l = notes, *end; (end = strchr(l, '\n')); l = end + 1) {
        *end = '\0';
        json_array_append_new(warnings, oq_json_text(l));
    }
    free(notes);
}

/* The evidence (runtime, host, GPUs, loaded libraries, ORT_* environment) is
 * gathered after the sweep so every library the sessions loaded is listed; the library's
 * SHA-256 is the evidence's, of the mapped file as named before the sweep (a rebuild at the same
 * path is another build; a file renamed over it later is not the one that ran). */
static json_t *system_json(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_rows *rows)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    json_t *ev = oq_evidence_collect_json(rt, NULL);
    /* entries passed to a newer ORT unchecked: with the evidence's, printed once by the tool */
    oq_session_config_warn(oq_runtime_version(rt), o->n_session_configs, o->session_config_keys,
                           o->session_config_values, json_object_get(ev, "warnings"));
    model_notes(o, rows, json_object_get(ev, "warnings"));
    json_t *sha = json_object_get(json_object_get(ev, "ort"), "library_sha256");
    return json_pack("{s:s,s:s,s:s,s:O,s:i,s:s,s:I,s:o}", "ortqual_version", oq_build_version(),
                     "ort_version", oq_runtime_version(rt), "ort_library", oq_runtime_lib_path(rt),
                     "ort_library_sha256", sha ? sha : json_null(), "ort_api_version", oq_runtime_api_version(rt),
                     "ort_build_info", oq_runtime_build_info(rt), "online_cpus", (json_int_t)ncpu, "evidence", ev);
}

void oq_bench_utc_now(char buf[32])
{
    time_t now = time(NULL);
    struct tm tm;
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
}

static json_t *argv_json(int argc, char *const *argv)
{
    json_t *a = json_array();
    json_array_append_new(a, json_string("ortqual"));
    for (int i = 0; i < argc; i++) json_array_append_new(a, json_string(argv[i]));
    return a;
}

/* One row of the comparison: its identity, its index in results (null: missing here), how it
 * matched, and per limited statistic old, new, their ratio, the largest ratio allowed and why
 * it was not compared (null: it was). */
static json_t *ratio_json(const oq_bench_comparison *c, size_t i)
{
    const oq_bench_row_ratio *e = &c->entries[i];
    json_t *stats = json_object();
    for (size_t k = 0; stats && k < c->limits.n && e->match != OQ_BENCH_MATCH_NEW && e->match != OQ_BENCH_MATCH_MISSING;
         k++) {
        const char *why = oq_bench_ratio_why(e, k);
        json_object_set_new(stats, c->limits.limit[k].stat,
                            json_pack("{s:o,s:o,s:o,s:f,s:o}", "old_ms", num_or_null(e->old_ms[k]), "new_ms",
                                      num_or_null(e->new_ms[k]), "ratio", num_or_null(e->ratio[k]), "max_ratio",
                                      1 + c->limits.limit[k].pct / 100, "not_compared",
                                      why ? json_string(why) : json_null()));
    }
    return json_pack("{s:o,s:o,s:s,s:o}", "row", oq_json_text(c->keys[i]), "result",
                     e->row == (size_t)-1 ? json_null() : json_integer((json_int_t)e->row), "match",
                     oq_bench_match_name(e->match), "stats", stats);
}

/* The baseline compared with (oq_bench_compare): null without one. */
static json_t *baseline_json(const oq_bench_comparison *c)
{
    if (!c) return json_null();
    json_t *limits = json_object(), *list = json_array();
    for (size_t k = 0; limits && k < c->limits.n; k++)
        json_object_set_new(limits, c->limits.limit[k].stat, json_real(c->limits.limit[k].pct));
    for (size_t i = 0; list && i < c->n; i++) json_array_append_new(list, ratio_json(c, i));
    return json_pack("{s:o,s:s,s:s,s:o,s:o,s:b,s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:o}", "file", oq_json_text(c->file),
                     "sha256", c->sha256, "schema", c->schema, "verdict",
                     *c->verdict ? oq_json_text(c->verdict) : json_null(), "max_slowdown_pct", limits, "any_host",
                     c->any_host, "host_difference", c->host_diff[0] ? oq_json_text(c->host_diff) : json_null(),
                     "ort_difference", *c->ort_diff ? oq_json_text(c->ort_diff) : json_null(), "compared",
                     (json_int_t)c->compared, "regressed", (json_int_t)c->regressed, "untimed",
                     (json_int_t)c->untimed, "new", (json_int_t)c->added, "missing", (json_int_t)c->missing,
                     "rows", list);
}

/* bench --model's mask input: which, found how and why, its polarity, and an input named like
 * a mask that was not taken (null where there is none). */
static void mask_json(json_t *opts, const oq_bench_rows *rows)
{
    int none = !*rows->mask_input;
    json_object_set_new(opts, "mask_input", none ? json_null() : oq_json_text(rows->mask_input));
    json_object_set_new(opts, "mask_source", json_string(none ? "none" : rows->mask_source));
    json_object_set_new(opts, "mask_why", *rows->mask_why ? json_string(rows->mask_why) : json_null());
    json_object_set_new(opts, "mask_polarity", none ? json_null() : json_string(oq_mask_polarity_name(rows->mask_polarity)));
    json_object_set_new(opts, "mask_polarity_source", none ? json_null() : json_string(rows->mask_polarity_source));
    json_object_set_new(opts, "mask_note", *rows->mask_note ? oq_json_text(rows->mask_note) : json_null());
}

oq_status oq_bench_config_json(const oq_bench_opts *o, json_t **out, oq_err *err)
{
    return o->model_path ? model_opts_json(o, out, err) : opts_json(o, out, err);
}

oq_status oq_bench_write_summary(oq_runtime *rt, const oq_bench_opts *o, const oq_bench_rows *rows,
                                 int argc, char *const *argv, const char *path, oq_err *err)
{
    OQ_NEED(err, rt);
    OQ_NEED(err, o);
    OQ_NEED(err, rows);
    OQ_NEED_N(err, argc, argv);
    OQ_NEED(err, path);
    int model = o->model_path != NULL;
    json_t *opts = NULL, *results = json_array();
    oq_status st = oq_bench_config_json(o, &opts, err);
    if (!st && *rows->model_sha256) json_object_set_new(opts, "model_sha256", json_string(rows->model_sha256));
    if (!st && model) mask_json(opts, rows);
    for (size_t i = 0; !st && i < rows->n; i++) {
        json_t *r = NULL;
        if (!(st = row_json(&rows->rows[i], model, &r, err))) json_array_append_new(results, r);
    }
    char when[32];
    oq_bench_utc_now(when);
    json_t *doc = st ? NULL
                     : json_pack("{s:s,s:s,s:s,s:o,s:s,s:o,s:o,s:o,s:o}", "schema", OQ_BENCH_SCHEMA, "tool",
                                 "ortqual bench", "mode", model ? "model" : "attention", "start",
                                 rows->start[0] ? oq_json_text(rows->start) : json_null(), "end", when, "command_line",
                                 argv_json(argc, argv), "system", system_json(rt, o, rows), "config", opts, "results",
                                 results);
    if (st) {
        json_decref(opts);
        json_decref(results);
        return st;
    }
    oq_bench_verdict v;
    oq_bench_verdict_of(o, rows, &v);
    json_object_set_new(doc, "verdict", json_string(v.verdict));
    json_object_set_new(doc, "exit_status", json_integer(v.exit_status));
    json_object_set_new(doc, "verdict_reason", json_string(v.reason));
    json_object_set_new(doc, "tested", json_integer((json_int_t)v.tested));
    json_object_set_new(doc, "allow_skip", json_boolean(o->allow_skip));
    json_object_set_new(doc, "baseline", baseline_json(rows->baseline));
    /* what the float64 reference cost: computed only for shapes where a row needed it */
    if (!model)
        json_object_set_new(doc, "reference_computed", json_pack("{s:I, s:f}", "shapes", (json_int_t)rows->reference_shapes,
                                                                 "ms", rows->reference_ms));
    st = oq_json_write_file(path, doc, JSON_INDENT(1), err);
    json_decref(doc);
    return st;
}
