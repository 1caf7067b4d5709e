/* Evidence: what this process and host actually run on.
 *
 * A qualification result is only as good as the account of where it ran.
 * These functions gather that account without linking CUDA: the libraries
 * mapped into the process (dl_iterate_phdr), GPU facts from NVML and the CUDA
 * driver API (both dlopen'ed; "no GPU" is a normal answer), the host, every
 * copy of the CUDA runtime, cuBLAS and cuDNN the loader could reach (to catch
 * one version shadowing another), and the safety of the working directory.
 *
 *     oq_evidence *ev;
 *     oq_evidence_collect(rt, NULL, &ev, &err);    // after sessions ran, so their libs show
 *     char *json = oq_evidence_to_json(ev);
 *     ...
 *     free(json);
 *     oq_evidence_free(ev);
 */
#ifndef ORTQUAL_EVIDENCE_H
#define ORTQUAL_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/runtime.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- loaded libraries ---------------------------------------------------------- */

typedef enum oq_lib_group {
    OQ_LIB_ORT,          /* libonnxruntime*, EP plugin libraries, and any library that defines
                            OrtGetApiBase (an ONNX Runtime core, whatever its file is called) */
    OQ_LIB_CUDA_RUNTIME, /* libcudart, nvrtc, nvJitLink, cufft, curand, ... */
    OQ_LIB_CUBLAS,       /* libcublas, libcublasLt */
    OQ_LIB_CUDNN,        /* libcudnn* */
    OQ_LIB_DRIVER,       /* libcuda, libnvidia-* (the kernel driver's user side) */
    OQ_LIB_OTHER
} oq_lib_group;
#define OQ_LIB_NGROUPS 6
OQ_API const char *oq_lib_group_name(oq_lib_group g); /* "ort", "cuda-runtime", "cublas", "cudnn", "driver", "other" */
/* Group of a library by its file name (directories are ignored); OQ_LIB_OTHER for NULL.
 * oq_loaded_libs also groups "ort" a mapped library that defines OrtGetApiBase. */
OQ_API oq_lib_group oq_lib_classify(const char *path);

typedef struct oq_loaded_lib {
    char *path;          /* as mapped (full path); one dlopen'ed by a relative name is the
                            file the kernel mapped, absolute, links resolved */
    oq_lib_group group;
} oq_loaded_lib;
/* Every shared object mapped into this process, in load order (the main
 * program and the vDSO left out). Free with oq_loaded_libs_free. */
OQ_API oq_status oq_loaded_libs(oq_loaded_lib **out, size_t *n, oq_err *err);
OQ_API void oq_loaded_libs_free(oq_loaded_lib *libs, size_t n);

/* ---- GPU facts ---------------------------------------------------------------- */

typedef struct oq_gpu {
    int index;
    char *name;
    char *pci_bus_id;          /* NVML; "" when unknown */
    uint64_t memory_total;     /* bytes; 0 when unknown */
    int cc_major, cc_minor;    /* compute capability; -1 when unknown */
    int sm_count;              /* CUDA driver; -1 when unknown */
} oq_gpu;

typedef struct oq_gpu_facts {
    char *nvml_status;         /* "ok" or why NVML gave nothing ("libnvidia-ml.so.1 not found") */
    char *cuda_status;         /* "ok" or why the CUDA driver API gave nothing */
    char *driver_version;      /* NVML's driver version ("580.82.07"), "" when unknown */
    int cuda_driver_version;   /* cuDriverGetVersion (13000 = 13.0), 0 when unknown */
    size_t n_gpus;             /* 0 is a normal answer */
    oq_gpu *gpus;
} oq_gpu_facts;
/* Never fails for lack of a GPU or driver: the statuses say why. */
OQ_API oq_status oq_gpu_facts_probe(oq_gpu_facts **out, oq_err *err);
OQ_API void oq_gpu_facts_free(oq_gpu_facts *g);

/* ---- host ---------------------------------------------------------------------- */

typedef struct oq_host {
    char *hostname, *kernel, *cpu_model;
    int n_cpus;
} oq_host;
OQ_API oq_status oq_host_probe(oq_host *out, oq_err *err);
OQ_API void oq_host_clear(oq_host *h);

/* ---- shadowing ------------------------------------------------------------------- */

/* One product found in one directory at one version ("cudnn 9.14.0 in /usr/lib/x86_64-linux-gnu"). */
typedef struct oq_lib_copy {
    char *product;       /* "cudart", "cublas", "cudnn" (cublasLt counts as cublas) */
    char *dir;           /* real path of the directory */
    char *version;       /* "9.14.0", "13", or "unknown" */
    size_t n_files;      /* the matching files there (full paths, sorted) */
    char **files;
    char *main_file;     /* the file to LD_PRELOAD (e.g. .../libcudnn.so.9) */
    int loaded;          /* 1 when one of its files is mapped into this process */
} oq_lib_copy;

typedef struct oq_shadow_report {
    size_t n_roots;
    char **roots;        /* directories scanned (real paths, duplicates dropped) */
    size_t n_copies;
    oq_lib_copy *copies; /* by product, then version, then directory */
    size_t n_conflicts;
    char **conflicts;    /* products found at more than one version */
    size_t *chosen;      /* per conflict: index into copies of the chosen copy
                            (the loaded one, else the newest version) */
} oq_shadow_report;

/* Where the loader could find CUDA libraries on this host: LD_LIBRARY_PATH,
 * the directories of /etc/ld.so.conf (what the ld cache is built from) and the
 * standard ones, /usr/local/cuda and cuda-* (lib64, targets/x/lib), and Python
 * site-packages nvidia/x/lib (system, /usr/local, ~/.local, venvs under ~ and
 * /opt, $VIRTUAL_ENV, $CONDA_PREFIX) and torch/lib. Only existing directories,
 * in that order. Free with oq_strv_free. */
OQ_API oq_status oq_shadow_default_roots(char ***roots, size_t *n, oq_err *err);

/* Scan `roots` (each to `max_depth` levels of subdirectories; 0 = the directory
 * only) for libcudart.so*, libcublas.so*, libcublasLt.so*, libcudnn*.so*;
 * versions come from the file name (libcudnn.so.9.14.0), else from the real
 * path of a symlink, else from a pip dist-info beside nvidia/x/lib. Copies are
 * marked loaded when one of their files (by real path) is among `loaded`. */
OQ_API oq_status oq_shadow_scan(const char *const *roots, size_t n_roots, int max_depth,
                                const char *const *loaded, size_t n_loaded, oq_shadow_report **out,
                                oq_err *err);
OQ_API void oq_shadow_report_free(oq_shadow_report *r);

/* Pin lines for the chosen set, with copy `override` (an index into copies,
 * or SIZE_MAX for none) replacing the chosen copy of its product:
 * *preload = "LD_PRELOAD=a:b", *ldpath = "LD_LIBRARY_PATH=d1:d2". Malloc'ed. */
OQ_API oq_status oq_shadow_pin(const oq_shadow_report *r, size_t override, char **preload, char **ldpath,
                               oq_err *err);

/* Compare dotted versions numerically ("9.14.0" < "9.19.0"; "13" < "13.0.1"); NULL compares as
 * "unknown", which sorts first. */
OQ_API int oq_version_cmp(const char *a, const char *b);

/* ---- working directory ---------------------------------------------------------- */

typedef struct oq_cwd_report {
    char *path;
    int world_writable;  /* others may write into it */
    int sticky;          /* ...but only delete their own files */
    size_t n_hazards;    /* files there that Python or the loader would pick up */
    char **hazards;      /* "sitecustomize.py", "usercustomize.py" */
} oq_cwd_report;
OQ_API oq_status oq_cwd_check(const char *dir, oq_cwd_report *out, oq_err *err); /* dir NULL: "." */
OQ_API void oq_cwd_report_clear(oq_cwd_report *r);

/* ---- everything together ---------------------------------------------------------- */

typedef struct oq_evidence_opts {
    size_t n_search_roots;              /* >0: scan these (depth 4) instead of the defaults */
    const char *const *search_roots;
    int skip_shadowing;                 /* no scan ("shadowing" is null): a process whose parent
                                           scanned the same files (validate's CPU workers) */
} oq_evidence_opts;

typedef struct oq_evidence {
    /* ONNX Runtime (all NULL/0 when collected without a runtime) */
    char *ort_version, *ort_lib_path, *ort_build_info;
    char *ort_lib_sha256; /* SHA-256 of the loaded library's bytes, 64 hex digits (a rebuilt
                             library at the same path is another build); NULL when it could not
                             be read */
    int ort_api_version;
    size_t n_providers;
    char **providers;
    size_t n_ep_devices;
    oq_ep_device *ep_devices;
    char *ep_devices_unavailable; /* why the runtime could not be asked (its C API predates EP
                                     devices), NULL when it was: none asked is not none found */
    size_t n_ort_env;
    oq_kv *ort_env;       /* oq_ort_env_capture */
    size_t n_ort_log;
    char **ort_log;       /* ORT's warnings so far */
    size_t n_loader_env;
    oq_kv *loader_env;    /* the loader's variables as the process had them: LD_PRELOAD, then
                             LD_LIBRARY_PATH (value NULL: unset), always both */
    oq_host host;
    oq_gpu_facts *gpu;
    size_t n_libs;
    oq_loaded_lib *libs;
    size_t n_ort_cores;
    char **ort_cores;     /* the mapped ONNX Runtime cores: each library that defines
                             OrtGetApiBase, and the one the runtime loaded (paths as in libs) */
    oq_shadow_report *shadow;
    oq_cwd_report cwd;
    size_t n_warnings;
    char **warnings;      /* one line each (0/NULL: none): more than one ONNX Runtime core mapped,
                             each named, the one the runtime loaded and those LD_PRELOAD names
                             marked */
} oq_evidence;

/* Gather everything. `rt` may be NULL (then no ORT section); `opts` may be NULL. Every member
 * is the evidence's: oq_evidence_free frees them with it. */
OQ_API oq_status oq_evidence_collect(oq_runtime *rt, const oq_evidence_opts *opts, oq_evidence **out,
                                     oq_err *err);
OQ_API void oq_evidence_free(oq_evidence *ev);

/* The evidence as a JSON object text (stable keys, 2-space indent), malloc'ed;
 * NULL on allocation failure or for a NULL ev. It opens with "schema": OQ_EVIDENCE_SCHEMA and
 * "ortqual": {"version": oq_version(), "abi_version": oq_abi_version()}, the library that
 * gathered it. */
#define OQ_EVIDENCE_SCHEMA "ortqual.evidence/1"
OQ_API char *oq_evidence_to_json(const oq_evidence *ev);

#ifdef __cplusplus
}
#endif
#endif
