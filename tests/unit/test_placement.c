/* Placement: a CUDA profile fixture, a real ORT CPU session (profile and EP
 * assignment), the shape-op rule, strict mode, and malformed profiles. */
#include <dirent.h>
#include <jansson.h>
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
#include "placement/placement-impl.h"
#include "ortqual/runtime.h"
#include "ortqual/validate.h"

#define FIXTURE OQ_SOURCE_DIR "/tests/fixtures/profiles/cuda_dynamic_encoder.json"

static const oq_placed_node *find(const oq_placement *p, const char *name)
{
    for (size_t i = 0; i < p->n_nodes; i++)
        if (!strcmp(p->nodes[i].name, name)) return &p->nodes[i];
    fail_msg("node %s not found", name);
    return NULL;
}

static const oq_ep_total *find_ep(const oq_placement *p, const char *ep)
{
    for (size_t i = 0; i < p->n_eps; i++)
        if (!strcmp(p->eps[i].ep, ep)) return &p->eps[i];
    fail_msg("EP %s not found", ep);
    return NULL;
}

static void assert_failure_line(const oq_placement_report *r, const char *line)
{
    for (size_t i = 0; i < r->n_failures; i++)
        if (!strcmp(r->failures[i], line)) return;
    fail_msg("failure '%s' not reported", line);
}

static oq_placement *load_fixture(void)
{
    oq_placement *p;
    oq_err err = {0};
    assert_int_equal(oq_placement_create(&p, &err), OQ_OK);
    if (oq_placement_add_profile(p, FIXTURE, &err) != OQ_OK) fail_msg("%s", err.msg);
    return p;
}

static void test_fixture_nodes_and_totals(void **state)
{
    (void)state;
    oq_placement *p = load_fixture();
    assert_true(p->have_profile);
    assert_false(p->have_assignment);
    assert_int_equal(p->n_nodes, 13); /* fence and session events are not nodes */
    const oq_placed_node *attn = find(p, "attn0");
    assert_string_equal(attn->op_type, "Attention");
    assert_string_equal(attn->ep_profiled, "CUDAExecutionProvider");
    assert_null(attn->ep_assigned);
    assert_int_equal(attn->runs, 2);
    assert_true(attn->us == 100.0);
    assert_int_equal(attn->n_inputs, 4);
    assert_string_equal(attn->inputs[3].dtype, "bool");
    assert_int_equal(attn->inputs[3].ndim, 4);
    assert_int_equal(attn->inputs[3].dims[3], 256);
    const oq_placed_node *g = find(p, "/enc/Gather");
    assert_int_equal(g->outputs[0].ndim, 0);
    const oq_ep_total *cpu = find_ep(p, "CPUExecutionProvider");
    const oq_ep_total *cuda = find_ep(p, "CUDAExecutionProvider");
    assert_int_equal(cpu->nodes, 8);
    assert_int_equal(cpu->runs, 8);
    assert_true(cpu->us == 95.0);
    assert_int_equal(cuda->nodes, 5);
    assert_int_equal(cuda->runs, 7);
    assert_true(cuda->us == 200.0);
    oq_placement_free(p);
}

static void test_fixture_classified(void **state)
{
    (void)state;
    oq_placement *p = load_fixture();
    oq_placement_report r;
    oq_err err = {0};
    assert_int_equal(oq_placement_check(p, 0, &r, &err), OQ_OK);
    const char *shape[] = {"/enc/Shape", "/enc/Gather", "/enc/Unsqueeze", "/enc/Concat", "/enc/Cast",
                           "/enc/Sqrt"};
    for (size_t i = 0; i < 6; i++) assert_int_equal(find(p, shape[i])->place, OQ_PLACE_CPU_SHAPE);
    assert_int_equal(find(p, "/enc/Equal")->place, OQ_PLACE_CPU_COMPUTE);
    assert_int_equal(find(p, "/enc/head/Softmax")->place, OQ_PLACE_CPU_COMPUTE);
    assert_int_equal(find(p, "MemcpyFromHost_token_0")->place, OQ_PLACE_MEMCPY);
    assert_int_equal(find(p, "MemcpyToHost_token_1")->place, OQ_PLACE_MEMCPY);
    assert_int_equal(find(p, "/enc/Reshape")->place, OQ_PLACE_DEVICE);
    assert_int_equal(find(p, "attn0")->place, OQ_PLACE_DEVICE);
    assert_false(r.passed);
    assert_int_equal(r.n_device, 3); /* MatMul, Reshape, attn0 */
    assert_int_equal(r.n_cpu_shape, 6);
    assert_int_equal(r.n_memcpy, 2);
    assert_int_equal(r.n_cpu_compute, 2);
    assert_int_equal(r.n_failures, 2);
    assert_failure_line(&r, "/enc/Equal (Equal): compute on CPUExecutionProvider (shape op on a tensor "
                            "larger than a shape (input))");
    assert_failure_line(&r, "/enc/head/Softmax (Softmax): compute on CPUExecutionProvider (op is not "
                            "shape arithmetic)");
    assert_int_equal(r.n_notes, 1);
    assert_string_equal(r.notes[0], "allowed: 6 shape op(s) on CPU and 2 Memcpy node(s) "
                                    "(OQ_PLACEMENT_STRICT rejects them)");

    json_t *j = oq_placement_to_json(p, &r);
    assert_non_null(j);
    assert_false(json_is_true(json_object_get(j, "passed")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"), "cpu_shape")), 6);
    assert_int_equal(json_array_size(json_object_get(j, "nodes")), 13);
    json_t *n0 = json_array_get(json_object_get(j, "nodes"), 0);
    assert_string_equal(json_string_value(json_object_get(n0, "class")), "cpu_shape");
    assert_true(json_is_null(json_object_get(n0, "ep_assigned")));
    json_t *in0 = json_array_get(json_object_get(n0, "inputs"), 0);
    assert_string_equal(json_string_value(json_object_get(in0, "dtype")), "MLFloat16");
    assert_int_equal(json_array_size(json_object_get(in0, "shape")), 4);
    json_decref(j);
    oq_placement_report_clear(&r);
    oq_placement_free(p);
}

static void test_fixture_strict(void **state)
{
    (void)state;
    oq_placement *p = load_fixture();
    oq_placement_report r;
    assert_int_equal(oq_placement_check(p, OQ_PLACEMENT_STRICT, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_true(r.strict);
    assert_int_equal(r.n_failures, 10);
    assert_failure_line(&r, "/enc/Shape (Shape): shape op on CPUExecutionProvider (strict placement)");
    assert_failure_line(&r, "MemcpyToHost_token_1 (MemcpyToHost): host/device copy on "
                            "CUDAExecutionProvider (strict placement)");
    assert_int_equal(r.n_notes, 0);
    oq_placement_report_clear(&r);
    oq_placement_free(p);
}

/* A fully-on-device profile passes, strict included. */
static void test_all_device_passes(void **state)
{
    (void)state;
    const char *prof =
        "[{\"cat\":\"Node\",\"name\":\"attn0_kernel_time\",\"dur\":50,\"args\":{\"op_name\":\"Attention\","
        "\"provider\":\"CUDAExecutionProvider\"}},"
        "{\"cat\":\"Node\",\"name\":\"mm_kernel_time\",\"dur\":10,\"args\":{\"op_name\":\"MatMul\","
        "\"provider\":\"CUDAExecutionProvider\"}}]";
    oq_placement *p;
    oq_placement_create(&p, NULL);
    assert_int_equal(oq_placement_add_profile_text(p, prof, strlen(prof), "mem", NULL), OQ_OK);
    oq_placement_report r;
    assert_int_equal(oq_placement_check(p, OQ_PLACEMENT_STRICT, &r, NULL), OQ_OK);
    assert_true(r.passed);
    assert_int_equal(r.n_device, 2);
    oq_placement_report_clear(&r);
    oq_placement_free(p);
}

/* The shape rule, one tensor property at a time. */
static void test_shape_rule(void **state)
{
    (void)state;
    const char *fmt = "[{\"cat\":\"Node\",\"name\":\"n_kernel_time\",\"dur\":1,\"args\":{\"op_name\":\"%s\","
                      "\"provider\":\"CPUExecutionProvider\",\"input_type_shape\":%s,"
                      "\"output_type_shape\":%s}}]";
    struct {
        const char *op, *in, *out;
        oq_node_place want;
    } cases[] = {
        {"Shape", "[{\"float\":[8,1024]}]", "[{\"int64\":[2]}]", OQ_PLACE_CPU_SHAPE},
        {"Gather", "[{\"float\":[8,1024]},{\"int64\":[]}]", "[{\"float\":[1024]}]", OQ_PLACE_CPU_COMPUTE},
        {"Concat", "[{\"int64\":[1]},{\"int64\":[2]}]", "[{\"int64\":[3]}]", OQ_PLACE_CPU_SHAPE},
        {"Range", "[{\"int64\":[]},{\"int64\":[]},{\"int64\":[]}]", "[{\"int64\":[256]}]", OQ_PLACE_CPU_SHAPE},
        {"Where", "[{\"bool\":[2,256]},{\"float\":[]},{\"float\":[]}]", "[{\"float\":[2,256]}]",
         OQ_PLACE_CPU_COMPUTE},
        {"Div", "[{\"float\":[1]},{\"float\":[]}]", "[{\"float\":[1]}]", OQ_PLACE_CPU_SHAPE},
        {"ConstantOfShape", "[{\"int64\":[2]}]", "[{\"float\":[2,256]}]", OQ_PLACE_CPU_COMPUTE},
        {"Size", "[{\"float\":[2,256]}]", "[{\"int64\":[]}]", OQ_PLACE_CPU_SHAPE},
        {"Softmax", "[{\"float\":[]}]", "[{\"float\":[]}]", OQ_PLACE_CPU_COMPUTE},
        {"Unsqueeze", "[{\"int32\":[4]},{\"int64\":[1]}]", "[{\"int32\":[1,4]}]", OQ_PLACE_CPU_COMPUTE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[512];
        snprintf(buf, sizeof buf, fmt, cases[i].op, cases[i].in, cases[i].out);
        oq_placement *p;
        oq_placement_create(&p, NULL);
        oq_err err = {0};
        if (oq_placement_add_profile_text(p, buf, strlen(buf), "case", &err)) fail_msg("%s", err.msg);
        oq_placement_report r;
        assert_int_equal(oq_placement_check(p, 0, &r, NULL), OQ_OK);
        if (p->nodes[0].place != cases[i].want)
            fail_msg("case %zu (%s): got %s, want %s", i, cases[i].op, oq_node_place_name(p->nodes[0].place),
                     oq_node_place_name(cases[i].want));
        assert_int_equal(r.passed, cases[i].want == OQ_PLACE_CPU_SHAPE);
        oq_placement_report_clear(&r);
        oq_placement_free(p);
    }
    assert_true(oq_placement_is_shape_op("Unsqueeze"));
    assert_false(oq_placement_is_shape_op("MatMul"));
    assert_false(oq_placement_is_shape_op(NULL));
}

static void test_bad_profiles(void **state)
{
    (void)state;
    struct {
        const char *text, *msg;
        oq_status st;
    } cases[] = {
        {"[{\"cat\":", "p.json: not JSON (line 1: ", OQ_ERR_FORMAT},
        {"{\"events\":[]}", "p.json: not an ORT profile (expected an array of events)", OQ_ERR_FORMAT},
        {"[{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"args\":{\"op_name\":\"Relu\"}}]",
         "p.json: event 0 (a_kernel_time) has no args.provider", OQ_ERR_FORMAT},
        {"[{\"cat\":\"Session\",\"name\":\"x\"},{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"args\":{"
         "\"provider\":\"CPUExecutionProvider\"}}]",
         "p.json: event 1 (a_kernel_time) has no args.op_name", OQ_ERR_FORMAT},
        {"[{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"args\":{\"op_name\":\"Relu\",\"provider\":"
         "\"CPUExecutionProvider\"}},{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"args\":{\"op_name\":"
         "\"Relu\",\"provider\":\"CUDAExecutionProvider\"}}]",
         "p.json: event 1: node a ran on CPUExecutionProvider and on CUDAExecutionProvider", OQ_ERR_FORMAT},
        {"[{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"args\":{\"op_name\":\"Relu\",\"provider\":"
         "\"CPUExecutionProvider\",\"input_type_shape\":[{\"float\":[\"x\"]}]}}]",
         "p.json: event 0 (a_kernel_time): malformed input_type_shape/output_type_shape", OQ_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        oq_placement *p;
        oq_placement_create(&p, NULL);
        oq_err err = {0};
        assert_int_equal(oq_placement_add_profile_text(p, cases[i].text, strlen(cases[i].text), "p.json", &err),
                         cases[i].st);
        if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)))
            fail_msg("case %zu: got '%s', want '%s'", i, err.msg, cases[i].msg);
        oq_placement_free(p);
    }
    oq_placement *p;
    oq_placement_create(&p, NULL);
    oq_err err = {0};
    assert_int_equal(oq_placement_add_profile(p, "/nonexistent/prof.json", &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent/prof.json"));
    /* no evidence at all is never a pass */
    oq_placement_report r;
    assert_int_equal(oq_placement_check(p, 0, &r, NULL), OQ_OK);
    assert_false(r.passed);
    assert_string_equal(r.failures[0], "no placement evidence: no node was assigned or profiled");
    oq_placement_report_clear(&r);
    oq_placement_free(p);
    assert_int_equal(oq_placement_create(NULL, &err), OQ_ERR_INVALID_ARG);
}

/* ---- a real ORT CPU session ---------------------------------------------------- */

static oq_runtime *g_rt;
static char g_dir[64];
static char g_model[128];

/* x[N,4] -> Shape -> Gather(0) -> Concat([2,2]) -> Reshape(x) -> Relu -> y. */
static int build_model(void)
{
    oq_err err = {0};
    oq_opset ops[] = {{"", 17}};
    oq_graph *g;
    if (oq_graph_create(ops, 1, "placement", &g, &err)) return -1;
    oq_dim d[] = {OQ_DIM_SYM("N"), OQ_DIM(4)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 2, d);
    int64_t zero = 0, two2[] = {2, 2};
    const char *idx = oq_graph_const_i64(g, "idx", 1, &zero);
    const char *c22 = oq_graph_const_i64(g, "c22", 2, two2);
    oq_graph_add_node(g, "Shape", NULL, "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"}, 0, NULL);
    oq_graph_add_node(g, "Gather", NULL, "gather", 2, (const char *[]){"s", idx}, 1, (const char *[]){"n"}, 0,
                      NULL);
    oq_graph_add_node(g, "Concat", NULL, "concat", 2, (const char *[]){"n", c22}, 1, (const char *[]){"ns"},
                      1, (oq_attr[]){OQ_ATTR_I("axis", 0)});
    oq_graph_add_node(g, "Reshape", NULL, "reshape", 2, (const char *[]){"x", "ns"}, 1,
                      (const char *[]){"r"}, 0, NULL);
    oq_graph_add_node(g, "Relu", NULL, "relu", 1, (const char *[]){"r"}, 1, (const char *[]){"y"}, 0, NULL);
    oq_dim d3[] = {OQ_DIM_SYM("N"), OQ_DIM(2), OQ_DIM(2)};
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 3, d3);
    oq_status st = oq_graph_write(g, g_model, 1, &err);
    oq_graph_free(g);
    if (st) fprintf(stderr, "model: %s\n", err.msg);
    return st ? -1 : 0;
}

static int group_setup(void **state)
{
    (void)state;
    oq_err err = {0};
    strcpy(g_dir, "/tmp/oq_placement_XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    snprintf(g_model, sizeof g_model, "%s/model.onnx", g_dir);
    if (build_model()) return -1;
    if (oq_runtime_load(OQ_ORT_LIB, &g_rt, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    oq_runtime_free(g_rt);
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[512];
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", g_dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(g_dir);
    return 0;
}

/* Session with profiling and assignment recording, optimizations off (ORT
 * would otherwise fold the Shape->Gather->Concat chain into a constant). */
static oq_session *open_session(bool record)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s/prof", g_dir);
    const char *k[] = {OQ_PLACEMENT_SESSION_CONFIG}, *v[] = {"1"};
    oq_session_opts so = {0};
    so.graph_opt = OQ_GRAPH_OPT_DISABLE;
    so.profile_prefix = prefix;
    so.n_session_configs = record ? 1 : 0;
    so.session_config_keys = k;
    so.session_config_values = v;
    oq_session *s;
    oq_err err = {0};
    if (oq_session_create(g_rt, g_model, NULL, 0, &so, &s, &err)) fail_msg("%s", err.msg);
    return s;
}

static char *run_twice_and_profile(oq_session *s)
{
    float data[12] = {0};
    int64_t shape[] = {3, 4};
    oq_tensor *x;
    oq_err err = {0};
    assert_int_equal(oq_tensor_wrap(&x, OQ_DTYPE_FLOAT32, 2, shape, data, "x", &err), OQ_OK);
    for (int i = 0; i < 2; i++) {
        size_t n_out;
        oq_tensor **out;
        if (oq_session_run(s, 1, &x, &n_out, &out, &err)) fail_msg("%s", err.msg);
        oq_tensors_free(out, n_out);
    }
    oq_tensor_free(x);
    char *path = oq_session_end_profiling(s);
    assert_non_null(path);
    return path;
}

/* A placement holding the assignment of a fresh recording session. The session is
 * handed back in *keep, or (keep NULL) its profiling ended and it freed. */
static oq_placement *assigned_placement(oq_session **keep)
{
    oq_session *s = open_session(true);
    oq_placement *p;
    oq_err err = {0};
    oq_placement_create(&p, NULL);
    if (oq_placement_add_assignment(p, s, &err)) fail_msg("%s", err.msg);
    if (keep) {
        *keep = s;
    } else {
        free(oq_session_end_profiling(s));
        oq_session_free(s);
    }
    return p;
}

static void test_real_cpu_session(void **state)
{
    (void)state;
    oq_session *s;
    oq_placement *p = assigned_placement(&s);
    oq_err err = {0};
    assert_true(p->have_assignment);
    assert_int_equal(p->n_nodes, 5); /* the EP assignment API works on the CPU EP too */
    char *prof = run_twice_and_profile(s);
    if (oq_placement_add_profile(p, prof, &err)) fail_msg("%s", err.msg);
    free(prof);
    oq_session_free(s);

    assert_int_equal(p->n_nodes, 5);
    const char *names[] = {"shape", "gather", "concat", "reshape", "relu"};
    for (size_t i = 0; i < 5; i++) {
        const oq_placed_node *n = find(p, names[i]);
        assert_string_equal(n->ep_assigned, "CPUExecutionProvider");
        assert_string_equal(n->ep_profiled, "CPUExecutionProvider");
        assert_int_equal(n->runs, 2);
    }
    assert_int_equal(p->n_eps, 1);
    assert_int_equal(p->eps[0].runs, 10);
    const oq_placed_node *sh = find(p, "shape");
    assert_string_equal(sh->inputs[0].dtype, "float");
    assert_string_equal(sh->outputs[0].dtype, "int64");

    oq_placement_report r;
    assert_int_equal(oq_placement_check(p, 0, &r, &err), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.n_cpu_shape, 3);
    assert_int_equal(r.n_cpu_compute, 2);
    assert_int_equal(r.n_mismatch, 0);
    assert_failure_line(&r, "reshape (Reshape): compute on CPUExecutionProvider (shape op on a tensor "
                            "larger than a shape (input))");
    assert_failure_line(&r, "relu (Relu): compute on CPUExecutionProvider (op is not shape arithmetic)");
    oq_placement_report_clear(&r);
    oq_placement_free(p);
}

/* Both witnesses disagreeing, and nodes assigned but never profiled, are notes. */
static void test_cross_check_notes(void **state)
{
    (void)state;
    oq_session *s;
    oq_placement *p = assigned_placement(&s);
    oq_session_free(s);
    oq_err err = {0};
    const char *prof = "[{\"cat\":\"Node\",\"name\":\"relu_kernel_time\",\"dur\":3,\"args\":{\"op_name\":"
                       "\"Relu\",\"provider\":\"CUDAExecutionProvider\"}}]";
    assert_int_equal(oq_placement_add_profile_text(p, prof, strlen(prof), "x", &err), OQ_OK);
    oq_placement_report r;
    assert_int_equal(oq_placement_check(p, 0, &r, &err), OQ_OK);
    assert_int_equal(r.n_mismatch, 1);
    assert_int_equal(r.n_not_run, 4);
    assert_true(r.passed); /* what ran (relu) ran on the device */
    assert_string_equal(r.notes[0], "shape (Shape): assigned to CPUExecutionProvider, never ran (fused or "
                                    "removed after partitioning)");
    bool seen = false;
    for (size_t i = 0; i < r.n_notes; i++)
        seen |= !strcmp(r.notes[i], "relu (Relu): assigned to CPUExecutionProvider but ran on "
                                    "CUDAExecutionProvider");
    assert_true(seen);
    oq_placement_report_clear(&r);
    oq_placement_free(p);
}

/* Copy of the test model with value_info declaring the shape chain's values. */
static void write_model_with_value_info(const char *path)
{
    unsigned char *buf;
    size_t len;
    oq_err err = {0};
    assert_int_equal(oq_read_file(g_model, &buf, &len, &err), OQ_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(m);
    static const char *names[] = {"s", "n", "ns"};
    static const int64_t lens[] = {2, 1, 3};
    Onnx__ValueInfoProto vi[3], *vip[3];
    Onnx__TypeProto tp[3];
    Onnx__TypeProto__Tensor tt[3];
    Onnx__TensorShapeProto sp[3];
    Onnx__TensorShapeProto__Dimension dim[3], *dimp[3];
    for (int i = 0; i < 3; i++) {
        onnx__value_info_proto__init(&vi[i]);
        onnx__type_proto__init(&tp[i]);
        onnx__type_proto__tensor__init(&tt[i]);
        onnx__tensor_shape_proto__init(&sp[i]);
        onnx__tensor_shape_proto__dimension__init(&dim[i]);
        dim[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim[i].dim_value = lens[i];
        dimp[i] = &dim[i];
        sp[i].n_dim = 1;
        sp[i].dim = &dimp[i];
        tt[i].has_elem_type = 1;
        tt[i].elem_type = 7; /* int64 */
        tt[i].shape = &sp[i];
        tp[i].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp[i].tensor_type = &tt[i];
        vi[i].name = (char *)names[i];
        vi[i].type = &tp[i];
        vip[i] = &vi[i];
    }
    size_t old_n = m->graph->n_value_info;
    Onnx__ValueInfoProto **old = m->graph->value_info;
    m->graph->n_value_info = 3;
    m->graph->value_info = vip;
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *out = malloc(n);
    onnx__model_proto__pack(m, out);
    m->graph->n_value_info = old_n;
    m->graph->value_info = old;
    onnx__model_proto__free_unpacked(m, NULL);
    assert_int_equal(oq_write_file_atomic(path, out, n, 1, &err), OQ_OK);
    free(out);
}

/* Without a profile, the model's declared types drive the shape rule. */
static void test_model_types_without_profile(void **state)
{
    (void)state;
    char vi_model[160];
    snprintf(vi_model, sizeof vi_model, "%s/model_vi.onnx", g_dir);
    write_model_with_value_info(vi_model);
    oq_err err = {0};
    for (int with_vi = 0; with_vi < 3; with_vi++) { /* 0: no model, 1: model without value_info, 2: with */
        oq_placement *p = assigned_placement(NULL);
        if (with_vi && oq_placement_add_model(p, with_vi == 2 ? vi_model : g_model, &err))
            fail_msg("%s", err.msg);
        oq_placement_report r;
        assert_int_equal(oq_placement_check(p, 0, &r, &err), OQ_OK);
        const oq_placed_node *gather = find(p, "gather");
        if (with_vi == 2) {
            assert_int_equal(r.n_cpu_shape, 3);
            assert_int_equal(find(p, "shape")->place, OQ_PLACE_CPU_SHAPE);
            assert_int_equal(find(p, "concat")->place, OQ_PLACE_CPU_SHAPE);
            assert_true(gather->types_from_model);
            assert_string_equal(gather->outputs[0].dtype, "int64");
            assert_int_equal(find(p, "reshape")->inputs[0].dims[0], -1); /* symbolic N */
        } else {
            assert_int_equal(r.n_cpu_shape, 0);
            assert_int_equal(gather->place, OQ_PLACE_CPU_COMPUTE);
            assert_string_equal(gather->reason,
                                with_vi ? "shape op with a tensor of unknown type or rank: counted as compute"
                                        : "shape op without tensor types (no profile event, no model): "
                                          "counted as compute");
        }
        assert_int_equal(find(p, "reshape")->place, OQ_PLACE_CPU_COMPUTE);
        assert_int_equal(find(p, "relu")->place, OQ_PLACE_CPU_COMPUTE);
        json_t *j = oq_placement_to_json(p, &r);
        json_t *types = json_object_get(json_array_get(json_object_get(j, "nodes"), 1), "types");
        assert_true(with_vi ? json_is_string(types) : json_is_null(types));
        json_decref(j);
        oq_placement_report_clear(&r);
        oq_placement_free(p);
    }
    /* not a model */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/bad.onnx", g_dir);
    assert_int_equal(oq_write_file_atomic(bad, "\x0a\xff\xff\xff\x0f", 5, 1, &err), OQ_OK);
    oq_placement *p;
    oq_placement_create(&p, NULL);
    assert_int_equal(oq_placement_add_model(p, bad, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "bad.onnx: not an ONNX model"));
    oq_placement_free(p);
}

/* Assignment plus a profile without node events: never a pass. */
static void test_empty_profile_is_no_evidence(void **state)
{
    (void)state;
    oq_placement *p = assigned_placement(NULL);
    oq_err err = {0};
    assert_int_equal(oq_placement_add_profile_text(p, "[]", 2, "empty", &err), OQ_OK);
    oq_placement_report r;
    assert_int_equal(oq_placement_check(p, 0, &r, &err), OQ_OK);
    assert_false(r.passed);
    assert_int_equal(r.n_not_run, 5);
    assert_int_equal(r.n_failures, 1);
    assert_string_equal(r.failures[0], "no placement evidence: no node was profiled (did the session "
                                       "run with profiling on?)");
    oq_placement_report_clear(&r);
    oq_placement_free(p);
}

static void test_assignment_needs_config(void **state)
{
    (void)state;
    oq_session *s = open_session(false);
    oq_placement *p;
    oq_err err = {0};
    oq_placement_create(&p, NULL);
    assert_int_equal(oq_placement_add_assignment(p, s, &err), OQ_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "placement: Session_GetEpGraphAssignmentInfo: "));
    assert_non_null(strstr(err.msg, "(create the session with the config entry "
                                    "session.record_ep_graph_assignment_info=1)"));
    assert_false(p->have_assignment);
    assert_int_equal(oq_placement_add_assignment(p, NULL, &err), OQ_ERR_INVALID_ARG);
    char *prof = oq_session_end_profiling(s);
    free(prof);
    oq_session_free(s);
    oq_placement_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_nodes_and_totals),
        cmocka_unit_test(test_fixture_classified),
        cmocka_unit_test(test_fixture_strict),
        cmocka_unit_test(test_all_device_passes),
        cmocka_unit_test(test_shape_rule),
        cmocka_unit_test(test_bad_profiles),
        cmocka_unit_test(test_real_cpu_session),
        cmocka_unit_test(test_cross_check_notes),
        cmocka_unit_test(test_model_types_without_profile),
        cmocka_unit_test(test_empty_profile_is_no_evidence),
        cmocka_unit_test(test_assignment_needs_config),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
