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
#include "ortqual/reference.h"
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

/* What an Attention test gives its node besides Q, K, V [1,2,Lq,4] / [1,2,5,4]. */
enum attn_form { ATTN_PLAIN, ATTN_NONPAD, ATTN_SHORT_MASK };

static oq_tensor *filled(const char *name, oq_dtype dt, int32_t nd, const int64_t *shape, double phase)
{
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, dt, nd, shape, name, NULL), OQ_OK);
    for (int64_t i = 0; i < oq_tensor_numel(t); i++)
        oq_tensor_set_f64(t, i, dt == OQ_DTYPE_BOOL ? (i % 4 != 3) : dt == OQ_DTYPE_INT64 ? 4 : sin(0.37 * (double)i + phase));
    return t;
}

/* A backend test of one Attention node at ai.onnx `opset` in `form` (nonpad_kv_seqlen 4 of 5
 * keys; a bool mask [3,4] for 5 keys), its expected Y the reference's at opset 24, where both
 * forms exist. Returns the test directory. */
static char *write_attention_test(const char *root, const char *name, int64_t opset, enum attn_form form)
{
    char *dir = malloc(512), path[600];
    snprintf(dir, 512, "%s/%s", root, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    const int64_t qs[4] = {1, 2, 3, 4}, ks[4] = {1, 2, 5, 4}, ms[2] = {3, 4}, ns[1] = {1};
    oq_tensor *in[4] = {filled("q", OQ_DTYPE_FLOAT32, 4, qs, 0.0), filled("k", OQ_DTYPE_FLOAT32, 4, ks, 1.0),
                        filled("v", OQ_DTYPE_FLOAT32, 4, ks, 2.0), NULL};
    if (form == ATTN_NONPAD) in[3] = filled("n", OQ_DTYPE_INT64, 1, ns, 0.0);
    if (form == ATTN_SHORT_MASK) in[3] = filled("m", OQ_DTYPE_BOOL, 2, ms, 0.0);
    oq_opset ops[] = {{"", opset}};
    oq_graph *g;
    oq_err err = {0};
    assert_int_equal(oq_graph_create(ops, 1, "attn", &g, &err), OQ_OK);
    const oq_dim dq[] = {OQ_DIM(1), OQ_DIM(2), OQ_DIM(3), OQ_DIM(4)}, dk[] = {OQ_DIM(1), OQ_DIM(2), OQ_DIM(5), OQ_DIM(4)};
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, 4, dq);
    oq_graph_add_input(g, "k", OQ_DTYPE_FLOAT32, 4, dk);
    oq_graph_add_input(g, "v", OQ_DTYPE_FLOAT32, 4, dk);
    if (in[3]) {
        oq_dim d3[2];
        for (int i = 0; i < in[3]->ndim; i++) d3[i] = OQ_DIM(in[3]->shape[i]);
        oq_graph_add_input(g, in[3]->name, in[3]->dtype, in[3]->ndim, d3);
    }
    const char *names[7] = {"q", "k", "v", "", "", "", ""}, *out[] = {"y"};
    if (in[3]) names[form == ATTN_NONPAD ? 6 : 3] = in[3]->name;
    oq_graph_add_node(g, "Attention", NULL, "attn0", form == ATTN_NONPAD ? 7 : in[3] ? 4 : 3, names, 1, out, 0, NULL);
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 4, dq);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (oq_graph_write(g, path, 0, &err)) fail_msg("%s", err.msg);
    oq_graph_free(g);

    oq_ref_attention_attrs a;
    oq_ref_attention_attrs_default(&a);
    oq_ref_attention_inputs ri = {.q = in[0], .k = in[1], .v = in[2]};
    if (form == ATTN_NONPAD) ri.nonpad_kv_seqlen = in[3];
    if (form == ATTN_SHORT_MASK) ri.attn_mask = in[3];
    oq_ref_attention_outputs ro = {0};
    if (oq_ref_attention(&a, &ri, 1, &ro, &err)) fail_msg("%s", err.msg);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    for (int i = 0; i < 4 && in[i]; i++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, i);
        assert_int_equal(oq_tensorproto_write(path, in[i], 0, &err), OQ_OK);
        oq_tensor_free(in[i]);
    }
    snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
    assert_int_equal(oq_tensorproto_write(path, ro.y, 0, &err), OQ_OK);
    oq_ref_attention_outputs_clear(&ro);
    return dir;
}

static oq_conformance_result run_on_reference(const char *dir)
{
    oq_conformance_opts o;
    oq_conformance_opts_default(&o);
    oq_conformance_result r;
    assert_int_equal(oq_conformance_run_test(dir, &o, &r, NULL), OQ_OK);
    return r;
}

/* The reference judges the node by the model's opset, as ONNX Runtime does: Attention at
 * opset 22 (no such operator) and Attention-24's nonpad_kv_seqlen and short mask at opset 23
 * are invalid models that both FAIL (they passed on the reference, computed as Attention-24);
 * the same node and data at opset 24 pass on the reference. */
static void test_reference_reads_opset(void **state)
{
    (void)state;
    char *root = temp_dir("conf_opset");
    struct {
        const char *name;
        int64_t opset;
        enum attn_form form;
        const char *why;
    } cases[] = {
        {"op22", 22, ATTN_PLAIN, "invalid model: ai.onnx opset 22 has no Attention operator"},
        {"op23_nonpad", 23, ATTN_NONPAD, "invalid model: Attention-23 has no input nonpad_kv_seqlen"},
        {"op23_short", 23, ATTN_SHORT_MASK, "invalid model: Attention-23 attn_mask last axis is 4, shorter than the "
                                            "total kv length 5"},
        {"op24_nonpad", 24, ATTN_NONPAD, NULL},
        {"op24_short", 24, ATTN_SHORT_MASK, NULL},
        {"op23", 23, ATTN_PLAIN, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *dir = write_attention_test(root, cases[i].name, cases[i].opset, cases[i].form);
        oq_conformance_result r = run_on_reference(dir);
        if (!cases[i].why) {
            if (r.verdict != OQ_CONFORMANCE_PASS) fail_msg("%s: %s", cases[i].name, r.detail);
        } else {
            assert_int_equal(r.verdict, OQ_CONFORMANCE_FAIL);
            if (!strstr(r.detail, cases[i].why)) fail_msg("%s: '%s' lacks '%s'", cases[i].name, r.detail, cases[i].why);
            /* ONNX Runtime refuses the same models */
            assert_int_not_equal(run_on_ort(dir).verdict, OQ_CONFORMANCE_PASS);
        }
        remove_test(dir);
    }
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
        cmocka_unit_test(test_reference_reads_opset),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
