#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    return oq_json_write_file(path, j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10), err);
}

void oq_iso_time(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void oq_remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }
