/* validate_cost: what the demo validation costs on this machine, measured.
 *
 *   build/bench/validate_cost [path/to/ortqual]
 *   build/bench/validate_cost --demo ROUNDS TOOL_A TOOL_B
 *
 * The second form compares two builds on the demo alone, side by side: A and B alternate,
 * ROUNDS each, and it prints each run's rest, wall and CPU time, the medians and B / A.
 *
 * Runs `ortqual validate` as a user would (each configuration in its own worker process),
 * twice: the built-in demo (target: within 10 s wall time on a 2-core machine) and a
 * larger run with long events (target: peak RSS above what the ORT session holds under
 * 2x the largest batch's input + output bytes, i.e. batches are streamed, not all held).
 * Prints the wall time, the breakdown (session creation, runs, reference, comparison,
 * file reading/writing, the rest: preparation, export, plots, process start and ORT's load
 * in every worker), the CPU time of every process of the run (getrusage of the children:
 * on a shared machine the wall time is mostly waiting) and, for the demo, the rest against
 * its target (<= 0.3 s) and whether it is met; and, per
 * configuration, the memory above what the session holds against 2x the batch bytes.
 * "What the session holds" is measured side by side: this program re-runs itself as a
 * bare ORT loop (`--bare MODEL INPUTS...`: load ORT, create the session, run every batch
 * once, nothing else) over the same model and batches, in the same order, so ORT's arena
 * grows the same way; its peak RSS (VmHWM) is the session's own. Each process's RSS at its
 * start (code and libraries, which differ between the two binaries) is subtracted from its
 * peak; what the worker grows beyond what the bare loop grows is what ortqual adds:
 * reference outputs, comparison, bookkeeping. */
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bare.h"
#include "ortqual/bench.h"
#include "ortqual/npz.h"
#include "ortqual/proc.h"
#include "ortqual/runtime.h"

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

/* The demo's rest (wall time outside the parts the workers account for) may be this much. */
#define REST_TARGET_S 0.3

/* What the run cost: wall / (ORT run time of the configurations under test), the rest, and
 * the CPU time of every process of the run. */
typedef struct run_cost {
    double ratio, rest, cpu_user, cpu_sys;
    int measured; /* the run wrote its summary: the numbers above are its */
} run_cost;

static double tv_s(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

/* CPU time (user, system) of the children waited for so far: the parent and all its workers. */
static void children_cpu(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    *user = tv_s(ru.ru_utime);
    *sys = tv_s(ru.ru_stime);
}

/* Prints the breakdown of the wall time and the CPU time; fills ratio and rest. The reference's
 * batches that the cache gave tell the second run of the same inputs (target <= 1.15). */
static void breakdown(const json_t *summary, double wall, run_cost *rc)
{
    double session = 0, run = 0, ref = 0, compare = 0, io = 0;
    size_t i, workers = 0;
    json_t *c;
    json_array_foreach(json_object_get(summary, "configs"), i, c) {
        const json_t *cost = json_object_get(c, "cost");
        workers += json_object_get(c, "worker") != NULL;
        session += num(cost, "session_s");
        if (json_is_true(json_object_get(c, "reference"))) ref += num(cost, "run_s");
        else run += num(cost, "run_s");
        compare += num(cost, "compare_s");
        io += num(cost, "io_s");
    }
    double accounted = session + run + ref + compare + io, rest = wall - accounted;
    double cpu = rc->cpu_user + rc->cpu_sys;
    printf("  wall %.2f s = session creation %.2f + ORT runs %.2f + reference %.2f + comparison %.3f"
           " + file i/o %.3f + rest %.2f (preparation, export, plots, process start, ORT's load per worker)\n",
           wall, session, run, ref, compare, io, rest);
    printf("  CPU of the run's %zu processes (parent and workers): %.2f s (user %.2f + system %.2f), %.0f%% of the wall"
           " time\n", workers + 1, cpu, rc->cpu_user, rc->cpu_sys, wall > 0 ? 100 * cpu / wall : 0);
    /* the accounted parts are wall times of CPU-bound work: their CPU when the machine is idle */
    if (cpu > accounted)
        printf("  the rest in CPU time: at least %.2f s (CPU of all processes minus the accounted wall times)\n",
               cpu - accounted);
    size_t cached = 0, n = 0;
    const json_t *ref_cfg = json_array_get(json_object_get(summary, "configs"), 0), *b;
    json_array_foreach(json_object_get(ref_cfg, "batches"), i, b) {
        n++;
        cached += json_is_true(json_object_get(b, "reference_cached"));
    }
    printf("  reference: %zu of %zu batches from cache; wall / ORT run time of the configurations under test: %.2f\n",
           cached, n, run > 0 ? wall / run : 0);
    rc->ratio = run > 0 ? wall / run : 0;
    rc->rest = rest;
}

/* The demo's rest without the printing: runs `tool validate` into a fresh directory. */
static int demo_once(const char *tool, const char *cache, run_cost *rc)
{
    char dir[] = "/tmp/oq_validate_cost_XXXXXX", path[PATH_MAX + 32];
    if (!mkdtemp(dir)) return perror("mkdtemp"), 0;
    char *argv[] = {(char *)tool, "validate", "--outdir", dir, "--force", "--cache-dir", (char *)cache, NULL};
    oq_proc_result pr;
    oq_err e = {0};
    double u0, s0;
    children_cpu(&u0, &s0);
    fflush(stdout);
    int fd = dup(1), null = open("/dev/null", O_WRONLY); /* the tool's table is not ours to print */
    dup2(null, 1);
    oq_status st = oq_proc_run(argv, 600, 2048, 0, &pr, &e);
    dup2(fd, 1);
    close(fd);
    close(null);
    if (st) return fprintf(stderr, "%s\n", e.msg), 0;
    children_cpu(&rc->cpu_user, &rc->cpu_sys);
    rc->cpu_user -= u0;
    rc->cpu_sys -= s0;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *s = json_load_file(path, 0, NULL);
    double accounted = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(s, "configs"), i, c) {
        const json_t *cost = json_object_get(c, "cost");
        accounted += num(cost, "session_s") + num(cost, "run_s") + num(cost, "compare_s") + num(cost, "io_s");
    }
    rc->rest = pr.seconds - accounted;
    rc->ratio = pr.seconds; /* here: the wall time */
    int ok = s && pr.exit_code == 0 && !pr.signaled && !pr.timed_out;
    json_decref(s);
    oq_proc_result_clear(&pr);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    if (system(path) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return ok;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --demo N A B: the demo of tool A and of tool B, alternating, N rounds each (one untimed run
 * each first, which fills the shared reference cache): medians of the rest, the wall time and
 * the CPU time of all processes, and B's over A's. */
static int demo_rounds(int rounds, const char *tools[2])
{
    enum { MAX_ROUNDS = 64 };
    if (rounds < 1 || rounds > MAX_ROUNDS) return fprintf(stderr, "--demo: 1 to %d rounds\n", MAX_ROUNDS), 2;
    char cache[] = "/tmp/oq_validate_cost_cache_XXXXXX";
    if (!mkdtemp(cache)) return perror("mkdtemp"), 2;
    double rest[2][MAX_ROUNDS], wall[2][MAX_ROUNDS], cpu[2][MAX_ROUNDS], load[3] = {0, 0, 0};
    run_cost rc;
    int ok = demo_once(tools[0], cache, &rc) && demo_once(tools[1], cache, &rc);
    for (int r = 0; ok && r < rounds; r++)
        for (int t = 0; ok && t < 2; t++) {
            ok = demo_once(tools[t], cache, &rc);
            rest[t][r] = rc.rest;
            wall[t][r] = rc.ratio;
            cpu[t][r] = rc.cpu_user + rc.cpu_sys;
            if (getloadavg(load, 3) < 1) load[0] = -1;
            printf("round %d %s: rest %.3f s, wall %.3f s, CPU of all processes %.3f s (load average %.2f)\n", r + 1,
                   t ? "B" : "A", rest[t][r], wall[t][r], cpu[t][r], load[0]);
        }
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", cache);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", cache);
    if (!ok) return fprintf(stderr, "a demo run failed\n"), 1;
    double m[2][3];
    for (int t = 0; t < 2; t++) {
        m[t][0] = median(rest[t], rounds);
        m[t][1] = median(wall[t], rounds);
        m[t][2] = median(cpu[t], rounds);
        printf("%s %s: median of %d rounds: rest %.3f s (target <= %.1f s: %s), wall %.3f s, CPU %.3f s\n",
               t ? "B" : "A", tools[t], rounds, m[t][0], REST_TARGET_S, m[t][0] <= REST_TARGET_S ? "met" : "NOT met",
               m[t][1], m[t][2]);
    }
    printf("B / A: rest %.2f, wall %.2f, CPU %.2f (%ld CPUs, load average %.2f at the end)\n", m[1][0] / m[0][0],
           m[1][1] / m[0][1], m[1][2] / m[0][2], sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    return 0;
}

/* The bare loop: prints the process's peak RSS in bytes. */
static int bare(int argc, char **argv)
{
    uint64_t start, hwm0;
    oq_proc_memory(&start, &hwm0, NULL);
    int runs = atoi(argv[0]); /* calls per batch, as the worker made them */
    argc--, argv++;
    oq_runtime *rt;
    oq_session *s;
    oq_err e = {0};
    oq_session_opts so = {0};
    if (oq_runtime_load(NULL, &rt, &e) || oq_session_create(rt, argv[0], NULL, 0, &so, &s, &e))
        return fprintf(stderr, "bare: %s\n", e.msg), 3;
    for (int i = 1; i < argc; i++) {
        if (bench_bare_batch(s, argv[i], runs, &e)) return fprintf(stderr, "bare: %s\n", e.msg), 3;
    }
    uint64_t rss, hwm;
    oq_proc_memory(&rss, &hwm, NULL);
    printf("%llu\n", (unsigned long long)(hwm - start));
    oq_session_free(s);
    return 0;
}

/* Peak RSS of the bare loop over one configuration's model and the run's batches. */
static double bare_peak(const char *self, const char *model, const json_t *summary, const json_t *cfg)
{
    char cmd[16384];
    const json_t *b0 = json_array_get(json_object_get(cfg, "batches"), 0);
    long runs = (long)json_integer_value(json_object_get(b0, "calls"));
    size_t used = (size_t)snprintf(cmd, sizeof cmd, "'%s' --bare %ld '%s'", self, runs, model), i;
    json_t *b;
    json_array_foreach(json_object_get(summary, "batches"), i, b)
        used += (size_t)snprintf(cmd + used, sizeof cmd - used, " '%s'", json_string_value(json_object_get(b, "inputs")));
    FILE *p = popen(cmd, "r");
    double v = 0;
    if (!p || fscanf(p, "%lf", &v) != 1) v = 0;
    if (p) pclose(p);
    return v;
}

static int memory(const json_t *summary, const char *self)
{
    size_t i;
    json_t *c;
    int ok = 1;
    json_array_foreach(json_object_get(summary, "configs"), i, c) {
        const json_t *cost = json_object_get(c, "cost");
        const char *model = json_string_value(json_object_get(c, "model_file"));
        if (!model) continue; /* the reference has no session */
        double held = bare_peak(self, model, summary, c);
        double peak = num(cost, "vmhwm_bytes") - num(cost, "rss_start_bytes");
        double batch = num(cost, "max_batch_bytes");
        double above = peak > held ? peak - held : 0;
        printf("  %-28s growth: bare ORT loop %7.1f MiB, worker %7.1f MiB, above %7.3f MiB, 2x batch %7.3f MiB: ratio %.2f\n",
               json_string_value(json_object_get(c, "name")), held / 1048576, peak / 1048576,
               above / 1048576, 2 * batch / 1048576, above / (2 * batch));
        ok &= above < 2 * batch;
    }
    return ok;
}

static int run(const char *tool, const char *self, const char *cache, char **extra, const char *title, run_cost *rc)
{
    char dir[] = "/tmp/oq_validate_cost_XXXXXX";
    if (!mkdtemp(dir)) return perror("mkdtemp"), 0;
    char *argv[40] = {(char *)tool, "validate", "--outdir", dir, "--force", "--cache-dir", (char *)cache};
    int n = 7;
    while (*extra && n < 30) argv[n++] = *extra++;
    argv[n] = NULL;
    oq_proc_result pr;
    oq_err e = {0};
    char path[PATH_MAX + 32], how[128];
    double u0, s0;
    children_cpu(&u0, &s0);
    if (oq_proc_run(argv, 600, 2048, 0, &pr, &e)) return fprintf(stderr, "%s\n", e.msg), 0;
    children_cpu(&rc->cpu_user, &rc->cpu_sys);
    rc->cpu_user -= u0;
    rc->cpu_sys -= s0;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *s = json_load_file(path, 0, NULL);
    printf("%s: %s, verdict %s\n", title, oq_proc_describe(&pr, how, sizeof how),
           s ? json_string_value(json_object_get(s, "verdict")) : "(no summary)");
    int ok = 0;
    rc->measured = s != NULL;
    if (s) {
        breakdown(s, pr.seconds, rc);
        ok = memory(s, self);
        printf("  %s\n", ok ? "memory above the sessions < 2x the largest batch: yes" : "memory above the sessions < 2x the largest batch: NO");
    }
    json_decref(s);
    oq_proc_result_clear(&pr);
    snprintf(path, sizeof path, "rm -rf '%s'", dir); /* after the bare loops read its batches */
    if (system(path) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return ok;
}

int main(int argc, char **argv)
{
    char self[PATH_MAX], tool[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", self);
    snprintf(tool, sizeof tool, "%s/../ortqual", dirname(dir));
    if (argc > 3 && !strcmp(argv[1], "--bare")) return bare(argc - 2, argv + 2);
    if (argc == 5 && !strcmp(argv[1], "--demo")) return demo_rounds(atoi(argv[2]), (const char *[2]){argv[3], argv[4]});
    /* an option is never the tool: "--help" ran as the tool, exit 127, and the rest read "met" */
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        const int help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
        fprintf(help ? stdout : stderr, "usage: validate_cost [path/to/ortqual]   (default: %s)\n"
                                        "       validate_cost --demo ROUNDS TOOL_A TOOL_B\n", tool);
        return help ? 0 : 2;
    }
    const char *t = argc > 1 ? argv[1] : tool;
    char cache[] = "/tmp/oq_validate_cost_cache_XXXXXX"; /* cold at the start: nothing of another run */
    if (!mkdtemp(cache)) return perror("mkdtemp"), 2;
    char *demo[] = {NULL};
#define LARGE "--num-events", "16", "--batch-size", "4", "--max-len", "2048", "--length-policy", "uniform 512 2048", \
              "--repeat", "1", "--no-plots", "--configs"
    char *large[] = {LARGE, "ref:encoder:fp64,cpu:attention24:fp32,cpu:decomposed:fp32", NULL};
    char *again[] = {LARGE, "ref:encoder:fp64,cpu:attention23:fp32", NULL};
    run_cost demo_cost = {0}, cost = {0};
    run(t, self, cache, demo, "demo (ortqual validate, as make run)", &demo_cost);
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) < 1) load[0] = -1;
    if (!demo_cost.measured)
        printf("demo rest: not measured (the demo wrote no summary), against the target <= %.1f s: NO\n", REST_TARGET_S);
    else
        printf("demo rest %.2f s against the target <= %.1f s: %s (CPU of all its processes %.2f s; load average %.2f on"
               " %ld CPUs: on a shared machine the wall time includes waiting)\n",
               demo_cost.rest, REST_TARGET_S, demo_cost.rest <= REST_TARGET_S ? "met" : "NOT met",
               demo_cost.cpu_user + demo_cost.cpu_sys, load[0], sysconf(_SC_NPROCESSORS_ONLN));
    int ok = run(t, self, cache, large, "large events (16 events up to 2048 elements, batches of 4)", &cost);
    ok &= run(t, self, cache, again, "large events again, one new configuration (cpu:attention23:fp32)", &cost);
    printf("second validation of the same inputs: wall / ORT run time of the configuration under test %.2f "
           "(target <= 1.15): %s\n", cost.ratio, cost.ratio > 0 && cost.ratio <= 1.15 ? "yes" : "NO");
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", cache);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", cache);
    return ok && demo_cost.measured ? 0 : 1;
}
