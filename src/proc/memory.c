/* Process memory: resident set now, VmHWM, and a sampling thread for the peak of an interval. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ortqual/proc.h"
#include "status/args-impl.h"

/* Resident pages are the second field of /proc/self/statm. pread at offset 0
 * makes the kernel regenerate the text, so one descriptor serves every sample. */
static int statm_rss(int fd, uint64_t *rss)
{
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = '\0';
    unsigned long long size = 0, resident = 0;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2) return -1;
    *rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
    return 0;
}

static int status_vmhwm(uint64_t *vmhwm)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kb;
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1) {
            *vmhwm = (uint64_t)kb * 1024u;
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

oq_status oq_proc_peak_reset(oq_err *err)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : write(fd, "5", 1);
    if (fd >= 0) close(fd);
    return n == 1 ? OQ_OK : oq_err_set(err, OQ_ERR_IO, "/proc/self/clear_refs: cannot reset the peak resident set");
}

oq_status oq_proc_memory(uint64_t *rss, uint64_t *vmhwm, oq_err *err)
{
    OQ_NEED(err, rss);
    OQ_NEED(err, vmhwm);
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return oq_err_set(err, OQ_ERR_IO, "/proc/self/statm: cannot open");
    int bad = statm_rss(fd, rss);
    close(fd);
    if (bad) return oq_err_set(err, OQ_ERR_FORMAT, "/proc/self/statm: no resident size");
    if (status_vmhwm(vmhwm)) return oq_err_set(err, OQ_ERR_FORMAT, "/proc/self/status: no VmHWM");
    return OQ_OK;
}

struct oq_mem_sampler {
    pthread_t thread;
    int fd;
    unsigned period_us;
    atomic_int stop;
    uint64_t peak; /* written by the thread only until it is joined */
};

static void sample(oq_mem_sampler *m)
{
    uint64_t rss;
    if (!statm_rss(m->fd, &rss) && rss > m->peak) m->peak = rss;
}

static void *sampler_main(void *arg)
{
    oq_mem_sampler *m = arg;
    struct timespec ts = {(time_t)(m->period_us / 1000000u), (long)(m->period_us % 1000000u) * 1000L};
    while (!atomic_load(&m->stop)) {
        sample(m);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

oq_status oq_mem_sampler_start(unsigned period_us, oq_mem_sampler **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = NULL;
    if (period_us == 0) return oq_err_set(err, OQ_ERR_INVALID_ARG, "memory sampling period 0");
    oq_mem_sampler *m = calloc(1, sizeof *m);
    if (!m) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    m->period_us = period_us;
    m->fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (m->fd < 0) {
        free(m);
        return oq_err_set(err, OQ_ERR_IO, "/proc/self/statm: cannot open");
    }
    atomic_init(&m->stop, 0);
    sample(m);
    if (pthread_create(&m->thread, NULL, sampler_main, m)) {
        close(m->fd);
        free(m);
        return oq_err_set(err, OQ_ERR_RUNTIME, "cannot start the memory sampler thread");
    }
    *out = m;
    return OQ_OK;
}

uint64_t oq_mem_sampler_stop(oq_mem_sampler *m)
{
    if (!m) return 0;
    atomic_store(&m->stop, 1);
    pthread_join(m->thread, NULL);
    sample(m);
    uint64_t peak = m->peak;
    close(m->fd);
    free(m);
    return peak;
}
