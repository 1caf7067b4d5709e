/* Human output shared by validate and replay: progress lines and the verdict table. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ortqual/validate.h"

#include "cli/cli.h"

void oq_cli_progress_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

/* Why a node missed its kernel and what reaches it: the first explanation, as
 * the others (one per node) usually repeat it for the next block. */
static void print_advice(const json_t *advice)
{
    size_t n = json_array_size(advice);
    if (!n) return;
    printf("    advice: %s", json_string_value(json_array_get(advice, 0)));
    if (n > 1) printf(" (%zu more in summary.json)", n - 1);
    putchar('\n');
}

/* The worst output of a configuration across batches, and its timing. */
static void config_row(const json_t *c)
{
    double worst = -1, first = 0, median = 0;
    const char *worst_out = "-";
    size_t i, j;
    json_t *b, *o;
    json_array_foreach(json_object_get(c, "batches"), i, b) {
        first += json_number_value(json_object_get(b, "first_call_s"));
        median += json_number_value(json_object_get(b, "median_s"));
        json_array_foreach(json_object_get(b, "outputs"), j, o) {
            double m = json_number_value(json_object_get(o, "max_abs"));
            if (m > worst) worst = m, worst_out = json_string_value(json_object_get(o, "output"));
        }
    }
    char err_s[32] = "-";
    if (worst >= 0) snprintf(err_s, sizeof err_s, "%.3g", worst);
    size_t nb = json_array_size(json_object_get(c, "batches"));
    printf("%-34s %-8s %7zu %-10s %10s %10.4f %10.4f\n", json_string_value(json_object_get(c, "name")),
           json_string_value(json_object_get(c, "status")), nb, worst_out ? worst_out : "-", err_s,
           first, median);
    const char *ort = json_string_value(json_object_get(json_object_get(c, "onnxruntime"), "version"));
    if (ort) printf("    ONNX Runtime %s (%s)\n", ort, json_string_value(json_object_get(json_object_get(c, "onnxruntime"), "library")));
    size_t k;
    json_t *ep;
    json_array_foreach(json_object_get(json_object_get(c, "placement"), "eps"), k, ep)
        printf("    profile: %-24s %4lld nodes %10.3f ms\n", json_string_value(json_object_get(ep, "ep")),
               (long long)json_integer_value(json_object_get(ep, "nodes")),
               json_number_value(json_object_get(ep, "us")) / 1000.0);
    const char *reason = json_string_value(json_object_get(c, "reason"));
    if (reason) printf("    %s\n", reason);
    print_advice(json_object_get(json_object_get(c, "dispatch"), "advice"));
}

void oq_cli_print_verdict_table(const json_t *summary, const char *outdir)
{
    printf("%-34s %-8s %7s %-10s %10s %10s %10s\n", "configuration", "status", "batches", "worst out",
           "max|err|", "first(s)", "median(s)");
    size_t i;
    json_t *c;
    int counts[4] = {0};
    json_array_foreach(json_object_get(summary, "configs"), i, c) {
        config_row(c);
        const char *s = json_string_value(json_object_get(c, "status"));
        counts[!strcmp(s, "passed") ? 0 : !strcmp(s, "skipped") ? 2 : 1]++;
    }
    size_t nplots = json_array_size(json_object_get(summary, "plots"));
    const char *perr = json_string_value(json_object_get(summary, "plot_error"));
    if (nplots) printf("\nplots: %zu files in %s/plots/ (error distributions, runtime against valid size)", nplots, outdir);
    if (perr) printf("\nplots: not drawn: %s", perr);
    printf("\nverdict: %s (%d passed, %d failed, %d skipped); details in %s/summary.json\n",
           counts[1] ? "FAILED" : "PASSED", counts[0], counts[1], counts[2], outdir);
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
    o->progress = oq_cli_progress_line;
    o->ort_lib = cr->ort_lib;
    o->n_ep_libs = cr->n_ep_libs;
    o->ep_lib_names = (const char *const *)cr->ep_lib_names;
    o->ep_lib_paths = (const char *const *)cr->ep_lib_paths;
    o->n_ep_options = cr->n_options;
    o->ep_option_keys = (const char *const *)cr->option_keys;
    o->ep_option_values = (const char *const *)cr->option_values;
    json_t *summary = NULL;
    int verdict = 0;
    oq_err e = {0};
    oq_status st = oq_validate_run(o, &summary, &verdict, &e);
    if (st) {
        fprintf(stderr, "ortqual %s: %s\n", cmd, e.msg);
        return st == OQ_ERR_RUNTIME || st == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
    }
    if (json) json_dumpf(summary, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER), putchar('\n');
    else if (o->shard.prepare) oq_cli_print_prepared(summary, o->outdir);
    else if (!o->shard.count) oq_cli_print_verdict_table(summary, o->outdir);
    else {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/shards/%d", o->outdir, (int)o->shard.index);
        oq_cli_print_verdict_table(summary, dir);
        printf("shard %d of %d done; when all have ended: ortqual merge %s\n", (int)o->shard.index,
               (int)o->shard.count, o->outdir);
    }
    json_decref(summary);
    return verdict ? OQ_EXIT_FAIL : OQ_EXIT_OK;
}
