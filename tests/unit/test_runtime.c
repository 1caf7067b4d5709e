/* oq_runtime / oq_session against the real ONNX Runtime 1.29 (CPU build). */
#include <dlfcn.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "ortqual/fileio.h"
#include "ortqual/graph.h"
#include "ortqual/runtime.h"
#include "runtime/tinymodel-impl.h"

#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

/* ---- loading -------------------------------------------------------------------- */

static void test_load_reports_version(void **state)
{
    (void)state;
    assert_string_equal(oq_runtime_version(rt), "1.29.0");
    assert_int_equal(oq_runtime_api_version(rt), 29);
    assert_non_null(oq_runtime_api(rt));
    assert_non_null(strstr(oq_runtime_lib_path(rt), "libonnxruntime.so"));
    assert_int_equal(oq_runtime_lib_path(rt)[0], '/');
    assert_true(strlen(oq_runtime_build_info(rt)) > 0);
}

static void test_load_search_finds_bundled(void **state)
{
    (void)state;
    unsetenv("ORTQUAL_ORT_LIB");
    oq_runtime *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_runtime_load(NULL, &r, &err), OQ_OK);
    assert_string_equal(oq_runtime_version(r), "1.29.0");
    oq_runtime_free(r);
}

static void test_load_env_override_is_exclusive(void **state)
{
    (void)state;
    setenv("ORTQUAL_ORT_LIB", "/nonexistent/env/libonnxruntime.so", 1);
    oq_runtime *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_runtime_load(NULL, &r, &err), OQ_ERR_NOT_FOUND);
    assert_null(r);
    assert_non_null(strstr(err.msg, "/nonexistent/env/libonnxruntime.so"));
    assert_non_null(strstr(err.msg, "ORTQUAL_ORT_LIB"));
    unsetenv("ORTQUAL_ORT_LIB");
}

static void test_load_missing_path(void **state)
{
    (void)state;
    oq_runtime *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_runtime_load("/nonexistent/dir/libonnxruntime.so", &r, &err), OQ_ERR_NOT_FOUND);
    assert_null(r);
    assert_non_null(strstr(err.msg, "/nonexistent/dir/libonnxruntime.so"));
    assert_non_null(strstr(err.msg, "no such file"));
    assert_null(strchr(err.msg, '\n'));
    /* A bare name goes to the dynamic loader's search, which says why it failed. */
    assert_int_equal(oq_runtime_load("libonnxruntime_nope.so", &r, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "libonnxruntime_nope.so (cannot open shared object file"));
}

static void test_load_foreign_library(void **state)
{
    (void)state;
    Dl_info info;
    assert_true(dladdr((void *)(uintptr_t)zlibVersion, &info) && info.dli_fname);
    oq_runtime *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_runtime_load(info.dli_fname, &r, &err), OQ_ERR_NOT_FOUND);
    assert_null(r);
    assert_non_null(strstr(err.msg, info.dli_fname));
    assert_non_null(strstr(err.msg, "OrtGetApiBase"));
}

static void test_load_not_a_library(void **state)
{
    (void)state;
    char path[] = "/tmp/oq_notlib_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "hello\n", 6), 6);
    close(fd);
    oq_runtime *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_runtime_load(path, &r, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, path));
    unlink(path);
}

/* A copy of the bundled library's first `len` bytes (all of it for 0) in `dir`, with `patch`
 * (n_patch bytes) written at offset `at`. Returns the malloc'ed path. */
static char *lib_copy(const char *dir, const char *name, long len, long at, const void *patch, size_t n_patch)
{
    FILE *in = fopen(OQ_ORT_LIB, "rb");
    assert_non_null(in);
    char *path = NULL;
    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    char buf[65536];
    long done = 0;
    for (size_t k; (len == 0 || done < len) && (k = fread(buf, 1, sizeof buf, in)) > 0; done += (long)k) {
        if (len && done + (long)k > len) k = (size_t)(len - done);
        assert_int_equal(fwrite(buf, 1, k, out), k);
    }
    if (patch) {
        assert_int_equal(fseek(out, at, SEEK_SET), 0);
        assert_int_equal(fwrite(patch, 1, n_patch, out), n_patch);
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
    return path;
}

static void expect_refused(const char *path, const char *needle)
{
    oq_runtime *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_runtime_load(path, &r, &err), OQ_ERR_NOT_FOUND);
    assert_null(r);
    if (!strstr(err.msg, path) || !strstr(err.msg, needle)) fail_msg("%s: %s", needle, err.msg);
    assert_null(strchr(err.msg, '\n'));
}

/* The loader maps a truncated library's segments as declared and dies with SIGBUS: refused
 * from its program headers before dlopen instead, as a library of another machine is (which
 * the loader calls "No such file or directory"). */
static void test_load_damaged_elf(void **state)
{
    (void)state;
    char *dir = temp_dir("elf");
    char *p = lib_copy(dir, "half.so", 14000000, 0, NULL, 0);
    expect_refused(p, "truncated or damaged: its ELF program headers map 28.");
    free(p);
    p = lib_copy(dir, "onemb.so", 1000000, 0, NULL, 0);
    expect_refused(p, "the file has 1.0 MB");
    free(p);
#if defined(__x86_64__)
    const uint16_t aarch64 = 183; /* e_machine, at byte 18 */
    p = lib_copy(dir, "arm.so", 0, 18, &aarch64, sizeof aarch64);
    expect_refused(p, "ELF for ARM aarch64, this process is x86-64");
    free(p);
#endif
    const uint8_t class32 = 1;
    p = lib_copy(dir, "elf32.so", 0, 4, &class32, 1);
    expect_refused(p, "wrong ELF class");
    free(p);
    remove_dir(dir);
}

/* ---- sessions ----------------------------------------------------------------- */

static oq_tensor *f32(const char *name, int32_t ndim, const int64_t *shape, const float *vals)
{
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, ndim, shape, name, NULL), OQ_OK);
    memcpy(t->data, vals, oq_tensor_nbytes(t));
    return t;
}

static oq_session *add_session(void)
{
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_add_f32(&bytes, &len, NULL), OQ_OK);
    oq_session *s = NULL;
    oq_err err = {0};
    oq_status st = oq_session_create(rt, NULL, bytes, len, NULL, &s, &err);
    free(bytes);
    if (st) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(st, OQ_OK);
    return s;
}

static void test_session_add_numbers(void **state)
{
    (void)state;
    oq_session *s = add_session();
    assert_int_equal(oq_session_input_count(s), 2);
    assert_string_equal(oq_session_input_name(s, 0), "a");
    assert_string_equal(oq_session_input_name(s, 1), "b");
    assert_int_equal(oq_session_output_count(s), 1);
    assert_string_equal(oq_session_output_name(s, 0), "y");
    assert_int_equal(oq_session_input_dtype(s, 0), OQ_DTYPE_FLOAT32);
    assert_int_equal(oq_session_input_rank(s, 0), 2);
    assert_string_equal(oq_session_ep(s), "CPUExecutionProvider");

    const int64_t shape[2] = {2, 3};
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, -2, 10, 0, 1e3f, -6};
    /* Given in the other order: matching is by name. */
    oq_tensor *in[2] = {f32("b", 2, shape, b), f32("a", 2, shape, a)};
    size_t n_out = 0;
    oq_tensor **out = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_run(s, 2, in, &n_out, &out, &err), OQ_OK);
    assert_int_equal(n_out, 1);
    assert_string_equal(out[0]->name, "y");
    assert_int_equal(out[0]->dtype, OQ_DTYPE_FLOAT32);
    assert_int_equal(out[0]->ndim, 2);
    assert_int_equal(out[0]->shape[0], 2);
    assert_int_equal(out[0]->shape[1], 3);
    const float *y = out[0]->data;
    for (int i = 0; i < 6; i++) assert_float_equal(y[i], a[i] + b[i], 0);
    oq_tensors_free(out, n_out);
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    oq_session_free(s);
}

/* An input declared with no shape (older exporters: legal ONNX, any rank) is rank -1, and a
 * rank-3 tensor runs; ORT reports 0 dimensions for it as for a scalar, which refused every
 * tensor but a scalar ("the model wants rank 0"). */
static void test_session_undeclared_shape(void **state)
{
    (void)state;
    oq_opset ops[] = {{"", 18}};
    oq_graph *g = NULL;
    oq_err err = {0};
    assert_int_equal(oq_graph_create(ops, 1, "noshape", &g, &err), OQ_OK);
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, -1, NULL);
    const char *y = oq_graph_op(g, "Relu", 1, (const char *[]){"x"}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, -1, NULL);
    uint8_t *bytes = NULL;
    size_t len = 0;
    oq_status st = oq_graph_serialize(g, &bytes, &len, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(st, OQ_OK);
    oq_graph_free(g);
    oq_session *s = NULL;
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, NULL, &s, &err), OQ_OK);
    free(bytes);
    assert_int_equal(oq_session_input_rank(s, 0), -1);
    const int64_t shape[3] = {1, 2, 2};
    const float v[4] = {-1, 2, -3, 4};
    oq_tensor *in[1] = {f32("x", 3, shape, v)};
    size_t n_out = 0;
    oq_tensor **out = NULL;
    st = oq_session_run(s, 1, in, &n_out, &out, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(st, OQ_OK);
    assert_int_equal(out[0]->ndim, 3);
    assert_float_equal(((const float *)out[0]->data)[3], 4, 0);
    oq_tensors_free(out, n_out);
    oq_tensor_free(in[0]);
    oq_session_free(s);
}

static void test_session_from_file_and_options(void **state)
{
    (void)state;
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_add_f32(&bytes, &len, NULL), OQ_OK);
    char dir[] = "/tmp/oq_rt_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64], prefix[64];
    snprintf(path, sizeof path, "%s/add.onnx", dir);
    snprintf(prefix, sizeof prefix, "%s/prof", dir);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, len, fp), len);
    fclose(fp);
    free(bytes);

    const char *ck[] = {"session.intra_op.allow_spinning"}, *cv[] = {"0"};
    oq_session_opts so = {.ep = "cpu", .intra_op_threads = 1, .graph_opt = OQ_GRAPH_OPT_ALL,
                          .profile_prefix = prefix, .n_session_configs = 1,
                          .session_config_keys = ck, .session_config_values = cv};
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, path, NULL, 0, &so, &s, &err), OQ_OK);
    const int64_t shape[2] = {2, 3};
    const float a[6] = {1, 1, 1, 1, 1, 1};
    oq_tensor *in[2] = {f32("a", 2, shape, a), f32("b", 2, shape, a)};
    size_t n_out = 0;
    oq_tensor **out = NULL;
    assert_int_equal(oq_session_run(s, 2, in, &n_out, &out, &err), OQ_OK);
    assert_float_equal(((float *)out[0]->data)[5], 2.0f, 0);
    oq_tensors_free(out, n_out);
    char *prof = oq_session_end_profiling(s);
    assert_non_null(prof);
    assert_int_equal(access(prof, R_OK), 0);
    assert_null(oq_session_end_profiling(s)); /* once only */
    unlink(prof);
    free(prof);
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    oq_session_free(s);
    unlink(path);
    rmdir(dir);
}

/* Inter-op threads (ORT's parallel execution mode) run the same model to the same
 * result; a negative count is refused before ORT sees it. */
static void test_inter_op_threads(void **state)
{
    (void)state;
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_add_f32(&bytes, &len, NULL), OQ_OK);
    oq_session_opts so = {.intra_op_threads = 1, .inter_op_threads = 2};
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_OK);
    const int64_t shape[2] = {2, 3};
    const float a[6] = {1, 2, 3, 4, 5, 6};
    oq_tensor *in[2] = {f32("a", 2, shape, a), f32("b", 2, shape, a)};
    size_t n_out = 0;
    oq_tensor **out = NULL;
    assert_int_equal(oq_session_run(s, 2, in, &n_out, &out, &err), OQ_OK);
    assert_float_equal(((float *)out[0]->data)[5], 12.0f, 0);
    oq_tensors_free(out, n_out);
    oq_session_free(s);
    so.inter_op_threads = -1;
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "inter-op threads -1"));
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    free(bytes);
}

/* Identity keeps every byte, so each supported dtype round-trips exactly. */
static void roundtrip(oq_dtype dt)
{
    static const int64_t shape[1] = {5};
    const int64_t *shapes[1] = {shape};
    const int ndims[1] = {1};
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_build("Identity", dt, dt, 1, ndims, shapes, &bytes, &len, NULL), OQ_OK);
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, NULL, &s, &err), OQ_OK);
    free(bytes);
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, dt, 1, shape, "a", NULL), OQ_OK);
    const double vals[5] = {1, 0, -2.5, 3, 1};
    for (int i = 0; i < 5; i++)
        oq_tensor_set_f64(t, i, dt == OQ_DTYPE_BOOL ? (vals[i] != 0) : vals[i]);
    size_t n_out = 0;
    oq_tensor **out = NULL;
    assert_int_equal(oq_session_run(s, 1, &t, &n_out, &out, &err), OQ_OK);
    assert_int_equal(out[0]->dtype, dt);
    assert_int_equal(oq_tensor_nbytes(out[0]), oq_tensor_nbytes(t));
    assert_memory_equal(out[0]->data, t->data, oq_tensor_nbytes(t));
    oq_tensors_free(out, n_out);
    oq_tensor_free(t);
    oq_session_free(s);
}

static void test_session_dtypes(void **state)
{
    (void)state;
    const oq_dtype all[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16, OQ_DTYPE_FLOAT64,
                            OQ_DTYPE_INT64,   OQ_DTYPE_INT32,   OQ_DTYPE_BOOL};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) roundtrip(all[i]);
}

static oq_status run_expect(oq_session *s, size_t n, oq_tensor **in, oq_err *err)
{
    size_t n_out = 99;
    oq_tensor **out = (oq_tensor **)1;
    oq_status st = oq_session_run(s, n, in, &n_out, &out, err);
    if (st) {
        assert_int_equal(n_out, 0);
        assert_null(out);
    } else {
        oq_tensors_free(out, n_out);
    }
    return st;
}

static void test_session_input_errors(void **state)
{
    (void)state;
    oq_session *s = add_session();
    const int64_t shape[2] = {2, 3}, bad[2] = {3, 2}, flat[1] = {6};
    const float v[6] = {0};
    oq_tensor *a = f32("a", 2, shape, v), *b = f32("b", 2, shape, v);
    oq_tensor *wrong = f32("bogus_in", 2, shape, v), *rank1 = f32("b", 1, flat, v);
    oq_tensor *badshape = f32("b", 2, bad, v), *unnamed = f32(NULL, 2, shape, v);
    oq_tensor *b64 = NULL;
    assert_int_equal(oq_tensor_convert(b, OQ_DTYPE_FLOAT64, &b64, NULL), OQ_OK);
    oq_err err = {0};

    oq_tensor *in1[2] = {a, wrong};
    assert_int_equal(run_expect(s, 2, in1, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "bogus_in"));

    oq_tensor *in2[2] = {a, b64};
    assert_int_equal(run_expect(s, 2, in2, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "'b'"));
    assert_non_null(strstr(err.msg, "float64"));

    oq_tensor *in3[2] = {a, rank1};
    assert_int_equal(run_expect(s, 2, in3, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "rank 1"));

    oq_tensor *in4[1] = {a};
    assert_int_equal(run_expect(s, 1, in4, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "'b' missing"));

    oq_tensor *in5[2] = {a, a};
    assert_int_equal(run_expect(s, 2, in5, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "twice"));

    oq_tensor *in6[2] = {a, badshape};
    assert_int_equal(run_expect(s, 2, in6, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "axis 0"));

    oq_tensor *in7[2] = {a, unnamed};
    assert_int_equal(run_expect(s, 2, in7, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "no name"));

    /* a NULL entry is the caller's mistake (status.h), not a shape */
    oq_tensor *in8[2] = {a, NULL};
    assert_int_equal(run_expect(s, 2, in8, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "input tensor 1 is NULL");

    oq_tensor *ts[] = {a, b, wrong, rank1, badshape, unnamed, b64};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) oq_tensor_free(ts[i]);
    oq_session_free(s);
}

static void test_session_ort_error_is_runtime(void **state)
{
    (void)state;
    /* Symbolic shapes pass ortqual's checks; ORT itself refuses to broadcast 2 with 3. */
    static const int64_t sym[1] = {-1};
    const int64_t *shapes[2] = {sym, sym};
    const int ndims[2] = {1, 1};
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_build("Add", OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT32, 2, ndims, shapes,
                                        &bytes, &len, NULL), OQ_OK);
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, NULL, &s, &err), OQ_OK);
    free(bytes);
    const int64_t two[1] = {2}, three[1] = {3};
    const float v[3] = {1, 2, 3};
    oq_tensor *in[2] = {f32("a", 1, two, v), f32("b", 1, three, v)};
    assert_int_equal(run_expect(s, 2, in, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "Run:"));
    assert_null(strchr(err.msg, '\n'));
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    oq_session_free(s);
}

static void test_session_create_errors(void **state)
{
    (void)state;
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, "/nonexistent/model.onnx", NULL, 0, NULL, &s, &err),
                     OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "/nonexistent/model.onnx"));
    assert_int_equal(oq_session_create(rt, NULL, NULL, 0, NULL, &s, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_session_create(rt, "x.onnx", "x", 1, NULL, &s, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "x.onnx")); /* the bytes are the model; the path names them */
    assert_int_equal(oq_session_create(rt, NULL, "not a model", 11, NULL, &s, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "in-memory model"));
    oq_session_opts bad_level = {.graph_opt = (oq_graph_opt)7};
    assert_int_equal(oq_session_create(rt, NULL, "x", 1, &bad_level, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "level 7"));
    assert_null(s);
}

/* A session config key given twice: ORT keeps the last value without a word, so the session
 * would run one of the two values asked for. Refused naming both (it was made, with the last). */
static void test_session_config_key_twice(void **state)
{
    (void)state;
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_add_f32(&bytes, &len, NULL), OQ_OK);
    const char *k[] = {"session.intra_op.allow_spinning", "session.log_id", "session.intra_op.allow_spinning"};
    const char *v[] = {"0", "x", "1"};
    oq_session_opts so = {.n_session_configs = 3, .session_config_keys = k, .session_config_values = v};
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_session_create: opts->session_config_keys[0] and [2] are both "
                                 "'session.intra_op.allow_spinning' (values '0' and '1'): ORT would keep the last "
                                 "without a word; give each key once");
    assert_null(s);
    so.n_session_configs = 2; /* each key once */
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_OK);
    oq_session_free(s);
    free(bytes);
}

/* A model's bytes with the path they were read from: the session is made of the bytes, not of
 * what the file holds by then, and ORT finds their external-data file in the path's folder
 * (without the path it looks in the current folder, and does not find it). */
static void test_session_bytes_of_a_path(void **state)
{
    (void)state;
    char *dir = temp_dir("bytes_path"), model[512], data[512];
    snprintf(model, sizeof model, "%s/llama_like_op18.onnx", dir);
    snprintf(data, sizeof data, "%s/llama_like_op18.onnx.data", dir);
    unsigned char *bytes = NULL, *ext = NULL;
    size_t n = 0, n_ext = 0;
    oq_err err = {0};
    assert_int_equal(oq_read_file(OQ_SOURCE_DIR "/tests/fixtures/external/llama_like_op18.onnx", &bytes, &n, &err), OQ_OK);
    assert_int_equal(oq_read_file(OQ_SOURCE_DIR "/tests/fixtures/external/llama_like_op18.onnx.data", &ext, &n_ext, &err),
                     OQ_OK);
    assert_int_equal(oq_write_file_atomic(data, ext, n_ext, 1, &err), OQ_OK);
    assert_int_equal(oq_write_file_atomic(model, "not a model", 11, 1, &err), OQ_OK); /* replaced since it was read */
    oq_session *s = NULL;
    assert_int_equal(oq_session_create(rt, model, bytes, n, NULL, &s, &err), OQ_OK);
    assert_int_equal(oq_session_input_count(s), 2);
    oq_session_free(s);
    assert_int_not_equal(oq_session_create(rt, NULL, bytes, n, NULL, &s, &err), OQ_OK);
    assert_null(s);
    free(bytes);
    free(ext);
    remove_dir(dir);
}

/* ---- execution providers ------------------------------------------------------ */

static void test_ep_unknown_option_rejected(void **state)
{
    (void)state;
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_add_f32(&bytes, &len, NULL), OQ_OK);
    const char *k[] = {"bogus_key"}, *v[] = {"1"};
    oq_session_opts so = {.ep = "cuda", .n_ep_options = 1, .ep_option_keys = k,
                          .ep_option_values = v};
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "bogus_key"));
    assert_non_null(strstr(err.msg, "sdpa_kernel")); /* the known keys are listed */
    so.ep = "cpu";
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "bogus_key"));
    free(bytes);
}

static void expect_option(const char *key, const char *val, oq_status want, const char *needle)
{
    oq_err err = {0};
    const char *k[] = {key}, *v[] = {val};
    assert_int_equal(oq_ep_options_validate("cuda", 1, k, v, &err), want);
    if (needle) assert_non_null(strstr(err.msg, needle));
}

static void test_ep_option_values(void **state)
{
    (void)state;
    expect_option("sdpa_kernel", "16", OQ_OK, NULL);
    expect_option("sdpa_kernel", "0", OQ_OK, NULL);
    expect_option("sdpa_kernel", "255", OQ_OK, NULL);
    expect_option("sdpa_kernel", "256", OQ_ERR_INVALID_ARG, "sdpa_kernel=256");
    expect_option("sdpa_kernel", "0x10", OQ_ERR_INVALID_ARG, "0..255");
    expect_option("device_id", "1", OQ_OK, NULL);
    expect_option("device_id", "-1", OQ_ERR_INVALID_ARG, "device_id=-1");
    expect_option("enable_cuda_graph", "2", OQ_ERR_INVALID_ARG, "0 or 1");
    expect_option("cudnn_conv_algo_search", "HEURISTIC", OQ_OK, NULL);
    expect_option("cudnn_conv_algo_search", "FAST", OQ_ERR_INVALID_ARG, "EXHAUSTIVE|HEURISTIC|DEFAULT");
    expect_option("gpu_mem_limit", "", OQ_ERR_INVALID_ARG, "gpu_mem_limit");
    /* Other plugin EPs are passed through. */
    const char *k[] = {"anything"}, *v[] = {"goes"};
    assert_int_equal(oq_ep_options_validate("MyPluginEP", 1, k, v, NULL), OQ_OK);
    const char *k2[] = {"use_tf32", "use_tf32"}, *v2[] = {"0", "1"};
    oq_err err = {0};
    assert_int_equal(oq_ep_options_validate("cuda", 2, k2, v2, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "twice"));
}

static void test_ep_cuda_unavailable(void **state)
{
    (void)state;
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(oq_tinymodel_add_f32(&bytes, &len, NULL), OQ_OK);
    oq_session_opts so = {.ep = "cuda"};
    oq_session *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "libonnxruntime_providers_cuda.so"));
    assert_non_null(strstr(err.msg, "not compiled"));
    /* asked once without a model (a suite on one EP), the same answer; CPU is always there */
    char msg[sizeof err.msg];
    snprintf(msg, sizeof msg, "%s", err.msg);
    assert_int_equal(oq_session_ep_check(rt, &so, &err), OQ_ERR_NOT_FOUND);
    assert_string_equal(err.msg, msg);
    assert_int_equal(oq_session_ep_check(rt, &(oq_session_opts){.ep = "cpu"}, &err), OQ_OK);
    assert_int_equal(oq_session_ep_check(rt, NULL, &err), OQ_OK);
    so.ep_lib = "/nonexistent/libcuda_ep.so";
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "/nonexistent/libcuda_ep.so"));
    /* A library without the plugin entry points: ORT's refusal, with the path. */
    Dl_info info;
    assert_true(dladdr((void *)(uintptr_t)zlibVersion, &info) && info.dli_fname);
    so.ep = "zeep";
    so.ep_lib = info.dli_fname;
    assert_int_equal(oq_session_create(rt, NULL, bytes, len, &so, &s, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, info.dli_fname));
    assert_null(s);
    free(bytes);
}

static void test_ep_lists(void **state)
{
    (void)state;
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(oq_runtime_providers(rt, &names, &n, NULL), OQ_OK);
    int cpu = 0;
    for (size_t i = 0; i < n; i++) cpu |= !strcmp(names[i], "CPUExecutionProvider");
    assert_true(cpu);
    oq_strv_free(names, n);

    oq_ep_device *devs = NULL;
    assert_int_equal(oq_runtime_ep_devices(rt, &devs, &n, NULL), OQ_OK);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(devs[i].ep_name, "CPUExecutionProvider")) {
            found = 1;
            assert_int_equal(devs[i].hw_type, OQ_HW_CPU);
            assert_string_equal(oq_hw_type_name(devs[i].hw_type), "cpu");
        }
    assert_true(found);
    oq_ep_devices_free(devs, n);

    char *lib = oq_runtime_default_ep_lib(rt, "cuda");
    assert_non_null(strstr(lib, "/libonnxruntime_providers_cuda.so"));
    assert_int_equal(strncmp(lib, oq_runtime_lib_path(rt), (size_t)(strrchr(lib, '/') - lib)), 0);
    free(lib);
    assert_string_equal(oq_ep_full_name("cuda"), "CUDAExecutionProvider");
    assert_string_equal(oq_ep_full_name(NULL), "CPUExecutionProvider");
}

/* ---- device facts ------------------------------------------------------------------ */

/* root/rel with `text` in it, its folders made. */
static void put_file(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = 0;
        assert_true(mkdir(path, 0755) == 0 || access(path, F_OK) == 0);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Each fact alone makes a CUDA device possible; a tree of other devices does not. */
static void test_cuda_device_possible(void **state)
{
    (void)state;
    static const struct {
        const char *rel, *text;
        int possible;
    } cases[] = {
        {NULL, NULL, 0},
        {"dev/null", "", 0},
        {"dev/nvidiactl", "", 0}, /* the driver's control node names no GPU */
        {"dev/nvidia-uvm", "", 0},
        {"sys/bus/pci/devices/0000:00:03.0/vendor", "0x1af4\n", 0},
        {"dev/nvidia0", "", 1},
        {"dev/nvidia7", "", 1},
        {"dev/dxg", "", 1},
        {"dev/nvgpu", "", 1},
        {"dev/nvhost-ctrl-gpu", "", 1},
        {"sys/bus/pci/devices/0000:17:00.0/vendor", "0x10de\n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *root = temp_dir("devroot");
        put_file(root, "dev/tty", ""); /* every tree has other devices */
        put_file(root, "sys/bus/pci/devices/0000:00:00.0/vendor", "0x8086\n");
        if (cases[i].rel) put_file(root, cases[i].rel, cases[i].text);
        if (oq_cuda_device_possible(root) != cases[i].possible)
            fail_msg("%s: expected %d", cases[i].rel ? cases[i].rel : "(no GPU file)", cases[i].possible);
        nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(root);
    }
    char *missing = temp_dir("devroot"); /* no dev/ or sys/ at all: nothing says a GPU is here */
    assert_int_equal(oq_cuda_device_possible(missing), 0);
    rmdir(missing);
    free(missing);
}

static void test_ort_env_capture(void **state)
{
    (void)state;
    unsetenv("ORT_DISABLE_MEMORY_EFFICIENT_ATTENTION");
    setenv("ORT_DISABLE_FLASH_ATTENTION", "1", 1);
    setenv("ORT_ZZ_OQ_TEST", "x", 1);
    oq_kv *kv = NULL;
    size_t n = 0;
    assert_int_equal(oq_ort_env_capture(&kv, &n, NULL), OQ_OK);
    int flash = 0, mea = 0, extra = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(kv[i].key, "ORT_DISABLE_FLASH_ATTENTION")) flash = kv[i].value && !strcmp(kv[i].value, "1");
        if (!strcmp(kv[i].key, "ORT_DISABLE_MEMORY_EFFICIENT_ATTENTION")) mea = kv[i].value == NULL;
        if (!strcmp(kv[i].key, "ORT_ZZ_OQ_TEST")) extra = kv[i].value && !strcmp(kv[i].value, "x");
    }
    assert_true(flash && mea && extra);
    assert_string_equal(kv[0].key, "ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO");
    oq_kvs_free(kv, n);
    unsetenv("ORT_DISABLE_FLASH_ATTENTION");
    unsetenv("ORT_ZZ_OQ_TEST");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_reports_version),
        cmocka_unit_test(test_inter_op_threads),
        cmocka_unit_test(test_load_search_finds_bundled),
        cmocka_unit_test(test_load_env_override_is_exclusive),
        cmocka_unit_test(test_load_missing_path),
        cmocka_unit_test(test_load_foreign_library),
        cmocka_unit_test(test_load_not_a_library),
        cmocka_unit_test(test_load_damaged_elf),
        cmocka_unit_test(test_session_add_numbers),
        cmocka_unit_test(test_session_from_file_and_options),
        cmocka_unit_test(test_session_undeclared_shape),
        cmocka_unit_test(test_session_dtypes),
        cmocka_unit_test(test_session_input_errors),
        cmocka_unit_test(test_session_ort_error_is_runtime),
        cmocka_unit_test(test_session_create_errors),
        cmocka_unit_test(test_session_config_key_twice),
        cmocka_unit_test(test_session_bytes_of_a_path),
        cmocka_unit_test(test_ep_unknown_option_rejected),
        cmocka_unit_test(test_ep_option_values),
        cmocka_unit_test(test_ep_cuda_unavailable),
        cmocka_unit_test(test_ep_lists),
        cmocka_unit_test(test_ort_env_capture),
        cmocka_unit_test(test_cuda_device_possible),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
