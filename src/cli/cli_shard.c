/* --shard, --prepare-shards, --shard-by: taken the same way by validate and replay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ortqual/validate.h"

int oq_cli_shard_run(const oq_opt *o, const char *arg)
{
    struct oq_cli_shard *s = o->ctx;
    oq_err e = {0};
    if (oq_shard_parse(arg, &s->spec, &e) != OQ_OK) {
        oq_cli_error_in(s->cmd, "--%s", e.msg);
        return -1;
    }
    s->run = 1;
    return 0;
}

int oq_cli_shard_prepare(const oq_opt *o, const char *arg)
{
    struct oq_cli_shard *s = o->ctx;
    int64_t n;
    if (oq_cli_parse_int(s->cmd, "--prepare-shards", arg, 1, 100000, &n)) return -1;
    s->spec.count = (int32_t)n;
    s->spec.prepare = 1;
    return 0;
}

int oq_cli_shard_by(const oq_opt *o, const char *arg)
{
    struct oq_cli_shard *s = o->ctx;
    int by = oq_shard_by_parse(arg);
    if (by < 0) {
        oq_cli_error_in(s->cmd, "--shard-by '%s': want batch or config", arg);
        return -1;
    }
    s->spec.by = (oq_shard_by)by;
    s->by_given = 1;
    return 0;
}

int oq_cli_shard_check(const struct oq_cli_shard *s, const char *outdir)
{
    const char *why = s->run && s->spec.prepare ? "--shard and --prepare-shards exclude each other"
                      : s->by_given && !s->spec.count ? "--shard-by needs --shard or --prepare-shards"
                      : s->spec.count && !outdir ? "--shard and --prepare-shards need --outdir (the directory every shard shares)"
                                                 : NULL;
    if (why) oq_cli_error_in(s->cmd, "%s", why);
    return why ? -1 : 0;
}

int oq_cli_print_prepared(const char *outdir)
{
    oq_shard_plan p;
    oq_err e = {0};
    if (oq_shard_plan_read(outdir, &p, &e)) {
        fprintf(stderr, "ortqual: %s\n", e.msg);
        return -1;
    }
    printf("prepared %d shards by %s in %s/shards/plan.json: %zu batches (checked against the mask contract),\n"
           "%zu configurations, plan %.16s\n"
           "next: the same command with --shard I/%d for I = 0..%d (anywhere that sees %s), then\n"
           "      ortqual merge %s\n",
           (int)p.count, oq_shard_by_name(p.by), oq_cli_shown(outdir), p.n_batches, p.n_configs, p.hash, (int)p.count,
           (int)p.count - 1, oq_cli_shown(outdir), oq_cli_shown(outdir));
    oq_shard_plan_clear(&p);
    return 0;
}
