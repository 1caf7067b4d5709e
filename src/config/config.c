#include "ortqual/config.h"
#include "ortqual/dispatch.h"
#include "status/args-impl.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const repr_names[] = {"encoder", "sdpa", "decomposed", "attention23",
                                         "attention24", "model", "expected"};
static const char *const prec_names[] = {"fp64", "fp32", "fp16", "tf32", "bf16"};
static const char *const kernel_names[] = {"auto", "flash", "efficient", "cudnn", "math"};
/* The kernel each choice names, with its ORT name and sdpa_kernel bit (dispatch.h). */
static const oq_sdpa_kernel kernel_sdpa[] = {OQ_SDPA_UNKNOWN, OQ_SDPA_FLASH_ATTENTION, OQ_SDPA_EFFICIENT_ATTENTION,
                                             OQ_SDPA_CUDNN_FLASH_ATTENTION, OQ_SDPA_MATH};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Out-of-range values name "unknown" (like oq_status_str): a caller's stray cast never reads past a table. */
static const char *name_of(int v, const char *const *names, int n) { return v >= 0 && v < n ? names[v] : "unknown"; }
static int kernel_ok(oq_kernel k) { return (int)k >= 0 && (int)k < COUNT(kernel_sdpa); }

const char *oq_repr_name(oq_repr r) { return name_of((int)r, repr_names, COUNT(repr_names)); }
const char *oq_precision_name(oq_precision p) { return name_of((int)p, prec_names, COUNT(prec_names)); }
const char *oq_kernel_name(oq_kernel k) { return name_of((int)k, kernel_names, COUNT(kernel_names)); }
int oq_kernel_sdpa_mask(oq_kernel k) { return kernel_ok(k) ? (int)oq_dispatch_kernel_mask(kernel_sdpa[k]) : 0; }
const char *oq_kernel_ort_name(oq_kernel k)
{
    return k == OQ_KERNEL_AUTO || !kernel_ok(k) ? NULL : oq_sdpa_kernel_name(kernel_sdpa[k]);
}
int oq_config_is_expected(const oq_config *c) { return c && c->repr == OQ_REPR_EXPECTED; }
int oq_config_uses_ort(const oq_config *c)
{
    return c && strcmp(c->runtime, "ref") != 0 && !oq_config_is_expected(c);
}
int oq_config_on_ep(const oq_config *c) { return oq_config_uses_ort(c) && strcmp(c->runtime, "cpu") != 0; }
int oq_precision_is_reduced(oq_precision p) { return p == OQ_PREC_FP16 || p == OQ_PREC_TF32 || p == OQ_PREC_BF16; }

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

static void join(char *buf, size_t n, const char *const *names, int count)
{
    buf[0] = 0;
    for (int i = 0; i < count; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", i ? "|" : "", names[i]);
    }
}

/* Split "a:b:c[:d]" into at most 4 fields of a local copy. */
static int split_fields(char *copy, char **fields)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        if (n == 4) return 5;
        fields[n++] = tok;
    }
    return n;
}

static oq_status check_combination(const oq_config *c, const char *text, oq_err *err)
{
    if (c->repr == OQ_REPR_EXPECTED || !strcmp(c->runtime, "expected"))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': the saved outputs are the one-word configuration 'expected'", text);
    int is_ref = !oq_config_uses_ort(c);
    int ref_repr = c->repr == OQ_REPR_ENCODER || c->repr == OQ_REPR_SDPA;
    if (is_ref != ref_repr)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': representation '%s' %s", text, repr_names[c->repr],
                          is_ref ? "runs only on ONNX Runtime (the reference takes encoder or sdpa)"
                                 : "is the reference's own (use runtime ref)");
    if (is_ref && c->precision != OQ_PREC_FP64)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': the reference computes in fp64 only", text);
    if (!is_ref && c->precision == OQ_PREC_FP64)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': fp64 is the reference's precision; ONNX Runtime configs take fp32 or fp16",
                          text);
    if (c->precision == OQ_PREC_TF32 && strcmp(c->runtime, "cuda") != 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': tf32 applies to the cuda runtime only", text);
    /* ortqual exports in float32 or float16 only; bfloat16 is a model of yours */
    if (c->precision == OQ_PREC_BF16 && c->repr != OQ_REPR_MODEL)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': bf16 applies to representation model only", text);
    if (c->kernel != OQ_KERNEL_AUTO && strcmp(c->runtime, "cuda") != 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': a kernel choice (%s) applies to the cuda runtime only", text,
                          kernel_names[c->kernel]);
    return OQ_OK;
}

/* "CONFIG@LABEL": CONFIG, its name carrying the label (letters, digits, '.', '_', '-'). */
static oq_status labelled(const char *text, const char *at, oq_config *out, oq_err *err)
{
    char base[OQ_CONFIG_NAME_MAX];
    const char *label = at + 1;
    size_t n = strlen(label);
    if (!n || n > 31 || strspn(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': a label after '@' is 1 to 31 letters, digits, '.', '_' or '-'", text);
    snprintf(base, sizeof base, "%.*s", (int)(at - text), text);
    oq_status st = oq_config_parse(base, out, err);
    if (st) return st;
    char name[OQ_CONFIG_NAME_MAX + 40];
    snprintf(name, sizeof name, "%s@%s", out->name, label);
    if (strlen(name) >= sizeof out->name)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%.40s...': too long", text);
    strcpy(out->name, name);
    return OQ_OK;
}

oq_status oq_config_parse(const char *text, oq_config *out, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, out);
    if (text[strcspn(text, " \t\n\v\f\r")]) /* ' cpu' would be a plugin EP named " cpu", skipped */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': whitespace in a configuration's name", text);
    const char *at = strchr(text, '@');
    if (at) return labelled(text, at, out, err);
    char copy[OQ_CONFIG_NAME_MAX], choices[128];
    char *f[5] = {0};
    memset(out, 0, sizeof *out);
    if (strlen(text) >= sizeof copy)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%.40s...': too long", text);
    strcpy(copy, text);
    if (!strcmp(text, "expected")) { /* the saved outputs: nothing runs */
        *out = (oq_config){.name = "expected", .runtime = "expected", .repr = OQ_REPR_EXPECTED,
                           .precision = OQ_PREC_FP32};
        return OQ_OK;
    }
    int n = split_fields(copy, f);
    if (n < 3 || n > 4)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "config '%s': expected <runtime>:<representation>:<precision>[:<kernel>]",
                          text);
    if (strlen(f[0]) >= sizeof out->runtime)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': runtime name too long", text);
    /* ORT's CPU and CUDA providers under any spelling the runtime takes for them (runtime/ep.c),
     * named as one: 'CPU:model:fp32' beside 'cpu:model:fp32' ran the reference again under
     * another name and passed, proving nothing */
    const char *runtime = !strcasecmp(f[0], "cpu") || !strcmp(f[0], "CPUExecutionProvider")    ? "cpu"
                          : !strcasecmp(f[0], "cuda") || !strcmp(f[0], "CUDAExecutionProvider") ? "cuda"
                                                                                                 : f[0];
    strcpy(out->runtime, runtime);
    int r = lookup(f[1], repr_names, COUNT(repr_names));
    int p = lookup(f[2], prec_names, COUNT(prec_names));
    int k = n == 4 ? lookup(f[3], kernel_names, COUNT(kernel_names)) : 0;
    if (r < 0) {
        join(choices, sizeof choices, repr_names, COUNT(repr_names));
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': unknown representation '%s' (%s)",
                          text, f[1], choices);
    }
    if (p < 0) {
        join(choices, sizeof choices, prec_names, COUNT(prec_names));
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': unknown precision '%s' (%s)", text,
                          f[2], choices);
    }
    if (k < 0) {
        join(choices, sizeof choices, kernel_names, COUNT(kernel_names));
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': unknown kernel '%s' (%s)", text,
                          f[3], choices);
    }
    out->repr = (oq_repr)r;
    out->precision = (oq_precision)p;
    out->kernel = (oq_kernel)k;
    oq_status st = check_combination(out, text, err);
    if (st) return st;
    snprintf(out->name, sizeof out->name, "%s:%s:%s%s%s", out->runtime, repr_names[r], prec_names[p],
             k ? ":" : "", k ? kernel_names[k] : "");
    return OQ_OK;
}

/* The field of c that differs from the parse of its name (NULL: none): "runtime cuda". */
static const char *differing_field(const oq_config *c, const oq_config *parsed, char *buf, size_t n)
{
    if (strcmp(c->runtime, parsed->runtime)) snprintf(buf, n, "runtime %s", c->runtime);
    else if (c->repr != parsed->repr) snprintf(buf, n, "repr %s", oq_repr_name(c->repr));
    else if (c->precision != parsed->precision) snprintf(buf, n, "precision %s", oq_precision_name(c->precision));
    else if (c->kernel != parsed->kernel) snprintf(buf, n, "kernel %s", oq_kernel_name(c->kernel));
    else if (strcmp(c->name, parsed->name)) snprintf(buf, n, "its canonical name is '%s'", parsed->name);
    else return NULL;
    return buf;
}

oq_status oq_config_check(const oq_config *c, oq_err *err)
{
    OQ_NEED(err, c);
    /* a name or runtime filling its array has no end to read up to */
    if (!memchr(c->name, 0, sizeof c->name))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config name is not terminated within its %zu bytes",
                          sizeof c->name);
    if (!memchr(c->runtime, 0, sizeof c->runtime))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "config '%s': runtime is not terminated within its %zu bytes",
                          c->name, sizeof c->runtime);
    oq_config parsed;
    oq_status st = oq_config_parse(c->name, &parsed, err);
    if (st) return st;
    char what[OQ_CONFIG_NAME_MAX + 32];
    if (differing_field(c, &parsed, what, sizeof what))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "name '%s' does not match its fields (%s)", c->name, what);
    return OQ_OK;
}

int oq_config_known(size_t i, oq_config *out)
{
    static const char *const runtimes[] = {"ref", "cpu", "cuda"};
    char text[OQ_CONFIG_NAME_MAX];
    size_t k = 0;
    if (!out) return 0;
    /* what the parser accepts, tried field by field: a list kept apart would miss a choice */
    for (int t = 0; t < COUNT(runtimes); t++)
        for (int r = 0; r < COUNT(repr_names); r++)
            for (int p = 0; p < COUNT(prec_names); p++) {
                snprintf(text, sizeof text, "%s:%s:%s", runtimes[t], repr_names[r], prec_names[p]);
                if (oq_config_parse(text, out, NULL) == OQ_OK && k++ == i) return 1;
            }
    return k == i && oq_config_parse("expected", out, NULL) == OQ_OK;
}

static long find_key(const char *const *keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys[i], key)) return (long)i;
    return -1;
}

size_t oq_config_ep_options(const oq_config *c, int force_sdpa_kernel, const char **keys,
                            const char **values, size_t n, char *buf, size_t bufn)
{
    if (!c || !keys || !values || !buf) return n;
    long at = find_key(keys, n, "sdpa_kernel");
    if (force_sdpa_kernel >= 0 || (c->kernel != OQ_KERNEL_AUTO && at < 0)) {
        snprintf(buf, bufn, "%d", force_sdpa_kernel >= 0 ? force_sdpa_kernel : oq_kernel_sdpa_mask(c->kernel));
        if (at < 0) keys[at = (long)n++] = "sdpa_kernel";
        values[at] = buf;
    }
    /* fp32 on CUDA is true float32; tf32 allows TensorFloat-32 products (ORT's default) */
    if (!strcmp(c->runtime, "cuda") && find_key(keys, n, "use_tf32") < 0) {
        keys[n] = "use_tf32";
        values[n++] = c->precision == OQ_PREC_TF32 ? "1" : "0";
    }
    return n;
}
