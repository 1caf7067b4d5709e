/* npz_read: what reading one batch's .npz costs, the plain path against libzip's.
 *
 *   build/bench/npz_read [ITERATIONS]
 *
 * Builds the two archives a validate worker reads per batch with the library's own writer
 * (stored, as validate writes them): inputs (float32 features [3,88,17], bool mask [3,88])
 * and reference outputs (float64 [3,88,8]), about 18 KB each. Times oq_npz_parse (which
 * takes the plain path for these: checked) against oq_npz_parse_libzip from memory, and
 * oq_npz_read against oq_npz_read_libzip (libzip streaming the file) from a file, alternating the two in ROUNDS rounds of ITERATIONS (default 2000) calls, and prints
 * the best round's microseconds per archive and libzip / plain. Then the CRC-32 every member is
 * checked with: oq_crc32 (carry-less multiply) against zlib's crc32_z over the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "npz/npz-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "usage.h"

#define ROUNDS 5

typedef oq_status (*parse_fn)(const void *, size_t, const char *, oq_npz **, oq_err *);
typedef oq_status (*read_fn)(const char *, oq_npz **, oq_err *);

/* One way of reading an archive: from `buf` (parse) or from `path` (read). */
typedef struct reader {
    parse_fn parse;
    read_fn read;
} reader;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check(oq_status st, const oq_err *err)
{
    if (!st) return;
    fprintf(stderr, "npz_read: %s\n", err->msg);
    exit(1);
}

/* Microseconds per archive of `iters` reads. */
static double time_reads(reader r, const unsigned char *buf, size_t n, const char *path, int iters)
{
    oq_err err = {0};
    double t0 = now_s();
    for (int i = 0; i < iters; i++) {
        oq_npz *z = NULL;
        check(r.parse ? r.parse(buf, n, path, &z, &err) : r.read(path, &z, &err), &err);
        oq_npz_free(z);
    }
    return (now_s() - t0) / iters * 1e6;
}

/* The best round of each reader, alternating them so both see the same machine. */
static void compare(const char *what, reader plain, reader lib, const unsigned char *buf, size_t n,
                    const char *path, int iters)
{
    double best_plain = 1e30, best_lib = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double p = time_reads(plain, buf, n, path, iters), l = time_reads(lib, buf, n, path, iters);
        best_plain = p < best_plain ? p : best_plain;
        best_lib = l < best_lib ? l : best_lib;
    }
    printf("%-28s plain %7.2f us   libzip %7.2f us   libzip/plain %5.1fx\n", what, best_plain, best_lib,
           best_lib / best_plain);
}

static oq_tensor *filled(oq_dtype dt, int32_t ndim, const int64_t *shape, const char *name)
{
    oq_err err = {0};
    oq_tensor *t = NULL;
    check(oq_tensor_create(&t, dt, ndim, shape, name, &err), &err);
    unsigned char *p = t->data;
    size_t nb = oq_tensor_nbytes(t);
    for (size_t i = 0; i < nb; i++) p[i] = dt == OQ_DTYPE_BOOL ? (i % 5 != 0) : (unsigned char)(i * 37 + 11);
    return t;
}

/* Time both paths on the archive of `ts`: from memory, then from a file. */
static void bench_archive(const char *label, size_t nt, oq_tensor **ts, int iters)
{
    oq_err err = {0};
    unsigned char *buf = NULL;
    size_t n = 0;
    check(oq_npz_bytes(nt, (const oq_tensor *const *)ts, 0, label, &buf, &n, &err), &err);
    char path[] = "/tmp/npz_read_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n || close(fd) != 0) {
        perror("npz_read: temporary file");
        exit(1);
    }
    oq_npz *z = NULL;
    check(oq_npz_parse_plain(buf, n, label, &z, &err), &err);
    if (!z) {
        fprintf(stderr, "npz_read: %s: not read by the plain path\n", label);
        exit(1);
    }
    oq_npz_free(z);
    char what[128];
    snprintf(what, sizeof what, "parse %s (%zu B)", label, n);
    compare(what, (reader){oq_npz_parse, NULL}, (reader){oq_npz_parse_libzip, NULL}, buf, n, label, iters);
    snprintf(what, sizeof what, "read %s (%zu B)", label, n);
    compare(what, (reader){NULL, oq_npz_read}, (reader){NULL, oq_npz_read_libzip}, NULL, 0, path, iters);
    unlink(path);
    free(buf);
}

/* Microseconds a call of crc over n bytes, the best of ROUNDS rounds of `iters`. */
static double crc_us(uint32_t (*crc)(uint32_t, const void *, size_t), const unsigned char *b, size_t n, int iters,
                     uint32_t *sum)
{
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        for (int i = 0; i < iters; i++) *sum += crc(*sum, b, n);
        double t = (now_s() - t0) / iters * 1e6;
        if (t < best) best = t;
    }
    return best;
}

static void bench_crc(size_t n, int iters)
{
    unsigned char *b = malloc(n);
    if (!b) exit(1);
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 131 + 7);
    uint32_t sum = 0;
    double ni = crc_us(oq_crc32, b, n, iters, &sum), zlib = crc_us(oq_crc32_portable, b, n, iters, &sum);
    printf("crc32 %zu B                 oq      %5.2f us   zlib     %5.2f us   zlib/oq        %.1fx  (%08x)\n", n, ni,
           zlib, zlib / ni, (unsigned)sum);
    free(b);
}

int main(int argc, char **argv)
{
    int iters = argc == 2 ? atoi(argv[1]) : 2000;
    if (iters <= 0 || argc > 2) return bench_usage("usage: npz_read [ITERATIONS]\n", argc == 2 && bench_is_help(argv[1]));
    oq_tensor *inputs[2] = {filled(OQ_DTYPE_FLOAT32, 3, (int64_t[]){3, 88, 17}, "features"),
                            filled(OQ_DTYPE_BOOL, 2, (int64_t[]){3, 88}, "mask")};
    oq_tensor *outputs[1] = {filled(OQ_DTYPE_FLOAT64, 3, (int64_t[]){3, 88, 8}, "output")};
    printf("best of %d rounds of %d archives each\n", ROUNDS, iters);
    bench_archive("inputs.npz", 2, inputs, iters);
    bench_archive("outputs.npz", 1, outputs, iters);
    bench_crc(18686, iters);
    oq_tensor_free(inputs[0]);
    oq_tensor_free(inputs[1]);
    oq_tensor_free(outputs[0]);
    return 0;
}
