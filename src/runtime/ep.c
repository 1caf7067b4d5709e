/* Execution providers: plugin libraries, EP devices, option checks, attaching. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "runtime/runtime-impl.h"
#include "status/args-impl.h"

static int is_cpu(const char *ep)
{
    return !ep || !strcasecmp(ep, "cpu") || !strcmp(ep, "CPUExecutionProvider");
}

static int is_cuda(const char *ep)
{
    return ep && (!strcasecmp(ep, "cuda") || !strcmp(ep, "CUDAExecutionProvider"));
}

const char *oq_ep_full_name(const char *ep)
{
    if (is_cpu(ep)) return "CPUExecutionProvider";
    if (is_cuda(ep)) return "CUDAExecutionProvider";
    return ep;
}

const char *oq_hw_type_name(oq_hw_type t)
{
    switch (t) {
    case OQ_HW_CPU: return "cpu";
    case OQ_HW_GPU: return "gpu";
    case OQ_HW_NPU: return "npu";
    case OQ_HW_OTHER: return "other";
    }
    return "unknown";
}

/* ---- provider option checks ------------------------------------------------------ */

typedef enum { V_UINT, V_FLAG, V_MASK8, V_ENUM } vkind;

typedef struct opt_rule {
    const char *key;
    vkind kind;
    const char *choices; /* V_ENUM: "|"-separated */
} opt_rule;

/* CUDA EP options (onnxruntime cuda_execution_provider_info.cc, ORT 1.29). */
static const opt_rule cuda_rules[] = {
    {"device_id", V_UINT, NULL},
    {"sdpa_kernel", V_MASK8, NULL},
    {"gpu_mem_limit", V_UINT, NULL},
    {"arena_extend_strategy", V_ENUM, "kNextPowerOfTwo|kSameAsRequested"},
    {"cudnn_conv_algo_search", V_ENUM, "EXHAUSTIVE|HEURISTIC|DEFAULT"},
    {"do_copy_in_default_stream", V_FLAG, NULL},
    {"enable_cuda_graph", V_FLAG, NULL},
    {"use_tf32", V_FLAG, NULL},
    {"prefer_nhwc", V_FLAG, NULL},
    {"cudnn_conv_use_max_workspace", V_FLAG, NULL},
    {"cudnn_conv1d_pad_to_nc1d", V_FLAG, NULL},
    {"enable_skip_layer_norm_strict_mode", V_FLAG, NULL},
    {"use_ep_level_unified_stream", V_FLAG, NULL},
    {"fuse_conv_bias", V_FLAG, NULL},
    {"tunable_op_enable", V_FLAG, NULL},
    {"tunable_op_tuning_enable", V_FLAG, NULL},
    {"tunable_op_max_tuning_duration_ms", V_UINT, NULL},
    {"has_user_compute_stream", V_FLAG, NULL},
    {"user_compute_stream", V_UINT, NULL},
    {"gpu_external_alloc", V_UINT, NULL},
    {"gpu_external_free", V_UINT, NULL},
    {"gpu_external_empty_cache", V_UINT, NULL},
};

static int parse_uint(const char *v, unsigned long long *out)
{
    if (!v || !*v || *v == '-' || *v == '+') return 0;
    char *end = NULL;
    errno = 0;
    *out = strtoull(v, &end, 10);
    return errno == 0 && end && *end == '\0';
}

static int in_choices(const char *v, const char *choices)
{
    size_t n = strlen(v);
    for (const char *p = choices; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, v, n)) return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

static oq_status check_value(const opt_rule *r, const char *v, oq_err *err)
{
    unsigned long long u = 0;
    switch (r->kind) {
    case V_UINT:
        if (parse_uint(v, &u)) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "cuda provider option %s=%s: want a non-negative decimal integer", r->key, v);
    case V_FLAG:
        if (v && (!strcmp(v, "0") || !strcmp(v, "1"))) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cuda provider option %s=%s: want 0 or 1",
                          r->key, v);
    case V_MASK8:
        if (parse_uint(v, &u) && u <= 255) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "cuda provider option %s=%s: want a decimal bitmask 0..255 "
                          "(1 flash, 2 efficient, 4 trt fused, 8 cudnn flash, 16 math, "
                          "32 trt flash, 64 trt cross, 128 trt causal)",
                          r->key, v);
    case V_ENUM:
        if (v && in_choices(v, r->choices)) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "cuda provider option %s=%s: want one of %s",
                          r->key, v, r->choices);
    }
    return OQ_OK;
}

static oq_status unknown_key(const char *key, oq_err *err)
{
    char known[700];
    size_t len = 0;
    for (size_t i = 0; i < sizeof cuda_rules / sizeof cuda_rules[0]; i++) {
        int k = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", cuda_rules[i].key);
        if (k < 0 || (size_t)k >= sizeof known - len) break;
        len += (size_t)k;
    }
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "unknown cuda provider option '%s' (known: %s)",
                      key, known);
}

oq_status oq_ep_options_validate(const char *ep, size_t n, const char *const *keys,
                                 const char *const *values, oq_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (!keys || !values || !keys[i] || !values[i] || !*keys[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "provider option %zu has no key or value", i);
    if (is_cpu(ep)) {
        if (n)
            return oq_err_set(err, OQ_ERR_INVALID_ARG,
                              "provider option '%s': the cpu EP takes no provider options", keys[0]);
        return OQ_OK;
    }
    if (!is_cuda(ep)) return OQ_OK;
    for (size_t i = 0; i < n; i++) {
        const opt_rule *rule = NULL;
        for (size_t r = 0; r < sizeof cuda_rules / sizeof cuda_rules[0]; r++)
            if (!strcmp(cuda_rules[r].key, keys[i])) rule = &cuda_rules[r];
        if (!rule) return unknown_key(keys[i], err);
        oq_status st = check_value(rule, values[i], err);
        if (st) return st;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(keys[j], keys[i]))
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "cuda provider option '%s' given twice",
                                  keys[i]);
    }
    return OQ_OK;
}

/* ---- plugin libraries ------------------------------------------------------------ */

/* "cuda" and "CUDAExecutionProvider" name one registration. */
static const char *reg_name(const char *name)
{
    return is_cuda(name) ? "cuda" : name;
}

const char *oq_runtime_registered_ep(const oq_runtime *rt, const char *name)
{
    if (!rt || !name) return NULL;
    name = reg_name(name);
    for (size_t i = 0; i < rt->n_ep_libs; i++)
        if (!strcmp(rt->ep_libs[i].name, name)) return rt->ep_libs[i].path;
    return NULL;
}

char *oq_runtime_default_ep_lib(const oq_runtime *rt, const char *name)
{
    if (!rt || !name) return NULL;
    const char *slash = strrchr(rt->lib_path, '/');
    int dir_len = slash ? (int)(slash - rt->lib_path) : 1;
    const char *dir = slash ? rt->lib_path : ".";
    char *lower = strdup(reg_name(name));
    if (!lower) return NULL;
    for (char *p = lower; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    char *out = NULL;
    if (asprintf(&out, "%.*s/libonnxruntime_providers_%s.so", dir_len, dir, lower) < 0) out = NULL;
    free(lower);
    return out;
}

/* The dynamic loader's words in an ORT message ("PATH: cannot open shared object file:
 * ..."), or NULL: a library that an EP needs is missing on this host. */
static const char *missing_library(const char *msg)
{
    if (!strstr(msg, "cannot open shared object file")) return NULL;
    const char *w = strstr(msg, "with error: ");
    return w ? w + strlen("with error: ") : msg;
}

static int g_ep_loaded;

/* The file an EP library `path` names, as ORT is handed it: ORT loads a relative path from its
 * own folder, while ortqual checks `path` from the current one. Made absolute from the current
 * folder (into buf[n]), so that the file checked is the file loaded; `path` itself when
 * absolute, or when there is no room. A bare name is the dynamic loader's to find, never a file
 * of the current folder (one planted in a shared project folder ran as whoever started ortqual
 * there): the file of a folder of LD_LIBRARY_PATH the loader takes; NULL where none holds it,
 * its cache and the system's folders left to loader_file. */
static const char *ep_file(const char *path, char *buf, size_t n)
{
    char found[PATH_MAX], cwd[PATH_MAX];
    const char *lib = path;
    if (!strchr(path, '/') && !oq_lib_search(path, found, sizeof found)) return NULL;
    if (!strchr(path, '/')) lib = found;
    if (lib[0] == '/') return lib == found && (size_t)snprintf(buf, n, "%s", found) < n ? buf : path;
    if (!getcwd(cwd, sizeof cwd) || (size_t)snprintf(buf, n, "%s/%s", cwd, lib) >= n) return path;
    return buf;
}

/* The file the dynamic loader takes for a bare name from its cache or the system's folders,
 * into buf[n]: mapped here to learn which (*dl, to close once ORT has mapped it too), as
 * ORT's dlopen would map it next. */
static oq_status loader_file(const char *name, char *buf, size_t n, void **dl, oq_err *err)
{
    char why[512];
    struct link_map *map = NULL;
    g_ep_loaded = 1;
    *dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!*dl && oq_lib_unfound(name, dlerror(), why, sizeof why))
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "no EP library at %s (%s)", name, why);
    if (!*dl) /* a library it needs is missing: the EP is not available here, as below */
        return oq_err_set(err, missing_library(why) ? OQ_ERR_NOT_FOUND : OQ_ERR_RUNTIME,
                          "cannot load EP library %s: %s", name, why);
    if (dlinfo(*dl, RTLD_DI_LINKMAP, &map) == 0 && map->l_name[0] == '/' &&
        (size_t)snprintf(buf, n, "%s", map->l_name) < n)
        return OQ_OK;
    dlclose(*dl);
    *dl = NULL;
    return oq_err_set(err, OQ_ERR_NOT_FOUND, "EP library %s: the dynamic loader does not say which file it took", name);
}

int oq_runtime_ep_loaded(void) { return g_ep_loaded; }

oq_status oq_runtime_register_ep(oq_runtime *rt, const char *name, const char *path, oq_err *err)
{
    OQ_NEED(err, rt);
    OQ_NEED(err, name);
    OQ_NEED(err, path);
    if (!*name || !*path)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: the EP's %s is empty", __func__, *name ? "path" : "name");
    name = reg_name(name);
    const char *have = oq_runtime_registered_ep(rt, name);
    if (have) {
        if (!strcmp(have, path)) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "EP '%s' is already registered from %s, not %s",
                          name, have, path);
    }
    if (rt->api_version < OQ_ORT_API_PLUGIN_EP)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "%s: plugin EP libraries need ORT C API %d, ONNX Runtime %s offers %d",
                          path, OQ_ORT_API_PLUGIN_EP, rt->version, rt->api_version);
    if (rt->n_ep_libs == OQ_RT_MAX_EP_LIBS)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "more than %d EP libraries", OQ_RT_MAX_EP_LIBS);
    char found[PATH_MAX], why[256];
    void *dl = NULL;
    const char *lib = ep_file(path, found, sizeof found);
    if (!lib) {
        oq_status st = loader_file(path, found, sizeof found, &dl, err);
        if (st) return st;
        lib = found;
    } else if (access(lib, F_OK) != 0) {
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "no EP library at %s", path);
    } else if (oq_elf_unloadable(lib, why, sizeof why) == OQ_ELF_TRUNCATED) { /* ORT's dlopen would die of SIGBUS */
        return oq_err_set(err, OQ_ERR_RUNTIME, "cannot load EP library %s%s%s%s: %s", path, lib == path ? "" : " (",
                          lib == path ? "" : lib, lib == path ? "" : ")", why);
    }
    char what[600];
    snprintf(what, sizeof what, "registering EP library %.560s", lib);
    g_ep_loaded = 1;
    oq_status st = oq_ort_status(rt, rt->api->RegisterExecutionProviderLibrary(rt->env, name, lib),
                                 err, what);
    if (dl) dlclose(dl); /* ORT holds its own mapping */
    /* A library the EP needs is missing (libcuda.so.1 on a host without the NVIDIA driver,
     * libcudart without the CUDA runtime): the EP is not available here, like a missing EP. */
    if (st && err && missing_library(err->msg))
        return err->status = OQ_ERR_NOT_FOUND;
    if (st) return st;
    char *n = strdup(name), *p = strdup(path);
    if (!n || !p) {
        free(n);
        free(p);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    rt->ep_libs[rt->n_ep_libs].name = n;
    rt->ep_libs[rt->n_ep_libs].path = p;
    rt->n_ep_libs++;
    return OQ_OK;
}

/* ---- EP devices ------------------------------------------------------------------ */

static oq_status copy_kvs(const OrtApi *api, const OrtKeyValuePairs *kvp, oq_kv **out, size_t *n,
                          oq_err *err)
{
    *out = NULL;
    *n = 0;
    if (!kvp) return OQ_OK;
    const char *const *keys = NULL, *const *vals = NULL;
    size_t cnt = 0;
    api->GetKeyValuePairs(kvp, &keys, &vals, &cnt);
    if (!cnt) return OQ_OK;
    oq_kv *kv = calloc(cnt, sizeof *kv);
    if (!kv) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        kv[i].key = strdup(keys[i] ? keys[i] : "");
        kv[i].value = strdup(vals[i] ? vals[i] : "");
        if (!kv[i].key || !kv[i].value) {
            oq_kvs_free(kv, cnt);
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
    }
    *out = kv;
    *n = cnt;
    return OQ_OK;
}

static oq_status copy_device(const OrtApi *api, const OrtEpDevice *d, oq_ep_device *o, oq_err *err)
{
    const OrtHardwareDevice *hw = api->EpDevice_Device(d);
    const char *en = api->EpDevice_EpName(d), *ev = api->EpDevice_EpVendor(d);
    o->ep_name = strdup(en ? en : "");
    o->ep_vendor = strdup(ev ? ev : "");
    switch (api->HardwareDevice_Type(hw)) {
    case OrtHardwareDeviceType_CPU: o->hw_type = OQ_HW_CPU; break;
    case OrtHardwareDeviceType_GPU: o->hw_type = OQ_HW_GPU; break;
    case OrtHardwareDeviceType_NPU: o->hw_type = OQ_HW_NPU; break;
    default: o->hw_type = OQ_HW_OTHER; break;
    }
    const char *hv = api->HardwareDevice_Vendor(hw);
    o->hw_vendor = strdup(hv ? hv : "");
    o->vendor_id = api->HardwareDevice_VendorId(hw);
    o->device_id = api->HardwareDevice_DeviceId(hw);
    if (!o->ep_name || !o->ep_vendor || !o->hw_vendor)
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = copy_kvs(api, api->HardwareDevice_Metadata(hw), &o->hw_meta, &o->n_hw_meta, err);
    if (st) return st;
    return copy_kvs(api, api->EpDevice_EpMetadata(d), &o->ep_meta, &o->n_ep_meta, err);
}

static oq_status raw_devices(oq_runtime *rt, const OrtEpDevice *const **devs, size_t *n, oq_err *err)
{
    if (rt->api_version < OQ_ORT_API_PLUGIN_EP)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "EP devices need ORT C API %d, ONNX Runtime %s offers %d",
                          OQ_ORT_API_PLUGIN_EP, rt->version, rt->api_version);
    return oq_ort_status(rt, rt->api->GetEpDevices(rt->env, devs, n), err, "GetEpDevices");
}

oq_status oq_runtime_ep_devices(oq_runtime *rt, oq_ep_device **devs, size_t *n, oq_err *err)
{
    OQ_NEED(err, rt);
    OQ_NEED(err, devs);
    OQ_NEED(err, n);
    *devs = NULL;
    *n = 0;
    const OrtEpDevice *const *raw = NULL;
    size_t cnt = 0;
    oq_status st = raw_devices(rt, &raw, &cnt, err);
    if (st) return st;
    oq_ep_device *out = calloc(cnt ? cnt : 1, sizeof *out);
    if (!out) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < cnt; i++)
        if ((st = copy_device(rt->api, raw[i], &out[i], err))) {
            oq_ep_devices_free(out, cnt);
            return st;
        }
    *devs = out;
    *n = cnt;
    return OQ_OK;
}

void oq_ep_devices_free(oq_ep_device *devs, size_t n)
{
    if (!devs) return;
    for (size_t i = 0; i < n; i++) {
        free(devs[i].ep_name);
        free(devs[i].ep_vendor);
        free(devs[i].hw_vendor);
        oq_kvs_free(devs[i].hw_meta, devs[i].n_hw_meta);
        oq_kvs_free(devs[i].ep_meta, devs[i].n_ep_meta);
    }
    free(devs);
}

/* ---- attaching an EP to session options ------------------------------------------ */

static int ep_name_matches(const char *dev_ep, const char *ep, const char *full)
{
    return dev_ep && (!strcmp(dev_ep, full) || !strcasecmp(dev_ep, ep));
}

/* Ordinal of the device to use: device_id when given (CUDA counts GPUs from 0). */
static size_t wanted_ordinal(const oq_session_opts *o)
{
    for (size_t i = 0; i < o->n_ep_options; i++)
        if (!strcmp(o->ep_option_keys[i], "device_id")) return strtoul(o->ep_option_values[i], NULL, 10);
    return 0;
}

/* Plugin path. OQ_ERR_NOT_FOUND leaves the reason in err for the caller to
 * combine with the legacy attempt. */
static oq_status attach_plugin(oq_runtime *rt, OrtSessionOptions *so, const oq_session_opts *o,
                               const char *full, const char *lib, oq_err *err)
{
    oq_status st = oq_runtime_register_ep(rt, o->ep, lib, err);
    if (st) return st;
    const OrtEpDevice *const *devs = NULL;
    size_t n = 0;
    if ((st = raw_devices(rt, &devs, &n, err))) return st;
    size_t want = wanted_ordinal(o), seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ep_name_matches(rt->api->EpDevice_EpName(devs[i]), o->ep, full)) continue;
        if (seen++ != want) continue;
        char what[256];
        snprintf(what, sizeof what, "attaching EP %s", full);
        return oq_ort_status(rt,
                             rt->api->SessionOptionsAppendExecutionProvider_V2(
                                 so, rt->env, &devs[i], 1, o->ep_option_keys, o->ep_option_values,
                                 o->n_ep_options),
                             err, what);
    }
    if (seen)
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "EP '%s' (%s) has %zu device(s), none with index %zu",
                          o->ep, lib, seen, want);
    return oq_err_set(err, OQ_ERR_NOT_FOUND,
                      "EP library %s is registered but reports no %s device", lib, full);
}

static int provider_compiled_in(oq_runtime *rt, const char *full)
{
    char **names = NULL;
    size_t n = 0;
    if (oq_runtime_providers(rt, &names, &n, NULL)) return 0;
    int found = 0;
    for (size_t i = 0; i < n; i++) found |= !strcmp(names[i], full);
    oq_strv_free(names, n);
    return found;
}

/* Official GPU builds: CUDA compiled into (or shipped as a shared provider of) the core library. */
static oq_status attach_cuda_legacy(oq_runtime *rt, OrtSessionOptions *so, const oq_session_opts *o,
                                    oq_err *err)
{
    const OrtApi *api = rt->api;
    OrtCUDAProviderOptionsV2 *cuda = NULL;
    g_ep_loaded = 1; /* loads ORT's shared CUDA provider */
    oq_status st = oq_ort_status(rt, api->CreateCUDAProviderOptions(&cuda), err, "CreateCUDAProviderOptions");
    if (st) return st;
    st = oq_ort_status(rt,
                       api->UpdateCUDAProviderOptions(cuda, o->ep_option_keys, o->ep_option_values,
                                                      o->n_ep_options),
                       err, "UpdateCUDAProviderOptions");
    if (!st)
        st = oq_ort_status(rt, api->SessionOptionsAppendExecutionProvider_CUDA_V2(so, cuda), err,
                           "SessionOptionsAppendExecutionProvider_CUDA_V2");
    api->ReleaseCUDAProviderOptions(cuda);
    return st;
}

/* CUDA through the core library. Builds that list CUDAExecutionProvider without shipping
 * its provider libraries (onnxruntime-node's, a GPU wheel's core copied alone) fail here
 * in the dynamic loader: the EP is not available, as when no EP library is found. */
static oq_status attach_legacy(oq_runtime *rt, OrtSessionOptions *so, const oq_session_opts *o,
                               const char *plugin_msg, const char **attach, oq_err *err)
{
    oq_err lerr = {0};
    *attach = "legacy";
    oq_status st = attach_cuda_legacy(rt, so, o, &lerr);
    if (!st) return OQ_OK;
    const char *lib = missing_library(lerr.msg);
    if (!lib) return oq_err_set(err, st, "%s", lerr.msg);
    int n = (int)strlen(lib);
    while (n > 0 && lib[n - 1] == ' ') n--;
    return oq_err_set(err, OQ_ERR_NOT_FOUND,
                      "EP '%s' is not available: %s, and ONNX Runtime %s lists CUDAExecutionProvider "
                      "but cannot load its provider libraries (%.*s)",
                      o->ep, plugin_msg, rt->version, n, lib);
}

oq_status oq_ep_attach(oq_runtime *rt, OrtSessionOptions *so, const oq_session_opts *o,
                       const char **ep_full, const char **attach, oq_err *err)
{
    oq_status st = oq_ep_options_validate(o->ep, o->n_ep_options, o->ep_option_keys,
                                          o->ep_option_values, err);
    if (st) return st;
    *ep_full = oq_ep_full_name(o->ep);
    *attach = "default";
    if (is_cpu(o->ep)) return OQ_OK;

    char *dflt = NULL;
    const char *lib = o->ep_lib ? o->ep_lib : oq_runtime_registered_ep(rt, o->ep);
    if (!lib) lib = dflt = oq_runtime_default_ep_lib(rt, o->ep);
    if (!lib) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_err perr = {0};
    st = attach_plugin(rt, so, o, *ep_full, lib, &perr);
    free(dflt);
    if (!st) {
        *attach = "plugin";
        return OQ_OK;
    }
    if (is_cuda(o->ep) && provider_compiled_in(rt, "CUDAExecutionProvider"))
        return attach_legacy(rt, so, o, perr.msg, attach, err);
    if (st != OQ_ERR_NOT_FOUND) return oq_err_set(err, st, "%s", perr.msg);
    return oq_err_set(err, OQ_ERR_NOT_FOUND, "EP '%s' is not available: %s%s", o->ep, perr.msg,
                      is_cuda(o->ep) ? ", and CUDAExecutionProvider is not compiled into the core library"
                                     : "");
}
