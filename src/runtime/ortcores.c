/* The intra-op threads ONNX Runtime picks for a count of 0, its default (thread_utils.cc,
 * CreateThreadPoolHelper): one per physical core as its PosixEnv counts them with cpuinfo (the
 * cores of sysfs' topology), or half the logical processors where those cannot be read
 * (DefaultNumCores); one core starts no pool (the caller's thread alone). The count ignores the
 * process's CPU affinity mask, as cpuinfo does. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/sessioncfg-impl.h"

/* The first logical processor of cpu's core (its sibling list's first), -1 where unreadable. */
static long core_leader(long cpu)
{
    char path[96], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/thread_siblings_list", cpu);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *end = NULL;
    long first = fgets(buf, sizeof buf, f) ? strtol(buf, &end, 10) : -1;
    fclose(f);
    return end && end != buf ? first : -1;
}

int oq_ort_default_threads(void)
{
    long n_cpu = sysconf(_SC_NPROCESSORS_CONF), cores = 0;
    for (long cpu = 0; cpu < n_cpu; cpu++) cores += core_leader(cpu) == cpu; /* each core once */
    if (cores == 0) cores = sysconf(_SC_NPROCESSORS_ONLN) / 2;
    return cores > 1 ? (int)cores : 1;
}
