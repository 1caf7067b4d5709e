/* Internals of `convert`: the model being rewritten, the passes, the check.
 *
 * The working model keeps the unpacked original untouched: input, node, initializer
 * and value_info lists are arrays of pointers into it or to protos the passes
 * made (each malloc'ed whole, freed with its protobuf-c free_unpacked). A node
 * a pass edits is first cloned. Serializing assembles a ModelProto shell around
 * the lists.
 */
#ifndef ORTQUAL_CONVERT_IMPL_H
#define ORTQUAL_CONVERT_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "core/core-impl.h"
#include "inspect/gview-impl.h"
#include "inspect/heads-impl.h"
#include "inspect/sdpa-impl.h"
#include "inspect/symdim-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/convert.h"
#include "ortqual/fileio.h"

typedef struct cv_vec { /* grown with OQ_PUSH only */
    void **v;
    size_t n;
} cv_vec;

typedef struct cv_names { /* open addressing set of owned strings */
    char **v;
    size_t n, cap;
} cv_names;

/* An external-data file as convert first opened it: dir/location, and its stat. */
typedef struct cv_ext_file {
    char *path;
    struct stat st;
} cv_ext_file;

typedef struct cv_model {
    Onnx__ModelProto *orig;
    char *name;                 /* for messages: the input path */
    cv_vec nodes, inits, vinfo, meta;
    cv_vec inputs;              /* the graph inputs (ValueInfoProto): the original's, less those frozen */
    cv_vec owned_nodes, owned_inits, owned_vinfo, owned_meta; /* what to free */
    cv_vec created;             /* nodes the passes added (not clones of the model's) */
    int64_t opset, opset_in;    /* default domain: now and as read */
    int64_t ir_version;
    cv_names values, nodes_named; /* names in use, for fresh names */
    cv_names typed;             /* every name vinfo held (some since pruned): cv_set_type's index */
    /* a view of the current lists, rebuilt after edits */
    Onnx__GraphProto gshell;
    oq_gview *view;
    oq_symctx *sym;
    int oom;
    char *dir;                  /* the input's folder, where its external data is (or NULL) */
    cv_ext_file *ext_files;     /* each data file as first opened: a change to it is refused */
    size_t n_ext_files;
} cv_model;

/* `dir`: the folder external data locations are relative to; NULL for a model in memory,
 * where an initializer with external data is refused. */
oq_status cv_model_load(const void *buf, size_t len, const char *name, const char *dir, cv_model **out,
                        oq_err *err);
void cv_model_free(cv_model *m);
/* A deep copy (for the check's reference: the original, lowered). */
oq_status cv_model_clone(const cv_model *m, cv_model **out, oq_err *err);

/* The graph as it is now, indexed (rebuilt when the lists changed). NULL on OOM. */
const oq_gview *cv_view(cv_model *m);
oq_symctx *cv_sym(cv_model *m);
/* Call after any edit of the lists. */
void cv_touch(cv_model *m);

/* A value name nothing uses yet: `prefix`, else prefix_1, prefix_2, ... (model-owned). */
const char *cv_fresh(cv_model *m, const char *prefix);
/* The value and node names `from` uses, marked used in `to` too: a subgraph rewritten as a model
 * of its own takes no name of the model around it, and the model none the subgraph took. */
void cv_names_inherit(cv_model *to, const cv_model *from);
/* A new node appended to the list (its inputs and outputs copied); NULL on OOM.
 * The node name is fresh, derived from `name_hint`. */
Onnx__NodeProto *cv_node_add(cv_model *m, const char *op, const char *name_hint, size_t n_in,
                             const char *const *in, size_t n_out, const char *const *out);
void cv_attr_int(cv_model *m, Onnx__NodeProto *n, const char *name, int64_t v);
void cv_attr_float(cv_model *m, Onnx__NodeProto *n, const char *name, float v);
void cv_attr_ints(cv_model *m, Onnx__NodeProto *n, const char *name, size_t k, const int64_t *v);
/* Set (or add) an int attribute on a node the pass owns (see cv_node_own). */
void cv_attr_set_int(cv_model *m, Onnx__NodeProto *n, const char *name, int64_t v);
/* Replace list entry i by a private clone the pass may edit, and return it. */
Onnx__NodeProto *cv_node_own(cv_model *m, size_t i);
/* Set input slot k of an owned node (growing the input list with "" as needed). */
void cv_node_set_input(cv_model *m, Onnx__NodeProto *n, size_t k, const char *value);
/* Remove list entry i (the proto stays allocated until the model is freed). */
void cv_node_remove(cv_model *m, size_t i);
/* 1 when a pass added `n` (written for the output opset), 0 for the model's own nodes. */
int cv_node_created(const cv_model *m, const Onnx__NodeProto *n);
/* Index of node `n` in the list, or (size_t)-1. */
size_t cv_node_index(cv_model *m, const Onnx__NodeProto *n);

/* A new initializer (scalar or 1-D) under a fresh name from `hint`; returns the name. */
const char *cv_const_i64(cv_model *m, const char *hint, size_t n, const int64_t *v, int scalar);
const char *cv_const_scalar(cv_model *m, const char *hint, int32_t elem_type, double v);

/* One dimension of a type: a value, a name, or unknown (value < 0, param NULL). */
typedef struct cv_dim {
    int64_t value;
    const char *param;
} cv_dim;
/* The declared type of `value` (elem type and dims, rank -1 when unknown);
 * param strings are borrowed from the model. Returns the elem type or 0. */
int32_t cv_type_of(cv_model *m, const char *value, int *rank, cv_dim *dims);
/* Declare `value`'s type in value_info (replacing any earlier declaration). rank < 0: elem type only. */
void cv_set_type(cv_model *m, const char *value, int32_t elem_type, int rank, const cv_dim *dims);

/* Declare the types of undeclared tensors that forward inference over the common ops
 * finds (element type and rank known; sizes named where known). Returns how many. */
size_t cv_infer_types(cv_model *m);
/* fn(ctx, NAME) for every name g reads: its nodes' inputs, its outputs, and those of the subgraphs
 * inside it (their own names too, which name nothing outside: ONNX names are unique). */
typedef void (*cv_name_fn)(void *ctx, const char *name);
void cv_graph_reads(const Onnx__GraphProto *g, cv_name_fn fn, void *ctx);
/* Drop nodes nothing reads (graph outputs are read), then unused initializers and
 * value_info of values that no longer exist. Returns how many nodes went. */
size_t cv_prune(cv_model *m);
/* What cv_prune keeps: live[i] is 1 for node i (malloc'ed, m->nodes.n entries); NULL on OOM
 * (m->oom set). */
unsigned char *cv_live_nodes(cv_model *m);
/* Put the nodes in a topological order (stable: the current order where allowed).
 * OQ_ERR_FORMAT when the graph has a cycle or reads an undefined value. */
oq_status cv_toposort(cv_model *m, oq_err *err);
/* Replace or add a metadata_props entry. */
void cv_set_meta(cv_model *m, const char *key, const char *value);
/* Serialize with the working opset and IR version; caller frees *buf. */
oq_status cv_serialize(cv_model *m, uint8_t **buf, size_t *len, oq_err *err);
oq_status cv_oom(cv_model *m, oq_err *err);

/* ---- external data (extdata.c) ---- */
int cv_ext_is(const Onnx__TensorProto *t);
/* Checks every external initializer (location inside `dir`, its bytes there), reads the
 * small ones into the model and records each data file as it is (m->ext_files). */
oq_status cv_ext_load(cv_model *m, const char *dir, oq_err *err);
/* `later`'s data files are as `first` recorded them (the same input loaded twice): otherwise
 * OQ_ERR_IO "... changed while convert ran; nothing written". */
oq_status cv_ext_same(const cv_model *first, const cv_model *later, oq_err *err);
size_t cv_ext_count(const cv_model *m);
/* OUT.onnx's data file, "OUT.onnx.data" (malloc'ed). */
char *cv_ext_data_path(const char *out_path);
/* The external initializers copied into `af` (open on cv_ext_data_path(OUT)) and pointed at
 * it by its file name (relative to the output's folder); the caller commits or aborts af.
 * A data file that is no longer as cv_ext_load recorded it, at the end of a tensor's copy (the
 * file read and the file its path names), is OQ_ERR_IO: the check may have run other bytes. */
oq_status cv_ext_write(cv_model *m, oq_atomic_file *af, oq_err *err);
/* Initializer i as an owned tensor of the same name, type and shape: holding `raw`, or
 * pointing at external data. NULL on OOM. */
Onnx__TensorProto *cv_init_replace(cv_model *m, size_t i, const void *raw, size_t raw_len);
Onnx__TensorProto *cv_init_external(cv_model *m, size_t i, const char *location, int64_t offset, int64_t length);

/* ---- the plan ------------------------------------------------------------------------ */

/* oq_convert_plan_bytes, and with `conv` the converted model serialized (what
 * oq_convert_file writes after its check; caller frees): the in-memory conversion
 * the fuzz harness drives, no file and no ORT. */
oq_status cv_convert_bytes(const void *buf, size_t len, const char *name, const char *dir,
                           const oq_convert_opts *o, oq_convert_report **out, uint8_t **conv, size_t *conv_n,
                           oq_err *err);

/* Free what a report holds (not the struct itself). */
void cv_report_clear(oq_convert_report *r);
/* Append a step to the report; printf-style detail. */
void cv_step(oq_convert_report *r, const char *pass, const char *node, const char *action,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- the mask function ----------------------------------------------------------------- */

/* What an attention mask computes, in terms of the [B, L] mask input. */
typedef enum cv_maskfn_kind {
    CV_MASK_ALL,         /* every key attended: the mask can go */
    CV_MASK_KEY_PADDING, /* keys where mask[b, k] is set */
    CV_MASK_CAUSAL,      /* key k for query q when k <= q */
    CV_MASK_CAUSAL_PADDING
} cv_maskfn_kind;

typedef struct cv_maskfn {
    cv_maskfn_kind kind;
    const char *input;   /* the mask input (padding kinds) */
    oq_symdim batch, keys, causal; /* sizes: the input's B and L, the causal square's side */
    int inverted;        /* refused because the mask reads the input with the other polarity */
    const char *default_input; /* refused because a causal triangle is this graph input's default */
} cv_maskfn;

/* Work out the function of `mask` (an attn_mask, bool or additive; NULL: none) combined
 * with is_causal. 0 with *fn filled, or 1 with the reason in why. `mask_input`
 * (may be NULL) restricts which graph input may act as the mask; `polarity` says which of
 * its values marks a valid key. */
int cv_maskfn_eval(cv_model *m, const char *mask, int is_causal, const char *mask_input,
                   oq_mask_polarity polarity, cv_maskfn *fn, char *why, size_t why_n);

/* ---- passes ---------------------------------------------------------------------------- */

typedef struct cv_ctx {
    const oq_convert_opts *o;
    oq_convert_report *r;
    const char *contract_input; /* set by a rewrite exact only under the valid-prefix contract */
    char **contract_nodes;      /* ... and the nodes it concerns (malloc'ed) */
    size_t n_contract;
    size_t reduced;             /* Attention nodes computing in --attention-dtype after its pass */
    oq_dtype computes_in;       /* the output's attention: float32, float16 or bfloat16 (its tolerance) */
    oq_mask_polarity polarity;  /* the mask's: the options', or the inherited contract's when none is given */
    int inherited;              /* the model carried a contract (converted before) ... */
    size_t n_inherited;         /* ... naming these first n_contract nodes */
    char **lowp_outputs;        /* the graph outputs an Attention computing in float16/bfloat16 feeds */
    size_t n_lowp;              /* (their tolerance is computes_in's; the others' float32's) */
    struct cv_changed *changed; /* the subgraphs a pass rewrote: the check says whether batches ran them */
    size_t n_changed;
} cv_ctx;

/* A subgraph a pass rewrote, or the opset raise changed. */
typedef struct cv_changed {
    char *where;      /* "If 'If_z' then_branch" (nested: "If 'If_z' then_branch, If 'If_n' else_branch") */
    char *what;       /* "decompose-elu rewrote", "the raise to ai.onnx opset 23 changed" */
    char *cond;       /* a top-level If's condition (a batch shows which branch it takes), else NULL */
    int then_branch;  /* ... and the branch: 1 then_branch, 0 else_branch */
    int rewritten;    /* a pass rewrote it (unchecked where no batch runs it); 0: only raised, its
                         nodes read at the new opset by opset.c's table */
} cv_changed;

/* Record that `node` is exact only when `input` keeps the valid-prefix contract.
 * 1 (with a refusal step) when another input already carries the contract. */
int cv_contract(cv_ctx *c, const char *pass, const char *node, const char *input);

/* Graph inputs with a default made constants (opts freeze, freeze_defaults): dropped from
 * m->inputs, their initializers kept. Runs before every other pass. */
oq_status cv_pass_freeze(cv_ctx *c, cv_model *m, oq_err *err);
oq_status cv_pass_fuse(cv_ctx *c, cv_model *m, oq_err *err);
oq_status cv_pass_mask_to_seqlen(cv_ctx *c, cv_model *m, oq_err *err);
oq_status cv_pass_expand_mask(cv_ctx *c, cv_model *m, oq_err *err);
/* asked: the pass was requested (a node it cannot pad is refused), not on by default
 * (such a node is skipped with the reason). */
oq_status cv_pass_pad_head(cv_ctx *c, cv_model *m, int asked, oq_err *err);
/* emulate: round Q/K/V to the dtype and back, attention stays float32 (a check model) */
oq_status cv_pass_attention_dtype(cv_ctx *c, cv_model *m, int32_t dtype, int emulate, oq_err *err);
oq_status cv_pass_lower(cv_ctx *c, cv_model *m, oq_err *err);
oq_status cv_pass_decompose_elu(cv_ctx *c, cv_model *m, oq_err *err);
/* The newest opset ONNX Runtime 1.29 runs ("official support ... is till opset 26"): convert's
 * check runs the output on it, and opset.c's table holds the changes up to it. */
#define CV_OPSET_MAX 26

/* Check that every default-domain operator keeps its meaning from the model's opset to
 * `target` (at most CV_OPSET_MAX): 1, with a refused "opset" step naming the first node that
 * does not (or the lowering), counted in c->r->refused; else 0. */
int cv_opset_check(cv_ctx *c, cv_model *m, int64_t target);

/* ---- subgraphs (subgraph.c) ------------------------------------------------------------ */

/* The attention inside subgraphs (If branches, Loop and Scan bodies), which the attention passes
 * do not rewrite: each chain (with OQ_CONVERT_FUSE) and each Attention node (with a pass that
 * rewrites Attention nodes) is a refused step naming its subgraph, counted in c->r->refused. */
oq_status cv_subgraph_attention(cv_ctx *c, cv_model *m, oq_err *err);
/* Apply `pass` inside every subgraph of m's nodes that holds an `op` node, nested ones included:
 * each such subgraph becomes a model of its own (the outer values it reads declared as
 * m declares them), the pass runs on it, and its graph replaces the subgraph. Its steps say
 * where; each subgraph changed is recorded in c->changed for the check. */
typedef oq_status (*cv_pass_fn)(cv_ctx *c, cv_model *m, oq_err *err);
oq_status cv_subgraphs_rewrite(cv_ctx *c, cv_model *m, const char *op, const char *pass_name, cv_pass_fn pass,
                               oq_err *err);
/* Every subgraph recorded as changed by the raise to `target` (after the rewrites' own records). */
oq_status cv_subgraphs_raised(cv_ctx *c, cv_model *m, int64_t target, oq_err *err);
/* Free c's records of changed subgraphs. */
void cv_changed_clear(cv_ctx *c);

/* ---- the check ----------------------------------------------------------------------- */

/* Run `reference` and `converted` on ORT CPU over the batches (given or generated) and
 * compare; fills r->checks and r->passed. OQ_ERR_CHECK_FAILED when an output differs
 * beyond tolerance, OQ_ERR_RUNTIME when a model cannot run. */
oq_status cv_check(cv_ctx *c, cv_model *reference, cv_model *converted, oq_err *err);

/* ---- the contract, read back ----------------------------------------------------------- */

/* oq_convert_read_contract of a model's bytes (`path` names it in messages): a caller that
 * reads the file once for more than the contract (validate) parses it from those bytes, and
 * its polarity (NULL: not wanted; keep where the contract names none). */
oq_status oq_convert_contract_of(const void *buf, size_t n, const char *path, int *has, char *input, size_t cap,
                                 oq_mask_polarity *polarity, oq_err *err);

/* The polarity a model's mask is read in, one rule for convert, validate, replay and bench:
 * the contract's (`recorded`), which a polarity the caller chose (`given`, *polarity) must
 * equal: a caller's other polarity is refused, naming the model (`path`), since the masks made
 * or read with it would not be those the model reads. */
oq_status oq_contract_polarity_adopt(const char *path, oq_mask_polarity recorded, int given, oq_mask_polarity *polarity,
                                     oq_err *err);

#endif
