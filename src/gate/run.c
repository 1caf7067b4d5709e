/* Running the command: fork/exec from the private folder, one pipe for stdout
 * and stderr, every byte to the log, the dispatch parser and the summary
 * scanner as it arrives. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "gate/gate-impl.h"
#include "status/args-impl.h"

/* The pass-through of the dispatch parser feeds the summary scanner: the
 * summary is read from what is not routing text. */
typedef struct scan_ctx {
    oq_summary_scanner *scanner;
    oq_status st;
    oq_err *err;
    oq_failure_line shard; /* "shard I of N done; ..." after an ortqual verdict (text NULL: none) */
    uint64_t shard_of;     /* the line of that verdict */
} scan_ctx;

/* A sharded validate prints "shard I of N done; when all have ended: ortqual merge DIR" after its
 * verdict line: that verdict is one shard's, not its campaign's (QA 8b D6). Kept while the verdict
 * it follows is still the last summary. */
static void note_shard(scan_ctx *c, const char *text, size_t n, uint64_t line)
{
    const oq_test_summary *last = oq_summary_scanner_last(c->scanner);
    int i, k, used = -1;
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(n < sizeof head - 1 ? n : sizeof head - 1), text);
    if (!last || last->runner != OQ_RUNNER_ORTQUAL || sscanf(head, "shard %d of %d done; %n", &i, &k, &used) != 2 ||
        used < 0)
        return;
    free(c->shard.text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r')) n--;
    c->shard = (oq_failure_line){"ortqual", line, strndup(text, n)};
    c->shard_of = last->line;
    if (!c->shard.text) c->st = oq_err_set(c->err, OQ_ERR_NOMEM, "gate: out of memory");
}

static void scan_line(void *user, const char *text, size_t n, uint64_t line)
{
    scan_ctx *c = user;
    if (c->st == OQ_OK) c->st = oq_summary_scanner_line(c->scanner, text, n, line, c->err);
    if (c->st == OQ_OK) note_shard(c, text, n, line);
}

static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* In the child, between fork and exec: only async-signal-safe calls. Its own
 * process group, so a timeout reaches everything it starts; SIGKILL when the gate
 * dies, checked after setting it (the gate may have died before). */
static void child(const oq_gate *g, pid_t parent, int out, int null_fd, int report)
{
    if (setpgid(0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent ||
        dup2(null_fd, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || chdir(g->dir) != 0) {
        int e = errno;
        (void)!write(report, &e, sizeof e);
        _exit(127);
    }
    execve(g->cmd_path, g->o.argv, g->env.v);
    int e = errno;
    (void)!write(report, &e, sizeof e);
    _exit(127);
}

/* Start the child; *pid and *out_fd on success; *exec_errno when it could not exec. */
static oq_status spawn(const oq_gate *g, pid_t *pid, int *out_fd, int *exec_errno, oq_err *err)
{
    int out[2], report[2];
    *exec_errno = 0;
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) return oq_err_set(err, OQ_ERR_IO, "/dev/null: %s", strerror(errno));
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(null_fd);
        return oq_err_set(err, OQ_ERR_IO, "pipe: %s", strerror(errno));
    }
    if (pipe2(report, O_CLOEXEC) != 0) {
        close(null_fd);
        close(out[0]);
        close(out[1]);
        return oq_err_set(err, OQ_ERR_IO, "pipe: %s", strerror(errno));
    }
    pid_t parent = getpid();
    *pid = fork();
    if (*pid == 0) child(g, parent, out[1], null_fd, report[1]);
    int fork_errno = errno;
    if (*pid > 0) setpgid(*pid, *pid); /* also here: no window where a kill misses it */
    close(null_fd);
    close(out[1]);
    close(report[1]);
    if (*pid < 0) {
        close(out[0]);
        close(report[0]);
        return oq_err_set(err, OQ_ERR_IO, "fork: %s", strerror(fork_errno));
    }
    ssize_t r; /* closes with the exec (close-on-exec) or carries its errno */
    while ((r = read(report[0], exec_errno, sizeof *exec_errno)) < 0 && errno == EINTR) {}
    if (r != (ssize_t)sizeof *exec_errno) *exec_errno = 0;
    close(report[0]);
    *out_fd = out[0];
    return OQ_OK;
}

/* The timeout: SIGTERM to the group at the deadline, SIGKILL a grace later, and
 * a grace after that stop reading (a process that left the group may hold the
 * pipe open). Returns how long poll may wait (ms, -1: forever); 0 means stop. */
typedef struct deadline {
    double at;  /* next step, 0: none */
    int step;   /* 0 running, 1 SIGTERM sent, 2 SIGKILL sent, 3 stop */
} deadline;

static int deadline_tick(deadline *d, pid_t pgid)
{
    if (!d->at) return -1;
    double now = oq_now_s();
    if (now >= d->at) {
        if (d->step < 2) kill(-pgid, d->step == 0 ? SIGTERM : SIGKILL);
        d->step++;
        d->at = now + OQ_GATE_KILL_GRACE_S;
        if (d->step == 3) return 0;
    }
    double ms = ceil((d->at - now) * 1000.0);
    return ms < 60000 ? (int)ms : 60000; /* a long timeout is reached in steps */
}

static oq_status pump(oq_gate *g, int fd, pid_t pid, deadline *d, oq_dispatch_parser *p,
                      uint64_t *bytes, oq_err *err)
{
    char buf[65536];
    for (;;) {
        int wait_ms = deadline_tick(d, pid);
        if (wait_ms == 0) return OQ_OK;
        struct pollfd pfd = {fd, POLLIN, 0};
        int ready = poll(&pfd, 1, wait_ms);
        if (ready < 0 && errno != EINTR)
            return oq_err_set(err, OQ_ERR_IO, "waiting for the command's output: %s", strerror(errno));
        if (ready <= 0) continue;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return oq_err_set(err, OQ_ERR_IO, "reading the command's output: %s", strerror(errno));
        if (n == 0) return OQ_OK;
        if (write_all(g->log_fd, buf, (size_t)n) != 0)
            return oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", g->log_path, strerror(errno));
        *bytes += (uint64_t)n;
        if (g->o.on_output) g->o.on_output(g->o.user, buf, (size_t)n);
        oq_status st = oq_dispatch_parser_feed(p, buf, (size_t)n, err);
        if (st != OQ_OK) return st;
    }
}

static void wait_child(pid_t pid, oq_gate_result *r)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return;
    if (WIFSIGNALED(status)) {
        r->exit_code = -1;
        r->signal = WTERMSIG(status);
    } else {
        r->exit_code = WEXITSTATUS(status);
    }
}

static oq_status copy_summary(oq_test_summary *dst, const oq_test_summary *src, oq_err *err)
{
    *dst = *src;
    dst->text = strdup(src->text);
    dst->skips = src->n_skips ? calloc(src->n_skips, sizeof *dst->skips) : NULL;
    if (!dst->text || (src->n_skips && !dst->skips)) goto nomem;
    for (size_t i = 0; i < src->n_skips; i++) {
        dst->skips[i].count = src->skips[i].count;
        if (!(dst->skips[i].text = strdup(src->skips[i].text))) goto nomem;
    }
    return OQ_OK;
nomem:
    dst->n_skips = src->n_skips; /* free what was copied */
    return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
}

static oq_status could_not_run(oq_gate *g, int e, oq_gate_result *r, oq_err *err)
{
    char **reasons = malloc(sizeof *reasons);
    if (!reasons || asprintf(&reasons[0], "cannot execute %s: %s", g->cmd_path, strerror(e)) < 0) {
        free(reasons);
        return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    }
    r->j.verdict = OQ_GATE_ERROR;
    r->j.reasons = reasons;
    r->j.n_reasons = 1;
    return OQ_OK;
}

/* A failing verdict names the tests the runner listed as failed, as it names skipped ones. */
static oq_status name_failed(const oq_summary_scanner *s, oq_gate_judgement *j, oq_err *err)
{
    char *const *names;
    size_t n = oq_summary_scanner_failed_names(s, &names);
    if (j->verdict != OQ_GATE_FAIL || !n) return OQ_OK;
    oq_dynbuf b = {0};
    oq_status st = oq_dynbuf_addf(&b, "failed tests: %s", names[0]);
    for (size_t i = 1; !st && i < n; i++) st = oq_dynbuf_addf(&b, ", %s", names[i]);
    char *text = st ? NULL : oq_dynbuf_take(&b, NULL);
    oq_dynbuf_clear(&b);
    st = text ? oq_strv_push(&j->reasons, &j->n_reasons, text) : OQ_ERR_NOMEM;
    free(text);
    return st ? oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory") : OQ_OK;
}

/* The last verdict was a shard's: failed unless the caller allowed it (oq_gate_allow_shard), and
 * then said in a note. */
static oq_status judge_shard(oq_gate *g, const scan_ctx *sc, const oq_test_summary *sum, oq_gate_judgement *j,
                             oq_err *err)
{
    if (!sc->shard.text || !sum || sum->line != sc->shard_of) return OQ_OK;
    char *why;
    if (asprintf(&why, "the verdict at line %llu is one shard's, not its campaign's (line %llu: %s): the campaign's "
                       "verdict is its merge's (ortqual merge DIR), which counts every shard",
                 (unsigned long long)sum->line, (unsigned long long)sc->shard.line, sc->shard.text) < 0)
        why = NULL;
    oq_status st = !why ? OQ_ERR_NOMEM
                   : g->allow_shard ? gate_strv_push(&g->notes, why, err)
                                    : oq_strv_push(&j->reasons, &j->n_reasons, why);
    if (!g->allow_shard) free(why);
    if (st) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    if (j->n_reasons && j->verdict == OQ_GATE_PASS) j->verdict = OQ_GATE_FAIL;
    return OQ_OK;
}

static oq_status finish(oq_gate *g, oq_dispatch_parser *p, scan_ctx *sc, oq_gate_result *r,
                        oq_err *err)
{
    oq_status st = oq_dispatch_parser_finish(p, err);
    if (st == OQ_OK) st = sc->st;
    if (st != OQ_OK) return st;
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    const oq_test_summary *sum = oq_summary_scanner_last(sc->scanner);
    r->dispatch_records = 0;
    for (size_t i = 0; i < log->n_records; i++) {
        r->dispatch_records += log->records[i].count;
        r->kernel_counts[log->records[i].kernel] += log->records[i].count;
    }
    if (sum && (st = copy_summary(&r->summary, sum, err)) != OQ_OK) return st;
    oq_gate_outcome o = {r->exit_code, r->signal, sum, log, r->timed_out ? g->o.timeout_s : 0,
                         oq_summary_scanner_failed_before(sc->scanner), NULL, 0,
                         oq_summary_scanner_failure_line(sc->scanner)};
    o.n_earlier = oq_summary_scanner_earlier(sc->scanner, &o.earlier);
    st = oq_gate_judge(&o, g->o.allow_skip, g->o.n_allow_skip, g->expect, &r->j, err);
    if (!st) st = judge_shard(g, sc, sum, &r->j, err);
    return st ? st : name_failed(sc->scanner, &r->j, err);
}

oq_status oq_gate_run(oq_gate *g, oq_gate_result *r, oq_err *err)
{
    OQ_NEED(err, g);
    OQ_NEED(err, r);
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    oq_dispatch_parser *p = NULL;
    scan_ctx sc = {NULL, OQ_OK, err, {0}, 0};
    oq_status st = oq_dispatch_parser_create(&p, err);
    if (st == OQ_OK) st = oq_summary_scanner_create(&sc.scanner, err);
    if (st != OQ_OK) goto out;
    oq_dispatch_parser_set_passthrough(p, scan_line, &sc);

    double t0 = oq_now_s();
    pid_t pid = -1;
    int fd = -1, exec_errno = 0;
    st = spawn(g, &pid, &fd, &exec_errno, err);
    if (st != OQ_OK) goto out;
    if (exec_errno) {
        close(fd);
        wait_child(pid, r);
        r->exit_code = -1;
        st = could_not_run(g, exec_errno, r, err);
        goto out;
    }
    if (g->o.on_start) g->o.on_start(g->o.user, pid);
    deadline d = {g->o.timeout_s > 0 ? t0 + g->o.timeout_s : 0, 0};
    st = pump(g, fd, pid, &d, p, &r->log_bytes, err);
    close(fd);
    if (d.step > 0) kill(-pid, SIGKILL); /* the timeout ends the whole group, stragglers too */
    wait_child(pid, r);
    r->timed_out = d.step > 0;
    r->duration_s = oq_now_s() - t0;
    if (st == OQ_OK) st = finish(g, p, &sc, r, err);
out:
    if (st != OQ_OK) oq_gate_result_clear(r);
    oq_summary_scanner_free(sc.scanner);
    free(sc.shard.text);
    oq_dispatch_parser_free(p);
    return st;
}

void oq_gate_result_clear(oq_gate_result *r)
{
    if (!r) return;
    oq_gate_judgement_clear(&r->j);
    free(r->summary.text);
    for (size_t i = 0; i < r->summary.n_skips; i++) free(r->summary.skips ? r->summary.skips[i].text : NULL);
    free(r->summary.skips);
    memset(r, 0, sizeof *r);
}
