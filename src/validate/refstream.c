/* The reference's outputs on their way to the other workers: one file a run, appended by the
 * reference's worker a batch at a time and read back in the same order by each configuration
 * under test, instead of a file per batch (made, renamed, read through libzip's seeks and
 * removed again: most of a small batch's cost besides its runs).
 *
 * A frame is a header (the magic, the batch's index, the SHA-256 of the inputs file the outputs
 * were computed from or read from the cache for, the length) then the outputs' .npz bytes, or,
 * for outputs the cache held, the name of the cache's file with the identity of the file the
 * reference read and verified (copying them, 670 MB at 100,000 events, cost the reference's
 * pass more than reading them, and the disk wrote them back). The reader checks each against
 * the batch it is at: its index, and the SHA-256 of the inputs it read itself, so a
 * configuration is never compared with outputs of other inputs; and a named file must still be
 * the one verified.
 *
 * The writer may still be writing while a reader reads (a cached reference runs beside the
 * first configuration under test): the file is created with an exclusive lock (flock) that
 * the writer's process holds until it ends, however it ends. A reader at the end of what is
 * written waits while the lock is held; once it is not, what is there is all there will be. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "validate/validate-impl.h"

#define FRAME_MAGIC "oqrefs2\n"
#define FRAME_BYTES 1 /* the outputs' .npz follows */
#define FRAME_FILE 2  /* the path of the file holding it follows */

typedef struct frame_header {
    char magic[8];
    int64_t index;
    char inputs_sha[64];
    uint64_t length; /* of what follows */
    uint32_t kind;
    uint32_t pad;
    oq_file_id id; /* FRAME_FILE: the file as the writer read it */
} frame_header;

oq_status oq_refstream_create(const char *path, int *fd, oq_err *err)
{
    /* not close-on-exec: the reference's worker, forked or executed, inherits it (and the lock) */
    oq_status st = oq_open_in_place(path, O_WRONLY | O_TRUNC, 0600, fd, err);
    if (st) return st;
    if (flock(*fd, LOCK_EX | LOCK_NB) == 0) return OQ_OK;
    st = oq_err_set(err, OQ_ERR_IO, "%s: cannot lock: %s", path, strerror(errno));
    close(*fd);
    *fd = -1;
    return st;
}

/* The writer's end: a copy of the creator's descriptor (the lock is on what they share), or,
 * for a worker run by hand, the file created and locked here (then ours to close). */
static oq_status open_writer(oq_refstream *s, int fd, oq_err *err)
{
    struct stat a, b; /* a plan run again by hand names a descriptor this process does not have */
    if (fd >= 0 && (fstat(fd, &a) || stat(s->path, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) fd = -1;
    if (fd < 0) {
        oq_status st = oq_refstream_create(s->path, &s->fd, err);
        if (st) return st;
        fd = s->fd;
    }
    int own = dup(fd);
    if (own >= 0 && (s->f = fdopen(own, "wb"))) return OQ_OK;
    if (own >= 0) close(own);
    return oq_err_set(err, OQ_ERR_IO, "%s: %s", s->path, strerror(errno));
}

oq_status oq_refstream_open(oq_refstream *s, const char *path, int write, int write_fd, oq_err *err)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    if (!(s->path = strdup(path))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    if (write) st = open_writer(s, write_fd, err);
    else if ((s->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) st = oq_err_set(err, OQ_ERR_IO, "%s: %s", path, strerror(errno));
    if (st) oq_refstream_close(s, NULL);
    return st;
}

static oq_status put_frame(oq_refstream *s, frame_header *h, int64_t index, const char inputs_sha[65],
                           const void *data, oq_err *err)
{
    memcpy(h->magic, FRAME_MAGIC, sizeof h->magic);
    h->index = index;
    memcpy(h->inputs_sha, inputs_sha, sizeof h->inputs_sha);
    if (fwrite(h, sizeof *h, 1, s->f) != 1 || fwrite(data, 1, h->length, s->f) != h->length || fflush(s->f) != 0)
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", s->path, strerror(errno));
    return OQ_OK;
}

oq_status oq_refstream_put(oq_refstream *s, int64_t index, const char inputs_sha[65], const unsigned char *npz,
                           size_t n, oq_err *err)
{
    frame_header h = {.length = n, .kind = FRAME_BYTES};
    return put_frame(s, &h, index, inputs_sha, npz, err);
}

oq_status oq_refstream_put_file(oq_refstream *s, int64_t index, const char inputs_sha[65], const char *path,
                                const oq_file_id *id, oq_err *err)
{
    frame_header h = {.length = strlen(path), .kind = FRAME_FILE, .id = *id};
    return put_frame(s, &h, index, inputs_sha, path, err);
}

/* Whether the writer has ended: its lock is gone (an error taking it counts as gone: never
 * wait on a lock that cannot be taken). Once seen, it stays so. */
static int writer_ended(oq_refstream *s)
{
    if (!s->writer_ended) s->writer_ended = flock(s->fd, LOCK_SH | LOCK_NB) == 0 || errno != EWOULDBLOCK;
    return s->writer_ended;
}

/* n bytes at `off`, waiting while the writer may still add them: 1 read, 0 not there (the
 * writer ended first), -1 a read error. */
static int read_at(oq_refstream *s, void *buf, size_t n, uint64_t off)
{
    for (long wait_us = 20;;) {
        int ended = writer_ended(s); /* before reading: what it wrote before ending is then there */
        size_t got = 0;
        while (got < n) {
            ssize_t r = pread(s->fd, (char *)buf + got, n - got, (off_t)(off + got));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return -1;
            if (r == 0) break;
            got += (size_t)r;
        }
        if (got == n) return 1;
        if (ended) return 0;
        struct timespec ts = {0, wait_us * 1000};
        nanosleep(&ts, NULL);
        wait_us = wait_us < 2000 ? wait_us * 2 : wait_us; /* the writer is usually far ahead */
    }
}

/* The outputs in the file a frame names (path: its h->length bytes, room for a NUL after
 * them): the file the writer verified, or an error. */
static oq_status named_outputs(const frame_header *h, char *path, int64_t index, const char *name, oq_npz **out,
                               oq_err *err)
{
    path[h->length] = 0;
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_file_id id;
    oq_status st = oq_read_file_id(path, &buf, &n, &id, err);
    if (st) oq_err_prefix(err, "batch %lld: the reference's outputs: ", (long long)index);
    if (!st && !oq_file_id_same(&id, &h->id))
        st = oq_err_set(err, OQ_ERR_FORMAT,
                        "batch %lld: %s changed after the reference read and verified it (another process replaced "
                        "or wrote it): run again",
                        (long long)index, path);
    if (!st) st = oq_npz_parse(buf, n, name, out, err);
    free(buf);
    return st;
}

oq_status oq_refstream_next(oq_refstream *s, int64_t index, const char inputs_sha[65], oq_npz **out, oq_err *err)
{
    frame_header h;
    *out = NULL;
    int got = read_at(s, &h, sizeof h, s->at);
    if (got < 0) return oq_err_set(err, OQ_ERR_IO, "%s: %s", s->path, strerror(errno));
    if (!got || memcmp(h.magic, FRAME_MAGIC, sizeof h.magic))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: no reference outputs for batch %lld", s->path, (long long)index);
    if (h.index != index)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: the reference outputs of batch %lld where batch %lld's were due",
                          s->path, (long long)h.index, (long long)index);
    if (memcmp(h.inputs_sha, inputs_sha, sizeof h.inputs_sha))
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "batch %lld: the reference's outputs are of other inputs (inputs SHA-256 %.12s..., this "
                          "worker read %.12s...): the inputs file changed during the run",
                          (long long)index, h.inputs_sha, inputs_sha);
    if (h.length > (h.kind == FRAME_FILE ? 4096 : OQ_READ_MAX) || (h.kind != FRAME_BYTES && h.kind != FRAME_FILE))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: batch %lld: a frame of kind %u and %llu bytes", s->path,
                          (long long)index, (unsigned)h.kind, (unsigned long long)h.length);
    unsigned char *buf = malloc(h.length + 1);
    if (!buf) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    got = read_at(s, buf, h.length, s->at + sizeof h);
    oq_status st = got > 0 ? OQ_OK
                   : got < 0 ? oq_err_set(err, OQ_ERR_IO, "%s: %s", s->path, strerror(errno))
                             : oq_err_set(err, OQ_ERR_FORMAT, "%s: batch %lld: its outputs cut short", s->path, (long long)index);
    char name[64];
    snprintf(name, sizeof name, "the reference outputs of batch %lld", (long long)index);
    if (!st && h.kind == FRAME_FILE) st = named_outputs(&h, (char *)buf, index, name, out, err);
    else if (!st) st = oq_npz_parse(buf, h.length, name, out, err);
    if (!st) s->at += sizeof h + h.length;
    free(buf);
    return st;
}

oq_status oq_refstream_close(oq_refstream *s, oq_err *err)
{
    oq_status st = OQ_OK;
    if (s->f && fclose(s->f) != 0) st = oq_err_set(err, OQ_ERR_IO, "%s: %s", s->path, strerror(errno));
    if (s->path && s->fd >= 0) close(s->fd); /* a zeroed stream's 0 is not ours */
    free(s->path);
    memset(s, 0, sizeof *s);
    return st;
}
