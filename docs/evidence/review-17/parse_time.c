/* One-off timing: validate's dispatch check before (oq_model_inspect_file, then oq_model_find_nodes
 * in add_advice) and after (oq_model_inspect_nodes: one read, one parse), side by side. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "inspect/model-impl.h"

static double wall_s(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static void twice(const char *path)
{
    oq_model_info *mi;
    oq_node_info *ni;
    size_t n;
    if (oq_model_inspect_file(path, &mi, NULL) || oq_model_find_nodes(path, NULL, "Attention", &ni, &n, NULL)) exit(1);
    oq_model_info_free(mi);
    oq_node_infos_free(ni, n);
}

static void once(const char *path)
{
    oq_model_info *mi;
    oq_node_info *ni;
    size_t n;
    if (oq_model_inspect_nodes(path, "Attention", &mi, &ni, &n, NULL)) exit(1);
    oq_model_info_free(mi);
    oq_node_infos_free(ni, n);
}

int main(int argc, char **argv)
{
    const char *path = argv[1];
    int rounds = atoi(argv[2]), reps = atoi(argv[3]);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            double w0 = wall_s(), c0 = cpu_s();
            for (int i = 0; i < reps; i++) k ? once(path) : twice(path);
            printf("%s %s wall_ms %.3f cpu_ms %.3f\n", path, k ? "after(once)" : "before(twice)",
                   (wall_s() - w0) * 1e3 / reps, (cpu_s() - c0) * 1e3 / reps);
        }
    return 0;
}
