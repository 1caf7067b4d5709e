/* The ORT library a process has mapped, named by that mapping: the path and digest of the file
 * at a path now are another library's once a copy was renamed over it or a symlink re-pointed
 * (a worker forked from a parent that loaded it runs the inherited mapping whatever the path
 * names since). The kernel's record of the mapping (/proc/self/maps) gives its device, inode and
 * path; the digest is of that inode only, taken once per process and inherited by forked
 * children with the rest of this record. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "runtime/runtime-impl.h"

#define IDENT_MAX 8
#define DELETED_MARK " (deleted)"

typedef struct lib_ident {
    uintptr_t base; /* where the file's first page is mapped (dladdr's dli_fbase) */
    dev_t dev;
    ino_t ino;
    int state; /* IDENT_* */
    int err;   /* why the mapped file could not be read (IDENT_REPLACED), else 0: another file is there */
    char path[PATH_MAX];
    char sha[65];
} lib_ident;

enum { IDENT_UNHASHED, IDENT_HASHED, IDENT_REPLACED };

static struct {
    pthread_mutex_t lock;
    lib_ident e[IDENT_MAX];
    size_t n;
} g_ids = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};

/* The /proc/self/maps line of the mapping that holds `addr`: its device, inode and path (the
 * kernel's, with " (deleted)" dropped: the name the file had). 0 where none is readable. */
static int mapping_of(uintptr_t addr, lib_ident *id)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[PATH_MAX + 128];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        unsigned maj, min;
        unsigned long long ino;
        int at = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %x:%x %llu %n", &lo, &hi, &maj, &min, &ino, &at) < 5 ||
            addr < lo || addr >= hi || !at || line[at] != '/')
            continue;
        line[strcspn(line, "\n")] = '\0';
        size_t n = strlen(line + at), mark = strlen(DELETED_MARK);
        if (n > mark && !strcmp(line + at + n - mark, DELETED_MARK)) line[at + n - mark] = '\0';
        id->dev = makedev(maj, min);
        id->ino = (ino_t)ino;
        snprintf(id->path, sizeof id->path, "%s", line + at);
        found = 1;
    }
    if (f) fclose(f);
    return found;
}

/* Without /proc: the file at `fallback` now (resolved), as the loader was handed it. */
static void file_now(const char *fallback, lib_ident *id)
{
    struct stat sb;
    char buf[PATH_MAX];
    snprintf(id->path, sizeof id->path, "%s", realpath(fallback, buf) ? buf : fallback);
    if (stat(id->path, &sb) == 0) id->dev = sb.st_dev, id->ino = sb.st_ino;
}

int oq_lib_ident_find(uintptr_t base, const char *fallback)
{
    pthread_mutex_lock(&g_ids.lock);
    int k = -1;
    for (size_t i = 0; i < g_ids.n && k < 0; i++)
        if (g_ids.e[i].base == base) k = (int)i;
    if (k < 0 && g_ids.n < IDENT_MAX) {
        lib_ident *id = &g_ids.e[g_ids.n];
        memset(id, 0, sizeof *id);
        id->base = base;
        if (!mapping_of(base, id)) file_now(fallback, id);
        k = (int)g_ids.n++;
    }
    pthread_mutex_unlock(&g_ids.lock);
    return k;
}

const char *oq_lib_ident_path(int k)
{
    return k >= 0 && (size_t)k < IDENT_MAX ? g_ids.e[k].path : NULL;
}

/* The mapped file's bytes, read through a descriptor of its path only where that is still the
 * mapped inode (a copy renamed over it since is another file). */
static void ident_hash(lib_ident *id)
{
    int fd = open(id->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    id->err = fd < 0 ? errno : 0;
    int same = fd >= 0 && fstat(fd, &sb) == 0 && sb.st_dev == id->dev && sb.st_ino == id->ino;
    id->state = same && !oq_sha256_fd(fd, id->path, id->sha, NULL) ? IDENT_HASHED : IDENT_REPLACED;
    if (same && id->state == IDENT_REPLACED) id->err = EIO; /* the mapped file, unreadable */
    if (fd >= 0) close(fd);
}

int oq_lib_ident_sha256(int k, char hex[65], char *why, size_t n)
{
    hex[0] = '\0';
    if (why && n) why[0] = '\0';
    if (k < 0 || (size_t)k >= IDENT_MAX) {
        if (why && n)
            snprintf(why, n, "more ONNX Runtime libraries loaded than this process records: the bytes that ran "
                             "are not named");
        return 0;
    }
    pthread_mutex_lock(&g_ids.lock);
    lib_ident *id = &g_ids.e[k];
    if (id->state == IDENT_UNHASHED) ident_hash(id);
    int known = id->state == IDENT_HASHED;
    if (known) memcpy(hex, id->sha, 65);
    else if (why && n && id->err)
        snprintf(why, n, "the library at %s cannot be read (%s): the bytes that ran are not named",
                 id->path, strerror(id->err));
    else if (why && n)
        snprintf(why, n, "the library at %s was replaced after it was loaded: the bytes that ran are not named",
                 id->path);
    pthread_mutex_unlock(&g_ids.lock);
    return known;
}
