/* Human output shared by validate and replay: progress lines and the verdict table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ortqual/validate.h"

#include "cli.h"

void oq_cli_progress_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

/* Why a node missed its kernel and what reaches it: the first explanation, as
 * the others (one per node) usually repeat it for the next block. */
static void print_advice(const oq_dispatch_result *d)
{
    if (!d->n_advice) return;
    printf("    advice: %s", d->advice[0]);
    if (d->n_advice > 1) printf(" (%zu more in summary.json)", d->n_advice - 1);
    putchar('\n');
}

/* The worst output of a configuration across batches, and its timing. */
static void config_row(const oq_config_result *c)
{
    double worst = -1, first = 0, median = 0;
    const char *worst_out = "-";
    for (size_t i = 0; i < c->n_batches; i++) {
        const oq_batch_result *b = &c->batches[i];
        first += b->timed ? b->first_call_s : 0;
        median += b->timed && !isnan(b->median_s) ? b->median_s : 0;
        for (size_t j = 0; j < b->n_outputs; j++) {
            double m = isfinite(b->outputs[j].max_abs) ? b->outputs[j].max_abs : 0; /* as summary.json */
            if (m > worst) worst = m, worst_out = b->outputs[j].name;
        }
    }
    char err_s[32] = "-";
    if (worst >= 0) snprintf(err_s, sizeof err_s, "%.3g", worst);
    printf("%-34s %-8s %7zu %-10s %10s %10.4f %10.4f\n", c->config.name, oq_verdict_name(c->status), c->n_batches,
           worst_out, err_s, first, median);
    if (c->ort_version) printf("    ONNX Runtime %s (%s)\n", c->ort_version, c->ort_library);
    const oq_placement *p = c->placement.placement;
    for (size_t k = 0; p && k < p->n_eps; k++)
        printf("    profile: %-24s %4lld nodes %10.3f ms\n", p->eps[k].ep, (long long)p->eps[k].nodes,
               p->eps[k].us / 1000.0);
    if (c->reason) printf("    %s\n", c->reason);
    print_advice(&c->dispatch);
}

void oq_cli_print_verdict_table(const oq_validate_summary *s, const char *outdir)
{
    printf("%-34s %-8s %7s %-10s %10s %10s %10s\n", "configuration", "status", "batches", "worst out",
           "max|err|", "first(s)", "median(s)");
    int counts[4] = {0};
    for (size_t i = 0; i < s->n_configs; i++) {
        config_row(&s->configs[i]);
        oq_verdict v = s->configs[i].status;
        counts[v == OQ_VERDICT_PASSED ? 0 : v == OQ_VERDICT_SKIPPED ? 2 : 1]++;
    }
    if (s->n_plots)
        printf("\nplots: %zu files in %s/plots/ (error distributions, runtime against valid size)", s->n_plots, outdir);
    if (s->plot_error) printf("\nplots: not drawn: %s", s->plot_error);
    printf("\nverdict: %s (%d passed, %d failed, %d skipped); details in %s/summary.json\n",
           counts[1] ? "FAILED" : "PASSED", counts[0], counts[1], counts[2], outdir);
}

/* A file as written, to stdout. */
static int print_file(const char *path)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
    fclose(f);
    return 0;
}

int oq_cli_glob_inputs(const char *cmd, const oq_cli_list *patterns, glob_t *g, int *globbed)
{
    for (size_t i = 0; i < patterns->n; i++) {
        if (glob(patterns->v[i], (*globbed ? GLOB_APPEND : 0) | GLOB_NOCHECK, NULL, g)) {
            fprintf(stderr, "ortqual %s: --inputs '%s': cannot expand\n", cmd, patterns->v[i]);
            return -1;
        }
        *globbed = 1;
    }
    return 0;
}

void oq_cli_default_outdir(char *buf, size_t n, const char *prefix)
{
    char stamp[64];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, n, "ortqual-out/%s%s", prefix, stamp);
}

int oq_cli_run_validation(const char *cmd, oq_validate_opts *o, const struct oq_cli_runtime *cr,
                          const char *self, int json)
{
    o->self_exe = self;
    /* the non-skippable mode can be switched on from the environment too (the library reads none) */
    const char *require = getenv("ORTQUAL_REQUIRE_DISPATCH");
    if (require && !strcmp(require, "1")) o->require_dispatch = 1;
    o->progress = oq_cli_progress_line;
    o->ort_lib = cr->ort_lib;
    o->n_ep_libs = cr->n_ep_libs;
    o->ep_lib_names = (const char *const *)cr->ep_lib_names;
    o->ep_lib_paths = (const char *const *)cr->ep_lib_paths;
    o->n_ep_options = cr->n_options;
    o->ep_option_keys = (const char *const *)cr->option_keys;
    o->ep_option_values = (const char *const *)cr->option_values;
    oq_validate_summary *summary = NULL;
    oq_err e = {0};
    oq_status st = oq_validate_run(o, &summary, &e);
    if (st) {
        fprintf(stderr, "ortqual %s: %s\n", cmd, e.msg);
        return st == OQ_ERR_RUNTIME || st == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
    }
    int rc = summary->exit_status ? OQ_EXIT_FAIL : OQ_EXIT_OK;
    char dir[4096], path[4200];
    /* a shard's files are in DIR/shards/I; the prepare step's answer is DIR/shards/plan.json */
    if (o->shard.count && !o->shard.prepare) snprintf(dir, sizeof dir, "%s/shards/%d", o->outdir, (int)o->shard.index);
    else snprintf(dir, sizeof dir, "%s", o->outdir);
    snprintf(path, sizeof path, o->shard.prepare ? "%s/shards/plan.json" : "%s/summary.json", dir);
    if (json) {
        if (print_file(path)) rc = OQ_EXIT_RUNTIME;
    } else if (o->shard.prepare) {
        if (oq_cli_print_prepared(o->outdir)) rc = OQ_EXIT_RUNTIME;
    } else {
        oq_cli_print_verdict_table(summary, dir);
        if (o->shard.count)
            printf("shard %d of %d done; when all have ended: ortqual merge %s\n", (int)o->shard.index,
                   (int)o->shard.count, o->outdir);
    }
    oq_validate_summary_free(summary);
    return rc;
}
