/* Indices a model input gives a GatherElements or GatherND over an initializer are checked
 * before anything runs, as a Gather's token ids are: one outside -size..size-1 of the axis it
 * indexes is an input error naming the file, the input, the element, the value and the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/graph.h"
#include "ortqual/npz.h"
#include "ortqual/validate.h"
#define TESTUTIL_GRAPH
#define TESTUTIL_CHECK_BATCH
#include "testutil.h"

/* sel [2,3] -> GatherElements 'ge' (axis -1) over [2,5]; pairs [2,2] -> GatherND 'nd' over [3,4]
 * (tuples of both axes); rows [3,1] -> GatherND 'nd_b' over [3,4] with batch_dims 1 (axis 1);
 * cols [2,2] -> Transpose -> GatherND 'nd_t' over [3,4]: its tuples lie along its first axis. */
static void write_model(const char *path)
{
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "gather_indices", &g, NULL), OQ_OK);
    const oq_dim d23[] = {OQ_DIM(2), OQ_DIM(3)}, d22[] = {OQ_DIM(2), OQ_DIM(2)}, d31[] = {OQ_DIM(3), OQ_DIM(1)};
    const oq_dim d2[] = {OQ_DIM(2)}, d3[] = {OQ_DIM(3)};
    oq_graph_add_input(g, "sel", OQ_DTYPE_INT64, 2, d23);
    oq_graph_add_input(g, "pairs", OQ_DTYPE_INT64, 2, d22);
    oq_graph_add_input(g, "rows", OQ_DTYPE_INT64, 2, d31);
    oq_graph_add_input(g, "cols", OQ_DTYPE_INT64, 2, d22);
    const char *e = zeros_initializer(g, "E", 2, 5), *p = zeros_initializer(g, "P", 3, 4),
               *r = zeros_initializer(g, "R", 3, 4);
    const oq_attr last = OQ_ATTR_I("axis", -1), b1 = OQ_ATTR_I("batch_dims", 1);
    const char *out[] = {"picked", "cells", "per_row", "transposed"};
    assert_int_equal(oq_graph_add_node(g, "GatherElements", NULL, "ge", 2, (const char *[]){e, "sel"}, 1, &out[0], 1,
                                       &last), OQ_OK);
    assert_int_equal(oq_graph_add_node(g, "GatherND", NULL, "nd", 2, (const char *[]){p, "pairs"}, 1, &out[1], 0,
                                       NULL), OQ_OK);
    assert_int_equal(oq_graph_add_node(g, "GatherND", NULL, "nd_b", 2, (const char *[]){r, "rows"}, 1, &out[2], 1,
                                       &b1), OQ_OK);
    const char *cols_t = oq_graph_op(g, "Transpose", 1, (const char *[]){"cols"}, 0, NULL);
    assert_int_equal(oq_graph_add_node(g, "GatherND", NULL, "nd_t", 2, (const char *[]){p, cols_t}, 1, &out[3], 0,
                                       NULL), OQ_OK);
    oq_graph_add_output(g, out[0], out[0], OQ_DTYPE_FLOAT32, 2, d23);
    oq_graph_add_output(g, out[1], out[1], OQ_DTYPE_FLOAT32, 1, d2);
    oq_graph_add_output(g, out[2], out[2], OQ_DTYPE_FLOAT32, 1, d3);
    oq_graph_add_output(g, out[3], out[3], OQ_DTYPE_FLOAT32, 1, d2);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* The indices, each in range at the bound's edges (negative ones as ONNX allows), except element
 * `bad` of input `which` (NULL: none) set to `v`. */
static void write_batch(const char *path, const char *which, int64_t bad, int64_t v)
{
    const int64_t s23[] = {2, 3}, s22[] = {2, 2}, s31[] = {3, 1};
    /* cols read as tuples along its last axis would put 3 at a row position */
    const int64_t sel[] = {0, 4, -5, 1, 2, 3}, pairs[] = {2, 3, -3, -4}, rows[] = {3, -4, 0}, cols[] = {0, 1, 3, 3};
    const struct {
        const char *name;
        int32_t nd;
        const int64_t *shape, *vals;
    } in[] = {{"sel", 2, s23, sel}, {"pairs", 2, s22, pairs}, {"rows", 2, s31, rows}, {"cols", 2, s22, cols}};
    oq_tensor *t[4];
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(oq_tensor_create(&t[i], OQ_DTYPE_INT64, in[i].nd, in[i].shape, in[i].name, NULL), OQ_OK);
        memcpy(t[i]->data, in[i].vals, (size_t)oq_tensor_numel(t[i]) * sizeof(int64_t));
        if (which && !strcmp(which, in[i].name)) ((int64_t *)t[i]->data)[bad] = v;
    }
    assert_int_equal(oq_npz_write(path, 4, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (size_t i = 0; i < 4; i++) oq_tensor_free(t[i]);
}

/* oq_validate_check_inputs of the model and one batch with element `bad` of `which` set to `v`:
 * the status, and the message in `msg`. */
static oq_status check(const char *dir, const char *which, int64_t bad, int64_t v, char *msg, size_t cap)
{
    char model[512], batch[512];
    snprintf(model, sizeof model, "%s/gi.onnx", dir);
    snprintf(batch, sizeof batch, "%s/b.npz", dir);
    write_model(model);
    write_batch(batch, which, bad, v);
    return check_batch_file(model, batch, msg, cap);
}

static void in_range_passes(void **state)
{
    (void)state;
    char *dir = temp_dir("gather_idx");
    char msg[1024];
    if (check(dir, NULL, 0, 0, msg, sizeof msg)) fail_msg("refused: %s", msg);
    remove_dir(dir);
}

static void expect_refusal(const char *which, int64_t bad, int64_t v, const char *want)
{
    char *dir = temp_dir("gather_idx");
    char msg[1024];
    oq_status st = check(dir, which, bad, v, msg, sizeof msg);
    expect_batch_refused(st, msg, want);
    remove_dir(dir);
}

static void gather_elements_axis_bound(void **state)
{
    (void)state;
    expect_refusal("sel", 5, 5, "input 'sel' holds 5 at element [1,2]; the model's GatherElements 'ge' indexes axis "
                   "1 of its data, of size 5 (indices -5..4)");
    expect_refusal("sel", 0, -6, "input 'sel' holds -6 at element [0,0]; the model's GatherElements 'ge'");
}

/* a tuple's first position indexes the 3 rows, its second the 4 columns */
static void gather_nd_tuple_bounds(void **state)
{
    (void)state;
    expect_refusal("pairs", 0, 3, "input 'pairs' holds 3 at element [0,0]; the model's GatherND 'nd' indexes axis 0 of "
                   "its data, of size 3 (indices -3..2)");
    expect_refusal("pairs", 3, -5, "input 'pairs' holds -5 at element [1,1]; the model's GatherND 'nd' indexes axis 1 "
                   "of its data, of size 4 (indices -4..3)");
}

/* batch_dims 1: the tuple of one indexes the data's axis 1 */
static void gather_nd_batch_dims(void **state)
{
    (void)state;
    expect_refusal("rows", 1, 4, "input 'rows' holds 4 at element [1,0]; the model's GatherND 'nd_b' indexes axis 1 "
                   "of its data, of size 4 (indices -4..3)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(in_range_passes),
        cmocka_unit_test(gather_elements_axis_bound),
        cmocka_unit_test(gather_nd_tuple_bounds),
        cmocka_unit_test(gather_nd_batch_dims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
