/* A model read once, its identity, and whether it is still the model a plan recorded
 * (modelfile-impl.h). A run that read the model by path in each process ran whatever was at
 * the path then: a file replaced between the plan and a worker ran under the plan's SHA-256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "inspect/extref-impl.h"
#include "inspect/model-impl.h"
#include "inspect/modelfile-impl.h"
#include "ortqual/fileio.h"

/* The external-data file `name` of the model at `path`: ORT looks for it in the model's folder. */
static char *beside(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    char *p = NULL;
    int n = slash ? asprintf(&p, "%.*s/%s", (int)(slash - path), path, name) : asprintf(&p, "./%s", name);
    return n < 0 ? NULL : p;
}

/* The folder of the model at `path` (malloc'd; NULL: out of memory). */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, slash > path ? (size_t)(slash - path) : 1) : strdup(".");
}

/* An external file's part of the identity: its name as the model gives it, and its SHA-256. */
static void ext_add(oq_sha256 *h, const char *name, const char sha[65])
{
    oq_sha256_update(h, "\n", 1);
    oq_sha256_update(h, name, strlen(name));
    oq_sha256_update(h, sha, 64);
}

/* External file `name` of the model at `path` (in folder `dir`) hashed through the one
 * descriptor oq_ext_open checked (a location that leads out is read by ORT never, and here
 * would be hashed into a published identity: an oracle for any file the user can read; a link
 * put there after a check of the path alone was read all the same); `file` names it in
 * messages. *id (may be NULL): which file that was, taken before it is hashed: a change while
 * or after it is hashed moves its change time (or its inode, renamed over), which the check
 * sees; zeroed when there is none. OQ_ERR_FORMAT: the location leads out (the load fails);
 * others: the file cannot be read. */
static oq_status ext_hash(const char *path, const char *dir, const char *name, const char *file, oq_file_id *id,
                          char sha[65], oq_err *err)
{
    oq_err e = OQ_ERR_INIT;
    if (id) memset(id, 0, sizeof *id);
    int fd = oq_ext_open(dir, name, &e);
    oq_status st = fd < 0 ? e.status : OQ_OK;
    if (!st && id && oq_file_id_fd(fd, id) != 0) memset(id, 0, sizeof *id);
    if (!st) st = oq_sha256_fd(fd, file, sha, &e);
    if (fd >= 0) close(fd);
    if (st) {
        oq_err_set(err, st, "%s", e.msg);
        oq_err_prefix(err, st == OQ_ERR_FORMAT ? "%s: " : "%s: external data: ", path);
    }
    return st;
}

/* The identity of a model whose file hashes to `own` and whose external files `shas` are those
 * of `names`: `own` itself when it has none. */
static void identity_of(const char own[65], char *const *names, char (*shas)[65], size_t n, char sha[65])
{
    if (!n) {
        snprintf(sha, 65, "%s", own);
        return;
    }
    oq_sha256 h;
    oq_sha256_init(&h);
    oq_sha256_update(&h, own, 64);
    for (size_t i = 0; i < n; i++) ext_add(&h, names[i], shas[i]);
    oq_sha256_hex(&h, sha);
}

/* Every external file of m hashed (into shas[n]) with its identity and path kept: a location
 * that leads out fails the load; a file that cannot be read leaves the identity unknown
 * (m->unhashed says why, of the first). */
static oq_status hash_ext(oq_model_file *m, char (*shas)[65], oq_err *err)
{
    size_t n = m->mi ? m->mi->n_external_files : 0;
    char *dir = n ? folder_of(m->path) : NULL;
    m->ext_paths = n ? calloc(n, sizeof *m->ext_paths) : NULL;
    m->ext_ids = n ? calloc(n, sizeof *m->ext_ids) : NULL;
    if (n && (!dir || !m->ext_paths || !m->ext_ids)) {
        free(dir);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    oq_status st = OQ_OK;
    for (; !st && m->n_ext < n; m->n_ext++) {
        size_t i = m->n_ext;
        const char *name = m->mi->external_files[i];
        if (!(m->ext_paths[i] = beside(m->path, name))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        oq_err e = OQ_ERR_INIT;
        oq_status h = st ? OQ_OK : ext_hash(m->path, dir, name, m->ext_paths[i], &m->ext_ids[i], shas[i], &e);
        if (h == OQ_ERR_FORMAT) st = oq_err_set(err, h, "%s", e.msg);
        else if (h && !m->unhashed.status) m->unhashed = e;
    }
    free(dir);
    return st;
}

/* Initializer t's file (in `dir`) there, regular and holding r's bytes. */
static oq_status ext_fits(const char *path, const char *dir, const Onnx__TensorProto *t, const oq_ext_ref *r,
                          oq_err *err)
{
    oq_err e = OQ_ERR_INIT;
    struct stat sb;
    char file[4200];
    snprintf(file, sizeof file, "%s/%s", dir, r->location);
    int fd = oq_ext_open(dir, r->location, &e);
    int regular = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    if (fd >= 0) close(fd);
    if (fd < 0)
        return oq_err_set(err, e.status, "%s: initializer '%s': %s", path, t->name ? t->name : "", e.msg);
    if (!regular)
        return oq_err_set(err, OQ_ERR_IO, "%s: initializer '%s': external data %s: not a regular file", path,
                          t->name ? t->name : "", file);
    return oq_ext_ref_fits(path, t, r, file, (int64_t)sb.st_size, err);
}

oq_status oq_model_ext_check(const Onnx__GraphProto *g, const char *path, oq_err *err)
{
    char *dir = folder_of(path);
    if (!dir) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && g && i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!t->has_data_location || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) continue;
        oq_ext_ref r;
        st = oq_ext_ref_of(path, t, &r, err);
        if (!st) st = ext_fits(path, dir, t, &r, err);
    }
    free(dir);
    return st;
}

oq_status oq_model_file_read(const char *path, oq_model_file *m, oq_err *err)
{
    memset(m, 0, sizeof *m);
    if (!(m->path = strdup(path))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_read_file(path, &m->bytes, &m->n, err);
    Onnx__ModelProto *p = NULL;
    if (!st) st = oq_model_unpack_checked(m->bytes, m->n, path, OQ_UNPACK_LEAN, &p, err);
    if (!st && oq_model_inspect_proto(p, path, &m->mi, &m->inspected)) m->mi = NULL;
    size_t n = !st && m->mi ? m->mi->n_external_files : 0;
    char own[65], (*shas)[65] = n ? calloc(n, sizeof *shas) : NULL;
    if (n && !shas) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) oq_sha256_buf(m->bytes, m->n, own);
    if (!st) st = hash_ext(m, shas, err);
    oq_err ext = OQ_ERR_INIT; /* a file cut short, before any work (a missing one: the identity says) */
    if (!st && oq_model_ext_check(p->graph, path, &ext) && ext.status != OQ_ERR_IO)
        st = oq_err_set(err, ext.status, "%s", ext.msg);
    if (p) onnx__model_proto__free_unpacked(p, NULL);
    if (!st && m->unhashed.status) *m->sha256 = 0;
    else if (!st) identity_of(own, n ? m->mi->external_files : NULL, shas, n, m->sha256);
    free(shas);
    if (st) oq_model_file_clear(m);
    return st;
}

/* External file i is the one hashed (or still absent, as it was). */
static int ext_same(const oq_model_file *m, size_t i)
{
    oq_file_id now;
    if (oq_file_id_at(m->ext_paths[i], &now) != 0) memset(&now, 0, sizeof now);
    return oq_file_id_same(&now, &m->ext_ids[i]);
}

/* m's identity from its external files as they are now (through checked descriptors, as it
 * was first taken): "unreadable" when one cannot be read or leads out now. */
static void rehash(const oq_model_file *m, char sha[65])
{
    char own[65], *dir = folder_of(m->path), (*shas)[65] = calloc(m->n_ext, sizeof *shas);
    int bad = !dir || !shas;
    for (size_t i = 0; !bad && i < m->n_ext; i++)
        bad = ext_hash(m->path, dir, m->mi->external_files[i], m->ext_paths[i], NULL, shas[i], NULL) != OQ_OK;
    oq_sha256_buf(m->bytes, m->n, own);
    if (bad) snprintf(sha, 65, "unreadable");
    else identity_of(own, m->mi->external_files, shas, m->n_ext, sha);
    free(dir);
    free(shas);
}

oq_status oq_model_file_unchanged(const oq_model_file *m, const char *planned, oq_err *err)
{
    const char *plan = planned ? planned : m->sha256;
    if (!*m->sha256 && planned)
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: changed during the run (sha256 %s in the plan; now %s)", m->path,
                          plan, m->unhashed.msg);
    if (strcmp(plan, m->sha256))
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: changed during the run (sha256 %s in the plan, %s now)", m->path,
                          plan, m->sha256);
    for (size_t i = 0; i < m->n_ext; i++) {
        if (ext_same(m, i)) continue;
        char sha[65];
        rehash(m, sha);
        if (!strcmp(sha, plan))
            return oq_err_set(err, OQ_ERR_RUNTIME,
                              "%s: changed during the run: its external data %s was written or replaced after it was "
                              "hashed (sha256 %s in the plan)", m->path, m->ext_paths[i], plan);
        return oq_err_set(err, OQ_ERR_RUNTIME,
                          "%s: changed during the run (sha256 %s in the plan, %s now): its external data %s changed",
                          m->path, *plan ? plan : "unknown", sha, m->ext_paths[i]);
    }
    return OQ_OK;
}

void oq_model_file_clear(oq_model_file *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->n_ext; i++) free(m->ext_paths[i]);
    free(m->ext_paths);
    free(m->ext_ids);
    oq_model_info_free(m->mi);
    free(m->bytes);
    free(m->path);
    memset(m, 0, sizeof *m);
}
