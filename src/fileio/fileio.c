#include "ortqual/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio/fileio-impl.h"
#include "status/args-impl.h"

static void atomic_reset(oq_atomic_file *af)
{
    if (af->tmp) oq_temp_release(af->tmp);
    free(af->path);
    free(af->tmp);
    memset(af, 0, sizeof *af);
}

/* What a node that is not a regular file is, for messages; NULL for a regular file. */
static const char *kind_of(mode_t mode)
{
    return S_ISREG(mode)    ? NULL
           : S_ISDIR(mode)  ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO (named pipe)"
           : S_ISSOCK(mode) ? "a socket"
                            : "a special file";
}

/* An output path that exists must be a regular file (or a symbolic link, which the rename
 * replaces): renaming over a device or FIFO would replace the node itself (/dev/null made a
 * file), and over a directory it fails only after the work is done. */
static int output_kind_ok(const char *path, oq_err *err)
{
    struct stat sb;
    if (lstat(path, &sb) != 0 || S_ISLNK(sb.st_mode) || !kind_of(sb.st_mode)) return 1;
    oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: is %s; results are written to regular files only", path,
               kind_of(sb.st_mode));
    return 0;
}

/* The process's umask, read once from /proc/self/status ("Umask:", Linux 4.7+): umask(2) can
 * only read it by setting it, and setting it, even back, races with other threads creating
 * files. Without /proc it is read that way, once, at the first output's write. */
static mode_t process_umask;

static void umask_read(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    unsigned mask = 0;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) found = sscanf(line, "Umask: %o", &mask) == 1;
    if (f) fclose(f);
    if (!found) {
        mask = umask(022);
        umask((mode_t)mask);
    }
    process_umask = (mode_t)mask & 0777;
}

mode_t oq_output_mode(mode_t mode)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, umask_read);
    return mode & ~process_umask;
}

/* The temporary file beside `path` (0666 less the umask, as any tool's output: a campaign's
 * group may share it, a private umask keeps it private); its descriptor.
 * `any_kind`: whatever is at `path` may be replaced (a folder of the library's own, where a FIFO
 * is debris, not the user's output). */
static int atomic_create(oq_atomic_file *af, const char *path, int overwrite, int any_kind, mode_t add,
                         oq_err *err)
{
    memset(af, 0, sizeof *af);
    if (!*path) return oq_err_set(err, OQ_ERR_INVALID_ARG, "an output path is empty"), -1;
    if (!any_kind && !output_kind_ok(path, err)) return -1;
    af->path = strdup(path);
    af->tmp = oq_temp_template(path);
    af->overwrite = overwrite;
    if (!af->path || !af->tmp) {
        atomic_reset(af);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory"), -1;
    }
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot create: %s", path, strerror(errno));
        atomic_reset(af);
        return -1;
    }
    oq_temp_hold(af->tmp);
    fchmod(fd, oq_output_mode(0666) | add); /* mkstemp makes 0600 */
    return fd;
}

oq_status oq_check_output_path(const char *path, int overwrite, oq_err *err)
{
    OQ_NEED(err, path);
    if (!*path) return oq_err_set(err, OQ_ERR_INVALID_ARG, "an output path is empty");
    if (!output_kind_ok(path, err)) return OQ_ERR_INVALID_ARG;
    if (!overwrite && access(path, F_OK) == 0)
        return oq_err_set(err, OQ_ERR_IO, "%s: exists (not overwritten)", path);
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: folder '%s': %s", path, dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: '%s' is not a folder", path, dir);
    /* the temporary file the write will make, made and removed: access(2) says yes to root on
     * /proc, and knows nothing of quotas or ACLs */
    oq_atomic_file af;
    int fd = atomic_create(&af, path, overwrite, 0, 0, err);
    if (fd < 0) return err ? err->status : OQ_ERR_OUTPUT;
    close(fd);
    oq_atomic_abort(&af);
    return OQ_OK;
}

oq_status oq_atomic_open(oq_atomic_file *af, const char *path, int overwrite, oq_err *err)
{
    OQ_NEED(err, af);
    OQ_NEED(err, path);
    int fd = atomic_create(af, path, overwrite, 0, 0, err);
    if (fd < 0) return err ? err->status : OQ_ERR_OUTPUT;
    af->fp = fdopen(fd, "wb");
    if (!af->fp) {
        close(fd);
        oq_atomic_abort(af);
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot open: %s", path, strerror(errno));
    }
    return OQ_OK;
}

/* The written temporary file put in place: renamed over `path`, or (not overwriting) linked
 * there, which fails when it exists. */
static oq_status atomic_place(oq_atomic_file *af, oq_err *err)
{
    int rc = af->overwrite ? rename(af->tmp, af->path) : link(af->tmp, af->path);
    if (rc != 0) {
        oq_status st = (!af->overwrite && errno == EEXIST)
                           ? oq_err_set(err, OQ_ERR_IO, "%s: exists (not overwritten)", af->path)
                           : oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot rename into place: %s",
                                        af->path, strerror(errno));
        oq_atomic_abort(af);
        return st;
    }
    if (!af->overwrite) unlink(af->tmp);
    atomic_reset(af);
    return OQ_OK;
}

oq_status oq_err_write(oq_err *err, const char *path, int saved_errno)
{
    return oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", path, strerror(saved_errno ? saved_errno : EIO));
}

oq_status oq_atomic_commit(oq_atomic_file *af, oq_err *err)
{
    OQ_NEED(err, af);
    if (!af->fp) return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_atomic_commit: the file is not open");
    int bad = ferror(af->fp) | fflush(af->fp) | (af->no_sync ? 0 : fsync(fileno(af->fp)));
    int saved = errno;
    bad |= fclose(af->fp);
    af->fp = NULL;
    if (bad) {
        oq_err_write(err, af->path, saved);
        oq_atomic_abort(af);
        return OQ_ERR_OUTPUT;
    }
    return atomic_place(af, err);
}

void oq_atomic_abort(oq_atomic_file *af)
{
    if (!af) return;
    if (af->fp) fclose(af->fp);
    if (af->tmp) unlink(af->tmp);
    atomic_reset(af);
}

/* One buffer into af's temporary file beside `path`, with write(2) straight from it (no stdio
 * buffer, whose set-up and chunking cost a per-batch file more system calls than its content);
 * af aborted on error. */
static oq_status write_tmp(oq_atomic_file *af, const char *path, const void *buf, size_t n, int overwrite,
                           int no_sync, int any_kind, mode_t add, oq_err *err)
{
    int fd = atomic_create(af, path, overwrite, any_kind, add, err);
    if (fd < 0) return err ? err->status : OQ_ERR_OUTPUT;
    const char *p = buf;
    int bad = 0;
    for (size_t done = 0; !bad && done < n;) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        bad = w <= 0;
        if (!bad) done += (size_t)w;
    }
    bad = bad || (!no_sync && fsync(fd) != 0);
    int saved = errno;
    bad |= close(fd) != 0;
    if (!bad) return OQ_OK;
    oq_err_write(err, path, saved);
    oq_atomic_abort(af);
    return OQ_ERR_OUTPUT;
}

static oq_status write_whole(const char *path, const void *buf, size_t n, int overwrite, int no_sync, oq_err *err)
{
    oq_atomic_file af;
    oq_status st = write_tmp(&af, path, buf, n, overwrite, no_sync, 0, 0, err);
    return st ? st : atomic_place(&af, err);
}

oq_status oq_write_file_atomic(const char *path, const void *buf, size_t n, int overwrite, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED_N(err, n, buf);
    return write_whole(path, buf, n, overwrite, 0, err);
}

oq_status oq_write_file_nosync(const char *path, const void *buf, size_t n, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED_N(err, n, buf);
    return write_whole(path, buf, n, 1, 1, err);
}

/* Refuse what is not a regular file (read to its end, a device or a FIFO never
 * ends) and what is above the documented size limit. */
static oq_status check_stat(const char *path, const struct stat *sb, oq_err *err)
{
    const char *what = kind_of(sb->st_mode);
    if (what) return oq_err_set(err, OQ_ERR_IO, "%s: is %s, not a regular file", path, what);
    if ((uint64_t)sb->st_size > OQ_READ_MAX)
        return oq_err_set(err, OQ_ERR_IO, "%s: %llu bytes, above the limit of %llu (16 GiB)", path,
                          (unsigned long long)sb->st_size, (unsigned long long)OQ_READ_MAX);
    return OQ_OK;
}

oq_status oq_check_regular_file(const char *path, uint64_t *size, oq_err *err)
{
    OQ_NEED(err, path);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    oq_status st = check_stat(path, &sb, err);
    if (!st && size) *size = (uint64_t)sb.st_size;
    return st;
}

/* Read exactly `n` bytes (fewer only if the file shrank: *got says). */
static int read_all(int fd, unsigned char *b, size_t n, size_t *got)
{
    *got = 0;
    while (*got < n) {
        ssize_t r = read(fd, b + *got, n - *got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        *got += (size_t)r;
    }
    return 0;
}

static void file_id_of(const struct stat *sb, oq_file_id *id)
{
    *id = (oq_file_id){(uint64_t)sb->st_dev, (uint64_t)sb->st_ino, (uint64_t)sb->st_size, (int64_t)sb->st_ctim.tv_sec,
                       (int64_t)sb->st_ctim.tv_nsec, (uint32_t)sb->st_uid};
}

int oq_file_id_same(const oq_file_id *a, const oq_file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->ctime_s == b->ctime_s &&
           a->ctime_ns == b->ctime_ns;
}

int oq_file_id_fd(int fd, oq_file_id *id)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) return -1;
    file_id_of(&sb, id);
    return 0;
}

int oq_file_id_at(const char *path, oq_file_id *id)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    file_id_of(&sb, id);
    return 0;
}

oq_status oq_read_file(const char *path, unsigned char **buf, size_t *n, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, buf);
    OQ_NEED(err, n);
    return oq_read_file_id(path, buf, n, NULL, err);
}

/* `path` opened for reading into *fd with `flags` added (O_NOFOLLOW: a link is refused), *sb
 * its fstat; refused (and closed) unless it is a regular file. */
static oq_status open_regular(const char *path, int flags, int *fd, struct stat *sb, oq_err *err)
{
    /* O_NONBLOCK: opening a FIFO does not wait for a writer before it is refused */
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
    if (*fd < 0 && errno == ELOOP && (flags & O_NOFOLLOW))
        return oq_err_set(err, OQ_ERR_IO, "%s: is a symbolic link, not a regular file", path);
    if (*fd < 0) return oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    oq_status st = fstat(*fd, sb) != 0 ? oq_err_set(err, OQ_ERR_IO, "%s: cannot stat: %s", path, strerror(errno))
                                       : check_stat(path, sb, err);
    if (st) {
        close(*fd);
        *fd = -1;
    }
    return st;
}

oq_status oq_open_regular(const char *path, int *fd, uint64_t *size, oq_err *err)
{
    struct stat sb;
    oq_status st = open_regular(path, 0, fd, &sb, err);
    if (!st) *size = (uint64_t)sb.st_size;
    return st;
}

/* The whole file at `path` opened with `flags` added (O_NOFOLLOW: a link is refused). */
static oq_status read_whole(const char *path, int flags, unsigned char **buf, size_t *n, oq_file_id *id, oq_err *err)
{
    struct stat sb;
    int fd;
    oq_status st = open_regular(path, flags, &fd, &sb, err);
    if (st) return st;
    size_t size = (size_t)sb.st_size, len = 0;
    unsigned char *b = malloc(size + 1);
    if (!b) st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory (%zu bytes)", path, size);
    if (!st && read_all(fd, b, size, &len) != 0)
        st = oq_err_set(err, OQ_ERR_IO, "%s: read failed: %s", path, strerror(errno));
    if (!st && id) file_id_of(&sb, id);
    close(fd);
    if (st) {
        free(b);
        return st;
    }
    b[len] = 0;
    *buf = b;
    *n = len;
    return OQ_OK;
}

oq_status oq_read_file_id(const char *path, unsigned char **buf, size_t *n, oq_file_id *id, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, buf);
    OQ_NEED(err, n);
    return read_whole(path, 0, buf, n, id, err);
}

oq_status oq_read_own_file_id(const char *path, unsigned char **buf, size_t *n, oq_file_id *id, oq_err *err)
{
    return read_whole(path, O_NOFOLLOW, buf, n, id, err);
}

/* 1 when `path` is a regular file (not through a link) of exactly these n bytes. O_NONBLOCK: a
 * FIFO put there is not waited on (it was, until the worker's time limit), it is replaced. */
static int holds(const char *path, const void *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    int same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == (uint64_t)n;
    char chunk[16384];
    for (size_t done = 0; same && done < n;) {
        ssize_t got = read(fd, chunk, n - done < sizeof chunk ? n - done : sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        same = got > 0 && memcmp(chunk, (const char *)buf + done, (size_t)got) == 0;
        done += got > 0 ? (size_t)got : 0;
    }
    close(fd);
    return same;
}

oq_status oq_replace_file_nosync(const char *path, const void *buf, size_t n, oq_err *err)
{
    if (holds(path, buf, n)) return OQ_OK;
    if (unlink(path) != 0 && errno != ENOENT)
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot replace: %s", path, strerror(errno));
    return oq_write_file_nosync(path, buf, n, err);
}

/* tmp put at `path` unless a file is there (errno EEXIST): renamed with RENAME_NOREPLACE, or,
 * where the file system lacks it, linked (the file's change time then moves once more, as tmp
 * goes: a reader that took its identity in that instant is refused it, never misled). */
static int place_new(const char *tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return -1;
    if (link(tmp, path) != 0) return -1;
    unlink(tmp);
    return 0;
}

/* The file of other bytes at `path` replaced by tmp, under an exclusive lock on it: a writer
 * that waited on the lock finds the name holding these bytes and keeps them, so writers of the
 * same bytes replace a bad file once, never one another's. */
static int replace_other(const char *tmp, const char *path, const void *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) flock(fd, LOCK_EX); /* not there or a link: nothing to wait for */
    int rc = holds(path, buf, n) ? unlink(tmp) : rename(tmp, path), saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
    return rc;
}

oq_status oq_install_file_nosync(const char *path, const void *buf, size_t n, mode_t add, oq_err *err)
{
    if (holds(path, buf, n)) return OQ_OK;
    oq_atomic_file af;
    oq_status st = write_tmp(&af, path, buf, n, 1, 1, 1, add, err); /* its mode set before it is in place */
    if (st) return st;
    int rc = place_new(af.tmp, path);
    if (rc != 0 && errno == EEXIST) rc = replace_other(af.tmp, path, buf, n);
    if (rc == 0) {
        atomic_reset(&af);
        return OQ_OK;
    }
    st = oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot rename into place: %s", path, strerror(errno));
    oq_atomic_abort(&af);
    return st;
}

oq_status oq_mkdirs(const char *path, oq_err *err)
{
    OQ_NEED(err, path);
    char *p = strdup(path);
    if (!p) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (char *s = p + 1;; s++) {
        int end = *s == 0;
        if (*s == '/' || end) {
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) { /* the umask decides */
                oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot create directory: %s", p, strerror(errno));
                free(p);
                return OQ_ERR_OUTPUT;
            }
            if (end) break;
            *s = '/';
        }
    }
    free(p);
    return OQ_OK;
}

oq_status oq_mkdir_in(const char *parent, const char *name, oq_err *err)
{
    OQ_NEED(err, parent);
    OQ_NEED(err, name);
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0) return oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot open directory: %s", parent, strerror(errno));
    oq_status st = OQ_OK;
    int made = mkdirat(pfd, name, 0777) == 0; /* the umask decides */
    if (!made && errno != EEXIST) {
        st = oq_err_set(err, OQ_ERR_OUTPUT, "%s/%s: cannot create directory: %s", parent, name, strerror(errno));
    } else {
        int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), saved = errno;
        struct stat sb;
        if (fd >= 0) close(fd);
        else if (fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
            st = oq_err_set(err, OQ_ERR_INVALID_ARG,
                            "%s/%s: is a symbolic link: ortqual does not write through links in an output folder "
                            "(remove it)", parent, name);
        else if (saved == ENOTDIR)
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "%s/%s: cannot use as a directory: %s", parent, name,
                            strerror(saved));
        else /* the system's (no descriptor left: EMFILE): the folder just made goes again */
            st = oq_err_set(err, OQ_ERR_OUTPUT, "%s/%s: cannot open directory: %s%s", parent, name, strerror(saved),
                            saved == EMFILE ? " (EMFILE: raise ulimit -n)" : "");
        if (fd < 0 && made) unlinkat(pfd, name, AT_REMOVEDIR);
    }
    close(pfd);
    return st;
}

int oq_file_same_bytes(const char *p, const char *q)
{
    FILE *a = fopen(p, "rb"), *b = fopen(q, "rb");
    int same = a && b;
    char x[16384], y[16384];
    for (size_t n; same && (n = fread(x, 1, sizeof x, a)) > 0;) same = fread(y, 1, n, b) == n && !memcmp(x, y, n);
    same = same && !ferror(a) && fgetc(b) == EOF;
    if (a) fclose(a);
    if (b) fclose(b);
    return same;
}

static int location_relative(const char *loc)
{
    if (!loc || !*loc || loc[0] == '/') return 0;
    for (const char *p = loc; p; p = strchr(p, '/'), p = p ? p + 1 : NULL)
        if (!strncmp(p, "..", 2) && (p[2] == '/' || !p[2])) return 0;
    return 1;
}

/* Whether resolved path f lies inside resolved folder d. */
static int under(const char *d, const char *f)
{
    size_t n = strlen(d);
    return !strncmp(f, d, n) && (f[n] == '/' || (n == 1 && d[0] == '/'));
}

/* Whether `path`, its symbolic links followed, lies inside `dir`; -1 when `path` is absent. */
static int inside_dir(const char *dir, const char *path)
{
    char *d = realpath(dir, NULL), *f = d ? realpath(path, NULL) : NULL;
    int absent = d && !f && errno == ENOENT;
    int in = f && under(d, f);
    free(d);
    free(f);
    return absent ? -1 : in;
}

/* Whether `path`, its symbolic links followed, is the folder `dir` itself. */
static int same_folder(const char *dir, const char *path)
{
    char *d = realpath(dir, NULL), *f = d ? realpath(path, NULL) : NULL;
    int same = f && !strcmp(d, f);
    free(d);
    free(f);
    return same;
}

/* Whether the file open on fd lies inside `dir`: the kernel's name of the object opened
 * (/proc/self/fd), so no link changed since the check can put another file behind the
 * descriptor. Without /proc: fd is the file `path` resolves to now, by device and inode. */
static int fd_inside_dir(int fd, const char *dir, const char *path)
{
    char link[64], at[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, at, sizeof at - 1);
    if (k > 0 && (size_t)k < sizeof at - 1 && at[0] == '/') {
        at[k] = 0;
        char *d = realpath(dir, NULL);
        int in = d && under(d, at);
        free(d);
        return in;
    }
    struct stat a, b;
    return inside_dir(dir, path) == 1 && fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

oq_status oq_ext_location_check(const char *dir, const char *loc, oq_err *err)
{
    if (!location_relative(loc))
        return oq_err_set(err, OQ_ERR_FORMAT, "external data location '%s' is not a path inside the model's folder",
                          loc ? loc : "");
    if (!dir) return OQ_OK;
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, loc) < 0) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    int in = inside_dir(dir, path), itself = !in && same_folder(dir, path);
    free(path);
    if (itself) /* ".", "a/..": no link involved, so not said to be one */
        return oq_err_set(err, OQ_ERR_FORMAT, "external data location '%s' is the model's folder, not a file inside it",
                          loc);
    if (!in)
        return oq_err_set(err, OQ_ERR_FORMAT, "external data location '%s' leads out of the model's folder through "
                          "a symbolic link (ORT refuses it)", loc);
    return OQ_OK;
}

int oq_ext_open(const char *dir, const char *loc, oq_err *err)
{
    if (oq_ext_location_check(dir, loc, err)) return -1; /* first: a link out is never opened */
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, loc) < 0) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory"), -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int saved = errno;
        oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(saved));
        free(path);
        errno = saved;
        return -1;
    }
    int in = fd_inside_dir(fd, dir, path);
    free(path);
    if (in) return fd;
    close(fd);
    oq_err_set(err, OQ_ERR_FORMAT, "external data location '%s' leads out of the model's folder through a symbolic "
               "link (ORT refuses it)", loc);
    return -1;
}

/* Why a node is not one to write in place, as lstat or fstat saw it; OQ_OK when it is. */
static oq_status in_place_refused(const char *path, const struct stat *sb, oq_err *err)
{
    if (S_ISLNK(sb->st_mode))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: is a symbolic link: ortqual does not write through links in "
                          "an output folder (remove it)", path);
    if (kind_of(sb->st_mode))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: is %s, not a regular file (remove it)", path,
                          kind_of(sb->st_mode));
    if (sb->st_nlink > 1) /* another name of the file: writing here writes that file */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: has %ju hard links: ortqual does not write through links in "
                          "an output folder (remove it)", path, (uintmax_t)sb->st_nlink);
    if (sb->st_uid != geteuid())
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: owned by uid %ju, not by this user (uid %ju): ortqual writes "
                          "in place only files of its own (remove it)", path, (uintmax_t)sb->st_uid,
                          (uintmax_t)geteuid());
    return OQ_OK;
}

/* An open that failed: the node's own fault when lstat finds one (a link, a FIFO with no
 * reader: ENXIO, another user's file: EACCES), else the system's (errno kept). */
static oq_status open_failed(const char *path, oq_err *err)
{
    int saved = errno;
    struct stat sb;
    oq_status st = saved == EEXIST || lstat(path, &sb) != 0 ? OQ_OK : in_place_refused(path, &sb, err);
    if (!st) st = oq_err_write(err, path, saved);
    errno = saved;
    return st;
}

oq_status oq_open_in_place(const char *path, int flags, mode_t mode, int *out, oq_err *err)
{
    *out = -1;
    int trunc = flags & O_TRUNC;
    /* O_NONBLOCK: a FIFO is not waited on; on the regular file kept it changes nothing */
    flags = (flags & ~(O_TRUNC | O_CREAT | O_EXCL)) | O_NOFOLLOW | O_NONBLOCK;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        fd = open(path, flags);
        if (fd < 0 && errno == ENOENT) fd = open(path, flags | O_CREAT | O_EXCL, mode);
        if (fd < 0 && errno != EEXIST) break; /* EEXIST: made meanwhile, opened again and checked */
    }
    if (fd < 0) return open_failed(path, err);
    struct stat sb;
    oq_status st = fstat(fd, &sb) ? oq_err_write(err, path, errno) : in_place_refused(path, &sb, err);
    if (!st && trunc && ftruncate(fd, 0) != 0) st = oq_err_write(err, path, errno);
    if (!st) *out = fd;
    else close(fd);
    return st;
}

oq_status oq_fopen_scratch(const char *path, FILE **f, oq_err *err)
{
    int fd;
    *f = NULL;
    oq_status st = oq_open_in_place(path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0666, &fd, err);
    if (!st && !(*f = fdopen(fd, "w"))) {
        st = oq_err_write(err, path, errno);
        close(fd);
    }
    return st;
}
