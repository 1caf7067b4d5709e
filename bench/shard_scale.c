/* shard_scale: does the scale-out path stream? Peak RSS of its three steps at two sizes.
 *
 *   build/bench/shard_scale [SMALL LARGE] [path/to/ortqual]      (default 1000 20000 batches)
 *   build/bench/shard_scale --prepare [SMALL LARGE] [path/to/ortqual]   (default 20000 200000)
 *
 * The tool is by default the ortqual beside this program (build/ortqual), wherever it is run.
 *
 * Prepares SMALL and then LARGE generated events in batches of one (the demo's encoder made
 * small: width 8, one layer; ref:encoder:fp64 and cpu:attention24:fp32, --repeat 1 --warmup 0,
 * 4 shards by batch), runs every shard and merges them (--no-plots). Prints each step's peak
 * RSS (wait4's rusage of the tool: the process and the workers it waited for; a shard: the
 * largest of the four) and the ratios LARGE / SMALL; target <= 1.10 for each step (the prepare
 * step, a shard and the merge hold nothing per batch). Exits 1 when a ratio misses it, 2 when a
 * step fails. Before the streamed plan (ortqual.shards/2) the ratios at 1000 / 20000 were
 * 4.08, 2.11 and 5.9. --prepare measures the prepare step alone (no shard runs, so sizes of
 * 10^5 batches and more take seconds): before the batches were streamed to the plan's files as
 * they were made, it was 3.13 at 20000 / 200000 (19.1 -> 59.8 MiB). */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "usage.h"

#define USAGE "usage: shard_scale [--prepare] [SMALL LARGE] [path/to/ortqual]   (SMALL >= 4 batches; default tool: %s)\n"

#define TARGET 1.10

/* argv run with stdout and stderr to `log`; its peak RSS in KiB (-1: it failed). */
static long peak_kib(char *const argv[], const char *log)
{
    struct rusage ru;
    return bench_spawn(argv, log, 1, &ru) == 0 ? ru.ru_maxrss : -1;
}

typedef struct steps {
    long prepare, shard, merge; /* KiB; shard: the largest */
} steps;

/* validate's options for `events` events in `dir`, then `extra` (NULL-ended), into argv. */
static void validate_argv(const char *tool, const char *events, const char *dir, const char **extra, char **argv)
{
    const char *base[] = {tool, "validate", "--num-events", events, "--batch-size", "1", "--repeat", "1",
                          "--warmup", "0", "--max-len", "16", "--length-policy", "uniform", "2", "16",
                          "--width", "8", "--ffn-width", "8", "--heads", "2", "--layers", "1", "--configs",
                          "ref:encoder:fp64,cpu:attention24:fp32", "--outdir", dir, "--no-cache", NULL};
    size_t n = 0;
    for (size_t i = 0; base[i]; i++) argv[n++] = (char *)base[i];
    for (size_t i = 0; extra[i]; i++) argv[n++] = (char *)extra[i];
    argv[n] = NULL;
}

static int measure(const char *tool, const char *root, long events, int prepare_only, steps *out)
{
    char dir[4096], log[4200], num[32], cmd[8600];
    snprintf(dir, sizeof dir, "%s/%ld", root, events);
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(num, sizeof num, "%ld", events);
    char *argv[64];
    const char *prepare[] = {"--prepare-shards", "4", NULL};
    validate_argv(tool, num, dir, prepare, argv);
    if ((out->prepare = peak_kib(argv, log)) < 0) return -1;
    out->shard = out->merge = 1;
    if (prepare_only) {
        printf("  %6ld batches: prepare %6.1f MiB\n", events, out->prepare / 1024.0);
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, log);
        return system(cmd) == 0 ? 0 : -1;
    }
    out->shard = 0;
    for (int i = 0; i < 4; i++) {
        char part[16];
        snprintf(part, sizeof part, "%d/4", i);
        const char *shard[] = {"--shard", part, "--no-plots", NULL};
        validate_argv(tool, num, dir, shard, argv);
        long kib = peak_kib(argv, log);
        if (kib < 0) return -1;
        if (kib > out->shard) out->shard = kib;
    }
    char *merge[] = {(char *)tool, "merge", "--no-plots", dir, NULL};
    if ((out->merge = peak_kib(merge, log)) < 0) return -1;
    printf("  %6ld batches: prepare %6.1f MiB, largest shard %6.1f MiB, merge %6.1f MiB\n", events,
           out->prepare / 1024.0, out->shard / 1024.0, out->merge / 1024.0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, log);
    return system(cmd) == 0 ? 0 : -1;
}

static int verdict(const char *name, long small, long large)
{
    double r = (double)large / (double)small;
    printf("  %-8s %.2f %s\n", name, r, r <= TARGET ? "yes" : "NO");
    return r <= TARGET;
}

/* The usage, the default tool named (exit 0 for --help, else 2). */
static int usage(const char *tool, int help)
{
    fprintf(help ? stdout : stderr, USAGE, tool);
    return help ? 0 : 2;
}

/* A number of batches: digits only ("--help" read as 0, then as the tool). */
static long batches(const char *arg)
{
    char *end;
    long n = strtol(arg, &end, 10);
    return *arg && !*end ? n : -1;
}

int main(int argc, char **argv)
{
    char self[PATH_MAX], tool_beside[PATH_MAX + 16];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = 0;
    snprintf(tool_beside, sizeof tool_beside, "%s/../ortqual", dirname(self));
    int prepare_only = argc > 1 && !strcmp(argv[1], "--prepare");
    if (prepare_only) argv++, argc--;
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-') return usage(tool_beside, bench_is_help(argv[i]) && argc == 2 && !prepare_only);
    if (argc > 4) return usage(tool_beside, 0);
    long small = argc > 2 ? batches(argv[1]) : prepare_only ? 20000 : 1000;
    long large = argc > 2 ? batches(argv[2]) : prepare_only ? 200000 : 20000;
    const char *tool = argc == 2 ? argv[1] : argc > 3 ? argv[3] : tool_beside;
    char root[] = "/tmp/oq_shard_scale_XXXXXX";
    if (small < 4 || large < small) return usage(tool_beside, 0);
    if (!mkdtemp(root)) return perror("shard_scale: mkdtemp"), 2;
    steps s, l;
    printf("shard_scale: %s, batches of one event, 4 shards by batch%s\n", tool, prepare_only ? ", prepared only" : "");
    int ok = measure(tool, root, small, prepare_only, &s) == 0 && measure(tool, root, large, prepare_only, &l) == 0;
    rmdir(root);
    if (!ok) {
        fprintf(stderr, "shard_scale: a step failed (its log is under %s)\n", root);
        return 2;
    }
    printf("peak RSS %ld / %ld batches (target <= %.2f):\n", large, small, TARGET);
    int met = verdict("prepare", s.prepare, l.prepare);
    if (!prepare_only) {
        met &= verdict("shard", s.shard, l.shard);
        met &= verdict("merge", s.merge, l.merge);
    }
    return met ? 0 : 1;
}
