/* ortqual slurm: prepare a validation matrix once, submit its shards as a SLURM job array
 * and the merge after them. */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ortqual/proc.h"
#include "ortqual/slurm.h"

const char cmd_slurm_summary[] = "run a validation matrix as a SLURM job array of shards plus a merge job";

static void usage(FILE *fp)
{
    fprintf(fp,
"usage: ortqual slurm --shards N --outdir DIR [options] -- validate|replay [their options]\n"
"\n"
"Prepares the matrix once, here (the batches are written to DIR and checked against the mask\n"
"contract before any node is asked for; DIR/shards/plan.json records the plan), then writes\n"
"DIR/slurm/shards.sbatch, a job array whose task I runs shard I (SLURM_ARRAY_TASK_ID -> --shard I/N),\n"
"and DIR/slurm/merge.sbatch, which runs 'ortqual merge DIR' once every task has ended in any state\n"
"(--dependency=afterany), and submits both. Prints the job ids. The verdict is DIR/summary.json;\n"
"a shard that was killed or never ran is named there and fails it. DIR must be on a file system\n"
"every node sees; the tasks start in this directory with this environment (--export=ALL).\n"
"\n"
"options:\n"
"  --shards N              shards (array tasks 0..N-1)\n"
"  --shard-by batch|config split by batches (default; each batch's reference computed once) or by\n"
"                          configurations (each task runs the reference and its share of the others)\n"
"  --outdir DIR            the run's directory (not given to the command after --)\n"
"  --partition P --time T --gpus-per-task G --cpus-per-task C --mem M --account A --qos Q\n"
"                          sbatch options of the shard tasks (partition, account, qos: the merge too)\n"
"  --merge-partition P     the merge job's partition (default: --partition)\n"
"  --merge-mem M           the merge job's memory (it reads every shard's summary; see docs/scale-out.md)\n"
"  --sbatch-arg ARG        another sbatch option for both jobs, e.g. --sbatch-arg=--constraint=h200\n"
"  --job-name NAME         jobs NAME-shards and NAME-merge (ortqual)\n"
"  --sbatch PATH           the sbatch program (default: sbatch in PATH)\n"
"  --no-submit             prepare and write the scripts, print how to submit them, submit nothing\n"
"  --json                  print {outdir, plan_hash, shards, shard_by, scripts, array_job_id, merge_job_id}\n"
"\n"
"exit status: 0 submitted (or written), 2 usage or input error (nothing submitted), 3 sbatch failed.\n"
"example:\n"
"  ortqual slurm --shards 50 --partition gpu --gpus-per-task 1 --time 02:00:00 --outdir /scratch/m1 -- \\\n"
"      validate --configs ref:encoder:fp64,cuda:attention24:fp16:flash --num-events 1000000 --batch-size 256\n"
"  squeue -j <array>,<merge>      # then /scratch/m1/summary.json\n"
"  sbatch --array=7 /scratch/m1/slurm/shards.sbatch && ortqual merge /scratch/m1   # rerun shard 7\n");
}

enum {
    OPT_SHARDS = 0x400, OPT_BY, OPT_OUTDIR, OPT_PARTITION, OPT_TIME, OPT_GPUS, OPT_CPUS, OPT_MEM, OPT_ACCOUNT,
    OPT_QOS, OPT_MERGE_PARTITION, OPT_MERGE_MEM, OPT_SBATCH_ARG, OPT_JOB_NAME, OPT_SBATCH, OPT_NO_SUBMIT, OPT_JSON
};

static const struct option longopts[] = {
    {"shards", 1, 0, OPT_SHARDS}, {"shard-by", 1, 0, OPT_BY}, {"outdir", 1, 0, OPT_OUTDIR},
    {"partition", 1, 0, OPT_PARTITION}, {"time", 1, 0, OPT_TIME}, {"gpus-per-task", 1, 0, OPT_GPUS},
    {"cpus-per-task", 1, 0, OPT_CPUS}, {"mem", 1, 0, OPT_MEM}, {"account", 1, 0, OPT_ACCOUNT},
    {"qos", 1, 0, OPT_QOS}, {"merge-partition", 1, 0, OPT_MERGE_PARTITION}, {"merge-mem", 1, 0, OPT_MERGE_MEM},
    {"sbatch-arg", 1, 0, OPT_SBATCH_ARG}, {"job-name", 1, 0, OPT_JOB_NAME}, {"sbatch", 1, 0, OPT_SBATCH},
    {"no-submit", 0, 0, OPT_NO_SUBMIT}, {"json", 0, 0, OPT_JSON}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};

struct slurm_args {
    oq_slurm_job job;
    const char *outdir, *extra[64];
    int no_submit, json;
};

static int take_opt(struct slurm_args *a, int c, const char *arg)
{
    oq_slurm_job *j = &a->job;
    int64_t n;
    switch (c) {
    case OPT_SHARDS:
        if (oq_cli_parse_int("slurm", "--shards", arg, 1, 100000, &n)) return -1;
        j->shards = (int32_t)n;
        return 0;
    case OPT_BY: {
        int by = oq_shard_by_parse(arg);
        if (by < 0) fprintf(stderr, "ortqual slurm: --shard-by '%s': want batch or config\n", arg);
        j->by = (oq_shard_by)(by < 0 ? 0 : by);
        return by < 0 ? -1 : 0;
    }
    case OPT_OUTDIR: a->outdir = arg; return 0;
    case OPT_PARTITION: j->partition = arg; return 0;
    case OPT_TIME: j->time = arg; return 0;
    case OPT_GPUS: j->gpus_per_task = arg; return 0;
    case OPT_CPUS: j->cpus_per_task = arg; return 0;
    case OPT_MEM: j->mem = arg; return 0;
    case OPT_ACCOUNT: j->account = arg; return 0;
    case OPT_QOS: j->qos = arg; return 0;
    case OPT_MERGE_PARTITION: j->merge_partition = arg; return 0;
    case OPT_MERGE_MEM: j->merge_mem = arg; return 0;
    case OPT_SBATCH_ARG:
        if (j->n_extra == sizeof a->extra / sizeof *a->extra) return -1;
        a->extra[j->n_extra++] = arg;
        return 0;
    case OPT_JOB_NAME: j->job_name = arg; return 0;
    case OPT_SBATCH: j->sbatch = arg; return 0;
    case OPT_NO_SUBMIT: a->no_submit = 1; return 0;
    case OPT_JSON: a->json = 1; return 0;
    }
    return -1;
}

/* The command after "--": validate or replay, without the options slurm sets itself. */
static int check_command(int argc, char **argv)
{
    static const char *const owned[] = {"--outdir", "--shard", "--prepare-shards", "--shard-by"};
    if (argc < 1 || (strcmp(argv[0], "validate") && strcmp(argv[0], "replay"))) {
        fprintf(stderr, "ortqual slurm: after '--' comes 'validate' or 'replay' and its options (see --help)\n");
        return -1;
    }
    for (int i = 1; i < argc; i++)
        for (size_t k = 0; k < sizeof owned / sizeof *owned; k++) {
            size_t n = strlen(owned[k]);
            if (!strncmp(argv[i], owned[k], n) && (argv[i][n] == 0 || argv[i][n] == '=')) {
                fprintf(stderr, "ortqual slurm: %s belongs to slurm, not to %s (give --outdir, --shards, --shard-by "
                                "before '--')\n", owned[k], argv[0]);
                return -1;
            }
        }
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
    const char *tail[] = {"--outdir", j->outdir, "--prepare-shards", n, "--shard-by", oq_shard_by_name(j->by), NULL};
    memcpy(argv + k, tail, sizeof tail);
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 1), close(null);
    oq_proc_result r;
    oq_err e = {0};
    oq_status st = oq_proc_run((char *const *)argv, 0, 1024, 1, &r, &e);
    if (saved >= 0) dup2(saved, 1), close(saved);
    if (st) {
        fprintf(stderr, "ortqual slurm: cannot run the prepare step: %s\n", e.msg);
        return OQ_EXIT_RUNTIME;
    }
    int rc = r.signaled || r.timed_out ? OQ_EXIT_RUNTIME : r.exit_code;
    char how[128];
    if (rc) fprintf(stderr, "ortqual slurm: the prepare step ended with %s; nothing submitted\n", oq_proc_describe(&r, how, sizeof how));
    oq_proc_result_clear(&r);
    return rc;
}

static void print_result(const struct slurm_args *a, const oq_slurm_scripts *s, const oq_slurm_ids *ids)
{
    const oq_slurm_job *j = &a->job;
    char path[4200];
    snprintf(path, sizeof path, "%s/shards/plan.json", j->outdir);
    json_error_t je;
    json_t *plan = json_load_file(path, 0, &je);
    const char *hash = json_string_value(json_object_get(json_object_get(plan, "plan"), "hash"));
    if (a->json) {
        json_t *o = json_pack("{s:s, s:s?, s:i, s:s, s:{s:s, s:s}, s:s?, s:s?}", "outdir", j->outdir, "plan_hash", hash,
                              "shards", j->shards, "shard_by", oq_shard_by_name(j->by), "scripts", "shards", s->shards,
                              "merge", s->merge, "array_job_id", ids ? ids->array : NULL, "merge_job_id",
                              ids ? ids->merge : NULL);
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        putchar('\n');
        json_decref(o);
        json_decref(plan);
        return;
    }
    printf("prepared: %zu batches in %d shards by %s, plan %.16s (%s)\n",
           json_array_size(json_object_get(plan, "batches")), (int)j->shards, oq_shard_by_name(j->by),
           hash ? hash : "?", path);
    if (!ids) {
        printf("scripts: %s, %s (nothing submitted)\nsubmit with:\n"
               "  array=$(sbatch --parsable %s) && sbatch --dependency=afterany:$array %s\n",
               s->shards, s->merge, s->shards, s->merge);
    } else {
        printf("scripts: %s, %s\n"
               "submitted: array job %s (shards 0-%d, logs %s/slurm/shard-%s_<I>.out)\n"
               "           merge job %s (after the array ends, log %s/slurm/merge-%s.out)\n"
               "follow with: squeue -j %s,%s; the verdict: %s/summary.json\n",
               s->shards, s->merge, ids->array, (int)j->shards - 1, j->outdir, ids->array, ids->merge, j->outdir,
               ids->merge, ids->array, ids->merge, j->outdir);
    }
    json_decref(plan);
}

static int run(struct slurm_args *a)
{
    int rc = prepare(a);
    if (rc) return rc;
    oq_slurm_scripts s;
    oq_slurm_ids ids;
    oq_err e = {0};
    oq_status st = oq_slurm_write(&a->job, &s, &e);
    if (!st && !a->no_submit) st = oq_slurm_submit(&a->job, &s, &ids, &e);
    if (st) {
        fprintf(stderr, "ortqual slurm: %s\n", e.msg);
        return st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    print_result(a, &s, a->no_submit ? NULL : &ids);
    return OQ_EXIT_OK;
}

int cmd_slurm(int argc, char **argv)
{
    static struct slurm_args a;
    memset(&a, 0, sizeof a);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (c == 'h') return usage(stdout), OQ_EXIT_OK;
        if (c == '?' || take_opt(&a, c, optarg)) return OQ_EXIT_USAGE;
    }
    if (!a.job.shards || !a.outdir) {
        fprintf(stderr, "ortqual slurm: --shards and --outdir are required (see --help)\n");
        return OQ_EXIT_USAGE;
    }
    if (optind < 2 || strcmp(argv[optind - 1], "--") != 0) {
        fprintf(stderr, "ortqual slurm: want '-- validate|replay [options]' after the slurm options\n");
        return OQ_EXIT_USAGE;
    }
    if (check_command(argc - optind, argv + optind)) return OQ_EXIT_USAGE;
    char *cwd = getcwd(NULL, 0), *self = realpath("/proc/self/exe", NULL), *outdir = cwd ? absolute(a.outdir, cwd) : NULL;
    a.job.outdir = outdir;
    a.job.workdir = cwd;
    a.job.self_exe = self;
    a.job.argc = argc - optind;
    a.job.argv = (const char *const *)argv + optind;
    a.job.extra = a.extra;
    int rc = cwd && self && outdir ? run(&a) : OQ_EXIT_RUNTIME;
    free(cwd);
    free(self);
    free(outdir);
    return rc;
}
