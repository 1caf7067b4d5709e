/* numpy interop both ways: files we write load in numpy with the right dtype,
 * shape and values (tests/fixtures/numpy/check_ours.py), and what numpy writes
 * back from them reads here bit for bit equal to what we started from.
 * Needs /usr/bin/python3 with numpy (scripts/deps.sh installs python3-numpy);
 * without it this test fails, saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npz_values.h"
#include "ortqual/npz.h"

#define PYTHON "/usr/bin/python3"
#define CHECKER OQ_SOURCE_DIR "/tests/fixtures/numpy/check_ours.py"

static const oq_dtype DTYPES[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_BFLOAT16, OQ_DTYPE_FLOAT64,
                                  OQ_DTYPE_INT64,   OQ_DTYPE_INT32,   OQ_DTYPE_BOOL,     OQ_DTYPE_UINT8,
                                  OQ_DTYPE_INT8,    OQ_DTYPE_UINT16,  OQ_DTYPE_INT16,    OQ_DTYPE_UINT32,
                                  OQ_DTYPE_UINT64};
static const struct {
    int32_t ndim;
    int64_t shape[3];
    const char *tag;
} SHAPES[] = {{3, {2, 3, 4}, "cube"}, {0, {0}, "scalar"}, {2, {3, 0}, "empty"}, {1, {29}, "vec"}};
#define NDT (sizeof DTYPES / sizeof DTYPES[0])
#define NSH (sizeof SHAPES / sizeof SHAPES[0])
#define NT (NDT * NSH)

static void join(char *out, size_t cap, const char *dir, const char *name)
{
    if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap) fail_msg("path too long");
}

/* Write every tensor as <name>.npy, all of them as stored.npz and compressed.npz,
 * an empty.npz, and spec.txt describing them. */
static void write_ours(const char *dir, oq_tensor **ts)
{
    char path[700];
    join(path, sizeof path, dir, "spec.txt");
    FILE *spec = fopen(path, "w");
    assert_non_null(spec);
    oq_err err = {0};
    for (size_t i = 0; i < NT; i++) {
        fprintf(spec, "%s %s", ts[i]->name, oq_dtype_name(ts[i]->dtype));
        for (int32_t k = 0; k < ts[i]->ndim; k++)
            fprintf(spec, " %lld", (long long)ts[i]->shape[k]);
        fprintf(spec, "\n");
        char file[300];
        snprintf(file, sizeof file, "%s.npy", ts[i]->name);
        join(path, sizeof path, dir, file);
        if (oq_npy_write(path, ts[i], 0, &err)) fail_msg("%s", err.msg);
    }
    assert_int_equal(fclose(spec), 0);
    const char *archives[] = {"stored.npz", "compressed.npz"};
    for (int c = 0; c < 2; c++) {
        join(path, sizeof path, dir, archives[c]);
        if (oq_npz_write(path, NT, (const oq_tensor *const *)ts, c, 0, &err))
            fail_msg("%s", err.msg);
    }
    join(path, sizeof path, dir, "empty.npz");
    if (oq_npz_write(path, 0, NULL, 0, 0, &err)) fail_msg("%s", err.msg);
}

static void compare_numpy_written(const char *dir, oq_tensor **ts)
{
    char path[700];
    oq_err err = {0};
    for (size_t i = 0; i < NT; i++) {
        char file[300];
        snprintf(file, sizeof file, "back_%s.npy", ts[i]->name);
        join(path, sizeof path, dir, file);
        oq_tensor *t = NULL;
        if (oq_npy_read(path, &t, &err)) fail_msg("%s", err.msg);
        if (!npz_same(ts[i], t)) fail_msg("%s differs from what we wrote", path);
        oq_tensor_free(t);
    }
    const char *archives[] = {"back_stored.npz", "back_compressed.npz"};
    for (int c = 0; c < 2; c++) {
        join(path, sizeof path, dir, archives[c]);
        oq_npz *z = NULL;
        if (oq_npz_read(path, &z, &err)) fail_msg("%s", err.msg);
        assert_int_equal(z->count, NT);
        for (size_t i = 0; i < NT; i++)
            if (!npz_same(ts[i], oq_npz_get(z, ts[i]->name)))
                fail_msg("%s: member %s differs from what we wrote", path, ts[i]->name);
        oq_npz_free(z);
    }
}

static void test_numpy_loads_ours_and_we_load_numpys(void **state)
{
    (void)state;
    if (system(PYTHON " -c 'import numpy' 2>/dev/null") != 0)
        fail_msg(PYTHON " cannot import numpy: install python3-numpy (scripts/deps.sh does)");
    char dir[512];
    snprintf(dir, sizeof dir, OQ_BINARY_DIR "/tests/tmp-npz-numpy-XXXXXX");
    assert_non_null(mkdtemp(dir));
    oq_tensor *ts[NT];
    size_t n = 0;
    for (size_t d = 0; d < NDT; d++)
        for (size_t s = 0; s < NSH; s++) {
            char name[64];
            snprintf(name, sizeof name, "%s_%s", oq_dtype_name(DTYPES[d]), SHAPES[s].tag);
            assert_non_null(ts[n++] = npz_make(DTYPES[d], SHAPES[s].ndim, SHAPES[s].shape, name));
        }
    write_ours(dir, ts);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, PYTHON " '%s' '%s'", CHECKER, dir);
    if (system(cmd) != 0) fail_msg("numpy rejected our files (see above); kept in %s", dir);
    compare_numpy_written(dir, ts);
    for (size_t i = 0; i < NT; i++) oq_tensor_free(ts[i]);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numpy_loads_ours_and_we_load_numpys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
