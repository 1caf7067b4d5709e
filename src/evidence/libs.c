/* The shared objects mapped into this process, grouped by what they are. */
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "ortqual/evidence.h"
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
    int oom;
} lib_list;

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    lib_list *l = data;
    const char *name = info->dlpi_name;
    /* The main program has an empty name; the vDSO has no file. */
    if (!name || name[0] != '/' || l->oom) return 0;
    char *path = strdup(name);
    oq_loaded_lib *lib = path ? OQ_PUSH(l->v, l->n) : NULL;
    if (!lib) {
        free(path);
        l->oom = 1;
        return 0;
    }
    lib->path = path;
    lib->group = oq_lib_classify(name);
    return 0;
}

oq_status oq_loaded_libs(oq_loaded_lib **out, size_t *n, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED(err, n);
    lib_list l = {0};
    dl_iterate_phdr(on_object, &l);
    if (l.oom) {
        oq_loaded_libs_free(l.v, l.n);
        *out = NULL;
        *n = 0;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *out = l.v;
    *n = l.n;
    return OQ_OK;
}

void oq_loaded_libs_free(oq_loaded_lib *libs, size_t n)
{
    if (!libs) return;
    for (size_t i = 0; i < n; i++) free(libs[i].path);
    free(libs);
}
