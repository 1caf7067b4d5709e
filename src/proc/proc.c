#include "ortqual/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core-impl.h"

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

/* Between fork and exec. Its own group, so a timeout kills its children too; SIGKILL when the
 * parent dies, checked after setting it (the parent may have died before). */
static void child_exec(char *const argv[], int errfd, pid_t parent)
{
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    dup2(errfd, 2);
    close(errfd);
    execv(argv[0], argv);
    dprintf(2, "cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
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

oq_status oq_proc_run_watch(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                            const oq_proc_watch *w, oq_proc_result *res, oq_err *err)
{
    static const oq_proc_watch none = {0};
    if (!w) w = &none;
    memset(res, 0, sizeof *res);
    struct tail t = {.buf = malloc(tail_bytes + 1), .cap = tail_bytes};
    int fds[2];
    if (!t.buf) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(t.buf);
        return oq_err_set(err, OQ_ERR_RUNTIME, "pipe: %s", strerror(errno));
    }
    double start = oq_now_s();
    fflush(NULL); /* the child must not repeat our buffered output */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(t.buf);
        return oq_err_set(err, OQ_ERR_RUNTIME, "fork: %s", strerror(errno));
    }
    if (pid == 0) child_exec(argv, fds[1], parent);
    setpgid(pid, pid); /* also here: no race with the child's own call */
    if (w->on_start) w->on_start(w->ctx, pid);
    close(fds[1]);
    struct sink s = {.t = &t, .echo = echo, .prefix = w->on_line ? w->prefix : NULL, .on_line = w->on_line,
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
    t.buf[t.len] = 0;
    res->stderr_tail = t.buf;
    return OQ_OK;
}

oq_status oq_proc_run(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                      oq_proc_result *res, oq_err *err)
{
    return oq_proc_run_watch(argv, timeout_s, tail_bytes, echo, NULL, res, err);
}

void oq_proc_result_clear(oq_proc_result *res)
{
    free(res->stderr_tail);
    memset(res, 0, sizeof *res);
}

const char *oq_proc_describe(const oq_proc_result *res, char *buf, size_t n)
{
    if (res->timed_out)
        snprintf(buf, n, "timed out after %.0f s (killed)", res->seconds);
    else if (res->signaled)
        snprintf(buf, n, "killed by signal %d (%s)", res->signal, strsignal(res->signal));
    else
        snprintf(buf, n, "exit %d", res->exit_code);
    return buf;
}
