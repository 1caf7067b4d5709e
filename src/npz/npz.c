/* .npz archives: zip files of .npy members, through libzip; stored ones written here. */
#include "ortqual/npz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include "npz/npy-impl.h"
#include "npz/npz-impl.h"
#include "ortqual/fileio.h"

#define NPY_SUFFIX ".npy"

/* ---- reading ---- */

static oq_status npz_alloc(const char *who, oq_npz **out, oq_err *err)
{
    oq_npz *z = calloc(1, sizeof *z);
    if (!z || !(z->path = strdup(who))) {
        free(z);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *out = z;
    return OQ_OK;
}

/* Strip ".npy"; refuse members that are not .npy files. */
static oq_status member_key(const char *member, const char *who, char **key, oq_err *err)
{
    size_t len = strlen(member), sl = strlen(NPY_SUFFIX);
    if (len <= sl || strcmp(member + len - sl, NPY_SUFFIX) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s' is not a .npy file", who, member);
    if (!(*key = strndup(member, len - sl))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return OQ_OK;
}

/* Deflate's best ratio: 258 bytes from one 1-bit literal/length code and a 1-bit
 * distance code, about 1032:1 (stored members are 1:1). */
#define DEFLATE_MAX_RATIO 1032

/* A member's sizes as the directory declares them must be possible: at most
 * OQ_READ_MAX bytes, its compressed bytes inside the archive, and no more than
 * DEFLATE_MAX_RATIO times those. A corrupt or hostile directory is refused here,
 * before its claim is allocated. */
static oq_status check_sizes(const zip_stat_t *sb, uint64_t archive, const char *who,
                             const char *key, oq_err *err)
{
    unsigned long long size = sb->size;
    uint64_t comp = (sb->valid & ZIP_STAT_COMP_SIZE) ? sb->comp_size : archive;
    if (sb->size > OQ_READ_MAX)
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: member '%s': %llu bytes, above the limit of %llu (16 GiB)", who,
                          key, size, (unsigned long long)OQ_READ_MAX);
    if (comp > archive)
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: member '%s': compressed size %llu is larger than the archive "
                          "(%llu bytes)", who, key, (unsigned long long)comp,
                          (unsigned long long)archive);
    if (sb->size / DEFLATE_MAX_RATIO > comp + 1)
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: member '%s': declared size %llu is impossible (%llu compressed)",
                          who, key, size, (unsigned long long)comp);
    return OQ_OK;
}

/* Read a whole member, checking its CRC (libzip does at the end of the stream). */
static oq_status member_bytes(zip_t *za, zip_uint64_t i, uint64_t archive, const char *who,
                              const char *key, unsigned char **buf, size_t *n, oq_err *err)
{
    zip_stat_t sb;
    if (zip_stat_index(za, i, 0, &sb) != 0 || !(sb.valid & ZIP_STAT_SIZE))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s': cannot stat: %s", who, key,
                          zip_strerror(za));
    oq_status st = check_sizes(&sb, archive, who, key, err);
    if (st) return st;
    unsigned char *b = malloc(sb.size ? sb.size : 1);
    if (!b) return oq_err_set(err, OQ_ERR_NOMEM, "%s: member '%s': out of memory", who, key);
    zip_file_t *zf = zip_fopen_index(za, i, 0);
    if (!zf) {
        free(b);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s': cannot open: %s", who, key,
                          zip_strerror(za));
    }
    zip_uint64_t got = 0;
    zip_int64_t r = 0;
    while (got < sb.size && (r = zip_fread(zf, b + got, sb.size - got)) > 0) got += (zip_uint64_t)r;
    unsigned char extra;
    if (r >= 0 && got == sb.size) r = zip_fread(zf, &extra, 1); /* the end, and the CRC check */
    if (r != 0 || got != sb.size) {
        oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s': %s", who, key,
                   r < 0 ? zip_file_strerror(zf) : "size does not match the directory");
        zip_fclose(zf);
        free(b);
        return OQ_ERR_FORMAT;
    }
    zip_fclose(zf);
    *buf = b;
    *n = (size_t)sb.size;
    return OQ_OK;
}

static oq_status read_member(zip_t *za, zip_uint64_t i, uint64_t archive, oq_npz *z, oq_err *err)
{
    const char *who = z->path;
    const char *member = zip_get_name(za, i, 0);
    if (!member) return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s", who, zip_strerror(za));
    char *key;
    oq_status st = member_key(member, who, &key, err);
    if (st) return st;
    if (oq_npz_get(z, key)) {
        oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s' appears twice", who, key);
        free(key);
        return OQ_ERR_FORMAT;
    }
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_tensor *t = NULL;
    if (!(st = member_bytes(za, i, archive, who, key, &buf, &n, err))) {
        char label[OQ_ERR_MSG_MAX / 2];
        snprintf(label, sizeof label, "%s: member '%s'", who, key);
        st = oq_npy_parse(buf, n, label, &t, err);
    }
    free(buf);
    if (!st) {
        t->name = key; /* hand over ownership */
        z->tensors[z->count++] = t;
    } else {
        free(key);
    }
    return st;
}

/* `archive`: the archive's size in bytes, which bounds what its members can hold. */
static oq_status read_archive(zip_t *za, uint64_t archive, const char *who, oq_npz **out,
                              oq_err *err)
{
    oq_npz *z = NULL;
    oq_status st = npz_alloc(who, &z, err);
    if (st) return st;
    zip_int64_t count = zip_get_num_entries(za, 0);
    z->tensors = calloc(count > 0 ? (size_t)count : 1, sizeof *z->tensors);
    if (!z->tensors) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (zip_int64_t i = 0; !st && i < count; i++) st = read_member(za, (zip_uint64_t)i, archive, z, err);
    if (st) {
        oq_npz_free(z);
        return st;
    }
    *out = z;
    return OQ_OK;
}

static oq_status open_failed(const char *who, zip_error_t *ze, oq_err *err)
{
    int code = zip_error_code_zip(ze);
    int sys = code == ZIP_ER_OPEN || code == ZIP_ER_READ || code == ZIP_ER_NOENT;
    oq_err_set(err, sys ? OQ_ERR_IO : OQ_ERR_FORMAT, "%s: cannot open as .npz (zip): %s", who,
               zip_error_strerror(ze));
    zip_error_fini(ze);
    return sys ? OQ_ERR_IO : OQ_ERR_FORMAT;
}

oq_status oq_npz_read(const char *path, oq_npz **out, oq_err *err)
{
    uint64_t size = 0;
    oq_status st = oq_check_regular_file(path, &size, err);
    if (st) return st;
    int code = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY, &code);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, code);
        return open_failed(path, &ze, err);
    }
    st = read_archive(za, size, path, out, err);
    zip_discard(za);
    return st;
}

oq_status oq_npz_parse(const void *buf, size_t n, const char *name_for_errors, oq_npz **out,
                       oq_err *err)
{
    const char *who = name_for_errors ? name_for_errors : "<memory>";
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(buf, n, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : NULL;
    if (!za) {
        zip_source_free(src);
        return open_failed(who, &ze, err);
    }
    zip_error_fini(&ze);
    oq_status st = read_archive(za, n, who, out, err);
    zip_discard(za);
    return st;
}

const oq_tensor *oq_npz_get(const oq_npz *z, const char *name)
{
    return z && name ? oq_tensors_find((const oq_tensor *const *)z->tensors, z->count, name) : NULL;
}

oq_status oq_npz_take(oq_npz *z, const char *name, oq_tensor **out, oq_err *err)
{
    for (size_t i = 0; i < z->count; i++) {
        if (!z->tensors[i]->name || strcmp(z->tensors[i]->name, name) != 0) continue;
        *out = z->tensors[i];
        memmove(z->tensors + i, z->tensors + i + 1, (z->count - i - 1) * sizeof *z->tensors);
        z->count--;
        return OQ_OK;
    }
    char have[OQ_ERR_MSG_MAX / 2] = "";
    size_t used = 0;
    for (size_t i = 0; i < z->count && used < sizeof have; i++)
        used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "",
                                 z->tensors[i]->name ? z->tensors[i]->name : "?");
    return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: no member '%s' (members: %s)", z->path, name,
                      z->count ? have : "none");
}

void oq_npz_free(oq_npz *z)
{
    if (!z) return;
    for (size_t i = 0; i < z->count; i++) oq_tensor_free(z->tensors[i]);
    free(z->tensors);
    free(z->path);
    free(z);
}

/* ---- writing ---- */

/* An archive with no members: the end-of-directory record alone. */
static const unsigned char EMPTY_ZIP[22] = {0x50, 0x4b, 0x05, 0x06};

static oq_status check_names(const char *path, size_t n, const oq_tensor *const *ts, oq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!ts[i] || !ts[i]->name || !ts[i]->name[0])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: tensor %zu has no name", path, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(ts[i]->name, ts[j]->name) == 0)
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: duplicate tensor name '%s'",
                                  path, ts[i]->name);
    }
    return OQ_OK;
}

/* Add one tensor as "<name>.npy"; `p` must stay alive until the archive is closed. */
static oq_status add_member(zip_t *za, const oq_tensor *t, oq_npy_parts *p, int compress,
                            const char *path, oq_err *err)
{
    oq_status st = oq_npy_parts_make(t, p, err);
    if (st) return oq_err_prefix(err, "%s: ", path);
    zip_buffer_fragment_t frags[2] = {{p->header, p->header_len},
                                      {(zip_uint8_t *)p->payload, p->payload_len}};
    zip_source_t *src = zip_source_buffer_fragment(za, frags, p->payload_len ? 2 : 1, 0);
    size_t mlen = strlen(t->name) + sizeof NPY_SUFFIX;
    char *member = malloc(mlen);
    zip_int64_t idx = -1;
    if (src && member) {
        snprintf(member, mlen, "%s" NPY_SUFFIX, t->name);
        idx = zip_file_add(za, member, src, ZIP_FL_ENC_UTF_8);
    }
    free(member);
    if (idx < 0) {
        zip_source_free(src);
        return oq_err_set(err, OQ_ERR_IO, "%s: cannot add '%s': %s", path, t->name,
                          zip_strerror(za));
    }
    if (zip_set_file_compression(za, (zip_uint64_t)idx, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                 0) != 0)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: cannot set compression: %s", path,
                          zip_strerror(za));
    /* a fixed time stamp (1980-01-01, the zip epoch): the same tensors give the same bytes,
     * so a file's hash names its content (shard plans check inputs by hash) */
    if (zip_file_set_dostime(za, (zip_uint64_t)idx, 0, (1 << 5) | 1, 0) != 0)
        return oq_err_set(err, OQ_ERR_IO, "%s: cannot set the time of '%s': %s", path, t->name,
                          zip_strerror(za));
    return OQ_OK;
}

/* Build the archive in `mem` (a libzip buffer source). */
static oq_status build_archive(zip_source_t *mem, size_t n, const oq_tensor *const *ts,
                               oq_npy_parts *parts, int compress, const char *path, oq_err *err)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_t *za = zip_open_from_source(mem, ZIP_TRUNCATE, &ze);
    if (!za) {
        oq_err_set(err, OQ_ERR_IO, "%s: cannot create archive: %s", path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return OQ_ERR_IO;
    }
    zip_error_fini(&ze);
    zip_source_keep(mem); /* the archive releases its reference on close */
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < n; i++)
        st = add_member(za, ts[i], &parts[i], compress, path, err);
    if (!st && zip_close(za) != 0)
        st = oq_err_set(err, OQ_ERR_IO, "%s: cannot write archive: %s", path, zip_strerror(za));
    if (st) zip_discard(za);
    return st;
}

/* The archive of the tensors in a new libzip buffer source (*mem, freed by the caller). */
static oq_status archive_in_memory(size_t n, const oq_tensor *const *tensors, int compress, const char *who,
                                   zip_source_t **mem, oq_err *err)
{
    oq_npy_parts *parts = calloc(n ? n : 1, sizeof *parts);
    zip_error_t ze;
    zip_error_init(&ze);
    *mem = parts ? zip_source_buffer_create(NULL, 0, 0, &ze) : NULL;
    zip_error_fini(&ze);
    if (!*mem) {
        free(parts);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    oq_status st = build_archive(*mem, n, tensors, parts, compress, who, err);
    for (size_t i = 0; i < n; i++) oq_npy_parts_release(&parts[i]);
    free(parts);
    return st;
}

/* Copy the finished archive from `mem` into an atomic output file. */
static oq_status save_archive(zip_source_t *mem, const char *path, int overwrite, int no_sync, oq_err *err)
{
    oq_atomic_file af;
    oq_status st = oq_atomic_open(&af, path, overwrite, err);
    if (st) return st;
    af.no_sync = no_sync;
    unsigned char *chunk = malloc(1 << 16);
    if (!chunk || zip_source_open(mem) != 0) {
        oq_atomic_abort(&af);
        free(chunk);
        return oq_err_set(err, chunk ? OQ_ERR_IO : OQ_ERR_NOMEM,
                          "%s: cannot read the archive buffer", path);
    }
    zip_int64_t r;
    int bad = 0;
    while ((r = zip_source_read(mem, chunk, 1 << 16)) > 0) {
        bad |= fwrite(chunk, 1, (size_t)r, af.fp) != (size_t)r;
    }
    zip_source_close(mem);
    free(chunk);
    if (bad || r < 0) {
        oq_atomic_abort(&af);
        return oq_err_set(err, OQ_ERR_IO, "%s: write failed: %s", path,
                          r < 0 ? "reading the archive buffer" : strerror(errno));
    }
    return oq_atomic_commit(&af, err);
}

static oq_status npz_write(const char *path, size_t n, const oq_tensor *const *tensors, int compress, int overwrite,
                           int no_sync, oq_err *err)
{
    oq_status st = check_names(path, n, tensors, err);
    if (st) return st;
    if (!overwrite && access(path, F_OK) == 0)
        return oq_err_set(err, OQ_ERR_IO, "%s: exists (not overwritten)", path);
    if (n == 0) /* libzip writes nothing for an empty archive; numpy.savez() writes this */
        return no_sync ? oq_write_file_nosync(path, EMPTY_ZIP, sizeof EMPTY_ZIP, err)
                       : oq_write_file_atomic(path, EMPTY_ZIP, sizeof EMPTY_ZIP, overwrite, err);
    zip_source_t *mem = NULL;
    st = archive_in_memory(n, tensors, compress, path, &mem, err);
    if (!st) st = save_archive(mem, path, overwrite, no_sync, err);
    zip_source_free(mem);
    return st;
}

/* The finished archive in `mem` copied into one malloc'ed buffer. */
static oq_status archive_copy(zip_source_t *mem, const char *who, unsigned char **buf, size_t *len, oq_err *err)
{
    zip_stat_t sb;
    zip_stat_init(&sb);
    if (zip_source_stat(mem, &sb) != 0 || !(sb.valid & ZIP_STAT_SIZE))
        return oq_err_set(err, OQ_ERR_IO, "%s: cannot size the archive buffer", who);
    unsigned char *b = malloc(sb.size ? sb.size : 1);
    zip_int64_t r = -1;
    if (b && zip_source_open(mem) == 0) {
        r = zip_source_read(mem, b, sb.size);
        zip_source_close(mem);
    }
    if (r < 0 || (zip_uint64_t)r != sb.size) {
        free(b);
        return oq_err_set(err, b ? OQ_ERR_IO : OQ_ERR_NOMEM, "%s: cannot read the archive buffer", who);
    }
    *buf = b;
    *len = (size_t)sb.size;
    return OQ_OK;
}

/* ---- stored archives, written here ---- */

static unsigned char *put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    return p + 2;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
    return put16(put16(p, v & 0xffff), v >> 16);
}

#define LOCAL_HEADER 30u
#define CENTRAL_HEADER 46u
#define END_RECORD 22u
#define DOS_DATE_1980 ((1u << 5) | 1u) /* 1980-01-01: the same tensors give the same bytes */

/* One member's header fields, shared by its local and its central header (from "version
 * needed" on): stored, no time, the name's flag for UTF-8. */
static unsigned char *member_fields(unsigned char *p, const char *name, uint32_t crc, uint32_t size)
{
    size_t nl = strlen(name);
    int utf8 = 0;
    for (size_t i = 0; i < nl; i++) utf8 |= (unsigned char)name[i] >= 0x80;
    p = put16(put16(put16(put16(put16(p, 20), utf8 ? 0x0800 : 0), 0), 0), DOS_DATE_1980);
    return put16(put16(put32(put32(put32(p, crc), size), size), (unsigned)nl), 0);
}

/* Sizes a stored archive of these parts takes without ZIP64; 0 when it would need it. */
static size_t stored_size(size_t n, const oq_npy_parts *parts, const char *const *names)
{
    size_t total = END_RECORD;
    for (size_t i = 0; i < n; i++) {
        size_t body = parts[i].header_len + parts[i].payload_len;
        if (body > 0xfffffffeu) return 0;
        total += LOCAL_HEADER + CENTRAL_HEADER + 2 * strlen(names[i]) + body;
    }
    return n < 0xffff && total < 0xfffffffeu ? total : 0;
}

static uint32_t body_size(const oq_npy_parts *m) { return (uint32_t)(m->header_len + m->payload_len); }

/* The archive numpy.savez() would write (members stored), built in one buffer: what libzip
 * built through its sources and copies, and looked up the time zone for, four times a batch. */
static void stored_fill(unsigned char *b, size_t n, const oq_npy_parts *parts, const char *const *names,
                        const uint32_t *crc)
{
    unsigned char *p = b;
    for (size_t i = 0; i < n; i++) {
        const oq_npy_parts *m = &parts[i];
        p = member_fields(put32(p, 0x04034b50), names[i], crc[i], body_size(m));
        memcpy(p, names[i], strlen(names[i]));
        p += strlen(names[i]);
        memcpy(p, m->header, m->header_len);
        if (m->payload_len) memcpy(p + m->header_len, m->payload, m->payload_len);
        p += m->header_len + m->payload_len;
    }
    unsigned char *central = p;
    uint32_t at = 0; /* each member's local header */
    for (size_t i = 0; i < n; i++) {
        p = member_fields(put16(put32(p, 0x02014b50), 20), names[i], crc[i], body_size(&parts[i]));
        p = put32(put32(put16(put16(put16(p, 0), 0), 0), 0), at);
        memcpy(p, names[i], strlen(names[i]));
        p += strlen(names[i]);
        at += LOCAL_HEADER + (uint32_t)strlen(names[i]) + body_size(&parts[i]);
    }
    uint32_t cd = (uint32_t)(p - central);
    put16(put32(put32(put16(put16(put16(put16(put32(p, 0x06054b50), 0), 0), (unsigned)n), (unsigned)n), cd), at), 0);
}

/* The members stored, when no ZIP64 is needed; *buf NULL otherwise (libzip writes those). */
static oq_status stored_archive(size_t n, const oq_tensor *const *tensors, const char *who, unsigned char **buf,
                                size_t *len, oq_err *err)
{
    oq_npy_parts *parts = calloc(n, sizeof *parts);
    char **names = calloc(n, sizeof *names);
    uint32_t *crc = calloc(n, sizeof *crc);
    oq_status st = parts && names && crc ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        if ((st = oq_npy_parts_make(tensors[i], &parts[i], err))) oq_err_prefix(err, "%s: ", who);
        else if (asprintf(&names[i], "%s" NPY_SUFFIX, tensors[i]->name) < 0) {
            names[i] = NULL;
            st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        } else {
            uLong c = crc32_z(0L, parts[i].header, parts[i].header_len);
            crc[i] = (uint32_t)crc32_z(c, parts[i].payload, parts[i].payload_len);
        }
    }
    size_t size = st ? 0 : stored_size(n, parts, (const char *const *)names);
    if (size && !(*buf = malloc(size))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st && size) {
        stored_fill(*buf, n, parts, (const char *const *)names, crc);
        *len = size;
    }
    for (size_t i = 0; parts && names && i < n; i++) {
        oq_npy_parts_release(&parts[i]);
        free(names[i]);
    }
    free(parts);
    free(names);
    free(crc);
    return st;
}

oq_status oq_npz_bytes(size_t n, const oq_tensor *const *tensors, int compress, const char *who, unsigned char **buf,
                       size_t *len, oq_err *err)
{
    *buf = NULL;
    *len = 0;
    oq_status st = check_names(who, n, tensors, err);
    if (st) return st;
    if (n == 0) { /* libzip makes nothing of an empty archive; numpy.savez() writes this */
        if (!(*buf = malloc(sizeof EMPTY_ZIP))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        memcpy(*buf, EMPTY_ZIP, sizeof EMPTY_ZIP);
        *len = sizeof EMPTY_ZIP;
        return OQ_OK;
    }
    if (!compress && ((st = stored_archive(n, tensors, who, buf, len, err)) || *buf)) return st;
    zip_source_t *mem = NULL;
    st = archive_in_memory(n, tensors, compress, who, &mem, err);
    if (!st) st = archive_copy(mem, who, buf, len, err);
    zip_source_free(mem);
    return st;
}

oq_status oq_npz_write(const char *path, size_t n, const oq_tensor *const *tensors, int compress, int overwrite,
                       oq_err *err)
{
    return npz_write(path, n, tensors, compress, overwrite, 0, err);
}

oq_status oq_npz_write_nosync(const char *path, size_t n, const oq_tensor *const *tensors, int compress, oq_err *err)
{
    return npz_write(path, n, tensors, compress, 1, 1, err);
}
