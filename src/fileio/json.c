/* JSON documents written as files (one writer for summaries, plans and verdicts) and read
 * from text. */
#include <stdlib.h>
#include <string.h>

#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"

static oq_status json_write(const char *path, const json_t *j, size_t flags, int no_sync, oq_err *err)
{
    char *text = j ? json_dumps(j, flags) : NULL;
    if (!text) return oq_err_set(err, OQ_ERR_NOMEM, "%s: cannot serialize JSON", path);
    size_t n = strlen(text);
    text[n] = '\n'; /* json_dumps leaves room for the terminator; reuse it for a newline */
    oq_status st = no_sync ? oq_write_file_nosync(path, text, n + 1, err) : oq_write_file_atomic(path, text, n + 1, 1, err);
    free(text);
    return st;
}

oq_status oq_json_write_file(const char *path, const json_t *j, size_t flags, oq_err *err)
{
    return json_write(path, j, flags, 0, err);
}

oq_status oq_json_write_file_nosync(const char *path, const json_t *j, size_t flags, oq_err *err)
{
    return json_write(path, j, flags, 1, err);
}

json_t *oq_json_parse(const char *text, size_t n, const char *name, oq_err *err)
{
    json_error_t je;
    json_t *doc = json_loadb(text, n, 0, &je);
    if (!doc) oq_err_set(err, OQ_ERR_FORMAT, "%s:%d: not valid JSON: %s", name, je.line, je.text);
    return doc;
}
