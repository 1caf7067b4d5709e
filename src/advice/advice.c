/* Why an attention node missed the fused kernel: ORT 1.29's CUDA rules. */
#include "ortqual/advice.h"
#include "ortqual/dispatch.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

#include <inttypes.h>
#include <math.h>
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

/* The largest head size each kernel takes; every fused one needs a multiple of 8. From ORT's
 * source, asked by core/providers/cuda/llm/attention.cc before it picks a kernel:
 *   contrib_ops/cuda/bert/flash_attention/flash_api.cc  flash::is_supported:
 *       head_size % 8 == 0 && head_size <= 256
 *   contrib_ops/cuda/bert/cutlass_fmha/memory_efficient_attention.h  has_memory_efficient_attention:
 *       (qk_head_size & 7) == 0 && qk_head_size <= kEfficientAttentionMaxHeadSize (1024)
 *   contrib_ops/cuda/bert/cudnn_fmha/cudnn_flash_attention.cu  cudnn_sdpa::is_supported:
 *       head_size_qk % 8 == 0 && head_size_qk <= 256
 * Observed on the H200 with ORT 1.29: head size 12 runs MATH, 8 runs FLASH_ATTENTION. */
static const int64_t kid_max_head[] = {256, 1024, 256};

/* 1 when kernel `k` cannot take head size `h` (unknown sizes block nothing). */
static bool head_blocks(kid k, int64_t h)
{
    return h > 0 && k >= K_FLASH && k <= K_CUDNN && (h % 8 != 0 || h > kid_max_head[k]);
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

/* "here 12, from its scale" */
static void head_here(const oq_attention_facts *f, char *buf, size_t n)
{
    snprintf(buf, n, "here %" PRId64 "%s", f->head_size, f->head_size_from_scale ? ", from its scale" : "");
}

/* Reasons that keep node `f` off kernel `k`; returns the rules that fired. `head_said`: the
 * head size was explained already (for flash and memory-efficient at once). */
static unsigned reasons_for(kid k, const oq_attention_facts *f, bool head_said, text *why)
{
    unsigned rules = 0;
    if (head_blocks(k, f->head_size)) {
        char here[64];
        head_here(f, here, sizeof here);
        rules |= OQ_ADVICE_HEAD_SIZE;
        if (!head_said)
            clause(why, "%s needs a head size that is a multiple of 8, at most %" PRId64 " (%s)",
                   k == K_FLASH ? "flash" : k == K_EFFICIENT ? "memory-efficient attention" : "cuDNN",
                   kid_max_head[k], here);
    }
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

/* "6 heads of 8 or 3 of 16": head counts that split `width` into fused-kernel head sizes. */
static void head_counts(text *fix, int64_t width)
{
    char list[128] = "";
    size_t m = 0;
    int found = 0;
    for (int64_t hs = 8; hs <= kid_max_head[K_FLASH] && found < 2 && m < sizeof list; hs += 8)
        if (width % hs == 0)
            m += (size_t)snprintf(list + m, sizeof list - m, found++ ? " or %" PRId64 " of %" PRId64 : "%" PRId64
                                  " heads of %" PRId64, width / hs, hs);
    if (found)
        clause(fix, "or split the width %" PRId64 " into %s (a different model: retrain it)", width, list);
}

/* The fix for a head size some fused kernel cannot take: zero padding (exact) or other heads. */
static void head_remedy(text *fix, kid target, const oq_attention_facts *f)
{
    int64_t h = f->head_size;
    kid k = target == K_ANY || target == K_CUDNN ? K_FLASH : target;
    /* h at most the kernel's maximum (a multiple of 8) before rounding: a hostile model's head
     * size near INT64_MAX must not overflow */
    if (h % 8 != 0 && h <= kid_max_head[k]) {
        int64_t pad = (h + 7) / 8 * 8;
        clause(fix, "pad the head size to %" PRId64 ": zero-pad Q, K and V on the last axis (Q K^T is unchanged; "
               "keep the scale 1/sqrt(%" PRId64 ")) and slice each head's output back to %" PRId64
               " (ortqual convert --pad-head-size writes it)", pad, h, h);
    } else
        clause(fix, "use more heads so that each is a multiple of 8 and at most %" PRId64, kid_max_head[k]);
    if (k == K_FLASH && !head_blocks(K_EFFICIENT, h))
        clause(fix, "or expect EFFICIENT_ATTENTION (kernel efficient), which takes head size %" PRId64, h);
    if (f->q_heads > 0 && h > 0 && f->q_heads <= INT64_MAX / h) head_counts(fix, f->q_heads * h);
}

/* The remedies that name the API's fields, in the library's words: worded as they are put in. */
static const char remedy_seqlen[] = "give padding as nonpad_kv_seqlen instead of an attn_mask (the attention24 "
                                    "export's default, mask OQ_MASK_SEQLEN)";
static const char remedy_fp16[] = "compute attention in float16 (precision fp16, attention_dtype OQ_DTYPE_FLOAT16)";

/* What to change, for the rules that fired. */
static void remedies(unsigned rules, kid target, const oq_attention_facts *f, text *fix)
{
    char said[256]; /* a remedy in the caller's words (oq_set_terms) */
    if (rules & OQ_ADVICE_FORCED_MATH)
        clause(fix, "sdpa_kernel=16 forces MATH: use kernel auto (sdpa_kernel 0) or name a fused kernel");
    if (rules & OQ_ADVICE_KERNEL_DISABLED)
        clause(fix, "set sdpa_kernel to 0 or include bit %" PRIu32 " (%s)",
               kid_bit(target == K_ANY ? K_FLASH : target), kid_name(target == K_ANY ? K_FLASH : target));
    if (rules & (OQ_ADVICE_MASK_NO_FLASH | OQ_ADVICE_MASK_KV_ALIGN)) {
        if (f->user_model) /* the model itself has the mask: convert it */
            clause(fix, "give padding as nonpad_kv_seqlen instead of an attn_mask: `ortqual convert "
                        "--mask-to-seqlen` rewrites a key-padding attn_mask so (Attention-24)");
        else if (f->opset >= 24) /* already attention24: the mask form is the choice */
            clause(fix, "%s", oq_terms(remedy_seqlen, said, sizeof said));
        else
            clause(fix, "export as attention24 so that padding goes through nonpad_kv_seqlen, not "
                        "attn_mask (Attention-23 has no nonpad_kv_seqlen)");
        if ((rules & OQ_ADVICE_MASK_KV_ALIGN) && target == K_EFFICIENT)
            clause(fix, "or pad the kv length to a multiple of 4");
    }
    if (rules & OQ_ADVICE_FP32_NO_FLASH)
        clause(fix, "%s", f->user_model ? "compute attention in float16 (`ortqual convert --attention-dtype fp16`)"
                                        : oq_terms(remedy_fp16, said, sizeof said));
    if (rules & OQ_ADVICE_CUDNN_DECODE_ONLY)
        clause(fix, "outside decoding steps use FLASH_ATTENTION (kernel flash)%s",
               f->mask == OQ_ATTN_MASK_NONPAD_KV_SEQLEN ? ""
               : f->user_model ? ", and cuDNN needs nonpad_kv_seqlen (`ortqual convert --mask-to-seqlen`)"
                               : ", and cuDNN needs an attention24 export");
    if (rules & OQ_ADVICE_HEAD_SIZE) head_remedy(fix, target, f);
    if (f->user_model && (rules & (OQ_ADVICE_MASK_NO_FLASH | OQ_ADVICE_MASK_KV_ALIGN)) &&
        (rules & OQ_ADVICE_FP32_NO_FLASH))
        clause(fix, "`ortqual convert --flash` does both (and pads the head size)");
}

/* "cuda:attention24:fp16:flash": the configuration that would reach a fused kernel. None when
 * the model itself must change (the user's model, or a head size no configuration changes). */
static void suggested_config(unsigned rules, kid target, const oq_attention_facts *f, FILE *fp)
{
    if (f->user_model || (rules & OQ_ADVICE_HEAD_SIZE)) return;
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
        rules |= reasons_for(exp, f, false, &why);
    } else {
        /* a head size neither flash nor memory-efficient attention takes: one clause for both */
        bool both = head_blocks(K_FLASH, f->head_size) && head_blocks(K_EFFICIENT, f->head_size);
        if (both) {
            char here[64];
            head_here(f, here, sizeof here);
            clause(&why, "flash and memory-efficient attention need a head size that is a multiple of 8, "
                         "at most 256 and 1024 (%s)", here);
        }
        rules |= reasons_for(K_FLASH, f, both, &why);
        rules |= reasons_for(K_EFFICIENT, f, both, &why);
        /* sdpa_kernel leaving only cuDNN among the fused kernels: its limits matter */
        if (f->sdpa_kernel & kid_bit(K_CUDNN) &&
            !(f->sdpa_kernel & (kid_bit(K_FLASH) | kid_bit(K_EFFICIENT))))
            rules |= reasons_for(K_CUDNN, f, both, &why);
    }
    if (!rules) {
        rules = OQ_ADVICE_NO_RULE;
        char head[48] = ", head size unknown";
        if (f->head_size > 0) snprintf(head, sizeof head, ", head size %" PRId64, f->head_size);
        clause(&why,
               "no ORT rule known to ortqual explains it (opset %d, %s, mask %s, q_len %" PRId64
               ", kv_len %" PRId64 "%s, sdpa_kernel %" PRIu32 "); the routing line is the evidence",
               f->opset, oq_dtype_name(f->dtype), oq_attn_mask_kind_name(f->mask), f->q_len, f->kv_len, head,
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
    OQ_NEED(err, observed);
    OQ_NEED(err, facts);
    OQ_NEED(err, out);
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

int64_t oq_head_size_from_scale(double scale)
{
    if (!(scale > 0) || !isfinite(scale)) return 0;
    double h = 1.0 / (scale * scale), r = nearbyint(h);
    return r >= 1 && r < 1e9 && fabs(h - r) <= 1e-3 ? (int64_t)r : 0;
}

/* A dimension string that is a whole number ("12"), else -1 ("seq", "?"). */
static int64_t static_dim(const oq_io_info *io, int32_t axis)
{
    if (!io || axis >= io->rank || axis < 0 || !io->dims || !io->dims[axis]) return -1;
    char *end;
    long long v = strtoll(io->dims[axis], &end, 10);
    return end != io->dims[axis] && !*end && v > 0 ? (int64_t)v : -1;
}

/* The node's attribute `name` ("name=value") as a number, or `def`. */
static double attr_num(const oq_node_info *n, const char *name, double def)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n->n_attrs; i++)
        if (!strncmp(n->attrs[i], name, len) && n->attrs[i][len] == '=') return strtod(n->attrs[i] + len + 1, NULL);
    return def;
}

static const oq_io_info *input(const oq_node_info *n, size_t i)
{
    return i < n->n_inputs && n->inputs[i].name && *n->inputs[i].name ? &n->inputs[i] : NULL;
}

/* Head count and size from Q's declared shape; unknown (0) where it does not fix them. The
 * scale is not read as a size: 1/sqrt(D) is only Attention's default (T5 scales by 1 for any D). */
static void head_facts(const oq_node_info *n, oq_attention_facts *f)
{
    const oq_io_info *q = input(n, 0);
    int64_t attr_heads = (int64_t)attr_num(n, "q_num_heads", 0);
    if (q && q->rank == 4) {
        f->q_heads = static_dim(q, 1);
        f->head_size = static_dim(q, 3);
    } else if (q && q->rank == 3 && attr_heads > 0) {
        int64_t hidden = static_dim(q, 2);
        f->q_heads = attr_heads;
        if (hidden > 0 && hidden % attr_heads == 0) f->head_size = hidden / attr_heads;
    }
    if (f->head_size <= 0) f->head_size = 0;
    if (f->q_heads <= 0) f->q_heads = 0;
}

void oq_attention_facts_from_node(const oq_node_info *node, int64_t opset, oq_attention_facts *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!node) return; /* no node: nothing known */
    out->node = node->name;
    out->opset = (int)opset;
    out->user_model = true;
    const oq_io_info *q = input(node, 0), *k = input(node, 1), *mask = input(node, 3);
    oq_dtype qt = q ? (oq_dtype)q->elem_type : OQ_DTYPE_UNDEFINED;
    out->dtype = qt == OQ_DTYPE_FLOAT16 || qt == OQ_DTYPE_BFLOAT16 || qt == OQ_DTYPE_FLOAT32 ? qt : OQ_DTYPE_UNDEFINED;
    out->mask = mask ? (mask->elem_type == OQ_DTYPE_BOOL ? OQ_ATTN_MASK_BOOL : OQ_ATTN_MASK_FLOAT)
                : input(node, 6) ? OQ_ATTN_MASK_NONPAD_KV_SEQLEN : OQ_ATTN_MASK_NONE;
    int32_t seq_axis = q && q->rank == 4 ? 2 : 1;
    out->q_len = q ? static_dim(q, seq_axis) : -1;
    out->kv_len = k ? static_dim(k, k->rank == 4 ? 2 : 1) : -1;
    if (out->q_len < 0) out->q_len = 0;
    if (out->kv_len < 0) out->kv_len = 0;
    out->softcap = attr_num(node, "softcap", 0) != 0;
    head_facts(node, out);
}

char *oq_head_size_note(int64_t head_size, int64_t q_heads, const char *from)
{
    if (!head_blocks(K_FLASH, head_size)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) return NULL;
    bool eff = !head_blocks(K_EFFICIENT, head_size);
    fprintf(fp, "head size %" PRId64 "%s%s%s: ORT's CUDA %s, so this node runs %s on CUDA; ", head_size,
            from ? " (from " : "", from ? from : "", from ? ")" : "",
            eff ? "flash kernel takes a multiple of 8 up to 256"
                : "flash and memory-efficient kernels need a multiple of 8, at most 256 and 1024",
            eff ? "EFFICIENT_ATTENTION at best" : "MATH");
    oq_attention_facts f = {.head_size = head_size, .q_heads = q_heads};
    text fix = {fp, 0};
    head_remedy(&fix, K_FLASH, &f);
    if (fclose(fp) != 0 || !buf) {
        free(buf);
        return NULL;
    }
    return buf;
}
