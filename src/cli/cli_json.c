/* JSON strings of outside text: paths are bytes on Linux, and jansson refuses text that is
 * not UTF-8 (a json_pack with it fails whole, an array or object silently drops it). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static json_t *error_doc(const char *cmd, oq_status st, const char *msg, int rc)
{
    return json_pack("{s:s, s:s, s:s, s:o?, s:i}", "schema", OQ_CLI_ERROR_SCHEMA, "command", cmd, "status",
                     oq_status_str(st), "error", oq_cli_json_text(msg), "exit_code", rc);
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

int oq_cli_junit_refused(const char *cmd, const char *junit, oq_status st, const char *msg, int rc)
{
    if (!junit) return rc;
    json_t *j = error_doc(cmd, st, msg, rc);
    char *text = j ? json_dumps(j, 0) : NULL;
    json_decref(j);
    oq_err e = {0};
    if (!text || oq_junit_write(text, strlen(text), "the refusal", junit, &e))
        fprintf(stderr, "ortqual %s: --junit: %s\n", cmd, text ? e.msg : "out of memory");
    else
        fprintf(stderr, "ortqual %s: JUnit XML %s: one error case, the refusal\n", cmd, oq_cli_shown(junit));
    free(text);
    return rc;
}
