/* xoshiro256** seeded by splitmix64 (see events.h for the exact recipe). */
#include "ortqual/events.h"

#include <math.h>

/* splitmix64's output function: a strong 64-bit mixer. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x)
{
    *x += 0x9E3779B97F4A7C15u;
    return mix64(*x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void oq_rng_seed(oq_rng *r, uint64_t seed, uint64_t stream)
{
    if (!r) return;
    /* Mixing the stream number first keeps nearby streams' states unrelated. */
    uint64_t x = mix64(seed + mix64(stream + 1));
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    r->spare = 0.0;
    r->has_spare = 0;
}

uint64_t oq_rng_next(oq_rng *r)
{
    if (!r) return 0;
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

int64_t oq_rng_uniform_int(oq_rng *r, int64_t lo, int64_t hi)
{
    if (!r) return lo;
    uint64_t range = (uint64_t)hi - (uint64_t)lo + 1u;
    if (range == 0) return (int64_t)oq_rng_next(r); /* the whole int64 range */
    /* 2^64 mod range draws at the bottom would favour small residues: reject them. */
    uint64_t threshold = (0u - range) % range;
    uint64_t x;
    do x = oq_rng_next(r);
    while (x < threshold);
    return (int64_t)((uint64_t)lo + x % range);
}

double oq_rng_normal(oq_rng *r)
{
    if (!r) return 0.0;
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    const double two_pi = 6.283185307179586476925286766559;
    double u1 = (double)((oq_rng_next(r) >> 11) + 1) * 0x1.0p-53; /* (0, 1]: log is finite */
    double u2 = (double)(oq_rng_next(r) >> 11) * 0x1.0p-53;       /* [0, 1) */
    double radius = sqrt(-2.0 * log(u1));
    r->spare = radius * sin(two_pi * u2);
    r->has_spare = 1;
    return radius * cos(two_pi * u2);
}
