/* What is inside an ONNX model: header, I/O, operators, attention nodes.
 *
 *     oq_model_info *mi;
 *     if (oq_model_inspect_file("model.onnx", &mi, &err) == OQ_OK) {
 *         for (size_t i = 0; i < mi->n_attention; i++)
 *             printf("%s %s\n", mi->attention[i].kind, mi->attention[i].name);
 *         char *json = oq_model_info_json(mi);   // same content, machine-readable
 *         ...
 *         free(json);
 *         oq_model_info_free(mi);
 *     }
 *
 * Attention nodes found:
 *   - ONNX `Attention` (ai.onnx, opset 23+), with its attributes and which
 *     optional inputs are connected (attn_mask, past_key/value, nonpad_kv_seqlen);
 *   - com.microsoft `MultiHeadAttention`, `GroupQueryAttention` (and the
 *     other com.microsoft attention kernels: Attention, PackedAttention, ...);
 *   - decomposed attention: a Softmax whose input comes from a MatMul through
 *     only Mul/Div/Add/Sub/Where/Cast nodes and whose output reaches a second
 *     MatMul through only Cast/Where/Mul nodes, found by walking the graph.
 * Nodes inside subgraphs (If branches, Loop and Scan bodies, nested) are counted in `ops` and
 * matched as the top level's, each attention node there with its place at the start of its
 * `detail` ("in If 'If_y' then_branch; ..."); `n_nodes` counts the main graph's.
 * Warnings: nodes in custom domains (anything but ai.onnx, ai.onnx.ml and
 * com.microsoft), domains used without an opset import, external data, and each subgraph
 * ("If 'If_y' then_branch: a subgraph of 5 nodes ...").
 *
 * Errors: OQ_ERR_IO (unreadable file), OQ_ERR_FORMAT ("FILE: not an ONNX
 * model ..." for a truncated file, another format, or a protobuf that lacks
 * ir_version, graph or opset_import), OQ_ERR_NOMEM.
 */
#ifndef ORTQUAL_INSPECT_H
#define ORTQUAL_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oq_io_info {
    char *name;
    int32_t elem_type;  /* onnx TensorProto data type (oq_dtype values), 0 if not a tensor */
    int32_t rank;       /* -1 when the model gives no shape */
    char **dims;        /* rank strings: "7", "batch", or "?" for an unnamed unknown dim */
    char **denotations; /* rank entries, each dim's ONNX denotation ("DATA_BATCH", "DATA_TIME",
                           ...: graph.h) or NULL; NULL when no dim has one */
    char *not_tensor;   /* a value that is no tensor, its type in words ("sequence of float32
                           tensors", "map from int64 to float32 tensors", "optional ..."); NULL
                           for a tensor */
} oq_io_info;

typedef struct oq_opset_info {
    char *domain;       /* "" for ai.onnx */
    int64_t version;
} oq_opset_info;

typedef struct oq_op_count {
    char *domain;       /* "" for ai.onnx */
    char *op_type;
    int64_t count;
} oq_op_count;

typedef struct oq_attention_info {
    char *kind;         /* "Attention", "MultiHeadAttention", "GroupQueryAttention", other
                           com.microsoft op types, or "decomposed" */
    char *domain;
    char *name;         /* node name; for decomposed, the Softmax node's */
    size_t n_attrs;
    char **attrs;       /* "name=value" strings (ints/floats/strings/lists) */
    char *detail;       /* connected inputs, or the decomposed chain ("MatMul 'a' -> Mul -> ...") */
    int32_t elem_type;  /* the element type it computes in (oq_dtype values), 0 when unknown: its
                           first input's (Q) for an operator; for a decomposed chain the coarsest of
                           its two products and its Softmax (bfloat16, then float16), else the
                           Softmax's. Declared, or derived through the producers (ortqual's own
                           exports declare no intermediates) */
    int64_t heads;      /* the query heads it computes: Q's axis 1 where Q is 4-D ([B, H, L, D]),
                           else q_num_heads (com.microsoft: num_heads); for a decomposed chain the
                           heads axis of its query, through the Reshape that split it off the
                           hidden axis; heads folded into the batch axis ([B*H, L, D]): axis 1 of
                           the [B, H, L, D] Q was reshaped from, or of the output's unfolding
                           Reshape (detail says "heads folded into the batch axis", and "not
                           fixed by the graph" where 0); nn.MultiheadAttention's fold with no 4-D
                           value ([L, B, E] -> Reshape [L, B*H, D] -> Transpose(1,0,2)): E / D of
                           that Reshape, the same for Q, K and V (detail says why not where they
                           differ, and heads is 0); 0 when the model does not fix them */
    int64_t head_dim;   /* D, the size of each head: Q's last axis where Q is 4-D (a chain's
                           query [B, H, L, D] or [B*H, L, D]), else Q's hidden axis over the heads
                           (3-D Q of an Attention, com.microsoft MultiHeadAttention or
                           GroupQueryAttention with a key input); 0 when the model does not fix it */
} oq_attention_info;

typedef struct oq_model_info {
    int64_t ir_version;
    char *producer_name, *producer_version, *doc_string;
    size_t n_opsets;
    oq_opset_info *opsets;
    size_t n_inputs, n_outputs;
    oq_io_info *inputs, *outputs;     /* inputs: those a run must feed (ONNX Runtime's inputs) */
    /* Graph inputs an initializer of the same name backs (ONNX IR >= 4): the initializer is a
     * default a caller may override (ONNX Runtime's overridable initializers). A run need not
     * feed them; ortqual's runs feed none. Below IR 4 every initializer is listed as an input
     * and none is overridable: those are not inputs, and are left out. */
    size_t n_default_inputs;
    oq_io_info *default_inputs;
    size_t n_initializers;
    uint64_t initializer_bytes;       /* embedded data only */
    uint64_t external_bytes;          /* in external-data files (their "length" entries) */
    size_t n_external;                /* initializers whose data is in such a file */
    size_t n_external_files;
    char **external_files;            /* those files, as the model names them (relative to its folder) */
    size_t n_nodes;
    size_t n_ops;
    oq_op_count *ops;                 /* by domain then op_type */
    size_t n_attention;
    oq_attention_info *attention;     /* in graph order */
    size_t n_warnings;
    char **warnings;
} oq_model_info;

/* Inspect a file / a buffer (`name` labels error messages). An empty path is
 * OQ_ERR_INVALID_ARG ("path is empty"), as NULL is. */
OQ_API oq_status oq_model_inspect_file(const char *path, oq_model_info **out, oq_err *err);
/* The external-data files `path`'s initializers name (their "location", relative to the model's
 * folder), each once, without the rest of an inspection; none is OQ_OK with *n 0. Free each
 * string and the array (oq_strv_free, runtime.h, does). */
OQ_API oq_status oq_model_external_files(const char *path, char ***files, size_t *n, oq_err *err);
OQ_API oq_status oq_model_inspect_bytes(const void *buf, size_t n, const char *name, oq_model_info **out,
                                        oq_err *err);
OQ_API void oq_model_info_free(oq_model_info *mi);
/* The input of mi->default_inputs called `name`, or NULL (also for a NULL mi or name). */
OQ_API const oq_io_info *oq_model_default_input(const oq_model_info *mi, const char *name);
/* "a, b, c": the names of io[0 .. n) into buf (cut short to fit), for messages; "" for a NULL
 * io, and nothing written to a NULL buf. */
OQ_API void oq_io_names(const oq_io_info *io, size_t n, char *buf, size_t size);
/* The name of an ONNX element type (oq_io_info.elem_type): "float32", "string",
 * "complex64"... also for the types oq_dtype does not hold; "unknown" beyond them; never NULL. */
OQ_API const char *oq_elem_type_name(int32_t elem_type);

/* The precision a model of yours is judged at when no reference of ortqual's computes its
 * outputs (validate's and replay's --model defaults, bench --model's rows and tolerances): a
 * model whose attention computes in float16 or bfloat16 (an attention operator whose Q is of
 * that type, as after `convert --flash`; a decomposed MatMul -> Softmax -> MatMul chain with a
 * step of it: oq_attention_info.elem_type), or one with an output of that type, misses float32
 * tolerances by its own rounding.
 *
 *     oq_model_precision p;
 *     oq_model_precision_of(mi, &p);
 *     if (p.dtype) printf("judged at %s: %s\n", oq_model_precision_name(&p), p.why);
 *                                                 // "judged at fp16: Attention 'attn' computes in float16"
 */
typedef struct oq_model_precision {
    oq_dtype dtype; /* OQ_DTYPE_FLOAT16 or OQ_DTYPE_BFLOAT16 (bfloat16 where both are), else
                       OQ_DTYPE_UNDEFINED: float32 tolerances */
    char why[512];  /* one line naming the first attention or output of that type: "Attention
                       'attn' computes in float16", "decomposed attention (Softmax 'sm') computes
                       in float16", "output 'y' is bfloat16"; "" for UNDEFINED */
} oq_model_precision;

/* The precision of the model `mi` describes (NULL mi: UNDEFINED). */
OQ_API void oq_model_precision_of(const oq_model_info *mi, oq_model_precision *out);
/* The precision field of the configurations that judge it, one for validate, replay and bench:
 * "bf16", "fp16" or "fp32" (NULL p: "fp32"). */
OQ_API const char *oq_model_precision_name(const oq_model_precision *p);

/* The info as a JSON object (malloc'ed, NUL-terminated; "schema": OQ_INSPECT_SCHEMA), NULL on
 * allocation failure or for a NULL mi. */
#define OQ_INSPECT_SCHEMA "ortqual.inspect/1"
OQ_API char *oq_model_info_json(const oq_model_info *mi);

/* The K and V heads of mi->attention[i] (mi from oq_model_inspect_file or _bytes): K's axis 1
 * where K is 4-D ([B, Hkv, L, D]), else kv_num_heads; grouped-query attention where they differ
 * from its heads (which --lower does not rewrite). 0 when the model does not fix them, for a
 * decomposed chain (its K is repeated to the query heads before the product), or i out of range.
 * (oq_attention_info has no member for it: its size is the ABI's.) */
OQ_API int64_t oq_attention_kv_heads(const oq_model_info *mi, size_t i);

/* One node of a model and what the model declares about the values it reads and writes
 * (graph inputs and outputs, value_info, initializers): enough to name a node's inputs and
 * their shapes when a runtime refuses it.
 *
 *     oq_node_info *nodes; size_t n;
 *     oq_model_find_nodes("m.onnx", NULL, "Attention", &nodes, &n, &err);
 *     ... nodes[0].inputs[3].name, .dims (rank -1: the model declares no shape) ...
 *     oq_node_infos_free(nodes, n);
 */
typedef struct oq_node_info {
    char *name;         /* "" when the node has none */
    char *op_type, *domain;
    size_t index;       /* its position among the graph's nodes */
    size_t n_attrs;
    char **attrs;       /* the integer and float attributes as "name=value" */
    size_t n_inputs, n_outputs;
    oq_io_info *inputs, *outputs; /* name "" for an omitted optional input; elem_type 0 and
                                     rank -1 when the model declares nothing about the value */
} oq_node_info;

/* Every node of the main graph named `name` (NULL: any name) whose op_type is `op_type`
 * (NULL: any), in graph order; none found is OQ_OK with *n 0. Errors as oq_model_inspect_file. */
OQ_API oq_status oq_model_find_nodes(const char *path, const char *name, const char *op_type,
                                     oq_node_info **nodes, size_t *n, oq_err *err);
OQ_API void oq_node_infos_free(oq_node_info *nodes, size_t n);
/* The integer attribute `name` of a node, or `def` when it has none (or node or name is NULL). */
OQ_API int64_t oq_node_info_attr_int(const oq_node_info *node, const char *name, int64_t def);

#ifdef __cplusplus
}
#endif
#endif
