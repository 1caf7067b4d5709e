/* Internal pieces of the float64 references (not installed): thread counts,
 * row conversion between tensors and float64, the broadcast attention mask,
 * and the float64 kernels shared by the Attention operator and the encoder.
 *
 * Determinism: every kernel computes each output element with one fixed
 * sequence of operations (a sum in index order, from a fixed start), and the
 * callers cut the work into tiles whose boundaries depend only on the shapes.
 * A thread computes whole tiles, so the thread count decides who computes a
 * value, never how: results are bit-identical for any number of threads. */
#ifndef ORTQUAL_REFERENCE_IMPL_H
#define ORTQUAL_REFERENCE_IMPL_H

#include <sched.h>
#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

/* For the kernels with target_clones: GCC gives their resolvers default visibility
 * whatever -fvisibility says, unless the declaration says hidden. */
#define OQ_REF_HIDDEN __attribute__((visibility("hidden")))

/* Threads for one reference call: `requested` (0 = every core this process may
 * run on), at most `tasks`, and 1 inside an OpenMP parallel region (the
 * caller's own threads already fill the cores). Never less than 1. */
int oq_ref_threads(int requested, int64_t tasks);
/* OQ_ERR_INVALID_ARG for a negative thread count, naming `what`. */
oq_status oq_ref_threads_check(int threads, const char *what, oq_err *err);

/* The threads of one call: the caller and threads-1 workers, created for the
 * call and joined by oq_ref_team_free (no pool outlives a call). Work comes in
 * phases: oq_ref_team_run calls fn(ctx, task, thread) once for every task in
 * 0..tasks-1, on any of the team's threads (thread: 0 the caller, 1..n-1 the
 * workers, for per-thread scratch), and returns when all are done. Waiting
 * threads sleep instead of spinning, so a machine busy with other work slows
 * the tasks, not the hand-over between phases. */
typedef struct oq_ref_team oq_ref_team;
typedef void (*oq_ref_task_fn)(void *ctx, int64_t task, int thread);
/* OQ_ERR_NOMEM; a worker that cannot be started leaves a smaller team. */
oq_status oq_ref_team_create(int threads, oq_ref_team **out, oq_err *err);
int oq_ref_team_size(const oq_ref_team *t);
void oq_ref_team_run(oq_ref_team *t, int64_t tasks, oq_ref_task_fn fn, void *ctx);
void oq_ref_team_free(oq_ref_team *t);
/* The CPU the team's worker i (1 ..) starts on, before it may run on any of
 * `allowed`: the allowed CPUs after the creator's (`me`) in turn, the creator's
 * last; -1 when `me` is unknown (< 0) or not allowed, or only one CPU is. */
int oq_ref_start_cpu(const cpu_set_t *allowed, int me, int i);

/* A buffer for `n` doubles (at least one), freed with free(). Buffers of a
 * MiB or more are 2 MiB aligned and asked to sit on transparent huge pages
 * (madvise), so that a first touch faults once per 2 MiB instead of once per
 * 4 KiB: on virtual machines the faults of fresh memory otherwise cost as much
 * as the arithmetic. NULL when out of memory. */
double *oq_ref_alloc(int64_t n);

/* n elements of a float tensor from element offset `off`, as float64. */
void oq_ref_load_row(const oq_tensor *t, int64_t off, int64_t n, double *dst);
/* n float64 values rounded once (to nearest even) into t's dtype at element offset `off`. */
void oq_ref_store_row(oq_tensor *t, int64_t off, int64_t n, const double *src);

/* attn_mask broadcast to [B, Hq, Lq, T]; t == NULL when there is none. */
typedef struct oq_ref_mask {
    const oq_tensor *t;
    int64_t stride[3]; /* element strides for b, h, i (0 where broadcast) */
    int64_t len;       /* mask length along the key axis (<= T; keys past it are -inf) */
} oq_ref_mask;

/* Check `mask` (may be NULL) against target [B, Hq, Lq, T] and fill m. */
oq_status oq_ref_mask_init(oq_ref_mask *m, const oq_tensor *mask, const int64_t target[4],
                           oq_err *err);
/* Add the mask row (b, h, i) for keys j0 .. j1-1 to s[0 .. j1-j0): float values
 * added, bool false and keys beyond the mask's length set to -inf. */
void oq_ref_mask_add(const oq_ref_mask *m, int64_t b, int64_t h, int64_t i, int64_t j0,
                     int64_t j1, double *s);

/* ---- attention kernels --------------------------------------------------
 * Query rows are processed OQ_REF_ROWS at a time: each K and V load feeds
 * that many rows. Keys are packed in panels of OQ_REF_KEYS ([D][16] each,
 * zero-padded past T), values in strips of OQ_REF_COLS columns ([T][16] each,
 * zero-padded past Dv), so that every kernel reads memory in order. Keys are
 * visited in chunks of OQ_REF_CHUNK (from key 0, whatever the rows), whose
 * scores stay in the L1 cache: the softmax is computed online, rescaling the
 * running sums when a chunk raises a row's maximum (the lanes kernel shifts a
 * row by a bound of its scores instead where the keys' bound allows one). */
#define OQ_REF_ROWS 8
#define OQ_REF_KEYS 16
#define OQ_REF_COLS 16
#define OQ_REF_CHUNK 256

/* x rounded up to a multiple of m. */
static inline int64_t oq_ref_round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

/* Pack key rows: kp[(j/16)*D*16 + d*16 + j%16] = k[j*ldk + d] for j < T, 0 for
 * T <= j < round_up(T, 16). kp holds round_up(T, 16) * D doubles. */
void oq_ref_pack_keys(const double *k, int64_t ldk, int64_t T, int64_t D, double *kp);
/* kmax[d] = max_j |k[j][d]| over T packed keys (kp as above), every kmax[d] +inf
 * if any key holds a NaN or an infinity: with it, Σ_d |q_d| kmax[d] bounds every
 * score of a query q, which lets a block skip the running maximum (oq_ref_block). */
OQ_REF_HIDDEN void oq_ref_keys_bound(const double *kp, int64_t T, int64_t D, double *kmax);
/* Pack value rows: vp[c*S*16 + j*16 + d%16] with c = d/16, for j < T and d < Dv
 * (0 up to the strip's end): strips of 16 columns, S >= T rows apart. For all rows
 * (S = T), vp holds T * round_up(Dv, 16) doubles; rows j0.. of such strips are
 * packed at vp + j0*16 with S the full row count. */
void oq_ref_pack_values(const double *v, int64_t ldv, int64_t T, int64_t Dv, int64_t S, double *vp);

/* Scores of `rows` (1..OQ_REF_ROWS) query rows q[r*ldq ..] against packed
 * keys kp (D columns): s[r*lds + j] = sum_{d < D} q[r*ldq + d] * k[j][d] for
 * j < round_up(ns, 16) (keys past T give 0). */
OQ_REF_HIDDEN void oq_ref_scores(const double *q, int64_t ldq, int rows, const double *kp,
                                 int64_t D, int64_t ns, double *s, int64_t lds);
/* Softmax numerator over s[0..end) in place: s[j] = exp(s[j] - max). Returns
 * the sum of the weights (in a fixed order): 0 when every key is masked
 * (s zeroed), NaN when a score is NaN. exp is within 0.8 ulp (0.65 with FMAs). */
OQ_REF_HIDDEN double oq_ref_softmax_exp(double *s, int64_t end);

/* log2(e): the attention kernel's logits are in base 2 (softmax(x) = 2^(x log2 e)
 * normalized), which spares its exp a multiplication per score. */
#define OQ_REF_LOG2E 0x1.71547652b82fep+0

/* A block of query rows of one head, for oq_ref_attend. Its logits are base 2:
 * q k (q scaled by the softmax scale times OQ_REF_LOG2E), or, with a bias, what
 * the bias makes of q k (q scaled by the softmax scale alone). */
typedef struct oq_ref_block {
    const double *q;     /* rows of D values, already scaled (see above), row stride ldq */
    int64_t ldq;
    int rows;            /* 1..OQ_REF_ROWS */
    const double *kp;    /* packed keys (oq_ref_pack_keys), D columns */
    const double *kmax;  /* their oq_ref_keys_bound, or NULL */
    const double *vp;    /* packed values (oq_ref_pack_values), T rows, Dv columns */
    int64_t D, T, Dv;
    int64_t end[OQ_REF_ROWS]; /* row r attends keys j < end[r] (<= T) only */
    /* Masks and softcap, or NULL: called on the scores q k of row r for keys
     * j0 .. j1-1 (s[0] is key j0) before the softmax; leaves base-2 logits. */
    void (*bias)(const void *ctx, int r, int64_t j0, int64_t j1, double *s);
    const void *ctx;
} oq_ref_block;

/* Doubles of scratch that oq_ref_attend needs (one chunk of scores per row). */
#define OQ_REF_ATTEND_SCRATCH (OQ_REF_ROWS * (OQ_REF_CHUNK + 8))
/* out[r*round_up(Dv, 16) + d] = sum_j softmax(s_r)[j] * v[j][d] for d < Dv:
 * a row with every key masked gives zeros, a NaN score NaN. out has rows *
 * round_up(Dv, 16) doubles (the columns past Dv are scratch). */
OQ_REF_HIDDEN void oq_ref_attend(const oq_ref_block *b, double *scratch, double *out);

/* ---- matrix products -----------------------------------------------------
 * y = x @ w + bias with w [K, M] packed once into panels of OQ_REF_PANEL
 * columns ([K][32] each, zero-padded past M). A tile is up to OQ_REF_TILE_ROWS
 * rows by one panel; each element is bias[j] + x[i,0]*w[0,j] + x[i,1]*w[1,j] + ...
 * accumulated in that order. */
#define OQ_REF_PANEL 32
#define OQ_REF_TILE_ROWS 48

typedef struct oq_ref_packed {
    double *w;       /* panels * K * 32 */
    double *bias;    /* panels * 32 */
    int64_t k, m, panels;
} oq_ref_packed;

/* Pack the column-wise concatenation of n weights w[i] [K, M_i] (any float
 * dtype, same K) and their biases b[i] [M_i] into one [K, sum M_i] product.
 * OQ_ERR_NOMEM; free with oq_ref_packed_free. */
oq_status oq_ref_pack_weights(oq_ref_packed *p, const oq_tensor *const *w,
                              const oq_tensor *const *b, int n, oq_err *err);
void oq_ref_packed_free(oq_ref_packed *p);

typedef enum oq_ref_epilogue {
    OQ_REF_STORE, /* y = x @ w + b */
    OQ_REF_ADD,   /* y = y + (x @ w + b): a residual connection */
    OQ_REF_ELU    /* y = elu(x @ w + b), elu(v) = v > 0 ? v : expm1(v) */
} oq_ref_epilogue;

/* Tiles of an [n, M] product: ceil(n / OQ_REF_TILE_ROWS) * panels. */
int64_t oq_ref_gemm_tiles(const oq_ref_packed *w, int64_t n);
/* Compute tile `tile` of y[n, M] (row stride ldy) from x[n, K] (row stride ldx). */
void oq_ref_gemm_tile(const oq_ref_packed *w, int64_t tile, const double *x, int64_t ldx,
                      int64_t n, double *y, int64_t ldy, oq_ref_epilogue ep);

#endif
