/* CRC-32 (the ZIP and gzip one, zlib's crc32_z) with the x86 carry-less multiply: every .npz
 * member is checked on read and summed on write, and zlib 1.2's braided tables give ~3 GB/s,
 * which was most of a small batch's parse. Four 128-bit lanes are folded 64 bytes at a time,
 * then reduced to 32 bits (Gopal et al., "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ", Intel 2009; the constants of Linux's crc32-pclmul for the reflected polynomial
 * 0xEDB88320). Short buffers and the tail go to zlib. */
#include <stdint.h>
#include <threads.h>
#include <zlib.h>

#include "core/core-impl.h"

uint32_t oq_crc32_portable(uint32_t crc, const void *p, size_t n)
{
    return (uint32_t)crc32_z(crc, p, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

#define FOLD(x, k) _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11))

/* The CRC register (not inverted) over n bytes, n >= 64 and a multiple of 16. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t fold_ni(uint32_t crc, const unsigned char *p, size_t n)
{
    const __m128i r2r1 = _mm_set_epi64x(0x00000001c6e41596, 0x0000000154442bd4);
    const __m128i r4r3 = _mm_set_epi64x(0x00000000ccaa009e, 0x00000001751997d0);
    const __m128i r5 = _mm_set_epi64x(0, 0x0000000163cd6124);
    const __m128i poly = _mm_set_epi64x(0x00000001f7011641, 0x00000001db710641); /* u', P' */
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 16)), x3 = _mm_loadu_si128((const __m128i *)(p + 32)),
            x4 = _mm_loadu_si128((const __m128i *)(p + 48));
    for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
        x1 = _mm_xor_si128(FOLD(x1, r2r1), _mm_loadu_si128((const __m128i *)p));
        x2 = _mm_xor_si128(FOLD(x2, r2r1), _mm_loadu_si128((const __m128i *)(p + 16)));
        x3 = _mm_xor_si128(FOLD(x3, r2r1), _mm_loadu_si128((const __m128i *)(p + 32)));
        x4 = _mm_xor_si128(FOLD(x4, r2r1), _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    x1 = _mm_xor_si128(FOLD(x1, r4r3), x2); /* four lanes into one */
    x1 = _mm_xor_si128(FOLD(x1, r4r3), x3);
    x1 = _mm_xor_si128(FOLD(x1, r4r3), x4);
    for (; n >= 16; p += 16, n -= 16) x1 = _mm_xor_si128(FOLD(x1, r4r3), _mm_loadu_si128((const __m128i *)p));
    /* 128 -> 64 bits (appending 32 zero bits), 64 -> 32, then Barrett's reduction */
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(r4r3, x1, 0x01));
    __m128i x2b = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), r5, 0x00), x2b);
    __m128i t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10), mask32);
    t = _mm_xor_si128(_mm_clmulepi64_si128(t, poly, 0x00), x1);
    return (uint32_t)_mm_extract_epi32(t, 1);
}

static int has_pclmul(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL) && (c & bit_SSE4_1);
}

static int use_ni;
static once_flag ni_once = ONCE_FLAG_INIT;
static void ni_pick(void) { use_ni = has_pclmul(); }

uint32_t oq_crc32(uint32_t crc, const void *data, size_t n)
{
    call_once(&ni_once, ni_pick);
    if (!use_ni || n < 64) return oq_crc32_portable(crc, data, n);
    size_t bulk = n & ~(size_t)15;
    crc = ~fold_ni(~crc, data, bulk);
    return oq_crc32_portable(crc, (const unsigned char *)data + bulk, n - bulk);
}
#else
uint32_t oq_crc32(uint32_t crc, const void *data, size_t n) { return oq_crc32_portable(crc, data, n); }
#endif
