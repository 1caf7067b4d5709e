/* fp_ports: what one core of this machine issues per cycle, and the bound it puts on the float64
 * reference's Attention kernel (src/reference/kernels.c, rows in lanes) at L=4096, 16 heads,
 * head size 16: the number ref_vs_ort's 1-thread time is to be read against.
 *
 * Measured with fixed instruction streams (inline assembly, 512-bit, independent registers, so
 * that only throughput counts): the clock from a chain of dependent integer additions (one per
 * cycle on every x86-64 core), then FMAs alone, FMAs beside additions (separate units or not),
 * and FMAs and additions that take a broadcast from memory (the loads' rate). The kernel's
 * per-key costs, per block of 8 query rows: scores 16 FMAs each with a broadcast of K; weights
 * and weighted sums 16 FMAs each with a broadcast of V, plus 8 FMA-unit instructions for the exp.
 *
 *   build/bench/fp_ports
 *
 * Then the kernel itself, timed beside: one block of 8 rows over 4096 keys (the best of 60
 * rounds), in cycles per key, and the share of the bound it reaches.
 *
 * Every figure is the best of many short rounds of this thread's CPU time: one long wall-clock
 * timing of the clock on a loaded host took every preemption (0.8 GHz on a >2 GHz EPYC) and so
 * inflated every "per cycle" figure past what a core issues, and the kernel beat its "bound" by
 * 3x. A rate above the issue width or a kernel faster than its bound still says the measurement
 * was disturbed: the program then claims nothing and exits 1.
 *
 * x86-64 with AVX-512 only; elsewhere it says so and exits 0 (nothing measured, nothing claimed). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "reference/reference-impl.h"
#include "usage.h"

#define USAGE "usage: fp_ports   (no arguments: measures one core and the reference kernel's bound)\n"

#if defined(__x86_64__) && defined(__GNUC__)

/* One round: short enough (~1 ms) to run between two preemptions on a loaded host. */
#define ITERS 250000L
#define ROUNDS 400
/* No x86-64 core issues more 512-bit FMAs a cycle, nor more 512-bit vector operations (Zen 5:
 * 2 FMA and 2 add pipes; Intel: 2 FMA ports), with a margin for the clock's own error. */
#define MAX_FMA 2.2
#define MAX_VEC 4.4

/* This thread's CPU time: another process running on the core is not counted. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The best of ROUNDS loops of `body` (ITERS times each); its seconds in secs. */
#define TIMED(body, ...)                                                                          \
    do {                                                                                          \
        secs = 1e30;                                                                              \
        for (int round = 0; round < ROUNDS; round++) {                                            \
            const double t0 = now();                                                              \
            __asm__ volatile("mov %0, %%rcx\n1:\n" body "dec %%rcx\njnz 1b\n" : : "r"(ITERS), __VA_ARGS__); \
            const double t = now() - t0;                                                          \
            secs = t < secs ? t : secs;                                                           \
        }                                                                                         \
    } while (0)

static double buf[64] __attribute__((aligned(64)));

/* GHz: 4 dependent integer additions a loop, one cycle each; the best of ROUNDS rounds. */
static double clock_ghz(void)
{
    double best = 1e30;
    for (int round = 0; round < ROUNDS; round++) {
        long x = 0;
        const double t0 = now();
        for (long k = 0; k < ITERS * 4; k++) __asm__ volatile("add $1,%0\nadd $1,%0\nadd $1,%0\nadd $1,%0" : "+r"(x));
        const double t = now() - t0;
        best = t < best ? t : best;
    }
    return (double)ITERS * 16 / best / 1e9;
}

#define FMA(r) "vfmadd231pd %%zmm0, %%zmm1, %%zmm" #r "\n"
#define ADD(r) "vaddpd %%zmm0, %%zmm" #r ", %%zmm" #r "\n"
#define FMA_B(off, r) "vfmadd231pd " #off "(%1)%{1to8%}, %%zmm1, %%zmm" #r "\n"
#define ADD_B(off, r) "vaddpd " #off "(%1)%{1to8%}, %%zmm1, %%zmm" #r "\n"
#define CLOBBERS "rcx", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "memory"

/* Prints the rates and the kernel's bound per key of 8 rows; returns that bound in cycles, 0 when
 * a rate is above what a core issues (said). */
__attribute__((target("avx512f"))) static double measure(double ghz)
{
    double secs, fma, fma_add, mem_ops;
    __asm__ volatile("vxorpd %%zmm0, %%zmm0, %%zmm0\nvxorpd %%zmm1, %%zmm1, %%zmm1" ::: "xmm0", "xmm1");
    TIMED(FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7) FMA(8) FMA(9) FMA(10) FMA(11) FMA(12) FMA(13), "r"(buf) : CLOBBERS);
    fma = 12.0 * (double)ITERS / (secs * ghz * 1e9);
    TIMED(FMA(2) ADD(10) FMA(3) ADD(11) FMA(4) ADD(12) FMA(5) ADD(13) FMA(6) ADD(14) FMA(7) ADD(15) FMA(8) ADD(16) FMA(9) ADD(17),
          "r"(buf) : CLOBBERS);
    fma_add = 16.0 * (double)ITERS / (secs * ghz * 1e9);
    TIMED(FMA_B(0, 2) ADD_B(64, 8) FMA_B(8, 3) ADD_B(72, 9) FMA_B(16, 4) ADD_B(80, 10) FMA_B(24, 5) ADD_B(88, 11)
              FMA_B(32, 6) ADD_B(96, 12) FMA_B(40, 7) ADD_B(104, 13),
          "r"(buf) : CLOBBERS);
    mem_ops = 12.0 * (double)ITERS / (secs * ghz * 1e9);
    /* the kernel's bound per key of a block of 8 rows: the scores' broadcasts, then the FMA units' work */
    const double scores = 16 / (mem_ops < fma ? mem_ops : fma), sums = 24 / fma;
    const double keys = 4096.0 * 4096.0 / 8 * 16;
    printf("fp_ports: one core, 512-bit instructions, per cycle at %.2f GHz (integer add chain)\n", ghz);
    printf("  FMAs alone                          %.2f\n", fma);
    printf("  FMAs and additions, mixed 1:1       %.2f  (%s)\n", fma_add,
           fma_add > fma * 1.3 ? "separate units: additions do not slow FMAs" : "one set of units");
    printf("  ops with a broadcast from memory    %.2f  (the loads' rate)\n", mem_ops);
    printf("reference Attention kernel, per key of 8 rows: scores %.1f cycles (16 broadcasts), weights and\n"
           "weighted sums %.1f (16 + 8 FMAs): bound %.1f cycles, %.3f s at L=4096, 16 heads, head size 16\n"
           "(compare ref_vs_ort's 'reference, 1 thread')\n",
           scores, sums, scores + sums, (scores + sums) * keys / (ghz * 1e9));
    if (fma > MAX_FMA || fma_add > MAX_VEC || mem_ops > MAX_VEC) {
        printf("fp_ports: a rate above what a core issues (%.1f FMAs, %.1f operations a cycle): the clock "
               "measurement was disturbed (a loaded or throttled host); nothing claimed\n", MAX_FMA, MAX_VEC);
        return 0;
    }
    return scores + sums;
}

/* The rows-in-lanes kernel (oq_ref_attend) on one block of 8 rows over T keys, D = Dv = 16:
 * the best of `rounds` calls, in cycles per key at `ghz`. */
static double kernel_cycles(double ghz, int64_t T, int rounds)
{
    double *k = malloc(sizeof *k * (size_t)(T * 16 * 4)), *v = k + T * 16, *kp = v + T * 16, *vp = kp + T * 16;
    static double q[8 * 16], scratch[OQ_REF_ATTEND_SCRATCH], out[8 * 16];
    if (!k) return 0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int64_t i = 0; i < T * 16 * 2; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        k[i] = (double)(x >> 11) * 0x1p-52 - 0.5; /* k, then v */
    }
    for (int i = 0; i < 8 * 16; i++) q[i] = 0.25 * k[i];
    oq_ref_pack_keys(k, 16, T, 16, kp);
    oq_ref_pack_values(v, 16, T, 16, T, vp);
    oq_ref_block b = {.q = q, .ldq = 16, .rows = 8, .kp = kp, .vp = vp, .D = 16, .T = T, .Dv = 16};
    for (int r = 0; r < 8; r++) b.end[r] = T;
    double best = 1e30;
    for (int i = 0; i < rounds; i++) {
        const double t0 = now();
        oq_ref_attend(&b, scratch, out);
        const double t = now() - t0;
        best = t < best ? t : best;
    }
    free(k);
    return best * ghz * 1e9 / (double)T;
}

int main(int argc, char **argv)
{
    if (argc > 1) return bench_usage(USAGE, bench_is_help(argv[1]) && argc == 2);
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) {
        printf("fp_ports: this CPU has no AVX-512; nothing measured\n");
        return 0;
    }
    const double ghz = clock_ghz(), bound = measure(ghz);
    if (!bound) return 1;
    const double got = kernel_cycles(ghz, 4096, 60);
    printf("the kernel, timed: %.1f cycles per key of 8 rows (a block over 4096 keys, best of 60 calls):\n"
           "%.0f%% of the bound\n", got, 100.0 * bound / got);
    if (got >= bound * 0.95) return 0;
    printf("fp_ports: the kernel beat its bound: the clock measurement was disturbed; rerun on an idle host\n");
    return 1;
}

#else
int main(int argc, char **argv)
{
    if (argc > 1) return bench_usage(USAGE, bench_is_help(argv[1]) && argc == 2);
    printf("fp_ports: x86-64 with GCC or Clang only; nothing measured\n");
    return 0;
}
#endif
