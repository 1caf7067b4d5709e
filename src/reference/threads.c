/* How many threads a reference call uses, and the memory its buffers live in. */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <omp.h>

#include "core/core-impl.h"
#include "reference/reference-impl.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* The CPUs this process may run on (taskset, cgroups' cpusets, a batch scheduler's
 * binding), else the online ones. */
static int cores(void)
{
    cpu_set_t set;
    if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int oq_ref_threads(int requested, int64_t tasks)
{
    /* The reference runs its own threads, not OpenMP's; an OpenMP region around
     * the call means the caller's threads already use the cores. */
    if (omp_in_parallel()) return 1;
    int n = requested > 0 ? requested : cores();
    if (tasks < n) n = tasks < 1 ? 1 : (int)tasks;
    return n;
}

oq_status oq_ref_threads_check(int threads, const char *what, oq_err *err)
{
    if (threads < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: threads must be >= 0 (0 = every core), got %d",
                          what, threads);
    return OQ_OK;
}

double *oq_ref_alloc(int64_t n)
{
    size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
    if (bytes < HUGE_PAGE / 2) {
        /* Cache-line aligned: the kernels' 64-byte vector loads and stores of
         * scratch would each touch two lines at malloc's 16 (~4% of a call). */
        void *p;
        return posix_memalign(&p, 64, (bytes + 63) / 64 * 64) ? NULL : p;
    }
    return oq_alloc_huge((bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
}
