/* Gather indices computed from constants by Add, Sub, Mul, Div, Mod, Min, Max, Neg, Where,
 * Expand, Tile, Gather, Concat, Range, Slice, ConstantOfShape, a Constant's value_int(s) or a
 * Reshape to a rank above 8, or read from an input's default, are folded and held to their
 * data's bounds before anything runs; an overflow, a division by zero, a cycle, too many
 * operators or a result too large to fold is said "not checked", and indices known only at run
 * time are said so, not passed over in silence. */
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
#include "onnx.pb-c.h"
#define TESTUTIL_GRAPH
#define TESTUTIL_CHECK_MODEL
#include "testutil.h"

static const char *vec(oq_graph *g, const char *name, int64_t n, const int64_t *vals)
{
    return ints(g, name, 1, &n, vals);
}

static const char *scalar(oq_graph *g, const char *name, int64_t x)
{
    return ints(g, name, 0, NULL, &x);
}

static const char *op2(oq_graph *g, const char *op, const char *a, const char *b)
{
    return oq_graph_op(g, op, 2, (const char *[]){a, b}, 0, NULL);
}

/* Each case builds the indices of Gather 'g' (axis 1 of E [2,5]: indices -5..4). */
static const char *add_out(oq_graph *g)
{
    return op2(g, "Add", vec(g, "a", 2, (int64_t[]){1, 2}), vec(g, "b", 2, (int64_t[]){3, 3}));
}

static const char *add_in(oq_graph *g)
{
    return op2(g, "Add", vec(g, "a", 2, (int64_t[]){1, 2}), vec(g, "b", 2, (int64_t[]){2, 2}));
}

static const char *sub_broadcast(oq_graph *g)
{
    return op2(g, "Sub", vec(g, "a", 2, (int64_t[]){0, 1}), scalar(g, "seven", 7));
}

static const char *mul_broadcast(oq_graph *g)
{
    return op2(g, "Mul", ints(g, "col", 2, (int64_t[]){2, 1}, (int64_t[]){1, 2}), vec(g, "row", 2, (int64_t[]){2, 3}));
}

static const char *neg(oq_graph *g)
{
    const char *a = vec(g, "a", 2, (int64_t[]){3, 6});
    return oq_graph_op(g, "Neg", 1, &a, 0, NULL);
}

static const char *concat(oq_graph *g)
{
    const oq_attr axis = OQ_ATTR_I("axis", 0);
    return oq_graph_op(g, "Concat", 2, (const char *[]){vec(g, "a", 2, (int64_t[]){0, 1}), vec(g, "b", 1, (int64_t[]){9})},
                       1, &axis);
}

static const char *range(oq_graph *g)
{
    return oq_graph_op(g, "Range", 3, (const char *[]){scalar(g, "s", 0), scalar(g, "l", 7), scalar(g, "d", 2)}, 0, NULL);
}

/* [0..7][6:0:-3] = [6, 3] */
static const char *slice_back(oq_graph *g)
{
    const char *in[] = {vec(g, "data", 8, (int64_t[]){0, 1, 2, 3, 4, 5, 6, 7}), vec(g, "st", 1, (int64_t[]){6}),
                        vec(g, "en", 1, (int64_t[]){0}), vec(g, "ax", 1, (int64_t[]){0}), vec(g, "sp", 1, (int64_t[]){-3})};
    return oq_graph_op(g, "Slice", 5, in, 0, NULL);
}

/* an empty constant of shape `dims` reversed whole (start -1, end INT64_MIN, step -1): empty */
static const char *slice_empty(oq_graph *g, int32_t rank, const int64_t *dims)
{
    const char *in[] = {ints(g, "emp", rank, dims, (int64_t[]){0}), vec(g, "st", 1, (int64_t[]){-1}),
                        vec(g, "en", 1, (int64_t[]){INT64_MIN}), vec(g, "ax", 1, (int64_t[]){0}),
                        vec(g, "sp", 1, (int64_t[]){-1})};
    return oq_graph_op(g, "Slice", 5, in, 0, NULL);
}

static const char *slice_empty_r1(oq_graph *g)
{
    return slice_empty(g, 1, (int64_t[]){0});
}

static const char *slice_empty_r2(oq_graph *g)
{
    return slice_empty(g, 2, (int64_t[]){0, 3});
}

/* d = Add(d, d) n times from a = [0, 1]: [0, 2^n], each value read twice */
static const char *doubled(oq_graph *g, int n)
{
    const char *d = vec(g, "a", 2, (int64_t[]){0, 1});
    for (int i = 0; i < n; i++) d = op2(g, "Add", d, d);
    return d;
}

static const char *doubled6(oq_graph *g)
{
    return doubled(g, 6);
}

static const char *doubled20(oq_graph *g)
{
    return doubled(g, 20);
}

static const char *constant_of_shape(oq_graph *g)
{
    const int64_t one = 1, eight = 8;
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_INT64, 1, &one, "v", NULL), OQ_OK);
    memcpy(t->data, &eight, sizeof eight);
    const oq_attr value = {.name = "value", .type = OQ_ATTR_TENSOR, .t = t};
    const char *shape = vec(g, "shape", 2, (int64_t[]){2, 3});
    const char *c = oq_graph_op(g, "ConstantOfShape", 1, &shape, 1, &value);
    oq_tensor_free(t);
    return c;
}

static const char *value_int(oq_graph *g)
{
    const oq_attr a = OQ_ATTR_I("value_int", 9);
    return oq_graph_op(g, "Constant", 0, NULL, 1, &a);
}

static const char *value_ints(oq_graph *g)
{
    const oq_attr a = OQ_ATTR_IS("value_ints", 2, ((const int64_t[]){1, 9}));
    return oq_graph_op(g, "Constant", 0, NULL, 1, &a);
}

/* [0, 7] reshaped to rank 10: [1,1,1,1,1,1,1,1,1,2] */
static const char *rank10(oq_graph *g)
{
    const int64_t t[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2};
    return op2(g, "Reshape", vec(g, "a", 2, (int64_t[]){0, 7}), vec(g, "t10", 10, t));
}

/* an initializer that is also an input (write_model names the input "dflt_in" "dflt"): its
 * default, which ortqual's runs all keep */
static const char *default_input(oq_graph *g)
{
    const oq_dim d[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "dflt_in", OQ_DTYPE_INT64, 1, d);
    return vec(g, "dflt", 2, (int64_t[]){1, 6});
}

static const char *overflow(oq_graph *g)
{
    return op2(g, "Add", vec(g, "big", 1, (int64_t[]){INT64_MAX}), vec(g, "one", 1, (int64_t[]){1}));
}

static const char *too_large(oq_graph *g)
{
    return oq_graph_op(g, "Range", 3, (const char *[]){scalar(g, "s", 0), scalar(g, "l", 2000000), scalar(g, "d", 1)}, 0,
                       NULL);
}

static const char *fed(oq_graph *g)
{
    const char *ids = "ids";
    return oq_graph_op(g, "Cast", 1, &ids, 1, (const oq_attr[]){OQ_ATTR_I("to", OQ_DTYPE_INT64)});
}

static const char *fed_plus_one(oq_graph *g)
{
    return op2(g, "Add", "ids", vec(g, "one", 1, (int64_t[]){1}));
}

static const char *shape_of_x(oq_graph *g)
{
    return oq_graph_op(g, "Shape", 1, (const char *[]){"x"}, 0, NULL);
}

/* ORT's integer Div truncates: -11 / 2 is -5 (in range), not floor's -6 */
static const char *div_trunc(oq_graph *g)
{
    return op2(g, "Div", vec(g, "a", 2, (int64_t[]){-11, 7}), vec(g, "b", 2, (int64_t[]){2, 1}));
}

static const char *mod_of(oq_graph *g, int64_t fmod, const int64_t *a, const int64_t *b)
{
    const oq_attr f = OQ_ATTR_I("fmod", fmod);
    return oq_graph_op(g, "Mod", 2, (const char *[]){vec(g, "a", 2, a), vec(g, "b", 2, b)}, 1, &f);
}

/* fmod 0: the divisor's sign, -1 mod 6 = 5 (C's % gives -1, in range) */
static const char *mod_int(oq_graph *g)
{
    return mod_of(g, 0, (int64_t[]){-1, 13}, (int64_t[]){6, 7});
}

/* fmod 1: the dividend's sign, -13 fmod 7 = -6 (fmod 0 gives 1, in range) */
static const char *mod_fmod(oq_graph *g)
{
    return mod_of(g, 1, (int64_t[]){-13, 6}, (int64_t[]){7, 7});
}

/* Max of three, one a scalar: [6, 6, 8] */
static const char *max3(oq_graph *g)
{
    const char *in[] = {scalar(g, "six", 6), vec(g, "a", 3, (int64_t[]){1, 2, 3}), vec(g, "b", 3, (int64_t[]){0, 0, 8})};
    return oq_graph_op(g, "Max", 3, in, 0, NULL);
}

static const char *min2(oq_graph *g)
{
    return op2(g, "Min", vec(g, "a", 2, (int64_t[]){9, 2}), vec(g, "b", 2, (int64_t[]){7, 3}));
}

/* Where([true, false], [1, 8], [9, 7]) = [1, 7] */
static const char *where(oq_graph *g)
{
    const int64_t two = 2;
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_BOOL, 1, &two, "cond", NULL), OQ_OK);
    memcpy(t->data, (const uint8_t[]){1, 0}, 2);
    const char *cond = oq_graph_add_initializer(g, t, NULL);
    oq_tensor_free(t);
    const char *in[] = {cond, vec(g, "wx", 2, (int64_t[]){1, 8}), vec(g, "wy", 2, (int64_t[]){9, 7})};
    return oq_graph_op(g, "Where", 3, in, 0, NULL);
}

/* [[3], [7]] expanded to [2, 2]: [[3, 3], [7, 7]] */
static const char *expand(oq_graph *g)
{
    return op2(g, "Expand", ints(g, "a", 2, (int64_t[]){2, 1}, (int64_t[]){3, 7}), vec(g, "s", 2, (int64_t[]){2, 2}));
}

/* Tile([2, 3], [2]) * [1, 1, 1, 2] = [2, 3, 2, 6] */
static const char *tile(oq_graph *g)
{
    const char *t = op2(g, "Tile", vec(g, "a", 2, (int64_t[]){2, 3}), vec(g, "r", 1, (int64_t[]){2}));
    return op2(g, "Mul", t, vec(g, "m", 4, (int64_t[]){1, 1, 1, 2}));
}

/* [4, 9, 1] gathered at [-2, 0]: [9, 4] */
static const char *gather(oq_graph *g)
{
    return op2(g, "Gather", vec(g, "d", 3, (int64_t[]){4, 9, 1}), vec(g, "i", 2, (int64_t[]){-2, 0}));
}

static const char *div_zero(oq_graph *g)
{
    return op2(g, "Div", vec(g, "a", 2, (int64_t[]){1, 4}), vec(g, "b", 2, (int64_t[]){1, 0}));
}

static const char *mod_zero(oq_graph *g)
{
    return mod_of(g, 0, (int64_t[]){1, 4}, (int64_t[]){1, 0});
}

static const char *fmod_zero(oq_graph *g)
{
    return mod_of(g, 1, (int64_t[]){1, 4}, (int64_t[]){1, 0});
}

/* INT64_MIN / -1 and INT64_MIN mod -1: C's division traps there, so does ORT's */
static const char *div_min64(oq_graph *g)
{
    return op2(g, "Div", vec(g, "a", 1, (int64_t[]){INT64_MIN}), vec(g, "b", 1, (int64_t[]){-1}));
}

static const char *mod_min64(oq_graph *g)
{
    return mod_of(g, 0, (int64_t[]){INT64_MIN, 0}, (int64_t[]){-1, 1});
}

static const char *to_int32(oq_graph *g, const char *v)
{
    return oq_graph_op(g, "Cast", 1, &v, 1, (const oq_attr[]){OQ_ATTR_I("to", OQ_DTYPE_INT32)});
}

/* INT32_MIN / -1 in int32: 2^31 fits int64, not int32 */
static const char *div_min32(oq_graph *g)
{
    const char *a = to_int32(g, vec(g, "a", 1, (int64_t[]){INT32_MIN})), *b = to_int32(g, vec(g, "b", 1, (int64_t[]){-1}));
    return op2(g, "Div", a, b);
}

/* a = Add(b, one), b = Neg(a): no graph ORT loads, nor (since 2026-12-07) inspect */
static const char *cycle(oq_graph *g)
{
    const char *one = vec(g, "one", 1, (int64_t[]){1}), *a = "a", *b = "b";
    assert_int_equal(oq_graph_add_node(g, "Add", NULL, "loop_add", 2, (const char *[]){b, one}, 1, &a, 0, NULL), OQ_OK);
    assert_int_equal(oq_graph_add_node(g, "Neg", NULL, "loop_neg", 1, &a, 1, &b, 0, NULL), OQ_OK);
    return a;
}

/* n Neg nodes in a row from [1, 2] */
static const char *negs(oq_graph *g, const char *v, int n)
{
    for (int i = 0; i < n; i++) v = oq_graph_op(g, "Neg", 1, &v, 0, NULL);
    return v;
}

static const char *chain33(oq_graph *g)
{
    return negs(g, vec(g, "a", 2, (int64_t[]){1, 2}), 33);
}

/* n Identity nodes in a row from v */
static const char *identities(oq_graph *g, const char *v, int n)
{
    for (int i = 0; i < n; i++) v = oq_graph_op(g, "Identity", 1, &v, 0, NULL);
    return v;
}

/* the input 'ids' as fed, through 40 Identity nodes: longer than the folder's 32 */
static const char *fed40(oq_graph *g)
{
    return identities(g, "ids", 40);
}

/* ids + 1, then 40 (or 1000) Neg nodes: computed from the input, at any length */
static const char *fed_plus_one40(oq_graph *g)
{
    return negs(g, fed_plus_one(g), 40);
}

static const char *fed_plus_one1000(oq_graph *g)
{
    return negs(g, fed_plus_one(g), 1000);
}

/* 33 Neg nodes side by side, none deeper than 2 */
static const char *wide33(oq_graph *g)
{
    const char *in[33], *a = vec(g, "a", 1, (int64_t[]){1});
    for (int i = 0; i < 33; i++) in[i] = oq_graph_op(g, "Neg", 1, &a, 0, NULL);
    const oq_attr axis = OQ_ATTR_I("axis", 0);
    return oq_graph_op(g, "Concat", 33, in, 1, &axis);
}

/* v, 16 Negs from [1, 2] (itself again), is Reshape's data and its shape: 17 operators, not 33 */
static const char *param_and_data(oq_graph *g)
{
    const char *v = negs(g, vec(g, "a", 2, (int64_t[]){1, 2}), 16);
    return op2(g, "Reshape", v, v);
}

/* r = Range(0, 600000) and s = Sub(r, r), each read twice, are kept for their second reader:
 * 1.2 million elements, above the memo's cap of 1048576 (each alone below it) */
static const char *memo_cap(oq_graph *g)
{
    const char *r = oq_graph_op(g, "Range", 3, (const char *[]){scalar(g, "s", 0), scalar(g, "l", 600000), scalar(g, "d", 1)},
                                0, NULL);
    const char *s = op2(g, "Sub", r, r);
    return op2(g, "Sub", s, s);
}

typedef const char *(*build_fn)(oq_graph *g);

/* g written to path, its input "dflt_in" renamed "dflt" (the builder refuses a second value of
 * one name): the input then has a default */
static void write_model(oq_graph *g, const char *path)
{
    uint8_t *buf;
    size_t n;
    assert_int_equal(oq_graph_serialize(g, &buf, &n, NULL), OQ_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    assert_non_null(m);
    for (size_t i = 0; i < m->graph->n_input; i++)
        if (!strcmp(m->graph->input[i]->name, "dflt_in")) strcpy(m->graph->input[i]->name, "dflt");
    n = onnx__model_proto__pack(m, buf);
    onnx__model_proto__free_unpacked(m, NULL);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    free(buf);
}

typedef oq_status (*model_fn)(const char *model, char *msg, size_t cap, char *notes, size_t ncap);

/* inspect's read of `model`: its status, the message in msg (notes unused). */
static oq_status inspected(const char *model, char *msg, size_t cap, char *notes, size_t ncap)
{
    (void)notes;
    (void)ncap;
    oq_model_info *mi = NULL;
    oq_err err = {0};
    oq_status st = oq_model_inspect_file(model, &mi, &err);
    snprintf(msg, cap, "%s", st ? err.msg : "");
    oq_model_info_free(mi);
    return st;
}

/* `fn` on the model Gather(E, build(g)) alone. */
static oq_status built(build_fn build, model_fn fn, char *msg, size_t cap, char *notes, size_t ncap)
{
    char *dir = temp_dir("const_fold");
    char model[512];
    snprintf(model, sizeof model, "%s/cf.onnx", dir);
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "const_fold", &g, NULL), OQ_OK);
    const oq_dim d2[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 1, d2);
    oq_graph_add_input(g, "ids", OQ_DTYPE_INT64, 1, d2);
    const char *idx = build(g), *data = zeros_initializer(g, "E", 2, 5), *out = "out";
    const oq_attr axis = OQ_ATTR_I("axis", 1);
    assert_int_equal(oq_graph_add_node(g, "Gather", NULL, "g", 2, (const char *[]){data, idx}, 1, &out, 1, &axis), OQ_OK);
    oq_graph_add_output(g, out, out, OQ_DTYPE_FLOAT32, -1, NULL);
    oq_graph_add_output(g, "x", "y", OQ_DTYPE_FLOAT32, 1, d2);
    write_model(g, model);
    oq_graph_free(g);
    oq_status st = fn(model, msg, cap, notes, ncap);
    remove_dir(dir);
    return st;
}

/* validate's check of the model Gather(E, build(g)) alone: its status, the message in msg;
 * inspect's warnings, joined, in notes. */
static oq_status check(build_fn build, char *msg, size_t cap, char *notes, size_t ncap)
{
    return built(build, check_model_file, msg, cap, notes, ncap);
}

/* refused before a run, naming the node, the element, the value and where they came from */
static void refused(build_fn build, const char *origin, const char *at)
{
    char msg[2048], notes[4096];
    assert_int_equal(check(build, msg, sizeof msg, notes, sizeof notes), OQ_ERR_FORMAT);
    expect(msg, "cf.onnx: Gather 'g': its constant indices '");
    expect(msg, origin);
    expect(msg, at);
    expect(msg, "it indexes axis 1 of its data, of size 5 (indices -5..4)");
    expect(notes, at);
}

/* not refused; inspect says what it could not check, and why */
static void said(build_fn build, const char *note)
{
    char msg[2048], notes[4096];
    if (check(build, msg, sizeof msg, notes, sizeof notes)) fail_msg("refused: %s", msg);
    expect(notes, "Gather 'g': its indices '");
    expect(notes, note);
}

static void add_refused(void **state)
{
    (void)state;
    refused(add_out, "(the constants 'a', 'b' through Add)", "hold 5 at element [1]");
}

/* folded, in range: neither refused nor noted */
static void accepted(build_fn build)
{
    char msg[2048], notes[4096];
    if (check(build, msg, sizeof msg, notes, sizeof notes)) fail_msg("refused: %s", msg);
    assert_string_equal(notes, "");
}

static void add_in_range_accepted(void **state)
{
    (void)state;
    accepted(add_in);
}

static void sub_refused(void **state)
{
    (void)state;
    refused(sub_broadcast, "through Sub)", "hold -7 at element [0]");
}

static void mul_refused(void **state)
{
    (void)state;
    refused(mul_broadcast, "through Mul)", "hold 6 at element [1,1]");
}

static void neg_refused(void **state)
{
    (void)state;
    refused(neg, "(the constant 'a' through Neg)", "hold -6 at element [1]");
}

static void concat_refused(void **state)
{
    (void)state;
    refused(concat, "through Concat)", "hold 9 at element [2]");
}

static void range_refused(void **state)
{
    (void)state;
    refused(range, "through Range)", "hold 6 at element [3]");
}

static void slice_refused(void **state)
{
    (void)state;
    refused(slice_back, "(the constant 'data' through Slice)", "hold 6 at element [0]");
}

static void slice_empty_accepted(void **state)
{
    (void)state;
    accepted(slice_empty_r2); /* first: the old count read 3 elements of a 1-slot allocation */
    accepted(slice_empty_r1);
}

/* each value folded once: 6 (or 20) operators, not 2^6, and each name said once */
static void read_twice_refused(void **state)
{
    (void)state;
    refused(doubled6, "' (the constant 'a' through Add) hold 64 at element [1]", "hold 64 at element [1]");
    refused(doubled20, "' (the constant 'a' through Add) hold 1048576 at element [1]", "hold 1048576 at element [1]");
}

static void constant_of_shape_refused(void **state)
{
    (void)state;
    refused(constant_of_shape, "' (made by ConstantOfShape '", "') hold 8 at element [0,0]");
}

static void value_int_refused(void **state)
{
    (void)state;
    refused(value_int, "' hold 9 (a scalar); it indexes", "hold 9 (a scalar)");
}

static void value_ints_refused(void **state)
{
    (void)state;
    refused(value_ints, "' hold 9 at element [1]", "hold 9 at element [1]");
}

static void rank10_reshape_refused(void **state)
{
    (void)state;
    refused(rank10, "(the constant 'a' through Reshape)", "hold 7 at element [0,0,0,0,0,0,0,0,0,1]");
}

static void default_refused(void **state)
{
    (void)state;
    refused(default_input, "(the default of input 'dflt')", "hold 6 at element [1]");
}

static void overflow_said(void **state)
{
    (void)state;
    said(overflow, "are a constant, not checked against its data's sizes: Add '");
    said(overflow, "overflows int64 at element 0");
}

static void too_large_said(void **state)
{
    (void)state;
    said(too_large, "makes more than 1048576 elements, too large to fold");
}

static void runtime_indices_said(void **state)
{
    (void)state;
    /* (a Cast on the way is named: the check judges what it makes of each id) */
    said(fed, "are the input 'ids' through Cast 'Cast' to int64: not checked here; validate and bench hold each "
              "batch's, as those Casts make it,");
    said(fed_plus_one, "are computed at run time (from the input 'ids'): not checked against its data's sizes, left "
                       "to ONNX Runtime");
    said(shape_of_x, "are computed at run time (from '");
    said(shape_of_x, "the output of Shape '");
}

static void div_mod_refused(void **state)
{
    (void)state;
    refused(div_trunc, "(the constants 'a', 'b' through Div)", "hold 7 at element [1]");
    refused(mod_int, "through Mod)", "hold 5 at element [0]");
    refused(mod_fmod, "through Mod)", "hold -6 at element [0]");
}

static void min_max_where_refused(void **state)
{
    (void)state;
    refused(max3, "(the constants 'six', 'a', 'b' through Max)", "hold 6 at element [0]");
    refused(min2, "through Min)", "hold 7 at element [0]");
    refused(where, "(the constants 'cond', 'wx', 'wy' through Where)", "hold 7 at element [1]");
}

static void expand_tile_gather_refused(void **state)
{
    (void)state;
    refused(expand, "(the constant 'a' through Expand)", "hold 7 at element [1,0]");
    refused(tile, "(the constants 'a', 'm' through Tile, Mul)", "hold 6 at element [3]");
    refused(gather, "(the constants 'd', 'i' through Gather)", "hold 9 at element [0]");
}

/* never a trap or UB (UBSan runs this): not folded, the node named */
static void division_by_zero_said(void **state)
{
    (void)state;
    said(div_zero, "not checked against its data's sizes: Div '");
    said(div_zero, "divides by zero at element 1 (4 by 0)");
    said(mod_zero, "' divides by zero at element 1 (4 by 0)");
    said(fmod_zero, "' divides by zero at element 1 (4 by 0)");
    said(div_min64, "' overflows int64 at element 0 (-9223372036854775808 and -1): left to ONNX Runtime");
    said(mod_min64, "' overflows int64 at element 0 (-9223372036854775808 and -1)");
    said(div_min32, "' overflows int32 at element 0 (-2147483648 and -1)");
}

static void cycle_and_chain_said(void **state)
{
    (void)state;
    char msg[2048], notes[16];
    /* every model read refuses a cycle first, naming its nodes (graphdefs.c): the fold never meets one */
    assert_int_equal(built(cycle, inspected, msg, sizeof msg, notes, sizeof notes), OQ_ERR_FORMAT);
    expect(msg, "cf.onnx: the graph has a cycle (in the model as given): node 'loop_add' (Add) reads 'b' of node "
                "'loop_neg' (Neg), which reads 'a' of node 'loop_add' (Add)");
    said(chain33, "a chain of more than 32 operators leads to them (Neg '");
    said(wide33, "more than 32 operators lead to them (Neg '");
}

/* Indices that come from an input through a chain longer than the folder's limit are no constant:
 * said as the input's (a chain validate's batch check follows) or as computed at run time, as a
 * short chain's are; the walk that finds the input has no limit. */
static void long_chain_from_input_said(void **state)
{
    (void)state;
    said(fed40, "are the input 'ids' as fed: not checked here; validate and bench hold each batch's to its data's "
                "sizes before running it");
    said(fed_plus_one40, "are computed at run time (from the input 'ids'): not checked against its data's sizes, left "
                         "to ONNX Runtime");
    said(fed_plus_one1000, "are computed at run time (from the input 'ids'): not checked against its data's sizes, "
                           "left to ONNX Runtime");
}

static void param_and_data_counted_once(void **state)
{
    (void)state;
    accepted(param_and_data);
}

static void memo_cap_said(void **state)
{
    (void)state;
    said(memo_cap, "the values read more than once on the way make more than 1048576 elements, too large to fold");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_refused),
        cmocka_unit_test(add_in_range_accepted),
        cmocka_unit_test(sub_refused),
        cmocka_unit_test(mul_refused),
        cmocka_unit_test(neg_refused),
        cmocka_unit_test(concat_refused),
        cmocka_unit_test(range_refused),
        cmocka_unit_test(slice_refused),
        cmocka_unit_test(slice_empty_accepted),
        cmocka_unit_test(read_twice_refused),
        cmocka_unit_test(constant_of_shape_refused),
        cmocka_unit_test(value_int_refused),
        cmocka_unit_test(value_ints_refused),
        cmocka_unit_test(rank10_reshape_refused),
        cmocka_unit_test(default_refused),
        cmocka_unit_test(overflow_said),
        cmocka_unit_test(too_large_said),
        cmocka_unit_test(runtime_indices_said),
        cmocka_unit_test(div_mod_refused),
        cmocka_unit_test(min_max_where_refused),
        cmocka_unit_test(expand_tile_gather_refused),
        cmocka_unit_test(division_by_zero_said),
        cmocka_unit_test(cycle_and_chain_said),
        cmocka_unit_test(long_chain_from_input_said),
        cmocka_unit_test(param_and_data_counted_once),
        cmocka_unit_test(memo_cap_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
