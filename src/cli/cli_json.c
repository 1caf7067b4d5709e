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

static json_t *error_doc(const char *cmd, oq_status st, const char *msg, int rc)
{
    return json_pack("{s:s, s:s, s:s, s:o?, s:i}", "schema", "ortqual-error/1", "command", cmd, "status",
                     oq_status_str(st), "error", oq_cli_json_text(msg), "exit_code", rc);
}

int oq_cli_refuse(const char *cmd, int json, oq_status st, const char *msg, int rc)
{
    fprintf(stderr, "ortqual %s: %s\n", cmd, msg);
    if (!json) return rc;
    json_t *j = error_doc(cmd, st, msg, rc);
    if (j && json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0) fputc('\n', stdout);
    json_decref(j);
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
