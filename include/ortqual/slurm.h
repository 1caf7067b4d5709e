/* SLURM job arrays for sharded validation (ortqual/shard.h): one sbatch script whose array
 * tasks run the shards of a prepared plan, one that merges them, and their submission.
 *
 *     const char *cmd[] = {"validate", "--configs", "ref:encoder:fp64,cuda:attention24:fp16"};
 *     oq_slurm_job j = {.outdir = "/scratch/run1", .workdir = "/scratch", .self_exe = "/opt/bin/ortqual",
 *                       .argc = 3, .argv = cmd, .shards = 50, .partition = "gpu", .time = "02:00:00",
 *                       .gpus_per_task = "1"};
 *     oq_slurm_scripts s;
 *     oq_slurm_ids ids;
 *     oq_slurm_write(&j, &s, &err);          // run1/slurm/shards.sbatch and run1/slurm/merge.sbatch
 *     oq_slurm_submit(&j, &s, &ids, &err);   // the array, then the merge with afterany:<array>
 *
 * Task i runs `ortqual <argv...> --outdir D --shard i/N --shard-by B` (SLURM_ARRAY_TASK_ID is
 * i) and logs to D/slurm/shard-<array>_<i>.out; the merge job runs `ortqual merge <merge_argv...> D` once every
 * task has ended, whatever their state, so a killed shard is reported by the merge. The
 * scripts can be submitted again by hand, e.g. `sbatch --array=3 D/slurm/shards.sbatch` to
 * rerun one shard. Tasks start in `workdir` with the submitting environment (--export=ALL),
 * so paths and library pins given on the login node hold on the compute nodes.
 */
#ifndef ORTQUAL_SLURM_H
#define ORTQUAL_SLURM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ortqual/shard.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oq_slurm_job {
    const char *outdir;         /* D, absolute, shared by every node */
    const char *workdir;        /* where the tasks start (absolute) */
    const char *self_exe;       /* the ortqual tool the tasks run (absolute) */
    int argc;                   /* the shard command without --outdir and --shard: */
    const char *const *argv;    /* {"validate" or "replay", options...} */
    int32_t shards;             /* N */
    oq_shard_by by;
    int merge_argc;             /* options of the merge job before D (--allow-skip, --junit FILE): */
    const char *const *merge_argv; /* the merged verdict's, never a shard's */
    /* sbatch options; NULL leaves the cluster's default */
    const char *job_name;       /* NULL: "ortqual" */
    const char *partition, *time, *gpus_per_task, *cpus_per_task, *mem, *account, *qos;
    const char *merge_partition; /* NULL: partition */
    const char *merge_mem;      /* the merge holds every shard's summary in memory (NULL: default) */
    size_t n_extra;             /* more options for both jobs ("--constraint=h200"), one word each */
    const char *const *extra;
    const char *sbatch;         /* NULL: "sbatch" found in PATH */
} oq_slurm_job;

typedef struct oq_slurm_scripts {
    char shards[4096]; /* D/slurm/shards.sbatch */
    char merge[4096];  /* D/slurm/merge.sbatch */
} oq_slurm_scripts;

typedef struct oq_slurm_ids {
    char array[64];    /* job id of the array */
    char merge[64];    /* job id of the merge */
} oq_slurm_ids;

/* Writes both scripts (atomically). OQ_ERR_INVALID_ARG for an outdir longer than OQ_OUTDIR_MAX
 * bytes (fileio.h: the longest a run takes), a value that cannot go into an
 * #SBATCH line (whitespace or a newline), or one sbatch reads as a number or a time that is not
 * in sbatch's form (time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED;
 * gpus_per_task: [TYPE:]N[,...]; cpus_per_task: N >= 1; mem, merge_mem: N[K|M|G|T]), naming it. */
OQ_API oq_status oq_slurm_write(const oq_slurm_job *j, oq_slurm_scripts *s, oq_err *err);
/* What oq_slurm_write would refuse, found without writing anything: for a caller that has
 * work to do (the prepare step) before it writes the scripts. */
OQ_API oq_status oq_slurm_check(const oq_slurm_job *j, oq_err *err);
/* `s` in single quotes for the shell (a quote in it closed, escaped and reopened), to fp: the
 * scripts' command lines, and a command printed for pasting. */
OQ_API void oq_slurm_quote(FILE *fp, const char *s);

/* The schema of D/slurm/jobs.json. */
#define OQ_SLURM_JOBS_SCHEMA "ortqual.slurm-jobs/1"

/* Submits the array, then the merge with --dependency=afterany:<array>, and records both
 * ids and the log paths in D/slurm/jobs.json ("schema": OQ_SLURM_JOBS_SCHEMA). The id is read from sbatch's --parsable answer
 * or, from a wrapper that drops --parsable, from its "Submitted batch job ID" line.
 * OQ_ERR_RUNTIME with sbatch's own message when it refuses (or cannot be run), OQ_ERR_FORMAT
 * quoting its answer when it exits 0 with no job id; the array is cancelled again when the
 * merge's submission fails either way. */
OQ_API oq_status oq_slurm_submit(const oq_slurm_job *j, const oq_slurm_scripts *s, oq_slurm_ids *ids,
                                oq_err *err);

/* The ids D/slurm/jobs.json recorded at the last submission for D; OQ_ERR_NOT_FOUND when
 * nothing was submitted for D, OQ_ERR_FORMAT when the file is not such a record. */
OQ_API oq_status oq_slurm_jobs_read(const char *outdir, oq_slurm_ids *ids, oq_err *err);
/* D/slurm/shard-<array>_<i>.out: where task i of the array logs. */
OQ_API void oq_slurm_shard_log(const char *outdir, const char *array, int32_t i, char *buf, size_t n);

/* The SLURM task this process runs in: SLURM_JOB_ID, SLURM_ARRAY_JOB_ID,
 * SLURM_ARRAY_TASK_ID, SLURMD_NODENAME and SLURM_CLUSTER_NAME ("" where unset, as outside
 * SLURM). A shard records it, so a merge can name the task of a shard that did not report. */
typedef struct oq_slurm_task {
    char job_id[32], array_job_id[32], array_task_id[16], node[256], cluster[128];
} oq_slurm_task;
OQ_API void oq_slurm_task_current(oq_slurm_task *t);

#ifdef __cplusplus
}
#endif
#endif
