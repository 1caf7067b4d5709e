/* Buffers for bulk data on transparent huge pages. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/core-impl.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *oq_alloc_huge(size_t bytes)
{
    if (bytes < HUGE_PAGE) return malloc(bytes ? bytes : 1);
    void *p;
    if (posix_memalign(&p, HUGE_PAGE, bytes)) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without THP the pages stay small */
#endif
    return p;
}

void *oq_calloc_huge(size_t bytes)
{
    if (bytes < HUGE_PAGE) return calloc(1, bytes ? bytes : 1);
    void *p = oq_alloc_huge(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}
