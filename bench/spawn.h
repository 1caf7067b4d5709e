/* A tool run in a child process and measured by wait4, as the validate benchmarks run it. */
#ifndef ORTQUAL_BENCH_SPAWN_H
#define ORTQUAL_BENCH_SPAWN_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* argv run in a child: stdout to `out` (NULL: ours), stderr to stdout's file when `both`, else
 * to /dev/null; waits and fills *ru (the child's usage and that of the children it waited for:
 * ru_maxrss is the largest of their peaks). Returns its exit status, 128 when a signal ended it,
 * -1 when it could not be run. A tool that cannot be run says why on our stderr and in `out`
 * (an empty log read as a step that failed silently). */
static inline int bench_spawn(char *const argv[], const char *out, int both, struct rusage *ru)
{
    fflush(stdout); /* the child would print what is buffered again */
    pid_t pid = fork();
    if (pid == 0) {
        int ours = dup(2);
        if (out && !freopen(out, "w", stdout)) _exit(127);
        if (both ? dup2(fileno(stdout), 2) < 0 : !freopen("/dev/null", "w", stderr)) _exit(127);
        execv(argv[0], argv);
        const char *why = strerror(errno);
        if (ours >= 0) dprintf(ours, "cannot run %s: %s\n", argv[0], why);
        if (out) {
            printf("cannot run %s: %s\n", argv[0], why);
            fflush(stdout);
        }
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || wait4(pid, &status, 0, ru) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#endif
