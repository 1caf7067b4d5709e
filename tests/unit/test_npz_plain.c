/* .npz read two ways: the plain path (stored archives parsed here) gives the tensors libzip
 * gives, on archives written by ortqual (both writers) and by numpy; anything not plain
 * (compressed, ZIP64, encrypted, headers that disagree) is left to libzip, read as before;
 * corrupt archives (cut at every byte, a bad CRC, offsets out of the buffer) give libzip's
 * answer or a one-line error, never a crash (the ASan build runs this too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "npz/npz-impl.h"
#include "npz_values.h"
#include "ortqual/fileio.h"
#include "ortqual/npz.h"

#define FIXTURES OQ_SOURCE_DIR "/tests/fixtures/numpy/"

/* The archive most tests corrupt: "x.npy" (float32 [2,3]), then "mask.npy" (bool [4]). */
static unsigned char *small_archive(size_t *n)
{
    oq_tensor *ts[2] = {npz_make(OQ_DTYPE_FLOAT32, 2, (int64_t[]){2, 3}, "x"),
                        npz_make(OQ_DTYPE_BOOL, 1, (int64_t[]){4}, "mask")};
    unsigned char *buf = NULL;
    oq_err err = {0};
    if (oq_npz_bytes(2, (const oq_tensor *const *)ts, 0, "small", &buf, n, &err)) fail_msg("%s", err.msg);
    oq_tensor_free(ts[0]);
    oq_tensor_free(ts[1]);
    return buf;
}

static void assert_same_npz(const oq_npz *a, const oq_npz *b)
{
    assert_int_equal(a->count, b->count);
    for (size_t i = 0; i < a->count; i++) {
        assert_string_equal(a->tensors[i]->name, b->tensors[i]->name);
        if (!npz_same(a->tensors[i], b->tensors[i])) fail_msg("member %s differs", a->tensors[i]->name);
    }
}

/* oq_npz_parse and libzip agree on `buf`: the same status and message, or the same tensors.
 * `plain`: 1 if the plain path must read it, 0 if it must leave it to libzip, -1 either. */
static void expect_agree(const unsigned char *buf, size_t n, int plain, const char *what)
{
    oq_err e1 = {0}, e2 = {0}, e3 = {0};
    oq_npz *zp = NULL, *z = NULL, *zl = NULL;
    oq_status sp = oq_npz_parse_plain(buf, n, "m", &zp, &e1);
    int took = sp != OQ_OK || zp != NULL;
    if (plain >= 0 && took != plain) fail_msg("%s: plain path %s", what, took ? "taken" : "not taken");
    oq_status s = oq_npz_parse(buf, n, "m", &z, &e2);
    oq_status sl = oq_npz_parse_libzip(buf, n, "m", &zl, &e3);
    if (s != sl || (s && strcmp(e2.msg, e3.msg) != 0))
        fail_msg("%s: got %d '%s', libzip %d '%s'", what, s, e2.msg, sl, e3.msg);
    if (s && (strncmp(e2.msg, "m: ", 3) != 0 || strchr(e2.msg, '\n')))
        fail_msg("%s: bad message '%s'", what, e2.msg);
    if (!s) assert_same_npz(z, zl);
    oq_npz_free(zp);
    oq_npz_free(z);
    oq_npz_free(zl);
}

static unsigned char *read_fixture(const char *name, size_t *n)
{
    unsigned char *buf = NULL;
    oq_err err = {0};
    if (oq_read_file(name, &buf, n, &err)) fail_msg("%s", err.msg);
    return buf;
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    put16(p, v & 0xffff);
    put16(p + 2, v >> 16);
}

/* Offsets in a zip: the first local header, the first central entry, the end record. */
static size_t find_sig(const unsigned char *b, size_t n, uint32_t sig)
{
    for (size_t i = 0; i + 4 <= n; i++)
        if ((uint32_t)(b[i] | b[i + 1] << 8 | b[i + 2] << 16 | (uint32_t)b[i + 3] << 24) == sig) return i;
    fail_msg("signature %08x not found", sig);
    return 0;
}
#define LOCAL(b, n) find_sig(b, n, 0x04034b50u)
#define CENTRAL(b, n) find_sig(b, n, 0x02014b50u)
#define END(b, n) find_sig(b, n, 0x06054b50u)

static void test_ours_read_plain_like_libzip(void **state)
{
    (void)state;
    static const oq_dtype dts[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT64, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16,
                                   OQ_DTYPE_INT64, OQ_DTYPE_INT8, OQ_DTYPE_BOOL, OQ_DTYPE_UINT64};
    enum { NT = sizeof dts / sizeof dts[0] };
    oq_tensor *ts[NT + 2];
    for (size_t i = 0; i < NT; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%zu_%s", i, oq_dtype_name(dts[i]));
        ts[i] = npz_make(dts[i], 3, (int64_t[]){3, 5, (int64_t)i + 1}, name);
    }
    ts[NT] = npz_make(OQ_DTYPE_FLOAT32, 0, NULL, "scalar");
    ts[NT + 1] = npz_make(OQ_DTYPE_INT32, 2, (int64_t[]){0, 4}, "empty");
    char dir[] = "/tmp/oq_npz_plain_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.npz", dir);
    oq_err err = {0};
    for (size_t k = 0; k <= NT + 2; k += 2) { /* k members: none, some, all */
        unsigned char *buf = NULL, *file = NULL;
        size_t n = 0, fn = 0;
        if (oq_npz_bytes(k, (const oq_tensor *const *)ts, 0, "mem", &buf, &n, &err)) fail_msg("%s", err.msg);
        expect_agree(buf, n, 1, "oq_npz_bytes");
        /* the file writer goes through libzip: its stored archives are plain too */
        if (oq_npz_write(path, k, (const oq_tensor *const *)ts, 0, 1, &err)) fail_msg("%s", err.msg);
        file = read_fixture(path, &fn);
        expect_agree(file, fn, 1, "oq_npz_write");
        oq_npz *z = NULL;
        if (oq_npz_parse(buf, n, "mem", &z, &err)) fail_msg("%s", err.msg);
        assert_int_equal(z->count, k);
        for (size_t i = 0; i < k; i++) {
            assert_string_equal(z->tensors[i]->name, ts[i]->name);
            if (!npz_same(ts[i], z->tensors[i])) fail_msg("member %s differs", ts[i]->name);
        }
        oq_npz_free(z);
        free(buf);
        free(file);
    }
    unlink(path);
    rmdir(dir);
    for (size_t i = 0; i < NT + 2; i++) oq_tensor_free(ts[i]);
}

/* numpy.savez stores (with a ZIP64 field in each local header beside 32-bit sizes): plain.
 * savez_compressed deflates, zip64.npz has ZIP64 sizes: libzip's. */
static void test_numpy_archives(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int plain;
    } cases[] = {{"savez.npz", 1},      {"bad_member.npz", 1}, {"bad_notnpy.npz", 1},
                 {"bad_duplicate.npz", 1}, {"bad_crc.npz", 1},   {"savez_compressed.npz", 0},
                 {"zip64.npz", 0},      {"bad_size.npz", 0},   {"bad_limit.npz", 0},
                 {"bad_notzip.npz", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        size_t n = 0;
        snprintf(path, sizeof path, FIXTURES "%s", cases[i].file);
        unsigned char *buf = read_fixture(path, &n);
        expect_agree(buf, n, cases[i].plain, cases[i].file);
        free(buf);
    }
    /* read from a file both ways: the same */
    oq_err err = {0};
    oq_npz *a = NULL, *b = NULL;
    assert_int_equal(oq_npz_read(FIXTURES "savez.npz", &a, &err), OQ_OK);
    assert_int_equal(oq_npz_read_libzip(FIXTURES "savez.npz", &b, &err), OQ_OK);
    assert_same_npz(a, b);
    assert_string_equal(a->path, FIXTURES "savez.npz");
    oq_npz_free(a);
    oq_npz_free(b);
}

static void test_cut_at_every_byte(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *full = small_archive(&n);
    for (size_t len = 0; len < n; len++) {
        unsigned char *cut = malloc(len ? len : 1); /* its own allocation: ASan sees past its end */
        memcpy(cut, full, len);
        char what[32];
        snprintf(what, sizeof what, "cut at %zu", len);
        expect_agree(cut, len, 0, what);
        free(cut);
    }
    free(full);
}

static void test_bad_crc_named(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *b = small_archive(&n);
    b[CENTRAL(b, n) - 1] ^= 0x40; /* the last byte of the last member's data */
    expect_agree(b, n, 1, "bad data");
    oq_err err = {0};
    oq_npz *z = NULL;
    assert_int_equal(oq_npz_parse(b, n, "m", &z, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "m: member 'mask': CRC error");
    free(b);
}

/* Members nested in one another (each one's data holding the next, every header, size and CRC
 * agreeing; make_fixtures.py nested()) are refused by both readers before any is read: their
 * bytes counted once per member grew memory with the square of the file. */
static void test_overlapping_members(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *b = read_fixture(FIXTURES "bad_overlap.npz", &n);
    const char *want = "m: member 'm00001' overlaps member 'm00000' (a corrupt or crafted archive)";
    oq_err err = {0};
    oq_npz *z = NULL;
    assert_int_equal(oq_npz_parse_plain(b, n, "m", &z, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, want);
    assert_null(z);
    assert_int_equal(oq_npz_parse_libzip(b, n, "m", &z, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, want);
    assert_null(z);
    free(b);
}

/* A local (fields from 4, name at 30) or central (6, 46) header of a stored, empty "a.npy"
 * whose CRC is wrong. */
static void empty_member_header(unsigned char *h, uint32_t sig, size_t fields, size_t name_at)
{
    put32(h, sig);
    put16(h + fields, 20); /* version needed */
    put32(h + fields + 10, 0x12345678u);
    put16(h + fields + 22, 5);
    memcpy(h + name_at, "a.npy", 5);
}

/* One stored member "a.npy" of no bytes whose directory claims a CRC: libzip hands out an empty
 * buffer without checking it, so the plain path must not either (a fuzzer's find). */
static void test_empty_member_crc_unchecked(void **state)
{
    (void)state;
    unsigned char b[30 + 5 + 46 + 5 + 22] = {0};
    unsigned char *c = b + 35, *e = b + 86;
    empty_member_header(b, 0x04034b50u, 4, 30);
    empty_member_header(c, 0x02014b50u, 6, 46);
    put16(c + 4, 20); /* made by */
    put32(e, 0x06054b50u);
    put16(e + 8, 1);
    put16(e + 10, 1);
    put32(e + 12, 51);
    put32(e + 16, 35);
    expect_agree(b, sizeof b, 1, "empty member, bad CRC");
    oq_err err = {0};
    oq_npz *z = NULL;
    assert_int_equal(oq_npz_parse(b, sizeof b, "m", &z, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "member 'a': not a .npy file"));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t get16le(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

/* The last central entry before the end record at `e`. */
static size_t last_central(const unsigned char *b, size_t e)
{
    while (e && get32(b + e) != 0x02014b50u) e--;
    return e;
}

/* One change to the small archive and whether the plain path still reads it. Offsets are
 * from the first local header (l), central entry (c) or end record (e). */
typedef struct mutation {
    const char *what;
    char base; /* 'l', 'c' or 'e' */
    size_t at, width;
    int64_t value; /* below 0: the archive's size plus it */
    int plain;
} mutation;

static const mutation MUTATIONS[] = {
    {"local name", 'l', 30, 1, 'y', 0},
    {"local compressed size", 'l', 18, 4, 1, 0},
    {"local size", 'l', 22, 4, 0xffffffffu, 0},
    {"local CRC", 'l', 14, 4, 1234, 0},
    {"local method", 'l', 8, 2, 8, 0},
    {"local encryption flag", 'l', 6, 2, 1, 0},
    {"local signature", 'l', 0, 1, 'Q', 0},
    {"local name length", 'l', 26, 2, 0xffff, 0},
    {"local extra length", 'l', 28, 2, 0xffff, 0},
    {"central method (deflate)", 'c', 10, 2, 8, 0},
    {"central encryption flag", 'c', 8, 2, 1, 0},
    {"central strong encryption flag", 'c', 8, 2, 0x40, 0},
    {"central sizes ZIP64", 'c', 20, 4, 0xffffffffu, 0},
    {"central offset ZIP64", 'c', 42, 4, 0xffffffffu, 0},
    {"central offset out of the buffer", 'c', 42, 4, 0xfffffff0u, 0},
    {"central offset at the end", 'c', 42, 4, -10, 0},
    {"central name length", 'c', 28, 2, 0xffff, 0},
    {"central extra length", 'c', 30, 2, 0xffff, 0},
    {"central comment length", 'c', 32, 2, 0xffff, 0},
    {"central disk", 'c', 34, 2, 1, 0},
    {"central name not ASCII", 'c', 46, 1, 0xe9, 0},
    {"end disk", 'e', 4, 2, 1, 0},
    {"end entries ZIP64", 'e', 8, 4, 0xffffffffu, 0},
    {"end directory size", 'e', 12, 4, 0xffffff00u, 0},
    {"end directory offset out of the buffer", 'e', 16, 4, 0x7ffffff0u, 0},
    {"end directory offset ZIP64", 'e', 16, 4, 0xffffffffu, 0},
    {"end comment longer than the rest", 'e', 20, 2, 1, 0},
    {"a time stamp", 'c', 12, 4, 0x12345678u, 1},
    {"the UTF-8 name flag", 'c', 8, 2, 0x0800, 1},
};

static void mutate(unsigned char *b, size_t n, const mutation *m)
{
    size_t base = m->base == 'l' ? LOCAL(b, n) : m->base == 'c' ? CENTRAL(b, n) : END(b, n);
    uint32_t v = (uint32_t)(m->value < 0 ? (int64_t)n + m->value : m->value);
    for (size_t i = 0; i < m->width; i++) b[base + m->at + i] = (unsigned char)(v >> (8 * i));
}

static void test_mutations_plain_or_libzip(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *orig = small_archive(&n);
    for (size_t i = 0; i < sizeof MUTATIONS / sizeof MUTATIONS[0]; i++) {
        unsigned char *b = malloc(n);
        memcpy(b, orig, n);
        mutate(b, n, &MUTATIONS[i]);
        expect_agree(b, n, MUTATIONS[i].plain, MUTATIONS[i].what);
        free(b);
    }
    free(orig);
}

/* A data descriptor: CRC and sizes after the data, zeros in the local header. */
static void test_data_descriptor_flag(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *b = small_archive(&n);
    size_t l = LOCAL(b, n), c = CENTRAL(b, n);
    put16(b + l + 6, 0x0008);
    put16(b + c + 8, 0x0008);
    expect_agree(b, n, 1, "descriptor, local values kept");
    memset(b + l + 14, 0, 12);
    expect_agree(b, n, 1, "descriptor, local zeros");
    put16(b + l + 6, 0);
    expect_agree(b, n, 0, "local zeros without the descriptor flag");
    free(b);
}

/* `b` with `len` bytes inserted at `at`. */
static unsigned char *spliced(const unsigned char *b, size_t n, size_t at, const void *ins, size_t len)
{
    unsigned char *out = malloc(n + len);
    memcpy(out, b, at);
    memcpy(out + at, ins, len);
    memcpy(out + at + len, b + at, n - at);
    return out;
}

/* Comments: the archive's (after the end record), and the last entry's in the directory. */
static void test_comments(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *b = small_archive(&n);
    size_t e = END(b, n);
    unsigned char *with = spliced(b, n, n, "note PK\x05\x06", 9);
    put16(with + e + 20, 9);
    expect_agree(with, n + 9, 1, "archive comment");
    put16(with + e + 20, 8);
    expect_agree(with, n + 9, 0, "archive comment shorter than its bytes");
    free(with);
    /* the last central entry's comment, ending where a ZIP64 locator would be read */
    size_t last = last_central(b, e);
    unsigned char locator[20] = {'P', 'K', 6, 7};
    with = spliced(b, n, e, locator, sizeof locator);
    put16(with + last + 32, sizeof locator);
    put32(with + e + 20 + 12, get32(b + e + 12) + (uint32_t)sizeof locator);
    expect_agree(with, n + sizeof locator, 0, "ZIP64 locator");
    with[e + 1] = 'Q';
    expect_agree(with, n + sizeof locator, 1, "entry comment");
    free(with);
    free(b);
}

/* A member's data holding an end record (of an empty archive). The plain path reads the
 * record the archive ends with; so does libzip, unless it finds the archive's own directory
 * inconsistent (here: a local header needing version 4.5, its central entry 2.0, which the
 * plain path does not read): then it settles on the one inside, an archive of no members. */
static void test_end_record_inside_data(void **state)
{
    (void)state;
    oq_tensor *ts[2] = {npz_make(OQ_DTYPE_FLOAT32, 1, (int64_t[]){3}, "x"),
                        npz_make(OQ_DTYPE_UINT8, 1, (int64_t[]){30}, "bytes")};
    memset(ts[1]->data, 0, 30);
    memcpy(ts[1]->data, "PK\5\6", 4);
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_err err = {0};
    if (oq_npz_bytes(2, (const oq_tensor *const *)ts, 0, "m", &buf, &n, &err)) fail_msg("%s", err.msg);
    expect_agree(buf, n, 1, "ours");
    free(buf);
    oq_tensor_free(ts[0]);
    oq_tensor_free(ts[1]);
    /* numpy's: an end record in f32's values (the last 24 of its bytes), the CRCs mended */
    buf = read_fixture(FIXTURES "savez.npz", &n);
    size_t c = CENTRAL(buf, n), size = get32(buf + c + 20);
    size_t local = get32(buf + c + 42), data = local + 30 + buf[local + 26] + buf[local + 28];
    memcpy(buf + data + size - 24, "PK\5\6\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 22);
    uint32_t crc = (uint32_t)crc32(0L, buf + data, (uInt)size);
    put32(buf + local + 14, crc);
    put32(buf + c + 16, crc);
    expect_agree(buf, n, 1, "numpy's");
    put16(buf + local + 4, 45);
    oq_npz *z = NULL, *zl = NULL;
    if (oq_npz_parse(buf, n, "m", &z, &err)) fail_msg("%s", err.msg);
    assert_int_equal(z->count, 5);
    assert_int_equal(oq_npz_parse_libzip(buf, n, "m", &zl, &err), OQ_OK);
    assert_int_equal(zl->count, 0);
    oq_npz_free(z);
    oq_npz_free(zl);
    free(buf);
}

/* Every single bit of the small archive flipped: the plain path's answer or libzip's. */
static void test_every_bit_flipped(void **state)
{
    (void)state;
    size_t n = 0;
    unsigned char *orig = small_archive(&n);
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n * 8; i++) {
        memcpy(b, orig, n);
        b[i / 8] ^= (unsigned char)(1u << (i % 8));
        char what[48];
        snprintf(what, sizeof what, "bit %zu of byte %zu", i % 8, i / 8);
        expect_agree(b, n, -1, what);
    }
    free(b);
    free(orig);
}

/* No bytes is no archive, from memory as from a file (libzip read it as one of no members: a
 * body lost in transfer passed, and the first tensor asked for was then "no member"). */
static void test_empty_buffer_refused(void **state)
{
    (void)state;
    oq_err err = {0};
    oq_npz *z = NULL;
    unsigned char none[1] = {0};
    assert_int_equal(oq_npz_parse(none, 0, "body.npz", &z, &err), OQ_ERR_FORMAT);
    assert_null(z);
    assert_string_equal(err.msg, "body.npz: empty file (0 bytes), not an .npz (zip) archive");
    assert_int_equal(oq_npz_parse(NULL, 0, NULL, &z, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "<memory>: empty file (0 bytes), not an .npz (zip) archive");
    char dir[] = "/tmp/oq_npz_empty_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/empty0.npz", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    char want[128];
    snprintf(want, sizeof want, "%s: empty file (0 bytes), not an .npz (zip) archive", path);
    assert_int_equal(oq_npz_read(path, &z, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, want);
    unlink(path);
    rmdir(dir);
}

/* `b` (n bytes) refused as oq_npz_parse and, written to a file, as libzip's file path reads
 * it (archives above 64 MiB): the same message, `want` after the name. */
static void expect_corrupt(const unsigned char *b, size_t n, const char *want)
{
    oq_err err = {0};
    oq_npz *z = NULL;
    assert_int_equal(oq_npz_parse(b, n, "m", &z, &err), OQ_ERR_FORMAT);
    assert_null(z);
    if (strncmp(err.msg, "m: ", 3) || strcmp(err.msg + 3, want)) fail_msg("got '%s', want 'm: %s'", err.msg, want);
    char dir[] = "/tmp/oq_npz_corrupt_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c.npz", dir);
    if (oq_write_file_atomic(path, b, n, 1, &err)) fail_msg("%s", err.msg);
    assert_int_equal(oq_npz_read_libzip(path, &z, &err), OQ_ERR_FORMAT);
    assert_null(z);
    char whole[600];
    snprintf(whole, sizeof whole, "%s: %s", path, want);
    assert_string_equal(err.msg, whole);
    unlink(path);
    rmdir(dir);
}

/* A central directory that disagrees with a local header is a corrupt archive: libzip read it,
 * the tensor under the central directory's name (Python's zipfile refuses it). */
static void test_headers_disagree(void **state)
{
    (void)state;
    for (int compress = 0; compress <= 1; compress++) { /* plain, and deflated (libzip's alone) */
        oq_tensor *ts[2] = {npz_make(OQ_DTYPE_FLOAT32, 2, (int64_t[]){2, 3}, "x"),
                            npz_make(OQ_DTYPE_BOOL, 1, (int64_t[]){4}, "mask")};
        unsigned char *orig = NULL, *b = NULL;
        size_t n = 0;
        oq_err err = {0};
        if (oq_npz_bytes(2, (const oq_tensor *const *)ts, compress, "m", &orig, &n, &err)) fail_msg("%s", err.msg);
        b = malloc(n);
        size_t l = LOCAL(orig, n), c = CENTRAL(orig, n);
        size_t l2 = l + 30 + get16le(orig + l + 26) + get16le(orig + l + 28) + get32(orig + l + 18);
        size_t c2 = c + 46 + get16le(orig + c + 28) + get16le(orig + c + 30) + get16le(orig + c + 32);
        uint32_t crc = get32(orig + c + 16);
#define AGAIN() memcpy(b, orig, n)
        AGAIN();
        b[c + 46] = '!'; /* the first central name, x.npy */
        expect_corrupt(b, n, "member '!.npy' (entry 0) is named 'x.npy' in its local header: a corrupt archive");
        AGAIN();
        b[l2 + 30 + 1] = 'A'; /* the second local name, mask.npy */
        expect_corrupt(b, n, "member 'mask.npy' (entry 1) is named 'mAsk.npy' in its local header: a corrupt archive");
        AGAIN();
        b[c2 + 46 + 1] = '\n'; /* m\nsk.npy: a control character, shown escaped */
        expect_corrupt(b, n, "member 'm\\x0ask.npy' (entry 1) is named 'mask.npy' in its local header: a corrupt archive");
        AGAIN();
        put16(b + l + 8, compress ? 0 : 8);
        expect_corrupt(b, n, compress ? "member 'x.npy': compression method 8 in the central directory but 0 in its "
                                        "local header: a corrupt archive"
                                      : "member 'x.npy': compression method 0 in the central directory but 8 in its "
                                        "local header: a corrupt archive");
        AGAIN();
        put32(b + l + 14, crc ^ 1);
        char want[200];
        snprintf(want, sizeof want, "member 'x.npy': CRC %08x in the central directory but %08x in its local header: "
                 "a corrupt archive", crc, crc ^ 1);
        expect_corrupt(b, n, want);
        AGAIN();
        put32(b + l + 22, get32(orig + l + 22) + 1);
        snprintf(want, sizeof want, "member 'x.npy': size %u in the central directory but %u in its local header: "
                 "a corrupt archive", get32(orig + l + 22), get32(orig + l + 22) + 1);
        expect_corrupt(b, n, want);
        /* every byte of every central name changed: refused, never read under another name */
        for (size_t at = c; at < n - 22; at = at + 46 + get16le(orig + at + 28) + get16le(orig + at + 30) +
                                              get16le(orig + at + 32))
            for (size_t k = 0; k < get16le(orig + at + 28); k++) {
                AGAIN();
                b[at + 46 + k] ^= 0x40;
                oq_npz *z = NULL;
                if (oq_npz_parse(b, n, "m", &z, &err) != OQ_ERR_FORMAT)
                    fail_msg("central name byte %zu changed: read as '%s'", k, z && z->count ? z->tensors[0]->name : "?");
            }
#undef AGAIN
        free(b);
        free(orig);
        oq_tensor_free(ts[0]);
        oq_tensor_free(ts[1]);
    }
    /* numpy's archives, a ZIP64 one and a deflated one among them, still agree with themselves */
    static const char *const ok[] = {"savez.npz", "savez_compressed.npz", "zip64.npz"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, FIXTURES "%s", ok[i]);
        oq_err err = {0};
        oq_npz *z = NULL;
        if (oq_npz_read_libzip(path, &z, &err)) fail_msg("%s", err.msg);
        oq_npz_free(z);
        if (oq_npz_read(path, &z, &err)) fail_msg("%s", err.msg);
        oq_npz_free(z);
    }
}

/* An archive as Python's zipfile writes numpy.savez's (stored), by hand: members "<name>.npy"
 * holding `npy`, each with the UTF-8 flag numpy gives it: set for a name beyond ASCII. */
static unsigned char *savez_by_hand(const char *const *names, size_t k, const unsigned char *npy, size_t len,
                                    size_t *n)
{
    size_t total = 22;
    for (size_t i = 0; i < k; i++) total += 30 + 46 + 2 * (strlen(names[i]) + 4) + len;
    unsigned char *b = calloc(1, total), *p = b;
    uint32_t crc = (uint32_t)crc32(0, npy, (uInt)len), at[8];
    assert_true(k <= 8);
    for (int central = 0; central < 2; central++) {
        unsigned char *start = p;
        for (size_t i = 0; i < k; i++) {
            size_t nl = strlen(names[i]) + 4, f = central ? 6 : 4, head = central ? 46 : 30;
            unsigned flag = 0;
            for (const char *c = names[i]; *c; c++) flag |= (unsigned char)*c >= 0x80 ? 0x800 : 0;
            if (!central) at[i] = (uint32_t)(p - b);
            put32(p, central ? 0x02014b50u : 0x04034b50u);
            if (central) put16(p + 4, 20), put32(p + 42, at[i]);
            put16(p + f, 20);
            put16(p + f + 2, flag);
            put16(p + f + 8, 0x21); /* 1980-01-01 */
            put32(p + f + 10, crc);
            put32(p + f + 14, (uint32_t)len);
            put32(p + f + 18, (uint32_t)len);
            put16(p + f + 22, (unsigned)nl);
            memcpy(p + head, names[i], nl - 4);
            memcpy(p + head + nl - 4, ".npy", 4);
            p += head + nl;
            if (!central) memcpy(p, npy, len), p += len;
        }
        if (central) {
            put32(p, 0x06054b50u);
            put16(p + 8, (unsigned)k);
            put16(p + 10, (unsigned)k);
            put32(p + 12, (uint32_t)(p - start));
            put32(p + 16, (uint32_t)(start - b));
        }
    }
    *n = total;
    return b;
}

/* The names of `z` are `names`, in order. */
static void assert_names(const oq_npz *z, const char *const *names, size_t k, const char *what)
{
    if (z->count != k) fail_msg("%s: %zu members, want %zu", what, z->count, k);
    for (size_t i = 0; i < k; i++)
        if (strcmp(z->tensors[i]->name, names[i])) fail_msg("%s: member %zu is named '%s'", what, i, z->tensors[i]->name);
}

/* Names with control bytes or beyond ASCII, as numpy writes them, read back as their bytes
 * (libzip alone showed ESC as U+2190, a member that matched no tensor, and refused an archive
 * whose flagged name holds one); ortqual's own archives, stored or deflated, read back equal. */
static void test_member_names_as_numpy(void **state)
{
    (void)state;
    const char *names[] = {"ctl\x1b[2J", "nl\nx", "\xc3\xa9t\xc3\xa9", "mix\xc3\xa9\x1b", "plain"};
    oq_tensor *t = npz_make(OQ_DTYPE_FLOAT32, 1, (int64_t[]){3}, "t");
    unsigned char *npy = NULL, *b = NULL;
    size_t len = 0, n = 0;
    oq_err err = {0};
    assert_int_equal(oq_npy_serialize(t, &npy, &len, &err), OQ_OK);
    b = savez_by_hand(names, 5, npy, len, &n);
    oq_npz *z = NULL;
    if (oq_npz_parse(b, n, "m", &z, &err)) fail_msg("numpy's names: %s", err.msg);
    assert_names(z, names, 5, "numpy's names");
    oq_npz_free(z);
    free(b);
    /* the same without the mixed name, through libzip (as a deflated or large archive is read) */
    const char *four[] = {names[0], names[1], names[2], names[4]};
    b = savez_by_hand(four, 4, npy, len, &n);
    if (oq_npz_parse_libzip(b, n, "m", &z, &err)) fail_msg("libzip: %s", err.msg);
    assert_names(z, four, 4, "libzip");
    oq_npz_free(z);
    free(b);
    /* written here, stored (our writer) and deflated (libzip's): read back equal both ways */
    oq_tensor *ts[5];
    for (size_t i = 0; i < 5; i++) {
        ts[i] = npz_make(OQ_DTYPE_FLOAT32, 1, (int64_t[]){3}, names[i]);
    }
    for (int compress = 0; compress < 2; compress++) {
        if (oq_npz_bytes(5, (const oq_tensor *const *)ts, compress, "w", &b, &n, &err)) fail_msg("write: %s", err.msg);
        if (oq_npz_parse(b, n, "m", &z, &err)) fail_msg("read back (compress %d): %s", compress, err.msg);
        assert_names(z, names, 5, compress ? "deflated" : "stored");
        oq_npz_free(z);
        if (oq_npz_parse_libzip(b, n, "m", &z, &err)) fail_msg("libzip read back (compress %d): %s", compress, err.msg);
        assert_names(z, names, 5, "libzip read back");
        oq_npz_free(z);
        /* numpy's flags: ASCII with controls unflagged, a name beyond ASCII flagged */
        size_t c = CENTRAL(b, n);
        assert_int_equal(get16le(b + c + 8) & 0x800, 0);
        c += 46 + get16le(b + c + 28) + get16le(b + c + 30);
        c += 46 + get16le(b + c + 28) + get16le(b + c + 30);
        assert_int_equal(get16le(b + c + 8) & 0x800, 0x800);
        free(b);
    }
    for (size_t i = 0; i < 5; i++) oq_tensor_free(ts[i]);
    /* a name that is not UTF-8 is written unflagged (flagged, no reader here took the archive) and
     * reads as CP437, as numpy reads it */
    ts[0] = npz_make(OQ_DTYPE_FLOAT32, 1, (int64_t[]){3}, "v\xff");
    if (oq_npz_bytes(1, (const oq_tensor *const *)ts, 0, "w", &b, &n, &err)) fail_msg("write: %s", err.msg);
    if (oq_npz_parse(b, n, "m", &z, &err)) fail_msg("a name not UTF-8: %s", err.msg);
    assert_string_equal(z->tensors[0]->name, "v\xc2\xa0"); /* CP437 0xff is U+00A0 */
    oq_npz_free(z);
    free(b);
    oq_tensor_free(ts[0]);
    oq_tensor_free(t);
    free(npy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ours_read_plain_like_libzip),
        cmocka_unit_test(test_numpy_archives),
        cmocka_unit_test(test_cut_at_every_byte),
        cmocka_unit_test(test_bad_crc_named),
        cmocka_unit_test(test_overlapping_members),
        cmocka_unit_test(test_empty_member_crc_unchecked),
        cmocka_unit_test(test_mutations_plain_or_libzip),
        cmocka_unit_test(test_data_descriptor_flag),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_end_record_inside_data),
        cmocka_unit_test(test_every_bit_flipped),
        cmocka_unit_test(test_empty_buffer_refused),
        cmocka_unit_test(test_headers_disagree),
        cmocka_unit_test(test_member_names_as_numpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
