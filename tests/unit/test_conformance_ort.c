/* The conformance runner on ONNX Runtime: a model ORT has no kernel for is
 * UNSUPPORTED with ORT's reason, not a FAIL; the same model in a type ORT does
 * implement passes, and a wrong expected output still fails. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#define TESTUTIL_RUNTIME_FIXTURE
#include "ortqual/conformance.h"
#include "ortqual/graph.h"
#include "ortqual/tensorproto.h"
#include "testutil.h"

/* A backend-test directory for y = Elu(x) in `dtype`; `bias` is added to the
 * expected output so a test can be made to fail. Returns the test directory. */
static char *write_elu_test(const char *root, const char *name, oq_dtype dtype, double bias)
{
    char *dir = malloc(512), path[600];
    snprintf(dir, 512, "%s/%s", root, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    oq_err err = {0};
    oq_opset ops[] = {{"", 22}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "elu", &g, &err), OQ_OK);
    oq_dim d[] = {OQ_DIM(4)};
    oq_graph_add_input(g, "x", dtype, 1, d);
    const char *y = oq_graph_op(g, "Elu", 1, (const char *[]){"x"}, 0, NULL);
    oq_graph_add_output(g, y, "y", dtype, 1, d);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (oq_graph_write(g, path, 0, &err)) fail_msg("%s", err.msg);
    oq_graph_free(g);

    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    const double xs[4] = {-2.0, -0.5, 0.0, 1.5};
    int64_t shape[1] = {4};
    oq_tensor *x, *ye;
    assert_int_equal(oq_tensor_create(&x, dtype, 1, shape, "x", &err), OQ_OK);
    assert_int_equal(oq_tensor_create(&ye, dtype, 1, shape, "y", &err), OQ_OK);
    for (int i = 0; i < 4; i++) {
        double e = xs[i] < 0 ? expm1(xs[i]) : xs[i];
        if (dtype == OQ_DTYPE_FLOAT64) {
            ((double *)x->data)[i] = xs[i];
            ((double *)ye->data)[i] = e + bias;
        } else {
            ((float *)x->data)[i] = (float)xs[i];
            ((float *)ye->data)[i] = (float)(e + bias);
        }
    }
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
    assert_int_equal(oq_tensorproto_write(path, x, 0, &err), OQ_OK);
    snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
    assert_int_equal(oq_tensorproto_write(path, ye, 0, &err), OQ_OK);
    oq_tensor_free(x);
    oq_tensor_free(ye);
    return dir;
}

static void remove_test(char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    remove_dir(strdup(path));
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    unlink(path);
    rmdir(dir);
    free(dir);
}

static oq_conformance_result run_on_ort(const char *dir)
{
    oq_conformance_opts o;
    oq_conformance_opts_default(&o);
    oq_session_opts so = {0};
    oq_conformance_ort ort = {rt, &so};
    o.runner = oq_conformance_ort_runner;
    o.runner_ctx = &ort;
    oq_conformance_result r;
    oq_err err = {0};
    assert_int_equal(oq_conformance_run_test(dir, &o, &r, &err), OQ_OK);
    return r;
}

static void test_no_kernel_is_unsupported(void **state)
{
    (void)state;
    char *root = temp_dir("conf_ort");
    char *f64 = write_elu_test(root, "elu_f64", OQ_DTYPE_FLOAT64, 0.0); /* CPU Elu: float only */
    char *f32 = write_elu_test(root, "elu_f32", OQ_DTYPE_FLOAT32, 0.0);
    char *bad = write_elu_test(root, "elu_f32_wrong", OQ_DTYPE_FLOAT32, 0.25);
    oq_conformance_result r = run_on_ort(f64);
    assert_int_equal(r.verdict, OQ_CONFORMANCE_UNSUPPORTED);
    assert_non_null(strstr(r.detail, "Could not find an implementation for Elu"));
    r = run_on_ort(f32);
    assert_int_equal(r.verdict, OQ_CONFORMANCE_PASS);
    r = run_on_ort(bad); /* a runtime error is not the only way out: values still fail */
    assert_int_equal(r.verdict, OQ_CONFORMANCE_FAIL);
    assert_int_equal(r.output, 0);
    remove_test(f64);
    remove_test(f32);
    remove_test(bad);
    remove_dir(root);
}

/* Runs `ortqual conformance --ep cpu ARGS` and returns its stdout; *rc its exit status. */
static char *run_cli(const char *args, int *rc)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/ortqual' conformance --ep cpu --ort-lib '%s' %s 2>&1", OQ_BINARY_DIR,
             OQ_ORT_LIB, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *out = calloc(1, 1 << 16);
    size_t n = fread(out, 1, (1 << 16) - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

/* The command line: an UNSUPPORTED line with ORT's reason, the closing line
 * counting it among the skipped, exit 0; --strict makes it exit 1; --json. */
static void test_cli_reports_unsupported(void **state)
{
    (void)state;
    char *root = temp_dir("conf_cli");
    char *f64 = write_elu_test(root, "elu_f64", OQ_DTYPE_FLOAT64, 0.0);
    char *f32 = write_elu_test(root, "elu_f32", OQ_DTYPE_FLOAT32, 0.0);
    char args[1200];
    int rc;
    snprintf(args, sizeof args, "'%s'", root);
    char *out = run_cli(args, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "UNSUPPORTED elu_f64: "));
    assert_non_null(strstr(out, "Could not find an implementation for Elu"));
    assert_non_null(strstr(out, "PASS elu_f32\n"));
    assert_non_null(strstr(out, "\n1 passed, 0 failed, 1 skipped (1 unsupported)\n"));
    free(out);
    snprintf(args, sizeof args, "--strict '%s'", root);
    out = run_cli(args, &rc);
    assert_int_equal(rc, 1);
    free(out);
    snprintf(args, sizeof args, "--json '%s'", root);
    out = run_cli(args, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\"verdict\": \"UNSUPPORTED\""));
    assert_non_null(strstr(out, "\"unsupported\": 1"));
    free(out);
    remove_test(f64);
    remove_test(f32);
    remove_dir(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_kernel_is_unsupported),
        cmocka_unit_test(test_cli_reports_unsupported),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
