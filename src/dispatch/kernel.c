/* Kernel names, aliases and sdpa_kernel bits (ORT's AttentionBackend enum in
 * onnxruntime/contrib_ops/cpu/bert/attention_common.h). */
#include "ortqual/dispatch.h"

#include <strings.h>

static const struct {
    const char *name;
    const char *alias;
    uint32_t mask;
} KERNELS[OQ_SDPA_COUNT_] = {
    [OQ_SDPA_UNKNOWN] = {"UNKNOWN", NULL, 0},
    [OQ_SDPA_FLASH_ATTENTION] = {"FLASH_ATTENTION", "flash", 1},
    [OQ_SDPA_EFFICIENT_ATTENTION] = {"EFFICIENT_ATTENTION", "efficient", 2},
    [OQ_SDPA_TRT_FUSED_ATTENTION] = {"TRT_FUSED_ATTENTION", "trt_fused", 4},
    [OQ_SDPA_CUDNN_FLASH_ATTENTION] = {"CUDNN_FLASH_ATTENTION", "cudnn_flash", 8},
    [OQ_SDPA_MATH] = {"MATH", "math", 16},
    [OQ_SDPA_TRT_FLASH_ATTENTION] = {"TRT_FLASH_ATTENTION", "trt_flash", 32},
    [OQ_SDPA_TRT_CROSS_ATTENTION] = {"TRT_CROSS_ATTENTION", "trt_cross", 64},
    [OQ_SDPA_TRT_CAUSAL_ATTENTION] = {"TRT_CAUSAL_ATTENTION", "trt_causal", 128},
    [OQ_SDPA_LEAN_ATTENTION] = {"LEAN_ATTENTION", "lean", 256},
    [OQ_SDPA_DECODER_ATTENTION] = {"DECODER_ATTENTION", "decoder", 512},
};

const char *oq_sdpa_kernel_name(oq_sdpa_kernel k)
{
    return (unsigned)k < OQ_SDPA_COUNT_ ? KERNELS[k].name : "unknown";
}

oq_sdpa_kernel oq_sdpa_kernel_from_name(const char *name)
{
    if (!name) return OQ_SDPA_UNKNOWN;
    if (!strcasecmp(name, "cudnn")) return OQ_SDPA_CUDNN_FLASH_ATTENTION;
    for (int k = 1; k < OQ_SDPA_COUNT_; k++)
        if (!strcasecmp(name, KERNELS[k].name) || !strcasecmp(name, KERNELS[k].alias))
            return (oq_sdpa_kernel)k;
    return OQ_SDPA_UNKNOWN;
}

uint32_t oq_dispatch_kernel_mask(oq_sdpa_kernel k)
{
    return (unsigned)k < OQ_SDPA_COUNT_ ? KERNELS[k].mask : 0;
}
