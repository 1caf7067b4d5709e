/* validate_scale: does `ortqual validate` stream? Memory and throughput at two sizes, side by side.
 *
 *   build/bench/validate_scale [--batch-size N] [--rounds R] [SMALL LARGE] [path/to/ortqual]
 *                                     (default batches of 3, 3 rounds, 1000 100000 events)
 *
 * Runs the demo model (ref:encoder:fp64, cpu:attention24:fp32; --repeat 1 --warmup 0, batches of
 * N) on SMALL and then LARGE generated events, each twice on one private reference cache: the
 * first run fills it, the second is measured (the reference read, not computed). Prints, per
 * size, the peak RSS of the run's largest process (wait4's rusage of the tool: the parent and
 * the workers it waited for) and of the largest worker (summary.json's cost), the wall and CPU
 * time and events per second; then the ratio of
 * the peaks LARGE / SMALL (target <= 1.05: memory does not grow with events) and the events per
 * second of the measured LARGE run against a bare ORT loop over the same batches and calls
 * (this program re-run as `--bare CALLS MODEL DIR`: ORT loaded, the session created, every batch
 * DIR/inputs_*.npz read and run CALLS times; target >= 0.8), and the two runs' CPU seconds
 * with the load average (the machine may be shared). The bare loop and the cached run of LARGE
 * take turns for R rounds (the first round's run is the measured one above); the verdict is the
 * median of the rounds' ratios. */
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bare.h"
#include "spawn.h"
#include "ortqual/npz.h"
#include "ortqual/runtime.h"
#include "ortqual/stats.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_of(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) + (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1e-6;
}

/* Runs argv; *wall its seconds, *cpu its CPU seconds (user + system, its children included),
 * *peak_kib the largest peak RSS of it and the children it waited for. */
static int spawn(char **argv, const char *out, double *wall, double *cpu, long *peak_kib)
{
    double t0 = now();
    struct rusage ru;
    int rc = bench_spawn(argv, out, 0, &ru);
    if (rc < 0) return -1;
    *wall = now() - t0;
    *peak_kib = ru.ru_maxrss;
    *cpu = cpu_of(&ru);
    return rc;
}

/* The bare loop: every batch (DIR/inputs_*.npz, globbed here: thousands of paths on the
 * command line left ORT's main-thread stack too small, a SIGSEGV inside Run at 10,000 events)
 * read and run `calls` times; prints the seconds it took, wall and CPU. */
static int bare(int argc, char **argv)
{
    (void)argc;
    int calls = atoi(argv[0]);
    char pattern[PATH_MAX + 32];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/inputs_*.npz", argv[2]);
    if (glob(pattern, 0, NULL, &g) != 0) return fprintf(stderr, "bare: no %s\n", pattern), 3;
    oq_runtime *rt;
    oq_session *s;
    oq_err e = {0};
    oq_session_opts so = {0};
    if (oq_runtime_load(NULL, &rt, &e) || oq_session_create(rt, argv[1], NULL, 0, &so, &s, &e))
        return fprintf(stderr, "bare: %s\n", e.msg), 3;
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = now();
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (bench_bare_batch(s, g.gl_pathv[i], calls, &e)) return fprintf(stderr, "bare: %s\n", e.msg), 3;
    }
    double wall = now() - t0;
    getrusage(RUSAGE_SELF, &r1);
    printf("%.6f %.6f\n", wall, cpu_of(&r1) - cpu_of(&r0));
    globfree(&g);
    oq_session_free(s);
    oq_runtime_free(rt);
    return 0;
}

/* The first three fields of /proc/loadavg and a newline. */
static const char *load_average(void)
{
    static char line[64];
    FILE *f = fopen("/proc/loadavg", "r");
    int n = f && fgets(line, sizeof line, f) ? 1 : 0;
    if (f) fclose(f);
    char *c = n ? strchr(line, ' ') : NULL;
    for (int i = 0; c && i < 2; i++) c = strchr(c + 1, ' ');
    if (c) snprintf(c, sizeof line - (size_t)(c - line), "\n");
    return n ? line : "?\n";
}

typedef struct measured {
    double wall, cpu, events_per_s;
    long parent_kib, worker_kib; /* peaks: the largest process's, the largest worker's */
    int ok;
} measured;

static measured validate(const char *tool, const char *dir, const char *cache, long events, const char *batch)
{
    measured m = {0};
    char n[32], log[PATH_MAX + 16], path[PATH_MAX + 32];
    snprintf(n, sizeof n, "%ld", events);
    snprintf(log, sizeof log, "%s.log", dir);
    char *argv[] = {(char *)tool, "validate", "--outdir", (char *)dir, "--force", "--cache-dir", (char *)cache,
                    "--num-events", n, "--batch-size", (char *)batch, "--repeat", "1", "--warmup", "0", "--progress",
                    "never", "--configs", "ref:encoder:fp64,cpu:attention24:fp32", NULL};
    int rc = spawn(argv, log, &m.wall, &m.cpu, &m.parent_kib);
    /* the workers' peaks read line by line: loading the whole summary (87 MB at 100,000 events)
     * would leave this process ~400 MB, which the next run's fork counts as the child's peak */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    FILE *f = fopen(path, "r");
    char line[512];
    double bytes;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, " \"vmhwm_bytes\": %lf", &bytes) == 1 && (long)(bytes / 1024) > m.worker_kib)
            m.worker_kib = (long)(bytes / 1024);
    m.ok = rc == 0 && f;
    if (f) fclose(f);
    m.events_per_s = (double)events / m.wall;
    return m;
}

/* The bare loop's seconds over the batches of a run in `dir`: wall, *cpu CPU. */
static double bare_seconds(const char *self, const char *dir, double *cpu)
{
    char cmd[PATH_MAX * 4];
    snprintf(cmd, sizeof cmd, "'%s' --bare 2 '%s/encoder_attention24_fp32.onnx' '%s'", self, dir, dir);
    FILE *p = popen(cmd, "r");
    double v = 0;
    if (!p || fscanf(p, "%lf %lf", &v, cpu) != 2) v = 0;
    if (p) pclose(p);
    return v;
}

static measured size_run(const char *tool, const char *root, const char *cache, long events, const char *batch)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/n%ld", root, events);
    measured cold = validate(tool, dir, cache, events, batch), warm = validate(tool, dir, cache, events, batch);
    printf("%8ld events: cold %.1f s; cached reference: wall %.1f s, CPU %.1f s, %.0f events/s, peak RSS largest "
           "process %.1f MiB, largest worker %.1f MiB%s\n",
           events, cold.wall, warm.wall, warm.cpu, warm.events_per_s, warm.parent_kib / 1024.0, warm.worker_kib / 1024.0,
           cold.ok && warm.ok ? "" : " (a run FAILED: see its .log)");
    return warm;
}

/* The median of n ratios, as the tool computes its latency percentiles. */
static double median(const double *v, int n)
{
    oq_stats st;
    return oq_stats_compute(v, (size_t)n, &st, NULL) == OQ_OK ? st.p50 : 0;
}

#define MAX_ROUNDS 15

/* Rounds of the bare loop and the cached validation of LARGE, one after the other, so that
 * the machine's moods fall on both alike; the median of each round's ratio. */
static int throughput(const char *self, const char *tool, const char *root, const char *cache, long large,
                      const char *batch, int rounds, measured first)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/n%ld", root, large);
    double wall[MAX_ROUNDS], cpu[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < rounds; r++) {
        double bare_cpu = 0, bare_s = bare_seconds(self, dir, &bare_cpu);
        measured m = r ? validate(tool, dir, cache, large, batch) : first;
        if (bare_s <= 0 || !m.ok) {
            printf("round %d: NOT MEASURED (%s failed)\n", r + 1, bare_s <= 0 ? "the bare loop" : "validate");
            continue;
        }
        wall[n] = bare_s / m.wall;
        cpu[n] = m.cpu > 0 ? bare_cpu / m.cpu : 0;
        printf("round %d: bare loop %.2f s (CPU %.2f), validate %.2f s (CPU %.2f): events/s ratio %.2f, CPU %.2f; "
               "load average %s", r + 1, bare_s, bare_cpu, m.wall, m.cpu, wall[n], cpu[n], load_average());
        n++;
    }
    if (!n) {
        /* never a ratio of 0: nothing was compared (set ORTQUAL_ORT_LIB where ORT is not found) */
        printf("events/s against a bare ORT loop: NOT MEASURED (no round ran both)\n");
        return 1;
    }
    double w = median(wall, n), c = median(cpu, n);
    printf("events/s, validate (cached reference) / bare ORT loop over the same %ld events, median of %d "
           "round%s: %.2f (target >= 0.8): %s; CPU seconds bare / validate %.2f\n",
           large, n, n > 1 ? "s" : "", w, w >= 0.8 ? "yes" : "NO", c);
    return n == rounds ? 0 : 1;
}

int main(int argc, char **argv)
{
    char self[PATH_MAX], tool[PATH_MAX + 16], dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    if (argc == 5 && !strcmp(argv[1], "--bare")) return bare(argc - 2, argv + 2);
    const char *batch = "3";
    int rounds = 3;
    while (argc > 2 && (!strcmp(argv[1], "--batch-size") || !strcmp(argv[1], "--rounds"))) {
        if (!strcmp(argv[1], "--batch-size")) batch = argv[2];
        else rounds = atoi(argv[2]);
        argc -= 2;
        argv += 2;
    }
    /* "--help" or one size alone ran the whole default benchmark (the argument ignored) */
    if (argc == 2 || argc > 4 || (argc > 1 && argv[1][0] == '-') || (argc > 2 && (atol(argv[1]) < 1 || atol(argv[2]) < 1))) {
        const int help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
        fprintf(help ? stdout : stderr,
                "usage: validate_scale [--batch-size N] [--rounds R] [SMALL LARGE] [path/to/ortqual]\n"
                "       (default: batches of 3, 3 rounds, 1000 and 100000 events, the ortqual beside this program)\n");
        return help ? 0 : 2;
    }
    if (atol(batch) < 1) return fprintf(stderr, "validate_scale: --batch-size %s: not a positive count\n", batch), 2;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        return fprintf(stderr, "validate_scale: --rounds %d: want 1..%d\n", rounds, MAX_ROUNDS), 2;
    snprintf(dir, sizeof dir, "%s", self);
    snprintf(tool, sizeof tool, "%s/../ortqual", dirname(dir));
    long small = argc > 2 ? atol(argv[1]) : 1000, large = argc > 2 ? atol(argv[2]) : 100000;
    const char *t = argc > 3 ? argv[3] : tool;
    printf("batches of %s events; load average %s", batch, load_average());
    char root[] = "/tmp/oq_validate_scale_XXXXXX", cache[PATH_MAX];
    if (!mkdtemp(root)) return perror("mkdtemp"), 2;
    snprintf(cache, sizeof cache, "%s/cache", root);
    measured s = size_run(t, root, cache, small, batch), l = size_run(t, root, cache, large, batch);
    double parent = (double)l.parent_kib / (double)s.parent_kib, worker = (double)l.worker_kib / (double)s.worker_kib;
    printf("peak RSS %ld / %ld events: largest process %.2f, largest worker %.2f (target <= 1.05): %s\n", large, small, parent, worker,
           !s.ok || !l.ok ? "NOT MEASURED (a run failed)" : parent <= 1.05 && worker <= 1.05 ? "yes" : "NO");
    int rc = throughput(self, t, root, cache, large, batch, rounds, l);
    char rm[PATH_MAX + 16];
    snprintf(rm, sizeof rm, "rm -rf '%s'", root);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", root);
    return s.ok && l.ok && !rc ? 0 : 1;
}
