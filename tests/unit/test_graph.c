/* The ONNX graph builder: structure of the packed ModelProto and every error path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "onnx.pb-c.h"
#include "ortqual/fileio.h"
#include "ortqual/graph.h"

static oq_graph *tiny(void)
{
    oq_opset ops[] = {{"", 20}, {"com.microsoft", 1}};
    oq_graph *g = NULL;
    oq_err err = {0};
    assert_int_equal(oq_graph_create(ops, 2, "tiny", &g, &err), OQ_OK);
    oq_dim d[] = {OQ_DIM_SYM("batch"), OQ_DIM(3)};
    assert_int_equal(oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 2, d), OQ_OK);
    float w[3] = {1.0f, -2.0f, 0.5f};
    int64_t shape[1] = {3};
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_wrap(&t, OQ_DTYPE_FLOAT32, 1, shape, w, "w", &err), OQ_OK);
    const char *wn = oq_graph_add_initializer(g, t, NULL);
    oq_tensor_free(t);
    assert_string_equal(wn, "w");
    const char *y = oq_graph_op(g, "Mul", 2, (const char *[]){"x", wn}, 0, NULL);
    assert_non_null(y);
    int64_t axes[] = {1};
    const char *ax = oq_graph_const_i64(g, "axes", 1, axes);
    const char *r = oq_graph_op(g, "ReduceSum", 2, (const char *[]){y, ax},
                                1, (oq_attr[]){OQ_ATTR_I("keepdims", 0)});
    assert_non_null(r);
    oq_dim od[] = {OQ_DIM_SYM("batch")};
    assert_int_equal(oq_graph_add_output(g, r, "y", OQ_DTYPE_FLOAT32, 1, od), OQ_OK);
    assert_int_equal(oq_graph_set_doc(g, "a tiny model"), OQ_OK);
    return g;
}

static void test_packs_a_valid_model(void **state)
{
    (void)state;
    oq_graph *g = tiny();
    uint8_t *buf;
    size_t len;
    oq_err err = {0};
    assert_int_equal(oq_graph_serialize(g, &buf, &len, &err), OQ_OK);
    assert_int_equal(oq_graph_node_count(g), 3); /* Mul, ReduceSum, Identity */
    assert_int_equal(oq_graph_initializer_count(g), 2);
    oq_graph_free(g);

    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(m);
    assert_int_equal(m->ir_version, 9);
    assert_string_equal(m->producer_name, "ortqual");
    assert_string_equal(m->doc_string, "a tiny model");
    assert_int_equal(m->n_opset_import, 2);
    assert_string_equal(m->opset_import[1]->domain, "com.microsoft");
    Onnx__GraphProto *gp = m->graph;
    assert_int_equal(gp->n_input, 1);
    Onnx__TensorShapeProto *sh = gp->input[0]->type->tensor_type->shape;
    assert_int_equal(sh->n_dim, 2);
    assert_string_equal(sh->dim[0]->dim_param, "batch");
    assert_int_equal(sh->dim[1]->dim_value, 3);
    assert_string_equal(gp->node[0]->op_type, "Mul");
    assert_string_equal(gp->node[1]->attribute[0]->name, "keepdims");
    assert_int_equal(gp->node[1]->attribute[0]->i, 0);
    assert_string_equal(gp->node[2]->op_type, "Identity");
    assert_string_equal(gp->output[0]->name, "y");
    Onnx__TensorProto *w = gp->initializer[0];
    assert_int_equal(w->raw_data.len, 12);
    float w1;
    memcpy(&w1, w->raw_data.data + 4, 4);
    assert_true(w1 == -2.0f);
    assert_int_equal(gp->initializer[1]->data_type, OQ_DTYPE_INT64);
    onnx__model_proto__free_unpacked(m, NULL);
}

static void test_ir_versions(void **state)
{
    (void)state;
    assert_int_equal(oq_graph_ir_version_for_opset(17), 9);
    assert_int_equal(oq_graph_ir_version_for_opset(20), 9);
    assert_int_equal(oq_graph_ir_version_for_opset(21), 10);
    assert_int_equal(oq_graph_ir_version_for_opset(23), 11);
    assert_int_equal(oq_graph_ir_version_for_opset(24), 12);
}

static void test_fresh_names_are_unique(void **state)
{
    (void)state;
    oq_graph *g = tiny();
    const char *a = oq_graph_fresh_name(g, "x");
    const char *b = oq_graph_fresh_name(g, "x");
    assert_string_equal(a, "x_1");
    assert_string_equal(b, "x_2");
    const char *c = oq_graph_fresh_name(g, "attn");
    assert_string_equal(c, "attn");
    oq_graph_free(g);
}

static void test_errors_are_sticky(void **state)
{
    (void)state;
    oq_graph *g = tiny();
    oq_dim d[] = {OQ_DIM(1)};
    assert_int_equal(oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d), OQ_ERR_INVALID_ARG);
    /* Later calls do nothing and keep the first message. */
    assert_null(oq_graph_op(g, "Relu", 1, (const char *[]){"x"}, 0, NULL));
    oq_err err = {0};
    assert_int_equal(oq_graph_status(g, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "'x'"));
    uint8_t *buf;
    size_t len;
    assert_int_equal(oq_graph_serialize(g, &buf, &len, &err), OQ_ERR_INVALID_ARG);
    assert_null(buf);
    oq_graph_free(g);
}

static void test_bad_construction(void **state)
{
    (void)state;
    oq_graph *g = NULL;
    oq_err err = {0};
    oq_opset none[] = {{"com.microsoft", 1}};
    assert_int_equal(oq_graph_create(none, 1, NULL, &g, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "default"));
    oq_opset twice[] = {{"", 20}, {"ai.onnx", 21}};
    assert_int_equal(oq_graph_create(twice, 2, NULL, &g, &err), OQ_ERR_INVALID_ARG);
    oq_opset zero[] = {{"", 0}};
    assert_int_equal(oq_graph_create(zero, 1, NULL, &g, &err), OQ_ERR_INVALID_ARG);

    oq_opset ok[] = {{"", 20}};
    assert_int_equal(oq_graph_create(ok, 1, NULL, &g, &err), OQ_OK);
    oq_dim d[] = {OQ_DIM(2)};
    assert_int_equal(oq_graph_add_output(g, "nothing", "nothing", OQ_DTYPE_FLOAT32, 1, d),
                     OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_graph_status(g, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "not produced"));
    oq_graph_free(g);

    assert_int_equal(oq_graph_create(ok, 1, NULL, &g, &err), OQ_OK);
    oq_dim neg[] = {OQ_DIM(-3)};
    assert_int_equal(oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, neg), OQ_ERR_INVALID_ARG);
    oq_graph_free(g);

    assert_int_equal(oq_graph_create(ok, 1, NULL, &g, &err), OQ_OK);
    assert_int_equal(oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d), OQ_OK);
    assert_non_null(oq_graph_op(g, "Relu", 1, (const char *[]){"x"}, 0, NULL));
    assert_int_equal(oq_graph_add_node(g, "Relu", NULL, "n", 1, (const char *[]){"x"}, 1,
                                       (const char *[]){"x"}, 0, NULL),
                     OQ_ERR_INVALID_ARG); /* x already has a producer */
    oq_graph_free(g);

    assert_int_equal(oq_graph_create(ok, 1, NULL, &g, &err), OQ_OK);
    assert_int_equal(oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d), OQ_OK);
    uint8_t *buf;
    size_t len;
    assert_int_equal(oq_graph_serialize(g, &buf, &len, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "no outputs"));
    oq_graph_free(g);
}

static void test_write_is_atomic_and_refuses_overwrite(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq_test_graph_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    oq_graph *g = tiny();
    oq_err err = {0};
    assert_int_equal(oq_graph_write(g, path, 0, &err), OQ_OK);
    assert_int_not_equal(oq_graph_write(g, path, 0, &err), OQ_OK);
    assert_non_null(strstr(err.msg, "m.onnx"));
    assert_int_equal(oq_graph_write(g, path, 1, &err), OQ_OK);
    oq_graph_free(g);
    unsigned char *bytes;
    size_t n;
    assert_int_equal(oq_read_file(path, &bytes, &n, &err), OQ_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, bytes);
    assert_non_null(m);
    onnx__model_proto__free_unpacked(m, NULL);
    free(bytes);
    unlink(path);
    rmdir(dir);
}

static void test_attribute_kinds_and_named_nodes(void **state)
{
    (void)state;
    oq_opset ops[] = {{"", 20}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, NULL, &g, NULL), OQ_OK);
    oq_dim d[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d);
    float fl[2] = {0.5f, -1.0f};
    int64_t one = 1;
    uint16_t h = oq_f32_to_f16_bits(3.0f);
    oq_tensor *t;
    assert_int_equal(oq_tensor_wrap(&t, OQ_DTYPE_FLOAT16, 1, &one, &h, NULL, NULL), OQ_OK);
    oq_attr a[] = {OQ_ATTR_S("mode", "exact"), OQ_ATTR_F("alpha", 0.25f),
                   {.name = "fl", .type = OQ_ATTR_FLOATS, .n = 2, .floats = fl},
                   {.name = "value", .type = OQ_ATTR_TENSOR, .t = t}};
    /* A name reserved by fresh_name may be used once as a node name and once as a value. */
    const char *nm = oq_graph_fresh_name(g, "blk");
    assert_int_equal(oq_graph_add_node(g, "Custom", "org.example", nm, 1, (const char *[]){"x"}, 1,
                                       (const char *[]){nm}, 4, a),
                     OQ_OK);
    oq_tensor_free(t);
    assert_int_equal(oq_graph_add_node(g, "Relu", NULL, nm, 1, (const char *[]){"x"}, 1,
                                       (const char *[]){"r"}, 0, NULL),
                     OQ_ERR_INVALID_ARG); /* node name taken */
    oq_err err = {0};
    assert_int_equal(oq_graph_status(g, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "node name 'blk' is already used"));
    oq_graph_free(g);

    assert_int_equal(oq_graph_create(ops, 1, NULL, &g, NULL), OQ_OK);
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d);
    assert_int_equal(oq_tensor_wrap(&t, OQ_DTYPE_FLOAT16, 1, &one, &h, NULL, NULL), OQ_OK);
    a[3].t = t;
    const char *y = "y";
    assert_int_equal(oq_graph_add_node(g, "Custom", "org.example", "c", 1, (const char *[]){"x"}, 1,
                                       &y, 4, a),
                     OQ_OK);
    oq_tensor_free(t);
    assert_non_null(oq_graph_const_scalar(g, "half", OQ_DTYPE_FLOAT16, 0.5));
    assert_null(oq_graph_const_scalar(g, "bad", OQ_DTYPE_INT64, 1.0)); /* not a float type */
    assert_int_equal(oq_graph_status(g, &err), OQ_ERR_INVALID_ARG);
    oq_graph_free(g);

    assert_int_equal(oq_graph_create(ops, 1, NULL, &g, NULL), OQ_OK);
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d);
    assert_int_equal(oq_tensor_wrap(&t, OQ_DTYPE_FLOAT16, 1, &one, &h, NULL, NULL), OQ_OK);
    a[3].t = t;
    assert_int_equal(oq_graph_add_node(g, "Custom", "org.example", "c", 1, (const char *[]){"x"}, 1,
                                       &y, 4, a),
                     OQ_OK);
    oq_tensor_free(t);
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 1, d);
    uint8_t *buf;
    size_t len;
    assert_int_equal(oq_graph_serialize(g, &buf, &len, &err), OQ_OK);
    oq_graph_free(g);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(m);
    Onnx__NodeProto *n = m->graph->node[0];
    assert_string_equal(n->domain, "org.example");
    assert_int_equal(n->n_attribute, 4);
    assert_int_equal(n->attribute[0]->s.len, 5);
    assert_memory_equal(n->attribute[0]->s.data, "exact", 5);
    assert_true(n->attribute[1]->f == 0.25f);
    assert_int_equal(n->attribute[2]->n_floats, 2);
    assert_true(n->attribute[2]->floats[1] == -1.0f);
    assert_int_equal(n->attribute[3]->t->data_type, OQ_DTYPE_FLOAT16);
    uint16_t back;
    memcpy(&back, n->attribute[3]->t->raw_data.data, 2);
    assert_true(oq_f16_bits_to_f32(back) == 3.0f);
    onnx__model_proto__free_unpacked(m, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packs_a_valid_model),
        cmocka_unit_test(test_ir_versions),
        cmocka_unit_test(test_fresh_names_are_unique),
        cmocka_unit_test(test_errors_are_sticky),
        cmocka_unit_test(test_bad_construction),
        cmocka_unit_test(test_write_is_atomic_and_refuses_overwrite),
        cmocka_unit_test(test_attribute_kinds_and_named_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
