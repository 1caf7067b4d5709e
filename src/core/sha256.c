/* SHA-256 (FIPS 180-4), to name files and plans by their content. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "core/core-impl.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void oq_sha256_blocks_portable(uint32_t h[8], const unsigned char *p, size_t n)
{
    for (; n--; p += 64) {
        uint32_t w[64], v[8];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        memcpy(v, h, sizeof v);
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) +
                          K[i] + w[i];
            uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
            v[7] = v[6], v[6] = v[5], v[5] = v[4], v[4] = v[3] + t1;
            v[3] = v[2], v[2] = v[1], v[1] = v[0], v[0] = t1 + t2;
        }
        for (int i = 0; i < 8; i++) h[i] += v[i];
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

/* The x86 SHA extensions (SHA-NI): ~10x the portable code, which made hashing the largest
 * cost of a cached reference (validate hashes every batch's inputs and cache entry). Four
 * rounds per step; the message schedule kept in four registers of four words. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_ni(uint32_t h[8], const unsigned char *p, size_t n)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1); /* CDAB */
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B); /* EFGH */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);                                          /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xF0);                                               /* CDGH */
    for (; n--; p += 64) {
        __m128i abef = s0, cdgh = s1, w[4];
        for (int i = 0; i < 4; i++) w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
        /* unrolled, so w[] stays in registers: 1.0-1.3 -> 1.5-1.6 GB/s on the dev VM's Intel Xeon */
#pragma GCC unroll 16
        for (int g = 0; g < 16; g++) {
            __m128i m = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&K[4 * g]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, m);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
            if (g >= 12) continue;
            /* words 4(g+4)..4(g+4)+3 from those of steps g..g+3 */
            __m128i x = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
            x = _mm_add_epi32(x, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
            w[g & 3] = _mm_sha256msg2_epu32(x, w[(g + 3) & 3]);
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    t = _mm_shuffle_epi32(s0, 0x1B);  /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1); /* DCHG */
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xF0)); /* DCBA */
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));    /* HGFE */
}

static int has_sha_ni(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}
#endif

static void (*blocks_fn)(uint32_t h[8], const unsigned char *p, size_t n);
static once_flag blocks_once = ONCE_FLAG_INIT;

static void blocks_pick(void)
{
    blocks_fn = oq_sha256_blocks_portable;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (has_sha_ni()) blocks_fn = blocks_ni;
#endif
}

void oq_sha256_blocks(uint32_t h[8], const unsigned char *p, size_t n)
{
    call_once(&blocks_once, blocks_pick);
    blocks_fn(h, p, n);
}

void oq_sha256_init(oq_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->used = 0;
}

void oq_sha256_update(oq_sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    if (!n) return;
    s->bytes += n;
    if (s->used) { /* the block begun earlier, completed first */
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->buf + s->used, p, take);
        s->used += take, p += take, n -= take;
        if (s->used < 64) return;
        oq_sha256_blocks(s->h, s->buf, 1);
        s->used = 0;
    }
    oq_sha256_blocks(s->h, p, n / 64); /* whole blocks straight from the caller's bytes */
    p += n / 64 * 64;
    memcpy(s->buf, p, n % 64);
    s->used = n % 64;
}

void oq_sha256_hex(oq_sha256 *s, char hex[65])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad[72] = {0x80};
    size_t npad = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++) pad[npad + i] = (unsigned char)(bits >> (56 - 8 * i));
    oq_sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", s->h[i]);
}

void oq_sha256_buf(const void *data, size_t n, char hex[65])
{
    oq_sha256 s;
    oq_sha256_init(&s);
    oq_sha256_update(&s, data, n);
    oq_sha256_hex(&s, hex);
}

int oq_sha256_hex_at(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

/* Files hashed before, known by identity: a validation's workers each named the ORT library
 * (tens of MB, 20 ms) by its bytes, forked from a parent that had just done so. The same device,
 * inode, size, mtime and ctime are the same bytes: a write moves ctime, which no call sets. A
 * write in the clock tick of the hash would not, so a file changed less than MEMO_RACY_S
 * before its hash began is not kept (git's "racily clean"), and small files are not worth it. */
#define MEMO_MIN_BYTES (1 << 20)
#define MEMO_N 8
#define MEMO_RACY_S 2

typedef struct memo_entry {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    char hex[65];
} memo_entry;

static struct {
    memo_entry e[MEMO_N];
    size_t n, next;
    unsigned long hits;
    mtx_t lock;
} memo;
static once_flag memo_once = ONCE_FLAG_INIT;

static void memo_init(void) { mtx_init(&memo.lock, mtx_plain); }

static int ts_eq(struct timespec a, struct timespec b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

static int same_file(const memo_entry *m, const struct stat *sb)
{
    return m->dev == sb->st_dev && m->ino == sb->st_ino && m->size == sb->st_size && ts_eq(m->mtime, sb->st_mtim) &&
           ts_eq(m->ctime, sb->st_ctim);
}

static int memo_get(const struct stat *sb, char hex[65])
{
    int hit = 0;
    call_once(&memo_once, memo_init);
    mtx_lock(&memo.lock);
    for (size_t i = 0; i < memo.n && !hit; i++)
        if (same_file(&memo.e[i], sb)) hit = 1, memcpy(hex, memo.e[i].hex, 65), memo.hits++;
    mtx_unlock(&memo.lock);
    return hit;
}

/* Kept when the file was settled before the hash began and is the same file after it. */
static void memo_put(const struct stat *before, const struct stat *after, time_t began, const char hex[65])
{
    if (before->st_size < MEMO_MIN_BYTES || before->st_ctim.tv_sec + MEMO_RACY_S > began ||
        before->st_mtim.tv_sec + MEMO_RACY_S > began)
        return;
    memo_entry m = {before->st_dev, before->st_ino, before->st_size, before->st_mtim, before->st_ctim, ""};
    if (!same_file(&m, after)) return;
    memcpy(m.hex, hex, 65);
    mtx_lock(&memo.lock);
    memo.e[memo.next] = m;
    memo.next = (memo.next + 1) % MEMO_N;
    if (memo.n < MEMO_N) memo.n++;
    mtx_unlock(&memo.lock);
}

unsigned long oq_sha256_memo_hits(void)
{
    call_once(&memo_once, memo_init);
    mtx_lock(&memo.lock);
    unsigned long n = memo.hits;
    mtx_unlock(&memo.lock);
    return n;
}

static oq_status hash_fd(int fd, const char *name, char hex[65], oq_err *err)
{
    oq_sha256 s;
    oq_sha256_init(&s);
    unsigned char buf[1 << 16];
    for (off_t at = 0;;) { /* pread: the caller's descriptor keeps its offset */
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return oq_err_set(err, OQ_ERR_IO, "%s: read error", name);
        if (n == 0) break;
        oq_sha256_update(&s, buf, (size_t)n);
        at += n;
    }
    oq_sha256_hex(&s, hex);
    return OQ_OK;
}

oq_status oq_sha256_fd(int fd, const char *name, char hex[65], oq_err *err)
{
    struct stat sb, after;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return oq_err_set(err, OQ_ERR_IO, "%s: not a regular file", name);
    if (sb.st_size >= MEMO_MIN_BYTES && memo_get(&sb, hex)) return OQ_OK;
    time_t began = time(NULL);
    oq_status st = hash_fd(fd, name, hex, err);
    if (!st && sb.st_size >= MEMO_MIN_BYTES && fstat(fd, &after) == 0) memo_put(&sb, &after, began, hex);
    return st;
}

oq_status oq_sha256_file(const char *path, char hex[65], oq_err *err)
{
    /* without blocking, and a regular file only: a FIFO would wait for a writer and a device
     * (/dev/zero) has no end; an external-data location of a model may name either */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    oq_status st = oq_sha256_fd(fd, path, hex, err);
    close(fd);
    return st;
}
