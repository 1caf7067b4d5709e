/* Ids that reach a Gather through Casts are checked per batch as the Casts make them, the value
 * ONNX Runtime indexes with: a float id truncated toward zero, an int64 id cast to int32 kept to
 * its low 32 bits. A value a Cast leaves undefined (NaN, out of the integer type's range) is an
 * input error naming the element, never a run that ORT fails with its own message. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inspect/idcast-impl.h"
#include "ortqual/graph.h"
#include "ortqual/npz.h"
#include "ortqual/validate.h"
#define TESTUTIL_GRAPH
#define TESTUTIL_CHECK_BATCH
#include "testutil.h"

/* A Gather 'name' (axis 0) of `ids` over zeros [rows, 2]: its output, declared [n, 2]. */
static void gather(oq_graph *g, const char *name, const char *ids, int64_t rows, int64_t n)
{
    char table[64];
    snprintf(table, sizeof table, "%s_table", name);
    const char *data = zeros_initializer(g, table, rows, 2), *out[] = {name};
    assert_int_equal(oq_graph_add_node(g, "Gather", NULL, name, 2, (const char *[]){data, ids}, 1, out, 0, NULL),
                     OQ_OK);
    const oq_dim d[] = {OQ_DIM(n), OQ_DIM(2)};
    assert_int_equal(oq_graph_add_output(g, name, name, OQ_DTYPE_FLOAT32, 2, d), OQ_OK);
}

/* A Cast 'name' of `in` to `to`: its output. */
static const char *cast(oq_graph *g, const char *name, const char *in, oq_dtype to)
{
    const oq_attr a = OQ_ATTR_I("to", to);
    const char *out[] = {name};
    assert_int_equal(oq_graph_add_node(g, "Cast", NULL, name, 1, &in, 1, out, 1, &a), OQ_OK);
    return name;
}

/* fid float32 [4] -> Cast 'cf' to int64 -> Gather 'emb' over 5 rows; wid int64 [3] -> Cast 'cw' to
 * int32 -> Gather 'g32' over 3 rows; bid uint8 [2] -> Cast 'cb' to int64 -> Gather 'byte' over
 * 200 rows; sid int64 [2] -> Gather 'big' over 10 rows as it is, and -> Cast 'cs' to int32 ->
 * Gather 'small' over 3 rows. */
static void write_model(const char *path)
{
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "idcast", &g, NULL), OQ_OK);
    const oq_dim d4[] = {OQ_DIM(4)}, d3[] = {OQ_DIM(3)}, d2[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "fid", OQ_DTYPE_FLOAT32, 1, d4);
    oq_graph_add_input(g, "wid", OQ_DTYPE_INT64, 1, d3);
    oq_graph_add_input(g, "bid", OQ_DTYPE_UINT8, 1, d2);
    oq_graph_add_input(g, "sid", OQ_DTYPE_INT64, 1, d2);
    gather(g, "emb", cast(g, "cf", "fid", OQ_DTYPE_INT64), 5, 4);
    gather(g, "g32", cast(g, "cw", "wid", OQ_DTYPE_INT32), 3, 3);
    gather(g, "byte", cast(g, "cb", "bid", OQ_DTYPE_INT64), 200, 2);
    gather(g, "big", "sid", 10, 2);
    gather(g, "small", cast(g, "cs", "sid", OQ_DTYPE_INT32), 3, 2);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* The batch's values, each in range as the Casts make it (4.9 and -5.9 truncate to 4 and -5;
 * 4294967298 is 2 as int32). */
typedef struct batch {
    float fid[4];
    int64_t wid[3];
    uint8_t bid[2];
    int64_t sid[2];
} batch;

static const batch GOOD = {{0.0f, 4.9f, -5.9f, 2.0f}, {0, 4294967298LL, -3}, {0, 199}, {0, 2}};

static void write_batch(const char *path, const batch *b)
{
    const int64_t s4[] = {4}, s3[] = {3}, s2[] = {2};
    const struct {
        const char *name;
        oq_dtype type;
        const int64_t *shape;
        const void *vals;
    } in[] = {{"fid", OQ_DTYPE_FLOAT32, s4, b->fid},
              {"wid", OQ_DTYPE_INT64, s3, b->wid},
              {"bid", OQ_DTYPE_UINT8, s2, b->bid},
              {"sid", OQ_DTYPE_INT64, s2, b->sid}};
    oq_tensor *t[4];
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(oq_tensor_create(&t[i], in[i].type, 1, in[i].shape, in[i].name, NULL), OQ_OK);
        memcpy(t[i]->data, in[i].vals, oq_tensor_nbytes(t[i]));
    }
    assert_int_equal(oq_npz_write(path, 4, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (size_t i = 0; i < 4; i++) oq_tensor_free(t[i]);
}

/* oq_validate_check_inputs of the model and batch b: the status, the message in msg. */
static oq_status check(const batch *b, char *msg, size_t cap)
{
    char *dir = temp_dir("idcast"), model[512], npz[512];
    snprintf(model, sizeof model, "%s/idcast.onnx", dir);
    snprintf(npz, sizeof npz, "%s/b.npz", dir);
    write_model(model);
    write_batch(npz, b);
    oq_status st = check_batch_file(model, npz, msg, cap);
    remove_dir(dir);
    return st;
}

static void expect_refusal(const batch *b, const char *want)
{
    char msg[1024];
    oq_status st = check(b, msg, sizeof msg);
    expect_batch_refused(st, msg, want);
}

/* in range as ORT indexes: an int64 id past int32 that wraps into the table passes */
static void in_range_as_cast_passes(void **state)
{
    (void)state;
    char msg[1024];
    if (check(&GOOD, msg, sizeof msg)) fail_msg("refused: %s", msg);
}

/* defect 5: a float id through a Cast to int64, truncated toward zero, is judged */
static void float_id_judged(void **state)
{
    (void)state;
    batch b = GOOD;
    b.fid[1] = 5.0f;
    expect_refusal(&b, "input 'fid' holds 5 at element [1]; the model's Gather 'emb' reads a table of 5 rows "
                       "(ids -5..4)");
    b = GOOD;
    b.fid[2] = -6.5f;
    expect_refusal(&b, "input 'fid' holds -6.5 at element [2], which becomes -6 through Cast 'cf' to int64; the "
                       "model's Gather 'emb' reads a table of 5 rows (ids -5..4)");
    b = GOOD;
    b.fid[3] = 1e20f; /* no int64 holds it: ONNX leaves the Cast undefined */
    expect_refusal(&b, "input 'fid' holds 1.00000002e+20 at element [3], which Cast 'cf' to int64 leaves undefined "
                       "(outside int64's range: ONNX gives it no value) on its way to the model's Gather 'emb'");
}

/* a uint8 id through a Cast to int64 */
static void byte_id_judged(void **state)
{
    (void)state;
    batch b = GOOD;
    b.bid[0] = 200;
    expect_refusal(&b, "input 'bid' holds 200 at element [0]; the model's Gather 'byte' reads a table of 200 rows");
}

/* defect 6: an int64 id through a Cast to int32 is judged on its low 32 bits, both values said */
static void int32_wrap_judged(void **state)
{
    (void)state;
    batch b = GOOD;
    b.wid[2] = 4294967299LL;
    expect_refusal(&b, "input 'wid' holds 4294967299 at element [2], which becomes 3 through Cast 'cw' to int32; the "
                       "model's Gather 'g32' reads a table of 3 rows (ids -3..2)");
    b = GOOD;
    b.wid[0] = 2147483648LL;
    expect_refusal(&b, "input 'wid' holds 2147483648 at element [0], which becomes -2147483648 through Cast 'cw' to "
                       "int32");
}

/* one input on two routes: each Gather judges the value it reads (as it is, and as int32) */
static void each_route_judged(void **state)
{
    (void)state;
    batch b = GOOD;
    b.sid[1] = 4294967297LL; /* 1 as int32: in 'small', but 'big' reads it as it is */
    expect_refusal(&b, "input 'sid' holds 4294967297 at element [1]; the model's Gather 'big' reads a table of 10 "
                       "rows");
    b = GOOD;
    b.sid[1] = 5; /* in 'big', not in 'small' */
    expect_refusal(&b, "input 'sid' holds 5 at element [1]; the model's Gather 'small' reads a table of 3 rows");
}

/* rid int64 [2] through 9 Casts to int32 ('c0'..'c8'), each to its Gather 'g0'..'g8' over 10 rows
 * but the last, over 3: every route is judged (the check kept 8 and left the ninth to ORT, which
 * failed the run at 'g8', while inspect said validate checks it). rid = {0, last}. */
/* A graph named `name` with the input rid int64 [2]. */
static oq_graph *rid_graph(const char *name)
{
    const oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, name, &g, NULL), OQ_OK);
    const oq_dim d2[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "rid", OQ_DTYPE_INT64, 1, d2);
    return g;
}

/* g written (and freed) in a temporary folder, then the batch rid = {0, last} checked against it. */
static oq_status judge_rid(oq_graph *g, int64_t last, char *msg, size_t cap)
{
    char *dir = temp_dir("idcastrid"), model[512], npz[512];
    snprintf(model, sizeof model, "%s/m.onnx", dir);
    snprintf(npz, sizeof npz, "%s/b.npz", dir);
    assert_int_equal(oq_graph_write(g, model, 1, NULL), OQ_OK);
    oq_graph_free(g);
    const int64_t s2[] = {2};
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_INT64, 1, s2, "rid", NULL), OQ_OK);
    ((int64_t *)t->data)[0] = 0;
    ((int64_t *)t->data)[1] = last;
    assert_int_equal(oq_npz_write(npz, 1, (const oq_tensor *const *)&t, 0, 1, NULL), OQ_OK);
    oq_tensor_free(t);
    oq_status st = check_batch_file(model, npz, msg, cap);
    remove_dir(dir);
    return st;
}

static oq_status nine_routes(int64_t last, char *msg, size_t cap)
{
    oq_graph *g = rid_graph("nine");
    char c[9][8], n[9][8]; /* (the graph holds the names until written) */
    for (int i = 0; i < 9; i++) {
        snprintf(c[i], sizeof c[i], "c%d", i);
        snprintf(n[i], sizeof n[i], "g%d", i);
        gather(g, n[i], cast(g, c[i], "rid", OQ_DTYPE_INT32), i == 8 ? 3 : 10, 2);
    }
    return judge_rid(g, last, msg, cap);
}

static void ninth_route_judged(void **state)
{
    (void)state;
    char msg[1024];
    if (nine_routes(2, msg, sizeof msg)) fail_msg("refused: %s", msg);
    oq_status st = nine_routes(5, msg, sizeof msg); /* in the 10-row tables, not in g8's 3 */
    expect_batch_refused(st, msg, "input 'rid' holds 5 at element [1]; the model's Gather 'g8' reads a table of 3 rows "
                                  "(ids -3..2)");
}

/* rid int64 [2] passed on through `hops` Identity nodes ('i0'...) to a Gather 'deep' over 3 rows,
 * rid = {0, last}: the walk from the input follows a route however long (it stopped after 4,096
 * node visits, and a route cut there was neither checked nor named, while inspect said validate
 * checks the ids: ORT failed the run at the Gather). */
static oq_status long_route(int hops, int64_t last, char *msg, size_t cap)
{
    oq_graph *g = rid_graph("long");
    char(*name)[16] = calloc((size_t)hops, sizeof *name); /* (the graph holds the names until written) */
    assert_non_null(name);
    const char *prev = "rid";
    for (int i = 0; i < hops; i++) {
        snprintf(name[i], sizeof name[i], "i%d", i);
        const char *out[] = {name[i]};
        assert_int_equal(oq_graph_add_node(g, "Identity", NULL, name[i], 1, &prev, 1, out, 0, NULL), OQ_OK);
        prev = name[i];
    }
    gather(g, "deep", prev, 3, 2);
    oq_status st = judge_rid(g, last, msg, cap);
    free(name);
    return st;
}

static void long_route_judged(void **state)
{
    (void)state;
    char msg[1024];
    if (long_route(5000, 2, msg, sizeof msg)) fail_msg("refused: %s", msg);
    oq_status st = long_route(5000, 5, msg, sizeof msg);
    expect_batch_refused(st, msg, "input 'rid' holds 5 at element [1]; the model's Gather 'deep' reads a table of 3 "
                                  "rows (ids -3..2)");
}

/* An integer value of `type` through Casts to to[0..n-1]: the index it ends as, or why it has none. */
static void through(oq_dtype type, uint64_t bits, double f, const oq_dtype *to, int n, const char *want)
{
    oq_idval v = {type, f, bits};
    char got[64] = "";
    const char *why = NULL;
    for (int j = 0; j < n && !why; j++) why = oq_idval_cast(&v, to[j]);
    if (!why) oq_idval_str(v, got, sizeof got);
    if (strcmp(why ? why : got, want)) fail_msg("got '%s', want '%s'", why ? why : got, want);
}

/* the value rules: as ONNX defines a Cast and ORT computes it, or no value where ONNX has none */
static void cast_rules(void **state)
{
    (void)state;
    const oq_dtype i32[] = {OQ_DTYPE_INT32}, i64[] = {OQ_DTYPE_INT64}, u8_i64[] = {OQ_DTYPE_UINT8, OQ_DTYPE_INT64},
                   f32_i64[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_INT64}, f16_i64[] = {OQ_DTYPE_FLOAT16, OQ_DTYPE_INT64},
                   b_i64[] = {OQ_DTYPE_BOOL, OQ_DTYPE_INT64};
    through(OQ_DTYPE_INT64, 4294967297ULL, 0, i32, 1, "1"); /* low 32 bits */
    through(OQ_DTYPE_INT64, 2147483648ULL, 0, i32, 1, "-2147483648");
    through(OQ_DTYPE_INT64, UINT64_MAX, 0, u8_i64, 2, "255"); /* -1 as uint8 */
    through(OQ_DTYPE_UINT64, UINT64_MAX, 0, i64, 1, "-1");
    through(OQ_DTYPE_INT64, 16777217, 0, f32_i64, 2, "16777216"); /* float32 rounds it */
    through(OQ_DTYPE_FLOAT32, 0, 2.9, i32, 1, "2"); /* toward zero */
    through(OQ_DTYPE_FLOAT32, 0, -2.9, i32, 1, "-2");
    through(OQ_DTYPE_FLOAT64, 0, 3e9, i32, 1, "outside int32's range");
    through(OQ_DTYPE_FLOAT32, 0, NAN, i64, 1, "NaN");
    through(OQ_DTYPE_FLOAT32, 0, -INFINITY, i64, 1, "infinity");
    through(OQ_DTYPE_FLOAT32, 0, 70000, f16_i64, 2, "infinity"); /* past float16's largest */
    through(OQ_DTYPE_FLOAT32, 0, 2049, f16_i64, 2, "2048"); /* float16 rounds to even */
    through(OQ_DTYPE_FLOAT32, 0, 0.5, b_i64, 2, "1"); /* not zero: true */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(in_range_as_cast_passes), cmocka_unit_test(float_id_judged),
        cmocka_unit_test(byte_id_judged),          cmocka_unit_test(int32_wrap_judged),
        cmocka_unit_test(each_route_judged),       cmocka_unit_test(cast_rules),
        cmocka_unit_test(ninth_route_judged),       cmocka_unit_test(long_route_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
