/* ortqual merge: the shards of one validation (or replay) plan into one verdict. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ortqual/validate.h"

const char cmd_merge_summary[] = "merge the shards of a sharded validation into one summary and verdict";

static void usage(FILE *fp)
{
    fprintf(fp,
"usage: ortqual merge [--json] [--no-plots] DIR\n"
"\n"
"Combines DIR/shards/0 .. DIR/shards/N-1 (written by 'validate --shard I/N' or 'replay --shard I/N',\n"
"usually as the tasks of a SLURM job array from 'ortqual slurm') into DIR/summary.json,\n"
"DIR/validate.csv and DIR/plots/. The verdict and the per-batch figures are those one unsharded\n"
"run of the same plan would give; each shard's host and timing stay in the summary.\n"
"\n"
"A shard that never started, stopped with an error or was killed (no summary) is named with its\n"
"index and what is known of it, and fails the merge: a missing shard is never a pass. Shards of\n"
"another plan (other options or inputs than DIR/shards/plan.json) are refused.\n"
"\n"
"options:\n"
"  --json          print the merged summary.json instead of the table\n"
"  --no-plots      skip DIR/plots/\n"
"\n"
"exit status: 0 all passed, 1 a configuration failed or a shard did not report,\n"
"             2 not a sharded directory or shards of different plans, 3 runtime error.\n"
"example: ortqual merge ortqual-out/matrix\n");
}

static int print(const char *dir, const oq_merge_result *r, int json)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_error_t je;
    json_t *s = json_load_file(path, 0, &je);
    if (!s) {
        fprintf(stderr, "ortqual merge: %s: %s\n", path, je.text);
        return OQ_EXIT_RUNTIME;
    }
    if (json) {
        json_dumpf(s, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        putchar('\n');
    } else {
        printf("merged %d shards of plan %.16s (%zu did not report)\n", (int)r->shards, r->plan_hash, r->n_problems);
        oq_cli_print_verdict_table(s, dir);
    }
    json_decref(s);
    for (size_t i = 0; i < r->n_problems; i++)
        fprintf(stderr, "ortqual merge: shard %d of %d %s: %s\n", (int)r->problems[i].index, (int)r->shards,
                oq_shard_state_name(r->problems[i].state), r->problems[i].detail);
    return r->exit_status ? OQ_EXIT_FAIL : OQ_EXIT_OK;
}

int cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", 0, 0, 'j'}, {"no-plots", 0, 0, 'P'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int json = 0, plots = 1, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (c == 'h') return usage(stdout), OQ_EXIT_OK;
        if (c == 'j') json = 1;
        else if (c == 'P') plots = 0;
        else return OQ_EXIT_USAGE;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "ortqual merge: want one directory (see --help)\n");
        return OQ_EXIT_USAGE;
    }
    const char *dir = argv[optind];
    oq_merge_result r;
    oq_err e = {0};
    oq_status st = oq_validate_merge(dir, plots, &r, &e);
    if (st) {
        fprintf(stderr, "ortqual merge: %s\n", e.msg);
        oq_merge_result_clear(&r);
        return st == OQ_ERR_NOT_FOUND || st == OQ_ERR_FORMAT || st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE
                                                                                           : OQ_EXIT_RUNTIME;
    }
    int rc = print(dir, &r, json);
    oq_merge_result_clear(&r);
    return rc;
}
