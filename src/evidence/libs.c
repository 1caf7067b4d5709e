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
    char **names; /* each object's name as the loader keeps it, beside v */
    size_t n_names;
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
    if (!lib || oq_strv_push(&l->names, &l->n_names, name)) {
        if (lib) l->n--;
        free(path);
        l->oom = 1;
        return 0;
    }
    lib->path = path;
    lib->group = oq_lib_classify(path);
    return 0;
}

/* Whether the object the loader knows as `name` defines OrtGetApiBase itself: an ONNX Runtime
 * core library, whatever its file is called (a renamed copy, a build of one's own). RTLD_NOLOAD
 * finds it by that name and loads nothing; the symbol found may be a dependency's, hence dladdr. */
static int defines_ort_api(const char *name)
{
    void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    Dl_info di;
    void *sym = dlsym(h, "OrtGetApiBase");
    int own = sym && dladdr(sym, &di) && di.dli_fname && !strcmp(di.dli_fname, name);
    dlclose(h);
    return own;
}

oq_status oq_loaded_libs_cores(oq_loaded_lib **out, size_t *n, int **core, oq_err *err)
{
    lib_list l = {0};
    dl_iterate_phdr(on_object, &l);
    /* after the walk: dlopen inside dl_iterate_phdr's callback would take the loader's lock again */
    int *is_core = l.oom ? NULL : calloc(l.n ? l.n : 1, sizeof *is_core);
    for (size_t i = 0; is_core && i < l.n; i++)
        if ((is_core[i] = defines_ort_api(l.names[i]))) l.v[i].group = OQ_LIB_ORT;
    oq_strv_free(l.names, l.n_names);
    if (!is_core) {
        oq_loaded_libs_free(l.v, l.n);
        *out = NULL;
        *n = 0;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    if (core) *core = is_core;
    else free(is_core);
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
