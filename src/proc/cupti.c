/* GPU kernel time through CUPTI's activity API, dlopen'ed (no link to the CUDA toolkit):
 * what torch.profiler reads, for ORT builds whose profile has no GPU kernel events. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ortqual/proc.h"
#include "status/args-impl.h"

/* The part of CUPTI's ABI used here (cupti_activity.h): the two kernel kinds, the forced
 * flush, and the kernel record's start and end (ns) and name (a C string CUPTI owns), at
 * the same offsets in every CUpti_ActivityKernel4..10 (offsetof against CUPTI 13.0.1's
 * cupti_activity.h: start 16, end 24, name 104; CUDA 13 delivers record 10). A record's kind
 * is its first 32 bits. */
enum { KIND_KERNEL = 3, KIND_CONCURRENT_KERNEL = 10, FLUSH_FORCED = 1 };
enum { REC_START = 16, REC_END = 24, REC_NAME = 104 };
#define BUFFER_BYTES (1u << 20) /* ~5000 kernel records */
#define RECORD_ALIGN 8

typedef void (*request_fn)(uint8_t **buf, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid);
typedef int (*register_fn)(request_fn, complete_fn);
typedef int (*kind_fn)(int kind);
typedef int (*flush_fn)(uint32_t flag);
typedef int (*next_fn)(uint8_t *buf, size_t valid, void **record);
typedef int (*dropped_fn)(void *ctx, uint32_t stream, size_t *dropped);
typedef int (*result_fn)(int result, const char **text);

struct oq_cupti {
    void *dl;
    char lib[PATH_MAX];
    register_fn reg;
    kind_fn enable, disable;
    flush_fn flush;
    next_fn next;
    dropped_fn dropped;
    result_fn result;
    int enabled;
    /* filled by the completion callback under `lock` */
    pthread_mutex_t lock;
    double kernel_ns;
    size_t kernels, unfinished, lost;
    size_t n_names;               /* distinct kernel names since the last take */
    const char *name_ptrs[OQ_CUPTI_MAX_NAMES];
    char names[OQ_CUPTI_MAX_NAMES][OQ_CUPTI_NAME_MAX];
    size_t n_taken;               /* those of the last take's interval */
    char taken[OQ_CUPTI_MAX_NAMES][OQ_CUPTI_NAME_MAX];
};

/* CUPTI's buffer callbacks carry no user pointer, and CUPTI takes one set of them per
 * process: the one collector is reached through this. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static oq_cupti *g_active;

/* Buffers handed back by the completion callback, for the next request: CUPTI asks for one
 * inside a kernel launch after every flush, and a fresh 1 MiB (mmap, first-touch page faults)
 * there cost ~2 ms of host time per profiled Run on the H200 host. */
#define POOL_MAX 4
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_pool[POOL_MAX];
static int g_pooled;

static void on_request(uint8_t **buf, size_t *size, size_t *max_records)
{
    void *p = NULL;
    pthread_mutex_lock(&g_pool_lock);
    if (g_pooled) p = g_pool[--g_pooled];
    pthread_mutex_unlock(&g_pool_lock);
    if (!p && !posix_memalign(&p, RECORD_ALIGN, BUFFER_BYTES)) memset(p, 0, BUFFER_BYTES);
    *buf = p;
    *size = p ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static void give_back(void *buf)
{
    pthread_mutex_lock(&g_pool_lock);
    if (g_pooled < POOL_MAX) g_pool[g_pooled++] = buf, buf = NULL;
    pthread_mutex_unlock(&g_pool_lock);
    free(buf);
}

static uint64_t u64_at(const uint8_t *rec, size_t off)
{
    uint64_t v;
    memcpy(&v, rec + off, sizeof v);
    return v;
}

typedef char *(*demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

/* libstdc++'s demangler where the process has libstdc++ loaded (ORT brings it, in a
 * namespace of its own: dlopen'ed RTLD_LOCAL, so RTLD_DEFAULT does not see it). */
static demangle_fn find_demangler(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    return h ? (demangle_fn)dlsym(h, "__cxa_demangle") : NULL;
}

/* The kernel's name as nvcc mangled it, demangled where possible, cut to
 * OQ_CUPTI_NAME_MAX - 1 bytes. */
static void copy_name(char *dst, const char *name)
{
    static demangle_fn demangle;
    static int looked;
    if (!looked) demangle = find_demangler(), looked = 1;
    int status = -1;
    char *plain = demangle && !strncmp(name, "_Z", 2) ? demangle(name, NULL, NULL, &status) : NULL;
    snprintf(dst, OQ_CUPTI_NAME_MAX, "%s", plain && !status ? plain : name);
    free(plain);
}

/* The C string at `p` (CUPTI's memory) into buf, or "?" where it cannot be read: read
 * through process_vm_readv, which answers EFAULT for an address that is not mapped where
 * a plain read would crash the process, so that a record layout other than the one
 * above (a future CUPTI) costs the names, not the run. */
static const char *safe_name(const char *p, char *buf, size_t size)
{
    struct iovec local = {buf, size - 1}, remote = {(void *)p, size - 1};
    ssize_t n = p ? process_vm_readv(getpid(), &local, 1, &remote, 1, 0) : -1;
    if (n <= 0) { /* the first bytes may sit before an unmapped page: one at a time */
        for (n = 0; p && (size_t)n < size - 1; n++) {
            local.iov_base = buf + n, local.iov_len = 1;
            remote.iov_base = (void *)(p + n), remote.iov_len = 1;
            if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1 || !buf[n]) break;
        }
    }
    buf[n > 0 ? n : 0] = 0;
    for (ssize_t i = 0; i < n && buf[i]; i++)
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e) return "?";
    return n > 0 && buf[0] ? buf : "?";
}

/* CUPTI gives every record of one kernel the same name pointer: a pointer seen in this
 * interval is that name again, and only a new one is read and demangled. */
static void add_name(oq_cupti *c, const char *name)
{
    if (c->n_names == OQ_CUPTI_MAX_NAMES) return;
    for (size_t i = 0; i < c->n_names; i++)
        if (c->name_ptrs[i] == name) return;
    char n[OQ_CUPTI_NAME_MAX], raw[OQ_CUPTI_NAME_MAX];
    copy_name(n, safe_name(name, raw, sizeof raw));
    for (size_t i = 0; i < c->n_names; i++)
        if (!strcmp(c->names[i], n)) return;
    c->name_ptrs[c->n_names] = name;
    memcpy(c->names[c->n_names++], n, sizeof n);
}

static void add_records(oq_cupti *c, uint8_t *buf, size_t valid)
{
    void *rec = NULL;
    while (c->next(buf, valid, &rec) == 0) {
        int32_t kind;
        memcpy(&kind, rec, sizeof kind);
        if (kind != KIND_KERNEL && kind != KIND_CONCURRENT_KERNEL) continue;
        uint64_t start = u64_at(rec, REC_START), end = u64_at(rec, REC_END);
        if (!start || end < start) { /* CUPTI_TIMESTAMP_UNKNOWN (0): the kernel had not ended */
            c->unfinished++;
            continue;
        }
        c->kernel_ns += (double)(end - start);
        c->kernels++;
        const char *name;
        memcpy(&name, (const uint8_t *)rec + REC_NAME, sizeof name);
        add_name(c, name);
    }
}

static void on_complete(void *ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    (void)size;
    pthread_mutex_lock(&g_lock);
    oq_cupti *c = g_active;
    if (c) {
        pthread_mutex_lock(&c->lock);
        add_records(c, buf, valid);
        size_t lost = 0;
        if (c->dropped && c->dropped(ctx, stream, &lost) == 0) c->lost += lost;
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&g_lock);
    give_back(buf);
}

static oq_status cupti_fail(const oq_cupti *c, int rc, const char *call, oq_err *err)
{
    const char *text = NULL;
    if (c->result) c->result(rc, &text);
    return oq_err_set(err, OQ_ERR_RUNTIME, "%s: %s failed: %s (%d)", c->lib, call, text ? text : "CUPTI error", rc);
}

/* The library: `lib` as given, else libcupti.so or a versioned name on the loader's path. */
static oq_status load(oq_cupti *c, const char *lib, oq_err *err)
{
    static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
    for (size_t i = 0; !c->dl && i < (lib ? 1 : sizeof names / sizeof *names); i++) {
        snprintf(c->lib, sizeof c->lib, "%s", lib ? lib : names[i]);
        c->dl = dlopen(c->lib, RTLD_NOW | RTLD_LOCAL);
    }
    if (!c->dl)
        return oq_err_set(err, OQ_ERR_NOT_FOUND,
                          lib ? "%s: cannot load CUPTI: %s"
                              : "CUPTI not found (%s: %s); it comes with the CUDA toolkit "
                                "(targets/x86_64-linux/lib): put its folder on LD_LIBRARY_PATH or name the library",
                          lib ? lib : "libcupti.so", dlerror());
    c->reg = (register_fn)dlsym(c->dl, "cuptiActivityRegisterCallbacks");
    c->enable = (kind_fn)dlsym(c->dl, "cuptiActivityEnable");
    c->disable = (kind_fn)dlsym(c->dl, "cuptiActivityDisable");
    c->flush = (flush_fn)dlsym(c->dl, "cuptiActivityFlushAll");
    c->next = (next_fn)dlsym(c->dl, "cuptiActivityGetNextRecord");
    c->dropped = (dropped_fn)dlsym(c->dl, "cuptiActivityGetNumDroppedRecords");
    c->result = (result_fn)dlsym(c->dl, "cuptiGetResultString");
    if (!c->reg || !c->enable || !c->disable || !c->flush || !c->next)
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s is not CUPTI: it lacks the activity API (cuptiActivity*)",
                          c->lib);
    return OQ_OK;
}

typedef int (*version_fn)(uint32_t *version);

oq_status oq_cupti_probe(const char *lib, char *path, size_t path_len, uint32_t *version, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, version);
    *version = 0;
    oq_cupti *c = calloc(1, sizeof *c);
    if (!c) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = load(c, lib, err);
    struct link_map *lm = NULL;
    if (!st && dlinfo(c->dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0])
        snprintf(path, path_len, "%s", lm->l_name);
    else
        snprintf(path, path_len, "%s", c->lib);
    version_fn get = st ? NULL : (version_fn)dlsym(c->dl, "cuptiGetVersion");
    if (get && get(version) != 0) *version = 0;
    /* The handle stays open: CUPTI is not unloaded from a process that may have CUDA (see oq_cupti_free). */
    free(c);
    return st;
}

oq_status oq_cupti_create(const char *lib, oq_cupti **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = NULL;
    oq_cupti *c = calloc(1, sizeof *c);
    if (!c) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&c->lock, NULL);
    oq_status st = load(c, lib, err);
    pthread_mutex_lock(&g_lock);
    if (!st && g_active) st = oq_err_set(err, OQ_ERR_INVALID_ARG, "one CUPTI collector at a time in a process");
    int rc = st ? 0 : c->reg(on_request, on_complete);
    if (rc) st = cupti_fail(c, rc, "cuptiActivityRegisterCallbacks", err);
    if (!st) g_active = c;
    pthread_mutex_unlock(&g_lock);
    if (st) {
        /* CUPTI, once loaded into a process with CUDA, is not unloaded (see oq_cupti_free) */
        pthread_mutex_destroy(&c->lock);
        free(c);
        return st;
    }
    *out = c;
    return OQ_OK;
}

oq_status oq_cupti_enable(oq_cupti *c, int on, oq_err *err)
{
    OQ_NEED(err, c);
    if (!on == !c->enabled) return OQ_OK;
    int rc = on ? c->enable(KIND_CONCURRENT_KERNEL) : c->disable(KIND_CONCURRENT_KERNEL);
    if (rc) return cupti_fail(c, rc, on ? "cuptiActivityEnable(CONCURRENT_KERNEL)" : "cuptiActivityDisable", err);
    c->enabled = on;
    if (!on && (rc = c->flush(FLUSH_FORCED))) return cupti_fail(c, rc, "cuptiActivityFlushAll", err);
    return OQ_OK;
}

oq_status oq_cupti_take(oq_cupti *c, double *kernel_ms, size_t *kernels, oq_err *err)
{
    OQ_NEED(err, c);
    OQ_NEED(err, kernel_ms);
    OQ_NEED(err, kernels);
    int rc = c->flush(FLUSH_FORCED);
    if (rc) return cupti_fail(c, rc, "cuptiActivityFlushAll", err);
    pthread_mutex_lock(&c->lock);
    size_t unfinished = c->unfinished, lost = c->lost;
    *kernel_ms = c->kernel_ns * 1e-6;
    *kernels = c->kernels;
    c->kernel_ns = 0;
    c->kernels = c->unfinished = c->lost = 0;
    memcpy(c->taken, c->names, c->n_names * sizeof *c->names);
    c->n_taken = c->n_names;
    c->n_names = 0;
    pthread_mutex_unlock(&c->lock);
    if (lost)
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: CUPTI dropped %zu activity records (buffers full)", c->lib, lost);
    if (unfinished)
        return oq_err_set(err, OQ_ERR_RUNTIME,
                          "%s: %zu kernel records without an end time (the GPU work was not synchronized)",
                          c->lib, unfinished);
    return OQ_OK;
}

size_t oq_cupti_kernel_names(const oq_cupti *c, const char **names, size_t max)
{
    size_t n = c ? c->n_taken : 0;
    for (size_t i = 0; names && i < n && i < max; i++) names[i] = c->taken[i];
    return n;
}

void oq_cupti_free(oq_cupti *c)
{
    if (!c) return;
    oq_err e = {0};
    oq_cupti_enable(c, 0, &e); /* flushes what was collected */
    pthread_mutex_lock(&g_lock);
    if (g_active == c) g_active = NULL;
    pthread_mutex_unlock(&g_lock);
    /* Not dlclose'd: CUPTI hooks the CUDA driver of a process for good; unloading it
     * under a live context is not something NVIDIA supports. */
    pthread_mutex_lock(&g_pool_lock);
    while (g_pooled) free(g_pool[--g_pooled]);
    pthread_mutex_unlock(&g_pool_lock);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
