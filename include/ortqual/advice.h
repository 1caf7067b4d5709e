/* Dispatch advice: why an attention node missed the fused kernel, and the fix.
 *
 * ORT's CUDA `Attention` kernel picks FLASH_ATTENTION, EFFICIENT_ATTENTION or
 * CUDNN_FLASH_ATTENTION only when the inputs fit, and falls back to MATH
 * silently otherwise. The rules below were read in ORT's source and observed on
 * an H200 with ORT 1.29 (see docs/dispatch.md):
 *   - flash is never used when an `attn_mask` (bool or float) is given;
 *   - flash has no float32 kernel (fp16/bf16 only);
 *   - memory-efficient attention takes a mask only when the total kv length
 *     is a multiple of 4;
 *   - the cuDNN tier serves decoding only: q_len == 1 with `nonpad_kv_seqlen`,
 *     fp16/bf16, no `attn_mask`, no softcap;
 *   - `sdpa_kernel` (CUDA provider option) restricts the choice; 16 forces MATH;
 *   - every fused kernel needs a head size that is a multiple of 8: flash and
 *     cuDNN at most 256, memory-efficient at most 1024 (ORT's flash_api.cc
 *     `flash::is_supported`, cutlass_fmha/memory_efficient_attention.h
 *     `has_memory_efficient_attention`, cudnn_fmha `cudnn_sdpa::is_supported`,
 *     checked by core/providers/cuda/llm/attention.cc before each kernel).
 *
 * For a model ortqual did not export, the facts come from its Attention node
 * (oq_attention_facts_from_node): what the node has, not what a configuration
 * would have exported.
 *
 *     oq_attention_facts f = {.node = "attn0", .opset = 24, .dtype = OQ_DTYPE_FLOAT16,
 *                             .mask = OQ_ATTN_MASK_BOOL, .q_len = 1001, .kv_len = 1001};
 *     oq_advice a;
 *     oq_dispatch_advice("MATH", "FLASH_ATTENTION", &f, &a, &err);
 *     if (a.text) puts(a.text);   // "attn0 ran MATH, expected FLASH_ATTENTION: ..."
 *     oq_advice_clear(&a);
 */
#ifndef ORTQUAL_ADVICE_H
#define ORTQUAL_ADVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "ortqual/inspect.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the model keeps padded keys out of attention. */
typedef enum oq_attn_mask_kind {
    OQ_ATTN_MASK_NONE = 0,        /* no mask at all */
    OQ_ATTN_MASK_BOOL,            /* boolean attn_mask input */
    OQ_ATTN_MASK_FLOAT,           /* additive float attn_mask input */
    OQ_ATTN_MASK_NONPAD_KV_SEQLEN /* Attention-24 nonpad_kv_seqlen, no attn_mask */
} oq_attn_mask_kind;

/* "none", "bool", "float", "nonpad_kv_seqlen". */
OQ_API const char *oq_attn_mask_kind_name(oq_attn_mask_kind k);

/* What the model and the run looked like for one attention node. */
typedef struct oq_attention_facts {
    const char *node;       /* for the message; NULL: "the attention node" */
    int opset;              /* ONNX Attention opset: 23 or 24 (0: unknown) */
    oq_dtype dtype;         /* dtype the attention is computed in (Q/K/V) */
    oq_attn_mask_kind mask;
    int64_t q_len;          /* query sequence length of the run; <= 0 unknown */
    int64_t kv_len;         /* total key/value length (past + new); <= 0 unknown */
    bool softcap;           /* softcap attribute set (non-zero) */
    uint32_t sdpa_kernel;   /* CUDA provider option sdpa_kernel; 0 = ORT's default order */
    int64_t head_size;      /* Q's head size; <= 0 unknown (the advice says so) */
    bool head_size_from_scale; /* the caller read head_size off the scale attribute (1/sqrt(head_size)):
                                  the advice says "from its scale". oq_attention_facts_from_node
                                  no longer sets it (a scale need not be 1/sqrt(D)) */
    int64_t q_heads;        /* Q's head count; <= 0 unknown */
    bool user_model;        /* the user's model, not ortqual's export: the fix changes the model
                               (ortqual convert), not the export form or the configuration */
} oq_attention_facts;

/* The facts one ONNX `Attention` node (oq_model_find_nodes) declares, `opset` being the
 * model's ai.onnx opset: mask kind from the inputs present (attn_mask and its dtype, else
 * nonpad_kv_seqlen, else none), Q's dtype (UNDEFINED when the model declares none), q_len and
 * kv_len when Q's and K's sequence axes are static (else 0), softcap, the head count and head
 * size from Q's declared shape (rank 4: [B, heads, L, head]; rank 3: hidden / q_num_heads), else
 * 0: unknown (the scale is not read as a head size; head_size_from_scale stays false). A caller
 * holding the model's computed shapes fills them in (validate: oq_attention_info's heads and
 * head_dim). `user_model` is set; sdpa_kernel is 0. `out->node` points at node->name. */
OQ_API void oq_attention_facts_from_node(const oq_node_info *node, int64_t opset, oq_attention_facts *out);

/* The head size whose default scale is `scale` (1/sqrt(head_size)): 1/scale^2 when within
 * 1e-3 of a whole number, else 0. */
OQ_API int64_t oq_head_size_from_scale(double scale);

/* What ORT 1.29's CUDA Attention makes of head size `head_size` (`q_heads` heads, <= 0
 * unknown; `from`, where the size was read, or NULL), as one malloc'ed sentence naming the
 * kernel it falls to and the fix, e.g. "head size 12 (from Q's shape): ORT's CUDA flash and
 * memory-efficient kernels need a multiple of 8, at most 256 and 1024, so this node runs MATH on
 * CUDA; pad the head size to 16: ..."; NULL when flash takes it, when it is unknown (<= 0), or
 * out of memory. */
OQ_API char *oq_head_size_note(int64_t head_size, int64_t q_heads, const char *from);

/* The rules that fired, as bits of oq_advice.rules. */
enum oq_advice_rule {
    OQ_ADVICE_FORCED_MATH = 1u << 0,     /* sdpa_kernel enables MATH only */
    OQ_ADVICE_KERNEL_DISABLED = 1u << 1, /* sdpa_kernel does not enable the wanted kernel */
    OQ_ADVICE_MASK_NO_FLASH = 1u << 2,   /* attn_mask given: flash is never used */
    OQ_ADVICE_FP32_NO_FLASH = 1u << 3,   /* float32: flash has no kernel */
    OQ_ADVICE_MASK_KV_ALIGN = 1u << 4,   /* mask with kv length % 4 != 0: no efficient */
    OQ_ADVICE_CUDNN_DECODE_ONLY = 1u << 5, /* cuDNN wanted outside decode/nonpad/fp16/no softcap */
    OQ_ADVICE_NO_RULE = 1u << 6,         /* nothing known explains it */
    OQ_ADVICE_HEAD_SIZE = 1u << 7        /* head size not a multiple of 8, or too large */
};

typedef struct oq_advice {
    unsigned rules; /* OR of enum oq_advice_rule; 0 when there is nothing to explain */
    char *text;     /* one line, malloc'ed; NULL when there is nothing to explain */
} oq_advice;

/* Explain `observed` (ORT's name after "SdpaKernel=", e.g. "MATH") against
 * `expected` (ORT name or alias flash|efficient|cudnn|math, case-insensitive;
 * NULL or "auto": any fused kernel). There is something to explain when the
 * node ran MATH while any fused kernel was wanted, or ran another kernel than
 * the fused one expected; an expected MATH needs no advice. Otherwise `out` is
 * {0, NULL}. The text says which rules kept the node off the wanted
 * kernel and which export form / configuration reaches a fused kernel, e.g.
 * "export as attention24 (nonpad_kv_seqlen, no attn_mask) with attention in
 * float16 (configuration cuda:attention24:fp16:flash)".
 * Errors: OQ_ERR_INVALID_ARG (NULL argument, unknown `expected`, unsupported
 * dtype), OQ_ERR_NOMEM. On error `out` is zeroed. */
OQ_API oq_status oq_dispatch_advice(const char *observed, const char *expected,
                                    const oq_attention_facts *facts, oq_advice *out, oq_err *err);

OQ_API void oq_advice_clear(oq_advice *a);

#ifdef __cplusplus
}
#endif
#endif
