/* GPU facts through NVML and the CUDA driver API, both dlopen'ed: nothing here
 * links CUDA, and a host without a GPU or driver simply reports none. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/evidence.h"
#include "status/args-impl.h"

/* The few NVML and CUDA driver entry points used, with their C signatures
 * (nvml.h, cuda.h). Handles are opaque pointers; CUdevice is an int. */
typedef int (*nvml_void_fn)(void);
typedef int (*nvml_str_fn)(char *, unsigned);
typedef int (*nvml_count_fn)(unsigned *);
typedef int (*nvml_handle_fn)(unsigned, void **);
typedef int (*nvml_name_fn)(void *, char *, unsigned);
typedef int (*nvml_mem_fn)(void *, unsigned long long[3]); /* nvmlMemory_t: total, free, used */
typedef int (*nvml_cc_fn)(void *, int *, int *);

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_int_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_mem_fn)(size_t *, int);
typedef int (*cu_attr_fn)(int *, int, int);

enum { CU_ATTR_SM_COUNT = 16, CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

#define SYM(dl, name) ((void *)(uintptr_t)dlsym(dl, name))

static void gpu_init(oq_gpu *g, int index)
{
    memset(g, 0, sizeof *g);
    g->index = index;
    g->cc_major = g->cc_minor = g->sm_count = -1;
}

static int set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = strdup(src);
    return *dst != NULL;
}

/* NVML: driver version always; GPUs only when the CUDA driver gave none. */
static int probe_nvml(oq_gpu_facts *f, int want_gpus)
{
    void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dl) return set_str(&f->nvml_status, "libnvidia-ml.so.1 not found");
    nvml_void_fn init = (nvml_void_fn)SYM(dl, "nvmlInit_v2"), shut = (nvml_void_fn)SYM(dl, "nvmlShutdown");
    nvml_str_fn drv = (nvml_str_fn)SYM(dl, "nvmlSystemGetDriverVersion");
    nvml_count_fn count = (nvml_count_fn)SYM(dl, "nvmlDeviceGetCount_v2");
    nvml_handle_fn handle = (nvml_handle_fn)SYM(dl, "nvmlDeviceGetHandleByIndex_v2");
    nvml_name_fn name = (nvml_name_fn)SYM(dl, "nvmlDeviceGetName");
    nvml_mem_fn mem = (nvml_mem_fn)SYM(dl, "nvmlDeviceGetMemoryInfo");
    nvml_cc_fn cc = (nvml_cc_fn)SYM(dl, "nvmlDeviceGetCudaComputeCapability");
    int ok = 1;
    char buf[128];
    int rc = -1;
    if (!init || !shut || !drv || !count || !handle || !name) {
        ok = set_str(&f->nvml_status, "libnvidia-ml.so.1 lacks the expected symbols");
    } else if ((rc = init()) != 0) {
        snprintf(buf, sizeof buf, "nvmlInit failed (NVML error %d)", rc);
        ok = set_str(&f->nvml_status, buf);
    } else {
        char ver[96] = "";
        if (drv(ver, sizeof ver) == 0) ok &= set_str(&f->driver_version, ver);
        unsigned n = 0;
        if (want_gpus && count(&n) == 0 && n > 0 && (f->gpus = calloc(n, sizeof *f->gpus))) {
            for (unsigned i = 0; i < n; i++) {
                oq_gpu *g = &f->gpus[f->n_gpus];
                void *h = NULL;
                gpu_init(g, (int)i);
                if (handle(i, &h) != 0) continue;
                char nm[256] = "";
                name(h, nm, sizeof nm);
                unsigned long long m[3] = {0, 0, 0};
                if (mem && mem(h, m) == 0) g->memory_total = m[0];
                if (cc) cc(h, &g->cc_major, &g->cc_minor);
                ok &= set_str(&g->name, nm) && set_str(&g->pci_bus_id, "");
                f->n_gpus++;
            }
        }
        ok &= set_str(&f->nvml_status, "ok");
        shut();
    }
    dlclose(dl);
    return ok;
}

static int cuda_device(void *dl, int ordinal, oq_gpu *g)
{
    cu_get_fn get = (cu_get_fn)SYM(dl, "cuDeviceGet");
    cu_name_fn name = (cu_name_fn)SYM(dl, "cuDeviceGetName");
    cu_name_fn pci = (cu_name_fn)SYM(dl, "cuDeviceGetPCIBusId");
    cu_mem_fn mem = (cu_mem_fn)SYM(dl, "cuDeviceTotalMem_v2");
    cu_attr_fn attr = (cu_attr_fn)SYM(dl, "cuDeviceGetAttribute");
    gpu_init(g, ordinal);
    int dev = 0;
    char nm[256] = "", bus[64] = "";
    size_t bytes = 0;
    if (get && get(&dev, ordinal) == 0) {
        if (name) name(nm, sizeof nm, dev);
        if (pci) pci(bus, sizeof bus, dev);
        if (mem && mem(&bytes, dev) == 0) g->memory_total = bytes;
        if (attr) {
            attr(&g->cc_major, CU_ATTR_CC_MAJOR, dev);
            attr(&g->cc_minor, CU_ATTR_CC_MINOR, dev);
            attr(&g->sm_count, CU_ATTR_SM_COUNT, dev);
        }
    }
    return set_str(&g->name, nm) && set_str(&g->pci_bus_id, bus);
}

/* The CUDA driver numbers devices as ORT's device_id does (CUDA_VISIBLE_DEVICES applied).
 * libcuda stays loaded: the driver keeps threads and state once initialised. */
static int probe_cuda(oq_gpu_facts *f)
{
    void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dl) return set_str(&f->cuda_status, "libcuda.so.1 not found");
    cu_init_fn init = (cu_init_fn)SYM(dl, "cuInit");
    cu_int_fn ver = (cu_int_fn)SYM(dl, "cuDriverGetVersion");
    cu_int_fn count = (cu_int_fn)SYM(dl, "cuDeviceGetCount");
    char buf[128];
    int rc, n = 0;
    if (!init || !ver || !count) return set_str(&f->cuda_status, "libcuda.so.1 lacks the expected symbols");
    ver(&f->cuda_driver_version);
    if ((rc = init(0)) != 0) {
        snprintf(buf, sizeof buf, "cuInit failed (CUDA error %d)", rc);
        return set_str(&f->cuda_status, buf);
    }
    if (count(&n) != 0 || n <= 0) return set_str(&f->cuda_status, "ok");
    if (!(f->gpus = calloc((size_t)n, sizeof *f->gpus))) return 0;
    int ok = 1;
    for (int i = 0; i < n; i++, f->n_gpus++) ok &= cuda_device(dl, i, &f->gpus[i]);
    return ok && set_str(&f->cuda_status, "ok");
}

oq_status oq_gpu_facts_probe(oq_gpu_facts **out, oq_err *err)
{
    OQ_NEED(err, out);
    oq_gpu_facts *f = calloc(1, sizeof *f);
    *out = NULL;
    if (!f) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    int ok = probe_cuda(f);
    ok &= probe_nvml(f, f->n_gpus == 0);
    if (!f->driver_version) ok &= set_str(&f->driver_version, "");
    if (!ok) {
        oq_gpu_facts_free(f);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *out = f;
    return OQ_OK;
}

void oq_gpu_facts_free(oq_gpu_facts *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n_gpus; i++) {
        free(g->gpus[i].name);
        free(g->gpus[i].pci_bus_id);
    }
    free(g->gpus);
    free(g->nvml_status);
    free(g->cuda_status);
    free(g->driver_version);
    free(g);
}
