/* Loading libonnxruntime with dlopen, API negotiation, the OrtEnv and its log. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/proc.h"
#include "runtime/runtime-impl.h"
#include "status/args-impl.h"

#ifndef ORTQUAL_ORT_BUILD_LIB
#define ORTQUAL_ORT_BUILD_LIB ""
#endif
/* Where make install puts ORT under the prefix the build was configured for: what a program
 * linked with the installed libortqual.a has to go by (it has no libortqual.so to look beside). */
#ifndef ORTQUAL_ORT_INSTALL_LIB
#define ORTQUAL_ORT_INSTALL_LIB ""
#endif

/* ORT keeps one OrtEnv per loaded library and hands the first creator's logger
 * to everyone after, so the log store is process-wide rather than per runtime:
 * a runtime freed before another of the same library can then never leave ORT
 * holding a dangling logger parameter. */
static struct {
    pthread_mutex_t lock;
    char *line[OQ_RT_LOG_KEEP];
    size_t total;
} g_log = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static void ORT_API_CALL log_sink(void *param, OrtLoggingLevel severity, const char *category,
                                  const char *logid, const char *code_location, const char *message)
{
    (void)param;
    (void)category;
    (void)logid;
    (void)code_location;
    static const char sev[] = "VIWEF";
    char *line = NULL;
    int s = (int)severity;
    if (asprintf(&line, "[%c] %s", (s >= 0 && s <= 4) ? sev[s] : '?', message ? message : "") < 0)
        return;
    pthread_mutex_lock(&g_log.lock);
    size_t slot = g_log.total % OQ_RT_LOG_KEEP;
    free(g_log.line[slot]);
    g_log.line[slot] = line;
    g_log.total++;
    pthread_mutex_unlock(&g_log.lock);
}

void oq_runtime_log_reset(void)
{
    pthread_mutex_lock(&g_log.lock);
    for (size_t i = 0; i < OQ_RT_LOG_KEEP; i++) {
        free(g_log.line[i]);
        g_log.line[i] = NULL;
    }
    g_log.total = 0;
    pthread_mutex_unlock(&g_log.lock);
}

size_t oq_runtime_log_count(const oq_runtime *rt)
{
    (void)rt;
    pthread_mutex_lock(&g_log.lock);
    size_t n = g_log.total < OQ_RT_LOG_KEEP ? g_log.total : OQ_RT_LOG_KEEP;
    pthread_mutex_unlock(&g_log.lock);
    return n;
}

const char *oq_runtime_log_line(const oq_runtime *rt, size_t i)
{
    (void)rt;
    const char *line = NULL;
    pthread_mutex_lock(&g_log.lock);
    size_t n = g_log.total < OQ_RT_LOG_KEEP ? g_log.total : OQ_RT_LOG_KEEP;
    if (i < n) line = g_log.line[(g_log.total - n + i) % OQ_RT_LOG_KEEP];
    pthread_mutex_unlock(&g_log.lock);
    return line;
}

oq_status oq_ort_status(const oq_runtime *rt, OrtStatus *st, oq_err *err, const char *what)
{
    if (!st) return OQ_OK;
    OQ_NEED(err, rt); /* st cannot be read nor released without its API: it leaks */
    if (!what) what = "ONNX Runtime";
    const char *msg = rt->api->GetErrorMessage(st);
    /* ORT messages sometimes span lines; errors here are one line. */
    char flat[OQ_ERR_MSG_MAX];
    snprintf(flat, sizeof flat, "%s", msg ? msg : "(no message)");
    for (char *p = flat; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    /* NOT_IMPLEMENTED is ORT saying "not on this provider", e.g. no kernel for the
     * op and type: callers report it as unsupported rather than as a failure. */
    oq_status code = rt->api->GetErrorCode(st) == ORT_NOT_IMPLEMENTED ? OQ_ERR_UNSUPPORTED : OQ_ERR_RUNTIME;
    oq_status s = oq_err_set(err, code, "%s: %s", what, flat);
    rt->api->ReleaseStatus(st);
    return s;
}

/* ---- search list ---------------------------------------------------------- */

typedef struct attempts {
    char text[OQ_ERR_MSG_MAX - 128];
    size_t len;
} attempts;

static void attempts_add(attempts *a, const char *path, const char *why)
{
    if (a->len >= sizeof a->text - 1) return;
    int k = snprintf(a->text + a->len, sizeof a->text - a->len, "%s%s (%s)", a->len ? "; " : "",
                     path, why);
    if (k > 0) a->len += (size_t)k;
    if (a->len >= sizeof a->text) a->len = sizeof a->text - 1;
}

/* Shorten dlerror()'s text to its reason: it repeats the path first. */
static const char *dl_reason(const char *path, const char *msg)
{
    if (!msg) return "cannot load";
    size_t n = strlen(path);
    if (!strncmp(msg, path, n) && msg[n] == ':') msg += n + 1;
    while (*msg == ' ') msg++;
    return msg;
}

typedef const OrtApiBase *(*get_api_base_fn)(void);

/* dlopen one candidate. Returns the handle with OrtGetApiBase, or NULL with
 * the reason recorded in `a`. */
static void *try_open(const char *path, get_api_base_fn *fn, attempts *a)
{
    int bare = !strchr(path, '/');
    if (!bare && access(path, F_OK) != 0) {
        attempts_add(a, path, "no such file");
        return NULL;
    }
    /* A bare name ("libonnxruntime.so.1") is the dynamic loader's to search for, never a file
     * of the current folder: the loader never looks there, and a library planted in a shared
     * project folder ran as whoever started ortqual in it. The file of a folder of
     * LD_LIBRARY_PATH it would take is opened by that path, checked first. */
    char found[PATH_MAX], why[512];
    const char *open_as = bare && oq_lib_search(path, found, sizeof found) ? found : path;
    if (strchr(open_as, '/') && oq_elf_unloadable(open_as, why, sizeof why)) {
        attempts_add(a, path, why);
        return NULL;
    }
    void *dl = dlopen(open_as, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *msg = dlerror();
        if (bare && open_as == path) /* the loader's own search: it found nothing, or failed on its find */
            oq_lib_unfound(path, msg, why, sizeof why);
        else
            snprintf(why, sizeof why, "%s", dl_reason(open_as, msg));
        attempts_add(a, path, why);
        return NULL;
    }
    *fn = (get_api_base_fn)(uintptr_t)dlsym(dl, "OrtGetApiBase");
    if (!*fn) {
        dlclose(dl);
        attempts_add(a, path, "not an ONNX Runtime library: no OrtGetApiBase");
        return NULL;
    }
    return dl;
}

/* Append DIR/REL to out[*k] (tidied by realpath when the file exists). */
static void add_candidate(char out[][PATH_MAX], size_t *k, const char *dir, const char *rel)
{
    char joined[PATH_MAX];
    int len = snprintf(joined, sizeof joined, "%s/%s", dir, rel);
    if (len < 0 || (size_t)len >= sizeof joined) return;
    if (!realpath(joined, out[*k])) memcpy(out[*k], joined, (size_t)len + 1);
    (*k)++;
}

/* Set by ortqual's own programs (ownlayout.c): only they look for ORT in the project's layout
 * around their executable. For any other program a folder near it may be anyone's: /tmp/a/b/app
 * would load a planted /tmp/third_party/onnxruntime/lib/libonnxruntime.so. */
static int g_own_layout;

void oq_runtime_own_layout(void)
{
    g_own_layout = 1;
}

/* The file that holds this code as the dynamic loader names it: libortqual.so's path, or ""
 * when libortqual.a was linked into the executable (the main program's link map has no name). */
static const char *own_file(void)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1((void *)(uintptr_t)oq_runtime_load, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return NULL;
    return map->l_name;
}

/* The directory of `file` (resolved), or 0. */
static int dir_of(const char *file, char *dir, size_t n)
{
    char buf[PATH_MAX];
    if (!file || !*file || !realpath(file, buf)) return 0;
    char *slash = strrchr(buf, '/');
    if (!slash) return 0;
    *slash = '\0';
    snprintf(dir, n, "%s", buf);
    return 1;
}

/* Candidate paths beside libortqual.so and, for ortqual's own programs, the executable;
 * returns how many were written. */
static size_t local_candidates(char out[][PATH_MAX], size_t max)
{
    static const char *const rel[] = {
        "../third_party/onnxruntime/lib/libonnxruntime.so",
        "../lib/ortqual/libonnxruntime.so",
        "../lib64/ortqual/libonnxruntime.so",
        "../lib/x86_64-linux-gnu/ortqual/libonnxruntime.so",
        "../../third_party/onnxruntime/lib/libonnxruntime.so",
    };
    size_t k = 0;
    char dir[PATH_MAX];
    /* make install puts ORT in <libdir>/ortqual, beside an installed libortqual.so */
    if (dir_of(own_file(), dir, sizeof dir))
        add_candidate(out, &k, dir, "ortqual/libonnxruntime.so");
    if (!g_own_layout || !dir_of("/proc/self/exe", dir, sizeof dir)) return k;
    for (size_t i = 0; i < sizeof rel / sizeof rel[0] && k < max; i++)
        add_candidate(out, &k, dir, rel[i]);
    return k;
}

static void *search_open(const char *path, get_api_base_fn *fn, attempts *a)
{
    if (path) return try_open(path, fn, a);
    const char *env = getenv("ORTQUAL_ORT_LIB");
    if (env && *env) {
        void *dl = try_open(env, fn, a);
        if (!dl) attempts_add(a, "nothing else", "ORTQUAL_ORT_LIB is set");
        return dl;
    }
    char cand[9][PATH_MAX];
    size_t n = local_candidates(cand, 7);
    if (ORTQUAL_ORT_INSTALL_LIB[0]) snprintf(cand[n++], PATH_MAX, "%s", ORTQUAL_ORT_INSTALL_LIB);
    if (ORTQUAL_ORT_BUILD_LIB[0]) snprintf(cand[n++], PATH_MAX, "%s", ORTQUAL_ORT_BUILD_LIB);
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++) dup |= !strcmp(cand[i], cand[j]);
        if (dup) continue;
        void *dl = try_open(cand[i], fn, a);
        if (dl) return dl;
    }
    return NULL;
}

/* libortqual.a cannot learn where it was installed: a program linked with it searched only the
 * prefix the build was configured for and ORT_ROOT, so its failure says how to point elsewhere. */
static const char *static_hint(const char *path)
{
    const char *env = getenv("ORTQUAL_ORT_LIB");
    const char *file = own_file();
    if (path || (env && *env) || g_own_layout || !file || *file) return "";
    return "; a statically linked libortqual looks only under the prefix it was configured for: "
           "set ORTQUAL_ORT_LIB or pass a path";
}

/* ---- API negotiation -------------------------------------------------------- */

/* Asking GetApi for a version the library lacks makes ORT print to stderr, so
 * start from the minor number of its version string ("1.29.0" -> 29). */
static const OrtApi *negotiate(const OrtApiBase *base, int *version)
{
    int start = ORT_API_VERSION;
    const char *v = base->GetVersionString ? base->GetVersionString() : NULL;
    int major = 0, minor = 0;
    if (v && sscanf(v, "%d.%d", &major, &minor) == 2 && major == 1 && minor < start) start = minor;
    for (int k = start; k >= OQ_ORT_API_MIN; k--) {
        const OrtApi *api = base->GetApi((uint32_t)k);
        if (api) {
            *version = k;
            return api;
        }
    }
    return NULL;
}

/* ORT 1.29+ starts its 1DS telemetry client, a thread, with the first environment unless
 * ORT_DISABLE_TELEMETRY says not to. A process of one thread must stay one to fork validate's
 * workers, so there the variable is set to 1 for this call where the caller left it unset, and
 * removed after (setenv is safe only where no other thread reads the environment). */
static OrtStatus *create_env(oq_runtime *rt)
{
    int quiet = !getenv("ORT_DISABLE_TELEMETRY") && oq_proc_single_threaded() &&
                !setenv("ORT_DISABLE_TELEMETRY", "1", 0);
    OrtStatus *st = rt->api->CreateEnvWithCustomLogger(log_sink, NULL, ORT_LOGGING_LEVEL_WARNING, "ortqual", &rt->env);
    if (quiet) unsetenv("ORT_DISABLE_TELEMETRY");
    return st;
}

static oq_status rt_init(oq_runtime *rt, get_api_base_fn fn, oq_err *err)
{
    const OrtApiBase *base = fn();
    if (!base || !base->GetApi)
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: OrtGetApiBase returned nothing usable",
                          rt->lib_path);
    const char *ver = base->GetVersionString ? base->GetVersionString() : "unknown";
    rt->version = strdup(ver ? ver : "unknown");
    rt->api = negotiate(base, &rt->api_version);
    if (!rt->api)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "%s: ONNX Runtime %s offers no C API version between %d and %d",
                          rt->lib_path, rt->version, OQ_ORT_API_MIN, ORT_API_VERSION);
    rt->build_info = strdup(rt->api->GetBuildInfoString() ? rt->api->GetBuildInfoString() : "");
    if (!rt->version || !rt->build_info) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return oq_ort_status(rt, create_env(rt), err, "creating the ONNX Runtime environment");
}

/* The library as the kernel has it mapped (libident.c), found by the address of its code:
 * the file that ran, not the one a symlink or bare name points to since. */
static int mapped_ident(get_api_base_fn fn, const char *fallback)
{
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)fn, &info) || !info.dli_fbase) return -1;
    return oq_lib_ident_find((uintptr_t)info.dli_fbase, info.dli_fname ? info.dli_fname : fallback);
}

oq_status oq_runtime_load(const char *path, oq_runtime **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = NULL;
    if (path && !*path) /* dlopen("") is the main program: never the library meant */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: path is empty (NULL searches the usual places)", __func__);
    attempts a = {.len = 0};
    get_api_base_fn fn = NULL;
    void *dl = search_open(path, &fn, &a);
    if (!dl)
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "cannot load ONNX Runtime; tried: %s%s",
                          a.len ? a.text : "(no candidate path)", static_hint(path));
    oq_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) {
        dlclose(dl);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    rt->dl = dl;
    rt->ident = mapped_ident(fn, path ? path : "libonnxruntime.so");
    const char *named = oq_lib_ident_path(rt->ident); /* none: more libraries than records, named as given */
    rt->lib_path = strdup(named ? named : path ? path : "libonnxruntime.so");
    if (!rt->lib_path) {
        oq_runtime_free(rt);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    oq_status s = rt_init(rt, fn, err);
    if (s != OQ_OK) {
        oq_runtime_free(rt);
        return s;
    }
    *out = rt;
    return OQ_OK;
}

void oq_runtime_free(oq_runtime *rt)
{
    if (!rt) return;
    if (rt->env) rt->api->ReleaseEnv(rt->env);
    for (size_t i = 0; i < rt->n_ep_libs; i++) {
        free(rt->ep_libs[i].name);
        free(rt->ep_libs[i].path);
    }
    free(rt->lib_path);
    free(rt->version);
    free(rt->build_info);
    /* The library stays mapped: ORT's static destructors and worker threads
     * are not safe to unload under a process that may load it again. */
    free(rt);
}

const char *oq_runtime_version(const oq_runtime *rt) { return rt ? rt->version : NULL; }
const char *oq_runtime_lib_path(const oq_runtime *rt) { return rt ? rt->lib_path : NULL; }
int oq_runtime_lib_sha256(const oq_runtime *rt, char hex[65], char *why, size_t n)
{
    return oq_lib_ident_sha256(rt ? rt->ident : -1, hex, why, n);
}
int oq_runtime_api_version(const oq_runtime *rt) { return rt ? rt->api_version : 0; }
const char *oq_runtime_build_info(const oq_runtime *rt) { return rt ? rt->build_info : ""; }
const struct OrtApi *oq_runtime_api(const oq_runtime *rt) { return rt ? rt->api : NULL; }
struct OrtEnv *oq_runtime_ort_env(const oq_runtime *rt) { return rt ? rt->env : NULL; }

void oq_strv_free(char **v, size_t n)
{
    if (!v) return;
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

void oq_kvs_free(oq_kv *kvs, size_t n)
{
    if (!kvs) return;
    for (size_t i = 0; i < n; i++) {
        free(kvs[i].key);
        free(kvs[i].value);
    }
    free(kvs);
}

oq_status oq_runtime_providers(oq_runtime *rt, char ***names, size_t *n, oq_err *err)
{
    OQ_NEED(err, rt);
    OQ_NEED(err, names);
    OQ_NEED(err, n);
    *names = NULL;
    *n = 0;
    char **list = NULL;
    int len = 0;
    oq_status s = oq_ort_status(rt, rt->api->GetAvailableProviders(&list, &len), err,
                                "GetAvailableProviders");
    if (s != OQ_OK) return s;
    char **copy = calloc(len > 0 ? (size_t)len : 1, sizeof *copy);
    for (int i = 0; copy && i < len; i++) copy[i] = strdup(list[i]);
    OrtStatus *rs = rt->api->ReleaseAvailableProviders(list, len);
    if (rs) rt->api->ReleaseStatus(rs);
    for (int i = 0; copy && i < len; i++)
        if (!copy[i]) {
            oq_strv_free(copy, (size_t)len);
            copy = NULL;
        }
    if (!copy) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    *names = copy;
    *n = (size_t)len;
    return OQ_OK;
}
