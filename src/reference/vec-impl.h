/* Vectors of 8 doubles for the reference kernels (internal).
 *
 * Written with GCC/Clang vector extensions so that the hot loops keep their
 * accumulators in registers; OQ_CLONES compiles an AVX-512 and an AVX2 variant
 * beside the baseline, picked at load time. Every thread of a process runs the
 * same variant, so the choice never depends on the thread count. */
#ifndef ORTQUAL_REFERENCE_VEC_IMPL_H
#define ORTQUAL_REFERENCE_VEC_IMPL_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define OQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OQ_CLONES
#endif

/* The vector helpers are always inlined into the cloned kernels, so no vector
 * ever crosses a call boundary and the psabi note does not apply. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define OQ_INLINE static inline __attribute__((always_inline))

typedef double v8d __attribute__((vector_size(64), aligned(8)));
typedef int64_t v8i __attribute__((vector_size(64), aligned(8)));
typedef uint64_t v8u __attribute__((vector_size(64), aligned(8)));

OQ_INLINE v8d load8(const double *p)
{
    v8d x;
    memcpy(&x, p, sizeof x);
    return x;
}

OQ_INLINE void store8(double *p, v8d x)
{
    memcpy(p, &x, sizeof x);
}

/* A shuffle of lane 0 compiles to one broadcast; GCC 12 expands a vector
 * literal {x, x, ...} inside a target_clones function into eight masked ones. */
OQ_INLINE v8d splat8(double x)
{
#if defined(__clang__)
    const v8d v = {x};
    return __builtin_shufflevector(v, v, 0, 0, 0, 0, 0, 0, 0, 0);
#else
    return __builtin_shuffle((v8d){x}, (v8i){0});
#endif
}

/* Lane-wise choice: mask lanes (all ones) from a, the others from b. */
OQ_INLINE v8d select8(v8i mask, v8d a, v8d b)
{
    return (v8d)(((v8i)a & mask) | ((v8i)b & ~mask));
}

OQ_INLINE double hsum8(v8d x)
{
    return ((x[0] + x[4]) + (x[1] + x[5])) + ((x[2] + x[6]) + (x[3] + x[7]));
}

#endif
