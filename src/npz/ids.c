/* A batch's inputs and the outputs saved for it, in two files paired by order: where both carry
 * `event_indices`, they must name the same events, or the outputs are of another selection. */
#include <inttypes.h>
#include <stdio.h>

#include "npz/npz-impl.h"
#include "tensor/tensor-impl.h"

/* Equal as numbers, exactly: 64-bit ids (run << 32 | event) differ past 2^53, where doubles
 * would call them equal. A float side compares as a double (NaN equals nothing). */
static int same_id(const oq_tensor *a, const oq_tensor *b, int64_t i)
{
    int64_t sa = 0, sb = 0;
    uint64_t ua = 0, ub = 0;
    int ka = oq_tensor_int_at(a, i, &sa, &ua), kb = oq_tensor_int_at(b, i, &sb, &ub);
    if (!ka || !kb) return oq_tensor_get_f64(a, i) == oq_tensor_get_f64(b, i);
    if (ka == 2 && kb == 2) return ua == ub;
    if (ka == 1 && kb == 1) return sa == sb;
    return ka == 1 ? sa >= 0 && (uint64_t)sa == ub : sb >= 0 && (uint64_t)sb == ua;
}

/* Element i as the file holds it: every digit of an integer. */
static const char *id_text(const oq_tensor *t, int64_t i, char *buf, size_t n)
{
    int64_t s = 0;
    uint64_t u = 0;
    int k = oq_tensor_int_at(t, i, &s, &u);
    if (k == 1) snprintf(buf, n, "%" PRId64, s);
    else if (k == 2) snprintf(buf, n, "%" PRIu64, u);
    else snprintf(buf, n, "%.17g", oq_tensor_get_f64(t, i));
    return buf;
}

oq_status oq_npz_same_events(const oq_npz *inputs, const char *inputs_path, const oq_npz *saved,
                             const char *saved_path, oq_err *err)
{
    const oq_tensor *a = oq_npz_get(inputs, "event_indices"), *b = oq_npz_get(saved, "event_indices");
    if (!a || !b) return OQ_OK;
    int64_t na = oq_tensor_numel(a), nb = oq_tensor_numel(b);
    if (na != nb)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %" PRId64 " event_indices, where %s has %" PRId64 ": the "
                          "saved outputs are of other events than their inputs (files are paired in order)",
                          saved_path, nb, inputs_path, na);
    for (int64_t i = 0; i < na; i++) {
        if (same_id(a, b, i)) continue;
        char ta[32], tb[32];
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: event_indices[%" PRId64 "] is %s where %s has event %s: the "
                          "saved outputs are of other events than their inputs (files are paired in order)",
                          saved_path, i, id_text(b, i, tb, sizeof tb), inputs_path, id_text(a, i, ta, sizeof ta));
    }
    return OQ_OK;
}
