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

/* The comment just above `decl` in include/ortqual/<header>, malloc'ed: what the header
 * promises about it. */
static char *header_comment(const char *header, const char *decl)
{
    char path[512];
    snprintf(path, sizeof path, "%s/include/ortqual/%s", OQ_SOURCE_DIR, header);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *d = strstr(text, decl);
    if (!d) fail_msg("%s: no '%s'", header, decl);
    *d = 0;
    char *open = NULL;
    for (char *c = strstr(text, "/*"); c; c = strstr(c + 2, "/*")) open = c;
    assert_non_null(open);
    return strdup(open);
}

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

/* A message is one line whatever the path holds: control characters as \xNN (a newline let
 * anyone who names a file forge a record in a log of messages), other bytes as they are. */
static void test_err_one_line(void **state)
{
    (void)state;
    oq_err e = {0};
    oq_err_set(&e, OQ_ERR_IO, "%s: cannot open", "/tmp/c\nd\r\t\x1b[31m\x7f.npz");
    assert_string_equal(e.msg, "/tmp/c\\x0ad\\x0d\\x09\\x1b[31m\\x7f.npz: cannot open");
    oq_err_prefix(&e, "member '%s': ", "a\nb");
    assert_string_equal(e.msg, "member 'a\\x0ab': /tmp/c\\x0ad\\x0d\\x09\\x1b[31m\\x7f.npz: cannot open");
    /* C1 controls in UTF-8 (U+009B is CSI) escaped; other UTF-8 and bytes that are not kept */
    oq_err_set(&e, OQ_ERR_IO, "%s", "\xc2\x9b" "1m \xc3\xa9 \xff \xc2");
    assert_string_equal(e.msg, "\\x9b" "1m \xc3\xa9 \xff \xc2");
    /* a quoted line's own end is not shown */
    oq_err_set(&e, OQ_ERR_RUNTIME, "worker: %s", "cannot load\r\n");
    assert_string_equal(e.msg, "worker: cannot load");
    /* and a long one still keeps its reason */
    char path[3001];
    memset(path, '\n', 3000);
    path[3000] = 0;
    oq_err_set(&e, OQ_ERR_IO, "%s: gone", path);
    assert_null(strchr(e.msg, '\n'));
    assert_non_null(strstr(e.msg, "\\x0a: gone"));
}

/* A name for text output, escaped as messages are, its own final newline included (a folder
 * named "t\n" is not "t"). */
static void test_text_printable(void **state)
{
    (void)state;
    char *s = oq_text_printable("t\x1b[2J \xc2\x9b \xc3\xa9\n");
    assert_string_equal(s, "t\\x1b[2J \\x9b \xc3\xa9\\x0a");
    free(s);
    assert_null(oq_text_printable(NULL));
}

/* The names status.h lists are the names oq_status_str gives (it said "io error"). */
static void test_status_names_as_documented(void **state)
{
    (void)state;
    static const struct {
        oq_status s;
        const char *id;
    } all[] = {{OQ_OK, "OQ_OK"},
               {OQ_ERR_INVALID_ARG, "OQ_ERR_INVALID_ARG"},
               {OQ_ERR_IO, "OQ_ERR_IO"},
               {OQ_ERR_FORMAT, "OQ_ERR_FORMAT"},
               {OQ_ERR_SHAPE, "OQ_ERR_SHAPE"},
               {OQ_ERR_MASK, "OQ_ERR_MASK"},
               {OQ_ERR_NOMEM, "OQ_ERR_NOMEM"},
               {OQ_ERR_UNSUPPORTED, "OQ_ERR_UNSUPPORTED"},
               {OQ_ERR_RUNTIME, "OQ_ERR_RUNTIME"},
               {OQ_ERR_NOT_FOUND, "OQ_ERR_NOT_FOUND"},
               {OQ_ERR_CHECK_FAILED, "OQ_ERR_CHECK_FAILED"},
               {OQ_ERR_OUTPUT, "OQ_ERR_OUTPUT"}};
    char *h = header_comment("status.h", "OQ_API const char *oq_status_str(");
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, " %s ", all[i].id);
        const char *row = strstr(h, want);
        if (!row) fail_msg("status.h does not list %s", all[i].id);
        const char *q = strchr(row, '"'), *end = q ? strchr(q + 1, '"') : NULL;
        assert_non_null(end);
        const char *got = oq_status_str(all[i].s);
        if (strlen(got) != (size_t)(end - q - 1) || strncmp(got, q + 1, (size_t)(end - q - 1)))
            fail_msg("%s: status.h says \"%.*s\", oq_status_str \"%s\"", all[i].id, (int)(end - q - 1), q + 1, got);
    }
    assert_string_equal(oq_status_str((oq_status)99), "unknown status");
    free(h);
}

/* Every spelling tensor.h documents parses (it listed "f4", which never did), to the dtype
 * whose name it was given with; numpy's codes do not. */
static void test_dtype_spellings_as_documented(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        oq_dtype t;
    } spell[] = {{"float32", OQ_DTYPE_FLOAT32}, {"fp32", OQ_DTYPE_FLOAT32},    {"float", OQ_DTYPE_FLOAT32},
                 {"float16", OQ_DTYPE_FLOAT16}, {"fp16", OQ_DTYPE_FLOAT16},    {"half", OQ_DTYPE_FLOAT16},
                 {"bfloat16", OQ_DTYPE_BFLOAT16}, {"bf16", OQ_DTYPE_BFLOAT16}, {"float64", OQ_DTYPE_FLOAT64},
                 {"fp64", OQ_DTYPE_FLOAT64},    {"double", OQ_DTYPE_FLOAT64},  {"int64", OQ_DTYPE_INT64},
                 {"int32", OQ_DTYPE_INT32},     {"int16", OQ_DTYPE_INT16},     {"int8", OQ_DTYPE_INT8},
                 {"uint64", OQ_DTYPE_UINT64},   {"uint32", OQ_DTYPE_UINT32},   {"uint16", OQ_DTYPE_UINT16},
                 {"uint8", OQ_DTYPE_UINT8},     {"bool", OQ_DTYPE_BOOL}};
    enum { N = sizeof spell / sizeof spell[0] };
    for (size_t i = 0; i < N; i++) assert_int_equal(oq_dtype_parse(spell[i].s), spell[i].t);
    /* the header's list is this list: each quoted spelling in it, and as many */
    char *h = header_comment("tensor.h", "OQ_API oq_dtype oq_dtype_parse(");
    size_t quoted = 0;
    for (const char *q = strchr(h, '"'); q; q = strchr(q + 1, '"')) {
        const char *end = strchr(q + 1, '"');
        assert_non_null(end);
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)(end - q - 1), q + 1);
        if (oq_dtype_parse(word) == OQ_DTYPE_UNDEFINED) fail_msg("tensor.h lists \"%s\": it does not parse", word);
        quoted++;
        q = end;
    }
    assert_int_equal(quoted, N);
    free(h);
    static const char *const not[] = {"f4", "<f4", "f2", "f8", "i8", "b1", "FP32", " fp32", ""};
    for (size_t i = 0; i < sizeof not / sizeof not[0]; i++) assert_int_equal(oq_dtype_parse(not[i]), OQ_DTYPE_UNDEFINED);
    assert_int_equal(oq_dtype_parse(NULL), OQ_DTYPE_UNDEFINED);
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
        cmocka_unit_test(test_err_one_line),
        cmocka_unit_test(test_text_printable),
        cmocka_unit_test(test_status_names_as_documented),
        cmocka_unit_test(test_dtype_spellings_as_documented),
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
