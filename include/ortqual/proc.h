/* Processes: a child run with a time limit, and the memory of this process.
 *
 * oq_proc_run isolates each validation configuration: a crash or abort inside
 * ONNX Runtime or an execution provider ends only the child, and the parent
 * reports the signal and the last lines the child wrote. The memory readings
 * (resident set, its peak, GPU memory) are what bench and validate record.
 */
#ifndef ORTQUAL_PROC_H
#define ORTQUAL_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a child process -------------------------------------------------------- */

typedef struct oq_proc_result {
    int exit_code;     /* valid when !signaled && !timed_out */
    int signaled;      /* ended by a signal */
    int signal;        /* its number */
    int timed_out;     /* killed by us when the time limit passed */
    double seconds;    /* wall time */
    char *stderr_tail; /* last bytes of stderr (owned, NUL-terminated, may be empty) */
} oq_proc_result;

/* Runs argv[0] (a path, not searched) with argv. timeout_s <= 0: no limit.
 * When `echo` is non-zero the child's stderr is also copied to ours as it comes.
 * Returns OQ_OK when the child was started and waited for, whatever its outcome. */
OQ_API oq_status oq_proc_run(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                             oq_proc_result *res, oq_err *err);

/* What oq_proc_run_watch watches besides the time limit. */
typedef struct oq_proc_watch {
    /* every complete stderr line that starts with `prefix` goes to on_line (without the prefix and
     * the newline) as it arrives, instead of to the tail or the echo: a side channel for progress */
    const char *prefix;
    void (*on_line)(void *ctx, const char *line);
    /* called with the child's process group once it exists, and with 0 once it was waited for: a
     * caller that catches SIGINT/SIGTERM passes them on to it (kill(-pgid, sig)) */
    void (*on_start)(void *ctx, int pgid);
    /* set (by the caller's signal handler, a sig_atomic_t: an int on Linux) when the run is
     * interrupted: a child still running OQ_PROC_STOP_GRACE_S later is killed (SIGKILL to its
     * group) */
    const volatile int *stop;
    void *ctx;
} oq_proc_watch;

/* Seconds a child may take to end after an interruption was passed on to it. */
#define OQ_PROC_STOP_GRACE_S 5.0

/* As oq_proc_run, watched as `w` says (NULL: as oq_proc_run). The child gets SIGKILL when this
 * process dies (PR_SET_PDEATHSIG, checked after setting it: a child whose parent died before
 * exits 127 at once), so no child outlives the parent, whatever kills the parent. */
OQ_API oq_status oq_proc_run_watch(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                                   const oq_proc_watch *w, oq_proc_result *res, oq_err *err);

/* As oq_proc_run_watch, but the child is a copy of this process, forked without exec: it starts
 * as an exec'd child would (signals caught here back to their default action, close-on-exec
 * descriptors closed, stderr on the pipe, its own group, SIGKILL when this process dies), runs
 * fn(ctx) and ends with _exit of its return value (stdio flushed, no atexit handlers). It saves
 * the exec and whatever this process has already loaded; it is only safe where
 * oq_proc_single_threaded says so, and fn must not return into anything of the parent's. */
OQ_API oq_status oq_proc_fork_watch(int (*fn)(void *ctx), void *ctx, double timeout_s, size_t tail_bytes, int echo,
                                    const oq_proc_watch *w, oq_proc_result *res, oq_err *err);

/* A child started without waiting for it (validate's cached reference, read beside the first
 * configuration under test): started as oq_proc_run_watch's or, when fn is non-NULL, as
 * oq_proc_fork_watch's (fn(ctx) in a forked copy), with its stderr on the file `stderr_path`,
 * created or truncated in place: a symbolic link, a hard link (a file of more than one link),
 * another user's file or a FIFO at that path is refused (OQ_ERR_INVALID_ARG, naming it). */
typedef struct oq_proc_bg {
    int pid; /* 0: none (waited for) */
    double start;
    char stderr_path[4096];
} oq_proc_bg;

OQ_API oq_status oq_proc_start_bg(char *const argv[], int (*fn)(void *ctx), void *ctx, const char *stderr_path,
                                  oq_proc_bg *bg, oq_err *err);

/* Waits for it: SIGKILL to its group timeout_s after its start (<= 0: no limit); once *stop is
 * set (a signal number), that signal is passed on to its group and it gets
 * OQ_PROC_STOP_GRACE_S to end. `res` as oq_proc_run's, the tail read back from its file. */
OQ_API oq_status oq_proc_wait_bg(oq_proc_bg *bg, double timeout_s, size_t tail_bytes, const volatile int *stop,
                                 oq_proc_result *res, oq_err *err);

/* 1 when this process runs one thread (/proc/self/status): a fork then copies no lock or pool
 * another thread holds half-way. 0 otherwise, and when it cannot tell. */
OQ_API int oq_proc_single_threaded(void);

OQ_API void oq_proc_result_clear(oq_proc_result *res);

/* "exit 3", "signal 11 (Segmentation fault)", "timed out after 30 s" into buf; returns buf ("" in
 * it for a NULL res). */
OQ_API const char *oq_proc_describe(const oq_proc_result *res, char *buf, size_t n);

/* ---- memory of this process ------------------------------------------------ */

/* Current resident set (from /proc/self/statm) and the process's peak
 * resident set since it started (VmHWM, /proc/self/status), in bytes. */
OQ_API oq_status oq_proc_memory(uint64_t *rss, uint64_t *vmhwm, oq_err *err);

/* Reset VmHWM to the current resident set ("5" written to /proc/self/clear_refs,
 * Linux >= 4.0): VmHWM read later is then the exact peak of the interval since,
 * every page counted, with no thread sampling it. Errors: OQ_ERR_IO (an older
 * kernel, /proc read-only): sample with oq_mem_sampler instead. */
OQ_API oq_status oq_proc_peak_reset(oq_err *err);

/* A thread that samples /proc/self/statm every `period_us` microseconds and
 * keeps the largest resident set seen: the peak over an interval, which VmHWM
 * (process lifetime) cannot give. */
typedef struct oq_mem_sampler oq_mem_sampler;
OQ_API oq_status oq_mem_sampler_start(unsigned period_us, oq_mem_sampler **out, oq_err *err);
/* Stop, join and free; returns the peak RSS in bytes (including one last
 * reading taken at stop, so a short interval still has a value). */
OQ_API uint64_t oq_mem_sampler_stop(oq_mem_sampler *m);

/* GPU memory this process uses, summed over every GPU, from NVML
 * (libnvidia-ml.so.1, dlopen'ed; nvmlDeviceGetComputeRunningProcesses).
 * Returns OQ_OK and sets *bytes when NVML answered; OQ_ERR_NOT_FOUND (no
 * library, no GPU, or this process not listed) with the reason otherwise. */
OQ_API oq_status oq_nvml_process_memory(uint64_t *bytes, oq_err *err);

/* GPU kernel time from CUPTI's activity API (libcupti from the CUDA toolkit,
 * dlopen'ed: `lib`, or NULL for libcupti.so[.13|.12] on the loader's path):
 * the time of every kernel any GPU of this process ran while enabled, as
 * torch.profiler measures it, whichever library launched it. CUPTI takes one
 * set of callbacks per process, so one collector at a time (a second create
 * is OQ_ERR_INVALID_ARG); it also conflicts with an ORT built with CUDA
 * profiling, which uses CUPTI itself. Errors: OQ_ERR_NOT_FOUND (no library,
 * or not CUPTI), OQ_ERR_RUNTIME (a CUPTI call failed: its message). */
typedef struct oq_cupti oq_cupti;
OQ_API oq_status oq_cupti_create(const char *lib, oq_cupti **out, oq_err *err);
/* Start (on) or stop collecting: enabled, CUPTI serializes nothing but adds a
 * record per kernel, so keep it off around timed loops. */
OQ_API oq_status oq_cupti_enable(oq_cupti *c, int on, oq_err *err);
/* The kernels that ended since the last take (or create): their summed
 * duration and count, after a forced flush. The GPU work must have been
 * synchronized: a kernel record without an end time, or records CUPTI
 * dropped, is OQ_ERR_RUNTIME (the sums are then incomplete). */
OQ_API oq_status oq_cupti_take(oq_cupti *c, double *kernel_ms, size_t *kernels, oq_err *err);
/* The distinct names of the last take's kernels, in the order first seen
 * (demangled where the process has libstdc++'s demangler, cut to
 * OQ_CUPTI_NAME_MAX - 1 bytes, the first OQ_CUPTI_MAX_NAMES kept): up to
 * `max` pointers into `c`, valid until its next take; returns how many there
 * are. */
#define OQ_CUPTI_MAX_NAMES 16
#define OQ_CUPTI_NAME_MAX 256
OQ_API size_t oq_cupti_kernel_names(const oq_cupti *c, const char **names, size_t max);
OQ_API void oq_cupti_free(oq_cupti *c);
/* Whether CUPTI can be loaded (`lib`, or as oq_cupti_create finds it), for a report:
 * the file the loader took in `path` and cuptiGetVersion's answer in *version (0 if
 * none), without registering anything. Errors as oq_cupti_create's load. */
OQ_API oq_status oq_cupti_probe(const char *lib, char *path, size_t path_len, uint32_t *version, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
