/* JSON documents written as files (one writer for summaries, plans and verdicts) and read
 * from text; outside text (paths, messages) made UTF-8 for them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/core-impl.h"
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

char *oq_text_utf8(const char *s)
{
    return s ? oq_utf8_lossy(s) : NULL;
}

json_t *oq_json_text(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (j || !s) return j;
    char *b = oq_utf8_lossy(s);
    j = b ? json_string(b) : NULL;
    free(b);
    return j;
}

/* ---- JSON lines: one compact document per line (records streamed between processes) ---- */

int oq_jsonl_put(FILE *f, json_t *j, size_t flags)
{
    int ok = j && json_dumpf(j, f, flags & ~(size_t)JSON_INDENT(0x1f)) == 0 && fputc('\n', f) != EOF;
    json_decref(j);
    return ok;
}

oq_status oq_jsonl_each(const char *path, oq_jsonl_fn fn, void *ctx, oq_err *err)
{
    FILE *in = fopen(path, "r");
    if (!in) return oq_err_set(err, OQ_ERR_IO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, n = 0;
    oq_status st = OQ_OK;
    for (ssize_t len; !st && (len = getline(&line, &cap, in)) > 0;) {
        json_error_t je;
        json_t *j = json_loadb(line, (size_t)len, 0, &je);
        st = j ? fn(ctx, j, n, err) : oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: not valid JSON: %s", path, n + 1, je.text);
        n++;
        json_decref(j);
    }
    if (!st && ferror(in)) st = oq_err_set(err, OQ_ERR_IO, "%s: read error", path);
    free(line);
    fclose(in);
    return st;
}
