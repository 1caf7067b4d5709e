/* Weights in an external-data file (TensorProto.external_data: location, offset, length),
 * as torch.onnx.export writes them by default (model.onnx beside model.onnx.data).
 *
 * The passes never edit weights, so the large ones stay where they are: the check runs them
 * from the input's folder (ORT's session.model_external_initializers_file_folder_path), and
 * the converted model gets its own copy, OUT.onnx.data, written beside it. Small ones (shapes,
 * scales, axes: values a pass may read) are read into the model. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert/convert-impl.h"
#include "fileio/fileio-impl.h"
#include "inspect/extref-impl.h"
#include "inspect/model-impl.h"
#include "ortqual/fileio.h"

/* What is read into the model rather than copied: the scalars, shapes and axes a pass reads.
 * A larger constant left outside reads as unknown to the passes (gview's readers skip external
 * data), so a rewrite that needed its values is refused or left, never made on a guess. */
#define CV_EXT_INLINE_MAX 4096
/* Where each copied tensor starts in OUT.onnx.data: a page, so that ORT can map it. */
#define CV_EXT_ALIGN 4096
/* dir/location's room, NUL included. */
#define CV_EXT_PATH 4096

int cv_ext_is(const Onnx__TensorProto *t)
{
    return t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* The same file, unchanged: a rewrite in place moves its mtime (or, set back, its ctime), a
 * replacement its inode. One within the file system's clock tick of the first look, of the
 * same size, is not seen. */
static int same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static const cv_ext_file *file_of(const cv_model *m, const char *path)
{
    for (size_t i = 0; i < m->n_ext_files; i++)
        if (!strcmp(m->ext_files[i].path, path)) return &m->ext_files[i];
    return NULL;
}

static oq_status changed(const cv_model *m, const char *path, oq_err *err)
{
    return oq_err_set(err, OQ_ERR_IO, "%s: external data %s changed while convert ran; nothing written", m->name,
                      path);
}

/* `sb` (NULL: no stat of it) is data file `path` as first seen, or is recorded as that: the
 * check reads the file and the copy reads it again later, so between them it must not change. */
static oq_status seen(cv_model *m, const char *path, const struct stat *sb, oq_err *err)
{
    const cv_ext_file *f = file_of(m, path);
    if (f) return sb && same_stat(&f->st, sb) ? OQ_OK : changed(m, path, err);
    if (!sb) return changed(m, path, err);
    char *p = strdup(path);
    cv_ext_file *slot = p ? OQ_PUSH(m->ext_files, m->n_ext_files) : NULL;
    if (!slot) {
        free(p);
        return cv_oom(m, err);
    }
    *slot = (cv_ext_file){p, *sb};
    return OQ_OK;
}

oq_status cv_ext_same(const cv_model *first, const cv_model *later, oq_err *err)
{
    for (size_t i = 0; i < later->n_ext_files; i++) {
        const cv_ext_file *f = file_of(first, later->ext_files[i].path);
        if (!f || !same_stat(&f->st, &later->ext_files[i].st)) return changed(first, later->ext_files[i].path, err);
    }
    return OQ_OK;
}

/* dir/location (into path[CV_EXT_PATH]) opened, with the tensor's bytes inside it, and as first seen. */
static oq_status open_ref(cv_model *m, const Onnx__TensorProto *t, const oq_ext_ref *r, int *fd, char *path,
                          oq_err *err)
{
    const char *who = t->name ? t->name : "";
    *fd = -1;
    if (snprintf(path, CV_EXT_PATH, "%s/%s", m->dir, r->location) >= CV_EXT_PATH)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: initializer '%s': external data location '%.64s...' is too long",
                          m->name, who, r->location);
    struct stat sb;
    oq_err e = OQ_ERR_INIT;
    *fd = oq_ext_open(m->dir, r->location, &e); /* the file checked is the one read */
    if (*fd < 0 && e.status != OQ_ERR_IO) /* a location out of the folder */
        return oq_err_set(err, e.status, "%s: initializer '%s': %s", m->name, who, e.msg);
    if (*fd < 0 || fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        oq_status st = oq_err_set(err, OQ_ERR_IO, "%s: initializer '%s': external data %s: %s", m->name, who, path,
                                  *fd < 0 ? strerror(errno) : "not a regular file");
        if (*fd >= 0) close(*fd);
        *fd = -1;
        return st;
    }
    oq_status st = seen(m, path, &sb, err); /* first: a file cut short since is a change, not a short file */
    if (!st) st = oq_ext_ref_fits(m->name, t, r, path, (int64_t)sb.st_size, err);
    if (st) {
        close(*fd);
        *fd = -1;
    }
    return st;
}

static int pread_all(int fd, void *buf, size_t n, int64_t off)
{
    for (size_t got = 0; got < n;) {
        ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + (int64_t)got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        got += (size_t)k;
    }
    return 0;
}

/* Initializer i read into the model (a small one). */
static oq_status read_in(cv_model *m, size_t i, const oq_ext_ref *r, oq_err *err)
{
    const Onnx__TensorProto *t = m->inits.v[i];
    int fd;
    char path[CV_EXT_PATH];
    oq_status st = open_ref(m, t, r, &fd, path, err);
    if (st) return st;
    unsigned char buf[CV_EXT_INLINE_MAX];
    int bad = pread_all(fd, buf, (size_t)r->length, r->offset);
    close(fd);
    if (bad)
        return oq_err_set(err, OQ_ERR_IO, "%s: initializer '%s': reading external data %s/%s failed", m->name,
                          t->name ? t->name : "", m->dir, r->location);
    Onnx__TensorProto *in = cv_init_replace(m, i, buf, (size_t)r->length);
    return in ? OQ_OK : cv_oom(m, err);
}

oq_status cv_ext_load(cv_model *m, const char *dir, oq_err *err)
{
    for (size_t i = 0; i < m->inits.n; i++) {
        const Onnx__TensorProto *t = m->inits.v[i];
        if (!cv_ext_is(t)) continue;
        if (!dir) /* a model in memory: nothing to resolve the location against */
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: initializer '%s' has external data, which needs the "
                              "model's path", m->name, t->name ? t->name : "");
        if (!m->dir && !(m->dir = strdup(dir))) return cv_oom(m, err);
        oq_ext_ref r;
        oq_status st = oq_ext_ref_of(m->name, t, &r, err);
        if (!st && r.length <= CV_EXT_INLINE_MAX) st = read_in(m, i, &r, err);
        else if (!st) {
            int fd;
            char path[CV_EXT_PATH];
            st = open_ref(m, t, &r, &fd, path, err); /* there and long enough: checked before the work */
            if (!st) close(fd);
        }
        if (st) return st;
    }
    return OQ_OK;
}

size_t cv_ext_count(const cv_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->inits.n; i++) n += (size_t)cv_ext_is(m->inits.v[i]);
    return n;
}

char *cv_ext_data_path(const char *out_path)
{
    size_t n = strlen(out_path) + sizeof ".data";
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s.data", out_path);
    return p;
}

/* After a copy from `fd`: the file read, and the one its path names now, are both the file
 * as first seen. */
static oq_status still_seen(cv_model *m, int fd, const char *path, oq_err *err)
{
    struct stat a, b;
    oq_status st = seen(m, path, fstat(fd, &a) ? NULL : &a, err);
    return st ? st : seen(m, path, stat(path, &b) ? NULL : &b, err);
}

/* The tensor's bytes appended to `out` at `*at` (aligned), from its source file. */
static oq_status copy_ref(cv_model *m, const Onnx__TensorProto *t, const oq_ext_ref *r, FILE *out, int64_t *at,
                          const char *out_path, oq_err *err)
{
    static const char zeros[CV_EXT_ALIGN];
    int64_t pad = (CV_EXT_ALIGN - *at % CV_EXT_ALIGN) % CV_EXT_ALIGN;
    if (pad && fwrite(zeros, 1, (size_t)pad, out) != (size_t)pad)
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", out_path, strerror(errno));
    *at += pad;
    int fd;
    char path[CV_EXT_PATH];
    oq_status st = open_ref(m, t, r, &fd, path, err);
    if (st) return st;
    char buf[1 << 16];
    for (int64_t done = 0; !st && done < r->length;) {
        size_t k = r->length - done < (int64_t)sizeof buf ? (size_t)(r->length - done) : sizeof buf;
        if (pread_all(fd, buf, k, r->offset + done)) {
            st = still_seen(m, fd, path, err); /* cut short meanwhile: said as such */
            if (!st)
                st = oq_err_set(err, OQ_ERR_IO, "%s: initializer '%s': reading external data %s/%s failed",
                                m->name, t->name ? t->name : "", m->dir, r->location);
        } else if (fwrite(buf, 1, k, out) != k)
            st = oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", out_path, strerror(errno));
        done += (int64_t)k;
    }
    if (!st) st = still_seen(m, fd, path, err);
    close(fd);
    return st;
}

oq_status cv_ext_write(cv_model *m, oq_atomic_file *af, oq_err *err)
{
    const char *slash = strrchr(af->path, '/'), *base = slash ? slash + 1 : af->path;
    oq_status st = OQ_OK;
    int64_t at = 0;
    for (size_t i = 0; !st && i < m->inits.n; i++) {
        const Onnx__TensorProto *t = m->inits.v[i];
        oq_ext_ref r;
        if (!cv_ext_is(t)) continue;
        st = oq_ext_ref_of(m->name, t, &r, err);
        if (!st) st = copy_ref(m, t, &r, af->fp, &at, af->path, err);
        if (!st && !cv_init_external(m, i, base, at, r.length)) st = cv_oom(m, err);
        at += r.length;
    }
    return st;
}
