#include "ortqual/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-impl.h"

static void atomic_reset(oq_atomic_file *af)
{
    free(af->path);
    free(af->tmp);
    memset(af, 0, sizeof *af);
}

oq_status oq_atomic_open(oq_atomic_file *af, const char *path, int overwrite, oq_err *err)
{
    memset(af, 0, sizeof *af);
    size_t n = strlen(path) + sizeof ".tmp.XXXXXX";
    af->path = strdup(path);
    af->tmp = malloc(n);
    if (!af->path || !af->tmp) {
        atomic_reset(af);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    snprintf(af->tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        oq_err_set(err, OQ_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        atomic_reset(af);
        return OQ_ERR_IO;
    }
    fchmod(fd, 0644); /* mkstemp makes 0600; results are meant to be shared */
    af->fp = fdopen(fd, "wb");
    af->overwrite = overwrite;
    if (!af->fp) {
        close(fd);
        oq_atomic_abort(af);
        return oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    return OQ_OK;
}

oq_status oq_atomic_commit(oq_atomic_file *af, oq_err *err)
{
    int bad = ferror(af->fp) | fflush(af->fp) | fsync(fileno(af->fp));
    int saved = errno;
    bad |= fclose(af->fp);
    af->fp = NULL;
    if (bad) {
        oq_err_set(err, OQ_ERR_IO, "%s: write failed: %s", af->path, strerror(saved));
        oq_atomic_abort(af);
        return OQ_ERR_IO;
    }
    int rc = af->overwrite ? rename(af->tmp, af->path) : link(af->tmp, af->path);
    if (rc != 0) {
        oq_status st = (!af->overwrite && errno == EEXIST)
                           ? oq_err_set(err, OQ_ERR_IO, "%s: exists (not overwritten)", af->path)
                           : oq_err_set(err, OQ_ERR_IO, "%s: cannot rename into place: %s",
                                        af->path, strerror(errno));
        oq_atomic_abort(af);
        return st;
    }
    if (!af->overwrite) unlink(af->tmp);
    atomic_reset(af);
    return OQ_OK;
}

void oq_atomic_abort(oq_atomic_file *af)
{
    if (af->fp) fclose(af->fp);
    if (af->tmp) unlink(af->tmp);
    atomic_reset(af);
}

oq_status oq_write_file_atomic(const char *path, const void *buf, size_t n, int overwrite,
                               oq_err *err)
{
    oq_atomic_file af;
    oq_status st = oq_atomic_open(&af, path, overwrite, err);
    if (st) return st;
    if (n && fwrite(buf, 1, n, af.fp) != n) {
        oq_atomic_abort(&af);
        return oq_err_set(err, OQ_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    return oq_atomic_commit(&af, err);
}

oq_status oq_read_file(const char *path, unsigned char **buf, size_t *n, oq_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    oq_dynbuf b;
    oq_dynbuf_init(&b, 0);
    char *space;
    size_t got = 0;
    while ((space = oq_dynbuf_space(&b, 1 << 16)) && (got = fread(space, 1, 1 << 16, fp)) > 0)
        oq_dynbuf_added(&b, got);
    int bad = ferror(fp);
    fclose(fp);
    if (!space || bad) {
        oq_dynbuf_clear(&b);
        return space ? oq_err_set(err, OQ_ERR_IO, "%s: read failed", path)
                     : oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    }
    *buf = (unsigned char *)oq_dynbuf_take(&b, n);
    return *buf ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
}

oq_status oq_mkdirs(const char *path, oq_err *err)
{
    char *p = strdup(path);
    if (!p) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (char *s = p + 1;; s++) {
        int end = *s == 0;
        if (*s == '/' || end) {
            *s = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                oq_err_set(err, OQ_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
                free(p);
                return OQ_ERR_IO;
            }
            if (end) break;
            *s = '/';
        }
    }
    free(p);
    return OQ_OK;
}
