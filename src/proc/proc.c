#include "ortqual/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void child_exec(char *const argv[], int errfd)
{
    setpgid(0, 0); /* its own group, so a timeout kills its children too */
    dup2(errfd, 2);
    close(errfd);
    execv(argv[0], argv);
    dprintf(2, "cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Reads stderr until EOF or the deadline; returns 1 when the deadline passed. */
static int drain(int fd, double deadline, int echo, struct tail *t)
{
    char buf[4096];
    for (;;) {
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - oq_now_s();
            if (left <= 0) return 1;
            wait_ms = (int)(left * 1000) + 1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, wait_ms);
        if (rc < 0 && errno == EINTR) continue;
        if (rc == 0) continue; /* re-check the deadline */
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        tail_add(t, buf, (size_t)got);
        if (echo) (void)!write(2, buf, (size_t)got);
    }
}

oq_status oq_proc_run(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                      oq_proc_result *res, oq_err *err)
{
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
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(t.buf);
        return oq_err_set(err, OQ_ERR_RUNTIME, "fork: %s", strerror(errno));
    }
    if (pid == 0) child_exec(argv, fds[1]);
    setpgid(pid, pid); /* also here: no race with the child's own call */
    close(fds[1]);
    res->timed_out = drain(fds[0], timeout_s > 0 ? start + timeout_s : 0, echo, &t);
    if (res->timed_out) kill(-pid, SIGKILL);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    res->seconds = oq_now_s() - start;
    res->signaled = !res->timed_out && WIFSIGNALED(status);
    res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    t.buf[t.len] = 0;
    res->stderr_tail = t.buf;
    return OQ_OK;
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
