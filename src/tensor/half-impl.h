/* oq_half: IEEE binary16 in C. GCC and clang 15+ have _Float16 on x86-64; clang 14
 * (Debian 12's, which builds the fuzz harnesses) has only the storage type __fp16,
 * whose conversions round alike. Internal. */
#ifndef ORTQUAL_HALF_IMPL_H
#define ORTQUAL_HALF_IMPL_H

#if defined(__clang__) && __clang_major__ < 15
typedef __fp16 oq_half;
#else
typedef _Float16 oq_half;
#endif

#endif
