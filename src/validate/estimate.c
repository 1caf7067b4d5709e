/* How long a larger plan takes, modelled from the per-batch costs a smaller run measured
 * (oq_validate_estimate in validate.h; the model is explained in docs/scale-out.md). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate-impl.h"
#include "status/args-impl.h"

static double median_of(const oq_batch_result *b) { return b->timed && !isnan(b->median_s) ? b->median_s : 0; }

/* The time batch b held the worker: the first call, then warm-up and timed calls at the median,
 * `w` and `r` of them. A batch without repeated calls (the reference runs once per batch by
 * default) costs its one call. */
static double batch_s(const oq_batch_result *b, double w, double r) { return b->first_call_s + (w + r) * median_of(b); }

/* Warm-up and timed calls as asked for the larger plan (-1: as measured). */
static double asked(int v, int measured) { return v >= 0 ? v : measured; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The workers that ran a configuration: a merged summary's worker time is the sum over its
 * shards, each of which paid the fixed cost once. */
static double tasks_of(const oq_config_result *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n_shards; i++) k += c->shards[i].worker_ran != 0;
    return k ? (double)k : 1;
}

/* A time that cannot be (negative, not finite) is a malformed summary, not a shorter plan. */
static int bad_time(double t) { return !isnan(t) && !(t >= 0 && isfinite(t)); }

/* The events of batch `index` (its size in the summary's batch list). */
static double events_of(const oq_validate_summary *s, int64_t index)
{
    if (index >= 0 && (size_t)index < s->n_batches && s->batches[index].index == index)
        return (double)s->batches[index].batch_size;
    for (size_t i = 0; i < s->n_batches; i++)
        if (s->batches[i].index == index) return (double)s->batches[i].batch_size;
    return 0;
}

static int time_checked(const oq_config_result *c, oq_err *err)
{
    for (size_t i = 0; i < c->n_batches; i++)
        if (bad_time(c->batches[i].first_call_s) || bad_time(c->batches[i].median_s)) {
            oq_err_set(err, OQ_ERR_FORMAT, "'%s', batch %lld: first_call_s %g, median_s %g: a time is negative or "
                       "not finite", c->config.name, (long long)c->batches[i].index, c->batches[i].first_call_s,
                       c->batches[i].median_s);
            return 0;
        }
    return 1;
}

/* Where the task that ran batch `index` stops: a merged summary split by batch holds its shards'
 * records in shard order, each shard's batches a range of the plan's (the split is the plan's,
 * oq_shard_part_of); in any other summary one task's records run to the end (a split by
 * configuration kept the first shard's records of the reference every shard ran). */
static size_t task_end(const oq_validate_summary *s, int64_t index)
{
    const oq_merge_info *mi = &s->merged;
    for (int32_t i = 0; mi->by == OQ_SHARD_BY_BATCH && i < mi->count; i++) {
        oq_shard_part p = oq_shard_part_of(mi->count, mi->by, s->n_batches, s->n_configs, i);
        if ((size_t)index < p.batch_hi) return p.batch_hi;
    }
    return SIZE_MAX;
}

/* The first calls of c's timed batches: each task's first (its cold call: CUDA context, kernel
 * selection) beyond a typical first call (the upper median of the others) is one-time. Their
 * sum: one per task that ran it, so a merged summary's other shards' cold calls are not spread
 * over the events (only the first batch's was: a 0.5 s first call gave a wall of 50 s in shard
 * 0, of 300 s in shard 1). None without another batch to tell a typical call by: then
 * *unseparated is set, every first call counted as per-event cost (a probe of one batch per
 * shard: each is its process's first). */
static int sum_colds(const oq_validate_summary *s, const oq_config_result *c, double *colds, int *unseparated,
                     oq_err *err)
{
    size_t n = c->n_batches, n_others = 0, n_firsts = 0, end = 0;
    double *t = calloc(n + 1, sizeof *t); /* the others from the front, the tasks' firsts from the back */
    if (!t) {
        oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const oq_batch_result *b = &c->batches[i];
        if (!b->timed) continue;
        if (b->index < 0 || (size_t)b->index < end) {
            t[n_others++] = b->first_call_s;
            continue;
        }
        t[n - ++n_firsts] = b->first_call_s;
        end = task_end(s, b->index);
    }
    qsort(t, n_others, sizeof *t, cmp_double);
    *colds = 0;
    if (!n_others && n_firsts > 1) *unseparated = 1;
    for (size_t i = 0; n_others && i < n_firsts; i++) *colds += fmax(0, t[n - 1 - i] - t[n_others / 2]);
    free(t);
    return 1;
}

/* How much longer c's calls took than their medians say: the worker's measured call time
 * (cost.run_s: first, warm-up and timed calls as they ran) over first call + calls x median,
 * cold calls apart, `runs` the tasks whose records these are. Under jitter or load the mean call
 * is slower than the median, and that time is paid per batch: booked as a one-time cost it grew
 * with the probe's batches (QA 8b D7). 1 when the summary has no cost record (older ones). */
static double call_ratio(const oq_config_result *c, double runs, double ran, double colds)
{
    double modelled = runs * (ran - colds), measured = c->cost.run_s - runs * colds;
    if (!c->cost.recorded || !(c->cost.run_s > 0) || !(modelled > 0) || !(measured > 0)) return 1;
    return measured / modelled;
}

/* One configuration: what one task pays once (process, runtime, session, its first batch's
 * warm-up beyond a typical first call) and what each event costs after that. Only the batches it
 * timed count, their events only (a batch read from the reference cache ran nothing). The fixed
 * part is what the worker spent beyond its calls as measured (cost.run_s) and the comparison and
 * I/O: session creation and process start do not depend on the larger plan's calls; the
 * per-event part the calls the larger plan makes (--warmup, --repeat) at their medians, scaled by
 * how much longer the measured calls took (call_ratio), with the comparison and I/O. A merged
 * summary's worker and cost times are sums over the k tasks that ran it, each of which paid the
 * fixed part once. 0 when it timed no batch (skipped, not run). `all_batches`: each of its tasks
 * ran every batch, the records one task's (the reference of a split by configuration), so their
 * calls and cold call count k times. `at_medians`: the larger plan's calls at their medians
 * (ratio 1: a quiet machine's), the fixed part as measured all the same. */
static int measure(const oq_validate_summary *s, const oq_config_result *c, const oq_estimate_opts *o, int all_batches,
                   int at_medians, oq_estimate_config *out, int *unseparated, oq_err *err)
{
    double ran = 0, will = 0, events = 0, colds = 0;
    if (!time_checked(c, err) || !sum_colds(s, c, &colds, unseparated, err)) return -1;
    for (size_t i = 0; i < c->n_batches; i++) {
        const oq_batch_result *b = &c->batches[i];
        if (!b->timed) continue;
        ran += batch_s(b, b->warmup, b->repeat);
        will += batch_s(b, asked(o->warmup, b->warmup), asked(o->repeat, b->repeat));
        events += events_of(s, b->index);
    }
    if (events <= 0) return 0;
    double tasks = tasks_of(c), runs = all_batches ? tasks : 1, cost = c->cost.compare_s + c->cost.io_s;
    double ratio = call_ratio(c, runs, ran, colds);
    double calls = runs * (ran - colds) * ratio + cost; /* the tasks' calls, comparison and I/O, cold calls apart */
    double fixed = (c->worker.seconds - calls) / tasks;
    if (fixed < 0) {
        oq_err_set(err, OQ_ERR_FORMAT, "'%s': its worker ran %g s, less than the %g s of its batches' calls, "
                   "comparison and I/O: the summary's times do not add up", c->config.name, c->worker.seconds, calls);
        return -1;
    }
    snprintf(out->name, sizeof out->name, "%s", c->config.name);
    out->fixed_s = fixed;
    out->per_event_s = (runs * (will - colds) * (at_medians ? 1 : ratio) + cost) / (runs * events);
    return 1;
}

static double measured_events(const oq_validate_summary *s)
{
    double e = 0;
    for (size_t i = 0; i < s->n_batches; i++) e += (double)s->batches[i].batch_size;
    return e;
}

/* What the reference's batches say about measuring it: the saved outputs (`expected`) cost
 * nothing to run (read, not run: out is set, 1); one read from the reference cache ran nothing,
 * and a reference timed on some batches only would be divided over too few (refused, -1); else 0. */
static int reference_as_read(const oq_config_result *c, oq_estimate_config *out, oq_err *err)
{
    if (oq_config_is_expected(&c->config)) {
        snprintf(out->name, sizeof out->name, "%s", c->config.name);
        out->read_only = 1;
        return 1;
    }
    size_t cached = 0;
    for (size_t i = 0; i < c->n_batches; i++) cached += c->batches[i].reference_cached != 0;
    if (!cached) return 0;
    oq_err_set(err, OQ_ERR_FORMAT, "the reference '%s': %zu of %zu batches were not timed (their outputs came from "
               "the reference cache: measure with no cache_dir)", c->config.name, cached, c->n_batches);
    return -1;
}

/* A merge a shard is missing from holds part of the plan's batches: its times are not the plan's. */
static oq_status complete(const oq_validate_summary *s, oq_err *err)
{
    const oq_merge_info *mi = &s->merged;
    if (!mi->n_problems) return OQ_OK;
    return oq_err_set(err, OQ_ERR_FORMAT, "an incomplete merge: shard %d of %d %s, so its times are not those of "
                      "the plan's batches (merge every shard, or estimate from one shard's summary)",
                      (int)mi->problems[0].index, (int)mi->count, oq_shard_state_name(mi->problems[0].state));
}

static oq_status configs(const oq_validate_summary *s, const oq_estimate_opts *o, int at_medians, oq_estimate *out,
                         oq_err *err)
{
    out->configs = calloc(s->n_configs + 1, sizeof *out->configs);
    out->left_out = calloc(s->n_configs + 1, sizeof *out->left_out);
    if (!out->configs || !out->left_out) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = complete(s, err);
    for (size_t i = 0; !st && i < s->n_configs; i++) {
        const char *name = s->configs[i].config.name;
        if (i && o->only && strncmp(name, o->only, strlen(o->only)) != 0) continue;
        int all_batches = i == 0 && s->merged.count && s->merged.by == OQ_SHARD_BY_CONFIG;
        int got = i == 0 ? reference_as_read(&s->configs[0], &out->configs[0], err) : 0;
        if (!got) got = measure(s, &s->configs[i], o, all_batches, at_medians, &out->configs[out->n_configs], &out->cold_unseparated, err);
        if (got < 0) return err && err->status ? err->status : OQ_ERR_NOMEM;
        if (!got && i == 0) return oq_err_set(err, OQ_ERR_FORMAT, "the reference '%s' has no timed batches", name);
        if (!got) { /* said, not silently dropped: the user's matrix may run it */
            oq_estimate_left_out *l = &out->left_out[out->n_left_out++];
            snprintf(l->name, sizeof l->name, "%s", name);
            l->status = s->configs[i].status;
        }
        out->n_configs += got;
    }
    if (st) return st;
    if (out->n_configs < 2)
        return oq_err_set(err, OQ_ERR_FORMAT, "no timed configuration besides the reference%s%s", o->only ? " matches " : "",
                          o->only ? o->only : "");
    out->measured_events = (int64_t)measured_events(s);
    return OQ_OK;
}

/* The events of the largest shard: shards run whole batches of b (the measured batch size), so
 * the largest has ceil(ceil(E / b) / N) of them (E/N rounded up undercounts: 10 events in
 * batches of 2 over 4 shards give one shard 4 events, not 3). */
static int64_t largest_shard(int64_t events, int64_t b, int64_t batches, int64_t shards)
{
    int64_t most = (batches - 1) / shards + 1;
    return most > events / b ? events : most * b;
}

/* The batches E events make at batch size b (no overflow near INT64_MAX). */
static int64_t batches_of(int64_t events, int64_t b)
{
    return (events - 1) / b + 1;
}

/* K configurations: the reference as measured, the K-1 others like the mean of those measured;
 * b, the measured batch size. */
static void model(const oq_estimate_opts *o, int64_t b, oq_estimate *e)
{
    size_t m = e->n_configs - 1;
    double fixed = 0, per_event = 0;
    for (size_t i = 1; i <= m; i++) fixed += e->configs[i].fixed_s, per_event += e->configs[i].per_event_s;
    int32_t k = o->configs > 0 ? o->configs : (int32_t)e->n_configs;
    double others = (double)(k - 1) / (double)m;
    e->n_total_configs = k;
    e->batches = batches_of(o->events, b);
    /* by default one wave, but no shard without a batch: the workers beyond them stay idle */
    e->shards = o->shards > 0 ? o->shards : (int32_t)(e->batches < o->workers ? e->batches : o->workers);
    e->waves = (e->shards + o->workers - 1) / o->workers;
    e->events_per_shard = largest_shard(o->events, b, e->batches, e->shards);
    e->shard_fixed_s = e->configs[0].fixed_s + others * fixed;
    e->shard_events_s = (double)e->events_per_shard * (e->configs[0].per_event_s + others * per_event);
    e->shard_s = e->shard_fixed_s + e->shard_events_s;
    e->wall_s = e->waves * e->shard_s;
    e->worker_hours = e->shards * e->shard_s / 3600.0;
}

/* A shard runs whole batches (docs/scale-out.md): N may not exceed the batches E events make
 * at the measured batch size. */
static oq_status check_shards(const oq_validate_summary *s, const oq_estimate_opts *o, oq_err *err)
{
    int64_t b = s->n_batches ? s->batches[0].batch_size : 0;
    if (o->shards <= 0 || b < 1 || o->shards <= batches_of(o->events, b)) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.shards %d: above the %lld batches of %lld events in batches of "
                      "%lld (the measured batch size): a shard runs whole batches", (int)o->shards,
                      (long long)batches_of(o->events, b), (long long)o->events, (long long)b);
}

static oq_status estimate(const oq_validate_summary *measured, const oq_estimate_opts *o, int at_medians,
                          oq_estimate *out, oq_err *err)
{
    memset(out, 0, sizeof *out);
    if (o->events < 1 || o->workers < 1 || o->configs < 0 || o->configs == 1 || o->shards < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "estimate: want events >= 1, workers >= 1, configurations >= 2");
    if (o->repeat == 0 || o->repeat < -1 || o->warmup < -1) /* validate's plan: repeat >= 1, warmup >= 0 */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "estimate: want repeat >= 1 and warmup >= 0 (-1: as measured)");
    if (!measured->n_configs)
        return oq_err_set(err, OQ_ERR_FORMAT, "the summary has no configurations (a prepared plan ran nothing)");
    oq_status st = check_shards(measured, o, err);
    if (!st) st = configs(measured, o, at_medians, out, err);
    if (st) oq_estimate_clear(out);
    else model(o, measured->n_batches && measured->batches[0].batch_size > 0 ? measured->batches[0].batch_size : 1,
               out);
    return st;
}

oq_status oq_validate_estimate(const oq_validate_summary *measured, const oq_estimate_opts *o, oq_estimate *out,
                               oq_err *err)
{
    OQ_NEED(err, measured);
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    return estimate(measured, o, 0, out, err);
}

oq_status oq_validate_estimate_at_medians(const oq_validate_summary *measured, const oq_estimate_opts *o,
                                          oq_estimate *out, oq_err *err)
{
    OQ_NEED(err, measured);
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    return estimate(measured, o, 1, out, err);
}

void oq_estimate_clear(oq_estimate *e)
{
    if (!e) return;
    free(e->configs);
    free(e->left_out);
    memset(e, 0, sizeof *e);
}
