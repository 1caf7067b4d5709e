/* The growable buffers every other folder builds on, the CRC-32 every .npz is checked with,
 * and reals printed so that they read back (src/core/core-impl.h); the error messages of
 * status.h, which everything fills. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* A message longer than its buffer (a 3000-byte path) keeps the head and tail of the path and
 * the whole reason after it, also when prefixed; short ones are as formatted. */
static void test_err_long_path(void **state)
{
    (void)state;
    char path[3001];
    memset(path, 'd', 3000);
    path[0] = 'A', path[2999] = 'Z', path[3000] = 0;
    oq_err e = {0};
    assert_int_equal(oq_err_set(&e, OQ_ERR_OUTPUT, "%s: cannot create: %s", path, "File name too long"), OQ_ERR_OUTPUT);
    assert_true(strlen(e.msg) < sizeof e.msg - 1);
    assert_non_null(strstr(e.msg, ": cannot create: File name too long"));
    assert_int_equal(e.msg[0], 'A');
    assert_non_null(strstr(e.msg, "d...d"));
    assert_non_null(strstr(e.msg, "dZ: cannot create"));
    oq_err_prefix(&e, "%s: ", path);
    assert_int_equal(e.msg[0], 'A');
    assert_non_null(strstr(e.msg, "dZ: A"));
    assert_non_null(strstr(e.msg, ": cannot create: File name too long"));
    oq_err_set(&e, OQ_ERR_IO, "%s: short", "a/b");
    assert_string_equal(e.msg, "a/b: short");
    oq_err_prefix(&e, "%s: ", "x.npz");
    assert_string_equal(e.msg, "x.npz: a/b: short");
}

static void test_dynbuf_grows_and_keeps_text(void **state)
{
    (void)state;
    oq_dynbuf b;
    oq_dynbuf_init(&b, 0);
    for (int i = 0; i < 1000; i++) assert_int_equal(oq_dynbuf_addf(&b, "%d,", i), OQ_OK);
    assert_int_equal(b.len, strlen(b.buf));
    assert_memory_equal(b.buf, "0,1,2,3,", 8);
    assert_non_null(strstr(b.buf, ",998,999,"));
    assert_int_equal(oq_dynbuf_add(&b, "end"), OQ_OK);
    size_t len = 0;
    char *s = oq_dynbuf_take(&b, &len);
    assert_int_equal(len, strlen(s));
    assert_string_equal(s + len - 7, "999,end");
    assert_null(b.buf); /* handed over: the buffer is empty again */
    assert_int_equal(b.len, 0);
    free(s);
}

static void test_dynbuf_bytes_space_truncate(void **state)
{
    (void)state;
    oq_dynbuf b = {0}; /* zeroed is empty, without limit */
    const char bin[] = {'a', 0, 'b'};
    assert_int_equal(oq_dynbuf_addn(&b, bin, 3), OQ_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.buf, bin, 3);
    char *at = oq_dynbuf_space(&b, 100000);
    assert_non_null(at);
    memset(at, 'x', 5);
    oq_dynbuf_added(&b, 5);
    assert_int_equal(b.len, 8);
    assert_int_equal(b.buf[8], '\0');
    oq_dynbuf_truncate(&b, 2);
    assert_int_equal(b.len, 2);
    assert_int_equal(b.buf[2], '\0');
    oq_dynbuf_reset(&b);
    assert_string_equal(b.buf, "");
    oq_dynbuf_clear(&b);
    assert_null(b.buf);
    char *empty = oq_dynbuf_take(&b, NULL);
    assert_string_equal(empty, ""); /* nothing added: "" rather than NULL */
    free(empty);
}

static void test_dynbuf_max_refuses_and_keeps(void **state)
{
    (void)state;
    oq_dynbuf b;
    oq_dynbuf_init(&b, 10);
    assert_int_equal(oq_dynbuf_add(&b, "0123456789"), OQ_OK);
    assert_int_equal(oq_dynbuf_add(&b, "x"), OQ_ERR_NOMEM);
    assert_int_equal(oq_dynbuf_addf(&b, "%d", 7), OQ_ERR_NOMEM);
    assert_null(oq_dynbuf_space(&b, 1));
    assert_string_equal(b.buf, "0123456789"); /* a refusal changes nothing */
    oq_dynbuf_clear(&b);
    assert_int_equal(b.max, 10); /* the limit stays */
}

typedef struct item {
    int64_t a;
    char pad[20];
} item;

static void test_push_grows_zeroed_and_keeps(void **state)
{
    (void)state;
    item *v = NULL;
    size_t n = 0;
    for (int64_t i = 0; i < 1025; i++) {
        item *it = OQ_PUSH(v, n);
        assert_non_null(it);
        assert_int_equal(n, (size_t)i + 1);
        assert_ptr_equal(it, &v[i]);
        assert_int_equal(it->a, 0);
        for (size_t k = 0; k < sizeof it->pad; k++) assert_int_equal(it->pad[k], 0);
        it->a = i * 3;
    }
    for (int64_t i = 0; i < 1025; i++) assert_int_equal(v[i].a, i * 3);
    free(v);
}

static void test_strv(void **state)
{
    (void)state;
    char **v = NULL;
    size_t n = 0;
    assert_int_equal(oq_strv_push(&v, &n, "one"), OQ_OK);
    assert_int_equal(oq_strv_pushf(&v, &n, "%s-%d", "two", 2), OQ_OK);
    assert_int_equal(n, 2);
    assert_string_equal(v[0], "one");
    assert_string_equal(v[1], "two-2");
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static void test_arena(void **state)
{
    (void)state;
    oq_arena a = {0};
    double *d = oq_arena_alloc(&a, 16 * sizeof *d);
    assert_non_null(d);
    for (int i = 0; i < 16; i++) assert_true(d[i] == 0.0);
    assert_int_equal((uintptr_t)d % _Alignof(max_align_t), 0);
    assert_string_equal(oq_arena_strdup(&a, "name"), "name");
    assert_string_equal(oq_arena_printf(&a, "%s (%d)", "x", 3), "x (3)");
    assert_non_null(oq_arena_alloc(&a, 0));
    oq_arena_clear(&a); /* everything at once: ASan's leak check counts the rest */
    assert_null(a.head);
}

/* The carry-less-multiply CRC against zlib's: the check value, every length up to 4 KiB at
 * three offsets (the 64-byte folds, the 16-byte ones and zlib's tail), chaining, and a large
 * buffer. */
static void test_crc32_is_zlibs(void **state)
{
    (void)state;
    assert_int_equal(oq_crc32(0, "123456789", 9), 0xCBF43926u);
    size_t size = 1 << 20;
    unsigned char *b = malloc(size);
    assert_non_null(b);
    uint32_t r = 12345;
    for (size_t i = 0; i < size; i++) b[i] = (unsigned char)((r = r * 1103515245u + 12345u) >> 16);
    for (size_t n = 0; n <= 4096; n++)
        for (size_t off = 0; off < 3; off++) {
            uint32_t seed = n * 2654435761u;
            if (oq_crc32(seed, b + off, n) != oq_crc32_portable(seed, b + off, n)) fail_msg("length %zu at +%zu", n, off);
        }
    assert_int_equal(oq_crc32(oq_crc32(0, b, 1000), b + 1000, size - 1000), oq_crc32_portable(0, b, size));
    free(b);
}

/* A digest as oq_sha256_hex writes it is one; uppercase, a non-hex digit or a short string not. */
static void test_sha256_hex_at(void **state)
{
    (void)state;
    char hex[65];
    oq_sha256_buf("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_true(oq_sha256_hex_at(hex));
    char longer[80];
    snprintf(longer, sizeof longer, "%s\"tail", hex);
    assert_true(oq_sha256_hex_at(longer)); /* the caller judges what follows */
    for (int i = 0; i < 64; i += 9) {
        char bad[65];
        memcpy(bad, hex, sizeof bad);
        bad[i] = 'A';
        assert_false(oq_sha256_hex_at(bad));
        bad[i] = 'g';
        assert_false(oq_sha256_hex_at(bad));
    }
    hex[63] = 0;
    assert_false(oq_sha256_hex_at(hex));
}

/* Dims as text, cut to the buffer; NULL dims are "[]" whatever ndim says, a NULL or empty
 * buffer is left alone (NULL dims with ndim 2 read through NULL). */
static void test_dims_str(void **state)
{
    (void)state;
    char buf[16];
    const int64_t d[3] = {2, 30, 4};
    assert_string_equal(oq_dims_str(d, 3, buf, sizeof buf), "[2,30,4]");
    assert_string_equal(oq_dims_str(d, 0, buf, sizeof buf), "[]");
    assert_string_equal(oq_dims_str(NULL, 2, buf, sizeof buf), "[]");
    assert_string_equal(oq_dims_str(d, 3, buf, 5), "[2,3");
    assert_null(oq_dims_str(d, 3, NULL, 8));
    buf[0] = 'x';
    assert_ptr_equal(oq_dims_str(d, 3, buf, 0), buf);
    assert_int_equal(buf[0], 'x');
}

/* The fewest digits that read back as the same double, in the form %.{digits}g chooses; a
 * tolerance like 0.10008144378662108 keeps all of its digits (%.3g and %g said 0.1, 0.100081). */
static void test_real_str_reads_back(void **state)
{
    (void)state;
    char buf[40];
    assert_string_equal(oq_real_str(0.10008144378662108, 6, buf, sizeof buf), "0.10008144378662108");
    assert_string_equal(oq_real_str(0.0009765624, 6, buf, sizeof buf), "0.0009765624");
    assert_string_equal(oq_real_str(1e-4, 6, buf, sizeof buf), "0.0001");
    assert_string_equal(oq_real_str(1e-5, 6, buf, sizeof buf), "1e-05");
    assert_string_equal(oq_real_str(0.0, 6, buf, sizeof buf), "0");
    assert_string_equal(oq_real_str(123000.0, 6, buf, sizeof buf), "123000");
    assert_string_equal(oq_real_str(123000.0, 1, buf, sizeof buf), "1.23e+05");
    assert_string_equal(oq_real_str(NAN, 6, buf, sizeof buf), "nan");
    assert_string_equal(oq_real_str(-INFINITY, 6, buf, sizeof buf), "-inf");
    unsigned seed = 7;
    for (int i = 0; i < 2000; i++) {
        double v = ((double)rand_r(&seed) / RAND_MAX - 0.5) * pow(10, rand_r(&seed) % 80 - 40);
        oq_real_str(v, 1, buf, sizeof buf);
        assert_true(strtod(buf, NULL) == v);
        char shorter[320]; /* and one digit fewer does not (room for any %g, as the compiler asks) */
        int digits = 0, leading = 1; /* significant: from the first digit other than 0 */
        for (const char *c = buf; *c && *c != 'e'; c++) {
            leading = leading && (*c < '1' || *c > '9');
            digits += !leading && *c >= '0' && *c <= '9';
        }
        snprintf(shorter, sizeof shorter, "%.*g", digits - 1, v);
        if (digits > 1) assert_true(strtod(shorter, NULL) != v);
    }
}

/* A value over its bound reads back over it (0.000977 against atol 0.0009765624 does; 0.1
 * against rtol 0.10008144378662108 did not); at or under its bound, or with none, 3 digits. */
static void test_real_over_str(void **state)
{
    (void)state;
    char buf[40];
    double rtol = 0.10008144378662108, above = nextafter(rtol, 1.0);
    assert_true(strtod(oq_real_over_str(above, rtol, 3, buf, sizeof buf), NULL) > rtol);
    assert_string_equal(buf, "0.1001"); /* 0.1001 > 0.10008144378662108: enough */
    assert_string_equal(oq_real_over_str(0.1000815, rtol, 3, buf, sizeof buf), "0.1001");
    assert_string_equal(oq_real_over_str(0.0009765625, 0.0009765624, 3, buf, sizeof buf), "0.000977");
    assert_string_equal(oq_real_over_str(rtol, rtol, 3, buf, sizeof buf), "0.1");
    assert_string_equal(oq_real_over_str(above, INFINITY, 3, buf, sizeof buf), "0.1");
    assert_string_equal(oq_real_over_str(NAN, 0.0, 3, buf, sizeof buf), "nan");
    assert_string_equal(oq_real_over_str(INFINITY, 0.0, 3, buf, sizeof buf), "inf");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_err_long_path),
        cmocka_unit_test(test_dynbuf_grows_and_keeps_text),
        cmocka_unit_test(test_dynbuf_bytes_space_truncate),
        cmocka_unit_test(test_dynbuf_max_refuses_and_keeps),
        cmocka_unit_test(test_push_grows_zeroed_and_keeps),
        cmocka_unit_test(test_strv),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_crc32_is_zlibs),
        cmocka_unit_test(test_sha256_hex_at),
        cmocka_unit_test(test_dims_str),
        cmocka_unit_test(test_real_str_reads_back),
        cmocka_unit_test(test_real_over_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
