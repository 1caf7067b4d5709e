/* Converting a PyTorch export into the form ONNX Runtime runs fast, with proof.
 *
 * On ORT's CUDA EP, flash attention runs only for an ONNX Attention-24 node with
 * float16/bfloat16 Q, K, V and the padding given as `nonpad_kv_seqlen`, never
 * with an `attn_mask`. torch.onnx.export writes decomposed chains (opsets
 * 17-20) or Attention with a bool attn_mask [B,1,1,L] (opset 23, which ORT
 * 1.29/1.30 refuse to run). The passes rewrite one into the other:
 *
 *   OQ_CONVERT_FUSE            each decomposed softmax(scale * Q K^T + mask) V chain
 *                              (the shapes inspect lists as fusable) -> one Attention node
 *   OQ_CONVERT_MASK_TO_SEQLEN  an attn_mask that is a key-padding mask of a [B, L] model
 *                              input -> nonpad_kv_seqlen = ReduceSum(mask) (Attention-24);
 *                              a causal mask -> is_causal = 1; causal AND key padding ->
 *                              is_causal = 1 alone (the valid query rows only attend valid
 *                              keys anyway; see docs/convert.md for why not nonpad_kv_seqlen)
 *   OQ_CONVERT_EXPAND_MASK     a broadcast attn_mask -> [.., Lq, Lk] (what ORT requires)
 *   attention_dtype            Q, K, V cast to float16/bfloat16 before each Attention, the
 *                              output cast back; the rest of the model keeps its dtype
 *   OQ_CONVERT_PAD_HEAD        an Attention whose head size is not a multiple of 8 (which
 *                              ORT's CUDA flash and memory-efficient attention need): Q, K, V
 *                              zero-padded on the head axis to the next multiple of 8, the
 *                              scale kept at 1/sqrt(original), the output sliced back. Exact.
 *                              On by default with an attention dtype (keep_head_size turns it
 *                              off), unless OQ_CONVERT_LOWER is set.
 *   OQ_CONVERT_LOWER           each Attention -> its standard-op function body
 *   OQ_CONVERT_DECOMPOSE_ELU   Elu -> Where(x > 0, x, alpha * (exp(min(x, 0)) - 1)): Elu-22 has
 *                              no CUDA kernel in ORT 1.29. On by default when the output opset
 *                              is 22 or more (keep_elu turns it off).
 *   opset                      the default-domain opset is raised to `opset` (or the lowest
 *                              the passes need: 23 for Attention, 24 for nonpad_kv_seqlen),
 *                              at most 26 (the newest ONNX Runtime 1.29 runs); refused, as a
 *                              "refused" step naming the node, when one of the model's operators
 *                              changed meaning between the two opsets, when it would be lowered,
 *                              or raised past 25 (the changes known).
 *   freeze, freeze_defaults    graph inputs with a default (an initializer of the same name, as
 *                              torch.onnx.export(..., keep_initializers_as_inputs=True) writes
 *                              every weight) made constants before the other passes: dropped
 *                              from the graph inputs, their initializers kept. The passes fold
 *                              no input's default (a value fed for it would be ignored), so on
 *                              such an export nothing fuses until its weights are frozen. An
 *                              input without a default is never frozen; one named in `freeze`
 *                              without a default, or no input at all, is OQ_ERR_INVALID_ARG.
 * Every tensor the exporter declared keeps its value_info and every tensor a
 * pass creates gets its type and shape (ORT's CUDA EP was seen to crash on
 * Attention inputs without shapes).
 *
 * An Attention node of the output whose head size ORT's CUDA fused kernels cannot take (not a
 * multiple of 8; over 256 for flash) gets a "cuda" note (oq_head_size_note): no pass changes it.
 *
 * Every conversion is checked before it is written: the original and the
 * converted model run on ORT CPU over the given input batches (or generated ones
 * with a valid-prefix mask) and every output is compared on the valid elements
 * (the mask's valid positions along the output's batch and sequence axes, told as validate
 * tells them: seq_axes, the declared dim names, the DATA_BATCH/DATA_TIME denotations, else
 * the sizes; all elements for an output without them). An output with two axes that could be
 * the sequence (heads as many as the padded length) is refused, OQ_ERR_INVALID_ARG naming the
 * model, the output and the axes, never compared on a guess.
 * When ORT refuses the original for the opset-23 broadcast mask (refusal.h's
 * attn-mask-query-broadcast), an exact form of it is the reference: lowered, or with its mask
 * expanded when the conversion lowers (OQ_ERR_CHECK_FAILED, "not checked", when the conversion
 * both expands and lowers: it would be checked against itself); any other refusal of the
 * original is OQ_ERR_RUNTIME naming ORT's reason (an invalid model is never repaired unseen).
 * Outputs a float16/bfloat16 Attention feeds get that dtype's tolerance, the others float32's.
 * A rewrite exact only for valid-prefix masks is exercised on padded keys: given batches that
 * pad none get generated ones beside them; where none can be made, OQ_ERR_CHECK_FAILED.
 * Expected outputs (PyTorch's), when given, are compared too.
 * A conversion that changes an output beyond tolerance is not written.
 *
 * A rewrite that is exact only for valid-prefix masks (nonpad_kv_seqlen; the
 * causal rewrite) records that contract in the model's metadata under
 * OQ_CONVERT_CONTRACT_KEY, so that validation can enforce it on every batch:
 *
 *     oq_convert_opts o;
 *     oq_convert_opts_default(&o);
 *     oq_convert_opts_flash(&o);   // FUSE | MASK_TO_SEQLEN, float16 attention, opset 24
 *     o.runtime = rt;                                   // from oq_runtime_load
 *     oq_convert_report *r;
 *     oq_status st = oq_convert_file("torch.onnx", "fast.onnx", 0, &o, &r, &err);
 *     // OQ_OK: written; OQ_ERR_CHECK_FAILED: not written, r->failure says which output
 *     // and element; other statuses: err says why (r may be NULL)
 *     for (size_t i = 0; r && i < r->n_steps; i++)
 *         printf("%s %s %s: %s\n", r->steps[i].pass, r->steps[i].action, r->steps[i].node,
 *                r->steps[i].detail);
 *     oq_convert_report_free(r);
 *
 * Errors: OQ_ERR_IO / OQ_ERR_FORMAT (the model file), OQ_ERR_INVALID_ARG (options),
 * OQ_ERR_UNSUPPORTED (an operator changed meaning across the opsets; a requested
 * rewrite refused, when refusals are not allowed), OQ_ERR_SHAPE / OQ_ERR_MASK (input
 * batches that do not fit the model or break the mask contract), OQ_ERR_RUNTIME (ORT
 * cannot run the reference or the converted model), OQ_ERR_CHECK_FAILED (outputs differ).
 */
#ifndef ORTQUAL_CONVERT_H
#define ORTQUAL_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/compare.h"
#include "ortqual/mask.h"
#include "ortqual/npz.h"
#include "ortqual/runtime.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Model metadata key of the mask contract. Its value is a JSON object:
 *   {"input": "<the [B, L] mask input>", "contract": "valid_prefix",
 *    "nodes": ["<attention node>", ...]}
 * meaning: every row of that input must be a prefix of ones (at least one)
 * followed by zeros (oq_mask_check); the listed nodes compute the original
 * function only then. */
#define OQ_CONVERT_CONTRACT_KEY "ortqual.mask_contract"

typedef enum oq_convert_pass {
    OQ_CONVERT_FUSE = 1u << 0,
    OQ_CONVERT_MASK_TO_SEQLEN = 1u << 1,
    OQ_CONVERT_EXPAND_MASK = 1u << 2,
    OQ_CONVERT_LOWER = 1u << 3,
    OQ_CONVERT_DECOMPOSE_ELU = 1u << 4,
    OQ_CONVERT_PAD_HEAD = 1u << 5
} oq_convert_pass;

typedef struct oq_convert_opts {
    unsigned passes;          /* OR of oq_convert_pass */
    oq_dtype attention_dtype; /* OQ_DTYPE_FLOAT16 or OQ_DTYPE_BFLOAT16; UNDEFINED: unchanged */
    int64_t opset;            /* output default-domain opset; 0: the lowest the passes need and
                                 opset_min allow, never below the model's */
    int64_t opset_min;        /* with opset 0: at least this (oq_convert_opts_flash: 24); 0: none */
    int keep_elu;             /* 1: no Elu decomposition unless OQ_CONVERT_DECOMPOSE_ELU is set */
    int keep_head_size;       /* 1: no head padding unless OQ_CONVERT_PAD_HEAD is set */
    int allow_refused;        /* 1: a rewrite refused somewhere is reported, not an error */
    size_t n_freeze;          /* graph inputs with a default to make constants (see above) */
    const char *const *freeze;
    int freeze_defaults;      /* 1: every graph input with a default made a constant */
    const char *mask_input;   /* the [B, L] mask input; NULL: the one the masks derive from */
    oq_mask_polarity mask_polarity; /* which of the mask's values marks a valid element
                                       (mask.h; KEEP by default): PAD reads the batches' mask as
                                       PyTorch's key_padding_mask and generates it so, and
                                       OQ_CONVERT_MASK_TO_SEQLEN counts its zeros (a Not before
                                       the sum; the contract's metadata says "polarity":"pad") */
    int mask_polarity_given;  /* 1: the caller chose mask_polarity, KEEP included: one that
                                 contradicts an inherited contract's is refused; 0: the
                                 contract's is used */
    /* the check (not used by oq_convert_plan) */
    oq_runtime *runtime;      /* the ORT that runs both models on CPU */
    size_t n_batches;         /* input batches; 0: two generated ones */
    const oq_npz *const *inputs;   /* n_batches sets of tensors named like the model's inputs */
    const oq_npz *const *expected; /* NULL, or n_batches sets named like its outputs */
    const char *tolerances;   /* oq_tolerances_add specs over the default, which follows the
                                 attention dtype (fp32, fp16 or bf16 preset); NULL: default */
    uint64_t seed;            /* generated inputs */
    size_t n_seq_axes;        /* the caller's sequence axes of outputs (compare.h), where the
                                 model's dim names or denotations do not tell them; each checked
                                 against the model, as validate checks its --seq-axis */
    const oq_seq_axis *seq_axes;
} oq_convert_opts;

OQ_API void oq_convert_opts_default(oq_convert_opts *o);

/* The flash-eligible form (`ortqual convert --flash`): adds OQ_CONVERT_FUSE and
 * OQ_CONVERT_MASK_TO_SEQLEN to o->passes, and sets float16 attention and an output opset of at
 * least 24 (opset_min: a model at 25 or 26 keeps its own) where o does not choose them already
 * (so bfloat16 or an opset set before stays). */
OQ_API void oq_convert_opts_flash(oq_convert_opts *o);

/* One line of the plan: what a pass did (or would do) at a node. */
typedef struct oq_convert_step {
    char *pass;   /* "freeze", "fuse", "mask-to-seqlen", "expand-mask", "pad-head-size", "attention-dtype",
                     "lower", "decompose-elu", "opset", "prune", "check", "cuda" (a note: a head
                     size ORT's CUDA fused kernels cannot take) */
    char *node;   /* the node concerned ("" for whole-model steps) */
    char *action; /* "fused", "rewritten", "added", "removed", "refused", "skipped", "note" */
    char *detail;
} oq_convert_step;

/* One output of one batch, compared. */
typedef struct oq_convert_check {
    size_t batch;
    oq_compare_result vs_reference; /* converted vs original (or its lowered or mask-expanded form) */
    int has_expected;
    oq_compare_result vs_expected;  /* converted vs the expected outputs */
    oq_compare_result ref_vs_expected; /* the reference vs expected: how far ORT was to begin with */
} oq_convert_check;

typedef struct oq_convert_report {
    char *model;              /* the input path (or name) */
    int64_t opset_in, opset_out;
    size_t n_steps;
    oq_convert_step *steps;
    size_t fused, refused;    /* attention chains fused; requested rewrites refused */
    size_t frozen;            /* graph inputs with a default made constants */
    char *contract_input;     /* the mask input under the valid-prefix contract, or NULL */
    char *reference;          /* "original", or "original, lowered (ORT refused it: <why>)" (or
                                 "original, mask expanded (...)" for a conversion that lowers) */
    int generated_inputs;
    size_t n_checks;
    oq_convert_check *checks;
    int checked;              /* the check ran to the end */
    int passed;               /* ... and every comparison passed */
    char *failure;            /* the first failing output and element, or NULL */
    char *external_data;      /* written beside the model: OUT.onnx.data, or NULL (weights inside) */
} oq_convert_report;

/* What the passes would do to `path`, node by node; nothing is run or written. *out is
 * NULL when the model cannot be read. */
OQ_API oq_status oq_convert_plan(const char *path, const oq_convert_opts *o, oq_convert_report **out,
                                 oq_err *err);
/* The same for a model in memory; `name` labels messages. */
OQ_API oq_status oq_convert_plan_bytes(const void *buf, size_t len, const char *name,
                                       const oq_convert_opts *o, oq_convert_report **out, oq_err *err);

/* Convert, check, and write `out_path` atomically (an existing file is refused
 * unless `overwrite`). *out gets the report whenever the passes ran (also on
 * OQ_ERR_CHECK_FAILED, when nothing is written); NULL when the model cannot be read.
 * The input batches are checked by name and by the mask contract only: a caller with
 * files checks them (and their expected outputs) first with oq_validate_check_inputs, as
 * `ortqual convert` does. */
OQ_API oq_status oq_convert_file(const char *in_path, const char *out_path, int overwrite,
                                 const oq_convert_opts *o, oq_convert_report **out, oq_err *err);

OQ_API void oq_convert_report_free(oq_convert_report *r);
/* The report as a JSON object (malloc'ed, NUL-terminated; "schema": OQ_CONVERT_SCHEMA); NULL on
 * allocation failure or for a NULL report. */
#define OQ_CONVERT_SCHEMA "ortqual.convert/1"
OQ_API char *oq_convert_report_json(const oq_convert_report *r);

/* The mask contract a converted model records: *has = 1 and the mask input's
 * name in `input` (cap bytes) when the model carries OQ_CONVERT_CONTRACT_KEY,
 * *has = 0 otherwise; the polarity its values are read in into *polarity (NULL: not
 * wanted; keep where the contract names none). OQ_ERR_FORMAT when the entry is malformed. */
OQ_API oq_status oq_convert_read_contract(const char *path, int *has, char *input, size_t cap,
                                          oq_mask_polarity *polarity, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
