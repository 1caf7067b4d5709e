/* The reference's outputs on their way to the other workers: one file a run, appended by the
 * reference's worker a batch at a time and read back in the same order by each configuration
 * under test, instead of a file per batch (made, renamed, read through libzip's seeks and
 * removed again: most of a small batch's cost besides its runs).
 *
 * A frame is a header (the magic, the batch's index, the SHA-256 of the inputs file the outputs
 * were computed from or read from the cache for, the length) then the outputs' .npz bytes. The
 * reader checks each against the batch it is at: its index, and the SHA-256 of the inputs it
 * read itself, so a configuration is never compared with outputs of other inputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "validate/validate-impl.h"

#define FRAME_MAGIC "oqrefs1\n"

typedef struct frame_header {
    char magic[8];
    int64_t index;
    char inputs_sha[64];
    uint64_t length;
} frame_header;

oq_status oq_refstream_open(oq_refstream *s, const char *path, int write, oq_err *err)
{
    memset(s, 0, sizeof *s);
    if (!(s->path = strdup(path))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!(s->f = fopen(path, write ? "wb" : "rb"))) {
        oq_status st = oq_err_set(err, OQ_ERR_IO, "%s: %s", path, strerror(errno));
        oq_refstream_close(s, NULL);
        return st;
    }
    return OQ_OK;
}

oq_status oq_refstream_put(oq_refstream *s, int64_t index, const char inputs_sha[65], const unsigned char *npz,
                           size_t n, oq_err *err)
{
    frame_header h = {.index = index, .length = n};
    memcpy(h.magic, FRAME_MAGIC, sizeof h.magic);
    memcpy(h.inputs_sha, inputs_sha, sizeof h.inputs_sha);
    if (fwrite(&h, sizeof h, 1, s->f) != 1 || fwrite(npz, 1, n, s->f) != n)
        return oq_err_set(err, OQ_ERR_IO, "%s: write failed: %s", s->path, strerror(errno));
    return OQ_OK;
}

oq_status oq_refstream_next(oq_refstream *s, int64_t index, const char inputs_sha[65], oq_npz **out, oq_err *err)
{
    frame_header h;
    *out = NULL;
    if (fread(&h, sizeof h, 1, s->f) != 1 || memcmp(h.magic, FRAME_MAGIC, sizeof h.magic))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: no reference outputs for batch %lld", s->path, (long long)index);
    if (h.index != index)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: the reference outputs of batch %lld where batch %lld's were due",
                          s->path, (long long)h.index, (long long)index);
    if (memcmp(h.inputs_sha, inputs_sha, sizeof h.inputs_sha))
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "batch %lld: the reference's outputs are of other inputs (inputs SHA-256 %.12s..., this "
                          "worker read %.12s...): the inputs file changed during the run",
                          (long long)index, h.inputs_sha, inputs_sha);
    if (h.length > OQ_READ_MAX)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: batch %lld: a frame of %llu bytes", s->path, (long long)index,
                          (unsigned long long)h.length);
    unsigned char *buf = malloc(h.length ? h.length : 1);
    if (!buf) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = fread(buf, 1, h.length, s->f) == h.length ? OQ_OK
                   : oq_err_set(err, OQ_ERR_FORMAT, "%s: batch %lld: its outputs cut short", s->path, (long long)index);
    char name[64];
    snprintf(name, sizeof name, "the reference outputs of batch %lld", (long long)index);
    if (!st) st = oq_npz_parse(buf, h.length, name, out, err);
    free(buf);
    return st;
}

oq_status oq_refstream_close(oq_refstream *s, oq_err *err)
{
    oq_status st = OQ_OK;
    if (s->f && fclose(s->f) != 0) st = oq_err_set(err, OQ_ERR_IO, "%s: %s", s->path, strerror(errno));
    free(s->path);
    memset(s, 0, sizeof *s);
    return st;
}
