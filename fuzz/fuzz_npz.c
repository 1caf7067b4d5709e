/* libFuzzer harness: .npz archives from memory (oq_npz_parse: the plain path, else libzip).
 * Wherever the plain path answers, libzip must answer the same: the same tensors, or the same
 * error message; a difference aborts. Except where libzip sees more than one end-record
 * signature in its window: it may settle on one inside a member's data, the plain path reads
 * the record the archive ends with. */
#include <stdio.h>

#include "fuzz.h"
#include "npz/npz-impl.h"
#include "ortqual/npz.h"

static int same_tensor(const oq_tensor *a, const oq_tensor *b)
{
    if (strcmp(a->name, b->name) != 0 || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return memcmp(a->data, b->data, oq_tensor_nbytes(a)) == 0;
}

static void check_like_libzip(const uint8_t *data, size_t size, oq_status st, const oq_npz *z, const oq_err *err)
{
    oq_err lerr = {0};
    oq_npz *lz = NULL;
    oq_status lst = oq_npz_parse_libzip(data, size, "fuzz.npz", &lz, &lerr);
    int same = st == lst && (st ? strcmp(err->msg, lerr.msg) == 0 : z->count == lz->count);
    for (size_t i = 0; same && !st && i < z->count; i++) same = same_tensor(z->tensors[i], lz->tensors[i]);
    if (!same) {
        fprintf(stderr, "plain path %d '%s', libzip %d '%s'\n", st, err->msg, lst, lerr.msg);
        abort();
    }
    oq_npz_free(lz);
}

/* More than one "PK\5\6" in the last 65577 bytes, libzip 1.7's search window. */
static int several_end_signatures(const uint8_t *data, size_t size)
{
    size_t from = size > 65577 ? size - 65577 : 0;
    const uint8_t *e = memmem(data + from, size - from, "PK\5\6", 4);
    return e && memmem(e + 1, (size_t)(data + size - e - 1), "PK\5\6", 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_npz *z = NULL;
    oq_status st = oq_npz_parse_plain(data, size, "fuzz.npz", &z, &err);
    if ((st || z) && !several_end_signatures(data, size)) check_like_libzip(data, size, st, z, &err);
    oq_npz_free(z);
    z = NULL;
    if (oq_npz_parse(data, size, "fuzz.npz", &z, &err) == OQ_OK) {
        oq_tensor *t = NULL;
        if (z->count && oq_npz_take(z, z->tensors[0]->name, &t, &err) == OQ_OK) oq_tensor_free(t);
        oq_npz_free(z);
    }
    return 0;
}
