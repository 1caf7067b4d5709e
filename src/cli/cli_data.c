/* Data files the tool ships (the ONNX conformance set): beside an installed tool in
 * <prefix>/share/ortqual, or in the source tree the tool was built from. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "ortqual/validate.h"
#include "ortqual/fileio.h"

#ifndef ORTQUAL_SOURCE_DIR
#define ORTQUAL_SOURCE_DIR ""
#endif

static char *existing_dir(const char *path)
{
    struct stat sb;
    char buf[PATH_MAX];
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode) || !realpath(path, buf)) return NULL;
    return strdup(buf);
}

char *oq_cli_data_path(const char *rel)
{
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        snprintf(path, sizeof path, "%s/../share/ortqual/%s", exe, rel);
        char *found = existing_dir(path);
        if (found) return found;
    }
    if (!ORTQUAL_SOURCE_DIR[0]) return NULL;
    snprintf(path, sizeof path, "%s/tests/data/%s", ORTQUAL_SOURCE_DIR, rel);
    return existing_dir(path);
}

const char *oq_cli_summary_of(const char *arg, char *buf, size_t n)
{
    struct stat sb;
    if (stat(arg, &sb) != 0 || !S_ISDIR(sb.st_mode)) return arg;
    snprintf(buf, n, "%s%ssummary.json", arg, arg[0] && arg[strlen(arg) - 1] == '/' ? "" : "/");
    return buf;
}

/* A shard's folder with started.json and no summary: killed, timed out or crashed, said in the
 * merge's words (it said "not a run directory?"). 1 when so, said as `cmd`'s error. */
static int shard_unfinished(const char *cmd, const char *dir)
{
    oq_shard_problem p;
    int32_t count;
    if (oq_shard_dir_problem(dir, &p, &count, NULL) || p.state != OQ_SHARD_UNFINISHED) return 0;
    oq_cli_error_in(cmd, "%s holds started.json and no summary.json (no result to render): shard %d of %d %s: %s",
                    oq_cli_shown(dir), (int)p.index, (int)count, oq_shard_state_name(p.state), oq_cli_shown(p.detail));
    return 1;
}

int oq_cli_refused_run(const char *cmd, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (access(path, F_OK) == 0) return 0;
    snprintf(path, sizeof path, "%s/error.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "error"));
    if (msg)
        oq_cli_error_in(cmd, "%s holds error.json and no summary.json: the run was refused (no result to render): %s",
                        oq_cli_shown(dir), msg);
    json_decref(j);
    return msg != NULL || shard_unfinished(cmd, dir);
}

oq_status oq_cli_merged_check(const char *cmd, const char *path, char *unchecked, size_t n, oq_err *err)
{
    oq_status st = oq_validate_merged_check(path, unchecked, n, err);
    if (!st && *unchecked) fprintf(stderr, "ortqual %s: warning: %s\n", cmd, oq_cli_shown(unchecked));
    return st;
}
