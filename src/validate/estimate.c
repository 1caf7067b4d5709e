/* How long a larger plan takes, modelled from the per-batch costs a smaller run measured
 * (oq_validate_estimate in validate.h; the model is explained in docs/scale-out.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate-impl.h"

static double num(const json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }

/* The time batch b held the worker: the first call, then warm-up and timed calls at the
 * median (warm-up and repeat as measured, or as asked for the larger plan). */
static double batch_s(const json_t *b, const oq_estimate_opts *o)
{
    double w = o->warmup >= 0 ? o->warmup : num(b, "warmup");
    double r = o->repeat >= 0 ? o->repeat : num(b, "repeat");
    return num(b, "first_call_s") + (w + r) * num(b, "median_s");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One configuration: what one task pays once (process, runtime, session, the first batch's
 * warm-up beyond a typical first call) and what all its batches cost after that (divided by
 * the events by the caller). 0 when it timed no batch (skipped, not run). */
static int measure(const json_t *c, const oq_estimate_opts *o, oq_estimate_config *out)
{
    const json_t *batches = json_object_get(c, "batches");
    size_t n = json_array_size(batches), i;
    const json_t *b;
    if (!n || !json_is_number(json_object_get(json_array_get(batches, 0), "median_s"))) return 0;
    double sum = 0, *firsts = calloc(n, sizeof *firsts);
    json_array_foreach(batches, i, b) {
        sum += batch_s(b, o);
        firsts[i] = num(b, "first_call_s");
    }
    qsort(firsts + 1, n - 1, sizeof *firsts, cmp_double);
    double cold = n > 1 ? fmax(0, firsts[0] - firsts[1 + (n - 1) / 2]) : 0;
    free(firsts);
    const json_t *cost = json_object_get(c, "cost");
    double batches_s = sum + num(cost, "compare_s") + num(cost, "io_s") - cold;
    snprintf(out->name, sizeof out->name, "%s", oq_json_str(c, "name", "?"));
    out->per_event_s = batches_s;
    out->fixed_s = fmax(0, num(json_object_get(c, "worker"), "seconds") - batches_s);
    return 1;
}

static double measured_events(const json_t *summary)
{
    double e = 0;
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(summary, "batches"), i, b) e += num(b, "batch_size");
    return e;
}

static oq_status configs(const json_t *summary, const oq_estimate_opts *o, oq_estimate *out, oq_err *err)
{
    const json_t *all = json_object_get(summary, "configs");
    out->configs = calloc(json_array_size(all) + 1, sizeof *out->configs);
    double events = measured_events(summary);
    size_t i;
    const json_t *c;
    json_array_foreach(all, i, c) {
        const char *name = oq_json_str(c, "name", "");
        if (i && o->only && strncmp(name, o->only, strlen(o->only)) != 0) continue;
        if (!measure(c, o, &out->configs[out->n_configs])) {
            if (i == 0) return oq_err_set(err, OQ_ERR_FORMAT, "the reference '%s' has no timed batches", name);
            continue;
        }
        out->configs[out->n_configs++].per_event_s /= events;
    }
    if (out->n_configs < 2)
        return oq_err_set(err, OQ_ERR_FORMAT, "no timed configuration besides the reference%s%s", o->only ? " matches " : "",
                          o->only ? o->only : "");
    out->measured_events = (int64_t)events;
    return OQ_OK;
}

/* K configurations: the reference as measured, the K-1 others like the mean of those measured. */
static void model(const oq_estimate_opts *o, oq_estimate *e)
{
    size_t m = e->n_configs - 1;
    double fixed = 0, per_event = 0;
    for (size_t i = 1; i <= m; i++) fixed += e->configs[i].fixed_s, per_event += e->configs[i].per_event_s;
    int32_t k = o->configs > 0 ? o->configs : (int32_t)e->n_configs;
    double others = (double)(k - 1) / (double)m;
    e->n_total_configs = k;
    e->shards = o->shards > 0 ? o->shards : o->workers;
    e->waves = (e->shards + o->workers - 1) / o->workers;
    e->events_per_shard = (o->events + e->shards - 1) / e->shards;
    e->shard_fixed_s = e->configs[0].fixed_s + others * fixed;
    e->shard_events_s = (double)e->events_per_shard * (e->configs[0].per_event_s + others * per_event);
    e->shard_s = e->shard_fixed_s + e->shard_events_s;
    e->wall_s = e->waves * e->shard_s;
    e->worker_hours = e->shards * e->shard_s / 3600.0;
}

oq_status oq_validate_estimate(const char *summary_path, const oq_estimate_opts *o, oq_estimate *out, oq_err *err)
{
    memset(out, 0, sizeof *out);
    if (o->events < 1 || o->workers < 1 || o->configs < 0 || o->configs == 1 || o->shards < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "estimate: want events >= 1, workers >= 1, configurations >= 2");
    json_error_t je;
    json_t *s = json_load_file(summary_path, 0, &je);
    if (!s) return oq_err_set(err, OQ_ERR_FORMAT, "%s: line %d: %s", summary_path, je.line, je.text);
    oq_status st = strcmp(oq_json_str(s, "schema", ""), OQ_VALIDATE_SCHEMA)
                       ? oq_err_set(err, OQ_ERR_FORMAT, "%s: not a validation summary (%s)", summary_path, OQ_VALIDATE_SCHEMA)
                       : configs(s, o, out, err);
    if (!st) model(o, out);
    json_decref(s);
    if (st) oq_estimate_clear(out);
    return st;
}

void oq_estimate_clear(oq_estimate *e)
{
    free(e->configs);
    memset(e, 0, sizeof *e);
}
