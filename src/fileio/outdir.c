/* A run's output folder, checked before its work. */
#include "ortqual/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio/fileio-impl.h"
#include "status/args-impl.h"

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

/* A lock file of oq_outdir_lock_create (".ortqual*.lock"): neither a run's file nor the user's,
 * never in the way. */
static int lock_name(const char *name)
{
    size_t n = strlen(name);
    return n >= 13 && !strncmp(name, ".ortqual", 8) && !strcmp(name + n - 5, ".lock");
}

/* What a run killed here (SIGKILL, a crash) leaves behind it, with no summary.json: its work
 * folder (a real one: a link there is not the tool's), its batches and saved outputs, a
 * temporary of an atomic write (its pid in the name). */
static int left_by_run(const char *dir, const char *name)
{
    char path[4352];
    struct stat sb;
    size_t n = strlen(name);
    int batch = n > 4 && !strcmp(name + n - 4, ".npz") &&
                (!strncmp(name, "inputs_", 7) || !strncmp(name, "expected_", 9) || !strncmp(name, "outputs_", 8));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int work = !strcmp(name, ".work") && lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
    return batch || work || oq_temp_name_is(name, NULL, 0);
}

/* An earlier run's summary.json, or any other entry than `ignore`, is in the way unless forced;
 * an interrupted run's leftovers are said as such (forcing is what clears them), but not the
 * batches of a prepared split (shards/plan.json), which wait for their shards. */
static oq_status check_empty(const char *dir, const char *ignore, oq_err *err)
{
    char path[4096], other[256] = "", left[256] = "";
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (access(path, F_OK) == 0) return oq_err_set(err, OQ_ERR_IO, "%s exists (overwrite it, or choose another output folder)", path);
    snprintf(path, sizeof path, "%s/shards/plan.json", dir);
    int split = access(path, F_OK) == 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && !*left && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || (ignore && !strcmp(e->d_name, ignore)) ||
            lock_name(e->d_name))
            continue;
        if (!*other) snprintf(other, sizeof other, "%s", e->d_name);
        if (!split && left_by_run(dir, e->d_name)) snprintf(left, sizeof left, "%s", e->d_name);
    }
    if (d) closedir(d);
    if (*left)
        return oq_err_set(err, OQ_ERR_IO, "%s: an earlier run here was interrupted (it left '%s' and no summary.json): "
                                          "forcing clears what it left, or choose another output folder", dir, left);
    if (*other)
        return oq_err_set(err, OQ_ERR_IO, "%s: not empty (it holds '%s') and no earlier run's summary.json: "
                                          "overwrite to write into it, or choose another output folder", dir, other);
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

oq_status oq_check_outdir(const char *dir, int force, const char *ignore, oq_err *err)
{
    if (!dir || !*dir) return oq_err_set(err, OQ_ERR_INVALID_ARG, "an output folder is empty");
    size_t n = strlen(dir);
    if (n > OQ_OUTDIR_MAX) /* found before the work, not at its first file */
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%s: path too long: %zu bytes, and a run writes files up to %d bytes below its folder: "
                          "the system takes paths of at most %d bytes", dir, n, OQ_OUTDIR_ROOM, PATH_MAX - 1);
    oq_status st = oq_check_outdir_kind(dir, err);
    if (!st && !force) st = check_empty(dir, ignore, err);
    return st ? st : check_writable(dir, err);
}

size_t oq_outdir_forget(const char *dir, const char *const *names, size_t n_names, char *said, size_t said_size)
{
    char path[PATH_MAX];
    size_t went = 0;
    for (size_t i = 0; dir && names && i < n_names; i++) {
        if (!names[i] || snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path || unlink(path) != 0)
            continue;
        went++;
        size_t len = said && said_size ? strnlen(said, said_size - 1) : 0;
        if (said && said_size) snprintf(said + len, said_size - len, "%s%s", len ? ", " : "", names[i]);
    }
    return went;
}

struct oq_outdir_lock {
    int fd;
    int shared;          /* held with the shards of one split (oq_outdir_lock_create_shared) */
    char path[4096];     /* the lock file */
    char dir[4096];      /* the folder */
    size_t made_from;    /* the length of the first folder of dir this lock made; 0: none */
    pthread_t owner;     /* the thread that took it: only its own later calls find it held */
    oq_outdir_lock *next; /* in `held` */
};

/* The locks this process holds. A forked child (a worker forked without exec) shares each lock's
 * open file, and with it the flock: a worker that outlived a killed run would keep the folder
 * locked. The child closes them (the parent's lock stays: its descriptor is still open) and
 * forgets them, so that it never removes a lock file that is its parent's. */
static oq_outdir_lock *held;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_in_child(void)
{
    for (oq_outdir_lock *l = held; l; l = l->next) {
        close(l->fd);
        l->fd = -1;
    }
    held = NULL;
    pthread_mutex_init(&held_mu, NULL); /* a copy of one held by another thread would stay held */
}

static void atfork_register(void) { pthread_atfork(NULL, NULL, forget_in_child); }

static void hold(oq_outdir_lock *lk, int on)
{
    pthread_once(&atfork_once, atfork_register);
    pthread_mutex_lock(&held_mu);
    oq_outdir_lock **p = &held;
    while (*p && *p != lk) p = &(*p)->next;
    if (on && !*p) {
        lk->next = held;
        held = lk;
    } else if (!on && *p) {
        *p = lk->next;
    }
    pthread_mutex_unlock(&held_mu);
}

/* The length of the shortest prefix of `dir` (at a '/' or its end) that is not there; 0 when
 * dir is there. */
static size_t first_missing(const char *dir)
{
    char path[4096];
    struct stat sb;
    size_t n = strlen(dir);
    for (size_t i = 1; i <= n && i < sizeof path; i++) {
        if (i < n && dir[i] != '/') continue;
        snprintf(path, sizeof path, "%.*s", (int)i, dir);
        if (stat(path, &sb) != 0) return i;
    }
    return 0;
}

/* What a holder wrote into its lock file, its pid or SHARED_MARK (just after taking it: read
 * again for a moment while the file is still empty); "" when nothing can be read. */
#define SHARED_MARK "shards\n"
static void holder_of(int fd, char *buf, size_t size)
{
    *buf = 0;
    for (int tries = 0; tries < 200; tries++) {
        ssize_t n = pread(fd, buf, size - 1, 0);
        if (n > 0) {
            buf[n] = 0;
            return;
        }
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

static oq_status lock_busy(const oq_outdir_lock *lk, const char *text, oq_err *err)
{
    char who[64] = "";
    if (!strcmp(text, SHARED_MARK))
        return oq_err_set(err, OQ_ERR_IO, "%s: in use by the shards of a split run (holding %s): wait for them to end "
                          "or choose another output folder", lk->dir, lk->path);
    long pid = strtol(text, NULL, 10);
    if (pid > 0) snprintf(who, sizeof who, "pid %ld, ", pid);
    return oq_err_set(err, OQ_ERR_IO, "%s: in use by another ortqual run (%sholding %s): wait for it to end or "
                      "choose another output folder", lk->dir, who, lk->path);
}

/* One try at the lock file: 1 taken (lk->fd set), 0 gone in the meantime (its holder released
 * it: try again, unless `last`), -1 an error (in *st) or no lock to be had here (*st OQ_OK). */
static int lock_try(oq_outdir_lock *lk, int last, oq_status *st, oq_err *err)
{
    /* truncated and written: never through a link (a hard link's other name lost its data to the
     * pid), nor another user's file. 0666 less the umask, as a run's other files. */
    int fd;
    oq_err why = OQ_ERR_INIT;
    struct stat a, b;
    oq_status opened = oq_open_in_place(lk->path, O_RDWR | O_CLOEXEC, 0666, &fd, &why);
    *st = OQ_OK;
    if (opened == OQ_ERR_INVALID_ARG)
        *st = oq_err_set(err, opened, "%s", why.msg);
    else if (opened && (errno == EMFILE || errno == ENFILE))
        *st = oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot open: %s (%s: no file descriptor is left: raise ulimit -n)",
                         lk->path, strerror(errno), errno == EMFILE ? "EMFILE" : "ENFILE");
    if (opened) return -1; /* otherwise a folder that cannot be written: the run's checks say so */
    if (fstat(fd, &a) != 0) {
        close(fd);
        return -1;
    }
    if (flock(fd, (lk->shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        char text[32] = "";
        if (busy) holder_of(fd, text, sizeof text);
        close(fd); /* not busy: a file system without locks, the run goes on unlocked */
        if (busy && lk->shared && !last && !strcmp(text, SHARED_MARK)) {
            /* the last shard ending holds it whole for a moment, to remove it (oq_outdir_lock_free) */
            nanosleep(&(struct timespec){0, 1000000}, NULL);
            return 0;
        }
        if (busy) *st = lock_busy(lk, text, err);
        return -1;
    }
    /* taken; the holder before may have removed the file as this one opened it */
    if (stat(lk->path, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
        close(fd);
        return 0;
    }
    /* the shards' holders all write the same mark: none writes over another's word */
    char pid[32];
    int n = lk->shared ? snprintf(pid, sizeof pid, SHARED_MARK) : snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    ssize_t wrote = ftruncate(fd, 0) == 0 ? pwrite(fd, pid, (size_t)n, 0) : -1;
    (void)wrote; /* on a full disk the pid goes unsaid; the lock holds all the same */
    lk->fd = fd;
    return 1;
}

int oq_outdir_lock_held(const char *dir, const char *name, int shared)
{
    char path[PATH_MAX];
    struct stat want, have;
    if (snprintf(path, sizeof path, "%s/%s", dir, name ? name : OQ_OUTDIR_LOCK) >= (int)sizeof path ||
        stat(path, &want) != 0)
        return 0;
    int found = 0;
    pthread_mutex_lock(&held_mu);
    for (const oq_outdir_lock *l = held; l && !found; l = l->next) /* by file: "d" and "./d" are one */
        found = pthread_equal(l->owner, pthread_self()) && (!l->shared || shared) && fstat(l->fd, &have) == 0 &&
                have.st_dev == want.st_dev && have.st_ino == want.st_ino;
    pthread_mutex_unlock(&held_mu);
    return found;
}

static oq_status lock_create(const char *dir, const char *name, int shared, oq_outdir_lock **lock, oq_err *err)
{
    *lock = NULL;
    oq_outdir_lock *lk = calloc(1, sizeof *lk);
    if (!lk) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    lk->fd = -1;
    lk->shared = shared;
    lk->owner = pthread_self();
    snprintf(lk->dir, sizeof lk->dir, "%s", dir);
    snprintf(lk->path, sizeof lk->path, "%s/%s", dir, name ? name : OQ_OUTDIR_LOCK);
    lk->made_from = first_missing(dir);
    oq_err ignored = OQ_ERR_INIT;
    oq_status st = OQ_OK;
    int got = 0;
    if (*dir && strlen(lk->path) < PATH_MAX && !oq_check_outdir_kind(dir, &ignored) && !oq_mkdirs(dir, &ignored))
        for (int tries = 0; tries < 100 && !(got = lock_try(lk, tries == 99, &st, err));) tries++;
    if (got == 1) {
        hold(lk, 1);
        if (!shared) oq_lock_hold(lk->path); /* a shared one may still be the other shards' */
        *lock = lk;
        return OQ_OK;
    }
    oq_outdir_lock_free(lk); /* the folder it made goes */
    return st;
}

oq_status oq_outdir_lock_create(const char *dir, const char *name, oq_outdir_lock **lock, oq_err *err)
{
    OQ_NEED(err, dir);
    OQ_NEED(err, lock);
    return lock_create(dir, name, 0, lock, err);
}

oq_status oq_outdir_lock_create_shared(const char *dir, oq_outdir_lock **lock, oq_err *err)
{
    OQ_NEED(err, dir);
    OQ_NEED(err, lock);
    return lock_create(dir, NULL, 1, lock, err);
}

void oq_outdir_lock_free(oq_outdir_lock *lk)
{
    if (!lk) return;
    hold(lk, 0);
    if (!lk->shared && lk->fd >= 0) oq_output_release(lk->path);
    /* removed before the release: a run that opens it meanwhile finds it gone (lock_try). A shared
     * one only by the last shard to end, the one that can take it whole: a file made anew while
     * another shard holds the old one would let an exclusive run in beside that shard. */
    if (lk->fd >= 0 && (!lk->shared || flock(lk->fd, LOCK_EX | LOCK_NB) == 0)) unlink(lk->path);
    if (lk->fd >= 0) close(lk->fd);
    /* the folders it made, from the deepest up, while they are empty */
    size_t len = strlen(lk->dir);
    for (size_t n = len; lk->made_from && n >= lk->made_from; n--) {
        if (n < len && lk->dir[n] != '/') continue;
        lk->dir[n] = 0;
        if (rmdir(lk->dir) != 0) break;
    }
    free(lk);
}
