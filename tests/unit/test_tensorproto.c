/* onnx.TensorProto: every conformance .pb loads and matches an independent
 * decoding of its bytes; typed-field fixtures (tests/fixtures/onnx/, encoded
 * by hand) read with exact values; each refusal has its own message; every
 * dtype round-trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npz_values.h"
#include "onnx.pb-c.h"
#include "ortqual/fileio.h"
#include "tensorproto/tensorproto-impl.h"

#define FIXTURES OQ_SOURCE_DIR "/tests/fixtures/onnx/"
#define CONFORMANCE_SET OQ_SOURCE_DIR "/tests/data/onnx-backend/attention"

/* ---- an independent decoder of the few TensorProto fields onnx writes ---- */

typedef struct wire_tensor {
    int64_t dims[16];
    size_t ndims;
    int64_t data_type;
    const unsigned char *raw;
    size_t raw_len;
    int has_raw;
} wire_tensor;

static int wire_varint(const unsigned char *b, size_t n, size_t *i, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *i < n && shift < 64; shift += 7) {
        unsigned char c = b[(*i)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return 0;
    }
    return -1;
}

/* Fields 1 (dims), 2 (data_type), 9 (raw_data); others skipped. */
static int wire_decode(const unsigned char *b, size_t n, wire_tensor *w)
{
    memset(w, 0, sizeof *w);
    size_t i = 0;
    while (i < n) {
        uint64_t key, v;
        if (wire_varint(b, n, &i, &key)) return -1;
        unsigned field = (unsigned)(key >> 3), type = (unsigned)(key & 7);
        if (type == 0) {
            if (wire_varint(b, n, &i, &v)) return -1;
            if (field == 1 && w->ndims < 16) w->dims[w->ndims++] = (int64_t)v;
            if (field == 2) w->data_type = (int64_t)v;
        } else if (type == 2) {
            if (wire_varint(b, n, &i, &v) || v > n - i) return -1;
            if (field == 9) { w->raw = b + i; w->raw_len = (size_t)v; w->has_raw = 1; }
            if (field == 1) /* packed dims */
                for (size_t j = i; j < i + v && w->ndims < 16;) {
                    uint64_t d;
                    if (wire_varint(b, i + v, &j, &d)) return -1;
                    w->dims[w->ndims++] = (int64_t)d;
                }
            i += (size_t)v;
        } else if (type == 1 || type == 5) {
            i += type == 1 ? 8 : 4;
        } else {
            return -1;
        }
    }
    return i == n ? 0 : -1;
}

/* ---- conformance files ---- */

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* OQ_CONFORMANCE_DIR, else the set vendored in the tree (tests/data/onnx-backend). */
static const char *conformance_dir(void)
{
    const char *env = getenv("OQ_CONFORMANCE_DIR");
    if (env && *env) return env;
    return is_dir(CONFORMANCE_SET) ? CONFORMANCE_SET : NULL;
}

/* Load one .pb, check it against the independent decoding, and check that our
 * serialization of it reproduces the file byte for byte. */
static void check_conformance_file(const char *path, int *dtypes_seen)
{
    unsigned char *bytes;
    size_t n;
    oq_err err = {0};
    assert_int_equal(oq_read_file(path, &bytes, &n, &err), OQ_OK);
    oq_tensor *t = NULL;
    if (oq_tensorproto_read(path, &t, &err)) fail_msg("%s", err.msg);
    wire_tensor w;
    assert_int_equal(wire_decode(bytes, n, &w), 0);
    assert_true(w.has_raw);
    assert_int_equal(t->dtype, w.data_type);
    assert_int_equal((size_t)t->ndim, w.ndims);
    for (size_t i = 0; i < w.ndims; i++) assert_int_equal(t->shape[i], w.dims[i]);
    assert_int_equal(oq_tensor_nbytes(t), w.raw_len);
    if (t->dtype == OQ_DTYPE_BOOL)
        for (size_t i = 0; i < w.raw_len; i++)
            assert_int_equal(((unsigned char *)t->data)[i], w.raw[i] != 0);
    else if (w.raw_len)
        assert_memory_equal(t->data, w.raw, w.raw_len);
    assert_non_null(t->name);
    dtypes_seen[t->dtype] = 1;

    unsigned char *again;
    size_t m;
    assert_int_equal(oq_tensorproto_serialize(t, &again, &m, &err), OQ_OK);
    if (m != n || memcmp(again, bytes, n) != 0) fail_msg("%s: re-serialized bytes differ", path);
    free(again);
    free(bytes);
    oq_tensor_free(t);
}

static size_t scan_test_dir(const char *dir, int *dtypes_seen)
{
    char sub[1200];
    snprintf(sub, sizeof sub, "%s/test_data_set_0", dir);
    DIR *d = opendir(sub);
    if (!d) return 0;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".pb") != 0) continue;
        char path[1500];
        snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
        check_conformance_file(path, dtypes_seen);
        count++;
    }
    closedir(d);
    return count;
}

static void test_every_conformance_pb_loads(void **state)
{
    (void)state;
    const char *root = conformance_dir();
    if (!root) fail_msg("conformance set not found at %s (vendored in the tree)", CONFORMANCE_SET);
    DIR *d = opendir(root);
    if (!d) fail_msg("%s: cannot open", root);
    size_t files = 0, tests = 0;
    int dtypes_seen[32] = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "test_", 5) != 0) continue;
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        files += scan_test_dir(dir, dtypes_seen);
        tests++;
    }
    closedir(d);
    print_message("%zu .pb files in %zu tests loaded and verified\n", files, tests);
    assert_true(tests > 100 && files > 3 * tests);
    /* the set uses float32, float16, bool masks and int64 nonpad_kv_seqlen */
    assert_true(dtypes_seen[OQ_DTYPE_FLOAT32] && dtypes_seen[OQ_DTYPE_FLOAT16] &&
                dtypes_seen[OQ_DTYPE_BOOL] && dtypes_seen[OQ_DTYPE_INT64]);
}

/* ---- typed-field fixtures ---- */

static oq_tensor *read_pb(const char *file, oq_dtype dt, const char *name, int32_t ndim,
                          const int64_t *shape)
{
    char path[600];
    snprintf(path, sizeof path, FIXTURES "%s", file);
    oq_err err = {0};
    oq_tensor *t = NULL;
    if (oq_tensorproto_read(path, &t, &err)) fail_msg("%s", err.msg);
    assert_int_equal(t->dtype, dt);
    assert_string_equal(t->name, name);
    assert_int_equal(t->ndim, ndim);
    for (int32_t i = 0; i < ndim; i++) assert_int_equal(t->shape[i], shape[i]);
    return t;
}

static void test_typed_fields(void **state)
{
    (void)state;
    oq_tensor *t = read_pb("typed_float.pb", OQ_DTYPE_FLOAT32, "tf", 2, (int64_t[]){2, 2});
    const float *f = t->data;
    assert_true(f[0] == 1.5f && f[1] == -2.0f && isinf(f[2]) && f[2] > 0 && isnan(f[3]));
    oq_tensor_free(t);
    t = read_pb("typed_double.pb", OQ_DTYPE_FLOAT64, "td", 1, (int64_t[]){3});
    const double *d = t->data;
    assert_true(d[0] == 1.0 / 3.0 && d[1] == -1e300 && d[2] == 5e-324);
    oq_tensor_free(t);
    t = read_pb("typed_int64.pb", OQ_DTYPE_INT64, "ti64", 1, (int64_t[]){2});
    assert_memory_equal(t->data, ((int64_t[]){INT64_MIN, INT64_MAX}), 16);
    oq_tensor_free(t);
    t = read_pb("typed_int32.pb", OQ_DTYPE_INT32, "ti32", 2, (int64_t[]){2, 1});
    assert_memory_equal(t->data, ((int32_t[]){-5, INT32_MAX}), 8);
    oq_tensor_free(t);
    t = read_pb("typed_float16.pb", OQ_DTYPE_FLOAT16, "tf16", 1, (int64_t[]){3});
    assert_memory_equal(t->data, ((uint16_t[]){0x3C00, 0xC000, 0x7C00}), 6); /* 1, -2, inf */
    oq_tensor_free(t);
    t = read_pb("typed_bfloat16.pb", OQ_DTYPE_BFLOAT16, "tbf16", 1, (int64_t[]){2});
    assert_memory_equal(t->data, ((uint16_t[]){0x3F80, 0xFF80}), 4); /* 1, -inf */
    oq_tensor_free(t);
    t = read_pb("typed_bool.pb", OQ_DTYPE_BOOL, "tb", 1, (int64_t[]){4});
    assert_memory_equal(t->data, ((unsigned char[]){1, 0, 0, 1}), 4);
    oq_tensor_free(t);
    t = read_pb("typed_scalar.pb", OQ_DTYPE_FLOAT32, "ts", 0, NULL);
    assert_true(*(float *)t->data == 7.0f);
    oq_tensor_free(t);
}

/* ---- refusals ---- */

static void expect_proto_refusal(const Onnx__TensorProto *p, oq_status status, const char *text)
{
    oq_err err = {0};
    oq_tensor *t = NULL;
    oq_status st = oq_tensorproto_from_proto(p, &t, &err);
    if (st != status || !strstr(err.msg, text))
        fail_msg("got %d '%s', wanted %d with '%s'", st, err.msg, status, text);
    assert_null(t);
}

static void test_refusals(void **state)
{
    (void)state;
    int64_t dims[9] = {3, 1, 1, 1, 1, 1, 1, 1, 1};
    float vals[3] = {1, 2, 3};
    int32_t ivals[1] = {70000};
    uint8_t raw[7] = {0};
    Onnx__TensorProto p;
    Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *locs[] = {&loc};
    Onnx__TensorProto__Segment seg = ONNX__TENSOR_PROTO__SEGMENT__INIT;
    loc.key = "location";
    loc.value = "weights.bin";

#define RESET(dt)                                                                      \
    do {                                                                               \
        onnx__tensor_proto__init(&p);                                                  \
        p.name = "x";                                                                  \
        p.n_dims = 1;                                                                  \
        p.dims = dims;                                                                 \
        p.has_data_type = 1;                                                           \
        p.data_type = (dt);                                                            \
    } while (0)

    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    p.has_data_location = 1;
    p.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    p.n_external_data = 1;
    p.external_data = locs;
    expect_proto_refusal(&p, OQ_ERR_UNSUPPORTED,
                         "tensor 'x': unsupported: external data (location 'weights.bin')");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    p.segment = &seg;
    expect_proto_refusal(&p, OQ_ERR_UNSUPPORTED, "tensor 'x': unsupported: segmented tensor");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__UINT8);
    expect_proto_refusal(&p, OQ_ERR_UNSUPPORTED, "tensor 'x': unsupported data type UINT8 (2)");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__STRING);
    expect_proto_refusal(&p, OQ_ERR_UNSUPPORTED, "unsupported data type STRING (8)");
    RESET(0);
    p.has_data_type = 0;
    expect_proto_refusal(&p, OQ_ERR_UNSUPPORTED, "unsupported data type UNDEFINED (0)");
    RESET(99);
    expect_proto_refusal(&p, OQ_ERR_UNSUPPORTED, "unsupported data type unknown (99)");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    p.n_dims = 9;
    expect_proto_refusal(&p, OQ_ERR_UNSUPPORTED, "tensor 'x': rank 9 above 8 is not supported");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    dims[0] = -3;
    expect_proto_refusal(&p, OQ_ERR_FORMAT, "tensor 'x': negative dimension -3 at axis 0");
    dims[0] = 3;
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    expect_proto_refusal(&p, OQ_ERR_FORMAT,
                         "tensor 'x': no data (neither raw_data nor float_data) for float32 [3]");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    p.n_float_data = 2;
    p.float_data = vals;
    expect_proto_refusal(&p, OQ_ERR_FORMAT, "tensor 'x': float_data holds 2 values, [3] needs 3");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    p.has_raw_data = 1;
    p.raw_data.len = 7;
    p.raw_data.data = raw;
    expect_proto_refusal(&p, OQ_ERR_FORMAT,
                         "tensor 'x': raw_data holds 7 bytes, float32 [3] needs 12");
    p.n_float_data = 3;
    p.float_data = vals;
    expect_proto_refusal(&p, OQ_ERR_FORMAT, "tensor 'x': both raw_data and float_data are set");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT); /* refused before allocating 2^62 bytes */
    int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 20};
    p.n_dims = 2;
    p.dims = huge;
    p.has_raw_data = 1;
    p.raw_data.len = 4;
    p.raw_data.data = raw;
    expect_proto_refusal(&p, OQ_ERR_FORMAT,
                         "raw_data holds 4 bytes, float32 [1099511627776,1048576] needs "
                         "4611686018427387904");
    RESET(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16);
    dims[0] = 1;
    p.n_int32_data = 1;
    p.int32_data = ivals;
    expect_proto_refusal(&p, OQ_ERR_FORMAT,
                         "tensor 'x': int32_data[0] = 70000 is not a 16-bit float16 pattern");
    p.name = NULL;
    expect_proto_refusal(&p, OQ_ERR_FORMAT, "tensor (unnamed): int32_data[0] = 70000");
#undef RESET

    oq_err err = {0};
    oq_tensor *t = NULL;
    const unsigned char junk[] = {0xff, 0xff, 0xff};
    assert_int_equal(oq_tensorproto_parse(junk, sizeof junk, "junk.pb", &t, &err), OQ_ERR_FORMAT);
    assert_string_equal(err.msg,
                        "junk.pb: not a valid onnx.TensorProto (protobuf decoding failed)");
    assert_int_equal(oq_tensorproto_read(FIXTURES "missing.pb", &t, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "missing.pb: cannot open: No such file"));
    /* a file's errors carry its path before the tensor */
    const unsigned char uint8_tensor[] = {0x08, 0x01, 0x10, 0x02, 0x42, 0x01, 'u'};
    assert_int_equal(oq_tensorproto_parse(uint8_tensor, sizeof uint8_tensor, "u.pb", &t, &err),
                     OQ_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "u.pb: tensor 'u': unsupported data type UINT8 (2)");
}

/* ---- round trips ---- */

/* Same dtype, shape and bytes (TensorProto keeps bfloat16 as is). */
static int same_exact(const oq_tensor *a, const oq_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return memcmp(a->data, b->data, oq_tensor_nbytes(a)) == 0;
}

static const oq_dtype DTYPES[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16,
                                  OQ_DTYPE_FLOAT64, OQ_DTYPE_INT64,   OQ_DTYPE_INT32,
                                  OQ_DTYPE_BOOL};
static const struct {
    int32_t ndim;
    int64_t shape[3];
} SHAPES[] = {{3, {2, 3, 4}}, {0, {0}}, {2, {0, 5}}};

static void test_roundtrip_every_dtype(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, OQ_BINARY_DIR "/tests/tmp-pb-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[600];
    snprintf(path, sizeof path, "%s/t.pb", dir);
    oq_err err = {0};
    for (size_t d = 0; d < sizeof DTYPES / sizeof DTYPES[0]; d++)
        for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++) {
            oq_tensor *t = npz_make(DTYPES[d], SHAPES[s].ndim, SHAPES[s].shape, "rt"), *back;
            /* in memory, through the proto struct */
            Onnx__TensorProto *p = NULL;
            assert_int_equal(oq_tensorproto_to_proto(t, &p, &err), OQ_OK);
            assert_true(p->has_raw_data);
            assert_int_equal(oq_tensorproto_from_proto(p, &back, &err), OQ_OK);
            assert_true(same_exact(t, back));
            assert_string_equal(back->name, "rt");
            oq_tensorproto_proto_free(p);
            oq_tensor_free(back);
            /* through a file */
            if (oq_tensorproto_write(path, t, 1, &err)) fail_msg("%s", err.msg);
            if (oq_tensorproto_read(path, &back, &err)) fail_msg("%s", err.msg);
            if (!same_exact(t, back))
                fail_msg("%s shape #%zu differs", oq_dtype_name(DTYPES[d]), s);
            oq_tensor_free(back);
            oq_tensor_free(t);
        }
    /* bool bytes other than 0/1 are written as 1 (ONNX's raw_data rule) */
    unsigned char v[3] = {0, 7, 1};
    oq_tensor *b = NULL, *bb = NULL;
    assert_int_equal(oq_tensor_wrap(&b, OQ_DTYPE_BOOL, 1, (int64_t[]){3}, v, "b", NULL), OQ_OK);
    Onnx__TensorProto *p = NULL;
    assert_int_equal(oq_tensorproto_to_proto(b, &p, &err), OQ_OK);
    assert_memory_equal(p->raw_data.data, ((unsigned char[]){0, 1, 1}), 3);
    oq_tensorproto_proto_free(p);
    assert_int_equal(oq_tensorproto_write(path, b, 1, &err), OQ_OK);
    assert_int_equal(oq_tensorproto_read(path, &bb, &err), OQ_OK);
    assert_memory_equal(bb->data, ((unsigned char[]){0, 1, 1}), 3);
    assert_memory_equal(v, ((unsigned char[]){0, 7, 1}), 3);
    oq_tensor_free(b);
    oq_tensor_free(bb);

    oq_tensor *t = npz_make(OQ_DTYPE_INT32, 1, (int64_t[]){2}, NULL);
    assert_int_equal(oq_tensorproto_write(path, t, 0, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "t.pb: exists (not overwritten)"));
    oq_tensor *back = NULL;
    assert_int_equal(oq_tensorproto_write(path, t, 1, &err), OQ_OK);
    assert_int_equal(oq_tensorproto_read(path, &back, &err), OQ_OK);
    assert_null(back->name); /* unnamed stays unnamed */
    oq_tensor_free(back);
    oq_tensor_free(t);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Corrupted .pb bytes are refused with a one-line message or read; never a crash. */
static void test_mutated_inputs_never_crash(void **state)
{
    (void)state;
    const char *files[] = {"typed_float.pb", "typed_int64.pb", "typed_bool.pb", "typed_float16.pb"};
    uint64_t seed = 7;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[600];
        snprintf(path, sizeof path, FIXTURES "%s", files[f]);
        unsigned char *orig;
        size_t n;
        assert_int_equal(oq_read_file(path, &orig, &n, NULL), OQ_OK);
        for (int iter = 0; iter < 300; iter++) {
            unsigned char b[64];
            assert_true(n <= sizeof b);
            memcpy(b, orig, n);
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t len = (seed >> 60) < 4 ? (size_t)(seed >> 20) % n : n;
            b[(seed >> 16) % n] ^= (unsigned char)(1u << ((seed >> 8) & 7));
            oq_err err = {0};
            oq_tensor *t = NULL;
            if (oq_tensorproto_parse(b, len, "m", &t, &err) != OQ_OK &&
                (strncmp(err.msg, "m: ", 3) != 0 || strchr(err.msg, '\n')))
                fail_msg("%s: mutation %d: bad message '%s'", files[f], iter, err.msg);
            oq_tensor_free(t);
        }
        free(orig);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_conformance_pb_loads),
        cmocka_unit_test(test_typed_fields),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_mutated_inputs_never_crash),
        cmocka_unit_test(test_roundtrip_every_dtype),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
