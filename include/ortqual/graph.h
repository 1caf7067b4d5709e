/* Building ONNX models in C.
 *
 * An oq_graph is a builder context for one ModelProto: graph inputs and
 * outputs (static or symbolic dims), initializers copied from oq_tensors,
 * nodes with attributes, a doc string, and the opset imports. The context owns
 * every string, tensor and proto it makes and oq_graph_free releases them all
 * at once; callers never free anything they got from the builder.
 *
 * Errors are sticky: the first failing call records its message in the
 * context, later calls do nothing and return the same status, and
 * oq_graph_status() reports it. So a model can be written as a straight
 * sequence of calls with one check at the end:
 *
 *     oq_opset ops[] = {{"", 20}};
 *     oq_graph *g;
 *     if (oq_graph_create(ops, 1, "tiny", &g, &err)) return err.status;
 *     oq_dim d[] = {OQ_DIM_SYM("batch"), OQ_DIM(4)};
 *     oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 2, d);
 *     const char *y = oq_graph_op(g, "Relu", 1, (const char *[]){"x"}, 0, NULL);
 *     oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 2, d);
 *     oq_graph_write(g, "tiny.onnx", 0, &err);   // reports any earlier error too
 *     oq_graph_free(g);
 *
 * Names: every value and node name must be unique; oq_graph_fresh_name()
 * hands out names ("attn", "attn_1", ...) that no other value or node uses.
 * The IR version is chosen from the default-domain opset
 * (oq_graph_ir_version_for_opset), the producer is "ortqual" and its version.
 */
#ifndef ORTQUAL_GRAPH_H
#define ORTQUAL_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oq_graph oq_graph;

/* One opset import; domain "" (or NULL) is the default ai.onnx domain. */
typedef struct oq_opset {
    const char *domain;
    int64_t version;
} oq_opset;

/* One dimension of a graph input or output: symbolic when `param` is non-NULL. `denotation`
 * (NULL: none) is ONNX's dimension denotation, what the axis is (DimensionDenotation.md in the
 * ONNX repository), e.g. OQ_DENOTATION_BATCH: a fixed size says nothing of that, a name may. */
typedef struct oq_dim {
    int64_t value;
    const char *param;
    const char *denotation;
} oq_dim;
/* ONNX's standard denotations of a batch axis and of a time (sequence) axis. */
#define OQ_DENOTATION_BATCH "DATA_BATCH"
#define OQ_DENOTATION_TIME "DATA_TIME"
#ifdef __cplusplus
/* C++ has no compound literals: there the macros below make their values with these. */
inline oq_dim oq_dim_cxx_(int64_t v, const char *param, const char *denotation = NULL)
{
    oq_dim d;
    d.value = v;
    d.param = param;
    d.denotation = denotation;
    return d;
}
#define OQ_DIM(v) oq_dim_cxx_((v), NULL)
#define OQ_DIM_SYM(s) oq_dim_cxx_(0, (s))
#define OQ_DIM_DENOTED(v, den) oq_dim_cxx_((v), NULL, (den))
#else
#define OQ_DIM(v) ((oq_dim){(v), NULL, NULL})
#define OQ_DIM_SYM(s) ((oq_dim){0, (s), NULL})
#define OQ_DIM_DENOTED(v, den) ((oq_dim){(v), NULL, (den)})
#endif

typedef enum oq_attr_type {
    OQ_ATTR_INT,
    OQ_ATTR_FLOAT,
    OQ_ATTR_INTS,
    OQ_ATTR_FLOATS,
    OQ_ATTR_STRING,
    OQ_ATTR_TENSOR
} oq_attr_type;

/* A node attribute; the builder copies everything it points to. */
typedef struct oq_attr {
    const char *name;
    oq_attr_type type;
    int64_t i;             /* OQ_ATTR_INT */
    float f;               /* OQ_ATTR_FLOAT */
    size_t n;              /* element count of ints/floats */
    const int64_t *ints;   /* OQ_ATTR_INTS */
    const float *floats;   /* OQ_ATTR_FLOATS */
    const char *s;         /* OQ_ATTR_STRING */
    const oq_tensor *t;    /* OQ_ATTR_TENSOR */
} oq_attr;
#ifdef __cplusplus
inline oq_attr oq_attr_cxx_(const char *name, oq_attr_type type, int64_t i, float f, size_t n,
                            const int64_t *ints, const char *s)
{
    oq_attr a = oq_attr();
    a.name = name;
    a.type = type;
    a.i = i;
    a.f = f;
    a.n = n;
    a.ints = ints;
    a.s = s;
    return a;
}
#define OQ_ATTR_I(nm, v) oq_attr_cxx_((nm), OQ_ATTR_INT, (v), 0, 0, NULL, NULL)
#define OQ_ATTR_F(nm, v) oq_attr_cxx_((nm), OQ_ATTR_FLOAT, 0, (v), 0, NULL, NULL)
#define OQ_ATTR_IS(nm, cnt, p) oq_attr_cxx_((nm), OQ_ATTR_INTS, 0, 0, (cnt), (p), NULL)
#define OQ_ATTR_S(nm, str) oq_attr_cxx_((nm), OQ_ATTR_STRING, 0, 0, 0, NULL, (str))
#else
#define OQ_ATTR_I(nm, v) ((oq_attr){.name = (nm), .type = OQ_ATTR_INT, .i = (v)})
#define OQ_ATTR_F(nm, v) ((oq_attr){.name = (nm), .type = OQ_ATTR_FLOAT, .f = (v)})
#define OQ_ATTR_IS(nm, cnt, p) ((oq_attr){.name = (nm), .type = OQ_ATTR_INTS, .n = (cnt), .ints = (p)})
#define OQ_ATTR_S(nm, str) ((oq_attr){.name = (nm), .type = OQ_ATTR_STRING, .s = (str)})
#endif

/* IR version that goes with a default-domain opset: <= 20 -> 9, 21-22 -> 10,
 * 23 -> 11, 24 and later -> 12 (ONNX releases 1.15 to 1.19). */
OQ_API int64_t oq_graph_ir_version_for_opset(int64_t opset);

/* New builder. `opsets` must name the default domain once; `graph_name` may be NULL. */
OQ_API oq_status oq_graph_create(const oq_opset *opsets, size_t n_opsets, const char *graph_name,
                                 oq_graph **out, oq_err *err);
OQ_API void oq_graph_free(oq_graph *g);

/* The sticky status; fills `err` with the first error's message. */
OQ_API oq_status oq_graph_status(const oq_graph *g, oq_err *err);

/* Model doc string (replaces any previous one). */
OQ_API oq_status oq_graph_set_doc(oq_graph *g, const char *doc);

/* Graph inputs and outputs. For outputs, `value` is the produced value and
 * `name` the public name; when they differ an Identity node connects them.
 * ndim -1 declares no shape at all (any rank; dims unused). */
OQ_API oq_status oq_graph_add_input(oq_graph *g, const char *name, oq_dtype dtype, int32_t ndim,
                                    const oq_dim *dims);
OQ_API oq_status oq_graph_add_output(oq_graph *g, const char *value, const char *name, oq_dtype dtype,
                                     int32_t ndim, const oq_dim *dims);

/* Initializer: a copy of `t` (stored as little-endian raw_data) named `name`
 * (t->name when `name` is NULL). Returns the builder-owned name, NULL on error. */
OQ_API const char *oq_graph_add_initializer(oq_graph *g, const oq_tensor *t, const char *name);
/* Small constants as initializers with fresh names derived from `hint`. */
OQ_API const char *oq_graph_const_i64(oq_graph *g, const char *hint, size_t n, const int64_t *v);
OQ_API const char *oq_graph_const_f32(oq_graph *g, const char *hint, float v); /* scalar */
/* Scalar constant of any float dtype (float32/float16/bfloat16/float64). */
OQ_API const char *oq_graph_const_scalar(oq_graph *g, const char *hint, oq_dtype dtype, double v);

/* A node with explicit names. `domain` NULL or "" is ai.onnx; `name` NULL
 * gets a fresh name from op_type. Inputs may be "" for an omitted optional input. */
OQ_API oq_status oq_graph_add_node(oq_graph *g, const char *op_type, const char *domain,
                                   const char *name, size_t n_in, const char *const *inputs,
                                   size_t n_out, const char *const *outputs, size_t n_attr,
                                   const oq_attr *attrs);

/* Shorthand for a one-output ai.onnx node: makes a fresh output name from
 * op_type and returns it (builder-owned), or NULL after an error. */
OQ_API const char *oq_graph_op(oq_graph *g, const char *op_type, size_t n_in, const char *const *inputs,
                               size_t n_attr, const oq_attr *attrs);

/* A name no value or node uses yet: `prefix`, else `prefix_1`, `prefix_2`...
 * The name is reserved and owned by the builder. NULL only after an error. */
OQ_API const char *oq_graph_fresh_name(oq_graph *g, const char *prefix);

/* Serialized ModelProto in a malloc'ed buffer the caller frees. */
OQ_API oq_status oq_graph_serialize(const oq_graph *g, uint8_t **buf, size_t *len, oq_err *err);
/* Serialize and write atomically; without `overwrite` an existing file is an error. */
OQ_API oq_status oq_graph_write(const oq_graph *g, const char *path, int overwrite, oq_err *err);

/* Counts, for callers and tests; 0 for a NULL graph. */
OQ_API size_t oq_graph_node_count(const oq_graph *g);
OQ_API size_t oq_graph_initializer_count(const oq_graph *g);

#ifdef __cplusplus
}
#endif
#endif
