/* Starting a worker: forked from this process when that is safe, else the tool re-executed.
 *
 * A worker's start is mostly ORT's: exec and dynamic linking, dlopen, and the first OrtEnv of a
 * process (ORT's process-wide registrations, ~0.05 s CPU). A child forked from a process that
 * created one environment already inherits all of that; it still runs in its own process
 * (crash isolation, the time limit, its own group), so only the start differs. */
#include <stdio.h>
#include <string.h>

#include "runtime/runtime-impl.h"
#include "validate/validate-impl.h"

#if defined(__SANITIZE_ADDRESS__)
#define OQ_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OQ_LEAK_CHECK 1
#endif
#endif
#ifdef OQ_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

/* The tool's exit status for a runtime error, which its exec'd worker returns as well. */
#define WORKER_FAILED 3

/* Why a worker running ORT `ort_lib` cannot be forked here, or NULL where it can: an
 * execution-provider library ever loaded in this process (a CUDA EP's driver state and threads
 * do not survive a fork: a GPU host's parent that looked for the CUDA EP re-executes), or a
 * thread besides this one (a thread pool's locks would be copied half-held). ORT `ort_lib` is
 * loaded and its environment created and released first: the children then inherit the
 * process-wide part (a second environment costs ~0.1 ms), and the check sees any thread that
 * made. "" where that ORT does not load (the worker, or the run's check of it, says why). */
static const char *fork_obstacle(const char *ort_lib)
{
    if (oq_runtime_ep_loaded()) return "a process that loaded an execution-provider library";
    if (!oq_proc_single_threaded()) return "a process with other threads";
    oq_runtime *rt = NULL;
    if (oq_runtime_load(ort_lib, &rt, NULL)) return "";
    oq_runtime_free(rt);
    if (oq_runtime_ep_loaded()) return "a process that loaded an execution-provider library";
    return oq_proc_single_threaded() ? NULL
                                     : "a process in which ONNX Runtime started threads as it loaded (its "
                                       "telemetry client, where ORT_DISABLE_TELEMETRY is set and not 1)";
}

/* Another ORT than the parent's (replay's reference_ort_lib) is not loaded beside it. */
static const char *obstacle_for(const oq_validate_opts *o, const char *ort_lib)
{
    int same = ort_lib == o->ort_lib || (ort_lib && o->ort_lib && !strcmp(ort_lib, o->ort_lib));
    return same ? fork_obstacle(ort_lib) : "a process whose ORT library is not the reference's (reference_ort_lib)";
}

static int can_fork(const oq_validate_opts *o, const char *ort_lib) { return !obstacle_for(o, ort_lib); }

const char *oq_workers_fork_obstacle(const oq_validate_opts *o)
{
    for (size_t k = 0; k < o->n_configs && k < 2; k++) { /* the reference's ORT, the others' */
        const char *why = obstacle_for(o, oq_validate_plan_ort_lib(o, k == 0));
        if (why && *why) return why;
    }
    return NULL;
}

typedef struct forked_worker {
    const oq_validate_opts *o;
    const char *plan_path;
} forked_worker;

/* The child: what `ortqual validate --worker PLAN` does after its exec, from a copy of this
 * process whose ORT log lines are dropped and whose peak resident set starts here. */
static int forked_main(void *ctx)
{
    const forked_worker *f = ctx;
    if (f->o->on_worker_fork) f->o->on_worker_fork();
    oq_runtime_log_reset();
    oq_proc_peak_reset(NULL); /* an old kernel keeps the parent's peak: a larger figure, no error */
    oq_err e = {0};
    if (oq_validate_worker(f->plan_path, &e)) {
        /* the line the exec'd worker writes: the parent quotes the child's last line */
        fprintf(stderr, "ortqual validate --worker: %s\n", e.msg);
        return WORKER_FAILED;
    }
#ifdef OQ_LEAK_CHECK
    __lsan_do_leak_check(); /* the exec'd worker is checked at exit; this one ends with _exit */
#endif
    return 0;
}

/* The probe's child: load `lib` and say, last, which file it was; or say why not on stderr. */
static int probe_main(void *lib)
{
    oq_runtime *rt = NULL;
    oq_err e = {0};
    if (oq_runtime_load(lib, &rt, &e) == OQ_OK) {
        fprintf(stderr, "\n%s\n", oq_runtime_lib_path(rt));
        oq_runtime_free(rt);
        return 0;
    }
    fprintf(stderr, "%s", e.msg);
    return WORKER_FAILED;
}

/* The last line of the probe's output: the file it loaded. */
static void loaded_file(char *tail, char *file, size_t n)
{
    char *end = tail + strlen(tail);
    while (end > tail && end[-1] == '\n') *--end = '\0';
    char *line = strrchr(tail, '\n');
    snprintf(file, n, "%s", line ? line + 1 : tail);
}

oq_status oq_worker_probe_ort(const char *lib, char *file, size_t n, oq_err *err)
{
    if (file && n) file[0] = '\0';
    if (oq_runtime_ep_loaded() || !oq_proc_single_threaded()) return OQ_OK;
    if (lib && !*lib) lib = NULL;
    oq_proc_result res = {0};
    char how[128];
    oq_status st = oq_proc_fork_watch(probe_main, (void *)lib, 60, 2048, 0, NULL, &res, err);
    if (!st && (res.signaled || res.timed_out || res.exit_code))
        st = oq_err_set(err, OQ_ERR_RUNTIME, "%s", res.stderr_tail && *res.stderr_tail
                                                       ? res.stderr_tail
                                                       : oq_proc_describe(&res, how, sizeof how));
    else if (!st && file && n && res.stderr_tail)
        loaded_file(res.stderr_tail, file, n);
    oq_proc_result_clear(&res);
    return st;
}

/* Where a fork is not safe the tool is re-executed: without self_exe, say why and what to set
 * (a thread or an EP library can appear after oq_validate_run's check: the caller stops the run). */
static oq_status need_self_exe(const oq_validate_opts *o, const char *ort_lib, oq_err *err)
{
    if (o->self_exe) return OQ_OK;
    const char *why = obstacle_for(o, ort_lib);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "isolated workers cannot be forked from %s, and self_exe is NULL; "
                      "oq_validate_run's check before anything was written found none (a thread started or an "
                      "execution-provider library loaded since): set self_exe to the ortqual tool (the workers "
                      "run it), or isolate = 0", why && *why ? why : "this process (its ORT library does not load)");
}

oq_status oq_worker_spawn(const oq_validate_opts *o, const char *plan_path, const char *ort_lib,
                          const oq_proc_watch *w, oq_proc_result *res, int *forked, oq_err *err)
{
    *forked = can_fork(o, ort_lib);
    if (!*forked && need_self_exe(o, ort_lib, err)) return OQ_ERR_INVALID_ARG;
    if (*forked) {
        forked_worker f = {o, plan_path};
        return oq_proc_fork_watch(forked_main, &f, o->timeout_s, 4096, 0, w, res, err);
    }
    char *argv[] = {(char *)o->self_exe, "validate", "--worker", (char *)plan_path, NULL};
    return oq_proc_run_watch(argv, o->timeout_s, 4096, 0, w, res, err);
}

oq_status oq_worker_spawn_bg(const oq_validate_opts *o, const char *plan_path, const char *ort_lib,
                             const char *stderr_path, oq_proc_bg *bg, int *forked, oq_err *err)
{
    *forked = can_fork(o, ort_lib);
    if (!*forked && need_self_exe(o, ort_lib, err)) return OQ_ERR_INVALID_ARG;
    forked_worker f = {o, plan_path}; /* the child runs on a copy of this frame */
    char *argv[] = {(char *)o->self_exe, "validate", "--worker", (char *)plan_path, NULL};
    return oq_proc_start_bg(argv, *forked ? forked_main : NULL, &f, stderr_path, bg, err);
}
