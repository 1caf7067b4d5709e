/* The temporary files this process is writing ("<path>.tmp.<pid>.XXXXXX" until renamed into place),
 * held where a signal handler can remove them: a Ctrl-C or a batch system's SIGTERM in the
 * middle of writing a 50 MB model left the half-written temporary behind.
 *
 * A handler may interrupt any thread anywhere (holding malloc's lock, half-way through a write
 * here), so it takes no lock and allocates nothing: the list is a stack of slots that are never
 * freed, only taken, filled, published and given back, each under a sequence number that is odd
 * while its name is being written (a seqlock: the handler copies the name and keeps the copy only
 * when the number did not move). A slot holds its own copy of the name (the writer's string is
 * freed while a handler may read it), PATH_MAX bytes: no longer name can be created. Its pid says
 * whose it is: a forked child inherits its parent's slots and must not remove the parent's files.
 * The same slots hold the outputs of a set not yet complete (oq_atomic_hold_output): a signal
 * between two renames of a run's files left the new summary.json beside the previous run's
 * summary.csv. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"

/* The one spelling of a temporary's name: "<path>" TEMP_MARK "<pid>.", then mkstemp's six
 * characters. The pid says whose it is: a process that cleans up after another (the figures'
 * child) removes that one's only, never those of another process writing in the same folder. */
#define TEMP_MARK ".tmp."
#define TEMP_RANDOM "XXXXXX"
#define RANDOM_LEN (sizeof TEMP_RANDOM - 1)
#define MARK_LEN (sizeof TEMP_MARK - 1)

char *oq_temp_template(const char *path)
{
    size_t n = strlen(path) + MARK_LEN + 21 + RANDOM_LEN + 1;
    char *tmp = malloc(n);
    if (tmp) snprintf(tmp, n, "%s" TEMP_MARK "%ld." TEMP_RANDOM, path, (long)getpid());
    return tmp;
}

int oq_temp_name_is(const char *name, const char *base, pid_t pid)
{
    size_t n = strlen(name);
    if (n < MARK_LEN + 2 + RANDOM_LEN || name[n - RANDOM_LEN - 1] != '.') return 0;
    for (size_t i = n - RANDOM_LEN; i < n; i++)
        if (!isalnum((unsigned char)name[i])) return 0;
    size_t digits = n - RANDOM_LEN - 1; /* the pid's digits end here */
    size_t from = digits;
    while (from > 0 && isdigit((unsigned char)name[from - 1])) from--;
    if (from == digits || from < MARK_LEN || strncmp(name + from - MARK_LEN, TEMP_MARK, MARK_LEN)) return 0;
    if (pid > 0 && strtol(name + from, NULL, 10) != (long)pid) return 0;
    size_t b = from - MARK_LEN;
    return !base || (strlen(base) == b && !strncmp(name, base, b));
}

enum { SLOT_FREE, SLOT_LIVE, SLOT_TAKEN };
enum { KIND_TEMP, KIND_OUTPUT, KIND_DIR, KIND_SCRATCH, KIND_LOCK };

typedef struct temp_slot {
    struct temp_slot *next; /* set before the slot is pushed, never changed */
    atomic_int state;
    atomic_uint seq;        /* odd while path, pid and kind are written */
    pid_t pid;
    int kind;
    char path[PATH_MAX];
} temp_slot;

static _Atomic(temp_slot *) slots;

/* A free slot taken (SLOT_TAKEN), or a new one pushed; NULL when out of memory. */
static temp_slot *slot_take(void)
{
    for (temp_slot *s = atomic_load(&slots); s; s = s->next) {
        int free_state = SLOT_FREE;
        if (atomic_compare_exchange_strong(&s->state, &free_state, SLOT_TAKEN)) return s;
    }
    temp_slot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    atomic_init(&s->state, SLOT_TAKEN);
    s->next = atomic_load(&slots);
    while (!atomic_compare_exchange_weak(&slots, &s->next, s)) {}
    return s;
}

static void slot_hold(const char *path, int kind)
{
    size_t n = strlen(path);
    temp_slot *s = n < PATH_MAX ? slot_take() : NULL;
    if (!s) return; /* not removed on a signal: no worse than before */
    atomic_fetch_add(&s->seq, 1);
    memcpy(s->path, path, n + 1);
    s->pid = getpid();
    s->kind = kind;
    atomic_fetch_add(&s->seq, 1);
    atomic_store(&s->state, SLOT_LIVE);
}

void oq_temp_hold(const char *tmp)
{
    slot_hold(tmp, KIND_TEMP);
}

void oq_temp_release(const char *tmp)
{
    pid_t me = getpid();
    for (temp_slot *s = atomic_load(&slots); s; s = s->next)
        if (atomic_load(&s->state) == SLOT_LIVE && s->pid == me && s->kind == KIND_TEMP && !strcmp(s->path, tmp)) {
            atomic_store(&s->state, SLOT_FREE);
            return;
        }
}

void oq_output_release(const char *path)
{
    pid_t me = getpid();
    for (temp_slot *s = atomic_load(&slots); s; s = s->next)
        if (atomic_load(&s->state) == SLOT_LIVE && s->pid == me && s->kind != KIND_TEMP && !strcmp(s->path, path)) {
            atomic_store(&s->state, SLOT_FREE);
            return;
        }
}

void oq_atomic_hold_output(const char *path, int dir)
{
    if (path) slot_hold(path, dir ? KIND_DIR : KIND_OUTPUT);
}

void oq_scratch_hold(const char *dir)
{
    slot_hold(dir, KIND_SCRATCH);
}

void oq_lock_hold(const char *path)
{
    slot_hold(path, KIND_LOCK);
}

void oq_atomic_keep_outputs(void)
{
    pid_t me = getpid();
    for (temp_slot *s = atomic_load(&slots); s; s = s->next)
        if (atomic_load(&s->state) == SLOT_LIVE && s->pid == me && s->kind != KIND_TEMP && s->kind != KIND_LOCK)
            atomic_store(&s->state, SLOT_FREE);
}

/* The kernel's record of one entry (getdents64(2)): glibc's own wrapper needs 2.30, older than the
 * 2.28 of RHEL 8 and manylinux_2_28 that ORT's builds target. */
struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* A scratch folder's entries (names another picked), then it: the raw getdents64 syscall, as
 * opendir allocates. */
static void remove_scratch(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    _Alignas(struct linux_dirent64) char buf[4096];
    for (long n; (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;)
        for (long at = 0; at < n; at += ((struct linux_dirent64 *)(buf + at))->d_reclen) {
            const char *name = ((struct linux_dirent64 *)(buf + at))->d_name;
            if (strcmp(name, ".") && strcmp(name, "..")) unlinkat(fd, name, 0);
        }
    close(fd);
    rmdir(path);
}

/* The files and scratch folders (dirs 0) or the folders (dirs 1, after their files: rmdir takes
 * an empty one only). */
static void remove_held(int dirs)
{
    pid_t me = getpid();
    char path[PATH_MAX];
    for (temp_slot *s = atomic_load(&slots); s; s = s->next) {
        unsigned before = atomic_load(&s->seq);
        if (atomic_load(&s->state) != SLOT_LIVE || (before & 1) || s->pid != me) continue;
        int kind = s->kind;
        memcpy(path, s->path, sizeof path);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load(&s->seq) != before || !memchr(path, 0, sizeof path) || (kind == KIND_DIR) != dirs) continue;
        if (dirs) rmdir(path);
        else if (kind == KIND_SCRATCH) remove_scratch(path);
        else unlink(path);
    }
}

void oq_atomic_remove_temporaries(void)
{
    remove_held(0);
    remove_held(1);
}

/* The temporaries (and the held outputs) removed, then the process ends by the signal, as its default action would
 * have ended it (SA_RESETHAND put the default back, SA_NODEFER lets it through at once). */
static void remove_and_raise(int sig)
{
    oq_atomic_remove_temporaries();
    raise(sig);
}

void oq_atomic_catch_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa = {.sa_handler = remove_and_raise, .sa_flags = SA_RESETHAND | SA_NODEFER};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        /* one ignored (nohup, a background job of a script) stays ignored: it ends nothing */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(sigs[i], &sa, NULL);
    }
}
