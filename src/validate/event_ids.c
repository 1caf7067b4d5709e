/* A user's batch files and the run's events: the `event_indices` and `lengths` members a
 * saved batch carries are taken as they are, exactly (64-bit ids packed as run << 32 | event
 * are common), or refused: never renumbered, rounded or rewritten in silence. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/npz.h"
#include "tensor/tensor-impl.h"
#include "validate/validate-impl.h"

static int is_integer(oq_dtype d)
{
    return d == OQ_DTYPE_INT8 || d == OQ_DTYPE_INT16 || d == OQ_DTYPE_INT32 || d == OQ_DTYPE_INT64 ||
           d == OQ_DTYPE_UINT8 || d == OQ_DTYPE_UINT16 || d == OQ_DTYPE_UINT32 || d == OQ_DTYPE_UINT64;
}

/* Element i of an integer tensor into *v; 0 for a uint64 beyond int64 (then *big holds it). */
static int int_at(const oq_tensor *t, int64_t i, int64_t *v, uint64_t *big)
{
    uint64_t u = 0;
    int k = oq_tensor_int_at(t, i, v, &u);
    if (k != 2) return k; /* signed: as it is (a float is not reached: is_integer) */
    *big = u;
    *v = (int64_t)(u & INT64_MAX);
    return u <= INT64_MAX;
}

/* The member's values as int64, each >= 0: a float member is refused rather than rounded (2.5
 * is no event, and a float32 id above 2^24 is another event already). */
static oq_status member_ints(const oq_tensor *t, const char *path, const char *what, int64_t **out, oq_err *err)
{
    char shape[96];
    if (!is_integer(t->dtype) || t->ndim != 1)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s' is %s %s: it must be a 1-D integer array, one %s "
                          "per event", path, t->name, oq_dtype_name(t->dtype), oq_shape_str(t, shape, sizeof shape),
                          what);
    int64_t n = t->shape[0], *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        uint64_t big = 0;
        int fits = int_at(t, i, &v[i], &big);
        if (fits && v[i] >= 0) continue;
        int64_t neg = v[i];
        free(v);
        if (!fits) return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s' index %" PRId64 ": %" PRIu64 " is beyond "
                                     "the largest %s ortqual records (%" PRId64 ", int64)", path, t->name, i, big,
                                     what, INT64_MAX);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s' index %" PRId64 ": %" PRId64 " is negative", path,
                          t->name, i, neg);
    }
    *out = v;
    return OQ_OK;
}

oq_status oq_event_ids_read(const oq_npz *z, const char *path, int64_t first, oq_event_ids *ids, oq_err *err)
{
    *ids = (oq_event_ids){.first = first};
    const oq_tensor *t = oq_npz_get(z, "event_indices");
    if (!t) return OQ_OK;
    oq_status st = member_ints(t, path, "event id", &ids->v, err);
    if (!st) ids->n = t->shape[0];
    return st;
}

int64_t oq_event_id(const oq_event_ids *ids, int64_t pos)
{
    return ids->v ? ids->v[pos] : ids->first + pos;
}

const char *oq_event_str(const oq_event_ids *ids, int64_t pos, char *buf, size_t n)
{
    /* where the run's id is the position, one number says both */
    if (!ids || (ids->v && pos >= ids->n) || oq_event_id(ids, pos) == pos) snprintf(buf, n, "event %" PRId64, pos);
    else snprintf(buf, n, "event %" PRId64 " (index %" PRId64 " in the file)", oq_event_id(ids, pos), pos);
    return buf;
}

void oq_event_ids_clear(oq_event_ids *ids)
{
    free(ids->v);
    memset(ids, 0, sizeof *ids);
}

oq_status oq_event_ids_fit(const oq_event_ids *ids, const char *path, int64_t batch, oq_err *err)
{
    if (!ids->v || ids->n == batch) return OQ_OK;
    return oq_err_set(err, OQ_ERR_SHAPE, "%s: member 'event_indices' has %" PRId64 " entries for the batch's %" PRId64
                      " events (one id per event)", path, ids->n, batch);
}

oq_status oq_event_lengths_fit(const oq_npz *z, const oq_event_ids *ids, const char *path,
                               const oq_batch_inputs *in, oq_err *err)
{
    const oq_tensor *t = oq_npz_get(z, "lengths");
    if (!t || (!in->lengths && !in->seq)) return OQ_OK; /* no mask nor L: nothing the run records */
    int64_t *v = NULL;
    oq_status st = member_ints(t, path, "length", &v, err);
    if (!st && t->shape[0] != in->batch)
        st = oq_err_set(err, OQ_ERR_SHAPE, "%s: member 'lengths' has %" PRId64 " entries for the batch's %" PRId64
                        " events (one length per event)", path, t->shape[0], in->batch);
    for (int64_t i = 0; !st && i < in->batch; i++) {
        int64_t want = in->lengths ? in->lengths[i] : in->seq;
        char ev[96];
        if (v[i] != want)
            st = oq_err_set(err, OQ_ERR_MASK, "%s: member 'lengths' index %" PRId64 ": %" PRId64 ", but %s has %"
                            PRId64 " valid positions %s", path, i, v[i], oq_event_str(ids, i, ev, sizeof ev), want,
                            in->lengths ? "by the mask" : "(the model has no mask: every position is valid)");
    }
    free(v);
    return st;
}

/* The saved outputs' `event_indices` name the run's events of their batch, in order: against the
 * inputs file's own ids, or the numbers the run gave a file that has none (an outputs file saved
 * for events 5, 6, 7 paired with inputs numbered 0, 1, 2 was taken in silence). */
oq_status oq_event_ids_match(const oq_npz *saved, const char *saved_path, const oq_event_ids *ids,
                             const char *inputs_path, int64_t batch, oq_err *err)
{
    const oq_tensor *t = oq_npz_get(saved, "event_indices");
    if (!t) return OQ_OK;
    int64_t *v = NULL;
    oq_status st = member_ints(t, saved_path, "event id", &v, err);
    const char *why = "the saved outputs are of other events than their inputs (files are paired in order)";
    const char *numbered = ids->v ? "" : " (numbered on from the files before it: it has no member 'event_indices')";
    if (!st && t->shape[0] != batch)
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %" PRId64 " event_indices, where %s has %" PRId64 " events%s: %s",
                        saved_path, t->shape[0], inputs_path, batch, numbered, why);
    for (int64_t i = 0; !st && i < batch; i++)
        if (v[i] != oq_event_id(ids, i))
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: event_indices[%" PRId64 "] is %" PRId64 " where %s has event %"
                            PRId64 "%s: %s", saved_path, i, v[i], inputs_path, oq_event_id(ids, i), numbered, why);
    free(v);
    return st;
}

/* ---- ids seen across the run ------------------------------------------------------------- */

/* Open addressing, linear probing, at most 3/4 full: an id, and where it was seen (16 bytes:
 * a million events take 32 MB at most). */
typedef struct seen_slot {
    int64_t id; /* -1: empty (ids are >= 0) */
    uint32_t file, pos;
} seen_slot;

/* The files' contents too: each file's members' SHA-256 (oq_npz_members_sha256), and a table
 * of the files by it (index + 1, 0: empty; open addressing, at most half full). */
struct oq_event_seen {
    seen_slot *slot;
    size_t cap, n;
    char (*sha)[65];
    uint32_t *file;
    size_t fcap, fn;
};

static size_t slot_of(int64_t id, size_t cap)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: packed ids differ in their high bits */
    return (size_t)(h >> 17) & (cap - 1);
}

static seen_slot *seen_find(seen_slot *slot, size_t cap, int64_t id)
{
    size_t i = slot_of(id, cap);
    while (slot[i].id >= 0 && slot[i].id != id) i = (i + 1) & (cap - 1);
    return &slot[i];
}

static int seen_grow(oq_event_seen *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    seen_slot *v = malloc(cap * sizeof *v);
    if (!v) return 0;
    for (size_t i = 0; i < cap; i++) v[i].id = -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i].id >= 0) *seen_find(v, cap, s->slot[i].id) = s->slot[i];
    free(s->slot);
    s->slot = v;
    s->cap = cap;
    return 1;
}

oq_status oq_event_seen_create(oq_event_seen **out, oq_err *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

void oq_event_seen_free(oq_event_seen *s)
{
    if (!s) return;
    free(s->slot);
    free(s->sha);
    free(s->file);
    free(s);
}

oq_status oq_event_seen_add(oq_event_seen *s, const int64_t *idx, int64_t n, int numbered, const char *const *paths,
                            size_t file, oq_err *err)
{
    for (int64_t i = 0; i < n; i++) {
        if (4 * (s->n + 1) > 3 * s->cap && !seen_grow(s)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        seen_slot *at = seen_find(s->slot, s->cap, idx[i]);
        if (at->id >= 0)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: event %" PRId64 " (index %" PRId64 " in the file) is "
                              "also at index %" PRId64 " of %s: an event is counted once per run (event ids must "
                              "differ across the inputs)%s", paths[file], idx[i], i, (int64_t)at->pos, paths[at->file],
                              numbered ? "; the file has no member 'event_indices': its events are numbered on from "
                                         "the events before it" : "");
        *at = (seen_slot){idx[i], (uint32_t)file, (uint32_t)i};
        s->n++;
    }
    return OQ_OK;
}

static int by_member_name(const void *a, const void *b)
{
    const oq_tensor *x = *(const oq_tensor *const *)a, *y = *(const oq_tensor *const *)b;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

int oq_npz_members_sha256(const oq_npz *z, char hex[65])
{
    const oq_tensor **v = malloc((z->count ? z->count : 1) * sizeof *v);
    if (!v) return 0;
    memcpy(v, z->tensors, z->count * sizeof *v);
    qsort(v, z->count, sizeof *v, by_member_name); /* the archive's order is no content */
    oq_sha256 s;
    oq_sha256_init(&s);
    for (size_t i = 0; i < z->count; i++) {
        const char *name = v[i]->name ? v[i]->name : "", *dtype = oq_dtype_name(v[i]->dtype);
        int64_t ndim = v[i]->ndim;
        uint64_t nb = oq_tensor_nbytes(v[i]);
        oq_sha256_update(&s, name, strlen(name) + 1);
        oq_sha256_update(&s, dtype, strlen(dtype) + 1);
        oq_sha256_update(&s, &ndim, sizeof ndim);
        oq_sha256_update(&s, v[i]->shape, (size_t)ndim * sizeof *v[i]->shape);
        oq_sha256_update(&s, &nb, sizeof nb);
        oq_sha256_update(&s, v[i]->data, (size_t)nb);
    }
    oq_sha256_hex(&s, hex);
    free(v);
    return 1;
}

static size_t file_slot(const char *hex, size_t cap)
{
    uint64_t h = 0;
    for (int i = 0; i < 16; i++) h = h << 4 | (uint64_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
    return (size_t)h & (cap - 1);
}

static int files_grow(oq_event_seen *s)
{
    size_t cap = s->fcap ? s->fcap * 2 : 256;
    uint32_t *t = calloc(cap, sizeof *t);
    char(*sha)[65] = realloc(s->sha, cap / 2 * sizeof *sha);
    if (!t || !sha) {
        free(t);
        if (sha) s->sha = sha;
        return 0;
    }
    s->sha = sha;
    for (size_t i = 0; i < s->fcap; i++)
        if (s->file[i]) {
            size_t j = file_slot(sha[s->file[i] - 1], cap);
            while (t[j]) j = (j + 1) & (cap - 1);
            t[j] = s->file[i];
        }
    free(s->file);
    s->file = t;
    s->fcap = cap;
    return 1;
}

oq_status oq_event_seen_file(oq_event_seen *s, const oq_npz *z, const char *const *paths, oq_err *err)
{
    size_t file = s->fn;
    if (2 * (s->fn + 1) > s->fcap && !files_grow(s)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    char *sha = s->sha[s->fn];
    if (!oq_npz_members_sha256(z, sha)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    size_t j = file_slot(sha, s->fcap);
    for (; s->file[j]; j = (j + 1) & (s->fcap - 1))
        if (!strcmp(s->sha[s->file[j] - 1], sha)) {
            size_t first = s->file[j] - 1;
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "input_files: files %zu and %zu have the same content (%s and "
                              "%s, SHA-256 %.12s... of their members' names, dtypes, shapes and values): its events "
                              "would count twice", first + 1, file + 1, paths[first], paths[file], sha);
        }
    s->file[j] = (uint32_t)(++s->fn);
    return OQ_OK;
}
