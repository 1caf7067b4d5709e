/* bench --model: --dim/--sweep/--shape parsing, the shapes of each point (named
 * dimensions bound across inputs, every usage error named), generated inputs, ORT's
 * profile read per run, and a real PyTorch export timed against its saved outputs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "bench/bench-impl.h"
#include "core/core-impl.h"
#include "inspect/inputuse-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/convert.h"
#include "ortqual/fileio.h"
#include "ortqual/bench.h"
#include "ortqual/events.h"
#include "ortqual/graph.h"
#include "ortqual/npz.h"
#include "ortqual/proc.h"
#include "validate/validate-impl.h"

#define TESTUTIL_GRAPH
#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

#define FX OQ_SOURCE_DIR "/tests/fixtures/torch/hand_attention/"

/* ---- parsing ------------------------------------------------------------------------ */

static void test_dim_and_shape_parse(void **state)
{
    (void)state;
    oq_bench_dim d;
    oq_err err = {0};
    assert_int_equal(oq_bench_dim_parse("seq=512,1024,2048", &d, &err), OQ_OK);
    assert_string_equal(d.name, "seq");
    assert_int_equal(d.n_values, 3);
    assert_int_equal(d.values[2], 2048);
    assert_int_equal(oq_bench_dim_parse("seq=", &d, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_bench_dim_parse("=4", &d, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_bench_dim_parse("seq=4,x", &d, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "'x' is not a size"));
    assert_int_equal(oq_bench_dim_parse("seq=-4", &d, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_bench_dim_parse("1b=4", &d, &err), OQ_ERR_INVALID_ARG);
    /* a list longer than the parse buffer is refused, not cut at the buffer's end */
    char longer[1200] = "seq=";
    for (size_t k = strlen(longer); k + 2 < sizeof longer; k += 2) memcpy(longer + k, "1,", 3);
    assert_int_equal(oq_bench_dim_parse(longer, &d, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "the list is longer than 1023 characters"));

    oq_bench_shape s;
    assert_int_equal(oq_bench_shape_parse("features=1,L,17", &s, &err), OQ_OK);
    assert_string_equal(s.input, "features");
    assert_int_equal(s.ndim, 3);
    assert_int_equal(s.dims[0], 1);
    assert_int_equal(s.dims[1], -1);
    assert_string_equal(s.dim_names[1], "L");
    assert_string_equal(s.dim_names[2], "");
    assert_int_equal(oq_bench_shape_parse("scalar=", &s, &err), OQ_OK);
    assert_int_equal(s.ndim, 0);
    assert_int_equal(oq_bench_shape_parse("x=1,2,3,4,5,6,7,8,9", &s, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_bench_shape_parse("x", &s, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(oq_bench_shape_parse("x=1,-2", &s, &err), OQ_ERR_INVALID_ARG);
    /* an empty item (a stray comma) and a size 0 are refused: nothing would be computed */
    assert_int_equal(oq_bench_shape_parse("x=1,,2", &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "input shape 'x=1,,2': item 2 is empty"); /* no --shape: the API's words */
    assert_int_equal(oq_bench_shape_parse("x=0,8", &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "size 0 (axis 0)"));
    assert_int_equal(oq_bench_dim_parse("seq=4,,8", &d, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "item 2 is empty"));
    assert_int_equal(oq_bench_dim_parse("seq=8,8", &d, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "8 is listed twice (items 1 and 2)"));
    assert_int_equal(oq_bench_dim_parse("batch=0", &d, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "size 0"));
    /* --dim: one value, and its own syntax in the message */
    assert_int_equal(oq_bench_dim_parse_one("batch=4", &d, &err), OQ_OK);
    assert_int_equal(d.values[0], 4);
    assert_int_equal(oq_bench_dim_parse_one("seq", &d, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "dimension 'seq': want NAME=V");
    assert_int_equal(oq_bench_dim_parse_one("seq=4,8", &d, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "dimension 'seq=4,8': one value (a sweep is opts.sweeps)");
}

/* ---- the shapes of a point ------------------------------------------------------------ */

/* A model's inputs as inspect.h gives them: features [batch, seq, 17] float32,
 * mask [batch, seq] bool, ids [batch, ?] int64. */
static char *features_dims[] = {"batch", "seq", "17"}, *mask_dims[] = {"batch", "seq"}, *ids_dims[] = {"batch", "?"};
static const oq_io_info ins[] = {{"features", OQ_DTYPE_FLOAT32, 3, features_dims},
                                 {"mask", OQ_DTYPE_BOOL, 2, mask_dims},
                                 {"ids", OQ_DTYPE_INT64, 2, ids_dims}};
/* its mask input, as oq_bench_choose_mask takes it from the graph */
static const oq_bench_mask MASK1 = {.index = 1, .source = "graph"};

static oq_bench_opts opts_with(size_t n_shapes, const oq_bench_shape *shapes, size_t n_dims, const oq_bench_dim *dims,
                               size_t n_sweeps, const oq_bench_dim *sweeps)
{
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    o.n_input_shapes = n_shapes;
    o.input_shapes = shapes;
    o.n_dims = n_dims;
    o.dims = dims;
    o.n_sweeps = n_sweeps;
    o.sweeps = sweeps;
    return o;
}

static int64_t dim_of(const oq_bench_point *p, const char *name)
{
    for (size_t i = 0; i < p->n_dims; i++)
        if (!strcmp(p->dims[i].name, name)) return p->dims[i].value;
    return -1;
}

static void test_named_dims_bind_across_inputs(void **state)
{
    (void)state;
    oq_bench_shape sh[2];
    oq_bench_dim sw;
    oq_err err = {0};
    assert_int_equal(oq_bench_shape_parse("features=2,L,17", &sh[0], &err), OQ_OK);
    assert_int_equal(oq_bench_shape_parse("ids=2,L", &sh[1], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse("L=8,16", &sw, &err), OQ_OK);
    oq_bench_opts o = opts_with(2, sh, 0, NULL, 1, &sw);
    assert_int_equal(oq_bench_point_count(&o), 2);
    oq_bench_point p;
    assert_int_equal(oq_bench_resolve_point(ins, 3, NULL, &o, &MASK1, 1, &p, &err), OQ_OK);
    assert_int_equal(p.n_inputs, 3);
    assert_int_equal(p.inputs[0].shape[1], 16);
    assert_string_equal(p.inputs[0].source, "shape");
    assert_string_equal(p.inputs[0].fill, "uniform");
    /* the mask had no shape given: batch and seq come from features */
    assert_string_equal(p.inputs[1].source, "generated");
    assert_string_equal(p.inputs[1].fill, "mask");
    assert_int_equal(p.inputs[1].shape[0], 2);
    assert_int_equal(p.inputs[1].shape[1], 16);
    assert_string_equal(p.inputs[2].fill, "integers");
    assert_int_equal(dim_of(&p, "L"), 16);
    assert_int_equal(dim_of(&p, "batch"), 2);
    assert_int_equal(dim_of(&p, "seq"), 16);
    oq_bench_point_clear(&p);
}

/* torch.export's dimension names ("s0 + 1", "Min(s0, 1024)", "x;y=1") are dimensions too: a
 * --shape binds them and the point keeps each, so rows of other sizes are other rows. */
static void test_torch_names_kept_in_the_point(void **state)
{
    (void)state;
    static char *f_dims[] = {"s0 + 1", "Min(s0, 1024)", "x;y=1"};
    const oq_io_info torch[] = {{"features", OQ_DTYPE_FLOAT32, 3, f_dims}};
    oq_bench_shape sh;
    oq_err err = {0};
    assert_int_equal(oq_bench_shape_parse("features=1,8,4", &sh, &err), OQ_OK);
    oq_bench_opts o = opts_with(1, &sh, 0, NULL, 0, NULL);
    oq_bench_point p;
    assert_int_equal(oq_bench_resolve_point(torch, 1, NULL, &o, NULL, 0, &p, &err), OQ_OK);
    assert_int_equal(p.n_dims, 3);
    assert_int_equal(dim_of(&p, "s0 + 1"), 1);
    assert_int_equal(dim_of(&p, "Min(s0, 1024)"), 8);
    assert_int_equal(dim_of(&p, "x;y=1"), 4);
    oq_bench_point_clear(&p);
}

static void test_sweeps_first_slowest(void **state)
{
    (void)state;
    oq_bench_dim sw[2];
    oq_bench_shape sh;
    oq_err err = {0};
    assert_int_equal(oq_bench_dim_parse("batch=1,2", &sw[0], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse("seq=3,4,5", &sw[1], &err), OQ_OK);
    assert_int_equal(oq_bench_shape_parse("ids=batch,7", &sh, &err), OQ_OK);
    oq_bench_opts o = opts_with(1, &sh, 0, NULL, 2, sw);
    assert_int_equal(oq_bench_point_count(&o), 6);
    oq_bench_point p;
    const int64_t want[6][2] = {{1, 3}, {1, 4}, {1, 5}, {2, 3}, {2, 4}, {2, 5}};
    for (size_t k = 0; k < 6; k++) {
        assert_int_equal(oq_bench_resolve_point(ins, 3, NULL, &o, &MASK1, k, &p, &err), OQ_OK);
        assert_int_equal(dim_of(&p, "batch"), want[k][0]);
        assert_int_equal(dim_of(&p, "seq"), want[k][1]);
        assert_int_equal(p.inputs[2].shape[1], 7);
        oq_bench_point_clear(&p);
    }
}

/* The error of resolving point 0 with these options contains `want`. */
static void expect_error(const oq_bench_opts *o, const oq_npz *npz, const char *want)
{
    oq_bench_point p;
    oq_err err = {0};
    assert_int_equal(oq_bench_resolve_point(ins, 3, npz, o, &MASK1, 0, &p, &err), OQ_ERR_INVALID_ARG);
    if (!strstr(err.msg, want)) fail_msg("error '%s' lacks '%s'", err.msg, want);
    assert_null(p.inputs);
}

static void test_usage_errors_name_the_input_and_axis(void **state)
{
    (void)state;
    oq_err err = {0};
    oq_bench_dim d[3];
    oq_bench_shape sh[2];
    assert_int_equal(oq_bench_dim_parse("batch=2", &d[0], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse("seq=4", &d[1], &err), OQ_OK);
    /* seq missing: the first input that needs it, and the axis */
    oq_bench_opts o = opts_with(0, NULL, 1, d, 0, NULL);
    expect_error(&o, NULL, "input 'features' [batch,seq,17], axis 1 ('seq'): no value");
    /* ids' second axis has no name: only --shape can give it */
    o = opts_with(0, NULL, 2, d, 0, NULL);
    expect_error(&o, NULL, "input 'ids' [batch,?], axis 1: unnamed dimension: give opts.input_shapes ids=");
    assert_int_equal(oq_bench_shape_parse("feature=2,4,17", &sh[0], &err), OQ_OK);
    o = opts_with(1, sh, 2, d, 0, NULL);
    expect_error(&o, NULL, "opts.input_shapes feature: the model has no input 'feature' (its inputs: features, mask, ids)");
    assert_int_equal(oq_bench_shape_parse("features=2,4", &sh[0], &err), OQ_OK);
    o = opts_with(1, sh, 0, NULL, 0, NULL);
    expect_error(&o, NULL, "opts.input_shapes features: 2 dimensions, the model's input 'features' has 3 [batch,seq,17]");
    assert_int_equal(oq_bench_shape_parse("features=2,4,16", &sh[0], &err), OQ_OK);
    expect_error(&o, NULL, "axis 2 is 16, the model's input 'features' has 17 there");
    /* two shapes that disagree on seq */
    assert_int_equal(oq_bench_shape_parse("features=2,4,17", &sh[0], &err), OQ_OK);
    assert_int_equal(oq_bench_shape_parse("mask=2,5", &sh[1], &err), OQ_OK);
    o = opts_with(2, sh, 0, NULL, 0, NULL);
    expect_error(&o, NULL, "dimension 'seq' is 4 from opts.input_shapes features but 5 from opts.input_shapes mask");
    /* a --dim nothing uses, a --dim that is also swept */
    assert_int_equal(oq_bench_dim_parse("heads=3", &d[2], &err), OQ_OK);
    o = opts_with(0, NULL, 3, d, 0, NULL);
    expect_error(&o, NULL, "opts.dims heads: no model dimension and no opts.input_shapes entry is named 'heads' "
                           "(the model's named dimensions: batch, seq)");
    o = opts_with(0, NULL, 2, d, 1, &d[1]);
    expect_error(&o, NULL, "opts.sweeps seq: the dimension is also given by opts.dims");
    /* a --shape entry naming a dimension without a value */
    assert_int_equal(oq_bench_shape_parse("features=2,L,17", &sh[0], &err), OQ_OK);
    o = opts_with(1, sh, 0, NULL, 0, NULL);
    expect_error(&o, NULL, "opts.input_shapes features: axis 1 names dimension 'L', which has no value");
}

/* An npz holding features [3, 5, 17]: it fixes batch and seq for the others. */
static void test_npz_inputs_as_they_are(void **state)
{
    (void)state;
    oq_err err = {0};
    int64_t shape[3] = {3, 5, 17};
    oq_tensor *f = NULL, *bad = NULL;
    assert_int_equal(oq_tensor_create(&f, OQ_DTYPE_FLOAT32, 3, shape, "features", &err), OQ_OK);
    assert_int_equal(oq_tensor_create(&bad, OQ_DTYPE_FLOAT64, 3, shape, "features", &err), OQ_OK);
    oq_tensor *ts[1] = {f};
    oq_npz z = {1, ts, "in.npz"};
    oq_bench_shape sh;
    assert_int_equal(oq_bench_shape_parse("ids=3,9", &sh, &err), OQ_OK);
    oq_bench_opts o = opts_with(1, &sh, 0, NULL, 0, NULL);
    oq_bench_point p;
    assert_int_equal(oq_bench_resolve_point(ins, 3, &z, &o, &MASK1, 0, &p, &err), OQ_OK);
    assert_string_equal(p.inputs[0].source, "npz");
    assert_int_equal(p.inputs[1].shape[0], 3);
    assert_int_equal(p.inputs[1].shape[1], 5);
    assert_int_equal(dim_of(&p, "seq"), 5);
    oq_bench_point_clear(&p);
    /* a sweep over a dimension the npz fixes, a --shape for an npz input, a wrong dtype */
    oq_bench_dim sw;
    assert_int_equal(oq_bench_dim_parse("seq=8,16", &sw, &err), OQ_OK);
    o = opts_with(1, &sh, 0, NULL, 1, &sw);
    expect_error(&o, &z, "dimension 'seq' is 8 from opts.sweeps but 5 from in.npz: tensor 'features'");
    assert_int_equal(oq_bench_shape_parse("features=3,5,17", &sh, &err), OQ_OK);
    o = opts_with(1, &sh, 0, NULL, 0, NULL);
    expect_error(&o, &z, "opts.input_shapes features: the input is in in.npz, used as it is");
    ts[0] = bad;
    o = opts_with(0, NULL, 0, NULL, 0, NULL);
    expect_error(&o, &z, "in.npz: tensor 'features' is float64, the model's input wants float32");
    oq_tensor_free(f);
    oq_tensor_free(bad);
}

/* Nothing computed would still be a green row: a model whose only input the model fixes
 * at size 0, or an npz giving every input empty, is refused; one empty input beside a full
 * one (an empty past key/value) is not. An input of a type bench cannot make (string) is
 * refused before any session, by its type's name; so is a size the model got wrong ("-3"),
 * which only --shape can give. */
static void test_empty_and_ungeneratable_inputs(void **state)
{
    (void)state;
    oq_err err = {0};
    oq_bench_point p;
    oq_bench_opts o = opts_with(0, NULL, 0, NULL, 0, NULL);
    static char *zero_dims[] = {"0", "4"}, *n_dims[] = {"n"}, *neg_dims[] = {"-3"};
    const oq_io_info zero[] = {{"x", OQ_DTYPE_FLOAT32, 2, zero_dims}};
    assert_int_equal(oq_bench_resolve_point(zero, 1, NULL, &o, NULL, 0, &p, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "input 'x' (the model's shape) is empty (axis 0 is 0), as every input"));
    assert_null(p.inputs);

    int64_t empty_shape[1] = {0}, full_shape[1] = {3};
    oq_tensor *empty = NULL, *full = NULL;
    assert_int_equal(oq_tensor_create(&empty, OQ_DTYPE_FLOAT32, 1, empty_shape, "past", &err), OQ_OK);
    assert_int_equal(oq_tensor_create(&full, OQ_DTYPE_FLOAT32, 1, full_shape, "x", &err), OQ_OK);
    static char *past_dims[] = {"past"};
    const oq_io_info two[] = {{"past", OQ_DTYPE_FLOAT32, 1, past_dims}, {"x", OQ_DTYPE_FLOAT32, 1, n_dims}};
    oq_tensor *only_empty[1] = {empty}, *both[2] = {empty, full};
    oq_npz z1 = {1, only_empty, "e.npz"}, z2 = {2, both, "e.npz"};
    oq_bench_dim d;
    assert_int_equal(oq_bench_dim_parse("n=3", &d, &err), OQ_OK);
    o = opts_with(0, NULL, 1, &d, 0, NULL);
    assert_int_equal(oq_bench_resolve_point(two, 2, &z1, &o, NULL, 0, &p, &err), OQ_OK);
    oq_bench_point_clear(&p);
    o = opts_with(0, NULL, 0, NULL, 0, NULL);
    assert_int_equal(oq_bench_resolve_point(two, 2, &z2, &o, NULL, 0, &p, &err), OQ_OK);
    oq_bench_point_clear(&p);
    full->shape[0] = 0; /* both empty now */
    assert_int_equal(oq_bench_resolve_point(two, 2, &z2, &o, NULL, 0, &p, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "input 'past' (from e.npz) is empty (axis 0 is 0), as every input"));
    oq_tensor_free(empty);
    oq_tensor_free(full);

    const oq_io_info str[] = {{"s", 8 /* onnx string */, 1, n_dims}};
    o = opts_with(0, NULL, 1, &d, 0, NULL);
    assert_int_equal(oq_bench_resolve_point(str, 1, NULL, &o, NULL, 0, &p, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "input 's' is string: bench cannot generate it"));
    assert_string_equal(oq_elem_type_name(8), "string");
    assert_string_equal(oq_elem_type_name(1), "float32");

    /* a size whose bytes overflow is named before any session, not a failed row */
    oq_bench_dim big[2];
    assert_int_equal(oq_bench_dim_parse("batch=4", &big[0], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse("seq=4611686018427387904", &big[1], &err), OQ_OK);
    static char *bs_dims[] = {"batch", "seq", "17"};
    const oq_io_info feats[] = {{"features", OQ_DTYPE_FLOAT32, 3, bs_dims}};
    o = opts_with(0, NULL, 2, big, 0, NULL);
    assert_int_equal(oq_bench_resolve_point(feats, 1, NULL, &o, NULL, 0, &p, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "input 'features' [4,4611686018427387904,17] float32: its size overflows"));

    const oq_io_info neg[] = {{"x", OQ_DTYPE_FLOAT32, 1, neg_dims}};
    o = opts_with(0, NULL, 0, NULL, 0, NULL);
    assert_int_equal(oq_bench_resolve_point(neg, 1, NULL, &o, NULL, 0, &p, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "input 'x' [-3], axis 0: unnamed dimension: give opts.input_shapes x="));
}

/* ---- generated inputs -------------------------------------------------------------------- */

static void test_generated_inputs(void **state)
{
    (void)state;
    oq_err err = {0};
    oq_bench_dim d[2];
    oq_bench_shape sh;
    assert_int_equal(oq_bench_dim_parse("batch=4", &d[0], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse("seq=32", &d[1], &err), OQ_OK);
    assert_int_equal(oq_bench_shape_parse("ids=4,6", &sh, &err), OQ_OK);
    oq_bench_opts o = opts_with(1, &sh, 2, d, 0, NULL);
    o.int_lo = 3;
    o.int_hi = 7;
    oq_bench_point p;
    assert_int_equal(oq_bench_resolve_point(ins, 3, NULL, &o, &MASK1, 0, &p, &err), OQ_OK);
    oq_tensor **a = NULL, **b = NULL;
    assert_int_equal(oq_bench_make_inputs(&o, o.mask_polarity, NULL, &p, &a, &err), OQ_OK);
    assert_int_equal(oq_bench_make_inputs(&o, o.mask_polarity, NULL, &p, &b, &err), OQ_OK);
    for (size_t i = 0; i < 3; i++) /* seeded: the same bytes twice */
        assert_memory_equal(a[i]->data, b[i]->data, oq_tensor_nbytes(a[i]));
    const float *x = a[0]->data;
    double lo = 1, hi = -1;
    for (int64_t i = 0; i < oq_tensor_numel(a[0]); i++) {
        lo = fmin(lo, x[i]);
        hi = fmax(hi, x[i]);
    }
    assert_true(lo >= -1 && lo < -0.9 && hi < 1 && hi > 0.9);
    const int64_t *ids = a[2]->data;
    for (int64_t i = 0; i < oq_tensor_numel(a[2]); i++) assert_true(ids[i] >= 3 && ids[i] <= 7);
    /* the documented streams, element by element: input i draws from stream 2^44 + i, floats as
     * 2u - 1 with u the top 53 bits, ids from oq_rng_uniform_int (the same inputs as before) */
    oq_rng rf, ri;
    oq_rng_seed(&rf, o.seed, (UINT64_C(1) << 44) + 0);
    oq_rng_seed(&ri, o.seed, (UINT64_C(1) << 44) + 2);
    for (int64_t i = 0; i < oq_tensor_numel(a[0]); i++)
        assert_true(x[i] == (float)(2.0 * ((double)(oq_rng_next(&rf) >> 11) * 0x1.0p-53) - 1.0));
    for (int64_t i = 0; i < oq_tensor_numel(a[2]); i++) assert_int_equal(ids[i], oq_rng_uniform_int(&ri, 3, 7));
    /* the mask: a prefix of ones per row, then zeros; fraction 0.25 leaves 24 of 32 */
    const uint8_t *m = a[1]->data;
    for (int64_t r = 0; r < 4; r++)
        for (int64_t j = 0; j < 32; j++) assert_int_equal(m[r * 32 + j], j < 24);
    int masked = 0;
    assert_int_equal(oq_bench_valid_elements(&p, a, OQ_MASK_POLARITY_KEEP, &masked), 4 * 24);
    assert_true(masked);
    /* a PAD mask (PyTorch's key_padding_mask, 1 = padding): zeros then ones, its zeros valid */
    o.mask_polarity = OQ_MASK_POLARITY_PAD;
    oq_tensor **c = NULL;
    assert_int_equal(oq_bench_make_inputs(&o, o.mask_polarity, NULL, &p, &c, &err), OQ_OK);
    const uint8_t *pm = c[1]->data;
    for (int64_t r = 0; r < 4; r++)
        for (int64_t j = 0; j < 32; j++) assert_int_equal(pm[r * 32 + j], j >= 24);
    assert_int_equal(oq_bench_valid_elements(&p, c, OQ_MASK_POLARITY_PAD, &masked), 4 * 24);
    assert_true(masked);
    oq_tensors_free(c, 3);
    o.mask_polarity = OQ_MASK_POLARITY_KEEP;
    oq_tensors_free(b, 3);
    o.seed = 7; /* another seed, other values */
    assert_int_equal(oq_bench_make_inputs(&o, o.mask_polarity, NULL, &p, &b, &err), OQ_OK);
    assert_true(memcmp(a[0]->data, b[0]->data, oq_tensor_nbytes(a[0])) != 0);
    oq_tensors_free(a, 3);
    oq_tensors_free(b, 3);
    oq_bench_point_clear(&p);
}

/* ---- ORT's profile ---------------------------------------------------------------------- */

/* Three runs; GPU kernel events in runs 2 and 3; one node event before the first run. */
static const char profile_json[] =
    "[{\"cat\":\"Session\",\"name\":\"session_initialization\",\"ts\":0,\"dur\":50},"
    "{\"cat\":\"Node\",\"name\":\"init_kernel_time\",\"ts\":10,\"dur\":999},"
    "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":100,\"dur\":40},"
    "{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"ts\":101,\"dur\":10},"
    "{\"cat\":\"Node\",\"name\":\"a_fence_before\",\"ts\":101,\"dur\":500},"
    "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":200,\"dur\":30},"
    "{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"ts\":201,\"dur\":6},"
    "{\"cat\":\"Node\",\"name\":\"b_kernel_time\",\"ts\":210,\"dur\":4},"
    "{\"cat\":\"Kernel\",\"name\":\"flash_fwd\",\"ts\":205,\"dur\":20},"
    "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":300,\"dur\":50},"
    "{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"ts\":301,\"dur\":8},"
    "{\"cat\":\"Kernel\",\"name\":\"flash_fwd\",\"ts\":305,\"dur\":24},"
    "{\"cat\":\"Kernel\",\"name\":\"reduce\",\"ts\":340,\"dur\":2}]";

static void test_profile_per_run(void **state)
{
    (void)state;
    oq_bench_profile p;
    oq_err err = {0};
    memset(&p, 0, sizeof p);
    assert_int_equal(oq_bench_profile_parse(profile_json, strlen(profile_json), "p.json", 2, &p, &err), OQ_OK);
    assert_int_equal(p.runs, 2);
    assert_true(fabs(p.run_ms - 0.040) < 1e-12);    /* median of 30 and 50 us */
    assert_true(fabs(p.node_ms - 0.009) < 1e-12);   /* 10 and 8 us */
    assert_true(fabs(p.kernel_ms - 0.023) < 1e-12); /* 20 and 26 us */
    assert_int_equal(p.kernel_events, 1);           /* median of 1 and 2 */
    assert_string_equal(p.path, "p.json");
    /* the first run alone: no GPU kernel events there */
    assert_int_equal(oq_bench_profile_parse(profile_json, strlen(profile_json), "p.json", 3, &p, &err), OQ_OK);
    assert_true(fabs(p.node_ms - 0.010) < 1e-12);
    assert_int_equal(oq_bench_profile_parse(profile_json, strlen(profile_json), "p.json", 4, &p, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "p.json: 3 model_run events, 4 profiled runs wanted"));
    assert_int_equal(oq_bench_profile_parse("{}", 2, "q.json", 1, &p, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "q.json: not an ORT profile"));
    assert_int_equal(oq_bench_profile_parse("[", 1, "r.json", 1, &p, &err), OQ_ERR_FORMAT);
}

/* ---- a real PyTorch export against its saved outputs ------------------------------------- */

static oq_bench_rows *run_model(const char *expected, const char *tolerances)
{
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    o.model_path = FX "hand_attention_op18.onnx";
    o.inputs_path = FX "io.npz";
    o.expected_path = expected;
    o.tolerances = tolerances;
    o.iters = 3;
    o.warmup = 0;
    o.threads = 1;
    o.mem_sample_us = 0;
    oq_bench_rows *rows = NULL;
    oq_err err = {0};
    if (oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
    assert_int_equal(rows->n, 1);
    return rows;
}

static void test_expected_outputs_judged(void **state)
{
    (void)state;
    oq_bench_rows *rows = run_model(FX "io.npz", NULL);
    const oq_bench_row *r = &rows->rows[0];
    assert_int_equal(r->status, OQ_BENCH_OK);
    assert_int_equal(r->n_samples, 3);
    assert_int_equal(r->n_outputs, 1);
    assert_string_equal(r->outputs[0].name, "y");
    assert_true(r->outputs[0].passed && r->max_abs_err < 1e-6);
    assert_string_equal(r->variant.name, "cpu:model:fp32");
    assert_int_equal(r->batch, 3);
    assert_int_equal(r->seq_len, 56);
    assert_int_equal(r->valid_tokens, 50 + 31 + 7);
    oq_bench_rows_free(rows);

    /* One element of y moved by 0.01: the row fails naming the output, its timings stay. */
    oq_err err = {0};
    oq_npz *z = NULL;
    assert_int_equal(oq_npz_read(FX "io.npz", &z, &err), OQ_OK);
    oq_tensor *y = NULL;
    assert_int_equal(oq_npz_take(z, "y", &y, &err), OQ_OK);
    ((float *)y->data)[17] += 0.01f;
    char *dir = temp_dir("bench_model");
    char path[512];
    snprintf(path, sizeof path, "%s/expected.npz", dir);
    assert_int_equal(oq_npz_write(path, 1, (const oq_tensor *const *)&y, 0, 0, &err), OQ_OK);
    rows = run_model(path, NULL);
    r = &rows->rows[0];
    assert_int_equal(r->status, OQ_BENCH_FAILED);
    assert_non_null(strstr(r->error, "output 'y': max abs err 0.01"));
    assert_int_equal(r->n_samples, 3);
    /* at the edge, atol one step under the error, the message shows why it failed: atol as
     * given and the error above it ("max abs err 0.01 ... atol 0.01") */
    double atol = nextafter(rows->rows[0].outputs[0].max_abs_err, 0.0);
    oq_bench_rows_free(rows);
    char spec[64];
    snprintf(spec, sizeof spec, "y:rtol=0,atol=%.17g", atol);
    rows = run_model(path, spec);
    r = &rows->rows[0];
    assert_int_equal(r->status, OQ_BENCH_FAILED);
    const char *at = strstr(r->error, "atol "), *e = strstr(r->error, "max abs err ");
    assert_true(at && e);
    assert_true(strtod(at + 5, NULL) == atol);
    assert_true(strtod(e + 12, NULL) > atol);
    oq_bench_rows_free(rows);
    /* a tolerance that admits it passes */
    rows = run_model(path, "y:atol=0.02");
    assert_int_equal(rows->rows[0].status, OQ_BENCH_OK);
    oq_bench_rows_free(rows);
    remove_dir(dir);
    oq_tensor_free(y);
    oq_npz_free(z);
}

/* The model is read once: its inspection and every session of the sweep (here a session per
 * sample) are of those bytes, whatever the file holds once the row has begun (it read the path
 * again for each session); summary.json names them by SHA-256. A data file of it written during
 * the sweep fails the sweep, naming it. */
typedef struct rewrite {
    const char *path;
    int flip; /* 0: the file replaced by other bytes; 1: one byte of it flipped */
    int done;
} rewrite;

static void rewrite_before_row(void *user, size_t index, size_t total, const oq_bench_row *row, int done)
{
    (void)index, (void)total, (void)row;
    rewrite *w = user;
    if (done || w->done) return;
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_read_file(w->path, &buf, &n, NULL), OQ_OK);
    if (w->flip) buf[20000] ^= 1;
    assert_int_equal(oq_write_file_atomic(w->path, w->flip ? (void *)buf : "not a model", w->flip ? n : 11, 1, NULL),
                     OQ_OK);
    free(buf);
    w->done = 1;
}

/* `src`'s file (and its data file, `data`) copied into dir; the copy's path in `path`. */
static void copy_model(const char *dir, const char *src, const char *name, int data, char *path, size_t pn)
{
    char from[600], to[700];
    for (int k = 0; k <= data; k++) {
        snprintf(from, sizeof from, "%s%s%s", src, name, k ? ".data" : "");
        snprintf(to, sizeof to, "%s/%s%s", dir, name, k ? ".data" : "");
        unsigned char *buf = NULL;
        size_t n = 0;
        assert_int_equal(oq_read_file(from, &buf, &n, NULL), OQ_OK);
        assert_int_equal(oq_write_file_atomic(to, buf, n, 1, NULL), OQ_OK);
        free(buf);
    }
    snprintf(path, pn, "%s/%s", dir, name);
}

static void test_model_read_once(void **state)
{
    (void)state;
    char *dir = temp_dir("bench_once"), model[600], data[700], sha[65];
    copy_model(dir, FX, "hand_attention_op18.onnx", 0, model, sizeof model);
    oq_err err = {0};
    assert_int_equal(oq_sha256_file(model, sha, &err), OQ_OK);
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    o.model_path = model;
    o.inputs_path = FX "io.npz";
    o.iters = 3;
    o.warmup = 0;
    o.threads = 1;
    o.mem_sample_us = 0;
    o.include_session = 1;
    rewrite w = {model, 0, 0};
    oq_bench_rows *rows = NULL;
    if (oq_bench_sweep(rt, &o, rewrite_before_row, &w, &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
    assert_true(w.done);
    if (rows->rows[0].status != OQ_BENCH_OK) fail_msg("the row ran the file as it was then: %s", rows->rows[0].error);
    assert_string_equal(rows->model_sha256, sha);
    oq_bench_rows_free(rows);

    copy_model(dir, OQ_SOURCE_DIR "/tests/fixtures/external/", "llama_like_op18.onnx", 1, model, sizeof model);
    snprintf(data, sizeof data, "%s.data", model);
    o.model_path = model;
    o.inputs_path = OQ_SOURCE_DIR "/tests/fixtures/torch/llama_like/inputs_000.npz";
    o.include_session = 0;
    w = (rewrite){data, 1, 0};
    assert_int_equal(oq_bench_sweep(rt, &o, rewrite_before_row, &w, &rows, &err), OQ_ERR_RUNTIME);
    if (!strstr(err.msg, "llama_like_op18.onnx: changed during the run (sha256 ") || !strstr(err.msg, data))
        fail_msg("%s", err.msg);
    remove_dir(dir);
}

/* The model's notes (a Gather's run-time indices) folded once by the sweep and carried: its
 * ready step and the summary's writer say the notes of the model swept, not of the file read
 * again (here replaced by something else each time: they did read it again). */
typedef struct ready_probe {
    const oq_bench_opts *o;
    char *notes; /* oq_bench_model_notes in the ready step, the file swapped out meanwhile */
    oq_status st;
} ready_probe;

/* `model` moved aside and "not a model" written in its place; swap_back restores it. */
static void swap_out(const char *model)
{
    char aside[700];
    snprintf(aside, sizeof aside, "%s.aside", model);
    assert_int_equal(rename(model, aside), 0);
    assert_int_equal(oq_write_file_atomic(model, "not a model", 11, 1, NULL), OQ_OK);
}

static void swap_back(const char *model)
{
    char aside[700];
    snprintf(aside, sizeof aside, "%s.aside", model);
    assert_int_equal(rename(aside, model), 0);
}

static oq_status probe_ready(void *ctx, oq_err *err)
{
    (void)err;
    ready_probe *p = ctx;
    swap_out(p->o->model_path);
    p->st = oq_bench_model_notes(p->o, &p->notes, NULL);
    swap_back(p->o->model_path);
    return OQ_OK;
}

static void test_notes_folded_once(void **state)
{
    (void)state;
    char *dir = temp_dir("bench_notes"), model[600], summary[700];
    unsigned char *text = NULL;
    size_t n = 0;
    copy_model(dir, OQ_SOURCE_DIR "/tests/fixtures/torch/decoder_lm/", "decoder_lm_op18.onnx", 0, model, sizeof model);
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    o.model_path = model;
    o.inputs_path = OQ_SOURCE_DIR "/tests/fixtures/torch/decoder_lm/inputs_000.npz";
    o.iters = 1;
    o.warmup = 0;
    o.threads = 1;
    o.mem_sample_us = 0;
    ready_probe p = {&o, NULL, OQ_OK};
    o.ready = probe_ready;
    o.ready_ctx = &p;
    oq_err err = {0};
    oq_bench_rows *rows = NULL;
    if (oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
    const char *note = "decoder_lm_op18.onnx: Gather 'node_embedding_1': its indices 'arange' are computed at run time";
    if (p.st || !p.notes || !strstr(p.notes, note)) fail_msg("ready: %d %s", (int)p.st, p.notes ? p.notes : "(none)");
    free(p.notes);
    swap_out(model);
    snprintf(summary, sizeof summary, "%s/summary.json", dir);
    assert_int_equal(oq_bench_write_summary(rt, &o, rows, 0, NULL, summary, &err), OQ_OK);
    assert_int_equal(oq_read_file(summary, &text, &n, NULL), OQ_OK);
    if (!strstr((char *)text, note)) fail_msg("the summary lacks the swept model's note");
    free(text);
    oq_bench_rows_free(rows);
    /* rows a caller made: the writer reads the model itself */
    swap_back(model);
    oq_bench_rows own = {0};
    assert_int_equal(oq_bench_write_summary(rt, &o, &own, 0, NULL, summary, &err), OQ_OK);
    assert_int_equal(oq_read_file(summary, &text, &n, NULL), OQ_OK);
    if (!strstr((char *)text, note)) fail_msg("the summary of a caller's rows lacks the model's note");
    free(text);
    remove_dir(dir);
}

/* A row's vmhwm is its own peak, not the process's: 256 MiB touched and released before the
 * row stay out of it (where the kernel lets VmHWM be reset). */
static void test_vmhwm_is_the_rows_peak(void **state)
{
    (void)state;
    size_t big = (size_t)256 << 20;
    char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 1, big);
    uint64_t rss = 0, hwm = 0;
    assert_int_equal(oq_proc_memory(&rss, &hwm, NULL), OQ_OK);
    munmap(p, big);
    oq_bench_rows *rows = run_model(FX "io.npz", NULL);
    const oq_bench_row *r = &rows->rows[0];
    assert_int_equal(r->status, OQ_BENCH_OK);
    int per_row = r->vmhwm_row;
    int64_t vmhwm = r->vmhwm, before = r->rss_before;
    oq_bench_rows_free(rows);
    if (!per_row) skip(); /* VmHWM cannot be reset here: the row reports the process's peak */
    assert_true(vmhwm >= before);
    assert_true(vmhwm < (int64_t)hwm - (int64_t)(big / 2));
}

/* ORT refuses a row of a model whose sizes are all names; the row's explanation is judged by
 * the --dim values the row ran with: a mask [batch,1,seq,mlen] at mlen=7 over 5 keys is longer
 * than the keys, invalid for ONNX too. Told by the names alone, it was ORT's departure "if the
 * mask is shorter", with padding as the fix. */
static void test_refusal_by_the_dims_run(void **state)
{
    (void)state;
    char *dir = temp_dir("bench_refusal");
    char path[512];
    snprintf(path, sizeof path, "%s/symbolic.onnx", dir);
    write_symbolic_attention24(path);
    oq_err err = {0};
    oq_bench_dim d[3];
    assert_int_equal(oq_bench_dim_parse_one("batch=2", &d[0], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse_one("seq=5", &d[1], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse_one("mlen=7", &d[2], &err), OQ_OK);
    oq_bench_opts o = opts_with(0, NULL, 3, d, 0, NULL);
    o.model_path = path;
    o.iters = 1;
    o.warmup = 0;
    o.threads = 1;
    o.mem_sample_us = 0;
    oq_bench_rows *rows = NULL;
    if (oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
    assert_int_equal(rows->n, 1);
    const char *e = rows->rows[0].error;
    if (!strstr(e, "refused by ONNX Runtime [attn-mask-shape] at node 'attn0' (Attention); inputs K 'k' float32 "
                   "[batch=2,2,seq=5,4]; attn_mask 'm' float32 [batch=2,1,seq=5,mlen=7]: the mask does not fit: "
                   "attn_mask axis 3 is 7; T (past 0 + current keys 5) is 5.") ||
        !strstr(e, "(ONNX Runtime: Run: Non-zero status code returned while running Attention node"))
        fail_msg("%s", e);
    oq_bench_rows_free(rows);
    remove_dir(dir);
}

/* ---- any model's outputs and axes ------------------------------------------------------- */

/* x float32 [b, t, 4] (and with `mask`, attention_mask int64 [b, t]) -> pred = ArgMax int64
 * [b, t], pos = x > 0 bool, half = bfloat16 x, i32 = int32 x: every output a non-float32 tensor. */
static void write_typed_model(const char *path, const char *b, const char *t, int mask)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "g", &g, NULL), OQ_OK);
    const oq_dim xd[] = {OQ_DIM_SYM(b), OQ_DIM_SYM(t), OQ_DIM(4)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, xd);
    if (mask) oq_graph_add_input(g, "attention_mask", OQ_DTYPE_INT64, 2, xd);
    const char *x[] = {"x"}, *gt[] = {"x", oq_graph_const_f32(g, "zero", 0.0f)};
    oq_attr am[] = {OQ_ATTR_I("axis", 2), OQ_ATTR_I("keepdims", 0)};
    oq_attr bf[] = {OQ_ATTR_I("to", OQ_DTYPE_BFLOAT16)}, i32[] = {OQ_ATTR_I("to", OQ_DTYPE_INT32)};
    oq_graph_add_output(g, oq_graph_op(g, "ArgMax", 1, x, 2, am), "pred", OQ_DTYPE_INT64, 2, xd);
    oq_graph_add_output(g, oq_graph_op(g, "Greater", 2, gt, 0, NULL), "pos", OQ_DTYPE_BOOL, 3, xd);
    oq_graph_add_output(g, oq_graph_op(g, "Cast", 1, x, 1, bf), "half", OQ_DTYPE_BFLOAT16, 3, xd);
    oq_graph_add_output(g, oq_graph_op(g, "Cast", 1, x, 1, i32), "i32", OQ_DTYPE_INT32, 3, xd);
    /* the mask as a model uses one, on scores (a name alone no longer makes an input the mask) */
    const char *m[] = {"attention_mask"};
    oq_attr f32[] = {OQ_ATTR_I("to", OQ_DTYPE_FLOAT32)};
    if (mask) {
        const char *mf = oq_graph_op(g, "Cast", 1, m, 1, f32);
        oq_graph_add_output(g, oq_graph_op(g, "Softmax", 1, &mf, 0, NULL), "m", OQ_DTYPE_FLOAT32, 2, xd);
    }
    oq_err err = {0};
    if (oq_graph_write(g, path, 1, &err)) fail_msg("%s", err.msg);
    oq_graph_free(g);
}

static oq_bench_rows *sweep_typed(const char *path, const char *sweep, const char *dim, const char *seq,
                                  const char *inputs, const char *expected, oq_status want, oq_err *err)
{
    oq_bench_dim sw, d;
    assert_int_equal(oq_bench_dim_parse(sweep, &sw, err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse_one(dim, &d, err), OQ_OK);
    oq_bench_opts o = opts_with(0, NULL, inputs ? 0 : 1, &d, inputs ? 0 : 1, &sw);
    o.model_path = path;
    o.inputs_path = inputs;
    o.expected_path = expected;
    o.seq_dim = seq;
    o.iters = 2;
    o.warmup = 0;
    o.threads = 1;
    o.mem_sample_us = 0;
    oq_bench_rows *rows = NULL;
    oq_status st = oq_bench_sweep(rt, &o, NULL, NULL, &rows, err);
    if (st != want) fail_msg("%d: %s", (int)st, err->msg);
    return rows;
}

/* x float [B, L], keep int64 [B, L] and mask_pos float [B, P], each passed through; with
 * `contract`, the model's mask contract (convert's metadata) names keep as its mask. */
static void write_contract_model(const char *path, int contract)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "g", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("B"), OQ_DIM_SYM("L")}, bp[] = {OQ_DIM_SYM("B"), OQ_DIM_SYM("P")};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 2, bl);
    oq_graph_add_input(g, "keep", OQ_DTYPE_INT64, 2, bl);
    oq_graph_add_input(g, "mask_pos", OQ_DTYPE_FLOAT32, 2, bp);
    const char *in[] = {"x", "keep", "mask_pos"}, *out[] = {"y", "k", "mp"};
    const oq_dtype t[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_INT64, OQ_DTYPE_FLOAT32};
    for (int i = 0; i < 3; i++)
        oq_graph_add_output(g, oq_graph_op(g, "Identity", 1, &in[i], 0, NULL), out[i], t[i], 2, i < 2 ? bl : bp);
    uint8_t *buf;
    size_t n;
    assert_int_equal(oq_graph_serialize(g, &buf, &n, NULL), OQ_OK);
    oq_graph_free(g);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    Onnx__StringStringEntryProto e = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *ep = &e;
    e.key = (char *)OQ_CONVERT_CONTRACT_KEY;
    e.value = (char *)"{\"input\": \"keep\", \"contract\": \"valid_prefix\", \"nodes\": []}";
    m->n_metadata_props = contract ? 1 : 0;
    m->metadata_props = contract ? &ep : NULL;
    n = onnx__model_proto__get_packed_size(m);
    buf = malloc(n);
    onnx__model_proto__pack(m, buf);
    m->n_metadata_props = 0;
    m->metadata_props = NULL;
    onnx__model_proto__free_unpacked(m, NULL);
    assert_int_equal(oq_write_file_atomic(path, buf, n, 1, NULL), OQ_OK);
    free(buf);
}

/* The mask input is the one the model's mask contract names, as validate takes it: "keep" is
 * generated as the mask (its valid prefixes counted, its length the row's), and "mask_pos",
 * named like a mask, is data. Without a contract the graph uses neither as a mask (an Identity
 * each), and "mask_pos" is the mask by its name, as validate takes it (bench found none, and
 * the two commands read the same model's outputs differently). */
static void test_mask_by_contract(void **state)
{
    (void)state;
    char *dir = temp_dir("bench_contract");
    char path[512];
    snprintf(path, sizeof path, "%s/c.onnx", dir);
    oq_err err = {0};
    oq_bench_dim d[3];
    assert_int_equal(oq_bench_dim_parse_one("B=3", &d[0], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse_one("L=8", &d[1], &err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse_one("P=5", &d[2], &err), OQ_OK);
    for (int contract = 1; contract >= 0; contract--) {
        write_contract_model(path, contract);
        oq_bench_opts o = opts_with(0, NULL, 3, d, 0, NULL);
        o.model_path = path;
        o.iters = 1;
        o.warmup = 0;
        o.threads = 1;
        o.mem_sample_us = 0;
        o.mask_fraction = 0.5;
        oq_bench_rows *rows = NULL;
        if (oq_bench_sweep(rt, &o, NULL, NULL, &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
        const oq_bench_row *r = &rows->rows[0];
        assert_int_equal(r->status, OQ_BENCH_OK);
        assert_string_equal(r->inputs[1].name, "keep");
        assert_string_equal(r->inputs[1].fill, contract ? "mask" : "integers");
        assert_string_equal(r->inputs[2].name, "mask_pos");
        assert_string_equal(r->inputs[2].fill, contract ? "uniform" : "mask");
        assert_int_equal(r->seq_len, contract ? 8 : 5);
        assert_true(r->masked && r->valid_tokens > 0 && r->valid_tokens < 3 * (contract ? 8 : 5));
        assert_string_equal(rows->mask_source, contract ? "contract" : "name");
        assert_string_equal(rows->mask_input, contract ? "keep" : "mask_pos");
        if (!contract) assert_string_equal(rows->mask_why, "its name contains \"mask\"");
        assert_string_equal(rows->mask_note, "");
        oq_bench_rows_free(rows);
    }
    remove_dir(dir);
}

/* A self-attention over x [B, L, 8] plus the embedding of `ids_name` [B, L] (a Gather's
 * indices), whose scores get the additive mask of the bool `mask_name` [B, L] as exports write
 * it: Not, Cast, Mul by -1e4, Unsqueeze, Add before the Softmax (1 = valid; with `pad` no Not:
 * PyTorch's key_padding_mask, 1 = padding); with `second`, a bool "keep" [B, L] And-ed in first
 * (two inputs that each reach the scores). */
static void write_masked_attention(const char *path, const char *mask_name, const char *ids_name, int second, int pad)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "g", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("B"), OQ_DIM_SYM("L")}, ble[] = {bl[0], bl[1], OQ_DIM(8)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, ble);
    oq_graph_add_input(g, mask_name, OQ_DTYPE_BOOL, 2, bl);
    oq_graph_add_input(g, ids_name, OQ_DTYPE_INT64, 2, bl);
    if (second) oq_graph_add_input(g, "keep", OQ_DTYPE_BOOL, 2, bl);
    const int64_t es[] = {10, 8}, one[] = {1}, perm[] = {0, 2, 1};
    oq_tensor *emb = NULL;
    assert_int_equal(oq_tensor_create(&emb, OQ_DTYPE_FLOAT32, 2, es, "emb", NULL), OQ_OK);
    const char *e = oq_graph_op(g, "Gather", 2, (const char *[]){oq_graph_add_initializer(g, emb, "emb"), ids_name}, 0,
                                NULL);
    const char *h = oq_graph_op(g, "Add", 2, (const char *[]){"x", e}, 0, NULL);
    const oq_attr tr = OQ_ATTR_IS("perm", 3, perm), f32 = OQ_ATTR_I("to", OQ_DTYPE_FLOAT32);
    const char *sc = oq_graph_op(g, "MatMul", 2, (const char *[]){h, oq_graph_op(g, "Transpose", 1, &h, 1, &tr)}, 0, NULL);
    const char *m = second ? oq_graph_op(g, "And", 2, (const char *[]){mask_name, "keep"}, 0, NULL) : mask_name;
    const char *padded = oq_graph_op(g, "Cast", 1, (const char *[]){pad ? m : oq_graph_op(g, "Not", 1, &m, 0, NULL)}, 1,
                                     &f32);
    const char *bias = oq_graph_op(g, "Mul", 2, (const char *[]){padded, oq_graph_const_f32(g, "min", -1e4f)}, 0, NULL);
    const char *b3 = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){bias, oq_graph_const_i64(g, "ax", 1, one)}, 0, NULL);
    const char *p = oq_graph_op(g, "Softmax", 1, (const char *[]){oq_graph_op(g, "Add", 2, (const char *[]){sc, b3}, 0,
                                                                              NULL)}, 0, NULL);
    oq_graph_add_output(g, oq_graph_op(g, "MatMul", 2, (const char *[]){p, h}, 0, NULL), "y", OQ_DTYPE_FLOAT32, 3, ble);
    oq_err err = {0};
    if (oq_graph_write(g, path, 1, &err)) fail_msg("%s", err.msg);
    oq_graph_free(g);
    oq_tensor_free(emb);
}

static oq_status sweep_masked(const char *path, const char *mask_input, oq_bench_rows **rows, oq_err *err)
{
    oq_bench_dim d[2];
    assert_int_equal(oq_bench_dim_parse_one("B=3", &d[0], err), OQ_OK);
    assert_int_equal(oq_bench_dim_parse_one("L=8", &d[1], err), OQ_OK);
    oq_bench_opts o = opts_with(0, NULL, 2, d, 0, NULL);
    o.model_path = path;
    o.mask_input = mask_input;
    o.iters = 1;
    o.warmup = 0;
    o.threads = 1;
    o.mem_sample_us = 0;
    o.mask_fraction = 0.5;
    o.int_hi = 9;
    return oq_bench_sweep(rt, &o, NULL, NULL, rows, err);
}

/* The mask is found from the graph, not its name: "valid", which reaches the scores through
 * Not, Cast, Mul, Unsqueeze and Add, is generated as the mask (it was all random: its name says
 * nothing), and "mask_token_ids", a Gather's indices, gets ids (it got a prefix mask), said in
 * one note. Two inputs that reach the scores are refused, not guessed; mask_input picks one.
 * validate's detection is the same rule (it refused "valid" as a lone rank-2 input). */
static void test_mask_from_graph(void **state)
{
    (void)state;
    char *dir = temp_dir("bench_graphmask");
    char path[512];
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    oq_err err = {0};
    write_masked_attention(path, "valid", "mask_token_ids", 0, 0);
    oq_bench_rows *rows = NULL;
    if (sweep_masked(path, NULL, &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
    const oq_bench_row *r = &rows->rows[0];
    if (r->status != OQ_BENCH_OK) fail_msg("%s", r->error);
    assert_string_equal(r->inputs[1].name, "valid");
    assert_string_equal(r->inputs[1].fill, "mask");
    assert_string_equal(r->inputs[2].fill, "integers");
    assert_true(r->masked && r->valid_tokens > 0 && r->valid_tokens < 3 * 8);
    assert_int_equal(r->seq_len, 8);
    assert_string_equal(rows->mask_input, "valid");
    assert_string_equal(rows->mask_source, "graph");
    assert_string_equal(rows->mask_why,
                        "it flows into the attention scores (a Softmax's input or an attention operator's mask or bias)");
    assert_string_equal(rows->mask_note, "input 'mask_token_ids' is named like a mask but is not taken as the mask: "
                                         "it is the indices of a Gather (token ids or positions)");
    assert_int_equal(rows->mask_polarity, OQ_MASK_POLARITY_KEEP); /* Not, then Mul by -1e4 */
    assert_string_equal(rows->mask_polarity_source, "graph");
    oq_bench_rows_free(rows);
    write_masked_attention(path, "valid", "ids", 0, 1); /* no Not: 1 = padding, its zeros counted */
    if (sweep_masked(path, NULL, &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
    assert_int_equal(rows->mask_polarity, OQ_MASK_POLARITY_PAD);
    assert_string_equal(rows->mask_polarity_source, "graph");
    assert_true(rows->rows[0].masked && rows->rows[0].valid_tokens > 0 && rows->rows[0].valid_tokens < 3 * 8);
    oq_bench_rows_free(rows);
    write_masked_attention(path, "valid", "mask_token_ids", 0, 0);

    oq_validate_opts vo; /* validate: one rule */
    oq_validate_opts_default(&vo);
    vo.kind = OQ_MODEL_USER;
    vo.model_path = path;
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(path, &mi, &err), OQ_OK);
    oq_signature sig;
    if (oq_signature_make(&vo, NULL, &mi, NULL, &sig, &err)) fail_msg("%s", err.msg);
    assert_int_equal(sig.mask, 1);
    assert_string_equal(sig.mask_why, "it flows into the attention scores (a Softmax's input or an attention "
                                      "operator's mask or bias)");
    oq_signature_clear(&sig);

    write_masked_attention(path, "m", "ids", 1, 0);
    rows = NULL;
    assert_int_equal(sweep_masked(path, NULL, &rows, &err), OQ_ERR_INVALID_ARG);
    assert_null(rows);
    char want[1024];
    snprintf(want, sizeof want, "%s: inputs 'm', 'keep' may each be the [batch, length] mask (each is used as one by "
             "the graph, or named like one): name it (mask_input NAME) or record it in the model's mask contract", path);
    assert_string_equal(err.msg, want);
    if (sweep_masked(path, "keep", &rows, &err) != OQ_OK) fail_msg("%s", err.msg);
    assert_string_equal(rows->mask_input, "keep");
    assert_string_equal(rows->mask_source, "option");
    assert_string_equal(rows->rows[0].inputs[3].fill, "mask");
    assert_string_equal(rows->rows[0].inputs[1].fill, "ones");
    oq_bench_rows_free(rows);
    rows = NULL;
    assert_int_equal(sweep_masked(path, "nope", &rows, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, ": mask_input 'nope': the model has no such input (inputs: x, m, ids, keep)"));
    remove_dir(dir);
}

/* torch names unnamed dynamic axes s0, s1: a sweep of the first input's axis 0 is a batch sweep,
 * the length the mask's axis 1 (it was "seq_len" = the batch size, seq_dim the batch's). Every
 * output type ORT returns is read and timed (int64, bool, bfloat16, int32 were "unsupported"). */
static void test_batch_axis_of_any_name(void **state)
{
    (void)state;
    char *dir = temp_dir("bench_axes");
    char path[512];
    snprintf(path, sizeof path, "%s/typed.onnx", dir);
    write_typed_model(path, "s0", "s1", 1);
    oq_err err = {0};
    oq_bench_rows *rows = sweep_typed(path, "s0=1,2", "s1=8", NULL, NULL, NULL, OQ_OK, &err);
    assert_int_equal(rows->n, 2);
    for (size_t i = 0; i < 2; i++) {
        const oq_bench_row *r = &rows->rows[i];
        if (r->status != OQ_BENCH_OK) fail_msg("row %zu: %s", i, r->error);
        assert_int_equal(r->n_samples, 2);
        assert_int_equal(r->batch, (int64_t)i + 1);
        assert_string_equal(r->seq_dim, "s1");
        assert_int_equal(r->seq_len, 8);
    }
    oq_bench_rows_free(rows);
    /* no mask, no name, no denotation: the length is not told (0, ""), never the batch; the
     * caller names it */
    snprintf(path, sizeof path, "%s/nomask.onnx", dir);
    write_typed_model(path, "B", "T", 0);
    rows = sweep_typed(path, "B=1,2", "T=8", NULL, NULL, NULL, OQ_OK, &err);
    assert_int_equal(rows->rows[1].batch, 2);
    assert_string_equal(rows->rows[1].seq_dim, "");
    assert_int_equal(rows->rows[1].seq_len, 0);
    oq_bench_rows_free(rows);
    rows = sweep_typed(path, "B=1,2", "T=8", "T", NULL, NULL, OQ_OK, &err);
    assert_string_equal(rows->rows[1].seq_dim, "T");
    assert_int_equal(rows->rows[1].seq_len, 8);
    oq_bench_rows_free(rows);
    assert_null(sweep_typed(path, "B=1,2", "T=8", "B", NULL, NULL, OQ_ERR_INVALID_ARG, &err));
    assert_string_equal(err.msg, "opts.seq_dim 'B': that is the batch's dimension");
    assert_null(sweep_typed(path, "B=1,2", "T=8", "L", NULL, NULL, OQ_ERR_INVALID_ARG, &err));
    assert_string_equal(err.msg, "opts.seq_dim 'L': the model has no such dimension (its dimensions: T, B)");
    remove_dir(dir);
}

/* Integer, bool and bfloat16 outputs against --expected: exact for the first two; one id changed
 * fails the row by name. Every output has its tensor (one left out is refused, as validate
 * refuses it: it would pass uncompared). */
static void test_integer_outputs_expected(void **state)
{
    (void)state;
    char *dir = temp_dir("bench_ints");
    char path[512], in_path[512], good[512], bad[512];
    snprintf(path, sizeof path, "%s/typed.onnx", dir);
    snprintf(in_path, sizeof in_path, "%s/in.npz", dir);
    snprintf(good, sizeof good, "%s/good.npz", dir);
    snprintf(bad, sizeof bad, "%s/bad.npz", dir);
    write_typed_model(path, "batch", "seq", 0);
    oq_err err = {0};
    const int64_t xs[] = {1, 2, 4}, ps[] = {1, 2};
    oq_tensor *x = NULL, *pred = NULL, *pos = NULL, *half = NULL, *i32 = NULL;
    assert_int_equal(oq_tensor_create(&x, OQ_DTYPE_FLOAT32, 3, xs, "x", &err), OQ_OK);
    assert_int_equal(oq_tensor_create(&pred, OQ_DTYPE_INT64, 2, ps, "pred", &err), OQ_OK);
    assert_int_equal(oq_tensor_create(&pos, OQ_DTYPE_BOOL, 3, xs, "pos", &err), OQ_OK);
    /* (numpy has no bfloat16: saved as float32, as PyTorch's outputs would be) */
    assert_int_equal(oq_tensor_create(&half, OQ_DTYPE_FLOAT32, 3, xs, "half", &err), OQ_OK);
    assert_int_equal(oq_tensor_create(&i32, OQ_DTYPE_INT32, 3, xs, "i32", &err), OQ_OK);
    const float xv[] = {0.5f, -1, 2, 0, -3, -2, -1, -4}; /* each exact in bfloat16 and in int32 */
    memcpy(x->data, xv, sizeof xv);
    ((int64_t *)pred->data)[0] = 2;
    ((int64_t *)pred->data)[1] = 2;
    for (size_t i = 0; i < 8; i++) {
        ((uint8_t *)pos->data)[i] = xv[i] > 0;
        oq_tensor_set_f64(half, (int64_t)i, xv[i]);
        ((int32_t *)i32->data)[i] = (int32_t)xv[i];
    }
    assert_int_equal(oq_npz_write(in_path, 1, (const oq_tensor *const *)&x, 0, 0, &err), OQ_OK);
    const oq_tensor *outs[] = {pred, pos, half, i32};
    assert_int_equal(oq_npz_write(good, 4, outs, 0, 0, &err), OQ_OK);
    oq_bench_rows *rows = sweep_typed(path, "seq=2", "batch=1", NULL, in_path, good, OQ_OK, &err);
    const oq_bench_row *r = &rows->rows[0];
    if (r->status != OQ_BENCH_OK) fail_msg("%s", r->error);
    assert_int_equal(r->n_outputs, 4);
    for (size_t i = 0; i < 4; i++) assert_true(r->outputs[i].passed);
    oq_bench_rows_free(rows);
    ((int64_t *)pred->data)[1] = 0;
    assert_int_equal(oq_npz_write(bad, 4, outs, 0, 0, &err), OQ_OK);
    rows = sweep_typed(path, "seq=2", "batch=1", NULL, in_path, bad, OQ_OK, &err);
    r = &rows->rows[0];
    assert_int_equal(r->status, OQ_BENCH_FAILED);
    assert_non_null(strstr(r->error, "output 'pred'"));
    assert_int_equal(r->n_samples, 2);
    oq_bench_rows_free(rows);
    /* i32 left out: refused before any session, naming it */
    assert_int_equal(oq_npz_write(bad, 3, outs, 0, 1, &err), OQ_OK);
    assert_null(sweep_typed(path, "seq=2", "batch=1", NULL, in_path, bad, OQ_ERR_NOT_FOUND, &err));
    assert_non_null(strstr(err.msg, "no tensor for the model's output i32 int32 [batch,seq,4]"));
    oq_tensor_free(x);
    oq_tensor_free(pred);
    oq_tensor_free(pos);
    oq_tensor_free(half);
    oq_tensor_free(i32);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dim_and_shape_parse),
        cmocka_unit_test(test_named_dims_bind_across_inputs),
        cmocka_unit_test(test_sweeps_first_slowest),
        cmocka_unit_test(test_usage_errors_name_the_input_and_axis),
        cmocka_unit_test(test_npz_inputs_as_they_are),
        cmocka_unit_test(test_empty_and_ungeneratable_inputs),
        cmocka_unit_test(test_generated_inputs),
        cmocka_unit_test(test_profile_per_run),
        cmocka_unit_test(test_expected_outputs_judged),
        cmocka_unit_test(test_model_read_once),
        cmocka_unit_test(test_vmhwm_is_the_rows_peak),
        cmocka_unit_test(test_refusal_by_the_dims_run),
        cmocka_unit_test(test_batch_axis_of_any_name),
        cmocka_unit_test(test_mask_by_contract),
        cmocka_unit_test(test_mask_from_graph),
        cmocka_unit_test(test_integer_outputs_expected),
        cmocka_unit_test(test_notes_folded_once),
        cmocka_unit_test(test_torch_names_kept_in_the_point),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
