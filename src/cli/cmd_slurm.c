/* ortqual slurm: prepare a validation matrix once, submit its shards as a SLURM job array
 * and the merge after them. */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_signals.h"
#include "ortqual/proc.h"
#include "ortqual/slurm.h"
#include "ortqual/validate.h"

const char cmd_slurm_summary[] = "run a validation matrix as a SLURM job array of shards plus a merge job";

static const char head[] =
"usage: ortqual slurm --shards N --outdir DIR [options] -- validate|replay [their options]\n"
"\n"
"Prepares the matrix once, here (the batches are written to DIR and checked against the mask\n"
"contract before any node is asked for; DIR/shards/plan.json records the plan), then writes\n"
"DIR/slurm/shards.sbatch, a job array whose task I runs shard I (SLURM_ARRAY_TASK_ID -> --shard I/N),\n"
"and DIR/slurm/merge.sbatch, which runs 'ortqual merge DIR' once every task has ended in any state\n"
"(--dependency=afterany), and submits both. Prints the job ids. The verdict is DIR/summary.json;\n"
"a shard that was killed or never ran is named there and fails it. DIR must be on a file system\n"
"every node sees; the tasks start in this directory with this environment (--export=ALL).\n"
"The command's verdict options go to the merge job, whose verdict is the matrix's: --junit FILE\n"
"is written by the merge only (never by a shard), --allow-skip and --no-plots are the merge's too.\n"
"SIGINT, SIGTERM and SIGHUP during the prepare step are passed on to it: it removes what it\n"
"wrote (unless its plan was whole already: then said), and slurm exits 128 + the signal,\n"
"nothing submitted; a second signal ends it at once (the step killed, its files left as after\n"
"SIGKILL, nothing submitted).\n";

static const char foot[] =
"\n"
"exit status: 0 submitted (or written), 2 usage or input error (nothing submitted), 3 sbatch failed,\n"
"             128 + N interrupted by signal N while preparing (nothing submitted).\n"
"example:\n"
"  ortqual slurm --shards 50 --partition gpu --gpus-per-task 1 --time 02:00:00 --outdir /scratch/m1 -- \\\n"
"      validate --configs ref:encoder:fp64,cuda:attention24:fp16:flash --num-events 1000000 --batch-size 256\n"
"  squeue -j <array>,<merge>      # then /scratch/m1/summary.json\n"
"  sbatch --array=7 /scratch/m1/slurm/shards.sbatch && ortqual merge /scratch/m1   # rerun shard 7\n";

/* Options of the command after "--" that belong to the merged verdict, not to a shard's. */
#define MERGE_OPTS 4

struct slurm_args {
    oq_slurm_job job;
    const char *outdir;
    oq_cli_list extra;
    int no_submit, json, force;
    const char *junit;                  /* the merge's --junit, taken from the command */
    const char *merge_argv[MERGE_OPTS]; /* --allow-skip, --no-plots, --junit FILE */
    char **shard_argv;                  /* the command without --junit */
};

static int set_by(const oq_opt *o, const char *arg)
{
    oq_slurm_job *j = o->ctx;
    int by = oq_shard_by_parse(arg);
    if (by < 0) {
        oq_cli_error_in("slurm", "--shard-by '%s': want batch or config", arg);
        return -1;
    }
    j->by = (oq_shard_by)by;
    return 0;
}

/* Whether argv[i] is option `opt` ("--opt" or "--opt=VALUE"). */
static int is_opt(const char *arg, const char *opt)
{
    size_t n = strlen(opt);
    return !strncmp(arg, opt, n) && (arg[n] == 0 || arg[n] == '=');
}

/* The command after "--": validate or replay, without the options slurm sets itself. Its --junit
 * goes to the merge job only: each shard would write one shard's cases over the others', and a
 * shard that never ran leaves the last one's green file while the merge fails. --allow-skip and
 * --no-plots go to the merge too (the shards keep them), so that the merged verdict is the one
 * an unsharded run gives. */
#define JUNIT "--junit"
static int split_command(struct slurm_args *a, int argc, char **argv)
{
    static const char *const owned[] = {"--outdir", "--shard", "--prepare-shards", "--shard-by"};
    if (argc < 1 || (strcmp(argv[0], "validate") && strcmp(argv[0], "replay"))) {
        oq_cli_error_in("slurm", "after '--' comes 'validate' or 'replay' and its options (see --help)");
        return -1;
    }
    if (!(a->shard_argv = calloc((size_t)argc + 1, sizeof *a->shard_argv))) {
        oq_cli_error_in("slurm", "out of memory");
        return -1;
    }
    int k = 0, m = 0, allow_skip = 0, no_plots = 0;
    a->shard_argv[k++] = argv[0];
    for (int i = 1; i < argc; i++) {
        for (size_t o = 0; o < sizeof owned / sizeof *owned; o++)
            if (is_opt(argv[i], owned[o])) {
                oq_cli_error_in("slurm", "%s belongs to slurm, not to %s (give --outdir, --shards, --shard-by "
                                "before '--')", owned[o], argv[0]);
                return -1;
            }
        if (is_opt(argv[i], JUNIT)) {
            const char *eq = argv[i] + sizeof JUNIT - 1;
            a->junit = *eq == '=' ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!a->junit || !*a->junit) {
                oq_cli_error_in("slurm", "--junit after '--' wants a FILE (the merge job writes it)");
                return -1;
            }
            continue;
        }
        allow_skip |= !strcmp(argv[i], "--allow-skip");
        no_plots |= !strcmp(argv[i], "--no-plots");
        a->shard_argv[k++] = argv[i];
    }
    if (allow_skip) a->merge_argv[m++] = "--allow-skip";
    if (no_plots) a->merge_argv[m++] = "--no-plots";
    if (a->junit) a->merge_argv[m++] = "--junit", a->merge_argv[m++] = a->junit;
    a->job.argc = k;
    a->job.argv = (const char *const *)a->shard_argv;
    a->job.merge_argc = m;
    a->job.merge_argv = a->merge_argv;
    return 0;
}

/* An absolute path for `p` (made from the current directory; it may not exist yet). */
static char *absolute(const char *p, const char *cwd)
{
    size_t n = strlen(cwd) + strlen(p) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s%s%s", *p == '/' ? "" : cwd, *p == '/' ? "" : "/", p);
    return out;
}

/* The prepare step, as `ortqual <command> ... --outdir DIR --prepare-shards N --shard-by B` in a
 * child: exactly what the shards will run, with their option parsing. Its errors and progress
 * (stderr) are ours; its answer (stdout) says what to run by hand, which we do instead. */
static int prepare(const struct slurm_args *a)
{
    const oq_slurm_job *j = &a->job;
    char n[16];
    snprintf(n, sizeof n, "%d", (int)j->shards);
    const char *argv[256];
    int k = 0;
    argv[k++] = j->self_exe;
    for (int i = 0; i < j->argc && k < 240; i++) argv[k++] = j->argv[i];
    if (a->force) argv[k++] = "--force";
    const char *tail[] = {"--outdir", j->outdir, "--prepare-shards", n, "--shard-by", oq_shard_by_name(j->by), NULL};
    memcpy(argv + k, tail, sizeof tail);
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 1), close(null);
    oq_proc_result r;
    oq_err e = {0};
    /* passed on to the step's group, whose cleanup then runs (a child left to its parent-death
     * SIGKILL would leave its batches, .work/ and the lock) */
    oq_cli_signals sigs;
    const oq_proc_watch w = {.on_start = oq_cli_signals_started, .stop = oq_cli_signal_flag()};
    oq_cli_signals_catch(&sigs);
    oq_status st = oq_proc_run_watch((char *const *)argv, 0, 1024, 1, &w, &r, &e);
    oq_cli_signals_release(&sigs);
    int caught = oq_cli_signal_caught();
    if (saved >= 0) dup2(saved, 1), close(saved);
    if (st) {
        oq_cli_error_in("slurm", "cannot run the prepare step: %s", e.msg);
        return caught ? 128 + caught : OQ_EXIT_RUNTIME;
    }
    int rc = r.signaled || r.timed_out ? OQ_EXIT_RUNTIME : r.exit_code;
    char how[128];
    if (caught) { /* a step that ended 0 had published its plan whole before the signal reached it */
        char stands[4200] = "";
        if (!rc) snprintf(stands, sizeof stands, ": its plan %s/shards/plan.json stands", oq_cli_shown(j->outdir));
        oq_cli_error_in("slurm", "interrupted by signal %d (%s), passed on to the prepare step (it ended with "
                        "%s%s); nothing submitted", caught, strsignal(caught), oq_proc_describe(&r, how, sizeof how),
                        stands);
        rc = 128 + caught;
    } else if (rc) {
        oq_cli_error_in("slurm", "the prepare step ended with %s; nothing submitted",
                oq_proc_describe(&r, how, sizeof how));
    }
    oq_proc_result_clear(&r);
    return rc;
}

static void print_json(const struct slurm_args *a, const oq_shard_plan *p, const oq_slurm_scripts *s,
                       const oq_slurm_ids *ids)
{
    const oq_slurm_job *j = &a->job;
    /* the folder is the user's and need not be UTF-8, nor the scripts' paths in it */
    json_t *o = json_pack("{s:s, s:o, s:s, s:i, s:s, s:{s:o, s:o}, s:s?, s:s?}", "schema", OQ_CLI_SLURM_SCHEMA,
                          "outdir", oq_cli_json_text(j->outdir),
                          "plan_hash", p->hash, "shards", j->shards, "shard_by", oq_shard_by_name(j->by), "scripts",
                          "shards", oq_cli_json_text(s->shards), "merge", oq_cli_json_text(s->merge),
                          "array_job_id", ids ? ids->array : NULL, "merge_job_id", ids ? ids->merge : NULL);
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    putchar('\n');
    oq_cli_json_answered();
    json_decref(o);
}

static int print_result(const struct slurm_args *a, const oq_slurm_scripts *s, const oq_slurm_ids *ids)
{
    const oq_slurm_job *j = &a->job;
    oq_shard_plan p;
    oq_err e = {0};
    if (oq_shard_plan_read(j->outdir, &p, &e)) {
        oq_cli_error_in("slurm", "%s", e.msg);
        return OQ_EXIT_RUNTIME;
    }
    if (a->json) {
        print_json(a, &p, s, ids);
        oq_shard_plan_clear(&p);
        return OQ_EXIT_OK;
    }
    printf("prepared: %zu batches in %d shards by %s, plan %.16s (%s/shards/plan.json)\n", p.n_batches,
           (int)j->shards, oq_shard_by_name(j->by), p.hash, oq_cli_shown(j->outdir));
    if (!ids) { /* a command to paste: its paths quoted for the shell */
        printf("scripts: %s, %s (nothing submitted)\nsubmit with:\n  array=$(sbatch --parsable ", oq_cli_shown(s->shards),
               oq_cli_shown(s->merge));
        oq_slurm_quote(stdout, s->shards);
        fputs(") && sbatch --dependency=afterany:$array ", stdout);
        oq_slurm_quote(stdout, s->merge);
        putchar('\n');
    } else {
        printf("scripts: %s, %s\n"
               "submitted: array job %s (shards 0-%d, logs %s/slurm/shard-%s_<I>.out)\n"
               "           merge job %s (after the array ends, log %s/slurm/merge-%s.out)\n"
               "follow with: squeue -j %s,%s; the verdict: %s/summary.json\n",
               oq_cli_shown(s->shards), oq_cli_shown(s->merge), ids->array, (int)j->shards - 1, oq_cli_shown(j->outdir),
               ids->array, ids->merge, oq_cli_shown(j->outdir), ids->merge, ids->array, ids->merge, oq_cli_shown(j->outdir));
    }
    oq_shard_plan_clear(&p);
    return OQ_EXIT_OK;
}

static int run(struct slurm_args *a)
{
    oq_err e = {0};
    /* a value the scripts cannot take is refused before the prepare step: found after it, the
     * corrected command would find the plan prepared already */
    oq_status st = oq_slurm_check(&a->job, &e);
    if (st) {
        oq_cli_error_in("slurm", "%s", e.msg);
        return st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    /* the merge's --junit, checked before the prepare step as the merge would check it */
    int rc = a->junit ? oq_cli_junit_in_run("slurm", a->junit, a->job.outdir) : OQ_EXIT_OK;
    /* the outdir as given, as validate compares it: --junit DIR/junit.xml is in the DIR the prepare
     * step makes (against the absolute DIR its folder was "missing") */
    if (!rc) rc = oq_cli_output_ready("slurm", "--junit", a->junit, a->outdir);
    if (!rc) rc = prepare(a);
    if (rc) return rc;
    oq_slurm_scripts s;
    oq_slurm_ids ids;
    st = oq_slurm_write(&a->job, &s, &e);
    if (!st && !a->no_submit) st = oq_slurm_submit(&a->job, &s, &ids, &e);
    if (st) {
        oq_cli_error_in("slurm", "%s", e.msg);
        return st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    return print_result(a, &s, a->no_submit ? NULL : &ids);
}

static int parse(struct slurm_args *a, int argc, char **argv, int *first)
{
    oq_slurm_job *j = &a->job;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("the split:"),
        OQ_OPT_NUMBER("shards", "N", &j->shards, 1, 100000, "shards (array tasks 0..N-1)"),
        OQ_OPT_CALLBACK("shard-by", "batch|config", set_by, j,
                        "split by batches (default; each batch's reference computed once)\n"
                        "or by configurations (each task runs the reference and its share)"),
        OQ_OPT_STRING("outdir", "DIR", &a->outdir, "the run's directory (not given to the command after --)"),
        OQ_OPT_GROUP("sbatch options of the shard tasks (partition, account, qos: the merge too):"),
        OQ_OPT_STRING("partition", "P", &j->partition, "partition"),
        OQ_OPT_STRING("time", "T", &j->time, "time limit per task, e.g. 02:00:00"),
        OQ_OPT_STRING("gpus-per-task", "G", &j->gpus_per_task, "GPUs per task"),
        OQ_OPT_STRING("cpus-per-task", "C", &j->cpus_per_task, "CPUs per task"),
        OQ_OPT_STRING("mem", "M", &j->mem, "memory per task, e.g. 8G"),
        OQ_OPT_STRING("account", "A", &j->account, "account"),
        OQ_OPT_STRING("qos", "Q", &j->qos, "quality of service"),
        OQ_OPT_STRING("merge-partition", "P", &j->merge_partition, "the merge job's partition (default: --partition)"),
        OQ_OPT_STRING("merge-mem", "M", &j->merge_mem,
                      "the merge job's memory (it reads every shard's summary; see\ndocs/scale-out.md)"),
        OQ_OPT_LIST("sbatch-arg", "ARG", &a->extra,
                    "another sbatch option for both jobs, e.g. --sbatch-arg=--constraint=h200;\nrepeatable"),
        OQ_OPT_STRING("job-name", "NAME", &j->job_name, "jobs NAME-shards and NAME-merge (ortqual)"),
        OQ_OPT_STRING("sbatch", "PATH", &j->sbatch, "the sbatch program (default: sbatch in PATH)"),
        OQ_OPT_FLAG("force", &a->force,
                    "prepare again into a DIR prepared (or interrupted) before; the\nprepare step's --force, not the shards'"),
        OQ_OPT_GROUP("output:"),
        OQ_OPT_FLAG("no-submit", &a->no_submit, "prepare and write the scripts, print how to submit them, submit nothing"),
        OQ_OPT_FLAG("json", &a->json, "print {schema, outdir, plan_hash, shards, shard_by, scripts,\narray_job_id, merge_job_id}"),
        OQ_OPT_END};
    const oq_cli_command c = {"slurm", head, foot, opts, OQ_CLI_OPERANDS_LAST};
    int rc = oq_cli_parse(&c, argc, argv, first);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (!j->shards || !a->outdir) {
        oq_cli_error_in("slurm", "--shards and --outdir are required (see 'ortqual slurm --help')");
        return OQ_EXIT_USAGE;
    }
    if (*first < 2 || *first > argc || strcmp(argv[*first - 1], "--") != 0) {
        oq_cli_error_in("slurm", "want '-- validate|replay [options]' after the slurm options");
        return OQ_EXIT_USAGE;
    }
    return split_command(a, argc - *first, argv + *first) ? OQ_EXIT_USAGE : -1;
}

int cmd_slurm(int argc, char **argv)
{
    static struct slurm_args a;
    memset(&a, 0, sizeof a);
    int first = argc;
    int rc = parse(&a, argc, argv, &first);
    if (rc >= 0) {
        oq_cli_list_clear(&a.extra);
        free(a.shard_argv);
        return rc;
    }
    char *cwd = getcwd(NULL, 0), *self = realpath("/proc/self/exe", NULL), *outdir = cwd ? absolute(a.outdir, cwd) : NULL;
    a.job.outdir = outdir;
    a.job.workdir = cwd;
    a.job.self_exe = self;
    a.job.extra = a.extra.v;
    a.job.n_extra = a.extra.n;
    rc = cwd && self && outdir ? run(&a) : OQ_EXIT_RUNTIME;
    free(cwd);
    free(self);
    free(outdir);
    free(a.shard_argv);
    oq_cli_list_clear(&a.extra);
    return rc;
}
