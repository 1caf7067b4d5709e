/* ORT's profile of a row's extra runs: per Run, its wall time (model_run), the nodes'
 * kernel_time events and the GPU kernel events, each the median over the runs read. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/stats.h"

#define NODE_SUFFIX "_kernel_time"

typedef struct run_acc {
    double ts, dur;        /* the model_run event, microseconds */
    double node_us, kernel_us;
    double kernel_events;
} run_acc;

static int cmp_run(const void *a, const void *b)
{
    double x = ((const run_acc *)a)->ts, y = ((const run_acc *)b)->ts;
    return (x > y) - (x < y);
}

static int is_cat(const json_t *ev, const char *cat)
{
    const char *c = json_string_value(json_object_get(ev, "cat"));
    return c && !strcmp(c, cat);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

/* The model_run events, in time order. */
static oq_status collect_runs(const json_t *events, run_acc **out, size_t *n, const char *path, oq_err *err)
{
    *out = NULL;
    *n = 0;
    size_t i, cap = 0;
    json_t *ev;
    json_array_foreach(events, i, ev) cap += is_cat(ev, "Session");
    run_acc *r = calloc(cap ? cap : 1, sizeof *r);
    if (!r) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    json_array_foreach(events, i, ev) {
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (!is_cat(ev, "Session") || !name || strcmp(name, "model_run")) continue;
        const json_t *ts = json_object_get(ev, "ts"), *dur = json_object_get(ev, "dur");
        if (!json_is_number(ts) || !json_is_number(dur)) {
            free(r);
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: event %zu (model_run) has no numeric ts/dur", path, i);
        }
        r[*n].ts = json_number_value(ts);
        r[(*n)++].dur = json_number_value(dur);
    }
    qsort(r, *n, sizeof *r, cmp_run);
    *out = r;
    return OQ_OK;
}

/* The run an event belongs to: the last one that started at or before it. */
static run_acc *run_of(run_acc *r, size_t n, double ts)
{
    run_acc *hit = NULL;
    for (size_t k = 0; k < n && r[k].ts <= ts; k++) hit = &r[k];
    return hit;
}

static void add_events(const json_t *events, run_acc *r, size_t n)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        int node = is_cat(ev, "Node"), kernel = is_cat(ev, "Kernel");
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (!(node || kernel) || !name || (node && !ends_with(name, NODE_SUFFIX))) continue;
        run_acc *a = run_of(r, n, json_number_value(json_object_get(ev, "ts")));
        if (!a) continue; /* before the first Run: session set-up */
        double dur = json_number_value(json_object_get(ev, "dur"));
        if (node) a->node_us += dur;
        if (kernel) {
            a->kernel_us += dur;
            a->kernel_events += 1;
        }
    }
}

/* Median of one field over runs, in milliseconds (events are in microseconds). */
static double median_of(const run_acc *r, size_t n, size_t field_offset, double scale)
{
    double *v = malloc(n * sizeof *v);
    if (!v) return NAN;
    for (size_t k = 0; k < n; k++) v[k] = *(const double *)((const char *)&r[k] + field_offset) * scale;
    double m = oq_bench_median(v, n);
    free(v);
    return m;
}

double oq_bench_median(const double *v, size_t n)
{
    oq_stats s;
    return oq_stats_compute(v, n, &s, NULL) == OQ_OK ? s.p50 : NAN;
}

static oq_status summarize(const json_t *events, size_t last, const char *path, oq_bench_profile *out, oq_err *err)
{
    run_acc *r = NULL;
    size_t n = 0;
    oq_status st = collect_runs(events, &r, &n, path, err);
    if (!st && n < last)
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: %zu model_run events, %zu profiled runs wanted", path, n, last);
    if (!st) {
        add_events(events, r, n);
        const run_acc *tail = r + (n - last);
        double kernels = median_of(tail, last, offsetof(run_acc, kernel_events), 1);
        out->runs = last;
        out->run_ms = median_of(tail, last, offsetof(run_acc, dur), 1e-3);
        out->node_ms = median_of(tail, last, offsetof(run_acc, node_us), 1e-3);
        out->kernel_ms = kernels > 0 ? median_of(tail, last, offsetof(run_acc, kernel_us), 1e-3) : NAN;
        out->kernel_events = kernels > 0 ? (size_t)kernels : 0;
        out->kernel_source = kernels > 0 ? "ort-profile" : NULL;
        snprintf(out->path, sizeof out->path, "%s", path);
    }
    free(r);
    return st;
}

oq_status oq_bench_profile_parse(const char *text, size_t len, const char *path, size_t last_runs,
                                 oq_bench_profile *out, oq_err *err)
{
    if (!last_runs) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: no profiled runs to read", path);
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) return oq_err_set(err, OQ_ERR_FORMAT, "%s: not JSON (line %d: %s)", path, je.line, je.text);
    const json_t *events = json_is_object(root) ? json_object_get(root, "traceEvents") : root;
    oq_status st = json_is_array(events) ? summarize(events, last_runs, path, out, err)
                                         : oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ORT profile (no array of events)",
                                                      path);
    json_decref(root);
    return st;
}

oq_status oq_bench_profile_read(const char *path, size_t last_runs, oq_bench_profile *out, oq_err *err)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (!st) st = oq_bench_profile_parse((const char *)buf, n, path, last_runs, out, err);
    free(buf);
    return st;
}
