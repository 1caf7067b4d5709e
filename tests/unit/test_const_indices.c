/* Constant indices of a GatherND or GatherElements reached through Reshape, Transpose,
 * Unsqueeze, Squeeze or Cast are folded and held to their data's bounds before anything runs:
 * one outside is a model error naming the node, the indices, the element and the bound; a
 * constant that cannot be folded is said "not checked" by inspect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/graph.h"
#include "ortqual/inspect.h"
#include "ortqual/validate.h"
#define TESTUTIL_GRAPH
#define TESTUTIL_CHECK_MODEL
#include "testutil.h"

enum shape_case {
    ND_TRANSPOSED_OUT, /* Reshape(Transpose([[0,3],[1,2]]), [0,-1]): tuples (0,1) (3,2), 3 past the 3 rows */
    ND_TRANSPOSED_IN,  /* Reshape(Transpose([[0,1],[3,2]]), [-1,2]): (0,3) (1,2); unfolded, (3,2) would be out */
    GE_UNSQUEEZED_OUT, /* Cast(Unsqueeze(Constant [0,4,5])) over [2,5] along axis 1: 5 past its 5 */
    ND_SHAPE_COMPUTED, /* Reshape(the constant, Shape(x)): no constant shape, not folded */
    ND_FED_RESHAPED,   /* Reshape(input 'ids', [2,2]): its tuples moved, checked by ORT alone */
};

/* The indices of the case, built in g. */
static const char *indices(oq_graph *g, enum shape_case c)
{
    const int64_t s22[] = {2, 2}, copy_infer[] = {0, -1}, infer_two[] = {-1, 2}, zero[] = {0};
    const int64_t out[] = {0, 3, 1, 2}, in[] = {0, 1, 3, 2}, ge[] = {0, 4, 5};
    const oq_attr to64 = OQ_ATTR_I("to", OQ_DTYPE_INT64);
    if (c == GE_UNSQUEEZED_OUT) {
        const int64_t s3[] = {3};
        oq_tensor *t;
        assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_INT32, 1, s3, "ge_vals", NULL), OQ_OK);
        for (int i = 0; i < 3; i++) ((int32_t *)t->data)[i] = (int32_t)ge[i];
        const oq_attr value = {.name = "value", .type = OQ_ATTR_TENSOR, .t = t};
        const char *k = oq_graph_op(g, "Constant", 0, NULL, 1, &value);
        oq_tensor_free(t);
        const char *u = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){k, oq_graph_const_i64(g, "ax0", 1, zero)}, 0,
                                    NULL);
        return oq_graph_op(g, "Cast", 1, &u, 1, &to64);
    }
    if (c == ND_FED_RESHAPED) {
        const oq_dim d4[] = {OQ_DIM(4)};
        oq_graph_add_input(g, "ids", OQ_DTYPE_INT64, 1, d4);
        return oq_graph_op(g, "Reshape", 2, (const char *[]){"ids", oq_graph_const_i64(g, "s22", 2, s22)}, 0, NULL);
    }
    const char *init = ints(g, "idx", 2, s22, c == ND_TRANSPOSED_IN ? in : out);
    const char *t = oq_graph_op(g, "Transpose", 1, &init, 0, NULL);
    const char *shape = c == ND_SHAPE_COMPUTED ? oq_graph_op(g, "Shape", 1, (const char *[]){"x"}, 0, NULL)
                        : oq_graph_const_i64(g, "target", 2, c == ND_TRANSPOSED_IN ? infer_two : copy_infer);
    return oq_graph_op(g, "Reshape", 2, (const char *[]){t, shape}, 0, NULL);
}

static void write_model(const char *path, enum shape_case c)
{
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "const_indices", &g, NULL), OQ_OK);
    const oq_dim d22[] = {OQ_DIM(2), OQ_DIM(2)}, d2[] = {OQ_DIM(2)}, d13[] = {OQ_DIM(1), OQ_DIM(3)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 2, d22);
    const char *idx = indices(g, c), *y = "y";
    if (c == GE_UNSQUEEZED_OUT) {
        const oq_attr axis = OQ_ATTR_I("axis", 1);
        const char *data = zeros_initializer(g, "E", 2, 5);
        assert_int_equal(oq_graph_add_node(g, "GatherElements", NULL, "ge", 2, (const char *[]){data, idx}, 1, &y, 1,
                                           &axis), OQ_OK);
        oq_graph_add_output(g, y, y, OQ_DTYPE_FLOAT32, 2, d13);
    } else {
        const char *data = zeros_initializer(g, "P", 3, 4);
        assert_int_equal(oq_graph_add_node(g, "GatherND", NULL, "nd", 2, (const char *[]){data, idx}, 1, &y, 0, NULL),
                         OQ_OK);
        oq_graph_add_output(g, y, y, OQ_DTYPE_FLOAT32, 1, d2);
    }
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* validate's check of the model alone for case c: its status, the message in msg; and the
 * warnings inspect gives, joined, in notes. */
static oq_status check(enum shape_case c, char *msg, size_t cap, char *notes, size_t ncap)
{
    char *dir = temp_dir("const_idx");
    char model[512];
    snprintf(model, sizeof model, "%s/ci.onnx", dir);
    write_model(model, c);
    oq_status st = check_model_file(model, msg, cap, notes, ncap);
    remove_dir(dir);
    return st;
}

/* Transpose then Reshape of an initializer: folded as ONNX computes them, the tuple (3,2) is
 * refused before a run, by validate and in inspect's warnings */
static void transposed_out_of_range_refused(void **state)
{
    (void)state;
    char msg[1024], notes[2048];
    assert_int_equal(check(ND_TRANSPOSED_OUT, msg, sizeof msg, notes, sizeof notes), OQ_ERR_FORMAT);
    expect(msg, "ci.onnx: GatherND 'nd': its constant indices '");
    expect(msg, "hold 3 at element [1,0]; it indexes axis 0 of its data, of size 3 (indices -3..2)");
    expect(notes, "GatherND 'nd': its constant indices");
}

/* the same values the other way round: in range once transposed, and nothing said */
static void transposed_in_range_accepted(void **state)
{
    (void)state;
    char msg[1024], notes[2048];
    if (check(ND_TRANSPOSED_IN, msg, sizeof msg, notes, sizeof notes)) fail_msg("refused: %s", msg);
    assert_string_equal(notes, "");
}

/* a Constant node's int32 values unsqueezed and cast */
static void unsqueezed_constant_refused(void **state)
{
    (void)state;
    char msg[1024], notes[2048];
    assert_int_equal(check(GE_UNSQUEEZED_OUT, msg, sizeof msg, notes, sizeof notes), OQ_ERR_FORMAT);
    expect(msg, "GatherElements 'ge': its constant indices '");
    expect(msg, "hold 5 at element [0,2]; it indexes axis 1 of its data, of size 5 (indices -5..4)");
}

/* a shape computed from an input: not folded, not refused, said "not checked" */
static void computed_shape_said_unchecked(void **state)
{
    (void)state;
    char msg[1024], notes[2048];
    if (check(ND_SHAPE_COMPUTED, msg, sizeof msg, notes, sizeof notes)) fail_msg("refused: %s", msg);
    expect(notes, "GatherND 'nd': its indices '");
    expect(notes, "are a constant, not checked against its data's sizes: Reshape '");
    expect(notes, "takes its shape from a value that is not a constant");
}

/* an input reshaped into a GatherND's tuples: the batch check does not follow it (its last axis
 * moved), and inspect says it is left to ORT, not checked per batch */
static void reshaped_input_said_left_to_ort(void **state)
{
    (void)state;
    char msg[1024], notes[2048];
    if (check(ND_FED_RESHAPED, msg, sizeof msg, notes, sizeof notes)) fail_msg("refused: %s", msg);
    expect(notes, "GatherND 'nd': its indices '");
    expect(notes, "are computed at run time (from the input 'ids'): not checked against its data's sizes, left to "
                  "ONNX Runtime");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(transposed_out_of_range_refused),
        cmocka_unit_test(transposed_in_range_accepted),
        cmocka_unit_test(unsqueezed_constant_refused),
        cmocka_unit_test(computed_shape_said_unchecked),
        cmocka_unit_test(reshaped_input_said_left_to_ort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
