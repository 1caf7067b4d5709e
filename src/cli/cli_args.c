/* Option values shared by the subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int oq_cli_parse_int(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        if (hi == INT64_MAX)
            fprintf(stderr, "ortqual %s: %s '%s': want a whole number >= %lld\n", cmd, opt, s, (long long)lo);
        else
            fprintf(stderr, "ortqual %s: %s '%s': want a whole number in %lld..%lld\n", cmd, opt, s,
                    (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}
