/* JSON strings of outside text: paths are bytes on Linux, and jansson refuses text that is
 * not UTF-8 (a json_pack with it fails whole, an array or object silently drops it). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/fileio.h"
#include "ortqual/report.h"

json_t *oq_cli_json_text(const char *s)
{
    if (!s) return json_null();
    json_t *j = json_string(s);
    if (j) return j;
    char *u = oq_text_utf8(s);
    j = u ? json_string(u) : NULL;
    free(u);
    return j;
}

/* What --json promised for this process: a document on stdout, or an ortqual-error/1 object
 * when the command refuses. The first error line said is the object's `error`. */
static struct {
    const char *cmd; /* the command given --json; NULL: not asked */
    int answered;    /* its document or an error object is on stdout */
    char said[OQ_ERR_MSG_MAX];
    oq_status said_status; /* the library's status behind `said`, where a refusal gave one */
} promise;

void oq_cli_json_asked(const char *cmd)
{
    promise.cmd = cmd;
}

void oq_cli_json_answered(void)
{
    promise.answered = 1;
}

void oq_cli_json_said(const char *msg)
{
    if (!promise.said[0]) snprintf(promise.said, sizeof promise.said, "%s", msg);
}

/* An ortqual-error/1 object: `status` a status's name (or "unfinished"), `rc` its exit status
 * (-1: none yet, left out). */
static json_t *error_doc_as(const char *cmd, const char *status, const char *msg, int rc)
{
    json_t *j = json_pack("{s:s, s:s, s:s, s:o?}", "schema", OQ_CLI_ERROR_SCHEMA, "command", cmd, "status", status,
                          "error", oq_cli_json_text(msg));
    if (j && rc >= 0 && json_object_set_new(j, "exit_code", json_integer(rc))) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

static json_t *error_doc(const char *cmd, oq_status st, const char *msg, int rc)
{
    return error_doc_as(cmd, oq_status_str(st), msg, rc);
}

static void print_error_object(const char *cmd, oq_status st, const char *msg, int rc)
{
    json_t *j = error_doc(cmd, st, msg, rc);
    if (j && json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0) fputc('\n', stdout);
    json_decref(j);
    promise.answered = 1;
}

int oq_cli_refuse(const char *cmd, int json, oq_status st, const char *msg, int rc)
{
    fprintf(stderr, "ortqual %s: %s\n", cmd, msg);
    if (!promise.said[0]) promise.said_status = st;
    oq_cli_json_said(msg);
    if (json) print_error_object(cmd, st, msg, rc);
    return rc;
}

int oq_cli_json_refused(int rc)
{
    if (!promise.cmd || promise.answered || (rc != OQ_EXIT_USAGE && rc != OQ_EXIT_RUNTIME)) return rc;
    /* every refusal says its line through oq_cli_error: one that did not is still no empty stdout */
    const char *msg = promise.said[0] ? promise.said : "refused (the reason is on standard error)";
    oq_status st = promise.said_status ? promise.said_status : rc == OQ_EXIT_RUNTIME ? OQ_ERR_RUNTIME : OQ_ERR_INVALID_ARG;
    print_error_object(promise.cmd, st, msg, rc);
    return rc;
}

/* The error document `j` (consumed) as JUnit XML at `junit`: one <error> case. */
static oq_status junit_error(json_t *j, const char *what, const char *junit, oq_err *e)
{
    char *text = j ? json_dumps(j, 0) : NULL;
    json_decref(j);
    oq_status st = text ? oq_junit_write(text, strlen(text), what, junit, e)
                        : oq_err_set(e, OQ_ERR_NOMEM, "%s: out of memory", junit);
    free(text);
    return st;
}

int oq_cli_junit_refused(const char *cmd, const char *junit, oq_status st, const char *msg, int rc)
{
    if (!junit) return rc;
    oq_err e = {0};
    if (junit_error(error_doc(cmd, st, msg, rc), "the refusal", junit, &e))
        fprintf(stderr, "ortqual %s: --junit: %s\n", cmd, e.msg);
    else
        fprintf(stderr, "ortqual %s: JUnit XML %s: one error case, the refusal\n", cmd, oq_cli_shown(junit));
    return rc;
}

void oq_cli_unfinished_text(const char *cmd, char *buf, size_t n)
{
    char when[32] = "?";
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(buf, n, "the run did not finish: ortqual %s started %s (pid %ld) and has not written its result: it is "
             "still running, or it was killed (SIGKILL: a CI job's time limit, the OOM killer) or crashed", cmd, when,
             (long)getpid());
}

int oq_cli_in_outdir(const char *path, const char *outdir)
{
    size_t n = outdir ? strlen(outdir) : 0;
    while (n > 1 && outdir[n - 1] == '/') n--; /* "runs/new/" names the folder "runs/new" */
    const char *slash = path ? strrchr(path, '/') : NULL;
    return outdir && slash && path + n == slash && !strncmp(path, outdir, n);
}

oq_status oq_cli_junit_unfinished(const char *cmd, const char *junit, const char *outdir, oq_err *err)
{
    /* one not there yet in the output folder would be a new folder's first entry, which the
     * run's own check refuses (new or empty) */
    if (!junit || (oq_cli_in_outdir(junit, outdir) && access(junit, F_OK) != 0)) return OQ_OK;
    char why[512];
    oq_cli_unfinished_text(cmd, why, sizeof why);
    oq_status st = junit_error(error_doc_as(cmd, "unfinished", why, -1), "the unfinished run", junit, err);
    if (st) unlink(junit); /* no earlier run's file either: its verdict is not this run's */
    return st ? oq_err_prefix(err, "--junit: ") : OQ_OK;
}
