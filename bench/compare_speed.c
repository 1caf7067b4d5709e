/* compare_speed: what oq_compare_tensors costs per element on a validation batch.
 *
 *   build/bench/compare_speed [--vs OTHER] [--rounds R]
 *
 * The batch is what `ortqual validate` compares at scale: float32 outputs [3,88,6] and
 * [3,88,8] against float64 references that differ by float32 rounding and a little noise,
 * masked by lengths {88,40,17} along axes 0 and 1, padding zero. Each round times
 * oq_compare_tensors over both outputs for ~0.1 s; it prints ns per element (padding
 * included), the median over the rounds (default 7) and the fastest round (what is left
 * when other processes compete for the cores).
 *
 * The implementation before is not copied in here (its histogram binning is internal to
 * the library): --vs OTHER runs OTHER, this same file built against another commit (a copy
 * of the tree at that commit with this file added, built with `cmake --build DIR --target
 * bench_compare_speed`), as `OTHER --raw` in turn with this program's rounds, so load from
 * other processes falls on both alike, and prints the speed-up OTHER / this, of the medians
 * and of the fastest rounds. It also checks that both builds give the same results (a
 * digest of every field of both results): exit status 1 when they differ.
 * --raw prints one round as "NS_PER_ELEMENT DIGEST" (what --vs reads). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ortqual/compare.h"
#include "ortqual/events.h"
#include "usage.h"

#define ROUND_S 0.1
#define MAX_ROUNDS 64

static const int64_t LENGTHS[3] = {88, 40, 17};
static const int64_t FEATURES[2] = {6, 8};

typedef struct pair {
    oq_tensor *out, *ref;
} pair;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Reference values over a few decades; the output is their float32 rounding with a relative
 * error of ~1e-7 (what ORT's float32 kernels give), zero on padding. */
static pair make_pair(int64_t features, oq_rng *r)
{
    int64_t shape[3] = {3, 88, features};
    pair p = {NULL, NULL};
    if (oq_tensor_create(&p.out, OQ_DTYPE_FLOAT32, 3, shape, "out", NULL) ||
        oq_tensor_create(&p.ref, OQ_DTYPE_FLOAT64, 3, shape, "out", NULL)) {
        fprintf(stderr, "compare_speed: out of memory\n");
        exit(3);
    }
    float *o = p.out->data;
    double *e = p.ref->data;
    for (int64_t i = 0; i < oq_tensor_numel(p.out); i++) {
        int64_t b = i / (88 * features), s = (i / features) % 88;
        double v = oq_rng_normal(r) * exp(2.0 * oq_rng_normal(r));
        int valid = s < LENGTHS[b];
        e[i] = valid ? v : 0.0;
        o[i] = valid ? (float)(v * (1.0 + 1e-7 * oq_rng_normal(r))) : 0.0f;
    }
    return p;
}

/* FNV-1a over bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211u;
    return h;
}
#define MIX(h, field) ((h) = fnv((h), &(field), sizeof(field)))

static uint64_t elem_digest(uint64_t h, const oq_compare_elem *e)
{
    MIX(h, e->index);
    MIX(h, e->coord);
    MIX(h, e->got);
    MIX(h, e->expected);
    return MIX(h, e->abs_diff);
}

/* Every field, one by one (not the struct's padding bytes). */
static uint64_t digest(uint64_t h, const oq_compare_result *r)
{
    h = fnv(h, r->name, strlen(r->name));
    MIX(h, r->ndim), MIX(h, r->shape), MIX(h, r->out_dtype), MIX(h, r->ref_dtype);
    MIX(h, r->tol.rtol), MIX(h, r->tol.atol);
    MIX(h, r->num_elements), MIX(h, r->num_valid), MIX(h, r->num_padded);
    MIX(h, r->max_abs), MIX(h, r->max_rel), MIX(h, r->mean_abs), MIX(h, r->rms), MIX(h, r->rel_l2);
    MIX(h, r->over_tol), MIX(h, r->nan_count), MIX(h, r->inf_count);
    MIX(h, r->ref_nan_count), MIX(h, r->ref_inf_count);
    MIX(h, r->exact), MIX(h, r->masked), MIX(h, r->padding_rule), MIX(h, r->padding_checked);
    MIX(h, r->pad_nonzero), MIX(h, r->ref_pad_nonzero), MIX(h, r->pad_nonfinite);
    if (r->pad_nonzero) h = elem_digest(h, &r->first_pad_nonzero);
    MIX(h, r->worst_count);
    for (int32_t i = 0; i < r->worst_count; i++) h = elem_digest(h, &r->worst[i]);
    MIX(h, r->max_abs_ref), MIX(h, r->err_hist), MIX(h, r->by_ref), MIX(h, r->passed);
    return h;
}

/* One round: ns per element, and the results' digest. */
static double round_ns(const pair *p, int n, uint64_t *dig)
{
    oq_compare_opts o = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
    o.lengths = LENGTHS;
    static oq_compare_result res;
    int64_t elems = 0;
    for (int k = 0; k < n; k++) elems += oq_tensor_numel(p[k].out);
    long iters = 0;
    double t0 = now_s(), t;
    do {
        for (int j = 0; j < 100; j++, iters++)
            for (int k = 0; k < n; k++)
                if (oq_compare_tensors(p[k].out, p[k].ref, &o, &res, NULL)) exit(3);
    } while ((t = now_s() - t0) < ROUND_S);
    *dig = 14695981039346656037u;
    for (int k = 0; k < n; k++) {
        if (oq_compare_tensors(p[k].out, p[k].ref, &o, &res, NULL)) exit(3);
        *dig = digest(*dig, &res);
    }
    return t * 1e9 / ((double)iters * (double)elems);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v (sorted in place: v[0] is then the least). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One round of OTHER --raw. */
static double other_round(const char *other, uint64_t *dig)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' --raw", other);
    FILE *f = popen(cmd, "r");
    double ns = 0;
    if (!f || fscanf(f, "%lf %" SCNx64, &ns, dig) != 2 || pclose(f) != 0) {
        fprintf(stderr, "compare_speed: '%s --raw' gave no result\n", other);
        exit(3);
    }
    return ns;
}

int main(int argc, char **argv)
{
    const char *other = NULL;
    int rounds = 7, raw = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--vs") && i + 1 < argc) other = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--raw")) raw = 1;
        else return bench_usage("usage: compare_speed [--vs OTHER] [--rounds R] [--raw]\n", bench_is_help(argv[i]));
    }
    if (rounds < 1 || rounds > MAX_ROUNDS) rounds = rounds < 1 ? 1 : MAX_ROUNDS;
    oq_rng r;
    oq_rng_seed(&r, 11, 0);
    pair p[2] = {make_pair(FEATURES[0], &r), make_pair(FEATURES[1], &r)};
    uint64_t dig, other_dig = 0;
    if (raw) {
        double ns = round_ns(p, 2, &dig);
        printf("%.4f %016" PRIx64 "\n", ns, dig);
        return 0;
    }
    double mine[MAX_ROUNDS], theirs[MAX_ROUNDS];
    for (int i = 0; i < rounds; i++) {
        if (other) theirs[i] = other_round(other, &other_dig);
        mine[i] = round_ns(p, 2, &dig);
    }
    double m = median(mine, rounds), m_min = mine[0];
    printf("compare_speed: float32 [3,88,6] + [3,88,8] vs float64, lengths {88,40,17}: "
           "%.2f ns/element (%.1f us per batch), median of %d rounds (fastest %.2f)\n", m,
           m * 3 * 88 * 14 / 1e3, rounds, m_min);
    int rc = 0;
    if (other) {
        double t = median(theirs, rounds), t_min = theirs[0];
        printf("  %s: %.2f ns/element (fastest %.2f); speed-up %.2fx (fastest against fastest %.2fx)\n",
               other, t, t_min, t / m, t_min / m_min);
        rc = other_dig != dig;
        printf("  results %s (digest %016" PRIx64 " vs %016" PRIx64 ")\n", rc ? "DIFFER" : "identical",
               dig, other_dig);
    }
    for (int k = 0; k < 2; k++) {
        oq_tensor_free(p[k].out);
        oq_tensor_free(p[k].ref);
    }
    return rc;
}
