/* .npz archives: zip files of .npy members; plain ones (stored, no ZIP64) read and written
 * here, the others through libzip. */
#include "ortqual/npz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "npz/npy-impl.h"
#include "npz/npz-impl.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

#define NPY_SUFFIX ".npy"

/* ---- reading ---- */

/* An empty set named `who`, with room for `count` tensors. */
static oq_status npz_new(const char *who, size_t count, oq_npz **out, oq_err *err)
{
    oq_npz *z = calloc(1, sizeof *z);
    if (!z || !(z->path = strdup(who)) || !(z->tensors = calloc(count ? count : 1, sizeof *z->tensors))) {
        oq_npz_free(z);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *out = z;
    return OQ_OK;
}

/* The tensor's name for member `member` (`len` bytes): ".npy" stripped. Members that are not
 * .npy files are refused (a second member of the same name: names_distinct, once all are read). */
static oq_status member_key(const oq_npz *z, const char *member, size_t len, char **key, oq_err *err)
{
    size_t sl = strlen(NPY_SUFFIX);
    if (len <= sl || memcmp(member + len - sl, NPY_SUFFIX, sl) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%.*s' is not a .npy file", z->path, (int)len,
                          member);
    if (!(*key = strndup(member, len - sl))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return OQ_OK;
}

static int name_order(const void *a, const void *b)
{
    return strcmp((*(const oq_tensor *const *)a)->name, (*(const oq_tensor *const *)b)->name);
}

/* No two members of one name: sorted, once every member is read (a lookup per member, as
 * before, made 65,535 members cost 2^31 comparisons). */
static oq_status names_distinct(const oq_npz *z, oq_err *err)
{
    if (z->count < 2) return OQ_OK;
    const oq_tensor **by_name = malloc(z->count * sizeof *by_name);
    if (!by_name) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    memcpy(by_name, z->tensors, z->count * sizeof *by_name);
    qsort(by_name, z->count, sizeof *by_name, name_order);
    oq_status st = OQ_OK;
    for (size_t i = 1; !st && i < z->count; i++)
        if (!strcmp(by_name[i - 1]->name, by_name[i]->name))
            st = oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s' appears twice", z->path, by_name[i]->name);
    free(by_name);
    return st;
}

/* Where a member lies in the archive: from its local header to its data's end. */
typedef struct member_span {
    uint64_t start, end;
    const char *name; /* `name_len` bytes, ".npy" included */
    size_t name_len, index;
} member_span;

static int span_order(const void *a, const void *b)
{
    const member_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* A member's name as its tensor is named, for messages. */
static int key_len(const member_span *m)
{
    size_t sl = strlen(NPY_SUFFIX);
    int npy = m->name_len > sl && !memcmp(m->name + m->name_len - sl, NPY_SUFFIX, sl);
    return (int)(npy ? m->name_len - sl : m->name_len);
}

/* No member's bytes are another's (`s` sorted here). Members nested in one another (a member's
 * data holding the next one's header and data, all agreeing) would hand out the same bytes as
 * tensor after tensor: k members of an N-byte archive cost about k N / 2 bytes, past the bound
 * docs/files.md gives. */
static oq_status spans_apart(member_span *s, size_t n, const char *who, oq_err *err)
{
    qsort(s, n, sizeof *s, span_order);
    for (size_t i = 1; i < n; i++) { /* those before i are apart and sorted: i-1 ends last */
        if (s[i].start >= s[i - 1].end) continue;
        const member_span *a = s[i].index > s[i - 1].index ? &s[i] : &s[i - 1], *b = a == &s[i] ? &s[i - 1] : &s[i];
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%.*s' overlaps member '%.*s' (a corrupt or crafted archive)",
                          who, key_len(a), a->name, key_len(b), b->name);
    }
    return OQ_OK;
}

/* Parse a member's .npy bytes into tensor `key` of `z`, which takes `key` (freed on error). */
static oq_status add_tensor(oq_npz *z, char *key, const unsigned char *buf, size_t n, oq_err *err)
{
    char label[OQ_ERR_MSG_MAX / 2];
    snprintf(label, sizeof label, "%s: member '%s'", z->path, key);
    oq_tensor *t = NULL;
    oq_status st = oq_npy_parse(buf, n, label, &t, err);
    if (st) {
        free(key);
        return st;
    }
    t->name = key;
    z->tensors[z->count++] = t;
    return OQ_OK;
}

/* ---- plain archives, parsed here ---- */

/* What ortqual and numpy.savez write: one disk, no ZIP64, every member stored. Such an archive
 * is read here straight from its bytes: libzip (below) costs about 10 us more a small archive
 * (its allocations, and mktime, hence tzset, for every entry's time). Anything not plain,
 * compressed, ZIP64 or corrupt, is left to libzip, so it reads as before, with libzip's
 * messages (and those of the header comparison below); the checks here only decide that. A plain archive's members are then checked as
 * libzip's are (names, CRC, .npy bytes), with the same messages. Fields are 16- and 32-bit
 * values, summed in 64 bits: no sum overflows. */

#define LOCAL_HEADER 30u
#define CENTRAL_HEADER 46u
#define END_RECORD 22u
#define LOCAL_SIG 0x04034b50u
#define CENTRAL_SIG 0x02014b50u
#define END_SIG 0x06054b50u
#define ZIP64_LOCATOR_SIG 0x07064b50u
#define ZIP64_LOCATOR 20u
#define FLAG_DESCRIPTOR 0x0008u /* CRC and sizes follow the data; the local header may hold zeros */
/* deflate's options (meaningless when stored), the descriptor, a UTF-8 name; not encryption */
#define FLAGS_PLAIN (0x0006u | FLAG_DESCRIPTOR | 0x0800u)

static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | get16(p + 2) << 16; }

/* A plain archive's central directory: `count` entries from `at` to `end`, its end record. */
typedef struct plain_dir {
    size_t count;
    uint64_t at, end;
} plain_dir;

/* One member, from its central entry; its data are inside the archive. */
typedef struct plain_member {
    const char *name; /* `name_len` bytes, not NUL-terminated */
    size_t name_len;
    uint64_t local;   /* its local header's offset */
    const unsigned char *data;
    size_t size;
    uint32_t crc;
} plain_member;

/* The end record at `at` describes a plain directory: one disk, no ZIP64 value or locator
 * (libzip would read the ZIP64 record), the entries just before the record. */
static int plain_end_record(const unsigned char *b, size_t at, plain_dir *dir)
{
    const unsigned char *e = b + at;
    uint32_t count = get16(e + 10), size = get32(e + 12), start = get32(e + 16);
    if (get16(e + 4) || get16(e + 6) || get16(e + 8) != count) return 0;
    if (count == 0xffff || size == 0xffffffffu || start == 0xffffffffu) return 0;
    if (at >= ZIP64_LOCATOR && get32(e - ZIP64_LOCATOR) == ZIP64_LOCATOR_SIG) return 0;
    if ((uint64_t)start + size != at) return 0;
    *dir = (plain_dir){count, start, at};
    return 1;
}

/* The last end record whose comment ends the buffer (the longest comment is 65535 bytes): the
 * one the writer meant. (libzip 1.7 tries every signature in the last 64 KiB, and settles on
 * one inside a member's data when it finds the archive's own directory inconsistent.) */
static int plain_find_end(const unsigned char *b, size_t n, plain_dir *dir)
{
    if (n < END_RECORD) return 0;
    size_t low = n - END_RECORD > 0xffff ? n - END_RECORD - 0xffff : 0;
    for (size_t at = n - END_RECORD;; at--) {
        if (get32(b + at) == END_SIG && at + END_RECORD + get16(b + at + 20) == n)
            return plain_end_record(b, at, dir);
        if (at == low) return 0;
    }
}

/* A member name taken as its bytes: valid UTF-8 without NUL, control bytes included. numpy
 * (Python's zipfile) writes an ASCII name as it is and any other in UTF-8 with the flag (bit
 * 11) set, and reads an ASCII name as it is: libzip alone would show a control byte as a
 * CP437 glyph ("\x1b" as U+2190), and such a member would never match its tensor. */
static int name_as_is(const unsigned char *p, size_t n)
{
    for (size_t i = 0, k; i < n; i += k)
        if (!p[i] || !(k = oq_utf8_len(p + i, n - i))) return 0;
    return 1;
}

/* The local header's CRC and sizes are the central entry's, or zeros behind the descriptor flag. */
static int plain_local_sizes(const unsigned char *l, uint32_t crc, uint32_t size)
{
    uint32_t lcrc = get32(l + 14), lcomp = get32(l + 18), lsize = get32(l + 22);
    if (lcrc == crc && lcomp == size && lsize == size) return 1;
    return (get16(l + 6) & FLAG_DESCRIPTOR) && lcrc == 0 && lcomp == 0 && lsize == 0;
}

/* The local header at `local` agrees with central entry `c`, and its data of `size` bytes end
 * before the central directory: *data. Its extra field is skipped, not read (the sizes are the
 * central entry's; numpy.savez leaves a ZIP64 field there beside 32-bit sizes). */
static int plain_local(const unsigned char *b, const plain_dir *dir, const unsigned char *c, uint64_t local,
                       uint32_t size, const unsigned char **data)
{
    if (local > dir->at || dir->at - local < LOCAL_HEADER) return 0;
    const unsigned char *l = b + local;
    uint32_t name_len = get16(c + 28);
    uint64_t start = local + LOCAL_HEADER + get16(l + 26) + get16(l + 28);
    if (get32(l) != LOCAL_SIG || (get16(l + 6) & ~FLAGS_PLAIN) || get16(l + 8) != 0) return 0;
    if (get16(l + 26) != name_len || start + size > dir->at) return 0;
    if (memcmp(l + LOCAL_HEADER, c + CENTRAL_HEADER, name_len) != 0) return 0;
    if (!plain_local_sizes(l, get32(c + 16), size)) return 0;
    *data = b + start;
    return 1;
}

/* The central entry at *at (then moved past it) and its local header, when both are plain:
 * stored, not encrypted, no extra field (libzip reads ZIP64 sizes and Unicode names there), an
 * as-is name the local header repeats, sizes and CRC that agree, all inside the archive. */
static int plain_entry(const unsigned char *b, const plain_dir *dir, uint64_t *at, plain_member *m)
{
    if (dir->end - *at < CENTRAL_HEADER) return 0;
    const unsigned char *c = b + *at;
    uint32_t size = get32(c + 24), name_len = get16(c + 28);
    uint64_t next = *at + CENTRAL_HEADER + name_len + get16(c + 32);
    if (get32(c) != CENTRAL_SIG || (get16(c + 8) & ~FLAGS_PLAIN) || get16(c + 10) != 0) return 0;
    if (get32(c + 20) != size || size == 0xffffffffu || get16(c + 30) || get16(c + 34)) return 0;
    if (next > dir->end || !name_as_is(c + CENTRAL_HEADER, name_len)) return 0;
    if (!plain_local(b, dir, c, get32(c + 42), size, &m->data)) return 0;
    m->name = (const char *)c + CENTRAL_HEADER;
    m->name_len = name_len;
    m->local = get32(c + 42);
    m->size = size;
    m->crc = get32(c + 16);
    *at = next;
    return 1;
}

/* Every entry plain, and together exactly the directory. */
static int plain_directory(const unsigned char *b, const plain_dir *dir)
{
    uint64_t at = dir->at;
    plain_member m;
    for (size_t i = 0; i < dir->count; i++)
        if (!plain_entry(b, dir, &at, &m)) return 0;
    return at == dir->end;
}

/* The members of a plain directory lie apart. */
static oq_status plain_apart(const unsigned char *b, const plain_dir *dir, const char *who, oq_err *err)
{
    member_span *s = malloc((dir->count ? dir->count : 1) * sizeof *s);
    if (!s) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    uint64_t at = dir->at;
    plain_member m;
    for (size_t i = 0; i < dir->count; i++) {
        plain_entry(b, dir, &at, &m); /* plain: plain_directory said so */
        s[i] = (member_span){m.local, (uint64_t)(m.data - b) + m.size, m.name, m.name_len, i};
    }
    oq_status st = spans_apart(s, dir->count, who, err);
    free(s);
    return st;
}

/* Checked in libzip's order: the name, then the CRC (libzip's message), then the .npy bytes.
 * An empty member has no CRC check in libzip (it hands out an empty buffer); its bytes are
 * refused below all the same. */
static oq_status plain_member_read(oq_npz *z, const plain_member *m, oq_err *err)
{
    char *key;
    oq_status st = member_key(z, m->name, m->name_len, &key, err);
    if (st) return st;
    if (m->size && oq_crc32(0, m->data, m->size) != m->crc) {
        oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s': CRC error", z->path, key);
        free(key);
        return OQ_ERR_FORMAT;
    }
    return add_tensor(z, key, m->data, m->size, err);
}

oq_status oq_npz_parse_plain(const void *buf, size_t n, const char *name_for_errors, oq_npz **out, oq_err *err)
{
    const unsigned char *b = buf;
    plain_dir dir;
    *out = NULL;
    if (!plain_find_end(b, n, &dir) || !plain_directory(b, &dir)) return OQ_OK;
    oq_npz *z = NULL;
    const char *who = name_for_errors ? name_for_errors : "<memory>";
    oq_status st = plain_apart(b, &dir, who, err);
    if (!st) st = npz_new(who, dir.count, &z, err);
    uint64_t at = dir.at;
    plain_member m;
    for (size_t i = 0; !st && i < dir.count; i++) {
        plain_entry(b, &dir, &at, &m);
        st = plain_member_read(z, &m, err);
    }
    if (!st) st = names_distinct(z, err);
    if (st) {
        oq_npz_free(z);
        return st;
    }
    *out = z;
    return OQ_OK;
}

/* ---- other archives, through libzip ---- */

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

/* ---- local headers against the central directory ---- */

/* libzip takes a member's name, method, CRC and sizes from the central directory and reads
 * its local header only for where the data start, so a corrupt archive whose two headers
 * disagree was read, its tensor under the central name (Python's zipfile refuses it: "File
 * name in directory 'x.npy' and header b'a.npy' differ"). The directory is walked here, as
 * libzip walks it, and each entry's local header compared; an archive this walk cannot follow
 * (no end record at its end, entries that are not the ones libzip lists) is left to libzip. */

#define ZIP64_END_SIG 0x06064b50u
#define ZIP64_EXTRA 0x0001u
#define FIELD_MAX 0xffffffffu /* a 32-bit size or offset whose value is in the ZIP64 field */

/* The archive's bytes: a buffer, or a file read at offsets. */
typedef struct zip_bytes {
    const unsigned char *buf; /* NULL: read from fd */
    int fd;
    uint64_t size;
} zip_bytes;

static int bytes_at(const zip_bytes *zb, uint64_t at, size_t len, unsigned char *dst)
{
    if (at > zb->size || zb->size - at < len) return 0;
    if (zb->buf) {
        memcpy(dst, zb->buf + at, len);
        return 1;
    }
    return pread(zb->fd, dst, len, (off_t)at) == (ssize_t)len;
}

static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* A header's name and extra field (each at most 65535 bytes), read after its fixed part. */
typedef struct zip_tail {
    unsigned char name[0xffff], extra[0xffff];
    size_t name_len, extra_len;
} zip_tail;

static int tail_at(const zip_bytes *zb, uint64_t at, size_t name_len, size_t extra_len, zip_tail *t)
{
    t->name_len = name_len;
    t->extra_len = extra_len;
    return bytes_at(zb, at, name_len, t->name) && bytes_at(zb, at + name_len, extra_len, t->extra);
}

/* The ZIP64 values of an extra field for the 32-bit fields that say FIELD_MAX, in the order
 * the format gives them (size, compressed size, local header offset). */
static void zip64_values(const zip_tail *t, uint64_t *v[], size_t n)
{
    for (size_t at = 0; at + 4 <= t->extra_len;) {
        uint32_t id = get16(t->extra + at), len = get16(t->extra + at + 2);
        if (at + 4 + len > t->extra_len) return;
        for (size_t i = 0, k = 0; id == ZIP64_EXTRA && i < n; i++)
            if (*v[i] == FIELD_MAX && (k + 1) * 8 <= len) *v[i] = get64(t->extra + at + 4 + 8 * k++);
        at += 4 + len;
    }
}

/* The central directory as the end record (or its ZIP64 record) at the archive's end places
 * it: 0 when there is none this walk can follow. */
static int central_dir(const zip_bytes *zb, uint64_t *at, uint64_t *count)
{
    unsigned char e[END_RECORD], loc[ZIP64_LOCATOR], e64[56];
    uint64_t low = zb->size >= END_RECORD + 0xffff ? zb->size - END_RECORD - 0xffff : 0;
    for (uint64_t pos = zb->size >= END_RECORD ? zb->size - END_RECORD + 1 : 0; pos-- > low;) {
        if (!bytes_at(zb, pos, END_RECORD, e) || get32(e) != END_SIG) continue;
        if (pos + END_RECORD + get16(e + 20) != zb->size) continue; /* a signature in a comment */
        *at = get32(e + 16);
        *count = get16(e + 10);
        if (pos < ZIP64_LOCATOR || !bytes_at(zb, pos - ZIP64_LOCATOR, ZIP64_LOCATOR, loc) ||
            get32(loc) != ZIP64_LOCATOR_SIG)
            return 1;
        if (!bytes_at(zb, get64(loc + 8), sizeof e64, e64) || get32(e64) != ZIP64_END_SIG) return 0;
        *at = get64(e64 + 48);
        *count = get64(e64 + 32);
        return 1;
    }
    return 0;
}

/* A field's value in the central directory and in the local header, which differ. */
static oq_status field_differs(const char *who, const char *member, const char *field, uint64_t central,
                               uint64_t local, oq_err *err)
{
    return oq_err_set(err, OQ_ERR_FORMAT,
                      "%s: member '%s': %s %llu in the central directory but %llu in its local header: a "
                      "corrupt archive", who, member, field, (unsigned long long)central, (unsigned long long)local);
}

/* Central entry `c` (entry i, its name and extra in *ct) against the local header at its offset. */
static oq_status entry_agrees(const zip_bytes *zb, const char *who, uint64_t i, const unsigned char *c,
                              zip_tail *ct, zip_tail *lt, oq_err *err)
{
    uint64_t size = get32(c + 24), comp = get32(c + 20), local = get32(c + 42);
    zip64_values(ct, (uint64_t *[]){&size, &comp, &local}, 3);
    unsigned char l[LOCAL_HEADER];
    if (!bytes_at(zb, local, LOCAL_HEADER, l) || get32(l) != LOCAL_SIG ||
        !tail_at(zb, local + LOCAL_HEADER, get16(l + 26), get16(l + 28), lt))
        return OQ_OK; /* libzip says what is wrong there */
    char *name = strndup((const char *)ct->name, ct->name_len);
    if (!name) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    uint64_t lsize = get32(l + 22), lcomp = get32(l + 18);
    zip64_values(lt, (uint64_t *[]){&lsize, &lcomp}, 2);
    /* behind the descriptor flag, the local CRC and sizes may be zeros (they follow the data) */
    int later = (get16(l + 6) & FLAG_DESCRIPTOR) && !get32(l + 14) && !lsize && !lcomp;
    if (lt->name_len != ct->name_len || memcmp(lt->name, ct->name, ct->name_len))
        st = oq_err_set(err, OQ_ERR_FORMAT,
                        "%s: member '%s' (entry %llu) is named '%.*s' in its local header: a corrupt archive",
                        who, name, (unsigned long long)i, (int)lt->name_len, (const char *)lt->name);
    else if (get16(c + 10) != get16(l + 8))
        st = field_differs(who, name, "compression method", get16(c + 10), get16(l + 8), err);
    else if (!later && get32(c + 16) != get32(l + 14))
        st = oq_err_set(err, OQ_ERR_FORMAT,
                        "%s: member '%s': CRC %08x in the central directory but %08x in its local header: a "
                        "corrupt archive", who, name, get32(c + 16), get32(l + 14));
    else if (!later && (size != lsize || comp != lcomp))
        st = field_differs(who, name, size != lsize ? "size" : "compressed size", size != lsize ? size : comp,
                           size != lsize ? lsize : lcomp, err);
    free(name);
    return st;
}

/* The entries libzip lists are the directory this walk found: its count, its names in order. */
static int same_entry(zip_t *za, zip_uint64_t i, const zip_tail *ct)
{
    const char *name = zip_get_name(za, i, ZIP_FL_ENC_RAW);
    return name && strlen(name) == ct->name_len && !memcmp(name, ct->name, ct->name_len);
}

/* What a member's read needs to compare its headers: the archive's bytes, where each of
 * libzip's entries is in the central directory (`at` NULL: the walk could not follow it, and
 * nothing is compared), room for two headers' names and extra fields. */
typedef struct zip_walk {
    const zip_bytes *zb;
    uint64_t *at;
    zip_tail *t;
} zip_walk;

static void walk_free(zip_walk *w)
{
    free(w->at);
    free(w->t);
}

/* Central entry i (its fixed part `c`, its name and extra in *ct) as a span; 0 where its local
 * header cannot be read or its data would end past the archive (check_sizes or libzip says
 * what is wrong there). */
static int entry_span(zip_t *za, const zip_bytes *zb, uint64_t i, const unsigned char *c, const zip_tail *ct,
                      member_span *s)
{
    uint64_t size = get32(c + 24), comp = get32(c + 20), local = get32(c + 42);
    zip64_values(ct, (uint64_t *[]){&size, &comp, &local}, 3);
    unsigned char l[LOCAL_HEADER];
    const char *name = zip_get_name(za, i, ZIP_FL_ENC_RAW);
    if (!name || !bytes_at(zb, local, LOCAL_HEADER, l) || get32(l) != LOCAL_SIG) return 0;
    uint64_t data = local + LOCAL_HEADER + get16(l + 26) + get16(l + 28);
    if (data > zb->size || comp > zb->size - data) return 0;
    *s = (member_span){local, data + comp, name, strlen(name), i};
    return 1;
}

/* The directory walked: w->at filled when it holds the entries libzip lists, whose members
 * must lie apart. */
static oq_status walk_directory(zip_t *za, const zip_bytes *zb, zip_walk *w, const char *who, oq_err *err)
{
    *w = (zip_walk){zb, NULL, NULL};
    uint64_t at, count;
    zip_int64_t listed = zip_get_num_entries(za, 0);
    if (!central_dir(zb, &at, &count) || listed <= 0 || count != (uint64_t)listed) return OQ_OK;
    w->t = malloc(2 * sizeof *w->t);
    w->at = calloc((size_t)count, sizeof *w->at);
    member_span *s = malloc((size_t)count * sizeof *s);
    if (!w->t || !w->at || !s) {
        walk_free(w);
        free(s);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    unsigned char c[CENTRAL_HEADER];
    size_t spans = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (!bytes_at(zb, at, CENTRAL_HEADER, c) || get32(c) != CENTRAL_SIG ||
            !tail_at(zb, at + CENTRAL_HEADER, get16(c + 28), get16(c + 30), &w->t[0]) || !same_entry(za, i, &w->t[0])) {
            free(w->at); /* not the directory libzip read: it judges alone */
            w->at = NULL;
            free(s);
            return OQ_OK;
        }
        spans += entry_span(za, zb, i, c, &w->t[0], &s[spans]);
        w->at[i] = at;
        at += CENTRAL_HEADER + get16(c + 28) + get16(c + 30) + get16(c + 32);
    }
    oq_status st = spans_apart(s, spans, who, err);
    free(s);
    if (st) walk_free(w);
    return st;
}

/* Entry i's local header says what its central entry says. */
static oq_status member_agrees(const zip_walk *w, zip_uint64_t i, const char *who, oq_err *err)
{
    unsigned char c[CENTRAL_HEADER];
    if (!w->at || !bytes_at(w->zb, w->at[i], CENTRAL_HEADER, c) ||
        !tail_at(w->zb, w->at[i] + CENTRAL_HEADER, get16(c + 28), get16(c + 30), &w->t[0]))
        return OQ_OK;
    return entry_agrees(w->zb, who, i, c, &w->t[0], &w->t[1], err);
}

/* Read a whole member, checking its CRC (libzip does at the end of the stream). */
static oq_status member_bytes(zip_t *za, zip_uint64_t i, const zip_walk *w, const char *who,
                              const char *key, unsigned char **buf, size_t *n, oq_err *err)
{
    uint64_t archive = w->zb->size;
    zip_stat_t sb;
    if (zip_stat_index(za, i, 0, &sb) != 0 || !(sb.valid & ZIP_STAT_SIZE))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: member '%s': cannot stat: %s", who, key,
                          zip_strerror(za));
    oq_status st = check_sizes(&sb, archive, who, key, err);
    if (!st) st = member_agrees(w, i, who, err);
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

static oq_status read_member(zip_t *za, zip_uint64_t i, const zip_walk *w, oq_npz *z, oq_err *err)
{
    const char *member = zip_get_name(za, i, ZIP_FL_ENC_RAW);
    /* other bytes (no flag, not UTF-8) are CP437's, as libzip converts them */
    if (member && !name_as_is((const unsigned char *)member, strlen(member))) member = zip_get_name(za, i, 0);
    if (!member) return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s", z->path, zip_strerror(za));
    char *key;
    oq_status st = member_key(z, member, strlen(member), &key, err);
    if (st) return st;
    unsigned char *buf = NULL;
    size_t n = 0;
    if ((st = member_bytes(za, i, w, z->path, key, &buf, &n, err))) {
        free(key);
        return st;
    }
    st = add_tensor(z, key, buf, n, err);
    free(buf);
    return st;
}

/* `zb`: the archive's bytes, whose size bounds what its members can hold. */
static oq_status read_archive(zip_t *za, const zip_bytes *zb, const char *who, oq_npz **out, oq_err *err)
{
    zip_int64_t count = zip_get_num_entries(za, 0);
    oq_npz *z = NULL;
    zip_walk w;
    oq_status st = walk_directory(za, zb, &w, who, err);
    if (st) return st;
    st = npz_new(who, count > 0 ? (size_t)count : 0, &z, err);
    for (zip_int64_t i = 0; !st && i < count; i++) st = read_member(za, (zip_uint64_t)i, &w, z, err);
    if (!st) st = names_distinct(z, err);
    walk_free(&w);
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

oq_status oq_npz_read_libzip(const char *path, oq_npz **out, oq_err *err)
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
    zip_bytes zb = {NULL, open(path, O_RDONLY | O_CLOEXEC), size};
    st = zb.fd < 0 ? oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(errno))
                   : read_archive(za, &zb, path, out, err);
    if (zb.fd >= 0) close(zb.fd);
    zip_discard(za);
    return st;
}

oq_status oq_npz_parse_libzip(const void *buf, size_t n, const char *name_for_errors, oq_npz **out,
                              oq_err *err)
{
    const char *who = name_for_errors ? name_for_errors : "<memory>";
    /* a zip holds at least its 22-byte end record, and libzip reads nothing as an archive of
     * no members: a body cut to nothing (a failed copy or transfer) was reported later as
     * lacking the first tensor asked for */
    if (n == 0) return oq_err_set(err, OQ_ERR_FORMAT, "%s: empty file (0 bytes), not an .npz (zip) archive", who);
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(buf, n, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : NULL;
    if (!za) {
        zip_source_free(src);
        return open_failed(who, &ze, err);
    }
    zip_error_fini(&ze);
    oq_status st = read_archive(za, &(zip_bytes){buf, -1, n}, who, out, err);
    zip_discard(za);
    return st;
}

/* ---- either ---- */

/* Files up to this size are read whole and parsed in memory; larger ones are streamed by
 * libzip one member at a time, so a big archive is not held beside its tensors. */
#define NPZ_WHOLE_MAX ((uint64_t)64 << 20)

oq_status oq_npz_read(const char *path, oq_npz **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    uint64_t size = 0;
    oq_status st = oq_check_regular_file(path, &size, err);
    if (st) return st;
    if (size > NPZ_WHOLE_MAX) return oq_npz_read_libzip(path, out, err);
    unsigned char *buf = NULL;
    size_t n = 0;
    if ((st = oq_read_file(path, &buf, &n, err))) return st;
    st = oq_npz_parse(buf, n, path, out, err);
    free(buf);
    return st;
}

oq_status oq_npz_parse(const void *buf, size_t n, const char *name_for_errors, oq_npz **out,
                       oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED_N(err, n, buf);
    oq_npz *z = NULL;
    oq_status st = oq_npz_parse_plain(buf, n, name_for_errors, &z, err);
    if (st || z) {
        if (z) *out = z;
        return st;
    }
    return oq_npz_parse_libzip(buf, n, name_for_errors, out, err);
}

const oq_tensor *oq_npz_get(const oq_npz *z, const char *name)
{
    return z && name ? oq_tensors_find((const oq_tensor *const *)z->tensors, z->count, name) : NULL;
}

oq_status oq_npz_take(oq_npz *z, const char *name, oq_tensor **out, oq_err *err)
{
    OQ_NEED(err, z);
    OQ_NEED(err, name);
    OQ_NEED(err, out);
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
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: tensor %zu %s", path, i, ts[i] ? "has no name" : "is NULL");
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
        idx = zip_file_add(za, member, src, 0); /* flagged as utf8_flag() below says; ENC_UTF_8 would
                                                     refuse a name with a control byte */
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
static oq_status save_archive(zip_source_t *mem, const char *path, int overwrite, int no_sync, oq_sha256 *h,
                              oq_err *err)
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
        if (h) oq_sha256_update(h, chunk, (size_t)r);
    }
    zip_source_close(mem);
    free(chunk);
    if (bad || r < 0) {
        oq_atomic_abort(&af);
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", path,
                          r < 0 ? "reading the archive buffer" : strerror(errno));
    }
    return oq_atomic_commit(&af, err);
}

/* h (may be NULL): the archive's bytes hashed as they are written. */
static oq_status npz_write(const char *path, size_t n, const oq_tensor *const *tensors, int compress, int overwrite,
                           int no_sync, oq_sha256 *h, oq_err *err)
{
    oq_status st = check_names(path, n, tensors, err);
    if (st) return st;
    if (!overwrite && access(path, F_OK) == 0)
        return oq_err_set(err, OQ_ERR_IO, "%s: exists (not overwritten)", path);
    if (n == 0 && h) oq_sha256_update(h, EMPTY_ZIP, sizeof EMPTY_ZIP);
    if (n == 0) /* libzip writes nothing for an empty archive; numpy.savez() writes this */
        return no_sync ? oq_write_file_nosync(path, EMPTY_ZIP, sizeof EMPTY_ZIP, err)
                       : oq_write_file_atomic(path, EMPTY_ZIP, sizeof EMPTY_ZIP, overwrite, err);
    zip_source_t *mem = NULL;
    st = archive_in_memory(n, tensors, compress, path, &mem, err);
    if (!st) st = save_archive(mem, path, overwrite, no_sync, h, err);
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

#define DOS_DATE_1980 ((1u << 5) | 1u) /* 1980-01-01: the same tensors give the same bytes */

/* The UTF-8 flag (bit 11) of a member name, as numpy and libzip set it: for a UTF-8 name beyond
 * ASCII. Not for one that also holds a control byte other than tab, LF and CR, which numpy would
 * flag, nor for one that is not UTF-8: libzip 1.7 takes either for CP437 and refuses an archive
 * that flags it (ZIP_ER_INCONS); it writes them unflagged, and so does this writer. */
static int utf8_flag(const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    size_t n = strlen(name);
    int high = 0;
    for (size_t i = 0, k; i < n; i += k) {
        if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') || !(k = oq_utf8_len(p + i, n - i)))
            return 0;
        high |= p[i] >= 0x80;
    }
    return high;
}

/* One member's header fields, shared by its local and its central header (from "version
 * needed" on): stored, no time, the name's flag for UTF-8. */
static unsigned char *member_fields(unsigned char *p, const char *name, uint32_t crc, uint32_t size)
{
    size_t nl = strlen(name);
    p = put16(put16(put16(put16(put16(p, 20), utf8_flag(name) ? 0x0800 : 0), 0), 0), DOS_DATE_1980);
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
        p = member_fields(put32(p, LOCAL_SIG), names[i], crc[i], body_size(m));
        memcpy(p, names[i], strlen(names[i]));
        p += strlen(names[i]);
        memcpy(p, m->header, m->header_len);
        if (m->payload_len) memcpy(p + m->header_len, m->payload, m->payload_len);
        p += m->header_len + m->payload_len;
    }
    unsigned char *central = p;
    uint32_t at = 0; /* each member's local header */
    for (size_t i = 0; i < n; i++) {
        p = member_fields(put16(put32(p, CENTRAL_SIG), 20), names[i], crc[i], body_size(&parts[i]));
        p = put32(put32(put16(put16(put16(p, 0), 0), 0), 0), at);
        memcpy(p, names[i], strlen(names[i]));
        p += strlen(names[i]);
        at += LOCAL_HEADER + (uint32_t)strlen(names[i]) + body_size(&parts[i]);
    }
    uint32_t cd = (uint32_t)(p - central);
    put16(put32(put32(put16(put16(put16(put16(put32(p, END_SIG), 0), 0), (unsigned)n), (unsigned)n), cd), at), 0);
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
            crc[i] = oq_crc32(oq_crc32(0, parts[i].header, parts[i].header_len), parts[i].payload, parts[i].payload_len);
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
    OQ_NEED(err, path);
    OQ_NEED_N(err, n, tensors);
    return npz_write(path, n, tensors, compress, overwrite, 0, NULL, err);
}

oq_status oq_npz_write_sha256(const char *path, size_t n, const oq_tensor *const *tensors, int compress, int overwrite,
                              char sha[65], oq_err *err)
{
    oq_sha256 h;
    oq_sha256_init(&h);
    oq_status st = npz_write(path, n, tensors, compress, overwrite, 0, &h, err);
    oq_sha256_hex(&h, sha);
    return st;
}

oq_status oq_npz_write_nosync(const char *path, size_t n, const oq_tensor *const *tensors, int compress, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED_N(err, n, tensors);
    return npz_write(path, n, tensors, compress, 1, 1, NULL, err);
}

/* ---- the archive's comment --------------------------------------------------------------- */

oq_status oq_npz_set_comment(unsigned char **buf, size_t *len, const char *comment, oq_err *err)
{
    size_t n = *len, c = strlen(comment);
    if (c > 0xffff) return oq_err_set(err, OQ_ERR_INVALID_ARG, "an archive comment is 65535 bytes at most");
    if (n < END_RECORD || get32(*buf + n - END_RECORD) != END_SIG || get16(*buf + n - 2))
        return oq_err_set(err, OQ_ERR_FORMAT, "not an archive ending in an end record without a comment");
    unsigned char *b = realloc(*buf, n + c);
    if (!b) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    b[n - 2] = (unsigned char)(c & 0xff);
    b[n - 1] = (unsigned char)(c >> 8);
    memcpy(b + n, comment, c);
    *buf = b;
    *len = n + c;
    return OQ_OK;
}

int oq_npz_comment_of(const unsigned char *b, size_t n, char **comment)
{
    *comment = NULL;
    /* the last end record whose comment ends the bytes, as plain_find_end reads it */
    for (size_t at = n >= END_RECORD ? n - END_RECORD + 1 : 0; at-- > 0;) {
        size_t c = get16(b + at + 20);
        if (get32(b + at) != END_SIG || at + END_RECORD + c != n) continue;
        if (c && (*comment = malloc(c + 1))) {
            memcpy(*comment, b + at + END_RECORD, c);
            (*comment)[c] = '\0';
        }
        return !c || *comment;
    }
    return 1;
}

oq_status oq_npz_comment_read(const char *path, char **comment, oq_err *err)
{
    *comment = NULL;
    enum { TAIL = END_RECORD + 0xffff };
    int fd;
    uint64_t size;
    oq_status st = oq_open_regular(path, &fd, &size, err); /* a FIFO named as a batch is not waited on */
    if (st) return st;
    size_t want = size < TAIL ? (size_t)size : TAIL;
    unsigned char *b = malloc(TAIL);
    ssize_t got = b ? pread(fd, b, want, (off_t)(size - want)) : 0;
    int saved = errno;
    close(fd);
    if (!b) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (got != (ssize_t)want) {
        free(b);
        return oq_err_set(err, OQ_ERR_IO, "%s: cannot read it: %s", path, got < 0 ? strerror(saved) : "it shrank");
    }
    int ok = oq_npz_comment_of(b, want, comment);
    free(b);
    return ok ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}
