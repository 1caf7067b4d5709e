/* Comma lists of option values (--seq-lens 128,512, --variants a,b, --format png,svg). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int oq_cli_each_item(const char *cmd, const char *opt, const char *s, oq_cli_item_fn fn, void *ctx)
{
    char *copy = strdup(s), *rest = copy;
    if (!copy) {
        oq_cli_error_in(cmd, "out of memory");
        return -1;
    }
    int rc = 0;
    size_t n = 0;
    for (char *item; !rc && (item = strsep(&rest, ","));) {
        n++;
        if (!*item) { /* strtok skipped it: "4,,8" ran as "4,8" */
            oq_cli_error_in(cmd, "%s '%s': item %zu is empty", opt, oq_cli_shown(s), n);
            rc = -1;
        } else if (item[strcspn(item, " \t\n\v\f\r")]) { /* "a, b": ' b' was an EP named " cpu" */
            oq_cli_error_in(cmd, "%s '%s': item %zu '%s' holds whitespace (a list is NAME,NAME)", opt, oq_cli_shown(s),
                            n, oq_cli_shown(item));
            rc = -1;
        } else {
            rc = fn(ctx, item, n);
        }
    }
    free(copy);
    return rc;
}
