/* The ORT_* environment variables that steer ONNX Runtime, captured as evidence. */
#include <stdlib.h>
#include <string.h>

#include "ortqual/runtime.h"
#include "status/args-impl.h"

extern char **environ;

/* Read by the CUDA attention kernels (contrib_ops/cuda/bert/attention_common.h,
 * group_query_attention.cc); listed even when unset so a report shows the defaults held. */
static const char *const known[] = {
    "ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO",
    "ORT_DISABLE_FLASH_ATTENTION",
    "ORT_DISABLE_MEMORY_EFFICIENT_ATTENTION",
    "ORT_ENABLE_CUDNN_FLASH_ATTENTION",
    "ORT_DISABLE_TRT_FLASH_ATTENTION",
    "ORT_ENABLE_FUSED_CAUSAL_ATTENTION",
    "ORT_DISABLE_FUSED_ATTENTION",
    "ORT_DISABLE_FUSED_CROSS_ATTENTION",
    "ORT_DISABLE_DECODER_ATTENTION",
    "ORT_ENABLE_LEAN_ATTENTION",
    "ORT_DISABLE_FLASH_DECODE",
    "ORT_ENABLE_XQA",
    "ORT_DISABLE_FUSED_KV",
    "ORT_MIN_SEQ_LEN_FLASH_ATTENTION_PACKED_QKV",
    "ORT_MIN_SEQ_LEN_EFFICIENT_ATTENTION_FP32",
    "ORT_DISABLE_TELEMETRY", /* read at environment creation (core/platform/posix/telemetry.cc) */
};
#define N_KNOWN (sizeof known / sizeof known[0])

static int is_known(const char *name, size_t len)
{
    for (size_t i = 0; i < N_KNOWN; i++)
        if (strlen(known[i]) == len && !strncmp(known[i], name, len)) return 1;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const oq_kv *)a)->key, ((const oq_kv *)b)->key);
}

static size_t count_extra(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!strncmp(*e, "ORT_", 4) && eq && !is_known(*e, (size_t)(eq - *e))) n++;
    }
    return n;
}

oq_status oq_ort_env_capture(oq_kv **out, size_t *n, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED(err, n);
    *out = NULL;
    *n = 0;
    size_t cap = N_KNOWN + count_extra(), k = 0;
    oq_kv *kv = calloc(cap, sizeof *kv);
    if (!kv) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    int oom = 0;
    for (size_t i = 0; i < N_KNOWN; i++, k++) {
        const char *v = getenv(known[i]);
        kv[k].key = strdup(known[i]);
        kv[k].value = v ? strdup(v) : NULL;
        oom |= !kv[k].key || (v && !kv[k].value);
    }
    for (char **e = environ; e && *e && k < cap; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "ORT_", 4) || !eq || is_known(*e, (size_t)(eq - *e))) continue;
        kv[k].key = strndup(*e, (size_t)(eq - *e));
        kv[k].value = strdup(eq + 1);
        oom |= !kv[k].key || !kv[k].value;
        k++;
    }
    if (oom) {
        oq_kvs_free(kv, k);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    qsort(kv + N_KNOWN, k - N_KNOWN, sizeof *kv, by_key);
    *out = kv;
    *n = k;
    return OQ_OK;
}
