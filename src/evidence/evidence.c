/* Gathering every piece of evidence at once, and its JSON form. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core-impl.h"
#include "evidence/evidence-impl.h"
#include "fileio/fileio-impl.h"
#include "runtime/runtime-impl.h"
#include "ortqual/version.h"
#include "status/args-impl.h"

static oq_status collect_ort(oq_runtime *rt, oq_evidence *ev, oq_err *err)
{
    ev->ort_version = strdup(oq_runtime_version(rt));
    ev->ort_lib_path = strdup(oq_runtime_lib_path(rt));
    ev->ort_build_info = strdup(oq_runtime_build_info(rt));
    ev->ort_api_version = oq_runtime_api_version(rt);
    if (!ev->ort_version || !ev->ort_lib_path || !ev->ort_build_info)
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    /* the bytes that ran, the mapped file's: a rebuilt library at the same path is another build;
     * one replaced since it was loaded is not named (NULL), and the warning says why */
    char sha[65], why[PATH_MAX + 128];
    if (oq_runtime_lib_sha256(rt, sha, why, sizeof why) ? !(ev->ort_lib_sha256 = strdup(sha))
                                                        : oq_strv_push(&ev->warnings, &ev->n_warnings, why) != OQ_OK)
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_runtime_providers(rt, &ev->providers, &ev->n_providers, err);
    if (st) return st;
    /* Old runtimes (API < 22) have no EP devices: not an error of the evidence, but said, so
     * that it does not read as a runtime that was asked and found none. */
    st = oq_runtime_ep_devices(rt, &ev->ep_devices, &ev->n_ep_devices, err);
    if (st == OQ_ERR_UNSUPPORTED && !(ev->ep_devices_unavailable = strdup(err->msg)))
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (st && st != OQ_ERR_UNSUPPORTED) return st;
    size_t n = oq_runtime_log_count(rt);
    for (size_t i = 0; i < n; i++) {
        const char *line = oq_runtime_log_line(rt, i);
        if (oq_strv_push(&ev->ort_log, &ev->n_ort_log, line ? line : ""))
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

static oq_status collect_shadow(const oq_evidence_opts *opts, oq_evidence *ev, oq_err *err)
{
    char **roots = NULL;
    size_t n_roots = 0;
    int depth = 0;
    oq_status st = OQ_OK;
    if (opts && opts->n_search_roots) {
        roots = (char **)opts->search_roots;
        n_roots = opts->n_search_roots;
        depth = 4;
    } else if ((st = oq_shadow_default_roots(&roots, &n_roots, err))) {
        return st;
    }
    const char **loaded = calloc(ev->n_libs ? ev->n_libs : 1, sizeof *loaded);
    if (!loaded) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; loaded && i < ev->n_libs; i++) loaded[i] = ev->libs[i].path;
    if (!st)
        st = oq_shadow_scan((const char *const *)roots, n_roots, depth, loaded, ev->n_libs,
                            &ev->shadow, err);
    free(loaded);
    if (!(opts && opts->n_search_roots)) oq_strv_free(roots, n_roots);
    return st;
}

/* ---- which ONNX Runtime is mapped ---------------------------------------------------- */

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Whether `path` is one of the files LD_PRELOAD names (separated by ':' or blanks, as ld.so
 * reads it). */
static int preloaded(const char *path)
{
    const char *list = getenv("LD_PRELOAD");
    char *copy = list ? strdup(list) : NULL, *save = NULL;
    int found = 0;
    for (char *t = copy ? strtok_r(copy, ": \t", &save) : NULL; t && !found; t = strtok_r(NULL, ": \t", &save))
        found = same_file(t, path);
    free(copy);
    return found;
}

/* The loader's variables that decide which files are mapped: what a run inherited. */
static oq_status collect_loader_env(oq_evidence *ev, oq_err *err)
{
    static const char *const names[] = {"LD_PRELOAD", "LD_LIBRARY_PATH"};
    ev->loader_env = calloc(2, sizeof *ev->loader_env);
    if (!ev->loader_env) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        oq_kv *kv = &ev->loader_env[ev->n_loader_env++];
        if (!(kv->key = strdup(names[i])) || (v && !(kv->value = strdup(v))))
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

/* "2 ONNX Runtime libraries mapped in this process: A (LD_PRELOAD), B (the one loaded); ..." */
static oq_status cores_warning(oq_evidence *ev, oq_err *err)
{
    if (ev->n_ort_cores < 2) return OQ_OK;
    oq_dynbuf b = {0};
    oq_status st = oq_dynbuf_addf(&b, "%zu ONNX Runtime libraries mapped in this process:", ev->n_ort_cores);
    for (size_t i = 0; !st && i < ev->n_ort_cores; i++) {
        int loaded = same_file(ev->ort_cores[i], ev->ort_lib_path), pre = preloaded(ev->ort_cores[i]);
        st = oq_dynbuf_addf(&b, "%s %s%s%s%s%s", i ? "," : "", ev->ort_cores[i], loaded || pre ? " (" : "",
                            loaded ? "the one loaded" : "", loaded && pre ? ", " : "",
                            pre ? "LD_PRELOAD)" : loaded ? ")" : "");
    }
    if (!st) st = oq_dynbuf_add(&b, "; execution-provider libraries and ONNX Runtime's own symbols may bind to either one");
    if (!st) st = oq_strv_push(&ev->warnings, &ev->n_warnings, b.buf);
    oq_dynbuf_clear(&b);
    return st ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory") : OQ_OK;
}

/* The mapped libraries, each ONNX Runtime core among them (the file the runtime loaded
 * grouped "ort" whatever its name), and a warning when there is more than one. */
static oq_status collect_libs(oq_evidence *ev, oq_err *err)
{
    int *core = NULL;
    oq_status st = oq_loaded_libs_cores(&ev->libs, &ev->n_libs, &core, err);
    for (size_t i = 0; !st && i < ev->n_libs; i++) {
        if (same_file(ev->libs[i].path, ev->ort_lib_path)) core[i] = 1;
        if (!core[i]) continue;
        ev->libs[i].group = OQ_LIB_ORT;
        if (oq_strv_push(&ev->ort_cores, &ev->n_ort_cores, ev->libs[i].path))
            st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    free(core);
    return st ? st : cores_warning(ev, err);
}

oq_status oq_evidence_collect(oq_runtime *rt, const oq_evidence_opts *opts, oq_evidence **out,
                              oq_err *err)
{
    OQ_NEED(err, out);
    if (opts) OQ_NEED_N(err, opts->n_search_roots, opts->search_roots);
    *out = NULL;
    oq_evidence *ev = calloc(1, sizeof *ev);
    if (!ev) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    if (rt) st = collect_ort(rt, ev, err);
    if (!st) st = oq_ort_env_capture(&ev->ort_env, &ev->n_ort_env, err);
    if (!st) st = collect_loader_env(ev, err);
    if (!st) st = oq_host_probe(&ev->host, err);
    if (!st) st = oq_gpu_facts_probe(&ev->gpu, err);
    /* After the GPU probe, so libcuda shows among the loaded libraries when present. */
    if (!st) st = collect_libs(ev, err);
    if (!st && !(opts && opts->skip_shadowing)) st = collect_shadow(opts, ev, err);
    if (!st && oq_cwd_check(NULL, &ev->cwd, err) != OQ_OK) {
        /* An unreadable working directory is itself worth reporting, not fatal. */
        st = OQ_OK;
    }
    if (st) {
        oq_evidence_free(ev);
        return st;
    }
    *out = ev;
    return OQ_OK;
}

void oq_evidence_free(oq_evidence *ev)
{
    if (!ev) return;
    free(ev->ort_version);
    free(ev->ort_lib_path);
    free(ev->ort_lib_sha256);
    free(ev->ort_build_info);
    oq_strv_free(ev->providers, ev->n_providers);
    oq_ep_devices_free(ev->ep_devices, ev->n_ep_devices);
    free(ev->ep_devices_unavailable);
    oq_kvs_free(ev->ort_env, ev->n_ort_env);
    oq_strv_free(ev->ort_log, ev->n_ort_log);
    oq_kvs_free(ev->loader_env, ev->n_loader_env);
    oq_host_clear(&ev->host);
    oq_gpu_facts_free(ev->gpu);
    oq_loaded_libs_free(ev->libs, ev->n_libs);
    oq_strv_free(ev->ort_cores, ev->n_ort_cores);
    oq_shadow_report_free(ev->shadow);
    oq_cwd_report_clear(&ev->cwd);
    oq_strv_free(ev->warnings, ev->n_warnings);
    free(ev);
}

/* ---- JSON -------------------------------------------------------------------------- */

/* Every string below comes from outside (paths, the environment, ORT, NVML) and need not be
 * UTF-8: oq_json_text keeps it (U+FFFD for bad bytes), where jansson's "s" fails the document. */
static json_t *text_or_null(const char *s)
{
    return s ? oq_json_text(s) : json_null();
}

static json_t *str_array(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, oq_json_text(v[i]));
    return a;
}

static json_t *kv_object(const oq_kv *kv, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++) {
        char *key = oq_utf8_lossy(kv[i].key);
        if (key) json_object_set_new(o, key, text_or_null(kv[i].value));
        free(key);
    }
    return o;
}

static json_t *ep_devices_json(const oq_evidence *ev)
{
    if (ev->ep_devices_unavailable) return json_null();
    json_t *a = json_array();
    for (size_t i = 0; a && i < ev->n_ep_devices; i++) {
        const oq_ep_device *d = &ev->ep_devices[i];
        json_array_append_new(
            a, json_pack("{s:o, s:o, s:s, s:o, s:I, s:I, s:o, s:o}", "ep_name", oq_json_text(d->ep_name),
                         "ep_vendor", oq_json_text(d->ep_vendor), "hw_type", oq_hw_type_name(d->hw_type),
                         "hw_vendor", oq_json_text(d->hw_vendor), "vendor_id", (json_int_t)d->vendor_id,
                         "device_id", (json_int_t)d->device_id, "hw_metadata",
                         kv_object(d->hw_meta, d->n_hw_meta), "ep_metadata",
                         kv_object(d->ep_meta, d->n_ep_meta)));
    }
    return a;
}

static json_t *ort_json(const oq_evidence *ev)
{
    if (!ev->ort_version) return json_null();
    return json_pack("{s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "version", oq_json_text(ev->ort_version),
                     "api_version", ev->ort_api_version, "lib_path", oq_json_text(ev->ort_lib_path),
                     "library_sha256", text_or_null(ev->ort_lib_sha256), "build_info", oq_json_text(ev->ort_build_info), "providers",
                     str_array(ev->providers, ev->n_providers), "ep_devices", ep_devices_json(ev),
                     "ep_devices_unavailable", text_or_null(ev->ep_devices_unavailable), "log",
                     str_array(ev->ort_log, ev->n_ort_log));
}

static json_t *gpu_json(const oq_gpu_facts *g)
{
    json_t *gpus = json_array();
    for (size_t i = 0; gpus && i < g->n_gpus; i++) {
        const oq_gpu *d = &g->gpus[i];
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
        json_array_append_new(
            gpus, json_pack("{s:i, s:o, s:o, s:I, s:s?, s:i}", "index", d->index, "name", oq_json_text(d->name),
                            "pci_bus_id", oq_json_text(d->pci_bus_id), "memory_total",
                            (json_int_t)d->memory_total, "compute_capability", d->cc_major < 0 ? NULL : cc,
                            "sm_count", d->sm_count));
    }
    return json_pack("{s:o, s:o, s:o, s:i, s:o}", "nvml_status", oq_json_text(g->nvml_status), "cuda_status",
                     oq_json_text(g->cuda_status), "driver_version", oq_json_text(g->driver_version),
                     "cuda_driver_version", g->cuda_driver_version, "gpus", gpus);
}

static json_t *libs_json(const oq_evidence *ev)
{
    json_t *o = json_object();
    for (int g = 0; o && g < OQ_LIB_NGROUPS; g++) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < ev->n_libs; i++)
            if ((int)ev->libs[i].group == g) json_array_append_new(a, oq_json_text(ev->libs[i].path));
        json_object_set_new(o, oq_lib_group_name((oq_lib_group)g), a);
    }
    return o;
}

static json_t *pin_json(const oq_shadow_report *r, size_t override)
{
    char *pre = NULL, *ld = NULL;
    if (oq_shadow_pin(r, override, &pre, &ld, NULL)) return json_null();
    json_t *o = json_pack("{s:o, s:o}", "preload", oq_json_text(pre), "library_path", oq_json_text(ld));
    free(pre);
    free(ld);
    return o;
}

/* {"version", "dir"} of a copy, into `o` (NULL: a new object). */
static json_t *version_dir(json_t *o, const oq_lib_copy *cp)
{
    if (!o) o = json_object();
    json_object_set_new(o, "version", oq_json_text(cp->version));
    json_object_set_new(o, "dir", oq_json_text(cp->dir));
    return o;
}

static json_t *conflicts_json(const oq_shadow_report *r)
{
    json_t *a = json_array();
    for (size_t c = 0; a && c < r->n_conflicts; c++) {
        json_t *versions = json_array(), *alts = json_array();
        json_t *loaded = json_null();
        for (size_t i = 0; i < r->n_copies; i++) {
            const oq_lib_copy *cp = &r->copies[i];
            if (strcmp(cp->product, r->conflicts[c])) continue;
            json_array_append_new(versions, version_dir(NULL, cp));
            if (cp->loaded && json_is_null(loaded)) {
                json_decref(loaded);
                loaded = oq_json_text(cp->version);
            }
            if (i != r->chosen[c]) json_array_append_new(alts, version_dir(pin_json(r, i), cp));
        }
        json_array_append_new(
            a, json_pack("{s:o, s:o, s:o, s:o, s:o}", "product", oq_json_text(r->conflicts[c]), "versions",
                         versions, "loaded_version", loaded, "chosen", version_dir(NULL, &r->copies[r->chosen[c]]),
                         "alternatives", alts));
    }
    return a;
}

static json_t *shadow_json(const oq_shadow_report *r)
{
    json_t *copies = json_array();
    for (size_t i = 0; copies && i < r->n_copies; i++) {
        const oq_lib_copy *c = &r->copies[i];
        json_array_append_new(
            copies, json_pack("{s:o, s:o, s:o, s:b, s:o, s:o}", "product", oq_json_text(c->product), "version",
                              oq_json_text(c->version), "dir", oq_json_text(c->dir), "loaded", c->loaded,
                              "main_file", text_or_null(c->main_file), "files", str_array(c->files, c->n_files)));
    }
    return json_pack("{s:o, s:o, s:o, s:o}", "roots", str_array(r->roots, r->n_roots), "copies",
                     copies, "conflicts", conflicts_json(r), "pin",
                     r->n_conflicts ? pin_json(r, SIZE_MAX) : json_null());
}

json_t *oq_evidence_json(const oq_evidence *ev)
{
    json_t *j = json_pack("{s:o, s:o, s:o, s:{s:o, s:o, s:o, s:i}, s:o, s:o, s:o, s:o, s:{s:o, s:b, s:b, s:o}, s:o}",
                          "ort", ort_json(ev), "ort_env", kv_object(ev->ort_env, ev->n_ort_env), "loader_env",
                          kv_object(ev->loader_env, ev->n_loader_env), "host", "hostname", oq_json_text(ev->host.hostname),
                          "kernel", oq_json_text(ev->host.kernel), "cpu_model", oq_json_text(ev->host.cpu_model), "cpus",
                          ev->host.n_cpus, "gpu", gpu_json(ev->gpu), "libraries", libs_json(ev), "ort_cores",
                          str_array(ev->ort_cores, ev->n_ort_cores), "shadowing",
                          ev->shadow ? shadow_json(ev->shadow) : json_null(), "cwd", "path", text_or_null(ev->cwd.path),
                          "world_writable", ev->cwd.world_writable, "sticky", ev->cwd.sticky, "hazards",
                          str_array(ev->cwd.hazards, ev->cwd.n_hazards), "warnings", str_array(ev->warnings, ev->n_warnings));
    return j;
}

/* A document of its own (design.md: every JSON document opens with "schema"), saying which
 * libortqual gathered it; the evidence embedded in other documents is theirs to describe. */
char *oq_evidence_to_json(const oq_evidence *ev)
{
    json_t *body = ev ? oq_evidence_json(ev) : NULL;
    json_t *j = body ? json_pack("{s:s, s:{s:s, s:i}}", "schema", OQ_EVIDENCE_SCHEMA, "ortqual", "version",
                                 oq_version(), "abi_version", oq_abi_version())
                     : NULL;
    if (j && json_object_update(j, body) != 0) json_decref(j), j = NULL;
    json_decref(body);
    if (!j) return NULL;
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

json_t *oq_evidence_collect_json(oq_runtime *rt, const oq_evidence_opts *opts)
{
    oq_evidence *ev = NULL;
    oq_err e = {0};
    if (oq_evidence_collect(rt, opts, &ev, &e)) return json_pack("{s:s}", "error", e.msg);
    json_t *j = oq_evidence_json(ev);
    oq_evidence_free(ev);
    return j;
}
