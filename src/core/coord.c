/* An element's coordinates as text (core-impl.h). */
#include <stdint.h>
#include <stdio.h>

#include "core/core-impl.h"

char *oq_coord_str(const int64_t *shape, int64_t rank, int64_t e, char *buf, size_t n)
{
    int64_t div = 1;
    for (int64_t d = 0; d < rank; d++) div *= shape[d] ? shape[d] : 1;
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t d = 0, rest = e; d < rank && k < n; d++) {
        div /= shape[d] ? shape[d] : 1;
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)(div ? rest / div : 0));
        rest = div ? rest % div : 0;
    }
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}
