/* ortqual estimate: the time of a large sharded matrix, modelled from a measured summary. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ortqual/validate.h"

const char cmd_estimate_summary[] = "model the time of a large sharded matrix from a measured summary.json";

static const char head[] =
"usage: ortqual estimate SUMMARY.json --events E --workers G [options]\n"
"\n"
"Models how long E events x K configurations take when split by batch into N shards (SLURM\n"
"array tasks) on G workers running at once, from the per-batch costs that SUMMARY.json\n"
"measured: per configuration, a fixed part paid once per task (process, runtime, session,\n"
"the first call's warm-up) and a part per event (each batch's first call, warm-up and timed\n"
"calls, comparison and I/O). The calls cost their medians times how much longer the probe's\n"
"calls took as measured (jitter, load: paid per batch, not once); \"uncertainty\" gives the\n"
"shard's time with every call at its median too, the low end. Probe with the batch size\n"
"and lengths of the real plan, on the node type it will use. The model is explained in\n"
"docs/scale-out.md. A run directory stands for its summary.json.\n";

static const char foot[] =
"\n"
"exit status: 0, 2 usage or an unusable summary.\n"
"example: ortqual estimate probe/summary.json --events 1000000 --configs 20 --workers 50 --only cuda:\n";

static void print_json(const oq_estimate *e, const oq_estimate *low, const oq_estimate_opts *o)
{
    json_t *configs = json_array();
    for (size_t i = 0; i < e->n_configs; i++)
        json_array_append_new(configs, json_pack("{s:s, s:f, s:f, s:b}", "name", e->configs[i].name, "fixed_s",
                                                 e->configs[i].fixed_s, "per_event_s", e->configs[i].per_event_s,
                                                 "read_only", e->configs[i].read_only));
    json_t *left_out = json_array();
    for (size_t i = 0; i < e->n_left_out; i++)
        json_array_append_new(left_out, json_pack("{s:s, s:s}", "name", e->left_out[i].name, "status",
                                                  oq_verdict_name(e->left_out[i].status)));
    json_t *j = json_pack("{s:s, s:I, s:o, s:o, s:I, s:I, s:i, s:i, s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:f}", "schema",
                          OQ_CLI_ESTIMATE_SCHEMA, "measured_events",
                          (json_int_t)e->measured_events, "configs", configs, "left_out", left_out, "events", (json_int_t)o->events,
                          "batches", (json_int_t)e->batches, "total_configs", e->n_total_configs, "workers",
                          o->workers, "shards", e->shards, "waves", e->waves, "events_per_shard",
                          (json_int_t)e->events_per_shard, "shard_fixed_s",
                          e->shard_fixed_s, "shard_events_s", e->shard_events_s, "shard_s", e->shard_s, "wall_s",
                          e->wall_s, "worker_hours", e->worker_hours);
    json_object_set_new(j, "cold_unseparated", json_boolean(e->cold_unseparated));
    /* the calls at their medians (a machine without jitter): the estimate's low end */
    json_object_set_new(j, "shard_s_at_medians", json_real(low->shard_s));
    json_object_set_new(j, "wall_s_at_medians", json_real(low->wall_s));
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    putchar('\n');
    json_decref(j);
}

/* A time in the unit that fits it: 90 s read "0.0 worker-hours" in hours. */
static const char *duration(double s, char *buf, size_t n)
{
    double v = s >= 3600 ? s / 3600 : s >= 60 ? s / 60 : s;
    snprintf(buf, n, v < 10 ? "%.3g %s" : "%.1f %s", v, s >= 3600 ? "h" : s >= 60 ? "min" : "s");
    return buf;
}

/* "50 shards by batch on 50 workers (1 wave)"; a default capped at the batches says so. */
static void print_shards(const oq_estimate *e, const oq_estimate_opts *o)
{
    if (!o->shards && e->shards < o->workers)
        printf("       %d shards (one per batch; --workers %d leaves %d idle)", (int)e->shards, (int)o->workers,
               (int)(o->workers - e->shards));
    else
        printf("       %d shards by batch on %d workers (%d wave%s)", (int)e->shards, (int)o->workers, (int)e->waves,
               e->waves > 1 ? "s" : "");
    printf(", %lld events per shard\n", (long long)e->events_per_shard);
}

static void print_text(const oq_estimate *e, const oq_estimate *low, const oq_estimate_opts *o, const char *path)
{
    char fixed[32], events[32], shard[32], wall[32], total[32], quiet[32];
    printf("measured in %s (%lld events):\n%-34s %12s %16s\n", oq_cli_shown(path), (long long)e->measured_events, "configuration",
           "fixed (s)", "per event (ms)");
    for (size_t i = 0; i < e->n_configs; i++)
        if (e->configs[i].read_only)
            printf("%-34s %12s %16s\n", oq_cli_shown(e->configs[i].name), "0 (read)", "0 (read)");
        else
            printf("%-34s %12.3f %16.4f\n", oq_cli_shown(e->configs[i].name), e->configs[i].fixed_s, e->configs[i].per_event_s * 1e3);
    for (size_t i = 0; i < e->n_left_out; i++)
        printf("note: %s is left out: it timed no batch (%s); give --configs to count it in the larger plan\n",
               oq_cli_shown(e->left_out[i].name), oq_verdict_name(e->left_out[i].status));
    if (e->cold_unseparated) /* a probe of one batch per shard: each first call was a process's */
        printf("warning: no shard of %s timed a second batch, so each batch's first call (its process's one-time "
               "warm-up) counts as per-event cost: the estimate is high; probe with at least 2 batches per shard\n",
               oq_cli_shown(path));
    if (e->n_configs && e->configs[0].read_only)
        printf("(the reference '%s' is saved outputs: read, not run, it costs nothing here; the time that made "
               "them is not modelled)\n", oq_cli_shown(e->configs[0].name));
    printf("\nmodel: %lld events x %d configurations (the reference and %d like the mean of the %zu above),\n",
           (long long)o->events, (int)e->n_total_configs, (int)e->n_total_configs - 1, e->n_configs - 1);
    print_shards(e, o);
    printf("one shard: %s fixed + %s for its events = %s\n"
           "wall: %s, plus queue waits, the prepare step and the merge\n"
           "worker time: %s (%d shards x %s)\n",
           duration(e->shard_fixed_s, fixed, sizeof fixed), duration(e->shard_events_s, events, sizeof events),
           duration(e->shard_s, shard, sizeof shard), duration(e->wall_s, wall, sizeof wall),
           duration(e->worker_hours * 3600, total, sizeof total), (int)e->shards, shard);
    /* the calls as the probe measured them, jitter and load included: with every call at its
     * batch's median (a quiet machine) the shard takes less; the two bracket it */
    if (low->shard_s < e->shard_s)
        printf("uncertainty: one shard %s to %s: the low end with every call at its batch's median, as a machine "
               "without jitter or load gives; the probe's calls ran slower than their medians (jitter, load), "
               "which makes the events' part %.2fx that, counted per batch above\n",
               duration(low->shard_s, quiet, sizeof quiet), shard,
               low->shard_events_s > 0 ? e->shard_events_s / low->shard_events_s : 1.0);
}

int cmd_estimate(int argc, char **argv)
{
    oq_estimate_opts o = {.repeat = -1, .warmup = -1};
    long events = 0;
    int json = 0, first;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_NUMBER("events", "E", &events, 1, INT64_MAX, "events of the larger plan"),
        OQ_OPT_NUMBER("workers", "G", &o.workers, 1, 1 << 30, "tasks at once: nodes x GPUs per node (e.g. 50)"),
        OQ_OPT_NUMBER("configs", "K", &o.configs, 2, 1 << 30,
                      "configurations with the reference (default: as measured); the\n"
                      "K-1 others cost like the mean of the measured ones"),
        OQ_OPT_STRING("only", "PREFIX", &o.only, "take that mean over measured configurations named PREFIX...\n(e.g. cuda:)"),
        OQ_OPT_NUMBER("shards", "N", &o.shards, 1, 1 << 30,
                      "(default G: one wave; at most one shard per batch of the\n"
                      "measured batch size)"),
        OQ_CLI_REPEAT_OPT_H(&o.repeat, "timed calls per batch of the larger plan (default: as measured)"),
        OQ_CLI_WARMUP_OPT_H(&o.warmup, "warm-up calls per batch (default: as measured)"),
        OQ_OPT_FLAG("json", &json, "the estimate as JSON"),
        OQ_OPT_END};
    const oq_cli_command c = {"estimate", head, foot, opts, OQ_CLI_OPERANDS};
    int rc = oq_cli_parse(&c, argc, argv, &first);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    o.events = events;
    if (first != argc - 1 || !o.events || !o.workers) {
        oq_cli_error_in("estimate", "want SUMMARY.json, --events and --workers (see 'ortqual estimate --help')");
        return OQ_EXIT_USAGE;
    }
    oq_validate_summary *s;
    oq_estimate e, low;
    oq_err err = {0};
    char buf[4096];
    const char *path = oq_cli_summary_of(argv[first], buf, sizeof buf);
    if (oq_validate_summary_read(path, &s, &err)) return oq_cli_refuse("estimate", json, err.status, err.msg, OQ_EXIT_USAGE);
    oq_status st = oq_validate_estimate(s, &o, &e, &err);
    if (!st && (st = oq_validate_estimate_at_medians(s, &o, &low, &err))) oq_estimate_clear(&e);
    oq_validate_summary_free(s);
    if (st) {
        char line[sizeof err.msg + 4200];
        snprintf(line, sizeof line, "%s: %s", path, err.msg);
        return oq_cli_refuse("estimate", json, st, line, OQ_EXIT_USAGE);
    }
    if (json) print_json(&e, &low, &o);
    else print_text(&e, &low, &o, path);
    oq_estimate_clear(&e);
    oq_estimate_clear(&low);
    return OQ_EXIT_OK;
}
