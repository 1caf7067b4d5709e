/* One-off timing of bench --model's generated inputs (fill.c included here: before or after). */
#include FILL_SRC
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static double wall_s(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int main(void)
{
    enum { REPS = 3 };
    oq_bench_opts o;
    oq_bench_opts_default(&o);
    o.int_lo = 0;
    o.int_hi = 49999;
    oq_bench_input_info in[3] = {{.name = "x", .dtype = OQ_DTYPE_FLOAT32, .ndim = 3, .shape = {64, 2048, 128}},
                                 {.name = "ids", .dtype = OQ_DTYPE_INT64, .ndim = 2, .shape = {64, 2048}},
                                 {.name = "flag", .dtype = OQ_DTYPE_BOOL, .ndim = 2, .shape = {64, 2048}}};
    const char *fills[] = {"uniform", "integers", "ones"};
    for (int i = 0; i < 3; i++) in[i].source = "generated", in[i].fill = fills[i];
    oq_bench_point p = {.n_inputs = 3, .inputs = in};
    double w0 = wall_s(), c0 = cpu_s();
    for (int r = 0; r < REPS; r++) {
        oq_tensor **t = NULL;
        if (oq_bench_make_inputs(&o, NULL, &p, &t, NULL)) return 1;
        oq_tensors_free(t, 3);
    }
    double w = (wall_s() - w0) / REPS, c = (cpu_s() - c0) / REPS;
    int64_t n = 64 * 2048 * 128 + 2 * 64 * 2048;
    printf("%s wall_ms %.1f cpu_ms %.1f elements %lld ns_per_element %.2f\n", LABEL, w * 1e3, c * 1e3, (long long)n,
           c * 1e9 / (double)n);
    return 0;
}
