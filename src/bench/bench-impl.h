/* Internals shared by the files of src/bench (never installed). */
#ifndef ORTQUAL_BENCH_IMPL_H
#define ORTQUAL_BENCH_IMPL_H

#include "ortqual/bench.h"

/* The inputs of one (batch, length, mode) group, shared by its variants. */
typedef struct oq_bench_group {
    int64_t batch, seq_len;
    int masked;
    int64_t *lengths;      /* batch entries; all seq_len when unmasked */
    int64_t valid_tokens;  /* sum of lengths */
    int64_t valid;         /* sum of squared lengths: attended (query, key) pairs */
    size_t n_in;           /* 4 masked (query, key, value, mask), 3 unmasked */
    oq_tensor *in[4];      /* float32 [B,H,L,D], [B,G,L,D] x2, mask [B,L] */
    oq_tensor *ref64[4];   /* the reference's inputs: q, k, v as float64, nonpad_kv_seqlen */
    oq_tensor *ref_out;    /* float64 reference output, NULL when not computed */
    double ref_ms;         /* wall time of the call that computed ref_out */
} oq_bench_group;

/* The float64 reference output for the group's inputs (ONNX Attention with
 * nonpad_kv_seqlen = lengths when masked) on `threads` threads (0: every core).
 * New tensor in *out. */
oq_status oq_bench_reference(oq_bench_group *g, int threads, oq_tensor **out, oq_err *err);
/* Free the reference's cached inputs. */
void oq_bench_reference_clear(oq_bench_group *g);

/* Sort an error into a row status (see oq_bench_status). */
oq_bench_status oq_bench_classify(oq_status st, const char *msg);

#endif
