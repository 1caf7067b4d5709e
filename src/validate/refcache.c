/* The reference cache: a reference's outputs for one batch, stored by content so that the next
 * validation of the same inputs (a new ORT build, provider or option) reads them instead of
 * recomputing them.
 *
 * An entry is two files in the cache directory: KEY.json, written last, gives the outputs'
 * SHA-256 and lists their tensors; KEY.npz holds them. KEY is the SHA-256 of the batch's key
 * text, everything the outputs depend on (cache_key_text, then the batch's inputs file's
 * SHA-256), and the record holds that text: a record under another batch's KEY (copied, synced
 * or renamed there) is refused, never taken for that batch's. The outputs' file is named by the
 * same KEY, so a record cannot name another batch's outputs (an edited one did, and its file
 * verified). Both files are written to a temporary file in the directory and put in place
 * whole; one already there with the same bytes is kept as it is (a concurrent run writing the
 * same entry writes the same bytes), so a file another worker verified is never replaced under
 * it. Nothing read is trusted: each file is read only when it is a regular file (a FIFO is not
 * waited on, a symbolic link not followed), the outputs must hash to the SHA-256 the record
 * gives and hold exactly the tensors it lists, with the batch's size, and those must be the
 * reference's outputs (the plan's ref_outputs), float64. A hit reaches the run's
 * other workers by name (refstream.c), with the identity of the file that was read and checked:
 * a reader refuses another file in its place, or the same changed. */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "ortqual/reference.h"
#include "validate/validate-impl.h"

/* 3: the outputs' file is KEY.npz (2's was named by its SHA-256, which a record could name for
 * any batch); 2: the record's key holds the batch's inputs (1's did not: a record was any
 * same-shaped batch's). KEY hashes the schema: an older entry is not found, never misread. */
#define CACHE_SCHEMA "ortqual.refcache/3"

/* gid is this process's group, or one of its supplementary groups. */
static int my_group(gid_t gid)
{
    if (gid == getegid()) return 1;
    gid_t groups[NGROUPS_MAX + 1];
    int n = getgroups((int)(sizeof groups / sizeof *groups), groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == gid) return 1;
    return 0;
}

static void group_name(gid_t gid, char *name, size_t n)
{
    struct group gr, *found = NULL;
    char buf[4096];
    if (getgrgid_r(gid, &gr, buf, sizeof buf, &found) == 0 && found) snprintf(name, n, "%s", gr.gr_name);
    else snprintf(name, n, "%u", (unsigned)gid);
}

void oq_user_name(unsigned uid, char *name, size_t n)
{
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &found) == 0 && found) snprintf(name, n, "%s", pw.pw_name);
    else snprintf(name, n, "%u", uid);
}

/* A group's shared cache, as its administrator made it: it is never made or changed here, and
 * entries are verified by content on read, so what matters is who can put files there: the
 * group (this user's), never anyone. */
static oq_status shared_ready(const char *dir, const struct stat *sb, oq_refcache_dir *d, oq_err *err)
{
    char group[64];
    group_name(sb->st_gid, group, sizeof group);
    mode_t mode = sb->st_mode & 07777;
    if (!my_group(sb->st_gid))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: its group %s is none of this user's: a shared "
                          "cache is a folder of one of your groups", dir, group);
    if (mode & S_IWOTH)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: world-writable (0%o): anyone could plant a "
                          "reference; a shared cache is writable by its group alone", dir, (unsigned)mode);
    if ((mode & S_IRWXG) != S_IRWXG)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: the group %s cannot read, write and enter it "
                          "(0%o): a shared cache is group-writable", dir, group, (unsigned)mode);
    if (d) {
        d->no_setgid = !(mode & S_ISGID);
        snprintf(d->group, sizeof d->group, "%s", group);
    }
    return OQ_OK;
}

/* A name the cache writes: KEY.json or KEY.npz (KEY 64 hex digits, as every schema's), a
 * temporary one of those being written or left by a killed run, or NFS's own ".nfs..." (an
 * entry replaced while another run had it open). */
static int entry_name(const char *name)
{
    size_t hex = strspn(name, "0123456789abcdef"), ext = 0;
    if (hex == 64 && !strncmp(name + 64, ".json", 5)) ext = 5;
    else if (hex == 64 && !strncmp(name + 64, ".npz", 4)) ext = 4;
    if (!ext) return !strncmp(name, ".nfs", 4);
    char base[80];
    snprintf(base, sizeof base, "%.*s", (int)(64 + ext), name);
    return !name[64 + ext] || oq_temp_name_is(name, base, 0);
}

/* The first name in the folder that is none of the cache's ("" when it holds only entries), so
 * that a folder of other files is never taken over. */
static oq_status foreign_name(const char *dir, char *name, size_t n, oq_err *err)
{
    DIR *d = opendir(dir);
    if (!d) return oq_err_set(err, OQ_ERR_IO, "cache directory %s: cannot list it: %s", dir, strerror(errno));
    *name = 0;
    for (struct dirent *e; !*name && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !entry_name(e->d_name))
            snprintf(name, n, "%s", e->d_name);
    closedir(d);
    return OQ_OK;
}

/* An existing per-user folder that others can read or write, before it is made private: only a
 * folder that holds nothing but the cache's entries is changed. One open to everyone's writing
 * or sticky (a shared folder such as /tmp) is refused whatever it holds. */
static oq_status private_ready(const char *dir, const struct stat *sb, oq_err *err)
{
    unsigned mode = (unsigned)(sb->st_mode & 07777);
    if (sb->st_mode & (S_IWOTH | S_ISVTX))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: %s (0%o), a folder shared with others such as "
                          "/tmp: its mode is not changed for the per-user reference cache: give a folder of your own "
                          "(or a group's, shared: cache_shared)", dir,
                          sb->st_mode & S_IWOTH ? "world-writable" : "sticky", mode);
    char other[256];
    oq_status st = foreign_name(dir, other, sizeof other, err);
    if (!st && *other)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: holds '%s', which is no cache entry, and others "
                          "can open it (0%o): a folder of other files is not made private for the reference cache: "
                          "give a new or empty folder, or one that holds only the cache's entries", dir, other, mode);
    return st;
}

/* The directory: per user, made 0700 when absent; a symlink must be this user's, and so must
 * the directory it leads to (another user's could be swapped under us or read our outputs). */
oq_status oq_refcache_dir_ready(const char *dir, int shared, oq_refcache_dir *d, oq_err *err)
{
    struct stat sb;
    if (d) memset(d, 0, sizeof *d);
    if (lstat(dir, &sb) == 0 && S_ISLNK(sb.st_mode) && sb.st_uid != geteuid())
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: a symbolic link owned by another user (uid %u)",
                          dir, (unsigned)sb.st_uid);
    if (shared && stat(dir, &sb) != 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: %s: a shared cache is made once, by its "
                          "group's administrator (a setgid folder of the group, mode 2770)", dir, strerror(errno));
    if (stat(dir, &sb) != 0) {
        char parent[4096];
        snprintf(parent, sizeof parent, "%s", dir);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = 0;
            oq_status st = oq_mkdirs(parent, err);
            if (st) return st;
        }
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return oq_err_set(err, OQ_ERR_IO, "cache directory %s: cannot create: %s", dir, strerror(errno));
        if (stat(dir, &sb) != 0)
            return oq_err_set(err, OQ_ERR_IO, "cache directory %s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode)) return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: not a directory", dir);
    if (shared) return shared_ready(dir, &sb, d, err);
    if (sb.st_uid != geteuid())
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %s: owned by another user (uid %u): the "
                          "reference cache is per user (another's entries are not trusted): give a cache "
                          "directory of your own, or run without one", dir, (unsigned)sb.st_uid);
    /* private: group and others lose their bits, the owner's stay the user's (a cache made
     * read-only, 0500, is read and not written to: it was made 0700). On a read-only file
     * system nothing of ours can be stored there for others to read: it is used as it is (it
     * was refused, exit 2, unless it happened to be 0700). */
    mode_t mode = sb.st_mode & 0777;
    oq_status st = (mode & 077) || (sb.st_mode & S_ISVTX) ? private_ready(dir, &sb, err) : OQ_OK;
    if (st || !(mode & 077)) return st;
    if (chmod(dir, mode & 0700) == 0) {
        if (d) d->was = (unsigned)(sb.st_mode & 07777);
    } else if (errno != EROFS) {
        return oq_err_set(err, OQ_ERR_IO, "cache directory %s: cannot make it private (0%o): %s", dir,
                          (unsigned)(mode & 0700), strerror(errno));
    }
    return OQ_OK;
}

/* What the reference's outputs depend on, besides a batch's inputs: which reference and the
 * version of its numerics, its weights (by content) and the options that change its outputs.
 * Threads do not: the C reference is bit-identical on any count. */
static char *cache_key_text(const oq_validate_plan *p, oq_err *err)
{
    /* the weights by the plan's SHA-256: the reference runs them only if its bytes are those */
    const char *weights = p->weights ? p->weights_sha256 : "-";
    if (!weights) {
        oq_err_set(err, OQ_ERR_INVALID_ARG, "plan of %s: weights %s without their sha256", p->config.name, p->weights);
        return NULL;
    }
    oq_dynbuf b = {0};
    int bad = oq_dynbuf_addf(&b, "%s\nreference %s numerics %d\nweights %s\nheads %d kv_heads %d\nmask %s\n",
                             CACHE_SCHEMA, p->config.name, OQ_REFERENCE_NUMERICS, weights, (int)p->heads,
                             (int)p->kv_heads, p->mask_member ? p->mask_member : "-");
    for (size_t i = 0; !bad && i < p->n_inputs; i++)
        bad = oq_dynbuf_addf(&b, "input %s <- %s\n", p->input_names[i], p->input_members[i]);
    if (bad) {
        oq_dynbuf_clear(&b);
        oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return oq_dynbuf_take(&b, NULL);
}

int oq_refcache_applies(const oq_validate_plan *p)
{
    return p->is_reference && p->cache_dir && !oq_config_uses_ort(&p->config) && !oq_config_is_expected(&p->config);
}

oq_status oq_refcache_open(const oq_validate_plan *p, oq_refcache *c, oq_err *err)
{
    memset(c, 0, sizeof *c);
    if (!oq_refcache_applies(p)) return OQ_OK;
    if (snprintf(c->dir, sizeof c->dir, "%s", p->cache_dir) >= (int)sizeof c->dir)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cache directory %.64s...: path too long", p->cache_dir);
    oq_status st = oq_refcache_dir_ready(c->dir, p->cache_shared, NULL, err); /* checked (and said) by the run first */
    if (st) return st;
    c->shared = p->cache_shared;
    c->own_only = !p->cache_shared || p->cache_trust_self;
    c->key_text = cache_key_text(p, err);
    if (!c->key_text) return err->status;
    c->outputs = p->ref_outputs;
    c->n_outputs = p->n_ref_outputs;
    c->enabled = 1;
    return OQ_OK;
}

void oq_refcache_close(oq_refcache *c)
{
    free(c->key_text);
    memset(c, 0, sizeof *c);
}

/* A batch's key text is the reference's (c->key_text) followed by this line. */
#define INPUTS_LINE "inputs %.64s\n"

void oq_refcache_key(const oq_refcache *c, const char inputs_sha[65], char key[65])
{
    char line[80];
    int n = snprintf(line, sizeof line, INPUTS_LINE, inputs_sha);
    oq_sha256 h;
    oq_sha256_init(&h);
    oq_sha256_update(&h, c->key_text, strlen(c->key_text));
    oq_sha256_update(&h, line, (size_t)n);
    oq_sha256_hex(&h, key);
}

/* A batch's key: KEY, which names its record, and the text it hashes, which the record holds. */
typedef struct batch_key {
    char hex[65];
    char *text;
    char *json; /* text as a JSON string, as put writes it */
} batch_key;

static void batch_key_clear(batch_key *k)
{
    free(k->text);
    free(k->json);
    k->text = k->json = NULL;
}

/* 0: out of memory. */
static int batch_key_make(const oq_refcache *c, const char inputs_sha[65], batch_key *k)
{
    oq_dynbuf b = {0};
    k->text = oq_dynbuf_addf(&b, "%s" INPUTS_LINE, c->key_text, inputs_sha) ? NULL : oq_dynbuf_take(&b, NULL);
    oq_dynbuf_clear(&b);
    json_t *s = k->text ? json_string(k->text) : NULL;
    k->json = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    oq_refcache_key(c, inputs_sha, k->hex);
    if (!k->json) batch_key_clear(k);
    return k->json != NULL;
}

static json_t *tensors_json(const oq_npz *z)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < z->count; i++) {
        const oq_tensor *t = z->tensors[i];
        json_t *shape = json_array();
        for (int32_t d = 0; d < t->ndim; d++) json_array_append_new(shape, json_integer(t->shape[d]));
        json_array_append_new(a, json_pack("{s:s, s:s, s:o}", "name", t->name, "dtype", oq_dtype_name(t->dtype),
                                           "shape", shape));
    }
    return a;
}

/* The stored outputs against the record: the same tensors (names, dtypes, shapes). */
static int outputs_listed(const oq_npz *z, const json_t *listed, char *why, size_t n)
{
    json_t *have = tensors_json(z);
    int ok = have && json_equal(have, listed);
    json_decref(have);
    if (!ok) snprintf(why, n, "its outputs are not the tensors its record lists");
    return ok;
}

/* The stored outputs against the batch: some, each with the batch's B first. */
static int batch_fits(const oq_npz *z, int64_t batch, char *why, size_t n)
{
    for (size_t i = 0; batch > 0 && i < z->count; i++)
        if (z->tensors[i]->ndim < 1 || z->tensors[i]->shape[0] != batch)
            return snprintf(why, n, "output '%s' is not of this batch's size %lld", z->tensors[i]->name,
                            (long long)batch),
                   0;
    if (!z->count) return snprintf(why, n, "no outputs"), 0;
    return 1;
}

/* The stored outputs against the reference: the outputs it gives (c->outputs), each float64 as
 * it computes them. An entry that agrees with its record but holds another name or float32
 * values was used (the configuration under test blamed for the name, the reference made
 * float32). */
static int reference_fits(const oq_refcache *c, const oq_npz *z, char *why, size_t n)
{
    if (!c->n_outputs) return 1; /* a plan that names none (a caller of the cache alone) */
    for (size_t i = 0; i < z->count; i++) {
        const oq_tensor *t = z->tensors[i];
        size_t k = 0;
        while (k < c->n_outputs && strcmp(c->outputs[k], t->name)) k++;
        if (k == c->n_outputs)
            return snprintf(why, n, "output '%s' is none of the reference's (%s%s)", t->name, c->outputs[0],
                            c->n_outputs > 1 ? ", ..." : ""),
                   0;
        if (t->dtype != OQ_DTYPE_FLOAT64)
            return snprintf(why, n, "output '%s' is %s, not the reference's float64", t->name, oq_dtype_name(t->dtype)), 0;
    }
    if (z->count != c->n_outputs)
        return snprintf(why, n, "%zu outputs, not the reference's %zu", z->count, c->n_outputs), 0;
    return 1;
}

/* ---- a record read without parsing it ----------------------------------------------- */

/* Records are written by jansson (oq_refcache_put); parsing one back cost more than hashing
 * its outputs. A record is instead compared with the text put writes for the batch's key and
 * the outputs found: equal, it says what a parse would. Anything else (another layout, a name
 * that would be escaped, another batch's key) is parsed, and judged as before. */
#define RECORD_HEAD "{\n \"schema\": \"" CACHE_SCHEMA "\",\n \"sha256\": \""

/* The outputs' SHA-256 a record in put's layout names (NULL: not that layout). */
static const char *record_sha_fast(const char *text, size_t n)
{
    size_t h = sizeof RECORD_HEAD - 1;
    if (n < h + 65 || memcmp(text, RECORD_HEAD, h) || !oq_sha256_hex_at(text + h) || text[h + 64] != '"') return NULL;
    return text + h;
}

/* A name jansson writes as it is (no escapes, ASCII). */
static int plain_name(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '"' || *s == '\\') return 0;
    return 1;
}

/* The text put writes for outputs z stored as `sha` (JSON_INDENT(1)); 0: a name needs escapes
 * or memory ran out. */
static int record_text(const char *key_json, const char *sha, const oq_npz *z, oq_dynbuf *b)
{
    int bad = oq_dynbuf_addf(b, RECORD_HEAD "%.64s\",\n \"key\": %s,\n \"outputs\": [", sha, key_json);
    for (size_t i = 0; !bad && i < z->count; i++) {
        const oq_tensor *t = z->tensors[i];
        if (!plain_name(t->name)) return 0;
        bad = oq_dynbuf_addf(b, "%s\n  {\n   \"name\": \"%s\",\n   \"dtype\": \"%s\",\n   \"shape\": [", i ? "," : "",
                             t->name, oq_dtype_name(t->dtype));
        for (int32_t d = 0; !bad && d < t->ndim; d++)
            bad = oq_dynbuf_addf(b, "%s\n    %lld", d ? "," : "", (long long)t->shape[d]);
        if (!bad) bad = oq_dynbuf_add(b, t->ndim ? "\n   ]\n  }" : "]\n  }");
    }
    if (!bad) bad = oq_dynbuf_add(b, z->count ? "\n ]\n}" : "]\n}");
    return !bad;
}

static int record_is(const batch_key *k, const char *text, size_t n, const char *sha, const oq_npz *z)
{
    oq_dynbuf b = {0};
    int same = record_text(k->json, sha, z, &b) && b.len == n && !memcmp(b.buf, text, n);
    oq_dynbuf_clear(&b);
    return same;
}

int oq_refcache_record_is(const oq_refcache *c, const char inputs_sha[65], const char *text, size_t n,
                          const char *sha, const oq_npz *z)
{
    batch_key k;
    int same = batch_key_make(c, inputs_sha, &k) && record_is(&k, text, n, sha, z);
    batch_key_clear(&k);
    return same;
}

/* The SHA-256 of the outputs a record names, into sha; *rec its parse when it is not in put's
 * layout. 0: not a cache record. */
static int record_sha(const char *text, size_t n, char sha[65], json_t **rec)
{
    const char *fast = record_sha_fast(text, n);
    if (fast) return snprintf(sha, 65, "%.64s", fast), 1;
    *rec = json_loadb(text, n, 0, NULL);
    const char *named = json_string_value(json_object_get(*rec, "sha256"));
    const char *schema = json_string_value(json_object_get(*rec, "schema"));
    if (!schema || strcmp(schema, CACHE_SCHEMA) || !named || !oq_sha256_hex_at(named) || named[64]) return 0;
    return snprintf(sha, 65, "%s", named), 1;
}

/* The record's key is this batch's: else it is another entry's, renamed or copied here. */
static int record_keyed(const oq_refcache *c, const batch_key *k, const json_t *rec, char *why, size_t wn)
{
    const char *key = json_string_value(json_object_get(rec, "key"));
    if (!key) return snprintf(why, wn, "%s.json: not a cache record", k->hex), 0;
    if (!strcmp(key, k->text)) return 1;
    const char *whose = strncmp(key, c->key_text, strlen(c->key_text)) ? "another reference" : "other inputs";
    return snprintf(why, wn, "%s.json: its record is for %s", k->hex, whose), 0;
}

/* The record in put's layout is this batch's: its key follows the SHA-256 as put writes it. */
static int record_keyed_fast(const batch_key *k, const char *text, size_t n)
{
    static const char between[] = "\",\n \"key\": ";
    size_t at = sizeof RECORD_HEAD - 1 + 64, b = sizeof between - 1, kn = strlen(k->json);
    return n > at + b + kn && !memcmp(text + at, between, b) && !memcmp(text + at + b, k->json, kn);
}

int oq_refcache_has(const oq_refcache *c, const char inputs_sha[65])
{
    batch_key k;
    if (!c->enabled || !batch_key_make(c, inputs_sha, &k)) return 0;
    char path[4200], sha[65], why[300];
    unsigned char *text = NULL;
    size_t n = 0;
    json_t *rec = NULL;
    snprintf(path, sizeof path, "%s/%s.json", c->dir, k.hex);
    int has = !oq_read_own_file_id(path, &text, &n, NULL, NULL) && record_sha((const char *)text, n, sha, &rec) &&
              (rec ? record_keyed(c, &k, rec, why, sizeof why) : record_keyed_fast(&k, (const char *)text, n));
    json_decref(rec);
    free(text);
    batch_key_clear(&k);
    return has;
}

/* The record is this batch's and lists z's tensors: its text is put's for them, or its parse
 * holds the batch's key and lists them. */
static int record_fits(const oq_refcache *c, const batch_key *k, const char *text, size_t n, json_t **rec,
                       const char *sha, const oq_npz *z, char *why, size_t wn)
{
    if (!*rec && record_is(k, text, n, sha, z)) return 1;
    if (!*rec && !(*rec = json_loadb(text, n, 0, NULL)))
        return snprintf(why, wn, "%s.json: not a cache record", k->hex), 0;
    return record_keyed(c, k, *rec, why, wn) && outputs_listed(z, json_object_get(*rec, "outputs"), why, wn);
}

/* The outputs' file does not hash to what the record gives: a record of another batch (renamed
 * or copied here) is said to be one, else the file is corrupt or the record edited. */
static void outputs_mismatch(const oq_refcache *c, const batch_key *k, const char *text, size_t n, json_t **rec,
                             char *why, size_t wn)
{
    if (!*rec) *rec = json_loadb(text, n, 0, NULL);
    if (*rec && !record_keyed(c, k, *rec, why, wn)) return;
    snprintf(why, wn, "%s.npz: content does not match the SHA-256 its record gives (corrupt, or edited)", k->hex);
}

/* Whose an entry is: the one owner of its two files. It is the record that says which outputs
 * are this batch's, so an entry whose record another user wrote is that user's whoever owns the
 * outputs (a member's record over your own outputs of other inputs, renamed to this key, was
 * taken for yours: never spot-checked); one whose outputs another user wrote is theirs. */
unsigned oq_refcache_writer(unsigned record_uid, unsigned outputs_uid)
{
    return record_uid != (unsigned)geteuid() ? record_uid : outputs_uid;
}

int oq_refcache_entry_writer(const oq_refcache *c, const char key[65], unsigned *uid)
{
    char path[4200];
    struct stat rec, out;
    snprintf(path, sizeof path, "%s/%s.json", c->dir, key);
    if (lstat(path, &rec) != 0) return 0;
    snprintf(path, sizeof path, "%s/%s.npz", c->dir, key);
    if (lstat(path, &out) != 0) return 0;
    *uid = oq_refcache_writer((unsigned)rec.st_uid, (unsigned)out.st_uid);
    return 1;
}

void oq_refcache_writer_said(const oq_refcache_hit *e, const char *verb, char *s, size_t n)
{
    char user[64], outs[64];
    oq_user_name(e->writer, user, sizeof user);
    int by_record = e->writer == e->record_uid;
    int n0 = snprintf(s, n, "%s.%s: %s by uid %u (%s)", e->key, by_record ? "json" : "npz", verb, e->writer, user);
    if (!by_record || e->id.uid == e->writer || n0 < 0 || (size_t)n0 >= n) return;
    oq_user_name(e->id.uid, outs, sizeof outs);
    snprintf(s + n0, n - (size_t)n0, ", over outputs of uid %u (%s)", (unsigned)e->id.uid, outs);
}

/* Both files of the entry are this user's: another user's content is not trusted, even where it
 * agrees with its record (the record's SHA-256 is its writer's own). */
static int owned(const oq_refcache *c, const oq_refcache_hit *hit, char *why, size_t wn)
{
    if (hit->writer == (unsigned)geteuid()) return 1;
    char said[300];
    oq_refcache_writer_said(hit, c->shared ? "written" : "owned", said, sizeof said);
    snprintf(why, wn, "%s, not you%s", said, c->shared ? ": only your own entries are trusted" : "");
    return 0;
}

/* The entry's writer, from the owners of its files as read (jid: the record's); 0: one this
 * cache does not take (another user's where only your own are: why says whose). */
static int writer_taken(const oq_refcache *c, oq_refcache_hit *hit, const oq_file_id *jid, char *why, size_t wn)
{
    hit->record_uid = jid->uid;
    hit->writer = oq_refcache_writer(jid->uid, hit->id.uid);
    return !c->own_only || owned(c, hit, why, wn);
}

/* The entry's outputs file read and checked into hit (its name, bytes and identity); hit->npz
 * stays NULL on a miss (no record) or a bad entry (why says what is wrong: a file that cannot
 * be read as the reason it cannot). */
static void entry_read(const oq_refcache *c, const batch_key *k, int64_t batch, oq_refcache_hit *hit, char *why,
                       size_t wn)
{
    char sha[65], file_sha[65], *path = hit->path;
    size_t pn = sizeof hit->path;
    struct stat sb;
    snprintf(path, pn, "%s/%s.json", c->dir, k->hex);
    if (lstat(path, &sb) != 0) return;
    unsigned char *text = NULL, *buf = NULL;
    size_t tn = 0, n = 0;
    json_t *rec = NULL;
    oq_npz *z = NULL;
    oq_err re = {0};
    oq_file_id jid;
    if (oq_read_own_file_id(path, &text, &tn, &jid, &re))
        snprintf(why, wn, "%s", re.msg);
    else if (!record_sha((const char *)text, tn, file_sha, &rec))
        snprintf(why, wn, "%s.json: not a cache record", k->hex);
    else if (snprintf(path, pn, "%s/%s.npz", c->dir, k->hex), oq_read_own_file_id(path, &buf, &n, &hit->id, &re))
        snprintf(why, wn, "%s", re.msg);
    else if (!writer_taken(c, hit, &jid, why, wn))
        ;
    else if (oq_sha256_buf(buf, n, sha), strcmp(sha, file_sha))
        outputs_mismatch(c, k, (const char *)text, tn, &rec, why, wn);
    else if (oq_npz_parse(buf, n, path, &z, &re))
        snprintf(why, wn, "%s", re.msg);
    else if (record_fits(c, k, (const char *)text, tn, &rec, file_sha, z, why, wn) && batch_fits(z, batch, why, wn) &&
             reference_fits(c, z, why, wn)) {
        hit->npz = buf;
        hit->n = n;
        buf = NULL;
    }
    oq_npz_free(z);
    free(buf);
    free(text);
    json_decref(rec);
}

void oq_refcache_get(const oq_refcache *c, const char inputs_sha[65], int64_t batch, oq_refcache_hit *hit,
                     char *warning, size_t wn)
{
    char *why = hit->why;
    batch_key k;
    hit->npz = NULL;
    hit->record_uid = hit->writer = (unsigned)-1; /* set once both files are read */
    *hit->key = *why = 0;
    *warning = 0;
    if (!c->enabled) return;
    if (!batch_key_make(c, inputs_sha, &k)) {
        snprintf(warning, wn, "reference cache: not read: out of memory");
        return;
    }
    snprintf(hit->key, sizeof hit->key, "%s", k.hex); /* before: a reason names it */
    entry_read(c, &k, batch, hit, why, sizeof hit->why);
    if (*why) snprintf(warning, wn, "reference cache entry %s ignored and recomputed: %s", k.hex, why);
    batch_key_clear(&k);
}

/* The mode bits an entry gets whatever the umask: the group's members read a shared cache's. */
static mode_t entry_mode(const oq_refcache *c)
{
    return c->shared ? S_IRUSR | S_IRGRP : 0;
}

/* A per-user cache's file of another user is removed before its replacement is put in place
 * (the folder is this user's: a rename there is safe); one kept with the same bytes would stay
 * another's, ignored on every run. */
static void drop_foreign(const oq_refcache *c, const char *path)
{
    struct stat sb;
    if (!c->shared && lstat(path, &sb) == 0 && sb.st_uid != geteuid()) unlink(path);
}

oq_status oq_refcache_put(const oq_refcache *c, const char inputs_sha[65], const unsigned char *npz, size_t n,
                          oq_err *err)
{
    if (!c->enabled) return OQ_OK;
    char sha[65], path[4200];
    batch_key k;
    if (!batch_key_make(c, inputs_sha, &k)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_npz *z = NULL;
    /* the record lists the tensors as stored (the writer may have converted a dtype) */
    oq_status st = oq_npz_parse(npz, n, "reference outputs", &z, err);
    if (!st) {
        oq_sha256_buf(npz, n, sha);
        snprintf(path, sizeof path, "%s/%s.npz", c->dir, k.hex);
        drop_foreign(c, path);
        st = oq_install_file_nosync(path, npz, n, entry_mode(c), err); /* verified by SHA-256 on read */
    }
    json_t *rec = st ? NULL
                     : json_pack("{s:s, s:s, s:s, s:o}", "schema", CACHE_SCHEMA, "sha256", sha, "key", k.text,
                                 "outputs", tensors_json(z));
    char *text = rec ? json_dumps(rec, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    if (!st && !text) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    snprintf(path, sizeof path, "%s/%s.json", c->dir, k.hex);
    if (!st) drop_foreign(c, path);
    if (!st) st = oq_install_file_nosync(path, text, strlen(text), entry_mode(c), err);
    free(text);
    json_decref(rec);
    oq_npz_free(z);
    batch_key_clear(&k);
    return st;
}
