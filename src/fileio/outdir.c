/* A run's output folder, checked before its work. */
#include "ortqual/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

oq_status oq_check_outdir_kind(const char *dir, oq_err *err)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s", dir);
    if (!*path) return OQ_OK;
    for (char *p = path + 1;; p++) { /* every prefix ending before a '/', then the whole path */
        if (*p && *p != '/') continue;
        char saved = *p;
        *p = 0;
        int there = stat(path, &sb) == 0;
        if (there && !S_ISDIR(sb.st_mode))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: exists and is not a directory", path);
        *p = saved;
        if (!there || !saved) return OQ_OK;
    }
}

/* An earlier run's summary.json, or any other entry than `ignore`, is in the way without --force. */
static oq_status check_empty(const char *dir, const char *ignore, oq_err *err)
{
    char path[4096], other[256] = "";
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (access(path, F_OK) == 0) return oq_err_set(err, OQ_ERR_IO, "%s exists (use --force or another --outdir)", path);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && !*other && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (!ignore || strcmp(e->d_name, ignore)))
            snprintf(other, sizeof other, "%s", e->d_name);
    if (d) closedir(d);
    if (*other)
        return oq_err_set(err, OQ_ERR_IO, "%s: not empty (it holds '%s') and no earlier run's summary.json: use "
                                          "--force to write into it, or another --outdir", dir, other);
    return OQ_OK;
}

/* The folder, or the nearest one above it that is there (where it will be made), takes a file
 * (made and removed: access(2) says yes to root on a read-only mount): a read-only folder is
 * found before the work, not after it. */
static oq_status check_writable(const char *dir, oq_err *err)
{
    char path[4096], probe[4200];
    struct stat sb;
    int there = stat(dir, &sb) == 0;
    snprintf(path, sizeof path, "%s", dir);
    while (stat(path, &sb) != 0) {
        char *slash = strrchr(path, '/');
        while (slash && slash > path && slash[1] == 0) { /* "a/b/" */
            *slash = 0;
            slash = strrchr(path, '/');
        }
        if (!slash) snprintf(path, sizeof path, ".");
        else slash[slash == path] = 0; /* "/x" -> "/" */
        if (!strcmp(path, ".") || !strcmp(path, "/")) break;
    }
    snprintf(probe, sizeof probe, "%s/.ortqual-probe.XXXXXX", path);
    int fd = mkstemp(probe);
    if (fd >= 0) {
        close(fd);
        unlink(probe);
        return OQ_OK;
    }
    return there ? oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot write in it: %s", dir, strerror(errno))
                 : oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot create directory: %s", dir, strerror(errno));
}

/* Room a run needs below its folder: a name of its own (a figure named after a model output, with
 * a temporary's ".tmp.<pid>.XXXXXX") a level or two down (.work/, shards/I/). */
#define OUTDIR_ROOM 320

oq_status oq_check_outdir(const char *dir, int force, const char *ignore, oq_err *err)
{
    if (!dir || !*dir) return oq_err_set(err, OQ_ERR_INVALID_ARG, "an output folder is empty");
    size_t n = strlen(dir);
    if (n >= PATH_MAX - OUTDIR_ROOM) /* found before the work, not at its first file */
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%s: path too long: %zu bytes, and a run writes files up to %d bytes below its folder: "
                          "the system takes paths of at most %d bytes", dir, n, OUTDIR_ROOM, PATH_MAX - 1);
    oq_status st = oq_check_outdir_kind(dir, err);
    if (!st && !force) st = check_empty(dir, ignore, err);
    return st ? st : check_writable(dir, err);
}
