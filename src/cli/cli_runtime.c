/* --ort-lib, --ep, --ep-lib, --ep-option: parsed the same way by every subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/fileio.h"
#include "ortqual/runtime.h"

/* Split "NAME=VALUE" into two new strings. */
static int split_pair(const char *arg, const char *what, char **k, char **v)
{
    const char *eq = arg ? strchr(arg, '=') : NULL;
    if (!eq || eq == arg) {
        oq_cli_error("--%s '%s': want %s", what, arg ? arg : "", strcmp(what, "ep-lib") ? "KEY=VALUE" : "NAME=PATH");
        return -1;
    }
    *k = strndup(arg, (size_t)(eq - arg));
    *v = strdup(eq + 1);
    if (!*k || !*v) {
        free(*k);
        free(*v);
        oq_cli_error("out of memory");
        return -1;
    }
    return 0;
}

/* Append k and v to the parallel arrays (which grow together, by exactly one). */
static int push_pair(char ***keys, char ***vals, size_t *n, char *k, char *v)
{
    char **nk = realloc(*keys, (*n + 1) * sizeof *nk);
    if (nk) *keys = nk;
    char **nv = nk ? realloc(*vals, (*n + 1) * sizeof *nv) : NULL;
    if (nv) *vals = nv;
    if (!nk || !nv) {
        free(k);
        free(v);
        oq_cli_error("out of memory");
        return -1;
    }
    (*keys)[*n] = k;
    (*vals)[*n] = v;
    (*n)++;
    return 0;
}

static char cuda_dir_problem[OQ_ERR_MSG_MAX];

/* ORTQUAL_ORT_CUDA_DIR=DIR: ORT and its CUDA EP unpacked in DIR (a GPU host without registry
 * access). The core library comes from DIR unless ORTQUAL_ORT_LIB names one (or --ort-lib, which
 * is tried before the variable), and the CUDA EP is found beside it; workers inherit the result.
 * A DIR without the library is still named as the library: a load without --ort-lib then fails
 * on it instead of quietly taking another ORT, and commands that load no ORT never look. */
void oq_cli_apply_cuda_dir(void)
{
    const char *dir = getenv("ORTQUAL_ORT_CUDA_DIR");
    const char *lib = getenv("ORTQUAL_ORT_LIB");
    if (!dir || !*dir || (lib && *lib)) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/libonnxruntime.so", dir);
    if (access(path, R_OK) != 0)
        snprintf(cuda_dir_problem, sizeof cuda_dir_problem,
                 "ORTQUAL_ORT_CUDA_DIR=%s has no readable libonnxruntime.so: point it at the folder of ONNX "
                 "Runtime's unpacked libraries (libonnxruntime.so, the CUDA EP's libonnxruntime_providers_cuda.so "
                 "beside it), unset it, or give --ort-lib PATH", oq_cli_shown(dir));
    setenv("ORTQUAL_ORT_LIB", path, 1);
}

const char *oq_cli_cuda_dir_problem(void)
{
    return *cuda_dir_problem ? cuda_dir_problem : NULL;
}

void oq_cli_load_failed(const char *ort_lib, oq_err *err)
{
    if (!ort_lib && *cuda_dir_problem) snprintf(err->msg, sizeof err->msg, "%s", cuda_dir_problem);
}

int oq_cli_runtime_string(const oq_opt *o, const char *arg)
{
    struct oq_cli_runtime *cr = o->ctx;
    if (!strcmp(o->name, "ort-lib")) cr->ort_lib = arg;
    else cr->ep = arg;
    cr->given = 1;
    return 0;
}

int oq_cli_runtime_ep_lib(const oq_opt *o, const char *arg)
{
    struct oq_cli_runtime *cr = o->ctx;
    char *k = NULL, *v = NULL;
    if (split_pair(arg, "ep-lib", &k, &v)) return -1;
    if (!*v) {
        oq_cli_error("--ep-lib '%s': empty path", arg);
        free(k);
        free(v);
        return -1;
    }
    cr->given = 1;
    return push_pair(&cr->ep_lib_names, &cr->ep_lib_paths, &cr->n_ep_libs, k, v);
}

int oq_cli_runtime_ep_option(const oq_opt *o, const char *arg)
{
    struct oq_cli_runtime *cr = o->ctx;
    char *k = NULL, *v = NULL;
    if (split_pair(arg, "ep-option", &k, &v)) return -1;
    cr->given = 1;
    return push_pair(&cr->option_keys, &cr->option_values, &cr->n_options, k, v);
}

static int known_key(const char *key)
{
    for (size_t i = 0; oq_session_config_key(i); i++)
        if (!strcmp(oq_session_config_key(i), key)) return 1;
    return 0;
}

int oq_cli_runtime_session_config(const oq_opt *o, const char *arg)
{
    struct oq_cli_runtime *cr = o->ctx;
    char *k = NULL, *v = NULL;
    if (split_pair(arg, "session-config", &k, &v)) return -1;
    oq_err e = {0};
    char said[OQ_ERR_MSG_MAX + 64];
    /* ORT would store it unread: a silent no-op; a key the headers do not know is judged by the
     * library once it knows the ORT loaded (a newer one may read it) */
    if (oq_session_config_check(k, v, &e) && known_key(k)) {
        oq_cli_error("%s", oq_cli_terms(e.msg, said, sizeof said));
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < cr->n_session_configs; i++) /* ORT would keep the last without a word */
        if (!strcmp(cr->session_config_keys[i], k)) {
            oq_cli_error("--session-config %s given twice (=%s, then =%s): ORT would keep the last without a word; "
                         "give each key once",
                         k, cr->session_config_values[i], v);
            free(k);
            free(v);
            return -1;
        }
    return push_pair(&cr->session_config_keys, &cr->session_config_values, &cr->n_session_configs, k, v);
}

/* The warning of entry i on ORT `version` into w (n bytes): "" where there is none. */
static const char *entry_warning(const char *version, const char *key, const char *value, char *w, size_t n)
{
    if (oq_session_config_check_for(version, key, value, w, n, NULL)) *w = '\0';
    return w;
}

void oq_cli_session_config_warn(const char *cmd, const char *version, size_t n, const char *const *keys,
                                const char *const *values)
{
    char w[512];
    for (size_t i = 0; version && i < n; i++)
        if (*entry_warning(version, keys[i], values[i], w, sizeof w))
            fprintf(stderr, "ortqual %s: WARNING: %s\n", cmd, oq_cli_shown(w));
}

int oq_cli_session_config_warned(const char *warning, const char *version, size_t n, const char *const *keys,
                                 const char *const *values)
{
    char w[512];
    for (size_t i = 0; version && i < n; i++)
        if (!strcmp(entry_warning(version, keys[i], values[i], w, sizeof w), warning)) return 1;
    return 0;
}

int oq_cli_check_lib(const char *opt, const char *path)
{
    oq_err e = {0};
    if (!path || !strchr(path, '/') || oq_check_regular_file(path, NULL, &e) == OQ_OK) return 0;
    oq_cli_error("%s %s", opt, e.msg);
    return -1;
}

int oq_cli_check_ep_libs(const struct oq_cli_runtime *cr)
{
    for (size_t i = 0; i < cr->n_ep_libs; i++)
        if (oq_cli_check_lib("--ep-lib", cr->ep_lib_paths[i])) return -1;
    return 0;
}

/* --ep names cpu, cuda or an EP given its library with --ep-lib: any other name (a typo of cuda)
 * ran as a plugin EP whose library is not there, and was skipped instead of refused. */
static int check_ep_name(const struct oq_cli_runtime *cr)
{
    const char *full = cr->ep ? oq_ep_full_name(cr->ep) : "CPUExecutionProvider";
    if (!strcmp(full, "CPUExecutionProvider") || !strcmp(full, "CUDAExecutionProvider")) return 0;
    char known[512] = "cpu, cuda";
    size_t used = strlen(known);
    for (size_t i = 0; i < cr->n_ep_libs; i++) {
        if (!strcmp(cr->ep_lib_names[i], cr->ep)) return 0;
        if (used < sizeof known) used += (size_t)snprintf(known + used, sizeof known - used, ", %s", cr->ep_lib_names[i]);
    }
    oq_cli_error("--ep '%s': not a known execution provider (known: %s); a plugin EP needs its library, "
                 "--ep-lib %s=PATH", cr->ep, known, cr->ep);
    return -1;
}

int oq_cli_runtime_check(const struct oq_cli_runtime *cr)
{
    if (check_ep_name(cr)) return OQ_EXIT_USAGE;
    oq_err err = {0};
    if (oq_ep_options_validate(cr->ep, cr->n_options, (const char *const *)cr->option_keys,
                               (const char *const *)cr->option_values, &err) != OQ_OK) {
        oq_cli_error("%s", err.msg);
        return OQ_EXIT_USAGE;
    }
    return OQ_EXIT_OK;
}

oq_status oq_cli_runtime_register(const struct oq_cli_runtime *cr, oq_runtime *rt, oq_err *err)
{
    for (size_t i = 0; i < cr->n_ep_libs; i++) {
        oq_status st = oq_runtime_register_ep(rt, cr->ep_lib_names[i], cr->ep_lib_paths[i], err);
        if (st) return st;
    }
    return OQ_OK;
}

int oq_cli_runtime_load(const struct oq_cli_runtime *cr, oq_runtime **rt)
{
    *rt = NULL;
    oq_err err = {0};
    oq_runtime *r = NULL;
    if (oq_runtime_load(cr->ort_lib, &r, &err) != OQ_OK ||
        oq_cli_runtime_register(cr, r, &err) != OQ_OK) {
        if (!r) oq_cli_load_failed(cr->ort_lib, &err);
        oq_cli_error("%s", err.msg);
        oq_runtime_free(r);
        return OQ_EXIT_RUNTIME;
    }
    *rt = r;
    return OQ_EXIT_OK;
}

int oq_cli_runtime_open(const struct oq_cli_runtime *cr, oq_runtime **rt)
{
    *rt = NULL;
    int rc = oq_cli_runtime_check(cr);
    return rc ? rc : oq_cli_runtime_load(cr, rt);
}

void oq_cli_runtime_session_opts(const struct oq_cli_runtime *cr, oq_session_opts *so)
{
    so->ep = cr->ep;
    so->ep_lib = NULL; /* a registered --ep-lib of the same name is found by the runtime */
    so->n_ep_options = cr->n_options;
    so->ep_option_keys = (const char *const *)cr->option_keys;
    so->ep_option_values = (const char *const *)cr->option_values;
}

/* The n strings of both parallel arrays, and the arrays. */
static void free_pairs(char **keys, char **vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(keys[i]);
        free(vals[i]);
    }
    free(keys);
    free(vals);
}

void oq_cli_runtime_clear(struct oq_cli_runtime *cr)
{
    free_pairs(cr->ep_lib_names, cr->ep_lib_paths, cr->n_ep_libs);
    free_pairs(cr->option_keys, cr->option_values, cr->n_options);
    free_pairs(cr->session_config_keys, cr->session_config_values, cr->n_session_configs);
    memset(cr, 0, sizeof *cr);
}

/* Where the device files are read: the host's, or (tests only) ORTQUAL_TEST_DEVICE_ROOT's tree. */
static const char *device_root(void)
{
    const char *root = getenv("ORTQUAL_TEST_DEVICE_ROOT");
    return root && *root ? root : "/";
}

static int names_cuda_lib(const struct oq_cli_runtime *cr)
{
    for (size_t i = 0; i < cr->n_ep_libs; i++)
        if (!strcmp(oq_ep_full_name(cr->ep_lib_names[i]), "CUDAExecutionProvider")) return 1;
    return 0;
}

/* A CUDA EP is usable when its library registers and offers a device. Where the device files say
 * there is no NVIDIA GPU, the library beside the core one is not even loaded: a parent that loaded
 * an EP library re-executes its workers instead of forking them (~0.05 s more each). One named
 * with --ep-lib is tried all the same. */
int oq_cli_cuda_on(const struct oq_cli_runtime *cr, oq_runtime *rt)
{
    if (!rt || (!names_cuda_lib(cr) && !oq_cuda_device_possible(device_root()))) return 0;
    oq_err e = {0};
    if (!oq_runtime_registered_ep(rt, "cuda")) {
        char *lib = oq_runtime_default_ep_lib(rt, "cuda");
        if (lib && access(lib, R_OK) == 0) oq_runtime_register_ep(rt, "cuda", lib, &e);
        free(lib);
    }
    oq_ep_device *d = NULL;
    size_t n = 0;
    int found = 0;
    if (oq_runtime_ep_devices(rt, &d, &n, &e) == OQ_OK)
        for (size_t i = 0; i < n; i++) found |= !strcmp(d[i].ep_name, "CUDAExecutionProvider");
    oq_ep_devices_free(d, n);
    return found;
}

int oq_cli_cuda_available(const struct oq_cli_runtime *cr)
{
    if (!names_cuda_lib(cr) && !oq_cuda_device_possible(device_root())) return 0;
    oq_runtime *rt;
    oq_err e = {0};
    if (oq_runtime_load(cr->ort_lib, &rt, &e)) return 0;
    const int found = oq_cli_runtime_register(cr, rt, &e) == OQ_OK && oq_cli_cuda_on(cr, rt);
    oq_runtime_free(rt);
    return found;
}
