/* How a plan is split: names and the "I/N" text (ortqual/shard.h). */
#include "ortqual/shard.h"
#include "status/args-impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *oq_shard_by_name(oq_shard_by by)
{
    return by == OQ_SHARD_BY_BATCH ? "batch" : by == OQ_SHARD_BY_CONFIG ? "config" : "unknown";
}

int oq_shard_by_parse(const char *s)
{
    if (!s) return -1;
    return !strcmp(s, "batch") ? OQ_SHARD_BY_BATCH : !strcmp(s, "config") ? OQ_SHARD_BY_CONFIG : -1;
}

oq_status oq_shard_parse(const char *text, oq_shard_spec *spec, oq_err *err)
{
    OQ_NEED(err, text);
    OQ_NEED(err, spec);
    char *end;
    errno = 0;
    long i = isdigit((unsigned char)text[0]) ? strtol(text, &end, 10) : -1;
    long n = i >= 0 && *end == '/' && isdigit((unsigned char)end[1]) ? strtol(end + 1, &end, 10) : -1;
    if (errno || n < 1 || *end || n > 100000 || i >= n)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "shard '%s': want I/N with 0 <= I < N (e.g. 0/4)", text);
    spec->index = (int32_t)i;
    spec->count = (int32_t)n;
    return OQ_OK;
}

void oq_shard_range(int32_t count, int32_t index, size_t items, size_t *lo, size_t *hi)
{
    if (!lo || !hi) return;
    if (count <= 0) { /* not sharded: every item */
        *lo = 0;
        *hi = items;
        return;
    }
    OQ_ASSERT(index >= 0 && index < count);
    *lo = items * (size_t)index / (size_t)count;
    *hi = items * (size_t)(index + 1) / (size_t)count;
}

void oq_shard_lock_name(int32_t index, char *buf, size_t n)
{
    if (buf && n) snprintf(buf, n, ".ortqual.shard-%d.lock", (int)index);
}
