/* .npy/.npz: numpy-written fixtures (tests/fixtures/numpy/make_fixtures.py) read
 * with exact values, every refusal with its own message, round trips of every dtype. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npz/npz-impl.h"
#include "npz_values.h"
#include "ortqual/fileio.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "ortqual/runtime.h"
#include "tensor/tensor-impl.h"

#define FIXTURES OQ_SOURCE_DIR "/tests/fixtures/numpy/"

static oq_tensor *read_npy(const char *name)
{
    oq_err err = {0};
    oq_tensor *t = NULL;
    oq_status st = oq_npy_read(name, &t, &err);
    if (st) fail_msg("%s", err.msg);
    return t;
}

static void assert_shape(const oq_tensor *t, int32_t ndim, const int64_t *shape)
{
    assert_int_equal(t->ndim, ndim);
    for (int32_t i = 0; i < ndim; i++) assert_int_equal(t->shape[i], shape[i]);
}

/* The float32 fixture: [[1.5, -2.25, 0], [-0, inf, nan]]. */
static void check_f32(const oq_tensor *t)
{
    assert_int_equal(t->dtype, OQ_DTYPE_FLOAT32);
    assert_shape(t, 2, (int64_t[]){2, 3});
    const float *v = t->data;
    assert_true(v[0] == 1.5f && v[1] == -2.25f && v[2] == 0.0f && !signbit(v[2]));
    assert_true(v[3] == 0.0f && signbit(v[3]));
    assert_true(isinf(v[4]) && v[4] > 0);
    assert_true(isnan(v[5]));
}

static void check_i64(const oq_tensor *t)
{
    assert_int_equal(t->dtype, OQ_DTYPE_INT64);
    assert_shape(t, 1, (int64_t[]){3});
    const int64_t *v = t->data;
    assert_true(v[0] == INT64_MIN && v[1] == INT64_MAX && v[2] == 42);
}

static void check_bool(const oq_tensor *t)
{
    assert_int_equal(t->dtype, OQ_DTYPE_BOOL);
    assert_shape(t, 1, (int64_t[]){5});
    assert_memory_equal(t->data, ((unsigned char[]){1, 0, 1, 1, 0}), 5);
}

static void check_scalar(const oq_tensor *t)
{
    assert_int_equal(t->dtype, OQ_DTYPE_FLOAT32);
    assert_int_equal(t->ndim, 0);
    assert_int_equal(oq_tensor_numel(t), 1);
    assert_true(*(const float *)t->data == 3.5f);
}

static void check_empty(const oq_tensor *t)
{
    assert_int_equal(t->dtype, OQ_DTYPE_FLOAT32);
    assert_shape(t, 2, (int64_t[]){0, 4});
    assert_int_equal(oq_tensor_nbytes(t), 0);
}

static void check_f16(const oq_tensor *t)
{
    assert_int_equal(t->dtype, OQ_DTYPE_FLOAT16);
    assert_shape(t, 1, (int64_t[]){4});
    /* 0.5, -65504, 2^-24 (smallest subnormal), 1 + 2^-10 */
    assert_memory_equal(t->data, ((uint16_t[]){0x3800, 0xFBFF, 0x0001, 0x3C01}), 8);
}

static void check_i32(const oq_tensor *t)
{
    assert_int_equal(t->dtype, OQ_DTYPE_INT32);
    assert_shape(t, 3, (int64_t[]){2, 1, 2});
    assert_memory_equal(t->data, ((int32_t[]){INT32_MIN, INT32_MAX, 0, -7}), 16);
}

static void test_read_npy_every_dtype(void **state)
{
    (void)state;
    oq_tensor *t;
    check_f32(t = read_npy(FIXTURES "f32.npy"));
    oq_tensor_free(t);
    check_f16(t = read_npy(FIXTURES "f16.npy"));
    oq_tensor_free(t);
    t = read_npy(FIXTURES "f64.npy");
    assert_int_equal(t->dtype, OQ_DTYPE_FLOAT64);
    assert_shape(t, 2, (int64_t[]){2, 2});
    const double *d = t->data;
    assert_true(d[0] == 1.0 / 3.0 && d[1] == -1e300 && d[2] == 5e-324 && d[3] == 2.0);
    oq_tensor_free(t);
    check_i64(t = read_npy(FIXTURES "i64.npy"));
    oq_tensor_free(t);
    check_i32(t = read_npy(FIXTURES "i32.npy"));
    oq_tensor_free(t);
    check_bool(t = read_npy(FIXTURES "bool.npy"));
    oq_tensor_free(t);
    check_scalar(t = read_npy(FIXTURES "scalar_f32.npy"));
    oq_tensor_free(t);
    check_empty(t = read_npy(FIXTURES "empty_f32.npy"));
    oq_tensor_free(t);
}

static void test_read_npy_versions_2_and_3(void **state)
{
    (void)state;
    oq_tensor *t;
    check_f32(t = read_npy(FIXTURES "f32_v2.npy"));
    oq_tensor_free(t);
    check_f32(t = read_npy(FIXTURES "f32_v3.npy"));
    oq_tensor_free(t);
}

/* What we write is byte for byte what numpy.save wrote. */
static void test_serialize_matches_numpy_bytes(void **state)
{
    (void)state;
    const char *names[] = {"f32", "f16", "f64", "i64", "i32", "bool", "scalar_f32", "empty_f32"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, FIXTURES "%s.npy", names[i]);
        unsigned char *want, *got;
        size_t nwant, ngot;
        assert_int_equal(oq_read_file(path, &want, &nwant, NULL), OQ_OK);
        oq_tensor *t = read_npy(path);
        assert_int_equal(oq_npy_serialize(t, &got, &ngot, NULL), OQ_OK);
        assert_int_equal(ngot, nwant);
        assert_memory_equal(got, want, nwant);
        free(want);
        free(got);
        oq_tensor_free(t);
    }
}

static oq_npz *read_npz(const char *path)
{
    oq_err err = {0};
    oq_npz *z = NULL;
    if (oq_npz_read(path, &z, &err)) fail_msg("%s", err.msg);
    return z;
}

static void check_savez_members(oq_npz *z)
{
    assert_int_equal(z->count, 5);
    const char *order[] = {"f32", "i64", "bool", "scalar_f32", "empty_f32"};
    for (size_t i = 0; i < 5; i++) assert_string_equal(z->tensors[i]->name, order[i]);
    check_f32(oq_npz_get(z, "f32"));
    check_i64(oq_npz_get(z, "i64"));
    check_bool(oq_npz_get(z, "bool"));
    check_scalar(oq_npz_get(z, "scalar_f32"));
    check_empty(oq_npz_get(z, "empty_f32"));
    assert_null(oq_npz_get(z, "f32.npy"));
}

static void test_read_savez_and_savez_compressed(void **state)
{
    (void)state;
    oq_npz *z = read_npz(FIXTURES "savez.npz");
    check_savez_members(z);
    oq_npz_free(z);
    z = read_npz(FIXTURES "savez_compressed.npz");
    check_savez_members(z);
    oq_npz_free(z);
}

static void test_read_zip64_members(void **state)
{
    (void)state;
    oq_npz *z = read_npz(FIXTURES "zip64.npz");
    assert_int_equal(z->count, 2);
    check_f16(oq_npz_get(z, "f16"));
    check_i32(oq_npz_get(z, "i32"));
    oq_npz_free(z);
}

static void test_take_detaches_and_names_missing(void **state)
{
    (void)state;
    oq_npz *z = read_npz(FIXTURES "savez.npz");
    oq_tensor *t = NULL;
    oq_err err = {0};
    assert_int_equal(oq_npz_take(z, "i64", &t, &err), OQ_OK);
    check_i64(t);
    oq_tensor_free(t);
    assert_int_equal(z->count, 4);
    assert_null(oq_npz_get(z, "i64"));
    assert_string_equal(z->tensors[1]->name, "bool");
    assert_int_equal(oq_npz_take(z, "i64", &t, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "savez.npz: no member 'i64' (members: f32, bool, "
                                    "scalar_f32, empty_f32)"));
    oq_npz_free(z);
}

/* Reading `file` fails with `status` and a message holding the file name and `text`. */
static void expect_refusal(const char *file, oq_status status, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, FIXTURES "%s", file);
    oq_err err = {0};
    oq_tensor *t = NULL;
    oq_npz *z = NULL;
    int npz = strstr(file, ".npz") != NULL;
    oq_status st = npz ? oq_npz_read(path, &z, &err) : oq_npy_read(path, &t, &err);
    if (st != status || !strstr(err.msg, path) || !strstr(err.msg, text) || strchr(err.msg, '\n'))
        fail_msg("%s: got status %d, message '%s'; wanted %d with '%s'", file, st, err.msg,
                 status, text);
    assert_null(t);
    assert_null(z);
}

static void test_refusals_by_name(void **state)
{
    (void)state;
    expect_refusal("bad_fortran.npy", OQ_ERR_UNSUPPORTED,
                   ": Fortran-order arrays are not supported");
    expect_refusal("bad_object.npy", OQ_ERR_UNSUPPORTED,
                   ": object arrays ('|O') are not supported");
    expect_refusal("bad_bigendian.npy", OQ_ERR_UNSUPPORTED,
                   ": big-endian dtype '>f4' is not supported");
    expect_refusal("bad_complex.npy", OQ_ERR_UNSUPPORTED, ": unsupported dtype '<c8' (supported:");
    /* the small and unsigned integers are read (quantized inputs, int8 ids) */
    oq_tensor *u8 = read_npy(FIXTURES "u8.npy");
    assert_int_equal(u8->dtype, OQ_DTYPE_UINT8);
    assert_true(oq_tensor_get_f64(u8, 0) == 1 && oq_tensor_get_f64(u8, 1) == 2);
    oq_tensor_free(u8);
    expect_refusal("bad_structured.npy", OQ_ERR_UNSUPPORTED, ": structured dtypes");
    expect_refusal("bad_truncated.npy", OQ_ERR_FORMAT,
                   ": truncated data (24 bytes expected, 21 present)");
    expect_refusal("bad_trailing.npy", OQ_ERR_FORMAT, ": 3 unexpected bytes after the data");
    expect_refusal("bad_magic.npy", OQ_ERR_FORMAT, ": not a .npy file (bad magic)");
    expect_refusal("bad_version.npy", OQ_ERR_UNSUPPORTED, ": unsupported .npy format version 4.0");
    expect_refusal("bad_header.npy", OQ_ERR_FORMAT,
                   ": malformed .npy header: 'shape' must be a tuple");
    expect_refusal("bad_rank.npy", OQ_ERR_FORMAT, ": malformed .npy header: rank above 8");
    expect_refusal("bad_member.npz", OQ_ERR_UNSUPPORTED,
                   "bad_member.npz: member 'a': unsupported dtype '<c8'");
    expect_refusal("bad_notnpy.npz", OQ_ERR_FORMAT, ": member 'readme.txt' is not a .npy file");
    expect_refusal("bad_duplicate.npz", OQ_ERR_FORMAT, ": member 'f32' appears twice");
    expect_refusal("bad_overlap.npz", OQ_ERR_FORMAT,
                   ": member 'm00001' overlaps member 'm00000' (a corrupt or crafted archive)");
    expect_refusal("bad_size.npz", OQ_ERR_FORMAT,
                   ": member 'f32': declared size 4294967040 is impossible");
    /* issue 15: the compressed size lies too; refused before 4 GiB are allocated */
    expect_refusal("bad_lying_sizes.npz", OQ_ERR_FORMAT,
                   ": member 'f32': compressed size 4000000 is larger than the archive (978 bytes)");
    expect_refusal("bad_limit.npz", OQ_ERR_FORMAT,
                   ": member 'f32': 18253611008 bytes, above the limit of 17179869184 (16 GiB)");
    expect_refusal("bad_crc.npz", OQ_ERR_FORMAT, ": member 'f32': CRC error");
    expect_refusal("bad_notzip.npz", OQ_ERR_FORMAT,
                   ": cannot open as .npz (zip): Not a zip archive");
    expect_refusal("missing.npz", OQ_ERR_IO, ": cannot open: No such file");
    expect_refusal("missing.npy", OQ_ERR_IO, ": cannot open: No such file");
}

/* Malformed headers built in memory: each problem has its own text. */
static void expect_header_refusal(const char *dict, const char *text)
{
    unsigned char buf[256] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    size_t len = strlen(dict);
    buf[8] = (unsigned char)len;
    memcpy(buf + 10, dict, len);
    oq_err err = {0};
    oq_tensor *t = NULL;
    oq_status st = oq_npy_parse(buf, 10 + len, "mem.npy", &t, &err);
    if (st == OQ_OK || !strstr(err.msg, text) || strncmp(err.msg, "mem.npy: ", 9) != 0)
        fail_msg("header %s: got '%s', wanted '%s'", dict, err.msg, text);
}

static void test_malformed_headers(void **state)
{
    (void)state;
    expect_header_refusal("{'descr': '<f4', 'shape': (1,), }", "missing key 'fortran_order'");
    expect_header_refusal("{'descr': '<f4', 'fortran_order': False, }", "missing key 'shape'");
    expect_header_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
                          "unexpected key 'x'");
    expect_header_refusal("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
                          "expected True or False");
    expect_header_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
                          "expected a non-negative integer");
    expect_header_refusal("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
                          "unexpected text after the dict");
    expect_header_refusal("{'descr: '<f4'", "expected ':'");
    expect_header_refusal("['descr']", "expected '{'");
    expect_header_refusal("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (99999999999999999999,)}", "dimension too large");
    expect_header_refusal("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (4294967296, 4294967296, 4294967296)}", "array size overflows");
    /* issue 15: a 0 does not excuse the others (their product overflowed int64 in numel) */
    expect_header_refusal("{'descr': '|b1', 'fortran_order': False, "
                          "'shape': (4294967296, 2147483649, 0)}", "array size overflows");

    unsigned char shortbuf[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff};
    oq_err err = {0};
    oq_tensor *t = NULL;
    assert_int_equal(oq_npy_parse(shortbuf, sizeof shortbuf, NULL, &t, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "<memory>: truncated .npy preamble (9 bytes)");
    unsigned char longhdr[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 1, 0, 0, '{'};
    assert_int_equal(oq_npy_parse(longhdr, sizeof longhdr, "h", &t, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg, "h: truncated .npy header (256 bytes declared, 1 present)");
}

/* ---- round trips ---- */

typedef struct case_shape {
    int32_t ndim;
    int64_t shape[3];
} case_shape;

static const case_shape SHAPES[] = {{3, {2, 3, 4}}, {0, {0}}, {2, {0, 5}}, {1, {17}}};
static const oq_dtype DTYPES[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16,
                                  OQ_DTYPE_FLOAT64, OQ_DTYPE_INT64,   OQ_DTYPE_INT32,
                                  OQ_DTYPE_BOOL};
#define NDT (sizeof DTYPES / sizeof DTYPES[0])
#define NSH (sizeof SHAPES / sizeof SHAPES[0])

static void test_npy_roundtrip_every_dtype_in_memory(void **state)
{
    (void)state;
    for (size_t d = 0; d < NDT; d++)
        for (size_t s = 0; s < NSH; s++) {
            oq_tensor *t = npz_make(DTYPES[d], SHAPES[s].ndim, SHAPES[s].shape, NULL);
            oq_tensor *back = NULL;
            unsigned char *buf;
            size_t n;
            oq_err err = {0};
            assert_int_equal(oq_npy_serialize(t, &buf, &n, &err), OQ_OK);
            assert_int_equal((10 + buf[8] + 256 * buf[9]) % 64, 0); /* data 64-aligned */
            assert_int_equal(oq_npy_parse(buf, n, "rt", &back, &err), OQ_OK);
            if (!npz_same(t, back)) fail_msg("%s shape #%zu differs", oq_dtype_name(DTYPES[d]), s);
            free(buf);
            oq_tensor_free(t);
            oq_tensor_free(back);
        }
}

/* Bool bytes other than 0/1 are written as 1, as numpy stores them. */
static void test_bool_bytes_written_as_0_or_1(void **state)
{
    (void)state;
    unsigned char v[4] = {0, 2, 255, 1};
    oq_tensor *t = NULL, *back = NULL;
    assert_int_equal(oq_tensor_wrap(&t, OQ_DTYPE_BOOL, 1, (int64_t[]){4}, v, "b", NULL), OQ_OK);
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_npy_serialize(t, &buf, &n, NULL), OQ_OK);
    assert_memory_equal(buf + n - 4, ((unsigned char[]){0, 1, 1, 1}), 4);
    assert_int_equal(oq_npy_parse(buf, n, NULL, &back, NULL), OQ_OK);
    assert_memory_equal(back->data, ((unsigned char[]){0, 1, 1, 1}), 4);
    assert_memory_equal(v, ((unsigned char[]){0, 2, 255, 1}), 4); /* input untouched */
    free(buf);
    oq_tensor_free(back);
    oq_tensor_free(t);
}

static char *temp_dir(void)
{
    static char dir[512];
    snprintf(dir, sizeof dir, OQ_BINARY_DIR "/tests/tmp-npz-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void remove_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* bfloat16 comes back from a file as float32 holding the same values; converting
 * it back gives the original bits. */
static void test_bfloat16_written_as_float32(void **state)
{
    (void)state;
    const char *dir = temp_dir();
    char path[600];
    snprintf(path, sizeof path, "%s/bf16.npy", dir);
    oq_tensor *t = npz_make(OQ_DTYPE_BFLOAT16, 1, (int64_t[]){12}, NULL), *back, *bf;
    assert_int_equal(oq_npy_write(path, t, 0, NULL), OQ_OK);
    back = read_npy(path);
    assert_int_equal(back->dtype, OQ_DTYPE_FLOAT32);
    assert_int_equal(oq_tensor_convert(back, OQ_DTYPE_BFLOAT16, &bf, NULL), OQ_OK);
    assert_memory_equal(bf->data, t->data, oq_tensor_nbytes(t));
    oq_tensor_free(t);
    oq_tensor_free(back);
    oq_tensor_free(bf);
    remove_dir(dir);
}

/* An ml_dtypes.bfloat16 array as numpy.save writes it ('<V2', or a plain '|V2'): its bits as
 * bfloat16. float32 feeds a bfloat16 input when bfloat16 holds every value: narrowed, else the
 * first value that is not is named by position. Other types are left to the caller's check. */
static oq_tensor *parse_v2(const char *descr, const uint16_t bits[3])
{
    unsigned char buf[128] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    char dict[64];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", descr);
    buf[8] = (unsigned char)len;
    memcpy(buf + 10, dict, (size_t)len);
    memcpy(buf + 10 + len, bits, 3 * sizeof *bits);
    oq_err err = {0};
    oq_tensor *t = NULL;
    if (oq_npy_parse(buf, 10 + (size_t)len + 6, "v2.npy", &t, &err)) fail_msg("%s: %s", descr, err.msg);
    return t;
}

static void test_bfloat16_read_and_fed(void **state)
{
    (void)state;
    const uint16_t bits[3] = {0x3fc0, 0xc000, 0x7f80}; /* 1.5, -2, inf */
    for (int i = 0; i < 2; i++) {
        oq_tensor *t = parse_v2(i ? "|V2" : "<V2", bits);
        assert_int_equal(t->dtype, OQ_DTYPE_BFLOAT16);
        assert_memory_equal(t->data, bits, sizeof bits);
        oq_tensor_free(t);
    }
    oq_err err = {0};
    oq_tensor *f = npz_make(OQ_DTYPE_FLOAT32, 2, (int64_t[]){2, 3}, "x");
    for (int64_t i = 0; i < 6; i++) ((float *)f->data)[i] = 0.5f * (float)i - 1.0f;
    oq_tensor *i64 = npz_make(OQ_DTYPE_INT64, 1, (int64_t[]){2}, "n");
    assert_int_equal(oq_npz_feed_as(i64, OQ_DTYPE_BFLOAT16, "m", &err), OQ_OK);
    assert_int_equal(i64->dtype, OQ_DTYPE_INT64);
    assert_int_equal(oq_npz_feed_as(f, OQ_DTYPE_FLOAT16, "m", &err), OQ_OK); /* no widening promised */
    assert_int_equal(f->dtype, OQ_DTYPE_FLOAT32);
    ((float *)f->data)[4] = 1.00001f;
    assert_int_equal(oq_npz_feed_as(f, OQ_DTYPE_BFLOAT16, "in.npz: member 'x'", &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "in.npz: member 'x' is float32 for a bfloat16 input, but its value 1.00001001 at "
                                 "[1,1] is no bfloat16 (give float32 values bfloat16 holds exactly, or "
                                 "ml_dtypes.bfloat16 '<V2')");
    assert_int_equal(f->dtype, OQ_DTYPE_FLOAT32);
    ((float *)f->data)[4] = 1.0f;
    assert_int_equal(oq_npz_feed_as(f, OQ_DTYPE_BFLOAT16, "m", &err), OQ_OK);
    assert_int_equal(f->dtype, OQ_DTYPE_BFLOAT16);
    for (int64_t i = 0; i < 6; i++)
        assert_true(oq_bf16_bits_to_f32(((uint16_t *)f->data)[i]) == (i == 4 ? 1.0f : 0.5f * (float)i - 1.0f));
    char forms[160];
    assert_string_equal(oq_npz_accepted(OQ_DTYPE_INT64, forms, sizeof forms), "accepted: int64 ('<i8')");
    oq_tensor_free(f);
    oq_tensor_free(i64);
}

static void roundtrip_npz(const char *dir, int compress)
{
    oq_tensor *ts[NDT * NSH];
    size_t n = 0;
    for (size_t d = 0; d < NDT; d++)
        for (size_t s = 0; s < NSH; s++) {
            char name[64];
            snprintf(name, sizeof name, "%s_%zu", oq_dtype_name(DTYPES[d]), s);
            ts[n++] = npz_make(DTYPES[d], SHAPES[s].ndim, SHAPES[s].shape, name);
        }
    char path[600];
    snprintf(path, sizeof path, "%s/all_%d.npz", dir, compress);
    oq_err err = {0};
    if (oq_npz_write(path, n, (const oq_tensor *const *)ts, compress, 0, &err))
        fail_msg("%s", err.msg);
    oq_npz *z = read_npz(path);
    assert_int_equal(z->count, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(z->tensors[i]->name, ts[i]->name);
        if (!npz_same(ts[i], z->tensors[i])) fail_msg("member %s differs", ts[i]->name);
    }
    oq_npz_free(z);
    /* Same bytes from memory as from the file. */
    unsigned char *buf;
    size_t len;
    assert_int_equal(oq_read_file(path, &buf, &len, NULL), OQ_OK);
    assert_int_equal(oq_npz_parse(buf, len, "mem", &z, &err), OQ_OK);
    assert_int_equal(z->count, n);
    assert_string_equal(z->path, "mem");
    oq_npz_free(z);
    free(buf);
    for (size_t i = 0; i < n; i++) oq_tensor_free(ts[i]);
}

static void test_npz_roundtrip_stored_and_compressed(void **state)
{
    (void)state;
    const char *dir = temp_dir();
    roundtrip_npz(dir, 0);
    roundtrip_npz(dir, 1);
    /* deflate shrinks this repetitive data; stored does not */
    char p0[600], p1[600];
    snprintf(p0, sizeof p0, "%s/all_0.npz", dir);
    snprintf(p1, sizeof p1, "%s/all_1.npz", dir);
    unsigned char *b0, *b1;
    size_t n0, n1;
    assert_int_equal(oq_read_file(p0, &b0, &n0, NULL), OQ_OK);
    assert_int_equal(oq_read_file(p1, &b1, &n1, NULL), OQ_OK);
    assert_true(n1 < n0);
    free(b0);
    free(b1);
    remove_dir(dir);
}

static void test_npz_write_refusals_and_overwrite(void **state)
{
    (void)state;
    const char *dir = temp_dir();
    char path[600];
    snprintf(path, sizeof path, "%s/w.npz", dir);
    oq_tensor *a = npz_make(OQ_DTYPE_FLOAT32, 1, (int64_t[]){3}, "a");
    oq_tensor *a2 = npz_make(OQ_DTYPE_INT32, 1, (int64_t[]){2}, "a");
    oq_tensor *anon = npz_make(OQ_DTYPE_INT32, 1, (int64_t[]){2}, NULL);
    oq_err err = {0};

    const oq_tensor *dup[] = {a, a2};
    assert_int_equal(oq_npz_write(path, 2, dup, 0, 0, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "w.npz: duplicate tensor name 'a'"));
    const oq_tensor *unnamed[] = {a, anon};
    assert_int_equal(oq_npz_write(path, 2, unnamed, 0, 0, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "w.npz: tensor 1 has no name"));
    assert_int_equal(access(path, F_OK), -1); /* nothing written */

    assert_int_equal(oq_npz_write(path, 1, (const oq_tensor *const[]){a}, 1, 0, &err), OQ_OK);
    assert_int_equal(oq_npz_write(path, 1, (const oq_tensor *const[]){a2}, 1, 0, &err),
                     OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "w.npz: exists (not overwritten)"));
    oq_npz *z = read_npz(path);
    assert_true(npz_same(a, oq_npz_get(z, "a"))); /* the refused write changed nothing */
    oq_npz_free(z);
    assert_int_equal(oq_npz_write(path, 1, (const oq_tensor *const[]){a2}, 1, 1, &err), OQ_OK);
    z = read_npz(path);
    assert_true(npz_same(a2, oq_npz_get(z, "a")));
    oq_npz_free(z);

    /* An archive with no members is still a valid (empty) zip. */
    snprintf(path, sizeof path, "%s/empty.npz", dir);
    assert_int_equal(oq_npz_write(path, 0, NULL, 0, 0, &err), OQ_OK);
    z = read_npz(path);
    assert_int_equal(z->count, 0);
    assert_int_equal(oq_npz_take(z, "x", &a2, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "empty.npz: no member 'x' (members: none)"));
    oq_npz_free(z);
    /* ... but a file of 0 bytes is not one (it read as an archive with no members) */
    snprintf(path, sizeof path, "%s/zero.npz", dir);
    fclose(fopen(path, "w"));
    z = NULL;
    assert_int_equal(oq_npz_read(path, &z, &err), OQ_ERR_FORMAT);
    assert_null(z);
    assert_non_null(strstr(err.msg, "zero.npz: empty file (0 bytes), not an .npz (zip) archive"));

    snprintf(path, sizeof path, "%s/a.npy", dir);
    assert_int_equal(oq_npy_write(path, a, 0, &err), OQ_OK);
    assert_int_equal(oq_npy_write(path, a, 0, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "a.npy: exists (not overwritten)"));
    snprintf(path, sizeof path, "%s/no/such/dir/a.npy", dir);
    assert_int_equal(oq_npy_write(path, a, 1, &err), OQ_ERR_OUTPUT);
    assert_non_null(strstr(err.msg, "a.npy: cannot create"));

    oq_tensor_free(a);
    oq_tensor_free(a2);
    oq_tensor_free(anon);
    remove_dir(dir);
}

/* Corrupted inputs (bytes flipped, files cut short) are refused with a
 * one-line message or, if still valid, read; never a crash (ASan watches). */
static void mutate_and_parse(const char *file, int npz, uint64_t *seed)
{
    unsigned char *orig;
    size_t n;
    assert_int_equal(oq_read_file(file, &orig, &n, NULL), OQ_OK);
    unsigned char *b = malloc(n);
    for (int iter = 0; iter < 200; iter++) {
        memcpy(b, orig, n);
        size_t len = n;
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        if ((*seed >> 60) < 4) {
            len = (size_t)(*seed >> 20) % n;
        } else {
            for (int k = 0; k < 1 + (int)((*seed >> 56) & 3); k++) {
                *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
                b[(*seed >> 16) % n] ^= (unsigned char)(1u << ((*seed >> 8) & 7));
            }
        }
        oq_err err = {0};
        oq_tensor *t = NULL;
        oq_npz *z = NULL;
        oq_status st = npz ? oq_npz_parse(b, len, "m", &z, &err) : oq_npy_parse(b, len, "m", &t, &err);
        if (st != OQ_OK && (strncmp(err.msg, "m: ", 3) != 0 || strchr(err.msg, '\n')))
            fail_msg("%s: mutation %d: bad message '%s'", file, iter, err.msg);
        oq_tensor_free(t);
        oq_npz_free(z);
    }
    free(b);
    free(orig);
}

static void test_mutated_inputs_never_crash(void **state)
{
    (void)state;
    uint64_t seed = 42;
    const char *npy[] = {"f32.npy", "i32.npy", "bool.npy", "scalar_f32.npy", "f32_v2.npy"};
    const char *npz[] = {"savez.npz", "savez_compressed.npz", "zip64.npz"};
    char path[512];
    for (size_t i = 0; i < sizeof npy / sizeof npy[0]; i++) {
        snprintf(path, sizeof path, FIXTURES "%s", npy[i]);
        mutate_and_parse(path, 0, &seed);
    }
    for (size_t i = 0; i < sizeof npz / sizeof npz[0]; i++) {
        snprintf(path, sizeof path, FIXTURES "%s", npz[i]);
        mutate_and_parse(path, 1, &seed);
    }
}

/* A message is one line whatever the path holds: a newline in a file's name came out raw (the
 * qualifying service's log got a second, forged record), here and in the other readers. */
static void expect_one_line(const char *what, oq_status st, const oq_err *e, const char *shown)
{
    if (st == OQ_OK) fail_msg("%s: accepted", what);
    if (strchr(e->msg, '\n') || !strstr(e->msg, shown)) fail_msg("%s: '%s' (want '%s' in one line)", what, e->msg, shown);
}

static void test_newline_in_path_one_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq_npz_nl_XXXXXX", path[128], shown[128], nodir[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c\nd.npz", dir);
    snprintf(shown, sizeof shown, "%s/c\\x0ad.npz: ", dir);
    snprintf(nodir, sizeof nodir, "%s/no\ndir/x.npz", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("junk", f);
    fclose(f);
    oq_err e = {0};
    oq_npz *z = NULL;
    expect_one_line("oq_npz_read", oq_npz_read(path, &z, &e), &e, shown);
    oq_tensor *t = npz_make(OQ_DTYPE_FLOAT32, 1, (int64_t[]){2}, "a\nb");
    expect_one_line("oq_npz_write", oq_npz_write(nodir, 1, (const oq_tensor *const *)&t, 0, 1, &e), &e, "no\\x0adir");
    oq_model_info *mi = NULL;
    expect_one_line("oq_model_inspect_file", oq_model_inspect_file(path, &mi, &e), &e, "c\\x0ad.npz");
    oq_runtime *rt = NULL;
    expect_one_line("oq_runtime_load", oq_runtime_load(path, &rt, &e), &e, "c\\x0ad.npz");
    oq_tensor_free(t);
    unlink(path);
    rmdir(dir);
}

/* An archive of one member `event_indices` holding `ids` as `dtype` (int64 or uint64 here). */
static oq_tensor *ids_tensor(oq_dtype dtype, const uint64_t *ids, int64_t n)
{
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, dtype, 1, &n, "event_indices", NULL), OQ_OK);
    memcpy(t->data, ids, (size_t)n * sizeof *ids);
    return t;
}

/* Saved outputs paired with their inputs: the same ids pass whatever the integer widths, and
 * ids that differ only past 2^53 (equal as doubles) are told apart, by position. */
static void test_same_events(void **state)
{
    (void)state;
    const uint64_t a[2] = {7, (1ull << 53) + 1}, b[2] = {7, 1ull << 53};
    oq_tensor *ta = ids_tensor(OQ_DTYPE_INT64, a, 2), *ta_u = ids_tensor(OQ_DTYPE_UINT64, a, 2),
              *tb = ids_tensor(OQ_DTYPE_UINT64, b, 2), *tb1 = ids_tensor(OQ_DTYPE_INT64, b, 1);
    oq_npz in = {1, &ta, "in.npz"}, same = {1, &ta_u, "same.npz"}, other = {1, &tb, "out.npz"},
           short_ = {1, &tb1, "short.npz"}, none = {0, NULL, "none.npz"};
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_npz_same_events(&in, in.path, &same, same.path, &err), OQ_OK);
    assert_int_equal(oq_npz_same_events(&in, in.path, &none, none.path, &err), OQ_OK);
    assert_int_equal(oq_npz_same_events(&in, in.path, &other, other.path, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "out.npz: event_indices[1] is 9007199254740992 where in.npz has event "
                                    "9007199254740993"));
    assert_int_equal(oq_npz_same_events(&in, in.path, &short_, short_.path, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "short.npz: 1 event_indices, where in.npz has 2"));
    oq_tensor_free(ta);
    oq_tensor_free(ta_u);
    oq_tensor_free(tb);
    oq_tensor_free(tb1);
}

/* An integer element read exactly (the one reader of npz's id pairing and validate's members):
 * signed and unsigned apart, every bit of a 64-bit one, nothing written for a float. */
static void test_int_at_exact(void **state)
{
    (void)state;
    const uint64_t big[2] = {(1ull << 53) + 1, UINT64_MAX};
    oq_tensor *i64 = ids_tensor(OQ_DTYPE_INT64, big, 1), *u64 = ids_tensor(OQ_DTYPE_UINT64, big, 2);
    int64_t shape[1] = {1};
    oq_tensor *i8 = NULL, *f32 = NULL;
    assert_int_equal(oq_tensor_create(&i8, OQ_DTYPE_INT8, 1, shape, "i8", NULL), OQ_OK);
    assert_int_equal(oq_tensor_create(&f32, OQ_DTYPE_FLOAT32, 1, shape, "f", NULL), OQ_OK);
    ((int8_t *)i8->data)[0] = -5;
    int64_t s = 0;
    uint64_t u = 0;
    assert_int_equal(oq_tensor_int_at(i64, 0, &s, &u), 1);
    assert_true(s == (int64_t)(1ull << 53) + 1);
    assert_int_equal(oq_tensor_int_at(u64, 1, &s, &u), 2);
    assert_true(u == UINT64_MAX);
    assert_int_equal(oq_tensor_int_at(i8, 0, &s, &u), 1);
    assert_true(s == -5);
    s = 3;
    u = 4;
    assert_int_equal(oq_tensor_int_at(f32, 0, &s, &u), 0);
    assert_true(s == 3 && u == 4);
    oq_tensor_free(i64);
    oq_tensor_free(u64);
    oq_tensor_free(i8);
    oq_tensor_free(f32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_npy_every_dtype),
        cmocka_unit_test(test_same_events),
        cmocka_unit_test(test_int_at_exact),
        cmocka_unit_test(test_read_npy_versions_2_and_3),
        cmocka_unit_test(test_serialize_matches_numpy_bytes),
        cmocka_unit_test(test_read_savez_and_savez_compressed),
        cmocka_unit_test(test_read_zip64_members),
        cmocka_unit_test(test_take_detaches_and_names_missing),
        cmocka_unit_test(test_refusals_by_name),
        cmocka_unit_test(test_malformed_headers),
        cmocka_unit_test(test_mutated_inputs_never_crash),
        cmocka_unit_test(test_npy_roundtrip_every_dtype_in_memory),
        cmocka_unit_test(test_bfloat16_written_as_float32),
        cmocka_unit_test(test_bfloat16_read_and_fed),
        cmocka_unit_test(test_bool_bytes_written_as_0_or_1),
        cmocka_unit_test(test_npz_roundtrip_stored_and_compressed),
        cmocka_unit_test(test_npz_write_refusals_and_overwrite),
        cmocka_unit_test(test_newline_in_path_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
