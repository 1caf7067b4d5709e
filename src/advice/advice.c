/* Why an attention node missed the fused kernel: ORT 1.29's CUDA rules. */
#include "ortqual/advice.h"
#include "ortqual/dispatch.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum kid { K_ANY = -1, K_FLASH, K_EFFICIENT, K_CUDNN, K_MATH, K_OTHER } kid;

/* The kernels the rules know, as dispatch.h names them (names, aliases, sdpa_kernel bits). */
static const oq_sdpa_kernel kid_sdpa[] = {OQ_SDPA_FLASH_ATTENTION, OQ_SDPA_EFFICIENT_ATTENTION,
                                          OQ_SDPA_CUDNN_FLASH_ATTENTION, OQ_SDPA_MATH};
/* Kernel parts of validate's configurations (cuda:...:flash). */
static const char *const kid_short[] = {"flash", "efficient", "cudnn", "math"};

static const char *kid_name(kid k) { return oq_sdpa_kernel_name(kid_sdpa[k]); }
static uint32_t kid_bit(kid k) { return oq_dispatch_kernel_mask(kid_sdpa[k]); }

const char *oq_attn_mask_kind_name(oq_attn_mask_kind k)
{
    switch (k) {
    case OQ_ATTN_MASK_NONE: return "none";
    case OQ_ATTN_MASK_BOOL: return "bool";
    case OQ_ATTN_MASK_FLOAT: return "float";
    case OQ_ATTN_MASK_NONPAD_KV_SEQLEN: return "nonpad_kv_seqlen";
    }
    return "unknown";
}

/* ORT name or alias; K_ANY for NULL/"auto"; K_OTHER for any other name. */
static kid kernel_id(const char *name)
{
    if (!name || !strcasecmp(name, "auto")) return K_ANY;
    oq_sdpa_kernel s = oq_sdpa_kernel_from_name(name);
    for (int k = K_FLASH; k <= K_MATH; k++)
        if (kid_sdpa[k] == s) return (kid)k;
    return K_OTHER;
}

static bool has_mask_input(const oq_attention_facts *f)
{
    return f->mask == OQ_ATTN_MASK_BOOL || f->mask == OQ_ATTN_MASK_FLOAT;
}

/* Accumulates "; "-separated clauses into a memstream. */
typedef struct text {
    FILE *fp;
    int n;
} text;

static void clause(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void clause(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(t->n++ ? "; " : "", t->fp);
    vfprintf(t->fp, fmt, ap);
    va_end(ap);
}

/* Reasons that keep node `f` off kernel `k`; returns the rules that fired. */
static unsigned reasons_for(kid k, const oq_attention_facts *f, text *why)
{
    unsigned rules = 0;
    if (f->sdpa_kernel != 0 && !(f->sdpa_kernel & kid_bit(k))) {
        rules |= OQ_ADVICE_KERNEL_DISABLED;
        clause(why, "sdpa_kernel=%" PRIu32 " does not enable %s (bit %" PRIu32 ")", f->sdpa_kernel,
               kid_name(k), kid_bit(k));
    }
    if (k == K_FLASH && has_mask_input(f)) {
        rules |= OQ_ADVICE_MASK_NO_FLASH;
        clause(why, "flash is never used when an attn_mask is given (here a %s mask)",
               oq_attn_mask_kind_name(f->mask));
    }
    if (k == K_FLASH && f->dtype == OQ_DTYPE_FLOAT32) {
        rules |= OQ_ADVICE_FP32_NO_FLASH;
        clause(why, "flash has no float32 kernel (fp16/bf16 only)");
    }
    if (k == K_EFFICIENT && has_mask_input(f) && f->kv_len > 0 && f->kv_len % 4 != 0) {
        rules |= OQ_ADVICE_MASK_KV_ALIGN;
        clause(why,
               "memory-efficient attention takes a mask only when the total kv length is a "
               "multiple of 4 (here %" PRId64 ")",
               f->kv_len);
    }
    if (k == K_CUDNN) {
        char here[256] = "";
        size_t m = 0;
        if (f->q_len > 0 && f->q_len != 1)
            m += (size_t)snprintf(here + m, sizeof here - m, ", q_len %" PRId64, f->q_len);
        if (f->mask != OQ_ATTN_MASK_NONPAD_KV_SEQLEN && m < sizeof here)
            m += (size_t)snprintf(here + m, sizeof here - m, ", mask %s", oq_attn_mask_kind_name(f->mask));
        if (f->dtype == OQ_DTYPE_FLOAT32 && m < sizeof here)
            m += (size_t)snprintf(here + m, sizeof here - m, ", float32");
        if (f->softcap && m < sizeof here)
            m += (size_t)snprintf(here + m, sizeof here - m, ", softcap");
        if (m > 0) {
            rules |= OQ_ADVICE_CUDNN_DECODE_ONLY;
            clause(why,
                   "the cuDNN tier serves decoding only (q_len 1 with nonpad_kv_seqlen, fp16/bf16, "
                   "no attn_mask, no softcap), here%s",
                   here + 1);
        }
    }
    return rules;
}

/* What to change, for the rules that fired. */
static void remedies(unsigned rules, kid target, const oq_attention_facts *f, text *fix)
{
    if (rules & OQ_ADVICE_FORCED_MATH)
        clause(fix, "sdpa_kernel=16 forces MATH: use kernel auto (sdpa_kernel 0) or name a fused kernel");
    if (rules & OQ_ADVICE_KERNEL_DISABLED)
        clause(fix, "set sdpa_kernel to 0 or include bit %" PRIu32 " (%s)",
               kid_bit(target == K_ANY ? K_FLASH : target), kid_name(target == K_ANY ? K_FLASH : target));
    if (rules & (OQ_ADVICE_MASK_NO_FLASH | OQ_ADVICE_MASK_KV_ALIGN)) {
        if (f->opset >= 24) /* already attention24: the mask form is the choice */
            clause(fix, "give padding as nonpad_kv_seqlen instead of an attn_mask (the attention24 "
                        "export's default, --mask-form seqlen)");
        else
            clause(fix, "export as attention24 so that padding goes through nonpad_kv_seqlen, not "
                        "attn_mask (Attention-23 has no nonpad_kv_seqlen)");
        if ((rules & OQ_ADVICE_MASK_KV_ALIGN) && target == K_EFFICIENT)
            clause(fix, "or pad the kv length to a multiple of 4");
    }
    if (rules & OQ_ADVICE_FP32_NO_FLASH)
        clause(fix, "compute attention in float16 (precision fp16, --attention-dtype float16)");
    if (rules & OQ_ADVICE_CUDNN_DECODE_ONLY)
        clause(fix, "outside decoding steps use FLASH_ATTENTION (kernel flash)%s",
               f->mask != OQ_ATTN_MASK_NONPAD_KV_SEQLEN ? ", and cuDNN needs an attention24 export" : "");
}

/* "cuda:attention24:fp16:flash": the configuration that would reach a fused kernel. */
static void suggested_config(unsigned rules, kid target, const oq_attention_facts *f, FILE *fp)
{
    bool to24 = (rules & (OQ_ADVICE_MASK_NO_FLASH | OQ_ADVICE_MASK_KV_ALIGN |
                          OQ_ADVICE_CUDNN_DECODE_ONLY)) || f->opset >= 24;
    const char *prec = (rules & OQ_ADVICE_FP32_NO_FLASH) || f->dtype == OQ_DTYPE_FLOAT16 ? "fp16"
                       : f->dtype == OQ_DTYPE_FLOAT32                                       ? "fp32"
                                                                                            : NULL;
    kid k = target == K_ANY || target == K_CUDNN ? K_FLASH : target;
    if (k == K_FLASH && f->dtype == OQ_DTYPE_FLOAT32 && !(rules & OQ_ADVICE_FP32_NO_FLASH)) prec = "fp16";
    if (prec) fprintf(fp, " (configuration cuda:%s:%s:%s)", to24 ? "attention24" : "attention23", prec,
                      kid_short[k]);
}

static oq_status explain(const char *observed, kid exp, const oq_attention_facts *f,
                         oq_advice *out, oq_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) return oq_err_set(err, OQ_ERR_NOMEM, "advice: out of memory");
    const char *node = f->node && *f->node ? f->node : "the attention node";
    fprintf(fp, "%s ran %s", node, observed);
    if (exp != K_ANY) fprintf(fp, ", expected %s", kid_name(exp));
    fputs(": ", fp);

    text why = {fp, 0};
    unsigned rules = 0;
    if (f->sdpa_kernel != 0 && !(f->sdpa_kernel & ~kid_bit(K_MATH))) {
        rules |= OQ_ADVICE_FORCED_MATH;
        clause(&why, "sdpa_kernel=%" PRIu32 " enables MATH only", f->sdpa_kernel);
    } else if (exp != K_ANY) {
        rules |= reasons_for(exp, f, &why);
    } else {
        rules |= reasons_for(K_FLASH, f, &why);
        rules |= reasons_for(K_EFFICIENT, f, &why);
        /* sdpa_kernel leaving only cuDNN among the fused kernels: its limits matter */
        if (f->sdpa_kernel & kid_bit(K_CUDNN) &&
            !(f->sdpa_kernel & (kid_bit(K_FLASH) | kid_bit(K_EFFICIENT))))
            rules |= reasons_for(K_CUDNN, f, &why);
    }
    if (!rules) {
        rules = OQ_ADVICE_NO_RULE;
        clause(&why,
               "no ORT rule known to ortqual explains it (opset %d, %s, mask %s, q_len %" PRId64
               ", kv_len %" PRId64 ", sdpa_kernel %" PRIu32 "); the routing line is the evidence",
               f->opset, oq_dtype_name(f->dtype), oq_attn_mask_kind_name(f->mask), f->q_len, f->kv_len,
               f->sdpa_kernel);
    } else {
        fprintf(fp, ". To reach %s: ", exp == K_ANY   ? "FLASH_ATTENTION"
                                       : exp == K_CUDNN ? "a fused kernel"
                                                        : kid_name(exp));
        text fix = {fp, 0};
        remedies(rules, exp, f, &fix);
        suggested_config(rules, exp, f, fp);
    }
    fputc('.', fp);
    if (fclose(fp) != 0 || !buf) {
        free(buf);
        return oq_err_set(err, OQ_ERR_NOMEM, "advice: out of memory");
    }
    out->rules = rules;
    out->text = buf;
    return OQ_OK;
}

oq_status oq_dispatch_advice(const char *observed, const char *expected,
                             const oq_attention_facts *facts, oq_advice *out, oq_err *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (!observed || !facts || !out)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "advice: observed, facts and out must not be NULL");
    kid exp = kernel_id(expected);
    if (exp == K_OTHER)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "advice: unknown expected kernel '%s' (flash, efficient, cudnn, math, auto "
                          "or an ORT name)",
                          expected);
    if (facts->dtype != OQ_DTYPE_FLOAT16 && facts->dtype != OQ_DTYPE_BFLOAT16 &&
        facts->dtype != OQ_DTYPE_FLOAT32)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "advice: attention dtype %s is not one ORT's CUDA Attention computes in "
                          "(float16, bfloat16, float32)",
                          oq_dtype_name(facts->dtype));
    kid obs = kernel_id(observed);
    /* Advice is about missing a fused kernel: an expected MATH needs none. */
    bool off_target = exp == K_ANY ? obs == K_MATH : exp != K_MATH && obs != exp;
    if (!off_target) return OQ_OK;
    return explain(observed, exp, facts, out, err);
}

void oq_advice_clear(oq_advice *a)
{
    if (!a) return;
    free(a->text);
    a->text = NULL;
    a->rules = 0;
}
