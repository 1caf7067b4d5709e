/* ortqual merge: the shards of one validation (or replay) plan into one verdict. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ortqual/fileio.h"
#include "ortqual/validate.h"

const char cmd_merge_summary[] = "merge the shards of a sharded validation into one summary and verdict";

static const char head[] =
"usage: ortqual merge [--json] [--no-plots] [--allow-skip] [--junit FILE] DIR\n"
"\n"
"Combines DIR/shards/0 .. DIR/shards/N-1 (written by 'validate --shard I/N' or 'replay --shard I/N',\n"
"usually as the tasks of a SLURM job array from 'ortqual slurm') into DIR/summary.json,\n"
"DIR/validate.csv, DIR/plots/ and DIR/report.html. The verdict and the per-batch figures are those one unsharded\n"
"run of the same plan would give; each shard's host and timing stay in the summary.\n"
"\n"
"A shard that never started, stopped with an error or was killed (no summary) is named with its\n"
"index and what is known of it, and fails the merge: a missing shard is never a pass. A shard\n"
"that reported and failed on its own is named beside it (the reasons say both, and to rerun both).\n"
"Shards of another plan (other options or inputs than DIR/shards/plan.json) are refused, and so is\n"
"a shard summary that contradicts itself or the plan (an output of the plan's model left out, an\n"
"'interrupted' record beside another verdict, no ONNX Runtime hash where another shard has one,\n"
"an output's inf_matched other than its batch records' count).\n"
"A merge that stops without writing (refused, or failed) removes an earlier merge's\n"
"DIR/summary.json, report.html, validate.csv and plots/ figures, and says so: they would\n"
"still give the verdict of shards just refused; --junit FILE then holds one error case saying why.\n"
"SIGINT, SIGTERM and SIGHUP end the merge with its work files (DIR/shards/.merge/) and its lock removed.\n";

static const char foot[] =
"\n"
"exit status: 0 all passed, 1 a configuration failed, a shard did not report or nothing under\n"
"             test was compared, 2 not a sharded directory or shards of different plans,\n"
"             3 runtime error (a configuration could not run, or an output cannot be written).\n"
"example: ortqual merge ortqual-out/matrix\n";

static int print(const char *dir, const oq_validate_summary *s, int json, int rc)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    const oq_merge_info *m = &s->merged;
    if (json) {
        FILE *f = fopen(path, "r");
        int c;
        if (!f) {
            oq_cli_error_in("merge", "cannot read %s", oq_cli_shown(path));
            return OQ_EXIT_RUNTIME;
        }
        while ((c = fgetc(f)) != EOF) putchar(c);
        fclose(f);
        oq_cli_json_answered();
    } else {
        printf("merged %d shards of plan %.16s (%zu did not report)\n", (int)m->count, s->plan_hash, m->n_problems);
        oq_cli_print_verdict_table(s, dir);
    }
    for (size_t i = 0; i < m->n_problems; i++)
        oq_cli_error_in("merge", "shard %d of %d %s: %s", (int)m->problems[i].index, (int)m->count,
                oq_shard_state_name(m->problems[i].state), oq_cli_shown(m->problems[i].detail));
    /* a shard that reported and did not pass fails the merge as well: the lines above alone
     * read as "rerun these", and a merge after that failed again on this one */
    for (size_t i = 0; m->n_problems && i < m->n_reported; i++)
        if (m->reported[i].verdict != OQ_RUN_PASSED)
            oq_cli_error_in("merge", "shard %d of %d reported verdict %s (%s/shards/%d/summary.json says why): it "
                            "fails this merge too; rerun it as well as the shards that did not report",
                            (int)m->reported[i].index, (int)m->count, oq_run_verdict_name(m->reported[i].verdict),
                            oq_cli_shown(dir), (int)m->reported[i].index);
    return rc ? rc : s->exit_status;
}

/* The merge of DIR, held by this command. */
static int merge(const char *dir, int json, int plots, int allow_skip, const char *junit)
{
    oq_validate_summary *s;
    oq_err e = {0};
    int rc;
    /* before the merge: a --junit that cannot be written would otherwise fail after DIR's
     * summary and report were written; refused as the merge refuses, the earlier merge's
     * outputs removed (oq_validate_merge_drop) */
    if (junit && oq_check_output_path(junit, 1, &e)) {
        oq_err_prefix(&e, "--junit: ");
        oq_validate_merge_drop(dir, &e);
        oq_cli_error_in("merge", "%s", e.msg);
        return oq_cli_exit_of(e.status);
    }
    if (junit && (rc = oq_cli_junit_in_run("merge", junit, dir))) return rc; /* DIR left as it is */
    oq_status st = oq_validate_merge(dir, plots, allow_skip, &s, &e);
    if (st) {
        rc = st == OQ_ERR_NOT_FOUND || st == OQ_ERR_FORMAT || st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
        return oq_cli_junit_refused("merge", junit, st, e.msg, oq_cli_refuse("merge", json, st, e.msg, rc));
    }
    rc = print(dir, s, json, oq_cli_write_reports("merge", dir, 0, junit));
    oq_validate_summary_free(s);
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    int json = 0, plots = 1, allow_skip = 0, first;
    const char *junit = NULL;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_FLAG("json", &json, "print the merged summary.json instead of the table"),
        OQ_OPT_SET("no-plots", &plots, 0, "skip DIR/plots/"),
        OQ_OPT_FLAG("allow-skip", &allow_skip,
                    "a merge in which no configuration under test ran and was\n"
                    "compared exits 0 (as validate --allow-skip)"),
        OQ_OPT_STRING("junit", "FILE", &junit, "also write JUnit XML of the merged summary"),
        OQ_OPT_END};
    const oq_cli_command c = {"merge", head, foot, opts, OQ_CLI_OPERANDS};
    int rc = oq_cli_parse(&c, argc, argv, &first);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (first != argc - 1) {
        oq_cli_error_in("merge", "want one directory (see 'ortqual merge --help')");
        return OQ_EXIT_USAGE;
    }
    oq_outdir_lock *lock = NULL;
    rc = oq_cli_dir_lock("merge", argv[first], junit, &lock);
    if (!rc) rc = merge(argv[first], json, plots, allow_skip, junit);
    oq_outdir_lock_free(lock);
    return rc;
}
