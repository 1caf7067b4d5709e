/* The bare ORT loop the validate benchmarks compare with: one saved batch (features, mask)
 * run `calls` times, as a worker runs it, with nothing else around the calls. */
#ifndef ORTQUAL_BENCH_BARE_H
#define ORTQUAL_BENCH_BARE_H

#include "ortqual/npz.h"
#include "ortqual/runtime.h"

static inline oq_status bench_bare_batch(oq_session *s, const char *path, int calls, oq_err *e)
{
    oq_npz *z;
    oq_tensor *in[2] = {NULL, NULL}, **out = NULL;
    size_t n_out = 0;
    oq_status st = oq_npz_read(path, &z, e);
    if (st) return st;
    if (!(st = oq_npz_take(z, "features", &in[0], e)) && !(st = oq_npz_take(z, "mask", &in[1], e)))
        for (int r = 0; r < calls && !st; r++, oq_tensors_free(out, n_out), out = NULL, n_out = 0)
            st = oq_session_run(s, 2, in, &n_out, &out, e);
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    oq_npz_free(z);
    return st;
}

#endif
