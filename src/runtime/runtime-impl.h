/* Internals shared by the files of src/runtime (never installed). */
#ifndef ORTQUAL_RUNTIME_IMPL_H
#define ORTQUAL_RUNTIME_IMPL_H


#include <stdint.h>

#include "onnxruntime_c_api.h"
#include "ortqual/runtime.h"

#define OQ_RT_LOG_KEEP 64
#define OQ_RT_MAX_EP_LIBS 16

struct oq_runtime {
    void *dl;              /* dlopen handle */
    const OrtApi *api;
    int api_version;
    OrtEnv *env;
    char *lib_path;        /* the kernel's path of the mapped library (libident.c) */
    int ident;             /* its process-wide record (oq_lib_ident_find), -1: none */
    char *version;
    char *build_info;
    struct {
        char *name, *path;
    } ep_libs[OQ_RT_MAX_EP_LIBS];
    size_t n_ep_libs;
};

/* Attach the EP named in `opts` to `so`. On success *ep_full / *attach are
 * static strings naming the EP and how it was attached. */
oq_status oq_ep_attach(oq_runtime *rt, OrtSessionOptions *so, const oq_session_opts *opts,
                       const char **ep_full, const char **attach, oq_err *err);

/* 1 once this process has handed ORT an execution-provider library (whatever came of it): its
 * code may have run, and a CUDA EP's driver state and threads do not survive a fork. */
int oq_runtime_ep_loaded(void);

/* The loaded library's ELF build-id (its NT_GNU_BUILD_ID note, which strip keeps) as lowercase
 * hex into hex[n]: 1, else 0 with hex "" (a library linked without one). */
int oq_runtime_build_id(const oq_runtime *rt, char *hex, size_t n);

/* Lets oq_runtime_load(NULL) look for ORT in the project's layout around the executable
 * (build tree, make install): called by ownlayout.c, which only ortqual's own programs link. */
void oq_runtime_own_layout(void);

/* Non-zero with the reason in `why` when `path` is an ELF file the dynamic loader must not be
 * handed: OQ_ELF_FOREIGN, of another class, byte order or machine than this process;
 * OQ_ELF_TRUNCATED, shorter than its loaded segments (dlopen would crash with SIGBUS on it).
 * 0 for anything else, dlopen's to judge. */
#define OQ_ELF_FOREIGN 1
#define OQ_ELF_TRUNCATED 2
int oq_elf_unloadable(const char *path, char *why, size_t n);
/* The file the dynamic loader opens for a bare library name (no '/'), where a folder of
 * LD_LIBRARY_PATH holds it: into out[n], 1. The loader searches those folders first and
 * passes over a foreign ELF file, so the first other file there is the one it maps, and the
 * one to check (a truncated copy there crashed it with SIGBUS, unchecked). 0: none does (a
 * folder with $ORIGIN or the like, a set-id process), dlopen's own search (the cache, the
 * system's folders) is left to find it. */
int oq_lib_search(const char *name, char *out, size_t n);
/* Why dlopen of a bare library name (no '/') failed, from dlerror()'s `msg`, into why[n]: where
 * the loader found no file of that name and one is in the current folder, which the loader never
 * searches (nor does ortqual: a library planted in a shared project folder ran as whoever
 * started ortqual there), how to load that one on purpose ("not found by the dynamic loader;
 * ./NAME exists in the current folder: write ./NAME to load it"); else `msg`, less the name
 * it starts with. 1 when the
 * loader found no file of that name (rather than failing on one, or on a library it needs). */
int oq_lib_unfound(const char *name, const char *msg, char *why, size_t n);

/* The process-wide record of the library mapped at `base` (its first page), made at its first
 * load from /proc/self/maps (`fallback`, the name dlopen took, where that cannot be read): an
 * index for the two below, -1 when the records are full. A child forked after it keeps it. */
int oq_lib_ident_find(uintptr_t base, const char *fallback);
/* The mapped file's path (NULL: k is no record). */
const char *oq_lib_ident_path(int k);
/* The SHA-256 of the mapped file's bytes, taken at the first call of the process or of a parent
 * it was forked from, into hex: 1. 0 with hex "" and the reason in why[n] when the file at its
 * path is no longer the mapped one (replaced, removed): the bytes that ran are not named. */
int oq_lib_ident_sha256(int k, char hex[65], char *why, size_t n);
/* oq_lib_ident_sha256 of the library rt loaded. */
int oq_runtime_lib_sha256(const oq_runtime *rt, char hex[65], char *why, size_t n);

/* Drops the process-wide ORT log lines: a worker forked from a process that logged starts
 * with none, as an exec'd one does. */
void oq_runtime_log_reset(void);

#endif
