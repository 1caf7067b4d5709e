/* Placement proof: which execution provider (EP) ran every node.
 *
 * A CUDA session may quietly run nodes on CPU. Two independent witnesses say
 * where each node went:
 *   1. ORT's EP graph assignment (ORT >= 1.24): create the session with the
 *      config entry OQ_PLACEMENT_SESSION_CONFIG ("session.record_ep_graph_
 *      assignment_info" = "1"), then oq_placement_add_assignment() reads
 *      Session_GetEpGraphAssignmentInfo. It is recorded after ORT's basic
 *      optimizations, before later fusions.
 *   2. ORT's profile (profile_prefix in oq_session_opts, then
 *      oq_session_end_profiling): every executed node has "<name>_kernel_time"
 *      events with args.provider, args.op_name and the input/output types and
 *      shapes; oq_placement_add_profile() reads them.
 * Nodes are merged by name; where both witnesses know a node and disagree, a
 * note says so (the profile, what ran, wins).
 *
 * Every node is then put in one class:
 *   OQ_PLACE_DEVICE       on a non-CPU EP;
 *   OQ_PLACE_MEMCPY       MemcpyToHost / MemcpyFromHost, copies ORT inserted at
 *                         an EP boundary (listed apart, whatever EP runs them);
 *   OQ_PLACE_CPU_SHAPE    on CPU and shape work (the rule below);
 *   OQ_PLACE_CPU_COMPUTE  on CPU, anything else.
 * The shape-work rule (ORT keeps the shape arithmetic of dynamic graphs on CPU
 * on purpose): the op is one of the shape-arithmetic ops (Shape, Size, Gather,
 * Unsqueeze, Squeeze, Concat, Slice, Reshape, Cast, Range, Equal, Where,
 * ConstantOfShape, ReduceSum, Add, Mul, ...; oq_placement_is_shape_op), AND
 * every tensor it reads or writes is shape-sized: an int64/int32/bool tensor
 * of rank <= 1, or a single element of any type (a scalar such as the
 * 1/sqrt(head_dim) scale computed from a shape). The data input of Shape and
 * Size is exempt: only its metadata is read. The types and shapes come from the
 * profile (what really ran), else from the model's declarations
 * (oq_placement_add_model; symbolic dims are unknown, so only the int/bool
 * rank <= 1 clause can hold there); a CPU node without them is compute: the
 * rule never guesses in a node's favour.
 *
 *     oq_placement *p;
 *     oq_placement_create(&p, &err);
 *     oq_placement_add_assignment(p, session, &err);   // needs the config entry
 *     oq_placement_add_profile(p, profile_path, &err);
 *     oq_placement_report r;
 *     oq_placement_check(p, strict ? OQ_PLACEMENT_STRICT : 0, &r, &err);
 *     if (!r.passed) for (size_t i = 0; i < r.n_failures; i++) puts(r.failures[i]);
 *     oq_placement_report_clear(&r);
 *     oq_placement_free(p);
 */
#ifndef ORTQUAL_PLACEMENT_H
#define ORTQUAL_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ortqual/runtime.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Session config entry that makes ORT record the EP graph assignment. */
#define OQ_PLACEMENT_SESSION_CONFIG "session.record_ep_graph_assignment_info"

typedef enum oq_node_place {
    OQ_PLACE_DEVICE = 0,
    OQ_PLACE_MEMCPY,
    OQ_PLACE_CPU_SHAPE,
    OQ_PLACE_CPU_COMPUTE
} oq_node_place;

/* "device", "memcpy", "cpu_shape", "cpu_compute". */
OQ_API const char *oq_node_place_name(oq_node_place p);

/* One input or output of a profiled node, as the profile recorded it. */
typedef struct oq_placed_tensor {
    char *dtype;     /* ORT's type name: "float", "int64", "bool", "MLFloat16", ...;
                        "unknown" when the model does not declare it */
    int32_t ndim;    /* -1: rank unknown */
    int64_t *dims;   /* ndim entries; -1 for a symbolic dimension */
} oq_placed_tensor;

typedef struct oq_placed_node {
    char *name;
    char *op_type;
    char *ep_assigned;     /* from the assignment info; NULL if it does not list the node */
    char *ep_profiled;     /* from the profile; NULL if the node has no kernel_time event */
    uint64_t runs;         /* kernel_time events (one per Run) */
    double us;             /* their total duration, microseconds */
    size_t n_inputs, n_outputs;
    oq_placed_tensor *inputs, *outputs; /* from the first profiled event, else the model's
                                           declarations (oq_placement_add_model); NULL/0 if none */
    bool types_from_model; /* inputs/outputs came from the model, not the profile */
    oq_node_place place;   /* set by oq_placement_check */
    const char *reason;    /* why that class (static text), set by oq_placement_check */
} oq_placed_node;

/* Per-EP totals over the nodes the profile saw (nodes, events, microseconds). */
typedef struct oq_ep_total {
    char *ep;
    uint64_t nodes, runs;
    double us;
} oq_ep_total;

typedef struct oq_placement {
    oq_placed_node *nodes; /* in order of first appearance */
    size_t n_nodes;
    oq_ep_total *eps;
    size_t n_eps;
    bool have_assignment, have_profile;
    size_t hint_;          /* internal: lookup cursor */
} oq_placement;

OQ_API oq_status oq_placement_create(oq_placement **out, oq_err *err);
OQ_API void oq_placement_free(oq_placement *p);

/* Read Session_GetEpGraphAssignmentInfo of `s`.
 * Errors: OQ_ERR_UNSUPPORTED (runtime API < 24: ORT older than 1.24),
 * OQ_ERR_RUNTIME (ORT refused, e.g. the session was created without
 * OQ_PLACEMENT_SESSION_CONFIG = "1"; ORT's message included), OQ_ERR_NOMEM. */
OQ_API oq_status oq_placement_add_assignment(oq_placement *p, const oq_session *s, oq_err *err);

/* Read an ORT profile file (a JSON array of events, or {"traceEvents": [...]}).
 * Errors: OQ_ERR_IO (cannot read), OQ_ERR_FORMAT (not JSON, not an event
 * array, a Node kernel_time event without args.provider/op_name: the message
 * names the file and the event index), OQ_ERR_NOMEM. */
OQ_API oq_status oq_placement_add_profile(oq_placement *p, const char *path, oq_err *err);
/* The same from text in memory; `what` names it in messages. */
OQ_API oq_status oq_placement_add_profile_text(oq_placement *p, const char *text, size_t len,
                                               const char *what, oq_err *err);

/* Types for nodes the profile did not describe (assignment-only nodes, or no
 * profile at all): the declared types of the node's inputs and outputs in the
 * model file (graph inputs/outputs, value_info, initializers), matched by node
 * name. Values the model does not declare are "unknown", which the shape rule
 * counts as compute. Call after the other sources. Errors: OQ_ERR_IO,
 * OQ_ERR_FORMAT (not an ONNX model), OQ_ERR_NOMEM. */
OQ_API oq_status oq_placement_add_model(oq_placement *p, const char *model_path, oq_err *err);
/* The same from model bytes in memory; `what` names them in messages. */
OQ_API oq_status oq_placement_add_model_bytes(oq_placement *p, const void *buf, size_t len,
                                             const char *what, oq_err *err);

/* Whether `op_type` (default ONNX domain) is a shape-arithmetic op of the rule. */
OQ_API bool oq_placement_is_shape_op(const char *op_type);

enum oq_placement_flags {
    OQ_PLACEMENT_STRICT = 1u << 0 /* --strict-placement: shape ops and Memcpy nodes fail too */
};

typedef struct oq_placement_report {
    int passed;            /* 1 only with evidence (some node) and no failure */
    bool strict;
    size_t n_device, n_memcpy, n_cpu_shape, n_cpu_compute, n_not_run, n_mismatch;
    size_t n_failures;
    char **failures;       /* one per node: "Softmax_3 (Softmax): compute on CPUExecutionProvider" */
    size_t n_notes;
    char **notes;          /* EP disagreements, nodes listed but never run, allowed shape ops */
} oq_placement_report;

/* Classify every node (sets place/reason) and judge placement:
 * --require-full-gpu semantics. Failures: every CPU compute node; with
 * OQ_PLACEMENT_STRICT also every CPU shape node and Memcpy node; and "no
 * placement evidence" when no node counts (none known, or a profile was read
 * but no node ran). A node the assignment lists but
 * the profile never saw (fused or removed after partitioning) is a note, not a
 * failure, when a profile was read. Returns OQ_OK when the check ran (see
 * r->passed); OQ_ERR_NOMEM otherwise. */
OQ_API oq_status oq_placement_check(oq_placement *p, unsigned flags, oq_placement_report *r, oq_err *err);
OQ_API void oq_placement_report_clear(oq_placement_report *r);

#ifdef __cplusplus
}
#endif
#endif
