#include "ortqual/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "status/args-impl.h"

/* Keeps the last `cap` bytes written. */
struct tail {
    char *buf;
    size_t cap, len;
};

static void tail_add(struct tail *t, const char *p, size_t n)
{
    if (n >= t->cap) {
        memcpy(t->buf, p + n - t->cap, t->cap);
        t->len = t->cap;
        return;
    }
    if (t->len + n > t->cap) {
        size_t drop = t->len + n - t->cap;
        memmove(t->buf, t->buf + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->buf + t->len, p, n);
    t->len += n;
}

/* What the child runs: argv[0] executed, or fn(ctx) in the forked copy of this process. */
typedef struct child_task {
    char *const *argv;
    int (*fn)(void *ctx);
    void *ctx;
} child_task;

/* Descriptors marked close-on-exec are closed, as exec would: the child holds none of ours. */
static void close_cloexec_fds(void)
{
    int fds[256], n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) && n < (int)(sizeof fds / sizeof *fds);) {
        int fd = atoi(e->d_name);
        if (fd > 2 && fd != dirfd(d)) fds[n++] = fd;
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        int flags = fcntl(fds[i], F_GETFD);
        if (flags >= 0 && (flags & FD_CLOEXEC)) close(fds[i]);
    }
}

/* The forked child starts as an exec'd one would: every caught signal back to its default
 * action (ignored ones stay ignored), no alternate stack, the caller's mask; then runs fn. */
static void child_fork(const child_task *t, const sigset_t *mask)
{
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
            signal(sig, SIG_DFL);
    }
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    close_cloexec_fds();
    int rc = t->fn(t->ctx);
    fflush(NULL);
    _exit(rc);
}

/* After fork. Its own group, so a timeout kills its children too; SIGKILL when the parent
 * dies, checked after setting it (the parent may have died before). */
static void child_start(const child_task *t, int errfd, pid_t parent, const sigset_t *mask)
{
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    dup2(errfd, 2);
    close(errfd);
    if (t->fn) child_fork(t, mask);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execv(t->argv[0], t->argv);
    dprintf(2, "cannot execute %s: %s\n", t->argv[0], strerror(errno));
    _exit(127);
}

/* The child of `t` forked with its stderr on errfd; its pid (-1: fork failed). Signals are
 * blocked across the fork: one that comes before the child has its default actions waits for
 * them instead of running the parent's handler in the child. */
static pid_t fork_child(const child_task *t, int errfd)
{
    fflush(NULL); /* the child must not repeat our buffered output */
    pid_t parent = getpid();
    sigset_t all, mask;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &mask);
    pid_t pid = fork();
    if (pid == 0) child_start(t, errfd, parent, &mask);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    return pid;
}

/* What the child writes to stderr: the tail and echo, except watched lines. */
struct sink {
    struct tail *t;
    int echo;
    const char *prefix;
    void (*on_line)(void *ctx, const char *line);
    void *ctx;
    char line[1024]; /* the current line while it may still turn out to be watched */
    size_t n;
};

static void sink_plain(struct sink *s, const char *p, size_t n)
{
    tail_add(s->t, p, n);
    if (s->echo) (void)!write(2, p, n);
}

/* Ends the pending line: watched lines go to on_line, others to the tail. */
static void sink_flush(struct sink *s)
{
    size_t pl = s->prefix ? strlen(s->prefix) : 0;
    if (pl && s->n > pl && s->line[s->n - 1] == '\n' && !memcmp(s->line, s->prefix, pl)) {
        s->line[s->n - 1] = 0;
        s->on_line(s->ctx, s->line + pl);
    } else {
        sink_plain(s, s->line, s->n);
    }
    s->n = 0;
}

static void sink_add(struct sink *s, const char *p, size_t n)
{
    if (!s->prefix) {
        sink_plain(s, p, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        s->line[s->n++] = p[i];
        if (p[i] == '\n' || s->n == sizeof s->line) sink_flush(s);
    }
}

/* The deadline, brought forward to a grace after an interruption was seen. */
static double stop_deadline(const volatile int *stop, double deadline)
{
    if (!stop || !*stop) return deadline;
    double grace = oq_now_s() + OQ_PROC_STOP_GRACE_S;
    return deadline > 0 && deadline < grace ? deadline : grace;
}

/* Reads stderr until EOF or the deadline; returns 1 when the deadline passed. */
static int drain(int fd, double deadline, const volatile int *stop, struct sink *s)
{
    char buf[4096];
    int stopping = 0;
    for (;;) {
        int wait_ms = -1;
        if (!stopping && stop && *stop) {
            stopping = 1;
            deadline = stop_deadline(stop, deadline);
        }
        if (deadline > 0) {
            double left = deadline - oq_now_s();
            if (left <= 0) return 1;
            wait_ms = (int)(left * 1000) + 1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, stop && !stopping && (wait_ms < 0 || wait_ms > 200) ? 200 : wait_ms);
        if (rc < 0 && errno == EINTR) continue;
        if (rc == 0) continue; /* re-check the deadline */
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        sink_add(s, buf, (size_t)got);
    }
}

/* Forks the child of `t` with its stderr on a pipe, then reads and waits as `w` says. */
static oq_status run_child(const child_task *t, double timeout_s, size_t tail_bytes, int echo,
                           const oq_proc_watch *w, oq_proc_result *res, oq_err *err)
{
    static const oq_proc_watch none = {0};
    if (!w) w = &none;
    memset(res, 0, sizeof *res);
    struct tail tl = {.buf = malloc(tail_bytes + 1), .cap = tail_bytes};
    int fds[2];
    if (!tl.buf) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(tl.buf);
        return oq_err_set(err, OQ_ERR_RUNTIME, "pipe: %s", strerror(errno));
    }
    double start = oq_now_s();
    pid_t pid = fork_child(t, fds[1]);
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(tl.buf);
        return oq_err_set(err, OQ_ERR_RUNTIME, "fork: %s", strerror(errno));
    }
    setpgid(pid, pid); /* also here: no race with the child's own call */
    if (w->on_start) w->on_start(w->ctx, pid);
    close(fds[1]);
    struct sink s = {.t = &tl, .echo = echo, .prefix = w->on_line ? w->prefix : NULL, .on_line = w->on_line,
                     .ctx = w->ctx};
    res->timed_out = drain(fds[0], timeout_s > 0 ? start + timeout_s : 0, w->stop, &s);
    if (s.n) sink_plain(&s, s.line, s.n); /* a last line without its newline */
    if (res->timed_out) kill(-pid, SIGKILL);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (w->on_start) w->on_start(w->ctx, 0);
    res->seconds = oq_now_s() - start;
    res->signaled = !res->timed_out && WIFSIGNALED(status);
    res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    tl.buf[tl.len] = 0;
    res->stderr_tail = tl.buf;
    return OQ_OK;
}

oq_status oq_proc_run_watch(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                            const oq_proc_watch *w, oq_proc_result *res, oq_err *err)
{
    OQ_NEED(err, argv);
    OQ_NEED(err, argv[0]);
    OQ_NEED(err, res);
    child_task t = {.argv = argv};
    return run_child(&t, timeout_s, tail_bytes, echo, w, res, err);
}

oq_status oq_proc_fork_watch(int (*fn)(void *ctx), void *ctx, double timeout_s, size_t tail_bytes, int echo,
                             const oq_proc_watch *w, oq_proc_result *res, oq_err *err)
{
    OQ_NEED(err, fn);
    OQ_NEED(err, res);
    child_task t = {.fn = fn, .ctx = ctx};
    return run_child(&t, timeout_s, tail_bytes, echo, w, res, err);
}

oq_status oq_proc_start_bg(char *const argv[], int (*fn)(void *ctx), void *ctx, const char *stderr_path,
                           oq_proc_bg *bg, oq_err *err)
{
    if (!fn) OQ_NEED(err, argv);
    if (!fn) OQ_NEED(err, argv[0]);
    OQ_NEED(err, stderr_path);
    OQ_NEED(err, bg);
    memset(bg, 0, sizeof *bg);
    child_task t = {.argv = argv, .fn = fn, .ctx = ctx};
    int errfd; /* 0666: the umask decides */
    oq_status st = oq_open_in_place(stderr_path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0666, &errfd, err);
    if (st) return st;
    if (snprintf(bg->stderr_path, sizeof bg->stderr_path, "%s", stderr_path) >= (int)sizeof bg->stderr_path) {
        close(errfd);
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%.64s...: path too long", stderr_path);
    }
    bg->start = oq_now_s();
    pid_t pid = fork_child(&t, errfd);
    close(errfd);
    if (pid < 0) return oq_err_set(err, OQ_ERR_RUNTIME, "fork: %s", strerror(errno));
    setpgid(pid, pid);
    bg->pid = pid;
    return OQ_OK;
}

/* The last tail_bytes of the file (the background child's stderr), NUL-terminated. */
static char *file_tail(const char *path, size_t tail_bytes)
{
    char *buf = malloc(tail_bytes + 1);
    if (!buf) return NULL;
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    if (f && fseeko(f, 0, SEEK_END) == 0) {
        off_t size = ftello(f);
        off_t from = size > (off_t)tail_bytes ? size - (off_t)tail_bytes : 0;
        if (size >= 0 && fseeko(f, from, SEEK_SET) == 0) n = fread(buf, 1, tail_bytes, f);
    }
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

oq_status oq_proc_wait_bg(oq_proc_bg *bg, double timeout_s, size_t tail_bytes, const volatile int *stop,
                          oq_proc_result *res, oq_err *err)
{
    OQ_NEED(err, bg);
    OQ_NEED(err, res);
    memset(res, 0, sizeof *res);
    if (bg->pid <= 0) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no background child to wait for");
    double deadline = timeout_s > 0 ? bg->start + timeout_s : 0;
    int status = 0, passed_on = 0;
    for (long wait_us = 100;;) {
        pid_t got = waitpid(bg->pid, &status, WNOHANG);
        if (got == bg->pid || (got < 0 && errno != EINTR)) break;
        if (stop && *stop && !passed_on) { /* as the watched child's signal handler would */
            passed_on = 1;
            kill(-bg->pid, *stop);
            deadline = stop_deadline(stop, deadline);
        }
        if (deadline > 0 && oq_now_s() > deadline && !res->timed_out) { /* as drain's deadline */
            res->timed_out = 1;
            kill(-bg->pid, SIGKILL);
        }
        struct timespec ts = {0, wait_us * 1000};
        nanosleep(&ts, NULL);
        wait_us = wait_us < 20000 ? wait_us * 2 : wait_us; /* a 20 ms poll at most */
    }
    res->seconds = oq_now_s() - bg->start;
    res->signaled = !res->timed_out && WIFSIGNALED(status);
    res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    res->stderr_tail = file_tail(bg->stderr_path, tail_bytes);
    bg->pid = 0;
    return res->stderr_tail ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

int oq_proc_single_threaded(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return 0;
    char line[256];
    int threads = 0;
    while (fgets(line, sizeof line, f) && sscanf(line, "Threads: %d", &threads) != 1) {}
    fclose(f);
    return threads == 1;
}

oq_status oq_proc_run(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                      oq_proc_result *res, oq_err *err)
{
    OQ_NEED(err, argv);
    OQ_NEED(err, argv[0]);
    OQ_NEED(err, res);
    return oq_proc_run_watch(argv, timeout_s, tail_bytes, echo, NULL, res, err);
}

void oq_proc_result_clear(oq_proc_result *res)
{
    if (!res) return;
    free(res->stderr_tail);
    memset(res, 0, sizeof *res);
}

const char *oq_proc_describe(const oq_proc_result *res, char *buf, size_t n)
{
    if (!res || !buf) {
        if (buf && n) buf[0] = '\0';
        return buf;
    }
    if (res->timed_out)
        snprintf(buf, n, "timed out after %.0f s (killed)", res->seconds);
    else if (res->signaled)
        snprintf(buf, n, "killed by signal %d (%s)", res->signal, strsignal(res->signal));
    else
        snprintf(buf, n, "exit %d", res->exit_code);
    return buf;
}
