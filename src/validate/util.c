#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/fileio.h"
#include "validate/validate-impl.h"

void oq_config_file_tag(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", name);
    for (char *p = buf; *p; p++)
        if (*p == ':' || *p == '/') *p = '_';
}

const char *oq_json_str(const json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : dflt;
}

oq_status oq_json_write(const char *path, const json_t *j, oq_err *err)
{
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    if (!text) return oq_err_set(err, OQ_ERR_NOMEM, "%s: cannot serialize JSON", path);
    size_t n = strlen(text);
    text[n] = '\n'; /* json_dumps leaves room for the terminator; reuse it for a newline */
    oq_status st = oq_write_file_atomic(path, text, n + 1, 1, err);
    free(text);
    return st;
}
