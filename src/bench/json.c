/* Rows and options as JSON (summary.json). */
#include <math.h>

#include "ortqual/bench.h"
#include "ortqual/events.h"

/* A number, or null when it was not measured (NAN) . */
static json_t *num_or_null(double x) { return isfinite(x) ? json_real(x) : json_null(); }
static json_t *int_or_null(int64_t x) { return x >= 0 ? json_integer(x) : json_null(); }

static json_t *stats_json(const oq_bench_stats *s)
{
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "mean", num_or_null(s->mean), "std",
                     num_or_null(s->std), "min", num_or_null(s->min), "max", num_or_null(s->max),
                     "p50", num_or_null(s->p50), "p90", num_or_null(s->p90), "p99",
                     num_or_null(s->p99));
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
    return json_pack("{s:o,s:o,s:o,s:o,s:s?,s:o}", "rss_before_bytes", int_or_null(r->rss_before),
                     "peak_rss_bytes", int_or_null(r->peak_rss), "vmhwm_bytes",
                     int_or_null(r->vmhwm), "gpu_bytes", int_or_null(r->gpu_mem), "gpu_note",
                     r->gpu_mem_note[0] ? r->gpu_mem_note : NULL, "allocator_stats",
                     alloc_json(r));
}

static json_t *accuracy_json(const oq_bench_row *r)
{
    if (isnan(r->max_abs_err) && r->nan_count < 0) return json_null();
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "max_abs_err", num_or_null(r->max_abs_err),
                     "max_rel_err", num_or_null(r->max_rel_err), "nan_count",
                     int_or_null(r->nan_count), "inf_count", int_or_null(r->inf_count),
                     "pad_nonzero", int_or_null(r->pad_nonzero));
}

static json_t *shapes_json(int static_shapes)
{
    return static_shapes < 0 ? json_null() : json_string(static_shapes ? "static" : "dynamic");
}

oq_status oq_bench_row_to_json(const oq_bench_row *r, json_t **out, oq_err *err)
{
    const oq_bench_variant *v = &r->variant;
    *out = json_pack(
        "{s:s,s:s,s:s?,s:s,s:s,s:s,s:s,s:s?,s:b,s:o,s:s,s:I,s:I,s:I,s:i,s:i,s:i,s:i,s:I,s:I,"
        "s:o,s:o,s:o,s:o,s:o,s:o}",
        "variant", v->name, "status", oq_bench_status_name(r->status), "error",
        r->error[0] ? r->error : NULL, "device", r->device, "dtype",
        oq_precision_name(v->precision), "representation", oq_repr_name(v->repr), "kernel",
        oq_kernel_name(v->kernel), "kernel_observed",
        r->kernel_observed[0] ? r->kernel_observed : NULL, "masked", r->masked, "shapes",
        shapes_json(r->static_shapes), "io_binding", oq_io_binding_name(r->io), "batch",
        (json_int_t)r->batch, "seq_len", (json_int_t)r->seq_len, "valid_elements",
        (json_int_t)r->valid_elements, "heads", r->heads, "kv_heads", r->kv_heads, "head_dim",
        r->head_dim, "threads", r->threads, "warmup", (json_int_t)r->warmup, "iters",
        (json_int_t)r->iters, "session_ms", num_or_null(r->session_ms), "first_run_ms",
        num_or_null(r->first_run_ms), "stats_ms", stats_json(&r->stats), "samples_ms",
        samples_json(r), "memory", memory_json(r), "accuracy", accuracy_json(r));
    return *out ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "JSON for row %s", v->name);
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

oq_status oq_bench_opts_to_json(const oq_bench_opts *o, json_t **out, oq_err *err)
{
    *out = json_pack(
        "{s:o,s:o,s:s,s:f,s:o,s:o,s:i,s:i,s:i,s:i,s:i,s:I,s:I,s:I,s:s,s:b,s:b,s:I,s:o}",
        "batch_sizes", int_list(o->batch_sizes, o->n_batch_sizes), "seq_lens",
        int_list(o->seq_lens, o->n_seq_lens), "length_policy",
        oq_length_policy_name((oq_length_policy)o->length_policy), "mask_fraction",
        o->mask_fraction, "modes", mode_list(o->modes, "masked", "unmasked"), "export_shapes",
        mode_list(o->shapes, "dynamic", "static"), "heads", o->heads, "kv_heads", o->kv_heads,
        "head_dim", o->head_dim, "threads", o->threads, "graph_opt_level", o->graph_opt_level,
        "warmup", (json_int_t)o->warmup, "iters", (json_int_t)o->iters, "seed",
        (json_int_t)o->seed, "io_binding", oq_io_binding_name(o->io_binding), "include_session",
        o->include_session, "reference", o->reference, "mem_sample_us",
        (json_int_t)o->mem_sample_us, "variants", variant_list(o));
    return *out ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "JSON for the options");
}
