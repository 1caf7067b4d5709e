/* A model read once, its identity, and whether it is still the model a plan recorded
 * (modelfile-impl.h). A run that read the model by path in each process ran whatever was at
 * the path then: a file replaced between the plan and a worker ran under the plan's SHA-256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
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

/* Every external-data location of the model at `path` may be read: checked before any is
 * opened, as convert checks them (a location that leads out is read by ORT never, and here
 * would be hashed into a published identity: an oracle for any file the user can read). */
static oq_status locations_inside(const char *path, char *const *names, size_t n, oq_err *err)
{
    char *dir = n ? folder_of(path) : NULL;
    if (n && !dir) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < n; i++)
        if ((st = oq_ext_location_check(dir, names[i], err))) oq_err_prefix(err, "%s: ", path);
    free(dir);
    return st;
}

/* An external file's part of the identity: its name as the model gives it, and its SHA-256. */
static void ext_add(oq_sha256 *h, const char *name, const char sha[65])
{
    oq_sha256_update(h, "\n", 1);
    oq_sha256_update(h, name, strlen(name));
    oq_sha256_update(h, sha, 64);
}

/* The identity of a model whose file hashes to `own` and whose external files are `names`
 * beside `path` (hashed now): `own` itself when it has none. */
static oq_status identity_of(const char *path, const char own[65], char *const *names, size_t n, char sha[65],
                             oq_err *err)
{
    if (!n) return snprintf(sha, 65, "%s", own), OQ_OK;
    oq_sha256 h;
    oq_sha256_init(&h);
    oq_sha256_update(&h, own, 64);
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < n; i++) {
        char *file = beside(path, names[i]), fsha[65];
        st = !file ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory") : oq_sha256_file(file, fsha, err);
        if (st && file) oq_err_prefix(err, "%s: external data: ", path);
        if (!st) ext_add(&h, names[i], fsha);
        free(file);
    }
    oq_sha256_hex(&h, sha);
    return st;
}

/* The external files' identities taken before they are hashed: a change while or after they
 * are hashed moves a file's change time (or its inode, renamed over), which the check sees. */
static oq_status take_ext_ids(oq_model_file *m, oq_err *err)
{
    size_t n = m->mi ? m->mi->n_external_files : 0;
    if (!n) return OQ_OK;
    oq_status st = locations_inside(m->path, m->mi->external_files, n, err);
    if (st) return st;
    m->ext_paths = calloc(n, sizeof *m->ext_paths);
    m->ext_ids = calloc(n, sizeof *m->ext_ids);
    if (!m->ext_paths || !m->ext_ids) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (; m->n_ext < n; m->n_ext++) {
        char *file = beside(m->path, m->mi->external_files[m->n_ext]);
        if (!file) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        m->ext_paths[m->n_ext] = file;
        if (oq_file_id_at(file, &m->ext_ids[m->n_ext]) != 0) /* hashing it says why */
            memset(&m->ext_ids[m->n_ext], 0, sizeof m->ext_ids[m->n_ext]);
    }
    return OQ_OK;
}

oq_status oq_model_file_read(const char *path, oq_model_file *m, oq_err *err)
{
    memset(m, 0, sizeof *m);
    if (!(m->path = strdup(path))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_read_file(path, &m->bytes, &m->n, err);
    if (!st) st = oq_model_nesting_check(m->bytes, m->n, path, err);
    Onnx__ModelProto *p = st ? NULL : oq_model_unpack_inspect(m->bytes, m->n);
    if (!st && oq_model_inspect_proto(p, path, &m->mi, &m->inspected)) m->mi = NULL;
    if (p) onnx__model_proto__free_unpacked(p, NULL);
    char own[65];
    if (!st) oq_sha256_buf(m->bytes, m->n, own);
    if (!st) st = take_ext_ids(m, err);
    if (!st && identity_of(path, own, m->mi ? m->mi->external_files : NULL, m->n_ext, m->sha256, &m->unhashed))
        *m->sha256 = 0;
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
        char own[65], sha[65];
        oq_err e = {0};
        oq_sha256_buf(m->bytes, m->n, own);
        if (identity_of(m->path, own, m->mi->external_files, m->n_ext, sha, &e)) snprintf(sha, sizeof sha, "unreadable");
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
