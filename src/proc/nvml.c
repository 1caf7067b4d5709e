/* GPU memory of this process through NVML, dlopen'ed (no link to the driver). */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "ortqual/proc.h"
#include "status/args-impl.h"

/* nvmlProcessInfo_t as nvmlDeviceGetComputeRunningProcesses_v3 fills it (NVML 11.6+). */
typedef struct nvml_process_info {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
} nvml_process_info;

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_shutdown_fn)(void);
typedef int (*nvml_count_fn)(unsigned int *);
typedef int (*nvml_handle_fn)(unsigned int, void **);
typedef int (*nvml_procs_fn)(void *, unsigned int *, nvml_process_info *);

#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

struct nvml {
    nvml_init_fn init;
    nvml_shutdown_fn shutdown;
    nvml_count_fn count;
    nvml_handle_fn handle;
    nvml_procs_fn procs;
};

/* This process's usage on one device: 0 when it is not listed. */
static int device_usage(const struct nvml *n, void *dev, unsigned pid, uint64_t *bytes, int *listed)
{
    unsigned int cnt = 0;
    int rc = n->procs(dev, &cnt, NULL);
    if (rc && rc != NVML_ERROR_INSUFFICIENT_SIZE) return rc;
    if (!cnt) return 0;
    cnt += 8; /* room for processes that appear meanwhile */
    nvml_process_info *p = calloc(cnt, sizeof *p);
    if (!p) return -1;
    rc = n->procs(dev, &cnt, p);
    for (unsigned i = 0; !rc && i < cnt; i++)
        if (p[i].pid == pid && p[i].used_gpu_memory != NVML_VALUE_NOT_AVAILABLE) {
            *bytes += p[i].used_gpu_memory;
            *listed = 1;
        }
    free(p);
    return rc;
}

static oq_status query(const struct nvml *n, uint64_t *bytes, oq_err *err)
{
    unsigned int ndev = 0;
    int rc = n->count(&ndev);
    if (rc) return oq_err_set(err, OQ_ERR_NOT_FOUND, "nvmlDeviceGetCount: error %d", rc);
    if (!ndev) return oq_err_set(err, OQ_ERR_NOT_FOUND, "NVML sees no GPU");
    uint64_t total = 0;
    int listed = 0;
    for (unsigned i = 0; i < ndev; i++) {
        void *dev = NULL;
        if ((rc = n->handle(i, &dev)) || (rc = device_usage(n, dev, (unsigned)getpid(), &total, &listed)))
            return oq_err_set(err, OQ_ERR_NOT_FOUND, "NVML device %u: error %d", i, rc);
    }
    if (!listed) return oq_err_set(err, OQ_ERR_NOT_FOUND, "NVML does not list this process on any GPU");
    *bytes = total;
    return OQ_OK;
}

oq_status oq_nvml_process_memory(uint64_t *bytes, oq_err *err)
{
    OQ_NEED(err, bytes);
    void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dl) return oq_err_set(err, OQ_ERR_NOT_FOUND, "libnvidia-ml.so.1 not found");
    struct nvml n = {
        .init = (nvml_init_fn)dlsym(dl, "nvmlInit_v2"),
        .shutdown = (nvml_shutdown_fn)dlsym(dl, "nvmlShutdown"),
        .count = (nvml_count_fn)dlsym(dl, "nvmlDeviceGetCount_v2"),
        .handle = (nvml_handle_fn)dlsym(dl, "nvmlDeviceGetHandleByIndex_v2"),
        .procs = (nvml_procs_fn)dlsym(dl, "nvmlDeviceGetComputeRunningProcesses_v3"),
    };
    oq_status st;
    if (!n.init || !n.shutdown || !n.count || !n.handle || !n.procs)
        st = oq_err_set(err, OQ_ERR_NOT_FOUND,
                        "libnvidia-ml.so.1 lacks nvmlDeviceGetComputeRunningProcesses_v3 (driver too old)");
    else if (n.init())
        st = oq_err_set(err, OQ_ERR_NOT_FOUND, "nvmlInit failed (no driver loaded?)");
    else {
        st = query(&n, bytes, err);
        n.shutdown();
    }
    dlclose(dl);
    return st;
}
