/* JSON documents written as files: one writer for summaries, plans and verdicts. */
#include <stdlib.h>
#include <string.h>

#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"

oq_status oq_json_write_file(const char *path, const json_t *j, size_t flags, oq_err *err)
{
    char *text = j ? json_dumps(j, flags) : NULL;
    if (!text) return oq_err_set(err, OQ_ERR_NOMEM, "%s: cannot serialize JSON", path);
    size_t n = strlen(text);
    text[n] = '\n'; /* json_dumps leaves room for the terminator; reuse it for a newline */
    oq_status st = oq_write_file_atomic(path, text, n + 1, 1, err);
    free(text);
    return st;
}
