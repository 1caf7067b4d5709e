/* An output folder written by one command at a time, and the descriptors a run needs. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"

/* File descriptors a run holds at once (its pipes to a worker, a batch, a figure, the lock): the
 * demo's validate stopped half-way at 6 ("Too many open files") and ran at 8; twice that leaves
 * room. Found before the folder is touched, not in the middle of a run. */
#define NEED_FDS 16

int oq_cli_check_descriptors(const char *cmd)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= NEED_FDS) return 0;
    if (r.rlim_max == RLIM_INFINITY || r.rlim_max >= NEED_FDS) {
        r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max > 1024 ? 1024 : r.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &r) == 0) return 0;
    }
    oq_cli_error_in(cmd, "too few file descriptors (EMFILE): the limit of open files is %llu (ulimit -n) "
                    "and a run needs %d", (unsigned long long)r.rlim_cur, NEED_FDS);
    return OQ_EXIT_RUNTIME;
}

/* fixed: DIR is the command's operand (merge, report), not an output folder it could be given
 * another of: the refusal says only to wait. junit: the run's --junit FILE, which records the
 * refusal. label (may be NULL): what the refusal names instead of DIR (an output file's option
 * and path). */
static int outdir_lock(const char *cmd, const char *dir, const char *name, int shared, int fixed, const char *junit,
                       const char *label, oq_outdir_lock **lock)
{
    *lock = NULL;
    int rc = oq_cli_check_descriptors(cmd);
    if (rc) return rc;
    oq_err e = OQ_ERR_INIT;
    oq_status st = shared ? oq_outdir_lock_create_shared(dir, lock, &e) : oq_outdir_lock_create(dir, name, lock, &e);
    if (!st) return OQ_EXIT_OK;
    /* the message is worded already (the folder's alternative in the tool's words): cut what
     * follows the advice to wait */
    static const char wait[] = ": wait for it to end";
    char *other = fixed ? strstr(e.msg, wait) : NULL;
    if (other) other[sizeof wait - 1] = '\0';
    char named[sizeof e.msg + 256];
    size_t n = strlen(dir);
    if (label && !strncmp(e.msg, dir, n) && !strncmp(e.msg + n, ": ", 2)) /* "DIR: in use ..." */
        snprintf(named, sizeof named, "%s%s", label, e.msg + n);
    else
        snprintf(named, sizeof named, "%s", e.msg);
    return oq_cli_junit_refused(cmd, junit, st, named, oq_cli_refuse(cmd, 0, st, named, oq_cli_exit_of(st)));
}

int oq_cli_outdir_lock(const char *cmd, const char *dir, const char *name, const char *junit, oq_outdir_lock **lock)
{
    return outdir_lock(cmd, dir, name, 0, 0, junit, NULL, lock);
}

int oq_cli_dir_lock(const char *cmd, const char *dir, const char *junit, oq_outdir_lock **lock)
{
    return outdir_lock(cmd, dir, NULL, 0, 1, junit, NULL, lock);
}

int oq_cli_outdir_lock_shared(const char *cmd, const char *dir, const char *junit, oq_outdir_lock **lock)
{
    return outdir_lock(cmd, dir, NULL, 1, 0, junit, NULL, lock);
}

int oq_cli_file_lock(const char *cmd, const char *opt, const char *path, oq_outdir_lock **lock)
{
    *lock = NULL;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char dir[PATH_MAX], name[NAME_MAX + 1], label[PATH_MAX + 64];
    int dn = !slash ? 1 : slash == path ? 1 : (int)(slash - path); /* "x": ".", "/x": "/" */
    if (!*base || snprintf(dir, sizeof dir, "%.*s", dn, slash ? path : ".") >= (int)sizeof dir ||
        snprintf(name, sizeof name, OQ_OUTDIR_LOCK_FILE_FMT, base) >= (int)sizeof name)
        return OQ_EXIT_OK; /* no name for its lock: the file's own checks have run */
    snprintf(label, sizeof label, "%s %s", opt, path);
    return outdir_lock(cmd, dir, name, 0, 1, NULL, oq_cli_shown(label), lock);
}
