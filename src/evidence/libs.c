/* The shared objects mapped into this process, grouped by what they are. */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "evidence/evidence-impl.h"
#include "status/args-impl.h"

const char *oq_lib_group_name(oq_lib_group g)
{
    switch (g) {
    case OQ_LIB_ORT: return "ort";
    case OQ_LIB_CUDA_RUNTIME: return "cuda-runtime";
    case OQ_LIB_CUBLAS: return "cublas";
    case OQ_LIB_CUDNN: return "cudnn";
    case OQ_LIB_DRIVER: return "driver";
    case OQ_LIB_OTHER: return "other";
    }
    return "unknown";
}

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

oq_lib_group oq_lib_classify(const char *path)
{
    if (!path) return OQ_LIB_OTHER;
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    static const char *const cuda_rt[] = {"libcudart", "libnvrtc", "libnvJitLink", "libcufft",
                                          "libcurand", "libcusparse", "libcusolver", "libnvToolsExt",
                                          "libcupti", "libnccl", "libnvrtc-builtins", "libcufile"};
    if (starts(b, "libonnxruntime")) return OQ_LIB_ORT;
    if (starts(b, "libcudnn")) return OQ_LIB_CUDNN;
    if (starts(b, "libcublas")) return OQ_LIB_CUBLAS;
    /* "libcuda.so" exactly: libcudart and libcudnn share the "libcuda" prefix. */
    if (starts(b, "libcuda.so") || starts(b, "libnvidia-")) return OQ_LIB_DRIVER;
    for (size_t i = 0; i < sizeof cuda_rt / sizeof cuda_rt[0]; i++)
        if (starts(b, cuda_rt[i])) return OQ_LIB_CUDA_RUNTIME;
    return OQ_LIB_OTHER;
}

typedef struct lib_list {
    oq_loaded_lib *v;
    size_t n;
    int *core; /* beside v: whether the object defines OrtGetApiBase */
    size_t n_core;
    int oom;
} lib_list;

/* The file mapped at `addr`, as the kernel names it (/proc/self/maps: absolute, links
 * resolved): 1 with *file that path, or NULL for a mapping without a file (the vDSO's
 * "[vdso]"); 0 when no mapping was found or /proc cannot be read; -1 out of memory. */
static int file_at(uintptr_t addr, char **file)
{
    *file = NULL;
    FILE *fp = fopen("/proc/self/maps", "re");
    if (!fp) return 0;
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (!found && getline(&line, &cap, fp) > 0) {
        unsigned long lo, hi;
        int at = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || !at || addr < lo || addr >= hi) continue;
        line[strcspn(line, "\n")] = '\0';
        found = line[at] != '/' ? 1 : (*file = strdup(line + at)) ? 1 : -1;
    }
    free(line);
    fclose(fp);
    return found;
}

/* The object's file as an absolute path into *path (NULL: it has no file, the vDSO); -1 out of
 * memory. glibc keeps the name dlopen was given, and a relative one ("libs/libonnxruntime.so",
 * "./libonnxruntime.so") is relative to the working directory of that moment, which may have
 * changed since: the file is the one mapped at the object's first segment (realpath from here
 * only where /proc cannot tell). */
static int absolute_name(const struct dl_phdr_info *info, char **path)
{
    *path = NULL;
    if (info->dlpi_name[0] == '/') return (*path = strdup(info->dlpi_name)) ? 0 : -1;
    int found = 0;
    for (size_t i = 0; i < info->dlpi_phnum && !found; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) found = file_at(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr, path);
    if (!found) *path = realpath(info->dlpi_name, NULL);
    return found < 0 ? -1 : 0;
}

/* The address a dynamic entry points at: glibc relocates most objects' entries in place, the
 * vDSO's (read-only) keep their link-time offsets. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++) h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

typedef struct dynsyms {
    const ElfW(Sym) *sym;
    const char *str;
    const uint32_t *gnu, *sysv; /* DT_GNU_HASH, DT_HASH tables (either may be absent) */
} dynsyms;

static int name_is(const dynsyms *d, uint32_t i, const char *name)
{
    return !strcmp(d->str + d->sym[i].st_name, name);
}

/* The symbol `name` in the object's own dynamic symbol table, or NULL. */
static const ElfW(Sym) *dyn_lookup(const dynsyms *d, const char *name)
{
    if (d->gnu && d->gnu[0]) {
        uint32_t nb = d->gnu[0], off = d->gnu[1], bloom_words = d->gnu[2], h = gnu_hash(name);
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(d->gnu + 4) + bloom_words);
        const uint32_t *chain = buckets + nb;
        for (uint32_t i = buckets[h % nb]; i >= off; i++) {
            uint32_t h2 = chain[i - off];
            if ((h | 1) == (h2 | 1) && name_is(d, i, name)) return d->sym + i;
            if (h2 & 1) break;
        }
        return NULL;
    }
    if (d->sysv && d->sysv[0]) {
        const uint32_t *bucket = d->sysv + 2, *chain = bucket + d->sysv[0];
        for (uint32_t i = bucket[sysv_hash(name) % d->sysv[0]]; i; i = chain[i])
            if (name_is(d, i, name)) return d->sym + i;
    }
    return NULL;
}

/* Whether the object defines OrtGetApiBase itself: an ONNX Runtime core library, whatever its
 * file is called (a renamed copy, a build of one's own). Read from the object's own dynamic
 * symbol table in memory, with no call into the loader: dlopen(RTLD_NOLOAD) on every object
 * left LeakSanitizer's exit-time scan reading a stale dynamic TLS record (a fatal error). */
static int defines_ort_api(const struct dl_phdr_info *info)
{
    const ElfW(Dyn) *dyn = NULL;
    for (size_t i = 0; i < info->dlpi_phnum && !dyn; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    dynsyms d = {0};
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t a = dyn_addr(info, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_SYMTAB) d.sym = (const ElfW(Sym) *)a;
        else if (dyn->d_tag == DT_STRTAB) d.str = (const char *)a;
        else if (dyn->d_tag == DT_GNU_HASH) d.gnu = (const uint32_t *)a;
        else if (dyn->d_tag == DT_HASH) d.sysv = (const uint32_t *)a;
    }
    if (!d.sym || !d.str) return 0;
    const ElfW(Sym) *s = dyn_lookup(&d, "OrtGetApiBase");
    return s && s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    lib_list *l = data;
    const char *name = info->dlpi_name;
    /* The main program has an empty name. */
    if (!name || !*name || l->oom) return 0;
    char *path = NULL;
    if (absolute_name(info, &path) < 0) l->oom = 1;
    if (!path) return 0;
    oq_loaded_lib *lib = OQ_PUSH(l->v, l->n);
    int *core = lib ? OQ_PUSH(l->core, l->n_core) : NULL;
    if (!core) {
        if (lib) l->n--;
        free(path);
        l->oom = 1;
        return 0;
    }
    lib->path = path;
    lib->group = (*core = defines_ort_api(info)) ? OQ_LIB_ORT : oq_lib_classify(path);
    return 0;
}

oq_status oq_loaded_libs_cores(oq_loaded_lib **out, size_t *n, int **core, oq_err *err)
{
    lib_list l = {0};
    dl_iterate_phdr(on_object, &l);
    if (l.oom) {
        oq_loaded_libs_free(l.v, l.n);
        free(l.core);
        *out = NULL;
        *n = 0;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    if (core) *core = l.core;
    else free(l.core);
    *out = l.v;
    *n = l.n;
    return OQ_OK;
}

oq_status oq_loaded_libs(oq_loaded_lib **out, size_t *n, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED(err, n);
    return oq_loaded_libs_cores(out, n, NULL, err);
}

void oq_loaded_libs_free(oq_loaded_lib *libs, size_t n)
{
    if (!libs) return;
    for (size_t i = 0; i < n; i++) free(libs[i].path);
    free(libs);
}
