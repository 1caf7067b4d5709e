/* --shard, --prepare-shards, --shard-by: parsed the same way by validate and replay. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int oq_cli_shard_opt(const char *cmd, struct oq_cli_shard *s, int opt, const char *arg)
{
    oq_err e = {0};
    int64_t n;
    switch (opt) {
    case OQ_CLI_OPT_SHARD:
        if (oq_shard_parse(arg, &s->spec, &e) == OQ_OK) return s->run = 1;
        fprintf(stderr, "ortqual %s: --%s\n", cmd, e.msg);
        return -1;
    case OQ_CLI_OPT_PREPARE_SHARDS:
        if (oq_cli_parse_int(cmd, "--prepare-shards", arg, 1, 100000, &n)) return -1;
        s->spec.count = (int32_t)n;
        s->spec.prepare = 1;
        return 1;
    case OQ_CLI_OPT_SHARD_BY: {
        int by = oq_shard_by_parse(arg);
        if (by < 0) {
            fprintf(stderr, "ortqual %s: --shard-by '%s': want batch or config\n", cmd, arg);
            return -1;
        }
        s->spec.by = (oq_shard_by)by;
        s->by_given = 1;
        return 1;
    }
    }
    return 0;
}

int oq_cli_shard_check(const char *cmd, const struct oq_cli_shard *s, const char *outdir)
{
    const char *why = s->run && s->spec.prepare ? "--shard and --prepare-shards exclude each other"
                      : s->by_given && !s->spec.count ? "--shard-by needs --shard or --prepare-shards"
                      : s->spec.count && !outdir ? "--shard and --prepare-shards need --outdir (the directory every shard shares)"
                                                 : NULL;
    if (why) fprintf(stderr, "ortqual %s: %s\n", cmd, why);
    return why ? -1 : 0;
}

void oq_cli_shard_help(FILE *fp)
{
    fprintf(fp,
"  --prepare-shards N      prepare a split into N shards and run nothing: batches checked and written\n"
"                          to DIR, DIR/shards/plan.json records the plan (see 'ortqual slurm')\n"
"  --shard I/N             run shard I (0..N-1) of the prepared plan into DIR/shards/I/, with the\n"
"                          options it was prepared with; 'ortqual merge DIR' makes the one verdict\n"
"  --shard-by batch|config split by batches (default: each batch's reference computed once) or by\n"
"                          configurations (each shard runs the reference and some of the others)\n");
}

/* What a prepared plan holds and what to run next. */
void oq_cli_print_prepared(const json_t *plan, const char *outdir)
{
    json_int_t n = json_integer_value(json_object_get(plan, "shards"));
    printf("prepared %lld shards by %s in %s/shards/plan.json: %zu batches (checked against the mask contract),\n"
           "%zu configurations, plan %.16s\n"
           "next: the same command with --shard I/%lld for I = 0..%lld (anywhere that sees %s), then\n"
           "      ortqual merge %s\n",
           (long long)n, json_string_value(json_object_get(plan, "shard_by")), outdir,
           json_array_size(json_object_get(plan, "batches")), json_array_size(json_object_get(plan, "configs")),
           json_string_value(json_object_get(json_object_get(plan, "plan"), "hash")), (long long)n,
           (long long)n - 1, outdir, outdir);
}
