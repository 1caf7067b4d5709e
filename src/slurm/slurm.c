/* sbatch scripts for a sharded plan and their submission (ortqual/slurm.h). */
#include "ortqual/slurm.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

#define SUBMIT_TIMEOUT_S 120.0

/* An #SBATCH line takes one word: no whitespace, nothing that would end the line. sbatch reads
 * quotes, backslashes and '#' (a comment) in it: those are escaped, so a path holding one
 * (an outdir "s'3") means what it says. */
static oq_status directive(FILE *fp, const char *opt, const char *value, oq_err *err)
{
    if (!value) return OQ_OK;
    const char *name = *opt ? opt : "--sbatch-arg"; /* an extra argument is a whole option */
    for (const char *p = value; *p; p++)
        if (isspace((unsigned char)*p))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s '%s': whitespace cannot go into an #SBATCH line", name, value);
    if (!*value) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: empty value", name);
    fprintf(fp, "#SBATCH %s%s", opt, *opt ? "=" : "");
    for (const char *p = value; *p; p++) {
        if (strchr("'\"\\#", *p)) fputc('\\', fp);
        fputc(*p, fp);
    }
    fputc('\n', fp);
    return OQ_OK;
}

void oq_slurm_quote(FILE *fp, const char *s)
{
    if (!fp || !s) return;
    fputc('\'', fp);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", fp);
        else fputc(*s, fp);
    }
    fputc('\'', fp);
}

static oq_status common_directives(FILE *fp, const oq_slurm_job *j, const char *partition, oq_err *err)
{
    oq_status st = directive(fp, "--ntasks", "1", err);
    if (!st) st = directive(fp, "--chdir", j->workdir, err);
    if (!st) st = directive(fp, "--export", "ALL", err);
    if (!st) st = directive(fp, "--partition", partition, err);
    if (!st) st = directive(fp, "--account", j->account, err);
    if (!st) st = directive(fp, "--qos", j->qos, err);
    for (size_t i = 0; !st && i < j->n_extra; i++) st = directive(fp, "", j->extra[i], err);
    return st;
}

static oq_status shards_script(FILE *fp, const oq_slurm_job *j, oq_err *err)
{
    char name[256], array[64], log[4200], self[4200];
    snprintf(name, sizeof name, "%s-shards", j->job_name ? j->job_name : "ortqual");
    snprintf(array, sizeof array, "0-%d", (int)j->shards - 1);
    snprintf(log, sizeof log, "%s/slurm/shard-%%A_%%a.out", j->outdir);
    snprintf(self, sizeof self, "%s/slurm/shards.sbatch", j->outdir);
    fprintf(fp, "#!/bin/bash\n# Written by ortqual slurm: task I runs shard I of %d of the plan in %s/shards/plan.json.\n"
                "# Rerun one shard: sbatch --array=I ",
            (int)j->shards, j->outdir);
    oq_slurm_quote(fp, self);
    fputc('\n', fp);
    oq_status st = directive(fp, "--job-name", name, err);
    if (!st) st = directive(fp, "--array", array, err);
    if (!st) st = directive(fp, "--output", log, err);
    if (!st) st = common_directives(fp, j, j->partition, err);
    if (!st) st = directive(fp, "--time", j->time, err);
    if (!st) st = directive(fp, "--gpus-per-task", j->gpus_per_task, err);
    if (!st) st = directive(fp, "--cpus-per-task", j->cpus_per_task, err);
    if (!st) st = directive(fp, "--mem", j->mem, err);
    if (st) return st;
    fputs("exec ", fp);
    oq_slurm_quote(fp, j->self_exe);
    for (int i = 0; i < j->argc; i++) fputc(' ', fp), oq_slurm_quote(fp, j->argv[i]);
    fputs(" --outdir ", fp);
    oq_slurm_quote(fp, j->outdir);
    fprintf(fp, " --shard \"$SLURM_ARRAY_TASK_ID/%d\" --shard-by %s\n", (int)j->shards, oq_shard_by_name(j->by));
    return OQ_OK;
}

static oq_status merge_script(FILE *fp, const oq_slurm_job *j, oq_err *err)
{
    char name[256], log[4200];
    snprintf(name, sizeof name, "%s-merge", j->job_name ? j->job_name : "ortqual");
    snprintf(log, sizeof log, "%s/slurm/merge-%%j.out", j->outdir);
    fprintf(fp, "#!/bin/bash\n# Written by ortqual slurm: merges the shards of %s once the array has ended.\n",
            j->outdir);
    oq_status st = directive(fp, "--job-name", name, err);
    if (!st) st = directive(fp, "--output", log, err);
    if (!st) st = common_directives(fp, j, j->merge_partition ? j->merge_partition : j->partition, err);
    if (!st) st = directive(fp, "--mem", j->merge_mem, err);
    if (st) return st;
    fputs("exec ", fp);
    oq_slurm_quote(fp, j->self_exe);
    fputs(" merge ", fp);
    for (int i = 0; i < j->merge_argc; i++) oq_slurm_quote(fp, j->merge_argv[i]), fputc(' ', fp);
    oq_slurm_quote(fp, j->outdir);
    fputc('\n', fp);
    return OQ_OK;
}

static oq_status write_script(const char *path, oq_status (*body)(FILE *, const oq_slurm_job *, oq_err *),
                              const oq_slurm_job *j, oq_err *err)
{
    oq_atomic_file af;
    oq_status st = oq_atomic_open(&af, path, 1, err);
    if (st) return st;
    st = body(af.fp, j, err);
    if (st) {
        oq_atomic_abort(&af);
        return st;
    }
    return oq_atomic_commit(&af, err);
}

/* ---- values sbatch reads as numbers or times: refused here, before the prepare step, rather
 * than by sbatch after it ------------------------------------------------------------------ */

static size_t digits(const char *s)
{
    return strspn(s, "0123456789");
}

/* The `len` characters at s are a count of 1 to INT_MAX (sbatch's limit). */
static int count_of(const char *s, size_t len)
{
    if (!len || digits(s) != len) return 0;
    long long v = strtoll(s, NULL, 10);
    return v >= 1 && v <= INT_MAX;
}

static int is_count(const char *s)
{
    return count_of(s, strlen(s));
}

/* [TYPE:]N, or several in a comma-separated list. */
static int is_gpus(const char *s)
{
    for (;;) {
        size_t len = strcspn(s, ","), type = strcspn(s, ":,");
        const char *n = s[type] == ':' ? s + type + 1 : s;
        if ((s[type] == ':' && !type) || !count_of(n, (size_t)(s + len - n))) return 0;
        if (!s[len]) return 1;
        s += len + 1;
    }
}

/* Megabytes, or with a K, M, G or T suffix; 0 is sbatch's "all of the node's memory". */
static int is_mem(const char *s)
{
    size_t k = digits(s);
    errno = 0;
    strtoll(s, NULL, 10); /* ERANGE: beyond what sbatch reads */
    return k && errno != ERANGE && (!s[k] || (strchr("KMGTkmgt", s[k]) && !s[k + 1]));
}

/* Minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S (0: no limit), or UNLIMITED (INFINITE). */
static int is_time(const char *s)
{
    if (!strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE")) return 1;
    size_t k = digits(s);
    if (k && s[k] == '-') s += k + 1;
    for (int part = 0; part < 3; part++) { /* up to three ':'-separated numbers after the days */
        k = digits(s);
        if (!k || (s[k] && s[k] != ':')) return 0;
        if (!s[k]) return 1;
        s += k + 1;
    }
    return 0;
}

static oq_status check_values(const oq_slurm_job *j, oq_err *err)
{
    static const char mem[] = "megabytes, or a size with a K, M, G or T suffix, e.g. 8G";
    const struct {
        const char *opt, *value;
        int (*ok)(const char *);
        const char *want;
    } v[] = {
        {"--time", j->time, is_time, "minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED"},
        {"--gpus-per-task", j->gpus_per_task, is_gpus, "[TYPE:]N with N a positive integer, e.g. 1 or h100:2"},
        {"--cpus-per-task", j->cpus_per_task, is_count, "a positive integer"},
        {"--mem", j->mem, is_mem, mem},
        {"--merge-mem", j->merge_mem, is_mem, mem},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (v[i].value && !v[i].ok(v[i].value))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s '%s': want %s", v[i].opt, v[i].value, v[i].want);
    return OQ_OK;
}

static oq_status check_job(const oq_slurm_job *j, oq_err *err)
{
    if (j->shards < 1 || !j->argc || !j->outdir || *j->outdir != '/' || !j->workdir || *j->workdir != '/' ||
        !j->self_exe || *j->self_exe != '/')
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "slurm job: want N >= 1 shards, a command, and absolute outdir, "
                                                   "workdir and tool paths");
    size_t n = strlen(j->outdir);
    if (n > OQ_OUTDIR_MAX) /* the limit of the run that prepares D (oq_check_outdir) */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: path too long: %zu bytes (at most %d)", j->outdir, n,
                          OQ_OUTDIR_MAX);
    return check_values(j, err);
}

oq_status oq_slurm_check(const oq_slurm_job *j, oq_err *err)
{
    OQ_NEED(err, j);
    oq_status st = check_job(j, err);
    if (st) return st;
    char *text = NULL;
    size_t n = 0;
    FILE *fp = open_memstream(&text, &n);
    if (!fp) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    st = shards_script(fp, j, err);
    if (!st) st = merge_script(fp, j, err);
    fclose(fp);
    free(text);
    return st;
}

oq_status oq_slurm_write(const oq_slurm_job *j, oq_slurm_scripts *s, oq_err *err)
{
    OQ_NEED(err, j);
    OQ_NEED(err, s);
    oq_status st = check_job(j, err);
    if (st) return st;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/slurm", j->outdir);
    st = oq_mkdirs(dir, err);
    snprintf(s->shards, sizeof s->shards, "%s/slurm/shards.sbatch", j->outdir);
    snprintf(s->merge, sizeof s->merge, "%s/slurm/merge.sbatch", j->outdir);
    if (!st) st = write_script(s->shards, shards_script, j, err);
    if (!st) st = write_script(s->merge, merge_script, j, err);
    return st;
}

/* ---- submission ----------------------------------------------------------------------- */

/* Runs argv (searched in PATH) for at most `timeout_s`, stdout and stderr together in out. Not
 * oq_proc_run: that one runs a path (sbatch is found in PATH, as the user's shell finds it) and
 * keeps only stderr, while sbatch answers the job id on stdout. */
static oq_status capture(char *const argv[], double timeout_s, char *out, size_t n, int *status, oq_err *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return oq_err_set(err, OQ_ERR_RUNTIME, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]), close(p[1]);
        return oq_err_set(err, OQ_ERR_RUNTIME, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno)); /* no stdio lock after fork */
        _exit(127);
    }
    close(p[1]);
    size_t used = 0;
    double end = oq_now_s() + timeout_s;
    int timed_out = 0;
    for (;;) {
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int left = (int)((end - oq_now_s()) * 1000);
        if (left <= 0 || poll(&pf, 1, left) == 0) {
            timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        char buf[1024];
        ssize_t r = read(p[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        size_t take = used + (size_t)r < n - 1 ? (size_t)r : n - 1 - used;
        memcpy(out + used, buf, take);
        used += take;
    }
    out[used] = 0;
    close(p[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) continue;
    if (timed_out) return oq_err_set(err, OQ_ERR_RUNTIME, "%s did not answer within %.0f s", argv[0], timeout_s);
    return OQ_OK;
}

/* `text` without the white space at its end. */
static char *trimmed(char *text)
{
    size_t n = strlen(text);
    while (n && isspace((unsigned char)text[n - 1])) text[--n] = 0;
    return text;
}

/* The last line of `text`, for messages. */
static const char *last_line(char *text)
{
    char *nl = strrchr(trimmed(text), '\n');
    return nl ? nl + 1 : text;
}

/* `text` on one line, for a message: its line breaks shown as "\n". */
static const char *one_line(const char *text, char *buf, size_t n)
{
    size_t k = 0;
    for (; *text && k + 3 < n; text++) {
        if (*text == '\n') buf[k++] = '\\', buf[k++] = 'n';
        else buf[k++] = *text;
    }
    buf[k] = 0;
    return buf;
}

/* The id in one line of sbatch's answer, `len` digits at the pointer returned, or NULL. With
 * --parsable the line is "ID" or "ID;CLUSTER"; a site's wrapper may drop --parsable and print
 * sbatch's classic line, "Submitted batch job ID" (" on cluster CLUSTER"). */
static const char *line_id(const char *line, size_t end, size_t *len)
{
    static const char classic[] = "Submitted batch job ", on[] = " on cluster ";
    int is_classic = !strncmp(line, classic, sizeof classic - 1);
    const char *id = is_classic ? line + sizeof classic - 1 : line, *rest = id + digits(id);
    *len = (size_t)(rest - id);
    if (!*len) return NULL;
    if (rest == line + end) return id;
    if (is_classic) return !strncmp(rest, on, sizeof on - 1) && rest + sizeof on - 1 < line + end ? id : NULL;
    return *rest == ';' ? id : NULL;
}

/* The job id in sbatch's answer: a line of its own (warnings may come before it); the last such
 * line wins. */
static int parse_id(const char *text, char *id, size_t n)
{
    int found = 0;
    for (const char *s = text; *s;) {
        size_t end = strcspn(s, "\n"), len;
        const char *d = line_id(s, end, &len);
        if (d && len < n) {
            snprintf(id, n, "%.*s", (int)len, d);
            found = 1;
        }
        if (!s[end]) break;
        s += end + 1;
    }
    return found;
}

static oq_status sbatch(const oq_slurm_job *j, const char *script, const char *dependency, char *id, size_t n,
                        oq_err *err)
{
    char dep[128], out[8192];
    snprintf(dep, sizeof dep, "--dependency=afterany:%s", dependency ? dependency : "");
    char *argv[] = {(char *)(j->sbatch ? j->sbatch : "sbatch"), "--parsable", dependency ? dep : (char *)script,
                    dependency ? (char *)script : NULL, NULL};
    int status = 0;
    oq_status st = capture(argv, SUBMIT_TIMEOUT_S, out, sizeof out, &status, err);
    if (st) return st;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s %s: %s", argv[0], script,
                          *last_line(out) ? last_line(out) : "failed without a message");
    if (!parse_id(out, id, n)) {
        char shown[512];
        return oq_err_set(err, OQ_ERR_FORMAT, "%s %s exited 0 but printed no job id: '%s'", argv[0], script,
                          one_line(trimmed(out), shown, sizeof shown));
    }
    return OQ_OK;
}

static oq_status record(const oq_slurm_job *j, const oq_slurm_ids *ids, oq_err *err)
{
    json_t *logs = json_array();
    char path[4300];
    for (int32_t i = 0; i < j->shards; i++) {
        oq_slurm_shard_log(j->outdir, ids->array, i, path, sizeof path);
        json_array_append_new(logs, json_string(path));
    }
    snprintf(path, sizeof path, "%s/slurm/merge-%s.out", j->outdir, ids->merge);
    json_t *rec = json_pack("{s:s, s:s, s:s, s:i, s:s, s:o, s:s}", "schema", OQ_SLURM_JOBS_SCHEMA, "array_job_id", ids->array, "merge_job_id", ids->merge,
                            "shards", j->shards, "shard_by", oq_shard_by_name(j->by), "shard_logs", logs, "merge_log",
                            path);
    snprintf(path, sizeof path, "%s/slurm/jobs.json", j->outdir);
    oq_status st = oq_json_write_file(path, rec, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err);
    json_decref(rec);
    return st;
}

oq_status oq_slurm_submit(const oq_slurm_job *j, const oq_slurm_scripts *s, oq_slurm_ids *ids, oq_err *err)
{
    OQ_NEED(err, j);
    OQ_NEED(err, s);
    OQ_NEED(err, ids);
    memset(ids, 0, sizeof *ids);
    oq_status st = sbatch(j, s->shards, NULL, ids->array, sizeof ids->array, err);
    if (st) return st;
    st = sbatch(j, s->merge, ids->array, ids->merge, sizeof ids->merge, err);
    if (st) {
        /* shards nobody would merge only use the cluster: take them back */
        char *argv[] = {"scancel", ids->array, NULL}, out[1024];
        int status;
        oq_err ignored = {0};
        capture(argv, SUBMIT_TIMEOUT_S, out, sizeof out, &status, &ignored);
        const char *what = st == OQ_ERR_FORMAT ? "submitting the merge job failed" : "the merge job was refused";
        oq_err_prefix(err, "%s (array %s cancelled): ", what, ids->array);
        return st;
    }
    return record(j, ids, err);
}

void oq_slurm_shard_log(const char *outdir, const char *array, int32_t i, char *buf, size_t n)
{
    if (!buf || !n) return;
    if (!outdir || !array) { /* nothing to name */
        *buf = '\0';
        return;
    }
    snprintf(buf, n, "%s/slurm/shard-%s_%d.out", outdir, array, (int)i);
}

oq_status oq_slurm_jobs_read(const char *outdir, oq_slurm_ids *ids, oq_err *err)
{
    OQ_NEED(err, outdir);
    OQ_NEED(err, ids);
    memset(ids, 0, sizeof *ids);
    char path[4200];
    snprintf(path, sizeof path, "%s/slurm/jobs.json", outdir);
    if (access(path, F_OK) != 0) return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: nothing was submitted", path);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    const char *array = json_string_value(json_object_get(j, "array_job_id"));
    const char *merge = json_string_value(json_object_get(j, "merge_job_id"));
    oq_status st = OQ_OK;
    if (!j) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: line %d: %s", path, je.line, je.text);
    else if (!array || !merge) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: no array_job_id or merge_job_id", path);
    else {
        snprintf(ids->array, sizeof ids->array, "%s", array);
        snprintf(ids->merge, sizeof ids->merge, "%s", merge);
    }
    json_decref(j);
    return st;
}

static void env_into(const char *name, char *buf, size_t n)
{
    const char *v = getenv(name);
    snprintf(buf, n, "%s", v ? v : "");
}

void oq_slurm_task_current(oq_slurm_task *t)
{
    if (!t) return;
    env_into("SLURM_JOB_ID", t->job_id, sizeof t->job_id);
    env_into("SLURM_ARRAY_JOB_ID", t->array_job_id, sizeof t->array_job_id);
    env_into("SLURM_ARRAY_TASK_ID", t->array_task_id, sizeof t->array_task_id);
    env_into("SLURMD_NODENAME", t->node, sizeof t->node);
    env_into("SLURM_CLUSTER_NAME", t->cluster, sizeof t->cluster);
}
