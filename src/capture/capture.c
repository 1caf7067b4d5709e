/* Native fd capture: pipes in place of fd 1/2, one reader thread per pipe. */
#include "ortqual/capture.h"

#include "ortqual/dispatch.h"
#include "status/args-impl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK 65536

typedef struct stream {
    struct oq_capture *cap;
    int fd;          /* the captured descriptor (1 or 2) */
    int saved;       /* duplicate of the original, target of pass-through */
    int rd;          /* pipe read end */
    int stop[2];     /* self-pipe: oq_capture_end tells the reader to finish */
    pthread_t thread;
    bool running;
    char *line;      /* OQ_CAPTURE_LINE_MAX + 1 bytes */
    char *chunk;     /* READ_CHUNK bytes, the reader's read buffer */
    size_t len;
    bool overlong;   /* inside a line that exceeded OQ_CAPTURE_LINE_MAX */
} stream;

struct oq_capture {
    unsigned flags;
    oq_capture_sink sink;
    void *user;
    pthread_mutex_t sink_mu; /* serializes sink calls across both readers */
    stream streams[2];
    int nstreams;
    oq_capture_stats stats;
    /* dispatch mode (oq_capture_begin_dispatch) */
    oq_dispatch_parser *parser;
    stream *current;       /* the stream whose line is being fed (under sink_mu) */
    bool partial;          /* that line had no '\n' (the last one, at end) */
    oq_status feed_status; /* first parser error */
};

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Pass-through to the original descriptor; a failure is counted, never fatal:
 * the reader must keep draining or the writer would block. */
static void forward(stream *s, const char *p, size_t n)
{
    if (s->cap->flags & OQ_CAPTURE_QUIET) return;
    while (n > 0) {
        ssize_t w = write(s->saved, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            __atomic_add_fetch(&s->cap->stats.forward_errors, 1, __ATOMIC_RELAXED);
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Hand the buffered line to the sink; pass it through unless kept. */
static void deliver(stream *s, bool newline)
{
    oq_capture *cap = s->cap;
    s->line[s->len] = '\0';
    pthread_mutex_lock(&cap->sink_mu);
    cap->current = s;
    cap->partial = !newline;
    bool kept = cap->sink(cap->user, s->fd, s->line, s->len);
    pthread_mutex_unlock(&cap->sink_mu);
    cap->stats.lines[s->fd]++;
    if (kept) {
        cap->stats.kept[s->fd]++;
    } else {
        if (newline) s->line[s->len] = '\n';
        forward(s, s->line, s->len + (newline ? 1 : 0));
    }
    s->len = 0;
}

/* Split a chunk into lines. Text of a line longer than OQ_CAPTURE_LINE_MAX goes
 * straight through (it cannot be a routing line), keeping memory bounded. */
static void consume(stream *s, const char *p, size_t n)
{
    s->cap->stats.bytes[s->fd] += n;
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t seg = nl ? (size_t)(nl - p) : n;
        size_t take = seg + (nl ? 1 : 0);
        if (s->overlong || s->len + seg > OQ_CAPTURE_LINE_MAX) {
            s->cap->stats.overlong[s->fd] += s->len + take;
            forward(s, s->line, s->len);
            forward(s, p, take);
            s->len = 0;
            s->overlong = nl == NULL;
        } else {
            memcpy(s->line + s->len, p, seg);
            s->len += seg;
            if (nl) deliver(s, true);
        }
        p += take;
        n -= take;
    }
}

static void drain_nonblocking(stream *s, char *chunk)
{
    int fl = fcntl(s->rd, F_GETFL);
    if (fl >= 0) fcntl(s->rd, F_SETFL, fl | O_NONBLOCK);
    for (;;) {
        ssize_t r = read(s->rd, chunk, READ_CHUNK);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return;
        consume(s, chunk, (size_t)r);
    }
}

static void *reader_main(void *arg)
{
    stream *s = arg;
    char *chunk = s->chunk;
    for (;;) {
        struct pollfd pf[2] = {{.fd = s->rd, .events = POLLIN}, {.fd = s->stop[0], .events = POLLIN}};
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(s->rd, chunk, READ_CHUNK);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break; /* EOF: every write end is closed */
            consume(s, chunk, (size_t)r);
            continue;
        }
        if (pf[1].revents) { /* fd restored; someone (a child?) may still hold the write end */
            drain_nonblocking(s, chunk);
            break;
        }
    }
    if (s->len > 0) deliver(s, false);
    return NULL;
}

static void stream_clear(stream *s)
{
    close_fd(&s->saved);
    close_fd(&s->rd);
    close_fd(&s->stop[0]);
    close_fd(&s->stop[1]);
    free(s->line);
    free(s->chunk);
    s->line = s->chunk = NULL;
}

static int dup2_retry(int from, int to)
{
    int r;
    do r = dup2(from, to);
    while (r < 0 && errno == EINTR);
    return r;
}

/* Put the original descriptor back and tell the reader to finish; joins it. */
static oq_status stream_stop(stream *s, oq_err *err)
{
    oq_status st = OQ_OK;
    if (dup2_retry(s->saved, s->fd) < 0)
        st = oq_err_set(err, OQ_ERR_IO, "capture: cannot restore fd %d: %s", s->fd, strerror(errno));
    ssize_t w;
    do w = write(s->stop[1], "x", 1);
    while (w < 0 && errno == EINTR);
    pthread_join(s->thread, NULL);
    s->running = false;
    return st;
}

static oq_status stream_start(oq_capture *cap, stream *s, int fd, oq_err *err)
{
    int p[2] = {-1, -1};
    s->cap = cap;
    s->fd = fd;
    s->saved = s->rd = s->stop[0] = s->stop[1] = -1;
    s->line = malloc(OQ_CAPTURE_LINE_MAX + 1);
    s->chunk = malloc(READ_CHUNK);
    if (!s->line || !s->chunk) return oq_err_set(err, OQ_ERR_NOMEM, "capture: no memory for fd %d", fd);
    s->saved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (s->saved < 0)
        return oq_err_set(err, OQ_ERR_IO, "capture: cannot duplicate fd %d: %s", fd, strerror(errno));
    if (pipe2(p, O_CLOEXEC) < 0 || pipe2(s->stop, O_CLOEXEC) < 0) {
        oq_status st = oq_err_set(err, OQ_ERR_IO, "capture: cannot create a pipe for fd %d: %s", fd,
                                  strerror(errno));
        close_fd(&p[0]);
        close_fd(&p[1]);
        return st;
    }
    s->rd = p[0];
    int rc = pthread_create(&s->thread, NULL, reader_main, s);
    if (rc != 0) {
        close_fd(&p[1]);
        return oq_err_set(err, OQ_ERR_RUNTIME, "capture: cannot start the reader for fd %d: %s", fd,
                          strerror(rc));
    }
    s->running = true;
    if (dup2_retry(p[1], fd) < 0) {
        int e = errno;
        close_fd(&p[1]); /* reader sees EOF */
        pthread_join(s->thread, NULL);
        s->running = false;
        return oq_err_set(err, OQ_ERR_IO, "capture: cannot redirect fd %d: %s", fd, strerror(e));
    }
    close_fd(&p[1]);
    return OQ_OK;
}

static void capture_free(oq_capture *cap)
{
    for (int i = 0; i < cap->nstreams; i++) stream_clear(&cap->streams[i]);
    pthread_mutex_destroy(&cap->sink_mu);
    free(cap);
}

static oq_status check_flags(unsigned flags, oq_err *err)
{
    if (!(flags & (OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR)) ||
        (flags & ~(unsigned)(OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR | OQ_CAPTURE_QUIET)))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "capture: flags 0x%x choose no stream or carry unknown bits", flags);
    return OQ_OK;
}

static oq_capture *capture_alloc(unsigned flags, oq_capture_sink sink, void *user)
{
    oq_capture *cap = calloc(1, sizeof *cap);
    if (!cap) return NULL;
    cap->flags = flags;
    cap->sink = sink;
    cap->user = user;
    pthread_mutex_init(&cap->sink_mu, NULL);
    return cap;
}

/* Swap the chosen descriptors; on failure restores them and frees `cap`. */
static oq_status capture_start(oq_capture *cap, oq_capture **out, oq_err *err)
{
    const int fds[2] = {1, 2};
    const unsigned bits[2] = {OQ_CAPTURE_STDOUT, OQ_CAPTURE_STDERR};
    /* A closed fd 2 would otherwise be taken by fd 1's pipe and then clobbered. */
    for (int i = 0; i < 2; i++) {
        if ((cap->flags & bits[i]) && fcntl(fds[i], F_GETFD) < 0) {
            oq_status st = oq_err_set(err, OQ_ERR_IO, "capture: fd %d is not open: %s", fds[i],
                                      strerror(errno));
            capture_free(cap);
            return st;
        }
    }
    fflush(NULL); /* what stdio buffered so far belongs to the original descriptors */
    for (int i = 0; i < 2; i++) {
        if (!(cap->flags & bits[i])) continue;
        stream *s = &cap->streams[cap->nstreams++];
        oq_status st = stream_start(cap, s, fds[i], err);
        if (st != OQ_OK) {
            for (int j = cap->nstreams - 1; j >= 0; j--)
                if (cap->streams[j].running) stream_stop(&cap->streams[j], NULL);
            capture_free(cap);
            return st;
        }
    }
    *out = cap;
    return OQ_OK;
}

oq_status oq_capture_begin(oq_capture **out, unsigned flags, oq_capture_sink sink, void *user,
                           oq_err *err)
{
    OQ_NEED(err, out);
    *out = NULL;
    OQ_NEED(err, sink);
    if (check_flags(flags, err) != OQ_OK) return OQ_ERR_INVALID_ARG;
    oq_capture *cap = capture_alloc(flags, sink, user);
    if (!cap) return oq_err_set(err, OQ_ERR_NOMEM, "capture: out of memory");
    return capture_start(cap, out, err);
}

/* The parser hands back what is not routing text: it goes to the original
 * descriptor of the stream whose line is being fed. */
static void dispatch_passthrough(void *user, const char *text, size_t n, uint64_t line)
{
    (void)line;
    oq_capture *cap = user;
    forward(cap->current, text, n);
}

static bool dispatch_sink(void *user, int fd, const char *line, size_t len)
{
    (void)fd;
    oq_capture *cap = user;
    if (cap->feed_status != OQ_OK) { /* the parser ran out of memory: keep the text visible */
        forward(cap->current, line, len);
        if (!cap->partial) forward(cap->current, "\n", 1);
        return true;
    }
    oq_status st = oq_dispatch_parser_feed(cap->parser, line, len, NULL);
    if (st == OQ_OK)
        st = cap->partial ? oq_dispatch_parser_finish(cap->parser, NULL)
                          : oq_dispatch_parser_feed(cap->parser, "\n", 1, NULL);
    cap->feed_status = st;
    return true; /* the parser passed through whatever was not routing text */
}

oq_status oq_capture_begin_dispatch(oq_capture **out, unsigned flags, oq_dispatch_parser *parser,
                                    oq_err *err)
{
    OQ_NEED(err, out);
    *out = NULL;
    OQ_NEED(err, parser);
    if (check_flags(flags, err) != OQ_OK) return OQ_ERR_INVALID_ARG;
    oq_capture *cap = capture_alloc(flags, dispatch_sink, NULL);
    if (!cap) return oq_err_set(err, OQ_ERR_NOMEM, "capture: out of memory");
    cap->user = cap;
    cap->parser = parser;
    oq_dispatch_parser_set_passthrough(parser, dispatch_passthrough, cap);
    oq_status st = capture_start(cap, out, err);
    if (st != OQ_OK) oq_dispatch_parser_set_passthrough(parser, NULL, NULL);
    return st;
}

oq_status oq_capture_end(oq_capture *cap, oq_capture_stats *stats, oq_err *err)
{
    if (!cap) return OQ_OK;
    fflush(NULL); /* stdio text written during the capture goes into the pipes first */
    oq_status st = OQ_OK;
    for (int i = cap->nstreams - 1; i >= 0; i--) {
        oq_status r = stream_stop(&cap->streams[i], st == OQ_OK ? err : NULL);
        if (st == OQ_OK) st = r;
    }
    if (stats) *stats = cap->stats;
    if (cap->parser) {
        oq_dispatch_parser_set_passthrough(cap->parser, NULL, NULL);
        if (st == OQ_OK && cap->feed_status != OQ_OK)
            st = oq_err_set(err, cap->feed_status, "capture: the dispatch parser ran out of memory");
    }
    capture_free(cap);
    return st;
}

oq_status oq_dispatch_env_enable(oq_dispatch_env *saved, oq_err *err)
{
    OQ_NEED(err, saved);
    const char *old = getenv(OQ_DISPATCH_ENV_VAR);
    saved->was_set = old != NULL;
    saved->previous = NULL;
    if (old && !(saved->previous = strdup(old)))
        return oq_err_set(err, OQ_ERR_NOMEM, "dispatch env: out of memory");
    if (setenv(OQ_DISPATCH_ENV_VAR, "1", 1) != 0) {
        free(saved->previous);
        saved->previous = NULL;
        return oq_err_set(err, OQ_ERR_NOMEM, "dispatch env: cannot set %s: %s", OQ_DISPATCH_ENV_VAR,
                          strerror(errno));
    }
    return OQ_OK;
}

void oq_dispatch_env_restore(oq_dispatch_env *saved)
{
    if (!saved) return;
    if (saved->was_set)
        setenv(OQ_DISPATCH_ENV_VAR, saved->previous, 1);
    else
        unsetenv(OQ_DISPATCH_ENV_VAR);
    free(saved->previous);
    saved->previous = NULL;
    saved->was_set = false;
}

int oq_capture_mute(int fd)
{
    if (fd != 1 && fd != 2) return -1;
    fflush(NULL);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) return -1;
    int saved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (saved >= 0 && dup2_retry(null, fd) < 0) close_fd(&saved);
    close_fd(&null);
    return saved;
}

void oq_capture_unmute(int fd, int saved)
{
    if (saved < 0) return;
    fflush(NULL);
    dup2_retry(saved, fd);
    close_fd(&saved);
}
